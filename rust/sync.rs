// SPDX-License-Identifier: GPL-2.0

//! Memory barriers for device-shared memory, and bottom-half control.
//!
//! C headers: [`include/asm-generic/barrier.h`](srctree/include/asm-generic/barrier.h),
//! [`include/linux/bottom_half.h`](srctree/include/linux/bottom_half.h).

use super::bindings;
use core::{
    cell::UnsafeCell,
    marker::PhantomData,
    ops::{Deref, DerefMut},
};
use kernel::{init::PinInit, prelude::*, str::CStr, types::Opaque};

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

/// Runs `f` with bottom halves (softirqs) disabled on this CPU (`local_bh_disable()` /
/// `local_bh_enable()`); softirqs raised meanwhile run when `f` has returned.
///
/// Use it around locks that softirq code (transmit, NAPI) also takes, so that a softirq
/// cannot interrupt the holder on the same CPU. Everything `f` locks is released when `f`
/// returns, before bottom halves come back: a closure cannot leak a guard past its end,
/// which a scoped guard can (a lock guard in a block's tail expression outlives the block's
/// locals).
///
/// With interrupts disabled (netpoll) it only runs `f`: no softirq can run on this CPU
/// before interrupts come back, and `local_bh_enable()` there would run pending softirqs,
/// which enable interrupts.
#[inline]
pub fn with_bh<R>(f: impl FnOnce() -> R) -> R {
    if irqs_disabled() {
        return f();
    }
    // SAFETY: disabling bottom halves has no preconditions; they are re-enabled below on
    // the same CPU (nothing in between can migrate us: BH-disabled sections are not
    // preempted).
    unsafe { bindings::rsnic_helper_local_bh_disable() };
    let r = f();
    // SAFETY: paired with the disable above.
    unsafe { bindings::rsnic_helper_local_bh_enable() };
    r
}

/// Runs `f` with the routing netlink lock held (`rtnl_lock()` / `rtnl_unlock()`), as the
/// network stack holds it around `ndo_open`, `ndo_stop` and the ethtool operations. Process
/// context; sleeps.
///
/// C header: [`include/linux/rtnetlink.h`](srctree/include/linux/rtnetlink.h).
///
/// Nothing that waits for the caller may hold RTNL: a work item that takes it must not be
/// flushed or cancelled under RTNL.
pub fn with_rtnl<R>(f: impl FnOnce() -> R) -> R {
    // SAFETY: a sleeping lock with no preconditions beyond process context, which callers
    // are in; it is released below by the same task.
    unsafe { bindings::rtnl_lock() };
    let r = f();
    // SAFETY: paired with the lock above; `f` cannot keep anything that needs the lock past
    // its return except by contract of the types it hands out, none of which are RTNL
    // guards.
    unsafe { bindings::rtnl_unlock() };
    r
}

/// Whether interrupts are disabled on this CPU (`irqs_disabled()`): netpoll calls
/// `ndo_start_xmit` and NAPI polls so, under its caller's locks (netconsole's
/// `target_list_lock`, taken with interrupts disabled and from interrupt handlers).
#[inline]
pub fn irqs_disabled() -> bool {
    // SAFETY: reads the CPU's interrupt flag; no preconditions.
    unsafe { bindings::rsnic_helper_irqs_disabled() }
}

/// The context a transmit runs in ([`xmit_context`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XmitContext {
    /// Process or softirq context with interrupts enabled (the stack's transmit path).
    Normal,
    /// Interrupts disabled outside an interrupt handler (netpoll).
    IrqsOff,
    /// A hard interrupt handler or an NMI (netpoll sending a printk from one).
    HardIrq,
}

/// Whether the CPU runs a hard interrupt handler or an NMI (`in_hardirq() || in_nmi()`),
/// and else whether its interrupts are disabled ([`irqs_disabled`]), in one call, for the
/// transmit path.
///
/// The driver's locks are taken with bottom halves disabled, not interrupts: code in hard
/// interrupt context (netpoll transmitting a printk from an interrupt) must not take them,
/// since the code it interrupted on this CPU may hold one.
#[inline]
pub fn xmit_context() -> XmitContext {
    // SAFETY: reads the preempt count and the interrupt flag; no preconditions.
    match unsafe { bindings::rsnic_helper_xmit_context() } {
        0 => XmitContext::Normal,
        1 => XmitContext::IrqsOff,
        _ => XmitContext::HardIrq,
    }
}

/// A lockdep class for a [`TrySpinLock`]; make one per lock site with
/// [`rsnic_lock_class!`](crate::rsnic_lock_class).
#[repr(transparent)]
pub struct LockClass(Opaque<bindings::lock_class_key>);

// SAFETY: lockdep synchronises its use of a class key itself.
unsafe impl Sync for LockClass {}

impl LockClass {
    /// A class key for a `static`, left for lockdep to initialise (lockdep expects static
    /// keys uninitialised; it registers them by address).
    pub const fn new_static() -> Self {
        Self(Opaque::uninit())
    }
}

/// Defines a static lockdep class and returns a reference to it.
#[macro_export]
macro_rules! rsnic_lock_class {
    () => {{
        static CLASS: $crate::kernel_ext::sync::LockClass =
            $crate::kernel_ext::sync::LockClass::new_static();
        &CLASS
    }};
}

/// A spinlock that can also be tried (`spin_lock()` / `spin_trylock()`); the 6.12 kernel
/// crate's `SpinLock` has no `try_lock`.
///
/// Netpoll transmits with interrupts disabled, under netconsole's `target_list_lock`, which
/// printk also takes in interrupt handlers. A driver lock taken there with `spin_lock()`
/// makes it depend on `target_list_lock` (lockdep: HARDIRQ-safe -> HARDIRQ-unsafe, as the
/// driver takes it elsewhere with interrupts on), and deadlocks if the same CPU printed while
/// holding it. Such paths take it with [`TrySpinLock::try_lock`] and report busy when it is
/// held; netpoll retries, then sends from its work.
///
/// # Invariants
///
/// `lock` was initialised by `spin_lock_init()` and is pinned; `data` is accessed only
/// through a [`TrySpinGuard`], which exists only while `lock` is held.
#[pin_data]
pub struct TrySpinLock<T> {
    #[pin]
    lock: Opaque<bindings::spinlock_t>,
    data: UnsafeCell<T>,
}

// SAFETY: the lock hands `T` from thread to thread, so `T: Send` suffices for both.
unsafe impl<T: Send> Send for TrySpinLock<T> {}
// SAFETY: as for `Send`: shared access to `T` is serialised by the lock.
unsafe impl<T: Send> Sync for TrySpinLock<T> {}

impl<T> TrySpinLock<T> {
    /// A new lock holding `t`, named `name` in lockdep's reports, of lockdep class `class`.
    pub fn new(t: T, name: &'static CStr, class: &'static LockClass) -> impl PinInit<Self> {
        pin_init!(Self {
            data: UnsafeCell::new(t),
            lock <- Opaque::ffi_init(|slot: *mut bindings::spinlock_t| {
                // SAFETY: `slot` is valid for writes and pinned (the field is `#[pin]`); `name`
                // and `class` are static, as lockdep requires.
                unsafe {
                    bindings::rsnic_helper_spin_lock_init(slot, name.as_char_ptr(), class.0.get())
                }
            }),
        })
    }

    /// Takes the lock, spinning while another CPU holds it.
    #[inline]
    pub fn lock(&self) -> TrySpinGuard<'_, T> {
        // SAFETY: the lock was initialised and is pinned (type invariant).
        unsafe { bindings::rsnic_helper_spin_lock(self.lock.get()) };
        // INVARIANT: the lock is held until the guard drops.
        TrySpinGuard {
            lock: self,
            _not_send: PhantomData,
        }
    }

    /// Takes the lock if it is free; `None` if anyone holds it.
    #[inline]
    pub fn try_lock(&self) -> Option<TrySpinGuard<'_, T>> {
        // SAFETY: as in `lock`.
        if unsafe { bindings::rsnic_helper_spin_trylock(self.lock.get()) } {
            // INVARIANT: the trylock succeeded: the lock is held until the guard drops.
            Some(TrySpinGuard {
                lock: self,
                _not_send: PhantomData,
            })
        } else {
            None
        }
    }
}

/// Access to a [`TrySpinLock`]'s data; the lock is released when it drops.
///
/// # Invariants
///
/// `lock.lock` is held by this guard.
pub struct TrySpinGuard<'a, T> {
    lock: &'a TrySpinLock<T>,
    /// Not `Send`: a spinlock is released on the CPU that took it.
    _not_send: PhantomData<*mut ()>,
}

impl<T> Deref for TrySpinGuard<'_, T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: the lock is held (type invariant), so no one else accesses `data`.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T> DerefMut for TrySpinGuard<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; `&mut self` makes this the only access through the guard.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T> Drop for TrySpinGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the guard holds the lock (type invariant) and releases it once, here.
        unsafe { bindings::rsnic_helper_spin_unlock(self.lock.lock.get()) };
    }
}
