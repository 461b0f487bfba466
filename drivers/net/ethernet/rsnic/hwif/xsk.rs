// SPDX-License-Identifier: GPL-2.0

//! AF_XDP zero-copy: the XSK buffer pools a port receives into, checked as mlx5e checks
//! them for its cyclic RQ, in rsnic's terms.
//!
//! * At bind ([`check_pool`]): the pool is sane (`mlx5e_xsk_is_pool_sane`: headroom and
//!   chunk within 16 bits) and fits the port's frames (`mlx5e_validate_xsk_param`: a chunk
//!   of [`MIN_CHUNK`] bytes to a page; a frame of the MTU copied into an skb on `XDP_PASS`
//!   fits a page; the pool's headroom and a frame of the MTU fit a chunk).
//! * At an MTU change ([`check_mtu`], `mlx5e_xsk_validate_mtu`): the same, and the MTU is
//!   at most the largest an XDP program takes with the pool's headroom; a refusal names the
//!   largest MTU every check allows ([`max_mtu`]).
//!
//! "Frame" is what the device may write for one packet: the MTU plus [`Geometry::hard_mtu`]
//! (rsnic's Ethernet header and two VLAN tags, 22 bytes; mlx5e's `hard_mtu` is 22 too, the
//! header, one tag and the FCS). Plain arithmetic: the kernel glue supplies the pool's
//! sizes and the page size.

use core::fmt;

/// The smallest chunk a pool may have: `MLX5E_MIN_XSK_CHUNK_SIZE`, `max(2048,
/// XDP_UMEM_MIN_CHUNK_SIZE)` (the core's minimum is 2048 too).
pub const MIN_CHUNK: u32 = 2048;

/// The sizes the checks depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// `PAGE_SIZE`.
    pub page: u32,
    /// Bytes a frame has beyond the MTU (headers the MTU does not count).
    pub hard_mtu: u32,
    /// Bytes an skb needs after its data (`skb_shared_info`, aligned).
    pub skb_tail: u32,
}

/// Why a pool (or an MTU with a pool) is refused: each check has its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The chunk size is outside `[MIN_CHUNK, page]`.
    ChunkBounds {
        /// The pool's chunk size.
        chunk: u32,
        /// The smallest allowed.
        min: u32,
        /// The largest allowed (the page).
        max: u32,
    },
    /// Headroom or chunk size beyond 16 bits (`mlx5e_xsk_is_pool_sane`).
    NotSane {
        /// The pool's headroom (`XDP_PACKET_HEADROOM` and the UMEM's).
        headroom: u32,
        /// The pool's chunk size.
        chunk: u32,
    },
    /// A frame of the MTU does not fit a page: it could not be copied into a linear skb on
    /// `XDP_PASS`.
    PassNotLinear {
        /// The MTU.
        mtu: u32,
        /// Its frame.
        frame: u32,
        /// The page.
        page: u32,
    },
    /// The pool's headroom and a frame of the MTU do not fit a chunk.
    FrameTooLong {
        /// The MTU.
        mtu: u32,
        /// Its frame.
        frame: u32,
        /// The pool's headroom.
        headroom: u32,
        /// The pool's chunk size.
        chunk: u32,
    },
    /// The MTU is above the largest an XDP program takes with the pool's headroom
    /// (`mlx5e_xdp_max_mtu`).
    AboveXdpMax {
        /// The MTU.
        mtu: u32,
        /// The largest.
        max: u32,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Refusal::ChunkBounds { chunk, min, max } => {
                write!(f, "XSK chunk size {chunk} out of bounds [{min}, {max}]")
            }
            Refusal::NotSane { headroom, chunk } => write!(
                f,
                "XSK pool headroom {headroom} or chunk size {chunk} does not fit 16 bits"
            ),
            Refusal::PassNotLinear { mtu, frame, page } => write!(
                f,
                "MTU {mtu}: a {frame}-byte frame does not fit a {page}-byte page, into which XDP_PASS copies it"
            ),
            Refusal::FrameTooLong {
                mtu,
                frame,
                headroom,
                chunk,
            } => write!(
                f,
                "MTU {mtu}: {headroom} bytes of headroom and a {frame}-byte frame do not fit an XSK chunk of {chunk} bytes"
            ),
            Refusal::AboveXdpMax { mtu, max } => write!(
                f,
                "MTU {mtu} is above {max}, the largest an XDP program takes with the XSK pool's headroom"
            ),
        }
    }
}

/// The bind check (`mlx5e_xsk_is_pool_sane`, then `mlx5e_validate_xsk_param` of the cyclic
/// RQ): a pool of `chunk`-byte chunks with `headroom` bytes before each frame, for frames
/// of `mtu`.
pub fn check_pool(chunk: u32, headroom: u32, mtu: u32, g: &Geometry) -> Result<(), Refusal> {
    if headroom > 0xffff || chunk > 0xffff {
        return Err(Refusal::NotSane { headroom, chunk });
    }
    if chunk > g.page || chunk < MIN_CHUNK {
        return Err(Refusal::ChunkBounds {
            chunk,
            min: MIN_CHUNK,
            max: g.page,
        });
    }
    let frame = mtu.saturating_add(g.hard_mtu);
    // SKB_DATA_ALIGN: the copy's linear part, cache-line aligned.
    if (frame.saturating_add(63) & !63) > g.page {
        return Err(Refusal::PassNotLinear {
            mtu,
            frame,
            page: g.page,
        });
    }
    if headroom.saturating_add(frame) > chunk {
        return Err(Refusal::FrameTooLong {
            mtu,
            frame,
            headroom,
            chunk,
        });
    }
    Ok(())
}

/// The largest MTU of an XDP program with `headroom` before each frame: a frame, the
/// headroom and the skb's tail room fit a page (`mlx5e_xdp_max_mtu`).
pub fn xdp_max_mtu(headroom: u32, g: &Geometry) -> u32 {
    g.page
        .saturating_sub(headroom)
        .saturating_sub(g.skb_tail)
        .saturating_sub(g.hard_mtu)
}

/// The largest MTU [`check_mtu`] takes for a pool (the smallest of the frame's fit into a
/// chunk, the `XDP_PASS` copy's into a page and [`xdp_max_mtu`]), as
/// `mlx5e_xsk_validate_mtu` names it.
pub fn max_mtu(chunk: u32, headroom: u32, g: &Geometry) -> u32 {
    let frame_fit = chunk.saturating_sub(headroom).saturating_sub(g.hard_mtu);
    let page_fit = g.page.saturating_sub(g.skb_tail).saturating_sub(g.hard_mtu);
    frame_fit.min(page_fit).min(xdp_max_mtu(headroom, g))
}

/// The MTU change check (`mlx5e_xsk_validate_mtu`): [`check_pool`] with the new MTU, and
/// the MTU at most [`xdp_max_mtu`] with the pool's headroom.
pub fn check_mtu(chunk: u32, headroom: u32, mtu: u32, g: &Geometry) -> Result<(), Refusal> {
    check_pool(chunk, headroom, mtu, g)?;
    let max = xdp_max_mtu(headroom, g);
    if mtu > max {
        return Err(Refusal::AboveXdpMax { mtu, max });
    }
    Ok(())
}
