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
//! it to 63 DS = 16 WQEBBs); the whole WQE posted (`num_wqebbs ≤ pc − cc`) and not crossing
//! the end of the ring (stricter than hardware, which wraps: it catches a driver that forgot
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

use super::consts::*;
use super::{CqCtx, Port, PortCounters, QueueSet, QueueState, RqCtx, SqCtx, WqeError};
use super::{MAX_FRAME, MAX_QUEUES, MAX_RQT_SIZE, MAX_RSS, MAX_SESSION, SQN_BASE, SQ_BURST};
use crate::dp::bytes::{be16, be32, be64};
use crate::dp::hw::{BusMemory, DmaAddr, InterruptSink};
use crate::sim::pcie::inbound_floor;
use crate::sim::pkt::{self, L3, L4};
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

/// The decoded eth segment.
struct Eseg {
    cs: u8,
    /// outer L4, outer L3, inner L4, inner L3 offsets in 2-byte words.
    swp: [u8; 4],
    swp_flags: u8,
    mss: u16,
    /// (TPID, TCI) to insert.
    vlan: Option<(u16, u16)>,
    inline_sz: usize,
}

fn eseg(wqe: &[u8]) -> Eseg {
    let ins = be16(wqe, 28);
    let (vlan, inline_sz) = if ins & INSERT_VLAN != 0 {
        let tpid = if ins & 1 != 0 { 0x88a8 } else { 0x8100 };
        (Some((tpid, be16(wqe, 30))), 0)
    } else {
        (None, usize::from(ins))
    };
    Eseg {
        cs: wqe.get(20).copied().unwrap_or(0),
        swp: [
            wqe.get(16).copied().unwrap_or(0),
            wqe.get(17).copied().unwrap_or(0),
            wqe.get(18).copied().unwrap_or(0),
            wqe.get(19).copied().unwrap_or(0),
        ],
        swp_flags: wqe.get(21).copied().unwrap_or(0),
        mss: be16(wqe, 22),
        vlan,
        inline_sz,
    }
}

/// A gather entry of a send WQE.
enum Seg {
    /// Bytes inside the WQE at `off`.
    Inline { off: usize, len: usize },
    /// Bytes in host memory, under memory key `lkey`.
    Data {
        addr: DmaAddr,
        len: usize,
        lkey: u32,
    },
}

/// Decodes the segment at DS index `at` of a WQE of `ds` DS. Returns it and the next index.
fn next_seg(wqe: &[u8], at: usize, ds: usize) -> Result<(Seg, usize), WqeError> {
    let off = at * DS;
    let bc = be32(wqe, off);
    if bc & INLINE_SEG != 0 {
        let len = (bc & !INLINE_SEG) as usize;
        if len == 0 {
            return Err(WqeError::ZeroByteCount);
        }
        let need = (4 + len).div_ceil(DS);
        if at + need > ds {
            return Err(WqeError::BadInline);
        }
        Ok((Seg::Inline { off: off + 4, len }, at + need))
    } else {
        if bc == 0 {
            return Err(WqeError::ZeroByteCount);
        }
        Ok((
            Seg::Data {
                addr: be64(wqe, off + 8),
                len: bc as usize,
                lkey: be32(wqe, off + 4),
            },
            at + 1,
        ))
    }
}

/// Whether `lkey` is a memory key of the port's function: always while the function has
/// none (a driver that uses no memory keys: the device host's test fixtures); from its
/// first CREATE_MKEY on, one of its keys (`index << 8 | variant`).
pub(super) fn lkey_ok(port: &Port, lkey: u32) -> bool {
    port.func.lkey_ok(lkey)
}

/// A data segment under a key that is not the function's: [`WqeError::BadLkey`] (checked
/// before anything of the WQE is sent).
fn check_lkey(port: Option<&Port>, seg: &Seg) -> Result<(), WqeError> {
    match (port, seg) {
        (Some(pt), Seg::Data { lkey, .. }) if !lkey_ok(pt, *lkey) => Err(WqeError::BadLkey),
        _ => Ok(()),
    }
}

/// Copies one segment to `dst[at..]`, reading host memory for a data segment (a read that
/// faults, or an injected [`super::Fault::DmaReadFault`], is [`WqeError::ReadFault`]).
fn gather_seg<M: BusMemory>(
    seg: &Seg,
    wqe: &[u8],
    dst: &mut [u8],
    at: usize,
    port: &mut Port,
    mem: &M,
) -> Result<usize, WqeError> {
    match *seg {
        Seg::Inline { off, len } => {
            let src = wqe.get(off..off + len).ok_or(WqeError::BadInline)?;
            let d = dst.get_mut(at..at + len).ok_or(WqeError::TooLong)?;
            d.copy_from_slice(src);
            Ok(len)
        }
        Seg::Data { addr, len, .. } => {
            let d = dst.get_mut(at..at + len).ok_or(WqeError::TooLong)?;
            port.counters.pcie.dma_read(addr, len as u64);
            if core::mem::take(&mut port.faults.dma_read) {
                port.counters.faults_injected += 1;
                port.counters.dma_faults += 1;
                return Err(WqeError::ReadFault);
            }
            mem.dma_read(addr, d).map_err(|_| WqeError::ReadFault)?;
            Ok(len)
        }
    }
}

/// Inserts a VLAN tag after the MAC addresses of `buf[..len]`; returns the new length.
fn insert_vlan(buf: &mut [u8], len: usize, tpid: u16, tci: u16) -> Result<usize, WqeError> {
    if len < 12 {
        return Err(WqeError::TooShort);
    }
    if len + 4 > buf.len() {
        return Err(WqeError::TooLong);
    }
    buf.copy_within(12..len, 16);
    put(buf, 12, &tpid.to_be_bytes());
    put(buf, 14, &tci.to_be_bytes());
    Ok(len + 4)
}

/// Checksum offload as the eth segment asks for it (inner first, the outer covers it).
/// Returns whether it computed any checksum.
fn apply_csum(pkt: &mut [u8], e: &Eseg) -> bool {
    let inner = e.cs & (CS_L3_INNER | CS_L4_INNER) != 0 && e.swp[3] != 0;
    if inner {
        let h = pkt::headers_at(
            pkt,
            usize::from(e.swp[3]) * 2,
            e.swp_flags & 0x01 != 0,
            usize::from(e.swp[2]) * 2,
            e.swp_flags & 0x02 != 0,
        );
        pkt::fill_checksums(pkt, &h, e.cs & CS_L3_INNER != 0, e.cs & CS_L4_INNER != 0);
    }
    let outer = e.cs & (CS_L3 | CS_L4) != 0;
    if outer {
        let h = pkt::parse(pkt);
        pkt::fill_checksums(pkt, &h, e.cs & CS_L3 != 0, e.cs & CS_L4 != 0);
    }
    inner || outer
}

/// Counts the host buffers a packet is gathered from: a data segment whose address does not
/// continue the previous data segment's starts a new one (inline bytes are none).
#[derive(Default)]
struct Buffers {
    n: u32,
    end: Option<DmaAddr>,
}

impl Buffers {
    fn add(&mut self, seg: &Seg) {
        if let Seg::Data { addr, len, .. } = *seg {
            if self.end != Some(addr) {
                self.n += 1;
            }
            self.end = Some(addr.wrapping_add(len as u64));
        }
    }

    /// 1 if more than one buffer, else 0 (for `tx_gather_pkts`).
    fn gathered(&self) -> u64 {
        u64::from(self.n > 1)
    }
}

/// Pads to the minimum frame size; returns the wire length.
fn pad(buf: &mut [u8], len: usize) -> usize {
    if len < pkt::MIN_FRAME {
        if let Some(z) = buf.get_mut(len..pkt::MIN_FRAME) {
            z.fill(0);
            return pkt::MIN_FRAME;
        }
    }
    len
}

/// Fetches, validates and executes the WQE at the SQ's consumer counter. Returns (WQEBBs,
/// CQE requested) or (error, the WQE's opcode byte).
fn exec_wqe<M: BusMemory, I: InterruptSink>(
    ports: &mut [Port],
    queues: &mut [QueueSet],
    p: usize,
    sq: &SqCtx,
    sqn: u32,
    bufs: &mut Bufs<'_>,
    io: &mut Io<'_, M, I>,
) -> Result<(u16, bool), (WqeError, u8)> {
    let Bufs { frame, gather, wqe } = bufs;
    let size = 1u32 << sq.log_size;
    let ix = u32::from(sq.cc) & (size - 1);
    let off = u64::from(ix) * WQEBB as u64;
    let addr = sq.buf.addr(io.pool, off, WQEBB);
    {
        let Some(port) = ports.get_mut(p) else {
            return Err((WqeError::ReadFault, 0));
        };
        let a = addr.unwrap_or(0);
        port.counters.pcie.dma_read(a, WQEBB as u64);
        port.counters.wqe_bytes += WQEBB as u64;
        if addr.is_none() || io.mem.dma_read(a, &mut wqe[..WQEBB]).is_err() {
            return Err((WqeError::ReadFault, 0));
        }
    }
    let w0 = be32(&wqe[..], 0);
    let opcode = w0 as u8;
    let fail = |e: WqeError| (e, opcode);
    let min_ds = match opcode {
        OP_NOP => 1,
        OP_SEND | OP_LSO => 2,
        OP_ENHANCED_MPSW if io.mpwqe => 3,
        _ => return Err(fail(WqeError::BadOpcode)),
    };
    if w0 >> 24 != 0 {
        return Err(fail(WqeError::BadOpmod));
    }
    if (w0 >> 8) as u16 != sq.cc {
        return Err(fail(WqeError::BadIndex));
    }
    let w1 = be32(&wqe[..], 4);
    if w1 >> 8 != sqn {
        return Err(fail(WqeError::BadSqn));
    }
    let ds = (w1 & 0x3f) as usize;
    if ds < min_ds {
        return Err(fail(WqeError::BadDsCount));
    }
    let fm_ce_se = wqe[11];
    let nwqebbs = ds.div_ceil(4) as u32;
    if nwqebbs > u32::from(sq.pc.wrapping_sub(sq.cc)) {
        return Err(fail(WqeError::NotPosted));
    }
    if ix + nwqebbs > size {
        return Err(fail(WqeError::CrossesRingEnd));
    }
    let bytes = ds * DS;
    if bytes > WQEBB {
        let Some(port) = ports.get_mut(p) else {
            return Err(fail(WqeError::ReadFault));
        };
        // The rest of the WQE may lie on the next page of a page list.
        let rest = off + WQEBB as u64;
        let at = sq.buf.at(io.pool, rest).map_or(0, |(a, _)| a);
        port.counters.pcie.dma_read(at, (bytes - WQEBB) as u64);
        port.counters.wqe_bytes += (bytes - WQEBB) as u64;
        let dst = wqe
            .get_mut(WQEBB..bytes)
            .ok_or(fail(WqeError::BadDsCount))?;
        sq.buf
            .read(io.pool, io.mem, rest, dst)
            .map_err(|_| fail(WqeError::ReadFault))?;
    }
    let w = wqe.get(..bytes).ok_or(fail(WqeError::BadDsCount))?;
    // An SQ with a minimum inline mode (sqc.min_wqe_inline_mode, at least L2) needs the
    // Ethernet header inline: a SEND/LSO without it is refused, and so is an MPWQE with a
    // packet sent by address (its shared eth seg inlines nothing; a packet inlined whole in
    // its own inline segment carries its headers). Modes IP and TCP/UDP are enforced as L2.
    if sq.min_inline != 0
        && opcode != OP_NOP
        && opcode != OP_ENHANCED_MPSW
        && eseg(w).inline_sz < pkt::ETH_HLEN
    {
        return Err(fail(WqeError::BadInline));
    }
    let all_inline = sq.min_inline != 0;
    let r = match opcode {
        OP_NOP => {
            if let Some(port) = ports.get_mut(p) {
                port.counters.nop_wqes += 1;
            }
            Ok(())
        }
        OP_ENHANCED_MPSW => exec_mpwqe(ports, queues, p, w, ds, all_inline, gather, io),
        _ => exec_regular(ports, queues, p, w, ds, opcode == OP_LSO, frame, gather, io),
    };
    r.map_err(fail)?;
    Ok((nwqebbs as u16, fm_ce_se & CQ_UPDATE != 0))
}

/// SEND or LSO.
#[allow(clippy::too_many_arguments)]
fn exec_regular<M: BusMemory, I: InterruptSink>(
    ports: &mut [Port],
    queues: &mut [QueueSet],
    p: usize,
    w: &[u8],
    ds: usize,
    lso: bool,
    frame: &mut [u8],
    gather: &mut [u8],
    io: &mut Io<'_, M, I>,
) -> Result<(), WqeError> {
    let e = eseg(w);
    if lso {
        if e.mss == 0 {
            return Err(WqeError::BadMss);
        }
        if e.inline_sz == 0 {
            return Err(WqeError::LsoHeaders);
        }
    } else if e.mss != 0 {
        return Err(WqeError::BadMss);
    }
    // The inline header starts at byte 30 (inline_hdr.start) and runs on into the next DS.
    if 30 + e.inline_sz > ds * DS {
        return Err(WqeError::BadInline);
    }
    let first = if e.inline_sz <= 2 {
        2
    } else {
        2 + (e.inline_sz - 2).div_ceil(DS)
    };
    // Pass 1: structure and lengths, nothing read from host memory yet.
    let vlan_len = if e.vlan.is_some() { 4 } else { 0 };
    let mut total = e.inline_sz + vlan_len;
    let mut at = first;
    while at < ds {
        let (seg, next) = next_seg(w, at, ds)?;
        check_lkey(ports.get(p), &seg)?;
        total = total.saturating_add(match seg {
            Seg::Inline { len, .. } | Seg::Data { len, .. } => len,
        });
        at = next;
    }
    if total < pkt::ETH_HLEN {
        return Err(WqeError::TooShort);
    }
    if total > gather.len() || (!lso && total > MAX_FRAME) {
        return Err(WqeError::TooLong);
    }
    // Pass 2: gather.
    let Some(port) = ports.get_mut(p) else {
        return Ok(());
    };
    let mut len = e.inline_sz;
    put(gather, 0, w.get(30..30 + len).unwrap_or(&[]));
    let mut at = first;
    let mut bufs = Buffers::default();
    while at < ds {
        let (seg, next) = next_seg(w, at, ds)?;
        len += gather_seg(&seg, w, gather, len, port, io.mem)?;
        bufs.add(&seg);
        at = next;
    }
    let host_len = len;
    if let Some((tpid, tci)) = e.vlan {
        len = insert_vlan(gather, len, tpid, tci)?;
    }
    if !lso {
        port.counters.tx_vlan_inserted += u64::from(e.vlan.is_some());
        port.counters.send_wqes += 1;
        port.counters.tx_gather_pkts += bufs.gathered();
        port.counters.tx_floor_in_bytes += inbound_floor(host_len as u64);
        let pktbuf = gather.get_mut(..len).ok_or(WqeError::TooLong)?;
        port.counters.tx_csum_offload += u64::from(apply_csum(pktbuf, &e));
        let len = pad(gather, len);
        deliver(ports, queues, p, gather.get(..len).unwrap_or(&[]), io);
        return Ok(());
    }
    // LSO: the inline part must hold every header.
    let sup = gather.get(..len).ok_or(WqeError::TooLong)?;
    let h = pkt::parse_gso(sup);
    let hdr = h.l4_off + h.l4_hdr_len;
    if h.l4 == L4::None || hdr > e.inline_sz {
        return Err(WqeError::LsoHeaders);
    }
    let mss = usize::from(e.mss);
    let payload = len - hdr;
    if hdr + mss.min(payload) > MAX_FRAME || hdr + mss.min(payload) > frame.len() {
        return Err(WqeError::TooLong);
    }
    let nseg = if payload == 0 {
        1
    } else {
        payload.div_ceil(mss)
    };
    if nseg > usize::from(u16::MAX) {
        return Err(WqeError::TooLong);
    }
    port.counters.lso_wqes += 1;
    port.counters.lso_segs += nseg as u64;
    // Every segment carries the tag (it is in the headers each one repeats).
    if e.vlan.is_some() {
        port.counters.tx_vlan_inserted += nseg as u64;
    }
    // fix_segment fills every segment's checksums.
    port.counters.tx_csum_offload += nseg as u64;
    port.counters.tx_gather_pkts += bufs.gathered();
    port.counters.tx_floor_in_bytes += inbound_floor(host_len as u64);
    for i in 0..nseg {
        let off = i * mss;
        let chunk = mss.min(payload - off);
        let seg_len = hdr + chunk;
        put(frame, 0, sup.get(..hdr).unwrap_or(&[]));
        put(
            frame,
            hdr,
            sup.get(hdr + off..hdr + off + chunk).unwrap_or(&[]),
        );
        if let Some(s) = frame.get_mut(..seg_len) {
            pkt::fix_segment(s, &h, i as u16, off as u32, i + 1 == nseg);
        }
        let wire = pad(frame, seg_len);
        deliver(ports, queues, p, frame.get(..wire).unwrap_or(&[]), io);
    }
    Ok(())
}

/// Enhanced multi-packet send WQE: one packet per segment after the eth segment. With
/// `all_inline` (an SQ with a minimum inline mode) every packet must be an inline segment.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn exec_mpwqe<M: BusMemory, I: InterruptSink>(
    ports: &mut [Port],
    queues: &mut [QueueSet],
    p: usize,
    w: &[u8],
    ds: usize,
    all_inline: bool,
    gather: &mut [u8],
    io: &mut Io<'_, M, I>,
) -> Result<(), WqeError> {
    let e = eseg(w);
    if e.inline_sz != 0 {
        return Err(WqeError::BadInline);
    }
    if e.mss != 0 {
        return Err(WqeError::BadMss);
    }
    let vlan_len = if e.vlan.is_some() { 4 } else { 0 };
    // Pass 1: every packet's structure and length.
    let mut at = 2;
    while at < ds {
        let (seg, next) = next_seg(w, at, ds)?;
        check_lkey(ports.get(p), &seg)?;
        let host_len = match seg {
            Seg::Data { .. } if all_inline => return Err(WqeError::BadInline),
            Seg::Inline { len, .. } | Seg::Data { len, .. } => len,
        };
        let len = host_len + vlan_len;
        // A tag goes in after the two MAC addresses: they must be there (insert_vlan).
        if len < pkt::ETH_HLEN || (vlan_len != 0 && host_len < 12) {
            return Err(WqeError::TooShort);
        }
        if len > MAX_FRAME || len > gather.len() {
            return Err(WqeError::TooLong);
        }
        at = next;
    }
    // Pass 2: send them in order.
    let mut at = 2;
    while at < ds {
        let (seg, next) = next_seg(w, at, ds)?;
        let Some(port) = ports.get_mut(p) else {
            return Ok(());
        };
        let mut len = gather_seg(&seg, w, gather, 0, port, io.mem)?;
        port.counters.mpwqe_pkts += 1;
        port.counters.tx_floor_in_bytes += inbound_floor(len as u64);
        if let Some((tpid, tci)) = e.vlan {
            len = insert_vlan(gather, len, tpid, tci)?;
            port.counters.tx_vlan_inserted += 1;
        }
        if let Some(pktbuf) = gather.get_mut(..len) {
            port.counters.tx_csum_offload += u64::from(apply_csum(pktbuf, &e));
        }
        let len = pad(gather, len);
        deliver(ports, queues, p, gather.get(..len).unwrap_or(&[]), io);
        at = next;
    }
    // Counted once the whole WQE succeeded: a WQE that faults while gathering is a
    // rejected WQE (`wqe_errors`), not a good one too.
    if let Some(port) = ports.get_mut(p) {
        port.counters.mpwqe_wqes += 1;
    }
    Ok(())
}

/// 802.3x flow control before SQ `bit` of port `p` executes its next WQE ([`wire::hold`];
/// see "Flow control" in the module documentation): the pause quantum is the engine run. A
/// NOP (the driver's wake-up of its own NAPI, e.g. to refill an RQ that is short of buffers)
/// puts nothing on the wire and is never held, or a port in loopback would wait for the
/// buffers the NOP is there to bring. Returns true if the SQ is held.
fn paused<M: BusMemory>(
    ports: &mut [Port],
    queues: &mut [QueueSet],
    p: usize,
    bit: u64,
    sq: &SqCtx,
    pool: &[u8],
    mem: &M,
) -> bool {
    let held = wire::hold(
        ports,
        p,
        |ports, rx| receiver_has_room(ports, queues, rx, mem),
        || next_is_nop(sq, pool, mem),
    );
    if held {
        if let Some(s) = ports.get_mut(p) {
            s.sq_paused |= bit;
            s.counters.tx_pause += 1;
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
/// receive side in loopback ([`wire::rx_port`]).
fn deliver<M: BusMemory, I: InterruptSink>(
    ports: &mut [Port],
    queues: &mut [QueueSet],
    src: usize,
    frame: &[u8],
    io: &mut Io<'_, M, I>,
) {
    let dst = wire::rx_port(ports, src);
    let Some(sp) = ports.get_mut(src) else {
        return;
    };
    let Some(dst) = dst else {
        sp.counters.tx_link_down_drops += 1;
        return;
    };
    sp.counters.tx_packets += 1;
    sp.counters.tx_bytes += frame.len() as u64;
    sp.func.vport.tx(frame);
    if dst == src {
        sp.counters.loopback_packets += 1;
        sp.counters.loopback_bytes += frame.len() as u64;
    } else {
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

/// The receive side of a port (`rows` = its queue tables): RSS, RQ WQE, scatter, CQE. A
/// stopped port drops the frame.
fn receive<M: BusMemory, I: InterruptSink>(
    port: &mut Port,
    rows: &mut [QueueSet],
    frame: &[u8],
    io: &mut Io<'_, M, I>,
) {
    if port.stopped() {
        port.counters.rx_stopped += 1;
        port.stop_hit();
        return;
    }
    // A VF's vport lets through what its driver's address lists and promiscuous flags
    // allow (the eswitch's part), before the function's own steering.
    if !port.func.vport_accepts(frame) {
        port.counters.rx_vport_filtered += 1;
        return;
    }
    let h = pkt::parse(frame);
    let mut steering_drop = false;
    let Some((slot, hash, hash_type)) = steer(port, rows, frame, &h, &mut steering_drop) else {
        // Every frame that found no RQ; those the flow tables dropped also apart.
        port.counters.rx_no_rq_drops += 1;
        if steering_drop {
            port.counters.rx_steering_drops += 1;
        }
        return;
    };
    let counters = &mut port.counters;
    let Some(mut rq) = rows.get(slot).map(|r| r.rq) else {
        counters.rx_no_rq_drops += 1;
        return;
    };
    if !rq.used || rq.state != QueueState::Ready {
        counters.rx_no_rq_drops += 1;
        return;
    }
    let size = 1u32 << rq.log_size;
    if rq.cc == rq.posted {
        if let Some(v) = read_dbr(counters, rq.dbr, io.mem) {
            let posted = v as u16;
            if u32::from(posted.wrapping_sub(rq.cc)) > size {
                counters.dbr_invalid += 1;
            } else {
                rq.posted = posted;
            }
        }
    }
    let cqe = if rq.cc == rq.posted {
        counters.rx_out_of_buffer += 1;
        // The RQ's Q counter (`out_of_buffer`).
        if let Some(c) = usize::from(rq.counter)
            .checked_sub(1)
            .and_then(|i| port.func.qcnt_oob.get_mut(i))
        {
            *c = c.wrapping_add(1);
        }
        None
    } else {
        let wc = rq.cc;
        rq.cc = rq.cc.wrapping_add(1);
        let injected = port.faults.rx_err.take();
        let bad_wc = injected.is_none() && core::mem::take(&mut port.faults.rx_bad_wc);
        let bad_len = injected.is_none() && !bad_wc && core::mem::take(&mut port.faults.rx_bad_len);
        if injected.is_some() || bad_wc || bad_len {
            counters.faults_injected += 1;
        }
        let keys = &port.func;
        // The RQ strips an outer C-VLAN tag unless its `vsd` is set: the host gets the
        // frame without the 4 bytes after the MACs.
        let tag = if rq.strip_vlan { c_tag(frame) } else { None };
        let parts = match (tag, frame.get(..12), frame.get(16..)) {
            (Some(_), Some(head), Some(rest)) => [head, rest],
            _ => [frame, &[][..]],
        };
        let scattered = || scatter(&rq, wc, &parts, counters, keys, io.pool, io.mem);
        match injected.map_or_else(scattered, Err) {
            Ok(()) => {
                // The vport and the device count the frame as it came off the wire.
                port.func.vport.rx(frame);
                counters.rx_packets += 1;
                counters.rx_bytes += frame.len() as u64;
                counters.rx_cqes += 1;
                // A corrupt CQE (injected): it names a WQE the driver does not expect.
                let named = if bad_wc { wc.wrapping_add(7) } else { wc };
                let mut c = rx_cqe(frame, &h, hash, hash_type, named);
                if let Some(tci) = tag {
                    // `cqe_has_vlan` (the cv bit of `l4_l3_hdr_type`), `vlan_info` the
                    // whole TCI, `byte_cnt` what the host got.
                    c[CQE_L4_L3_HDR_TYPE] |= CQE_CV;
                    put(&mut c, CQE_VLAN_INFO, &tci.to_be_bytes());
                    put(&mut c, 44, &((frame.len() - 4) as u32).to_be_bytes());
                    counters.rx_vlan_stripped += 1;
                }
                if bad_len {
                    put(&mut c, 44, &0x0010_0000u32.to_be_bytes());
                }
                Some((c, !(bad_wc || bad_len)))
            }
            Err(synd) => {
                if injected.is_some() {
                    // The syndromes that stop the RQ (mlx5e's cqe_syndrome_needs_recover);
                    // any other consumes the WQE and the RQ goes on.
                    if matches!(synd, SYND_LOCAL_QP_OP | SYND_LOCAL_PROT | SYND_WR_FLUSH) {
                        rq.state = QueueState::Error;
                    }
                } else if synd == SYND_LOCAL_PROT {
                    rq.state = QueueState::Error;
                    counters.rx_dma_faults += 1;
                } else {
                    counters.rx_too_long += 1;
                }
                counters.rx_err_cqes += 1;
                Some((err_cqe(CQE_RESP_ERR, synd, 0, 0, 0, wc), false))
            }
        }
    };
    if let Some(r) = rows.get_mut(slot) {
        r.rq = rq;
    }
    if let (Some((c, ok)), Some(r)) = (cqe, rows.get_mut(usize::from(rq.cq))) {
        let key = ok.then_some(slot as u8);
        post_cqe(&mut r.cq, counters, &c, key, false, io);
    }
}

/// Where a received frame goes: (RQ slot, hash, CQE hash type), or `None` (dropped: no
/// table, an empty RQT, or the flow tables dropped it: then `*steering_drop` is set). The
/// Rust API's table hashes the addresses and TCP/UDP ports with [`pkt::RSS_KEY`]; without
/// a root flow table the function's first indirect TIR takes every frame
/// ([`Port::rx_legacy`]); otherwise the walk through the flow tables ([`super::steer`])
/// picks a TIR. A direct TIR names its RQ (no hash), an indirect one hashes the fields its
/// selector names with its key (every address and port in the legacy case) and takes entry
/// `hash % size` of its RQT. Per packet: no allocation; the walk is bounded.
fn steer(
    port: &Port,
    rows: &[QueueSet],
    frame: &[u8],
    h: &pkt::Headers,
    steering_drop: &mut bool,
) -> Option<(usize, u32, u8)> {
    if port.rx_api {
        let n = usize::from(port.rss_len).min(MAX_RSS);
        if n == 0 {
            return None;
        }
        let (hash, ty) = pkt::rss_hash_key(frame, h, &pkt::RSS_KEY);
        let slot = port.rss.get(hash as usize % n)?;
        return Some((usize::from(*slot), hash, ty));
    }
    let t = if port.rx_legacy {
        port.func.rss_tir
    } else {
        let img = super::steer::image(frame, h);
        match super::steer::walk(rows, usize::from(port.func.root_ft.wrapping_sub(1)), &img) {
            super::steer::Verdict::Tir(x) => x.wrapping_add(1),
            super::steer::Verdict::Drop => {
                *steering_drop = true;
                return None;
            }
        }
    };
    let tir = &rows.get(usize::from(t).checked_sub(1)?)?.tir;
    if !tir.used {
        return None;
    }
    if !tir.indirect {
        return Some((usize::from(tir.inline_rq), 0, 0));
    }
    let (hash, ty) = if port.rx_legacy {
        pkt::rss_hash_key(frame, h, &tir.key)
    } else if tir.xor8 {
        pkt::rss_hash_xor8(frame, h, tir.sel)
    } else if tir.symmetric {
        pkt::rss_hash_sym(frame, h, &tir.key, tir.sel)
    } else {
        pkt::rss_hash_sel(frame, h, &tir.key, tir.sel)
    };
    let rqt = &rows.get(usize::from(tir.rqt))?.rqt;
    let n = usize::from(rqt.len).min(MAX_RQT_SIZE);
    if !rqt.used || n == 0 {
        return None;
    }
    let slot = rqt.rqs.get(hash as usize % n)?;
    Some((usize::from(*slot), hash, ty))
}

/// `l4_l3_hdr_type`: byte 29 of an RX CQE.
const CQE_L4_L3_HDR_TYPE: usize = 29;
/// `cqe_has_vlan`: bit 0 of `l4_l3_hdr_type`, the device stripped a C-VLAN tag.
const CQE_CV: u8 = 0x1;
/// `vlan_info`: bytes 30..32 of an RX CQE (BE16), the stripped tag's TCI.
const CQE_VLAN_INFO: usize = 30;

/// The TCI of the outer 802.1Q tag (TPID 0x8100 right after the MACs) of a frame long
/// enough to carry one, as ConnectX strips it; an 802.1ad (0x88a8) outer tag is not.
fn c_tag(frame: &[u8]) -> Option<u16> {
    match (frame.get(12..14), frame.get(14..16)) {
        (Some(&[0x81, 0x00]), Some(&[t0, t1])) if frame.len() >= 18 => {
            Some(u16::from_be_bytes([t0, t1]))
        }
        _ => None,
    }
}

/// Writes bytes `off..off + n` of the frame made of `parts` (in order) to bus address `a`.
fn write_parts<M: BusMemory>(
    mem: &M,
    a: DmaAddr,
    parts: &[&[u8]; 2],
    off: usize,
    n: usize,
) -> Result<(), u8> {
    let end = off + n;
    let (mut pos, mut base, mut addr) = (off, 0usize, a);
    for part in parts {
        let pend = base + part.len();
        if pos < end && pos < pend {
            let take = end.min(pend) - pos;
            let src = part
                .get(pos - base..pos - base + take)
                .ok_or(SYND_LOCAL_LENGTH)?;
            mem.dma_write(addr, src).map_err(|_| SYND_LOCAL_PROT)?;
            addr = addr.wrapping_add(take as u64);
            pos += take;
        }
        base = pend;
    }
    Ok(())
}

/// Reads the RX WQE at the RQ's consumer counter and writes the frame, `parts` one after
/// the other (the frame around a stripped tag), into its buffers. Errors are syndromes.
fn scatter<M: BusMemory>(
    rq: &RqCtx,
    wc: u16,
    parts: &[&[u8]; 2],
    counters: &mut PortCounters,
    keys: &super::cmd::Func,
    pool: &[u8],
    mem: &M,
) -> Result<(), u8> {
    let size = 1u32 << rq.log_size;
    let stride = 1usize << rq.log_stride;
    let mut w = [0u8; 256];
    let wbuf = w.get_mut(..stride).ok_or(SYND_LOCAL_LENGTH)?;
    let ix = u32::from(wc) & (size - 1);
    let addr = rq.buf.addr(pool, u64::from(ix) << rq.log_stride, stride);
    counters.pcie.dma_read(addr.unwrap_or(0), stride as u64);
    let addr = addr.ok_or(SYND_LOCAL_PROT)?;
    mem.dma_read(addr, wbuf).map_err(|_| SYND_LOCAL_PROT)?;
    let nsegs = stride / DS;
    let mut cap = 0usize;
    let mut used = 0;
    for i in 0..nsegs {
        let len = (be32(wbuf, i * DS) & 0x7fff_ffff) as usize;
        let lkey = be32(wbuf, i * DS + 4);
        if len == 0 || lkey == TERMINATE_LKEY {
            break;
        }
        if !keys.lkey_ok(lkey) {
            counters.mkey_errors += 1;
            return Err(SYND_LOCAL_PROT);
        }
        cap = cap.saturating_add(len);
        used += 1;
    }
    let total = parts[0].len() + parts[1].len();
    if total > cap {
        return Err(SYND_LOCAL_LENGTH);
    }
    let mut off = 0;
    for i in 0..used {
        if off >= total {
            break;
        }
        let len = (be32(wbuf, i * DS) & 0x7fff_ffff) as usize;
        let a = be64(wbuf, i * DS + 8);
        let n = len.min(total - off);
        counters.pcie.dma_write(a, n as u64);
        write_parts(mem, a, parts, off, n)?;
        off += n;
        counters.rx_segs += 1;
        if i == 1 {
            counters.rx_scatter_pkts += 1;
        }
    }
    Ok(())
}

fn rx_cqe(frame: &[u8], h: &pkt::Headers, hash: u32, hash_type: u8, wc: u16) -> [u8; 64] {
    let mut c = [0u8; 64];
    put(&mut c, 12, &hash.to_be_bytes());
    c[16] = hash_type;
    let csum = pkt::fold(pkt::sum16(frame.get(h.l2_len..).unwrap_or(&[]), 0));
    put(&mut c, 20, &csum.to_be_bytes());
    let (l3_ok, l4_ok) = pkt::verify_checksums(frame, h);
    c[28] = L2_OK | if l3_ok { L3_OK } else { 0 } | if l4_ok { L4_OK } else { 0 };
    let l3t: u8 = match h.l3 {
        L3::Ipv6 => 1,
        L3::Ipv4 => 2,
        L3::None => 0,
    };
    let l4t: u8 = match h.l4 {
        L4::Udp => 2,
        L4::Tcp => {
            let ack = frame.get(h.l4_off + 13).is_some_and(|f| f & 0x10 != 0);
            let data = h.l3_end > h.l4_off + h.l4_hdr_len;
            match (ack, data) {
                (true, true) => 4,
                (true, false) => 3,
                _ => 1,
            }
        }
        L4::None => 0,
    };
    c[29] = (l4t << 4) | (l3t << 2);
    put(&mut c, 44, &(frame.len() as u32).to_be_bytes());
    put(&mut c, 60, &wc.to_be_bytes());
    c[63] = CQE_RESP_SEND << 4;
    c
}

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

fn owner(cq: &CqCtx, idx: u32) -> u8 {
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
fn post_cqe<M: BusMemory, I: InterruptSink>(
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
fn flush_session<M: BusMemory, I: InterruptSink>(
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
/// moderated CQ fires only once moderation lets it ([`super::Moder::due`]); until then it
/// stays armed and held, and the engine looks at it again on every run.
fn check_arm<M, I: InterruptSink>(
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
