//! rsnic's ConnectX receive filtering, driver side against the model: the commands
//! `hwif::mlx5::cmd::{vport, fs}` build for the vport's address lists and promiscuous flags and
//! for the L2 table (checked bit by bit against the 6.12 mlx5_ifc.h offsets, written here by
//! hand), what mlx5e's rx-mode work puts in them ([`vport::VportLists`], [`fs::L2Rules`]), and
//! frames through a port programmed with them: what is delivered, and what the model counts
//! as kept away (`rx_vport_filtered` by the vport, `rx_steering_drops` by the L2 table).

mod cx_fake_driver;
mod rss_rig;
mod sim_util;

use rsnic_core::hwif::mlx5::cmd::fs::{self, L2Rules, RxFilter};
use rsnic_core::hwif::mlx5::cmd::{vport, FormatError};
use rss_rig::*;

/// Port 1's permanent MAC in the test bed.
const PERM: [u8; 6] = [0x02, 0, 0, 0, 0, 2];
const NEW: [u8; 6] = [0x02, 0x52, 0x53, 0xaa, 0xbb, 0x01];
const GROUP: [u8; 6] = [0x01, 0x00, 0x5e, 0x01, 0x02, 0x03];
const OTHER: [u8; 6] = [0x01, 0x00, 0x5e, 0x01, 0x02, 0x04];
const FOREIGN: [u8; 6] = [0x02, 0, 0, 0, 0x99, 0x01];

#[test]
fn vport_commands_at_the_headers_offsets() {
    let mut b = vec![0u8; 0x400];
    let n =
        vport::modify_nic_vport_mac_list(&mut b, vport::LIST_TYPE_MC, &[[0xff; 6], GROUP]).unwrap();
    assert_eq!(n, 0x200 + 16, "the context, then 8 bytes an address");
    assert_eq!(bits(&b, 0, 16), 0x755, "MODIFY_NIC_VPORT_CONTEXT");
    assert_eq!(
        bits(&b, 0x60, 32),
        1 << 2,
        "field_select.addresses_list (bit 0x7d) only"
    );
    assert_eq!(bits(&b, 0x800 + 0x785, 3), 1, "allowed_list_type MC");
    assert_eq!(bits(&b, 0x800 + 0x794, 12), 2, "allowed_list_size");
    assert_eq!(
        &b[0x200..0x208],
        &[0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
    );
    assert_eq!(
        &b[0x208..0x210],
        &[0, 0, 0x01, 0x00, 0x5e, 0x01, 0x02, 0x03]
    );
    // A multicast address in a UC list, a unicast one in an MC list, a list over 12 bits.
    assert_eq!(
        vport::modify_nic_vport_mac_list(&mut b, vport::LIST_TYPE_UC, &[GROUP]),
        Err(FormatError::BadParam)
    );
    assert_eq!(
        vport::modify_nic_vport_mac_list(&mut b, vport::LIST_TYPE_MC, &[PERM]),
        Err(FormatError::BadParam)
    );
    let many = vec![PERM; 4096];
    let mut big = vec![0u8; 0x200 + 8 * 4096];
    assert_eq!(
        vport::modify_nic_vport_mac_list(&mut big, vport::LIST_TYPE_UC, &many),
        Err(FormatError::BadParam)
    );
    let mut p = vec![0u8; 0x200];
    assert_eq!(
        vport::modify_nic_vport_promisc(&mut p, false, true, false),
        Ok(0x200)
    );
    assert_eq!(
        bits(&p, 0x60, 32),
        1 << 4,
        "field_select.promisc (bit 0x7b) only"
    );
    assert_eq!(
        bits(&p, 0x800 + 0x780, 3),
        0b010,
        "promisc_uc, promisc_mc, promisc_all"
    );
}

#[test]
fn l2_commands_at_the_headers_offsets() {
    let mut g = vec![0u8; fs::CREATE_FG_IN_LEN];
    fs::create_flow_group_dmac(&mut g, 7, 20, 20, &[0x01, 0, 0, 0, 0, 0]).unwrap();
    assert_eq!(bits(&g, 0, 16), 0x933, "CREATE_FLOW_GROUP");
    assert_eq!(bits(&g, 0xa8, 24), 7);
    assert_eq!((bits(&g, 0xe0, 32), bits(&g, 0x120, 32)), (20, 20));
    assert_eq!(bits(&g, 0x1f8, 8), 1, "outer headers");
    assert_eq!(
        &g[0x40 + 8..0x40 + 14],
        &[0x01, 0, 0, 0, 0, 0],
        "dmac criteria"
    );
    fs::create_flow_group_dmac(&mut g, 7, 21, 21, &[0; 6]).unwrap();
    assert_eq!(bits(&g, 0x1f8, 8), 0, "no criteria for the catch-all");
    let mut e = vec![0u8; fs::SET_FTE_IN_LEN];
    fs::set_fte_dmac_fwd_table(&mut e, 7, 3, 5, &GROUP, 9).unwrap();
    assert_eq!(bits(&e, 0, 16), 0x936, "SET_FLOW_TABLE_ENTRY");
    assert_eq!(bits(&e, 0x100, 32), 5, "flow_index");
    assert_eq!(bits(&e, 0x220, 32), 3, "group_id");
    assert_eq!(bits(&e, 0x270, 16), 4, "FWD_DEST");
    assert_eq!(bits(&e, 0x288, 24), 1, "one destination");
    assert_eq!(&e[0x80 + 8..0x80 + 14], &GROUP, "dmac value");
    assert_eq!(bits(&e, 0x1a00, 8), 1, "destination type FLOW_TABLE");
    assert_eq!(bits(&e, 0x1a08, 24), 9, "destination table");
}

#[test]
fn the_lists_as_mlx5e_fills_them() {
    // Own address first (not twice), multicast left out of the UC list; broadcast first in
    // the MC list; each cut at its cap, what did not fit counted.
    let uc = [
        PERM,
        NEW,
        FOREIGN,
        GROUP,
        [0x02, 1, 2, 3, 4, 5],
        [0x02, 1, 2, 3, 4, 6],
    ];
    let l = vport::VportLists::new(&PERM, true, &uc, &[GROUP, OTHER, GROUP], 2, 4);
    assert_eq!(l.uc(), &[PERM, NEW, FOREIGN, [0x02, 1, 2, 3, 4, 5]]);
    assert_eq!(l.uc_dropped, 1);
    assert_eq!(l.mc(), &[[0xff; 6], GROUP, OTHER]);
    assert_eq!(l.mc_dropped, 0);
    let l = vport::VportLists::new(&PERM, false, &[], &[GROUP, OTHER], 2, 0);
    assert_eq!((l.mc(), l.mc_dropped), (&[GROUP][..], 1));
    // The L2 table: own, broadcast, the lists; the catch-alls for what does not fit.
    let f = RxFilter {
        own: NEW,
        broadcast: true,
        promisc: false,
        allmulti: false,
        uc: &[FOREIGN, NEW],
        uc_more: false,
        mc: &[GROUP],
        mc_more: false,
    };
    let r = L2Rules::new(&f);
    assert_eq!(r.addrs(), &[NEW, [0xff; 6], FOREIGN, GROUP]);
    assert!(!r.allmulti && !r.promisc);
    let r = L2Rules::new(&RxFilter { mc_more: true, ..f });
    assert!(r.allmulti && !r.promisc, "a multicast list the stack cut");
    let mcs: Vec<[u8; 6]> = (0..fs::L2_FULL as u8)
        .map(|i| [0x01, 0, 0x5e, 0, 0, i])
        .collect();
    let r = L2Rules::new(&RxFilter { mc: &mcs, ..f });
    assert_eq!(r.addrs().len(), fs::L2_FULL);
    assert!(
        r.allmulti && !r.promisc,
        "more multicast addresses than entries"
    );
}

/// The driver's steering of one port: a TIR, the traffic-type table to it, the L2 table in
/// front as the root; the vport and the L2 table programmed for `f` as ctrl.rs programs
/// them. Returns the L2 table and its groups.
struct Steer {
    l2: u32,
    groups: [u32; 3],
    ttc: u32,
    set: Vec<u32>,
}

impl Steer {
    fn new(r: &mut Rig) -> Self {
        let ttc = one_tir_ttc(r, 2);
        let l2 = cmd(r, fs::FT_CMD_LEN, |b| {
            fs::create_flow_table(b, fs::L2_LOG_SIZE, 1)
        })
        .obj();
        let mut groups = [0; 3];
        for ((s, e, m), g) in fs::L2_GROUPS.into_iter().zip(groups.iter_mut()) {
            *g = cmd(r, fs::CREATE_FG_IN_LEN, |b| {
                fs::create_flow_group_dmac(b, l2, s, e, &m)
            })
            .obj();
        }
        cmd(r, fs::FT_CMD_LEN, |b| fs::set_flow_table_root(b, l2));
        Self {
            l2,
            groups,
            ttc,
            set: Vec::new(),
        }
    }

    /// Replaces the L2 table's entries and the vport's lists and flags with `f`'s.
    fn program(&mut self, r: &mut Rig, f: &RxFilter<'_>) {
        for i in self.set.drain(..) {
            let l2 = self.l2;
            cmd(r, fs::FT_CMD_LEN, |b| fs::delete_fte(b, l2, i));
        }
        let rules = L2Rules::new(f);
        let (l2, ttc, [gf, gm, ga]) = (self.l2, self.ttc, self.groups);
        for (i, a) in rules.addrs().iter().enumerate() {
            cmd(r, fs::SET_FTE_IN_LEN, |b| {
                fs::set_fte_dmac_fwd_table(b, l2, gf, i as u32, a, ttc)
            });
            self.set.push(i as u32);
        }
        if rules.allmulti {
            cmd(r, fs::SET_FTE_IN_LEN, |b| {
                fs::set_fte_dmac_fwd_table(
                    b,
                    l2,
                    gm,
                    fs::L2_ALLMULTI_INDEX,
                    &[1, 0, 0, 0, 0, 0],
                    ttc,
                )
            });
            self.set.push(fs::L2_ALLMULTI_INDEX);
        }
        if rules.promisc {
            cmd(r, fs::SET_FTE_IN_LEN, |b| {
                fs::set_fte_dmac_fwd_table(b, l2, ga, fs::L2_PROMISC_INDEX, &[0; 6], ttc)
            });
            self.set.push(fs::L2_PROMISC_INDEX);
        }
        // The model's caps: log_max_current_uc_list 2, _mc_list 4.
        let lists = vport::VportLists::new(&f.own, f.broadcast, f.uc, f.mc, 2, 4);
        for (ty, list) in [
            (vport::LIST_TYPE_UC, lists.uc()),
            (vport::LIST_TYPE_MC, lists.mc()),
        ] {
            cmd(r, vport::modify_nic_vport_mac_list_len(list.len()), |b| {
                vport::modify_nic_vport_mac_list(b, ty, list)
            });
        }
        cmd(r, vport::MODIFY_NIC_VPORT_CONTEXT_IN_LEN, |b| {
            vport::modify_nic_vport_promisc(b, false, f.allmulti, f.promisc)
        });
    }
}

/// Whether a UDP frame to `dmac` is delivered, and what the model counted as kept away
/// (vport, flow tables).
fn probe(r: &mut Rig, dmac: [u8; 6]) -> (bool, u64, u64) {
    let (v0, s0) = {
        let c = r.h.tb.counters(1);
        (c.rx_vport_filtered, c.rx_steering_drops)
    };
    let mut f = ip4_frame(17, [10, 0, 0, 1], 9, [10, 0, 0, 2], 53);
    f[..6].copy_from_slice(&dmac);
    let got = r.send(&f).is_some();
    let c = r.h.tb.counters(1);
    (got, c.rx_vport_filtered - v0, c.rx_steering_drops - s0)
}

#[test]
fn frames_through_the_driver_programmed_filter() {
    let mut r = Rig::new();
    let mut s = Steer::new(&mut r);
    let f = RxFilter {
        own: PERM,
        broadcast: true,
        promisc: false,
        allmulti: false,
        uc: &[],
        uc_more: false,
        mc: &[GROUP],
        mc_more: false,
    };
    s.program(&mut r, &f);
    assert_eq!(probe(&mut r, PERM), (true, 0, 0), "own address");
    assert_eq!(probe(&mut r, [0xff; 6]), (true, 0, 0), "broadcast");
    assert_eq!(probe(&mut r, GROUP), (true, 0, 0), "a group joined");
    assert_eq!(
        probe(&mut r, OTHER),
        (false, 1, 0),
        "a group not joined: the vport"
    );
    assert_eq!(
        probe(&mut r, FOREIGN),
        (false, 1, 0),
        "a foreign address: the vport"
    );
    s.program(&mut r, &RxFilter { promisc: true, ..f });
    assert_eq!(probe(&mut r, FOREIGN), (true, 0, 0), "promiscuous");
    assert_eq!(
        probe(&mut r, OTHER),
        (true, 0, 0),
        "promiscuous: multicast too"
    );
    s.program(
        &mut r,
        &RxFilter {
            allmulti: true,
            ..f
        },
    );
    assert_eq!(probe(&mut r, OTHER), (true, 0, 0), "all-multicast");
    assert_eq!(
        probe(&mut r, FOREIGN),
        (false, 1, 0),
        "all-multicast: not unicast"
    );
    // A unicast address of the stack's (a macvlan's): the vport's UC list and the L2 table.
    s.program(
        &mut r,
        &RxFilter {
            uc: &[FOREIGN],
            ..f
        },
    );
    assert_eq!(probe(&mut r, FOREIGN), (true, 0, 0), "on the UC list");
    // A new address: it receives; the old, the function's permanent one, passes the vport
    // (a VF's vport always takes its own) and the L2 table drops it.
    s.program(&mut r, &RxFilter { own: NEW, ..f });
    assert_eq!(probe(&mut r, NEW), (true, 0, 0), "the new address");
    assert_eq!(
        probe(&mut r, PERM),
        (false, 0, 1),
        "the old address: the L2 table"
    );
    // Without the L2 table's entries the same vport lists pass the old address: the table
    // is what keeps it away.
    for i in s.set.drain(..) {
        let l2 = s.l2;
        cmd(&mut r, fs::FT_CMD_LEN, |b| fs::delete_fte(b, l2, i));
    }
    let (l2, ttc, ga) = (s.l2, s.ttc, s.groups[2]);
    cmd(&mut r, fs::SET_FTE_IN_LEN, |b| {
        fs::set_fte_dmac_fwd_table(b, l2, ga, fs::L2_PROMISC_INDEX, &[0; 6], ttc)
    });
    assert_eq!(probe(&mut r, PERM), (true, 0, 0), "no L2 filtering");
}
