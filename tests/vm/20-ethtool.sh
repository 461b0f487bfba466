#!/usr/bin/env bash
# ethtool -i, link settings (speed and duplex with a carrier only; ConnectX's modes, connector
# and autonegotiation from PTYS), private flags: the family's flags (mlx5 skb_tx_mpwqe, on by
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
# Link settings: no speed or duplex without a carrier; with both ports up the link's, and on
# ConnectX the modes, connector and autonegotiation the device's PTYS register gives (the
# model: five modes of direct-attach copper, 10 to 100 Gb/s, all advertised, so the pair
# runs at 100 Gb/s) and the pause advertised (PFCC: on both ways), as mlx5e shows them. MANA
# has no link modes to show: a 100 Gb/s "other" port.
link=$(ethtool "$dev")
echo "$link" | grep -q 'Speed: Unknown' || fail "a speed without a carrier: $(echo "$link" | grep Speed)"
for i in "${ifs[@]}"; do ip link set "$i" up; done
wait_for "carrier on $dev" eval '[ "$(carrier "$dev")" = 1 ]'
link=$(ethtool "$dev")
echo "$link"
echo "$link" | grep -q 'Speed: 100000Mb/s' || fail "speed not reported"
echo "$link" | grep -q 'Duplex: Full' || fail "duplex not reported"
field() { echo "$link" | sed -n "s/^[[:space:]]*$1:[[:space:]]*//p"; }
# modes SECTION [OUTPUT]: the link modes of a section of `ethtool <dev>` (its continuation
# lines too), on one line.
modes() {
	echo "${2:-$link}" | sed -n "/^[[:space:]]*$1:/,\$p" | sed -n '2,${/^\t[^ \t]/q};p' |
		cut -d: -f2 | xargs
}
ALL_MODES="10000baseKR/Full 40000baseCR4/Full 25000baseCR/Full 50000baseCR2/Full 100000baseCR4/Full"
case $RSNIC_FAMILY in
mlx5)
	assert_eq "supported link modes" "$ALL_MODES" "$(modes 'Supported link modes')"
	assert_eq "advertised link modes" "$ALL_MODES" "$(modes 'Advertised link modes')"
	assert_eq "the partner's modes" "$ALL_MODES" "$(modes 'Link partner advertised link modes')"
	assert_eq "the partner negotiated" Yes "$(field 'Link partner advertised auto-negotiation')"
	assert_eq "port" "Direct Attach Copper" "$(field Port)"
	assert_eq "autonegotiation" on "$(field Auto-negotiation)"
	assert_eq "supports autonegotiation" Yes "$(field 'Supports auto-negotiation')"
	assert_eq "advertised pause" Symmetric "$(field 'Advertised pause frame use')"
	# ethtool -s, as mlx5e: a speed the port cannot run is refused and changes nothing;
	# its fastest speed without autonegotiation is taken (the link toggled, the carrier back:
	# the peer negotiates and advertises that mode), and autonegotiation comes back on.
	mark_dmesg
	if ethtool -s "$dev" speed 20000 autoneg off 2>/tmp/err; then fail "ethtool -s speed 20000 accepted"; fi
	dmesg_since_mark | grep -q "Not supported link mode(s) requested" ||
		fail "no reason in the log for the refused speed: $(cat /tmp/err)"
	link=$(ethtool "$dev")
	assert_eq "autonegotiation after a refusal" on "$(field Auto-negotiation)"
	ethtool -s "$dev" speed 100000 autoneg off
	wait_for "carrier on $dev after ethtool -s" eval '[ "$(carrier "$dev")" = 1 ]'
	link=$(ethtool "$dev")
	assert_eq "autonegotiation after autoneg off" off "$(field Auto-negotiation)"
	assert_eq "advertised link modes without autonegotiation" "100000baseCR4/Full" "$(field 'Advertised link modes')"
	echo "$link" | grep -q 'Speed: 100000Mb/s' || fail "speed after autoneg off"
	ethtool -s "$dev" autoneg on
	link=$(ethtool "$dev")
	assert_eq "autonegotiation back on" on "$(field Auto-negotiation)"
	assert_eq "every mode advertised again" "$ALL_MODES" "$(modes 'Advertised link modes')"
	echo "  ethtool -s: speed 20000 refused, speed 100000 autoneg off and autoneg on taken"
	;;
mana)
	assert_eq "port" Other "$(field Port)"
	if ethtool -s "$dev" speed 100000 autoneg off 2>/tmp/err; then fail "MANA took ethtool -s"; fi
	grep -qi "not supported" /tmp/err || fail "MANA ethtool -s: $(cat /tmp/err)"
	;;
esac
for i in "${ifs[@]}"; do ip link set "$i" down; done
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

# ConnectX: the link the two ports resolve from their PTYS settings (rsnic.rst, "Ethtool"),
# B in namespace "peer" so that the ping crosses the wire. Forced to different speeds, no
# carrier on either end and no ping; to the same one, carrier, that speed on both and a
# ping; negotiating with subsets of the modes, the fastest both advertise on both ends,
# each seeing the other's modes; no common mode, no carrier. While the link is down each end
# says why, from the device's PDDR as mlx5e (rsnic.rst, "Why the link is down"): forced to
# different speeds "No partner detected during force mode", no common mode "No HCD".
if [ "$RSNIC_FAMILY" = mlx5 ]; then
	A=${ifs[0]} B=${ifs[1]}
	pe() { ip netns exec peer "$@"; }
	ip netns add peer
	ip link set "$B" netns peer
	ip addr add 10.10.0.1/24 dev "$A"
	pe ip addr add 10.10.0.2/24 dev "$B"
	ip link set "$A" up
	pe ip link set "$B" up
	carriers() { echo "$(carrier "$A") $(pe cat "/sys/class/net/$B/carrier" 2>/dev/null || echo 0)"; }
	speeds() { echo "$(ethtool "$A" | sed -n 's/^[[:space:]]*Speed: //p') $(pe ethtool "$B" | sed -n 's/^[[:space:]]*Speed: //p')"; }
	# resolved WHAT SPEED: both carriers on, both ends at SPEED Mb/s, a ping through.
	resolved() {
		wait_for "carrier on both ends ($1)" eval '[ "$(carriers)" = "1 1" ]'
		assert_eq "speed on both ends ($1)" "$2Mb/s $2Mb/s" "$(speeds)"
		ping -c 3 -i 0.2 -W 2 10.10.0.2 >/dev/null || fail "no ping ($1)"
	}
	# unresolved WHAT: both carriers off, no speed, no ping.
	unresolved() {
		wait_for "carrier off on both ends ($1)" eval '[ "$(carriers)" = "0 0" ]'
		assert_eq "no speed ($1)" "Unknown! Unknown!" "$(speeds)"
		if ping -c 2 -i 0.2 -W 1 10.10.0.2 >/dev/null 2>&1; then fail "a ping without a link ($1)"; fi
	}
	# detected: "Link detected" of both ends, with the reason ethtool shows.
	detected() {
		echo "$(ethtool "$A" | sed -n 's/^[[:space:]]*Link detected: //p'), $(pe ethtool "$B" |
			sed -n 's/^[[:space:]]*Link detected: //p')"
	}
	resolved "both negotiating every mode" 100000
	assert_eq "link detected (no reason while up)" "yes, yes" "$(detected)"
	ethtool -s "$A" speed 40000 autoneg off
	pe ethtool -s "$B" speed 25000 autoneg off
	unresolved "forced to 40000 and 25000"
	assert_eq "why the link is down (forced to 40000 and 25000)" \
		"no (Autoneg, No partner detected during force mode), no (Autoneg, No partner detected during force mode)" \
		"$(detected)"
	pe ethtool -s "$B" speed 40000 autoneg off
	resolved "both forced to 40000" 40000
	# Link modes (ethtool bits): 10000baseKR 0x80000, 40000baseCR4 0x1000000, 25000baseCR
	# 0x80000000, 50000baseCR2 0x400000000, 100000baseCR4 0x4000000000.
	ethtool -s "$A" autoneg on advertise 0x480080000
	pe ethtool -s "$B" autoneg on advertise 0x4081080000
	resolved "advertising 10G, 25G, 50G against 10G, 25G, 40G, 100G" 25000
	link=$(ethtool "$A")
	assert_eq "A's partner modes" "10000baseKR/Full 40000baseCR4/Full 25000baseCR/Full 100000baseCR4/Full" \
		"$(modes 'Link partner advertised link modes')"
	pe ethtool -s "$B" advertise 0x4001000000
	unresolved "advertising 10G, 25G, 50G against 40G, 100G"
	assert_eq "why the link is down (no common mode)" \
		"no (Autoneg, No HCD), no (Autoneg, No HCD)" "$(detected)"
	ethtool -s "$A" autoneg on advertise 0x4000000000
	resolved "advertising 100G against 40G, 100G" 100000
	ethtool -s "$A" autoneg on
	pe ethtool -s "$B" autoneg on
	resolved "both negotiating every mode again" 100000
	echo "  link resolution: forced 40000/25000 down, 40000/40000 up, advertised subsets up at 25000, none in common down"
	ip netns del peer
	wait_for "$B back" ip link show "$B"
fi

ethtool -S "$dev" | grep -q 'tx_queue_dropped: ' || fail "ethtool -S lacks tx_queue_dropped"
# MANA's device counters: mana_ethtool.c's hc_* names, all of them, in its order.
if [ "$RSNIC_FAMILY" = mana ]; then
	hc="hc_rx_discards_no_wqe hc_rx_err_vport_disabled hc_rx_bytes hc_rx_ucast_pkts"
	hc+=" hc_rx_ucast_bytes hc_rx_bcast_pkts hc_rx_bcast_bytes hc_rx_mcast_pkts hc_rx_mcast_bytes"
	hc+=" hc_tx_err_gf_disabled hc_tx_err_vport_disabled hc_tx_err_inval_vportoffset_pkt"
	hc+=" hc_tx_err_vlan_enforcement hc_tx_err_eth_type_enforcement hc_tx_err_sa_enforcement"
	hc+=" hc_tx_err_sqpdid_enforcement hc_tx_err_cqpdid_enforcement hc_tx_err_mtu_violation"
	hc+=" hc_tx_err_inval_oob hc_tx_err_gdma hc_tx_bytes hc_tx_ucast_pkts hc_tx_ucast_bytes"
	hc+=" hc_tx_bcast_pkts hc_tx_bcast_bytes hc_tx_mcast_pkts hc_tx_mcast_bytes"
	assert_eq "MANA's hc_* counters" "$hc" \
		"$(ethtool -S "$dev" | sed -n 's/^ *\(hc_[a-z_]*\): .*/\1/p' | tr '\n' ' ' | sed 's/ $//')"
	echo "  ethtool -S: the 27 hc_* counters of upstream mana, in its order"
fi
unload_rsnic
