// SPDX-License-Identifier: GPL-2.0

//! The engine's SQ side, the device's half of the driver's `hwif/mlx5/sq.rs`, `seg.rs` and
//! `tx.rs`: one WQE fetched, validated and executed (SEND, LSO, ENHANCED_MPSW, NOP): the
//! ctrl and eth segments, inline headers, data and inline segments with their lkeys, the
//! gather, VLAN insertion, checksum offload and segmentation, and the frames handed to the
//! wire. Spec part A (rsnic-hardware.rst; mlx5 `mlx5_wqe_ctrl_seg`, `mlx5_wqe_eth_seg`,
//! `mlx5_wqe_data_seg` of include/linux/mlx5/qp.h, en/txrx.h, en_tx.c).

use super::{deliver, put, Bufs, Io, Port, QueueSet, SqCtx, WqeError, MAX_FRAME};
use crate::hwif::bytes::{be16, be32, be64};
use crate::hwif::hw::{BusMemory, DmaAddr, InterruptSink};
use crate::sim::mlx5::consts::*;
use crate::sim::pcie::inbound_floor;
use crate::sim::pkt;
use crate::sim::pkt::L4;

/// The decoded eth segment.
struct Eseg {
    cs: u8,
    /// outer L4, outer L3, inner L4, inner L3 offsets in 2-byte words.
    pub(super) swp: [u8; 4],
    swp_flags: u8,
    pub(super) mss: u16,
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
pub(in crate::sim::mlx5) fn lkey_ok(port: &Port, lkey: u32) -> bool {
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
/// faults, or an injected [`crate::sim::mlx5::Fault::DmaReadFault`], is [`WqeError::ReadFault`]).
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
    pub(super) n: u32,
    pub(super) end: Option<DmaAddr>,
}

impl Buffers {
    pub(super) fn add(&mut self, seg: &Seg) {
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
pub(super) fn exec_wqe<M: BusMemory, I: InterruptSink>(
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
    if ds < min_ds || ds * DS > io.max_wqe_sz {
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
