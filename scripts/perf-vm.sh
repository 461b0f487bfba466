#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make perf-vm: where the CPU goes in the test VM while pktgen sends through an rsnic port
# (issue 12, the kernel side): boots the VM once per family, runs scripts/vm/perf.sh there
# (perf record -e cpu-clock -a around a pktgen run of 64-byte frames, burst 32, one queue),
# and prints the share of samples in rsnic's driver, in its device model, in the rest of
# the kernel, idle and user space, with the top driver and model symbols. The lines are kept
# in target/bench/vm-perf.txt. Shares move with the machine's load; compare sides within a
# run.
#
#   PERF_FAMILIES="mlx5 mana"   the families (default both)
#   PERF_COUNT=N                packets per run (default 200000)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$RSNIC_ROOT"

rsnic_vm_bench_prep
: >"$OUT/vm-perf.txt"
for fam in ${PERF_FAMILIES:-mlx5 mana}; do
	rsnic_log "VM perf: $fam (serial log: target/bench/vm-perf-$fam.log)"
	rc=0
	RSNIC_VM_QUIET_BOOT=1 scripts/vm-run.sh --log "$OUT/vm-perf-$fam.log" \
		env PERF_FAMILY="$fam" PERF_COUNT="${PERF_COUNT:-200000}" scripts/vm/perf.sh \
		2>/dev/null || rc=$?
	grep -a "RSNIC-PERF" "$OUT/vm-perf-$fam.log" | sed 's/^.*RSNIC-PERF //' | tr -d '\r' |
		tee -a "$OUT/vm-perf.txt"
	[ "$rc" = 0 ] || rsnic_die "the $fam run failed ($rc); see target/bench/vm-perf-$fam.log"
done
