#!/usr/bin/env bash
# make bench, the VM part (run inside the test VM by scripts/bench-vm.sh): pktgen packet
# rates of 64-byte UDP frames in interleaved rounds of
#   rsnic_mpwqe_on    rsnic port A -> B (namespace peer), tx_mpwqe on,  burst 32
#   rsnic_mpwqe_off   the same with tx_mpwqe off,                        burst 32
#   rsnic_burst1      tx_mpwqe on, burst 1 (the burst veth allows)
#   veth              a veth pair (one end in namespace vpeer),          burst 1
#   mana_rx_db_batched     MANA port C -> D (namespace mpeer), D rings its RQ doorbell once
#                          per NAPI poll (rx_db_per_packet off),           burst 32
#   mana_rx_db_per_packet  the same with one RQ doorbell per re-posted WQE on D
# pktgen refuses bursts on veth (it clears IFF_TX_SKB_SHARING), hence rsnic_burst1 for a
# like-for-like rsnic/veth ratio. Prints one line per run, prefixed "RSNIC-BENCH run", for the
# host to pick out of the serial log; the host computes medians and ratios.
#
#   BENCH_VM_ROUNDS=N   rounds (default 5)
#   BENCH_VM_COUNT=N    packets per burst-32 run (default 100000; burst-1 runs a quarter)
set -eu
. "$RSNIC_ROOT/tests/vm/lib.sh"
. "$RSNIC_ROOT/tests/vm/traffic.sh"

ROUNDS=${BENCH_VM_ROUNDS:-5}
COUNT=${BENCH_VM_COUNT:-100000}

# Device 0 is a ConnectX (ports A, B), device 1 a MANA (ports C, D).
setup_pair num_devs=2 family=mlx5,mana
quiet_pair
mapfile -t _mana < <(for i in $(rsnic_ifaces); do
	[ "$(ethtool -i "$i" | sed -n 's/^firmware-version: //p')" = sim-mana ] && echo "$i"
done)
[ "${#_mana[@]}" = 2 ] || fail "expected 2 MANA ports, found: ${_mana[*]}"
C=${_mana[0]}
D=${_mana[1]}
ip netns add mpeer
ip link set "$D" netns mpeer
ip addr add 10.30.0.1/24 dev "$C"
ip netns exec mpeer ip addr add 10.30.0.2/24 dev "$D"
sysctl -qw "net.ipv6.conf.$C.disable_ipv6=1"
ip netns exec mpeer sysctl -qw "net.ipv6.conf.$D.disable_ipv6=1"
ip link set "$C" up
ip netns exec mpeer ip link set "$D" up
MMAC_D=$(ip netns exec mpeer cat "/sys/class/net/$D/address")
ip neigh replace 10.30.0.2 lladdr "$MMAC_D" dev "$C" nud permanent
wait_for "carrier on $C" eval '[ "$(carrier "$C")" = 1 ]'
ip netns add vpeer
ip link add vA type veth peer name vB netns vpeer
ip addr add 10.20.0.1/24 dev vA
ip netns exec vpeer ip addr add 10.20.0.2/24 dev vB
ip netns exec vpeer ip link set vB up
ip link set vA up
VMAC_B=$(ip netns exec vpeer cat /sys/class/net/vB/address)
sysctl -qw net.ipv6.conf.vA.disable_ipv6=1
sleep 0.5

echo "RSNIC-BENCH info kernel=$(uname -r) variant=${KERNEL_VARIANT:-normal} cpus=$(nproc)" \
	"count=$COUNT rounds=$ROUNDS pkt_size=60"

# rx_count DEV NETNS: DEV's received packets (ndo_get_stats64) in NETNS.
rx_count() {
	ip netns exec "$2" cat "/sys/class/net/$1/statistics/rx_packets"
}

# run CONFIG DEV DST MAC BURST RXDEV RXNS [FLAG VALUE tx|rx]: pktgen from DEV to RXDEV (in
# namespace RXNS); FLAG is set first on the sending (tx) or receiving (rx) port. Reports
# the packets RXDEV received too (so that a rate is never that of a flood nobody took).
run() {
	local cfg=$1 dev=$2 dst=$3 mac=$4 burst=$5 rxdev=$6 rxns=$7 flag=${8:-} val=${9:-} side=${10:-tx}
	local ns=() fdev=$dev
	[ "$side" = rx ] && ns=(ip netns exec "$rxns") && fdev=$rxdev
	if [ -n "$flag" ] && [ "$("${ns[@]}" ethtool --show-priv-flags "$fdev" | sed -n "s/^$flag: *//p")" != "$val" ]; then
		"${ns[@]}" ethtool --set-priv-flags "$fdev" "$flag" "$val"
		wait_for "carrier on $dev" eval '[ "$(carrier "$dev")" = 1 ]'
		sleep 0.2
	fi
	# Burst-1 runs are many times slower on rsnic (a doorbell and a device kick per packet):
	# a quarter of the packets keeps the round short.
	local n=$COUNT rx0
	[ "$burst" = 1 ] && n=$((COUNT / 4))
	rx0=$(rx_count "$rxdev" "$rxns")
	pktgen_run "$dev" "$n" "$dst" "$mac" "$burst" 60
	sleep 0.3 # let the receiving side drain before counting and before the next run
	echo "RSNIC-BENCH run round=$round config=$cfg burst=$burst count=$n sent=$PG_SENT" \
		"received=$(($(rx_count "$rxdev" "$rxns") - rx0)) pps=$PG_PPS errors=$PG_ERRORS"
}

configs=(
	"rsnic_mpwqe_on $A 10.10.0.2 $MAC_B 32 $B peer tx_mpwqe on tx"
	"rsnic_mpwqe_off $A 10.10.0.2 $MAC_B 32 $B peer tx_mpwqe off tx"
	"rsnic_burst1 $A 10.10.0.2 $MAC_B 1 $B peer tx_mpwqe on tx"
	"veth vA 10.20.0.2 $VMAC_B 1 vB vpeer"
	"mana_rx_db_batched $C 10.30.0.2 $MMAC_D 32 $D mpeer rx_db_per_packet off rx"
	"mana_rx_db_per_packet $C 10.30.0.2 $MMAC_D 32 $D mpeer rx_db_per_packet on rx"
)
# Interleaved rounds; each round starts one configuration later than the one before, so
# that no configuration always follows the same other one.
for round in $(seq "$ROUNDS"); do
	for k in $(seq 0 $((${#configs[@]} - 1))); do
		# shellcheck disable=SC2086
		run ${configs[$(((round - 1 + k) % ${#configs[@]}))]}
	done
done
echo "RSNIC-BENCH done"
ip link del vA
ip netns del vpeer
ip netns del mpeer
teardown_pair
