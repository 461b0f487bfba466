// SPDX-License-Identifier: GPL-2.0

//! RSS and steering of a ConnectX port by command: the RQT and the TIRs of each traffic type,
//! the traffic-type flow table, the channels' direct TIRs, additional RSS contexts and the
//! ntuple rules' flow table, created at the channels' open and changed in place afterwards.
//!
//! Upstream counterpart: `en/rss.c`, `en/rx_res.c`, `en/rqt.c`, `en/tir.c`,
//! `lib/fs_ttc.c`, `en_fs_ethtool.c`.

use crate::family::mlx5::ctrl::rx_mode::{VlanTable, L2};
use crate::family::mlx5::ctrl::Func;
use crate::family::params::MAX_CHANNELS;
use crate::hwif::mlx5::cmd::fs::Tt;
use crate::hwif::mlx5::cmd::{fs, res, FormatError};
use crate::kernel_ext::sync::with_bh;
use crate::ntuple::{Dest, Rule, MAX_RULES};
use crate::rss::{Flow, RssChange, RssSpec, MAX_CONTEXTS};
use kernel::prelude::*;

/// The receive side's objects, as mlx5e's `mlx5e_rss`, its TTC table and its ethtool
/// steering: the RQT, an indirect TIR per hashed traffic type ([`Tt::HASHED`]), the
/// traffic-type flow table that sends each type to its TIR (level 3), a direct TIR per
/// channel over the channel's direct RQT (one entry, the channel's RQ: mlx5e's
/// `rx_res->channels[ix].direct_rqt`, which `mlx5e_rx_res_xsk_update` points at the XSK RQ
/// and back), the L2 table ahead of it (level 2, [`L2`]), the VLAN table ahead of that
/// (level 1, [`VlanTable`]), the rule table ahead of that (level 0, the root; misses go on
/// to the VLAN table) with the ntuple rules, and the
/// additional RSS contexts. Only what exists is recorded: a creation that fails half way
/// destroys exactly that.
pub(super) struct Rss {
    rqtn: u32,
    /// The TIRs, in [`Tt::HASHED`] order.
    tirs: [Option<u32>; 6],
    /// The traffic-type table and its groups ([`fs::TTC_GROUPS`] order).
    pub(super) ft: Option<u32>,
    groups: [Option<u32>; 3],
    /// Entries set, one bit per flow index.
    entries: u8,
    /// The rule table is the NIC RX root.
    root: bool,
    /// Direct TIRs, by channel (`action Q` rules forward to them; mlx5e's direct TIRs).
    direct: [Option<u32>; MAX_CHANNELS],
    /// The direct TIRs' RQTs, by channel, with the RQ each names.
    direct_rqt: [Option<(u32, u32)>; MAX_CHANNELS],
    /// The rule table.
    rule_ft: Option<u32>,
    /// Each location's rule: its group (one index of the rule table, masking what the rule
    /// gives) and whether its entry is set.
    rules: [Option<(u32, bool)>; MAX_RULES],
    /// Additional RSS contexts, by id - 1.
    ctxs: [Option<Ctx>; MAX_CONTEXTS],
    /// The L2 table.
    pub(super) l2: L2,
    /// The VLAN table.
    pub(super) vlan: VlanTable,
}

/// An additional RSS context's objects (mlx5e's `mlx5e_rss` of a context): its RQT and a
/// TIR per hashed traffic type, which rules of `context C` forward to.
#[derive(Clone, Copy)]
struct Ctx {
    rqtn: u32,
    /// In [`Tt::HASHED`] order.
    tirs: [Option<u32>; 6],
}

/// log2 of the rule table's flow indices ([`MAX_RULES`]).
const RULE_LOG_SIZE: u8 = 5;

/// Level of the rule table; the VLAN table's is one more, the L2 table's two more, the
/// traffic-type table's three more (mlx5e's `MLX5E_VLAN_FT_LEVEL`, `_L2_`, `_TTC_` after
/// its ethtool priority): within `max_ft_level`, which bring-up requires to be at least
/// [`crate::hwif::mlx5::cmd::hca::MIN_FT_LEVEL`].
const RULE_LEVEL: u8 = 0;
const _: () = assert!(RULE_LEVEL + 3 <= crate::hwif::mlx5::cmd::hca::MIN_FT_LEVEL);
const _: () = assert!(RULE_LOG_SIZE <= fs::MAX_LOG_SIZE);

const _: () = assert!(1 << RULE_LOG_SIZE == MAX_RULES);

/// Entries of the port's RQT: mlx5e's 256 (`mlx5e_rqt_size` for up to 32 channels), fewer
/// if the device's `log_max_rqt_size` is lower.
pub(crate) const RQT_SIZE: usize = 256;

/// The ethtool flow whose hash fields a traffic type's TIR takes (anything not IP shares
/// the IPv4 TIR).
fn tt_flow(tt: Tt) -> Flow {
    match tt {
        Tt::Tcp4 => Flow::Tcp4,
        Tt::Tcp6 => Flow::Tcp6,
        Tt::Udp4 => Flow::Udp4,
        Tt::Udp6 => Flow::Udp6,
        Tt::Ip4 | Tt::Any => Flow::Ip4,
        Tt::Ip6 => Flow::Ip6,
    }
}

/// The TIR hash parameters of traffic type `tt` under `spec` (mlx5e_rss's
/// `mlx5e_rss_get_tt_config` with the ethtool fields).
fn tir_hash(tt: Tt, spec: &RssSpec<'_>) -> res::TirHash {
    let f = spec.fields(tt_flow(tt));
    let sel = f.bits([
        res::HASH_SEL_SRC_IP,
        res::HASH_SEL_DST_IP,
        res::HASH_SEL_L4_SPORT,
        res::HASH_SEL_L4_DPORT,
    ]);
    res::TirHash {
        key: *spec.key,
        l3_prot_type: tt.l3_prot_type(),
        l4_prot_type: tt.l4_prot_type(),
        selected_fields: sel,
    }
}

impl Func {
    /// Steers received frames as `spec` says (mlx5e's RSS): the first time, CREATE_RQT of
    /// the table's RQs, CREATE_TIR per traffic type (its fields, the key), the traffic-type
    /// flow table with its groups and entries, and SET_FLOW_TABLE_ROOT; after, in place,
    /// MODIFY_RQT for a table change and MODIFY_TIR of every TIR for a key or field change
    /// (hitless: no queue or object is re-created). `None` destroys it all (nothing is
    /// received). Sleeps.
    pub(crate) fn set_rss(&self, spec: Option<&RssSpec<'_>>, change: RssChange) -> Result {
        let mut rss = self.rss.lock();
        let Some(spec) = spec else {
            if let Some(r) = rss.take() {
                self.destroy_rss(&r);
            }
            return Ok(());
        };
        let (rqns, max) = Self::table_rqns(spec)?;
        let Some(r) = rss.as_mut() else {
            *rss = Some(self.create_rss(&rqns, max, spec)?);
            return Ok(());
        };
        self.update_in_place(r.rqtn, &r.tirs, &rqns, max, spec, change)?;
        if change.table {
            // A channel whose RQ changed (its XSK RQ came or went): its direct RQT too.
            for (&rqn, d) in spec.rqns.iter().zip(r.direct_rqt.iter_mut()) {
                if let Some((rqtn, named)) = d.as_mut().filter(|(_, named)| *named != rqn) {
                    self.cmd(res::rqt_len(1), res::OUT_LEN, |b| {
                        res::modify_rqt(b, *rqtn, 1, &[rqn])
                    })?;
                    *named = rqn;
                }
            }
        }
        Ok(())
    }

    /// The in-place update of an RQT and its TIRs (the main table's or a context's):
    /// MODIFY_RQT for a table change, MODIFY_TIR of every TIR for a key or field change.
    fn update_in_place(
        &self,
        rqtn: u32,
        tirs: &[Option<u32>],
        rqns: &[u32],
        max: u16,
        spec: &RssSpec<'_>,
        change: RssChange,
    ) -> Result {
        if change.table {
            self.cmd(res::rqt_len(rqns.len()), res::OUT_LEN, |b| {
                res::modify_rqt(b, rqtn, max, rqns)
            })?;
        }
        if change.key || change.fields {
            for (&tt, tir) in Tt::HASHED.iter().zip(tirs.iter()) {
                if let Some(tirn) = *tir {
                    let h = tir_hash(tt, spec);
                    self.cmd(res::MODIFY_TIR_IN_LEN, res::OUT_LEN, |b| {
                        res::modify_tir_hash(b, tirn, &h)
                    })?;
                }
            }
        }
        Ok(())
    }

    /// The RQs of `spec`'s table (its channel indices mapped to their RQs) and their count.
    fn table_rqns(spec: &RssSpec<'_>) -> Result<(KVec<u32>, u16)> {
        let mut rqns = KVec::with_capacity(spec.table.len(), GFP_KERNEL)?;
        for &e in spec.table {
            rqns.push(spec.rq_of(e).ok_or(EINVAL)?, GFP_KERNEL)?;
        }
        let max = u16::try_from(rqns.len()).map_err(|_| EINVAL)?;
        if max == 0 {
            return Err(EINVAL);
        }
        Ok((rqns, max))
    }

    /// Programs additional RSS context `id` (1..) as `spec` says: the first time its RQT
    /// and a TIR per traffic type (mlx5e creates them on demand, rsnic with the context:
    /// the model holds [`MAX_CONTEXTS`] of them), after, MODIFY_RQT / MODIFY_TIR in place;
    /// `None` destroys them (the port deletes the context's rules first). Only while the
    /// channels are open ([`Func::set_rss`] made the rest). Sleeps.
    pub(crate) fn set_rss_ctx(
        &self,
        id: usize,
        spec: Option<&RssSpec<'_>>,
        change: RssChange,
    ) -> Result {
        let mut rss = self.rss.lock();
        let r = rss.as_mut().ok_or(ENODEV)?;
        let slot = r.ctxs.get_mut(id.wrapping_sub(1)).ok_or(EINVAL)?;
        let Some(spec) = spec else {
            if let Some(c) = slot.take() {
                self.destroy_ctx(&c);
            }
            return Ok(());
        };
        let (rqns, max) = Self::table_rqns(spec)?;
        let Some(c) = slot.as_ref() else {
            let out = self.cmd(res::rqt_len(rqns.len()), res::SHORT_LEN, |b| {
                res::create_rqt(b, max, &rqns)
            })?;
            let mut c = Ctx {
                rqtn: self.created(&out, res::parse_create_rqt)?,
                tirs: [None; 6],
            };
            if let Err(e) = self.hashed_tirs(c.rqtn, &mut c.tirs, spec) {
                self.destroy_ctx(&c);
                return Err(e);
            }
            *slot = Some(c);
            return Ok(());
        };
        self.update_in_place(c.rqtn, &c.tirs, &rqns, max, spec, change)
    }

    /// The hashed TIRs (one per [`Tt::HASHED`] traffic type) over RQT `rqtn`, recorded in
    /// `tirs` as they are made: the main RSS's and each context's.
    fn hashed_tirs(&self, rqtn: u32, tirs: &mut [Option<u32>; 6], spec: &RssSpec<'_>) -> Result {
        let td = self.res.td.unwrap_or(0);
        for (&tt, slot) in Tt::HASHED.iter().zip(tirs.iter_mut()) {
            let h = tir_hash(tt, spec);
            let t = res::CreateTir {
                transport_domain: td,
                rqtn,
                key: h.key,
                l3_prot_type: h.l3_prot_type,
                l4_prot_type: h.l4_prot_type,
                selected_fields: h.selected_fields,
            };
            let out = self.cmd(res::CREATE_TIR_IN_LEN, res::SHORT_LEN, |b| {
                res::create_tir(b, &t)
            })?;
            *slot = Some(self.created(&out, res::parse_create_tir)?);
        }
        Ok(())
    }

    /// Destroys a context's TIRs, then its RQT.
    fn destroy_ctx(&self, c: &Ctx) {
        self.destroy_hashed(c.rqtn, &c.tirs);
    }

    /// Destroys the hashed TIRs `tirs` that [`Self::hashed_tirs`] made, then their RQT
    /// `rqtn`.
    fn destroy_hashed(&self, rqtn: u32, tirs: &[Option<u32>]) {
        for &t in tirs.iter().flatten() {
            self.destroy(|b| res::destroy_tir(b, t));
        }
        self.destroy(|b| res::destroy_rqt(b, rqtn));
    }

    /// Programs the ntuple rule at `loc` (mlx5e's `mlx5e_ethtool_flow_replace`): whatever
    /// was there goes (DELETE_FLOW_TABLE_ENTRY, DESTROY_FLOW_GROUP), then, for a rule, a
    /// group of that one index masking the fields it gives and its entry, forwarding to the
    /// direct TIR of its queue or its context's TIR of its traffic type. Only while the
    /// channels are open. Sleeps.
    pub(crate) fn set_rule(&self, loc: usize, rule: Option<&Rule>) -> Result {
        let mut rss = self.rss.lock();
        let r = rss.as_mut().ok_or(ENODEV)?;
        let ft = r.rule_ft.ok_or(EINVAL)?;
        let index = u32::try_from(loc).map_err(|_| EINVAL)?;
        let tirn = match rule.map(|x| x.dest) {
            None => None,
            Some(Dest::Queue(q)) => {
                Some(r.direct.get(q as usize).copied().flatten().ok_or(EINVAL)?)
            }
            Some(Dest::Context(c)) => {
                let m = rule.map(|x| x.m).unwrap_or_default();
                let tt = match (m.ipv6, m.udp) {
                    (false, false) => Tt::Tcp4,
                    (false, true) => Tt::Udp4,
                    (true, false) => Tt::Tcp6,
                    (true, true) => Tt::Udp6,
                };
                let ctx = r
                    .ctxs
                    .get((c as usize).wrapping_sub(1))
                    .copied()
                    .flatten()
                    .ok_or(EINVAL)?;
                Some(
                    ctx.tirs
                        .get(tt.tir_index())
                        .copied()
                        .flatten()
                        .ok_or(EINVAL)?,
                )
            }
        };
        let slot = r.rules.get_mut(loc).ok_or(EINVAL)?;
        let run = |build: &dyn Fn(&mut [u8]) -> core::result::Result<usize, FormatError>| {
            let _ = self.cmd(fs::FT_CMD_LEN, res::OUT_LEN, build);
        };
        if let Some((g, set)) = slot.take() {
            if set {
                run(&|b| fs::delete_fte(b, ft, index));
            }
            run(&|b| fs::destroy_flow_group(b, ft, g));
        }
        let (Some(rule), Some(tirn)) = (rule, tirn) else {
            return Ok(());
        };
        let m = fs::TupleMatch {
            ipv6: rule.m.ipv6,
            udp: rule.m.udp,
            src: rule.m.src,
            dst: rule.m.dst,
            sport: rule.m.sport,
            dport: rule.m.dport,
        };
        let out = self.cmd(fs::CREATE_FG_IN_LEN, res::SHORT_LEN, |b| {
            fs::create_flow_group_tuple(b, ft, index, index, &m)
        })?;
        let g = self.created(&out, fs::parse_create_flow_group)?;
        *slot = Some((g, false));
        if let Err(e) = self.cmd(fs::SET_FTE_IN_LEN, res::OUT_LEN, |b| {
            fs::set_fte_tuple(b, ft, g, index, &m, tirn)
        }) {
            *slot = None;
            run(&|b| fs::destroy_flow_group(b, ft, g));
            return Err(e);
        }
        *slot = Some((g, true));
        Ok(())
    }

    /// Creates the RSS objects over the RQs `rqns` (`max` of them); on a failure destroys
    /// what was made.
    fn create_rss(&self, rqns: &[u32], max: u16, spec: &RssSpec<'_>) -> Result<Rss> {
        let out = self.cmd(res::rqt_len(rqns.len()), res::SHORT_LEN, |b| {
            res::create_rqt(b, max, rqns)
        })?;
        let mut r = Rss {
            rqtn: self.created(&out, res::parse_create_rqt)?,
            tirs: [None; 6],
            ft: None,
            groups: [None; 3],
            entries: 0,
            root: false,
            direct: [None; MAX_CHANNELS],
            direct_rqt: [None; MAX_CHANNELS],
            rule_ft: None,
            rules: [None; MAX_RULES],
            ctxs: [None; MAX_CONTEXTS],
            l2: L2::NONE,
            vlan: VlanTable::NONE,
        };
        match self.build_rss(&mut r, spec) {
            Ok(()) => Ok(r),
            Err(e) => {
                self.destroy_rss(&r);
                Err(e)
            }
        }
    }

    /// The TIRs, the traffic-type table, its groups, entries and root (`mlx5e_rss_init`,
    /// `mlx5_create_ttc_table`), recorded in `r` as they are made.
    fn build_rss(&self, r: &mut Rss, spec: &RssSpec<'_>) -> Result {
        self.hashed_tirs(r.rqtn, &mut r.tirs, spec)?;
        let out = self.cmd(fs::FT_CMD_LEN, res::SHORT_LEN, |b| {
            fs::create_flow_table(b, fs::TTC_LOG_SIZE, RULE_LEVEL + 3)
        })?;
        let ft = self.created(&out, fs::parse_create_flow_table)?;
        r.ft = Some(ft);
        for (&(start, end, crit), slot) in fs::TTC_GROUPS.iter().zip(r.groups.iter_mut()) {
            let out = self.cmd(fs::CREATE_FG_IN_LEN, res::SHORT_LEN, |b| {
                fs::create_flow_group(b, ft, start, end, crit)
            })?;
            *slot = Some(self.created(&out, fs::parse_create_flow_group)?);
        }
        for tt in Tt::ALL {
            let g = r.groups.get(tt.group()).copied().flatten().ok_or(EINVAL)?;
            let tir = r
                .tirs
                .get(tt.tir_index())
                .copied()
                .flatten()
                .ok_or(EINVAL)?;
            self.cmd(fs::SET_FTE_IN_LEN, res::OUT_LEN, |b| {
                fs::set_fte_fwd_tir(b, ft, g, tt.flow_index(), &tt.match_value(), tir)
            })?;
            r.entries |= 1 << tt.flow_index();
        }
        // A direct TIR per channel, for rules of `action Q`, over the channel's RQT of one
        // entry (mlx5e's direct TIRs dispatch through a direct RQT, so the RQ behind them
        // changes in place; their hash is XOR8, which the model lacks: here Toeplitz over no
        // field, which on one entry picks it as well).
        for ((&rqn, slot), rqt) in spec
            .rqns
            .iter()
            .zip(r.direct.iter_mut())
            .zip(r.direct_rqt.iter_mut())
        {
            let out = self.cmd(res::rqt_len(1), res::SHORT_LEN, |b| {
                res::create_rqt(b, 1, &[rqn])
            })?;
            let rqtn = self.created(&out, res::parse_create_rqt)?;
            *rqt = Some((rqtn, rqn));
            let t = res::CreateTir {
                transport_domain: self.res.td.unwrap_or(0),
                rqtn,
                key: *spec.key,
                l3_prot_type: 0,
                l4_prot_type: 0,
                selected_fields: 0,
            };
            let out = self.cmd(res::CREATE_TIR_IN_LEN, res::SHORT_LEN, |b| {
                res::create_tir(b, &t)
            })?;
            *slot = Some(self.created(&out, res::parse_create_tir)?);
        }
        // The L2 table ahead of the traffic-type table (mlx5e_create_l2_table), with the
        // entries of what the stack asks for now.
        let out = self.cmd(fs::FT_CMD_LEN, res::SHORT_LEN, |b| {
            fs::create_flow_table(b, fs::L2_LOG_SIZE, RULE_LEVEL + 2)
        })?;
        let l2 = self.created(&out, fs::parse_create_flow_table)?;
        r.l2.ft = Some(l2);
        for (&(start, end, mask), slot) in fs::L2_GROUPS.iter().zip(r.l2.groups.iter_mut()) {
            let out = self.cmd(fs::CREATE_FG_IN_LEN, res::SHORT_LEN, |b| {
                fs::create_flow_group_dmac(b, l2, start, end, &mask)
            })?;
            *slot = Some(self.created(&out, fs::parse_create_flow_group)?);
        }
        let want = with_bh(|| *self.rx.lock());
        if let Err(e) = self.sync_l2(&mut r.l2, ft, &want) {
            // As mlx5e's L2 rules: logged, the port opens; the next change tries again.
            pr_err!("port {}: the L2 table: {:?}\n", self.port, e);
        }
        // The VLAN table ahead of the L2 table (mlx5e_fs_create_vlan_table), with the
        // entries of the VLAN ids the stack listed, the filter feature and the promiscuous
        // flag.
        let out = self.cmd(fs::FT_CMD_LEN, res::SHORT_LEN, |b| {
            fs::create_flow_table(b, fs::VLAN_LOG_SIZE, RULE_LEVEL + 1)
        })?;
        let vlan = self.created(&out, fs::parse_create_flow_table)?;
        r.vlan.ft = Some(vlan);
        for (&(start, end, m), slot) in fs::VLAN_GROUPS.iter().zip(r.vlan.groups.iter_mut()) {
            let out = self.cmd(fs::CREATE_FG_IN_LEN, res::SHORT_LEN, |b| {
                fs::create_flow_group_vlan(b, vlan, start, end, m)
            })?;
            *slot = Some(self.created(&out, fs::parse_create_flow_group)?);
        }
        {
            let v = self.vlans.lock();
            if let Err(e) = self.sync_vlan(&mut r.vlan, Some(l2), &v, want.promisc) {
                // As the L2 table's: logged, the port opens; the next change tries again.
                pr_err!("port {}: the VLAN table: {:?}\n", self.port, e);
            }
        }
        // The rule table ahead of the VLAN table (as fs_core chains the ethtool priorities
        // to the next), empty until rules come.
        let out = self.cmd(fs::FT_CMD_LEN, res::SHORT_LEN, |b| {
            fs::create_flow_table_miss(b, RULE_LOG_SIZE, RULE_LEVEL, vlan)
        })?;
        let rule_ft = self.created(&out, fs::parse_create_flow_table)?;
        r.rule_ft = Some(rule_ft);
        self.cmd(fs::FT_CMD_LEN, res::OUT_LEN, |b| {
            fs::set_flow_table_root(b, rule_ft)
        })?;
        r.root = true;
        Ok(())
    }

    /// Destroys the RSS objects that exist, in the reverse order of their creation; failures
    /// are logged and otherwise ignored, as mlx5e's destroy paths do. Sleeps.
    pub(super) fn destroy_rss(&self, r: &Rss) {
        let run = |build: &dyn Fn(&mut [u8]) -> core::result::Result<usize, FormatError>| {
            let _ = self.cmd(fs::FT_CMD_LEN, res::OUT_LEN, build);
        };
        if r.root {
            run(&fs::disconnect_flow_table_root);
        }
        if let Some(ft) = r.rule_ft {
            for (loc, rule) in r.rules.iter().enumerate() {
                if let (Some((g, set)), Ok(index)) = (*rule, u32::try_from(loc)) {
                    if set {
                        run(&|b| fs::delete_fte(b, ft, index));
                    }
                    run(&|b| fs::destroy_flow_group(b, ft, g));
                }
            }
            run(&|b| fs::destroy_flow_table(b, ft));
        }
        // The VLAN table's entries forward to the L2 table: they go first.
        if let Some(vt) = r.vlan.ft {
            for (i, slot) in r.vlan.slots.iter().enumerate() {
                if let (Some(_), Ok(index)) = (slot, u32::try_from(i)) {
                    run(&|b| fs::delete_fte(b, vt, index));
                }
            }
            for (on, index) in [
                (r.vlan.untagged, fs::VLAN_UNTAGGED_INDEX),
                (r.vlan.any_ctag, fs::VLAN_ANY_CTAG_INDEX),
                (r.vlan.any_stag, fs::VLAN_ANY_STAG_INDEX),
            ] {
                if on {
                    run(&|b| fs::delete_fte(b, vt, index));
                }
            }
            for &g in r.vlan.groups.iter().flatten() {
                run(&|b| fs::destroy_flow_group(b, vt, g));
            }
            run(&|b| fs::destroy_flow_table(b, vt));
        }
        // The L2 table's entries forward to the traffic-type table: they go first.
        if let Some(l2) = r.l2.ft {
            for (i, slot) in r.l2.slots.iter().enumerate() {
                if let (Some(_), Ok(index)) = (slot, u32::try_from(i)) {
                    run(&|b| fs::delete_fte(b, l2, index));
                }
            }
            if r.l2.allmulti {
                run(&|b| fs::delete_fte(b, l2, fs::L2_ALLMULTI_INDEX));
            }
            if r.l2.promisc {
                run(&|b| fs::delete_fte(b, l2, fs::L2_PROMISC_INDEX));
            }
            for &g in r.l2.groups.iter().flatten() {
                run(&|b| fs::destroy_flow_group(b, l2, g));
            }
            run(&|b| fs::destroy_flow_table(b, l2));
        }
        if let Some(ft) = r.ft {
            for tt in Tt::ALL {
                if r.entries & (1 << tt.flow_index()) != 0 {
                    run(&|b| fs::delete_fte(b, ft, tt.flow_index()));
                }
            }
            for &g in r.groups.iter().flatten() {
                run(&|b| fs::destroy_flow_group(b, ft, g));
            }
            run(&|b| fs::destroy_flow_table(b, ft));
        }
        for c in r.ctxs.iter().flatten() {
            self.destroy_ctx(c);
        }
        for &t in r.direct.iter().flatten() {
            self.destroy(|b| res::destroy_tir(b, t));
        }
        for &(t, _) in r.direct_rqt.iter().flatten() {
            self.destroy(|b| res::destroy_rqt(b, t));
        }
        self.destroy_hashed(r.rqtn, &r.tirs);
    }
}
