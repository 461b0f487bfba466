// SPDX-License-Identifier: GPL-2.0

//! RSS resource commands: the RQT (CREATE/MODIFY/DESTROY_RQT, upstream `en/rqt.c`) and the
//! TIR, indirect with its Toeplitz hash or direct to one RQ (CREATE/MODIFY/DESTROY_TIR,
//! upstream `en/tir.c`). Re-exported by [`super::res`]; the model's half is
//! `sim/mlx5/cmd/rss.rs`.

use crate::hwif::mlx5::cmd::{build, fits, obj_cmd, obj_out, op, start, Field, FormatError};

// ---------------------------------------------------------------------------------------
// RQT

/// `create_rqt_in.rqt_context` / `modify_rqt_in.ctx` (`struct mlx5_ifc_rqtc_bits`): bit 0x100.
pub const RQTC: usize = 0x100;
/// `rqtc.rqt_max_size`: bit 0xb0, 16 bits.
pub const RQTC_RQT_MAX_SIZE: Field = Field::new(0xb0, 16).at(RQTC);
/// `rqtc.rqt_actual_size`: bit 0xd0, 16 bits.
pub const RQTC_RQT_ACTUAL_SIZE: Field = Field::new(0xd0, 16).at(RQTC);
/// Byte offset of `rqtc.rq_num[]` (bit 0x780 of rqtc, 0x880 of the command); each entry is
/// `struct mlx5_ifc_rq_num_bits` (8 reserved bits, 24-bit `rq_num`).
pub const RQTC_RQ_NUM_OFFSET: usize = 0x110;
/// `modify_rqt_in.rqtn`: bit 0x48, 24 bits.
pub const MODIFY_RQT_RQTN: Field = Field::new(0x48, 24);
/// `modify_rqt_in.bitmask.rqn_list`: bit 0xbf, 1 bit.
pub const MODIFY_RQT_BITMASK_RQN_LIST: Field = Field::new(0xbf, 1);

/// Input length of CREATE_RQT / MODIFY_RQT with `n` entries.
pub const fn rqt_len(n: usize) -> usize {
    RQTC_RQ_NUM_OFFSET + 4 * n
}

fn write_rqt(b: &mut [u8], max: u16, rqns: &[u32]) -> Result<(), FormatError> {
    RQTC_RQT_MAX_SIZE.set(b, u64::from(max));
    RQTC_RQT_ACTUAL_SIZE.set(b, rqns.len() as u64);
    for (i, &rqn) in rqns.iter().enumerate() {
        fits(u64::from(rqn), 24)?;
        let o = RQTC_RQ_NUM_OFFSET + 4 * i;
        b.get_mut(o..o + 4)
            .ok_or(FormatError::BadParam)?
            .copy_from_slice(&rqn.to_be_bytes());
    }
    Ok(())
}

/// CREATE_RQT with `rqt_max_size = max` and the table `rqns` (1..=max entries).
pub fn create_rqt(buf: &mut [u8], max: u16, rqns: &[u32]) -> Result<usize, FormatError> {
    if rqns.is_empty() || rqns.len() > usize::from(max) {
        return Err(FormatError::BadParam);
    }
    let len = rqt_len(rqns.len());
    let b = start(buf, len, op::CREATE_RQT, 0, &[])?;
    write_rqt(b, max, rqns)?;
    Ok(len)
}

/// `create_rqt_out.rqtn` (bit 0x48, 24 bits).
pub fn parse_create_rqt(out: &[u8]) -> Result<u32, FormatError> {
    obj_out(out)
}

/// MODIFY_RQT `rqtn`: replaces the table with `rqns` (`bitmask.rqn_list`).
pub fn modify_rqt(buf: &mut [u8], rqtn: u32, max: u16, rqns: &[u32]) -> Result<usize, FormatError> {
    fits(u64::from(rqtn), 24)?;
    if rqns.is_empty() || rqns.len() > usize::from(max) {
        return Err(FormatError::BadParam);
    }
    let len = rqt_len(rqns.len());
    let f = [
        (MODIFY_RQT_RQTN, u64::from(rqtn)),
        (MODIFY_RQT_BITMASK_RQN_LIST, 1),
    ];
    let b = start(buf, len, op::MODIFY_RQT, 0, &f)?;
    write_rqt(b, max, rqns)?;
    Ok(len)
}

/// DESTROY_RQT `rqtn`.
pub fn destroy_rqt(buf: &mut [u8], rqtn: u32) -> Result<usize, FormatError> {
    obj_cmd(buf, op::DESTROY_RQT, rqtn)
}

// ---------------------------------------------------------------------------------------
// TIR

/// `create_tir_in` length.
pub const CREATE_TIR_IN_LEN: usize = 272;
/// `create_tir_in.ctx` (`struct mlx5_ifc_tirc_bits`): bit 0x100.
pub const TIRC: usize = 0x100;
/// `tirc.disp_type`: bit 0x20, 4 bits.
pub const TIRC_DISP_TYPE: Field = Field::new(0x20, 4).at(TIRC);
/// `tirc.rx_hash_symmetric`: bit 0x100, 1 bit.
pub const TIRC_RX_HASH_SYMMETRIC: Field = Field::new(0x100, 1).at(TIRC);
/// `tirc.indirect_table`: bit 0x108, 24 bits.
pub const TIRC_INDIRECT_TABLE: Field = Field::new(0x108, 24).at(TIRC);
/// `tirc.rx_hash_fn`: bit 0x120, 4 bits.
pub const TIRC_RX_HASH_FN: Field = Field::new(0x120, 4).at(TIRC);
/// `tirc.transport_domain`: bit 0x128, 24 bits.
pub const TIRC_TRANSPORT_DOMAIN: Field = Field::new(0x128, 24).at(TIRC);
/// Byte offset of `tirc.rx_hash_toeplitz_key[10][0x20]` (bit 0x140 of tirc).
pub const TIRC_TOEPLITZ_KEY_OFFSET: usize = (TIRC + 0x140) / 8;
/// `tirc.rx_hash_field_selector_outer` (`rx_hash_field_select_bits`): bit 0x280 of tirc.
pub const TIRC_HASH_OUTER: usize = TIRC + 0x280;
/// `rx_hash_field_select.l3_prot_type`: bit 0x00, 1 bit.
pub const HASH_L3_PROT_TYPE: Field = Field::new(0x00, 1).at(TIRC_HASH_OUTER);
/// `rx_hash_field_select.l4_prot_type`: bit 0x01, 1 bit.
pub const HASH_L4_PROT_TYPE: Field = Field::new(0x01, 1).at(TIRC_HASH_OUTER);
/// `rx_hash_field_select.selected_fields`: bit 0x02, 30 bits.
pub const HASH_SELECTED_FIELDS: Field = Field::new(0x02, 30).at(TIRC_HASH_OUTER);

/// `disp_type`: indirect (`MLX5_TIRC_DISP_TYPE_INDIRECT`).
pub const TIRC_DISP_TYPE_INDIRECT: u8 = 1;
/// `rx_hash_fn`: Toeplitz (`MLX5_RX_HASH_FN_TOEPLITZ`).
pub const RX_HASH_FN_TOEPLITZ: u8 = 2;
/// Length of the Toeplitz key.
pub const TOEPLITZ_KEY_LEN: usize = 40;
/// `l3_prot_type`: IPv4 (`MLX5_L3_PROT_TYPE_IPV4`).
pub const L3_PROT_IPV4: u8 = 0;
/// `l3_prot_type`: IPv6.
pub const L3_PROT_IPV6: u8 = 1;
/// `l4_prot_type`: TCP (`MLX5_L4_PROT_TYPE_TCP`).
pub const L4_PROT_TCP: u8 = 0;
/// `l4_prot_type`: UDP.
pub const L4_PROT_UDP: u8 = 1;
/// `selected_fields`: source IP (`MLX5_HASH_FIELD_SEL_SRC_IP`).
pub const HASH_SEL_SRC_IP: u32 = 1 << 0;
/// `selected_fields`: destination IP.
pub const HASH_SEL_DST_IP: u32 = 1 << 1;
/// `selected_fields`: L4 source port.
pub const HASH_SEL_L4_SPORT: u32 = 1 << 2;
/// `selected_fields`: L4 destination port.
pub const HASH_SEL_L4_DPORT: u32 = 1 << 3;

/// Parameters of an indirect (RSS) CREATE_TIR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreateTir {
    /// Transport domain.
    pub transport_domain: u32,
    /// RQT the hash indexes.
    pub rqtn: u32,
    /// Toeplitz key.
    pub key: [u8; TOEPLITZ_KEY_LEN],
    /// `l3_prot_type` of the outer selector.
    pub l3_prot_type: u8,
    /// `l4_prot_type` of the outer selector.
    pub l4_prot_type: u8,
    /// `selected_fields` of the outer selector (`HASH_SEL_*`).
    pub selected_fields: u32,
}

/// The hash parameters of an indirect TIR (what MODIFY_TIR's `bitmask.hash` replaces):
/// Toeplitz, not symmetric, `key`, and the outer field selector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TirHash {
    /// Toeplitz key.
    pub key: [u8; TOEPLITZ_KEY_LEN],
    /// `l3_prot_type` of the outer selector.
    pub l3_prot_type: u8,
    /// `l4_prot_type` of the outer selector.
    pub l4_prot_type: u8,
    /// `selected_fields` of the outer selector (`HASH_SEL_*`).
    pub selected_fields: u32,
}

/// Writes the hash parameters into the TIR context at bit 0x100 of `b` (create_tir_in's
/// and modify_tir_in's `ctx`), as `mlx5e_tir_builder_build_rss` does (not symmetric here).
fn write_tir_hash(b: &mut [u8], h: &TirHash) -> Result<(), FormatError> {
    fits(u64::from(h.l3_prot_type), 1)?;
    fits(u64::from(h.l4_prot_type), 1)?;
    fits(u64::from(h.selected_fields), 30)?;
    TIRC_RX_HASH_SYMMETRIC.set(b, 0);
    TIRC_RX_HASH_FN.set(b, u64::from(RX_HASH_FN_TOEPLITZ));
    b.get_mut(TIRC_TOEPLITZ_KEY_OFFSET..TIRC_TOEPLITZ_KEY_OFFSET + TOEPLITZ_KEY_LEN)
        .ok_or(FormatError::BadParam)?
        .copy_from_slice(&h.key);
    HASH_L3_PROT_TYPE.set(b, u64::from(h.l3_prot_type));
    HASH_L4_PROT_TYPE.set(b, u64::from(h.l4_prot_type));
    HASH_SELECTED_FIELDS.set(b, u64::from(h.selected_fields));
    Ok(())
}

/// CREATE_TIR: indirect dispatch, Toeplitz hash, not symmetric.
pub fn create_tir(buf: &mut [u8], p: &CreateTir) -> Result<usize, FormatError> {
    fits(u64::from(p.transport_domain), 24)?;
    fits(u64::from(p.rqtn), 24)?;
    let f = [
        (TIRC_DISP_TYPE, u64::from(TIRC_DISP_TYPE_INDIRECT)),
        (TIRC_INDIRECT_TABLE, u64::from(p.rqtn)),
        (TIRC_TRANSPORT_DOMAIN, u64::from(p.transport_domain)),
    ];
    let b = start(buf, CREATE_TIR_IN_LEN, op::CREATE_TIR, 0, &f)?;
    write_tir_hash(
        b,
        &TirHash {
            key: p.key,
            l3_prot_type: p.l3_prot_type,
            l4_prot_type: p.l4_prot_type,
            selected_fields: p.selected_fields,
        },
    )?;
    Ok(CREATE_TIR_IN_LEN)
}

/// `tirc.inline_rqn`: bit 0xe8, 24 bits.
pub const TIRC_INLINE_RQN: Field = Field::new(0xe8, 24).at(TIRC);

/// CREATE_TIR with direct dispatch (`disp_type` 0): every frame it gets goes to RQ `rqn`,
/// unhashed (mlx5e's per-channel direct TIRs, which ethtool steering rules of `action Q`
/// forward to).
pub fn create_tir_direct(
    buf: &mut [u8],
    transport_domain: u32,
    rqn: u32,
) -> Result<usize, FormatError> {
    fits(u64::from(transport_domain), 24)?;
    fits(u64::from(rqn), 24)?;
    let f = [
        (TIRC_INLINE_RQN, u64::from(rqn)),
        (TIRC_TRANSPORT_DOMAIN, u64::from(transport_domain)),
    ];
    build(buf, CREATE_TIR_IN_LEN, op::CREATE_TIR, 0, &f)
}

/// `modify_tir_in` length (the TIR context at bit 0x100, as in create_tir_in).
pub const MODIFY_TIR_IN_LEN: usize = 272;
/// `modify_tir_in.tirn`: bit 0x48, 24 bits.
pub const MODIFY_TIR_TIRN: Field = Field::new(0x48, 24);
/// `modify_tir_in.bitmask.hash`: bit 0xbd (bitmask at 0x80, `hash` at its bit 0x3d).
pub const MODIFY_TIR_BITMASK_HASH: Field = Field::new(0xbd, 1);

/// MODIFY_TIR `tirn` with `bitmask.hash`: new hash parameters (key and field selector) for an
/// indirect TIR, as `mlx5e_tir_modify` after `mlx5e_tir_builder_build_rss`; the RQT stays.
pub fn modify_tir_hash(buf: &mut [u8], tirn: u32, h: &TirHash) -> Result<usize, FormatError> {
    fits(u64::from(tirn), 24)?;
    let f = [
        (MODIFY_TIR_TIRN, u64::from(tirn)),
        (MODIFY_TIR_BITMASK_HASH, 1),
    ];
    let b = start(buf, MODIFY_TIR_IN_LEN, op::MODIFY_TIR, 0, &f)?;
    write_tir_hash(b, h)?;
    Ok(MODIFY_TIR_IN_LEN)
}

/// `create_tir_out.tirn` (bit 0x48, 24 bits).
pub fn parse_create_tir(out: &[u8]) -> Result<u32, FormatError> {
    obj_out(out)
}

/// DESTROY_TIR `tirn`.
pub fn destroy_tir(buf: &mut [u8], tirn: u32) -> Result<usize, FormatError> {
    obj_cmd(buf, op::DESTROY_TIR, tirn)
}
