#!/usr/bin/env bash
# Interrupt moderation (ethtool -c / -C).
#
# mlx5 (CQ moderation, rsnic.rst "Interrupt moderation"): -c shows mlx5e's defaults on a
# device with cq_moderation and cq_period_mode_modify (DIM on both ways, at DIM's default
# profile), on both ports; values beyond the CQ context's fields (usecs > 4095,
# frames > 65535) are refused with a message and change nothing; adaptive-rx/tx (DIM)
# start at DIM's default profile; settings survive ip link down/up and ethtool -L (the
# channels' CQs are made anew with them). Under a paced pktgen load from A to B (one flow,
# one RX queue of B), B's device raises far fewer completion events per received packet
# with rx-usecs 1000 rx-frames 64 than with rx-usecs 0 rx-frames 1, and never more than the
# moderation allows (one per 64 CQEs plus one per period); every packet arrives, the last
# ones released by the device's timer (dev_cq_timer_events). TCP transfers with static
# moderation, then DIM, on both ends are byte-exact, and DIM changed B's moderation
# (ch_dim_changes).
#
# MANA (upstream mana cannot change its coalescing): -c reports what the device does, an
# event per completion (rx/tx-usecs 0, rx/tx-frames 1, adaptive off); -C fails with
# "Operation not supported".
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"

setup_pair

if [ "$RSNIC_FAMILY" = mana ]; then
	ethtool -c "$A" >/tmp/coal.out
	for f in rx-frames tx-frames; do
		assert_eq "MANA $f" 1 "$(awk -v f="$f:" '$1 == f { print $2 }' /tmp/coal.out)"
	done
	# The core leaves out zero values of parameters a driver cannot set: "n/a".
	for f in rx-usecs tx-usecs; do
		v=$(awk -v f="$f:" '$1 == f { print $2 }' /tmp/coal.out)
		[ "$v" = 0 ] || [ "$v" = n/a ] || fail "MANA $f: $v"
	done
	v=$(awk '/^Adaptive RX:/ { print $3, $5 }' /tmp/coal.out)
	[ "$v" = "off off" ] || [ "$v" = "n/a n/a" ] || fail "MANA adaptive RX TX: $v"
	for args in "-C $A rx-usecs 8" "-C $A adaptive-rx on"; do
		# shellcheck disable=SC2086
		if ethtool $args 2>/tmp/err; then fail "accepted: ethtool $args"; fi
		grep -qi "not supported" /tmp/err || fail "ethtool $args: $(cat /tmp/err)"
		echo "  ethtool $args: $(tr '\n' ' ' </tmp/err)"
	done
	teardown_pair
	exit 0
fi

# coal IFACE FIELD [NETNS]: one value of ethtool -c (FIELD as ethtool names it, e.g.
# rx-usecs; "adaptive" gives "RX TX" of the "Adaptive RX: .. TX: .." line).
coal() {
	local ns=()
	[ -n "${3:-}" ] && ns=(ip netns exec "$3")
	"${ns[@]}" ethtool -c "$1" >/tmp/coal.out
	if [ "$2" = adaptive ]; then
		awk '/^Adaptive RX:/ { print $3, $5 }' /tmp/coal.out
	else
		awk -v f="$2:" '$1 == f { print $2 }' /tmp/coal.out
	fi
}

# coal_is IFACE "RXU RXF TXU TXF" [NETNS]: the four values ethtool -c shows.
coal_is() {
	local got
	got="$(coal "$1" rx-usecs "${3:-}") $(coal "$1" rx-frames "${3:-}") $(coal "$1" tx-usecs "${3:-}") $(coal "$1" tx-frames "${3:-}")"
	assert_eq "$1 rx-usecs rx-frames tx-usecs tx-frames" "$2" "$got"
}

ethtool -c "$A"
# The defaults: DIM on both ways at its default profile (event mode: RX 8 us / 256,
# TX 8 us / 128, lib/dim/net_dim.c), as mlx5e_build_nic_params on such a device.
for ns in "" peer; do
	dev=$A
	[ -n "$ns" ] && dev=$B
	assert_eq "$dev: adaptive RX TX at load" "on on" "$(coal "$dev" adaptive "$ns")"
	coal_is "$dev" "8 256 8 128" "$ns"
done

# Refusals, each with its reason, and nothing changed.
expect_refused() { # PATTERN ETHTOOL-ARGS...
	local pat=$1
	shift
	if ethtool "$@" 2>/tmp/err; then fail "accepted: ethtool $*"; fi
	grep -qi "$pat" /tmp/err || fail "ethtool $*: no '$pat' in: $(cat /tmp/err)"
	echo "  refused: ethtool $* -> $(tr '\n' ' ' </tmp/err)"
}
expect_refused "out of range" -C "$A" rx-usecs 4096
expect_refused "out of range" -C "$A" tx-usecs 5000
expect_refused "out of range" -C "$A" rx-frames 65536
expect_refused "out of range" -C "$A" tx-frames 100000
coal_is "$A" "8 256 8 128"
# DIM off: the given values apply. On again, each direction starts at DIM's default
# profile; values given with it are ignored.
ethtool -C "$A" adaptive-rx off adaptive-tx off rx-usecs 0 rx-frames 1 tx-usecs 0 tx-frames 1
assert_eq "adaptive RX TX" "off off" "$(coal "$A" adaptive)"
coal_is "$A" "0 1 0 1"
ethtool -C "$A" adaptive-rx on
assert_eq "adaptive RX TX" "on off" "$(coal "$A" adaptive)"
coal_is "$A" "8 256 0 1"
ethtool -C "$A" adaptive-tx on rx-usecs 77
assert_eq "adaptive RX TX" "on on" "$(coal "$A" adaptive)"
coal_is "$A" "8 256 8 128"
ethtool -C "$A" adaptive-rx off adaptive-tx off rx-usecs 0 rx-frames 1 tx-usecs 0 tx-frames 1
assert_eq "adaptive RX TX" "off off" "$(coal "$A" adaptive)"
coal_is "$A" "0 1 0 1"
# The largest values are taken.
ethtool -C "$A" rx-usecs 4095 rx-frames 65535 tx-usecs 4095 tx-frames 65535
coal_is "$A" "4095 65535 4095 65535"

# Settings survive down/up and a channel change (new CQs are made with them).
ethtool -C "$A" rx-usecs 50 rx-frames 16 tx-usecs 20 tx-frames 8
coal_is "$A" "50 16 20 8"
chans=$(channels_of "$A")
ip link set "$A" down
ip link set "$A" up
wait_for "carrier on $A" eval '[ "$(carrier "$A")" = 1 ]'
coal_is "$A" "50 16 20 8"
ethtool -L "$A" combined $((chans == 2 ? 3 : 2))
coal_is "$A" "50 16 20 8"
ethtool -L "$A" combined "$chans"
ethtool -C "$A" rx-usecs 0 rx-frames 1 tx-usecs 0 tx-frames 1
coal_is "$A" "0 1 0 1"

# Completion events per received packet on B, unmoderated and moderated, under the same
# paced load (one packet per DELAY_NS, so that the device sees them one at a time).
COUNT=${COAL_COUNT:-$([ "${KERNEL_VARIANT:-normal}" = debug ] && echo 1000 || echo 4000)}
DELAY_NS=${COAL_DELAY_NS:-20000}
# B's RX moderation is set by hand below: DIM off there.
ip netns exec peer ethtool -C "$B" adaptive-rx off adaptive-tx off tx-usecs 0 tx-frames 1
quiet_pair
sleep 0.5

# paced_pktgen COUNT: COUNT 60-byte UDP frames from A's TX queue 0 to B, one per DELAY_NS
# (pktgen_run of traffic.sh with a delay); sets PG_SENT.
paced_pktgen() {
	local c res
	[ -d "$PKTGEN" ] || fail "no $PKTGEN (CONFIG_NET_PKTGEN)"
	pktgen_clear
	echo "add_device $A" >"$PKTGEN/kpktgend_0"
	for c in "count $1" "pkt_size 60" "burst 1" "delay $DELAY_NS" "clone_skb 0" \
		"queue_map_min 0" "queue_map_max 0" "dst ${PG_DST:-10.10.0.2}" "dst_mac $MAC_B"; do
		echo "$c" >"$PKTGEN/$A" || fail "pktgen $A: '$c' refused"
	done
	echo start >"$PKTGEN/pgctrl"
	res=$(cat "$PKTGEN/$A")
	PG_SENT=$(echo "$res" | sed -n 's/.*pkts-sofar: \([0-9]*\).*/\1/p')
	echo rem_device_all >"$PKTGEN/kpktgend_0"
	echo "$res" | grep -q 'Result: OK' || fail "pktgen $A: $(echo "$res" | grep Result)"
}

declare -A M
measure() { # NAME RX-USECS RX-FRAMES
	local t0 t1
	ip netns exec peer ethtool -C "$B" rx-usecs "$2" rx-frames "$3"
	coal_is "$B" "$2 $3 0 1" peer
	snap s0a "$A"
	snap s0b "$B" peer
	t0=$(date +%s%N)
	paced_pktgen "$COUNT"
	t1=$(date +%s%N)
	# Every packet arrives: with moderation the last ones wait for the device's timer.
	wait_for "counters of A and B to settle ($1)" settled
	M[$1.sent]=$PG_SENT
	M[$1.us]=$(((t1 - t0) / 1000))
	M[$1.rx]=$(delta s0b s1b dev_rx_packets)
	M[$1.events]=$(delta s0b s1b dev_cq_events)
	M[$1.timer]=$(delta s0b s1b dev_cq_timer_events)
	M[$1.irqs]=$(delta s0b s1b dev_interrupts)
	# B answers some of the UDP frames with ICMP (port unreachable, rate-limited): TX
	# completions on B, each of which may raise an event of its own.
	M[$1.txcqes]=$(delta s0b s1b dev_tx_cqes)
	printf '  %-10s sent %6s  B rx %6s  B events %6s (per packet %s)  timer %5s  interrupts %6s  %s us\n' \
		"$1" "${M[$1.sent]}" "${M[$1.rx]}" "${M[$1.events]}" \
		"$(ratio "${M[$1.events]}" "${M[$1.rx]}" 3)" "${M[$1.timer]}" "${M[$1.irqs]}" "${M[$1.us]}"
}
measure plain 0 1
measure moder 1000 64
# The period on its own. The period runs from a CQ's last event, so after an idle spell a
# first CQE is released at once; 6 packets 400 us apart then find the period running
# (B's NAPI has read the first and re-armed the CQ in between), stay below rx-frames, and
# only the device's timer can release them. (The tail of the load above may be read by a
# NAPI poll still running, without an event: the clean run of ef44f17 saw that.) They go
# to an address that is not B's, which B drops without an ICMP answer: an answer's TX
# completion would run B's NAPI, which reads the RX CQEs without their event.
full=$COUNT delay=$DELAY_NS
COUNT=6 DELAY_NS=400000 PG_DST=10.10.0.99
measure tail 1000 64
COUNT=$full DELAY_NS=$delay PG_DST=""

for m in plain moder; do
	assert_eq "[$m] B received what pktgen sent" "${M[$m.sent]}" "${M[$m.rx]}"
	[ "${M[$m.rx]}" -ge "$COUNT" ] || fail "[$m] pktgen sent ${M[$m.rx]} of $COUNT"
done
assert_eq "[plain] events the timer released" 0 "${M[plain.timer]}"
assert_eq "[tail] B received what pktgen sent" "${M[tail.sent]}" "${M[tail.rx]}"
[ "${M[tail.rx]}" -ge 6 ] || fail "[tail] pktgen sent ${M[tail.rx]} of 6"
# The timer's own release is host-tested on the device's clock (host/testbed/tests/
# sim_moder.rs: a held CQ fires at its deadline, and only then). Here it is a figure, not
# an assertion: under TCG on a loaded machine B's NAPI may poll through the whole load
# without re-arming (a CI run saw 10 events for 4000 packets, none by the timer), and
# pktgen's 400 us gaps may stretch past the period (the same run's 6-packet probe took
# 520 ms), so that each CQE finds the period over and fires at once. What the timer is for
# is asserted above: every packet of the tail, below rx-frames, reached B.
echo "  [moder, tail] $((M[moder.timer] + M[tail.timer])) event(s) released by the timer"
# The moderation's bound: an event per 64 CQEs, plus one per period (the last event
# restarts it), plus the first and the last, plus one per TX completion of B (its ICMP).
mrx=${M[moder.rx]} mev=${M[moder.events]} prx=${M[plain.rx]} pev=${M[plain.events]}
bound=$((mrx / 64 + ${M[moder.us]} / 1000 + 2 + ${M[moder.txcqes]}))
[ "$mev" -le "$bound" ] ||
	fail "[moder] $mev events > $bound (rx/64 + duration/1000 us + 2 + TX CQEs)"
echo "  ok: [moder] $mev events <= $bound"
# Per packet, at least 4 times fewer (mev/mrx * 4 <= pev/prx), where the unmoderated run
# measured the device: there, every packet that found B's CQ armed raised an event, so at
# least one packet in two did when B's NAPI kept up with the paced load. On a loaded
# machine it may not (one clean run here saw 11 events for 4000 packets: NAPI was still
# polling when the next packets came, so the CQ was never armed); then the unmoderated run
# is NAPI's own coalescing, not a baseline, and the moderated run is judged by its bound
# above alone.
if [ $((pev * 2)) -ge "$prx" ]; then
	[ $((mev * prx * 4)) -le $((pev * mrx)) ] ||
		fail "events per packet did not drop by 4x: plain $pev/$prx, moderated $mev/$mrx"
	echo "  ok: events per packet dropped by $(ratio $((pev * mrx)) $((mev * prx)) 1)x"
else
	echo "  (plain: $pev events for $prx packets, NAPI did not keep up; the 4x check needs at least one event per two packets there)"
fi

# TCP with moderation on both ends, both directions' CQs: byte-exact.
ethtool -C "$A" rx-usecs 200 rx-frames 32 tx-usecs 200 tx-frames 32
ip netns exec peer ethtool -C "$B" rx-usecs 200 rx-frames 32 tx-usecs 200 tx-frames 32
transfer_check "" peer 10.10.0.2 8
transfer_check peer "" 10.10.0.1 8
# DIM on both ends: it measures every 64 interrupts of a channel and moves its profile.
ethtool -C "$A" adaptive-rx on adaptive-tx on
ip netns exec peer ethtool -C "$B" adaptive-rx on adaptive-tx on
d0=$(stat "$B" ch_dim_changes peer)
transfer_check "" peer 10.10.0.2 16
transfer_check peer "" 10.10.0.1 8
d1=$(stat "$B" ch_dim_changes peer)
echo "  B: DIM changed a CQ moderation $((d1 - d0)) times"
[ $((d1 - d0)) -ge 1 ] || fail "DIM never changed B's moderation under TCP load"
ethtool -C "$A" adaptive-rx off adaptive-tx off rx-usecs 0 rx-frames 1 tx-usecs 0 tx-frames 1
ip netns exec peer ethtool -C "$B" adaptive-rx off adaptive-tx off rx-usecs 0 rx-frames 1 \
	tx-usecs 0 tx-frames 1
coal_is "$B" "0 1 0 1" peer

teardown_pair
