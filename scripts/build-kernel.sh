#!/usr/bin/env bash
# Builds (or reuses) the rsnic test kernel: Debian's linux-source-6.12 with CONFIG_RUST=y,
# configured from tinyconfig plus scripts/kconfig/rsnic.config (and debug.config for
# KERNEL_VARIANT=debug). The build directory lives in $RSNIC_CACHE, keyed on the source
# version, the fragments, the variant and the toolchain, so a second run takes seconds.
# Prints the build directory (usable as KDIR) on stdout.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

case "$KERNEL_VARIANT" in normal | debug) ;; *) rsnic_die "KERNEL_VARIANT must be normal or debug, not '$KERNEL_VARIANT'" ;; esac

tarball=/usr/src/linux-source-6.12.tar.xz
[ -f "$tarball" ] || rsnic_die "$tarball is missing: run scripts/setup.sh first"

src=$(rsnic_ksrc)
if [ ! -f "$src/.rsnic-extracted" ]; then
	rsnic_log "extracting $tarball into $src"
	rm -rf "$src" "$src.tmp"
	mkdir -p "$src.tmp"
	tar -C "$src.tmp" -xf "$tarball"
	mv "$src.tmp/linux-source-6.12" "$src"
	rmdir "$src.tmp"
	touch "$src/.rsnic-extracted"
fi

kdir=$(rsnic_kdir)
stamp="$kdir/.rsnic-built"
# One build per directory at a time: a second caller waits, then reuses the result.
mkdir -p "$RSNIC_CACHE/kernel"
exec 9>"$RSNIC_CACHE/kernel/.lock-$(basename "$kdir")"
flock 9
make_k=(make -C "$src" O="$kdir" LLVM="$LLVM_SUFFIX" ARCH=x86_64)
jobs=$(nproc)

if [ -f "$stamp" ] && [ -f "$kdir/arch/x86/boot/bzImage" ]; then
	rsnic_log "reusing cached $KERNEL_VARIANT kernel in $kdir"
else
	rsnic_log "building the $KERNEL_VARIANT test kernel in $kdir (a few minutes on 2 cores)"
	mkdir -p "$kdir"
	"${make_k[@]}" -s rustavailable >&2
	"${make_k[@]}" -s tinyconfig >&2
	frags=("$RSNIC_ROOT/scripts/kconfig/rsnic.config")
	[ "$KERNEL_VARIANT" = debug ] && frags+=("$RSNIC_ROOT/scripts/kconfig/debug.config")
	(cd "$kdir" && "$src/scripts/kconfig/merge_config.sh" -m -O "$kdir" "$kdir/.config" "${frags[@]}" >&2)
	"${make_k[@]}" -s olddefconfig >&2
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
	[ "$missing" = 0 ] || rsnic_die "the config fragments did not apply cleanly"
	"${make_k[@]}" -j"$jobs" bzImage modules_prepare >&2
	# Kernel modules of the test kernel itself (none are needed today, but keep it honest).
	"${make_k[@]}" -j"$jobs" modules >&2 || true
	touch "$stamp"
fi
echo "$kdir"
