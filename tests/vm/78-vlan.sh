#!/usr/bin/env bash
# 802.1Q over the pair: a VLAN interface (id 10) on port A and on port B (in "peer"), ping
# both ways over it, small and large. On MANA the device strips the tag of a received frame
# and reports its VLAN id in the RX CQE (the kernel's mana driver has
# NETIF_F_HW_VLAN_CTAG_RX always on and puts the CQE's tag on the skb, mana_rx_skb; rsnic.rst,
# "What the kernel's mana driver found in the model"): every tagged frame a port received
# counts in the model's dev_rx_vlan_stripped, and rsnic must give the tag back to the stack,
# or nothing reaches the VLAN interface. ConnectX keeps the tag in the frame here.
set -eu
. "$(dirname "$0")/lib.sh"
# Family-specific: the tag's way (stripped or not) is the family's data path.

setup_pair
ip link add link "$A" name "$A.10" type vlan id 10 || fail "no VLAN interface on $A"
ip netns exec peer ip link add link "$B" name "$B.10" type vlan id 10 || fail "no VLAN interface on $B"
ip addr add 10.10.10.1/24 dev "$A.10"
ip netns exec peer ip addr add 10.10.10.2/24 dev "$B.10"
ip link set "$A.10" up
ip netns exec peer ip link set "$B.10" up
wait_for "carrier on $A.10" eval '[ "$(carrier "$A.10")" = 1 ]'

stripped() { stat "$1" dev_rx_vlan_stripped "${2:-}"; }
[ "$RSNIC_FAMILY" = mana ] && { sa0=$(stripped "$A"); sb0=$(stripped "$B" peer); }
out=$(ping -c 10 -i 0.1 -W 2 10.10.10.2 2>&1) || fail "ping over VLAN 10, A -> B: $(echo "$out" | tail -n 2)"
out=$(ip netns exec peer ping -c 10 -i 0.1 -W 2 10.10.10.1 2>&1) ||
	fail "ping over VLAN 10, B -> A: $(echo "$out" | tail -n 2)"
out=$(ping -c 5 -i 0.1 -W 2 -s 1400 10.10.10.2 2>&1) ||
	fail "1400-byte ping over VLAN 10: $(echo "$out" | tail -n 2)"
echo "  ping over VLAN 10: 10 both ways, 5 of 1400 bytes"
if [ "$RSNIC_FAMILY" = mana ]; then
	# Each end received at least the 10 requests and the 15 replies or requests of the
	# other's pings, every one of them tagged on the wire.
	da=$(($(stripped "$A") - sa0)) db=$(($(stripped "$B" peer) - sb0))
	echo "  tags the device stripped: $da on A, $db on B"
	[ "$da" -ge 25 ] && [ "$db" -ge 25 ] ||
		fail "the model stripped $da tags on A and $db on B; want at least 25 each"
fi
ip link del "$A.10"
teardown_pair
