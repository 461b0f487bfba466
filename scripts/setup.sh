#!/usr/bin/env bash
# Installs what rsnic needs on a Debian bookworm machine, idempotently, in parts:
#
#   scripts/setup.sh [base] [test] [bench]     (no argument: all three)
#
#   base   what make demo, kernel, module and hostcheck use: Debian packages (kernel source
#          and build tools, LLVM 14, QEMU, busybox, the network tools the demo runs in the
#          VM), rustup's rust-src, rustfmt and clippy, bindgen-cli at a pinned version
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
	qemu-system-x86 busybox-static
	flex bison bc cpio kmod libelf-dev libssl-dev dwarves xz-utils rsync
	ethtool iproute2 iputils-ping procps iperf3 python3
)
test_packages=(curl socat python3-yaml libbpf-dev libxdp-dev bpftool xdp-tools)
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
