// SPDX-License-Identifier: GPL-2.0

//! XDP: BPF programs attached to a device's receive path, and frames redirected to it.
//!
//! C headers: [`include/net/xdp.h`](srctree/include/net/xdp.h),
//! [`include/linux/filter.h`](srctree/include/linux/filter.h).
//!
//! * [`BpfProg`] — one reference to an XDP program (`bpf_prog_inc`/`bpf_prog_put`).
//! * [`XdpRxq`] — an RX queue's `xdp_rxq_info`, registered with its page pool as memory model
//!   (`MEM_TYPE_PAGE_POOL`), so frames that leave the driver (redirect, `XDP_TX` completion
//!   elsewhere) find their way back to the pool.
//! * [`XdpRxq::run`] — runs a program on a received page and says what became of the page
//!   ([`Verdict`]); `XDP_REDIRECT` is carried out inside, so the page's ownership is settled
//!   when it returns. [`flush`] ends a NAPI poll that redirected (`xdp_do_flush()`).
//! * [`XdpFrame`] — a frame another device redirected to us (`ndo_xdp_xmit`), owned until
//!   returned explicitly ([`XdpFrame::return_napi`], [`XdpFrame::return_any`]) or turned
//!   into an skb.
//!
//! As with [`SkBuff`] and [`RxPage`], pages and frames are never freed implicitly.

use super::super::bindings;
use super::device::Device;
use super::page_pool::{PagePool, RxPage};
use super::skb::SkBuff;
use super::xsk::XskPool;
use core::ptr::NonNull;
use kernel::{error::to_result, prelude::*, types::Opaque};

/// `XDP_PACKET_HEADROOM`: the headroom an XDP program may grow the head into.
pub const XDP_PACKET_HEADROOM: u32 = 256;
/// Bytes the skb's `skb_shared_info` takes at the end of a page built into an skb
/// (`SKB_DATA_ALIGN(sizeof(struct skb_shared_info))` on x86_64).
pub const SKB_SHINFO_SIZE: u32 = 320;

/// `xdp_features` bits (`enum netdev_xdp_act`).
pub mod features {
    use super::bindings;
    /// XDP_DROP, XDP_PASS, XDP_TX, XDP_ABORTED.
    pub const BASIC: u32 = bindings::netdev_xdp_act_NETDEV_XDP_ACT_BASIC;
    /// XDP_REDIRECT.
    pub const REDIRECT: u32 = bindings::netdev_xdp_act_NETDEV_XDP_ACT_REDIRECT;
    /// `ndo_xdp_xmit`: frames redirected from other devices.
    pub const NDO_XMIT: u32 = bindings::netdev_xdp_act_NETDEV_XDP_ACT_NDO_XMIT;
    /// AF_XDP zero-copy.
    pub const XSK_ZEROCOPY: u32 = bindings::netdev_xdp_act_NETDEV_XDP_ACT_XSK_ZEROCOPY;
}

/// One reference to a BPF program; put on drop (which may happen in any context a driver
/// holds programs in: process context or with bottom halves disabled).
///
/// # Invariants
///
/// `0` points to a live `bpf_prog` on which this value holds one reference.
pub struct BpfProg(NonNull<bindings::bpf_prog>);

// SAFETY: a program reference may be used and put from any CPU.
unsafe impl Send for BpfProg {}
// SAFETY: running a program through a shared reference is what the kernel does on every
// CPU at once.
unsafe impl Sync for BpfProg {}

impl BpfProg {
    /// Takes a new reference to `prog`.
    ///
    /// # Safety
    ///
    /// `prog` points to a live program whose reference count the caller keeps above zero
    /// for the duration of the call.
    pub(crate) unsafe fn inc(prog: NonNull<bindings::bpf_prog>) -> Self {
        // SAFETY: the program is live (caller's promise).
        unsafe { bindings::rsnic_helper_bpf_prog_inc(prog.as_ptr()) };
        Self(prog)
    }

    /// Another reference to the same program.
    pub fn clone_ref(&self) -> Self {
        // SAFETY: we hold a reference (type invariant), so the program is live.
        unsafe { Self::inc(self.0) }
    }

    pub(crate) fn as_raw(&self) -> *mut bindings::bpf_prog {
        self.0.as_ptr()
    }

    /// Whether `self` and `other` are the same program.
    pub fn same(&self, other: &BpfProg) -> bool {
        self.0 == other.0
    }
}

impl Drop for BpfProg {
    fn drop(&mut self) {
        // SAFETY: we hold one reference (type invariant) and give it up here; the kernel
        // defers the freeing to a work item when needed.
        unsafe { bindings::rsnic_helper_bpf_prog_put(self.0.as_ptr()) }
    }
}

/// What became of a page an XDP program ran on.
pub enum Verdict {
    /// `XDP_PASS`: hand the frame at `off`, `len` bytes, to the stack.
    Pass {
        /// The page.
        page: RxPage,
        /// Offset of the (possibly moved) head in the page.
        off: u32,
        /// Length after head and tail adjustments.
        len: u32,
    },
    /// `XDP_TX`: send the frame at `off` back out of the device it came in on.
    Tx {
        /// The page.
        page: RxPage,
        /// Offset of the frame in the page.
        off: u32,
        /// Its length.
        len: u32,
    },
    /// `XDP_DROP`.
    Drop(RxPage),
    /// `XDP_ABORTED`, an unknown action, or a redirect that failed: traced
    /// (`xdp:xdp_exception`); the page is to be recycled.
    Aborted(RxPage),
    /// `XDP_REDIRECT` done: the page belongs to the target now. Call [`flush`] before the
    /// NAPI poll ends.
    Redirected,
}

/// A registered `xdp_rxq_info`, boxed at a stable address and unregistered on drop: what
/// [`XdpRxq`] and the XSK RQ's [`super::xsk::XskRxq`] hold, each registered with its own
/// memory model.
///
/// # Invariants
///
/// The info was registered in [`RxqInfo::new`] and stays at this address (boxed) until
/// unregistered in `drop`.
pub(crate) struct RxqInfo(Pin<KBox<Opaque<bindings::xdp_rxq_info>>>);

// SAFETY: the info is written once at registration; afterwards it is only read, from any
// CPU, by the XDP core.
unsafe impl Send for RxqInfo {}
// SAFETY: as for `Send`.
unsafe impl Sync for RxqInfo {}

impl RxqInfo {
    /// Registers RX queue `queue` of `dev` with memory model `model`.
    pub(crate) fn new(dev: &Device, queue: u32, model: MemModel<'_>) -> Result<Self> {
        // SAFETY: `xdp_rxq_info` is a C struct of integers and pointers, for which all-zero
        // bytes are a valid (unregistered) value.
        let zeroed: bindings::xdp_rxq_info = unsafe { core::mem::zeroed() };
        let info = KBox::pin(Opaque::new(zeroed), GFP_KERNEL)?;
        let dev = dev as *const Device as *mut bindings::net_device;
        // Each helper registers `info` with its memory model or, on error, leaves nothing
        // registered. An XSK pool keeps a pointer to `info`, which outlives the pool's use by
        // this driver (the XSK RQ drops it when it stops).
        let ret = match model {
            // SAFETY: `info` is zeroed, boxed (stable address) and ours; `dev` and the page
            // pool are valid for the call.
            MemModel::PagePool(pool) => unsafe {
                bindings::rsnic_helper_xdp_rxq_reg(info.get(), dev, queue, pool.as_raw())
            },
            // SAFETY: as above; the XSK pool is registered (an `XskPool`'s type invariant).
            MemModel::Xsk(pool) => unsafe {
                bindings::rsnic_helper_xsk_rxq_reg(info.get(), dev, queue, pool.as_raw())
            },
        };
        to_result(ret)?;
        Ok(Self(info))
    }

    /// The registered info.
    #[inline]
    pub(crate) fn get(&self) -> *mut bindings::xdp_rxq_info {
        self.0.get()
    }
}

/// The memory model of an [`RxqInfo`]: where its queue's buffers come from.
pub(crate) enum MemModel<'a> {
    /// `MEM_TYPE_PAGE_POOL`: pages of this pool.
    PagePool(&'a PagePool),
    /// `MEM_TYPE_XSK_BUFF_POOL`: buffers of this XSK pool, which is given the info as its
    /// RX queue info.
    Xsk(&'a XskPool),
}

impl Drop for RxqInfo {
    fn drop(&mut self) {
        // SAFETY: registered in `new` (type invariant); unregistering also drops the
        // memory model's hold on its pool.
        unsafe { bindings::rsnic_helper_xdp_rxq_unreg(self.0.get()) }
    }
}

/// An RX queue's `xdp_rxq_info`, registered with its page pool as memory model.
/// Unregistered on drop.
///
/// # Invariants
///
/// `info` was registered with a page-pool memory model.
pub struct XdpRxq {
    info: RxqInfo,
}

impl XdpRxq {
    /// Registers RX queue `queue` of `dev`, whose buffers come from `pool`.
    pub fn new(dev: &Device, queue: u32, pool: &PagePool) -> Result<Self> {
        let info = RxqInfo::new(dev, queue, MemModel::PagePool(pool))?;
        Ok(Self { info })
    }

    /// Runs `prog` on the frame of `len` bytes the device wrote into `page` at the pool's
    /// offset (which must be at least [`XDP_PACKET_HEADROOM`] for programs to grow the
    /// head). Call from the NAPI poll of the queue this info was registered for; `pool` is
    /// the queue's pool.
    #[inline]
    pub fn run(&self, prog: &BpfProg, pool: &PagePool, page: RxPage, len: u32) -> Verdict {
        let headroom = pool.offset();
        if headroom.checked_add(len).map_or(true, |end| {
            end > pool.truesize().saturating_sub(SKB_SHINFO_SIZE)
        }) {
            return Verdict::Aborted(page);
        }
        let (mut off, mut out_len) = (0u32, 0u32);
        // SAFETY: `prog` holds a reference (live program); `info` is registered (type
        // invariant); the page came from `pool` (caller's promise, one pool per queue) and
        // the frame lies inside it (checked above, leaving the shared-info room the XDP
        // core assumes); the out-pointers are valid.
        let act = unsafe {
            bindings::rsnic_helper_xdp_run(
                prog.0.as_ptr(),
                self.info.get(),
                pool.as_raw(),
                page.as_raw(),
                headroom,
                len,
                pool.truesize(),
                &mut off,
                &mut out_len,
            )
        };
        if act == bindings::xdp_action_XDP_REDIRECT {
            // The target owns the page now.
            let _ = page.into_raw();
            return Verdict::Redirected;
        }
        // Otherwise the page is still ours: the program only moved data inside it.
        match act {
            bindings::xdp_action_XDP_PASS => Verdict::Pass {
                page,
                off,
                len: out_len,
            },
            bindings::xdp_action_XDP_TX => Verdict::Tx {
                page,
                off,
                len: out_len,
            },
            bindings::xdp_action_XDP_DROP => Verdict::Drop(page),
            _ => Verdict::Aborted(page),
        }
    }
}

/// Flushes the redirects of a NAPI poll (`xdp_do_flush()`): call once at the end of a poll
/// in which a frame was redirected.
pub fn flush() {
    // SAFETY: called from a NAPI poll (softirq), as the function requires.
    unsafe { bindings::xdp_do_flush() }
}

/// A frame redirected to this device (`struct xdp_frame`), owned until returned or
/// transmitted.
///
/// # Invariants
///
/// `0` points to a valid frame whose ownership this value holds.
pub struct XdpFrame(NonNull<bindings::xdp_frame>);

// SAFETY: a frame may be completed on another CPU than the one that queued it.
unsafe impl Send for XdpFrame {}

impl XdpFrame {
    /// Takes ownership of a frame.
    ///
    /// # Safety
    ///
    /// `f` is a valid frame nobody else owns.
    pub(crate) unsafe fn from_raw(f: NonNull<bindings::xdp_frame>) -> Self {
        Self(f)
    }

    /// The frame's bytes, from the Ethernet header on.
    pub fn data(&self) -> &[u8] {
        // SAFETY: the frame is valid (type invariant): `data` points to `len` bytes in its
        // buffer, which nobody else writes while we own the frame.
        unsafe {
            let f = self.0.as_ptr();
            core::slice::from_raw_parts((*f).data.cast::<u8>(), (*f).len as usize)
        }
    }

    /// The frame's length in bytes.
    pub fn len(&self) -> u32 {
        // SAFETY: the frame is valid (type invariant).
        u32::from(unsafe { (*self.0.as_ptr()).len })
    }

    /// Whether the frame is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Returns the frame to its memory model from a NAPI poll (`xdp_return_frame_rx_napi`).
    pub fn return_napi(self) {
        let f = self.into_raw();
        // SAFETY: we owned the frame and give it up; called from NAPI (caller's contract).
        unsafe { bindings::xdp_return_frame_rx_napi(f) }
    }

    /// Returns the frame to its memory model from any context (`xdp_return_frame`).
    pub fn return_any(self) {
        let f = self.into_raw();
        // SAFETY: we owned the frame and give it up.
        unsafe { bindings::xdp_return_frame(f) }
    }

    /// An skb carrying the frame from its Ethernet header on, for TX queue `queue` of `dev`
    /// (as MANA transmits redirected frames). On failure the frame comes back.
    pub fn into_tx_skb(self, dev: &Device, queue: u16) -> Result<SkBuff, XdpFrame> {
        // SAFETY: the frame is valid and ours; on success the skb owns its buffer, on
        // failure the helper left the frame untouched.
        let skb = unsafe {
            bindings::rsnic_helper_xdp_frame_to_skb(
                self.0.as_ptr(),
                dev as *const Device as *mut bindings::net_device,
                queue,
            )
        };
        // SAFETY: a non-null result is a new skb whose one reference we own.
        match unsafe { SkBuff::from_raw(skb) } {
            Some(skb) => {
                let _ = self.into_raw();
                Ok(skb)
            }
            None => Err(self),
        }
    }

    fn into_raw(self) -> *mut bindings::xdp_frame {
        let p = self.0.as_ptr();
        core::mem::forget(self);
        p
    }
}

impl Drop for XdpFrame {
    fn drop(&mut self) {
        // Frames are returned explicitly; leak and warn.
        // SAFETY: the helper only emits a one-time warning.
        unsafe { bindings::rsnic_helper_warn_skb_leak() }
    }
}

/// The frames of one `ndo_xdp_xmit` call, taken in order. The driver takes frames with
/// [`XdpFrames::next`] and either keeps each (transmits it; it must return it on
/// completion) or gives the first one it cannot send back with [`XdpFrames::give_back`],
/// which ends the batch: the core frees the frames the driver did not keep.
pub struct XdpFrames<'a> {
    frames: &'a [*mut bindings::xdp_frame],
    next: usize,
    kept: usize,
    done: bool,
}

impl<'a> XdpFrames<'a> {
    /// # Safety
    ///
    /// Every pointer in `frames` is a valid frame handed to `ndo_xdp_xmit`, owned by the
    /// caller of that callback until the driver reports it as sent.
    pub(crate) unsafe fn new(frames: &'a [*mut bindings::xdp_frame]) -> Self {
        Self {
            frames,
            next: 0,
            kept: 0,
            done: false,
        }
    }

    /// The next frame; it is the driver's from now on unless given back.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<XdpFrame> {
        if self.done {
            return None;
        }
        let f = NonNull::new(*self.frames.get(self.next)?)?;
        self.next += 1;
        self.kept += 1;
        Some(XdpFrame(f))
    }

    /// Gives the frame just taken back to the core (it could not be sent) and ends the
    /// batch.
    pub fn give_back(&mut self, frame: XdpFrame) {
        self.done = true;
        let last = self.next.checked_sub(1).and_then(|i| self.frames.get(i));
        if last.is_some_and(|&p| p == frame.0.as_ptr()) {
            let _ = frame.into_raw();
            self.kept = self.kept.saturating_sub(1);
        } else {
            // Not the frame just taken (a driver bug): the core will free the frames after
            // the ones kept, so this one must not count as given back. Return it ourselves.
            frame.return_any();
        }
    }

    /// Frames the driver kept (the callback's return value).
    pub(crate) fn kept(&self) -> usize {
        self.kept
    }
}
