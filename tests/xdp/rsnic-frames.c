// SPDX-License-Identifier: GPL-2.0
/*
 * rsnic-frames: test frames (testframe.h) on a packet socket, for rsnic's XDP tests: send
 * them, or capture and check them byte for byte. (A C program: a Python interpreter takes
 * seconds to start in the TCG VM.)
 *
 *   rsnic-frames send DEV --dst MAC [--src MAC] [-n COUNT] [--seq0 N] [-s MIN[:MAX]]
 *                [--encap] [--src-ip A] [--dst-ip A]
 *       Sends COUNT test frames from DEV, bypassing the qdisc; a full TX queue (ENOBUFS,
 *       EAGAIN, EBUSY) is retried, so every frame is sent. Sizes MIN + (seq * 37) %
 *       (MAX - MIN + 1) (default 60:1400). --encap wraps each frame in the encapsulation
 *       of progs/xdp_encap.h with a trailer of seq % 41 bytes, for xdp_pass_adjust to strip.
 *       Prints "sent=N bytes=N" (bytes as sent, outer headers included).
 *
 *   rsnic-frames capture DEV -n COUNT [-t SECONDS] [--expect-dst MAC --expect-src MAC]
 *                [--seq0 N] [--src-ip A] [--dst-ip A] [--ready-file PATH]
 *       Receives on DEV (what the stack received, not what DEV sent) until COUNT test
 *       frames arrived or SECONDS (10) passed, checking each against the frame rebuilt from
 *       its sequence number (with the MAC addresses given, or its own). Prints "frames=N
 *       mismatches=N gaps=N reordered=N foreign=N encap=N bytes=N first_seq=N last_seq=N";
 *       encap counts frames that still carry the test encapsulation.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "progs/xdp_encap.h"
#include "testframe.h"

static const char *me = "rsnic-frames";

static void die(const char *what, int err)
{
	if (err)
		fprintf(stderr, "%s: %s: %s\n", me, what, strerror(err));
	else
		fprintf(stderr, "%s: %s\n", me, what);
	exit(1);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: %s send DEV --dst MAC [--src MAC] [-n COUNT] [--seq0 N] [-s MIN[:MAX]]\n"
		"                 [--encap] [--src-ip A] [--dst-ip A]\n"
		"       %s capture DEV -n COUNT [-t SECONDS] [--expect-dst MAC --expect-src MAC]\n"
		"                 [--seq0 N] [--src-ip A] [--dst-ip A] [--ready-file PATH]\n",
		me, me);
	exit(2);
}

/*
 * A MAC address option: --dst and --expect-dst set the same address (the one sent frames
 * carry, or the one captured frames must carry; likewise --src and --expect-src), and the
 * last one given says which (*given for a sender's, *expected, expect set, for a capture's).
 */
static void mac_opt(const char *arg, uint8_t *mac, int *given, int *expected, int expect)
{
	if (tf_parse_mac(arg, mac))
		usage();
	*given = !expect;
	*expected = expect;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int packet_socket(const char *dev)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));

	if (fd < 0)
		die("packet socket", errno);
	sll.sll_ifindex = (int)if_nametoindex(dev);
	if (!sll.sll_ifindex)
		die("no such interface", errno);
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)))
		die("bind the packet socket", errno);
	return fd;
}

int main(int argc, char **argv)
{
	enum { O_DST = 256, O_SRC, O_SEQ0, O_ENCAP, O_SIP, O_DIP, O_EDST, O_ESRC, O_READY };
	static const struct option longopts[] = {
		{ "dst", required_argument, NULL, O_DST },
		{ "src", required_argument, NULL, O_SRC },
		{ "count", required_argument, NULL, 'n' },
		{ "seq0", required_argument, NULL, O_SEQ0 },
		{ "size", required_argument, NULL, 's' },
		{ "encap", no_argument, NULL, O_ENCAP },
		{ "src-ip", required_argument, NULL, O_SIP },
		{ "dst-ip", required_argument, NULL, O_DIP },
		{ "timeout", required_argument, NULL, 't' },
		{ "expect-dst", required_argument, NULL, O_EDST },
		{ "expect-src", required_argument, NULL, O_ESRC },
		{ "ready-file", required_argument, NULL, O_READY },
		{ NULL, 0, NULL, 0 },
	};
	static uint8_t buf[TF_MAX_LEN + 2048], scratch[TF_MAX_LEN + 2048];
	struct tf_addrs a = {};
	struct tf_check chk = {};
	const char *dev, *ready = NULL;
	int send_mode, opt, have_dst = 0, have_src = 0, have_edst = 0, have_esrc = 0, encap = 0;
	unsigned int lo = 60, hi = 1400;
	unsigned long long count = 1000, seq0 = 0, encapped = 0, bytes = 0, seq;
	double timeout = 10;
	int fd;

	if (argc < 3)
		usage();
	if (!strcmp(argv[1], "send"))
		send_mode = 1;
	else if (!strcmp(argv[1], "capture"))
		send_mode = 0;
	else
		usage();
	dev = argv[2];
	inet_pton(AF_INET, "10.10.0.1", a.ip_src);
	inet_pton(AF_INET, "10.10.0.2", a.ip_dst);
	optind = 3;
	while ((opt = getopt_long(argc, argv, "n:s:t:", longopts, NULL)) != -1) {
		switch (opt) {
		case O_DST:
		case O_EDST:
			mac_opt(optarg, a.dst, &have_dst, &have_edst, opt == O_EDST);
			break;
		case O_SRC:
		case O_ESRC:
			mac_opt(optarg, a.src, &have_src, &have_esrc, opt == O_ESRC);
			break;
		case 'n': count = strtoull(optarg, NULL, 0); break;
		case O_SEQ0: seq0 = strtoull(optarg, NULL, 0); break;
		case 's':
			if (sscanf(optarg, "%u:%u", &lo, &hi) != 2)
				hi = lo = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case O_ENCAP: encap = 1; break;
		case O_SIP:
			if (inet_pton(AF_INET, optarg, a.ip_src) != 1)
				usage();
			break;
		case O_DIP:
			if (inet_pton(AF_INET, optarg, a.ip_dst) != 1)
				usage();
			break;
		case 't': timeout = atof(optarg); break;
		case O_READY: ready = optarg; break;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	fd = packet_socket(dev);

	if (send_mode) {
		int one = 1;

		if (!have_dst)
			die("send needs --dst", 0);
		if (lo < TF_MIN_LEN || hi < lo || hi > TF_MAX_LEN)
			die("sizes must be within 60..9000", 0);
		if (!have_src && tf_dev_mac(dev, a.src))
			die("cannot read the interface's MAC address", errno);
		if (setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)))
			die("PACKET_QDISC_BYPASS", errno);
		for (seq = seq0; seq < seq0 + count; seq++) {
			uint32_t len = lo + (uint32_t)((seq * 37) % (hi - lo + 1)), total = len;
			uint8_t *f = buf;
			int tries;

			if (encap) {
				struct encap_hdr h = {
					.magic = htonl(ENCAP_MAGIC),
					.trailer_len = htons((uint16_t)(seq % 41)),
				};

				memcpy(buf, a.dst, 6);
				memcpy(buf + 6, a.src, 6);
				buf[12] = ENCAP_ETH_P >> 8;
				buf[13] = ENCAP_ETH_P & 0xff;
				memcpy(buf + 14, &h, sizeof(h));
				f = buf + ENCAP_HLEN;
				memset(f + len, 0xee, seq % 41);
				total = (uint32_t)(ENCAP_HLEN + len + seq % 41);
			}
			tf_build(f, len, seq, &a);
			for (tries = 0;; tries++) {
				if (send(fd, buf, total, 0) == (ssize_t)total)
					break;
				if ((errno != ENOBUFS && errno != EAGAIN && errno != EBUSY) || tries > 20000)
					die("send", errno);
				usleep(500);
			}
			bytes += total;
		}
		printf("sent=%llu bytes=%llu\n", count, bytes);
		return 0;
	}

	if (have_edst != have_esrc)
		die("--expect-dst and --expect-src go together", 0);
	{
		int rcvbuf = 16 << 20;

		setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	}
	if (ready) {
		FILE *rf = fopen(ready, "w");

		if (rf)
			fclose(rf);
	}
	chk.started = 1;
	chk.next_seq = seq0;
	{
		double end = now() + timeout;

		while (chk.frames < count) {
			struct sockaddr_ll from;
			socklen_t fl = sizeof(from);
			struct pollfd p = { .fd = fd, .events = POLLIN };
			double left = end - now();
			ssize_t n;

			if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) <= 0)
				break;
			n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
			if (n < 0 || from.sll_pkttype == PACKET_OUTGOING)
				continue;
			if (n >= (ssize_t)(14 + sizeof(struct encap_hdr)) &&
			    buf[12] == (ENCAP_ETH_P >> 8) && buf[13] == (ENCAP_ETH_P & 0xff) &&
			    !memcmp(buf + 14, "RXEN", 4)) {
				encapped++;
				continue;
			}
			tf_check_frame(&chk, buf, (uint32_t)n, &a, have_edst, scratch);
		}
	}
	printf("frames=%llu mismatches=%llu gaps=%llu reordered=%llu foreign=%llu encap=%llu "
	       "bytes=%llu first_seq=%llu last_seq=%llu\n",
	       (unsigned long long)chk.frames, (unsigned long long)chk.mismatches,
	       (unsigned long long)chk.gaps, (unsigned long long)chk.reordered,
	       (unsigned long long)chk.foreign, encapped, (unsigned long long)chk.bytes,
	       (unsigned long long)(chk.frames ? chk.first_seq : seq0),
	       (unsigned long long)(chk.frames ? chk.last_seq : seq0));
	return 0;
}
