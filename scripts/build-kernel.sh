#!/usr/bin/env bash
# Builds (or reuses) the rsnic test kernel: Debian's linux-source-6.12 with CONFIG_RUST=y,
# configured from tinyconfig plus scripts/kconfig/rsnic.config (and debug.config for
# KERNEL_VARIANT=debug). The build directory lives in $RSNIC_CACHE, keyed on the source
# version, the fragments, the variant and the toolchain, so a second run takes seconds.
# Prints the build directory (usable as KDIR) on stdout, a few progress lines on stderr; the
# build's own output goes to $RSNIC_CACHE/logs/kernel-<variant>-<key>.log (its last lines
# are shown if it fails; RSNIC_VERBOSE=1 shows all of it as it comes).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

case "$KERNEL_VARIANT" in normal | debug) ;; *) rsnic_die "KERNEL_VARIANT must be normal or debug, not '$KERNEL_VARIANT'" ;; esac

tarball=/usr/src/linux-source-6.12.tar.xz
[ -f "$tarball" ] || rsnic_die "$tarball is missing: run scripts/setup.sh first"

src=$(rsnic_ksrc)
# One extraction at a time: a second caller would remove the first one's half-done tree.
mkdir -p "$(dirname "$src")"
exec 8>"$src.lock"
flock 8
if [ ! -f "$src/.rsnic-extracted" ]; then
	rsnic_log "extracting $tarball into $src"
	rm -rf "$src" "$src.tmp"
	mkdir -p "$src.tmp"
	tar -C "$src.tmp" -xf "$tarball"
	mv "$src.tmp/linux-source-6.12" "$src"
	rmdir "$src.tmp"
	touch "$src/.rsnic-extracted"
fi
exec 8>&-

kdir=$(rsnic_kdir)
stamp="$kdir/.rsnic-built"
mkdir -p "$RSNIC_CACHE/kernel" "$RSNIC_CACHE/logs"
log="$RSNIC_CACHE/logs/kernel-$(basename "$kdir").log"
# One build per directory at a time: a second caller waits, then reuses the result.
exec 9>"$RSNIC_CACHE/kernel/.lock-$(basename "$kdir")"
if ! flock -n 9; then
	rsnic_log "waiting for another build of the $KERNEL_VARIANT kernel to finish (log: $log)"
	flock 9
fi
make_k=(make -C "$src" O="$kdir" LLVM="$LLVM_SUFFIX" ARCH=x86_64)
jobs=$(nproc)

if [ -f "$stamp" ] && [ -f "$kdir/arch/x86/boot/bzImage" ]; then
	rsnic_log "reusing cached $KERNEL_VARIANT kernel in $kdir"
else
	start=$(date +%s)
	rsnic_log "building the $KERNEL_VARIANT test kernel (log: $log)"
	rsnic_log "  in $kdir; configuring"
	mkdir -p "$kdir"
	: >"$log"
	rsnic_logged "$log" "${make_k[@]}" -s rustavailable
	rsnic_logged "$log" "${make_k[@]}" -s tinyconfig
	frags=("$RSNIC_ROOT/scripts/kconfig/rsnic.config")
	[ "$KERNEL_VARIANT" = debug ] && frags+=("$RSNIC_ROOT/scripts/kconfig/debug.config")
	# merge_config.sh reports every symbol a fragment sets again ("Value of ... is
	# redefined"): that is the point of a fragment, so it stays in the log.
	(cd "$kdir" && rsnic_logged "$log" "$src/scripts/kconfig/merge_config.sh" -m -O "$kdir" \
		"$kdir/.config" "${frags[@]}")
	rsnic_logged "$log" "${make_k[@]}" -s olddefconfig
	# Every fragment line must have survived olddefconfig (a dependency we missed would
	# silently drop it).
	missing=0
	for f in "${frags[@]}"; do
		while IFS= read -r line; do
			case "$line" in
			CONFIG_*=n | "# CONFIG_"*" is not set")
				sym=${line#\# }; sym=${sym%% *}; sym=${sym%%=*}
				if grep -q "^$sym=[ym]" "$kdir/.config"; then rsnic_log "config: $sym should be off"; missing=1; fi ;;
			CONFIG_*=*)
				grep -qx "$line" "$kdir/.config" || { rsnic_log "config: '$line' did not stick"; missing=1; } ;;
			esac
		done <"$f"
	done
	[ "$missing" = 0 ] || rsnic_die "the config fragments did not apply cleanly (log: $log)"
	rsnic_log "  compiling with $jobs jobs (20 minutes or more on 2 cores)"
	rsnic_logged "$log" "${make_k[@]}" -j"$jobs" bzImage modules_prepare
	# The test kernel's own modules: the kernel's ConnectX driver (mlx5_core), which the
	# vfio-user tests load, and what the upstream mana module is built against
	# (scripts/build-upstream.sh). A kernel without them is not the test kernel: no stamp.
	rsnic_log "  compiling the kernel's modules"
	rsnic_logged "$log" "${make_k[@]}" -j"$jobs" modules ||
		rsnic_die "make modules failed for the $KERNEL_VARIANT kernel (log: $log)"
	touch "$stamp"
	rsnic_log "built the $KERNEL_VARIANT test kernel in $((($(date +%s) - start) / 60)) min"
fi
echo "$kdir"
