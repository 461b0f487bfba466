// SPDX-License-Identifier: GPL-2.0

//! Fault injection into the simulated ConnectX (`Device::inject`, debugfs `inject` in the
//! kernel): each fault applies once, to the next event of its kind, and the driver's queues
//! see it as they would see the hardware's fault. A stopped data path (`dev_stop`) holds
//! everything until a queue of the port is reset, while commands keep working. A TX CQE with
//! the owner bit of the previous pass hides itself and every CQE after it from the driver
//! until its CQ is made again: an SQ reset does not get past it.

use rsnic_core::hwif::hw::Coherent;
use rsnic_core::hwif::mlx5::cmd::CmdQueue;
use rsnic_core::hwif::mlx5::cq::Cq;
use rsnic_core::hwif::mlx5::cqe::{SYND_LOCAL_PROT, SYND_LOCAL_QP_OP};
use rsnic_core::hwif::mlx5::rq::RqError;
use rsnic_core::hwif::mlx5::sq::SqError;
use rsnic_core::hwif::mlx5::tx::TxQueue;
use rsnic_core::sim::mlx5::{api_uar_offset, CqConfig, Fault, SqConfig};
use rsnic_testbed::bus::Testbed;
use rsnic_testbed::fwpages::{self, HostPages};
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
    use rsnic_core::hwif::mlx5::cqe::{SYND_LOCAL_LENGTH, SYND_LOCAL_QP_OP, SYND_WR_FLUSH};
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

#[test]
fn dev_stop_holds_the_sq_and_its_interrupts_until_a_reset() {
    let mut p = Pair::new(PairConfig::default());
    // A completion on each port, not polled yet.
    p.send_one(&frame(0), false).unwrap();
    assert_eq!(p.run_device(), 1);
    p.take_irqs();
    assert!(p.tb.device().inject(TX_PORT, Fault::DevStop));
    // Arming the CQs would interrupt at once (each has a CQE beyond its consumer index):
    // only the RX port, which is not stopped, does.
    p.arm();
    for i in 1..=4 {
        p.send_one(&frame(i), i < 4).unwrap();
    }
    assert_eq!(p.run_device(), 0, "no WQE executed");
    assert_eq!(p.take_irqs(), vec![1], "no interrupt from the stopped port");
    let c = p.dev_tx();
    assert!(c.sq_doorbells >= 2, "the doorbell was latched");
    assert_eq!(
        (c.wqes, c.tx_cqes, c.interrupts, c.faults_injected),
        (1, 1, 0, 1)
    );
    assert_eq!(p.run_device(), 0);
    assert_eq!(p.dev_tx().faults_injected, 1, "counted once");
    // What completed before the stop is there, nothing after it.
    assert_eq!(p.poll_tx().packets, 1);
    assert_eq!(p.poll_rx(64).len(), 1);
    assert_eq!(p.tx_in_flight(), 4);
    // The driver's recovery (RDY -> ERR -> RST -> RDY) ends the stop: the held WQEs are
    // dropped with the reset, the waiting arm is evaluated, and traffic flows again.
    let r = p.recover_tx();
    assert_eq!((r.dropped, r.abandoned), (4, 4));
    p.send_one(&frame(9), false).unwrap();
    assert_eq!(p.run_device(), 1);
    assert!(p.take_irqs().contains(&0), "the arm that waited fired");
    assert_eq!(p.poll_tx().packets, 1);
    let rx = p.poll_rx(64);
    assert_eq!(rx.len(), 1);
    assert_eq!(rx[0].bytes[14], 9);
    assert_eq!(p.tx_in_flight(), 0);
}

#[test]
fn dev_stop_drops_what_arrives_until_the_rq_is_reset() {
    let mut p = Pair::new(PairConfig::default());
    assert!(p.tb.device().inject(RX_PORT, Fault::DevStop));
    for i in 0..3 {
        p.send_one(&frame(i), i < 2).unwrap();
    }
    assert_eq!(p.run_device(), 3, "the sending port is not stopped");
    assert_eq!(p.poll_tx().packets, 3);
    assert!(p.poll_rx(64).is_empty());
    let x = p.dev_rx();
    assert_eq!(
        (x.rx_stopped, x.rx_packets, x.rx_cqes, x.rx_out_of_buffer),
        (3, 0, 0, 0)
    );
    assert_eq!(x.faults_injected, 1);
    assert!(p.rq.error().is_none());
    // An RQ reset (the driver's RQ recovery) ends the stop.
    p.recover_rx();
    p.send_one(&frame(7), false).unwrap();
    p.run_device();
    p.poll_tx();
    let rx = p.poll_rx(64);
    assert_eq!(rx.len(), 1);
    assert_eq!(rx[0].bytes[14], 7);
    assert_eq!(p.dev_rx().rx_stopped, 3);
}

/// A spare SQ (with its CQ) on `port`, made through the device's API.
fn spare_sq(p: &Pair, port: usize) -> u32 {
    let mem = &p.tb.mem;
    let (cq, cq_dbr, wq, dbr) = (
        mem.alloc(64 * 64),
        mem.alloc(8),
        mem.alloc(64 * 64),
        mem.alloc(8),
    );
    let mut d = p.tb.device();
    let cqn = d
        .create_cq(&CqConfig {
            port,
            buf: cq.dma_addr(),
            log_size: 6,
            dbr: cq_dbr.dma_addr(),
            vector: 0,
            compress: false,
        })
        .unwrap();
    d.create_sq(&SqConfig {
        port,
        buf: wq.dma_addr(),
        log_size: 6,
        dbr: dbr.dma_addr(),
        cqn,
    })
    .unwrap()
}

#[test]
fn dev_stop_ends_when_a_queue_of_the_port_is_destroyed() {
    let mut p = Pair::new(PairConfig::default());
    let (other, own) = (spare_sq(&p, RX_PORT), spare_sq(&p, TX_PORT));
    assert!(p.tb.device().inject(TX_PORT, Fault::DevStop));
    p.send_one(&frame(0), false).unwrap();
    assert_eq!(p.run_device(), 0);
    // Another port's SQ destroyed: still stopped.
    p.tb.device().destroy_sq(other).unwrap();
    assert_eq!(p.run_device(), 0);
    // One of the port's own: the data path runs again, the held WQE executes.
    p.tb.device().destroy_sq(own).unwrap();
    assert_eq!(p.run_device(), 1);
    assert_eq!(p.poll_tx().packets, 1);
    assert_eq!(p.poll_rx(64).len(), 1);
    assert_eq!(p.dev_tx().faults_injected, 1);
}

#[test]
fn commands_keep_working_while_the_data_path_is_stopped() {
    let mut tb = Testbed::new();
    assert!(tb.device().inject(0, Fault::DevStop));
    let bus = tb.bus();
    let mut q = CmdQueue::new(tb.mem.alloc(4096), tb.mem.alloc(16 * 1024)).unwrap();
    let mut fw = HostPages::default();
    let (b, r) = fwpages::bring_up(&mut tb, &mut q, &bus, &mut fw);
    if let Err(e) = r {
        panic!("a command failed on a stopped port: {e}");
    }
    assert!(b.resources().hca_initialized);
    assert_eq!(tb.counters(0).cmd_errors, 0);
}

/// Re-creates the pair's SQ and its CQ over fresh memory, as mlx5e recovers a TX timeout
/// that no lost interrupt explains (`mlx5e_tx_reporter_timeout_recover`:
/// `mlx5e_safe_reopen_channels`): the device's SQ then CQ destroyed, every packet in flight
/// dropped (BQL reset), a new CQ and SQ made (they get the old numbers back: the same table
/// slots), the queue woken. Returns the packets dropped.
fn recreate_sq(p: &mut Pair) -> u32 {
    p.env.flush_mmio();
    let (sqn, cqn) = (p.queue_numbers().0, p.sq.cq().cqn());
    let log = p.config().sq_log_sz;
    {
        let mut d = p.tb.device();
        d.destroy_sq(sqn).unwrap();
        d.destroy_cq(cqn).unwrap();
    }
    let mut drained = Vec::new();
    let (pkts, _) = p.sq.drain(&mut p.env, |k| drained.push(k));
    for k in drained {
        p.tx.release(k);
    }
    p.env.reset_bql();
    let n = 1usize << log;
    let mem = p.tb.mem.clone();
    let (cq_buf, cq_dbr, wq, dbr) = (
        mem.alloc(n * 64),
        mem.alloc(8),
        mem.alloc(n * 64),
        mem.alloc(8),
    );
    let mut d = p.tb.device();
    let new_cqn = d
        .create_cq(&CqConfig {
            port: TX_PORT,
            buf: cq_buf.dma_addr(),
            log_size: log,
            dbr: cq_dbr.dma_addr(),
            vector: 0,
            compress: false,
        })
        .unwrap();
    let new_sqn = d
        .create_sq(&SqConfig {
            port: TX_PORT,
            buf: wq.dma_addr(),
            log_size: log,
            dbr: dbr.dma_addr(),
            cqn: new_cqn,
        })
        .unwrap();
    drop(d);
    assert_eq!((new_sqn, new_cqn), (sqn, cqn), "the pair keeps its numbers");
    let cfg = p.config();
    let cq = Cq::new(cq_buf, cq_dbr, 0, log, cqn, api_uar_offset(TX_PORT)).unwrap();
    p.sq = rsnic_testbed::pair::tx_sq(&cfg, log, sqn, wq, dbr, cq).unwrap();
    p.env.wake();
    pkts
}

#[test]
fn tx_bad_owner_hides_the_cqe_from_the_driver_until_its_cq_is_made_again() {
    let mut p = Pair::new(PairConfig {
        sq_log_sz: 6,
        ..PairConfig::default()
    });
    let size = 1u32 << 6;
    // One pass and a bit over the 64-entry TX CQ: the next CQE is at index 65, on the
    // second pass, where the owner bit is 1 (the first pass writes 0; the driver initialised
    // every slot to 1). The corrupt CQE carries 0.
    for i in 0..=size {
        p.send_one(&frame(i as u8), false).unwrap();
        p.run_device();
        assert_eq!(p.poll_tx().packets, 1);
    }
    assert_eq!(p.poll_rx(128).len(), 65);
    let at = p.sq.cq().cc();
    assert_eq!((at, p.sq.cq().parity(at)), (size + 1, 1));
    assert!(p.tb.device().inject(TX_PORT, Fault::TxBadOwner));
    assert_eq!(p.dev_tx().faults_injected, 0, "armed, not yet taken");
    // The queue fills and stops: every WQE executes and goes on the wire, no completion
    // comes back.
    let mut sent = 0u8;
    while !p.tx_stopped() {
        p.send_one(&frame(100 + sent), false).unwrap();
        sent += 1;
    }
    assert_eq!(p.run_device(), usize::from(sent));
    let r = p.poll_tx();
    assert_eq!((r.cqes, r.packets, r.error), (0, 0, None), "{r:?}");
    assert_eq!(p.tx_in_flight(), usize::from(sent));
    assert_eq!(p.poll_rx(128).len(), usize::from(sent));
    // The CQE is there, whole (REQ, the WQE's counter, this SQ), with the owner bit of the
    // previous pass: the driver reads the slot as still the hardware's.
    let c = p.sq.cq().read_slot(at).0;
    let wqe_counter = u16::from_be_bytes([c[60], c[61]]);
    let sqn = u32::from_be_bytes([0, c[57], c[58], c[59]]);
    assert_eq!(
        (c[63] >> 4, c[63] & 1, wqe_counter, sqn),
        (0, 0, (size + 1) as u16, p.queue_numbers().0)
    );
    // The ones behind it are good, each with its own pass's owner bit.
    for k in 1..u32::from(sent) {
        let ctr = at + k;
        assert_eq!(
            p.sq.cq().read_slot(ctr).0[63] & 1,
            p.sq.cq().parity(ctr),
            "CQE {ctr}"
        );
    }
    let t = p.dev_tx();
    assert_eq!(
        (t.faults_injected, t.tx_cqes, t.cq_overruns, t.cqes_lost),
        (1, u64::from(size) + 1 + u64::from(sent), 0, 0)
    );
    // An SQ reset (ERR -> RST -> RDY, the CQEs discarded) does not get past it: the
    // discard stops at the corrupt CQE, and the CQ, which the reset leaves alone, goes on
    // from where the device is. The next packet goes out, its completion is not seen.
    let rec = p.recover_tx();
    assert_eq!(
        (rec.dropped, rec.abandoned, rec.cqes_discarded),
        (u32::from(sent), 0, 0)
    );
    assert_eq!(p.sq.cq().cc(), at);
    p.send_one(&frame(200), false).unwrap();
    assert_eq!(p.run_device(), 1);
    assert_eq!(p.poll_rx(128).len(), 1);
    assert_eq!(p.poll_tx().packets, 0);
    // The SQ and its CQ made again: the model's new CQ starts clean (the fault applied
    // once) and completions come back.
    assert_eq!(recreate_sq(&mut p), 1);
    assert_eq!(p.tx_in_flight(), 0);
    for i in 0..8u8 {
        p.send_one(&frame(i), i < 7).unwrap();
    }
    assert_eq!(p.run_device(), 8);
    assert_eq!(p.poll_tx().packets, 8);
    let rx = p.poll_rx(128);
    assert_eq!(
        rx.iter().map(|f| f.bytes[14]).collect::<Vec<_>>(),
        (0..8).collect::<Vec<u8>>()
    );
    assert_eq!(p.tx_in_flight(), 0);
    assert_eq!(p.dev_tx().faults_injected, 1);
}
