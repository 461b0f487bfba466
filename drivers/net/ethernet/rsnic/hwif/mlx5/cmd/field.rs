// SPDX-License-Identifier: GPL-2.0

//! Big-endian bit fields as `include/linux/mlx5/mlx5_ifc.h` declares them.
//!
//! mlx5_ifc.h describes every command layout as a C struct of `u8 name[bits]` arrays: bit 0
//! is the most significant bit of byte 0, a field of `w` bits at bit offset `o` lives in the
//! big-endian 32-bit dword `o / 32`, and 64-bit fields are 64-bit aligned (`MLX5_SET`,
//! `MLX5_SET64`, `MLX5_GET` in `device.h`). A [`Field`] names one such field by its bit offset
//! and width; [`Field::at`] places a field of an inner struct (`cqc`, `sqc`, `wq`, ...) at the
//! bit offset of that struct inside a command.
//!
//! Accesses that fall outside the buffer do nothing (set) or read 0 (get): callers check
//! buffer lengths first, and device-written buffers are never trusted to be long enough.

/// One field of a big-endian bit layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// Offset of the field's most significant bit from bit 0 of the structure.
    pub bit: usize,
    /// Width in bits: 1..=32 inside one dword, or 64 at a 32-bit aligned offset.
    pub width: u32,
}

impl Field {
    /// A field of `width` bits at bit offset `bit` (as in the header's `reserved_at_<bit>`
    /// numbering).
    pub const fn new(bit: usize, width: u32) -> Self {
        Self { bit, width }
    }

    /// The same field inside a structure that starts at bit `base` of the outer one.
    pub const fn at(self, base: usize) -> Self {
        Self {
            bit: base + self.bit,
            width: self.width,
        }
    }

    /// Byte offset of the dword (or quad word) holding the field.
    pub const fn byte(self) -> usize {
        (self.bit / 32) * 4
    }

    /// Mask of the field's bits after shifting it down to bit 0.
    const fn mask(self) -> u64 {
        if self.width >= 64 {
            u64::MAX
        } else {
            (1u64 << self.width) - 1
        }
    }

    /// Writes `v` (truncated to the field's width) into `buf`, keeping the other bits of the
    /// dword (`MLX5_SET` / `MLX5_SET64`).
    pub fn set(self, buf: &mut [u8], v: u64) {
        let o = self.byte();
        if self.width == 64 {
            if let Some(b) = buf.get_mut(o..o + 8) {
                b.copy_from_slice(&v.to_be_bytes());
            }
            return;
        }
        let shift = 32 - (self.bit % 32) as u32 - self.width;
        let Some(b) = buf.get_mut(o..o + 4) else {
            return;
        };
        let old = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        let m = (self.mask() as u32) << shift;
        let new = (old & !m) | (((v & self.mask()) as u32) << shift);
        b.copy_from_slice(&new.to_be_bytes());
    }

    /// Reads the field from `buf` (`MLX5_GET` / `MLX5_GET64`); 0 if `buf` is too short.
    pub fn get(self, buf: &[u8]) -> u64 {
        let o = self.byte();
        if self.width == 64 {
            return match buf.get(o..o + 8) {
                Some(b) => u64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
                None => 0,
            };
        }
        let shift = 32 - (self.bit % 32) as u32 - self.width;
        match buf.get(o..o + 4) {
            Some(b) => {
                (u64::from(u32::from_be_bytes([b[0], b[1], b[2], b[3]])) >> shift) & self.mask()
            }
            None => 0,
        }
    }

    /// [`Field::get`] as a `u32` (fields of at most 32 bits).
    pub fn get32(self, buf: &[u8]) -> u32 {
        self.get(buf) as u32
    }

    /// [`Field::get`] as a `u8` (fields of at most 8 bits).
    pub fn get8(self, buf: &[u8]) -> u8 {
        self.get(buf) as u8
    }

    /// [`Field::get`] as a flag (1-bit fields).
    pub fn flag(self, buf: &[u8]) -> bool {
        self.get(buf) != 0
    }
}
