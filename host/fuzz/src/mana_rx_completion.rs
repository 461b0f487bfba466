// SPDX-License-Identifier: GPL-2.0

//! The driver-side MANA RQ (`hwif::mana::rq`) against a hostile device.
//!
//! The input configures an RQ (queue size, RX CQ size, buffer size, doorbells batched per
//! poll or rung per packet), then runs a program: fill the queue (buffer allocation may
//! fail), write RX CQEs (plausible ones at the consumer or a little beyond, with valid, stale
//! or foreign owner bits; RX_OKAY, TRUNCATED, COALESCED, FENCE, TX types or anything; for
//! this RQ, another queue or an SQ; lengths inside the buffer, exactly its size, one more, 0
//! or anything), write arbitrary CQE bytes, poke single bytes, poll with any budget (plain or
//! as a NAPI round, allocation failures included), ring the CQ, switch the doorbell mode,
//! and recover (drain, then a new RQ).
//!
//! Invariants checked:
//! * nothing panics and no host DMA buffer is accessed out of bounds;
//! * buffers are never lost or duplicated: allocated = held + delivered + recycled, a buffer
//!   is delivered or recycled at most once and only while held; the buffers held are exactly
//!   those of the posted WQEs (`head − tail`), each posted WQE names a distinct held buffer
//!   with the configured size and key in a well-formed 1-BU WQE (so the device can never
//!   write into a buffer the driver gave away);
//! * a delivered length is 1..=buffer size; a poll's work is at most its budget and the
//!   deliveries at most its work; an RQ in error does no work (it discards what the device
//!   writes, unread and counted, so its CQ is armed past it);
//! * every RQ doorbell carries this RQ's id, `wqe_cnt = 0` and `tail_ptr = head · 32`; after
//!   every operation nothing posted is unannounced; batched mode: at most one RQ doorbell per
//!   poll, exactly one when the poll read at least one CQE and the RQ is not in error, none
//!   when it read nothing unless it topped a short ring up; per-packet mode: one per
//!   re-posted WQE, and one for a top-up; the poll's `doorbells` and the counters match what
//!   was written;
//! * only a short ring (`Rq::short`: a WQE without a buffer, after a failed allocation) is
//!   topped up, by the next poll;
//! * CQ doorbells name the CQ with `head mod (num << 3)`; a NAPI round arms the CQ exactly
//!   when it did less than its budget;
//! * at the end (drain, then a new RQ) every buffer came back, and the new RQ delivers a
//!   valid CQE's buffer with one doorbell.

use rsnic_core::hwif::hw::Coherent;
use rsnic_core::hwif::mana::cq::Cq;
use rsnic_core::hwif::mana::rq::{Rq, RqParams};
use rsnic_testbed::mem::{HostBuf, HostMemory};

use crate::env::{
    buf_addr, mana_cqe, mana_owner, pick_len, poke_cq, raw_cqe, write_mana_cqe, Env, RxBuf,
    RxSt as St,
};
use crate::{le32, Input};

/// RQ id.
pub const RQ_ID: u32 = 0x00_2011;
/// RX CQ id.
pub const CQ_ID: u32 = 0x00_3012;
const MKEY: u32 = 0x99;
/// RQ doorbell register (page 1, RQ offset 0x400).
pub const RQ_DB: u32 = 0x2400;
/// CQ doorbell register (page 1, CQ offset 0x800).
pub const CQ_DB: u32 = 0x2800;
const RX_OKAY: u8 = 1;

type FuzzRq = Rq<RxBuf, HostBuf, Vec<Option<RxBuf>>>;

struct Harness {
    rq: FuzzRq,
    env: Env,
    ring: HostBuf,
    cqbuf: HostBuf,
    queue_size: u32,
    cq_num: u32,
    buf_size: u32,
    /// tail_ptr of the last RQ doorbell of the current RQ.
    last_rq_tail: Option<u32>,
    was_error: bool,
    /// RQ doorbells counted in the driver's stats of earlier RQs (rebuilds reset them).
    rq_dbs_seen: u64,
    /// RQ doorbells written.
    rq_dbs_total: u64,
    /// Doorbells rung per packet (pre-2023) instead of once per poll.
    rq_mode: bool,
    /// Per buffer: the epoch of the last ring check that found it posted.
    seen: Vec<u32>,
    epoch: u32,
}

fn build(
    queue_size: u32,
    cq_num: u32,
    buf_size: u32,
    per_packet: bool,
) -> (FuzzRq, HostBuf, HostBuf) {
    let mem = HostMemory::new();
    let ring = mem.alloc(queue_size as usize);
    let cqbuf = mem.alloc(cq_num as usize * 64);
    let cq = Cq::new(cqbuf.clone(), CQ_ID, cq_num, CQ_DB).expect("cq");
    let n = (queue_size / 32) as usize;
    let rq = Rq::new(
        RqParams {
            queue_size,
            rq_id: RQ_ID,
            mkey: MKEY,
            buf_size,
            db_offset: RQ_DB,
            ring_per_packet: per_packet,
        },
        ring.clone(),
        cq,
        (0..n).map(|_| None).collect(),
    )
    .expect("rq");
    (rq, ring, cqbuf)
}

impl Harness {
    fn write_cqe(&self, ctr: u32, b: &[u8; 64]) {
        write_mana_cqe(&self.cqbuf, self.cq_num, ctr, b);
    }

    /// A CQE that looks plausible: at the consumer or a little beyond, mostly for this RQ
    /// with the right owner bits.
    fn structured_cqe(&mut self, inp: &mut Input<'_>) {
        let sel = inp.u8();
        let sel2 = inp.u8();
        let ctr = self.rq.cq().head().wrapping_add(u32::from(sel & 3));
        let owner = mana_owner(sel, ctr, self.cq_num, inp);
        let typ = match (sel >> 4) & 7 {
            0..=3 => RX_OKAY,
            4 => 4,
            5 => 2 + inp.u8() % 2,
            6 => inp.u8() & 0x3f,
            _ => 32,
        };
        let wq_num = match sel2 & 7 {
            0..=4 => RQ_ID,
            5 => RQ_ID ^ 1,
            _ => inp.u32() & 0x00ff_ffff,
        };
        let is_sq = sel2 & 0x18 == 0x18;
        let len = pick_len(inp.u8(), self.buf_size, inp, |inp| u32::from(inp.u16()));
        let mut b = mana_cqe(typ, 0, wq_num, is_sq, owner);
        if sel & 0x80 != 0 {
            // Checksum, hash type and VLAN bits.
            b[4..8].copy_from_slice(&inp.u32().to_le_bytes());
            b[16..20].copy_from_slice(&inp.u32().to_le_bytes());
        }
        b[8..12].copy_from_slice(&len.to_le_bytes());
        b[56..60].copy_from_slice(&(self.rq.wq().tail() * 32).to_le_bytes());
        self.write_cqe(ctr, &b);
    }

    /// Register writes of the current operation, checked; returns (RQ doorbells, CQ arms).
    fn take_writes(&mut self) -> (u32, u32) {
        let (mut rq, mut arms) = (0, 0);
        let mut last_cq = None;
        for (o, b) in self.env.take_writes() {
            let v = u64::from_le_bytes(b);
            let lo = v as u32;
            let hi = (v >> 32) as u32;
            match o {
                RQ_DB => {
                    assert_eq!(lo & 0x00ff_ffff, RQ_ID, "RQ doorbell for another queue");
                    assert_eq!(lo >> 24, 0, "RQ doorbell with wqe_cnt {}", lo >> 24);
                    assert_eq!(hi % 32, 0, "RQ doorbell tail_ptr not in BUs");
                    if let Some(prev) = self.last_rq_tail {
                        assert!(
                            hi.wrapping_sub(prev) <= self.queue_size,
                            "RQ doorbell moved the tail backwards or too far"
                        );
                    }
                    self.last_rq_tail = Some(hi);
                    self.rq_dbs_total += 1;
                    rq += 1;
                }
                CQ_DB => {
                    assert_eq!(lo, CQ_ID, "CQ doorbell: id, reserved bits");
                    last_cq = Some(hi & 0x7fff_ffff);
                    if v >> 63 != 0 {
                        arms += 1;
                    }
                }
                _ => panic!("register write at {o:#x}"),
            }
        }
        if let Some(t) = last_cq {
            assert_eq!(
                t,
                self.rq.cq().head() % (self.cq_num << 3),
                "CQ doorbell tail = head mod (num << 3)"
            );
        }
        (rq, arms)
    }

    /// Polls; returns the deliveries.
    fn poll(&mut self, budget: u32, napi: bool) -> u32 {
        let tail0 = self.rq.wq().tail();
        let head0 = self.rq.wq().head();
        let short0 = self.rq.short();
        let Self {
            rq, env, buf_size, ..
        } = self;
        let mut got = Vec::new();
        let r = if napi {
            rq.napi_poll(budget, env, |b, c| got.push((b, *c)))
        } else {
            rq.poll(budget, env, |b, c| got.push((b, *c)))
        };
        assert!(
            r.work <= budget,
            "poll did {} work with budget {budget}",
            r.work
        );
        assert!(r.delivered <= r.work, "more deliveries than CQEs");
        assert_eq!(r.delivered as usize, got.len(), "deliveries vs reported");
        for (b, c) in got.drain(..) {
            env.deliver(b, c.len, *buf_size);
        }
        assert_eq!(r.error, self.rq.error());
        if self.was_error {
            assert_eq!(r.work, 0, "an RQ in error consumed CQEs");
        }
        // Every WQE the poll consumed was re-posted (1 BU each); what it posted beyond them
        // topped a short ring up.
        let reposts = self.rq.wq().tail().wrapping_sub(tail0);
        let topped = self
            .rq
            .wq()
            .head()
            .wrapping_sub(head0)
            .wrapping_sub(reposts);
        assert!(topped == 0 || short0, "{topped} WQEs topped up in a full ring");
        let (dbs, arms) = self.take_writes();
        assert_eq!(dbs, r.doorbells, "RQ doorbells written vs reported");
        if self.rq_per_packet() {
            assert_eq!(
                dbs,
                reposts + u32::from(topped > 0),
                "per-packet mode: one doorbell per re-posted WQE, one for a top-up"
            );
        } else {
            assert!(dbs <= 1, "{dbs} RQ doorbells in one poll");
            if r.work == 0 {
                assert_eq!(
                    dbs,
                    u32::from(topped > 0),
                    "an RQ doorbell for a poll that read nothing and posted nothing"
                );
            } else if self.rq.error().is_none() {
                assert_eq!(dbs, 1, "no RQ doorbell after a poll that read CQEs");
            }
        }
        if napi {
            assert_eq!(arms > 0, r.work < budget, "CQ arm vs work < budget");
        } else {
            assert_eq!(arms, 0, "a plain poll armed the CQ");
        }
        r.delivered
    }

    /// Fills the RQ, its first `fail` buffer allocations failing.
    fn fill(&mut self, fail: u32) {
        self.env.failing_allocs(fail, |env| self.rq.fill(env));
    }

    fn rq_per_packet(&self) -> bool {
        self.rq_mode
    }

    fn recover(&mut self) {
        let before = self.env.held;
        let n = self.rq.drain(&mut self.env);
        assert_eq!(n as usize, before, "drain returned other buffers than held");
        assert_eq!(self.env.held, 0, "buffers held after the drain");
        assert_eq!(self.rq.posted(), 0);
        self.rq_dbs_seen += self.rq.stats.doorbells;
        let (rq, ring, cqbuf) = build(self.queue_size, self.cq_num, self.buf_size, self.rq_mode);
        self.rq = rq;
        self.ring = ring;
        self.cqbuf = cqbuf;
        self.last_rq_tail = None;
        self.was_error = false;
        self.rq.fill(&mut self.env);
    }

    /// The buffers held are exactly those the posted WQEs name, each in a well-formed WQE.
    fn check_ring(&mut self) {
        let wq = self.rq.wq();
        let n = self.queue_size / 32;
        let posted = wq.used_bus();
        assert!(posted <= n, "{posted} WQEs posted in a ring of {n}");
        assert_eq!(self.rq.posted(), posted);
        assert_eq!(
            self.env.held, posted as usize,
            "buffers held != posted WQEs"
        );
        let mut ring = vec![0u8; self.queue_size as usize];
        self.ring.read(0, &mut ring);
        let mut hdr = [0u8; 8];
        hdr[4..8].copy_from_slice(&(1u32 | (2 << 8)).to_le_bytes());
        let mut key_size = [0u8; 8];
        key_size[0..4].copy_from_slice(&MKEY.to_le_bytes());
        key_size[4..8].copy_from_slice(&self.buf_size.to_le_bytes());
        // A mark per buffer: the epoch of the last check that found it in the ring.
        self.epoch += 1;
        self.seen.resize(self.env.bufs.len(), 0);
        for k in 0..posted {
            let slot = (wq.tail().wrapping_add(k) & (n - 1)) as usize * 32;
            let w = &ring[slot..slot + 32];
            assert!(w[0..8] == hdr, "RX WQE header: 1 SGE, 8-byte OOB");
            assert!(w[24..32] == key_size, "RX SGE mem_key and size");
            let addr = u64::from(le32(w, 16)) | (u64::from(le32(w, 20)) << 32);
            let id = ((addr & !0x20_0000_0000_0000) >> 16) as usize;
            assert_eq!(buf_addr(id as u32), addr, "RX SGE address of no buffer");
            assert_eq!(
                self.env.bufs.get(id),
                Some(&St::Held),
                "a posted WQE names buffer {id}, which the RQ does not hold"
            );
            assert_ne!(
                self.seen[id], self.epoch,
                "two posted WQEs name buffer {id}"
            );
            self.seen[id] = self.epoch;
        }
    }

    fn check(&mut self, ring: bool) {
        let (_, _) = self.take_writes();
        if ring {
            self.check_ring();
        }
        let head = self.rq.wq().head();
        match self.last_rq_tail {
            Some(t) => assert_eq!(t, head.wrapping_mul(32), "posted WQEs left unannounced"),
            None => assert_eq!(head, 0, "WQEs posted without a doorbell"),
        }
        assert_eq!(
            self.rq.stats.doorbells + self.rq_dbs_seen,
            self.rq_dbs_total,
            "RQ doorbell counter vs writes"
        );
        if self.was_error {
            assert!(
                self.rq.error().is_some(),
                "an RQ left the error state by itself"
            );
        }
    }
}

impl crate::Harness for Harness {
    const MAX_OPS: usize = 400;

    fn new(inp: &mut Input<'_>) -> Self {
        let cfg = inp.u8();
        let queue_size = 4096u32 << (cfg & 1);
        let n = queue_size / 32;
        // MANA sizes the RX CQ for one more entry (the fence), so the next power of two.
        let cq_num = n << ((cfg >> 1) & 1);
        let buf_size = match (cfg >> 2) & 3 {
            0 | 1 => 1514 + 4,
            2 => 1 + u32::from(inp.u16() % 9100),
            _ => 1 + u32::from(inp.u8() % 64),
        };
        let per_packet = cfg & 0x10 != 0;
        let (rq, ring, cqbuf) = build(queue_size, cq_num, buf_size, per_packet);
        let mut h = Self {
            rq,
            env: Env::default(),
            ring,
            cqbuf,
            queue_size,
            cq_num,
            buf_size,
            last_rq_tail: None,
            was_error: false,
            rq_dbs_seen: 0,
            rq_dbs_total: 0,
            rq_mode: per_packet,
            seen: Vec::new(),
            epoch: 0,
        };
        h.fill(u32::from(inp.u8() >> 4));
        h.check(true);
        h
    }

    fn op(&mut self, inp: &mut Input<'_>) {
        self.was_error = self.rq.error().is_some();
        let op = inp.u8() % 16;
        match op {
            0 | 1 => self.fill(u32::from(inp.u8() >> 5)),
            2..=6 => self.structured_cqe(inp),
            7 => {
                let (slot, c) = raw_cqe(inp);
                self.write_cqe(slot, &c);
            }
            8 => poke_cq(&self.cqbuf, self.cq_num as usize, inp),
            9..=11 => {
                let budget = u32::from(inp.u8() % 70);
                self.env.fail_allocs = u32::from(inp.u8() >> 6);
                self.poll(budget, false);
                self.env.fail_allocs = 0;
            }
            12 | 13 => {
                let b = inp.u8();
                let budget = if b & 0x80 != 0 {
                    u32::from(inp.u16() % 1100)
                } else {
                    u32::from(b % 70)
                };
                self.env.fail_allocs = u32::from(inp.u8() >> 6);
                self.poll(budget, true);
                self.env.fail_allocs = 0;
            }
            14 => self.recover(),
            _ => {
                let b = inp.u8();
                if b & 1 != 0 {
                    self.rq_mode = b & 2 != 0;
                    self.rq.set_ring_per_packet(self.rq_mode);
                } else {
                    self.rq.cq_mut().ring(b & 2 != 0, &self.env);
                }
            }
        }
        // The ring and the buffers change only when the RQ posts, polls or is rebuilt.
        self.check(matches!(op, 0 | 1 | 9..=14));
    }

    fn finish(mut self) {
        assert_eq!(self.env.held, self.env.held_count(), "held count");
        self.was_error = false;
        self.recover();
        self.check(true);
        let first_new = self
            .env
            .bufs
            .iter()
            .position(|s| *s == St::Held)
            .expect("the new RQ holds buffers");
        assert_eq!(
            self.rq.posted(),
            self.queue_size / 32,
            "the new RQ is not full"
        );
        // One valid CQE for the first WQE.
        let ctr = self.rq.cq().head();
        let len = self.buf_size.min(60);
        let mut b = mana_cqe(RX_OKAY, 0, RQ_ID, false, (ctr / self.cq_num) & 7);
        b[8..12].copy_from_slice(&len.to_le_bytes());
        self.write_cqe(ctr, &b);
        assert_eq!(self.poll(1, false), 1, "no delivery after recovery");
        assert_eq!(self.env.bufs[first_new], St::Delivered);
        assert!(self.rq.error().is_none());
        self.check(true);
        self.recover();
        let n = self.rq.drain(&mut self.env);
        assert_eq!(n, self.queue_size / 32);
        assert!(
            !self.env.bufs.contains(&St::Held),
            "a buffer never came back"
        );
    }
}

/// One fuzz input.
pub fn run(data: &[u8]) {
    crate::drive::<Harness>(data);
}
