#!/usr/bin/env bash
# Traffic through the simulated ConnectX: ping both ways over IPv4 and IPv6 between port 0
# and port 1 (moved into a network namespace); the counters of both ends add up. ConnectX:
# each port's firmware holds the pages its driver gave, and no data segment was refused for
# its memory key.
set -eu
. "$(dirname "$0")/lib.sh"

setup_pair
ping -c 5 -i 0.2 -W 2 10.10.0.2
ip netns exec peer ping -c 5 -i 0.2 -W 2 10.10.0.1
ping -6 -c 5 -i 0.2 -W 2 fd00::2
ip netns exec peer ping -6 -c 5 -i 0.2 -W 2 fd00::1
ping -c 20 -i 0.01 -s 1400 -W 2 10.10.0.2 >/dev/null
counters "$A" | grep -E '^\s+(tx|rx|dev|hc)_[a-z_]+: ' | head -80

# The hardware counters count A's port (HW_SCOPE port) or A's device (HW_SCOPE device: A and B
# are ports of the same device, so they count both).
same_device=
dev_dir() { dirname "$(dirname "$(model_counters_file "$@")")"; } # the port's device in debugfs
[ "$HW_SCOPE" = device ] && [ "$(dev_dir "$A")" = "$(dev_dir "$B" peer)" ] && same_device=1
# Background IPv6 traffic (MLD, router solicitations) may be in flight: compare once the
# counters of both ends are consistent, within 5 s.
balanced() {
	local a b c
	a=$(counters "$A")
	b=$(counters "$B" peer)
	c() { awk -v k="$1:" '$1 == k {print $2}'; }
	tx_a=$(echo "$a" | c tx_packets)
	dev_tx_a=$(echo "$a" | c dev_tx_packets)
	hw_tx_a=$(echo "$a" | sum_of "$C_HW_TX")
	rx_b=$(echo "$b" | c rx_packets)
	dev_rx_b=$(echo "$b" | c dev_rx_packets)
	# Frames for a port that is not receiving yet are dropped by the device (MANA: A's
	# carrier is up before B's vport has RX on).
	no_rq_b=$(echo "$b" | c dev_rx_no_rq_drops)
	# Frames B's vport kept away (ConnectX programs its filter as mlx5e: A's MLD reports
	# and router solicitations go to groups B did not join).
	filt_b=$(echo "$b" | c dev_rx_vport_filtered)
	hw_rx_b=$(echo "$b" | sum_of "$C_HW_RX")
	want_hw_tx=$dev_tx_a want_hw_rx=$dev_rx_b
	if [ -n "$same_device" ]; then
		want_hw_tx=$((dev_tx_a + $(echo "$b" | c dev_tx_packets)))
		want_hw_rx=$((dev_rx_b + $(echo "$a" | c dev_rx_packets)))
	fi
	[ "$tx_a" = "$dev_tx_a" ] && [ "$dev_tx_a" = $((dev_rx_b + no_rq_b + ${filt_b:-0})) ] && [ "$rx_b" = "$dev_rx_b" ] &&
		[ "$hw_tx_a" = "$want_hw_tx" ] && [ "$hw_rx_b" = "$want_hw_rx" ]
}
wait_for "A's TX and B's RX counters to balance" balanced
echo "  A sent $tx_a (device model: $dev_tx_a, hardware counters: $hw_tx_a)," \
	"B received $rx_b (device model: $dev_rx_b, hardware counters: $hw_rx_b; dropped, not receiving: $no_rq_b)" \
	"${same_device:+(the hardware counters count the device: ports A and B together)}"
[ "$hw_tx_a" -gt 0 ] || fail "the hardware counters ($C_HW_TX) are not in ethtool -S"
[ "$tx_a" -ge 45 ] || fail "too few packets sent: $tx_a"
assert_eq "no TX drops" 0 "$(stat "$A" tx_queue_dropped)"
assert_eq "no device errors" 0 "$(stat "$A" "$C_WQE_ERR")"
if [ "$RSNIC_FAMILY" = mlx5 ]; then
	# The firmware holds the pages the driver gave it (boot, init and the regular ones of
	# its page request), and checked every data segment's lkey against the driver's key.
	pages_a=$(stat "$A" dev_fw_pages)
	pages_b=$(stat "$B" dev_fw_pages peer)
	echo "  the firmware holds ${pages_a:-none} pages of A's driver, ${pages_b:-none} of B's"
	if [ "${pages_a:-0}" -eq 0 ] || [ "${pages_b:-0}" -eq 0 ]; then
		fail "a firmware holds no pages"
	fi
	assert_eq "A: no data segment under another key" 0 "$(stat "$A" dev_mkey_errors)"
	assert_eq "B: no data segment under another key" 0 "$(stat "$B" dev_mkey_errors peer)"
fi
teardown_pair
