// SPDX-License-Identifier: GPL-2.0

//! The data path's memory traits (`hwif::hw`) on the kernel: coherent DMA buffers and the
//! kernel's barriers.

use crate::hwif::hw::{Barriers, Coherent, DmaAddr};
use crate::kernel_ext::dma::{CoherentBuffer, DmaDevice};
use crate::kernel_ext::sync;
use kernel::{prelude::*, sync::Arc};

/// A DMA-coherent buffer, shareable: several queues keep their doorbell records in one page.
#[derive(Clone)]
pub(crate) struct KCoherent(Arc<CoherentBuffer>);

impl KCoherent {
    /// Allocates `size` zeroed bytes of coherent memory on `dma`.
    pub(crate) fn alloc(dma: &Arc<DmaDevice>, size: usize) -> Result<Self> {
        Ok(Self(Arc::new(
            CoherentBuffer::alloc(dma, size)?,
            GFP_KERNEL,
        )?))
    }

    /// Allocates `size` zeroed bytes of coherent memory on `dma` page by page (one
    /// allocation per `PAGE_SIZE`), for a queue buffer the device finds through a page list
    /// ([`KCoherent::page_list`]): no physically contiguous memory beyond a page is needed.
    pub(crate) fn alloc_pages(dma: &Arc<DmaDevice>, size: usize) -> Result<Self> {
        Ok(Self(Arc::new(
            CoherentBuffer::alloc_pages(dma, size)?,
            GFP_KERNEL,
        )?))
    }

    /// Bus addresses of the buffer's `page`-byte pages in order (`page` a power of two that
    /// divides the buffer's pieces, e.g. the 4 KiB of a ConnectX PAS entry); EINVAL for a
    /// page that would straddle two pieces or start unaligned.
    pub(crate) fn page_list(&self, page: usize) -> Result<KVec<u64>> {
        let b = &self.0;
        if page == 0 || !page.is_power_of_two() || b.chunk_size() % page != 0 {
            return Err(EINVAL);
        }
        let n = b.size().div_ceil(page);
        let mut v = KVec::with_capacity(n, GFP_KERNEL)?;
        for i in 0..n {
            let a = b.dma_at(i * page).ok_or(EINVAL)?;
            if a % page as u64 != 0 {
                return Err(EINVAL);
            }
            v.push(a, GFP_KERNEL)?;
        }
        Ok(v)
    }
}

impl Coherent for KCoherent {
    fn dma_addr(&self) -> DmaAddr {
        self.0.dma_addr()
    }

    fn size(&self) -> usize {
        self.0.size()
    }

    // Offsets come from the data path's masked counters; an access out of bounds would be a
    // driver bug, which the buffer refuses (write ignored, read as zeroes).
    fn write(&self, off: usize, src: &[u8]) {
        let _ = self.0.write(off, src);
    }

    fn read(&self, off: usize, dst: &mut [u8]) {
        if !self.0.read(off, dst) {
            dst.fill(0);
        }
    }

    fn zero(&self, off: usize, len: usize) {
        const Z: [u8; 64] = [0; 64];
        let mut done = 0;
        while done < len {
            let n = (len - done).min(Z.len());
            let _ = self.0.write(off + done, &Z[..n]);
            done += n;
        }
    }
}

/// The kernel's barriers.
#[derive(Clone, Copy, Default)]
pub(crate) struct KBarriers;

impl Barriers for KBarriers {
    #[inline]
    fn dma_wmb(&self) {
        sync::dma_wmb();
    }

    #[inline]
    fn dma_rmb(&self) {
        sync::dma_rmb();
    }

    #[inline]
    fn wmb(&self) {
        sync::wmb();
    }
}
