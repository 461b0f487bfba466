# Shared settings for rsnic's scripts. Source it; it sets no options of the caller's shell.
# shellcheck shell=bash

RSNIC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RSNIC_CACHE=${RSNIC_CACHE:-/var/cache/rsnic}
KERNEL_VARIANT=${KERNEL_VARIANT:-normal}
LLVM_SUFFIX=${LLVM_SUFFIX:--14}
export PATH="$HOME/.cargo/bin:$PATH"

rsnic_log() { printf '[rsnic] %s\n' "$*" >&2; }
rsnic_die() { printf '[rsnic] error: %s\n' "$*" >&2; exit 1; }

# rsnic_logged LOG COMMAND...: runs COMMAND with its output (stdout and stderr) appended to
# LOG, so that a long build shows only rsnic's own progress lines. On failure prints the
# last lines of LOG (RSNIC_LOG_TAIL, default 40) and its path, and returns COMMAND's status.
# RSNIC_VERBOSE=1 also copies the output to stderr as it comes.
rsnic_logged() {
	local log=$1 rc=0
	shift
	if [ "${RSNIC_VERBOSE:-0}" = 1 ]; then
		# (in an if, so that errexit in the caller does not end it with the pipeline)
		if "$@" 2>&1 | tee -a "$log" >&2; then rc=${PIPESTATUS[0]}; else rc=${PIPESTATUS[0]}; fi
	else
		"$@" >>"$log" 2>&1 || rc=$?
	fi
	if [ "$rc" != 0 ]; then
		rsnic_log "failed (exit $rc): $*"
		tail -n "${RSNIC_LOG_TAIL:-40}" "$log" | sed 's/^/  | /' >&2
		rsnic_log "full log: $log"
	fi
	return "$rc"
}

# The Debian package that carries the kernel source, and its version (part of the cache key).
rsnic_ksrc_version() {
	dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || echo unknown
}

# The extracted kernel source tree (also used in the VM for tools/net/ynl).
rsnic_ksrc() {
	echo "$RSNIC_CACHE/src/linux-source-6.12-$(rsnic_ksrc_version)"
}

# Cache key of a test kernel: source version, config fragments, variant and toolchain.
rsnic_kernel_key() {
	{
		rsnic_ksrc_version
		echo "$KERNEL_VARIANT"
		cat "$RSNIC_ROOT/scripts/kconfig/rsnic.config"
		[ "$KERNEL_VARIANT" = debug ] && cat "$RSNIC_ROOT/scripts/kconfig/debug.config"
		"clang$LLVM_SUFFIX" --version | head -n1
		rustc --version
		bindgen --version 2>/dev/null
	} | sha256sum | cut -c1-16
}

# The build directory of the test kernel for $KERNEL_VARIANT (it may not be built yet).
rsnic_kdir() {
	echo "$RSNIC_CACHE/kernel/$KERNEL_VARIANT-$(rsnic_kernel_key)"
}

# The QEMU every VM runs in: Debian trixie-backports' qemu-system-x86 (QEMU >= 10.1 has
# vfio-user-pci, and its multi-threaded TCG honours cross-modifying code; bookworm's 7.2 has
# neither), pinned, in a trixie tree that scripts/setup.sh (part base) makes with
# debootstrap, because it needs trixie's glibc; scripts/qemu runs it through that tree's own
# loader. RSNIC_QEMU_TREE names another tree.
# shellcheck disable=SC2034 # (for setup.sh and scripts/qemu)
RSNIC_QEMU_VERSION=1:11.1.3+ds-2~bpo13+1
rsnic_qemu_tree() {
	echo "${RSNIC_QEMU_TREE:-$RSNIC_CACHE/qemu/trixie}"
}
# rsnic_qemu_check: stops with what to run unless that QEMU is installed.
rsnic_qemu_check() {
	local tree have
	tree=$(rsnic_qemu_tree)
	have=$(cat "$tree/.rsnic-qemu-version" 2>/dev/null || true)
	[ "$have" = "$RSNIC_QEMU_VERSION" ] ||
		rsnic_die "no QEMU $RSNIC_QEMU_VERSION in $tree${have:+ (it has $have)}: run 'make setup-base'"
}

# rsnic_upstream_ko FAMILY [KDIR]: the kernel's own driver of FAMILY for the test kernel
# of $KERNEL_VARIANT (or the one built in KDIR, rsnic_kdir's answer), a judge of rsnic's
# device models: mlx5_core.ko from the kernel build itself, mana.ko from
# scripts/build-upstream.sh (built out of tree: its Kconfig wants Hyper-V).
rsnic_upstream_ko() {
	local kdir=${2:-$(rsnic_kdir)}
	case $1 in
	mlx5) echo "$kdir/drivers/net/ethernet/mellanox/mlx5/core/mlx5_core.ko" ;;
	mana) echo "$RSNIC_CACHE/upstream/$(basename "$kdir")/mana/mana.ko" ;;
	*) rsnic_die "no upstream driver for family '$1'" ;;
	esac
}

# rsnic_vm_bench_prep: for the scripts that boot the test VM to measure (bench-vm.sh,
# perf-vm.sh): builds or reuses the test kernel and, unless RSNIC_KO names a module built
# before (scripts/vm-run.sh loads it), rsnic.ko, their progress lines only; makes
# target/bench and sets OUT to it. Returns the failing build's status if one fails.
rsnic_vm_bench_prep() {
	"$RSNIC_ROOT/scripts/build-kernel.sh" >/dev/null || return
	[ -n "${RSNIC_KO:-}" ] || "$RSNIC_ROOT/scripts/build-module.sh" >/dev/null || return
	OUT=$RSNIC_ROOT/target/bench
	mkdir -p "$OUT"
}
