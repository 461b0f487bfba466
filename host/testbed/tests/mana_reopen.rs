//! MANA's recovery by reopening the channels, on a port pair ([`ManaPair::reopen`],
//! [`ManaPair::reopen_hwc`]): for each fault the driver recovers that way, what the reopen
//! did with everything in flight, exactly: packets whose WQE the device never executed
//! (abandoned), packets it sent whose completion the driver never processed (dropped by the
//! driver, delivered by the receiver), RX completions a stopped RQ never read (discarded,
//! their frames lost), frames the device dropped (its counters); and that the new queues
//! carry traffic. Every packet is accounted once: `accepted == delivered + dropped`, with
//! the drop counters the chaos soak sums (`rsnic_testbed::chaos`).

mod mana_util;

use mana_util::faulted;
use rsnic_core::hwif::mana::gdma_req as req;
use rsnic_core::hwif::mana::hwc::HwcError;
use rsnic_core::sim::mana::{Fault, STATUS_INTERNAL_ERROR};
use rsnic_testbed::mana_hwc::CallError;
use rsnic_testbed::mana_pair::{
    numbered_frames as frames, ManaConfig, ManaPair, Reopened, RQ_BAD_WQ_ID, RX_PORT, SQ_BAD_WQ_ID,
    TX_PORT,
};

/// (frame number, tag) of what was received.
fn got(rx: &[rsnic_testbed::mana_pair::RxFrame]) -> Vec<(u8, u8)> {
    rx.iter().map(|f| (f.bytes[14], f.bytes[20])).collect()
}

fn expect(n: usize, tag: u8) -> Vec<(u8, u8)> {
    (0..n).map(|i| (i as u8, tag)).collect()
}

/// The drop counters of the chaos soak's MANA accounting, summed.
fn dropped(p: &ManaPair) -> u64 {
    let (d, r, x, o) = (p.drv_tx(), p.drv_rx(), p.dev(RX_PORT), p.reopen_counts());
    d.tx_cqe_err
        + d.tx_cqe_unknown_type
        + o.tx_abandoned
        + o.tx_failed
        + x.hc_rx_discards_no_wqe
        + x.rx_no_rq_drops
        + x.rx_stopped
        + r.rx_truncated
        + r.rx_dropped
        + r.cqe_bad
        + r.cqe_discarded
        + o.rx_cqes_unread
}

/// After the reopen: no packet in flight, the host side balanced, the new queues carry a
/// burst, and nothing of the old queues' memory is touched (it is unmapped).
fn back_in_service(p: &mut ManaPair, accepted: u64, delivered: u64) {
    assert_eq!(p.tx_in_flight(), 0);
    assert_eq!(p.tx.completed(), accepted);
    assert_eq!(
        accepted,
        delivered + dropped(p),
        "every packet accounted once"
    );
    let e = p.env.counts();
    assert_eq!(
        (e.bql_sent_pkts, e.bql_sent_bytes),
        (e.bql_done_pkts, e.bql_done_bytes)
    );
    assert_eq!((e.maps, p.env.live_mappings()), (e.unmaps, 0));
    assert!(!p.tx_stopped());
    assert!(p.sq.error().is_none() && p.rq.error().is_none());
    assert_eq!(p.send_burst(&frames(8, 9)), 8);
    assert_eq!(got(&p.settle(64)), expect(8, 9));
    assert_eq!(p.tx_in_flight(), 0);
    let (t, x) = (p.dev(TX_PORT), p.dev(RX_PORT));
    assert_eq!(
        t.dma_faults + x.dma_faults,
        0,
        "the device kept off the old queues"
    );
}

#[test]
fn a_corrupt_tx_cqe_reopens_and_the_packets_sent_are_the_receivers() {
    let mut p = faulted(TX_PORT, Fault::TxBadWqId);
    let posted = p.rq.posted();
    assert_eq!(p.send_burst(&frames(8, 1)), 8);
    // All eight went out and arrived; the first TX CQE names no WQ: the SQ stops there and
    // consumes the other seven unread.
    assert_eq!(got(&p.settle(64)), expect(8, 1));
    assert_eq!(p.sq.error(), Some(SQ_BAD_WQ_ID));
    let d = p.drv_tx();
    assert_eq!((d.cqe_bad, d.cqe_discarded, d.cqes), (1, 7, 8));
    assert_eq!(p.tx_in_flight(), 8);
    let r = p.reopen();
    assert_eq!(
        r,
        Reopened {
            tx_dropped: 8,
            tx_abandoned: 0,
            tx_failed: 0,
            tx_cqes_discarded: 7,
            tx_cqes_unread: 0,
            rx_cqes_discarded: 0,
            rx_cqes_unread: 0,
            rx_buffers_drained: posted,
            rx_posted: posted,
        }
    );
    // The driver dropped eight packets the device sent: they are the receiver's (all
    // delivered), not drops.
    back_in_service(&mut p, 8, 8);
    assert_eq!(p.drv_tx().cqe_bad, 1, "the closed SQ's counters are kept");
    assert_eq!(p.reopen_counts().reopens, 1);
}

#[test]
fn a_corrupt_rx_cqe_reopens_and_the_frames_after_it_are_discarded() {
    let mut p = faulted(RX_PORT, Fault::RxBadWqId);
    let posted = p.rq.posted();
    assert_eq!(p.send_burst(&frames(8, 1)), 8);
    // The first RX CQE names no WQ: the RQ stops there, its frame lost; the seven after it
    // are consumed unread.
    assert!(p.settle(64).is_empty());
    assert_eq!(p.rq.error(), Some(RQ_BAD_WQ_ID));
    let r0 = p.drv_rx();
    assert_eq!((r0.cqe_bad, r0.cqe_discarded, r0.cqes), (1, 7, 8));
    assert_eq!(p.tx_in_flight(), 0, "the transmit side is not concerned");
    let r = p.reopen();
    assert_eq!(
        r,
        Reopened {
            tx_dropped: 0,
            tx_abandoned: 0,
            tx_failed: 0,
            tx_cqes_discarded: 0,
            tx_cqes_unread: 0,
            rx_cqes_discarded: 7,
            rx_cqes_unread: 0,
            // The stopped RQ never moved its tail: every WQE is still its.
            rx_buffers_drained: posted,
            rx_posted: posted,
        }
    );
    back_in_service(&mut p, 8, 0);
    let x = p.dev(RX_PORT);
    assert_eq!((x.rx_packets(), x.faults_injected), (16, 1));
}

/// A port whose SQs execute nothing: the watchdog finds the packets in flight and no lost
/// interrupt, and the reopen drops them, none executed.
fn held_back(fault: Fault, counted: u64) {
    let mut p = faulted(TX_PORT, fault);
    let posted = p.rq.posted();
    assert_eq!(p.send_burst(&frames(8, 1)), 8);
    assert!(p.settle(64).is_empty());
    assert_eq!(p.tx_in_flight(), 8);
    assert!(
        p.sq.error().is_none(),
        "no error: only the watchdog sees it"
    );
    assert_eq!(
        (p.dev(TX_PORT).wqes, p.dev(TX_PORT).faults_injected),
        (0, counted)
    );
    let r = p.reopen();
    assert_eq!(
        r,
        Reopened {
            tx_dropped: 8,
            tx_abandoned: 8,
            rx_buffers_drained: posted,
            rx_posted: posted,
            ..Reopened::default()
        }
    );
    // Destroying the SQ ended the fault: the new SQ runs.
    back_in_service(&mut p, 8, 0);
    assert_eq!(p.dev(TX_PORT).wqes, 8);
    assert_eq!(p.dev(TX_PORT).faults_injected, counted);
}

#[test]
fn a_stalled_transmit_engine_is_reopened_and_what_it_held_abandoned() {
    held_back(Fault::TxStall, 0);
}

#[test]
fn a_stopped_sending_port_is_reopened_and_what_it_held_abandoned() {
    held_back(Fault::DevStop, 1);
}

#[test]
fn a_stopped_receiving_port_drops_what_arrives_until_the_reopen() {
    let mut p = faulted(RX_PORT, Fault::DevStop);
    assert_eq!(p.send_burst(&frames(8, 1)), 8);
    assert!(p.settle(64).is_empty());
    assert_eq!(p.tx_in_flight(), 0, "the sending port is not stopped");
    assert_eq!(p.dev(RX_PORT).rx_stopped, 8);
    let r = p.reopen();
    assert_eq!(
        (r.tx_dropped, r.rx_cqes_discarded, r.rx_cqes_unread),
        (0, 0, 0)
    );
    back_in_service(&mut p, 8, 0);
    assert_eq!(p.dev(RX_PORT).rx_stopped, 8);
}

#[test]
fn a_reopen_before_napi_ran_counts_the_completions_it_did_not_read() {
    let mut p = ManaPair::new(ManaConfig::default());
    assert_eq!(p.send_burst(&frames(8, 1)), 8);
    // The device sent and received everything; no NAPI round yet.
    assert_eq!(p.run_device(), 8);
    let r = p.reopen();
    // The close reaps the TX completions (nothing dropped); the healthy RQ's eight CQEs are
    // consumed unread by the drain and counted as discarded (their buffers recycled).
    assert_eq!(
        (
            r.tx_dropped,
            r.tx_cqes_unread,
            r.rx_cqes_discarded,
            r.rx_cqes_unread
        ),
        (0, 0, 8, 0)
    );
    let (x, rx) = (p.dev(RX_PORT), p.drv_rx());
    assert_eq!((x.rx_packets(), rx.packets, rx.cqe_discarded), (8, 0, 8));
    back_in_service(&mut p, 8, 0);
}

#[test]
fn reopening_a_settled_pair_keeps_every_counter_balanced() {
    let mut p = ManaPair::new(ManaConfig::default());
    for round in 0..3u8 {
        assert_eq!(p.send_burst(&frames(40, round)), 40);
        assert_eq!(got(&p.settle(64)), expect(40, round));
        assert_eq!(p.reopen().tx_dropped, 0);
        p.check_counters().unwrap();
    }
    assert_eq!(p.reopen_counts().reopens, 3);
    assert_eq!(p.drv_rx().packets, 120);
}

#[test]
fn a_pair_built_through_the_hwc_reopens_through_the_hwc() {
    let (mut p, mut h, mut o) = ManaPair::new_hwc(ManaConfig::default());
    let posted = p.rq.posted();
    let old = o;
    assert!(p.dev.borrow_mut().inject(TX_PORT, Fault::TxBadWqId));
    assert_eq!(p.send_burst(&frames(8, 1)), 8);
    assert_eq!(got(&p.settle(64)), expect(8, 1));
    assert!(p.sq.error().is_some());
    let r = p
        .reopen_hwc(&mut h, &mut o)
        .expect("reopen through the HWC");
    assert_eq!(
        (
            r.tx_dropped,
            r.tx_abandoned,
            r.tx_cqes_discarded,
            r.rx_buffers_drained
        ),
        (8, 0, 7, posted)
    );
    // The device reuses the freed slots: the new objects have the old ids.
    assert_eq!((o.sq.wq_id, o.rq.wq_id), (old.sq.wq_id, old.rq.wq_id));
    assert_eq!(p.ids, [o.sq.wq_id, o.sq.cq_id, o.rq.wq_id, o.rq.cq_id]);
    back_in_service(&mut p, 8, 8);
    p.reopen_hwc(&mut h, &mut o).expect("again");
    assert_eq!(p.send_burst(&frames(4, 2)), 4);
    assert_eq!(got(&p.settle(64)), expect(4, 2));
}

#[test]
fn a_reopen_through_the_hwc_fails_while_create_wq_obj_fails() {
    let (mut p, mut h, mut o) = ManaPair::new_hwc(ManaConfig::default());
    h.dev
        .borrow_mut()
        .fail_request(Some(req::MANA_CREATE_WQ_OBJ))
        .unwrap();
    assert_eq!(
        p.reopen_hwc(&mut h, &mut o),
        Err(CallError::Hwc(HwcError::Status(STATUS_INTERNAL_ERROR)))
    );
}
