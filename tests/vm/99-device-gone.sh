#!/usr/bin/env bash
# A device that dies mid-run (vfio transport): the device process unplugs its functions and
# exits under traffic, as a surprise-removed NIC goes. QEMU's vfio-user client then answers
# every access of the functions with all-ones (rsnic.rst, "The vfio-user transport", "A
# device that dies"), and rsnic must handle it as a NIC driver handles a surprise removal:
#
#   * the functions read all-ones, their config space included;
#   * the TX watchdog fires (tx_timeout_ms=2000 here) and rsnic finds the device gone: it
#     logs so, turns the carrier off and does not reopen the channels, so the watchdog does
#     not fire again (no recovery loop);
#   * no command or request waits out its timeout: each notices that the device is gone
#     (ConnectX's command interface, MANA's HWC and SMC), so no "timed out" line follows
#     the death;
#   * ip link, ethtool -i/-S, setting the interfaces down and up (up fails: no device) and
#     rmmod complete in bounded time, and no interface is left; kmemleak (debug kernel) is
#     the runner's.
#
# The guest asks the host to end the device process with a line on its console
# (scripts/vm/devd.sh: SIGUSR1, on which rsnic-devd closes its connections so that QEMU reads
# their end, and exits), so this test comes last in its VM: the device does not come back.
set -eu
. "$(dirname "$0")/lib.sh"
[ "$RSNIC_TRANSPORT" = vfio ] || skip "the device process that dies is the vfio-user transport's"
[ -d "${RSNIC_DEVD_DIR:-}" ] || fail "no state directory of the device process"
[ ! -e "$RSNIC_DEVD_DIR/killed" ] || fail "the device process is already dead"

# Seconds an operation on the dead device may take (a process costs seconds on the debug
# kernel); far below a command's timeout (5 s) times the commands of a teardown.
limit=10
[ "${KERNEL_VARIANT:-normal}" = debug ] && limit=40
tx_timeout_ms=2000

# carrier_is IFACE 0|1
carrier_is() {
	[ "$(carrier "$1")" = "$2" ]
}

# timed WHAT COMMAND...: runs COMMAND, fails the test if it takes more than $limit s;
# prints its time and exit status, returns the status.
timed() {
	local what=$1 t0 t1 rc=0
	shift
	t0=$(date +%s%N)
	timeout "$limit" "$@" >/tmp/gone.out 2>&1 || rc=$?
	t1=$(date +%s%N)
	[ "$rc" != 124 ] || fail "$what took more than $limit s after the device died"
	echo "  $what: exit $rc in $(((t1 - t0) / 1000000)) ms"
	return "$rc"
}

mark_dmesg
insmod "$RSNIC_KO" tx_timeout_ms=$tx_timeout_ms || fail "insmod rsnic tx_timeout_ms=$tx_timeout_ms"
assert_vfio_bound
mapfile -t ifs < <(rsnic_ifaces)
[ "${#ifs[@]}" = 2 ] || fail "expected 2 rsnic interfaces, got: ${ifs[*]}"
A=${ifs[0]}
B=${ifs[1]}
mapfile -t fns < <(for f in /sys/bus/pci/drivers/rsnic/[0-9a-f]*:*; do echo "${f##*/}"; done)
for f in "${fns[@]}"; do
	assert_eq "$f: vendor:device before" "$PCI_ID" "$(pci_id "$f")"
done
ip netns add peer
ip link set "$B" netns peer
ip addr add 10.10.0.1/24 dev "$A"
ip netns exec peer ip addr add 10.10.0.2/24 dev "$B"
ip link set "$A" up
ip netns exec peer ip link set "$B" up
wait_for "carrier on $A" carrier_is "$A" 1
ping -c 3 -i 0.2 -W 5 10.10.0.2 >/dev/null || fail "no ping before the device died"

# Traffic while it dies: a ping every 50 ms (its queue stops once nothing completes).
ping -i 0.05 -W 1 10.10.0.2 >/dev/null 2>&1 &
pinger=$!
sleep 0.5
echo "  ending the device process"
echo "RSNIC-DEVD-KILL"
WAIT_TRIES=300 wait_for "the device process to end" test -e "$RSNIC_DEVD_DIR/killed"
echo "  the device process is dead"

# What the guest sees of its functions: all-ones, config space included.
for f in "${fns[@]}"; do
	v=$(od -An -tx4 -N4 "/sys/bus/pci/devices/$f/config" | tr -d ' ')
	assert_eq "$f: config space's first dword" ffffffff "$v"
done

# The watchdog fires (the ping's queue stopped), rsnic finds the device gone and turns the
# carrier off.
WAIT_TRIES=$((10 * (tx_timeout_ms / 1000 + 20))) wait_for "carrier off on $A" carrier_is "$A" 0
kill "$pinger" 2>/dev/null || true
wait "$pinger" 2>/dev/null || true
log=$(dmesg_since_mark)
echo "$log" | grep -q "rsnic: [0-9a-f:.]*: the device is gone" ||
	fail "rsnic did not log that the device is gone"
echo "$log" | grep -q "$A: ch[0-9]*: .*: the device is gone: carrier off" ||
	fail "the watchdog's recovery did not find the device gone on $A"
echo "$log" | grep -E "rsnic|NETDEV WATCHDOG" | sed 's/^/  dmesg: /' | head -n 20
# No recovery loop: three more watchdog periods, and no further watchdog or reopen.
fired=$(dmesg_since_mark | grep -c "$A: NETDEV WATCHDOG" || true)
sleep $((3 * tx_timeout_ms / 1000 + 1))
assert_eq "watchdog firings on $A after the carrier went off" "$fired" \
	"$(dmesg_since_mark | grep -c "$A: NETDEV WATCHDOG" || true)"
dmesg_since_mark | grep -q "reopening the channels" &&
	fail "rsnic tried to reopen the channels of a device that is gone"

# The interfaces' operations complete in bounded time.
timed "ip link show $A" ip link show "$A" || fail "ip link show $A failed"
timed "ethtool -i $A" ethtool -i "$A" || fail "ethtool -i $A failed"
timed "ethtool -S $A" ethtool -S "$A" || true
timed "ethtool -S $B (peer)" ip netns exec peer ethtool -S "$B" || true
timed "ip link set $A down" ip link set "$A" down || fail "ip link set $A down failed"
if timed "ip link set $A up" ip link set "$A" up; then
	fail "$A came up on a device that is gone"
fi
echo "  ($(head -n1 /tmp/gone.out))"
timed "ip link set $B down (peer)" ip netns exec peer ip link set "$B" down ||
	fail "ip link set $B down failed"
ip netns del peer
sleep 0.2
timed "rmmod rsnic" rmmod rsnic || fail "rmmod rsnic failed"
assert_eq "interfaces after rmmod" "" "$(rsnic_ifaces)"

# No command or request waited out its timeout: each noticed the device was gone.
if dmesg_since_mark | grep -v "NETDEV WATCHDOG" | grep -E "rsnic.*(timed out|unanswered)"; then
	fail "a command waited out its timeout on a device that is gone"
fi
echo "  rsnic's lines after the death: $(dmesg_since_mark | grep -c 'rsnic')"
