// SPDX-License-Identifier: GPL-2.0

//! Flow steering commands of the receive side (fs_cmd.c: `mlx5_cmd_create_flow_table`,
//! `mlx5_cmd_create_flow_group`, `mlx5_cmd_create_fte`, `mlx5_cmd_delete_fte`,
//! `mlx5_cmd_update_root_ft`, the destroys) and the traffic-type table rsnic builds with them
//! (lib/fs_ttc.c): one NIC RX table whose entries send each traffic type (TCP, UDP, other IP,
//! over IPv4 and IPv6, and anything else) to the indirect TIR that hashes it; and the L2
//! table in front of it (en_fs.c's): entries by destination MAC on to the traffic-type
//! table, with its all-multicast and promiscuous catch-alls ([`L2Rules`]). Layouts from
//! mlx5_ifc.h (`create_flow_table_in`, `create_flow_group_in`, `set_fte_in` with its
//! `flow_context`, `fte_match_set_lyr_2_4`, `dest_format_struct`, `set_flow_table_root_in`).

use super::{build, built, fits, hdr, obj_out, op, put_mac, set_fields, start, Field, FormatError};

/// `MLX5_FLOW_TABLE_TYPE_NIC_RX`.
pub const TABLE_TYPE_NIC_RX: u8 = 0;
/// Length of create_flow_table_in, destroy_flow_table_in, destroy_flow_group_in,
/// delete_fte_in and set_flow_table_root_in.
pub const FT_CMD_LEN: usize = 0x40;
/// Length of create_flow_group_in.
pub const CREATE_FG_IN_LEN: usize = 0x400;
/// Length of set_fte_in with one destination (`dest_format_struct`, 8 bytes).
pub const SET_FTE_IN_LEN: usize = 0x348;

/// `*_in.table_type`: bit 0x80, 8 bits.
pub const TABLE_TYPE: Field = Field::new(0x80, 8);
/// `*_in.table_id` (destroy_flow_table, create/destroy_flow_group, set_fte, delete_fte,
/// set_flow_table_root): bit 0xa8, 24 bits.
pub const TABLE_ID: Field = Field::new(0xa8, 24);
/// `create_flow_table_in.flow_table_context.level`: bit 0xc8 (context at 0xc0, level at
/// its 0x8), 8 bits.
pub const FT_LEVEL: Field = Field::new(0xc8, 8);
/// `create_flow_table_in.flow_table_context.log_size`: bit 0xd8, 8 bits.
pub const FT_LOG_SIZE: Field = Field::new(0xd8, 8);
/// `create_flow_group_in.start_flow_index`: bit 0xe0, 32 bits.
pub const FG_START: Field = Field::new(0xe0, 32);
/// `create_flow_group_in.end_flow_index`: bit 0x120, 32 bits.
pub const FG_END: Field = Field::new(0x120, 32);
/// `create_flow_group_in.match_criteria_enable`: bit 0x1f8, 8 bits (bit 0: outer headers).
pub const FG_CRITERIA_ENABLE: Field = Field::new(0x1f8, 8);
/// `MLX5_CREATE_FLOW_GROUP_IN_MATCH_CRITERIA_ENABLE_OUTER_HEADERS` as a bit.
pub const CRITERIA_OUTER_HEADERS: u8 = 1 << 0;
/// `create_flow_group_in.match_criteria` (`fte_match_param`): bit 0x200.
pub const FG_CRITERIA: usize = 0x200;
/// `destroy_flow_group_in.group_id`: bit 0xc0, 32 bits.
pub const DESTROY_FG_GROUP_ID: Field = Field::new(0xc0, 32);
/// `set_fte_in.flow_index` / `delete_fte_in.flow_index`: bit 0x100, 32 bits.
pub const FTE_FLOW_INDEX: Field = Field::new(0x100, 32);
/// `set_fte_in.flow_context`: bit 0x200.
pub const FLOW_CONTEXT: usize = 0x200;
/// `flow_context.group_id`: bit 0x20, 32 bits.
pub const FC_GROUP_ID: Field = Field::new(0x20, 32).at(FLOW_CONTEXT);
/// `flow_context.action`: bit 0x70, 16 bits.
pub const FC_ACTION: Field = Field::new(0x70, 16).at(FLOW_CONTEXT);
/// `MLX5_FLOW_CONTEXT_ACTION_FWD_DEST`.
pub const ACTION_FWD_DEST: u16 = 0x4;
/// `flow_context.destination_list_size`: bit 0x88, 24 bits.
pub const FC_DEST_LIST_SIZE: Field = Field::new(0x88, 24).at(FLOW_CONTEXT);
/// `flow_context.match_value` (`fte_match_param`): bit 0x200 of the context.
pub const FC_MATCH_VALUE: usize = FLOW_CONTEXT + 0x200;
/// `flow_context.destination[0]`: bit 0x1800 of the context.
pub const FC_DEST: usize = FLOW_CONTEXT + 0x1800;
/// `dest_format_struct.destination_type`: bit 0x0, 8 bits.
pub const DEST_TYPE: Field = Field::new(0x0, 8).at(FC_DEST);
/// `dest_format_struct.destination_id`: bit 0x8, 24 bits.
pub const DEST_ID: Field = Field::new(0x8, 24).at(FC_DEST);
/// `MLX5_IFC_FLOW_DESTINATION_TYPE_TIR`.
pub const DEST_TYPE_TIR: u8 = 0x2;
/// `fte_match_set_lyr_2_4.ethertype` (outer headers, first in `fte_match_param`): bit 0x30,
/// 16 bits.
pub const MATCH_ETHERTYPE: Field = Field::new(0x30, 16);
/// `fte_match_set_lyr_2_4.ip_protocol`: bit 0x80, 8 bits.
pub const MATCH_IP_PROTOCOL: Field = Field::new(0x80, 8);
/// `create_flow_group_out.group_id`: bit 0x48, 24 bits.
pub const FG_OUT_GROUP_ID: Field = Field::new(0x48, 24);
/// `ETH_P_IP`.
pub const ETH_P_IP: u16 = 0x0800;
/// `ETH_P_IPV6`.
pub const ETH_P_IPV6: u16 = 0x86dd;
/// `IPPROTO_TCP`.
pub const IPPROTO_TCP: u8 = 6;
/// `IPPROTO_UDP`.
pub const IPPROTO_UDP: u8 = 17;

/// CREATE_FLOW_TABLE: a NIC RX table of `2^log_size` flow indices at `level` (misses go to
/// the default miss action).
pub fn create_flow_table(buf: &mut [u8], log_size: u8, level: u8) -> Result<usize, FormatError> {
    let f = [
        (TABLE_TYPE, u64::from(TABLE_TYPE_NIC_RX)),
        (FT_LEVEL, u64::from(level)),
        (FT_LOG_SIZE, u64::from(log_size)),
    ];
    build(buf, FT_CMD_LEN, op::CREATE_FLOW_TABLE, 0, &f)
}

/// `flow_table_context.table_miss_action`: bit 0xc4, 4 bits.
pub const FT_MISS_ACTION: Field = Field::new(0xc4, 4);
/// `MLX5_FLOW_TABLE_MISS_ACTION_FWD`.
pub const MISS_ACTION_FWD: u8 = 1;
/// `flow_table_context.table_miss_id`: bit 0xe8, 24 bits.
pub const FT_MISS_ID: Field = Field::new(0xe8, 24);

/// CREATE_FLOW_TABLE as [`create_flow_table`], whose misses go on to table `miss_table`
/// (which must sit at a higher level), as fs_core chains a priority's tables to the next.
pub fn create_flow_table_miss(
    buf: &mut [u8],
    log_size: u8,
    level: u8,
    miss_table: u32,
) -> Result<usize, FormatError> {
    fits(u64::from(miss_table), 24)?;
    let n = create_flow_table(buf, log_size, level)?;
    set_fields(
        built(buf, n)?,
        &[
            (FT_MISS_ACTION, u64::from(MISS_ACTION_FWD)),
            (FT_MISS_ID, u64::from(miss_table)),
        ],
    );
    Ok(n)
}

/// `create_flow_table_out.table_id` (bit 0x48, 24 bits).
pub fn parse_create_flow_table(out: &[u8]) -> Result<u32, FormatError> {
    obj_out(out)
}

/// A command of `len` bytes and `opcode` naming NIC RX table `table_id`, with `fields`.
fn table_cmd<'a>(
    buf: &'a mut [u8],
    len: usize,
    (opcode, op_mod): (u16, u16),
    table_id: u32,
    fields: &[(Field, u64)],
) -> Result<&'a mut [u8], FormatError> {
    fits(u64::from(table_id), 24)?;
    let table = [
        (TABLE_TYPE, u64::from(TABLE_TYPE_NIC_RX)),
        (TABLE_ID, u64::from(table_id)),
    ];
    let b = start(buf, len, opcode, op_mod, &table)?;
    set_fields(b, fields);
    Ok(b)
}

/// DESTROY_FLOW_TABLE `table_id`.
pub fn destroy_flow_table(buf: &mut [u8], table_id: u32) -> Result<usize, FormatError> {
    let op = (op::DESTROY_FLOW_TABLE, 0);
    Ok(table_cmd(buf, FT_CMD_LEN, op, table_id, &[])?.len())
}

/// SET_FLOW_TABLE_ROOT: `table_id` becomes the NIC RX root (op_mod 0).
pub fn set_flow_table_root(buf: &mut [u8], table_id: u32) -> Result<usize, FormatError> {
    let op = (op::SET_FLOW_TABLE_ROOT, 0);
    Ok(table_cmd(buf, FT_CMD_LEN, op, table_id, &[])?.len())
}

/// SET_FLOW_TABLE_ROOT with op_mod 1: the NIC RX root is disconnected (table_id 0, as
/// `mlx5_cmd_update_root_ft` with `disconnect`).
pub fn disconnect_flow_table_root(buf: &mut [u8]) -> Result<usize, FormatError> {
    let op = (op::SET_FLOW_TABLE_ROOT, 1);
    Ok(table_cmd(buf, FT_CMD_LEN, op, 0, &[])?.len())
}

/// What a flow group's entries match: the whole outer ethertype and/or ip_protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Criteria {
    /// Match `outer_headers.ethertype`.
    pub ethertype: bool,
    /// Match `outer_headers.ip_protocol`.
    pub ip_protocol: bool,
}

/// CREATE_FLOW_GROUP of flow indices `start..=end` of table `table_id` with `criteria`
/// (`match_criteria_enable` = outer headers when any).
pub fn create_flow_group(
    buf: &mut [u8],
    table_id: u32,
    start_index: u32,
    end_index: u32,
    criteria: Criteria,
) -> Result<usize, FormatError> {
    if start_index > end_index {
        return Err(FormatError::BadParam);
    }
    let f = [
        (FG_START, u64::from(start_index)),
        (FG_END, u64::from(end_index)),
    ];
    let op = (op::CREATE_FLOW_GROUP, 0);
    let b = table_cmd(buf, CREATE_FG_IN_LEN, op, table_id, &f)?;
    if criteria.ethertype || criteria.ip_protocol {
        FG_CRITERIA_ENABLE.set(b, u64::from(CRITERIA_OUTER_HEADERS));
    }
    if criteria.ethertype {
        MATCH_ETHERTYPE.at(FG_CRITERIA).set(b, 0xffff);
    }
    if criteria.ip_protocol {
        MATCH_IP_PROTOCOL.at(FG_CRITERIA).set(b, 0xff);
    }
    Ok(CREATE_FG_IN_LEN)
}

/// `create_flow_group_out.group_id` (bit 0x48, 24 bits).
pub fn parse_create_flow_group(out: &[u8]) -> Result<u32, FormatError> {
    Ok(FG_OUT_GROUP_ID.get32(super::output(out, hdr::LEN)?))
}

/// DESTROY_FLOW_GROUP `group_id` of table `table_id`.
pub fn destroy_flow_group(
    buf: &mut [u8],
    table_id: u32,
    group_id: u32,
) -> Result<usize, FormatError> {
    let f = [(DESTROY_FG_GROUP_ID, u64::from(group_id))];
    let op = (op::DESTROY_FLOW_GROUP, 0);
    Ok(table_cmd(buf, FT_CMD_LEN, op, table_id, &f)?.len())
}

/// The values an entry matches (under its group's criteria).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MatchValue {
    /// Outer ethertype.
    pub ethertype: u16,
    /// Outer IP protocol.
    pub ip_protocol: u8,
}

/// SET_FLOW_TABLE_ENTRY (op_mod 0: a new entry) at `flow_index` of group `group_id` of
/// table `table_id`: frames matching `m` go to TIR `tirn` (action FWD_DEST, one destination
/// of type TIR).
pub fn set_fte_fwd_tir(
    buf: &mut [u8],
    table_id: u32,
    group_id: u32,
    flow_index: u32,
    m: &MatchValue,
    tirn: u32,
) -> Result<usize, FormatError> {
    fits(u64::from(tirn), 24)?;
    let f = [
        (FTE_FLOW_INDEX, u64::from(flow_index)),
        (FC_GROUP_ID, u64::from(group_id)),
        (FC_ACTION, u64::from(ACTION_FWD_DEST)),
        (FC_DEST_LIST_SIZE, 1),
        (MATCH_ETHERTYPE.at(FC_MATCH_VALUE), u64::from(m.ethertype)),
        (
            MATCH_IP_PROTOCOL.at(FC_MATCH_VALUE),
            u64::from(m.ip_protocol),
        ),
        (DEST_TYPE, u64::from(DEST_TYPE_TIR)),
        (DEST_ID, u64::from(tirn)),
    ];
    let op = (op::SET_FLOW_TABLE_ENTRY, 0);
    Ok(table_cmd(buf, SET_FTE_IN_LEN, op, table_id, &f)?.len())
}

/// [`set_fte_fwd_tir`] with no ethertype or protocol to match, for the caller to add its
/// match and destination to: the command as a slice of `buf`.
fn set_fte_fwd_unmatched(
    buf: &mut [u8],
    table_id: u32,
    group_id: u32,
    flow_index: u32,
    dest: u32,
) -> Result<&mut [u8], FormatError> {
    let m = MatchValue::default();
    let n = set_fte_fwd_tir(buf, table_id, group_id, flow_index, &m, dest)?;
    built(buf, n)
}

/// DELETE_FLOW_TABLE_ENTRY at `flow_index` of table `table_id`.
pub fn delete_fte(buf: &mut [u8], table_id: u32, flow_index: u32) -> Result<usize, FormatError> {
    let f = [(FTE_FLOW_INDEX, u64::from(flow_index))];
    let op = (op::DELETE_FLOW_TABLE_ENTRY, 0);
    Ok(table_cmd(buf, FT_CMD_LEN, op, table_id, &f)?.len())
}

/// The traffic types of rsnic's traffic-type table: mlx5e's `enum mlx5_traffic_types`
/// without IPsec and tunnels. Each of the six hashed types has an indirect TIR of its own
/// (its field selector: [`Tt::l3_prot_type`], [`Tt::l4_prot_type`], the fields ethtool
/// sets); [`Tt::Any`] (not IP) goes to the IPv4 one, where it hashes nothing (the table's
/// first entry), as mlx5e sends it to the first channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tt {
    /// TCP over IPv4 (`MLX5_TT_IPV4_TCP`).
    Tcp4,
    /// TCP over IPv6.
    Tcp6,
    /// UDP over IPv4.
    Udp4,
    /// UDP over IPv6.
    Udp6,
    /// Other IPv4 (`MLX5_TT_IPV4`).
    Ip4,
    /// Other IPv6.
    Ip6,
    /// Anything else (`MLX5_TT_ANY`).
    Any,
}

/// The flow groups of the traffic-type table, by flow index: (start, end, criteria). As
/// fs_ttc.c's: L4 types (ethertype and protocol), L3 types (ethertype), the rest (nothing).
pub const TTC_GROUPS: [(u32, u32, Criteria); 3] = [
    (
        0,
        3,
        Criteria {
            ethertype: true,
            ip_protocol: true,
        },
    ),
    (
        4,
        5,
        Criteria {
            ethertype: true,
            ip_protocol: false,
        },
    ),
    (
        6,
        6,
        Criteria {
            ethertype: false,
            ip_protocol: false,
        },
    ),
];
/// log2 of the traffic-type table's flow indices.
pub const TTC_LOG_SIZE: u8 = 3;

impl Tt {
    /// Every traffic type, by flow index.
    pub const ALL: [Tt; 7] = [
        Tt::Tcp4,
        Tt::Tcp6,
        Tt::Udp4,
        Tt::Udp6,
        Tt::Ip4,
        Tt::Ip6,
        Tt::Any,
    ];
    /// The types with a TIR of their own (the first six; their index in it is
    /// [`Tt::tir_index`]).
    pub const HASHED: [Tt; 6] = [Tt::Tcp4, Tt::Tcp6, Tt::Udp4, Tt::Udp6, Tt::Ip4, Tt::Ip6];

    /// The entry's flow index in the traffic-type table.
    pub const fn flow_index(self) -> u32 {
        self as u32
    }

    /// The index in [`TTC_GROUPS`] of the entry's group.
    pub const fn group(self) -> usize {
        match self {
            Tt::Tcp4 | Tt::Tcp6 | Tt::Udp4 | Tt::Udp6 => 0,
            Tt::Ip4 | Tt::Ip6 => 1,
            Tt::Any => 2,
        }
    }

    /// The index in [`Tt::HASHED`] of the TIR the type's frames go to.
    pub const fn tir_index(self) -> usize {
        match self {
            Tt::Any => Tt::Ip4 as usize,
            t => t as usize,
        }
    }

    /// What the entry matches.
    pub const fn match_value(self) -> MatchValue {
        let (ethertype, ip_protocol) = match self {
            Tt::Tcp4 => (ETH_P_IP, IPPROTO_TCP),
            Tt::Tcp6 => (ETH_P_IPV6, IPPROTO_TCP),
            Tt::Udp4 => (ETH_P_IP, IPPROTO_UDP),
            Tt::Udp6 => (ETH_P_IPV6, IPPROTO_UDP),
            Tt::Ip4 => (ETH_P_IP, 0),
            Tt::Ip6 => (ETH_P_IPV6, 0),
            Tt::Any => (0, 0),
        };
        MatchValue {
            ethertype,
            ip_protocol,
        }
    }

    /// `l3_prot_type` of the type's TIR (`MLX5_L3_PROT_TYPE_*`).
    pub const fn l3_prot_type(self) -> u8 {
        match self {
            Tt::Tcp6 | Tt::Udp6 | Tt::Ip6 => super::res::L3_PROT_IPV6,
            _ => super::res::L3_PROT_IPV4,
        }
    }

    /// `l4_prot_type` of the type's TIR (`MLX5_L4_PROT_TYPE_*`; 0 = TCP for the IP types,
    /// which select no port).
    pub const fn l4_prot_type(self) -> u8 {
        match self {
            Tt::Udp4 | Tt::Udp6 => super::res::L4_PROT_UDP,
            _ => super::res::L4_PROT_TCP,
        }
    }

    /// The fields mlx5e hashes by default (`rss_default_config`): addresses and ports for TCP
    /// and UDP, addresses for the rest.
    pub const fn default_fields(self) -> u32 {
        use super::res::{HASH_SEL_DST_IP, HASH_SEL_L4_DPORT, HASH_SEL_L4_SPORT, HASH_SEL_SRC_IP};
        match self {
            Tt::Tcp4 | Tt::Tcp6 | Tt::Udp4 | Tt::Udp6 => {
                HASH_SEL_SRC_IP | HASH_SEL_DST_IP | HASH_SEL_L4_SPORT | HASH_SEL_L4_DPORT
            }
            _ => HASH_SEL_SRC_IP | HASH_SEL_DST_IP,
        }
    }
}

/// `fte_match_set_lyr_2_4.tcp_sport`: bit 0xa0, 16 bits (`tcp_dport` at 0xb0).
pub const MATCH_TCP_SPORT: Field = Field::new(0xa0, 16);
/// `fte_match_set_lyr_2_4.tcp_dport`.
pub const MATCH_TCP_DPORT: Field = Field::new(0xb0, 16);
/// `fte_match_set_lyr_2_4.udp_sport`: bit 0xe0, 16 bits.
pub const MATCH_UDP_SPORT: Field = Field::new(0xe0, 16);
/// `fte_match_set_lyr_2_4.udp_dport`.
pub const MATCH_UDP_DPORT: Field = Field::new(0xf0, 16);
/// Byte of `fte_match_set_lyr_2_4.src_ipv4_src_ipv6` (16 bytes; IPv4 in the last 4).
pub const MATCH_SRC_IP_BYTE: usize = 0x20;
/// Byte of `fte_match_set_lyr_2_4.dst_ipv4_dst_ipv6`.
pub const MATCH_DST_IP_BYTE: usize = 0x30;

/// What an ntuple rule matches (mlx5e's `set_ip4`/`set_ip6`/`set_tcp`/`set_udp` in
/// en_fs_ethtool.c, full masks only): TCP or UDP over IPv4 or IPv6, and whichever of the
/// addresses and ports are given, each whole. The group of such entries masks exactly the
/// fields given ([`create_flow_group_tuple`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TupleMatch {
    /// IPv6 (else IPv4).
    pub ipv6: bool,
    /// UDP (else TCP).
    pub udp: bool,
    /// The source address (IPv4: the first 4 bytes used).
    pub src: Option<[u8; 16]>,
    /// The destination address.
    pub dst: Option<[u8; 16]>,
    /// The source port.
    pub sport: Option<u16>,
    /// The destination port.
    pub dport: Option<u16>,
}

impl TupleMatch {
    /// Writes the match parameter at byte `at` of `b`: the values (`mask` false) or the
    /// criteria (`mask` true).
    fn write(&self, b: &mut [u8], at: usize, mask: bool) {
        let eth = if self.ipv6 { ETH_P_IPV6 } else { ETH_P_IP };
        let proto = if self.udp { IPPROTO_UDP } else { IPPROTO_TCP };
        MATCH_ETHERTYPE
            .at(at * 8)
            .set(b, if mask { 0xffff } else { u64::from(eth) });
        MATCH_IP_PROTOCOL
            .at(at * 8)
            .set(b, if mask { 0xff } else { u64::from(proto) });
        let (sp, dp) = if self.udp {
            (MATCH_UDP_SPORT, MATCH_UDP_DPORT)
        } else {
            (MATCH_TCP_SPORT, MATCH_TCP_DPORT)
        };
        for (f, v) in [(sp, self.sport), (dp, self.dport)] {
            if let Some(v) = v {
                f.at(at * 8)
                    .set(b, if mask { 0xffff } else { u64::from(v) });
            }
        }
        for (byte, a) in [(MATCH_SRC_IP_BYTE, self.src), (MATCH_DST_IP_BYTE, self.dst)] {
            let Some(a) = a else {
                continue;
            };
            // IPv4 sits in the last 4 bytes of the 16.
            let (off, len) = if self.ipv6 { (0, 16) } else { (12, 4) };
            let start = at + byte + off;
            if let Some(d) = b.get_mut(start..start + len) {
                if mask {
                    d.fill(0xff);
                } else if let Some(src) = a.get(..len) {
                    d.copy_from_slice(src);
                }
            }
        }
    }
}

/// CREATE_FLOW_GROUP of flow indices `start..=end` of table `table_id` whose entries match
/// what `m` gives (its ethertype, protocol and the fields it has).
pub fn create_flow_group_tuple(
    buf: &mut [u8],
    table_id: u32,
    start_index: u32,
    end_index: u32,
    m: &TupleMatch,
) -> Result<usize, FormatError> {
    let n = create_flow_group(
        buf,
        table_id,
        start_index,
        end_index,
        Criteria {
            ethertype: true,
            ip_protocol: true,
        },
    )?;
    m.write(built(buf, n)?, FG_CRITERIA / 8, true);
    Ok(n)
}

/// SET_FLOW_TABLE_ENTRY (a new entry) at `flow_index` of group `group_id` of table
/// `table_id`: frames matching `m` go to TIR `tirn`.
pub fn set_fte_tuple(
    buf: &mut [u8],
    table_id: u32,
    group_id: u32,
    flow_index: u32,
    m: &TupleMatch,
    tirn: u32,
) -> Result<usize, FormatError> {
    let b = set_fte_fwd_unmatched(buf, table_id, group_id, flow_index, tirn)?;
    m.write(b, FC_MATCH_VALUE / 8, false);
    Ok(b.len())
}

// ---------------------------------------------------------------------------------------
// The L2 table (en_fs.c `mlx5e_create_l2_table`, `mlx5e_add_l2_flow_rule`)

/// Byte of `fte_match_set_lyr_2_4.dmac_47_16` (bit 0x40); `dmac_15_0` follows it, so the six
/// bytes of the destination MAC are contiguous.
pub const MATCH_DMAC_BYTE: usize = 0x08;
/// `MLX5_IFC_FLOW_DESTINATION_TYPE_FLOW_TABLE`.
pub const DEST_TYPE_FLOW_TABLE: u8 = 0x1;
/// log2 of the L2 table's flow indices.
pub const L2_LOG_SIZE: u8 = 5;
/// Full-match entries of the L2 table: the device's address, broadcast and the stack's
/// addresses (mlx5e's group holds 2^15; rsnic's fewer, so that with the 32 ntuple rules and
/// the traffic-type table the entries stay within what a device of 64 per function holds).
pub const L2_FULL: usize = 20;
/// The L2 table's all-multicast entry (mlx5e's `MLX5E_ALLMULTI`: the multicast bit).
pub const L2_ALLMULTI_INDEX: u32 = L2_FULL as u32;
/// The L2 table's promiscuous entry (no criteria; mlx5e puts it in a table of its own ahead
/// of the VLAN table, with the same effect: every frame on to the traffic-type table).
pub const L2_PROMISC_INDEX: u32 = L2_FULL as u32 + 1;
/// The L2 table's flow groups: (start, end, destination-MAC mask): full match, the
/// multicast bit, nothing.
pub const L2_GROUPS: [(u32, u32, [u8; 6]); 3] = [
    (0, L2_FULL as u32 - 1, [0xff; 6]),
    (L2_ALLMULTI_INDEX, L2_ALLMULTI_INDEX, [0x01, 0, 0, 0, 0, 0]),
    (L2_PROMISC_INDEX, L2_PROMISC_INDEX, [0; 6]),
];
const _: () = assert!(L2_PROMISC_INDEX < 1 << L2_LOG_SIZE);

/// CREATE_FLOW_GROUP of flow indices `start..=end` of table `table_id` whose entries match
/// the destination MAC under `mask` (no criteria for an all-zero mask).
pub fn create_flow_group_dmac(
    buf: &mut [u8],
    table_id: u32,
    start_index: u32,
    end_index: u32,
    mask: &[u8; 6],
) -> Result<usize, FormatError> {
    let n = create_flow_group(buf, table_id, start_index, end_index, Criteria::default())?;
    if mask.iter().any(|&b| b != 0) {
        let b = built(buf, n)?;
        FG_CRITERIA_ENABLE.set(b, u64::from(CRITERIA_OUTER_HEADERS));
        let at = FG_CRITERIA / 8 + MATCH_DMAC_BYTE;
        put_mac(b, at, mask)?;
    }
    Ok(n)
}

/// SET_FLOW_TABLE_ENTRY (a new entry) at `flow_index` of group `group_id` of table
/// `table_id`: frames whose destination MAC is `dmac` (under the group's mask) go on to flow
/// table `dest_table` (FWD_DEST, one destination of type FLOW_TABLE).
pub fn set_fte_dmac_fwd_table(
    buf: &mut [u8],
    table_id: u32,
    group_id: u32,
    flow_index: u32,
    dmac: &[u8; 6],
    dest_table: u32,
) -> Result<usize, FormatError> {
    let b = set_fte_fwd_unmatched(buf, table_id, group_id, flow_index, dest_table)?;
    DEST_TYPE.set(b, u64::from(DEST_TYPE_FLOW_TABLE));
    let at = FC_MATCH_VALUE / 8 + MATCH_DMAC_BYTE;
    put_mac(b, at, dmac)?;
    Ok(b.len())
}

/// What the L2 table lets through, as mlx5e's rx-mode work programs it
/// (`mlx5e_fs_set_rx_mode_work`): a full-match entry for the device's own address, for
/// broadcast (while the device receives it) and for each of the stack's unicast and
/// multicast addresses; the all-multicast entry with IFF_ALLMULTI, the promiscuous one with
/// IFF_PROMISC. Addresses beyond the table's [`L2_FULL`] entries (or that the caller could
/// not list, `uc_more` / `mc_more`) turn on the catch-all of their kind (promiscuous for
/// unicast, all-multicast for multicast), so the table lets through more than asked,
/// never less.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct L2Rules {
    full: [[u8; 6]; L2_FULL],
    len: usize,
    /// The all-multicast entry.
    pub allmulti: bool,
    /// The promiscuous entry.
    pub promisc: bool,
}

/// The stack's receive filter, as `ndo_set_rx_mode` sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxFilter<'a> {
    /// The device's address (`dev_addr`).
    pub own: [u8; 6],
    /// IFF_BROADCAST.
    pub broadcast: bool,
    /// IFF_PROMISC.
    pub promisc: bool,
    /// IFF_ALLMULTI.
    pub allmulti: bool,
    /// Unicast addresses (`dev->uc`).
    pub uc: &'a [[u8; 6]],
    /// The stack had unicast addresses beyond `uc`.
    pub uc_more: bool,
    /// Multicast addresses (`dev->mc`).
    pub mc: &'a [[u8; 6]],
    /// The stack had multicast addresses beyond `mc`.
    pub mc_more: bool,
}

impl L2Rules {
    /// The entries for filter `f`.
    pub fn new(f: &RxFilter<'_>) -> Self {
        let mut r = Self {
            full: [[0; 6]; L2_FULL],
            len: 0,
            allmulti: f.allmulti || f.mc_more,
            promisc: f.promisc || f.uc_more,
        };
        let bcast = [[0xff; 6]];
        let first = [f.own];
        let all = first
            .iter()
            .chain(bcast.iter().filter(|_| f.broadcast))
            .chain(f.uc.iter())
            .chain(f.mc.iter());
        for a in all {
            if r.addrs().contains(a) {
                continue;
            }
            match r.full.get_mut(r.len) {
                Some(slot) => {
                    *slot = *a;
                    r.len += 1;
                }
                None if a[0] & 1 != 0 => r.allmulti = true,
                None => r.promisc = true,
            }
        }
        r
    }

    /// The full-match entries' addresses.
    pub fn addrs(&self) -> &[[u8; 6]] {
        self.full.get(..self.len).unwrap_or_default()
    }
}

// ---------------------------------------------------------------------------------------
// The VLAN table (en_fs.c `mlx5e_create_vlan_table`, `__mlx5e_add_vlan_rule`)

/// `fte_match_set_lyr_2_4.first_vid`: bit 0x74, 12 bits.
pub const MATCH_FIRST_VID: Field = Field::new(0x74, 12);
/// `fte_match_set_lyr_2_4.cvlan_tag`: bit 0x90, 1 bit (the first tag is 802.1Q; with the
/// mask set and the value 0, the frame carries no tag at all, as mlx5e's untagged rule).
pub const MATCH_CVLAN_TAG: Field = Field::new(0x90, 1);
/// `fte_match_set_lyr_2_4.svlan_tag`: bit 0x91, 1 bit (the first tag is 802.1ad).
pub const MATCH_SVLAN_TAG: Field = Field::new(0x91, 1);
/// log2 of the VLAN table's flow indices.
pub const VLAN_LOG_SIZE: u8 = 5;
/// C-VIDs the VLAN table holds entries for (mlx5e's group holds all 4096; rsnic's fewer,
/// for the flow entries a device has, `log_max_flow`: 64 on the model).
pub const VLAN_VIDS: usize = 28;
/// The untagged entry's flow index.
pub const VLAN_UNTAGGED_INDEX: u32 = VLAN_VIDS as u32;
/// The any-C-VID entry's flow index (filtering off, or promiscuous).
pub const VLAN_ANY_CTAG_INDEX: u32 = VLAN_VIDS as u32 + 1;
/// The any-S-VID entry's flow index.
pub const VLAN_ANY_STAG_INDEX: u32 = VLAN_VIDS as u32 + 2;
/// The largest table rsnic creates, log2 of its flow indices (what `log_max_ft_size` must
/// allow).
pub const MAX_LOG_SIZE: u8 = 5;
/// The flow tables rsnic creates per port (the ntuple rules', VLAN, L2, traffic type).
pub const TABLES: u32 = 4;
const _: () = assert!(VLAN_ANY_STAG_INDEX < 1 << VLAN_LOG_SIZE);
const _: () = assert!(VLAN_LOG_SIZE <= MAX_LOG_SIZE && L2_LOG_SIZE <= MAX_LOG_SIZE);
const _: () = assert!(TTC_LOG_SIZE <= MAX_LOG_SIZE);

/// What a VLAN table group's entries match (`__mlx5e_create_vlan_table_groups`'s criteria).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VlanMatch {
    /// `cvlan_tag` and `first_vid`: a C-tag of one VID.
    CtagVid,
    /// `cvlan_tag` alone: untagged (value 0) or any C-tag (value 1).
    Ctag,
    /// `svlan_tag` alone: any S-tag.
    Stag,
}

/// The VLAN table's groups, by flow index: (start, end, criteria). mlx5e's groups 0, 2 and
/// 3 (C-tag and VID, C-tag, S-tag; its S-VID group and trap group are not made: rsnic has
/// no S-VID filter and no traps).
pub const VLAN_GROUPS: [(u32, u32, VlanMatch); 3] = [
    (0, VLAN_VIDS as u32 - 1, VlanMatch::CtagVid),
    (VLAN_UNTAGGED_INDEX, VLAN_ANY_CTAG_INDEX, VlanMatch::Ctag),
    (VLAN_ANY_STAG_INDEX, VLAN_ANY_STAG_INDEX, VlanMatch::Stag),
];

/// Writes the VLAN fields of `m` at the match parameter at byte `at` of `b`: the criteria
/// (all ones) when `vid` is `None`, else the values (the tag bit set, except for
/// untagged, and the VID).
fn vlan_fields(b: &mut [u8], at: usize, m: VlanMatch, value: Option<(bool, u16)>) {
    let bit = at * 8;
    let tag = match m {
        VlanMatch::CtagVid | VlanMatch::Ctag => MATCH_CVLAN_TAG,
        VlanMatch::Stag => MATCH_SVLAN_TAG,
    };
    match value {
        None => {
            tag.at(bit).set(b, 1);
            if m == VlanMatch::CtagVid {
                MATCH_FIRST_VID.at(bit).set(b, 0xfff);
            }
        }
        Some((tagged, vid)) => {
            tag.at(bit).set(b, u64::from(tagged));
            if m == VlanMatch::CtagVid {
                MATCH_FIRST_VID.at(bit).set(b, u64::from(vid));
            }
        }
    }
}

/// CREATE_FLOW_GROUP of flow indices `start..=end` of table `table_id` whose entries match
/// `m`'s VLAN fields (outer headers).
pub fn create_flow_group_vlan(
    buf: &mut [u8],
    table_id: u32,
    start_index: u32,
    end_index: u32,
    m: VlanMatch,
) -> Result<usize, FormatError> {
    let n = create_flow_group(buf, table_id, start_index, end_index, Criteria::default())?;
    let b = built(buf, n)?;
    FG_CRITERIA_ENABLE.set(b, u64::from(CRITERIA_OUTER_HEADERS));
    vlan_fields(b, FG_CRITERIA / 8, m, None);
    Ok(n)
}

/// A VLAN table entry (`mlx5e_vlan_rule_type` without the S-VID one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VlanRule {
    /// No tag (`MLX5E_VLAN_RULE_TYPE_UNTAGGED`).
    Untagged,
    /// Any C-tag (`MLX5E_VLAN_RULE_TYPE_ANY_CTAG_VID`).
    AnyCtag,
    /// Any S-tag (`MLX5E_VLAN_RULE_TYPE_ANY_STAG_VID`).
    AnyStag,
    /// A C-tag of this VID at this slot of the VID group
    /// (`MLX5E_VLAN_RULE_TYPE_MATCH_CTAG_VID`).
    Vid(u16, u32),
}

impl VlanRule {
    /// The entry's flow index.
    pub const fn index(self) -> u32 {
        match self {
            VlanRule::Untagged => VLAN_UNTAGGED_INDEX,
            VlanRule::AnyCtag => VLAN_ANY_CTAG_INDEX,
            VlanRule::AnyStag => VLAN_ANY_STAG_INDEX,
            VlanRule::Vid(_, slot) => slot,
        }
    }

    /// The index in [`VLAN_GROUPS`] of the entry's group.
    pub const fn group(self) -> usize {
        match self {
            VlanRule::Vid(..) => 0,
            VlanRule::Untagged | VlanRule::AnyCtag => 1,
            VlanRule::AnyStag => 2,
        }
    }
}

/// SET_FLOW_TABLE_ENTRY (a new entry) of VLAN rule `r` in group `group_id` of table
/// `table_id`: the frames it matches go on to flow table `dest_table` (the L2 table).
pub fn set_fte_vlan(
    buf: &mut [u8],
    table_id: u32,
    group_id: u32,
    r: VlanRule,
    dest_table: u32,
) -> Result<usize, FormatError> {
    let (m, value) = match r {
        VlanRule::Untagged => (VlanMatch::Ctag, (false, 0)),
        VlanRule::AnyCtag => (VlanMatch::Ctag, (true, 0)),
        VlanRule::AnyStag => (VlanMatch::Stag, (true, 0)),
        VlanRule::Vid(vid, slot) => {
            if usize::try_from(slot).map_or(true, |s| s >= VLAN_VIDS) {
                return Err(FormatError::BadParam);
            }
            fits(u64::from(vid), 12)?;
            (VlanMatch::CtagVid, (true, vid))
        }
    };
    let b = set_fte_fwd_unmatched(buf, table_id, group_id, r.index(), dest_table)?;
    DEST_TYPE.set(b, u64::from(DEST_TYPE_FLOW_TABLE));
    vlan_fields(b, FC_MATCH_VALUE / 8, m, Some(value));
    Ok(b.len())
}

/// Which VLAN table entries are wanted: untagged always; a C-VID entry per VID the stack
/// listed (`ndo_vlan_rx_add_vid`); any C-tag while filtering is off
/// (`NETIF_F_HW_VLAN_CTAG_FILTER` off, mlx5e's `cvlan_filter_disabled`) or the port is
/// promiscuous; any S-tag always (rsnic has no S-VID filter, so the stack never lists
/// S-VIDs).
pub fn want_any_ctag(filter: bool, promisc: bool) -> bool {
    !filter || promisc
}
