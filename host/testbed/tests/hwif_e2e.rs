//! End to end: the driver-side SQ and RQ of hwif/mlx5 against the simulated ConnectX of
//! sim/mlx5, port 0 wired to port 1, through [`rsnic_testbed::pair`]. Packets go out through
//! regular WQEs or MPWQE sessions (with and without inlining), arrive through the RQ (CQE
//! compression on), and the figures the design asks for (doorbells, descriptor bytes, PCIe
//! inbound bytes per packet vs. the floor) are printed.
//!
//! `cargo test -p rsnic-testbed --test hwif_e2e -- --nocapture` prints the table.

use rsnic_core::hwif::mlx5::tx::{Gso, InlineMode, TxCsum};
use rsnic_core::sim::pkt;
use rsnic_testbed::fixtures::{tcp4_segment, udp4_frame};
use rsnic_testbed::pair::{Pair, PairConfig, TxFrame};

struct Figures {
    pkts: u64,
    doorbells: u64,
    wqebbs: u64,
    wqe_bytes: u64,
    nops: u64,
    in_bytes: u64,
    floor: u64,
    inlnw: u64,
}

fn run(mpwqe: bool, inline: bool, frame_len: usize, bursts: u32) -> Figures {
    const BURST: u32 = 32;
    let mut p = Pair::new(PairConfig {
        mpwqe,
        mpwqe_inline: inline,
        cqe_compress: true,
        ..PairConfig::default()
    });
    let base = p.dev_tx();
    let mut received = 0u32;
    for b in 0..bursts {
        let frames: Vec<TxFrame> = (0..BURST)
            .map(|k| TxFrame::linear(udp4_frame(frame_len, (b * BURST + k) as u8)))
            .collect();
        let r = p.send_burst(&frames);
        assert_eq!(r.accepted.len(), BURST as usize, "{r:?}");
        p.run_device();
        // TX completions every 8 bursts, so up to 256 packets are outstanding.
        if b % 8 == 7 {
            p.poll_tx();
        }
        loop {
            let got = p.poll_rx(64);
            if got.is_empty() {
                break;
            }
            for f in got {
                assert_eq!(f.comp.len as usize, frame_len);
                assert_eq!(
                    f.bytes,
                    udp4_frame(frame_len, received as u8),
                    "packet {received}"
                );
                received += 1;
            }
            p.run_device();
        }
    }
    assert!(p.settle(64).is_empty());
    let sent = bursts * BURST;
    assert_eq!((p.tx_completed(), received), (u64::from(sent), sent));
    assert!(p.sq.error().is_none() && p.rq.error().is_none());
    p.check_counters().unwrap();
    let c = p.dev_tx();
    Figures {
        pkts: u64::from(sent),
        doorbells: c.sq_doorbells - base.sq_doorbells,
        wqebbs: c.wqebbs - base.wqebbs,
        wqe_bytes: c.wqe_bytes - base.wqe_bytes,
        nops: c.nop_wqes - base.nop_wqes,
        in_bytes: c.pcie.in_bytes - base.pcie.in_bytes,
        floor: c.tx_floor_in_bytes - base.tx_floor_in_bytes,
        inlnw: p.drv_tx().inlnw,
    }
}

#[test]
fn regular_mpwqe_and_inline_end_to_end() {
    // Miri (orders of magnitude slower) runs the same checks over fewer bursts: 7 are
    // enough for inlining to switch on and for a session to reach a fragment edge.
    let bursts = if cfg!(miri) { 7 } else { 64 };
    println!(
        "frame  mode           pkts  doorbells/burst  wqebbs/pkt  desc/pkt  in_bytes/pkt  floor/pkt  inlined"
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
                "{frame_len:5}  {name:13} {:5}  {:15}  {:10.3}  {:8.2}  {:12.1}  {:9.1}  {:7}",
                f.pkts,
                f.doorbells as f64 / f64::from(bursts),
                f.wqebbs as f64 / f.pkts as f64,
                f.wqe_bytes as f64 / f.pkts as f64,
                f.in_bytes as f64 / f.pkts as f64,
                f.floor as f64 / f.pkts as f64,
                f.inlnw
            );
            // One SQ doorbell per burst of 32, whatever the path.
            assert_eq!(f.doorbells, u64::from(bursts));
            rows.push(f);
        }
        // Regular: ctrl + eth + one data segment = 3 DS, fetched as one 64-byte WQEBB.
        assert_eq!(rows[0].wqe_bytes, 64 * rows[0].pkts);
        // MPWQE: one session per burst, ctrl + eth + 32 data segments = 34 DS = 544 bytes,
        // plus one 64-byte NOP per WQEBB of edge padding (a session reserves 15 contiguous
        // WQEBBs, so the last ones of each 64-WQEBB fragment are padded).
        assert!(rows[1].nops > 0);
        assert_eq!(
            rows[1].wqe_bytes,
            544 * u64::from(bursts) + 64 * rows[1].nops
        );
        // MPWQE needs fewer WQEBBs and fewer inbound bytes than one WQE per packet.
        assert!(rows[1].wqebbs * 3 < rows[0].wqebbs);
        assert!(rows[1].in_bytes < rows[0].in_bytes);
        assert!(rows[2].inlnw > 0);
        for r in &rows {
            assert!(r.in_bytes >= r.floor);
        }
    }
}

/// TX completions by threshold (`TX_CQE_THRESH`, 32 WQEBBs): in a long burst rung once at
/// its end, every WQE that takes the producer counter to or past a multiple of 32 WQEBBs asks
/// for a CQE, so the driver frees the start of the burst while the device has yet to send its
/// end. (Before the threshold only the rung WQE asked: nothing was freed until the device had
/// sent the whole burst.)
#[test]
fn long_burst_frees_descriptors_before_its_end() {
    use rsnic_core::hwif::mlx5::sq::TX_CQE_THRESH;
    assert_eq!(TX_CQE_THRESH, 32);
    // (MPWQE, packets, WQEs the device runs first, packets they complete, CQEs in all).
    // Regular: one WQEBB each, CQEs at WQEs 31, 63, 95 and the rung 99.
    // MPWQE: sessions of 58 packets (15 WQEBBs: pc 0, 15, 30 -> 45 crosses 32) and a rung
    // one of 26: CQEs for the third and the last.
    for (mpwqe, n, first_wqes, freed, cqes) in [(false, 100, 40, 32, 4), (true, 200, 3, 174, 2)] {
        let mut p = Pair::new(PairConfig {
            mpwqe,
            ..PairConfig::default()
        });
        let frames: Vec<TxFrame> = (0..n)
            .map(|k| TxFrame::linear(udp4_frame(64, k as u8)))
            .collect();
        let r = p.send_burst(&frames);
        assert_eq!(r.accepted.len(), n, "{r:?}");
        assert_eq!(
            p.drv_tx().doorbells,
            1,
            "one doorbell, at the end of the burst"
        );
        let (ran, more) = p.run_device_budget(first_wqes);
        assert_eq!((ran, more), (first_wqes, true), "mpwqe {mpwqe}");
        p.poll_tx();
        assert_eq!(
            (p.tx_completed(), p.tx_in_flight()),
            (freed, n - freed as usize),
            "mpwqe {mpwqe}: freed before the device reached the end of the burst"
        );
        p.settle(64);
        assert_eq!(p.tx_completed(), n as u64, "mpwqe {mpwqe}");
        assert_eq!(p.dev_tx().tx_cqes, cqes, "mpwqe {mpwqe}");
        p.check_counters().unwrap();
    }
}

/// Sends bursts of 32 UDP frames cycling through `sizes` on a pair whose SQ (and device)
/// has min-inline mode `mode`, MPWQE on; every frame must arrive byte for byte with no WQE
/// refused. Returns (frames sent, driver MPWQE packets, driver inlined MPWQE packets,
/// device MPWQE packets).
fn run_min_inline(mode: InlineMode, sizes: &[usize]) -> (u64, u64, u64, u64) {
    const BURST: usize = 32;
    let mut p = Pair::new(PairConfig {
        mpwqe: true,
        min_inline: mode,
        ..PairConfig::default()
    });
    let base = p.dev_tx();
    let mut received = 0usize;
    let frame = |i: usize| udp4_frame(sizes[i % sizes.len()], i as u8);
    for b in 0..8 {
        let frames: Vec<TxFrame> = (0..BURST)
            .map(|k| TxFrame::linear(frame(b * BURST + k)))
            .collect();
        let r = p.send_burst(&frames);
        assert_eq!(r.accepted.len(), BURST, "{r:?}");
        p.run_device();
        p.poll_tx();
        for f in p.settle(64) {
            assert_eq!(f.bytes, frame(received), "packet {received}");
            received += 1;
        }
    }
    assert_eq!(received, 8 * BURST);
    assert!(p.sq.error().is_none(), "{:?}", p.sq.error());
    let c = p.dev_tx();
    assert_eq!(c.wqe_errors - base.wqe_errors, 0, "WQEs the device refused");
    p.check_counters().unwrap();
    let d = p.drv_tx();
    (
        received as u64,
        d.mpwqe_pkts,
        d.inlnw,
        c.mpwqe_pkts - base.mpwqe_pkts,
    )
}

/// A device that demands L2 headers inline (ConnectX-4 Lx) refuses an MPWQE packet sent by
/// address; the SQ then carries the packets of at most 252 bytes in MPWQE sessions inlined
/// whole, and the others in regular WQEs with their headers inline. Without the demand,
/// sessions carry everything by address (MPWQE inline stays off: `mpwqe_inline` false).
#[test]
fn min_inline_device_takes_mpwqe_sessions_of_inlined_packets() {
    // UDP payloads: frames of 106 and 242 bytes fit an inline segment (252 bytes at most),
    // of 295 and 1042 do not.
    let sizes = [64, 1000, 200, 64, 253, 64];
    let (n, mp, inl, dev) = run_min_inline(InlineMode::L2, &sizes);
    let small = (0..n as usize)
        .filter(|&i| udp4_frame(sizes[i % sizes.len()], 0).len() <= 252)
        .count() as u64;
    assert_eq!(small, 171, "4 of every 6 frames");
    assert_eq!((mp, inl, dev), (small, small, small), "of {n} frames");
    let (n, mp, inl, dev) = run_min_inline(InlineMode::None, &sizes);
    assert_eq!((mp, inl, dev), (n, 0, n), "of {n} frames");
}

/// The offloads `ethtool -K` switches (tx-checksumming, scatter-gather, TSO) show in the
/// device's counters exactly when the driver asked for them: a packet whose checksum the
/// device computed counts in `tx_csum_offload` (every LSO segment too), one gathered from
/// more than one buffer in `tx_gather_pkts`, an LSO WQE in `lso_wqes` and its segments in
/// `lso_segs`. tests/vm/77-features.sh reads the same counters from debugfs.
#[test]
fn offloads_show_in_the_device_counters() {
    let mut p = Pair::new(PairConfig::default());
    let base = p.dev_tx();
    // No offload: linear, no checksum request.
    let plain = TxFrame::linear(udp4_frame(200, 1));
    // Checksum offload, linear.
    let mut csum = TxFrame::linear(tcp4_segment(300));
    csum.csum = TxCsum::Partial;
    // Checksum offload over two buffers (the linear part and a page fragment).
    let b = tcp4_segment(400);
    let mut sg = TxFrame::linear(b[..100].to_vec());
    sg.frags = vec![b[100..].to_vec()];
    sg.csum = TxCsum::Partial;
    // LSO, linear: headers inline, the payload by one data segment.
    let mut tso = TxFrame::linear(tcp4_segment(3000));
    tso.csum = TxCsum::Partial;
    tso.gso = Some(Gso {
        size: 1000,
        segs: 3,
    });
    // LSO over two page fragments.
    let b = tcp4_segment(2500);
    let mut tso_sg = TxFrame::linear(b[..54].to_vec());
    tso_sg.frags = vec![b[54..1554].to_vec(), b[1554..].to_vec()];
    tso_sg.csum = TxCsum::Partial;
    tso_sg.gso = Some(Gso {
        size: 1000,
        segs: 3,
    });
    let frames = [plain, csum, sg, tso, tso_sg];
    let r = p.send_burst(&frames);
    assert_eq!(r.accepted.len(), frames.len(), "{r:?}");
    let rx = p.settle(64);
    assert_eq!(rx.len(), 1 + 1 + 1 + 3 + 3);
    for f in &rx[1..] {
        let h = pkt::parse(&f.bytes);
        assert_eq!(pkt::verify_checksums(&f.bytes, &h), (true, true));
    }
    assert!(p.sq.error().is_none(), "{:?}", p.sq.error());
    p.check_counters().unwrap();
    let c = p.dev_tx();
    assert_eq!(
        (
            c.tx_csum_offload - base.tx_csum_offload,
            c.tx_gather_pkts - base.tx_gather_pkts,
            c.lso_wqes - base.lso_wqes,
            c.lso_segs - base.lso_segs,
        ),
        (1 + 1 + 3 + 3, 1 + 1, 2, 6)
    );
}
