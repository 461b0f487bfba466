// SPDX-License-Identifier: GPL-2.0

//! AF_XDP zero-copy: the XSK buffer pool of a queue (`struct xsk_buff_pool`).
//!
//! C header: [`include/net/xdp_sock_drv.h`](srctree/include/net/xdp_sock_drv.h).
//!
//! An AF_XDP socket bound with `XDP_ZEROCOPY` hands the driver its pool through `ndo_bpf`
//! (`XDP_SETUP_XSK_POOL`); the driver then receives straight into the socket's UMEM
//! ([`XskPool::alloc`], [`XskRxq::run`]) and transmits from it ([`XskPool::tx_peek`],
//! [`XskPool::tx_completed`]).
//!
//! # The driver's part of the contract
//!
//! The pool, its UMEM and the frames in it stay valid while the pool is registered with the
//! driver: the socket cannot go away before the core has called `XDP_SETUP_XSK_POOL` with a
//! NULL pool for the queue, and that call returns only after the driver stopped its XSK
//! queues. A driver keeps [`XskPool`], [`XskBuf`] and [`XskTxDesc`] values only in queues it
//! tears down (freeing buffers, completing descriptors) before that call returns.

use super::super::bindings;
use super::super::dma::DmaDevice;
use super::device::Device;
use super::napi::{Napi, Poll};
use super::skb::SkBuff;
use super::xdp::{BpfProg, MemModel, RxqInfo, XdpFrame};
use core::ptr::NonNull;
use kernel::{error::to_result, prelude::*};

/// The XSK buffer pool of one queue, as the core handed it to the driver.
///
/// # Invariants
///
/// `0` is a pool the core registered with this driver for a queue; it stays valid until
/// the driver's `XDP_SETUP_XSK_POOL` call that unregisters it returns (module docs).
#[derive(Clone, Copy)]
pub struct XskPool(NonNull<bindings::xsk_buff_pool>);

// SAFETY: the pool's driver-side functions may be called from any CPU (the driver
// serialises RX and TX use per queue, as the core requires).
unsafe impl Send for XskPool {}
// SAFETY: as for `Send`.
unsafe impl Sync for XskPool {}

impl XskPool {
    /// # Safety
    ///
    /// `pool` is the pool of an `XDP_SETUP_XSK_POOL` call registering it with the driver.
    pub(crate) unsafe fn from_raw(pool: NonNull<bindings::xsk_buff_pool>) -> Self {
        Self(pool)
    }

    /// The pool.
    pub(crate) fn as_raw(&self) -> *mut bindings::xsk_buff_pool {
        self.0.as_ptr()
    }

    /// Whether `self` and `other` are the same pool.
    pub fn same(&self, other: &XskPool) -> bool {
        self.0 == other.0
    }

    /// Maps the pool's UMEM for `dma`'s device (`xsk_pool_dma_map`).
    pub fn dma_map(&self, dma: &DmaDevice) -> Result {
        // SAFETY: the pool is registered (type invariant); `dma` is a valid device.
        to_result(unsafe { bindings::rsnic_helper_xsk_pool_dma_map(self.0.as_ptr(), dma.raw()) })
    }

    /// Undoes [`XskPool::dma_map`] (after the queues stopped using the pool).
    pub fn dma_unmap(&self) {
        // SAFETY: the pool is registered (type invariant) and was mapped by the driver.
        unsafe { bindings::rsnic_helper_xsk_pool_dma_unmap(self.0.as_ptr()) }
    }

    /// Bytes the device may write into one buffer (`xsk_pool_get_rx_frame_size`).
    pub fn rx_frame_size(&self) -> u32 {
        // SAFETY: the pool is registered (type invariant).
        unsafe { bindings::rsnic_helper_xsk_pool_rx_frame_size(self.0.as_ptr()) }
    }

    /// Headroom before the frame in each buffer (`xsk_pool_get_headroom`).
    pub fn headroom(&self) -> u32 {
        // SAFETY: the pool is registered (type invariant).
        unsafe { bindings::rsnic_helper_xsk_pool_headroom(self.0.as_ptr()) }
    }

    /// Bytes of one UMEM chunk (`xsk_pool_get_chunk_size`): headroom and frame.
    pub fn chunk_size(&self) -> u32 {
        // SAFETY: the pool is registered (type invariant).
        unsafe { bindings::rsnic_helper_xsk_pool_chunk_size(self.0.as_ptr()) }
    }

    /// A buffer from the socket's fill ring (`xsk_buff_alloc`), or `None` when it is empty.
    /// Call from the queue's NAPI poll (or with it quiesced).
    pub fn alloc(&self) -> Option<XskBuf> {
        let mut dma = 0u64;
        // SAFETY: the pool is registered (type invariant); `dma` is a valid out-pointer.
        let xdp = unsafe { bindings::rsnic_helper_xsk_buff_alloc(self.0.as_ptr(), &mut dma) };
        NonNull::new(xdp).map(|xdp| XskBuf { xdp, dma })
    }

    /// The socket's next TX descriptor, its data synced for the device; `None` when the TX
    /// ring is empty. Call [`XskPool::tx_release`] after a batch.
    pub fn tx_peek(&self) -> Option<XskTxDesc> {
        let (mut dma, mut data, mut len) = (0u64, core::ptr::null_mut(), 0u32);
        // SAFETY: the pool is registered (type invariant); the out-pointers are valid.
        let got = unsafe {
            bindings::rsnic_helper_xsk_tx_peek(self.0.as_ptr(), &mut dma, &mut data, &mut len)
        };
        let data = NonNull::new(data.cast::<u8>())?;
        got.then_some(XskTxDesc { dma, data, len })
    }

    /// Tells the socket the descriptors peeked so far were taken (`xsk_tx_release`).
    pub fn tx_release(&self) {
        // SAFETY: the pool is registered (type invariant).
        unsafe { bindings::rsnic_helper_xsk_tx_release(self.0.as_ptr()) }
    }

    /// Reports `n` transmitted descriptors to the completion ring (`xsk_tx_completed`), in
    /// the order they were peeked. The descriptors themselves were dropped by the caller.
    pub fn tx_completed(&self, n: u32) {
        if n > 0 {
            // SAFETY: the pool is registered (type invariant).
            unsafe { bindings::rsnic_helper_xsk_tx_completed(self.0.as_ptr(), n) }
        }
    }

    /// Sets or clears the socket's RX (`rx`) or TX need_wakeup flag, if it uses them.
    pub fn need_wakeup(&self, rx: bool, set: bool) {
        // SAFETY: the pool is registered (type invariant).
        unsafe { bindings::rsnic_helper_xsk_need_wakeup(self.0.as_ptr(), rx, set) }
    }
}

/// One buffer of the socket's UMEM, posted for the device to write (`struct xdp_buff` of
/// the pool). Freed explicitly ([`XskBuf::free`]) or consumed by [`XskRxq::run`].
///
/// # Invariants
///
/// `xdp` came from `xsk_buff_alloc` on a registered pool and is owned by this value; `dma`
/// is its bus address.
pub struct XskBuf {
    xdp: NonNull<bindings::xdp_buff>,
    dma: u64,
}

// SAFETY: a buffer may be freed on another CPU than the one that allocated it, within the
// queue's serialisation.
unsafe impl Send for XskBuf {}

impl XskBuf {
    /// Bus address where the device writes the frame (after the pool's headroom).
    pub fn dma_addr(&self) -> u64 {
        self.dma
    }

    /// Gives the buffer back to the pool's free list (`xsk_buff_free`).
    pub fn free(self) {
        let xdp = self.into_raw();
        // SAFETY: we owned the buffer (type invariant) and give it up.
        unsafe { bindings::rsnic_helper_xsk_buff_free(xdp) }
    }

    fn into_raw(self) -> *mut bindings::xdp_buff {
        let p = self.xdp.as_ptr();
        core::mem::forget(self);
        p
    }
}

impl Drop for XskBuf {
    fn drop(&mut self) {
        // Buffers are freed explicitly; leak and warn.
        // SAFETY: the helper only emits a one-time warning.
        unsafe { bindings::rsnic_helper_warn_skb_leak() }
    }
}

/// A TX descriptor of the socket: `len` bytes at bus address `dma`, owned (not yet
/// reported complete) until dropped and counted in [`XskPool::tx_completed`].
///
/// # Invariants
///
/// `data` points to `len` bytes of the pool's UMEM, which stays mapped while the pool is
/// registered (module docs); the socket does not reuse the frame before it is completed.
pub struct XskTxDesc {
    dma: u64,
    data: NonNull<u8>,
    len: u32,
}

// SAFETY: the descriptor is plain data about UMEM memory valid from any CPU.
unsafe impl Send for XskTxDesc {}

impl XskTxDesc {
    /// Bus address of the frame.
    pub fn dma_addr(&self) -> u64 {
        self.dma
    }

    /// The frame's length.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether the frame is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The frame's bytes (for inlining).
    pub fn data(&self) -> &[u8] {
        // SAFETY: by the type invariant `data` points to `len` valid bytes that nobody
        // writes while the descriptor is outstanding.
        unsafe { core::slice::from_raw_parts(self.data.as_ptr(), self.len as usize) }
    }
}

/// What became of an XSK buffer the program ran on.
pub enum XskVerdict {
    /// `XDP_PASS`: the frame was copied into an skb (`None`: no skb could be had) and the
    /// buffer freed.
    Pass(Option<SkBuff>),
    /// `XDP_TX`: the frame was copied into an XDP frame (`None`: no memory) and the buffer
    /// freed.
    Tx(Option<XdpFrame>),
    /// `XDP_DROP`: the buffer was freed.
    Drop,
    /// `XDP_ABORTED`, an unknown action or a failed redirect (traced): the buffer was freed.
    Aborted,
    /// `XDP_REDIRECT` done (into the socket's RX ring, or elsewhere).
    Redirected,
}

/// The `xdp_rxq_info` of an XSK RQ (memory model `MEM_TYPE_XSK_BUFF_POOL`), set as the
/// pool's RX queue info. Unregistered on drop.
pub struct XskRxq {
    /// Held for its registration, which the pool points at until this value drops.
    _info: RxqInfo,
}

impl XskRxq {
    /// Registers RX queue `queue` of `dev`, receiving into `pool`.
    pub fn new(dev: &Device, queue: u32, pool: &XskPool) -> Result<Self> {
        let info = RxqInfo::new(dev, queue, MemModel::Xsk(pool))?;
        Ok(Self { _info: info })
    }

    /// Runs `prog` on `buf`, into which the device wrote `len` bytes (at most the pool's RX
    /// frame size, checked by the caller's RQ); without a program the frame passes. For
    /// `XDP_PASS` the frame is copied into an skb from `napi`'s cache.
    pub fn run<T: Poll>(
        &self,
        prog: Option<&BpfProg>,
        napi: &Napi<T>,
        buf: XskBuf,
        len: u32,
    ) -> XskVerdict {
        let xdp = buf.into_raw();
        let prog = prog.map_or(core::ptr::null_mut(), BpfProg::as_raw);
        // SAFETY: the program, if any, is live (we hold a reference); `xdp` is a buffer of a
        // pool whose rxq info is `self` (set at registration), owned until here; the
        // device wrote `len` bytes into it.
        let act = unsafe { bindings::rsnic_helper_xsk_run(prog, xdp, len) };
        match act {
            bindings::xdp_action_XDP_REDIRECT => XskVerdict::Redirected,
            bindings::xdp_action_XDP_PASS => {
                // SAFETY: the buffer is still ours (not redirected); `napi` is the running
                // NAPI context; the copy leaves the buffer to be freed below.
                let skb = unsafe { bindings::rsnic_helper_xsk_copy_skb(napi.as_raw(), xdp) };
                // SAFETY: we own the buffer and free it after the copy.
                unsafe { bindings::rsnic_helper_xsk_buff_free(xdp) };
                // SAFETY: a non-null result is a new skb whose one reference we own.
                XskVerdict::Pass(unsafe { SkBuff::from_raw(skb) })
            }
            bindings::xdp_action_XDP_TX => {
                // SAFETY: the buffer is ours; the helper copies it into a new frame and
                // frees it.
                let f = unsafe { bindings::rsnic_helper_xsk_to_frame(xdp) };
                XskVerdict::Tx(NonNull::new(f).map(|f| {
                    // SAFETY: a new frame owned by us.
                    unsafe { XdpFrame::from_raw(f) }
                }))
            }
            bindings::xdp_action_XDP_DROP => {
                // SAFETY: the buffer is ours and goes back to the pool.
                unsafe { bindings::rsnic_helper_xsk_buff_free(xdp) };
                XskVerdict::Drop
            }
            _ => {
                // SAFETY: as for DROP (a failed redirect leaves the buffer with us).
                unsafe { bindings::rsnic_helper_xsk_buff_free(xdp) };
                XskVerdict::Aborted
            }
        }
    }
}
