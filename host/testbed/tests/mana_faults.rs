//! Faults injected into the simulated MANA device ([`Fault`]) and what the driver's data path
//! makes of them: an error CQE costs its packet only (counted) and the SQ goes on, a truncated
//! frame costs its packet only and its buffer is posted again, a lost interrupt leaves its
//! events on the EQ for the next look, and an EQE naming a CQ that is not the EQ's is counted
//! and not dispatched.

use rsnic_core::dp::mana::fmt::{CQE_TX_OKAY, CQE_TX_VPORT_DISABLED};
use rsnic_core::sim::mana::{Fault, BAD_CQ_ID};
use rsnic_testbed::mana_pair::{Frame, ManaConfig, ManaPair, RX_PORT, TX_PORT};

fn frames(n: usize, tag: u8) -> Vec<Frame> {
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

/// The frame numbers (byte 14) of what was received.
fn numbers(rx: &[rsnic_testbed::mana_pair::RxFrame]) -> Vec<u8> {
    rx.iter().map(|f| f.bytes[14]).collect()
}

#[test]
fn inject_refuses_tx_okay_and_types_out_of_range_and_unknown_ports() {
    let p = ManaPair::new(ManaConfig::default());
    let mut d = p.dev.borrow_mut();
    for t in [0, CQE_TX_OKAY, 0x40, 0xff] {
        assert!(!d.inject(TX_PORT, Fault::TxErrCqe(t)), "type {t}");
    }
    assert!(!d.inject(2, Fault::RxTruncated));
    assert!(d.inject(TX_PORT, Fault::TxErrCqe(CQE_TX_VPORT_DISABLED)));
}

#[test]
fn tx_error_cqe_costs_that_packet_only_and_the_sq_goes_on() {
    let mut p = ManaPair::new(ManaConfig::default());
    assert!(p
        .dev
        .borrow_mut()
        .inject(TX_PORT, Fault::TxErrCqe(CQE_TX_VPORT_DISABLED)));
    assert_eq!(p.send_burst(&frames(8, 1)), 8);
    let rx = p.settle(64);
    // The first WQE the device executed failed; the other seven went out in order.
    assert_eq!(numbers(&rx), (1..8).collect::<Vec<u8>>());
    let (d, t) = (p.drv_tx(), p.dev(TX_PORT));
    assert_eq!((d.tx_cqe_err, d.tx_cqe_unknown_type, d.cqe_bad), (1, 0, 0));
    assert_eq!(
        (t.faults_injected, t.tx_err_cqes, t.tx_packets()),
        (1, 1, 7)
    );
    assert_eq!(p.tx_in_flight(), 0, "the failed packet was released too");
    // The fault applied once: the next burst is whole.
    assert_eq!(p.send_burst(&frames(8, 2)), 8);
    assert_eq!(p.settle(64).len(), 8);
    assert_eq!(p.drv_tx().tx_cqe_err, 1);
    assert!(p.sq.error().is_none());
}

#[test]
fn tx_cqe_of_a_type_the_driver_does_not_know_is_counted_apart() {
    let mut p = ManaPair::new(ManaConfig::default());
    assert!(p.dev.borrow_mut().inject(TX_PORT, Fault::TxErrCqe(50)));
    assert_eq!(p.send_burst(&frames(4, 1)), 4);
    assert_eq!(p.settle(64).len(), 3);
    let d = p.drv_tx();
    assert_eq!((d.tx_cqe_err, d.tx_cqe_unknown_type), (0, 1));
    assert_eq!(p.tx_in_flight(), 0);
    assert!(p.sq.error().is_none());
}

#[test]
fn a_dma_read_fault_costs_that_packet_only() {
    let mut p = ManaPair::new(ManaConfig::default());
    assert!(p.dev.borrow_mut().inject(TX_PORT, Fault::DmaReadFault));
    assert_eq!(p.send_burst(&frames(4, 1)), 4);
    assert_eq!(numbers(&p.settle(64)), vec![1, 2, 3]);
    let (d, t) = (p.drv_tx(), p.dev(TX_PORT));
    assert_eq!((d.tx_cqe_err, d.cqe_bad), (1, 0));
    assert_eq!(
        (t.faults_injected, t.dma_faults, t.hc_tx_err_gdma),
        (1, 1, 1)
    );
    assert_eq!(p.tx_in_flight(), 0);
    assert!(p.sq.error().is_none());
}

#[test]
fn rx_truncated_costs_that_packet_only_and_its_buffer_is_posted_again() {
    let mut p = ManaPair::new(ManaConfig::default());
    let wqes = p.config().rq_wqes as usize;
    assert!(p.dev.borrow_mut().inject(RX_PORT, Fault::RxTruncated));
    assert_eq!(p.send_burst(&frames(8, 1)), 8);
    let rx = p.settle(64);
    assert_eq!(numbers(&rx), (1..8).collect::<Vec<u8>>());
    assert_eq!(p.drv_rx().rx_truncated, 1);
    let x = p.dev(RX_PORT);
    assert_eq!((x.faults_injected, x.rx_truncated), (1, 1));
    // No buffer was lost: two full rings' worth of frames still arrive, none discarded.
    let (mut sent, mut got) = (0, 0);
    while sent < 2 * wqes {
        sent += p.send_burst(&frames(32, 3));
        got += p.settle(64).len();
    }
    assert_eq!(got, sent);
    assert_eq!(p.dev(RX_PORT).hc_rx_discards_no_wqe, 0);
    p.check_counters().unwrap();
}

#[test]
fn a_lost_interrupt_leaves_its_event_on_the_eq_for_the_next_look() {
    let mut p = ManaPair::new(ManaConfig::default());
    // NAPI's last empty poll arms the CQ; the EQ is armed as after an interrupt.
    p.settle(64);
    p.tx_eq.arm(&p.env);
    p.take_irqs();
    assert!(p.dev.borrow_mut().inject(TX_PORT, Fault::DropIrqs(1)));
    p.send_burst(&frames(1, 1));
    p.run_device();
    assert!(p.take_irqs().is_empty(), "the interrupt was lost");
    let t = p.dev(TX_PORT);
    assert_eq!((t.irqs_lost, t.faults_injected, t.eqes), (1, 1, 1));
    // The TX watchdog's look (irq_recover): the event waited, it is consumed and the EQ
    // re-armed, so the next completion interrupts again.
    let mut seen = Vec::new();
    let r = p.tx_eq.process(&p.env, |_| {});
    assert_eq!(
        (r.events, r.bad_cq, r.rang),
        (1, 1, true),
        "no CQ expected yet"
    );
    p.tx_eq.expect_cqs(&[p.ids[1]]);
    p.settle(64);
    p.send_burst(&frames(1, 2));
    p.run_device();
    assert_eq!(p.take_irqs().len(), 1);
    let r = p.tx_eq.process(&p.env, |c| seen.push(c));
    assert_eq!((r.events, r.completions, r.bad_cq), (1, 1, 0));
    assert_eq!(seen, vec![p.ids[1]]);
}

#[test]
fn an_eqe_naming_a_foreign_cq_is_counted_and_not_dispatched() {
    let mut p = ManaPair::new(ManaConfig::default());
    assert!(p.tx_eq.expect_cqs(&[p.ids[1]]));
    assert!(!p.tx_eq.expect_cqs(&[1, 2, 3, 4, 5]), "at most four CQs");
    p.settle(64);
    p.tx_eq.arm(&p.env);
    p.take_irqs();
    assert!(p.dev.borrow_mut().inject(TX_PORT, Fault::EqeBadCq));
    p.send_burst(&frames(1, 1));
    p.run_device();
    assert_eq!(p.take_irqs().len(), 1, "the event still interrupts");
    let mut seen = Vec::new();
    let r = p.tx_eq.process(&p.env, |c| seen.push(c));
    assert_eq!((r.events, r.completions, r.bad_cq), (1, 1, 1));
    assert!(seen.is_empty());
    assert_eq!(p.tx_eq.bad_cq, 1);
    assert_eq!(p.dev(TX_PORT).faults_injected, 1);
    assert_ne!(p.ids[1], BAD_CQ_ID);
    // The completion itself is on the CQ: a poll finds it (the driver schedules NAPI for
    // any completion event, see family/mana.rs), and the next event is the CQ's own.
    assert_eq!(p.settle(64).len(), 1);
    assert_eq!(p.tx_in_flight(), 0);
    p.send_burst(&frames(1, 2));
    p.run_device();
    let r = p.tx_eq.process(&p.env, |c| seen.push(c));
    assert_eq!((r.completions, r.bad_cq), (1, 0));
    assert_eq!(seen, vec![p.ids[1]]);
    assert_eq!(p.tx_eq.bad_cq, 1);
}
