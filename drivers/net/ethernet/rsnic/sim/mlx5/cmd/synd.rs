// SPDX-License-Identifier: GPL-2.0

//! The syndromes of failed commands: one per check, so a failure names the check. The
//! command statuses they go with (BAD_OP, BAD_PARAM, BAD_RESOURCE, ...) are the PRM's
//! ("Command Interface", return status; `MLX5_CMD_STAT_*` in upstream cmd.c); the syndrome
//! values are the model's own, as firmware's are its own (mlx5_core only prints them).

/// Unknown opcode (BAD_OP).
pub const UNKNOWN_OPCODE: u32 = 0x01;
/// op_mod not allowed for this opcode (BAD_OP).
pub const BAD_OP_MOD: u32 = 0x02;
/// Command not allowed in the HCA's state (BAD_SYS_STATE).
pub const WRONG_HCA_STATE: u32 = 0x03;
/// inlen below the command's input size (BAD_INPUT_LEN).
pub const INPUT_TOO_SHORT: u32 = 0x04;
/// outlen below the command's output size (BAD_OUTPUT_LEN).
pub const OUTPUT_TOO_SHORT: u32 = 0x05;
/// Failed on request of the device host ([`crate::sim::mlx5::Device::fail_command`];
/// INT_ERR).
pub const INJECTED: u32 = 0x06;
/// ENABLE/DISABLE_HCA: function_id or embedded_cpu_function not 0 (BAD_PARAM).
pub const FUNCTION_ID: u32 = 0x10;
/// SET_ISSI: an ISSI other than 0 or 1 (BAD_PARAM).
pub const ISSI: u32 = 0x11;
/// QUERY_HCA_CAP: a capability type other than general (0) or Ethernet (1) (BAD_PARAM).
pub const CAP_TYPE: u32 = 0x12;
/// other_function / other_vport set (BAD_PARAM).
pub const OTHER_FUNCTION: u32 = 0x13;
/// TEARDOWN_HCA: profile not graceful (BAD_PARAM).
pub const TEARDOWN_PROFILE: u32 = 0x14;
/// ALLOC_UAR/PD/TRANSPORT_DOMAIN: table full (NO_RESOURCES).
pub const NO_ALLOC: u32 = 0x20;
/// A UAR index this function did not allocate (BAD_RESOURCE).
pub const BAD_UAR: u32 = 0x21;
/// A PD this function did not allocate (BAD_RESOURCE).
pub const BAD_PD: u32 = 0x22;
/// A transport domain this function did not allocate (BAD_RESOURCE).
pub const BAD_TD: u32 = 0x23;
/// DEALLOC of a UAR, PD or transport domain an object still uses (RESOURCE_BUSY).
pub const ALLOC_IN_USE: u32 = 0x24;
/// EQ: log_eq_size 0 or above log_max_eq_sz (BAD_PARAM).
pub const EQ_SIZE: u32 = 0x30;
/// EQ: intr beyond the function's vectors (BAD_PARAM).
pub const EQ_INTR: u32 = 0x31;
/// A page_offset other than 0 (BAD_PARAM).
pub const PAGE_OFFSET: u32 = 0x32;
/// pas\[0\] not aligned to the page size (BAD_PARAM).
pub const PAS_ALIGN: u32 = 0x33;
/// Not produced any more: a list of pages that are not contiguous is a page list
/// ([`super::super::pas`]).
pub const PAS_NOT_CONTIGUOUS: u32 = 0x34;
/// inlen too short for the PAS list the queue size needs (BAD_INPUT_LEN).
pub const PAS_TOO_SHORT: u32 = 0x35;
/// log_page_size above 16 (BAD_PARAM).
pub const LOG_PAGE_SIZE: u32 = 0x36;
/// No free EQ (NO_RESOURCES).
pub const NO_EQ: u32 = 0x37;
/// An EQ number of no EQ of this function (BAD_RESOURCE).
pub const BAD_EQ: u32 = 0x38;
/// DESTROY_EQ of an EQ a CQ names (RESOURCE_BUSY).
pub const EQ_IN_USE: u32 = 0x39;
/// CQ: cqe_sz not 64 bytes (BAD_PARAM).
pub const CQE_SIZE: u32 = 0x40;
/// CQ: log_cq_size above log_max_cq_sz (BAD_PARAM).
pub const CQ_SIZE: u32 = 0x41;
/// CQ: cqe_comp_en without the capability, a layout other than basic, or a mini CQE
/// format other than CSUM (1) / CSUM_STRIDX (3) (BAD_PARAM).
pub const CQE_COMPRESSION: u32 = 0x42;
/// A doorbell record not 8-byte aligned (BAD_PARAM).
pub const DBR_ALIGN: u32 = 0x43;
/// No free CQ (NO_RESOURCES).
pub const NO_CQ: u32 = 0x44;
/// A CQ number of no CQ of this function (BAD_RESOURCE).
pub const BAD_CQ: u32 = 0x45;
/// DESTROY_CQ of a CQ an SQ or RQ uses (RESOURCE_BUSY).
pub const CQ_IN_USE: u32 = 0x46;
/// CQ: cq_period_mode other than 0 (restart on event) or 1 (restart on CQE)
/// (BAD_PARAM).
pub const CQ_PERIOD_MODE: u32 = 0x47;
/// MODIFY_CQ: modify_field_select bits other than PERIOD, COUNT and PERIOD_MODE, or none
/// (BAD_PARAM).
pub const CQ_MODIFY_FIELDS: u32 = 0x48;
/// A TIS number of no TIS of this function (BAD_RESOURCE).
pub const BAD_TIS: u32 = 0x50;
/// No free TIS (NO_RESOURCES).
pub const NO_TIS: u32 = 0x51;
/// DESTROY_TIS of a TIS an SQ names (RESOURCE_BUSY).
pub const TIS_IN_USE: u32 = 0x52;
/// CREATE_SQ/RQ: state not RST (BAD_PARAM).
pub const CREATE_STATE: u32 = 0x60;
/// wq_type not cyclic (BAD_PARAM).
pub const WQ_TYPE: u32 = 0x61;
/// log_wq_stride not 6 (SQ) or outside 4..=8 (RQ) (BAD_PARAM).
pub const WQ_STRIDE: u32 = 0x62;
/// log_wq_sz above log_max_wq_sz (BAD_PARAM).
pub const WQ_SIZE: u32 = 0x63;
/// min_wqe_inline_mode below what the device requires (BAD_PARAM).
pub const MIN_INLINE: u32 = 0x64;
/// allow_multi_pkt_send_wqe without enhanced MPWQE support (BAD_PARAM).
pub const MULTI_PKT: u32 = 0x65;
/// No free SQ (NO_RESOURCES).
pub const NO_SQ: u32 = 0x66;
/// An SQ number of no SQ of this function (BAD_RESOURCE).
pub const BAD_SQ: u32 = 0x67;
/// MODIFY: the current state in the input is not the queue's state (BAD_RES_STATE).
pub const CUR_STATE: u32 = 0x68;
/// MODIFY: a transition other than RST→RDY, RDY→ERR, ERR→RST (and RDY→RDY of an RQ)
/// (BAD_RES_STATE).
pub const TRANSITION: u32 = 0x69;
/// MODIFY: a modify_bitmask bit other than an RQ's VSD (BAD_PARAM).
pub const MODIFY_BITMASK: u32 = 0x6a;
/// CREATE_RQ: mem_rq_type not inline (BAD_PARAM).
pub const MEM_RQ_TYPE: u32 = 0x6b;
/// No free RQ (NO_RESOURCES).
pub const NO_RQ: u32 = 0x6c;
/// An RQ number of no RQ of this function (BAD_RESOURCE).
pub const BAD_RQ: u32 = 0x6d;
/// DESTROY_RQ of an RQ an RQT or a direct TIR names (RESOURCE_BUSY).
pub const RQ_IN_USE: u32 = 0x6e;
/// RQT: sizes 0, actual > max, or max above the capability (BAD_PARAM).
pub const RQT_SIZE: u32 = 0x70;
/// RQT: list_q_type or rq_vhca_id_format not 0 (BAD_PARAM).
pub const RQT_FORMAT: u32 = 0x71;
/// No free RQT (NO_RESOURCES).
pub const NO_RQT: u32 = 0x72;
/// An RQT number of no RQT of this function (BAD_RESOURCE).
pub const BAD_RQT: u32 = 0x73;
/// DESTROY_RQT of an RQT a TIR names (RESOURCE_BUSY).
pub const RQT_IN_USE: u32 = 0x74;
/// MODIFY_RQT with modify bitmask bits other than rqn_list (BAD_PARAM).
pub const RQT_BITMASK: u32 = 0x75;
/// TIR: disp_type other than direct (0) or indirect (1) (BAD_PARAM).
pub const TIR_DISP_TYPE: u32 = 0x80;
/// TIR: an indirect TIR whose rx_hash_fn is neither Toeplitz nor inverted XOR8
/// (BAD_PARAM).
pub const TIR_HASH: u32 = 0x81;
/// No free TIR (NO_RESOURCES).
pub const NO_TIR: u32 = 0x82;
/// A TIR number of no TIR of this function (BAD_RESOURCE).
pub const BAD_TIR: u32 = 0x83;
/// TIR: selected fields other than the source / destination IP and the L4 ports
/// (BAD_PARAM).
pub const TIR_FIELDS: u32 = 0x84;
/// MODIFY_TIR: bitmask bits other than `hash` and `self_lb_en`, or `hash` of a direct
/// TIR (BAD_PARAM).
pub const TIR_BITMASK: u32 = 0x85;
/// DESTROY_TIR of a TIR a flow table entry forwards to (RESOURCE_BUSY).
pub const TIR_IN_USE: u32 = 0x86;
/// Flow steering: a table type other than NIC RX, or other_vport (BAD_PARAM).
pub const FT_TYPE: u32 = 0xb0;
/// CREATE_FLOW_TABLE: flags, a miss action other than the default or forwarding to a
/// table of this function at a higher level, a miss table without that action,
/// log_size above 16; SET_FLOW_TABLE_ROOT: an underlay QPN (BAD_PARAM).
pub const FT_PARAM: u32 = 0xb1;
/// No free flow table, group or entry (NO_RESOURCES).
pub const NO_FS: u32 = 0xb2;
/// A table id of no flow table of this function (BAD_RESOURCE).
pub const BAD_FT: u32 = 0xb3;
/// DESTROY_FLOW_TABLE of a table with groups or one an entry forwards to
/// (RESOURCE_BUSY).
pub const FT_IN_USE: u32 = 0xb4;
/// CREATE_FLOW_GROUP: a group type or match definer, or criteria other than whole outer
/// `ethertype`, `ip_protocol`, TCP / UDP ports and IPv4 (last 32 bits) or IPv6 (128
/// bits) addresses (BAD_PARAM).
pub const FG_CRITERIA: u32 = 0xb5;
/// CREATE_FLOW_GROUP: start after end, end beyond the table, or indices of another
/// group (BAD_PARAM).
pub const FG_RANGE: u32 = 0xb6;
/// A group id of no flow group of that table (BAD_RESOURCE).
pub const BAD_FG: u32 = 0xb7;
/// DESTROY_FLOW_GROUP of a group with entries (RESOURCE_BUSY).
pub const FG_IN_USE: u32 = 0xb8;
/// SET_FLOW_TABLE_ENTRY: anything but forwarding to one TIR (another action, a flow
/// tag, counters, reformat, modify header, extended destinations, a modify mask)
/// (BAD_PARAM).
pub const FTE_ACTION: u32 = 0xb9;
/// SET_FLOW_TABLE_ENTRY: a match value the model cannot tell apart (an ethertype other
/// than IPv4 / IPv6, an ip_protocol other than TCP / UDP) (BAD_PARAM).
pub const FTE_MATCH: u32 = 0xba;
/// SET_FLOW_TABLE_ENTRY: a flow index outside its group or already used;
/// DELETE_FLOW_TABLE_ENTRY: an index without an entry (BAD_PARAM).
pub const FTE_INDEX: u32 = 0xbb;
/// MODIFY_NIC_VPORT_CONTEXT: a field_select bit other than mtu / permanent_address
/// (BAD_PARAM).
pub const FIELD_SELECT: u32 = 0x90;
/// MTU outside 64..=MAX_FRAME + 4 (BAD_PARAM).
pub const MTU: u32 = 0x91;
/// A multicast permanent address (BAD_PARAM).
pub const MAC: u32 = 0x92;
/// ACCESS_REG: a register the model does not implement (BAD_PARAM).
pub const REGISTER_ID: u32 = 0xa0;
/// ACCESS_REG: local_port above 1 (BAD_PARAM).
pub const LOCAL_PORT: u32 = 0xa1;
/// PAOS: admin_status neither up (1) nor down (2) (BAD_PARAM).
pub const ADMIN_STATUS: u32 = 0xa2;
/// PPLR: lb_en with bits other than phy remote (1), phy local (2) and external local
/// (4) loopback (BAD_PARAM).
pub const LOOPBACK_MODE: u32 = 0xa3;
/// ACCESS_REG: inlen/outlen shorter than header + register (BAD_INPUT_LEN /
/// BAD_OUTPUT_LEN).
pub const REG_LENGTH: u32 = 0xa4;
/// PPLM: an admin FEC field naming no mode or more than one, or a mode its speed does not
/// offer, or the RS bypass (BAD_PARAM).
pub const PPLM_ADMIN: u32 = 0xad;
/// ACCESS_REG write of a read-only register (PCAM, PMLP, PDDR) (BAD_PARAM).
pub const REG_READ_ONLY: u32 = 0xae;
/// PCAM: a feature or register group other than 0 (BAD_PARAM).
pub const PCAM_GROUP: u32 = 0xaf;
/// PDDR: a page other than the troubleshooting page (1), or `pnat` not 0 (BAD_PARAM).
pub const PDDR_PAGE: u32 = 0xa8;
/// PDDR: a troubleshooting group other than monitor (0) (BAD_PARAM).
pub const PDDR_GROUP: u32 = 0xa9;
/// PPCNT: a counter group the model does not keep (BAD_PARAM).
pub const PPCNT_GROUP: u32 = 0xa5;
/// PMTU: an admin MTU above the port's maximum or below 64 (BAD_PARAM).
pub const PMTU_MTU: u32 = 0xa6;
/// PTYS: a write for other protocols than Ethernet, or whose `eth_proto_admin` is empty or
/// names a mode the port cannot run (BAD_PARAM).
pub const PTYS_ADMIN: u32 = 0xa7;
/// QUERY_PAGES / MANAGE_PAGES: an op_mod the command has not (BAD_OP).
pub const PAGES_OP_MOD: u32 = 0xc0;
/// QUERY_PAGES / MANAGE_PAGES: a function other than the caller (function_id or
/// embedded_cpu_function not 0) (BAD_PARAM).
pub const PAGES_FUNCTION: u32 = 0xc1;
/// MANAGE_PAGES: a page address 0 or not 4 KiB aligned, or a page the device cannot
/// write (BAD_PARAM).
pub const PAGE_ADDRESS: u32 = 0xc2;
/// MANAGE_PAGES: the function would hold more than [`MAX_FW_PAGES`] pages
/// (NO_RESOURCES).
pub const TOO_MANY_PAGES: u32 = 0xc3;
/// MANAGE_PAGES: inlen shorter than the page list it announces (BAD_INPUT_LEN).
pub const PAGES_LENGTH: u32 = 0xc4;
/// INIT_HCA before the function holds its boot and init pages (BAD_SYS_STATE).
pub const INIT_PAGES_MISSING: u32 = 0xc5;
/// SET_HCA_CAP: a capability type other than general, or a value the device cannot
/// take (log_uar_page_sz other than 4 KiB, log_max_qp above the maximum) (BAD_PARAM).
pub const SET_CAP: u32 = 0xc6;
/// A page list (PAS) too long for one queue or with no room left in the device's pool
/// (NO_RESOURCES).
pub const PAS_POOL: u32 = 0xc7;
/// CREATE_MKEY: anything but a PA-mode key of local read/write over all memory
/// (length64) of a PD of this function (BAD_PARAM).
pub const MKEY_PARAM: u32 = 0xc8;
/// No free memory key (NO_RESOURCES).
pub const NO_MKEY: u32 = 0xc9;
/// A memory key of no key of this function (BAD_RESOURCE).
pub const BAD_MKEY: u32 = 0xca;
/// No free Q counter (NO_RESOURCES).
pub const NO_Q_COUNTER: u32 = 0xcb;
/// A Q counter set id of no counter of this function (BAD_RESOURCE).
pub const BAD_Q_COUNTER: u32 = 0xcc;
/// MODIFY_FLOW_TABLE: a field other than the miss table (BAD_PARAM).
pub const FT_MODIFY_FIELDS: u32 = 0xcd;
/// MODIFY_NIC_VPORT_CONTEXT: an address list longer than the capability allows
/// (BAD_PARAM) or than the input (BAD_INPUT_LEN).
pub const ADDRESS_LIST: u32 = 0xce;
/// MCIA: a module other than the port's (0) (BAD_PARAM).
pub const MCIA_MODULE: u32 = 0xe0;
/// MCIA: a read crossing the end of the 256-byte page (BAD_PARAM).
pub const MCIA_RANGE: u32 = 0xe1;
/// MCIA: more than 48 bytes (12 dwords) at once (BAD_PARAM).
pub const MCIA_SIZE: u32 = 0xe2;
