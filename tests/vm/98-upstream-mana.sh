#!/usr/bin/env bash
# The kernel's own MANA driver against rsnic's MANA device model: on the vfio-user transport
# (make vmtest-vfio) rsnic-devd presents a MANA VF with the hardware's IDs (1414:00ba), and
# the upstream mana.ko built for the test kernel (scripts/build-upstream.sh; the runner
# exports its path as RSNIC_UPSTREAM_MANA_KO), loaded instead of rsnic, drives it. The two
# vports' interfaces become a pair as rsnic's do (pair_up in lib.sh: vport 1 in namespace
# "peer"), and:
#   - both carry traffic: ping both ways over IPv4 and IPv6 and over an 802.1Q VLAN (the tag
#     inserted by the long OOB, stripped by the device), iperf3 TCP (TSO) and UDP
#     (checksum offload) both ways, an MTU change with full-size pings that may not fragment;
#   - the counters agree: what one end's driver sent, the model sent from that vport, the
#     model received on the other and the other end's driver received, packet for packet;
#     every hc_* counter of ethtool -S (MANA_QUERY_GF_STAT, which answers for the device)
#     equals the sum of the model's own counter of that name over the vports (devd's
#     port<P>/counters, dev_hc_*); no error counter moved;
#   - the device does what mana asks of it: B's RSS table moved onto each queue in turn and a
#     new hash key (ethtool -X), rings from mana's smallest to its largest (ethtool -G),
#     native XDP drop, tx and pass on B, each counted at both ends and in the model;
#   - mana goes with rmmod and comes back with insmod, and carries traffic again;
#   - the kernel's drivers/net selftests ping.py, stats.py and queues.py pass on the pair
#     (tests/vm/ksft.sh with this driver's pair);
#   - mana said nothing of a failure in the kernel log (no "Failed to ...", no unknown CQE).
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"

[ "$RSNIC_TRANSPORT" = vfio ] ||
	skip "the MANA function with the hardware's IDs is the vfio-user transport's"
[ "$RSNIC_FAMILY" = mana ] || skip "the kernel's MANA driver drives the MANA function only"
ko=${RSNIC_UPSTREAM_MANA_KO:-}
[ -f "$ko" ] ||
	fail "no upstream mana.ko for this kernel (make upstream; the runner exports RSNIC_UPSTREAM_MANA_KO)"
ports=${RSNIC_PCI_PORTS:-2}
[ "$ports" -ge 2 ] || fail "the pair needs two vports (RSNIC_PCI_PORTS=$ports)"

fn=""
for d in /sys/bus/pci/devices/*; do
	if [ "$(cat "$d/vendor"):$(cat "$d/device")" = 0x1414:0x00ba ]; then fn=${d##*/}; fi
done
[ -n "$fn" ] || fail "no MANA VF (1414:00ba) on the PCI bus"
dev=/sys/bus/pci/devices/$fn
[ ! -e "$dev/driver" ] || fail "$fn is already bound to $(basename "$(readlink -f "$dev/driver")")"

# mana's complaints in the kernel log: every netdev_err/dev_err of the paths this test
# drives says "Failed to ..." or names an error ("Unknown RX CQE type", "TX CQE error",
# "timed out", "HWC: Failed"); a clean run has none.
mana_complaints() {
	dmesg_since_mark | grep -E '(mana|0000:[0-9a-f:.]+).*([Ff]ail|[Ee]rror|[Uu]nknown|timed out|[Ii]nvalid|[Uu]nsupported)' || true
}
no_complaints() {
	local c
	c=$(mana_complaints)
	[ -z "$c" ] || fail "mana complained ($1): $(echo "$c" | head -n 3 | tr '\n' ' ')"
}

# The function's interfaces in vport order (dev_port).
fn_ifaces() {
	local n
	for n in "$dev"/net/*; do
		[ -e "$n" ] && echo "$(cat "$n/dev_port") ${n##*/}"
	done | sort -n | cut -d' ' -f2
	return 0
}
have_ifaces() { [ "$(fn_ifaces | wc -l)" = "$ports" ]; }
bound() { [ "$(basename "$(readlink -f "$dev/driver" 2>/dev/null)")" = mana ]; }

# load_mana: insmod (the test kernel has what mana needs built in: no dependencies), the
# function bound and one interface per vport. Sets IFS_MANA.
load_mana() {
	insmod "$ko" || fail "insmod $ko"
	wait_for "mana to bind $fn" bound
	wait_for "$ports interfaces on $fn" have_ifaces
	mapfile -t IFS_MANA < <(fn_ifaces)
}

# unload_mana: rmmod; the function unbound, its interfaces gone.
unload_mana() {
	rmmod mana || fail "rmmod mana"
	[ ! -e "$dev/driver" ] || fail "$fn still bound after rmmod"
	local i
	for i in "${IFS_MANA[@]}"; do
		[ ! -e "/sys/class/net/$i" ] || fail "$i left after rmmod"
	done
}

# setup_mana_pair / teardown_mana_pair: setup_pair and teardown_pair for mana's vports 0
# and 1 (ksft_run's KSFT_SETUP and KSFT_TEARDOWN).
setup_mana_pair() {
	load_mana
	pair_up "${IFS_MANA[0]}" "${IFS_MANA[1]}"
}
teardown_mana_pair() {
	ip netns del peer 2>/dev/null
	sleep 0.2
	unload_mana
}

# Whatever the outcome, the functions go back unbound to the tests after this one (which
# bind rsnic to them): no namespace, no mana.
# (Each command may fail, the namespace gone already: set -e holds in the trap too, and
# a failure there would be the test's exit status.)
trap 'ip netns del peer 2>/dev/null || true; if grep -q "^mana " /proc/modules; then rmmod mana || true; fi' EXIT

# model_sum NAME: the model's counter NAME summed over the vports' counters files.
model_sum() {
	local p f k v n=0
	for p in $(seq 0 $((ports - 1))); do
		f=${RSNIC_DEVD_DIR:-/nonexistent}/port$p/counters
		[ -r "$f" ] || fail "no model counters at $f"
		while read -r k v; do [ "$k" = "$1:" ] && n=$((n + v)); done <"$f"
	done
	echo "$n"
}

# ---- Bring-up: the vports' interfaces, a pair of them.
mark_dmesg
setup_mana_pair
echo "  $fn: ${IFS_MANA[*]} (A=$A, B=$B in peer)"
for i in "$A" "$B"; do
	inns=""
	[ "$i" = "$B" ] && inns=peer
	info=$(if [ -n "$inns" ]; then ip netns exec peer ethtool -i "$i"; else ethtool -i "$i"; fi)
	assert_eq "$i: driver" mana "$(echo "$info" | sed -n 's/^driver: //p')"
	assert_eq "$i: bus-info" "$fn" "$(echo "$info" | sed -n 's/^bus-info: //p')"
done
mac_a=$(cat "/sys/class/net/$A/address")
mac_b=$(ip netns exec peer cat "/sys/class/net/$B/address")
[ "$mac_a" != "$mac_b" ] || fail "both vports have MAC $mac_a"
ip netns exec peer sh -c "[ \"\$(cat /sys/class/net/$B/carrier)\" = 1 ]" || fail "no carrier on $B"

# ---- Traffic.
ping_both
sysctl -qw net.core.rmem_max=8388608 net.core.rmem_default=4194304
iperf_both
tso=$(ethtool_sum "$A" "" 'tx_[0-9]+_tso_packets')
csum=$(ethtool_sum "$A" "" 'tx_[0-9]+_csum_partial')
echo "  A's TSO packets $tso, checksum-offloaded packets $csum"
[ "$tso" -gt 0 ] || fail "no TSO packet on $A after TCP"
[ "$csum" -gt 0 ] || fail "no checksum-offloaded packet on $A after UDP"

# MTU change (mana_change_mtu: the queues reopened with buffers for the new size), then
# pings that fill it without fragments both ways, and back.
for mtu in 4000 1500; do
	ip link set "$A" mtu $mtu || fail "$A: mtu $mtu refused"
	ip netns exec peer ip link set "$B" mtu $mtu || fail "$B: mtu $mtu refused"
	wait_for "carrier on $A at mtu $mtu" eval '[ "$(carrier "$A")" = 1 ]'
	size=$((mtu - 28))
	out=$(ping -c 3 -i 0.2 -W 2 -M "do" -s $size 10.10.0.2 2>&1) ||
		fail "mtu $mtu: ping -s $size A -> B: $(echo "$out" | tail -n 2)"
	out=$(ip netns exec peer ping -c 3 -i 0.2 -W 2 -M "do" -s $size 10.10.0.1 2>&1) ||
		fail "mtu $mtu: ping -s $size B -> A: $(echo "$out" | tail -n 2)"
	echo "  mtu $mtu: $size-byte pings without fragments both ways"
done
# 802.1Q: mana inserts the tag through the long OOB and takes a received frame's tag from
# the CQE (the device strips it: dev_rx_vlan_stripped in the model).
vlan_pair
v0=$(model_sum dev_rx_vlan_stripped) l0=$(ethtool_sum "$A" "" 'tx_[0-9]+_long_pkt_fmt')
out=$(ping -c 10 -i 0.1 -W 2 10.10.10.2 2>&1) || fail "ping over VLAN 10, A -> B: $(echo "$out" | tail -n 2)"
out=$(ip netns exec peer ping -c 10 -i 0.1 -W 2 -s 1400 10.10.10.1 2>&1) ||
	fail "ping over VLAN 10, B -> A: $(echo "$out" | tail -n 2)"
vlan_counted() { [ $(($(model_sum dev_rx_vlan_stripped) - v0)) -ge 40 ]; }
wait_for "the model to count the stripped tags" vlan_counted
echo "  ping over VLAN 10 both ways: $(($(model_sum dev_rx_vlan_stripped) - v0)) tags stripped by the model," \
	"$(($(ethtool_sum "$A" "" 'tx_[0-9]+_long_pkt_fmt') - l0)) long-OOB WQEs from A"
[ $(($(ethtool_sum "$A" "" 'tx_[0-9]+_long_pkt_fmt') - l0)) -ge 20 ] ||
	fail "A sent its tagged frames without the long OOB's tag insertion"
ip link del "$A.10"
ip netns exec peer ip link del "$B.10"
no_complaints "traffic"

# ---- Counters. No background traffic from here on (static neighbours, no IPv6).
quiet_pair
sleep 1
# counts: A's and B's driver (rtnl stats) and the model's vports 0 and 1 (devd rewrites
# their files when it goes idle).
counts() {
	local f0=$RSNIC_DEVD_DIR/port0/counters f1=$RSNIC_DEVD_DIR/port1/counters
	echo "$(cat "/sys/class/net/$A/statistics/tx_packets") $(cat "/sys/class/net/$A/statistics/rx_packets")" \
		"$(ip netns exec peer cat "/sys/class/net/$B/statistics/tx_packets") $(ip netns exec peer cat "/sys/class/net/$B/statistics/rx_packets")" \
		"$(awk '$1 == "dev_tx_packets:" { print $2 }' "$f0") $(awk '$1 == "dev_rx_packets:" { print $2 }' "$f0")" \
		"$(awk '$1 == "dev_tx_packets:" { print $2 }' "$f1") $(awk '$1 == "dev_rx_packets:" { print $2 }' "$f1")"
}
still() {
	local c1
	c1=$(counts)
	sleep 0.5
	[ "$c1" = "$(counts)" ]
}
wait_for "quiet counters" still
read -r atx0 arx0 btx0 brx0 m0tx0 m0rx0 m1tx0 m1rx0 < <(counts)
ping -c 50 -i 0.02 -W 2 -s 1000 10.10.0.2 >/dev/null || fail "ping burst A -> B"
ip netns exec peer ping -c 30 -i 0.02 -W 2 -s 200 10.10.0.1 >/dev/null || fail "ping burst B -> A"
balanced() {
	read -r atx arx btx brx m0tx m0rx m1tx m1rx < <(counts)
	fab=$((atx - atx0)) dm0=$((m0tx - m0tx0)) dm1r=$((m1rx - m1rx0)) fbb=$((brx - brx0))
	ea=$((btx - btx0)) em1=$((m1tx - m1tx0)) em0r=$((m0rx - m0rx0)) eb=$((arx - arx0))
	[ "$fab" = "$dm0" ] && [ "$dm0" = "$dm1r" ] && [ "$dm1r" = "$fbb" ] &&
		[ "$ea" = "$em1" ] && [ "$em1" = "$em0r" ] && [ "$em0r" = "$eb" ]
}
WAIT_DIAG='eval echo "A->B: driver sent $fab, model sent $dm0, model received $dm1r, driver received $fbb; B->A: $ea, $em1, $em0r, $eb"' \
	wait_for "the two ends' packet counts to balance" balanced
echo "  A -> B: $fab packets (A's driver, the model's vport 0 TX, vport 1 RX, B's driver)"
echo "  B -> A: $ea packets (B's driver, the model's vport 1 TX, vport 0 RX, A's driver)"
[ "$fab" -ge 80 ] || fail "A -> B: $fab packets, want at least the burst's 50 requests and 30 replies"
[ "$ea" -ge 80 ] || fail "B -> A: $ea packets, want at least the burst's 30 requests and 50 replies"

# Frames for a vport whose RX is off (B down: mana_dealloc_queues turned it off with
# MANA_CONFIG_VPORT_RX) are the device's rx_err_vport_disabled.
ip netns exec peer ip link set "$B" down
sleep 0.5
vd0=$(model_sum dev_hc_rx_err_vport_disabled)
! ping -c 10 -i 0.05 -W 1 10.10.0.2 >/dev/null 2>&1 || fail "ping answered while $B is down"
vport_off_counted() { [ $(($(model_sum dev_hc_rx_err_vport_disabled) - vd0)) = 10 ]; }
WAIT_DIAG='eval echo "the model counted $(($(model_sum dev_hc_rx_err_vport_disabled) - vd0)) of 10"' \
	wait_for "10 frames counted for B's disabled vport" vport_off_counted
ip netns exec peer ip link set "$B" up
wait_for "carrier on $B" eval '[ "$(ip netns exec peer cat /sys/class/net/$B/carrier)" = 1 ]'
echo "  $B down: 10 echo requests counted by the model as for a disabled vport"

# hc_* of ethtool -S (MANA_QUERY_GF_STAT: the device's counters, both vports) against the
# model's dev_hc_* summed over the vports. Every hc_* of mana's list must be there; one the
# model does not keep (an error it never makes) must be 0.
hc_names=$(ethtool -S "$A" | awk -F: '$1 ~ /^ *hc_/ { gsub(/ /, "", $1); print $1 }')
[ "$(echo "$hc_names" | wc -w)" -ge 27 ] || fail "ethtool -S $A has $(echo "$hc_names" | wc -w) hc_* counters, mana has 27"
hc_agree() {
	local k v want
	HC_BAD=""
	HC_KEPT=0
	ethtool -S "$A" >/tmp/hc.a
	while read -r k v; do
		k=${k%:}
		case $k in hc_*) ;; *) continue ;; esac
		if grep -q "^ *dev_$k:" "$RSNIC_DEVD_DIR/port0/counters"; then
			want=$(model_sum "dev_$k")
			HC_KEPT=$((HC_KEPT + 1))
		else
			want=0
		fi
		[ "$v" = "$want" ] || HC_BAD+=" $k=$v(model $want)"
	done </tmp/hc.a
	[ -z "$HC_BAD" ]
}
WAIT_DIAG='eval echo "hc_* that differ from the model:$HC_BAD"' wait_for "ethtool -S hc_* to equal the model's counters" hc_agree
grep -E '^ *hc_' /tmp/hc.a | sed 's/^ */  /' | tr '\n' ' ' | fold -w 150 -s
echo
echo "  $HC_KEPT hc_* counters equal the model's own; the others are 0 in both"
[ "$HC_KEPT" -ge 19 ] || fail "the model keeps only $HC_KEPT of mana's hc_* counters"
[ "$(awk '$1 == "hc_rx_err_vport_disabled:" { print $2 }' /tmp/hc.a)" -ge 10 ] ||
	fail "hc_rx_err_vport_disabled does not count the frames for B's disabled vport"
hc() { awk -v k="$1:" '$1 == k { print $2 }' /tmp/hc.a; }
[ "$(hc hc_tx_ucast_pkts)" -gt 0 ] && [ "$(hc hc_rx_ucast_bytes)" -gt 0 ] ||
	fail "hc_* counted no unicast traffic"
# (mana's one hc_rx_err_* counter, hc_rx_err_vport_disabled, counted the pings to B while
# it was down, as checked above.)
for i in "$A" "$B"; do
	inns=""
	[ "$i" = "$B" ] && inns=peer
	errs=$(ethtool_sum "$i" "$inns" 'tx_cq_err|tx_cqe_unknown_type|rx_coalesced_err|rx_cqe_unknown_type|hc_tx_err_[a-z_]+')
	assert_eq "$i: error counters (tx_cq_err, *_unknown_type, rx_coalesced_err, hc_tx_err_*)" 0 "$errs"
done
# The model's own error counters: nothing mana did was refused or broke a rule (doorbells
# for unknown queues or with a non-zero RQ wqe_cnt, tails past the ring, malformed or
# refused WQEs, foreign memory keys, DMA faults, CQs not rung for 8 wraps).
model_errs=""
for k in dev_bad_doorbells dev_rq_db_wqe_cnt_errors dev_db_invalid dev_tx_wqe_errors \
	dev_tx_err_cqes dev_rx_wqe_errors dev_rx_truncated dev_mkey_errors dev_dma_faults \
	dev_cq_db_overdue; do
	v=$(model_sum "$k")
	[ "$v" = 0 ] || model_errs+=" $k=$v"
done
[ -z "$model_errs" ] || fail "the model counted errors of mana's:$model_errs"
echo "  the model's error counters (doorbells, WQEs, keys, DMA, CQ doorbells): all 0"
no_complaints "counters"

# ---- RSS (mana_set_rxfh: MANA_CONFIG_VPORT_RX with a new table or key). B's table all
# on queue 0, then all on queue 1: a ping burst from A lands on that queue alone (the
# model picks the RQ from the table mana gave it); then a new key and the default table.
nq=$(channels_of "$B" current peer)
nind=$(ip netns exec peer ethtool -x "$B" | awk '/^ *[0-9]+:/ { n += NF - 1 } END { print n + 0 }')
echo "  $B: $nq queues, an indirection table of $nind entries"
# MANA_QUERY_VPORT_CONFIG's indirection_table_size: the model's 64.
[ "$nind" = 64 ] || fail "$B's indirection table has $nind entries, the vport 64"
[ "$nq" -ge 2 ] || fail "$B has $nq queues: the RSS check needs 2"
rxq() { ip netns exec peer ethtool -S "$B" | awk -v k="rx_$1_packets:" '$1 == k { print $2 }'; }
for q in 0 1; do
	w=(0 0)
	w[q]=1
	ip netns exec peer ethtool -X "$B" weight "${w[@]}" || fail "ethtool -X $B weight ${w[*]}"
	r0=$(rxq 0) r1=$(rxq 1)
	ping -c 20 -i 0.02 -W 2 10.10.0.2 >/dev/null || fail "ping with B's table on queue $q"
	d0=$(($(rxq 0) - r0)) d1=$(($(rxq 1) - r1))
	echo "  $B's table on queue $q: 20 echo requests went to queue 0: $d0, queue 1: $d1"
	# Every frame for B follows the table, so the other queue gets none; the table's queue
	# gets the 20 and whatever else came (a neighbour solicitation: a clean run saw 21).
	if [ "$q" = 0 ]; then [ "$d0" -ge 20 ] && [ "$d1" = 0 ]; else [ "$d0" = 0 ] && [ "$d1" -ge 20 ]; fi ||
		fail "RSS: the table on queue $q, but queue 0 got $d0 and queue 1 $d1 of 20"
done
key=$(printf '%02x:' $(seq 1 40) | sed 's/:$//')
ip netns exec peer ethtool -X "$B" hkey "$key" || fail "ethtool -X $B hkey"
ip netns exec peer ethtool -X "$B" default || fail "ethtool -X $B default"
ip netns exec peer ethtool -x "$B" | grep -qi "$(echo "$key" | cut -c1-20)" || fail "$B does not report the key it was given"
ping -c 5 -i 0.2 -W 2 10.10.0.2 >/dev/null || fail "ping after the RSS changes"
echo "  $B: new hash key and the default table, traffic goes on"
no_complaints "RSS"

# ---- Ring sizes (mana_set_ringparam: the queues made again, MANA_CREATE_WQ_OBJ with the new
# sizes): the smallest mana takes, the largest, then its defaults, with traffic on each.
for rs in "128 128" "8192 16384" "512 256"; do
	read -r rx tx <<<"$rs"
	ethtool -G "$A" rx "$rx" tx "$tx" || fail "ethtool -G $A rx $rx tx $tx refused"
	got=$(ethtool -g "$A" | awk '/^Current/ { c = 1 } c && /^RX:/ { r = $2 } c && /^TX:/ { t = $2 } END { print r, t }')
	[ "$got" = "$rx $tx" ] || fail "$A: rings $got after ethtool -G rx $rx tx $tx"
	wait_for "carrier on $A" eval '[ "$(carrier "$A")" = 1 ]'
	ping -c 5 -i 0.1 -W 2 10.10.0.2 >/dev/null || fail "ping with $A's rings at rx $rx tx $tx"
	echo "  $A's rings rx $rx tx $tx: ping goes on"
done
no_complaints "rings"

# ---- Native XDP on B (mana_bpf.c): drop, tx (back to A with the MACs swapped), pass. Each
# ping burst's 20 echo requests are counted in B's XDP counters, and the model delivered
# them to B's vport; XDP_TX's come back through the model to A.
xdp_dir=$RSNIC_ROOT/target/xdp
for prog in xdp_drop xdp_tx xdp_pass; do
	[ -e "$xdp_dir/$prog.o" ] || fail "no $xdp_dir/$prog.o (make xdp-tools)"
done
xdpsum() { ethtool_sum "$B" peer "rx_[0-9]+_xdp_$1"; }
for act in drop tx pass; do
	ip netns exec peer ip link set dev "$B" xdpdrv obj "$xdp_dir/xdp_$act.o" sec xdp ||
		fail "native XDP (xdp_$act) refused on $B"
	x0=$(xdpsum "$act") m0=$(model_sum dev_rx_packets) arx0=$(cat "/sys/class/net/$A/statistics/rx_packets")
	if [ "$act" = pass ]; then
		ping -c 20 -i 0.02 -W 2 10.10.0.2 >/dev/null || fail "XDP_PASS: ping lost replies"
	else
		! ping -c 20 -i 0.02 -W 1 10.10.0.2 >/dev/null 2>&1 || fail "XDP_$act on B, yet A got replies"
	fi
	xdp_done() {
		# The model's deliveries over both vports: the requests to B, and for tx and pass
		# 20 frames back to A.
		local want_m=40
		[ "$act" = drop ] && want_m=20
		[ $(($(model_sum dev_rx_packets) - m0)) = "$want_m" ] || return 1
		case $act in
		drop) [ $(($(xdpsum drop) - x0)) = 20 ] ;;
		tx) [ $(($(xdpsum tx) - x0)) = 20 ] && [ $(($(cat "/sys/class/net/$A/statistics/rx_packets") - arx0)) = 20 ] ;;
		pass) [ $(($(cat "/sys/class/net/$A/statistics/rx_packets") - arx0)) = 20 ] ;;
		esac
	}
	WAIT_DIAG='eval echo "XDP $act: B xdp_$act $(($(xdpsum "$act") - x0)), A rx $(($(cat "/sys/class/net/$A/statistics/rx_packets") - arx0)), model rx $(($(model_sum dev_rx_packets) - m0))"' \
		wait_for "XDP_$act's counts" xdp_done
	echo "  XDP_${act^^} on $B: 20 echo requests taken ($([ "$act" = pass ] && echo "20 replies" || echo "B's rx_*_xdp_$act +20")$([ "$act" = tx ] && echo ", 20 back at A"))"
	ip netns exec peer ip link set dev "$B" xdpdrv off || fail "detaching XDP from $B"
done
ping -c 5 -i 0.2 -W 2 10.10.0.2 >/dev/null || fail "ping after XDP is off"
no_complaints "XDP"

# ---- rmmod, insmod, traffic again.
teardown_mana_pair
echo "  rmmod mana: $fn unbound, ${IFS_MANA[*]} gone"
mark_dmesg
setup_mana_pair
echo "  insmod mana again: $fn: ${IFS_MANA[*]}"
ping_both
iperf_both
no_complaints "after the reload"
teardown_mana_pair

# ---- The kernel's selftests on mana's pair (a third load).
. "$(dirname "$0")/ksft.sh"
mark_dmesg
KSFT_SETUP=setup_mana_pair KSFT_TEARDOWN=teardown_mana_pair ksft_run ping stats queues
no_complaints "selftests"
