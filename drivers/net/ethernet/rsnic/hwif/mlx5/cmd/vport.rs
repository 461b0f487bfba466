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
//!
//! The ACCESS_REG commands are in module `reg`, those of FEC (PCAM, PPLM, PMLP, PPCNT's
//! physical layer groups) in module `fec`, PMTU (the port's MTU) in `pmtu`; all re-exported
//! here.

mod fec;
mod module;
mod pmtu;
mod reg;

pub use fec::*;
pub use module::*;
pub use pmtu::*;
pub use reg::*;

use super::{build, fits, op, output, put_mac, start, Field, FormatError};

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
/// `MLX5_NVPRT_LIST_TYPE_VLAN`.
pub const LIST_TYPE_VLAN: u8 = 2;

/// Byte offset of the MAC in a nic_vport_context that starts at bit `nvc`.
const fn mac_offset(nvc: usize) -> usize {
    (nvc + NVC_PERMANENT_ADDRESS) / 8 + 2
}

/// A MODIFY_NIC_VPORT_CONTEXT of the fixed length with `fields` (a `field_select` bit and
/// the context fields it selects); returns the input for what the fields do not say.
fn modify_nvc<'a>(buf: &'a mut [u8], fields: &[(Field, u64)]) -> Result<&'a mut [u8], FormatError> {
    let len = MODIFY_NIC_VPORT_CONTEXT_IN_LEN;
    start(buf, len, op::MODIFY_NIC_VPORT_CONTEXT, 0, fields)
}

/// QUERY_NIC_VPORT_CONTEXT of the function's own vport.
pub fn query_nic_vport_context(buf: &mut [u8]) -> Result<usize, FormatError> {
    let len = QUERY_NIC_VPORT_CONTEXT_IN_LEN;
    build(buf, len, op::QUERY_NIC_VPORT_CONTEXT, 0, &[])
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
    modify_nvc(
        buf,
        &[
            (FIELD_SELECT_MTU, 1),
            (NVC_MTU.at(MODIFY_NVC), u64::from(mtu)),
        ],
    )?;
    Ok(MODIFY_NIC_VPORT_CONTEXT_IN_LEN)
}

/// MODIFY_NIC_VPORT_CONTEXT: the permanent MAC (`field_select.permanent_address`).
pub fn modify_nic_vport_mac(buf: &mut [u8], mac: &[u8; 6]) -> Result<usize, FormatError> {
    let b = modify_nvc(buf, &[(FIELD_SELECT_PERMANENT_ADDRESS, 1)])?;
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
    let f = [
        (FIELD_SELECT_ADDRESSES_LIST, 1),
        (NVC_ALLOWED_LIST_TYPE.at(MODIFY_NVC), u64::from(list_type)),
        (NVC_ALLOWED_LIST_SIZE.at(MODIFY_NVC), n as u64),
    ];
    let b = start(buf, len, op::MODIFY_NIC_VPORT_CONTEXT, 0, &f)?;
    let base = (MODIFY_NVC + NVC_ADDRESSES) / 8;
    for (i, a) in addrs.iter().enumerate() {
        let at = base + 8 * i + 2;
        put_mac(b, at, a)?;
    }
    Ok(len)
}

/// MODIFY_NIC_VPORT_CONTEXT: the vport's VLAN list becomes `vids` (`field_select.
/// addresses_list`, list type [`LIST_TYPE_VLAN`], one 8-byte `vlan_layout` per VID with the
/// VID in bits 11..0 of its first word, as `mlx5_modify_nic_vport_vlans`). The caller
/// bounds the list by `log_max_vlan_list`; a VID above 4095 or a list over the field's 12
/// bits is [`FormatError::BadParam`].
pub fn modify_nic_vport_vlans(buf: &mut [u8], vids: &[u16]) -> Result<usize, FormatError> {
    let n = vids.len();
    fits(n as u64, 12)?;
    if vids.iter().any(|&v| v >= 4096) {
        return Err(FormatError::BadParam);
    }
    let len = modify_nic_vport_mac_list_len(n);
    let f = [
        (FIELD_SELECT_ADDRESSES_LIST, 1),
        (
            NVC_ALLOWED_LIST_TYPE.at(MODIFY_NVC),
            u64::from(LIST_TYPE_VLAN),
        ),
        (NVC_ALLOWED_LIST_SIZE.at(MODIFY_NVC), n as u64),
    ];
    let b = start(buf, len, op::MODIFY_NIC_VPORT_CONTEXT, 0, &f)?;
    let base = (MODIFY_NVC + NVC_ADDRESSES) / 8;
    for (i, &v) in vids.iter().enumerate() {
        let at = base + 8 * i + 2;
        b.get_mut(at..at + 2)
            .ok_or(FormatError::BadParam)?
            .copy_from_slice(&v.to_be_bytes());
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
    modify_nvc(
        buf,
        &[
            (FIELD_SELECT_PROMISC, 1),
            (NVC_PROMISC_UC.at(MODIFY_NVC), u64::from(uc)),
            (NVC_PROMISC_MC.at(MODIFY_NVC), u64::from(mc)),
            (NVC_PROMISC_ALL.at(MODIFY_NVC), u64::from(all)),
        ],
    )?;
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
    build(buf, QUERY_VPORT_STATE_LEN, op::QUERY_VPORT_STATE, 0, &[])
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
    let len = QUERY_VPORT_COUNTER_IN_LEN;
    build(buf, len, op::QUERY_VPORT_COUNTER, 0, &[])
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
