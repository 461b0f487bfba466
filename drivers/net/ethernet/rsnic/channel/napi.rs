// SPDX-License-Identifier: GPL-2.0

//! The channel's NAPI poll and interrupt: TX completions, RX within the budget, the XDP
//! and XSK queues, CQ re-arming, and the vector's handler that schedules NAPI.
//!
//! Upstream counterpart: `en_txrx.c` (`mlx5e_napi_poll`, `mlx5e_completion_event`).

use crate::bus::IrqHandler;
use crate::channel::rx::XdpRx;
use crate::channel::shared::Reopen;
use crate::channel::{Channel, RxSide, RECOVER_RX, RECOVER_TX};
use crate::family::env::{RxEnv, TxEnv};
use crate::family::{Family, RxMeta};
use crate::hwif::pkt::RxFrags;
use crate::kernel_ext::net::napi::{Napi, Poll};
use crate::kernel_ext::net::page_pool::{PagePool, RxPage};
use crate::kernel_ext::net::xdp as kxdp;
use crate::kernel_ext::sync::{irqs_disabled, with_bh};
use crate::xdp::XdpSqKind;
use core::sync::atomic::Ordering;
use kernel::prelude::*;

impl<F: Family> Channel<F> {
    pub(super) fn arm(&self) {
        let mmio = self.shared.hw.bar();
        self.with_tx(|tx, _| F::arm_tx(&mut tx.sq, &mmio));
        with_bh(|| {
            if let Some(slot) = self.shared.xdp_txs.get(self.index as usize) {
                if let Some(x) = slot.lock().as_mut() {
                    F::xdp_sq_arm(&mut x.sq, &mmio);
                }
            }
            if let Some(rx) = self.rx.lock().as_mut() {
                F::arm_rx(&mut rx.rx, &mmio);
                if let Some(x) = rx.xdpsq.as_mut() {
                    F::xdp_sq_arm(&mut x.sq, &mmio);
                }
                if let Some(x) = rx.xsk.as_mut() {
                    F::xsk_rx_arm(&mut x.rq, &mmio);
                    F::xdp_sq_arm(&mut x.sq.sq, &mmio);
                }
            }
            if let Some(ico) = self.ico.lock().as_mut() {
                F::xdp_sq_arm(&mut ico.sq, &mmio);
            }
        });
    }

    /// The channel's interrupt (bottom halves are disabled): read the interrupt state, then
    /// schedule NAPI.
    fn interrupt(&self) {
        self.counters.events.fetch_add(1, Ordering::Relaxed);
        let mmio = self.shared.hw.bar();
        let (schedule, bad) = {
            let mut irq = self.irq.lock();
            (F::irq_handle(&mut irq, &mmio), F::irq_bad_events(&irq))
        };
        if schedule {
            self.napi.schedule();
        }
        // The first corrupt event of the channel is logged; all are counted.
        if bad != 0 && !self.eq_bad_logged.swap(true, Ordering::Relaxed) {
            pr_err!(
                "{}: ch{}: an event named a queue the channel does not have (counted in eqe_bad_cq): ignored, the channel's queues polled\n",
                self.dev.name(),
                self.index
            );
        }
    }
}

impl<F: Family> Poll for Channel<F> {
    fn poll(&self, napi: &Napi<Self>, budget: i32) -> i32 {
        // Netpoll polls with budget 0 and interrupts disabled, under netconsole's locks, also
        // from an interrupt handler: there nothing of the channel is locked (see
        // `PortShared::xmit`); NAPI reaps the TX CQ soon after.
        if budget == 0 && irqs_disabled() {
            return 0;
        }
        let mmio = self.shared.hw.bar();
        let mut tx_busy = false;
        let mut tx_cqes = 0;
        let mut tx_fault = false;
        let mut rx_fault = false;
        let mut rx_short = false;
        // A fault on a queue that is not reset in place (XDP, XSK, ICO).
        let mut reopen = None;
        // The TX completion walk, under the queue's xmit lock: once per poll.
        self.with_tx(|tx, txq| {
            let mut env = TxEnv {
                mmio,
                dma: &self.shared.dma,
                txq,
                closing: false,
            };
            let r = F::tx_reap(&mut tx.sq, &mut env, |p| p.0.napi_consume(budget));
            tx_busy = r.busy;
            tx_cqes = r.cqes;
            tx_fault = r.idle && F::tx_fault(&tx.sq).is_some();
        });
        if let Some(txq) = self.dev.tx_queue(self.index) {
            if tx_fault {
                // The queue stays stopped (packets wait in the qdisc) until the SQ is back.
                txq.stop();
                self.request_recovery(RECOVER_TX);
            }
        }
        if let Some(slot) = self.shared.xdp_txs.get(self.index as usize) {
            if let Some(x) = slot.lock().as_mut() {
                let mut env = self
                    .shared
                    .xdp_env_on(mmio, XdpSqKind::Redirect, None, &mut x.full);
                tx_busy |= F::xdp_sq_reap(&mut x.sq, &mut env, |f| f.release(None)).busy;
                if F::xdp_sq_fault(&x.sq) {
                    reopen = Some(Reopen::XdpSqFault);
                }
            }
        }
        if budget <= 0 {
            return 0;
        }
        let mut work = 0u32;
        if let Some(side) = self.rx.lock().as_mut() {
            let RxSide {
                rx,
                pool,
                rxq,
                prog,
                xdpsq,
                xdp,
                xsk,
                counts,
            } = side;
            let pool: &PagePool = pool;
            if let Some(x) = xdpsq.as_mut() {
                let mut env = self
                    .shared
                    .xdp_env_on(mmio, XdpSqKind::Tx, Some(pool), &mut x.full);
                tx_busy |= F::xdp_sq_reap(&mut x.sq, &mut env, |f| f.release(Some(pool))).busy;
                if F::xdp_sq_fault(&x.sq) {
                    reopen = Some(Reopen::XdpSqFault);
                }
            }
            match prog.as_ref() {
                None => {
                    work = F::rx_poll(
                        rx,
                        &mut RxEnv { pool, mmio },
                        budget as u32,
                        |page, m: &RxMeta, frags: RxFrags<'_, RxPage>| {
                            let off = pool.offset();
                            let len = m.len.saturating_sub(frags.bytes());
                            self.deliver(napi, pool, page, off, len, m, true, counts, frags)
                        },
                    );
                }
                Some(prog) => {
                    let mut x = XdpRx {
                        ch: self,
                        napi,
                        pool,
                        rxq,
                        prog,
                        xdpsq: xdpsq.as_mut(),
                        xdp,
                        counts,
                        redirected: false,
                    };
                    work = F::rx_poll(
                        rx,
                        &mut RxEnv { pool, mmio },
                        budget as u32,
                        |page, m: &RxMeta, frags: RxFrags<'_, RxPage>| {
                            if frags.is_empty() {
                                x.rx(page, m)
                            } else {
                                // Cannot happen: with a program attached the RQ does not
                                // scatter (`ChannelParams::rx_layout`). The pages after the
                                // first stay posted.
                                x.counts.rx_dropped += 1;
                                pool.recycle(page);
                            }
                        },
                    );
                    if x.redirected {
                        kxdp::flush();
                    }
                    // One XDP_TX doorbell per poll.
                    if let Some(sq) = xdpsq.as_mut().filter(|s| s.posted) {
                        let mut env =
                            self.shared
                                .xdp_env_on(mmio, XdpSqKind::Tx, Some(pool), &mut sq.full);
                        F::xdp_sq_flush(&mut sq.sq, &mut env);
                        sq.posted = false;
                    }
                }
            }
            if let Some(x) = xsk.as_mut() {
                let mut redirected = false;
                let left = (budget as u32).saturating_sub(work);
                let (w, busy) =
                    self.xsk_poll(napi, x, prog.as_ref(), left, mmio, &mut redirected, counts);
                if redirected {
                    kxdp::flush();
                }
                work += w;
                tx_busy |= busy;
                if F::xdp_sq_fault(&x.sq.sq) {
                    reopen = Some(Reopen::XdpSqFault);
                } else if F::xsk_rx_fault(&x.rq) {
                    reopen = Some(Reopen::XskRqFault);
                }
            }
            rx_fault = F::rx_fault(rx).is_some();
            rx_short = F::rx_short(rx);
        }
        if rx_fault {
            self.request_recovery(RECOVER_RX);
        }
        if let Some(ico) = self.ico.lock().as_deref_mut() {
            let mut env = self
                .shared
                .xdp_env_on(mmio, XdpSqKind::Ico, None, &mut ico.full);
            // A wake-up's NOP completed: the next wake-up that finds NAPI idle posts another
            // (mlx5e clears MLX5E_SQ_STATE_PENDING_XSK_TX only if the poll reaped something,
            // so the ICO SQ cannot overflow).
            if F::xdp_sq_reap(&mut ico.sq, &mut env, |f| f.release(None)).cqes > 0 {
                self.xsk.nop_pending.store(false, Ordering::Release);
            }
            if F::xdp_sq_fault(&ico.sq) {
                reopen = Some(Reopen::XdpSqFault);
            }
        }
        if let Some(why) = reopen {
            self.request_reopen(why, None);
        }
        // An RQ short of buffers (an allocation failed) is refilled by the next poll.
        if tx_busy || rx_short || work >= budget as u32 {
            // NAPI polls again: give the CQs the doorbells the hardware needs meanwhile.
            self.with_tx(|tx, _| F::tx_continue(&mut tx.sq, tx_cqes, &mmio));
            if let Some(side) = self.rx.lock().as_mut() {
                F::rx_continue(&mut side.rx, work, &mmio);
            }
            return budget;
        }
        if napi.complete_done(work as i32) {
            if self.dim_rx.is_on() || self.dim_tx.is_on() {
                self.dim_sample();
            }
            self.arm();
        }
        work as i32
    }
}

impl<F: Family> IrqHandler for Channel<F> {
    fn irq(&self) {
        self.interrupt();
    }
}
