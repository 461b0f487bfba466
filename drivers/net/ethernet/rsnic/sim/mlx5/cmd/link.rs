// SPDX-License-Identifier: GPL-2.0

//! The link modes of the model's ports and how two wired ports agree on one (PTYS).
//!
//! Each port is a ConnectX-5's 100G QSFP28 cage with a direct-attach copper cable: its
//! `eth_proto_capability` holds five legacy Ethernet modes (`enum mlx5e_link_mode` of
//! mlx5e's port.h), one per speed, [`MODES`]. PTYS `eth_proto_admin` chooses those the
//! port offers (all of them after power-on) and `an_disable_admin` whether it
//! negotiates. The two ports of a wired pair resolve their link as real ports do:
//!
//! - both negotiate: the fastest mode both advertise; none in common, no link;
//! - neither negotiates: each runs the fastest mode of its `eth_proto_admin` (mlx5e writes
//!   the modes of one speed), and the link comes up only when both run the same one;
//! - one negotiates, the other is forced: the negotiating port detects the forced port's
//!   mode (parallel detection) and the link comes up at it if it advertises that mode.
//!
//! The resolved mode is PTYS `eth_proto_oper` while the port is operationally up; a
//! pair that does not resolve is down (PAOS `oper_status`, QUERY_VPORT_STATE, a
//! PORT_CHANGE event on each change, and the wire drops what either port sends). When both
//! negotiate, `eth_proto_lp_advertise` holds the partner's modes and `an_status` says the
//! negotiation completed. A port in loopback resolves with itself: its fastest mode. The
//! resolved mode also sets the port's lanes (PMLP) and the PPLM field its FEC is taken from
//! ([`Mode`], see [`super::port`]); the model does not pace frames.
//!
//! A port that is administratively up but whose link is down says why in PDDR's
//! troubleshooting page ([`down_reason`]), with the status opcodes mlx5e maps to ethtool's
//! extended link states (`mlx5e_link_ext_state_opcode_map`):
//!
//! - forced (autonegotiation off) and no partner at its speed (the peer down, or running
//!   another mode): [`NO_PARTNER_FORCE`], "Autoneg, No partner detected during force mode";
//! - negotiating, with the peer down or forced to a mode it does not advertise (no
//!   autonegotiation partner answers): [`NO_PARTNER`], "Autoneg, No partner detected";
//! - negotiating with a negotiating peer, no mode in common: [`NO_HCD`], "Autoneg, No
//!   Highest Common Denominator".
//!
//! Each port of the model is always cabled to the other (a direct-attach cable between A and
//! B, or the port's own loopback), so no port reports "No cable" (opcode 1024).

use crate::sim::mlx5::ifc::port::{FEC_FIRECODE, FEC_NONE, FEC_RS_528};
use crate::sim::mlx5::Port;

/// The port's modes, fastest first: (`MLX5E_*` bit, speed in Mb/s). 100GBASE-CR4 (20),
/// 50GBASE-CR2 (30), 40GBASE-CR4 (6), 25GBASE-CR (27), 10GBASE-CR (12).
pub const MODES: [(u32, u32); 5] = [
    (20, 100_000),
    (30, 50_000),
    (6, 40_000),
    (27, 25_000),
    (12, 10_000),
];

/// PTYS `eth_proto_capability`: every mode of [`MODES`].
pub const CAP: u32 = (1 << 20) | (1 << 30) | (1 << 6) | (1 << 27) | (1 << 12);

/// What a mode of [`MODES`] takes of the port: its lanes (PMLP `width`), the legacy PPLM
/// FEC field it reads its FEC from (an index of `PPLM_CAP` / `PPLM_ADMIN`, upstream's
/// `mlx5e_fec_supported_link_mode`), the FEC modes the port offers at it (PPLM bits) and
/// the one it runs when left to choose (admin 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mode {
    /// Lanes of the mode (100GBASE-CR4 and 40GBASE-CR4 four, 50GBASE-CR2 two, 25GBASE-CR
    /// and 10GBASE-CR one).
    pub lanes: u32,
    /// Index of the mode's PPLM field (10G/40G 0, 25G 1, 50G 2, 100G 4).
    pub pplm: usize,
    /// FEC modes offered: no FEC and FireCode (IEEE 802.3 Clause 74) at every speed,
    /// RS-FEC (528,514) (Clause 91 / 108) on the 25G lanes of 25G, 50G and 100G.
    pub fec_cap: u32,
    /// The FEC of auto: RS-FEC on 25G lanes (100GBASE-CR4 requires it, and a 25G or 50G
    /// copper link runs it by default), none at 10G and 40G.
    pub fec_auto: u32,
}

/// The [`Mode`] of `MLX5E_*` bit `m` (one of [`MODES`]; `None` for another).
pub fn mode(m: u32) -> Option<Mode> {
    let base_r = FEC_NONE | FEC_FIRECODE;
    let rs = base_r | FEC_RS_528;
    let (lanes, pplm, fec_cap, fec_auto) = match m {
        20 => (4, 4, rs, FEC_RS_528),
        30 => (2, 2, rs, FEC_RS_528),
        6 => (4, 0, base_r, FEC_NONE),
        27 => (1, 1, rs, FEC_RS_528),
        12 => (1, 0, base_r, FEC_NONE),
        _ => return None,
    };
    Some(Mode {
        lanes,
        pplm,
        fec_cap,
        fec_auto,
    })
}

/// The FEC modes the port offers in PPLM field `i` (`fec_override_cap_*`): those of the
/// modes of [`MODES`] that read it, 0 for a field none does (56G).
pub fn fec_cap(i: usize) -> u32 {
    MODES
        .iter()
        .filter_map(|&(bit, _)| mode(bit))
        .filter(|m| m.pplm == i)
        .fold(0, |c, m| c | m.fec_cap)
}

/// PDDR status opcode "Autoneg, No partner detected".
pub const NO_PARTNER: u32 = 2;
/// PDDR status opcode "Autoneg, No partner detected during force mode".
pub const NO_PARTNER_FORCE: u32 = 36;
/// PDDR status opcode "Autoneg, No Highest Common Denominator".
pub const NO_HCD: u32 = 39;

/// `an_status` of a completed negotiation (`MLX5_AN_COMPLETE`).
pub const AN_COMPLETE: u32 = 1;

/// The fastest mode of `modes` (one bit; 0 if none).
pub(in crate::sim::mlx5) fn fastest(modes: u32) -> u32 {
    MODES
        .iter()
        .map(|&(bit, _)| 1u32 << bit)
        .find(|m| modes & m != 0)
        .unwrap_or(0)
}

/// What port `pt` offers its partner: every advertised mode when it negotiates, the one
/// it runs when forced.
fn offer(pt: &Port) -> u32 {
    if pt.func.an_disabled {
        fastest(pt.func.ptys_admin)
    } else {
        pt.func.ptys_admin
    }
}

/// The mode port `p`'s link resolves to with the port it receives from (its peer `p ^ 1`,
/// or itself in loopback), whatever the administrative states; 0: none (no common mode,
/// or no peer).
pub(in crate::sim::mlx5) fn resolve(ports: &[Port], p: usize) -> u32 {
    let Some(pt) = ports.get(p) else {
        return 0;
    };
    let q = if pt.loopback { p } else { p ^ 1 };
    let Some(peer) = ports.get(q) else {
        return 0;
    };
    fastest(offer(pt) & offer(peer))
}

/// The partner's advertised modes as port `p`'s PTYS `eth_proto_lp_advertise` reports them
/// while its link is up (`oper`): only when both ends negotiate (0 otherwise).
pub(in crate::sim::mlx5) fn lp_advertise(ports: &[Port], p: usize, oper: bool) -> u32 {
    let Some(pt) = ports.get(p) else {
        return 0;
    };
    let q = if pt.loopback { p } else { p ^ 1 };
    match ports.get(q) {
        Some(peer) if oper && !pt.func.an_disabled && !peer.func.an_disabled => {
            peer.func.ptys_admin
        }
        _ => 0,
    }
}

/// Why port `p`'s link is down, as PDDR's troubleshooting page's status opcode (see the
/// module's comment); 0 while it is up or administratively down (nothing to troubleshoot).
pub(in crate::sim::mlx5) fn down_reason(ports: &[Port], p: usize) -> u32 {
    let Some(pt) = ports.get(p) else {
        return 0;
    };
    if !pt.link_up || super::vport::oper_up(ports, p) {
        return 0;
    }
    let peer = ports.get(p ^ 1).filter(|q| q.link_up);
    match (pt.func.an_disabled, peer) {
        (true, _) => NO_PARTNER_FORCE,
        (false, Some(q)) if !q.func.an_disabled => NO_HCD,
        (false, _) => NO_PARTNER,
    }
}
