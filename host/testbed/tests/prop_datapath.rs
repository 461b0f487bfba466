//! Property tests of the whole mlx5 data path: the driver's SQ and RQ (hwif/mlx5) against the
//! simulated ConnectX (sim/mlx5) through [`rsnic_testbed::pair`].
//!
//! Random configurations (ring sizes, MPWQE, MPWQE inline, CQE compression, min-inline mode,
//! RX refill bulk), random frames (14..=1514 bytes, raw bytes or Ethernet/IPv4/UDP-or-TCP,
//! linear or split into fragments including empty ones, VLAN insertion and checksum offload
//! mixes), random `xmit_more` patterns and random interleavings of device processing (with
//! and without a WQE budget), TX completion polls and NAPI polls of random budget.
//!
//! Asserted: every accepted packet arrives exactly once and in order, byte-identical except
//! for the device's documented changes (VLAN tag inserted after the MACs, zero padding to 60
//! bytes, and, when asked for, the IPv4 header and TCP/UDP checksums, which must then verify);
//! drops happen only when the RQ had no buffer and are counted; every TX packet handle comes
//! back exactly once, in order; nothing but a header the SQ cannot inline is rejected; and the
//! counters of driver, host and device balance ([`Pair::check_counters`]).
//!
//! `PROPTEST_CASES` sets the number of cases (default 64).

use proptest::prelude::*;
use rsnic_core::hwif::mlx5::tx::{InlineMode, TxCsum, TxRejectReason, VlanTag};
use rsnic_testbed::pair::{Pair, PairConfig, RxFrame, TxFrame};

/// Kind of frame content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Raw,
    Udp,
    Tcp,
}

/// A frame and what the test knows about it.
#[derive(Debug, Clone)]
struct Spec {
    frame: TxFrame,
    /// Well-formed Ethernet/IPv4/L4 with correct lengths (checksums may be requested).
    kind: Kind,
}

fn xorshift(mut s: u32) -> impl FnMut() -> u8 {
    s |= 1;
    move || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        s as u8
    }
}

fn build_bytes(len: usize, kind: Kind, seed: u32) -> (Vec<u8>, Kind) {
    let mut rnd = xorshift(seed);
    let mut f: Vec<u8> = (0..len).map(|_| rnd()).collect();
    let hdr = match kind {
        Kind::Raw => return (f, Kind::Raw),
        Kind::Udp => 42,
        Kind::Tcp => 54,
    };
    if len < hdr {
        return (f, Kind::Raw);
    }
    f[12..14].copy_from_slice(&[0x08, 0x00]);
    f[14] = 0x45;
    f[15] = 0;
    f[16..18].copy_from_slice(&((len - 14) as u16).to_be_bytes());
    f[20..22].copy_from_slice(&[0x40, 0]); // DF, not a fragment
    f[23] = if kind == Kind::Udp { 17 } else { 6 };
    f[24..26].copy_from_slice(&[0, 0]);
    if kind == Kind::Udp {
        f[38..40].copy_from_slice(&((len - 34) as u16).to_be_bytes());
        f[40..42].copy_from_slice(&[0, 0]);
    } else {
        f[46] = 5 << 4;
        f[50..52].copy_from_slice(&[0, 0]);
    }
    (f, kind)
}

prop_compose! {
    fn spec()(
        len in prop_oneof![14usize..=256, 14usize..=1514],
        linear_only in any::<bool>(),
        kind in prop_oneof![Just(Kind::Raw), Just(Kind::Udp), Just(Kind::Tcp)],
        seed in any::<u32>(),
        lin_frac in 0u32..=1000,
        cuts in prop::collection::vec(0u32..=1000, 0..=4),
        vlan in prop::option::weighted(0.15, (any::<u16>(), any::<bool>())),
        csum in prop::bool::weighted(0.4),
    ) -> Spec {
        let (bytes, kind) = build_bytes(len, kind, seed);
        // Linear part: at least the Ethernet header; the rest split at random points.
        let lin = if linear_only {
            len
        } else {
            14 + ((len - 14) as u64 * u64::from(lin_frac) / 1000) as usize
        };
        let rest = len - lin;
        let mut points: Vec<usize> = cuts
            .iter()
            .map(|c| (rest as u64 * u64::from(*c) / 1000) as usize)
            .collect();
        points.sort_unstable();
        let mut frags = Vec::new();
        if !linear_only && (rest > 0 || !points.is_empty()) {
            let mut at = 0;
            for p in points {
                frags.push(bytes[lin + at..lin + p].to_vec());
                at = p;
            }
            frags.push(bytes[lin + at..].to_vec());
        }
        let csum = if csum && kind != Kind::Raw { TxCsum::Partial } else { TxCsum::None };
        let frame = TxFrame {
            linear: bytes[..lin].to_vec(),
            frags,
            csum,
            vlan: vlan.map(|(tci, dot1ad)| VlanTag { tci, dot1ad }),
            gso: None,
        };
        Spec { frame, kind }
    }
}

#[derive(Debug, Clone)]
enum Op {
    /// Frames with their xmit_more flags (the last is always false).
    Burst(Vec<(Spec, bool)>),
    /// Device processing, optionally with a WQE budget.
    Run(Option<usize>),
    /// One TX completion poll.
    PollTx,
    /// One NAPI poll of the RQ.
    PollRx(u32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => prop::collection::vec((spec(), any::<bool>()), 1..=64).prop_map(|mut v| {
            if let Some(l) = v.last_mut() {
                l.1 = false;
            }
            Op::Burst(v)
        }),
        3 => prop::option::of(1usize..=64).prop_map(Op::Run),
        1 => Just(Op::PollTx),
        2 => (1u32..=64).prop_map(Op::PollRx),
    ]
}

#[derive(Debug, Clone)]
struct Scenario {
    cfg: PairConfig,
    /// Drain the RQ after every device run, with an RQ 8x the SQ: no RX drop may happen.
    keep_up: bool,
    /// Ignore the TX completion polls (completions are reaped only at the end), so that
    /// many packets stay outstanding and MPWQE inlining turns on.
    lazy_tx: bool,
    ops: Vec<Op>,
}

fn scenario() -> impl Strategy<Value = Scenario> {
    (
        prop_oneof![6u8..=8, 9u8..=10],
        (
            0u8..=4,
            prop::bool::weighted(0.3),
            prop::bool::weighted(0.3),
        ),
        prop::bool::weighted(0.7),
        any::<bool>(),
        any::<bool>(),
        prop_oneof![
            4 => Just(InlineMode::None),
            1 => Just(InlineMode::L2),
            1 => Just(InlineMode::Ip),
            1 => Just(InlineMode::TcpUdp),
        ],
        1u16..=16,
        any::<bool>(),
        prop::collection::vec(op(), 1..=40),
    )
        .prop_map(
            |(
                sq,
                (rq_extra, lazy_tx, plain),
                mpwqe,
                mpwqe_inline,
                cqe_compress,
                min_inline,
                bulk,
                keep_up,
                mut ops,
            )| {
                if plain {
                    // MPWQE-friendly traffic: every frame linear and untagged.
                    for op in &mut ops {
                        if let Op::Burst(v) = op {
                            for (s, _) in v.iter_mut() {
                                s.frame.linear = s.frame.bytes();
                                s.frame.frags.clear();
                                s.frame.vlan = None;
                            }
                        }
                    }
                }
                let rq_log_sz = if keep_up { sq + 3 } else { sq + rq_extra - 2 };
                Scenario {
                    cfg: PairConfig {
                        sq_log_sz: sq,
                        rq_log_sz,
                        mpwqe,
                        mpwqe_inline,
                        cqe_compress,
                        min_inline,
                        wqe_bulk: bulk,
                        track_dma: true,
                        ..PairConfig::default()
                    },
                    keep_up,
                    lazy_tx,
                    ops,
                }
            },
        )
}

/// Ones' complement sum of 16-bit big-endian words (odd byte padded with zero).
fn csum16(data: &[u8], mut acc: u32) -> u16 {
    for c in data.chunks(2) {
        acc += u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
    }
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// Checks one delivered frame against the frame that was sent.
fn check_frame(got: &RxFrame, sent: &Spec) -> Result<(), String> {
    let want = sent.frame.expected_wire();
    if got.bytes.len() != want.len() || got.comp.len as usize != want.len() {
        return Err(format!(
            "length {} (cqe {}) != {}",
            got.bytes.len(),
            got.comp.len,
            want.len()
        ));
    }
    let mut skip = Vec::new();
    if sent.frame.csum == TxCsum::Partial {
        let l3 = 14 + if sent.frame.vlan.is_some() { 4 } else { 0 };
        let l4 = l3 + 20;
        let ip_len = sent.frame.len() - 14;
        let l4_len = ip_len - 20;
        let l4_csum = l4 + if sent.kind == Kind::Udp { 6 } else { 16 };
        skip.extend([l3 + 10, l3 + 11, l4_csum, l4_csum + 1]);
        let b = &got.bytes;
        if csum16(&b[l3..l4], 0) != 0xffff {
            return Err("IPv4 header checksum does not verify".into());
        }
        let proto = if sent.kind == Kind::Udp { 17 } else { 6 };
        let pseudo = u32::from(csum16(&b[l3 + 12..l3 + 20], 0)) + proto + l4_len as u32;
        if csum16(&b[l4..l4 + l4_len], pseudo) != 0xffff {
            return Err("L4 checksum does not verify".into());
        }
        if got.comp.hds_ip_ext & 0x06 != 0x06 {
            return Err(format!(
                "CQE L3/L4 OK bits missing: {:#x}",
                got.comp.hds_ip_ext
            ));
        }
    }
    for (i, (g, w)) in got.bytes.iter().zip(&want).enumerate() {
        if g != w && !skip.contains(&i) {
            return Err(format!("byte {i}: {g:#04x} != {w:#04x}"));
        }
    }
    Ok(())
}

fn run(sc: &Scenario) -> Result<(), TestCaseError> {
    let mut p = Pair::new(sc.cfg);
    let mut accepted: Vec<Spec> = Vec::new();
    let mut ends = 0u64; // accepted packets sent with xmit_more = false
    let mut rejected = 0u64;
    let mut delivered: Vec<RxFrame> = Vec::new();
    let drain_rx = |p: &mut Pair, budget: u32, out: &mut Vec<RxFrame>| loop {
        let got = p.poll_rx(budget);
        if got.is_empty() {
            break;
        }
        out.extend(got);
    };
    for op in &sc.ops {
        match op {
            Op::Burst(v) => {
                let frames: Vec<TxFrame> = v.iter().map(|(s, _)| s.frame.clone()).collect();
                let more: Vec<bool> = v.iter().map(|(_, m)| *m).collect();
                let r = p.send(&frames, &more);
                let rej: Vec<usize> = r.rejected.iter().map(|x| x.0).collect();
                for (i, reason) in &r.rejected {
                    prop_assert!(
                        v[*i].0.kind == Kind::Raw
                            && matches!(
                                reason,
                                TxRejectReason::HeaderTooLong | TxRejectReason::Malformed
                            ),
                        "frame {:?} rejected: {:?}",
                        v[*i].0,
                        reason
                    );
                }
                rejected += rej.len() as u64;
                let offered = v.len() - r.not_sent;
                for (i, (s, m)) in v.iter().enumerate().take(offered) {
                    if !rej.contains(&i) {
                        accepted.push(s.clone());
                        ends += u64::from(!*m);
                    }
                }
                prop_assert_eq!(r.accepted.len(), offered - rej.len());
            }
            Op::Run(budget) => {
                match budget {
                    Some(b) => {
                        p.run_device_budget(*b);
                    }
                    None => {
                        p.run_device();
                    }
                }
                if sc.keep_up {
                    drain_rx(&mut p, 64, &mut delivered);
                }
            }
            Op::PollTx => {
                if !sc.lazy_tx {
                    p.poll_tx();
                }
            }
            Op::PollRx(b) => delivered.extend(p.poll_rx(*b)),
        }
    }
    delivered.extend(p.settle(64));

    prop_assert!(p.sq.error().is_none(), "SQ error {:?}", p.sq.error());
    prop_assert!(p.rq.error().is_none(), "RQ error {:?}", p.rq.error());
    if let Err(e) = p.check_counters() {
        return Err(TestCaseError::fail(e));
    }
    let (t, x) = (p.dev_tx(), p.dev_rx());
    let drops = x.rx_out_of_buffer;
    prop_assert_eq!(x.rx_no_rq_drops + x.rx_too_long + x.rx_dma_faults, 0);
    if sc.keep_up {
        prop_assert_eq!(drops, 0, "RX drops although the driver kept up");
    }
    prop_assert_eq!(t.tx_packets, accepted.len() as u64);
    prop_assert_eq!(p.tx_completed(), accepted.len() as u64);
    prop_assert_eq!(delivered.len() as u64 + drops, accepted.len() as u64);

    // In order, exactly once: the delivered frames are the accepted ones minus `drops`.
    let mut k = 0;
    for (n, got) in delivered.iter().enumerate() {
        let mut skipped = 0;
        loop {
            prop_assert!(k < accepted.len(), "delivered frame {} matches nothing", n);
            if check_frame(got, &accepted[k]).is_ok() {
                break;
            }
            if drops == 0 {
                let e = check_frame(got, &accepted[k]).unwrap_err();
                return Err(TestCaseError::fail(format!(
                    "frame {n} differs from packet {k}: {e}"
                )));
            }
            skipped += 1;
            k += 1;
        }
        prop_assert!(skipped as u64 <= drops);
        k += 1;
    }

    // MPWQE carries exactly the eligible packets (linear, untagged) when it is on, and
    // nothing when it is off. With a min-inline mode the eligible packets are those that
    // fit an inline segment whole (at most 252 bytes, not GSO), and every one is inlined.
    let d = p.drv_tx();
    let eligible = accepted
        .iter()
        .filter(|s| s.frame.vlan.is_none() && s.frame.frags.iter().all(Vec::is_empty))
        .count() as u64;
    let inlinable = accepted
        .iter()
        .filter(|s| {
            // No fragment at all (empty ones included: the inline path takes an skb
            // without `nr_frags`).
            s.frame.vlan.is_none()
                && s.frame.frags.is_empty()
                && s.frame.gso.is_none()
                && (1..=252).contains(&s.frame.linear.len())
        })
        .count() as u64;
    if !sc.cfg.mpwqe {
        prop_assert_eq!(d.mpwqe_pkts, 0);
    } else if sc.cfg.min_inline == InlineMode::None {
        prop_assert_eq!(d.mpwqe_pkts, eligible);
    } else {
        prop_assert_eq!(d.mpwqe_pkts, inlinable);
        prop_assert_eq!(d.inlnw, inlinable);
    }
    if !sc.cfg.mpwqe || (!sc.cfg.mpwqe_inline && sc.cfg.min_inline == InlineMode::None) {
        prop_assert_eq!(d.inlnw, 0);
    }
    // At most one doorbell per burst end, queue stop and rejection (the flush).
    prop_assert!(
        d.doorbells <= ends + d.stopped + rejected,
        "{} doorbells for {} burst ends, {} stops, {} rejections",
        d.doorbells,
        ends,
        d.stopped,
        rejected
    );
    if !accepted.is_empty() {
        prop_assert!(d.doorbells >= 1);
    }
    Ok(())
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(64)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn packets_arrive_once_in_order_and_counters_balance(sc in scenario()) {
        run(&sc)?;
    }
}
