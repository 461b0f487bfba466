// SPDX-License-Identifier: GPL-2.0
/*
 * Redirects every frame to another interface's egress: with bpf_redirect() to
 * redirect_ifindex, or, when use_devmap is set, with bpf_redirect_map() through slot 0 of
 * the devmap "tx_port" (which rsnic-xdp fills with redirect_ifindex). When rewrite_macs is
 * set the frame leaves with destination new_dst and source new_src (so that it is addressed
 * to the station behind the egress port); otherwise it leaves unchanged.
 *
 * rsnic-xdp attach --redirect-dev/--redirect-ifindex, --devmap, --dst-mac/--src-mac set
 * these read-only variables before the program is loaded. Loaded without them (as by
 * "ip link set ... xdp obj"), redirect_ifindex is 0 and every frame is dropped by the core
 * as a failed redirect.
 */
#include "xdp_common.h"

volatile const __u32 redirect_ifindex;
volatile const __u32 use_devmap;
volatile const __u32 rewrite_macs;
volatile const unsigned char new_dst[ETH_ALEN];
volatile const unsigned char new_src[ETH_ALEN];

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} tx_port SEC(".maps");

SEC("xdp")
int xdp_redirect(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct xdp_count *c = count_frame(ctx);
	struct ethhdr *eth = data;
	long ret;
	int i;

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	if (rewrite_macs) {
		for (i = 0; i < ETH_ALEN; i++) {
			eth->h_dest[i] = new_dst[i];
			eth->h_source[i] = new_src[i];
		}
	}
	if (use_devmap)
		ret = bpf_redirect_map(&tx_port, 0, 0);
	else
		ret = bpf_redirect(redirect_ifindex, 0);
	if (ret == XDP_REDIRECT)
		count_acted(c);
	return ret;
}
