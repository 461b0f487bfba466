// SPDX-License-Identifier: GPL-2.0

//! Receive filtering of a ConnectX port: the stack's addresses and flags, recorded in atomic
//! context and programmed from the control work into the vport (MODIFY_NIC_VPORT_CONTEXT)
//! and the L2 flow table.
//!
//! Upstream counterpart: `en_fs.c` (`mlx5e_set_rx_mode_work`, the L2 table).

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

impl Func {
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
