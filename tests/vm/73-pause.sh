#!/usr/bin/env bash
# ethtool -a / -A / -I -a: link flow control (802.3x global pause) and its PAUSE frame
# counters.
#
# Both families run the same checks. mlx5: the driver reads and writes PFCC and reads PPCNT's
# IEEE 802.3 group. MANA: upstream mana has no pause request (a VF has no say over the link's
# flow control); rsnic's driver uses the model's own HWC requests, RSNIC_SET_PAUSE and
# RSNIC_QUERY_PAUSE (setting and PAUSE frame counters). Both ports show the device's defaults
# (autoneg off, rx on, tx on; the MANA device host turns both on as ConnectX ships); -A
# changes each direction and reads back what the device reports; autoneg on is refused
# (EINVAL, the reason in the kernel log); a setting survives ip link down/up and a channel
# reopen. Under pktgen from A into B with a small RX ring (128) and one channel on B, B's
# receive side runs short: B sends PAUSE frames (its tx_pause_frames), A receives every one of them (its rx_pause_frames), the driver's counts
# equal the device model's own (debugfs dev_*_pause_frames), and with A honouring them B
# drops nothing unless B's stall prevention stopped its PAUSE frames. With A's rx pause off
# the PAUSE frames are still sent and received (A ignores them), and on ConnectX B's
# rx_out_of_buffer (its Q counter) equals the model's drops and `ip -s -s link`'s rx missed
# count shows it (as mlx5e's ndo_get_stats64). With B's tx pause off, no
# PAUSE frame is sent or received at all. A MANA device without rsnic's requests (a real
# MANA's QUERY_DEV_CONFIG) leaves its ports without pause operations or loopback.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
# The ethtool operations are family-independent (port/ethtool.rs); MANA's two requests are checked
# on the normal kernel.
one_family_on_debug

# in_ns NETNS COMMAND...: COMMAND, in NETNS unless it is empty.
in_ns() {
	local netns=$1
	shift
	if [ -n "$netns" ]; then ip netns exec "$netns" "$@"; else "$@"; fi
}

# pause_of IFACE [NETNS]: "AUTONEG RX TX" as ethtool -a shows them (on/off).
pause_of() {
	in_ns "${2:-}" ethtool -a "$1" >/tmp/pause.out 2>&1 || {
		cat /tmp/pause.out >&2
		fail "ethtool -a $1 failed"
	}
	awk '$1 == "Autonegotiate:" { a = $2 } $1 == "RX:" { r = $2 } $1 == "TX:" { t = $2 }
		END { print a, r, t }' /tmp/pause.out
}

# pause_frames IFACE [NETNS]: "TX RX", the PAUSE frame counters of ethtool -I -a.
pause_frames() {
	in_ns "${2:-}" ethtool -I -a "$1" >/tmp/pause.stats 2>&1 || {
		cat /tmp/pause.stats >&2
		fail "ethtool -I -a $1 failed"
	}
	awk '$1 == "tx_pause_frames:" { t = $2 } $1 == "rx_pause_frames:" { r = $2 }
		END { if (t == "" || r == "") exit 1; print t, r }' /tmp/pause.stats || {
		cat /tmp/pause.stats >&2
		fail "ethtool -I -a $1 reports no pause statistics"
	}
}

setup_pair

# Defaults: ConnectX ships with global pause on both ways (the MANA device host sets the same);
# no pause autonegotiation.
assert_eq "A pause at load (autoneg rx tx)" "off on on" "$(pause_of "$A")"
assert_eq "B pause at load (autoneg rx tx)" "off on on" "$(pause_of "$B" peer)"
# (Through a variable: a failure inside a here-string's substitution would not stop us.)
at_load=$(pause_frames "$A")
read -r tx rx <<<"$at_load"
echo "  A PAUSE frames at load: tx $tx rx $rx"

# Each direction on its own, and back; the other port is untouched.
for set in "rx off tx off" "rx on tx off" "rx off tx on" "rx on tx on"; do
	read -r _ r _ t <<<"$set"
	# shellcheck disable=SC2086 # $set is the arguments
	ethtool -A "$A" $set
	assert_eq "A after -A $set" "off $r $t" "$(pause_of "$A")"
done
assert_eq "B unaffected" "off on on" "$(pause_of "$B" peer)"

# autoneg on is refused, with the reason in the kernel log, and changes nothing.
ethtool -A "$A" rx off
mark_dmesg
if ethtool -A "$A" autoneg on 2>/tmp/pause.err; then fail "ethtool -A autoneg on was accepted"; fi
echo "  refused: ethtool -A $A autoneg on -> $(tr '\n' ' ' </tmp/pause.err)"
grep -q "Invalid argument" /tmp/pause.err || fail "autoneg on: not refused with EINVAL"
dmesg_since_mark | grep -q "pause autonegotiation is not supported" ||
	fail "autoneg on: no reason in the kernel log"
assert_eq "A after the refusal" "off off on" "$(pause_of "$A")"

# The setting is the port's: it survives the interface going down and up, and a reopen of
# the channels (a channel-count and an RX ring change).
ip link set "$A" down
ip link set "$A" up
wait_for "carrier on $A" eval '[ "$(carrier "$A")" = 1 ]'
assert_eq "A after down/up" "off off on" "$(pause_of "$A")"
ch=$(channels_of "$A")
ethtool -L "$A" combined "$([ "$ch" = 1 ] && echo 2 || echo 1)"
ethtool -G "$A" rx 256
assert_eq "A after a channel reopen" "off off on" "$(pause_of "$A")"
ethtool -L "$A" combined "$ch"
ethtool -G "$A" rx 512
wait_for "carrier on $A" eval '[ "$(carrier "$A")" = 1 ]'

# Traffic. A small RX ring on B, one channel so that every frame lands in that RQ. B sends
# PAUSE while its RQ has fewer than min(64, ring / 2) WQEs posted, checked before each WQE
# A executes; one MPWQE of A's carries up to 58 frames (15 WQEBBs), so a ring of 128 (not
# the minimum, 64) is the smallest on which honoured PAUSE frames lose nothing. On MANA, 128
# is the minimum: B pauses below min(64, 128 / 2) = 64 posted one-BU WQEs and each WQE of
# A's carries one frame (no TSO from pktgen), so honoured PAUSE frames lose nothing there too.
COUNT=${PKTGEN_COUNT:-$([ "${KERNEL_VARIANT:-normal}" = debug ] && echo 5000 || echo 20000)}
quiet_pair
ip netns exec peer ethtool -L "$B" combined 1
ip netns exec peer ethtool -G "$B" rx 128
wait_for "carrier on $A" eval '[ "$(carrier "$A")" = 1 ]'
sleep 0.5
B_COUNTERS=$(model_counters_file "$B" peer)
[ -r "$B_COUNTERS" ] || fail "no device-model counters for $B ($B_COUNTERS)"

# run_phase NAME: pktgen A -> B, COUNT frames; sets P[NAME.a_tx] P[NAME.a_rx] (A's PAUSE
# frame deltas, ethtool -I -a), P[NAME.b_tx] P[NAME.b_rx] (B's), P[NAME.dev_b_tx]
# P[NAME.dev_a_rx] (the device model's own counts), P[NAME.drops] (B's drops for want of a
# WQE), P[NAME.storms] (B's stall-prevention events).
declare -A P
run_phase() {
	local a0 a1 b0 b1
	snap s0a "$A"
	snap s0b "$B" peer
	a0=$(pause_frames "$A")
	b0=$(pause_frames "$B" peer)
	pktgen_run "$A" "$COUNT" 10.10.0.2 "$MAC_B" 32 60
	wait_for "counters of A and B to settle" settled
	a1=$(pause_frames "$A")
	b1=$(pause_frames "$B" peer)
	read -r at ar <<<"$a0"
	read -r at1 ar1 <<<"$a1"
	read -r bt br <<<"$b0"
	read -r bt1 br1 <<<"$b1"
	P[$1.a_tx]=$((at1 - at)) P[$1.a_rx]=$((ar1 - ar))
	P[$1.b_tx]=$((bt1 - bt)) P[$1.b_rx]=$((br1 - br))
	# The device model's counts over the same interval (s0/s1 of settled).
	P[$1.dev_b_tx]=$(delta s0b s1b dev_tx_pause_frames)
	P[$1.dev_a_rx]=$(delta s0a s1a dev_rx_pause_frames)
	P[$1.drops]=$(delta s0b s1b "$C_NOWQE")
	# ConnectX: rsnic's own count of them, its port's Q counter (QUERY_Q_COUNTER).
	if [ "$RSNIC_FAMILY" = mlx5 ]; then
		P[$1.qdrops]=$(delta s0b s1b rx_out_of_buffer)
	fi
	P[$1.storms]=$(delta s0b s1b dev_tx_pause_storm)
	echo "  [$1] pktgen sent $PG_SENT; PAUSE frames: B sent ${P[$1.b_tx]} (model" \
		"${P[$1.dev_b_tx]}), A received ${P[$1.a_rx]} (model ${P[$1.dev_a_rx]}); A sent" \
		"${P[$1.a_tx]}, B received ${P[$1.b_rx]}; B drops ${P[$1.drops]}, B stall" \
		"preventions ${P[$1.storms]}"
}

# 1. Both ways on (A honours, B sends).
ethtool -A "$A" rx on tx on
run_phase on
[ "${P[on.b_tx]}" -gt 0 ] || fail "B's receive side never ran short: no PAUSE frame sent"
assert_eq "[on] every PAUSE B sent reached A" "${P[on.b_tx]}" "${P[on.a_rx]}"
assert_eq "[on] B's tx_pause_frames = the model's" "${P[on.dev_b_tx]}" "${P[on.b_tx]}"
assert_eq "[on] A's rx_pause_frames = the model's" "${P[on.dev_a_rx]}" "${P[on.a_rx]}"
assert_eq "[on] A's receive side had room: A sent none" 0 "${P[on.a_tx]}"
if [ "${P[on.storms]}" = 0 ]; then
	assert_eq "[on] A held back: B dropped nothing" 0 "${P[on.drops]}"
else
	echo "  [on] B's stall prevention stopped its PAUSE frames ${P[on.storms]} times: drops allowed"
fi

# 2. A ignores PAUSE (rx off): B still sends them and A still receives them.
ethtool -A "$A" rx off tx on
run_phase ignored
[ "${P[ignored.b_tx]}" -gt 0 ] || fail "[ignored] no PAUSE frame sent"
assert_eq "[ignored] every PAUSE B sent reached A" "${P[ignored.b_tx]}" "${P[ignored.a_rx]}"
assert_eq "[ignored] B's tx_pause_frames = the model's" "${P[ignored.dev_b_tx]}" "${P[ignored.b_tx]}"
if [ "$RSNIC_FAMILY" = mlx5 ]; then
	assert_eq "[ignored] B's rx_out_of_buffer (its Q counter) = the model's drops" \
		"${P[ignored.drops]}" "${P[ignored.qdrops]}"
	# ip -s -s link shows that count as rx_missed_errors (mlx5e_get_stats), as of the last
	# read of the device (ethtool -S makes one).
	oob=$(stat "$B" rx_out_of_buffer peer)
	assert_eq "[ignored] B's ip -s missed = its rx_out_of_buffer" "$oob" \
		"$(link_stat "$B" rx.missed_errors peer)"
fi

# 3. B sends no PAUSE (tx off): none sent, none received, whatever B drops.
ethtool -A "$A" rx on tx on
ip netns exec peer ethtool -A "$B" rx on tx off
assert_eq "B after -A tx off" "off on off" "$(pause_of "$B" peer)"
run_phase off
assert_eq "[off] B sent no PAUSE" 0 "${P[off.b_tx]}"
assert_eq "[off] A received no PAUSE" 0 "${P[off.a_rx]}"
assert_eq "[off] the model agrees (B)" 0 "${P[off.dev_b_tx]}"
assert_eq "[off] the model agrees (A)" 0 "${P[off.dev_a_rx]}"

ip netns exec peer ethtool -A "$B" rx on tx on
ip netns exec peer ethtool -G "$B" rx 512
teardown_pair

# A MANA device that does not advertise rsnic's own requests (QUERY_DEV_CONFIG's reserved
# field 0, as on a real MANA; the device host's sim_rsnic_requests=N): its ports have no
# pause operations and no loopback, as upstream mana's, and the reason is in the log.
if [ "$RSNIC_FAMILY" = mana ] && [ "$RSNIC_TRANSPORT" = kernel ]; then
	mark_dmesg
	load_rsnic sim_rsnic_requests=N
	dev=$(rsnic_ifaces | head -n1)
	if ethtool -a "$dev" >/tmp/pause.out 2>&1; then
		fail "ethtool -a answered on a device without rsnic's requests"
	fi
	grep -q "Operation not supported" /tmp/pause.out || fail "ethtool -a: $(cat /tmp/pause.out)"
	echo "  without the requests, ethtool -a: $(tr '\n' ' ' </tmp/pause.out)"
	if ethtool -A "$dev" rx off >/tmp/pause.out 2>&1; then
		fail "ethtool -A accepted on a device without rsnic's requests"
	fi
	grep -q "Operation not supported" /tmp/pause.out || fail "ethtool -A: $(cat /tmp/pause.out)"
	assert_eq "loopback not offered" "loopback: off [fixed]" \
		"$(ethtool -k "$dev" | grep '^loopback:')"
	dmesg_since_mark | grep -q "no rsnic requests for loopback pause" ||
		fail "no reason in the log"
	echo "  log: $(dmesg_since_mark | grep -m1 "no rsnic requests" | sed 's/^\[[^]]*\] //')"
	unload_rsnic
fi
