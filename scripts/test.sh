#!/usr/bin/env bash
# The test command: host checks, then for the normal and the debug kernel the module build
# and the VM tests. Prints each stage's result and ends with "N passed, N failed".
set -uo pipefail
. "$(dirname "$0")/lib.sh"
cd "$RSNIC_ROOT"

pass=0
fail=0
stage() {
	local name=$1
	shift
	rsnic_log "stage: $name"
	if "$@"; then
		echo "stage ok - $name"
		pass=$((pass + 1))
	else
		echo "stage not ok - $name"
		fail=$((fail + 1))
	fi
}

stage "host: fmt, clippy, cargo test" make -s hostcheck
stage "host: fuzz smoke (20 s per target)" env FUZZ_SECONDS=20 make -s fuzz
for variant in ${RSNIC_TEST_VARIANTS:-normal debug}; do
	export KERNEL_VARIANT=$variant
	if stage "$variant: kernel" make -s kernel &&
		stage "$variant: module (rustfmt, CLIPPY=1, -Dwarnings)" make -s module >/dev/null; then
		stage "$variant: VM tests" make -s vmtest
	fi
done
echo "stages: $pass passed, $fail failed"
[ "$fail" = 0 ]
