#!/usr/bin/env bash
# The main job, inside the VM, once per device family (RSNIC_FAMILIES, default "mlx5 mana"):
# load rsnic, put its second port in network namespace "peer", bring both up and show them
# (carrier, ethtool information); ping both ways, a short iperf3 burst, then pktgen
# (64-byte UDP, burst 32) in both settings of the family's private flag (mlx5: skb_tx_mpwqe on,
# then off; MANA: RX doorbells batched, then per packet), and a side-by-side table of what
# the counters (ethtool -S) say about the two.
set -eu
if [ -z "${RSNIC_FAMILY:-}" ]; then
	for fam in ${RSNIC_FAMILIES:-mlx5 mana}; do
		echo
		echo "################ family $fam ################"
		RSNIC_FAMILY=$fam bash "$0" || exit 1
	done
	exit 0
fi
. "$RSNIC_ROOT/tests/vm/lib.sh"
. "$RSNIC_ROOT/tests/vm/traffic.sh"

PKTS=${DEMO_PKTGEN_COUNT:-20000}

setup_pair
echo
echo "== rsnic ports: $A here, $B in namespace peer"
ip -br addr show dev "$A"
ip netns exec peer ip -br addr show dev "$B"
for i in "$A" "$B"; do
	ns=()
	[ "$i" = "$B" ] && ns=(ip netns exec peer)
	echo
	echo "== $i: carrier=$("${ns[@]}" cat "/sys/class/net/$i/carrier")"
	"${ns[@]}" ethtool -i "$i" | grep -E '^(driver|version|firmware-version|bus-info):'
	"${ns[@]}" ethtool "$i" | grep -E 'Speed|Duplex|Link detected'
	"${ns[@]}" ethtool --show-priv-flags "$i" | grep -v '^Private flags'
	"${ns[@]}" ethtool -l "$i" 2>/dev/null | awk '/^Current/ { p = 1 } p && /^Combined:/ { print "Channels (combined): " $2 }'
done

echo
echo "== ping both ways, IPv4 and IPv6"
ping -c 3 -i 0.2 -W 2 10.10.0.2 | tail -n 2
ip netns exec peer ping -c 3 -i 0.2 -W 2 10.10.0.1 | tail -n 2
ping -6 -c 3 -i 0.2 -W 2 fd00::2 | tail -n 2
ip netns exec peer ping -6 -c 3 -i 0.2 -W 2 fd00::1 | tail -n 2

echo
echo "== iperf3 burst, TCP, 3 s each way (emulated VM: rates are indicative only)"
for dir in "$A->$B" "$B->$A"; do
	if [ "$dir" = "$A->$B" ]; then
		iperf_server 10.10.0.2 peer
		iperf3 -c 10.10.0.2 -t 3 -J >/tmp/demo-iperf.json || fail "iperf3 $dir"
	else
		iperf_server 10.10.0.1
		ip netns exec peer iperf3 -c 10.10.0.1 -t 3 -J >/tmp/demo-iperf.json || fail "iperf3 $dir"
	fi
	echo "  $dir: $(($(iperf_json /tmp/demo-iperf.json bps) / 1000000)) Mbit/s," \
		"retransmits $(iperf_json /tmp/demo-iperf.json retransmits)"
done

echo
echo "== pktgen: $PKTS x 64-byte UDP (burst 32) from $A to $B, $PFLAG ${PFLAG_MODES% *}, then ${PFLAG_MODES#* }"
quiet_pair
sleep 0.5
pktgen_modes "$PKTS"
echo
pktgen_table
echo
echo "  Figures are counter deltas of the sending port $A (B: the receiving port): ethtool -S,"
echo "  and for dev_* the device model's own counts in $(model_counters_file "$A")."
echo "  Doorbells: doorbell register writes; PCIe bytes: the device model's TLP"
echo "  accounting (rsnic-datapath.rst, 'How figures are measured'); floor: data plus TLP overhead of"
echo "  carrying it."

echo
echo "== $A counters after the demo (non-zero, port totals; dev_*: the device model's)"
counters "$A" | awk '$1 !~ /^(tx|rx|ch)_?[0-9]/ && $2 != 0'

echo
# What a carrier follows differs between the families, as on the hardware: a ConnectX port's
# link is the cable's, so when one end goes down the other loses its carrier too (the
# device's port-change event); a MANA vport hangs off the virtual switch, and upstream mana
# reports the carrier on while the interface is up, whatever the other vport does.
if [ "$RSNIC_FAMILY" = mlx5 ]; then
	echo "== link down on $A: both carriers drop (ConnectX: one cable, a port-change event at each end)"
	ip link set "$A" down
	wait_for "peer carrier off" eval '[ "$(ip netns exec peer cat /sys/class/net/$B/carrier)" = 0 ]'
	echo "carrier $A=$(carrier "$A") $B=$(ip netns exec peer cat "/sys/class/net/$B/carrier")"
	ip link set "$A" up
	wait_for "both carriers back" eval '[ "$(carrier "$A")" = 1 ] && [ "$(ip netns exec peer cat /sys/class/net/$B/carrier)" = 1 ]'
	echo "link up on $A again: carrier $A=$(carrier "$A") $B=$(ip netns exec peer cat "/sys/class/net/$B/carrier")"
else
	echo "== link down on $A: only $A's carrier drops (MANA: a vport's carrier follows its own interface, as upstream mana)"
	ip link set "$A" down
	wait_for "$A carrier off" eval '[ "$(carrier "$A")" = 0 ]'
	sleep 0.5
	[ "$(ip netns exec peer cat "/sys/class/net/$B/carrier")" = 1 ] ||
		fail "$B lost its carrier when $A went down (a MANA vport's carrier is its own)"
	echo "carrier $A=$(carrier "$A") $B=$(ip netns exec peer cat "/sys/class/net/$B/carrier")"
	ip link set "$A" up
	wait_for "$A carrier back" eval '[ "$(carrier "$A")" = 1 ]'
	echo "link up on $A again: carrier $A=$(carrier "$A")"
fi
teardown_pair
