#!/usr/bin/env bash
# make soak-xdp-swap: native XDP programs attached, replaced and detached in a loop on the
# receiving end of an iperf3 stream for XDP_SWAP_SECONDS (default 300), on an rsnic
# ConnectX pair (XDP_SWAP_DEV=rsnic, the default) or a veth pair without rsnic
# (XDP_SWAP_DEV=veth), either on one vCPU as 90-xdp-actions does (XDP_SWAP_PIN=1, the
# default) or free on both (XDP_SWAP_PIN=0). Prints the number of program changes; fails on
# a kernel report.
# Why it exists: each program change rewrites the kernel's BPF dispatcher with
# text_poke_bp(), and QEMU's multi-threaded TCG does not honour x86 cross-modifying code, so
# a vCPU running XDP at the time can execute the transient int3 after the patch is done
# ("Oops: int3" at bpf_dispatcher_xdp_func+0x1, a panic). XDP_SWAP_PIN=0 shows it, with
# or without rsnic; XDP_SWAP_PIN=1 shows that the pinning 90-xdp-actions uses avoids it.
# rsnic.rst, "Testing under TCG", has the results.
set -eu
RSNIC_FAMILY=mlx5
. "$RSNIC_ROOT/tests/vm/lib.sh"
. "$RSNIC_ROOT/tests/vm/traffic.sh"
. "$RSNIC_ROOT/tests/vm/xdp.sh"

secs=${XDP_SWAP_SECONDS:-300}
dev=${XDP_SWAP_DEV:-rsnic}
pin=${XDP_SWAP_PIN:-1}
xdp_tools_or_fail
if [ "$dev" = veth ]; then
	ip netns add peer
	XDP_NETNS=peer
	ip link add va type veth peer name vb
	XDP_LINKS=va
	ip link set vb netns peer
	ip addr add 10.10.0.1/24 dev va
	ip link set va up
	ip netns exec peer ip addr add 10.10.0.2/24 dev vb
	ip netns exec peer ip link set vb up
	ip netns exec peer ip link set lo up
	# veth runs XDP in its NAPI, which needs a program on the sending end too.
	xdp_attach va "" xdp_pass
	B=vb
else
	setup_pair
	quiet_pair
fi
mark_dmesg
if [ "$pin" = 1 ]; then
	# As 90-xdp-actions: the device's work (an unbound workqueue) and this shell's children
	# on CPU 0 (veth's NAPI runs on the sender's CPU).
	echo 1 >/sys/devices/virtual/workqueue/cpumask
	taskset -pc 0 $$ >/dev/null
fi
echo "  $dev, pinned to CPU 0: $pin, $secs s"
iperf_server 10.10.0.2 peer
iperf3 -c 10.10.0.2 -t "$secs" >/dev/null &
cli=$!
changes=0
t0=$SECONDS
next=30
end=$((SECONDS + secs - 2))
while [ "$SECONDS" -lt "$end" ]; do
	xdp_attach "$B" peer xdp_pass
	nsx peer "$XDPCTL" attach "$B" "$XDP_DIR/xdp_pass_adjust.o" --replace >/dev/null
	xdp_detach "$B" peer
	changes=$((changes + 3))
	# Progress, so that a panic's log shows how far the loop got.
	if [ $((SECONDS - t0)) -ge "$next" ]; then
		echo "  after $((SECONDS - t0)) s: $changes program changes"
		next=$((next + 30))
	fi
done
wait "$cli" || fail "iperf3 failed"
echo "  program changes under traffic: $changes"
no_kernel_reports
echo "xdp-swap: ok"
