//! Golden byte vectors of the GDMA formats (rsnic-hardware.rst D.2–D.5), written by hand
//! from the bit positions of its part D, and the SGL wrap at the ring end.

use rsnic_core::hwif::hw::Coherent;
use rsnic_core::hwif::mana::fmt::*;
use rsnic_core::hwif::mana::wq::Wq;
use rsnic_testbed::mem::HostMemory;

#[test]
fn wqe_header_plain_and_tso() {
    let h = WqeHeader {
        num_sge: 2,
        inline_oob_size_div4: 2,
        ..WqeHeader::default()
    };
    assert_eq!(h.encode(), [0, 0, 0, 0, 0x02, 0x02, 0, 0]);
    // TSO: last_vbytes 54, 3 SGEs, 8-byte OOB, OOB_IN_SGL, MSS 1448 (0x5a8).
    let t = WqeHeader {
        last_vbytes: 54,
        num_sge: 3,
        inline_oob_size_div4: 2,
        client_oob_in_sgl: true,
        client_data_unit: 1448,
    };
    assert_eq!(t.encode(), [0, 0, 0, 0x36, 0x03, 0x0a, 0xa8, 0x05]);
    assert_eq!(WqeHeader::decode(&t.encode()), t);
    // Long OOB: div4 = 6 in bits 8..10.
    let l = WqeHeader {
        num_sge: 1,
        inline_oob_size_div4: 6,
        ..WqeHeader::default()
    };
    assert_eq!(l.encode()[4..], [0x01, 0x06, 0, 0]);
    assert_eq!(l.wqe_size(), 64);
}

#[test]
fn wqe_sizes() {
    assert_eq!(wqe_size(INLINE_OOB_SMALL, 1), 32); // short TX, RX WQE
    assert_eq!(wqe_size(INLINE_OOB_LARGE, 1), 64); // 48 rounded up
    assert_eq!(wqe_size(INLINE_OOB_SMALL, 2), 64);
    assert_eq!(wqe_size(INLINE_OOB_LARGE, MAX_TX_SGE), 512);
    assert_eq!(wqe_size(INLINE_OOB_SMALL, MAX_RX_SGE), 256);
}

#[test]
fn sge_bytes() {
    let s = Sge {
        address: 0x1122_3344_5566_7788,
        mem_key: 0xaabb_ccdd,
        size: 1514,
    };
    assert_eq!(
        s.encode(),
        [
            0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0xdd, 0xcc, 0xbb, 0xaa, 0xea, 0x05, 0,
            0
        ]
    );
    assert_eq!(Sge::decode(&s.encode()), s);
}

#[test]
fn short_oob_bytes() {
    let o = TxOob {
        pkt_fmt: PKT_FMT_SHORT,
        is_outer_ipv4: true,
        comp_tcp_csum: true,
        vcq_num: 0x12_3456,
        trans_off: 34,
        vsq_frame: 5,
        short_vp_offset: 7,
        ..TxOob::default()
    };
    assert_eq!(
        o.encode_short(),
        [0x24, 0x56, 0x34, 0x12, 0x22, 0x14, 0x00, 0x07]
    );
    assert_eq!(TxOob::decode(&o.encode_short()), o);
    // comp_iphdr_csum bit 4, comp_udp_csum bit 6, is_outer_ipv6 bit 3.
    let u = TxOob {
        is_outer_ipv6: true,
        comp_iphdr_csum: true,
        comp_udp_csum: true,
        ..TxOob::default()
    };
    assert_eq!(u.encode_short()[0], 0x58);
}

#[test]
fn long_oob_bytes() {
    let o = TxOob {
        pkt_fmt: PKT_FMT_LONG,
        vcq_num: 0x10,
        inject_vlan_pri_tag: true,
        pcp: 5,
        dei: true,
        vlan_id: 0x123,
        long_vp_offset: 0x300,
        ..TxOob::default()
    };
    let want: [u8; 24] = [
        0x01, 0x10, 0, 0, // DW0: long, vcq 0x10
        0, 0, 0, 0, // DW1
        0x08, 0x00, 0x3d, 0x12, // DW2: inject bit 3, pcp 5 <<16, dei bit 19, vid 0x123 <<20
        0, 0, 0x00, 0x03, // DW3: long_vp_offset 0x300 << 16
        0, 0, 0, 0, 0, 0, 0, 0,
    ];
    assert_eq!(o.encode_long(), want);
    assert_eq!(TxOob::decode(&want), o);
}

#[test]
fn doorbell_bytes() {
    assert_eq!(
        sq_doorbell(0x123, 0x4000).to_le_bytes(),
        [0x23, 0x01, 0, 0, 0x00, 0x40, 0, 0]
    );
    assert_eq!(
        rq_doorbell(0x456, 0, 0x20).to_le_bytes(),
        [0x56, 0x04, 0, 0, 0x20, 0, 0, 0]
    );
    assert_eq!(
        rq_doorbell(0x456, 1, 0x20).to_le_bytes(),
        [0x56, 0x04, 0, 0x01, 0x20, 0, 0, 0]
    );
    assert_eq!(
        cq_doorbell(0x789, 0x10, true).to_le_bytes(),
        [0x89, 0x07, 0, 0, 0x10, 0, 0, 0x80]
    );
    assert_eq!(
        cq_doorbell(0x789, 0x10, false).to_le_bytes(),
        [0x89, 0x07, 0, 0, 0x10, 0, 0, 0x00]
    );
    // EQ ids are 16 bits.
    assert_eq!(
        eq_doorbell(0x1_2345, 5, true).to_le_bytes(),
        [0x45, 0x23, 0, 0, 0x05, 0, 0, 0x80]
    );
    let d = Doorbell::decode(
        DB_RQ,
        u64::from_le_bytes([0x56, 0x04, 0, 0x07, 0x20, 0, 0, 0]),
    );
    assert_eq!(
        d,
        Some(Doorbell {
            id: 0x456,
            wqe_cnt: 7,
            tail_ptr: 0x20,
            arm: false
        })
    );
    let c = Doorbell::decode(
        DB_CQ,
        u64::from_le_bytes([0x89, 0x07, 0, 0, 0x10, 0, 0, 0x80]),
    );
    assert_eq!(
        c.map(|c| (c.id, c.tail_ptr, c.arm)),
        Some((0x789, 0x10, true))
    );
    assert_eq!(Doorbell::decode(0x100, 0), None);
    assert_eq!((DB_SQ, DB_RQ, DB_CQ, DB_EQ), (0, 0x400, 0x800, 0xff8));
}

#[test]
fn cqe_info_and_headers() {
    let mut c = Cqe {
        wq_num: 0xabc,
        is_sq: true,
        owner: 5,
        ..Cqe::default()
    };
    c.data[..4].copy_from_slice(&[0x60, 0, 0, 0]);
    let b = c.encode();
    assert_eq!(b[60..], [0xbc, 0x0a, 0x00, 0xa1]);
    let d = Cqe::decode(&b);
    assert_eq!(d, c);
    assert_eq!(
        d.header(),
        CqeHeader {
            cqe_type: CQE_TX_OKAY,
            client_type: CLIENT_TYPE_COMPLETION,
            vendor_err: 0
        }
    );
    let e = CqeHeader {
        cqe_type: CQE_TX_INVALID_OOB,
        client_type: 1,
        vendor_err: 0x12,
    };
    assert_eq!(e.encode().to_le_bytes(), [0x63, 0x12, 0, 0]);
    assert!(is_tx_error(33) && is_tx_error(41) && !is_tx_error(32) && !is_tx_error(42));
}

#[test]
fn rx_and_tx_completion_oobs() {
    let r = RxCompOob {
        hdr: CqeHeader {
            cqe_type: CQE_RX_OKAY,
            client_type: 1,
            vendor_err: 0,
        },
        hashtype: 0x2,
        ip_csum_ok: true,
        tcp_csum_ok: true,
        pkt_len: 1514,
        pkt_hash: 0xdead_beef,
        rx_wqe_offset: 0x40,
        ..RxCompOob::default()
    };
    let b = r.encode();
    assert_eq!(b[0..4], [0x41, 0, 0, 0]);
    assert_eq!(b[4..8], [0x00, 0x00, 0x02, 0x0a]);
    assert_eq!(b[8..12], [0xea, 0x05, 0, 0]);
    assert_eq!(b[12..16], [0; 4]);
    assert_eq!(b[16..20], [0xef, 0xbe, 0xad, 0xde]);
    assert_eq!(b[56..60], [0x40, 0, 0, 0]);
    assert_eq!(RxCompOob::decode(&b), r);
    let mut v = [0u8; 60];
    v[4..8].copy_from_slice(&[0x23, 0x11, 0, 0x20]); // vid 0x123, tag present, udp ok (bit 29)
    let d = RxCompOob::decode(&v);
    assert_eq!(
        (d.vlan_id, d.vlantag_present, d.udp_csum_ok),
        (0x123, true, true)
    );

    let t = TxCompOob {
        hdr: CqeHeader {
            cqe_type: CQE_TX_OKAY,
            client_type: 1,
            vendor_err: 0,
        },
        tx_data_offset: 0,
        tx_sgl_offset: 3,
        tx_wqe_offset: 0x40,
    };
    let b = t.encode();
    assert_eq!(b[0..12], [0x60, 0, 0, 0, 0, 0, 0, 0, 0x03, 0x08, 0, 0]);
    assert_eq!(TxCompOob::decode(&b), t);
}

#[test]
fn eqe_bytes() {
    let e = Eqe {
        details: [0x3005, 0, 0],
        eqe_type: EQE_COMPLETION,
        client_id: 0,
        owner: 1,
    };
    let b = e.encode();
    assert_eq!(
        b,
        [0x05, 0x30, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x03, 0, 0, 0x20]
    );
    assert_eq!(Eqe::decode(&b), e);
}

#[test]
fn owner_bits_empty_valid_overflow() {
    // num = 4: consumers start at head = 4, so zeroed memory (owner 0) is empty.
    assert_eq!(owner_check(0, 4, 4), Owner::Empty);
    assert_eq!(owner_check(1, 4, 4), Owner::Valid);
    assert_eq!(owner_check(2, 4, 4), Owner::Overflow);
    assert_eq!(owner_check(1, 7, 4), Owner::Valid);
    assert_eq!(owner_check(1, 8, 4), Owner::Empty); // second pass expects 2
    assert_eq!(owner_check(2, 8, 4), Owner::Valid);
    // After 7: the 8th pass expects 0 and treats 7 as old.
    assert_eq!(owner_check(7, 32, 4), Owner::Empty);
    assert_eq!(owner_check(0, 32, 4), Owner::Valid);
    assert_eq!(owner_check(6, 32, 4), Owner::Overflow);
}

#[test]
fn sgl_wraps_at_the_ring_end() {
    let mem = HostMemory::new();
    let ring = mem.alloc(4096);
    let mut wq = Wq::new(ring.clone(), 4096).unwrap();
    let h1 = WqeHeader {
        num_sge: 1,
        inline_oob_size_div4: 2,
        ..WqeHeader::default()
    };
    for _ in 0..127 {
        assert_eq!(wq.post(&h1, &[], 8, &[Sge::default()]), Ok(1));
    }
    wq.move_tail(127);
    assert_eq!(wq.head(), 127);
    let sges: Vec<Sge> = (1..=3)
        .map(|i| Sge {
            address: 0x1000 * i,
            mem_key: 7,
            size: 100 * i as u32,
        })
        .collect();
    let h3 = WqeHeader {
        num_sge: 3,
        inline_oob_size_div4: 2,
        ..WqeHeader::default()
    };
    assert_eq!(wq.post(&h3, &[0xaa; 8], 8, &sges), Ok(2));
    assert_eq!(wq.head(), 129);
    let mut b = [0u8; 16];
    ring.read(4064, &mut b[..8]);
    assert_eq!(b[..8], h3.encode());
    ring.read(4072, &mut b[..8]);
    assert_eq!(b[..8], [0xaa; 8]);
    ring.read(4080, &mut b);
    assert_eq!(b, sges[0].encode()); // the last 16 bytes of the ring
    ring.read(0, &mut b);
    assert_eq!(b, sges[1].encode()); // wrapped to the start
    ring.read(16, &mut b);
    assert_eq!(b, sges[2].encode());
    assert_eq!(wq.doorbell_tail(), 129 * 32);
    assert_eq!(wq.avail_space(), 4096 - 64);
}

#[test]
fn wq_refuses_what_does_not_fit() {
    let mem = HostMemory::new();
    let mut wq = Wq::new(mem.alloc(4096), 4096).unwrap();
    let h = WqeHeader {
        num_sge: 1,
        inline_oob_size_div4: 2,
        ..WqeHeader::default()
    };
    for _ in 0..128 {
        wq.post(&h, &[], 8, &[Sge::default()]).unwrap();
    }
    assert_eq!(wq.avail_space(), 0);
    assert!(wq.post(&h, &[], 8, &[Sge::default()]).is_err());
    assert!(Wq::new(mem.alloc(4096), 2048).is_none());
    assert!(Wq::new(mem.alloc(4096), 6000).is_none());
}
