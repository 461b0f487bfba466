//! Shared fixtures of the hwif_* tests: a logging coherent buffer, a fake register sink and
//! barrier log, an identity DMA mapper that checks map/unmap balance, a TX queue with a
//! trivial BQL, an RX buffer pool, and packets over HostMemory.
#![allow(dead_code)]

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use rsnic_core::hwif::hw::{Barriers, Coherent, DmaAddr, Mmio};
use rsnic_core::hwif::mlx5::cq::Cq;
use rsnic_core::hwif::mlx5::cqe::{Cqe64, CQE_REQ};
use rsnic_core::hwif::mlx5::rq::{RqParams, RxBufProvider, RxBuffer};
use rsnic_core::hwif::mlx5::sq::{SqParams, BF_OFFSET};
use rsnic_core::hwif::mlx5::tx::{
    DmaEntry, DmaKind, Gso, InlineMode, TxCsum, TxDmaMap, TxPacket, TxQueue, TxReject, VlanTag,
};
#[allow(unused_imports)]
pub use rsnic_testbed::fixtures::{tcp4_frame, udp4_frame, write_cqe};
use rsnic_testbed::mem::{HostBuf, HostMemory};
use rsnic_testbed::pair::{new_vec_rq, new_vec_sq, VecRq, VecSq};

/// One observable event, in program order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ev {
    /// A write to a logged buffer (buffer tag, offset, bytes).
    Write(&'static str, usize, Vec<u8>),
    DmaWmb,
    DmaRmb,
    Wmb,
    Mmio64(u32, [u8; 8]),
}

pub type Log = Rc<RefCell<Vec<Ev>>>;

/// A HostBuf that optionally logs writes.
#[derive(Clone)]
pub struct LBuf {
    pub buf: HostBuf,
    tag: &'static str,
    log: Option<Log>,
}

impl LBuf {
    pub fn new(mem: &HostMemory, size: usize, tag: &'static str, log: Option<Log>) -> Self {
        Self {
            buf: mem.alloc(size),
            tag,
            log,
        }
    }
    pub fn bytes(&self, off: usize, len: usize) -> Vec<u8> {
        let mut v = vec![0u8; len];
        self.buf.read(off, &mut v);
        v
    }
}

impl Coherent for LBuf {
    fn dma_addr(&self) -> DmaAddr {
        self.buf.dma_addr()
    }
    fn size(&self) -> usize {
        self.buf.size()
    }
    fn write(&self, off: usize, src: &[u8]) {
        if let Some(l) = &self.log {
            l.borrow_mut().push(Ev::Write(self.tag, off, src.to_vec()));
        }
        self.buf.write(off, src)
    }
    fn read(&self, off: usize, dst: &mut [u8]) {
        self.buf.read(off, dst)
    }
    fn zero(&self, off: usize, len: usize) {
        if let Some(l) = &self.log {
            l.borrow_mut().push(Ev::Write(self.tag, off, vec![0; len]));
        }
        self.buf.zero(off, len)
    }
}

/// A transmitted packet: linear part and frags in host DMA memory.
#[derive(Debug)]
pub struct Pkt {
    pub id: u32,
    pub linear: Vec<u8>,
    pub frags: Vec<Vec<u8>>,
    pub lin_addr: DmaAddr,
    pub frag_addr: Vec<DmaAddr>,
    pub gso: Option<Gso>,
    pub csum: TxCsum,
    pub vlan: Option<VlanTag>,
}

impl Pkt {
    pub fn new(mem: &HostMemory, id: u32, linear: Vec<u8>, frags: Vec<Vec<u8>>) -> Self {
        let lin_addr = mem.alloc_from(&linear).dma_addr();
        let frag_addr = frags.iter().map(|f| mem.alloc_from(f).dma_addr()).collect();
        Self {
            id,
            linear,
            frags,
            lin_addr,
            frag_addr,
            gso: None,
            csum: TxCsum::None,
            vlan: None,
        }
    }
    pub fn total(&self) -> u32 {
        (self.linear.len() + self.frags.iter().map(Vec::len).sum::<usize>()) as u32
    }
}

impl TxPacket for Pkt {
    fn pkt_len(&self) -> u32 {
        self.total()
    }
    fn linear(&self) -> &[u8] {
        &self.linear
    }
    fn nr_frags(&self) -> usize {
        self.frags.len()
    }
    fn frag_len(&self, i: usize) -> u32 {
        self.frags.get(i).map_or(0, |f| f.len() as u32)
    }
    fn gso(&self) -> Option<Gso> {
        self.gso
    }
    fn csum(&self) -> TxCsum {
        self.csum
    }
    fn vlan(&self) -> Option<VlanTag> {
        self.vlan
    }
}

/// An RX buffer: a HostBuf region.
pub struct RxBuf {
    pub id: u32,
    pub addr: DmaAddr,
    pub buf: HostBuf,
}

impl RxBuffer for RxBuf {
    fn dma_addr(&self) -> DmaAddr {
        self.addr
    }
}

/// The whole environment the data path talks to.
pub struct Env {
    pub mem: HostMemory,
    pub log: Log,
    /// Live mappings: address -> (len, kind).
    pub maps: HashMap<DmaAddr, (u32, DmaKind)>,
    pub map_calls: u32,
    pub unmap_calls: u32,
    /// Fail the map call with this index (0-based count of map calls).
    pub fail_map_at: Option<u32>,
    pub stopped: bool,
    pub stops: u32,
    pub wakes: u32,
    pub bql_inflight: i64,
    pub bql_completed_pkts: u32,
    // RX
    pub rx_size: usize,
    pub rx_next_id: u32,
    pub rx_fail_after: Option<u32>,
    pub rx_allocs: u32,
    pub rx_recycled: Vec<u32>,
    /// Forward register writes to a simulated device (end-to-end tests).
    pub fwd: Option<rsnic_testbed::bus::RegisterBus>,
}

impl Env {
    pub fn new(mem: &HostMemory) -> Self {
        Self {
            mem: mem.clone(),
            log: Rc::new(RefCell::new(Vec::new())),
            maps: HashMap::new(),
            map_calls: 0,
            unmap_calls: 0,
            fail_map_at: None,
            stopped: false,
            stops: 0,
            wakes: 0,
            bql_inflight: 0,
            bql_completed_pkts: 0,
            rx_size: 2048,
            rx_next_id: 0,
            rx_fail_after: None,
            rx_allocs: 0,
            rx_recycled: Vec::new(),
            fwd: None,
        }
    }
    /// The SQ doorbell-record writes in the log.
    pub fn sq_dbr_writes(&self) -> Vec<Ev> {
        self.log
            .borrow()
            .iter()
            .filter(|e| matches!(e, Ev::Write("sq_dbr", ..)))
            .cloned()
            .collect()
    }
    pub fn mmio_writes(&self) -> Vec<(u32, [u8; 8])> {
        self.log
            .borrow()
            .iter()
            .filter_map(|e| match e {
                Ev::Mmio64(o, b) => Some((*o, *b)),
                _ => None,
            })
            .collect()
    }
    fn map(&mut self, addr: DmaAddr, len: u32, kind: DmaKind) -> Option<DmaAddr> {
        let n = self.map_calls;
        self.map_calls += 1;
        if self.fail_map_at == Some(n) {
            return None;
        }
        assert!(self.maps.insert(addr, (len, kind)).is_none(), "double map");
        Some(addr)
    }
}

impl Mmio for Env {
    fn write64(&self, offset: u32, bytes: [u8; 8]) {
        self.log.borrow_mut().push(Ev::Mmio64(offset, bytes));
        if let Some(bus) = &self.fwd {
            bus.write64(offset, bytes);
        }
    }
    fn write32(&self, _offset: u32, _value: u32) {
        panic!("mlx5 data path never writes 32-bit registers");
    }
    fn read32(&self, _offset: u32) -> u32 {
        panic!("mlx5 data path never reads registers");
    }
}

impl Barriers for Env {
    fn dma_wmb(&self) {
        self.log.borrow_mut().push(Ev::DmaWmb);
    }
    fn dma_rmb(&self) {
        self.log.borrow_mut().push(Ev::DmaRmb);
    }
    fn wmb(&self) {
        self.log.borrow_mut().push(Ev::Wmb);
    }
}

impl TxDmaMap<Pkt> for Env {
    fn map_linear(&mut self, pkt: &Pkt, offset: u32, len: u32) -> Option<DmaAddr> {
        assert!(offset + len <= pkt.linear.len() as u32);
        self.map(pkt.lin_addr + u64::from(offset), len, DmaKind::Single)
    }
    fn map_frag(&mut self, pkt: &Pkt, index: usize) -> Option<DmaAddr> {
        let len = pkt.frags[index].len() as u32;
        self.map(pkt.frag_addr[index], len, DmaKind::Page)
    }
    fn unmap(&mut self, e: DmaEntry) {
        self.unmap_calls += 1;
        let got = self
            .maps
            .remove(&e.addr)
            .expect("unmap of an address not mapped");
        assert_eq!(got, (e.len, e.kind), "unmap does not match its map");
    }
}

impl TxQueue for Env {
    fn stop(&mut self) {
        self.stopped = true;
        self.stops += 1;
    }
    fn wake(&mut self) {
        self.stopped = false;
        self.wakes += 1;
    }
    fn is_stopped(&self) -> bool {
        self.stopped
    }
    fn sent(&mut self, bytes: u32, xmit_more: bool) -> bool {
        self.bql_inflight += i64::from(bytes);
        !xmit_more || self.stopped
    }
    fn completed(&mut self, pkts: u32, bytes: u32) {
        self.bql_inflight -= i64::from(bytes);
        self.bql_completed_pkts += pkts;
        assert!(self.bql_inflight >= 0, "BQL completed more than sent");
    }
}

impl RxBufProvider<RxBuf> for Env {
    fn alloc(&mut self) -> Option<RxBuf> {
        if let Some(n) = self.rx_fail_after {
            if self.rx_allocs >= n {
                return None;
            }
        }
        self.rx_allocs += 1;
        let buf = self.mem.alloc(self.rx_size);
        let id = self.rx_next_id;
        self.rx_next_id += 1;
        Some(RxBuf {
            id,
            addr: buf.dma_addr(),
            buf,
        })
    }
    fn recycle(&mut self, buf: RxBuf) {
        self.rx_recycled.push(buf.id);
    }
}

pub type TestSq = VecSq<Pkt, LBuf>;
pub type TestRq = VecRq<RxBuf, LBuf>;

pub const SQN: u32 = 0x0000_0abc;
pub const LKEY: u32 = 0x0000_1234;
pub const UAR: u32 = 0x4000;

pub fn sq_params(log_sz: u8) -> SqParams {
    SqParams {
        log_sz,
        sqn: SQN,
        lkey: LKEY,
        db_offset: UAR + BF_OFFSET,
        dbr_off: 0,
        min_inline: InlineMode::None,
        vlan_need_l2_inline: false,
        max_sq_wqebbs: 16,
        mpwqe: false,
        mpwqe_inline: false,
    }
}

/// [`sq_params`] with Enhanced MPWQE on, inline data in sessions if `inline`.
pub fn mpwqe_params(log_sz: u8, inline: bool) -> SqParams {
    let mut p = sq_params(log_sz);
    p.mpwqe = true;
    p.mpwqe_inline = inline;
    p
}

/// Posts `n` linear TCP frames of `len` bytes (ids 0 to n - 1), each with `xmit_more` as
/// `more(id)` says; every one must be accepted.
pub fn xmit_tcp(sq: &mut TestSq, env: &mut Env, n: u32, len: usize, more: impl Fn(u32) -> bool) {
    for i in 0..n {
        xmit_one(sq, env, i, len, more(i));
    }
}

/// Posts linear TCP frame `id` of `len` bytes with `xmit_more` as given; it must be
/// accepted.
pub fn xmit_one(sq: &mut TestSq, env: &mut Env, id: u32, len: usize, more: bool) {
    let pkt = Pkt::new(&env.mem, id, tcp4_frame(len, 0), vec![]);
    sq.xmit(pkt, more, env).unwrap();
}

/// Offers linear TCP frame `id` of `len` bytes as the last of a burst; it must be refused,
/// and the refusal (the packet handed back with the reason) is returned.
pub fn reject_one(sq: &mut TestSq, env: &mut Env, id: u32, len: usize) -> TxReject<Pkt> {
    let pkt = Pkt::new(&env.mem, id, tcp4_frame(len, 0), vec![]);
    sq.xmit(pkt, false, env).unwrap_err()
}

/// An SQ with its ring, DBR and CQ logged into `env.log`.
pub fn make_sq(env: &Env, p: SqParams) -> TestSq {
    let n = 1usize << p.log_sz;
    let mem = &env.mem;
    let wq = LBuf::new(mem, n * 64, "wq", Some(env.log.clone()));
    let dbr = LBuf::new(mem, 64, "sq_dbr", Some(env.log.clone()));
    let cqbuf = LBuf::new(mem, n * 64, "cq", None);
    let cqdbr = LBuf::new(mem, 8, "cq_dbr", Some(env.log.clone()));
    let cq = Cq::new(cqbuf, cqdbr, 0, p.log_sz, 0x77, UAR).unwrap();
    new_vec_sq(p, wq, dbr, cq).unwrap()
}

/// A fresh host memory, an [`Env`] over it and an SQ of parameters `p` made by [`make_sq`]:
/// the set-up of most SQ tests.
pub fn sq_env(p: SqParams) -> (HostMemory, Env, TestSq) {
    let mem = HostMemory::new();
    let env = Env::new(&mem);
    let sq = make_sq(&env, p);
    (mem, env, sq)
}

pub fn make_rq(env: &Env, log_sz: u8, buf_size: u32, wqe_bulk: u16) -> TestRq {
    make_rq_segs(env, log_sz, buf_size, 1, wqe_bulk)
}

/// An RQ of `segs` buffers of `buf_size` bytes per WQE (RX scatter).
pub fn make_rq_segs(env: &Env, log_sz: u8, buf_size: u32, segs: u8, wqe_bulk: u16) -> TestRq {
    let n = 1usize << log_sz;
    let mem = &env.mem;
    let stride = 16 * usize::from(segs).next_power_of_two();
    let wq = LBuf::new(mem, n * stride, "rq", None);
    let dbr = LBuf::new(mem, 8, "rq_dbr", Some(env.log.clone()));
    let cqbuf = LBuf::new(mem, n * 64, "rcq", None);
    let cqdbr = LBuf::new(mem, 8, "rcq_dbr", None);
    let cq = Cq::new(cqbuf, cqdbr, 0, log_sz, 0x99, UAR).unwrap();
    new_vec_rq(
        RqParams {
            log_sz,
            buf_size,
            segs,
            lkey: LKEY,
            dbr_off: 0,
            wqe_bulk,
        },
        wq,
        dbr,
        cq,
    )
    .unwrap()
}

/// A data segment (spec A.3): byte count, the driver's lkey, address.
pub fn dseg(len: u32, addr: u64) -> Vec<u8> {
    let mut v = len.to_be_bytes().to_vec();
    v.extend_from_slice(&LKEY.to_be_bytes());
    v.extend_from_slice(&addr.to_be_bytes());
    v
}

/// Writes CQE `c` at counter `ctr` of `cq` with the owner bit of that pass.
pub fn put_cqe(cq: &Cq<LBuf>, ctr: u32, mut c: Cqe64) {
    c.0[63] = (c.0[63] & !1) | cq.parity(ctr);
    write_cqe(cq.buffer(), (ctr & (cq.size() - 1)) as usize, &c);
}

/// Completes everything posted so far with one CQE for the newest WQE (`last_wqe`); returns
/// the ids of the packets handed back.
pub fn complete_all(sq: &mut TestSq, env: &mut Env, last_wqe: u16) -> Vec<u32> {
    let cc = sq.cq().cc();
    put_cqe(sq.cq(), cc, tx_cqe(CQE_REQ, last_wqe, 0));
    let mut ids = Vec::new();
    sq.poll_cq(env, |p| ids.push(p.id));
    ids
}

/// A TX completion CQE for `wqe_counter`, with the owner bit of pass `pass`.
pub fn tx_cqe(opcode: u8, wqe_counter: u16, owner: u8) -> Cqe64 {
    let mut c = Cqe64::default();
    c.set_wqe_counter(wqe_counter);
    c.set_sop_drop_qpn(SQN);
    c.set_op_own(opcode, 0, owner);
    c
}
