// SPDX-License-Identifier: GPL-2.0

//! The MANA receive queue (spec D.6).
//!
//! Every RX WQE is one BU: the header (`num_sge = 1`, an 8-byte inline OOB slot that the
//! driver reserves but does not write), then one SGE {buffer address, `mkey`, buffer size}.
//! The queue is kept full: each completion releases one BU (`tail += 1`) and the buffer slot
//! is re-posted at `head` with a fresh buffer (or the old one when the packet is dropped).
//!
//! Doorbells (the 2023 batching change, commits da4e8648079e and f5e39b57124f): re-posting
//! does not ring; [`Rq::poll`] rings the RQ doorbell **once** at the end of a poll that read
//! at least one CQE, with `wqe_cnt = 0` and `tail_ptr = head · 32`. [`RqParams::ring_per_packet`]
//! restores the pre-2023 behaviour (one doorbell per re-posted WQE, still with
//! `wqe_cnt = 0`), kept only for the comparison in `make bench`.
//!
//! CQE handling (`mana_process_rx_cqe`): RX_OKAY delivers `ppi[0].pkt_len` bytes (checked
//! against the buffer size) and re-posts a fresh buffer; TRUNCATED drops and re-posts the same
//! buffer; COALESCED (`rx_coalesced_err`) and unknown types (`rx_cqe_unknown_type`) return
//! without re-posting, as upstream; OBJECT_FENCE (the answer to MANA_FENCE_RQ) is neither
//! an error nor a packet and counts nothing, as upstream. A CQE for another queue, a CQE while nothing is
//! posted, or an owner-bit overflow puts the RQ in an error state (it stops consuming).
//!
//! [`Rq::poll_refill`] is the variant for AF_XDP zero-copy, whose buffers come from the
//! socket's fill ring: a received buffer is always delivered, and the free WQEs are
//! refilled at the end of the poll from whatever the ring has (one doorbell if any).

use core::ops::DerefMut;

use super::cq::Cq;
use super::fmt::{
    rq_doorbell, RxCompOob, Sge, WqeHeader, BU_SIZE, CQE_RX_COALESCED_4, CQE_RX_OBJECT_FENCE,
    CQE_RX_OKAY, CQE_RX_TRUNCATED, INLINE_OOB_SMALL,
};
use super::sq::SetupError;
use super::stats::{add, RxStats};
use super::wq::{Wq, WqError};
use crate::hwif::hw::{Barriers, Coherent, Mmio};
use crate::hwif::pkt::{RxBufProvider, RxBuffer, Slots};

/// RQ parameters.
#[derive(Debug, Clone, Copy)]
pub struct RqParams {
    /// Queue size in bytes (a power of two, at least 4 KiB); it holds `queue_size / 32`
    /// WQEs.
    pub queue_size: u32,
    /// RQ id (24 bits).
    pub rq_id: u32,
    /// Memory key of the SGEs.
    pub mkey: u32,
    /// Bytes the device may write into each buffer (`datasize`).
    pub buf_size: u32,
    /// BAR0 offset of the RQ doorbell register.
    pub db_offset: u32,
    /// Ring the RQ doorbell for every re-posted WQE (pre-2023 MANA) instead of once per poll.
    pub ring_per_packet: bool,
}

/// What a CQE tells about a received packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxCompletion {
    /// Packet length (1..=buffer size).
    pub len: u32,
    /// RSS hash (`pkt_hash`).
    pub hash: u32,
    /// NDIS hash type bits.
    pub hashtype: u16,
    /// The device verified the IP header checksum.
    pub ip_csum_ok: bool,
    /// The device verified the TCP or UDP checksum.
    pub l4_csum_ok: bool,
    /// A checksum the device checked was wrong.
    pub csum_fail: bool,
    /// Stripped VLAN id.
    pub vlan: Option<u16>,
}

impl RxCompletion {
    /// Whether the stack may skip checksum verification (`CHECKSUM_UNNECESSARY`), as
    /// `mana_rx_skb` decides: the IP header checksum verified (`rx_iphdr_csum_succeed`) and
    /// the TCP or UDP checksum verified, and (rsnic's stricter addition) no checked sum
    /// failed.
    pub fn csum_unnecessary(&self) -> bool {
        self.ip_csum_ok && self.l4_csum_ok && !self.csum_fail
    }
}

/// Why the RQ stopped consuming: a CQE naming another queue or an SQ, a CQE while no WQE
/// was posted, a CQ overflow.
pub type RqError = WqError;

/// Result of one poll.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RxPoll {
    /// CQEs read (`comp_read`): the NAPI work done.
    pub work: u32,
    /// Packets delivered.
    pub delivered: u32,
    /// RQ doorbells rung by this poll.
    pub doorbells: u32,
    /// NAPI completes (set by [`Rq::napi_poll`] only).
    pub completed: bool,
    /// The error state.
    pub error: Option<RqError>,
}

/// A MANA RQ over caller-provided memory. `S` holds one buffer slot per WQE
/// (`queue_size / 32`).
pub struct Rq<B, C, S>
where
    C: Coherent,
    S: DerefMut<Target = [Option<B>]>,
{
    wq: Wq<C>,
    cq: Cq<C>,
    bufs: S,
    p: RqParams,
    mask: u32,
    error: Option<RqError>,
    /// Counters.
    pub stats: RxStats,
}

impl<B: RxBuffer, C: Coherent, S: Slots<Option<B>>> Rq<B, C, S> {
    /// Builds an RQ; nothing is posted yet (see [`Rq::fill`]). `bufs` needs
    /// `queue_size / 32` slots; the CQ at least as many entries.
    pub fn new(p: RqParams, ring: C, cq: Cq<C>, bufs: S) -> Result<Self, SetupError> {
        let wq = Wq::new(ring, p.queue_size).ok_or(SetupError::BadSize)?;
        let n = (p.queue_size / BU_SIZE) as usize;
        if bufs.len() != n || p.buf_size == 0 {
            return Err(SetupError::BadStorage);
        }
        if (cq.num() as usize) < n {
            return Err(SetupError::CqTooSmall);
        }
        Ok(Self {
            wq,
            cq,
            bufs,
            p,
            mask: (n - 1) as u32,
            error: None,
            stats: RxStats::default(),
        })
    }

    /// The work queue.
    pub fn wq(&self) -> &Wq<C> {
        &self.wq
    }
    /// The RQ's WQ id on the device.
    pub fn id(&self) -> u32 {
        self.p.rq_id
    }
    /// The completion queue.
    pub fn cq(&self) -> &Cq<C> {
        &self.cq
    }
    /// The completion queue (doorbells).
    pub fn cq_mut(&mut self) -> &mut Cq<C> {
        &mut self.cq
    }
    /// The error state.
    pub fn error(&self) -> Option<RqError> {
        self.error
    }
    /// WQEs posted and not completed.
    pub fn posted(&self) -> u32 {
        self.wq.used_bus()
    }
    /// Switches between one doorbell per poll and one per packet (bench comparison).
    pub fn set_ring_per_packet(&mut self, on: bool) {
        self.p.ring_per_packet = on;
    }

    /// Posts one 1-BU WQE for `buf` at `head` without ringing. Gives the buffer back if the
    /// queue is full.
    #[inline(always)]
    fn post_one<E: RxBufProvider<B>>(&mut self, buf: B, env: &mut E) -> Result<(), B> {
        let hdr = WqeHeader {
            num_sge: 1,
            inline_oob_size_div4: (INLINE_OOB_SMALL / 4) as u8,
            ..WqeHeader::default()
        };
        let sge = Sge {
            address: buf.dma_addr(),
            mem_key: self.p.mkey,
            size: self.p.buf_size,
        };
        let ix = (self.wq.head() & self.mask) as usize;
        if self.wq.post(&hdr, &[], INLINE_OOB_SMALL, &[sge]).is_err() {
            return Err(buf);
        }
        add(&mut self.stats.wqes, 1);
        if let Some(slot) = self.bufs.get_mut(ix) {
            // A slot is emptied before its WQE completes, so it is free here.
            if let Some(old) = slot.replace(buf) {
                env.recycle(old);
            }
        }
        Ok(())
    }

    /// Rings the RQ doorbell: `wmb()`, one 64-bit write of `{id, wqe_cnt = 0, head · 32}`.
    #[inline(always)]
    pub fn ring<E: Mmio + Barriers>(&mut self, env: &E) {
        env.wmb();
        env.write64(
            self.p.db_offset,
            rq_doorbell(self.p.rq_id, 0, self.wq.doorbell_tail()).to_le_bytes(),
        );
        add(&mut self.stats.doorbells, 1);
    }

    /// Fills every free WQE with a fresh buffer, then rings once if anything was posted
    /// (queue creation; upstream rings per WQE here, which changes nothing for the device).
    /// Returns the number posted. An allocation failure leaves the ring short
    /// ([`Rq::short`]); [`Rq::poll`] tops it up.
    pub fn fill<E: Mmio + Barriers + RxBufProvider<B>>(&mut self, env: &mut E) -> u32 {
        let n = self.top_up(env);
        if n > 0 {
            self.ring(env);
        }
        n
    }

    /// Posts a fresh buffer in every free WQE, without ringing, until the ring is full or an
    /// allocation fails. Returns the number posted.
    fn top_up<E: RxBufProvider<B>>(&mut self, env: &mut E) -> u32 {
        let mut n = 0;
        while self.short() {
            let Some(b) = env.alloc() else {
                add(&mut self.stats.buff_alloc_err, 1);
                break;
            };
            if let Err(b) = self.post_one(b, env) {
                env.recycle(b);
                break;
            }
            n += 1;
        }
        n
    }

    /// Some WQE of the ring holds no buffer: a fill met an allocation failure (a regular
    /// poll keeps the ring full, re-posting the old buffer when a fresh one cannot be had).
    /// NAPI must poll again, and each poll tops the ring up: a short ring receives less, and
    /// an empty one with nothing to complete would never be refilled.
    #[inline(always)]
    pub fn short(&self) -> bool {
        self.wq.used_bus() <= self.mask
    }

    /// Polls the RX CQ for up to `budget` CQEs (`mana_poll_rx_cq`), delivering received
    /// buffers to `deliver` and re-posting their slots, then rings the RQ doorbell once if
    /// any CQE was read (or per packet with [`RqParams::ring_per_packet`]).
    pub fn poll<E: Mmio + Barriers + RxBufProvider<B>>(
        &mut self,
        budget: u32,
        env: &mut E,
        deliver: impl FnMut(B, &RxCompletion),
    ) -> RxPoll {
        self.poll_with::<E, false>(budget, env, deliver)
    }

    /// [`Rq::poll`] for buffers from a source that may run dry (AF_XDP zero-copy: the
    /// socket's fill ring), as mlx5e's XSK RQ: every received buffer is delivered (none is
    /// held back for want of a fresh one), then the free WQEs are refilled from `env` with
    /// one doorbell if anything was posted ([`Rq::fill`]). While the source is dry the RQ
    /// runs short and the device discards (`hc_rx_discards_no_wqe`) or pauses its sender.
    pub fn poll_refill<E: Mmio + Barriers + RxBufProvider<B>>(
        &mut self,
        budget: u32,
        env: &mut E,
        deliver: impl FnMut(B, &RxCompletion),
    ) -> RxPoll {
        self.poll_with::<E, true>(budget, env, deliver)
    }

    #[inline(always)]
    fn poll_with<E: Mmio + Barriers + RxBufProvider<B>, const REFILL: bool>(
        &mut self,
        budget: u32,
        env: &mut E,
        mut deliver: impl FnMut(B, &RxCompletion),
    ) -> RxPoll {
        add(&mut self.stats.polls, 1);
        let mut r = RxPoll::default();
        if self.error.is_some() {
            // Stopped on a fault: what the device writes meanwhile is consumed unread and
            // counted (the frames are lost), so the CQ is armed past it (an armed CQ with
            // CQEs beyond its head fires again at once: NAPI and the interrupt would chase
            // each other until the channels are reopened).
            let n = self.cq.discard(env, u32::MAX);
            add(&mut self.stats.cqes, u64::from(n));
            add(&mut self.stats.cqe_discarded, u64::from(n));
            r.error = self.error;
            return r;
        }
        let db0 = self.stats.doorbells;
        while r.work < budget && self.error.is_none() {
            let cqe = match self.cq.poll_one(env) {
                Ok(Some(c)) => c,
                Ok(None) => break,
                Err(_) => {
                    add(&mut self.stats.cq_overflow, 1);
                    self.error = Some(RqError::CqOverflow);
                    break;
                }
            };
            r.work += 1;
            if cqe.is_sq || cqe.wq_num != self.p.rq_id {
                add(&mut self.stats.cqe_bad, 1);
                self.error = Some(RqError::WrongQueue {
                    wq_num: cqe.wq_num,
                    is_sq: cqe.is_sq,
                });
                break;
            }
            let oob = RxCompOob::decode(&cqe.data);
            match oob.hdr.cqe_type {
                CQE_RX_OKAY | CQE_RX_TRUNCATED => {}
                CQE_RX_COALESCED_4 => {
                    add(&mut self.stats.rx_coalesced_err, 1);
                    continue;
                }
                // The device's answer to MANA_FENCE_RQ: every CQE of the RQ before it has
                // been written. Not an error and no packet (upstream completes its fence
                // wait on it and counts nothing); no WQE was consumed.
                CQE_RX_OBJECT_FENCE => continue,
                _ => {
                    add(&mut self.stats.rx_cqe_unknown_type, 1);
                    continue;
                }
            }
            if self.wq.used_bus() == 0 {
                add(&mut self.stats.cqe_bad, 1);
                self.error = Some(RqError::Unexpected);
                break;
            }
            let ix = (self.wq.tail() & self.mask) as usize;
            let old = self.bufs.get_mut(ix).and_then(Option::take);
            self.wq.move_tail(1);
            let Some(old) = old else {
                // Cannot happen with consistent bookkeeping: the slot of a posted WQE.
                add(&mut self.stats.cqe_bad, 1);
                continue;
            };
            let len = u32::from(oob.pkt_len);
            // What the stack needs of the CQE, built only for a packet that is delivered.
            let completion = || RxCompletion {
                len,
                hash: oob.pkt_hash,
                hashtype: oob.hashtype,
                ip_csum_ok: oob.ip_csum_ok,
                l4_csum_ok: oob.tcp_csum_ok || oob.udp_csum_ok,
                csum_fail: oob.ip_csum_fail || oob.tcp_csum_fail || oob.udp_csum_fail,
                vlan: oob.vlantag_present.then_some(oob.vlan_id),
            };
            let mut keep = Some(old);
            if oob.hdr.cqe_type == CQE_RX_TRUNCATED {
                add(&mut self.stats.rx_truncated, 1);
            } else if len == 0 || len > self.p.buf_size {
                add(&mut self.stats.cqe_bad, 1);
            } else if REFILL {
                // The slot is refilled at the end of the poll.
                if let Some(b) = keep.take() {
                    add(&mut self.stats.packets, 1);
                    add(&mut self.stats.bytes, u64::from(len));
                    r.delivered += 1;
                    deliver(b, &completion());
                }
            } else if let Some(fresh) = env.alloc() {
                if let Some(b) = keep.replace(fresh) {
                    add(&mut self.stats.packets, 1);
                    add(&mut self.stats.bytes, u64::from(len));
                    r.delivered += 1;
                    deliver(b, &completion());
                }
            } else {
                add(&mut self.stats.rx_dropped, 1);
            }
            if let Some(b) = keep {
                if let Err(b) = self.post_one(b, env) {
                    env.recycle(b);
                }
            }
            if self.p.ring_per_packet && !REFILL {
                self.ring(env);
            }
        }
        add(&mut self.stats.cqes, u64::from(r.work));
        // A ring left short by a failed allocation gets its missing buffers here (one
        // comparison per poll otherwise), under the poll's one doorbell.
        let topped = if !REFILL && self.short() && self.error.is_none() {
            self.top_up(env)
        } else {
            0
        };
        if r.work > 0 {
            add(&mut self.stats.polls_with_work, 1);
            if (!self.p.ring_per_packet || topped > 0) && !REFILL {
                self.ring(env);
            }
        } else if topped > 0 {
            self.ring(env);
        }
        if REFILL && self.error.is_none() {
            self.fill(env);
        }
        r.doorbells = self.stats.doorbells.wrapping_sub(db0) as u32;
        r.error = self.error;
        r
    }

    /// One NAPI round: [`Rq::poll`], then the CQ re-arm rule ([`Cq::napi_done`]).
    pub fn napi_poll<E: Mmio + Barriers + RxBufProvider<B>>(
        &mut self,
        budget: u32,
        env: &mut E,
        deliver: impl FnMut(B, &RxCompletion),
    ) -> RxPoll {
        let mut r = self.poll(budget, env, deliver);
        r.completed = self.cq.napi_done(r.work, budget, env);
        r
    }

    /// Gives every posted buffer back (teardown, once the device no longer writes to them).
    pub fn drain<E: RxBufProvider<B> + Barriers>(&mut self, env: &mut E) -> u32 {
        // What the device completed and NAPI never read (the RQ stopped on a fault, or
        // closed first): consumed unread and counted, as those frames are lost.
        let d = self.cq.discard(env, u32::MAX);
        add(&mut self.stats.cqes, u64::from(d));
        add(&mut self.stats.cqe_discarded, u64::from(d));
        let n = env.recycle_all(&mut self.bufs);
        let used = self.wq.used_bus();
        self.wq.move_tail(used);
        n
    }
}
