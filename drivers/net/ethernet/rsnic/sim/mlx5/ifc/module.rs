// SPDX-License-Identifier: GPL-2.0

//! The model's layout of MCIA, the cable module's EEPROM (the handler: `cmd/module.rs`),
//! from mlx5_ifc.h `mcia_reg` and driver.h's register id; bit offsets inside the register
//! (the ACCESS_REG data).

use super::{fld as f, Fld};

/// `MLX5_REG_MCIA` (management cable info access).
pub const MCIA: u32 = 0x9014;
/// `mcia_reg` size in bytes (0x480 bits).
pub const MCIA_LEN: usize = 0x90;

/// `mcia_reg.l`: bit 0 (lock the module's page; the model has nothing to lock).
pub const MCIA_L: Fld = f(0x0, 1);
/// `mcia_reg.module`: bit 0x8 (8).
pub const MCIA_MODULE: Fld = f(0x8, 8);
/// `mcia_reg.status`: bit 0x18 (8).
pub const MCIA_STATUS: Fld = f(0x18, 8);
/// `mcia_reg.i2c_device_address`: bit 0x20 (8).
pub const MCIA_I2C_ADDRESS: Fld = f(0x20, 8);
/// `mcia_reg.page_number`: bit 0x28 (8).
pub const MCIA_PAGE: Fld = f(0x28, 8);
/// `mcia_reg.device_address`: bit 0x30 (16).
pub const MCIA_DEVICE_ADDRESS: Fld = f(0x30, 16);
/// `mcia_reg.size`: bit 0x50 (16).
pub const MCIA_SIZE: Fld = f(0x50, 16);
/// Byte offset of `mcia_reg.dwords`.
pub const MCIA_DWORDS: usize = 0x10;
/// The most one read returns: 12 dwords (the device has no MCAM to offer 32).
pub const MCIA_MAX: usize = 48;

/// MCIA `status`: the module did not answer at that I2C address.
pub const MCIA_STATUS_I2C_ERROR: u32 = 0x9;
