#!/usr/bin/env bash
# ConnectX: the two ports are wired back to back and the carrier follows the device's
# port-change events: it is up exactly when both ends are up. Link down on one port drops
# carrier on its peer; link up restores it.
# MANA (as upstream mana, whose device reports no link changes): the carrier is up while the
# interface is up, whatever its peer does.
set -eu
. "$(dirname "$0")/lib.sh"
one_family_on_debug

load_rsnic
mapfile -t ifs < <(rsnic_ifaces)
a=${ifs[0]}
b=${ifs[1]}
assert_eq "$a carrier while down" 0 "$(carrier "$a")"
ip link set "$a" up
sleep 0.3
[ "$RSNIC_FAMILY" = mana ] || assert_eq "$a carrier with peer down" 0 "$(carrier "$a")"
ip link set "$b" up
wait_for "carrier on both" eval '[ "$(carrier "$a")$(carrier "$b")" = 11 ]'
assert_eq "carriers up" 11 "$(carrier "$a")$(carrier "$b")"
ip link show "$a" | grep -q 'state UP' || fail "$a operstate not UP"

if [ "$RSNIC_FAMILY" = mana ]; then
	ip link set "$b" down
	ip link set "$a" down
	assert_eq "$a carrier while down" 0 "$(carrier "$a")"
	ip link set "$a" up
	assert_eq "$a carrier up with its peer down" 1 "$(carrier "$a")"
	ip link set "$b" up
	ip link set "$b" down
	assert_eq "$a carrier after its peer went up and down" 1 "$(carrier "$a")"
	ip link set "$a" down
	assert_eq "$a carrier after link down" 0 "$(carrier "$a")"
	unload_rsnic
	exit 0
fi
for round in 1 2 3; do
	ip link set "$a" down
	wait_for "$b loses carrier" eval '[ "$(carrier "$b")" = 0 ]'
	ip link set "$a" up
	wait_for "carrier restored" eval '[ "$(carrier "$a")$(carrier "$b")" = 11 ]'
	ip link set "$b" down
	wait_for "$a loses carrier" eval '[ "$(carrier "$a")" = 0 ]'
	ip link set "$b" up
	wait_for "carrier restored" eval '[ "$(carrier "$a")$(carrier "$b")" = 11 ]'
	echo "  round $round: down/up on either end toggles both carriers"
done
unload_rsnic
