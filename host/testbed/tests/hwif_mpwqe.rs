//! Enhanced MPWQE sessions (spec B.2): start, add, close, restart on eth-seg mismatch,
//! fallback to regular WQEs, full sessions, NOP padding at session start, the inline
//! switch with its hysteresis, and the switch itself.

mod hwif_common;

use hwif_common::*;
use rsnic_core::hwif::mlx5::sq::stop_room;
use rsnic_core::hwif::mlx5::tx::{Gso, InlineMode, TxCsum, TxRejectReason, VlanTag};

#[test]
fn session_start_add_close_and_ring() {
    let (mem, mut env, mut sq) = sq_env(mpwqe_params(7, false));
    assert_eq!(sq.stop_room(), stop_room(16) + stop_room(15));
    let mut addrs = Vec::new();
    for (i, len) in [100usize, 60, 1500].into_iter().enumerate() {
        let mut p = Pkt::new(&mem, i as u32, tcp4_frame(len, 0), vec![]);
        p.csum = TxCsum::Partial;
        addrs.push((len as u32, p.lin_addr));
        sq.xmit(p, i != 2, &mut env).unwrap();
        assert_eq!(sq.session_open(), i != 2);
        assert_eq!(sq.pc(), if i == 2 { 2 } else { 0 }, "pc moves at close");
    }
    let w = sq.ring().bytes(0, 128);
    // ctrl: idx 0, opcode 0x29, ds = 2 + 3 = 5, CQ_UPDATE.
    assert_eq!(
        &w[0..16],
        &[0, 0, 0, 0x29, 0, 0x0a, 0xbc, 5, 0, 0, 0, 0x08, 0, 0, 0, 0]
    );
    // eth: only the offload bytes (cs_flags) are set.
    assert_eq!(
        &w[16..32],
        &[0, 0, 0, 0, 0xc0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    );
    for (k, (len, a)) in addrs.iter().enumerate() {
        assert_eq!(&w[32 + 16 * k..48 + 16 * k], &dseg(*len, *a)[..]);
    }
    assert_eq!(sq.stats.mpwqe_blks, 1);
    assert_eq!(sq.stats.mpwqe_pkts, 3);
    assert_eq!(sq.stats.xmit_more, 2);
    assert_eq!(sq.stats.doorbells, 1);
    assert_eq!(
        env.mmio_writes(),
        vec![(UAR + 0x800, [0, 0, 0, 0x29, 0, 0x0a, 0xbc, 5])]
    );
    // BQL bytes are skb->len (no 60-byte minimum).
    assert_eq!(env.bql_inflight, 100 + 60 + 1500);
    assert_eq!(complete_all(&mut sq, &mut env, 0), vec![0, 1, 2]);
    assert_eq!(env.bql_inflight, 0);
    assert!(env.maps.is_empty());
}

#[test]
fn restart_on_eseg_mismatch() {
    let (mem, mut env, mut sq) = sq_env(mpwqe_params(7, false));
    env.log.borrow_mut().clear();
    let p = Pkt::new(&mem, 0, tcp4_frame(100, 0), vec![]);
    sq.xmit(p, true, &mut env).unwrap();
    let mut p = Pkt::new(&mem, 1, tcp4_frame(100, 0), vec![]);
    p.csum = TxCsum::Partial;
    sq.xmit(p, false, &mut env).unwrap();
    assert_eq!(sq.stats.mpwqe_blks, 2);
    // Session 1 closed at pc 0 with ds 3 and no CQE request; session 2 at pc 1 rung.
    assert_eq!(
        sq.ring().bytes(0, 12),
        vec![0, 0, 0, 0x29, 0, 0x0a, 0xbc, 3, 0, 0, 0, 0]
    );
    assert_eq!(sq.ring().bytes(64 + 20, 1), vec![0xc0]);
    assert_eq!(
        env.mmio_writes(),
        vec![(UAR + 0x800, [0, 0, 1, 0x29, 0, 0x0a, 0xbc, 3])]
    );
    assert_eq!(sq.pc(), 2);
    assert_eq!(complete_all(&mut sq, &mut env, 1), vec![0, 1]);
}

#[test]
fn full_session_closes_and_next_one_starts() {
    let (_, mut env, mut sq) = sq_env(mpwqe_params(7, false));
    for i in 0..60u32 {
        xmit_one(&mut sq, &mut env, i, 64, i != 59);
        if i == 57 {
            // 58 packets: ds = 60 = 15 * 4 -> closed (not rung: xmit_more).
            assert!(!sq.session_open());
            assert_eq!(sq.pc(), 15);
            assert_eq!(
                sq.ring().bytes(0, 8),
                vec![0, 0, 0, 0x29, 0, 0x0a, 0xbc, 60]
            );
            assert_eq!(env.mmio_writes().len(), 0);
        }
    }
    assert_eq!(sq.stats.mpwqe_blks, 2);
    assert_eq!(sq.pc(), 16);
    assert_eq!(
        env.mmio_writes(),
        vec![(UAR + 0x800, [0, 0, 15, 0x29, 0, 0x0a, 0xbc, 4])]
    );
    assert_eq!(
        complete_all(&mut sq, &mut env, 15),
        (0..60).collect::<Vec<_>>()
    );
    assert!(env.maps.is_empty());
}

#[test]
fn fallback_closes_session_without_ringing() {
    let (mem, mut env, mut sq) = sq_env(mpwqe_params(7, false));
    let mk_vlan = |id| {
        let mut p = Pkt::new(&mem, id, udp4_frame(80, 0), vec![]);
        p.vlan = Some(VlanTag {
            tci: 7,
            dot1ad: false,
        });
        p
    };
    let mk_gso = |id| {
        let mut p = Pkt::new(&mem, id, tcp4_frame(54, 0), vec![vec![0; 2000]]);
        p.gso = Some(Gso {
            size: 1000,
            segs: 2,
        });
        p
    };
    let mk_frag = |id| Pkt::new(&mem, id, tcp4_frame(60, 0), vec![vec![0; 100]]);
    let mut next = 0u32;
    let mut expect_pc = 0u16;
    for (k, make) in [
        &mk_vlan as &dyn Fn(u32) -> Pkt,
        &mk_gso as &dyn Fn(u32) -> Pkt,
        &mk_frag as &dyn Fn(u32) -> Pkt,
    ]
    .into_iter()
    .enumerate()
    {
        let before = env.mmio_writes().len();
        for _ in 0..2 {
            xmit_one(&mut sq, &mut env, next, 70, true);
            next += 1;
        }
        assert!(sq.session_open());
        // The ineligible packet closes the session (ds 4, one WQEBB) and goes regular.
        sq.xmit(make(next), false, &mut env).unwrap();
        next += 1;
        assert!(!sq.session_open());
        assert_eq!(
            sq.ring().bytes(usize::from(expect_pc) * 64, 12),
            vec![0, 0, expect_pc as u8, 0x29, 0, 0x0a, 0xbc, 4, 0, 0, 0, 0],
            "case {k}: closed without CQE request"
        );
        let reg = expect_pc + 1;
        let w = sq.ring().bytes(usize::from(reg) * 64, 12);
        assert_ne!(w[3], 0x29);
        assert_eq!(w[11], 0x08, "the regular WQE carries the doorbell");
        assert_eq!(env.mmio_writes().len(), before + 1);
        expect_pc = sq.pc();
        let got = complete_all(&mut sq, &mut env, reg);
        assert_eq!(got, (next - 3..next).collect::<Vec<_>>());
    }
    assert_eq!(sq.stats.mpwqe_blks, 3);
    assert_eq!(sq.stats.mpwqe_pkts, 6);
    assert!(env.maps.is_empty());

    // With a min-inline requirement a packet joins a session only inlined whole: one of
    // more than 252 bytes is not eligible (a regular SEND with its headers inline), a small
    // one is (an MPWQE whose packet is an inline segment, nothing mapped).
    let mut p = mpwqe_params(7, false);
    p.min_inline = InlineMode::L2;
    let mut sq = make_sq(&env, p);
    assert!(sq.inline_required());
    xmit_one(&mut sq, &mut env, 0, 300, false);
    assert_eq!(sq.stats.mpwqe_blks, 0);
    assert_eq!(sq.ring().bytes(3, 1), vec![0x0a]);
    let pc = usize::from(sq.pc());
    let maps = env.map_calls;
    let small = tcp4_frame(70, 0);
    sq.xmit(Pkt::new(&mem, 1, small.clone(), vec![]), false, &mut env)
        .unwrap();
    assert_eq!((sq.stats.mpwqe_blks, sq.stats.inlnw), (1, 1));
    assert_eq!(env.map_calls, maps, "an inlined packet is not mapped");
    assert_eq!(sq.ring().bytes(pc * 64 + 3, 1), vec![0x29]);
    // After ctrl and eth seg: the inline segment (byte count | 0x80000000, the packet).
    let mut want = (small.len() as u32 | 0x8000_0000).to_be_bytes().to_vec();
    want.extend_from_slice(&small);
    assert_eq!(sq.ring().bytes(pc * 64 + 32, want.len()), want);
}

#[test]
fn dropped_packet_at_burst_end_still_rings_open_session() {
    let (_, mut env, mut sq) = sq_env(mpwqe_params(7, false));
    xmit_one(&mut sq, &mut env, 0, 70, true);
    // The last packet of the burst fails to map: the session must still reach the device.
    env.fail_map_at = Some(1);
    let r = reject_one(&mut sq, &mut env, 1, 70);
    assert_eq!(r.reason, TxRejectReason::MapError);
    assert!(!sq.session_open());
    assert_eq!(
        env.mmio_writes(),
        vec![(UAR + 0x800, [0, 0, 0, 0x29, 0, 0x0a, 0xbc, 3])]
    );
    assert_eq!(complete_all(&mut sq, &mut env, 0), vec![0]);
    assert!(env.maps.is_empty());
}

#[test]
fn session_start_pads_to_the_fragment_edge() {
    let (mem, mut env, mut sq) = sq_env(mpwqe_params(7, false));
    // 50 regular (non-linear) single-WQEBB packets, completed.
    for i in 0..50u32 {
        let p = Pkt::new(&mem, i, tcp4_frame(60, 0), vec![vec![0; 10]]);
        sq.xmit(p, i != 49, &mut env).unwrap();
    }
    assert_eq!(complete_all(&mut sq, &mut env, 49).len(), 50);
    // A session needs 15 contiguous WQEBBs; only 14 remain in the fragment.
    xmit_one(&mut sq, &mut env, 100, 60, false);
    assert_eq!(sq.stats.nop, 14);
    assert_eq!(
        sq.ring().bytes(50 * 64, 8),
        vec![0, 0, 50, 0, 0, 0x0a, 0xbc, 1]
    );
    assert_eq!(
        sq.ring().bytes(63 * 64, 8),
        vec![0, 0, 63, 0, 0, 0x0a, 0xbc, 1]
    );
    assert_eq!(
        sq.ring().bytes(64 * 64, 8),
        vec![0, 0, 64, 0x29, 0, 0x0a, 0xbc, 3]
    );
    assert_eq!(sq.pc(), 65);
    assert_eq!(complete_all(&mut sq, &mut env, 64), vec![100]);
    assert_eq!(sq.cc(), 65);
}

#[test]
fn inline_switch_with_hysteresis() {
    let (mem, mut env, mut sq) = sq_env(mpwqe_params(8, true));
    // 130 packets outstanding, sent as dseg sessions (inline is off below 128).
    xmit_tcp(&mut sq, &mut env, 130, 60, |i| i != 129);
    assert!(!sq.inline_on());
    assert_eq!(sq.stats.inlnw, 0);
    let pc0 = sq.pc();
    let maps0 = env.map_calls;
    // Next session start sees 130 >= 128 outstanding: inline on.
    let frame = tcp4_frame(60, 0x33);
    let mut sent = Vec::new();
    for i in 0..12u32 {
        sent.push(frame.clone());
        sq.xmit(
            Pkt::new(&mem, 200 + i, frame.clone(), vec![]),
            i != 11,
            &mut env,
        )
        .unwrap();
    }
    assert!(sq.inline_on());
    assert_eq!(sq.stats.inlnw, 12);
    assert_eq!(env.map_calls, maps0, "inlined packets are not mapped");
    // 60 bytes -> 4 DS each; the full test (ds + 16 > 60) closes after 11 packets (ds 46).
    let at = usize::from(pc0 & 255) * 64;
    assert_eq!(
        sq.ring().bytes(at, 8),
        vec![0, 0, pc0 as u8, 0x29, 0, 0x0a, 0xbc, 46]
    );
    let first = sq.ring().bytes(at + 32, 64);
    assert_eq!(&first[0..4], &[0x80, 0, 0, 60]);
    assert_eq!(&first[4..64], &frame[..]);
    assert_eq!(sq.stats.mpwqe_blks, 5);
    // Sessions: 58+58+14 dsegs at pc 0, 15, 30 (4 WQEBBs); 11 inline at 34 (12 WQEBBs);
    // the 12th packet in a new session at 46 (ds 6, 2 WQEBBs).
    assert_eq!((pc0, sq.pc()), (34, 48));
    // A CQE pointing inside a WQE (47) is refused; the one for its start (46) works.
    let got = complete_all(&mut sq, &mut env, 46);
    assert_eq!(got.len(), 142);
    assert!(sq.error().is_none());
    sq.xmit(Pkt::new(&mem, 999, frame.clone(), vec![]), false, &mut env)
        .unwrap();
    assert!(!sq.inline_on());
    assert_eq!(sq.stats.inlnw, 12);
    // Inline off again: packet 999 went out by DMA.
    assert_eq!(env.maps.len(), 1);
}

#[test]
fn switching_mpwqe_needs_an_idle_sq() {
    let (_, mut env, mut sq) = sq_env(sq_params(7));
    assert_eq!(sq.stop_room(), 31);
    xmit_one(&mut sq, &mut env, 0, 60, false);
    assert!(sq.set_mpwqe(true).is_err());
    assert_eq!(complete_all(&mut sq, &mut env, 0), vec![0]);
    sq.set_mpwqe(true).unwrap();
    assert_eq!(sq.stop_room(), 60);
    xmit_one(&mut sq, &mut env, 1, 60, false);
    assert_eq!(sq.stats.mpwqe_blks, 1);
    // 31 + 29 = 60 < 64: the smallest ring accepts MPWQE.
    let sq64 = make_sq(&env, mpwqe_params(6, false));
    assert_eq!(sq64.stop_room(), 60);
}

#[test]
fn burst_of_32_rings_once() {
    let (_, mut env, mut sq) = sq_env(mpwqe_params(7, false));
    env.log.borrow_mut().clear();
    xmit_tcp(&mut sq, &mut env, 32, 64, |i| i != 31);
    // One session of 32: ds = 34 -> 9 WQEBBs, one doorbell, one DBR write (pc = 9).
    assert_eq!(
        env.mmio_writes(),
        vec![(UAR + 0x800, [0, 0, 0, 0x29, 0, 0x0a, 0xbc, 34])]
    );
    let dbr = env.sq_dbr_writes();
    assert_eq!(dbr, vec![Ev::Write("sq_dbr", 4, vec![0, 0, 0, 9])]);
    assert_eq!(
        (sq.stats.mpwqe_blks, sq.stats.wqes, sq.stats.doorbells),
        (1, 1, 1)
    );
    assert_eq!(
        complete_all(&mut sq, &mut env, 0),
        (0..32).collect::<Vec<_>>()
    );
}

/// A session's packets count in `packets`, `bytes`, `mpwqe_pkts` and `csum_*` when it is
/// posted, once per session: at the end of each burst the counters are exact, a session
/// restarted by a packet with other offloads included.
#[test]
fn session_counters_are_exact_when_the_burst_ends() {
    let (mem, mut env, mut sq) = sq_env(mpwqe_params(7, false));
    // Burst 1: two plain packets, then one with checksum offload (a second session).
    for (i, (len, partial)) in [(100usize, false), (60, false), (300, true)]
        .into_iter()
        .enumerate()
    {
        let mut p = Pkt::new(&mem, i as u32, tcp4_frame(len, 0), vec![]);
        if partial {
            p.csum = TxCsum::Partial;
        }
        sq.xmit(p, i != 2, &mut env).unwrap();
    }
    assert!(!sq.session_open());
    let s = sq.stats;
    assert_eq!((s.packets, s.bytes, s.mpwqe_pkts), (3, 100 + 60 + 300, 3));
    assert_eq!(
        (s.csum_none, s.csum_partial, s.csum_partial_inner),
        (2, 1, 0)
    );
    assert_eq!((s.mpwqe_blks, s.wqes, s.xmit_more), (2, 2, 2));
    // Burst 2: one packet.
    let p = Pkt::new(&mem, 3, tcp4_frame(80, 0), vec![]);
    sq.xmit(p, false, &mut env).unwrap();
    let s = sq.stats;
    assert_eq!(
        (s.packets, s.bytes, s.mpwqe_pkts),
        (4, 100 + 60 + 300 + 80, 4)
    );
    assert_eq!((s.csum_none, s.csum_partial), (3, 1));
    assert_eq!(complete_all(&mut sq, &mut env, 2), vec![0, 1, 2, 3]);
    assert!(env.maps.is_empty());
}
