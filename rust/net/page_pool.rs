// SPDX-License-Identifier: GPL-2.0

//! Page pools for receive buffers (`struct page_pool`).
//!
//! C header: [`include/net/page_pool/helpers.h`](srctree/include/net/page_pool/helpers.h).
//!
//! A [`PagePool`] hands out [`RxPage`]s already DMA-mapped for the device to write. A page
//! ends either as a received packet ([`PagePool::build_skb`], the skb recycles it) or back in
//! the pool ([`PagePool::recycle`]). Like [`SkBuff`], an `RxPage` is never freed implicitly.

use super::super::bindings;
use super::super::dma::DmaDevice;
use super::device::Device;
use super::skb::SkBuff;
use core::ptr::NonNull;
use kernel::{error::from_err_ptr, prelude::*};

/// A page pool; destroyed on drop (pages still in flight return to the kernel later).
///
/// # Invariants
///
/// `pool` was created by `page_pool_create()` with DMA mapping for `dma_dev` and is not
/// destroyed before `drop`.
pub struct PagePool {
    pool: NonNull<bindings::page_pool>,
    offset: u32,
    truesize: u32,
}

// SAFETY: page pool operations used here may run on any CPU (allocation and recycling
// without the direct-cache paths).
unsafe impl Send for PagePool {}
// SAFETY: as for `Send`.
unsafe impl Sync for PagePool {}

/// One page from a pool, DMA-mapped for the device to write.
///
/// # Invariants
///
/// `page` came from a `PagePool` allocation and is owned by this value.
pub struct RxPage {
    page: NonNull<bindings::page>,
    dma: u64,
    /// Bytes of the page (`PAGE_SIZE << order` of its pool).
    size: u32,
    /// Where the device writes a packet in the page (its pool's headroom).
    offset: u32,
}

// SAFETY: a page reference may move between CPUs.
unsafe impl Send for RxPage {}

impl RxPage {
    /// Bus address of the start of the page.
    pub fn dma_addr(&self) -> u64 {
        self.dma
    }

    /// Bus address where the device writes a packet (after the pool's headroom).
    pub fn buf_dma_addr(&self) -> u64 {
        self.dma + u64::from(self.offset)
    }

    /// `len` bytes of the page from `off` (for example a frame an XDP program built), or
    /// `None` if they do not lie inside the page.
    pub fn data(&self, off: u32, len: u32) -> Option<&[u8]> {
        if off.checked_add(len)? > self.size {
            return None;
        }
        // SAFETY: pool pages are lowmem pages with a kernel mapping (`page_address()` is
        // valid); `off + len` lies inside the page (checked); we own the page (type
        // invariant) and the device does not write a page it does not have posted, so the
        // bytes are not changed while borrowed.
        unsafe {
            let va = bindings::rsnic_helper_page_address(self.page.as_ptr()).cast::<u8>();
            Some(core::slice::from_raw_parts(
                va.add(off as usize),
                len as usize,
            ))
        }
    }

    pub(crate) fn as_raw(&self) -> *mut bindings::page {
        self.page.as_ptr()
    }

    pub(crate) fn into_raw(self) -> *mut bindings::page {
        let p = self.page.as_ptr();
        core::mem::forget(self);
        p
    }
}

impl Drop for RxPage {
    fn drop(&mut self) {
        // A page must go back to its pool or into an skb explicitly; leak and warn.
        // SAFETY: the helper only emits a one-time warning.
        unsafe { bindings::rsnic_helper_warn_skb_leak() }
    }
}

impl PagePool {
    /// A pool of pages of `PAGE_SIZE << order` bytes for `dev`, mapped on `dma`. The device
    /// writes packets at `offset` (the headroom), at most `max_len` bytes. `bidirectional`
    /// maps the pages for the device to read too (XDP_TX sends received pages back out).
    pub fn new(
        dma: &DmaDevice,
        dev: &Device,
        pool_size: u32,
        order: u32,
        offset: u32,
        max_len: u32,
        bidirectional: bool,
    ) -> Result<Self> {
        let page_size = (kernel::page::PAGE_SIZE as u32) << order;
        if offset
            .checked_add(max_len)
            .map_or(true, |end| end > page_size)
        {
            return Err(EINVAL);
        }
        // SAFETY: `dma` and `dev` are valid devices for the duration of the call; the pool
        // keeps what it needs.
        let pool = unsafe {
            bindings::rsnic_helper_page_pool_create(
                dma.raw(),
                dev as *const Device as *mut bindings::net_device,
                pool_size,
                order,
                offset,
                max_len,
                bidirectional,
            )
        };
        let pool = from_err_ptr(pool)?;
        Ok(Self {
            pool: NonNull::new(pool).ok_or(ENOMEM)?,
            offset,
            truesize: page_size,
        })
    }

    /// A page (atomic allocation), or `None`.
    pub fn alloc(&self) -> Option<RxPage> {
        let mut dma = 0u64;
        // SAFETY: the pool is valid (type invariant); `dma` is a valid out-pointer.
        let page = unsafe { bindings::rsnic_helper_page_pool_alloc(self.pool.as_ptr(), &mut dma) };
        NonNull::new(page).map(|page| RxPage {
            page,
            dma,
            size: self.truesize,
            offset: self.offset,
        })
    }

    /// Where the device writes packets in a page (the headroom).
    pub fn offset(&self) -> u32 {
        self.offset
    }

    /// Bytes of each page.
    pub fn truesize(&self) -> u32 {
        self.truesize
    }

    pub(crate) fn as_raw(&self) -> *mut bindings::page_pool {
        self.pool.as_ptr()
    }

    /// Makes the CPU's writes to `len` bytes at `off` of `page` visible to the device
    /// before it reads them (XDP_TX of a frame a program may have rewritten). Out-of-page
    /// ranges are ignored.
    pub fn sync_for_device(&self, page: &RxPage, off: u32, len: u32) {
        if off.checked_add(len).map_or(true, |end| end > page.size) {
            return;
        }
        // SAFETY: the pool is valid (type invariant) and mapped the page (one pool per RQ:
        // callers only pass pages of this pool); the range lies inside the page's mapping.
        unsafe {
            bindings::rsnic_helper_page_pool_sync_for_device(
                self.pool.as_ptr(),
                page.dma + u64::from(off),
                len,
            )
        }
    }

    /// Gives a page back to the pool.
    pub fn recycle(&self, page: RxPage) {
        // SAFETY: the page came from this pool (callers only recycle pages of the pool that
        // made them: one pool per RQ) and ownership ends here.
        unsafe { bindings::rsnic_helper_page_pool_put(self.pool.as_ptr(), page.into_raw()) }
    }

    /// Wraps a page holding a received packet of `len` bytes at the pool's offset in an skb
    /// that returns the page to the pool when freed. `None` (the page recycled) when no skb
    /// could be allocated or `len` does not fit.
    pub fn build_skb(&self, page: RxPage, len: u32) -> Option<SkBuff> {
        self.build_skb_at(page, self.offset, len)
    }

    /// As [`PagePool::build_skb`], with the packet at `offset` in the page (after an XDP
    /// program moved its head). `offset` must leave room for `NET_SKB_PAD`-free headers:
    /// the skb's head is the page itself.
    pub fn build_skb_at(&self, page: RxPage, offset: u32, len: u32) -> Option<SkBuff> {
        if len == 0 || offset.saturating_add(len) > self.truesize {
            self.recycle(page);
            return None;
        }
        // SAFETY: the page came from this pool; `offset + len` fits in it (checked); the
        // helper either returns an skb owning the page or recycles the page.
        let skb = unsafe {
            bindings::rsnic_helper_rx_build_skb(
                self.pool.as_ptr(),
                page.into_raw(),
                offset,
                len,
                self.truesize,
            )
        };
        // SAFETY: a non-null result is a new skb whose one reference we own.
        unsafe { SkBuff::from_raw(skb) }
    }

    /// Appends `len` bytes of a page holding the rest of a received packet (RX scatter),
    /// written at the pool's offset, to `skb` as its next fragment; the skb returns the page
    /// to the pool when freed. `false` (the page recycled, `skb` unchanged) when the skb has
    /// no fragment slot left or `len` does not fit.
    pub fn add_frag(&self, skb: &mut SkBuff, page: RxPage, len: u32) -> bool {
        // SAFETY: `skb` is a valid skb we own (no other reference to it while `&mut`); the
        // page came from this pool (one pool per RQ); the helper checks the fragment slot
        // and the range and either hands the page to the skb or recycles it.
        unsafe {
            bindings::rsnic_helper_rx_add_frag(
                self.pool.as_ptr(),
                skb.as_raw(),
                page.into_raw(),
                self.offset,
                len,
                self.truesize,
            )
        }
    }
}

impl Drop for PagePool {
    fn drop(&mut self) {
        // SAFETY: created in `new` (type invariant); pages still owned by skbs are released
        // by the pool's deferred destruction.
        unsafe { bindings::rsnic_helper_page_pool_destroy(self.pool.as_ptr()) }
    }
}
