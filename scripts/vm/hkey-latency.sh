#!/usr/bin/env bash
# How long ethtool -X hkey takes on a ConnectX port under the load rss_ctx.py's
# test_hitless_key_update puts on it (16 iperf3 streams into A), against ethtool -x (no device
# command) and /bin/true (starting a program): the figures in rsnic.rst, "The kernel's
# selftests". Runs in the test VM:  scripts/vm-run.sh bash scripts/vm/hkey-latency.sh
set -euo pipefail
export RSNIC_FAMILY=${RSNIC_FAMILY:-mlx5}
. tests/vm/lib.sh
. tests/vm/traffic.sh
setup_pair
ethtool -L "$A" combined 4
wait_for "carrier on $A" eval '[ "$(carrier "$A")" = 1 ]'
key() { python3 -c 'import random; print(":".join("%02x" % random.randrange(256) for _ in range(40)))'; }
# timed LABEL CMD...: runs CMD three times, printing each wall time in microseconds. An
# argument "KEY" becomes a new random key, made before the clock starts.
timed() {
	local label=$1 s e i a args
	shift
	for i in 1 2 3; do
		args=()
		for a in "$@"; do [ "$a" = KEY ] && a=$(key); args+=("$a"); done
		s=$(date +%s%N)
		"${args[@]}" >/dev/null
		e=$(date +%s%N)
		echo "  $label: $(((e - s) / 1000)) us"
	done
}
timed "idle /bin/true" /bin/true
timed "idle ethtool -x" ethtool -x "$A"
timed "idle ethtool -X hkey" ethtool -X "$A" hkey KEY
iperf3 -s -D -p 5201
ip netns exec peer iperf3 -c 10.10.0.1 -P 16 -t 15 -p 5201 >/dev/null 2>&1 &
sleep 4
timed "load /bin/true" /bin/true
timed "load ethtool -x" ethtool -x "$A"
timed "load ethtool -X hkey" ethtool -X "$A" hkey KEY
wait
pkill iperf3 || true
teardown_pair
