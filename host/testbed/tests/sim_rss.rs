//! RSS and receive steering of the simulated ConnectX through its command interface: the
//! RQT of 256 entries, per-traffic-type TIRs with their own field selectors and keys,
//! MODIFY_RQT / MODIFY_TIR changing where frames land, the flow-steering subset (flow table,
//! groups, entries, root) choosing the TIR of each traffic type, and the refusals. Inputs are
//! built by hand from the 6.12 mlx5_ifc.h layouts (tests/cx_fake_driver), independently of
//! the driver's builders; expected hashes come from the Microsoft RSS verification vectors.
//! The last test runs the driver's own builders (`hwif::mlx5::cmd::{fs, res}`) against the
//! model: the two sides agree.

mod cx_fake_driver;
mod rss_rig;
mod sim_util;

use cx_fake_driver::*;
use rsnic_core::sim::mlx5::cmd::synd;
use rsnic_core::sim::pkt::{self, rss_hash_sel, toeplitz, HashSel, RSS_KEY};
use rss_rig::*;

/// The verification suite's first IPv4 flow: 66.9.149.187:2794 → 161.142.100.80:1766.
const V_SRC: [u8; 4] = [66, 9, 149, 187];
const V_DST: [u8; 4] = [161, 142, 100, 80];
const V_SPORT: u16 = 2794;
const V_DPORT: u16 = 1766;
/// Its hash over the addresses and ports, and over the addresses alone (RSS_KEY).
const V_HASH_4T: u32 = 0x51ccc178;
const V_HASH_2T: u32 = 0x323e8fc2;

/// The `rss_hash_type` byte of a CQE: IPv4 in bits 3..2, TCP 1 / UDP 2 in bits 7..6.
const HT_IPV4: u8 = 1 << 2;
const HT_TCP: u8 = 1 << 6;
const HT_UDP: u8 = 2 << 6;

// mlx5_ifc selected_fields bits.
const SRC_IP: u32 = 1;
const DST_IP: u32 = 2;
const SPORT: u32 = 4;
const DPORT: u32 = 8;
const SDFN: u32 = SRC_IP | DST_IP | SPORT | DPORT;
const SD: u32 = SRC_IP | DST_IP;

#[test]
fn hash_selection_follows_the_verification_suite() {
    let tcp = ip4_frame(6, V_SRC, V_SPORT, V_DST, V_DPORT);
    let udp = ip4_frame(17, V_SRC, V_SPORT, V_DST, V_DPORT);
    let (th, uh) = (pkt::parse(&tcp), pkt::parse(&udp));
    let sel = |udp: bool, fields: u32| HashSel {
        ipv6: false,
        udp,
        src_ip: fields & SRC_IP != 0,
        dst_ip: fields & DST_IP != 0,
        sport: fields & SPORT != 0,
        dport: fields & DPORT != 0,
    };
    // All four fields, and the addresses alone.
    let t = rss_hash_sel(&tcp, &th, &RSS_KEY, sel(false, SDFN));
    assert_eq!(t, (V_HASH_4T, HT_IPV4 | HT_TCP));
    assert_eq!(
        rss_hash_sel(&tcp, &th, &RSS_KEY, sel(false, SD)),
        (V_HASH_2T, HT_IPV4)
    );
    assert_eq!(
        rss_hash_sel(&udp, &uh, &RSS_KEY, sel(true, SDFN)),
        (V_HASH_4T, HT_IPV4 | HT_UDP)
    );
    // The selector's transport is not the frame's: its ports are not hashed.
    assert_eq!(
        rss_hash_sel(&udp, &uh, &RSS_KEY, sel(false, SDFN)),
        (V_HASH_2T, HT_IPV4)
    );
    // An IPv6 selector on an IPv4 frame hashes nothing.
    let mut s6 = sel(false, SDFN);
    s6.ipv6 = true;
    assert_eq!(rss_hash_sel(&tcp, &th, &RSS_KEY, s6), (0, 0));
    // One field alone: the key window of the field's position in the tuple (a source
    // address alone hashes as the first 4 bytes of the tuple).
    let src_only = rss_hash_sel(&tcp, &th, &RSS_KEY, sel(false, SRC_IP));
    assert_eq!(src_only.0, toeplitz(&RSS_KEY, &V_SRC));
    let dst_only = rss_hash_sel(&tcp, &th, &RSS_KEY, sel(false, DST_IP));
    assert_eq!(dst_only.0, toeplitz(&RSS_KEY, &V_DST));
    // The suite's IPv6 flow: 3ffe:2501:200:1fff::7 port 2794 → 3ffe:2501:200:3::1 port
    // 1766 (hashes 0x2cc18cd5 without ports, 0x40207d3d with).
    let s = [
        0x3f, 0xfe, 0x25, 0x01, 0x02, 0, 0x1f, 0xff, 0, 0, 0, 0, 0, 0, 0, 7,
    ];
    let d = [
        0x3f, 0xfe, 0x25, 0x01, 0x02, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 1,
    ];
    let f6 = udp6_frame(s, 2794, d, 1766);
    let h6 = pkt::parse(&f6);
    let mut s6 = sel(true, SDFN);
    s6.ipv6 = true;
    assert_eq!(
        rss_hash_sel(&f6, &h6, &RSS_KEY, s6),
        (0x40207d3d, (2 << 2) | HT_UDP)
    );
    s6.sport = false;
    s6.dport = false;
    assert_eq!(rss_hash_sel(&f6, &h6, &RSS_KEY, s6), (0x2cc18cd5, 2 << 2));
}

#[test]
fn flow_table_sends_each_traffic_type_to_its_tir() {
    let mut r = Rig::new();
    let rqns = r.rqns();
    let table: Vec<u32> = (0..256).map(|i| rqns[i % 4]).collect();
    let rqtn = r.h.exec(&rqt_in(&table), 16).ok().obj();
    let key = RSS_KEY;
    let tcp4 = r.tir(rqtn, &key, 0, 0, SDFN);
    let tcp6 = r.tir(rqtn, &key, 1, 0, SDFN);
    let udp4 = r.tir(rqtn, &key, 0, 1, SDFN);
    let udp6 = r.tir(rqtn, &key, 1, 1, SDFN);
    let ip4 = r.tir(rqtn, &key, 0, 0, SD);
    let ip6 = r.tir(rqtn, &key, 1, 0, SD);
    let tcp_v = ip4_frame(6, V_SRC, V_SPORT, V_DST, V_DPORT);
    let udp_v = ip4_frame(17, V_SRC, V_SPORT, V_DST, V_DPORT);
    let icmp_v = ip4_frame(1, V_SRC, 0, V_DST, 0);
    // No root table yet: the first indirect TIR (TCP/IPv4's) takes everything, hashing
    // addresses and ports whatever its selector says.
    assert_eq!(
        r.send(&udp_v),
        Some((spread(V_HASH_4T), V_HASH_4T, HT_IPV4 | HT_UDP))
    );
    let (ft, groups) = ttc(&mut r, [tcp4, tcp6, udp4, udp6, ip4, ip6]);
    r.h.exec(&ft_cmd(0x92f, 0, ft), 16).ok();
    // TCP and UDP hash addresses and ports, other IPv4 the addresses only.
    assert_eq!(
        r.send(&tcp_v),
        Some((spread(V_HASH_4T), V_HASH_4T, HT_IPV4 | HT_TCP))
    );
    assert_eq!(
        r.send(&udp_v),
        Some((spread(V_HASH_4T), V_HASH_4T, HT_IPV4 | HT_UDP))
    );
    assert_eq!(
        r.send(&icmp_v),
        Some((spread(V_HASH_2T), V_HASH_2T, HT_IPV4))
    );
    // Not IP: the catch-all entry, to the IPv4 TIR, which hashes nothing: entry 0.
    assert_eq!(r.send(&arp_frame()), Some((0, 0, 0)));
    // UDP over IPv6 to its own TIR.
    let s6 = [
        0x3f, 0xfe, 0x25, 0x01, 0x02, 0, 0x1f, 0xff, 0, 0, 0, 0, 0, 0, 0, 7,
    ];
    let d6 = [
        0x3f, 0xfe, 0x25, 0x01, 0x02, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 1,
    ];
    assert_eq!(
        r.send(&udp6_frame(s6, 2794, d6, 1766)),
        Some((spread(0x40207d3d), 0x40207d3d, (2 << 2) | HT_UDP))
    );

    // `-N udp4 sd`: MODIFY_TIR of the UDP/IPv4 TIR. Flows between one address pair now
    // hash alike whatever their ports; TCP keeps its four fields.
    r.h.exec(&modify_tir_in(udp4, &key, 0, 1, SD), 16).ok();
    for sp in [V_SPORT, 1000, 1001, 40000] {
        let f = ip4_frame(17, V_SRC, sp, V_DST, V_DPORT + sp % 7);
        assert_eq!(r.send(&f), Some((spread(V_HASH_2T), V_HASH_2T, HT_IPV4)));
    }
    assert_eq!(r.send(&tcp_v).map(|x| x.1), Some(V_HASH_4T));
    // Back to four fields: the ports spread the flows again.
    r.h.exec(&modify_tir_in(udp4, &key, 0, 1, SDFN), 16).ok();
    let flows: Vec<Vec<u8>> = (0..32u16)
        .map(|i| ip4_frame(17, [10, 0, 0, 1], 5000 + i, [10, 0, 0, 2], 9))
        .collect();
    let tuple = |f: &[u8]| f[26..38].to_vec();
    let mut used = [false; 4];
    for f in &flows {
        let h = toeplitz(&key, &tuple(f));
        let got = r.send(f).unwrap();
        assert_eq!(got, (spread(h), h, HT_IPV4 | HT_UDP));
        used[got.0] = true;
    }
    assert!(used.iter().all(|&u| u), "32 flows spread over the 4 RQs");

    // A new key (MODIFY_TIR, hitless): the same flows land where the new key says, and at
    // least one of them moves.
    let mut key2 = RSS_KEY;
    key2.reverse();
    r.h.exec(&modify_tir_in(udp4, &key2, 0, 1, SDFN), 16).ok();
    let mut moved = 0;
    for f in &flows {
        let (h1, h2) = (toeplitz(&key, &tuple(f)), toeplitz(&key2, &tuple(f)));
        assert_eq!(r.send(f), Some((spread(h2), h2, HT_IPV4 | HT_UDP)));
        moved += usize::from(spread(h1) != spread(h2));
    }
    assert!(moved > 0, "a key change moves flows");
    // The other TIRs kept the old key.
    assert_eq!(r.send(&tcp_v).map(|x| x.1), Some(V_HASH_4T));

    // MODIFY_RQT: every entry to RQ 0, then to RQ 1 (`-X weight 0 1 0 0`).
    for target in [0usize, 1] {
        r.h.exec(&modify_rqt_in(rqtn, &vec![rqns[target]; 256]), 16)
            .ok();
        for f in flows.iter().take(8) {
            assert_eq!(r.send(f).map(|x| x.0), Some(target));
        }
    }
    r.h.exec(&modify_rqt_in(rqtn, &table), 16).ok();

    // Entry 2 (UDP/IPv4) deleted: UDP/IPv4 falls to the next matching entry, IPv4's (4),
    // whose TIR hashes the addresses.
    r.h.exec(
        &{
            let mut i = ft_cmd(0x938, 0, ft);
            put(&mut i, 0x100, 32, 2);
            i
        },
        16,
    )
    .ok();
    assert_eq!(
        r.send(&udp_v),
        Some((spread(V_HASH_2T), V_HASH_2T, HT_IPV4))
    );
    r.h.exec(&fte_in(ft, groups[0], 2, 0x0800, 17, udp4), 16)
        .ok();

    // Root disconnected: the first indirect TIR takes everything again.
    r.h.exec(&ft_cmd(0x92f, 1, 0), 16).ok();
    assert_eq!(r.send(&icmp_v).map(|x| x.1), Some(V_HASH_2T));
    assert_eq!(r.send(&udp_v).map(|x| x.1), Some(V_HASH_4T));
    assert_eq!(r.h.tb.counters(1).rx_no_rq_drops, 0);
}

#[test]
fn steering_commands_refuse_what_the_model_does_not_do() {
    let mut r = Rig::new();
    let rqns = r.rqns();
    let rqtn = r.h.exec(&rqt_in(&rqns), 16).ok().obj();
    let key = RSS_KEY;
    let tir = r.tir(rqtn, &key, 0, 1, SDFN);
    // A selector with the IPsec SPI field (mlx5e's AH / ESP types) is taken; a field
    // beyond it is not.
    let spi =
        r.h.exec(&tir_sel_in(rqtn, r.td, &key, 0, 0, SDFN | 16), 16)
            .ok()
            .obj();
    r.h.exec(&obj_in(0x902, spi), 16).ok(); // DESTROY_TIR
    expect(
        r.h.exec(&tir_sel_in(rqtn, r.td, &key, 0, 0, SDFN | 64), 16),
        ST_BAD_PARAM,
        synd::TIR_FIELDS,
    );
    // MODIFY_TIR: another bitmask bit (packet_merge, 0xbf), a hash function, fields, a
    // TIR not ours.
    let mut m = modify_tir_in(tir, &key, 0, 0, SD);
    put(&mut m, 0xbb, 1, 1); // self_lb_en alone: taken
    put(&mut m, 0xbd, 1, 0);
    r.h.exec(&m, 16).ok();
    put(&mut m, 0xbd, 1, 1);
    put(&mut m, 0xbf, 1, 1); // packet_merge (LRO): refused
    expect(r.h.exec(&m, 16), ST_BAD_PARAM, synd::TIR_BITMASK);
    let mut m = modify_tir_in(tir, &key, 0, 0, SD);
    put(&mut m, 0x220, 4, 3); // neither Toeplitz (2) nor inverted XOR8 (1)
    expect(r.h.exec(&m, 16), ST_BAD_PARAM, synd::TIR_HASH);
    expect(
        r.h.exec(&modify_tir_in(tir, &key, 0, 0, 32), 16),
        ST_BAD_PARAM,
        synd::TIR_FIELDS,
    );
    expect(
        r.h.exec(&modify_tir_in(tir + 1, &key, 0, 0, SD), 16),
        ST_BAD_RESOURCE,
        synd::BAD_TIR,
    );
    // Flow tables: another table type, flags, too large.
    let mut i = ft_in(3);
    put(&mut i, 0x80, 8, 1);
    expect(r.h.exec(&i, 16), ST_BAD_PARAM, synd::FT_TYPE);
    let mut i = ft_in(3);
    put(&mut i, 0xc4, 4, 2); // table_miss_action SWITCH_DOMAIN
    expect(r.h.exec(&i, 16), ST_BAD_PARAM, synd::FT_PARAM);
    put(&mut i, 0xc4, 4, 1); // FWD, to no table
    expect(r.h.exec(&i, 16), ST_BAD_RESOURCE, synd::BAD_FT);
    put(&mut i, 0xc4, 4, 0); // a miss table without FWD
    put(&mut i, 0xe8, 24, 0x9000);
    expect(r.h.exec(&i, 16), ST_BAD_PARAM, synd::FT_PARAM);
    let mut i = ft_in(3);
    put(&mut i, 0xc0, 4, 8); // reformat_en
    expect(r.h.exec(&i, 16), ST_BAD_PARAM, synd::FT_PARAM);
    expect(r.h.exec(&ft_in(17), 16), ST_BAD_PARAM, synd::FT_PARAM);
    let ft = r.h.exec(&ft_in(3), 16).ok().obj();
    // Groups: a field the model does not build (l4_type, byte 0x18 of the outer headers),
    // a field of the misc parameters, beyond the table, overlapping, of no table.
    let mut i = fg_in(ft, 0, 1, true, false);
    put(&mut i, 0x200 + 0xc0, 2, 3);
    expect(r.h.exec(&i, 16), ST_BAD_PARAM, synd::FG_CRITERIA);
    let mut i = fg_in(ft, 0, 1, true, false);
    put(&mut i, 0x200 + 0x200, 32, 0xffff_ffff);
    expect(r.h.exec(&i, 16), ST_BAD_PARAM, synd::FG_CRITERIA);
    expect(
        r.h.exec(&fg_in(ft, 4, 8, true, false), 16),
        ST_BAD_PARAM,
        synd::FG_RANGE,
    );
    let g = r.h.exec(&fg_in(ft, 0, 3, true, true), 16).ok().obj();
    expect(
        r.h.exec(&fg_in(ft, 3, 5, true, false), 16),
        ST_BAD_PARAM,
        synd::FG_RANGE,
    );
    expect(
        r.h.exec(&fg_in(ft + 1, 4, 5, true, false), 16),
        ST_BAD_RESOURCE,
        synd::BAD_FT,
    );
    // Entries: outside the group, twice, another action, a destination that is not a TIR
    // or a table of ours.
    expect(
        r.h.exec(&fte_in(ft, g, 4, 0x0800, 17, tir), 16),
        ST_BAD_PARAM,
        synd::FTE_INDEX,
    );
    let mut i = fte_in(ft, g, 0, 0x0800, 17, tir);
    put(&mut i, 0x270, 16, 4 | 2); // FWD_DEST | DROP
    expect(r.h.exec(&i, 16), ST_BAD_PARAM, synd::FTE_ACTION);
    let mut i = fte_in(ft, g, 0, 0x0800, 17, tir);
    put(&mut i, 0x1a00, 8, 1); // a flow table destination: no table of that number
    expect(r.h.exec(&i, 16), ST_BAD_RESOURCE, synd::BAD_FT);
    let mut i = fte_in(ft, g, 0, 0x0800, 17, tir);
    put(&mut i, 0x1a00, 8, 3); // a queue-pair destination
    expect(r.h.exec(&i, 16), ST_BAD_PARAM, synd::FTE_ACTION);
    expect(
        r.h.exec(&fte_in(ft, g, 0, 0x0800, 17, tir + 1), 16),
        ST_BAD_RESOURCE,
        synd::BAD_TIR,
    );
    r.h.exec(&fte_in(ft, g, 0, 0x0800, 17, tir), 16).ok();
    expect(
        r.h.exec(&fte_in(ft, g, 0, 0x0800, 6, tir), 16),
        ST_BAD_PARAM,
        synd::FTE_INDEX,
    );
    // Modifying an entry (op_mod 1) replaces it; op_mod 2 is no SET_FLOW_TABLE_ENTRY.
    let mut i = fte_in(ft, g, 0, 0x0800, 17, tir);
    i[6..8].copy_from_slice(&1u16.to_be_bytes());
    r.h.exec(&i, 16).ok();
    i[6..8].copy_from_slice(&2u16.to_be_bytes());
    expect(r.h.exec(&i, 16), ST_BAD_OP, synd::BAD_OP_MOD);
    // Root: an underlay QPN, then set.
    let mut i = ft_cmd(0x92f, 0, ft);
    put(&mut i, 0xc8, 24, 5);
    expect(r.h.exec(&i, 16), ST_BAD_PARAM, synd::FT_PARAM);
    r.h.exec(&ft_cmd(0x92f, 0, ft), 16).ok();
    // What is in use cannot go: the TIR an entry forwards to, the group with an entry,
    // the table with groups or as root.
    expect(r.h.exec(&obj_in(0x902, tir), 16), ST_BUSY, synd::TIR_IN_USE);
    let mut dg = ft_cmd(0x934, 0, ft);
    put(&mut dg, 0xc0, 32, u64::from(g));
    expect(r.h.exec(&dg, 16), ST_BUSY, synd::FG_IN_USE);
    expect(
        r.h.exec(&ft_cmd(0x931, 0, ft), 16),
        ST_BUSY,
        synd::FT_IN_USE,
    );
    // A frame no entry matches (TCP) is dropped by steering; UDP goes through the entry.
    let tcp_v = ip4_frame(6, V_SRC, V_SPORT, V_DST, V_DPORT);
    assert_eq!(r.send(&tcp_v), None);
    assert_eq!(r.h.tb.counters(1).rx_steering_drops, 1, "no entry took it");
    assert_eq!(r.h.tb.counters(1).rx_no_rq_drops, 1, "no RQ for it");
    let udp_v = ip4_frame(17, V_SRC, V_SPORT, V_DST, V_DPORT);
    assert_eq!(r.send(&udp_v).map(|x| x.1), Some(V_HASH_4T));
    // Undone in order: root, entry (twice: the second finds none), group, table, TIR.
    r.h.exec(&ft_cmd(0x92f, 1, 0), 16).ok();
    let mut de = ft_cmd(0x938, 0, ft);
    put(&mut de, 0x100, 32, 0);
    r.h.exec(&de, 16).ok();
    expect(r.h.exec(&de, 16), ST_BAD_PARAM, synd::FTE_INDEX);
    r.h.exec(&dg, 16).ok();
    r.h.exec(&ft_cmd(0x931, 0, ft), 16).ok();
    r.h.exec(&obj_in(0x902, tir), 16).ok();
    r.h.exec(&obj_in(0x918, rqtn), 16).ok();
    let _ = (r.pd, &r.cq);
}

/// The driver's builders (`hwif::mlx5::cmd::{fs, res}`) against the model: the traffic-type
/// table, per-type TIRs, a hash change by MODIFY_TIR and a table change by MODIFY_RQT of
/// 256 entries, then the driver's teardown order; every command accepted.
#[test]
fn the_drivers_steering_commands_run_on_the_model() {
    use rsnic_core::hwif::mlx5::cmd::fs::{self, Tt};
    use rsnic_core::hwif::mlx5::cmd::res;
    let mut r = Rig::new();
    let rqns = r.rqns();
    let (rqtn, tirs, ft, groups) = driver_rss(&mut r, 0);
    r.h.exec(&build(&|b| fs::set_flow_table_root(b, ft)), 16)
        .ok();
    let udp_v = ip4_frame(17, V_SRC, V_SPORT, V_DST, V_DPORT);
    assert_eq!(
        r.send(&udp_v),
        Some((spread(V_HASH_4T), V_HASH_4T, HT_IPV4 | HT_UDP))
    );
    // `-N udp4 sd` as the driver sends it.
    let h = res::TirHash {
        key: RSS_KEY,
        l3_prot_type: Tt::Udp4.l3_prot_type(),
        l4_prot_type: Tt::Udp4.l4_prot_type(),
        selected_fields: res::HASH_SEL_SRC_IP | res::HASH_SEL_DST_IP,
    };
    let udp4 = tirs[Tt::Udp4.tir_index()];
    r.h.exec(&build(&|b| res::modify_tir_hash(b, udp4, &h)), 16)
        .ok();
    assert_eq!(
        r.send(&udp_v),
        Some((spread(V_HASH_2T), V_HASH_2T, HT_IPV4))
    );
    // `-X equal 1`.
    let all0 = vec![rqns[0]; 256];
    r.h.exec(&build(&|b| res::modify_rqt(b, rqtn, 256, &all0)), 16)
        .ok();
    assert_eq!(r.send(&udp_v).map(|x| x.0), Some(0));
    // The driver's teardown: disconnect, entries, groups, table, TIRs, RQT.
    r.h.exec(&build(&|b| fs::disconnect_flow_table_root(b)), 16)
        .ok();
    for tt in Tt::ALL {
        r.h.exec(&build(&|b| fs::delete_fte(b, ft, tt.flow_index())), 16)
            .ok();
    }
    for g in &groups {
        r.h.exec(&build(&|b| fs::destroy_flow_group(b, ft, *g)), 16)
            .ok();
    }
    r.h.exec(&build(&|b| fs::destroy_flow_table(b, ft)), 16)
        .ok();
    for t in &tirs {
        r.h.exec(&build(&|b| res::destroy_tir(b, *t)), 16).ok();
    }
    r.h.exec(&build(&|b| res::destroy_rqt(b, rqtn)), 16).ok();
    assert_eq!(r.send(&udp_v), None, "nothing steers any more");
}
