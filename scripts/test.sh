#!/usr/bin/env bash
# The test command: host checks, then for the normal and the debug kernel the module build
# and the VM tests. Prints each stage's result and ends with "N passed, N failed".
set -uo pipefail
. "$(dirname "$0")/lib.sh"
cd "$RSNIC_ROOT"

pass=0
fail=0
# Each stage's output is kept (its failures are repeated at the end: a CI log is often
# read from its tail only).
logdir=$(mktemp -d "${TMPDIR:-/tmp}/rsnic-test.XXXXXX")
summary=()
# Each stage's result with its wall time, so that the command's budget can be watched.
stage() {
	local name=$1 t0=$SECONDS log
	shift
	log=$logdir/stage-$((pass + fail)).log
	rsnic_log "stage: $name"
	if "$@" 2>&1 | tee "$log"; then
		echo "stage ok - $name ($((SECONDS - t0)) s)"
		summary+=("stage ok - $name ($((SECONDS - t0)) s)")
		pass=$((pass + 1))
	else
		echo "stage not ok - $name ($((SECONDS - t0)) s)"
		summary+=("stage not ok - $name ($((SECONDS - t0)) s)")
		# What failed inside it: the failing tests and their FAIL lines, the last panic.
		while IFS= read -r line; do summary+=("    $line"); done < <(
			grep -aE '^(not ok |FAIL: |  [a-z0-9]+/[^ ]+ \(exit|.*Kernel panic|RSNIC-VM-EXIT: [^0]|make: \*\*\*)' "$log" |
				tail -n 30)
		fail=$((fail + 1))
	fi
}

stage "host: fmt, clippy, cargo test" make -s hostcheck
# Both families' port pairs with faults drawn at random, every packet accounted for after
# every round (10^7 per family, about 25 s in release; RSNIC_CHAOS_PACKETS=1e8 by hand).
stage "host: chaos soak (10^7 packets per family)" make -s host-soak
# A smoke: ten targets at 5 s each (a new target's crash in the first seconds, as the eqe
# target's after the page requests came); full-length runs are `make fuzz`
# (FUZZ_SECONDS=60), their results in rsnic-datapath.rst.
stage "host: fuzz smoke (5 s per target)" env FUZZ_SECONDS=5 make -s fuzz
# The debug kernel (KASAN, lockdep, kmemleak; 3-5x slower under TCG) runs a representative
# subset: on both families bring-up with its failures (load and unload included) and
# pktgen through the default data path (MPWQE on; RX doorbells batched); on ConnectX only
# (code shared by the families, see one_family_on_debug in tests/vm/lib.sh) unload under
# traffic, AF_XDP in zero-copy mode (XDP programs redirecting to a socket) and
# netconsole under traffic (lockdep on netpoll's path: rsnic.rst, "The SQ lock and
# netpoll"); and a device that goes away under traffic on both families' real functions
# (the vfio-user stage below: probe, MSI-X, DMA, the surprise removal, rmmod). A process
# costs seconds on that kernel, and the machines lose a third of their CPU to their host at
# times: the subset keeps the test command within its budget. The clean run of c69740d
# took 112 s for 17-cqe, whose decompression is safe Rust of hwif/, fuzzed on the host, and
# 120 s on ConnectX for 65-rmmod-traffic on the real functions, whose unload under traffic
# the in-kernel host's run covers: both left to `make test-debug`, which runs every test on
# the debug kernel (RSNIC_DEBUG_TESTS=all).
# The normal kernel runs every test on both families.
# RSNIC_DEBUG_TESTS="all" (or a list of test names) changes the subset.
# The module build, its progress lines kept out of the stage list (its log is named on
# failure).
module_quiet() { make -s module >/dev/null; }
debug_tests=${RSNIC_DEBUG_TESTS:-15-bringup 62-pktgen 65-rmmod-traffic 92-afxdp 71-netconsole}
for variant in ${RSNIC_TEST_VARIANTS:-normal debug}; do
	export KERNEL_VARIANT=$variant
	tests=()
	if [ "$variant" = debug ] && [ "$debug_tests" != all ]; then
		list=""
		for t in $debug_tests; do list+=" tests/vm/$t.sh"; done
		tests=("TESTS=${list# }")
	fi
	if stage "$variant: kernel" make -s kernel &&
		stage "$variant: module (rustfmt, CLIPPY=1, -Dwarnings)" module_quiet; then
		# The README's main job, as a user runs it (both families), on the normal kernel:
		# the first command a newcomer types must pass wherever the tests do.
		if [ "$variant" = normal ]; then
			stage "the main job: make demo (both families)" make demo
		fi
		stage "$variant: VM tests" make -s vmtest "${tests[@]}"
		# The vfio-user transport (rsnic.rst, "The vfio-user transport"): the device in its
		# own process behind PCI functions with the hardware's IDs (MANA VF 1414:00ba, a
		# ConnectX VF 15b3:101e per port), which rsnic binds as it binds hardware. The
		# normal kernel runs the vfio subset (make vmtest-vfio: ports, ethtool, reload,
		# ping, pktgen, rmmod under traffic, the kernel's drivers/net selftests, the
		# kernel's own mana and mlx5 drivers on the models, the device process dying under
		# rsnic) on both families; on the debug kernel each family's functions carry
		# traffic and go away (probe, MSI-X, DMA, the surprise removal and rmmod under
		# KASAN, lockdep and kmemleak).
		if [ "$variant" = debug ]; then
			stage "$variant: VM tests on the vfio-user transport (device gone)" \
				make -s vmtest-vfio VFIO_TESTS=tests/vm/99-device-gone.sh
		else
			stage "$variant: VM tests on the vfio-user transport" make -s vmtest-vfio
		fi
	fi
done
echo "== summary"
printf '%s\n' "${summary[@]}"
echo "stages: $pass passed, $fail failed ($SECONDS s)"
rm -rf "$logdir"
[ "$fail" = 0 ]
