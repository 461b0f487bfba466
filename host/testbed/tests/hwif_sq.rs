//! The regular SQ path: WQEs checked byte by byte against the spec (A.3, A.4, B.1), NOP
//! padding at fragment and ring edges (A.2), the doorbell sequence (A.6), room, stop and
//! wake, busy and map failures.

mod hwif_common;

use hwif_common::*;
use rsnic_core::hwif::mlx5::sq::stop_room;
use rsnic_core::hwif::mlx5::tx::{Gso, InlineMode, TxCsum, TxRejectReason, VlanTag};
use rsnic_testbed::mem::HostMemory;

#[test]
fn linear_send_no_inline_and_doorbell_sequence() {
    let (mem, mut env, mut sq) = sq_env(sq_params(6));
    let p = Pkt::new(&mem, 1, tcp4_frame(100, 1), vec![]);
    let addr = p.lin_addr;
    env.log.borrow_mut().clear();
    sq.xmit(p, false, &mut env).unwrap();

    let w = sq.ring().bytes(0, 64);
    // ctrl: idx 0, SEND; sqn 0xabc, ds 3; CQ_UPDATE set by the doorbell.
    assert_eq!(
        &w[0..16],
        &[0, 0, 0, 0x0a, 0, 0x0a, 0xbc, 3, 0, 0, 0, 0x08, 0, 0, 0, 0]
    );
    assert_eq!(&w[16..32], &[0u8; 16]);
    assert_eq!(&w[32..48], &dseg(100, addr)[..]);
    assert_eq!(sq.pc(), 1);

    // The doorbell sequence: CQ_UPDATE, dma_wmb, DBR db[1] = BE32(pc), wmb, 64-bit MMIO.
    let log = env.log.borrow().clone();
    let tail: Vec<Ev> = log[log.len() - 5..].to_vec();
    assert_eq!(
        tail,
        vec![
            Ev::Write("wq", 11, vec![0x08]),
            Ev::DmaWmb,
            Ev::Write("sq_dbr", 4, vec![0, 0, 0, 1]),
            Ev::Wmb,
            Ev::Mmio64(UAR + 0x800, [0, 0, 0, 0x0a, 0, 0x0a, 0xbc, 3]),
        ]
    );
    assert_eq!(sq.stats.doorbells, 1);
    assert_eq!(sq.stats.packets, 1);
    assert_eq!(sq.stats.bytes, 100);
    assert_eq!(sq.stats.csum_none, 1);
    assert_eq!(env.bql_inflight, 100);

    // A short frame counts 60 bytes for BQL.
    let p = Pkt::new(&mem, 2, udp4_frame(42, 0), vec![]);
    sq.xmit(p, false, &mut env).unwrap();
    assert_eq!(env.bql_inflight, 160);
    assert_eq!(sq.stats.bytes, 160);
    assert_eq!(&sq.ring().bytes(64, 8), &[0, 0, 1, 0x0a, 0, 0x0a, 0xbc, 3]);
}

#[test]
fn nonlinear_l2_inline_with_checksum() {
    let mut p = sq_params(6);
    p.min_inline = InlineMode::L2;
    let (mem, mut env, mut sq) = sq_env(p);
    let lin = tcp4_frame(64, 7);
    let mut pkt = Pkt::new(
        &mem,
        1,
        lin.clone(),
        vec![vec![1; 200], vec![], vec![2; 300]],
    );
    pkt.csum = TxCsum::Partial;
    let (la, f0, f2) = (pkt.lin_addr, pkt.frag_addr[0], pkt.frag_addr[2]);
    sq.xmit(pkt, false, &mut env).unwrap();
    // ihs 18 -> 16 bytes in one inline DS; ds = 2 + 1 + 1 (linear rest) + 2 (frags) = 6.
    let w = sq.ring().bytes(0, 128);
    assert_eq!(&w[0..8], &[0, 0, 0, 0x0a, 0, 0x0a, 0xbc, 6]);
    let mut eth = vec![0, 0, 0, 0, 0xc0, 0, 0, 0, 0, 0, 0, 0, 0, 18];
    eth.extend_from_slice(&lin[0..2]);
    assert_eq!(&w[16..32], &eth[..]);
    assert_eq!(&w[32..48], &lin[2..18]);
    assert_eq!(&w[48..64], &dseg(46, la + 18)[..]);
    assert_eq!(&w[64..80], &dseg(200, f0)[..]);
    assert_eq!(&w[80..96], &dseg(300, f2)[..]);
    assert_eq!(sq.pc(), 2);
    assert_eq!(sq.stats.csum_partial, 1);
    assert_eq!(env.bql_inflight, 564);
    assert_eq!(env.maps.len(), 3);
}

#[test]
fn vlan_inserted_into_inline_copy() {
    let mut p = sq_params(6);
    p.min_inline = InlineMode::L2;
    let (mem, mut env, mut sq) = sq_env(p);
    let f = udp4_frame(60, 3);
    let mut pkt = Pkt::new(&mem, 1, f.clone(), vec![]);
    pkt.vlan = Some(VlanTag {
        tci: 0x0123,
        dot1ad: false,
    });
    let la = pkt.lin_addr;
    sq.xmit(pkt, false, &mut env).unwrap();
    // ihs 18, +4 tag = 22 inline bytes: 2 in the eth seg, 20 in two DS; ds = 2 + 2 + 1 = 5.
    let w = sq.ring().bytes(0, 128);
    assert_eq!(&w[4..8], &[0, 0x0a, 0xbc, 5]);
    assert_eq!(&w[28..32], &[0, 22, f[0], f[1]]);
    let mut inl = f[2..12].to_vec();
    inl.extend_from_slice(&[0x81, 0x00, 0x01, 0x23]);
    inl.extend_from_slice(&f[12..18]);
    inl.extend_from_slice(&[0; 12]);
    assert_eq!(&w[32..64], &inl[..]);
    assert_eq!(&w[64..80], &dseg(42, la + 18)[..]);
    assert_eq!(sq.pc(), 2);
    assert_eq!(sq.stats.added_vlan_packets, 1);
}

#[test]
fn vlan_hw_insert_and_forced_l2_inline() {
    let (mem, mut env, mut sq) = sq_env(sq_params(6));
    let mut pkt = Pkt::new(&mem, 1, udp4_frame(60, 3), vec![]);
    pkt.vlan = Some(VlanTag {
        tci: 0x0123,
        dot1ad: false,
    });
    sq.xmit(pkt, false, &mut env).unwrap();
    let w = sq.ring().bytes(0, 64);
    assert_eq!(&w[4..8], &[0, 0x0a, 0xbc, 3]);
    assert_eq!(
        &w[16..32],
        &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x00, 0x01, 0x23]
    );

    // A device without VLAN insertion: the tag goes inline (802.1ad TPID here).
    let mut p = sq_params(6);
    p.vlan_need_l2_inline = true;
    let mut sq = make_sq(&env, p);
    let f = udp4_frame(60, 3);
    let mut pkt = Pkt::new(&mem, 1, f.clone(), vec![]);
    pkt.vlan = Some(VlanTag {
        tci: 0xe00a,
        dot1ad: true,
    });
    sq.xmit(pkt, false, &mut env).unwrap();
    let w = sq.ring().bytes(0, 64);
    assert_eq!(&w[28..30], &[0, 22]);
    assert_eq!(&w[42..46], &[0x88, 0xa8, 0xe0, 0x0a]);
    // Untagged packets on that SQ inline nothing.
    let pkt = Pkt::new(&mem, 2, f, vec![]);
    sq.xmit(pkt, false, &mut env).unwrap();
    assert_eq!(&sq.ring().bytes(128 + 4, 4), &[0, 0x0a, 0xbc, 3]);
}

#[test]
fn gso_lso_wqe() {
    let (mem, mut env, mut sq) = sq_env(sq_params(6));
    let lin = tcp4_frame(154, 9);
    let mut pkt = Pkt::new(&mem, 1, lin.clone(), vec![vec![5; 1000], vec![6; 1000]]);
    pkt.gso = Some(Gso { size: 700, segs: 3 });
    pkt.csum = TxCsum::Partial;
    let (la, f0, f1) = (pkt.lin_addr, pkt.frag_addr[0], pkt.frag_addr[1]);
    sq.xmit(pkt, false, &mut env).unwrap();
    // ihs = 14 + 20 + 20 = 54; inline 52 bytes after the eth seg -> 4 DS;
    // ds = 2 + 4 + 1 + 2 = 9 -> 3 WQEBBs.
    let w = sq.ring().bytes(0, 192);
    assert_eq!(&w[0..8], &[0, 0, 0, 0x0e, 0, 0x0a, 0xbc, 9]);
    let mut eth = vec![0, 0, 0, 0, 0xc0, 0, 0x02, 0xbc, 0, 0, 0, 0, 0, 54];
    eth.extend_from_slice(&lin[0..2]);
    assert_eq!(&w[16..32], &eth[..]);
    assert_eq!(&w[32..84], &lin[2..54]);
    assert_eq!(&w[84..96], &[0; 12]);
    assert_eq!(&w[96..112], &dseg(100, la + 54)[..]);
    assert_eq!(&w[112..128], &dseg(1000, f0)[..]);
    assert_eq!(&w[128..144], &dseg(1000, f1)[..]);
    assert_eq!(sq.pc(), 3);
    // BQL bytes: len + (segs - 1) * ihs.
    assert_eq!(env.bql_inflight, 2154 + 2 * 54);
    assert_eq!(sq.stats.packets, 3);
    assert_eq!(sq.stats.tso_packets, 1);
    assert_eq!(sq.stats.tso_bytes, 2100);
}

#[test]
fn inline_modes_ip_and_tcp_udp() {
    let mem = HostMemory::new();
    let mut env = Env::new(&mem);
    for (mode, frame, ihs) in [
        (InlineMode::Ip, tcp4_frame(100, 0), 34u8),
        (InlineMode::TcpUdp, tcp4_frame(100, 0), 54),
        (InlineMode::TcpUdp, udp4_frame(100, 0), 42),
        (InlineMode::L2, tcp4_frame(100, 0), 18),
    ] {
        let mut p = sq_params(6);
        p.min_inline = mode;
        let mut sq = make_sq(&env, p);
        sq.xmit(Pkt::new(&mem, 1, frame, vec![]), false, &mut env)
            .unwrap();
        assert_eq!(sq.ring().bytes(28, 2), vec![0, ihs], "{mode:?}");
    }
    // TCP_UDP on a non-IP frame: 14 -> 18.
    let mut arp = vec![0u8; 60];
    arp[12..14].copy_from_slice(&[0x08, 0x06]);
    let mut p = sq_params(6);
    p.min_inline = InlineMode::TcpUdp;
    let mut sq = make_sq(&env, p);
    sq.xmit(Pkt::new(&mem, 1, arp, vec![]), false, &mut env)
        .unwrap();
    assert_eq!(sq.ring().bytes(28, 2), vec![0, 18]);
    // Inline is capped at the linear length: 10 linear bytes, the rest in a frag.
    let mut p = sq_params(6);
    p.min_inline = InlineMode::L2;
    let mut sq = make_sq(&env, p);
    let f = tcp4_frame(100, 0);
    sq.xmit(
        Pkt::new(&mem, 1, f[..10].to_vec(), vec![f[10..].to_vec()]),
        false,
        &mut env,
    )
    .unwrap();
    // ihs 10, no linear remainder: ds = 2 + 1 (8 inline bytes) + 1 frag.
    assert_eq!(sq.ring().bytes(28, 2), vec![0, 10]);
    assert_eq!(sq.ring().bytes(4, 4), vec![0, 0x0a, 0xbc, 4]);
}

#[test]
fn malformed_and_oversized_packets_are_handed_back() {
    let (mem, mut env, mut sq) = sq_env(sq_params(6));
    // GSO without a transport header in the linear part.
    let mut p = Pkt::new(&mem, 1, tcp4_frame(60, 0)[..20].to_vec(), vec![vec![0; 40]]);
    p.gso = Some(Gso { size: 100, segs: 2 });
    let r = sq.xmit(p, false, &mut env).unwrap_err();
    assert_eq!((r.pkt.id, r.reason), (1, TxRejectReason::Malformed));
    // 62 frags: more than 16 WQEBBs.
    let p = Pkt::new(&mem, 2, tcp4_frame(60, 0), vec![vec![1; 8]; 62]);
    let r = sq.xmit(p, false, &mut env).unwrap_err();
    assert_eq!((r.pkt.id, r.reason), (2, TxRejectReason::TooManySegments));
    assert_eq!(sq.stats.dropped, 2);
    assert_eq!(sq.pc(), 0);
    assert!(env.maps.is_empty());
    // 60 frags fit: ds = 2 + 1 + 60 = 63 -> 16 WQEBBs.
    let p = Pkt::new(&mem, 3, tcp4_frame(60, 0), vec![vec![1; 8]; 60]);
    sq.xmit(p, false, &mut env).unwrap();
    assert_eq!(sq.pc(), 16);
    assert_eq!(sq.ring().bytes(7, 1), vec![63]);
}

#[test]
fn nop_padding_at_fragment_and_ring_edge() {
    for log_sz in [6u8, 7] {
        let (mem, mut env, mut sq) = sq_env(sq_params(log_sz));
        // Walk pc to 63 with single-WQEBB packets, completing as we go.
        let mut id = 0;
        while sq.pc() < 63 {
            xmit_one(&mut sq, &mut env, id, 100, false);
            id += 1;
            if sq.pc() % 16 == 0 {
                let last = sq.pc() - 1;
                let got = complete_all(&mut sq, &mut env, last);
                assert_eq!(got.len(), 16);
            }
        }
        // A 2-WQEBB WQE (frag + L2 inline) does not fit in the last slot of the fragment.
        let p = Pkt::new(&mem, 1000, tcp4_frame(100, 0), vec![vec![1; 100]; 3]);
        sq.xmit(p, false, &mut env).unwrap();
        assert_eq!(sq.stats.nop, 1);
        // The NOP at index 63: opcode 0, ds 1, no CQE request.
        assert_eq!(
            sq.ring().bytes(63 * 64, 16),
            vec![0, 0, 0x3f, 0, 0, 0x0a, 0xbc, 1, 0, 0, 0, 0, 0, 0, 0, 0]
        );
        // The WQE right after, with its free-running index 64.
        let at = if log_sz == 6 { 0 } else { 64 * 64 };
        // ds = 2 + 1 (linear) + 3 (frags) = 6.
        assert_eq!(
            sq.ring().bytes(at, 8),
            vec![0, 0, 0x40, 0x0a, 0, 0x0a, 0xbc, 6]
        );
        assert_eq!(sq.pc(), 66);
        // One CQE for WQE 64 completes the NOP and the WQE.
        let got = complete_all(&mut sq, &mut env, 64);
        let mut want: Vec<u32> = (48..63).collect();
        want.push(1000);
        assert_eq!(got, want);
        assert_eq!(sq.cc(), 66);
        assert!(env.maps.is_empty());
    }
}

#[test]
fn burst_of_32_rings_once() {
    let (_, mut env, mut sq) = sq_env(sq_params(7));
    env.log.borrow_mut().clear();
    xmit_tcp(&mut sq, &mut env, 32, 100, |i| i != 31);
    let mmio = env.mmio_writes();
    assert_eq!(mmio.len(), 1);
    assert_eq!(sq.stats.doorbells, 1);
    assert_eq!(sq.stats.xmit_more, 31);
    // Rung with the last WQE's ctrl (index 31) and DBR = 32.
    assert_eq!(mmio[0], (UAR + 0x800, [0, 0, 0x1f, 0x0a, 0, 0x0a, 0xbc, 3]));
    let dbr_writes = env.sq_dbr_writes();
    assert_eq!(dbr_writes, vec![Ev::Write("sq_dbr", 4, vec![0, 0, 0, 32])]);
    // Only the last WQE asks for a CQE.
    assert_eq!(sq.ring().bytes(30 * 64 + 11, 1), vec![0]);
    assert_eq!(sq.ring().bytes(31 * 64 + 11, 1), vec![0x08]);
}

#[test]
fn stop_busy_and_wake() {
    let (_, mut env, mut sq) = sq_env(sq_params(6));
    assert_eq!(sq.stop_room(), stop_room(16));
    let mut n = 0u32;
    while !env.stopped {
        xmit_one(&mut sq, &mut env, n, 100, false);
        n += 1;
    }
    // Stops once fewer than 31 WQEBBs are free: after 34 posts (30 free).
    assert_eq!(n, 34);
    assert_eq!(sq.stats.stopped, 1);
    // Ignoring the stop, it accepts until the ring is full, then hands packets back.
    while sq.pc() != 64 {
        xmit_one(&mut sq, &mut env, n, 100, false);
        n += 1;
    }
    let r = reject_one(&mut sq, &mut env, 999, 100);
    assert_eq!((r.pkt.id, r.reason), (999, TxRejectReason::Busy));
    assert_eq!(sq.stats.busy, 1);
    assert_eq!(sq.stats.dropped, 0);
    // Completing 33 WQEs leaves 33 free: room for stop_room (31) -> wake.
    let got = complete_all(&mut sq, &mut env, 32);
    assert_eq!(got, (0..33).collect::<Vec<_>>());
    assert!(!env.stopped);
    assert_eq!(sq.stats.wake, 1);
    let got = complete_all(&mut sq, &mut env, 63);
    assert_eq!(got, (33..64).collect::<Vec<_>>());
    assert_eq!(env.bql_inflight, 0);
    assert!(env.maps.is_empty());
}

#[test]
fn map_failure_unmaps_and_flushes() {
    let (mem, mut env, mut sq) = sq_env(sq_params(6));
    xmit_one(&mut sq, &mut env, 1, 100, true);
    assert_eq!(env.mmio_writes().len(), 0);
    // Linear maps (call 1), frag 0 maps (call 2), frag 1 fails (call 3).
    env.fail_map_at = Some(3);
    let p = Pkt::new(&mem, 2, tcp4_frame(100, 0), vec![vec![1; 10], vec![2; 10]]);
    let r = sq.xmit(p, true, &mut env).unwrap_err();
    assert_eq!((r.pkt.id, r.reason), (2, TxRejectReason::MapError));
    assert_eq!(env.maps.len(), 1, "only packet 1's mapping is left");
    assert_eq!(sq.stats.dropped, 1);
    assert_eq!(sq.pc(), 1);
    // The pending WQE was rung although xmit_more was set.
    assert_eq!(
        env.mmio_writes(),
        vec![(UAR + 0x800, [0, 0, 0, 0x0a, 0, 0x0a, 0xbc, 3])]
    );
    let got = complete_all(&mut sq, &mut env, 0);
    assert_eq!(got, vec![1]);
    assert!(env.maps.is_empty());
    assert_eq!(
        env.map_calls,
        env.unmap_calls + 1 /* the failed call */
    );
}

/// The common packet's attributes (`tx_attr_common`, which `Sq::xmit` takes instead of
/// stage 1a) are exactly `tx_attr`'s; every other packet gets none and goes to `tx_attr`.
#[test]
fn common_packet_attributes_are_tx_attrs() {
    use rsnic_core::hwif::mlx5::tx::{tx_attr, tx_attr_common};
    let mem = HostMemory::new();
    for len in [54usize, 59, 60, 61, 100, 1500] {
        for csum in [TxCsum::None, TxCsum::Partial, TxCsum::PartialInner] {
            let mut p = Pkt::new(&mem, 1, tcp4_frame(len, 1), vec![]);
            p.csum = csum;
            let want = tx_attr(&p, InlineMode::None, false).unwrap();
            assert_eq!(
                tx_attr_common(&p, InlineMode::None),
                Some(want),
                "len {len}"
            );
            assert!(want.mpwqe_eligible());
            // A min-inline mode needs the header parse: not common.
            assert_eq!(tx_attr_common(&p, InlineMode::L2), None);
        }
    }
    let frag = Pkt::new(&mem, 2, tcp4_frame(60, 1), vec![vec![0u8; 100]]);
    assert_eq!(tx_attr_common(&frag, InlineMode::None), None);
    // An empty packet has no data segment to give: not common (no data segment of 0 bytes).
    let empty = Pkt::new(&mem, 5, vec![], vec![]);
    assert_eq!(tx_attr_common(&empty, InlineMode::None), None);
    let mut tagged = Pkt::new(&mem, 3, tcp4_frame(60, 1), vec![]);
    tagged.vlan = Some(VlanTag {
        tci: 5,
        dot1ad: false,
    });
    assert_eq!(tx_attr_common(&tagged, InlineMode::None), None);
    let mut gso = Pkt::new(&mem, 4, tcp4_frame(1500, 1), vec![]);
    gso.gso = Some(Gso {
        size: 1000,
        segs: 2,
    });
    assert_eq!(tx_attr_common(&gso, InlineMode::None), None);
}
