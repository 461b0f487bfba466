#!/usr/bin/env bash
# Loading rsnic with defaults creates one simulated device with two Ethernet ports, each
# with a random locally administered MAC and sane MTU limits; unloading removes them.
set -eu
. "$(dirname "$0")/lib.sh"
one_family_on_debug

load_rsnic
mapfile -t ifs < <(rsnic_ifaces)
assert_eq "rsnic interfaces" 2 "${#ifs[@]}"
for i in "${ifs[@]}"; do
	link=$(ip -d link show "$i")
	echo "$link"
	mac=$(cat "/sys/class/net/$i/address")
	first=$((16#${mac:0:2}))
	assert_eq "$i: MAC is locally administered unicast" 2 $((first & 3))
	assert_eq "$i: type" 1 "$(cat "/sys/class/net/$i/type")"
	assert_eq "$i: mtu" 1500 "$(cat "/sys/class/net/$i/mtu")"
	echo "$link" | grep -q "minmtu 68 maxmtu 9600" || fail "$i: MTU limits not 68..9600"
done
[ "$(cat "/sys/class/net/${ifs[0]}/address")" != "$(cat "/sys/class/net/${ifs[1]}/address")" ] ||
	fail "both ports got the same MAC"
unload_rsnic
