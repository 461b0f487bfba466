#!/usr/bin/env bash
# AF_XDP zero-copy queues come and go per channel, as 6.12's mlx5e has them, on port B
# (namespace "peer") of both families:
#   - bound before its program (libxdp's order, here with a 5 s wait between the bind and
#     the program, the socket's fill ring empty meanwhile): no XSK queue exists without a
#     program (B's device created no queue at the bind: dev_queues_created), so the queue's
#     traffic still reaches the stack (pings answered, rx_xsk_packets 0); once the program
#     is attached, the socket receives every frame A sends, intact. (Before: the bind made
#     the XSK RQ at once and the queue's traffic waited for the socket's fill ring: lost.)
#   - a bind on queue 1 while a zero-copy socket transmits on queue 0 (need_wakeup off: a
#     sendto per loop): B's device creates the XSK queues of channel 1 and nothing else
#     (dev_queues_created: 6 on ConnectX, RQ, SQ, ICO SQ and their CQs; 2 on MANA, an RQ and
#     an SQ object with their CQs), no channel is reopened, and queue 0's socket goes on:
#     every one of its frames reaches A intact, in order, and none of its sendto calls
#     failed (its unbind the same). (Before: every channel was reopened and queue 0's
#     sendto got ENXIO, fatal to an xdpsock-style application.)
#   - ethtool -L while a zero-copy socket is bound on queue 1: 4 channels are allowed (the
#     socket receives every frame afterwards), 1 is refused by the ethtool core with its
#     reason ("requested channel counts are too low for existing zerocopy AF_XDP sockets"),
#     2 is allowed again; after the socket is closed, 1 too. (Before: any -L was refused.)
# XSKQ_PARTS (default "1 2 3") runs some of the three.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$(dirname "$0")/xdp.sh"
one_family_on_debug

N=${XSK_COUNT:-$([ "$debug" = 1 ] && echo 300 || echo 2000)}
# The XSK queues of one channel: ConnectX XSK RQ, XSK SQ, ICO SQ and a CQ each; MANA an RQ
# and an SQ object (each with its CQ).
XSKQ=$([ "$RSNIC_FAMILY" = mlx5 ] && echo 6 || echo 2)
PARTS=" ${XSKQ_PARTS:-1 2 3} "
part() { case $PARTS in *" $1 "*) return 0 ;; esac; return 1; }

xdp_pair
mark_dmesg
xdp_native_or_fail "$B" peer
zc_check "$B" "$(xdp_features "$B" peer)"

# --- 1. Bound before its program ---
if part 1; then
nsx peer ethtool -L "$B" combined 1
wait_for "carrier on $A" eval '[ "$(carrier "$A")" = 1 ]'
rm -f /tmp/xsk.late.bound /tmp/xsk.late.ready
nsx peer "$XSK" rxdrop -i "$B" -q 0 -z --prog-delay "$([ "$debug" = 1 ] && echo 20 || echo 6)" \
	-n "$N" -d 90 --verify \
	--expect-dst "$MAC_B" --expect-src "$MAC_A" --bound-file /tmp/xsk.late.bound \
	--ready-file /tmp/xsk.late.ready >/tmp/xsk.late 2>/tmp/xsk.late.err &
XSK_PIDS[late]=$!
wait_for "the socket bound (no program yet)" test -e /tmp/xsk.late.bound
snap l0 "$B" peer
ping -c 8 -i 0.2 -W 2 10.10.0.2 >/tmp/ping.out ||
	fail "[bound, no program] pings to B's queue lost: $(tail -n2 /tmp/ping.out)"
[ ! -e /tmp/xsk.late.ready ] || fail "the program came before the pings ended (slow VM?)"
snap l1 "$B" peer
echo "  [bound, no program] $(grep -c 'bytes from' /tmp/ping.out) of 8 pings answered"
assert_eq "[bound, no program] queues B's device created" 0 "$(delta l0 l1 dev_queues_created)"
assert_eq "[bound, no program] rx_xsk_packets" 0 "$(delta l0 l1 rx_xsk_packets)"
[ "$(delta l0 l1 rx_packets)" -ge 8 ] || fail "[bound, no program] B's stack got $(delta l0 l1 rx_packets) packets"
wait_for "the socket's program" test -e /tmp/xsk.late.ready
xsk_tx "" -i "$A" -n "$N" --dst-mac "$MAC_B" -s 60:1514 -d 60 -c --rate "$XSK_RATE"
assert_eq "[program attached] frames txonly sent" "$N" "$(kv packets "$XT")"
xsk_wait late
rx_checks "bound before its program" "$N"
assert_eq "[program attached] bound in zero-copy mode" zerocopy "$(kv bind "$XR")"
fi

# --- 2. A bind on queue 1 leaves queue 0 alone ---
nsx peer ethtool -L "$B" combined 2
xdp_attach "$B" peer xdp_xsk
if part 2; then
# Every received frame to queue 0: queue 1's socket gets nothing, queue 0's is TX only.
nsx peer ethtool -X "$B" weight 1 0
wait_for "carrier on $A" eval '[ "$(carrier "$A")" = 1 ]'
N1=$([ "$debug" = 1 ] && echo 1500 || echo 6000)
R1=$([ "$debug" = 1 ] && echo 250 || echo 1000)
cap_start q0 "$A" "" --count "$N1" --timeout 120 --expect-dst "$MAC_A" --expect-src "$MAC_B"
rm -f /tmp/xsk.q0.ready
nsx peer "$XSK" txonly -i "$B" -q 0 -z --no-need-wakeup -n "$N1" --dst-mac "$MAC_A" \
	-s 60:1514 -d 120 --rate "$R1" --ready-file /tmp/xsk.q0.ready >/tmp/xsk.q0 2>/tmp/xsk.q0.err &
XSK_PIDS[q0]=$!
wait_for "queue 0's socket" test -e /tmp/xsk.q0.ready
sleep 1
snap p0 "$B" peer
xsk_start q1 peer rxdrop -i "$B" -q 1 -z -d 2
snap p1 "$B" peer
xsk_wait q1
snap p2 "$B" peer
assert_eq "queue 1's socket bound in zero-copy mode" zerocopy "$(kv bind "$XR")"
wait "${XSK_PIDS[q0]}" || fail "queue 0's socket failed: $(cat /tmp/xsk.q0.err)"
XT=$(grep '^rsnic-xsk:' /tmp/xsk.q0 | tail -n1)
echo "  [queue 0] $XT"
assert_eq "[queue 0] frames sent and completed" "$N1" "$(kv packets "$XT")"
cap_wait q0
check_capture "[queue 0, through the bind on queue 1] at A" "$N1"
echo "  [bind on queue 1] B's device created $(delta p0 p1 dev_queues_created) queues," \
	"$(delta p1 p2 dev_queues_created) at the unbind; queue 0 sent $(delta p0 p2 tx_xsk_xmit) meanwhile"
assert_eq "[bind on queue 1] queues B's device created" "$XSKQ" "$(delta p0 p1 dev_queues_created)"
assert_eq "[unbind on queue 1] queues B's device created" 0 "$(delta p1 p2 dev_queues_created)"
assert_eq "[bind and unbind on queue 1] channel reopens" 0 "$(delta p0 p2 ch_reopen)"
[ "$(delta p0 p2 tx_xsk_xmit)" -gt 0 ] || fail "queue 0's socket sent nothing during the bind"
fi

# --- 3. ethtool -L with a socket bound on queue 1 ---
if part 3; then
nsx peer ethtool -X "$B" weight 0 1
xsk_start q1 peer rxdrop -i "$B" -q 1 -z -n "$N" -d 120 --verify \
	--expect-dst "$MAC_B" --expect-src "$MAC_A"
nsx peer ethtool -L "$B" combined 4 2>/tmp/ethtool.err ||
	fail "[socket on queue 1] ethtool -L combined 4 refused: $(cat /tmp/ethtool.err)"
assert_eq "[socket on queue 1] channels after -L 4" 4 \
	"$(channels_of "$B" current peer)"
nsx peer ethtool -X "$B" default
if nsx peer ethtool -L "$B" combined 1 2>/tmp/ethtool.err; then
	fail "[socket on queue 1] ethtool -L combined 1 was accepted"
fi
echo "  ethtool -L $B combined 1: $(cat /tmp/ethtool.err)"
grep -q "too low for existing zerocopy AF_XDP sockets" /tmp/ethtool.err ||
	fail "the refusal does not give its reason: $(cat /tmp/ethtool.err)"
nsx peer ethtool -L "$B" combined 2 2>/tmp/ethtool.err ||
	fail "[socket on queue 1] ethtool -L combined 2 refused: $(cat /tmp/ethtool.err)"
nsx peer ethtool -X "$B" weight 0 1
wait_for "carrier on $A" eval '[ "$(carrier "$A")" = 1 ]'
xsk_tx "" -i "$A" -n "$N" --dst-mac "$MAC_B" -s 60:1514 -d 60 -c --rate "$XSK_RATE"
xsk_wait q1
rx_checks "queue 1 after ethtool -L 4, then 2" "$N"
nsx peer ethtool -X "$B" default
nsx peer ethtool -L "$B" combined 1 2>/tmp/ethtool.err ||
	fail "ethtool -L combined 1 refused after the socket closed: $(cat /tmp/ethtool.err)"
fi
xdp_detach "$B" peer
no_kernel_reports
teardown_pair
