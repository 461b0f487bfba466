//! The simulated ConnectX's NIC RX steering as mlx5e builds it (en_fs.c, lib/fs_ttc.c): a
//! VLAN table (untagged frames and VID 7 on to the L2 table), an L2 table (our MAC,
//! broadcast, one multicast address; promiscuous as a catch-all) forwarding to the
//! traffic-type table, and a drop entry; tables chained by MODIFY_FLOW_TABLE; the vport's
//! address filter; every check through commands and frames on the wire (port 1 loops back to
//! itself, see rss_rig). Offsets are the 6.12 mlx5_ifc.h's, written here by hand.

mod cx_fake_driver;
mod rss_rig;
mod sim_util;

use cx_fake_driver::*;
use rsnic_core::sim::mlx5::cmd::synd;
use rss_rig::*;

const OUR: [u8; 6] = [0x02, 0, 0, 0, 0, 2];
const MC: [u8; 6] = [0x33, 0x33, 0, 0, 0, 1];

/// create_flow_table_in at `level` (flow_table_context.level, bit 0xc8).
fn table(r: &mut Rig, log: u8, level: u8) -> u32 {
    let mut i = ft_in(log);
    put(&mut i, 0xc8, 8, u64::from(level));
    r.h.exec(&i, 16).ok().obj()
}

/// A group of `ft` over indices `start..=end` with outer criteria `mask` (64 bytes at
/// byte 0x40 of create_flow_group_in).
fn group(r: &mut Rig, ft: u32, start: u32, end: u32, mask: &[(usize, &[u8])]) -> u32 {
    let mut i = cmd_in(0x933, 0, 0x400);
    put(&mut i, 0xa8, 24, u64::from(ft));
    put(&mut i, 0xe0, 32, u64::from(start));
    put(&mut i, 0x120, 32, u64::from(end));
    if !mask.is_empty() {
        put(&mut i, 0x1f8, 8, 1);
    }
    for (off, b) in mask {
        i[0x40 + off..0x40 + off + b.len()].copy_from_slice(b);
    }
    r.h.exec(&i, 16).ok().obj()
}

enum To {
    Tir(u32),
    Table(u32),
    Drop,
}

/// set_fte_in: flow_context at byte 0x40, match_value at its 0x40 (byte 0x80), the first
/// destination at byte 0x340.
fn entry(r: &mut Rig, ft: u32, fg: u32, index: u32, value: &[(usize, &[u8])], to: To) -> Out {
    let mut i = cmd_in(0x936, 0, 0x348);
    put(&mut i, 0xa8, 24, u64::from(ft));
    put(&mut i, 0x100, 32, u64::from(index));
    put(&mut i, 0x220, 32, u64::from(fg));
    match to {
        To::Drop => put(&mut i, 0x270, 16, 2),
        To::Tir(t) | To::Table(t) => {
            put(&mut i, 0x270, 16, 4);
            put(&mut i, 0x288, 24, 1);
            let ty = if matches!(to, To::Tir(_)) { 2 } else { 1 };
            put(&mut i, 0x1a00, 8, ty);
            put(&mut i, 0x1a08, 24, u64::from(t));
        }
    }
    for (off, b) in value {
        i[0x80 + off..0x80 + off + b.len()].copy_from_slice(b);
    }
    r.h.exec(&i, 16)
}

fn with_dmac(mut f: Vec<u8>, d: [u8; 6]) -> Vec<u8> {
    f[..6].copy_from_slice(&d);
    f
}

/// An 802.1Q tag (VID `vid`) after the MAC addresses.
fn tagged(f: &[u8], vid: u16) -> Vec<u8> {
    let mut t = f[..12].to_vec();
    t.extend_from_slice(&[0x81, 0x00]);
    t.extend_from_slice(&vid.to_be_bytes());
    t.extend_from_slice(&f[12..]);
    t
}

#[test]
fn vlan_l2_and_traffic_type_tables_as_mlx5e_chains_them() {
    let mut r = Rig::new();
    let rqns = r.rqns();
    // One-RQ TIRs (mlx5e's "direct" ones: indirect over a one-entry RQT) for RQ 0..3.
    let mut tirs = Vec::new();
    for &q in &rqns {
        let rqt = r.h.exec(&rqt_in(&[q]), 16).ok().obj();
        tirs.push(r.tir(rqt, &[7; 40], 0, 0, 3));
    }
    // Levels: VLAN 1, L2 2, TTC 3.
    let ttc = table(&mut r, 2, 3);
    let tg = group(&mut r, ttc, 0, 1, &[(0x06, &[0xff, 0xff])]); // ethertype
    let ta = group(&mut r, ttc, 2, 2, &[]);
    // IPv4 to the first TIR, IPv6 to the second.
    for (index, ethertype) in [[0x08, 0x00], [0x86, 0xdd]].iter().enumerate() {
        let to = To::Tir(tirs[index]);
        entry(&mut r, ttc, tg, index as u32, &[(0x06, ethertype)], to).ok();
    }
    entry(&mut r, ttc, ta, 2, &[], To::Tir(tirs[2])).ok();
    let l2 = table(&mut r, 3, 2);
    let full = group(&mut r, l2, 0, 3, &[(0x08, &[0xff; 6])]); // dmac
    entry(&mut r, l2, full, 0, &[(0x08, &OUR)], To::Table(ttc)).ok();
    entry(&mut r, l2, full, 1, &[(0x08, &[0xff; 6])], To::Table(ttc)).ok();
    entry(&mut r, l2, full, 2, &[(0x08, &MC)], To::Table(ttc)).ok();
    // An entry forwarding to a table of a lower level is refused.
    let vlan = table(&mut r, 2, 1);
    expect(
        entry(
            &mut r,
            l2,
            full,
            3,
            &[(0x08, &[0x02, 0, 0, 0, 0, 9])],
            To::Table(vlan),
        ),
        0x3,
        synd::FTE_ACTION,
    );
    // VLAN: cvlan_tag (byte 0x12 bit 7) clear, or cvlan_tag with first_vid (0x0e) 7.
    let vg = group(
        &mut r,
        vlan,
        0,
        1,
        &[(0x0e, &[0x0f, 0xff]), (0x12, &[0x80])],
    );
    entry(&mut r, vlan, vg, 0, &[], To::Table(l2)).ok();
    entry(
        &mut r,
        vlan,
        vg,
        1,
        &[(0x0e, &[0, 7]), (0x12, &[0x80])],
        To::Table(l2),
    )
    .ok();
    r.h.exec(&ft_cmd(0x92f, 0, vlan), 16).ok(); // root
    let udp = ip4_frame(17, [10, 0, 0, 1], 9, [10, 0, 0, 2], 53);
    let ours = with_dmac(udp.clone(), OUR);
    assert_eq!(
        r.send(&ours).map(|x| x.0),
        Some(0),
        "IPv4 to our MAC: TTC IPv4"
    );
    assert_eq!(
        r.send(&with_dmac(udp6_frame([1; 16], 1, [2; 16], 2), OUR))
            .map(|x| x.0),
        Some(1),
        "IPv6"
    );
    assert_eq!(
        r.send(&with_dmac(arp_frame(), [0xff; 6])).map(|x| x.0),
        Some(2),
        "ARP broadcast: TTC any"
    );
    assert_eq!(
        r.send(&with_dmac(udp.clone(), MC)).map(|x| x.0),
        Some(0),
        "our multicast"
    );
    let other = with_dmac(udp.clone(), [0x02, 0, 0, 0, 0, 9]);
    let before = r.h.tb.counters(1).rx_steering_drops;
    assert_eq!(
        r.send(&other),
        None,
        "another MAC: the L2 table misses, dropped"
    );
    assert_eq!(r.h.tb.counters(1).rx_steering_drops, before + 1);
    assert_eq!(r.send(&tagged(&ours, 7)).map(|x| x.0), Some(0), "VID 7");
    assert_eq!(r.send(&tagged(&ours, 8)), None, "VID 8: no VLAN entry");
    // Promiscuous: the L2 table misses to a catch-all table of a higher level
    // (MODIFY_FLOW_TABLE, as fs_core chains a new table).
    let any = table(&mut r, 0, 2);
    let ag = group(&mut r, any, 0, 0, &[]);
    entry(&mut r, any, ag, 0, &[], To::Table(ttc)).ok();
    let mut m = ft_cmd(0x93c, 0, l2);
    let mut m2 = vec![0u8; 0x50];
    m2[..0x40].copy_from_slice(&m);
    m = m2;
    put(&mut m, 0x70, 16, 1); // modify_field_select: miss table
    put(&mut m, 0xc4, 4, 1); // table_miss_action FWD
    put(&mut m, 0xe8, 24, u64::from(any));
    // `any` is at level 2, the L2 table's own: refused; at a higher level it is taken.
    expect(r.h.exec(&m, 16), 0x3, synd::FT_PARAM);
    let any = table(&mut r, 0, 4);
    let ag = group(&mut r, any, 0, 0, &[]);
    entry(&mut r, any, ag, 0, &[], To::Tir(tirs[3])).ok();
    put(&mut m, 0xe8, 24, u64::from(any));
    r.h.exec(&m, 16).ok();
    assert_eq!(
        r.send(&other).map(|x| x.0),
        Some(3),
        "promiscuous: the miss table"
    );
    // A drop entry wins over the catch-all when it comes first.
    let dg = group(&mut r, ttc, 3, 3, &[(0x10, &[0xff])]); // ip_protocol
    let _ = dg;
    // (index 3 is beyond TTC's first groups: a drop for UDP placed after them does not
    // take IPv4 frames the ethertype entry took first)
    entry(&mut r, ttc, dg, 3, &[(0x10, &[17])], To::Drop).ok();
    assert_eq!(
        r.send(&ours).map(|x| x.0),
        Some(0),
        "index order: the ethertype entry first"
    );
    // Tables an entry forwards to cannot go; the root can.
    expect(r.h.exec(&ft_cmd(0x931, 0, ttc), 16), 0x6, synd::FT_IN_USE);
}

#[test]
fn the_vport_filter_once_a_driver_programs_it() {
    let mut r = Rig::new();
    let rqns = r.rqns();
    let rqt = r.h.exec(&rqt_in(&rqns[..1]), 16).ok().obj();
    r.tir(rqt, &[7; 40], 0, 0, 3); // no root table: the first indirect TIR takes all
    let udp = ip4_frame(17, [10, 0, 0, 1], 9, [10, 0, 0, 2], 53);
    let stranger = with_dmac(udp.clone(), [0x02, 0, 0, 0, 0, 9]);
    assert!(
        r.send(&stranger).is_some(),
        "nothing programmed: every frame"
    );
    // MODIFY_NIC_VPORT_CONTEXT addresses_list (field_select bit 0x7d): MC list of one.
    let mut i = cmd_in(0x755, 0, 0x208);
    put(&mut i, 0x7d, 1, 1);
    put(&mut i, 0x800 + 0x785, 3, 1); // allowed_list_type MC
    put(&mut i, 0x800 + 0x794, 12, 1); // allowed_list_size
    i[0x202..0x208].copy_from_slice(&MC);
    r.h.exec(&i, 16).ok();
    assert!(r.send(&stranger).is_none(), "a unicast MAC not ours");
    assert_eq!(r.h.tb.counters(1).rx_vport_filtered, 1);
    let mac = [0x02, 0x00, 0x00, 0x00, 0x00, 0x02]; // port 1's default MAC
    assert!(r.send(&with_dmac(udp.clone(), mac)).is_some(), "our MAC");
    assert!(
        r.send(&with_dmac(udp.clone(), MC)).is_some(),
        "on the MC list"
    );
    assert!(r
        .send(&with_dmac(udp.clone(), [0x33, 0x33, 0, 0, 0, 2]))
        .is_none());
    assert!(
        r.send(&with_dmac(udp.clone(), [0xff; 6])).is_some(),
        "broadcast"
    );
    // promisc_uc (field_select bit 0x7b, promisc_uc at context bit 0x780).
    let mut p = cmd_in(0x755, 0, 0x200);
    put(&mut p, 0x7b, 1, 1);
    put(&mut p, 0x800 + 0x780, 1, 1);
    r.h.exec(&p, 16).ok();
    assert!(r.send(&stranger).is_some(), "promiscuous unicast");
    // The VLAN list (type 2, `vlan_layout`: the VID in the low 12 bits of the entry's first
    // word) is taken and recorded, and filters nothing: 6.12's e-switch manager arms no
    // VLAN change event for a VF (eswitch.c: UC, MC and promiscuous changes only), so a
    // tagged frame of any VID passes, listed or not.
    let mut v = cmd_in(0x755, 0, 0x208);
    put(&mut v, 0x7d, 1, 1);
    put(&mut v, 0x800 + 0x785, 3, 2);
    put(&mut v, 0x800 + 0x794, 12, 1);
    v[0x200..0x204].copy_from_slice(&7u32.to_be_bytes());
    r.h.exec(&v, 16).ok();
    assert_eq!(r.h.tb.vport_vlans(1), vec![7], "recorded");
    let ours = with_dmac(udp.clone(), mac);
    assert!(r.send(&tagged(&ours, 7)).is_some(), "VID 7 is listed");
    assert!(
        r.send(&tagged(&ours, 8)).is_some(),
        "VID 8 is not: passes all the same"
    );
    assert!(r.send(&ours).is_some(), "untagged");
    let filtered = r.h.tb.counters(1).rx_vport_filtered;
    assert_eq!(
        filtered, 2,
        "the stranger and the unlisted multicast only, before"
    );
    // A list longer than the capability.
    let mut i = cmd_in(0x755, 0, 0x200 + 8 * 5);
    put(&mut i, 0x7d, 1, 1);
    put(&mut i, 0x800 + 0x794, 12, 5); // UC list of 5 > 4
    expect(r.h.exec(&i, 16), 0x3, synd::ADDRESS_LIST);
}
