#!/usr/bin/env bash
# The standard counter groups (`ethtool -S <dev> --groups eth-mac eth-ctrl rmon`; rsnic.rst,
# "Standard counter groups").
#
# ConnectX, from the device's PPCNT IEEE 802.3 and RFC 2819 groups as mlx5e reads them: on
# a quiet pair, after pings of three sizes from B to A (each size in its own RMON bucket:
# 64, 128..255 and 1024..1518 octets with the FCS) and A's answers, what one MAC sent is
# what the other received (frames, octets, multicast, broadcast, MAC control frames), every
# received frame is in exactly one RMON bucket (the buckets add up to FramesReceivedOK),
# the 128..255 and 1024..1518 buckets gained exactly the pings of their size (each way),
# the 64-octet one at least its pings, the error counters stayed 0, and the histogram's
# buckets are mlx5e's ten.
#
# Then `ip -s -s link` (ndo_get_stats64), on both families: after multicast pings from B to
# 224.0.0.1, A's multicast count grew by at least the pings (packets the stack got for a
# group address, as mlx5e's mcast_packets). On ConnectX it also shows what the device
# counts, as of the last read of it (a read is a command; ethtool -S makes one, and
# ndo_get_stats64 queues one, as mlx5e's stats work): its missed count is the Q counter's
# rx_out_of_buffer, its CRC and length errors PPCNT's, each equal to what ethtool -S read
# the moment before.
#
# MANA: upstream mana offers none of these groups, and neither does rsnic: they are empty;
# like mana's ndo_get_stats64, rsnic's shows no device counters there (missed 0).
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"

# std NAME IFACE [NETNS]: keeps IFACE's standard counter groups under NAME, a line per
# counter: "<group>.<name> <value>", an RMON bucket as "rmon.rx-pktsNtoM.<low>-<high>".
std() {
	local ns=()
	[ -n "${3:-}" ] && ns=(ip netns exec "$3")
	"${ns[@]}" ethtool --json -S "$2" --groups eth-mac eth-ctrl rmon >"/tmp/std.$1.json"
	python3 - "/tmp/std.$1.json" >"/tmp/std.$1" <<'EOF'
import json, sys

def walk(path, v):
    if isinstance(v, dict):
        if {"low", "high", "val"} <= set(v):
            print(f"{path}.{v['low']}-{v['high']} {v['val']}")
            return
        for k, x in v.items():
            if k != "ifname":
                walk(f"{path}.{k}" if path else k, x)
    elif isinstance(v, list):
        for x in v:
            walk(path, x)
    elif isinstance(v, int) and not isinstance(v, bool):
        print(f"{path} {v}")

walk("", json.load(open(sys.argv[1])))
EOF
}

# std_delta NAME0 NAME1 KEY: KEY in NAME1 minus KEY in NAME0 (a missing key fails).
std_delta() {
	local a b
	a=$(awk -v k="$3" '$1 == k { print $2 }' "/tmp/std.$1")
	b=$(awk -v k="$3" '$1 == k { print $2 }' "/tmp/std.$2")
	[ -n "$a" ] && [ -n "$b" ] || fail "no $3 in ethtool -S --groups: $(cat "/tmp/std.$2")"
	echo $((b - a))
}

setup_pair
quiet_pair

# ip -s -s link: the multicast pings A's stack received.
N=20
mc0=$(link_stat "$A" rx.multicast)
ip netns exec peer ping -q -c "$N" -i 0.02 -I "$B" 224.0.0.1 >/dev/null 2>&1 || true
mc_grew() { [ $(($(link_stat "$A" rx.multicast) - mc0)) -ge "$N" ]; }
wait_for "A's ip -s multicast count to grow by the $N pings" mc_grew
echo "  A: ip -s multicast grew by $(($(link_stat "$A" rx.multicast) - mc0)) with $N multicast pings"

if [ "$RSNIC_FAMILY" = mana ]; then
	std a "$A"
	[ ! -s /tmp/std.a ] || fail "MANA reported standard counters: $(cat /tmp/std.a)"
	echo "  MANA: eth-mac, eth-ctrl and rmon are empty, as upstream mana's"
	assert_eq "MANA: ip -s missed" 0 "$(link_stat "$A" rx.missed_errors)"
	teardown_pair
	exit 0
fi

std a0 "$A"
std b0 "$B" peer
echo "  $A before:"
sed 's/^/    /' /tmp/std.a0
# The buckets mlx5e reports (mlx5e_rmon_ranges).
assert_eq "RMON buckets" \
	"0-64 65-127 128-255 256-511 512-1023 1024-1518 1519-2047 2048-4095 4096-8191 8192-10239" \
	"$(sed -n 's/^rmon\.rx-pktsNtoM\.\([0-9-]*\) .*/\1/p' /tmp/std.a0 | tr '\n' ' ' | sed 's/ $//')"

# ICMP payload -> frame with the FCS: 18 -> 64, 100 -> 146, 1400 -> 1446 octets.
for s in 18 100 1400; do
	ip netns exec peer ping -q -c "$N" -i 0.02 -s "$s" 10.10.0.1 >/tmp/ping.out ||
		fail "ping -s $s: $(cat /tmp/ping.out)"
done
# Settled: the two MACs agree (nothing in flight), read twice the same.
balanced() {
	std a1 "$A"
	std b1 "$B" peer
	[ "$(std_delta a0 a1 eth-mac.FramesTransmittedOK)" = "$(std_delta b0 b1 eth-mac.FramesReceivedOK)" ] &&
		[ "$(std_delta b0 b1 eth-mac.FramesTransmittedOK)" = "$(std_delta a0 a1 eth-mac.FramesReceivedOK)" ]
}
wait_for "both MACs' frame counts to agree" balanced

for side in "A a0 a1 b0 b1" "B b0 b1 a0 a1"; do
	read -r name s0 s1 p0 p1 <<<"$side"
	for pair in "FramesTransmittedOK FramesReceivedOK" "OctetsTransmittedOK OctetsReceivedOK" \
		"MulticastFramesXmittedOK MulticastFramesReceivedOK" \
		"BroadcastFramesXmittedOK BroadcastFramesReceivedOK"; do
		read -r tx rx <<<"$pair"
		assert_eq "$name's $tx = its peer's $rx" "$(std_delta "$s0" "$s1" "eth-mac.$tx")" \
			"$(std_delta "$p0" "$p1" "eth-mac.$rx")"
	done
	assert_eq "$name's MACControlFramesTransmitted = its peer's MACControlFramesReceived" \
		"$(std_delta "$s0" "$s1" eth-ctrl.MACControlFramesTransmitted)" \
		"$(std_delta "$p0" "$p1" eth-ctrl.MACControlFramesReceived)"
	rx=$(std_delta "$s0" "$s1" eth-mac.FramesReceivedOK)
	[ "$rx" -ge $((3 * N)) ] || fail "$name received $rx frames, fewer than the $((3 * N)) pings"
	sum=0
	while read -r k _; do
		sum=$((sum + $(std_delta "$s0" "$s1" "$k")))
	done < <(grep '^rmon\.rx-pktsNtoM\.' "/tmp/std.$s1")
	assert_eq "$name: RMON buckets add up to FramesReceivedOK" "$rx" "$sum"
	assert_eq "$name: RMON 128..255" "$N" "$(std_delta "$s0" "$s1" rmon.rx-pktsNtoM.128-255)"
	assert_eq "$name: RMON 1024..1518" "$N" "$(std_delta "$s0" "$s1" rmon.rx-pktsNtoM.1024-1518)"
	b64=$(std_delta "$s0" "$s1" rmon.rx-pktsNtoM.0-64)
	[ "$b64" -ge "$N" ] || fail "$name: RMON 0..64 gained $b64, fewer than $N"
	for k in eth-mac.FrameCheckSequenceErrors eth-mac.FrameTooLongErrors \
		eth-mac.InRangeLengthErrors eth-mac.OutOfRangeLengthField \
		eth-ctrl.UnsupportedOpcodesReceived rmon.etherStatsUndersizePkts \
		rmon.etherStatsOversizePkts rmon.etherStatsFragments rmon.etherStatsJabbers; do
		assert_eq "$name: $k" 0 "$(awk -v k="$k" '$1 == k { print $2 }' "/tmp/std.$s1")"
	done
	echo "  $name: received $rx frames (64: $b64, 128..255: $N, 1024..1518: $N), sent" \
		"$(std_delta "$s0" "$s1" eth-mac.FramesTransmittedOK); its peer agrees"
done

# ip -s -s link: the device's counters as the last read found them (ethtool -S reads them).
counters "$A" >/tmp/es.a
std a2 "$A"
es() { awk -v k="$1:" '$1 == k { print $2 }' /tmp/es.a; }
sa() { awk -v k="$1" '$1 == k { print $2 }' /tmp/std.a2; }
assert_eq "A: ip -s missed = rx_out_of_buffer" "$(es rx_out_of_buffer)" \
	"$(link_stat "$A" rx.missed_errors)"
assert_eq "A: ip -s CRC errors = FrameCheckSequenceErrors" "$(sa eth-mac.FrameCheckSequenceErrors)" \
	"$(link_stat "$A" rx.crc_errors)"
assert_eq "A: ip -s length errors = PPCNT's length errors" \
	"$(($(sa eth-mac.InRangeLengthErrors) + $(sa eth-mac.OutOfRangeLengthField) + $(sa eth-mac.FrameTooLongErrors)))" \
	"$(link_stat "$A" rx.length_errors)"
echo "  A: ip -s missed $(link_stat "$A" rx.missed_errors), CRC errors" \
	"$(link_stat "$A" rx.crc_errors), length errors $(link_stat "$A" rx.length_errors): the device's"

teardown_pair
