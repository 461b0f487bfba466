// SPDX-License-Identifier: GPL-2.0

//! The device's half of the firmware-page commands (the driver's is `hwif/mlx5/cmd/pages.rs`):
//! QUERY_PAGES (boot, init and regular pages) and MANAGE_PAGES (give, take, cannot give),
//! with the held pages kept as a list inside the pages themselves, and the page request
//! event's count. PRM "Pages Management"; upstream pagealloc.c; layouts `query_pages_in/out`,
//! `manage_pages_in/out` of mlx5_ifc.h.

use super::queue::OUT_BUF;
use super::{bad, synd, CmdResult, Cx, Func, Hca};
use crate::hwif::bytes::put_be64;
use crate::hwif::hw::BusMemory;
use crate::sim::mlx5::ifc::{self, set, status};

/// Pages the function wants before its HCA is initialized, its boot pages (QUERY_PAGES
/// boot), then for INIT_HCA (init), then after INIT_HCA (regular, asked for by a page
/// request event): modest counts, a VF's few hundred KiB of firmware memory.
pub const BOOT_PAGES: u32 = 8;

/// Init pages (QUERY_PAGES init): INIT_HCA needs the boot and these.
pub const INIT_PAGES: u32 = 64;

/// Regular pages the function asks for after INIT_HCA.
pub const REGULAR_PAGES: u32 = 32;

/// Most pages a function holds.
pub const MAX_FW_PAGES: u32 = 4096;

/// The firmware pages a function holds (QUERY_PAGES / MANAGE_PAGES). The device keeps the
/// list of held pages in the pages themselves, as firmware keeps its bookkeeping in the
/// memory it was given: the first 8 bytes of each held page (big-endian) are the bus
/// address of the next one, 0 ending the list.
#[derive(Clone, Copy)]
pub(in crate::sim::mlx5) struct Pages {
    /// Pages held (given and not taken back).
    pub(in crate::sim::mlx5) held: u32,
    /// The first held page (0: none).
    pub(super) head: u64,
    /// The driver asked QUERY_PAGES: from then on the function needs its boot and init
    /// pages for INIT_HCA, and asks for regular pages after it. A driver that never asks
    /// (the device host's test fixtures) is not held to it.
    pub(super) asked: bool,
    /// The page request for the regular pages was posted.
    pub(super) requested: bool,
}

impl Pages {
    pub(super) const NONE: Self = Self {
        held: 0,
        head: 0,
        asked: false,
        requested: false,
    };
}

impl Func {
    /// The number of pages the function needs in all (boot and init before INIT_HCA; the
    /// regular ones too after it, once it asked: see [`Pages::asked`]).
    fn pages_target(&self) -> u32 {
        if !self.pages.asked {
            0
        } else if self.hca == Hca::Initialized {
            BOOT_PAGES + INIT_PAGES + REGULAR_PAGES
        } else {
            BOOT_PAGES + INIT_PAGES
        }
    }

    /// The page request to post, if the function wants pages it has not asked for by event:
    /// after INIT_HCA, the regular pages (positive: pages to give). Marks it posted.
    pub(in crate::sim::mlx5) fn page_request(&mut self) -> Option<i32> {
        let missing = self.pages_target().saturating_sub(self.pages.held);
        if self.hca != Hca::Initialized || self.pages.requested || missing == 0 {
            return None;
        }
        self.pages.requested = true;
        i32::try_from(missing).ok()
    }
}

impl<M: BusMemory> Cx<'_, '_, M> {
    /// QUERY_PAGES: the pages the function wants for boot (1), init (2) or regular use
    /// (3), given what it holds; asking makes the function need them (see [`Pages`]).
    pub(super) fn query_pages(&mut self, op_mod: u32) -> CmdResult {
        use ifc::pages::*;
        if self.g(FUNCTION_ID) != 0 || self.g(EMBEDDED_CPU_FUNCTION) != 0 {
            return Err(bad(synd::PAGES_FUNCTION));
        }
        let f = &mut self.port().func;
        f.pages.asked = true;
        let held = f.pages.held;
        let want = match op_mod {
            BOOT => BOOT_PAGES.saturating_sub(held),
            INIT => (BOOT_PAGES + INIT_PAGES).saturating_sub(held.max(BOOT_PAGES)),
            _ => f.pages_target().saturating_sub(held),
        };
        set(self.out, FUNCTION_ID, 0);
        set(self.out, NUM_PAGES, want);
        Ok(())
    }

    /// MANAGE_PAGES: GIVE (1) hands the device `input_num_entries` pages (4 KiB aligned;
    /// each is linked into the held list, which writes its first 8 bytes), TAKE (2) returns
    /// up to `input_num_entries` of them (never those an initialized function needs, at
    /// most what the output holds), CANT_GIVE (0) answers a page request the driver cannot
    /// meet.
    pub(super) fn manage_pages(&mut self, op_mod: u32) -> CmdResult {
        use ifc::pages::*;
        if self.g(FUNCTION_ID) != 0 || self.g(EMBEDDED_CPU_FUNCTION) != 0 {
            return Err(bad(synd::PAGES_FUNCTION));
        }
        let n = self.g(INPUT_NUM_ENTRIES);
        match op_mod {
            CANT_GIVE => Ok(()),
            GIVE => {
                let held = self.port().func.pages.held;
                if held.saturating_add(n) > MAX_FW_PAGES {
                    return Err((status::NO_RESOURCES, synd::TOO_MANY_PAGES));
                }
                if self.inlen < PAS + 8 * n as usize {
                    return Err((status::BAD_INPUT_LEN, synd::PAGES_LENGTH));
                }
                // Every address first, so that a bad one leaves nothing given.
                let mut b = [0u8; 8];
                for i in 0..n as usize {
                    if !self.read_in(PAS + 8 * i, &mut b) {
                        return Err((status::BAD_INPUT_LEN, synd::PAGES_LENGTH));
                    }
                    let a = u64::from_be_bytes(b);
                    if a == 0 || a % 4096 != 0 {
                        return Err(bad(synd::PAGE_ADDRESS));
                    }
                }
                let old = self.port().func.pages;
                for i in 0..n as usize {
                    if !self.read_in(PAS + 8 * i, &mut b) {
                        self.port().func.pages = old;
                        return Err((status::BAD_INPUT_LEN, synd::PAGES_LENGTH));
                    }
                    let a = u64::from_be_bytes(b);
                    let head = self.port().func.pages.head;
                    let p = self.p;
                    // PANIC: `p` indexes a port (see `Cx::port`).
                    self.t.ports[p].counters.pcie.dma_write(a, 8);
                    if self.mem.dma_write(a, &head.to_be_bytes()).is_err() {
                        self.port().func.pages = old;
                        return Err(bad(synd::PAGE_ADDRESS));
                    }
                    let pg = &mut self.port().func.pages;
                    pg.head = a;
                    pg.held += 1;
                }
                let held = self.port().func.pages.held;
                self.port().counters.fw_pages = u64::from(held);
                Ok(())
            }
            _ => {
                let room = (self.outlen.min(OUT_BUF).saturating_sub(PAS) / 8) as u32;
                let f = &self.port().func;
                let keep = if f.hca == Hca::Initialized {
                    f.pages_target()
                } else {
                    0
                };
                let k = n.min(room).min(f.pages.held.saturating_sub(keep));
                let mut given = 0u32;
                for i in 0..k as usize {
                    let a = self.port().func.pages.head;
                    let mut next = [0u8; 8];
                    let p = self.p;
                    // PANIC: `p` indexes a port (see `Cx::port`).
                    self.t.ports[p].counters.pcie.dma_read(a, 8);
                    if self.mem.dma_read(a, &mut next).is_err() {
                        // The list is broken there: what follows is lost to the device.
                        let pg = &mut self.port().func.pages;
                        pg.head = 0;
                        pg.held = 0;
                        self.port().counters.dma_faults += 1;
                        break;
                    }
                    put_be64(self.out, PAS + 8 * i, a);
                    let pg = &mut self.port().func.pages;
                    pg.head = u64::from_be_bytes(next);
                    pg.held -= 1;
                    given += 1;
                }
                set(self.out, OUTPUT_NUM_ENTRIES, given);
                let held = self.port().func.pages.held;
                self.port().counters.fw_pages = u64::from(held);
                Ok(())
            }
        }
    }
}
