// SPDX-License-Identifier: GPL-2.0

//! Opening and closing a channel: its device queues, page pool, NAPI and interrupt, its TX
//! and XDP slots in the port, and the teardown that lets the device drain before the queues
//! are destroyed.
//!
//! Upstream counterpart: `en_main.c` (`mlx5e_open_channel`, `mlx5e_activate_channel`,
//! `mlx5e_close_channel`).

use crate::bus::Function;
use crate::channel::dim::DimCqs;
use crate::channel::shared::PortShared;
use crate::channel::{Channel, RxSide, TxSide, XdpSqSide, XskFlags};
use crate::family::env::RxEnv;
use crate::family::params::{ChannelParams, MAX_CHANNELS};
use crate::family::stats::ChannelStats;
use crate::family::stats::{ChAtomics, ChStats, Counters, XdpStats};
use crate::family::{Family, OpenCtx};
use crate::kernel_ext::net::device::Device;
use crate::kernel_ext::net::dim::Dim;
use crate::kernel_ext::net::napi::Napi;
use crate::kernel_ext::net::page_pool::PagePool;
use crate::kernel_ext::net::skb::DropReason;
use crate::kernel_ext::net::xdp::{BpfProg, XdpRxq};
use crate::kernel_ext::sync::with_bh;
use crate::xdp::XdpSqKind;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::types::ARef;
use kernel::{new_mutex, new_spinlock, new_work};

impl<F: Family> Channel<F> {
    /// Creates the device queues, the data-path structures and NAPI of channel `index`,
    /// posts its RX buffers and fills TX slot `index` (and its XDP slot). With `prog`, the
    /// channel runs it on every received packet. Its AF_XDP zero-copy queues, if it is to
    /// have them, come with [`Channel::xsk_enable`] (out of this frame: the open path's
    /// stack is deep). Interrupts are routed and CQs armed by [`Channel::activate`].
    pub(crate) fn open(
        dev: &Device,
        shared: &Arc<PortShared<F>>,
        index: u32,
        p: &ChannelParams<F::PrivFlag>,
        prog: Option<&BpfProg>,
    ) -> Result<Arc<Self>> {
        // The function's vector the family gives the channel (its handler's key: the
        // channel's number among the function's ports' channels, a vector may be shared).
        let intr = F::channel_vector(&shared.hw, &shared.func, index).ok_or(EINVAL)?;
        let irq_key = F::port_index(&shared.func) * MAX_CHANNELS + index as usize;
        let layout = p.rx_layout(F::RX_SCATTER);
        let pool = PagePool::new(
            &shared.dma,
            dev,
            // page_pool refuses rings over 32768 entries.
            (layout.segs << p.log_rq).min(16384),
            layout.order,
            p.rx_headroom(),
            layout.seg_len,
            p.xdp,
        )?;
        let rxq = XdpRxq::new(dev, index, &pool)?;
        // `guard` destroys the device queues made so far if a later step fails.
        let mut guard = DeviceQueues::<F>::new(shared);
        let ctx = OpenCtx {
            hw: &shared.hw,
            dma: &shared.dma,
            intr,
            pool: Some(&pool),
            func: &shared.func,
        };
        let opened = F::open(&ctx, &mut guard.queues, p)?;
        let xdpsq = match prog {
            Some(_) => F::xdp_sq_open(&ctx, &mut guard.queues, p, XdpSqKind::Tx)?,
            None => None,
        };
        let xdp_rd = F::xdp_sq_open(&ctx, &mut guard.queues, p, XdpSqKind::Redirect)?;
        let queues = guard.queues;
        let mut irq = opened.irq;
        F::irq_bind(&mut irq, &queues, None);
        let rx_side = RxSide {
            rx: opened.rx,
            pool,
            rxq,
            prog: prog.map(BpfProg::clone_ref),
            xdpsq: xdpsq.map(XdpSqSide::new),
            xdp: XdpStats::default(),
            xsk: None,
            counts: ChStats::default(),
        };
        let xsk_queues = Arc::pin_init(
            new_mutex!(F::Queues::default(), "rsnic::Channel::xsk_queues"),
            GFP_KERNEL,
        )?;
        // (In `pin_init!`, `queues` names the field once it is initialised.)
        let dim_queues = queues;
        let (dim_xsk_rx, dim_xsk_tx) = (xsk_queues.clone(), xsk_queues.clone());
        let ch = Arc::pin_init(
            pin_init!(Self {
                napi <- Napi::new(),
                rx <- new_spinlock!(Some(rx_side), "rsnic::Channel::rx"),
                irq <- new_spinlock!(irq, "rsnic::Channel::irq"),
                ico <- new_spinlock!(None, "rsnic::Channel::ico"),
                xsk: XskFlags::default(),
                shared: shared.clone(),
                dev: ARef::from(dev),
                index,
                intr,
                irq_key,
                rqn: opened.rqn,
                queues,
                xsk_queues,
                xsk_closed <- new_spinlock!(None, "rsnic::Channel::xsk_closed"),
                recover_work <- new_work!("rsnic::Channel::recover"),
                recover_req: AtomicU32::new(0),
                recover_lock <- new_mutex!(false, "rsnic::Channel::recover"),
                counters: ChAtomics::default(),
                eq_bad_logged: AtomicBool::new(false),
                reopen_asked: AtomicBool::new(false),
                me <- new_spinlock!(None, "rsnic::Channel::me"),
                dim_rx <- Dim::new(
                    false,
                    DimCqs {
                        shared: shared.clone(),
                        queues: dim_queues,
                        xsk: dim_xsk_rx,
                        rx: true,
                        changes: AtomicU64::new(0),
                    }
                ),
                dim_tx <- Dim::new(
                    true,
                    DimCqs {
                        shared: shared.clone(),
                        queues: dim_queues,
                        xsk: dim_xsk_tx,
                        rx: false,
                        changes: AtomicU64::new(0),
                    }
                ),
            }),
            GFP_KERNEL,
        )?;
        guard.keep();
        // The CQs were made with DIM's default profile (the port's parameters hold it).
        if p.coal.adaptive_rx {
            ch.dim_rx.start();
        }
        if p.coal.adaptive_tx {
            ch.dim_tx.start();
        }
        if let (Some(slot), Some(txq)) = (shared.txs.get(index as usize), dev.tx_queue(index)) {
            let tx = TxSide {
                sq: opened.sq,
                xdp: XdpStats::default(),
            };
            if slot.bind(txq) {
                with_bh(|| {
                    let mut g = txq.lock();
                    if let Some(s) = slot.get(&mut g) {
                        *s = Some(tx);
                    }
                });
            }
        }
        if let (Some(slot), Some(sq)) = (shared.xdp_txs.get(index as usize), xdp_rd) {
            with_bh(|| *slot.lock() = Some(XdpSqSide::new(sq)));
        }
        Ok(ch)
    }

    /// Adds and enables NAPI, routes and arms the interrupt, arms both CQs.
    pub(crate) fn activate(self: &Arc<Self>) {
        with_bh(|| *self.me.lock() = Some(self.clone()));
        self.napi.add(&self.dev);
        if let Err(e) = self
            .shared
            .hw
            .request_irq(self.intr, self.irq_key, self.clone())
        {
            pr_err!(
                "{}: channel {}: no interrupt: {:?}\n",
                self.dev.name(),
                self.index,
                e
            );
        }
        self.napi.enable();
        let mmio = self.shared.hw.bar();
        with_bh(|| F::irq_start(&mut self.irq.lock(), &mmio));
        self.arm();
        // An RQ the open could not fill (an allocation failed) gets the rest from NAPI, which
        // no completion would schedule if it is empty.
        with_bh(|| {
            if self.rx.lock().as_ref().is_some_and(|s| F::rx_short(&s.rx)) {
                self.napi.schedule();
            }
        });
    }

    /// Stops the channel's interrupt and NAPI (waiting for a running poll), so nothing wakes
    /// its TX queue any more. Sleeps.
    pub(crate) fn quiesce(&self) {
        self.shared.hw.free_irq(self.intr, self.irq_key);
        self.napi.disable();
    }

    /// Reaps the TX-side completions of a closing channel (NAPI is off). Returns whether
    /// every SQ is idle.
    fn reap_closing(&self, xdp_rd: &mut Option<XdpSqSide<F>>) -> bool {
        let shared = &self.shared;
        let mut idle = self
            .with_tx(|tx, txq| {
                let mut env = shared.closing_tx_env(txq);
                F::tx_reap(&mut tx.sq, &mut env, |p| p.0.consume()).idle
            })
            .unwrap_or(true);
        with_bh(|| {
            if let Some(x) = xdp_rd.as_mut() {
                let mut env = shared.xdp_env(XdpSqKind::Redirect, None, &mut x.full);
                idle &= F::xdp_sq_reap(&mut x.sq, &mut env, |f| f.release(None)).idle;
            }
            if let Some(rx) = self.rx.lock().as_mut() {
                if let Some(x) = rx.xdpsq.as_mut() {
                    let pool = &rx.pool;
                    let mut env = shared.xdp_env(XdpSqKind::Tx, Some(pool), &mut x.full);
                    idle &= F::xdp_sq_reap(&mut x.sq, &mut env, |f| f.release(Some(pool))).idle;
                }
                if let Some(x) = rx.xsk.as_mut() {
                    idle &= self.xsk_tx_reap(x, shared.hw.bar()).idle;
                }
            }
            if let Some(ico) = self.ico.lock().as_deref_mut() {
                let mut env = shared.xdp_env(XdpSqKind::Ico, None, &mut ico.full);
                idle &= F::xdp_sq_reap(&mut ico.sq, &mut env, |f| f.release(None)).idle;
            }
            idle
        })
    }

    /// Tears the channel down: lets the device finish what was posted (up to ~100 ms),
    /// destroys the device queues, then frees what is left. Packets the device never sent
    /// are dropped and counted. Returns the final counters. Call after [`Channel::quiesce`]
    /// and after the TX queues were disabled. Sleeps.
    pub(crate) fn close(self: Arc<Self>) -> ChannelStats<F> {
        // No recovery from now on (one running finishes first); with NAPI off none is
        // requested any more, and what was queued has run when the flush returns.
        *self.recover_lock.lock() = true;
        // Wake-ups kick nothing any more.
        self.xsk.zc.store(false, Ordering::Release);
        self.quiesce();
        // NAPI is off: no sample any more; a profile change in flight finishes before the
        // CQs go.
        self.dim_rx.stop();
        self.dim_tx.stop();
        self.shared.wq.flush();
        // The reference `activate` took (a cycle until now).
        drop(with_bh(|| self.me.lock().take()));
        let Some(txq) = self.dev.tx_queue(self.index) else {
            return ChannelStats::default();
        };
        // No more redirected frames on this channel: its XDP SQ leaves the port's slot.
        let mut xdp_rd = with_bh(|| {
            self.shared
                .xdp_txs
                .get(self.index as usize)
                .and_then(|s| s.lock().take())
        });
        if let Some(x) = xdp_rd.as_mut() {
            // Frames posted without a flush still go out.
            let mut env = self.shared.xdp_env(XdpSqKind::Redirect, None, &mut x.full);
            with_bh(|| F::xdp_sq_flush(&mut x.sq, &mut env));
        }
        // Let the device drain the SQs; reap their completions here (NAPI is off).
        for _ in 0..100 {
            if self.reap_closing(&mut xdp_rd) {
                break;
            }
            crate::kernel_ext::sync::msleep(1);
        }
        // The device stops touching the channel's memory: queues first, then their CQs, the
        // AF_XDP zero-copy ones before the channel's own (whose EQ their CQs report to).
        {
            let mut ids = self.xsk_queues.lock();
            drop(DeviceQueues::<F>::of(&self.shared, *ids));
            *ids = F::Queues::default();
        }
        drop(DeviceQueues::<F>::of(&self.shared, self.queues));
        // Completions it wrote until then are packets it sent (a device that had stopped
        // may have gone on meanwhile): reaped, not dropped below. A queue stopped on a
        // fault reaps nothing (its CQ is not trusted). A reap takes at most 512 CQEs; 64
        // cover the largest ring.
        for _ in 0..64 {
            if self.reap_closing(&mut xdp_rd) {
                break;
            }
        }
        // The AF_XDP zero-copy queues: the socket gets every descriptor back (as completed,
        // in order) and every posted buffer returns to its pool before the pool is let go;
        // their counters join those of the XSK queues closed before.
        let (x, ico) = with_bh(|| {
            let x = self.rx.lock().as_mut().and_then(|side| side.xsk.take());
            (x, self.ico.lock().take())
        });
        if let Some(x) = x {
            self.xsk_finish(x, ico);
        }
        let mut final_stats = self.stats();
        if let Some(x) = xdp_rd.as_mut() {
            let (t, arms) = F::xdp_sq_stats(&x.sq);
            final_stats.xdp_rd = t;
            final_stats.xdp.accumulate(&x.stats);
            final_stats.ch.arms = final_stats.ch.arms.wrapping_add(arms);
            let mut env = self.shared.xdp_env(XdpSqKind::Redirect, None, &mut x.full);
            let n = with_bh(|| F::xdp_sq_drain(&mut x.sq, &mut env, |f| f.release(None)));
            final_stats.xdp.xmit_err += u64::from(n);
        }
        let tx = self.with_tx_slot(|slot, _| slot.take()).flatten();
        if let Some(mut tx) = tx {
            let mut env = self.shared.closing_tx_env(txq);
            let pkts = F::tx_drain(&mut tx.sq, &mut env, |p| p.0.drop_any(DropReason::DevReady));
            final_stats.ch.tx_dropped += u64::from(pkts);
            txq.reset();
        }
        let rx = with_bh(|| self.rx.lock().take());
        if let Some(mut rx) = rx {
            let RxSide {
                rx, pool, xdpsq, ..
            } = &mut rx;
            let pool: &PagePool = pool;
            if let Some(x) = xdpsq.as_mut() {
                let mut env = self.shared.xdp_env(XdpSqKind::Tx, Some(pool), &mut x.full);
                let n = with_bh(|| F::xdp_sq_drain(&mut x.sq, &mut env, |f| f.release(Some(pool))));
                final_stats.xdp.tx_err += u64::from(n);
            }
            F::rx_drain(
                rx,
                &mut RxEnv {
                    pool,
                    mmio: self.shared.hw.bar(),
                },
            );
            final_stats.rx = F::rx_stats(rx).0;
        }
        final_stats
    }
}

/// Device queues of a channel that is not finished yet (or is being closed): destroyed on
/// drop unless kept, so a failed open leaves nothing behind in the device.
struct DeviceQueues<F: Family> {
    hw: Arc<Function>,
    func: Arc<F::Func>,
    queues: F::Queues,
    keep: bool,
}

impl<F: Family> DeviceQueues<F> {
    fn new(shared: &PortShared<F>) -> Self {
        Self::of(shared, F::Queues::default())
    }

    /// The queues of an open channel (destroyed on drop, which sleeps).
    fn of(shared: &PortShared<F>, queues: F::Queues) -> Self {
        Self {
            hw: shared.hw.clone(),
            func: shared.func.clone(),
            queues,
            keep: false,
        }
    }

    fn keep(mut self) {
        self.keep = true;
    }
}

impl<F: Family> Drop for DeviceQueues<F> {
    fn drop(&mut self) {
        if !self.keep {
            F::destroy(&self.hw, &self.func, &self.queues);
        }
    }
}
