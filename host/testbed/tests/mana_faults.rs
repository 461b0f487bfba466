//! Faults injected into the simulated MANA device ([`Fault`]) and what the driver's data path
//! makes of them: an error CQE costs its packet only (counted) and the SQ goes on, a truncated
//! frame costs its packet only and its buffer is posted again, a lost interrupt leaves its
//! events on the EQ for the next look, and an EQE naming a CQ that is not the EQ's is counted
//! and not dispatched. A CQE naming another WQ stops the queue (counted); a stalled transmit
//! engine and a stopped data path hold everything until a WQ object of the port is destroyed
//! (MANA's queue recovery); a TX CQE with corrupt owner bits reads as a CQ overflow and stops
//! the SQ until the queues are made again; an injected request failure comes back as an
//! error status.

mod mana_util;

use mana_util::faulted;
use rsnic_core::hwif::hw::Coherent;
use rsnic_core::hwif::mana::fmt::{owner_check, Cqe, Owner, CQE_TX_OKAY, CQE_TX_VPORT_DISABLED};
use rsnic_core::hwif::mana::gdma_req as req;
use rsnic_core::hwif::mana::hwc::HwcError;
use rsnic_core::hwif::mana::sq::SqError;
use rsnic_core::sim::mana::{
    CmdError, Fault, BAD_CQ_ID, BAD_OWNER_XOR, BAD_WQ_ID, STATUS_INTERNAL_ERROR,
};
use rsnic_testbed::mana_hwc::{CallError, HwcHost};
use rsnic_testbed::mana_pair::{
    new_mana, numbered_frames as frames, ManaConfig, ManaPair, RQ_BAD_WQ_ID, RX_PORT, SQ_BAD_WQ_ID,
    TX_PORT,
};

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
    let mut p = faulted(TX_PORT, Fault::TxErrCqe(CQE_TX_VPORT_DISABLED));
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
    let mut p = faulted(TX_PORT, Fault::TxErrCqe(50));
    assert_eq!(p.send_burst(&frames(4, 1)), 4);
    assert_eq!(p.settle(64).len(), 3);
    let d = p.drv_tx();
    assert_eq!((d.tx_cqe_err, d.tx_cqe_unknown_type), (0, 1));
    assert_eq!(p.tx_in_flight(), 0);
    assert!(p.sq.error().is_none());
}

#[test]
fn a_dma_read_fault_costs_that_packet_only() {
    let mut p = faulted(TX_PORT, Fault::DmaReadFault);
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
    let mut p = faulted(RX_PORT, Fault::RxTruncated);
    let wqes = p.config().rq_wqes as usize;
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

#[test]
fn tx_bad_sqn_names_another_wq_and_the_sq_stops() {
    let mut p = faulted(TX_PORT, Fault::TxBadWqId);
    assert_eq!(p.send_burst(&frames(2, 1)), 2);
    // The frames went out; the first CQE names WQ BAD_WQ_ID and the SQ stops at it.
    assert_eq!(numbers(&p.settle(64)), vec![0, 1]);
    assert_eq!(p.sq.error(), Some(SQ_BAD_WQ_ID));
    assert_eq!(p.drv_tx().cqe_bad, 1);
    assert_eq!(
        p.tx_in_flight(),
        2,
        "nothing released after the corrupt CQE"
    );
    // Otherwise the CQEs are what they would have been (TX_OKAY), and the fault applied
    // once.
    let t = p.dev(TX_PORT);
    assert_eq!((t.faults_injected, t.tx_cqes, t.tx_err_cqes), (1, 2, 0));
    assert_ne!(p.ids[0], BAD_WQ_ID);
}

#[test]
fn rx_bad_rqn_names_another_wq_and_the_rq_stops() {
    let mut p = faulted(RX_PORT, Fault::RxBadWqId);
    assert_eq!(p.send_burst(&frames(2, 1)), 2);
    assert!(p.settle(64).is_empty());
    assert_eq!(p.rq.error(), Some(RQ_BAD_WQ_ID));
    assert_eq!(p.drv_rx().cqe_bad, 1);
    let x = p.dev(RX_PORT);
    assert_eq!((x.faults_injected, x.rx_cqes, x.rx_packets()), (1, 2, 2));
    assert_eq!(p.tx_in_flight(), 0, "the transmit side is not concerned");
    assert_eq!(p.drv_tx().cqe_bad, 0);
}

/// A spare SQ object on vport `port` of a pair set up through the HWC, to be destroyed as
/// the driver's recovery (reopening the channels) destroys its WQ objects. Returns it with
/// its two buffers (kept alive as long as the object).
fn spare_sq(
    h: &mut HwcHost,
    port: usize,
    eq: u32,
) -> (
    req::WqObj,
    rsnic_testbed::mem::HostBuf,
    rsnic_testbed::mem::HostBuf,
) {
    let (wq, cq) = (h.mem.alloc(4096), h.mem.alloc(4096));
    let o = h
        .create_wq_obj(port, req::GDMA_SQ, &wq, &cq, eq)
        .expect("spare SQ object");
    (o, wq, cq)
}

fn destroy_sq_obj(h: &mut HwcHost, o: &req::WqObj) {
    h.simple(req::MANA_DESTROY_WQ_OBJ, |b, who| {
        req::destroy_wq_obj(b, who, req::GDMA_SQ, o.handle)
    })
    .expect("MANA_DESTROY_WQ_OBJ");
}

#[test]
fn tx_stall_holds_the_wqes_until_an_sq_of_the_port_is_destroyed() {
    let (mut p, mut h, _) = ManaPair::new_hwc(ManaConfig::default());
    let (spare, _wq, _cq) = spare_sq(&mut h, TX_PORT, p.tx_eq.id());
    assert!(p.dev.borrow_mut().inject(TX_PORT, Fault::TxStall));
    assert_eq!(p.send_burst(&frames(8, 1)), 8);
    assert!(p.settle(64).is_empty());
    let t = p.dev(TX_PORT);
    assert!(t.sq_doorbells > 0, "the doorbells were accepted");
    assert_eq!((t.wqes, t.tx_cqes), (0, 0), "nothing executed, no CQE");
    assert_eq!(p.tx_in_flight(), 8);
    // Still nothing on a later run; a stall is not counted (as ConnectX's).
    assert_eq!(p.run_device(), 0);
    assert_eq!(p.dev(TX_PORT).faults_injected, 0);
    // MANA's recovery destroys the port's WQ objects: the first SQ destroyed ends the
    // stall, and the other SQ's posted WQEs execute.
    destroy_sq_obj(&mut h, &spare);
    assert_eq!(numbers(&p.settle(64)), (0..8).collect::<Vec<u8>>());
    assert_eq!(p.tx_in_flight(), 0);
    assert_eq!(p.dev(TX_PORT).wqes, 8);
    assert!(p.sq.error().is_none());
}

#[test]
fn a_stall_ends_only_when_an_sq_of_its_own_port_is_destroyed() {
    let (mut p, mut h, _) = ManaPair::new_hwc(ManaConfig::default());
    let (other, _wq, _cq) = spare_sq(&mut h, RX_PORT, p.rx_eq.id());
    let (own, _wq2, _cq2) = spare_sq(&mut h, TX_PORT, p.tx_eq.id());
    assert!(p.dev.borrow_mut().inject(TX_PORT, Fault::TxStall));
    assert_eq!(p.send_burst(&frames(2, 1)), 2);
    // Another port's SQ: still stalled.
    destroy_sq_obj(&mut h, &other);
    assert!(p.settle(64).is_empty());
    assert_eq!(p.dev(TX_PORT).wqes, 0);
    destroy_sq_obj(&mut h, &own);
    assert_eq!(p.settle(64).len(), 2);
}

#[test]
fn cmd_fail_fails_every_request_of_the_type_until_cleared() {
    let mut h = HwcHost::new(new_mana(2));
    let mut eqs = h.alloc_eqs(2);
    h.probe(&mut eqs, 4096).expect("probe");
    h.dev
        .borrow_mut()
        .fail_request(Some(req::MANA_CONFIG_VPORT_TX))
        .unwrap();
    // Every request of the type, whichever vport it names: the driver reads the failure
    // status from the response header (-EPROTO upstream).
    for vport in [TX_PORT, RX_PORT] {
        assert_eq!(
            h.config_vport_tx(vport),
            Err(CallError::Hwc(HwcError::Status(STATUS_INTERNAL_ERROR))),
            "vport {vport}"
        );
    }
    // Other requests are answered.
    let who = h.mana();
    let r = h
        .request(|b| req::query_gf_stat(b, who, req::GF_STAT_ALL))
        .unwrap();
    req::parse_query_gf_stat(&r, who).unwrap();
    assert_eq!(h.dev.borrow().hwc_counters().failed, 2);
    // `cmd_fail 0`: the requests work again.
    h.dev.borrow_mut().fail_request(None).unwrap();
    h.config_vport_tx(TX_PORT).expect("after cmd_fail 0");
    assert_eq!(h.dev.borrow().hwc_counters().failed, 2);
    // A code the device does not execute (a ConnectX opcode) is refused.
    let mut d = h.dev.borrow_mut();
    assert_eq!(d.fail_request(Some(0x905)), Err(CmdError::BadParam));
    assert_eq!(d.fail_request(Some(0)), Err(CmdError::BadParam));
}

#[test]
fn dev_stop_holds_the_transmit_side_and_its_events_until_a_wq_is_destroyed() {
    let mut p = ManaPair::new(ManaConfig::default());
    // NAPI's last empty polls armed the CQs; the EQs are not armed.
    p.settle(64);
    p.take_irqs();
    // A completion whose EQE waits on the (unarmed) TX EQ.
    assert_eq!(p.send_burst(&frames(1, 0)), 1);
    assert_eq!(p.run_device(), 1);
    assert!(!p.take_irqs().contains(&0));
    let t0 = p.dev(TX_PORT);
    assert_eq!((t0.wqes, t0.tx_cqes, t0.eqes), (1, 1, 1));

    assert!(p.dev.borrow_mut().inject(TX_PORT, Fault::DevStop));
    // Arming the EQ would raise its vector at once (an EQE is pending); the port is hung.
    p.tx_eq.arm(&p.env);
    assert_eq!(p.send_burst(&frames(4, 1)), 4);
    assert_eq!(p.run_device(), 0, "no WQE executed");
    assert!(!p.take_irqs().contains(&0), "no interrupt");
    let t = p.dev(TX_PORT);
    assert!(
        t.sq_doorbells > t0.sq_doorbells,
        "the doorbells were accepted"
    );
    assert_eq!(
        (t.wqes, t.tx_cqes, t.eqes, t.interrupts, t.faults_injected),
        (1, 1, 1, t0.interrupts, 1)
    );
    // The completion written before the stop is there; nothing after it.
    assert_eq!(numbers(&p.settle(64)), vec![0]);
    assert_eq!(p.tx_in_flight(), 4);
    assert_eq!(p.dev(TX_PORT).faults_injected, 1, "counted once");

    // A WQ object of the port destroyed (here an extra SQ through the device's API): the
    // data path runs again, the waiting EQ arm fires and the held WQEs execute.
    let buf = p.mem.alloc(4096);
    let spare = p
        .dev
        .borrow_mut()
        .create_sq(TX_PORT, buf.dma_addr(), 4096, p.ids[1])
        .expect("an SQ can be made while the data path hangs");
    p.dev.borrow_mut().destroy_sq(spare).unwrap();
    assert_eq!(p.run_device(), 4);
    assert!(p.take_irqs().contains(&0), "the arm that waited fired");
    assert_eq!(numbers(&p.settle(64)), vec![0, 1, 2, 3]);
    assert_eq!(p.tx_in_flight(), 0);
    assert!(p.sq.error().is_none());
    assert_eq!(p.dev(TX_PORT).faults_injected, 1);
}

#[test]
fn dev_stop_drops_what_arrives_while_the_hwc_goes_on() {
    let (mut p, mut h, o) = ManaPair::new_hwc(ManaConfig::default());
    let (spare, _wq, _cq) = spare_sq(&mut h, RX_PORT, p.rx_eq.id());
    assert!(p.dev.borrow_mut().inject(RX_PORT, Fault::DevStop));
    assert_eq!(p.send_burst(&frames(4, 1)), 4);
    assert!(p.settle(64).is_empty());
    let (t, x) = (p.dev(TX_PORT), p.dev(RX_PORT));
    assert_eq!(t.tx_packets(), 4, "the sending port is not stopped");
    assert_eq!(p.tx_in_flight(), 0);
    assert_eq!(
        (
            x.rx_stopped,
            x.rx_cqes,
            x.rx_packets(),
            x.hc_rx_discards_no_wqe
        ),
        (4, 0, 0, 0)
    );
    assert_eq!(x.faults_injected, 1);
    // The control path is alive: requests are answered. The fence's CQE, data path, is not
    // written.
    h.simple(req::MANA_FENCE_RQ, |b, who| {
        req::fence_rq(b, who, o.rq.handle)
    })
    .expect("MANA_FENCE_RQ is answered");
    let (_, poll) = p.poll_rx_full(64);
    assert_eq!(poll.work, 0, "no CQE");
    // MANA's recovery destroys the port's WQ objects: the first one ends the stop.
    destroy_sq_obj(&mut h, &spare);
    assert_eq!(p.send_burst(&frames(4, 2)), 4);
    assert_eq!(numbers(&p.settle(64)), vec![0, 1, 2, 3]);
    assert!(p.rq.error().is_none());
    let x = p.dev(RX_PORT);
    assert_eq!((x.rx_stopped, x.rx_packets(), x.faults_injected), (4, 4, 1));
}

#[test]
fn tx_bad_owner_reads_as_a_cq_overflow_and_the_sq_stops_until_reopened() {
    let mut p = ManaPair::new(ManaConfig::default());
    let num = p.sq.cq().num();
    // Past the first pass of the TX CQ (256 entries): the next CQE's owner count is 2.
    let mut sent = 0;
    while sent <= num as usize {
        sent += p.send_burst(&frames(64, 1));
        p.settle(64);
    }
    assert_eq!(p.tx_in_flight(), 0);
    let head = p.sq.cq().head();
    let pass = (head / num) & 7;
    assert_eq!(pass, 2);
    assert!(p.dev.borrow_mut().inject(TX_PORT, Fault::TxBadOwner));
    assert_eq!(p.dev(TX_PORT).faults_injected, 0, "armed, not yet taken");
    assert_eq!(p.send_burst(&frames(4, 2)), 4);
    // The frames went out; the first CQE's owner bits stop the SQ.
    assert_eq!(numbers(&p.settle(64)), vec![0, 1, 2, 3]);
    assert_eq!(p.sq.error(), Some(SqError::CqOverflow));
    let d = p.drv_tx();
    assert_eq!((d.cq_overflow, d.cqe_bad), (1, 0));
    assert_eq!(p.tx_in_flight(), 4, "nothing released");
    // The CQE is whole (TX_OKAY, this SQ) but its owner count is its pass's XOR 4: 6, not 2.
    // The driver reads the pass before (1) as "not yet written", anything else but 2 as an
    // overflow.
    let mut b = [0u8; 64];
    p.sq.cq()
        .buffer()
        .read((head & (num - 1)) as usize * 64, &mut b);
    let c = Cqe::decode(&b);
    assert_eq!(
        (c.header().cqe_type, c.wq_num, c.is_sq, u32::from(c.owner)),
        (CQE_TX_OKAY, p.ids[0], true, pass ^ BAD_OWNER_XOR)
    );
    assert_eq!(owner_check(c.owner, head, num), Owner::Overflow);
    assert_eq!(owner_check((pass - 1) as u8, head, num), Owner::Empty);
    assert_eq!(owner_check((pass + 1) as u8, head, num), Owner::Overflow);
    let t = p.dev(TX_PORT);
    assert_eq!((t.faults_injected, t.tx_err_cqes), (1, 0), "applied once");
    // MANA's recovery, the channels reopened: the SQ and its CQ destroyed and made again,
    // the four packets dropped (they are the receiver's), and the new SQ carries traffic.
    let r = p.reopen();
    assert_eq!((r.tx_dropped, r.tx_abandoned, r.tx_failed), (4, 0, 0));
    assert!(p.sq.error().is_none());
    assert_eq!(p.send_burst(&frames(8, 3)), 8);
    assert_eq!(numbers(&p.settle(64)), (0..8).collect::<Vec<u8>>());
    assert_eq!(p.tx_in_flight(), 0);
    assert_eq!(
        p.drv_tx().cq_overflow,
        1,
        "the closed SQ's counters are kept"
    );
    assert_eq!(p.dev(TX_PORT).faults_injected, 1);
}
