#!/usr/bin/env bash
# 50 toggles (25 on the debug kernel) of the family's private flag (mlx5 skb_tx_mpwqe, MANA
# rx_db_per_packet; each reopens A's channels) during one iperf3 TCP stream from A to B: the
# stream survives them (iperf3 exits 0), the toggles all happen while it runs, the stream
# makes progress during them, and the flag ends where it started. The rates before and
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
# The stream must outlast the toggles. A toggle takes about 0.2 s in the normal kernel's
# emulated VM and several times that in the debug kernel's: time four without traffic and
# give the stream 3 times the estimate plus 5 s (toggles are about twice as slow under
# traffic). The stream is paced (20 Mbit/s) so that
# it does not starve the toggles of the two emulated CPUs.
t0=$(date +%s%N)
for m in "$OTHER" "$PFLAG_DEFAULT" "$OTHER" "$PFLAG_DEFAULT"; do ethtool --set-priv-flags "$A" "$PFLAG" "$m"; done
per=$((($(date +%s%N) - t0) / 4000000))
DUR=${IPERF_DUR:-$((per * TOGGLES * 3 / 1000 + 5))}
# At most 120 s: the debug kernel's toggles are slow without traffic, not much slower with it.
[ "$DUR" -le 120 ] || DUR=${IPERF_DUR:-120}
echo "  a toggle takes $per ms without traffic; stream of $DUR s"
wait_for "carrier on $A" eval '[ "$(carrier "$A")" = 1 ]'
iperf_server 10.10.0.2 peer
timeout $((DUR + 60)) iperf3 -c 10.10.0.2 -b 20M -t "$DUR" -J >/tmp/toggle.json &
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
kill -0 "$ipid" 2>/dev/null || fail "iperf3 ended before the toggles did (raise IPERF_DUR)"
assert_eq "$PFLAG at end" "$([ $((TOGGLES % 2)) = 0 ] && echo "$PFLAG_DEFAULT" || echo "$OTHER")" "$(priv_flag "$A" "$PFLAG")"
wait "$ipid" || fail "iperf3 failed across the toggles: $(iperf_json /tmp/toggle.json bps)"
bps=$(iperf_json /tmp/toggle.json bps)
echo "  TCP A -> B across the toggles: $((bps / 1000)) kbit/s, retransmits $(iperf_json /tmp/toggle.json retransmits)"
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
