#!/usr/bin/env bash
# ethtool -i, link settings, private flags: the family's flags (mlx5 skb_tx_mpwqe, on by
# default, and rx_cqe_compress, off; MANA rx_db_per_packet, off) are listed with their
# defaults, and the data-path one round-trips; the other family's flag, an unknown flag or a
# bad value is refused and changes nothing.
set -eu
. "$(dirname "$0")/lib.sh"
one_family_on_debug

load_rsnic
mapfile -t ifs < <(rsnic_ifaces)
dev=${ifs[0]}
info=$(ethtool -i "$dev")
echo "$info"
assert_eq "driver" rsnic "$(echo "$info" | sed -n 's/^driver: //p')"
modver=$(sed -n 's/.*version \([0-9.]*\):.*/\1/p' <(dmesg | grep 'rsnic: version' | tail -n1))
assert_eq "version matches the module's" "$modver" "$(echo "$info" | sed -n 's/^version: //p')"
# The in-kernel device host's functions are rsnic-sim<N>:port<P>; a real function's (vfio)
# its PCI address, as upstream's.
case $RSNIC_TRANSPORT in
vfio) echo "$info" | grep -Eq '^bus-info: [0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$' || fail "bus-info" ;;
*) echo "$info" | grep -q '^bus-info: rsnic-sim0:port0$' || fail "bus-info" ;;
esac
ethtool "$dev" | grep -q 'Speed: 100000Mb/s' || fail "speed not reported"
assert_eq "firmware names the family" "sim-$RSNIC_FAMILY" "$(echo "$info" | sed -n 's/^firmware-version: //p')"

ethtool --show-priv-flags "$dev"
assert_eq "flag count" "$(echo "$PFLAGS" | wc -w)" "$(ethtool --show-priv-flags "$dev" | grep -Ec '^[a-z0-9_]+ *: (on|off)$')"
for f in $PFLAGS; do
	assert_eq "${f%=*} at load" "${f#*=}" "$(priv_flag "$dev" "${f%=*}")"
done
other=$([ "$PFLAG_DEFAULT" = on ] && echo off || echo on)
other_flag=$([ "$PFLAG" = skb_tx_mpwqe ] && echo rx_db_per_packet || echo skb_tx_mpwqe)
assert_eq "$PFLAG default" "$PFLAG_DEFAULT" "$(priv_flag "$dev" "$PFLAG")"
ethtool --set-priv-flags "$dev" "$PFLAG" "$other"
assert_eq "$PFLAG after $other" "$other" "$(priv_flag "$dev" "$PFLAG")"
assert_eq "peer unaffected" "$PFLAG_DEFAULT" "$(priv_flag "${ifs[1]}" "$PFLAG")"
ethtool --set-priv-flags "$dev" "$PFLAG" "$PFLAG_DEFAULT"
assert_eq "$PFLAG back to $PFLAG_DEFAULT" "$PFLAG_DEFAULT" "$(priv_flag "$dev" "$PFLAG")"

for bad in no_such_flag "$other_flag"; do
	if ethtool --set-priv-flags "$dev" "$bad" on 2>/tmp/err; then
		fail "private flag $bad was accepted"
	fi
	echo "  flag $bad refused: $(cat /tmp/err)"
done
if ethtool --set-priv-flags "$dev" "$PFLAG" maybe 2>/tmp/err; then
	fail "a bad flag value was accepted"
fi
echo "  bad value refused: $(head -n1 /tmp/err)"
assert_eq "$PFLAG unchanged by refused calls" "$PFLAG_DEFAULT" "$(priv_flag "$dev" "$PFLAG")"

ethtool -S "$dev" | grep -q 'tx_queue_dropped: ' || fail "ethtool -S lacks tx_queue_dropped"
unload_rsnic
