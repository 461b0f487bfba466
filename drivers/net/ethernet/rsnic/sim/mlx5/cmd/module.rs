// SPDX-License-Identifier: GPL-2.0

//! The device's half of MCIA, the port's cable module EEPROM through ACCESS_REG (what
//! mlx5e reads for `ethtool -m`: port.c `mlx5_query_module_eeprom`). Layout in
//! [`crate::sim::mlx5::ifc::module`].
//!
//! Each port has one module, number 0 (PMLP's lane 0 names it): a QSFP28 passive copper
//! cable of 1 m (SFF-8636 revision 2.8-2.10, flat memory: only the lower page and upper page
//! 00h), 100GBASE-CR4 with RS-FEC, no monitoring, as the port's five modes (10-100G
//! direct-attach copper) need. A read is at most 48 bytes (12 dwords: no MCAM offers 32),
//! inside one 256-byte page at I2C address 0x50; a flat-memory module ignores the page
//! select byte, so every page reads as page 00h. Another I2C address: status 0x9 (the
//! module does not answer there). A read crossing the page, larger than 48 bytes or of
//! another module, and any write, are refused with BAD_PARAM.

use super::{bad, synd, CmdResult, Cx};
use crate::hwif::hw::BusMemory;
use crate::sim::mlx5::ifc::{self, get, module::*, set, status};

/// The module's identifier: QSFP28 (SFF-8024).
pub const MODULE_ID: u8 = 0x11;
/// The module's vendor name (upper page 00h, bytes 148..=163, space-padded).
pub const VENDOR_NAME: &[u8; 16] = b"RSNIC MODEL     ";
/// Its part number (bytes 168..=183).
pub const VENDOR_PN: &[u8; 16] = b"RSNIC-QSFP28-1M ";
/// Its serial number (bytes 196..=211).
pub const VENDOR_SN: &[u8; 16] = b"RS0000000000001 ";

/// The module's EEPROM as seen at I2C address 0x50 on page 0: the lower page (0..=127)
/// and upper page 00h (128..=255), SFF-8636.
pub const EEPROM: [u8; 256] = eeprom();

const fn copy(e: &mut [u8; 256], at: usize, s: &[u8]) {
    let mut i = 0;
    while i < s.len() {
        e[at + i] = s[i];
        i += 1;
    }
}

/// The low byte of the sum of bytes `from..to` (SFF-8636's CC_BASE and CC_EXT).
const fn checksum(e: &[u8; 256], from: usize, to: usize) -> u8 {
    let mut sum = 0u32;
    let mut i = from;
    while i < to {
        sum += e[i] as u32;
        i += 1;
    }
    (sum & 0xff) as u8
}

const fn eeprom() -> [u8; 256] {
    let mut e = [0u8; 256];
    e[0] = MODULE_ID;
    // Revision compliance: SFF-8636 rev 2.8, 2.9 or 2.10.
    e[1] = 0x08;
    // Status: flat memory (bit 2), data ready (bit 0 clear).
    e[2] = 0x04;
    // Upper page 00h.
    e[128] = MODULE_ID;
    // Extended identifier: power class 1 (1.5 W), no CDR.
    e[129] = 0x00;
    // Connector: no separable connector (a cable assembly).
    e[130] = 0x23;
    // Specification compliance: the extended codes of byte 192 apply.
    e[131] = 0x80;
    // Encoding: 64B/66B.
    e[139] = 0x05;
    // Nominal bit rate: above 25.4 Gb/s, in byte 222.
    e[140] = 0xff;
    // Length of copper cable: 1 m.
    e[146] = 1;
    // Device technology: copper cable, unequalized.
    e[147] = 0xa0;
    copy(&mut e, 148, VENDOR_NAME);
    copy(&mut e, 168, VENDOR_PN);
    copy(&mut e, 184, b"A0");
    // Copper cable attenuation at 2.5, 5, 7 and 12.9 GHz, in dB.
    e[186] = 2;
    e[187] = 3;
    e[188] = 4;
    e[189] = 6;
    e[191] = checksum(&e, 128, 191);
    // Extended specification compliance (SFF-8024): 100GBASE-CR4, 25GBASE-CR CA-25G-L or
    // 50GBASE-CR2 with RS (Clause 91) FEC.
    e[192] = 0x0b;
    copy(&mut e, 196, VENDOR_SN);
    copy(&mut e, 212, b"261201  ");
    // Nominal bit rate in units of 250 Mb/s: 25.78125 Gb/s per lane.
    e[222] = 103;
    e[223] = checksum(&e, 192, 223);
    e
}

impl<M: BusMemory> Cx<'_, '_, M> {
    /// ACCESS_REG of MCIA (`None` for another register).
    pub(super) fn access_module_reg(&mut self, id: u32, op_mod: u32) -> Option<CmdResult> {
        (id == MCIA).then(|| self.mcia(op_mod))
    }

    fn mcia(&mut self, op_mod: u32) -> CmdResult {
        use ifc::reg::{DATA, OP_WRITE};
        if self.inlen < DATA + MCIA_LEN {
            return Err((status::BAD_INPUT_LEN, synd::REG_LENGTH));
        }
        if self.outlen < DATA + MCIA_LEN {
            return Err((status::BAD_OUTPUT_LEN, synd::REG_LENGTH));
        }
        if op_mod == OP_WRITE {
            // The cable's EEPROM is read-only (its writable bytes are controls a passive
            // cable has not).
            return Err(bad(synd::REG_READ_ONLY));
        }
        let r = self.inp.get(DATA..DATA + MCIA_LEN).unwrap_or_default();
        let (module, i2c) = (get(r, MCIA_MODULE), get(r, MCIA_I2C_ADDRESS));
        let (page, offset, size) = (
            get(r, MCIA_PAGE),
            get(r, MCIA_DEVICE_ADDRESS) as usize,
            get(r, MCIA_SIZE) as usize,
        );
        if module != 0 {
            return Err(bad(synd::MCIA_MODULE));
        }
        if size > MCIA_MAX {
            return Err(bad(synd::MCIA_SIZE));
        }
        if offset + size > EEPROM.len() {
            return Err(bad(synd::MCIA_RANGE));
        }
        let Some(o) = self.out.get_mut(DATA..DATA + MCIA_LEN) else {
            return Ok(());
        };
        set(o, MCIA_MODULE, module);
        set(o, MCIA_I2C_ADDRESS, i2c);
        set(o, MCIA_PAGE, page);
        set(o, MCIA_DEVICE_ADDRESS, offset as u32);
        set(o, MCIA_SIZE, size as u32);
        if i2c != 0x50 {
            set(o, MCIA_STATUS, MCIA_STATUS_I2C_ERROR);
            return Ok(());
        }
        if let (Some(d), Some(s)) = (
            o.get_mut(MCIA_DWORDS..MCIA_DWORDS + size),
            EEPROM.get(offset..offset + size),
        ) {
            d.copy_from_slice(s);
        }
        Ok(())
    }
}
