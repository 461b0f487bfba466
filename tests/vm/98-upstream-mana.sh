#!/usr/bin/env bash
# The kernel's own MANA driver against rsnic's MANA device model: on the vfio-user transport
# (make vmtest-vfio) rsnic-devd presents a MANA VF with the hardware's IDs (1414:00ba), and
# the upstream mana.ko built for the test kernel (scripts/build-upstream.sh; the runner
# exports its path as RSNIC_UPSTREAM_MANA_KO), loaded instead of rsnic, must bind it and
# create one interface per vport (RSNIC_PCI_PORTS), which come up with carrier, and go again
# with the module. A skeleton: ping, iperf3, ethtool -S against the model's counters and the
# kernel's selftests come next.
set -eu
. "$(dirname "$0")/lib.sh"

[ "$RSNIC_TRANSPORT" = vfio ] ||
	skip "the MANA function with the hardware's IDs is the vfio-user transport's"
[ "$RSNIC_FAMILY" = mana ] || skip "the kernel's MANA driver drives the MANA function only"
ko=${RSNIC_UPSTREAM_MANA_KO:-}
[ -f "$ko" ] ||
	fail "no upstream mana.ko for this kernel (make upstream; the runner exports RSNIC_UPSTREAM_MANA_KO)"
ports=${RSNIC_PCI_PORTS:-2}

fn=""
for d in /sys/bus/pci/devices/*; do
	if [ "$(cat "$d/vendor"):$(cat "$d/device")" = 0x1414:0x00ba ]; then fn=${d##*/}; fi
done
[ -n "$fn" ] || fail "no MANA VF (1414:00ba) on the PCI bus"
dev=/sys/bus/pci/devices/$fn
[ ! -e "$dev/driver" ] || fail "$fn is already bound to $(basename "$(readlink -f "$dev/driver")")"

# The test kernel has what mana needs built in (the module has no dependencies): insmod.
insmod "$ko" || fail "insmod $ko"
bound() { [ "$(basename "$(readlink -f "$dev/driver" 2>/dev/null)")" = mana ]; }
wait_for "mana to bind $fn" bound
fn_ifaces() {
	local n
	for n in "$dev"/net/*; do [ -e "$n" ] && echo "${n##*/}"; done
	return 0
}
have_ifaces() { [ "$(fn_ifaces | wc -l)" = "$ports" ]; }
wait_for "$ports interfaces on $fn" have_ifaces
mapfile -t ifs < <(fn_ifaces)
echo "  $fn: ${ifs[*]}"
has_carrier() { [ "$(carrier "$1")" = 1 ]; }
macs=""
for i in "${ifs[@]}"; do
	assert_eq "$i: driver" mana "$(ethtool -i "$i" | sed -n 's/^driver: //p')"
	assert_eq "$i: bus-info" "$fn" "$(ethtool -i "$i" | sed -n 's/^bus-info: //p')"
	mac=$(cat "/sys/class/net/$i/address")
	case " $macs " in *" $mac "*) fail "$i: MAC $mac given twice" ;; esac
	macs+=" $mac"
	# Opening a port creates its queues through the hardware channel (EQs, CQs, WQ
	# objects, RSS): the model must answer every request mana makes.
	ip link set "$i" up || fail "$i: ip link set up"
	wait_for "carrier on $i" has_carrier "$i"
done
ip -br link show
rmmod mana || fail "rmmod mana"
[ ! -e "$dev/driver" ] || fail "$fn still bound after rmmod"
for i in "${ifs[@]}"; do
	[ ! -e "/sys/class/net/$i" ] || fail "$i left after rmmod"
done
