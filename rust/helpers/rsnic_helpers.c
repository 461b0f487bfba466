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
