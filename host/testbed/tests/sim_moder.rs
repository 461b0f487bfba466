//! CQ moderation of the simulated ConnectX (`cq_period`, `cq_max_count`, `cq_period_mode`),
//! driven through the command interface by the fake driver of tests/cx_fake_driver:
//! CREATE_CQ with moderation, MODIFY_CQ on a live CQ and its refusals, and when a moderated
//! CQ fires (completion EQEs and the `cq_events` / `cq_timer_events` counters) on the
//! device's clock.

mod cx_fake_driver;
mod sim_util;

use cx_fake_driver::*;
use rsnic_core::hwif::hw::{Coherent, Mmio};
use rsnic_core::sim::mlx5::cmd::synd;
use rsnic_testbed::mem::HostBuf;
use sim_util::{ctrl, CQ_UPDATE, OP_NOP};

/// modify_field_select bits (include/linux/mlx5/cq.h).
const SEL_PERIOD: u32 = 1 << 0;
const SEL_COUNT: u32 = 1 << 1;
const SEL_OVERRUN: u32 = 1 << 2;
const SEL_PERIOD_MODE: u32 = 1 << 4;

/// One microsecond of the device's clock.
const US: u64 = 1000;

/// A create_cq_in (`cq_in`) with moderation (cq_context at bit 0x80).
fn with_moder(mut i: Vec<u8>, period: u16, count: u16, mode: u8) -> Vec<u8> {
    put(&mut i, 0x8f, 2, u64::from(mode)); // cq_context.cq_period_mode
    put(&mut i, 0x104, 12, u64::from(period)); // cq_context.cq_period
    put(&mut i, 0x110, 16, u64::from(count)); // cq_context.cq_max_count
    i
}

/// modify_cq_in (mlx5_core_modify_cq_moderation's layout, plus the period mode).
fn modify_cq_in(cqn: u32, select: u32, period: u16, count: u16, mode: u8) -> Vec<u8> {
    let mut i = cmd_in(0x403, 0, 0x110);
    put(&mut i, 0x48, 24, u64::from(cqn)); // cqn
    put(&mut i, 0x60, 32, u64::from(select)); // modify_field_select
    put(&mut i, 0x8f, 2, u64::from(mode));
    put(&mut i, 0x104, 12, u64::from(period));
    put(&mut i, 0x110, 16, u64::from(count));
    i
}

/// A function with an armed EQ (vector 3), a CQ with the given moderation and an SQ on it
/// that posts NOPs asking for a CQE.
struct Rig {
    h: Host,
    uar: u32,
    eq: Eq,
    cq: Cq,
    sqn: u32,
    sq: HostBuf,
    sq_dbr: HostBuf,
    pc: u16,
}

impl Rig {
    /// Clock at `t0` before the CQ is made (its timer starts then).
    fn new(t0: u64, period: u16, count: u16, mode: u8) -> Self {
        let mut h = Host::new(0);
        let (uar, pd, td) = h.bring_up_with_objects();
        let eq = h.create_eq(6, uar, 3, 0).unwrap();
        h.eq_doorbell(&eq, true);
        h.tb.device().set_clock(t0);
        let log = 6;
        let buf = h.tb.mem.alloc(64 << log);
        for i in 0..(1usize << log) {
            buf.write(i * 64 + 63, &[0xf1]);
        }
        let dbr = h.tb.mem.alloc(8);
        let o = h.exec(
            &with_moder(
                cq_in(log, uar, eq.eqn, false, buf.dma_addr(), dbr.dma_addr()),
                period,
                count,
                mode,
            ),
            16,
        );
        let cq = Cq {
            buf,
            dbr,
            cqn: o.ok().obj(),
            log,
            cc: 0,
        };
        let tis = h.exec(&tis_in(td), 16).ok().obj();
        let (sqn, sq, sq_dbr) = h.ready_sq(cq.cqn, tis, pd, uar);
        let mut r = Self {
            h,
            uar,
            eq,
            cq,
            sqn,
            sq,
            sq_dbr,
            pc: 0,
        };
        r.arm();
        r
    }

    /// Arms the CQ at its consumer index (and runs the device).
    fn arm(&mut self) {
        self.cq.update_ci();
        self.h.cq_arm(&self.cq, self.uar, 0);
        self.h.step();
    }

    /// Posts `n` NOPs with CQ_UPDATE in one doorbell and runs the device.
    fn nops(&mut self, n: u16) {
        let mut last = [0u8; 16];
        for _ in 0..n {
            last = ctrl(OP_NOP, self.pc, self.sqn, 1, CQ_UPDATE);
            self.sq.write((usize::from(self.pc) % 64) * 64, &last);
            self.pc = self.pc.wrapping_add(1);
        }
        self.sq_dbr.write_be32(4, u32::from(self.pc));
        self.h.bus.write64(
            self.h.reg(self.uar * 4096 + 0x800),
            last[..8].try_into().unwrap(),
        );
        self.h.step();
    }

    /// Sets the device's clock and runs it.
    fn at(&mut self, t: u64) {
        self.h.tb.device().set_clock(t);
        self.h.step();
    }

    /// Completion EQEs for the CQ since the last call (the EQ re-armed after each).
    fn events(&mut self) -> u32 {
        let mut n = 0;
        while let Some(e) = self.eq.poll() {
            assert_eq!(e[1], 0, "completion EQE");
            assert_eq!(
                u32::from_be_bytes(e[0x38..0x3c].try_into().unwrap()),
                self.cq.cqn
            );
            n += 1;
        }
        self.h.eq_doorbell(&self.eq, true);
        n
    }

    /// Reads every CQE the CQ has, then arms it again.
    fn drain_and_arm(&mut self) -> u32 {
        let mut n = 0;
        while self.cq.poll().is_some() {
            n += 1;
        }
        self.arm();
        n
    }

    fn counters(&self) -> rsnic_core::sim::mlx5::PortCounters {
        self.h.tb.counters(0)
    }
}

#[test]
fn no_moderation_fires_on_every_armed_cqe() {
    // (0, 0) is today's behaviour; a count without a period does not hold a CQE either.
    for count in [0u16, 32] {
        let mut r = Rig::new(0, 0, count, 0);
        for i in 1..=5u32 {
            r.nops(1);
            assert_eq!(r.events(), 1, "event for CQE {i} (count {count})");
            assert_eq!(r.drain_and_arm(), 1);
        }
        let c = r.counters();
        assert_eq!((c.cq_events, c.cq_timer_events, c.tx_cqes), (5, 0, 5));
        assert_eq!(r.h.tb.device().moderation_deadline(), None);
    }
}

#[test]
fn max_count_gives_one_event_per_n_cqes() {
    // A period the clock never reaches: only the count releases events.
    let mut r = Rig::new(0, 4095, 4, 0);
    let mut cqes = 0;
    for i in 1..=12u32 {
        r.nops(1);
        let ev = r.events();
        assert_eq!(ev, u32::from(i % 4 == 0), "CQE {i}");
        if ev == 1 {
            cqes += r.drain_and_arm();
        }
    }
    assert_eq!(cqes, 12);
    let c = r.counters();
    assert_eq!((c.cq_events, c.cq_timer_events, c.tx_cqes), (3, 0, 12));
    // Eight CQEs at once while armed: one event.
    r.nops(8);
    assert_eq!(r.events(), 1);
    assert_eq!(r.drain_and_arm(), 8);
    // Three held, the period never runs out: the device reports the deadline.
    r.nops(3);
    assert_eq!(r.events(), 0);
    assert_eq!(r.h.tb.device().moderation_deadline(), Some(4095 * US));
}

#[test]
fn period_releases_fewer_cqes_after_the_period_not_before() {
    let t0 = 1_000 * US;
    let mut r = Rig::new(t0, 100, 32, 0);
    r.at(t0 + 10 * US);
    r.nops(2);
    assert_eq!(r.events(), 0, "held: 2 of 32 CQEs, 10 of 100 us");
    assert_eq!(r.h.tb.device().moderation_deadline(), Some(t0 + 100 * US));
    r.at(t0 + 100 * US - 1);
    assert_eq!(r.events(), 0, "one nanosecond early");
    assert_eq!(r.counters().cq_events, 0);
    r.at(t0 + 100 * US);
    assert_eq!(r.events(), 1, "the period ran out");
    assert_eq!(r.h.tb.device().moderation_deadline(), None);
    let c = r.counters();
    assert_eq!((c.cq_events, c.cq_timer_events), (1, 1));
    assert_eq!(r.drain_and_arm(), 2);
    // Event mode: the timer restarted with the event. A CQE 50 us later waits for the
    // rest of the period; one after a quiet period fires at once.
    let t1 = t0 + 100 * US;
    r.at(t1 + 50 * US);
    r.nops(1);
    assert_eq!(r.events(), 0);
    assert_eq!(r.h.tb.device().moderation_deadline(), Some(t1 + 100 * US));
    r.at(t1 + 100 * US);
    assert_eq!(r.events(), 1);
    assert_eq!(r.drain_and_arm(), 1);
    r.at(t1 + 400 * US);
    r.nops(1);
    assert_eq!(r.events(), 1, "sparse CQE after a quiet period");
    assert_eq!(r.counters().cq_timer_events, 2, "the last one was not held");
}

#[test]
fn period_without_a_clock_holds_until_time_advances() {
    // A host that never sets the clock: period-only moderation stays held.
    let mut r = Rig::new(0, 8, 0, 0);
    r.nops(5);
    for _ in 0..3 {
        r.h.step();
    }
    assert_eq!(r.events(), 0);
    assert_eq!(r.h.tb.device().moderation_deadline(), Some(8 * US));
    r.at(8 * US);
    assert_eq!(r.events(), 1);
    assert_eq!(r.drain_and_arm(), 5);
}

#[test]
fn cqe_mode_restarts_the_timer_with_every_cqe() {
    let mut r = Rig::new(0, 50, 0, 1);
    r.at(10 * US);
    r.nops(1);
    assert_eq!(r.h.tb.device().moderation_deadline(), Some(60 * US));
    r.at(40 * US);
    r.nops(1);
    assert_eq!(r.h.tb.device().moderation_deadline(), Some(90 * US));
    r.at(60 * US);
    assert_eq!(r.events(), 0, "the second CQE restarted the timer");
    r.at(90 * US);
    assert_eq!(r.events(), 1);
    assert_eq!(r.drain_and_arm(), 2);
    // Unlike event mode, a CQE after a quiet period still waits one period.
    r.at(1000 * US);
    r.nops(1);
    assert_eq!(r.events(), 0);
    r.at(1050 * US);
    assert_eq!(r.events(), 1);
}

#[test]
fn modify_cq_changes_a_live_cq() {
    let mut r = Rig::new(0, 0, 0, 0);
    r.nops(1);
    assert_eq!(r.events(), 1, "unmoderated");
    r.drain_and_arm();
    // Count 2 (a period the clock never reaches), on the live CQ: no re-creation.
    let cqn = r.cq.cqn;
    r.h.exec(&modify_cq_in(cqn, SEL_PERIOD | SEL_COUNT, 4095, 2, 0), 16)
        .ok();
    r.nops(1);
    assert_eq!(r.events(), 0, "moderated now");
    r.nops(1);
    assert_eq!(r.events(), 1);
    r.drain_and_arm();
    // A held CQ whose moderation goes away fires on the next run, without a new CQE.
    r.nops(1);
    assert_eq!(r.events(), 0);
    r.h.exec(&modify_cq_in(cqn, SEL_PERIOD, 0, 0, 0), 16).ok();
    r.h.step();
    assert_eq!(r.events(), 1, "released by MODIFY_CQ");
    r.drain_and_arm();
    // Only the selected fields change: the count (2) stayed, the period comes back.
    r.h.exec(&modify_cq_in(cqn, SEL_PERIOD, 4095, 0, 0), 16)
        .ok();
    r.nops(1);
    assert_eq!(r.events(), 0);
    r.nops(1);
    assert_eq!(r.events(), 1, "count 2 kept");
    r.drain_and_arm();
    // Period mode: CQE mode from now on (timer restarts with each CQE).
    r.h.exec(
        &modify_cq_in(cqn, SEL_PERIOD | SEL_COUNT | SEL_PERIOD_MODE, 20, 0, 1),
        16,
    )
    .ok();
    r.at(100 * US);
    r.nops(1);
    assert_eq!(r.h.tb.device().moderation_deadline(), Some(120 * US));
    r.at(120 * US);
    assert_eq!(r.events(), 1);
}

#[test]
fn bad_modify_cq_and_create_cq_are_refused() {
    let mut r = Rig::new(0, 0, 0, 0);
    let cqn = r.cq.cqn;
    let sel = SEL_PERIOD | SEL_COUNT;
    // No CQ by that number, or another function's number space.
    expect(
        r.h.exec(&modify_cq_in(cqn + 1, sel, 8, 8, 0), 16),
        ST_BAD_RESOURCE,
        synd::BAD_CQ,
    );
    expect(
        r.h.exec(&modify_cq_in(cqn + 64, sel, 8, 8, 0), 16),
        ST_BAD_RESOURCE,
        synd::BAD_CQ,
    );
    // Field-select bits the model does not implement, or none.
    for s in [0, SEL_OVERRUN, sel | SEL_OVERRUN, 1 << 31] {
        expect(
            r.h.exec(&modify_cq_in(cqn, s, 8, 8, 0), 16),
            ST_BAD_PARAM,
            synd::CQ_MODIFY_FIELDS,
        );
    }
    // A period mode beyond 0/1.
    expect(
        r.h.exec(&modify_cq_in(cqn, SEL_PERIOD_MODE, 0, 0, 2), 16),
        ST_BAD_PARAM,
        synd::CQ_PERIOD_MODE,
    );
    // RESIZE_CQ (op_mod 1) is not implemented.
    let mut i = modify_cq_in(cqn, sel, 8, 8, 0);
    put(&mut i, 0x30, 16, 1);
    expect(r.h.exec(&i, 16), ST_BAD_OP, synd::BAD_OP_MOD);
    // Nothing refused changed the CQ: it still fires at once.
    r.nops(1);
    assert_eq!(r.events(), 1);
    // CREATE_CQ with a period mode beyond 0/1.
    let buf = r.h.tb.mem.alloc(64 << 6);
    let dbr = r.h.tb.mem.alloc(8);
    let eqn = r.eq.eqn;
    let uar = r.uar;
    expect(
        r.h.exec(
            &with_moder(
                cq_in(6, uar, eqn, false, buf.dma_addr(), dbr.dma_addr()),
                8,
                8,
                3,
            ),
            16,
        ),
        ST_BAD_PARAM,
        synd::CQ_PERIOD_MODE,
    );
    // The capabilities say the device moderates.
    let caps = r.h.exec(&cmd_in(0x100, 1, 16), 0x1010).ok();
    for (bit, name) in [
        (0x222, "cq_moderation"),
        (0x223, "cq_period_mode_modify"),
        (0x22b, "cq_period_start_from_cqe"),
    ] {
        assert_eq!(getf(&caps.b, 0x80 + bit, 1), 1, "{name}");
    }
}

#[test]
fn destroying_a_held_cq_forgets_its_deadline() {
    let mut r = Rig::new(0, 100, 0, 0);
    r.nops(1);
    assert_eq!(r.h.tb.device().moderation_deadline(), Some(100 * US));
    let sqn = r.sqn;
    let cqn = r.cq.cqn;
    r.h.exec(&obj_in(0x906, sqn), 16).ok();
    r.h.exec(&obj_in(0x401, cqn), 16).ok();
    assert_eq!(r.h.tb.device().moderation_deadline(), None);
    r.at(200 * US);
    assert_eq!(r.events(), 0);
}
