// SPDX-License-Identifier: GPL-2.0

//! Event queues: completion EQEs for CQs that name an EQ, PORT_CHANGE EQEs, command
//! completion EQEs (events mode), page requests, EQ arming and overrun.
//!
//! **Event queues** (eq.c): CREATE_EQ gives a ring of 2^log_eq_size 64-byte EQEs, a UAR page,
//! an MSI-X vector `intr` < [`super::MAX_VECTORS`] (device vector `port * MAX_VECTORS + intr`) and
//! `event_bitmask[0]`; bit 9 (PORT_CHANGE) subscribes it to port events. The EQE for producer
//! index i goes to slot `i mod size` with `owner = (i >> log_eq_size) & 1`: the driver fills
//! every owner byte with 1 (init_eq_buf) and reads an EQE as its own when `(owner ^ (cc >>
//! log_eq_size)) & 1 == 0` (next_eqe_sw). UAR + 0x40 ([`super::EQ_ARM_DOORBELL`]) takes `eqn << 24 |
//! ci` and arms, UAR + 0x48 ([`super::EQ_CI_DOORBELL`]) only updates ci. An armed EQ raises its
//! vector once an EQE lies beyond ci, then disarms. An EQE that finds the ring full (producer
//! − ci = size) overruns the EQ: it is in error until destroyed and later EQEs are lost
//! ([`super::PortCounters::eq_overruns`], [`super::PortCounters::eqes_lost`]). A CQ made by CREATE_CQ
//! that fires (armed, a CQE beyond the armed ci) writes a completion EQE (type 0, `cqn` at
//! byte 0x38) to its EQ after the engine run, instead of raising a vector; the CQ arm
//! doorbell's `arm_sn` is recorded only (hardware uses it to drop a stale arm: the model
//! serves every arm request). A function's operational state is up when its administrative
//! state (PAOS, [`super::Device::set_link`]) and its peer's are up (in loopback: its own); after
//! INIT_HCA every change writes a PORT_CHANGE EQE (type 0x09, sub_type 4 ACTIVE / 1 DOWN,
//! port 1 in bits 7..4 of `data.port.port`) to each of the function's EQs that asked for it.

use super::cmd::oper_up;
use super::ifc::eqe;
use super::{make_qn, EqCtx, PortCounters, Tables, CQN_BASE, MAX_QUEUES, MAX_VECTORS};
use crate::hwif::hw::{BusMemory, InterruptSink};

/// Writes one EQE to EQ `slot` of port `p`; raises the EQ's vector if it is armed. Returns
/// whether the EQE was written.
fn post<M: BusMemory, I: InterruptSink>(
    t: &mut Tables<'_>,
    p: usize,
    slot: usize,
    mut e: [u8; eqe::SIZE],
    mem: &M,
    irq: &mut I,
) -> bool {
    let Some(pt) = t.ports.get_mut(p) else {
        return false;
    };
    let Some(row) = t.queues.get_mut(p * MAX_QUEUES + slot) else {
        return false;
    };
    let c: &mut PortCounters = &mut pt.counters;
    let lose = &mut pt.faults.drop_irqs;
    let eq = &mut row.eq;
    if !eq.used {
        return false;
    }
    if eq.error {
        c.eqes_lost += 1;
        return false;
    }
    let size = 1u32 << eq.log_size;
    if eq.pi.wrapping_sub(eq.ci) & 0xff_ffff >= size {
        // No room: as hardware, the EQ goes to error and gets nothing more.
        eq.error = true;
        c.eq_overruns += 1;
        c.eqes_lost += 1;
        return false;
    }
    let idx = eq.pi;
    // eq.c next_eqe_sw: software owns the EQE at index i when owner == (i >> log_size) & 1.
    e[eqe::OWNER] = ((idx >> eq.log_size) & 1) as u8;
    let addr = eq.buf.addr(
        t.pool,
        u64::from(idx & (size - 1)) * eqe::SIZE as u64,
        eqe::SIZE,
    );
    c.pcie.cqe_write();
    if addr.map_or(true, |a| mem.dma_write(a, &e).is_err()) {
        c.dma_faults += 1;
        eq.error = true;
        return false;
    }
    eq.pi = eq.pi.wrapping_add(1) & 0xff_ffff;
    c.eqes += 1;
    check_arm(eq, p, c, lose, irq);
    true
}

/// Whether EQ `slot` of port `p` exists and asked for the events `wants` picks.
fn subscribed(t: &Tables<'_>, p: usize, slot: usize, wants: fn(&EqCtx) -> bool) -> bool {
    t.queues
        .get(p * MAX_QUEUES + slot)
        .is_some_and(|r| r.eq.used && wants(&r.eq))
}

/// Writes EQE `e` to every EQ of port `p` that asked for its events ([`subscribed`]).
/// Returns how many were written.
fn broadcast<M: BusMemory, I: InterruptSink>(
    t: &mut Tables<'_>,
    p: usize,
    wants: fn(&EqCtx) -> bool,
    e: [u8; eqe::SIZE],
    mem: &M,
    irq: &mut I,
) -> u64 {
    let mut n = 0;
    for slot in 0..MAX_QUEUES {
        if subscribed(t, p, slot, wants) && post(t, p, slot, e, mem, irq) {
            n += 1;
        }
    }
    n
}

/// Raises an armed EQ's vector if EQEs lie beyond its consumer index, then disarms it.
/// While `lose` is not 0 (an injected fault), the interrupt is lost instead: the EQ
/// disarms as if it had fired, and nothing reaches the host.
fn check_arm<I: InterruptSink>(
    eq: &mut EqCtx,
    p: usize,
    c: &mut PortCounters,
    lose: &mut u32,
    irq: &mut I,
) {
    if eq.used && eq.armed && eq.pi & 0xff_ffff != eq.ci & 0xff_ffff {
        eq.armed = false;
        if *lose > 0 {
            *lose -= 1;
            c.faults_injected += 1;
            c.irqs_lost += 1;
            return;
        }
        c.interrupts += 1;
        c.pcie.msix();
        irq.raise((p as u32 * MAX_VECTORS + u32::from(eq.intr)) as u16);
    }
}

/// Completion EQEs owed by CQs that fired, then EQ arm requests (those of a stopped port
/// wait for the end of the stop).
pub(super) fn completions<M: BusMemory, I: InterruptSink>(
    t: &mut Tables<'_>,
    mem: &M,
    irq: &mut I,
) {
    for p in 0..t.ports.len() {
        let Some(pt) = t.ports.get(p) else {
            continue;
        };
        if (pt.eq_cqs == 0 && pt.eq_arm_pending == 0) || pt.stopped() {
            continue;
        }
        for slot in 0..MAX_QUEUES {
            let Some(r) = t.queues.get_mut(p * MAX_QUEUES + slot) else {
                break;
            };
            if !(r.cq.used && r.cq.eqe_owed) {
                continue;
            }
            r.cq.eqe_owed = false;
            let eq = usize::from(r.cq.eq).wrapping_sub(1);
            let mut e = [0u8; eqe::SIZE];
            e[eqe::TYPE] = eqe::TYPE_COMP;
            let cqn = make_qn(CQN_BASE, p, slot) & 0xff_ffff;
            e[eqe::COMP_CQN..eqe::COMP_CQN + 4].copy_from_slice(&cqn.to_be_bytes());
            post(t, p, eq, e, mem, irq);
        }
        let Some(pt) = t.ports.get_mut(p) else {
            continue;
        };
        let mut pending = core::mem::take(&mut pt.eq_arm_pending);
        while pending != 0 {
            let slot = pending.trailing_zeros() as usize;
            pending &= pending - 1;
            if let Some(r) = t.queues.get_mut(p * MAX_QUEUES + slot) {
                check_arm(
                    &mut r.eq,
                    p,
                    &mut pt.counters,
                    &mut pt.faults.drop_irqs,
                    irq,
                );
            }
        }
    }
}

/// PORT_CHANGE EQEs for every initialized function whose operational state changed since
/// the last report, to each of its EQs that asked for port events (a stopped port reports
/// after the stop).
pub(super) fn port_events<M: BusMemory, I: InterruptSink>(
    t: &mut Tables<'_>,
    mem: &M,
    irq: &mut I,
) {
    for p in 0..t.ports.len() {
        let up = oper_up(t.ports, p);
        let Some(pt) = t.ports.get_mut(p) else {
            continue;
        };
        if pt.func.hca != super::cmd::Hca::Initialized
            || pt.func.oper_reported == up
            || pt.stopped()
        {
            continue;
        }
        pt.func.oper_reported = up;
        pt.counters.port_events += 1;
        let mut e = [0u8; eqe::SIZE];
        e[eqe::TYPE] = eqe::TYPE_PORT_CHANGE;
        e[eqe::SUB_TYPE] = if up {
            eqe::SUBTYPE_ACTIVE
        } else {
            eqe::SUBTYPE_DOWN
        };
        // mlx5_eqe_port_state.port: the port number (1) in bits 7..4.
        e[eqe::PORT] = 1 << 4;
        broadcast(t, p, |eq| eq.port_events, e, mem, irq);
    }
}

/// Command completion EQEs (type `MLX5_EVENT_TYPE_CMD`, `data.cmd.vector` = the completed
/// entries' bits) for the entries each function completed that were rung while one of its
/// EQs asked for command events (mlx5_core's events mode, after its command EQ exists): to
/// each such EQ. The control path is alive through a data-path stop, so are these.
pub(super) fn cmd_events<M: BusMemory, I: InterruptSink>(t: &mut Tables<'_>, mem: &M, irq: &mut I) {
    for p in 0..t.ports.len() {
        let done = match t.ports.get_mut(p) {
            Some(pt) => core::mem::take(&mut pt.func.cmd_done_events),
            None => continue,
        };
        if done == 0 {
            continue;
        }
        let mut e = [0u8; eqe::SIZE];
        e[eqe::TYPE] = eqe::TYPE_CMD;
        e[eqe::CMD_VECTOR..eqe::CMD_VECTOR + 4].copy_from_slice(&done.to_be_bytes());
        let n = broadcast(t, p, |eq| eq.cmd_events, e, mem, irq);
        if let Some(pt) = t.ports.get_mut(p) {
            pt.counters.cmd_eqes += n;
        }
    }
}

/// Page requests (type `MLX5_EVENT_TYPE_PAGE_REQUEST`, `data.req_pages`: function 0, the
/// pages wanted) of every function that wants pages it has not asked for yet, to its EQs
/// that asked for page requests ([`super::cmd::Func::page_request`]).
pub(super) fn page_requests<M: BusMemory, I: InterruptSink>(
    t: &mut Tables<'_>,
    mem: &M,
    irq: &mut I,
) {
    use super::ifc::pages;
    for p in 0..t.ports.len() {
        if !(0..MAX_QUEUES).any(|slot| subscribed(t, p, slot, |eq| eq.page_events)) {
            continue;
        }
        let want = match t.ports.get_mut(p) {
            Some(pt) => pt.func.page_request(),
            None => continue,
        };
        let Some(n) = want else {
            continue;
        };
        let mut e = [0u8; eqe::SIZE];
        e[eqe::TYPE] = eqe::TYPE_PAGE_REQUEST;
        // func_id 0: the function itself (what QUERY_PAGES reports).
        e[pages::EQE_NUM_PAGES..pages::EQE_NUM_PAGES + 4].copy_from_slice(&n.to_be_bytes());
        broadcast(t, p, |eq| eq.page_events, e, mem, irq);
    }
}
