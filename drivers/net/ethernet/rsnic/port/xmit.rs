// SPDX-License-Identifier: GPL-2.0

//! What a port shares with its channels, and the transmit entry points that use it:
//! `ndo_start_xmit`, `ndo_xdp_xmit`, and XDP_TX through the regular SQ as an skb (families
//! without XDP SQs).
//!
//! Upstream counterpart: `en_tx.c` (`mlx5e_xmit`) and `en/xdp.c` (`mlx5e_xdp_xmit`).

use crate::bus::Function;
use crate::channel::env::{TxEnv, TxSkb};
use crate::channel::{TxSide, TxSlot, XdpSlot, XdpSqSide};
use crate::dp::pkt::TxRejectReason;
use crate::family::Family;
use crate::kernel_ext::dma::DmaDevice;
use crate::kernel_ext::net::device::Device;
use crate::kernel_ext::net::queue::{TxQueue, XmitCtx, XmitLocked};
use crate::kernel_ext::net::skb::{DropReason, SkBuff};
use crate::kernel_ext::net::xdp::{XdpFrame, XdpFrames};
use crate::kernel_ext::sync::{xmit_context, XmitContext};
use crate::kernel_ext::wq::OwnedQueue;
use crate::port::reset::{PortReset, Reopen};
use crate::xdp::{XdpEnv, XdpSqKind, XdpTx};
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;

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
    /// Packets handed to a TX queue whose channel was closed (dropped, counted).
    pub(crate) dropped_closed: AtomicU64,
    /// Transmits refused in hard interrupt context (netpoll: see [`PortShared::xmit`]).
    pub(crate) hardirq_busy: AtomicU64,
    /// `NETIF_F_RXCSUM` (`ethtool -K <dev> rx on|off`): the device's checksum verdict is
    /// passed on to the stack (`CHECKSUM_UNNECESSARY`); when off, every packet goes up
    /// `CHECKSUM_NONE` and the stack verifies it, as mlx5e does.
    pub(crate) rx_csum: AtomicBool,
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
    /// Reopening the channels after a fault no queue reset covers.
    pub(crate) reset: Arc<PortReset<F>>,
    /// Where [`PortShared::reset`] runs (it closes channels, so not on `wq`).
    pub(crate) reset_wq: OwnedQueue,
}

impl<F: Family> PortShared<F> {
    /// Asks for the port's channels to be closed and opened again (as `ethtool -L` with the
    /// same count does) after a fault on channel `ch` that no queue reset covers. Returns
    /// whether this request queued the reopen (one waits at a time, and covers every fault
    /// before it runs). Any context.
    #[cold]
    pub(crate) fn request_reopen(&self, ch: u32, why: Reopen) -> bool {
        if !self.reset.arm(ch, why) {
            return false;
        }
        let _ = self.reset_wq.queue().enqueue(self.reset.clone());
        true
    }

    /// Transmits `skb` on its TX queue. Called from `ndo_start_xmit`.
    ///
    /// The stack holds the queue's xmit lock (`ctx`), which guards the SQ's slot: no other
    /// lock is taken per packet.
    ///
    /// Netpoll (netconsole) calls it with interrupts disabled, under netconsole's
    /// `target_list_lock`, also from an interrupt handler that printed; it has taken the
    /// xmit lock with a trylock, so the slot is ours there too. In hard interrupt context
    /// the packet is still refused as busy (counted in `tx_hardirq_busy`): the DMA API's
    /// mapping and the device host's doorbell path are not promised to hard interrupt
    /// context. The doorbell is a posted write (`host`), which takes no lock.
    ///
    /// Netpoll retries a refused packet, then sends it from its work.
    pub(crate) fn xmit(&self, dev: &Device, skb: SkBuff, ctx: &mut XmitCtx) -> Result<(), SkBuff> {
        if let XmitContext::HardIrq = xmit_context() {
            self.hardirq_busy.fetch_add(1, Ordering::Relaxed);
            return Err(skb);
        }
        let q = u32::from(skb.queue_mapping());
        let Some(txq) = dev.tx_queue(q) else {
            self.dropped_closed.fetch_add(1, Ordering::Relaxed);
            skb.drop_any(DropReason::DevReady);
            return Ok(());
        };
        let more = crate::kernel_ext::net::queue::xmit_more();
        self.xmit_on(txq, q, skb, more, ctx, |_, _| ())
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
            self.dropped_closed.fetch_add(1, Ordering::Relaxed);
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
    fn xmit_on(
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
            self.dropped_closed.fetch_add(1, Ordering::Relaxed);
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

    /// `ndo_xdp_xmit`: sends frames redirected from another device on the queue of this
    /// CPU (modulo the open channels); rings once for the batch when `flush` is set.
    pub(crate) fn xdp_xmit(&self, dev: &Device, frames: &mut XdpFrames<'_>, flush: bool) {
        let live = self.live.load(Ordering::Acquire);
        if live == 0 {
            if let Some(f) = frames.next() {
                frames.give_back(f);
            }
            return;
        }
        let q = crate::kernel_ext::net::queue::this_cpu() % live;
        if !F::XDP_SQS {
            self.xdp_xmit_skbs(dev, q, frames);
            return;
        }
        let slot = self.xdp_txs.get(q as usize);
        let mut g = slot.map(|s| s.lock());
        let Some(side) = g.as_mut().and_then(|g| g.as_mut()) else {
            // The channel is closing: the core frees the frames.
            if let Some(f) = frames.next() {
                frames.give_back(f);
            }
            return;
        };
        let XdpSqSide {
            sq,
            full,
            posted,
            stats,
            ..
        } = side;
        let mut env = XdpEnv {
            mmio: self.hw.bar(),
            dma: &self.dma,
            pool: None,
            kind: XdpSqKind::Redirect,
            full,
        };
        while let Some(f) = frames.next() {
            if *env.full {
                stats.xmit_full += 1;
                frames.give_back(f);
                break;
            }
            match F::xdp_sq_xmit(sq, XdpTx::Frame(f), &mut env) {
                Ok(()) => *posted = true,
                Err(rej) => {
                    if rej.reason == TxRejectReason::Busy {
                        stats.xmit_full += 1;
                    } else {
                        stats.xmit_err += 1;
                    }
                    match rej.pkt {
                        XdpTx::Frame(f) => frames.give_back(f),
                        other => other.release(None),
                    }
                    break;
                }
            }
        }
        if flush && *posted {
            F::xdp_sq_flush(sq, &mut env);
            *posted = false;
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
        let mut env = XdpEnv {
            mmio: self.hw.bar(),
            dma: &self.dma,
            pool: None,
            kind: XdpSqKind::Redirect,
            full,
        };
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

    /// `ndo_xdp_xmit` without XDP SQs (mana_xdp_xmit): each frame becomes an skb sent on
    /// TX queue `q`.
    fn xdp_xmit_skbs(&self, dev: &Device, q: u32, frames: &mut XdpFrames<'_>) {
        while let Some(f) = frames.next() {
            match f.into_tx_skb(dev, q as u16) {
                Ok(skb) => {
                    // A frame the SQ cannot take is dropped here (it is an skb now) and
                    // counted, as mlx5e counts its XDP SQ's refusals.
                    self.xmit_xdp_skb(dev, q, skb, |side, r| match r {
                        Ok(()) => side.xdp_xmit += 1,
                        Err(TxRejectReason::Busy) => side.xdp_xmit_full += 1,
                        Err(_) => side.xdp_xmit_err += 1,
                    });
                }
                Err(f) => {
                    frames.give_back(f);
                    break;
                }
            }
        }
    }
}
