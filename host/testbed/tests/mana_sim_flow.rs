//! The simulated MANA device's budgeted engine runs ([`Device::process_budget`]) and 802.3x
//! flow control ([`Device::set_pause`]): hand-built SQs for the scheduling rules, the
//! driver/device pair for what arrives at the receiver.
//!
//! [`Device::process_budget`]: rsnic_core::sim::mana::Device::process_budget
//! [`Device::set_pause`]: rsnic_core::sim::mana::Device::set_pause

use rsnic_core::hwif::hw::Coherent;
use rsnic_core::hwif::mana::fmt::*;
use rsnic_core::sim::mana::{
    doorbell_offset, CmdError, PortCounters, PAUSE_STORM, PAUSE_THRESHOLD, SQ_BURST,
};
use rsnic_testbed::bus::IrqLog;
use rsnic_testbed::mana_pair::{
    new_mana, Frame, HostMana, ManaConfig, ManaPair, RxFrame, RX_PORT, TX_PORT,
};
use rsnic_testbed::mem::{HostBuf, HostMemory};

/// SQ ring size of the hand-built rig: 512 one-BU WQEs.
const RING: u32 = 16384;
/// CQ entries of the rig: one per WQE of a full ring.
const CQ_NUM: u32 = RING / 32;
/// EQ entries of the rig.
const EQ_NUM: u32 = 64;
/// MSI-X vector of the rig's EQ.
const VECTOR: u16 = 3;
/// Frames the pair tests send where more than an RQ of 128 WQEs is the point (fewer under
/// Miri: still more than the RQ holds).
const OVER_RQ: usize = if cfg!(miri) { 160 } else { 400 };

/// Port 0 with `nsq` SQs, each with its own CQ, all CQs on one EQ. Port 1 has no RSS table:
/// what the SQs send is dropped there (counted), which is all these tests need.
struct Rig {
    mem: HostMemory,
    dev: HostMana,
    irq: IrqLog,
    eq: HostBuf,
    eq_id: u32,
    cqs: Vec<HostBuf>,
    cq_ids: Vec<u32>,
    sqs: Vec<HostBuf>,
    sq_ids: Vec<u32>,
}

fn rig(nsq: usize) -> Rig {
    let mem = HostMemory::new();
    let mut dev = new_mana(2);
    let eq = mem.alloc(EQ_NUM as usize * 16);
    let eq_id = dev.create_eq(0, eq.dma_addr(), EQ_NUM, VECTOR).unwrap();
    let (mut cqs, mut cq_ids, mut sqs, mut sq_ids) = (vec![], vec![], vec![], vec![]);
    for _ in 0..nsq {
        let cq = mem.alloc(CQ_NUM as usize * 64);
        let cq_id = dev
            .create_cq(0, cq.dma_addr(), CQ_NUM, Some(eq_id))
            .unwrap();
        let sq = mem.alloc(RING as usize);
        sq_ids.push(dev.create_sq(0, sq.dma_addr(), RING, cq_id).unwrap());
        cqs.push(cq);
        cq_ids.push(cq_id);
        sqs.push(sq);
    }
    Rig {
        mem,
        dev,
        irq: IrqLog::default(),
        eq,
        eq_id,
        cqs,
        cq_ids,
        sqs,
        sq_ids,
    }
}

/// What a WQE of the rig should look like.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Good,
    /// `vcq_num` names another CQ: INVALID_OOB, the SQ goes on.
    BadVcq,
    /// `num_sge` = 0: a structural error, the SQ stops.
    NoSge,
}

impl Rig {
    /// Writes 1-BU WQEs at BU indexes `first..first + kinds.len()` of SQ `q`, each sending a
    /// distinct 64-byte frame.
    fn post(&self, q: usize, first: usize, kinds: &[Kind]) {
        for (i, &k) in kinds.iter().enumerate() {
            let n = first + i;
            let mut f = vec![0u8; 64];
            f[0..6].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
            f[12..14].copy_from_slice(&[0x88, 0xb5]);
            f[14..22].copy_from_slice(&((q as u64) << 32 | n as u64).to_be_bytes());
            let data = self.mem.alloc_from(&f);
            let hdr = WqeHeader {
                num_sge: if k == Kind::NoSge { 0 } else { 1 },
                inline_oob_size_div4: 2,
                ..WqeHeader::default()
            };
            let oob = TxOob {
                vcq_num: if k == Kind::BadVcq {
                    self.cq_ids[q] ^ 0x100
                } else {
                    self.cq_ids[q]
                },
                ..TxOob::default()
            };
            let off = (n * 32) % RING as usize;
            let sq = &self.sqs[q];
            sq.write(off, &hdr.encode());
            sq.write(off + 8, &oob.encode_short());
            let sge = Sge {
                address: data.dma_addr(),
                mem_key: rsnic_core::sim::mana::MANA_MKEY,
                size: 64,
            };
            sq.write(off + 16, &sge.encode());
        }
    }

    fn ring(&mut self, q: usize, wqes: usize) {
        self.dev.mmio_write64(
            doorbell_offset(0, DB_SQ),
            sq_doorbell(self.sq_ids[q], wqes as u32 * 32).to_le_bytes(),
        );
    }

    /// Arms every CQ and the EQ as a driver does before its first poll (heads start at num).
    fn arm(&mut self) {
        for q in 0..self.cq_ids.len() {
            self.dev.mmio_write64(
                doorbell_offset(0, DB_CQ),
                cq_doorbell(self.cq_ids[q], CQ_NUM, true).to_le_bytes(),
            );
        }
        self.dev.mmio_write64(
            doorbell_offset(0, DB_EQ),
            eq_doorbell(self.eq_id, EQ_NUM, true).to_le_bytes(),
        );
    }

    fn budget(&mut self, b: usize) -> (usize, bool) {
        self.dev.process_budget(&self.mem, &mut self.irq, b)
    }

    fn consumed(&self, q: usize) -> u32 {
        self.dev.wq_consumer(self.sq_ids[q]).unwrap() / 32
    }

    /// Everything the device made visible: CQ and EQ memory, interrupts, counters, queue
    /// positions and states.
    fn snapshot(&self) -> Snapshot {
        Snapshot {
            cqs: self.cqs.iter().map(|c| c.to_vec()).collect(),
            eq: self.eq.to_vec(),
            irqs: self.irq.raised.clone(),
            counters: [0, 1].map(|p| *self.dev.counters(p).unwrap()),
            queues: self
                .sq_ids
                .iter()
                .zip(&self.cq_ids)
                .map(|(&s, &c)| {
                    (
                        self.dev.wq_consumer(s).unwrap(),
                        self.dev.wq_in_error(s).unwrap(),
                        self.dev.cq_producer(c).unwrap(),
                    )
                })
                .collect(),
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
struct Snapshot {
    cqs: Vec<Vec<u8>>,
    eq: Vec<u8>,
    irqs: Vec<u16>,
    counters: [PortCounters; 2],
    queues: Vec<(u32, bool, u32)>,
}

#[test]
fn budget_one_executes_exactly_one_wqe_and_more_says_whether_work_is_left() {
    let mut r = rig(2);
    r.post(0, 0, &[Kind::Good; 3]);
    r.post(1, 0, &[Kind::Good; 2]);
    r.ring(0, 3);
    r.ring(1, 2);
    assert_eq!(r.budget(0), (0, true), "budget 0 executes nothing");
    for k in 1..=5u64 {
        let (n, more) = r.budget(1);
        assert_eq!(n, 1);
        assert_eq!(more, k < 5, "after {k} of 5 WQEs");
        let c = *r.dev.counters(0).unwrap();
        assert_eq!((c.wqes, c.tx_cqes), (k, k));
    }
    assert_eq!(r.consumed(0) + r.consumed(1), 5);
    assert_eq!(r.budget(1), (0, false));
    assert_eq!(r.budget(usize::MAX), (0, false));
}

#[test]
fn budget_zero_still_evaluates_arm_requests() {
    let mut r = rig(1);
    r.post(0, 0, &[Kind::Good]);
    r.ring(0, 1);
    assert_eq!(r.dev.process(&r.mem, &mut r.irq), 1);
    assert!(r.irq.raised.is_empty(), "nothing armed yet");
    // Arming with a CQE already past the armed tail fires at once, without any WQE.
    r.arm();
    assert_eq!(r.budget(0), (0, false));
    assert_eq!(r.irq.raised, vec![VECTOR]);
    let c = r.dev.counters(0).unwrap();
    assert_eq!((c.eqes, c.interrupts, c.wqes), (1, 1, 1));
}

#[test]
fn budgeted_runs_serve_the_sqs_round_robin_in_bursts() {
    let mut r = rig(2);
    let n = 2 * SQ_BURST + 10;
    r.post(0, 0, &vec![Kind::Good; n]);
    r.post(1, 0, &vec![Kind::Good; n]);
    r.ring(0, n);
    r.ring(1, n);
    let b = SQ_BURST as u32;
    assert_eq!(r.budget(SQ_BURST), (SQ_BURST, true));
    assert_eq!((r.consumed(0), r.consumed(1)), (b, 0), "one burst of SQ 0");
    assert_eq!(r.budget(10), (10, true));
    assert_eq!((r.consumed(0), r.consumed(1)), (b, 10), "then SQ 1");
    // SQ 1 finishes its burst across the call boundary, then SQ 0 gets the rest of the budget.
    assert_eq!(r.budget(SQ_BURST), (SQ_BURST, true));
    assert_eq!((r.consumed(0), r.consumed(1)), (b + 10, b));
    let left = 2 * n - (2 * SQ_BURST + 10);
    assert_eq!(r.budget(usize::MAX), (left, false));
    assert_eq!((r.consumed(0), r.consumed(1)), (n as u32, n as u32));
}

/// SQ 0: good WQEs; SQ 1: a structural error after 50 (the SQ stops); SQ 2: an INVALID_OOB
/// among good ones.
fn mixed_rig() -> (Rig, usize) {
    let mut r = rig(3);
    r.post(0, 0, &[Kind::Good; 150]);
    let mut k1 = vec![Kind::Good; 90];
    k1[50] = Kind::NoSge;
    r.post(1, 0, &k1);
    let mut k2 = vec![Kind::Good; 10];
    k2[5] = Kind::BadVcq;
    r.post(2, 0, &k2);
    r.arm();
    r.ring(0, 150);
    r.ring(1, 90);
    r.ring(2, 10);
    (r, 150 + 51 + 10)
}

#[test]
fn budgeted_runs_write_the_same_cqes_eqes_interrupts_and_counters_as_one_process() {
    let (mut one, total) = mixed_rig();
    assert_eq!(one.dev.process(&one.mem, &mut one.irq), total);
    let want = one.snapshot();
    assert!(
        want.counters[0].tx_err_cqes == 2 && want.queues[1].1,
        "the errors happened"
    );
    assert_eq!(want.counters[0].eqes, 3, "one EQE per armed CQ");
    let budgets: &[usize] = if cfg!(miri) {
        &[1, SQ_BURST, SQ_BURST + 1]
    } else {
        &[1, 5, SQ_BURST - 1, SQ_BURST, SQ_BURST + 1, 100]
    };
    for &budget in budgets {
        let (mut r, _) = mixed_rig();
        let mut done = 0;
        loop {
            let (n, more) = r.budget(budget);
            assert!(n <= budget);
            done += n;
            if !more {
                break;
            }
            assert_eq!(n, budget, "work left, so the whole budget was used");
        }
        assert_eq!(done, total, "budget {budget}");
        assert_eq!(r.snapshot(), want, "budget {budget}");
    }
}

/// Distinct frames of 60..1500 bytes (60..300 under Miri) carrying their index; every third
/// one in two pieces.
fn frames(n: usize) -> Vec<Frame> {
    let span = if cfg!(miri) { 240 } else { 1440 };
    (0..n)
        .map(|i| {
            let len = 60 + (i * 97) % span;
            let mut v: Vec<u8> = (0..len).map(|j| (i * 7 + j) as u8).collect();
            v[0..6].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
            v[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
            v[12..14].copy_from_slice(&[0x88, 0xb5]);
            v[14..18].copy_from_slice(&(i as u32).to_be_bytes());
            let mut f = Frame::linear(v);
            if i % 3 == 0 {
                let rest = f.linear.split_off(40);
                f.frags.push(rest);
            }
            f
        })
        .collect()
}

/// Runs the device until it has no work: one `process`, or `process_budget(b)` until it says
/// no work is left (checking that a call that leaves work used its whole budget).
fn run(p: &mut ManaPair, budget: Option<usize>) -> usize {
    let Some(b) = budget else {
        return p.run_device();
    };
    p.env.flush_mmio();
    let mut total = 0;
    loop {
        let (n, more) = p.dev.borrow_mut().process_budget(&p.mem, &mut p.irqs, b);
        assert!(n <= b);
        total += n;
        if !more {
            return total;
        }
        assert_eq!(n, b, "work left, so the whole budget was used");
    }
}

/// [`ManaPair::settle`] with the device run by [`run`].
fn settle(p: &mut ManaPair, budget: Option<usize>) -> Vec<RxFrame> {
    let mut out = Vec::new();
    loop {
        let mut moved = run(p, budget) > 0;
        while p.poll_tx(64).cqes > 0 {
            moved = true;
        }
        loop {
            let got = p.poll_rx(64);
            if got.is_empty() {
                break;
            }
            moved = true;
            out.extend(got);
        }
        if !moved {
            p.env.flush_mmio();
            return out;
        }
    }
}

/// What a pair made visible: device counters of both ports, interrupts.
fn pair_state(p: &mut ManaPair) -> ([PortCounters; 2], Vec<u16>) {
    ([p.dev(TX_PORT), p.dev(RX_PORT)], p.take_irqs())
}

fn assert_received(got: &[RxFrame], sent: &[Frame]) {
    assert_eq!(got.len(), sent.len());
    for (i, (g, f)) in got.iter().zip(sent).enumerate() {
        assert_eq!(g.bytes, f.expected_wire_8021q(), "frame {i}");
    }
}

#[test]
fn budgeted_device_runs_deliver_the_same_bytes_and_counters_as_process() {
    // Two bursts of more than an SQ burst each (smaller under Miri).
    let f = frames(if cfg!(miri) { 140 } else { 200 });
    let mut runs = Vec::new();
    for budget in [None, Some(1), Some(7), Some(SQ_BURST), Some(1000)] {
        let mut p = ManaPair::new(ManaConfig {
            // The smallest RQ under Miri (it still takes a whole burst).
            rq_wqes: if cfg!(miri) { 128 } else { 512 },
            ..ManaConfig::default()
        });
        p.tx_eq.arm(&p.env);
        p.rx_eq.arm(&p.env);
        let mut got = Vec::new();
        // Two bursts: the second meets the CQs and EQs the first one's polls armed.
        for burst in f.chunks(f.len() / 2) {
            assert_eq!(p.send_burst(burst), burst.len());
            got.extend(settle(&mut p, budget));
        }
        assert_received(&got, &f);
        p.check_counters().unwrap();
        let (c, irqs) = pair_state(&mut p);
        assert_eq!(c[RX_PORT].rx_packets(), f.len() as u64);
        assert!(!irqs.is_empty(), "the armed path was used");
        runs.push((budget, got, c, irqs, p.drv_tx(), p.drv_rx()));
    }
    let (_, got0, c0, irq0, tx0, rx0) = &runs[0];
    for (b, got, c, irqs, tx, rx) in &runs[1..] {
        assert_eq!(got, got0, "budget {b:?}: received frames and CQE contents");
        assert_eq!(c, c0, "budget {b:?}: device counters");
        assert_eq!(irqs, irq0, "budget {b:?}: interrupts");
        assert_eq!((tx, rx), (tx0, rx0), "budget {b:?}: driver counters");
    }
}

#[test]
fn napi_polls_between_small_budgeted_runs_lose_nothing() {
    let f = frames(if cfg!(miri) { 160 } else { 300 });
    // More frames than RX WQEs: only the polls between runs make room for all of them.
    let cfg = ManaConfig {
        sq_size: 512 * 32,
        rq_wqes: 128,
        ..ManaConfig::default()
    };
    assert!(f.len() > cfg.rq_wqes as usize);
    let mut p = ManaPair::new(cfg);
    assert_eq!(p.send_burst(&f), f.len());
    p.env.flush_mmio();
    let mut got = Vec::new();
    let mut runs = 0;
    loop {
        let (n, more) = p.dev.borrow_mut().process_budget(&p.mem, &mut p.irqs, 16);
        runs += 1;
        p.poll_tx(64);
        got.extend(p.poll_rx(64));
        p.env.flush_mmio();
        if !more {
            assert!(n <= 16);
            break;
        }
        assert_eq!(n, 16);
    }
    got.extend(settle(&mut p, Some(16)));
    assert_eq!(runs, f.len().div_ceil(16));
    assert_received(&got, &f);
    assert_eq!(p.dev(RX_PORT).hc_rx_discards_no_wqe, 0);
    p.check_counters().unwrap();
}

/// A pair whose RQ is smaller than the bursts sent to it, flow control `pause` in both
/// directions of both ports (the receiver sends PAUSE frames, the sender honours them).
fn small_rq_pair(pause: bool) -> ManaPair {
    let p = ManaPair::new(ManaConfig {
        sq_size: 1024 * 32,
        rq_wqes: 128,
        ..ManaConfig::default()
    });
    for port in [TX_PORT, RX_PORT] {
        p.dev.borrow_mut().set_pause(port, pause).unwrap();
        assert_eq!(p.dev.borrow().pause(port), pause);
    }
    p
}

/// A [`small_rq_pair`] with flow control on and a burst larger than its RQ (200 frames, 160
/// under Miri) taken by its SQ: the pair and the frames.
fn paused_burst() -> (ManaPair, Vec<Frame>) {
    let f = frames(if cfg!(miri) { 160 } else { 200 });
    let mut p = small_rq_pair(true);
    assert_eq!(p.send_burst(&f), f.len());
    (p, f)
}

/// WQEs the TX port executes before it pauses, with the RQ of `small_rq_pair` full and not
/// refilled: the posted count must stay at `min(PAUSE_THRESHOLD, wqes / 2)` or above.
fn before_pause() -> usize {
    let wqes = 128;
    wqes - PAUSE_THRESHOLD.min(wqes as u32 / 2) as usize + 1
}

#[test]
fn with_pause_a_burst_larger_than_the_peer_rq_arrives_whole() {
    let f = frames(OVER_RQ);
    let mut runs = Vec::new();
    for budget in [None, Some(1), Some(10)] {
        let mut p = small_rq_pair(true);
        assert!(f.len() > p.config().rq_wqes as usize);
        assert_eq!(p.send_burst(&f), f.len());
        let got = settle(&mut p, budget);
        assert_received(&got, &f);
        let (tx, rx) = (p.dev(TX_PORT), p.dev(RX_PORT));
        assert_eq!(rx.hc_rx_discards_no_wqe, 0);
        assert!(tx.tx_pause > 0, "the receiver was short of buffers");
        assert_eq!(tx.tx_packets(), f.len() as u64);
        p.check_counters().unwrap();
        runs.push((budget, got, tx, rx));
    }
    let (_, got0, tx0, rx0) = &runs[0];
    for (b, got, tx, rx) in &runs[1..] {
        assert_eq!((got, tx, rx), (got0, tx0, rx0), "budget {b:?}");
    }
}

#[test]
fn without_pause_the_same_burst_loses_packets_counted_as_no_wqe_discards() {
    let f = frames(OVER_RQ);
    let mut p = small_rq_pair(false);
    assert_eq!(p.send_burst(&f), f.len());
    let got = settle(&mut p, None);
    let (tx, rx) = (p.dev(TX_PORT), p.dev(RX_PORT));
    assert_eq!(tx.tx_pause, 0);
    assert_eq!(tx.tx_packets(), f.len() as u64);
    assert!(rx.hc_rx_discards_no_wqe > 0);
    assert_eq!(
        got.len() as u64 + rx.hc_rx_discards_no_wqe,
        f.len() as u64,
        "every packet either received or counted"
    );
    // One device run with no refills in between: the first RQ-full arrive.
    assert_eq!(got.len(), p.config().rq_wqes as usize);
    assert_received(&got, &f[..got.len()]);
    p.check_counters().unwrap();
}

#[test]
fn a_paused_sq_waits_for_a_register_write_and_does_not_spin() {
    let (mut p, f) = paused_burst();
    p.env.flush_mmio();
    let step = |p: &mut ManaPair| {
        p.dev
            .borrow_mut()
            .process_budget(&p.mem, &mut p.irqs, usize::MAX)
    };
    let paused_at = before_pause();
    assert!(f.len() - paused_at > p.config().rq_wqes as usize / 2);
    assert_eq!(
        step(&mut p),
        (paused_at, false),
        "paused: no work to report"
    );
    let c = p.dev(TX_PORT);
    assert_eq!((c.tx_pause, c.wqes), (1, paused_at as u64));
    // No register write: the SQ is not retried.
    assert_eq!(step(&mut p), (0, false));
    assert_eq!(p.dev(TX_PORT).tx_pause, 1);
    // A doorbell that posts nothing new: retried, paused again.
    p.rq.ring(&p.env);
    assert_eq!(p.run_device(), 0);
    assert_eq!(p.dev(TX_PORT).tx_pause, 2);
    // The receiver polls and re-posts (its doorbell ends the pause).
    let got = p.poll_rx(64);
    assert_eq!(got.len(), 64);
    let n = p.run_device();
    assert!(
        n > 0 && n < f.len() - paused_at,
        "resumed, and paused again"
    );
    let mut all = got;
    all.extend(settle(&mut p, None));
    assert_received(&all, &f);
    assert_eq!(p.dev(RX_PORT).hc_rx_discards_no_wqe, 0);
    p.check_counters().unwrap();
}

#[test]
fn a_receiver_short_of_buffers_holds_its_sender_only_so_long() {
    // The receiver stops re-posting (an AF_XDP socket that stopped filling its fill ring):
    // every register write retries the paused SQ, which pauses again. Stall prevention:
    // after PAUSE_STORM pauses in a row the port transmits; the receiver uses the WQEs it
    // has and drops the rest, counted.
    let (mut p, f) = paused_burst();
    let paused_at = before_pause();
    assert_eq!(p.run_device(), paused_at);
    for _ in 1..PAUSE_STORM {
        p.rq.ring(&p.env);
        assert_eq!(p.run_device(), 0, "still paused");
    }
    let (tx, rx) = (p.dev(TX_PORT), p.dev(RX_PORT));
    assert_eq!(
        (tx.tx_pause, rx.tx_pause_storms),
        (u64::from(PAUSE_STORM), 0)
    );
    // One PAUSE frame per register write, sent by the receiver, received by the sender.
    assert_eq!(
        (rx.tx_pause_frames, tx.rx_pause_frames),
        (u64::from(PAUSE_STORM), u64::from(PAUSE_STORM))
    );
    p.rq.ring(&p.env);
    assert_eq!(
        p.run_device(),
        f.len() - paused_at,
        "the storm ends the pause"
    );
    let (tx, rx) = (p.dev(TX_PORT), p.dev(RX_PORT));
    assert_eq!(
        (tx.tx_pause, rx.tx_pause_storms, tx.tx_pause_storms),
        (u64::from(PAUSE_STORM), 1, 0),
        "the receiver's stall prevention stopped its PAUSE frames"
    );
    assert_eq!(rx.tx_pause_frames, u64::from(PAUSE_STORM));
    let wqes = p.config().rq_wqes as usize;
    assert_eq!(rx.hc_rx_discards_no_wqe, (f.len() - wqes) as u64);
    let got = settle(&mut p, None);
    assert_received(&got, &f[..wqes]);
    p.check_counters().unwrap();
    // The receiver posted again: pause is honoured from scratch.
    assert_eq!(p.send_burst(&f), f.len());
    assert_eq!(p.run_device(), paused_at);
    let (tx, rx) = (p.dev(TX_PORT), p.dev(RX_PORT));
    assert_eq!(
        (tx.tx_pause, rx.tx_pause_storms),
        (u64::from(PAUSE_STORM) + 1, 1)
    );
}

#[test]
fn pause_does_not_block_when_a_link_is_down() {
    // The link goes down while the SQ is paused: the rest is sent and dropped at once.
    let f = frames(100);
    let mut p = small_rq_pair(true);
    assert_eq!(p.send_burst(&f), f.len());
    let paused_at = before_pause();
    assert_eq!(p.run_device(), paused_at);
    assert_eq!(p.dev(TX_PORT).tx_pause, 1);
    p.dev.borrow_mut().set_link(RX_PORT, false).unwrap();
    assert_eq!(p.run_device(), f.len() - paused_at);
    let tx = p.dev(TX_PORT);
    assert_eq!(tx.tx_link_down_drops, (f.len() - paused_at) as u64);
    assert_eq!(tx.tx_pause, 1, "not paused again");
    p.dev.borrow_mut().set_link(RX_PORT, true).unwrap();
    let got = settle(&mut p, None);
    assert_received(&got, &f[..paused_at]);
    p.check_counters().unwrap();

    // The TX link down from the start: nothing pauses although the RQ runs short.
    let mut p = small_rq_pair(true);
    p.dev.borrow_mut().set_link(TX_PORT, false).unwrap();
    assert_eq!(p.send_burst(&f), f.len());
    assert_eq!(p.run_device(), f.len());
    let (tx, rx) = (p.dev(TX_PORT), p.dev(RX_PORT));
    assert_eq!((tx.tx_pause, tx.tx_packets()), (0, 0));
    assert_eq!(tx.tx_link_down_drops, f.len() as u64);
    assert_eq!((rx.rx_packets(), rx.hc_rx_discards_no_wqe), (0, 0));
    assert!(settle(&mut p, None).is_empty());
    p.check_counters().unwrap();
}

#[test]
fn pause_frames_come_from_the_receivers_tx_pause_and_stop_a_sender_with_rx_pause() {
    // Each (sender's RX pause, receiver's TX pause), the other two directions set to the
    // opposite to show they do not matter.
    let f = frames(OVER_RQ);
    for (srx, rtx) in [(true, true), (false, true), (true, false), (false, false)] {
        let mut p = small_rq_pair(false);
        {
            let mut d = p.dev.borrow_mut();
            d.set_pause_rx_tx(TX_PORT, srx, !rtx).unwrap();
            d.set_pause_rx_tx(RX_PORT, !srx, rtx).unwrap();
        }
        assert_eq!(p.send_burst(&f), f.len());
        // One run, no register write: the receiver is short at most one quantum.
        let first = p.run_device();
        let (tx, rx) = (p.dev(TX_PORT), p.dev(RX_PORT));
        let case = format!("sender rx {srx}, receiver tx {rtx}");
        assert_eq!(
            (rx.tx_pause_frames, tx.rx_pause_frames),
            (u64::from(rtx), u64::from(rtx)),
            "{case}: one PAUSE frame, sent by the receiver, received by the sender"
        );
        assert_eq!((tx.tx_pause_frames, rx.rx_pause_frames), (0, 0), "{case}");
        assert_eq!(tx.tx_pause, u64::from(srx && rtx), "{case}");
        if srx && rtx {
            assert_eq!(first, before_pause(), "{case}");
        } else {
            assert_eq!(first, f.len(), "{case}: nothing held");
            assert!(rx.hc_rx_discards_no_wqe > 0, "{case}");
        }
        let got = settle(&mut p, None);
        let (tx, rx) = (p.dev(TX_PORT), p.dev(RX_PORT));
        assert_eq!(
            got.len() as u64 + rx.hc_rx_discards_no_wqe,
            f.len() as u64,
            "{case}: every packet received or counted"
        );
        if srx && rtx {
            assert_received(&got, &f);
            assert_eq!(rx.hc_rx_discards_no_wqe, 0);
            // One SQ: every PAUSE frame held it once.
            assert!(tx.tx_pause > 1, "{case}");
            assert_eq!(rx.tx_pause_frames, tx.rx_pause_frames);
            assert_eq!(tx.tx_pause, tx.rx_pause_frames);
        } else {
            assert_eq!(tx.tx_pause, 0, "{case}");
            assert_eq!(rx.tx_pause_frames, tx.rx_pause_frames, "{case}");
        }
        p.check_counters().unwrap();
    }
}

#[test]
fn set_pause_checks_the_port() {
    let mut d = new_mana(2);
    assert_eq!(d.set_pause(2, true), Err(CmdError::BadPort));
    assert_eq!(d.set_pause_rx_tx(2, true, false), Err(CmdError::BadPort));
    assert!(!d.pause(0) && !d.pause(1), "off by default");
    assert_eq!(d.pause_rx_tx(0), Some((false, false)));
    assert_eq!(d.pause_rx_tx(2), None);
    d.set_pause(1, true).unwrap();
    assert!(d.pause(1) && !d.pause(0));
    assert_eq!(d.pause_rx_tx(1), Some((true, true)));
    d.set_pause_rx_tx(1, false, true).unwrap();
    assert_eq!(d.pause_rx_tx(1), Some((false, true)));
    assert!(!d.pause(1), "one direction is not both");
}
