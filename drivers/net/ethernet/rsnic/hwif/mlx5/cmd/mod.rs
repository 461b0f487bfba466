// SPDX-License-Identifier: GPL-2.0

//! The ConnectX command interface, driver side: the command queue in DMA memory
//! ([`queue`], mlx5/core/cmd.c), typed builders and parsers for the commands rsnic sends
//! ([`hca`], [`pages`], [`mkey`], [`res`], [`fs`], [`vport`]; layouts from include/linux/mlx5/mlx5_ifc.h, callers in
//! main.c, fw.c, uar.c, eq.c, en_main.c, port.c, vport.c) and the bring-up / teardown
//! sequence of main.c as a pollable state machine ([`seq`]).
//!
//! Builders write a command input into a caller buffer (zeroed first, sized by the
//! `*_IN_LEN` constants) and return its length; parsers read a completed output (of the
//! `*_OUT_LEN` length posted). Status and syndrome are checked by [`queue::CmdQueue::poll`]
//! before a parser runs; parsers still check every length and range they rely on.

/// Declares a module of command codes (`pub mod $m: $t;`) and the function that names them
/// (`pub fn $name, else "$unknown";`) from one list, so that each code is written once with
/// its value and its name: `NAME = value,` is named (and documented) by its identifier,
/// `/// doc` `NAME = value => "name",` gives both.
macro_rules! codes {
    (
        $(#[$mod_meta:meta])*
        pub mod $m:ident: $t:ty;
        $(#[$fn_meta:meta])*
        pub fn $name_fn:ident, else $unknown:literal;
        $($code:ident = $val:literal,)*
    ) => {
        codes! {
            $(#[$mod_meta])*
            pub mod $m: $t;
            $(#[$fn_meta])*
            pub fn $name_fn, else $unknown;
            $(#[doc = concat!(stringify!($code), ".")] $code = $val => stringify!($code),)*
        }
    };
    (
        $(#[$mod_meta:meta])*
        pub mod $m:ident: $t:ty;
        $(#[$fn_meta:meta])*
        pub fn $name_fn:ident, else $unknown:literal;
        $($(#[$meta:meta])* $code:ident = $val:literal => $name:expr,)*
    ) => {
        $(#[$mod_meta])*
        pub mod $m {
            $($(#[$meta])* pub const $code: $t = $val;)*
        }

        $(#[$fn_meta])*
        pub fn $name_fn(code: $t) -> &'static str {
            match code {
                $($m::$code => $name,)*
                _ => $unknown,
            }
        }
    };
}

pub mod field;
pub mod fs;
pub mod hca;
pub mod mkey;
pub mod pages;
pub mod queue;
pub mod res;
pub mod rss;
pub mod seq;
pub mod vport;

pub use field::Field;
pub use queue::{CmdError, CmdErrorKind, CmdPoll, CmdQueue};

codes! {
    /// Command opcodes (`MLX5_CMD_OP_*`, mlx5_ifc.h).
    pub mod op: u16;
    /// The upstream name of an opcode (`mlx5_command_str`), for error messages.
    pub fn opcode_name, else "unknown command opcode";
    QUERY_HCA_CAP = 0x100,
    QUERY_ADAPTER = 0x101,
    INIT_HCA = 0x102,
    TEARDOWN_HCA = 0x103,
    ENABLE_HCA = 0x104,
    DISABLE_HCA = 0x105,
    QUERY_ISSI = 0x10a,
    SET_ISSI = 0x10b,
    QUERY_PAGES = 0x107,
    MANAGE_PAGES = 0x108,
    SET_HCA_CAP = 0x109,
    CREATE_MKEY = 0x200,
    DESTROY_MKEY = 0x202,
    CREATE_EQ = 0x301,
    DESTROY_EQ = 0x302,
    CREATE_CQ = 0x400,
    DESTROY_CQ = 0x401,
    MODIFY_CQ = 0x403,
    QUERY_VPORT_STATE = 0x750,
    QUERY_NIC_VPORT_CONTEXT = 0x754,
    MODIFY_NIC_VPORT_CONTEXT = 0x755,
    QUERY_VPORT_COUNTER = 0x770,
    ALLOC_Q_COUNTER = 0x771,
    DEALLOC_Q_COUNTER = 0x772,
    QUERY_Q_COUNTER = 0x773,
    ALLOC_PD = 0x800,
    DEALLOC_PD = 0x801,
    ALLOC_UAR = 0x802,
    DEALLOC_UAR = 0x803,
    ACCESS_REG = 0x805,
    ALLOC_TRANSPORT_DOMAIN = 0x816,
    DEALLOC_TRANSPORT_DOMAIN = 0x817,
    CREATE_TIR = 0x900,
    MODIFY_TIR = 0x901,
    DESTROY_TIR = 0x902,
    CREATE_SQ = 0x904,
    MODIFY_SQ = 0x905,
    DESTROY_SQ = 0x906,
    QUERY_SQ = 0x907,
    CREATE_RQ = 0x908,
    MODIFY_RQ = 0x909,
    DESTROY_RQ = 0x90a,
    QUERY_RQ = 0x90b,
    CREATE_TIS = 0x912,
    DESTROY_TIS = 0x914,
    CREATE_RQT = 0x916,
    MODIFY_RQT = 0x917,
    DESTROY_RQT = 0x918,
    SET_FLOW_TABLE_ROOT = 0x92f,
    CREATE_FLOW_TABLE = 0x930,
    DESTROY_FLOW_TABLE = 0x931,
    CREATE_FLOW_GROUP = 0x933,
    DESTROY_FLOW_GROUP = 0x934,
    SET_FLOW_TABLE_ENTRY = 0x936,
    DELETE_FLOW_TABLE_ENTRY = 0x938,
}

/// Errors building a command input or reading a command output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormatError {
    /// The caller's buffer is shorter than the command needs.
    BufferTooSmall {
        /// Bytes needed.
        need: usize,
        /// Bytes given.
        have: usize,
    },
    /// A parameter does not fit its field or breaks a rule of the command (alignment of a
    /// buffer, list too long, value out of range).
    BadParam,
}

/// Fields of the common command headers (`mbox_in`, `mbox_out`).
pub mod hdr {
    use super::Field;

    /// `mbox_in.opcode`: bit 0x00, 16 bits.
    pub const OPCODE: Field = Field::new(0x00, 16);
    /// `mbox_in.uid`: bit 0x10, 16 bits.
    pub const UID: Field = Field::new(0x10, 16);
    /// `mbox_in.op_mod`: bit 0x30, 16 bits.
    pub const OP_MOD: Field = Field::new(0x30, 16);
    /// `mbox_out.status`: bit 0x00, 8 bits.
    pub const STATUS: Field = Field::new(0x00, 8);
    /// `mbox_out.syndrome`: bit 0x20, 32 bits.
    pub const SYNDROME: Field = Field::new(0x20, 32);
    /// The 24-bit object number most create outputs and destroy inputs carry at bit 0x48
    /// (`uar`, `pd`, `transport_domain`, `cqn`, `tisn`, `sqn`, `rqn`, `rqtn`, `tirn`).
    pub const OBJ_NUM: Field = Field::new(0x48, 24);
    /// Length of the common headers.
    pub const LEN: usize = 16;
}

/// Zeroes `buf[..len]`, writes the input header (`opcode`, `op_mod`) and then each
/// `(field, value)` of `fields` in order (truncated to the field, as [`Field::set`] does);
/// returns the slice, for what a list of fields does not say (addresses, lists).
pub(crate) fn start<'a>(
    buf: &'a mut [u8],
    len: usize,
    opcode: u16,
    op_mod: u16,
    fields: &[(Field, u64)],
) -> Result<&'a mut [u8], FormatError> {
    let b = built(buf, len)?;
    b.fill(0);
    hdr::OPCODE.set(b, u64::from(opcode));
    hdr::OP_MOD.set(b, u64::from(op_mod));
    set_fields(b, fields);
    Ok(b)
}

/// A command input of `len` bytes that [`start`] writes in whole; returns `len`.
pub(crate) fn build(
    buf: &mut [u8],
    len: usize,
    opcode: u16,
    op_mod: u16,
    fields: &[(Field, u64)],
) -> Result<usize, FormatError> {
    start(buf, len, opcode, op_mod, fields)?;
    Ok(len)
}

/// Writes each `(field, value)` of `fields` into `b`, in order ([`Field::set`]).
pub(crate) fn set_fields(b: &mut [u8], fields: &[(Field, u64)]) {
    for &(f, v) in fields {
        f.set(b, v);
    }
}

/// The first `len` bytes of an input a builder has written (to add fields to it).
pub(crate) fn built(buf: &mut [u8], len: usize) -> Result<&mut [u8], FormatError> {
    let have = buf.len();
    buf.get_mut(..len)
        .ok_or(FormatError::BufferTooSmall { need: len, have })
}

/// Checks that a completed output is at least `len` bytes; returns the slice.
pub(crate) fn output(out: &[u8], len: usize) -> Result<&[u8], FormatError> {
    out.get(..len).ok_or(FormatError::BufferTooSmall {
        need: len,
        have: out.len(),
    })
}

/// Writes MAC address `mac` at byte `at` of `b` ([`FormatError::BadParam`] if it does not
/// fit).
pub(crate) fn put_mac(b: &mut [u8], at: usize, mac: &[u8; 6]) -> Result<(), FormatError> {
    let dst = b
        .get_mut(at..at.saturating_add(6))
        .ok_or(FormatError::BadParam)?;
    for (d, s) in dst.iter_mut().zip(mac) {
        *d = *s;
    }
    Ok(())
}

/// Checks that `v` fits in `width` bits.
pub(crate) fn fits(v: u64, width: u32) -> Result<u64, FormatError> {
    if width < 64 && v >> width != 0 {
        Err(FormatError::BadParam)
    } else {
        Ok(v)
    }
}

/// A 16-byte command with only an opcode, op_mod and a 24-bit object number at bit 0x48
/// (the DEALLOC_* and DESTROY_* commands); returns its length.
pub(crate) fn obj_cmd(buf: &mut [u8], opcode: u16, obj: u32) -> Result<usize, FormatError> {
    fits(u64::from(obj), 24)?;
    build(buf, hdr::LEN, opcode, 0, &[(hdr::OBJ_NUM, u64::from(obj))])
}

/// Reads the 24-bit object number at bit 0x48 of a 16-byte create / alloc output.
pub(crate) fn obj_out(out: &[u8]) -> Result<u32, FormatError> {
    Ok(hdr::OBJ_NUM.get32(output(out, hdr::LEN)?))
}

/// The physical address list (`cmd_pas` entries: BE64 addresses of 4 KiB pages) of a queue
/// buffer, as `mlx5_fill_page_frag_array` writes it with `log_page_size = 0`: one entry per
/// 4 KiB of the buffer, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pas<'a> {
    /// Size of the buffer in bytes.
    pub size: usize,
    /// Where its pages are.
    pub pages: PasPages<'a>,
}

/// Where the 4 KiB pages of a [`Pas`] buffer are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PasPages<'a> {
    /// One contiguous range from this bus address (4 KiB aligned): page `i` at
    /// `addr + i * 4096` (`mlx5_fill_page_array` of a single-fragment buffer).
    Contiguous(u64),
    /// Each page's bus address (4 KiB aligned), one per [`Pas::npages`]: a buffer allocated
    /// page by page (`mlx5_frag_buf`).
    List(&'a [u64]),
}

/// Page size of PAS entries (`MLX5_ADAPTER_PAGE_SIZE`).
pub const PAS_PAGE: usize = 4096;

impl<'a> Pas<'a> {
    /// A contiguous buffer of `size` bytes at bus address `addr`.
    pub const fn contiguous(addr: u64, size: usize) -> Self {
        Self {
            size,
            pages: PasPages::Contiguous(addr),
        }
    }

    /// A buffer of `size` bytes in the 4 KiB pages at `pages` (one per [`Pas::npages`]).
    pub const fn list(pages: &'a [u64], size: usize) -> Self {
        Self {
            size,
            pages: PasPages::List(pages),
        }
    }

    /// Number of 4 KiB pages (entries).
    pub const fn npages(&self) -> usize {
        if self.size == 0 {
            1
        } else {
            self.size.div_ceil(PAS_PAGE)
        }
    }

    /// Bus address of page `i` (below [`Pas::npages`]); `None` if the list has no such
    /// entry.
    fn page(&self, i: usize) -> Option<u64> {
        match self.pages {
            PasPages::Contiguous(a) => a.checked_add((i * PAS_PAGE) as u64),
            PasPages::List(l) => l.get(i).copied(),
        }
    }

    /// Writes the entries at byte `off` of `b` (which must hold them). Refused: a page not
    /// 4 KiB aligned, a list whose length is not [`Pas::npages`].
    pub(crate) fn write(&self, b: &mut [u8], off: usize) -> Result<(), FormatError> {
        if let PasPages::List(l) = self.pages {
            if l.len() != self.npages() {
                return Err(FormatError::BadParam);
            }
        }
        for i in 0..self.npages() {
            let a = self.page(i).ok_or(FormatError::BadParam)?;
            if a & (PAS_PAGE as u64 - 1) != 0 {
                return Err(FormatError::BadParam);
            }
            let o = off + i * 8;
            b.get_mut(o..o + 8)
                .ok_or(FormatError::BadParam)?
                .copy_from_slice(&a.to_be_bytes());
        }
        Ok(())
    }
}
