// SPDX-License-Identifier: GPL-2.0

//! Queue memory as the PAS lists of CREATE_EQ/CQ/SQ/RQ give it: one contiguous range, or a
//! list of pages (mlx5 allocates its EQ, CQ and WQ buffers page by page: `mlx5_frag_buf`,
//! the 6.12 async EQ is 128 pages of 4 KiB).
//!
//! A contiguous list (`pas[i] = pas[0] + i * page size`) is kept as its base address. A
//! list of pages goes into the device's page-list pool: [`POOL_PAGES`] entries shared by
//! every queue of the device, a queue taking a run of consecutive entries (first fit, at
//! command time) that it gives back when it is destroyed. A list longer than
//! [`MAX_LIST_PAGES`] or one the pool has no room for is refused. On the data path an
//! address is one lookup (`pool[first + off / page size] + off % page size`): no search,
//! no allocation.
//!
//! The pool lives in the device's scratch memory (its first [`POOL_BYTES`]): a bitmap of
//! used entries, then the entries (little-endian u64 bus addresses). Bounds are checked on
//! every access: an entry outside the pool reads as no address, which the callers treat as
//! a DMA fault.

use crate::hwif::hw::{BusMemory, DmaAddr, DmaFault};

/// Entries of the page-list pool (65536 pages: 256 MiB of queue memory in 4 KiB pages, the
/// most a `u16` first entry reaches). rsnic's driver gives every ring in pages: 16
/// channels of a port at the largest rings (8192 entries) with XDP, 4 CQs and 3 SQs of 128
/// pages and an RQ of 32 or more each, take 16 * 928 = 14848 entries or more, so the pool
/// is sized for two such ports; a real ConnectX has no such bound.
pub const POOL_PAGES: usize = 65536;
/// Longest page list one queue may have (the rest of a longer queue must be contiguous).
pub const MAX_LIST_PAGES: usize = 2048;
/// Bytes of the bitmap at the start of the pool.
const BITMAP_BYTES: usize = POOL_PAGES / 8;
/// Bytes of scratch memory the pool takes.
pub const POOL_BYTES: usize = BITMAP_BYTES + 8 * POOL_PAGES;

/// Where a queue's memory lies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ring {
    /// Bus address of byte 0 when contiguous (`pages` 0).
    pub base: DmaAddr,
    /// log2 of the page size in bytes (12 + `log_page_size`).
    pub log_pg: u8,
    /// First pool entry of the list.
    pub first: u16,
    /// Pages in the list; 0: contiguous at `base`.
    pub pages: u16,
}

impl Ring {
    /// A contiguous queue at `base`.
    pub const fn contiguous(base: DmaAddr) -> Self {
        Self {
            base,
            log_pg: 12,
            first: 0,
            pages: 0,
        }
    }

    /// Whether the queue lies in a page list (pool entries).
    pub fn listed(&self) -> bool {
        self.pages != 0
    }

    /// Bus address of byte `off` of the queue and the bytes that follow it in the same
    /// page (contiguous: all the rest). `None`: beyond the list.
    pub fn at(&self, pool: &[u8], off: u64) -> Option<(DmaAddr, u64)> {
        if self.pages == 0 {
            return Some((self.base.wrapping_add(off), u64::MAX));
        }
        let shift = u32::from(self.log_pg);
        let page = off >> shift;
        if page >= u64::from(self.pages) {
            return None;
        }
        let within = off & ((1u64 << shift) - 1);
        let a = entry(pool, usize::from(self.first) + page as usize)?;
        Some((a.wrapping_add(within), (1u64 << shift) - within))
    }

    /// Bus address of `len` bytes at `off` that the caller knows do not cross a page (an
    /// aligned entry of at most a page); `None` if they would, or lie beyond the list.
    pub fn addr(&self, pool: &[u8], off: u64, len: usize) -> Option<DmaAddr> {
        let (a, room) = self.at(pool, off)?;
        (len as u64 <= room).then_some(a)
    }

    /// Reads `dst.len()` bytes at `off`, page by page.
    pub fn read<M: BusMemory>(
        &self,
        pool: &[u8],
        mem: &M,
        off: u64,
        dst: &mut [u8],
    ) -> Result<(), DmaFault> {
        let mut done = 0usize;
        while done < dst.len() {
            let at = off.wrapping_add(done as u64);
            let fault = DmaFault {
                addr: self.base,
                len: dst.len(),
            };
            let (a, room) = self.at(pool, at).ok_or(fault)?;
            let n = (dst.len() - done).min(usize::try_from(room).unwrap_or(usize::MAX));
            let d = dst.get_mut(done..done + n).ok_or(fault)?;
            mem.dma_read(a, d)?;
            done += n;
        }
        Ok(())
    }
}

/// Pool entry `i` (a bus address), if inside the pool.
pub fn entry(pool: &[u8], i: usize) -> Option<DmaAddr> {
    if i >= POOL_PAGES {
        return None;
    }
    let o = BITMAP_BYTES + 8 * i;
    let b = pool.get(o..o + 8)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    Some(u64::from_le_bytes(a))
}

/// Writes pool entry `i`.
pub fn set_entry(pool: &mut [u8], i: usize, addr: DmaAddr) -> bool {
    if i >= POOL_PAGES {
        return false;
    }
    let o = BITMAP_BYTES + 8 * i;
    match pool.get_mut(o..o + 8) {
        Some(d) => {
            d.copy_from_slice(&addr.to_le_bytes());
            true
        }
        None => false,
    }
}

fn used(pool: &[u8], i: usize) -> bool {
    pool.get(i / 8).is_some_and(|b| b & (1 << (i % 8)) != 0)
}

fn mark(pool: &mut [u8], i: usize, on: bool) {
    if let Some(b) = pool.get_mut(i / 8) {
        if on {
            *b |= 1 << (i % 8);
        } else {
            *b &= !(1 << (i % 8));
        }
    }
}

/// Takes `n` consecutive free entries (first fit); their index, or `None` (no room, or `n`
/// 0 or above [`MAX_LIST_PAGES`]). Control path only.
pub fn alloc(pool: &mut [u8], n: usize) -> Option<u16> {
    if n == 0 || n > MAX_LIST_PAGES || pool.len() < POOL_BYTES {
        return None;
    }
    let mut run = 0usize;
    for i in 0..POOL_PAGES {
        if used(pool, i) {
            run = 0;
            continue;
        }
        run += 1;
        if run == n {
            let first = i + 1 - n;
            for k in first..=i {
                mark(pool, k, true);
            }
            return u16::try_from(first).ok();
        }
    }
    None
}

/// Gives a ring's entries back (nothing for a contiguous ring).
pub fn free(pool: &mut [u8], r: &Ring) {
    if !r.listed() {
        return;
    }
    let first = usize::from(r.first);
    for i in first..first.saturating_add(usize::from(r.pages)).min(POOL_PAGES) {
        mark(pool, i, false);
    }
}

/// Pool entries in use (for tests and diagnostics).
pub fn in_use(pool: &[u8]) -> usize {
    pool.get(..BITMAP_BYTES)
        .map_or(0, |b| b.iter().map(|x| x.count_ones() as usize).sum())
}
