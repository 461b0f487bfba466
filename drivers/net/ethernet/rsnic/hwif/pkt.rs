// SPDX-License-Identifier: GPL-2.0

//! What a queue of either family needs from its caller, family-neutral: the packet to send
//! ([`TxPacket`]), the DMA mapping of its data ([`TxDmaMap`], [`DmaEntry`]), the netdev TX
//! queue with BQL ([`TxQueue`]), why a packet comes back ([`TxReject`]), and receive buffers
//! ([`RxBuffer`], [`RxBufProvider`]), and the storage of a queue's bookkeeping ([`Slots`]),
//! with the dma FIFO both families' SQs keep in it ([`DmaRing`]).
//! The kernel implements them over `sk_buff`, the DMA API and page_pool; the host over plain
//! buffers.

use core::ops::DerefMut;

use crate::hwif::hdr::{self, Headers};
use crate::hwif::hw::DmaAddr;

/// Caller-provided storage of a queue's per-entry bookkeeping (WQE info, packet and dma
/// FIFOs, buffer slots): a slice of `T` the queue owns, an array on the host, a `KVec` in the
/// kernel. Only a name for the bound, held by every type that has it, so that each queue's
/// impls spell their parameters' bounds in one line; it adds no code.
pub trait Slots<T>: DerefMut<Target = [T]> {}

impl<T, S: DerefMut<Target = [T]> + ?Sized> Slots<T> for S {}

/// A VLAN tag to insert.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VlanTag {
    /// Tag control information (PCP, DEI, VID).
    pub tci: u16,
    /// 802.1ad (S-VLAN, TPID 0x88a8) instead of 802.1Q.
    pub dot1ad: bool,
}

/// Checksum offload request of a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxCsum {
    /// No offload (`CHECKSUM_NONE` or already complete).
    None,
    /// `CHECKSUM_PARTIAL` on the outer headers.
    Partial,
    /// `CHECKSUM_PARTIAL` on the inner headers of an encapsulated packet.
    PartialInner,
}

/// Segmentation offload request of a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gso {
    /// MSS (`gso_size`).
    pub size: u16,
    /// Number of segments the packet becomes (`gso_segs`).
    pub segs: u16,
}

/// A packet to transmit, as the data path sees it.
///
/// The kernel implements it for `sk_buff`, the host for plain buffers. The first
/// `linear().len()` bytes are the linear part (`skb_headlen`); the rest is in
/// [`TxPacket::nr_frags`] fragments.
pub trait TxPacket {
    /// Total length in bytes (`skb->len`).
    fn pkt_len(&self) -> u32;
    /// The linear part's bytes, for header parsing and inline copies.
    fn linear(&self) -> &[u8];
    /// Number of page fragments.
    fn nr_frags(&self) -> usize;
    /// Length of fragment `i`.
    fn frag_len(&self, i: usize) -> u32;
    /// Segmentation offload, if the packet is GSO.
    fn gso(&self) -> Option<Gso> {
        None
    }
    /// Checksum offload request.
    fn csum(&self) -> TxCsum {
        TxCsum::None
    }
    /// VLAN tag to insert (`skb_vlan_tag_present`).
    fn vlan(&self) -> Option<VlanTag> {
        None
    }
    /// Header offsets and lengths. The default parses [`TxPacket::linear`].
    fn headers(&self) -> Headers {
        hdr::parse(self.linear())
    }
}

/// How a DMA mapping was made, so it can be undone the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DmaKind {
    /// `dma_map_single` of (part of) the linear area.
    #[default]
    Single,
    /// `skb_frag_dma_map` of a page fragment.
    Page,
}

/// One DMA mapping kept until completion (an entry of the dma FIFO).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DmaEntry {
    /// Bus address.
    pub addr: DmaAddr,
    /// Length in bytes.
    pub len: u32,
    /// How it was mapped.
    pub kind: DmaKind,
}

/// DMA mapping of packet data, and unmapping at completion.
pub trait TxDmaMap<P> {
    /// Maps `len` bytes of the linear part of `pkt` starting at `offset`. `None` = failure.
    fn map_linear(&mut self, pkt: &P, offset: u32, len: u32) -> Option<DmaAddr>;
    /// Maps fragment `index` of `pkt` (its whole length). `None` = failure.
    fn map_frag(&mut self, pkt: &P, index: usize) -> Option<DmaAddr>;
    /// Undoes one mapping.
    fn unmap(&mut self, entry: DmaEntry);
}

/// The dma FIFO of an SQ of either family: the mappings its packets keep beyond the one
/// each packet's own entry holds, in posting order, each undone when its packet completes
/// (or when a packet that is not sent is unwound). Over caller-provided `slots`, a power of
/// two of them (each SQ checks their number against its size).
pub struct DmaRing<D> {
    slots: D,
    /// Producer counter (free-running).
    pc: u32,
    /// Consumer counter (free-running).
    cc: u32,
    /// `slots.len() - 1`.
    mask: u32,
}

impl<D: Slots<DmaEntry>> DmaRing<D> {
    /// An empty FIFO over `slots`.
    pub fn new(slots: D) -> Self {
        let mask = (slots.len() as u32).wrapping_sub(1);
        Self {
            slots,
            pc: 0,
            cc: 0,
            mask,
        }
    }

    /// Appends `e`.
    #[inline(always)]
    pub fn push(&mut self, e: DmaEntry) {
        if let Some(slot) = self.slots.get_mut((self.pc & self.mask) as usize) {
            *slot = e;
        }
        self.pc = self.pc.wrapping_add(1);
    }

    /// Undoes and removes the `n` oldest mappings (their packet completed).
    #[inline(always)]
    pub fn pop<P, M: TxDmaMap<P>>(&mut self, n: u32, map: &mut M) {
        for _ in 0..n {
            if let Some(e) = self.slots.get((self.cc & self.mask) as usize) {
                map.unmap(*e);
            }
            self.cc = self.cc.wrapping_add(1);
        }
    }

    /// Undoes and removes every mapping left (a queue torn down).
    pub fn drain<P, M: TxDmaMap<P>>(&mut self, map: &mut M) {
        self.pop(self.pc.wrapping_sub(self.cc), map);
    }

    /// Undoes and removes the `n` newest mappings (a packet that is not sent, or a failed
    /// WQE fill).
    pub fn unwind<P, M: TxDmaMap<P>>(&mut self, n: u32, map: &mut M) {
        for _ in 0..n {
            self.pc = self.pc.wrapping_sub(1);
            if let Some(e) = self.slots.get((self.pc & self.mask) as usize) {
                map.unmap(*e);
            }
        }
    }

    /// Puts the counters of an empty FIFO back at 0 (an SQ reset after recovery).
    pub fn reset(&mut self) {
        self.pc = 0;
        self.cc = 0;
    }
}

/// The netdev TX queue the SQ feeds, with its byte queue limits.
pub trait TxQueue {
    /// Stops the queue (`netif_tx_stop_queue`).
    fn stop(&mut self);
    /// Wakes the queue (`netif_tx_wake_queue`).
    fn wake(&mut self);
    /// Whether the driver stopped the queue (`netif_tx_queue_stopped`).
    fn is_stopped(&self) -> bool;
    /// Accounts `bytes` sent (`__netdev_tx_sent_queue`); returns whether the doorbell must be
    /// rung now: `!xmit_more`, or the queue is stopped (by the driver or by BQL).
    fn sent(&mut self, bytes: u32, xmit_more: bool) -> bool;
    /// Accounts completions (`netdev_tx_completed_queue`).
    fn completed(&mut self, pkts: u32, bytes: u32);
}

/// Why a packet was handed back instead of queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxRejectReason {
    /// No room in the SQ: requeue it (`NETDEV_TX_BUSY`). Not counted as a drop.
    Busy,
    /// The SQ is in an error state.
    SqError,
    /// A DMA mapping failed.
    MapError,
    /// The packet description is inconsistent (headers not in the linear part, GSO without
    /// an MSS or a transport header, ...).
    Malformed,
    /// The WQE would exceed the SQ's maximum WQE size.
    TooManySegments,
    /// The inline header would exceed the maximum inline size.
    HeaderTooLong,
}

/// A packet handed back to the caller, who must free it (or requeue it on `Busy`).
#[derive(Debug)]
pub struct TxReject<P> {
    /// The packet.
    pub pkt: P,
    /// Why.
    pub reason: TxRejectReason,
}

/// A receive buffer.
pub trait RxBuffer {
    /// Bus address the device writes the packet to (headroom included).
    fn dma_addr(&self) -> DmaAddr;
}

/// Where receive buffers come from and go back to.
pub trait RxBufProvider<B> {
    /// A fresh buffer of at least the RQ's buffer size, or `None`.
    fn alloc(&mut self) -> Option<B>;
    /// Takes back a buffer the RQ does not deliver (error CQE, teardown).
    fn recycle(&mut self, buf: B);
    /// Takes back every buffer in `slots`, emptying them (an RQ's teardown); how many.
    fn recycle_all(&mut self, slots: &mut [Option<B>]) -> u32 {
        let mut n = 0;
        for slot in slots.iter_mut() {
            if let Some(b) = slot.take() {
                self.recycle(b);
                n += 1;
            }
        }
        n
    }
}

/// The buffers of a received packet after its first (RX scatter: one packet over several
/// buffers of an RX WQE). Each step takes the next buffer out of its slot with the bytes
/// of the packet it holds; the buffers not taken stay in their slots, posted again with
/// the WQE (as mlx5e re-posts the fragments a packet did not use).
pub struct RxFrags<'a, B> {
    slots: &'a mut [Option<B>],
    /// Bytes of the packet in the buffers not taken yet.
    left: u32,
    /// Bytes of each buffer.
    seg: u32,
}

impl<'a, B> RxFrags<'a, B> {
    /// The fragments of a packet whose bytes after the first buffer are `left`, in `slots`
    /// of `seg` bytes each.
    pub fn new(slots: &'a mut [Option<B>], left: u32, seg: u32) -> Self {
        Self { slots, left, seg }
    }

    /// No fragments (a packet in one buffer).
    pub fn none() -> Self {
        Self {
            slots: &mut [],
            left: 0,
            seg: 0,
        }
    }

    /// Whether the packet has bytes beyond its first buffer.
    pub fn is_empty(&self) -> bool {
        self.left == 0
    }

    /// Bytes of the packet in the buffers not taken yet.
    pub fn bytes(&self) -> u32 {
        self.left
    }
}

impl<B> Iterator for RxFrags<'_, B> {
    /// A buffer and how many bytes of the packet it holds (from its start).
    type Item = (B, u32);

    fn next(&mut self) -> Option<(B, u32)> {
        if self.left == 0 {
            return None;
        }
        let (first, rest) = core::mem::take(&mut self.slots).split_first_mut()?;
        self.slots = rest;
        let len = self.left.min(self.seg);
        self.left = self.left.saturating_sub(len);
        // A slot the RQ posted is never empty; if it were, the packet ends here.
        match first.take() {
            Some(b) => Some((b, len)),
            None => {
                self.left = 0;
                None
            }
        }
    }
}
