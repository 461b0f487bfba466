// SPDX-License-Identifier: GPL-2.0

//! The PCI transport: the functions of an rsnic device emulated by QEMU's `ivshmem-doorbell`
//! (PCI 1af4:1110), whose model runs in a host process (`rsnic-devd`).
//!
//! Like `host/`, this is the device's side of the bus: it knows nothing of the driver. It
//! enables the PCI function, maps BAR0 (ivshmem's registers: the doorbell) and BAR2 (memory
//! shared with devd: the identity block and the register ring of `dp::xport`), checks what
//! the identity block says the device is, and gives the bus what a [`crate::bus::Function`]
//! needs:
//!
//! * register writes: appended to the ring without a lock (the in-kernel `PostedWrites`
//!   algorithm, in shared memory), each followed by a BAR0 doorbell write that wakes devd;
//!   a writer that finds the ring full spins up to [`FULL_SPIN_NS`], then counts the write
//!   lost;
//! * register reads: serialised by a spinlock, a READ32 entry in the ring (so reads do not
//!   pass writes), answered by devd in the ring's control block; after [`READ_TIMEOUT_NS`]
//!   without an answer the read returns `0xffff_ffff`, as a read of a gone PCI device does;
//! * MSI-X vectors: `ports * VPP` of them. A ConnectX device has a function per port, port
//!   `p`'s vector `intr` being MSI-X index `p * VPP + intr`; a MANA device has one function
//!   (its vports are the ports) with all of them. Each carries threaded handlers
//!   ([`crate::realpci::PciIrqs`]) that run the bus handlers with bottom halves off (the bus
//!   contract).
//!
//! The DMA device is the PCI device's own: bus addresses are what devd reads and writes in
//! the guest's RAM.

use crate::bus::{Function, Kind};
use crate::dp::xport::{
    self, Family, Identity, Status, BAR0_DOORBELL, CTRL_READ_DONE, CTRL_READ_TICKET,
    CTRL_READ_VALUE, CTRL_TAIL, DEVD_PEER, IDENTITY_LEN, OP_READ32, OP_WRITE32, OP_WRITE64,
    RING_END, SLOT_OP, SLOT_REG, SLOT_SEQ, SLOT_VALUE, VPP,
};
use crate::kernel_ext::dma::DmaDevice;
use crate::kernel_ext::pci::{Enabled, IoMem, PciDevice, Regions, SharedMem};
use crate::kernel_ext::{sync::with_bh, timer::now_ns};
use crate::realpci::PciIrqs;
use crate::sim;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use kernel::{
    c_str, fmt, new_spinlock,
    prelude::*,
    str::{CStr, CString},
    sync::{Arc, SpinLock},
};

/// BAR with ivshmem's registers (the doorbell).
const REG_BAR: u32 = 0;
/// BAR with the memory shared with devd.
const SHM_BAR: u32 = 2;
/// How long a writer spins on a full ring before the write is counted lost.
pub(crate) const FULL_SPIN_NS: u64 = 1_000_000_000;
/// How long a register read waits for devd's answer.
pub(crate) const READ_TIMEOUT_NS: u64 = 100_000_000;
/// What a read that got no answer returns (a PCI read of a gone device).
const READ_FAILED: u32 = 0xffff_ffff;
/// Spins between two looks at the clock while waiting.
const SPINS_PER_CLOCK: u32 = 256;

/// One bound rsnic PCI device: its mappings, vectors and handlers.
///
/// The fields drop in declaration order, the reverse of the probe's steps: handlers, vectors,
/// the shared memory and register mappings, the DMA device's reference, the regions, the
/// enable (which also stops bus mastering).
#[pin_data]
pub(crate) struct PciTransport {
    /// The threaded handlers on the MSI-X vectors.
    #[pin]
    irqs: PciIrqs,
    /// Serialises register reads (one READ32 in flight: its answer has one place).
    #[pin]
    read_lock: SpinLock<()>,
    shm: SharedMem,
    bar0: IoMem,
    dma: Arc<DmaDevice>,
    _regions: Regions,
    _enabled: Enabled,
    dev: PciDevice,
    /// `pci_name()` of the device, for bus info and interrupt names.
    name: CString,
    kind: Kind,
    ports: usize,
    /// Writes lost because the ring stayed full.
    lost: AtomicU64,
    /// Reads that got no answer in time.
    read_timeouts: AtomicU64,
    /// Whether a lost write or a read timeout was logged (once each).
    lost_logged: AtomicBool,
    read_logged: AtomicBool,
}

impl PciTransport {
    /// Probes `dev`: enables it, claims and maps its BARs, checks the identity block, sets
    /// the DMA mask and bus mastering, and allocates its MSI-X vectors. Every step is undone
    /// (in reverse) when a later one fails. A device whose identity block is not a usable
    /// rsnic device's is refused with `ENODEV` and a `dev_err` line naming the field.
    pub(crate) fn probe(dev: &PciDevice) -> Result<Arc<Self>> {
        let enabled = dev.enable().inspect_err(|e| {
            dev.err(fmt!("pci_enable_device failed: {:?}", e));
        })?;
        let regions = dev.request_regions(c_str!("rsnic")).inspect_err(|e| {
            dev.err(fmt!("cannot claim the BARs: {:?}", e));
        })?;
        let bar0 = dev.ioremap_bar(REG_BAR).inspect_err(|e| {
            dev.err(fmt!("cannot map BAR{}: {:?}", REG_BAR, e));
        })?;
        if bar0.len() < BAR0_DOORBELL + 4 {
            dev.err(fmt!("BAR{} is {} bytes: no doorbell", REG_BAR, bar0.len()));
            return Err(ENODEV);
        }
        let shm = dev.memremap_bar_wb(SHM_BAR).inspect_err(|e| {
            dev.err(fmt!("cannot map BAR{}: {:?}", SHM_BAR, e));
        })?;
        let id = Self::identity(dev, &shm)?;
        let kind = match id.family {
            Family::Mlx5 => Kind::Mlx5,
            Family::Mana => Kind::Mana,
        };
        dev.dma_set_mask_64().inspect_err(|e| {
            dev.err(fmt!("no 64-bit DMA: {:?}", e));
        })?;
        let dma = DmaDevice::for_pci(dev)?;
        dev.set_master();
        let ports = id.ports as usize;
        let nvec = id.ports * u32::from(VPP);
        let vectors = dev.alloc_msix(nvec).inspect_err(|e| {
            dev.err(fmt!("cannot allocate {} MSI-X vectors: {:?}", nvec, e));
        })?;
        let name = CString::try_from_fmt(fmt!("{}", dev.name()))?;
        let irq_name = CString::try_from_fmt(fmt!("{}", dev.name()))?;
        Arc::pin_init(
            pin_init!(Self {
                irqs <- PciIrqs::new(vectors, irq_name),
                read_lock <- new_spinlock!((), "rsnic::PciTransport::read"),
                shm,
                bar0,
                dma,
                _regions: regions,
                _enabled: enabled,
                dev: dev.clone(),
                name,
                kind,
                ports,
                lost: AtomicU64::new(0),
                read_timeouts: AtomicU64::new(0),
                lost_logged: AtomicBool::new(false),
                read_logged: AtomicBool::new(false),
            }),
            GFP_KERNEL,
        )
    }

    /// Reads and checks the identity block.
    fn identity(dev: &PciDevice, shm: &SharedMem) -> Result<Identity> {
        if shm.len() < RING_END {
            dev.err(fmt!(
                "BAR{} is {:#x} bytes, the ring ends at {:#x}",
                SHM_BAR,
                shm.len(),
                RING_END
            ));
            return Err(ENODEV);
        }
        let mut b = [0u8; IDENTITY_LEN];
        shm.read_bytes(xport::IDENTITY_OFFSET, &mut b)?;
        let id = Identity::parse(&b).map_err(|e| {
            dev.err(fmt!("not an rsnic device: identity block: {}", e));
            ENODEV
        })?;
        if id.status != Status::Ready {
            dev.err(fmt!(
                "identity block: status {} (device host {})",
                id.status.code(),
                if id.status == Status::Failed {
                    "failed"
                } else {
                    "not ready"
                }
            ));
            return Err(ENODEV);
        }
        Ok(id)
    }

    /// The device's functions, numbered device `num` on the bus. Their registers are where
    /// the in-kernel host's devices have them (`dp::xport`): a ConnectX has a function per
    /// port, port `p`'s window at `p * FUNC_BAR_SIZE` and its vectors at MSI-X `p * VPP`; a
    /// MANA has one function, its registers at 0, its vports the ports, with every vector.
    pub(crate) fn functions(this: &Arc<Self>, num: u32) -> Result<KVec<Arc<Function>>> {
        let vpp = usize::from(VPP);
        let mut funcs = KVec::with_capacity(this.ports, GFP_KERNEL)?;
        match this.kind {
            Kind::Mlx5 => {
                for p in 0..this.ports {
                    let base = sim::mlx5::FUNC_BAR_SIZE * p as u32;
                    let f = Function::new_pci(this.clone(), num, p, base, p * vpp, vpp)?;
                    funcs.push(f, GFP_KERNEL)?;
                }
            }
            Kind::Mana => {
                let f = Function::new_pci(this.clone(), num, 0, 0, 0, this.irqs.count())?;
                funcs.push(f, GFP_KERNEL)?;
            }
        }
        Ok(funcs)
    }

    /// The device's family.
    pub(crate) fn kind(&self) -> Kind {
        self.kind
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

    /// Writes lost because the ring stayed full.
    pub(crate) fn lost(&self) -> u64 {
        self.lost.load(Ordering::Relaxed)
    }

    /// Reads that got no answer in time.
    pub(crate) fn read_timeouts(&self) -> u64 {
        self.read_timeouts.load(Ordering::Relaxed)
    }

    /// Appends an entry; its ring position, or `None` if the ring is full. With `ticket`,
    /// the position goes to `read_ticket` before the entry is published.
    #[inline]
    fn push(&self, reg: u32, op: u32, val: u64, ticket: bool) -> Option<u64> {
        let shm = &self.shm;
        let tail = shm.atomic_u64(CTRL_TAIL).ok()?;
        let mut pos = tail.load(Ordering::Relaxed);
        loop {
            let slot = xport::slot_offset(pos);
            let seq = shm.atomic_u64(slot + SLOT_SEQ).ok()?;
            let s = seq.load(Ordering::Acquire);
            if s == pos {
                // Free for this lap: claim it.
                match tail.compare_exchange_weak(
                    pos,
                    pos.wrapping_add(1),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        shm.atomic_u32(slot + SLOT_REG)
                            .ok()?
                            .store(reg, Ordering::Relaxed);
                        shm.atomic_u32(slot + SLOT_OP)
                            .ok()?
                            .store(op, Ordering::Relaxed);
                        shm.atomic_u64(slot + SLOT_VALUE)
                            .ok()?
                            .store(val, Ordering::Relaxed);
                        if ticket {
                            shm.atomic_u64(CTRL_READ_TICKET)
                                .ok()?
                                .store(pos, Ordering::Relaxed);
                        }
                        // Publishes the entry, and orders the writer's earlier stores (the
                        // WQE, its doorbell record) before devd's reads.
                        seq.store(pos.wrapping_add(1), Ordering::Release);
                        return Some(pos);
                    }
                    Err(p) => pos = p,
                }
            } else if (s.wrapping_sub(pos) as i64) < 0 {
                // Still holds the previous lap's entry: full.
                return None;
            } else {
                // Another writer claimed it meanwhile.
                pos = tail.load(Ordering::Relaxed);
            }
        }
    }

    /// Rings devd's doorbell (peer 0, vector 0): an MMIO write that exits to QEMU.
    #[inline(always)]
    fn doorbell(&self) {
        let _ = self
            .bar0
            .write32(BAR0_DOORBELL, xport::doorbell_value(DEVD_PEER, 0));
    }

    /// Appends a write and rings the doorbell.
    #[inline]
    fn post(&self, reg: u32, op: u32, val: u64) {
        if self.push(reg, op, val, false).is_none() {
            self.post_full(reg, op, val);
        }
        self.doorbell();
    }

    /// The ring is full: wakes devd and spins for room, up to [`FULL_SPIN_NS`], then counts
    /// the write lost.
    #[cold]
    #[inline(never)]
    fn post_full(&self, reg: u32, op: u32, val: u64) {
        self.doorbell();
        let start = now_ns();
        let mut spins = 0u32;
        loop {
            core::hint::spin_loop();
            if self.push(reg, op, val, false).is_some() {
                return;
            }
            spins = spins.wrapping_add(1);
            if spins % SPINS_PER_CLOCK == 0 && now_ns().wrapping_sub(start) >= FULL_SPIN_NS {
                break;
            }
        }
        self.lost.fetch_add(1, Ordering::Relaxed);
        // `pr_err!`, not `dev.err` (which allocates): the writer may be in atomic context.
        if !self.lost_logged.swap(true, Ordering::Relaxed) {
            pr_err!(
                "{}: register ring full for {} ms: write of {:#x} lost (device host stuck?)\n",
                &*self.name,
                FULL_SPIN_NS / 1_000_000,
                reg
            );
        }
    }

    /// A 32-bit register write at `reg` (the device's register space).
    #[inline]
    pub(crate) fn write32(&self, reg: u32, value: u32) {
        self.post(reg, OP_WRITE32, u64::from(value));
    }

    /// A 64-bit register write at `reg` (doorbells): `bytes` in memory order.
    #[inline]
    pub(crate) fn write64(&self, reg: u32, bytes: [u8; 8]) {
        self.post(reg, OP_WRITE64, u64::from_ne_bytes(bytes));
    }

    /// A 32-bit register read at `reg`, after every write appended before it; `0xffff_ffff`
    /// when devd does not answer within [`READ_TIMEOUT_NS`]. May be called in atomic
    /// context (it spins).
    pub(crate) fn read32(&self, reg: u32) -> u32 {
        with_bh(|| {
            let _g = self.read_lock.lock();
            self.read_locked(reg)
        })
    }

    fn read_locked(&self, reg: u32) -> u32 {
        let (Ok(done), Ok(value)) = (
            self.shm.atomic_u64(CTRL_READ_DONE),
            self.shm.atomic_u32(CTRL_READ_VALUE),
        ) else {
            return READ_FAILED;
        };
        let start = now_ns();
        let mut pos = self.push(reg, OP_READ32, 0, true);
        self.doorbell();
        let mut spins = 0u32;
        loop {
            match pos {
                // `read_done` starts at `READ_DONE_NONE` (no position), and positions are
                // never reused: equal means devd answered this READ.
                Some(p) if done.load(Ordering::Acquire) == p => {
                    return value.load(Ordering::Relaxed);
                }
                Some(_) => {}
                // The ring was full: try again while waiting.
                None => pos = self.push(reg, OP_READ32, 0, true),
            }
            core::hint::spin_loop();
            spins = spins.wrapping_add(1);
            if spins % SPINS_PER_CLOCK == 0 {
                if now_ns().wrapping_sub(start) >= READ_TIMEOUT_NS {
                    break;
                }
                if pos.is_none() {
                    self.doorbell();
                }
            }
        }
        self.read_timeouts.fetch_add(1, Ordering::Relaxed);
        // As for a lost write: the reader may be in atomic context.
        if !self.read_logged.swap(true, Ordering::Relaxed) {
            pr_err!(
                "{}: register read at {:#x}: no answer in {} ms (device host gone?)\n",
                &*self.name,
                reg,
                READ_TIMEOUT_NS / 1_000_000
            );
        }
        READ_FAILED
    }

    /// The handlers on the device's MSI-X vectors.
    pub(crate) fn irqs(&self) -> &PciIrqs {
        &self.irqs
    }
}
