#!/usr/bin/env bash
# The RSS hash of received packets (NETIF_F_RXHASH), on port B with one
# channel: pktgen sends COUNT UDP packets from A in eight flows (source ports 1000-1007,
# one packet of each in turn), and a socket filter on a packet socket of B records the
# skb->hash each packet reached the stack with, per flow (rsnic-xdp rxhash, sk_rxhash.o):
#   - receive-hashing is advertised and changeable (ethtool -k);
#   - rxhash on: every packet carries its flow's hash, the same for all packets of a flow
#     (mismatch 0), eight flows, eight hashes;
#   - ConnectX with rx_cqe_compress on: the device writes sessions mixing the flows, and
#     each session's first packet, the title's, keeps its hash (mlx5e_decompress_cqes_start)
#     while the others carry none (mlx5e_decompress_cqe_no_hash: the CSUM mini CQE has no
#     hash): hashed packets = received - compressed CQEs + sessions, exactly (the device's
#     counts), and every hash equals the one the flow had without compression;
#   - rxhash off: no packet carries a hash, with or without compression.
# (Before: receive-hashing was not offered, and decompressed packets had no hash at all.)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$(dirname "$0")/xdp.sh"

COUNT=${RXHASH_COUNT:-$([ "$debug" = 1 ] && echo 1000 || echo 4000)}
FLOWS=8
xdp_tools_or_fail
[ -e "$XDP_DIR/sk_rxhash.o" ] || fail "XDP tools not built: no $XDP_DIR/sk_rxhash.o (make xdp-tools)"

setup_pair
quiet_pair
mark_dmesg
nsx peer ethtool -L "$B" combined 1
wait_for "carrier on $A" eval '[ "$(carrier "$A")" = 1 ]'

PG_EXTRA=("udp_src_min 1000" "udp_src_max $((1000 + FLOWS))")
declare -A H
# run WHAT: pktgen A -> B with the hash recorder on B; sets HASHED, NOHASH, MISMATCH, NFLOWS,
# RX (B's rx_packets), the deltas b0 -> b1, and HF[sport] (each flow's hash).
declare -A HF
run() {
	local what=$1 line k v
	rm -f /tmp/rxhash.ready
	# Not through nsx (a function: a subshell whose pid $! would be, and which ignores
	# SIGINT): ip netns exec execs the tool, so $! is the tool's.
	ip netns exec peer "$XDPCTL" rxhash "$B" --seconds 300 --ready-file /tmp/rxhash.ready \
		>/tmp/rxhash.out 2>&1 &
	local pid=$!
	wait_for "the hash recorder on $B" test -e /tmp/rxhash.ready
	snap s0a "$A"
	snap s0b "$B" peer
	cp /tmp/snap.s0b /tmp/snap.b0
	pktgen_run "$A" "$COUNT" 10.10.0.2 "$MAC_B" 32 60
	wait_for "[$what] A's and B's counters to settle" settled
	cp /tmp/snap.s1b /tmp/snap.b1
	kill -INT "$pid"
	wait "$pid" || fail "[$what] rsnic-xdp rxhash: $(cat /tmp/rxhash.out)"
	line=$(grep '^rxhash:' /tmp/rxhash.out) || fail "[$what] no result: $(cat /tmp/rxhash.out)"
	HASHED=$(kv hashed "$line") NOHASH=$(kv nohash "$line") MISMATCH=$(kv mismatch "$line")
	NFLOWS=$(kv flows "$line")
	RX=$(delta b0 b1 rx_packets)
	HF=()
	while read -r k v rest; do
		[ "$(kv hashed "$rest")" = 0 ] && continue
		HF[${k#sport=}]=${v#hash=}
	done < <(grep '^sport=' /tmp/rxhash.out)
	echo "  [$what] $RX packets: $HASHED with a hash, $NOHASH without, $MISMATCH another;" \
		"$NFLOWS flows, ${#HF[@]} hashes ($(printf '%s ' "${HF[@]}"))"
	assert_eq "[$what] packets B's stack got = packets recorded" "$RX" $((HASHED + NOHASH))
	assert_eq "[$what] flows" "$FLOWS" "$NFLOWS"
	assert_eq "[$what] packets with another hash than their flow's" 0 "$MISMATCH"
}

run "rxhash on"
assert_eq "[rxhash on] packets with a hash" "$RX" "$HASHED"
assert_eq "[rxhash on] flows with a hash" "$FLOWS" "${#HF[@]}"
declare -A H0
for k in "${!HF[@]}"; do H0[$k]=${HF[$k]}; done

if [ "$RSNIC_FAMILY" = mlx5 ]; then
	nsx peer ethtool --set-priv-flags "$B" rx_cqe_compress on
	wait_for "carrier on $A" eval '[ "$(carrier "$A")" = 1 ]'
	run "rxhash on, CQE compression"
	cqes=$(delta b0 b1 dev_compressed_cqes)
	sess=$(delta b0 b1 dev_compress_sessions)
	echo "  [rxhash on, CQE compression] $cqes CQEs compressed in $sess sessions"
	[ "$sess" -gt 0 ] || fail "[CQE compression] no compressed session"
	assert_eq "[CQE compression] packets with a hash = received - compressed + sessions" \
		$((RX - cqes + sess)) "$HASHED"
	for k in "${!HF[@]}"; do
		assert_eq "[CQE compression] hash of flow $k = without compression" "${H0[$k]:-none}" "${HF[$k]}"
	done
fi

feat=$(nsx peer ethtool -k "$B" | sed -n 's/^receive-hashing: //p')
echo "  $B receive-hashing: $feat"
assert_eq "$B receive-hashing" on "$feat"
nsx peer ethtool -K "$B" rxhash off
assert_eq "$B receive-hashing after -K rxhash off" off \
	"$(nsx peer ethtool -k "$B" | sed -n 's/^receive-hashing: //p')"
run "rxhash off"
assert_eq "[rxhash off] packets with a hash" 0 "$HASHED"
if [ "$RSNIC_FAMILY" = mlx5 ]; then
	nsx peer ethtool --set-priv-flags "$B" rx_cqe_compress off
	run "rxhash off, no CQE compression"
	assert_eq "[rxhash off, no compression] packets with a hash" 0 "$HASHED"
fi
nsx peer ethtool -K "$B" rxhash on
run "rxhash on again"
assert_eq "[rxhash on again] packets with a hash" "$RX" "$HASHED"
for k in "${!HF[@]}"; do
	assert_eq "[rxhash on again] hash of flow $k" "${H0[$k]:-none}" "${HF[$k]}"
done
no_kernel_reports
teardown_pair
