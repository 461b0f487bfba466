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
    b = [1, kind] + list(u16(100)) + [len(frags)]
    for f in frags:
        b += list(u16(f))
    return b + [0x80 | fail if fail is not None else 0]


def tx_gso(frags, mss, segs, more=False):
    kind = 2 | (4 if more else 0) | (2 << 4)
    b = [2, kind] + list(u16(1000)) + [len(frags)]
    for f in frags:
        b += list(u16(f))
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
# 13 RX post, 14 raw register, 15 packet bytes, 16 unmap, 17 control, 18 skip, 19 resync.

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


if __name__ == "__main__":
    tx_seeds()
    rx_seeds()
    dev_seeds()
