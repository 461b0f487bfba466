// SPDX-License-Identifier: GPL-2.0

//! The command-interface layouts the model reads and writes, from the 6.12 headers
//! (`include/linux/mlx5/mlx5_ifc.h`, `device.h`), written as bit positions.
//!
//! mlx5_ifc describes every structure as big-endian bit strings: `u8 foo[0x10]` is a 16-bit
//! field, and bit 0 is the most significant bit of byte 0. A [`Fld`] holds a field's absolute
//! bit offset inside the command input or output it belongs to (the struct and the offset are
//! given in each comment) and its width; [`get`] and [`set`] do what `MLX5_GET`/`MLX5_SET` do
//! (every field of at most 32 bits lies inside one big-endian dword). 64-bit fields are read
//! and written at their byte offset with the shared byte-order helpers
//! ([`crate::hwif::bytes::be64`], [`crate::hwif::bytes::put_be64`]).
//!
//! This is the device model's own transcription; it shares nothing with the driver's.
//!
//! This file holds the fields' mechanics and the command interface's framing (the
//! initialization segment, the command entry and mailboxes, delivery and command statuses,
//! the opcodes, the input and output headers); the commands' layouts sit in files named as
//! the handlers in [`super::cmd`] (and the driver's `hwif/mlx5/cmd/`): [`hca`] (with
//! [`gen_cap`], [`ft_cap`], [`eth_cap`], [`adapter`]), [`pages`], [`mkey`] (with [`qcnt`]),
//! `res.rs` ([`eq`], [`cq`], [`wq`], [`tis`], [`rqt`], [`tir`], [`eqe`]), [`fs`], [`vport`]
//! (with [`reg`]), [`port`].

pub mod fs;
pub mod hca;
pub mod mkey;
pub mod module;
pub mod pages;
pub mod port;
mod res;
pub mod vport;

pub use hca::{adapter, eth_cap, ft_cap, gen_cap};
pub use mkey::qcnt;
pub use res::{cq, eq, eqe, rqt, tir, tis, wq};
pub use vport::reg;

/// A field: absolute bit offset and width in bits (1..=32, inside one dword).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fld {
    /// Bit offset from the start of the structure (bit 0 = MSB of byte 0).
    pub bit: usize,
    /// Width in bits.
    pub len: usize,
}

/// A field at bit `bit`, `len` bits wide.
pub const fn fld(bit: usize, len: usize) -> Fld {
    Fld { bit, len }
}

/// Reads a field (0 if it lies outside `b`).
pub fn get(b: &[u8], f: Fld) -> u32 {
    let dw = (f.bit / 32) * 4;
    let Some(s) = b.get(dw..dw + 4) else {
        return 0;
    };
    let v = u32::from_be_bytes([s[0], s[1], s[2], s[3]]);
    let shift = 32 - f.len - (f.bit % 32);
    let mask = if f.len >= 32 {
        u32::MAX
    } else {
        (1u32 << f.len) - 1
    };
    (v >> shift) & mask
}

/// Writes a field (nothing if it lies outside `b`); extra bits of `v` are dropped.
pub fn set(b: &mut [u8], f: Fld, v: u32) {
    let dw = (f.bit / 32) * 4;
    let Some(s) = b.get_mut(dw..dw + 4) else {
        return;
    };
    let old = u32::from_be_bytes([s[0], s[1], s[2], s[3]]);
    let shift = 32 - f.len - (f.bit % 32);
    let mask = if f.len >= 32 {
        u32::MAX
    } else {
        ((1u32 << f.len) - 1) << shift
    };
    let new = (old & !mask) | ((v << shift) & mask);
    s.copy_from_slice(&new.to_be_bytes());
}

/// `struct mlx5_init_seg` (device.h): byte offsets of the registers in a function's window.
pub mod iseg {
    /// `fw_rev` (RO).
    pub const FW_REV: u32 = 0x000;
    /// `cmdif_rev_fw_sub` (RO): cmdif_rev in bits 31..16.
    pub const CMDIF_REV_FW_SUB: u32 = 0x004;
    /// `cmdq_addr_h` (RW).
    pub const CMDQ_ADDR_H: u32 = 0x010;
    /// `cmdq_addr_l_sz` (RW): address bits 31..12, nic_interface 9..8, log size 7..4,
    /// log stride 3..0.
    pub const CMDQ_ADDR_L_SZ: u32 = 0x014;
    /// `cmd_dbell` (WO): bit i rings entry i.
    pub const CMD_DBELL: u32 = 0x018;
    /// `initializing` (RO): bit 31 set while the device is not ready for commands.
    pub const INITIALIZING: u32 = 0x1fc;
    /// `health` buffer (`struct health_buffer`, 0x40 bytes, RO).
    pub const HEALTH: u32 = 0x200;
    /// `health.fw_ver` inside the health buffer.
    pub const HEALTH_FW_VER: u32 = 0x230;
    /// `cmd_exec_to` (RO): 0, the default command timeout (lib/tout.c).
    pub const CMD_EXEC_TO: u32 = 0xff8;
    /// `cmd_q_init_to` (RO): 0, no timeouts from the device (lib/tout.c reads the DTOR
    /// register only when this is not 0).
    pub const CMD_Q_INIT_TO: u32 = 0xffc;
    /// `internal_timer_h` (RO): the free-running clock, high word.
    pub const INTERNAL_TIMER_H: u32 = 0x1000;
    /// `internal_timer_l` (RO).
    pub const INTERNAL_TIMER_L: u32 = 0x1004;
    /// `health_counter` (RO).
    pub const HEALTH_COUNTER: u32 = 0x1010;
    /// cmd.c `CMD_IF_REV`.
    pub const CMD_IF_REV: u32 = 5;
}

/// `struct mlx5_cmd_layout` (device.h): a 64-byte command queue entry, byte offsets.
pub mod layout {
    /// `type` (must be `MLX5_PCI_CMD_XPORT`).
    pub const TYPE: usize = 0x00;
    /// `inlen` (BE32).
    pub const INLEN: usize = 0x04;
    /// `in_ptr` (BE64).
    pub const IN_PTR: usize = 0x08;
    /// `in[4]`: the first 16 bytes of the input.
    pub const IN: usize = 0x10;
    /// `out[4]`: the first 16 bytes of the output.
    pub const OUT: usize = 0x20;
    /// `out_ptr` (BE64).
    pub const OUT_PTR: usize = 0x30;
    /// `outlen` (BE32).
    pub const OUTLEN: usize = 0x38;
    /// `token`.
    pub const TOKEN: usize = 0x3c;
    /// `sig`.
    pub const SIG: usize = 0x3d;
    /// `status_own`: delivery status in bits 7..1, ownership in bit 0.
    pub const STATUS_OWN: usize = 0x3f;
    /// Entry size.
    pub const SIZE: usize = 64;
    /// `MLX5_PCI_CMD_XPORT`.
    pub const PCI_CMD_XPORT: u8 = 7;
    /// Inline bytes of input and output.
    pub const INLINE: usize = 16;
}

/// `struct mlx5_cmd_prot_block` (device.h): a 576-byte mailbox, byte offsets.
pub mod mbox {
    /// `data[MLX5_CMD_DATA_BLOCK_SIZE]`.
    pub const DATA_SIZE: usize = 512;
    /// `next` (BE64): bus address of the next block.
    pub const NEXT: usize = 560;
    /// `block_num` (BE32).
    pub const BLOCK_NUM: usize = 568;
    /// `token`.
    pub const TOKEN: usize = 573;
    /// Block size.
    pub const SIZE: usize = 576;
}

/// Delivery status of `status_own` bits 7..1 (cmd.c `MLX5_CMD_DELIVERY_STAT_*`).
pub mod delivery {
    /// OK.
    pub const OK: u8 = 0x0;
    /// Signature error (not generated: signatures are not checked).
    pub const SIGNAT_ERR: u8 = 0x1;
    /// A mailbox's token differs from the entry's.
    pub const TOK_ERR: u8 = 0x2;
    /// A mailbox's block number is out of sequence.
    pub const BAD_BLK_NUM_ERR: u8 = 0x3;
    /// Output pointer misaligned, null when needed, or not writable.
    pub const OUT_PTR_ALIGN_ERR: u8 = 0x4;
    /// Input pointer misaligned, null when needed, or not readable.
    pub const IN_PTR_ALIGN_ERR: u8 = 0x5;
    /// Internal error.
    pub const FW_ERR: u8 = 0x6;
    /// Input length too small for a header or larger than the model accepts.
    pub const IN_LENGTH_ERR: u8 = 0x7;
    /// Output length too small for a header or larger than the model accepts.
    pub const OUT_LENGTH_ERR: u8 = 0x8;
    /// Reserved field not clear.
    pub const RES_FLD_NOT_CLR_ERR: u8 = 0x9;
    /// Bad command descriptor (the entry's `type`).
    pub const CMD_DESCR_ERR: u8 = 0x10;
}

/// Command status of the output header (device.h `MLX5_CMD_STAT_*`).
pub mod status {
    /// OK.
    pub const OK: u8 = 0x0;
    /// Internal error.
    pub const INT_ERR: u8 = 0x1;
    /// Bad operation (unknown opcode or op_mod).
    pub const BAD_OP: u8 = 0x2;
    /// Bad parameter.
    pub const BAD_PARAM: u8 = 0x3;
    /// Bad system state (command not allowed in the HCA's state).
    pub const BAD_SYS_STATE: u8 = 0x4;
    /// Bad resource (a number that names no object of this function).
    pub const BAD_RESOURCE: u8 = 0x5;
    /// Resource busy (in use, or created twice).
    pub const RESOURCE_BUSY: u8 = 0x6;
    /// Limits exceeded.
    pub const LIM_ERR: u8 = 0x8;
    /// Bad resource state (a state transition that is not allowed).
    pub const BAD_RES_STATE: u8 = 0x9;
    /// Bad index.
    pub const IX_ERR: u8 = 0xa;
    /// No resources (a table is full).
    pub const NO_RESOURCES: u8 = 0xf;
    /// Bad input length.
    pub const BAD_INPUT_LEN: u8 = 0x50;
    /// Bad output length.
    pub const BAD_OUTPUT_LEN: u8 = 0x51;
}

/// Opcodes (mlx5_ifc.h `MLX5_CMD_OP_*`).
pub mod op {
    /// QUERY_HCA_CAP.
    pub const QUERY_HCA_CAP: u16 = 0x100;
    /// QUERY_ADAPTER.
    pub const QUERY_ADAPTER: u16 = 0x101;
    /// QUERY_PAGES.
    pub const QUERY_PAGES: u16 = 0x107;
    /// MANAGE_PAGES.
    pub const MANAGE_PAGES: u16 = 0x108;
    /// SET_HCA_CAP.
    pub const SET_HCA_CAP: u16 = 0x109;
    /// CREATE_MKEY.
    pub const CREATE_MKEY: u16 = 0x200;
    /// DESTROY_MKEY.
    pub const DESTROY_MKEY: u16 = 0x202;
    /// ALLOC_Q_COUNTER.
    pub const ALLOC_Q_COUNTER: u16 = 0x771;
    /// DEALLOC_Q_COUNTER.
    pub const DEALLOC_Q_COUNTER: u16 = 0x772;
    /// QUERY_Q_COUNTER.
    pub const QUERY_Q_COUNTER: u16 = 0x773;
    /// MODIFY_FLOW_TABLE.
    pub const MODIFY_FLOW_TABLE: u16 = 0x93c;
    /// INIT_HCA.
    pub const INIT_HCA: u16 = 0x102;
    /// TEARDOWN_HCA.
    pub const TEARDOWN_HCA: u16 = 0x103;
    /// ENABLE_HCA.
    pub const ENABLE_HCA: u16 = 0x104;
    /// DISABLE_HCA.
    pub const DISABLE_HCA: u16 = 0x105;
    /// QUERY_ISSI.
    pub const QUERY_ISSI: u16 = 0x10a;
    /// SET_ISSI.
    pub const SET_ISSI: u16 = 0x10b;
    /// CREATE_EQ.
    pub const CREATE_EQ: u16 = 0x301;
    /// DESTROY_EQ.
    pub const DESTROY_EQ: u16 = 0x302;
    /// CREATE_CQ.
    pub const CREATE_CQ: u16 = 0x400;
    /// DESTROY_CQ.
    pub const DESTROY_CQ: u16 = 0x401;
    /// MODIFY_CQ.
    pub const MODIFY_CQ: u16 = 0x403;
    /// QUERY_VPORT_STATE.
    pub const QUERY_VPORT_STATE: u16 = 0x750;
    /// QUERY_NIC_VPORT_CONTEXT.
    pub const QUERY_NIC_VPORT_CONTEXT: u16 = 0x754;
    /// MODIFY_NIC_VPORT_CONTEXT.
    pub const MODIFY_NIC_VPORT_CONTEXT: u16 = 0x755;
    /// QUERY_VPORT_COUNTER.
    pub const QUERY_VPORT_COUNTER: u16 = 0x770;
    /// ALLOC_PD.
    pub const ALLOC_PD: u16 = 0x800;
    /// DEALLOC_PD.
    pub const DEALLOC_PD: u16 = 0x801;
    /// ALLOC_UAR.
    pub const ALLOC_UAR: u16 = 0x802;
    /// DEALLOC_UAR.
    pub const DEALLOC_UAR: u16 = 0x803;
    /// ACCESS_REG.
    pub const ACCESS_REG: u16 = 0x805;
    /// ALLOC_TRANSPORT_DOMAIN.
    pub const ALLOC_TRANSPORT_DOMAIN: u16 = 0x816;
    /// DEALLOC_TRANSPORT_DOMAIN.
    pub const DEALLOC_TRANSPORT_DOMAIN: u16 = 0x817;
    /// CREATE_TIR.
    pub const CREATE_TIR: u16 = 0x900;
    /// MODIFY_TIR.
    pub const MODIFY_TIR: u16 = 0x901;
    /// DESTROY_TIR.
    pub const DESTROY_TIR: u16 = 0x902;
    /// CREATE_SQ.
    pub const CREATE_SQ: u16 = 0x904;
    /// MODIFY_SQ.
    pub const MODIFY_SQ: u16 = 0x905;
    /// DESTROY_SQ.
    pub const DESTROY_SQ: u16 = 0x906;
    /// QUERY_SQ.
    pub const QUERY_SQ: u16 = 0x907;
    /// CREATE_RQ.
    pub const CREATE_RQ: u16 = 0x908;
    /// MODIFY_RQ.
    pub const MODIFY_RQ: u16 = 0x909;
    /// DESTROY_RQ.
    pub const DESTROY_RQ: u16 = 0x90a;
    /// QUERY_RQ.
    pub const QUERY_RQ: u16 = 0x90b;
    /// CREATE_TIS.
    pub const CREATE_TIS: u16 = 0x912;
    /// DESTROY_TIS.
    pub const DESTROY_TIS: u16 = 0x914;
    /// CREATE_RQT.
    pub const CREATE_RQT: u16 = 0x916;
    /// MODIFY_RQT.
    pub const MODIFY_RQT: u16 = 0x917;
    /// DESTROY_RQT.
    pub const DESTROY_RQT: u16 = 0x918;
    /// SET_FLOW_TABLE_ROOT.
    pub const SET_FLOW_TABLE_ROOT: u16 = 0x92f;
    /// CREATE_FLOW_TABLE.
    pub const CREATE_FLOW_TABLE: u16 = 0x930;
    /// DESTROY_FLOW_TABLE.
    pub const DESTROY_FLOW_TABLE: u16 = 0x931;
    /// CREATE_FLOW_GROUP.
    pub const CREATE_FLOW_GROUP: u16 = 0x933;
    /// DESTROY_FLOW_GROUP.
    pub const DESTROY_FLOW_GROUP: u16 = 0x934;
    /// SET_FLOW_TABLE_ENTRY.
    pub const SET_FLOW_TABLE_ENTRY: u16 = 0x936;
    /// DELETE_FLOW_TABLE_ENTRY.
    pub const DELETE_FLOW_TABLE_ENTRY: u16 = 0x938;
}

use self::fld as f;

/// Every `*_in` header: `opcode` at bit 0x0 (16 bits).
pub const IN_OPCODE: Fld = f(0x0, 0x10);
/// Every `*_in` header: `op_mod` at bit 0x30 (16 bits).
pub const IN_OP_MOD: Fld = f(0x30, 0x10);
/// Every `*_out` header: `status` at bit 0x0 (8 bits).
pub const OUT_STATUS: Fld = f(0x0, 0x8);
/// Every `*_out` header: `syndrome` at bit 0x20 (32 bits).
pub const OUT_SYNDROME: Fld = f(0x20, 0x20);
/// The 24-bit object number of `alloc_uar_out.uar`, `alloc_pd_out.pd`,
/// `alloc_transport_domain_out.transport_domain`, `create_cq_out.cqn`, `create_sq_out.sqn`,
/// `create_rq_out.rqn`, `create_tis_out.tisn`, `create_rqt_out.rqtn`,
/// `create_tir_out.tirn`: bit 0x48 (24 bits); and of the same-named input fields of
/// `dealloc_*_in`/`destroy_*_in`/`query_{sq,rq}_in`/`modify_rqt_in` (bit 0x48).
pub const OBJ_NUM: Fld = f(0x48, 0x18);
/// `create_eq_out.eq_number` / `destroy_eq_in.eq_number`: bit 0x58 (8 bits).
pub const EQ_NUMBER: Fld = f(0x58, 0x8);
