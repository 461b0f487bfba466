#!/usr/bin/env bash
# ethtool -l/-L and -g/-G: values out of range are refused with a message; channel, ring
# and MTU changes under an iperf3 stream keep it alive; afterwards ndo_get_stats64, netlink qstats
# (per queue + base) and ethtool -S agree.
set -eu
. "$(dirname "$0")/lib.sh"

setup_pair
ethtool -l "$A"
assert_eq "max combined" 8 "$(channels_of "$A" max)"
ethtool -g "$A"

# Refusals, each with the reason.
expect_refused() {
	if "$@" 2>/tmp/err; then fail "accepted: $*"; fi
	echo "  refused: $* -> $(tr '\n' ' ' </tmp/err)"
}
expect_refused ethtool -L "$A" combined 9
expect_refused ethtool -L "$A" combined 0
expect_refused ethtool -G "$A" rx 32
grep -q "below the minimum" /tmp/err || fail "no extack message for a too small ring"
expect_refused ethtool -G "$A" tx 16384
expect_refused ethtool -G "$A" rx 100000
ethtool -G "$A" rx 300
assert_eq "rx ring rounded up to a power of two" 512 "$(ring_size "$A" RX)"

# Changes under traffic.
ip netns exec peer iperf3 -s -1 -B 10.10.0.2 >/dev/null &
srv=$!
sleep 1
iperf3 -c 10.10.0.2 -t 17 -i 0 >/tmp/iperf.out 2>&1 &
cli=$!
sleep 1
for step in "-L $A combined 1" "-G $A rx 256 tx 512" "-L $A combined 4" \
	"-G $A rx 1024 tx 1024" "-L $A combined 2" "-G $A rx 512 tx 1024"; do
	ethtool $step
	echo "  ethtool $step: $(ethtool -l "$A" | awk '/^Current/{p=1} p && /^Combined:/{print "combined " $2}')," \
		"$(ethtool -g "$A" | awk '/^Current/{p=1} p && /^(RX|TX):/{printf "%s %s ", $1, $2}')"
	sleep 1.5
done
ip netns exec peer ethtool -L "$B" combined 3
for mtu in 4000 9000 1500; do
	ip link set "$A" mtu "$mtu"
	echo "  mtu $mtu on $A under traffic"
	sleep 1
done
wait "$cli" || { cat /tmp/iperf.out; fail "iperf3 did not survive the changes"; }
wait "$srv" || true
grep -E "sender|receiver" /tmp/iperf.out

# Counters agree: ndo_get_stats64 (sysfs), netlink qstats at device scope, ethtool -S; and
# the live queues' qstats never exceed the device totals (the rest is the base).
ifindex=$(cat "/sys/class/net/$A/ifindex")
agree() {
	local q
	s64="$(cat /sys/class/net/$A/statistics/tx_packets) $(cat /sys/class/net/$A/statistics/rx_packets)"
	q=$(python3 "$(dirname "$0")/qstats.py" "$ifindex")
	dev="$(echo "$q" | cut -d' ' -f1-2)"
	queues="$(echo "$q" | cut -d' ' -f3-4)"
	nq=$(echo "$q" | cut -d' ' -f5)
	es="$(stat "$A" tx_packets) $(stat "$A" rx_packets)"
	echo "  stats64: $s64 | qstats device: $dev | qstats queues: $queues ($nq TX queues) | ethtool -S: $es"
	[ "$s64" = "$dev" ] && [ "$s64" = "$es" ]
}
wait_for "stats64, qstats and ethtool -S to agree" agree
assert_eq "qstats reports the live TX queues" 2 "$nq"
set -- $queues
[ "$1" -le "${s64%% *}" ] || fail "queue TX packets exceed the device total"
teardown_pair
