// SPDX-License-Identifier: GPL-2.0

//! The simulated MANA device (`sim::mana`) against a hostile driver.
//!
//! Three ports: port 0 has two SQs sharing a TX CQ with an EQ; port 1 (wired to port 0) has
//! two RQs behind RSS with an RX CQ and an EQ, and an SQ of its own (traffic back to port 0,
//! which has no RSS table); port 2 has an SQ and no peer. The input then runs a program of
//! what a driver can do to the device: write TX WQEs into the SQ rings (plausible ones with
//! short or long OOBs, checksum, TSO and VLAN requests, and SGEs that point into packet
//! buffers, across their ends, into guard pages, into unmapped or freed memory, or anywhere;
//! wrong `num_sge`, OOB sizes, `pkt_fmt`, `vcq_num`, suppressed CQEs; raw bytes), write RX
//! WQEs (1..=15 SGEs or malformed, into RX buffers or anywhere a device may write), ring
//! doorbells (SQ/RQ `tail_ptr` at the producer, beyond it, misaligned or anywhere; RQ
//! doorbells with a non-zero `wqe_cnt`; ids of other queues and other ports' queues; other
//! ports' pages), ring CQs and EQs with any tail and arm bit, write any register and read
//! any, change packet bytes, unmap buffers, toggle links, RSS, flow control and loopback,
//! and let the device run (to the end or with a budget).
//!
//! Invariants checked:
//! * nothing panics;
//! * a DMA access that succeeds lies inside a live (mapped) region, and the device writes
//!   only where a device may write (CQ and EQ buffers, RX buffers; never rings, packets);
//! * every register write is classified as this harness's own reading of spec D.3 predicts:
//!   the per-port doorbell counters (per kind, accepted, `bad_doorbells`,
//!   `rq_db_wqe_cnt_errors` = exactly the RQ doorbells with a non-zero `wqe_cnt` naming a
//!   queue of the page's port, `db_invalid`, CQ arms) and `bad_mmio` match exactly; register
//!   reads return the doorbell page base and size and the SMC offset, all ones elsewhere
//!   (the SMC window itself, the control path's, is left to the `mana_hwc` tests);
//! * every executed TX WQE gets exactly one TX CQE, in ring order, naming its SQ and its
//!   WQE's offset, with the owner bits of its slot (the CQEs of one run are checked entry by
//!   entry against a walk of the ring); a structural error is the SQ's last CQE
//!   (HDR_PROCESSING_ERROR) and stops it; an SQ not in error, not paused, executes
//!   everything its last accepted doorbell announced; an SQ in error executes nothing;
//! * an RQ never consumes past its last accepted doorbell (so an RQ doorbell with a non-zero
//!   `wqe_cnt` or an invalid tail announces nothing); every consumed RX WQE gets exactly one
//!   RX CQE (RX_OKAY or RX_TRUNCATED) naming the RQ and the WQE's offset;
//! * counters balance: WQEs = TX CQEs = CQEs in the TX CQs, errors = error CQEs = their
//!   three kinds, frames a port received, truncated or dropped (counted by reason) = frames
//!   it looped back + frames its peer put on the wire (a port without a peer puts none),
//!   RX CQEs = received + truncated = CQEs in the RX CQ, interrupts
//!   counted = raised, a run executes at most its budget.

use rsnic_core::hwif::hw::Coherent;
use rsnic_core::sim::mana::{
    doorbell_offset, PortCounters, DB_CQ, DB_EQ, DB_PAGE_BASE, DB_PAGE_SIZE, DB_RQ, DB_SQ, SMC_BASE,
};
use rsnic_testbed::mana_pair::{new_mana, HostMana};
use rsnic_testbed::mem::HostBuf;

use crate::device::{Checked, Irqs, Targets};
use crate::{le32, Input};

const PORTS: usize = 3;
const RX_BUFS: usize = 8;
const RX_BUF_SIZE: usize = 2048;
const TX_OKAY: u32 = 32;
const HDR_PROCESSING_ERROR: u32 = 37;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Sq,
    Rq,
    Cq,
    Eq,
}

/// A work queue (SQ or RQ) as the hostile driver sees it.
struct Wq {
    id: u32,
    port: usize,
    ring: HostBuf,
    size: u32,
    /// The driver's producer offset in bytes (free-running).
    head: u32,
    /// `tail_ptr` of the last doorbell the device accepted (what it may consume up to).
    tail: u32,
    /// Index of its CQ in `Harness::cqs`.
    cq: usize,
}

struct CqH {
    id: u32,
    port: usize,
    buf: HostBuf,
    num: u32,
    /// Whether SQs (true) or RQs complete here.
    tx: bool,
}

struct EqH {
    id: u32,
    port: usize,
    num: u32,
}

/// Doorbell counters a port must show.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct DbCounts {
    doorbells: u64,
    sq: u64,
    rq: u64,
    cq: u64,
    cq_arms: u64,
    eq: u64,
    bad: u64,
    wqe_cnt_errors: u64,
    invalid: u64,
}

impl DbCounts {
    fn of(c: &PortCounters) -> Self {
        Self {
            doorbells: c.doorbells,
            sq: c.sq_doorbells,
            rq: c.rq_doorbells,
            cq: c.cq_doorbells,
            cq_arms: c.cq_arms,
            eq: c.eq_doorbells,
            bad: c.bad_doorbells,
            wqe_cnt_errors: c.rq_db_wqe_cnt_errors,
            invalid: c.db_invalid,
        }
    }
}

/// What a CQE said.
struct Seen {
    wq: u32,
    typ: u32,
    vendor: u32,
    /// The WQE's byte offset in its ring.
    off: u32,
}

struct Harness {
    dev: HostMana,
    mem: Checked,
    irqs: Irqs,
    sqs: Vec<Wq>,
    rqs: Vec<Wq>,
    cqs: Vec<CqH>,
    eqs: Vec<EqH>,
    /// Packet and receive buffers, what the hostile driver points the device at.
    t: Targets,
    expect: [DbCounts; PORTS],
    bad_mmio: u64,
    executed: u64,
    pause: [bool; PORTS],
    rss: usize,
}

/// Writes `bytes` into a ring at byte offset `off`, wrapping at the end.
fn ring_write(ring: &HostBuf, size: u32, off: u32, bytes: &[u8]) {
    for (i, chunk) in bytes.chunks(16).enumerate() {
        let at = (off.wrapping_add(16 * i as u32) & (size - 1)) as usize;
        ring.write(at, chunk);
    }
}

/// Size in bytes of a WQE with `oob` bytes of OOB and `nsge` SGEs: whole 32-byte BUs.
fn wqe_size(oob: u32, nsge: u32) -> u32 {
    (8 + oob + 16 * nsge).div_ceil(32) * 32
}

impl Wq {
    /// Writes `bytes` at the producer, then moves the producer on by `advance` bytes.
    fn push(&mut self, bytes: &[u8], advance: u32) {
        ring_write(&self.ring, self.size, self.head, bytes);
        self.head = self.head.wrapping_add(advance);
    }

    /// Writes the WQE built in `w`, whose header says `oob` and `nsge`, at the producer: as
    /// much of its size as `w` holds, the producer moved on by the size clamped to
    /// `32..=max` (a hostile driver's header need not match what it wrote).
    fn push_wqe(&mut self, w: &[u8], oob: u32, nsge: u32, max: u32) {
        let size = wqe_size(oob, nsge);
        self.push(&w[..(size as usize).min(w.len())], size.clamp(32, max));
    }
}

/// Size in bytes of the WQE whose header is at `off`, and whether the device accepts its
/// structure (for an SQ: `num_sge` 1..=30, OOB 8 or 24, ≤ 512 bytes; RQ: 1..=15, OOB 0 or
/// 8, ≤ 256 bytes). Spec D.2, read independently of the model.
fn wqe_at(ring: &HostBuf, size: u32, off: u32, tx: bool) -> (u32, bool) {
    let mut h = [0u8; 8];
    ring.read((off & (size - 1)) as usize, &mut h);
    let dw1 = le32(&h, 4);
    let nsge = dw1 & 0xff;
    let oob = ((dw1 >> 8) & 7) * 4;
    let sz = wqe_size(oob, nsge);
    let ok = if tx {
        (1..=30).contains(&nsge) && (oob == 8 || oob == 24) && sz <= 512
    } else {
        (1..=15).contains(&nsge) && (oob == 0 || oob == 8) && sz <= 256
    };
    (sz, ok)
}

impl Harness {
    fn apply_rss(&mut self) {
        let t: Vec<u32> = match self.rss {
            0 => vec![self.rqs[0].id],
            1 => vec![self.rqs[0].id, self.rqs[1].id],
            _ => Vec::new(),
        };
        self.dev.set_rss(1, &t).expect("rss");
    }

    /// Builds a TX WQE at an SQ's producer offset (mostly plausible).
    fn structured_wqe(&mut self, inp: &mut Input<'_>) {
        let sel = inp.u8();
        let flags = inp.u8();
        let q = usize::from(sel & 3);
        let long = sel & 4 != 0;
        let mut oob = if long { 24u32 } else { 8 };
        if flags & 0x40 != 0 {
            oob = u32::from(inp.u8() & 7) * 4;
        }
        let tso = sel & 8 != 0;
        // SGEs: (address, size).
        let mut sges: Vec<(u64, u32)> = Vec::new();
        let k = usize::from(sel >> 4) % 4;
        let pkt = (self.t.pkts[k].dma_addr(), self.t.pkts[k].size() as u32);
        if tso && pkt.1 > 54 {
            sges.push((pkt.0, 54));
            sges.push((pkt.0 + 54, pkt.1 - 54));
        } else {
            sges.push(pkt);
        }
        let extra = match inp.u8() % 8 {
            0..=4 => 0,
            5 | 6 => 1 + inp.u8() % 4,
            _ => inp.u8() % 32,
        };
        for _ in 0..extra {
            let len = self.t.seg_len(inp, 8);
            let addr = self.t.addr(inp);
            sges.push((addr, len));
        }
        if flags & 0x01 != 0 {
            // Replace the first SGE's address or size.
            if inp.bool() {
                sges[0].0 = self.t.addr(inp);
            } else {
                sges[0].1 = self.t.seg_len(inp, 8);
            }
        }
        let nsge = if flags & 0x20 != 0 {
            u32::from(inp.u8())
        } else {
            sges.len() as u32
        };
        let cdu = if tso {
            match inp.u8() % 4 {
                0 => 0,
                1 => u32::from(inp.u16()) & 0x3fff,
                _ => 1 + u32::from(inp.u16() % 9000),
            }
        } else {
            0
        };
        let in_sgl = tso || flags & 0x02 != 0;
        let last_vbytes = if tso { sges[0].1 & 0xff } else { 0 };
        let dw0 = last_vbytes << 24;
        let dw1 = (nsge & 0xff) | ((oob / 4) << 8) | (u32::from(in_sgl) << 11) | (cdu << 16);
        // OOB.
        let sq = &self.sqs[q];
        let cq_id = if flags & 0x08 != 0 {
            self.cqs[(usize::from(inp.u8()) + sq.cq) % self.cqs.len()].id
        } else {
            self.cqs[sq.cq].id
        };
        let pkt_fmt = if flags & 0x10 != 0 {
            u32::from(inp.u8() & 3)
        } else {
            u32::from(oob == 24)
        };
        let offl = if flags & 0x04 != 0 {
            u32::from(inp.u8()) & 0x7c
        } else if tso {
            4 | 16 | 32
        } else {
            0
        };
        let suppress = u32::from(flags & 0x80 != 0 && inp.u8() & 3 == 0) << 7;
        let o0 = pkt_fmt | offl | suppress | (cq_id << 8);
        let trans_off = if inp.u8() & 7 == 0 {
            u32::from(inp.u16()) & 0x3ff
        } else {
            34
        };
        let o1 = trans_off | (((sq.id >> 10) & 0x3fff) << 10);
        let mut w = vec![0u8; 8 + 28 + 16 * 32];
        w[0..4].copy_from_slice(&dw0.to_le_bytes());
        w[4..8].copy_from_slice(&dw1.to_le_bytes());
        w[8..12].copy_from_slice(&o0.to_le_bytes());
        w[12..16].copy_from_slice(&o1.to_le_bytes());
        if oob == 24 && inp.bool() {
            let tci = inp.u16();
            let o2 = 8
                | (u32::from(tci >> 13) << 16)
                | (u32::from((tci >> 12) & 1) << 19)
                | (u32::from(tci & 0xfff) << 20);
            w[16..20].copy_from_slice(&o2.to_le_bytes());
        }
        let sgl = 8 + oob as usize;
        for (i, (a, l)) in sges.iter().enumerate().take(32) {
            let at = sgl + 16 * i;
            w[at..at + 8].copy_from_slice(&a.to_le_bytes());
            w[at + 8..at + 12].copy_from_slice(&0x77u32.to_le_bytes());
            w[at + 12..at + 16].copy_from_slice(&l.to_le_bytes());
        }
        self.sqs[q].push_wqe(&w, oob, nsge, 512);
    }

    /// A plain 1-SGE RX WQE for RX buffer `k` at RQ `q`'s producer.
    fn rx_wqe_simple(&mut self, q: usize, k: usize) {
        let mut w = [0u8; 32];
        w[4..8].copy_from_slice(&(1u32 | (2 << 8)).to_le_bytes());
        let b = &self.t.rx_bufs[k % RX_BUFS];
        w[16..24].copy_from_slice(&b.dma_addr().to_le_bytes());
        w[24..28].copy_from_slice(&0x77u32.to_le_bytes());
        w[28..32].copy_from_slice(&(RX_BUF_SIZE as u32).to_le_bytes());
        self.rqs[q].push(&w, 32);
    }

    /// An RX WQE, plausible or not, at an RQ's producer.
    fn rx_wqe(&mut self, inp: &mut Input<'_>) {
        let sel = inp.u8();
        let q = usize::from(sel & 1);
        if sel & 0x06 == 0 {
            self.rx_wqe_simple(q, usize::from(sel >> 3));
            return;
        }
        let nsge = match (sel >> 1) & 3 {
            1 => 1 + u32::from(inp.u8() % 15),
            2 => 1,
            _ => u32::from(inp.u8()),
        };
        let oob = match (sel >> 3) & 3 {
            0 | 1 => 8,
            2 => 0,
            _ => u32::from(inp.u8() & 7) * 4,
        };
        let mut w = vec![0u8; 8 + 28 + 16 * 16];
        w[4..8].copy_from_slice(&((nsge & 0xff) | ((oob / 4) << 8)).to_le_bytes());
        let sgl = 8 + oob as usize;
        for i in 0..(nsge as usize).min(16) {
            let s = inp.u8();
            let addr = match s & 3 {
                0 | 1 => {
                    self.t.rx_bufs[usize::from(s >> 2) % RX_BUFS].dma_addr()
                        + u64::from(inp.u16() % 2048) * u64::from(s >> 7)
                }
                _ => {
                    let a = self.t.addr(inp);
                    if self.mem.writable_or_unmapped(a) {
                        a
                    } else {
                        self.t.freed
                    }
                }
            };
            let size = match (s >> 4) & 3 {
                0 | 1 => RX_BUF_SIZE as u32,
                2 => u32::from(inp.u8()),
                _ => inp.u32(),
            };
            let at = sgl + 16 * i;
            w[at..at + 8].copy_from_slice(&addr.to_le_bytes());
            w[at + 12..at + 16].copy_from_slice(&size.to_le_bytes());
        }
        self.rqs[q].push_wqe(&w, oob, nsge, 256);
    }

    /// One register write, with the harness's own prediction of how the device classifies it
    /// (spec D.3 and the model's documented rules).
    fn write64(&mut self, offset: u32, v: u64) {
        self.predict(offset, v);
        self.dev.mmio_write64(offset, v.to_le_bytes());
    }

    fn predict(&mut self, offset: u32, v: u64) {
        let Some(rel) = offset.checked_sub(DB_PAGE_BASE) else {
            self.bad_mmio += 1;
            return;
        };
        let port = (rel / DB_PAGE_SIZE) as usize;
        let kind = match rel % DB_PAGE_SIZE {
            DB_SQ => Kind::Sq,
            DB_RQ => Kind::Rq,
            DB_CQ => Kind::Cq,
            DB_EQ => Kind::Eq,
            _ => {
                self.bad_mmio += 1;
                return;
            }
        };
        if port >= PORTS {
            self.bad_mmio += 1;
            return;
        }
        let (lo, hi) = (v as u32, (v >> 32) as u32);
        let e = &mut self.expect[port];
        match kind {
            Kind::Sq => e.sq += 1,
            Kind::Rq => e.rq += 1,
            Kind::Cq => e.cq += 1,
            Kind::Eq => e.eq += 1,
        }
        let id = if kind == Kind::Eq {
            lo & 0xffff
        } else {
            lo & 0x00ff_ffff
        };
        let owned = match kind {
            Kind::Sq => self.sqs.iter().any(|q| q.port == port && q.id == id),
            Kind::Rq => self.rqs.iter().any(|q| q.port == port && q.id == id),
            Kind::Cq => self.cqs.iter().any(|q| q.port == port && q.id == id),
            Kind::Eq => self.eqs.iter().any(|q| q.port == port && q.id == id),
        };
        if !owned {
            e.bad += 1;
            return;
        }
        if kind == Kind::Rq && lo >> 24 != 0 {
            e.wqe_cnt_errors += 1;
            return;
        }
        e.doorbells += 1;
        if kind == Kind::Cq && hi >> 31 != 0 {
            e.cq_arms += 1;
        }
        let wq = match kind {
            Kind::Sq => self.sqs.iter_mut().find(|q| q.id == id),
            Kind::Rq => self.rqs.iter_mut().find(|q| q.id == id),
            _ => None,
        };
        if let Some(q) = wq {
            let cons = self.dev.wq_consumer(id).expect("wq");
            if hi.wrapping_sub(cons) > q.size || hi % 32 != 0 {
                e.invalid += 1;
            } else {
                q.tail = hi;
            }
        }
    }

    /// Rings a queue's doorbell, plausibly or not.
    fn ring(&mut self, kind: Kind, inp: &mut Input<'_>) {
        let sel = inp.u8();
        let sel2 = inp.u8();
        let (idx, port, id, head) = match kind {
            Kind::Sq => {
                let q = &self.sqs[usize::from(sel2) % self.sqs.len()];
                (0, q.port, q.id, q.head)
            }
            Kind::Rq => {
                let q = &self.rqs[usize::from(sel2) % self.rqs.len()];
                (1, q.port, q.id, q.head)
            }
            Kind::Cq => {
                let q = &self.cqs[usize::from(sel2) % self.cqs.len()];
                let pi = self.dev.cq_producer(q.id).expect("cq");
                let t = q.num.wrapping_add(pi) & ((q.num << 3) - 1);
                (2, q.port, q.id, t)
            }
            Kind::Eq => {
                let q = &self.eqs[usize::from(sel2) % self.eqs.len()];
                (3, q.port, q.id, q.num.wrapping_add(u32::from(inp.u8())))
            }
        };
        let page = if sel & 0x80 != 0 {
            usize::from(inp.u8() % 4)
        } else {
            port
        };
        let id = match (sel >> 5) & 3 {
            0 | 1 => id,
            // A queue of the same kind on another port (or the other one of this port).
            2 => match kind {
                Kind::Sq => self.sqs[(usize::from(sel2) + 1) % self.sqs.len()].id,
                Kind::Rq => self.rqs[(usize::from(sel2) + 1) % self.rqs.len()].id,
                Kind::Cq => self.cqs[(usize::from(sel2) + 1) % self.cqs.len()].id,
                Kind::Eq => self.eqs[(usize::from(sel2) + 1) % self.eqs.len()].id,
            },
            _ => inp.u32() & 0x00ff_ffff,
        };
        let tail = match sel & 7 {
            0..=4 => head,
            5 => head.wrapping_add(32 * u32::from(inp.u8() % 8)),
            6 => head.wrapping_add(u32::from(inp.u8())),
            _ => inp.u32(),
        };
        let v = match kind {
            Kind::Sq | Kind::Rq => {
                let cnt = if kind == Kind::Rq && sel2 & 0xc0 == 0xc0 {
                    u32::from(inp.u8().max(1))
                } else {
                    0
                };
                u64::from(id | (cnt << 24)) | (u64::from(tail) << 32)
            }
            Kind::Cq | Kind::Eq => {
                let arm = u64::from(sel & 8 != 0 || kind == Kind::Eq && sel & 0x10 == 0);
                let mask = if kind == Kind::Eq {
                    0xffff
                } else {
                    0x00ff_ffff
                };
                u64::from(id & mask) | (u64::from(tail & 0x7fff_ffff) << 32) | (arm << 63)
            }
        };
        let reg = [DB_SQ, DB_RQ, DB_CQ, DB_EQ][idx];
        self.write64(doorbell_offset(page, reg), v);
    }

    /// Reads the CQEs `from..to` of CQ `c` and checks their owner bits and their kind; returns
    /// what each says (None when the CQ wrapped over some).
    fn read_cqes(&self, c: usize, from: u32, to: u32) -> Option<Vec<Seen>> {
        let cq = &self.cqs[c];
        let n = to.wrapping_sub(from);
        if n > cq.num {
            return None;
        }
        let mut v = Vec::new();
        for i in from..from.wrapping_add(n) {
            let mut b = [0u8; 64];
            cq.buf.read((i & (cq.num - 1)) as usize * 64, &mut b);
            let info = le32(&b, 60);
            assert_eq!(info >> 29, ((i / cq.num) + 1) & 7, "owner bits of CQE {i}");
            let dw0 = le32(&b, 0);
            assert_eq!((dw0 >> 6) & 3, 1, "client_type");
            let (typ, vendor) = (dw0 & 0x3f, dw0 >> 8);
            let is_sq = info & (1 << 24) != 0;
            assert_eq!(
                is_sq,
                cq.tx,
                "is_sq of a CQE in a {} CQ",
                if cq.tx { "TX" } else { "RX" }
            );
            let off = if cq.tx {
                assert!((32..=41).contains(&typ), "TX CQE type {typ}");
                assert_eq!(
                    typ == TX_OKAY,
                    vendor == 0,
                    "vendor_err {vendor} with type {typ}"
                );
                (le32(&b, 8) >> 5) * 32
            } else {
                assert!(typ == 1 || typ == 4, "RX CQE type {typ}");
                le32(&b, 56)
            };
            v.push(Seen {
                wq: info & 0x00ff_ffff,
                typ,
                vendor,
                off,
            });
        }
        Some(v)
    }

    /// The device's consumer offset of WQ `q`, and whether `q` is in error.
    fn wq_state(&self, q: &Wq) -> (u32, bool) {
        let consumer = self.dev.wq_consumer(q.id).expect("wq");
        (consumer, self.dev.wq_in_error(q.id).expect("wq"))
    }

    fn process(&mut self, inp: &mut Input<'_>) {
        let budget = usize::from(inp.u8());
        let sq0: Vec<_> = self.sqs.iter().map(|q| self.wq_state(q)).collect();
        let rq0: Vec<_> = self.rqs.iter().map(|q| self.wq_state(q)).collect();
        let cq0: Vec<u32> = self
            .cqs
            .iter()
            .map(|c| self.dev.cq_producer(c.id).expect("cq"))
            .collect();
        let wqes0: u64 = (0..PORTS).map(|p| self.counters(p).wqes).sum();
        let (n, more) = if budget == 0 {
            (self.dev.process(&self.mem, &mut self.irqs), false)
        } else {
            let (n, more) = self.dev.process_budget(&self.mem, &mut self.irqs, budget);
            assert!(n <= budget, "{n} WQEs executed with budget {budget}");
            (n, more)
        };
        self.executed += n as u64;
        let wqes1: u64 = (0..PORTS).map(|p| self.counters(p).wqes).sum();
        assert_eq!(wqes1 - wqes0, n as u64, "WQEs executed vs counted");

        // TX: the CQEs of this run, per SQ, against a walk of its ring.
        let mut per_cq: Vec<Option<Vec<Seen>>> = Vec::new();
        for (c, &from) in cq0.iter().enumerate() {
            let to = self.dev.cq_producer(self.cqs[c].id).expect("cq");
            per_cq.push(self.read_cqes(c, from, to));
        }
        let tx_cqes: u32 = self
            .cqs
            .iter()
            .enumerate()
            .filter(|(_, c)| c.tx)
            .map(|(i, c)| self.dev.cq_producer(c.id).expect("cq").wrapping_sub(cq0[i]))
            .sum();
        assert_eq!(tx_cqes as usize, n, "TX WQEs executed != TX CQEs written");
        for (s, q) in self.sqs.iter().enumerate() {
            let (cons0, err0) = sq0[s];
            let (cons1, err1) = self.wq_state(q);
            if err0 {
                assert!(err1, "an SQ left the error state");
                assert_eq!(cons1, cons0, "an SQ in error executed WQEs");
            }
            assert!(
                q.tail.wrapping_sub(cons1) <= q.size
                    && cons1.wrapping_sub(cons0) <= q.tail.wrapping_sub(cons0),
                "SQ consumer past the announced tail"
            );
            if !err1 && !more && !self.pause[q.port] {
                assert_eq!(cons1, q.tail, "an SQ left announced WQEs unexecuted");
            }
            let Some(cqes) = &per_cq[q.cq] else {
                continue;
            };
            let mine: Vec<_> = cqes.iter().filter(|c| c.wq == q.id).collect();
            // Walk the ring from the old consumer: one CQE per WQE, in order.
            let mut at = cons0;
            let mut structural = false;
            for (k, c) in mine.iter().enumerate() {
                assert_eq!(
                    c.off,
                    at & (q.size - 1),
                    "CQE {k} of SQ {:#x} names another WQE",
                    q.id
                );
                let (sz, ok) = wqe_at(&q.ring, q.size, at, true);
                if !ok || sz > q.tail.wrapping_sub(at) {
                    assert_eq!(k + 1, mine.len(), "CQEs after a structural error");
                    assert_eq!(c.typ, HDR_PROCESSING_ERROR, "structural error CQE type");
                    assert!(
                        [1, 2, 3].contains(&c.vendor),
                        "structural error code {}",
                        c.vendor
                    );
                    assert!(err1, "a structural error left the SQ running");
                    assert_eq!(cons1, at, "the consumer moved past a structural error");
                    structural = true;
                    break;
                }
                at = at.wrapping_add(sz);
            }
            if !structural {
                assert_eq!(at, cons1, "consumer vs the WQEs completed");
                assert_eq!(err1, err0, "an SQ entered the error state without its CQE");
            }
        }
        // RX: never past the tail; one CQE per consumed WQE.
        for (r, q) in self.rqs.iter().enumerate() {
            let (cons0, err0) = rq0[r];
            let (cons1, err1) = self.wq_state(q);
            assert!(
                cons1.wrapping_sub(cons0) <= q.tail.wrapping_sub(cons0),
                "RQ {:#x} consumed past its last accepted doorbell",
                q.id
            );
            if err0 {
                assert!(err1 && cons1 == cons0, "an RQ in error consumed WQEs");
            }
            let Some(cqes) = &per_cq[q.cq] else {
                continue;
            };
            let mine: Vec<_> = cqes.iter().filter(|c| c.wq == q.id).collect();
            let mut at = cons0;
            for c in mine {
                assert_eq!(c.off, at & (q.size - 1), "RX CQE names another WQE");
                let (sz, ok) = wqe_at(&q.ring, q.size, at, false);
                assert!(ok, "an RX CQE for a malformed WQE");
                at = at.wrapping_add(sz);
            }
            assert_eq!(at, cons1, "RX WQEs consumed != RX CQEs");
        }
        self.check();
    }

    fn counters(&self, port: usize) -> PortCounters {
        *self.dev.counters(port).expect("port")
    }

    fn check(&self) {
        for p in 0..PORTS {
            let c = self.counters(p);
            assert_eq!(
                DbCounts::of(&c),
                self.expect[p],
                "port {p} doorbell counters"
            );
            assert_eq!(c.wqes, c.tx_cqes, "port {p}: WQEs executed != TX CQEs");
            assert_eq!(
                c.tx_wqe_errors, c.tx_err_cqes,
                "port {p}: errors != error CQEs"
            );
            assert_eq!(
                c.tx_err_cqes,
                c.hc_tx_err_inval_oob + c.hc_tx_err_mtu_violation + c.hc_tx_err_gdma,
                "port {p}: error CQEs by kind"
            );
            assert_eq!(
                c.rx_cqes,
                c.rx_packets() + c.rx_truncated,
                "port {p}: RX CQEs != received + truncated"
            );
            let tx_cq: u64 = self
                .cqs
                .iter()
                .filter(|q| q.port == p && q.tx)
                .map(|q| u64::from(self.dev.cq_producer(q.id).expect("cq")))
                .sum();
            assert_eq!(tx_cq, c.tx_cqes, "port {p}: TX CQEs counted vs in the CQs");
            let rx_cq: u64 = self
                .cqs
                .iter()
                .filter(|q| q.port == p && !q.tx)
                .map(|q| u64::from(self.dev.cq_producer(q.id).expect("cq")))
                .sum();
            assert_eq!(rx_cq, c.rx_cqes, "port {p}: RX CQEs counted vs in the CQs");
            assert!(
                c.loopback_packets <= c.tx_packets() && c.loopback_bytes <= c.hc_tx_bytes,
                "port {p} looped more than it sent: {c:?}"
            );
            let peer = p ^ 1;
            let wire = if peer < PORTS {
                let x = self.counters(peer);
                x.tx_packets() - x.loopback_packets
            } else {
                assert_eq!(
                    c.tx_packets(),
                    c.loopback_packets,
                    "port {p} has no peer but put frames on a wire"
                );
                0
            };
            assert_eq!(
                c.rx_packets()
                    + c.rx_truncated
                    + c.hc_rx_discards_no_wqe
                    + c.rx_no_rq_drops
                    + c.rx_wqe_errors,
                c.loopback_packets + wire,
                "frames port {p} received or dropped != looped + from its peer's wire"
            );
            if p < 2 {
                assert_eq!(c.interrupts, self.irqs.raised[p], "port {p}: interrupts");
            } else {
                assert_eq!(c.interrupts, 0);
            }
        }
        assert_eq!(self.dev.bad_mmio(), self.bad_mmio, "bad_mmio");
    }
}

impl crate::Harness for Harness {
    const MAX_OPS: usize = 300;

    fn new(inp: &mut Input<'_>) -> Self {
        let cfg = inp.u8();
        let cfg2 = inp.u8();
        let mem = Checked::default();
        let mut dev = new_mana(PORTS);
        let mut eqs = Vec::new();
        let mut cqs: Vec<CqH> = Vec::new();
        for port in 0..2 {
            let num = 2u32 << ((cfg >> (2 * port)) & 3);
            let buf = mem.alloc(num as usize * 16, true, "eq");
            let id = dev
                .create_eq(port, buf.dma_addr(), num, port as u16)
                .expect("eq");
            eqs.push(EqH { id, port, num });
        }
        let mut mk_cq = |dev: &mut HostMana, port: usize, num: u32, eq: Option<u32>, tx| {
            let buf = mem.alloc(num as usize * 64, true, "cq");
            let id = dev.create_cq(port, buf.dma_addr(), num, eq).expect("cq");
            cqs.push(CqH {
                id,
                port,
                buf,
                num,
                tx,
            });
            cqs.len() - 1
        };
        let c0 = mk_cq(&mut dev, 0, 8 << ((cfg >> 4) & 3), Some(eqs[0].id), true);
        let c1 = mk_cq(&mut dev, 1, 8 << ((cfg >> 6) & 3), Some(eqs[1].id), false);
        let c2 = mk_cq(&mut dev, 1, 16, None, true);
        let c3 = mk_cq(&mut dev, 2, 16, None, true);
        let mut sqs = Vec::new();
        let mut rqs = Vec::new();
        let mk_wq = |dev: &mut HostMana, kind: Kind, port: usize, size: u32, cq: usize| {
            let name = if kind == Kind::Sq {
                "sq ring"
            } else {
                "rq ring"
            };
            let ring = mem.alloc(size as usize, false, name);
            let cq_id = cqs[cq].id;
            let id = if kind == Kind::Sq {
                dev.create_sq(port, ring.dma_addr(), size, cq_id)
            } else {
                dev.create_rq(port, ring.dma_addr(), size, cq_id)
            }
            .expect("wq");
            Wq {
                id,
                port,
                ring,
                size,
                head: 0,
                tail: 0,
                cq,
            }
        };
        sqs.push(mk_wq(&mut dev, Kind::Sq, 0, 4096, c0));
        sqs.push(mk_wq(&mut dev, Kind::Sq, 0, 4096 << (cfg2 & 1), c0));
        sqs.push(mk_wq(&mut dev, Kind::Sq, 1, 4096, c2));
        sqs.push(mk_wq(&mut dev, Kind::Sq, 2, 4096, c3));
        rqs.push(mk_wq(&mut dev, Kind::Rq, 1, 4096 << ((cfg2 >> 1) & 1), c1));
        rqs.push(mk_wq(&mut dev, Kind::Rq, 1, 4096, c1));
        let rss = usize::from((cfg2 >> 2) & 3) % 3;
        let rx_bufs: Vec<HostBuf> = (0..RX_BUFS)
            .map(|_| mem.alloc(RX_BUF_SIZE, true, "rx buf"))
            .collect();
        let pkts = mem.packets(inp, true);
        let freed = mem.freed();
        let ring = sqs[0].ring.clone();
        let mut h = Self {
            dev,
            mem,
            irqs: Irqs::new(2),
            sqs,
            rqs,
            cqs,
            eqs,
            t: Targets {
                pkts,
                rx_bufs,
                ring,
                freed,
            },
            expect: [DbCounts::default(); PORTS],
            bad_mmio: 0,
            executed: 0,
            pause: [false; PORTS],
            rss,
        };
        h.apply_rss();
        // Every RX WQE of the first RQ posted and announced.
        for _ in 0..h.rqs[0].size / 32 {
            h.rx_wqe_simple(0, 0);
        }
        let (id, head) = (h.rqs[0].id, h.rqs[0].head);
        h.write64(
            doorbell_offset(1, DB_RQ),
            u64::from(id) | (u64::from(head) << 32),
        );
        h
    }

    fn op(&mut self, inp: &mut Input<'_>) {
        match inp.u8() % 20 {
            0..=3 => self.structured_wqe(inp),
            4 => {
                let q = usize::from(inp.u8()) % self.sqs.len();
                let mut b = [0u8; 32];
                inp.fill(&mut b);
                self.sqs[q].push(&b, 32);
            }
            5..=7 => self.ring(Kind::Sq, inp),
            8 | 9 => self.process(inp),
            10 => self.ring(Kind::Cq, inp),
            11 => self.ring(Kind::Eq, inp),
            12 => self.rx_wqe(inp),
            13 => self.ring(Kind::Rq, inp),
            14 => {
                // Any register, any bytes.
                let sel = inp.u8();
                let mut offset = if sel & 1 != 0 {
                    inp.u32()
                } else {
                    u32::from(inp.u16() % 0x5000)
                };
                // The SMC window belongs to the control path (HWC set-up), which
                // prop_mana_hwc and the mana_hwc tests cover: keep this harness's writes
                // out of it.
                if (SMC_BASE..SMC_BASE + 32).contains(&offset) {
                    offset = offset.wrapping_add(32);
                }
                match (sel >> 1) & 3 {
                    0 | 1 => {
                        let v = inp.u64();
                        self.write64(offset, v);
                    }
                    2 => {
                        self.dev.mmio_write32(offset, inp.u32());
                        self.bad_mmio += 1;
                    }
                    _ => {
                        let got = self.dev.mmio_read32(offset);
                        let want = match offset {
                            0x08 => DB_PAGE_BASE,
                            0x0c => 0,
                            0x10 => DB_PAGE_SIZE,
                            0x18 => SMC_BASE,
                            0x1c => 0,
                            _ => {
                                self.bad_mmio += 1;
                                u32::MAX
                            }
                        };
                        assert_eq!(got, want, "register {offset:#x} reads {got:#x}");
                    }
                }
            }
            15 => self.t.scribble(inp),
            16 => {
                let k = usize::from(inp.u8() % 12);
                let b = if k < 4 {
                    self.t.pkts[k].clone()
                } else {
                    self.t.rx_bufs[k - 4].clone()
                };
                self.mem.unmap(&b);
            }
            17 => {
                let sel = inp.u8();
                let port = usize::from((sel >> 2) % 3);
                match sel & 3 {
                    0 => self.dev.set_link(port, sel & 0x40 != 0).expect("link"),
                    1 => {
                        self.rss = usize::from(sel >> 4) % 3;
                        self.apply_rss();
                    }
                    2 => {
                        self.pause[port] = sel & 0x40 != 0;
                        self.dev.set_pause(port, self.pause[port]).expect("pause");
                    }
                    _ => {
                        let on = sel & 0x40 != 0;
                        self.dev.set_loopback(port, on).expect("loopback");
                        assert_eq!(self.dev.loopback(port), on);
                    }
                }
            }
            18 => {
                // The driver skips or rewinds its producer (stale ring bytes become posted).
                let sel = inp.u8();
                let d = 32 * u32::from(inp.u8() % 8);
                let q = if sel & 1 != 0 {
                    &mut self.sqs[usize::from(sel >> 1) % 4]
                } else {
                    &mut self.rqs[usize::from(sel >> 1) % 2]
                };
                q.head = if sel & 0x80 != 0 {
                    q.head.wrapping_sub(d)
                } else {
                    q.head.wrapping_add(d)
                };
            }
            _ => {
                // Resynchronise the producer with the device's consumer.
                let sel = inp.u8();
                let q = if sel & 1 != 0 {
                    &mut self.sqs[usize::from(sel >> 1) % 4]
                } else {
                    &mut self.rqs[usize::from(sel >> 1) % 2]
                };
                q.head = self.dev.wq_consumer(q.id).expect("wq");
            }
        }
        self.check();
    }

    fn finish(mut self) {
        // Let the device finish whatever is pending.
        let mut last = Input::new(&[0]);
        self.process(&mut last);
    }
}

/// One fuzz input.
pub fn run(data: &[u8]) {
    crate::drive::<Harness>(data);
}
