// SPDX-License-Identifier: GPL-2.0
/*
 * A socket filter for a packet socket (SOCK_DGRAM, ETH_P_IP): for every IPv4 UDP packet the
 * interface received, the RSS hash the driver set on its skb (skb->hash as the driver left
 * it: the stack computes none on this path without RPS), kept per UDP source port in map
 * "flows" (struct rxhash_flow, sk_rxhash.h): the first nonzero hash seen, packets with that
 * hash, packets without one, packets with another. Every packet is then dropped for the
 * socket (the figures are in the map). rsnic-xdp rxhash reads them.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "sk_rxhash.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RXHASH_MAX_FLOWS);
	__type(key, __u32);
	__type(value, struct rxhash_flow);
} flows SEC(".maps");

SEC("socket")
int sk_rxhash(struct __sk_buff *skb)
{
	struct rxhash_flow zero = {}, *f;
	__u8 vihl, proto;
	__u16 sport;
	__u32 key, hash = skb->hash;

	if (skb->protocol != bpf_htons(ETH_P_IP))
		return 0;
	/* SOCK_DGRAM: the data starts at the IP header. */
	if (bpf_skb_load_bytes(skb, 0, &vihl, 1) || bpf_skb_load_bytes(skb, 9, &proto, 1))
		return 0;
	if (proto != IPPROTO_UDP)
		return 0;
	if (bpf_skb_load_bytes(skb, (vihl & 0xf) * 4, &sport, 2))
		return 0;
	key = bpf_ntohs(sport);
	f = bpf_map_lookup_elem(&flows, &key);
	if (!f) {
		bpf_map_update_elem(&flows, &key, &zero, BPF_NOEXIST);
		f = bpf_map_lookup_elem(&flows, &key);
		if (!f)
			return 0;
	}
	if (!hash)
		__sync_fetch_and_add(&f->nohash, 1);
	else if (!f->hash || f->hash == hash) {
		f->hash = hash;
		__sync_fetch_and_add(&f->hashed, 1);
	} else
		__sync_fetch_and_add(&f->mismatch, 1);
	return 0;
}

char _license[] SEC("license") = "GPL";
