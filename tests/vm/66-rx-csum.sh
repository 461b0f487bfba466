#!/usr/bin/env bash
# ethtool -K <dev> rx on|off (NETIF_F_RXCSUM), as mlx5e honours it: with rx on, the TCP
# segments go up to the stack with the device's checksum: on ConnectX CHECKSUM_COMPLETE from
# the CQE's sum (rx_csum_complete), on MANA CHECKSUM_UNNECESSARY (rx_csum_unnecessary), as
# mlx5e and mana do; with rx off every packet goes up CHECKSUM_NONE (rx_csum_none) and the
# stack verifies the checksums itself. Either way the data arrives intact, and
# rx_csum_complete + rx_csum_unnecessary + rx_csum_none + rx_dropped adds up to rx_packets,
# in the totals and in the per-queue counters.
# ConnectX also: with the default flags, UDP over IPv4 and IPv6 of odd lengths arrives
# intact CHECKSUM_COMPLETE, and a frame whose UDP checksum is wrong is dropped by the stack
# (Udp InCsumErrors in /proc/net/snmp), not delivered; the private flag rx_no_csum_complete
# (mlx5e's) turns CHECKSUM_COMPLETE off: the device's verdict instead, and the wrong frame is
# still dropped (CHECKSUM_NONE, the stack finds it).
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
trap traffic_cleanup EXIT

setup_pair
mark_dmesg
rxq=$([ "$RSNIC_FAMILY" = mana ] && echo rx_ || echo rx)
# sum_queues SNAP0 SNAP1 NAME: the delta of NAME summed over B's per-queue counters.
sum_queues() {
	deltas "$1" "$2" | awk -v re="^${rxq}[0-9]+_$3\$" '$1 ~ re { s += $2 } END { print s + 0 }'
}
# no_csum_fault NAME: a CHECKSUM_COMPLETE sum the stack found wrong on a good packet is a
# "hw csum failure" in the kernel log (netdev_rx_csum_fault); the stack then verifies in
# software and delivers the packet all the same, so intact data alone would not show it.
no_csum_fault() {
	if dmesg_since_mark | grep -q 'hw csum failure'; then
		fail "$1: a CHECKSUM_COMPLETE sum the stack found wrong: $(dmesg_since_mark | grep -m1 'hw csum failure')"
	fi
	echo "  $1: no hw csum failure in the kernel log"
}

# verdicts NAME SNAP0 SNAP1: sets pk, co, un, no, dr to B's rx_packets and checksum
# verdicts between the snapshots and checks that they add up, in the totals and per queue.
verdicts() {
	local q
	pk=$(delta "$2" "$3" rx_packets)
	co=$(delta "$2" "$3" rx_csum_complete)
	un=$(delta "$2" "$3" rx_csum_unnecessary)
	no=$(delta "$2" "$3" rx_csum_none)
	dr=$(delta "$2" "$3" rx_dropped)
	echo "  $1: B received $pk packets: $co CHECKSUM_COMPLETE, $un CHECKSUM_UNNECESSARY," \
		"$no CHECKSUM_NONE, $dr dropped"
	assert_eq "$1: complete + unnecessary + none + dropped = rx_packets" "$pk" \
		$((co + un + no + dr))
	for q in complete unnecessary none; do
		assert_eq "$1: per-queue csum_$q add up" "$(delta "$2" "$3" "rx_csum_$q")" \
			"$(sum_queues "$2" "$3" "csum_$q")"
	done
}
for mode in on off on; do
	ip netns exec peer ethtool -K "$B" rx "$mode"
	assert_eq "rx-checksumming $mode" "rx-checksumming: $mode" \
		"$(ip netns exec peer ethtool -k "$B" | grep '^rx-checksumming:')"
	snap b0 "$B" peer
	transfer_check "" peer 10.10.0.2 2
	snap b1 "$B" peer
	verdicts "rx $mode" b0 b1
	# 2 MB in TCP segments of at most 1448 bytes: at least 1449 data segments.
	[ "$pk" -ge 1449 ] || fail "rx $mode: B received only $pk packets"
	if [ "$mode" = on ]; then
		# Everything but the odd ARP or neighbour packet (no L4 checksum, 64 bytes or
		# less) went up with the device's checksum: its sum on ConnectX, its verdict on MANA.
		if [ "$RSNIC_FAMILY" = mlx5 ]; then
			[ "$co" -ge 1449 ] || fail "rx on: only $co of $pk packets went up CHECKSUM_COMPLETE"
		else
			assert_eq "rx on: nothing goes up CHECKSUM_COMPLETE on MANA" 0 "$co"
			[ "$un" -ge 1449 ] || fail "rx on: only $un of $pk packets went up CHECKSUM_UNNECESSARY"
		fi
	else
		assert_eq "rx off: nothing goes up CHECKSUM_UNNECESSARY" 0 "$un"
		assert_eq "rx off: nothing goes up CHECKSUM_COMPLETE" 0 "$co"
	fi
done
no_csum_fault "TCP"
[ "$RSNIC_FAMILY" = mlx5 ] || exit 0

# udp_csum_errors: Udp InCsumErrors of B's namespace (/proc/net/snmp, found by its name).
udp_csum_errors() {
	ip netns exec peer awk '$1 == "Udp:" { if (!c) { for (i = 2; i <= NF; i++) if ($i == "InCsumErrors") c = i } else print $c }' /proc/net/snmp
}

# udp_round NAME: UDP datagrams of odd lengths from A to B over IPv4 and IPv6 (sockets: the
# stack and A's device fill the checksums), then two raw frames from A's packet socket, the
# same datagram once with its UDP checksum right and once wrong. B's listener must get every
# good datagram intact and never the bad one, which B's stack counts in Udp InCsumErrors.
udp_round() {
	local e0 e1 got
	e0=$(udp_csum_errors)
	snap u0 "$B" peer
	rm -f /tmp/udp.got
	ip netns exec peer python3 - >/tmp/udp.got <<'EOF' &
import socket, select
socks = []
for fam, addr in ((socket.AF_INET, "10.10.0.2"), (socket.AF_INET6, "fd00::2")):
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.bind((addr, 7007))
    socks.append(s)
open("/tmp/udp.ready", "w").close()
# Until the raw good frame (sent last but one, right before the bad one) and then 1 s
# without a datagram; 20 s at most between two.
wait = 20
while True:
    r, _, _ = select.select(socks, [], [], wait)
    if not r:
        break
    for s in r:
        d = s.recv(4096)
        if d[:4] == b"good":
            wait = 1
        print(d[:4].decode(), len(d), sum(d) & 0xffff)
EOF
	local lpid=$!
	rm -f /tmp/udp.ready
	wait_for "UDP listener" test -e /tmp/udp.ready
	python3 - "$A" "$(cat "/sys/class/net/$A/address")" \
		"$(ip netns exec peer cat "/sys/class/net/$B/address")" >/tmp/udp.sent <<'EOF'
import socket, struct, sys
dev, smac, dmac = sys.argv[1], sys.argv[2], sys.argv[3]
def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s
for fam, addr in ((socket.AF_INET, "10.10.0.2"), (socket.AF_INET6, "fd00::2")):
    s = socket.socket(fam, socket.SOCK_DGRAM)
    for i in range(20):
        d = (b"v%d%02d" % (4 if fam == socket.AF_INET else 6, i)) + bytes(
            (i * 7 + k) & 0xff for k in range(97 + 2 * i + i % 2))
        s.sendto(d, (addr, 7007))
        print(d[:4].decode(), len(d), sum(d) & 0xffff)
def frame(tag, bad):
    pay = tag + bytes(range(101))
    src, dst = socket.inet_aton("10.10.0.1"), socket.inet_aton("10.10.0.2")
    udp = struct.pack("!HHHH", 40000, 7007, 8 + len(pay), 0) + pay
    c = 0xffff - csum(src + dst + struct.pack("!HH", 17, len(udp)) + udp) or 0xffff
    udp = udp[:6] + struct.pack("!H", c ^ (0x0100 if bad else 0)) + udp[8:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0x4000, 64, 17, 0, src, dst)
    ip = ip[:10] + struct.pack("!H", 0xffff - csum(ip)) + ip[12:]
    mac = lambda m: bytes(int(x, 16) for x in m.split(":"))
    return mac(dmac) + mac(smac) + b"\x08\x00" + ip + udp
p = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
p.bind((dev, 0))
p.send(frame(b"good", False))
print("good", 105, sum(b"good" + bytes(range(101))) & 0xffff)
p.send(frame(b"bad!", True))
EOF
	wait "$lpid" || fail "$1: the UDP listener failed"
	snap u1 "$B" peer
	e1=$(udp_csum_errors)
	# Each datagram as "tag length byte-sum", sent and received.
	sort /tmp/udp.sent >/tmp/udp.sent.s
	sort /tmp/udp.got >/tmp/udp.got.s
	cmp -s /tmp/udp.sent.s /tmp/udp.got.s ||
		fail "$1: B got other datagrams than the good ones sent: $(diff /tmp/udp.sent.s /tmp/udp.got.s | tr '\n' ' ')"
	assert_eq "$1: B got the good datagrams intact, not the bad one" 41 "$(wc -l </tmp/udp.got.s)"
	assert_eq "$1: the bad datagram in Udp InCsumErrors" 1 $((e1 - e0))
	verdicts "$1" u0 u1
}

udp_round "default flags"
[ "$co" -ge 41 ] || fail "default flags: only $co packets went up CHECKSUM_COMPLETE"
no_csum_fault "UDP"

ip netns exec peer ethtool --set-priv-flags "$B" rx_no_csum_complete on
assert_eq "rx_no_csum_complete" "rx_no_csum_complete: on" \
	"$(ip netns exec peer ethtool --show-priv-flags "$B" | grep '^rx_no_csum_complete' | tr -s ' \t' ' ')"
snap b0 "$B" peer
transfer_check "" peer 10.10.0.2 1
snap b1 "$B" peer
verdicts "rx_no_csum_complete on" b0 b1
assert_eq "rx_no_csum_complete on: nothing goes up CHECKSUM_COMPLETE" 0 "$co"
# 1 MB: at least 725 data segments, each verified by the device.
[ "$un" -ge 725 ] || fail "rx_no_csum_complete on: only $un packets went up CHECKSUM_UNNECESSARY"
udp_round "rx_no_csum_complete on"
assert_eq "rx_no_csum_complete on: nothing goes up CHECKSUM_COMPLETE" 0 "$co"
# The bad frame: the device's L4 verdict is not ok, so CHECKSUM_NONE.
[ "$no" -ge 1 ] || fail "rx_no_csum_complete on: the bad frame did not go up CHECKSUM_NONE"
ip netns exec peer ethtool --set-priv-flags "$B" rx_no_csum_complete off
