#!/usr/bin/env bash
# ntuple steering rules and additional RSS contexts (rsnic.rst, "RSS": "Contexts and ntuple
# rules"), on the receiving port B of a pair with 4 channels, checked by where sets of UDP
# flows from A land (B's per-queue RX counters).
# ConnectX:
#   -k      ntuple-filters on, changeable;
#   -N      udp4 dst-port P action 2 moves every flow to port P onto queue 2, flows to other
#           ports keep spreading; -n lists the rule; delete restores the spread flow by flow;
#           the rule survives a reopen of the channels (MTU change) and keeps -L from
#           dropping its queue;
#   context -X context new start 2 equal 2 and a rule "context C" spread the rule's flows
#           over queues 2 and 3 only; the context's table changes in place (weight); the
#           context cannot go while a rule uses it;
#   refused a queue beyond the channels, a flow type, a partial mask, a location beyond the
#           table (each with its message in the kernel log), a 33rd rule;
#   ntuple off removes the rules and refuses new ones.
# MANA: ntuple-filters off [fixed]; -N ... action and -X context new refused.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"

flows_pair 4
inb() { ip netns exec peer "$@"; }

# counts N BASE DPORT: sends N UDP datagrams from A (10.10.0.1, source ports BASE..) to
# 10.10.0.2:DPORT on B, one per flow, and prints how many of them each of B's queues
# received.
counts() { queue_counts send_udp_flows "$1" "$2" 1 "$3" ntuple 8; }

# used COUNTS: how many queues got flows.
used() { echo "$1" | tr ' ' '\n' | grep -vc '^0$' || true; }

# add_rule ARGS...: ethtool -N B ARGS, prints the rule's location ("Added rule with ID L").
add_rule() { inb ethtool -N "$B" "$@" | awk '/Added rule with ID/ { print $NF }'; }

# refused WHAT MESSAGE ARGS...: ethtool -N B ARGS fails and the kernel log (or ethtool,
# where it checks first) says MESSAGE (an extended regular expression).
refused() {
	local what=$1 msg=$2
	shift 2
	mark_dmesg
	if inb ethtool -N "$B" "$@" 2>/tmp/err; then fail "$what accepted"; fi
	echo "  refused: $what -> $(tr '\n' ' ' </tmp/err)"
	{ dmesg_since_mark; cat /tmp/err; } | grep -qE "$msg" ||
		fail "no message for $what (want: $msg)"
}

feature=$(inb ethtool -k "$B" | awk '/^ntuple-filters:/ { print $2, $3 }')
if [ "$RSNIC_FAMILY" = mana ]; then
	assert_eq "ntuple-filters on MANA" "off [fixed]" "$feature"
	if inb ethtool -N "$B" flow-type udp4 dst-port 9 action 2 2>/tmp/err; then
		fail "MANA accepted an ntuple rule"
	fi
	echo "  refused: -N flow-type udp4 dst-port 9 action 2 -> $(tr '\n' ' ' </tmp/err)"
	if inb ethtool -X "$B" context new 2>/tmp/err; then fail "MANA created an RSS context"; fi
	echo "  refused: -X context new -> $(tr '\n' ' ' </tmp/err)"
	teardown_pair
	exit 0
fi

echo "-- ntuple-filters"
assert_eq "ntuple-filters on ConnectX" "on " "$feature"

echo "-- a rule to queue 2"
before=$(counts 64 20000 9)
echo "  64 flows to port 9 without rules: $before"
[ "$(used "$before")" -ge 2 ] || fail "64 flows spread over $(used "$before") queue(s)"
loc=$(add_rule flow-type udp4 dst-port 9 action 2)
[ -n "$loc" ] || fail "no rule location reported"
inb ethtool -n "$B"
assert_eq "rules listed" 1 "$(inb ethtool -n "$B" | awk '/^Total/ { print $2 }')"
inb ethtool -n "$B" rule "$loc" | grep -q "Action: Direct to queue 2" ||
	fail "rule $loc does not show queue 2"
assert_eq "64 flows to port 9 on queue 2" "0 0 64 0" "$(counts 64 20000 9)"
other=$(counts 64 20000 10)
echo "  64 flows to port 10 (no rule): $other"
[ "$(used "$other")" -ge 2 ] || fail "flows to another port were steered: $other"

echo "-- the rule survives a reopen and holds its queue"
inb ip link set "$B" mtu 1400
inb ip link set "$B" mtu 1500
assert_eq "64 flows to port 9 on queue 2 after two reopens" "0 0 64 0" "$(counts 64 20000 9)"
if inb ethtool -L "$B" combined 2 2>/tmp/err; then
	fail "2 channels accepted under a rule naming queue 2"
fi
echo "  refused: -L combined 2 -> $(tr '\n' ' ' </tmp/err)"

echo "-- delete restores"
inb ethtool -N "$B" delete "$loc"
assert_eq "rules listed after delete" 0 "$(inb ethtool -n "$B" | awk '/^Total/ { print $2 }')"
assert_eq "64 flows to port 9 as before the rule" "$before" "$(counts 64 20000 9)"

echo "-- an RSS context over queues 2 and 3"
ctx=$(inb ethtool -X "$B" context new start 2 equal 2 | awk '/New RSS context is/ { print $NF }')
[ -n "$ctx" ] || fail "no context id reported"
inb ethtool -x "$B" context "$ctx" | sed -n '1,3p'
assert_eq "context $ctx's queues" "2 3" "$(inb ethtool -x "$B" context "$ctx" |
	awk '/^RSS hash key/ { exit } /^ *[0-9]+:/ { for (i = 2; i <= NF; i++) print $i }' |
	sort -un | tr '\n' ' ' | sed 's/ $//')"
loc=$(add_rule flow-type udp4 dst-port 9 context "$ctx")
inb ethtool -n "$B" rule "$loc" | grep -Eq "(RSS Context ID:|Direct to RSS Context) $ctx$" ||
	fail "rule $loc does not show context $ctx"
got=$(counts 64 20000 9)
echo "  64 flows to port 9 under context $ctx: $got"
read -r q0 q1 q2 q3 <<<"$got"
if [ "$q0" != 0 ] || [ "$q1" != 0 ]; then fail "flows outside the context's queues: $got"; fi
if [ "$q2" = 0 ] || [ "$q3" = 0 ]; then fail "the context did not spread: $got"; fi
[ $((q2 + q3)) = 64 ] || fail "flows lost: $got"
inb ethtool -X "$B" context "$ctx" weight 0 0 0 1
assert_eq "64 flows after the context's table changed (weight 0 0 0 1)" "0 0 0 64" \
	"$(counts 64 20000 9)"
if inb ethtool -X "$B" context "$ctx" delete 2>/tmp/err; then
	fail "a context with a rule was deleted"
fi
echo "  refused: -X context $ctx delete (rule $loc uses it) -> $(tr '\n' ' ' </tmp/err)"
inb ethtool -N "$B" delete "$loc"
inb ethtool -X "$B" context "$ctx" delete
assert_eq "64 flows to port 9 as before the context" "$before" "$(counts 64 20000 9)"

echo "-- refusals"
refused "queue 4 of 4 channels" "queue 4 is not below the 4 channels" \
	flow-type udp4 dst-port 9 action 4
refused "flow type sctp4" "only tcp4, udp4, tcp6 and udp6" flow-type sctp4 dst-port 9 action 1
refused "a partial port mask" "only full masks" flow-type udp4 dst-port 9 m 0xff action 1
refused "location 40" "rule location 40 refused|Location out of range" flow-type udp4 dst-port 9 action 1 loc 40
refused "context 7 (none)" "no RSS context 7" flow-type tcp4 dst-port 9 context 7
for i in $(seq 1 32); do
	add_rule flow-type tcp4 dst-port $((5000 + i)) action 1 >/dev/null
done
assert_eq "rules listed with a full table" 32 "$(inb ethtool -n "$B" | awk '/^Total/ { print $2 }')"
if inb ethtool -N "$B" flow-type tcp4 dst-port 6000 action 1 2>/tmp/err; then
	fail "a 33rd rule accepted"
fi
echo "  refused: a 33rd rule -> $(tr '\n' ' ' </tmp/err)"

echo "-- ntuple off removes the rules"
inb ethtool -K "$B" ntuple off
assert_eq "rules listed with ntuple off" 0 "$(inb ethtool -n "$B" | awk '/^Total/ { print $2 }')"
refused "a rule with ntuple off" "ntuple-filters is off" flow-type udp4 dst-port 9 action 2
inb ethtool -K "$B" ntuple on
loc=$(add_rule flow-type udp4 dst-port 9 action 1)
assert_eq "64 flows to port 9 on queue 1 with ntuple on again" "0 64 0 0" "$(counts 64 20000 9)"
inb ethtool -N "$B" delete "$loc"
teardown_pair
