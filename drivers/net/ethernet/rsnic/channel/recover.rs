// SPDX-License-Identifier: GPL-2.0

//! Recovery of a channel's queues after a fault: an SQ or RQ reset in place, a lost
//! interrupt found by the TX watchdog, or a reopen of the port's channels when no queue
//! reset covers the fault.
//!
//! The recovery work reports each fault to the port's devlink health reporter (`tx` for
//! the SQ and the TX watchdog, `rx` for the RQ; [`HealthReport`]), without holding the
//! channel's recovery lock: the devlink core takes its instance lock and calls the
//! reporter's recover operation, which is [`Fault::recover`] (and takes the recovery lock).
//! A report the core does not recover (`ECANCELED`: the reporter is in error, or within
//! its grace period) leaves the queue stopped until `devlink health recover`. Without
//! reporters the work recovers directly, as mlx5e's `mlx5e_health_report` does.
//!
//! Upstream counterpart: `en/reporter_tx.c`, `en/reporter_rx.c`, `en/health.c`.

use crate::channel::shared::Reopen;
use crate::channel::{Channel, RECOVER_RX, RECOVER_TIMEOUT, RECOVER_TX};
use crate::family::env::RxEnv;
use crate::family::{Family, QueueDiag, QueueFault};
use crate::kernel_ext::net::skb::DropReason;
use crate::kernel_ext::sync::with_bh;
use core::sync::atomic::Ordering;
use kernel::prelude::*;
use kernel::str::CString;
use kernel::sync::Arc;
use kernel::workqueue::WorkItem;
use kernel::{c_str, fmt};

impl<F: Family> WorkItem for Channel<F> {
    type Pointer = Arc<Channel<F>>;

    fn run(this: Arc<Channel<F>>) {
        Channel::recover(&this);
    }
}

/// What a channel's fault stopped, and so what its recovery does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FaultKind {
    /// The SQ stopped on a fault (an error CQE, a CQE that broke the protocol).
    Sq,
    /// The TX watchdog fired on the channel's queue.
    TxTimeout,
    /// The RQ stopped on a fault.
    Rq,
}

/// A fault the recovery work reports ([`HealthReport::report`]): the report's context,
/// which the reporter's recover operation recovers from.
pub(crate) struct Fault<F: Family> {
    /// The channel whose queue stopped.
    pub(crate) ch: Arc<Channel<F>>,
    /// What stopped.
    pub(crate) kind: FaultKind,
}

impl<F: Family> Fault<F> {
    /// Whether the fault is the `rx` reporter's (else the `tx` reporter's).
    pub(crate) fn is_rx(&self) -> bool {
        self.kind == FaultKind::Rq
    }

    /// Recovers from the fault as the recovery work did before reporters (the reporter's
    /// recover operation): the SQ or RQ reset in place, the TX watchdog's lost-interrupt
    /// check, or the reopen of the channels. Nothing once the channel is closing. Takes
    /// the channel's recovery lock; sleeps.
    pub(crate) fn recover(&self) -> Result {
        let ch = &self.ch;
        let closing = ch.recover_lock.lock();
        if *closing {
            return Ok(());
        }
        match self.kind {
            FaultKind::TxTimeout => ch.recover_timeout(),
            FaultKind::Sq => ch.recover_tx(),
            FaultKind::Rq => ch.recover_rx(),
        }
    }
}

/// A channel's SQ or RQ as `devlink health diagnose` shows it.
pub(crate) struct QueueState {
    /// The ring and its CQ.
    pub(crate) q: QueueDiag,
    /// The fault the queue stopped on, if any.
    pub(crate) fault: Option<QueueFault>,
    /// A recovery is asked for and has not brought the queue back yet.
    pub(crate) recovering: bool,
    /// The stack's TX queue is stopped (SQ only).
    pub(crate) stopped: bool,
}

impl<F: Family> Channel<F> {
    /// Asks for the recovery of a queue that stopped on a fault (`what`: [`RECOVER_TX`],
    /// [`RECOVER_RX`]); the first request queues the work, later ones until it is back do
    /// nothing. Any context.
    #[cold]
    pub(super) fn request_recovery(&self, what: u32) {
        if self.recover_req.fetch_or(what, Ordering::AcqRel) & what != 0 {
            return;
        }
        if let Some(me) = self.me.lock().clone() {
            // Already queued (for the other queue): that run sees this request too.
            let _ = self.shared.wq.queue().enqueue(me);
        }
    }

    /// Asks for the port's channels to be reopened for a fault of this channel no queue
    /// reset covers (`queue`: the stopped queue and its fault, logged), once per channel:
    /// the reopen closes it. Counted (`ch<N>_reopen`) if this request is the one queued
    /// (another channel's may be waiting already, and covers this fault). Any context.
    #[cold]
    pub(super) fn request_reopen(&self, why: Reopen, queue: Option<(&str, &QueueFault)>) {
        if self.reopen_asked.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Some((q, f)) = queue {
            self.log_reopen(q, f);
        }
        if self.shared.request_reopen(self.index, why) {
            self.counters.reopen.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The recovery work: reports the faults NAPI and the TX watchdog found, whose
    /// recovery brings the queues back, as mlx5e's error-CQE and timeout work do
    /// (`mlx5e_reporter_tx_err_cqe`, `mlx5e_reporter_tx_timeout`,
    /// `mlx5e_reporter_rq_cqe_err`). Process context; sleeps (commands, the devlink lock).
    fn recover(this: &Arc<Self>) {
        if *this.recover_lock.lock() {
            return;
        }
        let req = this.recover_req.load(Ordering::Acquire);
        let mut tx_canceled = false;
        if req & RECOVER_TIMEOUT != 0 {
            this.recover_req
                .fetch_and(!RECOVER_TIMEOUT, Ordering::AcqRel);
            tx_canceled = !Self::report(this, FaultKind::TxTimeout, None);
        }
        // An SQ fault the timeout's recovery did not cover (it resets a faulted SQ, but not
        // after finding a lost interrupt); none if the tx reporter just refused to recover.
        if req & RECOVER_TX != 0 && !tx_canceled {
            match this.with_tx(|t, _| F::tx_fault(&t.sq)).flatten() {
                Some(f) => {
                    Self::report(this, FaultKind::Sq, Some(&f));
                }
                None => {
                    this.recover_req.fetch_and(!RECOVER_TX, Ordering::AcqRel);
                }
            }
        }
        if req & RECOVER_RX != 0 {
            match with_bh(|| this.rx.lock().as_ref().and_then(|r| F::rx_fault(&r.rx))) {
                Some(f) => {
                    Self::report(this, FaultKind::Rq, Some(&f));
                }
                None => {
                    this.recover_req.fetch_and(!RECOVER_RX, Ordering::AcqRel);
                }
            }
        }
    }

    /// Reports a fault of `kind` (`f`: the queue's) to the port's reporter, which recovers
    /// from it; recovers directly if the port has none. A fault the reporter does not
    /// recover (`ECANCELED`) is logged and its queue stays stopped (the request bit stays
    /// set, so NAPI does not ask again) until `devlink health recover` reopens the
    /// channels. Returns `false` for such a fault.
    fn report(this: &Arc<Self>, kind: FaultKind, f: Option<&QueueFault>) -> bool {
        let fault = Fault {
            ch: this.clone(),
            kind,
        };
        let health = this.shared.health.lock().clone();
        let Some(health) = health else {
            let _ = fault.recover();
            return true;
        };
        let q = if kind == FaultKind::Rq { "rq" } else { "sq" };
        let msg = match f {
            Some(f) => CString::try_from_fmt(fmt!(
                "{}{}: {} (syndrome {:#04x}, wqe_counter {})",
                q,
                this.index,
                f.what,
                f.syndrome,
                f.wqe_counter
            )),
            None => CString::try_from_fmt(fmt!("{}{}: transmit timeout", q, this.index)),
        };
        let r = match &msg {
            Ok(m) => health.report(m, &fault),
            Err(_) => health.report(c_str!("queue fault"), &fault),
        };
        if r == Err(crate::kernel_ext::devlink::ecanceled()) {
            pr_err!(
                "{}: {}{}: {}: not recovered (the {} reporter is in error or within its grace period): the queue stays stopped until `devlink health recover`\n",
                this.dev.name(),
                q,
                this.index,
                f.map_or("transmit timeout", |f| f.what),
                if fault.is_rx() { "rx" } else { "tx" }
            );
            return false;
        }
        true
    }

    /// The state the device reports for the SQ (`sq`) or RQ, where the family can ask
    /// ([`crate::family::Control::query_queue_state`]). Sleeps.
    pub(crate) fn hw_state(&self, sq: bool) -> Option<&'static str> {
        F::query_queue_state(&self.shared.func, &self.queues, sq)
    }

    /// The SQ's state for `devlink health diagnose` (`None` if the channel has no SQ).
    pub(crate) fn tx_state(&self) -> Option<QueueState> {
        let recovering = self.recover_req.load(Ordering::Acquire) & RECOVER_TX != 0;
        self.with_tx(|t, txq| QueueState {
            q: F::tx_diag(&t.sq),
            fault: F::tx_fault(&t.sq),
            recovering,
            stopped: txq.is_stopped(),
        })
    }

    /// The RQ's state for `devlink health diagnose` (`None` if the channel has no RQ).
    pub(crate) fn rx_state(&self) -> Option<QueueState> {
        let recovering = self.recover_req.load(Ordering::Acquire) & RECOVER_RX != 0;
        let mut s = with_bh(|| {
            self.rx.lock().as_ref().map(|r| QueueState {
                q: F::rx_diag(&r.rx),
                fault: F::rx_fault(&r.rx),
                recovering,
                stopped: false,
            })
        })?;
        s.q.qn = s.q.qn.or(Some(self.rqn));
        Some(s)
    }

    /// `ndo_tx_timeout` of the channel's queue (the watchdog's timer, every xmit lock
    /// held): counted, the recovery queued.
    pub(crate) fn tx_timeout(&self) {
        self.counters.tx_timeout.fetch_add(1, Ordering::Relaxed);
        self.request_recovery(RECOVER_TIMEOUT);
    }

    /// TX timeout recovery, as mlx5e's (`mlx5e_tx_reporter_timeout_recover`): first a lost
    /// interrupt (events waiting on the channel's EQ: consumed, the EQ re-armed, NAPI
    /// scheduled, which re-arms the CQs). Otherwise, if the SQ stopped on an error CQE whose
    /// recovery failed, the SQ is reset again; if not, the queue is stuck for a reason no SQ
    /// reset is known to cure (a hung engine, a corrupt CQE the CQ holds on to), and the
    /// channels are reopened, as mlx5e does (`mlx5e_safe_reopen_channels`): every queue and
    /// CQ is made again.
    fn recover_timeout(&self) -> Result {
        let mmio = self.shared.hw.bar();
        let eqes = with_bh(|| F::irq_recover(&mut self.irq.lock(), &mmio));
        if eqes > 0 {
            self.counters.eq_rearm.fetch_add(1, Ordering::Relaxed);
            self.counters
                .tx_timeout_recovered
                .fetch_add(1, Ordering::Relaxed);
            pr_err!(
                "{}: sq{}: transmit timeout: {} events waited without an interrupt: EQ re-armed, NAPI scheduled\n",
                self.dev.name(),
                self.index,
                eqes
            );
            with_bh(|| self.napi.schedule());
            return Ok(());
        }
        let fault = self.with_tx(|t, _| F::tx_fault(&t.sq)).flatten();
        match fault {
            Some(f) if F::QUEUE_RESET => {
                self.reset_sq(&f)?;
                self.counters
                    .tx_timeout_recovered
                    .fetch_add(1, Ordering::Relaxed);
            }
            // The reopen brings the SQ back, faulted or stuck (a fault already asked for it).
            Some(f) => {
                self.counters
                    .tx_timeout_recovered
                    .fetch_add(1, Ordering::Relaxed);
                self.request_reopen(Reopen::SqFault, Some(("sq", &f)));
            }
            None => {
                self.counters
                    .tx_timeout_recovered
                    .fetch_add(1, Ordering::Relaxed);
                self.request_reopen(Reopen::TxTimeout, None);
            }
        }
        Ok(())
    }

    /// Logs a fault and the step of its recovery that failed, if one did (once per
    /// recovery: faults do not repeat without a recovery in between).
    fn log_fault(&self, queue: &str, f: &QueueFault, r: &Result) {
        match r {
            Ok(()) => pr_err!(
                "{}: {}{}: {} (syndrome {:#04x}, wqe_counter {}): queue recovered\n",
                self.dev.name(),
                queue,
                self.index,
                f.what,
                f.syndrome,
                f.wqe_counter
            ),
            Err(e) => pr_err!(
                "{}: {}{}: {} (syndrome {:#04x}, wqe_counter {}): recovery failed ({:?}), the queue stays stopped\n",
                self.dev.name(),
                queue,
                self.index,
                f.what,
                f.syndrome,
                f.wqe_counter,
                e
            ),
        }
    }

    /// Logs a fault whose recovery is the reopen of the port's channels.
    fn log_reopen(&self, queue: &str, f: &QueueFault) {
        pr_err!(
            "{}: {}{}: {}: the queue is stopped until the channels are reopened\n",
            self.dev.name(),
            queue,
            self.index,
            f.what
        );
    }

    /// SQ recovery: the SQ to RST (the device stops reading it), every packet still in
    /// flight dropped and counted, producer and consumer state and the doorbell record
    /// reset, BQL reset, the SQ to RDY, the queue woken. The queue has been stopped since
    /// NAPI found the fault.
    fn recover_tx(&self) -> Result {
        match self.with_tx(|t, _| F::tx_fault(&t.sq)).flatten() {
            // A failed reset is logged; the queue stays stopped (the reporter in error).
            Some(fault) if F::QUEUE_RESET => self.reset_sq(&fault),
            // The reopen closes this channel: nothing more to do here, and the request bit
            // stays set, so that later polls do not queue this again.
            Some(fault) => {
                self.request_reopen(Reopen::SqFault, Some(("sq", &fault)));
                Ok(())
            }
            None => {
                self.recover_req.fetch_and(!RECOVER_TX, Ordering::AcqRel);
                Ok(())
            }
        }
    }

    /// Resets the SQ (see [`Channel::recover_tx`]) for `fault`, logs it, and wakes the
    /// queue if it worked.
    fn reset_sq(&self, fault: &QueueFault) -> Result {
        let (Some(slot), Some(txq)) = (
            self.shared.txs.get(self.index as usize),
            self.dev.tx_queue(self.index),
        ) else {
            return Err(ENXIO);
        };
        let r = F::queue_to_reset(&self.shared.func, &self.queues, true).and_then(|()| {
            let dropped = with_bh(|| {
                // The stack's transmit path is kept out (the queue is stopped too).
                let mut xmit = txq.lock();
                let tx = slot.get(&mut xmit)?.as_mut()?;
                let mut env = self.shared.closing_tx_env(txq);
                let n = F::tx_drain(&mut tx.sq, &mut env, |p| p.0.drop_any(DropReason::DevReady));
                F::tx_reset(&mut tx.sq).then_some(n)
            })
            .ok_or(EIO)?;
            self.counters
                .tx_dropped
                .fetch_add(u64::from(dropped), Ordering::Relaxed);
            txq.reset();
            F::queue_to_ready(&self.shared.func, &self.queues, true)
        });
        self.log_fault("sq", fault, &r);
        if r.is_ok() {
            self.counters.tx_recover.fetch_add(1, Ordering::Relaxed);
            self.recover_req.fetch_and(!RECOVER_TX, Ordering::AcqRel);
            txq.wake();
        }
        r
    }

    /// RQ recovery: the RQ to RST (through ERR if the device has not stopped it), the CQEs
    /// written meanwhile discarded, every posted buffer back to the page pool, the RQ reset
    /// and refilled, then RDY, and NAPI scheduled.
    fn recover_rx(&self) -> Result {
        let Some(fault) = with_bh(|| self.rx.lock().as_ref().and_then(|r| F::rx_fault(&r.rx)))
        else {
            self.recover_req.fetch_and(!RECOVER_RX, Ordering::AcqRel);
            return Ok(());
        };
        if !F::QUEUE_RESET {
            // As for the SQ: the request bit stays set until the reopen closes the channel.
            self.request_reopen(Reopen::RqFault, Some(("rq", &fault)));
            return Ok(());
        }
        let r = F::queue_to_reset(&self.shared.func, &self.queues, false).and_then(|()| {
            with_bh(|| {
                let mut s = self.rx.lock();
                let side = s.as_mut()?;
                let mut env = RxEnv {
                    pool: &side.pool,
                    mmio: self.shared.hw.bar(),
                };
                F::rx_discard(&mut side.rx, &mut env);
                F::rx_drain(&mut side.rx, &mut env);
                F::rx_reset(&mut side.rx, &mut env).then_some(())
            })
            .ok_or(EIO)?;
            F::queue_to_ready(&self.shared.func, &self.queues, false)
        });
        self.log_fault("rq", &fault, &r);
        if r.is_ok() {
            self.counters.rx_recover.fetch_add(1, Ordering::Relaxed);
            self.recover_req.fetch_and(!RECOVER_RX, Ordering::AcqRel);
            with_bh(|| self.napi.schedule());
        }
        r
    }
}
