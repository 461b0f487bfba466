// SPDX-License-Identifier: GPL-2.0

//! mlx5 completion queue: owner-bit validity, consumer index and arming (spec C.2, A.6).

use super::cqe::{off, Cqe64, CQE_OP_OWN_INIT, CQE_SIZE, CQE_VALIDITY_INIT};
use crate::hwif::hw::{Barriers, Coherent, Mmio};

/// CQ arm command: request notification (`MLX5_CQ_DB_REQ_NOT`).
pub const CQ_DB_REQ_NOT: u32 = 0;
/// CQ arm command: request notification for solicited completions only.
pub const CQ_DB_REQ_NOT_SOL: u32 = 1 << 24;
/// Offset of the CQ arm doorbell inside a UAR page (`MLX5_CQ_DOORBELL`).
pub const CQ_DOORBELL_OFFSET: u32 = 0x20;
/// Smallest supported log2 of the CQ size.
pub const CQ_LOG_SIZE_MIN: u8 = 1;
/// Largest supported log2 of the CQ size.
pub const CQ_LOG_SIZE_MAX: u8 = 16;

/// Errors building a queue from caller-provided memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueSetupError {
    /// The log2 size is outside the supported range.
    BadLogSize,
    /// A ring or doorbell-record buffer is too small.
    BufferTooSmall,
    /// A bookkeeping array has the wrong length.
    BadStorage,
    /// The parameters contradict each other (e.g. stop room ≥ ring size).
    BadParams,
}

/// The queue is not empty (or not idle) for an operation that needs it to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotIdle;

/// A completion queue of 64-byte CQEs and its doorbell record (set_ci, arm).
pub struct Cq<C: Coherent> {
    buf: C,
    dbr: C,
    dbr_off: usize,
    log_sz: u8,
    mask: u32,
    cc: u32,
    cqn: u32,
    arm_sn: u8,
    arm_db_offset: u32,
    arms: u64,
}

impl<C: Coherent> Cq<C> {
    /// Builds a CQ of `2^log_sz` entries over `buf`, with its doorbell record (two BE32 words:
    /// set_ci, arm) at `dbr_off` of `dbr`. `uar_offset` is the UAR page's offset in BAR0; the
    /// arm doorbell is at `uar_offset + 0x20`.
    ///
    /// Initialises every CQE as HW-owned (`op_own = 0xF1`, validity 0xFF) and set_ci to 0.
    pub fn new(
        buf: C,
        dbr: C,
        dbr_off: usize,
        log_sz: u8,
        cqn: u32,
        uar_offset: u32,
    ) -> Result<Self, QueueSetupError> {
        if !(CQ_LOG_SIZE_MIN..=CQ_LOG_SIZE_MAX).contains(&log_sz) {
            return Err(QueueSetupError::BadLogSize);
        }
        let n = 1usize << log_sz;
        if buf.size() < n * CQE_SIZE || dbr.size() < dbr_off.saturating_add(8) {
            return Err(QueueSetupError::BufferTooSmall);
        }
        for i in 0..n {
            buf.write(
                i * CQE_SIZE + off::VALIDITY,
                &[CQE_VALIDITY_INIT, CQE_OP_OWN_INIT],
            );
        }
        dbr.write_be32(dbr_off, 0);
        dbr.write_be32(dbr_off + 4, 0);
        Ok(Self {
            buf,
            dbr,
            dbr_off,
            log_sz,
            mask: (n - 1) as u32,
            cc: 0,
            cqn: cqn & 0x00ff_ffff,
            arm_sn: 0,
            arm_db_offset: uar_offset.wrapping_add(CQ_DOORBELL_OFFSET),
            arms: 0,
        })
    }

    /// The consumer counter (free-running u32).
    #[inline(always)]
    pub fn cc(&self) -> u32 {
        self.cc
    }

    /// log2 of the number of entries.
    #[inline(always)]
    pub fn log_sz(&self) -> u8 {
        self.log_sz
    }

    /// Number of entries.
    #[inline(always)]
    pub fn size(&self) -> u32 {
        self.mask + 1
    }

    /// CQ number.
    pub fn cqn(&self) -> u32 {
        self.cqn
    }

    /// Arm doorbells rung so far.
    pub fn arms(&self) -> u64 {
        self.arms
    }

    /// The CQ buffer.
    pub fn buffer(&self) -> &C {
        &self.buf
    }

    /// Owner parity software expects for counter `ctr`.
    #[inline(always)]
    pub fn parity(&self, ctr: u32) -> u8 {
        ((ctr >> self.log_sz) & 1) as u8
    }

    /// Byte offset of the slot of counter `ctr`.
    #[inline(always)]
    pub fn slot_offset(&self, ctr: u32) -> usize {
        (ctr & self.mask) as usize * CQE_SIZE
    }

    /// The CQE at `cc` if software owns it (`(op_own & 1) == (cc >> log_sz) & 1`); the body is
    /// read after a `dma_rmb()`. Does not consume it.
    #[inline(always)]
    pub fn peek<B: Barriers>(&self, bar: &B) -> Option<Cqe64> {
        let o = self.slot_offset(self.cc);
        let op_own = self.buf.read_u8(o + off::OP_OWN);
        if op_own & 1 != self.parity(self.cc) {
            return None;
        }
        bar.dma_rmb();
        let mut c = Cqe64::default();
        self.buf.read(o, &mut c.0);
        Some(c)
    }

    /// Reads the slot of counter `ctr` without any ownership test (mini-CQE arrays).
    pub fn read_slot(&self, ctr: u32) -> Cqe64 {
        let mut c = Cqe64::default();
        self.buf.read(self.slot_offset(ctr), &mut c.0);
        c
    }

    /// Consumes `n` CQ entries.
    #[inline(always)]
    pub fn pop(&mut self, n: u32) {
        self.cc = self.cc.wrapping_add(n);
    }

    /// Consumes every CQE software owns, without reading its body (a queue stopped on a
    /// fault, or one being reset), at most one pass over the CQ so a device that keeps
    /// writing cannot hold the caller; writes set_ci if anything was consumed. Returns how
    /// many.
    pub fn discard<B: Barriers>(&mut self, bar: &B) -> u32 {
        let start = self.cc;
        while self.cc.wrapping_sub(start) < self.size() && self.peek(bar).is_some() {
            self.pop(1);
        }
        let n = self.cc.wrapping_sub(start);
        if n != 0 {
            self.update_ci(bar);
        }
        n
    }

    /// Rewrites `op_own` of the `n` slots from counter `from` to the parity of each slot's
    /// pass (`mlx5e_cqes_update_owner`), so they read as HW-owned on the next pass.
    pub fn update_owner(&self, from: u32, n: u32) {
        for k in 0..n {
            let ctr = from.wrapping_add(k);
            self.buf
                .write(self.slot_offset(ctr) + off::OP_OWN, &[self.parity(ctr)]);
        }
    }

    /// Writes the set_ci doorbell record (`BE32(cc & 0xFFFFFF)`), then `wmb()`.
    #[inline(always)]
    pub fn update_ci<B: Barriers>(&self, bar: &B) {
        self.dbr.write_be32(self.dbr_off, self.cc & 0x00ff_ffff);
        bar.wmb();
    }

    /// Counts one completion event: the EQ handler's `++cq->arm_sn` (eq.c
    /// `mlx5_eq_comp_int`), called once per completion EQE naming this CQ
    /// ([`super::eq::Eq::poll_completions`]). The next [`Cq::arm`] carries the new sequence
    /// number, so the device can tell an arm request issued after this event from a stale
    /// one.
    pub fn event(&mut self) {
        self.arm_sn = self.arm_sn.wrapping_add(1);
    }

    /// The arm sequence number (its low 2 bits go into the arm doorbell).
    pub fn arm_sn(&self) -> u8 {
        self.arm_sn
    }

    /// Arms the CQ (`mlx5_cq_arm`): arm DBR word, `wmb()`, then one 64-bit write of
    /// `{BE32(sn<<28 | cmd | ci), BE32(cqn)}` at UAR + 0x20.
    pub fn arm<M: Mmio, B: Barriers>(&mut self, cmd: u32, mmio: &M, bar: &B) {
        let sn = u32::from(self.arm_sn & 3);
        let v = (sn << 28) | (cmd & CQ_DB_REQ_NOT_SOL) | (self.cc & 0x00ff_ffff);
        self.dbr.write_be32(self.dbr_off + 4, v);
        bar.wmb();
        let a = v.to_be_bytes();
        let b = self.cqn.to_be_bytes();
        mmio.write64(
            self.arm_db_offset,
            [a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]],
        );
        self.arms = self.arms.wrapping_add(1);
    }
}
