#!/usr/bin/env bash
# 802.1Q over the pair, with the VLAN offloads as upstream 6.12 has them (rsnic.rst,
# "Features (offloads)"): a VLAN interface (id 10) on port A and on port B (in "peer"), pings
# both ways over it, small and large, the ports quiet otherwise (no IPv6 and static
# neighbours on the ports and on the VLAN interfaces).
#
# ConnectX (as mlx5e): rx-vlan-offload and tx-vlan-offload on and changeable. On, the
# sender's device inserts the tag from the eth segment (dev_tx_vlan_inserted) and the
# receiver's RQs strip it into the CQE (dev_rx_vlan_stripped): the receiver's device counts
# the frame as it came off the wire, 4 bytes more than its driver got (dev_rx_bytes =
# rx_bytes + 4 x stripped, exactly). `ethtool -K B rxvlan off` (MODIFY_RQ vsd on the live
# RQs) and `ethtool -K A txvlan off`: the pings still arrive, B's driver gets every byte of
# the wire frames with their tags (dev_rx_bytes = rx_bytes, nothing stripped: the tag was
# on the wire, and B's stack found it in the data; B's driver hands them up
# CHECKSUM_COMPLETE with the tag's bytes added to the CQE's sum, which the stack accepts: no
# "hw csum failure" in the kernel log), and A's stack tags in software (nothing inserted by
# the device). Back on, B's RQs strip again. rx-vlan-filter (as mlx5e: on by default,
# changeable): frames B sends on a VLAN A has no interface for are dropped by A's device
# (its VLAN flow table: dev_rx_steering_drops) and never reach A's driver; with the filter
# off, or A promiscuous, they reach A's driver.
#
# MANA (as mana): no VLAN filter (rx-vlan-filter off [fixed]); both offloads on and fixed; the device strips the tag and reports its VLAN
# id in the RX CQE (dev_rx_vlan_stripped; rsnic must give it back to the stack or nothing
# reaches the VLAN interface), and every tagged frame leaves in the long packet format whose
# OOB carries the tag for the device to insert (tx_long_pkt_fmt).
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
# Family-specific: the offloads are each family's own.

setup_pair
# Nothing else on the ports (no IPv6, static neighbours), so that a snapshot's driver and
# device counters, read one after the other, see the same frames.
quiet_pair
# vlan_if IFACE ADDRESS PEER_ADDRESS PEER_MAC [NETNS]: IFACE.10 with ADDRESS/24, no IPv6
# address, a static neighbour (no ARP probe may cross a phase's snapshots), up (one ip
# process: a process costs a tenth of a second in the TCG VM).
vlan_if() {
	local ns=()
	[ -n "${5:-}" ] && ns=(-n "$5")
	ip "${ns[@]}" -b - <<-EOF || fail "no VLAN interface on $1"
		link add link $1 name $1.10 type vlan id 10
		link set $1.10 addrgenmode none
		addr add $2/24 dev $1.10
		link set $1.10 up
		neigh replace $3 lladdr $4 dev $1.10 nud permanent
	EOF
}
read -r MAC_A <"/sys/class/net/$A/address"
vlan_if "$A" 10.10.10.1 10.10.10.2 "$MAC_B"
vlan_if "$B" 10.10.10.2 10.10.10.1 "$MAC_A" peer
wait_for "carrier on $A.10" eval '[ "$(carrier "$A.10")" = 1 ]'

# What `ethtool -k` shows of A's VLAN offloads: on, and changeable on ConnectX (mlx5e's
# hw_features), fixed on MANA (mana's features only).
if [ "$RSNIC_FAMILY" = mlx5 ]; then want_feat=on; else want_feat="on [fixed]"; fi
ethtool -k "$A" >/tmp/78-feats
declare -A feat
while IFS=: read -r k v; do feat[$k]=${v# }; done </tmp/78-feats
for f in rx-vlan-offload tx-vlan-offload; do
	assert_eq "$A $f" "$want_feat" "${feat[$f]:-absent}"
done
# VLAN filtering by the device: on and changeable on ConnectX (mlx5e), none on MANA (mana).
if [ "$RSNIC_FAMILY" = mlx5 ]; then want_feat=on; else want_feat="off [fixed]"; fi
assert_eq "$A rx-vlan-filter" "$want_feat" "${feat[rx-vlan-filter]:-absent}"

# pings WHAT SMALL BACK LARGE: SMALL pings from A to B, BACK from B to A, LARGE of 1400
# bytes from A (each answered); sets N, the tagged frames each end sent.
pings() {
	local out
	out=$(ping -c "$2" -i 0.02 -W 2 10.10.10.2 2>&1) ||
		fail "ping over VLAN 10, A -> B ($1): $(echo "$out" | tail -n 2)"
	if [ "$3" -gt 0 ]; then
		out=$(ip netns exec peer ping -c "$3" -i 0.02 -W 2 10.10.10.1 2>&1) ||
			fail "ping over VLAN 10, B -> A ($1): $(echo "$out" | tail -n 2)"
	fi
	out=$(ping -c "$4" -i 0.02 -W 2 -s 1400 10.10.10.2 2>&1) ||
		fail "1400-byte ping over VLAN 10 ($1): $(echo "$out" | tail -n 2)"
	N=$(($2 + $3 + $4))
}

# b_settled: B's device and driver agree on what B received since snapshot b$K (snapshot
# b$((K + 1)), taken here; on the vfio transport the device process writes its counters once
# idle). ConnectX: the wire bytes its device counted are the driver's bytes plus 4 for
# each tag its RQs stripped, exactly. MANA (whose model counts bytes for the whole device,
# hc_rx_bytes): the model stripped a tag of each frame B got.
b_settled() {
	local b0=b$K b1=b$((K + 1))
	snap $b1 "$B" peer
	if [ "$RSNIC_FAMILY" = mlx5 ]; then
		[ "$(delta $b0 $b1 dev_rx_bytes)" = \
			$(($(delta $b0 $b1 rx_bytes) + 4 * $(delta $b0 $b1 dev_rx_vlan_stripped))) ]
	else
		[ "$(delta $b0 $b1 dev_rx_vlan_stripped)" -ge $N ]
	fi
}

# phase NAME SMALL BACK LARGE: pings() between snapshots of both ends (the previous phase's
# last ones, a$K and b$K, are the next one's first: nothing crosses the quiet pair in
# between); sets dA[COUNTER] and dB[COUNTER], the deltas of the counters named in $WATCH.
declare -A dA dB
WATCH="dev_rx_vlan_stripped dev_tx_vlan_inserted dev_rx_bytes rx_bytes tx_long_pkt_fmt rx_csum_complete"
phase() {
	pings "$@"
	WAIT_DIAG="deltas b$K b$((K + 1))" wait_for "B's device and driver agree on what B received ($1)" b_settled
	# A's side (its RQs strip in every phase): the tags of what B sent.
	a_settled() {
		snap a$((K + 1)) "$A"
		[ "$(delta a$K a$((K + 1)) dev_rx_vlan_stripped)" -ge $N ]
	}
	wait_for "A's device counters ($1)" a_settled
	local c
	for c in $WATCH; do
		dA[$c]=$(delta a$K a$((K + 1)) "$c")
		dB[$c]=$(delta b$K b$((K + 1)) "$c")
	done
	K=$((K + 1))
	echo "  $1: stripped A ${dA[dev_rx_vlan_stripped]} B ${dB[dev_rx_vlan_stripped]}," \
		"inserted A ${dA[dev_tx_vlan_inserted]} B ${dB[dev_tx_vlan_inserted]}," \
		"B device bytes ${dB[dev_rx_bytes]} driver ${dB[rx_bytes]}"
}
K=0
mark_dmesg
snap a0 "$A"
snap b0 "$B" peer
# at_least WHAT MIN VALUE
at_least() {
	[ "$3" -ge "$2" ] || fail "$1: $3, want at least $2"
}

if [ "$RSNIC_FAMILY" = mana ]; then
	phase "fixed on" 10 10 5
	at_least "tags the model stripped on A" $N "${dA[dev_rx_vlan_stripped]}"
	at_least "tags the model stripped on B" $N "${dB[dev_rx_vlan_stripped]}"
	at_least "A's frames in the long format (the OOB's tag)" $N "${dA[tx_long_pkt_fmt]}"
	ip link del "$A.10"
	teardown_pair
	exit 0
fi

phase "rxvlan, txvlan on" 8 8 4
at_least "A: tags the device inserted" $N "${dA[dev_tx_vlan_inserted]}"
at_least "B: tags the device inserted" $N "${dB[dev_tx_vlan_inserted]}"
at_least "A: tags its RQs stripped" $N "${dA[dev_rx_vlan_stripped]}"
at_least "B: tags its RQs stripped" $N "${dB[dev_rx_vlan_stripped]}"

ip netns exec peer ethtool -K "$B" rxvlan off || fail "ethtool -K $B rxvlan off"
ethtool -K "$A" txvlan off || fail "ethtool -K $A txvlan off"
phase "B rxvlan off, A txvlan off" 5 0 3
assert_eq "B: tags its RQs stripped" 0 "${dB[dev_rx_vlan_stripped]}"
assert_eq "A: tags the device inserted (the stack tags)" 0 "${dA[dev_tx_vlan_inserted]}"
[ "${dB[dev_rx_bytes]}" = "${dB[rx_bytes]}" ] ||
	fail "B's driver got ${dB[rx_bytes]} bytes of the ${dB[dev_rx_bytes]} on the wire"
at_least "B: bytes received (the tags in the data)" $((N * 46)) "${dB[rx_bytes]}"
# The pings went up CHECKSUM_COMPLETE with the tag in the data: the driver added the tag's
# bytes to the device's sum (mlx5e_skb_csum_fixup); a wrong sum would be a "hw csum
# failure" in the kernel log (netdev_rx_csum_fault), checked at the end.
at_least "B: CHECKSUM_COMPLETE with the tag in the data" $N "${dB[rx_csum_complete]}"
at_least "A: tags its RQs still stripped" $N "${dA[dev_rx_vlan_stripped]}"
at_least "B: tags the device still inserted" $N "${dB[dev_tx_vlan_inserted]}"

ip netns exec peer ethtool -K "$B" rxvlan on || fail "ethtool -K $B rxvlan on"
ethtool -K "$A" txvlan on || fail "ethtool -K $A txvlan on"
phase "back on" 5 0 1
at_least "B: tags its RQs stripped again" $N "${dB[dev_rx_vlan_stripped]}"
at_least "A: tags the device inserted again" $N "${dA[dev_tx_vlan_inserted]}"
if dmesg_since_mark | grep -q 'hw csum failure'; then
	fail "a CHECKSUM_COMPLETE sum the stack found wrong: $(dmesg_since_mark | grep -m1 'hw csum failure')"
fi

# rx-vlan-filter (mlx5e's VLAN flow table, on by default): B sends on VLAN 20, which A has
# no interface for. Filtering on, A's device drops every such frame in its flow tables
# (dev_rx_steering_drops) and A's driver sees none (rx_packets); off, or with A
# promiscuous, they reach A's driver (its stack then drops them: no VLAN 20 there) and
# the device drops none. VLAN 10 kept working above with filtering on (its id listed).
ip netns exec peer ip -b - <<-EOF || fail "no VLAN 20 interface on $B"
	link add link $B name $B.20 type vlan id 20
	link set $B.20 addrgenmode none
	addr add 10.20.20.2/24 dev $B.20
	link set $B.20 up
	neigh replace 10.20.20.1 lladdr $MAC_A dev $B.20 nud permanent
EOF
# vid20 WHAT WANT: B pings 10.20.20.1 five times over VLAN 20 (no answer comes), between
# snapshots of A; WANT "dropped": A's device dropped all five and A's driver got nothing,
# "delivered": A's driver got all five and the device dropped none.
vid20() {
	local n=5 got drop
	snap v0 "$A"
	ip netns exec peer ping -c $n -i 0.02 -W 0.2 10.20.20.1 >/dev/null 2>&1 || :
	v_settled() {
		snap v1 "$A"
		[ $(($(delta v0 v1 dev_rx_steering_drops) + $(delta v0 v1 rx_packets))) -ge $n ]
	}
	WAIT_DIAG="deltas v0 v1" wait_for "A's counters of VLAN 20 ($1)" v_settled
	got=$(delta v0 v1 rx_packets) drop=$(delta v0 v1 dev_rx_steering_drops)
	echo "  VLAN 20, $1: A's driver got $got, A's device dropped $drop"
	if [ "$2" = dropped ]; then
		assert_eq "VLAN 20 ($1): frames A's device dropped" $n "$drop"
		assert_eq "VLAN 20 ($1): frames A's driver got" 0 "$got"
	else
		assert_eq "VLAN 20 ($1): frames A's driver got" $n "$got"
		assert_eq "VLAN 20 ($1): frames A's device dropped" 0 "$drop"
	fi
}
vid20 "rx-vlan-filter on" dropped
ethtool -K "$A" rx-vlan-filter off || fail "ethtool -K $A rx-vlan-filter off"
vid20 "rx-vlan-filter off" delivered
ethtool -K "$A" rx-vlan-filter on || fail "ethtool -K $A rx-vlan-filter on"
vid20 "rx-vlan-filter on again" dropped
# The flags reach the device from the driver's control work, a moment after the change:
# single pings over VLAN 20 until one arrives as WANT says ("delivered": A's driver got it;
# "dropped": A's device dropped it), before the five are counted.
vid20_reached() {
	local c=rx_packets
	[ "$1" = dropped ] && c=dev_rx_steering_drops
	snap w0 "$A"
	ip netns exec peer ping -c 1 -W 0.2 10.20.20.1 >/dev/null 2>&1 || :
	sleep 0.1
	snap w1 "$A"
	[ "$(delta w0 w1 "$c")" -ge 1 ]
}
ip link set "$A" promisc on
wait_for "A promiscuous in its device" vid20_reached delivered
vid20 "promiscuous" delivered
ip link set "$A" promisc off
wait_for "A's promiscuous mode off in its device" vid20_reached dropped
vid20 "promiscuous off" dropped

ip link del "$A.10"
teardown_pair
