// SPDX-License-Identifier: GPL-2.0

//! The in-kernel transport: a device host for the simulated devices the module creates
//! (`host=kernel`), running them inside the kernel.
//!
//! It knows nothing of the driver. It creates the devices the module parameters ask for
//! (`num_devs`, `num_ports`, `family`, and the `sim_*` knobs that configure or fail them),
//! runs each device's model (`sim::mlx5` or `sim::mana`) on the device's own workqueue
//! ([`Engine`]), lets it reach host memory by bus address only ([`KBus`]), delivers the
//! MSI-X vectors it raises to the handlers registered on them, and offers each device's
//! functions on the bus ([`crate::bus::Function`]), which the driver binds. It also shows
//! each port's model counters (doorbells, WQEs, modeled PCIe bytes, drops: what a real device
//! would not report) in debugfs, `rsnic/rsnic-sim<N>/port<P>/counters`.
//!
//! A register write is posted, as on PCIe: it goes into the device's write buffer
//! ([`PostedWrites`], lock-free) and queues the engine's work item, and the writer goes on.
//! The work applies the posted writes in order, then runs the model in slices of
//! [`SLICE_WQES`] WQEs and delivers the interrupts raised meanwhile. The transmit path never
//! takes the model's lock, so a doorbell costs what a posted write costs whatever the device
//! is doing, and netpoll (interrupts disabled, under netconsole's locks) can ring one. The
//! model is behind a spinlock taken with bottom halves disabled by the work, register reads,
//! and the debugfs files; a register read first applies the writes posted before it (reads
//! do not pass posted writes).

mod counters;
mod inject;

use crate::bus::{Function, IrqHandler, IrqKey, Kind};
use crate::hwif::hw::{BusMemory, DmaAddr, DmaFault, InterruptSink};
use crate::kernel_ext::debugfs::{Dir, ShowFile, StoreFile};
use crate::kernel_ext::dma::{DmaDevice, PhysBus};
use crate::kernel_ext::{
    params,
    sync::{irqs_disabled, with_bh},
    timer::{now_ns, Timer, TimerHandler},
    wq::OwnedQueue,
};
use crate::sim;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use kernel::{
    c_str, fmt, new_spinlock, new_work,
    prelude::*,
    str::CString,
    sync::{Arc, SpinLock},
    workqueue::{Work, WorkItem},
};

/// MSI-X vectors of each ConnectX function: the model raises vector `function *
/// VECTORS_PER_FUNCTION + intr` for the function's vector `intr`.
pub(crate) const VECTORS_PER_FUNCTION: usize = 64;

/// MSI-X vectors of a MANA function, the device's only one: what upstream mana allocates
/// of a VF's (`mana_gd_setup_irqs`: one per online CPU, at most 64, plus the HWC's, at
/// least 2), so that its vports share them as on a VF. The model raises the GDMA MSI-X index
/// the driver gave the queue; a vector beyond these has no handler.
fn mana_vectors() -> usize {
    (params::online_cpus().clamp(1, 64) as usize + 1).max(2)
}
/// Most functions (ports) a device may have.
pub(crate) const MAX_FUNCTIONS: usize = 8;
/// WQEs the model executes per slice before the lock is released.
pub(crate) const SLICE_WQES: usize = 256;
/// Slices per work run before the work re-queues itself (lets other work run).
const SLICES_PER_RUN: usize = 16;
/// Entries of a device's posted-write buffer (a power of two).
const POSTED: usize = 1024;
/// Marks a posted 32-bit write in [`PostedSlot::reg`] (register offsets are below 2^31).
const WRITE32: u32 = 1 << 31;
/// Tries of a writer with interrupts disabled when the buffer is full, before the write is
/// lost (counted in `dev_mmio_posted_lost`).
const FULL_TRIES: usize = 4096;

/// A simulated ConnectX with the kernel's storage.
pub(crate) type Mlx5Model =
    sim::mlx5::Device<KVec<sim::mlx5::Port>, KVVec<sim::mlx5::QueueSet>, KVVec<u8>>;
/// A simulated MANA with the kernel's storage.
pub(crate) type ManaModel =
    sim::mana::Device<KVec<sim::mana::Port>, KVVec<sim::mana::QueueSet>, KVVec<u8>>;

/// The device's view of host memory: DMA by bus address (physical, no IOMMU).
pub(crate) struct KBus;

impl BusMemory for KBus {
    fn dma_read(&self, addr: DmaAddr, dst: &mut [u8]) -> Result<(), DmaFault> {
        if PhysBus.read(addr, dst) {
            Ok(())
        } else {
            Err(DmaFault {
                addr,
                len: dst.len(),
            })
        }
    }

    fn dma_write(&self, addr: DmaAddr, src: &[u8]) -> Result<(), DmaFault> {
        if PhysBus.write(addr, src) {
            Ok(())
        } else {
            Err(DmaFault {
                addr,
                len: src.len(),
            })
        }
    }
}

/// Vectors raised during one slice, delivered after it.
struct IrqSink {
    raised: [u64; MAX_FUNCTIONS * VECTORS_PER_FUNCTION / 64],
}

impl InterruptSink for IrqSink {
    fn raise(&mut self, vector: u16) {
        let v = usize::from(vector);
        if let Some(w) = self.raised.get_mut(v / 64) {
            *w |= 1u64 << (v % 64);
        }
    }
}

/// A device model of either family (dispatched by `match`: no function pointer on the
/// doorbell path). Each engine holds one, allocated once: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
enum Model {
    Mlx5(Mlx5Model),
    Mana(ManaModel),
}

/// The model's storage: ports, queue sets, scratch.
macro_rules! storage {
    ($sim:ident, $ports:expr) => {{
        let mut p = KVec::with_capacity($ports, GFP_KERNEL)?;
        for _ in 0..$ports {
            p.push(sim::$sim::Port::new(), GFP_KERNEL)?;
        }
        let n = $ports * sim::$sim::MAX_QUEUES;
        let mut q = KVVec::with_capacity(n, GFP_KERNEL)?;
        for _ in 0..n {
            q.push(sim::$sim::QueueSet::EMPTY, GFP_KERNEL)?;
        }
        (
            p,
            q,
            KVVec::from_elem(0u8, sim::$sim::SCRATCH_LEN, GFP_KERNEL)?,
        )
    }};
}

/// The permanent MAC the device host burns into port `port` of ConnectX device `dev`:
/// locally administered, 02:52:53 ("RS"), then device and port.
fn mlx5_factory_mac(dev: u32, port: usize) -> [u8; 6] {
    [0x02, 0x52, 0x53, 0x00, dev as u8, port as u8 + 1]
}

/// The MAC address the device host burns into port `port` of MANA device `dev`:
/// 02:4d:41:00:<dev>:<port + 1> ("MA", locally administered).
fn mana_factory_mac(dev: u32, port: usize) -> [u8; 6] {
    [0x02, 0x4d, 0x41, 0x00, dev as u8, port as u8 + 1]
}

impl Model {
    /// A device of `kind` with `ports` ports, configured as device `dev` (what the hardware
    /// comes with: factory MACs, capabilities, the fault knobs), each port's link down with
    /// flow control on (back-pressure between the wired ports instead of drops).
    fn new(kind: Kind, ports: usize, dev: u32) -> Result<Self> {
        let mut m = match kind {
            Kind::Mlx5 => {
                let (p, q, s) = storage!(mlx5, ports);
                let caps = sim::mlx5::Caps {
                    mpwqe: params::sim_mpwqe(),
                    min_inline: params::sim_min_inline(),
                    cqe_compression: params::sim_cqe_compression(),
                    port_max_mtu: params::sim_max_mtu()
                        .unwrap_or(sim::mlx5::Caps::FULL.port_max_mtu),
                    ..sim::mlx5::Caps::FULL
                };
                let mut m = sim::mlx5::Device::with_caps(p, q, s, caps).map_err(|_| EINVAL)?;
                let op = params::sim_fail_cmd();
                for port in 0..ports {
                    let _ = m.set_permanent_mac(port, mlx5_factory_mac(dev, port));
                    if op != 0 {
                        let _ = m.fail_command(port, u16::try_from(op).ok());
                    }
                }
                Model::Mlx5(m)
            }
            Kind::Mana => {
                let (p, q, s) = storage!(mana, ports);
                let mut m = sim::mana::Device::new(p, q, s).map_err(|_| EINVAL)?;
                for port in 0..ports {
                    let _ = m.set_permanent_mac(port, mana_factory_mac(dev, port));
                }
                let code = params::sim_fail_req();
                if code != 0 {
                    m.hwc_fail(code, sim::mana::STATUS_INVALID_PARAMETER);
                }
                m.set_rsnic_requests(params::sim_rsnic_requests());
                Model::Mana(m)
            }
        };
        for port in 0..ports {
            match &mut m {
                Model::Mlx5(d) => {
                    let _ = d.set_link(port, false);
                    let _ = d.set_pause(port, true);
                }
                Model::Mana(d) => {
                    // A MANA vport's link is always up (the virtual switch): it receives
                    // while its driver has RX on (MANA_CONFIG_VPORT_RX).
                    let _ = d.set_pause(port, true);
                }
            }
        }
        Ok(m)
    }

    /// Applies one posted register write.
    fn write(&mut self, reg: u32, val: u64) {
        let off = reg & !WRITE32;
        match self {
            Model::Mlx5(m) if reg & WRITE32 != 0 => m.mmio_write32(off, val as u32),
            Model::Mana(m) if reg & WRITE32 != 0 => m.mmio_write32(off, val as u32),
            Model::Mlx5(m) => m.mmio_write64(off, val.to_ne_bytes()),
            Model::Mana(m) => m.mmio_write64(off, val.to_ne_bytes()),
        }
    }

    /// Runs the device for at most `budget` WQEs at time `now` (monotonic nanoseconds);
    /// returns whether work is left and, for a ConnectX, when a CQ that moderation holds
    /// back wants the device to run again.
    fn run(&mut self, irq: &mut IrqSink, budget: usize, now: u64) -> (bool, Option<u64>) {
        match self {
            Model::Mlx5(m) => {
                m.set_clock(now);
                let more = m.process_budget(&KBus, irq, budget).1;
                (more, m.moderation_deadline())
            }
            Model::Mana(m) => (m.process_budget(&KBus, irq, budget).1, None),
        }
    }
}

/// One entry of [`PostedWrites`].
struct PostedSlot {
    /// Which lap of the ring the entry is in: `pos` when free for the writer of position
    /// `pos`, `pos + 1` once that write is in it.
    seq: AtomicUsize,
    /// The register offset, with [`WRITE32`] for a 32-bit write.
    reg: AtomicU32,
    /// The value (a 64-bit write's bytes in native order).
    val: AtomicU64,
}

/// The device's posted-write buffer: a bounded ring that any CPU appends to without a lock
/// (each entry published by its sequence number), drained in order by one consumer at a
/// time, the holder of the model's lock.
pub(crate) struct PostedWrites {
    slots: KVec<PostedSlot>,
    /// The next position a writer claims.
    tail: AtomicUsize,
    /// The next position to apply; only the model lock's holder reads or writes it.
    head: AtomicUsize,
    /// Writes lost because the buffer stayed full for a writer with interrupts disabled.
    lost: AtomicU64,
}

impl PostedWrites {
    fn new() -> Result<Self> {
        let mut slots = KVec::with_capacity(POSTED, GFP_KERNEL)?;
        for i in 0..POSTED {
            slots.push(
                PostedSlot {
                    seq: AtomicUsize::new(i),
                    reg: AtomicU32::new(0),
                    val: AtomicU64::new(0),
                },
                GFP_KERNEL,
            )?;
        }
        Ok(Self {
            slots,
            tail: AtomicUsize::new(0),
            head: AtomicUsize::new(0),
            lost: AtomicU64::new(0),
        })
    }

    /// Appends a write; `false` if the buffer is full.
    #[inline]
    fn push(&self, reg: u32, val: u64) -> bool {
        let mut pos = self.tail.load(Ordering::Relaxed);
        loop {
            let Some(slot) = self.slots.get(pos & (POSTED - 1)) else {
                return false;
            };
            let seq = slot.seq.load(Ordering::Acquire);
            if seq == pos {
                // Free for this lap: claim it.
                match self.tail.compare_exchange_weak(
                    pos,
                    pos.wrapping_add(1),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        slot.reg.store(reg, Ordering::Relaxed);
                        slot.val.store(val, Ordering::Relaxed);
                        // Publishes the entry, and orders the writer's earlier stores (the
                        // WQE, its doorbell record) before the device's reads.
                        slot.seq.store(pos.wrapping_add(1), Ordering::Release);
                        return true;
                    }
                    Err(p) => pos = p,
                }
            } else if (seq.wrapping_sub(pos) as isize) < 0 {
                // Still holds the previous lap's write: full.
                return false;
            } else {
                // Another writer claimed it meanwhile.
                pos = self.tail.load(Ordering::Relaxed);
            }
        }
    }

    /// Applies the posted writes in order, up to the first one not yet published (its
    /// writer queues the engine once it is). The caller holds the model's lock.
    fn apply(&self, m: &mut Model) {
        let mut head = self.head.load(Ordering::Relaxed);
        while let Some(slot) = self.slots.get(head & (POSTED - 1)) {
            if slot.seq.load(Ordering::Acquire) != head.wrapping_add(1) {
                break;
            }
            let reg = slot.reg.load(Ordering::Relaxed);
            let val = slot.val.load(Ordering::Relaxed);
            slot.seq.store(head.wrapping_add(POSTED), Ordering::Release);
            head = head.wrapping_add(1);
            m.write(reg, val);
        }
        self.head.store(head, Ordering::Relaxed);
    }
}

/// One simulated device: the model, the handlers of its vectors and its workqueue.
#[pin_data]
pub(crate) struct Engine {
    kind: Kind,
    #[pin]
    model: SpinLock<Model>,
    posted: PostedWrites,
    /// The handlers of each vector (numbered as the model raises them: ConnectX `function *
    /// VECTORS_PER_FUNCTION + intr`, MANA the MSI-X index), each under its key.
    #[pin]
    handlers: SpinLock<KVec<KVec<Option<(IrqKey, Arc<dyn IrqHandler>)>>>>,
    #[pin]
    work: Work<Engine>,
    /// The device's timer: runs the engine when a CQ that moderation holds back is due.
    #[pin]
    timer: Timer<Engine>,
    wq: OwnedQueue,
    stopped: AtomicBool,
}

kernel::impl_has_work! {
    impl HasWork<Self> for Engine { self.work }
}

crate::impl_has_timer!(Engine, timer);

impl WorkItem for Engine {
    type Pointer = Arc<Engine>;

    fn run(this: Arc<Engine>) {
        for _ in 0..SLICES_PER_RUN {
            let (more, deadline) = this.slice();
            if !more {
                // Idle: a held CQ's period runs out later, when the timer runs us again.
                if let Some(at) = deadline {
                    let delay = at.saturating_sub(now_ns());
                    if delay == 0 {
                        this.kick();
                    } else if !this.stopped.load(Ordering::Acquire) {
                        Timer::start(&this, delay);
                    }
                }
                return;
            }
        }
        // More work left: let other work items run, then continue.
        this.kick();
    }
}

impl TimerHandler for Engine {
    fn expired(this: Arc<Engine>) {
        this.kick();
    }
}

impl Engine {
    /// A device of `kind` with `ports` ports and `vectors` vectors, and its workqueue
    /// `rsnic-sim<id>`.
    fn new(kind: Kind, id: u32, ports: usize, vectors: usize) -> Result<Arc<Self>> {
        if ports > MAX_FUNCTIONS || vectors > MAX_FUNCTIONS * VECTORS_PER_FUNCTION {
            return Err(EINVAL);
        }
        let model = Model::new(kind, ports, id)?;
        let mut handlers = KVec::with_capacity(vectors, GFP_KERNEL)?;
        for _ in 0..vectors {
            handlers.push(KVec::new(), GFP_KERNEL)?;
        }
        let wq = OwnedQueue::new(c_str!("rsnic-sim"), id as i32)?;
        let posted = PostedWrites::new()?;
        Arc::pin_init(
            pin_init!(Self {
                kind,
                model <- new_spinlock!(model, "rsnic::Engine::model"),
                posted,
                handlers <- new_spinlock!(handlers, "rsnic::Engine::handlers"),
                work <- new_work!("rsnic::Engine::work"),
                timer <- Timer::new(),
                wq,
                stopped: AtomicBool::new(false),
            }),
            GFP_KERNEL,
        )
    }

    /// The device's family.
    pub(crate) fn kind(&self) -> Kind {
        self.kind
    }

    /// Runs `f` on the model under its lock, after the writes posted so far are applied.
    fn with_model<R>(&self, f: impl FnOnce(&mut Model) -> R) -> R {
        with_bh(|| {
            let mut m = self.model.lock();
            self.posted.apply(&mut m);
            f(&mut m)
        })
    }

    /// Writes lost to a full posted-write buffer (`dev_mmio_posted_lost`).
    pub(crate) fn posted_lost(&self) -> u64 {
        self.posted.lost.load(Ordering::Relaxed)
    }

    /// Posts a register write and queues the engine. When the buffer is full, the writer
    /// takes the model's lock and applies the write itself, after what was posted before
    /// it; a writer with interrupts disabled (netpoll, under netconsole's locks) must not
    /// take that lock, so it waits a bounded time for the engine to make room, then counts
    /// the write lost.
    #[inline]
    fn post(self: &Arc<Self>, reg: u32, val: u64) {
        if !self.posted.push(reg, val) {
            self.post_full(reg, val);
        }
        self.kick();
    }

    #[cold]
    #[inline(never)]
    fn post_full(&self, reg: u32, val: u64) {
        if !irqs_disabled() {
            self.with_model(|m| m.write(reg, val));
            return;
        }
        for _ in 0..FULL_TRIES {
            core::hint::spin_loop();
            if self.posted.push(reg, val) {
                return;
            }
        }
        self.posted.lost.fetch_add(1, Ordering::Relaxed);
    }

    /// A 64-bit register write (doorbells): posted, then the engine runs.
    #[inline]
    pub(crate) fn mmio_write64(self: &Arc<Self>, offset: u32, bytes: [u8; 8]) {
        self.post(offset & !WRITE32, u64::from_ne_bytes(bytes));
    }

    /// A 32-bit register write (a command or EQ doorbell gives the device work, as a
    /// doorbell does): posted, then the engine runs.
    pub(crate) fn mmio_write32(self: &Arc<Self>, offset: u32, value: u32) {
        self.post((offset & !WRITE32) | WRITE32, u64::from(value));
    }

    /// A 32-bit register read, after the writes posted before it.
    pub(crate) fn mmio_read32(&self, offset: u32) -> u32 {
        self.with_model(|m| match m {
            Model::Mlx5(m) => m.mmio_read32(offset),
            Model::Mana(m) => m.mmio_read32(offset),
        })
    }

    /// Sets the handler `key` has on vector `vector` (numbered as the model raises it), or
    /// clears it (`None`). With `None`, no delivery to the old handler is in progress or
    /// will happen once this returns; its reference is dropped outside the lock.
    pub(crate) fn set_handler(
        &self,
        vector: usize,
        key: IrqKey,
        h: Option<Arc<dyn IrqHandler>>,
    ) -> Result {
        let old = with_bh(|| {
            let mut t = self.handlers.lock();
            let list = t.get_mut(vector).ok_or(EINVAL)?;
            let old = list
                .iter_mut()
                .find(|e| e.as_ref().is_some_and(|(k, _)| *k == key))
                .and_then(Option::take)
                .map(|(_, h)| h);
            if let Some(h) = h {
                match list.iter_mut().find(|e| e.is_none()) {
                    Some(e) => *e = Some((key, h)),
                    // Control path; the lock is a spinlock, so the allocation may not sleep.
                    None => list.push(Some((key, h)), GFP_ATOMIC)?,
                }
            }
            Ok::<_, Error>(old)
        })?;
        drop(old);
        Ok(())
    }

    /// One slice: runs the model for up to [`SLICE_WQES`] WQEs at the current time, then
    /// delivers interrupts. Returns whether work is left and the model's moderation
    /// deadline.
    fn slice(&self) -> (bool, Option<u64>) {
        let mut sink = IrqSink {
            raised: [0; MAX_FUNCTIONS * VECTORS_PER_FUNCTION / 64],
        };
        let (more, deadline) = self.with_model(|m| m.run(&mut sink, SLICE_WQES, now_ns()));
        if sink.raised.iter().any(|&w| w != 0) {
            // Deliver under the table lock so that `set_handler(.., None)` waits for us;
            // NAPI softirqs raised here run when bottom halves come back, after the lock.
            with_bh(|| {
                let t = self.handlers.lock();
                for (w, bits) in sink.raised.iter().enumerate() {
                    let mut b = *bits;
                    while b != 0 {
                        let v = w * 64 + b.trailing_zeros() as usize;
                        b &= b - 1;
                        // Each handler on the vector (a shared vector: several).
                        for (_, h) in t.get(v).map_or(&[][..], |l| &l[..]).iter().flatten() {
                            h.irq();
                        }
                    }
                }
            });
        }
        (more, deadline)
    }

    /// Queues a run of the device.
    pub(crate) fn kick(self: &Arc<Self>) {
        if !self.stopped.load(Ordering::Acquire) {
            let _ = self.wq.queue().enqueue(self.clone());
        }
    }

    /// Stops the engine: no more work is queued, and what was queued has finished when this
    /// returns. Sleeps.
    fn shutdown(&self) {
        self.stopped.store(true, Ordering::Release);
        self.wq.flush();
        // The last run may have armed the timer; it queues nothing now, and lets go of us.
        Timer::cancel(self);
    }
}

/// One simulated device with its functions and debugfs files.
pub(crate) struct SimDevice {
    engine: Arc<Engine>,
    funcs: KVec<Arc<Function>>,
    _debugfs: KVec<ShowFile<counters::PortCounters>>,
    _inject: KVec<StoreFile<inject::PortInject>>,
}

impl SimDevice {
    fn new(kind: Kind, index: u32, ports: usize, debugfs: &Arc<Dir>) -> Result<Self> {
        let dma = DmaDevice::new(c_str!("rsnic-sim"), index as i32)?;
        let vectors = match kind {
            Kind::Mlx5 => ports * VECTORS_PER_FUNCTION,
            Kind::Mana => mana_vectors(),
        };
        let engine = Engine::new(kind, index, ports, vectors)?;
        let dir = debugfs.subdir(&CString::try_from_fmt(fmt!("rsnic-sim{}", index))?)?;
        let mut funcs = KVec::with_capacity(ports, GFP_KERNEL)?;
        let mut files = KVec::with_capacity(ports, GFP_KERNEL)?;
        let mut knobs = KVec::with_capacity(ports, GFP_KERNEL)?;
        // ConnectX: each port is a function with its own register window, laid out back to
        // back, and its own vectors; MANA: one function (its registers at 0, every vector),
        // whose vports are the ports.
        match kind {
            Kind::Mlx5 => {
                for p in 0..ports {
                    let base = sim::mlx5::FUNC_BAR_SIZE * p as u32;
                    let v = p * VECTORS_PER_FUNCTION;
                    let f = Function::new(
                        engine.clone(),
                        dma.clone(),
                        index,
                        p,
                        base,
                        v,
                        VECTORS_PER_FUNCTION,
                    )?;
                    funcs.push(f, GFP_KERNEL)?;
                }
            }
            Kind::Mana => {
                let f = Function::new(engine.clone(), dma.clone(), index, 0, 0, 0, vectors)?;
                funcs.push(f, GFP_KERNEL)?;
            }
        }
        for p in 0..ports {
            let pdir = dir.subdir(&CString::try_from_fmt(fmt!("port{}", p))?)?;
            let file = pdir.show_file(
                c_str!("counters"),
                counters::PortCounters {
                    engine: engine.clone(),
                    port: p,
                },
            )?;
            files.push(file, GFP_KERNEL)?;
            let knob = pdir.store_file(
                c_str!("inject"),
                inject::PortInject {
                    engine: engine.clone(),
                    port: p,
                },
            )?;
            knobs.push(knob, GFP_KERNEL)?;
        }
        Ok(Self {
            engine,
            funcs,
            _debugfs: files,
            _inject: knobs,
        })
    }

    /// The device's family.
    pub(crate) fn kind(&self) -> Kind {
        self.engine.kind()
    }

    /// The device's functions, in order (ConnectX: one per port; MANA: one).
    pub(crate) fn functions(&self) -> &[Arc<Function>] {
        &self.funcs
    }
}

impl Drop for SimDevice {
    fn drop(&mut self) {
        // The driver has let go of the functions; stop the engine before the model goes.
        self.engine.shutdown();
    }
}

/// Every simulated device of the module, created from its parameters.
pub(crate) struct Host {
    devices: KVec<SimDevice>,
    /// `/sys/kernel/debug/rsnic` (removed after the devices' files).
    _debugfs: Arc<Dir>,
}

/// Most simulated devices one load may create (their numbers are below this).
pub(crate) const MAX_DEVS: u32 = 8;

impl Host {
    /// Creates the devices the module parameters describe: `num_devs` devices of
    /// `num_ports` ports (wired in pairs), of the families `family` names.
    #[inline(never)]
    pub(crate) fn new() -> Result<Self> {
        let num_devs = params::num_devs();
        let num_ports = params::num_ports();
        if num_devs == 0 || num_devs > MAX_DEVS {
            pr_err!("num_devs={} is out of range 1..={}\n", num_devs, MAX_DEVS);
            return Err(EINVAL);
        }
        if !(2..=MAX_FUNCTIONS as u32).contains(&num_ports) || num_ports % 2 != 0 {
            pr_err!(
                "num_ports={} must be even and within 2..={} (ports are wired in pairs)\n",
                num_ports,
                MAX_FUNCTIONS
            );
            return Err(EINVAL);
        }
        let kinds = families(params::family().as_bytes(), num_devs)?;
        let debugfs = Dir::root(c_str!("rsnic"))?;
        let mut devices = KVec::with_capacity(kinds.len(), GFP_KERNEL)?;
        for (i, kind) in kinds.iter().enumerate() {
            devices.push(
                SimDevice::new(*kind, i as u32, num_ports as usize, &debugfs)?,
                GFP_KERNEL,
            )?;
        }
        Ok(Self {
            devices,
            _debugfs: debugfs,
        })
    }

    /// The devices, in order.
    pub(crate) fn devices(&self) -> &[SimDevice] {
        &self.devices
    }
}

/// The families of the `family` parameter, one per device (the last one repeats).
fn families(param: &[u8], num_devs: u32) -> Result<KVec<Kind>> {
    let mut kinds = KVec::new();
    for item in param.split(|&b| b == b',') {
        let kind = match item {
            b"mlx5" => Kind::Mlx5,
            b"mana" => Kind::Mana,
            _ => {
                pr_err!(
                    "family: unknown family {:?} (use mlx5, mana, or a comma-separated list)\n",
                    core::str::from_utf8(item).unwrap_or("?")
                );
                return Err(EINVAL);
            }
        };
        kinds.push(kind, GFP_KERNEL)?;
    }
    if kinds.len() > num_devs as usize {
        pr_err!(
            "family lists {} devices but num_devs={}\n",
            kinds.len(),
            num_devs
        );
        return Err(EINVAL);
    }
    while kinds.len() < num_devs as usize {
        let last = kinds.last().copied().unwrap_or(Kind::Mlx5);
        kinds.push(last, GFP_KERNEL)?;
    }
    Ok(kinds)
}
