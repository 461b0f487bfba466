// SPDX-License-Identifier: GPL-2.0

//! The bus a function sits on, as the driver sees it: what the PCI core gives a NIC driver.
//!
//! A [`Function`] is one function of a device: its register window ([`Bar`], a `hwif::hw::Mmio`
//! with the kernel's barriers), its DMA parent, and its MSI-X vectors, on which the driver
//! registers handlers ([`Function::request_irq`], as `request_irq()`: the handler runs in
//! interrupt-like context, with bottom halves off, and must not sleep). This is the whole
//! hardware interface of the driver; together with the DMA memory it allocates and the
//! formats of `hwif/`, nothing else crosses between the driver and the device.
//!
//! A function carries one port (a ConnectX function) or several (a MANA function's vports,
//! which share its registers, its hardware channel and its vectors, as upstream mana's do).
//! A vector may carry several handlers (each registered under a key the function's driver
//! makes unique, [`IrqKey`]); when it fires, each runs, as on a shared IRQ line.
//!
//! Two transports implement it ([`Transport`]), each in its own module below this one:
//! the in-kernel transport ([`inkernel`]: a device host running the device model in the
//! kernel, on a workqueue) and real PCI functions ([`pci`]:
//! a MANA VF or a ConnectX function, with its own ids and BAR0 layout, reached by MMIO:
//! hardware, or a device model in a host process behind QEMU's `vfio-user-pci`). A register
//! write is matched on the transport (no function pointer on the doorbell path).

use crate::hwif::hw::{Barriers, Mmio};
use crate::kdma::KBarriers;
use crate::kernel_ext::dma::DmaDevice;
use inkernel::Engine;
use kernel::{
    fmt,
    prelude::*,
    str::{CStr, CString},
    sync::Arc,
};
use pci::PciFunction;

pub(crate) mod inkernel;
pub(crate) mod pci;

/// An interrupt handler registered on a vector ([`Function::request_irq`]).
pub(crate) trait IrqHandler: Send + Sync {
    /// The vector fired. Interrupt-like context: bottom halves are off, nothing may sleep.
    /// On a shared vector it also runs when another handler's source fired: it looks at its
    /// own queue and finds nothing.
    fn irq(&self);
}

/// Names a handler among those of one function: unique on the function (the driver of the
/// function chooses them), so that several may share a vector and each can be freed alone.
pub(crate) type IrqKey = usize;

/// The device families the bus knows (the function's PCI vendor id, in effect).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Mellanox ConnectX (mlx5).
    Mlx5,
    /// Microsoft Azure MANA (GDMA).
    Mana,
}

impl Kind {
    /// PCI vendor id of Mellanox (ConnectX).
    pub(crate) const VENDOR_MELLANOX: u16 = 0x15b3;
    /// PCI vendor id of Microsoft (MANA).
    pub(crate) const VENDOR_MICROSOFT: u16 = 0x1414;

    /// The family of a PCI function with vendor id `vendor` (`None`: neither).
    pub(crate) fn from_vendor(vendor: u16) -> Option<Self> {
        match vendor {
            Self::VENDOR_MELLANOX => Some(Kind::Mlx5),
            Self::VENDOR_MICROSOFT => Some(Kind::Mana),
            _ => None,
        }
    }

    /// The name of MSI-X vector `vector` of a function of this family whose PCI name is
    /// `pci`, as the upstream driver names it in `/proc/interrupts`: ConnectX
    /// `mlx5_async0@pci:<bdf>` for the control vector and `mlx5_comp<N>@pci:<bdf>` for
    /// completion vector N (mlx5 `irq_set_name()`, vector 0 is the control one); MANA
    /// `mana_hwc@pci:<bdf>` for the hardware channel's vector and `mana_q<N>@pci:<bdf>` for
    /// queue vector N (`mana_gd_setup_irqs()`).
    pub(crate) fn irq_name(self, vector: usize, pci: &CStr) -> Result<CString> {
        match (self, vector) {
            (Kind::Mlx5, 0) => CString::try_from_fmt(fmt!("mlx5_async0@pci:{}", pci)),
            (Kind::Mlx5, v) => CString::try_from_fmt(fmt!("mlx5_comp{}@pci:{}", v - 1, pci)),
            (Kind::Mana, 0) => CString::try_from_fmt(fmt!("mana_hwc@pci:{}", pci)),
            (Kind::Mana, v) => CString::try_from_fmt(fmt!("mana_q{}@pci:{}", v - 1, pci)),
        }
    }
}

/// What carries a function's register accesses and interrupts.
pub(crate) enum Transport {
    /// The in-kernel device host's engine.
    InKernel(Arc<Engine>),
    /// A real PCI function (its BAR0 mapped, its MSI-X vectors allocated).
    Direct(Arc<PciFunction>),
}

/// One function of a device.
pub(crate) struct Function {
    xport: Transport,
    dma: Arc<DmaDevice>,
    /// Function number on its device.
    index: usize,
    /// Offset of the function's register window in the device's registers.
    base: u32,
    /// The transport's number of the function's vector 0 (its vector `v` is `vec_base + v`).
    vec_base: usize,
    /// Vectors of the function.
    vectors: usize,
    /// Device number (for names and logs).
    dev: u32,
}

impl Function {
    /// Function `index` of the in-kernel device `engine` runs, its registers at `base`, its
    /// `vectors` vectors the engine's `vec_base..vec_base + vectors`. For the device host
    /// only.
    pub(crate) fn new(
        engine: Arc<Engine>,
        dma: Arc<DmaDevice>,
        dev: u32,
        index: usize,
        base: u32,
        vec_base: usize,
        vectors: usize,
    ) -> Result<Arc<Self>> {
        Ok(Arc::new(
            Self {
                xport: Transport::InKernel(engine),
                dma,
                index,
                base,
                vec_base,
                vectors,
                dev,
            },
            GFP_KERNEL,
        )?)
    }

    /// The real PCI function `pci` (device number `dev`): registers at BAR0 offset 0, every
    /// MSI-X vector it was given.
    pub(crate) fn new_direct(pci: Arc<PciFunction>, dev: u32) -> Result<Arc<Self>> {
        let vectors = pci.vectors();
        Ok(Arc::new(
            Self {
                dma: pci.dma().clone(),
                xport: Transport::Direct(pci),
                index: 0,
                base: 0,
                vec_base: 0,
                vectors,
                dev,
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

    /// What ethtool reports as bus info for the function's port `port` (0 for a function
    /// with one port; a MANA vport's index): `rsnic-sim<dev>:port<n>` for the in-kernel host
    /// (`n` the port's number on its device: the device host names its per-port files so),
    /// the PCI device's name for a real function (its vports share it, as upstream mana's
    /// netdevs do).
    pub(crate) fn bus_info(&self, port: usize) -> Result<CString> {
        let n = self.index.saturating_add(port);
        Ok(match &self.xport {
            Transport::InKernel(_) => {
                CString::try_from_fmt(fmt!("rsnic-sim{}:port{}", self.dev, n))?
            }
            Transport::Direct(p) => CString::try_from_fmt(fmt!("{}", p.name()))?,
        })
    }

    /// Whether the function still answers on the bus (unless it is known to be gone, a
    /// config space read for a real function, [`pci::PciFunction::check_present`];
    /// the in-kernel device host's functions never go);
    /// if not, it is gone from now on: register reads return all-ones without reaching the
    /// bus, writes are dropped. Any context; costs a bus round trip. What a driver's long
    /// wait for its device calls now and then.
    pub(crate) fn check_present(&self) -> bool {
        self.bar().check_present()
    }

    /// MSI-X vectors of the function (vector numbers `0..num_vectors()`: what the driver
    /// gives the device as an EQ's vector and registers its handler on).
    pub(crate) fn num_vectors(&self) -> usize {
        self.vectors
    }

    /// Registers `handler` under `key` on the function's vector `intr` (replacing the one
    /// registered under `key` there, if any); other keys' handlers on the vector stay and run
    /// too. Fails with `EINVAL` for a vector the function does not have. May sleep.
    pub(crate) fn request_irq(
        &self,
        intr: usize,
        key: IrqKey,
        handler: Arc<dyn IrqHandler>,
    ) -> Result {
        if intr >= self.vectors {
            return Err(EINVAL);
        }
        let v = self.vec_base + intr;
        match &self.xport {
            Transport::InKernel(e) => e.set_handler(v, key, Some(handler)),
            Transport::Direct(p) => p.irqs().request(v, key, handler),
        }
    }

    /// Unregisters the handler registered under `key` on vector `intr`: once this returns,
    /// no call of it is in progress or will start. The handler's reference is dropped here
    /// (may sleep).
    pub(crate) fn free_irq(&self, intr: usize, key: IrqKey) {
        if intr >= self.vectors {
            return;
        }
        let v = self.vec_base + intr;
        match &self.xport {
            Transport::InKernel(e) => {
                let _ = e.set_handler(v, key, None);
            }
            Transport::Direct(p) => p.irqs().free(v, key),
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

impl Bar<'_> {
    /// Whether the window's function is known to be gone (a surprise removal seen on the bus:
    /// its registers and config space read all-ones); no bus access.
    pub(crate) fn is_gone(&self) -> bool {
        match self.xport {
            Transport::InKernel(_) => false,
            Transport::Direct(p) => p.is_gone(),
        }
    }

    /// [`Function::check_present`] of the window's function.
    pub(crate) fn check_present(&self) -> bool {
        match self.xport {
            Transport::InKernel(_) => true,
            Transport::Direct(p) => p.check_present(),
        }
    }
}

impl Mmio for Bar<'_> {
    #[inline(always)]
    fn write64(&self, offset: u32, bytes: [u8; 8]) {
        let reg = self.base.wrapping_add(offset);
        match self.xport {
            Transport::InKernel(e) => e.mmio_write64(reg, bytes),
            Transport::Direct(p) => p.write64(reg, bytes),
        }
    }

    #[inline(always)]
    fn write32(&self, offset: u32, value: u32) {
        let reg = self.base.wrapping_add(offset);
        match self.xport {
            Transport::InKernel(e) => e.mmio_write32(reg, value),
            Transport::Direct(p) => p.write32(reg, value),
        }
    }

    #[inline(always)]
    fn read32(&self, offset: u32) -> u32 {
        let reg = self.base.wrapping_add(offset);
        match self.xport {
            Transport::InKernel(e) => e.mmio_read32(reg),
            Transport::Direct(p) => p.read32(reg),
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
