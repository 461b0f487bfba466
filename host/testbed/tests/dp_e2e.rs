//! End to end: the driver-side SQ and RQ of dp/mlx5 against the simulated ConnectX of
//! sim/mlx5, port 0 wired to port 1. Packets go out through regular WQEs or MPWQE
//! sessions (with and without inlining), arrive through the RQ, and the figures the design
//! asks for (doorbells, WQEBBs, PCIe inbound bytes per packet vs. the floor) are printed.
//!
//! `cargo test -p rsnic-testbed --test dp_e2e -- --nocapture` prints the table.

mod dp_common;

use dp_common::*;
use rsnic_core::dp::hw::Coherent;
use rsnic_core::dp::mlx5::cq::{Cq, CQ_DB_REQ_NOT};
use rsnic_core::dp::mlx5::rq::{Rq, RqParams};
use rsnic_core::dp::mlx5::sq::{Sq, SqParams, WqeInfo};
use rsnic_core::dp::mlx5::tx::{DmaEntry, InlineMode};
use rsnic_core::sim::mlx5::{CqConfig, RqConfig, SqConfig, SQ_DOORBELL, UAR_PAGE_SIZE};
use rsnic_testbed::bus::Testbed;

struct Figures {
    pkts: u64,
    doorbells: u64,
    wqebbs: u64,
    in_bytes: u64,
    floor: u64,
    inlnw: u64,
}

fn run(mpwqe: bool, inline: bool, frame_len: usize, bursts: u32) -> Figures {
    const BURST: u32 = 32;
    let mut tb = Testbed::new();
    let mem = tb.mem.clone();
    let mut env = Env::new(&mem);
    env.fwd = Some(tb.bus());
    let lsz = 10u8;
    let n = 1usize << lsz;
    let buf = |len: usize| LBuf::new(&mem, len, "", None);

    // Port 0: TX CQ + SQ.
    let (tcq_buf, tcq_dbr) = (buf(n * 64), buf(8));
    let tcqn = tb
        .device()
        .create_cq(&CqConfig {
            port: 0,
            buf: tcq_buf.dma_addr(),
            log_size: lsz,
            dbr: tcq_dbr.dma_addr(),
            vector: 0,
            compress: false,
        })
        .unwrap();
    let (wq, sq_dbr) = (buf(n * 64), buf(8));
    let sqn = tb
        .device()
        .create_sq(&SqConfig {
            port: 0,
            buf: wq.dma_addr(),
            log_size: lsz,
            dbr: sq_dbr.dma_addr(),
            cqn: tcqn,
        })
        .unwrap();
    let tcq = Cq::new(tcq_buf, tcq_dbr, 0, lsz, tcqn, 0).unwrap();
    let mut sq: TestSq = Sq::new(
        SqParams {
            log_sz: lsz,
            sqn,
            lkey: LKEY,
            db_offset: SQ_DOORBELL,
            dbr_off: 0,
            min_inline: InlineMode::None,
            vlan_need_l2_inline: false,
            max_sq_wqebbs: 16,
            mpwqe,
            mpwqe_inline: inline,
        },
        wq,
        sq_dbr,
        tcq,
        (0..n).map(|_| WqeInfo::default()).collect(),
        (0..4 * n).map(|_| None).collect(),
        vec![DmaEntry::default(); 4 * n],
    )
    .unwrap();

    // Port 1: RX CQ (compressed) + RQ.
    let (rcq_buf, rcq_dbr) = (buf(n * 64), buf(8));
    let rcqn = tb
        .device()
        .create_cq(&CqConfig {
            port: 1,
            buf: rcq_buf.dma_addr(),
            log_size: lsz,
            dbr: rcq_dbr.dma_addr(),
            vector: 1,
            compress: true,
        })
        .unwrap();
    let (rwq, rq_dbr) = (buf(n * 16), buf(8));
    let rqn = tb
        .device()
        .create_rq(&RqConfig {
            port: 1,
            buf: rwq.dma_addr(),
            log_size: lsz,
            log_stride: 4,
            dbr: rq_dbr.dma_addr(),
            cqn: rcqn,
        })
        .unwrap();
    tb.device().set_rss(1, &[rqn]).unwrap();
    let rcq = Cq::new(rcq_buf, rcq_dbr, 0, lsz, rcqn, UAR_PAGE_SIZE).unwrap();
    let mut rq: TestRq = Rq::new(
        RqParams {
            log_sz: lsz,
            buf_size: 2048,
            lkey: LKEY,
            dbr_off: 0,
            wqe_bulk: 8,
        },
        rwq,
        rq_dbr,
        rcq,
        (0..n).map(|_| None).collect(),
    )
    .unwrap();
    rq.post(&mut env);
    rq.cq_mut().arm(CQ_DB_REQ_NOT, &env, &env);

    let base = tb.counters(0);
    let mut sent = 0u32;
    let mut received = 0u32;
    let mut tx_done = 0u32;
    for b in 0..bursts {
        for k in 0..BURST {
            let id = b * BURST + k;
            let frame = udp4_frame(frame_len, id as u8);
            sq.xmit(Pkt::new(&mem, id, frame, vec![]), k != BURST - 1, &mut env)
                .unwrap();
            sent += 1;
        }
        tb.step();
        // TX completions every 8 bursts, so up to 256 packets are outstanding.
        if b % 8 == 7 || b == bursts - 1 {
            sq.poll_cq(&mut env, |p| {
                assert_eq!(p.id, tx_done);
                tx_done += 1;
            });
        }
        loop {
            let r = rq.napi_poll(64, &mut env, |rb, c| {
                assert_eq!(c.len as usize, frame_len);
                let mut got = vec![0u8; frame_len];
                rb.buf.read(0, &mut got);
                assert_eq!(
                    got,
                    udp4_frame(frame_len, received as u8),
                    "packet {received}"
                );
                received += 1;
            });
            tb.step();
            if r.work == 0 {
                break;
            }
        }
    }
    assert_eq!((tx_done, received), (sent, sent));
    assert!(env.maps.is_empty());
    assert!(sq.error().is_none() && rq.error().is_none());
    let c = tb.counters(0);
    Figures {
        pkts: u64::from(sent),
        doorbells: c.sq_doorbells - base.sq_doorbells,
        wqebbs: c.wqebbs - base.wqebbs,
        in_bytes: c.pcie.in_bytes - base.pcie.in_bytes,
        floor: c.tx_floor_in_bytes - base.tx_floor_in_bytes,
        inlnw: sq.stats.inlnw,
    }
}

#[test]
fn regular_mpwqe_and_inline_end_to_end() {
    let bursts = 64;
    println!(
        "frame  mode           pkts  doorbells/burst  wqebbs/pkt  in_bytes/pkt  floor/pkt  inlined"
    );
    for frame_len in [60usize, 250] {
        let mut rows = Vec::new();
        for (name, mpwqe, inline) in [
            ("regular", false, false),
            ("mpwqe", true, false),
            ("mpwqe+inline", true, true),
        ] {
            let f = run(mpwqe, inline, frame_len, bursts);
            println!(
                "{frame_len:5}  {name:13} {:5}  {:15}  {:10.3}  {:12.1}  {:9.1}  {:7}",
                f.pkts,
                f.doorbells as f64 / f64::from(bursts),
                f.wqebbs as f64 / f.pkts as f64,
                f.in_bytes as f64 / f.pkts as f64,
                f.floor as f64 / f.pkts as f64,
                f.inlnw
            );
            // One SQ doorbell per burst of 32, whatever the path.
            assert_eq!(f.doorbells, u64::from(bursts));
            rows.push(f);
        }
        // MPWQE needs fewer WQEBBs and fewer inbound bytes than one WQE per packet.
        assert!(rows[1].wqebbs * 3 < rows[0].wqebbs);
        assert!(rows[1].in_bytes < rows[0].in_bytes);
        assert!(rows[2].inlnw > 0);
    }
}
