// SPDX-License-Identifier: GPL-2.0
/*
 * rsnic-xdp: attaches, replaces, detaches and reads rsnic's test XDP programs
 * (tests/xdp/progs), for what "ip link set dev DEV xdp..." cannot do: set a program's
 * read-only configuration before it is loaded (redirect target, MAC rewrite), fill its
 * devmap, replace the attached program atomically, and read its packet counters.
 *
 *   rsnic-xdp attach DEV PROG.o [--mode drv|skb] [--replace]
 *                    [--redirect-dev NAME | --redirect-ifindex N] [--devmap]
 *                    [--dst-mac MAC --src-mac MAC]
 *   rsnic-xdp detach DEV [--mode drv|skb]
 *   rsnic-xdp count DEV [--mode drv|skb]
 *   rsnic-xdp query DEV
 *   rsnic-xdp features DEV
 *   rsnic-xdp rxhash DEV [--seconds S] [--ready-file PATH] [--prog sk_rxhash.o]
 *
 * attach fails if a program is attached in that mode already, unless --replace (then the
 * old program is swapped for the new one in one step, XDP_FLAGS_REPLACE). count prints
 * "packets=N bytes=N acted=N prog=NAME id=N mode=M", the sums over the CPUs of the
 * attached program's "counts" map (xdp_count.h); query prints "mode=M id=N prog=NAME" or
 * "mode=none". features prints what the device offers, from the netdev generic netlink
 * family: "xdp=F,... xsk=F,... zc_max_segs=N" with the flag names of the netdev spec
 * (basic, redirect, ndo-xmit, xsk-zerocopy, hw-offload, rx-sg, ndo-xmit-sg; xsk:
 * tx-timestamp, tx-checksum), "-" for none; zc_max_segs is 0 unless the kernel reports it
 * (it does for zero-copy capable devices). rxhash records, until SIGINT/SIGTERM or S
 * seconds (60), the RSS hash (skb->hash) the driver set on each IPv4 UDP packet DEV
 * receives, with the socket filter sk_rxhash.o (beside the binary) on a packet socket, and
 * prints a line per UDP source port, "sport=P hash=0xH hashed=N nohash=N mismatch=N" (the
 * first nonzero hash of the flow, packets with it, without a hash, with another one), then
 * "rxhash: packets=N hashed=N nohash=N mismatch=N flows=N"; --ready-file is written once
 * the filter is attached. The default mode is drv (native XDP). Errors name the errno.
 */
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/genetlink.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <libgen.h>
#include <limits.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <poll.h>
#include <signal.h>
#include <time.h>

#include "progs/sk_rxhash.h"
#include "progs/xdp_count.h"

#define ETH_ALEN 6

static const char *prog_name = "rsnic-xdp";

static void usage(void)
{
	fprintf(stderr,
		"usage: %s attach DEV PROG.o [--mode drv|skb] [--replace]\n"
		"                 [--redirect-dev NAME | --redirect-ifindex N] [--devmap]\n"
		"                 [--dst-mac MAC --src-mac MAC]\n"
		"       %s detach DEV [--mode drv|skb]\n"
		"       %s count DEV [--mode drv|skb]\n"
		"       %s query DEV\n"
		"       %s features DEV\n"
		"       %s rxhash DEV [--seconds S] [--ready-file PATH] [--prog sk_rxhash.o]\n",
		prog_name, prog_name, prog_name, prog_name, prog_name, prog_name);
	exit(2);
}

static const char *errno_name(int e)
{
	switch (e) {
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EINVAL: return "EINVAL";
	case EBUSY: return "EBUSY";
	case EEXIST: return "EEXIST";
	case ENOENT: return "ENOENT";
	case ENODEV: return "ENODEV";
	case EPERM: return "EPERM";
	case ENOMEM: return "ENOMEM";
	case ERANGE: return "ERANGE";
	case E2BIG: return "E2BIG";
	case EACCES: return "EACCES";
	default: return "errno";
	}
}

static void die_err(int err, const char *fmt, const char *a, const char *b)
{
	if (err < 0)
		err = -err;
	fprintf(stderr, "%s: ", prog_name);
	fprintf(stderr, fmt, a, b);
	fprintf(stderr, ": %s (%s %d)\n", strerror(err), errno_name(err), err);
	exit(1);
}

static void die(const char *fmt, const char *a)
{
	fprintf(stderr, "%s: ", prog_name);
	fprintf(stderr, fmt, a);
	fputc('\n', stderr);
	exit(1);
}

static int ifindex_of(const char *dev)
{
	unsigned int i = if_nametoindex(dev);

	if (!i)
		die_err(errno, "no interface %s%s", dev, "");
	return (int)i;
}

static int parse_mac(const char *s, unsigned char *mac)
{
	unsigned int b[ETH_ALEN];
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		return -1;
	for (i = 0; i < ETH_ALEN; i++) {
		if (b[i] > 0xff)
			return -1;
		mac[i] = (unsigned char)b[i];
	}
	return 0;
}

static __u32 mode_flags(const char *mode)
{
	if (!strcmp(mode, "drv"))
		return XDP_FLAGS_DRV_MODE;
	if (!strcmp(mode, "skb"))
		return XDP_FLAGS_SKB_MODE;
	die("unknown mode '%s' (drv or skb)", mode);
	return 0;
}

/* The id of the program attached to ifindex in the mode of flags (0: none). */
static __u32 attached_id(int ifindex, __u32 flags, const char *dev)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int err = bpf_xdp_query(ifindex, 0, &q);

	if (err)
		die_err(err, "query XDP on %s%s", dev, "");
	return flags & XDP_FLAGS_SKB_MODE ? q.skb_prog_id : q.drv_prog_id;
}

/*
 * Sets a read-only variable of the object's .rodata before load. The variables are
 * declared "volatile const" in the program; their offsets come from the BTF datasec.
 */
static void set_rodata(struct bpf_object *obj, const char *var, const void *val, size_t len)
{
	struct bpf_map *map;
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_type *sec;
	const struct btf_var_secinfo *vs;
	size_t size;
	char *data;
	int id, i;

	bpf_object__for_each_map(map, obj) {
		if (strstr(bpf_map__name(map), ".rodata"))
			break;
	}
	if (!map || !btf)
		die("the program has no read-only variable '%s'", var);
	id = btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC);
	if (id < 0)
		die("the program's BTF has no .rodata section (for '%s')", var);
	sec = btf__type_by_id(btf, id);
	vs = btf_var_secinfos(sec);
	for (i = 0; i < btf_vlen(sec); i++, vs++) {
		const struct btf_type *t = btf__type_by_id(btf, vs->type);

		if (strcmp(btf__name_by_offset(btf, t->name_off), var))
			continue;
		if (vs->size != len)
			die("read-only variable '%s' has an unexpected size", var);
		data = (char *)bpf_map__initial_value(map, &size);
		if (!data || vs->offset + len > size)
			die("cannot set read-only variable '%s'", var);
		memcpy(data + vs->offset, val, len);
		return;
	}
	die("the program has no read-only variable '%s'", var);
}

struct attach_opts {
	const char *mode;
	int replace;
	int redirect_ifindex;
	int devmap;
	int have_dst, have_src;
	unsigned char dst[ETH_ALEN], src[ETH_ALEN];
};

static int cmd_attach(const char *dev, const char *path, struct attach_opts *o)
{
	__u32 flags = mode_flags(o->mode);
	int ifindex = ifindex_of(dev);
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct bpf_map *devmap;
	LIBBPF_OPTS(bpf_xdp_attach_opts, aopts);
	__u32 old_id = 0, one = 1, zero = 0;
	int fd, err, old_fd = -1;

	obj = bpf_object__open_file(path, NULL);
	if (!obj)
		die_err(errno, "open %s%s", path, "");
	prog = bpf_object__next_program(obj, NULL);
	if (!prog)
		die("%s has no program", path);
	if (o->redirect_ifindex)
		set_rodata(obj, "redirect_ifindex", &o->redirect_ifindex, sizeof(__u32));
	if (o->devmap)
		set_rodata(obj, "use_devmap", &one, sizeof(one));
	if (o->have_dst != o->have_src)
		die("%s", "--dst-mac and --src-mac go together");
	if (o->have_dst) {
		set_rodata(obj, "rewrite_macs", &one, sizeof(one));
		set_rodata(obj, "new_dst", o->dst, ETH_ALEN);
		set_rodata(obj, "new_src", o->src, ETH_ALEN);
	}
	err = bpf_object__load(obj);
	if (err)
		die_err(err, "load %s%s", path, "");
	fd = bpf_program__fd(prog);
	if (o->devmap) {
		devmap = bpf_object__find_map_by_name(obj, "tx_port");
		if (!devmap)
			die("%s has no devmap tx_port", path);
		err = bpf_map_update_elem(bpf_map__fd(devmap), &zero, &o->redirect_ifindex, 0);
		if (err)
			die_err(errno, "put ifindex into the devmap of %s%s", path, "");
	}

	if (o->replace) {
		old_id = attached_id(ifindex, flags, dev);
		if (!old_id)
			die("--replace: no program attached to %s in that mode", dev);
		old_fd = bpf_prog_get_fd_by_id(old_id);
		if (old_fd < 0)
			die_err(errno, "get the attached program of %s%s", dev, "");
		aopts.old_prog_fd = old_fd;
		flags |= XDP_FLAGS_REPLACE;
	} else {
		flags |= XDP_FLAGS_UPDATE_IF_NOEXIST;
	}
	err = bpf_xdp_attach(ifindex, fd, flags, &aopts);
	if (err) {
		char what[256];

		snprintf(what, sizeof(what), "%s (%s mode)", bpf_program__name(prog), o->mode);
		die_err(err, "attach %s to %s", what, dev);
	}
	printf("attached %s id %u to %s (%s)%s\n", bpf_program__name(prog),
	       attached_id(ifindex, flags, dev), dev, o->mode, old_id ? ", replacing" : "");
	if (old_fd >= 0)
		close(old_fd);
	bpf_object__close(obj);
	return 0;
}

static int cmd_detach(const char *dev, const char *mode)
{
	__u32 flags = mode_flags(mode);
	int ifindex = ifindex_of(dev);
	__u32 id = attached_id(ifindex, flags, dev);
	int err;

	if (!id) {
		printf("nothing attached to %s (%s)\n", dev, mode);
		return 0;
	}
	err = bpf_xdp_detach(ifindex, flags, NULL);
	if (err)
		die_err(err, "detach XDP from %s%s", dev, "");
	printf("detached id %u from %s (%s)\n", id, dev, mode);
	return 0;
}

/* Name of program id into name (BPF_OBJ_NAME_LEN), and its "counts" map fd (-1: none). */
static int prog_counts_fd(__u32 id, char *name, const char *dev)
{
	struct bpf_prog_info info = {};
	struct bpf_map_info minfo;
	__u32 len = sizeof(info), mlen, map_ids[16], i;
	int fd, mfd;

	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		die_err(errno, "get the program attached to %s%s", dev, "");
	info.nr_map_ids = 16;
	info.map_ids = (__u64)(unsigned long)map_ids;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		die_err(errno, "read the program info of %s%s", dev, "");
	close(fd);
	snprintf(name, BPF_OBJ_NAME_LEN, "%s", info.name);
	for (i = 0; i < info.nr_map_ids && i < 16; i++) {
		mfd = bpf_map_get_fd_by_id(map_ids[i]);
		if (mfd < 0)
			continue;
		memset(&minfo, 0, sizeof(minfo));
		mlen = sizeof(minfo);
		if (!bpf_obj_get_info_by_fd(mfd, &minfo, &mlen) && !strcmp(minfo.name, "counts") &&
		    minfo.value_size == sizeof(struct xdp_count))
			return mfd;
		close(mfd);
	}
	return -1;
}

static int cmd_count(const char *dev, const char *mode)
{
	__u32 flags = mode_flags(mode);
	int ifindex = ifindex_of(dev);
	__u32 id = attached_id(ifindex, flags, dev), key = 0;
	char name[BPF_OBJ_NAME_LEN];
	struct xdp_count *vals, sum = {};
	int ncpus, mfd, i;

	if (!id)
		die("no XDP program attached to %s in that mode", dev);
	mfd = prog_counts_fd(id, name, dev);
	if (mfd < 0)
		die("the program attached to %s has no counts map", dev);
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0)
		die_err(ncpus, "count the possible CPUs%s%s", "", "");
	vals = calloc(ncpus, sizeof(*vals));
	if (!vals)
		die("%s", "out of memory");
	if (bpf_map_lookup_elem(mfd, &key, vals))
		die_err(errno, "read the counts of %s%s", dev, "");
	for (i = 0; i < ncpus; i++) {
		sum.packets += vals[i].packets;
		sum.bytes += vals[i].bytes;
		sum.acted += vals[i].acted;
	}
	printf("packets=%llu bytes=%llu acted=%llu prog=%s id=%u mode=%s\n",
	       (unsigned long long)sum.packets, (unsigned long long)sum.bytes,
	       (unsigned long long)sum.acted, name, id, mode);
	free(vals);
	close(mfd);
	return 0;
}

static int cmd_query(const char *dev)
{
	int ifindex = ifindex_of(dev);
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	char name[BPF_OBJ_NAME_LEN] = "";
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int err, fd;

	err = bpf_xdp_query(ifindex, 0, &q);
	if (err)
		die_err(err, "query XDP on %s%s", dev, "");
	if (!q.prog_id) {
		printf("mode=none\n");
		return 0;
	}
	fd = bpf_prog_get_fd_by_id(q.prog_id);
	if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
		snprintf(name, sizeof(name), "%s", info.name);
	if (fd >= 0)
		close(fd);
	printf("mode=%s id=%u prog=%s\n",
	       q.attach_mode == XDP_ATTACHED_DRV   ? "drv" :
	       q.attach_mode == XDP_ATTACHED_SKB   ? "skb" :
	       q.attach_mode == XDP_ATTACHED_HW    ? "hw" :
	       q.attach_mode == XDP_ATTACHED_MULTI ? "multi" : "?",
	       q.prog_id, name);
	return 0;
}

/*
 * features: the netdev generic netlink family's dev-get (uapi linux/netdev.h of 6.3 and
 * later; the build host's headers may be older, so the numbers are here).
 */
#define NETDEV_CMD_DEV_GET 1
#define NETDEV_A_DEV_IFINDEX 1
#define NETDEV_A_DEV_XDP_FEATURES 3
#define NETDEV_A_DEV_XDP_ZC_MAX_SEGS 4
#define NETDEV_A_DEV_XSK_FEATURES 6

struct nl_req {
	struct nlmsghdr nh;
	struct genlmsghdr gh;
	char attrs[64];
};

static void nl_put(struct nl_req *r, __u16 type, const void *data, __u16 len)
{
	struct nlattr *a = (struct nlattr *)((char *)r + NLMSG_ALIGN(r->nh.nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	r->nh.nlmsg_len = NLMSG_ALIGN(r->nh.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

/*
 * Sends on fd a request to generic netlink family type: command cmd with one attribute (attr,
 * len bytes at data); calls cb for each attribute of the answer. Returns 0 or -errno.
 */
static int nl_call(int fd, __u16 type, __u8 cmd, __u16 attr, const void *data, __u16 len,
		   void (*cb)(const struct nlattr *, void *), void *arg)
{
	static char buf[8192];
	struct nl_req r;
	struct nlmsghdr *nh;
	ssize_t n;

	memset(&r, 0, sizeof(r));
	r.nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r.nh.nlmsg_type = type;
	r.nh.nlmsg_flags = NLM_F_REQUEST;
	r.gh.cmd = cmd;
	r.gh.version = 1;
	nl_put(&r, attr, data, len);
	if (send(fd, &r, r.nh.nlmsg_len, 0) < 0)
		return -errno;
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0)
		return -errno;
	for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, n); nh = NLMSG_NEXT(nh, n)) {
		struct nlattr *a;
		int len;

		if (nh->nlmsg_type == NLMSG_ERROR) {
			int err = ((struct nlmsgerr *)NLMSG_DATA(nh))->error;

			if (err)
				return err;
			continue;
		}
		len = nh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
		a = (struct nlattr *)((char *)NLMSG_DATA(nh) + GENL_HDRLEN);
		while (len >= (int)NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len) {
			cb(a, arg);
			len -= NLA_ALIGN(a->nla_len);
			a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
		}
	}
	return 0;
}

static void family_id_cb(const struct nlattr *a, void *arg)
{
	if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_FAMILY_ID)
		memcpy(arg, (const char *)a + NLA_HDRLEN, sizeof(__u16));
}

struct dev_features {
	__u64 xdp, xsk;
	__u32 zc_max_segs;
};

static void features_cb(const struct nlattr *a, void *arg)
{
	struct dev_features *f = arg;
	const char *d = (const char *)a + NLA_HDRLEN;

	switch (a->nla_type & NLA_TYPE_MASK) {
	case NETDEV_A_DEV_XDP_FEATURES:
		memcpy(&f->xdp, d, sizeof(f->xdp));
		break;
	case NETDEV_A_DEV_XSK_FEATURES:
		memcpy(&f->xsk, d, sizeof(f->xsk));
		break;
	case NETDEV_A_DEV_XDP_ZC_MAX_SEGS:
		memcpy(&f->zc_max_segs, d, sizeof(f->zc_max_segs));
		break;
	}
}

static void print_flags(const char *key, __u64 v, const char *const *names, int n)
{
	int i, first = 1;

	printf("%s=", key);
	for (i = 0; i < n; i++) {
		if (v & (1ULL << i)) {
			printf("%s%s", first ? "" : ",", names[i]);
			first = 0;
		}
	}
	if (first)
		printf("-");
}

static int cmd_features(const char *dev)
{
	static const char *const xdp_names[] = { "basic", "redirect", "ndo-xmit", "xsk-zerocopy",
						 "hw-offload", "rx-sg", "ndo-xmit-sg" };
	static const char *const xsk_names[] = { "tx-timestamp", "tx-checksum" };
	__u32 ifindex = (__u32)ifindex_of(dev);
	struct dev_features f = {};
	__u16 id = 0;
	int fd, err;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		die_err(errno, "open a generic netlink socket%s%s", "", "");
	err = nl_call(fd, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_NAME, "netdev",
		      sizeof("netdev"), family_id_cb, &id);
	if (err || !id)
		die_err(err ? err : ENOENT, "find the netdev netlink family%s%s", "", "");
	err = nl_call(fd, id, NETDEV_CMD_DEV_GET, NETDEV_A_DEV_IFINDEX, &ifindex, sizeof(ifindex),
		      features_cb, &f);
	if (err)
		die_err(err, "netdev dev-get for %s%s", dev, "");
	close(fd);
	print_flags("xdp", f.xdp, xdp_names, 7);
	print_flags(" xsk", f.xsk, xsk_names, 2);
	printf(" zc_max_segs=%u\n", f.zc_max_segs);
	return 0;
}

static volatile sig_atomic_t rxhash_stop;

static void on_rxhash_signal(int sig)
{
	(void)sig;
	rxhash_stop = 1;
}

static int cmd_rxhash(const char *dev, double seconds, const char *ready, const char *path)
{
	char def[PATH_MAX], exe[PATH_MAX];
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IP) };
	struct rxhash_flow f;
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct bpf_map *map;
	unsigned long long packets = 0, hashed = 0, nohash = 0, mismatch = 0, flows = 0;
	struct timespec t0, t;
	int fd, pfd, mfd, err;
	__u32 key, next, *k = NULL;
	ssize_t l;
	char buf[64];

	if (!path) {
		l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (l < 0)
			die_err(errno, "readlink %s%s", "/proc/self/exe", "");
		exe[l] = 0;
		snprintf(def, sizeof(def), "%s/sk_rxhash.o", dirname(exe));
		path = def;
	}
	obj = bpf_object__open_file(path, NULL);
	if (!obj)
		die_err(errno, "open %s%s", path, "");
	err = bpf_object__load(obj);
	if (err)
		die_err(err, "load %s%s", path, "");
	prog = bpf_object__find_program_by_name(obj, "sk_rxhash");
	map = bpf_object__find_map_by_name(obj, "flows");
	if (!prog || !map)
		die("%s has no program sk_rxhash or no map flows", path);
	pfd = bpf_program__fd(prog);
	mfd = bpf_map__fd(map);
	fd = socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_IP));
	if (fd < 0)
		die_err(errno, "packet socket%s%s", "", "");
	sll.sll_ifindex = ifindex_of(dev);
	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_BPF, &pfd, sizeof(pfd)))
		die_err(errno, "attach the socket filter%s%s", "", "");
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)))
		die_err(errno, "bind to %s%s", dev, "");
	signal(SIGINT, on_rxhash_signal);
	signal(SIGTERM, on_rxhash_signal);
	if (ready) {
		FILE *r = fopen(ready, "w");

		if (r)
			fclose(r);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!rxhash_stop) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		/* The filter drops every packet for the socket: nothing to read, just wait. */
		poll(&p, 1, 100);
		while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
			;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 >= seconds)
			break;
	}
	close(fd);
	while (!bpf_map_get_next_key(mfd, k, &next)) {
		key = next;
		k = &key;
		if (bpf_map_lookup_elem(mfd, &key, &f))
			continue;
		printf("sport=%u hash=0x%08x hashed=%u nohash=%u mismatch=%u\n", key, f.hash,
		       f.hashed, f.nohash, f.mismatch);
		packets += (unsigned long long)f.hashed + f.nohash + f.mismatch;
		hashed += f.hashed + f.mismatch;
		nohash += f.nohash;
		mismatch += f.mismatch;
		flows++;
	}
	printf("rxhash: packets=%llu hashed=%llu nohash=%llu mismatch=%llu flows=%llu\n", packets,
	       hashed, nohash, mismatch, flows);
	bpf_object__close(obj);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "replace", no_argument, NULL, 'r' },
		{ "redirect-dev", required_argument, NULL, 'D' },
		{ "redirect-ifindex", required_argument, NULL, 'I' },
		{ "devmap", no_argument, NULL, 'M' },
		{ "dst-mac", required_argument, NULL, 'd' },
		{ "src-mac", required_argument, NULL, 's' },
		{ "seconds", required_argument, NULL, 'S' },
		{ "ready-file", required_argument, NULL, 'R' },
		{ "prog", required_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	const char *ready = NULL, *sk_prog = NULL;
	double seconds = 60;
	struct attach_opts o = { .mode = "drv" };
	const char *cmd, *dev;
	int c;

	if (argc < 3)
		usage();
	cmd = argv[1];
	dev = argv[2];
	optind = 3;
	if (!strcmp(cmd, "attach")) {
		if (argc < 4)
			usage();
		optind = 4;
	}
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			o.mode = optarg;
			break;
		case 'r':
			o.replace = 1;
			break;
		case 'D':
			o.redirect_ifindex = ifindex_of(optarg);
			break;
		case 'I':
			o.redirect_ifindex = atoi(optarg);
			if (o.redirect_ifindex <= 0)
				die("bad ifindex '%s'", optarg);
			break;
		case 'M':
			o.devmap = 1;
			break;
		case 'd':
			if (parse_mac(optarg, o.dst))
				die("bad MAC '%s'", optarg);
			o.have_dst = 1;
			break;
		case 's':
			if (parse_mac(optarg, o.src))
				die("bad MAC '%s'", optarg);
			o.have_src = 1;
			break;
		case 'S':
			seconds = atof(optarg);
			break;
		case 'R':
			ready = optarg;
			break;
		case 'P':
			sk_prog = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (o.devmap && !o.redirect_ifindex)
		die("%s", "--devmap needs --redirect-dev or --redirect-ifindex");

	if (!strcmp(cmd, "attach"))
		return cmd_attach(dev, argv[3], &o);
	if (!strcmp(cmd, "detach"))
		return cmd_detach(dev, o.mode);
	if (!strcmp(cmd, "count"))
		return cmd_count(dev, o.mode);
	if (!strcmp(cmd, "query"))
		return cmd_query(dev);
	if (!strcmp(cmd, "features"))
		return cmd_features(dev);
	if (!strcmp(cmd, "rxhash"))
		return cmd_rxhash(dev, seconds, ready, sk_prog);
	usage();
	return 2;
}
