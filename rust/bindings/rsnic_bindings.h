/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Headers whose types and functions rsnic's Rust abstractions use. The kernel's own
 * `bindings` crate in 6.12 lacks most of netdevice.h, so rsnic generates these at build time
 * with the kernel's bindgen flags (see Kbuild).
 */
#include <linux/netdevice.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/skbuff.h>
#include <linux/if_ether.h>
#include <linux/rtnetlink.h>
#include <linux/platform_device.h>
#include <linux/dma-mapping.h>
#include <net/netdev_queues.h>
#include <net/page_pool/types.h>
#include <net/xdp.h>
#include <linux/bpf.h>
#include <uapi/linux/netdev.h>
#include <uapi/linux/ethtool.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/hrtimer.h>
#include <linux/completion.h>
#include <linux/pci.h>
#include <linux/interrupt.h>
#include <net/devlink.h>

/* Prototypes of rust/helpers/*.c (static inline functions of the kernel, made callable). */
#include "../helpers/rsnic_helpers.h"
