// SPDX-License-Identifier: GPL-2.0

//! Channels: each has an SQ with its TX CQ, an RQ with its RX CQ, one NAPI context and one
//! interrupt vector, as an mlx5e channel does.
//!
//! The SQ of queue `i` lives in the port's TX slot `i` ([`TxSlot`]), where `ndo_start_xmit`
//! finds it; the rest lives in the [`Channel`], which NAPI polls. The slot's spinlock
//! serialises the transmit path and the TX completion walk of NAPI (mlx5e needs no lock
//! there because its producer and consumer counters are split by hand; the data path's `Sq`
//! keeps both in one `&mut` structure, which the lock stands for).
//!
//! NAPI reaps the TX CQ first (also with budget 0), then the RX CQ within the budget, hands
//! packets to GRO, re-posts RX buffers with one doorbell-record write per poll, and re-arms
//! both CQs when it completes.

use crate::dp::hw::{Barriers, Coherent, DmaAddr, Mmio};
use crate::dp::mlx5::{
    cq::{Cq, CQ_DB_REQ_NOT},
    rq::{Rq, RqParams, RxBufProvider, RxBuffer, RxCompletion},
    sq::{Sq, SqParams, WqeInfo, BF_OFFSET},
    stats::{RxStats, TxStats},
    tx::{
        DmaEntry, DmaKind, Gso, InlineMode, TxCsum, TxDmaMap, TxPacket, TxQueue as DpTxQueue,
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
use crate::hw::{KBarriers, KCoherent};
use crate::sim::mlx5::{CmdError, CqConfig, RqConfig, SqConfig, UAR_PAGE_SIZE};
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
const LKEY: u32 = 0;

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
    /// Enhanced MPWQE for eligible packets (private flag `tx_mpwqe`).
    pub(crate) mpwqe: bool,
}

impl ChannelParams {
    /// Bytes the device may write into one RX buffer (frame with two VLAN tags).
    fn rx_buf_len(&self) -> u32 {
        self.mtu + 14 + 8
    }

    /// Page order of RX buffers.
    fn rx_order(&self) -> u32 {
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

type KSq = Sq<TxSkb, KCoherent, KVec<WqeInfo<TxSkb>>, KVec<Option<TxSkb>>, KVec<DmaEntry>>;
type KRq = Rq<RxPage, KCoherent, KVec<Option<RxPage>>>;

/// What the SQ needs from the kernel while it transmits or completes.
struct TxEnv<'a> {
    mmio: EngineMmio<'a>,
    dma: &'a DmaDevice,
    txq: &'a TxQueue,
}

impl Mmio for TxEnv<'_> {
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

impl Barriers for TxEnv<'_> {
    fn dma_wmb(&self) {
        KBarriers.dma_wmb();
    }

    fn dma_rmb(&self) {
        KBarriers.dma_rmb();
    }

    fn wmb(&self) {
        KBarriers.wmb();
    }
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
        self.txq.wake();
    }

    fn is_stopped(&self) -> bool {
        self.txq.driver_stopped()
    }

    fn sent(&mut self, bytes: u32, xmit_more: bool) -> bool {
        self.txq.sent(bytes, xmit_more)
    }

    fn completed(&mut self, pkts: u32, bytes: u32) {
        self.txq.completed(pkts, bytes);
    }
}

/// What the RQ needs from the kernel: barriers and the page pool.
struct RxEnv<'a> {
    pool: &'a PagePool,
}

impl Barriers for RxEnv<'_> {
    fn dma_wmb(&self) {
        KBarriers.dma_wmb();
    }

    fn dma_rmb(&self) {
        KBarriers.dma_rmb();
    }

    fn wmb(&self) {
        KBarriers.wmb();
    }
}

impl RxBufProvider<RxPage> for RxEnv<'_> {
    fn alloc(&mut self) -> Option<RxPage> {
        self.pool.alloc()
    }

    fn recycle(&mut self, buf: RxPage) {
        self.pool.recycle(buf);
    }
}

/// The transmit side of a channel: its SQ (with the TX CQ inside).
pub(crate) struct TxSide {
    sq: KSq,
    /// Packets the stack handed over that were dropped (not queued).
    pub(crate) dropped: u64,
}

/// A port's TX slot: the SQ of one TX queue, if its channel is open.
pub(crate) type TxSlot = Pin<KBox<SpinLock<Option<TxSide>>>>;

/// A new, empty TX slot.
pub(crate) fn new_tx_slot() -> Result<TxSlot> {
    KBox::pin_init(new_spinlock!(None, "rsnic::TxSlot"), GFP_KERNEL)
}

/// What a port shares with its channels and its transmit path.
pub(crate) struct PortShared {
    /// The simulated device.
    pub(crate) engine: Arc<Engine>,
    /// The device's DMA parent.
    pub(crate) dma: Arc<DmaDevice>,
    /// Index of the port on its device (UAR page, queue ownership).
    pub(crate) port: usize,
    /// One slot per possible TX queue.
    pub(crate) txs: KVec<TxSlot>,
    /// Packets handed to a TX queue whose channel was closed (dropped, counted).
    pub(crate) dropped_closed: AtomicU64,
}

impl PortShared {
    /// BAR0 offset of the port's UAR page.
    fn uar(&self) -> u32 {
        self.port as u32 * UAR_PAGE_SIZE
    }

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
        };
        let more = crate::ext::net::queue::xmit_more();
        match tx.sq.xmit(TxSkb(skb), more, &mut env) {
            Ok(()) => Ok(()),
            Err(rej) => {
                use crate::dp::mlx5::tx::TxRejectReason as R;
                match rej.reason {
                    R::Busy => Err(rej.pkt.0),
                    R::MapError => {
                        tx.dropped += 1;
                        rej.pkt.0.drop_any(DropReason::NoMem);
                        Ok(())
                    }
                    R::SqError => {
                        tx.dropped += 1;
                        rej.pkt.0.drop_any(DropReason::DevReady);
                        Ok(())
                    }
                    R::Malformed | R::TooManySegments | R::HeaderTooLong => {
                        tx.dropped += 1;
                        rej.pkt.0.drop_any(DropReason::PktTooBig);
                        Ok(())
                    }
                }
            }
        }
    }
}

/// The receive side of a channel.
struct RxSide {
    rq: KRq,
    pool: PagePool,
    /// Received packets the stack could not take (no skb).
    dropped: u64,
}

/// One channel: NAPI, the receive side, and the way to the transmit side.
#[pin_data]
pub(crate) struct Channel {
    #[pin]
    napi: Napi<Channel>,
    #[pin]
    rx: SpinLock<Option<RxSide>>,
    shared: Arc<PortShared>,
    dev: ARef<Device>,
    index: u32,
    vector: usize,
    /// Device queue numbers, for teardown.
    sqn: u32,
    rqn: u32,
    tx_cqn: u32,
    rx_cqn: u32,
}

crate::impl_has_napi!(Channel, napi);

/// Counters of one channel, read under its locks.
#[derive(Default, Clone, Copy)]
pub(crate) struct ChannelStats {
    pub(crate) tx: TxStats,
    pub(crate) rx: RxStats,
    pub(crate) tx_dropped: u64,
    pub(crate) rx_dropped: u64,
    pub(crate) arms: u64,
}

impl Channel {
    /// Creates the device queues, the data-path structures and NAPI of channel `index`,
    /// posts its RX buffers and fills TX slot `index`. Interrupts are routed and CQs armed by
    /// [`Channel::activate`].
    pub(crate) fn open(
        dev: &Device,
        shared: &Arc<PortShared>,
        index: u32,
        p: &ChannelParams,
    ) -> Result<Arc<Self>> {
        let port = shared.port;
        let vector = port * MAX_CHANNELS + index as usize;
        let uar = shared.uar();
        let dma = &shared.dma;
        // Doorbell records: SQ at 0, RQ at 8, TX CQ at 16, RX CQ at 24.
        let dbr = KCoherent::alloc(dma, 64)?;
        let nsq = 1usize << p.log_sq;
        let nrq = 1usize << p.log_rq;

        let tx_cq_buf = KCoherent::alloc(dma, nsq * 64)?;
        let rx_cq_buf = KCoherent::alloc(dma, nrq * 64)?;
        let sq_buf = KCoherent::alloc(dma, nsq * 64)?;
        let rq_buf = KCoherent::alloc(dma, nrq * 16)?;

        // Device queues first (CQs before the queues that complete on them); `ids` destroys
        // whatever exists if a later step fails.
        let mut ids = DeviceQueues::new(&shared.engine);
        let dbr_addr = dbr.dma_addr();
        let (tx_cq_addr, rx_cq_addr) = (tx_cq_buf.dma_addr(), rx_cq_buf.dma_addr());
        let tx_cqn = ids.create(
            |m| {
                m.create_cq(&CqConfig {
                    port,
                    buf: tx_cq_addr,
                    log_size: p.log_sq,
                    dbr: dbr_addr + 16,
                    vector: vector as u16,
                    compress: false,
                })
            },
            Queue::Cq,
        )?;
        let rx_cqn = ids.create(
            |m| {
                m.create_cq(&CqConfig {
                    port,
                    buf: rx_cq_addr,
                    log_size: p.log_rq,
                    dbr: dbr_addr + 24,
                    vector: vector as u16,
                    compress: false,
                })
            },
            Queue::Cq,
        )?;
        // The CQ buffers get their initial owner bytes (0xF1) before any WQE is posted.
        let tx_cq =
            Cq::new(tx_cq_buf, dbr.clone(), 16, p.log_sq, tx_cqn, uar).map_err(|_| EINVAL)?;
        let rx_cq =
            Cq::new(rx_cq_buf, dbr.clone(), 24, p.log_rq, rx_cqn, uar).map_err(|_| EINVAL)?;
        let (sq_addr, rq_addr) = (sq_buf.dma_addr(), rq_buf.dma_addr());
        let sqn = ids.create(
            |m| {
                m.create_sq(&SqConfig {
                    port,
                    buf: sq_addr,
                    log_size: p.log_sq,
                    dbr: dbr_addr,
                    cqn: tx_cqn,
                })
            },
            Queue::Sq,
        )?;
        let rqn = ids.create(
            |m| {
                m.create_rq(&RqConfig {
                    port,
                    buf: rq_addr,
                    log_size: p.log_rq,
                    log_stride: 4,
                    dbr: dbr_addr + 8,
                    cqn: rx_cqn,
                })
            },
            Queue::Rq,
        )?;
        let sq = Sq::new(
            SqParams {
                log_sz: p.log_sq,
                sqn,
                lkey: LKEY,
                db_offset: uar + BF_OFFSET,
                dbr_off: 0,
                min_inline: InlineMode::None,
                vlan_need_l2_inline: false,
                max_sq_wqebbs: 16,
                mpwqe: p.mpwqe,
                mpwqe_inline: false,
            },
            sq_buf,
            dbr.clone(),
            tx_cq,
            filled(nsq, WqeInfo::default)?,
            filled(4 * nsq, || None)?,
            filled(4 * nsq, DmaEntry::default)?,
        )
        .map_err(|_| EINVAL)?;
        let pool = PagePool::new(
            dma,
            dev,
            nrq as u32,
            p.rx_order(),
            RX_HEADROOM,
            p.rx_buf_len(),
        )?;
        let mut rq = Rq::new(
            RqParams {
                log_sz: p.log_rq,
                buf_size: p.rx_buf_len(),
                lkey: LKEY,
                dbr_off: 8,
                wqe_bulk: 8,
            },
            rq_buf,
            dbr,
            rx_cq,
            filled(nrq, || None)?,
        )
        .map_err(|_| EINVAL)?;
        rq.post(&mut RxEnv { pool: &pool });

        let ch = Arc::pin_init(
            pin_init!(Self {
                napi <- Napi::new(),
                rx <- new_spinlock!(Some(RxSide { rq, pool, dropped: 0 }), "rsnic::Channel::rx"),
                shared: shared.clone(),
                dev: ARef::from(dev),
                index,
                vector,
                sqn,
                rqn,
                tx_cqn,
                rx_cqn,
            }),
            GFP_KERNEL,
        )?;
        ids.keep();
        if let Some(slot) = shared.txs.get(index as usize) {
            with_bh(|| *slot.lock() = Some(TxSide { sq, dropped: 0 }));
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

    /// Adds and enables NAPI, routes the interrupt, arms both CQs.
    pub(crate) fn activate(self: &Arc<Self>) {
        self.napi.add(&self.dev);
        self.shared.engine.set_irq(self.vector, Some(self.clone()));
        self.napi.enable();
        self.arm();
    }

    fn arm(&self) {
        let mmio = EngineMmio(&self.shared.engine);
        with_bh(|| {
            if let Some(slot) = self.shared.txs.get(self.index as usize) {
                if let Some(tx) = slot.lock().as_mut() {
                    tx.sq.cq_mut().arm(CQ_DB_REQ_NOT, &mmio, &KBarriers);
                }
            }
            if let Some(rx) = self.rx.lock().as_mut() {
                rx.rq.cq_mut().arm(CQ_DB_REQ_NOT, &mmio, &KBarriers);
            }
        });
    }

    /// The channel's interrupt: schedule NAPI.
    pub(crate) fn interrupt(&self) {
        self.napi.schedule();
    }

    /// Counters, read under the channel's locks.
    pub(crate) fn stats(&self) -> ChannelStats {
        let mut s = ChannelStats::default();
        with_bh(|| {
            if let Some(slot) = self.shared.txs.get(self.index as usize) {
                if let Some(tx) = slot.lock().as_ref() {
                    s.tx = tx.sq.stats;
                    s.tx_dropped = tx.dropped;
                    s.arms += tx.sq.cq().arms();
                }
            }
            if let Some(rx) = self.rx.lock().as_ref() {
                s.rx = rx.rq.stats;
                s.rx_dropped = rx.dropped;
                s.arms += rx.rq.cq().arms();
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
    pub(crate) fn close(self: Arc<Self>) -> ChannelStats {
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
                        };
                        tx.sq.poll_cq(&mut env, |p| p.0.consume());
                        tx.sq.pc() == tx.sq.cc() || tx.sq.error().is_some()
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
        drop(DeviceQueues::of(
            &self.shared.engine,
            [
                (Queue::Cq, self.tx_cqn),
                (Queue::Cq, self.rx_cqn),
                (Queue::Sq, self.sqn),
                (Queue::Rq, self.rqn),
            ],
        ));
        let stats = self.stats();
        let mut final_stats = stats;
        let tx = with_bh(|| slot.and_then(|s| s.lock().take()));
        if let Some(mut tx) = tx {
            let mut env = TxEnv {
                mmio: EngineMmio(&self.shared.engine),
                dma: &self.shared.dma,
                txq,
            };
            let (pkts, _) = tx
                .sq
                .drain(&mut env, |p| p.0.drop_any(DropReason::DevReady));
            final_stats.tx_dropped += u64::from(pkts);
            txq.reset();
        }
        let rx = with_bh(|| self.rx.lock().take());
        if let Some(mut rx) = rx {
            let RxSide { rq, pool, .. } = &mut rx;
            rq.drain(&mut RxEnv { pool });
        }
        final_stats
    }
}

impl Poll for Channel {
    fn poll(&self, napi: &Napi<Self>, budget: i32) -> i32 {
        let mmio = EngineMmio(&self.shared.engine);
        let mut tx_busy = false;
        if let (Some(slot), Some(txq)) = (
            self.shared.txs.get(self.index as usize),
            self.dev.tx_queue(self.index),
        ) {
            if let Some(tx) = slot.lock().as_mut() {
                let mut env = TxEnv {
                    mmio,
                    dma: &self.shared.dma,
                    txq,
                };
                let r = tx.sq.poll_cq(&mut env, |p| p.0.napi_consume(budget));
                tx_busy = r.busy;
            }
        }
        if budget <= 0 {
            return 0;
        }
        let mut work = 0i32;
        if let Some(rx) = self.rx.lock().as_mut() {
            let RxSide { rq, pool, dropped } = rx;
            let dev: &Device = &self.dev;
            let queue = self.index as u16;
            let r = rq.napi_poll(
                budget as u32,
                &mut RxEnv { pool },
                |page, c: &RxCompletion| {
                    match pool.build_skb(page, c.len) {
                        Some(mut skb) => {
                            // hds_ip_ext: bit 1 L3_OK, bit 2 L4_OK.
                            let csum_ok = c.hds_ip_ext & 0x6 == 0x6;
                            let hash_type = if c.hash_type >> 6 != 0 {
                                2
                            } else if (c.hash_type >> 2) & 3 != 0 {
                                1
                            } else {
                                0
                            };
                            skb.rx_finish(dev, csum_ok, c.hash, hash_type, queue);
                            napi.gro_receive(skb);
                        }
                        None => *dropped += 1,
                    }
                },
            );
            work = r.work as i32;
        }
        if tx_busy || work >= budget {
            return budget;
        }
        if napi.complete_done(work) {
            self.arm();
        }
        work
    }
}

/// Kinds of device queue.
#[derive(Clone, Copy)]
enum Queue {
    Sq,
    Rq,
    Cq,
}

/// Device queues created for a channel that is not finished yet: destroyed on drop unless
/// kept, so a failed open leaves nothing behind in the device.
struct DeviceQueues {
    engine: Arc<Engine>,
    made: [(Option<Queue>, u32); 4],
}

impl DeviceQueues {
    fn new(engine: &Arc<Engine>) -> Self {
        Self {
            engine: engine.clone(),
            made: [(None, 0); 4],
        }
    }

    /// The four queues of an open channel, in creation order (destroyed in reverse on drop).
    fn of(engine: &Arc<Engine>, made: [(Queue, u32); 4]) -> Self {
        Self {
            engine: engine.clone(),
            made: made.map(|(kind, qn)| (Some(kind), qn)),
        }
    }

    /// Runs a creation command and remembers the queue it made.
    fn create(
        &mut self,
        f: impl FnOnce(&mut crate::engine::Model) -> core::result::Result<u32, CmdError>,
        kind: Queue,
    ) -> Result<u32> {
        let qn = self.engine.with_model(f).map_err(|_| EINVAL)?;
        if let Some(slot) = self.made.iter_mut().find(|m| m.0.is_none()) {
            *slot = (Some(kind), qn);
        }
        Ok(qn)
    }

    fn keep(mut self) {
        self.made = [(None, 0); 4];
    }
}

impl Drop for DeviceQueues {
    fn drop(&mut self) {
        let made = self.made;
        self.engine.with_model(|m| {
            // Queues before their CQs.
            for (kind, qn) in made.iter().rev() {
                let _ = match kind {
                    Some(Queue::Sq) => m.destroy_sq(*qn),
                    Some(Queue::Rq) => m.destroy_rq(*qn),
                    Some(Queue::Cq) => m.destroy_cq(*qn),
                    None => Ok(()),
                };
            }
        });
    }
}

/// A vector of `n` values made by `f`.
fn filled<T>(n: usize, mut f: impl FnMut() -> T) -> Result<KVec<T>> {
    let mut v = KVec::with_capacity(n, GFP_KERNEL)?;
    for _ in 0..n {
        v.push(f(), GFP_KERNEL)?;
    }
    Ok(v)
}
