#!/usr/bin/env bash
# pktgen, 64-byte UDP frames (60 bytes without FCS) in bursts of 32 (xmit_more on all but the
# last of each burst), on TX queue 0 of port A towards port B; first with tx_mpwqe on, then
# off. Asserts per mode: every packet pktgen sent reached B's driver; with MPWQE on, every
# packet went in an MPWQE session (tx_mpwqe_pkts), with it off none did; at most one SQ
# doorbell per 16 packets.
#
# With 802.3x flow control on (the default since 05d2057), the peer's device stalls A's SQ
# instead of dropping when B's RQ runs low, so every packet must arrive.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"

COUNT=${PKTGEN_COUNT:-20000}
setup_pair
quiet_pair
sleep 0.5

pktgen_modes "$COUNT"
pktgen_table

errs=0
check() { # WHAT EXPECTED ACTUAL
	if [ "$2" = "$3" ]; then echo "  ok: $1 = $3"; else echo "  FAIL: $1: expected $2, got $3"; errs=$((errs + 1)); fi
}
for mode in on off; do
	# A TX queue stop in the middle of a burst ends it early; pktgen then sends a whole
	# burst more, so it may send a few more than COUNT.
	[ "${R[$mode.sent]}" -ge "$COUNT" ] && [ "${R[$mode.sent]}" -lt $((COUNT + 32)) ] ||
		{ echo "  FAIL: [$mode] pktgen sent ${R[$mode.sent]} of $COUNT"; errs=$((errs + 1)); }
	check "[$mode] A tx_packets = pktgen sent" "${R[$mode.sent]}" "${R[$mode.tx_packets]}"
	check "[$mode] B rx_packets = pktgen sent" "${R[$mode.sent]}" "${R[$mode.B.rx_packets]}"
	check "[$mode] B dev_rx_out_of_buffer" 0 "${R[$mode.B.dev_rx_out_of_buffer]}"
	if [ "$mode" = on ]; then
		check "[on] tx_mpwqe_pkts = pktgen sent" "${R[on.sent]}" "${R[on.tx_mpwqe_pkts]}"
	else
		check "[off] tx_mpwqe_pkts" 0 "${R[off.tx_mpwqe_pkts]}"
	fi
	for d in dev_sq_doorbells tx_doorbells; do
		if [ $((R[$mode.$d] * 16)) -le "${R[$mode.sent]}" ]; then
			echo "  ok: [$mode] $d ${R[$mode.$d]} <= sent/16"
		else
			echo "  FAIL: [$mode] $d ${R[$mode.$d]} > ${R[$mode.sent]}/16"
			errs=$((errs + 1))
		fi
	done
done
[ "$errs" = 0 ] || fail "$errs pktgen checks failed"
teardown_pair
