#!/usr/bin/env bash
# The kernel's drivers/net/hw pp_alloc_fail.py against an rsnic port pair (tests/vm/ksft.sh):
# page_pool allocations failed by fail_function under an iperf3 stream; the driver's
# rx-alloc-fail counter must count them and traffic must go on. fail_function puts a kprobe
# on page_pool_alloc_pages' entry while the RX path runs through it: code patched under
# traffic, which the VM's QEMU handles (rsnic.rst, "Testing under TCG").
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
# Family-independent code (the RX refill's failure path): the mlx5 pass on the debug kernel.
one_family_on_debug
. "$(dirname "$0")/ksft.sh"

ksft_run hw/pp_alloc_fail

# rsnic's own check of what pp_alloc_fail.py's last step meets only by chance: RX ring
# resizes (a reopen of every channel) while page_pool_alloc_pages fails every 511th call,
# under 16 iperf3 streams from B to A. The reopen's first fill of an RQ stops at the first
# failed allocation, anywhere in the ring; the RQ must get the rest from NAPI (mlx5e's
# mlx5e_post_rx_wqes reports busy when a refill comes up short). A driver that waits for
# completions instead leaves an RQ that came up nearly empty without them: its port, short of
# posted buffers, sends PAUSE frames and B stops sending (the model's flow control), so RX
# stays at 0 until the next reopen. Each resize must see RX resume within 5 s.
ROUNDS=8
F=/sys/kernel/debug/fail_function
rx_pkts() { cat "/sys/class/net/$A/statistics/rx_packets"; }
fail_alloc() {
	if [ "$1" = on ]; then
		echo page_pool_alloc_pages >"$F/inject"
		echo 0 >"$F/verbose"
		echo 511 >"$F/interval"
		echo 100 >"$F/probability"
		echo -1 >"$F/times"
	else
		echo >"$F/inject"
		echo 0 >"$F/probability"
		echo 0 >"$F/times"
	fi
}
stop_load() {
	[ -z "${LOAD:-}" ] || kill "$LOAD" 2>/dev/null || true
	LOAD=
	pkill -x iperf3 || true
	[ ! -e "$F/page_pool_alloc_pages" ] || fail_alloc off
}
trap stop_load EXIT
setup_pair
[ -d "$F" ] || fail "no $F (the test kernel has function error injection)"
ring=$(ring_size "$A" RX)
iperf_server 10.10.0.1
ip netns exec peer iperf3 -c 10.10.0.1 -P 16 -t 86400 >/dev/null 2>&1 &
LOAD=$!
wait_for "traffic from B" eval '[ "$(rx_pkts)" -gt 20000 ]'
fails0=$(ethtool_sum "$A" "" "rx_(buff|fill)_alloc_err")
fail_alloc on
for i in $(seq 1 $ROUNDS); do
	for size in $((ring * 2)) "$ring"; do
		ethtool -G "$A" rx "$size"
		p0=$(rx_pkts)
		t=0
		while [ $(($(rx_pkts) - p0)) -lt 2000 ]; do
			[ $t -lt 50 ] || fail "round $i: RX of $A stopped after ethtool -G rx $size" \
				"($(($(rx_pkts) - p0)) packets in 5 s; $(ethtool -S "$A" | grep -E 'alloc_err' | tr -s ' \n' ' '))"
			sleep 0.1
			t=$((t + 1))
		done
	done
done
fail_alloc off
fails=$(($(ethtool_sum "$A" "" "rx_(buff|fill)_alloc_err") - fails0))
echo "  $((2 * ROUNDS)) ring resizes under allocation failures: RX resumed after each;" \
	"$fails failed allocations counted (rx_buff_alloc_err, rx_fill_alloc_err)"
[ "$fails" -gt 0 ] || fail "no failed allocation counted: the injection did not reach the RX path"
stop_load
trap - EXIT
teardown_pair
