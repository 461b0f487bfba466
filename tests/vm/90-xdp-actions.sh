#!/usr/bin/env bash
# Native XDP actions on port B (namespace "peer", attached with ip link ... xdpdrv) for
# traffic from port A: for each of XDP_DROP, XDP_ABORTED, XDP_PASS, XDP_PASS after head
# and tail moves, and XDP_TX: test frames from a packet socket (checked byte for byte
# where they end up) and a pktgen flood. Once every frame A's device sent has reached
# B's device:
#   B's device delivered = B's rx_packets (passed to the stack) + the XDP action counters,
#   and all of them went to the action's counter; the program saw every one of them;
#   drop/aborted: the stack sees none (aborted counts in rx_xdp_drop and rx_xdp_aborted);
#   pass: the stack gets each frame unchanged; pass_adjust: the stack gets exactly the
#   inner frame of each encapsulated one (outer headers and trailer gone);
#   tx: every frame comes back to A unchanged but for the swapped MAC addresses, B's device
#   sent what XDP_TX counted, A's device received it.
# Then attach, replace (atomically and with ip -force) and detach on both ports while an
# iperf3 stream runs: the stream completes and the kernel reports nothing.
# Skips ("no XDP support") while rsnic refuses native XDP with EOPNOTSUPP. On the debug
# kernel: three of the actions (see ACTS).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$(dirname "$0")/xdp.sh"
# On the debug kernel: ConnectX only (the XDP glue under rust/ and channel/ is shared).
one_family_on_debug

COUNT=${XDP_PKTGEN_COUNT:-$([ "$debug" = 1 ] && echo 1000 || echo 10000)}
NF=${XDP_TEST_FRAMES:-300}
# The actions to run (XDP_ACTIONS). On the debug kernel, where each costs about a minute, the
# three that reach distinct driver paths: the page back to the pool (drop), an skb built
# after head and tail moves (pass_adjust) and the XDP TX path (tx).
ACTS=${XDP_ACTIONS:-$([ "$debug" = 1 ] && echo "drop pass_adjust tx" || echo "drop aborted pass pass_adjust tx")}

xdp_pair
mark_dmesg
xdp_native_or_fail "$B" peer
xdp_counters_or_fail "$B" peer

# TAKEN: the frames B's XDP programs took, from the deltas in DB.
declare -A DA DB
xdp_taken() {
	local c
	TAKEN=$((DB[$XC_DROP] + DB[$XC_TX] + DB[$XC_REDIRECT]))
	for c in $XC_TX_LOST; do TAKEN=$((TAKEN + DB[$c])); done
}

# Every frame either device sent reached the other, and B's driver accounted for each one
# B's device delivered (snapshots x0a/x0b, x1a/x1b taken here; deltas in DA, DB).
xdp_settled() {
	snap x1a "$A"
	snap x1b "$B" peer
	dmap DA x0a x1a
	dmap DB x0b x1b
	xdp_taken
	[ "${DB[$C_DEV_RX]}" = "${DA[$C_DEV_TX]}" ] && [ "${DA[$C_DEV_RX]}" = "${DB[$C_DEV_TX]}" ] &&
		[ "${DB[$C_DEV_RX]}" = $((DB[rx_packets] + TAKEN)) ]
}

declare -A F
# phase ACTION PHASE COMMAND...: runs COMMAND (the traffic) between snapshots, waits until
# the counters settle, keeps the deltas in F[ACTION.PHASE.*] (B's; A's as .A.*) and the
# program's counts as .prog_packets/.prog_acted.
phase() {
	local act=$1 ph=$2 c p0 a0
	shift 2
	prog_counts "$B" peer
	p0=$PC_PACKETS a0=$PC_ACTED
	snap x0a "$A"
	snap x0b "$B" peer
	"$@"
	if ! wait_for_quiet xdp_settled; then
		for c in rx_packets "$C_DEV_RX" "$C_DEV_TX" "$C_NOWQE" $XC_ALL; do
			echo "  B $c ${DB[$c]:-?}" >&2
		done
		fail "[$act $ph] B's counters did not balance: B's device got ${DB[$C_DEV_RX]}" \
			"of ${DA[$C_DEV_TX]} frames, rx_packets ${DB[rx_packets]}, XDP $TAKEN"
	fi
	for c in "${!DB[@]}"; do F[$act.$ph.$c]=${DB[$c]}; done
	for c in "${!DA[@]}"; do F[$act.$ph.A.$c]=${DA[$c]}; done
	prog_counts "$B" peer
	F[$act.$ph.prog_packets]=$((PC_PACKETS - p0))
	F[$act.$ph.prog_acted]=$((PC_ACTED - a0))
}

# wait_for_quiet COMMAND: wait_for without failing (the caller explains).
wait_for_quiet() {
	local i=0 tries=50
	[ "$debug" = 1 ] && tries=200
	while [ "$i" -lt "$tries" ]; do
		"$@" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# check ACTION PHASE: the balance every action keeps, then the action's own.
check() {
	local act=$1 ph=$2 k="$1.$2" rx c
	rx=${F[$k.$C_DEV_RX]}
	echo "  [$act $ph] B's device delivered $rx frames; rx_packets ${F[$k.rx_packets]}," \
		"$XC_DROP ${F[$k.$XC_DROP]}, $XC_ABORTED ${F[$k.$XC_ABORTED]}, $XC_TX ${F[$k.$XC_TX]}," \
		"$XC_REDIRECT ${F[$k.$XC_REDIRECT]}; the program saw ${F[$k.prog_packets]}"
	[ "$rx" -gt 0 ] || fail "[$act $ph] no frame reached B"
	assert_eq "[$act $ph] frames the program saw = frames B's device delivered" "$rx" "${F[$k.prog_packets]}"
	assert_eq "[$act $ph] device drops for lack of RX WQEs ($C_NOWQE)" 0 "${F[$k.$C_NOWQE]}"
	assert_eq "[$act $ph] $XC_REDIRECT" 0 "${F[$k.$XC_REDIRECT]}"
	case $act in
	drop | aborted)
		assert_eq "[$act $ph] $XC_DROP" "$rx" "${F[$k.$XC_DROP]}"
		assert_eq "[$act $ph] $XC_ABORTED" "$([ "$act" = aborted ] && echo "$rx" || echo 0)" \
			"${F[$k.$XC_ABORTED]}"
		assert_eq "[$act $ph] rx_packets" 0 "${F[$k.rx_packets]}"
		assert_eq "[$act $ph] $XC_TX" 0 "${F[$k.$XC_TX]}"
		;;
	pass | pass_adjust)
		assert_eq "[$act $ph] rx_packets" "$rx" "${F[$k.rx_packets]}"
		assert_eq "[$act $ph] $XC_DROP" 0 "${F[$k.$XC_DROP]}"
		assert_eq "[$act $ph] $XC_TX" 0 "${F[$k.$XC_TX]}"
		;;
	tx)
		local lost=0
		for c in $XC_TX_LOST; do lost=$((lost + F[$k.$c])); done
		assert_eq "[$act $ph] $XC_TX + lost ($XC_TX_LOST)" "$rx" $((F[$k.$XC_TX] + lost))
		assert_eq "[$act $ph] rx_packets" 0 "${F[$k.rx_packets]}"
		assert_eq "[$act $ph] $XC_DROP" 0 "${F[$k.$XC_DROP]}"
		assert_eq "[$act $ph] B's device sent what XDP_TX counted" "${F[$k.$XC_TX]}" "${F[$k.$C_DEV_TX]}"
		assert_eq "[$act $ph] A's device received it" "${F[$k.$XC_TX]}" "${F[$k.A.$C_DEV_RX]}"
		;;
	esac
}

# One phase per action: the test frames, then the flood.
frames_and_flood() {
	send_frames "$A" "" "$@"
	pktgen_run "$A" "$COUNT" 10.10.0.2 "$MAC_B" 32 60
	F[pps]=$PG_PPS
}

for act in $ACTS; do
	xdp_attach "$B" peer "xdp_$act"
	# The test frames: where they must (or must not) show up, checked byte for byte.
	send_args=(--dst "$MAC_B" --count "$NF")
	case $act in
	drop | aborted) cap_start "$act" "$B" peer --count 1 --timeout 8 ;;
	pass) cap_start "$act" "$B" peer --count "$NF" --timeout 60 --expect-dst "$MAC_B" --expect-src "$MAC_A" ;;
	pass_adjust)
		cap_start "$act" "$B" peer --count "$NF" --timeout 60 --expect-dst "$MAC_B" --expect-src "$MAC_A"
		send_args+=(--encap)
		;;
	tx) cap_start "$act" "$A" "" --count "$NF" --timeout 60 --expect-dst "$MAC_A" --expect-src "$MAC_B" ;;
	esac
	phase "$act" all frames_and_flood "${send_args[@]}"
	F[$act.pps]=${F[pps]}
	cap_wait "$act"
	check "$act" all
	case $act in
	drop | aborted)
		echo "  [$act] the stack's packet socket: $CAP"
		assert_eq "[$act] test frames the stack received" 0 "$(kv frames "$CAP")"
		assert_eq "[$act] encapsulated frames the stack received" 0 "$(kv encap "$CAP")"
		;;
	pass) check_capture "[pass] B's stack" "$NF" ;;
	pass_adjust)
		check_capture "[pass_adjust] B's stack, inner frames" "$NF"
		# The flood's plain frames passed unchanged.
		assert_eq "[pass_adjust] frames stripped by the program" "$NF" "${F[pass_adjust.all.prog_acted]}"
		;;
	tx) check_capture "[tx] back at A, MACs swapped" "$NF" ;;
	esac
	xdp_detach "$B" peer
done

# Without a program the stack gets everything again.
ping -c 3 -i 0.2 -W 2 10.10.0.2 >/dev/null || fail "no ping after detaching XDP"

printf '  %-44s' "$NF test frames + pktgen $COUNT x 60 B ($RSNIC_FAMILY)"
for act in $ACTS; do printf ' %11s' "$act"; done
echo
row() {
	printf '  %-44s' "$1"
	for act in $ACTS; do printf ' %11s' "${F[$act.all.$2]:-0}"; done
	echo
}
row "B's device delivered ($C_DEV_RX)" "$C_DEV_RX"
row "B rx_packets (to the stack)" rx_packets
row "B $XC_DROP" "$XC_DROP"
row "B $XC_ABORTED" "$XC_ABORTED"
row "B $XC_TX" "$XC_TX"
for c in $XC_TX_LOST $XC_MORE; do row "B $c" "$c"; done
row "frames the program saw" prog_packets
row "B's device sent ($C_DEV_TX)" "$C_DEV_TX"
printf '  %-44s' "pktgen packets/s (emulated VM, indicative)"
for act in $ACTS; do printf ' %11s' "${F[$act.pps]}"; done
echo

# Attach, replace and detach on both ports under an iperf3 stream, on one vCPU. Every
# program change rewrites the kernel's BPF dispatcher with text_poke_bp(), and QEMU's
# multi-threaded TCG (7.2) does not honour x86 cross-modifying code: a vCPU running XDP at
# that moment can execute the transient int3 after the patch completed ("Oops: int3" in
# bpf_dispatcher_xdp_func, a panic). The emulator's doing, not the driver's: a veth pair
# panics the same way without rsnic loaded (rsnic.rst, "Testing under TCG"). So the
# simulated device's work (an unbound workqueue; the NAPI polls and their XDP runs follow
# it), iperf3 and the commands that swap programs (children of this shell) run on CPU 0;
# NAPI still runs between the steps of each swap, and within them where BHs are enabled.
WQ_MASK=/sys/devices/virtual/workqueue/cpumask
wq_mask0=$(cat "$WQ_MASK")
cpus0=$(taskset -pc $$ | sed 's/.*: //')
unpin() {
	echo "$wq_mask0" >"$WQ_MASK"
	taskset -pc "$cpus0" $$ >/dev/null
}
trap 'unpin; xdp_cleanup' EXIT
echo 1 >"$WQ_MASK"
taskset -pc 0 $$ >/dev/null
iperf_server 10.10.0.2 peer
secs=$([ "$debug" = 1 ] && echo 12 || echo 8)
iperf3 -c 10.10.0.2 -t "$secs" -J >/tmp/xdp-iperf.json &
cli=$!
cycles=0
t_end=$(($(date +%s) + secs - 2))
while [ "$(date +%s)" -lt "$t_end" ]; do
	for side in "$B peer" "$A "; do
		read -r dev ns <<<"$side"
		xdp_attach "$dev" "$ns" xdp_pass
		sleep 0.3
		nsx "$ns" "$XDPCTL" attach "$dev" "$XDP_DIR/xdp_pass_adjust.o" --replace >/dev/null
		sleep 0.3
		nsx "$ns" ip -force link set dev "$dev" xdpdrv obj "$XDP_DIR/xdp_pass.o" sec xdp ||
			fail "ip -force replace on $dev"
		sleep 0.3
		xdp_detach "$dev" "$ns"
	done
	cycles=$((cycles + 1))
done
wait "$cli" || fail "iperf3 failed while XDP programs came and went: $(iperf_json /tmp/xdp-iperf.json bps)"
unpin
# One Python start for both figures (each costs seconds in the TCG VM).
read -r bps retrans < <(python3 -c 'import json, sys
e = json.load(open(sys.argv[1]))["end"]
print(int(e["sum_received"]["bits_per_second"]), e["sum_sent"].get("retransmits", 0))' /tmp/xdp-iperf.json)
echo "  iperf3 A -> B for $secs s: $((bps / 1000)) kbit/s, retransmits $retrans, during" \
	"$cycles cycles of attach/replace/replace/detach on each port"
[ "$bps" -gt 0 ] || fail "no throughput while XDP programs came and went"
[ "$cycles" -gt 0 ] || fail "no attach cycle ran during the stream"
no_kernel_reports
teardown_pair
