#!/usr/bin/env bash
# make bench-upstream, the VM part (run inside the test VM by scripts/bench-upstream.sh, on
# the vfio-user transport with the ConnectX model: RSNIC_TRANSPORT=vfio RSNIC_PCI_FAMILY=mlx5):
# rsnic against the kernel's own mlx5_core + mlx5e (unmodified 6.12) on the same two ConnectX
# VFs of rsnic-devd, in one VM, the same kernel. For each driver in turn (rsnic first, with
# its default data path, skb_tx_mpwqe on; then mlx5e with its own defaults):
#   - load it, check that it binds both functions, set up the pair (port A in the initial
#     namespace, B in namespace "peer": pair_up, quiet_pair);
#   - BENCH_UP_ROUNDS rounds of pktgen from A to B (pktgen_run: BENCH_UP_COUNT 60-byte UDP
#     frames, burst 32, TX queue 0, kpktgend_0);
#   - per round: the rate pktgen reports; the guest's CPU time in the round (/proc/stat's
#     "cpu" line, all CPUs, busy = total - idle - iowait, read by the shell right before
#     "start" and right after it returns: PG_HOOK); the frames the model transmitted on A's
#     port and delivered on B's (its counters file), and what B's driver received. Every
#     frame must be accounted for: pktgen's count = the model's TX on A + A's tx_dropped;
#     the model's TX on A = its RX on B + its drops (no WQE, no RQ, too long, filtered, port
#     stopped, link down); the model's RX on B = B's rx_packets + rx_dropped. Anything else
#     fails the run.
#   - unload it (mlx5_core: every firmware page back).
# Prints one "RSNIC-BENCH" line per round (and an "info" line per driver: its version,
# private flags, channels and rings) for the host to pick out of the serial log; the host
# computes the medians.
#
#   BENCH_UP_ROUNDS=N   rounds per driver (default 5)
#   BENCH_UP_COUNT=N    frames per round (default 200000)
set -eu
. "$RSNIC_ROOT/tests/vm/lib.sh"
. "$RSNIC_ROOT/tests/vm/traffic.sh"

if [ "$RSNIC_TRANSPORT" != vfio ] || [ "$RSNIC_FAMILY" != mlx5 ]; then
	fail "make bench-upstream needs the vfio-user transport's ConnectX functions (RSNIC_TRANSPORT=vfio RSNIC_PCI_FAMILY=mlx5; transport $RSNIC_TRANSPORT, family $RSNIC_FAMILY)"
fi
# MLX5_KO, FNS (function f is the model's port f); setup_mlx5_pair, teardown_mlx5_pair.
. "$RSNIC_ROOT/tests/vm/mlx5-upstream.sh"
fns_unbound

ROUNDS=${BENCH_UP_ROUNDS:-5}
COUNT=${BENCH_UP_COUNT:-200000}
HZ_TCK=$(getconf CLK_TCK)

# Whatever the outcome: no namespace, neither driver left.
bench_cleanup() {
	local m
	traffic_cleanup
	for m in rsnic mlx5_core; do
		if grep -q "^$m " /proc/modules; then rmmod "$m" || true; fi
	done
}
trap bench_cleanup EXIT

# cpu_times: CPU_BUSY and CPU_TOTAL, the guest's CPU time so far over all CPUs in USER_HZ
# ticks (/proc/stat's "cpu" line: user nice system idle iowait irq softirq steal; guest time
# is in user already). Read by the shell: a process would cost the window it measures.
cpu_times() {
	local _c user nice sys idle iow irq sirq steal _rest
	read -r _c user nice sys idle iow irq sirq steal _rest </proc/stat
	CPU_TOTAL=$((user + nice + sys + idle + iow + irq + sirq + steal))
	CPU_BUSY=$((CPU_TOTAL - idle - iow))
}
# pg_hook start|end (pktgen_run's PG_HOOK): the CPU times and the clock at either end.
pg_hook() {
	cpu_times
	case $1 in
	start) BUSY0=$CPU_BUSY TOTAL0=$CPU_TOTAL T0=$EPOCHREALTIME ;;
	end) BUSY1=$CPU_BUSY TOTAL1=$CPU_TOTAL T1=$EPOCHREALTIME ;;
	esac
}
PG_HOOK=pg_hook

# model_read P: the model's counters of port P (the device process's counters file, one
# open: devd replaces the file by a rename, so one read is one snapshot) into MODEL[name].
declare -A MODEL
model_read() {
	local f=$RSNIC_DEVD_DIR/port$1/counters k v
	[ -r "$f" ] || fail "no model counters at $f"
	MODEL=()
	while read -r k v; do MODEL[${k%:}]=$v; done <"$f"
}
# model_now: M_TX (frames the model transmitted on A's port, PA), M_LD (A's frames dropped
# for a link down), M_RX (frames it delivered into B's RQs, port PB) and M_DROP (B's drops:
# no WQE, no RQ or a flow table's drop, too long, filtered by the vport, port stopped).
model_now() {
	model_read "$PA"
	M_TX=${MODEL[dev_tx_packets]:-0} M_LD=${MODEL[dev_tx_link_down_drops]:-0}
	model_read "$PB"
	M_RX=${MODEL[dev_rx_packets]:-0}
	M_DROP=$((${MODEL[dev_rx_out_of_buffer]:-0} + ${MODEL[dev_rx_no_rq_drops]:-0} +
		${MODEL[dev_rx_too_long]:-0} + ${MODEL[dev_rx_vport_filtered]:-0} + ${MODEL[dev_rx_stopped]:-0}))
}
# drv_now: D_RX and D_RXDROP (B's rx_packets and rx_dropped), D_TXDROP (A's tx_dropped).
drv_now() {
	D_RX=$(ip netns exec peer cat "/sys/class/net/$B/statistics/rx_packets")
	D_RXDROP=$(ip netns exec peer cat "/sys/class/net/$B/statistics/rx_dropped")
	D_TXDROP=$(cat "/sys/class/net/$A/statistics/tx_dropped")
}

# model_still: the model's counters of the pair stand still (devd rewrites the file at most
# every 50 ms while busy and once when it goes idle).
LAST=""
model_still() {
	local was=$LAST
	model_now
	LAST="$M_TX $M_LD $M_RX $M_DROP"
	[ "$LAST" = "$was" ] || {
		sleep 0.3
		return 1
	}
}

# accounted: every frame of the round is where the counters say (see the top).
ACC=""
accounted() {
	model_now
	drv_now
	local tx=$((M_TX - m_tx0)) ld=$((M_LD - m_ld0)) rx=$((M_RX - m_rx0)) drop=$((M_DROP - m_drop0))
	local brx=$((D_RX - d_rx0)) brxdrop=$((D_RXDROP - d_rxdrop0)) atxdrop=$((D_TXDROP - d_txdrop0))
	ACC="pktgen $PG_SENT, A tx_dropped $atxdrop; model: A tx $tx, link-down drops $ld, B rx $rx, B drops $drop; B rx_packets $brx, rx_dropped $brxdrop"
	R_TX=$tx R_RX=$brx R_DROP=$((atxdrop + ld + drop + brxdrop))
	[ "$PG_SENT" = $((tx + atxdrop)) ] && [ "$tx" = $((rx + drop + ld)) ] && [ "$rx" = $((brx + brxdrop)) ]
}

# The device's work per round, as the model counts it: what each driver asked of the device
# for the same frames (exact counts, unlike the rates, which follow the machine's load).
# A's port (the sender) and B's (the receiver); printed per round as a_<name>/b_<name>.
WORK_A="dev_sq_doorbells dev_doorbells dev_wqes dev_wqebbs dev_mpwqe_wqes dev_nop_wqes dev_tx_cqes dev_cq_arms dev_eqes dev_interrupts dev_pcie_in_tlps dev_pcie_in_bytes dev_pcie_out_tlps"
WORK_B="dev_rq_doorbells dev_doorbells dev_rx_cqes dev_compressed_cqes dev_cq_arms dev_eqes dev_interrupts dev_pcie_in_tlps dev_pcie_out_tlps dev_pcie_out_bytes"
# work_snap: WORK[<side>_<name>] = the model's counter now, for both ports.
declare -A WORK
work_snap() {
	local k
	WORK=()
	model_read "$PA"
	for k in $WORK_A; do WORK[a_${k#dev_}]=${MODEL[$k]:-0}; done
	model_read "$PB"
	for k in $WORK_B; do WORK[b_${k#dev_}]=${MODEL[$k]:-0}; done
}
# work_still: both ports' counters files unchanged for 0.3 s (the round's last CQ arms and
# interrupts counted, not only its frames).
work_still() {
	local was
	was=$(cat "$RSNIC_DEVD_DIR/port$PA/counters" "$RSNIC_DEVD_DIR/port$PB/counters")
	sleep 0.3
	[ "$was" = "$(cat "$RSNIC_DEVD_DIR/port$PA/counters" "$RSNIC_DEVD_DIR/port$PB/counters")" ]
}

# pair_driver NAME: A and B are driven by NAME (ethtool -i).
pair_driver() {
	assert_eq "$A: driver" "$1" "$(ethtool -i "$A" | sed -n 's/^driver: //p')"
	assert_eq "$B: driver" "$1" "$(ip netns exec peer ethtool -i "$B" | sed -n 's/^driver: //p')"
}

# bench_driver NAME: the rounds on the pair A -> B of driver NAME, whose ports are A and B.
bench_driver() {
	local drv=$1 r flags ch rings k work
	quiet_pair
	PA=$(fn_port "$(ethtool -i "$A" | sed -n 's/^bus-info: //p')")
	PB=$(fn_port "$(ip netns exec peer ethtool -i "$B" | sed -n 's/^bus-info: //p')")
	flags=$(ethtool --show-priv-flags "$A" | awk -F' *: *' 'NR > 1 { printf "%s%s=%s", s, $1, $2; s = "," }')
	ch=$(ethtool -l "$A" | awk '/^Current/ { c = 1 } c && /^Combined:/ { print $2; exit }')
	rings=$(ethtool -g "$A" | awk '/^Current/ { c = 1 } c && /^RX:/ { rx = $2 } c && /^TX:/ { print rx "/" $2; exit }')
	echo "RSNIC-BENCH info driver=$drv kernel=$(uname -r) cpus=$(nproc) clk_tck=$HZ_TCK" \
		"count=$COUNT rounds=$ROUNDS a=$A b=$B ports=$PA,$PB" \
		"version=$(ethtool -i "$A" | sed -n 's/^version: //p' | tr ' ' _)" \
		"firmware=$(ethtool -i "$A" | sed -n 's/^firmware-version: //p' | tr ' ' _)" \
		"channels=$ch rings_rx_tx=$rings priv_flags=$flags"
	LAST=""
	WAIT_TRIES=100 wait_for "the model's counters of ports $PA and $PB to stand still" model_still
	for r in $(seq "$ROUNDS"); do
		model_now
		m_tx0=$M_TX m_ld0=$M_LD m_rx0=$M_RX m_drop0=$M_DROP
		drv_now
		d_rx0=$D_RX d_rxdrop0=$D_RXDROP d_txdrop0=$D_TXDROP
		work_snap
		declare -A W0=()
		for k in "${!WORK[@]}"; do W0[$k]=${WORK[$k]}; done
		pktgen_run "$A" "$COUNT" 10.10.0.2 "$MAC_B" 32 60
		[ "$PG_SENT" -ge "$COUNT" ] || fail "$drv round $r: pktgen sent $PG_SENT of $COUNT frames"
		[ "${PG_ERRORS:-0}" = 0 ] || fail "$drv round $r: pktgen counted $PG_ERRORS errors"
		[ -n "$PG_PPS" ] || fail "$drv round $r: pktgen reported no rate"
		WAIT_TRIES=150 WAIT_DIAG='eval echo "$drv round $r: $ACC"' \
			wait_for "$drv round $r: every frame accounted for" accounted
		echo "  $drv round $r: $PG_PPS pps; $ACC"
		WAIT_TRIES=100 wait_for "$drv round $r: the model's counters to stand still" work_still
		work_snap
		work=""
		for k in $(printf '%s\n' "${!WORK[@]}" | sort); do work+=" w_$k=$((WORK[$k] - W0[$k]))"; done
		echo "RSNIC-BENCH run driver=$drv round=$r count=$COUNT sent=$PG_SENT pps=$PG_PPS" \
			"received=$R_RX dropped=$R_DROP dev_tx=$R_TX busy_ticks=$((BUSY1 - BUSY0))" \
			"total_ticks=$((TOTAL1 - TOTAL0)) wall_us=$((${T1/./} - ${T0/./}))$work"
	done
}

# 1. rsnic, its default data path (Enhanced MPWQE on the SQ).
setup_pair
pair_driver rsnic
assert_eq "$A: skb_tx_mpwqe (rsnic's default)" on "$(priv_flag "$A" skb_tx_mpwqe)"
bench_driver rsnic
teardown_pair
fns_unbound

# 2. The kernel's mlx5_core + mlx5e on the same functions, the same pair.
mark_dmesg
setup_mlx5_pair
pair_driver mlx5_core
bench_driver mlx5e
teardown_mlx5_pair
mlx5_no_errors
echo "RSNIC-BENCH done"
