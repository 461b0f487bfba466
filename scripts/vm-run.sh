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
# RSNIC_TRANSPORT=pci puts the device on the PCI transport (rsnic.rst, "The PCI transport"):
# the device process rsnic-devd (target/release/rsnic-devd: make devd) runs one device of
# the family RSNIC_PCI_FAMILY (default: the first of RSNIC_FAMILIES) with RSNIC_PCI_PORTS
# ports (2), as the ivshmem server of an ivshmem-doorbell PCI function, over the guest's RAM
# (a file in /dev/shm). Its state directory (the model's counters) is shared with the guest,
# uncached, at the same path (RSNIC_DEVD_DIR in the job); its log is target/vm/VARIANT-devd.log.
# A device process that fails, or does not exit when QEMU has, fails the run (exit 4).
# For experiments: RSNIC_VM_CPUS (2), RSNIC_VM_CPU (the -cpu model, max), RSNIC_VM_TCG
# (TCG options, e.g. thread=single: one host thread for all vCPUs; see rsnic.rst, "Testing
# under TCG").
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
mem=1G
mem_bytes=$((1 << 30))
if [ "$KERNEL_VARIANT" = debug ]; then
	mem=2G
	mem_bytes=$((2 << 30))
fi
pci_args=()
devd_pid=""
devd_dir=""
devd_ram=""
devd_log="$RSNIC_ROOT/target/vm/$KERNEL_VARIANT-devd.log"
if [ "$transport" = pci ]; then
	read -r pci_family _ <<<"${RSNIC_PCI_FAMILY:-${RSNIC_FAMILIES:-mlx5}}"
	pci_ports=${RSNIC_PCI_PORTS:-2}
	devd="${CARGO_TARGET_DIR:-$RSNIC_ROOT/target}/release/rsnic-devd"
	[ -x "$devd" ] || rsnic_die "no device process at $devd: run 'make devd'"
	mkdir -p "$RSNIC_CACHE/devd" "$(dirname "$devd_log")"
	devd_dir=$(mktemp -d "$RSNIC_CACHE/devd/run-XXXXXX")
	devd_ram="/dev/shm/rsnic-ram-${devd_dir##*-}"
	# Whatever happens from here, the device process and its RAM file go.
	devd_cleanup() {
		[ -n "$devd_pid" ] && kill "$devd_pid" 2>/dev/null
		rm -f "$devd_ram"
		rm -rf "$devd_dir"
	}
	trap devd_cleanup EXIT
	"$devd" --socket "$devd_dir/ivshmem.sock" --ram "$devd_ram" --ram-size "$mem_bytes" \
		--family "$pci_family" --ports "$pci_ports" --state-dir "$devd_dir" \
		>"$devd_log" 2>&1 &
	devd_pid=$!
	# QEMU connects at start: the server must listen first.
	for _ in $(seq 100); do
		[ -S "$devd_dir/ivshmem.sock" ] && break
		kill -0 "$devd_pid" 2>/dev/null || break
		sleep 0.1
	done
	if ! [ -S "$devd_dir/ivshmem.sock" ]; then
		rsnic_log "the device process did not start; its log ($devd_log):"
		tail -n 20 "$devd_log" >&2
		exit 4
	fi
	rsnic_log "device process: $pci_family, $pci_ports ports, pid $devd_pid (log: $devd_log)"
	pci_args=(
		-object "memory-backend-file,id=ram,size=$mem,mem-path=$devd_ram,share=on"
		-machine pc,memory-backend=ram
		-chardev "socket,path=$devd_dir/ivshmem.sock,id=ivsh"
		-device "ivshmem-doorbell,chardev=ivsh,vectors=$((pci_ports * 16))"
		-virtfs "local,path=$devd_dir,mount_tag=rsnicdevd,security_model=none,readonly=on"
	)
fi

# The job: a script on the host that the guest runs through the 9p root.
mkdir -p "$RSNIC_CACHE/jobs"
job=$(mktemp "$RSNIC_CACHE/jobs/job-XXXXXX.sh")
{
	echo "export RSNIC_ROOT='$RSNIC_ROOT' RSNIC_KO='$ko' KERNEL_VARIANT='$KERNEL_VARIANT'"
	if [ "$transport" = pci ]; then
		echo "export RSNIC_KSRC='$(rsnic_ksrc)' RSNIC_FAMILIES='$pci_family'"
		echo "export RSNIC_TRANSPORT=pci RSNIC_DEVD_DIR='$devd_dir'"
	else
		echo "export RSNIC_KSRC='$(rsnic_ksrc)' RSNIC_FAMILIES='${RSNIC_FAMILIES:-mlx5 mana}'"
	fi
	echo "cd '$RSNIC_ROOT' || exit 126"
	printf 'exec'
	printf ' %q' "$@"
	echo
} >"$job"
chmod 0644 "$job"

[ -n "$log" ] || log="$RSNIC_ROOT/target/vm/$KERNEL_VARIANT-serial.log"
mkdir -p "$(dirname "$log")"

accel="-accel tcg${RSNIC_VM_TCG:+,$RSNIC_VM_TCG}"
[ "${RSNIC_VM_ACCEL:-tcg}" = kvm ] && accel="-accel kvm"
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
timeout --foreground "$vm_timeout" qemu-system-x86_64 \
	$accel -cpu "${RSNIC_VM_CPU:-max}" -smp "${RSNIC_VM_CPUS:-2}" -m "$mem" \
	-nographic -no-reboot -nic none \
	-kernel "$bzimage" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 loglevel=6 acpi=noirq rsnic_job=$job rsnic_root=$RSNIC_ROOT${devd_dir:+ rsnic_devd=$devd_dir}" \
	"${pci_args[@]}" \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
	-virtfs "local,path=$RSNIC_ROOT,mount_tag=rsnicroot,security_model=none,readonly=on,multidevs=remap" \
	</dev/null 2>&1 | tee "$log" |
	sed -u -e 's/\r$//' -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' -e 's/\x1b[A-Za-z]//g' |
	grep -av --line-buffered '^\s*$' | "${show[@]}" >&2
qrc=${PIPESTATUS[0]}
rm -f "$job"
devd_status=0
if [ -n "$devd_pid" ]; then
	# QEMU has gone, so the device process's client has: it exits by itself.
	for _ in $(seq 100); do
		kill -0 "$devd_pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$devd_pid" 2>/dev/null; then
		rsnic_log "the device process did not exit 10 s after QEMU; its log ($devd_log):"
		tail -n 20 "$devd_log" >&2
		devd_status=4
	else
		wait "$devd_pid"
		rc=$?
		devd_pid=""
		if [ "$rc" != 0 ]; then
			rsnic_log "the device process failed (exit $rc); its log ($devd_log):"
			tail -n 20 "$devd_log" >&2
			devd_status=4
		fi
	fi
fi

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
