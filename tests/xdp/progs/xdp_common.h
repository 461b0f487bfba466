/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by rsnic's test XDP programs: the packet counter every program keeps, so that a
 * test can check "packets the program saw = packets the driver counted for its action".
 *
 * Map "counts": one per-CPU slot of struct xdp_count. "packets" and "bytes" count every
 * frame the program ran on (bytes as the program saw them, before any adjustment);
 * "acted" counts the frames the program applied its action to (for xdp_pass_adjust the
 * frames it stripped, for xdp_redirect and xdp_xsk the frames for which the helper
 * returned XDP_REDIRECT; for the others every frame). rsnic-xdp count sums the CPUs.
 */
#ifndef RSNIC_XDP_COMMON_H
#define RSNIC_XDP_COMMON_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "xdp_count.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xdp_count);
} counts SEC(".maps");

/* Counts one frame; returns the slot so that the caller can count it as acted on. */
static __always_inline struct xdp_count *count_frame(struct xdp_md *ctx)
{
	__u32 key = 0;
	struct xdp_count *c = bpf_map_lookup_elem(&counts, &key);

	if (c) {
		c->packets++;
		c->bytes += ctx->data_end - ctx->data;
	}
	return c;
}

static __always_inline void count_acted(struct xdp_count *c)
{
	if (c)
		c->acted++;
}

char _license[] SEC("license") = "GPL";

#endif
