# The device process of the vfio-user transport, for scripts/vm-run.sh (sourced after
# lib.sh; it sets no options of the caller's shell, which runs without errexit).
#
# rsnic-devd (host/devd; make devd) runs the device model of one device, of family
# RSNIC_PCI_FAMILY (default: the first of RSNIC_FAMILIES) with RSNIC_PCI_PORTS ports (2),
# outside the VM; RSNIC_DEVD names another binary (a build of a branch, say). Its state
# directory (the model's counters, rewritten as it runs) is shared with the guest, uncached,
# at the same path (/init mounts it; the job has it as RSNIC_DEVD_DIR); its output goes to
# target/vm/VARIANT-devd.log. devd is a vfio-user server (QEMU's vfio-user-pci,
# scripts/qemu) presenting functions with the hardware's IDs and register layouts, which
# rsnic and the kernel's own drivers bind: one ConnectX VF (15b3:101e) per port, or one MANA
# VF (1414:00ba) with a vport per port, each function on its own socket; the guest's RAM is
# a shared memfd, whose descriptors QEMU passes to devd (rsnic.rst, "The vfio-user
# transport").
#
# A test can have the device process die under it (tests/vm/99-device-gone.sh): a line
# "RSNIC-DEVD-KILL" on the guest's console (the serial log, which the host reads as it
# grows) makes devd_watch send devd SIGUSR1, on which it unplugs its functions (closes its
# connections, each after a drain so that QEMU reads the end of the stream rather than a
# reset, on which QEMU 11.1.3 aborts: rsnic.rst, "A device that dies") and exits, and then
# create the file "killed" in the state directory, which the guest sees.
# shellcheck shell=bash
# shellcheck disable=SC2034 # the devd_* variables are vm-run.sh's to read

devd_pid=""
devd_dir=""
devd_watch_pid=""
devd_family=""
devd_ports=""
devd_log="$RSNIC_ROOT/target/vm/$KERNEL_VARIANT-devd.log"
# QEMU's options for the guest RAM, the device's functions and the state directory's share.
devd_qemu_args=()

# devd_cleanup: the device process, its watcher and its state directory go, whatever
# happened (an EXIT trap).
devd_cleanup() {
	[ -n "$devd_watch_pid" ] && kill "$devd_watch_pid" 2>/dev/null
	[ -n "$devd_pid" ] && kill "$devd_pid" 2>/dev/null
	[ -n "$devd_dir" ] && rm -rf "$devd_dir"
}

# devd_fail MESSAGE: the device process did not start; shows its log and exits 4.
devd_fail() {
	rsnic_log "$1; its log ($devd_log):"
	tail -n 20 "$devd_log" >&2
	exit 4
}

# devd_start MEM: starts the device process for a guest of MEM (QEMU's size=) of RAM and
# waits until it listens (QEMU connects at start); sets devd_* and devd_qemu_args. Exits 4
# if it does not come up.
devd_start() {
	local mem=$1 devd sock i want got
	read -r devd_family _ <<<"${RSNIC_PCI_FAMILY:-${RSNIC_FAMILIES:-mlx5}}"
	devd_ports=${RSNIC_PCI_PORTS:-2}
	devd=${RSNIC_DEVD:-${CARGO_TARGET_DIR:-$RSNIC_ROOT/target}/release/rsnic-devd}
	[ -x "$devd" ] || rsnic_die "no device process at $devd: run 'make devd'"
	mkdir -p "$RSNIC_CACHE/devd" "$(dirname "$devd_log")"
	devd_dir=$(mktemp -d "$RSNIC_CACHE/devd/run-XXXXXX")
	trap devd_cleanup EXIT
	# The sockets in a directory of their own (the state directory holds port<P>/).
	mkdir "$devd_dir/vfio-user"
	"$devd" --vfio-user "$devd_dir/vfio-user" --family "$devd_family" \
		--ports "$devd_ports" --state-dir "$devd_dir" >"$devd_log" 2>&1 &
	devd_pid=$!
	# One function per ConnectX port, one for MANA: devd names each socket on a line
	# of its own once it listens on all of them.
	want=1
	[ "$devd_family" = mlx5 ] && want=$devd_ports
	got=0
	for _ in $(seq 100); do
		got=$(grep -c '^rsnic-devd: listening on ' "$devd_log")
		[ "$got" -ge "$want" ] && break
		kill -0 "$devd_pid" 2>/dev/null || break
		sleep 0.1
	done
	[ "$got" -ge "$want" ] ||
		devd_fail "the device process listens on $got of its $want vfio-user sockets"
	# The guest's RAM must be shareable: QEMU passes its descriptors to devd, which
	# maps them for the device's DMA.
	devd_qemu_args=(
		-object "memory-backend-memfd,id=ram,size=$mem,share=on"
		-machine "${RSNIC_VM_MACHINE:-pc},memory-backend=ram"
	)
	i=0
	while read -r sock; do
		[ -S "$sock" ] || devd_fail "no socket at $sock"
		devd_qemu_args+=(-device "{\"driver\":\"vfio-user-pci\",\"id\":\"rsnic-fn$i\",\"socket\":{\"path\":\"$sock\",\"type\":\"unix\"}}")
		i=$((i + 1))
	done < <(sed -n 's/^rsnic-devd: listening on //p' "$devd_log")
	devd_qemu_args+=(
		-virtfs "local,path=$devd_dir,mount_tag=rsnicdevd,security_model=none,readonly=on"
	)
	rsnic_log "device process: $devd_family, $devd_ports ports, pid $devd_pid (log: $devd_log)"
}

# devd_alive: whether the device process runs (a zombie, dead but not yet waited for by
# vm-run, does not).
devd_alive() {
	local st=""
	read -r _ _ st _ 2>/dev/null <"/proc/$devd_pid/stat" || return 1
	[ "$st" != Z ]
}

# devd_watch LOG: in the background, until the device process exits, watches the serial
# log LOG for a line "RSNIC-DEVD-KILL" (the guest asks for the device to die under it);
# then sends the device process SIGUSR1, waits until it is gone (SIGKILL after 10 s, which
# devd_finish reports as a failure) and creates "killed" in the state directory.
devd_watch() {
	local log=$1
	[ -n "$devd_pid" ] || return 0
	(
		# Only what the log gained since the last look (and the line that may straddle it).
		off=0
		while devd_alive; do
			size=$(stat -c %s "$log" 2>/dev/null || echo 0)
			if [ "$size" -gt "$off" ]; then
				if tail -c +"$((off + 1))" "$log" | grep -aqE $'RSNIC-DEVD-KILL\r?$'; then
					kill -USR1 "$devd_pid" 2>/dev/null
					for _ in $(seq 100); do devd_alive || break; sleep 0.1; done
					devd_alive && kill -KILL "$devd_pid" 2>/dev/null
					while devd_alive; do sleep 0.1; done
					touch "$devd_dir/killed"
					exit 0
				fi
				off=$((size > 64 ? size - 64 : 0))
			fi
			sleep 0.2
		done
	) &
	devd_watch_pid=$!
}

# devd_finish: after QEMU has gone, waits for the device process, which exits by itself
# once its clients have gone (or unplugged at the guest's request, devd_watch). Sets
# devd_status: 0, or 4 if it failed or did not exit.
devd_status=0
devd_finish() {
	local rc
	[ -n "$devd_pid" ] || return 0
	if [ -n "$devd_watch_pid" ]; then
		kill "$devd_watch_pid" 2>/dev/null
		wait "$devd_watch_pid" 2>/dev/null
		devd_watch_pid=""
	fi
	for _ in $(seq 100); do
		kill -0 "$devd_pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$devd_pid" 2>/dev/null; then
		rsnic_log "the device process did not exit 10 s after QEMU; its log ($devd_log):"
		tail -n 20 "$devd_log" >&2
		devd_status=4
		return
	fi
	wait "$devd_pid" 2>/dev/null
	rc=$?
	devd_pid=""
	if [ "$rc" = 0 ] && [ -e "$devd_dir/killed" ]; then
		rsnic_log "the device process unplugged its functions and exited at the guest's request"
	elif [ "$rc" != 0 ]; then
		rsnic_log "the device process failed (exit $rc); its log ($devd_log):"
		tail -n 20 "$devd_log" >&2
		devd_status=4
	fi
}
