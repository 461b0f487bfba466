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

tx_a=$(stat "$A" tx_packets)
rx_b=$(stat "$B" rx_packets peer)
dev_tx_a=$(stat "$A" dev_tx_packets)
dev_rx_b=$(stat "$B" dev_rx_packets peer)
echo "  A sent $tx_a (device: $dev_tx_a), B received $rx_b (device: $dev_rx_b)"
[ "$tx_a" -ge 45 ] || fail "too few packets sent: $tx_a"
assert_eq "driver TX = device TX on A" "$tx_a" "$dev_tx_a"
assert_eq "device RX on B = device TX on A" "$dev_tx_a" "$dev_rx_b"
assert_eq "B received all A sent" "$tx_a" "$rx_b"
assert_eq "no TX drops" 0 "$(stat "$A" tx_queue_dropped)"
assert_eq "no device errors" 0 "$(stat "$A" dev_wqe_errors)"
teardown_pair
