// SPDX-License-Identifier: GPL-2.0
/*
 * rsnic-xsk: an AF_XDP socket on one queue of one interface, on libxdp's xsk API, in one
 * of three modes:
 *
 *   rxdrop  receive and drop (optionally checking every frame: --verify)
 *   txonly  send test frames (testframe.h) with consecutive sequence numbers
 *   l2fwd   receive, swap the MAC addresses, send back out of the same queue
 *
 * usage: rsnic-xsk MODE -i DEV [-q QUEUE] [-c | -z] [-S | -N] [--no-need-wakeup]
 *                  [-n COUNT] [-d SECONDS] [-s SIZE[:MAX]] [--rate PPS] [--seq0 N]
 *                  [--dst-mac MAC] [--src-mac MAC] [--src-ip A] [--dst-ip A]
 *                  [--verify] [--expect-dst MAC --expect-src MAC]
 *                  [-b BATCH] [--frames N] [--frame-size 2048|4096] [--headroom N]
 *                  [--prog xdp_xsk.o] [--prog-delay SECONDS] [--hold]
 *                  [--bound-file PATH] [--ready-file PATH]
 *
 * -c binds in copy mode (XDP_COPY), -z in zero-copy mode (XDP_ZEROCOPY); with neither the
 * kernel chooses (zero-copy where the driver supports it). A refused bind is reported on
 * stderr with the flag, the errno and its name, and exits with status 3.
 * rxdrop and l2fwd need an XDP program that hands the queue's frames to the socket: one
 * already attached in the chosen mode (-N native, the default, or -S skb) that has an
 * XSKMAP named "xsks" is used as it is; otherwise the tool attaches --prog (default
 * xdp_xsk.o beside the binary) and detaches it at exit. txonly attaches nothing.
 * --prog-delay waits SECONDS between the bind and the program (libxdp binds first too: the
 * driver must not steal the queue's traffic meanwhile); --bound-file is written at the
 * bind, --ready-file once the program feeds the socket. --hold binds and then does nothing
 * for -d SECONDS: no program, no ring touched (the fill ring stays empty). --headroom gives
 * the UMEM frames that much headroom of their own (beyond XDP_PACKET_HEADROOM).
 * -n stops after COUNT packets (received, or sent and completed), -d after SECONDS (10).
 * txonly frames are SIZE bytes, or SIZE + (seq * 37) % (MAX - SIZE + 1) with a range.
 * --verify checks each received frame against the test frame rebuilt from its sequence
 * number (byte for byte; MAC addresses too with --expect-dst/--expect-src), and counts
 * mismatches, sequence gaps from --seq0 on, reordered frames and foreign frames (unicast
 * ones, and group-addressed ones apart: the stack's own control frames), with the EtherType
 * of the first foreign frame.
 *
 * The last line on stdout is "rsnic-xsk: key=value ..." with the figures (kicks: the
 * sendto calls that kicked the kernel's TX, each an ndo_xsk_wakeup in zero-copy mode).
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <xdp/xsk.h>

#include "testframe.h"

#ifndef SOL_XDP
#define SOL_XDP 283
#endif

enum mode { RXDROP, TXONLY, L2FWD };
static const char *const mode_names[] = { "rxdrop", "txonly", "l2fwd" };

struct cfg {
	enum mode mode;
	const char *dev;
	int ifindex;
	__u32 queue;
	__u16 bind_flags; /* XDP_COPY, XDP_ZEROCOPY or 0 */
	int need_wakeup;
	__u32 xdp_flags;
	__u64 count;
	double duration;
	__u32 size_min, size_max;
	double rate;
	__u64 seq0;
	struct tf_addrs addrs;
	int have_dst;
	int verify, check_macs;
	__u32 batch, frames, frame_size, headroom;
	const char *prog_path;
	const char *ready_file;
	const char *bound_file;
	double prog_delay;
	int hold;
};

struct state {
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod fq, tx;
	struct xsk_ring_cons cq, rx;
	void *area;
	int fd;
	/* results */
	__u64 packets, bytes, submitted, received, kicks;
	double t_first, t_last;
	struct tf_check chk;
	/* the XDP program this tool attached (to detach at exit) */
	int own_prog_fd;
};

static volatile sig_atomic_t stop;
static const char *me = "rsnic-xsk";

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *errno_name(int e)
{
	switch (e) {
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EINVAL: return "EINVAL";
	case EBUSY: return "EBUSY";
	case ENOENT: return "ENOENT";
	case ENODEV: return "ENODEV";
	case EPERM: return "EPERM";
	case ENOMEM: return "ENOMEM";
	case ENOBUFS: return "ENOBUFS";
	case ENETDOWN: return "ENETDOWN";
	case ENXIO: return "ENXIO";
	default: return "errno";
	}
}

static void die(const char *what, int err)
{
	if (err < 0)
		err = -err;
	if (err)
		fprintf(stderr, "%s: %s: %s (%s %d)\n", me, what, strerror(err), errno_name(err), err);
	else
		fprintf(stderr, "%s: %s\n", me, what);
	exit(1);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: %s rxdrop|txonly|l2fwd -i DEV [-q QUEUE] [-c | -z] [-S | -N]\n"
		"       [--no-need-wakeup] [-n COUNT] [-d SECONDS] [-s SIZE[:MAX]] [--rate PPS]\n"
		"       [--seq0 N] [--dst-mac MAC] [--src-mac MAC] [--src-ip A] [--dst-ip A]\n"
		"       [--verify] [--expect-dst MAC --expect-src MAC] [-b BATCH] [--frames N]\n"
		"       [--frame-size 2048|4096] [--headroom N] [--prog xdp_xsk.o]\n"
		"       [--prog-delay SECONDS] [--hold] [--bound-file PATH] [--ready-file PATH]\n",
		me);
	exit(2);
}

static __u64 frame_len(const struct cfg *c, __u64 seq)
{
	return c->size_min + (seq * 37) % (c->size_max - c->size_min + 1);
}

/* Kicks the kernel to process the TX ring (copy mode transmits in this call). */
static void kick_tx(struct state *s)
{
	s->kicks++;
	if (sendto(s->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0)
		return;
	if (errno == EAGAIN || errno == EBUSY || errno == ENOBUFS || errno == ENETDOWN ||
	    errno == EINTR)
		return;
	die("sendto (TX kick)", errno);
}

/* Creates an empty file at PATH (if given): a signal for the test that waits on it. */
static void touch(const char *path)
{
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "w");
	if (f)
		fclose(f);
}

static void wake_rx(struct state *s)
{
	struct pollfd p = { .fd = s->fd, .events = POLLIN };

	poll(&p, 1, 20);
}

/* The XSKMAP of the program attached to the interface in our mode, or -1. */
static int attached_xsks_map(const struct cfg *c)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct bpf_prog_info info = {};
	struct bpf_map_info minfo;
	__u32 len = sizeof(info), mlen, ids[16], id, i;
	int fd, mfd;

	if (bpf_xdp_query(c->ifindex, 0, &q))
		die("query the interface's XDP program", errno);
	id = c->xdp_flags & XDP_FLAGS_SKB_MODE ? q.skb_prog_id : q.drv_prog_id;
	if (!id)
		return -1;
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		die("open the attached XDP program", errno);
	info.nr_map_ids = 16;
	info.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		die("read the attached XDP program", errno);
	close(fd);
	for (i = 0; i < info.nr_map_ids && i < 16; i++) {
		mfd = bpf_map_get_fd_by_id(ids[i]);
		if (mfd < 0)
			continue;
		memset(&minfo, 0, sizeof(minfo));
		mlen = sizeof(minfo);
		if (!bpf_obj_get_info_by_fd(mfd, &minfo, &mlen) && minfo.type == BPF_MAP_TYPE_XSKMAP &&
		    !strcmp(minfo.name, "xsks"))
			return mfd;
		close(mfd);
	}
	fprintf(stderr, "%s: %s has XDP program %s attached, without an XSKMAP \"xsks\"\n", me,
		c->dev, info.name);
	exit(1);
}

/* Attaches the XDP program that feeds the socket; returns its XSKMAP. */
static int setup_prog(const struct cfg *c, struct state *s)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct bpf_map *map;
	int err, mfd = attached_xsks_map(c);

	if (mfd >= 0) {
		fprintf(stderr, "%s: using the XDP program attached to %s\n", me, c->dev);
		return mfd;
	}
	obj = bpf_object__open_file(c->prog_path, NULL);
	if (!obj)
		die("open the XDP program (--prog)", errno);
	err = bpf_object__load(obj);
	if (err)
		die("load the XDP program", err);
	prog = bpf_object__next_program(obj, NULL);
	map = bpf_object__find_map_by_name(obj, "xsks");
	if (!prog || !map)
		die("the XDP program has no program or no map \"xsks\"", 0);
	err = bpf_xdp_attach(c->ifindex, bpf_program__fd(prog),
			     c->xdp_flags | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	if (err) {
		fprintf(stderr, "%s: attach %s to %s in %s mode: %s (%s %d)\n", me,
			bpf_program__name(prog), c->dev,
			c->xdp_flags & XDP_FLAGS_SKB_MODE ? "skb" : "native", strerror(-err),
			errno_name(-err), -err);
		exit(1);
	}
	s->own_prog_fd = dup(bpf_program__fd(prog));
	mfd = dup(bpf_map__fd(map));
	bpf_object__close(obj);
	return mfd;
}

static void detach_own_prog(const struct cfg *c, struct state *s)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = s->own_prog_fd);

	if (s->own_prog_fd < 0)
		return;
	/* Only if it is still ours: someone may have replaced it meanwhile. */
	if (bpf_xdp_detach(c->ifindex, c->xdp_flags | XDP_FLAGS_REPLACE, &o))
		fprintf(stderr, "%s: left the XDP program attached (%s)\n", me, strerror(errno));
	close(s->own_prog_fd);
	s->own_prog_fd = -1;
}

static void setup_socket(const struct cfg *c, struct state *s)
{
	struct xsk_umem_config ucfg = {
		.fill_size = XSK_RING_PROD__DEFAULT_NUM_DESCS,
		.comp_size = XSK_RING_CONS__DEFAULT_NUM_DESCS,
		.frame_size = c->frame_size,
		.frame_headroom = c->headroom,
		.flags = 0,
	};
	struct xsk_socket_config scfg = {
		.rx_size = XSK_RING_CONS__DEFAULT_NUM_DESCS,
		.tx_size = XSK_RING_PROD__DEFAULT_NUM_DESCS,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.xdp_flags = c->xdp_flags,
		.bind_flags = c->bind_flags | (c->need_wakeup ? XDP_USE_NEED_WAKEUP : 0),
	};
	size_t size = (size_t)c->frames * c->frame_size;
	int err;

	s->area = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->area == MAP_FAILED)
		die("mmap the UMEM", errno);
	err = xsk_umem__create(&s->umem, s->area, size, &s->fq, &s->cq, &ucfg);
	if (err)
		die("create the UMEM", err);
	err = xsk_socket__create(&s->xsk, c->dev, c->queue, s->umem,
				 c->mode == TXONLY ? NULL : &s->rx,
				 c->mode == RXDROP ? NULL : &s->tx, &scfg);
	if (err) {
		const char *flag = c->bind_flags & XDP_ZEROCOPY ? "XDP_ZEROCOPY" :
				   c->bind_flags & XDP_COPY	? "XDP_COPY" :
								  "no copy/zero-copy flag";

		fprintf(stderr, "%s: bind to %s queue %u with %s refused: %s (%s %d)%s\n", me,
			c->dev, c->queue, flag, strerror(-err), errno_name(-err), -err,
			c->bind_flags & XDP_ZEROCOPY ?
				"; the driver does not offer zero-copy AF_XDP on this queue" :
				"");
		exit(3);
	}
	s->fd = xsk_socket__fd(s->xsk);
}

static const char *bound_mode(struct state *s)
{
	struct xdp_options o;
	socklen_t len = sizeof(o);

	if (getsockopt(s->fd, SOL_XDP, XDP_OPTIONS, &o, &len))
		return "?";
	return o.flags & XDP_OPTIONS_ZEROCOPY ? "zerocopy" : "copy";
}

static void fill_all(const struct cfg *c, struct state *s)
{
	__u32 n = XSK_RING_PROD__DEFAULT_NUM_DESCS, idx, i;

	if (n > c->frames)
		n = c->frames;
	if (xsk_ring_prod__reserve(&s->fq, n, &idx) != n)
		die("fill the fill ring", 0);
	for (i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&s->fq, idx + i) = (__u64)i * c->frame_size;
	xsk_ring_prod__submit(&s->fq, n);
}

static void note_packets(struct state *s, __u64 n, __u64 bytes)
{
	double t = now();

	if (!s->packets)
		s->t_first = t;
	s->t_last = t;
	s->packets += n;
	s->bytes += bytes;
}

static void check_rx(const struct cfg *c, struct state *s, const uint8_t *p, __u32 len,
		     uint8_t *scratch)
{
	if (c->verify)
		tf_check_frame(&s->chk, p, len, &c->addrs, c->check_macs, scratch);
}

/* Packets received towards -n: with --verify the test frames only. */
static __u64 rx_done(const struct cfg *c, const struct state *s)
{
	return c->verify ? s->chk.frames : s->received;
}

static void run_rxdrop(const struct cfg *c, struct state *s, double deadline)
{
	uint8_t *scratch = malloc(c->frame_size);
	__u32 idx, fidx, n, i;
	__u64 bytes;

	fill_all(c, s);
	while (!stop && now() < deadline && !(c->count && rx_done(c, s) >= c->count)) {
		n = xsk_ring_cons__peek(&s->rx, c->batch, &idx);
		if (!n) {
			wake_rx(s);
			continue;
		}
		while (xsk_ring_prod__reserve(&s->fq, n, &fidx) != n) {
			if (xsk_ring_prod__needs_wakeup(&s->fq))
				wake_rx(s);
			if (stop || now() >= deadline)
				return;
		}
		bytes = 0;
		for (i = 0; i < n; i++) {
			const struct xdp_desc *d = xsk_ring_cons__rx_desc(&s->rx, idx + i);
			__u64 a = xsk_umem__add_offset_to_addr(d->addr);

			check_rx(c, s, xsk_umem__get_data(s->area, a), d->len, scratch);
			bytes += d->len;
			*xsk_ring_prod__fill_addr(&s->fq, fidx + i) =
				xsk_umem__extract_addr(d->addr) & ~(__u64)(c->frame_size - 1);
		}
		xsk_ring_prod__submit(&s->fq, n);
		xsk_ring_cons__release(&s->rx, n);
		s->received += n;
		note_packets(s, n, bytes);
		if (!c->need_wakeup || xsk_ring_prod__needs_wakeup(&s->fq))
			recvfrom(s->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
	}
	free(scratch);
}

static void run_txonly(const struct cfg *c, struct state *s, double deadline)
{
	__u64 *free_addrs = malloc(sizeof(__u64) * c->frames);
	__u64 nfree = c->frames, seq = c->seq0, completed = 0, bytes_sent = 0;
	double t0 = now();
	__u32 idx, n, i, k;
	int idle;

	for (i = 0; i < c->frames; i++)
		free_addrs[i] = (__u64)(c->frames - 1 - i) * c->frame_size;
	while (!stop && now() < deadline) {
		idle = 1;
		n = xsk_ring_cons__peek(&s->cq, c->batch, &idx);
		if (n) {
			for (i = 0; i < n; i++)
				free_addrs[nfree++] = *xsk_ring_cons__comp_addr(&s->cq, idx + i);
			xsk_ring_cons__release(&s->cq, n);
			completed += n;
			note_packets(s, n, 0);
			idle = 0;
		}
		if (c->count && completed >= c->count)
			break;
		k = c->batch;
		if (k > nfree)
			k = (__u32)nfree;
		if (c->count && k > c->count - s->submitted)
			k = (__u32)(c->count - s->submitted);
		if (c->rate > 0) {
			double allowed = c->rate * (now() - t0) + 1 - (double)s->submitted;

			if (allowed < k)
				k = allowed > 0 ? (__u32)allowed : 0;
		}
		if (k && xsk_ring_prod__reserve(&s->tx, k, &idx) == k) {
			for (i = 0; i < k; i++) {
				struct xdp_desc *d = xsk_ring_prod__tx_desc(&s->tx, idx + i);
				__u64 len = frame_len(c, seq);

				d->addr = free_addrs[--nfree];
				d->len = (__u32)len;
				d->options = 0;
				tf_build(xsk_umem__get_data(s->area, d->addr), (uint32_t)len, seq, &c->addrs);
				bytes_sent += len;
				seq++;
			}
			xsk_ring_prod__submit(&s->tx, k);
			s->submitted += k;
			idle = 0;
		}
		if (s->submitted > completed &&
		    (!c->need_wakeup || xsk_ring_prod__needs_wakeup(&s->tx)))
			kick_tx(s);
		if (idle)
			usleep(c->rate > 0 ? 200 : 20);
	}
	s->bytes = bytes_sent;
	free(free_addrs);
}

static void run_l2fwd(const struct cfg *c, struct state *s, double deadline)
{
	uint8_t *scratch = malloc(c->frame_size), tmp[6];
	__u32 idx, tidx, fidx, n, i;
	__u64 bytes;

	fill_all(c, s);
	while (!stop && now() < deadline && !(c->count && s->packets >= c->count)) {
		/* Sent frames go back to the fill ring. */
		n = xsk_ring_cons__peek(&s->cq, c->batch, &idx);
		if (n) {
			while (xsk_ring_prod__reserve(&s->fq, n, &fidx) != n) {
				if (stop || now() >= deadline)
					goto out;
				wake_rx(s);
			}
			for (i = 0; i < n; i++)
				*xsk_ring_prod__fill_addr(&s->fq, fidx + i) =
					*xsk_ring_cons__comp_addr(&s->cq, idx + i) &
					~(__u64)(c->frame_size - 1);
			xsk_ring_prod__submit(&s->fq, n);
			xsk_ring_cons__release(&s->cq, n);
			note_packets(s, n, 0);
		}
		n = xsk_ring_cons__peek(&s->rx, c->batch, &idx);
		if (!n) {
			if (s->submitted > s->packets)
				kick_tx(s);
			else
				wake_rx(s);
			continue;
		}
		while (xsk_ring_prod__reserve(&s->tx, n, &tidx) != n) {
			kick_tx(s);
			if (stop || now() >= deadline)
				goto out;
		}
		bytes = 0;
		for (i = 0; i < n; i++) {
			const struct xdp_desc *d = xsk_ring_cons__rx_desc(&s->rx, idx + i);
			struct xdp_desc *t = xsk_ring_prod__tx_desc(&s->tx, tidx + i);
			uint8_t *p = xsk_umem__get_data(s->area, xsk_umem__add_offset_to_addr(d->addr));

			check_rx(c, s, p, d->len, scratch);
			memcpy(tmp, p, 6);
			memcpy(p, p + 6, 6);
			memcpy(p + 6, tmp, 6);
			t->addr = d->addr;
			t->len = d->len;
			t->options = 0;
			bytes += d->len;
		}
		xsk_ring_prod__submit(&s->tx, n);
		xsk_ring_cons__release(&s->rx, n);
		s->received += n;
		s->submitted += n;
		s->bytes += bytes;
		if (!c->need_wakeup || xsk_ring_prod__needs_wakeup(&s->tx))
			kick_tx(s);
	}
out:
	free(scratch);
}

/* txonly and l2fwd: give the frames in flight a second to complete. */
static void drain_tx(const struct cfg *c, struct state *s)
{
	double end = now() + 1.0;
	__u32 idx, n;

	while (s->packets < s->submitted && now() < end) {
		n = xsk_ring_cons__peek(&s->cq, c->batch, &idx);
		if (n) {
			xsk_ring_cons__release(&s->cq, n);
			note_packets(s, n, 0);
			continue;
		}
		kick_tx(s);
		usleep(1000);
	}
}

static void report(const struct cfg *c, struct state *s)
{
	struct xdp_statistics st = {};
	socklen_t len = sizeof(st);
	double secs = s->packets > 1 ? s->t_last - s->t_first : 0;
	char head[2 * sizeof(s->chk.foreign_head) + 1] = "-";
	uint32_t i, n = s->chk.foreign_len;

	if (n > sizeof(s->chk.foreign_head))
		n = sizeof(s->chk.foreign_head);
	for (i = 0; i < n; i++)
		snprintf(head + 2 * i, 3, "%02x", s->chk.foreign_head[i]);

	if (getsockopt(s->fd, SOL_XDP, XDP_STATISTICS, &st, &len))
		memset(&st, 0, sizeof(st));
	printf("rsnic-xsk: mode=%s dev=%s queue=%u bind=%s need_wakeup=%s packets=%llu bytes=%llu "
	       "seconds=%.3f pps=%.0f received=%llu submitted=%llu kicks=%llu frames=%llu mismatches=%llu "
	       "gaps=%llu reordered=%llu foreign=%llu foreign_group=%llu foreign_type=0x%04x "
	       "foreign_len=%u foreign_head=%s first_seq=%llu last_seq=%llu "
	       "rx_dropped=%llu rx_invalid=%llu rx_ring_full=%llu fill_empty=%llu "
	       "tx_invalid=%llu tx_ring_empty=%llu\n",
	       mode_names[c->mode], c->dev, c->queue, bound_mode(s), c->need_wakeup ? "on" : "off",
	       (unsigned long long)s->packets, (unsigned long long)s->bytes, secs,
	       secs > 0 ? (s->packets - 1) / secs : 0.0, (unsigned long long)s->received,
	       (unsigned long long)s->submitted, (unsigned long long)s->kicks,
	       (unsigned long long)s->chk.frames,
	       (unsigned long long)s->chk.mismatches, (unsigned long long)s->chk.gaps,
	       (unsigned long long)s->chk.reordered, (unsigned long long)s->chk.foreign,
	       (unsigned long long)s->chk.foreign_group, s->chk.foreign_type,
	       s->chk.foreign_len, head, (unsigned long long)s->chk.first_seq, (unsigned long long)s->chk.last_seq,
	       (unsigned long long)st.rx_dropped, (unsigned long long)st.rx_invalid_descs,
	       (unsigned long long)st.rx_ring_full, (unsigned long long)st.rx_fill_ring_empty_descs,
	       (unsigned long long)st.tx_invalid_descs, (unsigned long long)st.tx_ring_empty_descs);
	fflush(stdout);
}

static void parse_ip(const char *s, uint8_t *ip)
{
	if (inet_pton(AF_INET, s, ip) != 1) {
		fprintf(stderr, "%s: bad IPv4 address '%s'\n", me, s);
		exit(2);
	}
}

/* A MAC address option: its address into mac, and *given set. */
static void mac_opt(const char *arg, uint8_t *mac, int *given)
{
	if (tf_parse_mac(arg, mac))
		usage();
	*given = 1;
}

int main(int argc, char **argv)
{
	enum { O_NOWAKE = 256, O_RATE, O_SEQ0, O_DMAC, O_SMAC, O_SIP, O_DIP, O_VERIFY,
	       O_EDST, O_ESRC, O_FRAMES, O_FSIZE, O_PROG, O_READY, O_HEADROOM, O_DELAY, O_HOLD,
	       O_BOUND };
	static const struct option longopts[] = {
		{ "interface", required_argument, NULL, 'i' },
		{ "queue", required_argument, NULL, 'q' },
		{ "copy", no_argument, NULL, 'c' },
		{ "zero-copy", no_argument, NULL, 'z' },
		{ "skb-mode", no_argument, NULL, 'S' },
		{ "native-mode", no_argument, NULL, 'N' },
		{ "no-need-wakeup", no_argument, NULL, O_NOWAKE },
		{ "count", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 'd' },
		{ "size", required_argument, NULL, 's' },
		{ "batch", required_argument, NULL, 'b' },
		{ "rate", required_argument, NULL, O_RATE },
		{ "seq0", required_argument, NULL, O_SEQ0 },
		{ "dst-mac", required_argument, NULL, O_DMAC },
		{ "src-mac", required_argument, NULL, O_SMAC },
		{ "src-ip", required_argument, NULL, O_SIP },
		{ "dst-ip", required_argument, NULL, O_DIP },
		{ "verify", no_argument, NULL, O_VERIFY },
		{ "expect-dst", required_argument, NULL, O_EDST },
		{ "expect-src", required_argument, NULL, O_ESRC },
		{ "frames", required_argument, NULL, O_FRAMES },
		{ "frame-size", required_argument, NULL, O_FSIZE },
		{ "prog", required_argument, NULL, O_PROG },
		{ "ready-file", required_argument, NULL, O_READY },
		{ "headroom", required_argument, NULL, O_HEADROOM },
		{ "prog-delay", required_argument, NULL, O_DELAY },
		{ "hold", no_argument, NULL, O_HOLD },
		{ "bound-file", required_argument, NULL, O_BOUND },
		{ NULL, 0, NULL, 0 },
	};
	struct cfg c = {
		.need_wakeup = 1,
		.xdp_flags = XDP_FLAGS_DRV_MODE,
		.duration = 10,
		.size_min = 64,
		.size_max = 64,
		.batch = 64,
		.frames = 4096,
		.frame_size = 4096,
	};
	struct state s = { .fd = -1, .own_prog_fd = -1 };
	char default_prog[PATH_MAX], exe[PATH_MAX];
	int opt, have_edst = 0, have_esrc = 0, have_smac = 0, xsks = -1, err;
	double deadline;
	ssize_t l;

	if (argc < 2)
		usage();
	for (opt = 0; opt < 3; opt++)
		if (!strcmp(argv[1], mode_names[opt]))
			break;
	if (opt == 3)
		usage();
	c.mode = (enum mode)opt;
	parse_ip("10.10.0.1", c.addrs.ip_src);
	parse_ip("10.10.0.2", c.addrs.ip_dst);
	optind = 2;
	while ((opt = getopt_long(argc, argv, "i:q:czSNn:d:s:b:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'i': c.dev = optarg; break;
		case 'q': c.queue = (__u32)strtoul(optarg, NULL, 0); break;
		case 'c': c.bind_flags = XDP_COPY; break;
		case 'z': c.bind_flags = XDP_ZEROCOPY; break;
		case 'S': c.xdp_flags = XDP_FLAGS_SKB_MODE; break;
		case 'N': c.xdp_flags = XDP_FLAGS_DRV_MODE; break;
		case O_NOWAKE: c.need_wakeup = 0; break;
		case 'n': c.count = strtoull(optarg, NULL, 0); break;
		case 'd': c.duration = atof(optarg); break;
		case 's':
			if (sscanf(optarg, "%u:%u", &c.size_min, &c.size_max) != 2)
				c.size_max = c.size_min = (__u32)strtoul(optarg, NULL, 0);
			break;
		case 'b': c.batch = (__u32)strtoul(optarg, NULL, 0); break;
		case O_RATE: c.rate = atof(optarg); break;
		case O_SEQ0: c.seq0 = strtoull(optarg, NULL, 0); break;
		case O_DMAC: mac_opt(optarg, c.addrs.dst, &c.have_dst); break;
		case O_SMAC: mac_opt(optarg, c.addrs.src, &have_smac); break;
		case O_SIP: parse_ip(optarg, c.addrs.ip_src); break;
		case O_DIP: parse_ip(optarg, c.addrs.ip_dst); break;
		case O_VERIFY: c.verify = 1; break;
		case O_EDST: mac_opt(optarg, c.addrs.dst, &have_edst); break;
		case O_ESRC: mac_opt(optarg, c.addrs.src, &have_esrc); break;
		case O_FRAMES: c.frames = (__u32)strtoul(optarg, NULL, 0); break;
		case O_FSIZE: c.frame_size = (__u32)strtoul(optarg, NULL, 0); break;
		case O_PROG: c.prog_path = optarg; break;
		case O_READY: c.ready_file = optarg; break;
		case O_HEADROOM: c.headroom = (__u32)strtoul(optarg, NULL, 0); break;
		case O_DELAY: c.prog_delay = atof(optarg); break;
		case O_HOLD: c.hold = 1; break;
		case O_BOUND: c.bound_file = optarg; break;
		default: usage();
		}
	}
	if (optind != argc || !c.dev)
		usage();
	c.ifindex = (int)if_nametoindex(c.dev);
	if (!c.ifindex)
		die("no such interface", errno);
	if (c.frame_size != 2048 && c.frame_size != 4096)
		die("--frame-size must be 2048 or 4096", 0);
	if (c.frames < 64 || !c.batch || c.batch > 1024)
		die("--frames must be 64 or more, --batch 1..1024", 0);
	if (c.mode == TXONLY) {
		if (!c.have_dst)
			die("txonly needs --dst-mac", 0);
		if (!have_smac && tf_dev_mac(c.dev, c.addrs.src))
			die("cannot read the MAC address of the interface", errno);
		if (c.size_min < TF_MIN_LEN || c.size_max < c.size_min || c.size_max > c.frame_size)
			die("frame sizes must be 60 bytes or more and fit a UMEM frame", 0);
	}
	if (have_edst != have_esrc)
		die("--expect-dst and --expect-src go together", 0);
	c.check_macs = have_edst;
	s.chk.started = 1;
	s.chk.next_seq = c.seq0;
	if (!c.prog_path) {
		l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (l < 0)
			die("readlink /proc/self/exe", errno);
		exe[l] = 0;
		snprintf(default_prog, sizeof(default_prog), "%s/xdp_xsk.o", dirname(exe));
		c.prog_path = default_prog;
	}

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	setup_socket(&c, &s);
	touch(c.bound_file);
	if (c.hold) {
		double end = now() + c.duration;

		fprintf(stderr, "%s: holding %s queue %u, %s bind, for %.1f s\n", me, c.dev,
			c.queue, bound_mode(&s), c.duration);
		touch(c.ready_file);
		while (!stop && now() < end)
			usleep(10000);
		report(&c, &s);
		xsk_socket__delete(s.xsk);
		xsk_umem__delete(s.umem);
		munmap(s.area, (size_t)c.frames * c.frame_size);
		return 0;
	}
	if (c.prog_delay > 0) {
		double end = now() + c.prog_delay;

		while (!stop && now() < end)
			usleep(10000);
	}
	if (c.mode != TXONLY) {
		xsks = setup_prog(&c, &s);
		err = xsk_socket__update_xskmap(s.xsk, xsks);
		if (err) {
			detach_own_prog(&c, &s);
			die("put the socket into the XSKMAP", err);
		}
	}
	fprintf(stderr, "%s: %s on %s queue %u, %s bind, need_wakeup %s\n", me,
		mode_names[c.mode], c.dev, c.queue, bound_mode(&s), c.need_wakeup ? "on" : "off");
	touch(c.ready_file);

	deadline = now() + c.duration;
	switch (c.mode) {
	case RXDROP:
		run_rxdrop(&c, &s, deadline);
		break;
	case TXONLY:
		run_txonly(&c, &s, deadline);
		drain_tx(&c, &s);
		break;
	case L2FWD:
		run_l2fwd(&c, &s, deadline);
		drain_tx(&c, &s);
		break;
	}
	report(&c, &s);
	detach_own_prog(&c, &s);
	if (xsks >= 0)
		close(xsks);
	xsk_socket__delete(s.xsk);
	xsk_umem__delete(s.umem);
	munmap(s.area, (size_t)c.frames * c.frame_size);
	return 0;
}
