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
//! Two transports implement it ([`Transport`]): the in-kernel device host (`host/`: a device
//! model running in the kernel, on a workqueue), and the PCI transport (`pcidev.rs`: the PCI
//! functions of an emulated device whose model runs in a host process). A register write is
//! matched on the transport (no function pointer on the doorbell path).

use crate::dp::hw::{Barriers, Mmio};
use crate::host::Engine;
use crate::kdma::KBarriers;
use crate::kernel_ext::dma::DmaDevice;
use crate::pcidev::PciTransport;
use kernel::{
    fmt,
    prelude::*,
    str::{CStr, CString},
    sync::Arc,
};

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

/// What carries a function's register accesses and interrupts.
pub(crate) enum Transport {
    /// The in-kernel device host's engine.
    InKernel(Arc<Engine>),
    /// A PCI device of the PCI transport.
    Pci(Arc<PciTransport>),
}

/// One function of a device.
pub(crate) struct Function {
    xport: Transport,
    dma: Arc<DmaDevice>,
    /// Function number on its device.
    index: usize,
    /// Offset of the function's register window in the device's registers.
    base: u32,
    /// Device number (for names and logs).
    dev: u32,
    /// What ethtool reports as bus info: `rsnic-sim<dev>:port<index>` for the in-kernel
    /// host, `<pci name>:port<index>` for a PCI device.
    bus_info: CString,
}

impl Function {
    /// Function `index` of the in-kernel device `engine` runs, its registers at `base`.
    /// For the device host only.
    pub(crate) fn new(
        engine: Arc<Engine>,
        dma: Arc<DmaDevice>,
        dev: u32,
        index: usize,
        base: u32,
    ) -> Result<Arc<Self>> {
        let bus_info = CString::try_from_fmt(fmt!("rsnic-sim{}:port{}", dev, index))?;
        Ok(Arc::new(
            Self {
                xport: Transport::InKernel(engine),
                dma,
                index,
                base,
                dev,
                bus_info,
            },
            GFP_KERNEL,
        )?)
    }

    /// Function `index` of PCI device `pci` (device number `dev`), its registers at `base`.
    /// For the PCI transport's probe only.
    pub(crate) fn new_pci(
        pci: Arc<PciTransport>,
        dev: u32,
        index: usize,
        base: u32,
    ) -> Result<Arc<Self>> {
        let bus_info = CString::try_from_fmt(fmt!("{}:port{}", pci.name(), index))?;
        Ok(Arc::new(
            Self {
                dma: pci.dma().clone(),
                xport: Transport::Pci(pci),
                index,
                base,
                dev,
                bus_info,
            },
            GFP_KERNEL,
        )?)
    }

    /// The function's registers.
    #[inline(always)]
    pub(crate) fn bar(&self) -> Bar<'_> {
        Bar {
            xport: &self.xport,
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

    /// The function's bus info (ethtool -i).
    pub(crate) fn bus_info(&self) -> &CStr {
        &self.bus_info
    }

    /// MSI-X vectors of the function.
    pub(crate) fn num_vectors(&self) -> usize {
        match &self.xport {
            Transport::InKernel(_) => crate::host::VECTORS_PER_FUNCTION,
            Transport::Pci(p) => p.vectors_per_function(),
        }
    }

    /// Registers `handler` on the function's vector `intr` (replacing any). Fails with
    /// `EINVAL` for a vector the function does not have. May sleep.
    pub(crate) fn request_irq(&self, intr: usize, handler: Arc<dyn IrqHandler>) -> Result {
        match &self.xport {
            Transport::InKernel(e) => e.set_handler(self.index, intr, Some(handler)),
            Transport::Pci(p) => {
                let index = crate::pcidev::msix_index(self.index, intr).ok_or(EINVAL)?;
                p.request_irq(index, handler)
            }
        }
    }

    /// Unregisters vector `intr`'s handler: once this returns, no call of it is in progress
    /// or will start. The handler's reference is dropped here (may sleep).
    pub(crate) fn free_irq(&self, intr: usize) {
        match &self.xport {
            Transport::InKernel(e) => {
                let _ = e.set_handler(self.index, intr, None);
            }
            Transport::Pci(p) => {
                if let Some(index) = crate::pcidev::msix_index(self.index, intr) {
                    p.free_irq(index);
                }
            }
        }
    }
}

/// A function's register window (BAR0), as the data path writes it: a doorbell is a
/// register write.
#[derive(Clone, Copy)]
pub(crate) struct Bar<'a> {
    xport: &'a Transport,
    base: u32,
}

impl Mmio for Bar<'_> {
    #[inline(always)]
    fn write64(&self, offset: u32, bytes: [u8; 8]) {
        let reg = self.base.wrapping_add(offset);
        match self.xport {
            Transport::InKernel(e) => e.mmio_write64(reg, bytes),
            Transport::Pci(p) => p.write64(reg, bytes),
        }
    }

    #[inline(always)]
    fn write32(&self, offset: u32, value: u32) {
        let reg = self.base.wrapping_add(offset);
        match self.xport {
            Transport::InKernel(e) => e.mmio_write32(reg, value),
            Transport::Pci(p) => p.write32(reg, value),
        }
    }

    #[inline(always)]
    fn read32(&self, offset: u32) -> u32 {
        let reg = self.base.wrapping_add(offset);
        match self.xport {
            Transport::InKernel(e) => e.mmio_read32(reg),
            Transport::Pci(p) => p.read32(reg),
        }
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
