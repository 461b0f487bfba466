// SPDX-License-Identifier: GPL-2.0

//! The asynchronous part of the mlx5 model: SQ execution, packet delivery, RX, CQE writing
//! (with compression) and interrupts, by these rules:
//!
//! [`super::Device::process`] runs until no SQ has work (or [`super::Device::process_budget`] until
//! a WQE budget is spent). SQs with work are served round robin, [`super::SQ_BURST`] WQEs at a
//! time.
//!
//! **SQ.** When a doorbell was rung, the device reads the SQ's doorbell record (db\[1\] =
//! BE32(pc), a 4-byte DMA read) once, then consumes WQEs from its own consumer counter up to
//! that `pc`. A `pc` more than the ring size ahead is ignored and counted
//! ([`super::PortCounters::dbr_invalid`]).
//!
//! *Fetch granularity:* the device reads the first WQEBB of a WQE (64 bytes, one DMA read),
//! learns the DS count from the ctrl segment, and if the WQE is larger reads the remaining
//! `ds * 16 - 64` bytes in a second DMA read. A one-WQEBB WQE therefore costs one read request
//! (24 B outbound) and one 64-byte completion (88 B inbound); an MPWQE of N packets costs
//! about 16 B of descriptor per packet plus the overhead of ceil((2+N)*16/64) completions.
//!
//! *Validation*, in this order, each failure answered with an error CQE (opcode REQ_ERR 13,
//! the syndrome of [`super::WqeError::syndrome`], the model's own reason in `vendor_err_synd`, see
//! [`super::WqeError::vendor_code`]), after which the SQ enters the error state and stops (no flush
//! CQEs; the driver resets it with [`super::Device::reset_sq`]):
//! opcode ∈ {NOP, SEND, LSO, ENHANCED_MPSW}; opmod 0; WQE index == the device's consumer
//! counter; SQN == this SQ; DS ≥ 1 (≥ 2 for SEND/LSO, ≥ 3 for MPWQE; the 6-bit field bounds
//! it to 63 DS = 16 WQEBBs) and `16 * DS` at most the caps' `max_wqe_sz_sq`
//! ([`super::Caps`]); the whole WQE posted (`num_wqebbs ≤ pc − cc`) and not crossing the end
//! of the ring (stricter than hardware, which wraps: it catches a driver that forgot
//! the NOP edge padding); the inline header (`inline_hdr.sz` bytes from byte 30 of the WQE)
//! inside the WQE; SEND has mss 0, LSO mss ≠ 0 and an inline header; MPWQE has no inline header
//! and mss 0; data segments have a non-zero byte count, inline segments a non-zero length that
//! fits in the WQE; a SEND packet (and every MPWQE packet and LSO segment) is between 14 and
//! [`super::MAX_FRAME`] bytes; an LSO super packet fits the gather buffer and its inline header
//! holds the whole Ethernet/IP/TCP-or-UDP header; finally every data segment address is
//! readable (else LOCAL_PROT). Structural checks all happen before any packet is sent; a read
//! fault inside an MPWQE is found while gathering, so the packets before it have been sent.
//! lkeys are not checked (the model has no memory-key table).
//!
//! `insert.type` and `inline_hdr.sz` share bytes 12–13 of the eth segment: bit 15 set means
//! VLAN insertion (an 802.1Q tag, or 802.1ad if bit 0 is set, with `vlan_tci`), otherwise it
//! is the inline header size. The packet is: inline header, then the segments in order, then
//! the VLAN tag inserted after the MAC addresses. Checksum offload: `cs_flags` L3_CSUM/L4_CSUM
//! fill the outer IPv4 header / TCP-UDP checksums (the outer headers are parsed); the inner
//! flags use the SWP inner offsets (2-byte words) and SWP flags. LSO cuts the payload after the
//! headers into `mss` pieces and fixes lengths, IPv4 ID, TCP sequence and flags and all
//! checksums ([`crate::sim::pkt::fix_segment`]). Frames shorter than 60 bytes are zero-padded
//! to 60 on the wire, as a MAC does. A TX CQE (opcode REQ 0, `wqe_counter` = the WQE's index,
//! `sop_drop_qpn` = SQN) is written only for a WQE whose `fm_ce_se` asks for CQ_UPDATE.
//!
//! **RX.** The receiving port (the peer, or the sender itself in loopback) picks an RQ as
//! "RSS and flow steering" says; no table, no entry or a missing RQ drops
//! ([`super::PortCounters::rx_no_rq_drops`]). The
//! device caches the RQ's producer counter and reads the RQ doorbell record (db\[0\] =
//! BE32(wqe_ctr)) again only when it has no known free WQE; still none ⇒ drop and count
//! [`super::PortCounters::rx_out_of_buffer`]. Otherwise it reads the RX WQE (`stride` bytes of data
//! segments; a segment with byte count 0 or the terminating lkey 0x100 ends the list; bit 31 of
//! the byte count, HW_START_PADDING, is ignored), scatters the packet into its buffers and
//! writes an RX CQE (opcode RESP_SEND 2, `byte_cnt`, `wqe_counter` = the RQ's 16-bit consumer
//! counter, `rss_hash_result`/`rss_hash_type`, `hds_ip_ext` L2_OK|L3_OK|L4_OK as verified,
//! `check_sum` = the ones' complement sum of the bytes after the L2 header). A packet longer
//! than the WQE's buffers consumes the WQE and gets an error CQE (RESP_ERR 14, syndrome
//! LOCAL_LENGTH; the RQ stays ready, mlx5e does not recover for it); a write fault gets
//! RESP_ERR with LOCAL_PROT and puts the RQ in error.
//!
//! Beyond the spec's table, RX CQEs also carry `l4_l3_hdr_type` as ConnectX does: bits 6..4
//! L4 type (1 TCP, 2 UDP; 3/4 for a TCP ACK without/with data), bits 3..2 L3 type (1 IPv6,
//! 2 IPv4). VLAN stripping: unless the RQ's `vsd` is set (CREATE_RQ, or MODIFY_RQ with
//! the VSD bit of `modify_bitmask`, RDY -> RDY), a frame whose outer tag is 802.1Q (TPID
//! 0x8100 after the MACs; not 802.1ad) reaches the host without those 4 bytes, and its CQE
//! has the cv bit (bit 0 of `l4_l3_hdr_type`, device.h's `cqe_has_vlan`), the whole TCI in
//! `vlan_info` and `byte_cnt` of the shortened frame
//! ([`super::PortCounters::rx_vlan_stripped`]); steering, RSS, the checksums and the vport's
//! counters see the frame as it came off the wire. A compression session only takes CQEs
//! whose cv bit and `vlan_info` equal its title's, which carries them for all (mini CQEs
//! have no room for them; mlx5e copies the title). No timestamps, no LRO.
//!
//! **CQ.** The CQE for producer index `pi` goes to slot `pi & mask` with owner bit
//! `(pi >> log_size) & 1`. Before using a slot the device checks room against its cached copy
//! of the consumer index and re-reads the set_ci doorbell record (a 4-byte DMA read) only when
//! the CQ looks full; still full ⇒ CQ overrun: counted, and the CQ enters the error state (later
//! CQEs for it are lost and counted in [`super::PortCounters::cqes_lost`]).
//!
//! **CQE compression** (basic layout of spec C.5, per CQ at creation). Session rules of this model:
//! consecutive RX completions (RESP_SEND) for the same CQ and RQ, produced within one `process`
//! call, with consecutive `wqe_counter`s and identical fields apart from `byte_cnt`, `check_sum`,
//! the RSS hash fields, `wqe_counter` and `op_own`, form one session of at most
//! [`super::MAX_SESSION`] CQEs. A session of one is written as a plain CQE. A session of N ≥ 2 at
//! CQ index c is written as: mini-CQE arrays (8 × 8 B, CSUM format: `check_sum` BE16, stride index
//! 0, `byte_cnt` BE32) at slot c+1 for packets 0..7 and at slot c+8j for packets 8j..8j+7, written
//! as each fills; then, last, the title at slot c: packet 0's CQE with `byte_cnt` = N and format 3
//! in `op_own`, with the owner bit of index c. A session ends at a non-matching CQE for the CQ,
//! when full, and at the end of every `process` call. The session's indices are reserved
//! (room-checked) as its CQEs arrive, but the producer index seen by arming stays at c until the
//! title is written.
//!
//! **Interrupts.** An arm doorbell arms the CQ with its `ci`. An armed CQ fires once, as soon
//! as its visible producer index differs from the armed `ci` (a new CQE written, or CQEs
//! already pending at arm time), then disarms: a completion EQE to its EQ (CQs made by
//! command), or its MSI-X vector directly (CQs made through the Rust API). Every firing
//! counts in [`super::PortCounters::cq_events`].
//!
//! **CQ moderation** (`cq_period` µs, `cq_max_count`, `cq_period_mode` of the CQ context; CREATE_CQ
//! sets them, MODIFY_CQ changes them on a live CQ). With `cq_period` 0 the CQ fires as above,
//! whatever `cq_max_count` says (a zero period is a timer that has always run out: the model never
//! holds a CQE back on a count alone, which would hide the last CQEs of a burst until the next
//! one). With a period, an armed CQ with `n` CQEs beyond its armed `ci` fires when `n ≥
//! cq_max_count` (`cq_max_count` 0: no count limit) or when the period has run out, whichever comes
//! first; until then it stays armed and is *held*. The period runs from the timer's start, which
//! is, as the PRM's `cq_period_mode` says: mode 0 (upon event, mlx5e's default) the CQ's last event
//! (its creation before the first), so sparse CQEs fire at once and a busy CQ fires at most once
//! per period unless the count is reached; mode 1 (upon CQE) its last CQE, so an event follows a
//! gap of one period in the CQEs. Time is the device's clock ([`super::Device::set_clock`],
//! nanoseconds, set by the device host before a run; a host that never sets it leaves period-only
//! moderation held for ever). Held CQs are evaluated again at the start of every engine run, and
//! [`super::Device::moderation_deadline`] tells the host when the earliest one's period runs out,
//! so it can run the engine then (the device's timer). An event held back and then released by the
//! period counts in [`super::PortCounters::cq_timer_events`]. A MODIFY_CQ takes effect on the next
//! run (a held CQ is evaluated again under the new values; the timer's start does not change).
//!
//! **PCIe accounting** ([`crate::sim::pcie`], per port, [`super::Device::totals`] for the device):
//! WQE and doorbell-record reads, packet-data reads (TX gather) and RX WQE reads are DMA reads;
//! received data are DMA writes; each CQE or mini array is one 64-byte write; each interrupt
//! one 4-byte write; each register write one inbound 8-byte TLP. Accesses that fault are
//! accounted too (the transaction was on the bus). [`super::PortCounters::tx_floor_in_bytes`]
//! accumulates [`crate::sim::pcie::inbound_floor`] of the bytes of every sent packet as the
//! host holds them (headers once for LSO), the floor to compare inbound bytes with.

mod cq;
mod rq;
mod sq;

use cq::{check_arm, flush_session, post_cqe};
use rq::receive;
use sq::exec_wqe;

use super::consts::*;
use super::{CqCtx, Port, PortCounters, QueueSet, QueueState, RqCtx, SqCtx, WqeError};
use super::{MAX_FRAME, MAX_QUEUES, MAX_RQT_SIZE, MAX_RSS, MAX_SESSION, SQN_BASE, SQ_BURST};
use crate::hwif::hw::{BusMemory, DmaAddr, InterruptSink};
use crate::sim::wire;

/// Scratch buffers of the device.
pub(super) struct Bufs<'a> {
    /// Output frame (LSO segments).
    pub(super) frame: &'a mut [u8],
    /// Gathered packet or LSO super packet.
    pub(super) gather: &'a mut [u8],
    /// The WQE being executed.
    pub(super) wqe: &'a mut [u8; 1024],
}

/// The device's view of the outside world.
pub(super) struct Io<'a, M, I> {
    pub(super) mem: &'a M,
    pub(super) irq: &'a mut I,
    /// The page-list pool of queues in page lists ([`super::pas`]).
    pub(super) pool: &'a [u8],
    /// The device executes ENHANCED_MPSW WQEs ([`super::Caps::mpwqe`]).
    pub(super) mpwqe: bool,
    /// The largest send WQE in bytes ([`super::Caps::max_wqe_sz_sq`]).
    pub(super) max_wqe_sz: usize,
    /// The clock of CQ moderation ([`super::Device::set_clock`]), nanoseconds.
    pub(super) now: u64,
}

#[inline]
fn put(b: &mut [u8], off: usize, src: &[u8]) {
    if let Some(d) = b.get_mut(off..off.wrapping_add(src.len())) {
        d.copy_from_slice(src);
    }
}

/// Runs SQs round robin until no work is left or `budget` WQEs were executed, then closes
/// compression sessions. Returns (WQEs executed, work left).
pub(super) fn run<M: BusMemory, I: InterruptSink>(
    ports: &mut [Port],
    queues: &mut [QueueSet],
    bufs: &mut Bufs<'_>,
    io: &mut Io<'_, M, I>,
    budget: usize,
) -> (usize, bool) {
    // Arm requests: CQEs may already be waiting at arm time. Those of a stopped port wait
    // for the end of the stop. CQs that moderation held back are evaluated again: their
    // period may have run out since (the timer of a real device).
    for (p, port) in ports.iter_mut().enumerate() {
        if port.stopped() {
            continue;
        }
        let mut pending =
            core::mem::take(&mut port.arm_pending) | core::mem::take(&mut port.moder_wait);
        while pending != 0 {
            let slot = pending.trailing_zeros() as usize;
            pending &= pending - 1;
            if let Some(row) = queues.get_mut(p * MAX_QUEUES + slot) {
                check_arm(&mut row.cq, &mut port.counters, io);
            }
        }
    }
    // Every run retries the SQs that flow control paused (a new pause quantum). A stopped
    // port holding posted work back: the fault took effect.
    for port in ports.iter_mut() {
        port.sq_paused = 0;
        port.pause.new_quantum();
        if port.stopped() && port.sq_doorbell | port.sq_active != 0 {
            port.stop_hit();
        }
    }
    let mut done = 0usize;
    'outer: loop {
        let mut progress = false;
        for p in 0..ports.len() {
            let mut sched = match ports.get(p) {
                // A stalled transmit engine or a stopped data path (injected faults) leaves
                // its doorbells latched.
                Some(pt) if pt.faults.tx_stall || pt.stopped() => 0,
                Some(pt) => pt.sq_doorbell | (pt.sq_active & !pt.sq_paused),
                None => 0,
            };
            while sched != 0 {
                let slot = sched.trailing_zeros() as usize;
                sched &= sched - 1;
                if done >= budget {
                    break 'outer;
                }
                let limit = SQ_BURST.min(budget - done);
                let (n, moved) = run_sq(ports, queues, p, slot, limit, bufs, io);
                done += n;
                progress |= moved;
            }
        }
        if !progress {
            break;
        }
    }
    for (p, port) in ports.iter_mut().enumerate() {
        for slot in 0..MAX_QUEUES {
            if let Some(row) = queues.get_mut(p * MAX_QUEUES + slot) {
                if row.cq.used && row.cq.sess.n > 0 {
                    flush_session(&mut row.cq, &mut port.counters, io);
                }
                if row.cq.moder.held {
                    port.moder_wait |= 1u64 << slot;
                }
            }
        }
    }
    // Paused SQs wait for the next run (a register write), not for a busy loop.
    let more = ports.iter().any(|p| {
        !p.faults.tx_stall && !p.stopped() && p.sq_doorbell | (p.sq_active & !p.sq_paused) != 0
    });
    (done, more)
}

/// Reads a 32-bit big-endian doorbell-record word.
fn read_dbr<M: BusMemory>(counters: &mut PortCounters, addr: DmaAddr, mem: &M) -> Option<u32> {
    let mut b = [0u8; 4];
    counters.pcie.dma_read(addr, 4);
    counters.dbr_reads += 1;
    match mem.dma_read(addr, &mut b) {
        Ok(()) => Some(u32::from_be_bytes(b)),
        Err(_) => {
            counters.dma_faults += 1;
            None
        }
    }
}

/// Executes up to `limit` WQEs of one SQ. Returns (WQEs executed, anything done).
fn run_sq<M: BusMemory, I: InterruptSink>(
    ports: &mut [Port],
    queues: &mut [QueueSet],
    p: usize,
    slot: usize,
    limit: usize,
    bufs: &mut Bufs<'_>,
    io: &mut Io<'_, M, I>,
) -> (usize, bool) {
    let bit = 1u64 << (slot % MAX_QUEUES);
    let sqn = SQN_BASE + (p * MAX_QUEUES + slot) as u32;
    let row = p * MAX_QUEUES + slot;
    let Some(mut sq) = queues.get(row).map(|r| r.sq) else {
        return (0, false);
    };
    let Some(port) = ports.get_mut(p) else {
        return (0, false);
    };
    if !sq.used || sq.state != QueueState::Ready {
        port.sq_doorbell &= !bit;
        port.sq_active &= !bit;
        return (0, false);
    }
    let mut moved = false;
    if port.sq_doorbell & bit != 0 {
        port.sq_doorbell &= !bit;
        moved = true;
        if let Some(v) = read_dbr(&mut port.counters, sq.dbr.wrapping_add(4), io.mem) {
            let pc = v as u16;
            if u32::from(pc.wrapping_sub(sq.cc)) > 1u32 << sq.log_size {
                port.counters.dbr_invalid += 1;
            } else {
                sq.pc = pc;
            }
        }
    }
    let mut n = 0;
    while n < limit && sq.cc != sq.pc && sq.state == QueueState::Ready {
        if paused(ports, queues, p, bit, &sq, io.pool, io.mem) {
            break;
        }
        n += 1;
        moved = true;
        let wc = sq.cc;
        let injected = ports.get_mut(p).and_then(|pt| pt.faults.tx_err.take());
        let res = match injected {
            None => exec_wqe(ports, queues, p, &sq, sqn, bufs, io)
                .map_err(|(e, opcode)| (e.syndrome(), e.vendor_code(), opcode)),
            Some(synd) => {
                if let Some(pt) = ports.get_mut(p) {
                    pt.counters.faults_injected += 1;
                }
                Err((synd, 0, 0))
            }
        };
        // The WQE is consumed (or the SQ stopped) whatever happens to its CQE.
        let cqe = match res {
            Ok((nwqebbs, want_cqe)) => {
                sq.cc = sq.cc.wrapping_add(nwqebbs);
                if let Some(port) = ports.get_mut(p) {
                    port.counters.wqes += 1;
                    port.counters.wqebbs += u64::from(nwqebbs);
                    if want_cqe {
                        port.counters.tx_cqes += 1;
                    }
                }
                // A corrupt CQE (injected) names another SQ.
                let mut named = sqn;
                if let Some(pt) = ports.get_mut(p).filter(|_| want_cqe) {
                    if core::mem::take(&mut pt.faults.tx_bad_sqn) {
                        pt.counters.faults_injected += 1;
                        named = sqn ^ 0x40;
                    }
                }
                want_cqe.then(|| {
                    let mut c = [0u8; 64];
                    put(&mut c, 56, &(named & 0xff_ffff).to_be_bytes());
                    put(&mut c, 60, &wc.to_be_bytes());
                    c[63] = CQE_REQ << 4;
                    c
                })
            }
            Err((synd, vendor, opcode)) => {
                sq.state = QueueState::Error;
                if let Some(port) = ports.get_mut(p) {
                    port.counters.wqe_errors += 1;
                    port.counters.tx_err_cqes += 1;
                    if vendor == WqeError::BadLkey.vendor_code() {
                        port.counters.mkey_errors += 1;
                    }
                }
                Some(err_cqe(CQE_REQ_ERR, synd, vendor, opcode, sqn, wc))
            }
        };
        let cq_row = p * MAX_QUEUES + usize::from(sq.cq);
        if let (Some(c), Some(port), Some(r)) = (cqe, ports.get_mut(p), queues.get_mut(cq_row)) {
            // A corrupt CQE (injected): the owner bit of the previous pass. The fault waits
            // for a TX CQE that is written (one a CQ in error loses does not take it).
            let bad_owner = port.faults.tx_bad_owner;
            if post_cqe(&mut r.cq, &mut port.counters, &c, None, bad_owner, io) && bad_owner {
                port.faults.tx_bad_owner = false;
                port.counters.faults_injected += 1;
            }
        }
    }
    if let Some(port) = ports.get_mut(p) {
        if sq.cc != sq.pc && sq.state == QueueState::Ready {
            port.sq_active |= bit;
        } else {
            port.sq_active &= !bit;
        }
        if sq.state != QueueState::Ready {
            port.sq_doorbell &= !bit;
        }
    }
    if let Some(r) = queues.get_mut(row) {
        r.sq = sq;
    }
    (n, moved)
}

/// Whether the WQE at `sq`'s consumer index is a NOP (read without counting it: the WQE is
/// fetched and counted when it executes).
fn next_is_nop<M: BusMemory>(sq: &SqCtx, pool: &[u8], mem: &M) -> bool {
    let ix = u32::from(sq.cc) & ((1u32 << sq.log_size) - 1);
    let mut w0 = [0u8; 4];
    sq.buf
        .addr(pool, u64::from(ix) * WQEBB as u64, 4)
        .is_some_and(|a| mem.dma_read(a, &mut w0).is_ok() && w0[3] == OP_NOP)
}

fn err_cqe(op: u8, synd: u8, vendor: u8, wqe_opcode: u8, qpn: u32, wc: u16) -> [u8; 64] {
    let mut c = [0u8; 64];
    c[54] = vendor;
    c[55] = synd;
    put(
        &mut c,
        56,
        &((u32::from(wqe_opcode) << 24) | (qpn & 0xff_ffff)).to_be_bytes(),
    );
    put(&mut c, 60, &wc.to_be_bytes());
    c[63] = op << 4;
    c
}

/// 802.3x flow control before SQ `bit` of port `p` executes its next WQE ([`wire::hold`];
/// see "Flow control" in the module documentation): the pause quantum is the engine run. A
/// NOP (the driver's wake-up of its own NAPI, e.g. to refill an RQ that is short of buffers)
/// puts nothing on the wire and is never held, or a port in loopback would wait for the
/// buffers the NOP is there to bring. No PAUSE crosses a link whose modes resolve to none
/// (the frame will be dropped, see [`deliver`]). Returns true if the SQ is held.
fn paused<M: BusMemory>(
    ports: &mut [Port],
    queues: &mut [QueueSet],
    p: usize,
    bit: u64,
    sq: &SqCtx,
    pool: &[u8],
    mem: &M,
) -> bool {
    if super::cmd::link::resolve(ports, p) == 0 {
        return false;
    }
    let held = wire::hold(
        ports,
        p,
        |ports, rx| receiver_has_room(ports, queues, rx, mem),
        || next_is_nop(sq, pool, mem),
    );
    if held {
        if let Some(s) = ports.get_mut(p) {
            s.sq_paused |= bit;
        }
    }
    held
}

/// Whether every RQ in port `rx`'s RSS table has at least [`wire::room_needed`]
/// posted WQEs (re-reading the doorbell record of one that looks short).
fn receiver_has_room<M: BusMemory>(
    ports: &mut [Port],
    queues: &mut [QueueSet],
    rx: usize,
    mem: &M,
) -> bool {
    let Some(pp) = ports.get_mut(rx) else {
        return true;
    };
    let mut reach = pp.rx_rqs;
    while reach != 0 {
        let slot = reach.trailing_zeros() as usize;
        reach &= reach - 1;
        let Some(row) = queues.get_mut(rx * MAX_QUEUES + slot) else {
            continue;
        };
        let rq = &mut row.rq;
        if !rq.used || rq.state != QueueState::Ready {
            continue;
        }
        let size = 1u32 << rq.log_size;
        let need = wire::room_needed(size);
        if u32::from(rq.posted.wrapping_sub(rq.cc)) < need {
            if let Some(v) = read_dbr(&mut pp.counters, rq.dbr, mem) {
                let posted = v as u16;
                if u32::from(posted.wrapping_sub(rq.cc)) <= size {
                    rq.posted = posted;
                }
            }
            if u32::from(rq.posted.wrapping_sub(rq.cc)) < need {
                return false;
            }
        }
    }
    true
}

/// Transmits a frame from port `src`: to the peer port over the wire, or to `src`'s own
/// receive side in loopback ([`wire::rx_port`]). Over a wire whose two ports' PTYS settings
/// resolve to no common mode the link is down: dropped as [`wire::route`] drops it when an
/// end is down.
fn deliver<M: BusMemory, I: InterruptSink>(
    ports: &mut [Port],
    queues: &mut [QueueSet],
    src: usize,
    frame: &[u8],
    io: &mut Io<'_, M, I>,
) {
    if super::cmd::link::resolve(ports, src) == 0 {
        if let Some(sp) = ports.get_mut(src) {
            wire::WirePort::count(sp, wire::WireEvent::LinkDown);
        }
        return;
    }
    let Some(dst) = wire::route(ports, src, frame.len()) else {
        return;
    };
    let Some(sp) = ports.get_mut(src) else {
        return;
    };
    sp.counters.tx_packets += 1;
    sp.counters.tx_bytes += frame.len() as u64;
    sp.func.vport.tx(frame);
    if dst != src {
        // Over the wire: through both MACs (PPCNT's IEEE 802.3 counters).
        sp.func.wire.tx(frame);
    }
    let rows = queues.get_mut(dst * MAX_QUEUES..(dst + 1) * MAX_QUEUES);
    if let (Some(port), Some(rows)) = (ports.get_mut(dst), rows) {
        if dst != src {
            port.func.wire.rx(frame);
        }
        receive(port, rows, frame, io);
    }
}
