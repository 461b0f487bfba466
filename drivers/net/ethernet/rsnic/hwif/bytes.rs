// SPDX-License-Identifier: GPL-2.0

//! Byte order on byte slices: big- and little-endian integers read from and written to a
//! buffer at a byte offset, the one set of helpers both sides of the hardware line use (the
//! driver's formats in `hwif/`, the device models in `sim/`; `scripts/check-layers.sh` lets
//! `sim/` use this module and `hwif::hw` and nothing else of `hwif/`).
//!
//! Only byte order lives here, never a layout: each side keeps its own definition of where
//! a field is (the driver's in `hwif/mlx5/cmd/*`, `hwif/mana/*`; the models' in
//! `sim/mlx5/ifc.rs`, `sim/mana/*`), so that the tests can check one against the other.
//!
//! Every access is checked and none panics: a read of bytes that are not all inside the
//! buffer gives 0 ([`be16`] ...) or `None` ([`get_be16`]), a write there does nothing. A
//! device-written buffer is never trusted to be long enough, and an offset near
//! `usize::MAX` wraps to an empty range rather than overflowing.

/// The `N` bytes at `off` of `b`, if they are all inside it.
#[inline(always)]
fn get<const N: usize>(b: &[u8], off: usize) -> Option<[u8; N]> {
    b.get(off..off.wrapping_add(N))?.try_into().ok()
}

/// Writes `v` at `off` of `b` if all of it fits.
#[inline(always)]
fn put<const N: usize>(b: &mut [u8], off: usize, v: [u8; N]) {
    if let Some(d) = b.get_mut(off..off.wrapping_add(N)) {
        d.copy_from_slice(&v);
    }
}

// The 16- and 32-bit reads spell their bytes out (`s` has exactly that many, so the indexing
// cannot fail), as the helpers they replaced did: the data path's code stays what it was,
// instruction for instruction (`make bench`).

/// The big-endian u16 at `off` of `b`, if both bytes are inside it.
#[inline(always)]
pub fn get_be16(b: &[u8], off: usize) -> Option<u16> {
    get(b, off).map(u16::from_be_bytes)
}

/// The big-endian u16 at `off` of `b` (0 if not inside it).
#[inline(always)]
pub fn be16(b: &[u8], off: usize) -> u16 {
    match b.get(off..off.wrapping_add(2)) {
        Some(s) => u16::from_be_bytes([s[0], s[1]]),
        None => 0,
    }
}

/// The big-endian u32 at `off` of `b` (0 if not inside it).
#[inline(always)]
pub fn be32(b: &[u8], off: usize) -> u32 {
    match b.get(off..off.wrapping_add(4)) {
        Some(s) => u32::from_be_bytes([s[0], s[1], s[2], s[3]]),
        None => 0,
    }
}

/// The big-endian u64 at `off` of `b` (0 if not inside it).
#[inline(always)]
pub fn be64(b: &[u8], off: usize) -> u64 {
    get(b, off).map_or(0, u64::from_be_bytes)
}

/// The little-endian u16 at `off` of `b` (0 if not inside it).
#[inline(always)]
pub fn le16(b: &[u8], off: usize) -> u16 {
    match b.get(off..off.wrapping_add(2)) {
        Some(s) => u16::from_le_bytes([s[0], s[1]]),
        None => 0,
    }
}

/// The little-endian u32 at `off` of `b` (0 if not inside it).
#[inline(always)]
pub fn le32(b: &[u8], off: usize) -> u32 {
    match b.get(off..off.wrapping_add(4)) {
        Some(s) => u32::from_le_bytes([s[0], s[1], s[2], s[3]]),
        None => 0,
    }
}

/// The little-endian u64 at `off` of `b` (0 if not inside it).
#[inline(always)]
pub fn le64(b: &[u8], off: usize) -> u64 {
    get(b, off).map_or(0, u64::from_le_bytes)
}

/// Writes `v` big-endian at `off` of `b` (nothing if it does not fit).
#[inline(always)]
pub fn put_be16(b: &mut [u8], off: usize, v: u16) {
    put(b, off, v.to_be_bytes());
}

/// Writes `v` big-endian at `off` of `b` (nothing if it does not fit).
#[inline(always)]
pub fn put_be32(b: &mut [u8], off: usize, v: u32) {
    put(b, off, v.to_be_bytes());
}

/// Writes `v` big-endian at `off` of `b` (nothing if it does not fit).
#[inline(always)]
pub fn put_be64(b: &mut [u8], off: usize, v: u64) {
    put(b, off, v.to_be_bytes());
}

/// Writes `v` little-endian at `off` of `b` (nothing if it does not fit).
#[inline(always)]
pub fn put_le16(b: &mut [u8], off: usize, v: u16) {
    put(b, off, v.to_le_bytes());
}

/// Writes `v` little-endian at `off` of `b` (nothing if it does not fit).
#[inline(always)]
pub fn put_le32(b: &mut [u8], off: usize, v: u32) {
    put(b, off, v.to_le_bytes());
}

/// Writes `v` little-endian at `off` of `b` (nothing if it does not fit).
#[inline(always)]
pub fn put_le64(b: &mut [u8], off: usize, v: u64) {
    put(b, off, v.to_le_bytes());
}
