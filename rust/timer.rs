// SPDX-License-Identifier: GPL-2.0

//! A one-shot high-resolution timer that hands its owner to a handler (`struct hrtimer`),
//! and the monotonic clock.
//!
//! C header: [`include/linux/hrtimer.h`](srctree/include/linux/hrtimer.h).
//!
//! A [`Timer`] is a field of a structure that lives in an [`Arc`], declared with
//! [`crate::impl_has_timer!`]. [`Timer::start`] arms it (or moves its expiry) and keeps a
//! reference to the owner while it is armed; on expiry the handler gets that reference
//! ([`TimerHandler::expired`], hard interrupt context: it must not sleep or take a lock
//! that is not irq-safe, queueing work is fine). [`Timer::cancel`] stops it and drops the
//! reference: an owner must cancel its timer before it can go away (the armed timer keeps
//! it alive).

use super::bindings;
use core::{
    marker::PhantomData,
    sync::atomic::{AtomicBool, Ordering},
};
use kernel::{init::PinInit, prelude::*, sync::Arc, types::Opaque};

/// The monotonic clock (`ktime_get_ns()`), nanoseconds.
pub fn now_ns() -> u64 {
    // SAFETY: `ktime_get_ns()` may be called from any context.
    unsafe { bindings::rsnic_helper_ktime_get_ns() }
}

/// A structure (in an [`Arc`]) that embeds a [`Timer<Self>`] and handles its expiry.
pub trait TimerHandler: HasTimer + Send + Sync + Sized {
    /// The timer ran out. Hard interrupt context.
    fn expired(this: Arc<Self>);
}

/// Where the [`Timer`] sits inside `Self`.
///
/// # Safety
///
/// `timer_offset()` is the byte offset of a field of type `Timer<Self>` inside `Self`. Use
/// [`crate::impl_has_timer!`], which computes it with `offset_of!`.
pub unsafe trait HasTimer {
    /// Byte offset of the `Timer<Self>` field.
    fn timer_offset() -> usize;
}

/// Implements [`HasTimer`] for a structure with a `Timer<Self>` field:
/// `impl_has_timer!(Engine, timer);`
#[macro_export]
macro_rules! impl_has_timer {
    ($type:ty, $field:ident) => {
        // SAFETY: the offset is computed by the compiler for a field whose type is checked
        // below to be `Timer<Self>`.
        unsafe impl $crate::kernel_ext::timer::HasTimer for $type {
            fn timer_offset() -> usize {
                let _: fn(&$type) -> &$crate::kernel_ext::timer::Timer<$type> = |s| &s.$field;
                ::core::mem::offset_of!($type, $field)
            }
        }
    };
}

/// A one-shot timer embedded in `T`.
///
/// # Invariants
///
/// `inner` was initialised by `rsnic_helper_timer_init()` with `expired_cb::<T>` and sits
/// at offset [`HasTimer::timer_offset`] (plus its own offset) of a `T`. While `held` is
/// true, one strong reference of the `Arc<T>` that owns that `T` was leaked by
/// [`Timer::start`] for the timer to give to the handler or drop.
#[repr(C)]
#[pin_data(PinnedDrop)]
pub struct Timer<T: TimerHandler> {
    #[pin]
    inner: Opaque<bindings::rsnic_timer>,
    held: AtomicBool,
    _t: PhantomData<T>,
}

// SAFETY: hrtimers may be started and cancelled from any CPU; `held` is atomic.
unsafe impl<T: TimerHandler> Send for Timer<T> {}
// SAFETY: as for `Send`.
unsafe impl<T: TimerHandler> Sync for Timer<T> {}

impl<T: TimerHandler> Timer<T> {
    /// A timer, not armed.
    pub fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            inner <- Opaque::ffi_init(|p: *mut bindings::rsnic_timer| {
                // SAFETY: `p` points to the field's memory at its final (pinned) address;
                // the helper initialises the hrtimer there with our handler.
                unsafe { bindings::rsnic_helper_timer_init(p, Some(Self::expired_cb)) }
            }),
            held: AtomicBool::new(false),
            _t: PhantomData,
        })
    }

    fn of(owner: &T) -> &Self {
        let p = (owner as *const T)
            .cast::<u8>()
            .wrapping_add(T::timer_offset());
        // SAFETY: `HasTimer` says a `Timer<T>` lives at that offset of every `T`; it is
        // borrowed for as long as `owner` is.
        unsafe { &*p.cast::<Self>() }
    }

    /// Arms `owner`'s timer to run out `delay_ns` from now; an armed timer's expiry moves
    /// there. While armed, the timer keeps a reference to `owner`. Not from the handler.
    pub fn start(owner: &Arc<T>, delay_ns: u64) {
        let t = Self::of(owner);
        loop {
            if t.held
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                // The reference the expiry (or `cancel`) takes back (type invariant).
                let _ = Arc::into_raw(owner.clone());
                // SAFETY: `inner` was initialised (type invariant) and is pinned in `owner`.
                unsafe { bindings::rsnic_helper_timer_start(t.inner.get(), delay_ns) };
                return;
            }
            // Armed. Still queued: take it off and queue it at the new expiry, under the
            // same reference.
            // SAFETY: as above.
            if unsafe { bindings::rsnic_helper_timer_try_to_cancel(t.inner.get()) } == 1 {
                // SAFETY: as above.
                unsafe { bindings::rsnic_helper_timer_start(t.inner.get(), delay_ns) };
                return;
            }
            // Not queued: its handler runs now (or another `start` is between its two
            // steps), and clears `held` before anything else. Every hrtimer start happens
            // with `held` set, so each expiry finds the reference it gives away.
            core::hint::spin_loop();
        }
    }

    /// Stops `owner`'s timer: when this returns the handler is not running and will not
    /// run until the next [`Timer::start`], and the reference the timer held is dropped.
    /// Waits for a running handler (not from the handler).
    pub fn cancel(owner: &T) {
        let t = Self::of(owner);
        // SAFETY: `inner` was initialised (type invariant).
        unsafe { bindings::rsnic_helper_timer_cancel(t.inner.get()) };
        if t.held.swap(false, Ordering::AcqRel) {
            // SAFETY: `held` was true: `start` leaked one reference of the `Arc` that owns
            // `owner` (type invariant), which is taken back exactly once, here.
            drop(unsafe { Arc::from_raw(owner as *const T) });
        }
    }

    /// # Safety
    ///
    /// Called by the hrtimer core through the helper, for a timer initialised by
    /// [`Timer::new`].
    unsafe extern "C" fn expired_cb(raw: *mut bindings::rsnic_timer) {
        let inner = core::mem::offset_of!(Self, inner);
        let owner = raw
            .cast::<u8>()
            .wrapping_sub(inner)
            .wrapping_sub(T::timer_offset())
            .cast::<T>();
        // SAFETY: `raw` is the `inner` field of a `Timer<T>` inside a `T` (type invariant);
        // while the timer is armed with `held` set, that `T` is kept alive by the reference
        // `start` leaked.
        let t = Self::of(unsafe { &*owner });
        if t.held.swap(false, Ordering::AcqRel) {
            // SAFETY: `held` was true: the leaked reference is taken back exactly once.
            T::expired(unsafe { Arc::from_raw(owner) });
        }
    }
}

#[pinned_drop]
impl<T: TimerHandler> PinnedDrop for Timer<T> {
    fn drop(self: Pin<&mut Self>) {
        // Not armed any more: an armed timer holds a reference to its owner, which is being
        // dropped. Cancelling makes sure the hrtimer is off the queue all the same.
        // SAFETY: `inner` was initialised (type invariant).
        unsafe { bindings::rsnic_helper_timer_cancel(self.inner.get()) };
    }
}
