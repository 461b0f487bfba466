// SPDX-License-Identifier: GPL-2.0

//! PCI: a driver registration whose probe and remove call a Rust [`PciDriver`], and what a
//! probe needs of its device: enabling it, its regions, bus mastering, the DMA mask, a BAR
//! mapped as registers ([`IoMem`]), MSI-X vectors ([`IrqVectors`]) and threaded handlers on
//! them ([`ThreadedIrq`]).
//!
//! C headers: [`include/linux/pci.h`](srctree/include/linux/pci.h),
//! [`include/linux/interrupt.h`](srctree/include/linux/interrupt.h),
//! [`include/linux/io.h`](srctree/include/linux/io.h).
//!
//! Every step of a probe is an object that undoes itself when dropped ([`Enabled`],
//! [`Regions`], [`IoMem`], [`IrqVectors`], [`ThreadedIrq`]), so a probe that
//! fails half-way unwinds by returning, and a remove by dropping its data, in the reverse
//! order of the fields that hold them.

use super::bindings;
use super::sync::with_bh;
use core::{ffi::c_void, fmt, marker::PhantomData, ptr::NonNull};
use kernel::{
    error::to_result,
    prelude::*,
    str::{CStr, CString},
    sync::Arc,
    types::Opaque,
};

/// A PCI driver: what the PCI core calls for each device of the registration's id table.
pub trait PciDriver: 'static {
    /// What a probe leaves bound to its device (kept in the device's driver data).
    type Data: Send + Sync;

    /// Binds `dev`. Process context, may sleep. On an error, whatever was done is undone
    /// (dropped) before returning.
    fn probe(dev: &PciDevice) -> Result<Self::Data>;

    /// Unbinds the device: `data` is what `probe` returned. Dropping it undoes the probe.
    fn remove(data: Self::Data) {
        drop(data);
    }
}

/// One entry of a PCI id table (`struct pci_device_id`): a vendor and device id, any
/// subsystem, any class; [`DeviceId::END`] terminates a table.
#[repr(transparent)]
#[derive(Clone, Copy)]
pub struct DeviceId(bindings::pci_device_id);

impl DeviceId {
    /// Matches `vendor:device` with any subsystem (`PCI_DEVICE(vendor, device)`).
    pub const fn new(vendor: u16, device: u16) -> Self {
        Self(bindings::pci_device_id {
            vendor: vendor as u32,
            device: device as u32,
            subvendor: !0,
            subdevice: !0,
            class: 0,
            class_mask: 0,
            driver_data: 0,
            override_only: 0,
        })
    }

    /// The all-zero entry that ends a table (`{ }` in C).
    pub const END: Self = Self(bindings::pci_device_id {
        vendor: 0,
        device: 0,
        subvendor: 0,
        subdevice: 0,
        class: 0,
        class_mask: 0,
        driver_data: 0,
        override_only: 0,
    });

    /// The vendor id the entry matches.
    pub const fn vendor(&self) -> u16 {
        self.0.vendor as u16
    }

    /// The device id the entry matches.
    pub const fn device(&self) -> u16 {
        self.0.device as u16
    }

    const fn is_end(&self) -> bool {
        self.0.vendor == 0 && self.0.device == 0 && self.0.subvendor == 0
    }
}

/// A PCI id table: `N - 1` entries and the terminator, laid out exactly as a C
/// `struct pci_device_id[N]` (it is one: `#[repr(transparent)]` all the way down).
///
/// Made in a `static` with [`pci_device_table!`], it is both the table the driver
/// registers ([`Registration::new`]) and the one modpost turns into the module's
/// `alias: pci:v...d...sv*sd*bc*sc*i*` lines (`MODULE_DEVICE_TABLE(pci, ...)`), so `modinfo`
/// lists the devices and udev loads the module for them.
#[repr(transparent)]
pub struct IdTable<const N: usize>([DeviceId; N]);

impl<const N: usize> IdTable<N> {
    /// The table of `ids`, whose last entry must be [`DeviceId::END`] and no other one
    /// (checked when the table is built: in a `static`, at compile time).
    pub const fn new(ids: [DeviceId; N]) -> Self {
        assert!(N > 1, "a PCI id table needs an entry and the terminator");
        let mut i = 0;
        while i < N - 1 {
            assert!(!ids[i].is_end(), "a PCI id table entry with vendor 0");
            i += 1;
        }
        assert!(
            ids[N - 1].is_end(),
            "a PCI id table ends with DeviceId::END"
        );
        Self(ids)
    }

    /// The entries, without the terminator.
    pub fn ids(&self) -> &[DeviceId] {
        self.0.get(..N - 1).unwrap_or(&[])
    }

    fn as_ptr(&self) -> *const bindings::pci_device_id {
        self.0.as_ptr().cast()
    }
}

/// Whether `name` is a symbol modpost reads as a PCI device table
/// (`__mod_pci__<table>_device_table`, what `MODULE_DEVICE_TABLE(pci, <table>)` makes in C).
pub const fn is_modpost_pci_table(name: &str) -> bool {
    const PRE: &[u8] = b"__mod_pci__";
    const SUF: &[u8] = b"_device_table";
    let n = name.as_bytes();
    if n.len() <= PRE.len() + SUF.len() {
        return false;
    }
    let mut i = 0;
    while i < PRE.len() {
        if n[i] != PRE[i] {
            return false;
        }
        i += 1;
    }
    let mut j = 0;
    while j < SUF.len() {
        if n[n.len() - SUF.len() + j] != SUF[j] {
            return false;
        }
        j += 1;
    }
    true
}

/// Declares a PCI id table as `MODULE_DEVICE_TABLE(pci, ...)` does in C, in Rust alone:
/// `pci_device_table!(__mod_pci__<table>_device_table, N, [DeviceId::new(v, d), ...,
/// DeviceId::END])` makes a `#[no_mangle]` static [`IdTable<N>`] under that symbol name,
/// which modpost finds in the module object (an `STT_OBJECT` whose size is a multiple of
/// `sizeof(struct pci_device_id)`, the last entry zero) and turns into `alias:` lines of
/// `.modinfo`. The name is checked at compile time. Pass the static to
/// [`Registration::new`] so that the driver binds exactly the devices `modinfo` lists.
macro_rules! pci_device_table {
    ($sym:ident, $n:expr, [$($id:expr),+ $(,)?]) => {
        /// The module's PCI id table (its symbol name is modpost's `MODULE_DEVICE_TABLE`
        /// form).
        #[no_mangle]
        #[allow(non_upper_case_globals)]
        pub(crate) static $sym: $crate::kernel_ext::pci::IdTable<{ $n }> =
            $crate::kernel_ext::pci::IdTable::new([$($id),+]);
        const _: () = assert!(
            $crate::kernel_ext::pci::is_modpost_pci_table(stringify!($sym)),
            "a PCI id table's symbol is __mod_pci__<name>_device_table"
        );
    };
}
pub(crate) use pci_device_table;

/// The registered `struct pci_driver`, at a stable heap address.
struct DriverStorage {
    drv: Opaque<bindings::pci_driver>,
}

/// A registered PCI driver; unregistered (every bound device removed) on drop.
///
/// # Invariants
///
/// `storage.drv` is registered with the PCI core, set up with a static id table and the
/// callbacks of `T`; `storage` is never moved out of its box while registered.
pub struct Registration<T: PciDriver> {
    storage: KBox<DriverStorage>,
    _t: PhantomData<T>,
}

// SAFETY: the registration is only a handle for `pci_unregister_driver()`, which may be
// called from any thread.
unsafe impl<T: PciDriver> Send for Registration<T> {}
// SAFETY: `&Registration` gives access to nothing.
unsafe impl<T: PciDriver> Sync for Registration<T> {}

impl<T: PciDriver> Registration<T> {
    /// Registers driver `name` for the devices of `ids` (made with [`pci_device_table!`],
    /// so that they are also the module's aliases). The PCI core probes the matching
    /// devices present before this returns (the driver forces synchronous probing), and
    /// those that appear later.
    pub fn new<const N: usize>(name: &'static CStr, ids: &'static IdTable<N>) -> Result<Self> {
        let storage = KBox::new(
            DriverStorage {
                drv: Opaque::uninit(),
            },
            GFP_KERNEL,
        )?;
        // SAFETY: `drv` is writable memory of the size of a `struct pci_driver` (the helper
        // zeroes it first); `name` and the id table are static (the table is a
        // zero-terminated `struct pci_device_id` array, `IdTable`'s invariant checked when
        // it was built).
        unsafe {
            bindings::rsnic_helper_pci_driver_init(
                storage.drv.get(),
                name.as_char_ptr(),
                ids.as_ptr(),
                Some(probe_callback::<T>),
                Some(remove_callback::<T>),
            )
        };
        // SAFETY: `drv` was set up above and stays at this heap address, unmoved, until the
        // registration is dropped, which unregisters it.
        to_result(unsafe { bindings::rsnic_helper_pci_register_driver(storage.drv.get()) })?;
        Ok(Self {
            storage,
            _t: PhantomData,
        })
    }
}

impl<T: PciDriver> Drop for Registration<T> {
    fn drop(&mut self) {
        // SAFETY: registered (type invariant). This calls `remove` for every bound device
        // and returns when all are removed.
        unsafe { bindings::pci_unregister_driver(self.storage.drv.get()) };
    }
}

/// `probe` of the `struct pci_driver` of a [`Registration<T>`].
///
/// # Safety
///
/// Called by the PCI core with a valid device, once per bind.
unsafe extern "C" fn probe_callback<T: PciDriver>(
    pdev: *mut bindings::pci_dev,
    _id: *const bindings::pci_device_id,
) -> core::ffi::c_int {
    // SAFETY: the PCI core passes a valid device; we take our own reference.
    let dev = unsafe { PciDevice::from_raw(pdev) };
    let data = match T::probe(&dev) {
        Ok(d) => d,
        Err(e) => return e.to_errno(),
    };
    match KBox::new(data, GFP_KERNEL) {
        Ok(b) => {
            // SAFETY: `pdev` is valid; the driver data is ours while the device is bound,
            // and `remove_callback::<T>` takes it back as a `KBox<T::Data>`.
            unsafe { bindings::rsnic_helper_pci_set_drvdata(pdev, KBox::into_raw(b).cast()) };
            0
        }
        // `data` was dropped with the failed allocation: the probe is undone.
        Err(_) => ENOMEM.to_errno(),
    }
}

/// `remove` of the `struct pci_driver` of a [`Registration<T>`].
///
/// # Safety
///
/// Called by the PCI core with a device that `probe_callback::<T>` bound.
unsafe extern "C" fn remove_callback<T: PciDriver>(pdev: *mut bindings::pci_dev) {
    // SAFETY: `pdev` is valid (the PCI core's call).
    let p = unsafe { bindings::rsnic_helper_pci_get_drvdata(pdev) }.cast::<T::Data>();
    // SAFETY: as above.
    unsafe { bindings::rsnic_helper_pci_set_drvdata(pdev, core::ptr::null_mut()) };
    if p.is_null() {
        return;
    }
    // SAFETY: a non-NULL driver data of a device bound to this driver is the box the probe
    // stored (it is cleared above, so it is taken back once).
    let data = unsafe { KBox::from_raw(p) };
    T::remove(KBox::into_inner(data));
}

/// A PCI device, holding a reference to it (`pci_dev_get()`, put on drop).
///
/// # Invariants
///
/// `ptr` is a valid `struct pci_dev` on which this object holds a reference.
pub struct PciDevice {
    ptr: NonNull<bindings::pci_dev>,
}

// SAFETY: the PCI functions used here may be called from any thread.
unsafe impl Send for PciDevice {}
// SAFETY: as for `Send`.
unsafe impl Sync for PciDevice {}

impl Clone for PciDevice {
    fn clone(&self) -> Self {
        // SAFETY: valid (type invariant); the new object holds the new reference.
        unsafe { bindings::pci_dev_get(self.ptr.as_ptr()) };
        Self { ptr: self.ptr }
    }
}

impl Drop for PciDevice {
    fn drop(&mut self) {
        // SAFETY: the reference this object holds (type invariant).
        unsafe { bindings::pci_dev_put(self.ptr.as_ptr()) };
    }
}

impl PciDevice {
    /// Takes a reference to `pdev`.
    ///
    /// # Safety
    ///
    /// `pdev` is a valid, non-NULL `struct pci_dev`.
    unsafe fn from_raw(pdev: *mut bindings::pci_dev) -> Self {
        // SAFETY: valid (the caller's guarantee); `pci_dev_get` returns its argument.
        let ptr = unsafe { bindings::pci_dev_get(pdev) };
        Self {
            // SAFETY: non-NULL (the caller's guarantee).
            ptr: unsafe { NonNull::new_unchecked(ptr) },
        }
    }

    /// The device's `struct device`, for the C APIs of this layer (valid while `self` is).
    pub(crate) fn as_dev_ptr(&self) -> *mut bindings::device {
        // SAFETY: valid (type invariant).
        unsafe { bindings::rsnic_helper_pci_dev_dev(self.ptr.as_ptr()) }
    }

    /// The device's name on the bus (`pci_name()`, e.g. `0000:00:04.0`).
    pub fn name(&self) -> &CStr {
        // SAFETY: the device's name is a NUL-terminated string set when it was added to
        // the bus, not changed afterwards, and freed only with the device, which our
        // reference keeps while the returned borrow of `self` lives.
        unsafe { CStr::from_char_ptr(bindings::rsnic_helper_pci_name(self.ptr.as_ptr())) }
    }

    /// The device's vendor id (`pdev->vendor`).
    pub fn vendor_id(&self) -> u16 {
        // SAFETY: valid device (type invariant); the helper reads a field set at enumeration.
        unsafe { bindings::rsnic_helper_pci_vendor(self.ptr.as_ptr()) }
    }

    /// The device's device id (`pdev->device`).
    pub fn device_id(&self) -> u16 {
        // SAFETY: as in `vendor_id`.
        unsafe { bindings::rsnic_helper_pci_device(self.ptr.as_ptr()) }
    }

    /// Logs `args` at KERN_ERR, prefixed with the driver and device names (`dev_err()`).
    pub fn err(&self, args: fmt::Arguments<'_>) {
        if let Ok(msg) = CString::try_from_fmt(args) {
            // SAFETY: valid device; `msg` is NUL-terminated and printed as `%s`.
            unsafe { bindings::rsnic_helper_dev_err(self.as_dev_ptr(), msg.as_char_ptr()) };
        }
    }

    /// Logs `args` at KERN_INFO, prefixed with the driver and device names (`dev_info()`).
    pub fn info(&self, args: fmt::Arguments<'_>) {
        if let Ok(msg) = CString::try_from_fmt(args) {
            // SAFETY: as in `err`.
            unsafe { bindings::rsnic_helper_dev_info(self.as_dev_ptr(), msg.as_char_ptr()) };
        }
    }

    /// Enables the device (`pci_enable_device()`); disabled again when the result drops.
    pub fn enable(&self) -> Result<Enabled> {
        // SAFETY: valid device; process context (probe).
        to_result(unsafe { bindings::pci_enable_device(self.ptr.as_ptr()) })?;
        Ok(Enabled { dev: self.clone() })
    }

    /// Claims the device's BARs for `name` (`pci_request_regions()`); released when the
    /// result drops.
    pub fn request_regions(&self, name: &'static CStr) -> Result<Regions> {
        // SAFETY: valid device; `name` outlives the claim.
        to_result(unsafe { bindings::pci_request_regions(self.ptr.as_ptr(), name.as_char_ptr()) })?;
        Ok(Regions { dev: self.clone() })
    }

    /// Whether the device still answers on the bus (`pci_device_is_present()`: its vendor id
    /// reads as something other than all-ones from config space). False once a device was
    /// surprise-removed or its link went down; a config read, so it costs a bus round trip.
    /// Any context (the PCI config lock is a raw spinlock).
    pub fn is_present(&self) -> bool {
        // SAFETY: valid device (type invariant); a config space read, no other effect.
        unsafe { bindings::pci_device_is_present(self.ptr.as_ptr()) }
    }

    /// Lets the device master the bus (`pci_set_master()`); undone by disabling it.
    pub fn set_master(&self) {
        // SAFETY: valid device.
        unsafe { bindings::pci_set_master(self.ptr.as_ptr()) };
    }

    /// Sets the streaming and coherent DMA masks to 64 bits (`dma_set_mask_and_coherent()`).
    pub fn dma_set_mask_64(&self) -> Result {
        // SAFETY: valid device.
        to_result(unsafe { bindings::rsnic_helper_dma_set_mask_and_coherent_64(self.as_dev_ptr()) })
    }

    fn mem_bar(&self, bar: u32) -> Result<(u64, usize)> {
        let (mut start, mut len) = (0u64, 0u64);
        // SAFETY: valid device; the helper checks `bar` and writes both out-values.
        to_result(unsafe {
            bindings::rsnic_helper_pci_mem_bar(self.ptr.as_ptr(), bar as i32, &mut start, &mut len)
        })?;
        Ok((start, usize::try_from(len).map_err(|_| EINVAL)?))
    }

    /// Maps memory BAR `bar` as device registers (`ioremap()`, uncached).
    pub fn ioremap_bar(&self, bar: u32) -> Result<IoMem> {
        let (start, len) = self.mem_bar(bar)?;
        // SAFETY: maps the BAR's physical range, which the device decodes; no memory of
        // the kernel's is affected.
        let p = unsafe { bindings::rsnic_helper_ioremap(start, len as u64) };
        Ok(IoMem {
            addr: NonNull::new(p).ok_or(ENOMEM)?,
            len,
            _dev: self.clone(),
        })
    }

    /// Allocates between `min` and `max` MSI-X vectors, as many as the device and the
    /// system give (`pci_alloc_irq_vectors(min, max, PCI_IRQ_MSIX)`); [`IrqVectors::count`]
    /// says how many; freed when the last holder drops them (each [`ThreadedIrq`] holds
    /// them).
    pub fn alloc_msix_range(&self, min: u32, max: u32) -> Result<Arc<IrqVectors>> {
        if min == 0 || min > max {
            return Err(EINVAL);
        }
        // SAFETY: valid, enabled device (the caller enabled it; the PCI core checks).
        let r = unsafe { bindings::rsnic_helper_pci_alloc_msix_range(self.ptr.as_ptr(), min, max) };
        to_result(r.min(0))?;
        let n = u32::try_from(r).map_err(|_| EINVAL)?;
        let v = IrqVectors {
            dev: self.clone(),
            n,
        };
        if n < min || n > max {
            // Not what was asked (the PCI core never does this): freed as `v` drops.
            return Err(EINVAL);
        }
        Ok(Arc::new(v, GFP_KERNEL)?)
    }
}

/// An enabled PCI device; disabled on drop (`pci_disable_device()`, which also stops its
/// bus mastering).
pub struct Enabled {
    dev: PciDevice,
}

impl Drop for Enabled {
    fn drop(&mut self) {
        // SAFETY: enabled by `PciDevice::enable`, once per `Enabled`.
        unsafe { bindings::pci_disable_device(self.dev.ptr.as_ptr()) };
    }
}

/// The device's BARs, claimed; released on drop (`pci_release_regions()`).
pub struct Regions {
    dev: PciDevice,
}

impl Drop for Regions {
    fn drop(&mut self) {
        // SAFETY: claimed by `PciDevice::request_regions`, once per `Regions`.
        unsafe { bindings::pci_release_regions(self.dev.ptr.as_ptr()) };
    }
}

/// A BAR mapped as device registers, unmapped on drop. Accesses are 32-bit MMIO
/// (`writel()`/`readl()`), bounds- and alignment-checked.
///
/// # Invariants
///
/// `addr` is an `ioremap()` mapping of `len` bytes.
pub struct IoMem {
    addr: NonNull<c_void>,
    len: usize,
    _dev: PciDevice,
}

// SAFETY: MMIO accessors may be used from any thread.
unsafe impl Send for IoMem {}
// SAFETY: as for `Send`; every access is a single MMIO instruction.
unsafe impl Sync for IoMem {}

impl IoMem {
    #[inline(always)]
    fn reg(&self, off: usize) -> Result<*mut c_void> {
        if off % 4 != 0 || off.checked_add(4).map_or(true, |end| end > self.len) {
            return Err(EINVAL);
        }
        // SAFETY: in bounds of the mapping (checked).
        Ok(unsafe { self.addr.as_ptr().cast::<u8>().add(off) }.cast())
    }

    /// Size of the mapping in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the mapping is empty (never: a BAR has a size).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `writel(value)` at byte offset `off` (4-aligned, in bounds: else `EINVAL`).
    #[inline(always)]
    pub fn write32(&self, off: usize, value: u32) -> Result {
        let r = self.reg(off)?;
        // SAFETY: an aligned register inside the mapping (checked by `reg`).
        unsafe { bindings::rsnic_helper_writel(value, r) };
        Ok(())
    }

    /// `readl()` at byte offset `off` (4-aligned, in bounds: else `EINVAL`).
    #[inline(always)]
    pub fn read32(&self, off: usize) -> Result<u32> {
        let r = self.reg(off)?;
        // SAFETY: as in `write32`.
        Ok(unsafe { bindings::rsnic_helper_readl(r) })
    }

    /// `iowrite32be(value)` at byte offset `off` (4-aligned, in bounds: else `EINVAL`): the
    /// value's big-endian bytes on the bus, for a device whose registers are big-endian (a
    /// ConnectX's initialization segment and EQ doorbells, as mlx5 writes them).
    #[inline(always)]
    pub fn write32_be(&self, off: usize, value: u32) -> Result {
        let r = self.reg(off)?;
        // SAFETY: an aligned register inside the mapping (checked by `reg`).
        unsafe { bindings::rsnic_helper_iowrite32be(value, r) };
        Ok(())
    }

    /// `ioread32be()` at byte offset `off` (4-aligned, in bounds: else `EINVAL`).
    #[inline(always)]
    pub fn read32_be(&self, off: usize) -> Result<u32> {
        let r = self.reg(off)?;
        // SAFETY: as in `write32_be`.
        Ok(unsafe { bindings::rsnic_helper_ioread32be(r) })
    }

    /// One 64-bit write at byte offset `off` (8-aligned, in bounds: else `EINVAL`) that puts
    /// `bytes` on the bus in the order given (byte 0 at the lowest address), with `writeq()`'s
    /// ordering: `writeq(u64::from_le_bytes(bytes))`, as `writeq` stores its value
    /// little-endian whatever the CPU. A ConnectX doorbell (big-endian words of the WQE's
    /// control segment, `__raw_writeq` of its memory image upstream) and a MANA doorbell
    /// (`writeq` of a CPU-order u64, i.e. its little-endian bytes) both arrive as the
    /// device expects.
    #[inline(always)]
    pub fn write64(&self, off: usize, bytes: [u8; 8]) -> Result {
        if off % 8 != 0 || off.checked_add(8).map_or(true, |end| end > self.len) {
            return Err(EINVAL);
        }
        // SAFETY: in bounds of the mapping and 8-aligned (checked above).
        let r = unsafe { self.addr.as_ptr().cast::<u8>().add(off) }.cast::<c_void>();
        // SAFETY: an aligned 8-byte register inside the mapping.
        unsafe { bindings::rsnic_helper_writeq(u64::from_le_bytes(bytes), r) };
        Ok(())
    }
}

impl Drop for IoMem {
    fn drop(&mut self) {
        // SAFETY: mapped by `ioremap_bar` (type invariant); no borrow of `self` is left.
        unsafe { bindings::rsnic_helper_iounmap(self.addr.as_ptr()) };
    }
}

/// A device's MSI-X vectors, freed (`pci_free_irq_vectors()`) when the last holder drops
/// them; every [`ThreadedIrq`] holds them, so no handler is registered on a freed vector.
pub struct IrqVectors {
    dev: PciDevice,
    n: u32,
}

impl IrqVectors {
    /// How many vectors there are.
    pub fn count(&self) -> u32 {
        self.n
    }

    /// The Linux IRQ number of vector `index` (`pci_irq_vector()`).
    pub fn irq(&self, index: u32) -> Result<u32> {
        if index >= self.n {
            return Err(EINVAL);
        }
        // SAFETY: valid device whose vectors are allocated (we hold them).
        let r = unsafe { bindings::pci_irq_vector(self.dev.ptr.as_ptr(), index) };
        to_result(r.min(0))?;
        u32::try_from(r).map_err(|_| EINVAL)
    }
}

impl Drop for IrqVectors {
    fn drop(&mut self) {
        // SAFETY: allocated by `alloc_msix_range`; no handler is left on them (each holds
        // us).
        unsafe { bindings::pci_free_irq_vectors(self.dev.ptr.as_ptr()) };
    }
}

/// What runs in an interrupt's thread ([`ThreadedIrq`]).
pub trait IrqThread: Send + Sync {
    /// The interrupt fired. Runs in the interrupt's kernel thread with bottom halves
    /// disabled (softirqs raised here, such as NAPI's, run when they are enabled again):
    /// must not sleep.
    fn handle(&self);
}

/// A threaded handler on one vector (`request_threaded_irq()` with the default primary
/// handler and `IRQF_ONESHOT`: the vector stays masked until the thread has run; with
/// `IRQF_SHARED` when the vector may carry several handlers, each of which runs when it
/// fires). Freed on drop (`free_irq()`, which waits for a running thread).
///
/// # Invariants
///
/// `irq` is requested with `handler`'s address as its cookie and `name` as its name.
pub struct ThreadedIrq<T: IrqThread> {
    irq: u32,
    handler: KBox<T>,
    _name: CString,
    _vectors: Arc<IrqVectors>,
}

impl<T: IrqThread> ThreadedIrq<T> {
    /// Requests vector `index` of `vectors` for `handler`, named `name` in
    /// /proc/interrupts; `shared`: other handlers (requested `shared` too) may be on the
    /// same vector (`IRQF_SHARED`). Process context, may sleep.
    pub fn new(
        vectors: &Arc<IrqVectors>,
        index: u32,
        name: CString,
        handler: T,
        shared: bool,
    ) -> Result<Self> {
        let irq = vectors.irq(index)?;
        let handler = KBox::new(handler, GFP_KERNEL)?;
        let cookie = core::ptr::from_ref::<T>(&handler)
            .cast_mut()
            .cast::<c_void>();
        // SAFETY: `thread_fn::<T>` takes the cookie as a `&T`: it points to `handler`'s
        // box, which is freed only after `free_irq()` in `drop` (no thread runs after
        // that). `name` (heap) lives as long as the registration, as the IRQ core keeps it.
        to_result(unsafe {
            bindings::rsnic_helper_request_threaded_irq(
                irq,
                Some(thread_fn::<T>),
                name.as_char_ptr(),
                cookie,
                shared,
            )
        })?;
        Ok(Self {
            irq,
            handler,
            _name: name,
            _vectors: vectors.clone(),
        })
    }
}

impl<T: IrqThread> Drop for ThreadedIrq<T> {
    fn drop(&mut self) {
        let cookie = core::ptr::from_ref::<T>(&self.handler)
            .cast_mut()
            .cast::<c_void>();
        // SAFETY: requested in `new` with this cookie (type invariant); returns once no
        // thread of it runs. Then the handler, the name and the vectors go.
        unsafe { bindings::free_irq(self.irq, cookie) };
    }
}

/// The thread function of a [`ThreadedIrq<T>`].
///
/// # Safety
///
/// `cookie` is the `T` the registration was made with (the IRQ core passes it back).
unsafe extern "C" fn thread_fn<T: IrqThread>(
    _irq: core::ffi::c_int,
    cookie: *mut c_void,
) -> bindings::irqreturn_t {
    // SAFETY: the cookie is the handler's box, alive until `free_irq()` returns (type
    // invariant of `ThreadedIrq`).
    let h = unsafe { &*cookie.cast_const().cast::<T>() };
    with_bh(|| h.handle());
    bindings::irqreturn_IRQ_HANDLED
}
