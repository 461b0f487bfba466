#!/usr/bin/env bash
# Every offload rsnic advertises as changeable in `ethtool -k` is honoured: switched on, the
# device does the work (its own counters, debugfs dev_*, say so); switched off, the same
# traffic arrives byte-exact and the device's counter of that work stays exactly 0
# (rsnic.rst, "Features (offloads)"). On port A, for TCP transfers A -> B over IPv4 and
# IPv6 (transfer_check: sha256 of what arrived):
#   - all on (the default): the device computed checksums (dev_tx_csum_offload), gathered
#     packets from several buffers (dev_tx_gather_pkts), and cut LSO/TSO WQEs
#     (dev_lso_wqes) into more packets than it was given WQEs (dev_lso_segs) - over IPv4
#     (tx-checksum-ipv4, tx-tcp-segmentation) and IPv6 (tx-checksum-ipv6,
#     tx-tcp6-segmentation);
#   - tx off (tx-checksumming): no checksum and no LSO by the device (the core drops TSO
#     without checksum offload; scatter-gather and GSO stay on);
#   - tso off: no LSO WQE; the stack's GSO segments still leave with checksum offload and
#     page fragments;
#   - sg off: no packet from more than one buffer (the core linearizes), no LSO (TSO and
#     GSO need scatter-gather);
#   - back on: the core restores what was wanted, and the device does the work again.
# Loopback (NETIF_F_LOOPBACK, off by default): with it on, what A sends comes back to A's
# own receive side (dev_loopback_packets, A's driver receives it) and B's device receives
# nothing; off, nothing is looped. (tests/vm/15-bringup.sh checks the carrier it brings on
# ConnectX and a refused PPLR write; 94-xskxceiver.sh runs AF_XDP's suite over it.)
# rx-checksumming is tests/vm/66-rx-csum.sh: rx on, the received segments go up
# CHECKSUM_UNNECESSARY; off, every one CHECKSUM_NONE.
# Finally, `ethtool -k` must show no changeable feature beyond those and the ones the core
# owns (GSO, GRO and friends): a new advertisement fails here until it has a test.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
trap traffic_cleanup EXIT

setup_pair

# feat NAME: A's feature NAME as `ethtool -k` shows it, "on" or "off" (a feature of a
# group is on a tab-indented line; "[fixed]" or "[requested ...]" after it is dropped).
feat() {
	ethtool -k "$A" | sed -n "s/^[[:space:]]*$1: \([a-z]*\).*/\1/p"
}

# expect_feats WHEN NAME=VALUE...: A's features are as listed.
expect_feats() {
	local when=$1 nv
	shift
	for nv in "$@"; do
		assert_eq "$when: ${nv%%=*}" "${nv#*=}" "$(feat "${nv%%=*}")"
	done
}

# set_feats ARGS...: ethtool -K A ARGS (ethtool prints what the core changed on its own).
set_feats() {
	echo "  ethtool -K $A $*"
	ethtool -K "$A" "$@" || fail "ethtool -K $A $*"
}

# xfer LABEL ADDR MB: a byte-exact transfer A -> B (ADDR: B's address), A's counters
# around it; sets X_CSUM, X_GATHER, X_LSO, X_SEGS (the device's work) and X_TX (the
# packets A's device sent).
xfer() {
	snap f0 "$A"
	transfer_check "" peer "$2" "$3"
	snap f1 "$A"
	X_CSUM=$(delta f0 f1 dev_tx_csum_offload)
	X_GATHER=$(delta f0 f1 dev_tx_gather_pkts)
	X_LSO=$(delta f0 f1 dev_lso_wqes)
	X_SEGS=$(delta f0 f1 dev_lso_segs)
	X_TX=$(delta f0 f1 dev_tx_packets)
	echo "  $1: A's device sent $X_TX packets: $X_CSUM with device checksums," \
		"$X_GATHER gathered from several buffers, $X_LSO LSO WQEs cut into $X_SEGS"
}

# all_on LABEL ADDR MB: a transfer with every offload on: the device did all the work.
all_on() {
	xfer "$@"
	[ "$X_CSUM" -gt 0 ] || fail "$1: no checksum computed by the device"
	[ "$X_GATHER" -gt 0 ] || fail "$1: no packet gathered from several buffers"
	[ "$X_LSO" -gt 0 ] || fail "$1: no LSO WQE"
	[ "$X_SEGS" -gt "$X_LSO" ] || fail "$1: $X_LSO LSO WQEs gave only $X_SEGS packets"
}

on=(tx-checksum-ipv4=on tx-checksum-ipv6=on tx-scatter-gather=on tx-tcp-segmentation=on
	tx-tcp6-segmentation=on generic-segmentation-offload=on)
expect_feats default "${on[@]}" loopback=off rx-checksumming=on \
	tx-tcp-mangleid-segmentation=off

all_on "all on, IPv4" 10.10.0.2 2
all_on "all on, IPv6" fd00::2 1

# feature_off FEATURE CHECK NAME=VALUE...: ethtool -K A FEATURE off, after which A's features
# are as listed (expect_feats "FEATURE off"); then a transfer over IPv4 and one over IPv6
# (xfer "FEATURE off, IPv4", ...), each followed by CHECK with that label.
feature_off() {
	local f=$1 check=$2 t ip addr mb
	shift 2
	set_feats "$f" off
	expect_feats "$f off" "$@"
	for t in "IPv4 10.10.0.2 2" "IPv6 fd00::2 1"; do
		read -r ip addr mb <<<"$t"
		xfer "$f off, $ip" "$addr" "$mb"
		"$check" "$f off, $ip"
	done
}

# tx-checksumming off: the core drops TSO/TSO6 (they need checksum offload); SG stays.
tx_off_checks() { # LABEL
	assert_eq "$1: packets with device checksums" 0 "$X_CSUM"
	assert_eq "$1: LSO WQEs" 0 "$X_LSO"
	assert_eq "$1: LSO segments" 0 "$X_SEGS"
}
feature_off tx tx_off_checks tx-checksum-ipv4=off tx-checksum-ipv6=off tx-tcp-segmentation=off \
	tx-tcp6-segmentation=off tx-scatter-gather=on generic-segmentation-offload=on
set_feats tx on
expect_feats "tx on" "${on[@]}"

# tcp-segmentation-offload off: software GSO instead, whose segments keep their page
# fragments and checksum requests.
tso_off_checks() { # LABEL
	assert_eq "$1: LSO WQEs" 0 "$X_LSO"
	assert_eq "$1: LSO segments" 0 "$X_SEGS"
	[ "$X_CSUM" -gt 0 ] || fail "$1: no checksum computed by the device"
	[ "$X_GATHER" -gt 0 ] || fail "$1: no GSO segment gathered from several buffers"
}
feature_off tso tso_off_checks tx-tcp-segmentation=off tx-tcp6-segmentation=off \
	tx-checksum-ipv4=on tx-checksum-ipv6=on tx-scatter-gather=on generic-segmentation-offload=on
set_feats tso on
# "tso" names every tx-tcp*-segmentation feature, so the IPv4 ID mangling the core offers
# comes on too: the transfers from here on run with it.
expect_feats "tso on" "${on[@]}" tx-tcp-mangleid-segmentation=on

# scatter-gather off: the core drops TSO and GSO (they need SG) and linearizes every skb.
sg_off_checks() { # LABEL
	assert_eq "$1: packets gathered from several buffers" 0 "$X_GATHER"
	assert_eq "$1: LSO WQEs" 0 "$X_LSO"
	[ "$X_CSUM" -gt 0 ] || fail "$1: no checksum computed by the device"
}
feature_off sg sg_off_checks tx-scatter-gather=off tx-tcp-segmentation=off tx-tcp6-segmentation=off \
	generic-segmentation-offload=off tx-checksum-ipv4=on tx-checksum-ipv6=on
# Back on: TSO and GSO were still wanted, so the core turns them on again.
set_feats sg on
expect_feats "sg on" "${on[@]}"
all_on "all on again, IPv4" 10.10.0.2 2

# Loopback: A's frames (pings to B: no answer comes) return to A; B's device sees none.
# They come back addressed to B, which a port that filters as mlx5e does (ConnectX) keeps
# away unless it is promiscuous, as a real NIC would.
ip link set "$A" promisc on
set_feats loopback on
expect_feats "loopback on" loopback=on
wait_for "carrier on $A with loopback on" eval '[ "$(carrier "$A")" = 1 ]'
snap l0 "$A"
snap lb0 "$B" peer
ping -c 8 -i 0.2 -W 1 10.10.0.2 >/dev/null 2>&1 || true
snap l1 "$A"
snap lb1 "$B" peer
lp=$(delta l0 l1 dev_loopback_packets)
echo "  loopback on: A's device sent $(delta l0 l1 dev_tx_packets) packets, looped $lp;" \
	"A's driver received $(delta l0 l1 rx_packets)"
[ "$lp" -ge 5 ] || fail "loopback on: the device looped only $lp packets"
assert_eq "loopback on: every packet A's device sent was looped" "$lp" "$(delta l0 l1 dev_tx_packets)"
[ "$(delta l0 l1 rx_packets)" -ge 5 ] || fail "loopback on: A's driver did not get its frames back"
assert_eq "loopback on: packets B's device received" 0 "$(delta lb0 lb1 dev_rx_packets)"
set_feats loopback off
ip link set "$A" promisc off
expect_feats "loopback off" loopback=off
wait_for "carrier on $A with loopback off" eval '[ "$(carrier "$A")" = 1 ]'
snap l0 "$A"
transfer_check "" peer 10.10.0.2 1
snap l1 "$A"
assert_eq "loopback off: packets looped" 0 "$(delta l0 l1 dev_loopback_packets)"

# What `ethtool -k` shows as changeable: neither "[fixed]" nor a group line (a legacy group
# such as tx-checksumming, followed by its features on tab-indented lines, carries no
# marker of its own).
changeable() {
	ethtool -k "$A" | awk '
		NR > 1 { line[NR] = $0 }
		END {
			for (i = 2; i <= NR; i++) {
				l = line[i]
				if (l !~ /^\t/ && (i + 1) in line && line[i + 1] ~ /^\t/) continue
				if (l ~ /\[fixed\]/) continue
				sub(/^\t/, "", l)
				sub(/:.*/, "", l)
				print l
			}
		}'
}
# Tested above.
tested="tx-checksum-ipv4 tx-checksum-ipv6 tx-scatter-gather tx-tcp-segmentation
	tx-tcp6-segmentation loopback"
# Tested elsewhere: rx-checksumming by 66-rx-csum.sh; ntuple-filters (ConnectX's flow
# steering) by its own test; receive-hashing by 18-rxhash.sh; rx-vlan-offload and
# tx-vlan-offload (changeable on ConnectX, fixed on MANA) by 78-vlan.sh; rx-vlan-filter
# (ConnectX only, as mlx5e) by 78-vlan.sh too.
elsewhere="rx-checksumming ntuple-filters receive-hashing rx-vlan-offload tx-vlan-offload"
[ "$RSNIC_FAMILY" = mlx5 ] && elsewhere="$elsewhere rx-vlan-filter"
# The core's, on every device (register_netdevice): software GSO and GRO, GRO of frag
# lists and of forwarded UDP, the non-temporal copy from user space, and the permission to
# let TSO rewrite IPv4 IDs (tx-tcp-mangleid-segmentation: the device numbers the segments'
# IDs on from the first one's either way).
core="generic-segmentation-offload generic-receive-offload rx-gro-list rx-udp-gro-forwarding
	tx-nocache-copy tx-tcp-mangleid-segmentation"
# shellcheck disable=SC2086 # the lists are words
allowed=$(printf ' %s' $tested $elsewhere $core)
seen=
for f in $(changeable); do
	case "$allowed " in
	*" $f "*) seen="$seen $f" ;;
	*) fail "ethtool -k shows $f as changeable on $A: a feature without a test (77-features.sh)" ;;
	esac
done
echo "  changeable features of $A:$seen"
for f in $tested; do
	case " $seen " in *" $f "*) ;; *) fail "$f is not changeable on $A" ;; esac
done
