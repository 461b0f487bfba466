#!/usr/bin/env bash
# Recovery from device faults, injected through the device host's debugfs knob
# (rsnic/rsnic-sim<N>/port<P>/inject, see rsnic.rst "Faults"), each during a TCP transfer
# that must arrive intact:
#   tx_err              the next WQE of A fails with an error CQE: the SQ is stopped, moved
#                       ERR -> RST, drained (in-flight packets dropped and counted), reset
#                       and moved RST -> RDY, the queue woken (tx_recover, tx_cqe_err);
#   tx_bad_sqn          a TX CQE naming another SQ: the SQ is recovered the same way;
#   dma_read_fault      the device's read of A's next packet faults (LOCAL_PROT): the SQ is
#                       recovered the same way;
#   rx_bad_byte_count   an RX CQE claiming more bytes than the buffer: counted, dropped, the
#                       RQ goes on;
#   rx_err              the next frame B receives completes with an error CQE (LOCAL_PROT)
#                       and the device stops the RQ: the RQ is recovered (rx_recover);
#   rx_bad_wqe_counter  a corrupt RX CQE on B: the driver stops the RQ itself (the device
#                       does not), discards what the device writes meanwhile, and recovers
#                       it through RDY -> ERR -> RST -> RDY; B does not poll in a loop
#                       meanwhile or after (the CQ re-arm loop, host-tested in hwif_rq.rs);
#   drop_irqs, tx_stall the TX watchdog's two recoveries (see below);
#   cmd_fail            a recovery whose command fails: the tx reporter stays in error, the
#                       watchdog's timeout is reported and not recovered, and `devlink
#                       health recover` brings the queue back (reopening the channels).
# Each fault is logged once, naming the queue and the syndrome, and each is reported to the
# port's devlink health reporter (tx or rx), whose recovery is the one above. Malformed knob writes are
# refused with EINVAL. MANA has no in-place queue reset (its stopped queues are recovered by
# reopening the channels: 69-reopen), so the test is ConnectX's; MANA's faults are
# 68-mana-faults' and 69-reopen's.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"

[ "$RSNIC_FAMILY" = mlx5 ] || skip "ConnectX's queue recovery (MANA's faults: 68-mana-faults)"
# The TX watchdog after 5 s instead of mlx5e's 15 (tx_timeout_ms): the cases below wait for it.
inject_pair tx_timeout_ms=5000
# The faults below come one after the other, faster than the reporters' grace period (500
# ms, mlx5e's), within which devlink does not recover a second fault (ECANCELED; 81-devlink
# checks that): this test checks each recovery, so both ports' reporters get none.
dl_ports_ab
health_grace "$PA" 0
health_grace "$PB" 0

for bad in " " "bogus" "tx_err 0x1ff" "tx_err 1 2" "rx_bad_wqe_counter 3" "drop_irqs" "drop_irqs -1"; do
	if printf '%s\n' "$bad" >"$IA" 2>/dev/null; then fail "the knob accepted '$bad'"; fi
done
echo "  malformed writes refused"

# fault IFACE NETNS KNOB COMMAND QUEUE COUNTER N: injects COMMAND, sends 2 MB A -> B, waits
# for COUNTER (tx_recover or rx_recover) of IFACE to reach N, checks the device took the
# fault and the log names it once.
fault() {
	local dev=$1 ns=$2 k=$3 cmd=$4 q=$5 counter=$6 n=$7 logs
	snap f0 "$dev" "$ns"
	mark_dmesg
	echo "$cmd" >"$k"
	transfer_check "" peer 10.10.0.2 2
	wait_for "$counter = $n on $dev" eval '[ "$(stat "$dev" "$counter" "$ns")" = "$n" ]'
	snap f1 "$dev" "$ns"
	assert_eq "$cmd: faults the device injected" 1 "$(delta f0 f1 dev_faults_injected)"
	logs=$(dmesg_since_mark | grep -c ": $q[0-9]*: .*: queue recovered" || true)
	assert_eq "$cmd: recoveries logged" 1 "$logs"
	dmesg_since_mark | grep ": $q[0-9]*: " | head -n 1
}

fault "$A" "" "$IA" "tx_err 0x02" sq tx_recover 1
assert_eq "tx_err: error CQEs A's driver saw" 1 "$(delta f0 f1 tx_cqe_err)"
echo "  tx_err: packets dropped by the recovery: $(delta f0 f1 tx_queue_dropped)"

fault "$A" "" "$IA" "tx_bad_sqn" sq tx_recover 2
assert_eq "tx_bad_sqn: error CQEs A's driver saw" 0 "$(delta f0 f1 tx_cqe_err)"

fault "$A" "" "$IA" "dma_read_fault" sq tx_recover 3
assert_eq "dma_read_fault: error CQEs A's driver saw" 1 "$(delta f0 f1 tx_cqe_err)"
assert_eq "dma_read_fault: DMA faults A's device took" 1 "$(delta f0 f1 dev_dma_faults)"

# A byte count larger than any buffer: that packet is dropped and counted, the RQ goes on.
snap f0 "$B" peer
echo rx_bad_byte_count >"$IB"
transfer_check "" peer 10.10.0.2 2
snap f1 "$B" peer
assert_eq "rx_bad_byte_count: faults the device injected" 1 "$(delta f0 f1 dev_faults_injected)"
assert_eq "rx_bad_byte_count: corrupt CQEs B's driver found" 1 "$(delta f0 f1 rx_cqe_bad)"
assert_eq "rx_bad_byte_count: RQ recoveries" 0 "$(delta f0 f1 rx_recover)"

fault "$B" peer "$IB" "rx_err" rq rx_recover 1
assert_eq "rx_err: error CQEs B's driver saw" 1 "$(delta f0 f1 rx_wqe_err)"

fault "$B" peer "$IB" "rx_bad_wqe_counter" rq rx_recover 2
assert_eq "rx_bad_wqe_counter: corrupt CQEs B's driver found" 1 "$(delta f0 f1 rx_cqe_bad)"
echo "  rx_bad_wqe_counter: CQEs discarded until the RQ was back: $(delta f0 f1 rx_cqe_discarded)"
# Idle now: B's NAPI does not run (a CQ re-armed behind unconsumed CQEs fires at once, and
# would keep NAPI polling).
p0=$(stat "$B" rx_polls peer)
sleep 2
p1=$(stat "$B" rx_polls peer)
echo "  B's RX polls over 2 idle seconds: $((p1 - p0))"
[ $((p1 - p0)) -lt 20 ] || fail "B polled $((p1 - p0)) times in 2 idle seconds (interrupt loop)"

# The TX watchdog (ndo_tx_timeout after 5 s of a stopped queue here), on one channel so that
# the fault hits the queue pktgen uses (queue 0):
#   drop_irqs 1  A's next interrupt is lost: its EQ stays disarmed, the channel deaf; the
#                SQ fills and the queue stops. The timeout finds the events waiting on the
#                EQ, consumes them and re-arms it, NAPI runs (ch_eq_rearm).
#   tx_stall     A's transmit engine hangs: no lost interrupt this time, so the channels
#                are reopened, as mlx5e does (the SQ is destroyed, which restarts the
#                engine); what was in flight is dropped and counted.
# pktgen hands every packet over; each one reaches B or is counted as dropped.
quiet_pair
combined=$(channels_of "$A")
ethtool -L "$A" combined 1
timeout_case() {
	local cmd=$1 n=3200
	snap t0a "$A"
	snap t0b "$B" peer
	mark_dmesg
	if [ "$cmd" = "drop_irqs 1" ]; then
		pktgen_deaf "$IA" "$A" "$n" 10.10.0.2 "$MAC_B"
		n=$((n + PG_PINGS))
	else
		echo "$cmd" >"$IA"
		pktgen_run "$A" "$n" 10.10.0.2 "$MAC_B" 32
	fi
	wait_for "$cmd: tx_timeout_recovered" eval '[ "$(stat "$A" tx_timeout_recovered)" -ge "$((TR + 1))" ]'
	TR=$((TR + 1))
	# The recovery (a reopen is a work item of its own) has run when every packet is
	# accounted for.
	accounted() {
		snap t1a "$A"
		snap t1b "$B" peer
		[ "$PG_SENT" = $(($(delta t0b t1b dev_rx_packets) + $(delta t0a t1a tx_queue_dropped))) ]
	}
	wait_for "$cmd: handed over = received by B + dropped by A" accounted
	sleep 0.3
	snap t1a "$A"
	snap t1b "$B" peer
	assert_eq "$cmd: packets pktgen handed over" "$n" "$PG_SENT"
	assert_eq "$cmd: transmit timeouts" 1 "$(delta t0a t1a tx_timeout)"
	assert_eq "$cmd: handed over = received by B + dropped by A" "$PG_SENT" \
		$(($(delta t0b t1b dev_rx_packets) + $(delta t0a t1a tx_queue_dropped)))
	echo "  $cmd: dropped by the recovery: $(delta t0a t1a tx_queue_dropped)"
	dmesg_since_mark | grep -E "NETDEV WATCHDOG|: sq0: " | head -n 3
}
TR=$(stat "$A" tx_timeout_recovered)
timeout_case "drop_irqs 1"
assert_eq "drop_irqs: lost interrupts found" 1 "$(delta t0a t1a ch_eq_rearm)"
assert_eq "drop_irqs: interrupts the device lost" "$PG_LOST" "$(delta t0a t1a dev_irqs_lost)"
assert_eq "drop_irqs: SQ resets" 0 "$(delta t0a t1a tx_recover)"
timeout_case "tx_stall"
assert_eq "tx_stall: lost interrupts found" 0 "$(delta t0a t1a ch_eq_rearm)"
assert_eq "tx_stall: SQ resets" 0 "$(delta t0a t1a tx_recover)"
assert_eq "tx_stall: channel reopens" 1 "$(delta t0a t1a ch_reopen)"

# Every recovery so far went through the ports' devlink health reporters: A's tx reporter
# counts its SQ resets and its recovered timeouts, B's rx reporter its RQ resets, one error
# each.
for c in error recover; do
	assert_eq "A's tx reporter: $c = tx_recover + tx_timeout_recovered" \
		$(($(stat "$A" tx_recover) + $(stat "$A" tx_timeout_recovered))) "$(health_rep "$PA" tx "$c")"
	assert_eq "B's rx reporter: $c = rx_recover" "$(stat "$B" rx_recover peer)" "$(health_rep "$PB" rx "$c")"
done

# A recovery whose command fails (MODIFY_SQ, 0x905) is logged and leaves the queue stopped
# and A's tx reporter in error. As with mlx5e's reporters, devlink recovers nothing
# automatically while a reporter is in error: the TX watchdog's timeout (5 s later, and
# every 5 s while the queue stays stopped) is reported, counted as an error and not
# recovered. `devlink health recover` reopens the channels; the queue is back.
snap t0a "$A"
E0=$(health_rep "$PA" tx error)
R0=$(health_rep "$PA" tx recover)
mark_dmesg
echo "cmd_fail 0x905" >"$IA"
echo "tx_err" >"$IA"
ping -c 1 -W 1 10.10.0.2 >/dev/null || true
wait_for "a failed recovery logged" eval 'dmesg_since_mark | grep -q "sq0: .*recovery failed"'
echo "cmd_fail 0" >"$IA"
assert_eq "cmd_fail: tx reporter state" error "$(health_rep "$PA" tx state)"
wait_for "cmd_fail: the transmit timeout reported, not recovered" \
	eval 'dmesg_since_mark | grep -q "sq0: transmit timeout: not recovered"'
snap t1a "$A"
[ "$(delta t0a t1a tx_timeout)" -ge 1 ] || fail "cmd_fail: no transmit timeout"
assert_eq "cmd_fail: timeouts recovered" 0 "$(delta t0a t1a tx_timeout_recovered)"
assert_eq "cmd_fail: SQ resets" 0 "$(delta t0a t1a tx_recover)"
[ "$(health_rep "$PA" tx error)" -ge $((E0 + 2)) ] ||
	fail "cmd_fail: tx reporter errors $(health_rep "$PA" tx error), expected at least $((E0 + 2))"
assert_eq "cmd_fail: tx reporter recoveries" "$R0" "$(health_rep "$PA" tx recover)"
if ping -c 1 -W 1 10.10.0.2 >/dev/null; then fail "cmd_fail: A's queue works before the recover"; fi
devlink health recover "$PA" reporter tx
assert_eq "cmd_fail: tx reporter state after devlink health recover" healthy "$(health_rep "$PA" tx state)"
assert_eq "cmd_fail: tx reporter recoveries" $((R0 + 1)) "$(health_rep "$PA" tx recover)"
wait_for "cmd_fail: the channels reopened" \
	eval 'dmesg_since_mark | grep -q "devlink health recover: reopening the channels"'
wait_for "cmd_fail: A's queue is back" eval 'ping -c 1 -W 1 10.10.0.2 >/dev/null'
dmesg_since_mark | grep -E "sq0: |reopening" | head -n 4
ethtool -L "$A" combined "$combined"

# Everything works as before, both ways.
ping -c 3 -i 0.2 -W 2 10.10.0.2 >/dev/null
ip netns exec peer ping -c 3 -i 0.2 -W 2 10.10.0.1 >/dev/null
transfer_check peer "" 10.10.0.1 2
