// SPDX-License-Identifier: GPL-2.0

//! Socket buffers (`struct sk_buff`).
//!
//! C header: [`include/linux/skbuff.h`](srctree/include/linux/skbuff.h).
//!
//! An [`SkBuff`] owns one reference to an skb. It is never freed implicitly: the owner ends it
//! with [`SkBuff::consume`] / [`SkBuff::napi_consume`] (the packet did its job) or
//! [`SkBuff::drop_reason`] / [`SkBuff::drop_any`] (it is lost, with a reason that drop
//! monitors see). Letting an `SkBuff` go out of scope is a driver bug: `Drop` leaks the skb
//! and warns once, which the VM tests treat as a failure.

use super::super::bindings;
use core::ptr::NonNull;

/// Why a packet was dropped (`enum skb_drop_reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// `SKB_DROP_REASON_NOT_SPECIFIED`.
    NotSpecified,
    /// `SKB_DROP_REASON_DEV_READY`: the device's data structures for the packet are not up.
    DevReady,
    /// `SKB_DROP_REASON_FULL_RING`: a ring was full.
    FullRing,
    /// `SKB_DROP_REASON_NOMEM`: no memory for the packet (for example a DMA mapping failed).
    NoMem,
    /// `SKB_DROP_REASON_PKT_TOO_BIG`: the packet exceeds what the device can carry.
    PktTooBig,
}

impl DropReason {
    fn to_c(self) -> bindings::skb_drop_reason {
        match self {
            Self::NotSpecified => bindings::skb_drop_reason_SKB_DROP_REASON_NOT_SPECIFIED,
            Self::DevReady => bindings::skb_drop_reason_SKB_DROP_REASON_DEV_READY,
            Self::FullRing => bindings::skb_drop_reason_SKB_DROP_REASON_FULL_RING,
            Self::NoMem => bindings::skb_drop_reason_SKB_DROP_REASON_NOMEM,
            Self::PktTooBig => bindings::skb_drop_reason_SKB_DROP_REASON_PKT_TOO_BIG,
        }
    }
}

/// One owned reference to a `struct sk_buff`.
///
/// # Invariants
///
/// `self.0` points to a valid `sk_buff` to which this value holds one reference.
pub struct SkBuff(NonNull<bindings::sk_buff>);

// SAFETY: an skb reference may be handed between CPUs (the stack does so all the time); all
// methods here are callable from any CPU.
unsafe impl Send for SkBuff {}

impl SkBuff {
    /// Takes ownership of the reference that `ptr` carries.
    ///
    /// # Safety
    ///
    /// `ptr` points to a valid skb and the caller transfers one reference to it.
    pub(crate) unsafe fn from_raw(ptr: *mut bindings::sk_buff) -> Option<Self> {
        NonNull::new(ptr).map(Self)
    }

    /// Gives the reference back to C (for example a queue that re-queues the skb).
    pub(crate) fn into_raw(self) -> *mut bindings::sk_buff {
        let ptr = self.0.as_ptr();
        core::mem::forget(self);
        ptr
    }

    /// The raw pointer, for the C APIs of this layer.
    pub(crate) fn as_raw(&self) -> *mut bindings::sk_buff {
        self.0.as_ptr()
    }

    /// Number of page fragments (`skb_shinfo(skb)->nr_frags`).
    pub fn nr_frags(&self) -> u32 {
        // SAFETY: by the type invariant the skb is valid.
        unsafe { bindings::rsnic_helper_skb_nr_frags(self.0.as_ptr()) }
    }

    /// Total length in bytes (`skb->len`).
    pub fn len(&self) -> u32 {
        // SAFETY: by the type invariant the skb is valid; `len` is not changed by others while
        // we own the skb.
        unsafe { (*self.0.as_ptr()).len }
    }

    /// Whether the skb carries no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Length of the linear part (`skb_headlen()`).
    pub fn headlen(&self) -> u32 {
        // SAFETY: by the type invariant the skb is valid.
        unsafe { bindings::rsnic_helper_skb_headlen(self.0.as_ptr()) }
    }

    /// Frees the skb after successful use (`consume_skb()`): process or softirq context.
    pub fn consume(self) {
        // SAFETY: we own one reference (type invariant) and give it up here.
        unsafe { bindings::rsnic_helper_consume_skb(self.into_raw()) }
    }

    /// Frees the skb after successful use from a NAPI poll (`napi_consume_skb()`). `budget`
    /// is the poll's budget; 0 means "not from NAPI" (for example netpoll).
    pub fn napi_consume(self, budget: i32) {
        // SAFETY: we own one reference (type invariant) and give it up here.
        unsafe { bindings::napi_consume_skb(self.into_raw(), budget) }
    }

    /// Drops a lost packet with `reason` (`kfree_skb_reason()`): process or softirq context.
    pub fn drop_reason(self, reason: DropReason) {
        // SAFETY: we own one reference (type invariant) and give it up here.
        unsafe { bindings::rsnic_helper_kfree_skb_reason(self.into_raw(), reason.to_c()) }
    }

    /// Drops a lost packet with `reason` from any context, hard IRQ included
    /// (`dev_kfree_skb_any_reason()`).
    pub fn drop_any(self, reason: DropReason) {
        // SAFETY: we own one reference (type invariant) and give it up here.
        unsafe { bindings::dev_kfree_skb_any_reason(self.into_raw(), reason.to_c()) }
    }
}

impl Drop for SkBuff {
    fn drop(&mut self) {
        // Never free implicitly: the right call depends on the context, which only the owner
        // knows. Leak the skb and say so loudly; it is a driver bug.
        // SAFETY: the helper only emits a one-time warning.
        unsafe { bindings::rsnic_helper_warn_skb_leak() }
    }
}
