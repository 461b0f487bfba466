// SPDX-License-Identifier: GPL-2.0
/*
 * XDP_PASS after moving the frame's head and tail: a frame in the test encapsulation
 * (xdp_encap.h) loses its outer headers (bpf_xdp_adjust_head) and its trailer
 * (bpf_xdp_adjust_tail), so the stack must receive exactly the inner frame; any other
 * frame passes unchanged. "acted" counts the frames stripped.
 */
#include "xdp_common.h"
#include "xdp_encap.h"

SEC("xdp")
int xdp_pass_adjust(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct xdp_count *c = count_frame(ctx);
	struct ethhdr *eth = data;
	struct encap_hdr *h = (void *)(eth + 1);
	__u32 trailer;

	if ((void *)(h + 1) > data_end)
		return XDP_PASS;
	if (eth->h_proto != bpf_htons(ENCAP_ETH_P) || h->magic != bpf_htonl(ENCAP_MAGIC))
		return XDP_PASS;
	trailer = bpf_ntohs(h->trailer_len);
	/* Leave malformed frames alone: the test then sees them unstripped. */
	if (trailer > ENCAP_MAX_TRAILER ||
	    data + ENCAP_HLEN + ETH_HLEN + trailer > data_end)
		return XDP_PASS;
	if (bpf_xdp_adjust_tail(ctx, -(int)trailer))
		return XDP_ABORTED;
	if (bpf_xdp_adjust_head(ctx, ENCAP_HLEN))
		return XDP_ABORTED;
	count_acted(c);
	return XDP_PASS;
}
