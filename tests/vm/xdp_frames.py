#!/usr/bin/env python3
"""Test frames on a packet socket, for rsnic's XDP tests: send them, or capture and check them.

The test frame is the one of tests/xdp/testframe.h (rsnic-xsk builds and checks the same
frames; keep the two in step): Ethernet, IPv4, UDP to port 9999, "RSNICTST", the sequence
number, and pattern bytes derived from it. A receiver rebuilds the frame it expects from the
sequence number and length it read, and compares every byte.

  xdp_frames.py send DEV --dst MAC [--src MAC] [--count N] [--seq0 N] [--size MIN[:MAX]]
                [--encap] [--src-ip A] [--dst-ip A]
      Sends COUNT test frames from DEV (bypassing the qdisc; a full TX queue is retried, so
      every frame is sent). Sizes cycle MIN + (seq * 37) % (MAX - MIN + 1). --encap wraps
      each frame in the encapsulation of tests/xdp/progs/xdp_encap.h, with a trailer of
      seq % 41 bytes, for xdp_pass_adjust to strip.
      Prints "sent=N bytes=N" (bytes of the frames as sent, outer headers included).

  xdp_frames.py capture DEV --count N [--timeout S] [--expect-dst MAC --expect-src MAC]
                [--seq0 N] [--src-ip A] [--dst-ip A] [--ready FILE]
      Receives on DEV (frames the stack received; not the ones DEV sent) until COUNT test
      frames arrived or TIMEOUT seconds passed, and checks each against the frame rebuilt
      from its sequence number (with the MAC addresses given, or its own). Prints
      "frames=N mismatches=N gaps=N reordered=N foreign=N encap=N bytes=N first_seq=N
      last_seq=N": encap counts frames that still carry the test encapsulation.
"""
import argparse
import errno
import os
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
SO_RCVBUFFORCE = 33
PACKET_QDISC_BYPASS = 20
SOL_PACKET = 263
UDP_PORT = 9999
MAGIC = b"RSNICTST"
HDR_LEN = 14 + 20 + 8
MIN_LEN = 60
ENCAP_ETH_P = 0x88B5
ENCAP_MAGIC = b"RXEN"
M64 = (1 << 64) - 1


def mac_bytes(s):
    b = bytes(int(x, 16) for x in s.split(":"))
    if len(b) != 6:
        raise ValueError("bad MAC " + s)
    return b


def dev_mac(dev):
    with open("/sys/class/net/%s/address" % dev) as f:
        return mac_bytes(f.read().strip())


def ip_csum(h):
    s = sum(struct.unpack("!10H", h))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def _stream(n):
    x, out = 0x9E3779B97F4A7C15, bytearray()
    while len(out) < n:
        x ^= (x << 13) & M64
        x ^= x >> 7
        x ^= (x << 17) & M64
        out += x.to_bytes(8, "little")
    return int.from_bytes(out[:n], "little")


MAX_LEN = 9000
T = _stream(MAX_LEN)


def pattern(seq, n):
    s = (((seq + 1) * 0x9E3779B97F4A7C15) & M64).to_bytes(8, "little") * (n // 8 + 1)
    t = T & ((1 << (8 * n)) - 1)
    return (t ^ int.from_bytes(s[:n], "little")).to_bytes(n, "little")


def build(length, seq, dst, src, ip_src, ip_dst):
    """The test frame of testframe.h."""
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, length - 14, seq & 0xFFFF, 0x4000,
                               64, 17, 0, ip_src, ip_dst))
    ip[10:12] = struct.pack("!H", ip_csum(bytes(ip)))
    udp = struct.pack("!HHHH", 40000, UDP_PORT, length - 34, 0)
    return (dst + src + b"\x08\x00" + bytes(ip) + udp + MAGIC + struct.pack("!Q", seq) +
            pattern(seq, length - HDR_LEN - 16))


def is_test(f):
    return (len(f) >= HDR_LEN + 16 and f[12:14] == b"\x08\x00" and f[23] == 17 and
            struct.unpack("!H", f[36:38])[0] == UDP_PORT and f[HDR_LEN:HDR_LEN + 8] == MAGIC)


def sizes(spec):
    lo, _, hi = spec.partition(":")
    lo = int(lo)
    hi = int(hi) if hi else lo
    if lo < MIN_LEN or hi < lo:
        raise SystemExit("sizes must be %d bytes or more" % MIN_LEN)
    return lo, hi


def cmd_send(a):
    lo, hi = sizes(a.size)
    dst = mac_bytes(a.dst)
    src = mac_bytes(a.src) if a.src else dev_mac(a.dev)
    ips, ipd = socket.inet_aton(a.src_ip), socket.inet_aton(a.dst_ip)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.setsockopt(SOL_PACKET, PACKET_QDISC_BYPASS, 1)
    s.bind((a.dev, 0))
    sent = nbytes = 0
    for seq in range(a.seq0, a.seq0 + a.count):
        f = build(lo + (seq * 37) % (hi - lo + 1), seq, dst, src, ips, ipd)
        if a.encap:
            trailer = seq % 41
            f = (dst + src + struct.pack("!H", ENCAP_ETH_P) + ENCAP_MAGIC +
                 struct.pack("!HH", trailer, 0) + f + b"\xee" * trailer)
        for _ in range(20000):
            try:
                s.send(f)
                break
            except OSError as e:
                if e.errno not in (errno.ENOBUFS, errno.EAGAIN, errno.EBUSY):
                    raise
                time.sleep(0.0005)
        else:
            raise SystemExit("send: TX queue of %s stayed full" % a.dev)
        sent += 1
        nbytes += len(f)
    print("sent=%d bytes=%d" % (sent, nbytes))


def cmd_capture(a):
    ips, ipd = socket.inet_aton(a.src_ip), socket.inet_aton(a.dst_ip)
    want_macs = None
    if a.expect_dst or a.expect_src:
        if not (a.expect_dst and a.expect_src):
            raise SystemExit("--expect-dst and --expect-src go together")
        want_macs = (mac_bytes(a.expect_dst), mac_bytes(a.expect_src))
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 16 << 20)
    s.bind((a.dev, 0))
    if a.ready:
        open(a.ready, "w").close()
    r = dict(frames=0, mismatches=0, gaps=0, reordered=0, foreign=0, encap=0, bytes=0,
             first_seq=a.seq0, last_seq=a.seq0)
    nxt = a.seq0
    end = time.monotonic() + a.timeout
    while r["frames"] < a.count:
        left = end - time.monotonic()
        if left <= 0:
            break
        s.settimeout(left)
        try:
            f, addr = s.recvfrom(65536)
        except socket.timeout:
            break
        if addr[2] == PACKET_OUTGOING:
            continue
        if not is_test(f):
            if f[12:14] == struct.pack("!H", ENCAP_ETH_P) and f[14:18] == ENCAP_MAGIC:
                r["encap"] += 1
            else:
                r["foreign"] += 1
            continue
        seq = struct.unpack("!Q", f[HDR_LEN + 8:HDR_LEN + 16])[0]
        r["frames"] += 1
        r["bytes"] += len(f)
        if r["frames"] == 1:
            r["first_seq"] = seq
        dst, src = want_macs if want_macs else (f[0:6], f[6:12])
        if len(f) < MIN_LEN or f != build(len(f), seq, dst, src, ips, ipd):
            r["mismatches"] += 1
        if seq >= nxt:
            r["gaps"] += seq - nxt
            nxt = seq + 1
        else:
            r["reordered"] += 1
        r["last_seq"] = seq
    print(" ".join("%s=%d" % (k, v) for k, v in r.items()))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("send", "capture"):
        q = sub.add_parser(name)
        q.add_argument("dev")
        q.add_argument("--count", type=int, default=1000)
        q.add_argument("--seq0", type=int, default=0)
        q.add_argument("--src-ip", default="10.10.0.1")
        q.add_argument("--dst-ip", default="10.10.0.2")
    q = sub.choices["send"]
    q.add_argument("--dst", required=True)
    q.add_argument("--src")
    q.add_argument("--size", default="60:1400")
    q.add_argument("--encap", action="store_true")
    q = sub.choices["capture"]
    q.add_argument("--timeout", type=float, default=10)
    q.add_argument("--expect-dst")
    q.add_argument("--expect-src")
    q.add_argument("--ready")
    a = p.parse_args()
    {"send": cmd_send, "capture": cmd_capture}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
