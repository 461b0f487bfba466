// SPDX-License-Identifier: GPL-2.0

//! The model's layouts of the memory key and Q counter commands (the handlers:
//! `cmd/mkey.rs`), from mlx5_ifc.h: CREATE_MKEY (`create_mkey_in`, the `mkc` at byte 0x10) and DESTROY_MKEY.

use super::{fld as f, Fld};

/// `create_mkey_in.pg_access`: bit 0x60 (1).
pub const PG_ACCESS: Fld = f(0x60, 1);
/// `create_mkey_in.mkey_umem_valid`: bit 0x61 (1).
pub const UMEM_VALID: Fld = f(0x61, 1);
/// `mkc.free`: bit 0x81 (1).
pub const FREE: Fld = f(0x81, 1);
/// `mkc.access_mode_4_2`: bit 0x83 (3).
pub const ACCESS_MODE_4_2: Fld = f(0x83, 3);
/// `mkc.umr_en`: bit 0x90 (1).
pub const UMR_EN: Fld = f(0x90, 1);
/// `mkc.lw`: bit 0x94 (1).
pub const LW: Fld = f(0x94, 1);
/// `mkc.lr`: bit 0x95 (1).
pub const LR: Fld = f(0x95, 1);
/// `mkc.access_mode_1_0`: bit 0x96 (2); 0 = PA.
pub const ACCESS_MODE_1_0: Fld = f(0x96, 2);
/// `mkc.qpn`: bit 0xa0 (24).
pub const QPN: Fld = f(0xa0, 0x18);
/// `mkc.mkey_7_0`: bit 0xb8 (8): the key's variant byte, chosen by the driver.
pub const MKEY_7_0: Fld = f(0xb8, 8);
/// `mkc.length64`: bit 0xe0 (1).
pub const LENGTH64: Fld = f(0xe0, 1);
/// `mkc.pd`: bit 0xe8 (24).
pub const PD: Fld = f(0xe8, 0x18);
/// `create_mkey_out.mkey_index` / `destroy_mkey_in.mkey_index`: bit 0x48 (24).
pub const INDEX: Fld = f(0x48, 0x18);

/// ALLOC_Q_COUNTER / QUERY_Q_COUNTER / DEALLOC_Q_COUNTER.
pub mod qcnt {
    use crate::sim::mlx5::ifc::{fld as f, Fld};
    /// `alloc_q_counter_out.counter_set_id` / `dealloc_q_counter_in.counter_set_id`: bit
    /// 0x58 (8).
    pub const SET_ID: Fld = f(0x58, 8);
    /// `query_q_counter_in.other_vport`: bit 0x40.
    pub const OTHER_VPORT: Fld = f(0x40, 1);
    /// `query_q_counter_in.clear`: bit 0xc0.
    pub const CLEAR: Fld = f(0xc0, 1);
    /// `query_q_counter_in.aggregate`: bit 0xc1.
    pub const AGGREGATE: Fld = f(0xc1, 1);
    /// `query_q_counter_in.counter_set_id`: bit 0xf8 (8).
    pub const QUERY_SET_ID: Fld = f(0xf8, 8);
    /// `query_q_counter_out.out_of_buffer`: bit 0x180 (32).
    pub const OUT_OF_BUFFER: Fld = f(0x180, 0x20);
    /// Size of `query_q_counter_out`.
    pub const OUT_LEN: usize = 0x100;
}
