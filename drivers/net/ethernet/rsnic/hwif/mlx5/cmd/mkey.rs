// SPDX-License-Identifier: GPL-2.0

//! The memory key of the data path and the receive queue counters: CREATE_MKEY /
//! DESTROY_MKEY as `mlx5e_create_mkey` makes mlx5e's key (mr.c `mlx5_core_create_mkey`: a
//! physical-address key, local read and write, over the whole address space), and
//! ALLOC_Q_COUNTER / QUERY_Q_COUNTER / DEALLOC_Q_COUNTER as en_main.c / en_stats.c use them
//! for `rx_out_of_buffer`. Layouts of `create_mkey_in` (with `mkc`), `destroy_mkey_in` and
//! the `*_q_counter_*` structures in mlx5_ifc.h.

use super::{build, fits, op, output, Field, FormatError};

/// `create_mkey_in` length without a translation list (0x880 bits).
pub const CREATE_MKEY_IN_LEN: usize = 0x110;
/// Length of `create_mkey_out`, `destroy_mkey_in/out` and the Q counter commands but
/// QUERY_Q_COUNTER's.
pub const SHORT_LEN: usize = 16;
/// `query_q_counter_in` length (0x100 bits).
pub const QUERY_Q_COUNTER_IN_LEN: usize = 0x20;
/// `query_q_counter_out` length (0x800 bits).
pub const QUERY_Q_COUNTER_OUT_LEN: usize = 0x100;

/// `create_mkey_in.memory_key_mkey_entry` (`struct mlx5_ifc_mkc_bits`): bit 0x80.
const MKC: usize = 0x80;
/// `mkc.lw`: bit 0x14 (local write).
pub const MKC_LW: Field = Field::new(0x14, 1).at(MKC);
/// `mkc.lr`: bit 0x15 (local read).
pub const MKC_LR: Field = Field::new(0x15, 1).at(MKC);
/// `mkc.access_mode_1_0`: bit 0x16, 2 bits (0: PA, `MLX5_MKC_ACCESS_MODE_PA`).
pub const MKC_ACCESS_MODE_1_0: Field = Field::new(0x16, 2).at(MKC);
/// `mkc.qpn`: bit 0x20, 24 bits (0xffffff: no QP).
pub const MKC_QPN: Field = Field::new(0x20, 24).at(MKC);
/// `mkc.mkey_7_0`: bit 0x38, 8 bits: the key's variant, chosen by the driver.
pub const MKC_MKEY_7_0: Field = Field::new(0x38, 8).at(MKC);
/// `mkc.length64`: bit 0x60 (the key covers the whole address space).
pub const MKC_LENGTH64: Field = Field::new(0x60, 1).at(MKC);
/// `mkc.pd`: bit 0x68, 24 bits.
pub const MKC_PD: Field = Field::new(0x68, 24).at(MKC);
/// `create_mkey_out.mkey_index` / `destroy_mkey_in.mkey_index`: bit 0x48, 24 bits.
pub const MKEY_INDEX: Field = Field::new(0x48, 24);

/// `alloc_q_counter_out.counter_set_id` / `dealloc_q_counter_in.counter_set_id`: bit 0x58,
/// 8 bits.
pub const COUNTER_SET_ID: Field = Field::new(0x58, 8);
/// `query_q_counter_in.counter_set_id`: bit 0xf8, 8 bits.
pub const QUERY_COUNTER_SET_ID: Field = Field::new(0xf8, 8);
/// `query_q_counter_out.out_of_buffer`: bit 0x180, 32 bits.
pub const OUT_OF_BUFFER: Field = Field::new(0x180, 32);

/// CREATE_MKEY of a PA-mode key, local read and write, `length64`, in protection domain
/// `pd`, with variant byte `variant` (`mlx5e_create_mkey`).
pub fn create_mkey(buf: &mut [u8], pd: u32, variant: u8) -> Result<usize, FormatError> {
    let pd = fits(u64::from(pd), 24)?;
    let f = [
        (MKC_ACCESS_MODE_1_0, 0),
        (MKC_LW, 1),
        (MKC_LR, 1),
        (MKC_QPN, 0xff_ffff),
        (MKC_MKEY_7_0, u64::from(variant)),
        (MKC_LENGTH64, 1),
        (MKC_PD, pd),
    ];
    build(buf, CREATE_MKEY_IN_LEN, op::CREATE_MKEY, 0, &f)
}

/// The key CREATE_MKEY made: `mkey_index << 8 | variant` (`mlx5_idx_to_mkey`), what data
/// segments carry as their lkey. An index of 0 or beyond 24 bits is refused.
pub fn parse_create_mkey(out: &[u8], variant: u8) -> Result<u32, FormatError> {
    let index = MKEY_INDEX.get32(output(out, SHORT_LEN)?);
    if index == 0 {
        return Err(FormatError::BadParam);
    }
    Ok(index << 8 | u32::from(variant))
}

/// DESTROY_MKEY of key `mkey` (its index, `mlx5_mkey_to_idx`).
pub fn destroy_mkey(buf: &mut [u8], mkey: u32) -> Result<usize, FormatError> {
    let f = [(MKEY_INDEX, u64::from(mkey >> 8))];
    build(buf, SHORT_LEN, op::DESTROY_MKEY, 0, &f)
}

/// ALLOC_Q_COUNTER.
pub fn alloc_q_counter(buf: &mut [u8]) -> Result<usize, FormatError> {
    build(buf, SHORT_LEN, op::ALLOC_Q_COUNTER, 0, &[])
}

/// The counter set id ALLOC_Q_COUNTER returned (0 is refused: an RQ with `counter_set_id`
/// 0 counts nowhere).
pub fn parse_alloc_q_counter(out: &[u8]) -> Result<u8, FormatError> {
    match COUNTER_SET_ID.get8(output(out, SHORT_LEN)?) {
        0 => Err(FormatError::BadParam),
        id => Ok(id),
    }
}

/// DEALLOC_Q_COUNTER of set `id`.
pub fn dealloc_q_counter(buf: &mut [u8], id: u8) -> Result<usize, FormatError> {
    let f = [(COUNTER_SET_ID, u64::from(id))];
    build(buf, SHORT_LEN, op::DEALLOC_Q_COUNTER, 0, &f)
}

/// QUERY_Q_COUNTER of set `id` (not clearing, as `mlx5e_update_q_counter`).
pub fn query_q_counter(buf: &mut [u8], id: u8) -> Result<usize, FormatError> {
    let f = [(QUERY_COUNTER_SET_ID, u64::from(id))];
    build(buf, QUERY_Q_COUNTER_IN_LEN, op::QUERY_Q_COUNTER, 0, &f)
}

/// `query_q_counter_out.out_of_buffer`: packets dropped for lack of a receive WQE.
pub fn parse_out_of_buffer(out: &[u8]) -> Result<u32, FormatError> {
    Ok(OUT_OF_BUFFER.get32(output(out, QUERY_Q_COUNTER_OUT_LEN)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_mkey_layout() {
        let mut b = [0xaau8; CREATE_MKEY_IN_LEN];
        assert_eq!(create_mkey(&mut b, 5, 0x42), Ok(CREATE_MKEY_IN_LEN));
        assert_eq!(&b[..8], &[0x02, 0x00, 0, 0, 0, 0, 0, 0]);
        // mkc at byte 0x10: lw (bit 0x14) and lr (0x15) in byte 0x12, access mode 0.
        assert_eq!(&b[0x10..0x14], &[0, 0, 0x0c, 0]);
        assert_eq!(&b[0x14..0x18], &[0xff, 0xff, 0xff, 0x42]);
        // length64 (bit 0x60 of mkc) and pd.
        assert_eq!(&b[0x1c..0x20], &[0x80, 0, 0, 5]);
        assert!(b[0x20..].iter().all(|&x| x == 0));
        assert!(create_mkey(&mut b, 1 << 24, 0).is_err());
        let mut o = [0u8; 16];
        o[0x09..0x0c].copy_from_slice(&[0, 0, 0x21]);
        assert_eq!(parse_create_mkey(&o, 0x42), Ok(0x2142));
        o[0x0b] = 0;
        assert!(parse_create_mkey(&o, 0x42).is_err());
        assert_eq!(destroy_mkey(&mut b, 0x2142), Ok(16));
        assert_eq!(
            &b[..16],
            &[2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x21, 0, 0, 0, 0]
        );
    }

    #[test]
    fn q_counter_layouts() {
        let mut b = [0xaau8; 0x20];
        assert_eq!(alloc_q_counter(&mut b), Ok(16));
        assert_eq!(&b[..2], &[0x07, 0x71]);
        let mut o = [0u8; 16];
        o[0x0b] = 3;
        assert_eq!(parse_alloc_q_counter(&o), Ok(3));
        o[0x0b] = 0;
        assert!(parse_alloc_q_counter(&o).is_err());
        assert_eq!(dealloc_q_counter(&mut b, 3), Ok(16));
        assert_eq!((&b[..2], b[0x0b]), (&[0x07, 0x72][..], 3));
        assert_eq!(query_q_counter(&mut b, 4), Ok(0x20));
        assert_eq!((&b[..2], b[0x1f], b[0x18]), (&[0x07, 0x73][..], 4, 0));
        let mut q = [0u8; QUERY_Q_COUNTER_OUT_LEN];
        q[0x30..0x34].copy_from_slice(&77u32.to_be_bytes());
        assert_eq!(parse_out_of_buffer(&q), Ok(77));
        assert!(parse_out_of_buffer(&q[..0x40]).is_err());
    }
}
