#!/usr/bin/env bash
# Receive filtering. ConnectX, as mlx5e programs it (en_fs.c: the vport context's address
# lists and promiscuous flags, the L2 flow table in front of the traffic-type table): the
# peer sends test frames (rsnic-frames) to addresses port A did or did not ask for, and a
# capture on A counts what the driver delivered; what it did not deliver must be what the
# device model counted as kept away (dev_rx_vport_filtered, by the vport's lists, plus
# dev_rx_steering_drops, by the L2 table). A foreign unicast address: not delivered until
# promisc; a multicast group joined (ip maddr): delivered, one not joined: not, until
# allmulticast; after ip link set address: the new address receives, the old does not; an
# address that is not unicast is refused (EADDRNOTAVAIL). MANA, as upstream mana, has no
# receive filter and no ndo_set_mac_address: a MAC change is refused (EOPNOTSUPP) and the
# address stays.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$(dirname "$0")/xdp.sh"

NF=20

# The pair without addresses and without IPv6: the only frames on the wire are the test's
# (an MLD report or a router solicitation to a group A did not join would be kept away too).
load_rsnic
mapfile -t _ifs < <(rsnic_ifaces)
A=${_ifs[0]} B=${_ifs[1]}
ip netns add peer
ip link set "$B" netns peer
sysctl -qw "net.ipv6.conf.$A.disable_ipv6=1"
ip netns exec peer sysctl -qw "net.ipv6.conf.$B.disable_ipv6=1"
ip link set "$A" up
ip netns exec peer ip link set "$B" up
wait_for "carrier on $A" eval '[ "$(carrier "$A")" = 1 ]'
MAC_A=$(mac "$A")
echo "  set up in ${SECONDS} s"
NEW_MAC=02:52:53:aa:bb:01

if [ "$RSNIC_FAMILY" = mana ]; then
	out=$(ip link set "$A" address "$NEW_MAC" 2>&1) && fail "MANA took a MAC change"
	case $out in
	*"not supported"*) echo "  ip link set address: refused ($out)" ;;
	*) fail "MANA refused a MAC change with '$out', not EOPNOTSUPP" ;;
	esac
	assert_eq "$A's address" "$MAC_A" "$(mac "$A")"
	teardown_pair
	exit 0
fi

xdp_tools_or_fail
MAC_B=$(mac "$B" peer)
# Time for the control work to program the device after a change (a few commands).
settle() { sleep 0.2; }

# kept: the model's frames kept from A: "VPORT STEERING" (by the vport's lists, by its flow
# tables), read by the shell from the model's counters file (found once).
CF=$(model_counters_file "$A")
kept() {
	local -a lines
	local l v=0 s=0
	mapfile -t lines <"$CF"
	for l in "${lines[@]}"; do
		case $l in
		*" dev_rx_vport_filtered: "*) v=${l##*: } ;;
		*" dev_rx_steering_drops: "*) s=${l##*: } ;;
		esac
	done
	echo "$v $s"
}

# probe WHAT DST WANT: the peer sends NF test frames to DST; A's stack must get WANT of
# them (a capture that waits 0.4 s when it expects none), and the device must count
# the others as kept away.
probe() {
	local what=$1 dst=$2 want=$3 v0 s0 v1 s1 t=10
	[ "$want" = 0 ] && t=0.4
	read -r v0 s0 < <(kept)
	cap_start rxm "$A" "" -n "$NF" -t "$t" --expect-dst "$dst" --expect-src "$MAC_B"
	send_frames "$B" peer --dst "$dst" --src "$MAC_B" --count "$NF"
	cap_wait rxm
	read -r v1 s1 < <(kept)
	echo "  $what ($dst): $CAP; kept away by the vport $((v1 - v0)), by the flow tables $((s1 - s0))"
	assert_eq "$what: frames delivered" "$want" "$(kv frames "$CAP")"
	assert_eq "$what: mismatching frames" 0 "$(kv mismatches "$CAP")"
	assert_eq "$what: frames the device kept away" "$((NF - want))" "$((v1 - v0 + s1 - s0))"
}

FOREIGN=02:00:00:00:99:01
probe "foreign unicast" "$FOREIGN" 0
ip link set "$A" promisc on
settle
probe "foreign unicast, promisc" "$FOREIGN" "$NF"
# Off again: the next probe, of a group not joined, would pass a promiscuous vport or L2
# table.
ip link set "$A" promisc off

GROUP=01:00:5e:01:02:03 OTHER=01:00:5e:01:02:04
ip maddr add "$GROUP" dev "$A"
settle
probe "multicast joined" "$GROUP" "$NF"
probe "multicast not joined" "$OTHER" 0
ip link set "$A" allmulticast on
settle
probe "multicast not joined, allmulticast" "$OTHER" "$NF"
# Both off: the group left must not pass an all-multicast vport or L2 table either.
ip link set "$A" allmulticast off
ip maddr del "$GROUP" dev "$A"
settle
probe "multicast left, allmulticast off" "$GROUP" 0

out=$(ip link set "$A" address 01:00:5e:00:00:09 2>&1) && fail "a multicast MAC was taken"
case $out in
*"Cannot assign requested address"*) echo "  a multicast MAC: refused ($out)" ;;
*) fail "a multicast MAC was refused with '$out', not EADDRNOTAVAIL" ;;
esac
ip link set "$A" address "$NEW_MAC" || fail "ip link set $A address $NEW_MAC"
assert_eq "$A's address" "$NEW_MAC" "$(mac "$A")"
settle
probe "new address" "$NEW_MAC" "$NF"
probe "old address" "$MAC_A" 0
teardown_pair
