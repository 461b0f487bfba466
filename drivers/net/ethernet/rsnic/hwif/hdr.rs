// SPDX-License-Identifier: GPL-2.0

//! A small header-length parser for the min-inline modes (spec A.4): Ethernet, up to two
//! VLAN tags, IPv4, IPv6, TCP and UDP. It stands in for the kernel's flow dissector
//! (`eth_get_headlen`) and for the skb's network/transport header offsets when a packet
//! description does not provide them. It never reads past the slice it is given.

use crate::hwif::bytes::get_be16;

/// Ethernet header length.
pub const ETH_HLEN: u16 = 14;
/// VLAN tag length.
pub const VLAN_HLEN: u16 = 4;
/// Ethernet + one VLAN tag: the L2 inline minimum.
pub const L2_MIN_INLINE: u16 = ETH_HLEN + VLAN_HLEN;
/// EtherType of 802.1Q.
pub const ETH_P_8021Q: u16 = 0x8100;
/// EtherType of 802.1ad.
pub const ETH_P_8021AD: u16 = 0x88a8;
/// EtherType of IPv4.
pub const ETH_P_IP: u16 = 0x0800;
/// EtherType of IPv6.
pub const ETH_P_IPV6: u16 = 0x86dd;

const IPPROTO_TCP: u8 = 6;
const IPPROTO_UDP: u8 = 17;

/// Transport protocol found by the parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum L4 {
    /// No transport header was identified.
    None,
    /// TCP, with its header length (data offset × 4).
    Tcp(u16),
    /// UDP (8-byte header).
    Udp,
    /// Another IP protocol.
    Other(u8),
}

/// What the parser found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Headers {
    /// Offset of the network header (after Ethernet and VLAN tags), if the frame holds one.
    pub network: Option<u16>,
    /// Offset of the transport header, if an IP header was parsed.
    pub transport: Option<u16>,
    /// Transport protocol.
    pub l4: L4,
    /// Length of all parsed headers (`eth_get_headlen`): through the TCP/UDP header, the
    /// transport offset for other IP protocols, at least 14, capped at the slice length.
    pub len: u16,
}

/// Parses the headers at the start of `b`.
pub fn parse(b: &[u8]) -> Headers {
    let cap = b.len().min(u16::MAX as usize) as u16;
    let mut h = Headers {
        network: None,
        transport: None,
        l4: L4::None,
        len: cap.min(ETH_HLEN),
    };
    if b.len() < ETH_HLEN as usize {
        return h;
    }
    let mut off = ETH_HLEN as usize;
    let Some(mut proto) = get_be16(b, 12) else {
        return h;
    };
    let mut tags = 0;
    while (proto == ETH_P_8021Q || proto == ETH_P_8021AD) && tags < 2 {
        let Some(p) = get_be16(b, off + 2) else {
            return h;
        };
        proto = p;
        off += VLAN_HLEN as usize;
        tags += 1;
    }
    h.network = Some(off as u16);
    h.len = cap.min(off as u16);
    let (l4_off, ipproto) = match proto {
        ETH_P_IP => {
            let Some(&vihl) = b.get(off) else {
                return h;
            };
            let ihl = usize::from(vihl & 0xf) * 4;
            if vihl >> 4 != 4 || ihl < 20 || b.len() < off + ihl {
                return h;
            }
            let Some(frag) = get_be16(b, off + 6) else {
                return h;
            };
            let Some(&p) = b.get(off + 9) else {
                return h;
            };
            // A non-first fragment carries no transport header.
            let p = if frag & 0x1fff != 0 { 0xff } else { p };
            (off + ihl, p)
        }
        ETH_P_IPV6 => {
            if b.len() < off + 40 {
                return h;
            }
            let Some(&p) = b.get(off + 6) else {
                return h;
            };
            (off + 40, p)
        }
        _ => return h,
    };
    h.transport = Some(l4_off as u16);
    h.len = cap.min(l4_off as u16);
    match ipproto {
        IPPROTO_TCP => {
            let Some(&doff) = b.get(l4_off + 12) else {
                h.l4 = L4::Tcp(20);
                return h;
            };
            let thl = (u16::from(doff >> 4) * 4).max(20);
            h.l4 = L4::Tcp(thl);
            h.len = cap.min(l4_off as u16 + thl);
        }
        IPPROTO_UDP => {
            h.l4 = L4::Udp;
            h.len = cap.min(l4_off as u16 + 8);
        }
        p => h.l4 = L4::Other(p),
    }
    h
}
