//! RSS of the simulated device against the Microsoft RSS verification vectors (Toeplitz with
//! the published 40-byte key; input = source address, destination address, source port,
//! destination port).

mod sim_util;

use rsnic_core::hwif::hw::Coherent;
use rsnic_core::sim::mlx5::RqConfig;
use rsnic_core::sim::pkt::{toeplitz, RSS_KEY};
use sim_util::*;

/// (source, sport, destination, dport, IPv4-only hash, IPv4+TCP hash)
type Vector = ([u8; 4], u16, [u8; 4], u16, u32, u32);

const VECTORS: [Vector; 2] = [
    // (source, sport, destination, dport, IPv4-only hash, IPv4+TCP hash)
    (
        [66, 9, 149, 187],
        2794,
        [161, 142, 100, 80],
        1766,
        0x323e8fc2,
        0x51ccc178,
    ),
    (
        [199, 92, 111, 2],
        14230,
        [65, 69, 140, 83],
        4739,
        0xd718262a,
        0xc626b0ea,
    ),
];

#[test]
fn toeplitz_matches_the_verification_suite() {
    for (src, sp, dst, dp, ip, tcp) in VECTORS {
        let mut input = [src, dst].concat();
        assert_eq!(toeplitz(&RSS_KEY, &input), ip);
        input.extend_from_slice(&sp.to_be_bytes());
        input.extend_from_slice(&dp.to_be_bytes());
        assert_eq!(toeplitz(&RSS_KEY, &input), tcp);
    }
}

fn tcp4_frame(src: [u8; 4], sp: u16, dst: [u8; 4], dp: u16) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x08, 0x00];
    f.extend_from_slice(&[0x45, 0, 0, 40, 0, 0, 0x40, 0, 64, 6, 0, 0]);
    f.extend_from_slice(&src);
    f.extend_from_slice(&dst);
    f.extend_from_slice(&sp.to_be_bytes());
    f.extend_from_slice(&dp.to_be_bytes());
    f.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0, 0, 0, 0]);
    f.resize(60, 0);
    f
}

#[test]
fn rx_cqe_carries_the_hash_and_rss_spreads_by_it() {
    let mut r = Rig::new(RigOpts::default());
    // A second RQ on port 1 sharing the RX CQ; table [rq0, rq1]: hash % 2 picks the RQ.
    let rq2 = r.tb.mem.alloc(16 * 64);
    let dbr2 = r.tb.mem.alloc(8);
    let bufs2: Vec<_> = (0..64).map(|_| r.tb.mem.alloc(2048)).collect();
    for (i, b) in bufs2.iter().enumerate() {
        rq2.write(i * 16, &dseg(2048, 1, b.dma_addr()));
    }
    dbr2.write_be32(0, 64);
    let rqn2 =
        r.tb.device()
            .create_rq(&RqConfig {
                port: 1,
                buf: rq2.dma_addr(),
                log_size: 6,
                log_stride: 4,
                dbr: dbr2.dma_addr(),
                cqn: r.rx_cq.cqn,
            })
            .unwrap();
    r.tb.device().set_rss(1, &[r.rqn, rqn2]).unwrap();
    for (src, sp, dst, dp, _, tcp) in VECTORS {
        let f = tcp4_frame(src, sp, dst, dp);
        r.send(&f, 0);
        r.tb.step();
        let cqe = r.rx_cq.poll().unwrap();
        assert_eq!(
            u32::from_be_bytes([cqe[12], cqe[13], cqe[14], cqe[15]]),
            tcp
        );
        assert_eq!(cqe[16], (1 << 2) | (1 << 6), "IPv4 + TCP");
    }
    // 0x51ccc178 and 0xc626b0ea are both even → rq0 took both.
    assert_eq!(r.tb.device().rq_consumer(r.rqn).unwrap(), 2);
    assert_eq!(r.tb.device().rq_consumer(rqn2).unwrap(), 0);
    // Another flow (the first vector with its ports swapped), hashed by the test itself.
    let mut input = [[66u8, 9, 149, 187], [161, 142, 100, 80]].concat();
    input.extend_from_slice(&1766u16.to_be_bytes());
    input.extend_from_slice(&2794u16.to_be_bytes());
    let h = toeplitz(&RSS_KEY, &input);
    let f = tcp4_frame([66, 9, 149, 187], 1766, [161, 142, 100, 80], 2794);
    r.send(&f, 0);
    r.tb.step();
    let expect_rq1 = h % 2 == 1;
    assert_eq!(r.tb.device().rq_consumer(rqn2).unwrap(), expect_rq1 as u16);
    assert_eq!(
        r.tb.device().rq_consumer(r.rqn).unwrap(),
        2 + !expect_rq1 as u16
    );
}
