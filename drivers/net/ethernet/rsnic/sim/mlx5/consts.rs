// SPDX-License-Identifier: GPL-2.0

//! mlx5 constants from rsnic-hardware.rst, parts A and C: WQE and DS sizes, opcodes, the
//! ctrl segment's flags, CQE opcodes and formats (upstream include/linux/mlx5/qp.h,
//! device.h, en/txrx.h).

/// WQE basic block.
pub const WQEBB: usize = 64;
/// DS unit.
pub const DS: usize = 16;
/// NOP opcode.
pub const OP_NOP: u8 = 0x00;
/// SEND opcode.
pub const OP_SEND: u8 = 0x0a;
/// LSO opcode.
pub const OP_LSO: u8 = 0x0e;
/// Enhanced multi-packet send WQE opcode.
pub const OP_ENHANCED_MPSW: u8 = 0x29;
/// `fm_ce_se` CQ_UPDATE.
pub const CQ_UPDATE: u8 = 0x08;
/// Inline segment flag in `byte_count`.
pub const INLINE_SEG: u32 = 0x8000_0000;
/// `insert.type` INSERT_VLAN.
pub const INSERT_VLAN: u16 = 0x8000;
/// cs_flags: inner L3 checksum.
pub const CS_L3_INNER: u8 = 0x10;
/// cs_flags: inner L4 checksum.
pub const CS_L4_INNER: u8 = 0x20;
/// cs_flags: L3 checksum.
pub const CS_L3: u8 = 0x40;
/// cs_flags: L4 checksum.
pub const CS_L4: u8 = 0x80;
/// CQE opcode: requester (TX) completion.
pub const CQE_REQ: u8 = 0;
/// CQE opcode: responder send (RX) completion.
pub const CQE_RESP_SEND: u8 = 2;
/// CQE opcode: requester error.
pub const CQE_REQ_ERR: u8 = 13;
/// CQE opcode: responder error.
pub const CQE_RESP_ERR: u8 = 14;
/// CQE opcode: invalid (initial buffer contents).
pub const CQE_INVALID: u8 = 15;
/// CQE format "compressed" (op_own bits 3..2).
pub const CQE_FORMAT_COMPRESSED: u8 = 3;
/// Syndrome LOCAL_LENGTH.
pub const SYND_LOCAL_LENGTH: u8 = 0x01;
/// Syndrome LOCAL_QP_OP.
pub const SYND_LOCAL_QP_OP: u8 = 0x02;
/// Syndrome LOCAL_PROT.
pub const SYND_LOCAL_PROT: u8 = 0x04;
/// Syndrome WR_FLUSH.
pub const SYND_WR_FLUSH: u8 = 0x05;
/// The terminating lkey of an RX scatter list.
pub const TERMINATE_LKEY: u32 = 0x100;
/// hds_ip_ext: L2 ok.
pub const L2_OK: u8 = 0x01;
/// hds_ip_ext: L3 ok.
pub const L3_OK: u8 = 0x02;
/// hds_ip_ext: L4 ok.
pub const L4_OK: u8 = 0x04;
