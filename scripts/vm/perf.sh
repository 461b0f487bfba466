#!/usr/bin/env bash
# make perf-vm, the VM part (run inside the test VM by scripts/perf-vm.sh): where the CPU
# goes while pktgen sends 64-byte UDP frames from port A to port B (namespace peer), one
# queue, burst 32, the family's default data path. `perf record -e cpu-clock -a` samples
# every CPU for the whole run (the guest has no hardware counters under TCG); each sample's
# symbol is put on one side:
#   driver   rsnic's code above the hardware line (the port, channels, NAPI, the data path
#            of hwif/, the family code, rust/ abstractions and C helpers)
#   model    rsnic's device host and simulated device (host::, sim::: what a real NIC's
#            silicon would do; it runs on the guest's CPUs here)
#   kernel   everything else in the kernel (pktgen, the stack, the scheduler)
#   idle     the idle loop
#   user     user space (the test's shell, perf itself)
#   dma-copy the byte copies into and out of DMA memory, which driver and model share
#   rsnic-generic  library code monomorphised into the module (core::slice::...)
# Prints one line per side with its share of the samples, then the top symbols of each
# rsnic side. Lines start with "RSNIC-PERF" for the host to pick out.
#
#   PERF_FAMILY=mlx5|mana   the family (default mlx5)
#   PERF_COUNT=N            packets pktgen sends (default 200000)
#   PERF_TOP=N              symbols listed per rsnic side (default 12)
set -eu
. "$RSNIC_ROOT/tests/vm/lib.sh"
. "$RSNIC_ROOT/tests/vm/traffic.sh"

RSNIC_FAMILY=${PERF_FAMILY:-mlx5}
COUNT=${PERF_COUNT:-200000}
TOP=${PERF_TOP:-12}
PERF=$(command -v perf) || fail "no perf on the host (package linux-perf)"

setup_pair
quiet_pair
ethtool -L "$A" combined 1
# The symbols of the module, for perf's report.
echo 0 >/proc/sys/kernel/kptr_restrict
echo -1 >/proc/sys/kernel/perf_event_paranoid

DATA=/tmp/perf.data
"$PERF" record -q -e cpu-clock -a -o "$DATA" 2>/tmp/perf.err &
PERF_PID=$!
sleep 1
pktgen_run "$A" "$COUNT" 10.10.0.2 "$MAC_B" 32
kill -INT "$PERF_PID"
wait "$PERF_PID" || true
echo "RSNIC-PERF family $RSNIC_FAMILY: pktgen $PG_SENT packets at $PG_PPS pps (burst 32, one queue)"

# One line per sample: its address and symbol. The module's symbols show in perf as the
# kernel's (it has no .ko under /lib/modules here), so rsnic's samples are the ones whose
# address falls inside the module (/proc/modules); Rust symbols are v0-mangled with the
# crate's name (rsnic_main) followed by the item's module path, so the device host's and
# model's start 10rsnic_main4host or 10rsnic_main3sim, the driver's (hwif/, the channels,
# the ports, rust/'s kernel_ext) any other path of the crate, and the C helpers are named
# rsnic_helper_*. Monomorphised library code in the module (core::slice::..., named after
# its crate) is counted apart, as "rsnic-generic", and so are the byte copies into and out
# of DMA memory (rust/dma.rs's copy_to_shared / copy_from_shared), which both sides use:
# the driver for its descriptors and CQEs, the model for its DMA (PhysBus, whose address
# check, rsnic_helper_phys_to_virt_checked, is the model's).
read -r MOD_SIZE MOD_BASE < <(awk '$1 == "rsnic" { print $2, $6 }' /proc/modules) ||
	fail "rsnic is not in /proc/modules"
"$PERF" script -i "$DATA" -F ip,sym 2>/tmp/perf.rerr >/tmp/perf.samples ||
	fail "perf script failed: $(cat /tmp/perf.rerr)"
cat >/tmp/perf-split.py <<'EOF'
import collections
import re
import sys

top, base, size = int(sys.argv[1]), int(sys.argv[2], 16), int(sys.argv[3])
sides = collections.Counter()
syms = collections.defaultdict(collections.Counter)
total = 0
for line in open(sys.argv[4]):
    f = line.split(None, 1)
    if not f:
        continue
    try:
        ip = int(f[0], 16)
    except ValueError:
        continue
    sym = f[1].strip() if len(f) > 1 else "?"
    total += 1
    if base <= ip < base + size:
        if re.search(r"10rsnic_main(4host|3sim)", sym) or sym == "rsnic_helper_phys_to_virt_checked":
            side = "model"
        elif re.search(r"kernel_ext3dma(14copy_to_shared|16copy_from_shared)", sym):
            side = "dma-copy"
        elif "10rsnic_main" in sym or sym.startswith("rsnic_"):
            side = "driver"
        else:
            side = "rsnic-generic"
    elif re.search(r"(safe_halt|default_idle|cpu_idle|do_idle|acpi_idle|poll_idle|mwait_idle)", sym):
        side = "idle"
    elif ip >= 0xffff800000000000:
        side = "kernel"
    else:
        side = "user"
    sides[side] += 1
    syms[side][sym] += 1
print("RSNIC-PERF samples %d" % total)
for side in ("driver", "model", "dma-copy", "rsnic-generic", "kernel", "idle", "user"):
    print("RSNIC-PERF %-13s %6.2f %%" % (side, 100.0 * sides[side] / max(total, 1)))
for side in ("driver", "model", "rsnic-generic", "kernel"):
    for sym, n in syms[side].most_common(top):
        print("RSNIC-PERF   %-13s %6.2f %%  %s" % (side, 100.0 * n / max(total, 1), sym[:140]))
EOF
python3 /tmp/perf-split.py "$TOP" "$MOD_BASE" "$MOD_SIZE" /tmp/perf.samples
rm -f "$DATA" /tmp/perf.samples
