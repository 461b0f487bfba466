# Helpers for rsnic's XDP VM tests (90-92): the XDP tools (built on the host by
# `make xdp-tools` into target/xdp/), the family's XDP counter names, the native-XDP check
# that skips a test until the driver has XDP, captures and counter balances. Source it
# after lib.sh and traffic.sh.
# shellcheck shell=bash

XDP_DIR=$RSNIC_ROOT/target/xdp
XDPCTL=$XDP_DIR/rsnic-xdp
XSK=$XDP_DIR/rsnic-xsk
FRAMES=$XDP_DIR/rsnic-frames

# The XDP counters of ethtool -S (sums over the queues) whose names differ by family:
#   XC_DROP       frames dropped by XDP: XDP_DROP, XDP_ABORTED, failed redirects
#   XC_ABORTED    of those, the XDP_ABORTED ones
#   XC_REDIRECT   frames an XDP program redirected (to another device or an AF_XDP socket)
#   XC_TX         frames XDP_TX sent back out of their port
#   XC_TX_LOST    XDP_TX frames the port could not send (a list, summed; empty: none)
#   XC_XMIT       frames the port sent for redirects from elsewhere (ndo_xdp_xmit)
#   XC_XMIT_LOST  frames ndo_xdp_xmit could not send (a list, summed; empty: none)
#   XC_MORE       more counters that must exist, printed with the figures
# The device's own counters (both families): C_DEV_RX frames the device delivered to the
# port's RX queues, C_DEV_TX frames it put on the wire.
XC_DROP=rx_xdp_drop XC_ABORTED=rx_xdp_aborted XC_REDIRECT=rx_xdp_redirect XC_XMIT=tx_xdp_xmit
C_DEV_RX=dev_rx_packets C_DEV_TX=dev_tx_packets
case $RSNIC_FAMILY in
mlx5)
	XC_TX=rx_xdp_tx_xmit XC_TX_LOST="rx_xdp_tx_full rx_xdp_tx_err"
	XC_XMIT_LOST="tx_xdp_full tx_xdp_err"
	XC_MORE="rx_xdp_tx_mpwqe rx_xdp_tx_inlnw rx_xdp_tx_cqe tx_xdp_mpwqe tx_xdp_inlnw tx_xdp_cqes"
	;;
mana)
	XC_TX=rx_xdp_tx XC_TX_LOST="" XC_XMIT_LOST="tx_xdp_full tx_xdp_err" XC_MORE=""
	;;
esac
XC_ALL="$XC_DROP $XC_ABORTED $XC_REDIRECT $XC_TX $XC_TX_LOST $XC_XMIT $XC_XMIT_LOST $XC_MORE"

# nsx NETNS COMMAND...: COMMAND in namespace NETNS ("" = this one).
nsx() {
	local ns=$1
	shift
	if [ -n "$ns" ]; then ip netns exec "$ns" "$@"; else "$@"; fi
}

# mac IFACE [NETNS]
mac() {
	nsx "${2:-}" cat "/sys/class/net/$1/address"
}

# xdp_tools_or_fail: the test needs the XDP tools, which set-up builds (make xdp-tools, a
# step of make vmtest); without them the set-up is broken and the test fails.
xdp_tools_or_fail() {
	local f
	[ ! -e "$XDP_DIR/MISSING" ] || fail "XDP tools not built: $(cat "$XDP_DIR/MISSING")"
	for f in "$XDPCTL" "$XSK" "$FRAMES" "$XDP_DIR"/xdp_{drop,pass,aborted,tx,pass_adjust,redirect,xsk}.o; do
		[ -e "$f" ] || fail "XDP tools not built: no $f (make xdp-tools)"
	done
}

# xdp_pair [ARGS...]: the pair most XDP tests start from: the XDP tools must be there
# (xdp_tools_or_fail), then setup_pair ARGS (insmod arguments) and quiet_pair; sets MAC_A
# too (quiet_pair sets MAC_B). Fails where those do.
xdp_pair() {
	xdp_tools_or_fail
	setup_pair "$@"
	quiet_pair
	read -r MAC_A <"/sys/class/net/$A/address"
}

# xdp_features IFACE [NETNS]: "xdp=F,... xsk=F,... zc_max_segs=N" (netlink dev-get).
xdp_features() {
	nsx "${2:-}" "$XDPCTL" features "$1"
}

# has_xdp_feature FEATURES FLAG: FLAG is among the xdp= flags of an xdp_features line.
has_xdp_feature() {
	local f
	f=$(sed -n 's/^xdp=\([^ ]*\).*/\1/p' <<<"$1")
	case ",$f," in *",$2,"*) return 0 ;; esac
	return 1
}

# xdp_native_or_fail IFACE [NETNS]: native XDP must attach on IFACE (ip link ... xdpdrv),
# and IFACE's xdp-features must say "basic": every rsnic port offers native XDP, on both
# families, so a refusal fails the test, with the reason.
xdp_native_or_fail() {
	local dev=$1 ns=${2:-} feats out
	feats=$(xdp_features "$dev" "$ns")
	echo "  $dev offers: $feats"
	out=$(nsx "$ns" ip link set dev "$dev" xdpdrv obj "$XDP_DIR/xdp_pass.o" sec xdp 2>&1) ||
		fail "native XDP on $dev refused: $(echo "$out" | head -n1) (xdp-features: $feats)"
	nsx "$ns" ip link set dev "$dev" xdpdrv off
	has_xdp_feature "$feats" basic ||
		fail "native XDP attached on $dev, but xdp-features lacks basic ($feats)"
}

# xdp_counters_or_fail IFACE [NETNS]: every XDP counter of the family is in ethtool -S
# (a missing one would read as 0 in the deltas and hide a wrong balance).
xdp_counters_or_fail() {
	local c all
	all=$(nsx "${2:-}" ethtool -S "$1")
	for c in $XC_ALL; do
		grep -q "^ *$c: " <<<"$all" || fail "$1: no counter $c in ethtool -S"
	done
}

# xdp_attach IFACE NETNS PROG: native XDP with ip link (as a user would), PROG a program of
# target/xdp without .o.
xdp_attach() {
	nsx "$2" ip link set dev "$1" xdpdrv obj "$XDP_DIR/$3.o" sec xdp ||
		fail "ip link set dev $1 xdpdrv obj $3.o failed"
}

xdp_detach() {
	nsx "$2" ip link set dev "$1" xdpdrv off || fail "detaching XDP from $1 failed"
}

# kv KEY LINE: the value of KEY=VALUE in a line of key=value fields (no process: they
# cost a tenth of a second each in the TCG VM).
kv() {
	local w
	for w in $2; do
		if [ "${w%%=*}" = "$1" ]; then
			echo "${w#*=}"
			return
		fi
	done
}

# prog_counts IFACE NETNS: the attached program's counters into PC_PACKETS, PC_ACTED.
prog_counts() {
	local line w
	line=$(nsx "$2" "$XDPCTL" count "$1") || fail "no program counters on $1"
	for w in $line; do
		case $w in
		packets=*) PC_PACKETS=${w#*=} ;;
		acted=*) PC_ACTED=${w#*=} ;;
		esac
	done
}

# prog_count IFACE NETNS KEY: one of them (packets, bytes or acted).
prog_count() {
	kv "$3" "$(nsx "$2" "$XDPCTL" count "$1")"
}

# dmap ARRAY S0 S1: ARRAY (associative) gets every counter's delta between snapshots S0 and
# S1 of traffic.sh's snap, in one awk.
dmap() {
	local -n _dm=$1
	local c v
	_dm=()
	while read -r c v; do _dm[$c]=$v; done < <(deltas "$2" "$3")
}

# dsum S0 S1 COUNTERS: the sum of the COUNTERS' deltas between snapshots S0 and S1.
dsum() {
	local c n=0
	for c in $3; do n=$((n + $(delta "$1" "$2" "$c"))); done
	echo "$n"
}

# cap_start NAME IFACE NETNS ARGS...: a capture of test frames on IFACE (rsnic-frames
# capture ARGS) in the background, ready when this returns; cap_wait NAME waits for it (up
# to 2 minutes: give the capture a --timeout) and sets CAP to its result line.
cap_start() {
	local name=$1 dev=$2 ns=$3
	shift 3
	rm -f "/tmp/cap.$name.ready" "/tmp/cap.$name.done"
	# Detached (a double fork): its exit must not signal this shell, since a signal cuts a
	# pktgen run short (pktgen's start write returns on a pending signal).
	( (
		nsx "$ns" "$FRAMES" capture "$dev" --ready-file "/tmp/cap.$name.ready" "$@" \
			>"/tmp/cap.$name" 2>&1
		echo $? >"/tmp/cap.$name.done"
	) & )
	wait_for "capture $name on $dev" test -e "/tmp/cap.$name.ready"
}
cap_wait() {
	local i=0
	while [ ! -e "/tmp/cap.$1.done" ]; do
		[ "$i" -lt 1200 ] || fail "capture $1 did not end"
		sleep 0.1
		i=$((i + 1))
	done
	[ "$(cat "/tmp/cap.$1.done")" = 0 ] || fail "capture $1: $(cat "/tmp/cap.$1")"
	CAP=$(tail -n1 "/tmp/cap.$1")
}

# send_frames IFACE NETNS ARGS...: rsnic-frames send; sets SENT. The sender is pinned to
# CPU 0: its packet socket bypasses the qdisc, so the TX queue follows the sending CPU
# (packet_pick_tx_queue), and a sender that migrated mid-run would split the frames over
# two SQs, which the device serves in turn: reordered on the wire, as on any multi-queue
# NIC, and the receivers' order checks would fail for a reason that is not the driver's.
send_frames() {
	local dev=$1 ns=$2 out
	shift 2
	out=$(nsx "$ns" taskset -c 0 "$FRAMES" send "$dev" "$@") || fail "sending frames on $dev: $out"
	SENT=$(kv sent "$out")
}

# check_capture WHAT COUNT: the capture result CAP has exactly COUNT test frames, all
# intact, in order, none still encapsulated.
check_capture() {
	echo "  $1: $CAP"
	assert_eq "$1: frames" "$2" "$(kv frames "$CAP")"
	assert_eq "$1: mismatching frames" 0 "$(kv mismatches "$CAP")"
	assert_eq "$1: sequence gaps" 0 "$(kv gaps "$CAP")"
	assert_eq "$1: reordered frames" 0 "$(kv reordered "$CAP")"
	assert_eq "$1: frames still encapsulated" 0 "$(kv encap "$CAP")"
}

# frames_from_a WHERE WHAT NAME [TIMEOUT]: NF test frames sent from A to B's MAC address
# (send_frames), captured as NAME (cap_start, for up to TIMEOUT seconds, 60 by default)
# where they must end: WHERE "b", at B (in "peer") as A sent them; "a", back at A with the
# MAC addresses swapped (B's XDP program sent them back). Fails unless all NF arrive
# intact and in order (check_capture WHAT NF). Needs MAC_A and MAC_B (xdp_pair).
# shellcheck disable=SC2153 # MAC_B is quiet_pair's
frames_from_a() {
	local where=$1 what=$2 name=$3 tmo=${4:-60}
	if [ "$where" = b ]; then
		cap_start "$name" "$B" peer --count "$NF" --timeout "$tmo" --expect-dst "$MAC_B" --expect-src "$MAC_A"
	else
		cap_start "$name" "$A" "" --count "$NF" --timeout "$tmo" --expect-dst "$MAC_A" --expect-src "$MAC_B"
	fi
	send_frames "$A" "" --dst "$MAC_B" --count "$NF"
	cap_wait "$name"
	check_capture "$what" "$NF"
}

# no_kernel_reports: no warning, BUG or oops in dmesg since mark_dmesg.
no_kernel_reports() {
	local r
	r=$(dmesg_since_mark | grep -E 'WARNING:|BUG:|Oops|general protection|KASAN|refcount_t' || true)
	[ -z "$r" ] || fail "kernel reports: $r"
}

# AF_XDP helpers (92, 93): A and B as setup_pair makes them, MAC_A and MAC_B their MAC
# addresses, N frames per rxdrop run, NL per l2fwd run. txonly sends at most XSK_RATE
# frames/s: the tests check that every frame arrives intact or is counted as dropped (and
# that at most 1 % are), not how fast a user-space consumer keeps up in an emulated VM on
# a shared machine.
XSK_RATE=${XSK_RATE:-$([ "${KERNEL_VARIANT:-normal}" = debug ] && echo 500 || echo 3000)}
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
	# Unicast frames that are not test frames would be misdelivered or corrupt; multicast
	# ones are the stack's own control frames (IGMP membership reports, for instance, are
	# repeated for seconds after a link comes up; a clean run on the debug kernel once
	# received one after the port had been quiet for a second): shown, not failed.
	[ "$(kv foreign "$XR")" = 0 ] ||
		echo "  [$what] the first frame that was not a test frame had EtherType $(kv foreign_type "$XR"); result: $XR"
	assert_eq "[$what] unicast frames that are not test frames" 0 "$(kv foreign "$XR")"
	[ "$(kv foreign_group "$XR")" = 0 ] ||
		echo "  [$what] also $(kv foreign_group "$XR") group-addressed frames of the stack (first EtherType $(kv foreign_type "$XR"))"
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
	xsk_tx "" -i "$A" -n "$N" --dst-mac "$MAC_B" -s 60:1514 -d 60 --rate "$XSK_RATE" "${tx[@]}"
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
	xsk_tx "" -i "$A" -n "$NL" --dst-mac "$MAC_B" -s 60:1514 -d 60 -c --rate "$XSK_RATE"
	assert_eq "[$what] frames txonly sent" "$NL" "$(kv packets "$XT")"
	xsk_wait fwd
	rx_checks "$what" "$NL"
	fwd=$(kv packets "$XR")
	cap_wait l2
	check_capture "[$what] back at A, MACs swapped" "$fwd"
}

# zc_check IFACE FEATURES: IFACE's xdp-features FEATURES include xsk-zerocopy (every rsnic
# port offers AF_XDP zero-copy, on both families); fails the test otherwise.
zc_check() {
	has_xdp_feature "$2" xsk-zerocopy || fail "$1 does not advertise xsk-zerocopy ($2)"
}

# The namespaces and interfaces a test made go on exit, with traffic.sh's cleanup.
XDP_NETNS=""
XDP_LINKS=""
xdp_cleanup() {
	local n
	traffic_cleanup
	for n in $XDP_NETNS; do ip netns del "$n" 2>/dev/null || true; done
	for n in $XDP_LINKS; do ip link del "$n" 2>/dev/null || true; done
}
trap xdp_cleanup EXIT
