//! rsnic's ConnectX VLAN filtering and flow table capabilities, driver side against the
//! model: the commands `hwif::mlx5::cmd::{hca, fs}` build and parse (checked bit by bit
//! against the 6.12 mlx5_ifc.h offsets, written here by hand: `flow_table_prop_layout`,
//! `fte_match_set_lyr_2_4`'s `first_vid`, `cvlan_tag`, `svlan_tag`), the capability checks
//! of bring-up (`mlx5_eth_supported`'s `max_ft_level`), and frames through the chain the
//! driver builds (rss.rs: the VLAN table at level 1 on to the L2 table at 2 on to the
//! traffic-type table at 3) with the entries rx_mode.rs sets: what is delivered, and what
//! the model counts as dropped by the flow tables (`rx_steering_drops`).

mod cx_fake_driver;
mod rss_rig;
mod sim_util;

use rsnic_core::hwif::mlx5::cmd::fs::{self, Tt, VlanRule};
use rsnic_core::hwif::mlx5::cmd::hca::{self, DevCaps};
use rsnic_core::hwif::mlx5::cmd::{vport, CmdErrorKind, FormatError};
use rss_rig::*;

/// Port 1's permanent MAC in the test bed.
const PERM: [u8; 6] = [0x02, 0, 0, 0, 0, 2];

#[test]
fn flow_table_caps_at_the_headers_offsets() {
    // QUERY_HCA_CAP of type 7, current: op_mod (7 << 1) | 1.
    let mut q = vec![0u8; 16];
    hca::query_hca_cap(&mut q, hca::CAP_FLOW_TABLE).unwrap();
    assert_eq!(bits(&q, 0, 16), 0x100, "QUERY_HCA_CAP");
    assert_eq!(bits(&q, 0x30, 16), 0xf, "op_mod");
    // The output: the capability at byte 0x10; flow_table_properties_nic_receive at its
    // bit 0x200 (byte 0x50 of the output): ft_support bit 0, log_max_ft_size bits 0x22..
    // (6), max_ft_level 0x38 (8), log_max_ft_num 0x78 (8), log_max_flow 0xb8 (8).
    let mut out = vec![0u8; hca::QUERY_HCA_CAP_OUT_LEN];
    out[0x50] = 0x80;
    out[0x54] = 16;
    out[0x57] = 63;
    out[0x5f] = 6;
    out[0x67] = 6;
    let mut caps = DevCaps::default();
    hca::parse_flow_table_caps(&out, &mut caps).unwrap();
    assert_eq!(
        (
            caps.ft_support,
            caps.log_max_ft_size,
            caps.max_ft_level,
            caps.log_max_ft_num,
            caps.log_max_flow
        ),
        (true, 16, 63, 6, 6)
    );
    assert_eq!(caps.max_flows(), 64);
    assert_eq!(caps.check_flow_table(fs::MAX_LOG_SIZE, fs::TABLES), Ok(()));
    assert!(hca::parse_flow_table_caps(&out[..0x100], &mut caps).is_err());
    // mlx5_eth_supported: max_ft_level below 3 fails, named; so does no ft_support, and a
    // device whose tables are too small or too few for rsnic's.
    let c = DevCaps {
        max_ft_level: 2,
        ..caps
    };
    assert_eq!(
        c.check_flow_table(fs::MAX_LOG_SIZE, fs::TABLES),
        Err(CmdErrorKind::CapTooSmall {
            cap: "max_ft_level",
            have: 2,
            need: 3
        })
    );
    let c = DevCaps {
        ft_support: false,
        ..caps
    };
    assert_eq!(
        c.check_flow_table(fs::MAX_LOG_SIZE, fs::TABLES),
        Err(CmdErrorKind::MissingCap("ft_support"))
    );
    let c = DevCaps {
        log_max_ft_size: 4,
        ..caps
    };
    assert_eq!(
        c.check_flow_table(fs::MAX_LOG_SIZE, fs::TABLES),
        Err(CmdErrorKind::CapTooSmall {
            cap: "log_max_ft_size",
            have: 4,
            need: 5
        })
    );
    let c = DevCaps {
        log_max_ft_num: 1,
        ..caps
    };
    assert_eq!(
        c.check_flow_table(fs::MAX_LOG_SIZE, fs::TABLES),
        Err(CmdErrorKind::CapTooSmall {
            cap: "log_max_ft_num",
            have: 1,
            need: 2
        })
    );
}

#[test]
fn vlan_commands_at_the_headers_offsets() {
    // The C-VID group: cvlan_tag (bit 0x90) and first_vid (0x74, 12 bits) of the outer
    // headers, whose criteria start at bit 0x200 of create_flow_group_in.
    let mut g = vec![0u8; fs::CREATE_FG_IN_LEN];
    fs::create_flow_group_vlan(&mut g, 7, 0, 27, fs::VlanMatch::CtagVid).unwrap();
    assert_eq!(bits(&g, 0, 16), 0x933, "CREATE_FLOW_GROUP");
    assert_eq!(bits(&g, 0xa8, 24), 7);
    assert_eq!((bits(&g, 0xe0, 32), bits(&g, 0x120, 32)), (0, 27));
    assert_eq!(bits(&g, 0x1f8, 8), 1, "outer headers");
    assert_eq!(bits(&g, 0x200 + 0x74, 12), 0xfff, "first_vid criteria");
    assert_eq!(bits(&g, 0x200 + 0x90, 1), 1, "cvlan_tag criteria");
    assert_eq!(bits(&g, 0x200 + 0x91, 1), 0, "not svlan_tag");
    let ones: u32 = g[0x40..0x40 + 0x200].iter().map(|b| b.count_ones()).sum();
    assert_eq!(ones, 13, "nothing else in the criteria");
    fs::create_flow_group_vlan(&mut g, 7, 28, 29, fs::VlanMatch::Ctag).unwrap();
    assert_eq!(
        (bits(&g, 0x200 + 0x74, 12), bits(&g, 0x200 + 0x90, 1)),
        (0, 1)
    );
    fs::create_flow_group_vlan(&mut g, 7, 30, 30, fs::VlanMatch::Stag).unwrap();
    assert_eq!(
        (bits(&g, 0x200 + 0x90, 1), bits(&g, 0x200 + 0x91, 1)),
        (0, 1)
    );
    // Entries: the match value at bit 0x400 (flow_context at 0x200, its match_value at
    // 0x200); one destination of type FLOW_TABLE (0x1) at bit 0x1a00.
    let mut e = vec![0u8; fs::SET_FTE_IN_LEN];
    fs::set_fte_vlan(&mut e, 7, 3, VlanRule::Vid(10, 4), 9).unwrap();
    assert_eq!(bits(&e, 0, 16), 0x936, "SET_FLOW_TABLE_ENTRY");
    assert_eq!(bits(&e, 0x100, 32), 4, "flow_index: the slot");
    assert_eq!(bits(&e, 0x220, 32), 3, "group_id");
    assert_eq!(bits(&e, 0x270, 16), 4, "FWD_DEST");
    assert_eq!(bits(&e, 0x288, 24), 1, "one destination");
    assert_eq!(bits(&e, 0x400 + 0x74, 12), 10, "first_vid");
    assert_eq!(bits(&e, 0x400 + 0x90, 1), 1, "cvlan_tag");
    assert_eq!(bits(&e, 0x1a00, 8), 1, "destination type FLOW_TABLE");
    assert_eq!(bits(&e, 0x1a08, 24), 9, "destination table (the L2 table)");
    fs::set_fte_vlan(&mut e, 7, 3, VlanRule::Untagged, 9).unwrap();
    assert_eq!(bits(&e, 0x100, 32), u64::from(fs::VLAN_UNTAGGED_INDEX));
    assert_eq!(bits(&e, 0x400 + 0x90, 1), 0, "untagged: cvlan_tag 0");
    fs::set_fte_vlan(&mut e, 7, 3, VlanRule::AnyCtag, 9).unwrap();
    assert_eq!(bits(&e, 0x100, 32), u64::from(fs::VLAN_ANY_CTAG_INDEX));
    assert_eq!(
        (bits(&e, 0x400 + 0x90, 1), bits(&e, 0x400 + 0x74, 12)),
        (1, 0)
    );
    fs::set_fte_vlan(&mut e, 7, 3, VlanRule::AnyStag, 9).unwrap();
    assert_eq!(bits(&e, 0x100, 32), u64::from(fs::VLAN_ANY_STAG_INDEX));
    assert_eq!(
        (bits(&e, 0x400 + 0x90, 1), bits(&e, 0x400 + 0x91, 1)),
        (0, 1)
    );
    // A VID over 12 bits or a slot beyond the C-VID group is refused.
    assert_eq!(
        fs::set_fte_vlan(&mut e, 7, 3, VlanRule::Vid(4096, 0), 9),
        Err(FormatError::BadParam)
    );
    assert_eq!(
        fs::set_fte_vlan(&mut e, 7, 3, VlanRule::Vid(1, fs::VLAN_VIDS as u32), 9),
        Err(FormatError::BadParam)
    );
    // The any-C-VID entry: filtering off or promiscuous.
    assert!(!fs::want_any_ctag(true, false));
    assert!(fs::want_any_ctag(false, false));
    assert!(fs::want_any_ctag(true, true));
}

/// The driver's chain on port 1 (rss.rs): TTC (level 3) to one TIR, L2 (level 2) with the
/// port's address and broadcast, VLAN (level 1) as the root with its three groups.
struct Chain {
    vlan: u32,
    groups: [u32; 3],
    l2: u32,
}

impl Chain {
    fn new(r: &mut Rig) -> Self {
        let ttc = one_tir_ttc(r, 3);
        let l2 = cmd(r, fs::FT_CMD_LEN, |b| {
            fs::create_flow_table(b, fs::L2_LOG_SIZE, 2)
        })
        .obj();
        let (s, e, m) = fs::L2_GROUPS[0];
        let gf = cmd(r, fs::CREATE_FG_IN_LEN, |b| {
            fs::create_flow_group_dmac(b, l2, s, e, &m)
        })
        .obj();
        for (i, a) in [PERM, [0xff; 6]].iter().enumerate() {
            cmd(r, fs::SET_FTE_IN_LEN, |b| {
                fs::set_fte_dmac_fwd_table(b, l2, gf, i as u32, a, ttc)
            });
        }
        let vlan = cmd(r, fs::FT_CMD_LEN, |b| {
            fs::create_flow_table(b, fs::VLAN_LOG_SIZE, 1)
        })
        .obj();
        let mut groups = [0; 3];
        for ((s, e, m), g) in fs::VLAN_GROUPS.into_iter().zip(groups.iter_mut()) {
            *g = cmd(r, fs::CREATE_FG_IN_LEN, |b| {
                fs::create_flow_group_vlan(b, vlan, s, e, m)
            })
            .obj();
        }
        cmd(r, fs::FT_CMD_LEN, |b| fs::set_flow_table_root(b, vlan));
        Self { vlan, groups, l2 }
    }

    fn set(&self, r: &mut Rig, rule: VlanRule) {
        let (t, g, l2) = (self.vlan, self.groups[rule.group()], self.l2);
        // `cmd` asserts that the device took it.
        cmd(r, fs::SET_FTE_IN_LEN, |b| {
            fs::set_fte_vlan(b, t, g, rule, l2)
        });
    }

    fn del(&self, r: &mut Rig, rule: VlanRule) {
        let t = self.vlan;
        cmd(r, fs::FT_CMD_LEN, |b| fs::delete_fte(b, t, rule.index()));
    }
}

/// A UDP frame to the port, with a tag of `tpid` and `vid` when given.
fn frame(tag: Option<(u16, u16)>) -> Vec<u8> {
    let mut f = ip4_frame(17, [10, 0, 0, 1], 9, [10, 0, 0, 2], 53);
    if let Some((tpid, vid)) = tag {
        let t = [tpid.to_be_bytes(), vid.to_be_bytes()].concat();
        f.splice(12..12, t);
    }
    f
}

/// Whether the frame is delivered, and how many frames the flow tables dropped.
fn probe(r: &mut Rig, tag: Option<(u16, u16)>) -> (bool, u64) {
    let s0 = r.h.tb.counters(1).rx_steering_drops;
    let got = r.send(&frame(tag)).is_some();
    (got, r.h.tb.counters(1).rx_steering_drops - s0)
}

#[test]
fn frames_through_the_driver_programmed_vlan_table() {
    let mut r = Rig::new();
    let c = Chain::new(&mut r);
    // What rx_mode.rs sets at open with filtering on and VLAN 10 listed (and VID 0, which
    // the 8021q module lists at up).
    c.set(&mut r, VlanRule::Untagged);
    c.set(&mut r, VlanRule::AnyStag);
    c.set(&mut r, VlanRule::Vid(0, 0));
    c.set(&mut r, VlanRule::Vid(10, 1));
    assert_eq!(probe(&mut r, None), (true, 0), "untagged");
    assert_eq!(probe(&mut r, Some((0x8100, 10))), (true, 0), "VLAN 10");
    assert_eq!(
        probe(&mut r, Some((0x8100, 0x2000 | 10))),
        (true, 0),
        "VLAN 10 with a priority"
    );
    assert_eq!(probe(&mut r, Some((0x8100, 0))), (true, 0), "priority tag");
    assert_eq!(
        probe(&mut r, Some((0x8100, 20))),
        (false, 1),
        "VLAN 20: not listed, dropped by the VLAN table"
    );
    assert_eq!(probe(&mut r, Some((0x88a8, 20))), (true, 0), "S-tagged");
    // rx-vlan-filter off (or promiscuous): the any-C-VID entry.
    c.set(&mut r, VlanRule::AnyCtag);
    assert_eq!(probe(&mut r, Some((0x8100, 20))), (true, 0), "filter off");
    assert_eq!(probe(&mut r, Some((0x8100, 10))), (true, 0));
    c.del(&mut r, VlanRule::AnyCtag);
    assert_eq!(probe(&mut r, Some((0x8100, 20))), (false, 1), "filter on");
    // VLAN 10 killed: its frames dropped; VLAN 20 added in the freed slot.
    c.del(&mut r, VlanRule::Vid(10, 1));
    assert_eq!(probe(&mut r, Some((0x8100, 10))), (false, 1), "10 killed");
    c.set(&mut r, VlanRule::Vid(20, 1));
    assert_eq!(probe(&mut r, Some((0x8100, 20))), (true, 0), "20 added");
    assert_eq!(probe(&mut r, None), (true, 0), "untagged still");
    // An entry at an index outside its group is refused.
    let (t, g, l2) = (c.vlan, c.groups[0], c.l2);
    let mut b = vec![0u8; fs::SET_FTE_IN_LEN];
    let n = fs::set_fte_vlan(&mut b, t, g, VlanRule::Untagged, l2).unwrap();
    assert_ne!(
        r.h.exec(&b[..n], 16).status(),
        0,
        "the untagged index is not in the C-VID group"
    );
}

#[test]
fn the_vlan_table_fits_the_models_entries() {
    // The model's caps (sim/mlx5/cmd/hca.rs type 7): what rsnic needs fits them.
    let mut r = Rig::new();
    let mut q = vec![0u8; 16];
    hca::query_hca_cap(&mut q, hca::CAP_FLOW_TABLE).unwrap();
    let out = r.h.exec(&q, hca::QUERY_HCA_CAP_OUT_LEN).ok();
    let mut caps = DevCaps::default();
    hca::parse_flow_table_caps(&out.b, &mut caps).unwrap();
    assert_eq!(caps.check_flow_table(fs::MAX_LOG_SIZE, fs::TABLES), Ok(()));
    assert!(caps.max_ft_level >= hca::MIN_FT_LEVEL);
    // Every VLAN table entry at once, with the traffic-type table's 7 and the L2 table's
    // own and broadcast, within the device's entries.
    let entries = fs::VLAN_VIDS + 3 + Tt::ALL.len() + 2;
    assert!(entries <= caps.max_flows() as usize, "{entries} entries");
}

#[test]
fn the_vport_vlan_list_as_mlx5e_writes_it() {
    // MODIFY_NIC_VPORT_CONTEXT at mlx5_ifc.h's offsets: field_select.addresses_list (bit
    // 0x7d of the input), the context at bit 0x800: allowed_list_type 2 (bit 0x785),
    // allowed_list_size (bit 0x794), then one 8-byte vlan_layout per VID from byte 0x200
    // with the VID in the low 12 bits of its first word.
    let mut b = vec![0u8; vport::modify_nic_vport_mac_list_len(2)];
    let n = vport::modify_nic_vport_vlans(&mut b, &[10, 4095]).unwrap();
    assert_eq!(n, b.len());
    assert_eq!(bits(&b, 0, 16), 0x755, "MODIFY_NIC_VPORT_CONTEXT");
    assert_eq!(bits(&b, 0x7d, 1), 1);
    assert_eq!(bits(&b, 0x800 + 0x785, 3), 2);
    assert_eq!(bits(&b, 0x800 + 0x794, 12), 2);
    assert_eq!(
        &b[0x200..0x210],
        &[0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0x0f, 0xff, 0, 0, 0, 0]
    );
    assert_eq!(
        vport::modify_nic_vport_vlans(&mut b, &[4096]),
        Err(FormatError::BadParam)
    );
    // The model records it and filters nothing by it (a VF's VLAN list is for the
    // e-switch manager, which in 6.12 reads none): VID 20, not listed, still reaches the
    // flow tables, whose VLAN table decides.
    let mut r = Rig::new();
    let c = Chain::new(&mut r);
    let len = vport::modify_nic_vport_mac_list_len(1);
    assert_eq!(
        cmd(&mut r, len, |b| vport::modify_nic_vport_vlans(b, &[10])).status(),
        0
    );
    assert_eq!(r.h.tb.vport_vlans(1), vec![10]);
    c.set(&mut r, VlanRule::Untagged);
    c.set(&mut r, VlanRule::AnyCtag);
    assert_eq!(
        probe(&mut r, Some((0x8100, 20))),
        (true, 0),
        "not listed, delivered"
    );
    assert_eq!(r.h.tb.counters(1).rx_vport_filtered, 0);
}
