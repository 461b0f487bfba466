/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rsnic's test frame, built and checked byte for byte by rsnic-xsk (AF_XDP) and
 * rsnic-frames (packet sockets):
 *
 *   Ethernet  dst, src, EtherType 0x0800
 *   IPv4      0x45, TOS 0, total length, id = seq & 0xffff, DF, TTL 64, UDP, header
 *             checksum, src, dst (default 10.10.0.1 -> 10.10.0.2)
 *   UDP       source port 40000, destination port TF_UDP_PORT (9999), length, checksum 0
 *   payload   "RSNICTST", seq (8 bytes, big-endian), then pattern bytes p[i] = T[i] ^
 *             S[i % 8]: S is (seq + 1) * 0x9e3779b97f4a7c15 (mod 2^64), little-endian; T is
 *             one stream for all frames, 8-byte blocks of x, little-endian, x starting at
 *             0x9e3779b97f4a7c15 and taking one xorshift step (x ^= x << 13; x ^= x >> 7;
 *             x ^= x << 17) before each block (T does not repeat: a byte moved within the
 *             frame shows; S differs per frame: a byte of another frame shows)
 *
 * A frame is TF_MIN_LEN (60) bytes or longer, so no device pads it: its length is part of
 * what the receiver checks (14 + the IPv4 total length). A receiver rebuilds the frame it
 * expects from the sequence number and length it read and compares every byte.
 *
 * The frame's MAC addresses come from both tools' options (tf_parse_mac) or from the
 * sending interface (tf_dev_mac).
 */
#ifndef RSNIC_TESTFRAME_H
#define RSNIC_TESTFRAME_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define TF_ETH_HLEN 14
#define TF_HDR_LEN (TF_ETH_HLEN + 20 + 8)	 /* Ethernet, IPv4, UDP */
#define TF_SEQ_OFF (TF_HDR_LEN + 8)		 /* after the magic */
#define TF_PAT_OFF (TF_SEQ_OFF + 8)		 /* first pattern byte */
#define TF_MIN_LEN 60
#define TF_MAX_LEN 9000
#define TF_UDP_PORT 9999
#define TF_MAGIC "RSNICTST"

struct tf_addrs {
	uint8_t dst[6], src[6];
	uint8_t ip_src[4], ip_dst[4];
};

/* Parses the MAC address s ("xx:xx:xx:xx:xx:xx") into mac; -1 if s is not one. */
static inline int tf_parse_mac(const char *s, uint8_t *mac)
{
	unsigned int b[6];
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		return -1;
	for (i = 0; i < 6; i++) {
		if (b[i] > 0xff)
			return -1;
		mac[i] = (uint8_t)b[i];
	}
	return 0;
}

/* Reads the MAC address of interface dev (sysfs) into mac; -1 (errno as it was) if it cannot. */
static inline int tf_dev_mac(const char *dev, uint8_t *mac)
{
	char path[128], buf[64];
	int ret, err;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/address", dev);
	f = fopen(path, "r");
	if (!f)
		return -1;
	ret = fgets(buf, sizeof(buf), f) && !tf_parse_mac(buf, mac) ? 0 : -1;
	err = errno;
	fclose(f);
	errno = err;
	return ret;
}

static inline void tf_put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static inline uint16_t tf_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint16_t tf_ip_csum(const uint8_t *h)
{
	uint32_t s = 0;
	int i;

	for (i = 0; i < 20; i += 2)
		s += tf_get16(h + i);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* Builds the test frame with sequence number seq, len bytes long, into buf. */
static inline void tf_build(uint8_t *buf, uint32_t len, uint64_t seq, const struct tf_addrs *a)
{
	static uint8_t t[TF_MAX_LEN];
	static int t_ready;
	uint8_t *ip = buf + TF_ETH_HLEN, *udp = ip + 20;
	uint64_t x = 0x9e3779b97f4a7c15ULL, sd = (seq + 1) * 0x9e3779b97f4a7c15ULL;
	uint32_t off, i;

	if (!t_ready) {
		for (off = 0; off < TF_MAX_LEN; off += 8) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			for (i = 0; i < 8; i++)
				t[off + i] = (uint8_t)(x >> (8 * i));
		}
		t_ready = 1;
	}

	memcpy(buf, a->dst, 6);
	memcpy(buf + 6, a->src, 6);
	tf_put16(buf + 12, 0x0800);
	ip[0] = 0x45;
	ip[1] = 0;
	tf_put16(ip + 2, (uint16_t)(len - TF_ETH_HLEN));
	tf_put16(ip + 4, (uint16_t)(seq & 0xffff));
	tf_put16(ip + 6, 0x4000);
	ip[8] = 64;
	ip[9] = 17;
	tf_put16(ip + 10, 0);
	memcpy(ip + 12, a->ip_src, 4);
	memcpy(ip + 16, a->ip_dst, 4);
	tf_put16(ip + 10, tf_ip_csum(ip));
	tf_put16(udp, 40000);
	tf_put16(udp + 2, TF_UDP_PORT);
	tf_put16(udp + 4, (uint16_t)(len - TF_ETH_HLEN - 20));
	tf_put16(udp + 6, 0);
	memcpy(buf + TF_HDR_LEN, TF_MAGIC, 8);
	for (i = 0; i < 8; i++)
		buf[TF_SEQ_OFF + i] = (uint8_t)(seq >> (56 - 8 * i));
	for (off = TF_PAT_OFF, i = 0; off < len; off++, i++)
		buf[off] = t[i] ^ (uint8_t)(sd >> (8 * (i % 8)));
}

/* Whether frame p of len bytes is a test frame (the rest decides whether it is intact). */
static inline int tf_is_test(const uint8_t *p, uint32_t len)
{
	return len >= TF_PAT_OFF && tf_get16(p + 12) == 0x0800 && p[TF_ETH_HLEN + 9] == 17 &&
	       tf_get16(p + TF_ETH_HLEN + 22) == TF_UDP_PORT && !memcmp(p + TF_HDR_LEN, TF_MAGIC, 8);
}

static inline uint64_t tf_seq(const uint8_t *p)
{
	uint64_t s = 0;
	int i;

	for (i = 0; i < 8; i++)
		s = s << 8 | p[TF_SEQ_OFF + i];
	return s;
}

/* What a receiver saw, and the sequence bookkeeping. */
struct tf_check {
	uint64_t frames;     /* test frames received */
	uint64_t bytes;
	uint64_t mismatches; /* test frames that differ from the frame rebuilt from their seq */
	uint64_t gaps;	     /* sequence numbers skipped */
	uint64_t reordered;  /* frames with a sequence number below the next expected */
	uint64_t foreign;    /* unicast frames that are not test frames */
	uint64_t foreign_group; /* group-addressed (multicast, broadcast) non-test frames: the
				 * stack's own control frames (IGMP, ND, ARP), not corruption */
	uint32_t foreign_type;	/* EtherType of the first non-test frame (0: none) */
	uint32_t foreign_len;	/* length of the first unicast non-test frame (0: none) */
	uint8_t foreign_head[48]; /* its first bytes, for the report */
	uint64_t first_seq, last_seq; /* of the first and the last test frame */
	uint64_t next_seq;	     /* expected next (set with started = 1 to check from there) */
	int started;
};

/*
 * Checks one received frame. a gives the expected addresses; a NULL want_mac takes the
 * MAC addresses from the frame (checking everything else).
 */
static inline void tf_check_frame(struct tf_check *c, const uint8_t *p, uint32_t len,
				  const struct tf_addrs *a, int check_macs, uint8_t *scratch)
{
	struct tf_addrs want = *a;
	uint64_t seq;

	if (!tf_is_test(p, len)) {
		if (len >= 1 && (p[0] & 1))
			c->foreign_group++;
		else if (!c->foreign++) {
			c->foreign_len = len;
			memcpy(c->foreign_head, p,
			       len < sizeof(c->foreign_head) ? len : sizeof(c->foreign_head));
		}
		if (!c->foreign_type && len >= 14)
			c->foreign_type = (uint32_t)p[12] << 8 | p[13];
		return;
	}
	c->frames++;
	c->bytes += len;
	seq = tf_seq(p);
	if (c->frames == 1)
		c->first_seq = seq;
	if (!check_macs) {
		memcpy(want.dst, p, 6);
		memcpy(want.src, p + 6, 6);
	}
	if (len < TF_MIN_LEN || len > TF_MAX_LEN) {
		c->mismatches++;
	} else {
		tf_build(scratch, len, seq, &want);
		if (memcmp(scratch, p, len))
			c->mismatches++;
	}
	if (!c->started) {
		c->started = 1;
		c->next_seq = seq;
	}
	if (seq >= c->next_seq) {
		c->gaps += seq - c->next_seq;
		c->next_seq = seq + 1;
	} else {
		c->reordered++;
	}
	c->last_seq = seq;
}

#endif
