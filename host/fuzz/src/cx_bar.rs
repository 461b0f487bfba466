// SPDX-License-Identifier: GPL-2.0

//! A ConnectX BAR for the control-plane harnesses: the initialization segment registers the
//! command queue reads, and a log of doorbell writes.

use std::cell::{Cell, RefCell};

use rsnic_core::hwif::hw::{DmaAddr, Mmio};

/// BAR0 with `cmdif_rev` 5, 32 entries of 64 bytes, firmware ready from power-on.
#[derive(Default)]
pub struct CxBar {
    addr_h: Cell<u32>,
    addr_l: Cell<Option<u32>>,
    /// 32-bit writes (offset, value).
    pub w32: RefCell<Vec<(u32, u32)>>,
    /// 64-bit writes (offset, bytes).
    pub w64: RefCell<Vec<(u32, [u8; 8])>>,
}

impl CxBar {
    /// The command queue page's bus address, once written.
    pub fn cmdq_addr(&self) -> Option<DmaAddr> {
        self.addr_l
            .get()
            .map(|l| (u64::from(self.addr_h.get()) << 32) | u64::from(l & !0xfff))
    }
}

impl Mmio for CxBar {
    fn write64(&self, offset: u32, bytes: [u8; 8]) {
        self.w64.borrow_mut().push((offset, bytes));
    }

    fn write32(&self, offset: u32, value: u32) {
        match offset {
            0x010 => self.addr_h.set(value),
            0x014 => self.addr_l.set(Some(value)),
            _ => self.w32.borrow_mut().push((offset, value)),
        }
    }

    fn read32(&self, offset: u32) -> u32 {
        match offset {
            0x004 => 5 << 16,
            0x014 => (5 << 4) | 6,
            // Ready from power-on: `initializing` reads clear before and after the address.
            0x1fc => 0,
            _ => 0,
        }
    }
}

rsnic_testbed::no_barriers!(CxBar);
