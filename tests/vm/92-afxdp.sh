#!/usr/bin/env bash
# AF_XDP on rsnic ports with native XDP (ip link ... xdpdrv obj xdp_xsk.o on B, namespace
# "peer", which has one channel so that every frame reaches the socket's queue): txonly on
# A -> rxdrop on B in copy mode, need_wakeup on and off, and A -> l2fwd on B -> A (frames
# back with the MAC addresses swapped); every received frame checked byte for byte against
# the test frame rebuilt from its sequence number, each one received intact or counted as
# dropped by the socket. B's counters: its device delivered = rx_xdp_redirect (to the
# socket) + rx_xdp_drop (frames the socket had no room for), the stack got none, the
# program saw every frame. Zero-copy (rxdrop, l2fwd, need_wakeup on and off; txonly from
# A): every rsnic port advertises xsk-zerocopy, on both families, and the test fails if
# one does not. Copy mode over generic XDP is test 93.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$(dirname "$0")/xdp.sh"
# On the debug kernel: ConnectX only (MANA's AF_XDP is copy mode, whose driver side is the
# XDP redirect path that 90-xdp-actions and the ConnectX pass exercise there).
one_family_on_debug

N=${XSK_COUNT:-$([ "$debug" = 1 ] && echo 500 || echo 5000)}
NL=${XSK_L2FWD_COUNT:-$([ "$debug" = 1 ] && echo 250 || echo 2000)}

xdp_pair
ip netns exec peer ethtool -L "$B" combined 1
wait_for "carrier on $A" eval '[ "$(carrier "$A")" = 1 ]'
# What A's stack sent while the links came up, before quiet_pair turned IPv6 off (a clean
# run on the debug kernel once found one frame that was not a test frame in the first
# socket), must be gone before a socket binds: B's device receives nothing for a second.
b_quiet() {
	local r0
	r0=$(stat "$B" dev_rx_packets peer)
	sleep 1
	[ "$(stat "$B" dev_rx_packets peer)" = "$r0" ]
}
wait_for "B's port quiet" b_quiet
mark_dmesg
xdp_native_or_fail "$B" peer
xdp_counters_or_fail "$B" peer
feats=$(xdp_features "$B" peer)
zc_check "$B" "$feats"
xdp_attach "$B" peer xdp_xsk
# What B's counters did when they did not settle: the nonzero deltas.
settle_diag() {
	echo "  B's counters that moved (n0b -> n1b):"
	deltas n0b n1b | awk '$2 != 0 { print "    " $1, $2 }'
}
# need_wakeup on and off in each mode. On the debug kernel zero-copy only, need_wakeup off
# (the pool's DMA mappings, the XSK queues' open and close, the wake-up path under KASAN and
# lockdep); copy mode's driver side is the XDP redirect of 90-xdp-actions and 91, which the
# normal kernel runs (each copy-mode run cost about 40 s there: the sanitizers slow every
# program start and BPF load).
copy_wake="on off"
zc_wake="on off"
[ "$debug" = 0 ] || { copy_wake=""; zc_wake=off; }
for wake in $copy_wake; do
	w=()
	[ "$wake" = on ] || w=(--no-need-wakeup)
	what="copy, native XDP, need_wakeup $wake"
	snap n0b "$B" peer
	p0=$(prog_count "$B" peer packets)
	rxdrop_run "$what" -N -c "${w[@]}" -- -c "${w[@]}"
	WAIT_DIAG=settle_diag wait_for "[$what] B's counters to settle" eval \
		'snap n1b "$B" peer; [ "$(delta n0b n1b "$C_DEV_RX")" = "$N" ]'
	drops=$(($(kv rx_dropped "$XR") + $(kv rx_ring_full "$XR")))
	assert_eq "[$what] B's device delivered" "$N" "$(delta n0b n1b "$C_DEV_RX")"
	assert_eq "[$what] B $XC_REDIRECT (to the socket)" "$(kv frames "$XR")" "$(delta n0b n1b "$XC_REDIRECT")"
	assert_eq "[$what] B $XC_DROP (the socket's drops)" "$drops" "$(delta n0b n1b "$XC_DROP")"
	assert_eq "[$what] B rx_packets" 0 "$(delta n0b n1b rx_packets)"
	assert_eq "[$what] frames the program saw" "$N" $(($(prog_count "$B" peer packets) - p0))
done
if [ "$debug" = 0 ]; then
	snap n0b "$B" peer
	l2fwd_run "l2fwd copy, native XDP" -N -c
	snap n1b "$B" peer
	assert_eq "[l2fwd copy, native XDP] B $XC_REDIRECT" "$(kv frames "$XR")" "$(delta n0b n1b "$XC_REDIRECT")"
	assert_eq "[l2fwd copy, native XDP] B rx_packets" 0 "$(delta n0b n1b rx_packets)"
fi

echo "  $B advertises zero-copy: zc_max_segs $(kv zc_max_segs "$feats")"
for wake in $zc_wake; do
	w=()
	[ "$wake" = on ] || w=(--no-need-wakeup)
	rxdrop_run "zero-copy rxdrop, need_wakeup $wake" -N -z "${w[@]}" -- -c
	assert_eq "zero-copy rxdrop bound in zero-copy mode" zerocopy "$(kv bind "$XR")"
done
l2fwd_run "l2fwd zero-copy" -N -z
assert_eq "zero-copy l2fwd bound in zero-copy mode" zerocopy "$(kv bind "$XR")"
zc_check "$A" "$(xdp_features "$A")"
# A's XSK queues exist only while a program is attached to A (as mlx5e's: its
# ndo_xsk_wakeup answers ENETDOWN otherwise), whatever the program does.
xdp_attach "$A" "" xdp_pass
rxdrop_run "zero-copy txonly on A" -N -c -- -z
assert_eq "zero-copy txonly bound in zero-copy mode" zerocopy "$(kv bind "$XT")"
xdp_detach "$A" ""
if [ "$RSNIC_FAMILY" = mana ]; then
	# Every completion event named one of the channel's CQs, the XSK SQ's and RQ's
	# included (the EQE CQ-id check; 68-mana-faults injects a corrupt one).
	assert_eq "zero-copy: corrupt EQEs on A and B" 0 \
		$(($(stat "$A" eqe_bad_cq) + $(stat "$B" eqe_bad_cq peer)))
fi
xdp_detach "$B" peer
no_kernel_reports
teardown_pair
