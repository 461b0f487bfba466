#!/usr/bin/env bash
# AF_XDP on rsnic ports (rsnic-xsk), every received frame checked byte for byte against
# the test frame rebuilt from its sequence number; B (namespace "peer") has one channel so
# that every frame reaches the queue the socket is bound to.
#
# Copy mode over generic (skb) XDP, which needs nothing of the driver's XDP: txonly on A
# (rsnic's xmit through dev_direct_xmit) -> rxdrop on B, with need_wakeup on and off; A ->
# l2fwd on B -> A, where the frames come back with the MAC addresses swapped. Every frame
# is received intact or counted as dropped by the socket (and those show as the only
# sequence gaps). A zero-copy bind is refused with a message naming XDP_ZEROCOPY while B
# does not advertise xsk-zerocopy (ZC_EXPECTED=1 demands it).
#
# Then, with native XDP (ip link ... xdpdrv obj xdp_xsk.o), the same in copy mode with B's
# counters: B's device delivered = rx_xdp_redirect (to the socket) + rx_xdp_drop (frames
# the socket had no room for) and the stack got none; and in zero-copy mode when B
# advertises it. Skips those ("no XDP support") while rsnic refuses native XDP.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$(dirname "$0")/xdp.sh"

debug=$([ "${KERNEL_VARIANT:-normal}" = debug ] && echo 1 || echo 0)
N=${XSK_COUNT:-$([ "$debug" = 1 ] && echo 1000 || echo 5000)}
NL=${XSK_L2FWD_COUNT:-$([ "$debug" = 1 ] && echo 500 || echo 2000)}

xdp_tools_or_skip
setup_pair
quiet_pair
ip netns exec peer ethtool -L "$B" combined 1
wait_for "carrier on $A" eval '[ "$(carrier "$A")" = 1 ]'
mark_dmesg
MAC_A=$(mac "$A")

declare -A XSK_PIDS
# xsk_start NAME NETNS ARGS...: rsnic-xsk ARGS in the background, returns once its socket
# is bound and fed by its XDP program; xsk_wait NAME waits for it and sets XR to its result.
xsk_start() {
	local name=$1 ns=$2
	shift 2
	rm -f "/tmp/xsk.$name.ready"
	nsx "$ns" "$XSK" "$@" --ready-file "/tmp/xsk.$name.ready" >"/tmp/xsk.$name" 2>"/tmp/xsk.$name.err" &
	XSK_PIDS[$name]=$!
	for _ in $(seq 100); do
		[ -e "/tmp/xsk.$name.ready" ] && return 0
		kill -0 "${XSK_PIDS[$name]}" 2>/dev/null || break
		sleep 0.1
	done
	fail "rsnic-xsk $name did not start: $(cat "/tmp/xsk.$name.err")"
}
xsk_wait() {
	wait "${XSK_PIDS[$1]}" || fail "rsnic-xsk $1 failed: $(cat "/tmp/xsk.$1.err")"
	XR=$(grep '^rsnic-xsk:' "/tmp/xsk.$1" | tail -n1)
	[ -n "$XR" ] || fail "rsnic-xsk $1 printed no result: $(cat "/tmp/xsk.$1.err")"
}
# xsk_tx NETNS ARGS...: rsnic-xsk txonly in the foreground; sets XT.
xsk_tx() {
	local ns=$1
	shift
	XT=$(nsx "$ns" "$XSK" txonly "$@" 2>/tmp/xsk.tx.err | grep '^rsnic-xsk:') ||
		fail "rsnic-xsk txonly $*: $(cat /tmp/xsk.tx.err)"
}
summary() { # WHAT LINE
	echo "  [$1] $(kv bind "$2") bind, need_wakeup $(kv need_wakeup "$2"):" \
		"$(kv packets "$2") packets in $(kv seconds "$2") s ($(kv pps "$2") pps)," \
		"socket drops $(kv rx_dropped "$2") + ring full $(kv rx_ring_full "$2")"
}

# rx_checks WHAT SENT: the receiving socket's result XR accounts for all SENT frames: each
# arrived intact, in order, or was counted as dropped by the socket (at most 1 %).
rx_checks() {
	local what=$1 sent=$2 got drops
	got=$(kv frames "$XR")
	drops=$(($(kv rx_dropped "$XR") + $(kv rx_ring_full "$XR")))
	summary "$what, received" "$XR"
	assert_eq "[$what] frames received + dropped by the socket" "$sent" $((got + drops))
	assert_eq "[$what] mismatching frames" 0 "$(kv mismatches "$XR")"
	assert_eq "[$what] reordered frames" 0 "$(kv reordered "$XR")"
	assert_eq "[$what] sequence gaps = socket drops" "$drops" "$(kv gaps "$XR")"
	assert_eq "[$what] frames that are not test frames" 0 "$(kv foreign "$XR")"
	[ $((drops * 100)) -le "$sent" ] || fail "[$what] the socket dropped $drops of $sent frames"
}

# rxdrop_run WHAT XDPMODE RXARGS -- TXARGS: txonly on A (N frames) -> rxdrop on B.
rxdrop_run() {
	local what=$1 mode=$2 rx=() tx=()
	shift 2
	while [ "$1" != -- ]; do rx+=("$1"); shift; done
	shift
	tx=("$@")
	xsk_start rx peer rxdrop -i "$B" "$mode" -n "$N" -d 60 --verify \
		--expect-dst "$MAC_B" --expect-src "$MAC_A" "${rx[@]}"
	xsk_tx "" -i "$A" -n "$N" --dst-mac "$MAC_B" -s 60:1514 -d 60 "${tx[@]}"
	summary "$what, sent" "$XT"
	assert_eq "[$what] frames txonly sent" "$N" "$(kv packets "$XT")"
	xsk_wait rx
	rx_checks "$what" "$N"
}

# l2fwd_run WHAT XDPMODE ARGS...: txonly on A (NL frames) -> l2fwd on B -> capture on A.
l2fwd_run() {
	local what=$1 mode=$2 fwd
	shift 2
	cap_start l2 "$A" "" --count "$NL" --timeout 60 --expect-dst "$MAC_A" --expect-src "$MAC_B"
	xsk_start fwd peer l2fwd -i "$B" "$mode" -n "$NL" -d 60 --verify \
		--expect-dst "$MAC_B" --expect-src "$MAC_A" "$@"
	xsk_tx "" -i "$A" -n "$NL" --dst-mac "$MAC_B" -s 60:1514 -d 60 -c
	assert_eq "[$what] frames txonly sent" "$NL" "$(kv packets "$XT")"
	xsk_wait fwd
	rx_checks "$what" "$NL"
	fwd=$(kv packets "$XR")
	cap_wait l2
	check_capture "[$what] back at A, MACs swapped" "$fwd"
}

# Copy mode over generic XDP.
snap g0a "$A"
snap g0b "$B" peer
rxdrop_run "copy, skb XDP" -S -c -- -c
snap g1a "$A"
snap g1b "$B" peer
assert_eq "[copy, skb XDP] A's driver sent (tx_packets)" "$N" "$(delta g0a g1a tx_packets)"
assert_eq "[copy, skb XDP] B's device delivered" "$N" "$(delta g0b g1b "$C_DEV_RX")"
assert_eq "[copy, skb XDP] B's driver passed them on (rx_packets)" "$N" "$(delta g0b g1b rx_packets)"
rxdrop_run "copy, skb XDP, no need_wakeup" -S -c --no-need-wakeup -- -c --no-need-wakeup
l2fwd_run "l2fwd copy, skb XDP" -S -c

# Zero-copy: refused unless B advertises it (or ZC_EXPECTED=1 says it must).
feats=$(xdp_features "$B" peer)
echo "  $B offers: $feats"
zc=0
has_xdp_feature "$feats" xsk-zerocopy && zc=1
if [ "${ZC_EXPECTED:-0}" = 1 ] && [ "$zc" = 0 ]; then
	fail "ZC_EXPECTED=1 but $B does not advertise xsk-zerocopy ($feats)"
fi
if [ "$zc" = 0 ]; then
	rc=0
	ip netns exec peer "$XSK" rxdrop -i "$B" -z -n 1 -d 1 >/dev/null 2>/tmp/zc.err || rc=$?
	echo "  zero-copy bind on $B (not advertised): exit $rc: $(cat /tmp/zc.err)"
	assert_eq "zero-copy bind refused (rsnic-xsk exit 3)" 3 "$rc"
	grep -q 'XDP_ZEROCOPY refused' /tmp/zc.err || fail "the refusal does not name XDP_ZEROCOPY"
	# Without a mode flag the kernel falls back to copy mode.
	ip netns exec peer "$XSK" rxdrop -i "$B" -S -n 1 -d 0.5 >/tmp/zc.out 2>&1 ||
		fail "bind without a mode flag failed: $(cat /tmp/zc.out)"
	assert_eq "bind without a mode flag" copy "$(kv bind "$(grep '^rsnic-xsk:' /tmp/zc.out)")"
fi

# Native XDP.
xdp_native_or_skip "$B" peer
xdp_counters_or_fail "$B" peer
xdp_attach "$B" peer xdp_xsk
for wake in on off; do
	w=()
	[ "$wake" = on ] || w=(--no-need-wakeup)
	what="copy, native XDP, need_wakeup $wake"
	snap n0b "$B" peer
	p0=$(prog_count "$B" peer packets)
	rxdrop_run "$what" -N -c "${w[@]}" -- -c "${w[@]}"
	wait_for "[$what] B's counters to settle" eval \
		'snap n1b "$B" peer; [ "$(delta n0b n1b "$C_DEV_RX")" = "$N" ]'
	drops=$(($(kv rx_dropped "$XR") + $(kv rx_ring_full "$XR")))
	assert_eq "[$what] B's device delivered" "$N" "$(delta n0b n1b "$C_DEV_RX")"
	assert_eq "[$what] B $XC_REDIRECT (to the socket)" "$(kv frames "$XR")" "$(delta n0b n1b "$XC_REDIRECT")"
	assert_eq "[$what] B $XC_DROP (the socket's drops)" "$drops" "$(delta n0b n1b "$XC_DROP")"
	assert_eq "[$what] B rx_packets" 0 "$(delta n0b n1b rx_packets)"
	assert_eq "[$what] frames the program saw" "$N" $(($(prog_count "$B" peer packets) - p0))
done
snap n0b "$B" peer
l2fwd_run "l2fwd copy, native XDP" -N -c
snap n1b "$B" peer
assert_eq "[l2fwd copy, native XDP] B $XC_REDIRECT" "$(kv frames "$XR")" "$(delta n0b n1b "$XC_REDIRECT")"
assert_eq "[l2fwd copy, native XDP] B rx_packets" 0 "$(delta n0b n1b rx_packets)"

if [ "$zc" = 1 ]; then
	echo "  $B advertises zero-copy: zc_max_segs $(kv zc_max_segs "$feats")"
	for wake in on off; do
		w=()
		[ "$wake" = on ] || w=(--no-need-wakeup)
		rxdrop_run "zero-copy rxdrop, need_wakeup $wake" -N -z "${w[@]}" -- -c
		assert_eq "zero-copy rxdrop bound in zero-copy mode" zerocopy "$(kv bind "$XR")"
	done
	l2fwd_run "l2fwd zero-copy" -N -z
	assert_eq "zero-copy l2fwd bound in zero-copy mode" zerocopy "$(kv bind "$XR")"
	if has_xdp_feature "$(xdp_features "$A")" xsk-zerocopy; then
		rxdrop_run "zero-copy txonly on A" -N -c -- -z
		assert_eq "zero-copy txonly bound in zero-copy mode" zerocopy "$(kv bind "$XT")"
	fi
fi
xdp_detach "$B" peer
no_kernel_reports
teardown_pair
