#!/usr/bin/env bash
# AF_XDP in copy mode over generic (skb) XDP on rsnic ports, which needs nothing of the
# driver's XDP: txonly on A (rsnic's xmit through dev_direct_xmit) -> rxdrop on B, with
# need_wakeup on and off, and A -> l2fwd on B -> A, where the frames come back with the MAC
# addresses swapped; every received frame checked byte for byte against the test frame
# rebuilt from its sequence number, each one received intact or counted as dropped by the
# socket (and those are the only sequence gaps). B (namespace "peer") has one channel so
# that every frame reaches the queue the socket is bound to. The native-XDP side of AF_XDP,
# zero-copy included, is test 92. On the debug kernel: the mlx5 pass
# only, need_wakeup on only.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$(dirname "$0")/xdp.sh"

N=${XSK_COUNT:-$([ "$debug" = 1 ] && echo 1000 || echo 5000)}
NL=${XSK_L2FWD_COUNT:-$([ "$debug" = 1 ] && echo 500 || echo 2000)}

xdp_tools_or_fail
# The generic XDP and AF_XDP copy paths are the core's; rsnic's xmit and receive paths
# under them are the ones every traffic test covers in both families.
one_family_on_debug
setup_pair
quiet_pair
ip netns exec peer ethtool -L "$B" combined 1
wait_for "carrier on $A" eval '[ "$(carrier "$A")" = 1 ]'
mark_dmesg
MAC_A=$(mac "$A")

snap g0a "$A"
snap g0b "$B" peer
rxdrop_run "copy, skb XDP" -S -c -- -c
snap g1a "$A"
snap g1b "$B" peer
assert_eq "[copy, skb XDP] A's driver sent (tx_packets)" "$N" "$(delta g0a g1a tx_packets)"
assert_eq "[copy, skb XDP] B's device delivered" "$N" "$(delta g0b g1b "$C_DEV_RX")"
assert_eq "[copy, skb XDP] B's driver passed them on (rx_packets)" "$N" "$(delta g0b g1b rx_packets)"
if [ "$debug" = 0 ]; then
	rxdrop_run "copy, skb XDP, no need_wakeup" -S -c --no-need-wakeup -- -c --no-need-wakeup
else
	echo "  need_wakeup off: on the normal kernel only (every exec costs seconds on the debug kernel)"
fi
l2fwd_run "l2fwd copy, skb XDP" -S -c

no_kernel_reports
teardown_pair
