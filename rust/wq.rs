// SPDX-License-Identifier: GPL-2.0

//! A workqueue owned by the driver (`alloc_workqueue()` / `destroy_workqueue()`).
//!
//! The 6.12 `kernel::workqueue` can queue work on the system queues but cannot wait for it;
//! a module must not unload while its work may still run. An [`OwnedQueue`] can be flushed,
//! and is destroyed (after draining) on drop.

use super::bindings;
use core::ptr::NonNull;
use kernel::{prelude::*, str::CStr, workqueue::Queue};

/// An unbound, ordered-by-nothing workqueue with one active work item at a time.
///
/// # Invariants
///
/// `wq` was returned by `alloc_workqueue()` and is destroyed only in `drop`.
pub struct OwnedQueue {
    wq: NonNull<bindings::workqueue_struct>,
}

// SAFETY: workqueues may be used from any thread.
unsafe impl Send for OwnedQueue {}
// SAFETY: as for `Send`.
unsafe impl Sync for OwnedQueue {}

impl OwnedQueue {
    /// Allocates a queue named `<name><id>`.
    pub fn new(name: &'static CStr, id: i32) -> Result<Self> {
        // SAFETY: `name` is a valid C string; the helper formats it into the queue's name.
        let wq = unsafe { bindings::rsnic_helper_alloc_workqueue(name.as_char_ptr(), id) };
        Ok(Self {
            wq: NonNull::new(wq).ok_or(ENOMEM)?,
        })
    }

    /// The queue, for [`Queue::enqueue`].
    pub fn queue(&self) -> &Queue {
        // SAFETY: the queue lives until `drop` (type invariant), longer than the reference.
        unsafe { Queue::from_raw(self.wq.as_ptr().cast()) }
    }

    /// Waits until every work item queued so far has finished. Sleeps.
    pub fn flush(&self) {
        // SAFETY: the queue is valid (type invariant).
        unsafe { bindings::rsnic_helper_flush_workqueue(self.wq.as_ptr()) }
    }
}

impl Drop for OwnedQueue {
    fn drop(&mut self) {
        // SAFETY: valid (type invariant); `destroy_workqueue()` drains the queue first.
        unsafe { bindings::rsnic_helper_destroy_workqueue(self.wq.as_ptr()) }
    }
}
