//! The PCI functions devd presents over vfio-user: their identity ([`FunctionKind`]: IDs,
//! BAR0 size, MSI-X vectors and where the MSI-X table and PBA live in BAR0) and their
//! configuration space ([`ConfigSpace`]: 4 KiB, a type-0 header with one 64-bit
//! prefetchable memory BAR, a PCI Express endpoint capability and an MSI-X capability).
//!
//! Writes go through a per-byte write mask, so read-only fields (IDs, the BAR's type bits,
//! its size bits) keep their values; sizing BAR0 (all ones, read back) returns its size
//! mask as on hardware.

use crate::model::{Family, MODEL_VECTORS_PER_PORT};
use rsnic_core::sim;

/// Bytes of configuration space (PCI Express extended space included).
pub const CONFIG_SIZE: usize = 4096;

/// Offset of the PCI Express capability.
pub const CAP_PCIE: usize = 0x40;
/// Offset of the MSI-X capability.
pub const CAP_MSIX: usize = 0x80;
/// Bytes at the end of BAR0 that hold the MSI-X table (first page) and PBA (second page).
pub const MSIX_WINDOW: u64 = 0x2000;

/// MSI-X vectors of a ConnectX function: one per model vector of the function (the
/// model's EQs take interrupt numbers below [`MODEL_VECTORS_PER_PORT`]).
pub const MLX5_VECTORS: u16 = MODEL_VECTORS_PER_PORT;
/// MSI-X vectors of the MANA function: upstream mana asks for min(CPUs, 64) + 1 (the HWC's
/// and one per queue's EQ).
pub const MANA_VECTORS: u16 = 65;

/// The BAR0 bytes the MANA model uses: page 0's registers and SMC window, then
/// [`sim::mana::DB_PAGES`] doorbell pages.
const MANA_REGS_END: u64 =
    sim::mana::DB_PAGE_BASE as u64 + sim::mana::DB_PAGES as u64 * sim::mana::DB_PAGE_SIZE as u64;
/// MANA's BAR0: the registers and the MSI-X window, rounded up to a power of two.
pub const MANA_BAR0: u64 = (MANA_REGS_END + MSIX_WINDOW).next_power_of_two();
/// A ConnectX function's BAR0: the model's per-function window.
pub const MLX5_BAR0: u64 = sim::mlx5::FUNC_BAR_SIZE as u64;

/// The bytes of a ConnectX function's window the model uses: the initialization segment
/// (pages below `FIRST_UAR`) and the UAR pages.
const MLX5_REGS_END: u64 =
    (sim::mlx5::FIRST_UAR + sim::mlx5::MAX_UARS) as u64 * sim::mlx5::UAR_PAGE_SIZE as u64;

// The MSI-X window at the end of BAR0 lies past every register the models use.
const _: () = assert!(MANA_REGS_END <= MANA_BAR0 - MSIX_WINDOW);
const _: () = assert!(MLX5_REGS_END <= MLX5_BAR0 - MSIX_WINDOW);
const _: () = assert!(MANA_VECTORS as u64 * 16 <= MSIX_WINDOW / 2);
const _: () = assert!(MLX5_VECTORS as u64 * 16 <= MSIX_WINDOW / 2);

/// What one presented function is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FunctionKind {
    /// Vendor ID.
    pub vendor: u16,
    /// Device ID.
    pub device: u16,
    /// Subsystem vendor ID.
    pub subsys_vendor: u16,
    /// Subsystem ID.
    pub subsys: u16,
    /// Revision ID.
    pub revision: u8,
    /// BAR0's size (a power of two).
    pub bar0_size: u64,
    /// MSI-X vectors.
    pub vectors: u16,
}

impl FunctionKind {
    /// A function of `family`: MANA VF 1414:00ba or ConnectX VF 15b3:101e (ConnectX-6 Dx
    /// VF).
    pub const fn of(family: Family) -> Self {
        match family {
            Family::Mana => Self {
                vendor: 0x1414,
                device: 0x00ba,
                subsys_vendor: 0x1414,
                subsys: 0x0001,
                revision: 0x00,
                bar0_size: MANA_BAR0,
                vectors: MANA_VECTORS,
            },
            Family::Mlx5 => Self {
                vendor: 0x15b3,
                device: 0x101e,
                subsys_vendor: 0x15b3,
                subsys: 0x0042,
                revision: 0x00,
                bar0_size: MLX5_BAR0,
                vectors: MLX5_VECTORS,
            },
        }
    }

    /// BAR0 offset of the MSI-X table (the first page of the window at BAR0's end).
    pub const fn msix_table(&self) -> u64 {
        self.bar0_size - MSIX_WINDOW
    }

    /// BAR0 offset of the MSI-X PBA (the window's second page).
    pub const fn msix_pba(&self) -> u64 {
        self.bar0_size - MSIX_WINDOW / 2
    }
}

/// A function's configuration space.
pub struct ConfigSpace {
    kind: FunctionKind,
    bytes: Box<[u8; CONFIG_SIZE]>,
    /// Bits a write may change.
    wmask: Box<[u8; CONFIG_SIZE]>,
}

fn put16(b: &mut [u8], off: usize, v: u16) {
    b[off..off + 2].copy_from_slice(&v.to_le_bytes());
}

fn put32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_le_bytes());
}

impl ConfigSpace {
    /// The power-on configuration space of a function of `kind`.
    pub fn new(kind: FunctionKind) -> Self {
        let mut b = Box::new([0u8; CONFIG_SIZE]);
        let mut w = Box::new([0u8; CONFIG_SIZE]);
        put16(&mut b[..], 0x00, kind.vendor);
        put16(&mut b[..], 0x02, kind.device);
        // Command: memory space, bus master, parity, SERR, INTx disable are writable.
        put16(&mut w[..], 0x04, 0x0546);
        // Status: capability list.
        put16(&mut b[..], 0x06, 0x0010);
        b[0x08] = kind.revision;
        // Class: Ethernet controller (02 00 00).
        b[0x0b] = 0x02;
        // Cache line size, latency timer.
        w[0x0c] = 0xff;
        w[0x0d] = 0xff;
        // BAR0: 64-bit (type 10b), prefetchable, size bits read-only.
        put32(&mut b[..], 0x10, 0x0000_000c);
        put32(&mut w[..], 0x10, !(kind.bar0_size as u32 - 1) & !0xf);
        // BAR1: BAR0's high half (every bit an address bit while BAR0 < 4 GiB).
        put32(&mut w[..], 0x14, 0xffff_ffff);
        put16(&mut b[..], 0x2c, kind.subsys_vendor);
        put16(&mut b[..], 0x2e, kind.subsys);
        b[0x34] = CAP_PCIE as u8;
        // Interrupt line writable; pin 0 (no INTx).
        w[0x3c] = 0xff;

        // PCI Express capability v2, endpoint.
        let e = CAP_PCIE;
        b[e] = 0x10;
        b[e + 1] = CAP_MSIX as u8;
        put16(&mut b[..], e + 0x02, 0x0002);
        // Device capabilities: max payload 256 bytes, role-based error reporting.
        put32(&mut b[..], e + 0x04, 0x0000_8001);
        // Device control: relaxed ordering, no snoop, max read request 512 bytes.
        put16(&mut b[..], e + 0x08, 0x2810);
        put16(&mut w[..], e + 0x08, 0x7fff);
        // Link: 8 GT/s x8, as capability and as status.
        put32(&mut b[..], e + 0x0c, 0x0000_0083);
        put16(&mut w[..], e + 0x10, 0x01c3);
        put16(&mut b[..], e + 0x12, 0x0083);
        // Link capabilities 2: 2.5, 5 and 8 GT/s; link control 2: target 8 GT/s.
        put32(&mut b[..], e + 0x2c, 0x0000_000e);
        put16(&mut b[..], e + 0x30, 0x0003);

        // MSI-X: table and PBA in BAR0, enable and function mask writable.
        let m = CAP_MSIX;
        b[m] = 0x11;
        b[m + 1] = 0;
        put16(&mut b[..], m + 0x02, kind.vectors - 1);
        put16(&mut w[..], m + 0x02, 0xc000);
        put32(&mut b[..], m + 0x04, kind.msix_table() as u32);
        put32(&mut b[..], m + 0x08, kind.msix_pba() as u32);
        Self {
            kind,
            bytes: b,
            wmask: w,
        }
    }

    /// The function's identity.
    pub fn kind(&self) -> FunctionKind {
        self.kind
    }

    /// Copies `dst.len()` bytes at `off`; `false` if they do not lie in config space.
    pub fn read(&self, off: u64, dst: &mut [u8]) -> bool {
        match range(off, dst.len()) {
            Some(r) => {
                dst.copy_from_slice(&self.bytes[r]);
                true
            }
            None => false,
        }
    }

    /// Writes `src` at `off` through the write mask; `false` (nothing written) if it does
    /// not lie in config space.
    pub fn write(&mut self, off: u64, src: &[u8]) -> bool {
        let Some(r) = range(off, src.len()) else {
            return false;
        };
        for (i, &v) in r.zip(src) {
            let m = self.wmask[i];
            self.bytes[i] = (self.bytes[i] & !m) | (v & m);
        }
        true
    }

    /// Returns the space to its power-on state (a function reset).
    pub fn reset(&mut self) {
        *self = Self::new(self.kind);
    }

    /// Whether MSI-X is enabled (message control bit 15).
    pub fn msix_enabled(&self) -> bool {
        self.bytes[CAP_MSIX + 3] & 0x80 != 0
    }
}

/// `off..off + len` if it lies inside config space.
fn range(off: u64, len: usize) -> Option<core::ops::Range<usize>> {
    let start = usize::try_from(off).ok()?;
    let end = start.checked_add(len)?;
    (end <= CONFIG_SIZE).then_some(start..end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r32(c: &ConfigSpace, off: u64) -> u32 {
        let mut b = [0u8; 4];
        assert!(c.read(off, &mut b));
        u32::from_le_bytes(b)
    }

    #[test]
    fn bar0_sizing_reads_back_the_size_mask() {
        for fam in [Family::Mlx5, Family::Mana] {
            let k = FunctionKind::of(fam);
            let mut c = ConfigSpace::new(k);
            assert!(c.write(0x10, &[0xff; 4]));
            assert!(c.write(0x14, &[0xff; 4]));
            let lo = r32(&c, 0x10);
            assert_eq!(lo & 0xf, 0xc, "64-bit prefetchable");
            assert_eq!(!(lo & !0xf) + 1, k.bar0_size as u32, "{fam:?}");
            assert_eq!(r32(&c, 0x14), 0xffff_ffff);
            // An address sticks, its low bits do not.
            assert!(c.write(0x10, &0xfe00_0123u32.to_le_bytes()));
            assert_eq!(
                r32(&c, 0x10),
                (0xfe00_0000 & !(k.bar0_size as u32 - 1)) | 0xc
            );
        }
    }

    #[test]
    fn ids_and_read_only_fields_do_not_change() {
        let mut c = ConfigSpace::new(FunctionKind::of(Family::Mana));
        assert!(c.write(0, &[0; 64]));
        assert_eq!(r32(&c, 0), 0x00ba_1414);
        assert_eq!(r32(&c, 0x08) >> 8, 0x02_0000);
        assert!(c.write(0x04, &0xffffu16.to_le_bytes()));
        assert_eq!(r32(&c, 0x04) & 0xffff, 0x0546);
        assert!(!c.write(4095, &[0, 0]));
        assert!(!c.read(u64::MAX, &mut [0u8; 1]));
    }

    #[test]
    fn msix_capability_points_into_bar0() {
        let k = FunctionKind::of(Family::Mlx5);
        let mut c = ConfigSpace::new(k);
        assert_eq!(
            r32(&c, CAP_MSIX as u64) & 0x7ff_00ff,
            ((64 - 1) << 16) | 0x11
        );
        assert_eq!(r32(&c, CAP_MSIX as u64 + 4), 0xfe000);
        assert_eq!(r32(&c, CAP_MSIX as u64 + 8), 0xff000);
        assert!(!c.msix_enabled());
        assert!(c.write(CAP_MSIX as u64 + 3, &[0xff]));
        assert!(c.msix_enabled());
        assert_eq!(
            r32(&c, CAP_MSIX as u64) >> 16,
            0xc000 | 63,
            "table size kept"
        );
        c.reset();
        assert!(!c.msix_enabled());
    }
}
