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
//! ([`crate::dp::bytes::be64`], [`crate::dp::bytes::put_be64`]).
//!
//! This is the device model's own transcription; it shares nothing with the driver's.

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

/// `enable_hca_in` / `disable_hca_in`.
pub mod hca {
    use super::{fld as f, Fld};
    /// `embedded_cpu_function`: bit 0x40.
    pub const EMBEDDED_CPU_FUNCTION: Fld = f(0x40, 1);
    /// `function_id`: bit 0x50 (16 bits).
    pub const FUNCTION_ID: Fld = f(0x50, 0x10);
    /// `teardown_hca_in.profile`: bit 0x50 (16 bits).
    pub const TEARDOWN_PROFILE: Fld = f(0x50, 0x10);
    /// `query_issi_out.current_issi`: bit 0x50 (16 bits).
    pub const QUERY_ISSI_CURRENT: Fld = f(0x50, 0x10);
    /// `query_issi_out.supported_issi_dw0`: bit 0x360 (byte 0x6c, 32 bits).
    pub const QUERY_ISSI_SUPPORTED_DW0: Fld = f(0x360, 0x20);
    /// `set_issi_in.current_issi`: bit 0x50 (16 bits).
    pub const SET_ISSI_CURRENT: Fld = f(0x50, 0x10);
    /// `query_hca_cap_in.other_function`: bit 0x40.
    pub const CAP_OTHER_FUNCTION: Fld = f(0x40, 1);
    /// `query_hca_cap_out.capability`: byte 0x10 (bit 0x80); the union is 0x1000 bytes.
    pub const CAP_OFF: usize = 0x10;
    /// Size of `hca_cap_union`.
    pub const CAP_SIZE: usize = 0x1000;
}

/// `cmd_hca_cap` fields, bit offsets inside the capability (add `8 * CAP_OFF` for the output).
pub mod gen_cap {
    use super::{fld as f, Fld};
    /// `log_max_cq_sz`: bit 0xc8 (8).
    pub const LOG_MAX_CQ_SZ: Fld = f(0xc8, 8);
    /// `log_max_cq`: bit 0xdb (5).
    pub const LOG_MAX_CQ: Fld = f(0xdb, 5);
    /// `cq_moderation`: bit 0x222 (1).
    pub const CQ_MODERATION: Fld = f(0x222, 1);
    /// `cq_period_mode_modify`: bit 0x223 (1).
    pub const CQ_PERIOD_MODE_MODIFY: Fld = f(0x223, 1);
    /// `cq_period_start_from_cqe`: bit 0x22b (1).
    pub const CQ_PERIOD_START_FROM_CQE: Fld = f(0x22b, 1);
    /// `log_max_eq_sz`: bit 0xe0 (8).
    pub const LOG_MAX_EQ_SZ: Fld = f(0xe0, 8);
    /// `log_max_eq`: bit 0xfc (4).
    pub const LOG_MAX_EQ: Fld = f(0xfc, 4);
    /// `vport_counters`: bit 0x181 (1).
    pub const VPORT_COUNTERS: Fld = f(0x181, 1);
    /// `nic_flow_table`: bit 0x1a6 (1).
    pub const NIC_FLOW_TABLE: Fld = f(0x1a6, 1);
    /// `port_type`: bit 0x1b6 (2); 1 = Ethernet.
    pub const PORT_TYPE: Fld = f(0x1b6, 2);
    /// `num_ports`: bit 0x1b8 (8).
    pub const NUM_PORTS: Fld = f(0x1b8, 8);
    /// `log_max_msg`: bit 0x1c3 (5).
    pub const LOG_MAX_MSG: Fld = f(0x1c3, 5);
    /// `eth_net_offloads`: bit 0x21c (1).
    pub const ETH_NET_OFFLOADS: Fld = f(0x21c, 1);
    /// `uar_sz`: bit 0x24a (6): log2 of the UAR area in 4 KiB pages... (model: log2 pages
    /// of a function window).
    pub const UAR_SZ: Fld = f(0x24a, 6);
    /// `log_pg_sz`: bit 0x258 (8).
    pub const LOG_PG_SZ: Fld = f(0x258, 8);
    /// `log_max_transport_domain`: bit 0x323 (5).
    pub const LOG_MAX_TRANSPORT_DOMAIN: Fld = f(0x323, 5);
    /// `log_max_pd`: bit 0x32b (5).
    pub const LOG_MAX_PD: Fld = f(0x32b, 5);
    /// `log_max_rq`: bit 0x363 (5).
    pub const LOG_MAX_RQ: Fld = f(0x363, 5);
    /// `log_max_sq`: bit 0x36b (5).
    pub const LOG_MAX_SQ: Fld = f(0x36b, 5);
    /// `log_max_tir`: bit 0x373 (5).
    pub const LOG_MAX_TIR: Fld = f(0x373, 5);
    /// `log_max_tis`: bit 0x37b (5).
    pub const LOG_MAX_TIS: Fld = f(0x37b, 5);
    /// `log_max_rqt`: bit 0x38b (5).
    pub const LOG_MAX_RQT: Fld = f(0x38b, 5);
    /// `log_max_rqt_size`: bit 0x393 (5).
    pub const LOG_MAX_RQT_SIZE: Fld = f(0x393, 5);
    /// `log_max_wq_sz`: bit 0x3db (5).
    pub const LOG_MAX_WQ_SZ: Fld = f(0x3db, 5);
    /// `max_num_eqs`: bit 0x470 (16).
    pub const MAX_NUM_EQS: Fld = f(0x470, 0x10);
    /// `cqe_compression`: bit 0x5bf (1).
    pub const CQE_COMPRESSION: Fld = f(0x5bf, 1);
    /// `cqe_compression_max_num`: bit 0x5d0 (16).
    pub const CQE_COMPRESSION_MAX_NUM: Fld = f(0x5d0, 0x10);
    /// `log_max_qp`: bit 0x9b (5). Settable (SET_HCA_CAP), up to the maximum.
    pub const LOG_MAX_QP: Fld = f(0x9b, 5);
    /// `log_max_mkey`: bit 0xea (6).
    pub const LOG_MAX_MKEY: Fld = f(0xea, 6);
    /// `max_qp_cnt`: bit 0x186 (10): Q counters per function.
    pub const MAX_QP_CNT: Fld = f(0x186, 0xa);
    /// `pkey_table_size`: bit 0x190 (16). Settable.
    pub const PKEY_TABLE_SIZE: Fld = f(0x190, 0x10);
    /// `cmdif_checksum`: bit 0x210 (2). Settable; the model checks no signature.
    pub const CMDIF_CHECKSUM: Fld = f(0x210, 2);
    /// `log_max_current_uc_list`: bit 0x3fb (5).
    pub const LOG_MAX_CURRENT_UC_LIST: Fld = f(0x3fb, 5);
    /// `log_max_current_mc_list`: bit 0x3f3 (5).
    pub const LOG_MAX_CURRENT_MC_LIST: Fld = f(0x3f3, 5);
    /// `log_max_vlan_list`: bit 0x3eb (5).
    pub const LOG_MAX_VLAN_LIST: Fld = f(0x3eb, 5);
    /// `log_uar_page_sz`: bit 0x490 (16). Settable; the model's UAR pages are 4 KiB (0).
    pub const LOG_UAR_PAGE_SZ: Fld = f(0x490, 0x10);
    /// `num_of_uars_per_page`: bit 0x520 (32).
    pub const NUM_OF_UARS_PER_PAGE: Fld = f(0x520, 0x20);
    /// `max_wqe_sz_sq`: bit 0x290 (16).
    pub const MAX_WQE_SZ_SQ: Fld = f(0x290, 0x10);
    /// `max_wqe_sz_rq`: bit 0x2b0 (16).
    pub const MAX_WQE_SZ_RQ: Fld = f(0x2b0, 0x10);
    /// `max_tc`: bit 0x1cc (4).
    pub const MAX_TC: Fld = f(0x1cc, 4);
    /// `log_bf_reg_size`: bit 0x26b (5).
    pub const LOG_BF_REG_SIZE: Fld = f(0x26b, 5);
    /// `cqe_version`: bit 0x1fc (4).
    pub const CQE_VERSION: Fld = f(0x1fc, 4);
    /// `log_max_msix` is not a field of 6.12; the function's vectors are `max_num_eqs`'s.
    /// `vport_counter_local_loopback`: bit 0x338 (1).
    pub const VPORT_COUNTER_LOCAL_LOOPBACK: Fld = f(0x338, 1);
    /// `log_max_flow_counter_bulk`: bit 0x348 (8).
    pub const LOG_MAX_FLOW_COUNTER_BULK: Fld = f(0x348, 8);
    /// `nic_vport_change_event`: bit 0x3e0 (1).
    pub const NIC_VPORT_CHANGE_EVENT: Fld = f(0x3e0, 1);
    /// `disable_local_lb_uc`: bit 0x3e1 (1).
    pub const DISABLE_LOCAL_LB_UC: Fld = f(0x3e1, 1);
    /// `disable_local_lb_mc`: bit 0x3e2 (1).
    pub const DISABLE_LOCAL_LB_MC: Fld = f(0x3e2, 1);
    /// `log_max_l2_table`: bit 0x483 (5).
    pub const LOG_MAX_L2_TABLE: Fld = f(0x483, 5);
    /// `log_max_tis_per_sq`: bit 0x39b (5).
    pub const LOG_MAX_TIS_PER_SQ: Fld = f(0x39b, 5);
    /// `device_frequency_khz`: bit 0x4e0 (32): the internal timer's rate.
    pub const DEVICE_FREQUENCY_KHZ: Fld = f(0x4e0, 0x20);
    /// `basic_cyclic_rcv_wqe`: bit 0x380 (1).
    pub const BASIC_CYCLIC_RCV_WQE: Fld = f(0x380, 1);
}

/// `flow_table_nic_cap` (capability type 7), bit offsets inside the capability: the NIC
/// RX table properties (`flow_table_prop_layout` at bit 0x200) with their supported match
/// fields (`ft_field_support`, `flow_table_fields_supported` at bit 0x100 of the
/// properties). The property fields are relative to the properties.
pub mod ft_cap {
    use super::{fld as f, Fld};
    /// Bit of `flow_table_properties_nic_receive` in the capability.
    pub const NIC_RX: usize = 0x200;
    /// `ft_support` (1).
    pub const FT_SUPPORT: Fld = f(0x0, 1);
    /// `flow_modify_en` (1).
    pub const FLOW_MODIFY_EN: Fld = f(0x3, 1);
    /// `modify_root` (1).
    pub const MODIFY_ROOT: Fld = f(0x4, 1);
    /// `identified_miss_table_mode` (1).
    pub const IDENTIFIED_MISS_TABLE_MODE: Fld = f(0x5, 1);
    /// `flow_table_modify` (1).
    pub const FLOW_TABLE_MODIFY: Fld = f(0x6, 1);
    /// `log_max_ft_size` (6).
    pub const LOG_MAX_FT_SIZE: Fld = f(0x22, 6);
    /// `max_ft_level` (8).
    pub const MAX_FT_LEVEL: Fld = f(0x38, 8);
    /// `log_max_ft_num` (8).
    pub const LOG_MAX_FT_NUM: Fld = f(0x78, 8);
    /// `log_max_destination` (8).
    pub const LOG_MAX_DESTINATION: Fld = f(0x98, 8);
    /// `log_max_flow` (8).
    pub const LOG_MAX_FLOW: Fld = f(0xb8, 8);
    /// `ft_field_support.outer_dmac` (1).
    pub const FIELD_OUTER_DMAC: Fld = f(0x100, 1);
    /// `ft_field_support.outer_ether_type`.
    pub const FIELD_OUTER_ETHER_TYPE: Fld = f(0x102, 1);
    /// `ft_field_support.outer_first_vid`.
    pub const FIELD_OUTER_FIRST_VID: Fld = f(0x106, 1);
    /// `ft_field_support.outer_sip`.
    pub const FIELD_OUTER_SIP: Fld = f(0x10c, 1);
    /// `ft_field_support.outer_dip`.
    pub const FIELD_OUTER_DIP: Fld = f(0x10d, 1);
    /// `ft_field_support.outer_ip_protocol`.
    pub const FIELD_OUTER_IP_PROTOCOL: Fld = f(0x10f, 1);
    /// `ft_field_support.outer_udp_sport`.
    pub const FIELD_OUTER_UDP_SPORT: Fld = f(0x112, 1);
    /// `ft_field_support.outer_udp_dport`.
    pub const FIELD_OUTER_UDP_DPORT: Fld = f(0x113, 1);
    /// `ft_field_support.outer_tcp_sport`.
    pub const FIELD_OUTER_TCP_SPORT: Fld = f(0x114, 1);
    /// `ft_field_support.outer_tcp_dport`.
    pub const FIELD_OUTER_TCP_DPORT: Fld = f(0x115, 1);
}

/// QUERY_PAGES / MANAGE_PAGES (`query_pages_in/out`, `manage_pages_in/out`).
pub mod pages {
    use super::{fld as f, Fld};
    /// `*.embedded_cpu_function`: bit 0x40 (1).
    pub const EMBEDDED_CPU_FUNCTION: Fld = f(0x40, 1);
    /// `*.function_id`: bit 0x50 (16).
    pub const FUNCTION_ID: Fld = f(0x50, 0x10);
    /// `query_pages_out.num_pages`: bit 0x60 (32, signed).
    pub const NUM_PAGES: Fld = f(0x60, 0x20);
    /// `manage_pages_in.input_num_entries`: bit 0x60 (32).
    pub const INPUT_NUM_ENTRIES: Fld = f(0x60, 0x20);
    /// `manage_pages_out.output_num_entries`: bit 0x40 (32).
    pub const OUTPUT_NUM_ENTRIES: Fld = f(0x40, 0x20);
    /// `manage_pages_in.pas[]` and `manage_pages_out.pas[]`: byte 0x10, 8 bytes each.
    pub const PAS: usize = 0x10;
    /// `MLX5_QUERY_PAGES_IN_OP_MOD_BOOT_PAGES`.
    pub const BOOT: u32 = 1;
    /// `MLX5_QUERY_PAGES_IN_OP_MOD_INIT_PAGES`.
    pub const INIT: u32 = 2;
    /// `MLX5_QUERY_PAGES_IN_OP_MOD_REGULAR_PAGES`.
    pub const REGULAR: u32 = 3;
    /// `MLX5_PAGES_CANT_GIVE` (manage_pages op_mod).
    pub const CANT_GIVE: u32 = 0;
    /// `MLX5_PAGES_GIVE`.
    pub const GIVE: u32 = 1;
    /// `MLX5_PAGES_TAKE`.
    pub const TAKE: u32 = 2;
    /// `mlx5_eqe_page_req.func_id` (BE16) inside the EQE.
    pub const EQE_FUNC_ID: usize = 0x22;
    /// `mlx5_eqe_page_req.num_pages` (BE32, signed) inside the EQE.
    pub const EQE_NUM_PAGES: usize = 0x24;
}

/// QUERY_ADAPTER (`query_adapter_out`: the parameter block at byte 0x10).
pub mod adapter {
    /// Byte of `query_adapter_struct` in the output.
    pub const BLOCK: usize = 0x10;
    /// `ieee_vendor_id` (24 bits at bit 0xc8 of the block): byte 0x19, 3 bytes.
    pub const IEEE_VENDOR_ID: usize = 0x19;
    /// `vsd_vendor_id` (16 bits): byte 0x1e.
    pub const VSD_VENDOR_ID: usize = 0x1e;
    /// `vsd_contd_psid` (16 bytes): byte 0xf0 of the block.
    pub const PSID: usize = 0xf0;
    /// Size of `query_adapter_out`.
    pub const OUT_LEN: usize = 0x110;
}

/// CREATE_MKEY (`create_mkey_in`, the `mkc` at byte 0x10) and DESTROY_MKEY.
pub mod mkey {
    use super::{fld as f, Fld};
    /// `create_mkey_in.pg_access`: bit 0x60 (1).
    pub const PG_ACCESS: Fld = f(0x60, 1);
    /// `create_mkey_in.mkey_umem_valid`: bit 0x61 (1).
    pub const UMEM_VALID: Fld = f(0x61, 1);
    /// `mkc.free`: bit 0x81 (1).
    pub const FREE: Fld = f(0x81, 1);
    /// `mkc.access_mode_4_2`: bit 0x83 (3).
    pub const ACCESS_MODE_4_2: Fld = f(0x83, 3);
    /// `mkc.umr_en`: bit 0x90 (1).
    pub const UMR_EN: Fld = f(0x90, 1);
    /// `mkc.lw`: bit 0x94 (1).
    pub const LW: Fld = f(0x94, 1);
    /// `mkc.lr`: bit 0x95 (1).
    pub const LR: Fld = f(0x95, 1);
    /// `mkc.access_mode_1_0`: bit 0x96 (2); 0 = PA.
    pub const ACCESS_MODE_1_0: Fld = f(0x96, 2);
    /// `mkc.qpn`: bit 0xa0 (24).
    pub const QPN: Fld = f(0xa0, 0x18);
    /// `mkc.mkey_7_0`: bit 0xb8 (8): the key's variant byte, chosen by the driver.
    pub const MKEY_7_0: Fld = f(0xb8, 8);
    /// `mkc.length64`: bit 0xe0 (1).
    pub const LENGTH64: Fld = f(0xe0, 1);
    /// `mkc.pd`: bit 0xe8 (24).
    pub const PD: Fld = f(0xe8, 0x18);
    /// `create_mkey_out.mkey_index` / `destroy_mkey_in.mkey_index`: bit 0x48 (24).
    pub const INDEX: Fld = f(0x48, 0x18);
}

/// ALLOC_Q_COUNTER / QUERY_Q_COUNTER / DEALLOC_Q_COUNTER.
pub mod qcnt {
    use super::{fld as f, Fld};
    /// `alloc_q_counter_out.counter_set_id` / `dealloc_q_counter_in.counter_set_id`: bit
    /// 0x58 (8).
    pub const SET_ID: Fld = f(0x58, 8);
    /// `query_q_counter_in.other_vport`: bit 0x40.
    pub const OTHER_VPORT: Fld = f(0x40, 1);
    /// `query_q_counter_in.clear`: bit 0xc0.
    pub const CLEAR: Fld = f(0xc0, 1);
    /// `query_q_counter_in.aggregate`: bit 0xc1.
    pub const AGGREGATE: Fld = f(0xc1, 1);
    /// `query_q_counter_in.counter_set_id`: bit 0xf8 (8).
    pub const QUERY_SET_ID: Fld = f(0xf8, 8);
    /// `query_q_counter_out.out_of_buffer`: bit 0x180 (32).
    pub const OUT_OF_BUFFER: Fld = f(0x180, 0x20);
    /// Size of `query_q_counter_out`.
    pub const OUT_LEN: usize = 0x100;
}

/// `per_protocol_networking_offload_caps` fields, bit offsets inside the capability.
pub mod eth_cap {
    use super::{fld as f, Fld};
    /// `csum_cap`: bit 0x0.
    pub const CSUM_CAP: Fld = f(0x0, 1);
    /// `vlan_cap`: bit 0x1.
    pub const VLAN_CAP: Fld = f(0x1, 1);
    /// `max_lso_cap`: bit 0xb (5).
    pub const MAX_LSO_CAP: Fld = f(0xb, 5);
    /// `multi_pkt_send_wqe`: bit 0x10 (2).
    pub const MULTI_PKT_SEND_WQE: Fld = f(0x10, 2);
    /// `wqe_inline_mode`: bit 0x12 (2): 0 L2, 1 vport context, 2 not required.
    pub const WQE_INLINE_MODE: Fld = f(0x12, 2);
    /// `rss_ind_tbl_cap`: bit 0x14 (4).
    pub const RSS_IND_TBL_CAP: Fld = f(0x14, 4);
    /// `enhanced_multi_pkt_send_wqe`: bit 0x1a (1).
    pub const ENHANCED_MULTI_PKT_SEND_WQE: Fld = f(0x1a, 1);
    /// `wqe_vlan_insert`: bit 0x7 (1): the eth segment's `insert.type` VLAN is executed
    /// (mlx5e inlines the tagged L2 header itself without it).
    pub const WQE_VLAN_INSERT: Fld = f(0x7, 1);
    /// `self_lb_en_modifiable`: bit 0x8 (1).
    pub const SELF_LB_EN_MODIFIABLE: Fld = f(0x8, 1);
    /// `swp`: bit 0x20 (1).
    pub const SWP: Fld = f(0x20, 1);
}

/// `create_eq_in` (eqc at byte 0x10).
pub mod eq {
    use super::{fld as f, Fld};
    /// `eq_context_entry.status`: bit 0x80 (4).
    pub const STATUS: Fld = f(0x80, 4);
    /// `eq_context_entry.oi`: bit 0x8e (1).
    pub const OI: Fld = f(0x8e, 1);
    /// `eq_context_entry.st`: bit 0x94 (4).
    pub const ST: Fld = f(0x94, 4);
    /// `eq_context_entry.page_offset`: bit 0xd4 (6).
    pub const PAGE_OFFSET: Fld = f(0xd4, 6);
    /// `eq_context_entry.log_eq_size`: bit 0xe3 (5).
    pub const LOG_EQ_SIZE: Fld = f(0xe3, 5);
    /// `eq_context_entry.uar_page`: bit 0xe8 (24).
    pub const UAR_PAGE: Fld = f(0xe8, 0x18);
    /// `eq_context_entry.intr`: bit 0x134 (12).
    pub const INTR: Fld = f(0x134, 0xc);
    /// `eq_context_entry.log_page_size`: bit 0x143 (5).
    pub const LOG_PAGE_SIZE: Fld = f(0x143, 5);
    /// `event_bitmask[0]` (BE64): byte 0x58 (bit 0x2c0); `event_bitmask` is 4 × 64 bits.
    pub const EVENT_BITMASK: usize = 0x58;
    /// `pas[]`: byte 0x110.
    pub const PAS: usize = 0x110;
}

/// `create_cq_in` (cqc at byte 0x10).
pub mod cq {
    use super::{fld as f, Fld};
    /// `cq_context.status`: bit 0x80 (4).
    pub const STATUS: Fld = f(0x80, 4);
    /// `cq_context.cqe_sz`: bit 0x88 (3); 0 = 64 bytes.
    pub const CQE_SZ: Fld = f(0x88, 3);
    /// `cq_context.cq_period_mode`: bit 0x8f (2); 0 = timer restarts on an event, 1 = on a
    /// CQE.
    pub const CQ_PERIOD_MODE: Fld = f(0x8f, 2);
    /// `cq_context.cqe_comp_en`: bit 0x91 (1).
    pub const CQE_COMP_EN: Fld = f(0x91, 1);
    /// `cq_context.mini_cqe_res_format`: bit 0x92 (2).
    pub const MINI_CQE_RES_FORMAT: Fld = f(0x92, 2);
    /// `cq_context.cqe_compression_layout`: bit 0x9e (2); 0 = basic.
    pub const CQE_COMPRESSION_LAYOUT: Fld = f(0x9e, 2);
    /// `cq_context.page_offset`: bit 0xd4 (6).
    pub const PAGE_OFFSET: Fld = f(0xd4, 6);
    /// `cq_context.log_cq_size`: bit 0xe3 (5).
    pub const LOG_CQ_SIZE: Fld = f(0xe3, 5);
    /// `cq_context.uar_page`: bit 0xe8 (24).
    pub const UAR_PAGE: Fld = f(0xe8, 0x18);
    /// `cq_context.cq_period`: bit 0x104 (12), microseconds.
    pub const CQ_PERIOD: Fld = f(0x104, 0xc);
    /// `cq_context.cq_max_count`: bit 0x110 (16).
    pub const CQ_MAX_COUNT: Fld = f(0x110, 0x10);
    /// `modify_cq_in.cqn`: bit 0x48 (24).
    pub const MODIFY_CQN: Fld = f(0x48, 0x18);
    /// `modify_cq_in.modify_field_select`: bit 0x60 (32).
    pub const MODIFY_FIELD_SELECT: Fld = f(0x60, 0x20);
    /// `modify_field_select` bit: `cq_period` (MLX5_CQ_MODIFY_PERIOD).
    pub const MODIFY_PERIOD: u32 = 1 << 0;
    /// `modify_field_select` bit: `cq_max_count` (MLX5_CQ_MODIFY_COUNT).
    pub const MODIFY_COUNT: u32 = 1 << 1;
    /// `modify_field_select` bit: `cq_period_mode` (MLX5_CQ_MODIFY_PERIOD_MODE).
    pub const MODIFY_PERIOD_MODE: u32 = 1 << 4;
    /// `cq_context.c_eqn_or_apu_element`: bit 0x120 (32).
    pub const C_EQN: Fld = f(0x120, 0x20);
    /// `cq_context.log_page_size`: bit 0x143 (5).
    pub const LOG_PAGE_SIZE: Fld = f(0x143, 5);
    /// `cq_context.dbr_addr` (BE64): byte 0x48 (bit 0x240).
    pub const DBR_ADDR: usize = 0x48;
    /// `pas[]`: byte 0x110.
    pub const PAS: usize = 0x110;
}

/// `sqc`/`rqc` and their `wq`, as placed in `create_sq_in`/`create_rq_in`/`modify_*_in`/
/// `query_*_out` (the context at byte 0x20 in all of them).
pub mod wq {
    use super::{fld as f, Fld};
    /// `modify_sq_in.sq_state` / `modify_rq_in.rq_state`: bit 0x40 (4): the current state.
    pub const MODIFY_CUR_STATE: Fld = f(0x40, 4);
    /// `modify_sq_in.sqn` / `modify_rq_in.rqn`: bit 0x48 (24).
    pub const MODIFY_QN: Fld = f(0x48, 0x18);
    /// `ctx.flush_in_error_en` of sqc: bit 0x103 (1).
    pub const SQ_FLUSH_IN_ERROR_EN: Fld = f(0x103, 1);
    /// `ctx.allow_multi_pkt_send_wqe` of sqc: bit 0x104 (1).
    pub const SQ_ALLOW_MULTI_PKT: Fld = f(0x104, 1);
    /// `ctx.min_wqe_inline_mode` of sqc: bit 0x105 (3).
    pub const SQ_MIN_WQE_INLINE_MODE: Fld = f(0x105, 3);
    /// `ctx.state` (sqc and rqc): bit 0x108 (4).
    pub const STATE: Fld = f(0x108, 4);
    /// `ctx.cqn` (sqc and rqc): bit 0x148 (24).
    pub const CQN: Fld = f(0x148, 0x18);
    /// `ctx.tis_lst_sz` of sqc: bit 0x200 (16).
    pub const SQ_TIS_LST_SZ: Fld = f(0x200, 0x10);
    /// `ctx.tis_num_0` of sqc: bit 0x268 (24).
    pub const SQ_TIS_NUM_0: Fld = f(0x268, 0x18);
    /// `ctx.mem_rq_type` of rqc: bit 0x104 (4); 0 = inline.
    pub const RQ_MEM_RQ_TYPE: Fld = f(0x104, 4);
    /// `ctx.vsd` of rqc (VLAN stripping disabled): bit 0x103 (1).
    pub const RQ_VSD: Fld = f(0x103, 1);
    /// `modify_rq_in.modify_bitmask` (byte 0x10, 64 bits, big-endian).
    pub const MODIFY_BITMASK: usize = 0x10;
    /// `MLX5_MODIFY_RQ_IN_MODIFY_BITMASK_VSD`: MODIFY_RQ changes `ctx.vsd`.
    pub const MODIFY_RQ_BITMASK_VSD: u64 = 1 << 1;
    /// `ctx.counter_set_id` of rqc: bit 0x160 (8).
    pub const RQ_COUNTER_SET_ID: Fld = f(0x160, 8);
    /// `ctx.flush_in_error_en` of rqc: bit 0x10d (1).
    pub const RQ_FLUSH_IN_ERROR_EN: Fld = f(0x10d, 1);
    /// `ctx.wq.wq_type`: bit 0x280 (4); 1 = cyclic.
    pub const WQ_TYPE: Fld = f(0x280, 4);
    /// `ctx.wq.page_offset`: bit 0x2ab (5).
    pub const PAGE_OFFSET: Fld = f(0x2ab, 5);
    /// `ctx.wq.pd`: bit 0x2c8 (24).
    pub const PD: Fld = f(0x2c8, 0x18);
    /// `ctx.wq.uar_page`: bit 0x2e8 (24).
    pub const UAR_PAGE: Fld = f(0x2e8, 0x18);
    /// `ctx.wq.dbr_addr` (BE64): byte 0x60 (bit 0x300).
    pub const DBR_ADDR: usize = 0x60;
    /// `ctx.wq.hw_counter`: bit 0x340 (32).
    pub const HW_COUNTER: Fld = f(0x340, 0x20);
    /// `ctx.wq.sw_counter`: bit 0x360 (32).
    pub const SW_COUNTER: Fld = f(0x360, 0x20);
    /// `ctx.wq.log_wq_stride`: bit 0x38c (4).
    pub const LOG_WQ_STRIDE: Fld = f(0x38c, 4);
    /// `ctx.wq.log_wq_pg_sz`: bit 0x393 (5).
    pub const LOG_WQ_PG_SZ: Fld = f(0x393, 5);
    /// `ctx.wq.log_wq_sz`: bit 0x39b (5).
    pub const LOG_WQ_SZ: Fld = f(0x39b, 5);
    /// `ctx.wq.pas[]`: byte 0x110.
    pub const PAS: usize = 0x110;
    /// `MLX5_SQC_STATE_RST` / `MLX5_RQC_STATE_RST`.
    pub const STATE_RST: u32 = 0;
    /// `*_STATE_RDY`.
    pub const STATE_RDY: u32 = 1;
    /// `*_STATE_ERR`.
    pub const STATE_ERR: u32 = 3;
}

/// `create_tis_in` (tisc at byte 0x20).
pub mod tis {
    use super::{fld as f, Fld};
    /// `ctx.prio`: bit 0x10c (4).
    pub const PRIO: Fld = f(0x10c, 4);
    /// `ctx.transport_domain`: bit 0x228 (24).
    pub const TRANSPORT_DOMAIN: Fld = f(0x228, 0x18);
}

/// `create_rqt_in` / `modify_rqt_in` (rqtc at byte 0x20).
pub mod rqt {
    use super::{fld as f, Fld};
    /// `modify_rqt_in.bitmask.rqn_list`: bit 0xbf (1).
    pub const MODIFY_BITMASK_RQN_LIST: Fld = f(0xbf, 1);
    /// `rqt_context.list_q_type`: bit 0x1a5 (3).
    pub const LIST_Q_TYPE: Fld = f(0x1a5, 3);
    /// `rqt_context.rqt_max_size`: bit 0x1b0 (16).
    pub const RQT_MAX_SIZE: Fld = f(0x1b0, 0x10);
    /// `rqt_context.rq_vhca_id_format`: bit 0x1c0 (1).
    pub const RQ_VHCA_ID_FORMAT: Fld = f(0x1c0, 1);
    /// `rqt_context.rqt_actual_size`: bit 0x1d0 (16).
    pub const RQT_ACTUAL_SIZE: Fld = f(0x1d0, 0x10);
    /// `rqt_context.rq_num[]`: byte 0x110, 4 bytes each, rq_num in bits 23..0.
    pub const RQ_NUM: usize = 0x110;
}

/// `create_tir_in` (tirc at byte 0x20).
pub mod tir {
    use super::{fld as f, Fld};
    /// `ctx.disp_type`: bit 0x120 (4); 0 direct, 1 indirect.
    pub const DISP_TYPE: Fld = f(0x120, 4);
    /// `ctx.inline_rqn`: bit 0x1e8 (24).
    pub const INLINE_RQN: Fld = f(0x1e8, 0x18);
    /// `ctx.rx_hash_symmetric`: bit 0x200 (1).
    pub const RX_HASH_SYMMETRIC: Fld = f(0x200, 1);
    /// `ctx.indirect_table`: bit 0x208 (24).
    pub const INDIRECT_TABLE: Fld = f(0x208, 0x18);
    /// `ctx.rx_hash_fn`: bit 0x220 (4); 2 = Toeplitz.
    pub const RX_HASH_FN: Fld = f(0x220, 4);
    /// `ctx.transport_domain`: bit 0x228 (24).
    pub const TRANSPORT_DOMAIN: Fld = f(0x228, 0x18);
    /// `ctx.rx_hash_toeplitz_key`: byte 0x48 (bit 0x240), 40 bytes.
    pub const TOEPLITZ_KEY: usize = 0x48;
    /// `ctx.rx_hash_field_selector_outer`: bit 0x380 (32).
    pub const FIELD_SELECTOR_OUTER: Fld = f(0x380, 0x20);
    /// `rx_hash_field_selector_outer.l3_prot_type`: bit 0x380 (1); 0 IPv4, 1 IPv6.
    pub const SEL_L3_PROT_TYPE: Fld = f(0x380, 1);
    /// `rx_hash_field_selector_outer.l4_prot_type`: bit 0x381 (1); 0 TCP, 1 UDP.
    pub const SEL_L4_PROT_TYPE: Fld = f(0x381, 1);
    /// `rx_hash_field_selector_outer.selected_fields`: bit 0x382 (30).
    pub const SEL_FIELDS: Fld = f(0x382, 30);
    /// `selected_fields` bits (`MLX5_HASH_FIELD_SEL_*`): source IP.
    pub const SEL_SRC_IP: u32 = 1 << 0;
    /// Destination IP.
    pub const SEL_DST_IP: u32 = 1 << 1;
    /// L4 source port.
    pub const SEL_L4_SPORT: u32 = 1 << 2;
    /// L4 destination port.
    pub const SEL_L4_DPORT: u32 = 1 << 3;
    /// The IPsec SPI (`MLX5_HASH_FIELD_SEL_IPSEC_SPI`: mlx5e's AH / ESP traffic types).
    pub const SEL_IPSEC_SPI: u32 = 1 << 4;
    /// `modify_tir_in.tirn`: bit 0x48 (24).
    pub const MODIFY_TIRN: Fld = f(0x48, 0x18);
    /// `modify_tir_in.bitmask` (64 bits): byte 0x10.
    pub const MODIFY_BITMASK: usize = 0x10;
    /// `modify_tir_in.bitmask.hash`: bit 0xbd (1); the bitmask's bit 2 (from the LSB of its
    /// 64 bits).
    pub const MODIFY_BITMASK_HASH: u64 = 1 << 2;
    /// `modify_tir_in.bitmask.self_lb_en`: bit 0xbb; the bitmask's bit 4.
    pub const MODIFY_BITMASK_SELF_LB: u64 = 1 << 4;
}

/// Flow steering: `create_flow_table_in`, `destroy_flow_table_in`,
/// `create_flow_group_in`, `destroy_flow_group_in`, `set_fte_in`, `delete_fte_in`,
/// `set_flow_table_root_in` (the fields they share sit at the same bits).
pub mod fs {
    use super::{fld as f, Fld};
    /// `*_in.other_vport`: bit 0x40 (1).
    pub const OTHER_VPORT: Fld = f(0x40, 1);
    /// `*_in.table_type`: bit 0x80 (8); 0 = NIC RX.
    pub const TABLE_TYPE: Fld = f(0x80, 8);
    /// `*_in.table_id` (not create_flow_table_in's): bit 0xa8 (24).
    pub const TABLE_ID: Fld = f(0xa8, 0x18);
    /// `MLX5_FLOW_TABLE_TYPE_NIC_RX`.
    pub const TABLE_TYPE_NIC_RX: u32 = 0;
    /// `create_flow_table_in.flow_table_context` (40 bytes): byte 0x18.
    pub const FT_CTX: usize = 0x18;
    /// `flow_table_context.reformat_en..termination_table`: bits 0xc0..0xc4 (4).
    pub const FT_FLAGS: Fld = f(0xc0, 4);
    /// `flow_table_context.level`: bit 0xc8 (8).
    pub const FT_LEVEL: Fld = f(0xc8, 8);
    /// `flow_table_context.log_size`: bit 0xd8 (8).
    pub const FT_LOG_SIZE: Fld = f(0xd8, 8);
    /// `flow_table_context.table_miss_id`: bit 0xe8 (24).
    pub const FT_MISS_ID: Fld = f(0xe8, 0x18);
    /// `create_flow_group_in.group_type`: bit 0x8c (4).
    pub const FG_GROUP_TYPE: Fld = f(0x8c, 4);
    /// `create_flow_group_in.start_flow_index`: bit 0xe0 (32).
    pub const FG_START: Fld = f(0xe0, 0x20);
    /// `create_flow_group_in.end_flow_index`: bit 0x120 (32).
    pub const FG_END: Fld = f(0x120, 0x20);
    /// `create_flow_group_in.match_definer_id`: bit 0x150 (16).
    pub const FG_DEFINER: Fld = f(0x150, 0x10);
    /// `create_flow_group_in.match_criteria_enable`: bit 0x1f8 (8); bit 0 = outer headers.
    pub const FG_CRITERIA_ENABLE: Fld = f(0x1f8, 8);
    /// `create_flow_group_in.match_criteria` (`fte_match_param`, 0x200 bytes): byte 0x40.
    pub const FG_CRITERIA: usize = 0x40;
    /// `create_flow_group_out.group_id` / `destroy_flow_group_in.group_id`: bit 0x48 of the
    /// output (24), bit 0xc0 of the input (32).
    pub const FG_ID_IN: Fld = f(0xc0, 0x20);
    /// Length of an `fte_match_param`.
    pub const MATCH_PARAM_LEN: usize = 0x200;
    /// `fte_match_set_lyr_2_4.ethertype`: byte 6 of the match parameter (16 bits).
    pub const MATCH_ETHERTYPE: usize = 6;
    /// `fte_match_set_lyr_2_4.ip_protocol`: byte 0x10 of the match parameter (8 bits).
    pub const MATCH_IP_PROTOCOL: usize = 0x10;
    /// `fte_match_set_lyr_2_4.tcp_sport`: byte 0x14 (16 bits); `tcp_dport` follows.
    pub const MATCH_TCP_SPORT: usize = 0x14;
    /// `fte_match_set_lyr_2_4.tcp_dport`: byte 0x16 (16 bits).
    pub const MATCH_TCP_DPORT: usize = 0x16;
    /// `fte_match_set_lyr_2_4.udp_sport`: byte 0x1c (16 bits).
    pub const MATCH_UDP_SPORT: usize = 0x1c;
    /// `fte_match_set_lyr_2_4.udp_dport`: byte 0x1e (16 bits).
    pub const MATCH_UDP_DPORT: usize = 0x1e;
    /// `fte_match_set_lyr_2_4.src_ipv4_src_ipv6`: bytes 0x20..0x30 (IPv4 in the last 4).
    pub const MATCH_SRC_IP: usize = 0x20;
    /// `fte_match_set_lyr_2_4.dst_ipv4_dst_ipv6`: bytes 0x30..0x40.
    pub const MATCH_DST_IP: usize = 0x30;
    /// `flow_table_context.table_miss_action`: bit 0xc4 (4); 1 = forward to
    /// `table_miss_id` (`MLX5_FLOW_TABLE_MISS_ACTION_FWD`).
    pub const FT_MISS_ACTION: Fld = f(0xc4, 4);
    /// `MLX5_FLOW_TABLE_MISS_ACTION_FWD`.
    pub const MISS_ACTION_FWD: u32 = 1;
    /// `set_fte_in.modify_enable_mask`: bit 0xd8 (8).
    pub const FTE_MODIFY_MASK: Fld = f(0xd8, 8);
    /// `set_fte_in.flow_index` / `delete_fte_in.flow_index`: bit 0x100 (32).
    pub const FTE_INDEX: Fld = f(0x100, 0x20);
    /// `set_fte_in.flow_context.group_id`: bit 0x220 (32).
    pub const FTE_GROUP: Fld = f(0x220, 0x20);
    /// `flow_context.flow_tag`: bit 0x248 (24).
    pub const FTE_FLOW_TAG: Fld = f(0x248, 0x18);
    /// `flow_context.action`: bit 0x270 (16); `MLX5_FLOW_CONTEXT_ACTION_FWD_DEST` = 4.
    pub const FTE_ACTION: Fld = f(0x270, 0x10);
    /// `MLX5_FLOW_CONTEXT_ACTION_FWD_DEST`.
    pub const ACTION_FWD_DEST: u32 = 4;
    /// `flow_context.extended_destination..encrypt_decrypt_type`: bits 0x280..0x288 (8).
    pub const FTE_DEST_FLAGS: Fld = f(0x280, 8);
    /// `flow_context.destination_list_size`: bit 0x288 (24).
    pub const FTE_DEST_LIST_SIZE: Fld = f(0x288, 0x18);
    /// `flow_context.flow_counter_list_size`: bit 0x2a8 (24).
    pub const FTE_COUNTER_LIST_SIZE: Fld = f(0x2a8, 0x18);
    /// `flow_context.packet_reformat_id`: bit 0x2c0 (32).
    pub const FTE_REFORMAT_ID: Fld = f(0x2c0, 0x20);
    /// `flow_context.modify_header_id`: bit 0x2e0 (32).
    pub const FTE_MODIFY_HEADER_ID: Fld = f(0x2e0, 0x20);
    /// `flow_context.match_value`: byte 0x80.
    pub const FTE_MATCH: usize = 0x80;
    /// `flow_context.destination[0]` (`dest_format_struct`, 8 bytes each): byte 0x340.
    pub const FTE_DEST: usize = 0x340;
    /// `dest_format_struct.destination_type` (8), relative to the entry.
    pub const DEST_TYPE: Fld = f(0, 8);
    /// `dest_format_struct.destination_id` (24).
    pub const DEST_ID: Fld = f(8, 0x18);
    /// `MLX5_IFC_FLOW_DESTINATION_TYPE_TIR`.
    pub const DEST_TYPE_TIR: u32 = 2;
    /// `MLX5_IFC_FLOW_DESTINATION_TYPE_FLOW_TABLE`.
    pub const DEST_TYPE_FLOW_TABLE: u32 = 1;
    /// `MLX5_FLOW_CONTEXT_ACTION_DROP`.
    pub const ACTION_DROP: u32 = 2;
    /// `modify_flow_table_in.modify_field_select`: bit 0x70 (16); bit 0 = the miss table.
    pub const FT_MODIFY_SELECT: Fld = f(0x70, 0x10);
    /// `set_flow_table_root_in.underlay_qpn`: bit 0xc8 (24).
    pub const ROOT_UNDERLAY_QPN: Fld = f(0xc8, 0x18);
}

/// `query_nic_vport_context_*` / `modify_nic_vport_context_in`.
pub mod vport {
    use super::{fld as f, Fld};
    /// `*_in.other_vport`: bit 0x40 (1).
    pub const OTHER_VPORT: Fld = f(0x40, 1);
    /// `*_in.vport_number`: bit 0x50 (16).
    pub const VPORT_NUMBER: Fld = f(0x50, 0x10);
    /// `modify_nic_vport_context_in.field_select.mtu`: bit 0x79.
    pub const FS_MTU: Fld = f(0x79, 1);
    /// `modify_nic_vport_context_in.field_select.permanent_address`: bit 0x7c.
    pub const FS_PERMANENT_ADDRESS: Fld = f(0x7c, 1);
    /// `modify_nic_vport_context_in.field_select.promisc`: bit 0x7b.
    pub const FS_PROMISC: Fld = f(0x7b, 1);
    /// `modify_nic_vport_context_in.field_select.addresses_list`: bit 0x7d.
    pub const FS_ADDRESSES_LIST: Fld = f(0x7d, 1);
    /// `nic_vport_context.promisc_uc`: bit 0x780 inside the context.
    pub const PROMISC_UC: Fld = f(0x780, 1);
    /// `nic_vport_context.promisc_mc`: bit 0x781.
    pub const PROMISC_MC: Fld = f(0x781, 1);
    /// `nic_vport_context.promisc_all`: bit 0x782.
    pub const PROMISC_ALL: Fld = f(0x782, 1);
    /// `nic_vport_context.allowed_list_type`: bit 0x785 (3); UC 0, MC 1, VLAN 2.
    pub const ALLOWED_LIST_TYPE: Fld = f(0x785, 3);
    /// `nic_vport_context.allowed_list_size`: bit 0x794 (12).
    pub const ALLOWED_LIST_SIZE: Fld = f(0x794, 0xc);
    /// `nic_vport_context.current_uc_mac_address[]`: byte 0x100 of the context, 8 bytes
    /// each (`mac_address_layout`, the MAC in the last 6).
    pub const ADDRESSES: usize = 0x100;
    /// `MLX5_NVPRT_LIST_TYPE_UC`.
    pub const LIST_UC: u32 = 0;
    /// `MLX5_NVPRT_LIST_TYPE_MC`.
    pub const LIST_MC: u32 = 1;
    /// `MLX5_NVPRT_LIST_TYPE_VLAN`.
    pub const LIST_VLAN: u32 = 2;
    /// `modify_nic_vport_context_in.field_select` (all 32 bits): bit 0x60.
    pub const FIELD_SELECT: Fld = f(0x60, 0x20);
    /// Byte offset of `nic_vport_context` in `query_nic_vport_context_out`.
    pub const CTX_QUERY: usize = 0x10;
    /// Byte offset of `nic_vport_context` in `modify_nic_vport_context_in`.
    pub const CTX_MODIFY: usize = 0x100;
    /// `nic_vport_context.mtu`: bit 0x130 (16) inside the context.
    pub const MTU: Fld = f(0x130, 0x10);
    /// `nic_vport_context.permanent_address`: byte 0xf4 (8 bytes, MAC in the last 6).
    pub const PERMANENT_ADDRESS: usize = 0xf4;
    /// `query_vport_state_out.admin_state`: bit 0x78 (4).
    pub const STATE_ADMIN: Fld = f(0x78, 4);
    /// `query_vport_state_out.state`: bit 0x7c (4).
    pub const STATE_OPER: Fld = f(0x7c, 4);
    /// `query_vport_counter_in.other_vport`: bit 0x40.
    pub const CNT_OTHER_VPORT: Fld = f(0x40, 1);
    /// `query_vport_counter_in.clear`: bit 0xc0.
    pub const CNT_CLEAR: Fld = f(0xc0, 1);
    /// `query_vport_counter_out.received_errors.packets` (BE64): byte 0x10.
    pub const CNT_RX_ERRORS: usize = 0x10;
    /// `transmit_errors.packets`: byte 0x20.
    pub const CNT_TX_ERRORS: usize = 0x20;
    /// `received_eth_broadcast.packets`: byte 0x70 (octets at +8).
    pub const CNT_RX_BCAST: usize = 0x70;
    /// `transmitted_eth_broadcast.packets`: byte 0x80.
    pub const CNT_TX_BCAST: usize = 0x80;
    /// `received_eth_unicast.packets`: byte 0x90.
    pub const CNT_RX_UCAST: usize = 0x90;
    /// `transmitted_eth_unicast.packets`: byte 0xa0.
    pub const CNT_TX_UCAST: usize = 0xa0;
    /// `received_eth_multicast.packets`: byte 0xb0.
    pub const CNT_RX_MCAST: usize = 0xb0;
    /// `transmitted_eth_multicast.packets`: byte 0xc0.
    pub const CNT_TX_MCAST: usize = 0xc0;
    /// `local_loopback.packets`: byte 0xd0.
    pub const CNT_LOCAL_LB: usize = 0xd0;
    /// `MLX5_VPORT_ADMIN_STATE_DOWN` / vport state down.
    pub const STATE_DOWN: u32 = 0;
    /// `MLX5_VPORT_ADMIN_STATE_UP` / vport state up.
    pub const STATE_UP: u32 = 1;
}

/// `access_register_in`/`_out` and the registers the model implements.
pub mod reg {
    use super::{fld as f, Fld};
    /// `MLX5_REG_PMTU`.
    pub const PMTU: u32 = 0x5003;
    /// `pmtu_reg` size.
    pub const PMTU_LEN: usize = 0x10;
    /// `pmtu_reg.max_mtu`: bit 0x20 (16).
    pub const PMTU_MAX: Fld = f(0x20, 0x10);
    /// `pmtu_reg.admin_mtu`: bit 0x40 (16).
    pub const PMTU_ADMIN: Fld = f(0x40, 0x10);
    /// `pmtu_reg.oper_mtu`: bit 0x60 (16).
    pub const PMTU_OPER: Fld = f(0x60, 0x10);
    /// `MLX5_REG_PTYS`.
    pub const PTYS: u32 = 0x5004;
    /// `ptys_reg` size.
    pub const PTYS_LEN: usize = 0x40;
    /// `ptys_reg.proto_mask`: bit 0x1d (3); 4 = Ethernet (`MLX5_PTYS_EN`).
    pub const PTYS_PROTO_MASK: Fld = f(0x1d, 3);
    /// `ptys_reg.eth_proto_capability`: bit 0x60 (32).
    pub const PTYS_ETH_CAP: Fld = f(0x60, 0x20);
    /// `ptys_reg.eth_proto_admin`: bit 0xc0 (32).
    pub const PTYS_ETH_ADMIN: Fld = f(0xc0, 0x20);
    /// `ptys_reg.eth_proto_oper`: bit 0x120 (32).
    pub const PTYS_ETH_OPER: Fld = f(0x120, 0x20);
    /// `ptys_reg.connector_type`: bit 0x17c (4).
    pub const PTYS_CONNECTOR: Fld = f(0x17c, 4);
    /// The legacy Ethernet link mode the model's port runs: `MLX5E_100GBASE_CR4` (bit 20).
    pub const PTYS_100GBASE_CR4: u32 = 1 << 20;
    /// `access_register_in.register_id`: bit 0x50 (16).
    pub const REGISTER_ID: Fld = f(0x50, 0x10);
    /// `access_register_in.argument`: bit 0x60 (32).
    pub const ARGUMENT: Fld = f(0x60, 0x20);
    /// `register_data` of both: byte 0x10.
    pub const DATA: usize = 0x10;
    /// `op_mod` of a write (`!write` in port.c).
    pub const OP_WRITE: u32 = 0;
    /// `op_mod` of a read.
    pub const OP_READ: u32 = 1;
    /// `MLX5_REG_PAOS`.
    pub const PAOS: u32 = 0x5006;
    /// `MLX5_REG_PFCC`.
    pub const PFCC: u32 = 0x5007;
    /// PPLR (port physical loopback register).
    pub const PPLR: u32 = 0x5018;
    /// `paos_reg` size in bytes.
    pub const PAOS_LEN: usize = 0x10;
    /// `pfcc_reg` size in bytes.
    pub const PFCC_LEN: usize = 0x20;
    /// `pplr_reg` size in bytes.
    pub const PPLR_LEN: usize = 0x8;
    /// `paos_reg.local_port`: bit 0x8 (8), inside the register.
    pub const LOCAL_PORT: Fld = f(0x8, 8);
    /// `paos_reg.admin_status`: bit 0x14 (4).
    pub const PAOS_ADMIN_STATUS: Fld = f(0x14, 4);
    /// `paos_reg.oper_status`: bit 0x1c (4).
    pub const PAOS_OPER_STATUS: Fld = f(0x1c, 4);
    /// `paos_reg.ase`: bit 0x20 (1).
    pub const PAOS_ASE: Fld = f(0x20, 1);
    /// `MLX5_PORT_UP`.
    pub const PORT_UP: u32 = 1;
    /// `MLX5_PORT_DOWN`.
    pub const PORT_DOWN: u32 = 2;
    /// `pplr_reg.lb_cap`: bit 0x28 (8).
    pub const PPLR_LB_CAP: Fld = f(0x28, 8);
    /// `pplr_reg.lb_en`: bit 0x38 (8).
    pub const PPLR_LB_EN: Fld = f(0x38, 8);
    /// The model's internal loopback in `lb_cap`: "phy local loopback" (bit 1).
    pub const PPLR_LB_LOCAL: u32 = 0x2;
    /// The `lb_en` bits that turn it on: phy remote (1), phy local (2), external local (4).
    pub const PPLR_LB_ANY: u32 = 0x7;
    /// `pfcc_reg.pptx`: bit 0x40 (1).
    pub const PFCC_PPTX: Fld = f(0x40, 1);
    /// `pfcc_reg.pprx`: bit 0x60 (1).
    pub const PFCC_PPRX: Fld = f(0x60, 1);
    /// `MLX5_REG_PPCNT` (port counters).
    pub const PPCNT: u32 = 0x5008;
    /// `ppcnt_reg` size in bytes (0x800 bits: an 8-byte header and `counter_set`).
    pub const PPCNT_LEN: usize = 0x100;
    /// `ppcnt_reg.grp`: bit 0x1a (6).
    pub const PPCNT_GRP: Fld = f(0x1a, 6);
    /// `ppcnt_reg.clr`: bit 0x20 (1).
    pub const PPCNT_CLR: Fld = f(0x20, 1);
    /// `grp` of the IEEE 802.3 counters (`MLX5_IEEE_802_3_COUNTERS_GROUP`).
    pub const PPCNT_IEEE_802_3: u32 = 0;
    /// `MLX5_RFC_2863_COUNTERS_GROUP` (interfaces MIB).
    pub const PPCNT_RFC_2863: u32 = 0x1;
    /// `MLX5_RFC_2819_COUNTERS_GROUP` (RMON).
    pub const PPCNT_RFC_2819: u32 = 0x2;
    /// `MLX5_PER_PRIORITY_COUNTERS_GROUP`.
    pub const PPCNT_PER_PRIO: u32 = 0x10;
    /// `MLX5_PHYSICAL_LAYER_COUNTERS_GROUP`.
    pub const PPCNT_PHYS: u32 = 0x12;
    /// `ppcnt_reg.prio_tc`: bit 0x3b (5).
    pub const PPCNT_PRIO_TC: Fld = f(0x3b, 5);
    /// Byte offset of `ppcnt_reg.counter_set`; counter i of a group (a 64-bit
    /// `_high`/`_low` pair, big-endian) is at `PPCNT_SET + 8 * i`.
    pub const PPCNT_SET: usize = 8;
}

/// `struct mlx5_eqe` (device.h), byte offsets.
pub mod eqe {
    /// `type`.
    pub const TYPE: usize = 1;
    /// `sub_type`.
    pub const SUB_TYPE: usize = 3;
    /// `data` (union ev_data).
    pub const DATA: usize = 0x20;
    /// `data.comp.cqn` (BE32, 24 bits).
    pub const COMP_CQN: usize = 0x38;
    /// `data.port.port` (port number in bits 7..4, as mlx5_ib reads it).
    pub const PORT: usize = 0x28;
    /// `owner`.
    pub const OWNER: usize = 0x3f;
    /// EQE size.
    pub const SIZE: usize = 64;
    /// `MLX5_EVENT_TYPE_COMP`.
    pub const TYPE_COMP: u8 = 0x00;
    /// `MLX5_EVENT_TYPE_PORT_CHANGE`.
    pub const TYPE_PORT_CHANGE: u8 = 0x09;
    /// `MLX5_EVENT_TYPE_CMD`: command completions (`data.cmd.vector`, the entries' bits).
    pub const TYPE_CMD: u8 = 0x0a;
    /// `MLX5_EVENT_TYPE_PAGE_REQUEST`: the firmware asks for (or returns) pages.
    pub const TYPE_PAGE_REQUEST: u8 = 0x0b;
    /// `data.cmd.vector` (BE32).
    pub const CMD_VECTOR: usize = 0x20;
    /// `MLX5_PORT_CHANGE_SUBTYPE_DOWN`.
    pub const SUBTYPE_DOWN: u8 = 1;
    /// `MLX5_PORT_CHANGE_SUBTYPE_ACTIVE`.
    pub const SUBTYPE_ACTIVE: u8 = 4;
}
