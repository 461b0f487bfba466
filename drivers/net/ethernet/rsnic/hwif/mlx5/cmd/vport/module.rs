// SPDX-License-Identifier: GPL-2.0

//! The port's cable module and its EEPROM through ACCESS_REG, as mlx5e reads them for
//! `ethtool -m` (port.c `mlx5_query_module_num`, `mlx5_query_module_id`,
//! `mlx5_query_mcia`, `mlx5_query_module_eeprom`, `mlx5_query_module_eeprom_by_page`;
//! en_ethtool.c `mlx5e_get_module_info`): the module number from PMLP's lane 0, then MCIA
//! reads of at most 48 bytes (12 dwords: the device has no MCAM, so no `mcia_32dwords`)
//! of one page of the module's two-wire interface. Re-exported by the parent module.
//!
//! Addressing as mlx5: a QSFP module's flat offsets 0..=255 are the lower page and upper
//! page 00h at I2C address 0x50, 256..=639 the upper pages 01h..03h (128 bytes each); an
//! SFP's 0..=255 are address 0x50 and 256..=511 address 0x51 (SFF-8472's diagnostics). A
//! read never crosses a 256-byte page.

use super::fec::reg_data;
use super::reg::{access_reg, ACCESS_REG_READ};
use super::{access_reg_len, Field, FormatError, PMLP_LEN};

/// Register id of MCIA, the module's EEPROM (`MLX5_REG_MCIA`).
pub const REG_MCIA: u16 = 0x9014;
/// `mcia_reg` length (0x480 bits: 16 bytes of header, 128 of data).
pub const MCIA_LEN: usize = 0x90;

/// `mcia_reg.module`: bit 0x8, 8 bits.
pub const MCIA_MODULE: Field = Field::new(0x8, 8);
/// `mcia_reg.status`: bit 0x18, 8 bits (0: the read succeeded).
pub const MCIA_STATUS: Field = Field::new(0x18, 8);
/// `mcia_reg.i2c_device_address`: bit 0x20, 8 bits.
pub const MCIA_I2C_ADDRESS: Field = Field::new(0x20, 8);
/// `mcia_reg.page_number`: bit 0x28, 8 bits.
pub const MCIA_PAGE: Field = Field::new(0x28, 8);
/// `mcia_reg.device_address`: bit 0x30, 16 bits (the byte offset in the page).
pub const MCIA_DEVICE_ADDRESS: Field = Field::new(0x30, 16);
/// `mcia_reg.size`: bit 0x50, 16 bits (bytes to read).
pub const MCIA_SIZE: Field = Field::new(0x50, 16);
/// Byte offset of `mcia_reg.dwords`, the data read.
pub const MCIA_DATA: usize = 0x10;
/// The most an MCIA read returns (`mlx5_mcia_max_bytes` without `mcia_32dwords`).
pub const MCIA_MAX_BYTES: usize = 48;

/// `pmlp_reg.lane0_module_mapping.module`: bit 0x20 + 0x18, 8 bits.
pub const PMLP_LANE0_MODULE: Field = Field::new(0x38, 8);

/// The lower I2C address of a module (`MLX5_I2C_ADDR_LOW`).
pub const I2C_ADDR_LOW: u8 = 0x50;
/// The upper one, an SFP's diagnostics (`MLX5_I2C_ADDR_HIGH`).
pub const I2C_ADDR_HIGH: u8 = 0x51;
/// A page as the flat addressing counts it (`MLX5_EEPROM_PAGE_LENGTH`).
pub const PAGE_LEN: usize = 256;
/// An upper page (`MLX5_EEPROM_HIGH_PAGE_LENGTH`).
pub const HIGH_PAGE_LEN: usize = 128;

/// Module identifiers (SFF-8024, byte 0), the ones mlx5e knows (`MLX5_MODULE_ID_*`).
pub mod module_id {
    /// SFP or SFP+.
    pub const SFP: u8 = 0x03;
    /// QSFP.
    pub const QSFP: u8 = 0x0c;
    /// QSFP+.
    pub const QSFP_PLUS: u8 = 0x0d;
    /// QSFP28.
    pub const QSFP28: u8 = 0x11;
}

/// The EEPROM layouts ethtool decodes (`ETH_MODULE_SFF_*` of uapi ethtool.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EepromLayout {
    /// SFF-8436 (QSFP, QSFP+ before revision 3), 256 bytes.
    Sff8436,
    /// SFF-8636 (QSFP28, QSFP+ from revision 3), 640 bytes.
    Sff8636,
    /// SFF-8472 (SFP), 512 bytes.
    Sff8472,
}

impl EepromLayout {
    /// The layout of a module with identifier `id` and revision `rev` (bytes 0 and 1), as
    /// `mlx5e_get_module_info` (`None`: a module mlx5e does not recognize).
    pub fn of(id: u8, rev: u8) -> Option<Self> {
        match id {
            module_id::QSFP => Some(Self::Sff8436),
            module_id::QSFP_PLUS | module_id::QSFP28 if id == module_id::QSFP28 || rev >= 3 => {
                Some(Self::Sff8636)
            }
            module_id::QSFP_PLUS => Some(Self::Sff8436),
            module_id::SFP => Some(Self::Sff8472),
            _ => None,
        }
    }

    /// Its length in bytes (`ETH_MODULE_SFF_*_LEN`/`_MAX_LEN`).
    pub fn bytes(self) -> usize {
        match self {
            Self::Sff8436 => 256,
            Self::Sff8636 => 640,
            Self::Sff8472 => 512,
        }
    }
}

/// One MCIA read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MciaRead {
    /// The module (PMLP's lane 0).
    pub module: u8,
    /// I2C address ([`I2C_ADDR_LOW`] or [`I2C_ADDR_HIGH`]).
    pub i2c_address: u8,
    /// Page number.
    pub page: u8,
    /// Byte offset in the page.
    pub offset: u16,
    /// Bytes to read (cut to [`MCIA_MAX_BYTES`] by [`mcia_query`]).
    pub size: u16,
}

impl MciaRead {
    /// The read of flat offset `offset` (`len` bytes wanted) of a module with identifier
    /// `id`, as `mlx5_query_module_eeprom` places it: `None` for a module it does not know;
    /// the size cut at the end of the 256-byte page and to [`MCIA_MAX_BYTES`].
    pub fn flat(module: u8, id: u8, offset: usize, len: usize) -> Option<Self> {
        let (i2c_address, page, off) = match id {
            module_id::SFP if offset < PAGE_LEN => (I2C_ADDR_LOW, 0, offset),
            module_id::SFP => (I2C_ADDR_HIGH, 0, offset - PAGE_LEN),
            module_id::QSFP | module_id::QSFP_PLUS | module_id::QSFP28 if offset < PAGE_LEN => {
                (I2C_ADDR_LOW, 0, offset)
            }
            module_id::QSFP | module_id::QSFP_PLUS | module_id::QSFP28 => {
                let page = 1 + (offset - PAGE_LEN) / HIGH_PAGE_LEN;
                (I2C_ADDR_LOW, page, offset - page * HIGH_PAGE_LEN)
            }
            _ => return None,
        };
        let size = len.min(PAGE_LEN.saturating_sub(off)).min(MCIA_MAX_BYTES);
        Some(Self {
            module,
            i2c_address,
            page: u8::try_from(page).ok()?,
            offset: u16::try_from(off).ok()?,
            size: size as u16,
        })
    }
}

/// MCIA read `r` (`mlx5_query_mcia`): `size` cut to [`MCIA_MAX_BYTES`].
pub fn mcia_query(buf: &mut [u8], r: &MciaRead) -> Result<usize, FormatError> {
    let d = access_reg(buf, REG_MCIA, MCIA_LEN, ACCESS_REG_READ)?;
    // (access_reg's local port sits where MCIA has its module.)
    MCIA_MODULE.set(d, u64::from(r.module));
    MCIA_I2C_ADDRESS.set(d, u64::from(r.i2c_address));
    MCIA_PAGE.set(d, u64::from(r.page));
    MCIA_DEVICE_ADDRESS.set(d, u64::from(r.offset));
    MCIA_SIZE.set(d, u64::from(r.size).min(MCIA_MAX_BYTES as u64));
    Ok(access_reg_len(MCIA_LEN))
}

/// Parses an MCIA read: its status, and on status 0 the bytes read copied into `data`
/// (at most its length and [`MCIA_MAX_BYTES`]).
pub fn parse_mcia(out: &[u8], data: &mut [u8]) -> Result<u8, FormatError> {
    let d = reg_data(out, MCIA_LEN)?;
    let status = MCIA_STATUS.get8(d);
    if status == 0 {
        let n = data.len().min(MCIA_MAX_BYTES);
        let src = d
            .get(MCIA_DATA..MCIA_DATA + n)
            .ok_or(FormatError::BadParam)?;
        data[..n].copy_from_slice(src);
    }
    Ok(status)
}

/// Parses a PMLP read ([`super::pmlp_query`]): the module of lane 0
/// (`mlx5_query_module_num`).
pub fn parse_pmlp_module(out: &[u8]) -> Result<u8, FormatError> {
    Ok(PMLP_LANE0_MODULE.get8(reg_data(out, PMLP_LEN)?))
}

/// What an MCIA status means (port.c's `mlx5_mcia_err_msg` has none in 6.12; these are
/// the PRM's codes), for the log.
pub fn mcia_status_name(status: u8) -> &'static str {
    match status {
        0x1 => "no EEPROM module",
        0x2 => "module not supported",
        0x3 => "module not connected",
        0x9 => "I2C error",
        0x10 => "module disabled",
        _ => "unknown status",
    }
}
