#!/usr/bin/env bash
# Builds the kernel's own AF_XDP test suite, xskxceiver (tools/testing/selftests/bpf of the
# 6.12 source that the test kernel is built from), for tests/vm/94-xskxceiver.sh. Prints the
# path of the binary (target/xsk/xskxceiver; RSNIC_XSK_DIR= overrides the directory).
#
# Nothing from the kernel tree is copied into the repository: everything is compiled from
# the read-only tree, products go to the output directory only:
#   usr/include   the 6.12 uapi (`make headers_install`: Debian's linux-libc-dev is 6.1 and
#                 lacks linux/netdev.h), ahead of the system's headers
#   libbpf/       the tree's own libbpf (tools/lib/bpf, 1.5), static. Debian's libbpf 1.1
#                 cannot build xskxceiver: its bpf_xdp_query_opts has no feature_flags or
#                 xdp_zc_max_segs (libbpf 1.2/1.3), which the suite reads to decide what the
#                 device supports (multi-buffer, zero-copy)
#   xsk_xdp_progs.bpf.o, xsk_xdp_progs.skel.h
#                 the suite's XDP programs (progs/xsk_xdp_progs.c) with clang-14 -target bpf
#                 and the skeleton from Debian's bpftool. The programs use plain uapi headers
#                 and no CO-RE, so no vmlinux.h (the test kernel has no BTF) is needed
#   xskxceiver    xskxceiver.c, xsk.c, network_helpers.c and tools/lib/find_bit.c, as the
#                 selftests' Makefile links it, with gcc
#   xskxceiver-relaxed
#                 the same with the suite's 3 s transfer timeout raised to
#                 XSK_RELAXED_TMOUT seconds (default 30) and the 1 ms that STAT_RX_FULL and
#                 STAT_FILL_EMPTY wait before reading the socket's counters raised to
#                 100 ms, from a build-time copy of xskxceiver.[ch]: for telling slow from
#                 broken under QEMU TCG
# Skipped when the binary is up to date (keyed on the kernel source version, this script and
# the toolchain); a first build takes a minute or two (headers_install and libbpf), the
# output goes to target/xsk/build.log.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ksrc=$(rsnic_ksrc)
sb=$ksrc/tools/testing/selftests/bpf
out=${RSNIC_XSK_DIR:-$RSNIC_ROOT/target/xsk}
[ -f "$sb/xskxceiver.c" ] ||
	rsnic_die "no kernel source at $ksrc (or no xskxceiver.c in it): run 'make kernel'"
for tool in "clang$LLVM_SUFFIX" bpftool gcc make; do
	command -v "$tool" >/dev/null || rsnic_die "$tool not found: run 'make setup-test'"
done
[ -f /usr/include/gelf.h ] || rsnic_die "libelf headers missing: run 'make setup-test'"

# The loop timeout of xskxceiver-relaxed, in seconds (the suite's own is 3).
relaxed_tmout=${XSK_RELAXED_TMOUT:-30}
key=$({
	echo "$relaxed_tmout"
	rsnic_ksrc_version
	sha256sum <"${BASH_SOURCE[0]}"
	"clang$LLVM_SUFFIX" --version | head -n1
	gcc --version | head -n1
	bpftool version | head -n1
	dpkg-query -W -f='${Version}\n' libelf-dev zlib1g-dev 2>/dev/null || true
} | sha256sum | cut -c1-16)

mkdir -p "$out"
exec 9>"$out/.lock"
flock 9
if [ -x "$out/xskxceiver" ] && [ -x "$out/xskxceiver-relaxed" ] &&
	[ "$(cat "$out/.key" 2>/dev/null)" = "$key" ]; then
	echo "$out/xskxceiver"
	exit 0
fi
rm -f "$out/.key" "$out/xskxceiver" "$out/xskxceiver-relaxed"
log=$out/build.log
: >"$log"
rsnic_log "building xskxceiver from $ksrc (log: ${log#"$RSNIC_ROOT"/})"

# The 6.12 uapi headers; kbuild writes only under O= (the tree stays as it is; hdr/ stays
# too, so that a rebuild is incremental).
rsnic_logged "$log" make -C "$ksrc" O="$out/hdr" ARCH=x86_64 INSTALL_HDR_PATH="$out/usr" \
	headers_install

# The tree's libbpf, static, and its headers in libbpf/include/bpf.
mkdir -p "$out/libbpf"
rsnic_logged "$log" make -C "$ksrc/tools/lib/bpf" OUTPUT="$out/libbpf/" BUILD_STATIC_ONLY=1 \
	DESTDIR="$out/libbpf" prefix=/ CC=gcc -j"$(nproc)" install_headers "$out/libbpf/libbpf.a"

# The XDP programs and their skeleton (the selftests' BPF_CFLAGS, without vmlinux.h).
rsnic_logged "$log" "clang$LLVM_SUFFIX" -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 \
	-Wall -Werror -Wno-compare-distinct-pointer-types \
	-I"$out/libbpf/include" -I"$sb" -I"$ksrc/tools/include/uapi" -I"$out/usr/include" \
	-c "$sb/progs/xsk_xdp_progs.c" -o "$out/xsk_xdp_progs.bpf.o"
bpftool gen skeleton "$out/xsk_xdp_progs.bpf.o" name xsk_xdp_progs \
	>"$out/xsk_xdp_progs.skel.h.tmp" 2>>"$log" || rsnic_die "bpftool gen skeleton failed (see $log)"
mv "$out/xsk_xdp_progs.skel.h.tmp" "$out/xsk_xdp_progs.skel.h"

# The binaries: the selftests' include order (the tools' headers, then the uapi), with the
# installed 6.12 uapi ahead of the system's.
cflags=(-g -O2 -Wall -fno-omit-frame-pointer
	-I"$out" -I"$sb" -I"$out/libbpf/include" -I"$ksrc/tools/include"
	-I"$ksrc/tools/arch/x86/include" -I"$ksrc/tools/include/uapi" -I"$out/usr/include")
mkdir -p "$out/obj" "$out/relaxed"
for src in "$ksrc/tools/lib/find_bit.c" "$sb/xsk.c" "$sb/network_helpers.c"; do
	obj=$out/obj/$(basename "$src" .c).o
	rsnic_logged "$log" gcc "${cflags[@]}" -c "$src" -o "$obj"
done
libs=("$out/libbpf/libbpf.a" -lelf -lz -lpthread -lrt)
rsnic_logged "$log" gcc "${cflags[@]}" "$sb/xskxceiver.c" "$out"/obj/*.o "${libs[@]}" \
	-o "$out/xskxceiver.tmp"

# xskxceiver-relaxed: the same suite with a longer loop timeout. The suite gives a whole
# transfer (4096 packets by default) THREAD_TMOUT = 3 s, set for hardware; the VM test runs
# it when the stock binary timed out on rsnic but passed on veth, to tell a slow path under
# QEMU TCG from a broken one. A build-time copy: the tree stays untouched, nothing is kept
# in git. (Its own directory, so that #include "xskxceiver.h" finds the copy; the other
# includes resolve through -I.)
# The two statistics subtests read the socket's counters 1 ms after the last packet they
# expect (validate_rx_full, validate_fill_empty: the only two usleep(1000) in the file); the
# packets that should move the counter are still being sent then on a loaded TCG guest, so
# the relaxed copy waits 100 ms.
sed 's/^\tusleep(1000);$/\tusleep(100000);/' "$sb/xskxceiver.c" >"$out/relaxed/xskxceiver.c"
[ "$(grep -c 'usleep(100000);' "$out/relaxed/xskxceiver.c")" = 2 ] ||
	rsnic_die "xskxceiver.c: not exactly two 'usleep(1000);' (the statistics settle) to relax"
sed "s/^#define THREAD_TMOUT 3\$/#define THREAD_TMOUT $relaxed_tmout/" "$sb/xskxceiver.h" \
	>"$out/relaxed/xskxceiver.h"
grep -q "^#define THREAD_TMOUT $relaxed_tmout\$" "$out/relaxed/xskxceiver.h" ||
	rsnic_die "xskxceiver.h: no '#define THREAD_TMOUT 3' to relax"
rsnic_logged "$log" gcc "${cflags[@]}" "$out/relaxed/xskxceiver.c" "$out"/obj/*.o "${libs[@]}" \
	-o "$out/xskxceiver-relaxed"
mv "$out/xskxceiver.tmp" "$out/xskxceiver"
echo "$key" >"$out/.key"
echo "$out/xskxceiver"
