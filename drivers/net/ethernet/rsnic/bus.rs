// SPDX-License-Identifier: GPL-2.0

//! The bus a function sits on, as the driver sees it: what the PCI core gives a NIC driver.
//!
//! A [`Function`] is one function of a device: its register window ([`Bar`], a `dp::hw::Mmio`
//! with the kernel's barriers), its DMA parent, and its MSI-X vectors, on which the driver
//! registers handlers ([`Function::request_irq`], as `request_irq()`: the handler runs in
//! interrupt-like context, with bottom halves off, and must not sleep). This is the whole
//! hardware interface of the driver; together with the DMA memory it allocates and the
//! formats of `dp/`, nothing else crosses between the driver and the device.
//!
//! The device host (`host/`) implements it: today a device model running in the kernel, on
//! a workqueue; the functions could as well be PCI functions of an emulated device.

use crate::dp::hw::{Barriers, Mmio};
use crate::host::Engine;
use crate::kdma::KBarriers;
use crate::kernel_ext::dma::DmaDevice;
use kernel::{prelude::*, sync::Arc};

/// An interrupt handler registered on a vector ([`Function::request_irq`]).
pub(crate) trait IrqHandler: Send + Sync {
    /// The vector fired. Interrupt-like context: bottom halves are off, nothing may sleep.
    fn irq(&self);
}

/// The device families the bus knows (the function's PCI device id, in effect).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Mellanox ConnectX (mlx5).
    Mlx5,
    /// Microsoft Azure MANA (GDMA).
    Mana,
}

/// One function of a device.
pub(crate) struct Function {
    engine: Arc<Engine>,
    dma: Arc<DmaDevice>,
    /// Function number on its device.
    index: usize,
    /// Offset of the function's register window in the device's registers.
    base: u32,
    /// Device number (for names: `rsnic-sim<dev>`).
    dev: u32,
}

impl Function {
    /// Function `index` of the device `engine` runs, its registers at `base`. For the device
    /// host only.
    pub(crate) fn new(
        engine: Arc<Engine>,
        dma: Arc<DmaDevice>,
        dev: u32,
        index: usize,
        base: u32,
    ) -> Result<Arc<Self>> {
        Ok(Arc::new(
            Self {
                engine,
                dma,
                index,
                base,
                dev,
            },
            GFP_KERNEL,
        )?)
    }

    /// The function's registers.
    #[inline(always)]
    pub(crate) fn bar(&self) -> Bar<'_> {
        Bar {
            engine: &self.engine,
            base: self.base,
        }
    }

    /// The DMA parent of the function.
    pub(crate) fn dma(&self) -> &Arc<DmaDevice> {
        &self.dma
    }

    /// The function's number on its device.
    pub(crate) fn index(&self) -> usize {
        self.index
    }

    /// The device's number.
    pub(crate) fn device(&self) -> u32 {
        self.dev
    }

    /// MSI-X vectors of the function.
    pub(crate) fn num_vectors(&self) -> usize {
        crate::host::VECTORS_PER_FUNCTION
    }

    /// Registers `handler` on the function's vector `intr` (replacing any). Fails with
    /// `EINVAL` for a vector the function does not have.
    pub(crate) fn request_irq(&self, intr: usize, handler: Arc<dyn IrqHandler>) -> Result {
        self.engine.set_handler(self.index, intr, Some(handler))
    }

    /// Unregisters vector `intr`'s handler: once this returns, no call of it is in progress
    /// or will start. The handler's reference is dropped here (may sleep).
    pub(crate) fn free_irq(&self, intr: usize) {
        let _ = self.engine.set_handler(self.index, intr, None);
    }
}

/// A function's register window (BAR0), as the data path writes it: a doorbell is a
/// register write.
#[derive(Clone, Copy)]
pub(crate) struct Bar<'a> {
    engine: &'a Arc<Engine>,
    base: u32,
}

impl Mmio for Bar<'_> {
    #[inline(always)]
    fn write64(&self, offset: u32, bytes: [u8; 8]) {
        self.engine
            .mmio_write64(self.base.wrapping_add(offset), bytes);
    }

    #[inline(always)]
    fn write32(&self, offset: u32, value: u32) {
        self.engine
            .mmio_write32(self.base.wrapping_add(offset), value);
    }

    #[inline(always)]
    fn read32(&self, offset: u32) -> u32 {
        self.engine.mmio_read32(self.base.wrapping_add(offset))
    }
}

impl Barriers for Bar<'_> {
    #[inline(always)]
    fn dma_wmb(&self) {
        KBarriers.dma_wmb();
    }

    #[inline(always)]
    fn dma_rmb(&self) {
        KBarriers.dma_rmb();
    }

    #[inline(always)]
    fn wmb(&self) {
        KBarriers.wmb();
    }
}
