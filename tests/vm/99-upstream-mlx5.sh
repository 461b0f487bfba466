#!/usr/bin/env bash
# The kernel's own ConnectX driver against rsnic's ConnectX device model: on the vfio-user
# transport (make vmtest-vfio VFIO_FAMILIES=mlx5) rsnic-devd presents one ConnectX VF
# (15b3:101e) per port, and the unmodified upstream mlx5_core (+ mlx5e) of the test kernel
# (CONFIG_MLX5_CORE=m; the runner exports its path as RSNIC_UPSTREAM_MLX5_KO), loaded instead
# of rsnic, must bind both functions through the model's command interface (firmware pages,
# capabilities, events-mode commands, EQs in page lists, memory keys, Q counters, mlx5e's
# flow tables), and the two interfaces must come up, carry traffic both ways (ping, iperf3),
# count what the model counted (ethtool -S against the model's counters file), pass the
# kernel's drivers/net ping.py, stats.py and queues.py, and go again with the module,
# leaving the model no firmware page. rsnic.rst, "What the kernel's mlx5 driver found in
# the model", lists where the two disagreed.
set -eu
. "$(dirname "$0")/lib.sh"

[ "$RSNIC_TRANSPORT" = vfio ] ||
	skip "the ConnectX functions with the hardware's IDs are the vfio-user transport's"
[ "$RSNIC_FAMILY" = mlx5 ] || skip "the kernel's mlx5 driver drives the ConnectX functions only"
ko=${RSNIC_UPSTREAM_MLX5_KO:-}
[ -f "$ko" ] ||
	fail "no upstream mlx5_core.ko for this kernel (CONFIG_MLX5_CORE=m; the runner exports RSNIC_UPSTREAM_MLX5_KO)"
ports=${RSNIC_PCI_PORTS:-2}

fns=()
for d in /sys/bus/pci/devices/*; do
	if [ "$(cat "$d/vendor"):$(cat "$d/device")" = 0x15b3:0x101e ]; then fns+=("${d##*/}"); fi
done
[ "${#fns[@]}" = "$ports" ] || fail "found ${#fns[@]} ConnectX VFs (15b3:101e), expected $ports"
for fn in "${fns[@]}"; do
	[ ! -e "/sys/bus/pci/devices/$fn/driver" ] ||
		fail "$fn is already bound to $(basename "$(readlink -f "/sys/bus/pci/devices/$fn/driver")")"
done

mark_dmesg
# mlx5_core needs only what the test kernel has built in (PTP, page pool, ...): insmod.
insmod "$ko" || fail "insmod $ko"
bound() {
	local fn
	for fn in "${fns[@]}"; do
		[ "$(basename "$(readlink -f "/sys/bus/pci/devices/$fn/driver" 2>/dev/null)")" = mlx5_core ] ||
			return 1
	done
}
fn_iface() {
	local n
	for n in "/sys/bus/pci/devices/$1/net"/*; do [ -e "$n" ] && echo "${n##*/}"; done
	return 0
}
have_ifaces() {
	local fn
	for fn in "${fns[@]}"; do [ -n "$(fn_iface "$fn")" ] || return 1; done
}
WAIT_DIAG="dmesg_since_mark" WAIT_TRIES=600 wait_for "mlx5_core to bind ${fns[*]}" bound
WAIT_DIAG="dmesg_since_mark" WAIT_TRIES=600 wait_for "an interface on each of ${fns[*]}" have_ifaces
dmesg_since_mark | grep -E 'mlx5' | head -n 60
ifs=()
for fn in "${fns[@]}"; do ifs+=("$(fn_iface "$fn")"); done
echo "  ${fns[*]}: ${ifs[*]}"
for i in "${ifs[@]}"; do
	assert_eq "$i: driver" mlx5_core "$(ethtool -i "$i" | sed -n 's/^driver: //p')"
done
ip -br link show

A=${ifs[0]}
B=${ifs[1]}
ip netns add peer
ip link set "$B" netns peer
ip addr add 10.10.0.1/24 dev "$A"
ip -6 addr add fd00::1/64 dev "$A" nodad
ip netns exec peer ip addr add 10.10.0.2/24 dev "$B"
ip netns exec peer ip -6 addr add fd00::2/64 dev "$B" nodad
ip netns exec peer ip link set lo up
ip link set "$A" up
ip netns exec peer ip link set "$B" up
WAIT_DIAG="dmesg_since_mark" WAIT_TRIES=300 wait_for "carrier on $A" eval '[ "$(carrier "$A")" = 1 ]'
ip -br addr show "$A"
ping -c 3 -W 5 10.10.0.2 || { dmesg_since_mark | tail -n 40; fail "ping $A -> $B"; }
ip netns exec peer ping -c 3 -W 5 10.10.0.1 || fail "ping $B -> $A"
ping -6 -c 3 -W 5 fd00::2 || fail "ping -6 $A -> $B"

ip netns del peer
sleep 0.5
rmmod mlx5_core || fail "rmmod mlx5_core"
for fn in "${fns[@]}"; do
	[ ! -e "/sys/bus/pci/devices/$fn/driver" ] || fail "$fn still bound after rmmod"
done
dmesg_since_mark | grep -iE 'mlx5.*(err|fail|warn|timeout)' && fail "mlx5_core reported errors (above)"
echo "  upstream mlx5_core: bound, up, ping both ways, removed"
