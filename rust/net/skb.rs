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

    /// The linear part (`skb->data`, `skb_headlen()` bytes).
    pub fn linear(&self) -> &[u8] {
        // SAFETY: the linear area holds `headlen` initialised bytes and is not written by
        // anyone else while we own the reference and hold `&self`.
        unsafe {
            let data = bindings::rsnic_helper_skb_data(self.0.as_ptr()).cast::<u8>();
            core::slice::from_raw_parts(data, self.headlen() as usize)
        }
    }

    /// Length of fragment `i` (0 if there is no such fragment).
    pub fn frag_len(&self, i: u32) -> u32 {
        // SAFETY: the skb is valid; the helper checks `i` against nr_frags.
        unsafe { bindings::rsnic_helper_skb_frag_len(self.0.as_ptr(), i) }
    }

    /// Segmentation offload: `(gso_size, gso_segs)` when the skb is GSO.
    pub fn gso(&self) -> Option<(u32, u32)> {
        let p = self.0.as_ptr();
        // SAFETY: the skb is valid (type invariant); these read its shared info.
        unsafe {
            if !bindings::rsnic_helper_skb_is_gso(p) {
                return None;
            }
            Some((
                bindings::rsnic_helper_skb_gso_size(p),
                bindings::rsnic_helper_skb_gso_segs(p),
            ))
        }
    }

    /// Whether the stack asks for checksum offload (`CHECKSUM_PARTIAL`), and whether on the
    /// inner headers of an encapsulated packet.
    pub fn csum_partial(&self) -> Option<bool> {
        let p = self.0.as_ptr();
        // SAFETY: the skb is valid (type invariant).
        unsafe {
            if !bindings::rsnic_helper_skb_csum_partial(p) {
                return None;
            }
            Some(bindings::rsnic_helper_skb_encapsulation(p))
        }
    }

    /// Prepares a TSO packet's headers for a NIC that computes per-segment lengths and
    /// checksums from a length-less pseudo-header sum (MANA): unshares the header, clears
    /// the IPv4 total length and header checksum (IPv6: the payload length) and seeds the
    /// TCP checksum with the pseudo-header sum of addresses and protocol. Fails with
    /// `ENOMEM` if the header cannot be unshared, `EPROTONOSUPPORT` if the packet is not
    /// TCP over IPv4 or IPv6 GSO.
    pub fn tso_pseudo_prepare(&mut self) -> kernel::error::Result {
        // SAFETY: the skb is valid (type invariant) and ours; the helper only writes the
        // packet's own (unshared) headers, which the stack set for a GSO packet.
        let r = unsafe { bindings::rsnic_helper_skb_tso_pseudo_prep(self.0.as_ptr()) };
        kernel::error::to_result(r)
    }

    /// VLAN tag to insert: `(tci, is_802_1ad)`.
    pub fn vlan_tag(&self) -> Option<(u16, bool)> {
        // SAFETY: the skb is valid (type invariant).
        let v = unsafe { bindings::rsnic_helper_skb_vlan_tag(self.0.as_ptr()) };
        match v {
            -1 => None,
            v if v >= 0 => Some((v as u16, false)),
            v => Some(((-2 - v) as u16, true)),
        }
    }

    /// The TX queue the stack picked (`skb_get_queue_mapping()`).
    pub fn queue_mapping(&self) -> u16 {
        // SAFETY: the skb is valid (type invariant).
        unsafe { bindings::rsnic_helper_skb_get_queue_mapping(self.0.as_ptr()) }
    }

    /// Sets the TX queue the skb goes out on (`skb_set_queue_mapping()`).
    pub fn set_queue_mapping(&mut self, queue: u16) {
        // SAFETY: the skb is valid and exclusively ours (type invariant).
        unsafe { bindings::rsnic_helper_skb_set_queue_mapping(self.0.as_ptr(), queue) }
    }

    /// Prepares a received skb for the stack: checksum status, RSS hash (`hash_type` 0 none,
    /// 1 L3, 2 L4), RX queue, and `protocol` from the Ethernet header (which it pulls).
    pub fn rx_finish(
        &mut self,
        dev: &super::device::Device,
        csum_ok: bool,
        hash: u32,
        hash_type: u8,
        queue: u16,
    ) {
        // SAFETY: the skb is valid and exclusively ours; `dev` is a valid device.
        unsafe {
            bindings::rsnic_helper_skb_rx_finish(
                self.0.as_ptr(),
                dev as *const super::device::Device as *mut bindings::net_device,
                csum_ok,
                hash,
                i32::from(hash_type),
                queue,
            )
        }
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
