// SPDX-License-Identifier: GPL-2.0

//! XDP on a channel: what an XDP transmit queue carries, what it needs from the kernel, and
//! the counters of the receive side's XDP actions.
//!
//! A ConnectX channel has two XDP SQs, as an mlx5e channel does: one for `XDP_TX` (frames
//! the channel's own program sends back, posted from its NAPI poll with one doorbell per
//! poll) and one for `ndo_xdp_xmit` (frames redirected from other devices, one doorbell per
//! batch). Both are ordinary `dp::mlx5` SQs over [`XdpTx`] packets, so they use the
//! Enhanced MPWQE sessions of the skb path with small frames inlined (the inline
//! watermarks of `dp::mlx5::sq`). A MANA channel has none: as upstream mana does,
//! `XDP_TX` and redirected frames go out through the regular SQ as skbs. With AF_XDP
//! zero-copy both families add an XSK SQ (descriptors of the socket's TX ring) and an XSK
//! RQ; ConnectX also an ICO SQ for wake-up NOPs, while MANA, which has no NOP WQE,
//! schedules NAPI directly from `ndo_xsk_wakeup`.

use crate::bus::Bar;
use crate::counters::wadd;
use crate::dp::hw::{Barriers, DmaAddr, Mmio};
use crate::dp::pkt::{DmaEntry, TxDmaMap, TxPacket, TxQueue as DpTxQueue};
use crate::dp::pkt::{RxBufProvider, RxBuffer};
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

impl Mmio for XdpEnv<'_> {
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

impl Barriers for XdpEnv<'_> {
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

/// Counters of the XDP actions on one RX queue (kept by the channel, family-independent).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct XdpStats {
    /// Frames the program dropped, aborted on, or failed to redirect (`rx_xdp_drop`).
    pub(crate) drop: u64,
    /// Of those, `XDP_ABORTED`, unknown actions and failed redirects (traced).
    pub(crate) aborted: u64,
    /// Frames redirected (`rx_xdp_redirect`).
    pub(crate) redirect: u64,
    /// Frames the program passed to the stack.
    pub(crate) pass: u64,
    /// `XDP_TX` verdicts (MANA's `rx_xdp_tx`; mlx5 counts what the XDP SQ took in its own
    /// counters).
    pub(crate) tx: u64,
    /// `XDP_TX` frames dropped: the XDP SQ was full (`rx_xdp_tx_full`).
    pub(crate) tx_full: u64,
    /// `XDP_TX` frames dropped for another reason (`rx_xdp_tx_err`).
    pub(crate) tx_err: u64,
    /// Bytes of the frames a program consumed (dropped, redirected, sent back): what the RQ
    /// received but the stack never saw.
    pub(crate) consumed_bytes: u64,
    /// Frames taken by `ndo_xdp_xmit` on this channel's queue (`tx_xdp_xmit` on MANA).
    pub(crate) xmit: u64,
    /// Redirected frames refused: the XDP SQ was full (`tx_xdp_full`).
    pub(crate) xmit_full: u64,
    /// Redirected frames refused for another reason (`tx_xdp_err`).
    pub(crate) xmit_err: u64,
}

impl XdpStats {
    /// Frames a program consumed: dropped (aborted included), redirected, or sent back
    /// (`XDP_TX`, whether or not the XDP SQ took them).
    pub(crate) fn consumed(&self) -> u64 {
        self.drop.wrapping_add(self.redirect).wrapping_add(self.tx)
    }

    /// Adds `b` into `self`.
    pub(crate) fn accumulate(&mut self, b: &Self) {
        wadd(&mut self.drop, b.drop);
        wadd(&mut self.aborted, b.aborted);
        wadd(&mut self.redirect, b.redirect);
        wadd(&mut self.pass, b.pass);
        wadd(&mut self.tx, b.tx);
        wadd(&mut self.tx_full, b.tx_full);
        wadd(&mut self.tx_err, b.tx_err);
        wadd(&mut self.consumed_bytes, b.consumed_bytes);
        wadd(&mut self.xmit, b.xmit);
        wadd(&mut self.xmit_full, b.xmit_full);
        wadd(&mut self.xmit_err, b.xmit_err);
    }
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

impl Mmio for XskRxEnv<'_> {
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

impl Barriers for XskRxEnv<'_> {
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

/// Counters of a channel's AF_XDP zero-copy queues (mlx5e's `rx_xsk_*`, `tx_xsk_*`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct XskStats {
    /// Frames the program redirected (into the socket).
    pub(crate) xdp_redirect: u64,
    /// Frames dropped by the program, aborted or failed to redirect.
    pub(crate) xdp_drop: u64,
    /// Frames copied into skbs for the stack (XDP_PASS, or no program).
    pub(crate) pass: u64,
    /// XDP_TX verdicts (copied out of the UMEM and sent on the redirect SQ).
    pub(crate) xdp_tx: u64,
    /// XDP_PASS or XDP_TX frames lost for lack of memory.
    pub(crate) copy_err: u64,
    /// Rounds in which the fill ring ran dry (`rx_xsk_buff_alloc_err`).
    pub(crate) alloc_err: u64,
    /// TX descriptors the XSK SQ could not take (`tx_xsk_err`).
    pub(crate) tx_err: u64,
    /// `ndo_xsk_wakeup` calls that reached the channel (`xsk_wakeups`).
    pub(crate) wakeups: u64,
    /// Of those, the ones that found NAPI scheduled or running and marked it missed
    /// (`xsk_wakeup_missed`): no NOP, no schedule.
    pub(crate) wake_missed: u64,
    /// The NOPs they posted on the ICO SQ (ConnectX, `xsk_wakeup_nops`), or the NAPI polls
    /// they scheduled (MANA, `xsk_wakeup_napi`).
    pub(crate) wake_kicks: u64,
}

impl XskStats {
    /// Adds `b` into `self`.
    pub(crate) fn accumulate(&mut self, b: &Self) {
        wadd(&mut self.xdp_redirect, b.xdp_redirect);
        wadd(&mut self.xdp_drop, b.xdp_drop);
        wadd(&mut self.pass, b.pass);
        wadd(&mut self.xdp_tx, b.xdp_tx);
        wadd(&mut self.copy_err, b.copy_err);
        wadd(&mut self.alloc_err, b.alloc_err);
        wadd(&mut self.tx_err, b.tx_err);
        wadd(&mut self.wakeups, b.wakeups);
        wadd(&mut self.wake_missed, b.wake_missed);
        wadd(&mut self.wake_kicks, b.wake_kicks);
    }
}
