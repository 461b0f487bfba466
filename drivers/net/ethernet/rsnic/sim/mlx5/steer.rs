// SPDX-License-Identifier: GPL-2.0

//! NIC RX flow steering as the device applies it to a received frame: the frame's outer
//! headers laid out as `fte_match_set_lyr_2_4` ([`image`]), then the walk from the root
//! table ([`walk`]): in each table the entries by flow index, the first whose group's
//! criteria and values match takes the frame (to a TIR, to a table of a higher level, or
//! drops it), a table none matches sends the frame to its miss table, or drops it.
//!
//! The image is the 6.12 `fte_match_set_lyr_2_4` (mlx5_ifc.h) of the frame, byte offsets:
//! `smac` 0x00 (6), `ethertype` 0x06 (the one after the VLAN tags), `dmac` 0x08 (6), the
//! first VLAN tag's `first_prio`/`first_cfi`/`first_vid` 0x0e (its TCI), `ip_protocol` 0x10,
//! `ip_dscp`/`ip_ecn` 0x11 (the TOS / traffic class byte), then bit 0x90 `cvlan_tag` (the
//! first tag is 802.1Q), 0x91 `svlan_tag` (802.1ad), 0x92 `frag` (an IPv4 fragment), 0x93
//! `ip_version` (4 bits), 0x97 `tcp_flags` (9 bits); `tcp_sport`/`tcp_dport` 0x14/0x16,
//! `ttl_hoplimit` 0x1b, `udp_sport`/`udp_dport` 0x1c/0x1e, the source and destination
//! address 0x20/0x30 (16 bytes each, IPv4 in the last 4). `l4_type` and `ipv4_ihl` are not
//! built: a group whose criteria mask them is refused ([`criteria_supported`]).

use super::{Dest, QueueSet, MATCH_LEN, MAX_CHAIN, MAX_QUEUES};
use crate::sim::pkt::{Headers, L3, L4};

/// The bytes of the outer criteria the model does not build: `l4_type` (byte 0x18, bits
/// 7..6), `ipv4_ihl` (byte 0x1a, bits 3..0) and the reserved bits around them.
const UNBUILT: [(usize, u8); 3] = [(0x18, 0xff), (0x19, 0xff), (0x1a, 0xff)];

/// Whether a group's outer criteria mask only fields the model builds.
pub fn criteria_supported(mask: &[u8]) -> bool {
    UNBUILT
        .iter()
        .all(|&(o, m)| mask.get(o).map_or(true, |b| b & m == 0))
}

fn put(img: &mut [u8; MATCH_LEN], off: usize, src: &[u8]) {
    if let Some(d) = img.get_mut(off..off.wrapping_add(src.len())) {
        d.copy_from_slice(src);
    }
}

/// The frame's outer headers as `fte_match_set_lyr_2_4` (see the module documentation).
/// Per frame: no loop but the copies, no allocation.
pub fn image(frame: &[u8], h: &Headers) -> [u8; MATCH_LEN] {
    let mut img = [0u8; MATCH_LEN];
    let at = |o: usize, n: usize| frame.get(o..o.wrapping_add(n)).unwrap_or(&[]);
    put(&mut img, 0x00, at(6, 6));
    put(&mut img, 0x08, at(0, 6));
    // The ethertype after the VLAN tags: the two bytes before the L3 header.
    put(&mut img, 0x06, at(h.l2_len.wrapping_sub(2), 2));
    let tpid = at(12, 2);
    let mut b12 = 0u8;
    if h.l2_len >= 18 && (tpid == [0x81, 0x00] || tpid == [0x88, 0xa8]) {
        put(&mut img, 0x0e, at(14, 2));
        b12 |= if tpid == [0x81, 0x00] { 0x80 } else { 0x40 };
    }
    let l3 = h.l3_off;
    match h.l3 {
        L3::Ipv4 => {
            put(&mut img, 0x11, at(l3 + 1, 1));
            put(&mut img, 0x10, at(l3 + 9, 1));
            put(&mut img, 0x1b, at(l3 + 8, 1));
            put(&mut img, 0x2c, at(l3 + 12, 4));
            put(&mut img, 0x3c, at(l3 + 16, 4));
            let frag = at(l3 + 6, 2);
            if frag.len() == 2 && (frag[0] & 0x3f != 0 || frag[1] != 0) {
                b12 |= 0x20;
            }
            b12 |= 4 << 1;
        }
        L3::Ipv6 => {
            let v = at(l3, 2);
            if v.len() == 2 {
                img[0x11] = (v[0] << 4) | (v[1] >> 4);
            }
            put(&mut img, 0x10, at(l3 + 6, 1));
            put(&mut img, 0x1b, at(l3 + 7, 1));
            put(&mut img, 0x20, at(l3 + 8, 16));
            put(&mut img, 0x30, at(l3 + 24, 16));
            b12 |= 6 << 1;
        }
        L3::None => {}
    }
    let l4 = h.l4_off;
    match h.l4 {
        L4::Tcp => {
            put(&mut img, 0x14, at(l4, 4));
            let f = at(l4 + 12, 2);
            if f.len() == 2 {
                b12 |= f[0] & 1;
                img[0x13] = f[1];
            }
        }
        L4::Udp => put(&mut img, 0x1c, at(l4, 4)),
        L4::None => {}
    }
    img[0x12] = b12;
    img
}

/// The outcome of steering a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// To the TIR in this slot.
    Tir(u8),
    /// Dropped: an entry's drop action, a miss without a miss table, a destination that is
    /// gone, or a walk longer than [`MAX_CHAIN`] tables.
    Drop,
}

/// Walks port `rows`' tables from `root` (slot) for a frame whose image is `img`.
pub fn walk(rows: &[QueueSet], root: usize, img: &[u8; MATCH_LEN]) -> Verdict {
    let mut t = root;
    for _ in 0..MAX_CHAIN {
        let Some(ft) = rows.get(t).map(|r| r.ft).filter(|f| f.used) else {
            return Verdict::Drop;
        };
        let (first, count) = (usize::from(ft.first), usize::from(ft.count));
        let mut hit = None;
        for r in rows.iter().skip(first).take(count.min(MAX_QUEUES)) {
            let Some(e) = rows
                .get(usize::from(r.rx_rule.fte).wrapping_sub(1))
                .map(|q| &q.fte)
            else {
                continue;
            };
            if e.used && usize::from(e.table) == t && e.matches(img) {
                hit = Some(e.dest);
                break;
            }
        }
        match hit {
            Some(Dest::Tir(x)) => return Verdict::Tir(x),
            Some(Dest::Drop) => return Verdict::Drop,
            Some(Dest::Table(x)) => t = usize::from(x),
            None if ft.miss != 0 => t = usize::from(ft.miss - 1),
            None => return Verdict::Drop,
        }
    }
    Verdict::Drop
}
