#!/usr/bin/env bash
# Forward error correction (ethtool --show-fec, --set-fec, -I --show-fec) and the eth-phy
# standard counter group (ethtool -S --groups eth-phy; rsnic.rst, "Ethtool" and "Standard
# counter groups").
#
# ConnectX, as mlx5e does it through PPLM: the port offers no FEC, BASE-R (FireCode) and RS
# at its speed and runs RS while auto (100GBASE-CR4); --show-fec shows Auto configured and
# RS active; --set-fec rs, baser, off and auto each read back as configured and active (auto:
# RS again), the link retrains (carrier back) and ping still passes both ways after each;
# llrs (which needs PPLM fields the device has not) and two modes at once are refused
# (EOPNOTSUPP, as mlx5e) and change nothing; -I --show-fec prints the block counters of
# the running mode (0: the model's wire corrupts nothing), per lane (4) under BASE-R; the
# eth-phy group shows SymbolErrorDuringCarrier 0. B's FEC is its own (unchanged by A's).
# The FEC and the lanes follow the speed the link runs (PPLM's per-speed fields, PMLP's
# width): with both ends forced to 25G, 50G and 40G, --show-fec shows Auto with RS active at
# 25G and 50G (25G lanes) and no FEC (Off) at 40G, and after --set-fec baser BASE-R active,
# counted per lane: one at 25G (25GBASE-CR), two at 50G (50GBASE-CR2), four at 40G.
#
# MANA: upstream mana has no FEC operation and no eth-phy group, and neither has rsnic:
# --show-fec, --set-fec and -I --show-fec answer "Operation not supported" and eth-phy is
# empty.
set -eu
. "$(dirname "$0")/lib.sh"

# fec_of IFACE [NETNS]: "CONFIGURED ACTIVE" as ethtool --show-fec shows them, lower case,
# "off" for no FEC (ethtool may name it None).
fec_of() {
	local ns=()
	[ -n "${2:-}" ] && ns=(ip netns exec "$2")
	"${ns[@]}" ethtool --show-fec "$1" >/tmp/fec.out 2>&1 || {
		cat /tmp/fec.out >&2
		fail "ethtool --show-fec $1 failed"
	}
	awk -F': *' '/Configured FEC encodings:/ { c = $2 } /^Active FEC encoding:/ { a = $2 }
		END { print tolower(c), tolower(a) }' /tmp/fec.out | sed 's/\bnone\b/off/g'
}

# refused WHAT COMMAND...: COMMAND fails with "Operation not supported".
refused() {
	local what=$1
	shift
	if "$@" >/tmp/fec.err 2>&1; then
		fail "$what: accepted: $(cat /tmp/fec.err)"
	fi
	grep -q "Operation not supported" /tmp/fec.err ||
		fail "$what: not EOPNOTSUPP: $(cat /tmp/fec.err)"
	echo "  $what: Operation not supported"
}

# phy_group IFACE: the eth-phy lines of ethtool -S --groups eth-phy.
phy_group() {
	ethtool -S "$1" --groups eth-phy 2>&1 | grep -i 'SymbolErrorDuringCarrier' || true
}

setup_pair

if [ "$RSNIC_FAMILY" = mana ]; then
	refused "MANA --show-fec" ethtool --show-fec "$A"
	refused "MANA --set-fec rs" ethtool --set-fec "$A" encoding rs
	refused "MANA -I --show-fec" ethtool -I --show-fec "$A"
	[ -z "$(phy_group "$A")" ] || fail "MANA reported eth-phy: $(phy_group "$A")"
	echo "  MANA: eth-phy is empty, as upstream mana's"
	teardown_pair
	exit 0
fi

carrier_on() { [ "$(carrier "$A")" = 1 ]; }

# Both ends ping each other (a few tries: the link may just have retrained).
pings() {
	ping -q -c 2 -i 0.2 -W 1 10.10.0.2 >/dev/null 2>&1 &&
		ip netns exec peer ping -q -c 2 -i 0.2 -W 1 10.10.0.1 >/dev/null 2>&1
}

assert_eq "A at load (configured active)" "auto rs" "$(fec_of "$A")"
assert_eq "B at load (configured active)" "auto rs" "$(fec_of "$B" peer)"

for step in "rs rs rs" "baser baser baser" "off off off" "auto auto rs"; do
	read -r mode configured active <<<"$step"
	ethtool --set-fec "$A" encoding "$mode"
	assert_eq "A after --set-fec $mode (configured active)" "$configured $active" "$(fec_of "$A")"
	wait_for "carrier on $A after --set-fec $mode" carrier_on
	wait_for "ping both ways after --set-fec $mode" pings
	echo "  ping both ways after --set-fec $mode"
	if [ "$mode" = baser ]; then
		# FireCode counts per lane: the four of 100GBASE-CR4.
		ethtool -I --show-fec "$A" >/tmp/fec.stats 2>&1 || fail "-I --show-fec: $(cat /tmp/fec.stats)"
		# (ethtool prints a "Lane N: V" line under each counter.)
		assert_eq "BASE-R: lanes of the corrected and uncorrectable blocks, each 0" 8 \
			"$(grep -c '^ *Lane [0-3]: 0$' /tmp/fec.stats)"
	fi
done
assert_eq "B unaffected (configured active)" "auto rs" "$(fec_of "$B" peer)"

# mlx5e's refusals: LLRS without the 50G-per-lane fields, two modes at once.
ethtool --set-fec "$A" encoding baser
refused "--set-fec llrs" ethtool --set-fec "$A" encoding llrs
refused "--set-fec rs baser" ethtool --set-fec "$A" encoding rs baser
assert_eq "A unchanged by the refusals" "baser baser" "$(fec_of "$A")"
ethtool --set-fec "$A" encoding auto
wait_for "carrier on $A" carrier_on

# The RS counters (0 on the model's wire), and the netlink reply's statistics.
ethtool -I --show-fec "$A" >/tmp/fec.stats 2>&1 || fail "-I --show-fec: $(cat /tmp/fec.stats)"
grep -q "^Statistics:" /tmp/fec.stats || fail "no FEC statistics: $(cat /tmp/fec.stats)"
for c in corrected_blocks uncorrectable_blocks; do
	assert_eq "RS $c" 0 "$(awk -v k="$c:" '$1 == k { print $2 }' /tmp/fec.stats)"
done

# eth-phy: the IEEE 802.3 group's symbol errors.
assert_eq "eth-phy" "eth-phy-SymbolErrorDuringCarrier: 0" "$(phy_group "$A" | sed 's/^\s*//')"

# The FEC at the speed the link runs: both ends forced to each speed (the model's state goes
# with the module at the end, so nothing is put back).
for step in "25000 rs 1" "50000 rs 2" "40000 off 4"; do
	read -r speed active lanes <<<"$step"
	ethtool -s "$A" speed "$speed" autoneg off
	ip netns exec peer ethtool -s "$B" speed "$speed" autoneg off
	wait_for "carrier on $A at $speed Mb/s" carrier_on
	assert_eq "A at $speed Mb/s (configured active)" "auto $active" "$(fec_of "$A")"
	ethtool --set-fec "$A" encoding baser
	wait_for "carrier on $A at $speed Mb/s after --set-fec baser" carrier_on
	assert_eq "A at $speed Mb/s after --set-fec baser" "baser baser" "$(fec_of "$A")"
	ethtool -I --show-fec "$A" >/tmp/fec.stats 2>&1 || fail "-I --show-fec: $(cat /tmp/fec.stats)"
	assert_eq "BASE-R at $speed Mb/s: lanes of the corrected and uncorrectable blocks" \
		$((2 * lanes)) "$(grep -c '^ *Lane [0-7]: 0$' /tmp/fec.stats)"
	ethtool --set-fec "$A" encoding auto
	wait_for "carrier on $A at $speed Mb/s after --set-fec auto" carrier_on
done
wait_for "ping both ways at 40000 Mb/s" pings
echo "  ping both ways at 40000 Mb/s"

teardown_pair
