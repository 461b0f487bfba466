// SPDX-License-Identifier: GPL-2.0

//! The MANA model's DMA regions ([`Region`]): GDMA_CREATE_DMA_REGION,
//! GDMA_DMA_REGION_ADD_PAGES and GDMA_DESTROY_DMA_REGION, and the lookups the queue requests
//! of [`super::gdma_req`] make when a queue is created over a region (which it then owns
//! until it is destroyed). 4 KiB pages that must be contiguous: the model keeps one base
//! address per region; the region table lives in the queue rows ([`REGIONS_PER_ROW`] each).
//! The driver's half is in `hwif/mana/gdma_req.rs` (`create_dma_region`,
//! `dma_region_add_pages`, `destroy_dma_region`).

use super::gdma_req::{
    Exec, REGIONS_PER_ROW, STATUS_DEVICE_BUSY, STATUS_INSUFFICIENT_RESOURCES,
    STATUS_INVALID_HANDLE, STATUS_INVALID_PARAMETER, STATUS_NOT_SUPPORTED,
};
use super::hwc::{Msg, PAGE};
use super::{Device, Kind, Port, QueueSet, MAX_QUEUES};
use crate::hwif::bytes::{le32, le64, put_le64};
use crate::hwif::hw::{BusMemory, DmaAddr};
use core::ops::DerefMut;

const REGION_TAG: u64 = 0x52 << 56;

with_empty! {
    /// A DMA region (GDMA_CREATE_DMA_REGION).
    #[derive(Clone, Copy)]
    pub struct Region {
        pub(super) used: bool = false,
        gen: u16 = 0,
        pub(super) base: DmaAddr = 0,
        pub(super) len: u32 = 0,
        pub(super) pages: u32 = 0,
        pub(super) have: u32 = 0,
        /// The queue that consumed it: (kind, id).
        pub(super) owner: Option<(Kind, u32)> = None,
    }
    /// An unused entry.
    pub const EMPTY;
}

/// Page `i` of a list at `off` must be 4 KiB aligned and continue the region contiguously
/// from page `first` (the model keeps one base address per region).
fn check_pages<M: BusMemory>(
    m: &Msg<'_, M>,
    off: usize,
    n: u32,
    base: u64,
    first: u32,
) -> Result<(), u32> {
    for i in 0..n as usize {
        let a = m.u64_at(off + 8 * i).ok_or(STATUS_INVALID_PARAMETER)?;
        if a % PAGE != 0 {
            return Err(STATUS_INVALID_PARAMETER);
        }
        if a != base.wrapping_add((u64::from(first) + i as u64) * PAGE) {
            return Err(STATUS_NOT_SUPPORTED);
        }
    }
    Ok(())
}

impl<P, Q, B> Device<P, Q, B>
where
    P: DerefMut<Target = [Port]>,
    Q: DerefMut<Target = [QueueSet]>,
    B: DerefMut<Target = [u8]>,
{
    pub(super) fn region_count(&self) -> usize {
        self.queues.len().min(self.ports.len() * MAX_QUEUES) * REGIONS_PER_ROW
    }

    pub(super) fn region(&self, r: usize) -> Option<&Region> {
        self.queues
            .get(r / REGIONS_PER_ROW)
            .and_then(|q| q.regions.get(r % REGIONS_PER_ROW))
    }

    pub(super) fn region_mut(&mut self, r: usize) -> Option<&mut Region> {
        self.queues
            .get_mut(r / REGIONS_PER_ROW)
            .and_then(|q| q.regions.get_mut(r % REGIONS_PER_ROW))
    }

    pub(super) fn region_of(&self, handle: u64) -> Option<usize> {
        if handle & (0xff << 56) != REGION_TAG {
            return None;
        }
        let r = (handle as u32).checked_sub(1)? as usize;
        let gen = (handle >> 32) as u16;
        if r >= self.region_count() {
            return None;
        }
        self.region(r).filter(|x| x.used && x.gen == gen).map(|_| r)
    }

    /// A complete region no queue owns.
    pub(super) fn ready_region(&self, handle: u64) -> Result<usize, u32> {
        let r = self.region_of(handle).ok_or(STATUS_INVALID_HANDLE)?;
        match self.region(r) {
            Some(x) if x.owner.is_some() => Err(STATUS_DEVICE_BUSY),
            Some(x) if x.have < x.pages => Err(STATUS_INVALID_PARAMETER),
            Some(_) => Ok(r),
            None => Err(STATUS_INVALID_HANDLE),
        }
    }

    pub(super) fn owned_region(&self, k: Kind, id: u32) -> Option<usize> {
        (0..self.region_count()).find(|&r| {
            self.region(r)
                .is_some_and(|x| x.used && x.owner == Some((k, id)))
        })
    }

    pub(super) fn free_owned(&mut self, k: Kind, id: u32) {
        while let Some(r) = self.owned_region(k, id) {
            if let Some(x) = self.region_mut(r) {
                x.used = false;
                x.owner = None;
            }
        }
    }

    pub(super) fn regions_alive(&self) -> bool {
        (0..self.region_count()).any(|r| self.region(r).is_some_and(|x| x.used))
    }

    // GDMA_CREATE_DMA_REGION: length 40, offset_in_page 48, gdma_page_type 52,
    // page_count 56, page_addr_list_len 60, page_addr_list 64.
    pub(super) fn create_region<M: BusMemory>(&mut self, m: &Msg<'_, M>, b: &mut [u8]) -> Exec {
        let h = &m.head;
        if m.len < 64 {
            return Err(STATUS_INVALID_PARAMETER);
        }
        let length = le64(h, 40);
        let count = le32(h, 56);
        let listed = le32(h, 60);
        if m.len != 64 + 8 * listed as usize
            || count == 0
            || listed == 0
            || listed > count
            || length != u64::from(count) * PAGE
            || length > u64::from(u32::MAX)
        {
            return Err(STATUS_INVALID_PARAMETER);
        }
        if le32(h, 48) != 0 || le32(h, 52) != 0 {
            return Err(STATUS_NOT_SUPPORTED);
        }
        let base = m.u64_at(64).ok_or(STATUS_INVALID_PARAMETER)?;
        check_pages(m, 64, listed, base, 0)?;
        let r = (0..self.region_count())
            .find(|&r| self.region(r).is_some_and(|x| !x.used))
            .ok_or(STATUS_INSUFFICIENT_RESOURCES)?;
        let x = self.region_mut(r).ok_or(STATUS_INSUFFICIENT_RESOURCES)?;
        x.gen = x.gen.wrapping_add(1);
        x.used = true;
        x.base = base;
        x.len = length as u32;
        x.pages = count;
        x.have = listed;
        x.owner = None;
        put_le64(b, 0, REGION_TAG | (u64::from(x.gen) << 32) | (r as u64 + 1));
        Ok(8)
    }

    // GDMA_DMA_REGION_ADD_PAGES: handle 40, page_addr_list_len 48, page_addr_list 56.
    pub(super) fn add_pages<M: BusMemory>(&mut self, m: &Msg<'_, M>) -> Exec {
        let h = &m.head;
        if m.len < 56 {
            return Err(STATUS_INVALID_PARAMETER);
        }
        let r = self.region_of(le64(h, 40)).ok_or(STATUS_INVALID_HANDLE)?;
        let x = *self.region(r).ok_or(STATUS_INVALID_HANDLE)?;
        let n = le32(h, 48);
        if m.len != 56 + 8 * n as usize || n == 0 || x.owner.is_some() || n > x.pages - x.have {
            return Err(STATUS_INVALID_PARAMETER);
        }
        check_pages(m, 56, n, x.base, x.have)?;
        if let Some(y) = self.region_mut(r) {
            y.have += n;
        }
        Ok(0)
    }

    // GDMA_DESTROY_DMA_REGION: dma_region_handle 40.
    pub(super) fn destroy_region(&mut self, h: &[u8]) -> Exec {
        let r = self.region_of(le64(h, 40)).ok_or(STATUS_INVALID_HANDLE)?;
        if self.region(r).is_some_and(|x| x.owner.is_some()) {
            return Err(STATUS_DEVICE_BUSY);
        }
        if let Some(x) = self.region_mut(r) {
            x.used = false;
        }
        Ok(0)
    }
}
