//! Host DMA memory: one arena of bus-addressed regions.
//!
//! The driver side holds [`HostBuf`]s (implementing [`Coherent`]); the device model reaches the
//! same bytes by bus address through [`HostMemory`] (implementing [`BusMemory`]). Regions are
//! page aligned with an unmapped guard page between them, so an access that runs past a
//! buffer faults instead of landing in a neighbour. A freed (unmapped) region faults too.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use rsnic_core::hwif::hw::{BusMemory, Coherent, DmaAddr, DmaFault};

const PAGE: u64 = 4096;
const FIRST_ADDR: u64 = 0x1_0000_0000;

struct Region {
    base: DmaAddr,
    data: RefCell<Box<[u8]>>,
}

/// The arena: every DMA buffer of one test bed.
#[derive(Clone)]
pub struct HostMemory {
    inner: Rc<Inner>,
}

struct Inner {
    /// Live regions, sorted by base address (allocation is monotonic).
    regions: RefCell<Vec<Rc<Region>>>,
    next: Cell<u64>,
    /// Bytes the device read and wrote through [`BusMemory`].
    dev_read: Cell<u64>,
    dev_written: Cell<u64>,
}

/// One buffer of the arena, as the driver sees it.
#[derive(Clone)]
pub struct HostBuf {
    region: Rc<Region>,
}

impl Default for HostMemory {
    fn default() -> Self {
        Self::new()
    }
}

impl HostMemory {
    /// An empty arena.
    pub fn new() -> Self {
        Self {
            inner: Rc::new(Inner {
                regions: RefCell::new(Vec::new()),
                next: Cell::new(FIRST_ADDR),
                dev_read: Cell::new(0),
                dev_written: Cell::new(0),
            }),
        }
    }

    /// Allocates (and maps) a zeroed buffer of `size` bytes.
    pub fn alloc(&self, size: usize) -> HostBuf {
        let base = self.inner.next.get();
        let pages = (size as u64).div_ceil(PAGE).max(1);
        // One unmapped guard page after every region.
        self.inner.next.set(base + (pages + 1) * PAGE);
        let region = Rc::new(Region {
            base,
            data: RefCell::new(vec![0u8; size].into_boxed_slice()),
        });
        self.inner.regions.borrow_mut().push(region.clone());
        HostBuf { region }
    }

    /// Allocates an EQ ring of 2^`log` 64-byte EQEs with every owner byte 1, as mlx5's
    /// `init_eq_buf` leaves it (the device's first pass writes owner 0).
    pub fn alloc_eq(&self, log: u8) -> HostBuf {
        let buf = self.alloc(64 << log);
        for i in 0..(1usize << log) {
            buf.write(i * 64 + 63, &[1]);
        }
        buf
    }

    /// Allocates a buffer holding a copy of `bytes`.
    pub fn alloc_from(&self, bytes: &[u8]) -> HostBuf {
        let buf = self.alloc(bytes.len());
        buf.write(0, bytes);
        buf
    }

    /// Unmaps `buf`: later device accesses to its addresses fault.
    pub fn free(&self, buf: &HostBuf) {
        self.inner
            .regions
            .borrow_mut()
            .retain(|r| !Rc::ptr_eq(r, &buf.region));
    }

    /// Number of live (mapped) regions.
    pub fn live_regions(&self) -> usize {
        self.inner.regions.borrow().len()
    }

    /// Bytes read by the device so far.
    pub fn device_bytes_read(&self) -> u64 {
        self.inner.dev_read.get()
    }

    /// Bytes written by the device so far.
    pub fn device_bytes_written(&self) -> u64 {
        self.inner.dev_written.get()
    }

    fn find(&self, addr: DmaAddr, len: usize) -> Result<(Rc<Region>, usize), DmaFault> {
        let fault = DmaFault { addr, len };
        let regions = self.inner.regions.borrow();
        let idx = regions.partition_point(|r| r.base <= addr);
        let region = idx.checked_sub(1).map(|i| &regions[i]).ok_or(fault)?;
        let off = addr - region.base;
        let end = off.checked_add(len as u64).ok_or(fault)?;
        if end > region.data.borrow().len() as u64 {
            return Err(fault);
        }
        Ok((region.clone(), off as usize))
    }
}

impl BusMemory for HostMemory {
    fn dma_read(&self, addr: DmaAddr, dst: &mut [u8]) -> Result<(), DmaFault> {
        let (region, off) = self.find(addr, dst.len())?;
        dst.copy_from_slice(&region.data.borrow()[off..off + dst.len()]);
        self.inner
            .dev_read
            .set(self.inner.dev_read.get() + dst.len() as u64);
        Ok(())
    }

    fn dma_write(&self, addr: DmaAddr, src: &[u8]) -> Result<(), DmaFault> {
        let (region, off) = self.find(addr, src.len())?;
        region.data.borrow_mut()[off..off + src.len()].copy_from_slice(src);
        self.inner
            .dev_written
            .set(self.inner.dev_written.get() + src.len() as u64);
        Ok(())
    }
}

impl HostBuf {
    /// A copy of the whole buffer.
    pub fn to_vec(&self) -> Vec<u8> {
        self.region.data.borrow().to_vec()
    }
}

impl Coherent for HostBuf {
    fn dma_addr(&self) -> DmaAddr {
        self.region.base
    }

    fn size(&self) -> usize {
        self.region.data.borrow().len()
    }

    fn write(&self, off: usize, src: &[u8]) {
        self.region.data.borrow_mut()[off..off + src.len()].copy_from_slice(src);
    }

    fn read(&self, off: usize, dst: &mut [u8]) {
        dst.copy_from_slice(&self.region.data.borrow()[off..off + dst.len()]);
    }

    fn zero(&self, off: usize, len: usize) {
        self.region.data.borrow_mut()[off..off + len].fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_and_device_see_the_same_bytes() {
        let mem = HostMemory::new();
        let buf = mem.alloc(64);
        buf.write_be32(8, 0xdead_beef);
        let mut got = [0u8; 4];
        mem.dma_read(buf.dma_addr() + 8, &mut got).unwrap();
        assert_eq!(got, [0xde, 0xad, 0xbe, 0xef]);
        mem.dma_write(buf.dma_addr(), &[7; 4]).unwrap();
        assert_eq!(buf.read_u8(3), 7);
        assert_eq!(mem.device_bytes_read(), 4);
        assert_eq!(mem.device_bytes_written(), 4);
    }

    #[test]
    fn out_of_bounds_and_unmapped_accesses_fault() {
        let mem = HostMemory::new();
        let a = mem.alloc(100);
        let b = mem.alloc(100);
        let mut x = [0u8; 8];
        assert!(mem.dma_read(a.dma_addr() + 96, &mut x).is_err());
        assert!(mem.dma_read(a.dma_addr() + 100, &mut x[..1]).is_err());
        assert!(mem.dma_read(a.dma_addr() - 1, &mut x[..1]).is_err());
        assert!(mem.dma_read(b.dma_addr(), &mut x).is_ok());
        mem.free(&b);
        assert!(mem.dma_read(b.dma_addr(), &mut x).is_err());
        assert_eq!(mem.live_regions(), 1);
    }
}
