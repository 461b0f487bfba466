// SPDX-License-Identifier: GPL-2.0

//! Reading a channel's counters, under its locks.
//!
//! Upstream counterpart: `en_stats.c` (the software counters' gathering).

use crate::channel::Channel;
use crate::family::stats::{ChannelStats, Counters};
use crate::family::Family;
use crate::kernel_ext::sync::with_bh;
use core::sync::atomic::Ordering;

impl<F: Family> Channel<F> {
    /// Counters, read under the channel's locks.
    pub(crate) fn stats(&self) -> ChannelStats<F> {
        let mut s = ChannelStats::<F>::default();
        self.with_tx(|tx, _| {
            let (t, arms) = F::tx_stats(&tx.sq);
            s.tx = t;
            s.xdp.accumulate(&tx.xdp);
            s.ch.arms = s.ch.arms.wrapping_add(arms);
        });
        with_bh(|| {
            if let Some(slot) = self.shared.xdp_txs.get(self.index as usize) {
                if let Some(x) = slot.lock().as_ref() {
                    let (t, arms) = F::xdp_sq_stats(&x.sq);
                    s.xdp_rd = t;
                    s.xdp.accumulate(&x.stats);
                    s.ch.arms = s.ch.arms.wrapping_add(arms);
                }
            }
            if let Some(rx) = self.rx.lock().as_ref() {
                let (r, arms) = F::rx_stats(&rx.rx);
                s.rx = r;
                s.ch.accumulate(&rx.counts);
                s.xdp.accumulate(&rx.xdp);
                s.ch.arms = s.ch.arms.wrapping_add(arms);
                if let Some(x) = rx.xdpsq.as_ref() {
                    let (t, arms) = F::xdp_sq_stats(&x.sq);
                    s.xdpsq = t;
                    s.ch.arms = s.ch.arms.wrapping_add(arms);
                }
                if let Some(x) = rx.xsk.as_ref() {
                    let (r, arms) = F::xsk_rx_stats(&x.rq);
                    let (t, arms2) = F::xdp_sq_stats(&x.sq.sq);
                    s.xsk_rx = r;
                    s.xsk_sq = t;
                    s.xsk.accumulate(&x.stats);
                    s.ch.arms = s.ch.arms.wrapping_add(arms).wrapping_add(arms2);
                }
            }
            if let Some(ico) = self.ico.lock().as_ref() {
                let (_, arms) = F::xdp_sq_stats(&ico.sq);
                s.ch.arms = s.ch.arms.wrapping_add(arms);
            }
            // The XSK queues closed while the channel lived.
            if let Some(c) = self.xsk_closed.lock().as_ref() {
                s.accumulate(c);
            }
        });
        // What is counted without a lock: wake-ups, recoveries, timeouts, interrupts.
        s.xsk.accumulate(&self.xsk.counts.snapshot());
        s.ch.accumulate(&self.counters.snapshot());
        s.ch.eq_bad_events = with_bh(|| F::irq_bad_events(&self.irq.lock()));
        s.ch.dim_changes = self
            .dim_rx
            .ctx()
            .changes
            .load(Ordering::Relaxed)
            .wrapping_add(self.dim_tx.ctx().changes.load(Ordering::Relaxed));
        s
    }
}
