//! One port pair: the driver-side mlx5 SQ and RQ of `dp/mlx5` against the simulated
//! ConnectX, port 0 (TX) wired to port 1 (RX), with host implementations of every trait the
//! data path asks its caller for. Shared by the end-to-end tests, the property tests, the
//! benchmark and the fuzzer.
//!
//! ```
//! use rsnic_testbed::pair::{Pair, PairConfig, TxFrame};
//! let mut p = Pair::new(PairConfig { mpwqe: true, ..PairConfig::default() });
//! let frames: Vec<TxFrame> = (0..32).map(|i| TxFrame::linear(vec![i as u8; 64])).collect();
//! let sent = p.send_burst(&frames);        // xmit_more on all but the last: one doorbell
//! assert_eq!(sent.accepted.len(), 32);
//! p.run_device();                          // the device executes the WQEs
//! p.poll_tx();                             // TX completions hand every packet back
//! let rx = p.poll_rx(64);                  // NAPI poll of the RQ
//! assert_eq!(rx.len(), 32);
//! assert_eq!(rx[5].bytes, vec![5u8; 64]);
//! p.check_counters().unwrap();             // driver and device counters balance
//! ```
//!
//! # What the host implementations do
//!
//! * [`TxPkt`] (a [`TxPacket`]) is one pointer to a heap packet, like an `sk_buff *`: its
//!   linear part and fragments sit in [`HostMemory`] buffers of 2 KiB (at least) that are
//!   reused after completion; the data starts 64-byte aligned (page aligned).
//! * [`HostEnv`] is the netdev side: [`TxDmaMap`] maps by identity (the bus address of the
//!   buffer) and, with [`PairConfig::track_dma`], checks that every mapping is undone exactly
//!   once with the same length and kind; [`TxQueue`] keeps the stop state and BQL byte
//!   balance; [`RxBufProvider`] hands out 2 KiB buffers from a pool. Register writes
//!   ([`Mmio`]) are latched in program order and handed to the device's register decoder
//!   when the device next runs ([`Pair::run_device`]) or its counters are read: register
//!   writes only latch state in the device anyway, and this keeps the device model's
//!   decoder out of the driver's instruction counts. [`Barriers`] are compiler fences.
//! * The TX CQ has the SQ's size; the RX CQ has the RQ's size and optional CQE compression.
//!   No CQ is armed unless the caller does it ([`Pair::arm`]); polling is explicit.
//!
//! Invariants the pair itself enforces (a violation panics, it is a driver bug): a TX packet
//! is handed back at most once and only if it was accepted, TX completions come back in the
//! order the packets were accepted, DMA mappings balance (with `track_dma`).

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{compiler_fence, Ordering};

use rsnic_core::dp::hw::{Barriers, Coherent, DmaAddr, Mmio};
use rsnic_core::dp::mlx5::cq::{Cq, CQ_DB_REQ_NOT};
use rsnic_core::dp::mlx5::rq::{Rq, RqParams, RxBufProvider, RxBuffer, RxCompletion};
use rsnic_core::dp::mlx5::sq::{Sq, SqParams, TxPoll, WqeInfo};
use rsnic_core::dp::mlx5::stats::{RxStats, TxStats};
use rsnic_core::dp::mlx5::tx::{
    DmaEntry, DmaKind, InlineMode, TxCsum, TxDmaMap, TxPacket, TxQueue, TxReject, TxRejectReason,
    VlanTag,
};
use rsnic_core::sim::mlx5::{
    CqConfig, PortCounters, RqConfig, SqConfig, SQ_DOORBELL, UAR_PAGE_SIZE,
};

use crate::bus::{RegisterBus, Testbed};
use crate::mem::{HostBuf, HostMemory};

/// Memory key the driver puts in data segments (the model does not check lkeys).
pub const LKEY: u32 = 0x0000_1234;
/// Size of the TX and RX data buffers (an MTU frame plus a VLAN tag fits).
pub const BUF_SIZE: usize = 2048;
/// The SQ (and its TX CQ) live on this port.
pub const TX_PORT: usize = 0;
/// The RQ (and its RX CQ) live on this port, wired to [`TX_PORT`].
pub const RX_PORT: usize = 1;

/// The driver-side SQ with host storage.
pub type HostSq = Sq<TxPkt, HostBuf, Vec<WqeInfo<TxPkt>>, Vec<Option<TxPkt>>, Vec<DmaEntry>>;
/// The driver-side RQ with host storage.
pub type HostRq = Rq<RxBuf, HostBuf, Vec<Option<RxBuf>>>;

/// How the pair is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PairConfig {
    /// log2 of the SQ size in WQEBBs (6..=13); the TX CQ has as many entries.
    pub sq_log_sz: u8,
    /// log2 of the RQ size in WQEs (1..=15); the RX CQ has as many entries.
    pub rq_log_sz: u8,
    /// Enhanced MPWQE for eligible packets.
    pub mpwqe: bool,
    /// Inline small packets inside MPWQE sessions (when enough packets are outstanding).
    pub mpwqe_inline: bool,
    /// Basic CQE compression on the RX CQ.
    pub cqe_compress: bool,
    /// The SQ's min-inline mode.
    pub min_inline: InlineMode,
    /// Refill the RQ only when this many WQEs are missing (1..=RQ size).
    pub wqe_bulk: u16,
    /// Check DMA map/unmap balance with a map of live mappings (the benchmark turns it off
    /// so that the map callbacks stay as cheap as a direct-mapped `dma_map_single`).
    pub track_dma: bool,
}

impl Default for PairConfig {
    /// mlx5e's defaults: 1024-WQEBB SQ, 1024-WQE RQ, everything off, bulk of 8.
    fn default() -> Self {
        Self {
            sq_log_sz: 10,
            rq_log_sz: 10,
            mpwqe: false,
            mpwqe_inline: false,
            cqe_compress: false,
            min_inline: InlineMode::None,
            wqe_bulk: 8,
            track_dma: true,
        }
    }
}

/// A packet to send, as the stack would hand it over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxFrame {
    /// The linear part (`skb_headlen` bytes).
    pub linear: Vec<u8>,
    /// Page fragments, in order (zero-length fragments are allowed).
    pub frags: Vec<Vec<u8>>,
    /// Checksum offload request.
    pub csum: TxCsum,
    /// VLAN tag to insert.
    pub vlan: Option<VlanTag>,
}

impl TxFrame {
    /// A linear frame without offloads.
    pub fn linear(bytes: Vec<u8>) -> Self {
        Self {
            linear: bytes,
            frags: Vec::new(),
            csum: TxCsum::None,
            vlan: None,
        }
    }

    /// Total length in bytes.
    pub fn len(&self) -> usize {
        self.linear.len() + self.frags.iter().map(Vec::len).sum::<usize>()
    }

    /// Whether the frame has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// All bytes in order (linear part, then fragments).
    pub fn bytes(&self) -> Vec<u8> {
        let mut v = self.linear.clone();
        for f in &self.frags {
            v.extend_from_slice(f);
        }
        v
    }

    /// The frame as the peer receives it, checksum offload aside: the VLAN tag (802.1Q
    /// TPID 0x8100, or 0x88a8 for 802.1ad) inserted after the MAC addresses, then zero
    /// padding to 60 bytes (spec: the device's MAC pads short frames).
    pub fn expected_wire(&self) -> Vec<u8> {
        let mut v = self.bytes();
        if let Some(t) = self.vlan {
            let tpid: u16 = if t.dot1ad { 0x88a8 } else { 0x8100 };
            let mut tag = tpid.to_be_bytes().to_vec();
            tag.extend_from_slice(&t.tci.to_be_bytes());
            let at = 12.min(v.len());
            v.splice(at..at, tag);
        }
        if v.len() < 60 {
            v.resize(60, 0);
        }
        v
    }
}

struct PktData {
    id: u64,
    len: u32,
    linear: Vec<u8>,
    lin: HostBuf,
    frags: Vec<(HostBuf, u32)>,
    csum: TxCsum,
    vlan: Option<VlanTag>,
}

/// A packet handle owned by the SQ while in flight: one pointer, like an `sk_buff *`.
pub struct TxPkt(Box<PktData>);

impl TxPkt {
    /// The identifier [`Pair`] gave the packet (increasing in submission order).
    pub fn id(&self) -> u64 {
        self.0.id
    }
}

impl core::fmt::Debug for TxPkt {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "TxPkt({}, {} bytes)", self.0.id, self.0.len)
    }
}

impl TxPacket for TxPkt {
    #[inline]
    fn pkt_len(&self) -> u32 {
        self.0.len
    }
    #[inline]
    fn linear(&self) -> &[u8] {
        &self.0.linear
    }
    #[inline]
    fn nr_frags(&self) -> usize {
        self.0.frags.len()
    }
    #[inline]
    fn frag_len(&self, i: usize) -> u32 {
        self.0.frags.get(i).map_or(0, |f| f.1)
    }
    #[inline]
    fn csum(&self) -> TxCsum {
        self.0.csum
    }
    #[inline]
    fn vlan(&self) -> Option<VlanTag> {
        self.0.vlan
    }
}

/// A receive buffer handed to the RQ.
pub struct RxBuf {
    /// Allocation number (unique while the buffer is posted).
    pub id: u64,
    /// The memory the device writes into.
    pub buf: HostBuf,
}

impl RxBuffer for RxBuf {
    #[inline]
    fn dma_addr(&self) -> DmaAddr {
        self.buf.dma_addr()
    }
}

/// One packet the RQ delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RxFrame {
    /// The received bytes (`comp.len` of them).
    pub bytes: Vec<u8>,
    /// What the CQE said.
    pub comp: RxCompletion,
}

/// Event counts of the host side (what the driver asked of its environment).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EnvCounts {
    /// DMA map calls that succeeded.
    pub maps: u64,
    /// DMA unmap calls.
    pub unmaps: u64,
    /// Register writes (all offsets).
    pub mmio_writes: u64,
    /// Register writes to the SQ doorbell of the TX port.
    pub sq_doorbells: u64,
    /// Queue stops / wakes.
    pub stops: u64,
    /// Queue wakes.
    pub wakes: u64,
    /// BQL: bytes and packets reported sent.
    pub bql_sent_bytes: u64,
    /// BQL: packets reported sent.
    pub bql_sent_pkts: u64,
    /// BQL: bytes reported completed.
    pub bql_done_bytes: u64,
    /// BQL: packets reported completed.
    pub bql_done_pkts: u64,
    /// RX buffers handed out / taken back unused.
    pub rx_allocs: u64,
    /// RX buffers the RQ gave back without delivering them.
    pub rx_recycled: u64,
}

enum MmioOp {
    W64(u32, [u8; 8]),
    W32(u32, u32),
}

/// The environment the data path talks to (netdev TX queue, DMA API, page pool, BAR0).
pub struct HostEnv {
    mem: HostMemory,
    pending: RefCell<Vec<MmioOp>>,
    bus: RegisterBus,
    mmio_writes: Cell<u64>,
    sq_doorbells: Cell<u64>,
    live: Option<HashMap<DmaAddr, (u32, DmaKind)>>,
    stopped: bool,
    rx_pool: Vec<HostBuf>,
    rx_next: u64,
    /// Fail RX allocations after this many (`None`: never).
    pub rx_alloc_limit: Option<u64>,
    /// Fail the DMA map call with this index (0-based count of map calls).
    pub fail_map_at: Option<u64>,
    map_calls: u64,
    counts: EnvCounts,
}

impl HostEnv {
    fn new(mem: &HostMemory, bus: RegisterBus, track_dma: bool) -> Self {
        Self {
            mem: mem.clone(),
            pending: RefCell::new(Vec::with_capacity(1024)),
            bus,
            mmio_writes: Cell::new(0),
            sq_doorbells: Cell::new(0),
            live: track_dma.then(HashMap::new),
            stopped: false,
            rx_pool: Vec::new(),
            rx_next: 0,
            rx_alloc_limit: None,
            fail_map_at: None,
            map_calls: 0,
            counts: EnvCounts::default(),
        }
    }

    /// Hands the latched register writes to the device, in order.
    pub fn flush_mmio(&self) {
        for op in self.pending.borrow_mut().drain(..) {
            match op {
                MmioOp::W64(o, b) => self.bus.write64(o, b),
                MmioOp::W32(o, v) => self.bus.write32(o, v),
            }
        }
    }

    /// The host-side event counts.
    pub fn counts(&self) -> EnvCounts {
        EnvCounts {
            mmio_writes: self.mmio_writes.get(),
            sq_doorbells: self.sq_doorbells.get(),
            ..self.counts
        }
    }

    /// Live DMA mappings (0 when nothing is in flight; always 0 without `track_dma`).
    pub fn live_mappings(&self) -> usize {
        self.live.as_ref().map_or(0, HashMap::len)
    }

    #[inline]
    fn map(&mut self, addr: DmaAddr, len: u32, kind: DmaKind) -> Option<DmaAddr> {
        let n = self.map_calls;
        self.map_calls += 1;
        if self.fail_map_at == Some(n) {
            return None;
        }
        self.counts.maps += 1;
        if let Some(live) = &mut self.live {
            assert!(
                live.insert(addr, (len, kind)).is_none(),
                "DMA address {addr:#x} mapped twice"
            );
        }
        Some(addr)
    }
}

impl Mmio for HostEnv {
    #[inline]
    fn write64(&self, offset: u32, bytes: [u8; 8]) {
        self.mmio_writes.set(self.mmio_writes.get() + 1);
        if offset == SQ_DOORBELL + TX_PORT as u32 * UAR_PAGE_SIZE {
            self.sq_doorbells.set(self.sq_doorbells.get() + 1);
        }
        self.pending.borrow_mut().push(MmioOp::W64(offset, bytes));
    }

    fn write32(&self, offset: u32, value: u32) {
        self.mmio_writes.set(self.mmio_writes.get() + 1);
        self.pending.borrow_mut().push(MmioOp::W32(offset, value));
    }

    fn read32(&self, offset: u32) -> u32 {
        self.flush_mmio();
        self.bus.read32(offset)
    }
}

impl Barriers for HostEnv {
    #[inline]
    fn dma_wmb(&self) {
        compiler_fence(Ordering::SeqCst);
    }
    #[inline]
    fn dma_rmb(&self) {
        compiler_fence(Ordering::SeqCst);
    }
    #[inline]
    fn wmb(&self) {
        compiler_fence(Ordering::SeqCst);
    }
}

impl TxDmaMap<TxPkt> for HostEnv {
    #[inline]
    fn map_linear(&mut self, pkt: &TxPkt, offset: u32, len: u32) -> Option<DmaAddr> {
        assert!(
            u64::from(offset) + u64::from(len) <= pkt.0.linear.len() as u64,
            "map beyond the linear part"
        );
        self.map(
            pkt.0.lin.dma_addr() + u64::from(offset),
            len,
            DmaKind::Single,
        )
    }

    #[inline]
    fn map_frag(&mut self, pkt: &TxPkt, index: usize) -> Option<DmaAddr> {
        let (buf, len) = pkt.0.frags.get(index).expect("map of a missing fragment");
        let (addr, len) = (buf.dma_addr(), *len);
        self.map(addr, len, DmaKind::Page)
    }

    #[inline]
    fn unmap(&mut self, e: DmaEntry) {
        self.counts.unmaps += 1;
        if let Some(live) = &mut self.live {
            let got = live
                .remove(&e.addr)
                .unwrap_or_else(|| panic!("unmap of {:#x}, which is not mapped", e.addr));
            assert_eq!(got, (e.len, e.kind), "unmap does not match its map");
        }
    }
}

impl TxQueue for HostEnv {
    #[inline]
    fn stop(&mut self) {
        self.stopped = true;
        self.counts.stops += 1;
    }
    #[inline]
    fn wake(&mut self) {
        self.stopped = false;
        self.counts.wakes += 1;
    }
    #[inline]
    fn is_stopped(&self) -> bool {
        self.stopped
    }
    #[inline]
    fn sent(&mut self, bytes: u32, xmit_more: bool) -> bool {
        self.counts.bql_sent_bytes += u64::from(bytes);
        self.counts.bql_sent_pkts += 1;
        !xmit_more || self.stopped
    }
    #[inline]
    fn completed(&mut self, pkts: u32, bytes: u32) {
        self.counts.bql_done_bytes += u64::from(bytes);
        self.counts.bql_done_pkts += u64::from(pkts);
        assert!(
            self.counts.bql_done_bytes <= self.counts.bql_sent_bytes,
            "BQL completed more bytes than were sent"
        );
    }
}

impl RxBufProvider<RxBuf> for HostEnv {
    fn alloc(&mut self) -> Option<RxBuf> {
        if self
            .rx_alloc_limit
            .is_some_and(|l| self.counts.rx_allocs >= l)
        {
            return None;
        }
        self.counts.rx_allocs += 1;
        let buf = self
            .rx_pool
            .pop()
            .unwrap_or_else(|| self.mem.alloc(BUF_SIZE));
        let id = self.rx_next;
        self.rx_next += 1;
        Some(RxBuf { id, buf })
    }

    fn recycle(&mut self, buf: RxBuf) {
        self.counts.rx_recycled += 1;
        self.rx_pool.push(buf.buf);
    }
}

/// What [`Pair::send`] did with a burst.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SendResult {
    /// Ids of the accepted packets, in order.
    pub accepted: Vec<u64>,
    /// Index in the burst and reason of every packet handed back.
    pub rejected: Vec<(usize, TxRejectReason)>,
    /// Packets at the end of the burst not offered because the queue was stopped (the stack
    /// would requeue them).
    pub not_sent: usize,
}

/// The port pair. Fields are public so that benchmarks can call the driver directly.
pub struct Pair {
    /// Memory, device, interrupts.
    pub tb: Testbed,
    /// The driver's environment.
    pub env: HostEnv,
    /// The driver's SQ on [`TX_PORT`].
    pub sq: HostSq,
    /// The driver's RQ on [`RX_PORT`].
    pub rq: HostRq,
    cfg: PairConfig,
    next_id: u64,
    tx_pool: Vec<HostBuf>,
    /// Accepted packets not yet handed back, in order.
    in_flight: VecDeque<u64>,
    tx_done: u64,
    rx_delivered: u64,
}

fn coherent(mem: &HostMemory, len: usize) -> HostBuf {
    mem.alloc(len)
}

impl Pair {
    /// Creates the queues on both ports, posts the RQ and sets RSS of the RX port to it.
    ///
    /// Panics if the configuration is out of range (a test bug).
    pub fn new(cfg: PairConfig) -> Self {
        let tb = Testbed::new();
        // The pair checks the data path's drop-and-count accounting: a starved RQ drops
        // (rx_out_of_buffer) instead of pausing the sender. Flow control has its own test
        // (sim_device::flow_control_pauses_instead_of_dropping).
        for port in 0..2 {
            tb.device()
                .set_pause(port, false)
                .expect("the test bed has two ports");
        }
        let mem = tb.mem.clone();
        let mut env = HostEnv::new(&mem, tb.bus(), cfg.track_dma);
        let (sn, rn) = (1usize << cfg.sq_log_sz, 1usize << cfg.rq_log_sz);

        let (tcq_buf, tcq_dbr) = (coherent(&mem, sn * 64), coherent(&mem, 8));
        let tcqn = tb
            .device()
            .create_cq(&CqConfig {
                port: TX_PORT,
                buf: tcq_buf.dma_addr(),
                log_size: cfg.sq_log_sz,
                dbr: tcq_dbr.dma_addr(),
                vector: 0,
                compress: false,
            })
            .expect("create TX CQ");
        let tcq = Cq::new(
            tcq_buf,
            tcq_dbr,
            0,
            cfg.sq_log_sz,
            tcqn,
            TX_PORT as u32 * UAR_PAGE_SIZE,
        )
        .expect("TX CQ");
        let (wq, sq_dbr) = (coherent(&mem, sn * 64), coherent(&mem, 8));
        let sqn = tb
            .device()
            .create_sq(&SqConfig {
                port: TX_PORT,
                buf: wq.dma_addr(),
                log_size: cfg.sq_log_sz,
                dbr: sq_dbr.dma_addr(),
                cqn: tcqn,
            })
            .expect("create SQ");
        let sq = Sq::new(
            SqParams {
                log_sz: cfg.sq_log_sz,
                sqn,
                lkey: LKEY,
                db_offset: TX_PORT as u32 * UAR_PAGE_SIZE + SQ_DOORBELL,
                dbr_off: 0,
                min_inline: cfg.min_inline,
                vlan_need_l2_inline: false,
                max_sq_wqebbs: 16,
                mpwqe: cfg.mpwqe,
                mpwqe_inline: cfg.mpwqe_inline,
            },
            wq,
            sq_dbr,
            tcq,
            (0..sn).map(|_| WqeInfo::default()).collect(),
            (0..4 * sn).map(|_| None).collect(),
            vec![DmaEntry::default(); 4 * sn],
        )
        .expect("SQ");

        let (rcq_buf, rcq_dbr) = (coherent(&mem, rn * 64), coherent(&mem, 8));
        let rcqn = tb
            .device()
            .create_cq(&CqConfig {
                port: RX_PORT,
                buf: rcq_buf.dma_addr(),
                log_size: cfg.rq_log_sz,
                dbr: rcq_dbr.dma_addr(),
                vector: 1,
                compress: cfg.cqe_compress,
            })
            .expect("create RX CQ");
        let rcq = Cq::new(
            rcq_buf,
            rcq_dbr,
            0,
            cfg.rq_log_sz,
            rcqn,
            RX_PORT as u32 * UAR_PAGE_SIZE,
        )
        .expect("RX CQ");
        let (rwq, rq_dbr) = (coherent(&mem, rn * 16), coherent(&mem, 8));
        let rqn = tb
            .device()
            .create_rq(&RqConfig {
                port: RX_PORT,
                buf: rwq.dma_addr(),
                log_size: cfg.rq_log_sz,
                log_stride: 4,
                dbr: rq_dbr.dma_addr(),
                cqn: rcqn,
            })
            .expect("create RQ");
        tb.device().set_rss(RX_PORT, &[rqn]).expect("RSS");
        let mut rq = Rq::new(
            RqParams {
                log_sz: cfg.rq_log_sz,
                buf_size: BUF_SIZE as u32,
                lkey: LKEY,
                dbr_off: 0,
                wqe_bulk: cfg.wqe_bulk,
            },
            rwq,
            rq_dbr,
            rcq,
            (0..rn).map(|_| None).collect(),
        )
        .expect("RQ");
        rq.post(&mut env);
        Self {
            tb,
            env,
            sq,
            rq,
            cfg,
            next_id: 0,
            tx_pool: Vec::new(),
            in_flight: VecDeque::new(),
            tx_done: 0,
            rx_delivered: 0,
        }
    }

    /// The configuration.
    pub fn config(&self) -> PairConfig {
        self.cfg
    }

    fn tx_buf(&mut self, bytes: &[u8]) -> HostBuf {
        let b = match self.tx_pool.pop() {
            Some(b) if b.size() >= bytes.len() => b,
            Some(b) => {
                self.tx_pool.push(b);
                self.tb.mem.alloc(bytes.len())
            }
            None => self.tb.mem.alloc(bytes.len().max(BUF_SIZE)),
        };
        b.write(0, bytes);
        b
    }

    /// Builds the packet handle for `frame` (copies its bytes into DMA-able buffers) and
    /// gives it the next id. The pair expects it back from [`Pair::xmit`] or
    /// [`Pair::release`].
    pub fn make_pkt(&mut self, frame: &TxFrame) -> TxPkt {
        let lin = self.tx_buf(&frame.linear);
        let frags = frame
            .frags
            .iter()
            .map(|f| (self.tx_buf(f), f.len() as u32))
            .collect();
        let id = self.next_id;
        self.next_id += 1;
        TxPkt(Box::new(PktData {
            id,
            len: frame.len() as u32,
            linear: frame.linear.clone(),
            lin,
            frags,
            csum: frame.csum,
            vlan: frame.vlan,
        }))
    }

    /// Takes back a packet handle the driver returned (completed or rejected): its buffers
    /// go back to the pool.
    pub fn recycle(&mut self, pkt: TxPkt) {
        let d = *pkt.0;
        self.tx_pool.push(d.lin);
        self.tx_pool.extend(d.frags.into_iter().map(|f| f.0));
    }

    /// Records that the driver accepted packet `id` (for [`Pair::release`]'s checks).
    pub fn accepted(&mut self, id: u64) {
        if let Some(&last) = self.in_flight.back() {
            assert!(id > last, "packet ids must be accepted in increasing order");
        }
        self.in_flight.push_back(id);
    }

    /// A completed packet came back from the driver: checks it is the oldest one in flight
    /// (each packet comes back exactly once, in order) and recycles it.
    pub fn release(&mut self, pkt: TxPkt) {
        let id = pkt.id();
        match self.in_flight.pop_front() {
            Some(want) if want == id => {}
            Some(want) => panic!("TX packet {id} handed back, expected {want}"),
            None => panic!("TX packet {id} handed back but none is in flight"),
        }
        self.tx_done += 1;
        self.recycle(pkt);
    }

    /// Offers one frame to the driver (`ndo_start_xmit`). `Ok(id)` if accepted.
    pub fn send_one(&mut self, frame: &TxFrame, xmit_more: bool) -> Result<u64, TxRejectReason> {
        let pkt = self.make_pkt(frame);
        let id = pkt.id();
        match self.sq.xmit(pkt, xmit_more, &mut self.env) {
            Ok(()) => {
                self.accepted(id);
                Ok(id)
            }
            Err(TxReject { pkt, reason }) => {
                self.recycle(pkt);
                Err(reason)
            }
        }
    }

    /// Offers a burst with `xmit_more` set on all packets but the last.
    pub fn send_burst(&mut self, frames: &[TxFrame]) -> SendResult {
        let n = frames.len();
        let more: Vec<bool> = (0..n).map(|i| i + 1 < n).collect();
        self.send(frames, &more)
    }

    /// Offers `frames` with the given `xmit_more` flags (`more[i]` for `frames[i]`; missing
    /// flags are false). Stops offering when the driver stopped the queue, as the stack does.
    pub fn send(&mut self, frames: &[TxFrame], more: &[bool]) -> SendResult {
        let mut r = SendResult::default();
        for (i, f) in frames.iter().enumerate() {
            if self.env.is_stopped() {
                r.not_sent = frames.len() - i;
                break;
            }
            match self.send_one(f, more.get(i).copied().unwrap_or(false)) {
                Ok(id) => r.accepted.push(id),
                Err(reason) => r.rejected.push((i, reason)),
            }
        }
        r
    }

    /// Whether the driver stopped the TX queue.
    pub fn tx_stopped(&self) -> bool {
        self.env.is_stopped()
    }

    /// Runs the device until it has no work. Returns the WQEs it executed.
    pub fn run_device(&mut self) -> usize {
        self.env.flush_mmio();
        self.tb.step()
    }

    /// Runs the device for at most `budget` WQEs. Returns (WQEs executed, work left).
    pub fn run_device_budget(&mut self, budget: usize) -> (usize, bool) {
        self.env.flush_mmio();
        self.tb.step_budget(budget)
    }

    /// One TX CQ poll (at most 128 CQEs); every packet handed back is checked and recycled.
    pub fn poll_tx(&mut self) -> TxPoll {
        let mut done = Vec::new();
        let r = self.sq.poll_cq(&mut self.env, |p| done.push(p));
        for p in done {
            self.release(p);
        }
        r
    }

    /// One NAPI poll of the RQ for up to `budget` packets, then the refill. Returns the
    /// delivered packets (their buffers go back to the pool).
    pub fn poll_rx(&mut self, budget: u32) -> Vec<RxFrame> {
        let mut out = Vec::new();
        let mut bufs = Vec::new();
        self.rq.napi_poll(budget, &mut self.env, |b, c| {
            let mut bytes = vec![0u8; c.len as usize];
            b.buf.read(0, &mut bytes);
            out.push(RxFrame { bytes, comp: *c });
            bufs.push(b.buf);
        });
        self.env.rx_pool.extend(bufs);
        self.rx_delivered += out.len() as u64;
        out
    }

    /// Runs device and driver until nothing moves: device steps, TX polls, RX polls of
    /// `rx_budget` until empty. Returns the packets delivered on the way.
    pub fn settle(&mut self, rx_budget: u32) -> Vec<RxFrame> {
        let mut out = Vec::new();
        loop {
            let w = self.run_device();
            let mut moved = w > 0;
            loop {
                let t = self.poll_tx();
                moved |= t.cqes > 0;
                if !t.busy {
                    break;
                }
            }
            loop {
                let got = self.poll_rx(rx_budget.max(1));
                if got.is_empty() {
                    break;
                }
                moved = true;
                out.extend(got);
            }
            if !moved && self.env.pending.borrow().is_empty() {
                return out;
            }
        }
    }

    /// Arms the TX and RX CQs (one register write each).
    pub fn arm(&mut self) {
        self.sq.cq_mut().arm(CQ_DB_REQ_NOT, &self.env, &self.env);
        self.rq.cq_mut().arm(CQ_DB_REQ_NOT, &self.env, &self.env);
    }

    /// Interrupt vectors raised since the last call (0 = TX CQ, 1 = RX CQ).
    pub fn take_irqs(&mut self) -> Vec<u16> {
        self.tb.take_irqs()
    }

    /// Packets accepted and not yet handed back.
    pub fn tx_in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Packets handed back by TX completions.
    pub fn tx_completed(&self) -> u64 {
        self.tx_done
    }

    /// Packets delivered by the RQ.
    pub fn rx_delivered(&self) -> u64 {
        self.rx_delivered
    }

    /// The driver's TX counters.
    pub fn drv_tx(&self) -> TxStats {
        self.sq.stats
    }

    /// The driver's RX counters.
    pub fn drv_rx(&self) -> RxStats {
        self.rq.stats
    }

    /// The device counters of the TX port (latched register writes counted first).
    pub fn dev_tx(&mut self) -> PortCounters {
        self.env.flush_mmio();
        self.tb.counters(TX_PORT)
    }

    /// The device counters of the RX port.
    pub fn dev_rx(&mut self) -> PortCounters {
        self.env.flush_mmio();
        self.tb.counters(RX_PORT)
    }

    /// Checks that driver, host and device counters balance. Call it when the pair is
    /// quiet ([`Pair::settle`]) and no fault was injected. Returns every mismatch found.
    pub fn check_counters(&mut self) -> Result<(), String> {
        let (d, r, t, x, e) = (
            self.drv_tx(),
            self.drv_rx(),
            self.dev_tx(),
            self.dev_rx(),
            self.env.counts(),
        );
        let mut errs = Vec::new();
        let mut eq = |what: &str, a: u64, b: u64| {
            if a != b {
                errs.push(format!("{what}: {a} != {b}"));
            }
        };
        eq(
            "driver tx packets vs device tx + link drops",
            d.packets,
            t.tx_packets + t.tx_link_down_drops,
        );
        eq(
            "device tx packets vs device rx packets + rx drops",
            t.tx_packets,
            x.rx_packets + x.rx_out_of_buffer + x.rx_no_rq_drops + x.rx_too_long + x.rx_dma_faults,
        );
        eq(
            "driver doorbells vs host SQ doorbell writes",
            d.doorbells,
            e.sq_doorbells,
        );
        eq(
            "driver doorbells vs device SQ doorbells",
            d.doorbells,
            t.sq_doorbells,
        );
        eq(
            "device TX CQEs vs driver TX CQEs",
            t.tx_cqes + t.tx_err_cqes,
            d.cqes,
        );
        eq(
            "device RX CQEs vs driver RX CQ entries",
            x.rx_cqes + x.rx_err_cqes,
            r.cqes,
        );
        eq(
            "compression sessions",
            x.compress_sessions,
            r.cqe_compress_blks,
        );
        eq("compressed CQEs", x.compressed_cqes, r.cqe_compress_pkts);
        eq("MPWQE packets", d.mpwqe_pkts, t.mpwqe_pkts);
        eq(
            "driver WQEs vs device non-NOP WQEs",
            d.wqes,
            t.wqes - t.nop_wqes,
        );
        eq("NOPs", d.nop, t.nop_wqes);
        eq(
            "device RX packets vs driver RX packets",
            x.rx_packets,
            r.packets,
        );
        eq("device RX bytes vs driver RX bytes", x.rx_bytes, r.bytes);
        eq(
            "driver RX packets vs delivered",
            r.packets,
            self.rx_delivered,
        );
        eq(
            "BQL bytes sent vs completed",
            e.bql_sent_bytes,
            e.bql_done_bytes,
        );
        eq("BQL bytes vs driver bytes", e.bql_sent_bytes, d.bytes);
        eq(
            "BQL packets sent vs completed",
            e.bql_sent_pkts,
            e.bql_done_pkts,
        );
        eq("DMA maps vs unmaps", e.maps, e.unmaps);
        eq("live DMA mappings", self.env.live_mappings() as u64, 0);
        eq("TX packets in flight", self.in_flight.len() as u64, 0);
        eq(
            "TX packets handed back vs accepted",
            self.tx_done,
            e.bql_sent_pkts,
        );
        eq("device WQE errors", t.wqe_errors, 0);
        eq("driver CQE protocol errors", d.cqe_bad + r.cqe_bad, 0);
        if t.pcie.in_bytes < t.tx_floor_in_bytes {
            errs.push(format!(
                "inbound bytes {} below the floor {}",
                t.pcie.in_bytes, t.tx_floor_in_bytes
            ));
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(errs.join("; "))
        }
    }
}
