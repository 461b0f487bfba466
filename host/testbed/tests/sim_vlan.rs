//! The simulated ConnectX's RQ VLAN stripping as mlx5e drives it: `rqc.vsd` at CREATE_RQ
//! and MODIFY_RQ (RDY -> RDY with the VSD bit of `modify_bitmask`, `mlx5e_modify_rq_vsd`),
//! a stripped outer 802.1Q tag reported in the CQE (the cv bit of `l4_l3_hdr_type`,
//! device.h's `cqe_has_vlan`, and the TCI in `vlan_info`, what `mlx5e_build_rx_skb` puts on
//! the skb), `byte_cnt` without the tag, the device's counters with it, and CQE compression
//! (a session's title carries the tag for all its mini CQEs, as `mlx5e_decompress_cqe`
//! copies it). Everything through commands and frames on the wire (port 1 loops back to
//! itself, see rss_rig); offsets are the 6.12 mlx5_ifc.h's and device.h's, by hand.

mod cx_fake_driver;
mod rss_rig;
mod sim_util;

use cx_fake_driver::*;
use rsnic_core::hwif::hw::Coherent;
use rsnic_core::sim::mlx5::cmd::synd;
use rss_rig::*;
use sim_util::dseg;

/// `rqc.vsd` (bit 3 of the RQ context, which starts at bit 0x100 of create_rq_in,
/// modify_rq_in and query_rq_out).
const VSD: usize = 0x103;
/// `modify_rq_in.modify_bitmask` (bits 0x80..0xc0): `MLX5_MODIFY_RQ_IN_MODIFY_BITMASK_VSD`
/// (1 << 1) is bit 0xbe, `..._SCATTER_FCS` (1 << 2) bit 0xbd.
const BITMASK_VSD: usize = 0xbe;
const BITMASK_SCATTER_FCS: usize = 0xbd;

/// CQE (`struct mlx5_cqe64`): `l4_l3_hdr_type` byte 29 (bit 0: cv), `vlan_info` 30..32,
/// `check_sum` 20..22, `byte_cnt` 44..48, `op_own` 63 (format in bits 3..2).
fn cv(c: &[u8; 64]) -> bool {
    c[29] & 1 != 0
}
fn vlan_info(c: &[u8; 64]) -> u16 {
    u16::from_be_bytes([c[30], c[31]])
}
fn byte_cnt(c: &[u8; 64]) -> u32 {
    u32::from_be_bytes(c[44..48].try_into().unwrap())
}
fn format(c: &[u8; 64]) -> u8 {
    (c[63] >> 2) & 3
}

/// `frame` with an outer tag of `tpid` and `tci` after the MACs.
fn tag(f: &[u8], tpid: u16, tci: u16) -> Vec<u8> {
    let mut t = f[..12].to_vec();
    t.extend_from_slice(&tpid.to_be_bytes());
    t.extend_from_slice(&tci.to_be_bytes());
    t.extend_from_slice(&f[12..]);
    t
}

/// Steers every frame to the rig's RQ `rq` (the function's first TIR over a one-entry RQT).
fn to_rq(r: &mut Rig, rqn: u32) {
    let rqt = r.h.exec(&rqt_in(&[rqn]), 16).ok().obj();
    r.tir(rqt, &[7; 40], 0, 0, 3);
}

/// Sends one frame and returns its RX CQE and the `n` bytes of the buffer it filled (RQ 0).
fn one(r: &mut Rig, f: &[u8], n: usize) -> ([u8; 64], Vec<u8>) {
    let wqe = r.h.tb.device().rq_consumer(r.rqs[0].0).unwrap();
    r.burst(&[f.to_vec()]);
    let c = r.cq.poll().expect("an RX CQE");
    r.cq.update_ci();
    assert_eq!(c[63] >> 4, 2, "RESP_SEND");
    (c, r.rx_data(0, wqe, n))
}

/// MODIFY_RQ RDY -> RDY with `bitmask_bit` set and `vsd`.
fn modify_vsd(rqn: u32, bitmask_bit: usize, vsd: bool) -> Vec<u8> {
    let mut i = modify_in(0x909, rqn, 1, 1);
    put(&mut i, bitmask_bit, 1, 1);
    put(&mut i, VSD, 1, u64::from(vsd));
    i
}

/// `query_rq_out.rq_context.vsd`.
fn query_vsd(r: &mut Rig, rqn: u32) -> bool {
    let o = r.h.exec(&obj_in(0x90b, rqn), 0x110).ok();
    getf(&o.b, VSD, 1) != 0
}

#[test]
fn an_rq_strips_the_outer_ctag_and_reports_it_in_the_cqe() {
    let mut r = Rig::new();
    let rqn = r.rqs[0].0;
    to_rq(&mut r, rqn);
    assert!(!query_vsd(&mut r, rqn), "created with vsd 0: stripping");
    let plain = ip4_frame(17, [10, 0, 0, 1], 5000, [10, 0, 0, 2], 9);
    let (pc, pdata) = one(&mut r, &plain, plain.len());
    assert!(
        !cv(&pc) && vlan_info(&pc) == 0,
        "an untagged frame has no tag"
    );
    assert_eq!(
        (byte_cnt(&pc) as usize, pdata),
        (plain.len(), plain.clone())
    );

    // VID 10, PCP 5, DEI 1: the whole TCI reaches the CQE.
    let before = r.h.tb.counters(1);
    let tagged = tag(&plain, 0x8100, 0xb00a);
    let (c, data) = one(&mut r, &tagged, tagged.len());
    assert!(cv(&c), "cqe_has_vlan");
    assert_eq!(vlan_info(&c), 0xb00a);
    assert_eq!(
        byte_cnt(&c) as usize,
        plain.len(),
        "byte_cnt without the tag"
    );
    assert_eq!(
        &data[..plain.len()],
        &plain[..],
        "the frame without its tag"
    );
    // The rest of the CQE as for the untagged frame: L3/L4 types, checksum verdicts, the
    // checksum from the IP header on, the hash.
    assert_eq!(c[29] & !1, pc[29]);
    assert_eq!(
        (c[28], &c[20..22], &c[12..17]),
        (pc[28], &pc[20..22], &pc[12..17])
    );
    let after = r.h.tb.counters(1);
    assert_eq!(after.rx_vlan_stripped - before.rx_vlan_stripped, 1);
    assert_eq!(
        after.rx_bytes - before.rx_bytes,
        tagged.len() as u64,
        "the device counts the frame as it came off the wire"
    );

    // An 802.1ad outer tag is not stripped (mlx5e's C-tag offload only).
    let s_tagged = tag(&plain, 0x88a8, 10);
    let (c, data) = one(&mut r, &s_tagged, s_tagged.len());
    assert!(!cv(&c));
    assert_eq!((byte_cnt(&c) as usize, data), (s_tagged.len(), s_tagged));
    assert_eq!(r.h.tb.counters(1).rx_vlan_stripped, after.rx_vlan_stripped);
}

#[test]
fn vsd_at_create_rq_and_modify_rq_turns_stripping_off_and_on() {
    let mut r = Rig::new();
    // A fifth RQ created with vsd 1, 64 posted WQEs, taking every frame.
    let rq = r.h.tb.mem.alloc(1024);
    let dbr = r.h.tb.mem.alloc(8);
    let mut i = rq_in(r.cq.cqn, r.pd, dbr.dma_addr(), 4, 6, rq.dma_addr());
    put(&mut i, VSD, 1, 1);
    let rqn = r.h.exec(&i, 16).ok().obj();
    r.h.exec(&modify_in(0x909, rqn, 0, 1), 16).ok();
    for k in 0..64 {
        let b = r.h.tb.mem.alloc(2048);
        rq.write(k * 16, &dseg(2048, 0, b.dma_addr()));
    }
    dbr.write_be32(0, 64);
    r.rqs.insert(0, (rqn, rq, dbr));
    to_rq(&mut r, rqn);
    assert!(query_vsd(&mut r, rqn));

    let tagged = tag(
        &ip4_frame(6, [10, 0, 0, 1], 1, [10, 0, 0, 2], 2),
        0x8100,
        10,
    );
    let (c, data) = one(&mut r, &tagged, tagged.len());
    assert!(!cv(&c) && vlan_info(&c) == 0, "vsd 1: no stripping");
    assert_eq!(
        (byte_cnt(&c) as usize, data),
        (tagged.len(), tagged.clone())
    );

    // mlx5e_modify_rq_vsd(rq, false): the next frame is stripped.
    r.h.exec(&modify_vsd(rqn, BITMASK_VSD, false), 16).ok();
    assert!(!query_vsd(&mut r, rqn));
    let (c, _) = one(&mut r, &tagged, tagged.len());
    assert!(cv(&c) && vlan_info(&c) == 10 && byte_cnt(&c) as usize == tagged.len() - 4);
    // And back.
    r.h.exec(&modify_vsd(rqn, BITMASK_VSD, true), 16).ok();
    let (c, _) = one(&mut r, &tagged, tagged.len());
    assert!(!cv(&c) && byte_cnt(&c) as usize == tagged.len());
    // Without the bitmask bit, ctx.vsd is not looked at.
    r.h.exec(&modify_in(0x909, rqn, 1, 1), 16).ok();
    assert!(
        query_vsd(&mut r, rqn),
        "RDY -> RDY without VSD in the bitmask changes nothing"
    );

    // What the model refuses: a bitmask bit it does not implement (scatter FCS), a
    // current state that is not the RQ's, an SQ RDY -> RDY (an SQ has no such field here).
    expect(
        r.h.exec(&modify_vsd(rqn, BITMASK_SCATTER_FCS, false), 16),
        0x3,
        synd::MODIFY_BITMASK,
    );
    let mut i = modify_vsd(rqn, BITMASK_VSD, false);
    put(&mut i, 0x40, 4, 0); // rq_state RST
    expect(r.h.exec(&i, 16), 0x9, synd::CUR_STATE);
    let sqn = r.sq.0;
    expect(
        r.h.exec(&modify_in(0x905, sqn, 1, 1), 16),
        0x9,
        synd::TRANSITION,
    );
    assert!(query_vsd(&mut r, rqn), "refused commands changed nothing");
}

#[test]
fn a_compression_session_carries_one_tag_for_all_its_cqes() {
    let mut r = Rig::with_compression(true);
    let rqn = r.rqs[0].0;
    to_rq(&mut r, rqn);
    let plain = ip4_frame(17, [10, 0, 0, 1], 5000, [10, 0, 0, 2], 9);
    let v10 = tag(&plain, 0x8100, 10);
    let v20 = tag(&plain, 0x8100, 0x2014);
    let frames = vec![
        v10.clone(),
        v10.clone(),
        v10,
        v20.clone(),
        v20,
        plain.clone(),
        plain.clone(),
    ];
    r.burst(&frames);
    // Three sessions (the tag is a field every CQE of a session shares), each a title and
    // its mini-CQE array right after it, taking as many CQ slots as it has CQEs (spec
    // C.5): titles at slots 0, 3 and 5.
    let want = [
        (0, 3u32, true, 10u16),
        (3, 2, true, 0x2014),
        (5, 2, false, 0),
    ];
    for (k, (at, n, has, tci)) in want.into_iter().enumerate() {
        let title = r.cq.slot(at);
        assert_eq!(format(&title), 3, "session {k}: a compressed title");
        assert_eq!(byte_cnt(&title), n, "session {k}: its CQE count");
        assert_eq!(
            (cv(&title), vlan_info(&title)),
            (has, tci),
            "session {k}: its tag"
        );
        // Mini CQEs (`struct mlx5_mini_cqe8`): byte_cnt at 4..8, the stripped length.
        let arr = r.cq.slot(at + 1);
        for m in 0..n as usize {
            let bc = u32::from_be_bytes(arr[m * 8 + 4..m * 8 + 8].try_into().unwrap());
            assert_eq!(bc as usize, plain.len(), "session {k}, mini CQE {m}");
        }
    }
    let c = r.h.tb.counters(1);
    assert_eq!((c.compress_sessions, c.compressed_cqes), (3, 7));
    assert_eq!(c.rx_vlan_stripped, 5);
}
