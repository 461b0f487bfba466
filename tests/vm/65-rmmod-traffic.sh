#!/usr/bin/env bash
# rmmod under traffic: a TCP stream A -> B, a UDP stream B -> A and a ping flood run while
# rsnic is unloaded; rmmod succeeds, no rsnic interface is left, and the module loads again
# and carries traffic (the runner fails the run on any kernel report).
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
one_family_on_debug

setup_pair
iperf_server 10.10.0.2 peer
iperf3 -c 10.10.0.2 -t 60 >/dev/null 2>&1 &
ip netns exec peer iperf3 -s -1 -B 10.10.0.2 -p 5202 -D
wait_for "second iperf3 server" listening 5202 peer
iperf3 -s -1 -B 10.10.0.1 -p 5203 -D -I /tmp/iperf3-a.pid
wait_for "iperf3 server on A" listening 5203
ip netns exec peer iperf3 -c 10.10.0.1 -p 5203 -u -b 20M -t 60 >/dev/null 2>&1 &
ping -f -W 1 10.10.0.2 >/dev/null 2>&1 &
ip netns exec peer ping -f -W 1 10.10.0.1 >/dev/null 2>&1 &
sleep 3
tx=$(stat "$A" tx_packets)
echo "  A sent $tx packets before rmmod"
[ "$tx" -gt 100 ] || fail "too little traffic before rmmod ($tx packets)"
t0=$(date +%s%N)
rmmod rsnic || fail "rmmod rsnic under traffic"
echo "  rmmod took $((($(date +%s%N) - t0) / 1000000)) ms"
[ -z "$(rsnic_ifaces)" ] || fail "interfaces left after rmmod: $(rsnic_ifaces)"
! ip netns exec peer ip link show "$B" >/dev/null 2>&1 || fail "$B left in peer"
! lsmod | grep -q '^rsnic ' || fail "rsnic still loaded"
traffic_cleanup
kill "$(cat /tmp/iperf3-a.pid)" 2>/dev/null || true
sleep 0.5

# Again, and it works.
setup_pair
ping -c 3 -i 0.2 -W 2 10.10.0.2 >/dev/null || fail "no ping after reload"
teardown_pair
