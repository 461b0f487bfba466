//! CHECKSUM_COMPLETE on ConnectX: the model's CQE `check_sum` (spec C.1: the ones' complement
//! sum of the IP datagram, which mlx5e's `mlx5e_skb_csum_fixup` implies: not the VLAN tags,
//! not the bytes after the datagram's length) on frames whose sums the test computes itself,
//! in plain and compressed CQEs; and `hwif::csum::complete`, the driver's half
//! (`mlx5e_handle_csum`), both on its own (its decision table) and on what the model
//! delivered: the sum it gives must be the sum of the delivered frame after its Ethernet
//! header, which is what the stack checks `skb->csum` against.

mod cx_fake_driver;
mod rss_rig;
mod sim_util;

use cx_fake_driver::*;
use rsnic_core::hwif::csum::{complete, Tail};
use rss_rig::*;
use sim_util::ipv4_hdr;

/// The test's own RFC 1071 sum (not inverted): byte `i` is the high half of a word when `i`
/// is even.
fn sum(b: &[u8]) -> u16 {
    let mut s: u64 = 0;
    for (i, &x) in b.iter().enumerate() {
        s += if i % 2 == 0 {
            u64::from(x) << 8
        } else {
            u64::from(x)
        };
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    s as u16
}

/// CQE fields (`struct mlx5_cqe64`): `check_sum` 20..22, `byte_cnt` 44..48.
fn check_sum(c: &[u8; 64]) -> u16 {
    u16::from_be_bytes([c[20], c[21]])
}
fn byte_cnt(c: &[u8; 64]) -> u32 {
    u32::from_be_bytes(c[44..48].try_into().unwrap())
}

const MACS: [u8; 12] = [0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1];

/// A UDP/IPv4 frame with `payload` bytes and `trailer` bytes after the datagram.
fn udp4(payload: usize, trailer: usize) -> Vec<u8> {
    let mut f = MACS.to_vec();
    f.extend_from_slice(&[0x08, 0x00]);
    f.extend_from_slice(&ipv4_hdr(
        (28 + payload) as u16,
        7,
        17,
        [10, 0, 0, 1],
        [10, 0, 0, 2],
    ));
    f.extend_from_slice(&[0x13, 0x88, 0x00, 0x09]);
    f.extend_from_slice(&((8 + payload) as u16).to_be_bytes());
    f.extend_from_slice(&[0x5a, 0xa5]);
    f.extend((0..payload).map(|i| (i * 13 + 1) as u8));
    f.extend((0..trailer).map(|i| 0xf0 | i as u8));
    f
}

/// A TCP/IPv6 frame with `payload` bytes.
fn tcp6(payload: usize) -> Vec<u8> {
    let mut f = MACS.to_vec();
    f.extend_from_slice(&[0x86, 0xdd, 0x60, 0, 0, 0]);
    f.extend_from_slice(&((20 + payload) as u16).to_be_bytes());
    f.extend_from_slice(&[6, 64]);
    f.extend((0..32).map(|i| 0x20 + i as u8));
    f.extend_from_slice(&[0x04, 0xd2, 0x16, 0x2e, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x18]);
    f.extend_from_slice(&[0xff, 0xff, 0x12, 0x34, 0, 0]);
    f.extend((0..payload).map(|i| (i * 31 + 5) as u8));
    f
}

/// `f` with a tag of `tpid` and `tci` after the MACs.
fn tag(f: &[u8], tpid: u16, tci: u16) -> Vec<u8> {
    let mut t = f[..12].to_vec();
    t.extend_from_slice(&tpid.to_be_bytes());
    t.extend_from_slice(&tci.to_be_bytes());
    t.extend_from_slice(&f[12..]);
    t
}

/// Steers every frame to RQ 0.
fn to_rq0(r: &mut Rig) {
    let rqn = r.rqs[0].0;
    let rqt = r.h.exec(&rqt_in(&[rqn]), 16).ok().obj();
    r.tir(rqt, &[7; 40], 0, 0, 3);
}

/// Sends `f` and returns its RX CQE and the bytes the host got (`byte_cnt` of them).
fn one(r: &mut Rig, f: &[u8]) -> ([u8; 64], Vec<u8>) {
    let wqe = r.h.tb.device().rq_consumer(r.rqs[0].0).unwrap();
    r.burst(&[f.to_vec()]);
    let c = r.cq.poll().expect("an RX CQE");
    r.cq.update_ci();
    assert_eq!(c[63] >> 4, 2, "RESP_SEND");
    let n = byte_cnt(&c) as usize;
    (c, r.rx_data(0, wqe, n))
}

/// What mlx5e makes of the CQE's sum for the delivered frame `d`: its
/// CHECKSUM_COMPLETE sum and how (the tail is always in `d` here).
fn mlx5e_use(d: &[u8], csum: u16) -> Option<(u16, Tail)> {
    complete(d, d.len() as u32, csum, |_, _| {
        panic!("the tail is in the frame")
    })
}

/// A frame, where its IP datagram lies in it, and how mlx5e completes its sum.
type Case = (&'static str, Vec<u8>, core::ops::Range<usize>, Option<Tail>);

#[test]
fn the_cqe_check_sum_is_the_datagrams_sum_and_mlx5e_completes_it() {
    let mut r = Rig::new();
    to_rq0(&mut r);
    let odd4 = udp4(101, 0);
    let v6 = tcp6(77);
    // (frame, where the datagram lies in it, what the host gets, how mlx5e completes it)
    let cases: Vec<Case> = vec![
        (
            "UDP/IPv4, odd length",
            odd4.clone(),
            14..143,
            Some(Tail::None),
        ),
        (
            "TCP/IPv6, odd length",
            v6.clone(),
            14..14 + 40 + 97,
            Some(Tail::None),
        ),
        // The RQ strips an outer C-tag: the sum is the same datagram's.
        (
            "802.1Q tag, stripped",
            tag(&odd4, 0x8100, 0x2005),
            18..147,
            Some(Tail::None),
        ),
        // An 802.1ad tag stays in the frame: the sum starts at the IP header all the same;
        // mlx5e adds the tag's bytes.
        (
            "802.1ad tag, in the frame",
            tag(&v6, 0x88a8, 30),
            18..18 + 137,
            Some(Tail::None),
        ),
        (
            "802.1ad + 802.1Q, in the frame",
            tag(&tag(&odd4, 0x8100, 7), 0x88a8, 30),
            22..22 + 129,
            Some(Tail::None),
        ),
        // Bytes after the datagram (its length field ends it at an odd offset): not in the
        // device's sum; mlx5e adds them.
        ("5-byte trailer", udp4(101, 5), 14..143, Some(Tail::Fast)),
        ("20-byte trailer", udp4(100, 20), 14..142, Some(Tail::Slow)),
        // A short frame the sender's MAC padded to 60 bytes: the padding is not summed, and
        // mlx5e does not complete frames of at most 64 bytes with the FCS.
        ("padded short frame", udp4(5, 0), 14..47, None),
    ];
    for (what, f, dgram, how) in cases {
        let (c, d) = one(&mut r, &f);
        assert_eq!(check_sum(&c), sum(&f[dgram]), "{what}: check_sum");
        match how {
            Some(t) => assert_eq!(
                mlx5e_use(&d, check_sum(&c)),
                Some((sum(&d[14..]), t)),
                "{what}: CHECKSUM_COMPLETE covers the frame after its Ethernet header"
            ),
            None => assert_eq!(mlx5e_use(&d, check_sum(&c)), None, "{what}"),
        }
    }
    // Not IP: every byte after the L2 header; mlx5e leaves it to the device's verdict.
    let mut other = MACS.to_vec();
    other.extend_from_slice(&[0x88, 0xb5]);
    other.extend((0..99).map(|i| i as u8 ^ 0x3c));
    let (c, d) = one(&mut r, &other);
    assert_eq!(check_sum(&c), sum(&other[14..]));
    assert_eq!(mlx5e_use(&d, check_sum(&c)), None);
}

#[test]
fn a_hand_summed_datagram() {
    // IPv4 header 4500 0020 0000 4000 4011 0000 0a00 0001 0a00 0002, UDP 0001 0002 000c
    // 0000, payload 4142 4344, then 22 bytes past the datagram (68 in all):
    // 4500 + 0020 + 4000 + 4011 = c531; + 0a00 + 0001 + 0a00 + 0002 = d934;
    // + 0001 + 0002 + 000c = d943; + 4142 + 4344 = 1_5dc9, folded 5dca.
    let mut r = Rig::new();
    to_rq0(&mut r);
    let mut f = MACS.to_vec();
    f.extend_from_slice(&[0x08, 0x00]);
    f.extend_from_slice(&ipv4_hdr(32, 0, 17, [10, 0, 0, 1], [10, 0, 0, 2]));
    f.extend_from_slice(&[0, 1, 0, 2, 0, 12, 0, 0, 0x41, 0x42, 0x43, 0x44]);
    f.extend_from_slice(&[0xee; 22]);
    let (c, d) = one(&mut r, &f);
    assert_eq!(check_sum(&c), 0x5dca);
    // 68 bytes, 22 after the datagram: the slow tail.
    let (s, t) = mlx5e_use(&d, 0x5dca).expect("completed");
    assert_eq!((s, t), (sum(&d[14..]), Tail::Slow));
}

#[test]
fn a_compressed_session_carries_each_packets_sum_in_its_mini_cqe() {
    let mut r = Rig::with_compression(true);
    to_rq0(&mut r);
    let frames: Vec<Vec<u8>> = (0..10).map(|i| udp4(60 + 7 * i, 0)).collect();
    r.burst(&frames);
    let title = r.cq.slot(0);
    assert_eq!((title[63] >> 2) & 3, 3, "a compressed title");
    assert_eq!(byte_cnt(&title), 10);
    // Mini CQEs (`struct mlx5_mini_cqe8`, CSUM format): check_sum at 0..2, byte_cnt at
    // 4..8; arrays at slots 1 and 8.
    for (k, f) in frames.iter().enumerate() {
        let arr = r.cq.slot(if k < 8 { 1 } else { 8 });
        let m = &arr[(k % 8) * 8..][..8];
        assert_eq!(
            u16::from_be_bytes([m[0], m[1]]),
            sum(&f[14..]),
            "packet {k}: the datagram's sum"
        );
        assert_eq!(
            u32::from_be_bytes(m[4..8].try_into().unwrap()) as usize,
            f.len()
        );
    }
    assert_eq!(r.h.tb.counters(1).compressed_cqes, 10);
}

/// A frame for the decision table: `ethertypes` (VLAN TPIDs, then the last one) and
/// `l3` after them.
fn frame(ethertypes: &[u16], l3: &[u8]) -> Vec<u8> {
    let mut f = MACS.to_vec();
    for (i, t) in ethertypes.iter().enumerate() {
        f.extend_from_slice(&t.to_be_bytes());
        if i + 1 < ethertypes.len() {
            f.extend_from_slice(&[0x00, 0x0a]);
        }
    }
    f.extend_from_slice(l3);
    f
}

#[test]
fn mlx5e_handle_csum_decision_table() {
    let no_tail = |_, _| -> u16 { panic!("no tail asked for") };
    let ip4 = |len: usize, proto: u8| -> Vec<u8> {
        let mut d = ipv4_hdr(len as u16, 1, proto, [1, 2, 3, 4], [5, 6, 7, 8]).to_vec();
        d.extend((0..len - 20).map(|i| i as u8));
        d
    };
    // Lengths: at most 64 bytes (ETH_ZLEN + FCS) go to the device's verdict.
    let f = frame(&[0x0800], &ip4(50, 17));
    assert_eq!(f.len(), 64);
    assert_eq!(complete(&f, 64, 0x1234, no_tail), None);
    let f = frame(&[0x0800], &ip4(51, 17));
    assert_eq!(
        complete(&f, 65, 0x1234, no_tail),
        Some((0x1234, Tail::None)),
        "65 bytes: the device's sum as it is"
    );
    // Not IP, or the IP header not all there.
    assert_eq!(complete(&frame(&[0x88b5], &[0; 80]), 94, 1, no_tail), None);
    assert_eq!(complete(&f[..30], 65, 1, no_tail), None);
    // SCTP, over IPv4 and IPv6.
    assert_eq!(
        complete(&frame(&[0x0800], &ip4(80, 132)), 94, 1, no_tail),
        None
    );
    let mut v6 = vec![0x60, 0, 0, 0, 0, 40, 132, 64];
    v6.extend([0u8; 72]);
    assert_eq!(complete(&frame(&[0x86dd], &v6), 94, 1, no_tail), None);
    v6[6] = 17;
    assert_eq!(
        complete(&frame(&[0x86dd], &v6), 94, 9, no_tail),
        Some((9, Tail::None))
    );
    // In-band tags are added to the sum: up to six (__vlan_get_protocol's depth with
    // mac_len ETH_HLEN), not seven.
    let six: Vec<u16> = [0x88a8, 0x8100, 0x8100, 0x8100, 0x8100, 0x8100, 0x0800].to_vec();
    let f = frame(&six, &ip4(60, 6));
    let (s, t) = complete(&f, f.len() as u32, 0, no_tail).expect("six tags");
    assert_eq!((s, t), (sum(&f[14..14 + 24]), Tail::None));
    let seven: Vec<u16> = [&[0x8100u16][..], &six].concat();
    let f = frame(&seven, &ip4(60, 6));
    assert_eq!(complete(&f, f.len() as u32, 0, no_tail), None);
    // Bytes after the datagram: from the frame when it has them, else asked for, at an
    // odd offset in the other halves of the words.
    let mut f = frame(&[0x0800], &ip4(61, 17));
    f.extend_from_slice(&[0xab; 8]);
    let dev = sum(&f[14..75]);
    assert_eq!(
        complete(&f, f.len() as u32, dev, no_tail),
        Some((sum(&f[14..]), Tail::Fast))
    );
    f.push(0xcd);
    let want = sum(&f[14..]);
    let tail = sum(&f[75..]);
    let mut asked = None;
    let got = complete(&f[..40], f.len() as u32, dev, |off, n| {
        asked = Some((off, n));
        tail
    });
    assert_eq!(got, Some((want, Tail::Slow)), "nine bytes: the slow tail");
    assert_eq!(asked, Some((75, 9)));
}
