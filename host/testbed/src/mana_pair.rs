//! One MANA port pair: the driver-side SQ, RQ, CQs and EQs of `hwif/mana` against the
//! simulated MANA device of `sim/mana`, port 0 (TX) wired to port 1 (RX). The MANA twin of
//! [`crate::pair`], used by the `mana_*` tests and the benchmark.
//!
//! ```
//! use rsnic_testbed::mana_pair::{ManaPair, ManaConfig, Frame};
//! let mut p = ManaPair::new(ManaConfig::default());
//! let frames: Vec<Frame> = (0..32).map(|i| Frame::linear(vec![i as u8; 64])).collect();
//! assert_eq!(p.send_burst(&frames), 32);  // xmit_more on all but the last: one doorbell
//! p.run_device();
//! p.poll_tx(64);
//! let rx = p.poll_rx(64);
//! assert_eq!(rx.len(), 32);
//! p.check_counters().unwrap();
//! ```
//!
//! The host side is [`crate::glue`]'s, shared with the mlx5 pair: packets, the TX buffer
//! pool and in-order bookkeeping, and the environment. Register writes are latched in
//! program order and handed to the device when it next runs (or its counters are read).
//! Every RQ doorbell value the driver writes is also logged ([`ManaEnv::rq_doorbell_log`]).
//! A [`Frame`]'s VLAN tag goes on the wire as 802.1Q ([`Frame::expected_wire_8021q`]).
//!
//! MANA has no queue reset: a queue that stopped on a CQE breaking the protocol, or a
//! transmit watchdog that found no lost interrupt, is recovered by reopening the channels.
//! [`ManaPair::reopen`] (direct model calls) and [`ManaPair::reopen_hwc`] (through the HWC)
//! do what the driver's reopen does to the pair's queues and say what became of everything
//! in flight ([`Reopened`]); the driver counters ([`ManaPair::drv_tx`], [`ManaPair::drv_rx`])
//! are summed over the queues closed, as the driver's port totals are.

use std::cell::RefCell;
use std::rc::Rc;

use rsnic_core::hwif::hw::Coherent;
use rsnic_core::hwif::mana::cq::{Cq, Eq};
use rsnic_core::hwif::mana::gdma_req as req;
use rsnic_core::hwif::mana::rq::{Rq, RqError, RqParams, RxCompletion, RxPoll};
use rsnic_core::hwif::mana::sq::{Sq, SqError, SqParams, TxPending, TxPoll};
use rsnic_core::hwif::mana::stats::{RxStats, TxStats};
use rsnic_core::hwif::mlx5::tx::{DmaEntry, TxQueue, TxRejectReason};
use rsnic_core::sim::mana::{
    doorbell_offset, Device, Port, PortCounters, QueueSet, DB_CQ, DB_EQ, DB_RQ, DB_SQ, MANA_DB_ID,
    MAX_QUEUES, SCRATCH_LEN,
};

use crate::bus::IrqLog;
use crate::glue::{Balance, Bar0, Doorbell, Env, TxBook};
pub use crate::glue::{
    EnvCounts as ManaCounts, RxBuf, TxFrame as Frame, TxPkt as ManaPkt, BUF_SIZE, RX_PORT, TX_PORT,
};
use crate::mana_hwc::{CallError, HwcHost};
use crate::mem::{HostBuf, HostMemory};

/// The MANA device model with host storage.
pub type HostMana = Device<Vec<Port>, Vec<QueueSet>, Vec<u8>>;
/// The driver-side SQ with host storage.
pub type ManaSq = Sq<ManaPkt, HostBuf, Vec<TxPending<ManaPkt>>, Vec<DmaEntry>>;
/// The driver-side RQ with host storage.
pub type ManaRq = Rq<RxBuf, HostBuf, Vec<Option<RxBuf>>>;
/// One received packet.
pub type RxFrame = crate::glue::RxFrame<RxCompletion>;
/// The driver's environment: BAR0 (latched), DMA API, TX queue with BQL, RX buffer pool.
pub type ManaEnv = Env<ManaBar>;

/// Memory key of the SGEs of a pair built with direct model calls: the device's (the one
/// GDMA_REGISTER_DEVICE gives, which a pair built through the HWC uses): the model refuses
/// SGEs under any other.
pub const MKEY: u32 = rsnic_core::sim::mana::MANA_MKEY;

/// BAR0 of the pair's MANA device behind [`ManaEnv`]: the SQ doorbell of [`TX_PORT`], the
/// RQ doorbell of [`RX_PORT`] and both ports' CQ doorbells are counted.
pub struct ManaBar(pub Rc<RefCell<HostMana>>);

impl Bar0 for ManaBar {
    fn write64(&self, offset: u32, bytes: [u8; 8]) {
        self.0.borrow_mut().mmio_write64(offset, bytes);
    }
    fn write32(&self, offset: u32, value: u32) {
        self.0.borrow_mut().mmio_write32(offset, value);
    }
    fn read32(&self, offset: u32) -> u32 {
        self.0.borrow_mut().mmio_read32(offset)
    }
    #[inline]
    fn doorbell(offset: u32) -> Option<Doorbell> {
        // The second SQ offset is the registered doorbell page of a device set up through
        // the HWC (page MANA_DB_ID = RX_PORT, where the legacy layout has no SQ).
        if offset == doorbell_offset(TX_PORT, DB_SQ)
            || offset == doorbell_offset(MANA_DB_ID as usize, DB_SQ)
        {
            Some(Doorbell::Sq)
        } else if offset == doorbell_offset(RX_PORT, DB_RQ) {
            Some(Doorbell::Rq)
        } else if offset == doorbell_offset(TX_PORT, DB_CQ)
            || offset == doorbell_offset(RX_PORT, DB_CQ)
        {
            Some(Doorbell::Cq)
        } else {
            None
        }
    }
}

/// The driver's SQ error after `Fault::TxBadWqId`: a CQE naming the model's `BAD_WQ_ID`.
pub const SQ_BAD_WQ_ID: SqError = SqError::WrongQueue {
    wq_num: rsnic_core::sim::mana::BAD_WQ_ID,
    is_sq: true,
};
/// The driver's RQ error after `Fault::RxBadWqId`: a CQE naming the model's `BAD_WQ_ID`.
pub const RQ_BAD_WQ_ID: RqError = RqError::WrongQueue {
    wq_num: rsnic_core::sim::mana::BAD_WQ_ID,
    is_sq: false,
};

/// Frames a port's device model dropped on receive: no WQE posted, no RQ (RX off),
/// truncated, or the port stopped.
pub fn rx_port_drops(x: &PortCounters) -> u64 {
    x.hc_rx_discards_no_wqe + x.rx_no_rq_drops + x.rx_truncated + x.rx_stopped
}

/// `n` numbered 64-byte test frames from the TX port's MAC to the RX port's (ethertype
/// 0x88b5): byte 14 is the frame's number, every other byte after the header is `tag`.
pub fn numbered_frames(n: usize, tag: u8) -> Vec<Frame> {
    (0..n)
        .map(|i| {
            let mut b = vec![tag; 64];
            b[..6].copy_from_slice(&[0x02, 0, 0, 0, 0, 2]);
            b[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 1]);
            b[12..14].copy_from_slice(&[0x88, 0xb5]);
            b[14] = i as u8;
            Frame::linear(b)
        })
        .collect()
}

/// A device with `ports` ports and full scratch.
pub fn new_mana(ports: usize) -> HostMana {
    let q = vec![QueueSet::EMPTY; ports * MAX_QUEUES];
    Device::new(
        (0..ports).map(|_| Port::new()).collect(),
        q,
        vec![0u8; SCRATCH_LEN],
    )
    .expect("valid port count")
}

/// How the pair is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ManaConfig {
    /// SQ size in bytes (power of two ≥ 4096); the TX CQ has one entry per BU.
    pub sq_size: u32,
    /// RX WQEs (power of two ≥ 128); the RX CQ has the next power of two above.
    pub rq_wqes: u32,
    /// Pre-2023 RX doorbells: one per re-posted WQE.
    pub ring_per_packet: bool,
    /// Check DMA map/unmap balance.
    pub track_dma: bool,
    /// The memory keys of the TX and RX SGEs instead of the device's (`gpa_mkey`), for tests
    /// of the device's key check.
    pub sge_keys: Option<(u32, u32)>,
}

impl Default for ManaConfig {
    /// MANA's defaults: 256 TX entries (8 KiB), 512 RX buffers.
    fn default() -> Self {
        Self {
            sq_size: 256 * 32,
            rq_wqes: 512,
            ring_per_packet: false,
            track_dma: true,
            sge_keys: None,
        }
    }
}

/// The pair. Fields are public so that benchmarks can call the driver directly.
pub struct ManaPair {
    /// DMA memory.
    pub mem: HostMemory,
    /// The device.
    pub dev: Rc<RefCell<HostMana>>,
    /// Interrupts raised.
    pub irqs: IrqLog,
    /// The driver's environment.
    pub env: ManaEnv,
    /// SQ on [`TX_PORT`].
    pub sq: ManaSq,
    /// RQ on [`RX_PORT`].
    pub rq: ManaRq,
    /// EQ of the TX port (vector 0).
    pub tx_eq: Eq<HostBuf>,
    /// EQ of the RX port (vector 1).
    pub rx_eq: Eq<HostBuf>,
    /// Device ids: SQ, TX CQ, RQ, RX CQ.
    pub ids: [u32; 4],
    cfg: ManaConfig,
    /// The host side of TX: packet buffers, packets in flight.
    pub tx: TxBook,
    rx_delivered: u64,
    layout: Layout,
    /// Device counters when the current queues were created.
    base: Base,
    /// Driver counters of the queues closed by reopens.
    closed_tx: TxStats,
    closed_rx: RxStats,
    reopens: ReopenCounts,
}

/// How the pair's queues are keyed and where they ring: the legacy doorbell pages of a pair
/// built with direct model calls, or the page GDMA_REGISTER_DEVICE returned to one built
/// through the HWC.
#[derive(Debug, Clone, Copy)]
struct Layout {
    /// Memory keys of the SQ's and the RQ's SGEs.
    tx_mkey: u32,
    rx_mkey: u32,
    sq_db: u32,
    rq_db: u32,
    tx_cq_db: u32,
    rx_cq_db: u32,
    vp_offset: u16,
    /// Built through the HWC ([`ManaPair::new_hwc`]).
    hwc: bool,
}

/// The device counters a reopen's accounting starts from (the pair's queues are the only
/// ones of their ports, so the port counters are theirs).
#[derive(Debug, Clone, Copy, Default)]
struct Base {
    /// TX WQEs executed ([`TX_PORT`]).
    wqes: u64,
    /// TX error CQEs written.
    tx_err_cqes: u64,
    /// TX CQEs written.
    tx_cqes: u64,
    /// RX CQEs written ([`RX_PORT`]).
    rx_cqes: u64,
}

/// The memory of one set of queues (fresh for every open, as the driver allocates it).
struct QueueBufs {
    tcq: HostBuf,
    sq: HostBuf,
    rcq: HostBuf,
    rq: HostBuf,
}

fn tcq_entries(cfg: &ManaConfig) -> u32 {
    cfg.sq_size / 32
}

fn rcq_entries(cfg: &ManaConfig) -> u32 {
    (cfg.rq_wqes + 1).next_power_of_two()
}

impl QueueBufs {
    fn alloc(mem: &HostMemory, cfg: &ManaConfig) -> Self {
        let tcq = mem.alloc(tcq_entries(cfg) as usize * 64);
        let sq = mem.alloc(cfg.sq_size as usize);
        let rcq = mem.alloc(rcq_entries(cfg) as usize * 64);
        let rq = mem.alloc(cfg.rq_wqes as usize * 32);
        Self { tcq, sq, rcq, rq }
    }

    /// The driver's SQ and RQ over these buffers, with the device ids `[sq, tx cq, rq, rx
    /// cq]`; nothing posted.
    fn build(self, cfg: &ManaConfig, l: &Layout, ids: [u32; 4]) -> (ManaSq, ManaRq) {
        let [sqid, tcq, rqid, rcq] = ids;
        let n = (cfg.sq_size / 32) as usize;
        let sq = Sq::new(
            SqParams {
                queue_size: cfg.sq_size,
                sq_id: sqid,
                cq_id: tcq,
                mkey: l.tx_mkey,
                db_offset: l.sq_db,
                vp_offset: l.vp_offset,
            },
            self.sq,
            Cq::new(self.tcq, tcq, tcq_entries(cfg), l.tx_cq_db).expect("TX CQ"),
            (0..n).map(|_| TxPending::default()).collect(),
            vec![DmaEntry::default(); 2 * n],
        )
        .expect("SQ");
        let rq = Rq::new(
            RqParams {
                queue_size: cfg.rq_wqes * 32,
                rq_id: rqid,
                mkey: l.rx_mkey,
                buf_size: BUF_SIZE as u32,
                db_offset: l.rq_db,
                ring_per_packet: cfg.ring_per_packet,
            },
            self.rq,
            Cq::new(self.rcq, rcq, rcq_entries(cfg), l.rx_cq_db).expect("RX CQ"),
            (0..cfg.rq_wqes).map(|_| None).collect(),
        )
        .expect("RQ");
        (sq, rq)
    }
}

/// What one reopen ([`ManaPair::reopen`], [`ManaPair::reopen_hwc`]) did with what was in
/// flight. Every TX packet in flight is dropped (`tx_dropped`), and of those the device
/// either never executed the WQE (`tx_abandoned`), executed it with an error CQE the driver
/// never processed (`tx_failed`: not sent), or sent the frame, whose fate is then the
/// receiver's; the device's counters tell which, since the pair's SQ and RQ are the only
/// queues of their ports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reopened {
    /// Packets released without a completion and counted dropped (the driver's
    /// `tx_queue_dropped`): everything in flight when the SQ closed.
    pub tx_dropped: u32,
    /// Of those, packets whose WQE the device never executed (a stalled or stopped port, or
    /// WQEs not rung).
    pub tx_abandoned: u32,
    /// Of those, packets whose WQE the device executed with an error CQE the driver never
    /// processed (never sent).
    pub tx_failed: u32,
    /// TX CQEs the stopped SQ consumed unread (the driver's `cqe_discarded` of the SQ):
    /// completions of packets among `tx_dropped`.
    pub tx_cqes_discarded: u32,
    /// TX CQEs the device wrote that the driver never consumed (gone with the CQ).
    pub tx_cqes_unread: u32,
    /// RX CQEs the stopped RQ consumed unread, in its polls and at its drain (the driver's
    /// `cqe_discarded` of the RQ): their frames are lost.
    pub rx_cqes_discarded: u32,
    /// RX CQEs an RQ not in error left unread when it closed: completions NAPI had not
    /// polled yet; the drain recycles their buffers and no driver counter has them (the
    /// frames are lost, counted only by the device as received).
    pub rx_cqes_unread: u32,
    /// Posted RX buffers given back to the pool.
    pub rx_buffers_drained: u32,
    /// Buffers posted in the new RQ.
    pub rx_posted: u32,
}

/// Reopens a pair ran, summed ([`Reopened`]'s fields).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReopenCounts {
    /// Reopens.
    pub reopens: u64,
    /// [`Reopened::tx_dropped`].
    pub tx_dropped: u64,
    /// [`Reopened::tx_abandoned`].
    pub tx_abandoned: u64,
    /// [`Reopened::tx_failed`].
    pub tx_failed: u64,
    /// [`Reopened::tx_cqes_discarded`].
    pub tx_cqes_discarded: u64,
    /// [`Reopened::tx_cqes_unread`].
    pub tx_cqes_unread: u64,
    /// [`Reopened::rx_cqes_discarded`].
    pub rx_cqes_discarded: u64,
    /// [`Reopened::rx_cqes_unread`].
    pub rx_cqes_unread: u64,
    /// [`Reopened::rx_buffers_drained`].
    pub rx_buffers_drained: u64,
}

impl ReopenCounts {
    fn add(&mut self, r: &Reopened) {
        self.reopens += 1;
        self.tx_dropped += u64::from(r.tx_dropped);
        self.tx_abandoned += u64::from(r.tx_abandoned);
        self.tx_failed += u64::from(r.tx_failed);
        self.tx_cqes_discarded += u64::from(r.tx_cqes_discarded);
        self.tx_cqes_unread += u64::from(r.tx_cqes_unread);
        self.rx_cqes_discarded += u64::from(r.rx_cqes_discarded);
        self.rx_cqes_unread += u64::from(r.rx_cqes_unread);
        self.rx_buffers_drained += u64::from(r.rx_buffers_drained);
    }
}

/// `a += b` field by field (the struct is destructured whole: a new counter must be added
/// here).
macro_rules! sum_stats {
    ($ty:ident, $a:expr, $b:expr; $($f:ident),* $(,)?) => {{
        let $ty { $($f),* } = $b;
        $( $a.$f = $a.$f.wrapping_add($f); )*
    }};
}

fn add_tx(a: &mut TxStats, b: TxStats) {
    sum_stats!(TxStats, a, b; packets, bytes, tso_packets, tso_bytes, short_pkt_fmt,
        long_pkt_fmt, csum_partial, mana_map_err, stop_queue, wake_queue, tx_cqe_err,
        tx_cqe_unknown_type, xmit_more, busy, dropped, cqes, cqe_bad, cq_overflow, cqe_discarded,
        wqes, bus, doorbells);
}

fn add_rx(a: &mut RxStats, b: RxStats) {
    sum_stats!(RxStats, a, b; packets, bytes, rx_coalesced_err, rx_cqe_unknown_type,
        rx_truncated, rx_dropped, buff_alloc_err, cqes, cqe_bad, cq_overflow, cqe_discarded, wqes,
        doorbells, polls, polls_with_work);
}

impl ManaPair {
    /// Builds both ports' queues, fills the RQ (one doorbell) and sets RSS.
    pub fn new(cfg: ManaConfig) -> Self {
        let mem = HostMemory::new();
        let dev = Rc::new(RefCell::new(new_mana(2)));
        let mut env = ManaEnv::new(&mem, ManaBar(dev.clone()), cfg.track_dma);
        let eq_num = 64;
        let (teq_buf, req_buf) = (
            mem.alloc(eq_num as usize * 16),
            mem.alloc(eq_num as usize * 16),
        );
        let mut d = dev.borrow_mut();
        let teq = d.create_eq(TX_PORT, teq_buf.dma_addr(), eq_num, 0).unwrap();
        let req = d.create_eq(RX_PORT, req_buf.dma_addr(), eq_num, 1).unwrap();
        let bufs = QueueBufs::alloc(&mem, &cfg);
        let ids = create_direct(&mut d, &cfg, &bufs, teq, req);
        drop(d);
        let layout = Layout {
            tx_mkey: cfg.sge_keys.map_or(MKEY, |k| k.0),
            rx_mkey: cfg.sge_keys.map_or(MKEY, |k| k.1),
            sq_db: doorbell_offset(TX_PORT, DB_SQ),
            rq_db: doorbell_offset(RX_PORT, DB_RQ),
            tx_cq_db: doorbell_offset(TX_PORT, DB_CQ),
            rx_cq_db: doorbell_offset(RX_PORT, DB_CQ),
            vp_offset: 0,
            hwc: false,
        };
        let (sq, mut rq) = bufs.build(&cfg, &layout, ids);
        rq.fill(&mut env);
        dev.borrow_mut().set_rss(RX_PORT, &[ids[2]]).unwrap();
        let tx_eq = Eq::new(teq_buf, teq, eq_num, doorbell_offset(TX_PORT, DB_EQ)).unwrap();
        let rx_eq = Eq::new(req_buf, req, eq_num, doorbell_offset(RX_PORT, DB_EQ)).unwrap();
        Self::assemble(mem, dev, env, (sq, rq, tx_eq, rx_eq), ids, cfg, layout)
    }

    /// The pair over its built queues, its baseline taken now.
    fn assemble(
        mem: HostMemory,
        dev: Rc<RefCell<HostMana>>,
        env: ManaEnv,
        (sq, rq, tx_eq, rx_eq): (ManaSq, ManaRq, Eq<HostBuf>, Eq<HostBuf>),
        ids: [u32; 4],
        cfg: ManaConfig,
        layout: Layout,
    ) -> Self {
        let mut p = Self {
            tx: TxBook::new(&mem),
            mem,
            dev,
            irqs: IrqLog::default(),
            env,
            sq,
            rq,
            tx_eq,
            rx_eq,
            ids,
            cfg,
            rx_delivered: 0,
            layout,
            base: Base::default(),
            closed_tx: TxStats::default(),
            closed_rx: RxStats::default(),
            reopens: ReopenCounts::default(),
        };
        p.base = p.base_now();
        p
    }

    /// The configuration.
    pub fn config(&self) -> ManaConfig {
        self.cfg
    }

    /// Offers one frame. `Ok(id)` if accepted.
    pub fn send_one(&mut self, f: &Frame, more: bool) -> Result<u64, TxRejectReason> {
        let (sq, env) = (&mut self.sq, &mut self.env);
        self.tx.offer(f, |pkt| sq.xmit(pkt, more, env))
    }

    /// Offers a burst (xmit_more on all but the last); stops when the queue stops. Returns
    /// how many were accepted.
    pub fn send_burst(&mut self, frames: &[Frame]) -> usize {
        let mut n = 0;
        for (i, f) in frames.iter().enumerate() {
            if self.env.is_stopped() {
                // The stack would requeue the rest; announce what was posted.
                self.sq.ring(&self.env);
                break;
            }
            if self.send_one(f, i + 1 < frames.len()).is_ok() {
                n += 1;
            }
        }
        n
    }

    /// Whether the TX queue is stopped.
    pub fn tx_stopped(&self) -> bool {
        self.env.is_stopped()
    }

    /// Runs the device until idle. Returns TX WQEs executed.
    pub fn run_device(&mut self) -> usize {
        self.env.flush_mmio();
        self.dev.borrow_mut().process(&self.mem, &mut self.irqs)
    }

    /// One TX NAPI round (poll, then the CQ re-arm rule with `budget`).
    pub fn poll_tx(&mut self, budget: u32) -> TxPoll {
        let mut done = Vec::new();
        let (r, _) = self.sq.napi_poll(budget, &mut self.env, |p| done.push(p));
        for p in done {
            self.tx.release(p);
        }
        r
    }

    /// One RX NAPI round; returns the delivered frames.
    pub fn poll_rx(&mut self, budget: u32) -> Vec<RxFrame> {
        self.poll_rx_full(budget).0
    }

    /// One RX NAPI round; returns the frames and the poll result.
    pub fn poll_rx_full(&mut self, budget: u32) -> (Vec<RxFrame>, RxPoll) {
        let rq = &mut self.rq;
        let (out, r) = self
            .env
            .collect_rx(|env, deliver| rq.napi_poll(budget, env, |b, c| deliver(b, c)));
        self.rx_delivered += out.len() as u64;
        (out, r)
    }

    /// Runs device and driver until nothing moves; returns what was delivered.
    pub fn settle(&mut self, budget: u32) -> Vec<RxFrame> {
        let mut out = Vec::new();
        loop {
            let mut moved = self.run_device() > 0;
            loop {
                let t = self.poll_tx(budget);
                moved |= t.cqes > 0;
                if t.cqes == 0 {
                    break;
                }
            }
            loop {
                let got = self.poll_rx(budget.max(1));
                if got.is_empty() {
                    break;
                }
                moved = true;
                out.extend(got);
            }
            // Empty polls re-arm their CQs (latched doorbells), which moves nothing.
            if !moved {
                self.env.flush_mmio();
                return out;
            }
        }
    }

    /// Packets accepted and not completed.
    pub fn tx_in_flight(&self) -> usize {
        self.tx.in_flight()
    }
    /// Driver TX counters: the SQ's, plus those of every SQ a reopen closed (the driver's
    /// port totals).
    pub fn drv_tx(&self) -> TxStats {
        let mut s = self.closed_tx;
        add_tx(&mut s, self.sq.stats);
        s
    }
    /// Driver RX counters: the RQ's, plus those of every RQ a reopen closed.
    pub fn drv_rx(&self) -> RxStats {
        let mut s = self.closed_rx;
        add_rx(&mut s, self.rq.stats);
        s
    }
    /// Reopens run so far ([`ManaPair::reopen`], [`ManaPair::reopen_hwc`]).
    pub fn reopen_counts(&self) -> ReopenCounts {
        self.reopens
    }
    /// Device counters of a port (latched writes first).
    pub fn dev(&self, port: usize) -> PortCounters {
        self.env.flush_mmio();
        self.dev
            .borrow()
            .counters(port)
            .copied()
            .unwrap_or_default()
    }
    /// Interrupt vectors raised since the last call.
    pub fn take_irqs(&mut self) -> Vec<u16> {
        std::mem::take(&mut self.irqs.raised)
    }

    /// Checks that driver, host and device counters balance (call when settled, with no
    /// faults injected; reopens of a settled pair are accounted for).
    pub fn check_counters(&mut self) -> Result<(), String> {
        let (d, r, t, x, e, o) = (
            self.drv_tx(),
            self.drv_rx(),
            self.dev(TX_PORT),
            self.dev(RX_PORT),
            self.env.counts(),
            self.reopens,
        );
        let mut b = Balance::default();
        b.eq(
            "driver WQEs vs device WQEs + abandoned by reopens",
            d.wqes,
            t.wqes + o.tx_abandoned,
        );
        b.eq(
            "device TX CQEs vs driver CQEs + unread at reopens",
            t.tx_cqes,
            d.cqes + o.tx_cqes_unread,
        );
        b.eq(
            "device TX packets vs RX + drops",
            t.tx_packets(),
            x.rx_packets() + rx_port_drops(&x),
        );
        b.eq(
            "device RX CQEs vs driver RX CQEs + unread at reopens",
            x.rx_cqes,
            r.cqes + o.rx_cqes_unread,
        );
        b.eq("device RX packets vs driver", x.rx_packets(), r.packets);
        // The device counts a frame with the 802.1Q tag it stripped; the driver got 4 bytes
        // less.
        b.eq(
            "device RX bytes vs driver + stripped tags",
            x.hc_rx_bytes,
            r.bytes + 4 * x.rx_vlan_stripped,
        );
        b.eq("driver RX vs delivered", r.packets, self.rx_delivered);
        b.eq("SQ doorbells: driver vs host", d.doorbells, e.sq_doorbells);
        b.eq(
            "SQ doorbells: driver vs device",
            d.doorbells,
            t.sq_doorbells,
        );
        b.eq("RQ doorbells: driver vs host", r.doorbells, e.rq_doorbells);
        b.eq(
            "RQ doorbells: driver vs device",
            r.doorbells,
            x.rq_doorbells,
        );
        b.eq("RQ doorbells with wqe_cnt != 0", x.rq_db_wqe_cnt_errors, 0);
        b.eq(
            "bad doorbells",
            t.bad_doorbells + x.bad_doorbells + t.db_invalid + x.db_invalid,
            0,
        );
        self.env.check_host(&mut b, &self.tx, d.bytes);
        b.eq("device TX WQE errors", t.tx_wqe_errors, 0);
        b.eq("driver protocol errors", d.cqe_bad + r.cqe_bad, 0);
        b.eq(
            "RX WQEs posted vs outstanding + completed + drained by reopens",
            r.wqes,
            u64::from(self.rq.posted()) + r.cqes + o.rx_buffers_drained,
        );
        b.floor(t.pcie.in_bytes, t.tx_floor_in_bytes);
        b.finish()
    }
}

/// What a pair set up through the HWC created, for its teardown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HwcObjects {
    /// The TX port's SQ object.
    pub sq: req::WqObj,
    /// The RX port's RQ object.
    pub rq: req::WqObj,
    /// CONFIG_VPORT_TX's answer for the TX port.
    pub vport_tx: req::VportTx,
}

/// The RSS key a pair set up through the HWC configures.
pub const HWC_PAIR_KEY: [u8; 40] = [0x6d; 40];

impl ManaPair {
    /// The pair built as the driver does it through the hardware: the probe over the SMC and
    /// the HWC (two MANA EQs), CONFIG_VPORT_TX on both vports, the SQ and RQ as WQ objects
    /// over DMA regions, RX steering with MANA_CONFIG_VPORT_RX (64 entries, all the RQ), and
    /// every doorbell on the page GDMA_REGISTER_DEVICE returned. The control side is
    /// returned for teardown.
    pub fn new_hwc(cfg: ManaConfig) -> (Self, HwcHost, HwcObjects) {
        let mut h = HwcHost::new(new_mana(2));
        let mut eqs = h.alloc_eqs(2);
        h.probe(&mut eqs, 4096).expect("probe");
        let rx_eq = eqs.pop().expect("EQ");
        let tx_eq = eqs.pop().expect("EQ");
        let vport_tx = h.config_vport_tx(TX_PORT).expect("vport TX");
        h.config_vport_tx(RX_PORT).expect("vport RX port TX");
        let mem = h.mem.clone();
        let bufs = QueueBufs::alloc(&mem, &cfg);
        let so = h
            .create_wq_obj(TX_PORT, req::GDMA_SQ, &bufs.sq, &bufs.tcq, tx_eq.id())
            .expect("SQ object");
        let ro = h
            .create_wq_obj(RX_PORT, req::GDMA_RQ, &bufs.rq, &bufs.rcq, rx_eq.id())
            .expect("RQ object");
        steer_rx(&mut h, Some(ro.handle)).expect("RX steering");
        let page = h.info.db_page;
        let layout = Layout {
            tx_mkey: cfg.sge_keys.map_or(h.info.reg.gpa_mkey, |k| k.0),
            rx_mkey: cfg.sge_keys.map_or(h.info.reg.gpa_mkey, |k| k.1),
            sq_db: page + DB_SQ,
            rq_db: page + DB_RQ,
            tx_cq_db: page + DB_CQ,
            rx_cq_db: page + DB_CQ,
            vp_offset: vport_tx.tx_vport_offset,
            hwc: true,
        };
        let mut env = ManaEnv::new(&mem, ManaBar(h.dev.clone()), cfg.track_dma);
        let ids = [so.wq_id, so.cq_id, ro.wq_id, ro.cq_id];
        let (sq, mut rq) = bufs.build(&cfg, &layout, ids);
        rq.fill(&mut env);
        let dev = h.dev.clone();
        let pair = Self::assemble(mem, dev, env, (sq, rq, tx_eq, rx_eq), ids, cfg, layout);
        let objs = HwcObjects {
            sq: so,
            rq: ro,
            vport_tx,
        };
        (pair, h, objs)
    }
}

/// MANA_CONFIG_VPORT_RX on the RX port's vport: RX and RSS on over `rq` (64 entries, the
/// pair's hash key, `rq` the default), or RX off (`None`), as `mana_config_rss` and
/// `mana_dealloc_queues` do.
fn steer_rx(h: &mut HwcHost, rq: Option<u64>) -> Result<(), CallError> {
    let vport = h.info.vports[RX_PORT].vport;
    let Some(handle) = rq else {
        return h.vport_rx_off(vport, 64);
    };
    h.vport_rss(
        vport,
        &HWC_PAIR_KEY,
        &[handle; 64],
        Some(handle),
        true,
        true,
    )
}

/// Creates the pair's CQs, SQ and RQ with direct model calls, the CQs reporting to `teq`
/// and `req`. Returns `[sq, tx cq, rq, rx cq]`.
fn create_direct(
    d: &mut HostMana,
    cfg: &ManaConfig,
    b: &QueueBufs,
    teq: u32,
    req: u32,
) -> [u32; 4] {
    let tcq = d
        .create_cq(TX_PORT, b.tcq.dma_addr(), tcq_entries(cfg), Some(teq))
        .expect("create the TX CQ");
    let sq = d
        .create_sq(TX_PORT, b.sq.dma_addr(), cfg.sq_size, tcq)
        .expect("create the SQ");
    let rcq = d
        .create_cq(RX_PORT, b.rcq.dma_addr(), rcq_entries(cfg), Some(req))
        .expect("create the RX CQ");
    let rq = d
        .create_rq(RX_PORT, b.rq.dma_addr(), cfg.rq_wqes * 32, rcq)
        .expect("create the RQ");
    [sq, tcq, rq, rcq]
}

/// Reopening the pair's queues, as the driver's reopen of a port's channels
/// (`Port::reopen` in port/work.rs: `close_channels`, then `open_channels`).
impl ManaPair {
    /// The device counters the next reopen's accounting starts from.
    fn base_now(&self) -> Base {
        let (t, x) = (self.dev(TX_PORT), self.dev(RX_PORT));
        Base {
            wqes: t.wqes,
            tx_err_cqes: t.tx_err_cqes,
            tx_cqes: t.tx_cqes,
            rx_cqes: x.rx_cqes,
        }
    }

    /// Reopens the pair's queues with direct model calls (a pair from [`ManaPair::new`]):
    /// RX steering off, the TX completions waiting reaped if the SQ is not in error (as the
    /// channel's close lets the device finish, with NAPI off), the RQ and its CQ then the SQ
    /// and its CQ destroyed (which ends a [`Fault::TxStall`] or [`Fault::DevStop`] of their
    /// ports), everything in flight released ([`Reopened`]), new queues created over fresh
    /// memory (the old is unmapped: a device touching it faults), the RQ filled, RSS set to
    /// it, the EQs bound to the new CQs, the TX queue woken. The device does not run meanwhile
    /// and the new CQs are not armed (NAPI's first poll arms them, as after
    /// [`ManaPair::new`]).
    ///
    /// Panics for a pair built through the HWC (use [`ManaPair::reopen_hwc`]), or if the
    /// device refuses a step (a test bed bug).
    ///
    /// [`Fault::TxStall`]: rsnic_core::sim::mana::Fault::TxStall
    /// [`Fault::DevStop`]: rsnic_core::sim::mana::Fault::DevStop
    pub fn reopen(&mut self) -> Reopened {
        assert!(
            !self.layout.hwc,
            "a pair built through the HWC reopens with reopen_hwc"
        );
        self.dev
            .borrow_mut()
            .set_rss(RX_PORT, &[])
            .expect("RX steering off");
        self.close_reap();
        {
            let [sq, tcq, rq, rcq] = self.ids;
            let mut d = self.dev.borrow_mut();
            d.destroy_rq(rq).expect("destroy the RQ");
            d.destroy_cq(rcq).expect("destroy the RX CQ");
            d.destroy_sq(sq).expect("destroy the SQ");
            d.destroy_cq(tcq).expect("destroy the TX CQ");
        }
        let r = self.close_drain();
        let bufs = QueueBufs::alloc(&self.mem, &self.cfg);
        let ids = create_direct(
            &mut self.dev.borrow_mut(),
            &self.cfg,
            &bufs,
            self.tx_eq.id(),
            self.rx_eq.id(),
        );
        let r = self.open_queues(bufs, ids, r);
        self.dev
            .borrow_mut()
            .set_rss(RX_PORT, &[ids[2]])
            .expect("RSS over the new RQ");
        r
    }

    /// [`ManaPair::reopen`] for a pair built through the HWC ([`ManaPair::new_hwc`]), with
    /// the driver's requests: MANA_CONFIG_VPORT_RX with RX off, MANA_DESTROY_WQ_OBJ of the RQ
    /// then the SQ (each with its CQ and DMA regions), MANA_CREATE_WQ_OBJ of a new SQ and RQ
    /// over fresh memory, the RQ filled, MANA_CONFIG_VPORT_RX with RX on over it; `objs` gets
    /// the new objects. The HWC runs the device while it waits for a response (interrupts
    /// raised then are the HWC host's).
    ///
    /// A request that fails (an injected failure, [`HostMana::fail_request`]) ends the
    /// reopen with its error, the steps before it done: the pair is then left without usable
    /// queues (as the driver's port, until the interface is set down and up).
    pub fn reopen_hwc(
        &mut self,
        h: &mut HwcHost,
        objs: &mut HwcObjects,
    ) -> Result<Reopened, CallError> {
        assert!(
            self.layout.hwc,
            "a pair built with direct calls reopens with reopen"
        );
        self.env.flush_mmio();
        steer_rx(h, None)?;
        self.close_reap();
        self.env.flush_mmio();
        for (ty, handle) in [
            (req::GDMA_RQ, objs.rq.handle),
            (req::GDMA_SQ, objs.sq.handle),
        ] {
            h.simple(req::MANA_DESTROY_WQ_OBJ, |b, who| {
                req::destroy_wq_obj(b, who, ty, handle)
            })?;
        }
        let r = self.close_drain();
        let bufs = QueueBufs::alloc(&self.mem, &self.cfg);
        let so = h.create_wq_obj(TX_PORT, req::GDMA_SQ, &bufs.sq, &bufs.tcq, self.tx_eq.id())?;
        objs.sq = so;
        let ro = h.create_wq_obj(RX_PORT, req::GDMA_RQ, &bufs.rq, &bufs.rcq, self.rx_eq.id())?;
        objs.rq = ro;
        let r = self.open_queues(bufs, [so.wq_id, so.cq_id, ro.wq_id, ro.cq_id], r);
        self.env.flush_mmio();
        steer_rx(h, Some(ro.handle))?;
        Ok(r)
    }

    /// The first step of a close: the TX completions the device wrote are reaped if the SQ
    /// is not in error (`tx_reap` without NAPI: no CQ doorbell).
    fn close_reap(&mut self) {
        self.env.flush_mmio();
        if self.sq.error().is_some() {
            return;
        }
        loop {
            let mut done = Vec::new();
            let r = self.sq.poll_cq(&mut self.env, |p| done.push(p));
            for p in done {
                self.tx.release(p);
            }
            if r.cqes == 0 {
                break;
            }
        }
    }

    /// The close once the device queues are gone: what the device did since the queues were
    /// created read from its counters, every TX packet in flight released and dropped (BQL
    /// reset), the RQ drained (a stopped RQ's unread CQEs counted as discarded), the queues'
    /// counters added to the port totals.
    fn close_drain(&mut self) -> Reopened {
        let (t, x, b, s) = (
            self.dev(TX_PORT),
            self.dev(RX_PORT),
            self.base,
            self.sq.stats,
        );
        let executed = t.wqes - b.wqes;
        let abandoned = s
            .wqes
            .checked_sub(executed)
            .expect("the device executed no more WQEs than the SQ posted");
        let failed = (t.tx_err_cqes - b.tx_err_cqes)
            .checked_sub(s.tx_cqe_err + s.tx_cqe_unknown_type)
            .expect("the driver read no more error CQEs than the device wrote");
        let tx_unread = (t.tx_cqes - b.tx_cqes)
            .checked_sub(s.cqes)
            .expect("the driver read no more TX CQEs than the device wrote");
        let mut drained = Vec::new();
        let (pkts, bytes) = self.sq.drain(&mut self.env, |p| drained.push(p));
        for p in drained {
            self.tx.release(p);
        }
        assert_eq!(
            self.env.reset_bql(),
            (u64::from(pkts), u64::from(bytes)),
            "BQL in flight vs what the reopen dropped"
        );
        assert!(
            abandoned + failed <= u64::from(pkts),
            "{abandoned} abandoned and {failed} failed of {pkts} dropped"
        );
        let bufs = self.rq.drain(&mut self.env);
        let rx_unread = (x.rx_cqes - b.rx_cqes)
            .checked_sub(self.rq.stats.cqes)
            .expect("the driver read no more RX CQEs than the device wrote");
        add_tx(&mut self.closed_tx, self.sq.stats);
        add_rx(&mut self.closed_rx, self.rq.stats);
        Reopened {
            tx_dropped: pkts,
            tx_abandoned: abandoned as u32,
            tx_failed: failed as u32,
            tx_cqes_discarded: s.cqe_discarded as u32,
            tx_cqes_unread: tx_unread as u32,
            rx_cqes_discarded: self.rq.stats.cqe_discarded as u32,
            rx_cqes_unread: rx_unread as u32,
            rx_buffers_drained: bufs,
            rx_posted: 0,
        }
    }

    /// The open: the driver's queues over `bufs` with the device's `ids`, the old queues'
    /// memory unmapped, the RQ filled (one doorbell), the EQs bound to the new CQs
    /// (`irq_bind`), the TX queue woken; the reopen counted.
    fn open_queues(&mut self, bufs: QueueBufs, ids: [u32; 4], mut r: Reopened) -> Reopened {
        let (sq, rq) = bufs.build(&self.cfg, &self.layout, ids);
        let old_sq = std::mem::replace(&mut self.sq, sq);
        let old_rq = std::mem::replace(&mut self.rq, rq);
        for b in [
            old_sq.wq().ring(),
            old_sq.cq().buffer(),
            old_rq.wq().ring(),
            old_rq.cq().buffer(),
        ] {
            self.mem.free(b);
        }
        self.ids = ids;
        self.tx_eq.expect_cqs(&[ids[1]]);
        self.rx_eq.expect_cqs(&[ids[3]]);
        r.rx_posted = self.rq.fill(&mut self.env);
        self.env.wake();
        self.base = self.base_now();
        self.reopens.add(&r);
        r
    }
}
