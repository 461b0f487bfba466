#!/usr/bin/env bash
# devlink (rsnic.rst, "devlink"): one instance per device, on the device's own bus handle
# (pci/<function> for a PCI function, platform/rsnic-sim.<N> for an in-kernel simulated
# device), a physical devlink port per netdev, and `devlink dev info` with the driver (rsnic),
# the device's asic.id and the firmware version the device reported at bring-up (ConnectX:
# the initialization segment's fw_rev as fw.version; MANA: the GDMA protocol version as
# fw.gdma_protocol), and each netdev's phys_port_name ("p<N>") from its port. Unloading removes every instance and port; loading again brings them
# back.
set -eu
. "$(dirname "$0")/lib.sh"

# ports_of IFACE: the devlink port lines naming IFACE as their netdev.
ports_of() {
	devlink port show | grep -E " netdev $1( |$)" || true
}

check() {
	local i line handle n handles=()
	mapfile -t ifs < <(rsnic_ifaces)
	[ "${#ifs[@]}" -gt 0 ] || fail "no rsnic interfaces"
	echo "  devlink dev show:"
	devlink dev show | sed 's/^/    /'
	echo "  devlink port show:"
	devlink port show | sed 's/^/    /'
	for i in "${ifs[@]}"; do
		line=$(ports_of "$i")
		n=$(printf '%s' "$line" | grep -c . || true)
		assert_eq "$i: devlink ports" 1 "$n"
		case $line in
		*" type eth "*" flavour physical "*) ;;
		*) fail "$i: devlink port is not an eth port of flavour physical: $line" ;;
		esac
		# phys_port_name comes from the devlink port as for any driver with one (the core's
		# devlink_compat_phys_port_name_get(): "p<port number>" for a physical port): what
		# udev's predictable names read.
		assert_eq "$i: phys_port_name" "p$(echo "$line" | sed -n 's/.* port \([0-9]*\).*/\1/p')" \
			"$(cat "/sys/class/net/$i/phys_port_name")"
		handle=${line%%: *}
		handle=${handle%/*}
		# The instance's bus handle is the netdev's device: its PCI function on the vfio
		# transport (ethtool's bus-info), the simulated device's platform device otherwise.
		case $RSNIC_TRANSPORT in
		vfio) assert_eq "$i: devlink instance" "pci/$(ethtool -i "$i" | sed -n 's/^bus-info: //p')" "$handle" ;;
		*) case $handle in platform/rsnic-sim.*) ;; *) fail "$i: devlink instance '$handle'" ;; esac ;;
		esac
		devlink dev show | grep -qxF "$handle" || fail "$handle: not in devlink dev show"
		case " ${handles[*]} " in *" $handle "*) ;; *) handles+=("$handle") ;; esac
	done
	for handle in "${handles[@]}"; do
		info=$(devlink dev info "$handle")
		echo "  devlink dev info $handle:"
		printf '%s\n' "$info" | sed 's/^/    /'
		assert_eq "$handle: driver" rsnic "$(printf '%s\n' "$info" | awk '$1 == "driver" { print $2 }')"
		printf '%s\n' "$info" | grep -qE '^ +asic\.id [^ ]+' || fail "$handle: no fixed asic.id"
		fw=$(printf '%s\n' "$info" | awk '/running:/ { r = 1; next } r && $1 ~ /^fw\./ { print $2; exit }')
		[ -n "$fw" ] || fail "$handle: no running firmware version"
		case $RSNIC_FAMILY in
		mlx5)
			[[ $fw =~ ^[0-9]+\.[0-9]+\.[0-9]{4}$ ]] || fail "$handle: fw.version '$fw'"
			# The board's PSID (QUERY_ADAPTER), fixed, as mlx5's fw.psid: the model's.
			printf '%s\n' "$info" | grep -qE '^ +fw\.psid RSNIC00000001$' ||
				fail "$handle: no fixed fw.psid RSNIC00000001"
			;;
		mana) [[ $fw =~ ^[0-9]+$ ]] || fail "$handle: fw.gdma_protocol '$fw'" ;;
		esac
	done
	HANDLES=("${handles[@]}")
}

load_rsnic
check
# Renamed netdevs are followed (the core reads the name from the netdev).
i=${ifs[0]}
ip link set "$i" down
ip link set "$i" name dltest0
ports_of dltest0 | grep -q . || fail "devlink port show does not follow the rename of $i"
ip link set dltest0 name "$i"
unload_rsnic
for h in "${HANDLES[@]}"; do
	if devlink dev show | grep -qxF "$h"; then fail "$h still listed after rmmod"; fi
done
[ -z "$(devlink port show | grep -F "${HANDLES[0]}/" || true)" ] || fail "ports left after rmmod"
echo "  rmmod: instances and ports gone"
load_rsnic
check
unload_rsnic
