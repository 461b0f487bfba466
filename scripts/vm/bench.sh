#!/usr/bin/env bash
# make bench, the VM part (run inside the test VM by scripts/bench-vm.sh): pktgen packet
# rates of 64-byte UDP frames in interleaved rounds of
#   rsnic_mpwqe_on    rsnic port A -> B (namespace peer), skb_tx_mpwqe on,  burst 32
#   rsnic_mpwqe_off   the same with skb_tx_mpwqe off,                        burst 32
#   rsnic_burst1      skb_tx_mpwqe on, burst 1 (the burst veth allows)
#   veth              a veth pair (one end in namespace vpeer),          burst 1
#   mana_rx_db_batched     MANA port C -> D (namespace mpeer), D rings its RQ doorbell once
#                          per NAPI poll (rx_db_per_packet off),           burst 32
#   mana_rx_db_per_packet  the same with one RQ doorbell per re-posted WQE on D
# and the receive-side configurations (64-byte UDP to port 9 of the peer, where nothing
# listens; burst 32; the sender's flag at its default):
#   mlx5_xdp_drop     A -> B, B runs an XDP program returning XDP_DROP (BENCH_XDP_OBJ)
#   mlx5_stack_drop   A -> B, no program: B builds an skb for every frame and the stack
#                     drops it in udp_rcv (no socket: Udp NoPorts)
#   mana_xdp_drop, mana_stack_drop   the same on the MANA pair C -> D
# pktgen refuses bursts on veth (it clears IFF_TX_SKB_SHARING), hence rsnic_burst1 for a
# like-for-like rsnic/veth ratio. Prints one line per run, prefixed "RSNIC-BENCH run", for the
# host to pick out of the serial log; the host computes medians and ratios.
#
# A receive-side run measures CPU time per received packet at a fixed offered rate, not
# pktgen's rate (the sender's): pktgen sends BENCH_VM_RX_COUNT frames at BENCH_VM_RX_RATE
# frames/s (bursts of 32 with a sleep between them, so it never spins on a stopped queue),
# and everything runs on CPU 0: pktgen's thread, the simulated device (its unbound workqueue
# is confined there for the run) and the NAPI polls the device schedules. One CPU, so no
# time is lost spinning on the device model's lock against another vCPU that the host has
# stopped. A monitor process in the receiver's namespace, started once, reads the receiving
# port's rx_packets and the CPU times of /proc/stat (all CPUs and each) just before pktgen
# starts and right after it ends. The run line reports the packets the receiver counted in
# that window, the window's length and the CPU times: the softirq time is the NAPI polls
# (the receiver's RX path, the sender's TX completions), the rest of the busy time is
# pktgen, the sender's xmit and the device model, the same work in both configurations.
#
#   BENCH_VM_ROUNDS=N   rounds (default 5)
#   BENCH_VM_COUNT=N    packets per burst-32 run (default 100000; burst-1 runs a quarter)
#   BENCH_VM_RX_COUNT=N  frames per receive-side run (default 40000)
#   BENCH_VM_RX_RATE=N   their offered rate, frames/s (default 4000)
#   BENCH_VM_XSK_TX_COUNT=N  frames per AF_XDP txonly run (default 50000)
#   BENCH_XSK=PATH      rsnic-xsk (tests/xdp, built by scripts/build-xdp-tools.sh): the AF_XDP
#                       configurations {mlx5,mana}_xsk_{rxdrop,l2fwd}_{zc,copy} (receive
#                       side, as the XDP_DROP ones) and {mlx5,mana}_xsk_txonly_{zc,copy} (the
#                       tool's rate); left out without it
#   BENCH_XDP_OBJ=PATH  the XDP_DROP program (built on the host by scripts/bench-vm.sh);
#                       without it the *_xdp_drop and *_stack_drop configurations are left out
#   BENCH_VM_ONLY=RE    run only the configurations whose name matches the regex RE
set -eu
. "$RSNIC_ROOT/tests/vm/lib.sh"
. "$RSNIC_ROOT/tests/vm/traffic.sh"

ROUNDS=${BENCH_VM_ROUNDS:-5}
COUNT=${BENCH_VM_COUNT:-100000}
RX_COUNT=${BENCH_VM_RX_COUNT:-40000}
RX_RATE=${BENCH_VM_RX_RATE:-4000}
XSK_TX_COUNT=${BENCH_VM_XSK_TX_COUNT:-50000}

# On the vfio-user transport (RSNIC_TRANSPORT=vfio: scripts/bench-vm.sh runs one VM per
# family), the device behind the real-ID functions is the family's, ports A and B; only that
# family's doorbell configurations run, named with "_vfio".
SUFFIX=""
if [ "${RSNIC_TRANSPORT:-kernel}" = vfio ]; then
	SUFFIX=_vfio
	setup_pair
	quiet_pair
	echo "RSNIC-BENCH info kernel=$(uname -r) variant=${KERNEL_VARIANT:-normal} cpus=$(nproc)" \
		"clk_tck=$(getconf CLK_TCK) count=$COUNT rounds=$ROUNDS pkt_size=60 transport=vfio"
fi
if [ -z "$SUFFIX" ]; then
# Device 0 is a ConnectX (ports A, B), device 1 a MANA (ports C, D).
setup_pair num_devs=2 family=mlx5,mana
quiet_pair
mapfile -t _mana < <(for i in $(rsnic_ifaces); do
	[ "$(ethtool -i "$i" | sed -n 's/^firmware-version: //p')" = sim-mana ] && echo "$i"
done)
[ "${#_mana[@]}" = 2 ] || fail "expected 2 MANA ports, found: ${_mana[*]}"
C=${_mana[0]}
D=${_mana[1]}
ip netns add mpeer
ip link set "$D" netns mpeer
ip addr add 10.30.0.1/24 dev "$C"
ip netns exec mpeer ip addr add 10.30.0.2/24 dev "$D"
sysctl -qw "net.ipv6.conf.$C.disable_ipv6=1"
ip netns exec mpeer sysctl -qw "net.ipv6.conf.$D.disable_ipv6=1"
ip link set "$C" up
ip netns exec mpeer ip link set "$D" up
MMAC_D=$(ip netns exec mpeer cat "/sys/class/net/$D/address")
ip neigh replace 10.30.0.2 lladdr "$MMAC_D" dev "$C" nud permanent
wait_for "carrier on $C" eval '[ "$(carrier "$C")" = 1 ]'
ip netns add vpeer
ip link add vA type veth peer name vB netns vpeer
ip addr add 10.20.0.1/24 dev vA
ip netns exec vpeer ip addr add 10.20.0.2/24 dev vB
ip netns exec vpeer ip link set vB up
ip link set vA up
VMAC_B=$(ip netns exec vpeer cat /sys/class/net/vB/address)
sysctl -qw net.ipv6.conf.vA.disable_ipv6=1
sleep 0.5

echo "RSNIC-BENCH info kernel=$(uname -r) variant=${KERNEL_VARIANT:-normal} cpus=$(nproc)" \
	"clk_tck=$(getconf CLK_TCK)" \
	"count=$COUNT rounds=$ROUNDS pkt_size=60 rx_count=$RX_COUNT rx_rate=$RX_RATE" \
	"xsk_tx_count=$XSK_TX_COUNT"
fi

# rx_count DEV NETNS: the frames DEV's device delivered (dev_rx_packets: the stack's, the
# XDP programs' and the AF_XDP sockets'), or DEV's rx_packets (a veth).
rx_count() {
	local n
	n=$(counters "$1" "$2" 2>/dev/null | awk '$1 == "dev_rx_packets:" { print $2 }')
	[ -n "$n" ] || n=$(ip netns exec "$2" cat "/sys/class/net/$1/statistics/rx_packets")
	echo "$n"
}

mkfifo /tmp/nap.fifo
exec {NAP_FD}<>/tmp/nap.fifo
# pg_run DEV COUNT DST MAC BURST [MON [DELAY]]: pktgen_run of tests/vm/traffic.sh (COUNT
# 60-byte UDP frames from DEV, TX queue 0, kpktgend_0, DELAY ns between bursts, default 0;
# sets PG_SENT, PG_PPS, PG_ERRORS), except that it waits for the thread to drop the previous
# device before adding one, and for the run's end: "rem_device_all" and "start" give the
# thread 125 ms to act and return whether it did or not, which a VM that the host starves
# overruns. A run that ended short (pktgen stops on a signal to the writer of "start")
# fails. With MON, the snapshots of that monitor right before "start" and right after the
# end go to PG_S0 and PG_S1.
pg_run() {
	local dev=$1 count=$2 dst=$3 mac=$4 burst=$5 mon=${6:-} delay=${7:-0} c res line i
	[ -d "$PKTGEN" ] || fail "no $PKTGEN (CONFIG_NET_PKTGEN)"
	# rem_device_all only sets a flag for the thread and gives it 125 ms. A thread that acts
	# later removes the device added next, while it runs. So: ask only when the thread has a
	# device, and wait until it has none (every rem_device_all here is sent while a device
	# is listed, so an empty list means no request is pending).
	for ((i = 0; i < 600; i++)); do
		c=0
		while read -r line; do
			case $line in "Running:"?* | "Stopped:"?*) c=1 ;; esac
		done <"$PKTGEN/kpktgend_0"
		[ "$c" = 0 ] && break
		[ "$i" = 0 ] && echo rem_device_all >"$PKTGEN/kpktgend_0"
		read -r -t 0.05 -u "$NAP_FD" line || true
	done
	[ "$c" = 0 ] || fail "kpktgend_0 kept its devices after rem_device_all"
	echo "add_device $dev" >"$PKTGEN/kpktgend_0"
	for c in "count $count" "pkt_size 60" "burst $burst" "delay $delay" "clone_skb 0" \
		"queue_map_min 0" "queue_map_max 0" "dst $dst" "dst_mac $mac"; do
		echo "$c" >"$PKTGEN/$dev" || fail "pktgen $dev: '$c' refused"
	done
	[ -z "$mon" ] || mon_snap "$mon" PG_S0
	echo start >"$PKTGEN/pgctrl"
	# The result of a finished run: "Result: OK: <usec>(c<usec>+d<usec>) usec, <pkts> ...".
	# (Waits with read -t on a FIFO nobody writes: a sleep process every 50 ms would cost the
	# measured CPU more than the wait.)
	for ((i = 0; i < 6000; i++)); do
		while read -r line; do
			case $line in "Result: OK: "[0-9]*"(c"*) break 2 ;; esac
		done <"$PKTGEN/$dev"
		read -r -t 0.05 -u "$NAP_FD" line || true
	done
	[ -z "$mon" ] || mon_snap "$mon" PG_S1
	res=$(cat "$PKTGEN/$dev")
	echo rem_device_all >"$PKTGEN/kpktgend_0"
	[ "$i" -lt 6000 ] || fail "pktgen $dev: no result after 300 s: $(echo "$res" | grep Result)"
	[ "$i" = 0 ] || echo "  (pktgen $dev: start returned before the run ended, waited $i x 50 ms)" >&2
	PG_SENT=$(echo "$res" | sed -n 's/.*pkts-sofar: \([0-9]*\).*/\1/p')
	PG_PPS=$(echo "$res" | sed -n 's/^ *\([0-9]*\)pps.*/\1/p')
	PG_ERRORS=$(echo "$res" | sed -n 's/.*pkts-sofar: [0-9]*  errors: \([0-9]*\).*/\1/p')
	[ "$PG_SENT" -ge "$count" ] || fail "pktgen $dev stopped after $PG_SENT of $count packets"
}

# set_flag DEV RXDEV RXNS FLAG VALUE tx|rx: sets private flag FLAG to VALUE on the sending
# port DEV (tx) or the receiving port RXDEV in namespace RXNS (rx), if it is not already.
set_flag() {
	local dev=$1 rxdev=$2 rxns=$3 flag=$4 val=$5 side=$6
	local ns=() fdev=$dev
	[ "$side" = rx ] && ns=(ip netns exec "$rxns") && fdev=$rxdev
	if [ -n "$flag" ] && [ "$("${ns[@]}" ethtool --show-priv-flags "$fdev" | sed -n "s/^$flag *: *//p")" != "$val" ]; then
		"${ns[@]}" ethtool --set-priv-flags "$fdev" "$flag" "$val"
		wait_for "carrier on $dev" eval '[ "$(carrier "$dev")" = 1 ]'
		sleep 0.2
	fi
}

# run CONFIG DEV DST MAC BURST RXDEV RXNS [FLAG VALUE tx|rx]: pktgen from DEV to RXDEV (in
# namespace RXNS); FLAG is set first on the sending (tx) or receiving (rx) port. Reports
# the packets RXDEV received too (so that a rate is never that of a flood nobody took).
run() {
	local cfg=$1 dev=$2 dst=$3 mac=$4 burst=$5 rxdev=$6 rxns=$7 flag=${8:-} val=${9:-} side=${10:-tx}
	set_flag "$dev" "$rxdev" "$rxns" "$flag" "$val" "$side"
	# Burst-1 runs are many times slower on rsnic (a doorbell and a device kick per packet):
	# a quarter of the packets keeps the round short.
	local n=$COUNT rx0
	[ "$burst" = 1 ] && n=$((COUNT / 4))
	rx0=$(rx_count "$rxdev" "$rxns")
	pg_run "$dev" "$n" "$dst" "$mac" "$burst"
	sleep 0.3 # let the receiving side drain before counting and before the next run
	echo "RSNIC-BENCH run round=$round config=$cfg$SUFFIX burst=$burst count=$n sent=$PG_SENT" \
		"received=$(($(rx_count "$rxdev" "$rxns") - rx0)) pps=$PG_PPS errors=$PG_ERRORS"
}

# --- Receive-side runs: XDP_DROP against the stack's drop ----------------------------------

# A monitor in namespace NS: on every line it reads, prints "NS_MONOTONIC RX_PACKETS STAT",
# STAT being the cpu lines of /proc/stat as "cpu:F,..;cpu0:F,..;.." (fields user nice system
# idle iowait irq softirq steal, in USER_HZ), all read back to back. Started once per
# namespace, so a snapshot costs a pipe round trip, not a process start.
# RX_PACKETS is the port's dev_rx_packets (every frame its device delivered, also those an
# XDP program or an AF_XDP socket took, which rx_packets, the stack's count, leaves out),
# read from the device host's debugfs (model_counters_file) before the clock and the CPU
# times (its cost falls in the window of the snapshot that ends a run, the same few
# milliseconds in every configuration).
cat >/tmp/rxmon.py <<'PY'
import sys, time
def rx(dev, path):
    # The device model's count (every frame, whatever XDP or AF_XDP did with it), from the
    # device host's debugfs; a veth has only its netdev counter.
    try:
        for line in open(path):
            k, _, v = line.strip().partition(":")
            if k == "dev_rx_packets":
                return v.strip()
    except OSError:
        pass
    return open("/sys/class/net/%s/statistics/rx_packets" % dev).read().strip()
st = open("/proc/stat")
for _ in sys.stdin:
    r = rx(sys.argv[1], sys.argv[2])
    st.seek(0)
    t = time.monotonic_ns()
    cpus = [l.split() for l in st.read().splitlines() if l.startswith("cpu")]
    print(t, r, ";".join("%s:%s" % (c[0], ",".join(c[1:9])) for c in cpus), flush=True)
PY
# mon_start NAME DEV NS: starts the monitor of DEV in NS, talking on fds MON_IN[NAME] and
# MON_OUT[NAME].
declare -A MON_IN MON_OUT
mon_start() {
	local name=$1 dev=$2 mns=$3 fin fout file ns=()
	file=$(model_counters_file "$dev" "$mns")
	mkfifo "/tmp/mon-$name.in" "/tmp/mon-$name.out"
	# In the namespace only without the device host's file: `ip netns exec` mounts a fresh
	# /sys, which hides debugfs.
	[ -r "$file" ] || ns=(ip netns exec "$mns")
	"${ns[@]}" python3 -u /tmp/rxmon.py "$dev" "$file" <"/tmp/mon-$name.in" >"/tmp/mon-$name.out" &
	exec {fin}>"/tmp/mon-$name.in" {fout}<"/tmp/mon-$name.out"
	MON_IN[$name]=$fin
	MON_OUT[$name]=$fout
}
# mon_snap NAME VAR: one snapshot of monitor NAME into variable VAR (no subshell: the run
# starts no process that could end, and signal the shell, while pktgen runs).
mon_snap() {
	echo >&"${MON_IN[$1]}"
	read -r "$2" <&"${MON_OUT[$1]}" || fail "monitor $1 stopped"
}
# udp_noports NS: the Udp NoPorts and Icmp OutDestUnreachs counters of namespace NS.
udp_noports() {
	ip netns exec "$1" cat /proc/net/snmp | awk '
		$1 == "Udp:" && !u { for (i = 2; i <= NF; i++) uh[$i] = i; u = 1; next }
		$1 == "Udp:" { np = $uh["NoPorts"] }
		$1 == "Icmp:" && !c { for (i = 2; i <= NF; i++) ch[$i] = i; c = 1; next }
		$1 == "Icmp:" { du = $ch["OutDestUnreachs"] }
		END { print np + 0, du + 0 }'
}
# xdp_set NS DEV on|off: attaches the XDP_DROP program to DEV or detaches it, and waits
# until the port has its carrier again (attach and detach reopen the channels).
xdp_set() {
	local xns=$1 xdev=$2
	if [ "$3" = on ]; then
		ip netns exec "$xns" ip link set dev "$xdev" xdpdrv obj "$XDP_OBJ" sec xdp ||
			fail "attaching $XDP_OBJ to $xdev"
	else
		ip netns exec "$xns" ip link set dev "$xdev" xdpdrv off || fail "detaching XDP from $xdev"
	fi
	wait_for "carrier on $xdev after XDP $3" \
		eval '[ "$(ip netns exec "$xns" cat "/sys/class/net/$xdev/carrier")" = 1 ]'
	sleep 0.2
}

# xsk_on NS DEV rxdrop|l2fwd z|c: rsnic-xsk (BENCH_XSK) in MODE on every RX queue of DEV
# (pktgen's one flow lands on one of them), bound in zero-copy (z) or copy (c) mode behind
# the native XDP program it attaches, pinned to RX_CPU; returns once every socket is bound.
# xsk_off stops them and sets XSK_RX to the packets they received.
XSK_TOOL=${BENCH_XSK:-}
XSK_PIDS=()
xsk_on() {
	local xns=$1 xdev=$2 xmode=$3 bind=-$4 nq q i
	nq=$(ip netns exec "$xns" sh -c "ls -d /sys/class/net/$xdev/queues/rx-*" | wc -l)
	XSK_PIDS=()
	for ((q = 0; q < nq; q++)); do
		rm -f "/tmp/bx.$q.ready"
		ip netns exec "$xns" taskset -c "$RX_CPU" "$XSK_TOOL" "$xmode" -i "$xdev" -q "$q" "$bind" \
			-d 100000 --ready-file "/tmp/bx.$q.ready" >"/tmp/bx.$q" 2>"/tmp/bx.$q.err" &
		XSK_PIDS+=($!)
		for ((i = 0; i < 100; i++)); do
			[ -e "/tmp/bx.$q.ready" ] && break
			kill -0 "${XSK_PIDS[$q]}" 2>/dev/null || fail "rsnic-xsk $xmode on $xdev queue $q: $(cat "/tmp/bx.$q.err")"
			sleep 0.1
		done
		[ -e "/tmp/bx.$q.ready" ] || fail "rsnic-xsk $xmode on $xdev queue $q did not start"
	done
}
xsk_off() {
	local q n
	kill -INT "${XSK_PIDS[@]}"
	XSK_RX=0
	for q in "${!XSK_PIDS[@]}"; do
		wait "${XSK_PIDS[$q]}" || fail "rsnic-xsk on queue $q: $(cat "/tmp/bx.$q.err")"
		n=$(sed -n 's/^rsnic-xsk: .* received=\([0-9]*\).*/\1/p' "/tmp/bx.$q")
		[ -n "$n" ] || fail "rsnic-xsk on queue $q printed no result"
		XSK_RX=$((XSK_RX + n))
	done
}

# The CPU of a receive-side run: pktgen's thread (kpktgend_0) is bound to CPU 0; the simulated
# device runs on an unbound workqueue, and the NAPI polls it schedules (the receiver's RX,
# the sender's TX completions) run where it runs. For the run the unbound workqueues are
# confined to CPU 0 as well.
RX_CPU=0
WQ_MASK=/sys/devices/virtual/workqueue/cpumask

# run_rx CONFIG DEV DST MAC RXDEV RXNS MON MODE FLAG VALUE tx|rx: pktgen (burst 32,
# RX_COUNT frames at RX_RATE frames/s) from DEV to RXDEV in RXNS, RXDEV with the XDP_DROP
# program attached (MODE xdp), none (stack), or AF_XDP sockets (xsk-rxdrop-z, xsk-rxdrop-c,
# xsk-l2fwd-z, xsk-l2fwd-c: rsnic-xsk rxdrop or l2fwd, zero-copy or copy; l2fwd sends every
# frame back to DEV);
# the monitor MON snapshots RXDEV's rx_packets and the CPU times right before pktgen starts
# and right after it returns. Reports the receiver's NAPI polls (rx_polls) and the drops
# where they happened (rx_xdp_drop, or Udp NoPorts and the ICMP port-unreachables the stack
# sent, rate-limited).
run_rx() {
	local cfg=$1 dev=$2 dst=$3 mac=$4 rxdev=$5 rxns=$6 mon=$7 mode=$8
	local n=$RX_COUNT c rx0 d0 d1 u0 u1 i0 i1 p0 p1 dropped mask t0 t1 r0 r1 st0 st1 xm xb
	set_flag "$dev" "$rxdev" "$rxns" "$9" "${10}" "${11}"
	[ "$mode" = xdp ] && xdp_set "$rxns" "$rxdev" on
	if [ "${mode:0:4}" = xsk- ]; then
		IFS=- read -r _ xm xb <<<"$mode"
		xsk_on "$rxns" "$rxdev" "$xm" "$xb"
	fi
	rx0=$(rx_count "$rxdev" "$rxns")
	d0=$(stat "$rxdev" rx_xdp_drop "$rxns")
	p0=$(stat "$rxdev" rx_polls "$rxns")
	# (A command substitution, not a process substitution: bash waits for its process. A
	# child ending while "start" is written signals the shell, and pktgen stops on a signal.)
	c=$(udp_noports "$rxns")
	read -r u0 i0 <<<"$c"
	mask=$(cat "$WQ_MASK")
	printf '%x\n' $((1 << RX_CPU)) >"$WQ_MASK"
	pg_run "$dev" "$n" "$dst" "$mac" 32 "$mon" $((32 * 1000000000 / RX_RATE))
	echo "$mask" >"$WQ_MASK"
	sleep 0.3 # let the receiving side drain before counting and before the next run
	d1=$(stat "$rxdev" rx_xdp_drop "$rxns")
	p1=$(stat "$rxdev" rx_polls "$rxns")
	c=$(udp_noports "$rxns")
	read -r u1 i1 <<<"$c"
	if [ "$mode" = xdp ]; then
		dropped="xdp_drop=$((d1 - d0))"
		xdp_set "$rxns" "$rxdev" off
	elif [ "${mode:0:4}" = xsk- ]; then
		xsk_off
		dropped="xsk_rx=$XSK_RX xdp_drop=$((d1 - d0))"
	else
		dropped="udp_noports=$((u1 - u0)) icmp_unreach=$((i1 - i0)) xdp_drop=$((d1 - d0))"
	fi
	read -r t0 r0 st0 <<<"$PG_S0"
	read -r t1 r1 st1 <<<"$PG_S1"
	echo "RSNIC-BENCH run round=$round config=$cfg burst=32 count=$n sent=$PG_SENT" \
		"received=$(($(rx_count "$rxdev" "$rxns") - rx0)) pps=$PG_PPS errors=$PG_ERRORS" \
		"window_ns=$((t1 - t0)) rx_window=$((r1 - r0)) rx_cpu=$RX_CPU stat0=$st0 stat1=$st1" \
		"rx_polls=$((p1 - p0)) $dropped"
}

# run_xsktx CONFIG z|c DEV MAC PEERDEV PEERNS: rsnic-xsk txonly from DEV's queue 0
# (XSK_TX_COUNT 64-byte frames to MAC, as fast as it goes), zero-copy or copy, pinned to
# RX_CPU; PEERDEV in PEERNS drops them with the XDP_DROP program. Reports the tool's rate
# (first to last completion).
run_xsktx() {
	local cfg=$1 bind=-$2 dev=$3 mac=$4 pdev=$5 pns=$6 line
	xdp_set "$pns" "$pdev" on
	# Zero-copy TX queues exist only while the sending port has a program (as mlx5e's).
	[ "$bind" != -z ] || ip link set dev "$dev" xdpdrv obj "$XDP_OBJ" sec xdp ||
		fail "attaching $XDP_OBJ to $dev"
	line=$(taskset -c "$RX_CPU" "$XSK_TOOL" txonly -i "$dev" -q 0 "$bind" -n "$XSK_TX_COUNT" \
		-s 64 --dst-mac "$mac" 2>/tmp/bx.tx.err | grep '^rsnic-xsk:') ||
		fail "rsnic-xsk txonly $bind on $dev: $(cat /tmp/bx.tx.err)"
	[ "$bind" != -z ] || ip link set dev "$dev" xdpdrv off || fail "detaching XDP from $dev"
	xdp_set "$pns" "$pdev" off
	echo "RSNIC-BENCH xsktx round=$round config=$cfg count=$XSK_TX_COUNT" \
		"pps=$(echo "$line" | sed -n 's/.* pps=\([0-9]*\).*/\1/p')" \
		"packets=$(echo "$line" | sed -n 's/.* packets=\([0-9]*\).*/\1/p')" \
		"bind=$(echo "$line" | sed -n 's/.* bind=\([a-z-]*\).*/\1/p')"
}

if [ "$SUFFIX" = _vfio ] && [ "$RSNIC_FAMILY" = mlx5 ]; then
	configs=(
		"run rsnic_mpwqe_on $A 10.10.0.2 $MAC_B 32 $B peer skb_tx_mpwqe on tx"
		"run rsnic_mpwqe_off $A 10.10.0.2 $MAC_B 32 $B peer skb_tx_mpwqe off tx"
	)
elif [ "$SUFFIX" = _vfio ]; then
	configs=(
		"run mana_rx_db_batched $A 10.10.0.2 $MAC_B 32 $B peer rx_db_per_packet off rx"
		"run mana_rx_db_per_packet $A 10.10.0.2 $MAC_B 32 $B peer rx_db_per_packet on rx"
	)
else
configs=(
	"run rsnic_mpwqe_on $A 10.10.0.2 $MAC_B 32 $B peer skb_tx_mpwqe on tx"
	"run rsnic_mpwqe_off $A 10.10.0.2 $MAC_B 32 $B peer skb_tx_mpwqe off tx"
	"run rsnic_burst1 $A 10.10.0.2 $MAC_B 1 $B peer skb_tx_mpwqe on tx"
	"run veth vA 10.20.0.2 $VMAC_B 1 vB vpeer"
	"run mana_rx_db_batched $C 10.30.0.2 $MMAC_D 32 $D mpeer rx_db_per_packet off rx"
	"run mana_rx_db_per_packet $C 10.30.0.2 $MMAC_D 32 $D mpeer rx_db_per_packet on rx"
)
fi
XDP_OBJ=${BENCH_XDP_OBJ:-}
[ -z "$SUFFIX" ] || XDP_OBJ=""
if [ -n "$XDP_OBJ" ]; then
	[ -r "$XDP_OBJ" ] || fail "no XDP program at $XDP_OBJ"
	mon_start peer "$B" peer
	mon_start mpeer "$D" mpeer
	configs+=(
		"run_rx mlx5_xdp_drop $A 10.10.0.2 $MAC_B $B peer peer xdp skb_tx_mpwqe on tx"
		"run_rx mlx5_stack_drop $A 10.10.0.2 $MAC_B $B peer peer stack skb_tx_mpwqe on tx"
		"run_rx mana_xdp_drop $C 10.30.0.2 $MMAC_D $D mpeer mpeer xdp rx_db_per_packet off rx"
		"run_rx mana_stack_drop $C 10.30.0.2 $MMAC_D $D mpeer mpeer stack rx_db_per_packet off rx"
	)
	# AF_XDP, zero-copy against copy, on both families.
	[ -z "$XSK_TOOL" ] || configs+=(
		"run_rx mlx5_xsk_rxdrop_zc $A 10.10.0.2 $MAC_B $B peer peer xsk-rxdrop-z skb_tx_mpwqe on tx"
		"run_rx mlx5_xsk_rxdrop_copy $A 10.10.0.2 $MAC_B $B peer peer xsk-rxdrop-c skb_tx_mpwqe on tx"
		"run_rx mlx5_xsk_l2fwd_zc $A 10.10.0.2 $MAC_B $B peer peer xsk-l2fwd-z skb_tx_mpwqe on tx"
		"run_rx mlx5_xsk_l2fwd_copy $A 10.10.0.2 $MAC_B $B peer peer xsk-l2fwd-c skb_tx_mpwqe on tx"
		"run_xsktx mlx5_xsk_txonly_zc z $A $MAC_B $B peer"
		"run_xsktx mlx5_xsk_txonly_copy c $A $MAC_B $B peer"
		"run_rx mana_xsk_rxdrop_zc $C 10.30.0.2 $MMAC_D $D mpeer mpeer xsk-rxdrop-z rx_db_per_packet off rx"
		"run_rx mana_xsk_rxdrop_copy $C 10.30.0.2 $MMAC_D $D mpeer mpeer xsk-rxdrop-c rx_db_per_packet off rx"
		"run_rx mana_xsk_l2fwd_zc $C 10.30.0.2 $MMAC_D $D mpeer mpeer xsk-l2fwd-z rx_db_per_packet off rx"
		"run_rx mana_xsk_l2fwd_copy $C 10.30.0.2 $MMAC_D $D mpeer mpeer xsk-l2fwd-c rx_db_per_packet off rx"
		"run_xsktx mana_xsk_txonly_zc z $C $MMAC_D $D mpeer"
		"run_xsktx mana_xsk_txonly_copy c $C $MMAC_D $D mpeer"
	)
fi
if [ -n "${BENCH_VM_ONLY:-}" ]; then
	mapfile -t configs < <(printf '%s\n' "${configs[@]}" | awk -v re="$BENCH_VM_ONLY" '$2 ~ re')
	[ "${#configs[@]}" -gt 0 ] || fail "no configuration matches BENCH_VM_ONLY=$BENCH_VM_ONLY"
fi
# Interleaved rounds; each round starts one configuration later than the one before, so
# that no configuration always follows the same other one.
for round in $(seq "$ROUNDS"); do
	for k in $(seq 0 $((${#configs[@]} - 1))); do
		# shellcheck disable=SC2086
		${configs[$(((round - 1 + k) % ${#configs[@]}))]}
	done
done
echo "RSNIC-BENCH done"
# The monitors end at the end of their input.
for m in "${!MON_IN[@]}"; do
	eval "exec ${MON_IN[$m]}>&- ${MON_OUT[$m]}<&-"
done
wait
if [ -z "$SUFFIX" ]; then
	ip link del vA
	ip netns del vpeer
	ip netns del mpeer
fi
teardown_pair
