// SPDX-License-Identifier: GPL-2.0

//! The mlx5 SQ's completion side (spec C.3): [`Sq::poll_cq`] releasing WQEs through each
//! CQE's `wqe_counter`, [`Sq::drain`] and [`Sq::discard_cqes`] for teardown and recovery
//! (upstream `en_tx.c`: `mlx5e_poll_tx_cq`, `mlx5e_free_txqsq_descs`).

use super::{DmaFifo, PktFifo, Sq, SqError, TxPoll, WqeInfo, WqeInfos, TX_CQ_POLL_BUDGET};
use crate::hwif::hw::{Barriers, Coherent};
use crate::hwif::mlx5::cqe::{CQE_REQ, CQE_REQ_ERR};
use crate::hwif::mlx5::stats::add;
use crate::hwif::mlx5::tx::{TxDmaMap, TxPacket, TxQueue};

impl<P: TxPacket, C: Coherent, W: WqeInfos<P>, F: PktFifo<P>, D: DmaFifo> Sq<P, C, W, F, D> {
    /// Releases the WQE at ring position `sqcc`: unmaps its dma entries and hands its
    /// packets to `release`. Returns (WQEBBs, packets, bytes).
    #[inline(always)]
    pub(super) fn release_wqe<M: TxDmaMap<P>>(
        &mut self,
        sqcc: u16,
        map: &mut M,
        release: &mut impl FnMut(P),
    ) -> (u16, u32, u32) {
        let Some(wi) = self.wqe_info.get_mut(usize::from(sqcc & self.mask)) else {
            return (1, 0, 0);
        };
        let nw = u16::from(wi.num_wqebbs).max(1);
        let pkt = wi.pkt.take();
        let nbytes = wi.num_bytes;
        let ndma = u32::from(wi.num_dma);
        let nfifo = wi.num_fifo_pkts;
        *wi = WqeInfo::default();
        self.dma_fifo.pop(ndma, map);
        if let Some(p) = pkt {
            release(p);
            return (nw, 1, nbytes);
        }
        let n = self.pop_pkts(u16::from(nfifo), map, release);
        (nw, n, if n > 0 { nbytes } else { 0 })
    }

    /// Polls the TX CQ (`mlx5e_poll_tx_cq`, spec C.3): up to [`TX_CQ_POLL_BUDGET`] CQEs;
    /// each releases every WQE from `cc` through its `wqe_counter`. Updates set_ci, reports
    /// completions to BQL, wakes the queue when there is room again.
    ///
    /// A CQE whose `wqe_counter` is not the start of an outstanding WQE, whose opcode is
    /// neither REQ nor REQ_ERR, or that names another SQ, is a device error: counted in `cqe_bad`, the walk stops and
    /// the SQ enters the error state. Nothing is ever released twice.
    pub fn poll_cq<E>(&mut self, env: &mut E, mut release: impl FnMut(P)) -> TxPoll
    where
        E: Barriers + TxDmaMap<P> + TxQueue,
    {
        let mut r = TxPoll::default();
        let mut sqcc = self.cc;
        while r.cqes < TX_CQ_POLL_BUDGET {
            let Some(cqe) = self.cq.peek(env) else {
                break;
            };
            self.cq.pop(1);
            r.cqes += 1;
            let wc = cqe.wqe_counter();
            let opcode = cqe.opcode();
            if opcode != CQE_REQ && opcode != CQE_REQ_ERR {
                add(&mut self.stats.cqe_bad, 1);
                self.error.get_or_insert(SqError::BadOpcode { opcode });
                break;
            }
            // The CQ is this SQ's alone: a CQE naming another SQ is the device's error.
            let sqn = cqe.err_qpn();
            if sqn != self.p.sqn & 0x00ff_ffff {
                add(&mut self.stats.cqe_bad, 1);
                self.error.get_or_insert(SqError::BadSqn { sqn });
                break;
            }
            if wc.wrapping_sub(sqcc) >= self.pc.wrapping_sub(sqcc) {
                add(&mut self.stats.cqe_bad, 1);
                self.error
                    .get_or_insert(SqError::BadWqeCounter { wqe_counter: wc });
                break;
            }
            let mut bad = false;
            loop {
                let dist = wc.wrapping_sub(sqcc);
                let nw = self
                    .wqe_info
                    .get(usize::from(sqcc & self.mask))
                    .map_or(1, |wi| u16::from(wi.num_wqebbs).max(1));
                if dist != 0 && dist < nw {
                    // wc points inside this WQE, not at its start.
                    bad = true;
                    break;
                }
                let (nw, pk, by) = self.release_wqe(sqcc, env, &mut release);
                sqcc = sqcc.wrapping_add(nw);
                r.packets += pk;
                r.bytes = r.bytes.wrapping_add(by);
                if dist == 0 {
                    break;
                }
            }
            if bad {
                add(&mut self.stats.cqe_bad, 1);
                self.error
                    .get_or_insert(SqError::BadWqeCounter { wqe_counter: wc });
                break;
            }
            if opcode == CQE_REQ_ERR {
                add(&mut self.stats.cqe_err, 1);
                self.error.get_or_insert(SqError::ReqErr {
                    syndrome: cqe.syndrome(),
                    vendor: cqe.vendor_err_synd(),
                    wqe_counter: wc,
                });
            }
        }
        if r.cqes == 0 {
            r.error = self.error;
            return r;
        }
        add(&mut self.stats.cqes, u64::from(r.cqes));
        self.cq.update_ci(env);
        self.cc = sqcc;
        env.completed(r.packets, r.bytes);
        if env.is_stopped() && self.has_room_for(self.stop_room) && self.error.is_none() {
            env.wake();
            add(&mut self.stats.wake, 1);
            r.woke = true;
        }
        r.busy = r.cqes == TX_CQ_POLL_BUDGET;
        r.error = self.error;
        r
    }

    /// Releases every outstanding packet without waiting for completions (teardown or
    /// recovery, once the device no longer processes the SQ). An open MPWQE session is
    /// closed first. Returns (packets, BQL bytes) released.
    pub fn drain<M: TxDmaMap<P>>(&mut self, map: &mut M, mut release: impl FnMut(P)) -> (u32, u32) {
        if let Some(s) = self.session.take() {
            self.close_session(s);
        }
        let (mut pk, mut by) = (0u32, 0u32);
        while self.cc != self.pc {
            let (nw, p, b) = self.release_wqe(self.cc, map, &mut release);
            // A WQE never extends past pc; clamp anyway.
            let left = self.pc.wrapping_sub(self.cc);
            self.cc = self.cc.wrapping_add(nw.min(left));
            pk += p;
            by = by.wrapping_add(b);
        }
        // Anything still in the FIFOs (cannot happen with consistent bookkeeping).
        pk += self.pop_pkts(self.pkt_pc.wrapping_sub(self.pkt_cc), map, &mut release);
        self.dma_fifo.drain(map);
        (pk, by)
    }

    /// Consumes every CQE left in the CQ without looking at it: recovery, once the device's
    /// SQ is in RST (it writes no more) and the SQ was drained, so that no CQE of the old
    /// numbering is read against the reset one. Writes set_ci if anything was consumed;
    /// returns how many CQEs.
    pub fn discard_cqes<E: Barriers>(&mut self, env: &E) -> u32 {
        let n = self.cq.discard(env);
        add(&mut self.stats.cqes, u64::from(n));
        n
    }
}
