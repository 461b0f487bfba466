// SPDX-License-Identifier: GPL-2.0

//! GDMA formats (spec D.2–D.5): the WQE header, inline TX OOBs (short and long), SGEs, the
//! four doorbell entries, CQEs with 3 owner bits, EQEs, and the TX/RX completion OOBs.
//!
//! Everything is little-endian; bit numbers are those of the LE u32/u64 (C bitfields
//! allocated from the LSB). Encoders produce the exact bytes the device reads; decoders never
//! fail (every field is masked to its width), so device input cannot make them panic.

use crate::hwif::bytes::{le32, put_le32};

/// The basic unit of SQ and RQ WQEs (`GDMA_WQE_BU_SIZE`).
pub const BU_SIZE: u32 = 32;
/// Largest SQ WQE (`GDMA_MAX_SQE_SIZE`).
pub const MAX_SQE_SIZE: u32 = 512;
/// Largest RQ WQE (`GDMA_MAX_RQE_SIZE`).
pub const MAX_RQE_SIZE: u32 = 256;
/// Size of a CQE (`GDMA_CQE_SIZE`).
pub const CQE_SIZE: usize = 64;
/// Size of an EQE (`GDMA_EQE_SIZE`).
pub const EQE_SIZE: usize = 16;
/// Size of the WQE header (`struct gdma_wqe`).
pub const WQE_HDR_SIZE: usize = 8;
/// Size of an SGE (`struct gdma_sge`).
pub const SGE_SIZE: usize = 16;
/// Short inline OOB (`INLINE_OOB_SMALL_SIZE`).
pub const INLINE_OOB_SMALL: usize = 8;
/// Long inline OOB (`INLINE_OOB_LARGE_SIZE`).
pub const INLINE_OOB_LARGE: usize = 24;
/// Most SGEs in a TX WQE: (512 − 16 − 8) / 16.
pub const MAX_TX_SGE: usize = 30;
/// Most SGEs in an RX WQE: (256 − 16) / 16.
pub const MAX_RX_SGE: usize = 15;
/// Smallest queue memory (`MANA_MIN_QSIZE`).
pub const MIN_QSIZE: u32 = 4096;

/// Offset of the SQ doorbell in a doorbell page.
pub const DB_SQ: u32 = 0x000;
/// Offset of the RQ doorbell in a doorbell page.
pub const DB_RQ: u32 = 0x400;
/// Offset of the CQ doorbell in a doorbell page.
pub const DB_CQ: u32 = 0x800;
/// Offset of the EQ doorbell in a doorbell page.
pub const DB_EQ: u32 = 0xFF8;

/// `gdma_wqe_request.flags`: the client OOB is carried in the SGL (needs ≥ 2 SGEs).
pub const WR_OOB_IN_SGL: u8 = 1 << 0;
/// `gdma_wqe_request.flags`: pad by SGE0 (`last_vbytes` = SGE0's size).
pub const WR_PAD_BY_SGE0: u8 = 1 << 1;

/// `mana_cqe_header.client_type` of a MANA completion.
pub const CLIENT_TYPE_COMPLETION: u8 = 1;
/// RX CQE type: packet received.
pub const CQE_RX_OKAY: u8 = 1;
/// RX CQE type: coalesced (four packets).
pub const CQE_RX_COALESCED_4: u8 = 2;
/// RX CQE type: object fence.
pub const CQE_RX_OBJECT_FENCE: u8 = 3;
/// RX CQE type: truncated packet.
pub const CQE_RX_TRUNCATED: u8 = 4;
/// TX CQE type: sent.
pub const CQE_TX_OKAY: u8 = 32;
/// TX error: source-address enforcement drop.
pub const CQE_TX_SA_DROP: u8 = 33;
/// TX error: MTU violation.
pub const CQE_TX_MTU_DROP: u8 = 34;
/// TX error: invalid OOB.
pub const CQE_TX_INVALID_OOB: u8 = 35;
/// TX error: invalid EtherType.
pub const CQE_TX_INVALID_ETH_TYPE: u8 = 36;
/// TX error: header processing error.
pub const CQE_TX_HDR_PROCESSING_ERROR: u8 = 37;
/// TX error: VF disabled.
pub const CQE_TX_VF_DISABLED: u8 = 38;
/// TX error: vport index out of range.
pub const CQE_TX_VPORT_IDX_OUT_OF_RANGE: u8 = 39;
/// TX error: vport disabled.
pub const CQE_TX_VPORT_DISABLED: u8 = 40;
/// TX error: VLAN tagging violation.
pub const CQE_TX_VLAN_TAGGING_VIOLATION: u8 = 41;

/// EQE type of a completion event (`GDMA_EQE_COMPLETION`).
pub const EQE_COMPLETION: u8 = 3;

/// Whether a TX CQE type is one of the nine error types.
#[inline(always)]
pub fn is_tx_error(cqe_type: u8) -> bool {
    (CQE_TX_SA_DROP..=CQE_TX_VLAN_TAGGING_VIOLATION).contains(&cqe_type)
}

#[inline(always)]
fn bit(v: u32, n: u32) -> bool {
    (v >> n) & 1 != 0
}

#[inline(always)]
fn flag(b: bool, n: u32) -> u32 {
    u32::from(b) << n
}

/// WQE size in bytes for an inline OOB of `oob` bytes and `num_sge` SGEs, rounded up to a BU:
/// `ALIGN(8 + oob + 16·num_sge, 32)`.
#[inline(always)]
pub const fn wqe_size(oob: usize, num_sge: usize) -> usize {
    (WQE_HDR_SIZE + oob + SGE_SIZE * num_sge).div_ceil(BU_SIZE as usize) * BU_SIZE as usize
}

/// The WQE header (`struct gdma_wqe`, two LE u32).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WqeHeader {
    /// DW0 bits 24..31: size of SGE0 when OOB_IN_SGL and PAD_BY_SGE0 are set.
    pub last_vbytes: u8,
    /// DW1 bits 0..7.
    pub num_sge: u8,
    /// DW1 bits 8..10: inline OOB size / 4 (2 for 8 B, 6 for 24 B).
    pub inline_oob_size_div4: u8,
    /// DW1 bit 11.
    pub client_oob_in_sgl: bool,
    /// DW1 bits 16..29 (SQ only; TSO: the MSS).
    pub client_data_unit: u16,
}

impl WqeHeader {
    /// The 8 header bytes.
    pub fn encode(&self) -> [u8; 8] {
        let dw0 = u32::from(self.last_vbytes) << 24;
        let dw1 = u32::from(self.num_sge)
            | (u32::from(self.inline_oob_size_div4 & 7) << 8)
            | flag(self.client_oob_in_sgl, 11)
            | ((u32::from(self.client_data_unit) & 0x3fff) << 16);
        let mut b = [0u8; 8];
        put_le32(&mut b, 0, dw0);
        put_le32(&mut b, 4, dw1);
        b
    }

    /// Decodes the first 8 bytes of `b` (missing bytes read as 0).
    pub fn decode(b: &[u8]) -> Self {
        let (dw0, dw1) = (le32(b, 0), le32(b, 4));
        Self {
            last_vbytes: (dw0 >> 24) as u8,
            num_sge: dw1 as u8,
            inline_oob_size_div4: ((dw1 >> 8) & 7) as u8,
            client_oob_in_sgl: bit(dw1, 11),
            client_data_unit: ((dw1 >> 16) & 0x3fff) as u16,
        }
    }

    /// Inline OOB size in bytes.
    #[inline(always)]
    pub fn oob_size(&self) -> usize {
        usize::from(self.inline_oob_size_div4) * 4
    }

    /// The WQE's size in bytes, rounded up to a BU.
    #[inline(always)]
    pub fn wqe_size(&self) -> usize {
        wqe_size(self.oob_size(), usize::from(self.num_sge))
    }
}

/// A scatter/gather element (`struct gdma_sge`, 16 B).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sge {
    /// Bytes 0–7: DMA address.
    pub address: u64,
    /// Bytes 8–11: memory key.
    pub mem_key: u32,
    /// Bytes 12–15: size in bytes.
    pub size: u32,
}

impl Sge {
    /// The 16 bytes.
    pub fn encode(&self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[0..8].copy_from_slice(&self.address.to_le_bytes());
        put_le32(&mut b, 8, self.mem_key);
        put_le32(&mut b, 12, self.size);
        b
    }

    /// Decodes the first 16 bytes of `b` (missing bytes read as 0).
    pub fn decode(b: &[u8]) -> Self {
        Self {
            address: u64::from(le32(b, 0)) | (u64::from(le32(b, 4)) << 32),
            mem_key: le32(b, 8),
            size: le32(b, 12),
        }
    }
}

/// The TX OOB (`struct mana_tx_short_oob` and the long extension).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxOob {
    /// DW0 0..1: 0 short, 1 long.
    pub pkt_fmt: u8,
    /// DW0 2.
    pub is_outer_ipv4: bool,
    /// DW0 3.
    pub is_outer_ipv6: bool,
    /// DW0 4.
    pub comp_iphdr_csum: bool,
    /// DW0 5.
    pub comp_tcp_csum: bool,
    /// DW0 6.
    pub comp_udp_csum: bool,
    /// DW0 7 (always 0: one CQE per WQE).
    pub suppress_txcqe_gen: bool,
    /// DW0 8..31: the TX CQ id.
    pub vcq_num: u32,
    /// DW1 0..9: transport header offset.
    pub trans_off: u16,
    /// DW1 10..23: bits 10..23 of the SQ id.
    pub vsq_frame: u16,
    /// DW1 24..31.
    pub short_vp_offset: u8,
    /// Long DW2 0.
    pub is_encap: bool,
    /// Long DW2 1.
    pub inner_is_ipv6: bool,
    /// Long DW2 2.
    pub inner_tcp_opt: bool,
    /// Long DW2 3: inject a VLAN tag.
    pub inject_vlan_pri_tag: bool,
    /// Long DW2 16..18.
    pub pcp: u8,
    /// Long DW2 19.
    pub dei: bool,
    /// Long DW2 20..31.
    pub vlan_id: u16,
    /// Long DW3 0..9.
    pub inner_frame_offset: u16,
    /// Long DW3 10..15.
    pub inner_ip_rel_offset: u8,
    /// Long DW3 16..27.
    pub long_vp_offset: u16,
}

/// Packet format of a short TX OOB.
pub const PKT_FMT_SHORT: u8 = 0;
/// Packet format of a long TX OOB.
pub const PKT_FMT_LONG: u8 = 1;

impl TxOob {
    fn dw0_dw1(&self) -> (u32, u32) {
        let dw0 = u32::from(self.pkt_fmt & 3)
            | flag(self.is_outer_ipv4, 2)
            | flag(self.is_outer_ipv6, 3)
            | flag(self.comp_iphdr_csum, 4)
            | flag(self.comp_tcp_csum, 5)
            | flag(self.comp_udp_csum, 6)
            | flag(self.suppress_txcqe_gen, 7)
            | ((self.vcq_num & 0x00ff_ffff) << 8);
        let dw1 = (u32::from(self.trans_off) & 0x3ff)
            | ((u32::from(self.vsq_frame) & 0x3fff) << 10)
            | (u32::from(self.short_vp_offset) << 24);
        (dw0, dw1)
    }

    /// The 8-byte short OOB (DW0, DW1).
    pub fn encode_short(&self) -> [u8; 8] {
        let (dw0, dw1) = self.dw0_dw1();
        let mut b = [0u8; 8];
        put_le32(&mut b, 0, dw0);
        put_le32(&mut b, 4, dw1);
        b
    }

    /// The 24-byte long OOB (short part, DW2, DW3, two reserved DWs).
    pub fn encode_long(&self) -> [u8; 24] {
        let (dw0, dw1) = self.dw0_dw1();
        let dw2 = flag(self.is_encap, 0)
            | flag(self.inner_is_ipv6, 1)
            | flag(self.inner_tcp_opt, 2)
            | flag(self.inject_vlan_pri_tag, 3)
            | (u32::from(self.pcp & 7) << 16)
            | flag(self.dei, 19)
            | ((u32::from(self.vlan_id) & 0xfff) << 20);
        let dw3 = (u32::from(self.inner_frame_offset) & 0x3ff)
            | ((u32::from(self.inner_ip_rel_offset) & 0x3f) << 10)
            | ((u32::from(self.long_vp_offset) & 0xfff) << 16);
        let mut b = [0u8; 24];
        put_le32(&mut b, 0, dw0);
        put_le32(&mut b, 4, dw1);
        put_le32(&mut b, 8, dw2);
        put_le32(&mut b, 12, dw3);
        b
    }

    /// Decodes an OOB of 8 (short) or 24 (long) bytes; with fewer than 24 bytes the long
    /// fields read as 0.
    pub fn decode(b: &[u8]) -> Self {
        let (dw0, dw1, dw2, dw3) = if b.len() >= INLINE_OOB_LARGE {
            (le32(b, 0), le32(b, 4), le32(b, 8), le32(b, 12))
        } else {
            (le32(b, 0), le32(b, 4), 0, 0)
        };
        Self {
            pkt_fmt: (dw0 & 3) as u8,
            is_outer_ipv4: bit(dw0, 2),
            is_outer_ipv6: bit(dw0, 3),
            comp_iphdr_csum: bit(dw0, 4),
            comp_tcp_csum: bit(dw0, 5),
            comp_udp_csum: bit(dw0, 6),
            suppress_txcqe_gen: bit(dw0, 7),
            vcq_num: dw0 >> 8,
            trans_off: (dw1 & 0x3ff) as u16,
            vsq_frame: ((dw1 >> 10) & 0x3fff) as u16,
            short_vp_offset: (dw1 >> 24) as u8,
            is_encap: bit(dw2, 0),
            inner_is_ipv6: bit(dw2, 1),
            inner_tcp_opt: bit(dw2, 2),
            inject_vlan_pri_tag: bit(dw2, 3),
            pcp: ((dw2 >> 16) & 7) as u8,
            dei: bit(dw2, 19),
            vlan_id: ((dw2 >> 20) & 0xfff) as u16,
            inner_frame_offset: (dw3 & 0x3ff) as u16,
            inner_ip_rel_offset: ((dw3 >> 10) & 0x3f) as u8,
            long_vp_offset: ((dw3 >> 16) & 0xfff) as u16,
        }
    }
}

/// One doorbell entry (`union gdma_doorbell_entry`), decoded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Doorbell {
    /// Queue id (24 bits; 16 for EQs).
    pub id: u32,
    /// RQ only: bits 24..31.
    pub wqe_cnt: u8,
    /// tail_ptr (32 bits for SQ/RQ, 31 for CQ/EQ).
    pub tail_ptr: u32,
    /// CQ/EQ only: bit 63.
    pub arm: bool,
}

/// SQ doorbell value: id 0..23, tail_ptr 32..63.
#[inline(always)]
pub fn sq_doorbell(id: u32, tail_ptr: u32) -> u64 {
    u64::from(id & 0x00ff_ffff) | (u64::from(tail_ptr) << 32)
}

/// RQ doorbell value: id 0..23, wqe_cnt 24..31, tail_ptr 32..63.
#[inline(always)]
pub fn rq_doorbell(id: u32, wqe_cnt: u8, tail_ptr: u32) -> u64 {
    u64::from(id & 0x00ff_ffff) | (u64::from(wqe_cnt) << 24) | (u64::from(tail_ptr) << 32)
}

/// CQ doorbell value: id 0..23, tail_ptr 32..62, arm 63.
#[inline(always)]
pub fn cq_doorbell(id: u32, tail_ptr: u32, arm: bool) -> u64 {
    u64::from(id & 0x00ff_ffff) | (u64::from(tail_ptr & 0x7fff_ffff) << 32) | (u64::from(arm) << 63)
}

/// EQ doorbell value: id 0..15, tail_ptr 32..62, arm 63.
#[inline(always)]
pub fn eq_doorbell(id: u32, tail_ptr: u32, arm: bool) -> u64 {
    u64::from(id & 0xffff) | (u64::from(tail_ptr & 0x7fff_ffff) << 32) | (u64::from(arm) << 63)
}

impl Doorbell {
    /// Decodes a doorbell written at queue offset `reg` ([`DB_SQ`], [`DB_RQ`], [`DB_CQ`],
    /// [`DB_EQ`]); `None` for any other offset.
    pub fn decode(reg: u32, v: u64) -> Option<Self> {
        let lo = v as u32;
        let hi = (v >> 32) as u32;
        match reg {
            DB_SQ => Some(Self {
                id: lo & 0x00ff_ffff,
                tail_ptr: hi,
                ..Self::default()
            }),
            DB_RQ => Some(Self {
                id: lo & 0x00ff_ffff,
                wqe_cnt: (lo >> 24) as u8,
                tail_ptr: hi,
                arm: false,
            }),
            DB_CQ => Some(Self {
                id: lo & 0x00ff_ffff,
                wqe_cnt: 0,
                tail_ptr: hi & 0x7fff_ffff,
                arm: bit(hi, 31),
            }),
            DB_EQ => Some(Self {
                id: lo & 0xffff,
                wqe_cnt: 0,
                tail_ptr: hi & 0x7fff_ffff,
                arm: bit(hi, 31),
            }),
            _ => None,
        }
    }
}

/// What the owner bits of a CQ or EQ entry say (`mana_gd_read_cqe`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// The entry still carries the previous pass's owner bits: nothing new.
    Empty,
    /// The entry belongs to the current pass.
    Valid,
    /// Neither: the device has lapped the consumer (overflow).
    Overflow,
}

/// Owner bits a CQE or EQE must carry to be valid at consumer counter `head` in a queue of
/// `num` entries, a power of two: `(head / num) & 7`. The producer writes entry `i` (0-based)
/// with `((i + num) / num) & 7`, since consumers start at `head = num`. The division is a
/// shift ([`owner_bits_log2`]).
#[inline(always)]
pub fn owner_bits(head: u32, num: u32) -> u8 {
    // `trailing_zeros` of a power of two is its log2 (of 0 it is 32, and a shift by 32 wraps
    // to 0: `head / 1`, as the division by `num.max(1)` gave).
    owner_bits_log2(head, num.trailing_zeros())
}

/// [`owner_bits`] of a queue of `1 << log2_num` entries: `(head >> log2_num) & 7`, what the
/// queues compute per entry (one shift by a log2 they keep, rather than a division).
#[inline(always)]
pub fn owner_bits_log2(head: u32, log2_num: u32) -> u8 {
    (head.wrapping_shr(log2_num) & 7) as u8
}

/// The owner check of spec D.4 for the entry at `head % num`.
#[inline(always)]
pub fn owner_check(owner: u8, head: u32, num: u32) -> Owner {
    owner_state(owner, owner_bits(head, num))
}

/// The owner check of spec D.4 of an entry carrying `owner` where the current lap's bits are
/// `new`: the entry is valid if it carries `new`, empty if it still carries the previous
/// lap's (`new - 1`), otherwise the device lapped the consumer. One subtraction modulo 8
/// tells the three apart, and the common case (valid) is the first test.
#[inline(always)]
pub fn owner_state(owner: u8, new: u8) -> Owner {
    match owner.wrapping_sub(new) & 7 {
        0 => Owner::Valid,
        7 => Owner::Empty,
        _ => Owner::Overflow,
    }
}

/// A CQE (`struct gdma_cqe`, 64 B).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cqe {
    /// Bytes 0–59: the client OOB (`cqe_data`).
    pub data: [u8; 60],
    /// `cqe_info` bits 0..23.
    pub wq_num: u32,
    /// `cqe_info` bit 24.
    pub is_sq: bool,
    /// `cqe_info` bits 29..31.
    pub owner: u8,
}

impl Default for Cqe {
    fn default() -> Self {
        Self {
            data: [0; 60],
            wq_num: 0,
            is_sq: false,
            owner: 0,
        }
    }
}

impl Cqe {
    /// The 64 bytes.
    pub fn encode(&self) -> [u8; 64] {
        let mut b = [0u8; 64];
        b[..60].copy_from_slice(&self.data);
        let info =
            (self.wq_num & 0x00ff_ffff) | flag(self.is_sq, 24) | (u32::from(self.owner & 7) << 29);
        put_le32(&mut b, 60, info);
        b
    }

    /// Decodes 64 bytes.
    pub fn decode(b: &[u8; 64]) -> Self {
        let mut data = [0u8; 60];
        data.copy_from_slice(&b[..60]);
        let info = le32(b, 60);
        Self {
            data,
            wq_num: info & 0x00ff_ffff,
            is_sq: bit(info, 24),
            owner: (info >> 29) as u8,
        }
    }

    /// The client header (DW0 of `cqe_data`).
    pub fn header(&self) -> CqeHeader {
        CqeHeader::decode(le32(&self.data, 0))
    }
}

/// `mana_cqe_header`: DW0 of every MANA completion OOB.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CqeHeader {
    /// Bits 0..5.
    pub cqe_type: u8,
    /// Bits 6..7.
    pub client_type: u8,
    /// Bits 8..31.
    pub vendor_err: u32,
}

impl CqeHeader {
    /// The DW.
    pub fn encode(&self) -> u32 {
        u32::from(self.cqe_type & 0x3f)
            | (u32::from(self.client_type & 3) << 6)
            | ((self.vendor_err & 0x00ff_ffff) << 8)
    }

    /// Decodes the DW.
    pub fn decode(v: u32) -> Self {
        Self {
            cqe_type: (v & 0x3f) as u8,
            client_type: ((v >> 6) & 3) as u8,
            vendor_err: v >> 8,
        }
    }
}

/// `mana_tx_comp_oob`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxCompOob {
    /// DW0.
    pub hdr: CqeHeader,
    /// DW1.
    pub tx_data_offset: u32,
    /// DW2 bits 0..4.
    pub tx_sgl_offset: u8,
    /// DW2 bits 5..31.
    pub tx_wqe_offset: u32,
}

impl TxCompOob {
    /// The 60 bytes of `cqe_data` (12 reserved DWs zero).
    pub fn encode(&self) -> [u8; 60] {
        let mut b = [0u8; 60];
        put_le32(&mut b, 0, self.hdr.encode());
        put_le32(&mut b, 4, self.tx_data_offset);
        put_le32(
            &mut b,
            8,
            u32::from(self.tx_sgl_offset & 0x1f) | ((self.tx_wqe_offset & 0x07ff_ffff) << 5),
        );
        b
    }

    /// Decodes `cqe_data`.
    pub fn decode(b: &[u8; 60]) -> Self {
        let dw2 = le32(b, 8);
        Self {
            hdr: CqeHeader::decode(le32(b, 0)),
            tx_data_offset: le32(b, 4),
            tx_sgl_offset: (dw2 & 0x1f) as u8,
            tx_wqe_offset: dw2 >> 5,
        }
    }
}

/// `mana_rxcomp_oob` (only `ppi[0]` carries a packet).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RxCompOob {
    /// DW0.
    pub hdr: CqeHeader,
    /// DW1 0..11.
    pub vlan_id: u16,
    /// DW1 12.
    pub vlantag_present: bool,
    /// DW1 13.
    pub outer_ip_csum_ok: bool,
    /// DW1 14.
    pub outer_ip_csum_fail: bool,
    /// DW1 16..24: NDIS hash type bits.
    pub hashtype: u16,
    /// DW1 25.
    pub ip_csum_ok: bool,
    /// DW1 26.
    pub ip_csum_fail: bool,
    /// DW1 27.
    pub tcp_csum_ok: bool,
    /// DW1 28.
    pub tcp_csum_fail: bool,
    /// DW1 29.
    pub udp_csum_ok: bool,
    /// DW1 30.
    pub udp_csum_fail: bool,
    /// `ppi[0]` DW0 bits 0..15.
    pub pkt_len: u16,
    /// `ppi[0]` DW2.
    pub pkt_hash: u32,
    /// DW14.
    pub rx_wqe_offset: u32,
}

impl RxCompOob {
    /// The 60 bytes of `cqe_data`.
    pub fn encode(&self) -> [u8; 60] {
        let mut b = [0u8; 60];
        put_le32(&mut b, 0, self.hdr.encode());
        let dw1 = (u32::from(self.vlan_id) & 0xfff)
            | flag(self.vlantag_present, 12)
            | flag(self.outer_ip_csum_ok, 13)
            | flag(self.outer_ip_csum_fail, 14)
            | ((u32::from(self.hashtype) & 0x1ff) << 16)
            | flag(self.ip_csum_ok, 25)
            | flag(self.ip_csum_fail, 26)
            | flag(self.tcp_csum_ok, 27)
            | flag(self.tcp_csum_fail, 28)
            | flag(self.udp_csum_ok, 29)
            | flag(self.udp_csum_fail, 30);
        put_le32(&mut b, 4, dw1);
        put_le32(&mut b, 8, u32::from(self.pkt_len));
        put_le32(&mut b, 16, self.pkt_hash);
        put_le32(&mut b, 56, self.rx_wqe_offset);
        b
    }

    /// Decodes `cqe_data`.
    pub fn decode(b: &[u8; 60]) -> Self {
        let dw1 = le32(b, 4);
        Self {
            hdr: CqeHeader::decode(le32(b, 0)),
            vlan_id: (dw1 & 0xfff) as u16,
            vlantag_present: bit(dw1, 12),
            outer_ip_csum_ok: bit(dw1, 13),
            outer_ip_csum_fail: bit(dw1, 14),
            hashtype: ((dw1 >> 16) & 0x1ff) as u16,
            ip_csum_ok: bit(dw1, 25),
            ip_csum_fail: bit(dw1, 26),
            tcp_csum_ok: bit(dw1, 27),
            tcp_csum_fail: bit(dw1, 28),
            udp_csum_ok: bit(dw1, 29),
            udp_csum_fail: bit(dw1, 30),
            pkt_len: (le32(b, 8) & 0xffff) as u16,
            pkt_hash: le32(b, 16),
            rx_wqe_offset: le32(b, 56),
        }
    }
}

/// An EQE (16 B): 12 bytes of details and `eqe_info`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Eqe {
    /// Bytes 0–11 as three LE DWs (completion: `details[0] & 0xFFFFFF` is the CQ id).
    pub details: [u32; 3],
    /// `eqe_info` bits 0..7.
    pub eqe_type: u8,
    /// `eqe_info` bits 16..17.
    pub client_id: u8,
    /// `eqe_info` bits 29..31.
    pub owner: u8,
}

impl Eqe {
    /// The 16 bytes.
    pub fn encode(&self) -> [u8; 16] {
        let mut b = [0u8; 16];
        put_le32(&mut b, 0, self.details[0]);
        put_le32(&mut b, 4, self.details[1]);
        put_le32(&mut b, 8, self.details[2]);
        let info = u32::from(self.eqe_type)
            | (u32::from(self.client_id & 3) << 16)
            | (u32::from(self.owner & 7) << 29);
        put_le32(&mut b, 12, info);
        b
    }

    /// Decodes 16 bytes.
    pub fn decode(b: &[u8; 16]) -> Self {
        let info = le32(b, 12);
        Self {
            details: [le32(b, 0), le32(b, 4), le32(b, 8)],
            eqe_type: info as u8,
            client_id: ((info >> 16) & 3) as u8,
            owner: (info >> 29) as u8,
        }
    }
}
