#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: deterministic data-path figures of the mlx5 TX path against the simulated
# ConnectX (rsnic-datapath.rst). Every configuration (path x packet size x burst) runs in its
# own process under callgrind, with instruction collection on only inside the driver's xmit
# and TX-completion calls (bench_driver_xmit / bench_driver_tx_poll in
# host/testbed/src/bin/datapath_bench.rs). Writes target/bench/datapath.csv and prints a
# table. MANA rows (family mana) follow: the RX path with RQ doorbells batched per NAPI poll
# (rx_db_batched) or rung per packet (rx_db_per_packet, pre-2023), at NAPI budgets 8/64/256,
# instructions counted inside the driver's RX poll (bench_mana_rx_poll). XDP rows (paths
# xdp_mpwqe, xdp_mpwqe_inline; 64-byte frames, bursts 1 and 32) come next: the SQ
# as the driver's XDP SQs use it (every frame posted with xmit_more, one Sq::flush per burst,
# no BQL), instructions counted inside bench_xdp_xmit / bench_xdp_flush / bench_xdp_tx_poll.
# MANA TX rows (family mana, path tx; 64-byte frames, bursts 1 and 32) come last: the mlx5
# rows' schedule on the MANA pair, instructions counted inside bench_mana_xmit and
# bench_mana_tx_poll.
#
# The binary is built with the cargo profile bench-kernel (Cargo.toml): the kernel's Rust
# codegen (opt-level 2, one codegen unit, panic=abort, no debug assertions, overflow checks on
# as with CONFIG_RUST_OVERFLOW_CHECKS=y) plus LTO, which gives the host build what the
# kernel's single crate has (hwif/ and the code calling it in one compilation unit). Every row's
# instructions are split into the driver's own and the host glue's: callgrind records the
# count of every instruction (--dump-instr=yes), addr2line gives each one's inline chain,
# and the innermost frame in rsnic's hwif/ (driver), sim/ (device model) or host/testbed/
# (glue) decides; a call into code of neither (memcpy, an out-of-line std function) counts
# for the side that made it (attribute.py below; rsnic-datapath.rst, "How the bench counts
# instructions").
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
command -v addr2line >/dev/null ||
	{ echo "bench: addr2line is missing (package binutils)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "bench: python3 is missing" >&2; exit 1; }

TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
cargo build --profile bench-kernel --quiet -p rsnic-testbed --bin datapath_bench
BIN=$TARGET/bench-kernel/datapath_bench
OUT=$ROOT/target/bench
RUNS=$OUT/runs
rm -rf "$RUNS"
mkdir -p "$RUNS"

# attribute.py CALLGRIND BINARY PACKETS ENTRIES: splits the instructions callgrind counted
# into the driver's, the host glue's and the device model's. Prints "ATTR driver,glue,model"
# per packet, then every function (innermost frame of rsnic's or the test bed's code) by its
# cost: "FN side per-packet name" (a call into code of neither side: "caller -> callee").
ATTR_PY=$RUNS/attribute.py
cat >"$ATTR_PY" <<'ATTRIBUTE_PY'
import collections
import re
import subprocess
import sys

cg_path, binary, packets = sys.argv[1], sys.argv[2], int(sys.argv[3])
# The bench's out-of-line wrappers, inside which collection is on, stand for the driver's
# entry points (ndo_start_xmit, the NAPI poll): their own instructions (prologue, the call,
# return) are the driver's. Closures in them (the stack's release callback) are glue.
entry_re = re.compile(r"(^|::)(%s)$" % "|".join(map(re.escape, sys.argv[4].split(","))))

# The output of --dump-instr=yes --dump-line=no --compress-strings=no --compress-pos=no:
# ob= and fn= set the function, a cost line is "ADDRESS COST"; a call edge is cob= (if the
# callee is in another object), cfn=, "calls=N TARGET" and one cost line "CALL-SITE
# INCLUSIVE-COST".
self_cost = collections.Counter()
edges = []
fn_ob = {}
total = None
ob = cob = cfn = call = None
with open(cg_path) as f:
    for line in f:
        if line[:2] == "0x":
            a, _, v = line.partition(" ")
            cost = int(v) if v.strip() else 0
            if call:
                edges.append((ob, int(a, 16), call[0], call[1], call[2], cost))
                call = None
            else:
                self_cost[(ob, int(a, 16))] += cost
        elif line.startswith("ob="):
            ob = line[3:].strip()
        elif line.startswith("fn="):
            fn_ob.setdefault(line[3:].strip(), ob)
            cob = None
        elif line.startswith("cob="):
            cob = line[4:].strip()
        elif line.startswith("cfn="):
            cfn = line[4:].strip()
        elif line.startswith("calls="):
            call = (cob, cfn, int(line[6:].split()[1], 16))
            cob = None
        elif line.startswith("totals:"):
            total = int(line.split()[1])

# The inline chain (innermost frame first) of every address of the binary that counts.
addrs = {a for (o, a), v in self_cost.items() if o == binary and v}
for o, a, co, cn, t, v in edges:
    if o == binary:
        addrs.update((a, t))
addrs = sorted(addrs)
out = subprocess.run(
    ["addr2line", "-a", "-f", "-i", "-C", "-e", binary],
    input="".join("%#x\n" % a for a in addrs),
    capture_output=True,
    text=True,
    check=True,
).stdout.splitlines()
chains = {}
i = 0
while i < len(out):
    if re.fullmatch(r"0x[0-9a-f]+", out[i]):
        cur = chains.setdefault(int(out[i], 16), [])
        i += 1
    else:
        cur.append((out[i], out[i + 1].rsplit(":", 1)[0]))
        i += 2


def testbed(func):
    return "driver" if entry_re.search(func) else "glue"


def classify(a):
    """(side, function) of the innermost frame in rsnic's hwif/ or sim/ or in host/testbed/;
    (None, None) for code of neither (std, core, libc)."""
    chain = chains.get(a, [])
    for func, path in chain:
        if "/rsnic/hwif/" in path:
            return "driver", func
        if "/rsnic/sim/" in path:
            return "model", func
        if "/host/testbed/" in path:
            return testbed(func), func
    # The line table points into std or core and the compiler kept no inline scope for the
    # instruction (merged code): the function names of the chain still say whose it is.
    for func, path in chain:
        root = func.lstrip("<")
        if root.startswith("rsnic_core::hwif::"):
            return "driver", func
        if root.startswith("rsnic_core::sim::"):
            return "model", func
        if root.startswith(("rsnic_testbed::", "datapath_bench::")):
            return testbed(func), func
    return None, None


cls = {a: classify(a) for a in addrs}
sums = collections.Counter()
byfn = collections.Counter()
for (o, a), v in self_cost.items():
    if o == binary and v and cls[a][0]:
        sums[cls[a][0]] += v
        byfn[cls[a]] += v
for o, a, co, cn, t, v in edges:
    if o != binary or not v or not cls[a][0]:
        continue
    if (co or fn_ob.get(cn, o)) == binary and cls[t][0]:
        continue
    # A call into code of neither side (memcpy, an out-of-line std function): its
    # inclusive cost is the caller's.
    sums[cls[a][0]] += v
    byfn[(cls[a][0], "%s -> %s" % (cls[a][1], cn))] += v
# Every counted instruction exactly once (fails if code of neither side called back into
# classified code, or some was reached from nowhere).
if sum(sums.values()) != total:
    sys.exit(
        "attribute.py: %d instructions attributed, callgrind counted %d"
        % (sum(sums.values()), total)
    )
n = packets
print("ATTR %.1f,%.1f,%.1f" % (sums["driver"] / n, sums["glue"] / n, sums["model"] / n))
for (k, func), v in byfn.most_common():
    print("FN %-6s %7.1f %s" % (k, v / n, func))
ATTRIBUTE_PY

# callgrind with the instruction-level output attribute.py reads.
cg() {
	valgrind --tool=callgrind --collect-atstart=no --dump-instr=yes --dump-line=no \
		--compress-strings=no --compress-pos=no "$@"
}
# attribute BASE ENTRIES: BASE.attr from BASE.callgrind.
attribute() {
	python3 "$ATTR_PY" "$1.callgrind" "$BIN" "$PACKETS" "$2" >"$1.attr" 2>>"$1.log" ||
		{ echo "bench: attribution of $1.callgrind failed, see $1.log" >&2; return 1; }
}
export -f cg attribute

# run_cg BASE WHAT ENTRIES ARGS...: datapath_bench ARGS --packets PACKETS under callgrind
# into BASE.callgrind (its figures in BASE.row), collection on only inside the bench's entry
# points ENTRIES (comma-separated), then BASE.attr (attribute); WHAT names the run when it
# fails.
run_cg() {
	local base=$1 what=$2 entries=$3 e es toggles=()
	shift 3
	IFS=, read -ra es <<<"$entries"
	for e in "${es[@]}"; do toggles+=("--toggle-collect=*$e*"); done
	cg "${toggles[@]}" --callgrind-out-file="$base.callgrind" \
		"$BIN" "$@" --packets "$PACKETS" >"$base.row" 2>"$base.log" ||
		{ echo "bench: $what failed, see $base.log" >&2; return 1; }
	attribute "$base" "$entries"
}
export -f run_cg

run_one() {
	run_cg "$RUNS/$1-$2-$3" "$1 $2 $3" bench_driver_xmit,bench_driver_tx_poll --one "$@"
}
export -f run_one
export BIN RUNS PACKETS ATTR_PY

XDP_PATHS=(xdp_mpwqe xdp_mpwqe_inline)
XDP_SIZE=64
run_xdp() {
	run_cg "$RUNS/$1-$2-$3" "$1 $2 $3" bench_xdp_xmit,bench_xdp_flush,bench_xdp_tx_poll --xdp "$@"
}
export -f run_xdp

MANA_PATHS=(rx_db_batched rx_db_per_packet)
MANA_BUDGETS=(8 64 256)
run_mana() {
	run_cg "$RUNS/mana-$1-$2" "mana $1 $2" bench_mana_rx_poll --mana "$@"
}
export -f run_mana

MANA_TX_SIZE=64
run_mana_tx() {
	run_cg "$RUNS/mana-tx-$1-$2" "mana tx $1 $2" bench_mana_xmit,bench_mana_tx_poll --mana-tx "$@"
}
export -f run_mana_tx

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
for burst in "${BURSTS[@]}"; do
	echo "$MANA_TX_SIZE $burst"
done | xargs -P "$JOBS" -L 1 bash -c 'run_mana_tx "$@"' _

# Inclusive instructions of one function in a callgrind output file.
incl() {
	callgrind_annotate --inclusive=yes "$1" 2>/dev/null |
		awk -v f="$2" '!done && index($0, "::" f " [") { gsub(",", "", $1); print $1; done = 1 }'
}

# sides BASE: "driver,glue" instructions per packet from BASE.attr. The device model's go
# with the glue; the latched register writes keep the model out of the counted calls, so
# there are none (a warning otherwise).
sides() {
	local a d g m
	a=$(sed -n 's/^ATTR //p' "$1.attr")
	[ -n "$a" ] || { echo "bench: no attribution in $1.attr" >&2; exit 1; }
	IFS=, read -r d g m <<<"$a"
	[ "$m" = 0.0 ] || echo "bench: $m device-model instructions per packet in ${1##*/}" >&2
	awk -v d="$d" -v g="$g" -v m="$m" 'BEGIN { printf "%.1f,%.1f\n", d, g + m }'
}

# collect BASE: the figures of run BASE (BASE.row, BASE.callgrind, BASE.attr) in row, inl,
# full, rxdb, instr (per packet) and dg (sides), and its CSV row appended; exits if the run
# left no figures.
collect() {
	local base=$1 total
	row=$(sed -n 's/^ROW //p' "$base.row")
	inl=$(sed -n 's/^INLINED //p' "$base.row")
	full=$(sed -n 's/^FULL //p' "$base.row")
	rxdb=$(sed -n 's/^RXDB //p' "$base.row")
	total=$(awk '/^totals:/ { print $2 }' "$base.callgrind")
	[ -n "$row" ] && [ -n "$rxdb" ] && [ -n "$total" ] ||
		{ echo "bench: no figures in $base.*" >&2; exit 1; }
	instr=$(awk -v t="$total" -v n="$PACKETS" 'BEGIN { printf "%.1f", t / n }')
	dg=$(sides "$base")
	echo "$row,$instr,$rxdb,$dg" >>"$CSV"
}

# path_row WIDTH BASE ENTRIES TAIL_FORMAT [TAIL...]: the row of run BASE (collected) in a
# table of TX paths: the path in WIDTH columns, size, burst, the device-side figures per
# packet, the instructions per packet (all, the driver's, the glue's), the inclusive
# instructions per packet of each bench entry point of ENTRIES (comma-separated), then TAIL
# as printf TAIL_FORMAT prints it.
path_row() {
	local width=$1 base=$2 e es per=() v p s b desc inb floor outb db cqe
	IFS=, read -ra es <<<"$3"
	shift 3
	for e in "${es[@]}"; do
		v=$(incl "$base.callgrind" "$e")
		per+=("${v:-0}")
	done
	IFS=, read -r _ p s b desc inb floor outb db cqe <<<"$row"
	printf "%-${width}s %5s %5s %9s %9s %9s %9s %8s %8s %9s %7s %7s" "$p" "$s" "$b" "$desc" \
		"$inb" "$floor" "$outb" "$db" "$cqe" "$instr" "${dg%,*}" "${dg#*,}"
	awk -v n="$PACKETS" 'BEGIN { for (i = 1; i < ARGC; i++) printf " %7.1f", ARGV[i] / n }' \
		"${per[@]}"
	# shellcheck disable=SC2059 # the caller's format
	printf "$@"
}

CSV=$OUT/datapath.csv
echo "family,path,pkt_size,burst,desc_bytes_per_pkt,inbound_bytes_per_pkt,inbound_floor_per_pkt,outbound_bytes_per_pkt,doorbells_per_pkt,cqes_per_pkt,instr_per_pkt,napi_budget,rx_doorbells_per_pkt,driver_instr_per_pkt,glue_instr_per_pkt" >"$CSV"
printf '%-13s %5s %5s %9s %9s %9s %9s %8s %8s %9s %7s %7s %7s %7s %7s\n' \
	path size burst desc/pkt in/pkt floor out/pkt db/pkt cqe/pkt instr/pkt driver glue xmit \
	compl inlined
for size in "${SIZES[@]}"; do
	for burst in "${BURSTS[@]}"; do
		for path in "${PATHS[@]}"; do
			base="$RUNS/$path-$size-$burst"
			collect "$base"
			path_row 13 "$base" bench_driver_xmit,bench_driver_tx_poll ' %7s\n' "$inl"
		done
	done
done
echo
printf '%-17s %6s %9s %9s %9s %8s %8s %9s %7s %7s\n' \
	"mana path" budget desc/pkt in/pkt out/pkt db/pkt rxdb/pkt instr/pkt driver glue
for path in "${MANA_PATHS[@]}"; do
	for budget in "${MANA_BUDGETS[@]}"; do
		collect "$RUNS/mana-$path-$budget"
		IFS=, read -r _ p _ _ desc inb _ outb db _ <<<"$row"
		printf '%-17s %6s %9s %9s %9s %8s %8s %9s %7s %7s\n' \
			"$p" "$budget" "$desc" "$inb" "$outb" "$db" "${rxdb#*,}" "$instr" "${dg%,*}" \
			"${dg#*,}"
	done
done
echo
printf '%-17s %5s %5s %9s %9s %9s %9s %8s %8s %9s %7s %7s %7s %7s %7s %7s %5s\n' \
	"xdp path" size burst desc/pkt in/pkt floor out/pkt db/pkt cqe/pkt instr/pkt driver glue \
	xmit flush compl inlined full
for burst in "${BURSTS[@]}"; do
	for path in "${XDP_PATHS[@]}"; do
		base="$RUNS/$path-$XDP_SIZE-$burst"
		collect "$base"
		path_row 17 "$base" bench_xdp_xmit,bench_xdp_flush,bench_xdp_tx_poll ' %7s %5s\n' \
			"$inl" "$full"
	done
done
echo "(xdp: every frame posted with xmit_more, one flush per burst, no BQL; full: times the"
echo " ring was full before a frame, where the bench flushed and reaped instead of dropping)"
echo
printf '%-17s %5s %5s %9s %9s %9s %9s %8s %8s %9s %7s %7s %7s %7s\n' \
	"mana tx path" size burst desc/pkt in/pkt floor out/pkt db/pkt cqe/pkt instr/pkt driver \
	glue xmit compl
for burst in "${BURSTS[@]}"; do
	base="$RUNS/mana-tx-$MANA_TX_SIZE-$burst"
	collect "$base"
	path_row 17 "$base" bench_mana_xmit,bench_mana_tx_poll '\n'
done
echo "(mana tx: the mlx5 rows' schedule on the MANA pair, an SQ of 1024 one-BU WQEs; compl:"
echo " NAPI rounds of the TX CQ, Sq::napi_poll with budget 64, until one reads nothing)"
echo
echo "driver: instructions of rsnic's hwif/ code; glue: of the host side (glue.rs, mem.rs, the"
echo "bench's callbacks); split by the inline chain of every instruction (runs/*.attr: by function)"
echo "build: cargo profile bench-kernel (opt-level 2, codegen-units 1, overflow checks, LTO)"
echo "packets per configuration: $PACKETS (after 512 warm-up packets); figures are per packet"
echo "written: ${CSV#"$ROOT"/}"

# ---------------------------------------------------------------------------------------------
# VM figures (scripts/bench-vm.sh): pktgen packet rates in the test VM, skb_tx_mpwqe on vs off and
# rsnic vs a veth pair, medians of interleaved rounds, appended to target/bench/vm.csv.
# BENCH_VM=0 skips them.
if [ "${BENCH_VM:-1}" != 0 ]; then
	echo
	"$ROOT/scripts/bench-vm.sh"
fi
