// SPDX-License-Identifier: GPL-2.0

//! The port's cable module for `ethtool -m`: its number from PMLP's lane 0, its identifier
//! from the first two bytes of its EEPROM, then reads of at most 48 bytes through MCIA,
//! never across a 256-byte page; every read asked of the device at the time, nothing
//! cached (a module can be swapped).
//!
//! Upstream counterpart: en_ethtool.c `mlx5e_get_module_info`, `mlx5e_get_module_eeprom`,
//! `mlx5e_get_module_eeprom_by_page`; port.c `mlx5_query_module_eeprom[_by_page]`.

use crate::family::mlx5::ctrl::Func;
use crate::hwif::mlx5::cmd::vport::{self, EepromLayout, MciaRead};
use crate::kernel_ext::net::ethtool::{module_layout, ExtAck, ModuleInfo, ModulePage};
use kernel::{c_str, prelude::*};

impl Func {
    /// The module of the port's lane 0 (PMLP). Sleeps.
    fn module_number(&self) -> Result<u8> {
        self.read_reg(
            vport::PMLP_LEN,
            vport::pmlp_query,
            vport::parse_pmlp_module,
            format_args!("PMLP read"),
        )
    }

    /// One MCIA read `r` into `data` (at least `r.size` bytes); returns the bytes read. A
    /// status other than 0 is `EIO`, logged with the status. Sleeps.
    fn mcia(&self, r: &MciaRead, data: &mut [u8]) -> Result<usize> {
        let n = usize::from(r.size)
            .min(vport::MCIA_MAX_BYTES)
            .min(data.len());
        let len = vport::access_reg_len(vport::MCIA_LEN);
        let out = self.cmd(len, len, |b| vport::mcia_query(b, r))?;
        let status = vport::parse_mcia(&out, &mut data[..n]).map_err(|_| {
            pr_err!(
                "port {}: MCIA read returned a malformed output\n",
                self.port
            );
            EIO
        })?;
        if status != 0 {
            pr_err!(
                "port {}: reading the cable module (MCIA page {} offset {}): status {:#x}, {}\n",
                self.port,
                r.page,
                r.offset,
                status,
                vport::mcia_status_name(status)
            );
            return Err(EIO);
        }
        Ok(n)
    }

    /// The module's number and identifier (EEPROM byte 0) and revision (byte 1). Sleeps.
    fn module_id(&self) -> Result<(u8, u8, u8)> {
        let module = self.module_number()?;
        let mut b = [0u8; 2];
        let r = MciaRead {
            module,
            i2c_address: vport::I2C_ADDR_LOW,
            page: 0,
            offset: 0,
            size: 2,
        };
        if self.mcia(&r, &mut b)? < 2 {
            return Err(EIO);
        }
        Ok((module, b[0], b[1]))
    }
}

/// `ethtool -m`'s first question: the layout of the module's EEPROM. A module whose
/// identifier mlx5e does not know is `EINVAL`, logged (as mlx5e).
pub(in crate::family::mlx5) fn module_info(func: &Func) -> Result<ModuleInfo> {
    let (_, id, rev) = func.module_id()?;
    let Some(layout) = EepromLayout::of(id, rev) else {
        pr_err!("port {}: cable type not recognized: {:#x}\n", func.port, id);
        return Err(EINVAL);
    };
    Ok(ModuleInfo {
        layout: match layout {
            EepromLayout::Sff8436 => module_layout::SFF_8436,
            EepromLayout::Sff8636 => module_layout::SFF_8636,
            EepromLayout::Sff8472 => module_layout::SFF_8472,
        },
        len: layout.bytes() as u32,
    })
}

/// Fills `buf` from flat offset `offset` of the module's EEPROM (the ioctl path), in reads
/// that never cross a page.
pub(in crate::family::mlx5) fn module_eeprom(func: &Func, offset: u32, buf: &mut [u8]) -> Result {
    if buf.is_empty() {
        return Err(EINVAL);
    }
    buf.fill(0);
    let (module, id, _) = func.module_id()?;
    let mut done = 0;
    while done < buf.len() {
        let at = offset as usize + done;
        let Some(r) = MciaRead::flat(module, id, at, buf.len() - done) else {
            return Err(EINVAL);
        };
        if r.size == 0 {
            break;
        }
        let n = func.mcia(&r, &mut buf[done..])?;
        if n == 0 {
            break;
        }
        done += n;
    }
    Ok(())
}

/// Reads one page of the module's EEPROM as the netlink request `page` names it; returns
/// the bytes read.
pub(in crate::family::mlx5) fn module_page(
    func: &Func,
    page: &ModulePage,
    buf: &mut [u8],
    extack: &mut ExtAck,
) -> Result<usize> {
    if buf.is_empty() {
        return Err(EINVAL);
    }
    if page.i2c_address != vport::I2C_ADDR_LOW && page.i2c_address != vport::I2C_ADDR_HIGH {
        extack.set_message(c_str!("I2C address not recognized"));
        return Err(EINVAL);
    }
    buf.fill(0);
    let module = func.module_number()?;
    let mut done = 0;
    while done < buf.len() {
        let r = MciaRead {
            module,
            i2c_address: page.i2c_address,
            page: page.page,
            offset: u16::try_from(page.offset as usize + done).map_err(|_| EINVAL)?,
            size: (buf.len() - done).min(vport::MCIA_MAX_BYTES) as u16,
        };
        match func.mcia(&r, &mut buf[done..]) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) => {
                extack.set_message(c_str!("Query module eeprom by page failed"));
                return Err(e);
            }
        }
    }
    Ok(done)
}
