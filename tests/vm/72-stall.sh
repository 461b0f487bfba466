#!/usr/bin/env bash
# A device that stalls for a while and comes back by itself, shorter than the TX watchdog
# (15 s): the inject knob's timed faults (rsnic.rst "Fault injection"), both families, under
# pktgen from A to B on one queue. Each write returns when its fault has ended.
#   tx_stall 2000 on A  A's SQs execute nothing for 2 s: the ring fills, the queue stops and
#                       pktgen waits; then what was posted goes out. Nothing is dropped or
#                       reset, no timeout: B receives every packet pktgen handed over.
#   dev_stop 2000 on A  the same for A's whole data path.
#   dev_stop 2000 on B  B's data path stops: the frames arriving meanwhile are dropped by
#                       B's device and counted (dev_rx_stopped), every other one reaches B's
#                       stack; nothing is reset.
# After each, a stream of 1024 packets arrives whole: the queues are back in service.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
trap traffic_cleanup EXIT

setup_pair
quiet_pair
IA=$(inject_knob "$A")
IB=$(inject_knob "$B" peer)
ethtool -L "$A" combined 1
case $RSNIC_FAMILY in
mlx5) STOPPED=tx_queue_stopped RESETS="tx_recover ch_reopen" ;;
mana) STOPPED=stop_queue RESETS="ch_reopen" ;;
esac
N=3200
MS=2000

# received: B's stack and B's device drops account for every packet pktgen handed over.
received() {
	snap s1a "$A"
	snap s1b "$B" peer
	[ "$(($(delta s0b s1b rx_packets) + $(delta s0b s1b dev_rx_stopped) +
		$(delta s0b s1b "$C_NOWQE")))" = "$PG_SENT" ]
}

# stall_case KNOB WHO SIDE: arms "WHO MS" on KNOB (of SIDE, A or B) in the background,
# runs pktgen (N packets) meanwhile, waits for the write to return (the fault ended) and for
# every packet to be accounted for.
stall_case() {
	local knob=$1 cmd="$2 $MS" side=$3 t0 t1
	snap s0a "$A"
	snap s0b "$B" peer
	rm -f /tmp/stall.done /tmp/stall.failed
	t0=$(date +%s%N)
	# Not a child of this shell: its end must not signal the shell while pktgen's start
	# waits (a signal stops pktgen's run).
	# The time goes to a file renamed into place once written: the wait below tests for
	# the name, and a redirection creates it empty before date has written (a run read
	# an empty time and reported -1796421856953 ms).
	( { echo "$cmd" >"$knob" && date +%s%N >/tmp/stall.t && mv /tmp/stall.t /tmp/stall.done ||
		touch /tmp/stall.failed; } & )
	sleep 0.2
	pktgen_run "$A" "$N" 10.10.0.2 "$MAC_B" 32
	wait_for "$cmd: the write returned" eval '[ -e /tmp/stall.done ] || [ -e /tmp/stall.failed ]'
	[ -e /tmp/stall.done ] || fail "$cmd: the knob refused the command"
	t1=$(cat /tmp/stall.done)
	# The knob sleeps MS ms of the guest's jiffies (msleep); the wall clock read here can
	# drift from them under TCG (ticks delivered late, the clocksource watchdog moving the
	# guest from the TSC to the HPET mid-run; once, in a clean-clone run, a 2000 ms write
	# measured less), so a tenth of MS is allowed.
	local el=$(((t1 - t0) / 1000000))
	echo "  $cmd: the write returned after $el ms"
	[ "$el" -ge $((MS * 9 / 10)) ] || fail "$cmd: the write returned after $el ms, before $MS ms"
	[ "$PG_SENT" -ge "$N" ] || fail "$cmd: pktgen handed over $PG_SENT of $N packets"
	wait_for "$cmd: every packet received by B or counted dropped" received
	local c
	for c in tx_timeout tx_queue_dropped $RESETS; do
		assert_eq "$cmd: $c on A" 0 "$(delta s0a s1a "$c")"
	done
	for c in rx_recover $RESETS; do
		assert_eq "$cmd: $c on B" 0 "$(delta s0b s1b "$c")"
	done
	if [ "$side" = A ]; then
		assert_eq "$cmd: B received every packet" "$PG_SENT" "$(delta s0b s1b rx_packets)"
		[ "$(delta s0a s1a "$STOPPED")" -ge 1 ] || fail "$cmd: A's queue never stopped"
	else
		[ "$(delta s0b s1b dev_rx_stopped)" -ge 1 ] || fail "$cmd: B's device dropped nothing"
	fi
	if [ "$2" = dev_stop ]; then
		assert_eq "$cmd: faults injected on $side" 1 \
			"$(delta "s0${side,,}" "s1${side,,}" dev_faults_injected)"
	fi
	echo "  $cmd on $side: pktgen $PG_SENT packets, B received $(delta s0b s1b rx_packets)," \
		"B's device dropped $(delta s0b s1b dev_rx_stopped) while stopped;" \
		"A's queue stopped $(delta s0a s1a "$STOPPED") times"
	# Back in service.
	snap s0a "$A"
	snap s0b "$B" peer
	pktgen_run "$A" 1024 10.10.0.2 "$MAC_B" 32
	wait_for "$cmd: the stream after the stall received" received
	assert_eq "$cmd: packets after the stall B's stack received" "$PG_SENT" \
		"$(delta s0b s1b rx_packets)"
}

stall_case "$IA" tx_stall A
stall_case "$IA" dev_stop A
stall_case "$IB" dev_stop B
