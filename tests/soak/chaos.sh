#!/usr/bin/env bash
# make soak: a chaos soak of the fault handling of both families (not part of make test),
# SOAK_SECONDS per family (default 300), families from SOAK_FAMILIES (default "mlx5 mana").
#
# ConnectX, round after round: a 4 MB TCP transfer each way between the two ports,
# checksummed, while a fault picked at random is injected into a random port through the
# device host's knob (rsnic.rst, "Fault injection"): TX and RX error CQEs with several
# syndromes, a DMA read fault, corrupt CQEs (wrong wqe_counter, another SQ's number, an
# impossible byte count). At the end every fault must have taken effect and been handled
# exactly once (per port: SQ recoveries = TX faults, RQ recoveries = RX faults that stop the
# RQ, corrupt CQEs = rx_cqe_bad), and no transfer may have lost or changed a byte.
#
# MANA, rounds in turn: a pktgen run from A to B with a fault injected into A (error CQEs
# of three types, a DMA read fault, a corrupt EQE) or B (a truncated frame, a corrupt EQE),
# after which every packet pktgen handed over must be in B's rx_packets or counted once as
# dropped (sent = received + counted drops, exactly); then a 4 MB TCP transfer each way,
# checksummed, with a fault injected into a random port, among them corrupt TX and RX CQEs
# (tx_bad_sqn, rx_bad_rqn), which stop the queue and are recovered by reopening the
# port's channels. At the end each port's counters must show every fault once (error CQEs,
# truncations, corrupt EQEs, corrupt CQEs each with its reopen).
#
# The serial log must stay clean throughout (vm-run.sh fails on a kernel report; on the
# debug kernel that includes KASAN and lockdep), and on the debug kernel a kmemleak scan at
# the end must find nothing. The watchdog's faults (drop_irqs,
# tx_stall) cost 15 s each and are in 67-recovery.sh and 68-mana-faults.sh.
set -eu
RSNIC_FAMILY=mlx5
. "$RSNIC_ROOT/tests/vm/lib.sh"
. "$RSNIC_ROOT/tests/vm/traffic.sh"
trap traffic_cleanup EXIT

DURATION=${SOAK_SECONDS:-300}
TOTAL=0
# kmemleak (debug kernel): forget what boot left, so that the scan at the end sees the soak.
[ -w /sys/kernel/debug/kmemleak ] && echo clear >/sys/kernel/debug/kmemleak

# inject_knobs: the fault injection knobs of port A (KNOB_A) and of the peer's port B (KNOB_B).
# The soak counts every fault's recovery; a fault within the devlink health reporters' grace
# period (500 ms, mlx5e's) would not be recovered (rsnic.rst, "devlink"), so both ports'
# reporters get none.
inject_knobs() {
	KNOB_A=$(inject_knob "$A")
	KNOB_B=$(inject_knob "$B" peer)
	dl_ports_ab
	health_grace "$PA" 0
	health_grace "$PB" 0
}

# snap_pair TAG: counter snapshots TAG"a" of port A and TAG"b" of the peer's port B.
snap_pair() {
	snap "${1}a" "$A"
	snap "${1}b" "$B" peer
}

# tcp_round LABEL FAULT...: picks one of the FAULTs and a port at random (sets F and P,
# "a" or "b"), injects it a moment into a 4 MB checksummed TCP transfer each way, so that
# it lands under load, and waits for both transfers.
tcp_round() {
	local label=$1 k
	shift
	F=${*:$((RANDOM % $# + 1)):1}
	if ((RANDOM % 2)); then P=a k=$KNOB_A; else P=b k=$KNOB_B; fi
	echo "round $label: $F on port ${P^^}"
	(sleep "0.$((RANDOM % 10))" && echo "$F" >"$k") &
	transfer_check "" peer 10.10.0.2 4 >/dev/null
	transfer_check peer "" 10.10.0.1 4 >/dev/null
	wait
}

# fault_hit WANT EFFECTS PORT FAULT: counts FAULT, injected into PORT ("a" or "b"): one more
# in the caller's injected, and one more in the caller's map WANT (what the faults must have
# caused) at PORT_EFFECT, EFFECT being what FAULT causes by the caller's map EFFECTS.
fault_hit() {
	local -n _want=$1 _effects=$2
	local k=${3}_${_effects[$4]}
	local n=${_want[$k]}
	_want["$k"]=$((n + 1))
	injected=$((injected + 1))
}

soak_mlx5() {
	RSNIC_FAMILY=mlx5
	setup_pair
	inject_knobs
	# fault kind: what it must have caused on the port it hit (tx: an SQ recovery; rx: an RQ
	# recovery; wc: an RQ recovery of a CQE the driver found corrupt, also in rx_cqe_bad; len:
	# rx_cqe_bad only).
	declare -A KIND=(
		["tx_err"]=tx ["tx_err 0x04"]=tx ["tx_bad_sqn"]=tx ["dma_read_fault"]=tx
		["rx_err"]=rx ["rx_err 0x02"]=rx ["rx_err 0x05"]=rx ["rx_bad_wqe_counter"]=wc
		["rx_bad_byte_count"]=len
	)
	FAULTS=("${!KIND[@]}")
	declare -A WANT=([a_tx]=0 [a_rx]=0 [a_wc]=0 [a_len]=0 [b_tx]=0 [b_rx]=0 [b_wc]=0 [b_len]=0)
	snap_pair c0
	rounds=0
	injected=0
	end=$((SECONDS + DURATION))
	while [ "$SECONDS" -lt "$end" ]; do
		tcp_round "$rounds" "${FAULTS[@]}"
		fault_hit WANT KIND "$P" "$F"
		rounds=$((rounds + 1))
	done
	# Let the last recoveries finish, then count.
	sleep 1
	snap_pair c1
	check() {
		local who=$1 s0=$2 s1=$3 p=$4
		local tx=${WANT[${p}_tx]} rx=${WANT[${p}_rx]} wc=${WANT[${p}_wc]} len=${WANT[${p}_len]}
		echo "  $who: faults injected: $tx TX, $rx RX error CQEs, $wc corrupt wqe_counters, $len byte counts"
		assert_eq "$who: faults that took effect" $((tx + rx + wc + len)) \
			"$(delta "$s0" "$s1" dev_faults_injected)"
		assert_eq "$who: SQ recoveries" "$tx" "$(delta "$s0" "$s1" tx_recover)"
		assert_eq "$who: RQ recoveries" $((rx + wc)) "$(delta "$s0" "$s1" rx_recover)"
		assert_eq "$who: corrupt CQEs caught" $((wc + len)) "$(delta "$s0" "$s1" rx_cqe_bad)"
		echo "  $who: packets dropped by SQ recoveries: $(delta "$s0" "$s1" tx_queue_dropped)," \
			"CQEs discarded while an RQ waited: $(delta "$s0" "$s1" rx_cqe_discarded)"
	}
	check A c0a c1a a
	check B c0b c1b b
	echo "soak mlx5: $rounds rounds in $DURATION s (kernel ${KERNEL_VARIANT:-normal}), $injected faults," \
		"$((rounds * 8)) MB moved and verified"
	TOTAL=$((TOTAL + injected))
	teardown_pair
}

soak_mana() {
	RSNIC_FAMILY=mana
	setup_pair
	quiet_pair
	inject_knobs
	# fault: the counter it must have moved on the port it hit.
	declare -A COUNTER=(
		["tx_err"]=tx_cq_err ["tx_err 33"]=tx_cq_err ["tx_err 50"]=tx_cqe_unknown_type
		["dma_read_fault"]=tx_cq_err ["rx_err"]=rx_truncated ["eqe_bad_cq"]=eqe_bad_cq
		["tx_bad_sqn"]=cqe_bad ["rx_bad_rqn"]=cqe_bad
	)
	# pktgen rounds: the faults that hit A's transmit side or B's receive side.
	local pg_a=("tx_err" "tx_err 33" "tx_err 50" "dma_read_fault" "eqe_bad_cq")
	local pg_b=("rx_err" "eqe_bad_cq")
	# TCP rounds: every fault (a corrupt CQE costs a reopen, which TCP rides out).
	local tcp=("${!COUNTER[@]}")
	local -A want=()
	local c f p k n rounds=0 injected=0 packets=0 end
	for c in "${COUNTER[@]}"; do want[a_$c]=0 want[b_$c]=0; done
	snap_pair c0
	end=$((SECONDS + DURATION))
	while [ "$SECONDS" -lt "$end" ]; do
		# A pktgen run with one fault; every packet accounted for.
		if ((RANDOM % 3)); then
			p=a k=$KNOB_A f=${pg_a[$((RANDOM % ${#pg_a[@]}))]}
		else
			p=b k=$KNOB_B f=${pg_b[$((RANDOM % ${#pg_b[@]}))]}
		fi
		echo "round $rounds: pktgen, $f on port ${p^^}"
		snap_pair p0
		echo "$f" >"$k"
		pktgen_run "$A" 2048 10.10.0.2 "$MAC_B" 32
		wait_for "round $rounds: every packet received by B or counted dropped" pg_accounted
		fault_hit want COUNTER "$p" "$f"
		packets=$((packets + PG_SENT))
		# A TCP transfer each way with one fault on a random port.
		tcp_round "$rounds, TCP" "${tcp[@]}"
		fault_hit want COUNTER "$P" "$F"
		rounds=$((rounds + 1))
	done
	sleep 1
	snap_pair c1
	for p in a b; do
		n=0
		for c in tx_cq_err tx_cqe_unknown_type rx_truncated eqe_bad_cq cqe_bad; do
			n=$((n + want[${p}_$c]))
			assert_eq "${p^^}: $c" "${want[${p}_$c]}" "$(delta "c0$p" "c1$p" "$c")"
		done
		assert_eq "${p^^}: faults that took effect" "$n" "$(delta "c0$p" "c1$p" dev_faults_injected)"
		assert_eq "${p^^}: reopens (one per corrupt CQE)" "${want[${p}_cqe_bad]}" \
			"$(delta "c0$p" "c1$p" ch_reopen)"
	done
	echo "soak mana: $rounds rounds in $DURATION s (kernel ${KERNEL_VARIANT:-normal}), $injected faults," \
		"$packets pktgen packets each received or counted dropped," \
		"$((rounds * 8)) MB moved and verified"
	TOTAL=$((TOTAL + injected))
	teardown_pair
}

# pg_accounted: every packet of the pktgen run since snapshots p0a/p0b is in B's rx_packets
# or in one of the drop counters of the faults above (snapshots p1a/p1b then).
pg_accounted() {
	local n c
	snap_pair p1
	n=$(delta p0b p1b rx_packets)
	for c in tx_cq_err tx_cqe_unknown_type tx_queue_dropped; do n=$((n + $(delta p0a p1a "$c"))); done
	n=$((n + $(delta p0b p1b rx_truncated)))
	[ "$n" = "$PG_SENT" ]
}

for fam in ${SOAK_FAMILIES:-mlx5 mana}; do
	case $fam in
	mlx5) soak_mlx5 ;;
	mana) soak_mana ;;
	*) fail "SOAK_FAMILIES: unknown family '$fam'" ;;
	esac
done
echo "soak: $TOTAL faults in all (${SOAK_FAMILIES:-mlx5 mana})"
# On a kernel with kmemleak (the debug kernel), nothing rsnic allocated may be left behind
# (reported objects are at least 5 s old; scan twice to drop transient ones).
kmemleak=/sys/kernel/debug/kmemleak
if [ -w "$kmemleak" ]; then
	sleep 6
	echo scan >"$kmemleak"
	echo scan >"$kmemleak"
	leaks=$(cat "$kmemleak")
	[ -z "$leaks" ] || fail "kmemleak: $(echo "$leaks" | head -n 40)"
	echo "soak: kmemleak clean"
fi
