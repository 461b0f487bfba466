#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: deterministic data-path figures of the mlx5 TX path against the simulated
# ConnectX (design.md section 5). Every configuration (path x packet size x burst) runs in its
# own process under callgrind, with instruction collection on only inside the driver's xmit
# and TX-completion calls (bench_driver_xmit / bench_driver_tx_poll in
# host/testbed/src/bin/datapath_bench.rs). Writes target/bench/datapath.csv and prints a
# table. MANA rows (family mana) follow: the RX path with RQ doorbells batched per NAPI poll
# (rx_db_batched) or rung per packet (rx_db_per_packet, pre-2023), at NAPI budgets 8/64/256,
# instructions counted inside the driver's RX poll (bench_mana_rx_poll). XDP rows (paths
# xdp_mpwqe, xdp_mpwqe_inline; 64-byte frames, bursts 1 and 32) come last: the SQ
# as the driver's XDP SQs use it (every frame posted with xmit_more, one Sq::flush per burst,
# no BQL), instructions counted inside bench_xdp_xmit / bench_xdp_flush / bench_xdp_tx_poll.
#
#   BENCH_PACKETS=N   packets measured per configuration (default 4096)
#   BENCH_JOBS=N      configurations run in parallel (default 2)
#   BENCH_VM=0        skip the VM figures (scripts/bench-vm.sh) at the end
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$PATH"

PACKETS=${BENCH_PACKETS:-4096}
JOBS=${BENCH_JOBS:-2}
PATHS=(regular mpwqe mpwqe_inline)
SIZES=(64 128 256 512 1500)
BURSTS=(1 32)

command -v valgrind >/dev/null ||
	{ echo "bench: valgrind is missing (make setup installs it)" >&2; exit 1; }
command -v callgrind_annotate >/dev/null ||
	{ echo "bench: callgrind_annotate is missing (package valgrind)" >&2; exit 1; }

TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
cargo build --release --quiet -p rsnic-testbed --bin datapath_bench
BIN=$TARGET/release/datapath_bench
OUT=$ROOT/target/bench
RUNS=$OUT/runs
rm -rf "$RUNS"
mkdir -p "$RUNS"

run_one() {
	local path=$1 size=$2 burst=$3 base="$RUNS/$1-$2-$3"
	valgrind --tool=callgrind --collect-atstart=no \
		--toggle-collect='*bench_driver_xmit*' --toggle-collect='*bench_driver_tx_poll*' \
		--callgrind-out-file="$base.callgrind" \
		"$BIN" --one "$path" "$size" "$burst" --packets "$PACKETS" >"$base.row" 2>"$base.log" ||
		{ echo "bench: $path $size $burst failed, see $base.log" >&2; return 1; }
}
export -f run_one
export BIN RUNS PACKETS

XDP_PATHS=(xdp_mpwqe xdp_mpwqe_inline)
XDP_SIZE=64
run_xdp() {
	local path=$1 size=$2 burst=$3 base="$RUNS/$1-$2-$3"
	valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*bench_xdp_xmit*' \
		--toggle-collect='*bench_xdp_flush*' --toggle-collect='*bench_xdp_tx_poll*' \
		--callgrind-out-file="$base.callgrind" \
		"$BIN" --xdp "$path" "$size" "$burst" --packets "$PACKETS" >"$base.row" 2>"$base.log" ||
		{ echo "bench: $path $size $burst failed, see $base.log" >&2; return 1; }
}
export -f run_xdp

MANA_PATHS=(rx_db_batched rx_db_per_packet)
MANA_BUDGETS=(8 64 256)
run_mana() {
	local path=$1 budget=$2 base="$RUNS/mana-$1-$2"
	valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*bench_mana_rx_poll*' \
		--callgrind-out-file="$base.callgrind" \
		"$BIN" --mana "$path" "$budget" --packets "$PACKETS" >"$base.row" 2>"$base.log" ||
		{ echo "bench: mana $path $budget failed, see $base.log" >&2; return 1; }
}
export -f run_mana

for size in "${SIZES[@]}"; do
	for burst in "${BURSTS[@]}"; do
		for path in "${PATHS[@]}"; do
			echo "$path $size $burst"
		done
	done
done | xargs -P "$JOBS" -L 1 bash -c 'run_one "$@"' _
for burst in "${BURSTS[@]}"; do
	for path in "${XDP_PATHS[@]}"; do
		echo "$path $XDP_SIZE $burst"
	done
done | xargs -P "$JOBS" -L 1 bash -c 'run_xdp "$@"' _
for path in "${MANA_PATHS[@]}"; do
	for budget in "${MANA_BUDGETS[@]}"; do
		echo "$path $budget"
	done
done | xargs -P "$JOBS" -L 1 bash -c 'run_mana "$@"' _

# Inclusive instructions of one function in a callgrind output file.
incl() {
	callgrind_annotate --inclusive=yes "$1" 2>/dev/null |
		awk -v f="$2" '!done && index($0, "::" f " [") { gsub(",", "", $1); print $1; done = 1 }'
}

CSV=$OUT/datapath.csv
echo "family,path,pkt_size,burst,desc_bytes_per_pkt,inbound_bytes_per_pkt,inbound_floor_per_pkt,outbound_bytes_per_pkt,doorbells_per_pkt,cqes_per_pkt,instr_per_pkt,napi_budget,rx_doorbells_per_pkt" >"$CSV"
printf '%-13s %5s %5s %9s %9s %9s %9s %8s %8s %9s %7s %7s %7s\n' \
	path size burst desc/pkt in/pkt floor out/pkt db/pkt cqe/pkt instr/pkt xmit compl inlined
for size in "${SIZES[@]}"; do
	for burst in "${BURSTS[@]}"; do
		for path in "${PATHS[@]}"; do
			base="$RUNS/$path-$size-$burst"
			row=$(sed -n 's/^ROW //p' "$base.row")
			inl=$(sed -n 's/^INLINED //p' "$base.row")
			total=$(awk '/^totals:/ { print $2 }' "$base.callgrind")
			[ -n "$row" ] && [ -n "$total" ] || { echo "bench: no figures in $base.*" >&2; exit 1; }
			x=$(incl "$base.callgrind" bench_driver_xmit)
			c=$(incl "$base.callgrind" bench_driver_tx_poll)
			instr=$(awk -v t="$total" -v n="$PACKETS" 'BEGIN { printf "%.1f", t / n }')
			rxdb=$(sed -n 's/^RXDB //p' "$base.row")
			echo "$row,$instr,$rxdb" >>"$CSV"
			IFS=, read -r _ p s b desc inb floor outb db cqe <<<"$row"
			awk -v p="$p" -v s="$s" -v b="$b" -v d="$desc" -v i="$inb" -v f="$floor" \
				-v o="$outb" -v db="$db" -v c="$cqe" -v t="$instr" -v x="${x:-0}" \
				-v y="${c:-0}" -v n="$PACKETS" -v l="$inl" 'BEGIN {
				printf "%-13s %5s %5s %9s %9s %9s %9s %8s %8s %9s %7.1f %7.1f %7s\n",
					p, s, b, d, i, f, o, db, c, t, x / n, y / n, l }'
		done
	done
done
echo
printf '%-17s %6s %9s %9s %9s %8s %8s %9s\n' \
	"mana path" budget desc/pkt in/pkt out/pkt db/pkt rxdb/pkt instr/pkt
for path in "${MANA_PATHS[@]}"; do
	for budget in "${MANA_BUDGETS[@]}"; do
		base="$RUNS/mana-$path-$budget"
		row=$(sed -n 's/^ROW //p' "$base.row")
		rxdb=$(sed -n 's/^RXDB //p' "$base.row")
		total=$(awk '/^totals:/ { print $2 }' "$base.callgrind")
		[ -n "$row" ] && [ -n "$rxdb" ] && [ -n "$total" ] ||
			{ echo "bench: no figures in $base.*" >&2; exit 1; }
		instr=$(awk -v t="$total" -v n="$PACKETS" 'BEGIN { printf "%.1f", t / n }')
		echo "$row,$instr,$rxdb" >>"$CSV"
		IFS=, read -r _ p _ _ desc inb _ outb db _ <<<"$row"
		printf '%-17s %6s %9s %9s %9s %8s %8s %9s\n' \
			"$p" "$budget" "$desc" "$inb" "$outb" "$db" "${rxdb#*,}" "$instr"
	done
done
echo
printf '%-17s %5s %5s %9s %9s %9s %9s %8s %8s %9s %7s %7s %7s %7s %5s\n' \
	"xdp path" size burst desc/pkt in/pkt floor out/pkt db/pkt cqe/pkt instr/pkt xmit flush \
	compl inlined full
for burst in "${BURSTS[@]}"; do
	for path in "${XDP_PATHS[@]}"; do
		base="$RUNS/$path-$XDP_SIZE-$burst"
		row=$(sed -n 's/^ROW //p' "$base.row")
		inl=$(sed -n 's/^INLINED //p' "$base.row")
		full=$(sed -n 's/^FULL //p' "$base.row")
		rxdb=$(sed -n 's/^RXDB //p' "$base.row")
		total=$(awk '/^totals:/ { print $2 }' "$base.callgrind")
		[ -n "$row" ] && [ -n "$rxdb" ] && [ -n "$total" ] ||
			{ echo "bench: no figures in $base.*" >&2; exit 1; }
		x=$(incl "$base.callgrind" bench_xdp_xmit)
		f=$(incl "$base.callgrind" bench_xdp_flush)
		c=$(incl "$base.callgrind" bench_xdp_tx_poll)
		instr=$(awk -v t="$total" -v n="$PACKETS" 'BEGIN { printf "%.1f", t / n }')
		echo "$row,$instr,$rxdb" >>"$CSV"
		IFS=, read -r _ p s b desc inb floor outb db cqe <<<"$row"
		awk -v p="$p" -v s="$s" -v b="$b" -v d="$desc" -v i="$inb" -v fl="$floor" \
			-v o="$outb" -v db="$db" -v c="$cqe" -v t="$instr" -v x="${x:-0}" -v f="${f:-0}" \
			-v y="${c:-0}" -v n="$PACKETS" -v l="$inl" -v full="$full" 'BEGIN {
			printf "%-17s %5s %5s %9s %9s %9s %9s %8s %8s %9s %7.1f %7.1f %7.1f %7s %5s\n",
				p, s, b, d, i, fl, o, db, c, t, x / n, f / n, y / n, l, full }'
	done
done
echo "(xdp: every frame posted with xmit_more, one flush per burst, no BQL; full: times the"
echo " ring was full before a frame, where the bench flushed and reaped instead of dropping)"
echo
echo "packets per configuration: $PACKETS (after 512 warm-up packets); figures are per packet"
echo "written: ${CSV#"$ROOT"/}"

# ---------------------------------------------------------------------------------------------
# VM figures (scripts/bench-vm.sh): pktgen packet rates in the test VM, tx_mpwqe on vs off and
# rsnic vs a veth pair, medians of interleaved rounds, appended to target/bench/vm.csv.
# BENCH_VM=0 skips them.
if [ "${BENCH_VM:-1}" != 0 ]; then
	echo
	"$ROOT/scripts/bench-vm.sh"
fi
