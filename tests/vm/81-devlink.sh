#!/usr/bin/env bash
# devlink (rsnic.rst, "devlink"): one instance per device, on the device's own bus handle
# (pci/<function> for a PCI function, platform/rsnic-sim.<N> for an in-kernel simulated
# device), a physical devlink port per netdev, and `devlink dev info` with the driver (rsnic),
# the device's asic.id and the firmware version the device reported at bring-up (ConnectX:
# the initialization segment's fw_rev as fw.version; MANA: the GDMA protocol version as
# fw.gdma_protocol), and each netdev's phys_port_name ("p<N>") from its port. Unloading removes every instance and port; loading again brings them
# back.
# Health reporters (rsnic.rst, "devlink"): each port has `tx` and `rx`, healthy, with
# mlx5e's grace period (500 ms) and auto-recover on. A fault injected through the device
# host's knob (as 67 and 68/69 do: ConnectX tx_err on A and rx_err on B, reset in place;
# MANA tx_bad_sqn on A and rx_bad_rqn on B, recovered by the reopen) counts one error and
# one recovery on the port's reporter and in the ethtool counter of that recovery, and
# traffic goes on. A fault within the grace period is counted and not recovered: the
# reporter stays in error and the queue stopped until `devlink health recover`, which
# reopens the channels. `devlink health diagnose` lists every channel's SQ (tx) or RQ
# (rx); `devlink health dump show` shows the dump kept from the first error (the faulted
# queue, ConnectX: its device state ERR), then a fresh one of every queue (ConnectX: RDY);
# `devlink health recover` of a healthy reporter does nothing and succeeds.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"

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

# rep PORT NAME FIELD: health_rep.
rep() {
	health_rep "$@"
}

# diag PORT NAME KEY QN: the number of queues in array KEY (SQs, RQs) of `devlink health
# diagnose` of reporter NAME of PORT, each checked by queues_of.
diag() {
	devlink -j health diagnose "$1" reporter "$2" | queues_of "$3" "$4"
}

# queues_of KEY QN [HW]: the number of queues in array KEY (SQs, RQs) of the fmsg JSON on
# stdin; fails unless each has every field (QN: sqn or rqn) and, with HW, the device's
# state HW ("HW state", a dump's on ConnectX).
queues_of() {
	python3 -c '
import json, sys
key, qn, hw = sys.argv[1], sys.argv[2], sys.argv[3]
def find(o):
    if isinstance(o, dict):
        for k, v in o.items():
            if k == key:
                return v
            r = find(v)
            if r is not None:
                return r
    elif isinstance(o, list):
        for v in o:
            r = find(v)
            if r is not None:
                return r
    return None
qs = find(json.load(sys.stdin))
if qs is None:
    sys.exit("no " + key)
for q in qs:
    for f in ("channel ix", qn, "size", "pc", "cc", "state", "CQ"):
        if f not in q:
            sys.exit(key + ": no " + f + " in " + json.dumps(q))
    if "cqn" not in q["CQ"] or "ci" not in q["CQ"]:
        sys.exit(key + ": no cqn/ci in " + json.dumps(q))
    if hw and q.get("HW state") != hw:
        sys.exit(key + ": HW state is not " + hw + " in " + json.dumps(q))
print(len(qs))' "$1" "$2" "${3:-}"
}

# The faults are injected through the in-kernel device host's knob; on the vfio-user
# transport (no knob) the reporters are checked without faults.
if [ "$RSNIC_TRANSPORT" = kernel ]; then inject_pair; else setup_pair; fi
dl_ports_ab
echo "  A: $PA, B: $PB"
devlink health show | sed 's/^/    /'
for p in "$PA" "$PB"; do
	for r in tx rx; do
		assert_eq "$p $r: state" healthy "$(rep "$p" "$r" state)"
		assert_eq "$p $r: errors" 0 "$(rep "$p" "$r" error)"
		assert_eq "$p $r: recoveries" 0 "$(rep "$p" "$r" recover)"
		assert_eq "$p $r: grace period" 500 "$(rep "$p" "$r" grace_period)"
	done
done
# Diagnose lists every open channel's queue.
ch=$(channels_of "$A")
assert_eq "diagnose tx of A: SQs" "$ch" "$(diag "$PA" tx SQs sqn)"
assert_eq "diagnose rx of A: RQs" "$ch" "$(diag "$PA" rx RQs rqn)"
devlink health diagnose "$PA" reporter tx | head -n 12 | sed 's/^/    /'
# Recover of a healthy reporter: nothing to do, nothing counted.
devlink health recover "$PA" reporter tx || fail "devlink health recover of a healthy reporter"
assert_eq "recover of a healthy reporter: recoveries" 0 "$(rep "$PA" tx recover)"

# Faults (the in-kernel device host's knob), up to the dump they leave.
if [ "$RSNIC_TRANSPORT" = kernel ]; then
case $RSNIC_FAMILY in
mlx5) TX_FAULT=tx_err RX_FAULT=rx_err TX_CTR=tx_recover RX_CTR=rx_recover ;;
mana) TX_FAULT=tx_bad_sqn RX_FAULT=rx_bad_rqn TX_CTR=ch_reopen RX_CTR=ch_reopen ;;
esac

# health_fault KNOB IFACE NETNS PORT REPORTER CTR COMMAND: injects COMMAND during a transfer
# A -> B, waits for the reporter's recovery, and checks the error, the recovery and the
# driver's counter of it (one each), and that traffic goes on.
health_fault() {
	local knob=$1 dev=$2 ns=$3 port=$4 r=$5 ctr=$6 cmd=$7 c0 e0 r0
	c0=$(ethtool_sum "$dev" "$ns" "$ctr")
	e0=$(rep "$port" "$r" error)
	r0=$(rep "$port" "$r" recover)
	echo "$cmd" >"$knob"
	transfer_check "" peer 10.10.0.2 1
	wait_for "$cmd: $r reporter of $port recovered" \
		eval '[ "$(rep "$port" "$r" recover)" = $((r0 + 1)) ]'
	wait_for "$cmd: $ctr of $dev" eval '[ "$(ethtool_sum "$dev" "$ns" "$ctr")" = $((c0 + 1)) ]'
	assert_eq "$cmd: $r errors" $((e0 + 1)) "$(rep "$port" "$r" error)"
	assert_eq "$cmd: $r state" healthy "$(rep "$port" "$r" state)"
	transfer_check "" peer 10.10.0.2 1
	echo "  $cmd: $r reporter of $port: error $((e0 + 1)), recover $((r0 + 1)), $ctr +1"
}
health_fault "$IA" "$A" "" "$PA" tx "$TX_CTR" "$TX_FAULT"
health_fault "$IB" "$B" peer "$PB" rx "$RX_CTR" "$RX_FAULT"

# A fault within the grace period (60 s here) is counted and not recovered: the reporter
# stays in error, the queue stopped (the SQ counts no reset) until `devlink health recover`,
# which reopens the channels; then the reporter is healthy again and traffic flows.
devlink health set "$PA" reporter tx grace_period 60000
assert_eq "grace period set" 60000 "$(rep "$PA" tx grace_period)"
c0=$(ethtool_sum "$A" "" "$TX_CTR")
e0=$(rep "$PA" tx error)
r0=$(rep "$PA" tx recover)
mark_dmesg
echo "$TX_FAULT" >"$IA"
ping -c 1 -W 1 10.10.0.2 >/dev/null || true
wait_for "a fault within the grace period reported" eval '[ "$(rep "$PA" tx error)" = $((e0 + 1)) ]'
wait_for "the fault logged as not recovered" eval 'dmesg_since_mark | grep -q "not recovered"'
assert_eq "within the grace period: tx state" error "$(rep "$PA" tx state)"
assert_eq "within the grace period: tx recoveries" "$r0" "$(rep "$PA" tx recover)"
assert_eq "within the grace period: $TX_CTR" "$c0" "$(ethtool_sum "$A" "" "$TX_CTR")"
diag "$PA" tx SQs sqn >/dev/null
devlink health diagnose "$PA" reporter tx | grep -E 'state' | sed 's/^/    /'
devlink health recover "$PA" reporter tx
assert_eq "devlink health recover: tx state" healthy "$(rep "$PA" tx state)"
assert_eq "devlink health recover: tx recoveries" $((r0 + 1)) "$(rep "$PA" tx recover)"
wait_for "the channels reopened" eval 'dmesg_since_mark | grep -q "devlink health recover: reopening the channels"'
transfer_check "" peer 10.10.0.2 1
devlink health set "$PA" reporter tx grace_period 500
echo "  within the grace period: not recovered until devlink health recover"

# Dump: the core kept the one it took at the reporter's first error, of the faulted queue
# only (on ConnectX with the device's state of the SQ then: ERR after the error CQE); once
# cleared, a dump is taken of every open channel's queue (ConnectX: all RDY).
devlink health dump show "$PA" reporter tx | sed 's/^/    /' | head -n 8
case $RSNIC_FAMILY in mlx5) HW_FAULT=ERR HW_OK=RDY ;; mana) HW_FAULT='' HW_OK='' ;; esac
assert_eq "the dump kept from the first tx error: SQs" 1 \
	"$(devlink -j health dump show "$PA" reporter tx | queues_of SQs sqn "$HW_FAULT")"
fi # the faults
case $RSNIC_FAMILY in mlx5) HW_OK=RDY ;; mana) HW_OK='' ;; esac
devlink health dump clear "$PA" reporter tx
assert_eq "a fresh tx dump: SQs" "$ch" \
	"$(devlink -j health dump show "$PA" reporter tx | queues_of SQs sqn "$HW_OK")"
devlink health dump clear "$PB" reporter rx
assert_eq "a fresh rx dump of B: RQs" "$(channels_of "$B" "" peer)" \
	"$(devlink -j health dump show "$PB" reporter rx | queues_of RQs rqn "$HW_OK")"

teardown_pair
