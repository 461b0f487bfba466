#!/usr/bin/env bash
# XDP_REDIRECT into and out of rsnic ports. rsnic loads with four ports: P0-P1 and P2-P3
# are the two wired pairs. Test frames (checked byte for byte at the far end) and a pktgen
# flood:
#   rsnic -> rsnic: XDP on P1 redirects to P2's egress (bpf_redirect, then through a devmap),
#     rewriting the MAC addresses for P3: P1 counts every frame as redirected and passes
#     none to its stack, P2 sends them with ndo_xdp_xmit (tx_xdp_xmit; a frame it cannot
#     send is counted, never lost silently), P3 receives each one intact;
#   veth -> rsnic: XDP on a veth redirects to P2: the same at P2 and P3 for frames that
#     were never an rsnic buffer;
#   rsnic -> veth: XDP on P1 redirects to a veth, whose peer receives each frame intact.
# Skips ("no XDP support") while rsnic refuses native XDP with EOPNOTSUPP.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$(dirname "$0")/xdp.sh"

COUNT=${XDP_PKTGEN_COUNT:-$([ "$debug" = 1 ] && echo 2000 || echo 10000)}
NF=${XDP_TEST_FRAMES:-300}

xdp_tools_or_fail
load_rsnic num_ports=4
mapfile -t P < <(rsnic_ifaces)
assert_eq "rsnic ports" 4 "${#P[@]}"
ip link add vx type veth peer name vy
XDP_LINKS=vx
# No addresses and no IPv6: the only frames are the test's.
for p in "${P[@]}" vx vy; do
	sysctl -qw "net.ipv6.conf.$p.disable_ipv6=1"
	ip link set "$p" up
done
for p in "${P[@]}"; do wait_for "carrier on $p" eval '[ "$(carrier "$p")" = 1 ]'; done
mark_dmesg
xdp_native_or_fail "${P[1]}"
for p in "${P[@]}"; do xdp_counters_or_fail "$p"; done
declare -A MAC
for p in "${P[@]}" vx vy; do MAC[$p]=$(mac "$p"); done
P0=${P[0]} P1=${P[1]} P2=${P[2]} P3=${P[3]}

# P2 must offer ndo_xdp_xmit; a driver may offer it only while a program is attached.
feats=$(xdp_features "$P2")
if ! has_xdp_feature "$feats" ndo-xmit; then
	echo "  $P2 offers no ndo-xmit without a program ($feats): attaching xdp_pass to it"
	xdp_attach "$P2" "" xdp_pass
	feats=$(xdp_features "$P2")
	has_xdp_feature "$feats" ndo-xmit || fail "$P2 does not offer ndo_xdp_xmit ($feats)"
fi
echo "  $P2 offers: $feats"

snap_all() { # NAME: snapshots NAME.<port> of the four rsnic ports
	local p
	for p in "${P[@]}"; do snap "$1.$p" "$p"; done
}
# Per port, the deltas between snapshots r0 and r1 (taken by redirect_settled).
for p in "${P[@]}"; do declare -A "D_$p"; done
d() { # PORT COUNTER
	local -n _d=D_$1
	echo "${_d[$2]:-0}"
}
dmap_all() {
	local p
	snap_all r1
	for p in "${P[@]}"; do dmap "D_$p" "r0.$p" "r1.$p"; done
}

# redirect_settled rsnic|veth: P3 received all P2's device sent, P2's device sent all that
# ndo_xdp_xmit took, and (rsnic: P1 is the redirecting port) P1's device got all P0 sent
# and P1 accounted for each.
redirect_settled() {
	dmap_all
	local -n _0=D_$P0 _1=D_$P1 _2=D_$P2 _3=D_$P3
	[ "${_3[$C_DEV_RX]}" = "${_2[$C_DEV_TX]}" ] && [ "${_2[$C_DEV_TX]}" = "${_2[$XC_XMIT]:-0}" ] ||
		return 1
	[ "$1" = rsnic ] || return 0
	[ "${_1[$C_DEV_RX]}" = "${_0[$C_DEV_TX]}" ] &&
		[ "${_1[$C_DEV_RX]}" = $((_1[rx_packets] + _1[$XC_REDIRECT] + _1[$XC_DROP])) ]
}

# xmit_checks WHAT REDIRECTED: P2 sent (tx_xdp_xmit) what was redirected to it, or counted
# what it could not send (exact when nothing was lost), and P3 received what P2 sent.
xmit_checks() {
	local what=$1 red=$2 xmit lost c
	xmit=$(d "$P2" "$XC_XMIT")
	lost=0
	for c in $XC_XMIT_LOST; do lost=$((lost + $(d "$P2" "$c"))); done
	echo "  [$what] redirected $red, $P2 $XC_XMIT $xmit (lost, counted: $lost)," \
		"$P2's device sent $(d "$P2" "$C_DEV_TX"), $P3's device received $(d "$P3" "$C_DEV_RX")"
	if [ "$xmit" != "$red" ]; then
		[ "$xmit" -lt "$red" ] || fail "[$what] $P2 sent $xmit frames of $red redirected to it"
		[ "$lost" -gt 0 ] || fail "[$what] $P2 sent $xmit of $red redirected frames and counted no loss"
	fi
	assert_eq "[$what] $P3 received what $P2 sent with ndo_xdp_xmit" "$xmit" "$(d "$P3" "$C_DEV_RX")"
}

# rx_checks WHAT SENT: P1's device got SENT frames, all redirected, none to the stack.
rx_checks() {
	local what=$1 sent=$2
	assert_eq "[$what] $P1's device delivered" "$sent" "$(d "$P1" "$C_DEV_RX")"
	assert_eq "[$what] $P1 $XC_REDIRECT" "$sent" "$(d "$P1" "$XC_REDIRECT")"
	assert_eq "[$what] $P1 $XC_DROP" 0 "$(d "$P1" "$XC_DROP")"
	assert_eq "[$what] $P1 rx_packets" 0 "$(d "$P1" rx_packets)"
}

# redirected_frames NAME SENDER VIA AT SRC_IF: NF test frames, numbered on from seq0 (which
# this advances), sent from SENDER to VIA's MAC address and captured as NAME at AT, where
# they must arrive from SRC_IF's MAC address to AT's (as the redirecting program rewrote
# them); returns when the capture has ended (CAP: its result).
seq0=0
redirected_frames() {
	local name=$1 sender=$2 via=$3 at=$4 src_if=$5
	cap_start "$name" "$at" "" --count "$NF" --seq0 "$seq0" --timeout 30 \
		--expect-dst "${MAC[$at]}" --expect-src "${MAC[$src_if]}"
	send_frames "$sender" "" --dst "${MAC[$via]}" --count "$NF" --seq0 "$seq0"
	cap_wait "$name"
	seq0=$((seq0 + NF))
}

# rsnic -> rsnic, with bpf_redirect and then with a devmap.
for how in bpf_redirect devmap; do
	extra=()
	[ "$how" = bpf_redirect ] || extra=(--devmap --replace)
	"$XDPCTL" attach "$P1" "$XDP_DIR/xdp_redirect.o" --redirect-dev "$P2" "${extra[@]}" \
		--dst-mac "${MAC[$P3]}" --src-mac "${MAC[$P2]}"
	what="$P1 -> $P2 ($how) frames"
	a0=$(prog_count "$P1" "" acted)
	snap_all r0
	redirected_frames rr "$P0" "$P1" "$P3" "$P2"
	wait_for "[$what] counters to settle" redirect_settled rsnic
	check_capture "[$what] at $P3" "$NF"
	rx_checks "$what" "$NF"
	assert_eq "[$what] frames the program redirected" "$NF" $(($(prog_count "$P1" "" acted) - a0))
	xmit_checks "$what" "$NF"
	assert_eq "[$what] nothing lost" "$NF" "$(d "$P2" "$XC_XMIT")"
done
# The flood (devmap).
what="$P1 -> $P2 (devmap) flood"
snap_all r0
pktgen_run "$P0" "$COUNT" 10.10.0.2 "${MAC[$P1]}" 32 60
wait_for "[$what] counters to settle" redirect_settled rsnic
rx_checks "$what" "$PG_SENT"
xmit_checks "$what" "$PG_SENT"
echo "  [$what] pktgen $PG_PPS packets/s (emulated VM, indicative)"
for c in $XC_MORE; do echo "  [$what] $P2 $c $(d "$P2" "$c")"; done

# veth -> rsnic: frames from vx arrive at vy, whose XDP program redirects them to P2.
xdp_veth_sent() { # the frames vy's program saw since a0
	[ $(($(prog_count vy "" packets) - a0)) = "$1" ]
}
"$XDPCTL" attach vy "$XDP_DIR/xdp_redirect.o" --redirect-dev "$P2" \
	--dst-mac "${MAC[$P3]}" --src-mac "${MAC[$P2]}"
what="vy -> $P2 frames"
prog_counts vy ""
a0=$PC_PACKETS r0=$PC_ACTED
snap_all r0
redirected_frames vr vx vy "$P3" "$P2"
wait_for "[$what] vy's program to see every frame" xdp_veth_sent "$NF"
wait_for "[$what] counters to settle" redirect_settled veth
check_capture "[$what] at $P3" "$NF"
assert_eq "[$what] frames vy's program redirected" "$NF" "$(($(prog_count vy "" acted) - r0))"
xmit_checks "$what" "$NF"
assert_eq "[$what] nothing lost" "$NF" "$(d "$P2" "$XC_XMIT")"
what="vy -> $P2 flood"
# veth drops what does not fit vy's ring (6.12): what vy's program redirected counts.
r0=$(prog_count vy "" acted)
snap_all r0
pktgen_run vx "$COUNT" 10.10.0.2 "${MAC[vy]}" 1 60 # veth refuses burst > 1
veth_flood_settled() { # vy's program is done and P2, P3 settled
	local n
	n=$(prog_count vy "" acted)
	sleep 0.2
	[ "$n" = "$(prog_count vy "" acted)" ] && redirect_settled veth
}
wait_for "[$what] counters to settle" veth_flood_settled
red=$(($(prog_count vy "" acted) - r0))
echo "  [$what] pktgen sent $PG_SENT, vy's program redirected $red"
[ "$red" -gt 0 ] || fail "[$what] vy redirected nothing"
xmit_checks "$what" "$red"
echo "  [$what] pktgen $PG_PPS packets/s (emulated VM, indicative)"
"$XDPCTL" detach vy >/dev/null

# rsnic -> veth: P1 redirects to vy, vx receives (a program on vx lets vy's
# ndo_xdp_xmit deliver to it).
"$XDPCTL" attach vx "$XDP_DIR/xdp_pass.o" >/dev/null
"$XDPCTL" attach "$P1" "$XDP_DIR/xdp_redirect.o" --replace --redirect-dev vy \
	--dst-mac "${MAC[vx]}" --src-mac "${MAC[vy]}"
what="$P1 -> vy frames"
a0=$(prog_count vx "" packets)
x0=$(ethtool -S vy | awk '$1 == "tx_queue_0_xdp_xmit:" { print $2 }')
snap_all r0
redirected_frames rv "$P0" "$P1" vx vy
wait_for "[$what] counters to settle" redirect_settled rsnic
check_capture "[$what] at vx" "$NF"
rx_checks "$what" "$NF"
assert_eq "[$what] frames vy sent with ndo_xdp_xmit" "$NF" \
	$(($(ethtool -S vy | awk '$1 == "tx_queue_0_xdp_xmit:" { print $2 }') - x0))
assert_eq "[$what] frames vx's program saw" "$NF" $(($(prog_count vx "" packets) - a0))

"$XDPCTL" detach "$P1" >/dev/null
"$XDPCTL" detach "$P2" >/dev/null
no_kernel_reports
ip link del vx
XDP_LINKS=""
unload_rsnic
