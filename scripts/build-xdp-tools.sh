#!/usr/bin/env bash
# Builds the XDP test programs (tests/xdp/progs/*.c, clang -target bpf, no CO-RE: the test
# kernel has no vmlinux BTF) and the tools rsnic-xdp, rsnic-xsk and rsnic-frames (gcc,
# libbpf, libxdp) into target/xdp/, for the VM tests (the VM sees the repository read-only,
# so they are built here, before it boots). Rebuilds only what is older than its sources; warnings are
# errors. Without the Debian packages it needs (libbpf-dev, libxdp-dev; make setup-test
# installs them) it fails, naming them, and writes the reason to target/xdp/MISSING, which
# the XDP VM tests report if they are run anyway.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

src=$RSNIC_ROOT/tests/xdp
out=${RSNIC_XDP_OUT:-$RSNIC_ROOT/target/xdp}
clang=clang$LLVM_SUFFIX
mkdir -p "$out"

missing=()
[ -f /usr/include/bpf/bpf_helpers.h ] || missing+=(libbpf-dev)
[ -f /usr/include/xdp/xsk.h ] || missing+=(libxdp-dev)
command -v "$clang" >/dev/null || missing+=("clang$LLVM_SUFFIX")
command -v gcc >/dev/null || missing+=(gcc)
if [ ${#missing[@]} -gt 0 ]; then
	echo "missing Debian packages: ${missing[*]} (make setup installs them)" >"$out/MISSING"
	rsnic_die "xdp-tools: not built, $(cat "$out/MISSING")"
fi
rm -f "$out/MISSING"

# stale OUT DEPS...: OUT is missing or older than one of DEPS (this script included).
stale() {
	local o=$1 d
	shift
	[ -e "$o" ] || return 0
	for d in "$@" "$0"; do [ "$d" -nt "$o" ] && return 0; done
	return 1
}

built=0
for c in "$src"/progs/*.c; do
	o=$out/$(basename "$c" .c).o
	if stale "$o" "$c" "$src"/progs/*.h; then
		"$clang" -O2 -g -Wall -Werror -target bpf -I/usr/include/x86_64-linux-gnu \
			-c "$c" -o "$o.tmp"
		mv "$o.tmp" "$o"
		built=$((built + 1))
	fi
done

cflags=(-O2 -g -Wall -Wextra -Werror -I"$src")
if stale "$out/rsnic-xdp" "$src/rsnic-xdp.c" "$src/progs/xdp_count.h" "$src/progs/sk_rxhash.h"; then
	gcc "${cflags[@]}" -o "$out/rsnic-xdp.tmp" "$src/rsnic-xdp.c" -lbpf
	mv "$out/rsnic-xdp.tmp" "$out/rsnic-xdp"
	built=$((built + 1))
fi
if stale "$out/rsnic-frames" "$src/rsnic-frames.c" "$src/testframe.h" "$src/progs/xdp_encap.h"; then
	gcc "${cflags[@]}" -o "$out/rsnic-frames.tmp" "$src/rsnic-frames.c"
	mv "$out/rsnic-frames.tmp" "$out/rsnic-frames"
	built=$((built + 1))
fi
if stale "$out/rsnic-xsk" "$src/rsnic-xsk.c" "$src/testframe.h"; then
	gcc "${cflags[@]}" -o "$out/rsnic-xsk.tmp" "$src/rsnic-xsk.c" -lxdp -lbpf
	mv "$out/rsnic-xsk.tmp" "$out/rsnic-xsk"
	built=$((built + 1))
fi
[ "$built" = 0 ] || rsnic_log "xdp-tools: built $built file(s) in $out"
