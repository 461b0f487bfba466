// SPDX-License-Identifier: GPL-2.0

//! XDP on a channel: what an XDP transmit queue carries and what it needs from the kernel
//! (the XDP counters are [`crate::family::stats::XdpStats`] and `XskStats`, with the
//! channel's).
//!
//! A ConnectX channel has two XDP SQs, as an mlx5e channel does: one for `XDP_TX` (frames
//! the channel's own program sends back, posted from its NAPI poll with one doorbell per
//! poll) and one for `ndo_xdp_xmit` (frames redirected from other devices, one doorbell per
//! batch). Both are ordinary `hwif::mlx5` SQs over [`XdpTx`] packets, so they use the
//! Enhanced MPWQE sessions of the skb path with small frames inlined (the inline
//! watermarks of `hwif::mlx5::sq`). A MANA channel has none: as upstream mana does,
//! `XDP_TX` and redirected frames go out through the regular SQ as skbs. With AF_XDP
//! zero-copy both families add an XSK SQ (descriptors of the socket's TX ring) and an XSK
//! RQ; ConnectX also an ICO SQ for wake-up NOPs, while MANA, which has no NOP WQE,
//! schedules NAPI directly from `ndo_xsk_wakeup`.

use crate::bus::Bar;
use crate::hwif::hw::DmaAddr;
use crate::hwif::pkt::{DmaEntry, TxDmaMap, TxPacket, TxQueue as DpTxQueue};
use crate::hwif::pkt::{RxBufProvider, RxBuffer};
use crate::kernel_ext::{
    dma::DmaDevice,
    net::{
        page_pool::{PagePool, RxPage},
        xdp::XdpFrame,
        xsk::{XskBuf, XskPool, XskTxDesc},
    },
};

/// A frame on an XDP SQ.
pub(crate) enum XdpTx {
    /// `XDP_TX`: a page of the channel's own page pool, the frame at `off`.
    Page {
        /// The page (goes back to the pool at completion).
        page: RxPage,
        /// Offset of the frame in the page.
        off: u32,
        /// Frame length.
        len: u32,
    },
    /// A frame redirected from another device (`ndo_xdp_xmit`), or copied out of an XSK
    /// buffer for XDP_TX.
    Frame(XdpFrame),
    /// An AF_XDP zero-copy TX descriptor (the XSK SQ): completed in order through the
    /// pool, nothing to free.
    Xsk(XskTxDesc),
}

impl XdpTx {
    /// Gives the frame back where it came from: the page to `pool`, a redirected frame to
    /// its memory model (from a NAPI poll).
    pub(crate) fn release(self, pool: Option<&PagePool>) {
        match self {
            XdpTx::Page { page, .. } => match pool {
                Some(pool) => pool.recycle(page),
                // Pages only reach the XDP_TX SQ, whose release passes its pool; a page
                // without one is leaked with a warning rather than put in a wrong pool.
                None => drop(page),
            },
            XdpTx::Frame(f) => f.return_napi(),
            // Counted by the caller, who reports completions to the pool in order.
            XdpTx::Xsk(_) => {}
        }
    }
}

impl TxPacket for XdpTx {
    fn pkt_len(&self) -> u32 {
        match self {
            XdpTx::Page { len, .. } => *len,
            XdpTx::Frame(f) => f.len(),
            XdpTx::Xsk(d) => d.len(),
        }
    }

    // A page range that is not inside its page reads as empty, which the attribute stage
    // refuses as malformed (length mismatch): nothing out of the page is ever sent.
    fn linear(&self) -> &[u8] {
        match self {
            XdpTx::Page { page, off, len } => page.data(*off, *len).unwrap_or(&[]),
            XdpTx::Frame(f) => f.data(),
            XdpTx::Xsk(d) => d.data(),
        }
    }

    fn nr_frags(&self) -> usize {
        0
    }

    fn frag_len(&self, _i: usize) -> u32 {
        0
    }
}

/// Which of a channel's XDP SQs an environment drives.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum XdpSqKind {
    /// The `XDP_TX` SQ: pages of the channel's pool, already mapped by the pool.
    Tx,
    /// The `ndo_xdp_xmit` SQ: redirected frames, mapped and unmapped here.
    Redirect,
    /// The XSK SQ: descriptors of an AF_XDP socket's UMEM, mapped by the pool.
    Xsk,
    /// The internal control (ICO) SQ: NOPs only (`ndo_xsk_wakeup`).
    Ico,
}

/// What an XDP SQ needs from the kernel: registers, the DMA API and the pool, and a
/// stand-in for the netdev TX queue (XDP SQs have no BQL and no stack queue: a full ring
/// drops the frame).
pub(crate) struct XdpEnv<'a> {
    /// The device's registers.
    pub(crate) mmio: Bar<'a>,
    /// DMA mapping of redirected frames.
    pub(crate) dma: &'a DmaDevice,
    /// The channel's page pool (XDP_TX pages are synced for the device through it).
    pub(crate) pool: Option<&'a PagePool>,
    /// Which SQ.
    pub(crate) kind: XdpSqKind,
    /// The ring is past its stop room.
    pub(crate) full: &'a mut bool,
}

/// Implements [`Mmio`](crate::hwif::hw::Mmio) and [`Barriers`](crate::hwif::hw::Barriers)
/// for an environment with an `mmio` field: the function's registers, the kernel's barriers
/// (the XDP environments here and the skb path's in `family::env`).
macro_rules! via_bar {
    ($env:ident) => {
        impl $crate::hwif::hw::Mmio for $env<'_> {
            fn write64(&self, offset: u32, bytes: [u8; 8]) {
                self.mmio.write64(offset, bytes);
            }

            fn write32(&self, offset: u32, value: u32) {
                self.mmio.write32(offset, value);
            }

            fn read32(&self, offset: u32) -> u32 {
                self.mmio.read32(offset)
            }
        }

        impl $crate::hwif::hw::Barriers for $env<'_> {
            fn dma_wmb(&self) {
                self.mmio.dma_wmb();
            }

            fn dma_rmb(&self) {
                self.mmio.dma_rmb();
            }

            fn wmb(&self) {
                self.mmio.wmb();
            }
        }
    };
}
pub(crate) use via_bar;

via_bar!(XdpEnv);

impl TxDmaMap<XdpTx> for XdpEnv<'_> {
    fn map_linear(&mut self, pkt: &XdpTx, offset: u32, len: u32) -> Option<DmaAddr> {
        match (pkt, self.kind) {
            (XdpTx::Page { page, off, .. }, XdpSqKind::Tx) => {
                let at = off.checked_add(offset)?;
                page.data(at, len)?;
                self.pool?.sync_for_device(page, at, len);
                Some(page.dma_addr() + u64::from(at))
            }
            (XdpTx::Frame(f), XdpSqKind::Redirect) => self
                .dma
                .map_xdp_frame(f, offset, len)
                .ok()
                .map(|m| m.addr()),
            // The pool mapped the whole UMEM.
            (XdpTx::Xsk(d), XdpSqKind::Xsk) => (u64::from(offset) + u64::from(len)
                <= u64::from(d.len()))
            .then(|| d.dma_addr() + u64::from(offset)),
            // Each SQ carries one kind of frame; anything else fails to map (dropped).
            _ => None,
        }
    }

    fn map_frag(&mut self, _pkt: &XdpTx, _index: usize) -> Option<DmaAddr> {
        None
    }

    fn unmap(&mut self, entry: DmaEntry) {
        // XDP_TX pages stay mapped by their pool.
        if self.kind == XdpSqKind::Redirect {
            self.dma.unmap_raw(entry.addr, entry.len, false);
        }
    }
}

impl DpTxQueue for XdpEnv<'_> {
    fn stop(&mut self) {
        *self.full = true;
    }

    fn wake(&mut self) {
        *self.full = false;
    }

    fn is_stopped(&self) -> bool {
        *self.full
    }

    // The caller rings explicitly (once per NAPI poll or per ndo_xdp_xmit batch).
    fn sent(&mut self, _bytes: u32, _xmit_more: bool) -> bool {
        false
    }

    fn completed(&mut self, _pkts: u32, _bytes: u32) {}
}

impl RxBuffer for XskBuf {
    fn dma_addr(&self) -> DmaAddr {
        XskBuf::dma_addr(self)
    }
}

/// What an XSK RQ needs from the kernel: buffers from the socket's fill ring, the registers
/// and barriers.
pub(crate) struct XskRxEnv<'a> {
    /// The queue's XSK buffer pool.
    pub(crate) pool: XskPool,
    /// The device's registers.
    pub(crate) mmio: Bar<'a>,
    /// The fill ring ran dry during this round (the socket must be woken to refill it).
    pub(crate) alloc_failed: bool,
}

impl RxBufProvider<XskBuf> for XskRxEnv<'_> {
    fn alloc(&mut self) -> Option<XskBuf> {
        let b = self.pool.alloc();
        if b.is_none() {
            self.alloc_failed = true;
        }
        b
    }

    fn recycle(&mut self, buf: XskBuf) {
        buf.free();
    }
}

via_bar!(XskRxEnv);
