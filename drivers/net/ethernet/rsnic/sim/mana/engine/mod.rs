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

mod cq;
mod rq;
mod sq;

use cq::check_arms;
pub(super) use cq::{eqe, eqe_to, rx_fence_cqe, slot};
use rq::{cast, receive};
use sq::exec_wqe;

use super::{Cursor, Port, PortCounters, QueueSet, WqCtx, WqeError};
use super::{BAD_CQ_ID, BAD_OWNER_XOR, BAD_WQ_ID, MANA_MKEY, SQ_BURST, SQ_ID_BASE};
use super::{CQ_ID_BASE, MAX_FRAME, MAX_QUEUES, MAX_RSS, RQ_ID_BASE};
use crate::hwif::hw::{BusMemory, InterruptSink};
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

/// Transmits a frame from port `src`: over the wire to its peer, or to `src`'s own receive
/// side in loopback ([`wire::rx_port`]), and receives it there.
fn deliver<M: BusMemory, I: InterruptSink>(
    ports: &mut [Port],
    queues: &mut [QueueSet],
    src: usize,
    wire: &[u8],
    bus: &mut Bus<'_, M, I>,
) {
    let Some(dst) = wire::route(ports, src, wire.len()) else {
        return;
    };
    let Some(sp) = ports.get_mut(src) else {
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
    receive(ports, queues, dst, wire, bus);
}
