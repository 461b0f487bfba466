#!/usr/bin/env bash
# Loading rsnic with default parameters (the run's family; on the vfio transport, the
# device rsnic-devd serves) gives exactly two rsnic interfaces, each an Ethernet device (type 1)
# with a locally administered unicast MAC (the one its device reports), MTU 1500 and MTU
# limits 68..9600, the two MACs different; unloading leaves no rsnic interface. On the
# debug kernel it runs in the ConnectX pass only. On the kernel transport a plain insmod
# (without host=kernel) creates no interface. On the vfio transport the interrupts carry the
# upstream drivers' names.
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

# On PCI functions the interrupts carry the upstream driver's names in /proc/interrupts:
# ConnectX's control vector (mlx5_async0) from probe on (MANA's, mana_hwc upstream, has no
# handler: rsnic polls its HWC), and one per channel's completion vector while the interface
# is up (ConnectX mlx5_comp<N>, MANA mana_q<N>; a MANA function's vports share their
# vectors, as upstream), each followed by @pci:<function>.
if [ "$RSNIC_TRANSPORT" = vfio ]; then
	for i in "${ifs[@]}"; do ip link set "$i" up; done
	for i in "${ifs[@]}"; do
		pci=$(ethtool -i "$i" | sed -n 's/^bus-info: //p')
		case $RSNIC_FAMILY in
		mlx5) names=("mlx5_async0@pci:$pci") comp=mlx5_comp ;;
		mana) names=() comp=mana_q ;;
		esac
		for ((c = 0; c < $(channels_of "$i"); c++)); do names+=("$comp$c@pci:$pci"); done
		for n in "${names[@]}"; do
			grep -qE "[ ,]$n(,|\$)" /proc/interrupts ||
				fail "$i: no interrupt named $n in /proc/interrupts: $(grep -E 'mlx5|mana|rsnic' /proc/interrupts)"
		done
		echo "  $i: interrupts ${names[*]}"
	done
	for i in "${ifs[@]}"; do ip link set "$i" down; done
fi
unload_rsnic

# A plain insmod binds PCI functions only: without host=kernel the in-kernel device host
# creates nothing (the VM of the kernel transport has no rsnic PCI function).
if [ "$RSNIC_TRANSPORT" = kernel ]; then
	mark_dmesg
	insmod "$RSNIC_KO" || fail "plain insmod"
	assert_eq "interfaces after a plain insmod" "" "$(rsnic_ifaces)"
	dmesg_since_mark | grep -q "rsnic: .*no simulated devices" ||
		fail "a plain insmod did not say it created no simulated device"
	unload_rsnic
fi
