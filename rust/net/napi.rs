// SPDX-License-Identifier: GPL-2.0

//! NAPI: polled packet processing (`struct napi_struct`).
//!
//! C header: [`include/linux/netdevice.h`](srctree/include/linux/netdevice.h).
//!
//! A [`Napi`] is a field of a pinned driver structure (for example a channel inside an
//! `Arc`), declared with [`crate::impl_has_napi!`]. The poll callback finds that structure
//! from the `napi_struct` address, so no pointer to it is stored and no reference cycle is
//! made. Life cycle: [`Napi::new`] (pin-initialised) → [`Napi::add`] → [`Napi::enable`] →
//! schedules and polls → [`Napi::disable`]; dropping the structure deletes the context.

use super::super::bindings;
use super::device::Device;
use super::skb::SkBuff;
use core::{
    ffi::c_int,
    marker::PhantomData,
    sync::atomic::{AtomicU8, Ordering},
};
use kernel::{init::PinInit, prelude::*, types::Opaque};

/// A driver structure that embeds a [`Napi<Self>`] and handles its polls.
pub trait Poll: HasNapi + Sync + Sized {
    /// Processes up to `budget` packets and returns how many were processed. When the
    /// returned value is below `budget`, the driver calls [`Napi::complete_done`] (and
    /// re-arms its interrupts). `budget` may be 0 (netpoll): then only TX completions may be
    /// processed and 0 returned.
    fn poll(&self, napi: &Napi<Self>, budget: i32) -> i32;
}

/// Where the [`Napi`] sits inside `Self`.
///
/// # Safety
///
/// `napi_offset()` is the byte offset of a field of type `Napi<Self>` inside `Self`. Use
/// [`crate::impl_has_napi!`], which computes it with `offset_of!`.
pub unsafe trait HasNapi {
    /// Byte offset of the `Napi<Self>` field.
    fn napi_offset() -> usize;
}

/// Implements [`HasNapi`] for a structure with a `Napi<Self>` field:
/// `impl_has_napi!(Channel, napi);`, or for a generic one
/// `impl_has_napi!(impl{F: Family} Channel<F>, napi);`
#[macro_export]
macro_rules! impl_has_napi {
    (impl{$($g:tt)*} $type:ty, $field:ident) => {
        // SAFETY: the offset is computed by the compiler for a field whose type is checked
        // below to be `Napi<Self>`.
        unsafe impl<$($g)*> $crate::kernel_ext::net::napi::HasNapi for $type {
            fn napi_offset() -> usize {
                let _: fn(&$type) -> &$crate::kernel_ext::net::napi::Napi<$type> = |s| &s.$field;
                ::core::mem::offset_of!($type, $field)
            }
        }
    };
    ($type:ty, $field:ident) => {
        $crate::impl_has_napi!(impl{} $type, $field);
    };
}

const NEW: u8 = 0;
const ADDED: u8 = 1;
const ENABLED: u8 = 2;

/// A NAPI context embedded in `T`.
///
/// # Invariants
///
/// Once `state` is not `NEW`, `inner` was added with `netif_napi_add()` for a device that
/// outlives this value, with `poll_cb::<T>` as its poll function, and `inner` is at its final
/// (pinned) address inside a `T`.
#[pin_data(PinnedDrop)]
pub struct Napi<T: Poll> {
    #[pin]
    inner: Opaque<bindings::napi_struct>,
    state: AtomicU8,
    _t: PhantomData<T>,
}

// SAFETY: NAPI operations are designed to be called from any CPU; the state machine is
// atomic.
unsafe impl<T: Poll> Send for Napi<T> {}
// SAFETY: as for `Send`.
unsafe impl<T: Poll> Sync for Napi<T> {}

impl<T: Poll> Napi<T> {
    /// A NAPI context not yet added to any device.
    pub fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            inner <- Opaque::ffi_init(|p: *mut bindings::napi_struct| {
                // SAFETY: `p` points to the field's uninitialised memory; zero bytes are the
                // state `netif_napi_add()` expects to start from.
                unsafe { core::ptr::write_bytes(p, 0, 1) }
            }),
            state: AtomicU8::new(NEW),
            _t: PhantomData,
        })
    }

    fn as_ptr(&self) -> *mut bindings::napi_struct {
        self.inner.get()
    }

    pub(crate) fn as_raw(&self) -> *mut bindings::napi_struct {
        self.as_ptr()
    }

    /// Adds the context to `dev` (`netif_napi_add()`), disabled. The device must outlive the
    /// enclosing `T`: drop `T` (whose drop deletes the context) before unregistering it.
    ///
    /// A `Napi` only comes into being through [`Napi::new`]'s `PinInit`, and it is `!Unpin`,
    /// so it sits at its final address inside a pinned `T` for its whole life.
    pub fn add(&self, dev: &Device) {
        if !self.step(NEW, ADDED) {
            return;
        }
        let dev = dev as *const Device as *mut bindings::net_device;
        // SAFETY: `self` is pinned (see above), so `inner` keeps its address until drop,
        // which deletes the context; the device is valid; `poll_cb::<T>` matches the C
        // signature.
        unsafe { bindings::rsnic_helper_netif_napi_add(dev, self.as_ptr(), Some(poll_cb::<T>)) }
    }

    /// Moves the context's state from `from` to `to`; whether this call did.
    fn step(&self, from: u8, to: u8) -> bool {
        self.state
            .compare_exchange(from, to, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Enables polling (`napi_enable()`). Only after [`Napi::add`].
    pub fn enable(&self) {
        if self.step(ADDED, ENABLED) {
            // SAFETY: the context was added (state was ADDED) and is not enabled.
            unsafe { bindings::napi_enable(self.as_ptr()) }
        }
    }

    /// Disables polling, waiting for a running poll to finish (`napi_disable()`). Sleeps.
    pub fn disable(&self) {
        if self.step(ENABLED, ADDED) {
            // SAFETY: the context is added and enabled; process context is the caller's
            // duty (documented).
            unsafe { bindings::napi_disable(self.as_ptr()) }
        }
    }

    /// Schedules a poll (`napi_schedule()`); returns whether this call scheduled it. Does
    /// nothing unless enabled.
    pub fn schedule(&self) -> bool {
        if self.state.load(Ordering::Acquire) != ENABLED {
            return false;
        }
        // SAFETY: the context is added; scheduling is allowed from any context.
        unsafe { bindings::rsnic_helper_napi_schedule(self.as_ptr()) }
    }

    /// If a poll is scheduled or running, marks it missed so that it polls once more, and
    /// returns `true` (`napi_if_scheduled_mark_missed()`); also `true` while the context is
    /// disabled or being disabled (whoever enables it again polls), `false` when nothing is
    /// scheduled: the caller then gets a poll scheduled itself. Any context.
    pub fn if_scheduled_mark_missed(&self) -> bool {
        if self.state.load(Ordering::Acquire) != ENABLED {
            return true;
        }
        // SAFETY: the context is added (it was enabled, and a context is deleted only when
        // the structure is dropped); the function only reads and updates its state bits
        // with a compare-and-exchange, allowed from any context.
        unsafe { bindings::rsnic_helper_napi_if_scheduled_mark_missed(self.as_ptr()) }
    }

    /// Hands a received packet to GRO and the stack (`napi_gro_receive()`). Call it from the
    /// poll callback.
    pub fn gro_receive(&self, skb: SkBuff) {
        // SAFETY: called from this context's poll (documented); the skb reference is handed
        // over.
        unsafe { bindings::rsnic_helper_napi_gro_receive(self.as_ptr(), skb.into_raw()) }
    }

    /// Ends a poll that did less than its budget (`napi_complete_done()`). Returns false
    /// when the poll must not re-arm interrupts (busy polling keeps the context).
    pub fn complete_done(&self, work_done: i32) -> bool {
        // SAFETY: called from the poll callback of this added context.
        unsafe { bindings::napi_complete_done(self.as_ptr(), work_done) }
    }
}

#[pinned_drop]
impl<T: Poll> PinnedDrop for Napi<T> {
    fn drop(self: Pin<&mut Self>) {
        self.disable();
        if self.state.load(Ordering::Acquire) == ADDED {
            // SAFETY: added and disabled: deleting is allowed; it waits for an RCU grace
            // period, after which the kernel holds no pointer to `inner`.
            unsafe { bindings::rsnic_helper_netif_napi_del(self.as_ptr()) }
        }
    }
}

/// The C poll callback for contexts embedded in `T`.
///
/// # Safety
///
/// Called by the NAPI core with a `napi_struct` that was added by [`Napi::add`] for a
/// `Napi<T>` embedded in a live `T`.
unsafe extern "C" fn poll_cb<T: Poll>(napi: *mut bindings::napi_struct, budget: c_int) -> c_int {
    // SAFETY: `napi` is the `inner` field of a `Napi<T>` (the only place `poll_cb::<T>` is
    // registered from), so stepping back by that field's offset gives the `Napi<T>`; it is
    // alive and pinned while the context is added (type invariant).
    let napi_ref = unsafe {
        &*napi
            .cast::<u8>()
            .sub(core::mem::offset_of!(Napi<T>, inner))
            .cast::<Napi<T>>()
    };
    // SAFETY: that `Napi<T>` is the field at `T::napi_offset()` of a live, pinned `T`
    // (`HasNapi`'s contract), so stepping back by that offset gives the `T`.
    let owner = unsafe {
        &*(napi_ref as *const Napi<T>)
            .cast::<u8>()
            .sub(T::napi_offset())
            .cast::<T>()
    };
    owner.poll(napi_ref, budget)
}
