// SPDX-License-Identifier: GPL-2.0

//! TX queues (`struct netdev_queue`): stop, wake and byte queue limits (BQL).
//!
//! C header: [`include/linux/netdevice.h`](srctree/include/linux/netdevice.h).
//!
//! Stopping and waking are atomic bit operations, callable from any context. BQL's two
//! halves have the kernel's own rules: [`TxQueue::sent`] belongs to the transmit path (the
//! queue's xmit lock is held), [`TxQueue::completed`] to the completion path, which the
//! driver serialises per queue (one NAPI context per queue).

use super::super::bindings;
use super::device::Device;
use core::{
    cell::UnsafeCell,
    marker::PhantomData,
    sync::atomic::{AtomicPtr, Ordering},
};
use kernel::{prelude::*, types::Opaque};

/// A TX queue of a network device.
///
/// # Invariants
///
/// The wrapped `netdev_queue` belongs to a device that stays valid while the reference is
/// alive (it is obtained through a `&Device`).
#[repr(transparent)]
pub struct TxQueue(Opaque<bindings::netdev_queue>);

// SAFETY: every method is either an atomic operation or follows the kernel's own
// serialisation rules spelled out in the module documentation.
unsafe impl Sync for TxQueue {}
// SAFETY: as for `Sync`; a queue is not tied to a thread.
unsafe impl Send for TxQueue {}

impl Device {
    /// TX queue `index`, if the device has that many.
    pub fn tx_queue(&self, index: u32) -> Option<&TxQueue> {
        let dev = self as *const Device as *mut bindings::net_device;
        // SAFETY: the device is valid (type invariant of `Device`); `num_tx_queues` is fixed
        // at allocation.
        let n = unsafe { bindings::rsnic_helper_num_tx_queues(dev) };
        if index >= n {
            return None;
        }
        // SAFETY: `index` is below `num_tx_queues`, so the queue exists and lives as long as
        // the device, which outlives `&self`.
        Some(unsafe { &*bindings::rsnic_helper_netdev_get_tx_queue(dev, index).cast::<TxQueue>() })
    }
}

impl Device {
    /// Stops every TX queue and waits until no transmit is in progress on any
    /// (`netif_tx_disable()`).
    pub fn tx_disable(&self) {
        // SAFETY: the device is valid; the function takes each queue's xmit lock.
        unsafe { bindings::rsnic_helper_netif_tx_disable(self as *const Device as *mut _) }
    }

    /// Sets how many TX and RX queues are in use (`netif_set_real_num_queues()`). Under RTNL
    /// when the device is registered (callers are `ndo_open` and ethtool, which hold it).
    pub fn set_real_num_queues(&self, tx: u32, rx: u32) -> Result {
        // SAFETY: the device is valid; RTNL is held by the callers (documented).
        kernel::error::to_result(unsafe {
            bindings::rsnic_helper_set_real_num_queues(self as *const Device as *mut _, tx, rx)
        })
    }
}

impl TxQueue {
    fn as_ptr(&self) -> *mut bindings::netdev_queue {
        self.0.get()
    }

    /// Stops the queue: the stack sends no more packets to it (`netif_tx_stop_queue()`).
    pub fn stop(&self) {
        // SAFETY: the queue is valid (type invariant); this is an atomic bit set.
        unsafe { bindings::rsnic_helper_netif_tx_stop_queue(self.as_ptr()) }
    }

    /// Starts the queue without scheduling it (`netif_tx_start_queue()`), before traffic.
    pub fn start(&self) {
        // SAFETY: the queue is valid (type invariant); this is an atomic bit clear.
        unsafe { bindings::rsnic_helper_netif_tx_start_queue(self.as_ptr()) }
    }

    /// Wakes a stopped queue and schedules it (`netif_tx_wake_queue()`).
    pub fn wake(&self) {
        // SAFETY: the queue is valid (type invariant); callable from any context.
        unsafe { bindings::netif_tx_wake_queue(self.as_ptr()) }
    }

    /// Whether the queue is stopped, by the driver or by BQL (`netif_xmit_stopped()`).
    pub fn is_stopped(&self) -> bool {
        // SAFETY: the queue is valid (type invariant); this reads the state bits.
        unsafe { bindings::rsnic_helper_netif_xmit_stopped(self.as_ptr()) }
    }

    /// Whether the driver stopped the queue (`netif_tx_queue_stopped()`; BQL's own stop is
    /// not included).
    pub fn driver_stopped(&self) -> bool {
        // SAFETY: the queue is valid (type invariant); this reads the state bits.
        unsafe { bindings::rsnic_helper_netif_tx_queue_stopped(self.as_ptr()) }
    }

    /// Accounts `bytes` handed to the hardware (`__netdev_tx_sent_queue()`). Returns whether
    /// the driver must ring the doorbell now: `xmit_more` is false, or BQL stopped the queue.
    /// Call it from the transmit path only.
    pub fn sent(&self, bytes: u32, xmit_more: bool) -> bool {
        // SAFETY: the queue is valid (type invariant); the caller is the transmit path, which
        // the stack serialises per queue with the xmit lock.
        unsafe { bindings::rsnic_helper_netdev_tx_sent_queue(self.as_ptr(), bytes, xmit_more) }
    }

    /// Accounts `pkts` packets and `bytes` bytes completed by the hardware
    /// (`netdev_tx_completed_queue()`); may wake a queue BQL stopped. Call it from the
    /// queue's completion path only (serialised per queue).
    pub fn completed(&self, pkts: u32, bytes: u32) {
        // SAFETY: the queue is valid (type invariant); completions are serialised per queue
        // by the caller (its NAPI context).
        unsafe { bindings::rsnic_helper_netdev_tx_completed_queue(self.as_ptr(), pkts, bytes) }
    }

    /// Resets BQL state (`netdev_tx_reset_queue()`), after the queue's packets were all freed
    /// while it was quiesced.
    pub fn reset(&self) {
        // SAFETY: the queue is valid (type invariant); the caller quiesced it.
        unsafe { bindings::rsnic_helper_netdev_tx_reset_queue(self.as_ptr()) }
    }
}

/// A TX queue's xmit lock held (`__netif_tx_lock()`), released on drop. Taken by a driver
/// that transmits outside `ndo_start_xmit` (XDP_TX through the stack's queue, as MANA does),
/// so it is serialised with the stack's own transmit path.
pub struct TxLockGuard<'a>(&'a TxQueue, PhantomData<*mut ()>);

impl TxQueue {
    /// Takes the queue's xmit lock. Call with bottom halves disabled (NAPI), as the stack
    /// takes it from softirq context too; the caller must not hold it already.
    pub fn lock(&self) -> TxLockGuard<'_> {
        // SAFETY: the queue is valid (type invariant); bottom halves are disabled (caller's
        // contract), so no softirq on this CPU can try to take it meanwhile.
        unsafe { bindings::rsnic_helper_netif_tx_lock(self.as_ptr()) };
        TxLockGuard(self, PhantomData)
    }
}

impl Drop for TxLockGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: taken in `TxQueue::lock` by this CPU and held since.
        unsafe { bindings::rsnic_helper_netif_tx_unlock(self.0.as_ptr()) }
    }
}

/// Proof that this CPU holds a TX queue's xmit lock (`netdev_queue::_xmit_lock`), for as
/// long as the value lives.
///
/// # Safety
///
/// An implementor exists only while the xmit lock of the queue [`XmitLocked::queue`] names
/// is held by the CPU that holds the value, and is neither `Send` nor `Clone`.
pub unsafe trait XmitLocked {
    /// The queue whose xmit lock is held.
    fn queue(&self) -> *const bindings::netdev_queue;
}

// SAFETY: a `TxLockGuard` is made by `TxQueue::lock` after taking the lock and releases it
// only when dropped; its `PhantomData<*mut ()>` keeps it `!Send`, and it is not `Clone`.
unsafe impl XmitLocked for TxLockGuard<'_> {
    fn queue(&self) -> *const bindings::netdev_queue {
        self.0.as_ptr()
    }
}

/// The context of one `ndo_start_xmit` call: the stack holds the xmit lock of the packet's
/// TX queue around the call (rsnic's devices are not `lltx`: `HARD_TX_LOCK` in
/// `sch_direct_xmit`, `__dev_queue_xmit`, `__dev_direct_xmit` and `generic_xdp_tx`,
/// `__netif_tx_lock_bh` in pktgen, `HARD_TX_TRYLOCK` in netpoll). Made only by the
/// `ndo_start_xmit` trampoline and lent to the driver for the call.
pub struct XmitCtx {
    queue: *const bindings::netdev_queue,
}

impl XmitCtx {
    /// # Safety
    ///
    /// The caller is `ndo_start_xmit` of a device without `lltx`, and `queue` is the queue
    /// the stack picked for the packet (`skb_get_tx_queue()`), whose xmit lock it holds until
    /// the call returns; the value does not outlive the call.
    pub(crate) unsafe fn new(queue: *const bindings::netdev_queue) -> Self {
        Self { queue }
    }
}

// SAFETY: an `XmitCtx` is made only by the `ndo_start_xmit` trampoline for the packet's
// queue, whose lock the stack holds during the call, and the trampoline drops it before
// returning (`XmitCtx::new`'s contract); its raw pointer keeps it `!Send`, and it is not
// `Clone`.
unsafe impl XmitLocked for XmitCtx {
    fn queue(&self) -> *const bindings::netdev_queue {
        self.queue
    }
}

/// Data of one TX queue that its xmit lock guards: the lock the stack already holds around
/// `ndo_start_xmit`, so the transmit path reaches the data without a lock of its own, and
/// the completion path (NAPI) takes it once per poll. Bound to its queue once
/// ([`TxqCell::bind`]); until then nothing reaches the data.
///
/// # Invariants
///
/// `queue` changes only from null to one queue, once. `data` is reached only through
/// [`TxqCell::get`], with a proof that this CPU holds that queue's xmit lock, exclusively
/// borrowed for as long as the data is.
pub struct TxqCell<T> {
    queue: AtomicPtr<bindings::netdev_queue>,
    data: UnsafeCell<T>,
}

// SAFETY: the data is handed from CPU to CPU under the queue's xmit lock, so `T: Send`
// suffices for both.
unsafe impl<T: Send> Send for TxqCell<T> {}
// SAFETY: as for `Send`: shared access to `T` is serialised by the xmit lock (type
// invariant).
unsafe impl<T: Send> Sync for TxqCell<T> {}

impl<T> TxqCell<T> {
    /// A cell holding `t`, not bound to a queue yet.
    pub fn new(t: T) -> Self {
        Self {
            queue: AtomicPtr::new(core::ptr::null_mut()),
            data: UnsafeCell::new(t),
        }
    }

    /// Binds the cell to `txq` if it is not bound yet. Returns whether it is bound to `txq`
    /// (a cell stays with its first queue).
    pub fn bind(&self, txq: &TxQueue) -> bool {
        let q = txq.as_ptr();
        match self.queue.compare_exchange(
            core::ptr::null_mut(),
            q,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => true,
            Err(cur) => cur == q,
        }
    }

    /// The data, if `proof` holds the xmit lock of the cell's queue; `None` if it holds
    /// another queue's or the cell is not bound.
    #[inline]
    pub fn get<'a, P: XmitLocked>(&'a self, proof: &'a mut P) -> Option<&'a mut T> {
        let q = self.queue.load(Ordering::Acquire);
        if q.is_null() || q.cast_const() != proof.queue() {
            return None;
        }
        // No second proof of a held lock can be made meanwhile: taking it again would not
        // return, and the stack does not re-enter `ndo_start_xmit` for a queue it holds.
        // SAFETY: this CPU holds the cell's queue's xmit lock while `proof` lives
        // (`XmitLocked`'s contract) and `proof` is exclusively borrowed for `'a`, so no other
        // access to `data` exists meanwhile.
        let data = unsafe { &mut *self.data.get() };
        Some(data)
    }
}

/// The CPU this code runs on (`raw_smp_processor_id()`): a hint for picking a queue, which
/// stays right only while preemption (or bottom halves) are disabled.
pub fn this_cpu() -> u32 {
    // SAFETY: reads the per-CPU CPU number.
    unsafe { bindings::rsnic_helper_smp_processor_id() }
}

/// Whether the stack has more packets for this queue right behind the current one
/// (`netdev_xmit_more()`): the doorbell may wait. Meaningful inside `ndo_start_xmit`.
pub fn xmit_more() -> bool {
    // SAFETY: reads a per-CPU flag the stack sets around `ndo_start_xmit`.
    unsafe { bindings::rsnic_helper_netdev_xmit_more() }
}
