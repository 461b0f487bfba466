#!/usr/bin/env bash
# Both families at once: num_devs=3 family=mlx5,mana gives device 0 mlx5 and devices 1 and 2
# MANA (the last entry repeats), six ports; each device's pair, in its own namespaces,
# answers 200 pings without loss, counted by its own family's counters. A bad family name,
# or more families than devices, is refused with a reason and creates nothing.
# Runs once (in the mlx5 pass of the suite): it chooses its families itself.
set -eu
. "$(dirname "$0")/lib.sh"

[ "$RSNIC_FAMILY" = mlx5 ] || skip "it loads both families at once, in the mlx5 pass"

for bad in "family=mlx6" "family=mlx5,mana,mana num_devs=2"; do
	mark_dmesg
	# shellcheck disable=SC2086
	if insmod "$RSNIC_KO" host=kernel $bad 2>/tmp/err; then
		fail "insmod $bad was accepted"
	fi
	echo "  insmod $bad refused: $(cat /tmp/err); log: $(dmesg_since_mark | grep -m1 rsnic || true)"
	dmesg_since_mark | grep -q 'rsnic: family' || fail "no reason logged for $bad"
	[ -z "$(rsnic_ifaces)" ] || fail "interfaces left after a refused insmod"
done

load_rsnic num_devs=3 family=mlx5,mana
mapfile -t ifs < <(rsnic_ifaces)
assert_eq "interfaces" 6 "${#ifs[@]}"
want=(mlx5 mlx5 mana mana mana mana)
for i in "${!ifs[@]}"; do
	fw=$(ethtool -i "${ifs[$i]}" | sed -n 's/^firmware-version: //p')
	assert_eq "${ifs[$i]} family" "sim-${want[$i]}" "$fw"
done

# Pair p: ports 2p and 2p+1 in namespaces a<p> and b<p>, 10.20.p.1 and 10.20.p.2.
for p in 0 1 2; do
	a=${ifs[$((2 * p))]} b=${ifs[$((2 * p + 1))]}
	ip netns add "a$p"
	ip netns add "b$p"
	ip link set "$a" netns "a$p"
	ip link set "$b" netns "b$p"
	ip -n "a$p" addr add "10.20.$p.1/24" dev "$a"
	ip -n "b$p" addr add "10.20.$p.2/24" dev "$b"
	ip -n "a$p" link set "$a" up
	ip -n "b$p" link set "$b" up
done
for p in 0 1 2; do
	a=${ifs[$((2 * p))]} b=${ifs[$((2 * p + 1))]}
	wait_for "carrier on $a" eval '[ "$(ip netns exec a'"$p"' cat /sys/class/net/'"$a"'/carrier)" = 1 ]'
	ip netns exec "a$p" ping -c 3 -i 0.2 -W 2 "10.20.$p.2" >/dev/null || fail "pair $p: no ping"
	tx0=$(stat "$a" tx_packets "a$p")
	rx0=$(stat "$b" rx_packets "b$p")
	ip netns exec "a$p" ping -q -c 200 -i 0.01 -W 2 "10.20.$p.2" >/tmp/ping.out || fail "pair $p: ping"
	grep -q ' 0% packet loss' /tmp/ping.out || fail "pair $p: $(grep loss /tmp/ping.out)"
	tx=$(($(stat "$a" tx_packets "a$p") - tx0))
	rx=$(($(stat "$b" rx_packets "b$p") - rx0))
	echo "  pair $p (${want[$((2 * p))]}): 200 echo requests answered; $a sent $tx, $b received $rx"
	[ "$tx" -ge 200 ] && [ "$rx" -ge 200 ] || fail "pair $p: counters below 200"
done
assert_eq "MANA port counts hc_rx_discards_no_wqe" 0 "$(stat "${ifs[3]}" hc_rx_discards_no_wqe b1)"
assert_eq "mlx5 port counts dev_rx_out_of_buffer" 0 "$(stat "${ifs[1]}" dev_rx_out_of_buffer b0)"
for p in 0 1 2; do ip netns del "a$p"; ip netns del "b$p"; done
sleep 0.2
unload_rsnic
