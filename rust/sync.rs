// SPDX-License-Identifier: GPL-2.0

//! Memory barriers for device-shared memory, bottom-half control, the transmit context, and
//! a completion to wait on with a timeout.
//!
//! C headers: [`include/asm-generic/barrier.h`](srctree/include/asm-generic/barrier.h),
//! [`include/linux/bottom_half.h`](srctree/include/linux/bottom_half.h),
//! [`include/linux/completion.h`](srctree/include/linux/completion.h).

use super::bindings;
use kernel::{init::PinInit, prelude::*, types::Opaque};

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

/// Sleeps between `min_us` and `max_us` microseconds (`usleep_range()`, an hrtimer).
/// Process context.
pub fn usleep_range(min_us: u16, max_us: u16) {
    // SAFETY: sleeping has no memory-safety preconditions; callers are in process context.
    unsafe { bindings::rsnic_helper_usleep_range(min_us.into(), max_us.into()) }
}

/// The waits of a driver polling its device for a command's completion: short sleeps
/// (20 to 50 µs) for the first [`PollWait::SHORT_US`] µs, as a device answers within
/// microseconds, then 1 ms each (a device that is slow is not polled hard). It counts the
/// least time slept, so a timeout is never shorter than asked. Process context.
#[derive(Debug, Default)]
pub struct PollWait {
    waited_us: u32,
}

impl PollWait {
    /// How long the short sleeps last, in µs.
    pub const SHORT_US: u32 = 2_000;

    /// No time waited yet.
    pub const fn new() -> Self {
        Self { waited_us: 0 }
    }

    /// Sleeps once, unless `timeout_ms` has been waited: then returns false at once.
    pub fn sleep(&mut self, timeout_ms: u32) -> bool {
        if self.waited_us / 1000 >= timeout_ms {
            return false;
        }
        if self.waited_us < Self::SHORT_US {
            usleep_range(20, 50);
            self.waited_us += 20;
        } else {
            msleep(1);
            self.waited_us = self.waited_us.saturating_add(1000);
        }
        true
    }

    /// Whether a slow check is due: true after every `period_ms` ms of 1 ms sleeps (never
    /// in the first [`PollWait::SHORT_US`] µs, when a device answers). A waiter looks then at
    /// what its poll cannot see, such as whether the device is still there.
    pub fn due(&self, period_ms: u32) -> bool {
        self.waited_us >= Self::SHORT_US
            && period_ms > 0
            && (self.waited_us / 1000) % period_ms == 0
    }

    /// Starts the count again (the device made progress).
    pub fn reset(&mut self) {
        self.waited_us = 0;
    }
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

/// A completion (`struct completion`): one side waits, with a timeout and not interrupted by
/// signals ([`Completion::wait_timeout_ms`], as `wait_for_completion_timeout()`), another
/// signals it from any context, an interrupt handler included ([`Completion::complete`]).
/// Each `complete` lets one wait (or [`Completion::try_wait`]) through; one made before the
/// wait is not lost. [`Completion::reinit`] forgets those not waited for.
///
/// # Invariants
///
/// `inner` was initialised by `init_completion()` at its final (pinned) address.
#[pin_data]
pub struct Completion {
    #[pin]
    inner: Opaque<bindings::completion>,
}

// SAFETY: a completion is made to be signalled and waited on from any CPU and task; its
// state is behind its own wait-queue spinlock.
unsafe impl Send for Completion {}
// SAFETY: as for `Send`: every operation takes `&self` and locks internally.
unsafe impl Sync for Completion {}

impl Completion {
    /// A completion not completed.
    pub fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            inner <- Opaque::ffi_init(|p: *mut bindings::completion| {
                // SAFETY: `p` points to the field's memory at its final (pinned) address;
                // `init_completion()` initialises all of it.
                unsafe { bindings::rsnic_helper_init_completion(p) }
            }),
        })
    }

    /// `complete()`: lets one waiter through (now or at its next wait). Any context.
    pub fn complete(&self) {
        // SAFETY: `inner` is initialised (type invariant) and lives as long as `self`.
        unsafe { bindings::rsnic_helper_complete(self.inner.get()) }
    }

    /// `reinit_completion()`: forgets the completions not waited for (before the event
    /// waited for is started, so that a stale one cannot end its wait).
    pub fn reinit(&self) {
        // SAFETY: `inner` is initialised (type invariant) and lives as long as `self`.
        unsafe { bindings::rsnic_helper_reinit_completion(self.inner.get()) }
    }

    /// `wait_for_completion_timeout()` of `ms` milliseconds, not interruptible: true if a
    /// completion let it through, false if the time ran out. Process context; sleeps.
    pub fn wait_timeout_ms(&self, ms: u32) -> bool {
        // SAFETY: `inner` is initialised (type invariant) and lives as long as `self`;
        // callers are in process context, where sleeping is allowed.
        unsafe { bindings::rsnic_helper_wait_for_completion_timeout_ms(self.inner.get(), ms) }
    }

    /// `try_wait_for_completion()`: takes a completion if there is one, without sleeping.
    pub fn try_wait(&self) -> bool {
        // SAFETY: `inner` is initialised (type invariant) and lives as long as `self`.
        unsafe { bindings::rsnic_helper_try_wait_for_completion(self.inner.get()) }
    }
}
