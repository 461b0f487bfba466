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

/// `ETH_P_8021AD`: the 802.1ad (QinQ service) VLAN protocol.
const ETH_P_8021AD: u16 = 0x88a8;

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

/// The checksum status a received packet goes up with (`skb->ip_summed`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxCsum {
    /// `CHECKSUM_NONE`: the stack verifies the checksums.
    None,
    /// `CHECKSUM_UNNECESSARY`: the device verified them.
    Unnecessary,
    /// `CHECKSUM_COMPLETE` with the ones' complement sum (RFC 1071, of big-endian 16-bit
    /// words, not inverted) of the packet after its Ethernet header.
    Complete(u16),
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

    // The accessors below are the transmit path's, called for every packet: they read the
    // fields through the generated bindings (inlined), not through out-of-line C helpers.
    // The layout is the one the module was built against (bindgen runs per kernel build).

    /// The skb's shared info (`skb_shinfo()`). A pointer, not a reference: clones of the
    /// skb share it and change its `dataref` concurrently; read single fields through it.
    #[inline(always)]
    fn shinfo(&self) -> *const bindings::skb_shared_info {
        let p = self.0.as_ptr();
        // SAFETY: the skb is valid (type invariant). On 64-bit kernels `end` is an offset
        // from `head` (NET_SKBUFF_DATA_USES_OFFSET; `sk_buff_data_t` is an integer here,
        // which the addition would not compile without) and `head + end`, inside the skb's
        // data allocation, is its `struct skb_shared_info`.
        unsafe {
            let head = core::ptr::addr_of!((*p).head).read();
            let end = core::ptr::addr_of!((*p).end).read();
            head.add(end as usize)
                .cast::<bindings::skb_shared_info>()
                .cast_const()
        }
    }

    /// The skb's header fields (the `headers` struct group of `struct sk_buff`), read-only.
    #[inline(always)]
    fn headers(&self) -> &bindings::sk_buff__bindgen_ty_4__bindgen_ty_2 {
        let p = self.0.as_ptr();
        // SAFETY: the skb is valid (type invariant); `headers` is the named view of the
        // struct group that C code also reads as plain fields, so it is initialised. The
        // owner of the reference is the only writer of these fields while it holds it.
        unsafe {
            (*core::ptr::addr_of!((*p).__bindgen_anon_4))
                .headers
                .as_ref()
        }
    }

    /// Number of page fragments (`skb_shinfo(skb)->nr_frags`).
    #[inline]
    pub fn nr_frags(&self) -> u32 {
        let sh = self.shinfo();
        // SAFETY: `sh` is the valid shared info of our skb; `nr_frags` is set by whoever
        // built the skb and not changed while we own it (clones do not touch it).
        u32::from(unsafe { core::ptr::addr_of!((*sh).nr_frags).read() })
    }

    /// The linear part (`skb->data`, `skb_headlen()` bytes).
    #[inline]
    pub fn linear(&self) -> &[u8] {
        let p = self.0.as_ptr();
        // SAFETY: the skb is valid (type invariant); its linear area starts at `data` and
        // holds `headlen` initialised bytes, not written by anyone else while we own the
        // reference and hold `&self`.
        unsafe {
            let data = core::ptr::addr_of!((*p).data).read().cast_const();
            core::slice::from_raw_parts(data, self.headlen() as usize)
        }
    }

    /// Length of fragment `i` (0 if there is no such fragment).
    #[inline]
    pub fn frag_len(&self, i: u32) -> u32 {
        if i >= self.nr_frags() || i as usize >= bindings::MAX_SKB_FRAGS as usize {
            return 0;
        }
        let sh = self.shinfo();
        // SAFETY: `sh` is the valid shared info of our skb and fragment `i` is one of its
        // `nr_frags` (checked above, within the array), set up by whoever built the skb and
        // not changed while we own it.
        unsafe {
            let frags = core::ptr::addr_of!((*sh).frags).cast::<bindings::skb_frag_t>();
            core::ptr::addr_of!((*frags.add(i as usize)).len).read()
        }
    }

    /// Segmentation offload: `(gso_size, gso_segs)` when the skb is GSO (`skb_is_gso()`).
    #[inline]
    pub fn gso(&self) -> Option<(u32, u32)> {
        let sh = self.shinfo();
        // SAFETY: `sh` is the valid shared info of our skb; the GSO fields are the stack's,
        // not changed while we own the skb.
        let (size, segs) = unsafe {
            (
                core::ptr::addr_of!((*sh).gso_size).read(),
                core::ptr::addr_of!((*sh).gso_segs).read(),
            )
        };
        if size == 0 {
            return None;
        }
        Some((u32::from(size), u32::from(segs)))
    }

    /// Whether the stack asks for checksum offload (`CHECKSUM_PARTIAL`), and whether on the
    /// inner headers of an encapsulated packet.
    #[inline]
    pub fn csum_partial(&self) -> Option<bool> {
        let h = self.headers();
        if u32::from(h.ip_summed()) != bindings::CHECKSUM_PARTIAL {
            return None;
        }
        Some(h.encapsulation() != 0)
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

    /// VLAN tag to insert: `(tci, is_802_1ad)` (`skb_vlan_tag_present()`,
    /// `skb_vlan_tag_get()`, `vlan_proto`).
    #[inline]
    pub fn vlan_tag(&self) -> Option<(u16, bool)> {
        let v = &self.headers().__bindgen_anon_2;
        // SAFETY: both views of the union are plain integers over the same initialised
        // bytes (`vlan_all` is the pair `vlan_proto`, `vlan_tci`).
        let (all, proto, tci) = unsafe {
            (
                v.vlan_all,
                v.__bindgen_anon_1.vlan_proto,
                v.__bindgen_anon_1.vlan_tci,
            )
        };
        if all == 0 {
            return None;
        }
        // `vlan_proto` is big-endian (`__be16`).
        Some((tci, u16::from_be(proto) == ETH_P_8021AD))
    }

    /// The TX queue the stack picked (`skb_get_queue_mapping()`).
    #[inline]
    pub fn queue_mapping(&self) -> u16 {
        let p = self.0.as_ptr();
        // SAFETY: the skb is valid (type invariant); `queue_mapping` is a plain field.
        unsafe { core::ptr::addr_of!((*p).queue_mapping).read() }
    }

    /// Sets the TX queue the skb goes out on (`skb_set_queue_mapping()`).
    pub fn set_queue_mapping(&mut self, queue: u16) {
        // SAFETY: the skb is valid and exclusively ours (type invariant).
        unsafe { bindings::rsnic_helper_skb_set_queue_mapping(self.0.as_ptr(), queue) }
    }

    /// Prepares a received skb for the stack: checksum status, RSS hash (`hash_type` 0 none,
    /// 1 L3, 2 L4), RX queue, and `protocol` from the Ethernet header (which it pulls).
    /// Returns whether the frame went to a group address (`PACKET_MULTICAST` or
    /// `PACKET_BROADCAST`, as `mlx5e_skb_is_multicast`).
    #[must_use]
    #[inline]
    pub fn rx_finish(
        &mut self,
        dev: &super::device::Device,
        csum: RxCsum,
        hash: u32,
        hash_type: u8,
        queue: u16,
    ) -> bool {
        let (ip_summed, wsum) = match csum {
            RxCsum::None => (bindings::CHECKSUM_NONE, 0),
            RxCsum::Unnecessary => (bindings::CHECKSUM_UNNECESSARY, 0),
            // A `__wsum` holds the sum as the words lie in memory: the big-endian sum's
            // bytes in memory order (what `csum_unfold` of a `__sum16` read from the wire
            // gives).
            RxCsum::Complete(sum) => (bindings::CHECKSUM_COMPLETE, u32::from(sum.to_be())),
        };
        // SAFETY: the skb is valid and exclusively ours; `dev` is a valid device. Its data
        // holds at least the Ethernet header `eth_type_trans` pulls (every received frame
        // the drivers build an skb of has one). `csum` is any value: the stack only
        // compares it with the sum it computes.
        unsafe {
            bindings::rsnic_helper_skb_rx_finish(
                self.0.as_ptr(),
                dev as *const super::device::Device as *mut bindings::net_device,
                ip_summed as u8,
                wsum,
                hash,
                i32::from(hash_type),
                queue,
            )
        }
    }

    /// The ones' complement sum of bytes `off..off + len` of the packet, linear part and
    /// fragments, as big-endian 16-bit words counted from `off` (`skb_checksum`, not
    /// inverted). `None` if they do not lie inside the packet.
    pub fn checksum(&self, off: u32, len: u32) -> Option<u16> {
        if off.checked_add(len)? > self.len() {
            return None;
        }
        // SAFETY: the skb is valid and we hold `&self`, so neither its data nor its
        // fragments change meanwhile; `off + len` lies within `skb->len` (checked), which
        // is what `skb_checksum` reads.
        let w = unsafe { bindings::rsnic_helper_skb_checksum(self.0.as_ptr(), off, len) };
        let w = (w & 0xffff) + (w >> 16);
        let w = (w & 0xffff) + (w >> 16);
        // The `__wsum` is the sum of the words as they lie in memory.
        Some(u16::from_be(w as u16))
    }

    /// Gives the skb the 802.1Q tag `tci` that the device stripped from the received frame
    /// (`__vlan_hwaccel_put_tag`), as a driver whose device strips tags does.
    pub fn put_vlan_tag(&mut self, tci: u16) {
        // SAFETY: the skb is valid and exclusively ours (type invariant).
        unsafe { bindings::rsnic_helper_skb_vlan_put_tag(self.0.as_ptr(), tci) }
    }

    /// Total length in bytes (`skb->len`).
    #[inline]
    pub fn len(&self) -> u32 {
        // SAFETY: by the type invariant the skb is valid; `len` is not changed by others while
        // we own the skb.
        unsafe { (*self.0.as_ptr()).len }
    }

    /// Whether the skb carries no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Length of the linear part (`skb_headlen()`: `len - data_len`).
    #[inline]
    pub fn headlen(&self) -> u32 {
        let p = self.0.as_ptr();
        // SAFETY: by the type invariant the skb is valid; plain fields.
        unsafe {
            core::ptr::addr_of!((*p).len)
                .read()
                .wrapping_sub(core::ptr::addr_of!((*p).data_len).read())
        }
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
