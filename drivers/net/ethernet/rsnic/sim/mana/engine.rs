// SPDX-License-Identifier: GPL-2.0

//! The asynchronous part of the MANA model: SQ execution, delivery, RX, CQEs, EQEs and
//! interrupts, by these rules:
//!
//! A register write only latches state (SQ/RQ tail, arm request); the engine does the work, as the
//! hardware does asynchronously. [`super::Device::process`] runs until no SQ that is not paused (or
//! held by [`super::Fault::TxStall`] or [`super::Fault::DevStop`]) has work;
//! [`super::Device::process_budget`] executes at most a budget of TX WQEs and says whether work is
//! left (for a caller that runs the model on a workqueue and yields between runs). Each run first
//! evaluates the latched CQ/EQ arm requests (also with a budget of 0). SQs with work are served
//! round robin in the order (port, slot), [`super::SQ_BURST`] WQEs at a time; the position,
//! including the part of a burst already used, persists across runs, so a series of budgeted runs
//! executes the WQEs in the same order, and writes the same CQEs, EQEs, interrupts and counters, as
//! one unbudgeted run.
//!
//! **Flow control** (802.3x global pause per port and direction: RX pause "honour PAUSE", TX pause
//! "send PAUSE"; both off after creation, [`super::Device::set_pause`] sets both,
//! [`super::Device::set_pause_rx_tx`] and RSNIC_SET_PAUSE each). A model of PAUSE frames sent by a
//! receiver short of buffers, as in [`crate::sim::mlx5`]: for a port p with a receiver for its
//! frames (the peer with both links up, or p itself in loopback whatever the links), before each TX
//! WQE of p the device checks every usable RQ (created, not in error) in the receiver's RSS table;
//! if one has fewer than `min(`[`super::PAUSE_THRESHOLD`]`, wqes / 2)` posted WQEs and the
//! receiver's TX pause is on, the receiver sends p a PAUSE frame, counted in the receiver's
//! [`super::PortCounters::tx_pause_frames`] and p's [`super::PortCounters::rx_pause_frames`]. p
//! honours it if its RX pause is on: the SQ does not execute the WQE, pauses and counts
//! [`super::PortCounters::tx_pause`]; otherwise the frame goes out and the receiver drops what it
//! has no WQE for. A PAUSE covers p until the next register write (a pause quantum): a receiver
//! sends at most one to each sender between two register writes, and none once it has room. Posted
//! WQEs are `(tail_ptr − consumer offset) / 32` and `wqes` is the ring size / 32, i.e. WQEs are
//! counted as 1-BU WQEs (the driver's 1-SGE RX WQEs; larger WQEs make the count optimistic). Since
//! RX doorbells carry only `tail_ptr` (`wqe_cnt` = 0), the device learns of re-posted WQEs only at
//! a doorbell: a paused SQ stays paused, and the engine reports no work for it, until the next
//! register write (or [`super::Device::set_pause`], [`super::Device::set_link`],
//! [`super::Device::set_loopback`], [`super::Device::set_rss`], [`super::Device::destroy_rq`]); the
//! run after it retries the SQ. A looping port that pauses on itself cannot deadlock: its receive
//! side never waits for its transmit side, and the RQ doorbell of the driver's refill ends the
//! pause. The check is per WQE: a TSO WQE whose segments outnumber the posted WQEs still overruns
//! the RQ. Stall prevention is the receiver's: after [`super::PAUSE_STORM`] PAUSE frames in a row
//! (a receiver that stopped posting, such as an AF_XDP socket whose fill ring stays empty) it stops
//! sending them until it has room again, counted in its [`super::PortCounters::tx_pause_storms`];
//! what it has no WQE for is then dropped (`hc_rx_discards_no_wqe`). With the receiver's TX pause
//! or the sender's RX pause off, a link down or an empty receiver RSS table, nothing pauses and
//! packets are dropped and counted as described here.
//!
//! **SQ.** After a doorbell, WQEs from the device's consumer offset to `tail_ptr` are executed in
//! order. The device reads the first BU (header and inline OOB), then the rest of the WQE (the SGL
//! wraps to the ring start). Structural checks: `num_sge` 1..=30, inline OOB 8 or 24 bytes, WQE ≤
//! 512 bytes and fully posted. A structural failure leaves the device unable to find the next WQE:
//! it writes one error CQE (HDR_PROCESSING_ERROR, `vendor_err` = [`super::WqeError`] code), counts
//! `hc_tx_err_gdma` and puts the SQ in error (it stops). Every other failure gets an error CQE for
//! that WQE and the SQ goes on: OOB checks (`pkt_fmt` matching the OOB size, `vcq_num` = the SQ's
//! CQ, `suppress_txcqe_gen` = 0, OOB_IN_SGL with ≥ 2 SGEs) → INVALID_OOB (`hc_tx_err_inval_oob`);
//! an SGE of size 0, under a `mem_key` other than the device's ([`super::MANA_MKEY`],
//! REGISTER_DEVICE's `gpa_mkey`; counted in [`super::PortCounters::mkey_errors`]) or at an
//! unreadable address → HDR_PROCESSING_ERROR (`hc_tx_err_gdma`); a frame shorter than 14 bytes or
//! checksum/TSO requests that do not match the parsed headers → HDR_PROCESSING_ERROR; a frame (or
//! TSO segment) longer than [`super::MAX_FRAME`] → MTU_DROP (`hc_tx_err_mtu_violation`).
//!
//! Offloads: `comp_tcp_csum` / `comp_udp_csum` fill the TCP/UDP checksum (for TCP the
//! parsed header must be at `trans_off`; for UDP the device finds the header itself and
//! ignores `trans_off`, which upstream mana leaves 0 there), `comp_iphdr_csum` the IPv4
//! header checksum. TSO
//! (`client_data_unit` = MSS ≠ 0 with `client_oob_in_sgl`): SGE0 must hold exactly the
//! Ethernet/IP/TCP headers (`last_vbytes` = SGE0's size), the payload is cut into MSS pieces
//! and each segment's lengths, IPv4 ID, sequence number, flags and checksums are fixed
//! ([`crate::sim::pkt::fix_segment`]). The long OOB's `inject_vlan_pri_tag` inserts an 802.1Q
//! tag (pcp, dei, vlan_id) after the MACs. Frames are zero-padded to 60 bytes on the wire.
//! Every WQE gets exactly one TX CQE (TX_OKAY or the error type; `tx_wqe_offset` = the
//! WQE's BU index in the ring, `wq_num` = SQ id, `is_sq` = 1).
//!
//! **RX.** The receiving port (the peer, or the sender in loopback) picks an RQ with RSS. The
//! chosen RQ must have a posted WQE (consumer offset ≠ the last `tail_ptr`), else the packet is
//! dropped and counted in **`hc_rx_discards_no_wqe`**. The WQE (1..=15 SGEs, inline OOB 0 or 8
//! bytes, ≤ 256 bytes) is read, the packet scattered over its SGEs and an RX CQE written: RX_OKAY
//! with `ppi[0].pkt_len`, `pkt_hash`, the NDIS hash type (bits: IPv4 0, TCP/IPv4 1, UDP/IPv4 2,
//! IPv6 3, TCP/IPv6 4, UDP/IPv6 5 — the model's assignment), IP/TCP/UDP checksum ok/fail as
//! verified (an IPv6 header, which has no checksum, reports IP ok), `rx_wqe_offset` = the WQE's
//! byte offset; an outer 802.1Q tag (TPID 0x8100) is stripped (the host gets the frame without it,
//! `pkt_len` 4 less) and its VLAN id reported (`rx_vlantag_present`, `rx_vlan_id`), as mana's fixed
//! NETIF_F_HW_VLAN_CTAG_RX and mana_rx_skb say the hardware does (the byte counters count the frame
//! as it came); or RX_TRUNCATED when the SGEs are too small or one is under another key than
//! [`super::MANA_MKEY`] (nothing is written; the WQE is consumed). A malformed RX WQE drops the
//! packet, counts `rx_wqe_errors` and puts the RQ in error (no CQE: the device cannot trust the
//! WQE's size).
//!
//! **CQ/EQ.** The CQE with 0-based producer index `i` goes to slot `i mod num` with owner
//! bits `(i / num + 1) & 7` (consumers start at `head = num`, so zeroed memory is empty). The
//! device does not check CQ room (the driver sizes CQs for one CQE per WQE), but counts
//! [`super::PortCounters::cq_db_overdue`] when more than 8 × num CQEs are written without a CQ
//! doorbell (the hardware's "one CQ doorbell per 8 wraps"). A CQ doorbell with arm = 1 arms
//! it; an armed CQ posts one EQE (type COMPLETION, `details[0]` = CQ id) to its EQ as soon as
//! its producer index differs from the armed `tail_ptr` (a new CQE, or CQEs already pending),
//! then disarms. EQEs use the same owner rule; an armed EQ raises its MSI-X vector for the
//! next EQE (or at arm time if EQEs are pending) and disarms.
//!
//! **Faults** ([`super::Device::inject`], for tests of the driver): an error CQE of a chosen type
//! for the next TX WQE (the packet is not sent, the SQ goes on), RX_TRUNCATED for the next received
//! frame, lost interrupts (the EQ disarms, the vector is not raised) and a completion EQE naming a
//! CQ id no CQ has ([`super::BAD_CQ_ID`]), a fault on the next read of packet data (the WQE
//! completes with HDR_PROCESSING_ERROR), a TX or RX CQE naming a WQ id no WQ has
//! ([`super::BAD_WQ_ID`]), a TX CQE with owner bits four passes off ([`super::BAD_OWNER_XOR`]: the
//! driver reads a CQ overflow). Each applies once and counts in
//! [`super::PortCounters::faults_injected`] when it takes effect. Two last until the driver
//! destroys a WQ object of the port (an SQ for the first; MANA has no queue reset, its driver
//! re-creates the queues): a hung transmit engine ([`super::Fault::TxStall`]: SQ doorbells are
//! accepted, nothing is executed) and a hung data path ([`super::Fault::DevStop`]: nothing
//! executed, frames arriving dropped and counted in [`super::PortCounters::rx_stopped`], no CQE, no
//! EQE, no interrupt for the port's queues, while the HWC goes on answering).
//! [`super::Device::fail_request`] makes every request of a type fail with
//! [`super::STATUS_INTERNAL_ERROR`] until it is called with `None`.
//!
//! **PCIe accounting** ([`crate::sim::pcie`], per port): doorbells inbound (8 B each); WQE and
//! packet-data reads as DMA reads; received data as DMA writes; CQEs as 64-byte writes; EQEs
//! as 16-byte DMA writes; MSI-X as 4-byte writes. [`super::PortCounters::tx_floor_in_bytes`] sums
//! [`crate::sim::pcie::inbound_floor`] over the host bytes of every sent packet.

use super::{Cursor, Port, PortCounters, QueueSet, WqCtx, WqeError};
use super::{BAD_CQ_ID, BAD_OWNER_XOR, BAD_WQ_ID, MANA_MKEY, SQ_BURST, SQ_ID_BASE};
use super::{CQ_ID_BASE, MAX_FRAME, MAX_QUEUES, MAX_RSS, RQ_ID_BASE};
use crate::dp::bytes::{le32, put_le32};
use crate::dp::hw::{BusMemory, InterruptSink};
use crate::sim::pcie::inbound_floor;
use crate::sim::pkt::{self, L3, L4};
use crate::sim::wire;

/// The device's view of the outside world plus its scratch memory.
pub(super) struct Io<'a, M, I> {
    pub(super) mem: &'a M,
    pub(super) irq: &'a mut I,
    pub(super) frame: &'a mut [u8],
    pub(super) gather: &'a mut [u8],
}

struct Bus<'a, M, I> {
    mem: &'a M,
    irq: &'a mut I,
}

const TX_OKAY: u8 = 32;
const RX_OKAY: u8 = 1;
const RX_TRUNCATED: u8 = 4;
const RX_OBJECT_FENCE: u8 = 3;
const CLIENT_COMPLETION: u32 = 1;
const EQE_COMPLETION: u32 = 3;
const MAX_SQE: u32 = 512;
const MAX_RQE: u32 = 256;
/// Bytes of a basic unit (the size of a 1-BU WQE).
const BU: u32 = 32;

fn row(queues: &mut [QueueSet], p: usize, s: usize) -> Option<&mut QueueSet> {
    if s >= MAX_QUEUES {
        return None;
    }
    queues.get_mut(p * MAX_QUEUES + s)
}

/// Runs the SQs with work, round robin from the cursor, until none is ready or `budget` WQEs
/// were executed. Returns (TX WQEs executed, whether an SQ that may execute has work; see
/// [`runnable`]).
pub(super) fn run<M: BusMemory, I: InterruptSink>(
    ports: &mut [Port],
    queues: &mut [QueueSet],
    rr: &mut Cursor,
    io: &mut Io<'_, M, I>,
    budget: usize,
) -> (usize, bool) {
    let mut bus = Bus {
        mem: io.mem,
        irq: &mut *io.irq,
    };
    // Arm requests latched by doorbells: entries may already be pending.
    check_arms(ports, queues, &mut bus);
    // A stopped port holding posted WQEs back: the fault took effect.
    for pt in ports.iter_mut() {
        if pt.stopped() && pt.sq_work != 0 {
            pt.stop_hit();
        }
    }
    let total = ports.len() * MAX_QUEUES;
    let mut done = 0usize;
    while done < budget {
        let Some(i) = next_ready(ports, rr.next) else {
            break;
        };
        if i != rr.next {
            rr.next = i;
            rr.used = 0;
        }
        let (p, s) = (i / MAX_QUEUES, i % MAX_QUEUES);
        let limit = SQ_BURST.saturating_sub(rr.used).min(budget - done);
        let n = serve_sq(ports, queues, p, s, limit, &mut bus, io.frame, io.gather);
        done += n;
        rr.used += n;
        // Every pass either executes a WQE or takes the SQ out of the ready set (its work
        // bit cleared or its pause bit set), so the loop ends.
        if !ready(ports, p, s) || rr.used >= SQ_BURST {
            rr.next = (i + 1) % total.max(1);
            rr.used = 0;
        }
    }
    // Paused SQs wait for the next register write, not for a busy loop; those of a stalled
    // or stopped port for the end of the fault.
    let more = ports.iter().any(|pt| runnable(pt) != 0);
    (done, more)
}

/// The SQ slots of a port that may execute: with work, not paused, the port neither stalled
/// ([`crate::sim::mana::Fault::TxStall`]) nor stopped ([`crate::sim::mana::Fault::DevStop`]).
fn runnable(pt: &Port) -> u32 {
    if pt.faults.tx_stall || pt.stopped() {
        0
    } else {
        pt.sq_work & !pt.sq_paused
    }
}

/// Whether SQ slot `s` of port `p` may execute (see [`runnable`]).
fn ready(ports: &[Port], p: usize, s: usize) -> bool {
    ports
        .get(p)
        .is_some_and(|pt| runnable(pt) >> (s % MAX_QUEUES) & 1 != 0)
}

/// The first ready SQ at global index `from` (`port * MAX_QUEUES + slot`) or after it,
/// wrapping around once.
fn next_ready(ports: &[Port], from: usize) -> Option<usize> {
    let n = ports.len();
    if n == 0 {
        return None;
    }
    let from = from % (n * MAX_QUEUES);
    let (p0, s0) = (from / MAX_QUEUES, from % MAX_QUEUES);
    let at_or_after = u32::MAX << s0;
    for k in 0..=n {
        let p = (p0 + k) % n;
        let bits = ports.get(p).map_or(0, runnable);
        let bits = if k == 0 {
            bits & at_or_after
        } else if k == n {
            bits & !at_or_after
        } else {
            bits
        };
        if bits != 0 {
            return Some(p * MAX_QUEUES + bits.trailing_zeros() as usize);
        }
    }
    None
}

/// Executes up to `limit` WQEs of SQ slot `s` of port `p`, stopping early when flow control
/// pauses it (pause bit set, [`PortCounters::tx_pause`] counted; see [`paused`]) or it runs
/// out of work (work bit cleared). Returns the WQEs executed.
#[allow(clippy::too_many_arguments)]
fn serve_sq<M: BusMemory, I: InterruptSink>(
    ports: &mut [Port],
    queues: &mut [QueueSet],
    p: usize,
    s: usize,
    limit: usize,
    bus: &mut Bus<'_, M, I>,
    frame: &mut [u8],
    gather: &mut [u8],
) -> usize {
    let bit = 1u32 << (s % MAX_QUEUES);
    let has_wqe = |queues: &mut [QueueSet]| {
        row(queues, p, s).is_some_and(|r| r.sq.used && !r.sq.error && r.sq.cons != r.sq.tail)
    };
    let mut n = 0;
    while n < limit && has_wqe(queues) {
        if paused(ports, queues, p, bit) {
            break;
        }
        if !exec_wqe(ports, queues, p, s, bus, frame, gather) {
            break;
        }
        n += 1;
    }
    if !has_wqe(queues) {
        if let Some(pt) = ports.get_mut(p) {
            pt.sq_work &= !bit;
        }
    }
    n
}

/// 802.3x flow control before SQ `bit` of port `p` executes its next WQE ([`wire::hold`];
/// see "Flow control" in the module documentation): the pause quantum lasts until the next
/// register write. Returns true if the SQ is held.
fn paused(ports: &mut [Port], queues: &[QueueSet], p: usize, bit: u32) -> bool {
    let held = wire::hold(
        ports,
        p,
        |ports, rx| receiver_has_room(ports, queues, rx),
        || false,
    );
    if held {
        if let Some(s) = ports.get_mut(p) {
            s.sq_paused |= bit;
            s.counters.tx_pause += 1;
        }
    }
    held
}

/// Whether every usable RQ (created, not in error) in port `rx`'s RSS table has at least
/// [`wire::room_needed`] posted WQEs, counting WQEs as 32-byte BUs of the bytes
/// between the device's consumer offset and the last accepted doorbell `tail_ptr`.
fn receiver_has_room(ports: &[Port], queues: &[QueueSet], rx: usize) -> bool {
    let Some(pp) = ports.get(rx) else {
        return true;
    };
    for i in 0..pp.rss_len.min(MAX_RSS) {
        let slot = usize::from(pp.rss.get(i).copied().unwrap_or(0));
        if slot >= MAX_QUEUES {
            continue;
        }
        let Some(rq) = queues.get(rx * MAX_QUEUES + slot).map(|r| &r.rq) else {
            continue;
        };
        if !rq.used || rq.error {
            continue;
        }
        let need = wire::room_needed(rq.size / BU);
        if rq.tail.wrapping_sub(rq.cons) / BU < need {
            return false;
        }
    }
    true
}

/// Evaluates CQ and EQ arm requests: an event fires at once if entries are pending past the
/// armed tail. A stopped port's requests wait for the end of the stop.
fn check_arms<M: BusMemory, I: InterruptSink>(
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
    let eq = &mut r.eq;
    if !eq.used {
        return;
    }
    let idx = eq.pi & (eq.num - 1);
    let owner = ((eq.pi / eq.num).wrapping_add(1)) & 7;
    let mut b = [0u8; 16];
    put_le32(&mut b, 0, cq_id);
    put_le32(&mut b, 12, EQE_COMPLETION | (owner << 29));
    let addr = eq.buf.wrapping_add(u64::from(idx) * 16);
    pt.counters.pcie.dma_write(addr, 16);
    if bus.mem.dma_write(addr, &b).is_err() {
        pt.counters.dma_faults += 1;
        return;
    }
    eq.pi = eq.pi.wrapping_add(1);
    pt.counters.eqes += 1;
    if eq.armed {
        eq.armed = false;
        let v = eq.vector;
        fire(pt, v, bus);
    }
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
pub(super) fn eqe_to<M: BusMemory, I: InterruptSink>(
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
    let eq = &mut r.eq;
    if !eq.used {
        return;
    }
    let idx = eq.pi & (eq.num - 1);
    let owner = ((eq.pi / eq.num).wrapping_add(1)) & 7;
    let mut b = [0u8; 16];
    put_le32(&mut b, 0, details[0]);
    put_le32(&mut b, 4, details[1]);
    put_le32(&mut b, 8, details[2]);
    put_le32(&mut b, 12, (ty & 0xff) | (owner << 29));
    let addr = eq.buf.wrapping_add(u64::from(idx) * 16);
    pt.counters.pcie.dma_write(addr, 16);
    if mem.dma_write(addr, &b).is_err() {
        pt.counters.dma_faults += 1;
        return;
    }
    eq.pi = eq.pi.wrapping_add(1);
    pt.counters.eqes += 1;
    if eq.armed {
        eq.armed = false;
        pt.counters.pcie.msix();
        pt.counters.interrupts += 1;
        irq.raise(eq.vector);
    }
}

/// Writes an RX_OBJECT_FENCE CQE for RQ `rq_id` to CQ slot `c` of port `p` (MANA_FENCE_RQ).
pub(super) fn rx_fence_cqe<M: BusMemory, I: InterruptSink>(
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
fn write_cqe<M: BusMemory, I: InterruptSink>(
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
    let idx = cq.pi & (cq.num - 1);
    let mut owner = ((cq.pi / cq.num).wrapping_add(1)) & 7;
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
    let addr = cq.buf.wrapping_add(u64::from(idx) * 64);
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

/// Reads `dst.len()` bytes of a ring at byte offset `off`, wrapping at `size`.
fn read_ring<M: BusMemory>(
    mem: &M,
    c: &mut PortCounters,
    q: &WqCtx,
    off: u32,
    dst: &mut [u8],
) -> bool {
    let mask = q.size - 1;
    let start = off & mask;
    let first = (dst.len() as u32).min(q.size - start) as usize;
    let (a, b) = dst.split_at_mut(first);
    let addr = q.buf.wrapping_add(u64::from(start));
    c.pcie.dma_read(addr, a.len() as u64);
    c.wqe_bytes += a.len() as u64;
    if mem.dma_read(addr, a).is_err() {
        return false;
    }
    if !b.is_empty() {
        c.pcie.dma_read(q.buf, b.len() as u64);
        c.wqe_bytes += b.len() as u64;
        if mem.dma_read(q.buf, b).is_err() {
            return false;
        }
    }
    true
}

/// The WQ id a CQE names: `id`, or [`BAD_WQ_ID`] if a corrupt CQE was injected (`armed`,
/// taken and counted).
fn named_wq(armed: &mut bool, c: &mut PortCounters, id: u32) -> u32 {
    if core::mem::take(armed) {
        c.faults_injected += 1;
        BAD_WQ_ID
    } else {
        id
    }
}

fn tx_cqe(cqe_type: u8, vendor: u32, wqe_off: u32) -> [u8; 60] {
    let mut d = [0u8; 60];
    put_le32(
        &mut d,
        0,
        u32::from(cqe_type & 0x3f) | (CLIENT_COMPLETION << 6) | ((vendor & 0xff_ffff) << 8),
    );
    put_le32(&mut d, 8, (wqe_off / 32) << 5);
    d
}

/// Executes the next WQE of SQ `s` of port `p`. Returns whether one was executed.
#[allow(clippy::too_many_arguments)]
fn exec_wqe<M: BusMemory, I: InterruptSink>(
    ports: &mut [Port],
    queues: &mut [QueueSet],
    p: usize,
    s: usize,
    bus: &mut Bus<'_, M, I>,
    frame: &mut [u8],
    gather: &mut [u8],
) -> bool {
    let Some(sq) = row(queues, p, s).map(|r| r.sq) else {
        return false;
    };
    if !sq.used || sq.error || sq.cons == sq.tail {
        return false;
    }
    let sq_id = SQ_ID_BASE + (p * MAX_QUEUES + s) as u32;
    let cq_id = CQ_ID_BASE + (p * MAX_QUEUES + usize::from(sq.cq)) as u32;
    let avail = sq.tail.wrapping_sub(sq.cons);
    let off = sq.cons & (sq.size - 1);
    let Some(pt) = ports.get_mut(p) else {
        return false;
    };
    pt.counters.wqes += 1;
    let mut wqe = [0u8; MAX_SQE as usize];
    let ok = read_ring(bus.mem, &mut pt.counters, &sq, sq.cons, &mut wqe[..32]);
    let dw0 = le32(&wqe, 0);
    let dw1 = le32(&wqe, 4);
    let nsge = (dw1 & 0xff) as usize;
    let oob = ((dw1 >> 8) & 7) as usize * 4;
    let size = (8 + oob + 16 * nsge).div_ceil(32) as u32 * 32;
    let structural = if !ok {
        Some(WqeError::ReadFault)
    } else if nsge == 0 || nsge > 30 {
        Some(WqeError::BadNumSge)
    } else if oob != 8 && oob != 24 {
        Some(WqeError::BadOobSize)
    } else if size > MAX_SQE || size > avail {
        Some(WqeError::BadSize)
    } else {
        None
    };
    if let Some(e) = structural {
        pt.counters.hc_tx_err_gdma += 1;
        pt.counters.tx_wqe_errors += 1;
        pt.counters.tx_err_cqes += 1;
        pt.counters.tx_cqes += 1;
        if let Some(r) = row(queues, p, s) {
            r.sq.error = true;
        }
        let d = tx_cqe(e.cqe_type(), e as u32, off);
        let wq = named_wq(&mut pt.faults.tx_bad_wq, &mut pt.counters, sq_id);
        write_cqe(pt, queues, p, usize::from(sq.cq), &d, wq, true, bus);
        return true;
    }
    let rest_ok = size <= 32
        || read_ring(
            bus.mem,
            &mut pt.counters,
            &sq,
            sq.cons.wrapping_add(32),
            &mut wqe[32..size as usize],
        );
    if let Some(r) = row(queues, p, s) {
        r.sq.cons = sq.cons.wrapping_add(size);
    }
    let injected = ports.get_mut(p).and_then(|pt| pt.faults.tx_err.take());
    let res = if let Some(t) = injected {
        if let Some(pt) = ports.get_mut(p) {
            pt.counters.faults_injected += 1;
        }
        Err((t, 0))
    } else if rest_ok {
        send_wqe(
            ports, queues, p, &wqe, dw0, dw1, nsge, oob, cq_id, bus, frame, gather,
        )
        .map_err(|e| (e.cqe_type(), e as u32))
    } else {
        Err((WqeError::ReadFault.cqe_type(), WqeError::ReadFault as u32))
    };
    let Some(pt) = ports.get_mut(p) else {
        return true;
    };
    let d = match res {
        Ok(()) => tx_cqe(TX_OKAY, 0, off),
        Err((t, vendor)) => {
            let c = &mut pt.counters;
            c.tx_wqe_errors += 1;
            c.tx_err_cqes += 1;
            match t {
                35 => c.hc_tx_err_inval_oob += 1,
                34 => c.hc_tx_err_mtu_violation += 1,
                _ => c.hc_tx_err_gdma += 1,
            }
            tx_cqe(t, vendor, off)
        }
    };
    pt.counters.tx_cqes += 1;
    let wq = named_wq(&mut pt.faults.tx_bad_wq, &mut pt.counters, sq_id);
    write_cqe(pt, queues, p, usize::from(sq.cq), &d, wq, true, bus);
    true
}

/// Validates the OOB, gathers the packet, applies the offloads and sends it.
#[allow(clippy::too_many_arguments)]
fn send_wqe<M: BusMemory, I: InterruptSink>(
    ports: &mut [Port],
    queues: &mut [QueueSet],
    p: usize,
    wqe: &[u8],
    dw0: u32,
    dw1: u32,
    nsge: usize,
    oob: usize,
    cq_id: u32,
    bus: &mut Bus<'_, M, I>,
    frame: &mut [u8],
    gather: &mut [u8],
) -> Result<(), WqeError> {
    let o0 = le32(wqe, 8);
    let o1 = le32(wqe, 12);
    let pkt_fmt = o0 & 3;
    if (oob == 8 && pkt_fmt != 0) || (oob == 24 && pkt_fmt != 1) {
        return Err(WqeError::BadPktFmt);
    }
    if o0 >> 8 != cq_id {
        return Err(WqeError::BadVcq);
    }
    if o0 & (1 << 7) != 0 {
        return Err(WqeError::SuppressCqe);
    }
    let oob_in_sgl = dw1 & (1 << 11) != 0;
    if oob_in_sgl && nsge < 2 {
        return Err(WqeError::OobInSgl);
    }
    let (iphdr, tcp, udp) = (o0 & (1 << 4) != 0, o0 & (1 << 5) != 0, o0 & (1 << 6) != 0);
    let trans_off = (o1 & 0x3ff) as usize;
    let vlan = if oob == 24 {
        let o2 = le32(wqe, 16);
        (o2 & (1 << 3) != 0)
            .then_some((((o2 >> 16) & 7) << 13 | ((o2 >> 19) & 1) << 12 | (o2 >> 20)) as u16)
    } else {
        None
    };
    let mss = ((dw1 >> 16) & 0x3fff) as usize;
    // Gather.
    let mut len = 0usize;
    let mut sge0 = 0usize;
    // Host buffers gathered from (SGEs that do not continue the previous one).
    let mut bufs = 0u32;
    let mut end = None;
    let Some(pt) = ports.get_mut(p) else {
        return Err(WqeError::ReadFault);
    };
    for i in 0..nsge {
        let at = 8 + oob + 16 * i;
        let addr = u64::from(le32(wqe, at)) | (u64::from(le32(wqe, at + 4)) << 32);
        let sz = le32(wqe, at + 12) as usize;
        if sz == 0 {
            return Err(WqeError::ZeroSge);
        }
        // The key names the memory region the address is in: only the device's (GPA) key
        // is known to it; nothing is read through another.
        if le32(wqe, at + 8) != MANA_MKEY {
            pt.counters.mkey_errors += 1;
            return Err(WqeError::BadMkey);
        }
        if i == 0 {
            sge0 = sz;
        }
        let Some(dst) = gather.get_mut(len..len.saturating_add(sz)) else {
            return Err(WqeError::TooLong);
        };
        pt.counters.pcie.dma_read(addr, sz as u64);
        if core::mem::take(&mut pt.faults.dma_read) {
            pt.counters.faults_injected += 1;
            pt.counters.dma_faults += 1;
            return Err(WqeError::ReadFault);
        }
        if bus.mem.dma_read(addr, dst).is_err() {
            return Err(WqeError::ReadFault);
        }
        if end != Some(addr) {
            bufs += 1;
        }
        end = Some(addr.wrapping_add(sz as u64));
        len += sz;
    }
    if len < 14 {
        return Err(WqeError::TooShort);
    }
    let Some(data) = gather.get(..len) else {
        return Err(WqeError::TooLong);
    };
    if mss != 0 && oob_in_sgl {
        let h = pkt::parse_gso(data);
        let hl = h.l4_off + h.l4_hdr_len;
        if h.l4 != L4::Tcp
            || !tcp
            || h.l4_off != trans_off
            || hl != sge0
            || ((dw0 >> 24) as usize) != (sge0 & 0xff)
        {
            return Err(WqeError::Tso);
        }
        let payload = len - hl;
        if hl + mss.min(payload) + 4 > MAX_FRAME {
            return Err(WqeError::TooLong);
        }
        pt.counters.tx_floor_in_bytes += inbound_floor(len as u64);
        let nseg = payload.div_ceil(mss).max(1);
        pt.counters.lso_wqes += 1;
        pt.counters.lso_segs += nseg as u64;
        // fix_segment fills every segment's checksums.
        pt.counters.tx_csum_offload += nseg as u64;
        pt.counters.tx_gather_pkts += u64::from(bufs > 1);
        for i in 0..nseg {
            let off = i * mss;
            let sl = mss.min(payload - off.min(payload));
            let n = hl + sl;
            let (Some(dst), Some(hd), Some(pl)) = (
                frame.get_mut(..n),
                data.get(..hl),
                data.get(hl + off..hl + off + sl),
            ) else {
                return Err(WqeError::TooLong);
            };
            dst[..hl].copy_from_slice(hd);
            dst[hl..].copy_from_slice(pl);
            pkt::fix_segment(dst, &h, i as u16, off as u32, i + 1 == nseg);
            let wire = finish_frame(frame, n, vlan);
            deliver(ports, queues, p, frame.get(..wire).unwrap_or(&[]), bus);
        }
        return Ok(());
    }
    if len + if vlan.is_some() { 4 } else { 0 } > MAX_FRAME {
        return Err(WqeError::TooLong);
    }
    let Some(dst) = frame.get_mut(..len) else {
        return Err(WqeError::TooLong);
    };
    dst.copy_from_slice(data);
    if tcp || udp {
        let h = pkt::parse(dst);
        // TCP names its header's offset (`trans_off`), which must be where the parsed
        // headers put it; for UDP the device finds the header itself and reads nothing from
        // `trans_off`: upstream mana_start_xmit sets it for TCP only and leaves it 0 for a
        // UDP checksum (rsnic.rst, "What the kernel's mana driver found in the model").
        let (want, at) = if tcp {
            (L4::Tcp, trans_off)
        } else {
            (L4::Udp, h.l4_off)
        };
        if h.l4 != want || h.l4_off != at {
            return Err(WqeError::Csum);
        }
        pkt::fill_checksums(dst, &h, iphdr, true);
    } else if iphdr {
        let h = pkt::parse(dst);
        if h.l3 != L3::Ipv4 {
            return Err(WqeError::Csum);
        }
        pkt::fill_checksums(dst, &h, true, false);
    }
    pt.counters.tx_csum_offload += u64::from(tcp || udp || iphdr);
    pt.counters.tx_gather_pkts += u64::from(bufs > 1);
    pt.counters.tx_floor_in_bytes += inbound_floor(len as u64);
    let wire = finish_frame(frame, len, vlan);
    deliver(ports, queues, p, frame.get(..wire).unwrap_or(&[]), bus);
    Ok(())
}

/// Inserts the VLAN tag after the MACs and pads to 60 bytes. Returns the wire length.
fn finish_frame(frame: &mut [u8], mut len: usize, vlan: Option<u16>) -> usize {
    if let Some(tci) = vlan {
        if len >= 12 && len + 4 <= frame.len() {
            frame.copy_within(12..len, 16);
            if let Some(t) = frame.get_mut(12..16) {
                t.copy_from_slice(&[0x81, 0x00, (tci >> 8) as u8, tci as u8]);
            }
            len += 4;
        }
    }
    let padded = len.max(pkt::MIN_FRAME).min(frame.len());
    if let Some(pad) = frame.get_mut(len..padded) {
        pad.fill(0);
    }
    padded.max(len.min(frame.len()))
}

/// Cast of a frame: 0 unicast, 1 broadcast, 2 multicast.
fn cast(f: &[u8]) -> u8 {
    match f.get(..6) {
        Some(d) if d.iter().all(|&b| b == 0xff) => 1,
        Some(d) if d[0] & 1 != 0 => 2,
        _ => 0,
    }
}

/// NDIS hash-type bits of the model (see the module documentation).
fn hashtype(h: &pkt::Headers) -> u32 {
    match (h.l3, h.l4) {
        (L3::Ipv4, L4::Tcp) => 1 << 1,
        (L3::Ipv4, L4::Udp) => 1 << 2,
        (L3::Ipv4, L4::None) => 1 << 0,
        (L3::Ipv6, L4::Tcp) => 1 << 4,
        (L3::Ipv6, L4::Udp) => 1 << 5,
        (L3::Ipv6, L4::None) => 1 << 3,
        (L3::None, _) => 0,
    }
}

/// Transmits a frame from port `src`: over the wire to its peer, or to `src`'s own receive
/// side in loopback ([`wire::rx_port`]), and receives it there.
fn deliver<M: BusMemory, I: InterruptSink>(
    ports: &mut [Port],
    queues: &mut [QueueSet],
    src: usize,
    wire: &[u8],
    bus: &mut Bus<'_, M, I>,
) {
    let dst = wire::rx_port(ports, src);
    let Some(sp) = ports.get_mut(src) else {
        return;
    };
    let Some(dst) = dst else {
        sp.counters.tx_link_down_drops += 1;
        return;
    };
    let c = &mut sp.counters;
    let n = wire.len() as u64;
    c.hc_tx_bytes += n;
    match cast(wire) {
        1 => (c.hc_tx_bcast_pkts += 1, c.hc_tx_bcast_bytes += n),
        2 => (c.hc_tx_mcast_pkts += 1, c.hc_tx_mcast_bytes += n),
        _ => (c.hc_tx_ucast_pkts += 1, c.hc_tx_ucast_bytes += n),
    };
    if dst == src {
        c.loopback_packets += 1;
        c.loopback_bytes += wire.len() as u64;
    }
    receive(ports, queues, dst, wire, bus);
}

/// The receive side of port `rx`: RSS, RQ WQE, scatter, RX CQE. A stopped port drops the
/// frame.
fn receive<M: BusMemory, I: InterruptSink>(
    ports: &mut [Port],
    queues: &mut [QueueSet],
    rx: usize,
    wire: &[u8],
    bus: &mut Bus<'_, M, I>,
) {
    let Some(pt) = ports.get_mut(rx) else {
        return;
    };
    if pt.stopped() {
        pt.counters.rx_stopped += 1;
        pt.stop_hit();
        return;
    }
    let h = pkt::parse(wire);
    let (hash, _) = pkt::rss_hash_key(wire, &h, &pt.rss_key);
    // An outer 802.1Q tag (TPID 0x8100) is stripped and its VLAN id reported in the CQE
    // (`rx_vlantag_present`, `rx_vlan_id`, 12 bits): what mana_rx_skb reads, with
    // NETIF_F_HW_VLAN_CTAG_RX always on. The host gets the frame without the 4 bytes; the
    // hash and checksums are the parser's, which looks past the tag either way.
    let tag = match (wire.get(12..14), wire.get(14..16)) {
        (Some(&[0x81, 0x00]), Some(&[t0, t1])) if wire.len() >= 18 => {
            Some(u16::from_be_bytes([t0, t1]) & 0xfff)
        }
        _ => None,
    };
    let skip = if tag.is_some() { 4 } else { 0 };
    let host_len = wire.len() - skip;
    if pt.rss_len == 0 {
        pt.counters.rx_no_rq_drops += 1;
        // The vport's RX is off (MANA_CONFIG_VPORT_RX rx_enable false, or never on): the
        // device's rx_err_vport_disabled.
        if !pt.steer.rx_enabled() {
            pt.counters.hc_rx_err_vport_disabled += 1;
        }
        return;
    }
    let slot = usize::from(pt.rss[(hash as usize % pt.rss_len.min(MAX_RSS)) % MAX_RSS]);
    let Some(rq) = row(queues, rx, slot).map(|r| r.rq) else {
        pt.counters.rx_no_rq_drops += 1;
        return;
    };
    if !rq.used || rq.error {
        pt.counters.rx_no_rq_drops += 1;
        return;
    }
    if rq.cons == rq.tail {
        pt.counters.hc_rx_discards_no_wqe += 1;
        return;
    }
    let avail = rq.tail.wrapping_sub(rq.cons);
    let off = rq.cons & (rq.size - 1);
    let mut wqe = [0u8; MAX_RQE as usize];
    let ok = read_ring(bus.mem, &mut pt.counters, &rq, rq.cons, &mut wqe[..32]);
    let dw1 = le32(&wqe, 4);
    let nsge = (dw1 & 0xff) as usize;
    let oob = ((dw1 >> 8) & 7) as usize * 4;
    let size = (8 + oob + 16 * nsge).div_ceil(32) as u32 * 32;
    let good = ok
        && (1..=15).contains(&nsge)
        && (oob == 0 || oob == 8)
        && size <= MAX_RQE
        && size <= avail
        && (size <= 32
            || read_ring(
                bus.mem,
                &mut pt.counters,
                &rq,
                rq.cons.wrapping_add(32),
                &mut wqe[32..size as usize],
            ));
    if !good {
        pt.counters.rx_wqe_errors += 1;
        if let Some(r) = row(queues, rx, slot) {
            r.rq.error = true;
        }
        return;
    }
    if let Some(r) = row(queues, rx, slot) {
        r.rq.cons = rq.cons.wrapping_add(size);
    }
    // Scatter. An SGE under another memory key than the device's makes the WQE unusable:
    // nothing is written through it, and the frame completes as RX_TRUNCATED (its buffers
    // could take none of it; the WQE is consumed, the RQ goes on).
    let cap: u64 = (0..nsge)
        .map(|i| u64::from(le32(&wqe, 8 + oob + 16 * i + 12)))
        .sum();
    let bad_keys = (0..nsge)
        .filter(|&i| le32(&wqe, 8 + oob + 16 * i + 8) != MANA_MKEY)
        .count() as u64;
    pt.counters.mkey_errors += bad_keys;
    let mut truncated = cap < host_len as u64 || bad_keys != 0;
    if core::mem::take(&mut pt.faults.rx_trunc) {
        pt.counters.faults_injected += 1;
        truncated = true;
    }
    if !truncated {
        // `pos` counts the bytes the host gets: those of the wire less a stripped tag
        // (wire bytes 12..16).
        let mut pos = 0usize;
        'sges: for i in 0..nsge {
            if pos >= host_len {
                break;
            }
            let at = 8 + oob + 16 * i;
            let addr = u64::from(le32(&wqe, at)) | (u64::from(le32(&wqe, at + 4)) << 32);
            let n = (le32(&wqe, at + 12) as usize).min(host_len - pos);
            pt.counters.pcie.dma_write(addr, n as u64);
            let mut done = 0usize;
            while done < n {
                let lp = pos + done;
                let (from, run) = if skip != 0 && lp < 12 {
                    (lp, 12 - lp)
                } else if lp >= 12 {
                    (lp + skip, n - done)
                } else {
                    (lp, n - done)
                };
                let k = run.min(n - done);
                let src = wire.get(from..from + k).unwrap_or(&[]);
                if bus
                    .mem
                    .dma_write(addr.wrapping_add(done as u64), src)
                    .is_err()
                {
                    pt.counters.dma_faults += 1;
                    truncated = true;
                    break 'sges;
                }
                done += k;
            }
            pos += n;
        }
    }
    let mut d = [0u8; 60];
    let c = &mut pt.counters;
    let t = if truncated {
        c.rx_truncated += 1;
        RX_TRUNCATED
    } else {
        let n = wire.len() as u64;
        c.hc_rx_bytes += n;
        match cast(wire) {
            1 => (c.hc_rx_bcast_pkts += 1, c.hc_rx_bcast_bytes += n),
            2 => (c.hc_rx_mcast_pkts += 1, c.hc_rx_mcast_bytes += n),
            _ => (c.hc_rx_ucast_pkts += 1, c.hc_rx_ucast_bytes += n),
        };
        RX_OKAY
    };
    c.rx_cqes += 1;
    put_le32(&mut d, 0, u32::from(t) | (CLIENT_COMPLETION << 6));
    if !truncated {
        let (l3_ok, l4_ok) = pkt::verify_checksums(wire, &h);
        let mut f = hashtype(&h) << 16;
        // rx_iphdr_csum_succeed/failed: the IPv4 header checksum; an IPv6 header has none
        // and is reported good (the driver needs the bit for CHECKSUM_UNNECESSARY).
        match h.l3 {
            L3::Ipv4 => f |= if l3_ok { 1 << 25 } else { 1 << 26 },
            L3::Ipv6 => f |= 1 << 25,
            L3::None => {}
        }
        match h.l4 {
            L4::Tcp => f |= if l4_ok { 1 << 27 } else { 1 << 28 },
            L4::Udp => f |= if l4_ok { 1 << 29 } else { 1 << 30 },
            L4::None => {}
        }
        if let Some(t) = tag {
            f |= u32::from(t) | (1 << 12);
            pt.counters.rx_vlan_stripped += 1;
        }
        put_le32(&mut d, 4, f);
        put_le32(&mut d, 16, hash);
    }
    put_le32(&mut d, 8, host_len.min(0xffff) as u32);
    put_le32(&mut d, 56, off);
    let rq_id = RQ_ID_BASE + (rx * MAX_QUEUES + slot) as u32;
    let wq = named_wq(&mut pt.faults.rx_bad_wq, &mut pt.counters, rq_id);
    write_cqe(pt, queues, rx, usize::from(rq.cq), &d, wq, false, bus);
}
