// SPDX-License-Identifier: GPL-2.0

//! The model's layouts of the function-level commands (the handlers: `cmd/hca.rs`), from
//! mlx5_ifc.h: `enable_hca_in` / `disable_hca_in`.

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

/// `cmd_hca_cap` fields, bit offsets inside the capability (add `8 * CAP_OFF` for the output).
pub mod gen_cap {
    use crate::sim::mlx5::ifc::{fld as f, Fld};
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
    /// `pcam_reg`: bit 0x1aa (1): the port registers are listed in PCAM.
    pub const PCAM_REG: Fld = f(0x1aa, 1);
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
    use crate::sim::mlx5::ifc::{fld as f, Fld};
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

/// `per_protocol_networking_offload_caps` fields, bit offsets inside the capability.
pub mod eth_cap {
    use crate::sim::mlx5::ifc::{fld as f, Fld};
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
