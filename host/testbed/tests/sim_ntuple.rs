//! ethtool steering rules and additional RSS contexts on the simulated ConnectX, through the
//! driver's own command builders (`hwif::mlx5::cmd::{fs, res}`) as family/mlx5/ctrl.rs sends
//! them: a rule table at level 0 whose misses go on to the traffic-type table at level 1,
//! entries matching addresses and ports that forward to a channel's direct TIR or to a
//! context's TIR (its own RQT), and what a frame does when no rule matches. Also the
//! refusals of the flow-steering subset the rules brought in (hand-built inputs where the
//! driver's builders cannot express the mistake).

mod cx_fake_driver;
mod rss_rig;
mod sim_util;

use cx_fake_driver::*;
use rsnic_core::hwif::mlx5::cmd::fs::{self, Tt, TupleMatch};
use rsnic_core::hwif::mlx5::cmd::res;
use rsnic_core::sim::mlx5::cmd::synd;
use rss_rig::*;

const A: [u8; 4] = [10, 0, 0, 1];
const B: [u8; 4] = [10, 0, 0, 2];
const A6: [u8; 16] = [0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
const B6: [u8; 16] = [0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

fn v4(a: [u8; 4]) -> [u8; 16] {
    let mut o = [0u8; 16];
    o[..4].copy_from_slice(&a);
    o
}

/// The port as the driver sets it up with rules: the default RSS (an RQT of 256 entries
/// over the four RQs, a TIR per traffic type, the traffic-type table at level 1), a direct
/// TIR per RQ, and the rule table (level 0, misses to the traffic-type table) as the root.
struct Steer {
    r: Rig,
    rqns: Vec<u32>,
    tt_ft: u32,
    tt_groups: Vec<u32>,
    rule_ft: u32,
    direct: Vec<u32>,
}

impl Steer {
    fn new() -> Self {
        let mut r = Rig::new();
        let rqns = r.rqns();
        let (_rqtn, _tirs, tt_ft, groups) = driver_rss(&mut r, 1);
        let td = r.td;
        let direct = rqns
            .iter()
            .map(|&rq| {
                let o =
                    r.h.exec(&build(&|b| res::create_tir_direct(b, td, rq)), 16)
                        .ok();
                res::parse_create_tir(&o.b).unwrap()
            })
            .collect();
        let o =
            r.h.exec(&build(&|b| fs::create_flow_table_miss(b, 5, 0, tt_ft)), 16)
                .ok();
        let rule_ft = fs::parse_create_flow_table(&o.b).unwrap();
        r.h.exec(&build(&|b| fs::set_flow_table_root(b, rule_ft)), 16)
            .ok();
        Self {
            r,
            rqns,
            tt_ft,
            tt_groups: groups,
            rule_ft,
            direct,
        }
    }

    /// A rule at `loc` as the driver inserts one: a group of that one index masking what
    /// `m` gives, the entry forwarding to `tirn`. Returns the group.
    fn rule(&mut self, loc: u32, m: &TupleMatch, tirn: u32) -> u32 {
        let ft = self.rule_ft;
        let o = self
            .r
            .h
            .exec(
                &build(&|b| fs::create_flow_group_tuple(b, ft, loc, loc, m)),
                16,
            )
            .ok();
        let g = fs::parse_create_flow_group(&o.b).unwrap();
        self.r
            .h
            .exec(&build(&|b| fs::set_fte_tuple(b, ft, g, loc, m, tirn)), 16)
            .ok();
        g
    }

    /// [`Steer::rule`] forwarding to RQ `q` (its direct TIR). Returns the group.
    fn rule_to_rq(&mut self, loc: u32, m: &TupleMatch, q: usize) -> u32 {
        self.rule(loc, m, self.direct[q])
    }

    /// Deletes the rule at `loc` (its entry, then its group `g`).
    fn unrule(&mut self, loc: u32, g: u32) {
        let ft = self.rule_ft;
        self.r
            .h
            .exec(&build(&|b| fs::delete_fte(b, ft, loc)), 16)
            .ok();
        self.r
            .h
            .exec(&build(&|b| fs::destroy_flow_group(b, ft, g)), 16)
            .ok();
    }

    fn rq(&mut self, frame: &[u8]) -> Option<usize> {
        self.r.send(frame).map(|x| x.0)
    }
}

fn udp4(sp: u16, dp: u16) -> Vec<u8> {
    ip4_frame(17, A, sp, B, dp)
}

/// Where the flows of source ports 1000..1064 land (to port `hwif`): a count per RQ.
fn spread_of(s: &mut Steer, proto: u8, dp: u16) -> [u32; 4] {
    let mut n = [0u32; 4];
    for sp in 1000..1064u16 {
        let q = s.rq(&ip4_frame(proto, A, sp, B, dp)).expect("received");
        n[q] += 1;
    }
    n
}

/// How many RQs the flows of [`spread_of`] reach.
fn rqs_reached(s: &mut Steer, proto: u8, dp: u16) -> usize {
    spread_of(s, proto, dp).iter().filter(|&&n| n > 0).count()
}

#[test]
fn a_rule_moves_its_flow_to_its_queue_and_others_fall_through() {
    let mut s = Steer::new();
    // No rule yet: the traffic-type table spreads UDP over all four RQs.
    let before = spread_of(&mut s, 17, 5001);
    assert!(before.iter().all(|&n| n > 0), "spread over all: {before:?}");
    // `-N udp4 dst-port 5001 action 2`.
    let m = TupleMatch {
        udp: true,
        dport: Some(5001),
        ..Default::default()
    };
    let g = s.rule_to_rq(0, &m, 2);
    assert_eq!(spread_of(&mut s, 17, 5001), [0, 0, 64, 0]);
    // The CQE of a direct TIR carries no hash.
    assert_eq!(s.r.send(&udp4(7, 5001)), Some((2, 0, 0)));
    // Another port, TCP to the same port, IPv6 UDP to it, not IP: not the rule's.
    assert_eq!(spread_of(&mut s, 17, 5002), spread_of(&mut s, 17, 5002));
    assert!(rqs_reached(&mut s, 17, 5002) > 1);
    assert!(rqs_reached(&mut s, 6, 5001) > 1);
    let six: Vec<usize> = (0..32u16)
        .filter_map(|sp| s.rq(&udp6_frame(A6, 1000 + sp, B6, 5001)))
        .collect();
    assert!(six.iter().any(|&q| q != 2), "IPv6 is not the rule's");
    assert!(s.rq(&arp_frame()).is_some(), "not IP falls through too");
    // Deleting the rule restores the spread, flow by flow.
    s.unrule(0, g);
    assert_eq!(spread_of(&mut s, 17, 5001), before);
}

#[test]
fn rules_match_every_field_given_and_the_lowest_index_wins() {
    let mut s = Steer::new();
    // loc 3: tcp4 from A:1234 to B:80 → RQ 3; loc 7: tcp4 to port 80 → RQ 1.
    let full = TupleMatch {
        src: Some(v4(A)),
        dst: Some(v4(B)),
        sport: Some(1234),
        dport: Some(80),
        ..Default::default()
    };
    s.rule_to_rq(3, &full, 3);
    let port80 = TupleMatch {
        dport: Some(80),
        ..Default::default()
    };
    let g7 = s.rule_to_rq(7, &port80, 1);
    assert_eq!(s.rq(&ip4_frame(6, A, 1234, B, 80)), Some(3));
    assert_eq!(s.rq(&ip4_frame(6, A, 1235, B, 80)), Some(1));
    assert_eq!(s.rq(&ip4_frame(6, B, 1234, B, 80)), Some(1));
    assert_eq!(s.rq(&ip4_frame(6, A, 1234, A, 80)), Some(1));
    // The same rule at a lower index than the full one takes its flow too.
    s.unrule(7, g7);
    s.rule_to_rq(1, &port80, 0);
    assert_eq!(s.rq(&ip4_frame(6, A, 1234, B, 80)), Some(0));
    // An IPv6 rule on the source address.
    let six = TupleMatch {
        ipv6: true,
        udp: true,
        src: Some(A6),
        ..Default::default()
    };
    s.rule_to_rq(9, &six, 3);
    for sp in 0..16 {
        assert_eq!(s.rq(&udp6_frame(A6, 2000 + sp, B6, 9)), Some(3));
    }
    assert!((0..16)
        .filter_map(|sp| s.rq(&udp6_frame(B6, 2000 + sp, A6, 9)))
        .any(|q| q != 3));
}

#[test]
fn a_rule_to_a_context_spreads_over_its_table() {
    let mut s = Steer::new();
    // A context over RQs 2 and 3 (`context new start 2 equal 2`): its RQT, the TIR of
    // the rule's traffic type.
    let ctx: Vec<u32> = (0..256).map(|i| s.rqns[2 + i % 2]).collect();
    let rqtn = driver_rqt(&mut s.r, &ctx);
    let tir = rss_tir(&mut s.r, rqtn, Tt::Tcp4);
    let m = TupleMatch {
        dport: Some(8080),
        ..Default::default()
    };
    let g = s.rule(0, &m, tir);
    let n = spread_of(&mut s, 6, 8080);
    assert_eq!((n[0], n[1]), (0, 0), "only the context's queues: {n:?}");
    assert!(n[2] > 0 && n[3] > 0, "both of them: {n:?}");
    // The context's table changes in place (MODIFY_RQT): its flows follow.
    let only3 = vec![s.rqns[3]; 256];
    s.r.h
        .exec(&build(&|b| res::modify_rqt(b, rqtn, 256, &only3)), 16)
        .ok();
    assert_eq!(spread_of(&mut s, 6, 8080), [0, 0, 0, 64]);
    // Deleting the context needs its rule gone first (the TIR is in use, then the RQT).
    expect(
        s.r.h.exec(&build(&|b| res::destroy_tir(b, tir)), 16),
        ST_BUSY,
        synd::TIR_IN_USE,
    );
    s.unrule(0, g);
    s.r.h.exec(&build(&|b| res::destroy_tir(b, tir)), 16).ok();
    s.r.h.exec(&build(&|b| res::destroy_rqt(b, rqtn)), 16).ok();
    let back = spread_of(&mut s, 6, 8080);
    assert!(back[0] > 0 && back[1] > 0, "main context again: {back:?}");
}

#[test]
fn rule_tables_refuse_what_the_model_does_not_do() {
    let mut s = Steer::new();
    let (rule_ft, tt_ft) = (s.rule_ft, s.tt_ft);
    // A table with groups can't go.
    expect(
        s.r.h
            .exec(&build(&|b| fs::destroy_flow_table(b, tt_ft)), 16),
        ST_BUSY,
        synd::FT_IN_USE,
    );
    // A miss table at the same or a lower level.
    expect(
        s.r.h
            .exec(&build(&|b| fs::create_flow_table_miss(b, 3, 1, tt_ft)), 16),
        ST_BAD_PARAM,
        synd::FT_PARAM,
    );
    expect(
        s.r.h.exec(
            &build(&|b| fs::create_flow_table_miss(b, 3, 2, rule_ft)),
            16,
        ),
        ST_BAD_PARAM,
        synd::FT_PARAM,
    );
    // Any mask of the outer headers is a group's (half a port, both TCP and UDP ports, a
    // part of an address); l4_type (byte 0x18) is not one the model builds.
    let good = build(&|b| {
        fs::create_flow_group_tuple(
            b,
            rule_ft,
            0,
            0,
            &TupleMatch {
                dport: Some(1),
                ..Default::default()
            },
        )
    });
    let mut l4_type = good.clone();
    put(&mut l4_type, 0x200 + 0xc0, 2, 1);
    expect(s.r.h.exec(&l4_type, 16), ST_BAD_PARAM, synd::FG_CRITERIA);
    // The good group takes index 0; a second group there overlaps.
    s.r.h.exec(&good, 16).ok();
    expect(s.r.h.exec(&good, 16), ST_BAD_PARAM, synd::FG_RANGE);
    // An entry to a TIR of no object.
    let g = 0xa000 + 63; // not a group of the table
    expect(
        s.r.h.exec(
            &build(&|b| fs::set_fte_tuple(b, rule_ft, g, 0, &TupleMatch::default(), 0x6000)),
            16,
        ),
        ST_BAD_RESOURCE,
        synd::BAD_FG,
    );
}

/// The driver's teardown (family/mlx5/ctrl.rs `destroy_rss`) with a rule and a context in
/// place: every command accepted in that order (the root first, the rule table before the
/// table its misses go to, entries before the TIRs they name, TIRs before their RQTs).
#[test]
fn the_drivers_teardown_order_is_accepted() {
    let mut s = Steer::new();
    let ctx: Vec<u32> = vec![s.rqns[1]; 256];
    let rqtn = driver_rqt(&mut s.r, &ctx);
    let ctx_tir = rss_tir(&mut s.r, rqtn, Tt::Udp6);
    let six = TupleMatch {
        ipv6: true,
        udp: true,
        dport: Some(53),
        ..Default::default()
    };
    let g_ctx = s.rule(4, &six, ctx_tir);
    let four = TupleMatch {
        udp: true,
        sport: Some(53),
        ..Default::default()
    };
    let g_q = s.rule_to_rq(20, &four, 3);
    assert_eq!(s.rq(&udp6_frame(A6, 9, B6, 53)), Some(1));
    assert_eq!(s.rq(&udp4(53, 9)), Some(3));
    let (rule_ft, tt_ft) = (s.rule_ft, s.tt_ft);
    let h = &mut s.r.h;
    h.exec(&build(&|b| fs::disconnect_flow_table_root(b)), 16)
        .ok();
    for (loc, g) in [(4, g_ctx), (20, g_q)] {
        h.exec(&build(&|b| fs::delete_fte(b, rule_ft, loc)), 16)
            .ok();
        h.exec(&build(&|b| fs::destroy_flow_group(b, rule_ft, g)), 16)
            .ok();
    }
    h.exec(&build(&|b| fs::destroy_flow_table(b, rule_ft)), 16)
        .ok();
    for tt in Tt::ALL {
        h.exec(&build(&|b| fs::delete_fte(b, tt_ft, tt.flow_index())), 16)
            .ok();
    }
    for &g in &s.tt_groups {
        h.exec(&build(&|b| fs::destroy_flow_group(b, tt_ft, g)), 16)
            .ok();
    }
    h.exec(&build(&|b| fs::destroy_flow_table(b, tt_ft)), 16)
        .ok();
    h.exec(&build(&|b| res::destroy_tir(b, ctx_tir)), 16).ok();
    h.exec(&build(&|b| res::destroy_rqt(b, rqtn)), 16).ok();
    for &t in &s.direct {
        h.exec(&build(&|b| res::destroy_tir(b, t)), 16).ok();
    }
    // The rule's flow is no longer the rule's: without a root table the first indirect
    // TIR (the main RSS) takes every frame again.
    assert_ne!(s.rq(&udp4(53, 9)), Some(3));
}
