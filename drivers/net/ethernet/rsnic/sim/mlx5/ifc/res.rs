// SPDX-License-Identifier: GPL-2.0

//! The model's layouts of the resource commands (the handlers: `cmd/res.rs`) and of the
//! EQE, from mlx5_ifc.h and device.h: EQ, CQ, SQ/RQ (`wq`), TIS, RQT, TIR contexts.

/// `create_eq_in` (eqc at byte 0x10).
pub mod eq {
    use crate::sim::mlx5::ifc::{fld as f, Fld};
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
    use crate::sim::mlx5::ifc::{fld as f, Fld};
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
    use crate::sim::mlx5::ifc::{fld as f, Fld};
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
    use crate::sim::mlx5::ifc::{fld as f, Fld};
    /// `ctx.prio`: bit 0x10c (4).
    pub const PRIO: Fld = f(0x10c, 4);
    /// `ctx.transport_domain`: bit 0x228 (24).
    pub const TRANSPORT_DOMAIN: Fld = f(0x228, 0x18);
}

/// `create_rqt_in` / `modify_rqt_in` (rqtc at byte 0x20).
pub mod rqt {
    use crate::sim::mlx5::ifc::{fld as f, Fld};
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
    use crate::sim::mlx5::ifc::{fld as f, Fld};
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
