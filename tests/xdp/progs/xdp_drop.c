// SPDX-License-Identifier: GPL-2.0
/* XDP_DROP for every frame, counted in "counts" (see xdp_common.h). */
#include "xdp_common.h"

SEC("xdp")
int xdp_drop(struct xdp_md *ctx)
{
	count_acted(count_frame(ctx));
	return XDP_DROP;
}
