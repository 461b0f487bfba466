// SPDX-License-Identifier: GPL-2.0

//! DMA: a DMA-capable parent device, coherent buffers, streaming mappings of packets, and the
//! simulated device's view of host memory.
//!
//! C headers: [`include/linux/dma-mapping.h`](srctree/include/linux/dma-mapping.h),
//! [`include/linux/platform_device.h`](srctree/include/linux/platform_device.h),
//! [`include/linux/device.h`](srctree/include/linux/device.h).
//!
//! Memory shared with a device is only ever accessed through copies (volatile, word-wise
//! where aligned), never through Rust references, because the device may read or write it at
//! any time.

use super::bindings;
use super::net::skb::SkBuff;
use core::ptr::NonNull;
use kernel::{error::to_result, prelude::*, str::CStr, sync::Arc};

/// Copies `src` to device-shared memory at `dst` with volatile stores.
///
/// # Safety
///
/// `dst` is valid for writes of `src.len()` bytes.
unsafe fn copy_to_shared(dst: *mut u8, src: &[u8]) {
    let mut i = 0;
    if (dst as usize) % 8 == 0 {
        while i + 8 <= src.len() {
            let mut w = [0u8; 8];
            w.copy_from_slice(&src[i..i + 8]);
            // SAFETY: in bounds (loop condition) and 8-byte aligned (`dst` aligned, `i` a
            // multiple of 8); the caller guarantees validity.
            unsafe {
                dst.add(i)
                    .cast::<u64>()
                    .write_volatile(u64::from_ne_bytes(w))
            };
            i += 8;
        }
    }
    while i < src.len() {
        // SAFETY: `i < src.len()`; the caller guarantees validity.
        unsafe { dst.add(i).write_volatile(src[i]) };
        i += 1;
    }
}

/// Copies device-shared memory at `src` into `dst` with volatile loads.
///
/// # Safety
///
/// `src` is valid for reads of `dst.len()` bytes.
unsafe fn copy_from_shared(dst: &mut [u8], src: *const u8) {
    let mut i = 0;
    if (src as usize) % 8 == 0 {
        while i + 8 <= dst.len() {
            // SAFETY: in bounds and aligned as in `copy_to_shared`.
            let w = unsafe { src.add(i).cast::<u64>().read_volatile() };
            dst[i..i + 8].copy_from_slice(&w.to_ne_bytes());
            i += 8;
        }
    }
    while i < dst.len() {
        // SAFETY: `i < dst.len()`; the caller guarantees validity.
        dst[i] = unsafe { src.add(i).read_volatile() };
        i += 1;
    }
}

/// A stub platform driver named `rsnic` that binds the module's own platform devices
/// (`rsnic-sim.N`, [`DmaDevice::new`]), so that what reads a device's driver (the devlink
/// core's `devlink dev info`) finds rsnic. Its probe and remove do nothing: the devices are
/// the module's, used by it whether bound or not. One at a time (the module registers it
/// once, before it makes the devices, and drops it after they are gone).
pub struct SimDriver(());

impl SimDriver {
    /// Registers the driver (it binds the devices that exist and those made later).
    pub fn register() -> Result<Self> {
        // SAFETY: registers a static driver structure of the helpers; `drop` unregisters it.
        to_result(unsafe { bindings::rsnic_helper_sim_driver_register() })?;
        Ok(Self(()))
    }
}

impl Drop for SimDriver {
    fn drop(&mut self) {
        // SAFETY: registered in `register`.
        unsafe { bindings::rsnic_helper_sim_driver_unregister() };
    }
}

/// The device a NIC's DMA goes through and its net devices hang from: a platform device
/// of the module's own (for a simulated NIC), or a PCI device the driver is bound to.
///
/// # Invariants
///
/// `dev` is valid: the registered platform device's own, or a PCI device's `struct device`
/// on which we hold a reference; in both cases its DMA mask was set up.
pub struct DmaDevice {
    dev: NonNull<bindings::device>,
    kind: Owner,
}

/// How a [`DmaDevice`] holds its device.
enum Owner {
    /// A platform device the module registered; unregistered on drop.
    Platform(NonNull<bindings::platform_device>),
    /// A bound PCI device's `struct device`: a reference (`get_device()`), put on drop. The
    /// driver set its DMA mask at probe.
    Pci,
}

// SAFETY: the DMA API may be used on a device from any thread.
unsafe impl Send for DmaDevice {}
// SAFETY: as for `Send`; `&DmaDevice` only calls thread-safe DMA functions.
unsafe impl Sync for DmaDevice {}

impl DmaDevice {
    /// Registers platform device `name`.`id` and sets it up for 64-bit coherent DMA.
    pub fn new(name: &'static CStr, id: i32) -> Result<Arc<Self>> {
        // SAFETY: `name` is a valid NUL-terminated string that outlives the device.
        let ptr =
            unsafe { bindings::rsnic_helper_platform_device_register(name.as_char_ptr(), id) };
        let ptr = kernel::error::from_err_ptr(ptr)?;
        let pdev = NonNull::new(ptr).ok_or(ENOMEM)?;
        // SAFETY: the device was just registered.
        let raw = unsafe { bindings::rsnic_helper_platform_device_dev(pdev.as_ptr()) };
        let dev = Self {
            // SAFETY: the `struct device` inside a platform device is never NULL.
            dev: unsafe { NonNull::new_unchecked(raw) },
            kind: Owner::Platform(pdev),
        };
        // SAFETY: the device was just registered.
        to_result(unsafe { bindings::rsnic_helper_dma_setup(dev.raw()) })?;
        Ok(Arc::new(dev, GFP_KERNEL)?)
    }

    /// The DMA device of PCI device `pdev`, whose DMA mask the caller set
    /// ([`super::pci::PciDevice::dma_set_mask_64`]). Holds a reference to its `struct
    /// device`; the caller keeps the driver bound while it uses the device for DMA (the
    /// driver's remove drops everything that maps or allocates with it).
    pub fn for_pci(pdev: &super::pci::PciDevice) -> Result<Arc<Self>> {
        let raw = pdev.as_dev_ptr();
        // SAFETY: a valid device (`pdev` holds it); the reference is put in `drop`.
        unsafe { bindings::get_device(raw) };
        let dev = Self {
            // SAFETY: the `struct device` inside a PCI device is never NULL.
            dev: unsafe { NonNull::new_unchecked(raw) },
            kind: Owner::Pci,
        };
        Ok(Arc::new(dev, GFP_KERNEL)?)
    }

    /// The `struct device`, for the C APIs of this layer.
    pub(crate) fn raw(&self) -> *mut bindings::device {
        self.dev.as_ptr()
    }

    /// Maps `len` bytes of `skb`'s linear data from `offset` for the device to read.
    pub fn map_skb_head(&self, skb: &SkBuff, offset: u32, len: u32) -> Result<DmaMapping> {
        if len == 0
            || offset
                .checked_add(len)
                .map_or(true, |end| end > skb.headlen())
        {
            return Err(EINVAL);
        }
        let data = skb.linear().as_ptr();
        // SAFETY: [offset, offset + len) is inside the skb's linear data (checked above),
        // which stays allocated while the caller keeps the skb, i.e. until it unmaps.
        let addr = unsafe {
            bindings::rsnic_helper_dma_map_single(
                self.raw(),
                data.add(offset as usize).cast_mut().cast(),
                len as usize,
                1,
            )
        };
        self.check(addr)?;
        Ok(DmaMapping {
            addr,
            len,
            page: false,
        })
    }

    /// Maps `len` bytes of an XDP frame's data from `offset` for the device to read
    /// (`dma_map_single()`).
    pub fn map_xdp_frame(
        &self,
        frame: &super::net::xdp::XdpFrame,
        offset: u32,
        len: u32,
    ) -> Result<DmaMapping> {
        let data = frame.data();
        let bytes = data
            .get(offset as usize..)
            .and_then(|d| d.get(..len as usize))
            .filter(|b| !b.is_empty())
            .ok_or(EINVAL)?;
        // SAFETY: `bytes` lies inside the frame's data, which stays allocated while the
        // caller keeps the frame, i.e. until it unmaps (it returns the frame after that).
        let addr = unsafe {
            bindings::rsnic_helper_dma_map_single(
                self.raw(),
                bytes.as_ptr() as *mut core::ffi::c_void,
                bytes.len(),
                1,
            )
        };
        self.check(addr)?;
        Ok(DmaMapping {
            addr,
            len,
            page: false,
        })
    }

    /// Maps fragment `frag` of `skb` for the device to read.
    pub fn map_skb_frag(&self, skb: &SkBuff, frag: u32) -> Result<DmaMapping> {
        if frag >= skb.nr_frags() {
            return Err(EINVAL);
        }
        let mut len = 0u32;
        // SAFETY: `frag` is below nr_frags (checked); the fragment's page is held by the skb
        // until the caller unmaps.
        let addr = unsafe {
            bindings::rsnic_helper_skb_frag_dma_map(self.raw(), skb.as_raw(), frag, &mut len)
        };
        self.check(addr)?;
        Ok(DmaMapping {
            addr,
            len,
            page: true,
        })
    }

    fn check(&self, addr: bindings::dma_addr_t) -> Result {
        // SAFETY: plain query on our device.
        if unsafe { bindings::rsnic_helper_dma_mapping_error(self.raw(), addr) } != 0 {
            return Err(ENOMEM);
        }
        Ok(())
    }

    /// Ends a streaming mapping.
    pub fn unmap(&self, mapping: DmaMapping) {
        // SAFETY: `mapping` came from `map_skb_*` on this device (it is only made there and
        // is consumed here, so it is unmapped once).
        unsafe {
            if mapping.page {
                bindings::rsnic_helper_dma_unmap_page(
                    self.raw(),
                    mapping.addr,
                    mapping.len as usize,
                    1,
                )
            } else {
                bindings::rsnic_helper_dma_unmap_single(
                    self.raw(),
                    mapping.addr,
                    mapping.len as usize,
                    1,
                )
            }
        }
    }
}

impl DmaDevice {
    /// Ends a streaming mapping described by its address, length and kind, as a data path
    /// keeps it in its own FIFO (`page` for fragment mappings).
    ///
    /// Unmapping what this device did not map is a driver bug that the DMA API's debug
    /// checks report; it changes what the device may access, never CPU memory.
    pub fn unmap_raw(&self, addr: u64, len: u32, page: bool) {
        // SAFETY: see above: the DMA API tolerates (and reports) bad unmaps on this device.
        unsafe {
            if page {
                bindings::rsnic_helper_dma_unmap_page(self.raw(), addr, len as usize, 1)
            } else {
                bindings::rsnic_helper_dma_unmap_single(self.raw(), addr, len as usize, 1)
            }
        }
    }
}

impl Drop for DmaDevice {
    fn drop(&mut self) {
        match self.kind {
            // SAFETY: registered in `new` (type invariant); every coherent buffer holds an
            // `Arc` to us, so none is left.
            Owner::Platform(pdev) => unsafe { bindings::platform_device_unregister(pdev.as_ptr()) },
            // SAFETY: the reference taken in `for_pci` (type invariant).
            Owner::Pci => unsafe { bindings::put_device(self.dev.as_ptr()) },
        }
    }
}

/// One streaming DMA mapping towards the device. Not `Copy`: [`DmaDevice::unmap`] consumes
/// it, so it is unmapped at most once.
#[derive(Debug)]
pub struct DmaMapping {
    addr: u64,
    len: u32,
    page: bool,
}

impl DmaMapping {
    /// The bus address the device uses.
    pub fn addr(&self) -> u64 {
        self.addr
    }

    /// Length in bytes.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether the mapping is empty (never, for mappings made here).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// One `dma_alloc_coherent()` allocation of a [`CoherentBuffer`].
struct Chunk {
    cpu: NonNull<u8>,
    dma: u64,
}

/// A DMA-coherent buffer, zeroed at allocation, freed on drop: one allocation
/// ([`CoherentBuffer::alloc`]) or one per page ([`CoherentBuffer::alloc_pages`], as mlx5's
/// `mlx5_frag_buf_alloc_node` allocates queue buffers, so that a large ring needs no
/// physically contiguous memory). Either way the buffer is read and written by offset as
/// one range of `size` bytes.
///
/// # Invariants
///
/// Each of `chunks` is `chunk_alloc` bytes allocated with `dma_alloc_coherent()` on `dev`
/// (kernel address `cpu`, bus address `dma`). Byte `off < size` of the buffer is byte
/// `off & mask` of chunk `off >> shift`, which exists, and `off & mask < chunk_alloc`: either
/// one chunk of `size` bytes (`shift` such that every offset below `size` maps to chunk 0,
/// `mask` all ones below it), or chunks of `PAGE_SIZE` bytes (`shift` = `PAGE_SHIFT`), as
/// many as cover `size`.
pub struct CoherentBuffer {
    dev: Arc<DmaDevice>,
    chunks: KVec<Chunk>,
    chunk_alloc: usize,
    shift: u32,
    mask: usize,
    size: usize,
}

// SAFETY: the buffer is plain memory; all access goes through volatile copies.
unsafe impl Send for CoherentBuffer {}
// SAFETY: as for `Send`.
unsafe impl Sync for CoherentBuffer {}

impl CoherentBuffer {
    /// Allocates `size` bytes (zeroed) of coherent memory for `dev`, in one piece.
    pub fn alloc(dev: &Arc<DmaDevice>, size: usize) -> Result<Self> {
        if size == 0 || size > isize::MAX as usize {
            return Err(EINVAL);
        }
        let mut b = Self {
            dev: dev.clone(),
            chunks: KVec::with_capacity(1, GFP_KERNEL)?,
            chunk_alloc: size,
            // `size <= isize::MAX`: every offset below it has the top bit clear.
            shift: usize::BITS - 1,
            mask: usize::MAX >> 1,
            size,
        };
        b.add_chunk()?;
        Ok(b)
    }

    /// Allocates `size` bytes (zeroed) of coherent memory for `dev` as separate pages of
    /// `PAGE_SIZE` bytes (the last one whole too), each its own `dma_alloc_coherent()`. The
    /// pages' bus addresses: [`CoherentBuffer::dma_at`]. A failure frees what was allocated.
    pub fn alloc_pages(dev: &Arc<DmaDevice>, size: usize) -> Result<Self> {
        if size == 0 || size > isize::MAX as usize {
            return Err(EINVAL);
        }
        let n = size.div_ceil(kernel::page::PAGE_SIZE);
        let mut b = Self {
            dev: dev.clone(),
            chunks: KVec::with_capacity(n, GFP_KERNEL)?,
            chunk_alloc: kernel::page::PAGE_SIZE,
            shift: kernel::page::PAGE_SHIFT as u32,
            mask: kernel::page::PAGE_SIZE - 1,
            size,
        };
        for _ in 0..n {
            // On an error `b` is dropped, which frees the chunks made so far.
            b.add_chunk()?;
        }
        Ok(b)
    }

    /// Allocates one more chunk of `chunk_alloc` bytes (capacity reserved by the caller).
    fn add_chunk(&mut self) -> Result {
        let mut dma = 0;
        // SAFETY: the device is set up for DMA; `dma` is a valid out-pointer.
        let cpu = unsafe {
            bindings::rsnic_helper_dma_alloc_coherent(self.dev.raw(), self.chunk_alloc, &mut dma)
        };
        let cpu = NonNull::new(cpu.cast::<u8>()).ok_or(ENOMEM)?;
        if let Err(e) = self.chunks.push(Chunk { cpu, dma }, GFP_KERNEL) {
            // SAFETY: just allocated with these parameters and recorded nowhere.
            unsafe {
                bindings::rsnic_helper_dma_free_coherent(
                    self.dev.raw(),
                    self.chunk_alloc,
                    cpu.as_ptr().cast(),
                    dma,
                )
            };
            return Err(e.into());
        }
        Ok(())
    }

    /// Bus address of byte 0.
    pub fn dma_addr(&self) -> u64 {
        self.chunks.first().map_or(0, |c| c.dma)
    }

    /// Size in bytes.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Bytes of each separately allocated piece: `size` for [`CoherentBuffer::alloc`],
    /// `PAGE_SIZE` for [`CoherentBuffer::alloc_pages`]. The bytes of one piece are
    /// contiguous on the bus.
    pub fn chunk_size(&self) -> usize {
        self.chunk_alloc
    }

    /// Bus address of byte `off` (below `size`); the bytes after it up to the end of its
    /// piece ([`CoherentBuffer::chunk_size`]) follow it on the bus. `None` beyond the buffer.
    pub fn dma_at(&self, off: usize) -> Option<u64> {
        if off >= self.size {
            return None;
        }
        let c = self.chunks.get(off >> self.shift)?;
        Some(c.dma + (off & self.mask) as u64)
    }

    fn in_bounds(&self, off: usize, len: usize) -> bool {
        off.checked_add(len).is_some_and(|end| end <= self.size)
    }

    /// Kernel address of byte `off` and how many of the following `len` bytes lie in the
    /// same piece (at least 1 when `off` is in bounds and `len` is not 0); `None` beyond the
    /// pieces.
    #[inline(always)]
    fn span(&self, off: usize, len: usize) -> Option<(*mut u8, usize)> {
        let c = self.chunks.get(off >> self.shift)?;
        let within = off & self.mask;
        let room = self.chunk_alloc.checked_sub(within)?;
        Some((c.cpu.as_ptr().wrapping_add(within), len.min(room)))
    }

    /// Copies `src` into the buffer at `off`; an access out of bounds is refused (false).
    pub fn write(&self, off: usize, src: &[u8]) -> bool {
        if !self.in_bounds(off, src.len()) {
            return false;
        }
        let mut done = 0;
        while done < src.len() {
            // In bounds (checked), so the piece exists and `n >= 1` (type invariant).
            let Some((p, n)) = self.span(off + done, src.len() - done) else {
                return false;
            };
            // SAFETY: `p` is byte `within` of a live piece of `chunk_alloc` bytes and `n` is
            // at most the bytes left in it (`span`); `done + n <= src.len()`.
            unsafe { copy_to_shared(p, &src[done..done + n]) };
            done += n;
        }
        true
    }

    /// Copies bytes at `off` into `dst`; an access out of bounds is refused (false) and
    /// leaves `dst` unchanged.
    pub fn read(&self, off: usize, dst: &mut [u8]) -> bool {
        if !self.in_bounds(off, dst.len()) {
            return false;
        }
        let mut done = 0;
        while done < dst.len() {
            // As in `write`: never `None` in bounds.
            let Some((p, n)) = self.span(off + done, dst.len() - done) else {
                return false;
            };
            // SAFETY: as in `write`.
            unsafe { copy_from_shared(&mut dst[done..done + n], p) };
            done += n;
        }
        true
    }
}

impl Drop for CoherentBuffer {
    fn drop(&mut self) {
        for c in self.chunks.iter() {
            // SAFETY: allocated in `add_chunk` with these parameters (type invariant), freed
            // once (the buffer is being dropped).
            unsafe {
                bindings::rsnic_helper_dma_free_coherent(
                    self.dev.raw(),
                    self.chunk_alloc,
                    c.cpu.as_ptr().cast(),
                    c.dma,
                )
            }
        }
    }
}

/// Host memory as the simulated device sees it: bus address = physical address (no IOMMU),
/// restricted to RAM in the kernel's direct map. Every access is range-checked page by page;
/// an access to anything else is refused, as an IOMMU fault would be.
pub struct PhysBus;

impl PhysBus {
    /// DMA read of `dst.len()` bytes at bus address `addr`.
    pub fn read(&self, addr: u64, dst: &mut [u8]) -> bool {
        // SAFETY: the helper checks that the whole range is RAM in the direct map.
        let p = unsafe { bindings::rsnic_helper_phys_to_virt_checked(addr, dst.len()) };
        if p.is_null() {
            return false;
        }
        // SAFETY: `p` maps `dst.len()` bytes of RAM (checked above). The device only uses
        // addresses the driver handed it in descriptors, for memory the driver keeps mapped
        // while the device may use it.
        unsafe { copy_from_shared(dst, p.cast()) };
        true
    }

    /// DMA write of `src` at bus address `addr`.
    pub fn write(&self, addr: u64, src: &[u8]) -> bool {
        // SAFETY: as in `read`.
        let p = unsafe { bindings::rsnic_helper_phys_to_virt_checked(addr, src.len()) };
        if p.is_null() {
            return false;
        }
        // SAFETY: as in `read`.
        unsafe { copy_to_shared(p.cast(), src) };
        true
    }
}
