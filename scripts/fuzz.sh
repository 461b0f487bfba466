#!/usr/bin/env bash
# Fuzzes the hardware boundary in both directions (host/fuzz, cargo-fuzz + libFuzzer), for
# both families: the driver-side SQ and RQ against a hostile device (mlx5: tx_completion,
# rx_completion; MANA: mana_tx_completion, mana_rx_completion, and the control path's
# mana_hwc) and the simulated device against a hostile driver (mlx5: device_wqe,
# device_cmd; MANA: mana_device_wqe); the ConnectX control plane, driver side, against a
# hostile device (cmd_output: command queue, command parsers and bring-up; eqe: event
# queues).
#
#   FUZZ_SECONDS=60        run time per target (libFuzzer -max_total_time)
#   FUZZ_TARGETS="a b"     which targets (default: all ten)
#
# Each target starts from its committed seeds (host/fuzz/seeds/<target>/) plus the working
# corpus of earlier runs (host/fuzz/corpus/<target>/, not committed). Builds are optimised
# with debug assertions and overflow checks on (as in the debug kernel), without a
# sanitizer: the code under test has no unsafe. Prints the executions per target; fails if a
# target crashes (the reproducer is in host/fuzz/artifacts/<target>/).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$RSNIC_ROOT"

FUZZ_SECONDS=${FUZZ_SECONDS:-60}
read -r -a targets <<<"${FUZZ_TARGETS:-tx_completion rx_completion device_wqe device_cmd mana_tx_completion mana_rx_completion mana_device_wqe cmd_output eqe mana_hwc}"
fuzz_dir=host/fuzz
logs=$fuzz_dir/target/logs
flags=(--fuzz-dir "$fuzz_dir" -O -a -s none)

command -v cargo-fuzz >/dev/null || rsnic_die "cargo-fuzz is missing: run make setup"
rustup run nightly rustc --version >/dev/null 2>&1 || rsnic_die "the nightly toolchain is missing: run make setup"

# Fuzz builds use their own target dir (host/fuzz/target), never the workspace's.
unset CARGO_TARGET_DIR
rsnic_log "fuzz: building ${targets[*]}"
nice cargo +nightly fuzz build "${flags[@]}" >/dev/null 2>"$fuzz_dir/build.log" || {
	cat "$fuzz_dir/build.log" >&2
	rsnic_die "fuzz build failed"
}
rm -f "$fuzz_dir/build.log"
mkdir -p "$logs"

failed=0
total=0
for t in "${targets[@]}"; do
	mkdir -p "$fuzz_dir/corpus/$t" "$fuzz_dir/artifacts/$t"
	rsnic_log "fuzz: $t for ${FUZZ_SECONDS}s"
	rc=0
	nice -n 10 cargo +nightly fuzz run "${flags[@]}" "$t" \
		"$fuzz_dir/corpus/$t" "$fuzz_dir/seeds/$t" -- \
		-max_total_time="$FUZZ_SECONDS" -print_final_stats=1 -timeout=10 \
		-rss_limit_mb=1024 >"$logs/$t.log" 2>&1 || rc=$?
	execs=$(awk '/stat::number_of_executed_units:/ {n = $2} END {print n + 0}' "$logs/$t.log")
	cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$logs/$t.log" | tail -n1 || true)
	total=$((total + execs))
	if [ "$rc" = 0 ] && ! grep -q '^==[0-9]*== ERROR: libFuzzer' "$logs/$t.log"; then
		echo "fuzz ok - $t: $execs executions in ${FUZZ_SECONDS}s ($cov)"
	else
		failed=$((failed + 1))
		echo "fuzz not ok - $t: crash after $execs executions (exit $rc, log $logs/$t.log)"
		grep -E 'panicked at|ERROR: libFuzzer|Test unit written to' "$logs/$t.log" | head -n 5 || true
	fi
done
echo "fuzz: ${#targets[@]} targets, $total executions, $failed crashed"
[ "$failed" = 0 ]
