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
ethtool -S "$A" | grep -E '^\s+(tx|rx|dev)_[a-z_]+: ' | head -60

# Background IPv6 traffic (MLD, router solicitations) may be in flight: compare once the
# counters of both ends are consistent, within 5 s.
balanced() {
	local a b
	a=$(ethtool -S "$A")
	b=$(ip netns exec peer ethtool -S "$B")
	tx_a=$(echo "$a" | awk '$1 == "tx_packets:" {print $2}')
	dev_tx_a=$(echo "$a" | awk '$1 == "dev_tx_packets:" {print $2}')
	rx_b=$(echo "$b" | awk '$1 == "rx_packets:" {print $2}')
	dev_rx_b=$(echo "$b" | awk '$1 == "dev_rx_packets:" {print $2}')
	[ "$tx_a" = "$dev_tx_a" ] && [ "$dev_tx_a" = "$dev_rx_b" ] && [ "$rx_b" = "$dev_rx_b" ]
}
wait_for "A's TX and B's RX counters to balance" balanced
echo "  A sent $tx_a (device: $dev_tx_a), B received $rx_b (device: $dev_rx_b)"
[ "$tx_a" -ge 45 ] || fail "too few packets sent: $tx_a"
assert_eq "no TX drops" 0 "$(stat "$A" tx_queue_dropped)"
assert_eq "no device errors" 0 "$(stat "$A" "$C_WQE_ERR")"
teardown_pair
