// SPDX-License-Identifier: GPL-2.0

//! The model's layouts of the flow-steering commands (the handlers: `cmd/fs.rs`), from
//! mlx5_ifc.h: Flow steering: `create_flow_table_in`, `destroy_flow_table_in`,
//! `create_flow_group_in`, `destroy_flow_group_in`, `set_fte_in`, `delete_fte_in`,
//! `set_flow_table_root_in` (the fields they share sit at the same bits).

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
