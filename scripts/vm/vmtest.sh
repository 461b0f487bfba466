#!/usr/bin/env bash
# make vmtest: runs the VM tests given as arguments (tests/vm/NN-name.sh) in the test VM.
# Tests that tests/vm/manifest lists as "single-thread" (they patch kernel text under
# traffic) run in a second VM under single-threaded TCG, the others in one VM under
# multi-threaded TCG, so that the vCPUs really run at the same time. Each VM ends with its
# own "vm: N passed, N failed, N skipped" line; the exit status is non-zero if either VM
# failed.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"

manifest=$RSNIC_ROOT/tests/vm/manifest
[ -r "$manifest" ] || rsnic_die "no test manifest at $manifest"
single=" $(awk '$1 == "single-thread" { gsub(",", " ", $2); printf "%s ", $2 }' "$manifest")"

multi=()
alone=()
for t in "$@"; do
	case "$single" in
	*" $(basename "$t" .sh) "*) alone+=("$t") ;;
	*) multi+=("$t") ;;
	esac
done

rc=0
if [ ${#multi[@]} -gt 0 ]; then
	"$RSNIC_ROOT/scripts/vm-run.sh" "$RSNIC_ROOT/scripts/vm/run-tests.sh" "${multi[@]}" || rc=1
fi
if [ ${#alone[@]} -gt 0 ]; then
	rsnic_log "tests that patch kernel text under traffic, in a VM under single-threaded TCG: ${alone[*]##*/}"
	RSNIC_VM_TCG=thread=single "$RSNIC_ROOT/scripts/vm-run.sh" \
		--log "$RSNIC_ROOT/target/vm/$KERNEL_VARIANT-single-serial.log" \
		"$RSNIC_ROOT/scripts/vm/run-tests.sh" "${alone[@]}" || rc=1
fi
exit "$rc"
