//! The simulated MANA device driven with hand-built WQEs and doorbells, and driver-side unit
//! tests of the CQ/EQ rules.

use std::cell::RefCell;

use rsnic_core::hwif::hw::{Coherent, Mmio};
use rsnic_core::hwif::mana::cq::{Cq, Eq, Overflow};
use rsnic_core::hwif::mana::fmt::*;
use rsnic_core::sim::mana::doorbell_offset;
use rsnic_testbed::bus::IrqLog;
use rsnic_testbed::mana_pair::{new_mana, Frame, HostMana, ManaConfig, ManaPair, RX_PORT};
use rsnic_testbed::mem::{HostBuf, HostMemory};

struct Rig {
    mem: HostMemory,
    dev: HostMana,
    irq: IrqLog,
    eq: HostBuf,
    cq: HostBuf,
    sq: HostBuf,
    eq_id: u32,
    cq_id: u32,
    sq_id: u32,
}

fn rig() -> Rig {
    let mem = HostMemory::new();
    let mut dev = new_mana(2);
    let (eq, cq, sq) = (mem.alloc(16 * 16), mem.alloc(8 * 64), mem.alloc(4096));
    let eq_id = dev.create_eq(0, eq.dma_addr(), 16, 5).unwrap();
    let cq_id = dev.create_cq(0, cq.dma_addr(), 8, Some(eq_id)).unwrap();
    let sq_id = dev.create_sq(0, sq.dma_addr(), 4096, cq_id).unwrap();
    Rig {
        mem,
        dev,
        irq: IrqLog::default(),
        eq,
        cq,
        sq,
        eq_id,
        cq_id,
        sq_id,
    }
}

impl Rig {
    /// Writes a 1-SGE short-OOB WQE at byte `off` for a 64-byte frame; returns its size.
    fn wqe(&self, off: usize, hdr: WqeHeader, oob: TxOob) -> usize {
        let data = self.mem.alloc(64);
        let mut f = vec![0u8; 64];
        f[0..6].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
        f[12..14].copy_from_slice(&[0x88, 0xb5]);
        data.write(0, &f);
        self.sq.write(off, &hdr.encode());
        self.sq.write(off + 8, &oob.encode_short());
        let sge = Sge {
            address: data.dma_addr(),
            mem_key: rsnic_core::sim::mana::MANA_MKEY,
            size: 64,
        };
        self.sq.write(off + 16, &sge.encode());
        32
    }
    fn ring_sq(&mut self, tail: u32) {
        self.dev.mmio_write64(
            doorbell_offset(0, DB_SQ),
            sq_doorbell(self.sq_id, tail).to_le_bytes(),
        );
    }
    fn step(&mut self) -> usize {
        self.dev.process(&self.mem, &mut self.irq)
    }
    fn cqe(&self, i: usize) -> Cqe {
        let mut b = [0u8; 64];
        self.cq.read(i * 64, &mut b);
        Cqe::decode(&b)
    }
    fn good_oob(&self) -> TxOob {
        TxOob {
            vcq_num: self.cq_id,
            ..TxOob::default()
        }
    }
}

fn h1() -> WqeHeader {
    WqeHeader {
        num_sge: 1,
        inline_oob_size_div4: 2,
        ..WqeHeader::default()
    }
}

#[test]
fn good_wqe_gets_tx_okay_with_owner_bits_of_the_first_pass() {
    let mut r = rig();
    let oob = r.good_oob();
    r.wqe(0, h1(), oob);
    r.ring_sq(32);
    assert_eq!(r.step(), 1);
    let c = r.cqe(0);
    assert_eq!((c.wq_num, c.is_sq, c.owner), (r.sq_id, true, 1));
    assert_eq!(c.header().cqe_type, CQE_TX_OKAY);
    let t = r.dev.counters(0).unwrap();
    assert_eq!((t.hc_tx_ucast_pkts, t.tx_cqes, t.sq_doorbells), (1, 1, 1));
    // No checksum asked, one SGE, no TSO.
    assert_eq!(
        (t.tx_csum_offload, t.tx_gather_pkts, t.lso_wqes, t.lso_segs),
        (0, 0, 0, 0)
    );
    // No peer RSS: dropped at the receiver, counted.
    assert_eq!(r.dev.counters(1).unwrap().rx_no_rq_drops, 1);
}

#[test]
fn zero_sge_wqe_is_a_structural_error_and_stops_the_sq() {
    let mut r = rig();
    let oob = r.good_oob();
    let mut h = h1();
    h.num_sge = 0;
    r.wqe(0, h, oob);
    r.wqe(32, h1(), oob);
    r.ring_sq(64);
    r.step();
    let c = r.cqe(0);
    assert_eq!(c.header().cqe_type, CQE_TX_HDR_PROCESSING_ERROR);
    assert_eq!(c.header().vendor_err, 1); // BadNumSge
    assert!(r.dev.wq_in_error(r.sq_id).unwrap());
    assert_eq!(r.cqe(1).owner, 0, "nothing after the error");
    assert_eq!(r.dev.counters(0).unwrap().hc_tx_err_gdma, 1);
}

#[test]
fn wrong_vcq_is_invalid_oob_and_the_sq_goes_on() {
    let mut r = rig();
    let mut bad = r.good_oob();
    bad.vcq_num ^= 1;
    r.wqe(0, h1(), bad);
    let long_fmt_short_oob = TxOob {
        pkt_fmt: PKT_FMT_LONG,
        ..r.good_oob()
    };
    r.wqe(32, h1(), long_fmt_short_oob);
    let good = r.good_oob();
    r.wqe(64, h1(), good);
    r.ring_sq(96);
    assert_eq!(r.step(), 3);
    assert_eq!(r.cqe(0).header().cqe_type, CQE_TX_INVALID_OOB);
    assert_eq!(r.cqe(1).header().cqe_type, CQE_TX_INVALID_OOB);
    assert_eq!(r.cqe(2).header().cqe_type, CQE_TX_OKAY);
    let t = r.dev.counters(0).unwrap();
    assert_eq!(
        (t.hc_tx_err_inval_oob, t.tx_err_cqes, t.hc_tx_ucast_pkts),
        (2, 2, 1)
    );
}

#[test]
fn sq_doorbell_beyond_the_queue_is_ignored() {
    let mut r = rig();
    r.ring_sq(4096 + 32);
    r.ring_sq(33);
    assert_eq!(r.step(), 0);
    assert_eq!(r.dev.counters(0).unwrap().db_invalid, 2);
    // A doorbell on the wrong port's page.
    r.dev.mmio_write64(
        doorbell_offset(1, DB_SQ),
        sq_doorbell(r.sq_id, 32).to_le_bytes(),
    );
    assert_eq!(r.dev.counters(1).unwrap().bad_doorbells, 1);
}

#[test]
fn armed_cq_posts_one_eqe_and_armed_eq_interrupts_once() {
    let mut r = rig();
    // Driver heads start at num: CQ tail_ptr 8, EQ tail_ptr 16.
    r.dev.mmio_write64(
        doorbell_offset(0, DB_CQ),
        cq_doorbell(r.cq_id, 8, true).to_le_bytes(),
    );
    r.dev.mmio_write64(
        doorbell_offset(0, DB_EQ),
        eq_doorbell(r.eq_id, 16, true).to_le_bytes(),
    );
    let oob = r.good_oob();
    r.wqe(0, h1(), oob);
    r.wqe(32, h1(), oob);
    r.ring_sq(64);
    r.step();
    assert_eq!(r.irq.raised, vec![5]);
    let mut b = [0u8; 16];
    r.eq.read(0, &mut b);
    let e = Eqe::decode(&b);
    assert_eq!(
        (e.eqe_type, e.details[0], e.owner),
        (EQE_COMPLETION, r.cq_id, 1)
    );
    r.eq.read(16, &mut b);
    assert_eq!(Eqe::decode(&b).owner, 0, "one EQE: the CQ disarmed");
    // Re-arming with CQEs pending past the armed tail fires at once.
    r.dev.mmio_write64(
        doorbell_offset(0, DB_CQ),
        cq_doorbell(r.cq_id, 9, true).to_le_bytes(),
    );
    r.dev.mmio_write64(
        doorbell_offset(0, DB_EQ),
        eq_doorbell(r.eq_id, 17, true).to_le_bytes(),
    );
    r.step();
    assert_eq!(r.irq.raised, vec![5, 5]);
    assert_eq!(r.dev.counters(0).unwrap().eqes, 2);
}

#[test]
fn rq_doorbell_with_nonzero_wqe_cnt_is_a_counted_device_error() {
    let mut p = ManaPair::new(ManaConfig::default());
    let rq_id = p.ids[2];
    let before = p.dev(RX_PORT);
    p.env.write64(
        doorbell_offset(RX_PORT, DB_RQ),
        rq_doorbell(rq_id, 1, p.rq.wq().doorbell_tail()).to_le_bytes(),
    );
    let after = p.dev(RX_PORT);
    assert_eq!(after.rq_db_wqe_cnt_errors - before.rq_db_wqe_cnt_errors, 1);
    assert_eq!(after.doorbells, before.doorbells, "not accepted");
    // Traffic is unaffected.
    let f: Vec<Frame> = (0..4).map(|_| Frame::linear(vec![2u8; 64])).collect();
    p.send_burst(&f);
    assert_eq!(p.settle(64).len(), 4);
}

#[derive(Default)]
struct Regs {
    writes: RefCell<Vec<(u32, u64)>>,
}

impl Mmio for Regs {
    fn write64(&self, offset: u32, bytes: [u8; 8]) {
        self.writes
            .borrow_mut()
            .push((offset, u64::from_le_bytes(bytes)));
    }
    fn write32(&self, _: u32, _: u32) {}
    fn read32(&self, _: u32) -> u32 {
        0
    }
}

rsnic_testbed::no_barriers!(Regs);

fn put_cqe(buf: &HostBuf, slot: usize, owner: u8) {
    let c = Cqe {
        owner,
        wq_num: 9,
        ..Cqe::default()
    };
    buf.write(slot * 64, &c.encode());
}

#[test]
fn cq_owner_bits_detect_empty_valid_and_overflow() {
    let mem = HostMemory::new();
    let buf = mem.alloc(4 * 64);
    let regs = Regs::default();
    let mut cq = Cq::new(buf.clone(), 3, 4, 0x800).unwrap();
    assert_eq!(cq.poll_one(&regs), Ok(None));
    for s in 0..4 {
        put_cqe(&buf, s, 1);
    }
    for _ in 0..4 {
        assert_eq!(cq.poll_one(&regs).unwrap().unwrap().wq_num, 9);
    }
    assert_eq!(
        cq.poll_one(&regs),
        Ok(None),
        "owner 1 is old on the second pass"
    );
    put_cqe(&buf, 0, 3); // the device lapped us: pass 3 where 2 was expected
    assert_eq!(cq.poll_one(&regs), Err(Overflow));
    assert_eq!(cq.stats.overflows, 1);
}

#[test]
fn cq_rearm_rule() {
    let mem = HostMemory::new();
    let regs = Regs::default();
    let mut cq = Cq::new(mem.alloc(16 * 64), 0x3001, 16, 0x1800).unwrap();
    // Full-budget polls: no doorbell until 4 × 16 = 64 completions went by.
    for _ in 0..7 {
        assert!(!cq.napi_done(8, 8, &regs));
    }
    assert!(regs.writes.borrow().is_empty());
    assert!(!cq.napi_done(8, 8, &regs));
    let w = regs.writes.borrow().clone();
    assert_eq!(w.len(), 1);
    let d = Doorbell::decode(DB_CQ, w[0].1).unwrap();
    assert_eq!(
        (w[0].0, d.id, d.arm, d.tail_ptr),
        (0x1800, 0x3001, false, 16)
    );
    // A poll under budget arms.
    assert!(cq.napi_done(3, 8, &regs));
    let d = Doorbell::decode(DB_CQ, regs.writes.borrow()[1].1).unwrap();
    assert!(d.arm);
    assert_eq!(cq.stats.arms, 1);
    assert_eq!(cq.stats.updates, 1);
}

#[test]
fn eq_handles_at_most_five_events_per_interrupt_and_rearms() {
    let mem = HostMemory::new();
    let buf = mem.alloc(8 * 16);
    let regs = Regs::default();
    let mut eq = Eq::new(buf.clone(), 0x4000, 8, 0x1ff8).unwrap();
    assert!(!eq.process(&regs, |_| {}).rang);
    for i in 0..7 {
        let e = Eqe {
            details: [0x3000 + i, 0, 0],
            eqe_type: EQE_COMPLETION,
            client_id: 0,
            owner: 1,
        };
        buf.write(i as usize * 16, &e.encode());
    }
    // Completion events for a CQ that does not report to this EQ (0x3003, 0x3005) are
    // counted and not dispatched.
    assert!(eq.expect_cqs(&[0x3000, 0x3001, 0x3002, 0x3004]));
    let mut cqs = Vec::new();
    let r = eq.process(&regs, |c| cqs.push(c));
    assert_eq!((r.events, r.completions, r.rang, r.bad_cq), (5, 5, true, 1));
    assert_eq!(cqs, vec![0x3000, 0x3001, 0x3002, 0x3004]);
    let r = eq.process(&regs, |c| cqs.push(c));
    assert_eq!((r.events, r.bad_cq), (2, 2));
    assert_eq!(eq.bad_cq, 3);
    let w = regs.writes.borrow();
    let d = Doorbell::decode(DB_EQ, w[1].1).unwrap();
    assert_eq!((d.id, d.tail_ptr, d.arm), (0x4000, 15, true));
}
