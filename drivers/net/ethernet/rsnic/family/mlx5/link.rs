// SPDX-License-Identifier: GPL-2.0

//! The link as `ethtool <dev>` shows it on ConnectX: modes, speed, connector and
//! autonegotiation from the port's PTYS register, as mlx5e reads them.
//!
//! Upstream counterpart: `en_ethtool.c` (`mlx5e_ethtool_get_link_ksettings`,
//! `mlx5e_build_ptys2ethtool_map`) and `port.c` (`mlx5_port_ptys2speed`).

use crate::hwif::mlx5::cmd::vport::{self, Ptys};
use crate::kernel_ext::net::ethtool::{Connector, LinkMode, LinkRequest, LinkSettings};

/// The legacy PTYS Ethernet modes (`enum mlx5e_link_mode`: bit, the ethtool link mode
/// mlx5e maps it to, its speed in Mb/s).
const MODES: [(u32, LinkMode, u32); 27] = [
    (0, LinkMode::G1_BASE_KX, 1000),           // 1000BASE_CX_SGMII
    (1, LinkMode::G1_BASE_KX, 1000),           // 1000BASE_KX
    (2, LinkMode::G10_BASE_KX4, 10000),        // 10GBASE_CX4
    (3, LinkMode::G10_BASE_KX4, 10000),        // 10GBASE_KX4
    (4, LinkMode::G10_BASE_KR, 10000),         // 10GBASE_KR
    (5, LinkMode::G20_BASE_KR2, 20000),        // 20GBASE_KR2
    (6, LinkMode::G40_BASE_CR4, 40000),        // 40GBASE_CR4
    (7, LinkMode::G40_BASE_KR4, 40000),        // 40GBASE_KR4
    (8, LinkMode::G56_BASE_KR4, 56000),        // 56GBASE_R4
    (12, LinkMode::G10_BASE_KR, 10000),        // 10GBASE_CR
    (13, LinkMode::G10_BASE_KR, 10000),        // 10GBASE_SR
    (14, LinkMode::G10_BASE_KR, 10000),        // 10GBASE_ER
    (15, LinkMode::G40_BASE_SR4, 40000),       // 40GBASE_SR4
    (16, LinkMode::G40_BASE_LR4, 40000),       // 40GBASE_LR4
    (18, LinkMode::G50_BASE_SR2, 50000),       // 50GBASE_SR2
    (20, LinkMode::G100_BASE_CR4, 100000),     // 100GBASE_CR4
    (21, LinkMode::G100_BASE_SR4, 100000),     // 100GBASE_SR4
    (22, LinkMode::G100_BASE_KR4, 100000),     // 100GBASE_KR4
    (23, LinkMode::G100_BASE_LR4_ER4, 100000), // 100GBASE_LR4
    (24, LinkMode::M100_BASE_T, 100),          // 100BASE_TX
    (25, LinkMode::G1_BASE_T, 1000),           // 1000BASE_T
    (26, LinkMode::G10_BASE_T, 10000),         // 10GBASE_T
    (27, LinkMode::G25_BASE_CR, 25000),        // 25GBASE_CR
    (28, LinkMode::G25_BASE_KR, 25000),        // 25GBASE_KR
    (29, LinkMode::G25_BASE_SR, 25000),        // 25GBASE_SR
    (30, LinkMode::G50_BASE_CR2, 50000),       // 50GBASE_CR2
    (31, LinkMode::G50_BASE_KR2, 50000),       // 50GBASE_KR2
];

/// The connector of PTYS's `connector_type` (`enum mlx5e_connector_type`, as
/// `ptys2connector_type`).
fn connector(t: u8) -> Connector {
    match t {
        1 => Connector::None,
        2 => Connector::TwistedPair,
        3 => Connector::Aui,
        4 => Connector::Bnc,
        5 => Connector::Mii,
        6 => Connector::Fibre,
        7 => Connector::DirectAttach,
        _ => Connector::Other,
    }
}

/// The speed of the running mode `oper` (0: none known), as `mlx5_port_ptys2speed`.
fn speed(oper: u32) -> u32 {
    MODES
        .iter()
        .find(|(bit, _, _)| oper & (1 << bit) != 0)
        .map_or(0, |&(_, _, mbps)| mbps)
}

/// The PTYS modes to advertise and whether to turn autonegotiation off for `ethtool -s`
/// request `req` on a port whose PTYS reads `p`, as mlx5e_ethtool_set_link_ksettings
/// works them out: with autonegotiation the modes whose ethtool mode is advertised, without
/// it every mode of the speed asked for, either cut to the port's; a refusal is its reason.
pub(super) fn wanted(p: &Ptys, req: &LinkRequest<'_>) -> Result<(u32, bool), &'static str> {
    let autoneg = req.autoneg();
    let modes = MODES
        .iter()
        .filter(|&&(_, mode, mbps)| {
            if autoneg {
                req.advertises(mode)
            } else {
                mbps == req.speed()
            }
        })
        .fold(0u32, |m, &(bit, _, _)| m | (1 << bit))
        & p.cap;
    if modes == 0 {
        return Err("Not supported link mode(s) requested");
    }
    // Autonegotiation changes when it is on and asked off, or off and asked on.
    if p.an_disable_admin == autoneg && !p.an_disable_cap {
        return Err("Autoneg cannot be changed");
    }
    Ok((modes, !autoneg))
}

/// Fills `ks` from PTYS `p` and the port's pause setting (`rx`/`tx`), with the carrier
/// `carrier` (no carrier: speed and duplex unknown), as mlx5e does.
pub(super) fn fill(
    p: &Ptys,
    rx_pause: bool,
    tx_pause: bool,
    carrier: bool,
    ks: &mut LinkSettings<'_>,
) {
    for &(bit, mode, _) in MODES.iter() {
        let m = 1u32 << bit;
        if p.cap & m != 0 {
            ks.add_supported(mode);
        }
        if p.admin & m != 0 {
            ks.add_advertising(mode);
        }
        if p.lp_advertise & m != 0 {
            ks.add_lp_advertising(mode);
        }
    }
    // The partner negotiated (mlx5e: `an_status` MLX5_AN_COMPLETE).
    if p.an_status == vport::AN_COMPLETE {
        ks.add_lp_advertising(LinkMode::AUTONEG);
    }
    ks.add_supported(LinkMode::PAUSE);
    if rx_pause {
        ks.add_advertising(LinkMode::PAUSE);
    }
    if rx_pause != tx_pause {
        ks.add_advertising(LinkMode::ASYM_PAUSE);
    }
    match speed(p.oper) {
        mbps if carrier && mbps != 0 => {
            ks.set_speed(mbps);
            ks.set_full_duplex(true);
        }
        _ => ks.set_no_link(),
    }
    ks.set_connector(connector(p.connector));
    ks.add_supported(LinkMode::AUTONEG);
    ks.set_autoneg(!p.an_disable_admin);
    if !p.an_disable_admin {
        ks.add_advertising(LinkMode::AUTONEG);
    }
}
