#!/usr/bin/env bash
# A ConnectX device that requires a minimum TX inline mode (the device host's
# sim_min_inline=1: L2, as ConnectX-4 Lx reports in its caps): the driver reads the mode at
# bring-up (QUERY_HCA_CAP, else the NIC vport context), creates every SQ with it
# (sqc.min_wqe_inline_mode) and inlines the Ethernet header of every packet and XDP frame,
# as mlx5e does. The device refuses a WQE without it (an error CQE, dev_wqe_errors), and an
# MPWQE with a packet sent by address (its shared eth seg inlines nothing): with skb_tx_mpwqe
# on, the driver puts a packet of at most 252 bytes into MPWQE sessions inlined whole, as
# DPDK's eMPW inline does, and sends a longer one in a regular WQE with its headers inline.
#   - test frames A -> B arrive byte for byte; a pktgen flood of 60-byte frames is all
#     delivered, every packet in an MPWQE session and inlined (tx_mpwqe_pkts =
#     tx_mpwqe_inlnw = the device's dev_mpwqe_pkts), with no WQE refused;
#   - 1000-byte pings both ways (regular WQEs with inline headers) get their replies;
#   - XDP_TX on B (an XDP SQ) sends every frame back to A unchanged but for the MACs.
# MANA has no inline modes (skipped).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$(dirname "$0")/xdp.sh"
[ "$RSNIC_FAMILY" = mlx5 ] || skip "MANA has no minimum inline mode"
xdp_pair sim_min_inline=1
NF=100
COUNT=2000
mark_dmesg
assert_eq "$A skb_tx_mpwqe" on "$(priv_flag "$A" skb_tx_mpwqe)"

snap s0a "$A"
snap s0b "$B" peer
frames_from_a b "A -> B with inline headers" plain
pktgen_run "$A" "$COUNT" 10.10.0.2 "$MAC_B" 32 60
wait_for "A's and B's counters to settle" settled
assert_eq "B's device received what A sent" "$(delta s0a s1a tx_packets)" "$(delta s0b s1b dev_rx_packets)"
assert_eq "A's WQEs refused by the device" 0 "$(delta s0a s1a dev_wqe_errors)"
mp=$(delta s0a s1a tx_mpwqe_pkts)
[ "$mp" -ge "$COUNT" ] || fail "A's packets in MPWQE sessions: $mp, fewer than the $COUNT of pktgen"
assert_eq "A's MPWQE packets inlined whole" "$mp" "$(delta s0a s1a tx_mpwqe_inlnw)"
assert_eq "MPWQE packets A's device sent" "$mp" "$(delta s0a s1a dev_mpwqe_pkts)"
echo "  A sent $(delta s0a s1a tx_packets) packets in $(delta s0a s1a dev_wqes) WQEs," \
	"$(delta s0a s1a dev_wqe_bytes) WQE bytes"

ping -c 3 -i 0.2 -W 2 -s 1000 10.10.0.2 >/dev/null || fail "1000-byte ping A -> B"
ip netns exec peer ping -c 3 -i 0.2 -W 2 -s 1000 10.10.0.1 >/dev/null ||
	fail "1000-byte ping B -> A"
snap s2a "$A"
assert_eq "A's WQEs refused by the device after the pings" 0 "$(delta s1a s2a dev_wqe_errors)"
echo "  1000-byte pings both ways: ok"

xdp_attach "$B" peer xdp_tx
snap x0a "$A"
snap x0b "$B" peer
frames_from_a a "[XDP_TX] back at A, MACs swapped" tx
snap x1b "$B" peer
assert_eq "B's XDP SQ WQEs refused by the device" 0 "$(delta x0b x1b dev_wqe_errors)"
xdp_detach "$B" peer
no_kernel_reports
teardown_pair
