// SPDX-License-Identifier: GPL-2.0

//! The device's half of the port capability and FEC registers, through ACCESS_REG (the
//! other port registers are in [`super::vport`]): PCAM, the registers and features the
//! port has (what mlx5_core reads at init, `mlx5_query_pcam_reg`); PPLM, the FEC the port
//! offers and runs (`mlx5e_get_fec_mode`, `mlx5e_set_fec_mode`); PMLP, its lanes
//! (`fec_num_lanes`). Layouts in [`crate::sim::mlx5::ifc::port`].
//!
//! The port runs one mode, 100GBASE-CR4 (4 lanes of 25G), so PPLM offers FEC in the 100G
//! field only: no FEC, FireCode (BASE-R) and RS-FEC (528,514), the modes mlx5e knows for a
//! link of 25G lanes; every other speed's field offers nothing (cap 0), and PCAM has no
//! 50G- or 100G-per-lane FEC fields. The admin field of 100G is 0 (auto: the port picks
//! RS-FEC, which 100GBASE-CR4 requires, IEEE 802.3 Clause 91) or one mode of the cap; a
//! write of anything else, of a mode in another speed's field, or of the RS bypass, is
//! refused (BAD_PARAM, [`super::synd::PPLM_ADMIN`]). `fec_mode_active` is the mode running
//! while the port is up, 0 while it is down. Each port keeps its own setting: the model's
//! wire does not make both ends agree (a link with different modes at each end still
//! comes up).

use super::{bad, synd, CmdResult, Cx};
use crate::hwif::hw::BusMemory;
use crate::sim::mlx5::ifc::{self, get, port::*, set, status};

/// The FEC modes the port offers at 100G (`fec_override_cap_100g`).
pub const FEC_CAP_100G: u32 = FEC_NONE | FEC_FIRECODE | FEC_RS_528;

/// The lanes of the port's one mode, 100GBASE-CR4 (PMLP `width`).
pub const LANES: u32 = 4;

/// The registers of 0x5000..=0x507f the model implements (PCAM's
/// `port_access_reg_cap_mask`).
const REGS: [u32; 9] = [
    PMLP,
    ifc::reg::PMTU,
    ifc::reg::PTYS,
    ifc::reg::PAOS,
    ifc::reg::PFCC,
    ifc::reg::PPCNT,
    ifc::reg::PPLR,
    PPLM,
    PCAM,
];

/// The FEC mode a port with admin field `admin` (0: auto) runs, as a `fec_mode_active`
/// bit.
pub(in crate::sim::mlx5) fn active_fec(admin: u8) -> u32 {
    if admin == 0 {
        FEC_RS_528
    } else {
        u32::from(admin)
    }
}

impl<M: BusMemory> Cx<'_, '_, M> {
    /// ACCESS_REG of PCAM, PPLM or PMLP (`None` for another register: [`Self::access_reg`]
    /// handles it).
    pub(super) fn access_port_reg(&mut self, id: u32, op_mod: u32) -> Option<CmdResult> {
        let len = match id {
            PCAM => PCAM_LEN,
            PPLM => PPLM_LEN,
            PMLP => PMLP_LEN,
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
                // PCAM is read-only; the port's lanes are fixed.
                return Err(bad(synd::REG_READ_ONLY));
            }
            let admin = pplm_admin(r)?;
            self.port().func.fec_admin = admin;
        } else if id == PCAM && (group != 0 || reg_group != 0) {
            // Only the groups of 6.12 (enhanced features, registers 0x5000..0x507f).
            return Err(bad(synd::PCAM_GROUP));
        }
        let p = self.p;
        let oper = super::vport::oper_up(self.t.ports, p);
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
                if let Some(&c) = PPLM_CAP.get(PPLM_100G) {
                    set(o, c, FEC_CAP_100G);
                }
                if let Some(&a) = PPLM_ADMIN.get(PPLM_100G) {
                    set(o, a, u32::from(admin));
                }
                set(
                    o,
                    PPLM_FEC_MODE_ACTIVE,
                    if oper { active_fec(admin) } else { 0 },
                );
            }
            _ => {
                set(o, LOCAL_PORT, 1);
                set(o, PMLP_WIDTH, LANES);
            }
        }
        Ok(())
    }
}

/// The 100G admin field of a PPLM write `r`, if the port can take it: 0 (auto) or one mode
/// of [`FEC_CAP_100G`], and every other speed's field and the RS bypass 0 (they offer
/// nothing). The read-only fields (caps, active mode) are ignored, as mlx5e writes back
/// what it read.
fn pplm_admin(r: &[u8]) -> Result<u8, (u8, u32)> {
    let mut admin = 0;
    for (i, &f) in PPLM_ADMIN.iter().enumerate() {
        let v = get(r, f);
        let cap = if i == PPLM_100G { FEC_CAP_100G } else { 0 };
        if v != 0 && (!v.is_power_of_two() || v & !cap != 0) {
            return Err(bad(synd::PPLM_ADMIN));
        }
        if i == PPLM_100G {
            admin = v as u8;
        }
    }
    let others = PPLM_ADMIN_PER_LANE.iter().any(|&f| get(r, f) != 0);
    if others || get(r, PPLM_RS_BYPASS_ADMIN) != 0 {
        return Err(bad(synd::PPLM_ADMIN));
    }
    Ok(admin)
}
