#!/usr/bin/env bash
# AF_XDP zero-copy wake-ups as mlx5e's mlx5e_xsk_wakeup, on port A of
# both families: a txonly socket with need_wakeup off kicks the kernel (sendto) on every
# loop, each kick an ndo_xsk_wakeup. One that finds NAPI scheduled or running marks it
# missed (napi_if_scheduled_mark_missed) and does nothing else; the others post a NOP on
# the ICO SQ (ConnectX; none while one is pending) or schedule NAPI (MANA, no NOP WQE).
# Checked: every kick reached the driver (xsk_wakeups = the socket's kicks), some found
# NAPI scheduled (xsk_wakeup_missed > 0), missed + NOPs (or schedules) <= wake-ups, and
# fewer than half of the wake-ups posted a NOP; on ConnectX the device ran exactly the
# NOPs the driver posted (dev_nop_wqes, with xdp_tx_mpwqe off so that the XSK SQ pads
# nothing). Every frame reaches B. (Before: a NOP for every kick, no missed count.)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$(dirname "$0")/xdp.sh"
one_family_on_debug

N=${XSK_COUNT:-$([ "$debug" = 1 ] && echo 2000 || echo 20000)}
case $RSNIC_FAMILY in
mlx5) KICK=xsk_wakeup_nops ;;
mana) KICK=xsk_wakeup_napi ;;
esac

xdp_pair
mark_dmesg
xdp_native_or_fail "$A"
zc_check "$A" "$(xdp_features "$A")"
# A's XSK queues exist only while a program is attached (as mlx5e's).
xdp_attach "$A" "" xdp_pass
[ "$RSNIC_FAMILY" != mlx5 ] || [ -z "$(priv_flag "$A" xdp_tx_mpwqe)" ] ||
	ethtool --set-priv-flags "$A" xdp_tx_mpwqe off
wait_for "carrier on $A" eval '[ "$(carrier "$A")" = 1 ]'
snap a0 "$A"
snap b0 "$B" peer
xsk_tx "" -i "$A" -z --no-need-wakeup -n "$N" --dst-mac "$MAC_B" -s 60 -d 120
snap a1 "$A"
wait_for "B's device to receive them" eval \
	'snap b1 "$B" peer; [ "$(delta b0 b1 dev_rx_packets)" -ge "$N" ]'
assert_eq "frames txonly sent and completed" "$N" "$(kv packets "$XT")"
assert_eq "bound in zero-copy mode" zerocopy "$(kv bind "$XT")"
kicks=$(kv kicks "$XT")
w=$(delta a0 a1 xsk_wakeups)
m=$(delta a0 a1 xsk_wakeup_missed)
k=$(delta a0 a1 "$KICK")
echo "  $N frames, $kicks kicks: $w wake-ups, $m found NAPI scheduled (marked missed), $k $KICK"
assert_eq "wake-ups = the socket's kicks" "$kicks" "$w"
[ "$m" -gt 0 ] || fail "no wake-up found NAPI scheduled"
[ $((m + k)) -le "$w" ] || fail "missed ($m) + $KICK ($k) exceed the wake-ups ($w)"
[ $((2 * k)) -lt "$w" ] || fail "$k of $w wake-ups kicked NAPI: no saving"
if [ "$RSNIC_FAMILY" = mlx5 ]; then
	assert_eq "NOP WQEs A's device ran = the wake-ups' NOPs" "$k" "$(delta a0 a1 dev_nop_wqes)"
fi
assert_eq "B's device received every frame" "$N" "$(delta b0 b1 dev_rx_packets)"
xdp_detach "$A" ""
no_kernel_reports
teardown_pair
