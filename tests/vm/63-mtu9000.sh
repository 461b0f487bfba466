#!/usr/bin/env bash
# MTU 9000 end to end: both ports at 9000, unfragmented 9000-byte pings both ways (and the
# next size up refused locally), TCP with 9000-byte frames both ways with data integrity.
# ConnectX scatters a jumbo frame over three order-0 pages (RX scatter): the device writes
# each 9000-byte frame into three data segments of its RX WQE (dev_rx_segs), and the driver
# counts as scattered (rx_scatter_pkts) exactly the frames the device scattered.
set -eu
. "$(dirname "$0")/lib.sh"
one_family_on_debug
. "$(dirname "$0")/traffic.sh"

setup_pair
ip link set "$A" mtu 9000
ip netns exec peer ip link set "$B" mtu 9000
assert_eq "MTU of A" 9000 "$(cat "/sys/class/net/$A/mtu")"
assert_eq "MTU of B" 9000 "$(ip netns exec peer cat "/sys/class/net/$B/mtu")"
wait_for "carrier on $A" eval '[ "$(carrier "$A")" = 1 ]'

snap s0a "$A"
snap s0b "$B" peer
ping -c 5 -i 0.2 -W 2 -s 8972 -M do 10.10.0.2 >/dev/null || fail "9000-byte ping A -> B"
ip netns exec peer ping -c 5 -i 0.2 -W 2 -s 8972 -M do 10.10.0.1 >/dev/null ||
	fail "9000-byte ping B -> A"
ping -6 -c 3 -i 0.2 -W 2 -s 8952 -M do fd00::2 >/dev/null || fail "9000-byte IPv6 ping A -> B"
echo "  9000-byte pings (IPv4 both ways, IPv6 A -> B): ok"
! ping -c 1 -W 1 -s 8973 -M do 10.10.0.2 >/dev/null 2>&1 || fail "a 9001-byte ping went out unfragmented"
snap s1a "$A"
snap s1b "$B" peer
# At least the 10 jumbo echo requests and replies went through the device, nothing was
# too long for it.
big=$(($(delta s0a s1a "$C_TX_BYTES") / $(delta s0a s1a dev_tx_packets)))
echo "  A sent $(delta s0a s1a dev_tx_packets) packets, $big bytes on average"
[ "$big" -gt 4000 ] || fail "A's packets are not jumbo ($big bytes on average)"
assert_eq "B too-long drops" 0 "$(delta s0b s1b "$C_TOO_LONG")"
assert_eq "A too-long drops" 0 "$(delta s0a s1a "$C_TOO_LONG")"
if [ "$RSNIC_FAMILY" = mlx5 ]; then
	# B received 13 jumbo frames (5 + 3 echo requests, 5 echo replies), each over three
	# pages: two data segments more than frames for each, one for any other frame.
	sc=$(delta s0b s1b dev_rx_scatter_pkts)
	extra=$(($(delta s0b s1b dev_rx_segs) - $(delta s0b s1b dev_rx_packets)))
	echo "  B's device scattered $sc frames ($extra data segments beyond one per frame)"
	[ "$sc" -ge 13 ] || fail "B's device scattered $sc frames, not the 13 jumbo ones"
	assert_eq "B's data segments beyond the first" $((2 * sc)) "$extra"
	assert_eq "B's scattered frames (driver)" "$sc" "$(delta s0b s1b rx_scatter_pkts)"
fi

iperf_server 10.10.0.2 peer
timeout 60 iperf3 -c 10.10.0.2 -t 3 -M 8948 -J >/tmp/tcp9000.json || fail "iperf3 at MTU 9000"
bps=$(iperf_json /tmp/tcp9000.json bps)
echo "  TCP A -> B at MTU 9000: $((bps / 1000)) kbit/s"
[ "$bps" -gt 0 ] 2>/dev/null || fail "TCP at MTU 9000: no throughput ($bps)"

snap s0a "$A"
transfer_check "" peer 10.10.0.2 8
snap s1a "$A"
avg=$(($(delta s0a s1a tx_bytes) / $(delta s0a s1a tx_packets)))
echo "  A's frames during the transfer: $(delta s0a s1a tx_packets), $avg bytes on average"
[ "$avg" -gt 4000 ] || fail "the transfer did not use jumbo frames ($avg bytes on average)"
transfer_check peer "" 10.10.0.1 8
teardown_pair
