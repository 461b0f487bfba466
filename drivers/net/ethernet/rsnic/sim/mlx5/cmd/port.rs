// SPDX-License-Identifier: GPL-2.0

//! The device's half of the port capability, FEC and diagnostics registers, through
//! ACCESS_REG (the other port registers are in [`super::vport`]): PCAM, the registers and
//! features the port has (what mlx5_core reads at init, `mlx5_query_pcam_reg`); PPLM, the
//! FEC the port offers and runs (`mlx5e_get_fec_mode`, `mlx5e_set_fec_mode`); PMLP, its
//! lanes (`fec_num_lanes`); PDDR's troubleshooting page, why its link is down
//! (`query_port_status_opcode` of mlx5e's `get_link_ext_state`). Layouts in
//! [`crate::sim::mlx5::ifc::port`].
//!
//! The port's lanes and FEC follow the mode its link runs ([`link::Mode`]): PMLP `width`
//! is that mode's lanes (while the link is down, those of the fastest mode the port
//! advertises, the one it trains at first), and PPLM offers FEC in the legacy per-speed
//! fields of the port's speeds: 10G/40G no FEC and FireCode (BASE-R); 25G, 50G and 100G
//! (25G lanes) those and RS-FEC (528,514); 56G nothing; PCAM has no 50G- or 100G-per-lane
//! FEC fields. Each field's admin is 0 (auto) or one mode of its cap; a write of anything
//! else, of a mode in a field that offers none, or of the RS bypass, is refused (BAD_PARAM,
//! [`super::synd::PPLM_ADMIN`]). `fec_mode_active` is, while the link is up, the admin
//! mode of the running speed's field, or that speed's auto choice (RS-FEC on 25G lanes,
//! none at 10G and 40G: [`link::Mode::fec_auto`]); 0 while it is down. Each port keeps its
//! own setting: the model's wire does not make both ends agree (a link with different modes
//! at each end still comes up).
//!
//! PDDR answers only what mlx5e asks: the troubleshooting page (`page_select` 1) of local
//! port 1 with the monitor group (0), whose status opcode is [`link::down_reason`] (0 while
//! the link is up or the port disabled); another page, `pnat` or group is BAD_PARAM, and
//! so is a write (PDDR is read-only).

use super::{bad, link, synd, CmdResult, Cx};
use crate::hwif::hw::BusMemory;
use crate::sim::mlx5::ifc::{self, get, port::*, set, status};

/// The registers of 0x5000..=0x507f the model implements (PCAM's
/// `port_access_reg_cap_mask`).
const REGS: [u32; 10] = [
    PMLP,
    ifc::reg::PMTU,
    ifc::reg::PTYS,
    ifc::reg::PAOS,
    ifc::reg::PFCC,
    ifc::reg::PPCNT,
    ifc::reg::PPLR,
    PPLM,
    PDDR,
    PCAM,
];

/// The [`link::Mode`] port `p` runs, or while its link is down the one it trains at first
/// (the fastest it advertises).
fn port_mode(ports: &[crate::sim::mlx5::Port], p: usize) -> Option<link::Mode> {
    let m = match link::resolve(ports, p) {
        0 => ports
            .get(p)
            .map_or(0, |pt| link::fastest(pt.func.ptys_admin)),
        m => m,
    };
    link::mode(m.trailing_zeros())
}

impl<M: BusMemory> Cx<'_, '_, M> {
    /// ACCESS_REG of PCAM, PPLM, PMLP or PDDR (`None` for another register:
    /// [`Self::access_reg`] handles it).
    pub(super) fn access_port_reg(&mut self, id: u32, op_mod: u32) -> Option<CmdResult> {
        let len = match id {
            PCAM => PCAM_LEN,
            PPLM => PPLM_LEN,
            PMLP => PMLP_LEN,
            PDDR => PDDR_LEN,
            _ => return None,
        };
        Some(self.port_reg(id, len, op_mod))
    }

    fn port_reg(&mut self, id: u32, len: usize, op_mod: u32) -> CmdResult {
        use ifc::reg::{DATA, LOCAL_PORT, OP_WRITE};
        if self.inlen < DATA + len {
            return Err((status::BAD_INPUT_LEN, synd::REG_LENGTH));
        }
        if self.outlen < DATA + len {
            return Err((status::BAD_OUTPUT_LEN, synd::REG_LENGTH));
        }
        let r = self.inp.get(DATA..DATA + len).unwrap_or_default();
        // (PCAM has no local port: its feature group sits there.)
        if id != PCAM && get(r, LOCAL_PORT) > 1 {
            return Err(bad(synd::LOCAL_PORT));
        }
        let (group, reg_group) = (get(r, PCAM_FEATURE_GROUP), get(r, PCAM_ACCESS_REG_GROUP));
        if op_mod == OP_WRITE {
            if id != PPLM {
                // PCAM and PDDR are read-only; the port's lanes follow its mode.
                return Err(bad(synd::REG_READ_ONLY));
            }
            let admin = pplm_admin(r)?;
            self.port().func.fec_admin = admin;
        } else if id == PCAM && (group != 0 || reg_group != 0) {
            // Only the groups of 6.12 (enhanced features, registers 0x5000..0x507f).
            return Err(bad(synd::PCAM_GROUP));
        } else if id == PDDR {
            if get(r, PDDR_PAGE_SELECT) != PDDR_PAGE_TROUBLESHOOTING || get(r, PDDR_PNAT) != 0 {
                return Err(bad(synd::PDDR_PAGE));
            }
            if get(r, PDDR_GROUP_OPCODE) != 0 {
                return Err(bad(synd::PDDR_GROUP));
            }
        }
        let p = self.p;
        let oper = super::vport::oper_up(self.t.ports, p);
        let mode = port_mode(self.t.ports, p);
        let reason = link::down_reason(self.t.ports, p);
        let admin = self.port().func.fec_admin;
        let Some(o) = self.out.get_mut(DATA..DATA + len) else {
            return Ok(());
        };
        match id {
            PCAM => {
                for reg in REGS {
                    set(o, pcam_reg_bit(reg), 1);
                }
                set(o, PCAM_PPCNT_STATISTICAL_GROUP, 1);
            }
            PPLM => {
                set(o, LOCAL_PORT, 1);
                for (i, (&c, &a)) in PPLM_CAP.iter().zip(PPLM_ADMIN.iter()).enumerate() {
                    set(o, c, link::fec_cap(i));
                    set(o, a, u32::from(admin.get(i).copied().unwrap_or(0)));
                }
                // The running speed's admin mode, or its auto choice.
                let active = match mode {
                    Some(m) if oper => match admin.get(m.pplm).copied().unwrap_or(0) {
                        0 => m.fec_auto,
                        a => u32::from(a),
                    },
                    _ => 0,
                };
                set(o, PPLM_FEC_MODE_ACTIVE, active);
            }
            PDDR => {
                set(o, LOCAL_PORT, 1);
                set(o, PDDR_PAGE_SELECT, PDDR_PAGE_TROUBLESHOOTING);
                set(o, PDDR_MONITOR_OPCODE, reason);
            }
            _ => {
                set(o, LOCAL_PORT, 1);
                set(o, PMLP_WIDTH, mode.map_or(0, |m| m.lanes));
            }
        }
        Ok(())
    }
}

/// The legacy admin fields of a PPLM write `r`, if the port can take them: each 0 (auto)
/// or one mode its speed offers ([`link::fec_cap`]), and every per-lane field and the RS
/// bypass 0 (the port has none). The read-only fields (caps, active mode) are ignored, as
/// mlx5e writes back what it read.
fn pplm_admin(r: &[u8]) -> Result<[u8; PPLM_ADMIN.len()], (u8, u32)> {
    let mut admin = [0u8; PPLM_ADMIN.len()];
    for (i, (&f, a)) in PPLM_ADMIN.iter().zip(admin.iter_mut()).enumerate() {
        let v = get(r, f);
        if v != 0 && (!v.is_power_of_two() || v & !link::fec_cap(i) != 0) {
            return Err(bad(synd::PPLM_ADMIN));
        }
        *a = v as u8;
    }
    let others = PPLM_ADMIN_PER_LANE.iter().any(|&f| get(r, f) != 0);
    if others || get(r, PPLM_RS_BYPASS_ADMIN) != 0 {
        return Err(bad(synd::PPLM_ADMIN));
    }
    Ok(admin)
}
