#!/usr/bin/env bash
# iperf3 TCP and UDP both ways between port A and port B (in namespace "peer"), and data
# integrity: random data sent both ways over TCP (socat) and in UDP datagrams arrives intact.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"

setup_pair
# Socket buffers large enough that the receiving process, not the network, is never the
# bottleneck of the UDP checks in the emulated VM.
sysctl -qw net.core.rmem_max=8388608 net.core.rmem_default=4194304
ping -c 2 -i 0.2 -W 2 10.10.0.2 >/dev/null || fail "no ping before iperf3"

for dir in a_to_b b_to_a; do
	iperf_tcp "$dir"

	snap u0a "$A"
	snap u0b "$B" peer
	d0=$(dir_drops "$dir")
	iperf_dir "$dir" "udp-$dir" -u -b 4M -l 1400
	d1=$(dir_drops "$dir")
	snap u1a "$A"
	snap u1b "$B" peer
	bps=$(iperf_json "/tmp/udp-$dir.json" bps)
	lost=$(iperf_json "/tmp/udp-$dir.json" lost)
	pkts=$(iperf_json "/tmp/udp-$dir.json" packets)
	echo "  UDP $dir at 4 Mbit/s: $((bps / 1000)) kbit/s, lost $lost of $pkts datagrams" \
		"(device drops for lack of RX buffers: A $(delta u0a u1a "$C_NOWQE")," \
		"B $(delta u0b u1b "$C_NOWQE"); socket buffer overflows since boot:" \
		"here $(nstat -az UdpRcvbufErrors | awk '$1 == "UdpRcvbufErrors" { print $2 }')," \
		"peer $(ip netns exec peer nstat -az UdpRcvbufErrors | awk '$1 == "UdpRcvbufErrors" { print $2 }'))"
	[ "$bps" -gt 0 ] 2>/dev/null || fail "UDP $dir: no throughput ($bps)"
	# Every loss beyond 1% counted: on the path, or by the receiving device for lack of RX
	# buffers (ConnectX's rx_out_of_buffer, which path_drops reads, is that count; MANA's
	# is the model's).
	if [ $dir = a_to_b ]; then nowqe=$(delta u0b u1b "$C_NOWQE"); else nowqe=$(delta u0a u1a "$C_NOWQE"); fi
	[ "$RSNIC_FAMILY" = mana ] || nowqe=0
	udp_loss_check "$dir" "$lost" "$pkts" $((d1 - d0 + nowqe))
done

# TCP integrity both ways.
transfer_check "" peer 10.10.0.2 8
transfer_check peer "" 10.10.0.1 8

# UDP integrity: every datagram carries its sequence number and a payload derived from it;
# the receiver checks each one it gets (any corruption the checksums missed shows here).
udp_check() {
	local sns=() rns=() addr=$3
	[ -n "$1" ] && sns=(ip netns exec "$1")
	[ -n "$2" ] && rns=(ip netns exec "$2")
	cat >/tmp/udpcheck.py <<'PY'
import hashlib, socket, sys, time
mode, addr, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
def payload(i):
    seed = hashlib.sha256(i.to_bytes(4, "big")).digest()
    size = 64 + (i * 37) % 1400
    return (i.to_bytes(4, "big") + seed * 50)[:size]
if mode == "recv":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.bind((addr, 5700)); s.settimeout(5)
    open("/tmp/udpcheck.ready", "w").close()
    seen, bad = set(), 0
    try:
        while len(seen) < n:
            d = s.recv(2048)
            i = int.from_bytes(d[:4], "big")
            if i >= n or d != payload(i): bad += 1
            else: seen.add(i)
    except socket.timeout:
        pass
    print(len(seen), bad)
else:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for i in range(n):
        s.sendto(payload(i), (addr, 5700))
        if i % 20 == 19: time.sleep(0.005)
PY
	rm -f /tmp/udpcheck.ready
	"${rns[@]}" python3 /tmp/udpcheck.py recv "$addr" 3000 >/tmp/udpcheck.out &
	local rpid=$!
	wait_for "UDP receiver" test -e /tmp/udpcheck.ready
	"${sns[@]}" python3 /tmp/udpcheck.py send "$addr" 3000
	wait "$rpid" || fail "UDP receiver failed"
	read -r got bad </tmp/udpcheck.out
	echo "  UDP to $addr: $got of 3000 datagrams intact, $bad corrupted"
	[ "$bad" = 0 ] || fail "UDP to $addr: $bad corrupted datagrams"
	[ $((got * 100)) -ge $((3000 * 99)) ] || fail "UDP to $addr: only $got of 3000 datagrams arrived"
}
udp_check "" peer 10.10.0.2
udp_check peer "" 10.10.0.1

assert_eq "no device errors on A" 0 "$(stat "$A" "$C_WQE_ERR")"
assert_eq "no device errors on B" 0 "$(stat "$B" "$C_WQE_ERR" peer)"
if [ "$RSNIC_FAMILY" = mana ]; then
	# The TCP streams went out as TSO WQEs (OOB in the SGL, headers prepared for the NIC).
	tso=$(stat "$A" tx_tso_packets)
	echo "  A's TSO packets: $tso"
	[ "$tso" -gt 0 ] || fail "no TSO packet on A"
fi
teardown_pair
