// SPDX-License-Identifier: GPL-2.0

//! The kernel glue of a ConnectX function's control plane: its command queue in coherent DMA
//! memory, driven by `dp::mlx5::cmd` with sleeping polls (process context only), the
//! bring-up of main.c at probe and its teardown at removal, the port's administrative state,
//! and its asynchronous event queue, whose port-change events set the carrier.
//!
//! The device completes a command when its engine runs (the command doorbell queues the
//! engine's work, as any register write does); the caller sleeps a millisecond between polls,
//! as `mlx5_cmd_invoke` in polling mode does. One command is outstanding at a time: the
//! queue is behind a mutex.
//!
//! Events, as mlx5e handles `MLX5_EVENT_TYPE_PORT_CHANGE`: the function's async EQ raises its
//! vector ([`ASYNC_INTR`]); the handler ([`Func::irq`], interrupt-like context) consumes the
//! EQEs, re-arms the EQ and queues the carrier work, which asks the device for the vport's
//! operational state (QUERY_VPORT_STATE, a sleeping command) and sets the carrier from it
//! (`mlx5e_update_carrier`). Every change of the state posts an event, so the last query
//! sees the last state.

use crate::dp::hw::{Barriers, Coherent, Mmio};
use crate::dp::mlx5::cmd::{
    queue::{CMDQ_PAGE_SIZE, MBOX_STRIDE},
    res::{self, CreateEq, EVENT_TYPE_PORT_CHANGE},
    seq::{Bringup, Progress, Resources, Teardown, SEQ_OUT_LEN},
    vport, CmdError, CmdErrorKind, CmdPoll, CmdQueue, Pas,
};
use crate::dp::mlx5::eq::Eq;
use crate::engine::{Engine, EngineMmio, ASYNC_INTR};
use crate::ext::{
    dma::DmaDevice,
    net::device::Device,
    sync::{msleep, with_bh},
    wq::OwnedQueue,
};
use crate::hw::KCoherent;
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::{
    c_str, new_mutex, new_spinlock, new_work,
    prelude::*,
    sync::{Arc, Mutex, SpinLock},
    types::ARef,
    workqueue::{Work, WorkItem},
};

use super::Mlx5;

/// How long the driver waits for one command, in milliseconds (cmd.c's default command
/// timeout is 60 s for firmware that may be busy; the device here answers within a few
/// engine runs, so a command that takes seconds is lost, not slow).
const CMD_TIMEOUT_MS: u32 = 5_000;
/// Mailbox slots of 1 KiB: the longest command rsnic sends, QUERY_HCA_CAP's output, takes 9
/// blocks of 512 bytes.
const MBOX_SLOTS: usize = 16;
/// log2 of the async EQ's EQEs (64 EQEs of 64 bytes: one page).
const ASYNC_EQ_LOG: u8 = 6;
/// Most EQEs one interrupt consumes (`MLX5_EQ_POLLING_BUDGET` is 128; port changes are
/// rare).
const ASYNC_EQ_BUDGET: u32 = 64;

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
        Self::at(EngineMmio(engine), port)
    }

    /// The window of `port` in the device's registers `bar`.
    pub(crate) fn at(bar: EngineMmio<'a, Mlx5>, port: usize) -> Self {
        // The device host lays the functions' windows out back to back.
        let base = crate::sim::mlx5::FUNC_BAR_SIZE * port as u32;
        Self { bar, base }
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

/// The async EQ and the netdev whose carrier its events set.
struct Events {
    eq: Option<Eq<KCoherent>>,
    dev: Option<ARef<Device>>,
}

/// One function after bring-up: its command queue, what bring-up created and learnt, and
/// its asynchronous events.
#[pin_data]
pub(crate) struct Func {
    #[pin]
    cmd: Mutex<CmdQueue<KCoherent>>,
    res: Resources,
    engine: Arc<Engine<Mlx5>>,
    port: usize,
    #[pin]
    events: SpinLock<Events>,
    /// The carrier work (QUERY_VPORT_STATE, then the carrier), on `wq`.
    #[pin]
    work: Work<Func>,
    wq: OwnedQueue,
    /// Teardown began: the carrier work does nothing any more.
    stopping: AtomicBool,
}

kernel::impl_has_work! {
    impl HasWork<Self> for Func { self.work }
}

impl WorkItem for Func {
    type Pointer = Arc<Func>;

    fn run(this: Arc<Func>) {
        if this.stopping.load(Ordering::Acquire) {
            return;
        }
        let mut inp = [0u8; vport::QUERY_VPORT_STATE_LEN];
        let mut out = [0u8; vport::QUERY_VPORT_STATE_LEN];
        let r = vport::query_vport_state(&mut inp)
            .map_err(|_| CmdError::iface(CmdErrorKind::BadOutput))
            .and_then(|n| this.exec(&inp[..n], &mut out))
            .and_then(|_| {
                vport::parse_query_vport_state(&out)
                    .map_err(|_| CmdError::iface(CmdErrorKind::BadOutput))
            });
        match r {
            Ok(st) => with_bh(|| {
                if let Some(dev) = &this.events.lock().dev {
                    if st.is_up() {
                        dev.carrier_on();
                    } else {
                        dev.carrier_off();
                    }
                }
            }),
            Err(e) => pr_warn!("port {}: carrier: {}\n", this.port, e),
        }
    }
}

impl Func {
    /// What bring-up created and learnt (caps, UAR, PD, TD, vport context).
    pub(crate) fn resources(&self) -> &Resources {
        &self.res
    }

    /// Brings the function of `port` up (main.c's order, see `dp::mlx5::cmd::seq`) and
    /// creates its async EQ for port-change events, armed. On a failure, undoes what was
    /// done and returns the failed command, which the caller reports. Sleeps.
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
        let res = *b.resources();
        let eq = match r.map_err(BringupError::Cmd) {
            Ok(()) => create_async_eq(&mut q, &bar, dma, &res),
            Err(e) => Err(e),
        };
        let eq = match eq {
            Ok(eq) => eq,
            Err(e) => {
                if let Some(te) = tear_down(&mut q, &bar, &res) {
                    pr_warn!("port {}: undoing a failed bring-up: {}\n", port, te);
                }
                return Err(e);
            }
        };
        let wq = OwnedQueue::new(c_str!("rsnic-ctl"), port as i32)?;
        Arc::pin_init(
            pin_init!(Self {
                cmd <- new_mutex!(q, "rsnic::mlx5::Func::cmd"),
                res,
                engine: engine.clone(),
                port,
                events <- new_spinlock!(Events { eq: Some(eq), dev: None }, "rsnic::mlx5::Func::events"),
                work <- new_work!("rsnic::mlx5::Func::work"),
                wq,
                stopping: AtomicBool::new(false),
            }),
            GFP_KERNEL,
        )
        .map_err(BringupError::Kernel)
    }

    /// Runs one command to completion (sleeps; 5 s at most).
    pub(crate) fn exec(&self, input: &[u8], out: &mut [u8]) -> Result<usize, CmdError> {
        let bar = FuncBar::new(&self.engine, self.port);
        run_cmd(&mut self.cmd.lock(), &bar, input, out)
    }

    /// Sets the port's administrative state (PAOS, as `mlx5_set_port_admin_status`); when
    /// it goes up, the carrier work runs (as `mlx5e_open` queues `update_carrier_work`).
    /// Sleeps.
    pub(crate) fn set_admin(self: &Arc<Self>, up: bool) -> Result<(), CmdError> {
        let mut reg = [0u8; vport::access_reg_len(vport::PAOS_LEN)];
        let mut out = [0u8; vport::access_reg_len(vport::PAOS_LEN)];
        let st = if up { vport::PORT_UP } else { vport::PORT_DOWN };
        let n = vport::paos_set_admin(&mut reg, st)
            .map_err(|_| CmdError::iface(CmdErrorKind::BadOutput))?;
        self.exec(&reg[..n], &mut out)?;
        if up {
            self.update_carrier();
        }
        Ok(())
    }

    /// Queues the carrier work (unless it is queued already).
    fn update_carrier(self: &Arc<Self>) {
        if !self.stopping.load(Ordering::Acquire) {
            let _ = self.wq.queue().enqueue(self.clone());
        }
    }

    /// Gives the function its netdev (`None`: drops the reference).
    pub(crate) fn attach(&self, dev: Option<&Device>) {
        let old = with_bh(|| core::mem::replace(&mut self.events.lock().dev, dev.map(ARef::from)));
        drop(old);
    }

    /// The async vector fired: consumes the EQEs, re-arms the EQ, and queues the carrier
    /// work if a port changed. Interrupt-like context (does not sleep).
    pub(crate) fn irq(self: &Arc<Self>, mmio: &EngineMmio<'_, Mlx5>) {
        let bar = FuncBar::at(*mmio, self.port);
        let mut changed = false;
        with_bh(|| {
            if let Some(eq) = self.events.lock().eq.as_mut() {
                eq.poll(ASYNC_EQ_BUDGET, &bar, &bar, |e| {
                    changed |= e.link_up().is_some();
                });
            }
        });
        if changed {
            self.update_carrier();
        }
    }

    /// Tears the function down: stops the carrier work, destroys the async EQ, then runs
    /// main.c's unload order. The first failed command is returned (the others still ran).
    /// The caller has routed the async vector away. Sleeps.
    pub(crate) fn tear_down(&self) -> Option<CmdError> {
        self.stopping.store(true, Ordering::Release);
        self.wq.flush();
        let bar = FuncBar::new(&self.engine, self.port);
        let mut q = self.cmd.lock();
        let eq = with_bh(|| self.events.lock().eq.take());
        let mut first = None;
        if let Some(eq) = eq {
            let mut inp = [0u8; res::SHORT_LEN];
            let mut out = [0u8; res::SHORT_LEN];
            let r = res::destroy_eq(&mut inp, eq.eqn())
                .map_err(|_| CmdError::iface(CmdErrorKind::BadOutput))
                .and_then(|n| run_cmd(&mut q, &bar, &inp[..n], &mut out));
            first = r.err();
            // The ring is freed only now that the device has stopped writing it.
            drop(eq);
        }
        let t = tear_down(&mut q, &bar, &self.res);
        first.or(t)
    }
}

/// Runs one command on `q` to completion, sleeping between polls.
fn run_cmd(
    q: &mut CmdQueue<KCoherent>,
    bar: &FuncBar<'_>,
    input: &[u8],
    out: &mut [u8],
) -> Result<usize, CmdError> {
    q.post(input, out.len(), bar, bar)?;
    let mut waited = 0;
    loop {
        if let CmdPoll::Done(n) = q.poll(bar, out)? {
            return Ok(n);
        }
        if waited >= CMD_TIMEOUT_MS {
            return Err(q.time_out());
        }
        msleep(1);
        waited += 1;
    }
}

/// Creates the function's async EQ (port-change events on vector [`ASYNC_INTR`]), armed.
fn create_async_eq(
    q: &mut CmdQueue<KCoherent>,
    bar: &FuncBar<'_>,
    dma: &Arc<DmaDevice>,
    r: &Resources,
) -> core::result::Result<Eq<KCoherent>, BringupError> {
    let bad = |_| BringupError::Cmd(CmdError::iface(CmdErrorKind::BadOutput));
    let uar = r.uar.ok_or(BringupError::Kernel(EINVAL))?;
    let ring = KCoherent::alloc(dma, 64 << ASYNC_EQ_LOG)?;
    // `init_eq_buf`: every EQE's owner bit starts at 1 (hardware owned).
    for i in 0..(1usize << ASYNC_EQ_LOG) {
        ring.write(i * 64 + 63, &[1]);
    }
    let p = CreateEq {
        log_eq_size: ASYNC_EQ_LOG,
        uar_page: uar,
        intr: ASYNC_INTR as u16,
        event_bitmask: 1 << EVENT_TYPE_PORT_CHANGE,
        pas: Pas {
            addr: ring.dma_addr(),
            size: ring.size(),
        },
    };
    let mut inp = KVec::from_elem(0u8, res::create_eq_len(&p), GFP_KERNEL).map_err(|_| ENOMEM)?;
    let mut out = [0u8; res::SHORT_LEN];
    let n = res::create_eq(&mut inp, &p).map_err(bad)?;
    run_cmd(q, bar, &inp[..n], &mut out).map_err(BringupError::Cmd)?;
    let eqn = res::parse_create_eq(&out).map_err(bad)?;
    let mut eq = Eq::new(ring, ASYNC_EQ_LOG, eqn, uar * 4096).map_err(|_| EINVAL)?;
    eq.update_ci(true, bar, bar);
    Ok(eq)
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
    /// Memory for the command queue or the EQ.
    Kernel(Error),
}

impl From<Error> for BringupError {
    fn from(e: Error) -> Self {
        Self::Kernel(e)
    }
}
