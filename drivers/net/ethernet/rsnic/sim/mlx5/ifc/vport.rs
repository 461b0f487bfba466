// SPDX-License-Identifier: GPL-2.0

//! The model's layouts of the vport and port commands (the handlers: `cmd/vport.rs`),
//! from mlx5_ifc.h: `query_nic_vport_context_*` / `modify_nic_vport_context_in`.

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

/// `access_register_in`/`_out` and the registers the model implements.
pub mod reg {
    use crate::sim::mlx5::ifc::{fld as f, Fld};
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
    /// `ptys_reg.an_disable_admin`: bit 0x1 (1).
    pub const PTYS_AN_DISABLE_ADMIN: Fld = f(0x1, 1);
    /// `ptys_reg.an_disable_cap`: bit 0x2 (1).
    pub const PTYS_AN_DISABLE_CAP: Fld = f(0x2, 1);
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
    /// `ptys_reg.an_status`: bit 0x20 (4).
    pub const PTYS_AN_STATUS: Fld = f(0x20, 4);
    /// `ptys_reg.eth_proto_lp_advertise`: bit 0x180 (32).
    pub const PTYS_LP_ADVERTISE: Fld = f(0x180, 0x20);
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
