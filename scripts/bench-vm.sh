#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, the VM figures (design.md section 5, "Packet rate in the VM"): boots the test
# VM, runs scripts/vm/bench.sh there (pktgen, 64-byte UDP, interleaved rounds of rsnic with
# tx_mpwqe on and off at burst 32, rsnic and a veth pair at burst 1, a MANA pair with RX
# doorbells batched and per packet at burst 32), picks its
# "RSNIC-BENCH" lines out of the serial log, prints the median and spread (min-max) of
# packets/s per configuration and the ratios, and appends rows to target/bench/vm.csv.
# Packet rates in an emulated (TCG) VM on a shared machine are only meaningful relative to
# each other within one run.
#
#   BENCH_VM_ROUNDS=N   rounds (default 5)
#   BENCH_VM_COUNT=N    packets per run (default 100000)
#   RSNIC_KO=PATH       the module to load (default: build target/kbuild/<variant>/rsnic.ko)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$RSNIC_ROOT"

scripts/build-kernel.sh >/dev/null
# RSNIC_KO=path runs a module built before (scripts/vm-run.sh loads it); else build it.
[ -n "${RSNIC_KO:-}" ] || scripts/build-module.sh >/dev/null

OUT=$RSNIC_ROOT/target/bench
mkdir -p "$OUT"
LOG=$OUT/vm-serial.log
rsnic_log "VM bench: pktgen rates, ${BENCH_VM_ROUNDS:-5} interleaved rounds (serial log: ${LOG#"$RSNIC_ROOT"/})"
# The guest's environment is rebuilt from scratch: pass the knobs on its command line.
rc=0
scripts/vm-run.sh --log "$LOG" env BENCH_VM_ROUNDS="${BENCH_VM_ROUNDS:-5}" \
	BENCH_VM_COUNT="${BENCH_VM_COUNT:-100000}" scripts/vm/bench.sh >/dev/null 2>&1 || rc=$?
lines=$(tr -d '\r' <"$LOG" | sed -n 's/^RSNIC-BENCH //p')
if [ "$rc" != 0 ] || ! grep -q '^done' <<<"$lines"; then
	tr -d '\r' <"$LOG" | tail -n 30 >&2
	rsnic_die "VM bench failed (exit $rc), see ${LOG#"$RSNIC_ROOT"/}"
fi

CSV=$OUT/vm.csv
# The header names the columns; an older file with a different header is kept aside.
HDR="date,commit,kernel,variant,config,burst,rounds,count,median_pps,min_pps,max_pps,ratio_vs_mpwqe_off,ratio_vs_veth,ratio_vs_rx_db_per_packet"
if [ -s "$CSV" ] && [ "$(head -n1 "$CSV")" != "$HDR" ]; then mv "$CSV" "$CSV.old"; fi
[ -s "$CSV" ] || echo "$HDR" >"$CSV"
commit=$(git -C "$RSNIC_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$RSNIC_ROOT" diff --quiet HEAD -- drivers rust 2>/dev/null || commit="$commit+dirty"

echo "$lines" >"$OUT/vm-runs.txt"
python3 - "$CSV" "$commit" "$OUT/vm-runs.txt" <<'PY'
import statistics, sys, time
csv, commit = sys.argv[1], sys.argv[2]
info, runs, counts, delivered = {}, {}, {}, {}
for line in open(sys.argv[3]):
    kind, *kv = line.split()
    d = dict(x.split("=", 1) for x in kv)
    if kind == "info":
        info = d
    elif kind == "run":
        runs.setdefault(d["config"], []).append((int(d["round"]), int(d["burst"]), int(d["pps"])))
        if "received" in d and int(d["sent"]):
            got = int(d["received"]) / int(d["sent"])
            delivered[d["config"]] = min(delivered.get(d["config"], 1.0), got)
        counts[d["config"]] = d.get("count", info.get("count"))
order = ["rsnic_mpwqe_on", "rsnic_mpwqe_off", "rsnic_burst1", "veth",
         "mana_rx_db_batched", "mana_rx_db_per_packet"]
med = {c: statistics.median(p for _, _, p in runs[c]) for c in order if c in runs}
def per_round(a, b):
    # Median of the per-round ratios: each round's runs sit next to each other in time.
    ra = {r: p for r, _, p in runs.get(a, [])}
    rb = {r: p for r, _, p in runs.get(b, [])}
    x = [ra[r] / rb[r] for r in ra if r in rb and rb[r]]
    return statistics.median(x) if x else None
date = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
print("VM packet rates: pktgen, 64-byte UDP, %s rounds, %s packets per burst-32 run (a quarter at burst 1), %s (%s), %s vCPUs, emulated (TCG)"
      % (info.get("rounds"), info.get("count"), info.get("kernel"), info.get("variant"), info.get("cpus")))
print("%-22s %5s %12s %12s %12s %9s %9s %10s" % ("config", "burst", "median pps", "min pps", "max pps", "spread", "vs veth", "delivered"))
rows = []
for c in order:
    if c not in runs:
        continue
    p = [x for _, _, x in runs[c]]
    burst = runs[c][0][1]
    vs_off = "%.3f" % (med[c] / med["rsnic_mpwqe_off"]) if c.startswith("rsnic_mpwqe") else ""
    vs_veth = "%.3f" % (med[c] / med["veth"]) if c.startswith("rsnic") and "veth" in med else ""
    vs_pp = "%.3f" % (med[c] / med["mana_rx_db_per_packet"]) if c.startswith("mana") else ""
    spread = "%.0f%%" % (100 * (max(p) - min(p)) / med[c]) if med[c] else "-"
    dl = "%.1f%%" % (100 * delivered[c]) if c in delivered else "-"
    print("%-22s %5d %12.0f %12d %12d %9s %9s %10s" % (c, burst, med[c], min(p), max(p), spread, vs_veth or "-", dl))
    rows.append(",".join(str(v) for v in (date, commit, info.get("kernel"), info.get("variant"), c, burst,
                 len(p), counts.get(c), "%.0f" % med[c], min(p), max(p), vs_off, vs_veth, vs_pp)))
print("(delivered: the smallest share of a run's packets that the receiving port counted)")
print()
def show(label, a, b):
    if a in med and b in med:
        print("%-46s %6.3f   (median of per-round ratios %.3f)" % (label, med[a] / med[b], per_round(a, b)))
show("ratio tx_mpwqe on/off (burst 32):", "rsnic_mpwqe_on", "rsnic_mpwqe_off")
show("ratio rsnic/veth (burst 1, tx_mpwqe on):", "rsnic_burst1", "veth")
show("ratio rsnic burst 32 (mpwqe on)/veth burst 1:", "rsnic_mpwqe_on", "veth")
show("ratio MANA RX doorbells batched/per packet:", "mana_rx_db_batched", "mana_rx_db_per_packet")
with open(csv, "a") as f:
    for r in rows:
        f.write(r + "\n")
print("appended: target/bench/vm.csv (%d rows)" % len(rows))
PY
