#!/usr/bin/env bash
# The AF_XDP zero-copy pool checks of mlx5e (hwif/xsk.rs, whose host tests
# cover every refusal and edge), on port B of both families, where userspace can reach
# them. At a bind, 6.12.118's AF_XDP core refuses first what does not hold a frame of the
# MTU (xp_assign_dev: the pool's frame, aligned down to 128 bytes, must hold MTU + 26), so
# the driver's bind checks (mlx5e_xsk_is_pool_sane, mlx5e_validate_xsk_param) are passed
# by every pool the core lets through: a bind at the core's edge is accepted (2 KiB chunks
# with 256 bytes of UMEM headroom at MTU 1500). An MTU change with a pool bound is the
# driver's to check (mlx5e_xsk_validate_mtu; ndo_change_mtu has no extack: the reason is
# logged), and the refusal names the largest MTU allowed:
#   - 2 KiB chunks, no UMEM headroom: MTU 1771 refused (headroom and frame do not fit a
#     chunk), "Try MTU <= 1770", 1770 accepted;
#   - 2 KiB chunks with 256 bytes of UMEM headroom: MTU 1515 refused, "Try MTU <= 1514",
#     1514 accepted;
#   - 4 KiB chunks: the frame would fit up to MTU 3818, but an XDP program with the pool's
#     headroom takes 3434 at most: 3435 refused with that reason, "Try MTU <= 3434", 3434
#     accepted.
# (Before: the MTU refusal named no MTU, and an MTU above the XDP maximum was accepted with
# a pool bound.)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$(dirname "$0")/xdp.sh"
one_family_on_debug

xdp_pair
xdp_native_or_fail "$B" peer
mark_dmesg
START=$DMESG_MARK
zc_check "$B" "$(xdp_features "$B" peer)"

# bind WHAT RC ARGS...: a zero-copy bind on B's queue 0 (held for half a second, no
# program) must exit RC (0: bound; 3: refused); its log lines go to /tmp/bind.log.
bind() {
	local what=$1 want=$2 rc=0
	shift 2
	mark_dmesg
	nsx peer "$XSK" rxdrop -i "$B" -q 0 -z --hold -d 0.5 "$@" >/tmp/bind.out 2>/tmp/bind.err || rc=$?
	dmesg_since_mark >/tmp/bind.log
	echo "  [$what] rsnic-xsk exit $rc$([ "$rc" = 0 ] || echo ": $(head -n1 /tmp/bind.err)")"
	assert_eq "[$what] rsnic-xsk exit status" "$want" "$rc"
	[ "$rc" != 0 ] || assert_eq "[$what] bound in zero-copy mode" zerocopy \
		"$(kv bind "$(grep '^rsnic-xsk:' /tmp/bind.out)")"
}
# logged TEXT: the last bind's or MTU change's log has TEXT.
logged() {
	grep -qF -- "$1" /tmp/bind.log || fail "no '$1' in the log: $(cat /tmp/bind.log)"
	echo "  log: $(grep -F -- "$1" /tmp/bind.log | head -n1 | sed 's/^\[[^]]*\] //')"
}

# The core's edge: (2048 - 256 - 256) aligned down to 128 = 1536 >= 1500 + 26.
bind "2 KiB chunks, 256 bytes of UMEM headroom, MTU 1500" 0 --frame-size 2048 --headroom 256

# mtu_change WHAT MTU RC: ip link set B mtu MTU must succeed (RC 0) or fail (RC 1).
mtu_change() {
	local what=$1 mtu=$2 want=$3 rc=0
	mark_dmesg
	nsx peer ip link set "$B" mtu "$mtu" 2>/tmp/mtu.err || rc=1
	dmesg_since_mark >/tmp/bind.log
	echo "  [$what] mtu $mtu: $([ "$rc" = 0 ] && echo accepted || echo "refused: $(cat /tmp/mtu.err)")"
	assert_eq "[$what] mtu $mtu (0 accepted, 1 refused)" "$want" "$rc"
	[ "$rc" = 1 ] || assert_eq "[$what] B's MTU" "$mtu" "$(nsx peer cat "/sys/class/net/$B/mtu")"
}

# hold ARGS...: a zero-copy socket bound on B's queue 0 in the background (not through
# xsk_start's nsx, a function whose subshell would be $! and ignore SIGINT: ip netns exec
# execs the tool, so $! is the tool's); unhold ends it.
hold() {
	rm -f /tmp/xsk.hold.ready
	ip netns exec peer "$XSK" rxdrop -i "$B" -q 0 -z --hold -d 600 \
		--ready-file /tmp/xsk.hold.ready "$@" >/tmp/xsk.hold 2>/tmp/xsk.hold.err &
	XSK_PIDS[hold]=$!
	wait_for "the held socket on $B" test -e /tmp/xsk.hold.ready
}
unhold() {
	kill -INT "${XSK_PIDS[hold]}"
	xsk_wait hold
}

hold --frame-size 2048
mtu_change "2 KiB chunks bound" 1771 1
logged "$B: MTU 1771 is too big for an XSK running on channel 0"
logged "do not fit an XSK chunk of 2048 bytes"
logged "Try MTU <= 1770"
mtu_change "2 KiB chunks bound" 1770 0
mtu_change "2 KiB chunks bound" 1500 0
unhold

hold --frame-size 2048 --headroom 256
mtu_change "2 KiB chunks, 256 bytes of UMEM headroom bound" 1515 1
logged "$B: MTU 1515 is too big for an XSK running on channel 0"
logged "512 bytes of headroom and a 1537-byte frame do not fit an XSK chunk of 2048 bytes"
logged "Try MTU <= 1514"
mtu_change "2 KiB chunks, 256 bytes of UMEM headroom bound" 1514 0
mtu_change "2 KiB chunks, 256 bytes of UMEM headroom bound" 1500 0
unhold

hold --frame-size 4096
mtu_change "4 KiB chunks bound" 3435 1
logged "$B: MTU 3435 is too big for an XSK running on channel 0"
logged "above 3434, the largest an XDP program takes with the XSK pool's headroom"
logged "Try MTU <= 3434"
mtu_change "4 KiB chunks bound" 3434 0
mtu_change "4 KiB chunks bound" 1500 0
unhold
DMESG_MARK=$START
no_kernel_reports
teardown_pair
