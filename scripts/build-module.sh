#!/usr/bin/env bash
# Builds rsnic.ko against KDIR (default: the test kernel of KERNEL_VARIANT) in
# target/kbuild/<variant>/, a copy of the sources, so that builds for several kernels can sit
# side by side and the source tree stays clean. rustfmt-checked, clippy (CLIPPY=1) clean,
# warnings are errors. Prints the path of the module; Kbuild's output goes to
# target/kbuild/module-<variant>.log (its last lines are shown if the build fails;
# RSNIC_VERBOSE=1 shows all of it as it comes).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kdir=${KDIR:-$(rsnic_kdir)}
[ -f "$kdir/Module.symvers" ] || [ -f "$kdir/.config" ] ||
	rsnic_die "KDIR=$kdir is not a configured kernel build directory"
ksrc=$(sed -n 's/^KERNELSRC\s*:=\s*//p;s/^include \(.*\)\/Makefile$/\1/p' "$kdir/Makefile" 2>/dev/null | head -n1)
[ -n "$ksrc" ] || ksrc=$kdir

# rustfmt with the kernel's settings, over every file the kernel crate pulls in.
rustfmt --check --edition 2021 --config-path "$ksrc/.rustfmt.toml" \
	"$RSNIC_ROOT/drivers/net/ethernet/rsnic/rsnic_main.rs" >&2 ||
	rsnic_die "rustfmt: run 'make fmt'"

variant=${KDIR:+custom}
variant=${variant:-$KERNEL_VARIANT}
out="$RSNIC_ROOT/target/kbuild/$variant"
mkdir -p "$out"
# Copy the sources, never build products (a stale *.mod from an in-place build would make
# Kbuild link old objects). Excluded names in the copy are kept, so builds stay incremental.
rsync -a --delete --exclude /target --exclude /.git --exclude /host \
	--exclude '*.o' --exclude '*.ko' --exclude '*.mod' --exclude '*.mod.c' --exclude '.*.cmd' \
	--exclude '*.d' --exclude modules.order --exclude Module.symvers \
	--exclude bindings_generated.rs \
	"$RSNIC_ROOT/" "$out/"
log="$RSNIC_ROOT/target/kbuild/module-$variant.log"
what="the $variant test kernel"
[ -z "${KDIR:-}" ] || what=$kdir
rsnic_log "building rsnic.ko for $what (log: ${log#"$RSNIC_ROOT"/})"
: >"$log"
# Compiler errors come before make's own closing lines: show more of the log than usual.
RSNIC_LOG_TAIL=${RSNIC_LOG_TAIL:-100} rsnic_logged "$log" \
	make -C "$kdir" M="$out" LLVM="$LLVM_SUFFIX" CLIPPY="${CLIPPY:-1}" -j"$(nproc)" modules
echo "$out/rsnic.ko"
