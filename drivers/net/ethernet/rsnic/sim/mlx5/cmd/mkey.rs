// SPDX-License-Identifier: GPL-2.0

//! The device's half of the memory key and Q counter commands (the driver's is
//! `hwif/mlx5/cmd/mkey.rs`): CREATE_MKEY / DESTROY_MKEY (physical-address keys, local read and
//! write) and the lkey check of the data path, ALLOC_Q_COUNTER / DEALLOC_Q_COUNTER /
//! QUERY_Q_COUNTER (`out_of_buffer`). PRM "Memory Key Commands", "Q Counters"; upstream mr.c
//! (`mlx5_core_create_mkey`), en_main.c / en_stats.c; layouts `create_mkey_in` with `mkc`,
//! the `*_q_counter_*` structures of mlx5_ifc.h.

use super::{bad, synd, CmdResult, Cx, Fail, Func};
use crate::hwif::hw::BusMemory;
use crate::sim::mlx5::ifc::{self, set, status};
use crate::sim::mlx5::MAX_QUEUES;

/// Memory keys per function.
pub const MAX_MKEYS: usize = 8;

/// Q counters per function (`max_qp_cnt`); their set ids are 1..=Q_COUNTERS.
pub const Q_COUNTERS: usize = 8;

/// The first memory key index CREATE_MKEY hands out (key = index << 8 | variant; index 1
/// with variant 0 would be 0x100, the RX scatter list's terminating lkey).
pub const MKEY_INDEX_BASE: u32 = 0x20;

impl Func {
    /// Whether `lkey` is one of the function's memory keys (`index << 8 | variant`); any
    /// key while it has none (see [`crate::sim::mlx5::engine::sq::lkey_ok`]).
    pub(in crate::sim::mlx5) fn lkey_ok(&self, lkey: u32) -> bool {
        if self.mkeys == 0 {
            return true;
        }
        let i = (lkey >> 8).wrapping_sub(MKEY_INDEX_BASE) as usize;
        i < MAX_MKEYS && self.mkeys & (1u8 << i) != 0 && self.mkey_var.get(i) == Some(&(lkey as u8))
    }
}

impl<M: BusMemory> Cx<'_, '_, M> {
    /// CREATE_MKEY: a physical-address (PA) key for local reads and writes of all memory
    /// (`length64`) in a PD of the function, what mlx5e's `mlx5e_create_mkey` makes. Its
    /// key is `index << 8 | mkey_7_0`. From the function's first key on, the device checks
    /// the lkey of every data segment (see the module documentation).
    pub(super) fn create_mkey(&mut self) -> CmdResult {
        use ifc::mkey::*;
        if self.g(PG_ACCESS) != 0
            || self.g(UMEM_VALID) != 0
            || self.g(FREE) != 0
            || self.g(ACCESS_MODE_4_2) != 0
            || self.g(ACCESS_MODE_1_0) != 0
            || self.g(UMR_EN) != 0
            || self.g(LW) == 0
            || self.g(LR) == 0
            || self.g(LENGTH64) == 0
        {
            return Err(bad(synd::MKEY_PARAM));
        }
        self.alloc_slot(1, self.g(PD))
            .map_err(|_| bad(synd::MKEY_PARAM))?;
        let var = self.g(MKEY_7_0) as u8;
        let f = &mut self.port().func;
        let i = (!f.mkeys).trailing_zeros() as usize;
        if i >= MAX_MKEYS {
            return Err((status::NO_RESOURCES, synd::NO_MKEY));
        }
        f.mkeys |= 1u8 << i;
        f.mkey_var[i] = var;
        set(self.out, INDEX, MKEY_INDEX_BASE + i as u32);
        Ok(())
    }

    /// The slot of memory key index `index` of this function.
    fn mkey_slot(&mut self, index: u32) -> Result<usize, Fail> {
        let i = index.wrapping_sub(MKEY_INDEX_BASE) as usize;
        if i < MAX_MKEYS && self.port().func.mkeys & (1u8 << i) != 0 {
            Ok(i)
        } else {
            Err((status::BAD_RESOURCE, synd::BAD_MKEY))
        }
    }

    /// The slot of Q counter set id `id` of this function.
    pub(super) fn qcnt_slot(&mut self, id: u32) -> Result<usize, Fail> {
        let i = id.wrapping_sub(1) as usize;
        if i < Q_COUNTERS && self.port().func.qcnts & (1u8 << i) != 0 {
            Ok(i)
        } else {
            Err((status::BAD_RESOURCE, synd::BAD_Q_COUNTER))
        }
    }

    /// DESTROY_MKEY.
    pub(super) fn destroy_mkey(&mut self) -> CmdResult {
        let i = self.mkey_slot(self.g(ifc::mkey::INDEX))?;
        self.port().func.mkeys &= !(1u8 << i);
        Ok(())
    }

    /// ALLOC_Q_COUNTER: the lowest free set id, its count starting from now.
    pub(super) fn alloc_q_counter(&mut self) -> CmdResult {
        let f = &mut self.port().func;
        let i = (!f.qcnts).trailing_zeros() as usize;
        if i >= Q_COUNTERS {
            return Err((status::NO_RESOURCES, synd::NO_Q_COUNTER));
        }
        f.qcnts |= 1u8 << i;
        f.qcnt_base[i] = f.qcnt_oob[i];
        set(self.out, ifc::qcnt::SET_ID, i as u32 + 1);
        Ok(())
    }

    /// DEALLOC_Q_COUNTER of a set no RQ names.
    pub(super) fn dealloc_q_counter(&mut self) -> CmdResult {
        let i = self.qcnt_slot(self.g(ifc::qcnt::SET_ID))?;
        let busy = (0..MAX_QUEUES).any(|r| {
            let q = self.row(r).rq;
            q.used && usize::from(q.counter) == i + 1
        });
        if busy {
            return Err((status::RESOURCE_BUSY, synd::ALLOC_IN_USE));
        }
        self.port().func.qcnts &= !(1u8 << i);
        Ok(())
    }

    /// QUERY_Q_COUNTER: `out_of_buffer` since allocation or the last clear.
    pub(super) fn query_q_counter(&mut self) -> CmdResult {
        use ifc::qcnt::*;
        if self.g(OTHER_VPORT) != 0 || self.g(AGGREGATE) != 0 {
            return Err(bad(synd::OTHER_FUNCTION));
        }
        let i = self.qcnt_slot(self.g(QUERY_SET_ID))?;
        let clear = self.g(CLEAR) != 0;
        let f = &mut self.port().func;
        let v = f.qcnt_oob[i].wrapping_sub(f.qcnt_base[i]);
        if clear {
            f.qcnt_base[i] = f.qcnt_oob[i];
        }
        set(self.out, OUT_OF_BUFFER, v);
        Ok(())
    }
}
