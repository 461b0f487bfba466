#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Writes the seed corpus of the fuzz targets (host/fuzz/seeds/<target>/).

Each seed is a small program in the byte encoding the harness reads (src/*.rs: one op byte,
then the op's parameters, big-endian). The seeds only give libFuzzer a head start into the
deep states (full rings, MPWQE sessions, error CQEs, compressed sessions, recovery);
correctness does not depend on them. Run from anywhere: python3 host/fuzz/gen_seeds.py
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def u16(v):
    return struct.pack(">H", v & 0xFFFF)


def u32(v):
    return struct.pack(">I", v & 0xFFFFFFFF)


def write(target, name, data):
    d = os.path.join(HERE, "seeds", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(bytes(data))


def frag_list(frags, enc=u16):
    """A fragment count byte, then each fragment length as `enc` encodes it."""
    b = [len(frags)]
    for f in frags:
        b += list(enc(f))
    return b


def mana_cqe_head(op, k, owner, typ_sel, typ_byte, wq, other_kind, bit7):
    """The part every structured MANA CQE op shares (src/env.rs mana_owner and the harnesses'
    structured_cqe): sel (k slots after the consumer, owner bits 2-3, type selector bits 4-6,
    bit 7 for the op's extras), sel2 (the queue, and 0x18 for a CQE of the other kind),
    then the bytes read in that order: the owner bits, the type, the queue id.
    owner: None valid, 'stale', or a value; wq: None this queue, 'other' (its id ^ 1), or an
    id."""
    sel = k | (typ_sel << 4) | (0x80 if bit7 else 0)
    extra = []
    if owner == "stale":
        sel |= 2 << 2
    elif owner is not None:
        sel |= 3 << 2
        extra.append(owner)
    if typ_byte is not None:
        extra.append(typ_byte)
    sel2 = 0 if wq is None else 5 if wq == "other" else 6
    if other_kind:
        sel2 |= 0x18
    b = [op, sel, sel2] + extra
    if wq not in (None, "other"):
        b += list(u32(wq))
    return b


# ---- tx_completion ---------------------------------------------------------------------
# op % 16: 0..4 xmit, 5..7 structured CQE, 8 raw CQE, 9 poke, 10..12 poll, 13 recover,
# 14 arm, 15 mpwqe switches.

def tx_linear(length, more=False, vlan=None, csum=0):
    kind = 0 | (4 if more else 0) | (8 if vlan is not None else 0) | (csum << 4)
    b = [0, kind] + list(u16(length))
    if vlan is not None:
        b += list(u16(vlan))
    return b + [0]  # no map failure


def tx_frags(frags, more=False, fail=None):
    kind = 1 | (4 if more else 0)
    b = [1, kind] + list(u16(100)) + frag_list(frags)
    return b + [0x80 | fail if fail is not None else 0]


def tx_gso(frags, mss, segs, more=False):
    kind = 2 | (4 if more else 0) | (2 << 4)
    b = [2, kind] + list(u16(1000)) + frag_list(frags)
    return b + list(u16(mss)) + list(u16(segs)) + [0]


def tx_cqe(k=0, err=False, last=True, delta=None, synd=(0x02, 0x05)):
    sel = k | ((4 << 3) if err else 0)
    wsel = 0 if delta is None else 2 | (delta << 2)
    b = [5, sel, wsel, 0xFF if last else 0, 0]
    if err:
        b += list(synd)
    return b


POLL = [10]
RECOVER = [13]


def tx_seeds():
    # Regular WQEs, completion of the last one.
    p = [0, 0]
    for i in range(8):
        p += tx_linear(60 + i * 100, more=i < 7)
    p += tx_cqe() + POLL
    write("tx_completion", "regular", p)

    # MPWQE sessions (with inlining), partial completion, full completion.
    p = [2 | 4, 0]
    for i in range(40):
        p += tx_linear(64 + (i % 5) * 30, more=i % 10 != 9, csum=2 if i % 7 == 0 else 0)
    p += tx_cqe(last=False) + POLL + tx_cqe() + POLL
    write("tx_completion", "mpwqe", p)

    # Non-linear and GSO packets, an error CQE, recovery, more traffic.
    p = [1 | (1 << 3), 1]
    p += tx_frags([1000, 2000, 0, 3000], more=True)
    p += tx_gso([1400] * 6, 1400, 7, more=True)
    p += tx_frags([500] * 3, fail=1)
    p += tx_linear(200, vlan=0x0123)
    p += tx_cqe(err=True) + POLL + RECOVER
    for i in range(4):
        p += tx_linear(100, more=i < 3)
    p += tx_cqe() + POLL
    write("tx_completion", "frags-gso-error", p)

    # A full ring of MPWQE and regular packets, then hostile CQEs.
    p = [2 | 1, 2]
    for i in range(120):
        p += tx_linear(80, more=True) if i % 3 else tx_frags([300, 300], more=True)
    p += tx_linear(80)
    p += tx_cqe(delta=5) + POLL
    p += [8, 3] + [0x5A] * 64 + POLL
    p += [9, 0, 63, 0x00] + POLL
    p += tx_cqe(k=1) + POLL + [14, 0] + [15, 3] + RECOVER
    write("tx_completion", "full-ring-hostile", p)


# ---- rx_completion ---------------------------------------------------------------------
# op % 16: 0,1 post, 2..6 structured CQE, 7 raw CQE, 8 poke, 9..11 poll, 12,13 napi,
# 14 recover, 15 event + set_ci.

def rx_cqe(k=0, opcode_sel=0, wsel=0, length=100):
    sel = k | (opcode_sel << 3)
    # wsel, len_sel (0: 1 + u16 % buf_size), len, csum, hash, hds_ip_ext, l4_l3, format
    return ([2, sel, wsel, 0] + list(u16(length - 1)) + list(u16(0xBEEF)) + list(u32(0x12345678))
            + [0x07, 0x28, 0])


def rx_compressed(count, lens):
    sel = 0x80
    b = [2, sel, 0, 0] + list(u16(0)) + list(u16(0)) + list(u32(0)) + [0x07, 0x28]
    b += [count - 1]  # count = 1 + u8 % outstanding
    for j in range((count + 7) // 8):
        for m in range(8):
            i = j * 8 + m
            length = lens[i % len(lens)]
            b += [0] + list(u16(length - 1)) + list(u16(0x1000 + i))
    return b


def rx_seeds():
    # 64 WQEs of 2048 B, bulk 8: post, plain CQEs, polls, NAPI rounds.
    hdr = [5] + list(u16(2047)) + [7]
    p = hdr + [0, 0]
    for i in range(6):
        p += rx_cqe(k=i % 4 if i < 4 else 0, length=60 + i)
    p += [9, 3, 12, 64, 0]
    p += rx_cqe(length=1500) + rx_cqe(opcode_sel=5, length=10) + [9, 8]
    write("rx_completion", "plain", p)

    # Compressed sessions spanning polls and array slots.
    p = hdr + [0, 0] + rx_compressed(20, [60, 1514, 128]) + [9, 5, 9, 64, 12, 64, 0]
    p += rx_compressed(9, [64]) + [12, 3, 0, 12, 64, 0]
    write("rx_completion", "compressed", p)

    # Hostile: wrong counters, oversize lengths, raw CQEs, recovery, allocation failures.
    p = [2] + list(u16(511)) + [1] + [0, 0x60]
    p += rx_cqe(wsel=2 | (5 << 2)) + [9, 4, 14, 0, 0]
    p += [2, 0, 0, 5] + [0] * 12 + [9, 4]
    p += [7, 0] + [0xA5] * 64 + [9, 4, 8, 1, 63, 0x2C, 12, 10, 0x40, 14]
    write("rx_completion", "hostile", p)


# ---- device_wqe ------------------------------------------------------------------------
# op % 20: 0..4 structured WQE, 5 raw WQEBB, 6..8 ring, 9,10 process, 11 arm, 12 set_ci,
# 13 RX post, 14 raw register, 15 packet bytes, 16 unmap, 17 control (reset, link or
# loopback, RSS), 18 skip, 19 resync.

OP_NOP, OP_SEND, OP_LSO, OP_MPSW = 0, 1, 3, 4  # the harness's opcode selectors


def wqe(q, opsel, segs, inline_sel=0, cq_update=True, cs=0):
    sel = q | (opsel << 1)
    flags = 0x80 if cq_update else 0
    b = [0, sel, flags]
    if opsel == OP_NOP:
        return b
    b += [cs]
    if opsel == OP_LSO:
        b += list(u16(1399))
    b += [inline_sel]
    b += [len(segs)]
    for s in segs:
        if s[0] == "inline":
            b += [0, s[1]]
        else:  # ("data", len_sel bytes..., addr_sel, off)
            _, len_bytes, addr_sel, off = s
            b += [1] + len_bytes + [addr_sel] + list(u16(off))
    return b


def ring(q):
    return [6, q] + list(u32(0)) + [0]


def process(budget=0):
    return [9, budget]


def dev_seeds():
    setup = [0x80 | 4, 0x16, 4] + list(u16(100)) + list(u16(1500)) + list(u16(60)) + list(u16(4000))
    whole = lambda k: [3 | (k << 4)]  # segment length = packet buffer k's size

    p = list(setup) + [13, 0]
    for k in range(4):
        p += wqe(0, OP_SEND, [("data", whole(k), k, 0)])
    p += wqe(1, OP_NOP, [])
    p += ring(0) + ring(1) + process() + [12, 0, 12, 1, 11, 0, 11, 1]
    write("device_wqe", "send", p)

    p = list(setup) + [13, 0]
    p += wqe(0, OP_MPSW, [("data", whole(0), 0, 0), ("inline", 60), ("data", whole(2), 2, 0)])
    p += wqe(0, OP_LSO, [("data", [0] + list(u16(2900)), 3, 54)], inline_sel=0)
    p += ring(0) + process(3) + process()
    write("device_wqe", "mpwqe-lso", p)

    p = list(setup) + [13, 0]
    p += wqe(0, OP_SEND, [("data", whole(0), 6, 0)])  # guard page
    p += ring(0) + process() + [17, 0] + wqe(0, OP_SEND, [("data", whole(1), 9, 0)])
    p += ring(0) + process() + [17, 0, 16, 1]
    p += wqe(0, OP_SEND, [("data", whole(1), 1, 0)]) + ring(0) + process()
    p += [5, 0, 0] + [0x11] * 64 + [6, 0x08, 3] + list(u32(0)) + [0] + process()
    write("device_wqe", "faults", p)

    # Loopback on port 0: its frames turn around to its own receive side (no RSS table
    # there: dropped and counted) whatever the links; off again, they reach port 1.
    p = list(setup) + [13, 0, 17, 0x1A]  # loopback on for port 0
    for k in range(3):
        p += wqe(0, OP_SEND, [("data", whole(k), k, 0)])
    p += wqe(1, OP_MPSW, [("data", whole(0), 0, 0), ("data", whole(2), 2, 0)])
    p += ring(0) + ring(1) + process(2) + process() + [17, 0x06]  # port 1 link down
    p += wqe(0, OP_SEND, [("data", whole(1), 1, 0)]) + ring(0) + process()
    p += [17, 0x12, 17, 0x0E]  # loopback off, port 1 link up
    p += wqe(0, OP_SEND, [("data", whole(2), 2, 0)]) + ring(0) + process()
    write("device_wqe", "loopback", p)


# ---- mana_tx_completion ----------------------------------------------------------------
# header: cfg (bit 0 queue 4/8 KiB, bits 1-2 CQ size factor 1/2/4, bits 3-4 vport offset:
# 2 → u8 follows, 3 → u16 follows, above 255 means long OOBs).
# op % 16: 0..4 xmit, 5..7 structured CQE, 8 raw CQE, 9 poke, 10,11 poll, 12 NAPI poll,
# 13 recover, 14 CQ doorbell, 15 burst of linear frames.

def mtx_pkt(kind, shape=0, length=100, vlan=None, frags=(), gso=None, raw=b"", fail=None):
    """kind bits: 0-1 shape (0 linear, 1 frags, 2 TSO, 3 raw), 2 xmit_more, 3 VLAN,
    4-5 csum (2 partial); shape bits: 0-1 L3 (0 v4, 1 v6, 2 ARP), 2-3 L4 (0 TCP, 1 UDP,
    2 GRE), 4-7 TCP option words, 7 in-band tag."""
    b = [0, kind, shape] + list(u16(length))
    if kind & 8:
        b += list(u16(vlan))
    k = kind & 3
    if k in (1, 2):
        b += frag_list(frags, lambda f: [2] + list(u16(f - 1)))  # 1 + u16 % 4096
        if k == 2:
            mss, segs = gso
            b += [2] + list(u16(mss - 1)) + list(u16(segs))  # 1 + u16 % 9000
    elif k == 3:
        b += list(raw[: length % 300]) + [0]
    return b + [0x80 | fail if fail is not None else 0]


def mtx_cqe(k=0, typ=None, owner=None, wq=None, not_sq=False, vendor=None):
    """A structured TX CQE k slots after the consumer. typ: None TX_OKAY, ('err', i) error
    33+i, ('any', t), ('rx', i) RX type 1+i. owner, wq: as mana_cqe_head."""
    typ_sel = 0 if typ is None else {"err": 4, "any": 5, "rx": 6}[typ[0]]
    typ_byte = None if typ is None else typ[1]
    b = mana_cqe_head(5, k, owner, typ_sel, typ_byte, wq, not_sq, vendor is not None)
    if vendor is not None:
        b += list(u32(vendor))
    return b


MTX_POLL = [10]
MTX_RECOVER = [13]


def mtx_napi(budget):
    return [12, budget]


def mtx_burst(n, length=60):
    return [15, n - 1, length - 60]


def mana_tx_seeds():
    t = "mana_tx_completion"
    # A burst of 32 with xmit_more (one doorbell), completed one CQE at a time, then a
    # NAPI round that arms the CQ.
    p = [0] + mtx_burst(32)
    for _ in range(32):
        p += mtx_cqe() + MTX_POLL
    p += mtx_napi(64)
    write(t, "burst", p)

    # Every packet shape on a port whose vport offset needs long OOBs, good and error
    # completions, an unknown type, recovery and more traffic.
    p = [3 << 3] + list(u16(44))
    p += mtx_pkt(0 | 8 | (2 << 4), shape=0x04, length=300, vlan=0x6123)  # UDP csum + VLAN
    p += mtx_pkt(1 | 4, shape=0x21, length=80, frags=[1000, 2000, 3000])  # v6 TCP opts
    p += mtx_pkt(2 | 4 | (2 << 4), shape=0x80, length=120, frags=[1448] * 6, gso=(1448, 7))
    p += mtx_pkt(2, shape=0x00, length=54, gso=(1000, 1))  # TSO without payload
    p += mtx_pkt(0 | (2 << 4), shape=0x08, length=100)  # csum of GRE: rejected
    p += mtx_pkt(3, length=40, raw=bytes(range(40)))
    p += mtx_pkt(1, length=60, frags=[500, 500, 500], fail=2)  # map failure
    p += mtx_cqe() + mtx_cqe(k=1, typ=("err", 4)) + mtx_cqe(k=2, typ=("any", 60)) + MTX_POLL
    p += mtx_cqe(typ=("err", 0), vendor=0x1234) + mtx_napi(1) + mtx_napi(64)
    p += MTX_RECOVER + mtx_burst(8) + mtx_cqe() + MTX_POLL
    write(t, "shapes", p)

    # Hostile completions: another queue, an RQ's, an overflow, one with nothing
    # outstanding, raw bytes, a poke; each followed by recovery.
    p = [1 | (1 << 1)] + mtx_burst(4)
    p += mtx_cqe(wq="other") + MTX_POLL + MTX_POLL + MTX_RECOVER + mtx_burst(4)
    p += mtx_cqe(not_sq=True) + MTX_POLL + MTX_RECOVER + mtx_burst(4)
    p += mtx_cqe(owner=5) + MTX_POLL + MTX_RECOVER + mtx_burst(2)
    p += mtx_cqe() + mtx_cqe(k=1) + mtx_cqe(k=2) + MTX_POLL + MTX_RECOVER
    p += mtx_burst(3) + [8, 0] + [0x5A] * 64 + [9, 0, 63, 0x20] + MTX_POLL
    p += [14, 1] + MTX_RECOVER
    write(t, "hostile", p)

    # Fill a 4 KiB ring with 30-SGE TSO packets until the queue stops, then complete
    # everything: the queue wakes.
    p = [0]
    for i in range(10):
        p += mtx_pkt(2 | 4 | (2 << 4), length=200, frags=[1000] * 28, gso=(1400, 21))
    p += mtx_burst(1)
    for i in range(8):
        p += mtx_cqe()
        p += MTX_POLL
    p += mtx_napi(8) + mtx_burst(16)
    write(t, "full-ring", p)


# ---- mana_rx_completion ----------------------------------------------------------------
# header: cfg (bit 0 queue 4/8 KiB, bit 1 CQ of 2 × the WQEs, bits 2-3 buffer size: 2 → u16
# follows, 3 → u8 follows, else 1518; bit 4 doorbell per packet), then the fill failures
# (u8 >> 4).
# op % 16: 0,1 fill, 2..6 structured CQE, 7 raw CQE, 8 poke, 9..11 poll, 12,13 NAPI poll,
# 14 recover, 15 doorbell mode or CQ doorbell.

def mrx_cqe(k=0, typ=None, owner=None, wq=None, is_sq=False, length=60, flags=None):
    """typ: None RX_OKAY, 'trunc', ('coal', i) COALESCED/FENCE, ('any', t), 'tx'.
    length: an int (1..=buf size), 'buf', 'buf+1', 0 or ('any', v). owner, wq: as
    mana_cqe_head."""
    if typ is None or isinstance(typ, str):
        typ_sel, typ_byte = {None: 0, "trunc": 4, "tx": 7}[typ], None
    else:
        typ_sel, typ_byte = {"coal": 5, "any": 6}[typ[0]], typ[1]
    b = mana_cqe_head(2, k, owner, typ_sel, typ_byte, wq, is_sq, flags is not None)
    if length == "buf":
        b += [4]
    elif length == "buf+1":
        b += [5]
    elif length == 0:
        b += [6]
    elif isinstance(length, tuple):
        b += [7] + list(u16(length[1]))
    else:
        b += [0] + list(u16(length - 1))
    if flags is not None:
        b += list(u32(flags[0])) + list(u32(flags[1]))
    return b


def mrx_poll(budget, fail=0):
    return [9, budget, fail << 6]


def mrx_napi(budget, fail=0):
    if budget >= 70:
        return [12, 0x80] + list(u16(budget)) + [fail << 6]
    return [12, budget, fail << 6]


def mana_rx_seeds():
    t = "mana_rx_completion"
    # Batched doorbells: CQEs of every length, NAPI rounds at budgets 8 and 64.
    p = [0, 0]
    for i in range(40):
        p += mrx_cqe(k=i % 4 if i % 8 < 4 else 0, length=60 + 37 * i,
                     flags=(0x2A1B0000, 0xCAFE) if i % 5 == 0 else None)
        if i % 4 == 3:
            p += mrx_napi(8)
    p += mrx_napi(64) + mrx_napi(64)
    write(t, "batched", p)

    # One doorbell per packet (pre-2023), 8 KiB RQ and a CQ of twice its size; drops:
    # truncated, coalesced, fence, oversize, zero length, allocation failures.
    p = [1 | 2 | 0x10, 0]
    p += mrx_cqe() + mrx_cqe(k=1, typ="trunc") + mrx_cqe(k=2, typ=("coal", 0))
    p += mrx_cqe(k=3, typ=("coal", 1)) + mrx_poll(10)
    p += mrx_cqe(length="buf") + mrx_cqe(k=1, length="buf+1") + mrx_cqe(k=2, length=0)
    p += mrx_cqe(k=3, typ=("any", 9)) + mrx_napi(3, fail=1) + mrx_napi(64)
    p += [15, 1] + mrx_cqe() + mrx_cqe(k=1) + mrx_napi(1) + mrx_napi(500)
    write(t, "per-packet", p)

    # Hostile: a queue that is not ours, an SQ's CQE, an overflow, raw bytes, pokes; the
    # fill fails half way; recovery.
    p = [2 << 2] + list(u16(99)) + [0x80]
    p += [0, 0] + mrx_cqe() + mrx_poll(1) + mrx_cqe(wq="other") + mrx_poll(5) + [14]
    p += mrx_cqe(is_sq=True) + mrx_napi(64) + [14]
    p += mrx_cqe(owner=6) + mrx_poll(4) + [14]
    p += mrx_cqe(typ="tx") + [7, 3] + [0xC3] * 64 + [8, 0, 63, 0x20] + mrx_napi(64) + [14]
    p += [15, 3] + mrx_cqe() + mrx_napi(64) + [15, 0]
    write(t, "hostile", p)

    # The fill at creation fails at its first allocation: the ring is empty and short. A poll
    # whose top-up fails too posts nothing and rings nothing; the next one fills the ring
    # with one doorbell, and traffic goes on. Batched, then one doorbell per packet.
    for name, cfg in (("short-fill", 0), ("short-fill-per-packet", 0x10)):
        p = [cfg, 1 << 4] + mrx_poll(4, fail=1) + mrx_napi(4, fail=1) + mrx_poll(4)
        p += mrx_cqe() + mrx_cqe(k=1) + mrx_napi(8) + mrx_cqe() + mrx_napi(8, fail=1)
        write(t, name, p)

    # The CQ wraps several times (owner bits of later passes), tiny buffers.
    p = [3 << 2, 30, 0]
    for i in range(80):
        p += mrx_cqe(k=0, length=1 + i % 31) + mrx_cqe(k=1, length=31)
        p += mrx_cqe(k=2, length=2) + mrx_cqe(k=3, length=3) + mrx_napi(64)
    write(t, "wrap", p)


# ---- mana_device_wqe -------------------------------------------------------------------
# header: cfg (EQ and CQ sizes), cfg2 (bit 0 SQ1 8 KiB, bit 1 RQ0 8 KiB, bits 2-3 RSS:
# 0 RQ0, 1 RQ0+RQ1, 2 none), then 4 × u16 TX packet lengths (14 + v % 4096).
# op % 20: 0..3 TX WQE, 4 raw 32 bytes, 5..7 SQ doorbell, 8,9 run (budget, 0 = to the
# end), 10 CQ doorbell, 11 EQ doorbell, 12 RX WQE, 13 RQ doorbell, 14 any register,
# 15 packet bytes, 16 unmap, 17 link/RSS/pause/loopback, 18 skip, 19 resync.

def mdev_wqe(q, pkt, long=False, tso=None, flags=0, extra=(), nsge=None, oob=None,
             cq_sel=None, pkt_fmt=None, offl=None, suppress=None, trans=None, vlan=None,
             first=None):
    """A TX WQE on SQ q carrying packet buffer pkt (whole). extra: (len_bytes, addr_bytes)
    pairs; tso: (cdu_sel, value) with cdu_sel 2 → 1 + v % 9000."""
    sel = q | (4 if long else 0) | (8 if tso else 0) | (pkt << 4)
    # Each override sets its flag bit; the harness then reads its byte(s).
    f = flags
    for v, bit in ((oob, 0x40), (first, 0x01), (nsge, 0x20), (cq_sel, 0x08), (pkt_fmt, 0x10),
                   (offl, 0x04), (suppress, 0x80)):
        if v is not None:
            f |= bit
    b = [0, sel, f]
    if oob is not None:
        b += [oob]
    if extra:
        b += [7, len(extra)]
    else:
        b += [0]
    for lb, ab in extra:
        b += lb + ab
    if first is not None:
        b += first
    if nsge is not None:
        b += [nsge]
    if tso:
        b += [tso[0]] + (list(u16(tso[1])) if tso[0] % 4 != 0 else [])
    for v in (cq_sel, pkt_fmt, offl, suppress):
        if v is not None:
            b += [v]
    if trans is None:
        b += [1]
    else:
        b += [0] + list(u16(trans))
    if (oob is None and long) or oob == 6:
        if vlan is None:
            b += [0]
        else:
            b += [1] + list(u16(vlan))
    return b


def mdev_ring(kind_op, q, sel=0, page=None, ident=None, tail=None, wqe_cnt=None):
    """kind_op: 5 SQ, 13 RQ, 10 CQ, 11 EQ. sel bits 0-2 tail mode, 3 CQ arm, 4 EQ no-arm."""
    sel2 = q | (0xC0 if wqe_cnt else 0)
    b = [kind_op]
    s = sel
    ex = []
    if kind_op == 11:
        ex.append(0)  # EQ tail delta
    if page is not None:
        s |= 0x80
        ex.append(page)
    if ident == "other":
        s |= 2 << 5
    elif ident is not None:
        s |= 3 << 5
    b += [s, sel2] + ex
    if ident not in (None, "other"):
        b += list(u32(ident))
    if tail is not None:
        b += tail
    if wqe_cnt:
        b += [wqe_cnt]
    return b


def mdev_run(budget=0):
    return [8, budget]


def mdev_rx_simple(q, k):
    return [12, q | (k << 3)]


def dev_len(kind, v=0):
    """seg_len encodings: 'u16' 14 + v % 1600, 'pkt' whole packet k=v, 'u8', 'big'."""
    return {"u16": [0] + list(u16(v)), "pkt": [3 | (v << 4)], "u8": [4, v],
            "jumbo": [5, v], "huge": [6] + list(u16(v))}[kind]


def dev_addr(kind, v=0, off=0):
    """addr encodings: 'pkt' buffer v + off, 'ring', 'guard', 'low', 'high', 'freed'."""
    sel = {"pkt": v, "ring": 4, "guard": 6, "low": 7, "high": 8, "freed": 9}[kind]
    return [sel] + list(u16(off))


def mana_dev_seeds():
    t = "mana_device_wqe"
    lens = list(u16(100)) + list(u16(1500)) + list(u16(60)) + list(u16(3000))
    # EQs of 8, TX and RX CQs of 16 entries; RSS: RQ0 only (0) or RQ0 and RQ1 (1).
    setup = [0x5A, 0x00] + lens
    setup2 = [0x5A, 0x04] + lens

    # Plain sends from both SQs of port 0, received by RQ0 at port 1; arms and events.
    p = list(setup)
    p += mdev_ring(10, 0, sel=8) + mdev_ring(10, 1, sel=8) + mdev_ring(11, 0) + mdev_ring(11, 1)
    for k in range(4):
        p += mdev_wqe(k % 2, k)
    p += mdev_ring(5, 0) + mdev_ring(5, 1) + mdev_run()
    for k in range(4):
        p += mdev_rx_simple(0, k)
    p += mdev_ring(13, 0) + mdev_ring(10, 0, sel=8) + mdev_ring(10, 1, sel=8) + mdev_run()
    write(t, "send", p)

    # Offloads: VLAN insertion (long OOB), TSO, checksum; SQ2 (port 1 → port 0, no RSS)
    # and SQ3 (no peer); budgeted runs.
    p = list(setup)
    p += mdev_wqe(0, 1, long=True, vlan=0x2005, offl=0x30)
    p += mdev_wqe(0, 3, tso=(2, 1399), offl=0x34)
    p += mdev_wqe(1, 0, offl=0x20) + mdev_wqe(2, 1) + mdev_wqe(3, 2)
    p += mdev_ring(5, 0) + mdev_ring(5, 1) + mdev_ring(5, 2) + mdev_ring(5, 3)
    p += mdev_run(1) + mdev_run(2) + mdev_run()
    write(t, "offloads", p)

    # Errors the SQ survives: reads of the guard page and of freed memory, wrong pkt_fmt,
    # vcq, suppressed CQE, a zero SGE, a frame too long; doorbells with misaligned or far
    # tails, on the wrong page, for other ports' queues, RQ doorbells with wqe_cnt != 0,
    # raw registers, an unmapped packet, a link down.
    p = list(setup)
    p += mdev_wqe(0, 0, extra=[(dev_len("u16", 200), dev_addr("guard", off=16))])
    p += mdev_wqe(0, 1, extra=[(dev_len("u16", 100), dev_addr("freed"))])
    p += mdev_wqe(0, 2, pkt_fmt=1) + mdev_wqe(0, 2, cq_sel=1) + mdev_wqe(0, 2, suppress=0)
    p += mdev_wqe(0, 2, first=[0, 4, 0])  # first SGE size 0
    p += mdev_wqe(0, 0, extra=[(dev_len("jumbo", 3), dev_addr("pkt", 1))])
    p += mdev_ring(5, 0) + mdev_run()
    p += mdev_wqe(0, 0) + mdev_ring(5, 0, sel=6, tail=[7])
    p += mdev_ring(5, 0, sel=7, tail=list(u32(0x10000))) + mdev_ring(5, 0, page=2)
    p += mdev_ring(5, 0, ident="other") + mdev_ring(5, 0) + mdev_run()
    p += mdev_rx_simple(0, 1) + mdev_ring(13, 0, wqe_cnt=1) + mdev_ring(13, 0, page=0)
    p += mdev_ring(13, 0, ident=0x2011) + mdev_ring(13, 0)
    p += [14, 0] + list(u16(0x1400)) + list(u32(1)) + list(u32(2))
    p += [14, 6] + list(u16(0x08)) + [14, 6] + list(u16(0x10)) + [14, 6] + list(u16(0x44))
    p += [14, 4] + list(u16(0x1000)) + list(u32(5))
    p += [16, 0] + mdev_wqe(0, 0) + mdev_ring(5, 0) + mdev_run()
    p += [17, 0x00] + mdev_wqe(0, 1) + mdev_ring(5, 0) + mdev_run() + [17, 0x40]
    write(t, "faults", p)

    # Flow control on port 0 with RQ1 empty, then a malformed RX WQE; structural errors
    # (num_sge 0, an OOB of 20 bytes) stop SQ1 and SQ0.
    p = list(setup2)
    p += [17, 0x4A]  # pause on for port 0
    for k in range(6):
        p += mdev_wqe(0, k % 4)
    p += mdev_ring(5, 0) + mdev_run()
    p += mdev_rx_simple(1, 0) + mdev_rx_simple(1, 1) + mdev_ring(13, 1) + mdev_run()
    p += [17, 0x02] + mdev_run()  # pause off
    p += [12, 0x07, 0] + mdev_ring(13, 1) + mdev_wqe(0, 1) + mdev_wqe(0, 2) + mdev_ring(5, 0)
    p += mdev_run()
    p += mdev_wqe(1, 0, nsge=0) + mdev_ring(5, 1) + mdev_run()
    p += mdev_wqe(0, 0, oob=5) + mdev_ring(5, 0) + mdev_run()
    p += mdev_wqe(0, 0) + mdev_ring(5, 0) + mdev_run()
    write(t, "structural", p)

    # Loopback: port 1 (flow control on) sends to its own RQs and pauses on RQ1 while it is
    # short; with flow control off the frames land there; off again they go to port 0 (no
    # RSS, dropped); port 2 (no peer) loops too.
    p = list(setup2)
    p += [17, 0x43, 17, 0x42]  # port 1: loopback on, pause on
    for k in range(3):
        p += mdev_rx_simple(1, k)
    p += mdev_ring(13, 1)
    for k in range(6):
        p += mdev_wqe(2, k % 4)
    p += mdev_ring(5, 2) + mdev_run()
    for k in range(4):
        p += mdev_rx_simple(1, k)
    p += mdev_ring(13, 1) + mdev_run(2) + [17, 0x06] + mdev_run()  # pause off
    p += [17, 0x07] + mdev_wqe(2, 0) + mdev_ring(5, 2) + mdev_run()  # loopback off
    p += [17, 0x47] + mdev_wqe(3, 1) + mdev_ring(5, 3) + mdev_run()  # port 2 loops
    write(t, "loopback", p)


# --- mana_hwc (src/mana_hwc.rs) -----------------------------------------------------------


def mana_hwc_seeds():
    t = "mana_hwc"
    p = [0, 0, 0, 0]  # INIT_EQ_ID_DB: EQ 0x10, doorbell page 0
    for typ, extra in [(1, []), (2, []), (3, []), (4, [1]), (5, [0x10, 0]), (6, [0x10, 0]),
                       (7, []), (8, [0, 0, 0, 1]), (9, [0, 0, 0x48, 0x57])]:
        p += [0, 0, 1, typ] + extra  # INIT_DATA: CQ, RQ, SQ ids, depth, sizes, CQs, pdid, mkey
    p += [0, 0, 2]  # INIT_DONE
    p += [1, 1, 1, 2]  # three interrupts, finish_init
    p += [3, 0, 40] + [0] * 40  # a 40-byte request
    p += [4, 0, 32, 1, 0] + [0] * 32 + [1, 0, 1, 1, 1]  # its response, SQ and RQ CQEs, EQE
    p += [1, 6, 1, 1, 0]  # interrupt, take into 256 bytes
    p += [3, 0, 48] + [0] * 48  # another request
    p += [4, 0x10, 0x00, 0, 3, 0xC0, 0, 0, 0x0D] + [0] * 32 + [0, 0x7F, 0x22, 0, 0, 1, 0, 0, 0]
    p += [1, 6, 1, 0, 64, 7, 8, 0, 0x80]  # hostile answer, take, abandon, parse
    write(t, "handshake", p)
    write(t, "hostile", list(range(256)) * 2)


# ---- device_cmd ------------------------------------------------------------------------
# new: mpwqe, min_inline, cqe_compression; op % 8: 0..4 command, 5 register, 6 link,
# 7 fail_command. A command reads: function, opcode index, length selector (+ u8/u16),
# op_mod selector, field count (+ fields), 9 object-number selectors, queue-memory flag
# (+ u8 u16 u8 u8), output selector (+ u16), token, corruption bits (+ their bytes), ring
# selector.

CMD_OPS = [0x104, 0x105, 0x10a, 0x10b, 0x100, 0x102, 0x103, 0x802, 0x803, 0x800, 0x801,
           0x816, 0x817, 0x301, 0x302, 0x400, 0x401, 0x912, 0x914, 0x904, 0x905, 0x906,
           0x907, 0x908, 0x909, 0x90a, 0x90b, 0x916, 0x917, 0x918, 0x900, 0x902, 0x754,
           0x755, 0x750, 0x805, 0x770, 0x999]


def cmd(op, lensel=0, f=0, outsel=0, objs=(), qmem=None, corrupt=0, token=1):
    b = [0, f, CMD_OPS.index(op), lensel, 1, 0]
    for k in range(9):
        b += [0, objs[k] if k < len(objs) else 0] if k < len(objs) else [1]
    if qmem is None:
        b += [0]
    else:
        b += [1, qmem[0]] + list(u16(0)) + [qmem[1], qmem[2]]
    b += [outsel, token, corrupt]
    if corrupt & 0x01:
        b += [1, 0x77]
    b += [1]
    return b


def cmd_seeds():
    t = "device_cmd"
    up = [1, 0, 1]
    for f in (0, 1):
        up += cmd(0x104, f=f) + cmd(0x10a, f=f, outsel=1) + cmd(0x100, f=f, outsel=2)
        up += cmd(0x102, lensel=1, f=f) + cmd(0x802, f=f) + cmd(0x800, f=f) + cmd(0x816, f=f)
    write(t, "bringup", up)
    p = list(up)
    p += cmd(0x301, lensel=4, objs=(0, 1), qmem=(0, 4, 0))
    p += cmd(0x400, lensel=4, objs=(0, 1, 2), qmem=(1, 4, 0))
    p += cmd(0x912, lensel=2) + cmd(0x904, lensel=4, qmem=(2, 0, 4))
    p += [6, 1, 0, 6, 1, 1]  # port 1 down and up
    write(t, "queues", p)
    p = list(up) + cmd(0x10a, corrupt=0x01, lensel=3, outsel=1)
    p += cmd(0x10a, corrupt=0x08 | 0x10, outsel=1) + [3, 0x11, 0x22, 0x33, 0x44]
    p += [5, 0, 0, 0, 0x18, 0, 0, 0, 0, 1] + [7, 0, 1, 5] + cmd(0x102, lensel=1)
    write(t, "corrupt", p)
    rnd = 0x1234567
    for n in range(2):
        b = []
        for _ in range(700):
            rnd = (rnd * 1103515245 + 12345) & 0x7FFFFFFF
            b.append((rnd >> 16) & 0xFF)
        write(t, "random%d" % n, up + b)


if __name__ == "__main__":
    cmd_seeds()
    tx_seeds()
    rx_seeds()
    dev_seeds()
    mana_tx_seeds()
    mana_rx_seeds()
    mana_dev_seeds()
    mana_hwc_seeds()
