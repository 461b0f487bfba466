// SPDX-License-Identifier: GPL-2.0

//! The model's layouts of the firmware-page commands (the handlers: `cmd/pages.rs`), from
//! mlx5_ifc.h: QUERY_PAGES / MANAGE_PAGES (`query_pages_in/out`, `manage_pages_in/out`).

use super::{fld as f, Fld};

/// `*.embedded_cpu_function`: bit 0x40 (1).
pub const EMBEDDED_CPU_FUNCTION: Fld = f(0x40, 1);
/// `*.function_id`: bit 0x50 (16).
pub const FUNCTION_ID: Fld = f(0x50, 0x10);
/// `query_pages_out.num_pages`: bit 0x60 (32, signed).
pub const NUM_PAGES: Fld = f(0x60, 0x20);
/// `manage_pages_in.input_num_entries`: bit 0x60 (32).
pub const INPUT_NUM_ENTRIES: Fld = f(0x60, 0x20);
/// `manage_pages_out.output_num_entries`: bit 0x40 (32).
pub const OUTPUT_NUM_ENTRIES: Fld = f(0x40, 0x20);
/// `manage_pages_in.pas[]` and `manage_pages_out.pas[]`: byte 0x10, 8 bytes each.
pub const PAS: usize = 0x10;
/// `MLX5_QUERY_PAGES_IN_OP_MOD_BOOT_PAGES`.
pub const BOOT: u32 = 1;
/// `MLX5_QUERY_PAGES_IN_OP_MOD_INIT_PAGES`.
pub const INIT: u32 = 2;
/// `MLX5_QUERY_PAGES_IN_OP_MOD_REGULAR_PAGES`.
pub const REGULAR: u32 = 3;
/// `MLX5_PAGES_CANT_GIVE` (manage_pages op_mod).
pub const CANT_GIVE: u32 = 0;
/// `MLX5_PAGES_GIVE`.
pub const GIVE: u32 = 1;
/// `MLX5_PAGES_TAKE`.
pub const TAKE: u32 = 2;
/// `mlx5_eqe_page_req.func_id` (BE16) inside the EQE.
pub const EQE_FUNC_ID: usize = 0x22;
/// `mlx5_eqe_page_req.num_pages` (BE32, signed) inside the EQE.
pub const EQE_NUM_PAGES: usize = 0x24;
