#!/usr/bin/env bash
# A ConnectX device that requires a minimum TX inline mode (the device host's
# sim_min_inline=1: L2, as ConnectX-4 Lx reports in its caps): the driver reads the mode at
# bring-up (QUERY_HCA_CAP, else the NIC vport context), creates every SQ with it
# (sqc.min_wqe_inline_mode) and inlines the Ethernet header of every packet and XDP frame,
# as mlx5e does. The device refuses a WQE without it (an error CQE, dev_wqe_errors): before
# the driver honoured the mode, the SQs were not even created (ip link set up failed).
#   - test frames A -> B arrive byte for byte; a pktgen flood with tx_mpwqe on is all
#     delivered, through regular WQEs (a packet with inline headers does not fit the MPWQE
#     session: tx_mpwqe_pkts stays 0), with no WQE refused;
#   - XDP_TX on B (an XDP SQ) sends every frame back to A unchanged but for the MACs.
# MANA has no inline modes (skipped).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$(dirname "$0")/xdp.sh"
[ "$RSNIC_FAMILY" = mlx5 ] || skip "MANA has no minimum inline mode"
NF=100
COUNT=2000

xdp_tools_or_skip
setup_pair sim_min_inline=1
quiet_pair
mark_dmesg
MAC_A=$(mac "$A")
assert_eq "$A tx_mpwqe" on "$(priv_flag "$A" tx_mpwqe)"

snap s0a "$A"
snap s0b "$B" peer
cap_start plain "$B" peer --count "$NF" --timeout 60 --expect-dst "$MAC_B" --expect-src "$MAC_A"
send_frames "$A" "" --dst "$MAC_B" --count "$NF"
cap_wait plain
check_capture "A -> B with inline headers" "$NF"
pktgen_run "$A" "$COUNT" 10.10.0.2 "$MAC_B" 32 60
wait_for "A's and B's counters to settle" settled
assert_eq "B's device received what A sent" "$(delta s0a s1a tx_packets)" "$(delta s0b s1b dev_rx_packets)"
assert_eq "A's WQEs refused by the device" 0 "$(delta s0a s1a dev_wqe_errors)"
assert_eq "A's packets in MPWQE sessions" 0 "$(delta s0a s1a tx_mpwqe_pkts)"
echo "  A sent $(delta s0a s1a tx_packets) packets in $(delta s0a s1a dev_wqes) WQEs," \
	"$(delta s0a s1a dev_wqe_bytes) WQE bytes"

xdp_attach "$B" peer xdp_tx
snap x0a "$A"
snap x0b "$B" peer
cap_start tx "$A" "" --count "$NF" --timeout 60 --expect-dst "$MAC_A" --expect-src "$MAC_B"
send_frames "$A" "" --dst "$MAC_B" --count "$NF"
cap_wait tx
check_capture "[XDP_TX] back at A, MACs swapped" "$NF"
snap x1b "$B" peer
assert_eq "B's XDP SQ WQEs refused by the device" 0 "$(delta x0b x1b dev_wqe_errors)"
xdp_detach "$B" peer
no_kernel_reports
teardown_pair
