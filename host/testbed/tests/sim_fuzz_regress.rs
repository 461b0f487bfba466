//! Regressions found by fuzzing the simulated device with hostile WQEs (host/fuzz,
//! target device_wqe). Each test is the minimal form of a fuzzer finding, written by hand
//! from the spec and the model's documented rules.

mod sim_util;

use rsnic_core::hwif::hw::Coherent;
use sim_util::*;

/// An enhanced MPWQE (ctrl, eth seg with `insert`, data segments) at the rig's pc.
fn mpwqe(r: &mut Rig, insert_vlan: Option<u16>, segs: &[(u32, u64)]) -> [u8; 16] {
    let ds = 2 + segs.len() as u8;
    let c = ctrl(OP_MPSW, r.pc, r.sqn, ds, CQ_UPDATE);
    let mut w = Vec::new();
    w.extend_from_slice(&c);
    w.extend_from_slice(&match insert_vlan {
        // insert.type = INSERT_VLAN (0x8000) at bytes 12-13, the TCI at 14-15.
        Some(tci) => eseg(0, 0, 0x8000, tci.to_be_bytes()),
        None => eseg(0, 0, 0, [0, 0]),
    });
    for &(len, addr) in segs {
        w.extend_from_slice(&dseg(len, 0x1234, addr));
    }
    r.post(&w);
    c
}

fn tx_cqe(r: &mut Rig) -> [u8; 64] {
    r.tb.step();
    let c = r.tx_cq.poll().expect("a TX CQE");
    r.tx_cq.update_ci();
    c
}

/// Fuzzer finding: an MPWQE whose second packet's address faults was counted as a good
/// MPWQE (`mpwqe_wqes`) and as a rejected WQE (`wqe_errors`), so `wqes` no longer equalled
/// the sum of the per-opcode counters.
#[test]
fn mpwqe_faulting_while_gathering_counts_only_as_an_error() {
    let mut r = Rig::new(RigOpts::default());
    let good = r.tb.mem.alloc_from(&udp4_frame(40, 1, 2));
    let gone = r.tb.mem.alloc(100);
    let gone_addr = gone.dma_addr();
    r.tb.mem.free(&gone);
    let c = mpwqe(
        &mut r,
        None,
        &[(good.size() as u32, good.dma_addr()), (100, gone_addr)],
    );
    r.ring(&c);
    let cqe = tx_cqe(&mut r);
    assert_eq!(cqe_opcode(&cqe), 13, "REQ_ERR");
    assert_eq!(cqe_syndrome(&cqe), 0x04, "LOCAL_PROT");
    let t = r.tb.totals();
    // The packet before the fault went out (documented: found while gathering).
    assert_eq!((t.mpwqe_pkts, t.tx_packets), (1, 1));
    assert_eq!((t.wqes, t.wqe_errors, t.mpwqe_wqes), (0, 1, 0));
    assert_eq!(t.wqes, t.nop_wqes + t.send_wqes + t.lso_wqes + t.mpwqe_wqes);
}

/// Fuzzer finding: with VLAN insertion, an MPWQE packet of 10 or 11 bytes passed the
/// structural pass (10 + 4 ≥ 14) and failed only when the tag was inserted, after the
/// packets before it had been sent. Structural checks come before any packet is sent.
#[test]
fn mpwqe_vlan_packet_without_mac_addresses_is_rejected_before_sending() {
    let mut r = Rig::new(RigOpts::default());
    let good = r.tb.mem.alloc_from(&udp4_frame(40, 1, 2));
    let tiny = r.tb.mem.alloc_from(&[0xaa; 10]);
    let c = mpwqe(
        &mut r,
        Some(0x0123),
        &[(good.size() as u32, good.dma_addr()), (10, tiny.dma_addr())],
    );
    r.ring(&c);
    let cqe = tx_cqe(&mut r);
    assert_eq!(cqe_opcode(&cqe), 13, "REQ_ERR");
    assert_eq!(cqe_syndrome(&cqe), 0x01, "LOCAL_LENGTH");
    assert_eq!(cqe[54], 10, "vendor code of TooShort");
    let t = r.tb.totals();
    assert_eq!((t.mpwqe_pkts, t.tx_packets, t.rx_packets), (0, 0, 0));
    assert_eq!((t.wqes, t.wqe_errors), (0, 1));

    // 12 bytes (two MAC addresses) + the tag = 16: carried.
    let mut r = Rig::new(RigOpts::default());
    let twelve = r.tb.mem.alloc_from(&udp4_frame(40, 1, 2)[..12]);
    let c = mpwqe(&mut r, Some(0x0123), &[(12, twelve.dma_addr())]);
    r.ring(&c);
    let cqe = tx_cqe(&mut r);
    assert_eq!(cqe_opcode(&cqe), 0, "REQ");
    let t = r.tb.totals();
    assert_eq!((t.mpwqe_wqes, t.mpwqe_pkts, t.tx_packets), (1, 1, 1));
}
