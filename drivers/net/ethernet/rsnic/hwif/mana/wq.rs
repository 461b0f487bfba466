// SPDX-License-Identifier: GPL-2.0

//! A GDMA work queue (SQ or RQ) in caller-provided coherent memory (spec D.1, D.2).
//!
//! `head` and `tail` count 32-byte basic units (BUs), free-running u32. The WQE at `head`
//! starts at byte `(head · 32) mod size`. The header and inline OOB always fit in the first
//! BU (8 + 24 ≤ 32); only the SGL may run past the end of the ring, and then continues at
//! byte 0 (`mana_gd_write_sgl`).

use super::fmt::{wqe_size, Sge, WqeHeader, BU_SIZE, MIN_QSIZE, SGE_SIZE, WQE_HDR_SIZE};
use crate::hwif::hw::Coherent;

/// The WQE does not fit in the free space of the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoSpace;

/// Why an SQ ([`super::sq::SqError`]) or an RQ ([`super::rq::RqError`]) stopped
/// consuming its CQ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WqError {
    /// A CQE naming another queue, or a queue of the other kind.
    WrongQueue {
        /// `wq_num` of the CQE.
        wq_num: u32,
        /// `is_sq` of the CQE.
        is_sq: bool,
    },
    /// A CQE while no WQE was outstanding.
    Unexpected,
    /// The owner bits showed a CQ overflow.
    CqOverflow,
}

/// A work queue.
pub struct Wq<C: Coherent> {
    buf: C,
    size: u32,
    head: u32,
    tail: u32,
}

impl<C: Coherent> Wq<C> {
    /// A queue of `size` bytes (a power of two, at least 4 KiB) over `buf`. `None` if the
    /// size is invalid or the buffer smaller.
    pub fn new(buf: C, size: u32) -> Option<Self> {
        if !size.is_power_of_two() || size < MIN_QSIZE || buf.size() < size as usize {
            return None;
        }
        Some(Self {
            buf,
            size,
            head: 0,
            tail: 0,
        })
    }

    /// Queue size in bytes.
    #[inline(always)]
    pub fn size(&self) -> u32 {
        self.size
    }
    /// Producer counter in BUs.
    #[inline(always)]
    pub fn head(&self) -> u32 {
        self.head
    }
    /// Consumer counter in BUs.
    #[inline(always)]
    pub fn tail(&self) -> u32 {
        self.tail
    }
    /// The ring memory.
    pub fn ring(&self) -> &C {
        &self.buf
    }

    /// BUs in use.
    #[inline(always)]
    pub fn used_bus(&self) -> u32 {
        self.head.wrapping_sub(self.tail)
    }

    /// Free bytes (`mana_gd_wq_avail_space`); 0 if the counters are inconsistent.
    #[inline(always)]
    pub fn avail_space(&self) -> u32 {
        self.size
            .saturating_sub(self.used_bus().saturating_mul(BU_SIZE))
    }

    /// The tail pointer a doorbell carries: `head · 32` modulo 2^32.
    #[inline(always)]
    pub fn doorbell_tail(&self) -> u32 {
        self.head.wrapping_mul(BU_SIZE)
    }

    /// Releases `bus` BUs (`mana_move_wq_tail`), never past `head`.
    #[inline(always)]
    pub fn move_tail(&mut self, bus: u32) {
        self.tail = self.tail.wrapping_add(bus.min(self.used_bus()));
    }

    /// Writes a one-BU WQE at `head` in one access (a BU-aligned BU never wraps: the ring
    /// is a multiple of BUs). Advances `head` by one BU.
    #[inline(always)]
    pub fn post_bu(&mut self, wqe: &[u8; BU_SIZE as usize]) -> Result<(), NoSpace> {
        if BU_SIZE > self.avail_space() {
            return Err(NoSpace);
        }
        let off = (self.head.wrapping_mul(BU_SIZE) & (self.size - 1)) as usize;
        self.buf.write(off, wqe);
        self.head = self.head.wrapping_add(1);
        Ok(())
    }

    /// Writes a WQE at `head`: the header, `oob` into an inline OOB slot of `oob_slot` bytes
    /// (the rest of the slot is zeroed; with `oob` empty the slot is left untouched, as for
    /// RQ WQEs), then the SGL, wrapping at the ring end. Advances `head` and returns the WQE
    /// size in BUs.
    #[inline(always)]
    pub fn post(
        &mut self,
        hdr: &WqeHeader,
        oob: &[u8],
        oob_slot: usize,
        sges: &[Sge],
    ) -> Result<u32, NoSpace> {
        let sz = wqe_size(oob_slot, sges.len()) as u32;
        if sz > self.avail_space() || oob.len() > oob_slot {
            return Err(NoSpace);
        }
        let mask = (self.size - 1) as usize;
        let off = (self.head.wrapping_mul(BU_SIZE) as usize) & mask;
        self.buf.write(off, &hdr.encode());
        if !oob.is_empty() {
            self.buf.write(off + WQE_HDR_SIZE, oob);
            if oob_slot > oob.len() {
                self.buf
                    .zero(off + WQE_HDR_SIZE + oob.len(), oob_slot - oob.len());
            }
        }
        let mut s = off + WQE_HDR_SIZE + oob_slot;
        for sge in sges {
            self.buf.write(s & mask, &sge.encode());
            s += SGE_SIZE;
        }
        let bus = sz / BU_SIZE;
        self.head = self.head.wrapping_add(bus);
        Ok(bus)
    }
}
