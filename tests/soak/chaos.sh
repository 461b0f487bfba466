#!/usr/bin/env bash
# make soak: a chaos soak of the ConnectX recovery paths (not part of make test). For
# SOAK_SECONDS (default 600), round after round: a 4 MB TCP transfer each way between the
# two ports of a ConnectX pair, checksummed, while a fault picked at random is injected into
# a random port through the device host's knob (rsnic.rst, "Fault injection"): TX and RX
# error CQEs with several syndromes, corrupt CQEs (wrong wqe_counter, another SQ's number,
# an impossible byte count). At the end every fault must have taken effect and been
# handled exactly once (per port: SQ recoveries = TX faults, RQ recoveries = RX faults
# that stop the RQ, corrupt CQEs = rx_cqe_bad), no transfer may have lost or
# changed a byte, and the serial log must be clean (vm-run.sh fails on a kernel report;
# on the debug kernel that includes KASAN, lockdep and kmemleak).
# The watchdog's faults (drop_irqs, tx_stall) cost 15 s each and are in 67-recovery.sh.
set -eu
RSNIC_FAMILY=mlx5
. "$RSNIC_ROOT/tests/vm/lib.sh"
. "$RSNIC_ROOT/tests/vm/traffic.sh"
trap traffic_cleanup EXIT

DURATION=${SOAK_SECONDS:-600}
setup_pair
knob() { echo "$(dirname "$(model_counters_file "$@")")/inject"; }
KNOB_A=$(knob "$A")
KNOB_B=$(knob "$B" peer)
# fault kind: what it must have caused on the port it hit (tx: an SQ recovery; rx: an RQ
# recovery; wc: an RQ recovery of a CQE the driver found corrupt, also in rx_cqe_bad; len:
# rx_cqe_bad only).
declare -A KIND=(
	["tx_err"]=tx ["tx_err 0x04"]=tx ["tx_bad_sqn"]=tx
	["rx_err"]=rx ["rx_err 0x02"]=rx ["rx_err 0x05"]=rx ["rx_bad_wqe_counter"]=wc
	["rx_bad_byte_count"]=len
)
FAULTS=("${!KIND[@]}")
declare -A WANT=([a_tx]=0 [a_rx]=0 [a_wc]=0 [a_len]=0 [b_tx]=0 [b_rx]=0 [b_wc]=0 [b_len]=0)
snap c0a "$A"
snap c0b "$B" peer
rounds=0
injected=0
end=$((SECONDS + DURATION))
while [ "$SECONDS" -lt "$end" ]; do
	f=${FAULTS[$((RANDOM % ${#FAULTS[@]}))]}
	if ((RANDOM % 2)); then p=a k=$KNOB_A; else p=b k=$KNOB_B; fi
	echo "round $rounds: $f on port ${p^^}"
	# Injected a moment into the transfer, so it lands under load.
	(sleep "0.$((RANDOM % 10))" && echo "$f" >"$k") &
	transfer_check "" peer 10.10.0.2 4 >/dev/null
	transfer_check peer "" 10.10.0.1 4 >/dev/null
	wait
	WANT[${p}_${KIND[$f]}]=$((WANT[${p}_${KIND[$f]}] + 1))
	injected=$((injected + 1))
	rounds=$((rounds + 1))
done
# Let the last recoveries finish, then count.
sleep 1
snap c1a "$A"
snap c1b "$B" peer
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
echo "soak: $rounds rounds in $DURATION s (kernel ${KERNEL_VARIANT:-normal}), $injected faults," \
	"$((rounds * 8)) MB moved and verified"
