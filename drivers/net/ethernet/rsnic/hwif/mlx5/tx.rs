// SPDX-License-Identifier: GPL-2.0

//! Stage 1 of the xmit path (spec B.1): the attribute calculation ([`tx_attr`],
//! [`tx_wqe_attr`]) over the family-neutral packet description of [`crate::hwif::pkt`].

use crate::hwif::hdr::{self, Headers, L2_MIN_INLINE, L4};
// Re-exported: the packet traits lived here before both families shared them.
use super::seg::{
    ETH_L3_CSUM, ETH_L3_INNER_CSUM, ETH_L4_CSUM, ETH_L4_INNER_CSUM, INL_HDR_START_SZ,
    MAX_TX_INLINE_BYTES, OPCODE_LSO, OPCODE_SEND, SEND_WQE_DS, TX_WQE_EMPTY_DS_COUNT, WQEBB_NUM_DS,
    WQE_CTRL_DS_MASK,
};
pub use crate::hwif::pkt::{
    DmaEntry, DmaKind, Gso, TxCsum, TxDmaMap, TxPacket, TxQueue, TxReject, TxRejectReason, VlanTag,
};

/// Minimum Ethernet frame length counted for BQL (`ETH_ZLEN`).
pub const ETH_ZLEN: u32 = 60;

/// The min-inline mode (`enum mlx5_inline_modes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum InlineMode {
    /// Nothing inlined.
    None = 0,
    /// L2 headers (at least 18 bytes).
    L2 = 1,
    /// Through the IP header.
    Ip = 2,
    /// Through the TCP/UDP header.
    TcpUdp = 3,
}

/// Stage 1a result (`struct mlx5e_tx_attr`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxAttr {
    /// WQE opcode: SEND or LSO.
    pub opcode: u8,
    /// MSS (LSO only, else 0).
    pub mss: u16,
    /// Inline header size taken from the packet (VLAN insertion not included).
    pub ihs: u16,
    /// Linear bytes after the inline header, sent by a data segment.
    pub headlen: u32,
    /// Bytes for BQL and the byte counter.
    pub num_bytes: u32,
    /// Packets for the packet counter (gso_segs for GSO, else 1).
    pub segs: u16,
    /// VLAN tag to insert, if any.
    pub vlan: Option<VlanTag>,
    /// Checksum request.
    pub csum: TxCsum,
    /// Fragments with a non-zero length (each gets a data segment).
    pub nr_dsegs: u16,
}

impl TxAttr {
    /// Eth-segment `cs_flags` for the checksum request.
    #[inline(always)]
    pub fn cs_flags(&self) -> u8 {
        csum_flags(self.csum)
    }

    /// Whether an SKB MPWQE can carry the packet: linear, no VLAN, nothing inlined, not GSO.
    #[inline(always)]
    pub fn mpwqe_eligible(&self) -> bool {
        self.nr_dsegs == 0 && self.vlan.is_none() && self.ihs == 0 && self.opcode == OPCODE_SEND
    }
}

/// Eth-segment `cs_flags` for a checksum request.
#[inline(always)]
pub fn csum_flags(csum: TxCsum) -> u8 {
    match csum {
        TxCsum::None => 0,
        TxCsum::Partial => ETH_L3_CSUM | ETH_L4_CSUM,
        TxCsum::PartialInner => ETH_L3_CSUM | ETH_L3_INNER_CSUM | ETH_L4_INNER_CSUM,
    }
}

/// Stage 1b result (`struct mlx5e_tx_wqe_attr`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxWqeAttr {
    /// DS count of the whole WQE.
    pub ds_cnt: u16,
    /// DS units of inline header after the eth seg.
    pub ds_cnt_inl: u16,
    /// WQEBBs of the WQE.
    pub num_wqebbs: u16,
}

fn min_inline(pkt_headlen: u32, h: &Headers, mode: InlineMode, has_vlan: bool) -> u32 {
    let l2 = u32::from(h.network.unwrap_or(hdr::ETH_HLEN).max(L2_MIN_INLINE));
    let ihs = match mode {
        InlineMode::None => 0,
        InlineMode::L2 => l2,
        InlineMode::Ip => h.transport.map_or(l2, u32::from),
        InlineMode::TcpUdp => {
            if h.len == hdr::ETH_HLEN && !has_vlan {
                u32::from(L2_MIN_INLINE)
            } else {
                u32::from(h.len)
            }
        }
    };
    ihs.min(pkt_headlen)
}

/// Stage 1a (`mlx5e_sq_xmit_prepare`): opcode, inline header size, MSS, BQL bytes.
///
/// `mode` is the SQ's min-inline mode; `vlan_need_l2_inline` raises it to L2 for tagged
/// packets when the device cannot insert VLAN tags.
pub fn tx_attr<P: TxPacket>(
    pkt: &P,
    mode: InlineMode,
    vlan_need_l2_inline: bool,
) -> Result<TxAttr, TxRejectReason> {
    let len = pkt.pkt_len();
    let linear = pkt.linear().len() as u32;
    if linear > len {
        return Err(TxRejectReason::Malformed);
    }
    let vlan = pkt.vlan();
    let mut nr_dsegs: u16 = 0;
    let mut frag_bytes: u64 = 0;
    for i in 0..pkt.nr_frags() {
        let fl = pkt.frag_len(i);
        if fl != 0 {
            nr_dsegs = nr_dsegs.saturating_add(1);
        }
        frag_bytes += u64::from(fl);
    }
    if u64::from(linear) + frag_bytes != u64::from(len) {
        return Err(TxRejectReason::Malformed);
    }
    let (opcode, mss, ihs, num_bytes, segs) = match pkt.gso() {
        Some(g) => {
            let h = pkt.headers();
            let thoff = h.transport.ok_or(TxRejectReason::Malformed)?;
            let ihs = u32::from(thoff)
                + match h.l4 {
                    L4::Tcp(l) => u32::from(l),
                    L4::Udp => 8,
                    _ => return Err(TxRejectReason::Malformed),
                };
            if g.size == 0 || ihs > linear {
                return Err(TxRejectReason::Malformed);
            }
            let segs = g.segs.max(1);
            let nb = u64::from(len) + u64::from(segs - 1) * u64::from(ihs);
            let nb = u32::try_from(nb).map_err(|_| TxRejectReason::Malformed)?;
            (OPCODE_LSO, g.size, ihs, nb, segs)
        }
        None => {
            let mode = if vlan.is_some() && vlan_need_l2_inline {
                mode.max(InlineMode::L2)
            } else {
                mode
            };
            // Headers are parsed only when something is inlined (as mlx5e's
            // `mlx5e_calc_min_inline`): the common case needs no parse at all.
            let ihs = if mode == InlineMode::None {
                0
            } else {
                min_inline(linear, &pkt.headers(), mode, vlan.is_some())
            };
            (OPCODE_SEND, 0, ihs, len.max(ETH_ZLEN), 1)
        }
    };
    // The VLAN tag goes in after the two MAC addresses of the inline copy.
    if vlan.is_some() && ihs > 0 && ihs < 12 {
        return Err(TxRejectReason::Malformed);
    }
    let inl = ihs as usize + if vlan.is_some() && ihs > 0 { 4 } else { 0 };
    if inl > MAX_TX_INLINE_BYTES {
        return Err(TxRejectReason::HeaderTooLong);
    }
    Ok(TxAttr {
        opcode,
        mss,
        ihs: ihs as u16,
        headlen: linear - ihs,
        num_bytes,
        segs,
        vlan,
        csum: pkt.csum(),
        nr_dsegs,
    })
}

/// Stage 1a for the common packet: linear, no GSO, no VLAN tag, on an SQ with no min-inline
/// mode. Its attributes are what [`tx_attr`] computes for it (SEND, nothing inlined, one
/// data segment, `max(len, ETH_ZLEN)` bytes for BQL), without the fragment walk and the
/// checks the other packets need; such a packet is MPWQE-eligible by construction. `None`
/// for every other packet (an empty one included), which [`tx_attr`] takes.
#[inline(always)]
pub fn tx_attr_common<P: TxPacket>(pkt: &P, mode: InlineMode) -> Option<TxAttr> {
    if mode != InlineMode::None
        || pkt.nr_frags() != 0
        || pkt.gso().is_some()
        || pkt.vlan().is_some()
    {
        return None;
    }
    let len = pkt.pkt_len();
    // An empty packet has no data segment to give: `tx_attr`'s.
    (len > 0 && pkt.linear().len() == len as usize).then(|| TxAttr {
        opcode: OPCODE_SEND,
        mss: 0,
        ihs: 0,
        headlen: len,
        num_bytes: len.max(ETH_ZLEN),
        segs: 1,
        vlan: None,
        csum: pkt.csum(),
        nr_dsegs: 0,
    })
}

/// Stage 1b (`mlx5e_sq_calc_wqe_attr`): DS count and WQEBBs. Fails if the WQE would exceed
/// `max_wqebbs` or the 6-bit DS field.
pub fn tx_wqe_attr(attr: &TxAttr, max_wqebbs: u16) -> Result<TxWqeAttr, TxRejectReason> {
    let mut ds_cnt = u32::from(TX_WQE_EMPTY_DS_COUNT);
    let mut ds_cnt_inl = 0u32;
    if attr.ihs > 0 {
        let inl = (u32::from(attr.ihs) + if attr.vlan.is_some() { 4 } else { 0 })
            .saturating_sub(INL_HDR_START_SZ as u32);
        ds_cnt_inl = inl.div_ceil(SEND_WQE_DS as u32);
        ds_cnt += ds_cnt_inl;
    }
    if attr.headlen > 0 {
        ds_cnt += 1;
    }
    ds_cnt += u32::from(attr.nr_dsegs);
    let num_wqebbs = ds_cnt.div_ceil(u32::from(WQEBB_NUM_DS));
    if ds_cnt > WQE_CTRL_DS_MASK || num_wqebbs > u32::from(max_wqebbs) {
        return Err(TxRejectReason::TooManySegments);
    }
    Ok(TxWqeAttr {
        ds_cnt: ds_cnt as u16,
        ds_cnt_inl: ds_cnt_inl as u16,
        num_wqebbs: num_wqebbs as u16,
    })
}
