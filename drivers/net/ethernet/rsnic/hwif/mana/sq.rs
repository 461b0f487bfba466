// SPDX-License-Identifier: GPL-2.0

//! The MANA send queue (spec D.2, D.3, D.5).
//!
//! [`Sq::xmit`] builds one WQE per packet: the header, a short OOB (8 B) or, when a VLAN tag
//! must be inserted or the vport offset exceeds 255, a long OOB (24 B), then one SGE for the
//! linear part and one per fragment. Checksum offload (`CHECKSUM_PARTIAL`): TCP sets
//! `comp_tcp_csum` with `trans_off`, UDP `comp_udp_csum` with `trans_off` 0 (the device
//! finds a UDP header itself; upstream leaves the field 0 there), both the outer IP version.
//! TSO (TCP only): `is_outer_ipv4/6`, `comp_iphdr_csum`, `comp_tcp_csum`, `trans_off`,
//! `client_data_unit = gso_size`, flags OOB_IN_SGL | PAD_BY_SGE0 (`client_oob_in_sgl = 1`,
//! `last_vbytes` = SGE0's size), and SGE0 holds only the headers: the linear part is split
//! into two SGEs of the same mapping when it is longer than the headers; a TSO packet
//! without payload is rejected as malformed, since OOB_IN_SGL needs a second SGE. (The stack's
//! header preparation for TSO, clearing IPv4 `tot_len`/`check` and seeding the TCP
//! pseudo-header checksum, is the caller's: packets are read-only here.)
//!
//! Unlike upstream MANA, which rings for every packet, the doorbell is batched by
//! `xmit_more` with BQL exactly as in mlx5e: [`TxQueue::sent`] says when to ring (the burst
//! ends or the queue stopped). After each WQE, if fewer than 512 bytes are free the queue is
//! stopped (`stop_queue`). [`Sq::poll_cq`] takes one CQE per WQE, in FIFO order, moves the
//! tail by the WQE's BUs and wakes the queue once 512 bytes are free again.
//!
//! Nothing from the device is trusted: a CQE for another queue, for an RQ, or when no WQE is
//! outstanding is counted in `cqe_bad` and puts the SQ in an error state (it stops consuming
//! and accepting); an owner-bit overflow does the same.
//!
//! This file holds the SQ's state, `new` and the transmit path; the completion side is in
//! module `completion`.

mod completion;

use core::ops::DerefMut;

use super::cq::Cq;
use super::fmt::{
    sq_doorbell, Sge, TxOob, WqeHeader, BU_SIZE, INLINE_OOB_LARGE, INLINE_OOB_SMALL, MAX_SQE_SIZE,
    MAX_TX_SGE, PKT_FMT_LONG, PKT_FMT_SHORT,
};
use super::stats::{add, TxStats};
use super::wq::{Wq, WqError};
use crate::hwif::bytes::get_be16;
use crate::hwif::hdr::{self, L4};
use crate::hwif::hw::{Barriers, Coherent, Mmio};
use crate::hwif::pkt::{
    DmaEntry, DmaKind, DmaRing, Slots, TxCsum, TxDmaMap, TxPacket, TxQueue, TxReject,
    TxRejectReason,
};

/// Stop the queue when less than this many bytes are free (`mana_can_tx`: a maximum WQE).
pub const STOP_ROOM: u32 = MAX_SQE_SIZE;
/// Most CQEs one TX poll reads (`CQE_POLLING_BUFFER`; also bounded by 4 × num_cqe).
pub const TX_POLL_MAX: u32 = 512;

/// Errors building a queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetupError {
    /// Queue size not a power of two ≥ 4 KiB, or a buffer too small.
    BadSize,
    /// A bookkeeping array has the wrong length.
    BadStorage,
    /// The CQ is smaller than the number of WQEs that can be outstanding.
    CqTooSmall,
}

/// One packet between xmit and its completion (the skb on `pending_skbs` with its BUs).
#[derive(Debug)]
pub struct TxPending<P> {
    /// The packet.
    pub pkt: Option<P>,
    /// WQE size in BUs.
    pub wqe_bu: u8,
    /// dma FIFO entries to unmap (the packet's mappings after the first).
    pub num_dma: u8,
    /// BQL bytes.
    pub bytes: u32,
    /// The packet's first mapping (its linear part's, or its first fragment's), kept here so
    /// that the common packet, which has one, needs no dma FIFO entry.
    pub dma: Option<DmaEntry>,
}

impl<P> Default for TxPending<P> {
    fn default() -> Self {
        Self {
            pkt: None,
            wqe_bu: 0,
            num_dma: 0,
            bytes: 0,
            dma: None,
        }
    }
}

/// SQ parameters.
#[derive(Debug, Clone, Copy)]
pub struct SqParams {
    /// Queue size in bytes (a power of two, at least 4 KiB).
    pub queue_size: u32,
    /// SQ id (24 bits).
    pub sq_id: u32,
    /// The TX CQ's id, written to every OOB's `vcq_num`.
    pub cq_id: u32,
    /// Memory key of the SGEs (`gpa_mkey`).
    pub mkey: u32,
    /// BAR0 offset of the SQ doorbell register.
    pub db_offset: u32,
    /// The vport offset (short OOB up to 255, long OOB beyond).
    pub vp_offset: u16,
}

/// Why the SQ stopped: a CQE naming another queue or an RQ, a CQE while no WQE was
/// outstanding, a CQ overflow.
pub type SqError = WqError;

/// Result of one TX CQ poll.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxPoll {
    /// CQEs consumed.
    pub cqes: u32,
    /// Packets released.
    pub packets: u32,
    /// BQL bytes released.
    pub bytes: u32,
    /// Error CQEs among them.
    pub errors: u32,
    /// The queue was woken.
    pub woke: bool,
    /// The SQ is in an error state.
    pub error: Option<SqError>,
}

/// A MANA SQ over caller-provided memory. `F`: the pending FIFO, one entry per BU of the
/// queue; `D`: the dma FIFO, two entries per BU (a WQE of k SGEs spans at least k/2 BUs).
pub struct Sq<P, C, F, D>
where
    C: Coherent,
    F: DerefMut<Target = [TxPending<P>]>,
    D: DerefMut<Target = [DmaEntry]>,
{
    wq: Wq<C>,
    cq: Cq<C>,
    pending: F,
    dma: DmaRing<D>,
    p: SqParams,
    pend_pc: u32,
    pend_cc: u32,
    pend_mask: u32,
    unrung: bool,
    error: Option<SqError>,
    /// The first 16 bytes of every one-BU WQE of the common packet (header with one SGE,
    /// the short OOB with this SQ's constant fields), if the SQ's OOB is short and the SQ is
    /// not in an error state (see [`Sq::fail`]): with it, [`Sq::xmit`] takes the common
    /// packet's path.
    fast_head: Option<[u8; 16]>,
    /// Counters.
    pub stats: TxStats,
}

/// What xmit decided for a packet before touching the ring.
struct Plan {
    oob: TxOob,
    long: bool,
    tso: Option<(u16, u32)>,
    nsge: usize,
    linear: u32,
}

fn plan<P: TxPacket>(pkt: &P, p: &SqParams) -> Result<Plan, TxRejectReason> {
    let len = pkt.pkt_len();
    let linear = pkt.linear().len() as u32;
    let mut frag_bytes = 0u64;
    let mut nfrag = 0usize;
    for i in 0..pkt.nr_frags() {
        let l = pkt.frag_len(i);
        if l != 0 {
            nfrag += 1;
        }
        frag_bytes += u64::from(l);
    }
    if u64::from(linear) + frag_bytes != u64::from(len) || len == 0 {
        return Err(TxRejectReason::Malformed);
    }
    let vlan = pkt.vlan();
    let long = vlan.is_some() || p.vp_offset > 255;
    let mut oob = TxOob {
        pkt_fmt: if long { PKT_FMT_LONG } else { PKT_FMT_SHORT },
        vcq_num: p.cq_id,
        // `vsq_frame` 0: upstream's txq->vsq_frame is never assigned (rsnic.rst, "What the
        // kernel's mana driver found in the model").
        short_vp_offset: if long { 0 } else { p.vp_offset as u8 },
        long_vp_offset: if long { p.vp_offset & 0xfff } else { 0 },
        ..TxOob::default()
    };
    if let Some(t) = vlan {
        oob.inject_vlan_pri_tag = true;
        oob.pcp = (t.tci >> 13) as u8;
        oob.dei = (t.tci >> 12) & 1 != 0;
        oob.vlan_id = t.tci & 0xfff;
    }
    let gso = pkt.gso();
    if gso.is_some() || pkt.csum() != TxCsum::None {
        let b = pkt.linear();
        let h = hdr::parse(b);
        let (Some(net), Some(th)) = (h.network, h.transport) else {
            return Err(TxRejectReason::Malformed);
        };
        let et = net
            .checked_sub(2)
            .and_then(|o| get_be16(b, usize::from(o)))
            .unwrap_or(0);
        oob.is_outer_ipv4 = et == hdr::ETH_P_IP;
        oob.is_outer_ipv6 = et == hdr::ETH_P_IPV6;
        if th > 0x3ff {
            return Err(TxRejectReason::HeaderTooLong);
        }
        // `trans_off` for TCP (checksum and TSO) only: for a UDP checksum the device finds
        // the header itself, and upstream mana leaves the field 0 there; rsnic sends what
        // the hardware is known to take (rsnic.rst, "What the kernel's mana driver found in
        // the model").
        match (gso, h.l4) {
            (Some(g), L4::Tcp(tl)) => {
                let ihs = u32::from(th) + u32::from(tl);
                if g.size == 0 || g.size > 0x3fff || ihs > linear {
                    return Err(TxRejectReason::Malformed);
                }
                if ihs > 255 {
                    return Err(TxRejectReason::HeaderTooLong);
                }
                oob.comp_iphdr_csum = true;
                oob.comp_tcp_csum = true;
                oob.trans_off = th;
                let nsge = 1 + usize::from(linear > ihs) + nfrag;
                // OOB_IN_SGL needs a second SGE (spec D.2): a TSO packet without payload
                // would be a WQE the device rejects.
                if nsge < 2 {
                    return Err(TxRejectReason::Malformed);
                }
                return finish(oob, long, Some((g.size, ihs)), nsge, linear);
            }
            (Some(_), _) => return Err(TxRejectReason::Malformed),
            (None, L4::Tcp(_)) => {
                oob.comp_tcp_csum = true;
                oob.trans_off = th;
            }
            (None, L4::Udp) => oob.comp_udp_csum = true,
            // Upstream falls back to skb_checksum_help(); that is the caller's job here.
            (None, _) => return Err(TxRejectReason::Malformed),
        }
    }
    let nsge = usize::from(linear > 0) + nfrag;
    finish(oob, long, None, nsge, linear)
}

/// The constant part of a one-BU WQE of the common packet on an SQ (see [`Sq::xmit`]): its
/// header (one SGE, the short OOB's slot) and short OOB (no offload). `None` when the SQ's
/// vport offset needs the long OOB.
fn fast_head(p: &SqParams) -> Option<[u8; 16]> {
    if p.vp_offset > 255 {
        return None;
    }
    let hdr = WqeHeader {
        num_sge: 1,
        inline_oob_size_div4: (INLINE_OOB_SMALL / 4) as u8,
        ..WqeHeader::default()
    };
    let oob = TxOob {
        pkt_fmt: PKT_FMT_SHORT,
        vcq_num: p.cq_id,
        short_vp_offset: p.vp_offset as u8,
        ..TxOob::default()
    };
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&hdr.encode());
    b[8..].copy_from_slice(&oob.encode_short());
    Some(b)
}

fn finish(
    oob: TxOob,
    long: bool,
    tso: Option<(u16, u32)>,
    nsge: usize,
    linear: u32,
) -> Result<Plan, TxRejectReason> {
    if nsge == 0 || nsge > MAX_TX_SGE {
        return Err(TxRejectReason::TooManySegments);
    }
    Ok(Plan {
        oob,
        long,
        tso,
        nsge,
        linear,
    })
}

impl<P: TxPacket, C: Coherent, F: Slots<TxPending<P>>, D: Slots<DmaEntry>> Sq<P, C, F, D> {
    /// Builds an SQ over `ring` (`p.queue_size` bytes) with its CQ. `pending` must have
    /// `queue_size / 32` entries and `dma` twice as many; the CQ at least `queue_size / 32`
    /// entries (one CQE per WQE).
    pub fn new(p: SqParams, ring: C, cq: Cq<C>, pending: F, dma: D) -> Result<Self, SetupError> {
        let wq = Wq::new(ring, p.queue_size).ok_or(SetupError::BadSize)?;
        let n = (p.queue_size / 32) as usize;
        if pending.len() != n || dma.len() != 2 * n {
            return Err(SetupError::BadStorage);
        }
        if (cq.num() as usize) < n {
            return Err(SetupError::CqTooSmall);
        }
        Ok(Self {
            wq,
            cq,
            pending,
            dma: DmaRing::new(dma),
            p,
            pend_pc: 0,
            pend_cc: 0,
            pend_mask: (n - 1) as u32,
            unrung: false,
            error: None,
            fast_head: fast_head(&p),
            stats: TxStats::default(),
        })
    }

    /// The work queue (head/tail in BUs, free space).
    pub fn wq(&self) -> &Wq<C> {
        &self.wq
    }
    /// The SQ's WQ id on the device.
    pub fn id(&self) -> u32 {
        self.p.sq_id
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
    pub fn error(&self) -> Option<SqError> {
        self.error
    }
    /// Packets posted and not completed.
    pub fn outstanding(&self) -> u32 {
        self.pend_pc.wrapping_sub(self.pend_cc)
    }
    /// Whether WQEs were posted that no doorbell announced yet.
    pub fn unrung(&self) -> bool {
        self.unrung
    }

    /// Rings the SQ doorbell for everything posted (`wmb()`, one 64-bit write of
    /// `{id, tail_ptr = head · 32}`), if anything is unannounced.
    #[inline(always)]
    pub fn ring<E: Mmio + Barriers>(&mut self, env: &E) {
        if !self.unrung {
            return;
        }
        env.wmb();
        env.write64(
            self.p.db_offset,
            sq_doorbell(self.p.sq_id, self.wq.doorbell_tail()).to_le_bytes(),
        );
        self.unrung = false;
        add(&mut self.stats.doorbells, 1);
    }

    /// Enters the error state (for good: the SQ is reopened to leave it). The common packet's
    /// path is closed with it, so that [`Sq::xmit`] tests one field for both.
    fn fail(&mut self, e: SqError) {
        self.error = Some(e);
        self.fast_head = None;
    }

    /// Stops the stack's queue unless it is stopped already (`stop_queue` counts stops).
    #[inline(always)]
    fn stop_queue<E: TxQueue>(&mut self, env: &mut E) {
        if !env.is_stopped() {
            env.stop();
            add(&mut self.stats.stop_queue, 1);
        }
    }

    fn reject<E: Mmio + Barriers>(
        &mut self,
        pkt: P,
        reason: TxRejectReason,
        env: &E,
    ) -> TxReject<P> {
        if reason == TxRejectReason::Busy {
            add(&mut self.stats.busy, 1);
        } else {
            add(&mut self.stats.dropped, 1);
        }
        // What was queued with xmit_more must not wait for a packet that will not come.
        self.ring(env);
        TxReject { pkt, reason }
    }

    /// Keeps a mapping of the packet being built: the first in `first` (its pending entry's),
    /// the others in the dma FIFO, counted in `ndma`.
    fn keep_dma(&mut self, first: &mut Option<DmaEntry>, ndma: &mut u32, e: DmaEntry) {
        if first.is_none() {
            *first = Some(e);
        } else {
            self.dma.push(e);
            *ndma += 1;
        }
    }

    /// Undoes the mappings of a packet that is not sent: `first` and the last `n` dma FIFO
    /// pushes.
    fn unwind_pkt_dma<M: TxDmaMap<P>>(&mut self, first: Option<DmaEntry>, n: u32, map: &mut M) {
        self.dma.unwind(n, map);
        if let Some(e) = first {
            map.unmap(e);
        }
    }

    /// Transmits one packet (`mana_start_xmit`). `xmit_more`: more packets follow.
    ///
    /// On success the SQ owns the packet until its completion. On failure it comes back with
    /// the reason (`Busy`: requeue; otherwise free it).
    ///
    /// The common packet (linear, no GSO, no VLAN, no checksum offload, on an SQ with the
    /// short OOB) takes a path of its own: a one-BU WQE whose first half is the SQ's
    /// constant [`fast_head`], written in one access; every other packet is planned
    /// ([`plan`]) and written by [`Wq::post`]. Both write the same bytes for the common
    /// packet.
    #[inline]
    pub fn xmit<E>(&mut self, pkt: P, xmit_more: bool, env: &mut E) -> Result<(), TxReject<P>>
    where
        E: Mmio + Barriers + TxDmaMap<P> + TxQueue,
    {
        if self.fast_head.is_some()
            && pkt.nr_frags() == 0
            && pkt.gso().is_none()
            && pkt.vlan().is_none()
            && pkt.csum() == TxCsum::None
        {
            return self.xmit_linear(pkt, xmit_more, env);
        }
        self.xmit_planned(pkt, xmit_more, env)
    }

    /// [`Sq::xmit`] of every packet but the common one: planned ([`plan`]), written by
    /// [`Wq::post`]. Out of line, so that the common packet's path does not carry its stack
    /// frame.
    #[inline(never)]
    fn xmit_planned<E>(&mut self, pkt: P, xmit_more: bool, env: &mut E) -> Result<(), TxReject<P>>
    where
        E: Mmio + Barriers + TxDmaMap<P> + TxQueue,
    {
        if self.error.is_some() {
            return Err(self.reject(pkt, TxRejectReason::SqError, env));
        }
        let pl = match plan(&pkt, &self.p) {
            Ok(p) => p,
            Err(r) => return Err(self.reject(pkt, r, env)),
        };
        let oob_slot = if pl.long {
            INLINE_OOB_LARGE
        } else {
            INLINE_OOB_SMALL
        };
        let wqe_size = super::fmt::wqe_size(oob_slot, pl.nsge) as u32;
        if wqe_size > self.wq.avail_space() {
            self.stop_queue(env);
            return Err(self.reject(pkt, TxRejectReason::Busy, env));
        }
        // Map and build the SGL.
        let mut sges = [Sge::default(); MAX_TX_SGE];
        let mut n = 0usize;
        let mut first = None;
        let mut ndma = 0u32;
        let mkey = self.p.mkey;
        if pl.linear > 0 {
            let Some(addr) = env.map_linear(&pkt, 0, pl.linear) else {
                add(&mut self.stats.mana_map_err, 1);
                return Err(self.reject(pkt, TxRejectReason::MapError, env));
            };
            // The first mapping of the packet.
            first = Some(DmaEntry {
                addr,
                len: pl.linear,
                kind: DmaKind::Single,
            });
            match pl.tso {
                Some((_, ihs)) if pl.linear > ihs => {
                    sges[0] = Sge {
                        address: addr,
                        mem_key: mkey,
                        size: ihs,
                    };
                    sges[1] = Sge {
                        address: addr.wrapping_add(u64::from(ihs)),
                        mem_key: mkey,
                        size: pl.linear - ihs,
                    };
                    n = 2;
                }
                _ => {
                    sges[0] = Sge {
                        address: addr,
                        mem_key: mkey,
                        size: pl.linear,
                    };
                    n = 1;
                }
            }
        }
        for i in 0..pkt.nr_frags() {
            let len = pkt.frag_len(i);
            if len == 0 {
                continue;
            }
            let Some(addr) = env.map_frag(&pkt, i) else {
                self.unwind_pkt_dma(first, ndma, env);
                add(&mut self.stats.mana_map_err, 1);
                return Err(self.reject(pkt, TxRejectReason::MapError, env));
            };
            self.keep_dma(
                &mut first,
                &mut ndma,
                DmaEntry {
                    addr,
                    len,
                    kind: DmaKind::Page,
                },
            );
            if let Some(s) = sges.get_mut(n) {
                *s = Sge {
                    address: addr,
                    mem_key: mkey,
                    size: len,
                };
            }
            n += 1;
        }
        let n = n.min(pl.nsge);
        let mut hdr = WqeHeader {
            num_sge: n as u8,
            inline_oob_size_div4: (oob_slot / 4) as u8,
            ..WqeHeader::default()
        };
        if let Some((mss, ihs)) = pl.tso {
            hdr.client_data_unit = mss;
            hdr.client_oob_in_sgl = true;
            hdr.last_vbytes = ihs as u8;
        }
        let posted = if pl.long {
            self.wq
                .post(&hdr, &pl.oob.encode_long(), oob_slot, &sges[..n])
        } else {
            self.wq
                .post(&hdr, &pl.oob.encode_short(), oob_slot, &sges[..n])
        };
        let Ok(bus) = posted else {
            // Cannot happen: the space was checked above.
            self.unwind_pkt_dma(first, ndma, env);
            return Err(self.reject(pkt, TxRejectReason::Busy, env));
        };
        let len = pkt.pkt_len();
        let s = &mut self.stats;
        if pl.long {
            add(&mut s.long_pkt_fmt, 1);
        } else {
            add(&mut s.short_pkt_fmt, 1);
        }
        if let Some((_, ihs)) = pl.tso {
            add(&mut s.tso_packets, 1);
            add(&mut s.tso_bytes, u64::from(len.saturating_sub(ihs)));
        } else if pl.oob.comp_tcp_csum || pl.oob.comp_udp_csum {
            add(&mut s.csum_partial, 1);
        }
        let room = self.wq.avail_space();
        let pending = TxPending {
            pkt: Some(pkt),
            wqe_bu: bus as u8,
            num_dma: ndma as u8,
            bytes: len,
            dma: first,
        };
        self.commit(pending, room, xmit_more, env);
        Ok(())
    }

    /// [`Sq::xmit`] of the common packet: one mapping, one one-BU WQE.
    #[inline(always)]
    fn xmit_linear<E>(&mut self, pkt: P, xmit_more: bool, env: &mut E) -> Result<(), TxReject<P>>
    where
        E: Mmio + Barriers + TxDmaMap<P> + TxQueue,
    {
        let len = pkt.pkt_len();
        if pkt.linear().len() != len as usize || len == 0 {
            return Err(self.reject(pkt, TxRejectReason::Malformed, env));
        }
        let Some(addr) = env.map_linear(&pkt, 0, len) else {
            add(&mut self.stats.mana_map_err, 1);
            return Err(self.reject(pkt, TxRejectReason::MapError, env));
        };
        let dma = DmaEntry {
            addr,
            len,
            kind: DmaKind::Single,
        };
        let mut wqe = [0u8; 32];
        // (`xmit` comes here only with a head.)
        if let Some(head) = &self.fast_head {
            wqe[..16].copy_from_slice(head);
        }
        wqe[16..24].copy_from_slice(&addr.to_le_bytes());
        wqe[24..28].copy_from_slice(&self.p.mkey.to_le_bytes());
        wqe[28..].copy_from_slice(&len.to_le_bytes());
        // The ring's room is checked once, by `post_bu`. No room is rare (the queue stops
        // while a largest WQE still fits: only netpoll transmits on a stopped queue), so the
        // mapping is undone then rather than the room checked twice on every packet. The
        // room left afterwards is the room before less the BU (`post_bu`'s test is the same
        // computation).
        let room = self.wq.avail_space();
        if self.wq.post_bu(&wqe).is_err() {
            env.unmap(dma);
            self.stop_queue(env);
            return Err(self.reject(pkt, TxRejectReason::Busy, env));
        }
        add(&mut self.stats.short_pkt_fmt, 1);
        let pending = TxPending {
            pkt: Some(pkt),
            wqe_bu: 1,
            num_dma: 0,
            bytes: len,
            dma: Some(dma),
        };
        self.commit(pending, room - BU_SIZE, xmit_more, env);
        Ok(())
    }

    /// The end of every xmit: counters, the packet's pending entry (`pending`, with the
    /// packet and its bookkeeping), the queue stopped when a maximum WQE no longer fits
    /// (`room`: the free bytes after the WQE), the doorbell when the burst ends.
    #[inline(always)]
    fn commit<E>(&mut self, pending: TxPending<P>, room: u32, xmit_more: bool, env: &mut E)
    where
        E: Mmio + Barriers + TxQueue,
    {
        let len = pending.bytes;
        let s = &mut self.stats;
        add(&mut s.packets, 1);
        add(&mut s.bytes, u64::from(len));
        add(&mut s.wqes, 1);
        add(&mut s.bus, u64::from(pending.wqe_bu));
        add(&mut s.xmit_more, u64::from(xmit_more));
        match self
            .pending
            .get_mut((self.pend_pc & self.pend_mask) as usize)
        {
            Some(e) => *e = pending,
            // (Cannot happen: the index is masked.)
            None => drop(pending),
        }
        self.pend_pc = self.pend_pc.wrapping_add(1);
        self.unrung = true;
        if room < STOP_ROOM {
            self.stop_queue(env);
        }
        if env.sent(len, xmit_more) {
            self.ring(env);
        }
    }
}
