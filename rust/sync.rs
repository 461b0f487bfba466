// SPDX-License-Identifier: GPL-2.0

//! Memory barriers for device-shared memory, and bottom-half control.
//!
//! C headers: [`include/asm-generic/barrier.h`](srctree/include/asm-generic/barrier.h),
//! [`include/linux/bottom_half.h`](srctree/include/linux/bottom_half.h).

use super::bindings;

/// `dma_wmb()`: earlier writes to coherent memory are visible to the device before later ones.
#[inline]
pub fn dma_wmb() {
    // SAFETY: a barrier has no preconditions.
    unsafe { bindings::rsnic_helper_dma_wmb() }
}

/// `dma_rmb()`: later reads of coherent memory see what the device wrote before the marker
/// read earlier.
#[inline]
pub fn dma_rmb() {
    // SAFETY: a barrier has no preconditions.
    unsafe { bindings::rsnic_helper_dma_rmb() }
}

/// `wmb()`: memory writes are visible before a following MMIO write.
#[inline]
pub fn wmb() {
    // SAFETY: a barrier has no preconditions.
    unsafe { bindings::rsnic_helper_wmb() }
}

/// Sleeps for at least `ms` milliseconds (`msleep()`). Process context.
pub fn msleep(ms: u32) {
    // SAFETY: sleeping has no memory-safety preconditions; callers are in process context.
    unsafe { bindings::rsnic_helper_msleep(ms) }
}

/// Bottom halves (softirqs) are disabled on this CPU while the guard lives
/// (`local_bh_disable()` / `local_bh_enable()`); softirqs raised meanwhile run when it drops.
///
/// Take it before a lock that softirq code (transmit, NAPI) also takes, so that softirq
/// cannot interrupt the holder on the same CPU; drop order (guard declared first, lock guard
/// second) releases the lock before re-enabling bottom halves.
pub struct BhGuard {
    _not_send: core::marker::PhantomData<*const ()>,
}

impl BhGuard {
    /// Disables bottom halves. Process or softirq context; nests.
    pub fn new() -> Self {
        // SAFETY: disabling bottom halves has no preconditions; `drop` re-enables them on
        // this CPU (the guard is not `Send`).
        unsafe { bindings::rsnic_helper_local_bh_disable() };
        Self {
            _not_send: core::marker::PhantomData,
        }
    }
}

impl Default for BhGuard {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for BhGuard {
    fn drop(&mut self) {
        // SAFETY: paired with the disable in `new`, on the same CPU (not `Send`).
        unsafe { bindings::rsnic_helper_local_bh_enable() }
    }
}
