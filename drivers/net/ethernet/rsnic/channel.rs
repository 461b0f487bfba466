// SPDX-License-Identifier: GPL-2.0

//! Channels: each has an SQ with its TX CQ, an RQ with its RX CQ, one NAPI context and one
//! interrupt vector, as an mlx5e channel does; generic over the device [`Family`].
//!
//! The SQ of queue `i` lives in the port's TX slot `i` ([`TxSlot`]), where `ndo_start_xmit`
//! finds it; the rest lives in the [`Channel`], which NAPI polls. The slot's spinlock
//! serialises the transmit path and the TX completion walk of NAPI (mlx5e needs no lock
//! there because its producer and consumer counters are split by hand; the data path's SQs
//! keep both in one `&mut` structure, which the lock stands for).
//!
//! NAPI reaps the TX CQ first (also with budget 0), then the RX CQ within the budget, hands
//! packets to GRO, re-posts RX buffers with one doorbell per poll (mlx5: a doorbell-record
//! write; MANA: an RQ doorbell with `wqe_cnt = 0`), and re-arms both CQs when it completes.
//! While it keeps polling, the family rings the CQ doorbells its hardware needs anyway (MANA:
//! at least one per 8 wraps of a CQ).
//!
//! MANA's interrupt goes through an event queue: the channel's vector handler reads the EQ
//! ([`Family::irq_handle`]) before scheduling NAPI.

use crate::dp::hw::{Barriers, DmaAddr, Mmio};
use crate::dp::mlx5::{
    rq::{RxBufProvider, RxBuffer},
    tx::{
        DmaEntry, DmaKind, Gso, TxCsum, TxDmaMap, TxPacket, TxQueue as DpTxQueue, TxRejectReason,
        VlanTag,
    },
};
use crate::engine::{Engine, EngineMmio, MAX_CHANNELS};
use crate::ext::{
    dma::DmaDevice,
    net::{
        device::Device,
        napi::{Napi, Poll},
        page_pool::{PagePool, RxPage},
        queue::TxQueue,
        skb::{DropReason, SkBuff},
    },
    sync::with_bh,
};
use crate::family::{Family, OpenCtx, RxMeta};
use core::pin::Pin;
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::{
    new_spinlock,
    prelude::*,
    sync::{Arc, SpinLock},
    types::ARef,
};

/// Headroom before received packets (`NET_SKB_PAD + NET_IP_ALIGN`, so the IP header is
/// aligned).
pub(crate) const RX_HEADROOM: u32 = 64 + 2;
/// Bytes the skb needs after the packet data (`skb_shared_info`, rounded up).
const RX_TAILROOM: u32 = 384;
/// Memory key put in data segments (the simulated device does not check keys).
pub(crate) const LKEY: u32 = 0;

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
    /// The family's private flags (mlx5: `tx_mpwqe`; MANA: `rx_db_per_packet`).
    pub(crate) pflags: u32,
}

impl ChannelParams {
    /// Bytes the device may write into one RX buffer (frame with two VLAN tags).
    pub(crate) fn rx_buf_len(&self) -> u32 {
        self.mtu + 14 + 8
    }

    /// Page order of RX buffers.
    pub(crate) fn rx_order(&self) -> u32 {
        let need = RX_HEADROOM + self.rx_buf_len() + RX_TAILROOM;
        let mut order = 0;
        while (kernel::page::PAGE_SIZE as u32) << order < need {
            order += 1;
        }
        order
    }
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
        RxPage::dma_addr(self) + u64::from(RX_HEADROOM)
    }
}

/// Implements [`Mmio`] and [`Barriers`] for an environment with an `mmio` field: registers
/// through the engine, the kernel's barriers.
macro_rules! via_engine_mmio {
    ($env:ident) => {
        impl<F: Family> Mmio for $env<'_, F> {
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

        impl<F: Family> Barriers for $env<'_, F> {
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

via_engine_mmio!(TxEnv);
via_engine_mmio!(RxEnv);

/// What an SQ needs from the kernel while it transmits or completes: the registers, the DMA
/// API and the netdev TX queue (BQL).
pub(crate) struct TxEnv<'a, F: Family> {
    /// The device's registers.
    pub(crate) mmio: EngineMmio<'a, F>,
    /// DMA mapping of the packets.
    pub(crate) dma: &'a DmaDevice,
    /// The netdev TX queue (stop/wake, BQL).
    pub(crate) txq: &'a TxQueue,
    /// The channel is closing: its TX queue was disabled and must stay so (completions
    /// reaped during teardown do not wake it).
    pub(crate) closing: bool,
}

impl<F: Family> TxDmaMap<TxSkb> for TxEnv<'_, F> {
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

impl<F: Family> DpTxQueue for TxEnv<'_, F> {
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
pub(crate) struct RxEnv<'a, F: Family> {
    /// Where RX buffers come from and go back to.
    pub(crate) pool: &'a PagePool,
    /// The device's registers (MANA rings its RQ doorbell through them).
    pub(crate) mmio: EngineMmio<'a, F>,
}

impl<F: Family> RxBufProvider<RxPage> for RxEnv<'_, F> {
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
}

/// A port's TX slot: the SQ of one TX queue, if its channel is open.
pub(crate) type TxSlot<F> = Pin<KBox<SpinLock<Option<TxSide<F>>>>>;

/// A new, empty TX slot.
pub(crate) fn new_tx_slot<F: Family>() -> Result<TxSlot<F>> {
    KBox::pin_init(new_spinlock!(None, "rsnic::TxSlot"), GFP_KERNEL)
}

/// What a port shares with its channels and its transmit path.
pub(crate) struct PortShared<F: Family> {
    /// The simulated device.
    pub(crate) engine: Arc<Engine<F>>,
    /// The device's DMA parent.
    pub(crate) dma: Arc<DmaDevice>,
    /// Index of the port on its device (doorbell page, queue ownership).
    pub(crate) port: usize,
    /// One slot per possible TX queue.
    pub(crate) txs: KVec<TxSlot<F>>,
    /// Packets handed to a TX queue whose channel was closed (dropped, counted).
    pub(crate) dropped_closed: AtomicU64,
}

impl<F: Family> PortShared<F> {
    /// Transmits `skb` on its TX queue. Called from `ndo_start_xmit`.
    pub(crate) fn xmit(&self, dev: &Device, skb: SkBuff) -> Result<(), SkBuff> {
        let q = u32::from(skb.queue_mapping());
        let (Some(slot), Some(txq)) = (self.txs.get(q as usize), dev.tx_queue(q)) else {
            self.dropped_closed.fetch_add(1, Ordering::Relaxed);
            skb.drop_any(DropReason::DevReady);
            return Ok(());
        };
        let mut g = slot.lock();
        let Some(tx) = g.as_mut() else {
            // The queue's channel is closed (the stack stops the queue first, so this is
            // defensive); still counted.
            self.dropped_closed.fetch_add(1, Ordering::Relaxed);
            skb.drop_any(DropReason::DevReady);
            return Ok(());
        };
        let mut env = TxEnv {
            mmio: EngineMmio(&self.engine),
            dma: &self.dma,
            txq,
            closing: false,
        };
        let more = crate::ext::net::queue::xmit_more();
        match F::xmit(&mut tx.sq, TxSkb(skb), more, &mut env) {
            Ok(()) => Ok(()),
            Err(rej) => {
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
}

/// The receive side of a channel.
struct RxSide<F: Family> {
    rx: F::Rx,
    pool: PagePool,
    /// Received packets the stack could not take (no skb).
    dropped: u64,
}

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
    shared: Arc<PortShared<F>>,
    dev: ARef<Device>,
    index: u32,
    vector: usize,
    rqn: u32,
    /// Device queues, for teardown.
    queues: F::Queues,
}

crate::impl_has_napi!(impl{F: Family} Channel<F>, napi);

/// Counters of one channel, read under its locks.
pub(crate) struct ChannelStats<F: Family> {
    /// The SQ's counters.
    pub(crate) tx: F::TxStats,
    /// The RQ's counters.
    pub(crate) rx: F::RxStats,
    /// Packets still queued when the channel closed (dropped).
    pub(crate) tx_dropped: u64,
    /// Received packets the stack could not take (no skb).
    pub(crate) rx_dropped: u64,
    /// CQ arms of both CQs.
    pub(crate) arms: u64,
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
            tx_dropped: 0,
            rx_dropped: 0,
            arms: 0,
        }
    }
}

impl<F: Family> ChannelStats<F> {
    /// Adds `b` into `self`, counter by counter (wrapping, like the counters themselves).
    pub(crate) fn accumulate(&mut self, b: &Self) {
        F::accumulate(self, b);
        self.tx_dropped = self.tx_dropped.wrapping_add(b.tx_dropped);
        self.rx_dropped = self.rx_dropped.wrapping_add(b.rx_dropped);
        self.arms = self.arms.wrapping_add(b.arms);
    }
}

impl<F: Family> Channel<F> {
    /// Creates the device queues, the data-path structures and NAPI of channel `index`,
    /// posts its RX buffers and fills TX slot `index`. Interrupts are routed and CQs armed by
    /// [`Channel::activate`].
    pub(crate) fn open(
        dev: &Device,
        shared: &Arc<PortShared<F>>,
        index: u32,
        p: &ChannelParams,
    ) -> Result<Arc<Self>> {
        let vector = shared.port * MAX_CHANNELS + index as usize;
        let pool = PagePool::new(
            &shared.dma,
            dev,
            1u32 << p.log_rq,
            p.rx_order(),
            RX_HEADROOM,
            p.rx_buf_len(),
        )?;
        // `guard` destroys the device queues made so far if a later step fails.
        let mut guard = DeviceQueues::<F>::new(&shared.engine);
        let opened = F::open(
            &OpenCtx {
                engine: &shared.engine,
                dma: &shared.dma,
                port: shared.port,
                vector,
                pool: &pool,
            },
            &mut guard.queues,
            p,
        )?;
        let queues = guard.queues;
        let ch = Arc::pin_init(
            pin_init!(Self {
                napi <- Napi::new(),
                rx <- new_spinlock!(
                    Some(RxSide { rx: opened.rx, pool, dropped: 0 }),
                    "rsnic::Channel::rx"
                ),
                irq <- new_spinlock!(opened.irq, "rsnic::Channel::irq"),
                shared: shared.clone(),
                dev: ARef::from(dev),
                index,
                vector,
                rqn: opened.rqn,
                queues,
            }),
            GFP_KERNEL,
        )?;
        guard.keep();
        if let Some(slot) = shared.txs.get(index as usize) {
            let tx = TxSide { sq: opened.sq };
            with_bh(|| *slot.lock() = Some(tx));
        }
        Ok(ch)
    }

    /// The channel's index (its TX and RX queue number).
    pub(crate) fn index(&self) -> u32 {
        self.index
    }

    /// Device RQ number (for the RSS table).
    pub(crate) fn rqn(&self) -> u32 {
        self.rqn
    }

    /// Adds and enables NAPI, routes and arms the interrupt, arms both CQs.
    pub(crate) fn activate(self: &Arc<Self>) {
        self.napi.add(&self.dev);
        self.shared.engine.set_irq(self.vector, Some(self.clone()));
        self.napi.enable();
        let mmio = EngineMmio(&self.shared.engine);
        with_bh(|| F::irq_start(&mut self.irq.lock(), &mmio));
        self.arm();
    }

    fn arm(&self) {
        let mmio = EngineMmio(&self.shared.engine);
        with_bh(|| {
            if let Some(slot) = self.shared.txs.get(self.index as usize) {
                if let Some(tx) = slot.lock().as_mut() {
                    F::arm_tx(&mut tx.sq, &mmio);
                }
            }
            if let Some(rx) = self.rx.lock().as_mut() {
                F::arm_rx(&mut rx.rx, &mmio);
            }
        });
    }

    /// The channel's interrupt (bottom halves are disabled): read the interrupt state, then
    /// schedule NAPI.
    pub(crate) fn interrupt(&self) {
        let mmio = EngineMmio(&self.shared.engine);
        if F::irq_handle(&mut self.irq.lock(), &mmio) {
            self.napi.schedule();
        }
    }

    /// Counters, read under the channel's locks.
    pub(crate) fn stats(&self) -> ChannelStats<F> {
        let mut s = ChannelStats::<F>::default();
        with_bh(|| {
            if let Some(slot) = self.shared.txs.get(self.index as usize) {
                if let Some(tx) = slot.lock().as_ref() {
                    let (t, arms) = F::tx_stats(&tx.sq);
                    s.tx = t;
                    s.arms = s.arms.wrapping_add(arms);
                }
            }
            if let Some(rx) = self.rx.lock().as_ref() {
                let (r, arms) = F::rx_stats(&rx.rx);
                s.rx = r;
                s.rx_dropped = rx.dropped;
                s.arms = s.arms.wrapping_add(arms);
            }
        });
        s
    }

    /// Stops the channel's interrupt and NAPI (waiting for a running poll), so nothing wakes
    /// its TX queue any more. Sleeps.
    pub(crate) fn quiesce(&self) {
        self.shared.engine.set_irq(self.vector, None);
        self.napi.disable();
    }

    /// Tears the channel down: lets the device finish what was posted (up to ~100 ms),
    /// destroys the device queues, then frees what is left. Packets the device never sent
    /// are dropped and counted. Returns the final counters. Call after [`Channel::quiesce`]
    /// and after the TX queues were disabled. Sleeps.
    pub(crate) fn close(self: Arc<Self>) -> ChannelStats<F> {
        self.quiesce();
        let Some(txq) = self.dev.tx_queue(self.index) else {
            return ChannelStats::default();
        };
        let slot = self.shared.txs.get(self.index as usize);
        // Let the device drain the SQ; reap its completions here (NAPI is off).
        for _ in 0..100 {
            let done = with_bh(|| match slot.map(|s| s.lock()) {
                Some(mut g) => match g.as_mut() {
                    Some(tx) => {
                        let mut env = TxEnv {
                            mmio: EngineMmio(&self.shared.engine),
                            dma: &self.shared.dma,
                            txq,
                            closing: true,
                        };
                        F::tx_reap(&mut tx.sq, &mut env, |p| p.0.consume()).idle
                    }
                    None => true,
                },
                None => true,
            });
            if done {
                break;
            }
            crate::ext::sync::msleep(1);
        }
        // The device stops touching the channel's memory: queues first, then their CQs.
        drop(DeviceQueues::<F>::of(&self.shared.engine, self.queues));
        let stats = self.stats();
        let mut final_stats = stats;
        let tx = with_bh(|| slot.and_then(|s| s.lock().take()));
        if let Some(mut tx) = tx {
            let mut env = TxEnv {
                mmio: EngineMmio(&self.shared.engine),
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
            let RxSide { rx, pool, .. } = &mut rx;
            F::rx_drain(
                rx,
                &mut RxEnv {
                    pool,
                    mmio: EngineMmio(&self.shared.engine),
                },
            );
        }
        final_stats
    }
}

impl<F: Family> Poll for Channel<F> {
    fn poll(&self, napi: &Napi<Self>, budget: i32) -> i32 {
        let mmio = EngineMmio(&self.shared.engine);
        let mut tx_busy = false;
        let mut tx_cqes = 0;
        if let (Some(slot), Some(txq)) = (
            self.shared.txs.get(self.index as usize),
            self.dev.tx_queue(self.index),
        ) {
            if let Some(tx) = slot.lock().as_mut() {
                let mut env = TxEnv {
                    mmio,
                    dma: &self.shared.dma,
                    txq,
                    closing: false,
                };
                let r = F::tx_reap(&mut tx.sq, &mut env, |p| p.0.napi_consume(budget));
                tx_busy = r.busy;
                tx_cqes = r.cqes;
            }
        }
        if budget <= 0 {
            return 0;
        }
        let mut work = 0u32;
        if let Some(side) = self.rx.lock().as_mut() {
            let RxSide { rx, pool, dropped } = side;
            let dev: &Device = &self.dev;
            let queue = self.index as u16;
            work = F::rx_poll(
                rx,
                &mut RxEnv { pool, mmio },
                budget as u32,
                |page, m: &RxMeta| match pool.build_skb(page, m.len) {
                    Some(mut skb) => {
                        skb.rx_finish(dev, m.csum_ok, m.hash, m.hash_type, queue);
                        napi.gro_receive(skb);
                    }
                    None => *dropped += 1,
                },
            );
        }
        if tx_busy || work >= budget as u32 {
            // NAPI polls again: give the CQs the doorbells the hardware needs meanwhile.
            if let Some(slot) = self.shared.txs.get(self.index as usize) {
                if let Some(tx) = slot.lock().as_mut() {
                    F::tx_continue(&mut tx.sq, tx_cqes, &mmio);
                }
            }
            if let Some(side) = self.rx.lock().as_mut() {
                F::rx_continue(&mut side.rx, work, &mmio);
            }
            return budget;
        }
        if napi.complete_done(work as i32) {
            self.arm();
        }
        work as i32
    }
}

/// Device queues of a channel that is not finished yet (or is being closed): destroyed on
/// drop unless kept, so a failed open leaves nothing behind in the device.
struct DeviceQueues<F: Family> {
    engine: Arc<Engine<F>>,
    queues: F::Queues,
    keep: bool,
}

impl<F: Family> DeviceQueues<F> {
    fn new(engine: &Arc<Engine<F>>) -> Self {
        Self::of(engine, F::Queues::default())
    }

    /// The queues of an open channel (destroyed on drop).
    fn of(engine: &Arc<Engine<F>>, queues: F::Queues) -> Self {
        Self {
            engine: engine.clone(),
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
            let q = self.queues;
            self.engine.with_model(|m| F::destroy(m, &q));
        }
    }
}
