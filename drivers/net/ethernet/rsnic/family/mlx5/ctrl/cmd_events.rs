// SPDX-License-Identifier: GPL-2.0

//! Events-mode command completion: the command EQ and the wait of a command for its
//! completion EQE.
//!
//! As eq.c's `create_async_eqs`, bring-up creates the command EQ first (its event bitmask
//! only `MLX5_EVENT_TYPE_CMD`, vector [`super::ASYNC_INTR`]), by a polled CREATE_EQ,
//! registers its handler, arms it and switches the queue to events mode
//! (`mlx5_cmd_use_events`); the async EQ and every later command complete by EQE. The
//! handler ([`CmdEvents::poll_eq`], `mlx5_eq_async_int` → `mlx5_cmd_comp_handler`) consumes
//! the EQEs, re-arms, and wakes the waiter when one names the command entry; bits of other
//! entries, which rsnic never rings, are counted and ignored. The waiter
//! ([`wait_events`], `wait_func`) then checks the entry's ownership bit, which decides: an
//! EQE for an entry the device still owns is not trusted. A wait that sees no EQE within
//! [`EQE_WAIT_MS`] polls the EQ (`mlx5_cmd_eq_recover`: an interrupt may be lost) and the
//! ownership bit (an EQE may be lost: a command found done gives its EQE one more
//! [`EQE_WAIT_MS`], as the device writes the entry first), checks that the device is still
//! there, and waits again until the command's timeout; a completion found without its EQE
//! is counted and logged. Teardown switches back to polling (`mlx5_cmd_use_polling`) before the command
//! EQ's DESTROY_EQ, as `destroy_async_eqs`.

use super::{queues::eq_ring, BringupError, CmdIf, ASYNC_INTR, CMD_TIMEOUT_MS};
use crate::bus::{Bar, Function, IrqHandler, IrqKey};
use crate::hwif::hw::Coherent;
use crate::hwif::mlx5::cmd::{
    opcode_name,
    queue::{EventNote, CMD_ENTRY_BIT},
    res::{self, CreateEq, EVENT_TYPE_CMD},
    CmdError, CmdPoll, CmdQueue, Pas,
};
use crate::hwif::mlx5::eq::Eq;
use crate::kdma::KCoherent;
use crate::kernel_ext::{
    sync::{with_bh, Completion},
    timer::now_ns,
};
use kernel::{new_spinlock, prelude::*, sync::Arc, sync::SpinLock};

/// log2 of the command EQ's EQEs (one EQE per command at most, one command outstanding:
/// 32 EQEs of 64 bytes, half a page).
const CMD_EQ_LOG: u8 = 5;
/// Most EQEs one interrupt of the command EQ consumes.
const CMD_EQ_BUDGET: u32 = 32;
/// How long a command waits for its completion EQE before it looks at the EQ and the
/// ownership bit itself, in ms (mlx5 waits out the command timeout before its recovery;
/// a device that answers in microseconds has lost the EQE or its interrupt by then).
pub(super) const EQE_WAIT_MS: u32 = 16;
/// The key of the command EQ's handler on [`ASYNC_INTR`].
const CMD_KEY: IrqKey = usize::MAX - 1;

/// The command EQ and the completion its handler signals.
#[pin_data]
pub(crate) struct CmdEvents {
    /// The command EQ (taken at its DESTROY_EQ).
    #[pin]
    eq: SpinLock<Option<Eq<KCoherent>>>,
    /// Completed by the handler for an EQE naming the command entry.
    #[pin]
    done: Completion,
    hw: Arc<Function>,
}

impl CmdEvents {
    /// The command EQ's interrupt: consumes its EQEs and re-arms it, and wakes the waiting
    /// command if one named its entry. Returns the EQEs consumed. Interrupt-like context.
    fn poll_eq(&self) -> u32 {
        let bar = self.hw.bar();
        let r = with_bh(|| {
            self.eq
                .lock()
                .as_mut()
                .map(|eq| eq.poll_cmd(CMD_EQ_BUDGET, CMD_ENTRY_BIT, &bar, &bar))
        });
        match r {
            Some(r) => {
                if r.entry {
                    self.done.complete();
                }
                r.eqes
            }
            None => 0,
        }
    }

    /// Forgets wake-ups not waited for: before a command is posted, so that a late EQE of
    /// the one before cannot end its wait.
    pub(super) fn rearm_wait(&self) {
        self.done.reinit();
    }

    /// EQEs naming entries rsnic never rang, or of other types (ignored).
    fn bogus(&self) -> u64 {
        with_bh(|| self.eq.lock().as_ref().map_or(0, |eq| eq.stats().bogus_cmd))
    }
}

impl IrqHandler for CmdEvents {
    fn irq(&self) {
        self.poll_eq();
    }
}

/// Creates the command EQ (CREATE_EQ in polling mode: the EQ that would report it does not
/// exist yet), registers its handler, arms it and puts `q` in events mode. On a failure
/// nothing of it is left (the handler freed, the EQ destroyed, then its ring freed). Sleeps.
pub(super) fn use_events(
    q: &mut CmdIf,
    hw: &Arc<Function>,
    uar: u32,
) -> core::result::Result<(), BringupError> {
    let bar = hw.bar();
    let ev = Arc::pin_init(
        pin_init!(CmdEvents {
            eq <- new_spinlock!(None, "rsnic::mlx5::CmdEvents::eq"),
            done <- Completion::new(),
            hw: hw.clone(),
        }),
        GFP_KERNEL,
    )?;
    let ring = eq_ring(hw.dma(), CMD_EQ_LOG)?;
    let pages = super::queues::pas_list(&ring)?;
    let p = CreateEq {
        log_eq_size: CMD_EQ_LOG,
        uar_page: uar,
        intr: ASYNC_INTR as u16,
        event_bitmask: 1 << EVENT_TYPE_CMD,
        pas: Pas::list(&pages, ring.size()),
    };
    let mut inp = KVec::from_elem(0u8, res::create_eq_len(&p), GFP_KERNEL).map_err(|_| ENOMEM)?;
    let mut out = [0u8; res::SHORT_LEN];
    let n = res::create_eq(&mut inp, &p).map_err(super::bad_format)?;
    super::run_cmd(q, &bar, &inp[..n], &mut out).map_err(BringupError::Cmd)?;
    let eqn = res::parse_create_eq(&out).map_err(super::bad_format)?;
    match Eq::created(ring, CMD_EQ_LOG, eqn, uar * 4096) {
        Ok(eq) => with_bh(|| *ev.eq.lock() = Some(eq)),
        Err(_) => {
            let _ = super::destroy_obj(q, &bar, |b| res::destroy_eq(b, eqn));
            return Err(BringupError::Kernel(EINVAL));
        }
    }
    // From here on, `use_polling` undoes everything.
    q.ev = Some(ev.clone());
    let r = hw
        .request_irq(ASYNC_INTR, CMD_KEY, ev.clone())
        .map_err(BringupError::Kernel)
        .and_then(|()| {
            with_bh(|| {
                if let Some(eq) = ev.eq.lock().as_mut() {
                    eq.update_ci(true, &bar, &bar);
                }
            });
            q.q.use_events().map_err(BringupError::Cmd)
        });
    if r.is_err() {
        let _ = use_polling(q, hw, &bar);
    }
    r
}

/// Puts `q` back in polling mode, destroys the command EQ (DESTROY_EQ, polled), frees its
/// handler and then its ring. Nothing if `q` has no command EQ. Sleeps.
pub(super) fn use_polling(q: &mut CmdIf, hw: &Function, bar: &Bar<'_>) -> Result<(), CmdError> {
    q.q.use_polling();
    let Some(ev) = q.ev.take() else {
        return Ok(());
    };
    let eqn = with_bh(|| ev.eq.lock().as_ref().map(|eq| eq.eqn()));
    let r = match eqn {
        Some(eqn) => super::destroy_obj(q, bar, |b| res::destroy_eq(b, eqn)),
        None => Ok(()),
    };
    hw.free_irq(ASYNC_INTR, CMD_KEY);
    let bogus = ev.bogus();
    if bogus != 0 {
        pr_warn!(
            "port {}: {} command EQEs named no command rsnic posted\n",
            q.port,
            bogus
        );
    }
    // The ring goes only now: the device stopped writing it, the handler is gone.
    let eq = with_bh(|| ev.eq.lock().take());
    drop(eq);
    r
}

/// Waits for the outstanding command of `q` in events mode (`wait_func`): for its EQE, at
/// most [`EQE_WAIT_MS`] at a time; after a wait without one, the EQ is polled
/// (`mlx5_cmd_eq_recover`) and whether the device is still there is checked. The ownership
/// bit decides each time ([`CmdQueue::poll_event`]). Gives up after the command timeout.
/// Sleeps.
pub(super) fn wait_events(
    q: &mut CmdQueue<KCoherent>,
    ev: &CmdEvents,
    port: usize,
    opcode: u16,
    bar: &Bar<'_>,
    out: &mut [u8],
) -> Result<usize, CmdError> {
    let deadline = now_ns().saturating_add(u64::from(CMD_TIMEOUT_MS) * 1_000_000);
    loop {
        let mut eqe = ev.done.wait_timeout_ms(EQE_WAIT_MS);
        if !eqe {
            ev.poll_eq();
            eqe = ev.done.try_wait();
        }
        if !eqe && !q.device_owns() {
            // Done, but its EQE is not here: the device writes the entry before the EQE,
            // so the EQE gets one more wait before it counts as lost.
            eqe = ev.done.wait_timeout_ms(EQE_WAIT_MS) || {
                ev.poll_eq();
                ev.done.try_wait()
            };
        }
        let (r, note) = q.poll_event(eqe, bar, out);
        let st = *q.event_stats();
        match note {
            // Logged at the 1st, 2nd, 4th, ... of each: a device that keeps losing them
            // does not flood the log.
            EventNote::LostEqe if st.lost_eqe.is_power_of_two() => pr_warn!(
                "port {}: {} completed without its command EQE, found by polling ({} so far)\n",
                port,
                opcode_name(opcode),
                st.lost_eqe
            ),
            EventNote::EarlyEqe if st.early_eqe.is_power_of_two() => pr_warn!(
                "port {}: command EQE for {} while the device still owns it: ignored ({} so far)\n",
                port,
                opcode_name(opcode),
                st.early_eqe
            ),
            _ => {}
        }
        if let CmdPoll::Done(n) = r? {
            return Ok(n);
        }
        if !eqe && (bar.is_gone() || !bar.check_present()) {
            return Err(q.gone());
        }
        if now_ns() >= deadline {
            return Err(q.time_out());
        }
    }
}
