// SPDX-License-Identifier: GPL-2.0

//! What a port shares with its channels: the TX slots (its TX queues' SQs) and the
//! `ndo_xdp_xmit` SQ slots, the transmit through a slot that NAPI uses too (XDP_TX through the
//! regular SQ as an skb, for families without XDP SQs; XDP_TX of a frame copied out of an
//! XSK buffer), the queues the channels' recovery runs on, and the reopen a channel asks of
//! its port after a fault no queue reset covers ([`PortWork`], which runs the port's
//! [`PortWorkTarget`]). Below the port: the channels reach it without knowing the port's type.
//!
//! Upstream counterpart: the parts of `struct mlx5e_priv` (`en.h`) the channels reach
//! (`txq2sq`, the work queue, `tx_timeout_work`), and the XDP transmit of `en/xdp.c`
//! (`mlx5e_xmit_xdp_frame`).

use crate::bus::{Bar, Function};
use crate::channel::recover::Fault;
use crate::channel::{TxSide, TxSlot, XdpSlot, XdpSqSide};
use crate::family::env::{TxEnv, TxSkb};
use crate::family::stats::ChAtomics;
use crate::family::Family;
use crate::hwif::pkt::TxRejectReason;
use crate::kernel_ext::dma::DmaDevice;
use crate::kernel_ext::net::device::Device;
use crate::kernel_ext::net::page_pool::PagePool;
use crate::kernel_ext::net::queue::{TxQueue, XmitLocked};
use crate::kernel_ext::net::skb::{DropReason, SkBuff};
use crate::kernel_ext::net::xdp::XdpFrame;
use crate::kernel_ext::sync::with_rtnl;
use crate::kernel_ext::wq::OwnedQueue;
use crate::xdp::{XdpEnv, XdpSqKind, XdpTx};
use core::pin::Pin;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::{Arc, Mutex};
use kernel::types::ARef;
use kernel::workqueue::{Work, WorkItem};
use kernel::{new_mutex, new_work};

/// What a port shares with its channels and its transmit path.
pub(crate) struct PortShared<F: Family> {
    /// The port's function on the bus (registers, vectors).
    pub(crate) hw: Arc<Function>,
    /// The device's DMA parent.
    pub(crate) dma: Arc<DmaDevice>,
    /// The port's function, brought up by the driver at probe.
    pub(crate) func: Arc<F::Func>,
    /// One slot per possible TX queue.
    pub(crate) txs: KVec<TxSlot<F>>,
    /// One `ndo_xdp_xmit` SQ slot per possible channel.
    pub(crate) xdp_txs: KVec<XdpSlot<F>>,
    /// Channels open (the queues `ndo_xdp_xmit` spreads frames over; 0 when down).
    pub(crate) live: AtomicU32,
    /// The port's own counters, in its sums: packets handed to a TX queue whose channel was
    /// closed (dropped: `tx_dropped`), transmits refused in hard interrupt context (netpoll,
    /// see `PortShared::xmit`: `tx_hardirq_busy`).
    pub(crate) counters: ChAtomics,
    /// `NETIF_F_RXCSUM` (`ethtool -K <dev> rx on|off`): the device's checksum verdict is
    /// passed on to the stack (`CHECKSUM_UNNECESSARY`); when off, every packet goes up
    /// `CHECKSUM_NONE` and the stack verifies it, as mlx5e does.
    pub(crate) rx_csum: AtomicBool,
    /// Received packets go up `CHECKSUM_COMPLETE` from the device's sum where mlx5e's
    /// conditions allow: the family's devices give one and its
    /// [`crate::family::Family::NO_CSUM_COMPLETE`] flag is off (mlx5e's
    /// `MLX5E_RQ_STATE_NO_CSUM_COMPLETE` clear). Packets an XDP program saw never do.
    pub(crate) rx_csum_complete: AtomicBool,
    /// `NETIF_F_RXHASH` (`ethtool -K <dev> rxhash on|off`): the device's RSS hash is set on
    /// received packets; when off none is (the stack computes its own when it needs one).
    pub(crate) rx_hash: AtomicBool,
    /// The interface is up with an XDP program attached: the AF_XDP zero-copy queues of
    /// channels with a pool exist (`ndo_xsk_wakeup` answers `ENETDOWN` otherwise, as
    /// mlx5e's `mlx5e_xdp_is_active`). Set under the port's state lock.
    pub(crate) xsk_active: AtomicBool,
    /// Where the channels' queue recovery runs (commands sleep); flushed when a channel
    /// closes.
    pub(crate) wq: OwnedQueue,
    /// The port's work: reopening the channels after a fault no queue reset covers, and
    /// reading the hardware counters.
    pub(crate) port_work: Arc<PortWork>,
    /// Where [`PortShared::port_work`] runs (it closes channels, so not on `wq`).
    pub(crate) port_wq: OwnedQueue,
    /// The port's devlink health reporters, where the channels' recovery reports its
    /// faults (none before the port's netdev is registered and after it is torn down, or if
    /// they could not be made: the recovery then runs without them, as mlx5e's).
    pub(crate) health: HealthSlot<F>,
}

/// Where a port keeps its reporters ([`PortShared::health`]).
pub(crate) type HealthSlot<F> = Pin<KBox<Mutex<Option<Arc<dyn HealthReport<F>>>>>>;

/// The port's devlink health reporters as the channels' recovery reaches them
/// ([`PortShared::health`]; the port implements it, so that the channels need not know the
/// port's type).
pub(crate) trait HealthReport<F: Family>: Send + Sync {
    /// Reports `fault`, described by `msg`, on the port's `tx` or `rx` reporter
    /// ([`Fault::reporter`]), whose recovery is `fault.recover()`. Returns what the devlink
    /// core returned: the recovery's result, or `ECANCELED` if it did not recover (the
    /// reporter in error, or within its grace period). Takes the devlink instance lock:
    /// the caller holds no lock of the channel's. Sleeps.
    fn report(&self, msg: &CStr, fault: &Fault<F>) -> Result;
}

impl<F: Family> PortShared<F> {
    /// The environment of a closing channel's regular SQ (its queue `txq` disabled, which
    /// completions reaped during teardown or recovery do not wake) on the port's registers
    /// and DMA device.
    pub(crate) fn closing_tx_env<'a>(&'a self, txq: &'a TxQueue) -> TxEnv<'a> {
        TxEnv {
            mmio: self.hw.bar(),
            dma: &self.dma,
            txq,
            closing: true,
        }
    }

    /// The environment of an XDP SQ of `kind` on the port's registers and DMA device, with
    /// the channel's page pool for XDP_TX (`pool`) and the SQ's stop flag (`full`).
    #[inline(always)]
    pub(crate) fn xdp_env<'a>(
        &'a self,
        kind: XdpSqKind,
        pool: Option<&'a PagePool>,
        full: &'a mut bool,
    ) -> XdpEnv<'a> {
        self.xdp_env_on(self.hw.bar(), kind, pool, full)
    }

    /// [`Self::xdp_env`] on registers the caller already has (`mmio`, NAPI's).
    #[inline(always)]
    pub(crate) fn xdp_env_on<'a>(
        &'a self,
        mmio: Bar<'a>,
        kind: XdpSqKind,
        pool: Option<&'a PagePool>,
        full: &'a mut bool,
    ) -> XdpEnv<'a> {
        XdpEnv {
            mmio,
            dma: &self.dma,
            pool,
            kind,
            full,
        }
    }

    /// Asks for the port's channels to be closed and opened again (as `ethtool -L` with the
    /// same count does) after a fault on channel `ch` that no queue reset covers. Returns
    /// whether this request queued the reopen (one waits at a time, and covers every fault
    /// before it runs). Any context.
    #[cold]
    pub(crate) fn request_reopen(&self, ch: u32, why: Reopen) -> bool {
        if !self.port_work.arm(ch, why) {
            return false;
        }
        let _ = self.port_wq.queue().enqueue::<_, 0>(self.port_work.clone());
        true
    }

    /// Asks for the port's hardware counters to be read again from the device, for
    /// `ndo_get_stats64`, which may not sleep and shows what the last read found: as
    /// `mlx5e_get_stats` queues `update_stats_work`. One read waits at a time. Any context.
    pub(crate) fn request_counters(&self) {
        if self.port_work.counters_queued.swap(true, Ordering::AcqRel) {
            return;
        }
        if self
            .port_wq
            .queue()
            .enqueue::<_, 1>(self.port_work.clone())
            .is_err()
        {
            self.port_work
                .counters_queued
                .store(false, Ordering::Release);
        }
    }

    /// Transmits `skb` on TX queue `q` outside `ndo_start_xmit` (XDP_TX and redirected
    /// frames of families without XDP SQs, as mana does): under the queue's xmit lock,
    /// doorbell rung. A refusal drops the skb (counted by the SQ). `on_done` runs under the
    /// TX slot's lock with what the SQ did with the packet. Returns whether the SQ took it.
    pub(crate) fn xmit_xdp_skb(
        &self,
        dev: &Device,
        q: u32,
        skb: SkBuff,
        on_done: impl FnOnce(&mut TxSide<F>, Result<(), TxRejectReason>),
    ) -> bool {
        let Some(txq) = dev.tx_queue(q) else {
            self.counters.tx_dropped.fetch_add(1, Ordering::Relaxed);
            skb.drop_any(DropReason::DevReady);
            return false;
        };
        let mut xmit_lock = txq.lock();
        let mut sent = false;
        match self.xmit_on(txq, q, skb, false, &mut xmit_lock, |side, r| {
            sent = r.is_ok();
            on_done(side, r)
        }) {
            Ok(()) => sent,
            Err(skb) => {
                // No room: the SQ counted it busy; an XDP frame is not requeued.
                skb.drop_any(DropReason::DevReady);
                false
            }
        }
    }

    /// Transmits `skb` on queue `q` (`txq`), whose xmit lock `locked` proves held.
    pub(crate) fn xmit_on(
        &self,
        txq: &TxQueue,
        q: u32,
        skb: SkBuff,
        more: bool,
        locked: &mut impl XmitLocked,
        on_done: impl FnOnce(&mut TxSide<F>, Result<(), TxRejectReason>),
    ) -> Result<(), SkBuff> {
        let Some(tx) = self
            .txs
            .get(q as usize)
            .and_then(|slot| slot.get(locked))
            .and_then(Option::as_mut)
        else {
            // The queue's channel is closed (the stack stops the queue first, so this is
            // defensive); still counted.
            self.counters.tx_dropped.fetch_add(1, Ordering::Relaxed);
            skb.drop_any(DropReason::DevReady);
            return Ok(());
        };
        let mut env = TxEnv {
            mmio: self.hw.bar(),
            dma: &self.dma,
            txq,
            closing: false,
        };
        match F::xmit(&mut tx.sq, TxSkb(skb), more, &mut env) {
            Ok(()) => {
                on_done(tx, Ok(()));
                Ok(())
            }
            Err(rej) => {
                on_done(tx, Err(rej.reason));
                let reason = match rej.reason {
                    TxRejectReason::Busy => return Err(rej.pkt.0),
                    TxRejectReason::MapError => DropReason::NoMem,
                    TxRejectReason::SqError => DropReason::DevReady,
                    TxRejectReason::Malformed
                    | TxRejectReason::TooManySegments
                    | TxRejectReason::HeaderTooLong => DropReason::PktTooBig,
                };
                // The SQ counted the refusal in its `dropped`.
                rej.pkt.0.drop_any(reason);
                Ok(())
            }
        }
    }

    /// Sends one frame on the `ndo_xdp_xmit` SQ of channel `q` and rings (XDP_TX of a frame
    /// copied out of an XSK buffer); through the regular SQ as an skb for families without
    /// XDP SQs. Called from that channel's NAPI poll.
    pub(crate) fn xdp_tx_frame(&self, dev: &Device, q: u32, f: XdpFrame) {
        if !F::XDP_SQS {
            match f.into_tx_skb(dev, q as u16) {
                Ok(skb) => {
                    self.xmit_xdp_skb(dev, q, skb, |_, _| ());
                }
                Err(f) => f.return_napi(),
            }
            return;
        }
        let slot = self.xdp_txs.get(q as usize);
        let mut g = slot.map(|s| s.lock());
        let Some(side) = g.as_mut().and_then(|g| g.as_mut()) else {
            f.return_napi();
            return;
        };
        let XdpSqSide {
            sq, full, stats, ..
        } = side;
        let mut env = self.xdp_env(XdpSqKind::Redirect, None, full);
        match F::xdp_sq_xmit(sq, XdpTx::Frame(f), &mut env) {
            Ok(()) => F::xdp_sq_flush(sq, &mut env),
            Err(rej) => {
                if rej.reason == TxRejectReason::Busy {
                    stats.xmit_full += 1;
                } else {
                    stats.xmit_err += 1;
                }
                rej.pkt.release(None);
            }
        }
    }
}

/// Why a port's channels are reopened ([`PortShared::request_reopen`]): a fault on a queue
/// that is not reset in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Reopen {
    /// The regular SQ stopped on a fault, and the family has no in-place reset.
    SqFault = 1,
    /// The regular RQ stopped on a fault, and the family has no in-place reset.
    RqFault,
    /// The TX watchdog fired with no lost interrupt, and the family has no SQ reset.
    TxTimeout,
    /// An XDP SQ (XDP_TX, redirect, XSK or ICO) stopped on a fault.
    XdpSqFault,
    /// The XSK RQ stopped on a fault.
    XskRqFault,
    /// `devlink health recover` of the port's `tx` or `rx` reporter (a recovery without a
    /// fault to recover from: every channel is made again, as mlx5e's).
    Devlink,
}

impl Reopen {
    fn from_u32(v: u32) -> Option<Self> {
        [
            Self::SqFault,
            Self::RqFault,
            Self::TxTimeout,
            Self::XdpSqFault,
            Self::XskRqFault,
            Self::Devlink,
        ]
        .into_iter()
        .find(|r| *r as u32 == v)
    }

    pub(crate) fn what(self) -> &'static str {
        match self {
            Self::SqFault => "SQ fault",
            Self::RqFault => "RQ fault",
            Self::TxTimeout => "transmit timeout, no lost interrupt",
            Self::XdpSqFault => "XDP SQ fault",
            Self::XskRqFault => "XSK RQ fault",
            Self::Devlink => "devlink health recover",
        }
    }
}

/// What the reopen work runs on: the port, while its interface is up ([`PortWork`]'s
/// target; a port of any family, so that the channels need not know the port's type).
pub(crate) trait PortWorkTarget: Send + Sync {
    /// Reopens the port's channels after a fault on channel `ch` no queue reset covers,
    /// and clears the request `req` once the old channels are closed. Under RTNL.
    fn reopen(&self, dev: &Device, ch: u32, why: Reopen, req: &AtomicU32);
    /// Reads the port's hardware counters from the device again
    /// ([`PortShared::request_counters`]). Under RTNL.
    fn refresh_counters(&self);
}

/// The port's work under RTNL: the reopen of its channels after a fault no queue reset
/// covers (as mlx5e reopens its channels from a work item), and the read of its hardware
/// counters (as mlx5e's `update_stats_work`). Runs on the port's `port_wq` (not the
/// channels' recovery queue, which closing a channel flushes).
///
/// Lifetimes: the port and its device are reachable only while the interface is up
/// (`target`, set by `ndo_open` and cleared by `ndo_stop`, both under RTNL); the work takes
/// RTNL before it looks, so it never sees a device being unregistered, and it drops its
/// reference to the port before RTNL is released, while the netdev's own reference still
/// exists (that one goes only after `unregister_netdev`): the port is never freed here.
/// Nothing waits for this work under RTNL (the queue is destroyed when the port's shared
/// state goes, after unregistration).
///
/// The same target, under the same rules, serves a second work item: the read of the
/// hardware counters that `ndo_get_stats64` asks for ([`PortShared::request_counters`];
/// only while the interface is up, when there is a target).
#[pin_data]
pub(crate) struct PortWork {
    /// The reopen of the channels.
    #[pin]
    reopen_work: Work<PortWork>,
    /// The read of the hardware counters.
    #[pin]
    counters_work: Work<PortWork, 1>,
    /// A read of the counters is queued.
    counters_queued: AtomicBool,
    /// The pending request, `(reason << 16) | channel` (0: none); one at a time.
    req: AtomicU32,
    /// The port and its device while the interface is up (a reference cycle until
    /// `ndo_stop`).
    #[pin]
    pub(crate) target: Mutex<Option<(Arc<dyn PortWorkTarget>, ARef<Device>)>>,
}

kernel::impl_has_work! {
    impl HasWork<Self> for PortWork { self.reopen_work }
    impl HasWork<Self, 1> for PortWork { self.counters_work }
}

impl PortWork {
    /// Idle work with no port attached.
    pub(crate) fn new() -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self {
                reopen_work <- new_work!("rsnic::PortWork::reopen_work"),
                counters_work <- new_work!("rsnic::PortWork::counters_work"),
                counters_queued: AtomicBool::new(false),
                req: AtomicU32::new(0),
                target <- new_mutex!(None, "rsnic::PortWork::target"),
            }),
            GFP_KERNEL,
        )
    }

    /// Records a request from channel `ch`; `false` if one is already waiting (that reopen
    /// covers this fault too). Any context.
    pub(crate) fn arm(&self, ch: u32, why: Reopen) -> bool {
        let code = ((why as u32) << 16) | (ch & 0xffff);
        self.req
            .compare_exchange(0, code, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }
}

impl WorkItem for PortWork {
    type Pointer = Arc<PortWork>;

    fn run(this: Arc<PortWork>) {
        with_rtnl(|| {
            let code = this.req.load(Ordering::Acquire);
            let target = this.target.lock().clone();
            match (target, Reopen::from_u32(code >> 16)) {
                (Some((port, dev)), Some(why)) => port.reopen(&dev, code & 0xffff, why, &this.req),
                _ => this.req.store(0, Ordering::Release),
            }
        });
    }
}

impl WorkItem<1> for PortWork {
    type Pointer = Arc<PortWork>;

    fn run(this: Arc<PortWork>) {
        // Cleared first: a request that comes during the read queues the next one.
        this.counters_queued.store(false, Ordering::Release);
        with_rtnl(|| {
            let target = this.target.lock().clone();
            if let Some((port, _)) = target {
                port.refresh_counters();
            }
        });
    }
}
