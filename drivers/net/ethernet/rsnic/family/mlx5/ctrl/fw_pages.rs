// SPDX-License-Identifier: GPL-2.0

//! Firmware pages of a ConnectX function: what the firmware asks for at bring-up and by page
//! request events afterwards, given (MANAGE_PAGES GIVE), taken back (TAKE) and freed.
//!
//! Upstream counterpart: `pagealloc.c`.

use crate::bus::Bar;
use crate::family::mlx5::ctrl::{bad_format, run_cmd, BringupError, CmdIf, Func};
use crate::hwif::hw::Coherent;
use crate::hwif::mlx5::cmd::pages::{BATCH_PAGES, FW_PAGE_SIZE, MAX_FW_PAGES};
use crate::hwif::mlx5::cmd::{op, pages, res, CmdError, CmdErrorKind};
use crate::kdma::KCoherent;
use crate::kernel_ext::dma::DmaDevice;
use kernel::prelude::*;
use kernel::sync::Arc;

/// The pages the function's firmware holds: 4 KiB coherent allocations the driver gave
/// (MANAGE_PAGES GIVE) and keeps until the firmware returns them (TAKE). A slot of `None` was
/// returned and is reused.
pub(super) struct FwPages {
    pages: KVec<Option<KCoherent>>,
    /// Pages given and not returned.
    held: u32,
}

impl FwPages {
    pub(super) fn new() -> Self {
        Self {
            pages: KVec::new(),
            held: 0,
        }
    }

    /// Gives the firmware `n` new pages, in MANAGE_PAGES of at most [`BATCH_PAGES`]; refuses
    /// to hold more than [`MAX_FW_PAGES`] in all (-ENOMEM, the firmware's request named). A
    /// batch the firmware refused is freed; what it took before stays given.
    pub(super) fn give(
        &mut self,
        q: &mut CmdIf,
        bar: &Bar<'_>,
        dma: &Arc<DmaDevice>,
        n: u32,
    ) -> core::result::Result<(), BringupError> {
        if n > MAX_FW_PAGES.saturating_sub(self.held) {
            return Err(BringupError::Cmd(CmdError {
                opcode: op::MANAGE_PAGES,
                op_mod: pages::GIVE,
                kind: CmdErrorKind::TooManyPages {
                    asked: n,
                    cap: MAX_FW_PAGES,
                },
            }));
        }
        let mut left = n;
        while left > 0 {
            let k = left.min(BATCH_PAGES) as usize;
            let mut batch = KVec::with_capacity(k, GFP_KERNEL)?;
            let mut addrs = KVec::with_capacity(k, GFP_KERNEL)?;
            for _ in 0..k {
                let p = KCoherent::alloc(dma, FW_PAGE_SIZE)?;
                if !pages::page_ok(p.dma_addr()) {
                    // dma_alloc_coherent gives page-aligned memory; anything else cannot
                    // be a firmware page.
                    return Err(BringupError::Kernel(EINVAL));
                }
                addrs.push(p.dma_addr(), GFP_KERNEL)?;
                batch.push(p, GFP_KERNEL)?;
            }
            // Room for the batch before the firmware owns it: nothing can fail after.
            let free = self.pages.iter().filter(|p| p.is_none()).count();
            self.pages.reserve(k.saturating_sub(free), GFP_KERNEL)?;
            let mut inp = KVec::from_elem(0u8, pages::give_len(k), GFP_KERNEL)?;
            let mut out = [0u8; res::OUT_LEN];
            let len = pages::give_pages(&mut inp, &addrs).map_err(bad_format)?;
            run_cmd(q, bar, &inp[..len], &mut out).map_err(BringupError::Cmd)?;
            for p in batch {
                self.keep(p);
            }
            left -= k as u32;
        }
        Ok(())
    }

    /// Records a page the firmware now holds (room was reserved).
    fn keep(&mut self, p: KCoherent) {
        self.held += 1;
        if let Some(slot) = self.pages.iter_mut().find(|s| s.is_none()) {
            *slot = Some(p);
        } else if self.pages.len() < self.pages.capacity() {
            // Within the capacity: no allocation, cannot fail.
            let _ = self.pages.push(Some(p), GFP_KERNEL);
        } else {
            // Cannot happen (room was reserved); never free a page the firmware holds.
            core::mem::forget(p);
        }
    }

    /// Takes back up to `n` pages (one MANAGE_PAGES TAKE of at most [`BATCH_PAGES`]) and
    /// frees those returned; returns how many came back. A returned address the driver
    /// never gave is not freed (it is not the driver's) and is reported.
    fn take(
        &mut self,
        q: &mut CmdIf,
        bar: &Bar<'_>,
        port: usize,
        n: u32,
    ) -> core::result::Result<u32, BringupError> {
        let k = n.min(BATCH_PAGES);
        if k == 0 {
            return Ok(0);
        }
        let mut inp = [0u8; res::SHORT_LEN];
        let mut out = KVec::from_elem(0u8, pages::take_out_len(k as usize), GFP_KERNEL)?;
        let len = pages::take_pages(&mut inp, k).map_err(bad_format)?;
        run_cmd(q, bar, &inp[..len], &mut out).map_err(BringupError::Cmd)?;
        let t = pages::parse_take(&out, k).map_err(|_| {
            BringupError::Cmd(CmdError {
                opcode: op::MANAGE_PAGES,
                op_mod: pages::TAKE,
                kind: CmdErrorKind::BadOutput,
            })
        })?;
        let mut strangers = 0u32;
        for a in t.iter() {
            // The firmware returns the pages given last first: search from the end.
            let slot = self
                .pages
                .iter_mut()
                .rev()
                .find(|s| s.as_ref().is_some_and(|p| p.dma_addr() == a));
            match slot {
                Some(s) => {
                    *s = None;
                    self.held -= 1;
                }
                None => strangers += 1,
            }
        }
        if strangers > 0 {
            pr_err!(
                "port {}: MANAGE_PAGES returned {} pages the driver never gave\n",
                port,
                strangers
            );
        }
        Ok(t.len() as u32)
    }

    /// `mlx5_reclaim_startup_pages`: TAKE until the firmware holds none of the driver's
    /// pages, or returns none, or a command fails (returned).
    pub(super) fn reclaim(
        &mut self,
        q: &mut CmdIf,
        bar: &Bar<'_>,
        port: usize,
    ) -> core::result::Result<(), BringupError> {
        while self.held > 0 {
            if self.take(q, bar, port, self.held)? == 0 {
                pr_warn!(
                    "port {}: the firmware returns none of its last {} pages\n",
                    port,
                    self.held
                );
                break;
            }
        }
        Ok(())
    }

    /// Frees every page still kept (the function is disabled, or never got to hold them).
    pub(super) fn release(&mut self, port: usize) {
        if self.held > 0 {
            pr_warn!(
                "port {}: freeing {} pages the firmware did not return\n",
                port,
                self.held
            );
        }
        for s in self.pages.iter_mut() {
            *s = None;
        }
        self.held = 0;
    }

    /// Keeps every page for good: the firmware refused TEARDOWN_HCA and may still use them.
    /// (Dropping an `FwPages` that still holds pages does the same.)
    pub(super) fn abandon(&mut self, port: usize) {
        if self.held > 0 {
            pr_err!(
                "port {}: TEARDOWN_HCA failed: leaving {} pages to the firmware\n",
                port,
                self.held
            );
        }
        for s in self.pages.iter_mut() {
            if let Some(p) = s.take() {
                core::mem::forget(p);
            }
        }
        self.held = 0;
    }
}

impl Drop for FwPages {
    /// Pages neither returned nor released (a path that did not tear the function down)
    /// may still be the firmware's: they stay allocated rather than freed under it.
    fn drop(&mut self) {
        if self.held > 0 {
            pr_err!(
                "{} firmware pages dropped without a teardown: left allocated\n",
                self.held
            );
            for s in self.pages.iter_mut() {
                if let Some(p) = s.take() {
                    core::mem::forget(p);
                }
            }
        }
    }
}

impl Func {
    /// Serves page requests adding up to `n` pages (`pages_work_handler`): gives them, or
    /// takes `-n` back; a request the driver cannot meet is answered CANT_GIVE
    /// (`page_notify_fail`). Sleeps.
    pub(super) fn serve_page_request(&self, n: i32) {
        let dma = self.hw.dma();
        let bar = self.hw.bar();
        let mut fw = self.pages.lock();
        let mut q = self.cmd.lock();
        if n > 0 {
            if let Err(e) = fw.give(&mut q, &bar, dma, n as u32) {
                match e {
                    BringupError::Cmd(e) => pr_err!("port {}: page request: {}\n", self.port, e),
                    BringupError::Kernel(e) => {
                        pr_err!("port {}: page request of {} pages: {:?}\n", self.port, n, e)
                    }
                }
                let mut inp = [0u8; res::SHORT_LEN];
                let mut out = [0u8; res::OUT_LEN];
                if let Ok(len) = pages::cant_give(&mut inp, n as u32) {
                    let _ = run_cmd(&mut q, &bar, &inp[..len], &mut out);
                }
            }
        } else {
            let mut left = n.unsigned_abs().min(fw.held);
            while left > 0 {
                match fw.take(&mut q, &bar, self.port, left) {
                    Ok(0) => break,
                    Ok(k) => left = left.saturating_sub(k),
                    Err(BringupError::Cmd(e)) => {
                        pr_err!("port {}: page request: {}\n", self.port, e);
                        break;
                    }
                    Err(BringupError::Kernel(e)) => {
                        pr_err!("port {}: page request: {:?}\n", self.port, e);
                        break;
                    }
                }
            }
        }
    }
}
