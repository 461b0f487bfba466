#!/usr/bin/env bash
# ethtool -l/-L and -g/-G: values out of range are refused with a message; channel, ring
# and MTU changes under an iperf3 stream keep it alive; afterwards ndo_get_stats64, netlink qstats
# (per queue + base) and ethtool -S agree. The channel maximum is the device's (rsnic.rst,
# "ethtool -l/-L"): at that count UDP flows each way cross every queue of both ports.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"

# The device's limit, from what both device hosts give a port: ConnectX 64 CQs and SQs
# (log_max_cq, log_max_sq 6) for channels of 4 CQs and 3 SQs (with XDP), within its 63
# completion vectors and 63 EQs; MANA 32 CQs a vport (QUERY_MAX_RESOURCES's max_cq, 32 a
# port) for channels of 2, within the vport's max_num_sq and max_num_rq (32).
case $RSNIC_FAMILY in
mlx5) MAXQ=16 ;;
mana) MAXQ=16 ;;
esac

setup_pair
ethtool -l "$A"
assert_eq "max combined" "$MAXQ" "$(channels_of "$A" max)"
assert_eq "netdev queues (allocated for the maximum)" "numtxqueues $MAXQ numrxqueues $MAXQ" \
	"$(ip -d link show "$A" | grep -o 'numtxqueues [0-9]* numrxqueues [0-9]*')"
ethtool -g "$A"

# Refusals, each with the reason.
expect_refused() {
	if "$@" 2>/tmp/err; then fail "accepted: $*"; fi
	echo "  refused: $* -> $(tr '\n' ' ' </tmp/err)"
}
expect_refused ethtool -L "$A" combined $((MAXQ + 1))
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
if [ "$RSNIC_FAMILY" = mlx5 ]; then
	# Every ConnectX ring is allocated page by page and named page by page in its create
	# command (rsnic.rst, "Queue memory"): the rings above span many pages, which the device
	# took from page lists rather than as one contiguous range.
	pl=$(stat "$A" dev_pas_list_pages)
	echo "  ring pages the device took from page lists: ${pl:-none}"
	[ "${pl:-0}" -gt 0 ] || fail "no ring of $A came to the device in a page list"
fi

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

# The maximum on both ports: 512 UDP flows from A reach every RX queue of B (the default
# indirection table spreads over all channels) and leave through every TX queue of A (each
# socket's random TX hash picks the queue); and the other way round.
echo "-- combined $MAXQ on both ports"
quiet_pair
ethtool -L "$A" combined "$MAXQ"
ip netns exec peer ethtool -L "$B" combined "$MAXQ"
assert_eq "current combined" "$MAXQ" "$(channels_of "$A" cur)"
NQ=$MAXQ
C_TXQ=${C_RXQ/rx/tx}
per_queue() { # SNAP0 SNAP1 FORMAT: the FORMAT counter's delta of each queue
	local q out=
	for q in $(seq 0 $((NQ - 1))); do
		# shellcheck disable=SC2059 # the format is a counter name
		out="$out $(delta "$1" "$2" "$(printf "$3" "$q")")"
	done
	echo "${out# }"
}
nonzero() { tr ' ' '\n' | grep -vc '^0$' || true; }
queue_counts send_udp_flows 512 20000 1 9 max 4 >/dev/null
# all_queues_used WAY RX TX: WAY is "X -> Y"; RX and TX name the snapshots (a or b: s0a/s1a,
# s0b/s1b) of the receiver and the sender: every one of the MAXQ RX queues received and every
# TX queue sent.
all_queues_used() {
	local rx tx to=${1#* -> } from=${1%% -> *}
	rx=$(per_queue "s0$2" "s1$2" "$C_RXQ")
	tx=$(per_queue "s0$3" "s1$3" "$C_TXQ")
	echo "  $1: $to's RX queues: $rx"
	echo "  $1: $from's TX queues: $tx"
	assert_eq "$to's RX queues that received" "$MAXQ" "$(echo "$rx" | nonzero)"
	assert_eq "$from's TX queues that sent" "$MAXQ" "$(echo "$tx" | nonzero)"
}
all_queues_used "A -> B" b a
snap s0a "$A"
snap s0b "$B" peer
ip netns exec peer python3 - <<'PY'
import socket
for i in range(512):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("10.10.0.2", 20000 + i))
    s.sendto(b"max" * 4, ("10.10.0.1", 9))
    s.close()
PY
# (settled looks at A -> B only.)
reached_a() {
	snap s1a "$A"
	snap s1b "$B" peer
	[ "$(delta s0a s1a rx_packets)" -ge 512 ]
}
wait_for "the flows to reach A" reached_a
all_queues_used "B -> A" a b
teardown_pair
