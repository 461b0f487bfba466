#!/usr/bin/env bash
# Installs what rsnic needs on a Debian bookworm machine, idempotently: Debian packages,
# rustup's rust-src component and bindgen-cli at a pinned version; for make fuzz and
# make miri the nightly toolchain with miri and rust-src, and cargo-fuzz at a pinned
# version. Run as root or with sudo available. Fast when everything is already there.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

BINDGEN_VERSION=0.72.1
CARGO_FUZZ_VERSION=0.13.2
packages=(
	linux-source-6.12 clang-14 lld-14 llvm-14 libclang-14-dev
	qemu-system-x86 busybox-static
	flex bison bc cpio kmod libelf-dev libssl-dev dwarves xz-utils rsync
	ethtool iproute2 iputils-ping procps iperf3 socat python3-yaml valgrind
)

sudo_cmd=()
[ "$(id -u)" = 0 ] || sudo_cmd=(sudo)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	rsnic_log "installing Debian packages: ${missing[*]}"
	"${sudo_cmd[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

command -v rustup >/dev/null || rsnic_die "rustup is required (the Rust toolchain comes from rustup)"
if ! rustup component list --installed 2>/dev/null | grep -q '^rust-src'; then
	rsnic_log "adding rustup component rust-src"
	rustup component add rust-src
fi
for c in rustfmt clippy; do
	rustup component list --installed 2>/dev/null | grep -q "^$c" || rustup component add "$c"
done

if [ "$(bindgen --version 2>/dev/null | awk '{print $2}')" != "$BINDGEN_VERSION" ]; then
	rsnic_log "installing bindgen-cli $BINDGEN_VERSION"
	cargo install --locked --quiet "bindgen-cli@$BINDGEN_VERSION"
fi

# make fuzz and make miri: the nightly toolchain with miri and rust-src, and cargo-fuzz.
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
	rsnic_log "installing the nightly toolchain (fuzzing, Miri)"
	rustup toolchain install nightly --profile minimal
fi
for c in miri rust-src; do
	if ! rustup component list --toolchain nightly --installed 2>/dev/null | grep -q "^$c"; then
		rsnic_log "adding nightly component $c"
		rustup component add --toolchain nightly "$c"
	fi
done
if [ "$(cargo fuzz --version 2>/dev/null | awk '{print $2}')" != "$CARGO_FUZZ_VERSION" ]; then
	rsnic_log "installing cargo-fuzz $CARGO_FUZZ_VERSION"
	cargo install --locked --quiet "cargo-fuzz@$CARGO_FUZZ_VERSION"
fi

mkdir -p "$RSNIC_CACHE"
rsnic_log "setup complete"
