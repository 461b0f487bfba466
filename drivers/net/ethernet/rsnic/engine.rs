// SPDX-License-Identifier: GPL-2.0

//! The simulated ConnectX running inside the kernel.
//!
//! The device model of `sim::mlx5` sits behind the same hardware boundary as a real NIC: the
//! driver writes registers ([`EngineMmio`]), the model reads and writes host memory by bus
//! address ([`crate::hw::KBus`]) and raises MSI-X vectors. A register write only latches
//! state in the model (as a doorbell does in hardware) and queues the engine's work item on
//! the device's own workqueue; the work runs the model in slices of [`SLICE_WQES`] WQEs, then
//! delivers the interrupts raised meanwhile by scheduling the NAPI context registered for
//! each vector. The transmit path never runs the model itself.
//!
//! The model is behind a spinlock taken with bottom halves disabled, because doorbells are
//! rung from the transmit path and NAPI (softirq); slices keep the hold time short.

use crate::channel::Channel;
use crate::dp::hw::{InterruptSink, Mmio};
use crate::ext::{sync::with_bh, wq::OwnedQueue};
use crate::hw::KBus;
use crate::sim::mlx5::{Device as SimDevice, Port as SimPort, QueueSet, MAX_QUEUES, SCRATCH_LEN};
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::{
    c_str, new_spinlock, new_work,
    prelude::*,
    sync::{Arc, SpinLock},
    workqueue::{Work, WorkItem},
};

/// The model with the kernel's storage.
pub(crate) type Model = SimDevice<KVec<SimPort>, KVVec<QueueSet>, KVVec<u8>>;

/// Most channels per port; vector `port * MAX_CHANNELS + channel`.
pub(crate) const MAX_CHANNELS: usize = 8;
/// WQEs the model executes per slice before the lock is released.
pub(crate) const SLICE_WQES: usize = 256;
/// Slices per work run before the work re-queues itself (lets other work run).
const SLICES_PER_RUN: usize = 16;

/// Vectors raised during one slice, delivered after it.
struct IrqSink {
    raised: [u64; 2],
}

impl InterruptSink for IrqSink {
    fn raise(&mut self, vector: u16) {
        let v = usize::from(vector);
        if let Some(w) = self.raised.get_mut(v / 64) {
            *w |= 1u64 << (v % 64);
        }
    }
}

/// One simulated device: the model, its interrupt routing and its workqueue.
#[pin_data]
pub(crate) struct Engine {
    #[pin]
    model: SpinLock<Model>,
    /// The channel whose NAPI each vector schedules.
    #[pin]
    irqs: SpinLock<KVec<Option<Arc<Channel>>>>,
    #[pin]
    work: Work<Engine>,
    wq: OwnedQueue,
    stopped: AtomicBool,
}

kernel::impl_has_work! {
    impl HasWork<Self> for Engine { self.work }
}

impl WorkItem for Engine {
    type Pointer = Arc<Engine>;

    fn run(this: Arc<Engine>) {
        for _ in 0..SLICES_PER_RUN {
            if !this.slice() {
                return;
            }
        }
        // More work left: let other work items run, then continue.
        this.kick_arc(&this);
    }
}

impl Engine {
    /// A device with `ports` ports and its workqueue `rsnic-sim<id>`.
    pub(crate) fn new(id: i32, ports: usize) -> Result<Arc<Self>> {
        let mut p = KVec::with_capacity(ports, GFP_KERNEL)?;
        for _ in 0..ports {
            p.push(SimPort::new(), GFP_KERNEL)?;
        }
        let mut q = KVVec::with_capacity(ports * MAX_QUEUES, GFP_KERNEL)?;
        for _ in 0..ports * MAX_QUEUES {
            q.push(QueueSet::EMPTY, GFP_KERNEL)?;
        }
        let scratch = KVVec::from_elem(0u8, SCRATCH_LEN, GFP_KERNEL)?;
        let model = Model::new(p, q, scratch).map_err(|_| EINVAL)?;
        let mut irqs = KVec::with_capacity(ports * MAX_CHANNELS, GFP_KERNEL)?;
        for _ in 0..ports * MAX_CHANNELS {
            irqs.push(None, GFP_KERNEL)?;
        }
        let wq = OwnedQueue::new(c_str!("rsnic-sim"), id)?;
        Arc::pin_init(
            pin_init!(Self {
                model <- new_spinlock!(model, "rsnic::Engine::model"),
                irqs <- new_spinlock!(irqs, "rsnic::Engine::irqs"),
                work <- new_work!("rsnic::Engine::work"),
                wq,
                stopped: AtomicBool::new(false),
            }),
            GFP_KERNEL,
        )
    }

    /// Runs `f` on the model with the lock held (control path: queue creation, counters).
    pub(crate) fn with_model<R>(&self, f: impl FnOnce(&mut Model) -> R) -> R {
        with_bh(|| {
            let mut m = self.model.lock();
            f(&mut m)
        })
    }

    /// Routes `vector` to `channel` (or to nobody). With `None`, no delivery to the old
    /// channel is in progress or will happen once this returns.
    pub(crate) fn set_irq(&self, vector: usize, channel: Option<Arc<Channel>>) {
        let old = with_bh(|| {
            let mut t = self.irqs.lock();
            match t.get_mut(vector) {
                Some(slot) => core::mem::replace(slot, channel),
                None => channel,
            }
        });
        // The old reference is dropped outside the lock (dropping a channel may sleep).
        drop(old);
    }

    /// One slice: runs the model for up to [`SLICE_WQES`] WQEs, then delivers interrupts.
    /// Returns whether work is left.
    fn slice(&self) -> bool {
        let mut sink = IrqSink { raised: [0; 2] };
        let more = with_bh(|| {
            let mut m = self.model.lock();
            m.process_budget(&KBus, &mut sink, SLICE_WQES).1
        });
        if sink.raised != [0; 2] {
            // Deliver under the table lock so that `set_irq(v, None)` waits for us; NAPI
            // softirqs raised here run when bottom halves come back, after the lock.
            with_bh(|| {
                let t = self.irqs.lock();
                for (w, bits) in sink.raised.iter().enumerate() {
                    let mut b = *bits;
                    while b != 0 {
                        let v = w * 64 + b.trailing_zeros() as usize;
                        b &= b - 1;
                        if let Some(Some(ch)) = t.get(v) {
                            ch.interrupt();
                        }
                    }
                }
            });
        }
        more
    }

    fn kick_arc(&self, this: &Arc<Engine>) {
        if !self.stopped.load(Ordering::Acquire) {
            let _ = self.wq.queue().enqueue(this.clone());
        }
    }

    /// Stops the engine: no more work is queued, and what was queued has finished when this
    /// returns. Sleeps.
    pub(crate) fn shutdown(&self) {
        self.stopped.store(true, Ordering::Release);
        self.wq.flush();
    }
}

/// The register window (BAR0) of an engine, as the data path writes it.
#[derive(Clone, Copy)]
pub(crate) struct EngineMmio<'a>(pub(crate) &'a Arc<Engine>);

impl Mmio for EngineMmio<'_> {
    fn write64(&self, offset: u32, bytes: [u8; 8]) {
        with_bh(|| self.0.model.lock().mmio_write64(offset, bytes));
        self.0.kick_arc(self.0);
    }

    fn write32(&self, offset: u32, value: u32) {
        with_bh(|| self.0.model.lock().mmio_write32(offset, value));
    }

    fn read32(&self, offset: u32) -> u32 {
        with_bh(|| self.0.model.lock().mmio_read32(offset))
    }
}
