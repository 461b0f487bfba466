#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, the VM figures (design.md section 5, "Packet rate in the VM"): boots the test
# VM, runs scripts/vm/bench.sh there (pktgen, 64-byte UDP, interleaved rounds of rsnic with
# tx_mpwqe on and off at burst 32, rsnic and a veth pair at burst 1, a MANA pair with RX
# doorbells batched and per packet at burst 32, and the receive-side configurations: each
# family's receiving port with an XDP_DROP program against no program, the stack dropping
# the same frames in udp_rcv), picks its
# "RSNIC-BENCH" lines out of the serial log, prints the median and spread (min-max) of
# packets/s per configuration and the ratios, and appends rows to target/bench/vm.csv; the
# receive-side figures (receiver's rate, CPU time per received packet on the receive CPU and
# in softirq, ratios XDP_DROP / stack drop) go to target/bench/vm-xdp.csv.
# Packet rates in an emulated (TCG) VM on a shared machine are only meaningful relative to
# each other within one run.
#
#   BENCH_VM_ROUNDS=N   rounds (default 5)
#   BENCH_VM_COUNT=N    packets per run (default 100000)
#   BENCH_VM_ONLY=RE    run only the configurations whose name matches the regex RE
#   RSNIC_KO=PATH       the module to load (default: build target/kbuild/<variant>/rsnic.ko)
# The XDP_DROP program is built here into target/bench/xdp_drop.o with clang (LLVM_SUFFIX).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$RSNIC_ROOT"

scripts/build-kernel.sh >/dev/null
# RSNIC_KO=path runs a module built before (scripts/vm-run.sh loads it); else build it.
[ -n "${RSNIC_KO:-}" ] || scripts/build-module.sh >/dev/null

OUT=$RSNIC_ROOT/target/bench
mkdir -p "$OUT"
# The XDP_DROP program of the receive-side configurations, built here (the guest sees the
# host's root read-only). Only the kernel's UAPI header is needed.
XDP_SRC=$OUT/xdp_drop.c
XDP_OBJ=$OUT/xdp_drop.o
cat >"$XDP_SRC" <<'EOF'
// SPDX-License-Identifier: GPL-2.0
/* make bench: drops every frame at the driver (XDP_DROP). */
#include <linux/bpf.h>

__attribute__((section("xdp"), used)) int xdp_drop(struct xdp_md *ctx)
{
	return XDP_DROP;
}

__attribute__((section("license"), used)) char _license[] = "GPL";
EOF
"clang$LLVM_SUFFIX" -O2 -target bpf -I/usr/include/x86_64-linux-gnu -c "$XDP_SRC" -o "$XDP_OBJ" ||
	rsnic_die "could not build $XDP_OBJ with clang$LLVM_SUFFIX"
LOG=$OUT/vm-serial.log
rsnic_log "VM bench: pktgen rates, ${BENCH_VM_ROUNDS:-5} interleaved rounds (serial log: ${LOG#"$RSNIC_ROOT"/})"
# The guest's environment is rebuilt from scratch: pass the knobs on its command line.
rc=0
scripts/vm-run.sh --log "$LOG" env BENCH_VM_ROUNDS="${BENCH_VM_ROUNDS:-5}" \
	BENCH_VM_COUNT="${BENCH_VM_COUNT:-100000}" BENCH_XDP_OBJ="$XDP_OBJ" \
	BENCH_VM_ONLY="${BENCH_VM_ONLY:-}" scripts/vm/bench.sh >/dev/null 2>&1 || rc=$?
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
# Receive-side configurations: XDP_DROP against the stack's drop, per family.
xcsv = csv.replace("vm.csv", "vm-xdp.csv")
xcfgs = [(f, m) for f in ("mlx5", "mana") for m in ("xdp_drop", "stack_drop")]
hz = int(info.get("clk_tck", 100))
def cpustat(v):
    # "cpu:F,..;cpu0:F,..": user nice system idle iowait irq softirq steal, in 1/clk_tck s.
    return {k: [int(x) for x in f.split(",")] for k, f in (c.split(":") for c in v.split(";"))}
xr = {}
for line in open(sys.argv[3]):
    kind, *kv = line.split()
    d = dict(x.split("=", 1) for x in kv)
    if kind != "run" or "window_ns" not in d:
        continue
    s0, s1 = cpustat(d["stat0"]), cpustat(d["stat1"])
    dt = {k: [b - a for a, b in zip(s0[k], s1[k])] for k in s0}
    rxc = dt["cpu" + d["rx_cpu"]]
    n, w = int(d["rx_window"]), int(d["window_ns"]) / 1e9
    if not n or not w:
        continue
    busy = lambda x: sum(x) - x[3] - x[4]
    got = int(d["received"])
    # Where the frames were dropped: by the program, or by the stack in udp_rcv.
    dropped = int(d["xdp_drop"]) if "xdp_drop" in d["config"] else int(d.get("udp_noports", 0))
    xr.setdefault(d["config"], []).append({
        "round": int(d["round"]), "rx_pps": n / w, "pg_pps": int(d["pps"]),
        # Utilisation of the RX CPU: busy / (busy + idle) as the guest counted them; the wall
        # time is not the base, as a vCPU the host does not run counts no ticks.
        "rxcpu_us": busy(rxc) * 1e6 / hz / n, "rxcpu_share": busy(rxc) / max(sum(rxc), 1),
        "vcpu_share": sum(dt["cpu"]) / hz / w / len([k for k in dt if k != "cpu"]),
        "sirq_us": dt["cpu"][6] * 1e6 / hz / n,
        "ppp": got / max(int(d["rx_polls"]), 1), "dropped": dropped / got if got else 0.0})
if xr:
    def mm(c, k):
        v = [r[k] for r in xr[c]]
        return statistics.median(v), min(v), max(v)
    def pr(a, b, k):
        # Median of the per-round ratios a/b.
        ra = {r["round"]: r[k] for r in xr.get(a, [])}
        rb = {r["round"]: r[k] for r in xr.get(b, [])}
        x = [ra[i] / rb[i] for i in ra if i in rb and rb[i]]
        return statistics.median(x) if x else None
    print()
    print("VM receive side: XDP_DROP at the receiving port against no program (the stack builds an skb")
    print("and drops it in udp_rcv: no socket on port 9); pktgen 64-byte UDP, burst 32, %s packets per"
          % info.get("count"))
    print("run, pktgen on CPU 0, the device model and the NAPI polls it schedules on CPU %s."
          % (int(info.get("cpus", 2)) - 1))
    print("rx pps: packets the receiving port counted / the pktgen run's wall time; rx-CPU: busy time")
    print("of that CPU per received packet (device model, receiver's RX, sender's TX completions) and")
    print("its utilisation (busy / busy + idle); softirq: softirq time of all CPUs per packet (NAPI);")
    print("CPU times from /proc/stat, tick-sampled at the guest's HZ (time the host did not run a vCPU")
    print("counts nowhere: vCPU = counted time / wall time); pkt/poll: packets per receiver NAPI poll;")
    print("dropped: the smallest share of a run's packets counted where it should be dropped")
    print("(rx_xdp_drop, or Udp NoPorts).")
    print("%-16s %8s %15s %6s %18s %5s %18s %8s %7s %5s %9s %7s" % ("config", "rx pps",
          "(min-max)", "spread", "rx-CPU us/pkt", "util", "softirq us/pkt", "pkt/poll", "pktgen",
          "vCPU", "delivered", "dropped"))
    xrows = []
    for f, m in xcfgs:
        c = "%s_%s" % (f, m)
        if c not in xr:
            continue
        rx, rc, sq, pg = mm(c, "rx_pps"), mm(c, "rxcpu_us"), mm(c, "sirq_us"), mm(c, "pg_pps")
        sh, pp = mm(c, "rxcpu_share"), mm(c, "ppp")
        dl = "%.1f%%" % (100 * delivered[c]) if c in delivered else "-"
        dr = "%.1f%%" % (100 * min(r["dropped"] for r in xr[c]))
        print("%-16s %8.0f %15s %5.0f%% %18s %4.0f%% %18s %8.1f %7.0f %4.0f%% %9s %7s" % (
            c, rx[0], "(%.0f-%.0f)" % rx[1:], 100 * (rx[2] - rx[1]) / rx[0],
            "%.1f (%.1f-%.1f)" % rc, 100 * sh[0], "%.1f (%.1f-%.1f)" % sq, pp[0], pg[0],
            100 * mm(c, "vcpu_share")[0], dl, dr))
        stack = "%s_stack_drop" % f
        ratios = ["", "", ""]
        if m == "xdp_drop" and stack in xr:
            ratios = ["%.3f" % pr(c, stack, "rx_pps"), "%.3f" % pr(stack, c, "rxcpu_us"),
                      "%.3f" % pr(stack, c, "sirq_us")]
        xrows.append(",".join(str(v) for v in [
            date, commit, info.get("kernel"), info.get("variant"), c, f, m, len(xr[c]),
            counts.get(c), "%.0f" % rx[0], "%.0f" % rx[1], "%.0f" % rx[2], "%.2f" % rc[0],
            "%.2f" % rc[1], "%.2f" % rc[2], "%.3f" % sh[0], "%.2f" % sq[0], "%.2f" % sq[1],
            "%.2f" % sq[2], "%.1f" % pp[0], "%.0f" % pg[0]] + ratios))
    print()
    for f in ("mlx5", "mana"):
        a, b = "%s_xdp_drop" % f, "%s_stack_drop" % f
        if a in xr and b in xr:
            for label, k, x, y in (("rx pps, XDP_DROP / stack drop:", "rx_pps", a, b),
                                   ("rx-CPU per packet, stack drop / XDP_DROP:", "rxcpu_us", b, a),
                                   ("softirq per packet, stack drop / XDP_DROP:", "sirq_us", b, a)):
                print("%-4s %-43s %6.3f   (median of per-round ratios %.3f)"
                      % (f, label, mm(x, k)[0] / mm(y, k)[0], pr(x, y, k)))
    XHDR = ("date,commit,kernel,variant,config,family,receiver,rounds,count,median_rx_pps,"
            "min_rx_pps,max_rx_pps,median_rxcpu_us_per_pkt,min_rxcpu_us_per_pkt,"
            "max_rxcpu_us_per_pkt,median_rxcpu_util,median_softirq_us_per_pkt,"
            "min_softirq_us_per_pkt,max_softirq_us_per_pkt,median_pkts_per_poll,"
            "median_pktgen_pps,ratio_rx_pps_vs_stack,ratio_stack_rxcpu_per_pkt,"
            "ratio_stack_softirq_per_pkt")
    try:
        old = open(xcsv).readline().strip()
    except OSError:
        old = None
    if old is not None and old != XHDR:
        import os
        os.replace(xcsv, xcsv + ".old")
        old = None
    with open(xcsv, "a") as fx:
        if old is None:
            fx.write(XHDR + "\n")
        for r in xrows:
            fx.write(r + "\n")
    print("(ratios in target/bench/vm-xdp.csv: medians of the per-round ratios)")
    print("appended: target/bench/vm-xdp.csv (%d rows)" % len(xrows))
PY
