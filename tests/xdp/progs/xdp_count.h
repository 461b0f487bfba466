/* SPDX-License-Identifier: GPL-2.0 */
/* The value of the "counts" map of rsnic's test XDP programs (BPF and user space). */
#ifndef RSNIC_XDP_COUNT_H
#define RSNIC_XDP_COUNT_H

#include <linux/types.h>

struct xdp_count {
	__u64 packets;
	__u64 bytes;
	__u64 acted;
};

#endif
