#!/usr/bin/env bash
# The ConnectX function's bring-up through the command interface (commands in DMA memory,
# the command doorbell, the initialization segment), as a host driver does it at probe:
#   - the MAC address each port gets is the one QUERY_NIC_VPORT_CONTEXT reported (the device
#     host burns 02:52:53:00:<device>:<port + 1> into the simulated device; a driver that made
#     its own would show another);
#   - a command the device fails (the device host's sim_fail_cmd knob) makes insmod fail with
#     the command's name, opcode, status and syndrome in the kernel log, leaves no interface
#     behind, and what bring-up had made is undone: the next load works. One command early in
#     the sequence (ENABLE_HCA), one late (ALLOC_TRANSPORT_DOMAIN, after UAR and PD);
#   - the bring-up ends with the function's async EQ (CREATE_EQ, also failed once); the
#     carrier follows the device's port-change events: with the peer down, internal loopback
#     (PPLR) brings the port's operational state, and so its carrier, up and down. Both ends
#     up/down are tests/vm/30-carrier.sh;
#   - `ip link set up` sets the port's admin state by command (ACCESS_REG PAOS), `ethtool -K
#     loopback` the PPLR register: when ACCESS_REG fails, the error reaches the user and the
#     log names it;
#   - a failing teardown command (DISABLE_HCA) is reported at rmmod, which still completes;
#   - after bring-up, commands complete in events mode: the device writes a command
#     completion EQE for each (the model's dev_cmd_eqes grows with dev_commands, one each,
#     over ethtool -S, ip link up/down and an MTU change), and none is logged as found by
#     polling instead;
#   - a device without enhanced MPWQE in its capabilities (sim_mpwqe=0) starts with skb_tx_mpwqe
#     off, refuses to turn it on (EOPNOTSUPP, the reason in the log), and carries traffic.
# MANA: the device is brought up over its hardware channel (SMC ESTABLISH_HWC, the HWC,
# the GDMA requests, REGISTER_DEVICE, the EQs, QUERY_DEV_CONFIG, QUERY_VPORT_CONFIG per port):
#   - each port's MAC is the one QUERY_VPORT_CONFIG reported (the device host burns
#     02:4d:41:00:<device>:<port + 1> into the simulated device);
#   - a request the device fails (the device host's sim_fail_req knob) makes insmod fail with
#     the request's name, code and status in the log, leaves no interface, and what the
#     probe had made is undone (EQs, the DMA region, the registration, the HWC): the next
#     load works. One request before REGISTER_DEVICE (REGISTER_DEVICE itself), one between
#     an EQ's DMA region and its queue (CREATE_QUEUE), one after the EQs (QUERY_VPORT_CONFIG);
#   - the channels' queues and RSS are HWC requests: with MANA_CREATE_WQ_OBJ or
#     MANA_CONFIG_VPORT_RX failing, `ip link set up` fails with the request named, and what
#     the open made is destroyed;
#   - a failing teardown request (DEREGISTER_DEVICE) is reported at rmmod, which completes.
# On the debug kernel (where each load takes 10-20 s) the unwinding paths only: the late
# bring-up failure (CREATE_EQ, which undoes everything before it), the failed ACCESS_REG
# and the failed teardown, under KASAN and kmemleak.
set -eu
. "$(dirname "$0")/lib.sh"
full=1
[ "${KERNEL_VARIANT:-normal}" = debug ] && full=

# factory_macs PREFIX: with two devices loaded, each port has PREFIX:<device>:<port + 1>,
# the MAC the device host burned in and the device reported.
factory_macs() {
	local i=0 dev port
	load_rsnic num_devs=2
	mapfile -t ifs < <(rsnic_ifaces)
	[ "${#ifs[@]}" = 4 ] || fail "${#ifs[@]} interfaces, expected 4"
	for dev in 0 1; do
		for port in 1 2; do
			assert_eq "${ifs[$i]} MAC" "$1:0$dev:0$port" "$(cat "/sys/class/net/${ifs[$i]}/address")"
			i=$((i + 1))
		done
	done
	unload_rsnic
}

# failed_bringup KNOB "CODE NAME" LOGPAT: insmod with the device host failing NAME (KNOB=CODE)
# fails, leaves no module and no interface, logs a bring-up failure naming NAME(CODE)
# followed by LOGPAT (a case pattern) and nothing about undoing it; then a normal load and
# removal work.
failed_bringup() {
	local code=${2%% *} name=${2#* } msg
	local knob=$1=$code pat="*$name($code)$3"
	mark_dmesg
	if insmod "$RSNIC_KO" host=kernel family="$RSNIC_FAMILY" "$knob" 2>/tmp/insmod.err; then
		fail "insmod with $name failing succeeded"
	fi
	echo "  insmod with $name ($knob) failing: $(cat /tmp/insmod.err)"
	grep -q '^rsnic ' /proc/modules && fail "rsnic loaded although $name failed"
	[ -z "$(rsnic_ifaces)" ] || fail "interfaces left after a failed probe: $(rsnic_ifaces)"
	msg=$(dmesg_since_mark | grep "bring-up failed" || true)
	echo "  log: ${msg#*] }"
	# shellcheck disable=SC2254 # $pat is a pattern
	case $msg in
	$pat) ;;
	*) fail "no bring-up failure naming $name with its status in the log" ;;
	esac
	dmesg_since_mark | grep -q "undoing a failed bring-up" &&
		fail "undoing the failed bring-up reported an error: $(dmesg_since_mark | grep undoing)"
	# What the failed bring-up made was undone: the device comes up again, and goes.
	load_rsnic
	[ "$(rsnic_ifaces | wc -l)" = 2 ] || fail "after a failed $name: $(rsnic_ifaces | wc -l) interfaces"
	unload_rsnic
}

# failed_open IFACE NAME GREP: `ip link set IFACE up` with the device failing NAME fails,
# logs a line matching GREP, and leaves IFACE down.
failed_open() {
	local ifc=$1 name=$2 pat=$3 msg
	mark_dmesg
	if ip link set "$ifc" up 2>/tmp/ip.err; then
		fail "ip link set up succeeded although $name fails"
	fi
	echo "  ip link set $ifc up with $name failing: $(cat /tmp/ip.err)"
	msg=$(dmesg_since_mark | grep "$pat" || true)
	[ -n "$msg" ] || fail "no $name failure in the log"
	echo "  log: ${msg#*] }"
	ip link show "$ifc" | grep -q "state DOWN" || fail "$ifc is not down after the failed open"
}

# failed_teardown KNOB=VALUE NAME LOGNAME: with the device host failing NAME, a load brings
# up both interfaces and rmmod completes, reporting a teardown failure that names LOGNAME
# in the log.
failed_teardown() {
	local msg
	mark_dmesg
	load_rsnic "$1"
	[ "$(rsnic_ifaces | wc -l)" = 2 ] || fail "$2 failing: $(rsnic_ifaces | wc -l) interfaces"
	unload_rsnic
	msg=$(dmesg_since_mark | grep "teardown:" || true)
	echo "  log: ${msg#*] }"
	case $msg in
	*"$3"*) ;;
	*) fail "no teardown failure naming $3 in the log" ;;
	esac
}

if [ "$RSNIC_FAMILY" = mana ]; then
	# The MACs the device reported.
	[ -z "$full" ] || factory_macs 02:4d:41:00

	# A failed bring-up request. The teardown after each (DISABLE_QUEUE, DEREGISTER_DEVICE,
	# which the device refuses while a DMA region is alive, DESTROY_HWC) reports nothing.
	reqs=("0x4 GDMA_REGISTER_DEVICE" "0xc GDMA_CREATE_QUEUE" "0x20008 MANA_QUERY_VPORT_CONFIG")
	[ -n "$full" ] || reqs=("0x20008 MANA_QUERY_VPORT_CONFIG")
	for r in "${reqs[@]}"; do
		failed_bringup sim_fail_req "$r" " failed: status 0xc000000d*"
		dmesg_since_mark | grep "teardown:" && fail "a normal removal reported a teardown failure"
	done

	# The channels' queues and RSS are HWC requests: with MANA_CREATE_WQ_OBJ (the SQ and RQ
	# objects) or MANA_CONFIG_VPORT_RX (RSS) failing, the device comes up (its bring-up
	# makes neither) but opening an interface fails with the request named in the log, and
	# what the open had made is destroyed (DEREGISTER_DEVICE at rmmod, which the device
	# refuses while a queue's DMA region is alive, reports nothing).
	reqs=("0x20004 MANA_CREATE_WQ_OBJ" "0x20007 MANA_CONFIG_VPORT_RX")
	[ -n "$full" ] || reqs=("0x20004 MANA_CREATE_WQ_OBJ")
	for r in "${reqs[@]}"; do
		code=${r%% *} name=${r#* }
		load_rsnic sim_fail_req="$code"
		mapfile -t ifs < <(rsnic_ifaces)
		[ "${#ifs[@]}" = 2 ] || fail "$name failing: ${#ifs[@]} interfaces after load"
		failed_open "${ifs[0]}" "$name" "$name($code) failed: status 0xc000000d"
		unload_rsnic
		dmesg_since_mark | grep "teardown:" && fail "the removal after a failed open reported a teardown failure"
	done

	# A failed teardown request: reported, rmmod completes, the next load works.
	failed_teardown sim_fail_req=0x5 DEREGISTER_DEVICE "GDMA_DEREGISTER_DEVICE(0x5) failed: status 0xc000000d"
	load_rsnic
	[ "$(rsnic_ifaces | wc -l)" = 2 ] || fail "after a failed teardown: $(rsnic_ifaces | wc -l) interfaces"
	unload_rsnic
	exit 0
fi

# The MACs the device reported.
[ -z "$full" ] || factory_macs 02:52:53:00

# A failed bring-up command.
cmds=("0x104 ENABLE_HCA" "0x816 ALLOC_TRANSPORT_DOMAIN" "0x301 CREATE_EQ")
[ -n "$full" ] || cmds=("0x301 CREATE_EQ")
for cmd in "${cmds[@]}"; do
	failed_bringup sim_fail_cmd "$cmd" " op_mod(0x0) failed: status *syndrome (0x*"
done

# The carrier from port-change events: loopback with the peer down.
if [ -n "$full" ]; then
load_rsnic
mapfile -t ifs < <(rsnic_ifaces)
a=${ifs[0]}
ip link set "$a" up
sleep 0.3
assert_eq "$a carrier, peer down" 0 "$(carrier "$a")"
ethtool -K "$a" loopback on
wait_for "$a carrier with loopback on" eval '[ "$(carrier "$a")" = 1 ]'
echo "  $a carrier with the peer down and loopback on = 1"
ethtool -K "$a" loopback off
wait_for "$a carrier with loopback off" eval '[ "$(carrier "$a")" = 0 ]'
echo "  $a carrier after loopback off = 0"
unload_rsnic
fi

# Commands in events mode: one command completion EQE per command, none found by polling.
load_rsnic
mapfile -t ifs < <(rsnic_ifaces)
a=${ifs[0]}
mark_dmesg
read -r n0 e0 < <(cmd_counts "$a")
ethtool -S "$a" >/dev/null
ip link set "$a" up
ip link set "$a" mtu 2000
ip link set "$a" down
ip link set "$a" mtu 1500
read -r n1 e1 < <(cmd_counts "$a")
[ $((n1 - n0)) -ge 10 ] || fail "only $((n1 - n0)) commands ran"
assert_eq "command EQEs for the $((n1 - n0)) commands" $((n1 - n0)) $((e1 - e0))
echo "  $((n1 - n0)) commands, $((e1 - e0)) command completion EQEs"
if dmesg_since_mark | grep -E "without its command EQE|while the device still owns it"; then
	fail "a command completion not by its EQE"
fi
unload_rsnic

# A failed admin-state command at ndo_open.
load_rsnic sim_fail_cmd=0x805
mapfile -t ifs < <(rsnic_ifaces)
failed_open "${ifs[0]}" ACCESS_REG "ACCESS_REG(0x805)"
# Loopback is the PPLR register, an ACCESS_REG too: refused, and the feature stays off.
if ethtool -K "${ifs[0]}" loopback on 2>/tmp/ethtool.err; then
	fail "loopback on succeeded although ACCESS_REG fails"
fi
assert_eq "${ifs[0]} loopback after the failed PPLR write" off \
	"$(ethtool -k "${ifs[0]}" | sed -n 's/^loopback: \([a-z]*\).*/\1/p')"
unload_rsnic

# A failed teardown command: reported, rmmod completes.
failed_teardown sim_fail_cmd=0x105 DISABLE_HCA "DISABLE_HCA(0x105)"

[ -n "$full" ] || exit 0
# A device without enhanced MPWQE.
setup_pair sim_mpwqe=0
assert_eq "$A skb_tx_mpwqe at load" off "$(priv_flag "$A" skb_tx_mpwqe)"
mark_dmesg
pflag_refused "$A" skb_tx_mpwqe "enhanced MPWQE" "the device has no enhanced multi-packet send WQE"
ping -c 20 -i 0.05 -W 2 -q 10.10.0.2 >/tmp/ping.out || fail "ping without MPWQE: $(cat /tmp/ping.out)"
echo "  $(grep -o '[0-9]* received' /tmp/ping.out) of 20 without MPWQE"
assert_eq "$A tx_mpwqe_blks" 0 "$(stat "$A" tx_mpwqe_blks)"
teardown_pair
exit 0
