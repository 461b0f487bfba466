#!/usr/bin/env bash
# Builds (or reuses) the kernel's own MANA driver, mana.ko, for the rsnic test kernel of
# KERNEL_VARIANT, and checks that the kernel build has its own ConnectX driver, mlx5_core.ko:
# the upstream drivers, which the vfio-user transport runs against rsnic's device models.
#
#   scripts/build-upstream.sh     (make upstream)
#
# Prints the paths of mlx5_core.ko and mana.ko (rsnic_upstream_ko in lib.sh), one a line.
# mana comes from drivers/net/ethernet/microsoft/mana of the same Debian source as the
# kernel, built out of tree (M=) against the kernel's build directory: its Kconfig says
# "depends on PCI_HYPERV", which the test kernel has not, but the code uses nothing of
# Hyper-V, so CONFIG_MICROSOFT_MANA=m on make's command line builds it; what it needs
# (AUXILIARY_BUS, PAGE_POOL) the kernel has built in, and modpost fails the build on any
# symbol the kernel lacks. Cached in $RSNIC_CACHE/upstream/<kernel>/ by the kernel's key
# (which includes the source version); Kbuild's output goes to
# $RSNIC_CACHE/logs/upstream-<kernel>.log (its tail is shown if the build fails).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kdir=$(rsnic_kdir)
[ -f "$kdir/.rsnic-built" ] ||
	rsnic_die "no built $KERNEL_VARIANT test kernel at $kdir: run 'make kernel KERNEL_VARIANT=$KERNEL_VARIANT'"
mlx5_ko=$(rsnic_upstream_ko mlx5 "$kdir")
[ -f "$mlx5_ko" ] ||
	rsnic_die "the $KERNEL_VARIANT test kernel has no $mlx5_ko (CONFIG_MLX5_CORE=m in scripts/kconfig/rsnic.config; a kernel built before it: remove $kdir and run 'make kernel')"
src=$(rsnic_ksrc)/drivers/net/ethernet/microsoft/mana
[ -f "$src/Makefile" ] || rsnic_die "no MANA driver source at $src"

mana_ko=$(rsnic_upstream_ko mana "$kdir")
out=$(dirname "$mana_ko")
name=$(basename "$(dirname "$out")")
log=$RSNIC_CACHE/logs/upstream-$name.log
mkdir -p "$out" "$RSNIC_CACHE/logs"
# One build per kernel at a time: a second caller waits, then reuses the result.
exec 9>"$out/../.lock"
flock 9
if [ -f "$out/.rsnic-built" ] && [ -f "$mana_ko" ]; then
	rsnic_log "reusing the upstream mana.ko for the $KERNEL_VARIANT kernel in $out"
else
	rsnic_log "building the upstream mana.ko for the $KERNEL_VARIANT test kernel (log: $log)"
	rm -f "$out/.rsnic-built"
	: >"$log"
	# A copy of the sources: Kbuild writes its objects beside them, and the extracted
	# source tree is shared (and the kernel build's, read-only to everyone else).
	rsync -a --delete --exclude '*.o' --exclude '*.ko' --exclude '.*.cmd' --exclude '*.mod' \
		--exclude '*.mod.c' --exclude modules.order --exclude Module.symvers \
		--exclude .rsnic-built "$src/" "$out/"
	rsnic_logged "$log" nice -n 10 make -C "$kdir" M="$out" LLVM="$LLVM_SUFFIX" \
		CONFIG_MICROSOFT_MANA=m -j"$(nproc)" modules ||
		rsnic_die "the upstream mana build failed (log: $log)"
	[ -f "$mana_ko" ] || rsnic_die "the build made no $mana_ko (log: $log)"
	touch "$out/.rsnic-built"
fi
echo "$mlx5_ko"
echo "$mana_ko"
