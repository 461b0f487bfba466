# Traffic helpers for rsnic's VM tests, make demo and the VM bench (iperf3, socat, pktgen,
# counter snapshots). Source it after lib.sh.
# shellcheck shell=bash

# snap NAME IFACE [NETNS]: keeps IFACE's counters (`ethtool -S` and the device model's,
# see counters in lib.sh) under NAME.
snap() {
	local k v
	# Through a file: the shell reads a pipe a byte per system call, a file by blocks.
	counters "$2" "${3:-}" >"/tmp/snap.$1.raw"
	while read -r k v; do
		case $k in *:) echo "${k%:} ${v%% *}" ;; esac
	done <"/tmp/snap.$1.raw" >"/tmp/snap.$1"
}

# snap_get NAME COUNTER: COUNTER in snapshot NAME (0 if absent). Read by the shell: a
# process costs a tenth of a second in the TCG VM, seconds on the debug kernel.
snap_get() {
	file_field "/tmp/snap.$1" "$2" 0
}

# delta NAME0 NAME1 COUNTER: COUNTER in snapshot NAME1 minus COUNTER in snapshot NAME0.
delta() {
	echo $(($(snap_get "$2" "$3") - $(snap_get "$1" "$3")))
}

# deltas NAME0 NAME1: "COUNTER DELTA" for every counter of snapshot NAME1.
deltas() {
	awk 'NR == FNR { a[$1] = $2; next } { print $1, $2 - a[$1] }' "/tmp/snap.$1" "/tmp/snap.$2"
}

# ratio NUM DEN [DIGITS]: NUM/DEN as a decimal ("-" when DEN is 0).
ratio() {
	awk -v n="$1" -v d="$2" -v p="${3:-2}" 'BEGIN { if (d == 0) print "-"; else printf "%.*f\n", p, n / d }'
}

# quiet_pair: no background traffic between A and B (no IPv6, static neighbours), so that
# counter deltas count only the traffic a test makes.
quiet_pair() {
	local mac_a mac_b
	mac_a=$(cat "/sys/class/net/$A/address")
	mac_b=$(ip netns exec peer cat "/sys/class/net/$B/address")
	sysctl -qw "net.ipv6.conf.$A.disable_ipv6=1"
	ip netns exec peer sysctl -qw "net.ipv6.conf.$B.disable_ipv6=1"
	ip neigh replace 10.10.0.2 lladdr "$mac_b" dev "$A" nud permanent
	ip netns exec peer ip neigh replace 10.10.0.1 lladdr "$mac_a" dev "$B" nud permanent
	MAC_B=$mac_b
}

# settled: A's driver and device TX agree, and everything A's device sent reached B's device
# (received, dropped, or kept away by its receive filter) and B's driver. Compares snapshots "s0" and "s1" (taken here).
settled() {
	snap s1a "$A"
	snap s1b "$B" peer
	local -A da db
	local k v tx dtx drx rx drop
	deltas s0a s1a >/tmp/deltas.a
	deltas s0b s1b >/tmp/deltas.b
	while read -r k v; do da[$k]=$v; done </tmp/deltas.a
	while read -r k v; do db[$k]=$v; done </tmp/deltas.b
	tx=${da[tx_packets]:-0} dtx=${da[dev_tx_packets]:-0}
	drx=${db[dev_rx_packets]:-0} rx=${db[rx_packets]:-0}
	drop=$((${db[$C_NOWQE]:-0} + ${db[dev_rx_no_rq_drops]:-0} + ${db[$C_TOO_LONG]:-0} +
		${db[dev_rx_vport_filtered]:-0} + ${da[dev_tx_link_down_drops]:-0}))
	[ "$tx" = "$dtx" ] && [ "$((drx + drop))" = "$dtx" ] && [ "$rx" = "$drx" ]
}

PKTGEN=/proc/net/pktgen

# pktgen_clear: kpktgend_0 without devices. "rem_device_all" only sets a flag for the
# thread and gives it 125 ms, whether it acted or not; a thread that acts later removes the
# device added next (a loaded machine made 75-coalesce meet it: "/proc/net/pktgen/eth0"
# gone before its first setting). So: ask only while the thread lists a device, and wait
# until it lists none (an empty list means no request is pending).
pktgen_clear() {
	local i line c
	for ((i = 0; i < 600; i++)); do
		c=0
		while read -r line; do
			case $line in "Running:"?* | "Stopped:"?*) c=1 ;; esac
		done <"$PKTGEN/kpktgend_0"
		[ "$c" = 0 ] && return 0
		[ "$i" = 0 ] && echo rem_device_all >"$PKTGEN/kpktgend_0"
		sleep 0.05
	done
	fail "kpktgend_0 kept its devices 30 s after rem_device_all"
}

# pktgen_run IFACE COUNT DST_IP DST_MAC [BURST] [PKT_SIZE]: sends COUNT UDP packets from
# IFACE (one TX queue, queue 0) with kpktgend_0 and sets PG_SENT and PG_PPS from its result.
# PG_EXTRA (an array) adds pktgen settings (e.g. "udp_src_min 1000" "udp_src_max 1008":
# eight flows, one packet of each in turn). PG_HOOK names a function run as "PG_HOOK start"
# right before the run starts and "PG_HOOK end" right after "start" returns, before anything
# else (make bench-upstream reads the CPU times there; it should start no process).
PG_EXTRA=()
PG_HOOK=""
pktgen_run() {
	local dev=$1 count=$2 dst=$3 mac=$4 burst=${5:-32} size=${6:-60} c res
	[ -d "$PKTGEN" ] || fail "no $PKTGEN (CONFIG_NET_PKTGEN)"
	pktgen_clear
	echo "add_device $dev" >"$PKTGEN/kpktgend_0"
	for c in "count $count" "pkt_size $size" "burst $burst" "delay 0" "clone_skb 0" \
		"queue_map_min 0" "queue_map_max 0" "dst $dst" "dst_mac $mac" \
		${PG_EXTRA[@]+"${PG_EXTRA[@]}"}; do
		echo "$c" >"$PKTGEN/$dev" || fail "pktgen $dev: '$c' refused"
	done
	[ -z "$PG_HOOK" ] || "$PG_HOOK" start
	echo start >"$PKTGEN/pgctrl"
	[ -z "$PG_HOOK" ] || "$PG_HOOK" end
	res=$(cat "$PKTGEN/$dev")
	PG_SENT=$(echo "$res" | sed -n 's/.*pkts-sofar: \([0-9]*\).*/\1/p')
	PG_PPS=$(echo "$res" | sed -n 's/^ *\([0-9]*\)pps.*/\1/p')
	PG_ERRORS=$(echo "$res" | sed -n 's/.*pkts-sofar: [0-9]*  errors: \([0-9]*\).*/\1/p')
	echo rem_device_all >"$PKTGEN/kpktgend_0"
	echo "$res" | grep -q 'Result: OK' || fail "pktgen $dev: $(echo "$res" | grep Result)"
}

# pktgen_deaf KNOB IFACE COUNT DST_IP DST_MAC: makes IFACE's device lose an interrupt
# ("drop_irqs 1" written to KNOB) on a ping to DST_IP, checks that the channel went deaf,
# then sends COUNT packets with pktgen. A lost interrupt leaves the channel's EQ disarmed
# and the channel deaf, so the COUNT packets fill its SQ and the queue stops until the TX
# watchdog finds the waiting events. Sending only COUNT would leave that to timing: under
# TCG, NAPI can keep polling through a whole burst, the interrupt then lost after the last
# packet with no queue left to stop. Deaf is checked, not assumed: an interrupt lost while
# the driver was still handling the one before can have its event read and the EQ re-armed
# by that handler (the channel goes on; a clean-clone run of 68 met it), so one more ping
# must reach IFACE's device (dev_rx_packets) and not its driver (rx_packets); if the driver
# saw it, another interrupt is made to go (at most 10 tries). Pings, not a short pktgen run:
# pktgen waits for its last packet's completion, which a deaf channel with a running queue
# never gives. IFACE must have one channel (its queue 0). PG_SENT: the pings and pktgen's
# packets (what the peer receives); PG_PINGS: the pings; PG_LOST: the interrupts lost.
pktgen_deaf() {
	local knob=$1 dev=$2 count=$3 dst=$4 mac=$5 lost0 try i pings=0 deaf="" r0 d0
	for try in $(seq 10); do
		lost0=$(stat "$dev" dev_irqs_lost)
		echo "drop_irqs 1" >"$knob"
		for i in $(seq 50); do
			ping -c 1 -W 0.2 -q "$dst" >/dev/null 2>&1 || true
			pings=$((pings + 1))
			[ "$(stat "$dev" dev_irqs_lost)" -gt "$lost0" ] && break
		done
		[ "$(stat "$dev" dev_irqs_lost)" -gt "$lost0" ] ||
			fail "drop_irqs: $dev's device lost no interrupt in $pings pings"
		r0=$(stat "$dev" rx_packets)
		d0=$(stat "$dev" dev_rx_packets)
		ping -c 1 -W 0.3 -q "$dst" >/dev/null 2>&1 || true
		pings=$((pings + 1))
		# The reply must have reached the device before the driver's silence means anything.
		wait_for "drop_irqs: the ping's reply at $dev's device" \
			eval '[ "$(stat "$dev" dev_rx_packets)" -gt "$d0" ]'
		sleep 0.2
		if [ "$(stat "$dev" rx_packets)" = "$r0" ]; then
			deaf=1
			break
		fi
		echo "  drop_irqs: the driver read the lost interrupt's event (try $try): again"
	done
	[ -n "$deaf" ] || fail "drop_irqs: $dev's channel never went deaf in 10 lost interrupts"
	PG_LOST=$try
	pktgen_run "$dev" "$count" "$dst" "$mac" 32
	PG_PINGS=$pings
	PG_SENT=$((PG_SENT + pings))
}

# path_drops RECV_NS RECV_IF SEND_NS SEND_IF: the drops a datagram from SEND_IF to RECV_IF
# can meet and that the kernel counts (whatever the driver): the receiver's UDP InErrors
# (socket buffer overflows among them), RECV_IF's rx_dropped, rx_missed_errors,
# rx_fifo_errors and, where its driver has it, rx_out_of_buffer; SEND_IF's tx_dropped and
# its qdiscs' drops. "" for the initial namespace.
path_drops() {
	local rns=() sns=() n f
	[ -n "$1" ] && rns=(ip netns exec "$1")
	[ -n "$3" ] && sns=(ip netns exec "$3")
	n=$("${rns[@]}" awk '$1 == "Udp:" && $2 ~ /^[0-9]+$/ { print $4 }' /proc/net/snmp)
	for f in rx_dropped rx_missed_errors rx_fifo_errors; do
		n=$((n + $("${rns[@]}" cat "/sys/class/net/$2/statistics/$f")))
	done
	n=$((n + $("${rns[@]}" ethtool -S "$2" 2>/dev/null |
		awk '$1 == "rx_out_of_buffer:" { v = $2 } END { print v + 0 }')))
	n=$((n + $("${sns[@]}" cat "/sys/class/net/$4/statistics/tx_dropped")))
	n=$((n + $("${sns[@]}" tc -s qdisc show dev "$4" |
		awk '{ for (i = 1; i < NF; i++) if ($i == "dropped") { sub(",", "", $(i + 1)); d += $(i + 1) } } END { print d + 0 }')))
	echo "$n"
}

# udp_loss_check WHAT LOST PKTS DROPS: an iperf3 UDP run that lost LOST of PKTS datagrams,
# DROPS of them counted on the way (a path_drops delta, plus any device counter the caller
# has). Every lost datagram beyond 1% of PKTS must be a counted one: a 2-CPU TCG guest on a
# loaded machine can starve the receiving iperf3 past its socket buffer (InErrors), which a
# rate check alone would call a driver fault, while a datagram lost without a count is one.
udp_loss_check() {
	local what=$1 lost=$2 pkts=$3 drops=$4
	echo "  UDP $what: lost $lost of $pkts datagrams, $drops drops counted on the path"
	[ "$pkts" -gt 0 ] 2>/dev/null || fail "UDP $what: no datagrams"
	[ $(((lost - drops) * 100)) -le "$pkts" ] ||
		fail "UDP $what: lost $lost of $pkts datagrams, only $drops of them counted as dropped"
}

# listening PORT [NETNS]: something listens on TCP PORT.
listening() {
	local ns=()
	[ -n "${2:-}" ] && ns=(ip netns exec "$2")
	"${ns[@]}" ss -Hltn "sport = :$1" | grep -q .
}

# iperf_server ADDR [NETNS]: a one-shot iperf3 server on ADDR:5201, daemonised.
iperf_server() {
	local ns=()
	[ -n "${2:-}" ] && ns=(ip netns exec "$2")
	"${ns[@]}" iperf3 -s -D -1 -B "$1" --logfile /tmp/iperf3-server.log
	wait_for "iperf3 server on $1" listening 5201 "${2:-}"
}

# iperf_json FILE FIELD: a figure from iperf3 -J output: bps (receiver side for TCP, the
# server's for UDP), lost_percent, lost, packets, retransmits.
iperf_json() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
f = sys.argv[2]
# The run's error ("none" without one), and what the client sent: the figure an interrupted
# client still reports (it is not told the receiver's).
if f == "error":
    print(r.get("error", "none")); sys.exit(0)
if f == "sent_bps":
    print(int(r.get("end", {}).get("sum_sent", {}).get("bits_per_second", 0))); sys.exit(0)
if "error" in r:
    # Numbers stay numbers for the callers' arithmetic; the reason goes to stderr.
    print("iperf3 reported: " + r["error"], file=sys.stderr)
    print(0); sys.exit(0)
e = r["end"]
s = e.get("sum_received", e.get("sum", {}))
v = {"bps": s.get("bits_per_second", 0),
     "retransmits": e.get("sum_sent", {}).get("retransmits", 0)}
if r["start"]["test_start"]["protocol"] == "UDP":
    u = e.get("sum", {})
    v.update(lost_percent=u.get("lost_percent", 0), lost=u.get("lost_packets", 0),
             packets=u.get("packets", 0))
x = v.get(f, 0)
print(int(x) if f != "lost_percent" else "%.2f" % x)
EOF
}

# ping_both: ping A -> B and B -> A over IPv4 and IPv6 (pair_up's addresses), 5 echoes each;
# fails unless every echo is answered.
ping_both() {
	local v out
	for v in "10.10.0.2 10.10.0.1" "fd00::2 fd00::1"; do
		# shellcheck disable=SC2086 # two addresses
		set -- $v
		out=$(ping -c 5 -i 0.2 -W 2 "$1" 2>&1) || fail "ping $A -> $1: $(echo "$out" | tail -n 2)"
		echo "$out" | grep -q ' 5 received' || fail "ping $A -> $1: $(echo "$out" | tail -n 2)"
		out=$(ip netns exec peer ping -c 5 -i 0.2 -W 2 "$2" 2>&1) ||
			fail "ping $B -> $2: $(echo "$out" | tail -n 2)"
		echo "$out" | grep -q ' 5 received' || fail "ping $B -> $2: $(echo "$out" | tail -n 2)"
		echo "  ping $A <-> $B ($1, $2): 5 of 5 both ways"
	done
}

# vlan_pair: VLAN 10 over the pair: $A.10 with 10.10.10.1/24 and, in "peer", $B.10 with
# 10.10.10.2/24, both up. Fails if either VLAN interface cannot be made.
vlan_pair() {
	ip link add link "$A" name "$A.10" type vlan id 10 || fail "no VLAN interface on $A"
	ip netns exec peer ip link add link "$B" name "$B.10" type vlan id 10 || fail "no VLAN interface on $B"
	ip addr add 10.10.10.1/24 dev "$A.10"
	ip netns exec peer ip addr add 10.10.10.2/24 dev "$B.10"
	ip link set "$A.10" up
	ip netns exec peer ip link set "$B.10" up
}

# run_iperf CLIENT_NS SERVER_NS SERVER_ADDR NAME ARGS...: one iperf3 run of 3 s (ARGS added)
# from CLIENT_NS to a server on SERVER_ADDR in SERVER_NS ("" for the initial namespace), its
# JSON in /tmp/NAME.json. Fails if iperf3 does or takes over 60 s.
run_iperf() {
	local cns=() server_ns=$2 addr=$3 name=$4
	[ -n "$1" ] && cns=(ip netns exec "$1")
	shift 4
	iperf_server "$addr" "$server_ns"
	timeout 60 "${cns[@]}" iperf3 -c "$addr" -t 3 -J "$@" >"/tmp/$name.json" ||
		fail "iperf3 $name failed: $(iperf_json "/tmp/$name.json" bps)"
}

# iperf_dir DIR NAME ARGS...: run_iperf in direction DIR of the pair: a_to_b from A to B
# (10.10.0.2, in "peer"), b_to_a from B to A (10.10.0.1).
iperf_dir() {
	local dir=$1
	shift
	if [ "$dir" = a_to_b ]; then run_iperf "" peer 10.10.0.2 "$@"; else run_iperf peer "" 10.10.0.1 "$@"; fi
}

# dir_drops DIR: path_drops for the datagrams of direction DIR (a_to_b: B in "peer"
# receives, A sends; b_to_a the other way).
dir_drops() {
	if [ "$1" = a_to_b ]; then path_drops peer "$B" "" "$A"; else path_drops "" "$A" peer "$B"; fi
}

# iperf_tcp DIR: iperf3 TCP in direction DIR (iperf_dir, its JSON in /tmp/tcp-DIR.json);
# prints the rate and the retransmits. Fails if iperf3 does or if no data moved.
iperf_tcp() {
	local bps
	iperf_dir "$1" "tcp-$1"
	bps=$(iperf_json "/tmp/tcp-$1.json" bps)
	echo "  TCP $1: $((bps / 1000)) kbit/s, retransmits $(iperf_json "/tmp/tcp-$1.json" retransmits)"
	[ "$bps" -gt 0 ] 2>/dev/null || fail "TCP $1: no throughput ($bps)"
}

# iperf_both: in each direction TCP (iperf_tcp: TSO, TCP checksum offload), then UDP (UDP
# checksum offload, 1400-byte datagrams at 4 Mbit/s) that may lose at most 1% uncounted
# (udp_loss_check, the drops counted by dir_drops). Fails where those do.
iperf_both() {
	local dir bps d0
	for dir in a_to_b b_to_a; do
		iperf_tcp "$dir"
		d0=$(dir_drops "$dir")
		iperf_dir "$dir" "udp-$dir" -u -b 4M -l 1400
		bps=$(iperf_json "/tmp/udp-$dir.json" bps)
		udp_loss_check "$dir at 4 Mbit/s ($((bps / 1000)) kbit/s)" \
			"$(iperf_json "/tmp/udp-$dir.json" lost)" "$(iperf_json "/tmp/udp-$dir.json" packets)" \
			$(($(dir_drops "$dir") - d0))
	done
}

# ethtool_sum IFACE NETNS PATTERN: the sum of IFACE's ethtool -S counters whose names match
# the extended regular expression PATTERN (anchored); NETNS "" for the initial namespace.
ethtool_sum() {
	local ns=()
	[ -n "$2" ] && ns=(ip netns exec "$2")
	"${ns[@]}" ethtool -S "$1" | awk -v re="^($3):\$" '$1 ~ re { n += $2 } END { print n + 0 }'
}

# transfer_check FROM_NS TO_NS TO_ADDR MB: sends MB megabytes of random data over TCP with
# socat from namespace FROM_NS ("" = init) to a listener at TO_ADDR (IPv4 or IPv6) in TO_NS,
# compares sha256.
transfer_check() {
	local from=() to=() port=5600 want got tcp=TCP addr=$3
	[ -n "$1" ] && from=(ip netns exec "$1")
	[ -n "$2" ] && to=(ip netns exec "$2")
	case $3 in *:*) tcp=TCP6 addr="[$3]" ;; esac
	head -c "$(($4 * 1024 * 1024))" /dev/urandom >/tmp/xfer.src
	rm -f /tmp/xfer.dst
	"${to[@]}" socat -u "$tcp-LISTEN:$port,bind=$addr,reuseaddr" OPEN:/tmp/xfer.dst,creat,trunc &
	local lpid=$!
	wait_for "socat listener on $3" listening "$port" "$2"
	timeout 120 "${from[@]}" socat -u OPEN:/tmp/xfer.src "$tcp:$addr:$port" ||
		fail "socat transfer to $3 failed"
	wait "$lpid" || fail "socat listener on $3 failed"
	want=$(sha256sum </tmp/xfer.src | cut -d' ' -f1)
	got=$(sha256sum </tmp/xfer.dst | cut -d' ' -f1)
	[ "$want" = "$got" ] || fail "data corrupted on the way to $3 ($4 MB): sha256 $want != $got"
	echo "  $4 MB to $3: sha256 ${got:0:16}... matches"
}

# On exit (pass or fail): stop what a test left running and remove namespace "peer", so
# that the next test starts clean (the runner unloads rsnic).
traffic_cleanup() {
	local p
	for p in $(jobs -p) $(ip netns pids peer 2>/dev/null); do kill "$p" 2>/dev/null || true; done
	ip netns del peer 2>/dev/null || true
}
trap traffic_cleanup EXIT

# Sets of UDP flows from A to B and the RX queues of B they land on (74-rss, 76-ntuple).
# flows_pair NQ: setup_pair and quiet_pair with NQ channels on B; sets NQ. Fails where those
# do or if ethtool -L does.
flows_pair() {
	setup_pair
	quiet_pair
	ip netns exec peer ethtool -L "$B" combined "$1" || fail "ethtool -L $B combined $1"
	NQ=$1
}

# send_udp_flows N BASE STEP DPORT WORD REPEAT: N UDP datagrams from A (10.10.0.1) to
# 10.10.0.2:DPORT on B, one per flow, each carrying WORD REPEAT times: flow i from source
# port BASE + (i * STEP mod 40000). Fails (python3's status) if a socket call does.
send_udp_flows() {
	python3 - "$@" <<'EOF'
import socket, sys
n, base, step, dport = (int(a) for a in sys.argv[1:5])
payload = sys.argv[5].encode() * int(sys.argv[6])
for i in range(n):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("10.10.0.1", base + (i * step) % 40000))
    s.sendto(payload, ("10.10.0.2", dport))
    s.close()
EOF
}

# queue_counts COMMAND...: runs COMMAND (traffic from A to B) between snapshots s0a/s0b and
# the settled ones (s1a/s1b, see settled) and prints how many packets each of B's NQ queues
# received (C_RXQ), in queue order. Fails if the counters do not settle.
queue_counts() {
	local q out=
	snap s0a "$A"
	snap s0b "$B" peer
	"$@"
	wait_for "the flows to reach B" settled
	for q in $(seq 0 $((NQ - 1))); do
		# shellcheck disable=SC2059 # the format is C_RXQ
		out="$out $(delta s0b s1b "$(printf "$C_RXQ" "$q")")"
	done
	echo "${out# }"
}

# pktgen_modes COUNT: pktgen from A to B (COUNT 64-byte UDP frames, burst 32, TX queue 0)
# with the family's private flag ($PFLAG) set to each of $PFLAG_MODES on both ports (mlx5:
# skb_tx_mpwqe on, then off, which matters on A; MANA: rx_db_per_packet off, then on, which
# matters on B); the deltas of both ends go to R[MODE.COUNTER] (A) and R[MODE.B.COUNTER]
# (B), pktgen's figures to R[MODE.sent] and R[MODE.pps]. Needs quiet_pair.
declare -A R
pktgen_modes() {
	local mode c
	for mode in $PFLAG_MODES; do
		ethtool --set-priv-flags "$A" "$PFLAG" "$mode"
		ip netns exec peer ethtool --set-priv-flags "$B" "$PFLAG" "$mode"
		wait_for "carrier on $A after $PFLAG $mode" eval '[ "$(carrier "$A")" = 1 ]'
		snap s0a "$A"
		snap s0b "$B" peer
		pktgen_run "$A" "$1" 10.10.0.2 "$MAC_B" 32 60
		wait_for "counters of A and B to settle" settled
		R[$mode.sent]=$PG_SENT
		R[$mode.pps]=$PG_PPS
		deltas s0a s1a >/tmp/deltas.a
		deltas s0b s1b >/tmp/deltas.b
		while read -r c d; do R[$mode.$c]=$d; done </tmp/deltas.a
		while read -r c d; do R[$mode.B.$c]=$d; done </tmp/deltas.b
	done
	ethtool --set-priv-flags "$A" "$PFLAG" "$PFLAG_DEFAULT"
	ip netns exec peer ethtool --set-priv-flags "$B" "$PFLAG" "$PFLAG_DEFAULT"
}

# pktgen_table: the side-by-side table of pktgen_modes' figures.
pktgen_table() {
	local m1 m2
	read -r m1 m2 <<<"$PFLAG_MODES"
	_row() { printf '  %-50s %12s %12s\n' "$@"; }
	# One mode only (the debug kernel): "-" in the second column.
	_both() { _row "$1" "${R[$m1.$2]:--}" "${R[$m2.$2]:--}"; }
	_per() { _row "$1" "$(ratio "${R[$m1.$2]:-0}" "${R[$m1.$3]:-0}" "$4")" "$(ratio "${R[$m2.$2]:-0}" "${R[$m2.$3]:-0}" "$4")"; }
	if [ "$RSNIC_FAMILY" = mana ]; then
		_row "pktgen, 64 B UDP, burst 32, queue 0 (MANA)" "RX db batched" "RX db per pkt"
	else
		_row "pktgen, 64 B UDP, burst 32, queue 0" "mpwqe on" "mpwqe off"
	fi
	_row "--------------------------------------------------" "------------" "------------"
	_both "packets sent (pktgen)" sent
	_both "packets sent (A tx_packets)" tx_packets
	_both "packets received by the peer (B rx_packets)" B.rx_packets
	_both "peer drops, no RX WQE (B $C_NOWQE)" "B.$C_NOWQE"
	if [ "$RSNIC_FAMILY" = mana ]; then
		_both "B NAPI polls that read CQEs (rx_polls_with_work)" B.rx_polls_with_work
		_both "B RQ doorbells, driver (rx_doorbells)" B.rx_doorbells
		_both "B RQ doorbells, device (dev_rq_doorbells)" B.dev_rq_doorbells
		_both "B RQ doorbells with wqe_cnt != 0" B.dev_rq_db_wqe_cnt_errors
		_per "B RQ doorbells per packet" B.rx_doorbells B.rx_packets 4
		_per "B inbound PCIe bytes per packet (modeled)" B.dev_pcie_in_bytes B.rx_packets 1
		_per "B outbound PCIe bytes per packet (modeled)" B.dev_pcie_out_bytes B.rx_packets 1
		_both "A SQ doorbells (dev_sq_doorbells)" dev_sq_doorbells
		_per "A SQ doorbells per packet" dev_sq_doorbells tx_packets 4
	else
		_both "MPWQE sessions (tx_mpwqe_blks)" tx_mpwqe_blks
		_both "packets in sessions (tx_mpwqe_pkts)" tx_mpwqe_pkts
		_per "packets per session" tx_mpwqe_pkts tx_mpwqe_blks 1
		_both "WQEs (dev_wqes, incl. NOPs)" dev_wqes
		_both "SQ doorbells (dev_sq_doorbells)" dev_sq_doorbells
		_per "SQ doorbells per packet" dev_sq_doorbells tx_packets 4
		_per "inbound PCIe bytes per packet (modeled)" dev_pcie_in_bytes tx_packets 1
		_per "  inbound floor per packet" dev_tx_floor_in_bytes tx_packets 1
		_per "outbound PCIe bytes per packet (modeled)" dev_pcie_out_bytes tx_packets 1
	fi
	_both "pktgen packets/s (emulated VM, indicative)" pps
	unset -f _row _both _per
}
