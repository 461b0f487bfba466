// SPDX-License-Identifier: GPL-2.0

//! Vport and port commands: QUERY/MODIFY_NIC_VPORT_CONTEXT (vport.c
//! `mlx5_query_nic_vport_mac_address`, `mlx5_modify_nic_vport_mtu`,
//! `mlx5_modify_nic_vport_mac_address`, `mlx5_query_nic_vport_min_inline`),
//! QUERY_VPORT_STATE (`mlx5_query_vport_state`), ACCESS_REG for PAOS / PPLR / PFCC / PPCNT
//! (port.c `mlx5_access_reg`, `mlx5_set_port_admin_status`, `mlx5_query_port_oper_status`,
//! `mlx5_set_port_pause`, `mlx5_query_port_pause`; en_stats.c `mlx5e_stats_get_ieee`) and
//! QUERY_VPORT_COUNTER (`mlx5_core_query_vport_counter`); the receive filter of the vport
//! (`mlx5_modify_nic_vport_mac_list`, `mlx5_modify_nic_vport_promisc`) and what mlx5e puts in
//! it ([`VportLists`], en_fs.c `mlx5e_vport_context_update`).

use super::{fits, op, output, put_mac, start, Field, FormatError};

/// `query_nic_vport_context_in` length.
pub const QUERY_NIC_VPORT_CONTEXT_IN_LEN: usize = 16;
/// `query_nic_vport_context_out` length (0x880 bits).
pub const QUERY_NIC_VPORT_CONTEXT_OUT_LEN: usize = 272;
/// `modify_nic_vport_context_in` length (0x1000 bits).
pub const MODIFY_NIC_VPORT_CONTEXT_IN_LEN: usize = 512;
/// `modify_nic_vport_context_out` length.
pub const MODIFY_NIC_VPORT_CONTEXT_OUT_LEN: usize = 16;

/// `query_nic_vport_context_out.nic_vport_context`: bit 0x80.
pub const QUERY_NVC: usize = 0x80;
/// `modify_nic_vport_context_in.nic_vport_context`: bit 0x800.
pub const MODIFY_NVC: usize = 0x800;
/// `nic_vport_context.min_wqe_inline_mode`: bit 0x05, 3 bits.
pub const NVC_MIN_WQE_INLINE_MODE: Field = Field::new(0x05, 3);
/// `nic_vport_context.mtu`: bit 0x130, 16 bits.
pub const NVC_MTU: Field = Field::new(0x130, 16);
/// `nic_vport_context.permanent_address` (`mac_address_layout`): bit 0x7a0; the six MAC
/// bytes are its bytes 2..8 (`mac_addr_47_32`, `mac_addr_31_0`).
pub const NVC_PERMANENT_ADDRESS: usize = 0x7a0;
/// `modify_nic_vport_context_in.field_select.min_inline`: bit 0x78, 1 bit.
pub const FIELD_SELECT_MIN_INLINE: Field = Field::new(0x78, 1);
/// `modify_nic_vport_context_in.field_select.mtu`: bit 0x79, 1 bit.
pub const FIELD_SELECT_MTU: Field = Field::new(0x79, 1);
/// `modify_nic_vport_context_in.field_select.permanent_address`: bit 0x7c, 1 bit.
pub const FIELD_SELECT_PERMANENT_ADDRESS: Field = Field::new(0x7c, 1);

/// `modify_nic_vport_context_in.field_select.promisc`: bit 0x7b, 1 bit.
pub const FIELD_SELECT_PROMISC: Field = Field::new(0x7b, 1);
/// `modify_nic_vport_context_in.field_select.addresses_list`: bit 0x7d, 1 bit.
pub const FIELD_SELECT_ADDRESSES_LIST: Field = Field::new(0x7d, 1);
/// `nic_vport_context.promisc_uc`: bit 0x780, 1 bit.
pub const NVC_PROMISC_UC: Field = Field::new(0x780, 1);
/// `nic_vport_context.promisc_mc`: bit 0x781, 1 bit.
pub const NVC_PROMISC_MC: Field = Field::new(0x781, 1);
/// `nic_vport_context.promisc_all`: bit 0x782, 1 bit.
pub const NVC_PROMISC_ALL: Field = Field::new(0x782, 1);
/// `nic_vport_context.allowed_list_type`: bit 0x785, 3 bits.
pub const NVC_ALLOWED_LIST_TYPE: Field = Field::new(0x785, 3);
/// `nic_vport_context.allowed_list_size`: bit 0x794, 12 bits.
pub const NVC_ALLOWED_LIST_SIZE: Field = Field::new(0x794, 12);
/// `nic_vport_context.current_uc_mac_address[]`: bit 0x800, one 8-byte
/// `mac_address_layout` per address (the MAC in its last six bytes).
pub const NVC_ADDRESSES: usize = 0x800;
/// `MLX5_NVPRT_LIST_TYPE_UC`.
pub const LIST_TYPE_UC: u8 = 0;
/// `MLX5_NVPRT_LIST_TYPE_MC`.
pub const LIST_TYPE_MC: u8 = 1;

/// Byte offset of the MAC in a nic_vport_context that starts at bit `nvc`.
const fn mac_offset(nvc: usize) -> usize {
    (nvc + NVC_PERMANENT_ADDRESS) / 8 + 2
}

/// QUERY_NIC_VPORT_CONTEXT of the function's own vport.
pub fn query_nic_vport_context(buf: &mut [u8]) -> Result<usize, FormatError> {
    start(
        buf,
        QUERY_NIC_VPORT_CONTEXT_IN_LEN,
        op::QUERY_NIC_VPORT_CONTEXT,
        0,
    )?;
    Ok(QUERY_NIC_VPORT_CONTEXT_IN_LEN)
}

/// What rsnic reads of the NIC vport context.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NicVportContext {
    /// `permanent_address`.
    pub mac: [u8; 6],
    /// `mtu` (the hardware MTU: Ethernet header, one VLAN tag and FCS included, as mlx5e's
    /// `MLX5E_SW2HW_MTU` computes it; the caller converts).
    pub mtu: u16,
    /// `min_wqe_inline_mode`.
    pub min_wqe_inline_mode: u8,
}

/// Parses QUERY_NIC_VPORT_CONTEXT's output.
pub fn parse_query_nic_vport_context(out: &[u8]) -> Result<NicVportContext, FormatError> {
    let o = output(out, QUERY_NIC_VPORT_CONTEXT_OUT_LEN)?;
    let m = mac_offset(QUERY_NVC);
    let mut mac = [0u8; 6];
    mac.copy_from_slice(&o[m..m + 6]);
    Ok(NicVportContext {
        mac,
        mtu: NVC_MTU.at(QUERY_NVC).get(o) as u16,
        min_wqe_inline_mode: NVC_MIN_WQE_INLINE_MODE.at(QUERY_NVC).get8(o),
    })
}

/// MODIFY_NIC_VPORT_CONTEXT: the MTU (`field_select.mtu`).
pub fn modify_nic_vport_mtu(buf: &mut [u8], mtu: u16) -> Result<usize, FormatError> {
    let b = start(
        buf,
        MODIFY_NIC_VPORT_CONTEXT_IN_LEN,
        op::MODIFY_NIC_VPORT_CONTEXT,
        0,
    )?;
    FIELD_SELECT_MTU.set(b, 1);
    NVC_MTU.at(MODIFY_NVC).set(b, u64::from(mtu));
    Ok(MODIFY_NIC_VPORT_CONTEXT_IN_LEN)
}

/// MODIFY_NIC_VPORT_CONTEXT: the permanent MAC (`field_select.permanent_address`).
pub fn modify_nic_vport_mac(buf: &mut [u8], mac: &[u8; 6]) -> Result<usize, FormatError> {
    let b = start(
        buf,
        MODIFY_NIC_VPORT_CONTEXT_IN_LEN,
        op::MODIFY_NIC_VPORT_CONTEXT,
        0,
    )?;
    FIELD_SELECT_PERMANENT_ADDRESS.set(b, 1);
    let m = mac_offset(MODIFY_NVC);
    b[m..m + 6].copy_from_slice(mac);
    Ok(MODIFY_NIC_VPORT_CONTEXT_IN_LEN)
}

/// Length of MODIFY_NIC_VPORT_CONTEXT carrying an address list of `n` entries.
pub const fn modify_nic_vport_mac_list_len(n: usize) -> usize {
    MODIFY_NIC_VPORT_CONTEXT_IN_LEN + 8 * n
}

/// MODIFY_NIC_VPORT_CONTEXT: the vport's UC or MC address list (`list_type`
/// [`LIST_TYPE_UC`] / [`LIST_TYPE_MC`]) becomes `addrs` (`field_select.addresses_list`, as
/// `mlx5_modify_nic_vport_mac_list`). The caller bounds the list by the caps
/// (`log_max_current_uc_list` / `_mc_list`, [`VportLists`]); a list over the field's 12
/// bits or a multicast address in a UC list (or a unicast one in an MC list) is
/// [`FormatError::BadParam`].
pub fn modify_nic_vport_mac_list(
    buf: &mut [u8],
    list_type: u8,
    addrs: &[[u8; 6]],
) -> Result<usize, FormatError> {
    let n = addrs.len();
    fits(n as u64, 12)?;
    let want_mc = match list_type {
        LIST_TYPE_UC => false,
        LIST_TYPE_MC => true,
        _ => return Err(FormatError::BadParam),
    };
    if addrs.iter().any(|a| (a[0] & 1 != 0) != want_mc) {
        return Err(FormatError::BadParam);
    }
    let len = modify_nic_vport_mac_list_len(n);
    let b = start(buf, len, op::MODIFY_NIC_VPORT_CONTEXT, 0)?;
    FIELD_SELECT_ADDRESSES_LIST.set(b, 1);
    NVC_ALLOWED_LIST_TYPE
        .at(MODIFY_NVC)
        .set(b, u64::from(list_type));
    NVC_ALLOWED_LIST_SIZE.at(MODIFY_NVC).set(b, n as u64);
    let base = (MODIFY_NVC + NVC_ADDRESSES) / 8;
    for (i, a) in addrs.iter().enumerate() {
        let at = base + 8 * i + 2;
        put_mac(b, at, a)?;
    }
    Ok(len)
}

/// MODIFY_NIC_VPORT_CONTEXT: the vport's promiscuous flags (`field_select.promisc`, as
/// `mlx5_modify_nic_vport_promisc`): `uc` every unicast address, `mc` every multicast one,
/// `all` everything.
pub fn modify_nic_vport_promisc(
    buf: &mut [u8],
    uc: bool,
    mc: bool,
    all: bool,
) -> Result<usize, FormatError> {
    let b = start(
        buf,
        MODIFY_NIC_VPORT_CONTEXT_IN_LEN,
        op::MODIFY_NIC_VPORT_CONTEXT,
        0,
    )?;
    FIELD_SELECT_PROMISC.set(b, 1);
    NVC_PROMISC_UC.at(MODIFY_NVC).set(b, u64::from(uc));
    NVC_PROMISC_MC.at(MODIFY_NVC).set(b, u64::from(mc));
    NVC_PROMISC_ALL.at(MODIFY_NVC).set(b, u64::from(all));
    Ok(MODIFY_NIC_VPORT_CONTEXT_IN_LEN)
}

/// Most entries of a vport address list rsnic programs (the caps may allow more: up to
/// 2^31; mlx5e allocates what they allow, rsnic's lists are fixed arrays).
pub const VPORT_LIST_MAX: usize = 64;

/// What mlx5e puts in the vport's address lists (`mlx5e_fill_addr_array`): the UC list is
/// the device's own address first, then the stack's unicast addresses (without it again);
/// the MC list broadcast first (when the device receives it), then the multicast addresses.
/// Each is cut at its cap, `2^log_max_current_uc_list` / `_mc_list` (and at
/// [`VPORT_LIST_MAX`]), as `mlx5e_vport_context_update_addr_list` cuts it with a warning:
/// [`VportLists::uc_dropped`] / [`VportLists::mc_dropped`] count what did not fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VportLists {
    uc: [[u8; 6]; VPORT_LIST_MAX],
    uc_len: usize,
    mc: [[u8; 6]; VPORT_LIST_MAX],
    mc_len: usize,
    /// Addresses left out of the UC list.
    pub uc_dropped: usize,
    /// Addresses left out of the MC list.
    pub mc_dropped: usize,
}

impl VportLists {
    /// The lists for own address `own`, `broadcast` on or off, the stack's unicast and
    /// multicast addresses, under the caps' `log_max_current_uc_list` and `_mc_list`.
    pub fn new(
        own: &[u8; 6],
        broadcast: bool,
        uc: &[[u8; 6]],
        mc: &[[u8; 6]],
        log_max_uc: u8,
        log_max_mc: u8,
    ) -> Self {
        let cap = |log: u8| {
            1usize
                .checked_shl(u32::from(log))
                .unwrap_or(usize::MAX)
                .min(VPORT_LIST_MAX)
        };
        let mut l = Self {
            uc: [[0; 6]; VPORT_LIST_MAX],
            uc_len: 0,
            mc: [[0; 6]; VPORT_LIST_MAX],
            mc_len: 0,
            uc_dropped: 0,
            mc_dropped: 0,
        };
        let first_uc = [*own];
        let uc_all = first_uc
            .iter()
            .chain(uc.iter().filter(|a| *a != own && a[0] & 1 == 0));
        l.uc_dropped = fill(&mut l.uc, &mut l.uc_len, cap(log_max_uc), uc_all);
        let bcast = [[0xff; 6]];
        let first_mc = if broadcast { &bcast[..] } else { &[][..] };
        let mc_all = first_mc.iter().chain(mc.iter().filter(|a| a[0] & 1 != 0));
        l.mc_dropped = fill(&mut l.mc, &mut l.mc_len, cap(log_max_mc), mc_all);
        l
    }

    /// The UC list.
    pub fn uc(&self) -> &[[u8; 6]] {
        self.uc.get(..self.uc_len).unwrap_or_default()
    }

    /// The MC list.
    pub fn mc(&self) -> &[[u8; 6]] {
        self.mc.get(..self.mc_len).unwrap_or_default()
    }
}

/// Appends the distinct addresses of `from` to `list` (length `len`) up to `cap` entries;
/// returns how many distinct ones did not fit.
fn fill<'a>(
    list: &mut [[u8; 6]],
    len: &mut usize,
    cap: usize,
    from: impl Iterator<Item = &'a [u8; 6]>,
) -> usize {
    let mut dropped = 0;
    for a in from {
        if list.get(..*len).unwrap_or_default().contains(a) {
            continue;
        }
        match list.get_mut(*len) {
            Some(slot) if *len < cap => {
                *slot = *a;
                *len += 1;
            }
            _ => dropped += 1,
        }
    }
    dropped
}

/// `query_vport_state_in` / `_out` length.
pub const QUERY_VPORT_STATE_LEN: usize = 16;
/// `query_vport_state_out.admin_state`: bit 0x78, 4 bits.
pub const VPORT_ADMIN_STATE: Field = Field::new(0x78, 4);
/// `query_vport_state_out.state`: bit 0x7c, 4 bits.
pub const VPORT_STATE: Field = Field::new(0x7c, 4);
/// `state`: down (`MLX5_VPORT_STATE_DOWN`).
pub const VPORT_STATE_DOWN: u8 = 0;
/// `state`: up (`MLX5_VPORT_STATE_UP`).
pub const VPORT_STATE_UP: u8 = 1;

/// QUERY_VPORT_STATE of the function's own vport (`MLX5_VPORT_STATE_OP_MOD_VNIC_VPORT`).
pub fn query_vport_state(buf: &mut [u8]) -> Result<usize, FormatError> {
    start(buf, QUERY_VPORT_STATE_LEN, op::QUERY_VPORT_STATE, 0)?;
    Ok(QUERY_VPORT_STATE_LEN)
}

/// The QUERY_VPORT_STATE answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VportState {
    /// `state` (operational).
    pub state: u8,
    /// `admin_state`.
    pub admin_state: u8,
}

impl VportState {
    /// The vport is operationally up.
    pub fn is_up(&self) -> bool {
        self.state == VPORT_STATE_UP
    }
}

/// Parses QUERY_VPORT_STATE's output.
pub fn parse_query_vport_state(out: &[u8]) -> Result<VportState, FormatError> {
    let o = output(out, QUERY_VPORT_STATE_LEN)?;
    Ok(VportState {
        state: VPORT_STATE.get8(o),
        admin_state: VPORT_ADMIN_STATE.get8(o),
    })
}

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

fn access_reg(
    buf: &mut [u8],
    reg_id: u16,
    reg_len: usize,
    op_mod: u16,
) -> Result<&mut [u8], FormatError> {
    let b = start(buf, access_reg_len(reg_len), op::ACCESS_REG, op_mod)?;
    ACCESS_REG_REGISTER_ID.set(b, u64::from(reg_id));
    ACCESS_REG_ARGUMENT.set(b, 0);
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
fn ppcnt_data(out: &[u8], grp: u8) -> Result<&[u8], FormatError> {
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
// QUERY_VPORT_COUNTER

/// `query_vport_counter_in` length (0x100 bits).
pub const QUERY_VPORT_COUNTER_IN_LEN: usize = 32;
/// `query_vport_counter_out` length (0x1080 bits).
pub const QUERY_VPORT_COUNTER_OUT_LEN: usize = 528;

/// Byte offsets of the `traffic_counter` pairs (packets BE64, then octets BE64) in
/// `query_vport_counter_out`.
pub mod counter {
    /// `received_errors` (bit 0x80).
    pub const RECEIVED_ERRORS: usize = 0x10;
    /// `transmit_errors` (bit 0x100).
    pub const TRANSMIT_ERRORS: usize = 0x20;
    /// `received_eth_broadcast` (bit 0x380).
    pub const RX_ETH_BROADCAST: usize = 0x70;
    /// `transmitted_eth_broadcast` (bit 0x400).
    pub const TX_ETH_BROADCAST: usize = 0x80;
    /// `received_eth_unicast` (bit 0x480).
    pub const RX_ETH_UNICAST: usize = 0x90;
    /// `transmitted_eth_unicast` (bit 0x500).
    pub const TX_ETH_UNICAST: usize = 0xa0;
    /// `received_eth_multicast` (bit 0x580).
    pub const RX_ETH_MULTICAST: usize = 0xb0;
    /// `transmitted_eth_multicast` (bit 0x600).
    pub const TX_ETH_MULTICAST: usize = 0xc0;
}

/// One `traffic_counter`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Traffic {
    /// `packets`.
    pub packets: u64,
    /// `octets`.
    pub octets: u64,
}

/// The Ethernet counters of QUERY_VPORT_COUNTER.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VportCounters {
    /// `received_errors`.
    pub rx_errors: Traffic,
    /// `transmit_errors`.
    pub tx_errors: Traffic,
    /// `received_eth_unicast`.
    pub rx_unicast: Traffic,
    /// `transmitted_eth_unicast`.
    pub tx_unicast: Traffic,
    /// `received_eth_multicast`.
    pub rx_multicast: Traffic,
    /// `transmitted_eth_multicast`.
    pub tx_multicast: Traffic,
    /// `received_eth_broadcast`.
    pub rx_broadcast: Traffic,
    /// `transmitted_eth_broadcast`.
    pub tx_broadcast: Traffic,
}

/// QUERY_VPORT_COUNTER of the function's own vport, not clearing.
pub fn query_vport_counter(buf: &mut [u8]) -> Result<usize, FormatError> {
    start(buf, QUERY_VPORT_COUNTER_IN_LEN, op::QUERY_VPORT_COUNTER, 0)?;
    Ok(QUERY_VPORT_COUNTER_IN_LEN)
}

fn traffic(o: &[u8], at: usize) -> Traffic {
    Traffic {
        packets: Field::new(at * 8, 64).get(o),
        octets: Field::new(at * 8 + 64, 64).get(o),
    }
}

/// Parses QUERY_VPORT_COUNTER's output.
pub fn parse_query_vport_counter(out: &[u8]) -> Result<VportCounters, FormatError> {
    let o = output(out, QUERY_VPORT_COUNTER_OUT_LEN)?;
    Ok(VportCounters {
        rx_errors: traffic(o, counter::RECEIVED_ERRORS),
        tx_errors: traffic(o, counter::TRANSMIT_ERRORS),
        rx_unicast: traffic(o, counter::RX_ETH_UNICAST),
        tx_unicast: traffic(o, counter::TX_ETH_UNICAST),
        rx_multicast: traffic(o, counter::RX_ETH_MULTICAST),
        tx_multicast: traffic(o, counter::TX_ETH_MULTICAST),
        rx_broadcast: traffic(o, counter::RX_ETH_BROADCAST),
        tx_broadcast: traffic(o, counter::TX_ETH_BROADCAST),
    })
}
