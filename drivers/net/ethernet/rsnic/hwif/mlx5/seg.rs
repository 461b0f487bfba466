// SPDX-License-Identifier: GPL-2.0

//! mlx5 send-queue WQE segments (spec A.1, A.3), big-endian.
//!
//! Every segment is 16 bytes (one DS). Encoders produce fixed byte arrays; the queues write
//! those arrays into their [`Coherent`] ring with one copy per segment.

use crate::hwif::bytes::be32;
use crate::hwif::hw::Coherent;

/// Bytes per data segment / DS unit (`MLX5_SEND_WQE_DS`).
pub const SEND_WQE_DS: usize = 16;
/// Bytes per WQE basic block (`MLX5_SEND_WQE_BB`).
pub const SEND_WQE_BB: usize = 64;
/// DS units per WQEBB.
pub const WQEBB_NUM_DS: u16 = 4;
/// Hard maximum WQE size in WQEBBs (`MLX5_SEND_WQE_MAX_WQEBBS`).
pub const SEND_WQE_MAX_WQEBBS: u16 = 16;
/// Mask of the 6-bit DS count in `qpn_ds`.
pub const WQE_CTRL_DS_MASK: u32 = 0x3f;
/// DS units of ctrl seg + eth seg (`MLX5E_TX_WQE_EMPTY_DS_COUNT`).
pub const TX_WQE_EMPTY_DS_COUNT: u16 = 2;
/// Inline header bytes held by the eth seg itself (`INL_HDR_START_SZ`).
pub const INL_HDR_START_SZ: usize = 2;
/// Maximum DS units of inline header (`MLX5E_MAX_TX_INLINE_DS`).
pub const MAX_TX_INLINE_DS: u16 = 23;
/// Page fragments an skb may carry (`MAX_SKB_FRAGS`, the kernel's default of 17).
pub const MAX_SKB_FRAGS: u16 = 17;
/// The largest TX WQE the data path builds, in WQEBBs (`MLX5E_MAX_TX_WQEBBS` without
/// IPsec: ctrl and eth segments, the longest inline header, the linear part and every
/// fragment): a device whose `max_wqe_sz_sq` is smaller is refused, as mlx5e's
/// `mlx5e_attach_netdev` refuses it.
pub const MAX_TX_WQEBBS: u16 =
    (TX_WQE_EMPTY_DS_COUNT + MAX_TX_INLINE_DS + MAX_SKB_FRAGS + 1).div_ceil(WQEBB_NUM_DS);
/// Maximum inline header bytes (eth seg start + inline DS), VLAN insertion included.
pub const MAX_TX_INLINE_BYTES: usize = INL_HDR_START_SZ + MAX_TX_INLINE_DS as usize * SEND_WQE_DS;
/// Bytes of the eth seg that TX offloads touch and MPWQE compares (`MLX5E_ACCEL_ESEG_LEN`).
pub const ESEG_OFFLOAD_LEN: usize = 6;
/// Flag of an inline data segment's `byte_count` (`MLX5_INLINE_SEG`).
pub const INLINE_SEG: u32 = 0x8000_0000;
/// Largest packet the MPWQE inlines (`MLX5E_XDP_INLINE_WQE_SZ_THRSD` = 16·16 − 4).
pub const MPWQE_INLINE_MAX: u32 = 252;

/// WQE opcode NOP.
pub const OPCODE_NOP: u8 = 0x00;
/// WQE opcode SEND.
pub const OPCODE_SEND: u8 = 0x0a;
/// WQE opcode LSO.
pub const OPCODE_LSO: u8 = 0x0e;
/// WQE opcode ENHANCED_MPSW (enhanced multi-packet send WQE).
pub const OPCODE_ENHANCED_MPSW: u8 = 0x29;

/// `fm_ce_se`: request a CQE for this WQE (`MLX5_WQE_CTRL_CQ_UPDATE`).
pub const CTRL_CQ_UPDATE: u8 = 2 << 2;
/// `fm_ce_se`: request a CQE and an EQE.
pub const CTRL_CQ_UPDATE_AND_EQE: u8 = 3 << 2;
/// `fm_ce_se`: solicited event.
pub const CTRL_SOLICITED: u8 = 1 << 1;
/// `fm_ce_se`: fence mode INITIATOR_SMALL.
pub const FENCE_MODE_INITIATOR_SMALL: u8 = 1 << 5;

/// `cs_flags`: inner L3 checksum.
pub const ETH_L3_INNER_CSUM: u8 = 0x10;
/// `cs_flags`: inner L4 checksum.
pub const ETH_L4_INNER_CSUM: u8 = 0x20;
/// `cs_flags`: (outer) L3 checksum.
pub const ETH_L3_CSUM: u8 = 0x40;
/// `cs_flags`: (outer) L4 checksum.
pub const ETH_L4_CSUM: u8 = 0x80;
/// `insert.type`: insert a VLAN tag.
pub const ETH_INSERT_VLAN: u16 = 0x8000;
/// `insert.type`: the inserted tag is an S-VLAN (802.1ad).
pub const ETH_INSERT_SVLAN: u16 = 0x0001;

/// Control segment (`struct mlx5_wqe_ctrl_seg`), 16 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CtrlSeg {
    /// Opcode modifier (bits 31..24 of `opmod_idx_opcode`).
    pub opmod: u8,
    /// WQE index: the 16-bit producer counter of the WQE's first WQEBB.
    pub wqe_index: u16,
    /// Opcode (bits 7..0).
    pub opcode: u8,
    /// SQ number (24 bits).
    pub sqn: u32,
    /// DS count of the whole WQE, ctrl seg included (6 bits).
    pub ds: u8,
    /// Signature byte (0 in mlx5e).
    pub signature: u8,
    /// Fence mode, completion request and solicited bits.
    pub fm_ce_se: u8,
    /// `general_id` / `imm` / TIS number, host order.
    pub general_id: u32,
}

impl CtrlSeg {
    /// The BE32 `opmod_idx_opcode` word in host order.
    #[inline(always)]
    pub fn opmod_idx_opcode(&self) -> u32 {
        (u32::from(self.opmod) << 24) | (u32::from(self.wqe_index) << 8) | u32::from(self.opcode)
    }

    /// The BE32 `qpn_ds` word in host order.
    #[inline(always)]
    pub fn qpn_ds(&self) -> u32 {
        ((self.sqn & 0x00ff_ffff) << 8) | (u32::from(self.ds) & WQE_CTRL_DS_MASK)
    }

    /// The first 8 bytes as they sit in memory: what the SQ doorbell register receives.
    #[inline(always)]
    pub fn doorbell_bytes(&self) -> [u8; 8] {
        let a = self.opmod_idx_opcode().to_be_bytes();
        let b = self.qpn_ds().to_be_bytes();
        [a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]]
    }

    /// Encodes the segment.
    #[inline(always)]
    pub fn encode(&self) -> [u8; 16] {
        let mut o = [0u8; 16];
        o[0..8].copy_from_slice(&self.doorbell_bytes());
        o[8] = self.signature;
        o[11] = self.fm_ce_se;
        o[12..16].copy_from_slice(&self.general_id.to_be_bytes());
        o
    }

    /// Decodes a segment.
    pub fn decode(b: &[u8; 16]) -> Self {
        let w0 = be32(b, 0);
        let w1 = be32(b, 4);
        Self {
            opmod: (w0 >> 24) as u8,
            wqe_index: (w0 >> 8) as u16,
            opcode: w0 as u8,
            sqn: w1 >> 8,
            ds: (w1 & WQE_CTRL_DS_MASK) as u8,
            signature: b[8],
            fm_ce_se: b[11],
            general_id: be32(b, 12),
        }
    }

    /// A NOP control segment (`mlx5e_post_nop`): opcode 0, one DS, no CQE request.
    pub fn nop(wqe_index: u16, sqn: u32) -> Self {
        Self {
            opcode: OPCODE_NOP,
            wqe_index,
            sqn,
            ds: 1,
            ..Self::default()
        }
    }
}

/// Ethernet segment (`struct mlx5_wqe_eth_seg`), 16 bytes.
///
/// Bytes 12..15 are a union: an inline header start, a VLAN insertion, or an IPsec trailer.
/// They are kept raw in [`EthSeg::tail`]; use the setters/getters for each view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EthSeg {
    /// Software parser offsets, bytes 0..3 (outer L4, outer L3, inner L4, inner L3), in
    /// 2-byte words.
    pub swp_offs: [u8; 4],
    /// Checksum offload flags (`ETH_*_CSUM`).
    pub cs_flags: u8,
    /// Software parser flags.
    pub swp_flags: u8,
    /// MSS for LSO, 0 otherwise.
    pub mss: u16,
    /// Flow-table metadata (BE32 on the wire, host order here).
    pub flow_table_metadata: u32,
    /// Bytes 12..15 exactly as in memory.
    pub tail: [u8; 4],
}

impl EthSeg {
    /// Sets the inline header view: total inline size and its first two bytes.
    pub fn set_inline(&mut self, sz: u16, start: [u8; 2]) {
        let s = sz.to_be_bytes();
        self.tail = [s[0], s[1], start[0], start[1]];
    }

    /// Inline header size (view (a) of the union).
    pub fn inline_sz(&self) -> u16 {
        u16::from_be_bytes([self.tail[0], self.tail[1]])
    }

    /// Sets the VLAN insertion view (`insert.type`, `insert.vlan_tci`).
    pub fn set_vlan_insert(&mut self, tci: u16, svlan: bool) {
        let ty = ETH_INSERT_VLAN | if svlan { ETH_INSERT_SVLAN } else { 0 };
        let t = ty.to_be_bytes();
        let v = tci.to_be_bytes();
        self.tail = [t[0], t[1], v[0], v[1]];
    }

    /// `insert.type` (same bytes as [`EthSeg::inline_sz`]).
    pub fn insert_type(&self) -> u16 {
        self.inline_sz()
    }

    /// `insert.vlan_tci`.
    pub fn vlan_tci(&self) -> u16 {
        u16::from_be_bytes([self.tail[2], self.tail[3]])
    }

    /// The first [`ESEG_OFFLOAD_LEN`] bytes, as MPWQE compares them.
    #[inline(always)]
    pub fn offload_bytes(&self) -> [u8; ESEG_OFFLOAD_LEN] {
        let o = &self.swp_offs;
        [o[0], o[1], o[2], o[3], self.cs_flags, self.swp_flags]
    }

    /// Encodes the segment.
    #[inline(always)]
    pub fn encode(&self) -> [u8; 16] {
        let mut o = [0u8; 16];
        o[0..4].copy_from_slice(&self.swp_offs);
        o[4] = self.cs_flags;
        o[5] = self.swp_flags;
        o[6..8].copy_from_slice(&self.mss.to_be_bytes());
        o[8..12].copy_from_slice(&self.flow_table_metadata.to_be_bytes());
        o[12..16].copy_from_slice(&self.tail);
        o
    }

    /// Decodes a segment.
    pub fn decode(b: &[u8; 16]) -> Self {
        Self {
            swp_offs: [b[0], b[1], b[2], b[3]],
            cs_flags: b[4],
            swp_flags: b[5],
            mss: u16::from_be_bytes([b[6], b[7]]),
            flow_table_metadata: be32(b, 8),
            tail: [b[12], b[13], b[14], b[15]],
        }
    }
}

/// Data (gather) segment (`struct mlx5_wqe_data_seg`), 16 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DataSeg {
    /// Byte count (host order).
    pub byte_count: u32,
    /// Memory key (host order).
    pub lkey: u32,
    /// DMA address.
    pub addr: u64,
}

impl DataSeg {
    /// Encodes the segment.
    #[inline(always)]
    pub fn encode(&self) -> [u8; 16] {
        let mut o = [0u8; 16];
        o[0..4].copy_from_slice(&self.byte_count.to_be_bytes());
        o[4..8].copy_from_slice(&self.lkey.to_be_bytes());
        o[8..16].copy_from_slice(&self.addr.to_be_bytes());
        o
    }

    /// Decodes a segment.
    pub fn decode(b: &[u8; 16]) -> Self {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[8..16]);
        Self {
            byte_count: be32(b, 0),
            lkey: be32(b, 4),
            addr: u64::from_be_bytes(a),
        }
    }
}

/// DS units an inline data segment of `len` bytes takes: ceil((4 + len) / 16).
#[inline(always)]
pub const fn inline_seg_ds(len: u32) -> u32 {
    (4 + len).div_ceil(SEND_WQE_DS as u32)
}

/// The 4-byte header of an inline data segment (`struct mlx5_wqe_inline_seg`).
#[inline(always)]
pub const fn inline_seg_header(len: u32) -> [u8; 4] {
    (len | INLINE_SEG).to_be_bytes()
}

/// Writes an inline data segment carrying `data` at `off` of `buf`: the header, the bytes,
/// zero padding up to the next 16-byte boundary. Returns the DS units used.
pub fn write_inline_seg<C: Coherent>(buf: &C, off: usize, data: &[u8]) -> u32 {
    let len = data.len() as u32;
    buf.write(off, &inline_seg_header(len));
    buf.write(off + 4, data);
    let ds = inline_seg_ds(len);
    let total = ds as usize * SEND_WQE_DS;
    let pad = total - 4 - data.len();
    if pad > 0 {
        buf.zero(off + 4 + data.len(), pad);
    }
    ds
}
