// SPDX-License-Identifier: GPL-2.0

//! ACCESS_REG and the port registers rsnic reads and writes through it: PAOS, PPLR, PFCC,
//! PPCNT and PDDR (upstream port.c `mlx5_access_reg`, `mlx5_set_port_admin_status`,
//! `mlx5_query_port_oper_status`, `mlx5_set_port_pause`, `mlx5_query_port_pause`; en_stats.c
//! `mlx5e_stats_get_ieee`; en_ethtool.c `query_port_status_opcode` and
//! `mlx5e_link_ext_state_opcode_map`). Re-exported by the parent module.

use crate::hwif::mlx5::cmd::{fits, op, output, start, Field, FormatError};

// ---------------------------------------------------------------------------------------
// ACCESS_REG

/// `access_register_in.register_id`: bit 0x50, 16 bits.
pub const ACCESS_REG_REGISTER_ID: Field = Field::new(0x50, 16);
/// `access_register_in.argument`: bit 0x60, 32 bits.
pub const ACCESS_REG_ARGUMENT: Field = Field::new(0x60, 32);
/// Byte offset of `register_data` in `access_register_in` and `_out`.
pub const ACCESS_REG_DATA: usize = 16;
/// ACCESS_REG op_mod: write (`!write` in `mlx5_access_reg`).
pub const ACCESS_REG_WRITE: u16 = 0;
/// ACCESS_REG op_mod: read.
pub const ACCESS_REG_READ: u16 = 1;

/// Register id of PAOS, port administrative and operational status (`MLX5_REG_PAOS`).
pub const REG_PAOS: u16 = 0x5006;
/// Register id of PFCC, port flow control (`MLX5_REG_PFCC`).
pub const REG_PFCC: u16 = 0x5007;
/// Register id of PPLR, port physical loopback (not named in 6.12's mlx5 driver.h; the
/// PRM id, as mlxsw's `MLXSW_REG_PPLR_ID`).
pub const REG_PPLR: u16 = 0x5018;

/// `paos_reg` length (0x80 bits).
pub const PAOS_LEN: usize = 16;
/// `pplr_reg` length (0x40 bits).
pub const PPLR_LEN: usize = 8;
/// `pfcc_reg` length (0x100 bits).
pub const PFCC_LEN: usize = 32;

/// `paos_reg.local_port` / `pplr_reg.local_port` / `pfcc_reg.local_port`: bit 0x08, 8 bits.
pub const REG_LOCAL_PORT: Field = Field::new(0x08, 8);
/// `paos_reg.admin_status`: bit 0x14, 4 bits.
pub const PAOS_ADMIN_STATUS: Field = Field::new(0x14, 4);
/// `paos_reg.oper_status`: bit 0x1c, 4 bits.
pub const PAOS_OPER_STATUS: Field = Field::new(0x1c, 4);
/// `paos_reg.ase` (admin state update enable): bit 0x20, 1 bit.
pub const PAOS_ASE: Field = Field::new(0x20, 1);
/// `pplr_reg.lb_cap`: bit 0x28, 8 bits.
pub const PPLR_LB_CAP: Field = Field::new(0x28, 8);
/// `pplr_reg.lb_en`: bit 0x38, 8 bits.
pub const PPLR_LB_EN: Field = Field::new(0x38, 8);
/// `pfcc_reg.pptx` (global pause TX): bit 0x40, 1 bit.
pub const PFCC_PPTX: Field = Field::new(0x40, 1);
/// `pfcc_reg.pprx` (global pause RX): bit 0x60, 1 bit.
pub const PFCC_PPRX: Field = Field::new(0x60, 1);

/// Port status up (`MLX5_PORT_UP`).
pub const PORT_UP: u8 = 1;
/// Port status down (`MLX5_PORT_DOWN`).
pub const PORT_DOWN: u8 = 2;
/// `lb_en` bit: PHY local (internal) loopback (mlxsw `MLXSW_REG_PPLR_LB_TYPE_BIT_PHY_LOCAL`).
pub const PPLR_LB_PHY_LOCAL: u8 = 1 << 1;

/// Input / output length of ACCESS_REG for a register of `reg_len` bytes.
pub const fn access_reg_len(reg_len: usize) -> usize {
    ACCESS_REG_DATA + reg_len
}

pub(super) fn access_reg(
    buf: &mut [u8],
    reg_id: u16,
    reg_len: usize,
    op_mod: u16,
) -> Result<&mut [u8], FormatError> {
    let f = [
        (ACCESS_REG_REGISTER_ID, u64::from(reg_id)),
        (ACCESS_REG_ARGUMENT, 0),
    ];
    let b = start(buf, access_reg_len(reg_len), op::ACCESS_REG, op_mod, &f)?;
    let data = &mut b[ACCESS_REG_DATA..];
    REG_LOCAL_PORT.set(data, 1);
    Ok(data)
}

/// PAOS write: administrative status `status` (`PORT_UP` / `PORT_DOWN`), `ase` set
/// (`mlx5_set_port_admin_status`).
pub fn paos_set_admin(buf: &mut [u8], status: u8) -> Result<usize, FormatError> {
    fits(u64::from(status), 4)?;
    let d = access_reg(buf, REG_PAOS, PAOS_LEN, ACCESS_REG_WRITE)?;
    PAOS_ADMIN_STATUS.set(d, u64::from(status));
    PAOS_ASE.set(d, 1);
    Ok(access_reg_len(PAOS_LEN))
}

/// PAOS read of local port 1.
pub fn paos_query(buf: &mut [u8]) -> Result<usize, FormatError> {
    access_reg(buf, REG_PAOS, PAOS_LEN, ACCESS_REG_READ)?;
    Ok(access_reg_len(PAOS_LEN))
}

/// The PAOS answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paos {
    /// `admin_status`.
    pub admin_status: u8,
    /// `oper_status`.
    pub oper_status: u8,
}

/// Parses a PAOS read (ACCESS_REG output).
pub fn parse_paos(out: &[u8]) -> Result<Paos, FormatError> {
    let o = output(out, access_reg_len(PAOS_LEN))?;
    let d = &o[ACCESS_REG_DATA..];
    Ok(Paos {
        admin_status: PAOS_ADMIN_STATUS.get8(d),
        oper_status: PAOS_OPER_STATUS.get8(d),
    })
}

/// PPLR write: internal (PHY local) loopback on or off.
pub fn pplr_set_loopback(buf: &mut [u8], on: bool) -> Result<usize, FormatError> {
    let d = access_reg(buf, REG_PPLR, PPLR_LEN, ACCESS_REG_WRITE)?;
    PPLR_LB_EN.set(d, if on { u64::from(PPLR_LB_PHY_LOCAL) } else { 0 });
    Ok(access_reg_len(PPLR_LEN))
}

/// PPLR read.
pub fn pplr_query(buf: &mut [u8]) -> Result<usize, FormatError> {
    access_reg(buf, REG_PPLR, PPLR_LEN, ACCESS_REG_READ)?;
    Ok(access_reg_len(PPLR_LEN))
}

/// Parses a PPLR read: `lb_en`.
pub fn parse_pplr(out: &[u8]) -> Result<u8, FormatError> {
    let o = output(out, access_reg_len(PPLR_LEN))?;
    Ok(PPLR_LB_EN.get8(&o[ACCESS_REG_DATA..]))
}

/// PFCC write: global pause (`mlx5_set_port_pause`).
pub fn pfcc_set_pause(buf: &mut [u8], rx: bool, tx: bool) -> Result<usize, FormatError> {
    let d = access_reg(buf, REG_PFCC, PFCC_LEN, ACCESS_REG_WRITE)?;
    PFCC_PPTX.set(d, u64::from(tx));
    PFCC_PPRX.set(d, u64::from(rx));
    Ok(access_reg_len(PFCC_LEN))
}

/// PFCC read.
pub fn pfcc_query(buf: &mut [u8]) -> Result<usize, FormatError> {
    access_reg(buf, REG_PFCC, PFCC_LEN, ACCESS_REG_READ)?;
    Ok(access_reg_len(PFCC_LEN))
}

/// Parses a PFCC read: (rx pause, tx pause).
pub fn parse_pfcc(out: &[u8]) -> Result<(bool, bool), FormatError> {
    let o = output(out, access_reg_len(PFCC_LEN))?;
    let d = &o[ACCESS_REG_DATA..];
    Ok((PFCC_PPRX.flag(d), PFCC_PPTX.flag(d)))
}

/// Register id of PTYS, the port's types and speeds (`MLX5_REG_PTYS`).
pub const REG_PTYS: u16 = 0x5004;
/// `ptys_reg` length (0x200 bits).
pub const PTYS_LEN: usize = 0x40;
/// `ptys_reg.an_disable_admin`: bit 0x1 (autonegotiation turned off).
pub const PTYS_AN_DISABLE_ADMIN: Field = Field::new(0x1, 1);
/// `ptys_reg.an_disable_cap`: bit 0x2 (autonegotiation can be turned off).
pub const PTYS_AN_DISABLE_CAP: Field = Field::new(0x2, 1);
/// `ptys_reg.proto_mask`: bit 0x1d, 3 bits.
pub const PTYS_PROTO_MASK: Field = Field::new(0x1d, 3);
/// `proto_mask` of the Ethernet protocols (`MLX5_PTYS_EN`).
pub const PTYS_EN: u64 = 4;
/// `ptys_reg.an_status`: bit 0x20, 4 bits (`enum mlx5_an_status`).
pub const PTYS_AN_STATUS: Field = Field::new(0x20, 4);
/// `an_status` of a completed negotiation (`MLX5_AN_COMPLETE`).
pub const AN_COMPLETE: u8 = 1;
/// `ptys_reg.eth_proto_capability`: bit 0x60, 32 bits (the legacy `MLX5E_*` mode bits).
pub const PTYS_ETH_CAP: Field = Field::new(0x60, 32);
/// `ptys_reg.eth_proto_admin`: bit 0xc0, 32 bits (the modes advertised).
pub const PTYS_ETH_ADMIN: Field = Field::new(0xc0, 32);
/// `ptys_reg.eth_proto_oper`: bit 0x120, 32 bits (the mode the link runs in, if up).
pub const PTYS_ETH_OPER: Field = Field::new(0x120, 32);
/// `ptys_reg.connector_type`: bit 0x17c, 4 bits (`enum mlx5e_connector_type`).
pub const PTYS_CONNECTOR: Field = Field::new(0x17c, 4);
/// `ptys_reg.eth_proto_lp_advertise`: bit 0x180, 32 bits (the link partner's modes).
pub const PTYS_LP_ADVERTISE: Field = Field::new(0x180, 32);

/// PTYS read of the Ethernet protocols, as `mlx5_query_port_ptys` asks.
pub fn ptys_query(buf: &mut [u8]) -> Result<usize, FormatError> {
    let d = access_reg(buf, REG_PTYS, PTYS_LEN, ACCESS_REG_READ)?;
    PTYS_PROTO_MASK.set(d, PTYS_EN);
    Ok(access_reg_len(PTYS_LEN))
}

/// PTYS write of the Ethernet modes to advertise (`admin`, legacy bits) and whether
/// autonegotiation is off, as `mlx5_port_set_eth_ptys`.
pub fn ptys_set(buf: &mut [u8], admin: u32, an_disable: bool) -> Result<usize, FormatError> {
    let d = access_reg(buf, REG_PTYS, PTYS_LEN, ACCESS_REG_WRITE)?;
    PTYS_PROTO_MASK.set(d, PTYS_EN);
    PTYS_AN_DISABLE_ADMIN.set(d, u64::from(an_disable));
    PTYS_ETH_ADMIN.set(d, u64::from(admin));
    Ok(access_reg_len(PTYS_LEN))
}

/// What rsnic reads of PTYS (legacy Ethernet protocols).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ptys {
    /// Autonegotiation is turned off.
    pub an_disable_admin: bool,
    /// Autonegotiation can be turned off.
    pub an_disable_cap: bool,
    /// Modes the port can run (`eth_proto_capability`).
    pub cap: u32,
    /// Modes advertised (`eth_proto_admin`).
    pub admin: u32,
    /// The mode the link runs in (`eth_proto_oper`; 0 while down).
    pub oper: u32,
    /// `connector_type`.
    pub connector: u8,
    /// The link partner's modes (`eth_proto_lp_advertise`).
    pub lp_advertise: u32,
    /// The negotiation's outcome (`an_status`; [`AN_COMPLETE`]: it completed).
    pub an_status: u8,
}

/// Parses a PTYS read; an answer for other protocols than Ethernet is
/// [`FormatError::BadParam`].
pub fn parse_ptys(out: &[u8]) -> Result<Ptys, FormatError> {
    let o = output(out, access_reg_len(PTYS_LEN))?;
    let d = &o[ACCESS_REG_DATA..];
    if PTYS_PROTO_MASK.get(d) & PTYS_EN == 0 {
        return Err(FormatError::BadParam);
    }
    Ok(Ptys {
        an_disable_admin: PTYS_AN_DISABLE_ADMIN.flag(d),
        an_disable_cap: PTYS_AN_DISABLE_CAP.flag(d),
        cap: PTYS_ETH_CAP.get32(d),
        admin: PTYS_ETH_ADMIN.get32(d),
        oper: PTYS_ETH_OPER.get32(d),
        connector: PTYS_CONNECTOR.get8(d),
        lp_advertise: PTYS_LP_ADVERTISE.get32(d),
        an_status: PTYS_AN_STATUS.get8(d),
    })
}

/// Register id of PPCNT, port counters (`MLX5_REG_PPCNT`).
pub const REG_PPCNT: u16 = 0x5008;
/// `ppcnt_reg` length (0x800 bits: an 8-byte header, then `counter_set`).
pub const PPCNT_LEN: usize = 256;
/// `ppcnt_reg.grp`: bit 0x1a, 6 bits.
pub const PPCNT_GRP: Field = Field::new(0x1a, 6);
/// `ppcnt_reg.clr`: bit 0x20, 1 bit.
pub const PPCNT_CLR: Field = Field::new(0x20, 1);
/// `grp` of the IEEE 802.3 counters (`MLX5_IEEE_802_3_COUNTERS_GROUP`).
pub const PPCNT_IEEE_802_3: u8 = 0;

/// `grp` of the RFC 2819 (RMON) counters (`MLX5_RFC_2819_COUNTERS_GROUP`).
pub const PPCNT_RFC_2819: u8 = 2;

/// Bit offsets in `ppcnt_reg` of the `eth_802_3_cntrs_grp_data_layout` counters rsnic reads
/// (`counter_set` starts at bit 0x40; each counter is a 64-bit `_high`/`_low` pair).
pub mod ieee_802_3 {
    /// `a_frames_transmitted_ok`.
    pub const FRAMES_TX_OK: usize = 0x40;
    /// `a_frames_received_ok`.
    pub const FRAMES_RX_OK: usize = 0x80;
    /// `a_frame_check_sequence_errors`.
    pub const FCS_ERRORS: usize = 0xc0;
    /// `a_octets_transmitted_ok`.
    pub const OCTETS_TX_OK: usize = 0x140;
    /// `a_octets_received_ok`.
    pub const OCTETS_RX_OK: usize = 0x180;
    /// `a_multicast_frames_xmitted_ok`.
    pub const MCAST_TX_OK: usize = 0x1c0;
    /// `a_broadcast_frames_xmitted_ok`.
    pub const BCAST_TX_OK: usize = 0x200;
    /// `a_multicast_frames_received_ok`.
    pub const MCAST_RX_OK: usize = 0x240;
    /// `a_broadcast_frames_received_ok`.
    pub const BCAST_RX_OK: usize = 0x280;
    /// `a_in_range_length_errors`.
    pub const IN_RANGE_LEN_ERRORS: usize = 0x2c0;
    /// `a_out_of_range_length_field`.
    pub const OUT_OF_RANGE_LEN: usize = 0x300;
    /// `a_frame_too_long_errors`.
    pub const TOO_LONG_ERRORS: usize = 0x340;
    /// `a_symbol_error_during_carrier`.
    pub const SYMBOL_ERRORS: usize = 0x380;
    /// `a_mac_control_frames_transmitted`.
    pub const MAC_CTRL_TX: usize = 0x3c0;
    /// `a_mac_control_frames_received`.
    pub const MAC_CTRL_RX: usize = 0x400;
    /// `a_unsupported_opcodes_received`.
    pub const UNSUPPORTED_OPCODES: usize = 0x440;
    /// `a_pause_mac_ctrl_frames_received`.
    pub const PAUSE_RX: usize = 0x480;
    /// `a_pause_mac_ctrl_frames_transmitted`.
    pub const PAUSE_TX: usize = 0x4c0;
}

/// Bit offsets in `ppcnt_reg` of the `eth_2819_cntrs_grp_data_layout` counters rsnic reads.
pub mod rfc_2819 {
    /// `ether_stats_undersize_pkts`.
    pub const UNDERSIZE: usize = 0x1c0;
    /// `ether_stats_oversize_pkts`.
    pub const OVERSIZE: usize = 0x200;
    /// `ether_stats_fragments`.
    pub const FRAGMENTS: usize = 0x240;
    /// `ether_stats_jabbers`.
    pub const JABBERS: usize = 0x280;
    /// `ether_stats_pkts64octets`: the first of the size buckets, which follow one another
    /// (64, 65..127, 128..255, 256..511, 512..1023, 1024..1518, 1519..2047, 2048..4095,
    /// 4096..8191, 8192..10239 octets with the FCS).
    pub const PKTS_64: usize = 0x300;
    /// Size buckets.
    pub const BUCKETS: usize = 10;
}

/// PPCNT read of counter group `grp` (`clear`: the device restarts the group after
/// answering), as `mlx5e_stats_get_ieee` reads group 0.
pub fn ppcnt_query(buf: &mut [u8], grp: u8, clear: bool) -> Result<usize, FormatError> {
    fits(u64::from(grp), 6)?;
    let d = access_reg(buf, REG_PPCNT, PPCNT_LEN, ACCESS_REG_READ)?;
    PPCNT_GRP.set(d, u64::from(grp));
    PPCNT_CLR.set(d, u64::from(clear));
    Ok(access_reg_len(PPCNT_LEN))
}

/// What rsnic reads of PPCNT's IEEE 802.3 group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ieee8023Counters {
    /// `a_frames_transmitted_ok`.
    pub frames_tx: u64,
    /// `a_frames_received_ok`.
    pub frames_rx: u64,
    /// `a_frame_check_sequence_errors`.
    pub fcs_errors: u64,
    /// `a_octets_transmitted_ok`.
    pub octets_tx: u64,
    /// `a_octets_received_ok`.
    pub octets_rx: u64,
    /// `a_multicast_frames_xmitted_ok`.
    pub mcast_tx: u64,
    /// `a_broadcast_frames_xmitted_ok`.
    pub bcast_tx: u64,
    /// `a_multicast_frames_received_ok`.
    pub mcast_rx: u64,
    /// `a_broadcast_frames_received_ok`.
    pub bcast_rx: u64,
    /// `a_in_range_length_errors`.
    pub in_range_len_errors: u64,
    /// `a_out_of_range_length_field`.
    pub out_of_range_len: u64,
    /// `a_frame_too_long_errors`.
    pub too_long_errors: u64,
    /// `a_symbol_error_during_carrier` (ethtool's eth-phy `SymbolErrorDuringCarrier`).
    pub symbol_errors: u64,
    /// `a_mac_control_frames_transmitted`.
    pub mac_ctrl_tx: u64,
    /// `a_mac_control_frames_received`.
    pub mac_ctrl_rx: u64,
    /// `a_unsupported_opcodes_received`.
    pub unsupported_opcodes: u64,
    /// `a_pause_mac_ctrl_frames_transmitted` (ethtool's `tx_pause_frames`).
    pub pause_tx: u64,
    /// `a_pause_mac_ctrl_frames_received` (ethtool's `rx_pause_frames`).
    pub pause_rx: u64,
}

/// The register data of a PPCNT read of group `grp`; a different group in the answer is
/// [`FormatError::BadParam`] (not what was asked for).
pub(super) fn ppcnt_data(out: &[u8], grp: u8) -> Result<&[u8], FormatError> {
    let o = output(out, access_reg_len(PPCNT_LEN))?;
    let d = &o[ACCESS_REG_DATA..];
    if PPCNT_GRP.get8(d) != grp {
        return Err(FormatError::BadParam);
    }
    Ok(d)
}

/// Parses a PPCNT read of the IEEE 802.3 group (see [`ppcnt_data`] for the group check).
pub fn parse_ppcnt_ieee_802_3(out: &[u8]) -> Result<Ieee8023Counters, FormatError> {
    use ieee_802_3 as i;
    let d = ppcnt_data(out, PPCNT_IEEE_802_3)?;
    let c = |bit: usize| Field::new(bit, 64).get(d);
    Ok(Ieee8023Counters {
        frames_tx: c(i::FRAMES_TX_OK),
        frames_rx: c(i::FRAMES_RX_OK),
        fcs_errors: c(i::FCS_ERRORS),
        octets_tx: c(i::OCTETS_TX_OK),
        octets_rx: c(i::OCTETS_RX_OK),
        mcast_tx: c(i::MCAST_TX_OK),
        bcast_tx: c(i::BCAST_TX_OK),
        mcast_rx: c(i::MCAST_RX_OK),
        bcast_rx: c(i::BCAST_RX_OK),
        in_range_len_errors: c(i::IN_RANGE_LEN_ERRORS),
        out_of_range_len: c(i::OUT_OF_RANGE_LEN),
        too_long_errors: c(i::TOO_LONG_ERRORS),
        symbol_errors: c(i::SYMBOL_ERRORS),
        mac_ctrl_tx: c(i::MAC_CTRL_TX),
        mac_ctrl_rx: c(i::MAC_CTRL_RX),
        unsupported_opcodes: c(i::UNSUPPORTED_OPCODES),
        pause_tx: c(i::PAUSE_TX),
        pause_rx: c(i::PAUSE_RX),
    })
}

/// What rsnic reads of PPCNT's RFC 2819 (RMON) group: received frames only.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rfc2819Counters {
    /// `ether_stats_undersize_pkts`.
    pub undersize: u64,
    /// `ether_stats_oversize_pkts`.
    pub oversize: u64,
    /// `ether_stats_fragments`.
    pub fragments: u64,
    /// `ether_stats_jabbers`.
    pub jabbers: u64,
    /// The size buckets, in the order of [`rfc_2819::PKTS_64`].
    pub hist: [u64; rfc_2819::BUCKETS],
}

/// Parses a PPCNT read of the RFC 2819 group (see [`ppcnt_data`] for the group check).
pub fn parse_ppcnt_rfc_2819(out: &[u8]) -> Result<Rfc2819Counters, FormatError> {
    use rfc_2819 as r;
    let d = ppcnt_data(out, PPCNT_RFC_2819)?;
    let c = |bit: usize| Field::new(bit, 64).get(d);
    let mut hist = [0u64; r::BUCKETS];
    for (k, h) in hist.iter_mut().enumerate() {
        *h = c(r::PKTS_64 + 64 * k);
    }
    Ok(Rfc2819Counters {
        undersize: c(r::UNDERSIZE),
        oversize: c(r::OVERSIZE),
        fragments: c(r::FRAGMENTS),
        jabbers: c(r::JABBERS),
        hist,
    })
}

// ---------------------------------------------------------------------------------------
// PDDR: why the link is down

/// Register id of PDDR, the port diagnostics database (`MLX5_REG_PDDR`).
pub const REG_PDDR: u16 = 0x5031;
/// `pddr_reg` length (0x800 bits).
pub const PDDR_LEN: usize = 0x100;
/// `pddr_reg.page_select`: bit 0x38, 8 bits.
pub const PDDR_PAGE_SELECT: Field = Field::new(0x38, 8);
/// `page_select` of the troubleshooting page
/// (`MLX5_PDDR_REG_PAGE_SELECT_TROUBLESHOOTING_INFO_PAGE`).
pub const PDDR_PAGE_TROUBLESHOOTING: u64 = 1;
/// `pddr_troubleshooting_page.group_opcode` (page data at bit 0x40): bit 0x50, 16 bits
/// (`MLX5_PDDR_REG_TRBLSH_GROUP_OPCODE_MONITOR` = 0).
pub const PDDR_GROUP_OPCODE: Field = Field::new(0x50, 16);
/// `pddr_troubleshooting_page.status_opcode.pddr_monitor_opcode.monitor_opcode`: bit
/// 0x70, 16 bits.
pub const PDDR_MONITOR_OPCODE: Field = Field::new(0x70, 16);

/// PDDR read of the troubleshooting page's monitor group of local port 1, as
/// `query_port_status_opcode`.
pub fn pddr_query(buf: &mut [u8]) -> Result<usize, FormatError> {
    let d = access_reg(buf, REG_PDDR, PDDR_LEN, ACCESS_REG_READ)?;
    PDDR_PAGE_SELECT.set(d, PDDR_PAGE_TROUBLESHOOTING);
    PDDR_GROUP_OPCODE.set(d, 0);
    Ok(access_reg_len(PDDR_LEN))
}

/// Parses a PDDR read: the troubleshooting status opcode (0: none). An answer for another
/// page than the one asked is [`FormatError::BadParam`].
pub fn parse_pddr(out: &[u8]) -> Result<u16, FormatError> {
    let o = output(out, access_reg_len(PDDR_LEN))?;
    let d = &o[ACCESS_REG_DATA..];
    if PDDR_PAGE_SELECT.get(d) != PDDR_PAGE_TROUBLESHOOTING {
        return Err(FormatError::BadParam);
    }
    Ok(PDDR_MONITOR_OPCODE.get(d) as u16)
}

/// ethtool's extended link states (`enum ethtool_link_ext_state` of uapi ethtool.h) and
/// the substates mlx5e reports with them (`enum ethtool_link_ext_substate_*`; 0: none).
pub mod link_ext {
    /// `ETHTOOL_LINK_EXT_STATE_AUTONEG`.
    pub const AUTONEG: u8 = 0;
    /// `ETHTOOL_LINK_EXT_STATE_LINK_TRAINING_FAILURE`.
    pub const LINK_TRAINING_FAILURE: u8 = 1;
    /// `ETHTOOL_LINK_EXT_STATE_LINK_LOGICAL_MISMATCH`.
    pub const LINK_LOGICAL_MISMATCH: u8 = 2;
    /// `ETHTOOL_LINK_EXT_STATE_BAD_SIGNAL_INTEGRITY`.
    pub const BAD_SIGNAL_INTEGRITY: u8 = 3;
    /// `ETHTOOL_LINK_EXT_STATE_NO_CABLE`.
    pub const NO_CABLE: u8 = 4;
    /// `ETHTOOL_LINK_EXT_STATE_CABLE_ISSUE`.
    pub const CABLE_ISSUE: u8 = 5;
    /// `ETHTOOL_LINK_EXT_STATE_EEPROM_ISSUE`.
    pub const EEPROM_ISSUE: u8 = 6;
    /// `ETHTOOL_LINK_EXT_STATE_CALIBRATION_FAILURE`.
    pub const CALIBRATION_FAILURE: u8 = 7;
    /// `ETHTOOL_LINK_EXT_STATE_POWER_BUDGET_EXCEEDED`.
    pub const POWER_BUDGET_EXCEEDED: u8 = 8;
    /// `ETHTOOL_LINK_EXT_STATE_OVERHEAT`.
    pub const OVERHEAT: u8 = 9;
    /// `ETHTOOL_LINK_EXT_SUBSTATE_AN_NO_PARTNER_DETECTED`.
    pub const AN_NO_PARTNER: u8 = 1;
    /// `ETHTOOL_LINK_EXT_SUBSTATE_AN_NO_PARTNER_DETECTED_FORCE_MODE`.
    pub const AN_NO_PARTNER_FORCE: u8 = 4;
    /// `ETHTOOL_LINK_EXT_SUBSTATE_AN_NO_HCD`.
    pub const AN_NO_HCD: u8 = 6;
}

/// PDDR status opcodes and the (state, substate) ethtool reports for each, as mlx5e's
/// `mlx5e_link_ext_state_opcode_map`.
const LINK_EXT_MAP: &[(u16, u8, u8)] = {
    use link_ext::*;
    &[
        // Autonegotiation: no partner, ack not received, next page exchange failed, no
        // partner in force mode, FEC mismatch during override, no common mode.
        (2, AUTONEG, 1),
        (3, AUTONEG, 2),
        (4, AUTONEG, 3),
        (36, AUTONEG, 4),
        (38, AUTONEG, 5),
        (39, AUTONEG, 6),
        // Link training: KR frame lock, KR link inhibit timeout, partner not ready,
        // (no substate), remote fault.
        (5, LINK_TRAINING_FAILURE, 1),
        (6, LINK_TRAINING_FAILURE, 2),
        (7, LINK_TRAINING_FAILURE, 3),
        (8, LINK_TRAINING_FAILURE, 0),
        (14, LINK_TRAINING_FAILURE, 4),
        // PCS / FEC: block lock, AM lock, align status, FC-FEC lock, RS-FEC lock.
        (9, LINK_LOGICAL_MISMATCH, 1),
        (10, LINK_LOGICAL_MISMATCH, 2),
        (11, LINK_LOGICAL_MISMATCH, 3),
        (12, LINK_LOGICAL_MISMATCH, 4),
        (13, LINK_LOGICAL_MISMATCH, 5),
        // Signal integrity: (none), many physical errors, unsupported rate.
        (15, BAD_SIGNAL_INTEGRITY, 0),
        (17, BAD_SIGNAL_INTEGRITY, 1),
        (42, BAD_SIGNAL_INTEGRITY, 2),
        (1024, NO_CABLE, 0),
        // Cable: unsupported cable, or none given.
        (16, CABLE_ISSUE, 1),
        (20, CABLE_ISSUE, 1),
        (29, CABLE_ISSUE, 1),
        (1025, CABLE_ISSUE, 1),
        (1029, CABLE_ISSUE, 1),
        (1031, CABLE_ISSUE, 0),
        (1027, EEPROM_ISSUE, 0),
        (23, CALIBRATION_FAILURE, 0),
        (1032, POWER_BUDGET_EXCEEDED, 0),
        (1030, OVERHEAT, 0),
    ]
};

/// The extended link state (state, substate; [`link_ext`]) mlx5e reports for PDDR status
/// opcode `opcode`; `None` for 0 (nothing to say) or an opcode it does not map (ethtool then
/// shows no reason).
pub fn link_ext_state(opcode: u16) -> Option<(u8, u8)> {
    if opcode == 0 {
        return None;
    }
    LINK_EXT_MAP
        .iter()
        .find(|&&(op, _, _)| op == opcode)
        .map(|&(_, state, sub)| (state, sub))
}
