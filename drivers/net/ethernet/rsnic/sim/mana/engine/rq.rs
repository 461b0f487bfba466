// SPDX-License-Identifier: GPL-2.0

//! The engine's RX side, the device's half of the driver's `hwif/mana/rq.rs`: a frame from the
//! wire or loopback through the vport's RSS table (Toeplitz over the hashed fields) to an RQ,
//! its posted WQE's buffer, VLAN stripping, and the RX CQE (`mana_rxcomp_oob`: checksums,
//! hash type, packet info). Spec D.4 (rsnic-hardware.rst; mana.h, mana_en.c
//! `mana_process_rx_cqe`).

use super::cq::write_cqe;
use super::sq::{named_wq, read_rest, read_ring};
use super::{
    row, Bus, Port, QueueSet, CLIENT_COMPLETION, MANA_MKEY, MAX_QUEUES, MAX_RQE, MAX_RSS,
    RQ_ID_BASE, RX_OKAY, RX_TRUNCATED,
};
use crate::hwif::bytes::{le32, put_le32};
use crate::hwif::hw::{BusMemory, InterruptSink};
use crate::sim::pkt;
use crate::sim::pkt::{L3, L4};

/// Cast of a frame: 0 unicast, 1 broadcast, 2 multicast.
pub(super) fn cast(f: &[u8]) -> u8 {
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

/// The receive side of port `rx`: RSS, RQ WQE, scatter, RX CQE. A stopped port drops the
/// frame.
pub(super) fn receive<M: BusMemory, I: InterruptSink>(
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
        && read_rest(bus.mem, &mut pt.counters, &rq, &mut wqe, size);
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
