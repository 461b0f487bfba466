#!/usr/bin/env bash
# Boots the rsnic test kernel in QEMU and runs one command inside it, with the host's root
# mounted read-only (so the host's ip, ethtool, iperf3, python3 and this repository are
# there) and fresh /tmp, /run, /proc, /sys and /dev.
#
#   scripts/vm-run.sh [--log FILE] COMMAND [ARGS...]
#
# COMMAND runs as root from the repository root, with RSNIC_ROOT, RSNIC_KO and
# KERNEL_VARIANT set. Exits with COMMAND's status; 124 when the VM timed out
# (RSNIC_VM_TIMEOUT seconds, default 2400); 125 when the VM did
# not report a status.
# Then scans the serial log for kernel reports (oops, BUG, WARNING, KASAN, lockdep,
# kmemleak, panics) and fails (exit 3) if it finds one.
# The console is copied to stderr without blank lines and terminal control sequences;
# RSNIC_VM_QUIET_BOOT=1 leaves out the firmware's and kernel's boot messages before the
# job starts (they stay in the serial log, whose tail is shown if the job never starts).
# RSNIC_TRANSPORT=vfio puts the device on the vfio-user transport (rsnic.rst, "The vfio-user
# transport": PCI functions with the hardware's IDs, for rsnic and the kernel's own drivers):
# the device process rsnic-devd (target/release/rsnic-devd: make devd) runs one device of
# the family RSNIC_PCI_FAMILY (default: the first of RSNIC_FAMILIES) with RSNIC_PCI_PORTS
# ports (2) outside the VM (scripts/vm/devd.sh). Its state directory (the model's counters)
# is shared with the guest, uncached, at the same path (RSNIC_DEVD_DIR in the job, with
# RSNIC_TRANSPORT, RSNIC_FAMILIES and RSNIC_PCI_PORTS set to the transport, the family and
# the ports); its log is target/vm/VARIANT-devd.log. A line RSNIC-DEVD-KILL on the guest's
# console kills it (devd.sh says how: tests/vm/99-device-gone.sh). A device process that
# fails, or does not exit when QEMU has, fails the run (exit 4). The job also has
# RSNIC_UPSTREAM_MLX5_KO and RSNIC_UPSTREAM_MANA_KO, the kernel's own drivers for this
# kernel (make upstream), when they are built.
# For experiments: RSNIC_VM_CPUS (2), RSNIC_VM_CPU (the -cpu model, max), RSNIC_VM_TCG
# (TCG options, e.g. thread=single: one host thread for all vCPUs; see rsnic.rst, "Testing
# under TCG"), RSNIC_VM_APPEND (more kernel command-line arguments), RSNIC_VM_MACHINE (the machine type on the vfio transport, pc),
# RSNIC_DEVD (another device process binary).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

log=""
if [ "${1:-}" = "--log" ]; then log=$2; shift 2; fi
[ $# -ge 1 ] || rsnic_die "usage: $0 [--log FILE] COMMAND [ARGS...]"

kdir=$(rsnic_kdir)
bzimage="$kdir/arch/x86/boot/bzImage"
[ -f "$bzimage" ] || rsnic_die "no test kernel at $kdir: run 'make kernel KERNEL_VARIANT=$KERNEL_VARIANT'"
ko="${RSNIC_KO:-$RSNIC_ROOT/target/kbuild/$KERNEL_VARIANT/rsnic.ko}"
[ -f "$ko" ] || rsnic_die "no module at $ko: run 'make module KERNEL_VARIANT=$KERNEL_VARIANT'"

# The initramfs: busybox and our /init, cached by content.
busybox=$(command -v busybox || echo /bin/busybox)
ikey=$( { sha256sum "$RSNIC_ROOT/scripts/vm/init"; sha256sum "$busybox"; } | sha256sum | cut -c1-16)
initrd="$RSNIC_CACHE/initramfs-$ikey.cpio.gz"
if [ ! -f "$initrd" ]; then
	tmp=$(mktemp -d)
	mkdir -p "$tmp"/{bin,proc,sys,dev,host}
	cp "$busybox" "$tmp/bin/busybox"
	install -m 0755 "$RSNIC_ROOT/scripts/vm/init" "$tmp/init"
	(cd "$tmp" && find . | cpio -o -H newc --quiet | gzip -1) >"$initrd.tmp"
	mv "$initrd.tmp" "$initrd"
	rm -rf "$tmp"
fi

transport=${RSNIC_TRANSPORT:-kernel}
case $transport in kernel | vfio) ;; *) rsnic_die "RSNIC_TRANSPORT must be kernel or vfio, not '$transport'" ;; esac
mem=1G
[ "$KERNEL_VARIANT" = debug ] && mem=2G
# The pinned QEMU of set-up (scripts/qemu), checked before the device process starts. It
# has vfio-user-pci, which bookworm's QEMU 7.2 lacks, and its multi-threaded TCG honours x86
# cross-modifying code: under 7.2, kernel text patched while another vCPU runs it (XDP
# program swaps, kprobes) panics the guest (rsnic.rst, "Testing under TCG"). RSNIC_QEMU
# names another QEMU binary for experiments (make soak-xdp-swap with 7.2 shows the flaw).
if [ -n "${RSNIC_QEMU:-}" ]; then
	qemu=("$RSNIC_QEMU")
else
	rsnic_qemu_check
	qemu=("$RSNIC_ROOT/scripts/qemu")
fi
. "$RSNIC_ROOT/scripts/vm/devd.sh"
[ "$transport" = kernel ] || devd_start "$mem"

# The job: a script on the host that the guest runs through the 9p root.
mkdir -p "$RSNIC_CACHE/jobs"
job=$(mktemp "$RSNIC_CACHE/jobs/job-XXXXXX.sh")
{
	echo "export RSNIC_ROOT='$RSNIC_ROOT' RSNIC_KO='$ko' KERNEL_VARIANT='$KERNEL_VARIANT'"
	if [ "$transport" != kernel ]; then
		echo "export RSNIC_KSRC='$(rsnic_ksrc)' RSNIC_FAMILIES='$devd_family'"
		echo "export RSNIC_TRANSPORT=$transport RSNIC_DEVD_DIR='$devd_dir' RSNIC_PCI_PORTS=$devd_ports"
	else
		echo "export RSNIC_KSRC='$(rsnic_ksrc)' RSNIC_FAMILIES='${RSNIC_FAMILIES:-mlx5 mana}'"
	fi
	for fam in mlx5 mana; do
		uko=$(rsnic_upstream_ko "$fam" "$kdir")
		[ -f "$uko" ] && echo "export RSNIC_UPSTREAM_${fam^^}_KO='$uko'"
	done
	echo "cd '$RSNIC_ROOT' || exit 126"
	printf 'exec'
	printf ' %q' "$@"
	echo
} >"$job"
chmod 0644 "$job"

[ -n "$log" ] || log="$RSNIC_ROOT/target/vm/$KERNEL_VARIANT-serial.log"
mkdir -p "$(dirname "$log")"
: >"$log"
# The guest may ask for the device process to die under it (devd.sh).
devd_watch "$log"

accel=(-accel "tcg${RSNIC_VM_TCG:+,$RSNIC_VM_TCG}")
[ "${RSNIC_VM_ACCEL:-tcg}" = kvm ] && accel=(-accel kvm)
# acpi=noirq: the kernel takes the CPUs from the ACPI MADT (SeaBIOS's MP table lists only
# the boot CPU) but routes PCI interrupts through SeaBIOS's PIR table: under KASAN and TCG
# the AML interpreter times out evaluating _PRT, which left virtio without interrupts.
quiet_boot=${RSNIC_VM_QUIET_BOOT:-0}
show=(cat)
boot_note=""
if [ "$quiet_boot" = 1 ]; then
	show=(sed -u '0,/rsnic-vm: running/d')
	boot_note=" (boot messages only there)"
fi
rsnic_log "booting $KERNEL_VARIANT kernel; serial log: $log$boot_note"
vm_timeout=${RSNIC_VM_TIMEOUT:-2400}
timeout --foreground "$vm_timeout" "${qemu[@]}" \
	"${accel[@]}" -cpu "${RSNIC_VM_CPU:-max}" -smp "${RSNIC_VM_CPUS:-2}" -m "$mem" \
	-nographic -no-reboot -nic none \
	-kernel "$bzimage" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 loglevel=6 acpi=noirq rsnic_job=$job rsnic_root=$RSNIC_ROOT${devd_dir:+ rsnic_devd=$devd_dir}${RSNIC_VM_APPEND:+ $RSNIC_VM_APPEND}" \
	"${devd_qemu_args[@]}" \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
	-virtfs "local,path=$RSNIC_ROOT,mount_tag=rsnicroot,security_model=none,readonly=on,multidevs=remap" \
	</dev/null 2>&1 | tee "$log" |
	sed -u -e 's/\r$//' -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' -e 's/\x1b[A-Za-z]//g' |
	grep -av --line-buffered '^\s*$' | "${show[@]}" >&2
qrc=${PIPESTATUS[0]}
rm -f "$job"
devd_finish

status=$(sed -n 's/.*RSNIC-VM-EXIT: \([0-9]*\).*/\1/p' "$log" | tail -n1)
if [ "$qrc" = 124 ]; then
	rsnic_log "the VM timed out after $vm_timeout s"
	status=124
elif [ -z "$status" ]; then
	rsnic_log "the VM did not report an exit status (crash or panic?)"
	status=125
fi
if [ "$quiet_boot" = 1 ] && [ "$status" != 0 ] && ! grep -aq 'rsnic-vm: running' "$log"; then
	rsnic_log "the job did not start; the serial log ends with:"
	tr -d '\r' <"$log" | tail -n 30 >&2
fi

# Kernel reports that fail a run whatever the tests said.
reports='Oops|BUG:|WARNING:|KASAN|UBSAN|Kernel panic|kernel BUG|general protection fault|'
reports+='possible circular locking|possible recursive locking|inconsistent lock state|'
reports+='suspicious RCU usage|sleeping function called from invalid context|'
reports+='unreferenced object|panicked at|hung_task|soft lockup|rcu_sched self-detected'
if grep -aEq "$reports" "$log"; then
	rsnic_log "the kernel log has reports:"
	grep -aE "$reports" "$log" | head -n 20 >&2
	[ "$status" = 0 ] && status=3
fi
[ "$status" = 0 ] && [ "$devd_status" != 0 ] && status=$devd_status
exit "$status"
