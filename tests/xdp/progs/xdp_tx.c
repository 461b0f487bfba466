// SPDX-License-Identifier: GPL-2.0
/*
 * Sends every frame back out of the port it came in on (XDP_TX) with its source and
 * destination MAC addresses swapped; nothing else changes, so the sender receives its own
 * frame byte for byte but for the two addresses.
 */
#include "xdp_common.h"

SEC("xdp")
int xdp_tx(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct xdp_count *c = count_frame(ctx);
	struct ethhdr *eth = data;
	unsigned char tmp[ETH_ALEN];

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	__builtin_memcpy(tmp, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, tmp, ETH_ALEN);
	count_acted(c);
	return XDP_TX;
}
