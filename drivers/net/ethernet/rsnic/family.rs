// SPDX-License-Identifier: GPL-2.0

//! Device families: what differs between a ConnectX (mlx5) port and a MANA (GDMA) port.
//!
//! The channel, NAPI, port and ethtool machinery is written once, generic over a [`Family`];
//! each family supplies its control path (bring-up through the device's control interface,
//! queue creation, RSS, counters), its queues (SQ with its TX CQ, RQ with its RX CQ, and the
//! event queue behind the interrupt) and its counter names. It reaches its device only
//! through the bus ([`crate::bus::Function`]: registers, DMA memory, vectors). Every
//! call is resolved at compile time (monomorphised): there is no function pointer on the
//! transmit or NAPI path. The rows of `ethtool -S` ([`stats::Row`]) are function pointers,
//! read on the control path only.
//!
//! The contract sits below the code that uses it (`channel`, `port`): the vocabulary its
//! traits speak lives here too, and nothing here uses the channel or port code
//! (`scripts/check-layers.sh` checks it). `params`: what channels are built with
//! ([`params::ChannelParams`], [`params::Moderation`], the typed private flags); `env`: the
//! kernel adapters the data path calls back into ([`env::TxSkb`], [`env::TxEnv`],
//! [`env::RxEnv`]); `stats`: a channel's counters ([`stats::ChannelStats`]). The XDP
//! vocabulary (`crate::xdp`) is below it.
//!
//! Upstream counterpart: none as one file; what mlx5e keeps in `en.h` (the params and
//! stats structures its files share) and what `mana.h` declares.

pub(crate) mod env;
mod macros;
pub(crate) mod mana;
pub(crate) mod mlx5;
pub(crate) mod params;
pub(crate) mod stats;

pub(crate) use macros::{datapath_common, kernel_error_from};

use crate::bus::{Bar, Function};
use crate::family::env::{RxEnv, TxEnv, TxSkb};
use crate::family::params::{ChannelParams, Moderation, PrivFlag, PrivFlags};
use crate::family::stats::{ChannelStats, Counters, Row};
use crate::hwif::pkt::{RxFrags, TxReject, TxRejectReason};
use crate::kernel_ext::net::device::{MacChange, RxMode};
use crate::kernel_ext::net::ethtool;
use crate::kernel_ext::net::page_pool::{PagePool, RxPage};
use crate::kernel_ext::net::xsk::XskBuf;
use crate::ntuple::Rule;
use crate::rss::{Fields, Flow, RssChange, RssSpec, FLOWS};
use crate::xdp::{XdpEnv, XdpSqKind, XdpTx, XskRxEnv};
use kernel::{
    prelude::*,
    str::{CStr, CString},
    sync::Arc,
};

/// Ring size limits of a family, as log2 of the number of entries (WQEs for MANA, WQEBBs
/// for the mlx5 SQ).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RingLimits {
    /// Smallest size.
    pub(crate) min: u8,
    /// Size at load.
    pub(crate) default: u8,
    /// Largest size.
    pub(crate) max: u8,
}

/// What a receive completion says about a packet, in the stack's terms.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RxMeta {
    /// Packet length.
    pub(crate) len: u32,
    /// The device verified the L3 and L4 checksums (`CHECKSUM_UNNECESSARY`).
    pub(crate) csum_ok: bool,
    /// The device's ones' complement sum of the IP datagram (ConnectX's CQE `check_sum`),
    /// for `CHECKSUM_COMPLETE` ([`crate::hwif::csum::complete`]); `None` from a device that
    /// gives none (MANA).
    pub(crate) sum: Option<u16>,
    /// RSS hash.
    pub(crate) hash: u32,
    /// Hash type: 0 none, 1 L3, 2 L4.
    pub(crate) hash_type: u8,
    /// The 802.1Q tag the device stripped from the frame (MANA: its VLAN id), which the skb
    /// gets as its accelerated tag.
    pub(crate) vlan: Option<u16>,
}

/// The counters every family has, for `ndo_get_stats64` and the netdev queue stats.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Summary {
    /// Packets queued for transmission.
    pub(crate) tx_packets: u64,
    /// Bytes queued for transmission.
    pub(crate) tx_bytes: u64,
    /// Packets dropped on the transmit side (refused, or still queued at close).
    pub(crate) tx_dropped: u64,
    /// Error completions of sent packets.
    pub(crate) tx_errors: u64,
    /// TX queue stops by the driver.
    pub(crate) tx_stop: u64,
    /// TX queue wakes by the completion path.
    pub(crate) tx_wake: u64,
    /// Packets handed to the stack.
    pub(crate) rx_packets: u64,
    /// Bytes handed to the stack.
    pub(crate) rx_bytes: u64,
    /// Received packets dropped by the driver.
    pub(crate) rx_dropped: u64,
    /// Packets handed to the stack that went to a group address (multicast or broadcast).
    pub(crate) multicast: u64,
    /// Receive errors (bad or unhandled completions).
    pub(crate) rx_errors: u64,
    /// Receive buffer allocation failures.
    pub(crate) rx_alloc_fail: u64,
}

/// What the device itself counts for `ndo_get_stats64` (`ip -s -s link`) beyond the
/// channels' counters, from the port's last [`Control::query_counters`], as `mlx5e_get_stats`
/// reads its Q counter, vport and PPCNT counters (0 where a family's device has none).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DeviceLinkStats {
    /// Received frames with a length error (in range, out of range, too long).
    pub(crate) rx_length_errors: u64,
    /// Received frames with a bad FCS.
    pub(crate) rx_crc_errors: u64,
    /// Received frames dropped by the device for want of a receive buffer.
    pub(crate) rx_missed_errors: u64,
}

/// Result of reaping a TX CQ.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TxReaped {
    /// CQEs were left for the next poll (the poll's limit was hit).
    pub(crate) busy: bool,
    /// Nothing is outstanding any more, or the SQ stopped in an error state.
    pub(crate) idle: bool,
    /// CQEs read.
    pub(crate) cqes: u32,
}

/// Why a queue stopped: what the device reported or what broke the protocol, for the log.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QueueFault {
    /// What happened ("error CQE", "bad wqe_counter", ...).
    pub(crate) what: &'static str,
    /// The CQE's syndrome (0 when the driver found the fault).
    pub(crate) syndrome: u8,
    /// The WQE counter the CQE named.
    pub(crate) wqe_counter: u16,
}

impl QueueFault {
    /// A fault the driver found (no syndrome, no WQE counter).
    pub(crate) const fn found(what: &'static str) -> Self {
        Self {
            what,
            syndrome: 0,
            wqe_counter: 0,
        }
    }
}

/// A queue as `devlink health diagnose` shows it: the driver's view of its ring and CQ.
#[derive(Clone, Copy, Default, Debug)]
pub(crate) struct QueueDiag {
    /// The queue's number on the device (SQN, RQN; MANA: the WQ id), if the ring knows it.
    pub(crate) qn: Option<u32>,
    /// Ring size (ConnectX: WQEBBs of an SQ, WQEs of an RQ; MANA: bytes).
    pub(crate) size: u32,
    /// Producer counter (free-running; MANA: in 32-byte units).
    pub(crate) pc: u32,
    /// Consumer counter (as `pc`).
    pub(crate) cc: u32,
    /// The CQ's number on the device.
    pub(crate) cqn: u32,
    /// The CQ's consumer counter (CQEs consumed).
    pub(crate) cq_cc: u32,
}

/// The queues of a channel, just opened.
pub(crate) struct Opened<F: DataPath> {
    /// The SQ with its TX CQ (goes to the port's TX slot).
    pub(crate) sq: F::Sq,
    /// The RQ with its RX CQ, buffers posted.
    pub(crate) rx: F::Rx,
    /// Interrupt state (MANA: the event queue).
    pub(crate) irq: F::Irq,
    /// Device RQ id (for the RSS table).
    pub(crate) rqn: u32,
}

/// Where a channel is being opened.
pub(crate) struct OpenCtx<'a, F: Control> {
    /// The port's function on the bus (registers, DMA parent).
    pub(crate) hw: &'a Arc<Function>,
    /// The DMA parent.
    pub(crate) dma: &'a Arc<crate::kernel_ext::dma::DmaDevice>,
    /// The function's vector of the channel (its interrupt).
    pub(crate) intr: usize,
    /// The channel's page pool (RX buffers of [`Control::open`]; `None` when only AF_XDP
    /// zero-copy queues are made, which take their buffers from the socket).
    pub(crate) pool: Option<&'a PagePool>,
    /// The port's function (queue commands).
    pub(crate) func: &'a Arc<F::Func>,
}

/// A counter getter of `ethtool -S` (control path only).
pub(crate) type Get<T> = fn(&T) -> u64;

/// Smallest MTU a port accepts.
pub(crate) const MIN_MTU: u32 = 68;
/// Largest MTU a port accepts (its RX buffers' bound; a family's device may allow less,
/// [`Control::max_mtu`]).
pub(crate) const MAX_MTU: u32 = 9600;
/// A new port's MTU.
pub(crate) const DEFAULT_MTU: u32 = 1500;

/// The data path of a family: its queues and what NAPI and the transmit path do with them
/// (per packet; everything monomorphised).
pub(crate) trait DataPath: Sized + Send + Sync + 'static {
    /// The transmit queue with its CQ, as the TX slot holds it.
    type Sq: Send;
    /// The receive queue with its CQ.
    type Rx: Send;
    /// Per-channel interrupt state.
    type Irq: Send;
    /// Per-SQ counters (declared with [`crate::family::stats::counters!`]'s view of them).
    type TxStats: Counters;
    /// Per-RQ counters (likewise).
    type RxStats: Counters;
    /// An XDP SQ with its CQ (see [`crate::xdp`]); families without XDP SQs use `()`
    /// (MANA has only the XSK SQ).
    type XdpSq: Send;
    /// An XSK RQ (AF_XDP zero-copy) with its CQ; families without zero-copy use `()`.
    type XskRx: Send;

    /// Transmits one packet; the doorbell is rung when `more` is false or the queue stops.
    fn xmit(
        sq: &mut Self::Sq,
        pkt: TxSkb,
        more: bool,
        env: &mut TxEnv<'_>,
    ) -> core::result::Result<(), TxReject<TxSkb>>;
    /// Reaps TX completions, releasing completed packets to `release`.
    fn tx_reap(sq: &mut Self::Sq, env: &mut TxEnv<'_>, release: impl FnMut(TxSkb)) -> TxReaped;
    /// Releases every outstanding packet (the device no longer runs the SQ). Returns how
    /// many.
    fn tx_drain(sq: &mut Self::Sq, env: &mut TxEnv<'_>, release: impl FnMut(TxSkb)) -> u32;
    /// Polls the RX CQ for up to `budget` packets and re-posts buffers (one RQ doorbell per
    /// poll). Each packet goes to `deliver` as its first page and, if it spans several
    /// ([`Family::RX_SCATTER`]), the pages after it. Returns the work done (CQEs read).
    fn rx_poll(
        rx: &mut Self::Rx,
        env: &mut RxEnv<'_>,
        budget: u32,
        deliver: impl FnMut(RxPage, &RxMeta, RxFrags<'_, RxPage>),
    ) -> u32;
    /// The RQ is short of buffers because an allocation failed while posting them: NAPI
    /// must poll again (and is scheduled when a channel starts with it short), as mlx5e's
    /// `mlx5e_post_rx_wqes` reports busy, for an RQ left empty with nothing to complete is
    /// never refilled otherwise.
    fn rx_short(rx: &Self::Rx) -> bool;
    /// Gives every posted RX buffer back.
    fn rx_drain(rx: &mut Self::Rx, env: &mut RxEnv<'_>);
    /// Arms the TX CQ (NAPI completed).
    fn arm_tx(sq: &mut Self::Sq, mmio: &Bar<'_>);
    /// Arms the RX CQ (NAPI completed).
    fn arm_rx(rx: &mut Self::Rx, mmio: &Bar<'_>);
    /// NAPI goes on polling after `work` TX CQEs: CQ doorbells the hardware needs anyway.
    fn tx_continue(sq: &mut Self::Sq, work: u32, mmio: &Bar<'_>);
    /// NAPI goes on polling after `work` RX CQEs: CQ doorbells the hardware needs anyway.
    fn rx_continue(rx: &mut Self::Rx, work: u32, mmio: &Bar<'_>);
    /// Arms the interrupt state when the channel starts.
    fn irq_start(irq: &mut Self::Irq, mmio: &Bar<'_>);
    /// The channel's vector fired: returns whether NAPI must be scheduled.
    fn irq_handle(irq: &mut Self::Irq, mmio: &Bar<'_>) -> bool;
    /// Looks for events that waited without an interrupt (a lost interrupt: the TX
    /// watchdog fired): consumes them and re-arms, as the interrupt would have. Returns how
    /// many there were (NAPI must then be scheduled).
    fn irq_recover(irq: &mut Self::Irq, mmio: &Bar<'_>) -> u32;
    /// Events that named a queue the channel does not have (a corrupt event; MANA's EQE CQ
    /// id check).
    fn irq_bad_events(_irq: &Self::Irq) -> u64 {
        0
    }
    /// Whether [`DataPath::irq_bad_events`] counts anything (`ethtool -S` shows it then, as
    /// `eqe_bad_cq`).
    const IRQ_BAD_EVENTS: bool = false;
    /// TX counters and CQ arms.
    fn tx_stats(sq: &Self::Sq) -> (Self::TxStats, u64);
    /// RX counters and CQ arms.
    fn rx_stats(rx: &Self::Rx) -> (Self::RxStats, u64);
    /// Posts one frame on an XDP SQ without ringing.
    fn xdp_sq_xmit(
        _sq: &mut Self::XdpSq,
        frame: XdpTx,
        _env: &mut XdpEnv<'_>,
    ) -> core::result::Result<(), TxReject<XdpTx>> {
        Err(TxReject {
            pkt: frame,
            reason: TxRejectReason::SqError,
        })
    }
    /// Posts a NOP on the XDP SQ (an ICO SQ's wake-up) and rings; `false` if it had no room.
    fn xdp_sq_nop(_sq: &mut Self::XdpSq, _env: &mut XdpEnv<'_>) -> bool {
        false
    }
    /// Rings the XDP SQ's doorbell for what was posted (once per NAPI poll or batch).
    fn xdp_sq_flush(_sq: &mut Self::XdpSq, _env: &mut XdpEnv<'_>) {}
    /// Reaps the XDP SQ's completions.
    fn xdp_sq_reap(
        _sq: &mut Self::XdpSq,
        _env: &mut XdpEnv<'_>,
        _release: impl FnMut(XdpTx),
    ) -> TxReaped {
        TxReaped {
            idle: true,
            ..TxReaped::default()
        }
    }
    /// Releases every frame still on the XDP SQ (the device no longer runs it).
    fn xdp_sq_drain(
        _sq: &mut Self::XdpSq,
        _env: &mut XdpEnv<'_>,
        _release: impl FnMut(XdpTx),
    ) -> u32 {
        0
    }
    /// Arms the XDP SQ's CQ (NAPI completed).
    fn xdp_sq_arm(_sq: &mut Self::XdpSq, _mmio: &Bar<'_>) {}
    /// The XDP SQ's counters and CQ arms.
    fn xdp_sq_stats(_sq: &Self::XdpSq) -> (Self::TxStats, u64) {
        (Self::TxStats::default(), 0)
    }
    /// Polls the XSK RQ for up to `budget` frames and re-posts buffers from the pool.
    fn xsk_rx_poll(
        _rx: &mut Self::XskRx,
        _env: &mut XskRxEnv<'_>,
        _budget: u32,
        _deliver: impl FnMut(XskBuf, &RxMeta),
    ) -> u32 {
        0
    }
    /// Frees every posted buffer of the XSK RQ.
    fn xsk_rx_drain(_rx: &mut Self::XskRx, _env: &mut XskRxEnv<'_>) {}
    /// Arms the XSK RQ's CQ.
    fn xsk_rx_arm(_rx: &mut Self::XskRx, _mmio: &Bar<'_>) {}
    /// The XSK RQ's counters and CQ arms.
    fn xsk_rx_stats(_rx: &Self::XskRx) -> (Self::RxStats, u64) {
        (Self::RxStats::default(), 0)
    }

    /// The fault that stopped the SQ (an error CQE, or a CQE that broke the protocol), if
    /// any: the channel then recovers the SQ ([`Control::queue_to_reset`]).
    fn tx_fault(_sq: &Self::Sq) -> Option<QueueFault> {
        None
    }
    /// Resets a drained SQ's producer and consumer state, its error and its doorbell record
    /// after recovery; `false` if packets are still outstanding.
    fn tx_reset(_sq: &mut Self::Sq) -> bool {
        false
    }
    /// The fault that stopped the RQ, if any (see [`DataPath::tx_fault`]).
    fn rx_fault(_rx: &Self::Rx) -> Option<QueueFault> {
        None
    }
    /// The regular SQ as `devlink health diagnose` shows it.
    fn tx_diag(_sq: &Self::Sq) -> QueueDiag {
        QueueDiag::default()
    }
    /// The regular RQ as `devlink health diagnose` shows it.
    fn rx_diag(_rx: &Self::Rx) -> QueueDiag {
        QueueDiag::default()
    }
    /// Whether an XDP SQ (XDP_TX, redirect, XSK or ICO) stopped on a fault. No family
    /// resets these queues one by one (mlx5e does not either): the port's channels are
    /// reopened.
    fn xdp_sq_fault(_sq: &Self::XdpSq) -> bool {
        false
    }
    /// Whether an XSK RQ stopped on a fault (recovered as [`DataPath::xdp_sq_fault`]).
    fn xsk_rx_fault(_rx: &Self::XskRx) -> bool {
        false
    }
    /// Consumes and discards the CQEs of an RQ that stopped on a fault (its buffers are
    /// taken back by [`DataPath::rx_drain`]), so that the CQ is armed past them and does
    /// not fire again at once. Returns how many.
    fn rx_discard(_rx: &mut Self::Rx, _env: &mut RxEnv<'_>) -> u32 {
        0
    }
    /// Resets a drained RQ after recovery (as [`DataPath::tx_reset`]) and posts buffers.
    fn rx_reset(_rx: &mut Self::Rx, _env: &mut RxEnv<'_>) -> bool {
        false
    }

    /// Packets an RQ received (whatever became of them).
    fn rx_packets(s: &Self::RxStats) -> u64;
    /// Bytes an RQ received.
    fn rx_bytes(s: &Self::RxStats) -> u64;
    /// Packets an SQ sent (DIM's TX sample).
    fn tx_packets(s: &Self::TxStats) -> u64;
    /// Bytes an SQ sent.
    fn tx_bytes(s: &Self::TxStats) -> u64;
    /// Packets an SQ refused or dropped (`tx_queue_dropped`, with the channel's own).
    fn tx_dropped(s: &Self::TxStats) -> u64;
}

/// The control path of a family: bring-up and teardown through the device's control
/// interface, the port's state, the channels' device queues, RSS and the hardware counters
/// (process context; may sleep unless said otherwise).
pub(crate) trait Control: DataPath {
    /// The control state of one port's function after bring-up (ConnectX: its command queue
    /// and what bring-up created and learnt; MANA: the device's hardware channel, shared by
    /// its ports, and the vport's configuration).
    type Func: Send + Sync;
    /// The port's hardware counters, as the device reports them through its control
    /// interface (ConnectX: QUERY_VPORT_COUNTER).
    type HwCounters: Copy + Default + Send;
    /// Ids of a channel's device queues, for teardown (unused ones `None`).
    type Queues: Copy + Default + Send + Sync;
    /// The family's private flags (`ethtool --show-priv-flags`), with the family's upstream
    /// names: the channels are built with a [`PrivFlags`] set of them.
    type PrivFlag: PrivFlag;

    /// Asks the device for the port's hardware counters (`ethtool -S`). Sleeps.
    fn query_counters(hw: &Arc<Function>, func: &Arc<Self::Func>) -> Result<Self::HwCounters>;
    /// What `ndo_get_stats64` shows of the hardware counters `c` (none by default: upstream
    /// mana's `mana_get_stats64` reports only its queues' counters).
    fn link_stats(_c: &Self::HwCounters) -> DeviceLinkStats {
        DeviceLinkStats::default()
    }

    /// Brings function `hw` up through the device's control interface, logging which step
    /// failed (probe fails with its errno): one port per function on ConnectX, the vports
    /// the device reports on MANA (one hardware channel per function, shared by its
    /// vports, as upstream mana's `mana_probe` makes a netdev per vport). Returns the ports'
    /// control states, in port order; on a failure nothing stays up. Sleeps.
    fn bring_up(hw: &Arc<Function>) -> Result<KVec<Arc<Self::Func>>>;
    /// The port's index among its function's ports (0 for a function with one port).
    fn port_index(_func: &Self::Func) -> usize {
        0
    }
    /// The function's vector that channel `ch` of the port interrupts on (what the driver
    /// names to the device for the channel's EQ and registers its handler on), or `None`
    /// if there is none for it. Vectors may be shared (MANA's vports share the function's,
    /// as upstream's EQs do).
    fn channel_vector(hw: &Function, func: &Self::Func, ch: u32) -> Option<usize>;
    /// Most channels the port can have (`ethtool -l`'s maximum, at most
    /// [`crate::family::params::MAX_CHANNELS`]).
    fn max_channels(hw: &Function, func: &Self::Func) -> u32;
    /// Undoes [`Family::bring_up`] (at removal; failures are logged). Sleeps.
    fn tear_down(hw: &Arc<Function>, func: &Self::Func);
    /// Gives the function its netdev, for the carrier, and lets its events in (`None` before
    /// unregistering: the events are stopped and the reference dropped).
    fn func_attach(
        _hw: &Arc<Function>,
        _func: &Arc<Self::Func>,
        _dev: Option<&crate::kernel_ext::net::device::Device>,
    ) {
    }
    /// Whether the carrier follows the device's port-change events (else it is on while the
    /// interface is up, as upstream mana has it: MANA reports no link changes).
    const CARRIER_FROM_EVENTS: bool = false;
    /// Sets the port's administrative state (`ndo_open`/`ndo_stop`). Sleeps.
    fn set_admin(hw: &Arc<Function>, func: &Arc<Self::Func>, up: bool) -> Result;
    /// The permanent MAC address the function reported (`None`: a random one).
    fn permanent_mac(_func: &Self::Func) -> Option<[u8; 6]> {
        None
    }
    /// The largest MTU the port takes: rsnic's own [`MAX_MTU`] unless the device's port
    /// allows less (ConnectX: PMTU's `max_mtu`, as mlx5e).
    fn max_mtu(_func: &Self::Func) -> u32 {
        MAX_MTU
    }
    /// Tells the device the port's MTU (under RTNL, at probe with the default and before
    /// every change: ConnectX's PMTU and vport context, as `mlx5e_set_dev_port_mtu`). A
    /// failure fails the change. Nothing by default (MANA: the adapter MTU is fixed). Sleeps.
    fn apply_mtu(_hw: &Arc<Function>, _func: &Arc<Self::Func>, _mtu: u32) -> Result {
        Ok(())
    }

    /// Whether the device filters received frames by the stack's addresses and flags
    /// ([`Control::set_rx_mode`]): the netdev then has IFF_UNICAST_FLT, as mlx5e's. Without
    /// it (MANA, as upstream mana) the device receives what its vport is sent, and the core
    /// goes promiscuous for a unicast list of its own.
    const RX_FILTER: bool = false;
    /// The stack's receive filter changed (`ndo_set_rx_mode`: atomic context, the address
    /// lock held): the family keeps `mode` and programs the device from process context.
    /// Nothing by default (MANA: upstream mana has no `ndo_set_rx_mode`).
    fn set_rx_mode(_func: &Arc<Self::Func>, _mode: &RxMode) {}
    /// Whether the device filters 802.1Q frames by the stack's VLAN ids
    /// (`NETIF_F_HW_VLAN_CTAG_FILTER`, on by default and changeable, as mlx5e's). Without it
    /// (MANA, as upstream mana) the device takes every VLAN.
    const VLAN_FILTER: bool = false;
    /// `ndo_vlan_rx_add_vid` (`add`) / `ndo_vlan_rx_kill_vid` of 802.1Q id `vid` (under
    /// RTNL): the family records it and programs its device, or refuses.
    fn vlan_rx_vid(_func: &Arc<Self::Func>, _vid: u16, _add: bool) -> Result {
        Err(crate::kernel_ext::net::eopnotsupp())
    }
    /// `rx-vlan-filter` turned on or off (`ndo_set_features`, under RTNL; only a change).
    fn set_vlan_filter(_func: &Arc<Self::Func>, _on: bool) -> Result {
        Ok(())
    }
    /// `ndo_set_mac_address` (under RTNL): commits the address and programs the device, or
    /// refuses. By default `EOPNOTSUPP`, what the core answers for upstream mana, which has
    /// no `ndo_set_mac_address`.
    fn set_mac_address(_func: &Arc<Self::Func>, _change: MacChange<'_>) -> Result {
        Err(crate::kernel_ext::net::eopnotsupp())
    }

    /// Why the device cannot run with private flags `flags` (`None`: it can).
    fn refuse_pflags(
        _func: &Self::Func,
        _flags: PrivFlags<Self::PrivFlag>,
    ) -> Option<&'static str> {
        None
    }

    /// Whether the driver owns the link's flow control (802.3x global pause: `ethtool -a`,
    /// `-A`, `-I -a`): it reads and sets it and reads the PAUSE frame counters through the
    /// device's control interface ([`Control::query_pause`], [`Control::apply_pause`],
    /// [`Control::query_pause_stats`]). Without it the port has no pause operations and
    /// ethtool answers `EOPNOTSUPP`. (Both families have it: ConnectX through PFCC and
    /// PPCNT, MANA through rsnic's own HWC requests when the device advertises them,
    /// [`Control::has_pause`], since upstream mana implements no pause operation: a VF's
    /// vport has no say over the physical link's flow control.)
    const PAUSE: bool = false;
    /// Whether this port's device has the flow control of [`Control::PAUSE`] (a device may
    /// lack what its family can have): without it the port is registered without pause
    /// operations, and ethtool answers `EOPNOTSUPP`.
    fn has_pause(_func: &Self::Func) -> bool {
        Self::PAUSE
    }
    /// Whether this port's device can loop its frames back ([`Control::apply_loopback`]):
    /// without it the port does not offer `loopback` (`ethtool -K` cannot turn it on).
    fn has_loopback(_func: &Self::Func) -> bool {
        true
    }
    /// The port's flow control as the device has it: (honour received PAUSE frames, send
    /// them). Sleeps.
    fn query_pause(_hw: &Arc<Function>, _func: &Arc<Self::Func>) -> Result<(bool, bool)> {
        Err(crate::kernel_ext::net::eopnotsupp())
    }
    /// Sets the port's flow control (`rx`: honour received PAUSE frames, `tx`: send them).
    /// The device keeps it until it is set again (across interface down/up and channel
    /// reopens: it is the port's, not the queues'). Sleeps.
    fn apply_pause(_hw: &Arc<Function>, _func: &Arc<Self::Func>, _rx: bool, _tx: bool) -> Result {
        Err(crate::kernel_ext::net::eopnotsupp())
    }
    /// PAUSE frames the port (transmitted, received), as the device counts them. Sleeps.
    fn query_pause_stats(_hw: &Arc<Function>, _func: &Arc<Self::Func>) -> Result<(u64, u64)> {
        Err(crate::kernel_ext::net::eopnotsupp())
    }

    /// Fills `ethtool <dev>`'s link settings, `carrier` whether the stack sees the link up.
    /// By default a fixed 100 Gb/s full-duplex link on an "other" port (what MANA reports:
    /// its vport has no link modes to show). Sleeps.
    fn link_settings(
        _func: &Arc<Self::Func>,
        carrier: bool,
        ks: &mut ethtool::LinkSettings<'_>,
    ) -> Result {
        if carrier {
            ks.set_speed(100_000);
            ks.set_full_duplex(true);
        } else {
            ks.set_no_link();
        }
        ks.set_port_other();
        Ok(())
    }

    /// Whether the port's link modes can be set (`ethtool -s`, [`Control::set_link_settings`]).
    const LINK_SET: bool = false;
    /// Sets the link as `ethtool -s` asks (`req`); `dev` is the port's netdev (its name for
    /// a refusal's message, whether it is up). Under RTNL; sleeps.
    fn set_link_settings(
        _func: &Arc<Self::Func>,
        _dev: &crate::kernel_ext::net::device::Device,
        _req: &ethtool::LinkRequest<'_>,
    ) -> Result {
        Err(crate::kernel_ext::net::eopnotsupp())
    }

    /// Whether the driver says why the link is down (`ethtool <dev>`'s "Link detected: no
    /// (reason)": [`Control::link_down_reason`]); without it the operation is absent and
    /// ethtool shows no reason, as for upstream mana, which has none. ConnectX has it,
    /// through PDDR.
    const LINK_EXT_STATE: bool = false;
    /// Why the link is down, asked only while the carrier is off: ethtool's extended link
    /// state ([`ethtool::LinkExtState`]), `None` when the device gives none or the query
    /// failed (ethtool then shows no reason). Sleeps.
    fn link_down_reason(_func: &Arc<Self::Func>) -> Option<ethtool::LinkExtState> {
        None
    }

    /// Whether the device counts the port's MAC traffic as the standard counter groups
    /// show it (`ethtool -S <dev> --groups eth-mac eth-ctrl rmon`: [`Control::query_mac_stats`],
    /// [`Control::query_rmon_stats`]); without it those groups are empty, as for a driver
    /// that has none (upstream mana). ConnectX has them, from PPCNT.
    const MAC_STATS: bool = false;
    /// The RMON histogram's size buckets the device counts in.
    const RMON_RANGES: ethtool::RmonRanges = ethtool::RmonRanges::new(&[ethtool::RmonRange::END]);
    /// The port's IEEE 802.3 MAC and MAC control counters, as the device keeps them. Sleeps.
    fn query_mac_stats(_func: &Arc<Self::Func>) -> Result<(ethtool::MacStats, ethtool::CtrlStats)> {
        Err(crate::kernel_ext::net::eopnotsupp())
    }
    /// The port's RMON counters of received frames, as the device keeps them. Sleeps.
    fn query_rmon_stats(_func: &Arc<Self::Func>) -> Result<ethtool::RmonStats> {
        Err(crate::kernel_ext::net::eopnotsupp())
    }

    /// The port's IEEE 802.3 PHY counter `SymbolErrorDuringCarrier` (`ethtool -S <dev>
    /// --groups eth-phy`), with the groups of [`Control::MAC_STATS`]. Sleeps.
    fn query_phy_stats(_func: &Arc<Self::Func>) -> Result<u64> {
        Err(crate::kernel_ext::net::eopnotsupp())
    }

    /// Whether the driver offers the link's forward error correction (`ethtool --show-fec`,
    /// `--set-fec`, `-I --show-fec`: [`Control::query_fec`], [`Control::set_fec`],
    /// [`Control::query_fec_stats`]); without it the operations are absent and ethtool
    /// answers `EOPNOTSUPP`, as for upstream mana, which has none. ConnectX has them,
    /// through PPLM.
    const FEC: bool = false;
    /// The link's FEC, configured and running. Sleeps.
    fn query_fec(_func: &Arc<Self::Func>) -> Result<ethtool::FecParam> {
        Err(crate::kernel_ext::net::eopnotsupp())
    }
    /// Configures the link's FEC as ethtool's bits `fec` ask (`ethtool::fec`); `dev` is the
    /// port's netdev (its name for a refusal's message, whether it is up). Under RTNL;
    /// sleeps.
    fn set_fec(
        _func: &Arc<Self::Func>,
        _dev: &crate::kernel_ext::net::device::Device,
        _fec: u32,
    ) -> Result {
        Err(crate::kernel_ext::net::eopnotsupp())
    }
    /// The FEC counters of the running mode (`None`: none to report). Sleeps.
    fn query_fec_stats(_func: &Arc<Self::Func>) -> Result<Option<ethtool::FecStats>> {
        Err(crate::kernel_ext::net::eopnotsupp())
    }

    /// Whether the driver reads the port's cable module (`ethtool -m`:
    /// [`Control::module_info`], [`Control::module_eeprom`], [`Control::module_page`]);
    /// without it the operations are absent and ethtool answers `EOPNOTSUPP`, as for
    /// upstream mana. ConnectX reads it through PMLP and MCIA.
    const MODULE: bool = false;
    /// The module's EEPROM layout and length. Sleeps.
    fn module_info(_func: &Arc<Self::Func>) -> Result<ethtool::ModuleInfo> {
        Err(crate::kernel_ext::net::eopnotsupp())
    }
    /// Fills `buf` from flat offset `offset` of the module's EEPROM. Sleeps.
    fn module_eeprom(_func: &Arc<Self::Func>, _offset: u32, _buf: &mut [u8]) -> Result {
        Err(crate::kernel_ext::net::eopnotsupp())
    }
    /// Reads `buf.len()` bytes of one page of the module's EEPROM; returns the bytes read.
    /// Sleeps.
    fn module_page(
        _func: &Arc<Self::Func>,
        _page: &ethtool::ModulePage,
        _buf: &mut [u8],
        _extack: &mut ethtool::ExtAck,
    ) -> Result<usize> {
        Err(crate::kernel_ext::net::eopnotsupp())
    }

    /// Creates a channel's device queues (recording each in `queues` as it is made, so a
    /// failure can destroy what exists) and its data-path structures, and posts RX buffers.
    fn open(
        ctx: &OpenCtx<'_, Self>,
        queues: &mut Self::Queues,
        p: &ChannelParams<Self::PrivFlag>,
    ) -> Result<Opened<Self>>;
    /// Destroys the device queues in `queues` (queues before their CQs, CQs before EQs).
    /// Sleeps.
    fn destroy(hw: &Arc<Function>, func: &Arc<Self::Func>, queues: &Self::Queues);
    /// Internal loopback of the port on or off (`ethtool -K <dev> loopback`). Sleeps.
    fn apply_loopback(hw: &Arc<Function>, func: &Arc<Self::Func>, on: bool) -> Result;

    // RSS (see `crate::rss`).

    /// Steers received frames as `spec` says: its table's entries (channel indices) mapped
    /// to the RQs of those channels, its key, its hash fields; `change` says what differs
    /// from what the device has ([`RssChange::ALL`] after the channels opened), so that a
    /// key or table change on running channels is one in-place update (nothing re-created,
    /// nothing lost). `None`: nothing is received (the channels close). Sleeps.
    fn apply_rss(
        hw: &Arc<Function>,
        func: &Arc<Self::Func>,
        spec: Option<&RssSpec<'_>>,
        change: RssChange,
    ) -> Result;
    /// Entries of the port's indirection table: what the device supports for it (a
    /// constant of the function, 1..=[`crate::rss::MAX_TABLE`]).
    fn rss_table_size(func: &Self::Func) -> usize;
    /// The fields each [`Flow`] is hashed over at first (by `Flow` index).
    const RSS_FIELDS: [Fields; FLOWS];
    /// Why the family cannot hash `flow` over `fields` (`None`: it can).
    fn refuse_rss_fields(_flow: Flow, _fields: Fields) -> Option<&'static str> {
        Some("the hash fields cannot be changed")
    }
    /// Additional RSS contexts the family's device holds (`ethtool -X <dev> context new`;
    /// ids `1..=RSS_CONTEXTS`, at most [`crate::rss::MAX_CONTEXTS`]); 0: none.
    const RSS_CONTEXTS: usize = 0;
    /// Programs additional context `id` (`1..=RSS_CONTEXTS`) as `spec` says (`change`
    /// what differs from what the device has); `None` removes it. Only while the channels
    /// are open (their closing removes every context; the port programs them again at the
    /// next open). Sleeps.
    fn apply_rss_ctx(
        _hw: &Arc<Function>,
        _func: &Arc<Self::Func>,
        _id: usize,
        _spec: Option<&RssSpec<'_>>,
        _change: RssChange,
    ) -> Result {
        Err(crate::kernel_ext::net::eopnotsupp())
    }

    // ntuple rules (see `crate::ntuple`).

    /// Steering rules the family's device holds (locations `0..NTUPLE_RULES`, at most
    /// [`crate::ntuple::MAX_RULES`]); 0: none (`ntuple-filters` is not offered).
    const NTUPLE_RULES: usize = 0;
    /// Programs the rule at `loc` (`None`: removes it), its destination a queue below the
    /// open channels or a context programmed with [`Control::apply_rss_ctx`]. Only while
    /// the channels are open, as contexts. Sleeps.
    fn apply_rule(
        _hw: &Arc<Function>,
        _func: &Arc<Self::Func>,
        _loc: usize,
        _rule: Option<&Rule>,
    ) -> Result {
        Err(crate::kernel_ext::net::eopnotsupp())
    }

    /// Tells the channel's interrupt state which device queues report to it (MANA: the CQ
    /// ids its EQ's completion events may name): the channel's `queues`, and its AF_XDP
    /// zero-copy queues `xsk` while they exist. Called once they are all made, and again
    /// when the XSK queues come or go.
    fn irq_bind(_irq: &mut Self::Irq, _queues: &Self::Queues, _xsk: Option<&Self::Queues>) {}

    /// Moves the ids of the AF_XDP zero-copy queues (XSK RQ, XSK SQ, ICO SQ and their CQs)
    /// out of `queues` into a value of their own, which [`Control::destroy`] then destroys
    /// alone (the channel's EQ stays with `queues`): they come and go with their pool while
    /// the channel lives. Families without zero-copy have none.
    fn xsk_split(_queues: &mut Self::Queues) -> Self::Queues {
        Self::Queues::default()
    }

    /// Whether the family resets a regular SQ or RQ in place after a fault
    /// ([`Control::queue_to_reset`], [`Control::queue_to_ready`]). A family that does not
    /// recovers from such a fault by reopening the port's channels.
    const QUEUE_RESET: bool = false;

    /// Moves the channel's regular SQ (`sq`) or RQ to the reset state, through the error
    /// state if the device has not put it there, for recovery: the device no longer touches
    /// the queue when this returns. Families that do not recover a queue return
    /// `EOPNOTSUPP`. Sleeps.
    fn queue_to_reset(_func: &Arc<Self::Func>, _queues: &Self::Queues, _sq: bool) -> Result {
        Err(crate::kernel_ext::net::eopnotsupp())
    }
    /// The state the device reports for the channel's SQ (`sq`) or RQ, for `devlink health
    /// dump` (ConnectX: QUERY_SQ / QUERY_RQ); `None` where the family cannot ask (MANA has
    /// no such request). Sleeps.
    fn query_queue_state(
        _func: &Arc<Self::Func>,
        _queues: &Self::Queues,
        _sq: bool,
    ) -> Option<&'static str> {
        None
    }
    /// Moves the queue [`Control::queue_to_reset`] reset back to ready. Sleeps.
    fn queue_to_ready(_func: &Arc<Self::Func>, _queues: &Self::Queues, _sq: bool) -> Result {
        Err(crate::kernel_ext::net::eopnotsupp())
    }

    /// Creates an XDP SQ of `kind` with its CQ on the channel's vector, recording its
    /// device queues in `queues`. `None`: the family has no XDP SQ of that kind (`Tx`,
    /// `Redirect`: XDP_TX and redirected frames go out through the regular SQ as skbs;
    /// `Ico`: no NOP WQE, wake-ups schedule NAPI directly).
    fn xdp_sq_open(
        _ctx: &OpenCtx<'_, Self>,
        _queues: &mut Self::Queues,
        _p: &ChannelParams<Self::PrivFlag>,
        _kind: XdpSqKind,
    ) -> Result<Option<Self::XdpSq>> {
        Ok(None)
    }

    /// Whether the family moderates its completion interrupts (`ethtool -c`/`-C`,
    /// ConnectX CQ moderation). A family without it has no coalescing operations (MANA, as
    /// upstream).
    const COALESCE: bool = false;
    /// The largest period (µs) and frame count the device takes.
    const COALESCE_MAX: Moderation = Moderation {
        usecs: 0,
        frames: 0,
    };
    /// The moderation a port starts with (`ethtool -c` after load), from the device's
    /// capabilities as the upstream driver picks it. Without [`Control::COALESCE`]: one event
    /// per completion, nothing adaptive.
    fn default_coalesce(_func: &Self::Func) -> params::Coalesce {
        params::Coalesce::NONE
    }
    /// Changes the moderation of the RX (`rx`) or TX CQs of a live channel whose device
    /// queues are `queues`, without re-creating them. Sleeps.
    fn modify_moderation(
        _func: &Arc<Self::Func>,
        _queues: &Self::Queues,
        _rx: bool,
        _m: Moderation,
    ) -> Result {
        Err(crate::kernel_ext::net::eopnotsupp())
    }

    /// Whether the family's RQs strip VLAN tags by request: `NETIF_F_HW_VLAN_CTAG_RX` is
    /// changeable (`ethtool -K rxvlan`, ConnectX's `rqc.vsd`). A family without it either
    /// always strips (MANA: the feature fixed on, as upstream) or never does.
    const RX_VLAN_TOGGLE: bool = false;
    /// Turns VLAN stripping of the RQs among a live channel's device queues `queues` on
    /// (`strip`) or off, without re-creating them (none there: nothing to do). Sleeps.
    fn apply_rx_vlan(_func: &Arc<Self::Func>, _queues: &Self::Queues, _strip: bool) -> Result {
        Err(crate::kernel_ext::net::eopnotsupp())
    }

    /// Creates an XSK RQ of `buf_size`-byte buffers with its CQ on the channel's vector and
    /// posts buffers from the pool (as many as the fill ring has). Returns it with its device
    /// RQ id.
    fn xsk_rq_open(
        _ctx: &OpenCtx<'_, Self>,
        _queues: &mut Self::Queues,
        _p: &ChannelParams<Self::PrivFlag>,
        _buf_size: u32,
        _env: &mut XskRxEnv<'_>,
    ) -> Result<Option<(Self::XskRx, u32)>> {
        Ok(None)
    }
}

/// One device family: its data path, its control path, and what the stack and ethtool see
/// (names, flags, ring limits, counter rows). See the module documentation.
pub(crate) trait Family: Control {
    /// Name of the family in the `family` module parameter.
    const NAME: &'static str;
    /// What `ethtool -i` reports as firmware version.
    const FW_VERSION: &'static str;
    /// Private flags at load.
    const DEFAULT_PFLAGS: PrivFlags<Self::PrivFlag>;
    /// The private flag that stops received packets going up `CHECKSUM_COMPLETE` from the
    /// device's sum ([`RxMeta::sum`]), for families whose devices give one (mlx5e's
    /// `rx_no_csum_complete`). The channels read it as they go: changing it reopens nothing.
    const NO_CSUM_COMPLETE: Option<Self::PrivFlag> = None;
    /// SQ ring limits.
    const SQ_RING: RingLimits;
    /// RQ ring limits.
    const RQ_RING: RingLimits;
    /// Per-queue counter names: `tx<N>_x` (mlx5, infix "") or `tx_<N>_x` (MANA, infix "_").
    const QUEUE_INFIX: &'static str;
    /// Whether channels have XDP SQs ([`Family::xdp_sq_open`]); without them, XDP_TX and
    /// redirected frames go out through the regular SQ as skbs.
    const XDP_SQS: bool;
    /// Whether channels support AF_XDP zero-copy ([`Family::xsk_rq_open`] and an XDP SQ of
    /// kind `Xsk`; an ICO SQ for wake-up NOPs if the family opens one, else `ndo_xsk_wakeup`
    /// schedules NAPI directly).
    const XSK_ZC: bool = false;

    /// Whether the RQ takes several buffers per WQE ([`ChannelParams::rx_layout`]): a frame
    /// longer than a page is scattered over order-0 pages.
    const RX_SCATTER: bool = false;

    /// The `ethtool -S` rows of the family's queue counters, with the family's upstream
    /// names: the views of [`DataPath::TxStats`] and [`DataPath::RxStats`] that
    /// [`crate::family::stats::counters!`] makes. (The family-neutral rows are
    /// [`crate::family::stats`]'s, the same for every family.)
    const ROWS: &'static [&'static [Row<ChannelStats<Self>>]];
    /// The port's hardware counters in `ethtool -S`, with the family's upstream names.
    const HW: &'static [(&'static str, Get<Self::HwCounters>)];

    /// The family-independent counters.
    fn summary(s: &ChannelStats<Self>) -> Summary;

    /// The firmware version the device reported, for `devlink dev info`: the version's
    /// devlink name and its value. Sleeps.
    fn fw_version(_hw: &Arc<Function>, _func: &Self::Func) -> Result<(&'static CStr, CString)> {
        Err(crate::kernel_ext::net::eopnotsupp())
    }

    /// A fixed identity of the board for `devlink dev info` (its devlink name and value),
    /// if the device reported one: ConnectX's PSID (QUERY_ADAPTER) as `fw.psid`, as mlx5's
    /// `mlx5_devlink_info_get`.
    fn board_id(_func: &Self::Func) -> Option<(&'static CStr, CString)> {
        None
    }

    /// The private flags a new port starts with, given what the device can do.
    fn default_pflags(_func: &Self::Func) -> PrivFlags<Self::PrivFlag> {
        Self::DEFAULT_PFLAGS
    }
}

/// A vector of `n` values made by `f`.
pub(crate) fn filled<T>(n: usize, mut f: impl FnMut() -> T) -> Result<KVec<T>> {
    let mut v = KVec::with_capacity(n, GFP_KERNEL)?;
    for _ in 0..n {
        v.push(f(), GFP_KERNEL)?;
    }
    Ok(v)
}
