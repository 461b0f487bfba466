/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Out-of-line versions of the static inline kernel functions that rsnic's Rust abstractions
 * call (bindgen cannot call static inline functions), and rsnic's module parameters (Rust
 * modules gained parameters only after 6.12).
 */
#ifndef RSNIC_HELPERS_H
#define RSNIC_HELPERS_H

#include <linux/netdevice.h>
#include <linux/ethtool.h>
#include <linux/skbuff.h>
#include <linux/platform_device.h>
#include <linux/dma-mapping.h>
#include <linux/hrtimer.h>
#include <linux/dim.h>
#include <linux/pci.h>
#include <linux/interrupt.h>

void *rsnic_helper_netdev_priv(const struct net_device *dev);
void rsnic_helper_eth_hw_addr_random(struct net_device *dev);
void rsnic_helper_eth_hw_addr_set(struct net_device *dev, const u8 *addr);
bool rsnic_helper_netif_carrier_ok(const struct net_device *dev);
bool rsnic_helper_netif_running(const struct net_device *dev);
void rsnic_helper_consume_skb(struct sk_buff *skb);
void rsnic_helper_warn_skb_leak(void);
void rsnic_helper_dev_hold(struct net_device *dev);
void rsnic_helper_dev_put(struct net_device *dev);
void rsnic_helper_kfree_skb_reason(struct sk_buff *skb, enum skb_drop_reason reason);

/* TX queues and BQL */
struct netdev_queue *rsnic_helper_netdev_get_tx_queue(const struct net_device *dev,
						      unsigned int index);
unsigned int rsnic_helper_num_tx_queues(const struct net_device *dev);
void rsnic_helper_set_offloads(struct net_device *dev, bool sg, bool csum, bool tso, bool rxcsum);
void rsnic_helper_set_offloads_off(struct net_device *dev, bool loopback);
bool rsnic_helper_features_loopback(u64 features);
void rsnic_helper_set_ntuple(struct net_device *dev);
bool rsnic_helper_features_ntuple(u64 features);
bool rsnic_helper_features_rxcsum(u64 features);
void rsnic_helper_set_rxhash(struct net_device *dev);
bool rsnic_helper_features_rxhash(u64 features);
void rsnic_helper_set_unicast_flt(struct net_device *dev);

/* Receive filtering (ndo_set_rx_mode, ndo_set_mac_address) */
void rsnic_helper_rx_mode_snapshot(const struct net_device *dev, u8 *addr, bool *promisc,
				   bool *allmulti, bool *broadcast, u8 *uc, u32 uc_cap,
				   u32 *uc_total, u8 *mc, u32 mc_cap, u32 *mc_total);
const u8 *rsnic_helper_sockaddr_data(const void *sa);
bool rsnic_helper_is_valid_ether_addr(const u8 *addr);
void rsnic_helper_eth_hw_addr_set_locked(struct net_device *dev, const u8 *addr);
void rsnic_helper_set_vlan_offloads(struct net_device *dev, bool changeable);
bool rsnic_helper_features_rx_vlan(u64 features);
void rsnic_helper_set_vlan_filter(struct net_device *dev);
bool rsnic_helper_features_vlan_filter(u64 features);
void rsnic_helper_netif_tx_stop_queue(struct netdev_queue *txq);
void rsnic_helper_netif_tx_start_queue(struct netdev_queue *txq);
bool rsnic_helper_netif_xmit_stopped(const struct netdev_queue *txq);
bool rsnic_helper_netdev_tx_sent_queue(struct netdev_queue *txq, unsigned int bytes,
				       bool xmit_more);
void rsnic_helper_netdev_tx_completed_queue(struct netdev_queue *txq, unsigned int pkts,
					    unsigned int bytes);
void rsnic_helper_netdev_tx_reset_queue(struct netdev_queue *txq);
bool rsnic_helper_netdev_xmit_more(void);
bool rsnic_helper_netif_tx_queue_stopped(const struct netdev_queue *txq);
void rsnic_helper_netif_tx_disable(struct net_device *dev);
int rsnic_helper_set_real_num_queues(struct net_device *dev, unsigned int txq, unsigned int rxq);
void rsnic_helper_msleep(unsigned int ms);
void rsnic_helper_usleep_range(unsigned long min_us, unsigned long max_us);

/* DMA */
struct platform_device *rsnic_helper_platform_device_register(const char *name, int id);
struct device *rsnic_helper_platform_device_dev(struct platform_device *pdev);
int rsnic_helper_dma_setup(struct device *dev);
void *rsnic_helper_dma_alloc_coherent(struct device *dev, size_t size, dma_addr_t *dma);
void rsnic_helper_dma_free_coherent(struct device *dev, size_t size, void *cpu, dma_addr_t dma);
dma_addr_t rsnic_helper_dma_map_single(struct device *dev, void *ptr, size_t size, int to_device);
void rsnic_helper_dma_unmap_single(struct device *dev, dma_addr_t addr, size_t size,
				   int to_device);
dma_addr_t rsnic_helper_skb_frag_dma_map(struct device *dev, const struct sk_buff *skb,
					 unsigned int frag, unsigned int *len);
void rsnic_helper_dma_unmap_page(struct device *dev, dma_addr_t addr, size_t size,
				 int to_device);
int rsnic_helper_dma_mapping_error(struct device *dev, dma_addr_t addr);
void *rsnic_helper_phys_to_virt_checked(u64 addr, size_t len);

/* Barriers and bottom halves */
void rsnic_helper_dma_wmb(void);
void rsnic_helper_dma_rmb(void);
void rsnic_helper_wmb(void);
void rsnic_helper_local_bh_disable(void);
void rsnic_helper_local_bh_enable(void);
bool rsnic_helper_irqs_disabled(void);
int rsnic_helper_xmit_context(void);

/* TX-side skb accessors */

/* RX: page pool pages and skbs built around them */
struct page_pool *rsnic_helper_page_pool_create(struct device *dma_dev, struct net_device *dev,
						unsigned int pool_size, unsigned int order,
						unsigned int offset, unsigned int max_len,
						bool bidirectional);
void rsnic_helper_page_pool_destroy(struct page_pool *pool);
struct page *rsnic_helper_page_pool_alloc(struct page_pool *pool, u64 *dma);
void rsnic_helper_page_pool_put(struct page_pool *pool, struct page *page);
bool rsnic_helper_rx_add_frag(struct page_pool *pool, struct sk_buff *skb, struct page *page,
			      unsigned int offset, unsigned int len, unsigned int truesize);
struct sk_buff *rsnic_helper_rx_build_skb(struct page_pool *pool, struct page *page,
					  unsigned int offset, unsigned int len,
					  unsigned int truesize);
void rsnic_helper_skb_vlan_put_tag(struct sk_buff *skb, u16 tci);
bool rsnic_helper_skb_rx_finish(struct sk_buff *skb, struct net_device *dev, u8 ip_summed,
				u32 csum, u32 hash, int hash_type, u16 queue);
u32 rsnic_helper_skb_checksum(const struct sk_buff *skb, unsigned int off, unsigned int len);
void rsnic_helper_napi_gro_receive(struct napi_struct *napi, struct sk_buff *skb);

/* Workqueues */
struct workqueue_struct *rsnic_helper_alloc_workqueue(const char *name, int id);
void rsnic_helper_flush_workqueue(struct workqueue_struct *wq);
void rsnic_helper_destroy_workqueue(struct workqueue_struct *wq);

/* High-resolution timers (rust/timer.rs) and the monotonic clock */
struct rsnic_timer {
	struct hrtimer timer;
	void (*expired)(struct rsnic_timer *t);
};
void rsnic_helper_timer_init(struct rsnic_timer *t, void (*expired)(struct rsnic_timer *t));
void rsnic_helper_timer_start(struct rsnic_timer *t, u64 delay_ns);
void rsnic_helper_timer_cancel(struct rsnic_timer *t);
int rsnic_helper_timer_try_to_cancel(struct rsnic_timer *t);
u64 rsnic_helper_ktime_get_ns(void);

/* Completions (rust/sync.rs) */
struct completion;
void rsnic_helper_init_completion(struct completion *c);
void rsnic_helper_reinit_completion(struct completion *c);
void rsnic_helper_complete(struct completion *c);
/* wait_for_completion_timeout() of `ms` milliseconds: true if completed. */
bool rsnic_helper_wait_for_completion_timeout_ms(struct completion *c, unsigned int ms);
bool rsnic_helper_try_wait_for_completion(struct completion *c);

/* Dynamic interrupt moderation (rust/net/dim.rs) */
void rsnic_helper_dim_init(struct dim *dim, void (*work)(struct work_struct *w));
void rsnic_helper_dim_restart(struct dim *dim);
void rsnic_helper_net_dim(struct dim *dim, u16 events, u64 packets, u64 bytes);
struct dim *rsnic_helper_dim_of_work(struct work_struct *w);
void rsnic_helper_dim_profile(struct dim *dim, bool tx, u16 *usec, u16 *pkts);
void rsnic_helper_dim_default_profile(bool tx, u16 *usec, u16 *pkts);
void rsnic_helper_dim_measure_again(struct dim *dim);
void rsnic_helper_dim_cancel(struct dim *dim);

/* Netlink extended acks */
void rsnic_helper_extack_msg(struct netlink_ext_ack *extack, const char *msg);

/* ethtool pause statistics (the counters sit in a struct_group union) */
void rsnic_helper_pause_stats(struct ethtool_pause_stats *stats, u64 tx_frames, u64 rx_frames);
void rsnic_helper_eth_mac_stats(struct ethtool_eth_mac_stats *stats, const u64 *v);
void rsnic_helper_eth_phy_stats(struct ethtool_eth_phy_stats *stats, u64 symbol_errors);
void rsnic_helper_eth_ctrl_stats(struct ethtool_eth_ctrl_stats *stats, u64 tx, u64 rx,
				 u64 unsupported);
void rsnic_helper_rmon_stats(struct ethtool_rmon_stats *stats, const u64 *v, const u64 *hist,
			     size_t buckets);

/* RSS (ethtool -x/-X) */
bool rsnic_helper_netif_is_rxfh_configured(const struct net_device *dev);
u32 rsnic_helper_ethtool_rxfh_indir_default(u32 index, u32 n_rx_rings);
u32 *rsnic_helper_ethtool_rxfh_context_indir(struct ethtool_rxfh_context *ctx);
u8 *rsnic_helper_ethtool_rxfh_context_key(struct ethtool_rxfh_context *ctx);

/* NAPI */
void rsnic_helper_netif_napi_add(struct net_device *dev, struct napi_struct *napi,
				 int (*poll)(struct napi_struct *, int));
void rsnic_helper_netif_napi_del(struct napi_struct *napi);
bool rsnic_helper_napi_schedule(struct napi_struct *napi);
bool rsnic_helper_napi_if_scheduled_mark_missed(struct napi_struct *napi);

/* XDP */
struct bpf_prog;
struct xdp_frame;
struct xdp_rxq_info;
/* rsnic_helper_xdp_run's result for a redirect that failed (traced; the page stays ours). */
#define RSNIC_XDP_REDIRECT_FAILED 0x100
u32 rsnic_helper_xdp_run(struct bpf_prog *prog, struct xdp_rxq_info *rxq,
			 struct page_pool *pool, struct page *page, u32 headroom, u32 len,
			 u32 frame_sz, u32 *data_off, u32 *data_len);
int rsnic_helper_xdp_rxq_reg(struct xdp_rxq_info *rxq, struct net_device *dev, u32 queue,
			     struct page_pool *pool);
void rsnic_helper_xdp_rxq_unreg(struct xdp_rxq_info *rxq);
void rsnic_helper_bpf_prog_inc(struct bpf_prog *prog);
void rsnic_helper_bpf_prog_put(struct bpf_prog *prog);
void *rsnic_helper_page_address(struct page *page);
void rsnic_helper_page_pool_sync_for_device(struct page_pool *pool, u64 dma, u32 len);
struct sk_buff *rsnic_helper_xdp_frame_to_skb(struct xdp_frame *frame, struct net_device *dev,
					      u16 queue);
void rsnic_helper_skb_set_queue_mapping(struct sk_buff *skb, u16 queue);
void rsnic_helper_netif_tx_lock(struct netdev_queue *txq);
void rsnic_helper_netif_tx_unlock(struct netdev_queue *txq);
unsigned int rsnic_helper_smp_processor_id(void);
/* dev->watchdog_timeo = msecs_to_jiffies(ms). */
void rsnic_helper_set_watchdog_timeo(struct net_device *dev, u32 ms);
void rsnic_helper_set_xdp_features(struct net_device *dev, u32 features);
struct xsk_buff_pool;
struct xdp_buff;
int rsnic_helper_xsk_pool_dma_map(struct xsk_buff_pool *pool, struct device *dev);
void rsnic_helper_xsk_pool_dma_unmap(struct xsk_buff_pool *pool);
u32 rsnic_helper_xsk_pool_rx_frame_size(struct xsk_buff_pool *pool);
u32 rsnic_helper_xsk_pool_headroom(struct xsk_buff_pool *pool);
u32 rsnic_helper_xsk_pool_chunk_size(struct xsk_buff_pool *pool);
int rsnic_helper_xsk_rxq_reg(struct xdp_rxq_info *rxq, struct net_device *dev, u32 queue,
			     struct xsk_buff_pool *pool);
struct xdp_buff *rsnic_helper_xsk_buff_alloc(struct xsk_buff_pool *pool, u64 *dma);
void rsnic_helper_xsk_buff_free(struct xdp_buff *xdp);
u32 rsnic_helper_xsk_run(struct bpf_prog *prog, struct xdp_buff *xdp, u32 len);
struct sk_buff *rsnic_helper_xsk_copy_skb(struct napi_struct *napi, struct xdp_buff *xdp);
struct xdp_frame *rsnic_helper_xsk_to_frame(struct xdp_buff *xdp);
bool rsnic_helper_xsk_tx_peek(struct xsk_buff_pool *pool, u64 *dma, void **data, u32 *len);
void rsnic_helper_xsk_tx_release(struct xsk_buff_pool *pool);
void rsnic_helper_xsk_tx_completed(struct xsk_buff_pool *pool, u32 n);
void rsnic_helper_xsk_need_wakeup(struct xsk_buff_pool *pool, bool rx, bool set);

/* PCI (rust/pci.rs) */
void rsnic_helper_pci_driver_init(struct pci_driver *drv, const char *name,
				  const struct pci_device_id *ids,
				  int (*probe)(struct pci_dev *, const struct pci_device_id *),
				  void (*remove)(struct pci_dev *));
int rsnic_helper_pci_register_driver(struct pci_driver *drv);
struct device *rsnic_helper_pci_dev_dev(struct pci_dev *pdev);
const char *rsnic_helper_pci_name(const struct pci_dev *pdev);
void rsnic_helper_pci_set_drvdata(struct pci_dev *pdev, void *data);
void *rsnic_helper_pci_get_drvdata(struct pci_dev *pdev);
int rsnic_helper_dma_set_mask_and_coherent_64(struct device *dev);
/* The start and length of memory BAR `bar`; -EINVAL if it is not a memory BAR or is empty. */
int rsnic_helper_pci_mem_bar(struct pci_dev *pdev, int bar, u64 *start, u64 *len);
void __iomem *rsnic_helper_ioremap(u64 start, u64 len);
void rsnic_helper_iounmap(void __iomem *addr);
void rsnic_helper_writel(u32 value, void __iomem *addr);
u32 rsnic_helper_readl(const void __iomem *addr);
/* writeq(): the value's little-endian bytes on the bus, with writeq's ordering. */
void rsnic_helper_writeq(u64 value, void __iomem *addr);
/* iowrite32be()/ioread32be(): a register whose value is big-endian on the bus. */
void rsnic_helper_iowrite32be(u32 value, void __iomem *addr);
u32 rsnic_helper_ioread32be(const void __iomem *addr);
u16 rsnic_helper_pci_vendor(const struct pci_dev *pdev);
u16 rsnic_helper_pci_device(const struct pci_dev *pdev);
/* Between min and max MSI-X vectors: how many, or a negative errno. */
int rsnic_helper_pci_alloc_msix_range(struct pci_dev *pdev, unsigned int min, unsigned int max);
/*
 * request_threaded_irq() with the default primary handler and IRQF_ONESHOT (and IRQF_SHARED
 * when shared).
 */
int rsnic_helper_request_threaded_irq(unsigned int irq, irq_handler_t thread, const char *name,
				      void *dev_id, bool shared);
void rsnic_helper_dev_err(struct device *dev, const char *msg);
void rsnic_helper_dev_info(struct device *dev, const char *msg);

unsigned int rsnic_helper_param_num_devs(void);
unsigned int rsnic_helper_num_online_cpus(void);
unsigned int rsnic_helper_param_num_ports(void);
int rsnic_helper_skb_tso_pseudo_prep(struct sk_buff *skb);
/* The `family` parameter: a NUL-terminated string, fixed after load (0444). */
const char *rsnic_helper_param_family(void);
/* The device host's `sim_fail_cmd` parameter: an opcode, or 0. */
unsigned int rsnic_helper_param_sim_fail_cmd(void);
/* The device host's `sim_fail_req` parameter: a MANA HWC request code, or 0. */
unsigned int rsnic_helper_param_sim_fail_req(void);
/* The `tx_timeout_ms` parameter. */
unsigned int rsnic_helper_param_tx_timeout_ms(void);
/* The device host's `sim_mpwqe` parameter. */
bool rsnic_helper_param_sim_mpwqe(void);
/* The device host's `sim_cqe_compression` parameter. */
bool rsnic_helper_param_sim_cqe_compression(void);
/* The device host's `sim_min_inline` parameter: a minimum inline mode, 0..3. */
bool rsnic_helper_param_sim_rsnic_requests(void);
unsigned int rsnic_helper_param_sim_min_inline(void);
/* The device host's `sim_max_mtu` parameter: a port's PMTU max_mtu, 0 for the model's. */
unsigned int rsnic_helper_param_sim_max_mtu(void);
/* The `host` parameter: a NUL-terminated string, fixed after load (0444). */
const char *rsnic_helper_param_host(void);

/* A read-only debugfs file whose show operation is rsnic_rust_debugfs_show(m, data). */
struct dentry *rsnic_helper_debugfs_show_file(const char *name, struct dentry *parent, void *data);
/* A write-only debugfs file whose writes go to rsnic_rust_debugfs_store(data, buf, len). */
struct dentry *rsnic_helper_debugfs_store_file(const char *name, struct dentry *parent, void *data);

/* devlink (rust/devlink.rs). */
struct devlink;
struct devlink_ops;
struct devlink_port;
struct net_device;
/* devlink_alloc() (static inline): an instance in the initial network namespace. */
struct devlink *rsnic_helper_devlink_alloc(const struct devlink_ops *ops, size_t priv_size,
					   struct device *dev);
/* sizeof(struct devlink_port): the Rust side allocates it zeroed. */
size_t rsnic_helper_devlink_port_size(void);
/* devlink_port_attrs_set() of a physical port numbered `number` (not split). */
void rsnic_helper_devlink_port_attrs_physical(struct devlink_port *port, u32 number);
/* SET_NETDEV_DEVLINK_PORT(): the netdev's devlink port, before register_netdev(). */
void rsnic_helper_set_netdev_devlink_port(struct net_device *dev, struct devlink_port *port);
/*
 * A stub platform driver named "rsnic" bound to the module's own platform devices
 * ("rsnic-sim.N"), so that what reads a device's driver (devlink dev info) finds rsnic.
 */
int rsnic_helper_sim_driver_register(void);
void rsnic_helper_sim_driver_unregister(void);

#endif
