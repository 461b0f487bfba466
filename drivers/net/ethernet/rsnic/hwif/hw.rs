// SPDX-License-Identifier: GPL-2.0

//! The hardware boundary.
//!
//! The driver and the device (the simulated one today, a real PCI function later) meet only
//! through the items of this module, exactly where a real NIC meets its driver:
//!
//! * [`Coherent`]: a DMA-coherent buffer the driver allocated (rings, CQ buffers, doorbell
//!   records). The driver reads and writes it by offset; the device reaches the same bytes
//!   through their bus address with [`BusMemory`].
//! * [`Mmio`]: the device's register space (BAR0). Doorbells are register writes.
//! * [`Barriers`]: the ordering the driver must ask for between its memory writes, its
//!   register writes and its reads of device-written memory.
//! * [`BusMemory`]: host memory as a bus-mastering device sees it, by bus (DMA) address.
//! * [`InterruptSink`]: how the device raises an MSI-X vector.
//!
//! Nothing here allocates and nothing here depends on the kernel: the kernel glue implements
//! these traits over `dma_alloc_coherent` memory and real barriers, the host test bed over
//! plain buffers. Code that uses them is generic over the implementation (monomorphised, no
//! function pointers on the hot path).

/// A bus (DMA) address, as the device sees host memory.
pub type DmaAddr = u64;

/// The device touched bus addresses that map to no memory it may access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DmaFault {
    /// First bus address of the access.
    pub addr: DmaAddr,
    /// Length of the access in bytes.
    pub len: usize,
}

/// One DMA-coherent buffer as the driver sees it.
///
/// The device may read or write the same bytes at any time through [`BusMemory`], so all
/// access goes through copies (`&self`, interior mutability), never through references into
/// the buffer.
///
/// Offsets are computed by the driver from its own (masked) counters. An access that does not
/// fit is a driver bug: implementations must not touch memory outside the buffer for it
/// (they may panic in host builds and must clamp or ignore it in the kernel).
pub trait Coherent {
    /// Bus address of byte 0 of the buffer.
    fn dma_addr(&self) -> DmaAddr;
    /// Size of the buffer in bytes.
    fn size(&self) -> usize;
    /// Copies `src` into the buffer at `off`.
    fn write(&self, off: usize, src: &[u8]);
    /// Copies bytes of the buffer at `off` into `dst`.
    fn read(&self, off: usize, dst: &mut [u8]);
    /// Fills `len` bytes at `off` with zeroes.
    fn zero(&self, off: usize, len: usize);

    /// Reads one byte at `off`.
    #[inline(always)]
    fn read_u8(&self, off: usize) -> u8 {
        let mut b = [0u8; 1];
        self.read(off, &mut b);
        b[0]
    }

    /// Writes a big-endian 32-bit word at `off`.
    #[inline(always)]
    fn write_be32(&self, off: usize, v: u32) {
        self.write(off, &v.to_be_bytes());
    }

    /// Reads a big-endian 32-bit word at `off`.
    #[inline(always)]
    fn read_be32(&self, off: usize) -> u32 {
        let mut b = [0u8; 4];
        self.read(off, &mut b);
        u32::from_be_bytes(b)
    }

    /// Writes a little-endian 64-bit word at `off`.
    #[inline(always)]
    fn write_le64(&self, off: usize, v: u64) {
        self.write(off, &v.to_le_bytes());
    }
}

/// The device's register space (BAR0) as the driver writes it.
///
/// `write64` carries the 8 bytes in the order they travel on the bus (memory order): mlx5
/// rings its doorbell with the first 8 bytes of a WQE's control segment exactly as they sit in
/// memory (`__raw_writeq`, no byte swap); MANA writes a little-endian u64
/// (`value.to_le_bytes()`).
pub trait Mmio {
    /// One 64-bit register write at `offset` from the start of BAR0.
    fn write64(&self, offset: u32, bytes: [u8; 8]);
    /// One 32-bit register write of `value` at `offset` from the start of BAR0. The value is
    /// the register's; on a bus it travels in the device's byte order, which the transport
    /// applies: a ConnectX's registers are big-endian (`iowrite32be`), a MANA's
    /// little-endian (`writel`).
    fn write32(&self, offset: u32, value: u32);
    /// One 32-bit register read at `offset` from the start of BAR0: the register's value
    /// (`ioread32be` on a ConnectX, `readl` on a MANA, as for [`Mmio::write32`]).
    fn read32(&self, offset: u32) -> u32;

    /// A 64-bit register read at `offset` (`readq`, e.g. MANA's `GDMA_REG_DB_PAGE_OFFSET`).
    /// The default reads the low dword, then the high one; an implementation may do one
    /// 64-bit access.
    fn read64(&self, offset: u32) -> u64 {
        u64::from(self.read32(offset)) | (u64::from(self.read32(offset.wrapping_add(4))) << 32)
    }
}

/// Memory-ordering barriers between the driver, its DMA memory and the device.
pub trait Barriers {
    /// `dma_wmb()`: the driver's writes to coherent memory are visible to the device before
    /// its later writes to coherent memory (WQE before doorbell record).
    fn dma_wmb(&self);
    /// `dma_rmb()`: after reading a device-written ownership marker, later reads of the same
    /// descriptor see the device's data (CQE owner bit before the CQE body).
    fn dma_rmb(&self);
    /// `wmb()`: coherent-memory writes are visible before a following MMIO write
    /// (doorbell record before the doorbell register).
    fn wmb(&self);
}

/// Host memory as a bus-mastering device sees it.
///
/// The device model touches host memory only through this trait, by bus address; it never
/// holds a Rust reference to driver memory.
pub trait BusMemory {
    /// DMA read (host memory to device) of `dst.len()` bytes at `addr`.
    fn dma_read(&self, addr: DmaAddr, dst: &mut [u8]) -> Result<(), DmaFault>;
    /// DMA write (device to host memory) of `src` at `addr`.
    fn dma_write(&self, addr: DmaAddr, src: &[u8]) -> Result<(), DmaFault>;
}

/// Where the device sends its interrupts (MSI-X messages).
pub trait InterruptSink {
    /// Raises MSI-X vector `vector`.
    fn raise(&mut self, vector: u16);
}
