#!/usr/bin/env bash
# Ten cycles (two on the debug kernel, where each takes 10-20 s; three on the vfio-user
# transport, where each also boots the functions through their commands and firmware pages,
# 6 s a cycle, and 65, 98, 99 and 99-device-gone load and unload there too) of insmod, bring
# both ports up, flip a flag, rmmod: every cycle creates and removes exactly the two ports and logs no
# warning (the runner fails the run on any WARNING/BUG/KASAN/lockdep report, and checks
# kmemleak on the debug kernel). On ConnectX, in the first and the last cycle, every command
# of the port's open and flag flip completes in events mode again (the teardown before went
# back to polling): the model wrote a command completion EQE for each (dev_cmd_eqes against
# dev_commands).
set -eu
. "$(dirname "$0")/lib.sh"
one_family_on_debug

cycles=10
[ "${RSNIC_TRANSPORT:-kernel}" = kernel ] || cycles=3
[ "${KERNEL_VARIANT:-normal}" != debug ] || cycles=2
CYCLES=${CYCLES:-$cycles}
for cycle in $(seq "$CYCLES"); do
	load_rsnic
	mapfile -t ifs < <(rsnic_ifaces)
	[ "${#ifs[@]}" = 2 ] || fail "cycle $cycle: ${#ifs[@]} interfaces"
	check=
	[ "$RSNIC_FAMILY" != mlx5 ] || { [ "$cycle" != 1 ] && [ "$cycle" != "$CYCLES" ]; } || check=1
	[ -z "$check" ] || read -r n0 e0 < <(cmd_counts "${ifs[0]}")
	ip link set "${ifs[0]}" up
	ip link set "${ifs[1]}" up
	ethtool --set-priv-flags "${ifs[0]}" "$PFLAG" "$([ "$PFLAG_DEFAULT" = on ] && echo off || echo on)"
	if [ -n "$check" ]; then
		read -r n1 e1 < <(cmd_counts "${ifs[0]}")
		[ $((n1 - n0)) -gt 0 ] || fail "cycle $cycle: no command ran"
		assert_eq "cycle $cycle: command EQEs for the $((n1 - n0)) commands" $((n1 - n0)) $((e1 - e0))
	fi
	unload_rsnic
	echo "  cycle $cycle ok"
done
grep -q '^rsnic ' /proc/modules && fail "rsnic still loaded"
exit 0
