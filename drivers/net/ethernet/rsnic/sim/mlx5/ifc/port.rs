// SPDX-License-Identifier: GPL-2.0

//! The model's layouts of the port capability and FEC registers (the handler:
//! `cmd/port.rs`), from mlx5_ifc.h: `pcam_reg` (with `pcam_regs_5000_to_507f` and
//! `pcam_enhanced_features`), `pplm_reg`, `pmlp_reg`, `pddr_reg` (with
//! `pddr_troubleshooting_page`); the register ids of driver.h; the
//! PPCNT physical layer statistical group (`phys_layer_statistical_cntrs`) of device.h. Bit
//! offsets are inside the register (the ACCESS_REG data).

use super::{fld as f, Fld};

/// `MLX5_REG_PMLP` (port module to local port lane mapping).
pub const PMLP: u32 = 0x5002;
/// `MLX5_REG_PPLM` (port phy link mode: FEC).
pub const PPLM: u32 = 0x5023;
/// `MLX5_REG_PCAM` (port capabilities mask).
pub const PCAM: u32 = 0x507f;
/// `MLX5_REG_PDDR` (port diagnostics database).
pub const PDDR: u32 = 0x5031;

/// `pcam_reg` size in bytes (0x280 bits).
pub const PCAM_LEN: usize = 0x50;
/// `pplm_reg` size in bytes (0x280 bits).
pub const PPLM_LEN: usize = 0x50;
/// `pmlp_reg` size in bytes (0x200 bits).
pub const PMLP_LEN: usize = 0x40;
/// `pddr_reg` size in bytes (0x800 bits).
pub const PDDR_LEN: usize = 0x100;

/// `pddr_reg.pnat`: bit 0x10 (2); 0 = `local_port` is the local port number.
pub const PDDR_PNAT: Fld = f(0x10, 2);
/// `pddr_reg.page_select`: bit 0x38 (8).
pub const PDDR_PAGE_SELECT: Fld = f(0x38, 8);
/// `page_select` of the troubleshooting page
/// (`MLX5_PDDR_REG_PAGE_SELECT_TROUBLESHOOTING_INFO_PAGE`).
pub const PDDR_PAGE_TROUBLESHOOTING: u32 = 1;
/// `pddr_troubleshooting_page.group_opcode`: bit 0x40 + 0x10 (16); 0 =
/// `MLX5_PDDR_REG_TRBLSH_GROUP_OPCODE_MONITOR`.
pub const PDDR_GROUP_OPCODE: Fld = f(0x50, 0x10);
/// `pddr_troubleshooting_page.status_opcode.pddr_monitor_opcode.monitor_opcode`: bit
/// 0x40 + 0x30 (16).
pub const PDDR_MONITOR_OPCODE: Fld = f(0x70, 0x10);

/// `pcam_reg.feature_group`: bit 0x8 (8); 0 = `MLX5_PCAM_FEATURE_ENHANCED_FEATURES`.
pub const PCAM_FEATURE_GROUP: Fld = f(0x8, 8);
/// `pcam_reg.access_reg_group`: bit 0x18 (8); 0 = `MLX5_PCAM_REGS_5000_TO_507F`.
pub const PCAM_ACCESS_REG_GROUP: Fld = f(0x18, 8);
/// `pcam_reg.port_access_reg_cap_mask`: bit 0x40, 128 bits; register 0x5000 + n is bit
/// 127 - n of it (`pplm` = 0x23 at bit 0x9c, `ppcnt` = 0x08 at bit 0xb7).
pub const PCAM_REG_MASK: usize = 0x40;
/// `pcam_enhanced_features.ppcnt_statistical_group`: bit 0x140 + 0x7f.
pub const PCAM_PPCNT_STATISTICAL_GROUP: Fld = f(0x1bf, 1);
/// `pcam_enhanced_features.fec_50G_per_lane_in_pplm`: bit 0x140 + 0x68.
pub const PCAM_FEC_50G_PER_LANE: Fld = f(0x1a8, 1);
/// `pcam_enhanced_features.fec_100G_per_lane_in_pplm`: bit 0x140 + 0x48.
pub const PCAM_FEC_100G_PER_LANE: Fld = f(0x188, 1);

/// The bit of register `id` (0x5000..=0x507f) in `port_access_reg_cap_mask`.
pub const fn pcam_reg_bit(id: u32) -> Fld {
    f(PCAM_REG_MASK + 127 - (id - 0x5000) as usize, 1)
}

/// `pplm_reg.fec_mode_active`: bit 0x68 (24): bit n = FEC mode n is running.
pub const PPLM_FEC_MODE_ACTIVE: Fld = f(0x68, 0x18);
/// `pplm_reg.rs_fec_correction_bypass_admin`: bit 0xa0 (4).
pub const PPLM_RS_BYPASS_ADMIN: Fld = f(0xa0, 4);
/// The legacy per-speed fields, in upstream's order of `mlx5e_fec_supported_link_mode`
/// (10G/40G, 25G, 50G, 56G, 100G): `fec_override_cap_*` (4 bits each).
pub const PPLM_CAP: [Fld; 5] = [f(0x9c, 4), f(0x98, 4), f(0x94, 4), f(0x8c, 4), f(0x90, 4)];
/// `fec_override_admin_*` of the same speeds (4 bits each).
pub const PPLM_ADMIN: [Fld; 5] = [f(0xbc, 4), f(0xb8, 4), f(0xb4, 4), f(0xac, 4), f(0xb0, 4)];
/// The 16-bit admin fields of the 50G- and 100G-per-lane speeds (50g_1x, 100g_2x,
/// 200g_4x, 400g_8x, 100g_1x, 200g_2x, 400g_4x, 800g_8x).
pub const PPLM_ADMIN_PER_LANE: [Fld; 8] = [
    f(0x130, 0x10),
    f(0x120, 0x10),
    f(0x110, 0x10),
    f(0x100, 0x10),
    f(0x250, 0x10),
    f(0x240, 0x10),
    f(0x230, 0x10),
    f(0x220, 0x10),
];
/// Index in [`PPLM_CAP`] / [`PPLM_ADMIN`] of 100G (`MLX5E_FEC_SUPPORTED_LINK_MODES_100G`).
pub const PPLM_100G: usize = 4;
/// FEC mode bit of no FEC (`1 << MLX5E_FEC_NOFEC`).
pub const FEC_NONE: u32 = 1 << 0;
/// FEC mode bit of FireCode (BASE-R, Clause 74) FEC (`1 << MLX5E_FEC_FIRECODE`).
pub const FEC_FIRECODE: u32 = 1 << 1;
/// FEC mode bit of RS-FEC (528,514) (`1 << MLX5E_FEC_RS_528_514`).
pub const FEC_RS_528: u32 = 1 << 2;

/// `pmlp_reg.width`: bit 0x18 (8): lanes of the port.
pub const PMLP_WIDTH: Fld = f(0x18, 8);

/// `grp` of the physical layer statistical counters (`MLX5_PHYSICAL_LAYER_STATISTICAL_GROUP`).
pub const PPCNT_PHYS_STATISTICAL: u32 = 0x16;
