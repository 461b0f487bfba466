// SPDX-License-Identifier: GPL-2.0

//! Real PCI functions: a MANA VF (1414:00ba) or a ConnectX function (15b3:..., one port
//! each), with their own ids and BAR0 layouts, reached the way their upstream drivers reach
//! them. Whether the function is hardware or a device model behind QEMU's `vfio-user-pci`
//! (`rsnic-devd --vfio-user`), it is the same to this code.
//!
//! Like `bus/inkernel/`, this is the device's side of the bus: it knows nothing of
//! the driver. It enables the function, claims its BARs, maps BAR0 (uncached, `ioremap`),
//! sets a 64-bit DMA mask and bus mastering, allocates the MSI-X vectors it is asked for, and
//! gives the bus what a [`crate::bus::Function`] needs:
//!
//! * register accesses on BAR0 at the offsets the driver gives (the registers are where the
//!   hardware has them: MANA's VF registers at 0x08, 0x10, 0x18, its SMC window and doorbell
//!   pages; ConnectX's initialization segment at 0 and its UAR pages). A 32-bit register's
//!   value travels in the family's byte order: a ConnectX's big-endian (`ioread32be` /
//!   `iowrite32be`, as mlx5 reads and writes its initialization segment and rings its EQ
//!   doorbells), a MANA's little-endian (`readl` / `writel`). A 64-bit write puts the bytes
//!   it is given on the bus in that order (the `hwif::hw::Mmio` contract: ConnectX doorbells
//!   are big-endian words, MANA's a little-endian u64; see
//!   [`crate::kernel_ext::pci::IoMem::write64`]). An access outside BAR0 or misaligned is
//!   not made: it is counted (a read returns `0xffff_ffff`, as a read of a gone device does)
//!   and logged once;
//! * whether the function is gone ([`PciFunction::check_present`]), as a NIC driver learns
//!   of a surprise removal: a register read that returns all-ones is followed by a look at
//!   config space (`pci_device_is_present()`), and if that reads all-ones too the function
//!   is gone for good: logged once, and from then on no access reaches the bus (a read
//!   returns all-ones, a write is dropped), so the driver's waits and teardown end at once;
//! * MSI-X vectors, each carrying threaded handlers ([`PciIrqs`]) that run the bus handlers
//!   with bottom halves off (the bus contract).
//!
//! The DMA device is the PCI device's own.

use crate::bus::{IrqHandler, IrqKey, Kind};
use crate::kernel_ext::dma::DmaDevice;
use crate::kernel_ext::pci::{
    Enabled, IoMem, IrqThread, IrqVectors, PciDevice, Regions, ThreadedIrq,
};
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use kernel::{
    c_str, fmt, new_mutex,
    prelude::*,
    str::{CStr, CString},
    sync::{Arc, Mutex},
};

/// The BAR with the function's registers.
const REG_BAR: u32 = 0;
/// What a read that could not be made returns (a PCI read of a gone device).
const READ_FAILED: u32 = 0xffff_ffff;

/// The handler of one MSI-X vector registration: a bus handler.
struct Vector(Arc<dyn IrqHandler>);

impl IrqThread for Vector {
    fn handle(&self) {
        self.0.irq();
    }
}

/// One registration on a vector.
struct Registered {
    vector: usize,
    key: IrqKey,
    _irq: ThreadedIrq<Vector>,
}

/// The threaded handlers on a PCI device's MSI-X vectors, several per vector if asked
/// (`IRQF_SHARED`: each registration is its own `request_threaded_irq()`, and the IRQ core
/// runs every one when the vector fires). Control path only (a mutex): the interrupt path
/// is the IRQ core's.
#[pin_data]
pub(crate) struct PciIrqs {
    /// The registrations (a free slot is `None`).
    #[pin]
    regs: Mutex<KVec<Option<Registered>>>,
    vectors: Arc<IrqVectors>,
    /// `pci_name()` of the device, for the interrupts' names.
    name: CString,
    /// The device's family, whose upstream driver's names the interrupts take.
    kind: Kind,
}

impl PciIrqs {
    /// The handlers of `vectors` (none yet) of the device of family `kind` named `name`.
    pub(crate) fn new(vectors: Arc<IrqVectors>, name: CString, kind: Kind) -> impl PinInit<Self> {
        pin_init!(Self {
            regs <- new_mutex!(KVec::new(), "rsnic::PciIrqs::regs"),
            vectors,
            name,
            kind,
        })
    }

    /// How many vectors there are.
    pub(crate) fn count(&self) -> usize {
        self.vectors.count() as usize
    }

    /// Registers `handler` under `key` on MSI-X index `vector` (replacing what `key` had
    /// there), as a threaded interrupt named as the family's upstream driver names that
    /// vector ([`Kind::irq_name`]; handlers sharing a vector, such as those of a MANA
    /// function's vports, each show the vector's name). Sleeps.
    pub(crate) fn request(
        &self,
        vector: usize,
        key: IrqKey,
        handler: Arc<dyn IrqHandler>,
    ) -> Result {
        let index = u32::try_from(vector).map_err(|_| EINVAL)?;
        if vector >= self.count() {
            return Err(EINVAL);
        }
        let mut regs = self.regs.lock();
        // The old registration of the key goes first (free_irq waits for its thread).
        drop(Self::take(&mut regs, vector, key));
        if !regs.iter().any(Option::is_none) {
            regs.push(None, GFP_KERNEL)?;
        }
        let name = self.kind.irq_name(vector, &self.name)?;
        let irq = ThreadedIrq::new(&self.vectors, index, name, Vector(handler), true)?;
        if let Some(slot) = regs.iter_mut().find(|r| r.is_none()) {
            *slot = Some(Registered {
                vector,
                key,
                _irq: irq,
            });
        }
        Ok(())
    }

    /// Unregisters what `key` has on MSI-X index `vector`: once this returns, no call of it
    /// is in progress or will start (`free_irq()` waits for its thread). Sleeps.
    pub(crate) fn free(&self, vector: usize, key: IrqKey) {
        let old = Self::take(&mut self.regs.lock(), vector, key);
        drop(old);
    }

    /// Takes what `key` has on `vector` out of `regs`.
    fn take(regs: &mut [Option<Registered>], vector: usize, key: IrqKey) -> Option<Registered> {
        regs.iter_mut()
            .find(|r| {
                r.as_ref()
                    .is_some_and(|r| r.vector == vector && r.key == key)
            })
            .and_then(Option::take)
    }
}

/// A real PCI function bound to rsnic: its BAR0 mapping and its vectors.
///
/// The fields drop in declaration order, the reverse of the probe's steps: handlers and
/// vectors, the register mapping, the DMA device's reference, the regions, the enable
/// (which also stops bus mastering).
#[pin_data]
pub(crate) struct PciFunction {
    #[pin]
    irqs: PciIrqs,
    bar0: IoMem,
    dma: Arc<DmaDevice>,
    _regions: Regions,
    _enabled: Enabled,
    dev: PciDevice,
    /// `pci_name()` of the device.
    name: CString,
    kind: Kind,
    /// 32-bit registers are big-endian on the bus (ConnectX).
    be32: bool,
    /// Register accesses not made (outside BAR0 or misaligned).
    bad_access: AtomicU64,
    /// The function went away (its config space reads all-ones): sticky.
    gone: AtomicBool,
    /// Whether one was logged.
    bad_logged: AtomicBool,
}

impl PciFunction {
    /// Probes `dev`, a function of family `kind`: enables it, claims its BARs, maps BAR0
    /// (at least `min_bar0` bytes), sets a 64-bit DMA mask and bus mastering, and allocates
    /// between `msix.0` and `msix.1` MSI-X vectors. Every step is undone (in reverse) when a
    /// later one fails; a failure is logged with the step.
    pub(crate) fn probe(
        dev: &PciDevice,
        kind: Kind,
        min_bar0: usize,
        msix: (u32, u32),
    ) -> Result<Arc<Self>> {
        let enabled = dev.enable().inspect_err(|e| {
            dev.err(fmt!("pci_enable_device failed: {:?}", e));
        })?;
        let regions = dev.request_regions(c_str!("rsnic")).inspect_err(|e| {
            dev.err(fmt!("cannot claim the BARs: {:?}", e));
        })?;
        let bar0 = dev.ioremap_bar(REG_BAR).inspect_err(|e| {
            dev.err(fmt!("cannot map BAR{}: {:?}", REG_BAR, e));
        })?;
        if bar0.len() < min_bar0 {
            dev.err(fmt!(
                "BAR{} is {:#x} bytes, the registers need {:#x}",
                REG_BAR,
                bar0.len(),
                min_bar0
            ));
            return Err(ENODEV);
        }
        dev.dma_set_mask_64().inspect_err(|e| {
            dev.err(fmt!("no 64-bit DMA: {:?}", e));
        })?;
        let dma = DmaDevice::for_pci(dev)?;
        dev.set_master();
        let vectors = dev.alloc_msix_range(msix.0, msix.1).inspect_err(|e| {
            dev.err(fmt!(
                "cannot allocate {}..={} MSI-X vectors: {:?}",
                msix.0,
                msix.1,
                e
            ));
        })?;
        let name = CString::try_from_fmt(fmt!("{}", dev.name()))?;
        let irq_name = CString::try_from_fmt(fmt!("{}", dev.name()))?;
        let be32 = kind == Kind::Mlx5;
        Arc::pin_init(
            pin_init!(Self {
                irqs <- PciIrqs::new(vectors, irq_name, kind),
                bar0,
                dma,
                _regions: regions,
                _enabled: enabled,
                dev: dev.clone(),
                name,
                kind,
                be32,
                bad_access: AtomicU64::new(0),
                bad_logged: AtomicBool::new(false),
                gone: AtomicBool::new(false),
            }),
            GFP_KERNEL,
        )
    }

    /// The MSI-X vectors allocated.
    pub(crate) fn vectors(&self) -> usize {
        self.irqs.count()
    }

    /// The handlers on the function's vectors.
    pub(crate) fn irqs(&self) -> &PciIrqs {
        &self.irqs
    }

    /// The DMA device (the PCI device's).
    pub(crate) fn dma(&self) -> &Arc<DmaDevice> {
        &self.dma
    }

    /// `pci_name()` of the device.
    pub(crate) fn name(&self) -> &CStr {
        &self.name
    }

    /// The PCI device, for log lines.
    pub(crate) fn pci(&self) -> &PciDevice {
        &self.dev
    }

    /// Register accesses that were not made (outside BAR0 or misaligned).
    pub(crate) fn bad_accesses(&self) -> u64 {
        self.bad_access.load(Ordering::Relaxed)
    }

    /// Counts an access that was not made and logs the first. `pr_err!`, not `dev.err`
    /// (which allocates): the caller may be in atomic context.
    #[cold]
    #[inline(never)]
    fn bad(&self, what: &str, reg: u32) {
        self.bad_access.fetch_add(1, Ordering::Relaxed);
        if !self.bad_logged.swap(true, Ordering::Relaxed) {
            pr_err!(
                "{}: {} at BAR{} offset {:#x} not made: outside the {:#x}-byte BAR or misaligned\n",
                &*self.name,
                what,
                REG_BAR,
                reg,
                self.bar0.len()
            );
        }
    }

    /// Whether the function is known to be gone (no bus access: what an earlier
    /// [`PciFunction::check_present`] found).
    #[inline(always)]
    pub(crate) fn is_gone(&self) -> bool {
        self.gone.load(Ordering::Relaxed)
    }

    /// Whether the function still answers on the bus: unless it is known to be gone, reads
    /// its vendor id from config space (`pci_device_is_present()`); if that reads all-ones,
    /// the function is gone from now on (logged once). Any context.
    #[cold]
    pub(crate) fn check_present(&self) -> bool {
        if self.is_gone() {
            return false;
        }
        if self.dev.is_present() {
            return true;
        }
        if !self.gone.swap(true, Ordering::Relaxed) {
            pr_err!(
                "{}: the device is gone: its registers and its config space read all-ones; no more register accesses\n",
                &*self.name
            );
        }
        false
    }

    /// A 32-bit register write of `value` at BAR0 offset `reg`, in the family's byte order
    /// (ConnectX `iowrite32be`, MANA `writel`); dropped if the function is gone.
    #[inline(always)]
    pub(crate) fn write32(&self, reg: u32, value: u32) {
        if self.is_gone() {
            return;
        }
        let r = if self.be32 {
            self.bar0.write32_be(reg as usize, value)
        } else {
            self.bar0.write32(reg as usize, value)
        };
        if r.is_err() {
            self.bad("32-bit write", reg);
        }
    }

    /// A 64-bit write of `bytes` (bus order) at BAR0 offset `reg`; dropped if the function
    /// is gone.
    #[inline(always)]
    pub(crate) fn write64(&self, reg: u32, bytes: [u8; 8]) {
        if self.is_gone() {
            return;
        }
        if self.bar0.write64(reg as usize, bytes).is_err() {
            self.bad("64-bit write", reg);
        }
    }

    /// A 32-bit register read at BAR0 offset `reg`, in the family's byte order (ConnectX
    /// `ioread32be`, MANA `readl`); `0xffff_ffff` if it cannot be made or the function is
    /// gone. A read of all-ones checks whether the function is still there
    /// ([`PciFunction::check_present`]).
    #[inline(always)]
    pub(crate) fn read32(&self, reg: u32) -> u32 {
        if self.is_gone() {
            return READ_FAILED;
        }
        let r = if self.be32 {
            self.bar0.read32_be(reg as usize)
        } else {
            self.bar0.read32(reg as usize)
        };
        match r {
            Ok(READ_FAILED) => {
                self.check_present();
                READ_FAILED
            }
            Ok(v) => v,
            Err(_) => {
                self.bad("32-bit read", reg);
                READ_FAILED
            }
        }
    }
}
