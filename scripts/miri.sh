#!/usr/bin/env bash
# Runs the host tests of the kernel-free code under Miri: the library tests of
# rsnic-testbed and its dp_*, sim_* and mana_* integration tests (the driver-side data paths
# of both families, the simulated devices and the host DMA arena they meet in). Heavy tests
# scale their iteration counts down under cfg(miri); they still check the same things. Extra
# Miri flags can be given in MIRIFLAGS.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$RSNIC_ROOT"

rustup run nightly rustc --version >/dev/null 2>&1 || rsnic_die "the nightly toolchain is missing: run make setup"
for c in miri rust-src; do
	if ! rustup component list --toolchain nightly --installed 2>/dev/null | grep -q "^$c"; then
		rsnic_log "adding nightly component $c"
		rustup component add --toolchain nightly "$c"
	fi
done

start=$(date +%s)
rsnic_log "miri: rsnic-testbed lib, dp_*, sim_* and mana_* tests"
nice cargo +nightly miri test --quiet -p rsnic-testbed --lib --test 'dp_*' --test 'sim_*' \
	--test 'mana_*'
echo "miri ok - rsnic-testbed lib, dp_*, sim_*, mana_* in $(($(date +%s) - start))s"
