#!/usr/bin/env bash
# ConnectX completions: the TX completion threshold and RX CQE compression.
#
# TX (rsnic-datapath.rst, "TX completion threshold"): pktgen bursts of 64 through regular
# WQEs ring once per burst, yet A's SQ asks for a CQE at least every 32 packets (the device
# wrote at least sent/32 TX CQEs; only the rung WQE asked before).
#
# RX CQE compression (rsnic.rst, "rx_cqe_compress"): with the private flag on,
# B's RX CQs are created with basic CQE compression, the device writes runs of RX
# completions as a title CQE and mini CQE arrays, and B's driver expands them:
#   - test frames A -> B arrive byte for byte, off and on, and a pktgen flood is all
#     delivered; with the flag on the device wrote compression sessions, B's driver counted
#     the same sessions and CQEs (rx_cqe_compress_blks/pkts = dev_compress_sessions/
#     dev_compressed_cqes), and B's checksum verdicts are the same as with it off;
#   - the outbound figure: CQ slots (64-byte writes) the device wrote per received packet,
#     off and on;
#   - XDP_TX on B with the flag on: every frame comes back to A;
#   - a device without CQE compression in its capabilities (sim_cqe_compression=0) refuses
#     the flag with the reason in the log.
# MANA has no CQE compression (skipped).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$(dirname "$0")/xdp.sh"
[ "$RSNIC_FAMILY" = mlx5 ] || skip "MANA has no CQE compression"
xdp_pair
NF=100
COUNT=4000
mark_dmesg
# TX completion threshold: regular WQEs, bursts of 64.
ethtool --set-priv-flags "$A" skb_tx_mpwqe off
snap t0a "$A"
pktgen_run "$A" "$COUNT" 10.10.0.2 "$MAC_B" 64 60
snap t1a "$A"
cqes=$(delta t0a t1a dev_tx_cqes)
dbs=$(delta t0a t1a tx_doorbells)
echo "  [threshold] $PG_SENT packets in bursts of 64: $dbs doorbells, $cqes TX CQEs"
[ "$cqes" -ge $(((PG_SENT + 31) / 32)) ] ||
	fail "[threshold] $cqes TX CQEs for $PG_SENT packets: fewer than one per 32"
[ "$cqes" -gt "$dbs" ] || fail "[threshold] no CQE asked for between doorbells ($cqes CQEs, $dbs doorbells)"
ethtool --set-priv-flags "$A" skb_tx_mpwqe on

assert_eq "$B rx_cqe_compress at load" off "$(priv_flag "$B" rx_cqe_compress peer)"

for mode in off on; do
	nsx peer ethtool --set-priv-flags "$B" rx_cqe_compress "$mode"
	snap s0a "$A"
	snap s0b "$B" peer
	frames_from_a b "[$mode] A -> B" "c$mode"
	pktgen_run "$A" "$COUNT" 10.10.0.2 "$MAC_B" 32 60
	wait_for "[$mode] A's and B's counters to settle" settled
	rx=$(delta s0b s1b rx_packets)
	assert_eq "[$mode] B received what A sent" "$(delta s0a s1a tx_packets)" "$rx"
	blks=$(delta s0b s1b rx_cqe_compress_blks)
	pkts=$(delta s0b s1b rx_cqe_compress_pkts)
	assert_eq "[$mode] sessions B's driver expanded = sessions B's device wrote" \
		"$(delta s0b s1b dev_compress_sessions)" "$blks"
	assert_eq "[$mode] CQEs B's driver expanded = CQEs B's device compressed" \
		"$(delta s0b s1b dev_compressed_cqes)" "$pkts"
	if [ "$mode" = on ]; then
		[ "$blks" -gt 0 ] && [ "$pkts" -gt "$blks" ] ||
			fail "[on] no compression: $blks sessions, $pkts CQEs"
	else
		assert_eq "[off] compressed CQEs" 0 "$pkts"
	fi
	# Every RX CQE is a 64-byte slot write without compression; B transmits nothing here
	# but what its stack answers (counted in dev_tx_cqes).
	slots=$(($(delta s0b s1b dev_cq_slot_writes) - $(delta s0b s1b dev_tx_cqes)))
	eval "slots_$mode=$slots rx_$mode=$rx"
	eval "un_$mode=$(delta s0b s1b rx_csum_unnecessary) none_$mode=$(delta s0b s1b rx_csum_none)"
	out=$(delta s0b s1b dev_pcie_out_bytes)
	echo "  [$mode] $rx packets, $pkts in $blks sessions, $slots RX CQ slot writes" \
		"($(awk -v s="$slots" -v r="$rx" 'BEGIN { printf "%.3f", s / r }') per packet)," \
		"B's device wrote $(awk -v o="$out" -v r="$rx" 'BEGIN { printf "%.2f", o / r }') bytes per packet"
done
assert_eq "[off] RX CQ slot writes = packets" "$rx_off" "$slots_off"
[ "$slots_on" -lt "$rx_on" ] || fail "[on] $slots_on RX CQ slot writes for $rx_on packets"
# pktgen's and the test frames' checksum verdicts do not depend on the CQE format.
assert_eq "checksum verified, on = off" "$un_off" "$un_on"
assert_eq "no checksum verdict, on = off" "$none_off" "$none_on"

# XDP on top of compressed CQEs: XDP_TX on B bounces every frame back to A.
xdp_attach "$B" peer xdp_tx
frames_from_a a "[on, XDP_TX] back at A, MACs swapped" tx
xdp_detach "$B" peer
no_kernel_reports
teardown_pair

# A device without CQE compression: the flag is refused, with the reason in the log.
setup_pair sim_cqe_compression=0
mark_dmesg
pflag_refused "$A" rx_cqe_compress "CQE compression" "the device has no CQE compression"
teardown_pair
