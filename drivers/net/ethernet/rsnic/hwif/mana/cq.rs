// SPDX-License-Identifier: GPL-2.0

//! GDMA completion and event queues (spec D.3, D.4, D.6).
//!
//! Both start with `head = num` (so zeroed memory reads as "empty") and detect overflow with
//! the 3 owner bits ([`owner_check`]). Doorbells carry `head mod (num << 3)`: the entry index
//! plus 3 wrap bits.
//!
//! CQ re-arm rule of `mana_cq_handler` ([`Cq::napi_done`]): when a poll did less work than
//! its budget the CQ is rung with arm = 1 (and NAPI completes); otherwise, once
//! `4 × num_cqe` completions went by without a CQ doorbell, it is rung with arm = 0, because
//! the hardware needs at least one CQ doorbell per 8 wraps.

use super::fmt::{
    cq_doorbell, eq_doorbell, owner_bits_log2, owner_state, Cqe, Eqe, Owner, CQE_SIZE,
    EQE_COMPLETION, EQE_SIZE,
};
use crate::hwif::hw::{Barriers, Coherent, Mmio};

/// The owner bits say the device overwrote an entry the driver had not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overflow;

/// Reads the `N`-byte entry at `*head` of a ring of `1 << log2_num` entries if its owner
/// bits (bits 7..5 of byte `N - 1`, the same place in a CQE and an EQE) say the device wrote
/// it in the current lap, and consumes it (`mana_gd_read_cqe`, and the EQ walk of
/// `mana_gd_process_eq_events`). `Err` when the device lapped the driver: nothing consumed,
/// counted in `overflows`.
#[inline(always)]
fn read_entry<const N: usize, C: Coherent, B: Barriers>(
    buf: &C,
    head: &mut u32,
    log2_num: u32,
    overflows: &mut u64,
    bar: &B,
) -> Result<Option<[u8; N]>, Overflow> {
    // The ring's index mask from its log2 (a queue has at most 2^24 entries: no overflow;
    // wrapping ops, since the kernel checks arithmetic and this runs per entry).
    let mask = 1u32.wrapping_shl(log2_num).wrapping_sub(1);
    let off = (*head & mask) as usize * N;
    let owner = buf.read_u8(off + N - 1) >> 5;
    match owner_state(owner, owner_bits_log2(*head, log2_num)) {
        Owner::Empty => Ok(None),
        Owner::Overflow => {
            *overflows = overflows.wrapping_add(1);
            Err(Overflow)
        }
        Owner::Valid => {
            // Read the entry only after its owner bits.
            bar.dma_rmb();
            let mut b = [0u8; N];
            buf.read(off, &mut b);
            *head = head.wrapping_add(1);
            Ok(Some(b))
        }
    }
}

/// Checks that `buf` holds a ring of `num` entries of `entry` bytes (`num` a power of two,
/// 1..=2^24) and zeroes them; the ring's log2 size, or `None`. What [`Cq::new`] and
/// [`Eq::new`] set up alike.
fn zeroed_ring<C: Coherent>(buf: &C, num: u32, entry: usize) -> Option<u32> {
    if !num.is_power_of_two() || num > 1 << 24 || buf.size() < num as usize * entry {
        return None;
    }
    buf.zero(0, num as usize * entry);
    Some(num.trailing_zeros())
}

/// CQ/EQ doorbell counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CqStats {
    /// Doorbells with arm = 1.
    pub arms: u64,
    /// Doorbells with arm = 0.
    pub updates: u64,
    /// Overflows detected.
    pub overflows: u64,
}

#[inline(always)]
fn ring64<E: Mmio + Barriers>(env: &E, offset: u32, v: u64) {
    env.wmb();
    env.write64(offset, v.to_le_bytes());
}

/// A completion queue of 64-byte CQEs.
pub struct Cq<C: Coherent> {
    buf: C,
    id: u32,
    num: u32,
    /// log2 of `num`: the owner bits and the entry index come from `head` by a shift and a
    /// mask.
    log2_num: u32,
    head: u32,
    db_offset: u32,
    work_since_db: u32,
    /// Doorbell counts.
    pub stats: CqStats,
}

impl<C: Coherent> Cq<C> {
    /// A CQ of `num` entries (a power of two, 1..=2^24) over `buf`, with id `id` and its
    /// doorbell register at BAR0 offset `db_offset`. Zeroes the entries. `None` if the
    /// buffer is too small or `num` invalid.
    pub fn new(buf: C, id: u32, num: u32, db_offset: u32) -> Option<Self> {
        let log2_num = zeroed_ring(&buf, num, CQE_SIZE)?;
        Some(Self {
            buf,
            id: id & 0x00ff_ffff,
            num,
            log2_num,
            head: num,
            db_offset,
            work_since_db: 0,
            stats: CqStats::default(),
        })
    }

    /// CQ id.
    pub fn id(&self) -> u32 {
        self.id
    }
    /// Sets the id and doorbell offset the device gave after creation (the HWC's CQ learns
    /// them from the init events).
    pub fn set_id(&mut self, id: u32, db_offset: u32) {
        self.id = id & 0x00ff_ffff;
        self.db_offset = db_offset;
    }
    /// Number of entries.
    #[inline(always)]
    pub fn num(&self) -> u32 {
        self.num
    }
    /// Consumer counter (starts at `num`).
    #[inline(always)]
    pub fn head(&self) -> u32 {
        self.head
    }
    /// The CQE memory.
    pub fn buffer(&self) -> &C {
        &self.buf
    }
    /// Completions since the last CQ doorbell.
    pub fn work_since_doorbell(&self) -> u32 {
        self.work_since_db
    }

    /// Reads the CQE at `head` if it is valid (`mana_gd_read_cqe`) and consumes it.
    #[inline(always)]
    pub fn poll_one<B: Barriers>(&mut self, bar: &B) -> Result<Option<Cqe>, Overflow> {
        let e = read_entry::<CQE_SIZE, _, _>(
            &self.buf,
            &mut self.head,
            self.log2_num,
            &mut self.stats.overflows,
            bar,
        )?;
        Ok(e.map(|b| Cqe::decode(&b)))
    }

    /// Consumes the valid CQEs without decoding them (a queue stopped on a fault), at most
    /// `limit` and one pass over the CQ so a device that keeps writing cannot hold the
    /// caller; stops at an overflow. The next arm then covers them: an armed CQ with CQEs
    /// beyond its head fires again at once. Returns how many.
    pub fn discard<B: Barriers>(&mut self, bar: &B, limit: u32) -> u32 {
        let mut n = 0;
        while n < self.num.min(limit) {
            match self.poll_one(bar) {
                Ok(Some(_)) => n += 1,
                _ => break,
            }
        }
        n
    }

    /// The tail pointer a CQ doorbell carries: `head mod (num << 3)`.
    #[inline(always)]
    pub fn doorbell_tail(&self) -> u32 {
        self.head & ((self.num << 3) - 1)
    }

    /// Rings the CQ doorbell (`mana_gd_ring_cq`): `wmb()`, one 64-bit write.
    #[inline(always)]
    pub fn ring<E: Mmio + Barriers>(&mut self, arm: bool, env: &E) {
        ring64(
            env,
            self.db_offset,
            cq_doorbell(self.id, self.doorbell_tail(), arm),
        );
        if arm {
            self.stats.arms = self.stats.arms.wrapping_add(1);
        } else {
            self.stats.updates = self.stats.updates.wrapping_add(1);
        }
        self.work_since_db = 0;
    }

    /// The end of a NAPI poll that did `work` of `budget` (`mana_cq_handler`). Returns
    /// whether NAPI completes (the CQ was armed).
    #[inline(always)]
    pub fn napi_done<E: Mmio + Barriers>(&mut self, work: u32, budget: u32, env: &E) -> bool {
        if work < budget {
            self.ring(true, env);
            return true;
        }
        self.keep_polling(work, env);
        false
    }

    /// NAPI goes on polling after `work` completions: rings with arm = 0 once `4 × num`
    /// completions went by without a CQ doorbell (at least one per 8 wraps).
    #[inline(always)]
    pub fn keep_polling<E: Mmio + Barriers>(&mut self, work: u32, env: &E) {
        self.work_since_db = self.work_since_db.saturating_add(work);
        if self.work_since_db >= self.num.saturating_mul(4) {
            self.ring(false, env);
        }
    }
}

/// Most EQEs handled per interrupt (`mana_gd_process_eq_events`).
pub const EQ_EVENTS_PER_IRQ: u32 = 5;

/// Result of one interrupt's EQ processing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EqPoll {
    /// EQEs consumed.
    pub events: u32,
    /// Completion events among them.
    pub completions: u32,
    /// The EQ doorbell was rung (with arm = 1).
    pub rang: bool,
    /// An overflow was detected (nothing more was read).
    pub overflow: bool,
    /// Completion events naming a CQ that does not report to this EQ (counted in
    /// [`Eq::bad_cq`]; included in `completions`).
    pub bad_cq: u32,
}

/// Most CQs reporting to one EQ ([`Eq::expect_cqs`]): a channel's TX and RX CQs and the
/// CQs of its AF_XDP zero-copy SQ and RQ.
pub const EQ_MAX_CQS: usize = 4;

/// An event queue of 16-byte EQEs.
pub struct Eq<C: Coherent> {
    buf: C,
    id: u32,
    num: u32,
    /// log2 of `num` (see [`Cq`]).
    log2_num: u32,
    head: u32,
    db_offset: u32,
    /// Doorbell counts.
    pub stats: CqStats,
    /// EQEs of a type other than COMPLETION.
    pub unknown: u64,
    /// The CQ ids whose completion events this EQ expects ([`Eq::expect_cqs`]).
    cqs: [u32; EQ_MAX_CQS],
    /// How many of `cqs` are set.
    ncqs: usize,
    /// Completion events naming a CQ not in `cqs` (a corrupt EQE; the driver does not trust
    /// the device's ids).
    pub bad_cq: u64,
}

impl<C: Coherent> Eq<C> {
    /// An EQ of `num` entries (a power of two, 1..=2^24) with id `id` (16 bits) and its
    /// doorbell at BAR0 offset `db_offset`. Zeroes the entries.
    pub fn new(buf: C, id: u32, num: u32, db_offset: u32) -> Option<Self> {
        let log2_num = zeroed_ring(&buf, num, EQE_SIZE)?;
        Some(Self {
            buf,
            id: id & 0xffff,
            num,
            log2_num,
            head: num,
            db_offset,
            stats: CqStats::default(),
            unknown: 0,
            cqs: [0; EQ_MAX_CQS],
            ncqs: 0,
            bad_cq: 0,
        })
    }

    /// Sets the CQs that report to this EQ (ids as the device gave them, 24 bits); a
    /// completion event for any other id counts in [`Eq::bad_cq`]. `false` (nothing
    /// changed) for more than [`EQ_MAX_CQS`].
    pub fn expect_cqs(&mut self, ids: &[u32]) -> bool {
        let Some(dst) = self.cqs.get_mut(..ids.len()) else {
            return false;
        };
        for (d, id) in dst.iter_mut().zip(ids) {
            *d = id & 0x00ff_ffff;
        }
        self.ncqs = ids.len();
        true
    }

    /// Consumer counter (starts at `num`).
    pub fn head(&self) -> u32 {
        self.head
    }

    /// EQ id.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// Number of entries.
    pub fn num(&self) -> u32 {
        self.num
    }

    /// The EQE memory.
    pub fn buffer(&self) -> &C {
        &self.buf
    }

    /// Sets the id (16 bits) and doorbell offset the device gave after creation (the
    /// HWC's EQ learns them from its first init event, a MANA EQ from GDMA_CREATE_QUEUE).
    pub fn set_id(&mut self, id: u32, db_offset: u32) {
        self.id = id & 0xffff;
        self.db_offset = db_offset;
    }

    /// Rings the EQ doorbell with arm = 1 and `head mod (num << 3)`.
    pub fn arm<E: Mmio + Barriers>(&mut self, env: &E) {
        let tail = self.head & ((self.num << 3) - 1);
        ring64(env, self.db_offset, eq_doorbell(self.id, tail, true));
        self.stats.arms = self.stats.arms.wrapping_add(1);
    }

    /// Reads the EQE at `head` if it is valid and consumes it (`Ok(None)`: empty; `Err`: the
    /// owner bits say the device lapped the driver, nothing was consumed).
    pub fn next_event<B: Barriers>(&mut self, bar: &B) -> Result<Option<Eqe>, Overflow> {
        let e = read_entry::<EQE_SIZE, _, _>(
            &self.buf,
            &mut self.head,
            self.log2_num,
            &mut self.stats.overflows,
            bar,
        )?;
        Ok(e.map(|b| Eqe::decode(&b)))
    }

    /// Handles one interrupt (`mana_gd_process_eq_events`): up to [`EQ_EVENTS_PER_IRQ`]
    /// EQEs, each given to `on_event`. An empty first entry returns without ringing; after
    /// anything else (EQEs read, or an overflow, which ends the loop as upstream's `break`
    /// does) the EQ is rung with arm = 1, so an EQ that overflowed keeps interrupting.
    pub fn process_events<E: Mmio + Barriers>(
        &mut self,
        env: &E,
        mut on_event: impl FnMut(&Eqe),
    ) -> EqPoll {
        let mut r = EqPoll::default();
        while r.events < EQ_EVENTS_PER_IRQ {
            match self.next_event(env) {
                Ok(None) => {
                    if r.events == 0 {
                        return r;
                    }
                    break;
                }
                Err(Overflow) => {
                    r.overflow = true;
                    break;
                }
                Ok(Some(e)) => {
                    r.events += 1;
                    if e.eqe_type == EQE_COMPLETION {
                        r.completions += 1;
                    }
                    on_event(&e);
                }
            }
        }
        self.arm(env);
        r.rang = true;
        r
    }

    /// Handles one interrupt: [`Eq::process_events`] where `on_cq` gets the CQ id of every
    /// completion event for a CQ the EQ expects ([`Eq::expect_cqs`]); a completion event
    /// for another id counts in [`Eq::bad_cq`] and [`EqPoll::bad_cq`] (upstream mana drops
    /// it with a warning), other events in [`Eq::unknown`].
    pub fn process<E: Mmio + Barriers>(&mut self, env: &E, mut on_cq: impl FnMut(u32)) -> EqPoll {
        let mut unknown = 0u64;
        let mut bad = 0u32;
        let (cqs, ncqs) = (self.cqs, self.ncqs);
        let mut r = self.process_events(env, |e| {
            if e.eqe_type == EQE_COMPLETION {
                let id = e.details[0] & 0x00ff_ffff;
                if cqs.iter().take(ncqs).any(|&c| c == id) {
                    on_cq(id);
                } else {
                    bad += 1;
                }
            } else {
                unknown += 1;
            }
        });
        self.unknown = self.unknown.wrapping_add(unknown);
        self.bad_cq = self.bad_cq.wrapping_add(u64::from(bad));
        r.bad_cq = bad;
        r
    }
}
