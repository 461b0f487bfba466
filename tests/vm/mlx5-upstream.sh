# Helpers for the kernel's own ConnectX driver (the unmodified upstream mlx5_core + mlx5e of
# the test kernel) on the ConnectX VFs (15b3:101e) that rsnic-devd presents on the vfio-user
# transport: tests/vm/99-upstream-mlx5.sh and make bench-upstream (scripts/vm/bench-upstream.sh).
# Source it after lib.sh, on the vfio-user transport with the ConnectX model (the caller
# checks that). It sets
#   MLX5_KO  the upstream mlx5_core.ko (CONFIG_MLX5_CORE=m; the runner exports its path as
#            RSNIC_UPSTREAM_MLX5_KO)
#   ports    the device process's ports (RSNIC_PCI_PORTS, at least 2: the pair)
#   FNS      the ConnectX VFs in PCI order: function f is the model's port f (the device
#            process numbers them so)
# and fails if one of them is missing.
# shellcheck shell=bash

MLX5_KO=${RSNIC_UPSTREAM_MLX5_KO:-}
[ -f "$MLX5_KO" ] ||
	fail "no upstream mlx5_core.ko for this kernel (CONFIG_MLX5_CORE=m; the runner exports RSNIC_UPSTREAM_MLX5_KO)"
ports=${RSNIC_PCI_PORTS:-2}
[ "$ports" -ge 2 ] || fail "two ports are needed (RSNIC_PCI_PORTS=$ports)"

FNS=()
for d in /sys/bus/pci/devices/*; do
	if [ "$(cat "$d/vendor"):$(cat "$d/device")" = 0x15b3:0x101e ]; then FNS+=("${d##*/}"); fi
done
[ "${#FNS[@]}" = "$ports" ] || fail "found ${#FNS[@]} ConnectX VFs (15b3:101e), expected $ports"

# fns_unbound: no driver holds any of the functions.
fns_unbound() {
	local fn
	for fn in "${FNS[@]}"; do
		[ ! -e "/sys/bus/pci/devices/$fn/driver" ] ||
			fail "$fn is already bound to $(basename "$(readlink -f "/sys/bus/pci/devices/$fn/driver")")"
	done
}

bound() {
	local fn
	for fn in "${FNS[@]}"; do
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
	for fn in "${FNS[@]}"; do [ -n "$(fn_iface "$fn")" ] || return 1; done
}

# fn_port FUNCTION: the model's port of PCI function FUNCTION (its place in FNS), whatever
# driver holds it.
fn_port() {
	local i
	for i in "${!FNS[@]}"; do
		if [ "${FNS[$i]}" = "$1" ]; then
			echo "$i"
			return
		fi
	done
	fail "$1 is not one of the ConnectX functions (${FNS[*]})"
}

# The model's counter NAME of port P (devd rewrites the file when it goes idle).
model_counter() {
	local f=${RSNIC_DEVD_DIR:-/nonexistent}/port$2/counters
	[ -r "$f" ] || fail "no model counters at $f"
	file_field "$f" "$1:" 0
}

# load_mlx5: insmod, both functions bound, an interface on each (IFS_MLX5, in function
# order: function f is the model's port f).
load_mlx5() {
	local fn
	insmod "$MLX5_KO" || fail "insmod $MLX5_KO"
	WAIT_DIAG="dmesg_since_mark" WAIT_TRIES=600 wait_for "mlx5_core to bind ${FNS[*]}" bound
	WAIT_DIAG="dmesg_since_mark" WAIT_TRIES=600 wait_for "an interface on each of ${FNS[*]}" have_ifaces
	IFS_MLX5=()
	for fn in "${FNS[@]}"; do IFS_MLX5+=("$(fn_iface "$fn")"); done
}

unload_mlx5() {
	local fn i p
	rmmod mlx5_core || fail "rmmod mlx5_core"
	for fn in "${FNS[@]}"; do
		[ ! -e "/sys/bus/pci/devices/$fn/driver" ] || fail "$fn still bound after rmmod"
	done
	for i in "${IFS_MLX5[@]}"; do
		[ ! -e "/sys/class/net/$i" ] || fail "$i left after rmmod"
	done
	# Every firmware page came back (TEARDOWN_HCA, then MANAGE_PAGES TAKE until none).
	for p in $(seq 0 $((ports - 1))); do
		WAIT_TRIES=100 wait_for "port $p's firmware pages back" \
			eval '[ "$(model_counter dev_fw_pages '"$p"')" = 0 ]'
	done
}

# mlx5_no_errors: mlx5_core logged no error, warning or timeout since the last mark_dmesg.
mlx5_no_errors() {
	if dmesg_since_mark | grep -iE 'mlx5.*(error|err\(|fail|warn|timeout)'; then
		fail "mlx5_core reported errors (above)"
	fi
}

# setup_mlx5_pair: load_mlx5, then pair_up (lib.sh) on its two interfaces (A, B).
setup_mlx5_pair() {
	load_mlx5
	pair_up "${IFS_MLX5[0]}" "${IFS_MLX5[1]}"
}
# teardown_mlx5_pair: no namespace "peer", unload_mlx5.
teardown_mlx5_pair() {
	ip netns del peer 2>/dev/null
	sleep 0.2
	unload_mlx5
}
