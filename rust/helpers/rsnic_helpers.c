// SPDX-License-Identifier: GPL-2.0
/*
 * Out-of-line versions of static inline kernel functions used by rsnic's Rust abstractions,
 * and rsnic's module parameters.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/netdevice.h>
#include <linux/etherdevice.h>
#include <linux/skbuff.h>
#include <linux/platform_device.h>
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/io.h>
#include "rsnic_helpers.h"

void *rsnic_helper_netdev_priv(const struct net_device *dev)
{
	return netdev_priv(dev);
}

void rsnic_helper_eth_hw_addr_random(struct net_device *dev)
{
	eth_hw_addr_random(dev);
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

unsigned int rsnic_helper_skb_headlen(const struct sk_buff *skb)
{
	return skb_headlen(skb);
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

u16 rsnic_helper_skb_get_queue_mapping(const struct sk_buff *skb)
{
	return skb_get_queue_mapping(skb);
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

void *rsnic_helper_skb_data(const struct sk_buff *skb)
{
	return skb->data;
}

unsigned int rsnic_helper_skb_nr_frags(const struct sk_buff *skb)
{
	return skb_shinfo(skb)->nr_frags;
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

unsigned int rsnic_helper_param_num_devs(void)
{
	return num_devs;
}

unsigned int rsnic_helper_param_num_ports(void)
{
	return num_ports;
}
