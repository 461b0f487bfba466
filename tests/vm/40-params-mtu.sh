#!/usr/bin/env bash
# Module parameters choose devices and ports; bad values are refused at load. MTU changes
# within 68..9600 are accepted, outside are refused; on ConnectX the port's largest MTU
# (PMTU) bounds them.
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

# ConnectX: the netdev's largest MTU is the port's (PMTU max_mtu less 22 bytes of L2 header,
# tag and FCS, as mlx5e_set_netdev_mtu_boundaries), and each MTU change sets the port's
# admin MTU first (mlx5e_set_dev_port_mtu), which the port then runs: a port running another
# MTU would be logged ("port MTU ... is different than netdev mtu ...").
if [ "$RSNIC_FAMILY" = mlx5 ] && [ "$RSNIC_TRANSPORT" = kernel ]; then
	mark_dmesg
	load_rsnic sim_max_mtu=4022
	dev=$(rsnic_ifaces | head -n1)
	ip -d link show "$dev" | grep -q "minmtu 68 maxmtu 4000" ||
		fail "maxmtu not 4000 from the port's PMTU: $(ip -d link show "$dev" | grep -o 'maxmtu [0-9]*')"
	ip link set "$dev" mtu 4000
	assert_eq "mtu 4000, the port's largest" 4000 "$(cat "/sys/class/net/$dev/mtu")"
	if ip link set "$dev" mtu 4001 2>/tmp/err; then fail "mtu 4001 above the port's accepted"; fi
	echo "  mtu 4001 refused: $(cat /tmp/err)"
	ip link set "$dev" up
	ip link set "$dev" mtu 2000
	assert_eq "mtu change while up" 2000 "$(cat "/sys/class/net/$dev/mtu")"
	if dmesg_since_mark | grep -E "port MTU [0-9]+ is different|PMTU read"; then
		fail "the port does not run the MTU the driver set"
	fi
	unload_rsnic
	# A port MTU the model cannot have is refused at load.
	if insmod "$RSNIC_KO" host=kernel family=mlx5 sim_max_mtu=1000 2>/tmp/err; then
		fail "sim_max_mtu=1000 accepted"
	fi
	[ -z "$(rsnic_ifaces)" ] || fail "a refused load left interfaces"
fi
