//! One MANA port pair: the driver-side SQ, RQ, CQs and EQs of `dp/mana` against the
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
//! Register writes are latched in program order and handed to the device when it next runs
//! (or its counters are read), as in [`crate::pair`]. Every RQ doorbell value the driver
//! writes is also logged ([`ManaEnv::rq_doorbell_log`]).

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;
use std::sync::atomic::{compiler_fence, Ordering};

use rsnic_core::dp::hw::{Barriers, Coherent, DmaAddr, Mmio};
use rsnic_core::dp::mana::cq::{Cq, Eq};
use rsnic_core::dp::mana::rq::{Rq, RqParams, RxCompletion, RxPoll};
use rsnic_core::dp::mana::sq::{Sq, SqParams, TxPending, TxPoll};
use rsnic_core::dp::mana::stats::{RxStats, TxStats};
use rsnic_core::dp::mlx5::rq::RxBufProvider;
use rsnic_core::dp::mlx5::tx::{
    DmaEntry, DmaKind, Gso, TxCsum, TxDmaMap, TxPacket, TxQueue, TxReject, TxRejectReason, VlanTag,
};
use rsnic_core::sim::mana::{
    doorbell_offset, Device, Port, PortCounters, QueueSet, DB_CQ, DB_EQ, DB_RQ, DB_SQ, MAX_QUEUES,
    SCRATCH_LEN,
};

use crate::bus::IrqLog;
use crate::mem::{HostBuf, HostMemory};
use crate::pair::RxBuf;

/// The MANA device model with host storage.
pub type HostMana = Device<Vec<Port>, Vec<QueueSet>, Vec<u8>>;
/// The driver-side SQ with host storage.
pub type ManaSq = Sq<ManaPkt, HostBuf, Vec<TxPending<ManaPkt>>, Vec<DmaEntry>>;
/// The driver-side RQ with host storage.
pub type ManaRq = Rq<RxBuf, HostBuf, Vec<Option<RxBuf>>>;

/// Memory key of the SGEs (the model does not check it).
pub const MKEY: u32 = 0x77;
/// RX buffer size.
pub const BUF_SIZE: usize = 2048;
/// TX port.
pub const TX_PORT: usize = 0;
/// RX port.
pub const RX_PORT: usize = 1;

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
}

impl Default for ManaConfig {
    /// MANA's defaults: 256 TX entries (8 KiB), 512 RX buffers.
    fn default() -> Self {
        Self {
            sq_size: 256 * 32,
            rq_wqes: 512,
            ring_per_packet: false,
            track_dma: true,
        }
    }
}

/// A packet to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Linear part.
    pub linear: Vec<u8>,
    /// Fragments.
    pub frags: Vec<Vec<u8>>,
    /// Checksum offload.
    pub csum: TxCsum,
    /// VLAN tag to insert.
    pub vlan: Option<VlanTag>,
    /// TSO.
    pub gso: Option<Gso>,
}

impl Frame {
    /// A linear frame without offloads.
    pub fn linear(bytes: Vec<u8>) -> Self {
        Self {
            linear: bytes,
            frags: Vec::new(),
            csum: TxCsum::None,
            vlan: None,
            gso: None,
        }
    }
    /// All bytes.
    pub fn bytes(&self) -> Vec<u8> {
        let mut v = self.linear.clone();
        for f in &self.frags {
            v.extend_from_slice(f);
        }
        v
    }
    /// The frame as the peer receives it (no offloads): VLAN tag inserted, padded to 60.
    pub fn expected_wire(&self) -> Vec<u8> {
        let mut v = self.bytes();
        if let Some(t) = self.vlan {
            let at = 12.min(v.len());
            v.splice(at..at, [0x81, 0x00, (t.tci >> 8) as u8, t.tci as u8]);
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
    gso: Option<Gso>,
}

/// A packet owned by the SQ while in flight.
pub struct ManaPkt(Box<PktData>);

impl ManaPkt {
    /// Submission id.
    pub fn id(&self) -> u64 {
        self.0.id
    }
}

impl TxPacket for ManaPkt {
    fn pkt_len(&self) -> u32 {
        self.0.len
    }
    fn linear(&self) -> &[u8] {
        &self.0.linear
    }
    fn nr_frags(&self) -> usize {
        self.0.frags.len()
    }
    fn frag_len(&self, i: usize) -> u32 {
        self.0.frags.get(i).map_or(0, |f| f.1)
    }
    fn gso(&self) -> Option<Gso> {
        self.0.gso
    }
    fn csum(&self) -> TxCsum {
        self.0.csum
    }
    fn vlan(&self) -> Option<VlanTag> {
        self.0.vlan
    }
}

/// Host-side event counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ManaCounts {
    /// DMA maps.
    pub maps: u64,
    /// DMA unmaps.
    pub unmaps: u64,
    /// Register writes.
    pub mmio_writes: u64,
    /// SQ doorbell writes (TX port).
    pub sq_doorbells: u64,
    /// RQ doorbell writes (RX port).
    pub rq_doorbells: u64,
    /// CQ doorbell writes (both ports).
    pub cq_doorbells: u64,
    /// BQL bytes sent.
    pub bql_sent_bytes: u64,
    /// BQL packets sent.
    pub bql_sent_pkts: u64,
    /// BQL bytes completed.
    pub bql_done_bytes: u64,
    /// BQL packets completed.
    pub bql_done_pkts: u64,
    /// Queue stops.
    pub stops: u64,
    /// Queue wakes.
    pub wakes: u64,
}

/// The driver's environment: BAR0 (latched), DMA API, TX queue with BQL, RX buffer pool.
pub struct ManaEnv {
    mem: HostMemory,
    dev: Rc<RefCell<HostMana>>,
    pending: RefCell<Vec<(u32, [u8; 8])>>,
    counts: Cell<ManaCounts>,
    rq_log: RefCell<Vec<u64>>,
    live: Option<HashMap<DmaAddr, (u32, DmaKind)>>,
    stopped: bool,
    rx_pool: Vec<HostBuf>,
    rx_next: u64,
    /// Fail RX buffer allocations when set.
    pub rx_alloc_fail: bool,
}

impl ManaEnv {
    /// Hands the latched register writes to the device, in order.
    pub fn flush_mmio(&self) {
        let ops: Vec<_> = self.pending.borrow_mut().drain(..).collect();
        let mut d = self.dev.borrow_mut();
        for (o, b) in ops {
            d.mmio_write64(o, b);
        }
    }
    /// Host-side counts.
    pub fn counts(&self) -> ManaCounts {
        self.counts.get()
    }
    /// Every RQ doorbell value written so far (and clears the log).
    pub fn rq_doorbell_log(&self) -> Vec<u64> {
        std::mem::take(&mut self.rq_log.borrow_mut())
    }
    fn bump(&self, f: impl FnOnce(&mut ManaCounts)) {
        let mut c = self.counts.get();
        f(&mut c);
        self.counts.set(c);
    }
    fn map(&mut self, addr: DmaAddr, len: u32, kind: DmaKind) -> Option<DmaAddr> {
        self.bump(|c| c.maps += 1);
        if let Some(l) = &mut self.live {
            assert!(l.insert(addr, (len, kind)).is_none(), "mapped twice");
        }
        Some(addr)
    }
}

impl Mmio for ManaEnv {
    fn write64(&self, offset: u32, bytes: [u8; 8]) {
        self.bump(|c| c.mmio_writes += 1);
        if offset == doorbell_offset(TX_PORT, DB_SQ) {
            self.bump(|c| c.sq_doorbells += 1);
        }
        if offset == doorbell_offset(RX_PORT, DB_RQ) {
            self.bump(|c| c.rq_doorbells += 1);
            self.rq_log.borrow_mut().push(u64::from_le_bytes(bytes));
        }
        if offset == doorbell_offset(TX_PORT, DB_CQ) || offset == doorbell_offset(RX_PORT, DB_CQ) {
            self.bump(|c| c.cq_doorbells += 1);
        }
        self.pending.borrow_mut().push((offset, bytes));
    }
    fn write32(&self, offset: u32, value: u32) {
        self.flush_mmio();
        self.dev.borrow_mut().mmio_write32(offset, value);
    }
    fn read32(&self, offset: u32) -> u32 {
        self.flush_mmio();
        self.dev.borrow_mut().mmio_read32(offset)
    }
}

impl Barriers for ManaEnv {
    fn dma_wmb(&self) {
        compiler_fence(Ordering::SeqCst);
    }
    fn dma_rmb(&self) {
        compiler_fence(Ordering::SeqCst);
    }
    fn wmb(&self) {
        compiler_fence(Ordering::SeqCst);
    }
}

impl TxDmaMap<ManaPkt> for ManaEnv {
    fn map_linear(&mut self, pkt: &ManaPkt, offset: u32, len: u32) -> Option<DmaAddr> {
        assert!((offset + len) as usize <= pkt.0.linear.len());
        self.map(
            pkt.0.lin.dma_addr() + u64::from(offset),
            len,
            DmaKind::Single,
        )
    }
    fn map_frag(&mut self, pkt: &ManaPkt, index: usize) -> Option<DmaAddr> {
        let (b, l) = pkt.0.frags.get(index).expect("fragment");
        let (a, l) = (b.dma_addr(), *l);
        self.map(a, l, DmaKind::Page)
    }
    fn unmap(&mut self, e: DmaEntry) {
        self.bump(|c| c.unmaps += 1);
        if let Some(l) = &mut self.live {
            assert_eq!(l.remove(&e.addr), Some((e.len, e.kind)), "unmap mismatch");
        }
    }
}

impl TxQueue for ManaEnv {
    fn stop(&mut self) {
        self.stopped = true;
        self.bump(|c| c.stops += 1);
    }
    fn wake(&mut self) {
        self.stopped = false;
        self.bump(|c| c.wakes += 1);
    }
    fn is_stopped(&self) -> bool {
        self.stopped
    }
    fn sent(&mut self, bytes: u32, xmit_more: bool) -> bool {
        self.bump(|c| {
            c.bql_sent_bytes += u64::from(bytes);
            c.bql_sent_pkts += 1;
        });
        !xmit_more || self.stopped
    }
    fn completed(&mut self, pkts: u32, bytes: u32) {
        self.bump(|c| {
            c.bql_done_bytes += u64::from(bytes);
            c.bql_done_pkts += u64::from(pkts);
        });
        let c = self.counts.get();
        assert!(c.bql_done_bytes <= c.bql_sent_bytes, "BQL over-completed");
    }
}

impl RxBufProvider<RxBuf> for ManaEnv {
    fn alloc(&mut self) -> Option<RxBuf> {
        if self.rx_alloc_fail {
            return None;
        }
        let buf = self
            .rx_pool
            .pop()
            .unwrap_or_else(|| self.mem.alloc(BUF_SIZE));
        self.rx_next += 1;
        Some(RxBuf {
            id: self.rx_next,
            buf,
        })
    }
    fn recycle(&mut self, b: RxBuf) {
        self.rx_pool.push(b.buf);
    }
}

/// One received packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RxFrame {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// What the CQE said.
    pub comp: RxCompletion,
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
    next_id: u64,
    tx_pool: Vec<HostBuf>,
    in_flight: VecDeque<u64>,
    tx_done: u64,
    rx_delivered: u64,
}

impl ManaPair {
    /// Builds both ports' queues, fills the RQ (one doorbell) and sets RSS.
    pub fn new(cfg: ManaConfig) -> Self {
        let mem = HostMemory::new();
        let dev = Rc::new(RefCell::new(new_mana(2)));
        let mut env = ManaEnv {
            mem: mem.clone(),
            dev: dev.clone(),
            pending: RefCell::new(Vec::with_capacity(1024)),
            counts: Cell::new(ManaCounts::default()),
            rq_log: RefCell::new(Vec::new()),
            live: cfg.track_dma.then(HashMap::new),
            stopped: false,
            rx_pool: Vec::new(),
            rx_next: 0,
            rx_alloc_fail: false,
        };
        let eq_num = 64;
        let (teq_buf, req_buf) = (
            mem.alloc(eq_num as usize * 16),
            mem.alloc(eq_num as usize * 16),
        );
        let mut d = dev.borrow_mut();
        let teq = d.create_eq(TX_PORT, teq_buf.dma_addr(), eq_num, 0).unwrap();
        let req = d.create_eq(RX_PORT, req_buf.dma_addr(), eq_num, 1).unwrap();
        let tcq_n = cfg.sq_size / 32;
        let tcq_buf = mem.alloc(tcq_n as usize * 64);
        let tcq = d
            .create_cq(TX_PORT, tcq_buf.dma_addr(), tcq_n, Some(teq))
            .unwrap();
        let sq_ring = mem.alloc(cfg.sq_size as usize);
        let sqid = d
            .create_sq(TX_PORT, sq_ring.dma_addr(), cfg.sq_size, tcq)
            .unwrap();
        let rcq_n = (cfg.rq_wqes + 1).next_power_of_two();
        let rcq_buf = mem.alloc(rcq_n as usize * 64);
        let rcq = d
            .create_cq(RX_PORT, rcq_buf.dma_addr(), rcq_n, Some(req))
            .unwrap();
        let rq_size = cfg.rq_wqes * 32;
        let rq_ring = mem.alloc(rq_size as usize);
        let rqid = d
            .create_rq(RX_PORT, rq_ring.dma_addr(), rq_size, rcq)
            .unwrap();
        d.set_rss(RX_PORT, &[rqid]).unwrap();
        drop(d);
        let n = (cfg.sq_size / 32) as usize;
        let sq = Sq::new(
            SqParams {
                queue_size: cfg.sq_size,
                sq_id: sqid,
                cq_id: tcq,
                mkey: MKEY,
                db_offset: doorbell_offset(TX_PORT, DB_SQ),
                vp_offset: 0,
            },
            sq_ring,
            Cq::new(tcq_buf, tcq, tcq_n, doorbell_offset(TX_PORT, DB_CQ)).unwrap(),
            (0..n).map(|_| TxPending::default()).collect(),
            vec![DmaEntry::default(); 2 * n],
        )
        .expect("SQ");
        let mut rq = Rq::new(
            RqParams {
                queue_size: rq_size,
                rq_id: rqid,
                mkey: MKEY,
                buf_size: BUF_SIZE as u32,
                db_offset: doorbell_offset(RX_PORT, DB_RQ),
                ring_per_packet: cfg.ring_per_packet,
            },
            rq_ring,
            Cq::new(rcq_buf, rcq, rcq_n, doorbell_offset(RX_PORT, DB_CQ)).unwrap(),
            (0..cfg.rq_wqes).map(|_| None).collect(),
        )
        .expect("RQ");
        rq.fill(&mut env);
        let tx_eq = Eq::new(teq_buf, teq, eq_num, doorbell_offset(TX_PORT, DB_EQ)).unwrap();
        let rx_eq = Eq::new(req_buf, req, eq_num, doorbell_offset(RX_PORT, DB_EQ)).unwrap();
        Self {
            mem,
            dev,
            irqs: IrqLog::default(),
            env,
            sq,
            rq,
            tx_eq,
            rx_eq,
            ids: [sqid, tcq, rqid, rcq],
            cfg,
            next_id: 0,
            tx_pool: Vec::new(),
            in_flight: VecDeque::new(),
            tx_done: 0,
            rx_delivered: 0,
        }
    }

    /// The configuration.
    pub fn config(&self) -> ManaConfig {
        self.cfg
    }

    fn tx_buf(&mut self, bytes: &[u8]) -> HostBuf {
        let b = match self.tx_pool.pop() {
            Some(b) if b.size() >= bytes.len() => b,
            Some(b) => {
                self.tx_pool.push(b);
                self.mem.alloc(bytes.len())
            }
            None => self.mem.alloc(bytes.len().max(BUF_SIZE)),
        };
        b.write(0, bytes);
        b
    }

    /// Builds the packet handle of `f` with the next id.
    pub fn make_pkt(&mut self, f: &Frame) -> ManaPkt {
        let lin = self.tx_buf(&f.linear);
        let frags = f
            .frags
            .iter()
            .map(|x| (self.tx_buf(x), x.len() as u32))
            .collect();
        let id = self.next_id;
        self.next_id += 1;
        ManaPkt(Box::new(PktData {
            id,
            len: f.bytes().len() as u32,
            linear: f.linear.clone(),
            lin,
            frags,
            csum: f.csum,
            vlan: f.vlan,
            gso: f.gso,
        }))
    }

    fn recycle(&mut self, p: ManaPkt) {
        let d = *p.0;
        self.tx_pool.push(d.lin);
        self.tx_pool.extend(d.frags.into_iter().map(|f| f.0));
    }

    /// Records an accepted packet.
    pub fn accepted(&mut self, id: u64) {
        self.in_flight.push_back(id);
    }

    /// A completed packet: checks FIFO order and recycles it.
    pub fn release(&mut self, p: ManaPkt) {
        let want = self.in_flight.pop_front();
        assert_eq!(want, Some(p.id()), "TX completion out of order or twice");
        self.tx_done += 1;
        self.recycle(p);
    }

    /// Offers one frame. `Ok(id)` if accepted.
    pub fn send_one(&mut self, f: &Frame, more: bool) -> Result<u64, TxRejectReason> {
        let p = self.make_pkt(f);
        let id = p.id();
        match self.sq.xmit(p, more, &mut self.env) {
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
            self.release(p);
        }
        r
    }

    /// One RX NAPI round; returns the delivered frames.
    pub fn poll_rx(&mut self, budget: u32) -> Vec<RxFrame> {
        self.poll_rx_full(budget).0
    }

    /// One RX NAPI round; returns the frames and the poll result.
    pub fn poll_rx_full(&mut self, budget: u32) -> (Vec<RxFrame>, RxPoll) {
        let mut out = Vec::new();
        let mut bufs = Vec::new();
        let r = self.rq.napi_poll(budget, &mut self.env, |b, c| {
            let mut bytes = vec![0u8; c.len as usize];
            b.buf.read(0, &mut bytes);
            out.push(RxFrame { bytes, comp: *c });
            bufs.push(b.buf);
        });
        self.env.rx_pool.extend(bufs);
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
        self.in_flight.len()
    }
    /// Driver TX counters.
    pub fn drv_tx(&self) -> TxStats {
        self.sq.stats
    }
    /// Driver RX counters.
    pub fn drv_rx(&self) -> RxStats {
        self.rq.stats
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
    /// faults injected).
    pub fn check_counters(&mut self) -> Result<(), String> {
        let (d, r, t, x, e) = (
            self.drv_tx(),
            self.drv_rx(),
            self.dev(TX_PORT),
            self.dev(RX_PORT),
            self.env.counts(),
        );
        let mut errs = Vec::new();
        let mut eq = |w: &str, a: u64, b: u64| {
            if a != b {
                errs.push(format!("{w}: {a} != {b}"));
            }
        };
        eq("driver WQEs vs device WQEs", d.wqes, t.wqes);
        eq("device TX CQEs vs driver CQEs", t.tx_cqes, d.cqes);
        eq(
            "device TX packets vs RX + drops",
            t.tx_packets(),
            x.rx_packets() + x.hc_rx_discards_no_wqe + x.rx_no_rq_drops + x.rx_truncated,
        );
        eq("device RX CQEs vs driver RX CQEs", x.rx_cqes, r.cqes);
        eq("device RX packets vs driver", x.rx_packets(), r.packets);
        eq("device RX bytes vs driver", x.hc_rx_bytes, r.bytes);
        eq("driver RX vs delivered", r.packets, self.rx_delivered);
        eq("SQ doorbells: driver vs host", d.doorbells, e.sq_doorbells);
        eq(
            "SQ doorbells: driver vs device",
            d.doorbells,
            t.sq_doorbells,
        );
        eq("RQ doorbells: driver vs host", r.doorbells, e.rq_doorbells);
        eq(
            "RQ doorbells: driver vs device",
            r.doorbells,
            x.rq_doorbells,
        );
        eq("RQ doorbells with wqe_cnt != 0", x.rq_db_wqe_cnt_errors, 0);
        eq(
            "bad doorbells",
            t.bad_doorbells + x.bad_doorbells + t.db_invalid + x.db_invalid,
            0,
        );
        eq("BQL bytes", e.bql_sent_bytes, e.bql_done_bytes);
        eq("BQL packets", e.bql_sent_pkts, e.bql_done_pkts);
        eq("BQL vs driver bytes", e.bql_sent_bytes, d.bytes);
        eq("DMA maps vs unmaps", e.maps, e.unmaps);
        eq("TX in flight", self.in_flight.len() as u64, 0);
        eq("TX handed back vs accepted", self.tx_done, e.bql_sent_pkts);
        eq("device TX WQE errors", t.tx_wqe_errors, 0);
        eq("driver protocol errors", d.cqe_bad + r.cqe_bad, 0);
        eq(
            "RX WQEs posted vs outstanding + completed",
            r.wqes,
            u64::from(self.rq.posted()) + r.cqes,
        );
        if t.pcie.in_bytes < t.tx_floor_in_bytes {
            errs.push("inbound bytes below the floor".into());
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(errs.join("; "))
        }
    }
}
