// SPDX-License-Identifier: GPL-2.0

//! Receive filtering of a ConnectX port: the stack's addresses and flags, recorded in atomic
//! context and programmed from the control work into the vport (MODIFY_NIC_VPORT_CONTEXT)
//! and the L2 flow table; the stack's VLAN ids and the VLAN filter feature, programmed
//! into the VLAN flow table in front of the L2 table.
//!
//! Upstream counterpart: `en_fs.c` (`mlx5e_set_rx_mode_work`, the L2 table, the VLAN
//! table: `mlx5e_fs_vlan_rx_add_vid`, `mlx5e_enable_cvlan_filter`).

use crate::family::mlx5::ctrl::Func;
use crate::hwif::mlx5::cmd::{fs, res, vport};
use crate::kernel_ext::net::device::{MacChange, RxMode};
use crate::kernel_ext::sync::with_bh;
use core::sync::atomic::Ordering;
use kernel::prelude::*;
use kernel::sync::Arc;

/// The L2 table (mlx5e's `fs->l2`): frames by destination MAC on to the traffic-type table;
/// what misses is dropped. Its groups are [`fs::L2_GROUPS`]; `slots` holds the address of
/// each full-match index that has an entry.
#[derive(Clone, Copy)]
pub(super) struct L2 {
    pub(super) ft: Option<u32>,
    pub(super) groups: [Option<u32>; 3],
    pub(super) slots: [Option<[u8; 6]>; fs::L2_FULL],
    pub(super) allmulti: bool,
    pub(super) promisc: bool,
}

impl L2 {
    pub(super) const NONE: Self = Self {
        ft: None,
        groups: [None; 3],
        slots: [None; fs::L2_FULL],
        allmulti: false,
        promisc: false,
    };
}

/// The VLAN table (mlx5e's `fs->vlan`): frames by their tag on to the L2 table; what
/// misses is dropped. Its groups are [`fs::VLAN_GROUPS`]; `slots` holds the VID of each
/// C-VID index that has an entry.
#[derive(Clone, Copy)]
pub(super) struct VlanTable {
    pub(super) ft: Option<u32>,
    pub(super) groups: [Option<u32>; 3],
    pub(super) slots: [Option<u16>; fs::VLAN_VIDS],
    pub(super) untagged: bool,
    pub(super) any_ctag: bool,
    pub(super) any_stag: bool,
}

impl VlanTable {
    pub(super) const NONE: Self = Self {
        ft: None,
        groups: [None; 3],
        slots: [None; fs::VLAN_VIDS],
        untagged: false,
        any_ctag: false,
        any_stag: false,
    };
}

/// What the stack asks of the VLAN table: the C-VIDs it listed (`ndo_vlan_rx_add_vid`,
/// mlx5e's `active_cvlans`) and whether `rx-vlan-filter` is on (mlx5e's
/// `!cvlan_filter_disabled`). Kept while the channels are closed.
pub(crate) struct Vlans {
    vids: [u64; 64],
    filter: bool,
}

impl Vlans {
    /// No VID, filtering on (mlx5e's default).
    pub(crate) const fn new() -> Self {
        Self {
            vids: [0; 64],
            filter: true,
        }
    }

    fn has(&self, vid: u16) -> bool {
        self.vids
            .get(usize::from(vid / 64))
            .is_some_and(|w| w & (1 << (vid % 64)) != 0)
    }

    fn set(&mut self, vid: u16, on: bool) {
        if let Some(w) = self.vids.get_mut(usize::from(vid / 64)) {
            if on {
                *w |= 1 << (vid % 64);
            } else {
                *w &= !(1 << (vid % 64));
            }
        }
    }

    fn count(&self) -> usize {
        self.vids.iter().map(|w| w.count_ones() as usize).sum()
    }
}

impl Func {
    /// `ndo_vlan_rx_add_vid` / `ndo_vlan_rx_kill_vid` of C-VID `vid` (under RTNL), as
    /// `mlx5e_vlan_rx_add_cvid` / `mlx5e_fs_vlan_rx_kill_vid`: recorded, and its VLAN table
    /// entry set or deleted while the channels are open. More VIDs than the table has
    /// entries for ([`fs::VLAN_VIDS`]) are refused with `ENOSPC`, and a VID whose entry the
    /// device refuses is forgotten again (the stack then fails the VLAN device), as mlx5e;
    /// a kill always succeeds (a failed deletion is logged), as mlx5e's.
    pub(crate) fn vlan_rx_vid(&self, vid: u16, add: bool) -> Result {
        if vid >= 4096 {
            return Err(EINVAL);
        }
        let mut rss = self.rss.lock();
        let mut v = self.vlans.lock();
        if v.has(vid) == add {
            return Ok(());
        }
        if add && v.count() >= fs::VLAN_VIDS {
            pr_warn!(
                "port {}: VLAN {}: the VLAN table holds {} VLAN ids\n",
                self.port,
                vid,
                fs::VLAN_VIDS
            );
            return Err(ENOSPC);
        }
        v.set(vid, add);
        self.update_vport_vlans(&v);
        let promisc = with_bh(|| self.rx.lock().promisc);
        if let Some(r) = rss.as_mut() {
            if let Err(e) = self.sync_vlan(&mut r.vlan, r.l2.ft, &v, promisc) {
                if !add {
                    // As mlx5e's kill: the VID is forgotten whatever the device said.
                    pr_err!(
                        "port {}: VLAN {}: the VLAN table: {:?}\n",
                        self.port,
                        vid,
                        e
                    );
                    return Ok(());
                }
                v.set(vid, false);
                self.update_vport_vlans(&v);
                let _ = self.sync_vlan(&mut r.vlan, r.l2.ft, &v, promisc);
                return Err(e);
            }
        }
        Ok(())
    }

    /// Writes the listed C-VIDs into the vport's VLAN list (MODIFY_NIC_VPORT_CONTEXT), as
    /// mlx5e's `mlx5e_vport_context_update_vlans` does at each VID added or killed: the
    /// lowest first, cut at the capability (`log_max_vlan_list`) with a warning. On a VF
    /// the list is for the e-switch manager (6.12's filters nothing by it); a failure is
    /// logged by the command and changes nothing else, as mlx5e ignores it. Sleeps.
    fn update_vport_vlans(&self, v: &Vlans) {
        let max = 1usize << self.res.caps.log_max_vlan_list.min(12);
        let count = v.count();
        if count > max {
            pr_warn!(
                "port {}: {} VLAN ids, the vport's VLAN list holds {}: some left out
",
                self.port,
                count,
                max
            );
        }
        let mut vids = KVec::new();
        for vid in (0..4096u16).filter(|&x| v.has(x)).take(max) {
            if vids.push(vid, GFP_KERNEL).is_err() {
                return;
            }
        }
        let len = vport::modify_nic_vport_mac_list_len(vids.len());
        let _ = self.cmd(len, vport::MODIFY_NIC_VPORT_CONTEXT_OUT_LEN, |b| {
            vport::modify_nic_vport_vlans(b, &vids)
        });
    }

    /// `rx-vlan-filter` on or off (`ndo_set_features`, under RTNL), as mlx5e's
    /// `set_feature_cvlan_filter`: off adds the any-C-VID entry (every C-tagged frame on to
    /// the L2 table), on deletes it (unless the port is promiscuous, which keeps it).
    pub(crate) fn set_vlan_filter(&self, on: bool) -> Result {
        let mut rss = self.rss.lock();
        let mut v = self.vlans.lock();
        if v.filter == on {
            return Ok(());
        }
        v.filter = on;
        let promisc = with_bh(|| self.rx.lock().promisc);
        if let Some(r) = rss.as_mut() {
            self.sync_vlan(&mut r.vlan, r.l2.ft, &v, promisc)?;
        }
        Ok(())
    }

    /// Makes the VLAN table's entries those `want` and `promisc` ask for, forwarding to
    /// the L2 table `l2`: the untagged and any-S-tag entries always, one per listed C-VID,
    /// any C-tag while filtering is off or the port promiscuous
    /// ([`fs::want_any_ctag`]). Catch-alls first, deletions last, as [`Func::sync_l2`].
    /// Sleeps.
    pub(super) fn sync_vlan(
        &self,
        t: &mut VlanTable,
        l2: Option<u32>,
        want: &Vlans,
        promisc: bool,
    ) -> Result {
        let (Some(ft), Some(l2), [Some(g_vid), Some(g_ctag), Some(g_stag)]) = (t.ft, l2, t.groups)
        else {
            return Err(EINVAL);
        };
        let set = |g: u32, r: fs::VlanRule| {
            self.cmd(fs::SET_FTE_IN_LEN, res::OUT_LEN, |b| {
                fs::set_fte_vlan(b, ft, g, r, l2)
            })
            .map(|_| ())
        };
        let del = |index: u32| {
            self.cmd(fs::FT_CMD_LEN, res::OUT_LEN, |b| {
                fs::delete_fte(b, ft, index)
            })
            .map(|_| ())
        };
        let any_ctag = fs::want_any_ctag(want.filter, promisc);
        if !t.untagged {
            set(g_ctag, fs::VlanRule::Untagged)?;
            t.untagged = true;
        }
        if !t.any_stag {
            set(g_stag, fs::VlanRule::AnyStag)?;
            t.any_stag = true;
        }
        if any_ctag && !t.any_ctag {
            set(g_ctag, fs::VlanRule::AnyCtag)?;
            t.any_ctag = true;
        }
        for (i, slot) in t.slots.iter_mut().enumerate() {
            if let Some(vid) = *slot {
                if !want.has(vid) {
                    del(u32::try_from(i).map_err(|_| EINVAL)?)?;
                    *slot = None;
                }
            }
        }
        for (w, &bits) in want.vids.iter().enumerate() {
            let mut bits = bits;
            while bits != 0 {
                let vid =
                    u16::try_from(w * 64 + bits.trailing_zeros() as usize).map_err(|_| EINVAL)?;
                bits &= bits - 1;
                if t.slots.contains(&Some(vid)) {
                    continue;
                }
                let Some(i) = t.slots.iter().position(|s| s.is_none()) else {
                    // `vlan_rx_vid` keeps at most as many VIDs as there are slots.
                    return Err(ENOSPC);
                };
                let index = u32::try_from(i).map_err(|_| EINVAL)?;
                set(g_vid, fs::VlanRule::Vid(vid, index))?;
                if let Some(s) = t.slots.get_mut(i) {
                    *s = Some(vid);
                }
            }
        }
        if !any_ctag && t.any_ctag {
            del(fs::VLAN_ANY_CTAG_INDEX)?;
            t.any_ctag = false;
        }
        Ok(())
    }

    /// Records the stack's receive filter (`ndo_set_rx_mode`: atomic context) and queues the
    /// control work that programs it.
    pub(crate) fn set_rx_mode(self: &Arc<Self>, mode: &RxMode) {
        with_bh(|| *self.rx.lock() = *mode);
        self.rx_due.store(true, Ordering::Release);
        self.kick();
    }

    /// `ndo_set_mac_address` (under RTNL), as `mlx5e_set_mac`: commits the address (an
    /// invalid one is refused with `EADDRNOTAVAIL`), then has the control work program the
    /// vport's UC list and the L2 table with it.
    pub(crate) fn set_mac(self: &Arc<Self>, change: MacChange<'_>) -> Result {
        let mac = change.mac();
        change.commit()?;
        with_bh(|| self.rx.lock().addr = mac);
        self.rx_due.store(true, Ordering::Release);
        self.kick();
        Ok(())
    }

    /// Programs the receive filter the stack asked for last (the control work, process
    /// context), as `mlx5e_fs_set_rx_mode_work`: the L2 table's entries while the channels
    /// are open, then the vport context's UC and MC lists and its promiscuous flags
    /// (`mlx5e_vport_context_update`). Failures are logged; the next change tries again.
    pub(super) fn apply_rx_mode(&self) {
        let want = with_bh(|| *self.rx.lock());
        {
            let mut rss = self.rss.lock();
            if let Some(r) = rss.as_mut() {
                if let Some(ttc) = r.ft {
                    if let Err(e) = self.sync_l2(&mut r.l2, ttc, &want) {
                        pr_err!("port {}: the L2 table: {:?}\n", self.port, e);
                    }
                }
                // Promiscuous lets every VLAN through (the any-C-VID entry).
                let v = self.vlans.lock();
                if let Err(e) = self.sync_vlan(&mut r.vlan, r.l2.ft, &v, want.promisc) {
                    pr_err!("port {}: the VLAN table: {:?}\n", self.port, e);
                }
            }
        }
        let caps = &self.res.caps;
        let lists = vport::VportLists::new(
            &want.addr,
            want.broadcast,
            want.uc(),
            want.mc(),
            caps.log_max_current_uc_list,
            caps.log_max_current_mc_list,
        );
        for (ty, name, list, dropped) in [
            (vport::LIST_TYPE_UC, "UC", lists.uc(), lists.uc_dropped),
            (vport::LIST_TYPE_MC, "MC", lists.mc(), lists.mc_dropped),
        ] {
            if dropped > 0 {
                pr_warn!(
                    "port {}: the vport's {} list holds {} addresses: {} left out\n",
                    self.port,
                    name,
                    list.len(),
                    dropped
                );
            }
            let len = vport::modify_nic_vport_mac_list_len(list.len());
            let _ = self.cmd(len, vport::MODIFY_NIC_VPORT_CONTEXT_OUT_LEN, |b| {
                vport::modify_nic_vport_mac_list(b, ty, list)
            });
        }
        let _ = self.cmd(
            vport::MODIFY_NIC_VPORT_CONTEXT_IN_LEN,
            vport::MODIFY_NIC_VPORT_CONTEXT_OUT_LEN,
            |b| vport::modify_nic_vport_promisc(b, false, want.allmulti, want.promisc),
        );
    }

    /// Makes the L2 table's entries those of `want` (forwarding to traffic-type table
    /// `ttc`): the catch-alls turned on first, then the address entries no longer wanted
    /// deleted and the new ones set, then the catch-alls turned off (as mlx5e orders them,
    /// so that a change lets through at least what both sides allow). Sleeps.
    pub(super) fn sync_l2(&self, l2: &mut L2, ttc: u32, want: &RxMode) -> Result {
        let (Some(ft), [Some(g_full), Some(g_multi), Some(g_all)]) = (l2.ft, l2.groups) else {
            return Err(EINVAL);
        };
        let rules = fs::L2Rules::new(&fs::RxFilter {
            own: want.addr,
            broadcast: want.broadcast,
            promisc: want.promisc,
            allmulti: want.allmulti,
            uc: want.uc(),
            uc_more: want.uc_overflow(),
            mc: want.mc(),
            mc_more: want.mc_overflow(),
        });
        let set = |g: u32, index: u32, dmac: &[u8; 6]| {
            self.cmd(fs::SET_FTE_IN_LEN, res::OUT_LEN, |b| {
                fs::set_fte_dmac_fwd_table(b, ft, g, index, dmac, ttc)
            })
            .map(|_| ())
        };
        let del = |index: u32| {
            self.cmd(fs::FT_CMD_LEN, res::OUT_LEN, |b| {
                fs::delete_fte(b, ft, index)
            })
            .map(|_| ())
        };
        if rules.promisc && !l2.promisc {
            set(g_all, fs::L2_PROMISC_INDEX, &[0; 6])?;
            l2.promisc = true;
        }
        if rules.allmulti && !l2.allmulti {
            set(g_multi, fs::L2_ALLMULTI_INDEX, &[0x01, 0, 0, 0, 0, 0])?;
            l2.allmulti = true;
        }
        for (i, slot) in l2.slots.iter_mut().enumerate() {
            let index = u32::try_from(i).map_err(|_| EINVAL)?;
            if let Some(a) = *slot {
                if !rules.addrs().contains(&a) {
                    del(index)?;
                    *slot = None;
                }
            }
        }
        for a in rules.addrs() {
            if l2.slots.contains(&Some(*a)) {
                continue;
            }
            let Some(i) = l2.slots.iter().position(|s| s.is_none()) else {
                // L2Rules holds at most as many addresses as there are slots.
                return Err(ENOSPC);
            };
            let index = u32::try_from(i).map_err(|_| EINVAL)?;
            set(g_full, index, a)?;
            if let Some(s) = l2.slots.get_mut(i) {
                *s = Some(*a);
            }
        }
        if !rules.allmulti && l2.allmulti {
            del(fs::L2_ALLMULTI_INDEX)?;
            l2.allmulti = false;
        }
        if !rules.promisc && l2.promisc {
            del(fs::L2_PROMISC_INDEX)?;
            l2.promisc = false;
        }
        Ok(())
    }
}
