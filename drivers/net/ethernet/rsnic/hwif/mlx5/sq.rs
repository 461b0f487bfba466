// SPDX-License-Identifier: GPL-2.0

//! The mlx5 cyclic send queue (spec A.2, A.5, A.6, B, C.3).
//!
//! [`Sq::xmit`] runs the staged path of mlx5e: attributes ([`tx_attr`](super::tx::tx_attr),
//! [`tx_wqe_attr`](super::tx::tx_wqe_attr)), WQE fill, complete (ctrl seg, `wqe_info`, `pc`,
//! stop check, doorbell when the burst ends). Eligible packets go to the Enhanced MPWQE
//! session instead (module `mpwqe`, out of line). The stages are in module `xmit`, the
//! completion side in module `completion`; this file holds the SQ's state, `new` and the
//! ring and FIFO helpers both use.
//! [`Sq::poll_cq`] walks completions and hands every packet back exactly once.
//!
//! Counters: `pc`/`cc` are free-running u16 WQEBB counters; `wqe_info` is indexed by the
//! first WQEBB of each WQE; the dma FIFO (u32 counters, the mappings of regular WQEs) and the
//! packet FIFO (u16 counters, the packets of MPWQE sessions, each with its mapping) have
//! `4 × size` entries. Every index is masked, so nothing the device writes can index out of
//! bounds.
//!
//! Ownership: packets live in `wqe_info` or the packet FIFO until a completion (or
//! [`Sq::drain`]) hands them to the caller's closure. Dropping an [`Sq`] that still holds
//! packets drops them without consuming them: drain first.

mod completion;
mod mpwqe;
mod xmit;

use core::ops::DerefMut;

use super::cq::{Cq, NotIdle, QueueSetupError};
use super::seg::{
    inline_seg_ds, CtrlSeg, CTRL_CQ_UPDATE, MPWQE_INLINE_MAX, SEND_WQE_BB, SEND_WQE_MAX_WQEBBS,
    WQEBB_NUM_DS,
};
use super::stats::{add, TxStats};
use super::tx::{DmaEntry, InlineMode, TxCsum, TxDmaMap, TxPacket, TxQueue};
use crate::hwif::hw::{Barriers, Coherent, Mmio};
use crate::hwif::pkt::{DmaRing, Slots};

/// Smallest SQ log size (`MLX5E_PARAMS_MINIMUM_LOG_SQ_SIZE`).
pub const SQ_LOG_SIZE_MIN: u8 = 6;
/// Largest SQ log size (`MLX5E_PARAMS_MAXIMUM_LOG_SQ_SIZE`).
pub const SQ_LOG_SIZE_MAX: u8 = 13;
/// WQEBBs per 4 KiB fragment of the ring: a WQE never crosses a fragment boundary.
pub const WQEBBS_PER_FRAG: u16 = 64;
/// Upper bound of an MPWQE session in WQEBBs (a 16-WQEBB session would overflow the DS field).
pub const MAX_MPW_WQEBBS: u16 = 15;
/// Maximum CQEs per TX CQ poll (`MLX5E_TX_CQ_POLL_BUDGET`).
pub const TX_CQ_POLL_BUDGET: u32 = 128;
/// Offset of the blue-flame/doorbell register inside a UAR page (`MLX5_BF_OFFSET`).
pub const BF_OFFSET: u32 = 0x800;
/// Completion threshold in WQEBBs (a power of two), as DPDK's mlx5 PMD requests TX
/// completions by threshold (`MLX5_TX_COMP_THRESH`): a WQE that takes the producer counter
/// to or past a multiple of it asks for a CQE although the burst goes on, so the device
/// reports the ring's progress at least every 32 WQEBBs (plus one WQE) and a long
/// `xmit_more` burst frees its descriptors as the device sends them instead of all at its
/// end. The WQE that rings the doorbell always asks for one. Regular WQEs of one WQEBB: a
/// CQE every 32 packets; MPWQE sessions (up to 15 WQEBBs, 58 packets): one at least every
/// 47 WQEBBs. It adds at most one CQE per 32 WQEBBs, and none to a burst of 32 one-WQEBB
/// WQEs that starts on the boundary (the bench's).
pub const TX_CQE_THRESH: u16 = 32;
const _: () = assert!(TX_CQE_THRESH.is_power_of_two());

/// Whether a WQE that moves the producer counter from `pc` to `next` asks for a CQE: it
/// reaches or crosses a multiple of [`TX_CQE_THRESH`] WQEBBs. No state: it runs for every
/// WQE.
#[inline(always)]
fn asks_cqe(pc: u16, next: u16) -> bool {
    (pc ^ next) & !(TX_CQE_THRESH - 1) != 0
}

/// `STOP_ROOM(x)`: room for a WQE of `x` WQEBBs plus its worst-case edge padding.
pub const fn stop_room(x: u16) -> u16 {
    2 * x - 1
}

/// A packet of an MPWQE session in the packet FIFO, with the DMA mapping of its data: one
/// push when it joins the session, one pop when its completion arrives (mlx5e keeps two
/// FIFOs, one of skbs and one of mappings).
#[derive(Debug)]
pub struct FifoEntry<P> {
    /// The packet.
    pub pkt: Option<P>,
    /// Its mapping; `None` for a packet inlined into the WQE.
    pub dma: Option<DmaEntry>,
}

impl<P> Default for FifoEntry<P> {
    fn default() -> Self {
        Self {
            pkt: None,
            dma: None,
        }
    }
}

/// Per-WQE bookkeeping, indexed by the WQE's first WQEBB (`struct mlx5e_tx_wqe_info`).
#[derive(Debug)]
pub struct WqeInfo<P> {
    /// The packet of a regular WQE; `None` for MPWQE sessions and NOPs.
    pub pkt: Option<P>,
    /// Bytes for BQL.
    pub num_bytes: u32,
    /// dma FIFO entries to unmap (regular WQEs; a session's mappings are in its packets'
    /// FIFO entries).
    pub num_dma: u8,
    /// WQEBBs the WQE spans.
    pub num_wqebbs: u8,
    /// Packets in the packet FIFO (MPWQE).
    pub num_fifo_pkts: u8,
}

impl<P> Default for WqeInfo<P> {
    fn default() -> Self {
        Self {
            pkt: None,
            num_bytes: 0,
            num_dma: 0,
            num_wqebbs: 0,
            num_fifo_pkts: 0,
        }
    }
}

/// SQ parameters.
#[derive(Debug, Clone, Copy)]
pub struct SqParams {
    /// log2 of the ring size in WQEBBs (6..=13).
    pub log_sz: u8,
    /// SQ number (24 bits).
    pub sqn: u32,
    /// Memory key put in every data segment.
    pub lkey: u32,
    /// BAR0 offset of the SQ's doorbell register (UAR page + [`BF_OFFSET`]).
    pub db_offset: u32,
    /// Offset of the doorbell record (two BE32 words; the SQ writes the second) in `dbr`.
    pub dbr_off: usize,
    /// Min-inline mode.
    pub min_inline: InlineMode,
    /// The device cannot insert VLAN tags: tagged packets inline at least L2.
    pub vlan_need_l2_inline: bool,
    /// Device WQE size limit in WQEBBs (at most 16).
    pub max_sq_wqebbs: u16,
    /// Enhanced MPWQE for eligible packets (pflag `skb_tx_mpwqe`).
    pub mpwqe: bool,
    /// Inline small packets inside MPWQE sessions (when enough packets are outstanding).
    /// With a min-inline mode, MPWQE sessions carry only packets inlined whole, whatever
    /// this says ([`Sq::inline_required`]).
    pub mpwqe_inline: bool,
}

/// Why the SQ stopped accepting packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqError {
    /// The device reported an error CQE.
    ReqErr {
        /// `syndrome`.
        syndrome: u8,
        /// `vendor_err_synd`.
        vendor: u8,
        /// `wqe_counter` of the failed WQE.
        wqe_counter: u16,
    },
    /// A CQE whose `wqe_counter` is not the start of an outstanding WQE.
    BadWqeCounter {
        /// The value the device wrote.
        wqe_counter: u16,
    },
    /// A CQE with an opcode that is not a requester completion.
    BadOpcode {
        /// The opcode the device wrote.
        opcode: u8,
    },
    /// A CQE that names another SQ (`sop_drop_qpn`'s low 24 bits).
    BadSqn {
        /// The SQ number the device wrote.
        sqn: u32,
    },
}

/// Result of one TX CQ poll.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxPoll {
    /// CQEs consumed.
    pub cqes: u32,
    /// Packets released.
    pub packets: u32,
    /// BQL bytes released.
    pub bytes: u32,
    /// The budget was exhausted: poll again.
    pub busy: bool,
    /// The queue was woken.
    pub woke: bool,
    /// The SQ is in an error state (set by this poll or earlier).
    pub error: Option<SqError>,
}

/// An open MPWQE session (`struct mlx5e_tx_mpwqe`).
#[derive(Debug, Clone, Copy)]
struct Session {
    /// Ring index of the session's first WQEBB (`pc & mask` at start).
    pi: u16,
    /// The checksum request of its packets, which decides the eth seg's `cs_flags`: what
    /// packets joining the session must share. mlx5e compares the eth seg's first 6 bytes;
    /// rsnic writes no software-parser offsets (`swp_offs`, `swp_flags`), so `cs_flags` is
    /// all of them that can differ, and it is a function of the request.
    csum: TxCsum,
    /// DS units written, ctrl and eth seg included.
    ds_count: u8,
    /// The DS count at which the session is full (set at start: with inlining on, when the
    /// largest inline segment no longer fits; else when every DS is used).
    ds_full: u8,
    /// `pkt_pc` when the session started: its packets are the FIFO entries from here to
    /// `pkt_pc` (no other WQE queues packets there while a session is open).
    pkt_start: u16,
    /// BQL bytes of its packets.
    bytes_count: u32,
}

/// The bound of [`Sq`]'s `W` (`wqe_info`). Like [`PktFifo`] and [`DmaFifo`] only a name for
/// its bound, held by every type that has it, so that the SQ's impls (in four files) state
/// their bounds in one line.
pub trait WqeInfos<P>: Slots<WqeInfo<P>> {}
impl<P, S: Slots<WqeInfo<P>> + ?Sized> WqeInfos<P> for S {}

/// The bound of [`Sq`]'s `F` (the packet FIFO).
pub trait PktFifo<P>: Slots<FifoEntry<P>> {}
impl<P, S: Slots<FifoEntry<P>> + ?Sized> PktFifo<P> for S {}

/// The bound of [`Sq`]'s `D` (the dma FIFO).
pub trait DmaFifo: Slots<DmaEntry> {}
impl<S: Slots<DmaEntry> + ?Sized> DmaFifo for S {}

/// A cyclic SQ over caller-provided memory.
///
/// * `C`: the coherent buffers (ring, doorbell record, CQ).
/// * `W`: `wqe_info`, `2^log_sz` entries; `F`: packet FIFO and `D`: dma FIFO, `4 × 2^log_sz`
///   entries each.
pub struct Sq<P, C, W, F, D>
where
    C: Coherent,
    W: DerefMut<Target = [WqeInfo<P>]>,
    F: DerefMut<Target = [FifoEntry<P>]>,
    D: DerefMut<Target = [DmaEntry]>,
{
    wq: C,
    dbr: C,
    cq: Cq<C>,
    wqe_info: W,
    pkt_fifo: F,
    dma_fifo: DmaRing<D>,
    p: SqParams,
    mask: u16,
    pc: u16,
    cc: u16,
    pkt_pc: u16,
    pkt_cc: u16,
    pkt_mask: u16,
    stop_room: u16,
    max_mpw_wqebbs: u16,
    session: Option<Session>,
    /// The newest WQE written but not yet announced by a doorbell (offset, ctrl seg).
    unrung: Option<(usize, CtrlSeg)>,
    inline_on: bool,
    /// MPWQE is on and the SQ has no min-inline mode: [`Sq::xmit`] hands the common packet
    /// ([`tx_attr_common`](super::tx::tx_attr_common)) straight to the session. Follows `p.mpwqe`.
    common_to_session: bool,
    /// MPWQE is on, the SQ has a min-inline mode, and a session has room for a packet of
    /// [`MPWQE_INLINE_MAX`] bytes inlined whole: sessions carry small common packets as
    /// inline segments only ([`Sq::inline_required`]). Follows `p.mpwqe`.
    inline_required: bool,
    error: Option<SqError>,
    /// Counters.
    pub stats: TxStats,
}

/// Unmaps and releases the packets of a run of FIFO entries; returns how many there were.
/// An entry's mapping is undone only together with taking its packet, so never twice.
#[inline(always)]
fn release_run<P, M: TxDmaMap<P>>(
    run: &mut [FifoEntry<P>],
    map: &mut M,
    release: &mut impl FnMut(P),
) -> u32 {
    let mut missing = 0;
    for e in run.iter_mut() {
        let Some(p) = e.pkt.take() else {
            // (Cannot happen with consistent bookkeeping.)
            missing += 1;
            continue;
        };
        if let Some(d) = e.dma {
            map.unmap(d);
        }
        release(p);
    }
    (run.len() - missing) as u32
}

/// Rings an SQ doorbell (`mlx5e_notify_hw`): CQ_UPDATE into the WQE's `fm_ce_se`,
/// `dma_wmb()`, doorbell record `db[1] = BE32(pc)`, `wmb()`, one 64-bit write of the first 8
/// bytes of the ctrl seg at `db_offset`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn notify_hw<C: Coherent, B: Coherent, M: Mmio, Bar: Barriers>(
    wq: &C,
    wqe_off: usize,
    ctrl: &CtrlSeg,
    dbr: &B,
    dbr_off: usize,
    pc: u16,
    db_offset: u32,
    mmio: &M,
    bar: &Bar,
) {
    wq.write(wqe_off + 11, &[ctrl.fm_ce_se | CTRL_CQ_UPDATE]);
    bar.dma_wmb();
    dbr.write_be32(dbr_off + 4, u32::from(pc));
    bar.wmb();
    mmio.write64(db_offset, ctrl.doorbell_bytes());
}

impl<P: TxPacket, C: Coherent, W: WqeInfos<P>, F: PktFifo<P>, D: DmaFifo> Sq<P, C, W, F, D> {
    /// Builds an SQ. `wq` holds `2^log_sz` WQEBBs; `cq` is its completion queue (same size
    /// or larger); the storage lengths must be exact.
    pub fn new(
        p: SqParams,
        wq: C,
        dbr: C,
        cq: Cq<C>,
        wqe_info: W,
        pkt_fifo: F,
        dma_fifo: D,
    ) -> Result<Self, QueueSetupError> {
        if !(SQ_LOG_SIZE_MIN..=SQ_LOG_SIZE_MAX).contains(&p.log_sz) {
            return Err(QueueSetupError::BadLogSize);
        }
        let n = 1usize << p.log_sz;
        if wq.size() < n * SEND_WQE_BB || dbr.size() < p.dbr_off.saturating_add(8) {
            return Err(QueueSetupError::BufferTooSmall);
        }
        if wqe_info.len() != n || pkt_fifo.len() != 4 * n || dma_fifo.len() != 4 * n {
            return Err(QueueSetupError::BadStorage);
        }
        if p.max_sq_wqebbs == 0 || p.max_sq_wqebbs > SEND_WQE_MAX_WQEBBS || cq.size() < n as u32 {
            return Err(QueueSetupError::BadParams);
        }
        let max_mpw_wqebbs = p.max_sq_wqebbs.min(MAX_MPW_WQEBBS);
        let mut sq = Self {
            wq,
            dbr,
            cq,
            wqe_info,
            pkt_fifo,
            dma_fifo: DmaRing::new(dma_fifo),
            p,
            mask: (n - 1) as u16,
            pc: 0,
            cc: 0,
            pkt_pc: 0,
            pkt_cc: 0,
            pkt_mask: (4 * n - 1) as u16,
            stop_room: 0,
            max_mpw_wqebbs,
            session: None,
            unrung: None,
            inline_on: false,
            common_to_session: false,
            inline_required: false,
            error: None,
            stats: TxStats::default(),
        };
        sq.stop_room = sq.calc_stop_room(p.mpwqe);
        sq.set_session_paths();
        if usize::from(sq.stop_room) >= n {
            return Err(QueueSetupError::BadParams);
        }
        sq.dbr.write_be32(p.dbr_off + 4, 0);
        Ok(sq)
    }

    fn calc_stop_room(&self, mpwqe: bool) -> u16 {
        stop_room(self.p.max_sq_wqebbs)
            + if mpwqe {
                stop_room(self.max_mpw_wqebbs)
            } else {
                0
            }
    }

    /// Producer counter (WQEBBs, free-running).
    pub fn pc(&self) -> u16 {
        self.pc
    }
    /// Consumer counter (WQEBBs, free-running).
    pub fn cc(&self) -> u16 {
        self.cc
    }
    /// Ring size in WQEBBs.
    pub fn size(&self) -> u16 {
        self.mask + 1
    }
    /// The SQ's number on the device.
    pub fn sqn(&self) -> u32 {
        self.p.sqn
    }
    /// Current stop room.
    pub fn stop_room(&self) -> u16 {
        self.stop_room
    }
    /// MPWQE session size in WQEBBs (`max_sq_mpw_wqebbs`).
    pub fn max_mpw_wqebbs(&self) -> u16 {
        self.max_mpw_wqebbs
    }
    /// The error state, if any.
    pub fn error(&self) -> Option<SqError> {
        self.error
    }
    /// Whether an MPWQE session is open.
    pub fn session_open(&self) -> bool {
        self.session.is_some()
    }
    /// Whether MPWQE inlining is currently on (hysteresis state).
    pub fn inline_on(&self) -> bool {
        self.inline_on
    }
    /// Whether MPWQE sessions carry only packets inlined whole: the device demands a
    /// min-inline mode (ConnectX-4 Lx reports L2), which an MPWQE's shared eth seg cannot
    /// give (it inlines nothing) but a packet's own inline segment does, as DPDK's eMPW
    /// inline sends. A packet of at most [`MPWQE_INLINE_MAX`] bytes that is linear, without
    /// GSO or VLAN tag, joins a session inlined; any other takes a regular WQE with its
    /// headers inline.
    pub fn inline_required(&self) -> bool {
        self.inline_required
    }
    /// Packets held by the SQ (posted and not yet completed).
    pub fn outstanding_pkts(&self) -> u16 {
        self.pkt_pc.wrapping_sub(self.pkt_cc)
    }
    /// The completion queue.
    pub fn cq(&self) -> &Cq<C> {
        &self.cq
    }
    /// The completion queue (arming, events).
    pub fn cq_mut(&mut self) -> &mut Cq<C> {
        &mut self.cq
    }
    /// The ring buffer.
    pub fn ring(&self) -> &C {
        &self.wq
    }
    /// Whether MPWQE is on.
    pub fn mpwqe(&self) -> bool {
        self.p.mpwqe
    }

    /// Switches Enhanced MPWQE (the `skb_tx_mpwqe` flag). The stop room changes with it, so
    /// the SQ must be empty: the caller quiesces it first (stop the TX queue, let the device
    /// complete everything, poll until `pc == cc`), or reopens the channel as mlx5e does.
    pub fn set_mpwqe(&mut self, on: bool) -> Result<(), NotIdle> {
        if self.pc != self.cc || self.session.is_some() {
            return Err(NotIdle);
        }
        let room = self.calc_stop_room(on);
        if room > self.mask {
            return Err(NotIdle);
        }
        self.p.mpwqe = on;
        self.set_session_paths();
        self.stop_room = room;
        Ok(())
    }

    /// Derives which packets MPWQE sessions take from `p.mpwqe` and the min-inline mode.
    fn set_session_paths(&mut self) {
        let min_inline = self.p.min_inline != InlineMode::None;
        self.common_to_session = self.p.mpwqe && !min_inline;
        // A session's first packet needs the ctrl and eth segs and its inline segment.
        let room = u32::from(self.max_mpw_wqebbs) * u32::from(WQEBB_NUM_DS);
        self.inline_required =
            self.p.mpwqe && min_inline && room >= 2 + inline_seg_ds(MPWQE_INLINE_MAX);
    }

    /// Switches inlining of small packets inside MPWQE sessions. Safe at any time: it takes
    /// effect at the next session start.
    pub fn set_mpwqe_inline(&mut self, on: bool) {
        self.p.mpwqe_inline = on;
    }

    /// `mlx5e_wqc_has_room_for`: `(cc − pc) mod size ≥ n` or the ring is empty.
    #[inline(always)]
    pub fn has_room_for(&self, n: u16) -> bool {
        (self.cc.wrapping_sub(self.pc) & self.mask) >= n || self.cc == self.pc
    }

    /// WQEBBs from ring index `pi` to the end of its fragment or of the ring.
    #[inline(always)]
    fn contig_wqebbs(&self, pi: u16) -> u16 {
        let last = (pi | (WQEBBS_PER_FRAG - 1)).min(self.mask);
        last - pi + 1
    }

    #[inline(always)]
    fn post_nop(&mut self) {
        let pi = self.pc & self.mask;
        let ctrl = CtrlSeg::nop(self.pc, self.p.sqn);
        let off = usize::from(pi) * SEND_WQE_BB;
        self.wq.write(off, &ctrl.encode());
        self.unrung = Some((off, ctrl));
        if let Some(wi) = self.wqe_info.get_mut(usize::from(pi)) {
            *wi = WqeInfo {
                num_wqebbs: 1,
                ..WqeInfo::default()
            };
        }
        self.pc = self.pc.wrapping_add(1);
    }

    /// `mlx5e_txqsq_get_next_pi`: the ring index where a WQE of `size` WQEBBs starts, after
    /// NOP-padding to the next fragment if it would not fit contiguously. `None` if the ring
    /// lacks room for padding plus the WQE (nothing is posted then).
    #[inline(always)]
    fn get_next_pi(&mut self, size: u16) -> Option<u16> {
        let pi = self.pc & self.mask;
        let contig = self.contig_wqebbs(pi);
        if contig >= size {
            return self.has_room_for(size).then_some(pi);
        }
        if !self.has_room_for(contig + size) {
            return None;
        }
        for _ in 0..contig {
            self.post_nop();
        }
        add(&mut self.stats.nop, u64::from(contig));
        Some(self.pc & self.mask)
    }

    #[inline(always)]
    fn check_stop<E: TxQueue>(&mut self, env: &mut E) {
        if !self.has_room_for(self.stop_room) && !env.is_stopped() {
            env.stop();
            add(&mut self.stats.stopped, 1);
        }
    }

    /// Queues a session's packet with its mapping (`None`: inlined).
    #[inline(always)]
    fn push_pkt(&mut self, pkt: P, dma: Option<DmaEntry>) {
        if let Some(slot) = self
            .pkt_fifo
            .get_mut(usize::from(self.pkt_pc & self.pkt_mask))
        {
            *slot = FifoEntry {
                pkt: Some(pkt),
                dma,
            };
        }
        self.pkt_pc = self.pkt_pc.wrapping_add(1);
    }

    /// Dequeues the `n` oldest FIFO packets: unmaps their data and hands them to `release`.
    /// Returns how many packets there were. The entries are walked as at most two
    /// contiguous runs (up to the end of the FIFO, then from its start), so the index is
    /// masked and checked once per run, not per packet.
    #[inline(always)]
    fn pop_pkts<M: TxDmaMap<P>>(
        &mut self,
        n: u16,
        map: &mut M,
        release: &mut impl FnMut(P),
    ) -> u32 {
        let start = usize::from(self.pkt_cc & self.pkt_mask);
        self.pkt_cc = self.pkt_cc.wrapping_add(n);
        let end = start + usize::from(n);
        let len = self.pkt_fifo.len();
        let mut got = 0;
        if let Some(run) = self.pkt_fifo.get_mut(start..end.min(len)) {
            got = release_run(run, map, release);
        }
        if end > len {
            if let Some(run) = self.pkt_fifo.get_mut(..end - len) {
                got += release_run(run, map, release);
            }
        }
        got
    }

    /// Rings the doorbell for everything posted so far, with the newest WQE's ctrl seg.
    #[inline(always)]
    fn ring_pending<E: Mmio + Barriers>(&mut self, env: &E) {
        let Some((wqe_off, ctrl)) = self.unrung.take() else {
            return;
        };
        notify_hw(
            &self.wq,
            wqe_off,
            &ctrl,
            &self.dbr,
            self.p.dbr_off,
            self.pc,
            self.p.db_offset,
            env,
            env,
        );
        add(&mut self.stats.doorbells, 1);
    }

    /// Like `mlx5e_tx_flush`: closes an open session and rings for everything posted, so
    /// WQEs queued with xmit_more reach the device although the current packet failed.
    /// (mlx5e posts a NOP to have a WQE to ring with; this SQ remembers the newest
    /// unannounced WQE instead, so no NOP is needed.)
    fn tx_flush<E: Mmio + Barriers + TxQueue>(&mut self, env: &mut E) {
        self.mpwqe_ensure_complete(env);
        self.ring_pending(env);
    }

    /// Posts a NOP WQE and rings for it (and anything posted before): its completion makes
    /// the CQ raise an event, which is how mlx5e's `ndo_xsk_wakeup` gets NAPI to run on the
    /// channel's CPU (a NOP on the internal control SQ). `false` when the ring has no room.
    pub fn nop<E: Mmio + Barriers + TxQueue>(&mut self, env: &mut E) -> bool {
        if self.error.is_some() || !self.has_room_for(1) {
            return false;
        }
        self.mpwqe_ensure_complete(env);
        self.post_nop();
        add(&mut self.stats.nop, 1);
        self.ring_pending(env);
        true
    }

    /// Closes an open MPWQE session and rings the doorbell for everything posted since the
    /// last one, if anything was (`mlx5e_xmit_xdp_doorbell`): for callers that post with
    /// `xmit_more` set and ring once per batch (XDP SQs: once per NAPI poll or per
    /// `ndo_xdp_xmit` batch).
    pub fn flush<E: Mmio + Barriers + TxQueue>(&mut self, env: &mut E) {
        if self.error.is_none() {
            self.tx_flush(env);
        }
    }

    /// Resets an empty SQ after recovery (`mlx5e_reset_txqsq_cc_pc`): counters to 0, error
    /// cleared. The device's SQ must be reset too.
    pub fn reset(&mut self) -> Result<(), NotIdle> {
        if self.pc != self.cc || self.session.is_some() || self.pkt_pc != self.pkt_cc {
            return Err(NotIdle);
        }
        self.pc = 0;
        self.cc = 0;
        self.unrung = None;
        self.pkt_pc = 0;
        self.pkt_cc = 0;
        self.dma_fifo.reset();
        self.error = None;
        self.dbr.write_be32(self.p.dbr_off + 4, 0);
        Ok(())
    }
}
