#!/usr/bin/env bash
# 50 toggles (25 on the debug kernel) of the family's private flag (mlx5 skb_tx_mpwqe, MANA
# rx_db_per_packet; each reopens A's channels) during one iperf3 TCP stream from A to B: the
# stream survives them (iperf3 is still running after the last toggle and then stops only
# when told to), the stream makes progress during them, and the flag ends where it started. The rates before and
# during the toggles are printed, not asserted (timing under TCG on a shared machine is
# noise); they showed the qdisc stall fixed by waking, not just starting, the TX queues
# after a reopen.
set -eu
. "$(dirname "$0")/lib.sh"
one_family_on_debug
. "$(dirname "$0")/traffic.sh"

# 50 toggles; 25 on the debug kernel, where each takes seconds under KASAN and lockdep
# (its purpose there is the sanitizers' view of reopening under traffic, not the count).
TOGGLES=${TOGGLES:-$([ "${KERNEL_VARIANT:-normal}" = debug ] && echo 25 || echo 50)}

setup_pair
OTHER=$([ "$PFLAG_DEFAULT" = on ] && echo off || echo on)
assert_eq "$PFLAG at start" "$PFLAG_DEFAULT" "$(priv_flag "$A" "$PFLAG")"
# The stream must outlast the toggles, however long they take (a loaded machine made them
# four times slower than their time without traffic): it is given 300 s and stopped by
# SIGINT after the last toggle, when iperf3 reports what it sent. The stream is paced
# (20 Mbit/s) so that it does not starve the toggles of the two emulated CPUs.
t0=$(date +%s%N)
for m in "$OTHER" "$PFLAG_DEFAULT" "$OTHER" "$PFLAG_DEFAULT"; do ethtool --set-priv-flags "$A" "$PFLAG" "$m"; done
per=$((($(date +%s%N) - t0) / 4000000))
echo "  a toggle takes $per ms without traffic"
wait_for "carrier on $A" eval '[ "$(carrier "$A")" = 1 ]'
iperf_server 10.10.0.2 peer
timeout 360 iperf3 -c 10.10.0.2 -b 20M -t 300 -J >/tmp/toggle.json &
ipid=$!
sleep 1
snap b0a "$A"
tb=$(date +%s%N)
sleep 2
snap s0a "$A"
t0=$(date +%s%N)
base=$(($(delta b0a s0a tx_bytes) * 8000 / ((t0 - tb) / 1000)))
for i in $(seq "$TOGGLES"); do
	if [ $((i % 2)) = 1 ]; then m=$OTHER; else m=$PFLAG_DEFAULT; fi
	ethtool --set-priv-flags "$A" "$PFLAG" "$m" || fail "toggle $i ($PFLAG $m) failed"
	kill -0 "$ipid" 2>/dev/null || fail "iperf3 ended during toggle $i, $((($(date +%s%N) - t0) / 1000000)) ms after the first: $(iperf_json /tmp/toggle.json bps)"
done
t1=$(date +%s%N)
snap s1a "$A"
echo "  $TOGGLES toggles in $(((t1 - t0) / 1000000)) ms"
assert_eq "$PFLAG at end" "$([ $((TOGGLES % 2)) = 0 ] && echo "$PFLAG_DEFAULT" || echo "$OTHER")" "$(priv_flag "$A" "$PFLAG")"
sleep 1
kill -0 "$ipid" 2>/dev/null || fail "iperf3 ended after the toggles before it was stopped: $(iperf_json /tmp/toggle.json bps)"
kill -INT "$ipid"
# Stopped by SIGINT, iperf3 exits 1 and its JSON says why; anything else is a failure of the
# stream. What it sent (an interrupted client is not told the receiver's figures).
rc=0
wait "$ipid" || rc=$?
why=$(iperf_json /tmp/toggle.json error)
bps=$(iperf_json /tmp/toggle.json sent_bps)
[ "$rc" = 1 ] && [ "$why" = "interrupt - the client has terminated" ] ||
	fail "iperf3 failed across the toggles: exit $rc, $why"
echo "  TCP A -> B across the toggles: $((bps / 1000)) kbit/s sent"
[ "$bps" -gt 0 ] 2>/dev/null || fail "no throughput across the toggles ($bps)"
sent=$(delta s0a s1a tx_packets)
during=$(($(delta s0a s1a tx_bytes) * 8000 / ((t1 - t0) / 1000)))
echo "  A sent $sent packets during the toggles"
echo "  A's TX rate: $base kbit/s before the toggles, $during kbit/s during them (not asserted:"
echo "  each toggle reopens the channels, and rates under TCG on a shared machine are noise)"
[ "$sent" -gt 0 ] || fail "the stream made no progress during the toggles"
ping -c 3 -i 0.2 -W 2 10.10.0.2 >/dev/null || fail "no ping after the toggles"
assert_eq "no device errors on A" 0 "$(stat "$A" "$C_WQE_ERR")"
teardown_pair
