// SPDX-License-Identifier: GPL-2.0

//! The simulated device (ConnectX or MANA, per [`Family`]) running inside the kernel.
//!
//! The device model (`sim::mlx5` or `sim::mana`) sits behind the same hardware boundary as a real NIC: the
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
use crate::dp::hw::{Barriers, InterruptSink, Mmio};
use crate::ext::{sync::with_bh, wq::OwnedQueue};
use crate::family::Family;
use crate::hw::KBarriers;
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::{
    c_str, new_spinlock, new_work,
    prelude::*,
    sync::{Arc, SpinLock},
    workqueue::{Work, WorkItem},
};

/// Most channels per port; channel `c` of port `p` has MSI-X vector
/// `p * VECTORS_PER_PORT + c`.
pub(crate) const MAX_CHANNELS: usize = 8;
/// MSI-X vectors of each port's function (the device's vector `port * VECTORS_PER_PORT +
/// intr`, as the ConnectX model numbers them).
pub(crate) const VECTORS_PER_PORT: usize = 64;
/// The vector index (`intr`) of a function's asynchronous events (port changes): the one
/// after the channels'.
pub(crate) const ASYNC_INTR: usize = MAX_CHANNELS;
/// Most ports a device may have (the vectors the interrupt sink can hold).
pub(crate) const MAX_PORTS: usize = 8;
/// WQEs the model executes per slice before the lock is released.
pub(crate) const SLICE_WQES: usize = 256;
/// Slices per work run before the work re-queues itself (lets other work run).
const SLICES_PER_RUN: usize = 16;

/// Vectors raised during one slice, delivered after it.
pub(crate) struct IrqSink {
    raised: [u64; MAX_PORTS * VECTORS_PER_PORT / 64],
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
pub(crate) struct Engine<F: Family> {
    #[pin]
    model: SpinLock<F::Model>,
    /// The channel whose NAPI each channel vector schedules (`port * MAX_CHANNELS +
    /// channel`).
    #[pin]
    irqs: SpinLock<KVec<Option<Arc<Channel<F>>>>>,
    /// The function whose event handler each port's [`ASYNC_INTR`] vector runs.
    #[pin]
    funcs: SpinLock<KVec<Option<Arc<F::Func>>>>,
    #[pin]
    work: Work<Engine<F>>,
    wq: OwnedQueue,
    stopped: AtomicBool,
}

kernel::impl_has_work! {
    impl{F: Family} HasWork<Self> for Engine<F> { self.work }
}

/// The slot in the channel table of device vector `vector`, if it is a channel's.
fn channel_slot(vector: usize) -> Option<usize> {
    let (port, intr) = (vector / VECTORS_PER_PORT, vector % VECTORS_PER_PORT);
    (intr < MAX_CHANNELS).then_some(port * MAX_CHANNELS + intr)
}

impl<F: Family> WorkItem for Engine<F> {
    type Pointer = Arc<Engine<F>>;

    fn run(this: Arc<Engine<F>>) {
        for _ in 0..SLICES_PER_RUN {
            if !Engine::slice(&this) {
                return;
            }
        }
        // More work left: let other work items run, then continue.
        this.kick_arc(&this);
    }
}

impl<F: Family> Engine<F> {
    /// A device with `ports` ports and its workqueue `rsnic-sim<id>`.
    pub(crate) fn new(id: i32, ports: usize) -> Result<Arc<Self>> {
        let mut model = F::new_model(ports)?;
        for p in 0..ports {
            F::init_port(&mut model, p);
            F::host_config(&mut model, id as u32, p);
        }
        if ports > MAX_PORTS {
            return Err(EINVAL);
        }
        let mut irqs = KVec::with_capacity(ports * MAX_CHANNELS, GFP_KERNEL)?;
        for _ in 0..ports * MAX_CHANNELS {
            irqs.push(None, GFP_KERNEL)?;
        }
        let mut funcs = KVec::with_capacity(ports, GFP_KERNEL)?;
        for _ in 0..ports {
            funcs.push(None, GFP_KERNEL)?;
        }
        let wq = OwnedQueue::new(c_str!("rsnic-sim"), id)?;
        Arc::pin_init(
            pin_init!(Self {
                model <- new_spinlock!(model, "rsnic::Engine::model"),
                irqs <- new_spinlock!(irqs, "rsnic::Engine::irqs"),
                funcs <- new_spinlock!(funcs, "rsnic::Engine::funcs"),
                work <- new_work!("rsnic::Engine::work"),
                wq,
                stopped: AtomicBool::new(false),
            }),
            GFP_KERNEL,
        )
    }

    /// Runs `f` on the model with the lock held (control path: queue creation, counters).
    pub(crate) fn with_model<R>(&self, f: impl FnOnce(&mut F::Model) -> R) -> R {
        with_bh(|| {
            let mut m = self.model.lock();
            f(&mut m)
        })
    }

    /// Routes channel vector `vector` (`port * VECTORS_PER_PORT + channel`) to `channel`
    /// (or to nobody). With `None`, no delivery to the old channel is in progress or will
    /// happen once this returns.
    pub(crate) fn set_irq(&self, vector: usize, channel: Option<Arc<Channel<F>>>) {
        let old = with_bh(|| {
            let mut t = self.irqs.lock();
            match channel_slot(vector).and_then(|i| t.get_mut(i)) {
                Some(slot) => core::mem::replace(slot, channel),
                None => channel,
            }
        });
        // The old reference is dropped outside the lock (dropping a channel may sleep).
        drop(old);
    }

    /// Routes port `port`'s [`ASYNC_INTR`] vector to `func`'s event handler
    /// ([`Family::func_irq`]), or to nobody. Returns the function that was routed before. With
    /// `None`, no delivery to the old function is in progress or will happen once this
    /// returns.
    pub(crate) fn set_func_irq(
        &self,
        port: usize,
        func: Option<Arc<F::Func>>,
    ) -> Option<Arc<F::Func>> {
        with_bh(|| {
            let mut t = self.funcs.lock();
            match t.get_mut(port) {
                Some(slot) => core::mem::replace(slot, func),
                None => func,
            }
        })
    }

    /// One slice: runs the model for up to [`SLICE_WQES`] WQEs, then delivers interrupts.
    /// Returns whether work is left.
    fn slice(this: &Arc<Self>) -> bool {
        let mut sink = IrqSink {
            raised: [0; MAX_PORTS * VECTORS_PER_PORT / 64],
        };
        let more = with_bh(|| {
            let mut m = this.model.lock();
            F::run(&mut m, &mut sink, SLICE_WQES).1
        });
        if sink.raised.iter().any(|&w| w != 0) {
            // Deliver under the table locks so that `set_irq(v, None)` and
            // `set_func_irq(p, None)` wait for us; NAPI softirqs raised here run when bottom
            // halves come back, after the locks.
            with_bh(|| {
                let t = this.irqs.lock();
                let funcs = this.funcs.lock();
                for (w, bits) in sink.raised.iter().enumerate() {
                    let mut b = *bits;
                    while b != 0 {
                        let v = w * 64 + b.trailing_zeros() as usize;
                        b &= b - 1;
                        if v % VECTORS_PER_PORT == ASYNC_INTR {
                            if let Some(Some(f)) = funcs.get(v / VECTORS_PER_PORT) {
                                F::func_irq(f, &EngineMmio(this));
                            }
                        } else if let Some(Some(ch)) = channel_slot(v).and_then(|i| t.get(i)) {
                            ch.interrupt();
                        }
                    }
                }
            });
        }
        more
    }

    /// Queues a run of the device (after a control command that may unblock work, e.g. a
    /// link or RSS change ending a flow-control pause).
    pub(crate) fn kick(self: &Arc<Self>) {
        self.kick_arc(self);
    }

    fn kick_arc(&self, this: &Arc<Engine<F>>) {
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
pub(crate) struct EngineMmio<'a, F: Family>(pub(crate) &'a Arc<Engine<F>>);

impl<F: Family> Clone for EngineMmio<'_, F> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<F: Family> Copy for EngineMmio<'_, F> {}

impl<F: Family> Mmio for EngineMmio<'_, F> {
    fn write64(&self, offset: u32, bytes: [u8; 8]) {
        with_bh(|| F::mmio_write64(&mut self.0.model.lock(), offset, bytes));
        self.0.kick_arc(self.0);
    }

    fn write32(&self, offset: u32, value: u32) {
        with_bh(|| F::mmio_write32(&mut self.0.model.lock(), offset, value));
        // A command doorbell (or an EQ doorbell) gives the device work, as a doorbell does.
        self.0.kick_arc(self.0);
    }

    fn read32(&self, offset: u32) -> u32 {
        with_bh(|| F::mmio_read32(&mut self.0.model.lock(), offset))
    }
}

impl<F: Family> Barriers for EngineMmio<'_, F> {
    fn dma_wmb(&self) {
        KBarriers.dma_wmb();
    }

    fn dma_rmb(&self) {
        KBarriers.dma_rmb();
    }

    fn wmb(&self) {
        KBarriers.wmb();
    }
}
