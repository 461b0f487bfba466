// SPDX-License-Identifier: GPL-2.0
/*
 * Out-of-line versions of static inline kernel functions used by rsnic's Rust abstractions,
 * and rsnic's module parameters.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/netdevice.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/skbuff.h>
#include <linux/platform_device.h>
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/io.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <net/ip6_checksum.h>
#include <linux/bottom_half.h>
#include <linux/preempt.h>
#include <linux/workqueue.h>
#include <linux/hrtimer.h>
#include <linux/completion.h>
#include <linux/jiffies.h>
#include <linux/dim.h>
#include <linux/ktime.h>
#include <linux/timekeeping.h>
#include <linux/delay.h>
#include <net/page_pool/helpers.h>
#include <net/xdp.h>
#include <net/devlink.h>
#include <linux/filter.h>
#include <linux/bpf.h>
#include <linux/bpf_trace.h>
#include <net/xdp_sock_drv.h>
#include <linux/debugfs.h>
#include <linux/uaccess.h>
#include <linux/seq_file.h>
#include <linux/pci.h>
#include <linux/interrupt.h>
#include "rsnic_helpers.h"

void *rsnic_helper_netdev_priv(const struct net_device *dev)
{
	return netdev_priv(dev);
}

void rsnic_helper_eth_hw_addr_random(struct net_device *dev)
{
	eth_hw_addr_random(dev);
}

void rsnic_helper_eth_hw_addr_set(struct net_device *dev, const u8 *addr)
{
	eth_hw_addr_set(dev, addr);
}

bool rsnic_helper_netif_carrier_ok(const struct net_device *dev)
{
	return netif_carrier_ok(dev);
}

bool rsnic_helper_netif_running(const struct net_device *dev)
{
	return netif_running(dev);
}

void rsnic_helper_consume_skb(struct sk_buff *skb)
{
	consume_skb(skb);
}

void rsnic_helper_dev_hold(struct net_device *dev)
{
	dev_hold(dev);
}

void rsnic_helper_dev_put(struct net_device *dev)
{
	dev_put(dev);
}

void rsnic_helper_kfree_skb_reason(struct sk_buff *skb, enum skb_drop_reason reason)
{
	kfree_skb_reason(skb, reason);
}

struct netdev_queue *rsnic_helper_netdev_get_tx_queue(const struct net_device *dev,
						      unsigned int index)
{
	return netdev_get_tx_queue(dev, index);
}

unsigned int rsnic_helper_num_tx_queues(const struct net_device *dev)
{
	return dev->num_tx_queues;
}

/* Offloads a device supports, all on and user-switchable (ethtool -K). */
void rsnic_helper_set_offloads(struct net_device *dev, bool sg, bool csum, bool tso, bool rxcsum)
{
	netdev_features_t f = 0;

	if (sg)
		f |= NETIF_F_SG;
	if (csum)
		f |= NETIF_F_IP_CSUM | NETIF_F_IPV6_CSUM;
	if (tso)
		f |= NETIF_F_TSO | NETIF_F_TSO6;
	if (rxcsum)
		f |= NETIF_F_RXCSUM;
	dev->hw_features |= f;
	dev->features |= f;
	dev->vlan_features |= f & ~NETIF_F_RXCSUM;
	/*
	 * The stack holds a TX queue's xmit lock around ndo_start_xmit: the Rust side relies on
	 * it (XmitCtx, TxqCell), so the device must not be lockless-TX.
	 */
	dev->lltx = false;
}

/* Offloads that are available but off by default (ethtool -K turns them on). */
void rsnic_helper_set_offloads_off(struct net_device *dev, bool loopback)
{
	if (loopback)
		dev->hw_features |= NETIF_F_LOOPBACK;
}

/* ntuple steering rules (ethtool -N ... action/context): changeable, on by default. */
void rsnic_helper_set_ntuple(struct net_device *dev)
{
	dev->hw_features |= NETIF_F_NTUPLE;
	dev->features |= NETIF_F_NTUPLE;
}

/* RSS hash of received packets reported to the stack (ethtool -K rxhash): changeable, on. */
void rsnic_helper_set_rxhash(struct net_device *dev)
{
	dev->hw_features |= NETIF_F_RXHASH;
	dev->features |= NETIF_F_RXHASH;
	dev->vlan_features |= NETIF_F_RXHASH;
}

bool rsnic_helper_features_rxhash(u64 features)
{
	return features & NETIF_F_RXHASH;
}

void rsnic_helper_set_unicast_flt(struct net_device *dev)
{
	dev->priv_flags |= IFF_UNICAST_FLT;
}

/*
 * Copies what ndo_set_rx_mode must program: the device address, the flags, and the first
 * uc_cap / mc_cap entries of the unicast and multicast lists (ETH_ALEN bytes each), with each
 * list's full length in *uc_total / *mc_total. The caller holds the address lock
 * (netif_addr_lock_bh), as the core does around ndo_set_rx_mode.
 */
void rsnic_helper_rx_mode_snapshot(const struct net_device *dev, u8 *addr, bool *promisc,
				   bool *allmulti, bool *broadcast, u8 *uc, u32 uc_cap,
				   u32 *uc_total, u8 *mc, u32 mc_cap, u32 *mc_total)
{
	struct netdev_hw_addr *ha;
	u32 n = 0;

	ether_addr_copy(addr, dev->dev_addr);
	*promisc = dev->flags & IFF_PROMISC;
	*allmulti = dev->flags & IFF_ALLMULTI;
	*broadcast = dev->flags & IFF_BROADCAST;
	netdev_for_each_uc_addr(ha, dev) {
		if (n < uc_cap)
			ether_addr_copy(uc + n * ETH_ALEN, ha->addr);
		n++;
	}
	*uc_total = n;
	n = 0;
	netdev_for_each_mc_addr(ha, dev) {
		if (n < mc_cap)
			ether_addr_copy(mc + n * ETH_ALEN, ha->addr);
		n++;
	}
	*mc_total = n;
}

const u8 *rsnic_helper_sockaddr_data(const void *sa)
{
	return (const u8 *)((const struct sockaddr *)sa)->sa_data;
}

bool rsnic_helper_is_valid_ether_addr(const u8 *addr)
{
	return is_valid_ether_addr(addr);
}

/* The address as mlx5e_set_mac sets it: under the address lock, which its rx-mode work reads
 * the address under. */
void rsnic_helper_eth_hw_addr_set_locked(struct net_device *dev, const u8 *addr)
{
	netif_addr_lock_bh(dev);
	eth_hw_addr_set(dev, addr);
	netif_addr_unlock_bh(dev);
}

/*
 * 802.1Q tag offloads: the device inserts the skb's tag on transmit and strips a received
 * one into the completion (NETIF_F_HW_VLAN_CTAG_TX / _RX). On; changeable with ethtool -K
 * txvlan / rxvlan (as mlx5e), or fixed on (as mana, which leaves them out of hw_features).
 */
void rsnic_helper_set_vlan_offloads(struct net_device *dev, bool changeable)
{
	netdev_features_t f = NETIF_F_HW_VLAN_CTAG_TX | NETIF_F_HW_VLAN_CTAG_RX;

	if (changeable)
		dev->hw_features |= f;
	dev->features |= f;
}

bool rsnic_helper_features_rx_vlan(u64 features)
{
	return features & NETIF_F_HW_VLAN_CTAG_RX;
}

/*
 * 802.1Q VLAN filtering by the device (NETIF_F_HW_VLAN_CTAG_FILTER): on, changeable with
 * ethtool -K rx-vlan-filter (as mlx5e); the stack hands each VLAN id over through
 * ndo_vlan_rx_add_vid / ndo_vlan_rx_kill_vid.
 */
void rsnic_helper_set_vlan_filter(struct net_device *dev)
{
	dev->hw_features |= NETIF_F_HW_VLAN_CTAG_FILTER;
	dev->features |= NETIF_F_HW_VLAN_CTAG_FILTER;
}

bool rsnic_helper_features_vlan_filter(u64 features)
{
	return features & NETIF_F_HW_VLAN_CTAG_FILTER;
}

bool rsnic_helper_features_ntuple(u64 features)
{
	return features & NETIF_F_NTUPLE;
}

bool rsnic_helper_features_loopback(u64 features)
{
	return features & NETIF_F_LOOPBACK;
}

bool rsnic_helper_features_rxcsum(u64 features)
{
	return features & NETIF_F_RXCSUM;
}

void rsnic_helper_netif_tx_stop_queue(struct netdev_queue *txq)
{
	netif_tx_stop_queue(txq);
}

void rsnic_helper_netif_tx_start_queue(struct netdev_queue *txq)
{
	netif_tx_start_queue(txq);
}

bool rsnic_helper_netif_xmit_stopped(const struct netdev_queue *txq)
{
	return netif_xmit_stopped(txq);
}

bool rsnic_helper_netdev_tx_sent_queue(struct netdev_queue *txq, unsigned int bytes,
				       bool xmit_more)
{
	return __netdev_tx_sent_queue(txq, bytes, xmit_more);
}

void rsnic_helper_netdev_tx_completed_queue(struct netdev_queue *txq, unsigned int pkts,
					    unsigned int bytes)
{
	netdev_tx_completed_queue(txq, pkts, bytes);
}

void rsnic_helper_netdev_tx_reset_queue(struct netdev_queue *txq)
{
	netdev_tx_reset_queue(txq);
}

bool rsnic_helper_netdev_xmit_more(void)
{
	return netdev_xmit_more();
}

bool rsnic_helper_netif_tx_queue_stopped(const struct netdev_queue *txq)
{
	return netif_tx_queue_stopped(txq);
}

void rsnic_helper_netif_tx_disable(struct net_device *dev)
{
	netif_tx_disable(dev);
}

int rsnic_helper_set_real_num_queues(struct net_device *dev, unsigned int txq, unsigned int rxq)
{
	return netif_set_real_num_queues(dev, txq, rxq);
}

void rsnic_helper_msleep(unsigned int ms)
{
	msleep(ms);
}

void rsnic_helper_usleep_range(unsigned long min_us, unsigned long max_us)
{
	usleep_range(min_us, max_us);
}

struct platform_device *rsnic_helper_platform_device_register(const char *name, int id)
{
	return platform_device_register_simple(name, id, NULL, 0);
}

struct device *rsnic_helper_platform_device_dev(struct platform_device *pdev)
{
	return &pdev->dev;
}

int rsnic_helper_dma_setup(struct device *dev)
{
	return dma_coerce_mask_and_coherent(dev, DMA_BIT_MASK(64));
}

void *rsnic_helper_dma_alloc_coherent(struct device *dev, size_t size, dma_addr_t *dma)
{
	return dma_alloc_coherent(dev, size, dma, GFP_KERNEL);
}

void rsnic_helper_dma_free_coherent(struct device *dev, size_t size, void *cpu, dma_addr_t dma)
{
	dma_free_coherent(dev, size, cpu, dma);
}

dma_addr_t rsnic_helper_dma_map_single(struct device *dev, void *ptr, size_t size, int to_device)
{
	return dma_map_single(dev, ptr, size, to_device ? DMA_TO_DEVICE : DMA_FROM_DEVICE);
}

void rsnic_helper_dma_unmap_single(struct device *dev, dma_addr_t addr, size_t size,
				   int to_device)
{
	dma_unmap_single(dev, addr, size, to_device ? DMA_TO_DEVICE : DMA_FROM_DEVICE);
}

dma_addr_t rsnic_helper_skb_frag_dma_map(struct device *dev, const struct sk_buff *skb,
					 unsigned int frag, unsigned int *len)
{
	const skb_frag_t *f = &skb_shinfo(skb)->frags[frag];

	*len = skb_frag_size(f);
	return skb_frag_dma_map(dev, f, 0, *len, DMA_TO_DEVICE);
}

void rsnic_helper_dma_unmap_page(struct device *dev, dma_addr_t addr, size_t size,
				 int to_device)
{
	dma_unmap_page(dev, addr, size, to_device ? DMA_TO_DEVICE : DMA_FROM_DEVICE);
}

int rsnic_helper_dma_mapping_error(struct device *dev, dma_addr_t addr)
{
	return dma_mapping_error(dev, addr);
}

/*
 * The simulated device's view of host memory (no IOMMU: bus address == physical address).
 * Returns the kernel mapping of [addr, addr + len) when every page of it is RAM in the
 * direct map, NULL otherwise.
 */
void *rsnic_helper_phys_to_virt_checked(u64 addr, size_t len)
{
	u64 pfn, last;

	if (!len || addr + len < addr)
		return NULL;
	last = (addr + len - 1) >> PAGE_SHIFT;
	for (pfn = addr >> PAGE_SHIFT; pfn <= last; pfn++)
		if (!pfn_valid(pfn) || PageHighMem(pfn_to_page(pfn)))
			return NULL;
	return phys_to_virt(addr);
}

void rsnic_helper_dma_wmb(void)
{
	dma_wmb();
}

void rsnic_helper_dma_rmb(void)
{
	dma_rmb();
}

void rsnic_helper_wmb(void)
{
	wmb();
}

void rsnic_helper_local_bh_disable(void)
{
	local_bh_disable();
}

void rsnic_helper_local_bh_enable(void)
{
	local_bh_enable();
}

/*
 * The context ndo_start_xmit runs in, in one call: 2 in hard interrupt or NMI context, 1 with
 * interrupts disabled otherwise (netpoll), 0 in any other context.
 */
int rsnic_helper_xmit_context(void)
{
	if (in_hardirq() || in_nmi())
		return 2;
	return irqs_disabled() ? 1 : 0;
}

/* Interrupts disabled on this CPU (netpoll transmits and polls so). */
bool rsnic_helper_irqs_disabled(void)
{
	return irqs_disabled();
}

struct page_pool *rsnic_helper_page_pool_create(struct device *dma_dev, struct net_device *dev,
						unsigned int pool_size, unsigned int order,
						unsigned int offset, unsigned int max_len,
						bool bidirectional)
{
	struct page_pool_params pp = {
		.flags = PP_FLAG_DMA_MAP | PP_FLAG_DMA_SYNC_DEV,
		.order = order,
		.pool_size = pool_size,
		.nid = NUMA_NO_NODE,
		.dev = dma_dev,
		/* XDP_TX sends received pages back out: the device reads them too. */
		.dma_dir = bidirectional ? DMA_BIDIRECTIONAL : DMA_FROM_DEVICE,
		.offset = offset,
		.max_len = max_len,
		.netdev = dev,
	};

	return page_pool_create(&pp);
}

void rsnic_helper_page_pool_destroy(struct page_pool *pool)
{
	page_pool_destroy(pool);
}

struct page *rsnic_helper_page_pool_alloc(struct page_pool *pool, u64 *dma)
{
	struct page *page = page_pool_alloc_pages(pool, GFP_ATOMIC | __GFP_NOWARN);

	if (page)
		*dma = page_pool_get_dma_addr(page);
	return page;
}

void rsnic_helper_page_pool_put(struct page_pool *pool, struct page *page)
{
	page_pool_put_full_page(pool, page, false);
}

/*
 * An skb around a received page: the packet starts at @offset and is @len bytes long. On
 * failure the page goes back to the pool and NULL is returned.
 */
struct sk_buff *rsnic_helper_rx_build_skb(struct page_pool *pool, struct page *page,
					  unsigned int offset, unsigned int len,
					  unsigned int truesize)
{
	struct sk_buff *skb;

	/* The skb's shared info goes at the end of the page: the packet must end before it. */
	if (unlikely(offset + len + SKB_DATA_ALIGN(sizeof(struct skb_shared_info)) > truesize)) {
		page_pool_put_full_page(pool, page, false);
		return NULL;
	}
	page_pool_dma_sync_for_cpu(pool, page, offset, len);
	skb = napi_build_skb(page_address(page), truesize);
	if (unlikely(!skb)) {
		page_pool_put_full_page(pool, page, false);
		return NULL;
	}
	skb_mark_for_recycle(skb);
	skb_reserve(skb, offset);
	skb_put(skb, len);
	return skb;
}

/*
 * Appends len bytes at offset of a page-pool page to a received skb as its next fragment
 * (RX scatter). On failure (no fragment slot left, or the bytes not inside the page) the
 * page goes back to its pool and false is returned; the skb is unchanged.
 */
bool rsnic_helper_rx_add_frag(struct page_pool *pool, struct sk_buff *skb, struct page *page,
			      unsigned int offset, unsigned int len, unsigned int truesize)
{
	if (unlikely(skb_shinfo(skb)->nr_frags >= MAX_SKB_FRAGS || !len ||
		     offset + len > truesize)) {
		page_pool_put_full_page(pool, page, false);
		return false;
	}
	page_pool_dma_sync_for_cpu(pool, page, offset, len);
	skb_add_rx_frag(skb, skb_shinfo(skb)->nr_frags, page, offset, len, truesize);
	return true;
}

bool rsnic_helper_skb_rx_finish(struct sk_buff *skb, struct net_device *dev, u8 ip_summed,
				u32 csum, u32 hash, int hash_type, u16 queue)
{
	/* csum: CHECKSUM_COMPLETE's sum; 0 (what build_skb left) with the other two. */
	skb->ip_summed = ip_summed;
	skb->csum = (__force __wsum)csum;
	if (hash_type)
		skb_set_hash(skb, hash, hash_type == 2 ? PKT_HASH_TYPE_L4 : PKT_HASH_TYPE_L3);
	skb_record_rx_queue(skb, queue);
	skb->protocol = eth_type_trans(skb, dev);
	return skb->pkt_type == PACKET_MULTICAST || skb->pkt_type == PACKET_BROADCAST;
}

u32 rsnic_helper_skb_checksum(const struct sk_buff *skb, unsigned int off, unsigned int len)
{
	return (__force u32)skb_checksum(skb, off, len, 0);
}

void rsnic_helper_skb_vlan_put_tag(struct sk_buff *skb, u16 tci)
{
	__vlan_hwaccel_put_tag(skb, htons(ETH_P_8021Q), tci);
}

void rsnic_helper_napi_gro_receive(struct napi_struct *napi, struct sk_buff *skb)
{
	napi_gro_receive(napi, skb);
}

struct workqueue_struct *rsnic_helper_alloc_workqueue(const char *name, int id)
{
	return alloc_workqueue("%s%d", WQ_UNBOUND, 1, name, id);
}

void rsnic_helper_flush_workqueue(struct workqueue_struct *wq)
{
	flush_workqueue(wq);
}

void rsnic_helper_destroy_workqueue(struct workqueue_struct *wq)
{
	destroy_workqueue(wq);
}

/* A timer expiring calls its Rust handler (hard interrupt context); it never restarts itself. */
static enum hrtimer_restart rsnic_timer_fn(struct hrtimer *timer)
{
	struct rsnic_timer *t = container_of(timer, struct rsnic_timer, timer);

	t->expired(t);
	return HRTIMER_NORESTART;
}

void rsnic_helper_timer_init(struct rsnic_timer *t, void (*expired)(struct rsnic_timer *t))
{
	hrtimer_init(&t->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	t->timer.function = rsnic_timer_fn;
	t->expired = expired;
}

void rsnic_helper_timer_start(struct rsnic_timer *t, u64 delay_ns)
{
	hrtimer_start(&t->timer, ns_to_ktime(delay_ns), HRTIMER_MODE_REL);
}

void rsnic_helper_timer_cancel(struct rsnic_timer *t)
{
	hrtimer_cancel(&t->timer);
}

/* 1: it was queued and is not any more; 0: it was not queued; -1: its handler is running. */
int rsnic_helper_timer_try_to_cancel(struct rsnic_timer *t)
{
	return hrtimer_try_to_cancel(&t->timer);
}

void rsnic_helper_init_completion(struct completion *c)
{
	init_completion(c);
}

void rsnic_helper_reinit_completion(struct completion *c)
{
	reinit_completion(c);
}

void rsnic_helper_complete(struct completion *c)
{
	complete(c);
}

bool rsnic_helper_wait_for_completion_timeout_ms(struct completion *c, unsigned int ms)
{
	return wait_for_completion_timeout(c, msecs_to_jiffies(ms)) != 0;
}

bool rsnic_helper_try_wait_for_completion(struct completion *c)
{
	return try_wait_for_completion(c);
}

u64 rsnic_helper_ktime_get_ns(void)
{
	return ktime_get_ns();
}

/*
 * DIM of one CQ direction, periods restarting on events (DIM_CQ_PERIOD_MODE_START_FROM_EQE,
 * mlx5e's default), starting at the default profile.
 */
void rsnic_helper_dim_init(struct dim *dim, void (*work)(struct work_struct *w))
{
	memset(dim, 0, sizeof(*dim));
	INIT_WORK(&dim->work, work);
	dim->mode = DIM_CQ_PERIOD_MODE_START_FROM_EQE;
	dim->profile_ix = NET_DIM_DEF_PROFILE_EQE;
	dim->state = DIM_START_MEASURE;
}

/* Back to the default profile and a new measurement; the work item stays as it is. */
void rsnic_helper_dim_restart(struct dim *dim)
{
	memset(&dim->prev_stats, 0, sizeof(dim->prev_stats));
	memset(&dim->start_sample, 0, sizeof(dim->start_sample));
	memset(&dim->measuring_sample, 0, sizeof(dim->measuring_sample));
	dim->profile_ix = NET_DIM_DEF_PROFILE_EQE;
	dim->tune_state = DIM_PARKING_ON_TOP;
	dim->steps_right = 0;
	dim->steps_left = 0;
	dim->tired = 0;
	dim->state = DIM_START_MEASURE;
}

/* One sample (the cumulative counters at the end of a NAPI poll), as mlx5e's rearm does. */
void rsnic_helper_net_dim(struct dim *dim, u16 events, u64 packets, u64 bytes)
{
	struct dim_sample s = {};

	dim_update_sample(events, packets, bytes, &s);
	net_dim(dim, s);
}

struct dim *rsnic_helper_dim_of_work(struct work_struct *w)
{
	return container_of(w, struct dim, work);
}

void rsnic_helper_dim_profile(struct dim *dim, bool tx, u16 *usec, u16 *pkts)
{
	struct dim_cq_moder m = tx ? net_dim_get_tx_moderation(dim->mode, dim->profile_ix) :
				     net_dim_get_rx_moderation(dim->mode, dim->profile_ix);

	*usec = m.usec;
	*pkts = m.pkts;
}

void rsnic_helper_dim_default_profile(bool tx, u16 *usec, u16 *pkts)
{
	struct dim_cq_moder m = tx ?
		net_dim_get_def_tx_moderation(DIM_CQ_PERIOD_MODE_START_FROM_EQE) :
		net_dim_get_def_rx_moderation(DIM_CQ_PERIOD_MODE_START_FROM_EQE);

	*usec = m.usec;
	*pkts = m.pkts;
}

/* The new profile is applied: measure again (net_dim does nothing until then). */
void rsnic_helper_dim_measure_again(struct dim *dim)
{
	WRITE_ONCE(dim->state, DIM_START_MEASURE);
}

void rsnic_helper_dim_cancel(struct dim *dim)
{
	cancel_work_sync(&dim->work);
}

/* @msg has static storage (a Rust &'static CStr), as NL_SET_ERR_MSG requires. */
void rsnic_helper_extack_msg(struct netlink_ext_ack *extack, const char *msg)
{
	if (extack)
		extack->_msg = msg;
}

/*
 * Both counters rsnic reports; the core preset every counter to ETHTOOL_STAT_NOT_SET and
 * leaves @stats->src alone here.
 */
void rsnic_helper_pause_stats(struct ethtool_pause_stats *stats, u64 tx_frames, u64 rx_frames)
{
	stats->tx_pause_frames = tx_frames;
	stats->rx_pause_frames = rx_frames;
}

/*
 * The IEEE 802.3 MAC counters a device keeps, @v in this order: FramesTransmittedOK,
 * FramesReceivedOK, FrameCheckSequenceErrors, OctetsTransmittedOK, OctetsReceivedOK,
 * MulticastFramesXmittedOK, BroadcastFramesXmittedOK, MulticastFramesReceivedOK,
 * BroadcastFramesReceivedOK, InRangeLengthErrors, OutOfRangeLengthField, FrameTooLongErrors.
 * The others stay "not set" (the struct's fields sit in a struct_group, out of bindgen's
 * easy reach).
 */
void rsnic_helper_eth_mac_stats(struct ethtool_eth_mac_stats *stats, const u64 *v)
{
	stats->FramesTransmittedOK = v[0];
	stats->FramesReceivedOK = v[1];
	stats->FrameCheckSequenceErrors = v[2];
	stats->OctetsTransmittedOK = v[3];
	stats->OctetsReceivedOK = v[4];
	stats->MulticastFramesXmittedOK = v[5];
	stats->BroadcastFramesXmittedOK = v[6];
	stats->MulticastFramesReceivedOK = v[7];
	stats->BroadcastFramesReceivedOK = v[8];
	stats->InRangeLengthErrors = v[9];
	stats->OutOfRangeLengthField = v[10];
	stats->FrameTooLongErrors = v[11];
}

/* The IEEE 802.3 PHY counter (SymbolErrorDuringCarrier, in a struct_group). */
void rsnic_helper_eth_phy_stats(struct ethtool_eth_phy_stats *stats, u64 symbol_errors)
{
	stats->SymbolErrorDuringCarrier = symbol_errors;
}

/* The MAC control counters. */
void rsnic_helper_eth_ctrl_stats(struct ethtool_eth_ctrl_stats *stats, u64 tx, u64 rx,
				 u64 unsupported)
{
	stats->MACControlFramesTransmitted = tx;
	stats->MACControlFramesReceived = rx;
	stats->UnsupportedOpcodesReceived = unsupported;
}

/*
 * The RMON counters of received frames: @v undersize, oversize, fragments, jabbers; the
 * first @buckets (at most ETHTOOL_RMON_HIST_MAX) of @hist. Transmit buckets stay "not set".
 */
void rsnic_helper_rmon_stats(struct ethtool_rmon_stats *stats, const u64 *v, const u64 *hist,
			     size_t buckets)
{
	size_t i;

	stats->undersize_pkts = v[0];
	stats->oversize_pkts = v[1];
	stats->fragments = v[2];
	stats->jabbers = v[3];
	for (i = 0; i < buckets && i < ETHTOOL_RMON_HIST_MAX; i++)
		stats->hist[i] = hist[i];
}

/* Whether the user set the RX flow hash indirection table (IFF_RXFH_CONFIGURED). */
bool rsnic_helper_netif_is_rxfh_configured(const struct net_device *dev)
{
	return netif_is_rxfh_configured(dev);
}

/* The default indirection table's entry @index over @n_rx_rings rings (n_rx_rings > 0). */
u32 rsnic_helper_ethtool_rxfh_indir_default(u32 index, u32 n_rx_rings)
{
	return ethtool_rxfh_indir_default(index, n_rx_rings);
}

void rsnic_helper_netif_napi_add(struct net_device *dev, struct napi_struct *napi,
				 int (*poll)(struct napi_struct *, int))
{
	netif_napi_add(dev, napi, poll);
}

void rsnic_helper_netif_napi_del(struct napi_struct *napi)
{
	netif_napi_del(napi);
}

bool rsnic_helper_napi_schedule(struct napi_struct *napi)
{
	return napi_schedule(napi);
}

bool rsnic_helper_napi_if_scheduled_mark_missed(struct napi_struct *napi)
{
	return napi_if_scheduled_mark_missed(napi);
}

/* An SkBuff reached Drop: the Rust side leaks it and reports the bug loudly. */
void rsnic_helper_warn_skb_leak(void)
{
	WARN_ONCE(1, "rsnic: sk_buff dropped without an explicit consume or drop\n");
}

static unsigned int num_devs = 1;
module_param(num_devs, uint, 0444);
MODULE_PARM_DESC(num_devs, "Number of simulated devices to create (1-8, default 1)");

static unsigned int num_ports = 2;
module_param(num_ports, uint, 0444);
MODULE_PARM_DESC(num_ports,
		 "Ports per simulated device, wired back to back in pairs (2, 4, 6 or 8; default 2)");

static char *family = "mlx5";
module_param(family, charp, 0444);
MODULE_PARM_DESC(family,
		 "Family of each simulated device: mlx5 or mana, or a comma-separated list, one per device (the last repeats; default mlx5)");

static unsigned int tx_timeout_ms = 15000;
module_param(tx_timeout_ms, uint, 0444);
MODULE_PARM_DESC(tx_timeout_ms,
		 "TX watchdog timeout in milliseconds: a queue stopped this long calls ndo_tx_timeout (1000-120000; default 15000, mlx5e's)");

static unsigned int sim_fail_cmd;
module_param(sim_fail_cmd, uint, 0444);
MODULE_PARM_DESC(sim_fail_cmd,
		 "Device host: a ConnectX command opcode that every simulated ConnectX function fails with BAD_PARAM (e.g. 0x104, ENABLE_HCA), to exercise the driver's error path; 0 (default) for none");

static unsigned int sim_fail_req;
module_param(sim_fail_req, uint, 0444);
MODULE_PARM_DESC(sim_fail_req,
		 "Device host: a MANA hardware-channel request code (GDMA or MANA, e.g. 0x4 REGISTER_DEVICE, 0x20008 QUERY_VPORT_CONFIG) that every simulated MANA device fails with STATUS_INVALID_PARAMETER, to exercise the driver's error path; 0 (default) for none");

static bool sim_mpwqe = true;
module_param(sim_mpwqe, bool, 0444);
MODULE_PARM_DESC(sim_mpwqe,
		 "Device host: simulated ConnectX devices report enhanced multi-packet send WQEs in their capabilities (default Y)");

static bool sim_cqe_compression = true;
module_param(sim_cqe_compression, bool, 0444);
MODULE_PARM_DESC(sim_cqe_compression,
		 "Device host: simulated ConnectX devices report basic CQE compression in their capabilities (default Y)");

static unsigned int sim_min_inline;
module_param(sim_min_inline, uint, 0444);
MODULE_PARM_DESC(sim_min_inline,
		 "Device host: the minimum TX inline mode simulated ConnectX devices require (0 none, default; 1 L2; 2 IP; 3 TCP/UDP): WQEs without the headers inline are refused");

unsigned int rsnic_helper_param_sim_min_inline(void)
{
	return sim_min_inline;
}

static unsigned int sim_max_mtu;
module_param(sim_max_mtu, uint, 0444);
MODULE_PARM_DESC(sim_max_mtu,
		 "Device host: the largest port MTU simulated ConnectX devices report (PMTU max_mtu, in hardware bytes: the netdev MTU plus 22), 1522 to 9732; 0 (default) for 9732");

unsigned int rsnic_helper_param_sim_max_mtu(void)
{
	return sim_max_mtu;
}

static bool sim_rsnic_requests = true;
module_param(sim_rsnic_requests, bool, 0444);
MODULE_PARM_DESC(sim_rsnic_requests,
		 "Device host: simulated MANA devices implement and advertise rsnic's own HWC requests (loopback, pause) in QUERY_DEV_CONFIG (default Y); N makes them a real MANA's equal there");

bool rsnic_helper_param_sim_rsnic_requests(void)
{
	return sim_rsnic_requests;
}

static char *host = "pci";
module_param(host, charp, 0444);
MODULE_PARM_DESC(host,
		 "Which devices the driver binds: pci (default) = PCI functions only (a MANA VF 1414:00ba, a ConnectX function, or rsnic's ivshmem device 1af4:1110); kernel = also create simulated devices of the in-kernel device host. num_devs, num_ports, family and sim_* configure the in-kernel host only");

const char *rsnic_helper_param_host(void)
{
	return host ? host : "";
}

unsigned int rsnic_helper_num_online_cpus(void)
{
	return num_online_cpus();
}

unsigned int rsnic_helper_param_num_devs(void)
{
	return num_devs;
}

unsigned int rsnic_helper_param_num_ports(void)
{
	return num_ports;
}

const char *rsnic_helper_param_family(void)
{
	return family ? family : "";
}

unsigned int rsnic_helper_param_tx_timeout_ms(void)
{
	return tx_timeout_ms;
}

unsigned int rsnic_helper_param_sim_fail_cmd(void)
{
	return sim_fail_cmd;
}

unsigned int rsnic_helper_param_sim_fail_req(void)
{
	return sim_fail_req;
}

bool rsnic_helper_param_sim_mpwqe(void)
{
	return sim_mpwqe;
}

bool rsnic_helper_param_sim_cqe_compression(void)
{
	return sim_cqe_compression;
}

/*
 * TSO header preparation for NICs that fill in per-segment lengths and checksums from a
 * pseudo-header sum without the length (MANA): clear the IPv4 total length and header
 * checksum (IPv6: the payload length) and seed the TCP checksum with the pseudo-header
 * sum over the addresses and protocol only. Unshares the header first. Returns 0 or a
 * negative errno; -EPROTONOSUPPORT for a packet that is neither IPv4 nor IPv6 TCP.
 */
int rsnic_helper_skb_tso_pseudo_prep(struct sk_buff *skb)
{
	int err;

	if (!skb_is_gso(skb) || !skb_transport_header_was_set(skb))
		return -EPROTONOSUPPORT;
	err = skb_cow_head(skb, 0);
	if (err)
		return err;
	if (skb->protocol == htons(ETH_P_IP)) {
		struct iphdr *ip = ip_hdr(skb);

		if (ip->protocol != IPPROTO_TCP)
			return -EPROTONOSUPPORT;
		ip->tot_len = 0;
		ip->check = 0;
		tcp_hdr(skb)->check = ~csum_tcpudp_magic(ip->saddr, ip->daddr, 0, IPPROTO_TCP, 0);
	} else if (skb->protocol == htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = ipv6_hdr(skb);

		ip6->payload_len = 0;
		tcp_hdr(skb)->check = ~csum_ipv6_magic(&ip6->saddr, &ip6->daddr, 0, IPPROTO_TCP, 0);
	} else {
		return -EPROTONOSUPPORT;
	}
	return 0;
}

/*
 * XDP: runs @prog on the frame the device wrote at @headroom in @page (a page-pool page of
 * @frame_sz bytes), as a driver's RX path does. Returns the action with the frame's new
 * offset and length in *data_off and *data_len (head and tail adjustments). XDP_REDIRECT is
 * carried out here, inside the xdp_buff's lifetime: on success the page belongs to the
 * target, on failure the exception is traced and RSNIC_XDP_REDIRECT_FAILED returned (the
 * page is still the caller's). ABORTED and unknown actions are traced (unknown ones warned
 * about) and returned as XDP_ABORTED.
 */
u32 rsnic_helper_xdp_run(struct bpf_prog *prog, struct xdp_rxq_info *rxq,
			 struct page_pool *pool, struct page *page, u32 headroom, u32 len,
			 u32 frame_sz, u32 *data_off, u32 *data_len)
{
	void *va = page_address(page);
	struct xdp_buff xdp;
	u32 act;

	page_pool_dma_sync_for_cpu(pool, page, headroom, len);
	xdp_init_buff(&xdp, frame_sz, rxq);
	xdp_prepare_buff(&xdp, va, headroom, len, true);
	act = bpf_prog_run_xdp(prog, &xdp);
	*data_off = xdp.data - va;
	*data_len = xdp.data_end - xdp.data;
	switch (act) {
	case XDP_PASS:
	case XDP_TX:
	case XDP_DROP:
		return act;
	case XDP_REDIRECT:
		if (unlikely(xdp_do_redirect(rxq->dev, &xdp, prog))) {
			trace_xdp_exception(rxq->dev, prog, act);
			return RSNIC_XDP_REDIRECT_FAILED;
		}
		return XDP_REDIRECT;
	default:
		bpf_warn_invalid_xdp_action(rxq->dev, prog, act);
		fallthrough;
	case XDP_ABORTED:
		trace_xdp_exception(rxq->dev, prog, act);
		return XDP_ABORTED;
	}
}

int rsnic_helper_xdp_rxq_reg(struct xdp_rxq_info *rxq, struct net_device *dev, u32 queue,
			     struct page_pool *pool)
{
	int err = xdp_rxq_info_reg(rxq, dev, queue, 0);

	if (err)
		return err;
	err = xdp_rxq_info_reg_mem_model(rxq, MEM_TYPE_PAGE_POOL, pool);
	if (err)
		xdp_rxq_info_unreg(rxq);
	return err;
}

void rsnic_helper_xdp_rxq_unreg(struct xdp_rxq_info *rxq)
{
	xdp_rxq_info_unreg(rxq);
}

void rsnic_helper_bpf_prog_inc(struct bpf_prog *prog)
{
	bpf_prog_inc(prog);
}

void rsnic_helper_bpf_prog_put(struct bpf_prog *prog)
{
	bpf_prog_put(prog);
}

void *rsnic_helper_page_address(struct page *page)
{
	return page_address(page);
}

void rsnic_helper_page_pool_sync_for_device(struct page_pool *pool, u64 dma, u32 len)
{
	dma_sync_single_for_device(pool->p.dev, dma, len, page_pool_get_dma_dir(pool));
}

/*
 * An skb for transmission from a frame redirected to us (as mana_xdp_xmit_fm does): the
 * frame's data from the Ethernet header on, on TX queue @queue. NULL (the frame still the
 * caller's) if no skb could be had.
 */
struct sk_buff *rsnic_helper_xdp_frame_to_skb(struct xdp_frame *frame, struct net_device *dev,
					      u16 queue)
{
	struct sk_buff *skb = xdp_build_skb_from_frame(frame, dev);

	if (unlikely(!skb))
		return NULL;
	/* xdp_build_skb_from_frame() ran eth_type_trans(), which pulled the header. */
	__skb_push(skb, ETH_HLEN);
	skb_set_queue_mapping(skb, queue);
	return skb;
}

void rsnic_helper_skb_set_queue_mapping(struct sk_buff *skb, u16 queue)
{
	skb_set_queue_mapping(skb, queue);
}

void rsnic_helper_netif_tx_lock(struct netdev_queue *txq)
{
	__netif_tx_lock(txq, smp_processor_id());
}

void rsnic_helper_netif_tx_unlock(struct netdev_queue *txq)
{
	__netif_tx_unlock(txq);
}

unsigned int rsnic_helper_smp_processor_id(void)
{
	return raw_smp_processor_id();
}

void rsnic_helper_set_watchdog_timeo(struct net_device *dev, u32 ms)
{
	dev->watchdog_timeo = msecs_to_jiffies(ms);
}

void rsnic_helper_set_xdp_features(struct net_device *dev, u32 features)
{
	xdp_set_features_flag(dev, features);
}

/*
 * AF_XDP zero-copy: the XSK buffer pool of a queue (include/net/xdp_sock_drv.h).
 */
int rsnic_helper_xsk_pool_dma_map(struct xsk_buff_pool *pool, struct device *dev)
{
	return xsk_pool_dma_map(pool, dev, 0);
}

void rsnic_helper_xsk_pool_dma_unmap(struct xsk_buff_pool *pool)
{
	xsk_pool_dma_unmap(pool, 0);
}

u32 rsnic_helper_xsk_pool_rx_frame_size(struct xsk_buff_pool *pool)
{
	return xsk_pool_get_rx_frame_size(pool);
}

u32 rsnic_helper_xsk_pool_headroom(struct xsk_buff_pool *pool)
{
	return xsk_pool_get_headroom(pool);
}

u32 rsnic_helper_xsk_pool_chunk_size(struct xsk_buff_pool *pool)
{
	return xsk_pool_get_chunk_size(pool);
}

/* Registers @rxq for the XSK RQ of queue @queue: memory model XSK buffer pool. */
int rsnic_helper_xsk_rxq_reg(struct xdp_rxq_info *rxq, struct net_device *dev, u32 queue,
			     struct xsk_buff_pool *pool)
{
	int err = xdp_rxq_info_reg(rxq, dev, queue, 0);

	if (err)
		return err;
	err = xdp_rxq_info_reg_mem_model(rxq, MEM_TYPE_XSK_BUFF_POOL, NULL);
	if (err) {
		xdp_rxq_info_unreg(rxq);
		return err;
	}
	xsk_pool_set_rxq_info(pool, rxq);
	return 0;
}

struct xdp_buff *rsnic_helper_xsk_buff_alloc(struct xsk_buff_pool *pool, u64 *dma)
{
	struct xdp_buff *xdp = xsk_buff_alloc(pool);

	if (xdp)
		*dma = xsk_buff_xdp_get_dma(xdp);
	return xdp;
}

void rsnic_helper_xsk_buff_free(struct xdp_buff *xdp)
{
	xsk_buff_free(xdp);
}

/*
 * Runs @prog (if any: without one the frame passes) on the XSK buffer @xdp into which
 * the device wrote @len bytes. As
 * rsnic_helper_xdp_run: XDP_REDIRECT is carried out here (on success the buffer is in the
 * socket's RX ring, or wherever it went); ABORTED and unknown actions are traced.
 */
u32 rsnic_helper_xsk_run(struct bpf_prog *prog, struct xdp_buff *xdp, u32 len)
{
	u32 act;

	xsk_buff_set_size(xdp, len);
	xsk_buff_dma_sync_for_cpu(xdp);
	if (!prog)
		return XDP_PASS;
	act = bpf_prog_run_xdp(prog, xdp);
	switch (act) {
	case XDP_PASS:
	case XDP_TX:
	case XDP_DROP:
		return act;
	case XDP_REDIRECT:
		if (unlikely(xdp_do_redirect(xdp->rxq->dev, xdp, prog))) {
			trace_xdp_exception(xdp->rxq->dev, prog, act);
			return RSNIC_XDP_REDIRECT_FAILED;
		}
		return XDP_REDIRECT;
	default:
		bpf_warn_invalid_xdp_action(xdp->rxq->dev, prog, act);
		fallthrough;
	case XDP_ABORTED:
		trace_xdp_exception(xdp->rxq->dev, prog, act);
		return XDP_ABORTED;
	}
}

/* A copy of the XSK buffer's frame in a new skb (the buffer itself is not freed). */
struct sk_buff *rsnic_helper_xsk_copy_skb(struct napi_struct *napi, struct xdp_buff *xdp)
{
	u32 len = xdp->data_end - xdp->data;
	struct sk_buff *skb = napi_alloc_skb(napi, len);

	if (unlikely(!skb))
		return NULL;
	skb_put_data(skb, xdp->data, len);
	return skb;
}

/* A copy of the XSK buffer's frame as an xdp_frame (for XDP_TX); the buffer is freed. */
struct xdp_frame *rsnic_helper_xsk_to_frame(struct xdp_buff *xdp)
{
	struct xdp_frame *f = xdp_convert_zc_to_xdp_frame(xdp);

	xsk_buff_free(xdp);
	return f;
}

/*
 * The next TX descriptor of the socket, with the bus address and CPU address of its data
 * (synced for the device). false when the TX ring is empty.
 */
bool rsnic_helper_xsk_tx_peek(struct xsk_buff_pool *pool, u64 *dma, void **data, u32 *len)
{
	struct xdp_desc desc;

	if (!xsk_tx_peek_desc(pool, &desc))
		return false;
	*dma = xsk_buff_raw_get_dma(pool, desc.addr);
	*data = xsk_buff_raw_get_data(pool, desc.addr);
	*len = desc.len;
	xsk_buff_raw_dma_sync_for_device(pool, *dma, desc.len);
	return true;
}

void rsnic_helper_xsk_tx_release(struct xsk_buff_pool *pool)
{
	xsk_tx_release(pool);
}

void rsnic_helper_xsk_tx_completed(struct xsk_buff_pool *pool, u32 n)
{
	xsk_tx_completed(pool, n);
}

void rsnic_helper_xsk_need_wakeup(struct xsk_buff_pool *pool, bool rx, bool set)
{
	if (!xsk_uses_need_wakeup(pool))
		return;
	if (rx && set)
		xsk_set_rx_need_wakeup(pool);
	else if (rx)
		xsk_clear_rx_need_wakeup(pool);
	else if (set)
		xsk_set_tx_need_wakeup(pool);
	else
		xsk_clear_tx_need_wakeup(pool);
}

/* debugfs files shown by Rust (rust/debugfs.rs): the seq_file's private data is theirs. */
int rsnic_rust_debugfs_show(struct seq_file *m, void *data);

static int rsnic_debugfs_show(struct seq_file *m, void *unused)
{
	return rsnic_rust_debugfs_show(m, m->private);
}
DEFINE_SHOW_ATTRIBUTE(rsnic_debugfs);

struct dentry *rsnic_helper_debugfs_show_file(const char *name, struct dentry *parent, void *data)
{
	return debugfs_create_file(name, 0444, parent, data, &rsnic_debugfs_fops);
}

/* Write-only debugfs files whose writes Rust parses (rust/debugfs.rs): at most
 * RSNIC_DEBUGFS_STORE_MAX - 1 bytes in one write, copied and NUL-terminated here. */
int rsnic_rust_debugfs_store(void *data, const char *buf, size_t len);

#define RSNIC_DEBUGFS_STORE_MAX 128

static ssize_t rsnic_debugfs_store_write(struct file *file, const char __user *ubuf,
					 size_t len, loff_t *ppos)
{
	char buf[RSNIC_DEBUGFS_STORE_MAX];
	int ret;

	if (*ppos != 0 || len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	ret = rsnic_rust_debugfs_store(file->private_data, buf, len);
	if (ret < 0)
		return ret;
	*ppos += len;
	return len;
}

static const struct file_operations rsnic_debugfs_store_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = rsnic_debugfs_store_write,
};

struct dentry *rsnic_helper_debugfs_store_file(const char *name, struct dentry *parent, void *data)
{
	return debugfs_create_file(name, 0200, parent, data, &rsnic_debugfs_store_fops);
}

u32 *rsnic_helper_ethtool_rxfh_context_indir(struct ethtool_rxfh_context *ctx)
{
	return ethtool_rxfh_context_indir(ctx);
}

u8 *rsnic_helper_ethtool_rxfh_context_key(struct ethtool_rxfh_context *ctx)
{
	return ethtool_rxfh_context_key(ctx);
}

/* PCI (rust/pci.rs) */

void rsnic_helper_pci_driver_init(struct pci_driver *drv, const char *name,
				  const struct pci_device_id *ids,
				  int (*probe)(struct pci_dev *, const struct pci_device_id *),
				  void (*remove)(struct pci_dev *))
{
	memset(drv, 0, sizeof(*drv));
	drv->name = name;
	drv->id_table = ids;
	drv->probe = probe;
	drv->remove = remove;
	/*
	 * Devices present at registration are probed before pci_register_driver() returns,
	 * even with async_probe: insmod reports what was bound by then.
	 */
	drv->driver.probe_type = PROBE_FORCE_SYNCHRONOUS;
}

int rsnic_helper_pci_register_driver(struct pci_driver *drv)
{
	return pci_register_driver(drv);
}

struct device *rsnic_helper_pci_dev_dev(struct pci_dev *pdev)
{
	return &pdev->dev;
}

const char *rsnic_helper_pci_name(const struct pci_dev *pdev)
{
	return pci_name(pdev);
}

void rsnic_helper_pci_set_drvdata(struct pci_dev *pdev, void *data)
{
	pci_set_drvdata(pdev, data);
}

void *rsnic_helper_pci_get_drvdata(struct pci_dev *pdev)
{
	return pci_get_drvdata(pdev);
}

int rsnic_helper_dma_set_mask_and_coherent_64(struct device *dev)
{
	return dma_set_mask_and_coherent(dev, DMA_BIT_MASK(64));
}

int rsnic_helper_pci_mem_bar(struct pci_dev *pdev, int bar, u64 *start, u64 *len)
{
	if (bar < 0 || bar >= PCI_STD_NUM_BARS)
		return -EINVAL;
	if (!(pci_resource_flags(pdev, bar) & IORESOURCE_MEM) || !pci_resource_len(pdev, bar))
		return -EINVAL;
	*start = pci_resource_start(pdev, bar);
	*len = pci_resource_len(pdev, bar);
	return 0;
}

void __iomem *rsnic_helper_ioremap(u64 start, u64 len)
{
	return ioremap(start, len);
}

void rsnic_helper_iounmap(void __iomem *addr)
{
	iounmap(addr);
}

void rsnic_helper_writel(u32 value, void __iomem *addr)
{
	writel(value, addr);
}

u32 rsnic_helper_readl(const void __iomem *addr)
{
	return readl(addr);
}

void rsnic_helper_writeq(u64 value, void __iomem *addr)
{
	writeq(value, addr);
}

void rsnic_helper_iowrite32be(u32 value, void __iomem *addr)
{
	iowrite32be(value, addr);
}

u32 rsnic_helper_ioread32be(const void __iomem *addr)
{
	return ioread32be(addr);
}

u16 rsnic_helper_pci_vendor(const struct pci_dev *pdev)
{
	return pdev->vendor;
}

u16 rsnic_helper_pci_device(const struct pci_dev *pdev)
{
	return pdev->device;
}

int rsnic_helper_pci_alloc_msix_range(struct pci_dev *pdev, unsigned int min, unsigned int max)
{
	return pci_alloc_irq_vectors(pdev, min, max, PCI_IRQ_MSIX);
}

int rsnic_helper_request_threaded_irq(unsigned int irq, irq_handler_t thread, const char *name,
				      void *dev_id, bool shared)
{
	return request_threaded_irq(irq, NULL, thread, IRQF_ONESHOT | (shared ? IRQF_SHARED : 0),
				    name, dev_id);
}

void rsnic_helper_dev_err(struct device *dev, const char *msg)
{
	dev_err(dev, "%s\n", msg);
}

void rsnic_helper_dev_info(struct device *dev, const char *msg)
{
	dev_info(dev, "%s\n", msg);
}

struct devlink *rsnic_helper_devlink_alloc(const struct devlink_ops *ops, size_t priv_size,
					   struct device *dev)
{
	return devlink_alloc(ops, priv_size, dev);
}

size_t rsnic_helper_devlink_port_size(void)
{
	return sizeof(struct devlink_port);
}

void rsnic_helper_devlink_port_attrs_physical(struct devlink_port *port, u32 number)
{
	struct devlink_port_attrs attrs = {
		.flavour = DEVLINK_PORT_FLAVOUR_PHYSICAL,
		.phys.port_number = number,
	};

	devlink_port_attrs_set(port, &attrs);
}

void rsnic_helper_set_netdev_devlink_port(struct net_device *dev, struct devlink_port *port)
{
	SET_NETDEV_DEVLINK_PORT(dev, port);
}

static int rsnic_sim_probe(struct platform_device *pdev)
{
	return 0;
}

static const struct platform_device_id rsnic_sim_ids[] = {
	{ .name = "rsnic-sim" },
	{ }
};

static struct platform_driver rsnic_sim_driver = {
	.probe = rsnic_sim_probe,
	.id_table = rsnic_sim_ids,
	.driver = {
		.name = "rsnic",
		/* The devices' DMA is the module's own model's: no IOMMU domain to claim. */
		.suppress_bind_attrs = true,
	},
	.driver_managed_dma = true,
};

int rsnic_helper_sim_driver_register(void)
{
	return platform_driver_register(&rsnic_sim_driver);
}

void rsnic_helper_sim_driver_unregister(void)
{
	platform_driver_unregister(&rsnic_sim_driver);
}
