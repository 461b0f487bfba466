// SPDX-License-Identifier: GPL-2.0

//! Network devices (`struct net_device`) and their operations (`struct net_device_ops`).
//!
//! C headers: [`include/linux/netdevice.h`](srctree/include/linux/netdevice.h),
//! [`include/linux/etherdevice.h`](srctree/include/linux/etherdevice.h).
//!
//! A driver implements [`Operations`] (and [`super::ethtool::Operations`]) for a type and
//! registers Ethernet devices with [`Registration::register`], handing over its per-device
//! data ([`Operations::Data`]), which every callback then borrows. The tables the kernel calls
//! are built at compile time from the implemented methods, as `kernel::net::phy` does.

use super::super::bindings;
use super::ethtool::{self, ExtAck};
use super::queue::XmitCtx;
use super::skb::SkBuff;
use super::xdp::{BpfProg, XdpFrames};
use super::xsk::XskPool;
use core::{ffi::c_void, marker::PhantomData, ptr::NonNull};

/// `ETH_P_8021Q`, the protocol of the VLAN ids `ndo_vlan_rx_add_vid` hands over.
const ETH_P_8021Q: u16 = 0x8100;
use kernel::{
    error::{from_result, to_result},
    prelude::*,
    str::CStr,
    sync::Arc,
    types::{AlwaysRefCounted, ForeignOwnable, Opaque},
};

/// A network device.
///
/// Wraps the kernel's `struct net_device`. Instances are only ever seen by reference: in an
/// operation callback, through a [`Registration`], or through an [`kernel::types::ARef`] that
/// holds a reference count (`dev_hold()`).
///
/// # Invariants
///
/// The wrapped `net_device` is valid (allocated and not yet freed) for as long as a
/// `&Device` exists.
#[repr(transparent)]
pub struct Device(Opaque<bindings::net_device>);

// SAFETY: the methods of `Device` are safe to call from any thread; the fields they touch are
// accessed with the kernel's own synchronisation (carrier state is atomic, the MTU is
// READ_ONCE/WRITE_ONCE).
unsafe impl Send for Device {}
// SAFETY: as for `Send`: shared references only call thread-safe kernel functions.
unsafe impl Sync for Device {}

impl Device {
    /// Creates a reference from a raw pointer.
    ///
    /// # Safety
    ///
    /// `ptr` points to a valid `net_device` that stays valid for `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::net_device) -> &'a Self {
        // SAFETY: `Device` is a transparent wrapper of `net_device`; validity for `'a` is the
        // caller's promise.
        unsafe { &*ptr.cast::<Self>() }
    }

    fn as_ptr(&self) -> *mut bindings::net_device {
        self.0.get()
    }

    /// The interface name (`dev->name`).
    pub fn name(&self) -> &CStr {
        // SAFETY: `name` is a NUL-terminated array inside the valid device (type invariant);
        // it only changes under RTNL through a rename, which keeps it NUL-terminated.
        unsafe { CStr::from_char_ptr((*self.as_ptr()).name.as_ptr()) }
    }

    /// Tells the stack that the link is up (`netif_carrier_on()`).
    pub fn carrier_on(&self) {
        // SAFETY: the device is valid (type invariant); the function may be called from any
        // context.
        unsafe { bindings::netif_carrier_on(self.as_ptr()) }
    }

    /// Tells the stack that the link is down (`netif_carrier_off()`).
    pub fn carrier_off(&self) {
        // SAFETY: as in `carrier_on`.
        unsafe { bindings::netif_carrier_off(self.as_ptr()) }
    }

    /// Whether the stack sees the link up (`netif_carrier_ok()`).
    pub fn carrier_ok(&self) -> bool {
        // SAFETY: the device is valid (type invariant); this is an atomic bit test.
        unsafe { bindings::rsnic_helper_netif_carrier_ok(self.as_ptr()) }
    }

    /// Whether the interface is administratively up (`netif_running()`).
    pub fn is_running(&self) -> bool {
        // SAFETY: the device is valid (type invariant); this is an atomic bit test.
        unsafe { bindings::rsnic_helper_netif_running(self.as_ptr()) }
    }

    /// Whether the user set the RX flow hash indirection table (`netif_is_rxfh_configured()`:
    /// `ethtool -X` with a table, cleared by `-X default`); while it is not, a driver
    /// re-spreads the table over the RX queues when their number changes. Call it under
    /// RTNL (ethtool and ndo callbacks), under which the ethtool core changes the flag.
    pub fn rxfh_configured(&self) -> bool {
        // SAFETY: the device is valid (type invariant); the helper reads `priv_flags`, which
        // the ethtool core writes only under RTNL, as the caller holds it.
        unsafe { bindings::rsnic_helper_netif_is_rxfh_configured(self.as_ptr()) }
    }

    /// The current MTU (`READ_ONCE(dev->mtu)`).
    pub fn mtu(&self) -> u32 {
        // SAFETY: the device is valid (type invariant); the MTU is a plain integer written
        // with WRITE_ONCE under RTNL, so a volatile read sees a whole value.
        unsafe { core::ptr::addr_of!((*self.as_ptr()).mtu).read_volatile() }
    }

    /// The device's MAC address (`dev->dev_addr`).
    pub fn mac(&self) -> [u8; 6] {
        let mut mac = [0u8; 6];
        // SAFETY: the device is valid (type invariant) and `dev_addr` points to at least
        // ETH_ALEN bytes for an Ethernet device, set up by `alloc_etherdev_mqs()`.
        unsafe {
            let addr = (*self.as_ptr()).dev_addr;
            if !addr.is_null() {
                core::ptr::copy_nonoverlapping(addr, mac.as_mut_ptr(), mac.len());
            }
        }
        mac
    }
}

// SAFETY: `dev_hold()`/`dev_put()` keep the `net_device` allocated while the count is held,
// which is exactly what `AlwaysRefCounted` asks for.
unsafe impl AlwaysRefCounted for Device {
    fn inc_ref(&self) {
        // SAFETY: the device is valid (type invariant).
        unsafe { bindings::rsnic_helper_dev_hold(self.as_ptr()) }
    }

    unsafe fn dec_ref(obj: NonNull<Self>) {
        // SAFETY: the caller gives back a reference it held, so the device is still valid.
        unsafe { bindings::rsnic_helper_dev_put(obj.as_ptr().cast()) }
    }
}

/// What `ndo_start_xmit` did with a packet.
pub enum TxOutcome {
    /// The packet was taken (queued to hardware, or dropped and counted): `NETDEV_TX_OK`.
    Ok,
    /// The queue is full and the packet is handed back to be re-queued: `NETDEV_TX_BUSY`.
    /// Drivers should stop their queue before it fills instead.
    Busy(SkBuff),
}

/// Interface statistics reported through `ndo_get_stats64` (`struct rtnl_link_stats64`).
#[derive(Debug, Default, Clone, Copy)]
pub struct LinkStats64 {
    /// Packets received.
    pub rx_packets: u64,
    /// Packets transmitted.
    pub tx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Bytes transmitted.
    pub tx_bytes: u64,
    /// Receive errors.
    pub rx_errors: u64,
    /// Transmit errors.
    pub tx_errors: u64,
    /// Received packets dropped (for example no buffer).
    pub rx_dropped: u64,
    /// Packets dropped on transmit.
    pub tx_dropped: u64,
    /// Multicast packets received.
    pub multicast: u64,
    /// Received frames with a length error (part of `rx_errors`).
    pub rx_length_errors: u64,
    /// Received frames with a bad frame check sequence (part of `rx_errors`).
    pub rx_crc_errors: u64,
    /// Received frames the host had no buffer for, counted by the device.
    pub rx_missed_errors: u64,
}

/// Per-queue counters reported through netlink qstats (`struct netdev_stat_ops`).
#[derive(Debug, Default, Clone, Copy)]
pub struct QueueStats {
    /// Packets received.
    pub rx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// RX buffer allocation failures.
    pub rx_alloc_fail: u64,
    /// Packets transmitted.
    pub tx_packets: u64,
    /// Bytes transmitted.
    pub tx_bytes: u64,
    /// Times the driver stopped the TX queue.
    pub tx_stop: u64,
    /// Times the driver woke the TX queue.
    pub tx_wake: u64,
}

/// Most addresses of each list (unicast, multicast) an [`RxMode`] holds.
pub const RX_MODE_ADDRS: usize = 32;

/// What the stack asks the device to receive (`ndo_set_rx_mode`): the device's address,
/// IFF_PROMISC, IFF_ALLMULTI, IFF_BROADCAST and the unicast (`dev->uc`) and multicast
/// (`dev->mc`) address lists, copied under the device's address lock. A list longer than
/// [`RX_MODE_ADDRS`] keeps its first entries and says so ([`RxMode::uc_overflow`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RxMode {
    /// The device's address (`dev_addr`).
    pub addr: [u8; 6],
    /// IFF_PROMISC: receive every frame.
    pub promisc: bool,
    /// IFF_ALLMULTI: receive every multicast frame.
    pub allmulti: bool,
    /// IFF_BROADCAST: receive broadcast frames.
    pub broadcast: bool,
    uc: [[u8; 6]; RX_MODE_ADDRS],
    uc_total: u32,
    mc: [[u8; 6]; RX_MODE_ADDRS],
    mc_total: u32,
}

impl RxMode {
    /// A device with address `addr` that receives what is sent to it and broadcast, before
    /// the stack said more.
    pub const fn new(addr: [u8; 6]) -> Self {
        Self {
            addr,
            promisc: false,
            allmulti: false,
            broadcast: true,
            uc: [[0; 6]; RX_MODE_ADDRS],
            uc_total: 0,
            mc: [[0; 6]; RX_MODE_ADDRS],
            mc_total: 0,
        }
    }

    /// The unicast addresses held (at most [`RX_MODE_ADDRS`]).
    pub fn uc(&self) -> &[[u8; 6]] {
        let n = (self.uc_total as usize).min(RX_MODE_ADDRS);
        self.uc.get(..n).unwrap_or_default()
    }

    /// The multicast addresses held (at most [`RX_MODE_ADDRS`]).
    pub fn mc(&self) -> &[[u8; 6]] {
        let n = (self.mc_total as usize).min(RX_MODE_ADDRS);
        self.mc.get(..n).unwrap_or_default()
    }

    /// The stack had more unicast addresses than [`RxMode::uc`] holds.
    pub fn uc_overflow(&self) -> bool {
        self.uc_total as usize > RX_MODE_ADDRS
    }

    /// The stack had more multicast addresses than [`RxMode::mc`] holds.
    pub fn mc_overflow(&self) -> bool {
        self.mc_total as usize > RX_MODE_ADDRS
    }
}

/// A change of the device's address asked for by `ndo_set_mac_address` (under RTNL). The
/// driver refuses it by returning an error without committing, or applies it with
/// [`MacChange::commit`] and then programs its device.
pub struct MacChange<'a> {
    dev: &'a Device,
    mac: [u8; 6],
    /// Neither `Send` nor `Sync`: it lives only inside the callback, under RTNL.
    _not_send: PhantomData<*const ()>,
}

impl MacChange<'_> {
    /// The address asked for (not validated yet: [`MacChange::commit`] does).
    pub fn mac(&self) -> [u8; 6] {
        self.mac
    }

    /// Makes the address the device's (`eth_hw_addr_set` under the address lock, as
    /// `mlx5e_set_mac`), after checking it is a valid unicast address
    /// (`is_valid_ether_addr`; otherwise `EADDRNOTAVAIL` and nothing changes).
    pub fn commit(self) -> Result {
        // SAFETY: `mac` is a live array of ETH_ALEN bytes; the function only reads them.
        if !unsafe { bindings::rsnic_helper_is_valid_ether_addr(self.mac.as_ptr()) } {
            return Err(super::eaddrnotavail());
        }
        // SAFETY: a `MacChange` exists only inside `ndo_set_mac_address`, which the core
        // calls under RTNL for a valid, registered device, so no other writer of `dev_addr`
        // runs; the helper takes the address lock that readers of the address hold, and
        // copies ETH_ALEN bytes from the live array.
        unsafe {
            bindings::rsnic_helper_eth_hw_addr_set_locked(self.dev.as_ptr(), self.mac.as_ptr())
        };
        Ok(())
    }
}

/// The per-device data a driver hands over at registration, borrowed by every callback.
pub type Borrowed<'a, T> = <<T as Operations>::Data as ForeignOwnable>::Borrowed<'a>;

/// Network device operations (`struct net_device_ops`).
///
/// Every method gets the device and a borrow of the driver's per-device data. Callbacks run
/// in the contexts the kernel documents for the matching `ndo_*` (open, stop and change_mtu
/// under RTNL; start_xmit with BH disabled, serialised per TX queue).
#[vtable]
pub trait Operations: Sized + 'static {
    /// The per-device data stored in the device's private area.
    type Data: ForeignOwnable + Send + Sync;

    /// `ndo_open`: the interface is being brought up.
    fn open(_dev: &Device, _data: Borrowed<'_, Self>) -> Result {
        Err(super::eopnotsupp())
    }

    /// `ndo_stop`: the interface is being brought down.
    fn stop(_dev: &Device, _data: Borrowed<'_, Self>) -> Result {
        Err(super::eopnotsupp())
    }

    /// `ndo_start_xmit`: transmit `skb`. Mandatory. `ctx` proves that the stack holds the
    /// xmit lock of the packet's TX queue ([`super::queue::TxqCell`]).
    fn start_xmit(
        skb: SkBuff,
        dev: &Device,
        data: Borrowed<'_, Self>,
        ctx: &mut XmitCtx,
    ) -> TxOutcome;

    /// `ndo_get_stats64`: fill in the interface counters.
    fn get_stats64(_dev: &Device, _data: Borrowed<'_, Self>, _stats: &mut LinkStats64) {}

    /// Counters of live queue `index` (netlink qstats, `get_queue_stats_rx/tx`).
    fn queue_stats(_dev: &Device, _data: Borrowed<'_, Self>, _index: u32) -> QueueStats {
        QueueStats::default()
    }

    /// Counters that belong to no live queue (`get_base_stats`): the device's history
    /// beyond its live queues, so that queues plus base give the device totals.
    fn base_stats(_dev: &Device, _data: Borrowed<'_, Self>) -> QueueStats {
        QueueStats::default()
    }

    /// `ndo_change_mtu`: `new_mtu` is already within the device's min/max. On success the
    /// adapter stores it in the device.
    fn change_mtu(_dev: &Device, _data: Borrowed<'_, Self>, _new_mtu: u32) -> Result {
        Err(super::eopnotsupp())
    }

    /// `ndo_set_rx_mode`: the stack's receive filter changed (addresses, IFF_PROMISC,
    /// IFF_ALLMULTI; also right after `ndo_open`). Called with the device's address lock
    /// held and bottom halves disabled (atomic context, possibly from a softirq): the
    /// driver keeps `mode` (a copy made under that lock) and programs its device later,
    /// from process context (a work item), as mlx5e's `set_rx_mode_work` does.
    fn set_rx_mode(_dev: &Device, _data: Borrowed<'_, Self>, _mode: &RxMode) {}

    /// `ndo_set_mac_address` (under RTNL): the device's address is to become
    /// `change.mac()`. The driver commits it ([`MacChange::commit`], which refuses an
    /// invalid address with `EADDRNOTAVAIL`) and programs its device, or refuses it. A driver
    /// without this method leaves the operation out: the core answers `EOPNOTSUPP`.
    fn set_mac_address(_dev: &Device, _data: Borrowed<'_, Self>, _change: MacChange<'_>) -> Result {
        Err(super::eopnotsupp())
    }

    /// `ndo_bpf` with `XDP_SETUP_PROG` (under RTNL): attach `prog` to the receive path,
    /// replacing the current program, or detach it (`None`). The driver keeps `prog` (its
    /// own reference) on success; explain a refusal in `extack`.
    fn xdp_setup(
        _dev: &Device,
        _data: Borrowed<'_, Self>,
        _prog: Option<BpfProg>,
        _extack: &mut ExtAck,
    ) -> Result {
        Err(super::eopnotsupp())
    }

    /// `ndo_bpf` with `XDP_SETUP_XSK_POOL` (under RTNL): an AF_XDP zero-copy socket
    /// registers `pool` for queue `queue` (`Some`), or unregisters it (`None`). On return
    /// from an unregistration the driver must not use the pool any more (see
    /// [`super::xsk`]).
    fn xsk_setup(
        _dev: &Device,
        _data: Borrowed<'_, Self>,
        _pool: Option<XskPool>,
        _queue: u32,
    ) -> Result {
        Err(super::eopnotsupp())
    }

    /// `ndo_xsk_wakeup`: the socket of queue `queue` has new work (any CPU).
    fn xsk_wakeup(_dev: &Device, _data: Borrowed<'_, Self>, _queue: u32) -> Result {
        Err(super::eopnotsupp())
    }

    /// `ndo_set_features` (under RTNL): apply the features the user asked for. On success
    /// the core records them.
    fn set_features(_dev: &Device, _data: Borrowed<'_, Self>, _features: Features) -> Result {
        Ok(())
    }

    /// `ndo_vlan_rx_add_vid` (under RTNL, may sleep): the stack wants frames tagged with
    /// 802.1Q VLAN id `vid` (0..4095) received (a VLAN device on top, or VID 0 at up).
    /// Called only while the device has `NETIF_F_HW_VLAN_CTAG_FILTER`
    /// ([`Offloads::vlan_filter`]); an error fails what the stack was doing (the VLAN
    /// device is not created).
    fn vlan_rx_add_vid(_dev: &Device, _data: Borrowed<'_, Self>, _vid: u16) -> Result {
        Err(super::eopnotsupp())
    }

    /// `ndo_vlan_rx_kill_vid` (under RTNL, may sleep): VLAN id `vid` is no longer wanted.
    fn vlan_rx_kill_vid(_dev: &Device, _data: Borrowed<'_, Self>, _vid: u16) -> Result {
        Err(super::eopnotsupp())
    }

    /// `ndo_tx_timeout`: TX queue `queue` has been stopped for longer than the device's
    /// watchdog timeout ([`Config::watchdog_timeo_ms`]). Called from the netdev watchdog's
    /// timer (softirq) with every TX queue's xmit lock held: it must not sleep nor take
    /// a queue's xmit lock; recovery that sleeps goes to a work item.
    fn tx_timeout(_dev: &Device, _data: Borrowed<'_, Self>, _queue: u32) {}

    /// `ndo_xdp_xmit` (bottom halves disabled, any CPU): transmit frames redirected from
    /// another device, taken in order from `frames`; ring the doorbell when `flush` is set.
    fn xdp_xmit(
        _dev: &Device,
        _data: Borrowed<'_, Self>,
        _frames: &mut XdpFrames<'_>,
        _flush: bool,
    ) {
    }
}

/// Parameters of a new Ethernet device.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    /// Number of TX queues.
    pub tx_queues: u32,
    /// Number of RX queues.
    pub rx_queues: u32,
    /// Smallest MTU the device accepts.
    pub min_mtu: u32,
    /// Largest MTU the device accepts.
    pub max_mtu: u32,
    /// Offloads the device implements (on by default, switchable with `ethtool -K`).
    pub offloads: Offloads,
    /// XDP features (`xdp_features`, bits of [`super::xdp::features`]).
    pub xdp_features: u32,
    /// How long a TX queue may stay stopped before the watchdog calls
    /// [`Operations::tx_timeout`] (`watchdog_timeo`, in ms; 0: the core's default, 5 s).
    pub watchdog_timeo_ms: u32,
    /// The permanent MAC address the device reported, or `None` for a random one
    /// (`eth_hw_addr_random`). A multicast address is refused (`EINVAL`).
    pub mac: Option<[u8; 6]>,
    /// The device has link flow control: the driver's pause operations (if it has them) are
    /// offered. `false` leaves them out of this device's `ethtool_ops`, so ethtool's pause
    /// requests get `EOPNOTSUPP` (a driver whose devices differ in this registers each with
    /// what it has).
    pub pause: bool,
    /// The port's index among the ports of its PCI function (`dev_port` in sysfs; 0 for a
    /// function with one port), as drivers of multi-port functions set it.
    pub dev_port: u16,
    /// The device filters unicast addresses by the list [`Operations::set_rx_mode`] hands
    /// over (IFF_UNICAST_FLT). Without it the core turns promiscuous mode on while the
    /// unicast list is not empty.
    pub unicast_filter: bool,
}

/// Offloads a device implements.
#[derive(Debug, Default, Clone, Copy)]
pub struct Offloads {
    /// Scatter-gather: packets in page fragments (`NETIF_F_SG`).
    pub sg: bool,
    /// TCP/UDP checksums over IPv4 and IPv6 (`NETIF_F_IP_CSUM | NETIF_F_IPV6_CSUM`).
    pub tx_csum: bool,
    /// TCP segmentation over IPv4 and IPv6 (`NETIF_F_TSO | NETIF_F_TSO6`).
    pub tso: bool,
    /// Received checksums verified by the device (`NETIF_F_RXCSUM`).
    pub rx_csum: bool,
    /// The device can loop transmitted frames back to its own receive side
    /// (`NETIF_F_LOOPBACK`; off by default).
    pub loopback: bool,
    /// ntuple steering rules (`NETIF_F_NTUPLE`; on by default, changeable).
    pub ntuple: bool,
    /// The device's RSS hash of received packets is handed to the stack (`NETIF_F_RXHASH`;
    /// on by default, changeable).
    pub rx_hash: bool,
    /// 802.1Q tag offloads: the device inserts the tag of a transmitted skb and strips that
    /// of a received frame into its completion (`NETIF_F_HW_VLAN_CTAG_TX | _RX`).
    pub vlan: VlanOffload,
    /// The device drops 802.1Q frames of VLAN ids the stack did not list
    /// (`NETIF_F_HW_VLAN_CTAG_FILTER`; on by default, changeable; the driver implements
    /// [`Operations::vlan_rx_add_vid`] and [`Operations::vlan_rx_kill_vid`]).
    pub vlan_filter: bool,
}

/// How a device offers the 802.1Q tag offloads ([`Offloads::vlan`]).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum VlanOffload {
    /// Not offered: the stack inserts and parses tags itself.
    #[default]
    None,
    /// On, and changeable with `ethtool -K <dev> txvlan|rxvlan` (an `rx_vlan` change
    /// reaches [`Operations::set_features`]).
    Changeable,
    /// Always on (`[fixed]` in `ethtool -k`).
    Fixed,
}

/// Features a driver acts on when `ethtool -K` changes them (`ndo_set_features`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Features {
    /// `NETIF_F_LOOPBACK`.
    pub loopback: bool,
    /// `NETIF_F_RXCSUM`: report the device's receive checksum verdict to the stack.
    pub rx_csum: bool,
    /// `NETIF_F_NTUPLE`: ntuple steering rules.
    pub ntuple: bool,
    /// `NETIF_F_RXHASH`: hand the device's RSS hash of received packets to the stack.
    pub rx_hash: bool,
    /// `NETIF_F_HW_VLAN_CTAG_RX`: the device strips received frames' 802.1Q tags.
    pub rx_vlan: bool,
    /// `NETIF_F_HW_VLAN_CTAG_FILTER`: the device filters 802.1Q frames by VLAN id.
    pub vlan_filter: bool,
}

/// Splits a callback's `net_device` into the device and a borrow of the driver data.
///
/// # Safety
///
/// `dev` is a device registered by [`Registration::register`] for `T`, called back by the
/// kernel between registration and the end of unregistration.
pub(crate) unsafe fn split<'a, T: Operations>(
    dev: *mut bindings::net_device,
) -> (&'a Device, Borrowed<'a, T>) {
    // SAFETY: the kernel passes a valid device to its callbacks and keeps it valid for the
    // call.
    let device = unsafe { Device::from_raw(dev) };
    // SAFETY: `Registration::register` stored the pointer from `into_foreign` in the private
    // area before registering; it is reclaimed with `from_foreign` only after
    // `unregister_netdev()` returned, when no callback can run any more.
    let data = unsafe {
        let slot = bindings::rsnic_helper_netdev_priv(dev).cast::<*const c_void>();
        T::Data::borrow(slot.read())
    };
    (device, data)
}

/// Writes the RX counters rsnic collects (the core leaves the others unreported).
fn fill_rx(rx: &mut bindings::netdev_queue_stats_rx, s: &QueueStats) {
    rx.packets = s.rx_packets;
    rx.bytes = s.rx_bytes;
    rx.alloc_fail = s.rx_alloc_fail;
}

/// Writes the TX counters rsnic collects.
fn fill_tx(tx: &mut bindings::netdev_queue_stats_tx, s: &QueueStats) {
    tx.packets = s.tx_packets;
    tx.bytes = s.tx_bytes;
    tx.stop = s.tx_stop;
    tx.wake = s.tx_wake;
}

/// Builds the C operation tables for a driver type.
struct Adapter<T>(PhantomData<T>);

impl<T: Operations + ethtool::Operations> Adapter<T> {
    const NDO: bindings::net_device_ops = {
        // SAFETY: `net_device_ops` is a C struct of nullable function pointers and integers,
        // for which all-zero bytes are a valid value (every callback absent).
        let mut ops: bindings::net_device_ops = unsafe { core::mem::zeroed() };
        ops.ndo_open = if T::HAS_OPEN {
            Some(Self::ndo_open)
        } else {
            None
        };
        ops.ndo_stop = if T::HAS_STOP {
            Some(Self::ndo_stop)
        } else {
            None
        };
        ops.ndo_start_xmit = Some(Self::ndo_start_xmit);
        ops.ndo_get_stats64 = if T::HAS_GET_STATS64 {
            Some(Self::ndo_get_stats64)
        } else {
            None
        };
        ops.ndo_change_mtu = if T::HAS_CHANGE_MTU {
            Some(Self::ndo_change_mtu)
        } else {
            None
        };
        ops.ndo_validate_addr = Some(bindings::eth_validate_addr);
        ops.ndo_set_features = if T::HAS_SET_FEATURES {
            Some(Self::ndo_set_features)
        } else {
            None
        };
        ops.ndo_bpf = if T::HAS_XDP_SETUP {
            Some(Self::ndo_bpf)
        } else {
            None
        };
        ops.ndo_xsk_wakeup = if T::HAS_XSK_WAKEUP {
            Some(Self::ndo_xsk_wakeup)
        } else {
            None
        };
        ops.ndo_xdp_xmit = if T::HAS_XDP_XMIT {
            Some(Self::ndo_xdp_xmit)
        } else {
            None
        };
        ops.ndo_tx_timeout = if T::HAS_TX_TIMEOUT {
            Some(Self::ndo_tx_timeout)
        } else {
            None
        };
        // `HAS_QUEUE_STATS` selects the `stat_ops` table below.
        ops.ndo_set_mac_address = if T::HAS_SET_MAC_ADDRESS {
            Some(Self::ndo_set_mac_address)
        } else {
            None
        };
        ops.ndo_set_rx_mode = if T::HAS_SET_RX_MODE {
            Some(Self::ndo_set_rx_mode)
        } else {
            None
        };
        ops.ndo_vlan_rx_add_vid = if T::HAS_VLAN_RX_ADD_VID {
            Some(Self::ndo_vlan_rx_add_vid)
        } else {
            None
        };
        ops.ndo_vlan_rx_kill_vid = if T::HAS_VLAN_RX_KILL_VID {
            Some(Self::ndo_vlan_rx_kill_vid)
        } else {
            None
        };
        ops
    };

    const STAT_OPS: bindings::netdev_stat_ops = bindings::netdev_stat_ops {
        get_queue_stats_rx: Some(Self::queue_stats_rx),
        get_queue_stats_tx: Some(Self::queue_stats_tx),
        get_base_stats: Some(Self::base_stats_cb),
    };

    /// # Safety
    ///
    /// Called by the netdev netlink core for a device registered for `T`, with valid
    /// arguments.
    unsafe extern "C" fn queue_stats_rx(
        dev: *mut bindings::net_device,
        idx: core::ffi::c_int,
        rx: *mut bindings::netdev_queue_stats_rx,
    ) {
        // SAFETY: called for a device registered for `T`.
        let (dev, data) = unsafe { Self::split(dev) };
        let s = T::queue_stats(dev, data, idx as u32);
        // SAFETY: the core passes a valid, exclusively owned struct.
        fill_rx(unsafe { &mut *rx }, &s);
    }

    /// # Safety
    ///
    /// As [`Self::queue_stats_rx`].
    unsafe extern "C" fn queue_stats_tx(
        dev: *mut bindings::net_device,
        idx: core::ffi::c_int,
        tx: *mut bindings::netdev_queue_stats_tx,
    ) {
        // SAFETY: called for a device registered for `T`.
        let (dev, data) = unsafe { Self::split(dev) };
        let s = T::queue_stats(dev, data, idx as u32);
        // SAFETY: the core passes a valid, exclusively owned struct.
        fill_tx(unsafe { &mut *tx }, &s);
    }

    /// # Safety
    ///
    /// As [`Self::queue_stats_rx`].
    unsafe extern "C" fn base_stats_cb(
        dev: *mut bindings::net_device,
        rx: *mut bindings::netdev_queue_stats_rx,
        tx: *mut bindings::netdev_queue_stats_tx,
    ) {
        // SAFETY: called for a device registered for `T`.
        let (dev, data) = unsafe { Self::split(dev) };
        let s = T::base_stats(dev, data);
        // SAFETY: the core passes valid, exclusively owned structs.
        let (rx, tx) = unsafe { (&mut *rx, &mut *tx) };
        fill_rx(rx, &s);
        fill_tx(tx, &s);
    }

    /// # Safety
    ///
    /// See [`split`].
    unsafe fn split<'a>(dev: *mut bindings::net_device) -> (&'a Device, Borrowed<'a, T>) {
        // SAFETY: forwarded from the caller.
        unsafe { split::<T>(dev) }
    }

    /// # Safety
    ///
    /// Called by the kernel for a device registered for `T` (see [`split`]).
    unsafe extern "C" fn ndo_open(dev: *mut bindings::net_device) -> core::ffi::c_int {
        from_result(|| {
            // SAFETY: called by the kernel for a device registered for `T`.
            let (dev, data) = unsafe { Self::split(dev) };
            T::open(dev, data)?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by the kernel for a device registered for `T` (see [`split`]).
    unsafe extern "C" fn ndo_stop(dev: *mut bindings::net_device) -> core::ffi::c_int {
        from_result(|| {
            // SAFETY: called by the kernel for a device registered for `T`.
            let (dev, data) = unsafe { Self::split(dev) };
            T::stop(dev, data)?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by the kernel for a device registered for `T` (see [`split`]).
    unsafe extern "C" fn ndo_start_xmit(
        skb: *mut bindings::sk_buff,
        dev: *mut bindings::net_device,
    ) -> bindings::netdev_tx_t {
        // SAFETY: called by the kernel for a device registered for `T`.
        let (dev, data) = unsafe { Self::split(dev) };
        // SAFETY: the stack hands `ndo_start_xmit` one reference to a valid skb.
        let Some(skb) = (unsafe { SkBuff::from_raw(skb) }) else {
            return bindings::netdev_tx_NETDEV_TX_OK;
        };
        let raw_dev = dev as *const Device as *mut bindings::net_device;
        // SAFETY: the device is valid; the queue mapping is the one the stack used to pick
        // (and lock) the packet's queue, below `num_tx_queues`.
        let txq = unsafe {
            bindings::rsnic_helper_netdev_get_tx_queue(raw_dev, u32::from(skb.queue_mapping()))
        };
        // SAFETY: this is `ndo_start_xmit`; rsnic's devices are not `lltx` (`register` clears
        // it, `rsnic_helper_set_offloads`, before the device is registered), so the stack holds `txq`'s xmit
        // lock until we return; `ctx` is dropped before that.
        let mut ctx = unsafe { XmitCtx::new(txq) };
        match T::start_xmit(skb, dev, data, &mut ctx) {
            TxOutcome::Ok => bindings::netdev_tx_NETDEV_TX_OK,
            TxOutcome::Busy(skb) => {
                // The stack keeps ownership of a packet refused with NETDEV_TX_BUSY.
                let _ = skb.into_raw();
                bindings::netdev_tx_NETDEV_TX_BUSY
            }
        }
    }

    /// # Safety
    ///
    /// Called by the kernel for a device registered for `T` (see [`split`]).
    unsafe extern "C" fn ndo_get_stats64(
        dev: *mut bindings::net_device,
        stats: *mut bindings::rtnl_link_stats64,
    ) {
        // SAFETY: called by the kernel for a device registered for `T`.
        let (dev, data) = unsafe { Self::split(dev) };
        let mut s = LinkStats64::default();
        T::get_stats64(dev, data, &mut s);
        // SAFETY: the kernel passes a valid, exclusively owned `rtnl_link_stats64`.
        let out = unsafe { &mut *stats };
        macro_rules! copy {
            ($($f:ident),*) => { $(out.$f = s.$f;)* };
        }
        copy!(
            rx_packets,
            tx_packets,
            rx_bytes,
            tx_bytes,
            rx_errors,
            tx_errors,
            rx_dropped,
            tx_dropped,
            multicast,
            rx_length_errors,
            rx_crc_errors,
            rx_missed_errors
        );
    }

    /// # Safety
    ///
    /// Called by the kernel's netdev watchdog for a device registered for `T` (see
    /// [`split`]).
    unsafe extern "C" fn ndo_tx_timeout(dev: *mut bindings::net_device, queue: core::ffi::c_uint) {
        // SAFETY: called by the kernel for a device registered for `T`.
        let (dev, data) = unsafe { Self::split(dev) };
        T::tx_timeout(dev, data, queue);
    }

    /// # Safety
    ///
    /// Called by the kernel for a device registered for `T` (see [`split`]).
    unsafe extern "C" fn ndo_set_features(
        dev: *mut bindings::net_device,
        features: bindings::netdev_features_t,
    ) -> core::ffi::c_int {
        from_result(|| {
            // SAFETY: called by the kernel for a device registered for `T`.
            let (dev, data) = unsafe { Self::split(dev) };
            // SAFETY: a pure bit test.
            let loopback = unsafe { bindings::rsnic_helper_features_loopback(features) };
            // SAFETY: a pure bit test.
            let rx_csum = unsafe { bindings::rsnic_helper_features_rxcsum(features) };
            // SAFETY: a pure bit test.
            let ntuple = unsafe { bindings::rsnic_helper_features_ntuple(features) };
            // SAFETY: a pure bit test.
            let rx_hash = unsafe { bindings::rsnic_helper_features_rxhash(features) };
            // SAFETY: a pure bit test.
            let rx_vlan = unsafe { bindings::rsnic_helper_features_rx_vlan(features) };
            // SAFETY: a pure bit test.
            let vlan_filter = unsafe { bindings::rsnic_helper_features_vlan_filter(features) };
            T::set_features(
                dev,
                data,
                Features {
                    loopback,
                    rx_csum,
                    ntuple,
                    rx_hash,
                    rx_vlan,
                    vlan_filter,
                },
            )?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by the kernel for a device registered for `T` (see [`split`]).
    unsafe extern "C" fn ndo_vlan_rx_add_vid(
        dev: *mut bindings::net_device,
        proto: bindings::__be16,
        vid: u16,
    ) -> core::ffi::c_int {
        // SAFETY: forwarded from the caller.
        unsafe { Self::vlan_vid(dev, proto, vid, T::vlan_rx_add_vid) }
    }

    /// # Safety
    ///
    /// Called by the kernel for a device registered for `T` (see [`split`]).
    unsafe extern "C" fn ndo_vlan_rx_kill_vid(
        dev: *mut bindings::net_device,
        proto: bindings::__be16,
        vid: u16,
    ) -> core::ffi::c_int {
        // SAFETY: forwarded from the caller.
        unsafe { Self::vlan_vid(dev, proto, vid, T::vlan_rx_kill_vid) }
    }

    /// `op` (the add or the kill) of an 802.1Q VLAN id; another protocol's is refused: only
    /// 802.1Q ids reach a device without NETIF_F_HW_VLAN_STAG_FILTER.
    ///
    /// # Safety
    ///
    /// Called by the kernel for a device registered for `T` (see [`split`]).
    unsafe fn vlan_vid(
        dev: *mut bindings::net_device,
        proto: bindings::__be16,
        vid: u16,
        op: impl FnOnce(&Device, Borrowed<'_, T>, u16) -> Result,
    ) -> core::ffi::c_int {
        from_result(|| {
            // SAFETY: called by the kernel for a device registered for `T`.
            let (dev, data) = unsafe { Self::split(dev) };
            if u16::from_be(proto) != ETH_P_8021Q {
                return Err(super::eopnotsupp());
            }
            op(dev, data, vid)?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by the kernel for a device registered for `T` (see [`split`]), with a valid
    /// `netdev_bpf`.
    unsafe extern "C" fn ndo_bpf(
        dev: *mut bindings::net_device,
        bpf: *mut bindings::netdev_bpf,
    ) -> core::ffi::c_int {
        from_result(|| {
            // SAFETY: called by the kernel for a device registered for `T`.
            let (dev, data) = unsafe { Self::split(dev) };
            // SAFETY: the core passes a valid command structure for the call.
            let bpf = unsafe { &mut *bpf };
            match bpf.command {
                bindings::bpf_netdev_command_XDP_SETUP_PROG => {
                    // SAFETY: for XDP_SETUP_PROG the union holds `prog` and `extack`.
                    let (raw, extack) = unsafe {
                        (
                            bpf.__bindgen_anon_1.__bindgen_anon_1.prog,
                            bpf.__bindgen_anon_1.__bindgen_anon_1.extack,
                        )
                    };
                    let mut ack = ExtAck::from_raw(extack);
                    // The core moved one reference into the driver (dev_xdp_install). The
                    // driver gets its own reference; the core's is put once the driver took
                    // the program, and the core puts it itself on failure.
                    // SAFETY: `raw` is the live program the core holds a reference on.
                    let prog = NonNull::new(raw).map(|p| unsafe { BpfProg::inc(p) });
                    T::xdp_setup(dev, data, prog, &mut ack)?;
                    if let Some(p) = NonNull::new(raw) {
                        // SAFETY: the core's moved reference, now owned by nobody else.
                        unsafe { bindings::rsnic_helper_bpf_prog_put(p.as_ptr()) };
                    }
                    Ok(0)
                }
                bindings::bpf_netdev_command_XDP_SETUP_XSK_POOL => {
                    // SAFETY: for XDP_SETUP_XSK_POOL the union holds `xsk`.
                    let (raw, queue) = unsafe {
                        (
                            bpf.__bindgen_anon_1.xsk.pool,
                            bpf.__bindgen_anon_1.xsk.queue_id,
                        )
                    };
                    // SAFETY: the core registers (non-NULL) or unregisters the queue's pool.
                    let pool = NonNull::new(raw).map(|p| unsafe { XskPool::from_raw(p) });
                    T::xsk_setup(dev, data, pool, u32::from(queue))?;
                    Ok(0)
                }
                _ => Err(EINVAL),
            }
        })
    }

    /// # Safety
    ///
    /// Called by the kernel for a device registered for `T` (see [`split`]).
    unsafe extern "C" fn ndo_xsk_wakeup(
        dev: *mut bindings::net_device,
        queue: u32,
        _flags: u32,
    ) -> core::ffi::c_int {
        from_result(|| {
            // SAFETY: called by the kernel for a device registered for `T`.
            let (dev, data) = unsafe { Self::split(dev) };
            T::xsk_wakeup(dev, data, queue)?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by the kernel for a device registered for `T` (see [`split`]), with `n` valid
    /// frames.
    unsafe extern "C" fn ndo_xdp_xmit(
        dev: *mut bindings::net_device,
        n: core::ffi::c_int,
        frames: *mut *mut bindings::xdp_frame,
        flags: u32,
    ) -> core::ffi::c_int {
        if flags & !bindings::XDP_XMIT_FLUSH != 0 || n < 0 || frames.is_null() {
            return EINVAL.to_errno();
        }
        // SAFETY: called by the kernel for a device registered for `T`.
        let (dev, data) = unsafe { Self::split(dev) };
        // SAFETY: the core passes an array of `n` frames it owns until we report them sent.
        let slice = unsafe { core::slice::from_raw_parts(frames, n as usize) };
        // SAFETY: as above.
        let mut batch = unsafe { XdpFrames::new(slice) };
        T::xdp_xmit(dev, data, &mut batch, flags & bindings::XDP_XMIT_FLUSH != 0);
        batch.kept() as core::ffi::c_int
    }

    /// # Safety
    ///
    /// Called by the kernel for a device registered for `T` (see [`split`]), with the
    /// device's address lock held (`__dev_set_rx_mode`).
    unsafe extern "C" fn ndo_set_rx_mode(dev: *mut bindings::net_device) {
        // SAFETY: called by the kernel for a device registered for `T`.
        let (device, data) = unsafe { Self::split(dev) };
        let mut m = RxMode::new([0; 6]);
        let (mut uc_total, mut mc_total) = (0u32, 0u32);
        // SAFETY: the device is valid and the core holds its address lock around
        // `ndo_set_rx_mode`, under which the lists and the address are stable; every output
        // pointer is a live local, and the helper writes at most `RX_MODE_ADDRS` entries of
        // ETH_ALEN bytes into each of the two arrays, which are that large.
        unsafe {
            bindings::rsnic_helper_rx_mode_snapshot(
                dev,
                m.addr.as_mut_ptr(),
                &mut m.promisc,
                &mut m.allmulti,
                &mut m.broadcast,
                m.uc.as_mut_ptr().cast(),
                RX_MODE_ADDRS as u32,
                &mut uc_total,
                m.mc.as_mut_ptr().cast(),
                RX_MODE_ADDRS as u32,
                &mut mc_total,
            )
        };
        m.uc_total = uc_total;
        m.mc_total = mc_total;
        T::set_rx_mode(device, data, &m);
    }

    /// # Safety
    ///
    /// Called by the kernel for a device registered for `T` (see [`split`]), under RTNL,
    /// with `addr` a `struct sockaddr` of the device's type.
    unsafe extern "C" fn ndo_set_mac_address(
        dev: *mut bindings::net_device,
        addr: *mut c_void,
    ) -> core::ffi::c_int {
        from_result(|| {
            if addr.is_null() {
                return Err(EINVAL);
            }
            // SAFETY: called by the kernel for a device registered for `T`.
            let (device, data) = unsafe { Self::split(dev) };
            let mut mac = [0u8; 6];
            // SAFETY: `addr` is the caller's valid `struct sockaddr` (`dev_set_mac_address`
            // checked its family is the device's), whose `sa_data` holds at least ETH_ALEN
            // bytes (14); `mac` is a distinct local of ETH_ALEN bytes.
            unsafe {
                let data = bindings::rsnic_helper_sockaddr_data(addr);
                core::ptr::copy_nonoverlapping(data, mac.as_mut_ptr(), mac.len());
            }
            let change = MacChange {
                dev: device,
                mac,
                _not_send: PhantomData,
            };
            T::set_mac_address(device, data, change)?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by the kernel for a device registered for `T` (see [`split`]).
    unsafe extern "C" fn ndo_change_mtu(
        dev: *mut bindings::net_device,
        new_mtu: core::ffi::c_int,
    ) -> core::ffi::c_int {
        from_result(|| {
            // SAFETY: called by the kernel for a device registered for `T`.
            let (device, data) = unsafe { Self::split(dev) };
            let mtu = u32::try_from(new_mtu).map_err(|_| EINVAL)?;
            T::change_mtu(device, data, mtu)?;
            // SAFETY: `ndo_change_mtu` runs under RTNL, the lock that serialises MTU writes;
            // the volatile write is the WRITE_ONCE readers pair with.
            unsafe { core::ptr::addr_of_mut!((*dev).mtu).write_volatile(mtu) };
            Ok(0)
        })
    }
}

/// A registered Ethernet device; unregistered and freed on drop.
///
/// # Invariants
///
/// `dev` points to a device allocated with `alloc_etherdev_mqs()` and registered with
/// `register_netdev()`, whose private area holds a pointer from `T::Data::into_foreign()`.
pub struct Registration<T: Operations + ethtool::Operations> {
    dev: NonNull<bindings::net_device>,
    /// The device's devlink port, if it has one: released after the device is
    /// unregistered.
    devlink_port: Option<Arc<super::super::devlink::Port>>,
    _t: PhantomData<T>,
}

// SAFETY: the registration only owns the device (and a reference to its devlink port, which
// is `Send + Sync`); dropping it (unregistering) is allowed from any process context, and
// `T::Data` is `Send + Sync`.
unsafe impl<T: Operations + ethtool::Operations> Send for Registration<T> {}
// SAFETY: shared references only hand out `&Device`, which is `Sync`.
unsafe impl<T: Operations + ethtool::Operations> Sync for Registration<T> {}

impl<T: Operations + ethtool::Operations> Registration<T> {
    /// Allocates an Ethernet device with a random locally administered MAC address, stores
    /// `data` in it and registers it. Takes RTNL: call it from process context without RTNL.
    ///
    /// `parent`, if given, becomes the device's parent (`SET_NETDEV_DEV()`).
    pub fn register(
        data: T::Data,
        config: &Config,
        parent: Option<&super::super::dma::DmaDevice>,
    ) -> Result<Self> {
        Self::register_with_devlink_port(data, config, parent, None)
    }

    /// As [`Registration::register`], the device being the network device of devlink port
    /// `devlink_port` (`SET_NETDEV_DEVLINK_PORT`: `devlink port show` names it, and the
    /// port's health reporters are found through it). The registration keeps the port
    /// until the device is unregistered.
    pub fn register_with_devlink_port(
        data: T::Data,
        config: &Config,
        parent: Option<&super::super::dma::DmaDevice>,
        devlink_port: Option<Arc<super::super::devlink::Port>>,
    ) -> Result<Self> {
        if config.tx_queues == 0 || config.rx_queues == 0 || config.min_mtu > config.max_mtu {
            return Err(EINVAL);
        }
        if matches!(config.mac, Some(m) if m[0] & 1 != 0 || m == [0; 6]) {
            return Err(EINVAL);
        }
        // SAFETY: plain allocation; the private area holds one pointer.
        let ptr = unsafe {
            bindings::alloc_etherdev_mqs(
                core::mem::size_of::<*const c_void>() as _,
                config.tx_queues,
                config.rx_queues,
            )
        };
        let dev = NonNull::new(ptr).ok_or(ENOMEM)?;
        // SAFETY: `ptr` is a freshly allocated, not yet registered device that nobody else
        // sees (so its fields, the feature sets among them, are ours to write and the
        // helpers below may set them without locks); its private area is large enough for
        // one pointer; the op tables are `'static` constants.
        unsafe {
            bindings::rsnic_helper_netdev_priv(ptr)
                .cast::<*const c_void>()
                .write(data.into_foreign());
            (*ptr).netdev_ops = &Adapter::<T>::NDO;
            (*ptr).ethtool_ops = ethtool::Adapter::<T>::table(config.pause);
            if T::HAS_QUEUE_STATS {
                (*ptr).stat_ops = &Adapter::<T>::STAT_OPS;
            }
            if let Some(parent) = parent {
                (*ptr).dev.parent = parent.raw();
            }
            // The port stays registered while the device is (the registration holds it).
            if let Some(p) = &devlink_port {
                bindings::rsnic_helper_set_netdev_devlink_port(ptr, p.raw());
            }
            (*ptr).dev_port = config.dev_port;
            (*ptr).min_mtu = config.min_mtu;
            (*ptr).max_mtu = config.max_mtu;
            if config.watchdog_timeo_ms != 0 {
                bindings::rsnic_helper_set_watchdog_timeo(ptr, config.watchdog_timeo_ms);
            }
            // No carrier until the driver says so (before registration this only sets the
            // state bit).
            bindings::netif_carrier_off(ptr);
            match &config.mac {
                // `eth_hw_addr_set` copies `dev_addr_len` (ETH_ALEN) bytes from the array.
                Some(mac) => bindings::rsnic_helper_eth_hw_addr_set(ptr, mac.as_ptr()),
                None => bindings::rsnic_helper_eth_hw_addr_random(ptr),
            }
            let o = config.offloads;
            bindings::rsnic_helper_set_offloads(ptr, o.sg, o.tx_csum, o.tso, o.rx_csum);
            bindings::rsnic_helper_set_offloads_off(ptr, o.loopback);
            if o.ntuple {
                bindings::rsnic_helper_set_ntuple(ptr);
            }
            if o.rx_hash {
                bindings::rsnic_helper_set_rxhash(ptr);
            }
            if config.unicast_filter {
                bindings::rsnic_helper_set_unicast_flt(ptr);
            }
            if o.vlan != VlanOffload::None {
                bindings::rsnic_helper_set_vlan_offloads(ptr, o.vlan == VlanOffload::Changeable);
            }
            if o.vlan_filter {
                bindings::rsnic_helper_set_vlan_filter(ptr);
            }
            if config.xdp_features != 0 {
                bindings::rsnic_helper_set_xdp_features(ptr, config.xdp_features);
            }
            // Carrier starts off: the driver turns it on when the link comes up.
            bindings::netif_carrier_off(ptr);
        }
        // SAFETY: the device is fully set up.
        let ret = to_result(unsafe { bindings::register_netdev(ptr) });
        if let Err(e) = ret {
            // SAFETY: registration failed, so no callback ran or will run; reclaim the data
            // stored above and free the never-registered device.
            unsafe {
                let slot = bindings::rsnic_helper_netdev_priv(ptr).cast::<*const c_void>();
                drop(T::Data::from_foreign(slot.read()));
                bindings::free_netdev(ptr);
            }
            return Err(e);
        }
        Ok(Self {
            dev,
            devlink_port,
            _t: PhantomData,
        })
    }

    /// The registered device.
    pub fn device(&self) -> &Device {
        // SAFETY: the device stays valid until `drop` (type invariant).
        unsafe { Device::from_raw(self.dev.as_ptr()) }
    }
}

impl<T: Operations + ethtool::Operations> Drop for Registration<T> {
    fn drop(&mut self) {
        let ptr = self.dev.as_ptr();
        // SAFETY: the device is registered (type invariant). `unregister_netdev()` takes
        // RTNL, stops the device and waits until no callback runs and every reference is put;
        // after it, the private data can be reclaimed and the device freed.
        unsafe {
            bindings::unregister_netdev(ptr);
            let slot = bindings::rsnic_helper_netdev_priv(ptr).cast::<*const c_void>();
            let data = slot.read();
            bindings::free_netdev(ptr);
            drop(T::Data::from_foreign(data));
        }
        // Unregistered: the devlink port may go now.
        drop(self.devlink_port.take());
    }
}
