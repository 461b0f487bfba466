#!/usr/bin/env bash
# Faults no queue reset covers, recovered by reopening the port's channels (rsnic.rst,
# "Faults and recovery"), and a device that stops altogether:
#   ConnectX  tx_err aimed at the XDP_TX SQ (XDP_TX on B makes it B's only transmitter):
#             the XDP SQ stops, B's channels are reopened (ch_reopen), XDP_TX works again;
#             dev_stop on A under pktgen: the TX watchdog (5 s here, tx_timeout_ms; 15 by
#             default) finds no lost interrupt and reopens the channels, as mlx5e does,
#             and the device resumes; tx_bad_owner
#             on A (a TX CQE with the previous pass's owner bit hides every completion
#             behind it): the watchdog's reopen makes the CQ again and the stream goes on;
#   MANA      tx_bad_sqn (a TX CQE naming another queue) on A, rx_bad_rqn on B and
#             tx_bad_owner (a TX CQE whose owner count reads as an overflow) on A: the
#             queue stops, the channels are reopened, the stream goes on; tx_stall and
#             dev_stop on A: the watchdog finds no lost interrupt and reopens the channels;
#             cmd_fail on the HWC's CREATE_WQ_OBJ: a channel change fails cleanly, and works
#             once the command does.
# Each reopen is logged once, naming the channel and the fault.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$(dirname "$0")/xdp.sh"
trap traffic_cleanup EXIT

# The TX watchdog after 5 s instead of 15 (tx_timeout_ms): five cases wait for it.
inject_pair tx_timeout_ms=5000
# Each fault below that stops a regular queue is reported to the port's devlink health
# reporter, whose recovery asks for the reopen. They come one after the other, faster than
# the reporters' grace period (500 ms, mlx5e's), within which devlink would not recover a
# second one (81-devlink checks that): this test checks each reopen, so both ports'
# reporters get no grace period.
dl_ports_ab
health_grace "$PA" 0
health_grace "$PB" 0
quiet_pair

# reopened IFACE NETNS N: IFACE's ch_reopen reached N.
reopened() {
	[ "$(stat "$1" ch_reopen "$2")" = "$3" ]
}

# reopen_logged WHAT: exactly one reopen was logged since mark_dmesg, for WHAT.
reopen_logged() {
	local n
	n=$(dmesg_since_mark | grep -c ": ch[0-9]*: $1: reopening the channels" || true)
	assert_eq "reopens logged for '$1'" 1 "$n"
	dmesg_since_mark | grep -E ": (ch|sq|rq)[0-9]*: " | head -n 2
}

# wire_balanced: everything A's device put on the wire since snapshots w0a/w0b reached B's
# device (delivered, or dropped by it: B_DEV_DROPS), and B's driver accounted for each
# frame its device delivered (to the stack, or dropped: B_DROPS); snapshots w1a/w1b.
B_DEV_DROPS="$C_NOWQE dev_rx_no_rq_drops dev_rx_stopped dev_rx_vport_filtered"
B_DROPS="cqe_bad rx_cqe_discarded rx_truncated"
wire_balanced() {
	local n d c
	snap w1a "$A"
	snap w1b "$B" peer
	n=$(delta w0b w1b rx_packets)
	for c in $B_DROPS; do n=$((n + $(delta w0b w1b "$c"))); done
	d=$(delta w0b w1b dev_rx_packets)
	for c in $B_DEV_DROPS; do d=$((d + $(delta w0b w1b "$c"))); done
	[ "$(delta w0a w1a dev_tx_packets)" = "$d" ] && [ "$(delta w0b w1b dev_rx_packets)" = "$n" ]
}

# wire_report: the counters wire_balanced compares (WAIT_DIAG, when it times out).
wire_report() {
	local c
	echo "A: dev_tx_packets $(delta w0a w1a dev_tx_packets), tx_queue_dropped $(delta w0a w1a tx_queue_dropped)"
	for c in dev_rx_packets $B_DEV_DROPS rx_packets $B_DROPS; do
		echo "B: $c $(delta w0b w1b "$c")"
	done
}
WAIT_DIAG=wire_report

# pg_fault IFACE_KNOB COMMAND N: arms COMMAND, runs pktgen A -> B (N packets, queue 0) and
# waits until the wire balances; PG_SENT is what pktgen handed to A's driver.
pg_fault() {
	snap w0a "$A"
	snap w0b "$B" peer
	mark_dmesg
	echo "$2" >"$1"
	pktgen_run "$A" "$3" 10.10.0.2 "$MAC_B" 32
	[ "$PG_SENT" -ge "$3" ] || fail "$2: pktgen handed over $PG_SENT of $3 packets"
	wait_for "$2: the wire balances" wire_balanced
}

# stream_ok WHAT: a clean pktgen run after the fault: every packet reaches B's stack.
stream_ok() {
	snap w0a "$A"
	snap w0b "$B" peer
	pktgen_run "$A" 1024 10.10.0.2 "$MAC_B" 32
	wait_for "$1: the stream after it balances" wire_balanced
	assert_eq "$1: after it, B received every packet" "$PG_SENT" "$(delta w0b w1b rx_packets)"
	assert_eq "$1: after it, A dropped nothing" 0 "$(delta w0a w1a tx_queue_dropped)"
}

case $RSNIC_FAMILY in
mlx5)
	if [ -e "$XDP_DIR/MISSING" ] || [ ! -e "$XDP_DIR/xdp_tx.o" ]; then
		fail "XDP tools not built (make xdp-tools): the XDP SQ case needs xdp_tx.o"
	else
		# B bounces every frame with XDP_TX: its XDP SQ is its only transmitter, so B's next
		# WQE is an XDP one.
		xdp_attach "$B" peer xdp_tx
		R0=$(stat "$B" ch_reopen peer)
		snap x0b "$B" peer
		mark_dmesg
		echo tx_err >"$IB"
		pktgen_run "$A" 2048 10.10.0.2 "$MAC_B" 32
		wait_for "tx_err on the XDP SQ: B's channels reopened" reopened "$B" peer $((R0 + 1))
		snap x1b "$B" peer
		assert_eq "tx_err on the XDP SQ: faults B's device injected" 1 "$(delta x0b x1b dev_faults_injected)"
		assert_eq "tx_err on the XDP SQ: regular SQ recoveries" 0 "$(delta x0b x1b tx_recover)"
		reopen_logged "XDP SQ fault"
		# XDP_TX works again: everything B's device delivers goes back out.
		sleep 1
		snap x0a "$A"
		snap x0b "$B" peer
		pktgen_run "$A" 1024 10.10.0.2 "$MAC_B" 32
		bounced() {
			snap x1a "$A"
			snap x1b "$B" peer
			[ "$(delta x0b x1b rx_xdp_tx_xmit)" = "$(delta x0b x1b dev_rx_packets)" ] &&
				[ "$(delta x0b x1b dev_tx_packets)" = "$(delta x0b x1b rx_xdp_tx_xmit)" ]
		}
		# (What each side counted, for a wait that never closed.)
		bounce_diag() {
			echo "  B: dev_rx_packets +$(delta x0b x1b dev_rx_packets), rx_packets +$(delta x0b x1b rx_packets), rx_xdp_tx_xmit +$(delta x0b x1b rx_xdp_tx_xmit), dev_tx_packets +$(delta x0b x1b dev_tx_packets); A: dev_tx_packets +$(delta x0a x1a dev_tx_packets); pktgen handed over $PG_SENT"
			echo "  B's counters that moved:"
			deltas x0b x1b | awk '$2 != 0 { print "    " $1, $2 }'
		}
		WAIT_DIAG=bounce_diag wait_for "XDP_TX after the reopen: every frame bounced" bounced
		assert_eq "XDP_TX after the reopen: frames B's device delivered" "$PG_SENT" \
			"$(delta x0b x1b dev_rx_packets)"
		assert_eq "XDP_TX after the reopen: lost" 0 \
			$(($(delta x0b x1b rx_xdp_tx_err) + $(delta x0b x1b rx_xdp_tx_full)))
		echo "  XDP_TX after the reopen: $PG_SENT of $PG_SENT frames bounced"
		xdp_detach "$B" peer
	fi

	# A device that stops altogether: only the TX watchdog notices (no completion, no
	# interrupt); it finds no lost interrupt and reopens the channels, which restarts the
	# device.
	combined=$(channels_of "$A")
	ethtool -L "$A" combined 1
	TR=$(stat "$A" tx_timeout_recovered)
	snap w0a "$A"
	snap w0b "$B" peer
	mark_dmesg
	echo dev_stop >"$IA"
	pktgen_run "$A" 3200 10.10.0.2 "$MAC_B" 32
	wait_for "dev_stop: tx_timeout_recovered" eval '[ "$(stat "$A" tx_timeout_recovered)" -ge "$((TR + 1))" ]'
	wait_for "dev_stop: the wire balances" wire_balanced
	assert_eq "dev_stop: every packet handed over was sent or dropped by the reopen" "$PG_SENT" \
		$(($(delta w0a w1a dev_tx_packets) + $(delta w0a w1a tx_queue_dropped)))
	assert_eq "dev_stop: B received what A's device sent" "$(delta w0a w1a dev_tx_packets)" \
		"$(delta w0b w1b rx_packets)"
	assert_eq "dev_stop: transmit timeouts" 1 "$(delta w0a w1a tx_timeout)"
	assert_eq "dev_stop: lost interrupts found" 0 "$(delta w0a w1a ch_eq_rearm)"
	assert_eq "dev_stop: SQ recoveries" 0 "$(delta w0a w1a tx_recover)"
	assert_eq "dev_stop: channel reopens" 1 "$(delta w0a w1a ch_reopen)"
	assert_eq "dev_stop: faults A's device injected" 1 "$(delta w0a w1a dev_faults_injected)"
	reopen_logged "transmit timeout, no lost interrupt"
	stream_ok "dev_stop"

	# A TX CQE carrying the previous pass's owner bit: A's driver reads it as not yet
	# written and sees no completion past it; the queue fills, the watchdog finds no lost
	# interrupt and reopens the channels, and the new CQ starts clean. The packets whose
	# CQEs hid behind it went out but are counted dropped (the driver cannot know), so A's
	# counts bound the wire from both sides.
	TR=$(stat "$A" tx_timeout_recovered)
	snap w0a "$A"
	snap w0b "$B" peer
	mark_dmesg
	echo tx_bad_owner >"$IA"
	pktgen_run "$A" 3200 10.10.0.2 "$MAC_B" 32
	wait_for "tx_bad_owner: tx_timeout_recovered" eval '[ "$(stat "$A" tx_timeout_recovered)" -ge "$((TR + 1))" ]'
	WAIT_DIAG=wire_report wait_for "tx_bad_owner: the wire balances" wire_balanced
	sent=$(delta w0a w1a dev_tx_packets)
	dropped=$(delta w0a w1a tx_queue_dropped)
	[ "$sent" -le "$PG_SENT" ] && [ "$PG_SENT" -le $((sent + dropped)) ] ||
		fail "tx_bad_owner: handed over $PG_SENT, A's device sent $sent, A dropped $dropped"
	assert_eq "tx_bad_owner: B received what A's device sent" "$sent" "$(delta w0b w1b rx_packets)"
	assert_eq "tx_bad_owner: transmit timeouts" 1 "$(delta w0a w1a tx_timeout)"
	assert_eq "tx_bad_owner: channel reopens" 1 "$(delta w0a w1a ch_reopen)"
	assert_eq "tx_bad_owner: faults A's device injected" 1 "$(delta w0a w1a dev_faults_injected)"
	echo "  tx_bad_owner: handed over $PG_SENT, sent $sent, counted dropped $dropped"
	reopen_logged "transmit timeout, no lost interrupt"
	stream_ok "tx_bad_owner"

	ethtool -L "$A" combined "$combined"
	;;
mana)
	N=2048
	R0=$(stat "$A" ch_reopen)
	pg_fault "$IA" tx_bad_sqn "$N"
	wait_for "tx_bad_sqn: A's channels reopened" reopened "$A" "" $((R0 + 1))
	snap w1a "$A"
	assert_eq "tx_bad_sqn: corrupt CQEs A's driver found" 1 "$(delta w0a w1a cqe_bad)"
	# A packet whose CQE was corrupt went out but is counted dropped (the driver cannot
	# know), so A's counts bound the wire from both sides.
	sent=$(delta w0a w1a dev_tx_packets)
	dropped=$(delta w0a w1a tx_queue_dropped)
	[ "$sent" -le "$PG_SENT" ] && [ "$PG_SENT" -le $((sent + dropped)) ] ||
		fail "tx_bad_sqn: pktgen handed over $PG_SENT, A's device sent $sent, A dropped $dropped"
	echo "  tx_bad_sqn: $PG_SENT handed over, $sent sent, $dropped dropped by the reopen"
	reopen_logged "SQ fault"
	stream_ok tx_bad_sqn

	R0=$(stat "$B" ch_reopen peer)
	pg_fault "$IB" rx_bad_rqn "$N"
	wait_for "rx_bad_rqn: B's channels reopened" reopened "$B" peer $((R0 + 1))
	wait_for "rx_bad_rqn: the wire balances" wire_balanced
	assert_eq "rx_bad_rqn: corrupt CQEs B's driver found" 1 "$(delta w0b w1b cqe_bad)"
	echo "  rx_bad_rqn: B's device delivered $(delta w0b w1b dev_rx_packets)," \
		"B's stack got $(delta w0b w1b rx_packets), $(delta w0b w1b rx_cqe_discarded) discarded by the reopen," \
		"$(delta w0b w1b dev_rx_stopped) dropped by B's device meanwhile"
	reopen_logged "RQ fault"
	stream_ok rx_bad_rqn

	# A TX CQE whose owner count is neither this pass's nor the last: an overflow to the
	# driver, and the SQ stops (counted in cq_overflow).
	R0=$(stat "$A" ch_reopen)
	pg_fault "$IA" tx_bad_owner "$N"
	wait_for "tx_bad_owner: A's channels reopened" reopened "$A" "" $((R0 + 1))
	snap w1a "$A"
	assert_eq "tx_bad_owner: CQ overflows A's driver found" 1 "$(delta w0a w1a cq_overflow)"
	reopen_logged "SQ fault"
	stream_ok tx_bad_owner

	# The TX watchdog on one channel, so that the stalled queue is pktgen's queue 0.
	combined=$(channels_of "$A")
	ethtool -L "$A" combined 1
	for knob in tx_stall dev_stop; do
		R0=$(stat "$A" ch_reopen)
		TR=$(stat "$A" tx_timeout_recovered)
		pg_fault "$IA" "$knob" 3200
		wait_for "$knob: A's channels reopened" reopened "$A" "" $((R0 + 1))
		snap w1a "$A"
		assert_eq "$knob: transmit timeouts" 1 "$(delta w0a w1a tx_timeout)"
		assert_eq "$knob: timeouts recovered" 1 "$(delta w0a w1a tx_timeout_recovered)"
		assert_eq "$knob: lost interrupts found" 0 "$(delta w0a w1a ch_eq_rearm)"
		assert_eq "$knob: every packet A's device sent reached B" "$(delta w0a w1a dev_tx_packets)" \
			"$(delta w0b w1b rx_packets)"
		assert_eq "$knob: every packet handed over was sent or dropped" "$PG_SENT" \
			$(($(delta w0a w1a dev_tx_packets) + $(delta w0a w1a tx_queue_dropped)))
		reopen_logged "transmit timeout, no lost interrupt"
		stream_ok "$knob"
	done

	# A command that fails: the channel change is refused, the old channels are gone with
	# it (restoring needs the same command); once the command works, so does the port.
	echo "cmd_fail 0x20004" >"$IA"
	mark_dmesg
	if ethtool -L "$A" combined "$combined" 2>/tmp/cmdfail.err; then
		fail "ethtool -L succeeded while MANA_CREATE_WQ_OBJ fails"
	fi
	echo "  ethtool -L with CREATE_WQ_OBJ failing: $(head -n1 /tmp/cmdfail.err)"
	dmesg_since_mark | grep -m1 "reopening channels failed" >/dev/null ||
		fail "the failed channel change was not logged"
	echo "cmd_fail 0" >"$IA"
	ethtool -L "$A" combined "$combined"
	stream_ok "cmd_fail"
	;;
esac

# Everything works as before, both ways.
ping -c 3 -i 0.2 -W 2 10.10.0.2 >/dev/null
ip netns exec peer ping -c 3 -i 0.2 -W 2 10.10.0.1 >/dev/null
transfer_check peer "" 10.10.0.1 2
