// SPDX-License-Identifier: GPL-2.0

//! Forward error correction through ACCESS_REG: PCAM (what the port has: port.c
//! `mlx5_query_pcam_reg`, the `MLX5_CAP_PCAM_REG` / `MLX5_CAP_PCAM_FEATURE` bits mlx5e
//! checks), PPLM (en/port.c `mlx5e_get_fec_mode`, `mlx5e_set_fec_mode`,
//! `mlx5e_fec_in_caps`; en_ethtool.c `pplm2ethtool_fec`, `mlx5e_set_fecparam`), PMLP
//! (`fec_num_lanes`) and PPCNT's physical layer groups (en_stats.c `mlx5e_stats_fec_get`).
//! Re-exported by the parent module.
//!
//! rsnic reads and writes the legacy per-speed FEC fields of PPLM (10G/40G, 25G, 50G, 56G,
//! 100G), those mlx5e handles on a device without the 50G- and 100G-per-lane PCAM features
//! (the model has none); the fields of those speeds are left alone (0 in a write: auto).

use super::reg::{access_reg, ppcnt_data, ACCESS_REG_READ, ACCESS_REG_WRITE};
use super::{access_reg_len, Field, FormatError};

/// Register id of PMLP, the port's lanes (`MLX5_REG_PMLP`).
pub const REG_PMLP: u16 = 0x5002;
/// Register id of PPLM, the port's FEC (`MLX5_REG_PPLM`).
pub const REG_PPLM: u16 = 0x5023;
/// Register id of PCAM, the port's capabilities (`MLX5_REG_PCAM`).
pub const REG_PCAM: u16 = 0x507f;

/// `pcam_reg` length (0x280 bits).
pub const PCAM_LEN: usize = 0x50;
/// `pplm_reg` length (0x280 bits).
pub const PPLM_LEN: usize = 0x50;
/// `pmlp_reg` length (0x200 bits).
pub const PMLP_LEN: usize = 0x40;

/// `pcam_reg.feature_group`: bit 0x8, 8 bits (`MLX5_PCAM_FEATURE_ENHANCED_FEATURES` = 0).
pub const PCAM_FEATURE_GROUP: Field = Field::new(0x8, 8);
/// `pcam_regs_5000_to_507f.pplm`: bit 0x40 + 0x5c.
pub const PCAM_REG_PPLM: Field = Field::new(0x9c, 1);
/// `pcam_regs_5000_to_507f.ppcnt`: bit 0x40 + 0x77.
pub const PCAM_REG_PPCNT: Field = Field::new(0xb7, 1);
/// `pcam_enhanced_features.fec_100G_per_lane_in_pplm`: bit 0x140 + 0x48.
pub const PCAM_FEC_100G_PER_LANE: Field = Field::new(0x188, 1);
/// `pcam_enhanced_features.fec_50G_per_lane_in_pplm`: bit 0x140 + 0x68.
pub const PCAM_FEC_50G_PER_LANE: Field = Field::new(0x1a8, 1);
/// `pcam_enhanced_features.ppcnt_statistical_group`: bit 0x140 + 0x7f.
pub const PCAM_PPCNT_STATISTICAL: Field = Field::new(0x1bf, 1);

/// `pplm_reg.fec_mode_active`: bit 0x68, 24 bits (bit n: FEC mode n runs).
pub const PPLM_FEC_MODE_ACTIVE: Field = Field::new(0x68, 24);
/// `fec_override_cap_*` of the legacy speeds, in the order of upstream's
/// `mlx5e_fec_supported_link_mode` (10G/40G, 25G, 50G, 56G, 100G).
pub const PPLM_CAP: [Field; LEGACY_SPEEDS] = [
    Field::new(0x9c, 4),
    Field::new(0x98, 4),
    Field::new(0x94, 4),
    Field::new(0x8c, 4),
    Field::new(0x90, 4),
];
/// `fec_override_admin_*` of the same speeds.
pub const PPLM_ADMIN: [Field; LEGACY_SPEEDS] = [
    Field::new(0xbc, 4),
    Field::new(0xb8, 4),
    Field::new(0xb4, 4),
    Field::new(0xac, 4),
    Field::new(0xb0, 4),
];
/// The legacy speeds of PPLM.
pub const LEGACY_SPEEDS: usize = 5;

/// `pmlp_reg.width`: bit 0x18, 8 bits (the port's lanes).
pub const PMLP_WIDTH: Field = Field::new(0x18, 8);

/// `grp` of the physical layer counters (`MLX5_PHYSICAL_LAYER_COUNTERS_GROUP`).
pub const PPCNT_PHYS: u8 = 0x12;
/// `grp` of the physical layer statistical counters
/// (`MLX5_PHYSICAL_LAYER_STATISTICAL_GROUP`).
pub const PPCNT_PHYS_STATISTICAL: u8 = 0x16;

/// Bit offsets in `ppcnt_reg` of the `phys_layer_cntrs` counters rsnic reads
/// (`counter_set` at bit 0x40).
pub mod phys {
    /// `fc_fec_corrected_blocks_lane0`; lanes 1..3 follow, 64 bits apart.
    pub const FC_CORRECTED_LANE0: usize = 0x200;
    /// `fc_fec_uncorrectable_blocks_lane0`; lanes 1..3 follow.
    pub const FC_UNCORRECTABLE_LANE0: usize = 0x300;
    /// `rs_fec_corrected_blocks`.
    pub const RS_CORRECTED: usize = 0x400;
    /// `rs_fec_uncorrectable_blocks`.
    pub const RS_UNCORRECTABLE: usize = 0x440;
    /// `phys_layer_statistical_cntrs.phy_corrected_bits` (group 0x16).
    pub const CORRECTED_BITS: usize = 0x100;
}

/// The FEC modes of PPLM (`enum mlx5e_fec_mode`, bit numbers of the mode fields).
pub mod mode {
    /// `MLX5E_FEC_NOFEC`.
    pub const NOFEC: u32 = 0;
    /// `MLX5E_FEC_FIRECODE`.
    pub const FIRECODE: u32 = 1;
    /// `MLX5E_FEC_RS_528_514`.
    pub const RS_528_514: u32 = 2;
    /// `MLX5E_FEC_RS_544_514`.
    pub const RS_544_514: u32 = 7;
    /// `MLX5E_FEC_LLRS_272_257_1`.
    pub const LLRS_272_257_1: u32 = 9;
}

/// ethtool's FEC bits (`ETHTOOL_FEC_*` of uapi ethtool.h).
pub mod ethtool_fec {
    /// `ETHTOOL_FEC_AUTO`.
    pub const AUTO: u32 = 1 << 1;
    /// `ETHTOOL_FEC_OFF`.
    pub const OFF: u32 = 1 << 2;
    /// `ETHTOOL_FEC_RS`.
    pub const RS: u32 = 1 << 3;
    /// `ETHTOOL_FEC_BASER`.
    pub const BASER: u32 = 1 << 4;
    /// `ETHTOOL_FEC_LLRS`.
    pub const LLRS: u32 = 1 << 5;
    /// The bits up to `ETHTOOL_FEC_LLRS_BIT` (`ETHTOOL_FEC_NONE` to `_LLRS`).
    pub const KNOWN: u32 = (LLRS << 1) - 1;
}

/// PPLM mode `n` as ethtool names it (`pplm_fec_2_ethtool`): 0 for a mode it has none for.
const fn mode_to_ethtool(n: u32) -> u32 {
    match n {
        mode::NOFEC => ethtool_fec::OFF,
        mode::FIRECODE => ethtool_fec::BASER,
        mode::RS_528_514 | mode::RS_544_514 => ethtool_fec::RS,
        mode::LLRS_272_257_1 => ethtool_fec::LLRS,
        _ => 0,
    }
}

/// A PPLM mode field (`fec_mode_active`, an admin field) as ethtool's bit
/// (`pplm2ethtool_fec`): none set is `AUTO`; else the lowest mode set's, 0 if it has none.
pub const fn pplm_to_ethtool(modes: u32) -> u32 {
    if modes == 0 {
        ethtool_fec::AUTO
    } else {
        mode_to_ethtool(modes.trailing_zeros())
    }
}

/// What PCAM says of the port (the bits mlx5e checks).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pcam {
    /// PPLM is implemented (`MLX5_CAP_PCAM_REG(pplm)`).
    pub pplm: bool,
    /// PPCNT is implemented (`MLX5_CAP_PCAM_REG(ppcnt)`).
    pub ppcnt: bool,
    /// PPCNT has the physical layer statistical group (`ppcnt_statistical_group`).
    pub ppcnt_statistical: bool,
    /// PPLM has the 50G-per-lane FEC fields (`fec_50G_per_lane_in_pplm`).
    pub fec_50g_per_lane: bool,
    /// PPLM has the 100G-per-lane FEC fields (`fec_100G_per_lane_in_pplm`).
    pub fec_100g_per_lane: bool,
}

/// PCAM read of the enhanced features and registers 0x5000..0x507f (feature group 0,
/// access register group 0), as `mlx5_query_pcam_reg` asks: no local port.
pub fn pcam_query(buf: &mut [u8]) -> Result<usize, FormatError> {
    let d = access_reg(buf, REG_PCAM, PCAM_LEN, ACCESS_REG_READ)?;
    PCAM_FEATURE_GROUP.set(d, 0);
    Ok(access_reg_len(PCAM_LEN))
}

/// Parses a PCAM read.
pub fn parse_pcam(out: &[u8]) -> Result<Pcam, FormatError> {
    let d = reg_data(out, PCAM_LEN)?;
    Ok(Pcam {
        pplm: PCAM_REG_PPLM.flag(d),
        ppcnt: PCAM_REG_PPCNT.flag(d),
        ppcnt_statistical: PCAM_PPCNT_STATISTICAL.flag(d),
        fec_50g_per_lane: PCAM_FEC_50G_PER_LANE.flag(d),
        fec_100g_per_lane: PCAM_FEC_100G_PER_LANE.flag(d),
    })
}

/// What rsnic reads of PPLM: the legacy speeds' fields.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pplm {
    /// `fec_mode_active` (bit n: mode n runs; 0 while the link is down).
    pub active: u32,
    /// `fec_override_cap_*` per speed (bit n: mode n can be set).
    pub cap: [u8; LEGACY_SPEEDS],
    /// `fec_override_admin_*` per speed (the mode set; 0: auto).
    pub admin: [u8; LEGACY_SPEEDS],
}

impl Pplm {
    /// The configured mode (`mlx5e_get_fec_mode`'s `fec_configured_mode`): the first
    /// speed's admin field that is set, 0 (auto) if none is.
    pub fn configured(&self) -> u32 {
        self.admin
            .iter()
            .find(|&&a| a != 0)
            .map_or(0, |&a| u32::from(a))
    }

    /// Whether a speed offers one of the modes of `modes` (`mlx5e_fec_in_caps`).
    pub fn in_caps(&self, modes: u32) -> bool {
        self.cap.iter().any(|&c| u32::from(c) & modes != 0)
    }

    /// The admin fields for policy `policy` (a mode bit, 0: auto), as
    /// `mlx5e_set_fec_mode` writes them: the policy at each speed that offers it, auto at
    /// the others; `None` when no speed offers a policy other than auto.
    pub fn with_policy(&self, policy: u32) -> Option<Self> {
        let mut n = *self;
        let mut set = false;
        for (a, &c) in n.admin.iter_mut().zip(self.cap.iter()) {
            if u32::from(c) & policy != 0 {
                *a = policy as u8;
                set = true;
            } else {
                *a = 0;
            }
        }
        (policy == 0 || set).then_some(n)
    }
}

/// Why `mlx5e_set_fecparam` refuses ethtool's FEC bits `fec` (`EOPNOTSUPP`), or the PPLM
/// policy they ask for (a mode bit; 0: auto). `per_lane_50g`: the device has the 50G per
/// lane fields (`fec_50G_per_lane_in_pplm`), without which LLRS is refused.
pub fn fec_policy(fec: u32, per_lane_50g: bool) -> Result<u32, &'static str> {
    if (fec & ethtool_fec::KNOWN).count_ones() > 1 {
        return Err("one FEC mode at a time (auto, off, rs, baser or llrs)");
    }
    // The first PPLM mode whose ethtool bit is asked for (`pplm_fec_2_ethtool` order).
    let policy = (0..=mode::LLRS_272_257_1)
        .find(|&m| mode_to_ethtool(m) & fec != 0)
        .map_or(0, |m| 1u32 << m);
    if policy >= 1 << mode::LLRS_272_257_1 && !per_lane_50g {
        return Err("llrs needs the 50G-per-lane FEC fields, which the device has not");
    }
    Ok(policy)
}

/// PPLM read of local port 1.
pub fn pplm_query(buf: &mut [u8]) -> Result<usize, FormatError> {
    access_reg(buf, REG_PPLM, PPLM_LEN, ACCESS_REG_READ)?;
    Ok(access_reg_len(PPLM_LEN))
}

/// Parses a PPLM read.
pub fn parse_pplm(out: &[u8]) -> Result<Pplm, FormatError> {
    let d = reg_data(out, PPLM_LEN)?;
    let mut p = Pplm {
        active: PPLM_FEC_MODE_ACTIVE.get32(d),
        ..Pplm::default()
    };
    for (i, (c, a)) in p.cap.iter_mut().zip(p.admin.iter_mut()).enumerate() {
        *c = PPLM_CAP[i].get8(d);
        *a = PPLM_ADMIN[i].get8(d);
    }
    Ok(p)
}

/// PPLM write of the admin fields of `p` (the other fields 0: the caps and the active
/// mode are read-only).
pub fn pplm_set(buf: &mut [u8], p: &Pplm) -> Result<usize, FormatError> {
    let d = access_reg(buf, REG_PPLM, PPLM_LEN, ACCESS_REG_WRITE)?;
    for (f, &a) in PPLM_ADMIN.iter().zip(p.admin.iter()) {
        f.set(d, u64::from(a));
    }
    Ok(access_reg_len(PPLM_LEN))
}

/// PMLP read of local port 1.
pub fn pmlp_query(buf: &mut [u8]) -> Result<usize, FormatError> {
    access_reg(buf, REG_PMLP, PMLP_LEN, ACCESS_REG_READ)?;
    Ok(access_reg_len(PMLP_LEN))
}

/// Parses a PMLP read: the port's lanes (`width`).
pub fn parse_pmlp(out: &[u8]) -> Result<u8, FormatError> {
    Ok(PMLP_WIDTH.get8(reg_data(out, PMLP_LEN)?))
}

/// The FEC block counters of PPCNT's physical layer group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PhysCounters {
    /// `fc_fec_corrected_blocks_lane0..3`.
    pub fc_corrected: [u64; 4],
    /// `fc_fec_uncorrectable_blocks_lane0..3`.
    pub fc_uncorrectable: [u64; 4],
    /// `rs_fec_corrected_blocks`.
    pub rs_corrected: u64,
    /// `rs_fec_uncorrectable_blocks`.
    pub rs_uncorrectable: u64,
}

/// Parses a PPCNT read of the physical layer group.
pub fn parse_ppcnt_phys(out: &[u8]) -> Result<PhysCounters, FormatError> {
    let d = ppcnt_data(out, PPCNT_PHYS)?;
    let c = |bit: usize| Field::new(bit, 64).get(d);
    let mut p = PhysCounters {
        rs_corrected: c(phys::RS_CORRECTED),
        rs_uncorrectable: c(phys::RS_UNCORRECTABLE),
        ..PhysCounters::default()
    };
    for i in 0..4 {
        p.fc_corrected[i] = c(phys::FC_CORRECTED_LANE0 + 64 * i);
        p.fc_uncorrectable[i] = c(phys::FC_UNCORRECTABLE_LANE0 + 64 * i);
    }
    Ok(p)
}

/// Parses a PPCNT read of the physical layer statistical group: `phy_corrected_bits`.
pub fn parse_ppcnt_corrected_bits(out: &[u8]) -> Result<u64, FormatError> {
    let d = ppcnt_data(out, PPCNT_PHYS_STATISTICAL)?;
    Ok(Field::new(phys::CORRECTED_BITS, 64).get(d))
}

/// The register data of an ACCESS_REG output for a register of `len` bytes.
pub(super) fn reg_data(out: &[u8], len: usize) -> Result<&[u8], FormatError> {
    let o = super::output(out, access_reg_len(len))?;
    o.get(super::ACCESS_REG_DATA..).ok_or(FormatError::BadParam)
}
