# Helpers for rsnic's VM tests. Source it from a test script; RSNIC_KO names the module.
# shellcheck shell=bash

RSNIC_KO=${RSNIC_KO:-$RSNIC_ROOT/target/kbuild/${KERNEL_VARIANT:-normal}/rsnic.ko}

# The family the tests run on (the runner runs the suite once per family). The few counters
# and the private flag whose names differ between the families:
#   PFLAG          the family's data-path private flag, PFLAG_DEFAULT its value at load,
#                  PFLAG_MODES the two values pktgen compares (default first)
#   PFLAGS         every private flag of the family with its value at load ("name=value")
#   C_NOWQE        device drops for lack of a posted RX WQE
#   C_TOO_LONG     device drops of frames longer than the RX buffer
#   C_WQE_ERR      TX WQEs the device refused
#   C_TX_BYTES     bytes the device put on the wire
#   C_STOPS        TX queue stops by the driver, C_WAKES its wakes
#   C_RXQ          the packets one RX queue received, a printf format of the queue number
#   C_HW_TX        the hardware counters (ethtool -S, from the device's control interface)
#                  whose sum is the packets the port sent, C_HW_RX the packets it received
#   HW_SCOPE       what C_HW_* count: "port" (ConnectX's vport counters) or "device" (MANA's
#                  MANA_QUERY_GF_STAT answers for the device: the sums over its ports)
RSNIC_FAMILY=${RSNIC_FAMILY:-mlx5}
case $RSNIC_FAMILY in
mlx5)
	PFLAG=skb_tx_mpwqe PFLAG_DEFAULT=on PFLAG_MODES="on off"
	PFLAGS="rx_cqe_compress=off rx_no_csum_complete=off xdp_tx_mpwqe=on skb_tx_mpwqe=on"
	C_NOWQE=dev_rx_out_of_buffer C_TOO_LONG=dev_rx_too_long C_WQE_ERR=dev_wqe_errors
	C_TX_BYTES=dev_tx_bytes C_STOPS=tx_queue_stopped C_WAKES=tx_queue_wake C_RXQ=rx%d_packets
	C_HW_TX="tx_vport_unicast_packets tx_vport_multicast_packets tx_vport_broadcast_packets"
	C_HW_RX="rx_vport_unicast_packets rx_vport_multicast_packets rx_vport_broadcast_packets"
	HW_SCOPE=port
	;;
mana)
	PFLAG=rx_db_per_packet PFLAG_DEFAULT=off PFLAG_MODES="off on"
	PFLAGS="rx_db_per_packet=off"
	C_NOWQE=dev_rx_discards_no_wqe C_TOO_LONG=dev_rx_truncated C_WQE_ERR=dev_tx_wqe_errors
	C_TX_BYTES=dev_tx_bytes C_STOPS=stop_queue C_WAKES=wake_queue C_RXQ=rx_%d_packets
	C_HW_TX="hc_tx_ucast_pkts hc_tx_mcast_pkts hc_tx_bcast_pkts"
	C_HW_RX="hc_rx_ucast_pkts hc_rx_mcast_pkts hc_rx_bcast_pkts"
	HW_SCOPE=device
	;;
*)
	echo "unknown RSNIC_FAMILY=$RSNIC_FAMILY" >&2
	exit 1
	;;
esac

fail() {
	echo "FAIL: $*" >&2
	if [ -n "${RSNIC_FAIL_FILE:-}" ]; then echo "$*" >>"$RSNIC_FAIL_FILE"; fi
	exit 1
}

# skip REASON: ends the test as skipped (exit 77); the runner prints REASON on its line.
skip() {
	echo "ok # skip: $*"
	if [ -n "${RSNIC_SKIP_FILE:-}" ]; then echo "$*" >"$RSNIC_SKIP_FILE"; fi
	exit 77
}

# assert_eq WHAT EXPECTED ACTUAL
assert_eq() {
	[ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
	echo "  $1 = $3"
}

# debug: 1 on the debug kernel (KERNEL_VARIANT=debug), 0 otherwise; tests scale their packet
# counts and waits by it. (No subshell: a process costs a tenth of a second in the TCG VM.)
debug=0
# shellcheck disable=SC2034 # (for the tests)
[ "${KERNEL_VARIANT:-normal}" != debug ] || debug=1

# one_family_on_debug: on the debug kernel and the kernel transport, ends the test as
# skipped (exit 77) unless the family is mlx5. For tests of family-independent code (ports,
# ethtool, carrier, MTU, reopening): the debug kernel's sanitizers see that code in the mlx5
# pass, and the normal kernel runs them for both families. Keeps the debug suite's time in
# bounds. On the vfio transport the bus side is the family's own (a MANA function carrying
# its vports and sharing its vectors, a ConnectX function per port), so both families run.
# RSNIC_DEBUG_ALL_FAMILIES=1 runs them for every family on the debug kernel too.
one_family_on_debug() {
	if [ "${KERNEL_VARIANT:-normal}" = debug ] && [ "$RSNIC_FAMILY" != mlx5 ] &&
		[ "${RSNIC_TRANSPORT:-kernel}" = kernel ] && [ -z "${RSNIC_DEBUG_ALL_FAMILIES:-}" ]; then
		skip "family-independent code: on the debug kernel it runs in the mlx5 pass"
	fi
}

# The transport of the run: "kernel" (the in-kernel device host, configured by module
# parameters) or "vfio" (the device process behind PCI functions with the hardware's IDs,
# one device of the run's family: vm-run.sh's RSNIC_TRANSPORT=vfio).
RSNIC_TRANSPORT=${RSNIC_TRANSPORT:-kernel}

# The PCI function rsnic binds on the vfio transport, by family: MANA's VF, and the ConnectX
# VF devd presents for each port.
case $RSNIC_FAMILY in
mlx5) PCI_ID=15b3:101e ;;
mana) PCI_ID=1414:00ba ;;
esac

# pci_only_plain ARGS...: on the vfio transport, skips the test if it asks for module
# parameters (they configure the in-kernel device host, which that transport has not).
pci_only_plain() {
	if [ "$RSNIC_TRANSPORT" != kernel ] && [ $# -gt 0 ]; then
		skip "needs the in-kernel device host's parameters ($*)"
	fi
}

# Loads rsnic with the given parameters: on the kernel transport host=kernel (the in-kernel
# device host's devices; a plain insmod creates none) and family=$RSNIC_FAMILY unless they
# name a family. On the vfio transport, plain: the module binds the device's PCI functions,
# and assert_vfio_bound checks that it did.
load_rsnic() {
	if [ "$RSNIC_TRANSPORT" != kernel ]; then
		pci_only_plain "$@"
		insmod "$RSNIC_KO" || fail "insmod rsnic ($RSNIC_TRANSPORT transport)"
		assert_vfio_bound
		return
	fi
	local fam=(family="$RSNIC_FAMILY")
	case " $* " in *" family="*) fam=() ;; esac
	insmod "$RSNIC_KO" host=kernel "${fam[@]}" "$@" || fail "insmod rsnic host=kernel ${fam[*]} $*"
}

# pci_id FUNCTION: the vendor:device of PCI function FUNCTION (e.g. 0000:00:06.0), as lspci
# prints it.
pci_id() {
	local v d
	read -r v <"/sys/bus/pci/devices/$1/vendor" && read -r d <"/sys/bus/pci/devices/$1/device" ||
		return 1
	echo "${v#0x}:${d#0x}"
}

# assert_vfio_bound: rsnic drives the vfio transport's functions, and only them: each rsnic
# interface's bus-info is a PCI function of the family's id ($PCI_ID) bound to rsnic (no
# in-kernel device: rsnic-sim<N>), and every function of that id is bound to rsnic. Prints
# the functions.
assert_vfio_bound() {
	local i bus fns=() f drv
	for f in /sys/bus/pci/devices/*; do
		[ "$(pci_id "${f##*/}")" = "$PCI_ID" ] && fns+=("${f##*/}")
	done
	[ "${#fns[@]}" -gt 0 ] || fail "no PCI function $PCI_ID on the vfio transport"
	for f in "${fns[@]}"; do
		drv=$(readlink "/sys/bus/pci/devices/$f/driver" 2>/dev/null)
		[ "${drv##*/}" = rsnic ] || fail "PCI function $f ($PCI_ID) is bound to '${drv##*/}', not rsnic"
	done
	for i in $(rsnic_ifaces); do
		bus=$(ethtool -i "$i" | sed -n 's/^bus-info: //p')
		case " ${fns[*]} " in
		*" $bus "*) ;;
		*) fail "$i: bus-info '$bus' is not one of the vfio transport's functions (${fns[*]})" ;;
		esac
	done
	echo "  rsnic drives ${fns[*]} ($PCI_ID)"
}

unload_rsnic() {
	rmmod rsnic || fail "rmmod rsnic"
	[ -z "$(rsnic_ifaces)" ] || fail "interfaces left after rmmod: $(rsnic_ifaces)"
}

# The interfaces driven by rsnic, in ifindex order.
rsnic_ifaces() {
	local d
	for d in /sys/class/net/*; do
		[ -e "$d" ] || continue
		if [ "$(ethtool -i "${d##*/}" 2>/dev/null | sed -n 's/^driver: //p')" = rsnic ]; then
			echo "$(cat "$d/ifindex") ${d##*/}"
		fi
	done | sort -n | cut -d' ' -f2
}

# carrier IFACE: 1 when the stack sees the link up, 0 otherwise.
carrier() {
	cat "/sys/class/net/$1/carrier" 2>/dev/null || echo 0
}

# channels_of IFACE [max] [NETNS]: the interface's combined channel count from `ethtool -l`,
# the current one, or with "max" the pre-set maximum.
channels_of() {
	local section=Current
	[ "${2:-}" = max ] && section=Pre-set
	if [ -n "${3:-}" ]; then
		ip netns exec "$3" ethtool -l "$1"
	else
		ethtool -l "$1"
	fi | awk -v s="$section" '$1 == s { p = 1 } p && /^Combined:/ { print $2; exit }'
}

# ring_size IFACE RX|TX: IFACE's current ring size in that direction (ethtool -g).
ring_size() {
	ethtool -g "$1" | awk -v d="$2:" '/^Current/ { c = 1 } c && $1 == d { print $2; exit }'
}

# priv_flag IFACE FLAG [NETNS]: "on" or "off" (ethtool pads the names to align the colons).
priv_flag() {
	if [ -n "${3:-}" ]; then
		ip netns exec "$3" ethtool --show-priv-flags "$1"
	else
		ethtool --show-priv-flags "$1"
	fi | sed -n "s/^$2 *: *//p"
}

# pflag_refused IFACE FLAG WITHOUT REASON [NETNS]: a device without WITHOUT (a capability)
# refuses `ethtool --set-priv-flags IFACE FLAG on` (ethtool's message is printed). Fails if
# ethtool accepts it, if FLAG is not off afterwards, or if the kernel log since mark_dmesg
# lacks "IFACE: FLAG: REASON" (a grep pattern).
pflag_refused() {
	local ifc=$1 f=$2 ns=()
	[ -n "${5:-}" ] && ns=(ip netns exec "$5")
	if "${ns[@]}" ethtool --set-priv-flags "$ifc" "$f" on 2>/tmp/ethtool.err; then
		fail "$f on was accepted by a device without $3"
	fi
	echo "  ethtool --set-priv-flags $ifc $f on: $(cat /tmp/ethtool.err)"
	assert_eq "$ifc $f after the refusal" off "$(priv_flag "$ifc" "$f" "${5:-}")"
	dmesg_since_mark | grep -q "$ifc: $f: $4" || fail "no reason for refusing $f in the log"
}

# wait_for DESCRIPTION COMMAND...: retries COMMAND for up to 5 s, 20 s on the debug kernel
# (carrier changes go through the link watch work, counters settle as packets drain);
# WAIT_TRIES=N for N tenths of a second instead (four times that on the debug kernel).
wait_for() {
	local what=$1 i tries=${WAIT_TRIES:-50}
	shift
	[ "${KERNEL_VARIANT:-normal}" = debug ] && tries=$((tries * 4))
	for i in $(seq "$tries"); do
		"$@" && return 0
		sleep 0.1
	done
	# A test may name a command that shows what it was waiting on.
	[ -z "${WAIT_DIAG:-}" ] || $WAIT_DIAG >&2
	fail "timed out waiting for: $what"
}

# dmesg lines since the last mark_dmesg.
mark_dmesg() {
	DMESG_MARK=$(dmesg | wc -l)
}
dmesg_since_mark() {
	dmesg | tail -n +"$((${DMESG_MARK:-0} + 1))"
}

# setup_pair: loads rsnic (extra insmod arguments allowed), moves the second port into
# network namespace "peer", addresses both ends (10.10.0.1/24 and 10.10.0.2/24, fd00::1/64
# and fd00::2/64) and waits for carrier. Sets A (host side) and B (in "peer").
setup_pair() {
	load_rsnic "$@"
	mapfile -t _ifs < <(rsnic_ifaces)
	pair_up "${_ifs[0]}" "${_ifs[1]}"
}

# pair_up IFACE_A IFACE_B: the pair of setup_pair made of two interfaces of any driver (the
# kernel's own mana in 98-upstream-mana): IFACE_B into network namespace "peer", the
# addresses, both up, carrier on A. Sets A and B.
pair_up() {
	A=$1
	B=$2
	ip netns add peer
	ip link set "$B" netns peer
	ip addr add 10.10.0.1/24 dev "$A"
	ip -6 addr add fd00::1/64 dev "$A" nodad
	ip netns exec peer ip addr add 10.10.0.2/24 dev "$B"
	ip netns exec peer ip -6 addr add fd00::2/64 dev "$B" nodad
	ip netns exec peer ip link set lo up
	ip link set "$A" up
	ip netns exec peer ip link set "$B" up
	wait_for "carrier on $A" eval '[ "$(carrier "$A")" = 1 ]'
}

# teardown_pair: removes the namespace and unloads rsnic.
teardown_pair() {
	ip netns del peer 2>/dev/null
	sleep 0.2
	unload_rsnic
}

# model_counters_file IFACE [NETNS]: the file where the device host shows the device
# model's own counters of IFACE's port (dev_*: doorbells, WQEs, modeled PCIe bytes, drops),
# found by the port's bus-info: rsnic-sim<N>:port<P> in debugfs for the in-kernel host; on
# the vfio transport port<P>/counters in the device process's state directory (it rewrites
# the file when it goes idle, so read it once traffic has stopped), the function having its
# PCI address alone as bus-info: a MANA vport is its dev_port, a ConnectX port the
# function's place among rsnic's functions in PCI order (as the device process numbers them).
model_counters_file() {
	local ns=() k v bus= p
	[ -n "${2:-}" ] && ns=(ip netns exec "$2")
	while read -r k v; do [ "$k" = bus-info: ] && bus=$v; done < <("${ns[@]}" ethtool -i "$1")
	case $bus in
	rsnic-sim*) echo "/sys/kernel/debug/rsnic/${bus%%:*}/${bus##*:}/counters" ;;
	*)
		if [ "$RSNIC_FAMILY" = mana ]; then
			p=$("${ns[@]}" cat "/sys/class/net/$1/dev_port")
		else
			p=$(find /sys/bus/pci/drivers/rsnic/ -maxdepth 1 -name '[0-9a-f]*:*' -printf '%f\n' |
				sort | grep -nxF "$bus" | cut -d: -f1)
			p=$((p - 1))
		fi
		echo "${RSNIC_DEVD_DIR:-/nonexistent}/port$p/counters"
		;;
	esac
}

# inject_knob IFACE [NETNS]: the device host's fault-injection file of IFACE's port
# (rsnic.rst, "Fault injection"), beside its counters.
inject_knob() {
	echo "$(dirname "$(model_counters_file "$@")")/inject"
}

# inject_pair [ARGS...]: setup_pair ARGS, then IA and IB, the fault-injection knobs of A and
# of B (inject_knob). Fails where setup_pair does, or unless both knobs are writable.
inject_pair() {
	setup_pair "$@"
	IA=$(inject_knob "$A")
	IB=$(inject_knob "$B" peer)
	[ -w "$IA" ] && [ -w "$IB" ] || fail "no inject knob at $IA / $IB"
}

# counters IFACE [NETNS]: IFACE's `ethtool -S` (what the driver reports, hardware counters
# from the device's control interface included) followed by the device model's counters
# (dev_*), in ethtool's format.
counters() {
	local ns=() f
	[ -n "${2:-}" ] && ns=(ip netns exec "$2")
	"${ns[@]}" ethtool -S "$1"
	f=$(model_counters_file "$1" "${2:-}")
	[ -r "$f" ] || return 0
	# Read by the shell (a process costs a tenth of a second in the TCG VM), in one pass:
	# `read` in a loop would seek back after each line, and a seek in a seq_file makes the
	# device host write the file anew, with the counters of that moment: a line could then
	# be cut where a counter before it grew a digit (a baseline off by thousands, and a
	# settle wait that never ends). mapfile reads the file through, in blocks.
	local -a lines
	mapfile -t lines <"$f"
	printf '%s\n' "${lines[@]}"
}

# cmd_counts IFACE [NETNS]: "<dev_commands> <dev_cmd_eqes>" of IFACE's ConnectX port in the
# model (commands executed, command completion EQEs written for them in events mode), read
# once the device went idle (the vfio transport's file is rewritten then).
cmd_counts() {
	local -a lines
	local l n=0 e=0
	sleep 0.3
	mapfile -t lines <"$(model_counters_file "$1" "${2:-}")"
	for l in "${lines[@]}"; do
		case $l in
		*" dev_commands: "*) n=${l##*: } ;;
		*" dev_cmd_eqes: "*) e=${l##*: } ;;
		esac
	done
	echo "$n $e"
}

# sum_of "NAME ..." < counters: the sum of the named counters.
sum_of() {
	awk -v names=" $1 " 'index(names, " " substr($1, 1, length($1) - 1) " ") { n += $2 }
		END { print n + 0 }'
}

# link_stat IFACE KEY [NETNS]: one counter of `ip -s -s link` (ndo_get_stats64), KEY as
# DIRECTION.NAME of its JSON: rx.multicast, rx.missed_errors, rx.crc_errors, ...
link_stat() {
	local ns=()
	[ -n "${3:-}" ] && ns=(ip netns exec "$3")
	"${ns[@]}" ip -j -s -s link show "$1" | python3 -c '
import json, sys
d, k = json.load(sys.stdin)[0]["stats64"], sys.argv[1].split(".")
print(d[k[0]][k[1]])' "$2"
}

# file_field FILE KEY [DEFAULT]: the rest of FILE's first line whose first word is KEY, or
# DEFAULT (nothing without one) if no line has it. Read by the shell: a process costs a
# tenth of a second in the TCG VM.
file_field() {
	local k v
	while read -r k v; do
		if [ "$k" = "$2" ]; then
			echo "$v"
			return
		fi
	done <"$1"
	[ $# -lt 3 ] || echo "$3"
}

# stat IFACE NAME [NETNS]: one counter of counters() (nothing if IFACE has no NAME).
stat() {
	counters "$1" "${3:-}" >/tmp/stat.raw
	file_field /tmp/stat.raw "$2:"
}


# dl_port IFACE: the devlink port of IFACE (in this namespace), e.g. platform/rsnic-sim.0/0.
dl_port() {
	local l
	l=$(devlink port show | grep -E " netdev $1( |$)" | head -n 1)
	echo "${l%%: *}"
}

# dl_ports_ab: PA and PB, the devlink ports of A and B after setup_pair (B's netdev is in
# namespace "peer", so `devlink port show` does not name it: the other rsnic port).
dl_ports_ab() {
	local l
	PA=$(dl_port "$A")
	l=$(devlink port show | grep -vF "$PA: " | head -n 1)
	PB=${l%%: *}
	[ -n "$PA" ] && [ -n "$PB" ] || fail "devlink ports of $A / $B not found"
}

# health_rep PORT NAME FIELD: FIELD (state, error, recover, grace_period) of devlink health
# reporter NAME of devlink port PORT, from `devlink -j health show`.
health_rep() {
	devlink -j health show "$1" reporter "$2" | python3 -c '
import json, sys
for reps in json.load(sys.stdin)["health"].values():
    for r in reps:
        if r.get("reporter") == sys.argv[1]:
            print(r[sys.argv[2]])
            sys.exit(0)
sys.exit(1)' "$2" "$3"
}

# health_grace PORT MS: sets the grace period of PORT's tx and rx reporters to MS ms.
health_grace() {
	devlink health set "$1" reporter tx grace_period "$2"
	devlink health set "$1" reporter rx grace_period "$2"
}

# check_cable_module WHO IFACE [NETNS]: ethtool -m of IFACE decodes the ConnectX model's
# cable module, a QSFP28 passive copper cable of 1 m for 100GBASE-CR4 (88-module-eeprom for
# rsnic, 99-upstream-mlx5 for the kernel's mlx5e). WHO names IFACE in the messages.
check_cable_module() {
	local who=$1 dev=$2 ns=() out=/tmp/module.out
	[ -n "${3:-}" ] && ns=(ip netns exec "$3")
	"${ns[@]}" ethtool -m "$dev" >"$out" 2>&1 || fail "ethtool -m $dev: $(cat "$out")"
	_mfield() {
		awk -F' : ' -v n="$1" '{ k = $1; gsub(/^[ \t]+|[ \t]+$/, "", k) }
			k == n { v = $2; sub(/^[ \t]+/, "", v); sub(/[ \t]+$/, "", v); print v; exit }' "$out"
	}
	assert_eq "$who: identifier" "0x11 (QSFP28)" "$(_mfield Identifier)"
	assert_eq "$who: connector" "0x23 (No separable connector)" "$(_mfield Connector)"
	assert_eq "$who: vendor name" "RSNIC MODEL" "$(_mfield 'Vendor name')"
	assert_eq "$who: vendor PN" "RSNIC-QSFP28-1M" "$(_mfield 'Vendor PN')"
	assert_eq "$who: vendor SN" "RS0000000000001" "$(_mfield 'Vendor SN')"
	assert_eq "$who: copper length" "1m" "$(_mfield 'Length (Copper or Active cable)')"
	assert_eq "$who: technology" "0xa0 (Copper cable, unequalized)" "$(_mfield 'Transmitter technology')"
	grep -q "100G Base-CR4 or 25G Base-CR CA-L" "$out" ||
		fail "$who: no 100GBASE-CR4 compliance in: $(cat "$out")"
}
