// SPDX-License-Identifier: GPL-2.0

//! AF_XDP zero-copy queues of a channel: opened and closed with their pool while the
//! channel lives, polled in its NAPI, woken by `ndo_xsk_wakeup`.
//!
//! Upstream counterpart: `en/xsk/setup.c`, `en/xsk/rx.c`, `en/xsk/tx.c`.

use crate::bus::Bar;
use crate::channel::shared::PortShared;
use crate::channel::{Channel, XdpSqSide, XskQueues, XskSide};
use crate::family::params::ChannelParams;
use crate::family::stats::ChannelStats;
use crate::family::stats::{ChStats, XskStats};
use crate::family::{Family, OpenCtx, RxMeta, TxReaped};
use crate::kernel_ext::net::device::Device;
use crate::kernel_ext::net::napi::Napi;
use crate::kernel_ext::net::xdp::BpfProg;
use crate::kernel_ext::net::xsk::{XskPool, XskRxq, XskVerdict};
use crate::kernel_ext::sync::with_bh;
use crate::xdp::{XdpSqKind, XdpTx, XskRxEnv};
use core::sync::atomic::Ordering;
use kernel::prelude::*;
use kernel::sync::Arc;

impl<F: Family> Channel<F> {
    /// Creates the AF_XDP zero-copy queues of channel `index` for `pool`, as mlx5e's
    /// `mlx5e_open_xsk`: the XSK SQ, the ICO SQ (families with a NOP WQE) and the XSK RQ,
    /// with their CQs on the channel's EQ (named in `chq`, the channel's device queues), and
    /// posts the buffers the fill ring has now, without waiting for more (a socket may fill
    /// it later). Returns them with their device ids ([`crate::family::Control::xsk_split`]);
    /// a failure destroys what was made. Sleeps.
    #[inline(never)]
    fn open_xsk(
        dev: &Device,
        shared: &Arc<PortShared<F>>,
        index: u32,
        chq: &F::Queues,
        p: &ChannelParams<F::PrivFlag>,
        pool: XskPool,
    ) -> Result<XskQueues<F>> {
        let ctx = OpenCtx {
            hw: &shared.hw,
            dma: &shared.dma,
            intr: index as usize,
            pool: None,
            func: &shared.func,
        };
        // The channel's queues with the XSK ones added as they are made, then split off
        // (the channel's stay with the channel).
        let mut q = *chq;
        type Made<F> = (KBox<XskSide<F>>, Option<KBox<XdpSqSide<F>>>);
        let mut made = || -> Result<Made<F>> {
            // On the heap (out of the callers' frames), allocated before the buffers are
            // posted: nothing can fail once they are.
            let xbox = KBox::<XskSide<F>>::new_uninit(GFP_KERNEL)?;
            let ibox = KBox::<XdpSqSide<F>>::new_uninit(GFP_KERNEL)?;
            let sq = F::xdp_sq_open(&ctx, &mut q, p, XdpSqKind::Xsk)?;
            // Without an ICO SQ (no NOP WQE, MANA) wake-ups schedule NAPI directly.
            let ico = F::xdp_sq_open(&ctx, &mut q, p, XdpSqKind::Ico)?;
            let rxq = XskRxq::new(dev, index, &pool)?;
            // Frames up to the MTU fit (checked when the pool was registered and at every MTU
            // change since).
            let buf_size = pool.rx_frame_size().min(p.rx_buf_len());
            let mut env = XskRxEnv {
                pool,
                mmio: shared.hw.bar(),
                alloc_failed: false,
            };
            // The last fallible step: it posts the buffers the fill ring has now.
            let Some(sq) = sq else {
                return Err(EINVAL);
            };
            let Some((rq, rqn)) = F::xsk_rq_open(&ctx, &mut q, p, buf_size, &mut env)? else {
                return Err(EINVAL);
            };
            Ok((
                KBox::write(
                    xbox,
                    XskSide {
                        pool,
                        rxq,
                        rq,
                        rqn,
                        sq: XdpSqSide::new(sq),
                        tx_lost: 0,
                        stats: XskStats::default(),
                    },
                ),
                ico.map(|ico| KBox::write(ibox, XdpSqSide::new(ico))),
            ))
        };
        let r = made();
        let xq = F::xsk_split(&mut q);
        match r {
            Ok((x, ico)) => Ok((x, ico, xq)),
            Err(e) => {
                F::destroy(&shared.hw, &shared.func, &xq);
                Err(e)
            }
        }
    }

    /// Opens the AF_XDP zero-copy queues of a channel for `pool`: a channel just opened
    /// (before [`Channel::activate`]: there is no NAPI to quiesce yet), or a live one whose
    /// queue got a pool bound while an XDP program is attached, as mlx5e's
    /// `mlx5e_xsk_enable_locked`: the queues are made while the channel runs, then put in
    /// place with only this channel's NAPI quiesced; the other channels go on. The port
    /// switches the steering to the XSK RQ afterwards. `ndo_xsk_wakeup` meanwhile finds
    /// NAPI disabled or no XSK queues and answers 0 (the poll scheduled at the end picks up
    /// what the socket queued). Under RTNL; sleeps.
    pub(crate) fn xsk_enable(&self, p: &ChannelParams<F::PrivFlag>, pool: XskPool) -> Result {
        if !F::XSK_ZC || self.xsk.zc.load(Ordering::Acquire) {
            return Err(EBUSY);
        }
        let (x, ico, xq) =
            Self::open_xsk(&self.dev, &self.shared, self.index, &self.queues, p, pool)?;
        let rqn = x.rqn;
        let mut ids = self.xsk_queues.lock();
        *ids = xq;
        self.napi.disable();
        // The interrupt still runs meanwhile, but schedules nothing: what it found is polled
        // when NAPI is scheduled below.
        let left = with_bh(|| {
            let mut rx = self.rx.lock();
            let left = match rx.as_mut() {
                Some(side) => {
                    side.xsk = Some(x);
                    None
                }
                // Cannot happen: the port only enables live channels, under its state lock.
                None => Some(x),
            };
            drop(rx);
            match left {
                Some(x) => Some((x, ico)),
                None => {
                    *self.ico.lock() = ico;
                    F::irq_bind(&mut self.irq.lock(), &self.queues, Some(&xq));
                    None
                }
            }
        });
        if let Some((x, ico)) = left {
            self.napi.enable();
            self.xsk_close(x, ico, &xq);
            *ids = F::Queues::default();
            return Err(ENXIO);
        }
        drop(ids);
        self.xsk.rqn.store(rqn, Ordering::Release);
        self.xsk.nop_pending.store(false, Ordering::Release);
        self.xsk.zc.store(true, Ordering::Release);
        self.napi.enable();
        // The new CQs' first arm, the XSK RQ's first refill, and whatever the interrupt
        // found while NAPI was off (mlx5e_trigger_napi_icosq).
        with_bh(|| self.napi.schedule());
        Ok(())
    }

    /// Closes the AF_XDP zero-copy queues of a live channel (its pool is unbound, or the
    /// port goes on without them), as mlx5e's `mlx5e_xsk_disable_locked`: the port switched
    /// the steering back to the regular RQ first; this channel's NAPI is quiesced while they
    /// are taken out, then the device finishes what was posted, the queues are destroyed,
    /// every outstanding TX descriptor is reported complete and every posted buffer freed,
    /// so the driver no longer touches the pool when this returns. Under RTNL; sleeps.
    pub(crate) fn xsk_disable(&self) {
        if !self.xsk.zc.swap(false, Ordering::AcqRel) {
            return;
        }
        self.xsk.steered.store(false, Ordering::Release);
        let mut ids = self.xsk_queues.lock();
        self.napi.disable();
        let (x, ico) = with_bh(|| {
            let x = self.rx.lock().as_mut().and_then(|side| side.xsk.take());
            (x, self.ico.lock().take())
        });
        self.xsk.nop_pending.store(false, Ordering::Release);
        self.xsk.rqn.store(0, Ordering::Release);
        self.napi.enable();
        with_bh(|| self.napi.schedule());
        if let Some(x) = x {
            self.xsk_close(x, ico, &ids);
        }
        *ids = F::Queues::default();
    }

    /// Lets the device finish what was posted on XSK queues taken out of the channel (up to
    /// about 100 ms), destroys their device queues (`xq`), then [`Channel::xsk_finish`]. The
    /// channel's interrupt state then expects only its own queues' events (those of the
    /// destroyed CQs still waiting are consumed first, and NAPI scheduled for what they
    /// covered). Sleeps.
    #[inline(never)]
    fn xsk_close(
        &self,
        mut x: KBox<XskSide<F>>,
        mut ico: Option<KBox<XdpSqSide<F>>>,
        xq: &F::Queues,
    ) {
        for _ in 0..100 {
            if with_bh(|| self.xsk_reap_closing(&mut x, ico.as_deref_mut())) {
                break;
            }
            crate::kernel_ext::sync::msleep(1);
        }
        F::destroy(&self.shared.hw, &self.shared.func, xq);
        // Completions written until then are descriptors the device sent.
        for _ in 0..64 {
            if with_bh(|| self.xsk_reap_closing(&mut x, ico.as_deref_mut())) {
                break;
            }
        }
        let mmio = self.shared.hw.bar();
        with_bh(|| {
            let waited = {
                let mut irq = self.irq.lock();
                let n = F::irq_recover(&mut irq, &mmio);
                F::irq_bind(&mut irq, &self.queues, None);
                n
            };
            if waited > 0 {
                self.napi.schedule();
            }
        });
        self.xsk_finish(x, ico);
    }

    /// Frees what XSK queues the device no longer runs still hold: every outstanding TX
    /// descriptor is reported complete (in order, after those completed) and every posted
    /// buffer goes back to the pool; their counters join the channel's `xsk_closed`. The
    /// XSK RQ's `xdp_rxq_info` is unregistered as `x` goes. Sleeps (allocates).
    #[inline(never)]
    pub(super) fn xsk_finish(&self, mut xb: KBox<XskSide<F>>, mut ib: Option<KBox<XdpSqSide<F>>>) {
        let x: &mut XskSide<F> = &mut xb;
        let mut ico = ib.as_deref_mut();
        let mut env = self.shared.xdp_env(XdpSqKind::Xsk, None, &mut x.sq.full);
        let n = with_bh(|| F::xdp_sq_drain(&mut x.sq.sq, &mut env, |f| f.release(None)));
        x.pool.tx_completed(n.wrapping_add(x.tx_lost));
        let mut renv = XskRxEnv {
            pool: x.pool,
            mmio: self.shared.hw.bar(),
            alloc_failed: false,
        };
        with_bh(|| F::xsk_rx_drain(&mut x.rq, &mut renv));
        let mut arms = 0u64;
        if let Some(ico) = ico.as_mut() {
            let mut env = self.shared.xdp_env(XdpSqKind::Ico, None, &mut ico.full);
            with_bh(|| F::xdp_sq_drain(&mut ico.sq, &mut env, |f| f.release(None)));
            arms = F::xdp_sq_stats(&ico.sq).1;
        }
        let (r, a1) = F::xsk_rx_stats(&x.rq);
        let (t, a2) = F::xdp_sq_stats(&x.sq.sq);
        let closed = KBox::new(
            ChannelStats::<F> {
                xsk_rx: r,
                xsk_sq: t,
                xsk: x.stats,
                ch: ChStats {
                    arms: arms.wrapping_add(a1).wrapping_add(a2),
                    ..Default::default()
                },
                ..Default::default()
            },
            GFP_KERNEL,
        );
        let Ok(closed) = closed else {
            pr_warn!(
                "{}: ch{}: no memory to keep the closed AF_XDP queues' counters\n",
                self.dev.name(),
                self.index
            );
            return;
        };
        with_bh(|| {
            let mut g = self.xsk_closed.lock();
            match g.as_mut() {
                Some(c) => c.accumulate(&closed),
                None => *g = Some(closed),
            }
        });
    }

    /// Reaps the completions of XSK queues being closed (the XSK SQ's to the socket's
    /// completion ring, in order; the ICO SQ's NOPs). Returns whether both are idle.
    fn xsk_reap_closing(&self, x: &mut XskSide<F>, ico: Option<&mut XdpSqSide<F>>) -> bool {
        let mut idle = self.xsk_tx_reap(x, self.shared.hw.bar()).idle;
        if let Some(ico) = ico {
            let mut env = self.shared.xdp_env(XdpSqKind::Ico, None, &mut ico.full);
            idle &= F::xdp_sq_reap(&mut ico.sq, &mut env, |f| f.release(None)).idle;
        }
        idle
    }

    /// Whether the channel has AF_XDP zero-copy queues.
    pub(crate) fn has_xsk(&self) -> bool {
        self.xsk.zc.load(Ordering::Acquire)
    }

    /// Points the channel's RSS entries at its XSK RQ (`on`) or back at its regular RQ
    /// ([`Channel::rqn`]); the port programs the device then.
    pub(crate) fn steer_xsk(&self, on: bool) {
        self.xsk
            .steered
            .store(on && self.has_xsk(), Ordering::Release);
    }

    /// `ndo_xsk_wakeup`, as mlx5e's `mlx5e_xsk_wakeup`: if NAPI is scheduled or running it is
    /// marked missed, so that it polls again and takes what the socket queued, and nothing
    /// else is done (`napi_if_scheduled_mark_missed`; also while NAPI is disabled, during
    /// an activation, which schedules it at its end). Otherwise a NOP on the ICO SQ, whose
    /// completion raises the channel's interrupt, so NAPI runs where the channel's
    /// interrupt is handled (mlx5e's `mlx5e_trigger_napi_icosq`), unless one is already in
    /// flight (its completion runs NAPI: mlx5e's `MLX5E_SQ_STATE_PENDING_XSK_TX`). Families
    /// without a NOP WQE (MANA) schedule the channel's NAPI here instead, on the calling
    /// CPU. Without XSK queues (not yet made) nothing is kicked. Always 0, as mlx5e. Any
    /// CPU.
    pub(crate) fn xsk_wakeup(&self) -> Result {
        self.xsk.counts.wakeups.fetch_add(1, Ordering::Relaxed);
        if self.napi.if_scheduled_mark_missed() {
            self.xsk.counts.wake_missed.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
        if !self.xsk.zc.load(Ordering::Acquire) {
            return Ok(());
        }
        with_bh(|| {
            let mut g = self.ico.lock();
            let Some(ico) = g.as_mut() else {
                drop(g);
                // Bottom halves are off: the softirq runs when they are enabled again.
                if self.napi.schedule() {
                    self.xsk.counts.wake_kicks.fetch_add(1, Ordering::Relaxed);
                }
                return;
            };
            if self.xsk.nop_pending.swap(true, Ordering::AcqRel) {
                return;
            }
            let XdpSqSide { sq, full, .. } = &mut **ico;
            let mut env = self.shared.xdp_env(XdpSqKind::Ico, None, full);
            if F::xdp_sq_nop(sq, &mut env) {
                self.xsk.counts.wake_kicks.fetch_add(1, Ordering::Relaxed);
            } else {
                // No room (or the SQ stopped on a fault, which reopens the channels).
                self.xsk.nop_pending.store(false, Ordering::Release);
            }
        });
        Ok(())
    }

    /// Reaps the XSK SQ's completions and reports them to the socket's completion ring, in
    /// the order the descriptors were taken.
    pub(super) fn xsk_tx_reap(&self, x: &mut XskSide<F>, mmio: Bar<'_>) -> TxReaped {
        let mut done = 0u32;
        let mut env = self
            .shared
            .xdp_env_on(mmio, XdpSqKind::Xsk, None, &mut x.sq.full);
        let r = F::xdp_sq_reap(&mut x.sq.sq, &mut env, |f| {
            done += 1;
            f.release(None)
        });
        if r.idle && x.tx_lost > 0 {
            // Nothing in flight: the descriptors that were never sent come last.
            done += x.tx_lost;
            x.tx_lost = 0;
        }
        x.pool.tx_completed(done);
        r
    }

    /// One NAPI round of the AF_XDP zero-copy queues: TX completions, new descriptors from
    /// the socket's TX ring (up to `budget`, one doorbell), need_wakeup flags, then up to
    /// `budget` received frames through the program. Returns (RX work, TX busy).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn xsk_poll(
        &self,
        napi: &Napi<Self>,
        x: &mut XskSide<F>,
        prog: Option<&BpfProg>,
        budget: u32,
        mmio: Bar<'_>,
        redirected: &mut bool,
        counts: &mut ChStats,
    ) -> (u32, bool) {
        let reaped = self.xsk_tx_reap(x, mmio);
        let XskSide {
            pool,
            rxq,
            rq,
            sq,
            tx_lost,
            stats,
            ..
        } = x;
        let pool = *pool;
        let mut env = self
            .shared
            .xdp_env_on(mmio, XdpSqKind::Xsk, None, &mut sq.full);
        let (mut sent, mut peeked) = (0u32, false);
        while sent < budget && !*env.full {
            let Some(d) = pool.tx_peek() else {
                break;
            };
            peeked = true;
            match F::xdp_sq_xmit(&mut sq.sq, XdpTx::Xsk(d), &mut env) {
                Ok(()) => {
                    sent += 1;
                    sq.posted = true;
                }
                Err(rej) => {
                    stats.tx_err += 1;
                    *tx_lost += 1;
                    rej.pkt.release(None);
                }
            }
        }
        if peeked {
            pool.tx_release();
        }
        if sq.posted {
            F::xdp_sq_flush(&mut sq.sq, &mut env);
            sq.posted = false;
        }
        let tx_busy = reaped.busy || sent >= budget || *env.full;
        // The socket must kick us when we stopped for lack of descriptors (mlx5e: set
        // need_wakeup unless busy).
        pool.need_wakeup(false, !tx_busy);

        let dev: &Device = &self.dev;
        let queue = self.index as u16;
        let mut renv = XskRxEnv {
            pool,
            mmio,
            alloc_failed: false,
        };
        let work = F::xsk_rx_poll(rq, &mut renv, budget, |buf, m: &RxMeta| {
            match rxq.run(prog, napi, buf, m.len) {
                XskVerdict::Redirected => {
                    stats.xdp_redirect += 1;
                    *redirected = true;
                }
                XskVerdict::Drop | XskVerdict::Aborted => stats.xdp_drop += 1,
                XskVerdict::Pass(Some(mut skb)) => {
                    stats.pass += 1;
                    let csum = self.csum_verdict(m, counts);
                    let (hash, hash_type) = self.hash_of(m);
                    if skb.rx_finish(dev, csum, hash, hash_type, queue) {
                        counts.rx_mcast += 1;
                    }
                    if let Some(t) = m.vlan {
                        skb.put_vlan_tag(t);
                    }
                    napi.gro_receive(skb);
                }
                XskVerdict::Tx(Some(f)) => {
                    stats.xdp_tx += 1;
                    self.shared.xdp_tx_frame(dev, self.index, f);
                }
                XskVerdict::Pass(None) | XskVerdict::Tx(None) => stats.copy_err += 1,
            }
        });
        if renv.alloc_failed {
            stats.alloc_err += 1;
        }
        // The socket must refill and kick us when its fill ring ran dry.
        pool.need_wakeup(true, renv.alloc_failed);
        (work, tx_busy)
    }
}
