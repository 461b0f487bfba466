// SPDX-License-Identifier: GPL-2.0

//! `CHECKSUM_COMPLETE` from a device's sum of the received IP datagram (ConnectX's CQE
//! `check_sum`, spec C.1), as mlx5e derives it: which packets get it, and the fixups that
//! turn the device's sum into the sum of everything after the Ethernet header, which is what
//! the stack's `skb->csum` covers.
//!
//! Upstream counterpart: `en_rx.c` (`mlx5e_handle_csum`, `is_last_ethertype_ip`,
//! `get_ip_proto`, `mlx5e_skb_csum_fixup`, `tail_padding_csum`).
//!
//! Sums here are RFC 1071 ones' complement sums of big-endian 16-bit words, not inverted
//! (the value the CQE's `check_sum` holds); the abstraction layer converts to the kernel's
//! `__wsum`.

use crate::hwif::bytes::get_be16;

/// Frames of at most this many bytes with the FCS (`ETH_ZLEN + ETH_FCS_LEN`, mlx5e's
/// `short_frame`) never get `CHECKSUM_COMPLETE`: the device's sum leaves out the padding of
/// short frames, and finding it would take parsing the IP header.
pub const SHORT_FRAME: u32 = 60 + 4;
/// Padding after the datagram up to which mlx5e sums it from a stack copy (`MAX_PADDING`,
/// counted `csum_complete_tail`); longer, `skb_checksum` (`csum_complete_tail_slow`).
pub const MAX_PADDING: usize = 8;

const ETH_HLEN: usize = 14;
const IPPROTO_SCTP: u8 = 132;
/// `__vlan_get_protocol` with `mac_len` = `ETH_HLEN` (as mlx5e sets it) reads one
/// `vlan_hdr` at offset 10 first and gives up at its eighth (`VLAN_MAX_DEPTH`): six tags.
const MAX_TAGS: usize = 6;

/// How [`complete`] made the sum: the mlx5e counter it moves besides `csum_complete`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tail {
    /// The frame ends with the datagram.
    None,
    /// Bytes after the datagram, at most [`MAX_PADDING`] (`csum_complete_tail`).
    Fast,
    /// More bytes after the datagram (`csum_complete_tail_slow`).
    Slow,
}

/// Adds two ones' complement sums.
#[inline(always)]
fn add(a: u32, b: u16) -> u32 {
    a + u32::from(b)
}

/// Folds an accumulator of 16-bit sums into one.
#[inline(always)]
fn fold(mut acc: u32) -> u16 {
    acc = (acc & 0xffff) + (acc >> 16);
    acc = (acc & 0xffff) + (acc >> 16);
    acc as u16
}

/// Ones' complement sum of `data` as big-endian 16-bit words (an odd last byte is the high
/// byte of a word with a zero low byte).
pub fn sum16(data: &[u8]) -> u16 {
    // 64 bits: no carry is lost whatever the length.
    let mut acc: u64 = 0;
    let mut words = data.chunks_exact(2);
    for w in &mut words {
        acc += u64::from(u16::from_be_bytes([w[0], w[1]]));
    }
    if let [last] = words.remainder() {
        acc += u64::from(*last) << 8;
    }
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// The `CHECKSUM_COMPLETE` sum of a received frame, or `None` where mlx5e goes on to the
/// device's verdict (`CHECKSUM_UNNECESSARY` or `CHECKSUM_NONE`): a short frame, a frame that
/// is not IPv4 or IPv6 after its VLAN tags (or whose headers are not in `head`), SCTP.
///
/// `head`: the frame's bytes from its Ethernet header on as far as the caller has them in
/// one piece (the skb's linear part: a tag the device stripped is not in it); `len`: the
/// whole frame's length; `sum`: the device's sum of the IP datagram. The sum returned covers
/// the frame after its 14-byte Ethernet header: the device's, plus the VLAN tags still in
/// the frame and the bytes after the datagram's end (its length field's). `tail(off, n)`
/// gives the sum of the frame's bytes `off..off + n` when they are not all in `head`.
#[inline]
pub fn complete(
    head: &[u8],
    len: u32,
    sum: u16,
    tail: impl FnOnce(u32, u32) -> u16,
) -> Option<(u16, Tail)> {
    if len <= SHORT_FRAME {
        return None;
    }
    let mut depth = ETH_HLEN;
    let mut proto = get_be16(head, 12)?;
    let mut tags = 0;
    while proto == 0x8100 || proto == 0x88a8 {
        if tags == MAX_TAGS {
            return None;
        }
        proto = get_be16(head, depth + 2)?;
        depth += 4;
        tags += 1;
    }
    // is_last_ethertype_ip (its pskb_may_pull of the IP header) and get_ip_proto.
    let (end, l4) = match proto {
        0x0800 => {
            let ip = head.get(depth..depth + 20)?;
            (
                depth + usize::from(u16::from_be_bytes([ip[2], ip[3]])),
                ip[9],
            )
        }
        0x86dd => {
            let ip = head.get(depth..depth + 40)?;
            (
                depth + 40 + usize::from(u16::from_be_bytes([ip[4], ip[5]])),
                ip[6],
            )
        }
        _ => return None,
    };
    if l4 == IPPROTO_SCTP {
        return None;
    }
    let mut acc = u32::from(sum);
    if depth > ETH_HLEN {
        // The tags' bytes (an even number, from an even offset).
        acc = add(acc, sum16(head.get(ETH_HLEN..depth)?));
    }
    let len = len as usize;
    if end >= len {
        return Some((fold(acc), Tail::None));
    }
    let n = len - end;
    let t = match head.get(end..len) {
        Some(b) => sum16(b),
        None => tail(end as u32, n as u32),
    };
    // A block from an odd offset has its bytes in the other halves of the words.
    let t = if end & 1 == 1 { t.swap_bytes() } else { t };
    let kind = if n > MAX_PADDING {
        Tail::Slow
    } else {
        Tail::Fast
    };
    Some((fold(add(acc, t)), kind))
}
