// SPDX-License-Identifier: GPL-2.0

//! The mlx5 cyclic ("legacy") receive queue (spec C.4) with basic CQE compression (C.5).
//!
//! Each RX WQE is `segs` 16-byte data segments (`byte_count = buf_size | 0x80000000`, lkey,
//! address), padded to a power of two with segments of byte count 0 and the terminating
//! lkey (RX scatter, mlx5e's non-linear legacy RQ: a 9000-byte frame over three order-0
//! pages instead of one order-2 page). Buffers come from an [`RxBufProvider`] (plain
//! buffers on the host, page_pool pages in the kernel). Posting fills the WQE's empty
//! slots and writes their addresses, then the doorbell record `db[0] = BE32(wqe_ctr)`, once
//! per post; RQs have no MMIO doorbell. A packet takes its WQE's first buffer and as many
//! more as its length needs ([`RxFrags`]); the buffers it did not need stay posted.
//!
//! The poll trusts nothing from the device: the `wqe_counter` must be the next expected
//! WQE, `byte_cnt` must fit the buffer, and a compressed session must not claim more
//! packets than there are posted WQEs. A violation is counted in `cqe_bad`; a
//! `wqe_counter` or session violation also puts the RQ in an error state (it stops
//! consuming until [`Rq::drain`] and [`Rq::reset`]).

use core::ops::DerefMut;

use super::cq::{Cq, NotIdle, QueueSetupError};
use super::cqe::{
    Cqe64, MiniCqe8, CQE_FORMAT_COMPRESSED, CQE_RESP_ERR, CQE_RESP_SEND, MINI_CQE_ARRAY_SIZE,
    SYND_LOCAL_PROT, SYND_LOCAL_QP_OP, SYND_WR_FLUSH,
};
use super::seg::{DataSeg, SEND_WQE_DS};
use super::stats::{add, RxStats};
use crate::hwif::hw::{Barriers, Coherent};
pub use crate::hwif::pkt::RxFrags;
use crate::hwif::pkt::Slots;
// Re-exported: the buffer traits lived here before both families shared them.
pub use crate::hwif::pkt::{RxBufProvider, RxBuffer};

/// `MLX5_HW_START_PADDING`, ORed into every RX data segment's byte count.
pub const HW_START_PADDING: u32 = 0x8000_0000;
/// Smallest RQ log size.
pub const RQ_LOG_SIZE_MIN: u8 = 1;
/// Largest RQ log size.
pub const RQ_LOG_SIZE_MAX: u8 = 15;
/// Most data segments per RX WQE (a 256-byte WQE, `log_wq_stride` 8).
pub const RQ_SEGS_MAX: u8 = 16;
/// The lkey that ends an RX WQE's scatter list (`MLX5_TERMINATE_SCATTER_LIST_LKEY`).
pub const TERMINATE_LKEY: u32 = 0x100;

/// RQ parameters.
#[derive(Debug, Clone, Copy)]
pub struct RqParams {
    /// log2 of the number of WQEs.
    pub log_sz: u8,
    /// Bytes the device may write into each buffer.
    pub buf_size: u32,
    /// Buffers (data segments) per WQE, 1..=[`RQ_SEGS_MAX`]: a packet may be up to
    /// `segs * buf_size` bytes.
    pub segs: u8,
    /// Memory key of the buffers.
    pub lkey: u32,
    /// Offset of the doorbell record (db[0] is the RQ's) in `dbr`.
    pub dbr_off: usize,
    /// Post only when at least this many WQEs are missing (`wqe_bulk`, ≥ 1).
    pub wqe_bulk: u16,
}

impl RqParams {
    /// log2 of the WQE stride in bytes (`wq.log_wq_stride`): `segs` data segments rounded
    /// up to a power of two, 4 (one segment) to 8 (16).
    pub fn log_stride(&self) -> u8 {
        let segs = u32::from(self.segs.max(1));
        4 + (32 - (segs - 1).leading_zeros()) as u8
    }
}

/// What one CQE tells about a received packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxCompletion {
    /// Packet length (validated: 1..=`segs` × buffer size).
    pub len: u32,
    /// L4 checksum over the packet (`check_sum`).
    pub csum: u16,
    /// RSS hash. Of a compressed session, the title's (its first packet's) only: the other
    /// packets' are 0, as `mlx5e_decompress_cqe_no_hash` leaves them (the CSUM mini-CQE
    /// carries no hash, and the device puts completions of different hashes in one session).
    pub hash: u32,
    /// RSS hash type byte (0 where `hash` is).
    pub hash_type: u8,
    /// L2/L3/L4 OK bits (`hds_ip_ext`).
    pub hds_ip_ext: u8,
    /// Stripped VLAN TCI.
    pub vlan: Option<u16>,
    /// Flow tag.
    pub flow_tag: u32,
    /// The CQE was rebuilt from a mini CQE.
    pub decompressed: bool,
}

/// Why the RQ stopped consuming completions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RqError {
    /// A CQE for a WQE that is not the next one expected, or for no posted WQE.
    BadWqeCounter {
        /// What the device wrote.
        got: u16,
        /// The expected counter.
        expected: u16,
    },
    /// A compressed session claiming an impossible number of packets.
    BadSession {
        /// The claimed count.
        count: u32,
    },
    /// An error CQE whose syndrome leaves the device's RQ in the error state
    /// (`cqe_syndrome_needs_recover`: LOCAL_QP_OP, LOCAL_PROT, WR_FLUSH).
    ErrCqe {
        /// `syndrome`.
        syndrome: u8,
        /// `wqe_counter` of the failed WQE.
        wqe_counter: u16,
    },
}

/// Whether an RX error CQE's syndrome leaves the RQ in error, so that it must be recovered
/// (mlx5e's `cqe_syndrome_needs_recover`). LOCAL_LENGTH (a frame longer than the buffer) does
/// not: the RQ goes on.
pub fn syndrome_needs_recover(syndrome: u8) -> bool {
    matches!(syndrome, SYND_LOCAL_QP_OP | SYND_LOCAL_PROT | SYND_WR_FLUSH)
}

/// Result of one poll.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RxPoll {
    /// Packets handled (delivered or dropped): the NAPI work done.
    pub work: u32,
    /// WQEs posted after the poll.
    pub posted: u32,
    /// The RQ is in an error state.
    pub error: Option<RqError>,
}

/// Decompression state of a basic compressed session that may span polls.
#[derive(Debug, Clone, Copy, Default)]
struct Decomp {
    left: u32,
    /// The next packet is the session's first, whose CQE the title is: it keeps the title's
    /// RSS hash (`mlx5e_decompress_cqes_start`); the others get none
    /// (`mlx5e_decompress_cqes_cont`).
    first: bool,
    title: Cqe64,
    mini: Cqe64,
    mini_idx: u8,
    wqe_counter: u16,
}

/// A cyclic RQ over caller-provided memory. `S` holds `segs` buffer slots per WQE (WQE
/// `i`'s at `i * segs ..`).
pub struct Rq<B, C, S>
where
    C: Coherent,
    S: DerefMut<Target = [Option<B>]>,
{
    wq: C,
    dbr: C,
    cq: Cq<C>,
    bufs: S,
    p: RqParams,
    /// Bytes per WQE.
    stride: usize,
    /// Buffer slots per WQE (`p.segs`).
    segs: usize,
    mask: u16,
    /// Producer counter (WQEs posted).
    wqe_ctr: u16,
    /// Consumer counter (WQEs completed).
    cc: u16,
    cqd: Decomp,
    error: Option<RqError>,
    /// The last refill stopped on an allocation failure ([`Rq::short`]).
    short: bool,
    /// Counters.
    pub stats: RxStats,
}

impl<B: RxBuffer, C: Coherent, S: Slots<Option<B>>> Rq<B, C, S> {
    /// Builds an RQ of `2^log_sz` WQEs over `wq` and writes the constant part of every WQE
    /// (byte count, lkey). No buffer is posted yet: call [`Rq::post`].
    pub fn new(p: RqParams, wq: C, dbr: C, cq: Cq<C>, bufs: S) -> Result<Self, QueueSetupError> {
        if !(RQ_LOG_SIZE_MIN..=RQ_LOG_SIZE_MAX).contains(&p.log_sz) {
            return Err(QueueSetupError::BadLogSize);
        }
        if !(1..=RQ_SEGS_MAX).contains(&p.segs) {
            return Err(QueueSetupError::BadParams);
        }
        let n = 1usize << p.log_sz;
        let segs = usize::from(p.segs);
        let stride = 1usize << p.log_stride();
        if wq.size() < n * stride || dbr.size() < p.dbr_off.saturating_add(8) {
            return Err(QueueSetupError::BufferTooSmall);
        }
        if bufs.len() != n * segs {
            return Err(QueueSetupError::BadStorage);
        }
        if p.buf_size == 0
            || p.buf_size.checked_mul(u32::from(p.segs)).is_none()
            || p.buf_size >= HW_START_PADDING
            || p.wqe_bulk == 0
            || usize::from(p.wqe_bulk) > n
            || (cq.size() as usize) < n
        {
            return Err(QueueSetupError::BadParams);
        }
        let d = DataSeg {
            byte_count: p.buf_size | HW_START_PADDING,
            lkey: p.lkey,
            addr: 0,
        }
        .encode();
        let end = DataSeg {
            byte_count: 0,
            lkey: TERMINATE_LKEY,
            addr: 0,
        }
        .encode();
        for i in 0..n {
            for j in 0..stride / SEND_WQE_DS {
                let seg = if j < segs { &d } else { &end };
                wq.write(i * stride + j * SEND_WQE_DS, seg);
            }
        }
        dbr.write_be32(p.dbr_off, 0);
        Ok(Self {
            wq,
            dbr,
            cq,
            bufs,
            p,
            stride,
            segs,
            mask: (n - 1) as u16,
            wqe_ctr: 0,
            cc: 0,
            cqd: Decomp::default(),
            error: None,
            short: false,
            stats: RxStats::default(),
        })
    }

    /// Number of WQEs.
    pub fn size(&self) -> u16 {
        self.mask + 1
    }
    /// Producer counter.
    pub fn wqe_ctr(&self) -> u16 {
        self.wqe_ctr
    }
    /// Consumer counter.
    pub fn cc(&self) -> u16 {
        self.cc
    }
    /// WQEs posted and not completed.
    pub fn outstanding(&self) -> u16 {
        self.wqe_ctr.wrapping_sub(self.cc)
    }
    /// Error state.
    pub fn error(&self) -> Option<RqError> {
        self.error
    }
    /// Packets left in an open compressed session.
    pub fn decompress_left(&self) -> u32 {
        self.cqd.left
    }
    /// The ring buffer.
    pub fn ring(&self) -> &C {
        &self.wq
    }
    /// The completion queue.
    pub fn cq(&self) -> &Cq<C> {
        &self.cq
    }
    /// The completion queue (arming, events).
    pub fn cq_mut(&mut self) -> &mut Cq<C> {
        &mut self.cq
    }

    /// The last refill ([`Rq::post`]) stopped on an allocation failure, with WQEs still
    /// missing: NAPI must poll again to post them (`mlx5e_post_rx_wqes` returns busy), as a
    /// short ring receives less, and an empty one with nothing to complete would never be
    /// refilled.
    #[inline(always)]
    pub fn short(&self) -> bool {
        self.short
    }

    /// Refills missing WQEs (`mlx5e_post_rx_wqes`) if at least `wqe_bulk` are missing, then
    /// writes the doorbell record once. A WQE is posted once each of its slots holds a
    /// buffer: only the empty ones get a new buffer (and their address written). Returns
    /// the number posted; an allocation failure stops it and leaves [`Rq::short`] set.
    pub fn post<E: Barriers + RxBufProvider<B>>(&mut self, env: &mut E) -> u32 {
        self.short = false;
        if self.error.is_some() {
            return 0;
        }
        let missing = self.size().wrapping_sub(self.outstanding());
        if missing < self.p.wqe_bulk {
            return 0;
        }
        let mut n = 0u32;
        'wqes: for _ in 0..missing {
            let ix = usize::from(self.wqe_ctr & self.mask);
            for j in 0..self.segs {
                // Wrapping arithmetic here and below: the values are bounded by `new` (ring of
                // at most 2^15 WQEs of at most 16 segments), and a checked operation would
                // bring a panic path into the kernel's hot path.
                let Some(slot) = self
                    .bufs
                    .get_mut(ix.wrapping_mul(self.segs).wrapping_add(j))
                else {
                    break 'wqes;
                };
                if slot.is_some() {
                    continue;
                }
                let Some(buf) = env.alloc() else {
                    add(&mut self.stats.buff_alloc_err, 1);
                    self.short = true;
                    break 'wqes;
                };
                let addr = buf.dma_addr();
                *slot = Some(buf);
                self.wq.write(
                    ix.wrapping_mul(self.stride)
                        .wrapping_add(j.wrapping_mul(SEND_WQE_DS))
                        .wrapping_add(8),
                    &addr.to_be_bytes(),
                );
            }
            self.wqe_ctr = self.wqe_ctr.wrapping_add(1);
            n += 1;
        }
        if n > 0 {
            env.dma_wmb();
            self.dbr.write_be32(self.p.dbr_off, u32::from(self.wqe_ctr));
            add(&mut self.stats.dbr_writes, 1);
        }
        n
    }

    /// Handles one (possibly rebuilt) CQE for the next expected WQE.
    #[inline(always)]
    fn handle_cqe<E: RxBufProvider<B>>(
        &mut self,
        cqe: &Cqe64,
        decompressed: bool,
        env: &mut E,
        deliver: &mut impl FnMut(B, &RxCompletion, RxFrags<'_, B>),
    ) -> bool {
        let wc = cqe.wqe_counter();
        if self.cc == self.wqe_ctr || (wc & self.mask) != (self.cc & self.mask) {
            add(&mut self.stats.cqe_bad, 1);
            self.error.get_or_insert(RqError::BadWqeCounter {
                got: wc,
                expected: self.cc & self.mask,
            });
            return false;
        }
        let base = usize::from(self.cc & self.mask).wrapping_mul(self.segs);
        let buf = self.bufs.get_mut(base).and_then(Option::take);
        self.cc = self.cc.wrapping_add(1);
        let Some(buf) = buf else {
            add(&mut self.stats.cqe_bad, 1);
            return true;
        };
        if cqe.opcode() != CQE_RESP_SEND {
            add(&mut self.stats.wqe_err, 1);
            env.recycle(buf);
            if cqe.opcode() == CQE_RESP_ERR && syndrome_needs_recover(cqe.syndrome()) {
                // The device stopped the RQ: stop consuming until it is recovered.
                self.error.get_or_insert(RqError::ErrCqe {
                    syndrome: cqe.syndrome(),
                    wqe_counter: wc,
                });
                return false;
            }
            return true;
        }
        let len = cqe.byte_cnt();
        // The buffers after the first that the packet fills (0 unless it is longer than one).
        // `buf_size` is not 0 (checked by `new`).
        let nfrags = len
            .saturating_sub(1)
            .checked_div(self.p.buf_size)
            .unwrap_or(u32::MAX) as usize;
        let first = base.wrapping_add(1);
        let frags = match self.bufs.get_mut(first..first.wrapping_add(nfrags)) {
            Some(f) if len != 0 && nfrags < self.segs && f.iter().all(Option::is_some) => f,
            _ => {
                add(&mut self.stats.cqe_bad, 1);
                env.recycle(buf);
                return true;
            }
        };
        let c = RxCompletion {
            len,
            csum: cqe.check_sum(),
            hash: cqe.rss_hash_result(),
            hash_type: cqe.rss_hash_type(),
            hds_ip_ext: cqe.hds_ip_ext(),
            vlan: cqe.has_vlan().then(|| cqe.vlan_info()),
            flow_tag: cqe.flow_tag(),
            decompressed,
        };
        add(&mut self.stats.packets, 1);
        add(&mut self.stats.bytes, u64::from(len));
        if nfrags == 0 {
            deliver(buf, &c, RxFrags::none());
        } else {
            add(&mut self.stats.scatter_pkts, 1);
            let seg = self.p.buf_size;
            deliver(buf, &c, RxFrags::new(frags, len.saturating_sub(seg), seg));
        }
        true
    }

    /// Continues an open compressed session for up to `budget` packets
    /// (`mlx5e_decompress_cqes_cont`), then rewrites the owner byte of the consumed slots.
    fn decompress_cont<E: RxBufProvider<B>>(
        &mut self,
        budget: u32,
        env: &mut E,
        deliver: &mut impl FnMut(B, &RxCompletion, RxFrags<'_, B>),
    ) -> u32 {
        let start = self.cq.cc();
        let mut cqcc = start;
        let mut done = 0;
        while done < budget && self.cqd.left > 0 {
            if usize::from(self.cqd.mini_idx) == MINI_CQE_ARRAY_SIZE {
                self.cqd.mini = self.cq.read_slot(cqcc);
                self.cqd.mini_idx = 0;
            }
            let m = MiniCqe8::from_array(&self.cqd.mini, usize::from(self.cqd.mini_idx))
                .unwrap_or_default();
            let mut c = self.cqd.title;
            c.set_byte_cnt(m.byte_cnt());
            c.set_check_sum(m.checksum());
            if self.cqd.first {
                self.cqd.first = false;
            } else {
                c.set_rss_hash_result(0);
                c.set_rss_hash_type(0);
            }
            c.set_op_own(self.cqd.title.opcode(), 0, self.cq.parity(cqcc));
            c.set_wqe_counter(self.cqd.wqe_counter);
            self.cqd.wqe_counter = self.cqd.wqe_counter.wrapping_add(1) & self.mask;
            self.cqd.mini_idx += 1;
            self.cqd.left -= 1;
            cqcc = cqcc.wrapping_add(1);
            done += 1;
            add(&mut self.stats.cqe_compress_pkts, 1);
            if !self.handle_cqe(&c, true, env, deliver) {
                break;
            }
        }
        let n = cqcc.wrapping_sub(start);
        self.cq.update_owner(start, n);
        self.cq.pop(n);
        add(&mut self.stats.cqes, u64::from(n));
        done
    }

    /// Polls the RX CQ for up to `budget` packets (`mlx5e_poll_rx_cq`), handing each
    /// received buffer to `deliver`, and writes set_ci if anything was consumed. Does not
    /// post: see [`Rq::napi_poll`]. For an RQ of one buffer per WQE; see
    /// [`Rq::poll_cq_frags`].
    pub fn poll_cq<E: Barriers + RxBufProvider<B>>(
        &mut self,
        budget: u32,
        env: &mut E,
        mut deliver: impl FnMut(B, &RxCompletion),
    ) -> u32 {
        self.poll_cq_frags(budget, env, |b, c, _| deliver(b, c))
    }

    /// As [`Rq::poll_cq`], handing `deliver` the packet's further buffers too (RX
    /// scatter). Those it does not take stay posted.
    pub fn poll_cq_frags<E: Barriers + RxBufProvider<B>>(
        &mut self,
        budget: u32,
        env: &mut E,
        mut deliver: impl FnMut(B, &RxCompletion, RxFrags<'_, B>),
    ) -> u32 {
        add(&mut self.stats.polls, 1);
        if self.error.is_some() {
            // Stopped on a fault: what the device writes meanwhile is discarded, so the CQ
            // is armed past it (else an armed CQ with CQEs beyond its consumer index fires
            // again at once, and NAPI and the interrupt chase each other).
            self.discard_cqes(env);
            return 0;
        }
        let c0 = self.cq.cc();
        let mut work = 0;
        if self.cqd.left > 0 {
            work += self.decompress_cont(budget, env, &mut deliver);
        }
        while work < budget && self.error.is_none() {
            let Some(cqe) = self.cq.peek(env) else {
                break;
            };
            if cqe.format() == CQE_FORMAT_COMPRESSED {
                let count = cqe.byte_cnt();
                if count == 0 || count > u32::from(self.outstanding()) || count > self.cq.size() {
                    add(&mut self.stats.cqe_bad, 1);
                    self.error.get_or_insert(RqError::BadSession { count });
                    self.cq.update_owner(self.cq.cc(), 1);
                    self.cq.pop(1);
                    add(&mut self.stats.cqes, 1);
                    break;
                }
                add(&mut self.stats.cqe_compress_blks, 1);
                self.cqd = Decomp {
                    left: count,
                    first: true,
                    title: cqe,
                    mini: self.cq.read_slot(self.cq.cc().wrapping_add(1)),
                    mini_idx: 0,
                    wqe_counter: cqe.wqe_counter(),
                };
                work += self.decompress_cont(budget - work, env, &mut deliver);
                continue;
            }
            self.cq.pop(1);
            add(&mut self.stats.cqes, 1);
            work += 1;
            if !self.handle_cqe(&cqe, false, env, &mut deliver) {
                break;
            }
        }
        if self.cq.cc() != c0 {
            self.cq.update_ci(env);
        }
        work
    }

    /// One NAPI round for the RQ: [`Rq::poll_cq`], then [`Rq::post`]. At most one
    /// doorbell-record write.
    pub fn napi_poll<E: Barriers + RxBufProvider<B>>(
        &mut self,
        budget: u32,
        env: &mut E,
        mut deliver: impl FnMut(B, &RxCompletion),
    ) -> RxPoll {
        self.napi_poll_frags(budget, env, |b, c, _| deliver(b, c))
    }

    /// As [`Rq::napi_poll`], with [`Rq::poll_cq_frags`].
    pub fn napi_poll_frags<E: Barriers + RxBufProvider<B>>(
        &mut self,
        budget: u32,
        env: &mut E,
        deliver: impl FnMut(B, &RxCompletion, RxFrags<'_, B>),
    ) -> RxPoll {
        let work = self.poll_cq_frags(budget, env, deliver);
        let posted = self.post(env);
        RxPoll {
            work,
            posted,
            error: self.error,
        }
    }

    /// Gives every posted buffer back to the provider (teardown or recovery, once the
    /// device no longer writes to them). CQEs left in the CQ (frames the device delivered
    /// that NAPI never read: the queue closed first) are consumed unread and counted in
    /// `cqe_discarded`. Returns how many buffers.
    pub fn drain<E: RxBufProvider<B> + Barriers>(&mut self, env: &mut E) -> u32 {
        let d = self.cq.discard(env);
        add(&mut self.stats.cqes, u64::from(d));
        add(&mut self.stats.cqe_discarded, u64::from(d));
        let n = env.recycle_all(&mut self.bufs);
        self.cc = self.wqe_ctr;
        self.cqd = Decomp::default();
        n
    }

    /// Consumes every CQE the device has written, without looking at it or touching a
    /// buffer: for an RQ that stopped on a fault (its buffers go back with [`Rq::drain`]),
    /// so that the CQ is armed past them and does not fire again at once. An open
    /// compressed session is forgotten. Writes set_ci if anything was consumed; returns how
    /// many CQEs. Does nothing while the RQ has no error.
    pub fn discard_cqes<E: Barriers>(&mut self, env: &E) -> u32 {
        if self.error.is_none() {
            return 0;
        }
        self.cqd = Decomp::default();
        let n = self.cq.discard(env);
        add(&mut self.stats.cqes, u64::from(n));
        add(&mut self.stats.cqe_discarded, u64::from(n));
        n
    }

    /// Resets a drained RQ after recovery: counters to 0, error cleared, doorbell record 0.
    /// The device's RQ must be reset too.
    pub fn reset(&mut self) -> Result<(), NotIdle> {
        if self.bufs.iter().any(Option::is_some) {
            return Err(NotIdle);
        }
        self.wqe_ctr = 0;
        self.cc = 0;
        self.error = None;
        self.short = false;
        self.dbr.write_be32(self.p.dbr_off, 0);
        Ok(())
    }
}
