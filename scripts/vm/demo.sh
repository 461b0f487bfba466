#!/usr/bin/env bash
# The main job, inside the VM: load rsnic, bring its two ports up, show them, their carrier
# and their ethtool information and counters.
set -eu
. "$RSNIC_ROOT/tests/vm/lib.sh"

load_rsnic
mapfile -t ifs < <(rsnic_ifaces)
for i in "${ifs[@]}"; do ip link set "$i" up; done
wait_for "carrier on both ports" eval '[ "$(carrier "${ifs[0]}")$(carrier "${ifs[1]}")" = 11 ]'
echo
echo "== rsnic ports"
ip -br link show | grep -E "^($(IFS='|'; echo "${ifs[*]}"))\b"
for i in "${ifs[@]}"; do
	echo
	echo "== $i: carrier=$(carrier "$i")"
	ethtool -i "$i" | grep -E '^(driver|version|firmware-version|bus-info):'
	ethtool "$i" | grep -E 'Speed|Duplex|Link detected'
	ethtool --show-priv-flags "$i"
	ethtool -S "$i"
done
echo
echo "== link down on ${ifs[0]}: both carriers drop"
ip link set "${ifs[0]}" down
wait_for "peer carrier off" eval '[ "$(carrier "${ifs[1]}")" = 0 ]'
echo "carrier ${ifs[0]}=$(carrier "${ifs[0]}") ${ifs[1]}=$(carrier "${ifs[1]}")"
unload_rsnic
