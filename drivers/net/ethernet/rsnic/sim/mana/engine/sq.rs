// SPDX-License-Identifier: GPL-2.0

//! The engine's SQ side, the device's half of the driver's `hwif/mana/sq.rs` and `wq.rs`: one
//! WQE read from the ring and validated (its WQ, size, SGEs under the device's `mem_key`),
//! the frame gathered with its offloads (checksums, TSO, VLAN from `mana_tx_oob`) and handed
//! to the wire, and the TX CQE. Spec D.2-D.3 (rsnic-hardware.rst; upstream gdma.h
//! `gdma_wqe`, `gdma_sge`, mana.h `mana_tx_oob`, mana_en.c `mana_start_xmit`).

use super::cq::write_cqe;
use super::{
    deliver, row, Bus, Port, PortCounters, QueueSet, WqCtx, WqeError, BAD_WQ_ID, CLIENT_COMPLETION,
    CQ_ID_BASE, MANA_MKEY, MAX_FRAME, MAX_QUEUES, MAX_SQE, SQ_ID_BASE, TX_OKAY,
};
use crate::hwif::bytes::{le32, put_le32};
use crate::hwif::hw::{BusMemory, InterruptSink};
use crate::sim::pcie::inbound_floor;
use crate::sim::pkt;
use crate::sim::pkt::{L3, L4};

/// Reads the rest of the WQE at `q`'s consumer offset, `size` bytes in all, beyond the 32
/// bytes already in `wqe`.
pub(super) fn read_rest<M: BusMemory>(
    mem: &M,
    c: &mut PortCounters,
    q: &WqCtx,
    wqe: &mut [u8],
    size: u32,
) -> bool {
    size <= 32
        || wqe
            .get_mut(32..size as usize)
            .is_some_and(|rest| read_ring(mem, c, q, q.cons.wrapping_add(32), rest))
}

/// Reads `dst.len()` bytes of a ring at byte offset `off`, wrapping at `size`.
pub(super) fn read_ring<M: BusMemory>(
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
pub(super) fn named_wq(armed: &mut bool, c: &mut PortCounters, id: u32) -> u32 {
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
pub(super) fn exec_wqe<M: BusMemory, I: InterruptSink>(
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
    let rest_ok = read_rest(bus.mem, &mut pt.counters, &sq, &mut wqe, size);
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
