// SPDX-License-Identifier: GPL-2.0

//! Function-level commands: ENABLE_HCA / DISABLE_HCA (main.c `mlx5_core_enable_hca`),
//! QUERY_ISSI / SET_ISSI (`mlx5_core_set_issi`), QUERY_HCA_CAP (fw.c `mlx5_core_get_caps_mode`
//! for the general and Ethernet-offload capabilities, maximum and current), SET_HCA_CAP of the
//! general capabilities (main.c `handle_hca_cap`), QUERY_ADAPTER (fw.c
//! `mlx5_query_board_id`), INIT_HCA / TEARDOWN_HCA (fw.c `mlx5_cmd_init_hca`,
//! `mlx5_cmd_teardown_hca`), and the capabilities the Ethernet function needs (dev.c
//! `mlx5_eth_supported`, en_main.c `mlx5e_attach_netdev`).

use super::queue::CmdErrorKind;
use super::{build, fits, op, output, start, Field, FormatError};
use crate::hwif::mlx5::seg::{MAX_TX_WQEBBS, SEND_WQE_BB, SEND_WQE_MAX_WQEBBS};

/// `enable_hca_in` / `disable_hca_in` length.
pub const ENABLE_HCA_IN_LEN: usize = 16;
/// `enable_hca_out` / `disable_hca_out` length (0x60 bits).
pub const ENABLE_HCA_OUT_LEN: usize = 12;
/// `query_issi_in` length.
pub const QUERY_ISSI_IN_LEN: usize = 16;
/// `query_issi_out` length (0x380 bits).
pub const QUERY_ISSI_OUT_LEN: usize = 112;
/// `set_issi_in` length.
pub const SET_ISSI_IN_LEN: usize = 16;
/// `set_issi_out` length.
pub const SET_ISSI_OUT_LEN: usize = 16;
/// `query_hca_cap_in` length.
pub const QUERY_HCA_CAP_IN_LEN: usize = 16;
/// `query_hca_cap_out` length: 16-byte header + `hca_cap_union` (0x8000 bits).
pub const QUERY_HCA_CAP_OUT_LEN: usize = 16 + 4096;
/// `set_hca_cap_in` length: 16-byte header + `hca_cap_union`.
pub const SET_HCA_CAP_IN_LEN: usize = 16 + 4096;
/// `set_hca_cap_out` length.
pub const SET_HCA_CAP_OUT_LEN: usize = 16;
/// `query_adapter_in` length.
pub const QUERY_ADAPTER_IN_LEN: usize = 16;
/// `query_adapter_out` length (0x880 bits: the header and `query_adapter_struct`).
pub const QUERY_ADAPTER_OUT_LEN: usize = 0x110;
/// `query_adapter_out.query_adapter_struct.vsd_contd_psid`: byte 0x100, 16 bytes (the
/// board's PSID, mlx5's `board_id`).
pub const QUERY_ADAPTER_PSID: usize = 0x100;
/// Length of the PSID.
pub const PSID_LEN: usize = 16;
/// `init_hca_in` length (0x100 bits).
pub const INIT_HCA_IN_LEN: usize = 32;
/// `init_hca_out` length.
pub const INIT_HCA_OUT_LEN: usize = 16;
/// `teardown_hca_in` length.
pub const TEARDOWN_HCA_IN_LEN: usize = 16;
/// `teardown_hca_out` length.
pub const TEARDOWN_HCA_OUT_LEN: usize = 16;

/// `enable_hca_in.function_id` / `disable_hca_in.function_id`: bit 0x50, 16 bits.
pub const ENABLE_HCA_FUNCTION_ID: Field = Field::new(0x50, 16);
/// `query_issi_out.current_issi`: bit 0x50, 16 bits.
pub const QUERY_ISSI_CURRENT: Field = Field::new(0x50, 16);
/// `query_issi_out.supported_issi_dw0`: bit 0x360, 32 bits (bit i: ISSI i supported).
pub const QUERY_ISSI_SUPPORTED_DW0: Field = Field::new(0x360, 32);
/// `set_issi_in.current_issi`: bit 0x50, 16 bits.
pub const SET_ISSI_CURRENT: Field = Field::new(0x50, 16);
/// `teardown_hca_in.profile`: bit 0x50, 16 bits.
pub const TEARDOWN_HCA_PROFILE: Field = Field::new(0x50, 16);
/// `teardown_hca_out.state`: bit 0x7f, 1 bit (force-close profile only).
pub const TEARDOWN_HCA_STATE: Field = Field::new(0x7f, 1);

/// `TEARDOWN_HCA` profile: graceful close (`MLX5_TEARDOWN_HCA_IN_PROFILE_GRACEFUL_CLOSE`).
pub const TEARDOWN_PROFILE_GRACEFUL: u16 = 0;
/// The interface step rsnic sets (`mlx5_core_set_issi`: 1 when supported).
pub const ISSI_1: u16 = 1;

/// `query_hca_cap_out.capability`: bit 0x80 (byte 16).
pub const CAP_BASE: usize = 0x80;
/// QUERY_HCA_CAP op_mod bit 0: current values (`HCA_CAP_OPMOD_GET_CUR`); 0 = maximum.
pub const HCA_CAP_OPMOD_GET_CUR: u16 = 1;
/// Capability type: general device caps (`MLX5_CAP_GENERAL`).
pub const CAP_GENERAL: u16 = 0;
/// Capability type: Ethernet offload caps (`MLX5_CAP_ETHERNET_OFFLOADS`).
pub const CAP_ETHERNET_OFFLOADS: u16 = 1;
/// Capability type: flow table caps (`MLX5_CAP_FLOW_TABLE`, `flow_table_nic_cap`).
pub const CAP_FLOW_TABLE: u16 = 7;
/// The deepest flow table level mlx5e's NIC RX namespace needs (`mlx5_eth_supported`:
/// `max_ft_level` of at least 3); rsnic's tables use levels 0 to 3 (the ntuple rule table,
/// VLAN, L2, traffic type).
pub const MIN_FT_LEVEL: u8 = 3;
/// The largest `log_max_qp` mlx5_core's profile asks for (`handle_hca_cap`: at most 2^18
/// QPs, fewer when the device's maximum is lower).
pub const PROFILE_LOG_MAX_QP: u8 = 18;
/// `pkey_table_size` for 128 entries (`to_fw_pkey_sz(dev, 128)`), what `handle_hca_cap`
/// sets.
pub const PKEY_TABLE_SIZE_128: u8 = 0;

/// Fields of `struct mlx5_ifc_cmd_hca_cap_bits` (bit offsets inside the capability).
pub mod general {
    use super::Field;
    /// `log_max_cq_sz`: bit 0xc8, 8 bits.
    pub const LOG_MAX_CQ_SZ: Field = Field::new(0xc8, 8);
    /// `log_max_cq`: bit 0xdb, 5 bits.
    pub const LOG_MAX_CQ: Field = Field::new(0xdb, 5);
    /// `log_max_eq_sz`: bit 0xe0, 8 bits.
    pub const LOG_MAX_EQ_SZ: Field = Field::new(0xe0, 8);
    /// `log_max_eq`: bit 0xfc, 4 bits.
    pub const LOG_MAX_EQ: Field = Field::new(0xfc, 4);
    /// `vport_counters`: bit 0x181, 1 bit.
    pub const VPORT_COUNTERS: Field = Field::new(0x181, 1);
    /// `pcam_reg`: bit 0x1aa, 1 bit.
    pub const PCAM_REG: Field = Field::new(0x1aa, 1);
    /// `port_type`: bit 0x1b6, 2 bits (1 = Ethernet).
    pub const PORT_TYPE: Field = Field::new(0x1b6, 2);
    /// `num_ports`: bit 0x1b8, 8 bits.
    pub const NUM_PORTS: Field = Field::new(0x1b8, 8);
    /// `cqe_version`: bit 0x1fc, 4 bits.
    pub const CQE_VERSION: Field = Field::new(0x1fc, 4);
    /// `eth_net_offloads`: bit 0x21c, 1 bit.
    pub const ETH_NET_OFFLOADS: Field = Field::new(0x21c, 1);
    /// `cq_moderation`: bit 0x222, 1 bit.
    pub const CQ_MODERATION: Field = Field::new(0x222, 1);
    /// `cq_period_mode_modify`: bit 0x223, 1 bit.
    pub const CQ_PERIOD_MODE_MODIFY: Field = Field::new(0x223, 1);
    /// `uar_sz`: bit 0x24a, 6 bits.
    pub const UAR_SZ: Field = Field::new(0x24a, 6);
    /// `log_pg_sz`: bit 0x258, 8 bits.
    pub const LOG_PG_SZ: Field = Field::new(0x258, 8);
    /// `log_max_transport_domain`: bit 0x323, 5 bits.
    pub const LOG_MAX_TRANSPORT_DOMAIN: Field = Field::new(0x323, 5);
    /// `log_max_pd`: bit 0x32b, 5 bits.
    pub const LOG_MAX_PD: Field = Field::new(0x32b, 5);
    /// `log_max_rq`: bit 0x363, 5 bits.
    pub const LOG_MAX_RQ: Field = Field::new(0x363, 5);
    /// `log_max_sq`: bit 0x36b, 5 bits.
    pub const LOG_MAX_SQ: Field = Field::new(0x36b, 5);
    /// `log_max_tir`: bit 0x373, 5 bits.
    pub const LOG_MAX_TIR: Field = Field::new(0x373, 5);
    /// `log_max_tis`: bit 0x37b, 5 bits.
    pub const LOG_MAX_TIS: Field = Field::new(0x37b, 5);
    /// `log_max_rqt`: bit 0x38b, 5 bits.
    pub const LOG_MAX_RQT: Field = Field::new(0x38b, 5);
    /// `log_max_rqt_size`: bit 0x393, 5 bits.
    pub const LOG_MAX_RQT_SIZE: Field = Field::new(0x393, 5);
    /// `log_max_wq_sz`: bit 0x3db, 5 bits.
    pub const LOG_MAX_WQ_SZ: Field = Field::new(0x3db, 5);
    /// `log_max_vlan_list`: bit 0x3eb, 5 bits.
    pub const LOG_MAX_VLAN_LIST: Field = Field::new(0x3eb, 5);
    /// `log_max_current_mc_list`: bit 0x3f3, 5 bits.
    pub const LOG_MAX_CURRENT_MC_LIST: Field = Field::new(0x3f3, 5);
    /// `log_max_current_uc_list`: bit 0x3fb, 5 bits.
    pub const LOG_MAX_CURRENT_UC_LIST: Field = Field::new(0x3fb, 5);
    /// `max_num_eqs`: bit 0x470, 16 bits.
    pub const MAX_NUM_EQS: Field = Field::new(0x470, 16);
    /// `cqe_compression`: bit 0x5bf, 1 bit.
    pub const CQE_COMPRESSION: Field = Field::new(0x5bf, 1);
    /// `cqe_compression_max_num`: bit 0x5d0, 16 bits.
    pub const CQE_COMPRESSION_MAX_NUM: Field = Field::new(0x5d0, 16);
    /// `log_max_qp`: bit 0x9b, 5 bits (settable, up to the maximum).
    pub const LOG_MAX_QP: Field = Field::new(0x9b, 5);
    /// `pkey_table_size`: bit 0x190, 16 bits (settable).
    pub const PKEY_TABLE_SIZE: Field = Field::new(0x190, 16);
    /// `nic_flow_table`: bit 0x1a6, 1 bit.
    pub const NIC_FLOW_TABLE: Field = Field::new(0x1a6, 1);
    /// `cmdif_checksum`: bit 0x210, 2 bits (settable).
    pub const CMDIF_CHECKSUM: Field = Field::new(0x210, 2);
    /// `max_wqe_sz_sq`: bit 0x290, 16 bits (bytes).
    pub const MAX_WQE_SZ_SQ: Field = Field::new(0x290, 16);
    /// `log_uar_page_sz`: bit 0x490, 16 bits (settable: log2 of the UAR page in 4 KiB).
    pub const LOG_UAR_PAGE_SZ: Field = Field::new(0x490, 16);
}

/// Fields of `struct mlx5_ifc_per_protocol_networking_offload_caps_bits` (bit offsets inside
/// the capability).
pub mod eth {
    use super::Field;
    /// `csum_cap`: bit 0x00, 1 bit.
    pub const CSUM_CAP: Field = Field::new(0x00, 1);
    /// `vlan_cap`: bit 0x01, 1 bit.
    pub const VLAN_CAP: Field = Field::new(0x01, 1);
    /// `wqe_vlan_insert`: bit 0x07, 1 bit (the eth segment's VLAN insertion).
    pub const WQE_VLAN_INSERT: Field = Field::new(0x07, 1);
    /// `max_lso_cap`: bit 0x0b, 5 bits (log2 of the largest LSO).
    pub const MAX_LSO_CAP: Field = Field::new(0x0b, 5);
    /// `multi_pkt_send_wqe`: bit 0x10, 2 bits.
    pub const MULTI_PKT_SEND_WQE: Field = Field::new(0x10, 2);
    /// `wqe_inline_mode`: bit 0x12, 2 bits (`MLX5_CAP_INLINE_MODE_*`).
    pub const WQE_INLINE_MODE: Field = Field::new(0x12, 2);
    /// `rss_ind_tbl_cap`: bit 0x14, 4 bits.
    pub const RSS_IND_TBL_CAP: Field = Field::new(0x14, 4);
    /// `enhanced_multi_pkt_send_wqe`: bit 0x1a, 1 bit.
    pub const ENHANCED_MULTI_PKT_SEND_WQE: Field = Field::new(0x1a, 1);
}

/// Fields of `flow_table_nic_cap`'s `flow_table_properties_nic_receive`
/// (`flow_table_prop_layout`, at bit 0x200 of the capability; offsets inside the capability).
pub mod ft {
    use super::Field;
    /// Bit of `flow_table_properties_nic_receive` in `flow_table_nic_cap`.
    pub const NIC_RX: usize = 0x200;
    /// `ft_support`: bit 0x0 of the properties, 1 bit.
    pub const FT_SUPPORT: Field = Field::new(0x0, 1).at(NIC_RX);
    /// `log_max_ft_size`: bit 0x22, 6 bits.
    pub const LOG_MAX_FT_SIZE: Field = Field::new(0x22, 6).at(NIC_RX);
    /// `max_ft_level`: bit 0x38, 8 bits.
    pub const MAX_FT_LEVEL: Field = Field::new(0x38, 8).at(NIC_RX);
    /// `log_max_ft_num`: bit 0x78, 8 bits.
    pub const LOG_MAX_FT_NUM: Field = Field::new(0x78, 8).at(NIC_RX);
    /// `log_max_flow`: bit 0xb8, 8 bits.
    pub const LOG_MAX_FLOW: Field = Field::new(0xb8, 8).at(NIC_RX);
}

/// `wqe_inline_mode` capability: L2 headers must be inlined (`MLX5_CAP_INLINE_MODE_L2`).
pub const CAP_INLINE_MODE_L2: u8 = 0;
/// `wqe_inline_mode` capability: the vport context says (`MLX5_CAP_INLINE_MODE_VPORT_CONTEXT`).
pub const CAP_INLINE_MODE_VPORT_CONTEXT: u8 = 1;
/// `wqe_inline_mode` capability: no inline needed (`MLX5_CAP_INLINE_MODE_NOT_REQUIRED`).
pub const CAP_INLINE_MODE_NOT_REQUIRED: u8 = 2;

/// Minimum inline mode of TX WQEs (`MLX5_INLINE_MODE_*`).
pub const INLINE_MODE_NONE: u8 = 0;
/// Inline the L2 header.
pub const INLINE_MODE_L2: u8 = 1;
/// Inline up to the IP header.
pub const INLINE_MODE_IP: u8 = 2;
/// Inline up to the TCP/UDP header.
pub const INLINE_MODE_TCP_UDP: u8 = 3;

/// The device capabilities rsnic uses (current values).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DevCaps {
    /// `log_max_cq_sz`.
    pub log_max_cq_sz: u8,
    /// `log_max_cq`.
    pub log_max_cq: u8,
    /// `log_max_eq_sz`.
    pub log_max_eq_sz: u8,
    /// `log_max_eq`.
    pub log_max_eq: u8,
    /// `log_max_wq_sz`.
    pub log_max_wq_sz: u8,
    /// `log_max_sq`.
    pub log_max_sq: u8,
    /// `log_max_rq`.
    pub log_max_rq: u8,
    /// `log_max_tir`.
    pub log_max_tir: u8,
    /// `log_max_tis`.
    pub log_max_tis: u8,
    /// `log_max_rqt`.
    pub log_max_rqt: u8,
    /// `log_max_rqt_size`.
    pub log_max_rqt_size: u8,
    /// `log_max_pd`.
    pub log_max_pd: u8,
    /// `log_max_transport_domain`.
    pub log_max_transport_domain: u8,
    /// `max_num_eqs`.
    pub max_num_eqs: u16,
    /// `uar_sz`.
    pub uar_sz: u8,
    /// `log_pg_sz`.
    pub log_pg_sz: u8,
    /// `num_ports`.
    pub num_ports: u8,
    /// `port_type` (1 = Ethernet).
    pub port_type: u8,
    /// `cqe_version`.
    pub cqe_version: u8,
    /// `eth_net_offloads`.
    pub eth_net_offloads: bool,
    /// `cq_moderation`: CQs take a moderation period and count.
    pub cq_moderation: bool,
    /// `cq_period_mode_modify`: MODIFY_CQ may change a live CQ's moderation.
    pub cq_period_mode_modify: bool,
    /// `vport_counters`.
    pub vport_counters: bool,
    /// `pcam_reg`: PCAM lists the port's registers and features.
    pub pcam_reg: bool,
    /// `cqe_compression`.
    pub cqe_compression: bool,
    /// `cqe_compression_max_num`.
    pub cqe_compression_max_num: u16,
    /// `log_max_current_uc_list`: the vport's UC address list holds `2^` this.
    pub log_max_current_uc_list: u8,
    /// `log_max_current_mc_list`: the vport's MC address list holds `2^` this.
    pub log_max_current_mc_list: u8,
    /// `log_max_vlan_list`: the vport's VLAN list holds `2^` this.
    pub log_max_vlan_list: u8,
    /// `log_max_qp`.
    pub log_max_qp: u8,
    /// `nic_flow_table`: the NIC receive flow tables exist.
    pub nic_flow_table: bool,
    /// `max_wqe_sz_sq`: the largest send WQE, in bytes.
    pub max_wqe_sz_sq: u16,
    /// Ethernet `csum_cap`.
    pub csum_cap: bool,
    /// Ethernet `vlan_cap`.
    pub vlan_cap: bool,
    /// Ethernet `wqe_vlan_insert`: the SQ inserts the eth segment's tag (without it the
    /// tagged L2 header is inlined, mlx5e's `MLX5E_SQ_STATE_VLAN_NEED_L2_INLINE`).
    pub wqe_vlan_insert: bool,
    /// Ethernet `max_lso_cap` (log2 bytes).
    pub max_lso_cap: u8,
    /// Ethernet `wqe_inline_mode` (`CAP_INLINE_MODE_*`).
    pub wqe_inline_mode: u8,
    /// Ethernet `multi_pkt_send_wqe`.
    pub multi_pkt_send_wqe: u8,
    /// Ethernet `enhanced_multi_pkt_send_wqe`.
    pub enhanced_multi_pkt_send_wqe: bool,
    /// Ethernet `rss_ind_tbl_cap`.
    pub rss_ind_tbl_cap: u8,
    /// NIC RX `ft_support`: NIC receive flow tables can be created.
    pub ft_support: bool,
    /// NIC RX `max_ft_level`: the deepest level a table may have.
    pub max_ft_level: u8,
    /// NIC RX `log_max_ft_size`: a table holds at most `2^` this flow indices.
    pub log_max_ft_size: u8,
    /// NIC RX `log_max_ft_num`: at most `2^` this tables.
    pub log_max_ft_num: u8,
    /// NIC RX `log_max_flow`: at most `2^` this flow table entries.
    pub log_max_flow: u8,
}

/// `port_type` of an Ethernet function.
pub const PORT_TYPE_ETH: u8 = 1;

impl DevCaps {
    /// `mlx5_query_min_inline` without the vport query: the minimum inline mode, or `None`
    /// when the NIC vport context holds it (`CAP_INLINE_MODE_VPORT_CONTEXT`).
    pub fn min_inline_from_caps(&self) -> Option<u8> {
        match self.wqe_inline_mode {
            CAP_INLINE_MODE_L2 => Some(INLINE_MODE_L2),
            CAP_INLINE_MODE_VPORT_CONTEXT => None,
            _ => Some(INLINE_MODE_NONE),
        }
    }

    /// Enhanced multi-packet send WQEs are supported (`MLX5_CAP_ETH(enhanced_multi_pkt_send_wqe)`).
    pub fn has_enhanced_mpwqe(&self) -> bool {
        self.enhanced_multi_pkt_send_wqe
    }

    /// The largest send WQE in WQEBBs (`mlx5e_get_max_sq_wqebbs`: `max_wqe_sz_sq` in
    /// 64-byte blocks, at most `MLX5_SEND_WQE_MAX_WQEBBS`): every SQ's WQEs, MPWQE sessions
    /// included, stay within it.
    pub fn max_sq_wqebbs(&self) -> u16 {
        (self.max_wqe_sz_sq / SEND_WQE_BB as u16).min(SEND_WQE_MAX_WQEBBS)
    }

    /// The general capabilities the Ethernet function needs (`mlx5_eth_supported`'s, in its
    /// order): `Err` names the first one missing.
    pub fn check_general(&self) -> Result<(), CmdErrorKind> {
        if self.port_type != PORT_TYPE_ETH {
            return Err(CmdErrorKind::Unsupported);
        }
        if !self.eth_net_offloads {
            return Err(CmdErrorKind::MissingCap("eth_net_offloads"));
        }
        if !self.nic_flow_table {
            return Err(CmdErrorKind::MissingCap("nic_flow_table"));
        }
        Ok(())
    }

    /// The Ethernet offload capabilities the function needs (`mlx5_eth_supported`'s), and a
    /// send WQE large enough for the largest WQE the data path builds (`mlx5e_attach_netdev`:
    /// `max_wqe_sz_sq` of at least `MLX5E_MAX_TX_WQEBBS`): `Err` names the first one
    /// missing. The second value is the capability type the field belongs to.
    pub fn check_eth(&self) -> Result<(), (u16, CmdErrorKind)> {
        let eth = |name| Err((CAP_ETHERNET_OFFLOADS, CmdErrorKind::MissingCap(name)));
        if !self.csum_cap {
            return eth("csum_cap");
        }
        if self.max_lso_cap == 0 {
            return eth("max_lso_cap");
        }
        if !self.vlan_cap {
            return eth("vlan_cap");
        }
        if self.rss_ind_tbl_cap == 0 {
            return eth("rss_ind_tbl_cap");
        }
        if self.max_sq_wqebbs() < MAX_TX_WQEBBS {
            return Err((
                CAP_GENERAL,
                CmdErrorKind::CapTooSmall {
                    cap: "max_wqe_sz_sq",
                    have: u32::from(self.max_wqe_sz_sq),
                    need: u32::from(MAX_TX_WQEBBS) * SEND_WQE_BB as u32,
                },
            ));
        }
        Ok(())
    }
}

impl DevCaps {
    /// The NIC RX flow table capabilities the function needs: `ft_support` (fs_core's
    /// `init_root_ns`: without it there is no NIC RX namespace, and mlx5e no steering) and
    /// `max_ft_level` of at least [`MIN_FT_LEVEL`] (`mlx5_eth_supported`); and room for
    /// rsnic's tables (`log_max_ft_size` for the largest, `log_max_ft_num` for four):
    /// `Err` names the first one missing or too small.
    pub fn check_flow_table(&self, largest_log: u8, tables: u32) -> Result<(), CmdErrorKind> {
        if !self.ft_support {
            return Err(CmdErrorKind::MissingCap("ft_support"));
        }
        if self.max_ft_level < MIN_FT_LEVEL {
            return Err(CmdErrorKind::CapTooSmall {
                cap: "max_ft_level",
                have: u32::from(self.max_ft_level),
                need: u32::from(MIN_FT_LEVEL),
            });
        }
        if self.log_max_ft_size < largest_log {
            return Err(CmdErrorKind::CapTooSmall {
                cap: "log_max_ft_size",
                have: u32::from(self.log_max_ft_size),
                need: u32::from(largest_log),
            });
        }
        let num = 1u64
            .checked_shl(u32::from(self.log_max_ft_num))
            .unwrap_or(u64::MAX);
        if num < u64::from(tables) {
            return Err(CmdErrorKind::CapTooSmall {
                cap: "log_max_ft_num",
                have: u32::from(self.log_max_ft_num),
                need: u64::BITS - u64::from(tables.saturating_sub(1)).leading_zeros(),
            });
        }
        Ok(())
    }

    /// The flow table entries the device holds (`2^log_max_flow`, at most `u32::MAX`).
    pub fn max_flows(&self) -> u32 {
        1u32.checked_shl(u32::from(self.log_max_flow))
            .unwrap_or(u32::MAX)
    }
}

/// Reads the NIC RX flow table capabilities of a QUERY_HCA_CAP(`CAP_FLOW_TABLE`) output
/// into `caps`.
pub fn parse_flow_table_caps(out: &[u8], caps: &mut DevCaps) -> Result<(), FormatError> {
    let o = output(out, QUERY_HCA_CAP_OUT_LEN)?;
    let g = |f: Field| f.at(CAP_BASE).get(o);
    caps.ft_support = g(ft::FT_SUPPORT) != 0;
    caps.log_max_ft_size = g(ft::LOG_MAX_FT_SIZE) as u8;
    caps.max_ft_level = g(ft::MAX_FT_LEVEL) as u8;
    caps.log_max_ft_num = g(ft::LOG_MAX_FT_NUM) as u8;
    caps.log_max_flow = g(ft::LOG_MAX_FLOW) as u8;
    Ok(())
}

/// ENABLE_HCA for function 0.
pub fn enable_hca(buf: &mut [u8]) -> Result<usize, FormatError> {
    build(buf, ENABLE_HCA_IN_LEN, op::ENABLE_HCA, 0, &[])
}

/// DISABLE_HCA for function 0.
pub fn disable_hca(buf: &mut [u8]) -> Result<usize, FormatError> {
    build(buf, ENABLE_HCA_IN_LEN, op::DISABLE_HCA, 0, &[])
}

/// QUERY_ISSI.
pub fn query_issi(buf: &mut [u8]) -> Result<usize, FormatError> {
    build(buf, QUERY_ISSI_IN_LEN, op::QUERY_ISSI, 0, &[])
}

/// The QUERY_ISSI answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Issi {
    /// `current_issi`.
    pub current: u16,
    /// `supported_issi_dw0`: bit i set when ISSI i is supported.
    pub supported: u32,
}

impl Issi {
    /// ISSI 1 is supported (`sup_issi & (1 << 1)`).
    pub fn supports_1(&self) -> bool {
        self.supported & (1 << ISSI_1) != 0
    }
}

/// Parses QUERY_ISSI's output.
pub fn parse_query_issi(out: &[u8]) -> Result<Issi, FormatError> {
    let o = output(out, QUERY_ISSI_OUT_LEN)?;
    Ok(Issi {
        current: QUERY_ISSI_CURRENT.get(o) as u16,
        supported: QUERY_ISSI_SUPPORTED_DW0.get32(o),
    })
}

/// SET_ISSI `issi`.
pub fn set_issi(buf: &mut [u8], issi: u16) -> Result<usize, FormatError> {
    let f = [(SET_ISSI_CURRENT, u64::from(issi))];
    build(buf, SET_ISSI_IN_LEN, op::SET_ISSI, 0, &f)
}

/// QUERY_HCA_CAP of `cap_type` (`CAP_GENERAL`, `CAP_ETHERNET_OFFLOADS`, `CAP_FLOW_TABLE`), current values:
/// `op_mod = (cap_type << 1) | HCA_CAP_OPMOD_GET_CUR`.
pub fn query_hca_cap(buf: &mut [u8], cap_type: u16) -> Result<usize, FormatError> {
    fits(u64::from(cap_type), 15)?;
    let op_mod = (cap_type << 1) | HCA_CAP_OPMOD_GET_CUR;
    build(buf, QUERY_HCA_CAP_IN_LEN, op::QUERY_HCA_CAP, op_mod, &[])
}

/// QUERY_HCA_CAP of `cap_type`, maximum values (`HCA_CAP_OPMOD_GET_MAX`):
/// `op_mod = cap_type << 1`.
pub fn query_hca_cap_max(buf: &mut [u8], cap_type: u16) -> Result<usize, FormatError> {
    fits(u64::from(cap_type), 15)?;
    build(
        buf,
        QUERY_HCA_CAP_IN_LEN,
        op::QUERY_HCA_CAP,
        cap_type << 1,
        &[],
    )
}

/// SET_HCA_CAP of the general capabilities, as main.c's `handle_hca_cap`: the current
/// capabilities (`cur`, a QUERY_HCA_CAP(`CAP_GENERAL`, current) output) written back with
/// what the driver sets: a 128-entry P_Key table, `log_max_qp` at most 2^18 and within the
/// device's maximum (`max`), no command checksums, 4 KiB UAR pages (rsnic's doorbells are
/// 4 KiB apart whatever the kernel's page size). The rest is the device's as it was.
pub fn set_general_caps(buf: &mut [u8], cur: &[u8], max: &DevCaps) -> Result<usize, FormatError> {
    let cur = output(cur, QUERY_HCA_CAP_OUT_LEN)?;
    let b = start(
        buf,
        SET_HCA_CAP_IN_LEN,
        op::SET_HCA_CAP,
        CAP_GENERAL << 1,
        &[],
    )?;
    let cap = CAP_BASE / 8;
    for (d, s) in b.iter_mut().zip(cur).skip(cap) {
        *d = *s;
    }
    let s = |b: &mut [u8], f: Field, v: u64| f.at(CAP_BASE).set(b, v);
    s(b, general::PKEY_TABLE_SIZE, u64::from(PKEY_TABLE_SIZE_128));
    s(
        b,
        general::LOG_MAX_QP,
        u64::from(max.log_max_qp.min(PROFILE_LOG_MAX_QP)),
    );
    s(b, general::CMDIF_CHECKSUM, 0);
    s(b, general::LOG_UAR_PAGE_SZ, 0);
    Ok(SET_HCA_CAP_IN_LEN)
}

/// QUERY_ADAPTER.
pub fn query_adapter(buf: &mut [u8]) -> Result<usize, FormatError> {
    build(buf, QUERY_ADAPTER_IN_LEN, op::QUERY_ADAPTER, 0, &[])
}

/// The PSID of a QUERY_ADAPTER output (`mlx5_query_board_id`: mlx5's `board_id`, which
/// devlink info reports as `board.id`), NUL-padded.
pub fn parse_query_adapter(out: &[u8]) -> Result<[u8; PSID_LEN], FormatError> {
    let o = output(out, QUERY_ADAPTER_OUT_LEN)?;
    let mut psid = [0u8; PSID_LEN];
    for (d, s) in psid.iter_mut().zip(o.iter().skip(QUERY_ADAPTER_PSID)) {
        *d = *s;
    }
    Ok(psid)
}

/// Reads the general capabilities of a QUERY_HCA_CAP(`CAP_GENERAL`) output into `caps`.
pub fn parse_general_caps(out: &[u8], caps: &mut DevCaps) -> Result<(), FormatError> {
    let o = output(out, QUERY_HCA_CAP_OUT_LEN)?;
    let g = |f: Field| f.at(CAP_BASE).get(o);
    caps.log_max_cq_sz = g(general::LOG_MAX_CQ_SZ) as u8;
    caps.log_max_cq = g(general::LOG_MAX_CQ) as u8;
    caps.log_max_eq_sz = g(general::LOG_MAX_EQ_SZ) as u8;
    caps.log_max_eq = g(general::LOG_MAX_EQ) as u8;
    caps.log_max_wq_sz = g(general::LOG_MAX_WQ_SZ) as u8;
    caps.log_max_sq = g(general::LOG_MAX_SQ) as u8;
    caps.log_max_rq = g(general::LOG_MAX_RQ) as u8;
    caps.log_max_tir = g(general::LOG_MAX_TIR) as u8;
    caps.log_max_tis = g(general::LOG_MAX_TIS) as u8;
    caps.log_max_rqt = g(general::LOG_MAX_RQT) as u8;
    caps.log_max_rqt_size = g(general::LOG_MAX_RQT_SIZE) as u8;
    caps.log_max_pd = g(general::LOG_MAX_PD) as u8;
    caps.log_max_transport_domain = g(general::LOG_MAX_TRANSPORT_DOMAIN) as u8;
    caps.max_num_eqs = g(general::MAX_NUM_EQS) as u16;
    caps.uar_sz = g(general::UAR_SZ) as u8;
    caps.log_pg_sz = g(general::LOG_PG_SZ) as u8;
    caps.num_ports = g(general::NUM_PORTS) as u8;
    caps.port_type = g(general::PORT_TYPE) as u8;
    caps.cqe_version = g(general::CQE_VERSION) as u8;
    caps.eth_net_offloads = g(general::ETH_NET_OFFLOADS) != 0;
    caps.cq_moderation = g(general::CQ_MODERATION) != 0;
    caps.cq_period_mode_modify = g(general::CQ_PERIOD_MODE_MODIFY) != 0;
    caps.vport_counters = g(general::VPORT_COUNTERS) != 0;
    caps.pcam_reg = g(general::PCAM_REG) != 0;
    caps.cqe_compression = g(general::CQE_COMPRESSION) != 0;
    caps.cqe_compression_max_num = g(general::CQE_COMPRESSION_MAX_NUM) as u16;
    caps.log_max_current_uc_list = g(general::LOG_MAX_CURRENT_UC_LIST) as u8;
    caps.log_max_current_mc_list = g(general::LOG_MAX_CURRENT_MC_LIST) as u8;
    caps.log_max_vlan_list = g(general::LOG_MAX_VLAN_LIST) as u8;
    caps.log_max_qp = g(general::LOG_MAX_QP) as u8;
    caps.nic_flow_table = g(general::NIC_FLOW_TABLE) != 0;
    caps.max_wqe_sz_sq = g(general::MAX_WQE_SZ_SQ) as u16;
    Ok(())
}

/// Reads the Ethernet offload capabilities of a QUERY_HCA_CAP(`CAP_ETHERNET_OFFLOADS`)
/// output into `caps`.
pub fn parse_eth_caps(out: &[u8], caps: &mut DevCaps) -> Result<(), FormatError> {
    let o = output(out, QUERY_HCA_CAP_OUT_LEN)?;
    let g = |f: Field| f.at(CAP_BASE).get(o);
    caps.csum_cap = g(eth::CSUM_CAP) != 0;
    caps.vlan_cap = g(eth::VLAN_CAP) != 0;
    caps.wqe_vlan_insert = g(eth::WQE_VLAN_INSERT) != 0;
    caps.max_lso_cap = g(eth::MAX_LSO_CAP) as u8;
    caps.multi_pkt_send_wqe = g(eth::MULTI_PKT_SEND_WQE) as u8;
    caps.wqe_inline_mode = g(eth::WQE_INLINE_MODE) as u8;
    caps.rss_ind_tbl_cap = g(eth::RSS_IND_TBL_CAP) as u8;
    caps.enhanced_multi_pkt_send_wqe = g(eth::ENHANCED_MULTI_PKT_SEND_WQE) != 0;
    Ok(())
}

/// INIT_HCA (no software owner id).
pub fn init_hca(buf: &mut [u8]) -> Result<usize, FormatError> {
    build(buf, INIT_HCA_IN_LEN, op::INIT_HCA, 0, &[])
}

/// TEARDOWN_HCA with the graceful profile.
pub fn teardown_hca(buf: &mut [u8]) -> Result<usize, FormatError> {
    let f = [(TEARDOWN_HCA_PROFILE, u64::from(TEARDOWN_PROFILE_GRACEFUL))];
    build(buf, TEARDOWN_HCA_IN_LEN, op::TEARDOWN_HCA, 0, &f)
}
