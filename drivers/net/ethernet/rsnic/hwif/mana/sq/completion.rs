// SPDX-License-Identifier: GPL-2.0

//! The MANA SQ's completion side (spec D.3, D.5): [`Sq::poll_cq`] takes one CQE per WQE in
//! FIFO order and frees its BUs, [`Sq::napi_poll`] adds the CQ re-arm, [`Sq::drain`]
//! releases what is left at teardown (upstream `mana_en.c`: `mana_poll_tx_cq`,
//! `mana_unmap_skb`).

use super::{Sq, SqError, TxPending, TxPoll, STOP_ROOM, TX_POLL_MAX};
use crate::hwif::hw::{Barriers, Coherent, Mmio};
use crate::hwif::mana::fmt::{is_tx_error, CQE_TX_OKAY};
use crate::hwif::mana::stats::add;
use crate::hwif::pkt::{DmaEntry, Slots, TxDmaMap, TxPacket, TxQueue};

impl<P: TxPacket, C: Coherent, F: Slots<TxPending<P>>, D: Slots<DmaEntry>> Sq<P, C, F, D> {
    /// Completes the oldest pending packet: unmaps its data and hands it to `release`.
    /// Returns its WQE's BUs and its BQL bytes; `None` if its entry holds no packet (cannot
    /// happen with consistent bookkeeping). Everything the entry describes is undone only
    /// together with taking its packet, so never twice.
    #[inline(always)]
    pub(super) fn complete_oldest<M: TxDmaMap<P>>(
        &mut self,
        map: &mut M,
        release: &mut impl FnMut(P),
    ) -> Option<(u32, u32)> {
        let i = (self.pend_cc & self.pend_mask) as usize;
        self.pend_cc = self.pend_cc.wrapping_add(1);
        let e = self.pending.get_mut(i)?;
        let p = e.pkt.take()?;
        if let Some(d) = e.dma {
            map.unmap(d);
        }
        let (bus, ndma, bytes) = (e.wqe_bu, e.num_dma, e.bytes);
        self.dma.pop(u32::from(ndma), map);
        release(p);
        Some((u32::from(bus), bytes))
    }

    /// Polls the TX CQ (`mana_poll_tx_cq`): up to min(4 × num_cqe, 512) CQEs, one per WQE in
    /// FIFO order; releases each packet to `release`, moves the tail, reports to BQL and wakes
    /// the queue when 512 bytes are free again. Does not ring the CQ: see [`Sq::napi_poll`].
    pub fn poll_cq<E>(&mut self, env: &mut E, mut release: impl FnMut(P)) -> TxPoll
    where
        E: Barriers + TxDmaMap<P> + TxQueue,
    {
        let mut r = TxPoll::default();
        if self.error.is_some() {
            // Stopped on a fault: what the device writes meanwhile is consumed unread (its
            // packets are dropped when the channels are reopened), so the CQ is armed past it.
            let max = self.cq.num().saturating_mul(4).min(TX_POLL_MAX);
            let n = self.cq.discard(env, max);
            add(&mut self.stats.cqes, u64::from(n));
            add(&mut self.stats.cqe_discarded, u64::from(n));
            // Consumed (the CQ doorbell must cover them), though none completes a packet.
            r.cqes = n;
            r.error = self.error;
            return r;
        }
        let max = self.cq.num().saturating_mul(4).min(TX_POLL_MAX);
        let mut bus = 0u32;
        while r.cqes < max {
            let cqe = match self.cq.poll_one(env) {
                Ok(Some(c)) => c,
                Ok(None) => break,
                Err(_) => {
                    add(&mut self.stats.cq_overflow, 1);
                    self.fail(SqError::CqOverflow);
                    break;
                }
            };
            r.cqes += 1;
            if !cqe.is_sq || cqe.wq_num != self.p.sq_id {
                add(&mut self.stats.cqe_bad, 1);
                self.fail(SqError::WrongQueue {
                    wq_num: cqe.wq_num,
                    is_sq: cqe.is_sq,
                });
                break;
            }
            if self.pend_cc == self.pend_pc {
                add(&mut self.stats.cqe_bad, 1);
                self.fail(SqError::Unexpected);
                break;
            }
            // The common type is tested first.
            match cqe.header().cqe_type {
                CQE_TX_OKAY => {}
                t if is_tx_error(t) => {
                    add(&mut self.stats.tx_cqe_err, 1);
                    r.errors += 1;
                }
                _ => {
                    add(&mut self.stats.tx_cqe_unknown_type, 1);
                    r.errors += 1;
                }
            }
            if let Some((b, bytes)) = self.complete_oldest(env, &mut release) {
                bus = bus.wrapping_add(b);
                r.packets += 1;
                r.bytes = r.bytes.wrapping_add(bytes);
            }
        }
        add(&mut self.stats.cqes, u64::from(r.cqes));
        if r.cqes > 0 {
            self.wq.move_tail(bus);
            env.completed(r.packets, r.bytes);
        }
        if env.is_stopped() && self.error.is_none() && self.wq.avail_space() >= STOP_ROOM {
            env.wake();
            add(&mut self.stats.wake_queue, 1);
            r.woke = true;
        }
        r.error = self.error;
        r
    }

    /// One NAPI round of the TX CQ: [`Sq::poll_cq`], then the CQ re-arm rule with the
    /// packets released as the work done
    /// ([`Cq::napi_done`](crate::hwif::mana::cq::Cq::napi_done)). Returns the poll and
    /// whether NAPI completes.
    pub fn napi_poll<E>(
        &mut self,
        budget: u32,
        env: &mut E,
        release: impl FnMut(P),
    ) -> (TxPoll, bool)
    where
        E: Mmio + Barriers + TxDmaMap<P> + TxQueue,
    {
        let r = self.poll_cq(env, release);
        let done = self.cq.napi_done(r.cqes, budget, env);
        (r, done)
    }

    /// Releases every outstanding packet without completions (teardown, once the device no
    /// longer processes the SQ). Returns (packets, BQL bytes).
    pub fn drain<M: TxDmaMap<P>>(&mut self, map: &mut M, mut release: impl FnMut(P)) -> (u32, u32) {
        let (mut pk, mut by) = (0u32, 0u32);
        while self.pend_cc != self.pend_pc {
            if let Some((b, bytes)) = self.complete_oldest(map, &mut release) {
                self.wq.move_tail(b);
                pk += 1;
                by = by.wrapping_add(bytes);
            }
        }
        self.dma.drain(map);
        (pk, by)
    }
}
