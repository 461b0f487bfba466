#!/usr/bin/env bash
# The kernel's own AF_XDP test suite, xskxceiver (tools/testing/selftests/bpf of the 6.12
# tree, built by scripts/build-xskxceiver.sh), against one rsnic port in internal loopback,
# as `test_xsk.sh -i <dev>` runs it for a real NIC: `xskxceiver -i DEV -i DEV` (one device
# for both ends: the TX socket's frames come back to the RX socket through the loopback) in
# drv mode, i.e. AF_XDP copy mode behind rsnic's native XDP (XDP_REDIRECT into an XSKMAP),
# all subtests in one run; then, as test_xsk.sh does, busy-poll mode (`-b`), for a subset
# (the whole suite twice takes longer than the VM suite can spend on one test).
# zc mode runs when the port advertises xsk-zerocopy in xdp_features (both families); where
# it does not it is skipped, once the suite has confirmed that its XDP_ZEROCOPY bind fails
# cleanly.
#
# Each subtest's result is printed. The suite exits on a set-up error; the subtests after
# it then run one by one (`-t N`). A subtest that fails on rsnic runs again on a veth pair
# (the suite's reference set-up, same kernel, same binary): if it fails there too, the
# failure is the suite's or the kernel's, not rsnic's: XFAIL. Four do on this kernel, whose
# 6.12.118 stable AF_XDP fixes its copy of the suite predates: STAT_RX_DROPPED (the UMEM
# headroom it asks for is now refused, EINVAL: "xsk: tighten UMEM headroom validation"),
# ALIGNED_INV_DESC, ALIGNED_INV_DESC_2K_FRAME_SIZE and STAT_TX_INVALID (copy-mode TX now
# completes invalid descriptors and waits for earlier completions before it does: "Too many
# packets completed", the transfer stalls). STAT_RX_FULL and STAT_FILL_EMPTY read the
# socket's counters 1 ms after the last packet they expect, which a loaded TCG guest can
# miss (on veth too, under the debug kernel). Otherwise the subtest runs alone on rsnic, with
# the port's `ethtool -S` deltas and the kernel log: a pass there is PASS-ALONE; a transfer
# timeout (or a failed STAT_RX_FULL / STAT_FILL_EMPTY) runs it once more with the suite's 3 s
# transfer timeout and 1 ms settle raised (xskxceiver-relaxed: a port behind a simulated
# device under QEMU TCG can be slower than that without losing a packet): PASS-RELAXED.
# Only a subtest that still fails fails this test, with all of that printed.
#
# The suite's own skips stay skips, with its reason: unaligned-mode subtests need huge pages
# (the test kernel has no CONFIG_HUGETLBFS), multi-buffer ones need NETDEV_XDP_ACT_RX_SG
# (rsnic's XDP is single-buffer), HW_SW_* need `ethtool -G` to take the suite's ring sizes.
#
# Settings (environment):
#   XSK_MODES      modes to run, default "drv zc" (skb: generic XDP, not rsnic's XDP)
#   XSK_TESTS      subtest names to run, default all (`xskxceiver -l` lists them); "all"
#                  runs them in one process, a list one process each
#   XSK_BUSY_POLL  subtest names to run again with -b, default four that reach the driver's
#                  NAPI poll from the busy loop in different ways; "all" or "none"
#   XSK_BUDGET     seconds after which no further subtest starts (default 500)
# On the debug kernel: the relaxed binary throughout, seven subtests, no busy-poll pass.
# The VM gets no environment from make: pass them with env, e.g.
#   scripts/vm-run.sh env XSK_BUSY_POLL=all scripts/vm/run-tests.sh tests/vm/94-xskxceiver.sh
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"

xsk_dir=${RSNIC_XSK_DIR:-$RSNIC_ROOT/target/xsk}
X=$xsk_dir/xskxceiver
XR=$xsk_dir/xskxceiver-relaxed
if [ ! -x "$X" ] || [ ! -x "$XR" ]; then
	fail "no $X: run scripts/build-xskxceiver.sh (make vmtest builds it when TESTS has this test)"
fi

# One subtest may not take longer than this (a hang is a failure, not a stuck suite).
RUN_TIMEOUT=120
X_MAIN=$X
tests_default=all
# The busy-poll pass: subtests whose traffic reaches the socket through the driver's NAPI
# poll called from the socket's busy loop in different ways (plain, poll() on either side,
# both directions). XSK_BUSY_POLL=all runs the whole suite (about twice as long).
bp_default="SEND_RECEIVE POLL_RX POLL_TX BIDIRECTIONAL"
if [ "${KERNEL_VARIANT:-normal}" = debug ]; then
	# Under KASAN and lockdep the point is what the sanitizers see on the paths, not the
	# suite's timing: the relaxed binary from the start, the subtests that move traffic
	# through rsnic's XDP in distinct ways, no busy-poll pass (unless asked for).
	RUN_TIMEOUT=300
	X_MAIN=$XR
	tests_default="SEND_RECEIVE POLL_TX BIDIRECTIONAL STAT_FILL_EMPTY XDP_PROG_CLEANUP"
	tests_default+=" XDP_DROP_HALF XDP_SHARED_UMEM"
	bp_default=none
fi
# scripts/vm/run-tests.sh ends a test after 600 s: past this many seconds no further subtest
# starts (the rest are reported as skipped for time), so that the results so far are kept.
BUDGET=${XSK_BUDGET:-500}
T0=$(date +%s)
over_budget() { [ $(($(date +%s) - T0)) -ge "$BUDGET" ]; }
XSK_MODES=${XSK_MODES:-drv zc}
XSK_TESTS=${XSK_TESTS:-$tests_default}
XSK_BUSY_POLL=${XSK_BUSY_POLL:-$bp_default}

# The suite's subtests: index -> name.
mapfile -t names < <("$X" -l | sed -n 's/^\([0-9]*\): \(.*\)$/\2/p')
[ "${#names[@]}" -gt 0 ] || fail "xskxceiver -l listed no subtests"
index_of() {
	local i
	for i in "${!names[@]}"; do
		[ "${names[$i]}" = "$1" ] && echo "$i" && return 0
	done
	return 1
}
select_names() { # LIST: "all", "none" or names; prints the names, in the suite's order
	local n
	case $1 in
	all) printf '%s\n' "${names[@]}" ;;
	none | "") ;;
	*)
		for n in "${names[@]}"; do
			case " $1 " in *" $n "*) echo "$n" ;; esac
		done
		;;
	esac
}

# The port: loopback on, up, with its peer up too (carrier needs both ends; AF_XDP copy
# mode transmits through __dev_direct_xmit, which drops without carrier). The peer stays
# idle: no IPv6 on either (no ND/MLD frames that the XDP program would redirect into the
# socket as unexpected packets), no addresses.
load_rsnic
mapfile -t ifs < <(rsnic_ifaces)
A=${ifs[0]}
B=${ifs[1]}
for d in "$A" "$B"; do sysctl -qw "net.ipv6.conf.$d.disable_ipv6=1"; done
ethtool -K "$A" loopback on || fail "ethtool -K $A loopback on"
assert_eq "$A loopback" "on" "$(ethtool -k "$A" | sed -n 's/^loopback: \([a-z]*\).*/\1/p')"
# xskxceiver's frames go to 55:44:33:22:11:0x (xskxceiver.h's g_mac), multicast addresses
# the port never joined: a port that filters as mlx5e does (ConnectX) keeps them away unless
# it is promiscuous, as a real NIC would.
ip link set "$A" promisc on
ip link set "$A" up
ip link set "$B" up
wait_for "carrier on $A" eval '[ "$(carrier "$A")" = 1 ]'
ring_rx=$(ring_size "$A" RX)
ring_tx=$(ring_size "$A" TX)
mtu0=$(cat "/sys/class/net/$A/mtu")

# xdp_features, through the kernel's ynl (iproute2 6.1 does not show them).
xdp_features() {
	python3 - "$(cat "/sys/class/net/$1/ifindex")" <<'EOF'
import os, sys
ksrc = os.environ["RSNIC_KSRC"]
sys.path.insert(0, os.path.join(ksrc, "tools/net/ynl"))
from lib import YnlFamily  # noqa: E402
ynl = YnlFamily(os.path.join(ksrc, "Documentation/netlink/specs/netdev.yaml"), "")
print(" ".join(sorted(ynl.do("dev-get", {"ifindex": int(sys.argv[1])})["xdp-features"])))
EOF
}
features=$(xdp_features "$A") || fail "cannot read xdp_features of $A"
echo "  $A ($RSNIC_FAMILY): loopback on, carrier up, rings rx $ring_rx tx $ring_tx," \
	"MTU $mtu0, xdp_features: $features"

# The veth pair of the control runs, made on first use (as test_xsk.sh makes it).
veth_ready=0
veth_pair() {
	[ "$veth_ready" = 1 ] && return 0
	ip link add xskv0 numtxqueues 4 numrxqueues 4 type veth peer name xskv1 \
		numtxqueues 4 numrxqueues 4 || fail "cannot create the veth pair"
	for d in xskv0 xskv1; do
		sysctl -qw "net.ipv6.conf.$d.disable_ipv6=1"
		ip link set "$d" mtu 1500 up
	done
	veth_ready=1
}

# What test_xsk.sh's cleanup_iface does after a run, and the rings back as they were (the
# suite restores them itself unless it was killed).
cleanup_iface() {
	ip link set dev "$1" xdp off 2>/dev/null
	ip link set dev "$1" xdpgeneric off 2>/dev/null
	ip link set dev "$1" mtu "$2" 2>/dev/null
}
reset_port() {
	cleanup_iface "$A" "$mtu0"
	ethtool -G "$A" rx "$ring_rx" tx "$ring_tx" 2>/dev/null
}

# run_xsk BINARY MODE DEV BP NAME...: runs the named subtests on DEV (both ends on the
# rsnic port; the veth pair for DEV=veth), BP=1 with -b: the whole suite in one process as
# test_xsk.sh runs it when NAME is "all", else one process for the one NAME (-t). Sets
# RC (the exit status), SECS, and per subtest RES[name] (PASS, SKIP, FAIL, or unset if the
# run ended before it), MSG[name] (the skip reason or the failure line), OUT[name] (the
# suite's messages before that result) and TMO[name] (1 when a transfer loop timed out).
declare -A RES MSG OUT TMO
run_xsk() {
	local bin=$1 mode=$2 dev=$3 bp=$4 name=$5 args tn n st line msgs t0 limit=$RUN_TIMEOUT
	if [ "$dev" = veth ]; then
		veth_pair
		args=(-i xskv0 -i xskv1)
	else
		args=(-i "$dev" -i "$dev")
	fi
	[ "$bp" = 1 ] && args+=(-b)
	if [ "$name" = all ]; then
		tn=("${names[@]}")
		limit=$((RUN_TIMEOUT * 3))
	else
		tn=("$name")
		args+=(-t "$(index_of "$name")")
	fi
	# Never past run-tests.sh's 600 s, so that a hang shows as this subtest's failure.
	[ "$limit" -le $((560 - ($(date +%s) - T0))) ] || limit=$((560 - ($(date +%s) - T0)))
	[ "$limit" -ge 10 ] || limit=10
	for n in "${tn[@]}"; do unset "RES[$n]" "MSG[$n]" "OUT[$n]" "TMO[$n]"; done
	t0=$(date +%s%N)
	timeout -k 5 "$limit" "$bin" "${args[@]}" -m "$mode" >/tmp/xsk.out 2>&1
	RC=$?
	SECS=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
	# One line per result: number, status, text, the messages before it (\x1f-separated).
	while IFS=$'\t' read -r n st line msgs; do
		n=${tn[$((n - 1))]}
		RES[$n]=$st MSG[$n]=$line OUT[$n]=$msgs TMO[$n]=0
		case $msgs in *"timed out"*) TMO[$n]=1 ;; esac
	done < <(awk '
		/^# (Totals|Planned)/ { next }
		/^# / { buf = buf (buf == "" ? "" : "\037") substr($0, 3); next }
		/^(not )?ok [0-9]+ / {
			bad = ($1 == "not"); n = bad ? $3 : $2
			line = $0; sub(/^(not )?ok [0-9]+ /, "", line)
			if (bad) st = "FAIL"
			else if (line ~ /^# SKIP /) { st = "SKIP"; sub(/^# SKIP /, "", line) }
			else st = "PASS"
			gsub(/\t/, " ", line); gsub(/\t/, " ", buf)
			print n "\t" st "\t" line "\t" buf
			buf = ""
		}' /tmp/xsk.out)
	if [ "$RC" = 124 ] || [ "$RC" = 137 ]; then
		# Killed: the first subtest without a result is the one that hung.
		for n in "${tn[@]}"; do
			[ -n "${RES[$n]:-}" ] && continue
			RES[$n]=FAIL MSG[$n]="killed after $limit s" TMO[$n]=1
			OUT[$n]=$(grep '^# ' /tmp/xsk.out | tail -n 5 | tr '\n' '\037')
			break
		done
	elif [ "$name" != all ] && [ -z "${RES[$name]:-}" ]; then
		RES[$name]=FAIL MSG[$name]="no result (exit $RC)" TMO[$name]=0
		OUT[$name]=$(grep '^# ' /tmp/xsk.out | head -n 5 | tr '\n' '\037')
	fi
	if [ "$dev" = veth ]; then
		cleanup_iface xskv0 1500
		cleanup_iface xskv1 1500
	fi
}

# show_out NAME: the suite's messages of NAME's last run.
show_out() {
	[ -n "${OUT[$1]:-}" ] || return 0
	echo "${OUT[$1]}" | tr '\037' '\n' | head -n 12 | sed 's/^/      | /'
}

# Counter deltas of the port between snapshots x0 and x1, the ones that moved.
moved() {
	deltas x0 x1 | awk '$2 != 0 { printf "%s%s %s", sep, $1, $2; sep = ", " } END { print "" }'
}

# run_alone BINARY MODE BP NAME: run_xsk of subtest NAME alone on the port, reset first,
# between its counter snapshots x0 and x1 (moved) and after mark_dmesg.
run_alone() {
	reset_port
	snap x0 "$A"
	mark_dmesg
	run_xsk "$1" "$2" "$A" "$3" "$4"
	snap x1 "$A"
}

# show_failure NAME: what a failed run_alone left: the suite's messages of NAME, the port's
# counters that moved, the kernel log of the run.
show_failure() {
	show_out "$1"
	echo "    $A ethtool -S deltas: $(moved)"
	dmesg_since_mark | sed 's/^/      dmesg| /' | head -n 20
}

# The packet, XDP and drop/error counters that moved between snapshots $1 and $2.
traffic_counters() {
	deltas "$1" "$2" | awk '$2 != 0 && ($1 ~ /^(tx|rx)_(packets|xdp_[a-z_]+)$/ ||
		$1 ~ /drop|err|discard|out_of_buffer|too_long|truncated|no_wqe/) {
		printf "%s%s %s", sep, $1, $2; sep = ", " } END { print "" }'
}

# result MODE BP NAME RESULT [TEXT]: prints and counts one subtest's outcome.
n_pass=0 n_relaxed=0 n_alone=0 n_skip=0 n_xfail=0 n_fail=0
results=()
result() {
	local line="  $1 ${3}: $4${5:+ ($5)}"
	[ "$2" = 1 ] && line="  $1 BUSY-POLL ${3}: $4${5:+ ($5)}"
	results+=("$line")
	case $4 in
	PASS) n_pass=$((n_pass + 1)) ;;
	PASS-RELAXED) n_relaxed=$((n_relaxed + 1)) ;;
	PASS-ALONE) n_alone=$((n_alone + 1)) ;;
	SKIP) n_skip=$((n_skip + 1)) ;;
	XFAIL) n_xfail=$((n_xfail + 1)) ;;
	*) n_fail=$((n_fail + 1)) ;;
	esac
}

# failed MODE BP NAME: a subtest that failed in the main run, checked as described at the
# top: on veth (not for zc), alone on rsnic with counters and kernel log, then with the
# longer timeout if it timed out.
failed() {
	local mode=$1 bp=$2 name=$3 main_msg=${MSG[$3]} main_out=${OUT[$3]:-} vmsg alone_msg
	if [ "$mode" != zc ]; then
		run_xsk "$X_MAIN" "$mode" veth "$bp" "$name"
		vmsg=${MSG[$name]:-}
		if [ "${RES[$name]:-}" = FAIL ] && [ "${vmsg/ BUSY-POLL/}" = "${main_msg/ BUSY-POLL/}" ]; then
			result "$mode" "$bp" "$name" XFAIL "fails on veth too: $main_msg"
			echo "    $name fails on veth too ($SECS s): $vmsg; on rsnic:"
			OUT[$name]=$main_out
			show_out "$name"
			return
		fi
		echo "    $name fails on rsnic: $main_msg; on veth ($SECS s): ${RES[$name]:-no result} $vmsg"
	fi
	run_alone "$X_MAIN" "$mode" "$bp" "$name"
	if [ "${RES[$name]}" = PASS ]; then
		result "$mode" "$bp" "$name" PASS-ALONE \
			"failed in the suite's run ($main_msg), passes alone in $SECS s"
		OUT[$name]=$main_out
		show_out "$name"
		return
	fi
	alone_msg=${MSG[$name]}
	echo "    $name alone on $A ($SECS s): ${RES[$name]} $alone_msg"
	show_failure "$name"
	# The statistics subtests' 1 ms settle is a timeout too (see the top).
	local why="the suite's 3 s transfer timeout ran out"
	case $name in
	STAT_RX_FULL | STAT_FILL_EMPTY) TMO[$name]=1 why="the counter was not there 1 ms after the last packet" ;;
	esac
	if [ "${RES[$name]}" = FAIL ] && [ "${TMO[$name]}" = 1 ] && [ "$X_MAIN" != "$XR" ]; then
		run_alone "$XR" "$mode" "$bp" "$name"
		if [ "${RES[$name]}" = PASS ]; then
			result "$mode" "$bp" "$name" PASS-RELAXED \
				"$why; passes in $SECS s with the longer timeout and settle"
			echo "    $A ethtool -S deltas of the relaxed run: $(moved)"
			return
		fi
		echo "    $name with the longer timeout ($SECS s): ${RES[$name]} ${MSG[$name]}"
		show_failure "$name"
	fi
	case ${RES[$name]} in
	SKIP) result "$mode" "$bp" "$name" SKIP "${MSG[$name]} (alone; in the suite's run: $main_msg)" ;;
	*) result "$mode" "$bp" "$name" FAIL "$alone_msg" ;;
	esac
	reset_port
}

# run_mode MODE BP NAME...: the named subtests (all of them in one run, else one by one),
# then the failures through `failed`.
run_mode() {
	local mode=$1 bp=$2 n t0 todo=() tag=$1
	shift 2
	[ "$bp" = 1 ] && tag+=" busy-poll"
	t0=$(date +%s)
	reset_port # no program left by another mode (generic and native XDP exclude each other)
	snap m0 "$A"
	mark_dmesg
	if [ "$#" = "${#names[@]}" ]; then
		run_xsk "$X_MAIN" "$mode" "$A" "$bp" all
		echo "  $tag: the suite in one run: exit $RC, $SECS s"
		[ -n "${RES[${names[0]}]:-}" ] || sed 's/^/      | /' /tmp/xsk.out | head -n 12
		# A run that ended early (the suite exits on a set-up error) goes on one by one.
		for n in "$@"; do [ -n "${RES[$n]:-}" ] || todo+=("$n"); done
		[ "${#todo[@]}" = 0 ] || echo "  $tag: one by one from ${todo[0]} on"
	else
		todo=("$@")
	fi
	for n in "${todo[@]}"; do
		if over_budget; then
			RES[$n]=SKIP MSG[$n]="not run: the test's $BUDGET s in the VM are spent"
			continue
		fi
		run_xsk "$X_MAIN" "$mode" "$A" "$bp" "$n"
		echo "    $n: ${RES[$n]} ($SECS s)"
	done
	snap m1 "$A"
	echo "  $A counters over the $tag run: $(traffic_counters m0 m1)"
	dmesg_since_mark | grep -v 'clocksource' | sed 's/^/      dmesg| /' | head -n 20
	for n in "$@"; do
		case ${RES[$n]} in
		PASS) result "$mode" "$bp" "$n" PASS ;;
		SKIP) result "$mode" "$bp" "$n" SKIP "${MSG[$n]}" ;;
		*)
			if over_budget; then
				result "$mode" "$bp" "$n" FAIL "${MSG[$n]} (not checked further: time budget spent)"
				show_out "$n"
			else
				failed "$mode" "$bp" "$n"
			fi
			;;
		esac
	done
	echo "  $tag: $(($(date +%s) - t0)) s"
}

for n in $XSK_TESTS $XSK_BUSY_POLL; do
	case $n in all | none) ;; *) index_of "$n" >/dev/null || fail "no subtest named $n" ;; esac
done
t_start=$(date +%s)
mapfile -t run_names < <(select_names "$XSK_TESTS")
mapfile -t bp_names < <(select_names "$XSK_BUSY_POLL")
for mode in $XSK_MODES; do
	case $mode in
	zc)
		if [[ " $features " != *" xsk-zerocopy "* ]]; then
			# The suite decides for itself by binding a socket with XDP_ZEROCOPY: it must
			# refuse the mode cleanly (and the port keep working, which the drv runs show).
			reset_port
			timeout -k 5 "$RUN_TIMEOUT" "$X" -i "$A" -i "$A" -m zc -t 0 >/tmp/xsk.out 2>&1
			rc=$?
			msg="xdp_features has no xsk-zerocopy (no AF_XDP zero-copy on $RSNIC_FAMILY)"
			if grep -q 'zero-copy mode not supported' /tmp/xsk.out; then
				result zc 0 "(all)" SKIP "$msg; xskxceiver -m zc agrees: its XDP_ZEROCOPY bind was refused"
			else
				result zc 0 "(all)" FAIL "$msg, yet xskxceiver -m zc did not refuse the mode (exit $rc)"
				sed 's/^/      | /' /tmp/xsk.out | head -n 12
			fi
			continue
		fi
		;;
	drv | skb) ;;
	*) fail "unknown mode $mode (XSK_MODES: drv, zc, skb)" ;;
	esac
	[ "${#run_names[@]}" = 0 ] || run_mode "$mode" 0 "${run_names[@]}"
	[ "${#bp_names[@]}" = 0 ] || run_mode "$mode" 1 "${bp_names[@]}"
done
secs=$(($(date +%s) - t_start))

reset_port
[ "$veth_ready" = 1 ] && ip link del xskv0
ip link set "$A" down
ip link set "$B" down

echo "  xskxceiver on $RSNIC_FAMILY ($A, $secs s):"
printf '%s\n' "${results[@]}" | sed 's/^  /    /'
echo "  $n_pass passed, $n_relaxed passed with the longer timeout, $n_alone passed alone," \
	"$n_skip skipped, $n_xfail failed on veth too (XFAIL), $n_fail failed"
[ "$n_fail" = 0 ] || fail "$n_fail xskxceiver subtests failed on $A ($RSNIC_FAMILY)"
unload_rsnic
