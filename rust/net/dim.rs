// SPDX-License-Identifier: GPL-2.0

//! Dynamic interrupt moderation (`struct dim`, `net_dim()`).
//!
//! C header: [`include/linux/dim.h`](srctree/include/linux/dim.h).
//!
//! The kernel's DIM library watches the packet, byte and event rates a driver samples at the
//! end of its NAPI polls and moves through a table of moderation profiles (period and
//! packet count) towards fewer events at the same throughput. When it picks a new profile it
//! queues its work item (on the system workqueue), which here hands the profile to the
//! [`Dim`]'s context ([`DimApply::apply`]: a driver changes its CQs' moderation there) and
//! starts the next measurement. Periods restart on events
//! (`DIM_CQ_PERIOD_MODE_START_FROM_EQE`), DIM's profiles for that mode.
//!
//! A `Dim` is a pinned field of a driver structure. The work touches nothing but the `Dim`
//! and its context, and dropping a `Dim` cancels the work and waits for it first, so the
//! structure may go away whenever its owner lets it; [`Dim::stop`] does the same earlier
//! (before the context's queues are destroyed, say).

use super::super::bindings;
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::{init::PinInit, prelude::*, types::Opaque};

/// What a [`Dim`]'s new profile is applied to.
pub trait DimApply: Send + Sync {
    /// DIM picked a profile of `usecs` and `pkts`. Process context (the system workqueue);
    /// may sleep.
    fn apply(&self, usecs: u16, pkts: u16);
}

/// The profile DIM starts at for TX (`tx`) or RX, `(usecs, pkts)`: what CQs are set to
/// when DIM is turned on.
pub fn default_profile(tx: bool) -> (u16, u16) {
    let (mut usecs, mut pkts) = (0u16, 0u16);
    // SAFETY: the helper only writes the two values.
    unsafe { bindings::rsnic_helper_dim_default_profile(tx, &mut usecs, &mut pkts) };
    (usecs, pkts)
}

/// DIM of one direction (RX or TX) of one channel, with its context `C`; off until
/// [`Dim::start`].
///
/// # Invariants
///
/// `inner` was set up by `rsnic_helper_dim_init()` with `Self::work_cb` as its work
/// function, at its final (pinned) address inside a `Dim<C>`; its work is cancelled before
/// the `Dim` is dropped. `busy` is held by whoever calls `net_dim()` or restarts `inner`
/// or changes `on`, so that no two do at once; the work reads the profile and restarts the
/// measurement only while `net_dim()` leaves `inner` alone (state `DIM_APPLY_NEW_PROFILE`,
/// DIM's own protocol, as in mlx5e).
#[pin_data(PinnedDrop)]
pub struct Dim<C: DimApply> {
    #[pin]
    inner: Opaque<bindings::dim>,
    busy: AtomicBool,
    /// Samples are taken (written under `busy`).
    on: AtomicBool,
    tx: bool,
    ctx: C,
}

// SAFETY: the C structure is shared as DIM's protocol allows (type invariant); the context
// is `Send + Sync`.
unsafe impl<C: DimApply> Send for Dim<C> {}
// SAFETY: as for `Send`.
unsafe impl<C: DimApply> Sync for Dim<C> {}

impl<C: DimApply> Dim<C> {
    /// DIM of the TX (`tx`) or RX profiles, starting at the default profile, applying
    /// through `ctx`.
    pub fn new(tx: bool, ctx: C) -> impl PinInit<Self> {
        pin_init!(Self {
            inner <- Opaque::ffi_init(|p: *mut bindings::dim| {
                // SAFETY: `p` points to the field's memory at its final (pinned) address; the
                // helper zeroes it and sets up the work item with our work function.
                unsafe { bindings::rsnic_helper_dim_init(p, Some(Self::work_cb)) }
            }),
            busy: AtomicBool::new(false),
            on: AtomicBool::new(false),
            tx,
            ctx,
        })
    }

    /// The context the profiles are applied through.
    pub fn ctx(&self) -> &C {
        &self.ctx
    }

    /// Whether samples are taken (a hint for the caller, to skip gathering counters).
    #[inline]
    pub fn is_on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    fn lock(&self) {
        while self.busy.swap(true, Ordering::Acquire) {
            core::hint::spin_loop();
        }
    }

    fn unlock(&self) {
        self.busy.store(false, Ordering::Release);
    }

    /// One sample: the direction's cumulative packets and bytes and the channel's event
    /// count at the end of a NAPI poll. Skipped while DIM is off, or while another sample
    /// or a start or stop runs. Softirq (NAPI); allocates nothing.
    pub fn sample(&self, events: u16, packets: u64, bytes: u64) {
        if self.busy.swap(true, Ordering::Acquire) {
            return;
        }
        if self.on.load(Ordering::Relaxed) {
            // SAFETY: `inner` was set up by `new` (type invariant); `busy` keeps other
            // samples, starts and stops out, and the work only runs while `net_dim()`
            // leaves it alone.
            unsafe { bindings::rsnic_helper_net_dim(self.inner.get(), events, packets, bytes) };
        }
        self.unlock();
    }

    /// Turns DIM on from the default profile ([`default_profile`]) and a new
    /// measurement. The caller sets its CQs to the default profile. Does not sleep.
    pub fn start(&self) {
        self.lock();
        // SAFETY: `inner` was set up by `new` (type invariant); `busy` is held, and no
        // work is queued (DIM was off: `stop` cancelled it, or it never ran).
        unsafe { bindings::rsnic_helper_dim_restart(self.inner.get()) };
        self.on.store(true, Ordering::Relaxed);
        self.unlock();
    }

    /// Turns DIM off: no sample is taken from now on, and a profile change queued or
    /// running is cancelled or waited for, so the context is not used any more when this
    /// returns (until [`Dim::start`]). Sleeps.
    pub fn stop(&self) {
        self.lock();
        self.on.store(false, Ordering::Relaxed);
        self.unlock();
        self.cancel();
    }

    fn cancel(&self) {
        // SAFETY: `inner` was set up by `new` (type invariant).
        unsafe { bindings::rsnic_helper_dim_cancel(self.inner.get()) };
    }

    /// # Safety
    ///
    /// Called by the workqueue for the work item of a `dim` set up by [`Dim::new`].
    unsafe extern "C" fn work_cb(w: *mut bindings::work_struct) {
        // SAFETY: `w` is the work item of a `struct dim`.
        let dim = unsafe { bindings::rsnic_helper_dim_of_work(w) };
        let this = dim
            .cast::<u8>()
            .wrapping_sub(core::mem::offset_of!(Self, inner))
            .cast::<Self>();
        // SAFETY: that `dim` is the `inner` field of a `Dim<C>` (type invariant; `Opaque`
        // has its contents' address), which is not dropped while its work runs (dropping
        // cancels the work and waits for it).
        let this = unsafe { &*this };
        let (mut usecs, mut pkts) = (0u16, 0u16);
        // SAFETY: `dim` is valid; in state DIM_APPLY_NEW_PROFILE `net_dim()` does not touch
        // it, so its profile index is stable.
        unsafe { bindings::rsnic_helper_dim_profile(dim, this.tx, &mut usecs, &mut pkts) };
        this.ctx.apply(usecs, pkts);
        // SAFETY: as above; from here on `net_dim()` measures again.
        unsafe { bindings::rsnic_helper_dim_measure_again(dim) };
    }
}

#[pinned_drop]
impl<C: DimApply> PinnedDrop for Dim<C> {
    fn drop(self: Pin<&mut Self>) {
        // The work may still be queued or running: it uses `self`.
        self.cancel();
    }
}
