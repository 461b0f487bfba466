#!/usr/bin/env bash
# Installs what rsnic needs on a Debian bookworm machine, idempotently, in parts:
#
#   scripts/setup.sh [base] [test] [bench]     (no argument: all of them)
#
#   base   what make demo, kernel, module and hostcheck use: Debian packages (kernel source
#          and build tools, LLVM 14, busybox, the network tools the demo runs in the VM),
#          rustup's rust-src, rustfmt and clippy, bindgen-cli at a pinned version; and the
#          QEMU every VM runs in (scripts/qemu): trixie-backports' qemu-system-x86 at a
#          pinned version (RSNIC_QEMU_VERSION in lib.sh), in a trixie tree made by
#          debootstrap in $RSNIC_CACHE/qemu (it needs trixie's glibc; the host's apt stays
#          as it is), the downloaded .debs kept beside it; 450 MB (the tree 350, the .debs
#          90) and a minute or two, once. It has vfio-user-pci (the vfio-user transport),
#          which bookworm's QEMU 7.2 lacks, and its multi-threaded TCG runs code the guest
#          patches while other vCPUs run it, which 7.2's does not (rsnic.rst, "Testing
#          under TCG")
#   test   what only make test, vmtest, fuzz and miri use: the nightly toolchain with miri
#          and rust-src, cargo-fuzz at a pinned version, and the Debian packages that only
#          tests use (socat; python3-yaml for the kernel's ynl; libbpf, libxdp, bpftool and
#          xdp-tools for the XDP/AF_XDP tests); and, for the kernel's driver selftests
#          (tests/vm/96-kselftests.sh), ethtool 6.14 from trixie (JSON output of -c/-x/-g,
#          RSS contexts; it needs only libc6 >= 2.34 and libmnl0) and iproute2 6.15 from
#          bookworm-backports, both fetched by their pinned SHA-256 and installed with apt
#          (bookworm's own ethtool 6.1 and iproute2 6.1 are replaced)
#   bench  what only make bench uses: valgrind (callgrind); libbpf and libxdp for the AF_XDP
#          tool of the VM bench
#
# base is always installed. Run as root or with sudo available. Prints nothing when
# everything is already there (it then takes about a second); what it installs is named
# on stderr, and the installers' output goes to $RSNIC_CACHE/logs/setup.log.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

BINDGEN_VERSION=0.72.1
CARGO_FUZZ_VERSION=0.13.2
base_packages=(
	linux-source-6.12 clang-14 lld-14 llvm-14 libclang-14-dev
	busybox-static debootstrap
	flex bison bc cpio kmod libelf-dev libssl-dev dwarves xz-utils rsync
	ethtool iproute2 iputils-ping procps iperf3 python3
)
# jq and mausezahn (netsniff-ng): the kernel's forwarding-library tests (tests/vm/83-kselftests-hw.sh)
test_packages=(curl socat python3-yaml libbpf-dev libxdp-dev bpftool xdp-tools jq netsniff-ng)
bench_packages=(valgrind libbpf-dev libxdp-dev)

parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(base test bench)
want_test=0
want_bench=0
for p in "${parts[@]}"; do
	case $p in
	base) ;;
	test) want_test=1 ;;
	bench) want_bench=1 ;;
	all) want_test=1 want_bench=1 ;;
	*) rsnic_die "usage: $0 [base] [test] [bench]" ;;
	esac
done

sudo_cmd=()
[ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
mkdir -p "$RSNIC_CACHE/logs" || rsnic_die "cannot create $RSNIC_CACHE/logs (RSNIC_CACHE= names another place)"
log=$RSNIC_CACHE/logs/setup.log

# logged COMMAND...: runs COMMAND with its output appended to the set-up log.
logged() {
	echo "### $(date '+%F %T') $*" >>"$log"
	rsnic_logged "$log" "$@"
}

packages=("${base_packages[@]}")
[ "$want_test" = 0 ] || packages+=("${test_packages[@]}")
[ "$want_bench" = 0 ] || packages+=("${bench_packages[@]}")
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	rsnic_log "installing Debian packages: ${missing[*]} (log: $log)"
	logged "${sudo_cmd[@]}" apt-get update -q
	logged "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi

command -v rustup >/dev/null || rsnic_die "rustup is required (the Rust toolchain comes from rustup)"
installed=$(rustup component list --installed 2>/dev/null)
for c in rust-src rustfmt clippy; do
	if ! grep -q "^$c" <<<"$installed"; then
		rsnic_log "adding rustup component $c"
		logged rustup component add "$c"
	fi
done

if [ "$(bindgen --version 2>/dev/null | awk '{print $2}')" != "$BINDGEN_VERSION" ]; then
	rsnic_log "installing bindgen-cli $BINDGEN_VERSION, a few minutes (log: $log)"
	logged cargo install --locked "bindgen-cli@$BINDGEN_VERSION"
fi

# newer_deb PACKAGE VERSION POOL_PATH SHA256: installs VERSION of PACKAGE from the Debian
# archive (apt resolves its dependencies from bookworm) unless at least that version is
# installed.
newer_deb() {
	local pkg=$1 ver=$2 path=$3 sum=$4 have deb
	have=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || true)
	if [ -n "$have" ] && dpkg --compare-versions "$have" ge "$ver"; then return 0; fi
	rsnic_log "installing $pkg $ver (log: $log)"
	mkdir -p "$RSNIC_CACHE/debs"
	deb=$RSNIC_CACHE/debs/${path##*/}
	if ! echo "$sum  $deb" | sha256sum -c --status 2>/dev/null; then
		logged curl -fsSL -o "$deb.tmp" "http://deb.debian.org/debian/$path"
		echo "$sum  $deb.tmp" | sha256sum -c --status ||
			rsnic_die "$deb: SHA-256 mismatch (expected $sum)"
		mv "$deb.tmp" "$deb"
	fi
	logged "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$deb"
}

if [ "$want_test" = 1 ]; then
	newer_deb ethtool 1:6.14.2-1 pool/main/e/ethtool/ethtool_6.14.2-1_amd64.deb \
		5c592ac6e65c3863c5ba9c9b8380f913a35f39803aa89ccc59c11c5c953a46ef
	newer_deb iproute2 6.15.0-1~bpo12+1 pool/main/i/iproute2/iproute2_6.15.0-1~bpo12+1_amd64.deb \
		270e82b98798adab0832eb23f96b697f3d9f9a72256b9d545041f276d7e3c9e8
	# make fuzz and make miri: the nightly toolchain with miri and rust-src, and cargo-fuzz.
	if ! rustup run nightly rustc --version >/dev/null 2>&1; then
		rsnic_log "installing the nightly toolchain (fuzzing, Miri)"
		logged rustup toolchain install nightly --profile minimal
	fi
	installed=$(rustup component list --toolchain nightly --installed 2>/dev/null)
	for c in miri rust-src; do
		if ! grep -q "^$c" <<<"$installed"; then
			rsnic_log "adding nightly component $c"
			logged rustup component add --toolchain nightly "$c"
		fi
	done
	if [ "$(cargo fuzz --version 2>/dev/null | awk '{print $2}')" != "$CARGO_FUZZ_VERSION" ]; then
		rsnic_log "installing cargo-fuzz $CARGO_FUZZ_VERSION, a few minutes (log: $log)"
		logged cargo install --locked "cargo-fuzz@$CARGO_FUZZ_VERSION"
	fi
fi

# The vfio part's helpers. as_root COMMAND...: debootstrap, chroot and mounts need root.
as_root() { "${sudo_cmd[@]}" "$@"; }

# qemu_umount_under DIR: unmounts whatever is mounted at or below DIR, deepest first (the
# chroot's /proc; debootstrap's own mounts when it was killed), so that removing DIR can
# never reach into a mounted file system.
qemu_umount_under() {
	local d m
	d=$(realpath -m "$1")
	awk -v d="$d" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo |
		sort -r | while read -r m; do as_root umount -l "$m" || true; done
}

# in_tree DIR COMMAND...: COMMAND chrooted into the trixie tree DIR, in a clean
# environment (nothing of the host's locale or apt settings leaks in), at low priority.
in_tree() {
	local dir=$1
	shift
	as_root env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive nice -n 10 chroot "$dir" "$@"
}

# install_qemu: makes the trixie tree with the pinned QEMU (see the header). All of it
# happens in a new tree beside the old one, which the finished tree replaces; the host's apt
# is not involved (apt runs inside the tree only). The .debs that debootstrap and apt
# download are kept in $RSNIC_CACHE/qemu/debs, so that a tree made again (a new pin, a
# removed tree) downloads only what changed.
qemu_tmp=""
install_qemu() {
	local dir ver=$RSNIC_QEMU_VERSION tree mirror start t offered libs stray
	dir=$(realpath -m "$RSNIC_CACHE/qemu")
	tree=$(realpath -m "$(rsnic_qemu_tree)")
	mkdir -p "$dir/debs/debootstrap" "$dir/debs/apt"
	# One set-up at a time makes the tree; a second one waits, then finds it made.
	exec 7>"$dir/.lock"
	flock 7
	if [ "$(cat "$tree/.rsnic-qemu-version" 2>/dev/null)" = "$ver" ]; then
		exec 7>&-
		return 0
	fi
	# The mirror this machine's apt uses for bookworm, which has trixie too ($(REPO_URI) is
	# apt's field name, not a shell expansion).
	# shellcheck disable=SC2016
	mirror=${RSNIC_DEBIAN_MIRROR:-$(apt-get indextargets --format '$(REPO_URI)' \
		'Identifier: Packages' 'Release: bookworm' 'Component: main' 2>/dev/null | head -n1)}
	mirror=${mirror:-http://deb.debian.org/debian/}
	qemu_tmp=$tree.tmp
	# Whatever happens, nothing stays mounted in the tree being made (a killed earlier run's
	# mounts go first, before its half-made tree).
	trap 'qemu_umount_under "$qemu_tmp"' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	qemu_umount_under "$qemu_tmp"
	as_root rm -rf --one-file-system "$qemu_tmp"
	start=$(date +%s)
	rsnic_log "installing QEMU $ver (vfio-user-pci) in a trixie tree, a minute or two (log: $log)"
	rsnic_log "  debootstrap trixie into $qemu_tmp from $mirror"
	logged as_root nice -n 10 debootstrap --variant=minbase \
		--cache-dir="$dir/debs/debootstrap" trixie "$qemu_tmp" "$mirror"
	t=$(date +%s)
	echo "### debootstrap took $((t - start)) s" >>"$log"
	# trixie-backports beside debootstrap's trixie, with the same trust (the tree's keyring).
	printf 'Types: deb\nURIs: %s\nSuites: trixie-backports\nComponents: main\n' "$mirror" |
		as_root tee "$qemu_tmp/etc/apt/sources.list.d/trixie-backports.sources" >/dev/null
	# No maintainer script may start a service from the tree.
	printf '#!/bin/sh\nexit 101\n' | as_root tee "$qemu_tmp/usr/sbin/policy-rc.d" >/dev/null
	as_root chmod 0755 "$qemu_tmp/usr/sbin/policy-rc.d"
	as_root mount -t proc proc "$qemu_tmp/proc"
	as_root find "$dir/debs/apt" -name '*.deb' -exec cp -t "$qemu_tmp/var/cache/apt/archives/" {} +
	logged in_tree "$qemu_tmp" apt-get update -q
	# The pinned version or a clear stop (apt-cache show succeeds silently for a version it
	# does not know, madison lists what there is).
	offered=$(in_tree "$qemu_tmp" apt-cache madison qemu-system-x86 2>>"$log" |
		awk -F' *[|] *' '{ split($3, w, " "); print $2 " (" w[2] ")" }' || true)
	if ! awk -v v="$ver" '$1 == v { found = 1 } END { exit !found }' <<<"$offered"; then
		rsnic_die "apt offers qemu-system-x86 $(paste -sd, - <<<"${offered:-in no version}"), not the pinned $ver: update RSNIC_QEMU_VERSION in scripts/lib.sh"
	fi
	rsnic_log "  installing qemu-system-x86 $ver from trixie-backports"
	logged in_tree "$qemu_tmp" apt-get install -y -q --no-install-recommends \
		-t trixie-backports "qemu-system-x86=$ver"
	echo "### apt-get install took $(($(date +%s) - t)) s" >>"$log"
	as_root find "$qemu_tmp/var/cache/apt/archives" -maxdepth 1 -name '*.deb' \
		-exec cp -n -t "$dir/debs/apt/" {} +
	logged in_tree "$qemu_tmp" apt-get clean
	as_root umount "$qemu_tmp/proc"
	# QEMU finds its modules and data in compiled-in directories, /usr/lib/.../qemu and
	# /usr/share/qemu, which on the host hold bookworm's QEMU 7.2; a module missing from
	# the tree (QEMU_MODULE_DIR is only searched first) would be taken from there and abort
	# QEMU ("Only modules from the same build can be loaded"). QEMU relocates all of those
	# directories under <directory of the executable>/qemu-bundle when that exists (its
	# build tree's layout); run through the tree's loader, the executable is the loader in
	# usr/lib/x86_64-linux-gnu, so a qemu-bundle link there to the tree's root makes every
	# such path the tree's.
	as_root ln -sfn ../../.. "$qemu_tmp/usr/lib/x86_64-linux-gnu/qemu-bundle"
	# The checks scripts/qemu relies on: the binary's libraries all come from the tree
	# (one found on the host instead would be bookworm's, for an older glibc), it is the
	# pinned build, and it has the device; -device help loads every module QEMU knows, and
	# says nothing on stderr only if none came from the host.
	libs=$qemu_tmp/usr/lib/x86_64-linux-gnu
	stray=$("$libs/ld-linux-x86-64.so.2" --library-path "$libs" --list \
		"$qemu_tmp/usr/bin/qemu-system-x86_64" |
		awk '$2 == "=>" && index($3, tmp "/") != 1 { print $1 " => " $3 }' tmp="$qemu_tmp")
	[ -z "$stray" ] || rsnic_die "QEMU in $qemu_tmp: libraries not from the tree: $stray"
	echo "$ver" | as_root tee "$qemu_tmp/.rsnic-qemu-version" >/dev/null
	t=$(RSNIC_QEMU_TREE=$qemu_tmp "$RSNIC_ROOT/scripts/qemu" -version 2>>"$log" || true)
	grep -qF "(Debian $ver)" <<<"$t" || rsnic_die "QEMU in $qemu_tmp does not run as $ver: $t"
	RSNIC_QEMU_TREE=$qemu_tmp "$RSNIC_ROOT/scripts/qemu" -device help \
		>"$dir/device-help.txt" 2>"$dir/device-help.err" || true
	if [ -s "$dir/device-help.err" ] || ! grep -q '"vfio-user-pci"' "$dir/device-help.txt"; then
		cat "$dir/device-help.err" >>"$log"
		rsnic_die "QEMU in $qemu_tmp: no vfio-user-pci in '-device help', or errors (log: $log)"
	fi
	rm -f "$dir/device-help.txt" "$dir/device-help.err"
	qemu_umount_under "$qemu_tmp"
	as_root rm -rf --one-file-system "$tree"
	as_root mv "$qemu_tmp" "$tree"
	trap - EXIT INT TERM
	exec 7>&-
	rsnic_log "installed QEMU $ver in $tree in $(($(date +%s) - start)) s"
}

if [ "$(cat "$(rsnic_qemu_tree)/.rsnic-qemu-version" 2>/dev/null)" != "$RSNIC_QEMU_VERSION" ]; then
	install_qemu
fi
