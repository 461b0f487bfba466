//! End-to-end: the hwif/mana driver against the simulated MANA device, through the port pair.

use proptest::prelude::*;
use rsnic_core::hwif::mana::fmt::Doorbell;
use rsnic_core::hwif::mana::fmt::DB_RQ;
use rsnic_core::hwif::mlx5::tx::{Gso, TxCsum, VlanTag};
use rsnic_core::sim::pkt;
use rsnic_testbed::fixtures::{tcp4_segment, Ipv4Frame};
use rsnic_testbed::mana_pair::{Frame, ManaConfig, ManaPair, RX_PORT, TX_PORT};

/// Ethernet/IPv4/UDP frame of `len` bytes (≥ 42) with `tag` in the payload and fixed port
/// numbers (so RSS spreads nothing: one RQ).
fn udp4(len: usize, tag: u32) -> Vec<u8> {
    let mut f = Ipv4Frame::udp(len)
        .lengths()
        .ttl(64)
        .addrs()
        .ports(1000, 2000)
        .payload(|i| (i as u32 ^ tag) as u8)
        .build();
    if f.len() >= 46 {
        f[42..46].copy_from_slice(&tag.to_be_bytes());
    }
    f
}

/// The frame with its IPv4 header checksum filled in (the stack's job without TSO).
fn ipsum(mut v: Vec<u8>) -> Vec<u8> {
    let h = pkt::parse(&v);
    pkt::fill_checksums(&mut v, &h, true, false);
    v
}

#[test]
fn burst_of_32_rings_once_and_arrives() {
    let mut p = ManaPair::new(ManaConfig::default());
    let frames: Vec<Frame> = (0..32)
        .map(|i| Frame::linear(udp4(64 + i, i as u32)))
        .collect();
    assert_eq!(p.send_burst(&frames), 32);
    assert_eq!(p.drv_tx().doorbells, 1);
    assert_eq!(p.run_device(), 32);
    let t = p.poll_tx(64);
    assert_eq!((t.cqes, t.packets), (32, 32));
    let rx = p.poll_rx(64);
    assert_eq!(rx.len(), 32);
    for (f, r) in frames.iter().zip(&rx) {
        assert_eq!(r.bytes, f.expected_wire_8021q());
        // The frames carry no IPv4 header checksum: the device must say so.
        assert!(!r.comp.ip_csum_ok && r.comp.csum_fail);
    }
    p.check_counters().unwrap();
    assert_eq!(p.dev(TX_PORT).sq_doorbells, 1);
}

#[test]
fn offloads_checksum_tso_vlan() {
    let mut p = ManaPair::new(ManaConfig::default());
    // UDP with checksum offload: the wire has a valid checksum.
    let mut f = Frame::linear(ipsum(udp4(200, 7)));
    f.csum = TxCsum::Partial;
    // TCP with a fragment and checksum offload.
    let b = ipsum(tcp4_segment(300));
    let mut g = Frame::linear(b[..100].to_vec());
    g.frags = vec![b[100..].to_vec()];
    g.csum = TxCsum::Partial;
    // VLAN insertion: long OOB.
    let mut v = Frame::linear(ipsum(udp4(80, 9)));
    v.csum = TxCsum::Partial;
    v.vlan = Some(VlanTag {
        tci: 0xa123,
        dot1ad: false,
    });
    // TSO: 3000 bytes of payload at MSS 1000, linear part longer than the headers.
    let mut t = Frame::linear(tcp4_segment(3000));
    t.gso = Some(Gso {
        size: 1000,
        segs: 3,
    });
    for fr in [&f, &g, &v, &t] {
        p.send_one(fr, false).unwrap();
    }
    let rx = p.settle(64);
    assert_eq!(rx.len(), 6);
    for r in &rx {
        let h = pkt::parse(&r.bytes);
        assert_eq!(
            pkt::verify_checksums(&r.bytes, &h),
            (true, true),
            "{:?}",
            r.comp
        );
        assert!(r.comp.l4_csum_ok && r.comp.ip_csum_ok && !r.comp.csum_fail);
    }
    // The receiving device strips the tag the sender inserted and reports its VLAN id (the
    // PCP and DEI stay behind: rx_vlan_id has 12 bits), as mana_rx_skb reads it.
    assert_eq!(rx[2].bytes[12..14], [0x08, 0x00]);
    assert_eq!(rx[2].bytes.len(), 80);
    assert_eq!(rx[2].comp.vlan, Some(0x123));
    assert!(rx
        .iter()
        .enumerate()
        .all(|(i, r)| i == 2 || r.comp.vlan.is_none()));
    for (k, r) in rx[3..].iter().enumerate() {
        assert_eq!(r.bytes.len(), 54 + 1000);
        assert_eq!(
            r.bytes[54..],
            tcp4_segment(3000)[54 + 1000 * k..54 + 1000 * (k + 1)]
        );
    }
    let d = p.drv_tx();
    assert_eq!((d.long_pkt_fmt, d.short_pkt_fmt), (1, 3));
    assert_eq!((d.tso_packets, d.csum_partial), (1, 3));
    // The device's view: three packets whose OOB asked for checksums plus the three TSO
    // segments; one packet from two buffers (g: the TSO packet's header SGE and the rest
    // of its linear part are one buffer); one TSO WQE cut in three.
    let c = p.dev(TX_PORT);
    assert_eq!(
        (c.tx_csum_offload, c.tx_gather_pkts, c.lso_wqes, c.lso_segs),
        (3 + 3, 1, 1, 3)
    );
    p.check_counters().unwrap();
}

#[test]
fn rq_doorbells_carry_wqe_cnt_zero_and_one_per_poll() {
    let mut p = ManaPair::new(ManaConfig::default());
    // Creation: one doorbell for the initial fill.
    let init = p.env.rq_doorbell_log();
    assert_eq!(init.len(), 1);
    let mut polls_with_work = 0u64;
    let rounds = if cfg!(miri) { 6 } else { 20 };
    for round in 0..rounds {
        let n = 1 + (round as usize * 7) % 50;
        let frames: Vec<Frame> = (0..n).map(|i| Frame::linear(udp4(60, i as u32))).collect();
        assert_eq!(p.send_burst(&frames), n);
        p.run_device();
        p.poll_tx(256);
        let budget = 1 + round % 16;
        loop {
            let before = p.env.counts().rq_doorbells;
            let (got, r) = p.poll_rx_full(budget);
            let rung = p.env.counts().rq_doorbells - before;
            if r.work > 0 {
                polls_with_work += 1;
                assert_eq!(rung, 1, "a poll that read {} CQEs rang {rung}", r.work);
                assert_eq!(got.len() as u32, r.work);
            } else {
                assert_eq!(rung, 0, "a poll that read nothing rang");
                break;
            }
        }
    }
    let log = p.env.rq_doorbell_log();
    assert_eq!(log.len() as u64, polls_with_work);
    for v in init.iter().chain(&log) {
        let d = Doorbell::decode(DB_RQ, *v).unwrap();
        assert_eq!(d.wqe_cnt, 0);
        assert_eq!(d.id, p.ids[2]);
    }
    let x = p.dev(RX_PORT);
    assert_eq!(x.rq_doorbells, polls_with_work + 1);
    assert_eq!(x.rq_db_wqe_cnt_errors, 0);
    assert_eq!(x.hc_rx_discards_no_wqe, 0);
    p.check_counters().unwrap();
}

#[test]
fn ring_per_packet_rings_for_every_repost() {
    let mut p = ManaPair::new(ManaConfig {
        ring_per_packet: true,
        ..ManaConfig::default()
    });
    p.env.rq_doorbell_log();
    let frames: Vec<Frame> = (0..40).map(|i| Frame::linear(udp4(60, i))).collect();
    p.send_burst(&frames);
    p.run_device();
    let (got, r) = p.poll_rx_full(64);
    assert_eq!((got.len(), r.doorbells), (40, 40));
    assert!(p
        .env
        .rq_doorbell_log()
        .iter()
        .all(|v| Doorbell::decode(DB_RQ, *v).unwrap().wqe_cnt == 0));
    p.settle(64);
    p.check_counters().unwrap();
}

#[test]
fn rq_without_reposts_counts_discards_no_wqe() {
    let mut p = ManaPair::new(ManaConfig {
        rq_wqes: 128,
        ..ManaConfig::default()
    });
    // 200 packets before any RX poll: 128 WQEs, the other 72 find none.
    for chunk in 0..5 {
        let frames: Vec<Frame> = (0..40)
            .map(|i| Frame::linear(udp4(60, chunk * 40 + i)))
            .collect();
        assert_eq!(p.send_burst(&frames), 40);
        p.run_device();
        p.poll_tx(256);
    }
    assert_eq!(p.dev(RX_PORT).hc_rx_discards_no_wqe, 72);
    let rx = p.settle(64);
    assert_eq!(rx.len(), 128);
    p.check_counters().unwrap();
}

/// One `Rq::poll_refill` round (the AF_XDP zero-copy RQ): frames, poll result, RQ doorbells
/// rung.
fn poll_refill(p: &mut ManaPair, budget: u32) -> (Vec<Vec<u8>>, u32, u64) {
    let before = p.env.counts().rq_doorbells;
    let rq = &mut p.rq;
    let (got, r) = p
        .env
        .collect_rx(|env, deliver| rq.poll_refill(budget, env, |b, c| deliver(b, c)));
    let rung = p.env.counts().rq_doorbells - before;
    (got.into_iter().map(|f| f.bytes).collect(), r.work, rung)
}

/// A pair of 128-WQE RQs whose buffer source (an AF_XDP fill ring) is dry after the initial
/// fill, with the 100 frames it returns received by the device and waiting in the RX CQ.
fn dry_source_with_100_frames() -> (ManaPair, Vec<Frame>) {
    let mut p = ManaPair::new(ManaConfig {
        rq_wqes: 128,
        sq_size: 512 * 32,
        ..ManaConfig::default()
    });
    assert!(!p.rq.short());
    p.env.rx_alloc_limit = Some(128);
    let frames: Vec<Frame> = (0..100).map(|i| Frame::linear(udp4(60, i))).collect();
    assert_eq!(p.send_burst(&frames), 100);
    p.run_device();
    p.poll_tx(256);
    (p, frames)
}

#[test]
fn poll_refill_delivers_every_frame_and_refills_what_the_source_has() {
    let (mut p, frames) = dry_source_with_100_frames();
    let mut got = Vec::new();
    loop {
        let (g, work, rung) = poll_refill(&mut p, 64);
        assert_eq!(rung, 0, "nothing to refill with: no doorbell");
        if work == 0 {
            break;
        }
        got.extend(g);
    }
    // Every frame delivered although no fresh buffer could be had; the RQ ran short.
    assert_eq!(got.len(), 100);
    for (g, f) in got.iter().zip(&frames) {
        assert_eq!(*g, f.expected_wire_8021q());
    }
    assert_eq!(p.rq.posted(), 28);
    assert_eq!(p.drv_rx().rx_dropped, 0);
    // The source has buffers again: a poll without completions refills, one doorbell.
    p.env.rx_alloc_limit = None;
    let (g, work, rung) = poll_refill(&mut p, 64);
    assert_eq!((g.len(), work, rung), (0, 0, 1));
    assert_eq!(p.rq.posted(), 128);
    // More than the short RQ held arrives whole.
    let frames: Vec<Frame> = (100..200).map(|i| Frame::linear(udp4(60, i))).collect();
    assert_eq!(p.send_burst(&frames), 100);
    p.run_device();
    p.poll_tx(256);
    let (g, work, rung) = poll_refill(&mut p, 128);
    assert_eq!((g.len(), work, rung), (100, 100, 1));
    assert_eq!(p.rq.posted(), 128);
    assert_eq!(p.dev(RX_PORT).hc_rx_discards_no_wqe, 0);
}

#[test]
fn a_short_ring_is_topped_up_by_the_next_poll() {
    // The ring runs short: the zero-copy poll delivers without a fresh buffer to post.
    let (mut p, _) = dry_source_with_100_frames();
    while poll_refill(&mut p, 64).1 > 0 {}
    assert_eq!(p.rq.posted(), 28);
    assert!(p.rq.short());
    // A regular poll while allocations fail: nothing posted, no doorbell, the failure
    // counted, the ring still short (NAPI polls again).
    let errs = p.drv_rx().buff_alloc_err;
    let before = p.env.counts().rq_doorbells;
    let (got, r) = p.poll_rx_full(64);
    assert_eq!(
        (got.len(), r.work, p.env.counts().rq_doorbells - before),
        (0, 0, 0)
    );
    assert_eq!(p.drv_rx().buff_alloc_err, errs + 1);
    assert!(p.rq.short());
    // Buffers again: one poll with nothing to complete fills the ring, one doorbell.
    p.env.rx_alloc_limit = None;
    let (got, r) = p.poll_rx_full(64);
    assert_eq!((got.len(), r.work, r.doorbells), (0, 0, 1));
    assert_eq!(p.rq.posted(), 128);
    assert!(!p.rq.short());
    // A full ring's worth arrives whole.
    let frames: Vec<Frame> = (100..228).map(|i| Frame::linear(udp4(60, i))).collect();
    assert_eq!(p.send_burst(&frames), 128);
    assert_eq!(p.settle(64).len(), 128);
    assert_eq!(p.dev(RX_PORT).hc_rx_discards_no_wqe, 0);
    assert_eq!(p.drv_rx().rx_dropped, 0);
}

#[test]
fn queue_stops_and_wakes() {
    let mut p = ManaPair::new(ManaConfig {
        sq_size: 4096,
        ..ManaConfig::default()
    });
    let frames: Vec<Frame> = (0..200).map(|i| Frame::linear(udp4(100, i))).collect();
    let sent = p.send_burst(&frames);
    // 128 BUs, stop when fewer than 512 bytes (16 BUs) are free: 113 one-BU WQEs.
    assert_eq!(sent, 113);
    assert!(p.tx_stopped());
    assert_eq!(p.drv_tx().stop_queue, 1);
    p.settle(64);
    assert!(!p.tx_stopped());
    assert_eq!(p.drv_tx().wake_queue, 1);
    p.check_counters().unwrap();
}

/// A transmit on a stopped queue (netpoll's) that finds the ring full is refused as busy
/// and leaks nothing: the common packet's mapping is undone (the ring's room is checked
/// once, when its WQE is written).
#[test]
fn xmit_on_a_full_ring_is_busy_and_unmaps() {
    use rsnic_core::hwif::mlx5::tx::TxRejectReason;
    let mut p = ManaPair::new(ManaConfig {
        sq_size: 4096,
        ..ManaConfig::default()
    });
    let frames: Vec<Frame> = (0..200).map(|i| Frame::linear(udp4(100, i))).collect();
    assert_eq!(p.send_burst(&frames), 113);
    assert!(p.tx_stopped());
    // 128 BUs, 113 used: 15 more one-BU WQEs fit, the 16th does not.
    let mut accepted = 0;
    let refused = loop {
        match p.send_one(&frames[accepted], false) {
            Ok(_) => accepted += 1,
            Err(r) => break r,
        }
        assert!(accepted <= 15, "more WQEs than the ring holds");
    };
    assert_eq!((accepted, refused), (15, TxRejectReason::Busy));
    assert_eq!(p.tx_in_flight(), 128);
    let c = p.env.counts();
    assert_eq!(
        c.maps - c.unmaps,
        128,
        "the refused packet's mapping was undone"
    );
    p.settle(64);
    assert_eq!(p.tx_in_flight(), 0);
    let c = p.env.counts();
    assert_eq!(c.maps, c.unmaps);
    p.check_counters().unwrap();
}

/// A packet whose second fragment fails to map is dropped with every mapping it had undone:
/// the first (kept with the packet) and the ones in the dma FIFO. The queue goes on.
#[test]
fn fragment_map_failure_undoes_every_mapping() {
    use rsnic_core::hwif::mlx5::tx::TxRejectReason;
    let mut p = ManaPair::new(ManaConfig::default());
    let b = udp4(300, 1);
    let mut f = Frame::linear(b[..100].to_vec());
    f.frags = vec![b[100..200].to_vec(), b[200..].to_vec()];
    // Map calls of this packet: linear 0, fragments 1 and 2; the last fails.
    p.env.fail_map_at = Some(2);
    assert_eq!(p.send_one(&f, false), Err(TxRejectReason::MapError));
    let c = p.env.counts();
    assert_eq!((c.maps, c.unmaps), (2, 2));
    assert_eq!(p.drv_tx().mana_map_err, 1);
    assert_eq!(p.tx_in_flight(), 0);
    // The same packet with all three mappings, and a plain one, go out and complete.
    let frames = [f, Frame::linear(udp4(64, 2))];
    assert_eq!(p.send_burst(&frames), 2);
    assert_eq!(p.settle(64).len(), 2);
    assert_eq!(p.tx_in_flight(), 0);
    let c = p.env.counts();
    assert_eq!((c.maps, c.unmaps), (2 + 4, 2 + 4));
    p.check_counters().unwrap();
}

#[derive(Debug, Clone)]
struct Case {
    frames: Vec<(usize, usize, bool)>,
    bursts: Vec<usize>,
    budget: u32,
    per_packet: bool,
}

/// Frames per case at most, and the RQ that takes them all (smaller under Miri).
const MAX_FRAMES: usize = if cfg!(miri) { 40 } else { 300 };
const RQ_WQES: u32 = if cfg!(miri) { 128 } else { 1024 };

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec((42usize..1500, 0usize..3, any::<bool>()), 1..MAX_FRAMES),
        prop::collection::vec(1usize..64, 1..20),
        1u32..300,
        any::<bool>(),
    )
        .prop_map(|(frames, bursts, budget, per_packet)| Case {
            frames,
            bursts,
            budget,
            per_packet,
        })
}

/// 48 cases; under Miri 2, and no regression file (Miri's isolation has no file system).
fn prop_config() -> ProptestConfig {
    let mut c = ProptestConfig::with_cases(if cfg!(miri) { 2 } else { 48 });
    if cfg!(miri) {
        c.failure_persistence = None;
    }
    c
}

proptest! {
    #![proptest_config(prop_config())]

    /// Random sizes, fragment counts, bursts and budgets: every packet arrives exactly
    /// once, in order, byte-identical; TX completions come back in order (the pair checks);
    /// all counters balance; RQ doorbells carry wqe_cnt = 0.
    #[test]
    fn every_packet_once_in_order(c in case()) {
        let mut p = ManaPair::new(ManaConfig {
            ring_per_packet: c.per_packet,
            rq_wqes: RQ_WQES,
            ..ManaConfig::default()
        });
        let frames: Vec<Frame> = c.frames.iter().enumerate().map(|(i, &(len, nfrag, csum))| {
            let b = udp4(len, i as u32);
            let mut f = Frame::linear(b.clone());
            if nfrag > 0 && len > 60 {
                let cut = 42 + (len - 42) / (nfrag + 1);
                f.linear = b[..cut].to_vec();
                f.frags = vec![b[cut..].to_vec()];
                if nfrag > 1 {
                    f.frags.push(Vec::new());
                }
            }
            if csum {
                f.csum = TxCsum::Partial;
            }
            f
        }).collect();
        let mut got = Vec::new();
        let mut i = 0;
        let mut k = 0;
        while i < frames.len() {
            let n = c.bursts[k % c.bursts.len()].min(frames.len() - i);
            k += 1;
            let sent = p.send_burst(&frames[i..i + n]);
            i += sent;
            p.run_device();
            p.poll_tx(c.budget);
            got.extend(p.poll_rx(c.budget));
        }
        got.extend(p.settle(c.budget));
        prop_assert_eq!(got.len(), frames.len());
        for (f, r) in frames.iter().zip(&got) {
            let mut want = f.expected_wire_8021q();
            if f.csum == TxCsum::Partial {
                let h = pkt::parse(&want);
                pkt::fill_checksums(&mut want, &h, false, true);
            }
            prop_assert_eq!(&r.bytes, &want);
        }
        prop_assert!(p.env.rq_doorbell_log().iter().all(|v| (v >> 24) & 0xff == 0));
        if let Err(e) = p.check_counters() {
            return Err(TestCaseError::fail(e));
        }
    }
}
