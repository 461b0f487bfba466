#!/usr/bin/env bash
# ethtool -i, link settings, private flags: tx_mpwqe is listed, on by default, and
# round-trips off and on; an unknown flag or a bad value is refused and changes nothing.
set -eu
. "$(dirname "$0")/lib.sh"

load_rsnic
mapfile -t ifs < <(rsnic_ifaces)
dev=${ifs[0]}
info=$(ethtool -i "$dev")
echo "$info"
assert_eq "driver" rsnic "$(echo "$info" | sed -n 's/^driver: //p')"
modver=$(sed -n 's/.*version \([0-9.]*\):.*/\1/p' <(dmesg | grep 'rsnic: version' | tail -n1))
assert_eq "version matches the module's" "$modver" "$(echo "$info" | sed -n 's/^version: //p')"
echo "$info" | grep -q '^bus-info: rsnic-sim0:port0$' || fail "bus-info"
ethtool "$dev" | grep -q 'Speed: 100000Mb/s' || fail "speed not reported"

ethtool --show-priv-flags "$dev"
assert_eq "flag count" 1 "$(ethtool --show-priv-flags "$dev" | grep -Ec '^[a-z0-9_]+: (on|off)$')"
assert_eq "tx_mpwqe default" on "$(priv_flag "$dev" tx_mpwqe)"
ethtool --set-priv-flags "$dev" tx_mpwqe off
assert_eq "tx_mpwqe after off" off "$(priv_flag "$dev" tx_mpwqe)"
assert_eq "peer unaffected" on "$(priv_flag "${ifs[1]}" tx_mpwqe)"
ethtool --set-priv-flags "$dev" tx_mpwqe on
assert_eq "tx_mpwqe after on" on "$(priv_flag "$dev" tx_mpwqe)"

if ethtool --set-priv-flags "$dev" no_such_flag on 2>/tmp/err; then
	fail "an unknown private flag was accepted"
fi
echo "  unknown flag refused: $(cat /tmp/err)"
if ethtool --set-priv-flags "$dev" tx_mpwqe maybe 2>/tmp/err; then
	fail "a bad flag value was accepted"
fi
echo "  bad value refused: $(head -n1 /tmp/err)"
assert_eq "tx_mpwqe unchanged by refused calls" on "$(priv_flag "$dev" tx_mpwqe)"

ethtool -S "$dev" | grep -q 'tx_queue_dropped: ' || fail "ethtool -S lacks tx_queue_dropped"
unload_rsnic
