// SPDX-License-Identifier: GPL-2.0
/*
 * Hands every frame to the AF_XDP socket bound to the queue it arrived on (the XSKMAP
 * "xsks", indexed by RX queue, filled by rsnic-xsk); frames of a queue without a socket go
 * to the stack (XDP_PASS). "acted" counts the frames redirected.
 */
#include "xdp_common.h"

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} xsks SEC(".maps");

SEC("xdp")
int xdp_xsk(struct xdp_md *ctx)
{
	struct xdp_count *c = count_frame(ctx);
	long ret = bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_PASS);

	if (ret == XDP_REDIRECT)
		count_acted(c);
	return ret;
}
