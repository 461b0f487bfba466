// SPDX-License-Identifier: GPL-2.0

//! The engine's CQ side, the device's half of the driver's `hwif/mlx5/cq.rs` and `cqe.rs`:
//! CQE slots and owner bits, CQE compression sessions (title and mini CQE arrays), CQ
//! moderation and arming, the interrupt or completion EQE of a CQ that fires. Spec part C
//! (rsnic-hardware.rst; device.h `mlx5_cqe64`, `mlx5_mini_cqe8`, en_rx.c's decompression,
//! cq.c and en/dim.c for moderation).

use super::{put, read_dbr, CqCtx, Io, PortCounters, MAX_SESSION};
use crate::hwif::bytes::be16;
use crate::hwif::hw::{BusMemory, InterruptSink};
use crate::sim::mlx5::consts::*;

/// Reserves the next CQ index, checking room against set_ci. None: overrun (the CQ is now
/// in error) or the CQ was already in error.
fn reserve<M: BusMemory, I: InterruptSink>(
    cq: &mut CqCtx,
    counters: &mut PortCounters,
    io: &mut Io<'_, M, I>,
) -> Option<u32> {
    let size = 1u32 << cq.log_size;
    if cq.pi.wrapping_sub(cq.ci) & 0xff_ffff >= size {
        if let Some(v) = read_dbr(counters, cq.dbr, io.mem) {
            cq.ci = v & 0xff_ffff;
        }
        if cq.pi.wrapping_sub(cq.ci) & 0xff_ffff >= size {
            counters.cq_overruns += 1;
            flush_session(cq, counters, io);
            cq.error = true;
            return None;
        }
    }
    let idx = cq.pi;
    cq.pi = cq.pi.wrapping_add(1);
    Some(idx)
}

/// Writes 64 bytes to CQ index `idx`.
fn write_slot<M: BusMemory>(
    cq: &mut CqCtx,
    idx: u32,
    bytes: &[u8; 64],
    counters: &mut PortCounters,
    pool: &[u8],
    mem: &M,
) {
    let mask = (1u32 << cq.log_size) - 1;
    let addr = cq.buf.addr(pool, u64::from(idx & mask) * 64, 64);
    counters.pcie.cqe_write();
    counters.cq_slot_writes += 1;
    if addr.map_or(true, |a| mem.dma_write(a, bytes).is_err()) {
        counters.dma_faults += 1;
        cq.error = true;
    }
}

pub(super) fn owner(cq: &CqCtx, idx: u32) -> u8 {
    ((idx >> cq.log_size) & 1) as u8
}

/// All fields a basic-compression title carries for every CQE of the session.
fn same_common(a: &[u8; 64], b: &[u8; 64]) -> bool {
    a[..12] == b[..12]
        && a[17..20] == b[17..20]
        && a[22..44] == b[22..44]
        && a[48..60] == b[48..60]
        && a[62] == b[62]
        && a[63] >> 4 == b[63] >> 4
}

/// Writes a CQE, or adds an RX CQE (`rq` = its RQ slot) to a compression session.
/// `bad_owner`: a plain CQE written with the owner bit of the previous pass (an injected
/// corrupt CQE). Returns whether the CQE was written (or joined a session): false when it
/// was lost (the CQ in error or overrun).
pub(super) fn post_cqe<M: BusMemory, I: InterruptSink>(
    cq: &mut CqCtx,
    counters: &mut PortCounters,
    cqe: &[u8; 64],
    rq: Option<u8>,
    bad_owner: bool,
    io: &mut Io<'_, M, I>,
) -> bool {
    if !cq.used || cq.error {
        counters.cqes_lost += 1;
        return false;
    }
    if let (Some(rq), true) = (rq, cq.compress && cqe[63] >> 4 == CQE_RESP_SEND) {
        let wc = be16(cqe, 60);
        let s = &cq.sess;
        let joins = s.n > 0
            && s.n < MAX_SESSION
            && s.rq == rq
            && s.last_wc.wrapping_add(1) == wc
            && same_common(&s.title, cqe);
        if !joins && cq.sess.n > 0 {
            flush_session(cq, counters, io);
        }
        let Some(idx) = reserve(cq, counters, io) else {
            counters.cqes_lost += 1;
            return false;
        };
        if !joins {
            cq.sess.n = 0;
            cq.sess.start = idx;
            cq.sess.rq = rq;
            cq.sess.title = *cqe;
            cq.sess.arr = [0; 64];
        }
        add_mini(cq, counters, io.pool, io.mem, cqe);
        return true;
    }
    if cq.sess.n > 0 {
        flush_session(cq, counters, io);
    }
    let Some(idx) = reserve(cq, counters, io) else {
        counters.cqes_lost += 1;
        return false;
    };
    let mut c = *cqe;
    c[63] = (c[63] & 0xfe) | (owner(cq, idx) ^ u8::from(bad_owner));
    write_slot(cq, idx, &c, counters, io.pool, io.mem);
    cqe_visible(cq, io.now);
    check_arm(cq, counters, io);
    true
}

/// CQ index of mini-CQE array `j` of a session whose title is at `start`.
fn array_slot(start: u32, j: u32) -> u32 {
    start.wrapping_add(if j == 0 { 1 } else { 8 * j })
}

fn add_mini<M: BusMemory>(
    cq: &mut CqCtx,
    counters: &mut PortCounters,
    pool: &[u8],
    mem: &M,
    cqe: &[u8; 64],
) {
    let k = cq.sess.n;
    let pos = (k % 8) as usize * 8;
    let mut mini = [0u8; 8];
    mini[..2].copy_from_slice(&cqe[20..22]); // check_sum
    mini[4..].copy_from_slice(&cqe[44..48]); // byte_cnt
    put(&mut cq.sess.arr, pos, &mini);
    cq.sess.n = k + 1;
    cq.sess.last_wc = be16(cqe, 60);
    if k % 8 == 7 {
        let arr = cq.sess.arr;
        write_slot(
            cq,
            array_slot(cq.sess.start, k / 8),
            &arr,
            counters,
            pool,
            mem,
        );
        cq.sess.arr = [0; 64];
    }
}

/// Writes an open session: the last partial mini array, then the title (or a plain CQE for a
/// session of one), then evaluates arming.
pub(super) fn flush_session<M: BusMemory, I: InterruptSink>(
    cq: &mut CqCtx,
    counters: &mut PortCounters,
    io: &mut Io<'_, M, I>,
) {
    let n = cq.sess.n;
    if n == 0 {
        return;
    }
    let start = cq.sess.start;
    let mut title = cq.sess.title;
    if n >= 2 {
        if (n - 1) % 8 != 7 {
            let arr = cq.sess.arr;
            write_slot(
                cq,
                array_slot(start, (n - 1) / 8),
                &arr,
                counters,
                io.pool,
                io.mem,
            );
        }
        put(&mut title, 44, &n.to_be_bytes());
        title[63] = (title[63] & 0xf0) | (CQE_FORMAT_COMPRESSED << 2);
        counters.compress_sessions += 1;
        counters.compressed_cqes += u64::from(n);
    }
    title[63] = (title[63] & 0xfe) | owner(cq, start);
    cq.sess.n = 0;
    write_slot(cq, start, &title, counters, io.pool, io.mem);
    cqe_visible(cq, io.now);
    check_arm(cq, counters, io);
}

/// A CQE became visible: a CQ moderated in CQE mode restarts its timer.
#[inline]
fn cqe_visible(cq: &mut CqCtx, now: u64) {
    if cq.moder.period != 0 && cq.moder.cqe_mode {
        cq.moder.start = now;
    }
}

/// Fires an armed CQ whose CQEs are visible beyond the armed consumer index, then disarms
/// it: a CQ that names an EQ owes it a completion EQE (written after the engine run, see
/// `eq::completions`); one made through the Rust API raises its vector directly. A
/// moderated CQ fires only once moderation lets it ([`crate::sim::mlx5::Moder::due`]); until then it
/// stays armed and held, and the engine looks at it again on every run.
pub(super) fn check_arm<M, I: InterruptSink>(
    cq: &mut CqCtx,
    counters: &mut PortCounters,
    io: &mut Io<'_, M, I>,
) {
    let was_held = core::mem::take(&mut cq.moder.held);
    let pending = cq.visible_pi().wrapping_sub(cq.arm_ci) & 0xff_ffff;
    if cq.used && cq.armed && pending != 0 {
        if cq.moder.period != 0 {
            if !cq.moder.due(pending, io.now) {
                cq.moder.held = true;
                return;
            }
            if was_held
                && io.now >= cq.moder.deadline()
                && (cq.moder.max_count == 0 || pending < u32::from(cq.moder.max_count))
            {
                counters.cq_timer_events += 1;
            }
            if !cq.moder.cqe_mode {
                // Event mode: the timer restarts with the event.
                cq.moder.start = io.now;
            }
        }
        cq.armed = false;
        counters.cq_events += 1;
        if cq.eq != 0 {
            cq.eqe_owed = true;
            return;
        }
        counters.interrupts += 1;
        counters.pcie.msix();
        io.irq.raise(cq.vector);
    }
}
