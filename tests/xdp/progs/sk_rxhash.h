/* SPDX-License-Identifier: GPL-2.0 */
/* The per-flow record of sk_rxhash.c, shared with rsnic-xdp rxhash. */
#ifndef RSNIC_SK_RXHASH_H
#define RSNIC_SK_RXHASH_H

#include <linux/types.h>

#define RXHASH_MAX_FLOWS 1024

struct rxhash_flow {
	__u32 hash;	/* the first nonzero skb->hash of the flow */
	__u32 hashed;	/* packets with that hash */
	__u32 nohash;	/* packets with none (0) */
	__u32 mismatch;	/* packets with another nonzero hash */
};

#endif
