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
//! negotiation completed. The speed matters for nothing else: the model does not pace
//! frames. A port in loopback resolves with itself: its fastest mode.

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

/// `an_status` of a completed negotiation (`MLX5_AN_COMPLETE`).
pub const AN_COMPLETE: u32 = 1;

/// The fastest mode of `modes` (one bit; 0 if none).
fn fastest(modes: u32) -> u32 {
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
