//! PCIe accounting of the simulated mlx5 device for known sequences, checked against figures
//! computed by hand from rsnic-datapath.rst, "How figures are measured" (every TLP costs its
//! payload plus 24 B; reads: one 24-B request per 512 B outbound, completions split at 64-B
//! boundaries inbound; doorbell = 8 B inbound; CQE = 64 B outbound; packet data written in
//! TLPs of at most 256 B at 256-B boundaries; MSI-X = 4 B outbound). All buffers of the test
//! bed are page aligned.

mod sim_util;

use rsnic_core::hwif::hw::{Coherent, Mmio};
use rsnic_core::sim::pcie::{blocks, inbound_floor, PcieCounters};
use sim_util::*;

/// The counters `(in_tlps, in_bytes, out_tlps, out_bytes)`.
fn pcie(in_tlps: u64, in_bytes: u64, out_tlps: u64, out_bytes: u64) -> PcieCounters {
    PcieCounters {
        in_tlps,
        in_bytes,
        out_tlps,
        out_bytes,
    }
}

#[test]
fn primitive_rules() {
    let mut p = PcieCounters::default();
    // 1000 bytes at 0x1010: requests of 512 and 488 bytes (2 × 24 out).
    // Completions: [0x1010, 0x1210) touches 64-B blocks 0x40..=0x48 → 9;
    // [0x1210, 0x13f8) touches 0x48..=0x4f → 8. In: 1000 + 17 × 24 = 1408.
    p.dma_read(0x1010, 1000);
    assert_eq!(p, pcie(17, 1408, 2, 48));
    // A write of 600 bytes at 0x2080 touches 256-B blocks 0x20, 0x21, 0x22 → 3 TLPs,
    // 600 + 72 = 672 out.
    let mut p = PcieCounters::default();
    p.dma_write(0x2080, 600);
    assert_eq!((p.out_tlps, p.out_bytes), (3, 672));
    p.cqe_write();
    p.msix();
    assert_eq!((p.out_tlps, p.out_bytes), (5, 672 + 88 + 28));
    p.doorbell();
    assert_eq!((p.in_tlps, p.in_bytes), (1, 32));
    assert_eq!(blocks(63, 2, 64), 2);
    assert_eq!(blocks(64, 64, 64), 1);
    assert_eq!(blocks(5, 0, 64), 0);
    // 100 bytes: 2 completions → 100 + 48.
    assert_eq!(inbound_floor(100), 148);
    assert_eq!(inbound_floor(64), 88);
}

#[test]
fn one_send_then_another_with_an_armed_rx_cq() {
    let mut r = Rig::new(RigOpts::default());
    let frame = udp4_frame(58, 1, 2); // 100 bytes
    assert_eq!(frame.len(), 100);
    r.send(&frame, CQ_UPDATE);
    r.tb.step();
    // Port 0 (TX):
    //   doorbell write               in 1 TLP  8+24 = 32
    //   SQ DBR read (4 B)            out 1 req 24, in 1 TLP 4+24 = 28
    //   WQE first WQEBB (64 B)       out 1 req 24, in 1 TLP 64+24 = 88
    //   packet data 100 B, aligned   out 1 req 24, in 2 TLPs 100+48 = 148
    //   TX CQE                       out 1 TLP 64+24 = 88
    //   in: 5 TLPs, 32+28+88+148 = 296; out: 4 TLPs, 24+24+24+88 = 160.
    let t = r.tb.counters(0).pcie;
    assert_eq!(t, pcie(5, 296, 4, 160));
    // Port 1 (RX):
    //   RQ DBR read (nothing known yet) out 24, in 28
    //   RX WQE (stride 16 B)            out 24, in 16+24 = 40
    //   data 100 B into an aligned buf  out 1 TLP 100+24 = 124
    //   RX CQE                          out 88
    //   in: 2 TLPs, 68; out: 4 TLPs, 24+24+124+88 = 260.
    let rx = r.tb.counters(1).pcie;
    assert_eq!(rx, pcie(2, 68, 4, 260));

    // Arm the RX CQ (one more inbound doorbell on port 1) and send the same again: the RQ
    // producer is cached (64 posted), so no RQ DBR read; the CQE raises one MSI-X (4+24).
    let mut b = [0u8; 8];
    b[..4].copy_from_slice(&1u32.to_be_bytes()); // ci = 1: the CQE already seen
    b[4..].copy_from_slice(&r.rx_cq.cqn.to_be_bytes());
    r.bus.write64(api_uar_offset(1) + 0x20, b);
    r.send(&frame, CQ_UPDATE);
    r.tb.step();
    assert_eq!(r.tb.take_irqs(), vec![2]);
    let t = r.tb.counters(0).pcie;
    assert_eq!(t, pcie(10, 592, 8, 320));
    // Port 1 adds: doorbell in 1/32; WQE read out 24, in 1/40; data out 124; CQE out 88;
    // MSI-X out 28. in: 2+2 = 4 TLPs, 68+72 = 140; out: 4+4 = 8 TLPs, 260+24+124+88+28 = 524.
    let rx = r.tb.counters(1).pcie;
    assert_eq!(rx, pcie(4, 140, 8, 524));
    let tot = r.tb.totals();
    assert_eq!(tot.pcie.in_bytes, 592 + 140);
    assert_eq!(tot.pcie.out_bytes, 320 + 524);
    assert_eq!((tot.doorbells, tot.dbr_reads, tot.interrupts), (3, 3, 1));
    assert_eq!(r.tb.counters(0).tx_floor_in_bytes, 2 * 148);
}

#[test]
fn mpwqe_of_four_against_four_sends() {
    // Four 64-byte packets, each in its own page-aligned buffer.
    let frames: Vec<Vec<u8>> = (0..4).map(|i| udp4_frame(22, i, 9)).collect();
    assert!(frames.iter().all(|f| f.len() == 64));

    // (a) Four SEND WQEs (1 WQEBB each), one doorbell, CQE on the last.
    let mut r = Rig::new(RigOpts::default());
    let mut last = [0u8; 16];
    for (i, f) in frames.iter().enumerate() {
        last = r.post_send(f, if i == 3 { CQ_UPDATE } else { 0 }).1;
    }
    r.ring(&last);
    r.tb.step();
    // in: doorbell 32 + DBR 28 + 4 × (WQE 88 + data 88) = 764 in 10 TLPs;
    // out: DBR req + 4 × (WQE req + data req) = 9 × 24 = 216, + CQE 88 = 304 in 10 TLPs.
    let sends = r.tb.counters(0).pcie;
    assert_eq!(sends, pcie(10, 764, 10, 304));

    // (b) One enhanced MPWQE: ctrl + eth + 4 dsegs = 6 DS = 96 B, 2 WQEBBs.
    let mut r = Rig::new(RigOpts::default());
    let bufs: Vec<_> = frames.iter().map(|f| r.tb.mem.alloc_from(f)).collect();
    let mut w = Vec::new();
    w.extend_from_slice(&ctrl(OP_MPSW, 0, r.sqn, 6, CQ_UPDATE));
    w.extend_from_slice(&eseg(0, 0, 0, [0, 0]));
    for b in &bufs {
        w.extend_from_slice(&dseg(64, 0, b.dma_addr()));
    }
    r.post(&w);
    r.ring(w[..16].try_into().unwrap());
    r.tb.step();
    // in: doorbell 32 + DBR 28 + first WQEBB 88 + rest of the WQE (96-64 = 32 B) 56
    //     + 4 × data 88 = 556 in 8 TLPs;
    // out: DBR + 2 WQE reads + 4 data reads = 7 × 24 = 168, + CQE 88 = 256 in 8 TLPs.
    let mpw = r.tb.counters(0).pcie;
    assert_eq!(mpw, pcie(8, 556, 8, 256));
    // Floor for both: 4 × inbound_floor(64) = 4 × 88 = 352.
    assert_eq!(r.tb.counters(0).tx_floor_in_bytes, 352);
    assert_eq!(r.tb.counters(1).rx_packets, 4);
}
