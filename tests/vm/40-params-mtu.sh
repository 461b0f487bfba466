#!/usr/bin/env bash
# Module parameters choose devices and ports; bad values are refused at load. MTU changes
# within 68..9600 are accepted, outside are refused.
set -eu
. "$(dirname "$0")/lib.sh"
one_family_on_debug

load_rsnic num_devs=2 num_ports=4
assert_eq "interfaces for 2 devices x 4 ports" 8 "$(rsnic_ifaces | wc -l)"
assert_eq "bus-info of the last port" "bus-info: rsnic-sim1:port3" \
	"$(ethtool -i "$(rsnic_ifaces | tail -n1)" | grep bus-info)"
unload_rsnic

# (host=kernel first: the in-kernel host's parameters count only then; host=auto, gone, and
# any other value of host is refused itself.)
for bad in "num_ports=3" "num_ports=0" "num_ports=10" "num_devs=0" "num_devs=9" \
	"tx_timeout_ms=999" "tx_timeout_ms=120001" "host=auto"; do
	mark_dmesg
	if insmod "$RSNIC_KO" host=kernel $bad 2>/tmp/err; then
		fail "insmod accepted $bad"
	fi
	# kmod words EINVAL from init_module as "Invalid parameters".
	grep -Eq "Invalid (argument|parameters)" /tmp/err || fail "insmod $bad: expected EINVAL, got $(cat /tmp/err)"
	dmesg_since_mark | grep -q "rsnic: ${bad%%=*}=" || fail "no message in dmesg for $bad"
	echo "  $bad refused: $(dmesg_since_mark | grep "rsnic: ${bad%%=*}=" | tail -n1)"
done
[ -z "$(rsnic_ifaces)" ] || fail "a refused load left interfaces"

load_rsnic
dev=$(rsnic_ifaces | head -n1)
ip link set "$dev" mtu 9000
assert_eq "mtu 9000" 9000 "$(cat "/sys/class/net/$dev/mtu")"
ip link set "$dev" mtu 68
assert_eq "mtu 68" 68 "$(cat "/sys/class/net/$dev/mtu")"
for bad in 67 9601; do
	if ip link set "$dev" mtu "$bad" 2>/tmp/err; then fail "mtu $bad accepted"; fi
	echo "  mtu $bad refused: $(cat /tmp/err)"
done
assert_eq "mtu unchanged by refused calls" 68 "$(cat "/sys/class/net/$dev/mtu")"
ip link set "$dev" up
ip link set "$dev" mtu 1500
assert_eq "mtu change while up" 1500 "$(cat "/sys/class/net/$dev/mtu")"
unload_rsnic
