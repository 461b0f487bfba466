#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-upstream: rsnic against the kernel's own mlx5_core + mlx5e (unmodified 6.12) on
# the same emulated ConnectX functions and the same kernel (rsnic-datapath.rst, "rsnic
# against upstream mlx5e"). Boots one VM on the vfio-user transport (rsnic-devd presenting
# two ConnectX VFs, 15b3:101e), runs scripts/vm/bench-upstream.sh there (rsnic, then mlx5e,
# each for BENCH_UP_ROUNDS pktgen rounds of BENCH_UP_COUNT 60-byte UDP frames from port A to
# port B, one TX queue, burst 32; every frame accounted for in the model's and the drivers'
# counters), picks its "RSNIC-BENCH" lines out of the serial log and prints per driver the
# median and spread (min - max) of pktgen's rate and of the guest's CPU time per frame (all
# CPUs, /proc/stat), the frames the model transmitted per round, and the ratios rsnic/mlx5e
# of the medians; and the device's work per 1000 frames as the model counts it (doorbells,
# WQEs and WQE basic blocks, CQEs, CQ arms, EQEs, interrupts, PCIe reads and writes: exact
# counts, the figures that do not follow the machine's load). The machine's load average before and after the VM is printed with them;
# the table goes to target/bench/vm-upstream.txt. A benchmark, not a test: figures of an
# emulated (TCG) guest, meaningful only against each other within one run.
#
#   BENCH_UP_ROUNDS=N   rounds per driver (default 5)
#   BENCH_UP_COUNT=N    frames per round (default 200000)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$RSNIC_ROOT"

OUT=$RSNIC_ROOT/target/bench
LOG=$OUT/vm-upstream-serial.log
mkdir -p "$OUT"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
rsnic_log "rsnic against upstream mlx5e on the vfio-user transport's ConnectX functions (serial log: ${LOG#"$RSNIC_ROOT"/})"
rc=0
# The console shows only the rounds as they end (and a failure).
RSNIC_TRANSPORT=vfio RSNIC_PCI_FAMILY=mlx5 RSNIC_VM_QUIET_BOOT=1 scripts/vm-run.sh --log "$LOG" \
	env BENCH_UP_ROUNDS="${BENCH_UP_ROUNDS:-5}" BENCH_UP_COUNT="${BENCH_UP_COUNT:-200000}" \
	scripts/vm/bench-upstream.sh \
	2> >(grep --line-buffered -a -E '^ *(rsnic|mlx5e) round [0-9]|FAIL:' >&2 || true) >/dev/null || rc=$?
load1=$(cut -d' ' -f1-3 /proc/loadavg)
lines=$(tr -d '\r' <"$LOG" | sed -n 's/^.*RSNIC-BENCH //p')
if [ "$rc" != 0 ] || ! grep -q '^done' <<<"$lines"; then
	tr -d '\r' <"$LOG" | grep -a -E 'FAIL:|^  (rsnic|mlx5e) round' | tail -n 12 >&2 || true
	tr -d '\r' <"$LOG" | tail -n 20 >&2
	rsnic_die "the VM bench failed (exit $rc), see ${LOG#"$RSNIC_ROOT"/}; no figures"
fi

commit=$(git -C "$RSNIC_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "$lines" >"$OUT/vm-upstream-runs.txt"
python3 - "$OUT/vm-upstream-runs.txt" "$commit" "$load0" "$load1" <<'PY' | tee "$OUT/vm-upstream.txt"
import statistics, sys, time
path, commit, load0, load1 = sys.argv[1:5]
info, runs = {}, {}
for line in open(path):
    kind, *kv = line.split()
    d = dict(x.split("=", 1) for x in kv)
    if kind == "info":
        info[d["driver"]] = d
    elif kind == "run":
        runs.setdefault(d["driver"], []).append(d)
drivers = ["rsnic", "mlx5e"]
for drv in drivers:
    if drv not in runs or drv not in info:
        sys.exit("no figures of %s in the serial log" % drv)
    want = int(info[drv]["rounds"])
    if len(runs[drv]) != want:
        sys.exit("%s: %d of %d rounds in the serial log" % (drv, len(runs[drv]), want))
hz = int(info["rsnic"]["clk_tck"])
fig = {}
for drv in drivers:
    rs = runs[drv]
    for r in rs:
        sent, recv, drop = int(r["sent"]), int(r["received"]), int(r["dropped"])
        if recv + drop != sent:
            sys.exit("%s round %s: %d sent, %d received, %d dropped" % (drv, r["round"], sent, recv, drop))
    fig[drv] = {
        "pps": [int(r["pps"]) for r in rs],
        # Guest CPU time (all CPUs) per frame pktgen sent, in ns.
        "ns": [int(r["busy_ticks"]) * 1e9 / hz / int(r["sent"]) for r in rs],
        # Share of the guest's counted CPU time that was busy (2 vCPUs: 100 % = both).
        "util": [int(r["busy_ticks"]) / max(int(r["total_ticks"]), 1) for r in rs],
        "devtx": [int(r["dev_tx"]) for r in rs],
        "sent": [int(r["sent"]) for r in rs],
        "recv": sum(int(r["received"]) for r in rs),
        "drop": sum(int(r["dropped"]) for r in rs),
    }
med = lambda v: statistics.median(v)
i0 = info["rsnic"]
print("rsnic against upstream mlx5e: pktgen A -> B, %s x %s 60-byte UDP frames per driver, burst 32, TX queue 0"
      % (i0["rounds"], i0["count"]))
print("vfio-user transport (rsnic-devd, ConnectX VFs 15b3:101e), kernel %s, %s vCPUs (TCG), commit %s, %s"
      % (i0["kernel"], i0["cpus"], commit, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())))
print("host load average (1/5/15 min): %s before, %s after" % (load0, load1))
for drv in drivers:
    i = info[drv]
    print("  %-6s version %s, firmware %s, channels %s, rings rx/tx %s, priv flags %s"
          % (drv, i["version"], i["firmware"], i["channels"], i["rings_rx_tx"], i["priv_flags"]))
print()
print("%-7s %10s %21s %10s %17s %6s %12s %9s" % ("driver", "median pps", "(min - max)",
      "ns CPU/pkt", "(min - max)", "busy", "dev tx/round", "delivered"))
for drv in drivers:
    f = fig[drv]
    dev = "%d" % med(f["devtx"]) if min(f["devtx"]) == max(f["devtx"]) else "%d-%d" % (min(f["devtx"]), max(f["devtx"]))
    print("%-7s %10.0f %21s %10.0f %17s %5.0f%% %12s %8.3f%%" % (
        drv, med(f["pps"]), "(%d - %d)" % (min(f["pps"]), max(f["pps"])), med(f["ns"]),
        "(%.0f - %.0f)" % (min(f["ns"]), max(f["ns"])), 100 * med(f["util"]), dev,
        100.0 * f["recv"] / sum(f["sent"])))
print()
print("ratio rsnic/mlx5e of the medians: pps %.3f, ns CPU/pkt %.3f" % (
    med(fig["rsnic"]["pps"]) / med(fig["mlx5e"]["pps"]), med(fig["rsnic"]["ns"]) / med(fig["mlx5e"]["ns"])))
print("(busy: the guest's busy share of its counted CPU time, both vCPUs; dev tx/round: frames the model")
print(" transmitted on A's port per round, its counters file; delivered: frames B's driver received of")
print(" those pktgen sent, over all rounds; %d dropped in all, every one counted)" % sum(fig[d]["drop"] for d in drivers))
print()
# The device's work for the same frames: exact counts from the model (what each driver asked
# of it), per 1000 frames sent, median over the rounds (min - max).
print("device work per 1000 frames sent (the model's counters; a_: A's port, the sender; b_: B's port):")
keys = sorted(k for k in runs["rsnic"][0] if k.startswith("w_"))
print("  %-22s %22s %22s %7s" % ("counter", "rsnic", "mlx5e", "ratio"))
zero = []
for k in keys:
    per = {d: [1000.0 * int(r.get(k, 0)) / int(r["sent"]) for r in runs[d]] for d in drivers}
    if not any(v for d in drivers for v in per[d]):
        zero.append(k[2:])
        continue
    cell = lambda v: "%.2f (%.2f - %.2f)" % (med(v), min(v), max(v))
    m = med(per["mlx5e"])
    print("  %-22s %22s %22s %7s" % (k[2:], cell(per["rsnic"]), cell(per["mlx5e"]),
          "%.3f" % (med(per["rsnic"]) / m) if m else "-"))
if zero:
    print("  0 for both drivers in every round: %s" % ", ".join(zero))
print()
print("per round: driver round pps ns/pkt busy sent dev_tx received")
for drv in drivers:
    for r, ns, u in zip(runs[drv], fig[drv]["ns"], fig[drv]["util"]):
        print("  %-6s %s %8s %7.0f %4.0f%% %s %s %s" % (drv, r["round"], r["pps"], ns, 100 * u, r["sent"], r["dev_tx"], r["received"]))
PY
