#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, the VM figures (rsnic-datapath.rst, "Packet rates in the VM"): boots the test
# VM, runs scripts/vm/bench.sh there (pktgen, 64-byte UDP, interleaved rounds of rsnic with
# skb_tx_mpwqe on and off at burst 32, rsnic and a veth pair at burst 1, a MANA pair with RX
# doorbells batched and per packet at burst 32, and the receive-side configurations: each
# family's receiving port with an XDP_DROP program against no program, the stack dropping
# the same frames in udp_rcv), picks its
# "RSNIC-BENCH" lines out of the serial log, prints the median and spread (min-max) of
# packets/s per configuration and the ratios, and appends rows to target/bench/vm.csv; the
# receive-side figures (CPU time per received packet at a fixed offered rate, in softirq and
# in all, ratios XDP_DROP / stack drop) go to target/bench/vm-xdp.csv.
# Packet rates in an emulated (TCG) VM on a shared machine are only meaningful relative to
# each other within one run.
#
#   BENCH_VM_ROUNDS=N   rounds (default 5)
#   BENCH_VM_COUNT=N    packets per run (default 100000)
#   BENCH_VM_RX_COUNT=N, BENCH_VM_RX_RATE=N   frames per receive-side run and their offered
#                       rate in frames/s (defaults 40000 and 4000; see scripts/vm/bench.sh)
#   BENCH_VM_ONLY=RE    run only the configurations whose name matches the regex RE (and
#                       none on the vfio-user transport)
#   BENCH_VM_VFIO=0     leave out the vfio-user transport's rows (two more VMs, one per
#                       family: rsnic_mpwqe_{on,off}_vfio and mana_rx_db_{batched,per_packet}_vfio);
#                       BENCH_VM_VFIO=only: only those
#   RSNIC_KO=PATH       the module to load (default: build target/kbuild/<variant>/rsnic.ko)
# The XDP_DROP program is built here into target/bench/xdp_drop.o with clang (LLVM_SUFFIX).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$RSNIC_ROOT"

# The kernel, and the module unless RSNIC_KO names one built before; OUT=target/bench.
rsnic_vm_bench_prep

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
# The AF_XDP tool and its XDP program (tests/xdp) for the AF_XDP rows; left out if they
# cannot be built here.
XSK_TOOL=$RSNIC_ROOT/target/xdp/rsnic-xsk
scripts/build-xdp-tools.sh >/dev/null
[ -x "$XSK_TOOL" ] && [ ! -e "$RSNIC_ROOT/target/xdp/MISSING" ] || XSK_TOOL=""
LOG=$OUT/vm-serial.log
rsnic_log "VM bench: pktgen rates, ${BENCH_VM_ROUNDS:-5} interleaved rounds (serial log: ${LOG#"$RSNIC_ROOT"/})"
# The guest's environment is rebuilt from scratch: pass the knobs on its command line.
rc=0
if [ "${BENCH_VM_VFIO:-1}" = only ]; then
	# Only the vfio-user transport's rows: an empty in-kernel run.
	printf 'RSNIC-BENCH info transport=vfio\nRSNIC-BENCH done\n' >"$LOG"
else
scripts/vm-run.sh --log "$LOG" env BENCH_VM_ROUNDS="${BENCH_VM_ROUNDS:-5}" \
	BENCH_VM_COUNT="${BENCH_VM_COUNT:-100000}" BENCH_XDP_OBJ="$XDP_OBJ" BENCH_XSK="$XSK_TOOL" \
	BENCH_VM_RX_COUNT="${BENCH_VM_RX_COUNT:-40000}" BENCH_VM_RX_RATE="${BENCH_VM_RX_RATE:-4000}" \
	BENCH_VM_XSK_TX_COUNT="${BENCH_VM_XSK_TX_COUNT:-50000}" \
	BENCH_VM_ONLY="${BENCH_VM_ONLY:-}" scripts/vm/bench.sh >/dev/null 2>&1 || rc=$?
fi
lines=$(tr -d '\r' <"$LOG" | sed -n 's/^RSNIC-BENCH //p')
if [ "$rc" != 0 ] || ! grep -q '^done' <<<"$lines"; then
	tr -d '\r' <"$LOG" | tail -n 30 >&2
	rsnic_die "VM bench failed (exit $rc), see ${LOG#"$RSNIC_ROOT"/}"
fi
# The vfio-user transport (rsnic.rst, "The vfio-user transport"): one VM per family, the
# device in rsnic-devd behind the family's real-ID functions, a doorbell an MMIO write that
# QEMU carries to devd as a vfio-user message; the family's doorbell configurations, named
# *_vfio. BENCH_VM_VFIO=0 leaves them out.
if [ "${BENCH_VM_VFIO:-1}" != 0 ] && [ -z "${BENCH_VM_ONLY:-}" ]; then
	cargo build --release --quiet -p rsnic-devd
	for fam in mlx5 mana; do
		plog=$OUT/vm-vfio-$fam-serial.log
		rsnic_log "VM bench on the vfio-user transport: $fam (serial log: ${plog#"$RSNIC_ROOT"/})"
		rc=0
		RSNIC_TRANSPORT=vfio RSNIC_PCI_FAMILY=$fam scripts/vm-run.sh --log "$plog" env RSNIC_FAMILY=$fam \
			BENCH_VM_ROUNDS="${BENCH_VM_ROUNDS:-5}" BENCH_VM_COUNT="${BENCH_VM_COUNT:-100000}" \
			scripts/vm/bench.sh >/dev/null 2>&1 || rc=$?
		plines=$(tr -d '\r' <"$plog" | sed -n 's/^RSNIC-BENCH //p')
		if [ "$rc" != 0 ] || ! grep -q '^done' <<<"$plines"; then
			tr -d '\r' <"$plog" | tail -n 30 >&2
			rsnic_die "VM bench on the vfio-user transport failed (exit $rc), see ${plog#"$RSNIC_ROOT"/}"
		fi
		# Alone (BENCH_VM_VFIO=only), the first vfio VM's info line describes the run.
		if [ "${BENCH_VM_VFIO:-1}" = only ] && [ "$fam" = mlx5 ]; then
			lines+=$'\n'$(grep -m1 '^info ' <<<"$plines")
		fi
		lines+=$'\n'$(grep '^run ' <<<"$plines")
	done
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
         "mana_rx_db_batched", "mana_rx_db_per_packet",
         "rsnic_mpwqe_on_vfio", "rsnic_mpwqe_off_vfio",
         "mana_rx_db_batched_vfio", "mana_rx_db_per_packet_vfio"]
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
    sfx = "_vfio" if c.endswith("_vfio") else ""
    vs_off = "%.3f" % (med[c] / med["rsnic_mpwqe_off" + sfx]) if c.startswith("rsnic_mpwqe") and "rsnic_mpwqe_off" + sfx in med else ""
    vs_veth = "%.3f" % (med[c] / med["veth"]) if c.startswith("rsnic") and not sfx and "veth" in med else ""
    vs_pp = "%.3f" % (med[c] / med["mana_rx_db_per_packet" + sfx]) if c.startswith("mana") and "mana_rx_db_per_packet" + sfx in med else ""
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
show("ratio skb_tx_mpwqe on/off (burst 32):", "rsnic_mpwqe_on", "rsnic_mpwqe_off")
show("ratio rsnic/veth (burst 1, skb_tx_mpwqe on):", "rsnic_burst1", "veth")
show("ratio rsnic burst 32 (mpwqe on)/veth burst 1:", "rsnic_mpwqe_on", "veth")
show("ratio MANA RX doorbells batched/per packet:", "mana_rx_db_batched", "mana_rx_db_per_packet")
show("vfio-user transport: ratio skb_tx_mpwqe on/off:", "rsnic_mpwqe_on_vfio", "rsnic_mpwqe_off_vfio")
show("vfio-user transport: ratio MANA RX doorbells batched/per packet:", "mana_rx_db_batched_vfio", "mana_rx_db_per_packet_vfio")
with open(csv, "a") as f:
    for r in rows:
        f.write(r + "\n")
print("appended: target/bench/vm.csv (%d rows)" % len(rows))
# Receive-side configurations: XDP_DROP against the stack's drop, per family.
xcsv = csv.replace("vm.csv", "vm-xdp.csv")
xcfgs = [(f, m) for f in ("mlx5", "mana") for m in ("xdp_drop", "stack_drop")]
xcfgs += [(f, "xsk_%s_%s" % (t, b)) for f in ("mlx5", "mana") for t in ("rxdrop", "l2fwd")
          for b in ("zc", "copy")]
hz = int(info.get("clk_tck", 100))
def cpustat(v):
    # "cpu:F,..;cpu0:F,..": user nice system idle iowait irq softirq steal, in 1/clk_tck s.
    return {k: [int(x) for x in f.split(",")] for k, f in (c.split(":") for c in v.split(";"))}
busy = lambda x: sum(x) - x[3] - x[4]
xr = {}
for line in open(sys.argv[3]):
    kind, *kv = line.split()
    d = dict(x.split("=", 1) for x in kv)
    if kind != "run" or "window_ns" not in d:
        continue
    s0, s1 = cpustat(d["stat0"]), cpustat(d["stat1"])
    dt = {k: [b - a for a, b in zip(s0[k], s1[k])] for k in s0}
    rxc, al = dt["cpu" + d["rx_cpu"]], dt["cpu"]
    n, w = int(d["rx_window"]), int(d["window_ns"]) / 1e9
    if not n or not w:
        continue
    got = int(d["received"])
    # Where the frames were dropped: by the program, or by the stack in udp_rcv.
    if "xsk_rx" in d:
        dropped = int(d["xsk_rx"])  # taken by the AF_XDP sockets
    elif "xdp_drop" in d["config"]:
        dropped = int(d["xdp_drop"])
    else:
        dropped = int(d.get("udp_noports", 0))
    xr.setdefault(d["config"], []).append({
        "round": int(d["round"]), "rx_pps": n / w, "pg_pps": int(d["pps"]),
        "busy_us": busy(al) * 1e6 / hz / n, "sirq_us": al[6] * 1e6 / hz / n,
        # Utilisation of the run's CPU: busy / (busy + idle) as the guest counted them; the
        # wall time is not the base, as a vCPU the host does not run counts no ticks.
        "util": busy(rxc) / max(sum(rxc), 1), "vcpu": sum(rxc) / hz / w,
        "ppp": got / max(int(d["rx_polls"]), 1), "dropped": dropped / got if got else 0.0})
if xr:
    def mm(c, k):
        v = [r[k] for r in xr[c]]
        return statistics.median(v), min(v), max(v)
    def pr(a, b, k, op=lambda x, y: x / y):
        # Median of the per-round ratios (or differences) of a and b.
        ra = {r["round"]: r[k] for r in xr.get(a, [])}
        rb = {r["round"]: r[k] for r in xr.get(b, [])}
        x = [op(ra[i], rb[i]) for i in ra if i in rb and rb[i]]
        return statistics.median(x) if x else None
    print()
    print("VM receive side: XDP_DROP at the receiving port against no program (the stack builds an skb")
    print("and drops it in udp_rcv: no socket on port 9); pktgen 64-byte UDP, burst 32, %s frames per"
          % info.get("rx_count"))
    print("run offered at %s frames/s; pktgen, the device model and the NAPI polls on CPU 0."
          % info.get("rx_rate"))
    print("Per received packet, CPU time of the VM (/proc/stat, tick-sampled at the guest's HZ; time")
    print("the host did not run the vCPU counts nowhere): softirq = NAPI (the receiver's RX path and")
    print("the sender's TX completions); busy = all of it (also pktgen, the sender's xmit and the")
    print("device model, the same work in every configuration). rx pps: packets the receiver counted /")
    print("wall time (the offered rate when it kept up); util: CPU 0 busy / (busy + idle); vCPU: CPU 0")
    print("counted time / wall time; pkt/poll: packets per receiver NAPI poll; dropped: the smallest")
    print("share of a run's packets counted where it should be dropped (rx_xdp_drop, or Udp NoPorts).")
    print("%-16s %19s %19s %6s %5s %5s %8s %7s %9s %7s" % ("config", "softirq us/pkt",
          "busy us/pkt", "rx pps", "util", "vCPU", "pkt/poll", "pktgen", "delivered", "dropped"))
    xrows = []
    for f, m in xcfgs:
        c = "%s_%s" % (f, m)
        if c not in xr:
            continue
        sq, bz, rx, pg = mm(c, "sirq_us"), mm(c, "busy_us"), mm(c, "rx_pps"), mm(c, "pg_pps")
        ut, vc, pp = mm(c, "util"), mm(c, "vcpu"), mm(c, "ppp")
        dl = "%.1f%%" % (100 * delivered[c]) if c in delivered else "-"
        dr = "%.1f%%" % (100 * min(r["dropped"] for r in xr[c]))
        print("%-16s %19s %19s %6.0f %4.0f%% %4.0f%% %8.1f %7.0f %9s %7s" % (
            c, "%.2f (%.2f-%.2f)" % sq, "%.2f (%.2f-%.2f)" % bz, rx[0], 100 * ut[0],
            100 * vc[0], pp[0], pg[0], dl, dr))
        stack = "%s_stack_drop" % f
        if m.endswith("_zc"):
            stack = c[:-3] + "_copy"  # zero-copy rows: the ratios are copy / zero-copy
        ratios = ["", "", ""]
        if (m == "xdp_drop" or m.endswith("_zc")) and stack in xr:
            ratios = ["%.3f" % pr(stack, c, "sirq_us"), "%.3f" % pr(stack, c, "busy_us"),
                      "%.2f" % pr(stack, c, "busy_us", lambda x, y: x - y)]
        xrows.append(",".join(str(v) for v in [
            date, commit, info.get("kernel"), info.get("variant"), c, f, m, len(xr[c]),
            info.get("rx_count"), info.get("rx_rate"), "%.2f" % sq[0], "%.2f" % sq[1],
            "%.2f" % sq[2], "%.2f" % bz[0], "%.2f" % bz[1], "%.2f" % bz[2], "%.0f" % rx[0],
            "%.3f" % ut[0], "%.3f" % vc[0], "%.1f" % pp[0]] + ratios))
    print()
    def compare(who, a, b, what):
        # Per packet, b against a: ratios of softirq and busy CPU, difference of busy CPU.
        if a not in xr or b not in xr:
            return
        for label, k in (("softirq per packet, %s:" % what, "sirq_us"),
                         ("busy CPU per packet, %s:" % what, "busy_us")):
            print("%-16s %-46s %6.3f   (median of per-round ratios %.3f)"
                  % (who, label, mm(b, k)[0] / mm(a, k)[0], pr(b, a, k)))
        print("%-16s %-46s %6.2f   (median of per-round differences %.2f)"
              % (who, "busy us per packet, %s:" % what.replace("/", "-"),
                 mm(b, "busy_us")[0] - mm(a, "busy_us")[0],
                 pr(b, a, "busy_us", lambda x, y: x - y)))
    for f in ("mlx5", "mana"):
        compare(f, "%s_xdp_drop" % f, "%s_stack_drop" % f, "stack drop / XDP_DROP")
    for f in ("mlx5", "mana"):
        for t in ("rxdrop", "l2fwd"):
            compare("%s AF_XDP %s" % (f, t), "%s_xsk_%s_zc" % (f, t), "%s_xsk_%s_copy" % (f, t),
                    "copy / zero-copy")
    XHDR = ("date,commit,kernel,variant,config,family,receiver,rounds,count,offered_pps,"
            "median_softirq_us_per_pkt,min_softirq_us_per_pkt,max_softirq_us_per_pkt,"
            "median_busy_us_per_pkt,min_busy_us_per_pkt,max_busy_us_per_pkt,median_rx_pps,"
            "median_cpu_util,median_vcpu_share,median_pkts_per_poll,"
            "ratio_stack_softirq_per_pkt,ratio_stack_busy_per_pkt,diff_stack_busy_us_per_pkt")
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
    print("(ratios and differences in target/bench/vm-xdp.csv: medians of the per-round values;")
    print(" for the AF_XDP rows: copy mode / zero-copy, rsnic-xsk pinned to CPU 0 with the rest)")
    print("appended: target/bench/vm-xdp.csv (%d rows)" % len(xrows))
# AF_XDP txonly: the tool's own rate, zero-copy against copy.
tx = {}
for line in open(sys.argv[3]):
    kind, *kv = line.split()
    d = dict(x.split("=", 1) for x in kv)
    if kind == "xsktx" and d.get("pps"):
        tx.setdefault(d["config"], {})[int(d["round"])] = (int(d["pps"]), d.get("bind"))
if tx:
    print()
    print("VM AF_XDP txonly (rsnic-xsk, 64-byte frames, %s per run, queue 0 of the sending port, as"
          % info.get("xsk_tx_count", "?"))
    print("fast as it goes; the peer drops them with XDP_DROP); packets/s first to last completion:")
    for f in ("mlx5", "mana"):
        for c in ("%s_xsk_txonly_zc" % f, "%s_xsk_txonly_copy" % f):
            if c in tx:
                p = [v[0] for v in tx[c].values()]
                m = statistics.median(p)
                print("%-22s bound %-9s median %8.0f pps  min %8d  max %8d  spread %3.0f%%" % (
                    c, sorted({v[1] for v in tx[c].values()})[0], m, min(p), max(p),
                    100 * (max(p) - min(p)) / m if m else 0))
    for f in ("mlx5", "mana"):
        a, b = tx.get("%s_xsk_txonly_zc" % f, {}), tx.get("%s_xsk_txonly_copy" % f, {})
        r = [a[i][0] / b[i][0] for i in a if i in b and b[i][0]]
        if r:
            print("%s ratio txonly zero-copy / copy: %.3f (median of per-round ratios; min %.3f,"
                  " max %.3f)" % (f, statistics.median(r), min(r), max(r)))
PY
