#!/usr/bin/env bash
# The kernel's forwarding-library tests of tools/testing/selftests/drivers/net/hw (6.12 tree,
# run in tree) on rsnic's two ports, p1 = A and p2 = B, both in the initial namespace (the
# library puts each in a VRF of its own): NIC vendors run them on two cabled ports.
#
#   loopback.sh       a frame sent on A with `ethtool -K A loopback on` comes back to A's
#                     ingress (a flower filter counts it), and not before or after
#   ethtool_rmon.sh   the RMON histogram: for each of the device's RX buckets, 10000 frames
#                     of that size received and 20000 sent must move that bucket by 10000
#                     (up to 100 more), on both ports; the TX histogram is XFAIL where the
#                     device has none (ConnectX, as mlx5e; MANA has no RMON group at all,
#                     as upstream mana, so both directions are XFAIL there)
#   ethtool.sh        link modes (ConnectX only: MANA, as upstream mana, cannot set them, so
#                     it is not run there): every speed forced on both ends, different forced
#                     speeds (no link), forced against autonegotiation, subsets advertised,
#                     the highest common speed chosen. The library waits WAIT_TIME (5 s)
#                     after a link comes up and up to WAIT_TIMEOUT (20 s) for one that does
#                     not, for a real PHY's link training; the model's link resolves at once,
#                     so it runs with 1 s and 5 s.
#   ethtool_extended_state.sh
#                     why the link is down, as ethtool shows it (ConnectX only: MANA has no
#                     get_link_ext_state, as upstream mana): A up with B down is "Autoneg, No
#                     partner detected", both up and forced to different speeds each "Autoneg,
#                     No partner detected during force mode" (1 s and 5 s too). Its third
#                     test, no_cable, needs a port without a cable (NETIF_NO_CABLE), which
#                     the model has not: its two ports are always cabled to each other. It is
#                     not run (TESTS names the other two), and says so.
#
# Every "TEST:" line a script prints must be "[ OK ]" or "[XFAIL]", and the XFAILs must be
# the ones named above; its exit status must be 0.
set -eu
. "$(dirname "$0")/lib.sh"

KSRC=${RSNIC_KSRC:-$(ls -d /var/cache/rsnic/src/linux-source-6.12-* 2>/dev/null | head -n1)}
HW=$KSRC/tools/testing/selftests/drivers/net/hw
[ -x "$HW/loopback.sh" ] || fail "no kernel selftests at $HW (the test kernel's source: make kernel)"
for c in jq mausezahn; do
	command -v "$c" >/dev/null || fail "$c is missing (make setup-test installs it)"
done

load_rsnic
mapfile -t ifs < <(rsnic_ifaces)
A=${ifs[0]} B=${ifs[1]}

# hw_run SCRIPT XFAIL_RE: runs SCRIPT on A and B; prints its TEST lines; fails on a non-zero
# exit, a TEST line that is neither OK nor XFAIL, or an XFAIL whose line does not match
# XFAIL_RE ("" allows none). Sets RESULTS to the number of TEST lines.
hw_run() {
	local s=$1 xre=$2 out=/tmp/hw.$1 rc=0 bad t0=$SECONDS
	echo "  -- $s"
	(cd "$HW" && timeout 900 "./$s" "$A" "$B") >"$out" 2>&1 || rc=$?
	echo "     ($((SECONDS - t0)) s)"
	grep -E "^TEST: " "$out" | sed 's/^/     /' || true
	RESULTS=$(grep -c "^TEST: " "$out" || true)
	[ "$rc" = 0 ] || { tail -n 30 "$out" >&2; fail "$s exited with $rc"; }
	bad=$(grep -E "^TEST: " "$out" | grep -vE '\[ OK \]$|\[XFAIL\]' || true)
	[ -z "$bad" ] || fail "$s: $bad"
	if [ -n "$xre" ]; then
		bad=$(grep -E "^TEST: .*\[XFAIL\]" "$out" | grep -vE "$xre" || true)
	else
		bad=$(grep -E "^TEST: .*\[XFAIL\]" "$out" || true)
	fi
	[ -z "$bad" ] || fail "$s: unexpected XFAIL: $bad"
	[ "$RESULTS" -gt 0 ] || fail "$s printed no TEST line"
}

hw_run loopback.sh ""
grep -q "^TEST: loopback .*\[ OK \]" /tmp/hw.loopback.sh || fail "loopback.sh: no passed loopback test"

case $RSNIC_FAMILY in
mlx5)
	hw_run ethtool_rmon.sh "does not support tx histogram counters"
	# mlx5e's ten RX buckets, each checked on both ports.
	n=$(grep -cE "^TEST: rx-pkts[0-9]+to[0-9]+ on ($A|$B) .*\[ OK \]" /tmp/hw.ethtool_rmon.sh || true)
	assert_eq "RX histogram buckets passed (10 per port)" 20 "$n"
	WAIT_TIME=1 WAIT_TIMEOUT=5 hw_run ethtool.sh ""
	# The model's five speeds, each forced on both ends and against autonegotiation.
	n=$(grep -cE "^TEST: force speed [0-9]+ (on both ends|vs. autoneg) .*\[ OK \]" /tmp/hw.ethtool.sh || true)
	assert_eq "forced-speed tests passed (5 speeds, 2 ways)" 10 "$n"
	# Its autoneg test brings A up alone: B must be down (ethtool.sh leaves both down;
	# made sure of here).
	ip link set "$A" down
	ip link set "$B" down
	WAIT_TIME=1 WAIT_TIMEOUT=5 TESTS="autoneg autoneg_force_mode" \
		hw_run ethtool_extended_state.sh ""
	n=$(grep -cE "^TEST: Autoneg, No partner detected( during force mode)? +\[ OK \]" \
		/tmp/hw.ethtool_extended_state.sh || true)
	assert_eq "extended link states passed (no partner, no partner in force mode)" 2 "$n"
	echo "  ethtool_extended_state.sh: no_cable not run: the model's ports are always" \
		"cabled to each other (no NETIF_NO_CABLE to give it)"
	;;
mana)
	hw_run ethtool_rmon.sh "does not support (rx|tx) histogram counters"
	assert_eq "XFAILs of ethtool_rmon.sh (no RMON group: rx and tx on each port)" 4 "$RESULTS"
	echo "  ethtool.sh: not run: MANA cannot set link modes (ethtool -s), as upstream mana"
	;;
esac

unload_rsnic
echo "ok"
