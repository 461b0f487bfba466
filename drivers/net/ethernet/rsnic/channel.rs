// SPDX-License-Identifier: GPL-2.0

//! Channels: each has an SQ with its TX CQ, an RQ with its RX CQ, one NAPI context and one
//! interrupt vector, as an mlx5e channel does; generic over the device [`Family`].
//!
//! The SQ of queue `i` lives in the port's TX slot `i` ([`TxSlot`]), where `ndo_start_xmit`
//! finds it; the rest lives in the [`Channel`], which NAPI polls. The slot is guarded by the
//! TX queue's own xmit lock, which the stack already holds around `ndo_start_xmit`: the
//! transmit path takes no lock of its own per packet. NAPI's TX completion walk takes the
//! xmit lock once per poll (as virtio-net's TX NAPI does), and so do the control paths
//! (open, close, recovery, counters). mlx5e needs no lock in its completion walk because its
//! producer and consumer counters are split by hand; the data path's SQs keep both in one
//! `&mut` structure, which the xmit lock stands for.
//!
//! NAPI reaps the TX CQ first (also with budget 0), then the RX CQ within the budget, hands
//! packets to GRO, re-posts RX buffers with one doorbell per poll (mlx5: a doorbell-record
//! write; MANA: an RQ doorbell with `wqe_cnt = 0`), and re-arms both CQs when it completes.
//! While it keeps polling, the family rings the CQ doorbells its hardware needs anyway (MANA:
//! at least one per 8 wraps of a CQ).
//!
//! MANA's interrupt goes through an event queue: the channel's vector handler reads the EQ
//! ([`Family::irq_handle`]) before scheduling NAPI.

use crate::bus::{Bar, Function, IrqHandler, IrqKey};
use crate::dp::hw::{Barriers, DmaAddr, Mmio};
use crate::dp::pkt::{
    DmaEntry, DmaKind, Gso, RxBufProvider, RxBuffer, RxFrags, TxCsum, TxDmaMap, TxPacket,
    TxQueue as DpTxQueue, TxRejectReason, VlanTag,
};
use crate::family::{Family, OpenCtx, QueueFault, RxMeta, TxReaped};
use crate::kernel_ext::{
    dma::DmaDevice,
    net::{
        device::Device,
        dim::{self as kdim, Dim, DimApply},
        napi::{Napi, Poll},
        page_pool::{PagePool, RxPage},
        queue::{TxQueue, TxqCell, XmitCtx, XmitLocked},
        skb::{DropReason, SkBuff},
        xdp::{self as kxdp, BpfProg, Verdict, XdpFrame, XdpFrames, XdpRxq, XDP_PACKET_HEADROOM},
        xsk::{XskPool, XskRxq, XskVerdict},
    },
    sync::{irqs_disabled, with_bh, xmit_context, XmitContext},
    wq::OwnedQueue,
};
use crate::port::{PortReset, Reopen};
use crate::xdp::{XdpEnv, XdpSqKind, XdpStats, XdpTx, XskRxEnv, XskStats};
use core::pin::Pin;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use kernel::{
    new_mutex, new_spinlock, new_work,
    prelude::*,
    sync::{Arc, Mutex, SpinLock},
    types::ARef,
    workqueue::{Work, WorkItem},
};

/// Headroom before received packets (`NET_SKB_PAD + NET_IP_ALIGN`, so the IP header is
/// aligned); with an XDP program attached, [`XDP_PACKET_HEADROOM`].
pub(crate) const RX_HEADROOM: u32 = 64 + 2;
/// Bytes the skb needs after the packet data (`skb_shared_info`, rounded up).
const RX_TAILROOM: u32 = 384;

/// Parameters a set of channels is built with; changing any of them reopens the channels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ChannelParams {
    /// Number of channels.
    pub(crate) count: u32,
    /// log2 of the SQ size in WQEBBs.
    pub(crate) log_sq: u8,
    /// log2 of the RQ size in WQEs.
    pub(crate) log_rq: u8,
    /// MTU the RX buffers are sized for.
    pub(crate) mtu: u32,
    /// The family's private flags (mlx5: `rx_cqe_compress`, `xdp_tx_mpwqe`, `skb_tx_mpwqe`;
    /// MANA: `rx_db_per_packet`).
    pub(crate) pflags: u32,
    /// An XDP program is attached: RX buffers have [`XDP_PACKET_HEADROOM`], one page each,
    /// mapped for the device to read too (XDP_TX), and mlx5 channels get an XDP_TX SQ.
    pub(crate) xdp: bool,
    /// Interrupt moderation new CQs are made with (`ethtool -C`; a change is applied to
    /// live channels in place, without reopening them).
    pub(crate) coal: Coalesce,
    /// The device strips received frames' outer 802.1Q tag into the completion
    /// (`NETIF_F_HW_VLAN_CTAG_RX`): what new RQs are made with (a change is applied to live
    /// channels in place, [`crate::family::Control::apply_rx_vlan`]).
    pub(crate) rx_vlan: bool,
}

/// Interrupt moderation of one direction's completion queues (`ethtool -C rx-usecs N
/// rx-frames M`): the device holds a completion event back until `frames` completions are
/// pending or `usecs` have passed; `usecs` 0 is none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Moderation {
    /// Period, microseconds.
    pub(crate) usecs: u16,
    /// Completions per event.
    pub(crate) frames: u16,
}

/// Interrupt moderation of a port's channels (`ethtool -c`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Coalesce {
    /// RX CQs (with `adaptive_rx`: DIM's default profile, what they start with).
    pub(crate) rx: Moderation,
    /// TX CQs (with `adaptive_tx`: likewise).
    pub(crate) tx: Moderation,
    /// DIM moves the RX CQs' moderation (`adaptive-rx`).
    pub(crate) adaptive_rx: bool,
    /// DIM moves the TX CQs' moderation (`adaptive-tx`).
    pub(crate) adaptive_tx: bool,
}

impl Coalesce {
    /// At load: none, one event per completion, as before moderation existed (mlx5e starts
    /// at 16 µs / 32 frames with DIM on; see rsnic.rst "Interrupt moderation").
    pub(crate) const DEFAULT: Self = Self {
        rx: Moderation {
            usecs: 0,
            frames: 1,
        },
        tx: Moderation {
            usecs: 0,
            frames: 1,
        },
        adaptive_rx: false,
        adaptive_tx: false,
    };
}

/// DIM's default profile of the RX (`rx`) or TX CQs, within what the family's device takes.
pub(crate) fn dim_default<F: Family>(rx: bool) -> Moderation {
    let (usecs, pkts) = kdim::default_profile(!rx);
    dim_moderation::<F>(usecs, pkts)
}

fn dim_moderation<F: Family>(usecs: u16, pkts: u16) -> Moderation {
    Moderation {
        usecs: usecs.min(F::COALESCE_MAX.usecs),
        frames: pkts.min(F::COALESCE_MAX.frames),
    }
}

/// Changes the moderation of a channel's RX (`rx`) or TX CQs in place: those of its
/// device queues `queues` and, for RX, the XSK RQ's while it exists (`xsk`, held meanwhile so
/// that it is not destroyed under the command). Sleeps.
fn moderate<F: Family>(
    shared: &PortShared<F>,
    queues: &F::Queues,
    xsk: &Mutex<F::Queues>,
    rx: bool,
    m: Moderation,
) -> Result {
    F::modify_moderation(&shared.hw, &shared.func, queues, rx, m)?;
    if rx {
        F::modify_moderation(&shared.hw, &shared.func, &xsk.lock(), rx, m)?;
    }
    Ok(())
}

/// Where DIM applies the profiles it picks for one direction of a channel: MODIFY_CQ on
/// the channel's CQs of that direction ([`crate::family::Control::modify_moderation`]).
pub(crate) struct DimCqs<F: Family> {
    shared: Arc<PortShared<F>>,
    queues: F::Queues,
    /// The channel's AF_XDP zero-copy queues, while they exist.
    xsk: Arc<Mutex<F::Queues>>,
    rx: bool,
    /// Profiles applied (`ch<N>_dim_changes`, RX and TX together).
    changes: AtomicU64,
}

impl<F: Family> DimApply for DimCqs<F> {
    fn apply(&self, usecs: u16, pkts: u16) {
        // A failure was logged by the family with its command; the CQs keep the profile
        // they had, and DIM goes on measuring.
        if moderate(
            &self.shared,
            &self.queues,
            &self.xsk,
            self.rx,
            dim_moderation::<F>(usecs, pkts),
        )
        .is_ok()
        {
            self.changes.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl ChannelParams {
    /// Headroom the device leaves before each received packet.
    pub(crate) fn rx_headroom(&self) -> u32 {
        if self.xdp {
            XDP_PACKET_HEADROOM
        } else {
            RX_HEADROOM
        }
    }

    /// Largest MTU whose frames fit one page with XDP's headroom and the skb's tailroom
    /// (XDP programs see one linear buffer).
    pub(crate) fn max_xdp_mtu() -> u32 {
        kernel::page::PAGE_SIZE as u32 - XDP_PACKET_HEADROOM - RX_TAILROOM - (14 + 8)
    }

    /// Bytes the device may write into one RX buffer (frame with two VLAN tags).
    pub(crate) fn rx_buf_len(&self) -> u32 {
        self.mtu + 14 + 8
    }

    /// How RX buffers are laid out. A frame that fits one page with the headroom and the
    /// skb's tailroom gets one page; a longer one gets one higher-order page, or with
    /// `scatter` (a family whose RQ takes several buffers per WQE) as many order-0 pages
    /// as it needs, each with the same headroom and tailroom (the first becomes the skb's
    /// head, the others its fragments). XDP programs see one linear buffer, so an attached
    /// program never scatters (its MTU fits one page anyway, [`Self::max_xdp_mtu`]).
    pub(crate) fn rx_layout(&self, scatter: bool) -> RxLayout {
        let page = kernel::page::PAGE_SIZE as u32;
        let room = self.rx_headroom() + RX_TAILROOM;
        let len = self.rx_buf_len();
        if scatter && !self.xdp && room + len > page {
            let seg_len = page - room;
            return RxLayout {
                order: 0,
                seg_len,
                segs: len.div_ceil(seg_len),
            };
        }
        let mut order = 0;
        while page << order < room + len {
            order += 1;
        }
        RxLayout {
            order,
            seg_len: len,
            segs: 1,
        }
    }
}

/// What the AF_XDP zero-copy pool checks ([`crate::dp::xsk`]) depend on: the page, a
/// frame's bytes beyond the MTU ([`ChannelParams::rx_buf_len`]) and the skb's tail room.
pub(crate) fn xsk_geometry() -> crate::dp::xsk::Geometry {
    crate::dp::xsk::Geometry {
        page: kernel::page::PAGE_SIZE as u32,
        hard_mtu: 14 + 8,
        skb_tail: RX_TAILROOM,
    }
}

/// RX buffers of a set of channels ([`ChannelParams::rx_layout`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RxLayout {
    /// Page order of each buffer.
    pub(crate) order: u32,
    /// Bytes the device may write into each buffer.
    pub(crate) seg_len: u32,
    /// Buffers per received frame (1: linear).
    pub(crate) segs: u32,
}

/// The transmit side's packet: an skb.
pub(crate) struct TxSkb(pub(crate) SkBuff);

impl TxPacket for TxSkb {
    fn pkt_len(&self) -> u32 {
        self.0.len()
    }

    fn linear(&self) -> &[u8] {
        self.0.linear()
    }

    fn nr_frags(&self) -> usize {
        self.0.nr_frags() as usize
    }

    fn frag_len(&self, i: usize) -> u32 {
        self.0.frag_len(i as u32)
    }

    fn gso(&self) -> Option<Gso> {
        self.0.gso().map(|(size, segs)| Gso {
            size: size as u16,
            segs: segs as u16,
        })
    }

    fn csum(&self) -> TxCsum {
        match self.0.csum_partial() {
            None => TxCsum::None,
            Some(false) => TxCsum::Partial,
            Some(true) => TxCsum::PartialInner,
        }
    }

    fn vlan(&self) -> Option<VlanTag> {
        self.0
            .vlan_tag()
            .map(|(tci, dot1ad)| VlanTag { tci, dot1ad })
    }
}

impl RxBuffer for RxPage {
    fn dma_addr(&self) -> DmaAddr {
        self.buf_dma_addr()
    }
}

/// Most channels per port; channel `c` interrupts on its function's vector `c`.
pub(crate) const MAX_CHANNELS: usize = 8;

/// Implements [`Mmio`] and [`Barriers`] for an environment with an `mmio` field: the
/// function's registers, the kernel's barriers.
macro_rules! via_bar {
    ($env:ident) => {
        impl Mmio for $env<'_> {
            fn write64(&self, offset: u32, bytes: [u8; 8]) {
                self.mmio.write64(offset, bytes);
            }

            fn write32(&self, offset: u32, value: u32) {
                self.mmio.write32(offset, value);
            }

            fn read32(&self, offset: u32) -> u32 {
                self.mmio.read32(offset)
            }
        }

        impl Barriers for $env<'_> {
            fn dma_wmb(&self) {
                self.mmio.dma_wmb();
            }

            fn dma_rmb(&self) {
                self.mmio.dma_rmb();
            }

            fn wmb(&self) {
                self.mmio.wmb();
            }
        }
    };
}

via_bar!(TxEnv);
via_bar!(RxEnv);

/// What an SQ needs from the kernel while it transmits or completes: the registers, the DMA
/// API and the netdev TX queue (BQL).
pub(crate) struct TxEnv<'a> {
    /// The device's registers.
    pub(crate) mmio: Bar<'a>,
    /// DMA mapping of the packets.
    pub(crate) dma: &'a DmaDevice,
    /// The netdev TX queue (stop/wake, BQL).
    pub(crate) txq: &'a TxQueue,
    /// The channel is closing: its TX queue was disabled and must stay so (completions
    /// reaped during teardown do not wake it).
    pub(crate) closing: bool,
}

impl TxDmaMap<TxSkb> for TxEnv<'_> {
    fn map_linear(&mut self, pkt: &TxSkb, offset: u32, len: u32) -> Option<DmaAddr> {
        self.dma
            .map_skb_head(&pkt.0, offset, len)
            .ok()
            .map(|m| m.addr())
    }

    fn map_frag(&mut self, pkt: &TxSkb, index: usize) -> Option<DmaAddr> {
        self.dma
            .map_skb_frag(&pkt.0, index as u32)
            .ok()
            .map(|m| m.addr())
    }

    fn unmap(&mut self, entry: DmaEntry) {
        self.dma
            .unmap_raw(entry.addr, entry.len, entry.kind == DmaKind::Page);
    }
}

impl DpTxQueue for TxEnv<'_> {
    fn stop(&mut self) {
        self.txq.stop();
    }

    fn wake(&mut self) {
        if !self.closing {
            self.txq.wake();
        }
    }

    fn is_stopped(&self) -> bool {
        !self.closing && self.txq.driver_stopped()
    }

    fn sent(&mut self, bytes: u32, xmit_more: bool) -> bool {
        self.txq.sent(bytes, xmit_more)
    }

    fn completed(&mut self, pkts: u32, bytes: u32) {
        self.txq.completed(pkts, bytes);
    }
}

/// What an RQ needs from the kernel: barriers, the page pool and (MANA) the registers.
pub(crate) struct RxEnv<'a> {
    /// Where RX buffers come from and go back to.
    pub(crate) pool: &'a PagePool,
    /// The device's registers (MANA rings its RQ doorbell through them).
    pub(crate) mmio: Bar<'a>,
}

impl RxBufProvider<RxPage> for RxEnv<'_> {
    fn alloc(&mut self) -> Option<RxPage> {
        self.pool.alloc()
    }

    fn recycle(&mut self, buf: RxPage) {
        self.pool.recycle(buf);
    }
}

/// The transmit side of a channel: its SQ (with the TX CQ inside). The SQ counts the
/// packets it refuses (`dropped`); packets still queued at close are counted by the channel.
pub(crate) struct TxSide<F: Family> {
    sq: F::Sq,
    /// Redirected frames sent through this SQ as skbs (families without XDP SQs).
    xdp_xmit: u64,
    /// Redirected frames dropped because the SQ was full (`tx_xdp_full`).
    xdp_xmit_full: u64,
    /// Redirected frames the SQ refused for another reason (`tx_xdp_err`).
    xdp_xmit_err: u64,
}

/// A port's TX slot: the SQ of one TX queue, if its channel is open, under the queue's xmit
/// lock ([`TxqCell`]; bound to the queue when a channel first opens on it).
///
/// Netpoll transmits with interrupts disabled, having only tried the xmit lock
/// (`HARD_TX_TRYLOCK`): a slot held by this CPU's NAPI or control path refuses netpoll
/// there, in the stack, before the driver is called.
pub(crate) type TxSlot<F> = TxqCell<Option<TxSide<F>>>;

/// A new, empty TX slot.
pub(crate) fn new_tx_slot<F: Family>() -> TxSlot<F> {
    TxqCell::new(None)
}

/// An XDP SQ with its state.
pub(crate) struct XdpSqSide<F: Family> {
    sq: F::XdpSq,
    /// Past the stop room: frames are refused until completions free room.
    full: bool,
    /// Frames were posted since the last doorbell.
    posted: bool,
    /// Refusals (full ring, other errors) of this SQ.
    stats: XdpStats,
}

impl<F: Family> XdpSqSide<F> {
    fn new(sq: F::XdpSq) -> Self {
        Self {
            sq,
            full: false,
            posted: false,
            stats: XdpStats::default(),
        }
    }
}

/// A port's slot for the `ndo_xdp_xmit` SQ of one channel (families with XDP SQs).
pub(crate) type XdpSlot<F> = Pin<KBox<SpinLock<Option<XdpSqSide<F>>>>>;

/// A new, empty XDP slot.
pub(crate) fn new_xdp_slot<F: Family>() -> Result<XdpSlot<F>> {
    KBox::pin_init(new_spinlock!(None, "rsnic::XdpSlot"), GFP_KERNEL)
}

/// What a port shares with its channels and its transmit path.
pub(crate) struct PortShared<F: Family> {
    /// The port's function on the bus (registers, vectors).
    pub(crate) hw: Arc<Function>,
    /// The device's DMA parent.
    pub(crate) dma: Arc<DmaDevice>,
    /// The port's function, brought up by the driver at probe.
    pub(crate) func: Arc<F::Func>,
    /// One slot per possible TX queue.
    pub(crate) txs: KVec<TxSlot<F>>,
    /// One `ndo_xdp_xmit` SQ slot per possible channel.
    pub(crate) xdp_txs: KVec<XdpSlot<F>>,
    /// Channels open (the queues `ndo_xdp_xmit` spreads frames over; 0 when down).
    pub(crate) live: AtomicU32,
    /// Packets handed to a TX queue whose channel was closed (dropped, counted).
    pub(crate) dropped_closed: AtomicU64,
    /// Transmits refused in hard interrupt context (netpoll: see [`PortShared::xmit`]).
    pub(crate) hardirq_busy: AtomicU64,
    /// `NETIF_F_RXCSUM` (`ethtool -K <dev> rx on|off`): the device's checksum verdict is
    /// passed on to the stack (`CHECKSUM_UNNECESSARY`); when off, every packet goes up
    /// `CHECKSUM_NONE` and the stack verifies it, as mlx5e does.
    pub(crate) rx_csum: AtomicBool,
    /// `NETIF_F_RXHASH` (`ethtool -K <dev> rxhash on|off`): the device's RSS hash is set on
    /// received packets; when off none is (the stack computes its own when it needs one).
    pub(crate) rx_hash: AtomicBool,
    /// The interface is up with an XDP program attached: the AF_XDP zero-copy queues of
    /// channels with a pool exist (`ndo_xsk_wakeup` answers `ENETDOWN` otherwise, as
    /// mlx5e's `mlx5e_xdp_is_active`). Set under the port's state lock.
    pub(crate) xsk_active: AtomicBool,
    /// Where the channels' queue recovery runs (commands sleep); flushed when a channel
    /// closes.
    pub(crate) wq: OwnedQueue,
    /// Reopening the channels after a fault no queue reset covers.
    pub(crate) reset: Arc<PortReset<F>>,
    /// Where [`PortShared::reset`] runs (it closes channels, so not on `wq`).
    pub(crate) reset_wq: OwnedQueue,
}

impl<F: Family> PortShared<F> {
    /// Asks for the port's channels to be closed and opened again (as `ethtool -L` with the
    /// same count does) after a fault on channel `ch` that no queue reset covers. Returns
    /// whether this request queued the reopen (one waits at a time, and covers every fault
    /// before it runs). Any context.
    #[cold]
    pub(crate) fn request_reopen(&self, ch: u32, why: Reopen) -> bool {
        if !self.reset.arm(ch, why) {
            return false;
        }
        let _ = self.reset_wq.queue().enqueue(self.reset.clone());
        true
    }

    /// Transmits `skb` on its TX queue. Called from `ndo_start_xmit`.
    ///
    /// The stack holds the queue's xmit lock (`ctx`), which guards the SQ's slot: no other
    /// lock is taken per packet.
    ///
    /// Netpoll (netconsole) calls it with interrupts disabled, under netconsole's
    /// `target_list_lock`, also from an interrupt handler that printed; it has taken the
    /// xmit lock with a trylock, so the slot is ours there too. In hard interrupt context
    /// the packet is still refused as busy (counted in `tx_hardirq_busy`): the DMA API's
    /// mapping and the device host's doorbell path are not promised to hard interrupt
    /// context. The doorbell is a posted write (`host`), which takes no lock.
    ///
    /// Netpoll retries a refused packet, then sends it from its work.
    pub(crate) fn xmit(&self, dev: &Device, skb: SkBuff, ctx: &mut XmitCtx) -> Result<(), SkBuff> {
        if let XmitContext::HardIrq = xmit_context() {
            self.hardirq_busy.fetch_add(1, Ordering::Relaxed);
            return Err(skb);
        }
        let q = u32::from(skb.queue_mapping());
        let Some(txq) = dev.tx_queue(q) else {
            self.dropped_closed.fetch_add(1, Ordering::Relaxed);
            skb.drop_any(DropReason::DevReady);
            return Ok(());
        };
        let more = crate::kernel_ext::net::queue::xmit_more();
        self.xmit_on(txq, q, skb, more, ctx, |_, _| ())
    }

    /// Transmits `skb` on TX queue `q` outside `ndo_start_xmit` (XDP_TX and redirected
    /// frames of families without XDP SQs, as mana does): under the queue's xmit lock,
    /// doorbell rung. A refusal drops the skb (counted by the SQ). `on_done` runs under the
    /// TX slot's lock with what the SQ did with the packet. Returns whether the SQ took it.
    pub(crate) fn xmit_xdp_skb(
        &self,
        dev: &Device,
        q: u32,
        skb: SkBuff,
        on_done: impl FnOnce(&mut TxSide<F>, Result<(), TxRejectReason>),
    ) -> bool {
        let Some(txq) = dev.tx_queue(q) else {
            self.dropped_closed.fetch_add(1, Ordering::Relaxed);
            skb.drop_any(DropReason::DevReady);
            return false;
        };
        let mut xmit_lock = txq.lock();
        let mut sent = false;
        match self.xmit_on(txq, q, skb, false, &mut xmit_lock, |side, r| {
            sent = r.is_ok();
            on_done(side, r)
        }) {
            Ok(()) => sent,
            Err(skb) => {
                // No room: the SQ counted it busy; an XDP frame is not requeued.
                skb.drop_any(DropReason::DevReady);
                false
            }
        }
    }

    /// Transmits `skb` on queue `q` (`txq`), whose xmit lock `locked` proves held.
    fn xmit_on(
        &self,
        txq: &TxQueue,
        q: u32,
        skb: SkBuff,
        more: bool,
        locked: &mut impl XmitLocked,
        on_done: impl FnOnce(&mut TxSide<F>, Result<(), TxRejectReason>),
    ) -> Result<(), SkBuff> {
        let Some(tx) = self
            .txs
            .get(q as usize)
            .and_then(|slot| slot.get(locked))
            .and_then(Option::as_mut)
        else {
            // The queue's channel is closed (the stack stops the queue first, so this is
            // defensive); still counted.
            self.dropped_closed.fetch_add(1, Ordering::Relaxed);
            skb.drop_any(DropReason::DevReady);
            return Ok(());
        };
        let mut env = TxEnv {
            mmio: self.hw.bar(),
            dma: &self.dma,
            txq,
            closing: false,
        };
        match F::xmit(&mut tx.sq, TxSkb(skb), more, &mut env) {
            Ok(()) => {
                on_done(tx, Ok(()));
                Ok(())
            }
            Err(rej) => {
                on_done(tx, Err(rej.reason));
                let reason = match rej.reason {
                    TxRejectReason::Busy => return Err(rej.pkt.0),
                    TxRejectReason::MapError => DropReason::NoMem,
                    TxRejectReason::SqError => DropReason::DevReady,
                    TxRejectReason::Malformed
                    | TxRejectReason::TooManySegments
                    | TxRejectReason::HeaderTooLong => DropReason::PktTooBig,
                };
                // The SQ counted the refusal in its `dropped`.
                rej.pkt.0.drop_any(reason);
                Ok(())
            }
        }
    }

    /// `ndo_xdp_xmit`: sends frames redirected from another device on the queue of this
    /// CPU (modulo the open channels); rings once for the batch when `flush` is set.
    pub(crate) fn xdp_xmit(&self, dev: &Device, frames: &mut XdpFrames<'_>, flush: bool) {
        let live = self.live.load(Ordering::Acquire);
        if live == 0 {
            if let Some(f) = frames.next() {
                frames.give_back(f);
            }
            return;
        }
        let q = crate::kernel_ext::net::queue::this_cpu() % live;
        if !F::XDP_SQS {
            self.xdp_xmit_skbs(dev, q, frames);
            return;
        }
        let slot = self.xdp_txs.get(q as usize);
        let mut g = slot.map(|s| s.lock());
        let Some(side) = g.as_mut().and_then(|g| g.as_mut()) else {
            // The channel is closing: the core frees the frames.
            if let Some(f) = frames.next() {
                frames.give_back(f);
            }
            return;
        };
        let XdpSqSide {
            sq,
            full,
            posted,
            stats,
            ..
        } = side;
        let mut env = XdpEnv {
            mmio: self.hw.bar(),
            dma: &self.dma,
            pool: None,
            kind: XdpSqKind::Redirect,
            full,
        };
        while let Some(f) = frames.next() {
            if *env.full {
                stats.xmit_full += 1;
                frames.give_back(f);
                break;
            }
            match F::xdp_sq_xmit(sq, XdpTx::Frame(f), &mut env) {
                Ok(()) => *posted = true,
                Err(rej) => {
                    if rej.reason == TxRejectReason::Busy {
                        stats.xmit_full += 1;
                    } else {
                        stats.xmit_err += 1;
                    }
                    match rej.pkt {
                        XdpTx::Frame(f) => frames.give_back(f),
                        other => other.release(None),
                    }
                    break;
                }
            }
        }
        if flush && *posted {
            F::xdp_sq_flush(sq, &mut env);
            *posted = false;
        }
    }

    /// Sends one frame on the `ndo_xdp_xmit` SQ of channel `q` and rings (XDP_TX of a frame
    /// copied out of an XSK buffer); through the regular SQ as an skb for families without
    /// XDP SQs. Called from that channel's NAPI poll.
    pub(crate) fn xdp_tx_frame(&self, dev: &Device, q: u32, f: XdpFrame) {
        if !F::XDP_SQS {
            match f.into_tx_skb(dev, q as u16) {
                Ok(skb) => {
                    self.xmit_xdp_skb(dev, q, skb, |_, _| ());
                }
                Err(f) => f.return_napi(),
            }
            return;
        }
        let slot = self.xdp_txs.get(q as usize);
        let mut g = slot.map(|s| s.lock());
        let Some(side) = g.as_mut().and_then(|g| g.as_mut()) else {
            f.return_napi();
            return;
        };
        let XdpSqSide {
            sq, full, stats, ..
        } = side;
        let mut env = XdpEnv {
            mmio: self.hw.bar(),
            dma: &self.dma,
            pool: None,
            kind: XdpSqKind::Redirect,
            full,
        };
        match F::xdp_sq_xmit(sq, XdpTx::Frame(f), &mut env) {
            Ok(()) => F::xdp_sq_flush(sq, &mut env),
            Err(rej) => {
                if rej.reason == TxRejectReason::Busy {
                    stats.xmit_full += 1;
                } else {
                    stats.xmit_err += 1;
                }
                rej.pkt.release(None);
            }
        }
    }

    /// `ndo_xdp_xmit` without XDP SQs (mana_xdp_xmit): each frame becomes an skb sent on
    /// TX queue `q`.
    fn xdp_xmit_skbs(&self, dev: &Device, q: u32, frames: &mut XdpFrames<'_>) {
        while let Some(f) = frames.next() {
            match f.into_tx_skb(dev, q as u16) {
                Ok(skb) => {
                    // A frame the SQ cannot take is dropped here (it is an skb now) and
                    // counted, as mlx5e counts its XDP SQ's refusals.
                    self.xmit_xdp_skb(dev, q, skb, |side, r| match r {
                        Ok(()) => side.xdp_xmit += 1,
                        Err(TxRejectReason::Busy) => side.xdp_xmit_full += 1,
                        Err(_) => side.xdp_xmit_err += 1,
                    });
                }
                Err(f) => {
                    frames.give_back(f);
                    break;
                }
            }
        }
    }
}

/// The receive side of a channel.
struct RxSide<F: Family> {
    rx: F::Rx,
    pool: PagePool,
    /// The queue's `xdp_rxq_info` (registered while the channel exists).
    rxq: XdpRxq,
    /// The attached XDP program, if any.
    prog: Option<BpfProg>,
    /// The XDP_TX SQ (families with XDP SQs, while a program is attached).
    xdpsq: Option<XdpSqSide<F>>,
    /// XDP action counters.
    xdp: XdpStats,
    /// AF_XDP zero-copy queues, while a pool is registered for the channel's queue, an XDP
    /// program is attached and the interface is up.
    xsk: Option<KBox<XskSide<F>>>,
    /// What happened to the packets handed to the stack.
    counts: RxCounts,
}

/// Per-RQ counts of the packets the driver hands to the stack.
#[derive(Clone, Copy, Default)]
struct RxCounts {
    /// Received packets the stack could not take (no skb).
    dropped: u64,
    /// Handed up `CHECKSUM_UNNECESSARY` (the device verified the L3 and L4 checksums).
    csum_unnecessary: u64,
    /// Handed up `CHECKSUM_NONE` (no verdict, a changed frame, or `rx` off).
    csum_none: u64,
}

/// A channel's AF_XDP zero-copy queues (polled in its NAPI, under the RX lock).
struct XskSide<F: Family> {
    pool: XskPool,
    rxq: XskRxq,
    rq: F::XskRx,
    rqn: u32,
    /// The XSK SQ: descriptors from the socket's TX ring.
    sq: XdpSqSide<F>,
    /// TX descriptors taken from the ring but not sent; reported complete once the SQ is
    /// idle, so the completion ring keeps the order in which descriptors were taken.
    tx_lost: u32,
    stats: XskStats,
}

/// A channel's AF_XDP zero-copy state that `ndo_xsk_wakeup` and the port read without the
/// channel's locks.
#[derive(Default)]
struct XskFlags {
    /// The channel has AF_XDP zero-copy queues (in `rx` and `ico`): `ndo_xsk_wakeup` kicks
    /// NAPI for them. Set once they are in place, cleared before they go.
    zc: AtomicBool,
    /// The device RQ the RSS table names for this channel is the XSK RQ ([`Channel::rqn`]):
    /// set by the port around its steering switch (`mlx5e_rx_res_xsk_update`).
    steered: AtomicBool,
    /// The XSK RQ's device id while the XSK queues exist.
    rqn: AtomicU32,
    /// A wake-up's NOP is on the ICO SQ and its completion not yet reaped: no other is
    /// posted (mlx5e's `MLX5E_SQ_STATE_PENDING_XSK_TX`).
    nop_pending: AtomicBool,
    /// `ndo_xsk_wakeup` calls that reached the channel (`xsk_wakeups`), those that found
    /// NAPI scheduled and marked it missed instead (`xsk_wakeup_missed`), and the NOPs they
    /// posted, or (families without an ICO SQ) the NAPI polls they scheduled.
    wake_calls: AtomicU64,
    wake_missed: AtomicU64,
    wake_kicks: AtomicU64,
}

/// A channel's AF_XDP zero-copy queues as [`Channel::open_xsk`] makes them: the XSK side,
/// the ICO SQ (families with a NOP WQE), and their device ids.
type XskQueues<F> = (
    KBox<XskSide<F>>,
    Option<KBox<XdpSqSide<F>>>,
    <F as crate::family::Control>::Queues,
);

/// One channel: NAPI, the receive side, the interrupt state, and the way to the transmit
/// side.
#[pin_data]
pub(crate) struct Channel<F: Family> {
    #[pin]
    napi: Napi<Channel<F>>,
    #[pin]
    rx: SpinLock<Option<RxSide<F>>>,
    #[pin]
    irq: SpinLock<F::Irq>,
    /// The internal control SQ for `ndo_xsk_wakeup` NOPs (with AF_XDP zero-copy, families
    /// with a NOP WQE; userspace may kick from any CPU, hence its own lock).
    #[pin]
    ico: SpinLock<Option<KBox<XdpSqSide<F>>>>,
    /// The AF_XDP zero-copy state read without the channel's locks.
    xsk: XskFlags,
    shared: Arc<PortShared<F>>,
    dev: ARef<Device>,
    index: u32,
    /// The function's vector of the channel's interrupt, and the key of its handler there.
    intr: usize,
    irq_key: IrqKey,
    rqn: u32,
    /// Device queues, for teardown (the AF_XDP zero-copy queues are in `xsk_queues`).
    queues: F::Queues,
    /// Device ids of the AF_XDP zero-copy queues while they exist: they come and go with
    /// their pool while the channel lives. Shared with DIM, whose moderation changes reach
    /// the XSK RQ's CQ; held while they are destroyed.
    xsk_queues: Arc<Mutex<F::Queues>>,
    /// Counters of the AF_XDP zero-copy queues closed while the channel lived (only the
    /// XSK fields and CQ arms are set; on the heap, made at the first close: a
    /// `ChannelStats` is too large for the stack of the open path).
    #[pin]
    xsk_closed: SpinLock<Option<KBox<ChannelStats<F>>>>,
    /// Queue recovery ([`Channel::recover`]), on the port's `wq`.
    #[pin]
    recover_work: Work<Channel<F>>,
    /// Queues waiting for recovery ([`RECOVER_TX`], [`RECOVER_RX`]); set by NAPI, cleared by
    /// the recovery when the queue is back.
    recover_req: AtomicU32,
    /// Held by a recovery and by `close`; `true` once the channel is closing (recovery
    /// does nothing any more).
    #[pin]
    recover_lock: Mutex<bool>,
    /// Recoveries of the SQ and the RQ (`tx<N>_recover`, `rx<N>_recover`).
    tx_recover: AtomicU64,
    rx_recover: AtomicU64,
    /// Packets an SQ recovery dropped (in flight when the SQ failed).
    tx_recover_dropped: AtomicU64,
    /// TX watchdog timeouts (`tx_timeout`), those recovered (`tx_timeout_recovered`), and
    /// of those the lost interrupts (`ch_eq_rearm`: EQEs found waiting without one).
    tx_timeouts: AtomicU64,
    tx_timeouts_recovered: AtomicU64,
    eq_rearms: AtomicU64,
    /// A corrupt event (one naming a queue the channel does not have) was logged.
    eq_bad_logged: AtomicBool,
    /// Reopens of the port's channels this channel asked for (see [`ChannelStats::reopen`]).
    reopens: AtomicU64,
    /// This channel asked for a reopen (it asks once: the reopen closes it).
    reopen_asked: AtomicBool,
    /// The channel itself while it is active (from `activate` to `close`), for queueing
    /// its recovery from NAPI, which has only `&self`.
    #[pin]
    me: SpinLock<Option<Arc<Channel<F>>>>,
    /// Interrupts of the channel ([`ChannelStats::events`]).
    events: AtomicU64,
    /// Adaptive moderation (DIM) of the RX and TX CQs (`ethtool -C adaptive-rx/-tx`),
    /// sampled when a NAPI poll completes while on.
    #[pin]
    dim_rx: Dim<DimCqs<F>>,
    #[pin]
    dim_tx: Dim<DimCqs<F>>,
}

crate::impl_has_napi!(impl{F: Family} Channel<F>, napi);

kernel::impl_has_work! {
    impl{F: Family} HasWork<Self> for Channel<F> { self.recover_work }
}

/// [`Channel::recover_req`]: the SQ waits for recovery.
const RECOVER_TX: u32 = 1 << 0;
/// [`Channel::recover_req`]: the RQ waits for recovery.
const RECOVER_RX: u32 = 1 << 1;
/// [`Channel::recover_req`]: the TX watchdog fired on the channel's queue.
const RECOVER_TIMEOUT: u32 = 1 << 2;

impl<F: Family> WorkItem for Channel<F> {
    type Pointer = Arc<Channel<F>>;

    fn run(this: Arc<Channel<F>>) {
        this.recover();
    }
}

/// Counters of one channel, read under its locks.
pub(crate) struct ChannelStats<F: Family> {
    /// The SQ's counters.
    pub(crate) tx: F::TxStats,
    /// The RQ's counters.
    pub(crate) rx: F::RxStats,
    /// The XDP_TX SQ's counters.
    pub(crate) xdpsq: F::TxStats,
    /// The `ndo_xdp_xmit` SQ's counters.
    pub(crate) xdp_rd: F::TxStats,
    /// XDP action and refusal counters.
    pub(crate) xdp: XdpStats,
    /// The XSK RQ's counters.
    pub(crate) xsk_rx: F::RxStats,
    /// The XSK SQ's counters.
    pub(crate) xsk_sq: F::TxStats,
    /// AF_XDP zero-copy counters.
    pub(crate) xsk: XskStats,
    /// Packets still queued when the channel closed (dropped).
    pub(crate) tx_dropped: u64,
    /// Received packets the stack could not take (no skb).
    pub(crate) rx_dropped: u64,
    /// Packets handed to the stack `CHECKSUM_UNNECESSARY` (mlx5e `rx_csum_unnecessary`).
    pub(crate) rx_csum_unnecessary: u64,
    /// Packets handed to the stack `CHECKSUM_NONE` (mlx5e `rx_csum_none`).
    pub(crate) rx_csum_none: u64,
    /// CQ arms of the channel's CQs.
    pub(crate) arms: u64,
    /// SQ recoveries (mlx5e `tx<N>_recover`).
    pub(crate) tx_recover: u64,
    /// RQ recoveries (mlx5e `rx<N>_recover`).
    pub(crate) rx_recover: u64,
    /// TX watchdog timeouts on the channel's queue.
    pub(crate) tx_timeout: u64,
    /// Timeouts recovered (a lost interrupt found, or the SQ reset).
    pub(crate) tx_timeout_recovered: u64,
    /// Lost interrupts found by a timeout (mlx5e `ch_eq_rearm`).
    pub(crate) eq_rearm: u64,
    /// Events naming a queue the channel does not have ([`crate::family::DataPath::irq_bad_events`]).
    pub(crate) eq_bad_events: u64,
    /// Reopens of the port's channels this channel's faults caused (`ch<N>_reopen`): a
    /// fault no queue reset covers ([`PortShared::request_reopen`]).
    pub(crate) reopen: u64,
    /// Transmits refused in hard interrupt context (netpoll from an interrupt handler;
    /// port-wide, filled in by the port's sums).
    pub(crate) tx_hardirq_busy: u64,
    /// Interrupts of the channel (mlx5e `ch<N>_events`; DIM's event count).
    pub(crate) events: u64,
    /// Moderation profiles DIM applied to the channel's CQs (RX and TX).
    pub(crate) dim_changes: u64,
}

impl<F: Family> Clone for ChannelStats<F> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<F: Family> Copy for ChannelStats<F> {}

impl<F: Family> Default for ChannelStats<F> {
    fn default() -> Self {
        Self {
            tx: Default::default(),
            rx: Default::default(),
            xdpsq: Default::default(),
            xdp_rd: Default::default(),
            xdp: Default::default(),
            xsk_rx: Default::default(),
            xsk_sq: Default::default(),
            xsk: Default::default(),
            tx_dropped: 0,
            rx_dropped: 0,
            rx_csum_unnecessary: 0,
            rx_csum_none: 0,
            arms: 0,
            tx_recover: 0,
            rx_recover: 0,
            tx_timeout: 0,
            tx_timeout_recovered: 0,
            eq_rearm: 0,
            eq_bad_events: 0,
            reopen: 0,
            tx_hardirq_busy: 0,
            events: 0,
            dim_changes: 0,
        }
    }
}

impl<F: Family> ChannelStats<F> {
    /// Packets the regular RQ handed to the stack: what it received minus what an XDP
    /// program consumed (as mlx5e and mana count `rx_packets`).
    pub(crate) fn rx_stack_packets(&self) -> u64 {
        F::rx_packets(&self.rx).wrapping_sub(self.xdp.consumed())
    }

    /// Bytes of [`ChannelStats::rx_stack_packets`].
    pub(crate) fn rx_stack_bytes(&self) -> u64 {
        F::rx_bytes(&self.rx).wrapping_sub(self.xdp.consumed_bytes)
    }

    /// Adds `b` into `self`, counter by counter (wrapping, like the counters themselves).
    pub(crate) fn accumulate(&mut self, b: &Self) {
        F::accumulate(self, b);
        self.xdp.accumulate(&b.xdp);
        self.xsk.accumulate(&b.xsk);
        self.tx_dropped = self.tx_dropped.wrapping_add(b.tx_dropped);
        self.rx_dropped = self.rx_dropped.wrapping_add(b.rx_dropped);
        self.rx_csum_unnecessary = self.rx_csum_unnecessary.wrapping_add(b.rx_csum_unnecessary);
        self.rx_csum_none = self.rx_csum_none.wrapping_add(b.rx_csum_none);
        self.arms = self.arms.wrapping_add(b.arms);
        self.tx_recover = self.tx_recover.wrapping_add(b.tx_recover);
        self.rx_recover = self.rx_recover.wrapping_add(b.rx_recover);
        self.tx_timeout = self.tx_timeout.wrapping_add(b.tx_timeout);
        self.tx_timeout_recovered = self
            .tx_timeout_recovered
            .wrapping_add(b.tx_timeout_recovered);
        self.eq_rearm = self.eq_rearm.wrapping_add(b.eq_rearm);
        self.eq_bad_events = self.eq_bad_events.wrapping_add(b.eq_bad_events);
        self.reopen = self.reopen.wrapping_add(b.reopen);
        self.tx_hardirq_busy = self.tx_hardirq_busy.wrapping_add(b.tx_hardirq_busy);
        self.events = self.events.wrapping_add(b.events);
        self.dim_changes = self.dim_changes.wrapping_add(b.dim_changes);
    }
}

/// What a channel does with one received packet when a program is attached (XDP_TX goes
/// to the XDP_TX SQ, or through the regular SQ as an skb for families without XDP SQs).
struct XdpRx<'a, F: Family> {
    ch: &'a Channel<F>,
    napi: &'a Napi<Channel<F>>,
    pool: &'a PagePool,
    rxq: &'a XdpRxq,
    prog: &'a BpfProg,
    xdpsq: Option<&'a mut XdpSqSide<F>>,
    xdp: &'a mut XdpStats,
    counts: &'a mut RxCounts,
    /// A frame was redirected in this poll: flush before it ends.
    redirected: bool,
}

impl<F: Family> XdpRx<'_, F> {
    #[inline]
    fn rx(&mut self, page: RxPage, m: &RxMeta) {
        let v = self.rxq.run(self.prog, self.pool, page, m.len);
        if !matches!(v, Verdict::Pass { .. }) {
            self.xdp.consumed_bytes += u64::from(m.len);
        }
        match v {
            Verdict::Pass { page, off, len } => {
                self.xdp.pass += 1;
                // Checksum status and hash no longer describe a frame the program changed
                // (mlx5e keeps them; we keep them only when the frame kept its length and
                // place).
                let intact = off == self.pool.offset() && len == m.len;
                self.ch.deliver(
                    self.napi,
                    self.pool,
                    page,
                    off,
                    len,
                    m,
                    intact,
                    self.counts,
                    RxFrags::none(),
                );
            }
            Verdict::Tx { page, off, len } => {
                self.xdp.tx += 1;
                self.tx(page, off, len);
            }
            Verdict::Drop(page) => {
                self.xdp.drop += 1;
                self.pool.recycle(page);
            }
            Verdict::Aborted(page) => {
                self.xdp.drop += 1;
                self.xdp.aborted += 1;
                self.pool.recycle(page);
            }
            Verdict::Redirected => {
                self.xdp.redirect += 1;
                self.redirected = true;
            }
        }
    }

    /// XDP_TX of a frame in `page`.
    fn tx(&mut self, page: RxPage, off: u32, len: u32) {
        let shared = &self.ch.shared;
        match self.xdpsq.as_deref_mut() {
            Some(side) => {
                let XdpSqSide {
                    sq, full, posted, ..
                } = side;
                if *full {
                    self.xdp.tx_full += 1;
                    self.pool.recycle(page);
                    return;
                }
                let mut env = XdpEnv {
                    mmio: shared.hw.bar(),
                    dma: &shared.dma,
                    pool: Some(self.pool),
                    kind: XdpSqKind::Tx,
                    full,
                };
                match F::xdp_sq_xmit(sq, XdpTx::Page { page, off, len }, &mut env) {
                    Ok(()) => *posted = true,
                    Err(rej) => {
                        if rej.reason == TxRejectReason::Busy {
                            self.xdp.tx_full += 1;
                        } else {
                            self.xdp.tx_err += 1;
                        }
                        rej.pkt.release(Some(self.pool));
                    }
                }
            }
            None => {
                // As mana_xdp_tx: an skb through the channel's own TX queue.
                let q = self.ch.index;
                match self.pool.build_skb_at(page, off, len) {
                    Some(mut skb) => {
                        skb.set_queue_mapping(q as u16);
                        if !shared.xmit_xdp_skb(&self.ch.dev, q, skb, |_, _| ()) {
                            self.xdp.tx_err += 1;
                        }
                    }
                    None => self.xdp.tx_err += 1,
                }
            }
        }
    }
}

impl<F: Family> Channel<F> {
    /// Creates the device queues, the data-path structures and NAPI of channel `index`,
    /// posts its RX buffers and fills TX slot `index` (and its XDP slot). With `prog`, the
    /// channel runs it on every received packet. Its AF_XDP zero-copy queues, if it is to
    /// have them, come with [`Channel::xsk_enable`] (out of this frame: the open path's
    /// stack is deep). Interrupts are routed and CQs armed by [`Channel::activate`].
    pub(crate) fn open(
        dev: &Device,
        shared: &Arc<PortShared<F>>,
        index: u32,
        p: &ChannelParams,
        prog: Option<&BpfProg>,
    ) -> Result<Arc<Self>> {
        // The function's vector the family gives the channel (its handler's key: the
        // channel's number among the function's ports' channels, a vector may be shared).
        let intr = F::channel_vector(&shared.hw, &shared.func, index).ok_or(EINVAL)?;
        let irq_key = F::port_index(&shared.func) * MAX_CHANNELS + index as usize;
        let layout = p.rx_layout(F::RX_SCATTER);
        let pool = PagePool::new(
            &shared.dma,
            dev,
            // page_pool refuses rings over 32768 entries.
            (layout.segs << p.log_rq).min(16384),
            layout.order,
            p.rx_headroom(),
            layout.seg_len,
            p.xdp,
        )?;
        let rxq = XdpRxq::new(dev, index, &pool)?;
        // `guard` destroys the device queues made so far if a later step fails.
        let mut guard = DeviceQueues::<F>::new(shared);
        let ctx = OpenCtx {
            hw: &shared.hw,
            dma: &shared.dma,
            intr,
            pool: Some(&pool),
            func: &shared.func,
        };
        let opened = F::open(&ctx, &mut guard.queues, p)?;
        let xdpsq = match prog {
            Some(_) => F::xdp_sq_open(&ctx, &mut guard.queues, p, XdpSqKind::Tx)?,
            None => None,
        };
        let xdp_rd = F::xdp_sq_open(&ctx, &mut guard.queues, p, XdpSqKind::Redirect)?;
        let queues = guard.queues;
        let mut irq = opened.irq;
        F::irq_bind(&mut irq, &queues, None);
        let rx_side = RxSide {
            rx: opened.rx,
            pool,
            rxq,
            prog: prog.map(BpfProg::clone_ref),
            xdpsq: xdpsq.map(XdpSqSide::new),
            xdp: XdpStats::default(),
            xsk: None,
            counts: RxCounts::default(),
        };
        let xsk_queues = Arc::pin_init(
            new_mutex!(F::Queues::default(), "rsnic::Channel::xsk_queues"),
            GFP_KERNEL,
        )?;
        // (In `pin_init!`, `queues` names the field once it is initialised.)
        let dim_queues = queues;
        let (dim_xsk_rx, dim_xsk_tx) = (xsk_queues.clone(), xsk_queues.clone());
        let ch = Arc::pin_init(
            pin_init!(Self {
                napi <- Napi::new(),
                rx <- new_spinlock!(Some(rx_side), "rsnic::Channel::rx"),
                irq <- new_spinlock!(irq, "rsnic::Channel::irq"),
                ico <- new_spinlock!(None, "rsnic::Channel::ico"),
                xsk: XskFlags::default(),
                shared: shared.clone(),
                dev: ARef::from(dev),
                index,
                intr,
                irq_key,
                rqn: opened.rqn,
                queues,
                xsk_queues,
                xsk_closed <- new_spinlock!(None, "rsnic::Channel::xsk_closed"),
                recover_work <- new_work!("rsnic::Channel::recover"),
                recover_req: AtomicU32::new(0),
                recover_lock <- new_mutex!(false, "rsnic::Channel::recover"),
                tx_recover: AtomicU64::new(0),
                rx_recover: AtomicU64::new(0),
                tx_recover_dropped: AtomicU64::new(0),
                tx_timeouts: AtomicU64::new(0),
                tx_timeouts_recovered: AtomicU64::new(0),
                eq_rearms: AtomicU64::new(0),
                eq_bad_logged: AtomicBool::new(false),
                reopens: AtomicU64::new(0),
                reopen_asked: AtomicBool::new(false),
                me <- new_spinlock!(None, "rsnic::Channel::me"),
                events: AtomicU64::new(0),
                dim_rx <- Dim::new(
                    false,
                    DimCqs {
                        shared: shared.clone(),
                        queues: dim_queues,
                        xsk: dim_xsk_rx,
                        rx: true,
                        changes: AtomicU64::new(0),
                    }
                ),
                dim_tx <- Dim::new(
                    true,
                    DimCqs {
                        shared: shared.clone(),
                        queues: dim_queues,
                        xsk: dim_xsk_tx,
                        rx: false,
                        changes: AtomicU64::new(0),
                    }
                ),
            }),
            GFP_KERNEL,
        )?;
        guard.keep();
        // The CQs were made with DIM's default profile (the port's parameters hold it).
        if p.coal.adaptive_rx {
            ch.dim_rx.start();
        }
        if p.coal.adaptive_tx {
            ch.dim_tx.start();
        }
        if let (Some(slot), Some(txq)) = (shared.txs.get(index as usize), dev.tx_queue(index)) {
            let tx = TxSide {
                sq: opened.sq,
                xdp_xmit: 0,
                xdp_xmit_full: 0,
                xdp_xmit_err: 0,
            };
            if slot.bind(txq) {
                with_bh(|| {
                    let mut g = txq.lock();
                    if let Some(s) = slot.get(&mut g) {
                        *s = Some(tx);
                    }
                });
            }
        }
        if let (Some(slot), Some(sq)) = (shared.xdp_txs.get(index as usize), xdp_rd) {
            with_bh(|| *slot.lock() = Some(XdpSqSide::new(sq)));
        }
        Ok(ch)
    }

    /// Creates the AF_XDP zero-copy queues of channel `index` for `pool`, as mlx5e's
    /// `mlx5e_open_xsk`: the XSK SQ, the ICO SQ (families with a NOP WQE) and the XSK RQ,
    /// with their CQs on the channel's EQ (named in `chq`, the channel's device queues), and
    /// posts the buffers the fill ring has now, without waiting for more (a socket may fill
    /// it later). Returns them with their device ids ([`crate::family::Control::xsk_split`]);
    /// a failure destroys what was made. Sleeps.
    #[inline(never)]
    fn open_xsk(
        dev: &Device,
        shared: &Arc<PortShared<F>>,
        index: u32,
        chq: &F::Queues,
        p: &ChannelParams,
        pool: XskPool,
    ) -> Result<XskQueues<F>> {
        let ctx = OpenCtx {
            hw: &shared.hw,
            dma: &shared.dma,
            intr: index as usize,
            pool: None,
            func: &shared.func,
        };
        // The channel's queues with the XSK ones added as they are made, then split off
        // (the channel's stay with the channel).
        let mut q = *chq;
        type Made<F> = (KBox<XskSide<F>>, Option<KBox<XdpSqSide<F>>>);
        let mut made = || -> Result<Made<F>> {
            // On the heap (out of the callers' frames), allocated before the buffers are
            // posted: nothing can fail once they are.
            let xbox = KBox::<XskSide<F>>::new_uninit(GFP_KERNEL)?;
            let ibox = KBox::<XdpSqSide<F>>::new_uninit(GFP_KERNEL)?;
            let sq = F::xdp_sq_open(&ctx, &mut q, p, XdpSqKind::Xsk)?;
            // Without an ICO SQ (no NOP WQE, MANA) wake-ups schedule NAPI directly.
            let ico = F::xdp_sq_open(&ctx, &mut q, p, XdpSqKind::Ico)?;
            let rxq = XskRxq::new(dev, index, &pool)?;
            // Frames up to the MTU fit (checked when the pool was registered and at every MTU
            // change since).
            let buf_size = pool.rx_frame_size().min(p.rx_buf_len());
            let mut env = XskRxEnv {
                pool,
                mmio: shared.hw.bar(),
                alloc_failed: false,
            };
            // The last fallible step: it posts the buffers the fill ring has now.
            let Some(sq) = sq else {
                return Err(EINVAL);
            };
            let Some((rq, rqn)) = F::xsk_rq_open(&ctx, &mut q, p, buf_size, &mut env)? else {
                return Err(EINVAL);
            };
            Ok((
                KBox::write(
                    xbox,
                    XskSide {
                        pool,
                        rxq,
                        rq,
                        rqn,
                        sq: XdpSqSide::new(sq),
                        tx_lost: 0,
                        stats: XskStats::default(),
                    },
                ),
                ico.map(|ico| KBox::write(ibox, XdpSqSide::new(ico))),
            ))
        };
        let r = made();
        let xq = F::xsk_split(&mut q);
        match r {
            Ok((x, ico)) => Ok((x, ico, xq)),
            Err(e) => {
                F::destroy(&shared.hw, &shared.func, &xq);
                Err(e)
            }
        }
    }

    /// Opens the AF_XDP zero-copy queues of a channel for `pool`: a channel just opened
    /// (before [`Channel::activate`]: there is no NAPI to quiesce yet), or a live one whose
    /// queue got a pool bound while an XDP program is attached, as mlx5e's
    /// `mlx5e_xsk_enable_locked`: the queues are made while the channel runs, then put in
    /// place with only this channel's NAPI quiesced; the other channels go on. The port
    /// switches the steering to the XSK RQ afterwards. `ndo_xsk_wakeup` meanwhile finds
    /// NAPI disabled or no XSK queues and answers 0 (the poll scheduled at the end picks up
    /// what the socket queued). Under RTNL; sleeps.
    pub(crate) fn xsk_enable(&self, p: &ChannelParams, pool: XskPool) -> Result {
        if !F::XSK_ZC || self.xsk.zc.load(Ordering::Acquire) {
            return Err(EBUSY);
        }
        let (x, ico, xq) =
            Self::open_xsk(&self.dev, &self.shared, self.index, &self.queues, p, pool)?;
        let rqn = x.rqn;
        let mut ids = self.xsk_queues.lock();
        *ids = xq;
        self.napi.disable();
        // The interrupt still runs meanwhile, but schedules nothing: what it found is polled
        // when NAPI is scheduled below.
        let left = with_bh(|| {
            let mut rx = self.rx.lock();
            let left = match rx.as_mut() {
                Some(side) => {
                    side.xsk = Some(x);
                    None
                }
                // Cannot happen: the port only enables live channels, under its state lock.
                None => Some(x),
            };
            drop(rx);
            match left {
                Some(x) => Some((x, ico)),
                None => {
                    *self.ico.lock() = ico;
                    F::irq_bind(&mut self.irq.lock(), &self.queues, Some(&xq));
                    None
                }
            }
        });
        if let Some((x, ico)) = left {
            self.napi.enable();
            self.xsk_close(x, ico, &xq);
            *ids = F::Queues::default();
            return Err(ENXIO);
        }
        drop(ids);
        self.xsk.rqn.store(rqn, Ordering::Release);
        self.xsk.nop_pending.store(false, Ordering::Release);
        self.xsk.zc.store(true, Ordering::Release);
        self.napi.enable();
        // The new CQs' first arm, the XSK RQ's first refill, and whatever the interrupt
        // found while NAPI was off (mlx5e_trigger_napi_icosq).
        with_bh(|| self.napi.schedule());
        Ok(())
    }

    /// Closes the AF_XDP zero-copy queues of a live channel (its pool is unbound, or the
    /// port goes on without them), as mlx5e's `mlx5e_xsk_disable_locked`: the port switched
    /// the steering back to the regular RQ first; this channel's NAPI is quiesced while they
    /// are taken out, then the device finishes what was posted, the queues are destroyed,
    /// every outstanding TX descriptor is reported complete and every posted buffer freed,
    /// so the driver no longer touches the pool when this returns. Under RTNL; sleeps.
    pub(crate) fn xsk_disable(&self) {
        if !self.xsk.zc.swap(false, Ordering::AcqRel) {
            return;
        }
        self.xsk.steered.store(false, Ordering::Release);
        let mut ids = self.xsk_queues.lock();
        self.napi.disable();
        let (x, ico) = with_bh(|| {
            let x = self.rx.lock().as_mut().and_then(|side| side.xsk.take());
            (x, self.ico.lock().take())
        });
        self.xsk.nop_pending.store(false, Ordering::Release);
        self.xsk.rqn.store(0, Ordering::Release);
        self.napi.enable();
        with_bh(|| self.napi.schedule());
        if let Some(x) = x {
            self.xsk_close(x, ico, &ids);
        }
        *ids = F::Queues::default();
    }

    /// Lets the device finish what was posted on XSK queues taken out of the channel (up to
    /// about 100 ms), destroys their device queues (`xq`), then [`Channel::xsk_finish`]. The
    /// channel's interrupt state then expects only its own queues' events (those of the
    /// destroyed CQs still waiting are consumed first, and NAPI scheduled for what they
    /// covered). Sleeps.
    #[inline(never)]
    fn xsk_close(
        &self,
        mut x: KBox<XskSide<F>>,
        mut ico: Option<KBox<XdpSqSide<F>>>,
        xq: &F::Queues,
    ) {
        for _ in 0..100 {
            if with_bh(|| self.xsk_reap_closing(&mut x, ico.as_deref_mut())) {
                break;
            }
            crate::kernel_ext::sync::msleep(1);
        }
        F::destroy(&self.shared.hw, &self.shared.func, xq);
        // Completions written until then are descriptors the device sent.
        for _ in 0..64 {
            if with_bh(|| self.xsk_reap_closing(&mut x, ico.as_deref_mut())) {
                break;
            }
        }
        let mmio = self.shared.hw.bar();
        with_bh(|| {
            let waited = {
                let mut irq = self.irq.lock();
                let n = F::irq_recover(&mut irq, &mmio);
                F::irq_bind(&mut irq, &self.queues, None);
                n
            };
            if waited > 0 {
                self.napi.schedule();
            }
        });
        self.xsk_finish(x, ico);
    }

    /// Frees what XSK queues the device no longer runs still hold: every outstanding TX
    /// descriptor is reported complete (in order, after those completed) and every posted
    /// buffer goes back to the pool; their counters join the channel's `xsk_closed`. The
    /// XSK RQ's `xdp_rxq_info` is unregistered as `x` goes. Sleeps (allocates).
    #[inline(never)]
    fn xsk_finish(&self, mut xb: KBox<XskSide<F>>, mut ib: Option<KBox<XdpSqSide<F>>>) {
        let x: &mut XskSide<F> = &mut xb;
        let mut ico = ib.as_deref_mut();
        let mut env = XdpEnv {
            mmio: self.shared.hw.bar(),
            dma: &self.shared.dma,
            pool: None,
            kind: XdpSqKind::Xsk,
            full: &mut x.sq.full,
        };
        let n = with_bh(|| F::xdp_sq_drain(&mut x.sq.sq, &mut env, |f| f.release(None)));
        x.pool.tx_completed(n.wrapping_add(x.tx_lost));
        let mut renv = XskRxEnv {
            pool: x.pool,
            mmio: self.shared.hw.bar(),
            alloc_failed: false,
        };
        with_bh(|| F::xsk_rx_drain(&mut x.rq, &mut renv));
        let mut arms = 0u64;
        if let Some(ico) = ico.as_mut() {
            let mut env = XdpEnv {
                mmio: self.shared.hw.bar(),
                dma: &self.shared.dma,
                pool: None,
                kind: XdpSqKind::Ico,
                full: &mut ico.full,
            };
            with_bh(|| F::xdp_sq_drain(&mut ico.sq, &mut env, |f| f.release(None)));
            arms = F::xdp_sq_stats(&ico.sq).1;
        }
        let (r, a1) = F::xsk_rx_stats(&x.rq);
        let (t, a2) = F::xdp_sq_stats(&x.sq.sq);
        let closed = KBox::new(
            ChannelStats::<F> {
                xsk_rx: r,
                xsk_sq: t,
                xsk: x.stats,
                arms: arms.wrapping_add(a1).wrapping_add(a2),
                ..Default::default()
            },
            GFP_KERNEL,
        );
        let Ok(closed) = closed else {
            pr_warn!(
                "{}: ch{}: no memory to keep the closed AF_XDP queues' counters\n",
                self.dev.name(),
                self.index
            );
            return;
        };
        with_bh(|| {
            let mut g = self.xsk_closed.lock();
            match g.as_mut() {
                Some(c) => c.accumulate(&closed),
                None => *g = Some(closed),
            }
        });
    }

    /// Reaps the completions of XSK queues being closed (the XSK SQ's to the socket's
    /// completion ring, in order; the ICO SQ's NOPs). Returns whether both are idle.
    fn xsk_reap_closing(&self, x: &mut XskSide<F>, ico: Option<&mut XdpSqSide<F>>) -> bool {
        let mut idle = self.xsk_tx_reap(x, self.shared.hw.bar()).idle;
        if let Some(ico) = ico {
            let mut env = XdpEnv {
                mmio: self.shared.hw.bar(),
                dma: &self.shared.dma,
                pool: None,
                kind: XdpSqKind::Ico,
                full: &mut ico.full,
            };
            idle &= F::xdp_sq_reap(&mut ico.sq, &mut env, |f| f.release(None)).idle;
        }
        idle
    }

    /// Whether the channel has AF_XDP zero-copy queues.
    pub(crate) fn has_xsk(&self) -> bool {
        self.xsk.zc.load(Ordering::Acquire)
    }

    /// Points the channel's RSS entries at its XSK RQ (`on`) or back at its regular RQ
    /// ([`Channel::rqn`]); the port programs the device then.
    pub(crate) fn steer_xsk(&self, on: bool) {
        self.xsk
            .steered
            .store(on && self.has_xsk(), Ordering::Release);
    }

    /// The channel's index (its TX and RX queue number).
    pub(crate) fn index(&self) -> u32 {
        self.index
    }

    /// Device RQ number for the RSS table: the XSK RQ's while the channel steers to it
    /// (AF_XDP zero-copy; [`Channel::steer_xsk`]), else the regular RQ's.
    pub(crate) fn rqn(&self) -> u32 {
        if self.xsk.steered.load(Ordering::Acquire) {
            self.xsk.rqn.load(Ordering::Acquire)
        } else {
            self.rqn
        }
    }

    /// Changes the interrupt moderation of the channel's RX (`rx`) or TX CQs on the device,
    /// in place ([`crate::family::Control::modify_moderation`]; for RX the XSK RQ's CQ
    /// too). Sleeps.
    pub(crate) fn modify_moderation(&self, rx: bool, m: Moderation) -> Result {
        moderate(&self.shared, &self.queues, &self.xsk_queues, rx, m)
    }

    /// Turns VLAN stripping of the channel's RQs (the regular one and the AF_XDP zero-copy
    /// one, while it exists) on or off in place. Sleeps.
    pub(crate) fn set_rx_vlan(&self, strip: bool) -> Result {
        let (hw, func) = (&self.shared.hw, &self.shared.func);
        F::apply_rx_vlan(hw, func, &self.queues, strip)?;
        F::apply_rx_vlan(hw, func, &self.xsk_queues.lock(), strip)
    }

    /// Turns DIM of the RX (`rx`) or TX CQs on or off, setting the CQs to `m` (DIM's
    /// default profile when turning it on, the port's static moderation when turning it
    /// off). Off, DIM has stopped (no profile change runs or follows) before the CQs are
    /// set. Sleeps.
    pub(crate) fn set_adaptive(&self, rx: bool, on: bool, m: Moderation) -> Result {
        let dim = if rx { &self.dim_rx } else { &self.dim_tx };
        if on {
            let r = self.modify_moderation(rx, m);
            dim.start();
            r
        } else {
            dim.stop();
            self.modify_moderation(rx, m)
        }
    }

    /// DIM's sample at the end of a NAPI poll (mlx5e's `mlx5e_rx_dim_cq_rearm` and
    /// `mlx5e_tx_dim`): the channel's interrupts and the direction's cumulative packets and
    /// bytes. Softirq; allocates nothing.
    #[inline(never)]
    fn dim_sample(&self) {
        // DIM's event counter is 16 bits wide and wraps.
        let events = self.events.load(Ordering::Relaxed) as u16;
        if self.dim_rx.is_on() {
            let c = self.rx.lock().as_ref().map(|side| {
                let (s, _) = F::rx_stats(&side.rx);
                (F::rx_packets(&s), F::rx_bytes(&s))
            });
            if let Some((packets, bytes)) = c {
                self.dim_rx.sample(events, packets, bytes);
            }
        }
        if self.dim_tx.is_on() {
            let c = self.with_tx(|tx, _| {
                let (s, _) = F::tx_stats(&tx.sq);
                (F::tx_packets(&s), F::tx_bytes(&s))
            });
            if let Some((packets, bytes)) = c {
                self.dim_tx.sample(events, packets, bytes);
            }
        }
    }

    /// Replaces the attached XDP program by `prog` (same attach state: the channel keeps
    /// its queues). The old program is put after the RX lock is released.
    pub(crate) fn swap_prog(&self, prog: &BpfProg) {
        let old = with_bh(|| {
            self.rx
                .lock()
                .as_mut()
                .and_then(|side| side.prog.replace(prog.clone_ref()))
        });
        drop(old);
    }

    /// Adds and enables NAPI, routes and arms the interrupt, arms both CQs.
    pub(crate) fn activate(self: &Arc<Self>) {
        with_bh(|| *self.me.lock() = Some(self.clone()));
        self.napi.add(&self.dev);
        if let Err(e) = self
            .shared
            .hw
            .request_irq(self.intr, self.irq_key, self.clone())
        {
            pr_err!(
                "{}: channel {}: no interrupt: {:?}\n",
                self.dev.name(),
                self.index,
                e
            );
        }
        self.napi.enable();
        let mmio = self.shared.hw.bar();
        with_bh(|| F::irq_start(&mut self.irq.lock(), &mmio));
        self.arm();
    }

    /// Runs `f` on the channel's TX slot under its queue's xmit lock, taken with bottom
    /// halves disabled (the lock the stack holds around `ndo_start_xmit`). `None` if the
    /// channel has no TX queue or its slot is bound to another queue. The caller must not
    /// hold the xmit lock already, nor call into the stack's transmit path from `f`.
    fn with_tx_slot<R>(&self, f: impl FnOnce(&mut Option<TxSide<F>>, &TxQueue) -> R) -> Option<R> {
        let slot = self.shared.txs.get(self.index as usize)?;
        let txq = self.dev.tx_queue(self.index)?;
        with_bh(|| {
            let mut xmit = txq.lock();
            slot.get(&mut xmit).map(|s| f(s, txq))
        })
    }

    /// As [`Channel::with_tx_slot`], if the TX side is there.
    fn with_tx<R>(&self, f: impl FnOnce(&mut TxSide<F>, &TxQueue) -> R) -> Option<R> {
        self.with_tx_slot(|slot, txq| slot.as_mut().map(|tx| f(tx, txq)))
            .flatten()
    }

    fn arm(&self) {
        let mmio = self.shared.hw.bar();
        self.with_tx(|tx, _| F::arm_tx(&mut tx.sq, &mmio));
        with_bh(|| {
            if let Some(slot) = self.shared.xdp_txs.get(self.index as usize) {
                if let Some(x) = slot.lock().as_mut() {
                    F::xdp_sq_arm(&mut x.sq, &mmio);
                }
            }
            if let Some(rx) = self.rx.lock().as_mut() {
                F::arm_rx(&mut rx.rx, &mmio);
                if let Some(x) = rx.xdpsq.as_mut() {
                    F::xdp_sq_arm(&mut x.sq, &mmio);
                }
                if let Some(x) = rx.xsk.as_mut() {
                    F::xsk_rx_arm(&mut x.rq, &mmio);
                    F::xdp_sq_arm(&mut x.sq.sq, &mmio);
                }
            }
            if let Some(ico) = self.ico.lock().as_mut() {
                F::xdp_sq_arm(&mut ico.sq, &mmio);
            }
        });
    }

    /// `ndo_xsk_wakeup`, as mlx5e's `mlx5e_xsk_wakeup`: if NAPI is scheduled or running it is
    /// marked missed, so that it polls again and takes what the socket queued, and nothing
    /// else is done (`napi_if_scheduled_mark_missed`; also while NAPI is disabled, during
    /// an activation, which schedules it at its end). Otherwise a NOP on the ICO SQ, whose
    /// completion raises the channel's interrupt, so NAPI runs where the channel's
    /// interrupt is handled (mlx5e's `mlx5e_trigger_napi_icosq`), unless one is already in
    /// flight (its completion runs NAPI: mlx5e's `MLX5E_SQ_STATE_PENDING_XSK_TX`). Families
    /// without a NOP WQE (MANA) schedule the channel's NAPI here instead, on the calling
    /// CPU. Without XSK queues (not yet made) nothing is kicked. Always 0, as mlx5e. Any
    /// CPU.
    pub(crate) fn xsk_wakeup(&self) -> Result {
        self.xsk.wake_calls.fetch_add(1, Ordering::Relaxed);
        if self.napi.if_scheduled_mark_missed() {
            self.xsk.wake_missed.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
        if !self.xsk.zc.load(Ordering::Acquire) {
            return Ok(());
        }
        with_bh(|| {
            let mut g = self.ico.lock();
            let Some(ico) = g.as_mut() else {
                drop(g);
                // Bottom halves are off: the softirq runs when they are enabled again.
                if self.napi.schedule() {
                    self.xsk.wake_kicks.fetch_add(1, Ordering::Relaxed);
                }
                return;
            };
            if self.xsk.nop_pending.swap(true, Ordering::AcqRel) {
                return;
            }
            let XdpSqSide { sq, full, .. } = &mut **ico;
            let mut env = XdpEnv {
                mmio: self.shared.hw.bar(),
                dma: &self.shared.dma,
                pool: None,
                kind: XdpSqKind::Ico,
                full,
            };
            if F::xdp_sq_nop(sq, &mut env) {
                self.xsk.wake_kicks.fetch_add(1, Ordering::Relaxed);
            } else {
                // No room (or the SQ stopped on a fault, which reopens the channels).
                self.xsk.nop_pending.store(false, Ordering::Release);
            }
        });
        Ok(())
    }

    /// The channel's interrupt (bottom halves are disabled): read the interrupt state, then
    /// schedule NAPI.
    fn interrupt(&self) {
        self.events.fetch_add(1, Ordering::Relaxed);
        let mmio = self.shared.hw.bar();
        let (schedule, bad) = {
            let mut irq = self.irq.lock();
            (F::irq_handle(&mut irq, &mmio), F::irq_bad_events(&irq))
        };
        if schedule {
            self.napi.schedule();
        }
        // The first corrupt event of the channel is logged; all are counted.
        if bad != 0 && !self.eq_bad_logged.swap(true, Ordering::Relaxed) {
            pr_err!(
                "{}: ch{}: an event named a queue the channel does not have (counted in eqe_bad_cq): ignored, the channel's queues polled\n",
                self.dev.name(),
                self.index
            );
        }
    }

    /// Counters, read under the channel's locks.
    pub(crate) fn stats(&self) -> ChannelStats<F> {
        let mut s = ChannelStats::<F>::default();
        self.with_tx(|tx, _| {
            let (t, arms) = F::tx_stats(&tx.sq);
            s.tx = t;
            s.xdp.xmit += tx.xdp_xmit;
            s.xdp.xmit_full += tx.xdp_xmit_full;
            s.xdp.xmit_err += tx.xdp_xmit_err;
            s.arms = s.arms.wrapping_add(arms);
        });
        with_bh(|| {
            if let Some(slot) = self.shared.xdp_txs.get(self.index as usize) {
                if let Some(x) = slot.lock().as_ref() {
                    let (t, arms) = F::xdp_sq_stats(&x.sq);
                    s.xdp_rd = t;
                    s.xdp.accumulate(&x.stats);
                    s.arms = s.arms.wrapping_add(arms);
                }
            }
            if let Some(rx) = self.rx.lock().as_ref() {
                let (r, arms) = F::rx_stats(&rx.rx);
                s.rx = r;
                s.rx_dropped = rx.counts.dropped;
                s.rx_csum_unnecessary = rx.counts.csum_unnecessary;
                s.rx_csum_none = rx.counts.csum_none;
                s.xdp.accumulate(&rx.xdp);
                s.arms = s.arms.wrapping_add(arms);
                if let Some(x) = rx.xdpsq.as_ref() {
                    let (t, arms) = F::xdp_sq_stats(&x.sq);
                    s.xdpsq = t;
                    s.arms = s.arms.wrapping_add(arms);
                }
                if let Some(x) = rx.xsk.as_ref() {
                    let (r, arms) = F::xsk_rx_stats(&x.rq);
                    let (t, arms2) = F::xdp_sq_stats(&x.sq.sq);
                    s.xsk_rx = r;
                    s.xsk_sq = t;
                    s.xsk.accumulate(&x.stats);
                    s.arms = s.arms.wrapping_add(arms).wrapping_add(arms2);
                }
            }
            if let Some(ico) = self.ico.lock().as_ref() {
                let (_, arms) = F::xdp_sq_stats(&ico.sq);
                s.arms = s.arms.wrapping_add(arms);
            }
            // The XSK queues closed while the channel lived.
            if let Some(c) = self.xsk_closed.lock().as_ref() {
                s.accumulate(c);
            }
        });
        s.xsk.wakeups = self.xsk.wake_calls.load(Ordering::Relaxed);
        s.xsk.wake_missed = self.xsk.wake_missed.load(Ordering::Relaxed);
        s.xsk.wake_kicks = self.xsk.wake_kicks.load(Ordering::Relaxed);
        s.tx_recover = self.tx_recover.load(Ordering::Relaxed);
        s.rx_recover = self.rx_recover.load(Ordering::Relaxed);
        s.tx_timeout = self.tx_timeouts.load(Ordering::Relaxed);
        s.tx_timeout_recovered = self.tx_timeouts_recovered.load(Ordering::Relaxed);
        s.eq_rearm = self.eq_rearms.load(Ordering::Relaxed);
        s.eq_bad_events = with_bh(|| F::irq_bad_events(&self.irq.lock()));
        s.reopen = self.reopens.load(Ordering::Relaxed);
        s.events = self.events.load(Ordering::Relaxed);
        s.dim_changes = self
            .dim_rx
            .ctx()
            .changes
            .load(Ordering::Relaxed)
            .wrapping_add(self.dim_tx.ctx().changes.load(Ordering::Relaxed));
        s.tx_dropped = s
            .tx_dropped
            .wrapping_add(self.tx_recover_dropped.load(Ordering::Relaxed));
        s
    }

    /// Stops the channel's interrupt and NAPI (waiting for a running poll), so nothing wakes
    /// its TX queue any more. Sleeps.
    pub(crate) fn quiesce(&self) {
        self.shared.hw.free_irq(self.intr, self.irq_key);
        self.napi.disable();
    }

    /// Reaps the TX-side completions of a closing channel (NAPI is off). Returns whether
    /// every SQ is idle.
    fn reap_closing(&self, xdp_rd: &mut Option<XdpSqSide<F>>) -> bool {
        let shared = &self.shared;
        let mut idle = self
            .with_tx(|tx, txq| {
                let mut env = TxEnv {
                    mmio: shared.hw.bar(),
                    dma: &shared.dma,
                    txq,
                    closing: true,
                };
                F::tx_reap(&mut tx.sq, &mut env, |p| p.0.consume()).idle
            })
            .unwrap_or(true);
        with_bh(|| {
            if let Some(x) = xdp_rd.as_mut() {
                let mut env = XdpEnv {
                    mmio: shared.hw.bar(),
                    dma: &shared.dma,
                    pool: None,
                    kind: XdpSqKind::Redirect,
                    full: &mut x.full,
                };
                idle &= F::xdp_sq_reap(&mut x.sq, &mut env, |f| f.release(None)).idle;
            }
            if let Some(rx) = self.rx.lock().as_mut() {
                if let Some(x) = rx.xdpsq.as_mut() {
                    let pool = &rx.pool;
                    let mut env = XdpEnv {
                        mmio: shared.hw.bar(),
                        dma: &shared.dma,
                        pool: Some(pool),
                        kind: XdpSqKind::Tx,
                        full: &mut x.full,
                    };
                    idle &= F::xdp_sq_reap(&mut x.sq, &mut env, |f| f.release(Some(pool))).idle;
                }
                if let Some(x) = rx.xsk.as_mut() {
                    idle &= self.xsk_tx_reap(x, shared.hw.bar()).idle;
                }
            }
            if let Some(ico) = self.ico.lock().as_deref_mut() {
                let mut env = XdpEnv {
                    mmio: shared.hw.bar(),
                    dma: &shared.dma,
                    pool: None,
                    kind: XdpSqKind::Ico,
                    full: &mut ico.full,
                };
                idle &= F::xdp_sq_reap(&mut ico.sq, &mut env, |f| f.release(None)).idle;
            }
            idle
        })
    }

    /// Reaps the XSK SQ's completions and reports them to the socket's completion ring, in
    /// the order the descriptors were taken.
    fn xsk_tx_reap(&self, x: &mut XskSide<F>, mmio: Bar<'_>) -> TxReaped {
        let mut done = 0u32;
        let mut env = XdpEnv {
            mmio,
            dma: &self.shared.dma,
            pool: None,
            kind: XdpSqKind::Xsk,
            full: &mut x.sq.full,
        };
        let r = F::xdp_sq_reap(&mut x.sq.sq, &mut env, |f| {
            done += 1;
            f.release(None)
        });
        if r.idle && x.tx_lost > 0 {
            // Nothing in flight: the descriptors that were never sent come last.
            done += x.tx_lost;
            x.tx_lost = 0;
        }
        x.pool.tx_completed(done);
        r
    }

    /// One NAPI round of the AF_XDP zero-copy queues: TX completions, new descriptors from
    /// the socket's TX ring (up to `budget`, one doorbell), need_wakeup flags, then up to
    /// `budget` received frames through the program. Returns (RX work, TX busy).
    #[allow(clippy::too_many_arguments)]
    fn xsk_poll(
        &self,
        napi: &Napi<Self>,
        x: &mut XskSide<F>,
        prog: Option<&BpfProg>,
        budget: u32,
        mmio: Bar<'_>,
        redirected: &mut bool,
        counts: &mut RxCounts,
    ) -> (u32, bool) {
        let reaped = self.xsk_tx_reap(x, mmio);
        let XskSide {
            pool,
            rxq,
            rq,
            sq,
            tx_lost,
            stats,
            ..
        } = x;
        let pool = *pool;
        let mut env = XdpEnv {
            mmio,
            dma: &self.shared.dma,
            pool: None,
            kind: XdpSqKind::Xsk,
            full: &mut sq.full,
        };
        let (mut sent, mut peeked) = (0u32, false);
        while sent < budget && !*env.full {
            let Some(d) = pool.tx_peek() else {
                break;
            };
            peeked = true;
            match F::xdp_sq_xmit(&mut sq.sq, XdpTx::Xsk(d), &mut env) {
                Ok(()) => {
                    sent += 1;
                    sq.posted = true;
                }
                Err(rej) => {
                    stats.tx_err += 1;
                    *tx_lost += 1;
                    rej.pkt.release(None);
                }
            }
        }
        if peeked {
            pool.tx_release();
        }
        if sq.posted {
            F::xdp_sq_flush(&mut sq.sq, &mut env);
            sq.posted = false;
        }
        let tx_busy = reaped.busy || sent >= budget || *env.full;
        // The socket must kick us when we stopped for lack of descriptors (mlx5e: set
        // need_wakeup unless busy).
        pool.need_wakeup(false, !tx_busy);

        let dev: &Device = &self.dev;
        let queue = self.index as u16;
        let mut renv = XskRxEnv {
            pool,
            mmio,
            alloc_failed: false,
        };
        let work = F::xsk_rx_poll(rq, &mut renv, budget, |buf, m: &RxMeta| {
            match rxq.run(prog, napi, buf, m.len) {
                XskVerdict::Redirected => {
                    stats.xdp_redirect += 1;
                    *redirected = true;
                }
                XskVerdict::Drop | XskVerdict::Aborted => stats.xdp_drop += 1,
                XskVerdict::Pass(Some(mut skb)) => {
                    stats.pass += 1;
                    let csum_ok = self.csum_ok(m, counts);
                    let (hash, hash_type) = self.hash_of(m);
                    skb.rx_finish(dev, csum_ok, hash, hash_type, queue);
                    if let Some(t) = m.vlan {
                        skb.put_vlan_tag(t);
                    }
                    napi.gro_receive(skb);
                }
                XskVerdict::Tx(Some(f)) => {
                    stats.xdp_tx += 1;
                    self.shared.xdp_tx_frame(dev, self.index, f);
                }
                XskVerdict::Pass(None) | XskVerdict::Tx(None) => stats.copy_err += 1,
            }
        });
        if renv.alloc_failed {
            stats.alloc_err += 1;
        }
        // The socket must refill and kick us when its fill ring ran dry.
        pool.need_wakeup(true, renv.alloc_failed);
        (work, tx_busy)
    }

    /// Tears the channel down: lets the device finish what was posted (up to ~100 ms),
    /// destroys the device queues, then frees what is left. Packets the device never sent
    /// are dropped and counted. Returns the final counters. Call after [`Channel::quiesce`]
    /// and after the TX queues were disabled. Sleeps.
    pub(crate) fn close(self: Arc<Self>) -> ChannelStats<F> {
        // No recovery from now on (one running finishes first); with NAPI off none is
        // requested any more, and what was queued has run when the flush returns.
        *self.recover_lock.lock() = true;
        // Wake-ups kick nothing any more.
        self.xsk.zc.store(false, Ordering::Release);
        self.quiesce();
        // NAPI is off: no sample any more; a profile change in flight finishes before the
        // CQs go.
        self.dim_rx.stop();
        self.dim_tx.stop();
        self.shared.wq.flush();
        // The reference `activate` took (a cycle until now).
        drop(with_bh(|| self.me.lock().take()));
        let Some(txq) = self.dev.tx_queue(self.index) else {
            return ChannelStats::default();
        };
        // No more redirected frames on this channel: its XDP SQ leaves the port's slot.
        let mut xdp_rd = with_bh(|| {
            self.shared
                .xdp_txs
                .get(self.index as usize)
                .and_then(|s| s.lock().take())
        });
        if let Some(x) = xdp_rd.as_mut() {
            // Frames posted without a flush still go out.
            let mut env = XdpEnv {
                mmio: self.shared.hw.bar(),
                dma: &self.shared.dma,
                pool: None,
                kind: XdpSqKind::Redirect,
                full: &mut x.full,
            };
            with_bh(|| F::xdp_sq_flush(&mut x.sq, &mut env));
        }
        // Let the device drain the SQs; reap their completions here (NAPI is off).
        for _ in 0..100 {
            if self.reap_closing(&mut xdp_rd) {
                break;
            }
            crate::kernel_ext::sync::msleep(1);
        }
        // The device stops touching the channel's memory: queues first, then their CQs, the
        // AF_XDP zero-copy ones before the channel's own (whose EQ their CQs report to).
        {
            let mut ids = self.xsk_queues.lock();
            drop(DeviceQueues::<F>::of(&self.shared, *ids));
            *ids = F::Queues::default();
        }
        drop(DeviceQueues::<F>::of(&self.shared, self.queues));
        // Completions it wrote until then are packets it sent (a device that had stopped
        // may have gone on meanwhile): reaped, not dropped below. A queue stopped on a
        // fault reaps nothing (its CQ is not trusted). A reap takes at most 512 CQEs; 64
        // cover the largest ring.
        for _ in 0..64 {
            if self.reap_closing(&mut xdp_rd) {
                break;
            }
        }
        // The AF_XDP zero-copy queues: the socket gets every descriptor back (as completed,
        // in order) and every posted buffer returns to its pool before the pool is let go;
        // their counters join those of the XSK queues closed before.
        let (x, ico) = with_bh(|| {
            let x = self.rx.lock().as_mut().and_then(|side| side.xsk.take());
            (x, self.ico.lock().take())
        });
        if let Some(x) = x {
            self.xsk_finish(x, ico);
        }
        let mut final_stats = self.stats();
        if let Some(x) = xdp_rd.as_mut() {
            let (t, arms) = F::xdp_sq_stats(&x.sq);
            final_stats.xdp_rd = t;
            final_stats.xdp.accumulate(&x.stats);
            final_stats.arms = final_stats.arms.wrapping_add(arms);
            let mut env = XdpEnv {
                mmio: self.shared.hw.bar(),
                dma: &self.shared.dma,
                pool: None,
                kind: XdpSqKind::Redirect,
                full: &mut x.full,
            };
            let n = with_bh(|| F::xdp_sq_drain(&mut x.sq, &mut env, |f| f.release(None)));
            final_stats.xdp.xmit_err += u64::from(n);
        }
        let tx = self.with_tx_slot(|slot, _| slot.take()).flatten();
        if let Some(mut tx) = tx {
            let mut env = TxEnv {
                mmio: self.shared.hw.bar(),
                dma: &self.shared.dma,
                txq,
                closing: true,
            };
            let pkts = F::tx_drain(&mut tx.sq, &mut env, |p| p.0.drop_any(DropReason::DevReady));
            final_stats.tx_dropped += u64::from(pkts);
            txq.reset();
        }
        let rx = with_bh(|| self.rx.lock().take());
        if let Some(mut rx) = rx {
            let RxSide {
                rx, pool, xdpsq, ..
            } = &mut rx;
            let pool: &PagePool = pool;
            if let Some(x) = xdpsq.as_mut() {
                let mut env = XdpEnv {
                    mmio: self.shared.hw.bar(),
                    dma: &self.shared.dma,
                    pool: Some(pool),
                    kind: XdpSqKind::Tx,
                    full: &mut x.full,
                };
                let n = with_bh(|| F::xdp_sq_drain(&mut x.sq, &mut env, |f| f.release(Some(pool))));
                final_stats.xdp.tx_err += u64::from(n);
            }
            F::rx_drain(
                rx,
                &mut RxEnv {
                    pool,
                    mmio: self.shared.hw.bar(),
                },
            );
            final_stats.rx = F::rx_stats(rx).0;
        }
        final_stats
    }

    /// Hands a received packet at `off`, `len` bytes, to GRO. `meta_valid`: the device's
    /// checksum and hash still describe it.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn deliver(
        &self,
        napi: &Napi<Self>,
        pool: &PagePool,
        page: RxPage,
        off: u32,
        len: u32,
        m: &RxMeta,
        meta_valid: bool,
        counts: &mut RxCounts,
        frags: RxFrags<'_, RxPage>,
    ) {
        match pool.build_skb_at(page, off, len) {
            Some(mut skb) => {
                // RX scatter: the packet's further pages become the skb's fragments.
                for (page, len) in frags {
                    if !pool.add_frag(&mut skb, page, len) {
                        counts.dropped += 1;
                        skb.drop_reason(DropReason::NoMem);
                        return;
                    }
                }
                let (csum_ok, (hash, hash_type)) = if meta_valid {
                    (self.csum_ok(m, counts), self.hash_of(m))
                } else {
                    counts.csum_none += 1;
                    (false, (0, 0))
                };
                skb.rx_finish(&self.dev, csum_ok, hash, hash_type, self.index as u16);
                // A tag the device stripped stays the packet's whatever XDP did to the rest.
                if let Some(t) = m.vlan {
                    skb.put_vlan_tag(t);
                }
                napi.gro_receive(skb);
            }
            None => counts.dropped += 1,
        }
    }

    /// The RSS hash a packet goes up with and its type (0: none): the device's, unless the
    /// user turned `rxhash` off (as mlx5e's `mlx5e_skb_set_hash` under `NETIF_F_RXHASH`).
    #[inline(always)]
    fn hash_of(&self, m: &RxMeta) -> (u32, u8) {
        if self.shared.rx_hash.load(Ordering::Relaxed) {
            (m.hash, m.hash_type)
        } else {
            (0, 0)
        }
    }

    /// Whether a packet goes up `CHECKSUM_UNNECESSARY`: the device verified it and the
    /// user left `rx` checksumming on. Counts the verdict.
    #[inline(always)]
    fn csum_ok(&self, m: &RxMeta, counts: &mut RxCounts) -> bool {
        let ok = m.csum_ok && self.shared.rx_csum.load(Ordering::Relaxed);
        if ok {
            counts.csum_unnecessary += 1;
        } else {
            counts.csum_none += 1;
        }
        ok
    }
}

impl<F: Family> Poll for Channel<F> {
    fn poll(&self, napi: &Napi<Self>, budget: i32) -> i32 {
        // Netpoll polls with budget 0 and interrupts disabled, under netconsole's locks, also
        // from an interrupt handler: there nothing of the channel is locked (see
        // `PortShared::xmit`); NAPI reaps the TX CQ soon after.
        if budget == 0 && irqs_disabled() {
            return 0;
        }
        let mmio = self.shared.hw.bar();
        let mut tx_busy = false;
        let mut tx_cqes = 0;
        let mut tx_fault = false;
        let mut rx_fault = false;
        // A fault on a queue that is not reset in place (XDP, XSK, ICO).
        let mut reopen = None;
        // The TX completion walk, under the queue's xmit lock: once per poll.
        self.with_tx(|tx, txq| {
            let mut env = TxEnv {
                mmio,
                dma: &self.shared.dma,
                txq,
                closing: false,
            };
            let r = F::tx_reap(&mut tx.sq, &mut env, |p| p.0.napi_consume(budget));
            tx_busy = r.busy;
            tx_cqes = r.cqes;
            tx_fault = r.idle && F::tx_fault(&tx.sq).is_some();
        });
        if let Some(txq) = self.dev.tx_queue(self.index) {
            if tx_fault {
                // The queue stays stopped (packets wait in the qdisc) until the SQ is back.
                txq.stop();
                self.request_recovery(RECOVER_TX);
            }
        }
        if let Some(slot) = self.shared.xdp_txs.get(self.index as usize) {
            if let Some(x) = slot.lock().as_mut() {
                let mut env = XdpEnv {
                    mmio,
                    dma: &self.shared.dma,
                    pool: None,
                    kind: XdpSqKind::Redirect,
                    full: &mut x.full,
                };
                tx_busy |= F::xdp_sq_reap(&mut x.sq, &mut env, |f| f.release(None)).busy;
                if F::xdp_sq_fault(&x.sq) {
                    reopen = Some(Reopen::XdpSqFault);
                }
            }
        }
        if budget <= 0 {
            return 0;
        }
        let mut work = 0u32;
        if let Some(side) = self.rx.lock().as_mut() {
            let RxSide {
                rx,
                pool,
                rxq,
                prog,
                xdpsq,
                xdp,
                xsk,
                counts,
            } = side;
            let pool: &PagePool = pool;
            if let Some(x) = xdpsq.as_mut() {
                let mut env = XdpEnv {
                    mmio,
                    dma: &self.shared.dma,
                    pool: Some(pool),
                    kind: XdpSqKind::Tx,
                    full: &mut x.full,
                };
                tx_busy |= F::xdp_sq_reap(&mut x.sq, &mut env, |f| f.release(Some(pool))).busy;
                if F::xdp_sq_fault(&x.sq) {
                    reopen = Some(Reopen::XdpSqFault);
                }
            }
            match prog.as_ref() {
                None => {
                    work = F::rx_poll(
                        rx,
                        &mut RxEnv { pool, mmio },
                        budget as u32,
                        |page, m: &RxMeta, frags: RxFrags<'_, RxPage>| {
                            let off = pool.offset();
                            let len = m.len.saturating_sub(frags.bytes());
                            self.deliver(napi, pool, page, off, len, m, true, counts, frags)
                        },
                    );
                }
                Some(prog) => {
                    let mut x = XdpRx {
                        ch: self,
                        napi,
                        pool,
                        rxq,
                        prog,
                        xdpsq: xdpsq.as_mut(),
                        xdp,
                        counts,
                        redirected: false,
                    };
                    work = F::rx_poll(
                        rx,
                        &mut RxEnv { pool, mmio },
                        budget as u32,
                        |page, m: &RxMeta, frags: RxFrags<'_, RxPage>| {
                            if frags.is_empty() {
                                x.rx(page, m)
                            } else {
                                // Cannot happen: with a program attached the RQ does not
                                // scatter (`ChannelParams::rx_layout`). The pages after the
                                // first stay posted.
                                x.counts.dropped += 1;
                                pool.recycle(page);
                            }
                        },
                    );
                    if x.redirected {
                        kxdp::flush();
                    }
                    // One XDP_TX doorbell per poll.
                    if let Some(sq) = xdpsq.as_mut().filter(|s| s.posted) {
                        let mut env = XdpEnv {
                            mmio,
                            dma: &self.shared.dma,
                            pool: Some(pool),
                            kind: XdpSqKind::Tx,
                            full: &mut sq.full,
                        };
                        F::xdp_sq_flush(&mut sq.sq, &mut env);
                        sq.posted = false;
                    }
                }
            }
            if let Some(x) = xsk.as_mut() {
                let mut redirected = false;
                let left = (budget as u32).saturating_sub(work);
                let (w, busy) =
                    self.xsk_poll(napi, x, prog.as_ref(), left, mmio, &mut redirected, counts);
                if redirected {
                    kxdp::flush();
                }
                work += w;
                tx_busy |= busy;
                if F::xdp_sq_fault(&x.sq.sq) {
                    reopen = Some(Reopen::XdpSqFault);
                } else if F::xsk_rx_fault(&x.rq) {
                    reopen = Some(Reopen::XskRqFault);
                }
            }
            rx_fault = F::rx_fault(rx).is_some();
        }
        if rx_fault {
            self.request_recovery(RECOVER_RX);
        }
        if let Some(ico) = self.ico.lock().as_deref_mut() {
            let mut env = XdpEnv {
                mmio,
                dma: &self.shared.dma,
                pool: None,
                kind: XdpSqKind::Ico,
                full: &mut ico.full,
            };
            // A wake-up's NOP completed: the next wake-up that finds NAPI idle posts another
            // (mlx5e clears MLX5E_SQ_STATE_PENDING_XSK_TX only if the poll reaped something,
            // so the ICO SQ cannot overflow).
            if F::xdp_sq_reap(&mut ico.sq, &mut env, |f| f.release(None)).cqes > 0 {
                self.xsk.nop_pending.store(false, Ordering::Release);
            }
            if F::xdp_sq_fault(&ico.sq) {
                reopen = Some(Reopen::XdpSqFault);
            }
        }
        if let Some(why) = reopen {
            self.request_reopen(why, None);
        }
        if tx_busy || work >= budget as u32 {
            // NAPI polls again: give the CQs the doorbells the hardware needs meanwhile.
            self.with_tx(|tx, _| F::tx_continue(&mut tx.sq, tx_cqes, &mmio));
            if let Some(side) = self.rx.lock().as_mut() {
                F::rx_continue(&mut side.rx, work, &mmio);
            }
            return budget;
        }
        if napi.complete_done(work as i32) {
            if self.dim_rx.is_on() || self.dim_tx.is_on() {
                self.dim_sample();
            }
            self.arm();
        }
        work as i32
    }
}

impl<F: Family> Channel<F> {
    /// Asks for the recovery of a queue that stopped on a fault (`what`: [`RECOVER_TX`],
    /// [`RECOVER_RX`]); the first request queues the work, later ones until it is back do
    /// nothing. Any context.
    #[cold]
    fn request_recovery(&self, what: u32) {
        if self.recover_req.fetch_or(what, Ordering::AcqRel) & what != 0 {
            return;
        }
        if let Some(me) = self.me.lock().clone() {
            // Already queued (for the other queue): that run sees this request too.
            let _ = self.shared.wq.queue().enqueue(me);
        }
    }

    /// Asks for the port's channels to be reopened for a fault of this channel no queue
    /// reset covers (`queue`: the stopped queue and its fault, logged), once per channel:
    /// the reopen closes it. Counted (`ch<N>_reopen`) if this request is the one queued
    /// (another channel's may be waiting already, and covers this fault). Any context.
    #[cold]
    fn request_reopen(&self, why: Reopen, queue: Option<(&str, &QueueFault)>) {
        if self.reopen_asked.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Some((q, f)) = queue {
            self.log_reopen(q, f);
        }
        if self.shared.request_reopen(self.index, why) {
            self.reopens.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The recovery work: brings back the queues NAPI found stopped on a fault, as mlx5e's
    /// error-CQE recovery does (`mlx5e_tx_reporter_err_cqe_recover`, RQ recovery). Process
    /// context; sleeps (commands).
    fn recover(&self) {
        let closing = self.recover_lock.lock();
        if *closing {
            return;
        }
        let req = self.recover_req.load(Ordering::Acquire);
        if req & RECOVER_TIMEOUT != 0 {
            self.recover_timeout();
        }
        if req & RECOVER_TX != 0 {
            self.recover_tx();
        }
        if req & RECOVER_RX != 0 {
            self.recover_rx();
        }
        drop(closing);
    }

    /// `ndo_tx_timeout` of the channel's queue (the watchdog's timer, every xmit lock
    /// held): counted, the recovery queued.
    pub(crate) fn tx_timeout(&self) {
        self.tx_timeouts.fetch_add(1, Ordering::Relaxed);
        self.request_recovery(RECOVER_TIMEOUT);
    }

    /// TX timeout recovery, as mlx5e's (`mlx5e_tx_reporter_timeout_recover`): first a lost
    /// interrupt (events waiting on the channel's EQ: consumed, the EQ re-armed, NAPI
    /// scheduled, which re-arms the CQs). Otherwise, if the SQ stopped on an error CQE whose
    /// recovery failed, the SQ is reset again; if not, the queue is stuck for a reason no SQ
    /// reset is known to cure (a hung engine, a corrupt CQE the CQ holds on to), and the
    /// channels are reopened, as mlx5e does (`mlx5e_safe_reopen_channels`): every queue and
    /// CQ is made again.
    fn recover_timeout(&self) {
        self.recover_req
            .fetch_and(!RECOVER_TIMEOUT, Ordering::AcqRel);
        let mmio = self.shared.hw.bar();
        let eqes = with_bh(|| F::irq_recover(&mut self.irq.lock(), &mmio));
        if eqes > 0 {
            self.eq_rearms.fetch_add(1, Ordering::Relaxed);
            self.tx_timeouts_recovered.fetch_add(1, Ordering::Relaxed);
            pr_err!(
                "{}: sq{}: transmit timeout: {} events waited without an interrupt: EQ re-armed, NAPI scheduled\n",
                self.dev.name(),
                self.index,
                eqes
            );
            with_bh(|| self.napi.schedule());
            return;
        }
        let fault = self.with_tx(|t, _| F::tx_fault(&t.sq)).flatten();
        match fault {
            Some(f) if F::QUEUE_RESET => {
                if self.reset_sq(&f).is_ok() {
                    self.tx_timeouts_recovered.fetch_add(1, Ordering::Relaxed);
                }
            }
            // The reopen brings the SQ back, faulted or stuck (a fault already asked for it).
            Some(f) => {
                self.tx_timeouts_recovered.fetch_add(1, Ordering::Relaxed);
                self.request_reopen(Reopen::SqFault, Some(("sq", &f)));
            }
            None => {
                self.tx_timeouts_recovered.fetch_add(1, Ordering::Relaxed);
                self.request_reopen(Reopen::TxTimeout, None);
            }
        }
    }

    /// Logs a fault and the step of its recovery that failed, if one did (once per
    /// recovery: faults do not repeat without a recovery in between).
    fn log_fault(&self, queue: &str, f: &QueueFault, r: &Result) {
        match r {
            Ok(()) => pr_err!(
                "{}: {}{}: {} (syndrome {:#04x}, wqe_counter {}): queue recovered\n",
                self.dev.name(),
                queue,
                self.index,
                f.what,
                f.syndrome,
                f.wqe_counter
            ),
            Err(e) => pr_err!(
                "{}: {}{}: {} (syndrome {:#04x}, wqe_counter {}): recovery failed ({:?}), the queue stays stopped\n",
                self.dev.name(),
                queue,
                self.index,
                f.what,
                f.syndrome,
                f.wqe_counter,
                e
            ),
        }
    }

    /// Logs a fault whose recovery is the reopen of the port's channels.
    fn log_reopen(&self, queue: &str, f: &QueueFault) {
        pr_err!(
            "{}: {}{}: {}: the queue is stopped until the channels are reopened\n",
            self.dev.name(),
            queue,
            self.index,
            f.what
        );
    }

    /// SQ recovery: the SQ to RST (the device stops reading it), every packet still in
    /// flight dropped and counted, producer and consumer state and the doorbell record
    /// reset, BQL reset, the SQ to RDY, the queue woken. The queue has been stopped since
    /// NAPI found the fault.
    fn recover_tx(&self) {
        match self.with_tx(|t, _| F::tx_fault(&t.sq)).flatten() {
            // A failed reset is logged; the queue stays stopped (the watchdog tries again).
            Some(fault) if F::QUEUE_RESET => {
                let _ = self.reset_sq(&fault);
            }
            // The reopen closes this channel: nothing more to do here, and the request bit
            // stays set, so that later polls do not queue this again.
            Some(fault) => self.request_reopen(Reopen::SqFault, Some(("sq", &fault))),
            None => {
                self.recover_req.fetch_and(!RECOVER_TX, Ordering::AcqRel);
            }
        }
    }

    /// Resets the SQ (see [`Channel::recover_tx`]) for `fault`, logs it, and wakes the
    /// queue if it worked.
    fn reset_sq(&self, fault: &QueueFault) -> Result {
        let (Some(slot), Some(txq)) = (
            self.shared.txs.get(self.index as usize),
            self.dev.tx_queue(self.index),
        ) else {
            return Err(ENXIO);
        };
        let r = F::queue_to_reset(&self.shared.hw, &self.shared.func, &self.queues, true).and_then(
            |()| {
                let dropped = with_bh(|| {
                    // The stack's transmit path is kept out (the queue is stopped too).
                    let mut xmit = txq.lock();
                    let tx = slot.get(&mut xmit)?.as_mut()?;
                    let mut env = TxEnv {
                        mmio: self.shared.hw.bar(),
                        dma: &self.shared.dma,
                        txq,
                        closing: true,
                    };
                    let n =
                        F::tx_drain(&mut tx.sq, &mut env, |p| p.0.drop_any(DropReason::DevReady));
                    F::tx_reset(&mut tx.sq).then_some(n)
                })
                .ok_or(EIO)?;
                self.tx_recover_dropped
                    .fetch_add(u64::from(dropped), Ordering::Relaxed);
                txq.reset();
                F::queue_to_ready(&self.shared.hw, &self.shared.func, &self.queues, true)
            },
        );
        self.log_fault("sq", fault, &r);
        if r.is_ok() {
            self.tx_recover.fetch_add(1, Ordering::Relaxed);
            self.recover_req.fetch_and(!RECOVER_TX, Ordering::AcqRel);
            txq.wake();
        }
        r
    }

    /// RQ recovery: the RQ to RST (through ERR if the device has not stopped it), the CQEs
    /// written meanwhile discarded, every posted buffer back to the page pool, the RQ reset
    /// and refilled, then RDY, and NAPI scheduled.
    fn recover_rx(&self) {
        let Some(fault) = with_bh(|| self.rx.lock().as_ref().and_then(|r| F::rx_fault(&r.rx)))
        else {
            self.recover_req.fetch_and(!RECOVER_RX, Ordering::AcqRel);
            return;
        };
        if !F::QUEUE_RESET {
            // As for the SQ: the request bit stays set until the reopen closes the channel.
            self.request_reopen(Reopen::RqFault, Some(("rq", &fault)));
            return;
        }
        let r = F::queue_to_reset(&self.shared.hw, &self.shared.func, &self.queues, false)
            .and_then(|()| {
                with_bh(|| {
                    let mut s = self.rx.lock();
                    let side = s.as_mut()?;
                    let mut env = RxEnv {
                        pool: &side.pool,
                        mmio: self.shared.hw.bar(),
                    };
                    F::rx_discard(&mut side.rx, &mut env);
                    F::rx_drain(&mut side.rx, &mut env);
                    F::rx_reset(&mut side.rx, &mut env).then_some(())
                })
                .ok_or(EIO)?;
                F::queue_to_ready(&self.shared.hw, &self.shared.func, &self.queues, false)
            });
        self.log_fault("rq", &fault, &r);
        if r.is_ok() {
            self.rx_recover.fetch_add(1, Ordering::Relaxed);
            self.recover_req.fetch_and(!RECOVER_RX, Ordering::AcqRel);
            with_bh(|| self.napi.schedule());
        }
    }
}

/// Device queues of a channel that is not finished yet (or is being closed): destroyed on
/// drop unless kept, so a failed open leaves nothing behind in the device.
struct DeviceQueues<F: Family> {
    hw: Arc<Function>,
    func: Arc<F::Func>,
    queues: F::Queues,
    keep: bool,
}

impl<F: Family> DeviceQueues<F> {
    fn new(shared: &PortShared<F>) -> Self {
        Self::of(shared, F::Queues::default())
    }

    /// The queues of an open channel (destroyed on drop, which sleeps).
    fn of(shared: &PortShared<F>, queues: F::Queues) -> Self {
        Self {
            hw: shared.hw.clone(),
            func: shared.func.clone(),
            queues,
            keep: false,
        }
    }

    fn keep(mut self) {
        self.keep = true;
    }
}

impl<F: Family> Drop for DeviceQueues<F> {
    fn drop(&mut self) {
        if !self.keep {
            F::destroy(&self.hw, &self.func, &self.queues);
        }
    }
}

impl<F: Family> IrqHandler for Channel<F> {
    fn irq(&self) {
        self.interrupt();
    }
}
