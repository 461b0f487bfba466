// SPDX-License-Identifier: GPL-2.0

//! Fault injection into the simulated ConnectX (`Device::inject`, debugfs `inject` in the
//! kernel): each fault applies once, to the next event of its kind, and the driver's queues
//! see it as they would see the hardware's fault.

use rsnic_core::dp::mlx5::cqe::{SYND_LOCAL_PROT, SYND_LOCAL_QP_OP};
use rsnic_core::dp::mlx5::rq::RqError;
use rsnic_core::dp::mlx5::sq::SqError;
use rsnic_core::sim::mlx5::Fault;
use rsnic_testbed::pair::{Pair, PairConfig, TxFrame, RX_PORT, TX_PORT};

fn frame(seq: u8) -> TxFrame {
    let mut f = vec![0u8; 60];
    f[..6].copy_from_slice(&[0x02, 0, 0, 0, 0, 2]);
    f[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 1]);
    f[12..14].copy_from_slice(&[0x88, 0xb5]);
    f[14] = seq;
    TxFrame::linear(f)
}

/// Injects `fault` on the TX port, sends one frame and checks that its WQE failed with
/// `syndrome`/`vendor`, sent nothing, and stopped the SQ; returns the TX port's counters.
fn tx_fault_fails_the_next_wqe(
    fault: Fault,
    syndrome: u8,
    vendor: u8,
) -> rsnic_core::sim::mlx5::PortCounters {
    let mut p = Pair::new(PairConfig::default());
    assert!(p.tb.device().inject(TX_PORT, fault));
    p.send_one(&frame(0), false).unwrap();
    p.run_device();
    let r = p.poll_tx();
    assert_eq!(
        r.error,
        Some(SqError::ReqErr {
            syndrome,
            vendor,
            wqe_counter: 0
        })
    );
    assert!(p.poll_rx(64).is_empty(), "the failed WQE sent nothing");
    let c = p.dev_tx();
    assert_eq!((c.faults_injected, c.tx_err_cqes, c.tx_packets), (1, 1, 0));
    c
}

#[test]
fn tx_err_fails_the_next_wqe_once() {
    let c = tx_fault_fails_the_next_wqe(Fault::TxErrCqe(SYND_LOCAL_QP_OP), SYND_LOCAL_QP_OP, 0);
    assert_eq!(c.dma_faults, 0);
}

#[test]
fn rx_faults_stop_the_rq_once() {
    let mut p = Pair::new(PairConfig::default());
    // An error CQE that stops the RQ.
    assert!(p
        .tb
        .device()
        .inject(RX_PORT, Fault::RxErrCqe(SYND_LOCAL_PROT)));
    p.send_one(&frame(0), false).unwrap();
    p.run_device();
    assert!(p.poll_rx(64).is_empty());
    assert_eq!(
        p.rq.error(),
        Some(RqError::ErrCqe {
            syndrome: SYND_LOCAL_PROT,
            wqe_counter: 0
        })
    );
    let c = p.dev_rx();
    assert_eq!((c.faults_injected, c.rx_err_cqes), (1, 1));
    // The device's RQ is in error now: the next frame is dropped there.
    p.send_one(&frame(1), false).unwrap();
    p.run_device();
    assert_eq!(p.dev_rx().rx_no_rq_drops, 1);
}

#[test]
fn rx_bad_wqe_counter_is_a_corrupt_cqe() {
    let mut p = Pair::new(PairConfig::default());
    p.send_one(&frame(0), false).unwrap();
    p.run_device();
    assert_eq!(p.poll_rx(64).len(), 1);
    assert!(p.tb.device().inject(RX_PORT, Fault::RxBadWqeCounter));
    p.send_one(&frame(1), false).unwrap();
    p.run_device();
    assert!(p.poll_rx(64).is_empty());
    assert_eq!(
        p.rq.error(),
        Some(RqError::BadWqeCounter {
            got: 8,
            expected: 1
        })
    );
    assert_eq!(p.dev_rx().faults_injected, 1);
    assert!(
        !p.tb.device().inject(9, Fault::RxBadWqeCounter),
        "no port 9"
    );
}

#[test]
fn corrupt_cqes_are_caught_by_the_driver() {
    let mut p = Pair::new(PairConfig::default());
    // An RX CQE claiming 1 MiB is counted and its buffer recycled; the RQ goes on.
    assert!(p.tb.device().inject(RX_PORT, Fault::RxBadByteCount));
    p.send_one(&frame(0), false).unwrap();
    p.run_device();
    assert!(p.poll_rx(64).is_empty());
    assert_eq!(p.drv_rx().cqe_bad, 1);
    assert!(
        p.rq.error().is_none(),
        "a bad byte count does not stop the RQ"
    );
    assert_eq!(p.dev_rx().faults_injected, 1);
    // A TX CQE naming another SQ: nothing released, the SQ stops for recovery.
    assert!(p.tb.device().inject(TX_PORT, Fault::TxBadSqn));
    p.send_one(&frame(1), false).unwrap();
    p.run_device();
    assert_eq!(p.poll_rx(64).len(), 1, "the frame itself went out");
    let r = p.poll_tx();
    assert!(matches!(r.error, Some(SqError::BadSqn { .. })), "{r:?}");
    assert_eq!(
        r.packets, 1,
        "frame 0's CQE was good, frame 1's names another SQ"
    );
    assert_eq!(p.tx_in_flight(), 1);
}

#[test]
fn a_dma_read_fault_fails_the_next_packet_read_once() {
    // LOCAL_PROT, with the model's WqeError code (ReadFault = 14) as the vendor syndrome.
    let c = tx_fault_fails_the_next_wqe(Fault::DmaReadFault, SYND_LOCAL_PROT, 14);
    assert_eq!(c.dma_faults, 1);
}

#[test]
fn rx_err_cqes_stop_the_rq_only_for_the_syndromes_mlx5e_recovers() {
    use rsnic_core::dp::mlx5::cqe::{SYND_LOCAL_LENGTH, SYND_LOCAL_QP_OP, SYND_WR_FLUSH};
    // Syndromes after which the RQ goes on (mlx5e does not recover for them): the next
    // frame is delivered.
    for synd in [SYND_LOCAL_LENGTH, 0x10, 0x13, 0x22] {
        let mut p = Pair::new(PairConfig::default());
        assert!(p.tb.device().inject(RX_PORT, Fault::RxErrCqe(synd)));
        p.send_one(&frame(0), false).unwrap();
        p.run_device();
        assert!(
            p.poll_rx(64).is_empty(),
            "syndrome {synd:#x}: the frame was lost"
        );
        assert!(p.rq.error().is_none(), "syndrome {synd:#x}");
        p.send_one(&frame(1), false).unwrap();
        p.run_device();
        p.poll_tx();
        let rx = p.poll_rx(64);
        assert_eq!(rx.len(), 1, "syndrome {synd:#x}: the RQ stopped");
        assert_eq!(rx[0].bytes[14], 1);
        assert_eq!(p.dev_rx().rx_no_rq_drops, 0);
    }
    // The three that stop it.
    for synd in [SYND_LOCAL_QP_OP, SYND_LOCAL_PROT, SYND_WR_FLUSH] {
        let mut p = Pair::new(PairConfig::default());
        assert!(p.tb.device().inject(RX_PORT, Fault::RxErrCqe(synd)));
        p.send_one(&frame(0), false).unwrap();
        p.run_device();
        assert!(p.poll_rx(64).is_empty());
        assert!(p.rq.error().is_some(), "syndrome {synd:#x}");
    }
}
