// SPDX-License-Identifier: GPL-2.0

//! mlx5 completion entries: CQE64, the error CQE view and the 8-byte mini CQE (spec C.1).
//!
//! A [`Cqe64`] is a copy of the 64 device-written bytes; every accessor reads a fixed offset
//! of that copy, so nothing here can fail on device input. Setters exist for tests and for
//! decompression (which rebuilds CQEs from a title and a mini CQE).

use crate::hwif::bytes::{be16, be32, be64, put_be16, put_be32};

/// Size of a CQE slot.
pub const CQE_SIZE: usize = 64;
/// Size of a mini CQE.
pub const MINI_CQE_SIZE: usize = 8;
/// Mini CQEs per array slot (`MLX5_MINI_CQE_ARRAY_SIZE`).
pub const MINI_CQE_ARRAY_SIZE: usize = 8;

/// CQE opcode: requester (TX) completion.
pub const CQE_REQ: u8 = 0;
/// CQE opcode: responder send (RX packet).
pub const CQE_RESP_SEND: u8 = 2;
/// CQE opcode: requester error.
pub const CQE_REQ_ERR: u8 = 13;
/// CQE opcode: responder error.
pub const CQE_RESP_ERR: u8 = 14;
/// CQE opcode: invalid (initial value of every slot).
pub const CQE_INVALID: u8 = 15;

/// CQE format: not compressed.
pub const CQE_FORMAT_NONE: u8 = 0;
/// CQE format: compressed (title of a mini-CQE session, or an array slot).
pub const CQE_FORMAT_COMPRESSED: u8 = 3;

/// `op_own` written into every slot at CQ creation (opcode INVALID, owner 1).
pub const CQE_OP_OWN_INIT: u8 = 0xf1;
/// `validity_iteration_count` written into every slot at CQ creation.
pub const CQE_VALIDITY_INIT: u8 = 0xff;

/// `hds_ip_ext`: L2 OK.
pub const CQE_L2_OK: u8 = 1 << 0;
/// `hds_ip_ext`: L3 OK.
pub const CQE_L3_OK: u8 = 1 << 1;
/// `hds_ip_ext`: L4 OK.
pub const CQE_L4_OK: u8 = 1 << 2;

/// Error syndrome: local length error.
pub const SYND_LOCAL_LENGTH: u8 = 0x01;
/// Error syndrome: local QP operation error.
pub const SYND_LOCAL_QP_OP: u8 = 0x02;
/// Error syndrome: local protection error.
pub const SYND_LOCAL_PROT: u8 = 0x04;
/// Error syndrome: work request flushed.
pub const SYND_WR_FLUSH: u8 = 0x05;

/// Byte offsets of CQE64 fields.
pub mod off {
    /// `rss_hash_result` (BE32).
    pub const RSS_HASH_RESULT: usize = 12;
    /// `rss_hash_type`.
    pub const RSS_HASH_TYPE: usize = 16;
    /// `check_sum` (BE16).
    pub const CHECK_SUM: usize = 20;
    /// `hds_ip_ext`.
    pub const HDS_IP_EXT: usize = 28;
    /// `l4_l3_hdr_type`.
    pub const L4_L3_HDR_TYPE: usize = 29;
    /// `vlan_info` (BE16).
    pub const VLAN_INFO: usize = 30;
    /// `byte_cnt` (BE32).
    pub const BYTE_CNT: usize = 44;
    /// `timestamp_h` (BE32), followed by `timestamp_l`.
    pub const TIMESTAMP: usize = 48;
    /// Error CQE: `vendor_err_synd`.
    pub const VENDOR_ERR_SYND: usize = 54;
    /// Error CQE: `syndrome`.
    pub const SYNDROME: usize = 55;
    /// `sop_drop_qpn` (BE32); error CQE: `s_wqe_opcode_qpn`.
    pub const SOP_DROP_QPN: usize = 56;
    /// `wqe_counter` (BE16).
    pub const WQE_COUNTER: usize = 60;
    /// `signature` / `validity_iteration_count`.
    pub const VALIDITY: usize = 62;
    /// `op_own`.
    pub const OP_OWN: usize = 63;
}

/// A 64-byte CQE, copied out of the CQ buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cqe64(pub [u8; CQE_SIZE]);

impl Default for Cqe64 {
    fn default() -> Self {
        Self([0; CQE_SIZE])
    }
}

impl Cqe64 {
    /// `op_own` byte.
    #[inline(always)]
    pub fn op_own(&self) -> u8 {
        self.0[off::OP_OWN]
    }
    /// Opcode (`op_own >> 4`).
    #[inline(always)]
    pub fn opcode(&self) -> u8 {
        self.op_own() >> 4
    }
    /// Owner bit (`op_own & 1`).
    #[inline(always)]
    pub fn owner(&self) -> u8 {
        self.op_own() & 1
    }
    /// Format (`(op_own >> 2) & 3`).
    #[inline(always)]
    pub fn format(&self) -> u8 {
        (self.op_own() >> 2) & 3
    }
    /// `wqe_counter`.
    #[inline(always)]
    pub fn wqe_counter(&self) -> u16 {
        be16(&self.0, off::WQE_COUNTER)
    }
    /// `byte_cnt`.
    #[inline(always)]
    pub fn byte_cnt(&self) -> u32 {
        be32(&self.0, off::BYTE_CNT)
    }
    /// `check_sum`.
    pub fn check_sum(&self) -> u16 {
        be16(&self.0, off::CHECK_SUM)
    }
    /// `rss_hash_result`.
    pub fn rss_hash_result(&self) -> u32 {
        be32(&self.0, off::RSS_HASH_RESULT)
    }
    /// `rss_hash_type`.
    pub fn rss_hash_type(&self) -> u8 {
        self.0[off::RSS_HASH_TYPE]
    }
    /// `hds_ip_ext` (L2/L3/L4 OK bits).
    pub fn hds_ip_ext(&self) -> u8 {
        self.0[off::HDS_IP_EXT]
    }
    /// `l4_l3_hdr_type`.
    pub fn l4_l3_hdr_type(&self) -> u8 {
        self.0[off::L4_L3_HDR_TYPE]
    }
    /// The VLAN tag was stripped (`cqe_has_vlan`).
    pub fn has_vlan(&self) -> bool {
        self.l4_l3_hdr_type() & 1 != 0
    }
    /// `vlan_info` (stripped TCI).
    pub fn vlan_info(&self) -> u16 {
        be16(&self.0, off::VLAN_INFO)
    }
    /// 64-bit timestamp (`timestamp_h:timestamp_l`).
    pub fn timestamp(&self) -> u64 {
        be64(&self.0, off::TIMESTAMP)
    }
    /// `sop_drop_qpn`.
    pub fn sop_drop_qpn(&self) -> u32 {
        be32(&self.0, off::SOP_DROP_QPN)
    }
    /// Flow tag: low 12 bits of `sop_drop_qpn`.
    pub fn flow_tag(&self) -> u32 {
        self.sop_drop_qpn() & 0xfff
    }
    /// `validity_iteration_count` / signature byte.
    pub fn validity(&self) -> u8 {
        self.0[off::VALIDITY]
    }
    /// Error CQE: `syndrome`.
    pub fn syndrome(&self) -> u8 {
        self.0[off::SYNDROME]
    }
    /// Error CQE: `vendor_err_synd`.
    pub fn vendor_err_synd(&self) -> u8 {
        self.0[off::VENDOR_ERR_SYND]
    }
    /// Error CQE: opcode of the failed WQE (bits 31..24 of `s_wqe_opcode_qpn`).
    pub fn err_wqe_opcode(&self) -> u8 {
        (self.sop_drop_qpn() >> 24) as u8
    }
    /// Error CQE: QPN/SQN (bits 23..0 of `s_wqe_opcode_qpn`).
    pub fn err_qpn(&self) -> u32 {
        self.sop_drop_qpn() & 0x00ff_ffff
    }

    /// Sets `op_own` from its parts.
    pub fn set_op_own(&mut self, opcode: u8, format: u8, owner: u8) {
        self.0[off::OP_OWN] = (opcode << 4) | ((format & 3) << 2) | (owner & 1);
    }
    /// Sets `wqe_counter`.
    pub fn set_wqe_counter(&mut self, v: u16) {
        put_be16(&mut self.0, off::WQE_COUNTER, v);
    }
    /// Sets `byte_cnt`.
    pub fn set_byte_cnt(&mut self, v: u32) {
        put_be32(&mut self.0, off::BYTE_CNT, v);
    }
    /// Sets `check_sum`.
    pub fn set_check_sum(&mut self, v: u16) {
        put_be16(&mut self.0, off::CHECK_SUM, v);
    }
    /// Sets `rss_hash_result`.
    pub fn set_rss_hash_result(&mut self, v: u32) {
        put_be32(&mut self.0, off::RSS_HASH_RESULT, v);
    }
    /// Sets `rss_hash_type`.
    pub fn set_rss_hash_type(&mut self, v: u8) {
        self.0[off::RSS_HASH_TYPE] = v;
    }
    /// Sets `hds_ip_ext`.
    pub fn set_hds_ip_ext(&mut self, v: u8) {
        self.0[off::HDS_IP_EXT] = v;
    }
    /// Sets `sop_drop_qpn` / `s_wqe_opcode_qpn`.
    pub fn set_sop_drop_qpn(&mut self, v: u32) {
        put_be32(&mut self.0, off::SOP_DROP_QPN, v);
    }
    /// Sets the error syndromes.
    pub fn set_syndrome(&mut self, syndrome: u8, vendor: u8) {
        self.0[off::SYNDROME] = syndrome;
        self.0[off::VENDOR_ERR_SYND] = vendor;
    }
}

/// An 8-byte mini CQE (`struct mlx5_mini_cqe8`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MiniCqe8(pub [u8; MINI_CQE_SIZE]);

impl MiniCqe8 {
    /// Bytes 0..3 as `rx_hash_result`.
    pub fn rx_hash_result(&self) -> u32 {
        u32::from_be_bytes([self.0[0], self.0[1], self.0[2], self.0[3]])
    }
    /// Bytes 0..1 as `checksum` (CSUM formats).
    pub fn checksum(&self) -> u16 {
        u16::from_be_bytes([self.0[0], self.0[1]])
    }
    /// Bytes 2..3 as `stridx` (CSUM_STRIDX format).
    pub fn stridx(&self) -> u16 {
        u16::from_be_bytes([self.0[2], self.0[3]])
    }
    /// Bytes 0..1 as `wqe_counter` (TX format).
    pub fn wqe_counter(&self) -> u16 {
        self.checksum()
    }
    /// Byte 2 as `s_wqe_opcode` (TX format).
    pub fn s_wqe_opcode(&self) -> u8 {
        self.0[2]
    }
    /// `byte_cnt`.
    pub fn byte_cnt(&self) -> u32 {
        u32::from_be_bytes([self.0[4], self.0[5], self.0[6], self.0[7]])
    }
    /// A mini CQE of the CSUM format.
    pub fn with_checksum(checksum: u16, byte_cnt: u32) -> Self {
        let c = checksum.to_be_bytes();
        let b = byte_cnt.to_be_bytes();
        Self([c[0], c[1], 0, 0, b[0], b[1], b[2], b[3]])
    }
    /// Mini CQE `i` (0..8) of an array slot; `None` past the end.
    pub fn from_array(slot: &Cqe64, i: usize) -> Option<Self> {
        let s = slot.0.get(i * MINI_CQE_SIZE..(i + 1) * MINI_CQE_SIZE)?;
        let mut m = [0u8; MINI_CQE_SIZE];
        m.copy_from_slice(s);
        Some(Self(m))
    }
}
