// SPDX-License-Identifier: GPL-2.0

//! The port's transmit entry points: `ndo_start_xmit` and `ndo_xdp_xmit` (redirected frames
//! on the channel's XDP SQ, or through the regular SQ as skbs for families without XDP SQs),
//! on the TX slots the port shares with its channels ([`PortShared`]).
//!
//! Upstream counterpart: `en_tx.c` (`mlx5e_xmit`) and `en/xdp.c` (`mlx5e_xdp_xmit`).

use crate::channel::shared::PortShared;
use crate::channel::XdpSqSide;
use crate::family::Family;
use crate::hwif::pkt::TxRejectReason;
use crate::kernel_ext::net::device::Device;
use crate::kernel_ext::net::queue::XmitCtx;
use crate::kernel_ext::net::skb::{DropReason, SkBuff};
use crate::kernel_ext::net::xdp::XdpFrames;
use crate::kernel_ext::sync::{xmit_context, XmitContext};
use crate::xdp::{XdpSqKind, XdpTx};
use core::sync::atomic::Ordering;
use kernel::prelude::*;

impl<F: Family> PortShared<F> {
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
            self.counters
                .tx_hardirq_busy
                .fetch_add(1, Ordering::Relaxed);
            return Err(skb);
        }
        let q = u32::from(skb.queue_mapping());
        let Some(txq) = dev.tx_queue(q) else {
            self.counters.tx_dropped.fetch_add(1, Ordering::Relaxed);
            skb.drop_any(DropReason::DevReady);
            return Ok(());
        };
        let more = crate::kernel_ext::net::queue::xmit_more();
        self.xmit_on(txq, q, skb, more, ctx, |_, _| ())
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
        let mut env = self.xdp_env(XdpSqKind::Redirect, None, full);
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

    /// `ndo_xdp_xmit` without XDP SQs (mana_xdp_xmit): each frame becomes an skb sent on
    /// TX queue `q`.
    fn xdp_xmit_skbs(&self, dev: &Device, q: u32, frames: &mut XdpFrames<'_>) {
        while let Some(f) = frames.next() {
            match f.into_tx_skb(dev, q as u16) {
                Ok(skb) => {
                    // A frame the SQ cannot take is dropped here (it is an skb now) and
                    // counted, as mlx5e counts its XDP SQ's refusals.
                    self.xmit_xdp_skb(dev, q, skb, |side, r| match r {
                        Ok(()) => side.xdp.xmit += 1,
                        Err(TxRejectReason::Busy) => side.xdp.xmit_full += 1,
                        Err(_) => side.xdp.xmit_err += 1,
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
