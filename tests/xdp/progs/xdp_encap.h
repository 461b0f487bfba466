/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test encapsulation that xdp_pass_adjust strips (rsnic-frames send --encap builds it):
 *
 *   outer Ethernet header, EtherType ENCAP_ETH_P (0x88b5, IEEE local experimental)
 *   struct encap_hdr: magic "RXEN", trailer_len (big-endian), two reserved bytes
 *   the inner frame (a complete Ethernet frame)
 *   trailer_len bytes of trailer
 *
 * Stripping moves the head by ENCAP_HLEN bytes (bpf_xdp_adjust_head) and the tail by
 * -trailer_len (bpf_xdp_adjust_tail): what the stack receives is the inner frame exactly.
 */
#ifndef RSNIC_XDP_ENCAP_H
#define RSNIC_XDP_ENCAP_H

#include <linux/types.h>

#define ENCAP_ETH_P 0x88b5
#define ENCAP_MAGIC 0x5258454eU /* "RXEN" */
#define ENCAP_MAX_TRAILER 1024

struct encap_hdr {
	__be32 magic;
	__be16 trailer_len;
	__be16 reserved;
};

/* Outer Ethernet header and encapsulation header. */
#define ENCAP_HLEN (14 + sizeof(struct encap_hdr))

#endif
