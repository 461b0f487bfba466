// SPDX-License-Identifier: GPL-2.0

//! The engine's CQ and EQ side, the device's half of the driver's `hwif/mana/cq.rs`: CQE and
//! EQE slots with their owner bits, arm requests, completion EQEs and the interrupt of an
//! armed EQ, fence CQEs. Spec D.5 (rsnic-hardware.rst; gdma.h `gdma_cqe`, `gdma_eqe`,
//! gdma_main.c `mana_gd_ring_cq`, `mana_gd_process_eq_events`).

use super::{
    row, Bus, Port, QueueSet, BAD_CQ_ID, BAD_OWNER_XOR, CLIENT_COMPLETION, CQ_ID_BASE,
    EQE_COMPLETION, MAX_QUEUES, RX_OBJECT_FENCE,
};
use crate::hwif::bytes::put_le32;
use crate::hwif::hw::{BusMemory, DmaAddr, InterruptSink};
use crate::sim::mana::queues::EqCtx;

/// Evaluates CQ and EQ arm requests: an event fires at once if entries are pending past the
/// armed tail. A stopped port's requests wait for the end of the stop.
pub(super) fn check_arms<M: BusMemory, I: InterruptSink>(
    ports: &mut [Port],
    queues: &mut [QueueSet],
    bus: &mut Bus<'_, M, I>,
) {
    for p in 0..ports.len() {
        let Some(pt) = ports.get_mut(p).filter(|pt| !pt.stopped()) else {
            continue;
        };
        let mut cqs = core::mem::take(&mut pt.cq_arm);
        let mut eqs = core::mem::take(&mut pt.eq_arm);
        while cqs != 0 {
            let s = cqs.trailing_zeros() as usize;
            cqs &= cqs - 1;
            let pending = row(queues, p, s).is_some_and(|r| {
                let c = &r.cq;
                c.used && c.armed && (c.num.wrapping_add(c.pi) & ((c.num << 3) - 1)) != c.arm_tail
            });
            if pending {
                cq_event(pt, queues, p, s, bus);
            }
        }
        while eqs != 0 {
            let s = eqs.trailing_zeros() as usize;
            eqs &= eqs - 1;
            let Some(r) = row(queues, p, s) else {
                continue;
            };
            let e = &mut r.eq;
            if e.used && e.armed && (e.num.wrapping_add(e.pi) & ((e.num << 3) - 1)) != e.arm_tail {
                e.armed = false;
                let v = e.vector;
                fire(pt, v, bus);
            }
        }
    }
}

/// An armed CQ has a new CQE: disarm it and post an EQE to its EQ.
fn cq_event<M: BusMemory, I: InterruptSink>(
    pt: &mut Port,
    queues: &mut [QueueSet],
    p: usize,
    s: usize,
    bus: &mut Bus<'_, M, I>,
) {
    let Some(r) = row(queues, p, s) else {
        return;
    };
    r.cq.armed = false;
    let Some(e) = r.cq.eq else {
        return;
    };
    let mut cq_id = CQ_ID_BASE + (p * MAX_QUEUES + s) as u32;
    if core::mem::take(&mut pt.faults.eqe_bad_cq) {
        pt.counters.faults_injected += 1;
        cq_id = BAD_CQ_ID;
    }
    let Some(r) = queues.get_mut(usize::from(e)) else {
        return;
    };
    if write_eqe(pt, &mut r.eq, [cq_id, 0, 0], EQE_COMPLETION, bus.mem) {
        let v = r.eq.vector;
        fire(pt, v, bus);
    }
}

/// Where the entry at producer index `pi` of a ring of `num` (a power of two) entries of
/// `size` bytes at `buf` goes, and the owner bits it carries: the pass count + 1, mod 8 (spec
/// D.5). What the channel CQs and EQs and the HWC's share.
pub(in crate::sim::mana) fn slot(buf: DmaAddr, pi: u32, num: u32, size: u64) -> (DmaAddr, u32) {
    let idx = pi & (num - 1);
    let owner = ((pi / num).wrapping_add(1)) & 7;
    (buf.wrapping_add(u64::from(idx) * size), owner)
}

/// The 16 bytes of an EQE (`gdma_eqe`): the words `details`, then type `ty` (8 bits) and
/// the `owner` bits (29..31) in the last dword.
pub(in crate::sim::mana) fn eqe(details: [u32; 3], ty: u32, owner: u32) -> [u8; 16] {
    let mut b = [0u8; 16];
    put_le32(&mut b, 0, details[0]);
    put_le32(&mut b, 4, details[1]);
    put_le32(&mut b, 8, details[2]);
    put_le32(&mut b, 12, (ty & 0xff) | (owner << 29));
    b
}

/// Writes an EQE of type `ty` with the words `details` to `eq` (counted on `pt`). Returns
/// true if the EQ was armed: it is disarmed now, and the caller raises its vector.
fn write_eqe<M: BusMemory>(
    pt: &mut Port,
    eq: &mut EqCtx,
    details: [u32; 3],
    ty: u32,
    mem: &M,
) -> bool {
    if !eq.used {
        return false;
    }
    let (addr, owner) = slot(eq.buf, eq.pi, eq.num, 16);
    let b = eqe(details, ty, owner);
    pt.counters.pcie.dma_write(addr, 16);
    if mem.dma_write(addr, &b).is_err() {
        pt.counters.dma_faults += 1;
        return false;
    }
    eq.pi = eq.pi.wrapping_add(1);
    pt.counters.eqes += 1;
    core::mem::take(&mut eq.armed)
}

/// Raises the MSI-X `vector` of a channel EQ that fired (the caller disarmed it), unless an
/// injected fault ([`crate::sim::mana::Fault::DropIrqs`]) loses the interrupt.
fn fire<M: BusMemory, I: InterruptSink>(pt: &mut Port, vector: u16, bus: &mut Bus<'_, M, I>) {
    if pt.faults.drop_irqs > 0 {
        pt.faults.drop_irqs -= 1;
        pt.counters.faults_injected += 1;
        pt.counters.irqs_lost += 1;
        return;
    }
    pt.counters.pcie.msix();
    pt.counters.interrupts += 1;
    bus.irq.raise(vector);
}

/// Writes an EQE of type `ty` to the EQ in global row `g` (counted on port `p`) and raises
/// its vector if it is armed (the control path's GDMA_EQE_TEST_EVENT).
#[allow(clippy::too_many_arguments)]
pub(in crate::sim::mana) fn eqe_to<M: BusMemory, I: InterruptSink>(
    ports: &mut [Port],
    queues: &mut [QueueSet],
    p: usize,
    g: usize,
    details: [u32; 3],
    ty: u32,
    mem: &M,
    irq: &mut I,
) {
    let (Some(pt), Some(r)) = (ports.get_mut(p), queues.get_mut(g)) else {
        return;
    };
    if write_eqe(pt, &mut r.eq, details, ty, mem) {
        pt.counters.pcie.msix();
        pt.counters.interrupts += 1;
        irq.raise(r.eq.vector);
    }
}

/// Writes an RX_OBJECT_FENCE CQE for RQ `rq_id` to CQ slot `c` of port `p` (MANA_FENCE_RQ).
pub(in crate::sim::mana) fn rx_fence_cqe<M: BusMemory, I: InterruptSink>(
    ports: &mut [Port],
    queues: &mut [QueueSet],
    p: usize,
    c: usize,
    rq_id: u32,
    mem: &M,
    irq: &mut I,
) {
    let mut d = [0u8; 60];
    put_le32(
        &mut d,
        0,
        u32::from(RX_OBJECT_FENCE) | (CLIENT_COMPLETION << 6),
    );
    let Some(pt) = ports.get_mut(p) else {
        return;
    };
    let mut bus = Bus { mem, irq };
    write_cqe(pt, queues, p, c, &d, rq_id, false, &mut bus);
}

#[allow(clippy::too_many_arguments)]
/// Writes one CQE to CQ slot `c` of port `p`, then fires the CQ's event if it is armed. A
/// stopped port writes nothing.
pub(super) fn write_cqe<M: BusMemory, I: InterruptSink>(
    pt: &mut Port,
    queues: &mut [QueueSet],
    p: usize,
    c: usize,
    data: &[u8; 60],
    wq_num: u32,
    is_sq: bool,
    bus: &mut Bus<'_, M, I>,
) {
    if pt.stopped() {
        pt.stop_hit();
        return;
    }
    let Some(r) = row(queues, p, c) else {
        return;
    };
    let cq = &mut r.cq;
    if !cq.used {
        return;
    }
    let (addr, mut owner) = slot(cq.buf, cq.pi, cq.num, 64);
    // A corrupt TX CQE (injected): the owner count four passes away, neither this pass's
    // nor the next one's nor the previous one's, which the driver reads as an overflow.
    let bad_owner = is_sq && pt.faults.tx_bad_owner;
    if bad_owner {
        owner ^= BAD_OWNER_XOR;
    }
    let mut b = [0u8; 64];
    b[..60].copy_from_slice(data);
    put_le32(
        &mut b,
        60,
        (wq_num & 0x00ff_ffff) | (u32::from(is_sq) << 24) | (owner << 29),
    );
    pt.counters.pcie.cqe_write();
    if bus.mem.dma_write(addr, &b).is_err() {
        pt.counters.dma_faults += 1;
        return;
    }
    if bad_owner {
        pt.faults.tx_bad_owner = false;
        pt.counters.faults_injected += 1;
    }
    cq.pi = cq.pi.wrapping_add(1);
    cq.since_db = cq.since_db.saturating_add(1);
    if cq.since_db == cq.num.saturating_mul(8).saturating_add(1) {
        pt.counters.cq_db_overdue += 1;
    }
    if cq.armed {
        cq_event(pt, queues, p, c, bus);
    }
}
