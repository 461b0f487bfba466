// SPDX-License-Identifier: GPL-2.0

//! The device's half of the flow-steering commands (the driver's is `hwif/mlx5/cmd/fs.rs`):
//! CREATE / MODIFY / DESTROY_FLOW_TABLE, CREATE / DESTROY_FLOW_GROUP, SET /
//! DELETE_FLOW_TABLE_ENTRY and SET_FLOW_TABLE_ROOT of the NIC RX tables (any outer-header
//! mask, TIR and table destinations, drop, miss tables by level); the lookup itself is
//! [`crate::sim::mlx5::steer`]. PRM "Flow Table Commands"; upstream fs_cmd.c; layouts
//! `create_flow_table_in`, `create_flow_group_in`, `set_fte_in`, `flow_context`,
//! `fte_match_param`, `dest_format_struct` of mlx5_ifc.h.

use super::{bad, synd, CmdResult, Cx, Fail};
use crate::hwif::hw::BusMemory;
use crate::sim::mlx5::ifc::{self, get, set, status};
use crate::sim::mlx5::{make_qn, FG_BASE, FT_BASE, MAX_QUEUES, TIRN_BASE};

impl<M: BusMemory> Cx<'_, '_, M> {
    /// The table of a flow-steering command (`table_type`, `other_vport`, `table_id`).
    fn fs_table(&self) -> Result<usize, Fail> {
        use ifc::fs::*;
        if self.g(TABLE_TYPE) != TABLE_TYPE_NIC_RX || self.g(OTHER_VPORT) != 0 {
            return Err(bad(synd::FT_TYPE));
        }
        let (_, s) = self.own(TABLE_ID, FT_BASE, |r| r.ft.used, synd::BAD_FT)?;
        Ok(s)
    }

    /// CREATE_FLOW_TABLE: a NIC RX table of `2^log_size` flow indices at its `level`,
    /// whose misses drop (the default miss action) or go to a table of a higher level.
    pub(super) fn create_flow_table(&mut self) -> CmdResult {
        use ifc::fs::*;
        if self.g(TABLE_TYPE) != TABLE_TYPE_NIC_RX || self.g(OTHER_VPORT) != 0 {
            return Err(bad(synd::FT_TYPE));
        }
        let log_size = self.g(FT_LOG_SIZE);
        let level = self.g(FT_LEVEL);
        // The level orders tables (a miss or an entry forwards only to a higher one);
        // fs_core's anchor table sits above every level it uses.
        if self.g(FT_FLAGS) != 0 || log_size > 16 {
            return Err(bad(synd::FT_PARAM));
        }
        let miss = self.miss_table(level)?;
        let p = self.p;
        let slot = self.free(|r| r.ft.used, synd::NO_FS)?;
        self.row(slot).ft = crate::sim::mlx5::FtCtx {
            used: true,
            log_size: log_size as u8,
            level: level as u8,
            miss,
            ..crate::sim::mlx5::QueueSet::EMPTY.ft
        };
        self.table_ref(miss, true);
        set(self.out, ifc::OBJ_NUM, make_qn(FT_BASE, p, slot));
        Ok(())
    }

    /// MODIFY_FLOW_TABLE (`modify_field_select` bit 0, MLX5_MODIFY_FLOW_TABLE_MISS_TABLE_ID):
    /// the table's miss action and miss table, as CREATE_FLOW_TABLE takes them; what
    /// fs_core does to chain a new table after the tables of an earlier level.
    pub(super) fn modify_flow_table(&mut self) -> CmdResult {
        use ifc::fs::*;
        let t = self.fs_table()?;
        if self.g(FT_MODIFY_SELECT) != 1 {
            return Err(bad(synd::FT_MODIFY_FIELDS));
        }
        let level = u32::from(self.row(t).ft.level);
        let miss = self.miss_table(level)?;
        let old = self.row(t).ft.miss;
        self.table_ref(old, false);
        self.table_ref(miss, true);
        self.row(t).ft.miss = miss;
        let p = self.p;
        self.t.refresh_rx(p, true);
        Ok(())
    }

    /// The miss table of a flow table context at `level` (slot + 1; 0: the default miss
    /// action, a drop): a table of this function at a higher level.
    fn miss_table(&mut self, level: u32) -> Result<u8, Fail> {
        use ifc::fs::*;
        let action = self.g(FT_MISS_ACTION);
        if (action == 0 && self.g(FT_MISS_ID) != 0) || (action != 0 && action != MISS_ACTION_FWD) {
            return Err(bad(synd::FT_PARAM));
        }
        if action != MISS_ACTION_FWD {
            return Ok(0);
        }
        let m = match self.t.loc(self.g(FT_MISS_ID), FT_BASE, |r| r.ft.used) {
            Ok((p, s)) if p == self.p => s,
            _ => return Err((status::BAD_RESOURCE, synd::BAD_FT)),
        };
        if u32::from(self.row(m).ft.level) <= level {
            return Err(bad(synd::FT_PARAM));
        }
        Ok((m as u8).wrapping_add(1))
    }

    /// Counts (`on`) or drops a reference to table `t` (slot + 1; 0: none).
    fn table_ref(&mut self, t: u8, on: bool) {
        if t == 0 {
            return;
        }
        let f = &mut self.row(usize::from(t - 1)).ft;
        f.refs = if on {
            f.refs.saturating_add(1)
        } else {
            f.refs.saturating_sub(1)
        };
    }

    /// DESTROY_FLOW_TABLE of a table without groups that no entry forwards to. fs_core
    /// destroys its tables at cleanup without disconnecting them first: a root table goes
    /// (the function has no root then: received frames go to its first indirect TIR), and a
    /// table others miss to goes (their misses drop from then on).
    pub(super) fn destroy_flow_table(&mut self) -> CmdResult {
        let t = self.fs_table()?;
        let f = self.row(t).ft;
        let entry_refs = (0..MAX_QUEUES).any(|i| {
            let e = self.row(i).fte;
            e.used && e.dest == crate::sim::mlx5::Dest::Table(t as u8)
        });
        if f.users != 0 || entry_refs {
            return Err((status::RESOURCE_BUSY, synd::FT_IN_USE));
        }
        for i in 0..MAX_QUEUES {
            let o = &mut self.row(i).ft;
            if o.used && usize::from(o.miss) == t + 1 {
                o.miss = 0;
            }
        }
        self.table_ref(f.miss, false);
        self.row(t).ft.used = false;
        if usize::from(self.port().func.root_ft) == t + 1 {
            self.port().func.root_ft = 0;
        }
        let p = self.p;
        self.t.refresh_rx(p, true);
        Ok(())
    }

    /// CREATE_FLOW_GROUP: flow indices `start..=end` of a table whose entries match the
    /// outer headers under the group's criteria (`match_criteria_enable` bit 0; no other
    /// part of the match parameter: misc, inner, the later sets), or every frame (no
    /// criteria).
    pub(super) fn create_flow_group(&mut self) -> CmdResult {
        use ifc::fs::*;
        let t = self.fs_table()?;
        if self.g(FG_GROUP_TYPE) != 0 || self.g(FG_DEFINER) != 0 {
            return Err(bad(synd::FG_CRITERIA));
        }
        let enable = self.g(FG_CRITERIA_ENABLE);
        let crit = self
            .inp
            .get(FG_CRITERIA..FG_CRITERIA + MATCH_PARAM_LEN)
            .ok_or((status::BAD_INPUT_LEN, synd::INPUT_TOO_SHORT))?;
        let (outer, rest) = crit.split_at(crate::sim::mlx5::MATCH_LEN);
        let any = outer.iter().any(|&b| b != 0);
        if enable & !1 != 0
            || rest.iter().any(|&b| b != 0)
            || (enable == 0 && any)
            || !crate::sim::mlx5::steer::criteria_supported(outer)
        {
            return Err(bad(synd::FG_CRITERIA));
        }
        let mut mask = [0u8; crate::sim::mlx5::MATCH_LEN];
        mask.copy_from_slice(outer);
        let (start, end) = (self.g(FG_START), self.g(FG_END));
        let size = 1u64 << self.row(t).ft.log_size;
        let overlaps = (0..MAX_QUEUES).any(|i| {
            let g = self.row(i).fg;
            g.used && usize::from(g.table) == t && g.start <= end && start <= g.end
        });
        if start > end || u64::from(end) >= size || overlaps {
            return Err(bad(synd::FG_RANGE));
        }
        let p = self.p;
        let slot = self.free(|r| r.fg.used, synd::NO_FS)?;
        self.row(slot).fg = crate::sim::mlx5::FgCtx {
            used: true,
            table: t as u8,
            start,
            end,
            mask,
            users: 0,
        };
        let ft = &mut self.row(t).ft;
        ft.users = ft.users.saturating_add(1);
        set(self.out, ifc::OBJ_NUM, make_qn(FG_BASE, p, slot));
        Ok(())
    }

    /// The slot of flow group `f` (a field of the input) of table `t`.
    fn fs_group(&self, f: ifc::Fld, t: usize) -> Result<usize, Fail> {
        let (_, g) = self.own(f, FG_BASE, |r| r.fg.used, synd::BAD_FG)?;
        let fg = match self.t.row(self.p, g) {
            Some(r) => r.fg,
            None => return Err((status::BAD_RESOURCE, synd::BAD_FG)),
        };
        if usize::from(fg.table) != t {
            return Err((status::BAD_RESOURCE, synd::BAD_FG));
        }
        Ok(g)
    }

    pub(super) fn destroy_flow_group(&mut self) -> CmdResult {
        let t = self.fs_table()?;
        let g = self.fs_group(ifc::fs::FG_ID_IN, t)?;
        if self.row(g).fg.users != 0 {
            return Err((status::RESOURCE_BUSY, synd::FG_IN_USE));
        }
        self.row(g).fg.used = false;
        let ft = &mut self.row(t).ft;
        ft.users = ft.users.saturating_sub(1);
        Ok(())
    }

    /// The slot of the entry at flow index `index` of table `t`.
    fn fte_at(&mut self, t: usize, index: u32) -> Option<usize> {
        (0..MAX_QUEUES).find(|&i| {
            let e = self.row(i).fte;
            e.used && usize::from(e.table) == t && e.index == index
        })
    }

    /// Counts (`on`) or drops the reference an entry's destination holds.
    fn dest_ref(&mut self, d: crate::sim::mlx5::Dest, on: bool) {
        match d {
            crate::sim::mlx5::Dest::Tir(x) => {
                let tc = &mut self.row(usize::from(x)).tir;
                tc.users = if on {
                    tc.users.saturating_add(1)
                } else {
                    tc.users.saturating_sub(1)
                };
            }
            crate::sim::mlx5::Dest::Table(x) => self.table_ref(x.wrapping_add(1), on),
            crate::sim::mlx5::Dest::Drop => {}
        }
    }

    /// SET_FLOW_TABLE_ENTRY: op_mod 0 a new entry, 1 (with a `modify_enable_mask`) the
    /// entry at that index replaced. An entry forwards what its group's criteria match with
    /// its values (the outer headers) to one destination, a TIR or a table of a higher
    /// level (`FWD_DEST`), or drops it (`DROP`); a flow tag is taken and not reported.
    pub(super) fn set_fte(&mut self, op_mod: u32) -> CmdResult {
        use ifc::fs::*;
        let t = self.fs_table()?;
        let g = self.fs_group(FTE_GROUP, t)?;
        let index = self.g(FTE_INDEX);
        let fg = self.row(g).fg;
        let existing = self.fte_at(t, index);
        if index < fg.start || index > fg.end || (op_mod == 0) == existing.is_some() {
            return Err(bad(synd::FTE_INDEX));
        }
        let action = self.g(FTE_ACTION);
        let n = self.g(FTE_DEST_LIST_SIZE);
        if (op_mod == 0 && self.g(FTE_MODIFY_MASK) != 0)
            || self.g(FTE_DEST_FLAGS) != 0
            || self.g(FTE_COUNTER_LIST_SIZE) != 0
            || self.g(FTE_REFORMAT_ID) != 0
            || self.g(FTE_MODIFY_HEADER_ID) != 0
            || !((action == ACTION_FWD_DEST && n == 1) || (action == ACTION_DROP && n == 0))
        {
            return Err(bad(synd::FTE_ACTION));
        }
        let dest = if action == ACTION_DROP {
            crate::sim::mlx5::Dest::Drop
        } else {
            let Some(d) = self.inp.get(FTE_DEST..FTE_DEST + 8) else {
                return Err((status::BAD_INPUT_LEN, synd::INPUT_TOO_SHORT));
            };
            let (ty, id) = (get(d, DEST_TYPE), get(d, DEST_ID));
            if self.inlen < FTE_DEST + 8 {
                return Err((status::BAD_INPUT_LEN, synd::INPUT_TOO_SHORT));
            }
            match ty {
                DEST_TYPE_TIR => match self.t.loc(id, TIRN_BASE, |r| r.tir.used) {
                    Ok((p, s)) if p == self.p => crate::sim::mlx5::Dest::Tir(s as u8),
                    _ => return Err((status::BAD_RESOURCE, synd::BAD_TIR)),
                },
                DEST_TYPE_FLOW_TABLE => match self.t.loc(id, FT_BASE, |r| r.ft.used) {
                    Ok((p, s)) if p == self.p => {
                        // Forward only to a table of a higher level: the walk ends.
                        if self.row(s).ft.level <= self.row(t).ft.level {
                            return Err(bad(synd::FTE_ACTION));
                        }
                        crate::sim::mlx5::Dest::Table(s as u8)
                    }
                    _ => return Err((status::BAD_RESOURCE, synd::BAD_FT)),
                },
                _ => return Err(bad(synd::FTE_ACTION)),
            }
        };
        let m = self
            .inp
            .get(FTE_MATCH..FTE_MATCH + crate::sim::mlx5::MATCH_LEN)
            .ok_or((status::BAD_INPUT_LEN, synd::INPUT_TOO_SHORT))?;
        let mut value = [0u8; crate::sim::mlx5::MATCH_LEN];
        for ((v, &x), &k) in value.iter_mut().zip(m).zip(fg.mask.iter()) {
            *v = x & k;
        }
        let lo = fg.mask.iter().position(|&b| b != 0).unwrap_or(0);
        let hi = fg.mask.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
        let p = self.p;
        let slot = match existing {
            Some(s) => {
                let old = self.row(s).fte.dest;
                self.dest_ref(old, false);
                s
            }
            None => {
                let s = self.free(|r| r.fte.used, synd::NO_FS)?;
                let fg = &mut self.row(g).fg;
                fg.users = fg.users.saturating_add(1);
                s
            }
        };
        self.row(slot).fte = crate::sim::mlx5::FteCtx {
            used: true,
            table: t as u8,
            group: g as u8,
            index,
            mask: fg.mask,
            value,
            lo: lo as u8,
            hi: hi as u8,
            dest,
        };
        self.dest_ref(dest, true);
        self.t.refresh_rx(p, true);
        Ok(())
    }

    pub(super) fn delete_fte(&mut self) -> CmdResult {
        let t = self.fs_table()?;
        let index = self.g(ifc::fs::FTE_INDEX);
        let Some(slot) = self.fte_at(t, index) else {
            return Err(bad(synd::FTE_INDEX));
        };
        let e = self.row(slot).fte;
        self.row(slot).fte.used = false;
        let fg = &mut self.row(usize::from(e.group)).fg;
        fg.users = fg.users.saturating_sub(1);
        self.dest_ref(e.dest, false);
        let p = self.p;
        self.t.refresh_rx(p, true);
        Ok(())
    }

    /// SET_FLOW_TABLE_ROOT: op_mod 0 makes a table the NIC RX root (received frames are
    /// steered by it), op_mod 1 disconnects the root.
    pub(super) fn set_root(&mut self, op_mod: u32) -> CmdResult {
        use ifc::fs::*;
        if self.g(ROOT_UNDERLAY_QPN) != 0 {
            return Err(bad(synd::FT_PARAM));
        }
        let root = if op_mod == 1 {
            if self.g(TABLE_TYPE) != TABLE_TYPE_NIC_RX || self.g(OTHER_VPORT) != 0 {
                return Err(bad(synd::FT_TYPE));
            }
            0
        } else {
            self.fs_table()? as u8 + 1
        };
        self.port().func.root_ft = root;
        let p = self.p;
        self.t.refresh_rx(p, true);
        Ok(())
    }
}
