#!/usr/bin/env bash
# Traffic through the simulated ConnectX: ping both ways over IPv4 and IPv6 between port 0
# and port 1 (moved into a network namespace); the counters of both ends add up.
set -eu
. "$(dirname "$0")/lib.sh"

setup_pair
ping -c 5 -i 0.2 -W 2 10.10.0.2
ip netns exec peer ping -c 5 -i 0.2 -W 2 10.10.0.1
ping -6 -c 5 -i 0.2 -W 2 fd00::2
ip netns exec peer ping -6 -c 5 -i 0.2 -W 2 fd00::1
ping -c 20 -i 0.01 -s 1400 -W 2 10.10.0.2 >/dev/null
counters "$A" | grep -E '^\s+(tx|rx|dev|hc)_[a-z_]+: ' | head -80

# Background IPv6 traffic (MLD, router solicitations) may be in flight: compare once the
# counters of both ends are consistent, within 5 s.
balanced() {
	local a b
	a=$(counters "$A")
	b=$(counters "$B" peer)
	tx_a=$(echo "$a" | awk '$1 == "tx_packets:" {print $2}')
	dev_tx_a=$(echo "$a" | awk '$1 == "dev_tx_packets:" {print $2}')
	hw_tx_a=$(echo "$a" | sum_of "$C_HW_TX")
	rx_b=$(echo "$b" | awk '$1 == "rx_packets:" {print $2}')
	dev_rx_b=$(echo "$b" | awk '$1 == "dev_rx_packets:" {print $2}')
	hw_rx_b=$(echo "$b" | sum_of "$C_HW_RX")
	[ "$tx_a" = "$dev_tx_a" ] && [ "$dev_tx_a" = "$dev_rx_b" ] && [ "$rx_b" = "$dev_rx_b" ] &&
		[ "$hw_tx_a" = "$dev_tx_a" ] && [ "$hw_rx_b" = "$dev_rx_b" ]
}
wait_for "A's TX and B's RX counters to balance" balanced
echo "  A sent $tx_a (device model: $dev_tx_a, hardware counters: $hw_tx_a)," \
	"B received $rx_b (device model: $dev_rx_b, hardware counters: $hw_rx_b)"
[ "$hw_tx_a" -gt 0 ] || fail "the hardware counters ($C_HW_TX) are not in ethtool -S"
[ "$tx_a" -ge 45 ] || fail "too few packets sent: $tx_a"
assert_eq "no TX drops" 0 "$(stat "$A" tx_queue_dropped)"
assert_eq "no device errors" 0 "$(stat "$A" "$C_WQE_ERR")"
teardown_pair
