//! Golden byte vectors for the mlx5 formats, written by hand from rsnic-hardware.rst A.3,
//! A.6, C.1 and C.2 (not produced by the encoders).

mod hwif_common;

use hwif_common::*;
use rsnic_core::hwif::hw::Coherent;
use rsnic_core::hwif::mlx5::cq::{Cq, CQ_DB_REQ_NOT};
use rsnic_core::hwif::mlx5::cqe::*;
use rsnic_core::hwif::mlx5::hdr::{self, L4};
use rsnic_core::hwif::mlx5::seg::*;
use rsnic_testbed::mem::HostMemory;

#[test]
fn ctrl_seg_golden() {
    let c = CtrlSeg {
        opmod: 0,
        wqe_index: 0x1234,
        opcode: OPCODE_SEND,
        sqn: 0xab_cdef,
        ds: 5,
        signature: 0,
        fm_ce_se: CTRL_CQ_UPDATE,
        general_id: 0,
    };
    let gold = [
        0x00, 0x12, 0x34, 0x0a, 0xab, 0xcd, 0xef, 0x05, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00,
        0x00,
    ];
    assert_eq!(c.encode(), gold);
    assert_eq!(CtrlSeg::decode(&gold), c);
    assert_eq!(
        c.doorbell_bytes(),
        [0x00, 0x12, 0x34, 0x0a, 0xab, 0xcd, 0xef, 0x05]
    );

    // opmod in the top byte, general_id big-endian, DS masked to 6 bits.
    let c = CtrlSeg {
        opmod: 0x01,
        wqe_index: 0xfffe,
        opcode: OPCODE_ENHANCED_MPSW,
        sqn: 0x12,
        ds: 60,
        signature: 0,
        fm_ce_se: FENCE_MODE_INITIATOR_SMALL,
        general_id: 0x0000_4500,
    };
    assert_eq!(
        c.encode(),
        [0x01, 0xff, 0xfe, 0x29, 0x00, 0x00, 0x12, 0x3c, 0, 0, 0, 0x20, 0x00, 0x00, 0x45, 0x00]
    );
}

#[test]
fn nop_golden() {
    let n = CtrlSeg::nop(0x0102, 7);
    assert_eq!(
        n.encode(),
        [0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x07, 0x01, 0, 0, 0, 0, 0, 0, 0, 0]
    );
}

#[test]
fn eth_seg_golden() {
    let mut e = EthSeg {
        cs_flags: ETH_L3_CSUM | ETH_L4_CSUM,
        mss: 1448,
        ..EthSeg::default()
    };
    e.set_inline(18, [0x00, 0x11]);
    let gold = [
        0x00, 0x00, 0x00, 0x00, 0xc0, 0x00, 0x05, 0xa8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x12, 0x00,
        0x11,
    ];
    assert_eq!(e.encode(), gold);
    assert_eq!(EthSeg::decode(&gold), e);
    assert_eq!(e.inline_sz(), 18);
    assert_eq!(e.offload_bytes(), [0, 0, 0, 0, 0xc0, 0]);

    let mut v = EthSeg::default();
    v.set_vlan_insert(0x0064, false);
    assert_eq!(
        v.encode(),
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x00, 0x00, 0x64]
    );
    v.set_vlan_insert(0xe00a, true);
    assert_eq!(&v.encode()[12..], &[0x80, 0x01, 0xe0, 0x0a]);
    assert_eq!(v.insert_type(), 0x8001);
    assert_eq!(v.vlan_tci(), 0xe00a);

    let m = EthSeg {
        flow_table_metadata: 0x0102_0304,
        swp_offs: [1, 2, 3, 4],
        swp_flags: 0x11,
        cs_flags: ETH_L3_INNER_CSUM | ETH_L4_INNER_CSUM,
        ..EthSeg::default()
    };
    assert_eq!(
        m.encode(),
        [1, 2, 3, 4, 0x30, 0x11, 0, 0, 0x01, 0x02, 0x03, 0x04, 0, 0, 0, 0]
    );
}

#[test]
fn data_seg_golden() {
    let d = DataSeg {
        byte_count: 1500,
        lkey: 0x1234,
        addr: 0x0000_0001_0000_2040,
    };
    let gold = [
        0x00, 0x00, 0x05, 0xdc, 0x00, 0x00, 0x12, 0x34, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x20,
        0x40,
    ];
    assert_eq!(d.encode(), gold);
    assert_eq!(DataSeg::decode(&gold), d);
}

#[test]
fn inline_seg_golden() {
    assert_eq!(inline_seg_header(5), [0x80, 0x00, 0x00, 0x05]);
    assert_eq!(inline_seg_ds(0), 1);
    assert_eq!(inline_seg_ds(12), 1);
    assert_eq!(inline_seg_ds(13), 2);
    assert_eq!(inline_seg_ds(252), 16);
    let mem = HostMemory::new();
    let b = mem.alloc(64);
    b.write(0, &[0xee; 64]);
    let ds = write_inline_seg(&b, 16, &[1, 2, 3, 4, 5]);
    assert_eq!(ds, 1);
    let v = b.to_vec();
    assert_eq!(&v[..16], &[0xee; 16]);
    assert_eq!(
        &v[16..32],
        &[0x80, 0, 0, 5, 1, 2, 3, 4, 5, 0, 0, 0, 0, 0, 0, 0]
    );
    assert_eq!(&v[32..], &[0xee; 32]);
    // 13 bytes: header + 13 = 17 -> two DS, zero padded to 32.
    let ds = write_inline_seg(&b, 0, &[9; 13]);
    assert_eq!(ds, 2);
    let v = b.to_vec();
    assert_eq!(&v[..4], &[0x80, 0, 0, 13]);
    assert_eq!(&v[4..17], &[9; 13]);
    assert_eq!(&v[17..32], &[0; 15]);
}

fn cqe_from(bytes: &[(usize, u8)]) -> Cqe64 {
    let mut c = [0u8; 64];
    for &(i, b) in bytes {
        c[i] = b;
    }
    Cqe64(c)
}

#[test]
fn cqe64_golden_rx() {
    // RESP_SEND (2), owner 1, not compressed: op_own = 0x21.
    let c = cqe_from(&[
        (12, 0xde),
        (13, 0xad),
        (14, 0xbe),
        (15, 0xef),
        (16, 0x44), // IPv4 (1<<2) + TCP (1<<6)
        (20, 0x12),
        (21, 0x34),
        (28, 0x07),
        (29, 0x01),
        (30, 0x00),
        (31, 0x64),
        (44, 0x00),
        (45, 0x00),
        (46, 0x05),
        (47, 0xea),
        (48, 0x00),
        (49, 0x00),
        (50, 0x00),
        (51, 0x01),
        (52, 0x00),
        (53, 0x00),
        (54, 0x00),
        (55, 0x02),
        (58, 0x0a),
        (59, 0xbc),
        (60, 0x01),
        (61, 0x02),
        (63, 0x21),
    ]);
    assert_eq!(c.opcode(), CQE_RESP_SEND);
    assert_eq!(c.owner(), 1);
    assert_eq!(c.format(), CQE_FORMAT_NONE);
    assert_eq!(c.rss_hash_result(), 0xdead_beef);
    assert_eq!(c.rss_hash_type(), 0x44);
    assert_eq!(c.check_sum(), 0x1234);
    assert_eq!(c.hds_ip_ext(), CQE_L2_OK | CQE_L3_OK | CQE_L4_OK);
    assert!(c.has_vlan());
    assert_eq!(c.vlan_info(), 100);
    assert_eq!(c.byte_cnt(), 1514);
    assert_eq!(c.timestamp(), 0x0000_0001_0000_0002);
    assert_eq!(c.flow_tag(), 0xabc);
    assert_eq!(c.wqe_counter(), 0x0102);
    // The setters produce the same bytes.
    let mut s = Cqe64::default();
    s.set_rss_hash_result(0xdead_beef);
    s.set_byte_cnt(1514);
    s.set_wqe_counter(0x0102);
    s.set_op_own(CQE_RESP_SEND, 0, 1);
    assert_eq!(&s.0[12..16], &c.0[12..16]);
    assert_eq!(&s.0[44..48], &c.0[44..48]);
    assert_eq!(&s.0[60..64], &c.0[60..64]);
}

#[test]
fn cqe64_golden_err_and_compressed() {
    // REQ_ERR (13) owner 1 -> 0xd1; syndrome LOCAL_PROT, vendor 0x33, opcode SEND, qpn 0x123.
    let e = cqe_from(&[
        (54, 0x33),
        (55, 0x04),
        (56, 0x0a),
        (57, 0x00),
        (58, 0x01),
        (59, 0x23),
        (60, 0x00),
        (61, 0x40),
        (63, 0xd1),
    ]);
    assert_eq!(e.opcode(), CQE_REQ_ERR);
    assert_eq!(e.owner(), 1);
    assert_eq!(e.syndrome(), SYND_LOCAL_PROT);
    assert_eq!(e.vendor_err_synd(), 0x33);
    assert_eq!(e.err_wqe_opcode(), OPCODE_SEND);
    assert_eq!(e.err_qpn(), 0x123);
    assert_eq!(e.wqe_counter(), 0x40);
    // Compressed title: RESP_SEND, format 3, owner 0 -> 0x2c; byte_cnt = 9 CQEs.
    let t = cqe_from(&[(47, 9), (63, 0x2c)]);
    assert_eq!(t.format(), CQE_FORMAT_COMPRESSED);
    assert_eq!(t.opcode(), CQE_RESP_SEND);
    assert_eq!(t.owner(), 0);
    assert_eq!(t.byte_cnt(), 9);
    let mut s = Cqe64::default();
    s.set_op_own(CQE_RESP_SEND, CQE_FORMAT_COMPRESSED, 0);
    assert_eq!(s.0[63], 0x2c);
}

#[test]
fn mini_cqe_golden() {
    let m = MiniCqe8([0x12, 0x34, 0x00, 0x07, 0x00, 0x00, 0x05, 0xdc]);
    assert_eq!(m.checksum(), 0x1234);
    assert_eq!(m.stridx(), 7);
    assert_eq!(m.rx_hash_result(), 0x1234_0007);
    assert_eq!(m.byte_cnt(), 1500);
    assert_eq!(m.wqe_counter(), 0x1234);
    assert_eq!(m.s_wqe_opcode(), 0);
    assert_eq!(
        MiniCqe8::with_checksum(0x1234, 1500).0,
        [0x12, 0x34, 0, 0, 0, 0, 5, 0xdc]
    );
    let mut slot = Cqe64::default();
    slot.0[56..64].copy_from_slice(&m.0);
    assert_eq!(MiniCqe8::from_array(&slot, 7), Some(m));
    assert_eq!(MiniCqe8::from_array(&slot, 8), None);
}

#[test]
fn cq_init_owner_and_arm_golden() {
    let mem = HostMemory::new();
    let env = Env::new(&mem);
    let buf = LBuf::new(&mem, 4 * 64, "cq", None);
    let dbr = LBuf::new(&mem, 16, "dbr", None);
    let mut cq = Cq::new(buf.clone(), dbr.clone(), 8, 2, 0x42, 0x3000).unwrap();
    // Every slot HW-owned: op_own 0xF1, validity 0xFF.
    for i in 0..4 {
        assert_eq!(buf.bytes(i * 64 + 62, 2), vec![0xff, 0xf1]);
    }
    assert!(cq.peek(&env).is_none());
    // Pass 0 expects owner 0.
    write_cqe(&buf, 0, &tx_cqe(CQE_REQ, 3, 0));
    assert_eq!(cq.peek(&env).unwrap().wqe_counter(), 3);
    cq.pop(1);
    cq.update_ci(&env);
    assert_eq!(dbr.bytes(8, 4), vec![0, 0, 0, 1]);
    // One event, then arm: sn = 1, cmd REQ_NOT, ci = 1.
    cq.event();
    cq.arm(CQ_DB_REQ_NOT, &env, &env);
    assert_eq!(dbr.bytes(12, 4), vec![0x10, 0x00, 0x00, 0x01]);
    assert_eq!(
        env.mmio_writes(),
        vec![(0x3020, [0x10, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x42])]
    );
    assert_eq!(
        *env.log.borrow().last().unwrap(),
        Ev::Mmio64(0x3020, [0x10, 0, 0, 1, 0, 0, 0, 0x42])
    );
    // Wrap: after 4 pops the pass is 1 and owner 1 is valid.
    cq.pop(3);
    write_cqe(&buf, 0, &tx_cqe(CQE_REQ, 9, 0));
    assert!(
        cq.peek(&env).is_none(),
        "stale owner must not be valid on pass 1"
    );
    write_cqe(&buf, 0, &tx_cqe(CQE_REQ, 9, 1));
    assert!(cq.peek(&env).is_some());
    // Owner rewrite.
    cq.update_owner(4, 1);
    assert_eq!(buf.bytes(63, 1), vec![1]);
}

#[test]
fn header_parser() {
    let f = tcp4_frame(100, 0);
    let h = hdr::parse(&f);
    assert_eq!(
        (h.network, h.transport, h.l4, h.len),
        (Some(14), Some(34), L4::Tcp(20), 54)
    );
    // TCP with 12 bytes of options behind a VLAN tag.
    let mut v = vec![0u8; 12];
    v.extend_from_slice(&[0x81, 0x00, 0x00, 0x05, 0x08, 0x00]);
    let mut ip = vec![0u8; 20];
    ip[0] = 0x45;
    ip[9] = 6;
    v.extend_from_slice(&ip);
    let mut tcp = vec![0u8; 32];
    tcp[12] = 8 << 4;
    v.extend_from_slice(&tcp);
    let h = hdr::parse(&v);
    assert_eq!(
        (h.network, h.transport, h.l4, h.len),
        (Some(18), Some(38), L4::Tcp(32), 70)
    );
    // IPv6 UDP.
    let mut v6 = vec![0u8; 12];
    v6.extend_from_slice(&[0x86, 0xdd]);
    let mut ip6 = vec![0u8; 40];
    ip6[0] = 0x60;
    ip6[6] = 17;
    v6.extend_from_slice(&ip6);
    v6.extend_from_slice(&[0u8; 8]);
    let h = hdr::parse(&v6);
    assert_eq!((h.transport, h.l4, h.len), (Some(54), L4::Udp, 62));
    // ARP: no network protocol we know -> 14.
    let mut arp = vec![0u8; 42];
    arp[12..14].copy_from_slice(&[0x08, 0x06]);
    let h = hdr::parse(&arp);
    assert_eq!((h.transport, h.len), (None, 14));
    // Truncated frames never read out of bounds.
    for n in 0..f.len() {
        let h = hdr::parse(&f[..n]);
        assert!(usize::from(h.len) <= n);
    }
}
