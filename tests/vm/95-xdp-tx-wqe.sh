#!/usr/bin/env bash
# The XDP SQs' WQEs on ConnectX: xdp_tx_mpwqe decides whether XDP_TX,
# ndo_xdp_xmit and AF_XDP zero-copy TX use Enhanced MPWQE (opcode 0x29), as mlx5e's flag.
#   - A device without enhanced multi-packet send WQEs (sim_mpwqe=0, as a ConnectX-4 Lx):
#     xdp_tx_mpwqe and skb_tx_mpwqe start off and are refused on (EOPNOTSUPP, the reason in
#     the log). XDP_TX on B (2000 test frames from A), a redirect on B to B itself
#     (ndo_xdp_xmit, 2000 frames) and AF_XDP zero-copy txonly on B (2000 frames) all go
#     out in regular send WQEs: every frame arrives at A byte for byte, in order; B's device
#     refused no WQE (dev_wqe_errors 0) and ran no MPWQE (dev_mpwqe_wqes 0), no XDP SQ fault
#     reopened the channels (ch_reopen 0), and the driver counted each frame on the SQ that
#     sent it (rx_xdp_tx_xmit, tx_xdp_xmit, tx_xsk_xmit) with no session (*_mpwqe 0).
#     Before the flag, the XDP SQs posted MPWQEs regardless: the device refused them and the
#     channels were reopened again and again (2 of 2000 XDP_TX frames came back).
#   - A device with enhanced MPWQE: the flags start on; with xdp_tx_mpwqe off, XDP_TX uses
#     regular WQEs (rx_xdp_tx_mpwqe 0, dev_mpwqe_wqes 0 on B), on again, MPWQE sessions
#     (as many as B's device ran: skb_tx_mpwqe is off meanwhile).
# MANA has no XDP SQs (XDP_TX and redirects go out as skbs on the regular SQ): skipped.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$(dirname "$0")/xdp.sh"
[ "$RSNIC_FAMILY" = mlx5 ] || skip "MANA has no XDP SQs (XDP_TX and redirects are skbs on the regular SQ)"

NF=${XDP_TEST_FRAMES:-2000}

xdp_pair sim_mpwqe=0
mark_dmesg
xdp_native_or_fail "$B" peer

# no_mpwqe WHAT SENT_COUNTER: B's device refused nothing, ran no MPWQE, no reopen; the SQ's
# counter took exactly NF frames, none in a session.
no_mpwqe() {
	local what=$1 c=$2 sess=$3
	assert_eq "[$what] B's device refused no WQE (dev_wqe_errors)" 0 "$(delta b0 b1 dev_wqe_errors)"
	assert_eq "[$what] B's device ran no MPWQE (dev_mpwqe_wqes)" 0 "$(delta b0 b1 dev_mpwqe_wqes)"
	assert_eq "[$what] B's channels reopened (ch_reopen)" 0 "$(delta b0 b1 ch_reopen)"
	assert_eq "[$what] B $c" "$NF" "$(delta b0 b1 "$c")"
	assert_eq "[$what] B $sess" 0 "$(delta b0 b1 "$sess")"
}

# XDP_TX on B: every frame back to A with the MACs swapped.
xdp_attach "$B" peer xdp_tx
snap b0 "$B" peer
frames_from_a a "[XDP_TX, regular WQEs] back at A" tx 120
snap b1 "$B" peer
no_mpwqe "XDP_TX, regular WQEs" rx_xdp_tx_xmit rx_xdp_tx_mpwqe
assert_eq "[XDP_TX, regular WQEs] B rx_xdp_tx_err + rx_xdp_tx_full" 0 \
	$(($(delta b0 b1 rx_xdp_tx_err) + $(delta b0 b1 rx_xdp_tx_full)))
xdp_detach "$B" peer

# A redirect on B to B itself: ndo_xdp_xmit on B's redirect SQ, MACs rewritten for A.
nsx peer "$XDPCTL" attach "$B" "$XDP_DIR/xdp_redirect.o" --redirect-dev "$B" \
	--dst-mac "$MAC_A" --src-mac "$MAC_B" >/dev/null || fail "attaching xdp_redirect to $B"
snap b0 "$B" peer
frames_from_a a "[redirect, regular WQEs] back at A" rd 120
snap b1 "$B" peer
no_mpwqe "redirect, regular WQEs" tx_xdp_xmit tx_xdp_mpwqe
assert_eq "[redirect, regular WQEs] B tx_xdp_err + tx_xdp_full" 0 \
	$(($(delta b0 b1 tx_xdp_err) + $(delta b0 b1 tx_xdp_full)))
xdp_detach "$B" peer

# AF_XDP zero-copy TX on B (its XSK queues exist while a program is attached, as mlx5e's).
xdp_attach "$B" peer xdp_pass
snap b0 "$B" peer
cap_start xsk "$A" "" --count "$NF" --timeout 120 --expect-dst "$MAC_A" --expect-src "$MAC_B"
xsk_tx peer -i "$B" -z -n "$NF" --dst-mac "$MAC_A" -s 60:1514 --seq0 0 -d 90 --rate "$XSK_RATE"
assert_eq "[AF_XDP TX, regular WQEs] bound in zero-copy mode" zerocopy "$(kv bind "$XT")"
assert_eq "[AF_XDP TX, regular WQEs] frames txonly sent and completed" "$NF" "$(kv packets "$XT")"
cap_wait xsk
check_capture "[AF_XDP TX, regular WQEs] at A" "$NF"
snap b1 "$B" peer
no_mpwqe "AF_XDP TX, regular WQEs" tx_xsk_xmit tx_xsk_mpwqe
assert_eq "[AF_XDP TX, regular WQEs] B tx_xsk_err" 0 "$(delta b0 b1 tx_xsk_err)"
xdp_detach "$B" peer
for f in xdp_tx_mpwqe skb_tx_mpwqe; do
	assert_eq "$B $f at load (no enhanced MPWQE)" off "$(priv_flag "$B" "$f" peer)"
	pflag_refused "$B" "$f" "enhanced MPWQE" "the device has no enhanced multi-packet send WQE" peer
done
no_kernel_reports
dmesg_since_mark | grep -q "XDP SQ fault" && fail "an XDP SQ faulted: $(dmesg_since_mark | grep 'XDP SQ fault' | head -n1)"
teardown_pair

# A device with enhanced MPWQE: xdp_tx_mpwqe off and on for XDP_TX.
setup_pair
quiet_pair
mark_dmesg
for f in xdp_tx_mpwqe skb_tx_mpwqe; do
	assert_eq "$B $f at load (enhanced MPWQE)" on "$(priv_flag "$B" "$f" peer)"
done
# B's stack sends in regular WQEs: the device's MPWQEs are then XDP_TX's alone.
nsx peer ethtool --set-priv-flags "$B" skb_tx_mpwqe off
xdp_attach "$B" peer xdp_tx
for mode in off on; do
	nsx peer ethtool --set-priv-flags "$B" xdp_tx_mpwqe "$mode"
	assert_eq "$B xdp_tx_mpwqe" "$mode" "$(priv_flag "$B" xdp_tx_mpwqe peer)"
	wait_for "carrier on $A" eval '[ "$(carrier "$A")" = 1 ]'
	snap b0 "$B" peer
	frames_from_a a "[XDP_TX, xdp_tx_mpwqe $mode] back at A" "m$mode" 120
	snap b1 "$B" peer
	sessions=$(delta b0 b1 rx_xdp_tx_mpwqe)
	echo "  [xdp_tx_mpwqe $mode] $NF frames: $sessions MPWQE sessions," \
		"B's device ran $(delta b0 b1 dev_mpwqe_wqes) MPWQEs, $(delta b0 b1 dev_wqes) WQEs"
	assert_eq "[xdp_tx_mpwqe $mode] B rx_xdp_tx_xmit" "$NF" "$(delta b0 b1 rx_xdp_tx_xmit)"
	if [ "$mode" = off ]; then
		assert_eq "[xdp_tx_mpwqe off] MPWQE sessions" 0 "$sessions"
		assert_eq "[xdp_tx_mpwqe off] B's device ran no MPWQE" 0 "$(delta b0 b1 dev_mpwqe_wqes)"
	else
		[ "$sessions" -gt 0 ] || fail "[xdp_tx_mpwqe on] no MPWQE session"
		assert_eq "[xdp_tx_mpwqe on] B's device ran the sessions" "$sessions" "$(delta b0 b1 dev_mpwqe_wqes)"
	fi
done
xdp_detach "$B" peer
no_kernel_reports
teardown_pair
