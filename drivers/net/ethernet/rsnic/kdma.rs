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
