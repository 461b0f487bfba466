// SPDX-License-Identifier: GPL-2.0

//! The engine's RX side, the device's half of the driver's `hwif/mlx5/rq.rs`: a frame from the
//! wire or loopback through the vport's filter, the flow tables or RSS to an RQ, its WQE's
//! scatter list, VLAN stripping, and the RX CQE (checksums, hash, `l4_l3_hdr_type`,
//! `vlan_info`). Spec parts B and C (rsnic-hardware.rst; `mlx5_cqe64` of
//! include/linux/mlx5/device.h, en_rx.c).

use super::cq::post_cqe;
use super::{
    err_cqe, put, read_dbr, Io, Port, PortCounters, QueueSet, QueueState, RqCtx, MAX_RQT_SIZE,
    MAX_RSS,
};
use crate::hwif::bytes::{be32, be64};
use crate::hwif::hw::{BusMemory, DmaAddr, InterruptSink};
use crate::sim::mlx5::consts::*;
use crate::sim::pkt;
use crate::sim::pkt::{L3, L4};

/// The receive side of a port (`rows` = its queue tables): RSS, RQ WQE, scatter, CQE. A
/// stopped port drops the frame.
pub(super) fn receive<M: BusMemory, I: InterruptSink>(
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
/// ([`Port::rx_legacy`]); otherwise the walk through the flow tables ([`crate::sim::mlx5::steer`])
/// picks a TIR. A direct TIR names its RQ (no hash), an indirect one hashes the fields its
/// selector names with its key (every address and port in the legacy case) and takes entry
/// `hash % size` of its RQT. Per packet: no allocation; the walk is bounded.
pub(super) fn steer(
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
        let img = crate::sim::mlx5::steer::image(frame, h);
        match crate::sim::mlx5::steer::walk(
            rows,
            usize::from(port.func.root_ft.wrapping_sub(1)),
            &img,
        ) {
            crate::sim::mlx5::steer::Verdict::Tir(x) => x.wrapping_add(1),
            crate::sim::mlx5::steer::Verdict::Drop => {
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
pub(super) fn scatter<M: BusMemory>(
    rq: &RqCtx,
    wc: u16,
    parts: &[&[u8]; 2],
    counters: &mut PortCounters,
    keys: &crate::sim::mlx5::cmd::Func,
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
    // check_sum: the ones' complement sum (not inverted) of the IP datagram, from its header
    // to the end its length field gives: neither the L2 header with its VLAN tags nor the
    // padding or trailer after the datagram, which mlx5e adds itself
    // (`mlx5e_skb_csum_fixup`); a frame that is not IP: every byte after the L2 header.
    let covered = match h.l3 {
        L3::Ipv4 | L3::Ipv6 => frame.get(h.l3_off..h.l3_end),
        L3::None => frame.get(h.l2_len..),
    };
    let csum = pkt::fold(pkt::sum16(covered.unwrap_or(&[]), 0));
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
