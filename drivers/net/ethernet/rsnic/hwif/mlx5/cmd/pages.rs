// SPDX-License-Identifier: GPL-2.0

//! Firmware pages (pagealloc.c): QUERY_PAGES, which says how many 4 KiB pages the function's
//! firmware wants (`mlx5_cmd_query_pages`: boot pages before the capabilities, init pages
//! before INIT_HCA), and MANAGE_PAGES, which gives pages (`give_pages`), takes them back
//! (`reclaim_pages`) or tells the firmware the driver cannot give (`page_notify_fail`).
//! Layouts of `query_pages_in/out` and `manage_pages_in/out` in mlx5_ifc.h.
//!
//! A page count from the device is signed: a negative count asks the driver to take pages
//! back (`mlx5_eqe_page_req.num_pages`, `query_pages_out.num_pages`). Every count and every
//! address the device returns is checked here before the caller uses it: a TAKE answers at
//! most the entries asked for and that fit the output, and each address is 4 KiB aligned
//! and not 0.

use super::{build, fits, op, output, start, Field, FormatError};

/// `query_pages_in` / `query_pages_out` length (0x80 bits).
pub const QUERY_PAGES_LEN: usize = 16;
/// `manage_pages_in.pas[]` / `manage_pages_out.pas[]`: byte 0x10, 8 bytes per page.
pub const MANAGE_PAGES_PAS: usize = 0x10;
/// The size of a firmware page (`MLX5_ADAPTER_PAGE_SIZE`).
pub const FW_PAGE_SIZE: usize = 4096;
/// Most pages rsnic gives one function's firmware (64 MiB): a firmware asking for more is
/// refused (upstream has no cap; a NIC function's firmware wants a few MiB).
pub const MAX_FW_PAGES: u32 = 16384;
/// Most pages one MANAGE_PAGES carries, given or taken (its input or output then takes
/// 16 + 8 * 256 bytes: five mailbox blocks).
pub const BATCH_PAGES: u32 = 256;

/// `*_pages_in.function_id`: bit 0x50, 16 bits (0: the function itself).
pub const FUNCTION_ID: Field = Field::new(0x50, 16);
/// `query_pages_out.num_pages`: bit 0x60, 32 bits (signed).
pub const NUM_PAGES: Field = Field::new(0x60, 32);
/// `manage_pages_in.input_num_entries`: bit 0x60, 32 bits.
pub const INPUT_NUM_ENTRIES: Field = Field::new(0x60, 32);
/// `manage_pages_out.output_num_entries`: bit 0x40, 32 bits.
pub const OUTPUT_NUM_ENTRIES: Field = Field::new(0x40, 32);

/// QUERY_PAGES op_mod: boot pages (`MLX5_QUERY_PAGES_IN_OP_MOD_BOOT_PAGES`).
pub const QUERY_BOOT: u16 = 1;
/// QUERY_PAGES op_mod: init pages (`MLX5_QUERY_PAGES_IN_OP_MOD_INIT_PAGES`).
pub const QUERY_INIT: u16 = 2;
/// QUERY_PAGES op_mod: regular pages (`MLX5_QUERY_PAGES_IN_OP_MOD_REGULAR_PAGES`).
pub const QUERY_REGULAR: u16 = 3;
/// MANAGE_PAGES op_mod: the driver cannot give (`MLX5_PAGES_CANT_GIVE`).
pub const CANT_GIVE: u16 = 0;
/// MANAGE_PAGES op_mod: pages given (`MLX5_PAGES_GIVE`).
pub const GIVE: u16 = 1;
/// MANAGE_PAGES op_mod: pages taken back (`MLX5_PAGES_TAKE`).
pub const TAKE: u16 = 2;

/// Event type of a page request (`MLX5_EVENT_TYPE_PAGE_REQUEST`).
pub const EVENT_TYPE_PAGE_REQUEST: u8 = 0x0b;
/// `mlx5_eqe_page_req.func_id` (BE16) at byte 0x22 of the EQE (`data` at 0x20).
pub const EQE_FUNC_ID: usize = 0x22;
/// `mlx5_eqe_page_req.num_pages` (BE32, signed) at byte 0x24 of the EQE.
pub const EQE_NUM_PAGES: usize = 0x24;

/// Input length of a MANAGE_PAGES GIVE of `n` pages.
pub const fn give_len(n: usize) -> usize {
    MANAGE_PAGES_PAS + 8 * n
}

/// Output length of a MANAGE_PAGES TAKE of up to `n` pages.
pub const fn take_out_len(n: usize) -> usize {
    MANAGE_PAGES_PAS + 8 * n
}

/// QUERY_PAGES of kind `op_mod` ([`QUERY_BOOT`], [`QUERY_INIT`], [`QUERY_REGULAR`]) for the
/// function itself.
pub fn query_pages(buf: &mut [u8], op_mod: u16) -> Result<usize, FormatError> {
    if !(QUERY_BOOT..=QUERY_REGULAR).contains(&op_mod) {
        return Err(FormatError::BadParam);
    }
    build(buf, QUERY_PAGES_LEN, op::QUERY_PAGES, op_mod, &[])
}

/// `query_pages_out`: (function id, pages wanted; negative: pages to take back).
pub fn parse_query_pages(out: &[u8]) -> Result<(u16, i32), FormatError> {
    let o = output(out, QUERY_PAGES_LEN)?;
    Ok((FUNCTION_ID.get(o) as u16, NUM_PAGES.get32(o) as i32))
}

/// MANAGE_PAGES GIVE of `pages` (bus addresses, each 4 KiB aligned and not 0; at least one).
pub fn give_pages(buf: &mut [u8], pages: &[u64]) -> Result<usize, FormatError> {
    if pages.is_empty() || pages.iter().any(|&a| !page_ok(a)) {
        return Err(FormatError::BadParam);
    }
    let n = fits(pages.len() as u64, 32)?;
    let len = give_len(pages.len());
    let b = start(buf, len, op::MANAGE_PAGES, GIVE, &[(INPUT_NUM_ENTRIES, n)])?;
    for (i, a) in pages.iter().enumerate() {
        let o = MANAGE_PAGES_PAS + 8 * i;
        b[o..o + 8].copy_from_slice(&a.to_be_bytes());
    }
    Ok(len)
}

/// MANAGE_PAGES TAKE of up to `n` pages (the output must hold [`take_out_len`]`(n)`).
pub fn take_pages(buf: &mut [u8], n: u32) -> Result<usize, FormatError> {
    if n == 0 {
        return Err(FormatError::BadParam);
    }
    let f = [(INPUT_NUM_ENTRIES, u64::from(n))];
    build(buf, MANAGE_PAGES_PAS, op::MANAGE_PAGES, TAKE, &f)
}

/// MANAGE_PAGES CANT_GIVE: the driver cannot meet a page request of `n` pages.
pub fn cant_give(buf: &mut [u8], n: u32) -> Result<usize, FormatError> {
    let f = [(INPUT_NUM_ENTRIES, u64::from(n))];
    build(buf, MANAGE_PAGES_PAS, op::MANAGE_PAGES, CANT_GIVE, &f)
}

/// Whether `a` can be a firmware page: not 0, 4 KiB aligned.
pub const fn page_ok(a: u64) -> bool {
    a != 0 && a % FW_PAGE_SIZE as u64 == 0
}

/// The pages a TAKE of up to `asked` returned, from its output `out` (of the length
/// posted). Refused whole when the count exceeds what was asked or what the output holds,
/// or an address is not a page.
pub fn parse_take(out: &[u8], asked: u32) -> Result<TakenPages<'_>, FormatError> {
    let o = output(out, MANAGE_PAGES_PAS)?;
    let n = OUTPUT_NUM_ENTRIES.get32(o);
    if n > asked {
        return Err(FormatError::BadParam);
    }
    let list = out
        .get(MANAGE_PAGES_PAS..give_len(n as usize))
        .ok_or(FormatError::BadParam)?;
    let t = TakenPages { list };
    if t.iter().any(|a| !page_ok(a)) {
        return Err(FormatError::BadParam);
    }
    Ok(t)
}

/// The addresses a TAKE returned (checked by [`parse_take`]).
#[derive(Debug, Clone, Copy)]
pub struct TakenPages<'a> {
    list: &'a [u8],
}

impl TakenPages<'_> {
    /// How many pages came back.
    pub fn len(&self) -> usize {
        self.list.len() / 8
    }

    /// Whether none came back.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The returned bus addresses.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.list.chunks_exact(8).map(|c| {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            u64::from_be_bytes(a)
        })
    }
}

/// A page request EQE's (function id, pages: positive to give, negative to take back).
pub fn parse_page_request(eqe: &[u8]) -> Option<(u16, i32)> {
    let f = eqe.get(EQE_FUNC_ID..EQE_FUNC_ID + 2)?;
    let n = eqe.get(EQE_NUM_PAGES..EQE_NUM_PAGES + 4)?;
    Some((
        u16::from_be_bytes([f[0], f[1]]),
        i32::from_be_bytes([n[0], n[1], n[2], n[3]]),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_and_give_layouts() {
        let mut b = [0xffu8; 64];
        assert_eq!(query_pages(&mut b, QUERY_INIT), Ok(16));
        assert_eq!(&b[..8], &[0x01, 0x07, 0, 0, 0, 0, 0, 2]);
        assert_eq!(&b[8..16], &[0; 8]);
        assert_eq!(query_pages(&mut b, 0), Err(FormatError::BadParam));
        let mut o = [0u8; 16];
        o[0x0b] = 0;
        o[0x0c..0x10].copy_from_slice(&(-5i32).to_be_bytes());
        assert_eq!(parse_query_pages(&o), Ok((0, -5)));
        assert_eq!(give_pages(&mut b, &[0x1000, 0x3000]), Ok(0x20));
        assert_eq!(&b[..8], &[0x01, 0x08, 0, 0, 0, 0, 0, 1]);
        assert_eq!(&b[0x0c..0x10], &[0, 0, 0, 2]);
        assert_eq!(&b[0x10..0x18], &0x1000u64.to_be_bytes());
        assert_eq!(&b[0x18..0x20], &0x3000u64.to_be_bytes());
        assert_eq!(give_pages(&mut b, &[0x1008]), Err(FormatError::BadParam));
        assert_eq!(give_pages(&mut b, &[0]), Err(FormatError::BadParam));
        assert_eq!(give_pages(&mut b, &[]), Err(FormatError::BadParam));
        assert!(
            give_pages(&mut b, &[0x1000; 7]).is_err(),
            "too short a buffer"
        );
        assert_eq!(take_pages(&mut b, 3), Ok(16));
        assert_eq!(&b[..8], &[0x01, 0x08, 0, 0, 0, 0, 0, 2]);
        assert_eq!(&b[0x0c..0x10], &[0, 0, 0, 3]);
        assert_eq!(cant_give(&mut b, 9), Ok(16));
        assert_eq!(&b[6..8], &[0, 0]);
    }

    #[test]
    fn a_take_answer_is_checked() {
        let mut o = [0u8; 0x10 + 8 * 2];
        o[0x0b] = 2;
        o[0x10..0x18].copy_from_slice(&0x5000u64.to_be_bytes());
        o[0x18..0x20].copy_from_slice(&0x7000u64.to_be_bytes());
        let t = parse_take(&o, 2).unwrap();
        assert_eq!(t.len(), 2);
        assert!(t.iter().eq([0x5000, 0x7000]));
        assert!(parse_take(&o, 1).is_err(), "more than asked");
        o[0x0b] = 3;
        assert!(parse_take(&o, 4).is_err(), "more than the output holds");
        o[0x0b] = 2;
        o[0x1f] = 8;
        assert!(parse_take(&o, 2).is_err(), "an address that is no page");
        o[0x0b] = 0;
        assert!(parse_take(&o, 2).unwrap().is_empty());
    }

    #[test]
    fn page_request_eqe() {
        let mut e = [0u8; 64];
        e[1] = EVENT_TYPE_PAGE_REQUEST;
        e[0x24..0x28].copy_from_slice(&(-7i32).to_be_bytes());
        assert_eq!(parse_page_request(&e), Some((0, -7)));
        assert_eq!(parse_page_request(&e[..0x26]), None);
    }
}
