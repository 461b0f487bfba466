// SPDX-License-Identifier: GPL-2.0

//! The kernel glue of a ConnectX function's control plane: its command queue in coherent DMA
//! memory, driven by `dp::mlx5::cmd` with sleeping polls (process context only), the
//! bring-up of main.c at probe and its teardown at removal.
//!
//! The device completes a command when its engine runs (the command doorbell queues the
//! engine's work, as any register write does); the caller sleeps a millisecond between polls,
//! as `mlx5_cmd_invoke` in polling mode does. One command is outstanding at a time: the
//! queue is behind a mutex.

use crate::dp::hw::{Barriers, Mmio};
use crate::dp::mlx5::cmd::{
    queue::{CMDQ_PAGE_SIZE, MBOX_STRIDE},
    seq::{Bringup, Progress, Resources, Teardown, SEQ_OUT_LEN},
    CmdError, CmdQueue,
};
use crate::engine::{Engine, EngineMmio};
use crate::ext::{dma::DmaDevice, sync::msleep};
use crate::hw::KCoherent;
use kernel::{new_mutex, prelude::*, sync::Arc, sync::Mutex};

use super::Mlx5;

/// How long the driver waits for one command, in milliseconds (cmd.c's default command
/// timeout is 60 s for firmware that may be busy; the device here answers within a few
/// engine runs, so a command that takes seconds is lost, not slow).
const CMD_TIMEOUT_MS: u32 = 5_000;
/// Mailbox slots of 1 KiB: the longest command rsnic sends, QUERY_HCA_CAP's output, takes 9
/// blocks of 512 bytes.
const MBOX_SLOTS: usize = 16;

/// The register window of one function: the device's BAR seen from the function's base
/// (each port is a PCI function with its own window).
#[derive(Clone, Copy)]
pub(crate) struct FuncBar<'a> {
    bar: EngineMmio<'a, Mlx5>,
    base: u32,
}

impl<'a> FuncBar<'a> {
    /// The window of `port` on `engine`.
    pub(crate) fn new(engine: &'a Arc<Engine<Mlx5>>, port: usize) -> Self {
        // The device host lays the functions' windows out back to back.
        let base = crate::sim::mlx5::FUNC_BAR_SIZE * port as u32;
        Self {
            bar: EngineMmio(engine),
            base,
        }
    }
}

impl Mmio for FuncBar<'_> {
    fn write64(&self, offset: u32, bytes: [u8; 8]) {
        self.bar.write64(self.base + offset, bytes);
    }

    fn write32(&self, offset: u32, value: u32) {
        self.bar.write32(self.base + offset, value);
    }

    fn read32(&self, offset: u32) -> u32 {
        self.bar.read32(self.base + offset)
    }
}

impl Barriers for FuncBar<'_> {
    fn dma_wmb(&self) {
        self.bar.dma_wmb();
    }

    fn dma_rmb(&self) {
        self.bar.dma_rmb();
    }

    fn wmb(&self) {
        self.bar.wmb();
    }
}

/// One function after bring-up: its command queue and what bring-up created and learnt.
#[pin_data]
pub(crate) struct Func {
    #[pin]
    cmd: Mutex<CmdQueue<KCoherent>>,
    res: Resources,
}

impl Func {
    /// What bring-up created and learnt (caps, UAR, PD, TD, vport context).
    pub(crate) fn resources(&self) -> &Resources {
        &self.res
    }

    /// Brings the function of `port` up (main.c's order, see `dp::mlx5::cmd::seq`). On a
    /// failure, undoes what was done and returns the failed command, which the caller
    /// reports. Sleeps.
    pub(crate) fn bring_up(
        engine: &Arc<Engine<Mlx5>>,
        dma: &Arc<DmaDevice>,
        port: usize,
    ) -> core::result::Result<Arc<Self>, BringupError> {
        let alloc = |size| KCoherent::alloc(dma, size).map_err(BringupError::Kernel);
        let mut q = CmdQueue::new(alloc(CMDQ_PAGE_SIZE)?, alloc(MBOX_SLOTS * MBOX_STRIDE)?)
            .map_err(BringupError::Cmd)?;
        let mut out = KVec::from_elem(0u8, SEQ_OUT_LEN, GFP_KERNEL).map_err(|_| ENOMEM)?;
        let bar = FuncBar::new(engine, port);
        let mut b = Bringup::new();
        let mut waited = 0;
        let r = loop {
            match b.poll(&mut q, &bar, &bar, &mut out) {
                Ok(Progress::Done) => break Ok(()),
                Ok(Progress::Pending) if waited < CMD_TIMEOUT_MS => {
                    msleep(1);
                    waited += 1;
                }
                Ok(Progress::Pending) => break Err(q.time_out()),
                Err(e) => break Err(e),
            }
        };
        if let Err(e) = r {
            if let Some(te) = tear_down(&mut q, &bar, b.resources()) {
                pr_warn!("port {}: undoing a failed bring-up: {}\n", port, te);
            }
            return Err(BringupError::Cmd(e));
        }
        let res = *b.resources();
        Arc::pin_init(
            pin_init!(Self {
                cmd <- new_mutex!(q, "rsnic::mlx5::Func::cmd"),
                res,
            }),
            GFP_KERNEL,
        )
        .map_err(BringupError::Kernel)
    }

    /// Tears the function down (main.c's unload order); the first failed command is
    /// returned (the others still ran). Sleeps.
    pub(crate) fn tear_down(&self, engine: &Arc<Engine<Mlx5>>, port: usize) -> Option<CmdError> {
        let bar = FuncBar::new(engine, port);
        tear_down(&mut self.cmd.lock(), &bar, &self.res)
    }
}

/// Runs a teardown of what `res` records to its end, sleeping between polls.
fn tear_down(q: &mut CmdQueue<KCoherent>, bar: &FuncBar<'_>, res: &Resources) -> Option<CmdError> {
    let mut t = Teardown::new(res);
    let mut out = [0u8; 64];
    let mut waited = 0;
    while t.poll(q, bar, bar, &mut out) == Progress::Pending {
        if waited >= CMD_TIMEOUT_MS {
            // The rest cannot be posted on an abandoned queue.
            return Some(q.time_out());
        }
        msleep(1);
        waited += 1;
    }
    t.first_error()
}

/// Why a bring-up failed.
pub(crate) enum BringupError {
    /// A command failed (reported with its name, status and syndrome).
    Cmd(CmdError),
    /// Memory for the command queue.
    Kernel(Error),
}

impl From<Error> for BringupError {
    fn from(e: Error) -> Self {
        Self::Kernel(e)
    }
}
