//! The host glue both port pairs share ([`crate::pair`] for mlx5, [`crate::mana_pair`] for
//! MANA): what the stack hands the driver and what it gets back, and the environment the
//! driver talks to. The two families' data paths take the same environment traits
//! (`hwif::mlx5::tx` and `hwif::mlx5::rq`), so one implementation serves both; what differs is
//! the register file behind it ([`Bar0`]).
//!
//! * [`TxFrame`] is a packet as the stack would hand it over; [`TxPkt`] (a [`TxPacket`]) is
//!   one pointer to a heap packet, like an `sk_buff *`: its linear part and fragments sit in
//!   [`HostMemory`] buffers of [`BUF_SIZE`] (at least) that are reused after completion.
//! * [`TxBook`] builds packet handles from frames, recycles their buffers, and checks that
//!   the driver hands every accepted packet back exactly once, in order.
//! * [`Env`] is the netdev side: [`TxDmaMap`] maps by identity (the bus address of the
//!   buffer) and, when built with DMA tracking, checks that every mapping is undone exactly
//!   once with the same length and kind; [`TxQueue`] keeps the stop state and BQL byte
//!   balance; [`RxBufProvider`] hands out [`BUF_SIZE`] buffers from a pool. Register writes
//!   ([`Mmio`]) are latched in program order and handed to the device ([`Bar0`]) when
//!   [`Env::flush_mmio`] runs (the pairs do before the device runs or its counters are
//!   read): register writes only latch state in the device anyway, and this keeps the device
//!   model's decoder out of the driver's instruction counts. [`Barriers`] are compiler
//!   fences. The trait methods the per-packet paths call (and [`TxPkt`]'s accessors) are
//!   `#[inline(always)]`, with the DMA-tracking checks out of line and cold, so that the
//!   bench (`datapath_bench`) counts no call into the host side: what the glue costs is
//!   attributed to it by inline chain (`scripts/bench.sh`), not mixed into call overhead.
//! * [`RxFrame`] is one packet the RQ delivered; [`Balance`] collects the mismatches of a
//!   counter check.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{compiler_fence, Ordering};

use rsnic_core::hwif::hw::{Barriers, Coherent, DmaAddr, Mmio};
use rsnic_core::hwif::mlx5::rq::{RxBufProvider, RxBuffer};
use rsnic_core::hwif::mlx5::tx::{
    DmaEntry, DmaKind, Gso, TxCsum, TxDmaMap, TxPacket, TxQueue, TxReject, TxRejectReason, VlanTag,
};

use crate::mem::{HostBuf, HostMemory};

/// Size of the TX and RX data buffers (an MTU frame plus a VLAN tag fits).
pub const BUF_SIZE: usize = 2048;
/// The SQ (and its TX CQ) live on this port.
pub const TX_PORT: usize = 0;
/// The RQ (and its RX CQ) live on this port, wired to [`TX_PORT`].
pub const RX_PORT: usize = 1;

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
    /// Segmentation offload (TSO) request.
    pub gso: Option<Gso>,
}

impl TxFrame {
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

    /// The frame as the peer of an mlx5 port receives it, offloads aside: the VLAN tag
    /// (802.1Q TPID 0x8100, or 0x88a8 for 802.1ad) inserted after the MAC addresses, then
    /// zero padding to 60 bytes (spec: the device's MAC pads short frames).
    pub fn expected_wire(&self) -> Vec<u8> {
        self.wire(|t| if t.dot1ad { 0x88a8 } else { 0x8100 })
    }

    /// The frame as the peer of a MANA port receives it, offloads aside: as
    /// [`TxFrame::expected_wire`], but the tag is always 802.1Q (the MANA TX OOB has no TPID:
    /// the device inserts 0x8100 whatever `dot1ad` says).
    pub fn expected_wire_8021q(&self) -> Vec<u8> {
        self.wire(|_| 0x8100)
    }

    fn wire(&self, tpid: impl Fn(VlanTag) -> u16) -> Vec<u8> {
        let mut v = self.bytes();
        if let Some(t) = self.vlan {
            let mut tag = tpid(t).to_be_bytes().to_vec();
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
    gso: Option<Gso>,
}

/// A packet handle owned by the SQ while in flight: one pointer, like an `sk_buff *`.
pub struct TxPkt(Box<PktData>);

impl TxPkt {
    /// The identifier [`TxBook`] gave the packet (increasing in submission order).
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
    #[inline(always)]
    fn pkt_len(&self) -> u32 {
        self.0.len
    }
    #[inline(always)]
    fn linear(&self) -> &[u8] {
        &self.0.linear
    }
    #[inline(always)]
    fn nr_frags(&self) -> usize {
        self.0.frags.len()
    }
    #[inline(always)]
    fn frag_len(&self, i: usize) -> u32 {
        self.0.frags.get(i).map_or(0, |f| f.1)
    }
    #[inline(always)]
    fn gso(&self) -> Option<Gso> {
        self.0.gso
    }
    #[inline(always)]
    fn csum(&self) -> TxCsum {
        self.0.csum
    }
    #[inline(always)]
    fn vlan(&self) -> Option<VlanTag> {
        self.0.vlan
    }
}

/// The host side of TX: packet handles built from frames (their buffers come from a pool
/// and go back to it), and the packets in flight, in order.
pub struct TxBook {
    mem: HostMemory,
    next_id: u64,
    pool: Vec<HostBuf>,
    /// Accepted packets not yet handed back, in order.
    in_flight: VecDeque<u64>,
    done: u64,
}

impl TxBook {
    /// An empty book whose buffers come from `mem`.
    pub fn new(mem: &HostMemory) -> Self {
        Self {
            mem: mem.clone(),
            next_id: 0,
            pool: Vec::new(),
            in_flight: VecDeque::new(),
            done: 0,
        }
    }

    fn buf(&mut self, bytes: &[u8]) -> HostBuf {
        let b = match self.pool.pop() {
            Some(b) if b.size() >= bytes.len() => b,
            Some(b) => {
                self.pool.push(b);
                self.mem.alloc(bytes.len())
            }
            None => self.mem.alloc(bytes.len().max(BUF_SIZE)),
        };
        b.write(0, bytes);
        b
    }

    /// Builds the packet handle for `frame` (copies its bytes into DMA-able buffers) and
    /// gives it the next id. The book expects it back from [`TxBook::release`] or
    /// [`TxBook::recycle`].
    pub fn make_pkt(&mut self, frame: &TxFrame) -> TxPkt {
        let lin = self.buf(&frame.linear);
        let frags = frame
            .frags
            .iter()
            .map(|f| (self.buf(f), f.len() as u32))
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
            gso: frame.gso,
        }))
    }

    /// Takes back a packet handle the driver returned (completed or rejected): its buffers
    /// go back to the pool.
    pub fn recycle(&mut self, pkt: TxPkt) {
        let d = *pkt.0;
        self.pool.push(d.lin);
        self.pool.extend(d.frags.into_iter().map(|f| f.0));
    }

    /// Records that the driver accepted packet `id` (for [`TxBook::release`]'s checks).
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
        self.done += 1;
        self.recycle(pkt);
    }

    /// Offers `frame` to the driver through `xmit` (`ndo_start_xmit`). `Ok(id)` if accepted
    /// (recorded as in flight); a packet handed back is recycled.
    pub fn offer(
        &mut self,
        frame: &TxFrame,
        xmit: impl FnOnce(TxPkt) -> Result<(), TxReject<TxPkt>>,
    ) -> Result<u64, TxRejectReason> {
        let pkt = self.make_pkt(frame);
        let id = pkt.id();
        match xmit(pkt) {
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

    /// Packets accepted and not yet handed back.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Packets handed back by completions ([`TxBook::release`]).
    pub fn completed(&self) -> u64 {
        self.done
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
    #[inline(always)]
    fn dma_addr(&self) -> DmaAddr {
        self.buf.dma_addr()
    }
}

/// One packet the RQ delivered, with the family's completion `C`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RxFrame<C> {
    /// The received bytes (`comp.len` of them).
    pub bytes: Vec<u8>,
    /// What the CQE said.
    pub comp: C,
}

/// An RX completion as the RQs deliver it: what [`Env::collect_rx`] needs of it.
pub trait RxLen: Copy {
    /// The packet length the completion reports.
    fn rx_len(&self) -> u32;
}

impl RxLen for rsnic_core::hwif::mlx5::rq::RxCompletion {
    fn rx_len(&self) -> u32 {
        self.len
    }
}

impl RxLen for rsnic_core::hwif::mana::rq::RxCompletion {
    fn rx_len(&self) -> u32 {
        self.len
    }
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
    /// Register writes to the RQ doorbell of the RX port (MANA; the mlx5 RQ has none, it
    /// writes its doorbell record).
    pub rq_doorbells: u64,
    /// Register writes to the CQ doorbells of both ports (MANA; the mlx5 pair does not
    /// count its CQ arms here).
    pub cq_doorbells: u64,
    /// Queue stops.
    pub stops: u64,
    /// Queue wakes.
    pub wakes: u64,
    /// BQL: bytes reported sent.
    pub bql_sent_bytes: u64,
    /// BQL: packets reported sent.
    pub bql_sent_pkts: u64,
    /// BQL: bytes reported completed.
    pub bql_done_bytes: u64,
    /// BQL: packets reported completed.
    pub bql_done_pkts: u64,
    /// RX buffers handed out.
    pub rx_allocs: u64,
    /// RX buffers the RQ gave back without delivering them.
    pub rx_recycled: u64,
}

/// A doorbell register the host counts ([`EnvCounts`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Doorbell {
    /// The TX port's SQ doorbell.
    Sq,
    /// The RX port's RQ doorbell (its values are logged: [`Env::rq_doorbell_log`]).
    Rq,
    /// A CQ doorbell.
    Cq,
}

/// The register file behind an [`Env`]: where the latched writes go, in order.
pub trait Bar0 {
    /// A 64-bit register write reaches the device.
    fn write64(&self, offset: u32, bytes: [u8; 8]);
    /// A 32-bit register write reaches the device.
    fn write32(&self, offset: u32, value: u32);
    /// A register read (after every latched write reached the device).
    fn read32(&self, offset: u32) -> u32;
    /// Which counted doorbell, if any, the register at `offset` is.
    fn doorbell(offset: u32) -> Option<Doorbell>;
}

enum MmioOp {
    W64(u32, [u8; 8]),
    W32(u32, u32),
}

/// The environment the data path talks to (netdev TX queue, DMA API, page pool, BAR0 `B`).
pub struct Env<B> {
    mem: HostMemory,
    bar: B,
    pending: RefCell<Vec<MmioOp>>,
    mmio_writes: Cell<u64>,
    sq_doorbells: Cell<u64>,
    rq_doorbells: Cell<u64>,
    cq_doorbells: Cell<u64>,
    rq_log: RefCell<Vec<u64>>,
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

#[inline(always)]
fn bump(c: &Cell<u64>) {
    c.set(c.get() + 1);
}

impl<B: Bar0> Env<B> {
    /// An environment over `mem` whose register writes go to `bar`; `track_dma` checks DMA
    /// map/unmap balance with a map of live mappings (the benchmark turns it off so that the
    /// map callbacks stay as cheap as a direct-mapped `dma_map_single`).
    pub fn new(mem: &HostMemory, bar: B, track_dma: bool) -> Self {
        Self {
            mem: mem.clone(),
            bar,
            pending: RefCell::new(Vec::with_capacity(1024)),
            mmio_writes: Cell::new(0),
            sq_doorbells: Cell::new(0),
            rq_doorbells: Cell::new(0),
            cq_doorbells: Cell::new(0),
            rq_log: RefCell::new(Vec::new()),
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
                MmioOp::W64(o, b) => self.bar.write64(o, b),
                MmioOp::W32(o, v) => self.bar.write32(o, v),
            }
        }
    }

    /// Whether register writes are latched and not yet handed to the device.
    pub fn mmio_pending(&self) -> bool {
        !self.pending.borrow().is_empty()
    }

    /// The host-side event counts.
    pub fn counts(&self) -> EnvCounts {
        EnvCounts {
            mmio_writes: self.mmio_writes.get(),
            sq_doorbells: self.sq_doorbells.get(),
            rq_doorbells: self.rq_doorbells.get(),
            cq_doorbells: self.cq_doorbells.get(),
            ..self.counts
        }
    }

    /// Every RQ doorbell value written so far (and clears the log).
    pub fn rq_doorbell_log(&self) -> Vec<u64> {
        std::mem::take(&mut self.rq_log.borrow_mut())
    }

    /// `netdev_tx_reset_queue` after a queue recovery dropped what was in flight: the BQL
    /// bytes and packets sent and not completed are forgotten (counted as completed, so
    /// that [`Env::check_host`] still balances). Returns the (packets, bytes) forgotten.
    pub fn reset_bql(&mut self) -> (u64, u64) {
        let c = &mut self.counts;
        let forgot = (
            c.bql_sent_pkts - c.bql_done_pkts,
            c.bql_sent_bytes - c.bql_done_bytes,
        );
        c.bql_done_pkts = c.bql_sent_pkts;
        c.bql_done_bytes = c.bql_sent_bytes;
        forgot
    }

    /// Live DMA mappings (0 when nothing is in flight; always 0 without DMA tracking).
    pub fn live_mappings(&self) -> usize {
        self.live.as_ref().map_or(0, HashMap::len)
    }

    #[inline(always)]
    fn map(&mut self, addr: DmaAddr, len: u32, kind: DmaKind) -> Option<DmaAddr> {
        let n = self.map_calls;
        self.map_calls += 1;
        if self.fail_map_at == Some(n) {
            return None;
        }
        self.counts.maps += 1;
        if self.live.is_some() {
            self.track_map(addr, len, kind);
        }
        Some(addr)
    }

    /// DMA tracking of a map, out of the inlined per-packet glue (the bench runs without it).
    #[cold]
    #[inline(never)]
    fn track_map(&mut self, addr: DmaAddr, len: u32, kind: DmaKind) {
        if let Some(live) = &mut self.live {
            assert!(
                live.insert(addr, (len, kind)).is_none(),
                "DMA address {addr:#x} mapped twice"
            );
        }
    }

    /// DMA tracking of an unmap, out of the inlined per-packet glue.
    #[cold]
    #[inline(never)]
    fn track_unmap(&mut self, e: DmaEntry) {
        if let Some(live) = &mut self.live {
            let got = live
                .remove(&e.addr)
                .unwrap_or_else(|| panic!("unmap of {:#x}, which is not mapped", e.addr));
            assert_eq!(got, (e.len, e.kind), "unmap does not match its map");
        }
    }

    /// Runs one RX poll: `poll` gets this environment and a sink for what the RQ delivers;
    /// each delivered packet's bytes are read, and its buffer goes back to the pool. Returns
    /// the frames and what `poll` returned.
    pub fn collect_rx<C: RxLen, R>(
        &mut self,
        poll: impl FnOnce(&mut Self, &mut dyn FnMut(RxBuf, &C)) -> R,
    ) -> (Vec<RxFrame<C>>, R) {
        let mut out = Vec::new();
        let mut bufs = Vec::new();
        let r = poll(self, &mut |b: RxBuf, c: &C| {
            let mut bytes = vec![0u8; c.rx_len() as usize];
            b.buf.read(0, &mut bytes);
            out.push(RxFrame { bytes, comp: *c });
            bufs.push(b.buf);
        });
        self.rx_pool.extend(bufs);
        (out, r)
    }

    /// Checks what every pair checks of its host side when quiet: BQL balances and matches
    /// the driver's `driver_bytes`, DMA maps balance, and every packet `tx` saw accepted came
    /// back exactly once.
    pub fn check_host(&self, b: &mut Balance, tx: &TxBook, driver_bytes: u64) {
        let e = self.counts();
        b.eq(
            "BQL bytes sent vs completed",
            e.bql_sent_bytes,
            e.bql_done_bytes,
        );
        b.eq("BQL bytes vs driver bytes", e.bql_sent_bytes, driver_bytes);
        b.eq(
            "BQL packets sent vs completed",
            e.bql_sent_pkts,
            e.bql_done_pkts,
        );
        b.eq("DMA maps vs unmaps", e.maps, e.unmaps);
        b.eq("live DMA mappings", self.live_mappings() as u64, 0);
        b.eq("TX packets in flight", tx.in_flight() as u64, 0);
        b.eq(
            "TX packets handed back vs accepted",
            tx.completed(),
            e.bql_sent_pkts,
        );
    }
}

impl<B: Bar0> Mmio for Env<B> {
    #[inline(always)]
    fn write64(&self, offset: u32, bytes: [u8; 8]) {
        bump(&self.mmio_writes);
        match B::doorbell(offset) {
            Some(Doorbell::Sq) => bump(&self.sq_doorbells),
            Some(Doorbell::Rq) => {
                bump(&self.rq_doorbells);
                self.rq_log.borrow_mut().push(u64::from_le_bytes(bytes));
            }
            Some(Doorbell::Cq) => bump(&self.cq_doorbells),
            None => {}
        }
        self.pending.borrow_mut().push(MmioOp::W64(offset, bytes));
    }

    #[inline(always)]
    fn write32(&self, offset: u32, value: u32) {
        bump(&self.mmio_writes);
        self.pending.borrow_mut().push(MmioOp::W32(offset, value));
    }

    // Not on a per-packet path: it hands every latched write to the device first.
    fn read32(&self, offset: u32) -> u32 {
        self.flush_mmio();
        self.bar.read32(offset)
    }
}

impl<B> Barriers for Env<B> {
    #[inline(always)]
    fn dma_wmb(&self) {
        compiler_fence(Ordering::SeqCst);
    }
    #[inline(always)]
    fn dma_rmb(&self) {
        compiler_fence(Ordering::SeqCst);
    }
    #[inline(always)]
    fn wmb(&self) {
        compiler_fence(Ordering::SeqCst);
    }
}

impl<B: Bar0> TxDmaMap<TxPkt> for Env<B> {
    #[inline(always)]
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

    #[inline(always)]
    fn map_frag(&mut self, pkt: &TxPkt, index: usize) -> Option<DmaAddr> {
        let (buf, len) = pkt.0.frags.get(index).expect("map of a missing fragment");
        let (addr, len) = (buf.dma_addr(), *len);
        self.map(addr, len, DmaKind::Page)
    }

    #[inline(always)]
    fn unmap(&mut self, e: DmaEntry) {
        self.counts.unmaps += 1;
        if self.live.is_some() {
            self.track_unmap(e);
        }
    }
}

impl<B> TxQueue for Env<B> {
    #[inline(always)]
    fn stop(&mut self) {
        self.stopped = true;
        self.counts.stops += 1;
    }
    #[inline(always)]
    fn wake(&mut self) {
        self.stopped = false;
        self.counts.wakes += 1;
    }
    #[inline(always)]
    fn is_stopped(&self) -> bool {
        self.stopped
    }
    #[inline(always)]
    fn sent(&mut self, bytes: u32, xmit_more: bool) -> bool {
        self.counts.bql_sent_bytes += u64::from(bytes);
        self.counts.bql_sent_pkts += 1;
        !xmit_more || self.stopped
    }
    #[inline(always)]
    fn completed(&mut self, pkts: u32, bytes: u32) {
        self.counts.bql_done_bytes += u64::from(bytes);
        self.counts.bql_done_pkts += u64::from(pkts);
        assert!(
            self.counts.bql_done_bytes <= self.counts.bql_sent_bytes,
            "BQL completed more bytes than were sent"
        );
    }
}

impl<B> RxBufProvider<RxBuf> for Env<B> {
    #[inline]
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

    #[inline]
    fn recycle(&mut self, buf: RxBuf) {
        self.counts.rx_recycled += 1;
        self.rx_pool.push(buf.buf);
    }
}

/// The mismatches a counter check found.
#[derive(Debug, Default)]
pub struct Balance(Vec<String>);

impl Balance {
    /// Records a mismatch if `a != b`.
    pub fn eq(&mut self, what: &str, a: u64, b: u64) {
        if a != b {
            self.0.push(format!("{what}: {a} != {b}"));
        }
    }

    /// Records a mismatch if the inbound PCIe bytes are below the floor of the packet data.
    pub fn floor(&mut self, in_bytes: u64, floor: u64) {
        if in_bytes < floor {
            self.0
                .push(format!("inbound bytes {in_bytes} below the floor {floor}"));
        }
    }

    /// `Ok` when nothing mismatched, else every mismatch.
    pub fn finish(self) -> Result<(), String> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(self.0.join("; "))
        }
    }
}
