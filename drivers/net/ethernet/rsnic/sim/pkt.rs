// SPDX-License-Identifier: GPL-2.0

//! Packet handling a NIC does in hardware: header parsing, Internet checksums (RFC 1071),
//! TCP/UDP segmentation and the Toeplitz RSS hash.
//!
//! The parser understands Ethernet with up to two VLAN tags (0x8100 / 0x88a8), IPv4 (with
//! options; fragments carry no L4) and IPv6 without extension headers, then TCP or UDP.
//! Anything else is "no L3" / "no L4": checksum offload then leaves the packet alone and the
//! receive side reports no L3/L4 checksum status.

use crate::hwif::bytes::{be16, be32, put_be16};

/// Ethernet header length.
pub const ETH_HLEN: usize = 14;
/// Minimum Ethernet frame without FCS: shorter frames are zero-padded by the sender's MAC.
pub const MIN_FRAME: usize = 60;

/// Network layer of a parsed packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum L3 {
    /// Not IP, or a malformed IP header.
    None,
    /// IPv4.
    Ipv4,
    /// IPv6 (no extension headers).
    Ipv6,
}

/// Transport layer of a parsed packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum L4 {
    /// Not TCP/UDP, a fragment, or a malformed header.
    None,
    /// TCP.
    Tcp,
    /// UDP.
    Udp,
}

/// Header offsets found by [`parse`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Headers {
    /// End of the L2 header (Ethernet plus VLAN tags).
    pub l2_len: usize,
    /// Network layer.
    pub l3: L3,
    /// Offset of the IP header.
    pub l3_off: usize,
    /// End of the IP datagram according to its length field (excludes trailing padding).
    pub l3_end: usize,
    /// Transport layer.
    pub l4: L4,
    /// Offset of the TCP/UDP header.
    pub l4_off: usize,
    /// Length of the TCP/UDP header (TCP data offset × 4, or 8).
    pub l4_hdr_len: usize,
}

/// Parses the headers of an Ethernet frame. Never fails: unknown or malformed layers are
/// reported as [`L3::None`] / [`L4::None`].
pub fn parse(pkt: &[u8]) -> Headers {
    parse_inner(pkt, true)
}

/// Like [`parse`] for a segmentation super packet: the IP length fields are not trusted (a
/// super packet may exceed them); the datagram is taken to run to the end of `pkt`.
pub fn parse_gso(pkt: &[u8]) -> Headers {
    parse_inner(pkt, false)
}

/// Headers at known offsets (the software-parser offsets of a tunnelled packet): IPv4/IPv6
/// at `l3_off`, TCP/UDP at `l4_off` (none if `l4_off <= l3_off`). The datagram end comes from
/// the IP length field, clamped to the packet.
pub fn headers_at(pkt: &[u8], l3_off: usize, ipv6: bool, l4_off: usize, udp: bool) -> Headers {
    let l3_end = if ipv6 {
        l3_off + 40 + usize::from(be16(pkt, l3_off + 4))
    } else {
        l3_off + usize::from(be16(pkt, l3_off + 2))
    };
    let mut h = Headers {
        l2_len: l3_off,
        l3: if ipv6 { L3::Ipv6 } else { L3::Ipv4 },
        l3_off,
        l3_end: l3_end.min(pkt.len()),
        l4: L4::None,
        l4_off: 0,
        l4_hdr_len: 0,
    };
    if l4_off > l3_off && l4_off < h.l3_end {
        h.l4_off = l4_off;
        if udp {
            h.l4 = L4::Udp;
            h.l4_hdr_len = 8;
        } else {
            h.l4 = L4::Tcp;
            h.l4_hdr_len = usize::from(pkt.get(l4_off + 12).copied().unwrap_or(0) >> 4) * 4;
        }
    }
    h
}

fn parse_inner(pkt: &[u8], trust_len: bool) -> Headers {
    let mut h = Headers {
        l2_len: 0,
        l3: L3::None,
        l3_off: 0,
        l3_end: 0,
        l4: L4::None,
        l4_off: 0,
        l4_hdr_len: 0,
    };
    if pkt.len() < ETH_HLEN {
        return h;
    }
    let mut off = 12;
    let mut ethertype = be16(pkt, off);
    let mut tags = 0;
    while (ethertype == 0x8100 || ethertype == 0x88a8) && tags < 2 {
        off += 4;
        ethertype = be16(pkt, off);
        tags += 1;
    }
    off += 2;
    if off > pkt.len() {
        return h;
    }
    h.l2_len = off;
    h.l3_off = off;
    let (proto, l4_off, end) = match ethertype {
        0x0800 => {
            let Some(&vihl) = pkt.get(off) else {
                return h;
            };
            let ihl = usize::from(vihl & 0xf) * 4;
            let total = if trust_len {
                usize::from(be16(pkt, off + 2))
            } else {
                pkt.len() - off
            };
            if vihl >> 4 != 4 || ihl < 20 || total < ihl || off + total > pkt.len() {
                return h;
            }
            h.l3 = L3::Ipv4;
            h.l3_end = off + total;
            let frag = be16(pkt, off + 6);
            if frag & 0x3fff != 0 {
                // A fragment (MF set or non-zero offset): no L4 header to speak of.
                return h;
            }
            (
                pkt.get(off + 9).copied().unwrap_or(0),
                off + ihl,
                off + total,
            )
        }
        0x86dd => {
            let payload = if trust_len {
                usize::from(be16(pkt, off + 4))
            } else {
                pkt.len().saturating_sub(off + 40)
            };
            if pkt.get(off).map(|v| v >> 4) != Some(6) || off + 40 + payload > pkt.len() {
                return h;
            }
            h.l3 = L3::Ipv6;
            h.l3_end = off + 40 + payload;
            (
                pkt.get(off + 6).copied().unwrap_or(0),
                off + 40,
                off + 40 + payload,
            )
        }
        _ => return h,
    };
    match proto {
        6 => {
            let doff = usize::from(pkt.get(l4_off + 12).copied().unwrap_or(0) >> 4) * 4;
            if doff >= 20 && l4_off + doff <= end {
                h.l4 = L4::Tcp;
                h.l4_off = l4_off;
                h.l4_hdr_len = doff;
            }
        }
        17 if l4_off + 8 <= end => {
            h.l4 = L4::Udp;
            h.l4_off = l4_off;
            h.l4_hdr_len = 8;
        }
        _ => {}
    }
    h
}

/// Adds `data` as big-endian 16-bit words (an odd last byte is padded with zero) to `acc`.
pub fn sum16(data: &[u8], acc: u64) -> u64 {
    let mut acc = acc;
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        acc = acc.wrapping_add(u64::from(u16::from_be_bytes([c[0], c[1]])));
    }
    if let [last] = chunks.remainder() {
        acc = acc.wrapping_add(u64::from(*last) << 8);
    }
    acc
}

/// Folds a 64-bit accumulator into a 16-bit ones' complement sum (not inverted).
pub fn fold(mut acc: u64) -> u16 {
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// Ones' complement sum of the pseudo header plus the L4 segment, with the checksum field
/// as it currently is in the packet.
fn l4_sum(pkt: &[u8], h: &Headers) -> Option<u64> {
    let seg = pkt.get(h.l4_off..h.l3_end)?;
    let proto: u64 = if h.l4 == L4::Tcp { 6 } else { 17 };
    let addrs = match h.l3 {
        L3::Ipv4 => pkt.get(h.l3_off + 12..h.l3_off + 20)?,
        L3::Ipv6 => pkt.get(h.l3_off + 8..h.l3_off + 40)?,
        L3::None => return None,
    };
    let acc = sum16(addrs, proto + seg.len() as u64);
    Some(sum16(seg, acc))
}

fn l4_csum_off(h: &Headers) -> usize {
    h.l4_off + if h.l4 == L4::Tcp { 16 } else { 6 }
}

/// Computes and stores the IPv4 header checksum (`l3`) and/or the TCP/UDP checksum (`l4`)
/// of `pkt`, as a NIC's checksum offload does. Layers the parser does not know are left alone.
pub fn fill_checksums(pkt: &mut [u8], h: &Headers, l3: bool, l4: bool) {
    if l3 && h.l3 == L3::Ipv4 {
        let ihl = usize::from(pkt.get(h.l3_off).copied().unwrap_or(0) & 0xf) * 4;
        put_be16(pkt, h.l3_off + 10, 0);
        if let Some(hdr) = pkt.get(h.l3_off..h.l3_off + ihl) {
            let c = !fold(sum16(hdr, 0));
            put_be16(pkt, h.l3_off + 10, c);
        }
    }
    if l4 && h.l4 != L4::None {
        let at = l4_csum_off(h);
        put_be16(pkt, at, 0);
        if let Some(sum) = l4_sum(pkt, h) {
            let mut c = !fold(sum);
            if c == 0 && h.l4 == L4::Udp {
                c = 0xffff;
            }
            put_be16(pkt, at, c);
        }
    }
}

/// Receive-side checksum check: (L3 ok, L4 ok). L3 ok means an IPv4 header with a correct
/// checksum, or an IPv6 header; L4 ok means a TCP/UDP checksum that verifies (a zero UDP
/// checksum over IPv4 means "none" and counts as ok).
pub fn verify_checksums(pkt: &[u8], h: &Headers) -> (bool, bool) {
    let l3_ok = match h.l3 {
        L3::Ipv4 => {
            let ihl = usize::from(pkt.get(h.l3_off).copied().unwrap_or(0) & 0xf) * 4;
            pkt.get(h.l3_off..h.l3_off + ihl)
                .is_some_and(|hdr| fold(sum16(hdr, 0)) == 0xffff)
        }
        L3::Ipv6 => true,
        L3::None => false,
    };
    let l4_ok = match h.l4 {
        L4::None => false,
        L4::Udp if h.l3 == L3::Ipv4 && be16(pkt, l4_csum_off(h)) == 0 => true,
        _ => l4_sum(pkt, h).is_some_and(|s| fold(s) == 0xffff),
    };
    (l3_ok, l4_ok)
}

/// The RSS key of the Microsoft RSS verification suite (40 bytes).
pub const RSS_KEY: [u8; 40] = [
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
    0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
    0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
];

/// Toeplitz hash of `input` under `key`. For each input bit that is set (most significant
/// first), the 32-bit window of the key starting at that bit position is XORed into the result.
/// Key bits past the end of `key` are zero.
pub fn toeplitz(key: &[u8], input: &[u8]) -> u32 {
    let key_bit = |pos: usize| -> u32 {
        key.get(pos / 8)
            .map_or(0, |b| u32::from((b >> (7 - (pos % 8))) & 1))
    };
    let mut window = be32(key, 0);
    let mut result = 0u32;
    for (i, byte) in input.iter().enumerate() {
        for bit in 0..8 {
            if byte & (0x80 >> bit) != 0 {
                result ^= window;
            }
            window = (window << 1) | key_bit(32 + i * 8 + bit);
        }
    }
    result
}

/// RSS hash of a parsed packet over (source address, destination address[, source port,
/// destination port]) with [`RSS_KEY`], and the CQE `rss_hash_type` byte (bits 3..2: 1 IPv4,
/// 2 IPv6; bits 7..6: 1 TCP, 2 UDP). Non-IP packets hash to 0 with type 0.
pub fn rss_hash(pkt: &[u8], h: &Headers) -> (u32, u8) {
    rss_hash_key(pkt, h, &RSS_KEY)
}

/// [`rss_hash`] under the Toeplitz key `key` (a TIR's `rx_hash_toeplitz_key`).
pub fn rss_hash_key(pkt: &[u8], h: &Headers, key: &[u8; 40]) -> (u32, u8) {
    let mut tuple = [0u8; 36];
    let (addrs, ip_type) = match h.l3 {
        L3::Ipv4 => (pkt.get(h.l3_off + 12..h.l3_off + 20), 1u8),
        L3::Ipv6 => (pkt.get(h.l3_off + 8..h.l3_off + 40), 2u8),
        L3::None => (None, 0),
    };
    let Some(addrs) = addrs else {
        return (0, 0);
    };
    let mut n = addrs.len();
    tuple[..n].copy_from_slice(addrs);
    let l4_type = match h.l4 {
        L4::Tcp => 1u8,
        L4::Udp => 2,
        L4::None => 0,
    };
    if l4_type != 0 {
        if let Some(ports) = pkt.get(h.l4_off..h.l4_off + 4) {
            tuple[n..n + 4].copy_from_slice(ports);
            n += 4;
        }
    }
    (toeplitz(key, &tuple[..n]), (ip_type << 2) | (l4_type << 6))
}

/// The fields an RSS hash covers, as a ConnectX TIR's `rx_hash_field_selector_outer` names
/// them: the layer-3 and layer-4 protocols whose headers the fields are taken from and the
/// selected fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HashSel {
    /// `l3_prot_type`: the addresses are IPv6 ones (else IPv4).
    pub ipv6: bool,
    /// `l4_prot_type`: the ports are UDP ones (else TCP).
    pub udp: bool,
    /// The source address.
    pub src_ip: bool,
    /// The destination address.
    pub dst_ip: bool,
    /// The source port.
    pub sport: bool,
    /// The destination port.
    pub dport: bool,
}

/// RSS hash of a parsed packet over the fields `sel` selects, in the order source address,
/// destination address, source port, destination port (Microsoft's RSS input order), under
/// `key`, and the CQE `rss_hash_type` byte (bits 3..2: 1 IPv4, 2 IPv6 when an address was
/// hashed; bits 7..6: 1 TCP, 2 UDP when a port was). A field the packet does not have is
/// not hashed: addresses need the packet's IP version to be `sel`'s, ports that and its
/// transport to be `sel`'s. A packet with nothing to hash hashes to 0 with type 0. No allocation: the
/// tuple lives on the stack (at most 36 bytes).
pub fn rss_hash_sel(pkt: &[u8], h: &Headers, key: &[u8; 40], sel: HashSel) -> (u32, u8) {
    hash_sel(pkt, h, key, sel, false, false)
}

/// The selected fields (as [`rss_hash_sel`] takes them) hashed by ConnectX's inverted XOR8
/// (`MLX5_RX_HASH_FN_INVERTED_XOR8`, what mlx5e's one-RQ TIRs and `ethtool -X hfunc xor`
/// use): the bytes XORed together, inverted, 8 bits.
pub fn rss_hash_xor8(pkt: &[u8], h: &Headers, sel: HashSel) -> (u32, u8) {
    hash_sel(pkt, h, &[0; 40], sel, false, true)
}

/// Like [`rss_hash_sel`], symmetric (a TIR's `rx_hash_symmetric`, which mlx5e sets on every
/// Toeplitz TIR): of the two addresses, and of the two ports, the lower (compared as bytes)
/// is hashed first, so both directions of a flow hash alike.
pub fn rss_hash_sym(pkt: &[u8], h: &Headers, key: &[u8; 40], sel: HashSel) -> (u32, u8) {
    hash_sel(pkt, h, key, sel, true, false)
}

fn hash_sel(
    pkt: &[u8],
    h: &Headers,
    key: &[u8; 40],
    sel: HashSel,
    sym: bool,
    xor8: bool,
) -> (u32, u8) {
    // Two fields of a pair, the lower first when symmetric and both are hashed.
    fn pair<'a>(
        a: Option<&'a [u8]>,
        b: Option<&'a [u8]>,
        both: bool,
        sym: bool,
    ) -> (Option<&'a [u8]>, Option<&'a [u8]>) {
        match (a, b) {
            (Some(x), Some(y)) if sym && both && y < x => (Some(y), Some(x)),
            _ => (a, b),
        }
    }
    let mut tuple = [0u8; 36];
    let mut n = 0;
    let mut put = |b: Option<&[u8]>, tuple: &mut [u8; 36]| -> bool {
        match (b, tuple.get_mut(n..)) {
            (Some(b), Some(t)) if b.len() <= t.len() => {
                t[..b.len()].copy_from_slice(b);
                n += b.len();
                true
            }
            _ => false,
        }
    };
    let (l3_ok, alen, ip_type) = match (h.l3, sel.ipv6) {
        (L3::Ipv4, false) => (true, 4usize, 1u8),
        (L3::Ipv6, true) => (true, 16, 2),
        _ => (false, 0, 0),
    };
    let src_off = h.l3_off + if sel.ipv6 { 8 } else { 12 };
    let d = src_off + alen;
    // The selected fields of one pair (the addresses, the ports) into the tuple, in
    // symmetric order when asked: whether any was put.
    let mut put_pair = |ok: bool, a: Option<&[u8]>, b: Option<&[u8]>, (sa, sb): (bool, bool)| {
        let (first, second) = pair(a, b, sa && sb, sym);
        let mut hashed = false;
        if ok && sa {
            hashed |= put(first, &mut tuple);
        }
        if ok && sb {
            hashed |= put(second, &mut tuple);
        }
        hashed
    };
    let ip_hashed = put_pair(
        l3_ok,
        pkt.get(src_off..src_off + alen),
        pkt.get(d..d + alen),
        (sel.src_ip, sel.dst_ip),
    );
    let (l4_ok, l4_type) = match (h.l4, sel.udp) {
        (L4::Tcp, false) => (l3_ok, 1u8),
        (L4::Udp, true) => (l3_ok, 2),
        _ => (false, 0),
    };
    let l4_hashed = put_pair(
        l4_ok,
        pkt.get(h.l4_off..h.l4_off + 2),
        pkt.get(h.l4_off + 2..h.l4_off + 4),
        (sel.sport, sel.dport),
    );
    if n == 0 {
        return (0, 0);
    }
    let ty = if ip_hashed { ip_type << 2 } else { 0 } | if l4_hashed { l4_type << 6 } else { 0 };
    let fields = tuple.get(..n).unwrap_or(&[]);
    if xor8 {
        let x = fields.iter().fold(0u8, |a, &b| a ^ b);
        return (u32::from(!x), ty);
    }
    (toeplitz(key, fields), ty)
}

/// Rewrites the headers of one TCP/UDP segmentation output segment in place.
///
/// `seg` is a copy of the super-packet headers (`h` describes them) followed by
/// `seg.len() - hdr_len` payload bytes; `index` is the segment number, `offset` the payload
/// offset of this segment in the super packet, `last` whether it is the final one. Fixes the
/// IPv4 total length and ID (+index), the IPv6 payload length, the TCP sequence number
/// (+offset) and flags (FIN/PSH only on the last segment, CWR only on the first), or the UDP
/// length, then fills the IPv4 and L4 checksums.
pub fn fix_segment(seg: &mut [u8], h: &Headers, index: u16, offset: u32, last: bool) {
    let len = seg.len();
    match h.l3 {
        L3::Ipv4 => {
            let total = len.saturating_sub(h.l3_off) as u16;
            put_be16(seg, h.l3_off + 2, total);
            let id = be16(seg, h.l3_off + 4).wrapping_add(index);
            put_be16(seg, h.l3_off + 4, id);
        }
        L3::Ipv6 => {
            let payload = len.saturating_sub(h.l3_off + 40) as u16;
            put_be16(seg, h.l3_off + 4, payload);
        }
        L3::None => return,
    }
    match h.l4 {
        L4::Tcp => {
            let seq = be32(seg, h.l4_off + 4).wrapping_add(offset);
            if let Some(s) = seg.get_mut(h.l4_off + 4..h.l4_off + 8) {
                s.copy_from_slice(&seq.to_be_bytes());
            }
            if let Some(flags) = seg.get_mut(h.l4_off + 13) {
                if !last {
                    *flags &= !0x09; // FIN, PSH
                }
                if index != 0 {
                    *flags &= !0x80; // CWR
                }
            }
        }
        L4::Udp => {
            let ulen = len.saturating_sub(h.l4_off) as u16;
            put_be16(seg, h.l4_off + 4, ulen);
        }
        L4::None => {}
    }
    let mut hh = *h;
    hh.l3_end = len;
    fill_checksums(seg, &hh, true, true);
}
