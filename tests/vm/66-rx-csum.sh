#!/usr/bin/env bash
# ethtool -K <dev> rx on|off (NETIF_F_RXCSUM), as mlx5e honours it: with rx on, the TCP
# segments the device verified go up to the stack CHECKSUM_UNNECESSARY (counted in
# rx_csum_unnecessary); with rx off every packet goes up CHECKSUM_NONE (rx_csum_none) and
# the stack verifies the checksums itself. Either way the data arrives intact, and
# rx_csum_unnecessary + rx_csum_none + rx_dropped adds up to rx_packets, in the totals and
# in the per-queue counters.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
trap traffic_cleanup EXIT

setup_pair
rxq=$([ "$RSNIC_FAMILY" = mana ] && echo rx_ || echo rx)
# sum_queues SNAP0 SNAP1 NAME: the delta of NAME summed over B's per-queue counters.
sum_queues() {
	deltas "$1" "$2" | awk -v re="^${rxq}[0-9]+_$3\$" '$1 ~ re { s += $2 } END { print s + 0 }'
}
for mode in on off on; do
	ip netns exec peer ethtool -K "$B" rx "$mode"
	assert_eq "rx-checksumming $mode" "rx-checksumming: $mode" \
		"$(ip netns exec peer ethtool -k "$B" | grep '^rx-checksumming:')"
	snap b0 "$B" peer
	transfer_check "" peer 10.10.0.2 2
	snap b1 "$B" peer
	pk=$(delta b0 b1 rx_packets)
	un=$(delta b0 b1 rx_csum_unnecessary)
	no=$(delta b0 b1 rx_csum_none)
	dr=$(delta b0 b1 rx_dropped)
	echo "  rx $mode: B received $pk packets: $un CHECKSUM_UNNECESSARY, $no CHECKSUM_NONE, $dr dropped"
	# 2 MB in TCP segments of at most 1448 bytes: at least 1449 data segments.
	[ "$pk" -ge 1449 ] || fail "rx $mode: B received only $pk packets"
	assert_eq "rx $mode: unnecessary + none + dropped = rx_packets" "$pk" $((un + no + dr))
	assert_eq "rx $mode: per-queue csum_unnecessary add up" "$un" "$(sum_queues b0 b1 csum_unnecessary)"
	assert_eq "rx $mode: per-queue csum_none add up" "$no" "$(sum_queues b0 b1 csum_none)"
	if [ "$mode" = on ]; then
		# Everything but the odd ARP or neighbour packet (no L4 checksum) was verified.
		[ "$un" -ge 1449 ] || fail "rx on: only $un of $pk packets went up CHECKSUM_UNNECESSARY"
	else
		assert_eq "rx off: nothing goes up CHECKSUM_UNNECESSARY" 0 "$un"
	fi
done
