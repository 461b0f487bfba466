#!/usr/bin/env bash
# Self-test of rsnic's XDP test tooling on veth pairs (native XDP on veth works, and AF_XDP
# in copy mode), so that a failure of the rsnic XDP tests (tests/vm/90-92) points at the
# driver, not at the tools. Run it in the test VM after `make module xdp-tools`:
#
#   scripts/vm-run.sh tests/xdp/veth-selftest.sh
#
# Pairs a0-a1 and b0-b1, no addresses, no IPv6. Each program of tests/xdp/progs on a1 with
# test frames from a0, checked byte for byte where they end up; rsnic-xdp's attach,
# replace, query, count and detach; redirect a1 -> b0 -> b1 with bpf_redirect and a
# devmap; rsnic-xsk rxdrop (verified), txonly and l2fwd in copy mode, with need_wakeup on
# and off; a refused zero-copy bind. veth counts XDP_TX and redirected frames that arrive
# at a device without a program as errors, so a0 and b1 run xdp_pass.
set -euo pipefail
RSNIC_ROOT=${RSNIC_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export RSNIC_ROOT
. "$RSNIC_ROOT/tests/vm/lib.sh"
. "$RSNIC_ROOT/tests/vm/traffic.sh"
. "$RSNIC_ROOT/tests/vm/xdp.sh"

NF=${XDP_TEST_FRAMES:-300}
N=${XSK_COUNT:-5000}
xdp_tools_or_fail
ip link add a0 type veth peer name a1
ip link add b0 type veth peer name b1
XDP_LINKS="a0 b0"
declare -A MAC
for p in a0 a1 b0 b1; do
	sysctl -qw "net.ipv6.conf.$p.disable_ipv6=1"
	ip link set "$p" up
	MAC[$p]=$(mac "$p")
done
mark_dmesg
t0=$(date +%s%N)
echo "  a1 offers: $(xdp_features a1) (rsnic-xdp features: $((($(date +%s%N) - t0) / 1000000)) ms)"
has_xdp_feature "$(xdp_features a1)" basic || fail "veth a1 does not advertise basic XDP"
xdp_native_or_fail a1
"$XDPCTL" attach a0 "$XDP_DIR/xdp_pass.o" >/dev/null
"$XDPCTL" attach b1 "$XDP_DIR/xdp_pass.o" >/dev/null
vstat() { # IFACE COUNTER: a veth counter of queue 0
	ethtool -S "$1" | awk -v k="rx_queue_0_$2:" '$1 == k { print $2 }'
}

seq0=0
for act in drop aborted pass pass_adjust tx; do
	xdp_attach a1 "" "xdp_$act"
	q=$("$XDPCTL" query a1)
	assert_eq "query after attaching xdp_$act" "xdp_$act" "$(kv prog "$q")"
	args=(--dst "${MAC[a1]}" --count "$NF" --seq0 "$seq0")
	case $act in
	drop | aborted) cap_start c a1 "" --count 1 --timeout 3 ;;
	pass) cap_start c a1 "" --count "$NF" --seq0 "$seq0" --expect-dst "${MAC[a1]}" --expect-src "${MAC[a0]}" ;;
	pass_adjust)
		cap_start c a1 "" --count "$NF" --seq0 "$seq0" --expect-dst "${MAC[a1]}" --expect-src "${MAC[a0]}"
		args+=(--encap)
		;;
	tx) cap_start c a0 "" --count "$NF" --seq0 "$seq0" --expect-dst "${MAC[a0]}" --expect-src "${MAC[a1]}" ;;
	esac
	d0=$(vstat a1 xdp_drops)
	send_frames a0 "" "${args[@]}"
	cap_wait c
	wait_for "xdp_$act to see $NF frames" eval '[ "$(prog_count a1 "" packets)" = "$NF" ]'
	assert_eq "[$act] frames xdp_$act acted on" "$NF" "$(prog_count a1 "" acted)"
	case $act in
	drop | aborted)
		assert_eq "[$act] test frames the stack saw" 0 "$(kv frames "$CAP")"
		assert_eq "[$act] veth xdp_drops" "$NF" $(($(vstat a1 xdp_drops) - d0))
		;;
	pass) check_capture "[pass] at a1" "$NF" ;;
	pass_adjust) check_capture "[pass_adjust] inner frames at a1" "$NF" ;;
	tx) check_capture "[tx] back at a0, MACs swapped" "$NF" ;;
	esac
	seq0=$((seq0 + NF))
	[ "$act" = tx ] || xdp_detach a1 ""
done
# An atomic replace, and a replace that finds another program than expected refused.
"$XDPCTL" attach a1 "$XDP_DIR/xdp_pass.o" --replace | grep -q replacing || fail "replace"
assert_eq "program after --replace" xdp_pass "$(kv prog "$("$XDPCTL" query a1)")"
if "$XDPCTL" attach a1 "$XDP_DIR/xdp_drop.o" 2>/dev/null; then fail "attach over a program succeeded"; fi
"$XDPCTL" detach a1 >/dev/null
assert_eq "query after detach" mode=none "$("$XDPCTL" query a1)"

# Redirect a1 -> b0 -> b1, MACs rewritten for b1.
for how in plain devmap; do
	extra=()
	[ "$how" = plain ] || extra=(--devmap --replace)
	"$XDPCTL" attach a1 "$XDP_DIR/xdp_redirect.o" --redirect-dev b0 "${extra[@]}" \
		--dst-mac "${MAC[b1]}" --src-mac "${MAC[b0]}" >/dev/null
	x0=$(ethtool -S b0 | awk '$1 == "tx_queue_0_xdp_xmit:" { print $2 }')
	a0=$(prog_count a1 "" acted)
	cap_start r b1 "" --count "$NF" --seq0 "$seq0" --expect-dst "${MAC[b1]}" --expect-src "${MAC[b0]}"
	send_frames a0 "" --dst "${MAC[a1]}" --count "$NF" --seq0 "$seq0"
	cap_wait r
	check_capture "[redirect $how] at b1" "$NF"
	assert_eq "[redirect $how] frames redirected" "$NF" $(($(prog_count a1 "" acted) - a0))
	assert_eq "[redirect $how] b0 tx_queue_0_xdp_xmit" "$NF" \
		$(($(ethtool -S b0 | awk '$1 == "tx_queue_0_xdp_xmit:" { print $2 }') - x0))
	seq0=$((seq0 + NF))
done
"$XDPCTL" detach a1 >/dev/null

# AF_XDP, copy mode: txonly a0 -> rxdrop a1 (its own program, then one attached with ip).
for wake in on off; do
	w=()
	[ "$wake" = on ] || w=(--no-need-wakeup)
	rm -f /tmp/xsk.ready
	"$XSK" rxdrop -i a1 -c -n "$N" -d 60 --verify --expect-dst "${MAC[a1]}" \
		--expect-src "${MAC[a0]}" --ready-file /tmp/xsk.ready "${w[@]}" >/tmp/xsk.rx &
	rx=$!
	wait_for "rxdrop on a1" test -e /tmp/xsk.ready
	xt=$("$XSK" txonly -i a0 -c -n "$N" --dst-mac "${MAC[a1]}" -s 60:1514 --rate "$XSK_RATE" "${w[@]}")
	wait "$rx" || fail "rxdrop failed"
	xr=$(tail -n1 /tmp/xsk.rx)
	drops=$(($(kv rx_dropped "$xr") + $(kv rx_ring_full "$xr")))
	echo "  [xsk need_wakeup $wake] txonly: $(kv packets "$xt") frames, $(kv pps "$xt") pps;" \
		"rxdrop: $(kv frames "$xr") frames, $(kv pps "$xr") pps, bind $(kv bind "$xr"), socket drops $drops"
	assert_eq "[xsk $wake] txonly sent" "$N" "$(kv packets "$xt")"
	assert_eq "[xsk $wake] rxdrop frames + socket drops" "$N" $(($(kv frames "$xr") + drops))
	assert_eq "[xsk $wake] mismatches" 0 "$(kv mismatches "$xr")"
	assert_eq "[xsk $wake] gaps = socket drops" "$drops" "$(kv gaps "$xr")"
	assert_eq "[xsk $wake] bind" copy "$(kv bind "$xr")"
	assert_eq "[xsk $wake] rxdrop detached its program" mode=none "$("$XDPCTL" query a1)"
done
# l2fwd on a1 with the program attached by ip link; the frames come back to a0.
xdp_attach a1 "" xdp_xsk
cap_start l a0 "" --count "$NF" --expect-dst "${MAC[a0]}" --expect-src "${MAC[a1]}"
rm -f /tmp/xsk.ready
"$XSK" l2fwd -i a1 -c -n "$NF" -d 60 --verify --ready-file /tmp/xsk.ready >/tmp/xsk.fwd &
fwd=$!
wait_for "l2fwd on a1" test -e /tmp/xsk.ready
"$XSK" txonly -i a0 -c -n "$NF" --dst-mac "${MAC[a1]}" >/dev/null
wait "$fwd" || fail "l2fwd failed"
cap_wait l
check_capture "[l2fwd] back at a0, MACs swapped" "$NF"
assert_eq "[l2fwd] frames the attached program redirected" "$NF" "$(prog_count a1 "" acted)"
assert_eq "[l2fwd] ip's program still attached" xdp_xsk "$(kv prog "$("$XDPCTL" query a1)")"
xdp_detach a1 ""
# Zero-copy: veth has none.
rc=0
"$XSK" rxdrop -i a1 -z -n 1 -d 1 >/dev/null 2>/tmp/zc.err || rc=$?
assert_eq "zero-copy bind on veth refused (exit 3)" 3 "$rc"
grep -q 'XDP_ZEROCOPY refused: Operation not supported' /tmp/zc.err || fail "zc message: $(cat /tmp/zc.err)"
echo "  $(cat /tmp/zc.err)"
no_kernel_reports
echo "veth selftest: all checks passed"
