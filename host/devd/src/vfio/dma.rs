//! Client memory for DMA: the ranges a vfio-user client (QEMU) announced with DMA_MAP
//! ([`DmaTable`], one per connection), and the model's view of them ([`GuestMem`], a
//! `BusMemory` over the tables of every connected function).
//!
//! A range that came with a descriptor is mapped (shared, read-only unless the client
//! allowed writes) after checking that the file holds it; one without (ROM, VGA: memory
//! QEMU cannot share) is recorded as present but not accessible. A device access must lie
//! entirely inside one accessible range, with the access it needs (overflow-checked): one
//! that leaves a range, crosses into the next one, or touches an inaccessible one is a
//! [`DmaFault`] and no byte moves.
//!
//! Every function of one devd comes from one QEMU and so sees the same guest memory, and
//! the models do not say which function an access is for: [`GuestMem`] looks an address up
//! in every connected function's table and takes the first range that holds the whole
//! access.

use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};

use rsnic_core::hwif::hw::{BusMemory, DmaAddr, DmaFault};

use super::proto::{DMA_PGSIZE, DMA_READ, DMA_WRITE, MAX_DMA_MAPS};
use crate::sys::{page_size, Mapping};

/// Why a DMA_MAP or DMA_UNMAP was refused: the errno of the reply.
pub type Errno = i32;

/// One mapped range.
pub struct DmaRange {
    /// Bus (guest physical) address.
    pub gpa: u64,
    /// Bytes.
    pub size: u64,
    /// The device may read it.
    pub readable: bool,
    /// The device may write it.
    pub writable: bool,
    /// The mapping and the offset of `gpa` in it; `None`: not accessible.
    map: Option<(Mapping, usize)>,
}

impl DmaRange {
    /// The end address (exclusive; no overflow: checked when mapped).
    pub fn end(&self) -> u64 {
        self.gpa + self.size
    }

    /// Whether the device can reach it at all (it came with a descriptor).
    pub fn accessible(&self) -> bool {
        self.map.is_some()
    }
}

/// The ranges of one connection, sorted by address, never overlapping.
#[derive(Default)]
pub struct DmaTable {
    ranges: Vec<DmaRange>,
}

impl DmaTable {
    /// The ranges, by address.
    pub fn ranges(&self) -> &[DmaRange] {
        &self.ranges
    }

    /// DMA_MAP: `size` bytes at bus address `gpa`, from offset `offset` of `fd` (if any),
    /// with `flags` ([`DMA_READ`], [`DMA_WRITE`]). Errors: EINVAL (flags, alignment, size,
    /// overflow, a file that does not hold the range, mmap refused), EEXIST (overlaps a
    /// range), ENOSPC (too many ranges).
    pub fn map(
        &mut self,
        gpa: u64,
        size: u64,
        offset: u64,
        fd: Option<OwnedFd>,
        flags: u32,
    ) -> Result<(), Errno> {
        if flags & !(DMA_READ | DMA_WRITE) != 0
            || size == 0
            || gpa % DMA_PGSIZE != 0
            || size % DMA_PGSIZE != 0
        {
            return Err(libc::EINVAL);
        }
        let end = gpa.checked_add(size).ok_or(libc::EINVAL)?;
        let at = self.ranges.partition_point(|r| r.end() <= gpa);
        if self.ranges.get(at).is_some_and(|r| r.gpa < end) {
            return Err(libc::EEXIST);
        }
        if self.ranges.len() >= MAX_DMA_MAPS {
            return Err(libc::ENOSPC);
        }
        let (readable, writable) = (flags & DMA_READ != 0, flags & DMA_WRITE != 0);
        let map = match fd {
            None => None,
            Some(fd) => Some(map_file(fd, offset, size, writable)?),
        };
        self.ranges.insert(
            at,
            DmaRange {
                gpa,
                size,
                readable,
                writable,
                map,
            },
        );
        Ok(())
    }

    /// DMA_UNMAP of exactly one earlier mapping (`gpa`, `size`); ENOENT otherwise.
    pub fn unmap(&mut self, gpa: u64, size: u64) -> Result<(), Errno> {
        match self
            .ranges
            .iter()
            .position(|r| r.gpa == gpa && r.size == size)
        {
            Some(i) => {
                self.ranges.remove(i);
                Ok(())
            }
            None => Err(libc::ENOENT),
        }
    }

    /// Drops every range (DMA_UNMAP with the "all" flag, a client gone).
    pub fn clear(&mut self) {
        self.ranges.clear();
    }

    /// The accessible range holding all of `addr..addr + len` (overflow-checked), its
    /// mapping and the mapping offset of `addr`, if one does. The single place that decides
    /// whether a device access may touch client memory.
    pub fn find(&self, addr: u64, len: usize) -> Option<(&DmaRange, &Mapping, usize)> {
        let end = addr.checked_add(u64::try_from(len).ok()?)?;
        let i = self.ranges.partition_point(|r| r.end() <= addr);
        let r = self.ranges.get(i)?;
        if addr < r.gpa || end > r.end() {
            return None;
        }
        let (map, skew) = r.map.as_ref()?;
        let off = skew.checked_add(usize::try_from(addr - r.gpa).ok()?)?;
        Some((r, map, off))
    }

    /// Copies guest memory at `addr` into `dst`; `false` (nothing copied) unless one
    /// readable, accessible range holds it all.
    pub fn read(&self, addr: u64, dst: &mut [u8]) -> bool {
        match self.find(addr, dst.len()) {
            Some((r, m, off)) if r.readable => m.read(off, dst),
            _ => false,
        }
    }

    /// Copies `src` to guest memory at `addr`; `false` (nothing written) unless one
    /// writable, accessible range holds it all.
    pub fn write(&self, addr: u64, src: &[u8]) -> bool {
        match self.find(addr, src.len()) {
            Some((r, m, off)) if r.writable => m.write(off, src),
            _ => false,
        }
    }
}

/// Maps `size` bytes of `fd` from `offset`, after checking the file is a regular file that
/// holds them (touching a shared mapping past a file's end would kill devd). Returns the
/// mapping and the offset in it of the range's first byte.
fn map_file(
    fd: OwnedFd,
    offset: u64,
    size: u64,
    writable: bool,
) -> Result<(Mapping, usize), Errno> {
    let file = File::from(fd);
    let meta = file.metadata().map_err(|_| libc::EINVAL)?;
    let end = offset.checked_add(size).ok_or(libc::EINVAL)?;
    if !meta.file_type().is_file() || end > meta.len() {
        return Err(libc::EINVAL);
    }
    let page = page_size() as u64;
    let base = offset - offset % page;
    let skew = offset - base;
    let len = usize::try_from(skew + size).map_err(|_| libc::EINVAL)?;
    let map = Mapping::with_offset(file.as_fd(), base, len, writable).map_err(|_| libc::EINVAL)?;
    Ok((map, skew as usize))
}

/// The model's memory: the DMA tables of every connected function (see the module's
/// documentation for why one lookup serves them all).
pub struct GuestMem<'a> {
    /// The tables, in function order.
    pub tables: Vec<&'a DmaTable>,
}

impl GuestMem<'_> {
    /// An access of `len` bytes at `addr`: done by the first table that maps it (`access`
    /// says whether a table did), or a fault.
    fn access(
        &self,
        addr: DmaAddr,
        len: usize,
        mut access: impl FnMut(&DmaTable) -> bool,
    ) -> Result<(), DmaFault> {
        if self.tables.iter().any(|t| access(t)) {
            Ok(())
        } else {
            Err(DmaFault { addr, len })
        }
    }
}

impl BusMemory for GuestMem<'_> {
    fn dma_read(&self, addr: DmaAddr, dst: &mut [u8]) -> Result<(), DmaFault> {
        self.access(addr, dst.len(), |t| t.read(addr, dst))
    }

    fn dma_write(&self, addr: DmaAddr, src: &[u8]) -> Result<(), DmaFault> {
        self.access(addr, src.len(), |t| t.write(addr, src))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::memfd;

    const RAM: u64 = 1 << 20;

    /// RAM as two ranges, contiguous in address and file, and a range without a descriptor.
    fn table() -> DmaTable {
        let fd = memfd("dma-test").unwrap();
        File::from(fd.try_clone().unwrap())
            .set_len(RAM + 0x10000)
            .unwrap();
        let mut t = DmaTable::default();
        let rw = DMA_READ | DMA_WRITE;
        t.map(0, RAM / 2, 0, Some(fd.try_clone().unwrap()), rw)
            .unwrap();
        t.map(RAM / 2, RAM / 2, RAM / 2, Some(fd), rw).unwrap();
        t.map(0x1000_0000, 0x1000, 0, None, DMA_READ).unwrap();
        t
    }

    #[test]
    fn find_takes_only_accesses_inside_one_accessible_range() {
        let t = table();
        for (addr, len) in [(0, 64), (RAM / 2 - 64, 64), (RAM / 2, 64), (RAM - 1, 1)] {
            assert!(t.find(addr, len).is_some(), "{addr:#x}+{len}");
        }
        for (addr, len) in [
            (RAM / 2 - 32, 64),
            (RAM - 8, 64),
            (RAM, 1),
            (0, RAM as usize),
            (0x1000_0000, 4),
            (u64::MAX - 15, 64),
            (u64::MAX, 1),
        ] {
            assert!(t.find(addr, len).is_none(), "{addr:#x}+{len}");
        }
        let mut b = [0u8; 64];
        assert!(!t.read(RAM / 2 - 32, &mut b));
        assert!(t.write(RAM / 2 - 64, &[1; 64]));
        assert!(t.read(RAM / 2 - 64, &mut b) && b == [1; 64]);
    }

    #[test]
    fn read_only_ranges_take_no_writes() {
        let fd = memfd("dma-ro").unwrap();
        File::from(fd.try_clone().unwrap()).set_len(0x2000).unwrap();
        let mut t = DmaTable::default();
        t.map(0, 0x2000, 0, Some(fd), DMA_READ).unwrap();
        assert!(!t.write(0, &[1]));
        let mut b = [9u8; 1];
        assert!(t.read(0, &mut b) && b == [0]);
    }
}
