#!/usr/bin/env bash
# The kernel's own ConnectX driver against rsnic's ConnectX device model: on the vfio-user
# transport (make vmtest-vfio VFIO_FAMILIES=mlx5) rsnic-devd presents one ConnectX VF
# (15b3:101e) per port, and the unmodified upstream mlx5_core (+ mlx5e) of the test kernel
# (CONFIG_MLX5_CORE=m; the runner exports its path as RSNIC_UPSTREAM_MLX5_KO), loaded instead
# of rsnic, must bind both functions through the model's command interface (firmware pages,
# capabilities, events-mode commands, EQs in page lists, memory keys, Q counters, mlx5e's
# flow tables), and then:
#   - both interfaces come up with carrier, one moved into network namespace "peer";
#   - ping both ways over IPv4 and IPv6; iperf3 TCP and UDP both ways;
#   - ping both ways over VLAN 10: the model's RQs strip the tags for mlx5e (its
#     rx_removed_vlan_packets, from cqe_has_vlan, equal to the model's dev_rx_vlan_stripped),
#     and `ethtool -K rxvlan off` (mlx5e_modify_rq_vsd: MODIFY_RQ with the VSD bit) stops it
#     on B while the pings still arrive; back on, it strips again;
#   - ethtool -S agrees with the model's counters ($RSNIC_DEVD_DIR/port<P>/counters):
#     the vport counters (QUERY_VPORT_COUNTER) with the frames the model delivered and
#     sent, rx_out_of_buffer and rx_if_down_packets (the Q counters) with the model's
#     drops for lack of a WQE;
#   - the kernel's drivers/net ping.py, stats.py and queues.py pass (tests/vm/ksft.sh);
#   - rmmod leaves no interface and gives every firmware page back (dev_fw_pages 0), and a
#     second insmod binds and comes up again;
#   - ethtool -m decodes the model's cable module (PMLP, MCIA) as for rsnic;
#   - mlx5_core logs no error, warning or timeout.
# rsnic.rst, "What the kernel's mlx5 driver found in the model", lists where the two
# disagreed.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$(dirname "$0")/ksft.sh"

[ "$RSNIC_TRANSPORT" = vfio ] ||
	skip "the ConnectX functions with the hardware's IDs are the vfio-user transport's"
[ "$RSNIC_FAMILY" = mlx5 ] || skip "the kernel's mlx5 driver drives the ConnectX functions only"
# MLX5_KO, ports, FNS; load_mlx5, unload_mlx5, setup_mlx5_pair, teardown_mlx5_pair,
# model_counter, mlx5_no_errors.
. "$(dirname "$0")/mlx5-upstream.sh"
fns_unbound

# Whatever the outcome, the functions go back unbound to the tests after this one (which
# bind rsnic to them): no namespace, no mlx5_core.
# (Each command may fail, the namespace gone already: set -e holds in the trap too, and
# a failure there would be the test's exit status.)
trap 'ip netns del peer 2>/dev/null || true; if grep -q "^mlx5_core " /proc/modules; then rmmod mlx5_core || true; fi' EXIT

mark_dmesg
load_mlx5
echo "  ${FNS[*]}: ${IFS_MLX5[*]}"
for i in "${IFS_MLX5[@]}"; do
	assert_eq "$i: driver" mlx5_core "$(ethtool -i "$i" | sed -n 's/^driver: //p')"
	# The cable module, through PMLP and MCIA, as rsnic reads it (88-module-eeprom).
	check_cable_module "$i" "$i"
done
for p in $(seq 0 $((ports - 1))); do
	v=$(model_counter dev_fw_pages "$p")
	[ "$v" -gt 0 ] || fail "port $p holds no firmware pages after the boot (dev_fw_pages $v)"
	echo "  port $p: $v firmware pages"
done
pair_up "${IFS_MLX5[0]}" "${IFS_MLX5[1]}"
ip -br addr show "$A"

# Ping both ways, IPv4 and IPv6.
ping_both

# 802.1Q: mlx5e's rx-vlan-offload is on by default (its RQs made with vsd 0): the model
# strips each tag into the CQE, which mlx5e counts in rx_removed_vlan_packets. rxvlan off on
# B reaches the model by MODIFY_RQ (RDY -> RDY, VSD in the bitmask).
vlan_pair
vlan_pings() {
	out=$(ping -c 10 -i 0.1 -W 2 10.10.10.2 2>&1) || fail "ping over VLAN 10, A -> B ($1): $(echo "$out" | tail -n 2)"
	out=$(ip netns exec peer ping -c 10 -i 0.1 -W 2 -s 1400 10.10.10.1 2>&1) ||
		fail "ping over VLAN 10, B -> A ($1): $(echo "$out" | tail -n 2)"
}
# removed_agree: each port's mlx5e count of stripped tags equals the model's (VLAN_B: B's).
removed_agree() {
	VLAN_A=$(ethtool_sum "$A" "" rx_removed_vlan_packets) VLAN_B=$(ethtool_sum "$B" peer rx_removed_vlan_packets)
	[ "$VLAN_A" = "$(model_counter dev_rx_vlan_stripped 0)" ] &&
		[ "$VLAN_B" = "$(model_counter dev_rx_vlan_stripped 1)" ]
}
vlan_pings "rxvlan on"
WAIT_TRIES=100 WAIT_DIAG='eval echo "mlx5e $VLAN_A $VLAN_B, model $(model_counter dev_rx_vlan_stripped 0) $(model_counter dev_rx_vlan_stripped 1)"' \
	wait_for "mlx5e's rx_removed_vlan_packets to equal the model's stripped tags" removed_agree
[ "$VLAN_A" -ge 10 ] && [ "$VLAN_B" -ge 10 ] || fail "stripped tags: A $VLAN_A, B $VLAN_B; want 10 each"
echo "  ping over VLAN 10 both ways: tags stripped A $VLAN_A, B $VLAN_B (mlx5e = model)"
ip netns exec peer ethtool -K "$B" rxvlan off || fail "mlx5e: ethtool -K $B rxvlan off"
b0=$VLAN_B
vlan_pings "B rxvlan off"
WAIT_TRIES=100 wait_for "the model's counters after the pings" removed_agree
[ "$VLAN_B" = "$b0" ] || fail "B's RQs stripped $((VLAN_B - b0)) tags with rxvlan off"
ip netns exec peer ethtool -K "$B" rxvlan on || fail "mlx5e: ethtool -K $B rxvlan on"
vlan_pings "B rxvlan on again"
WAIT_TRIES=100 wait_for "the model's counters after the pings" removed_agree
[ "$VLAN_B" -ge $((b0 + 10)) ] || fail "B's RQs stripped $((VLAN_B - b0)) tags with rxvlan on again"
echo "  rxvlan off on B: delivered, nothing stripped; on again: $((VLAN_B - b0)) stripped"
ip link del "$A.10"
ip netns exec peer ip link del "$B.10"

# iperf3: TCP (TSO, checksum offload) and UDP both ways.
iperf_both

# ethtool -S against the model, once the ports are quiet (IPv6 neighbour and router
# traffic may still trickle: read both sides until they agree).
AGREE=""
agree() {
	local p ifc ns rx tx drops mrx mtx mdrops
	AGREE=""
	for p in 0 1; do
		if [ "$p" = 0 ]; then ifc=$A ns=""; else ifc=$B ns=peer; fi
		rx=$(ethtool_sum "$ifc" "$ns" "rx_vport_(unicast|multicast|broadcast)_packets")
		tx=$(ethtool_sum "$ifc" "$ns" "tx_vport_(unicast|multicast|broadcast)_packets")
		# The Q counters: the channels' RQs (rx_out_of_buffer) and the drop RQ's
		# (rx_if_down_packets); the model counts both in dev_rx_out_of_buffer.
		drops=$(ethtool_sum "$ifc" "$ns" "rx_out_of_buffer|rx_if_down_packets")
		mrx=$(model_counter dev_rx_packets "$p")
		mtx=$(model_counter dev_tx_packets "$p")
		mdrops=$(model_counter dev_rx_out_of_buffer "$p")
		AGREE+=" port$p rx $rx/$mrx tx $tx/$mtx out_of_buffer $drops/$mdrops"
		[ "$rx" = "$mrx" ] && [ "$tx" = "$mtx" ] && [ "$drops" = "$mdrops" ] || return 1
	done
}
WAIT_TRIES=100 WAIT_DIAG='eval echo "ethtool -S / model:$AGREE"' wait_for "ethtool -S to agree with the model" agree
echo "  ethtool -S / model:$AGREE"
[ "$(ethtool_sum "$A" "" "rx_vport_unicast_packets")" -gt 1000 ] || fail "too few unicast frames counted"
ip netns del peer
sleep 0.5
unload_mlx5
echo "  rmmod: no interface left, every firmware page back"

# The kernel's drivers/net selftests on a fresh load (insmod again).
KSFT_SETUP=setup_mlx5_pair KSFT_TEARDOWN=teardown_mlx5_pair ksft_run ping stats queues

mlx5_no_errors
echo "  upstream mlx5_core: bound, up, ping and iperf3 both ways, counters agree, selftests, reloaded"
