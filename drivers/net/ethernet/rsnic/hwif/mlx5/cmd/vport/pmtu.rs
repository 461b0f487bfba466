// SPDX-License-Identifier: GPL-2.0

//! The PMTU register, the port's MTU (upstream port.c `mlx5_set_port_mtu`,
//! `mlx5_query_port_max_mtu`, `mlx5_query_port_oper_mtu`; layout `pmtu_reg` of mlx5_ifc.h).
//! Its MTUs are the hardware's: the frame without its FCS plus the FCS, the L2 header and a
//! VLAN tag included ([`HW_MTU_OVERHEAD`] more than the netdev's). Re-exported by the parent
//! module.

use super::reg::{access_reg, access_reg_len, ACCESS_REG_DATA, ACCESS_REG_READ, ACCESS_REG_WRITE};
use crate::hwif::mlx5::cmd::{output, Field, FormatError};

/// Register id of PMTU (`MLX5_REG_PMTU`).
pub const REG_PMTU: u16 = 0x5003;
/// `pmtu_reg` length (0x80 bits).
pub const PMTU_LEN: usize = 16;
/// `pmtu_reg.max_mtu`: bit 0x20, 16 bits.
pub const PMTU_MAX_MTU: Field = Field::new(0x20, 16);
/// `pmtu_reg.admin_mtu`: bit 0x40, 16 bits.
pub const PMTU_ADMIN_MTU: Field = Field::new(0x40, 16);
/// `pmtu_reg.oper_mtu`: bit 0x60, 16 bits.
pub const PMTU_OPER_MTU: Field = Field::new(0x60, 16);
/// What the hardware MTU adds to the netdev's (`MLX5E_ETH_HARD_MTU`: Ethernet header, VLAN
/// tag, FCS).
pub const HW_MTU_OVERHEAD: u32 = 14 + 4 + 4;

/// The netdev MTU of hardware MTU `hw` (`MLX5E_HW2SW_MTU`), 0 below the overhead.
pub const fn hw_to_sw_mtu(hw: u32) -> u32 {
    hw.saturating_sub(HW_MTU_OVERHEAD)
}

/// The hardware MTU of netdev MTU `sw` (`MLX5E_SW2HW_MTU`).
pub const fn sw_to_hw_mtu(sw: u32) -> u32 {
    sw.saturating_add(HW_MTU_OVERHEAD)
}

/// PMTU read of local port 1.
pub fn pmtu_query(buf: &mut [u8]) -> Result<usize, FormatError> {
    access_reg(buf, REG_PMTU, PMTU_LEN, ACCESS_REG_READ)?;
    Ok(access_reg_len(PMTU_LEN))
}

/// PMTU write: the port's administrative MTU `hw_mtu` (`mlx5_set_port_mtu`).
pub fn pmtu_set(buf: &mut [u8], hw_mtu: u16) -> Result<usize, FormatError> {
    let d = access_reg(buf, REG_PMTU, PMTU_LEN, ACCESS_REG_WRITE)?;
    PMTU_ADMIN_MTU.set(d, u64::from(hw_mtu));
    Ok(access_reg_len(PMTU_LEN))
}

/// The PMTU answer (hardware MTUs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pmtu {
    /// `max_mtu`: the largest the port takes.
    pub max: u16,
    /// `admin_mtu`: what the driver set.
    pub admin: u16,
    /// `oper_mtu`: what the port runs.
    pub oper: u16,
}

/// Parses a PMTU read (ACCESS_REG output).
pub fn parse_pmtu(out: &[u8]) -> Result<Pmtu, FormatError> {
    let o = output(out, access_reg_len(PMTU_LEN))?;
    let d = o.get(ACCESS_REG_DATA..).unwrap_or_default();
    Ok(Pmtu {
        max: PMTU_MAX_MTU.get(d) as u16,
        admin: PMTU_ADMIN_MTU.get(d) as u16,
        oper: PMTU_OPER_MTU.get(d) as u16,
    })
}
