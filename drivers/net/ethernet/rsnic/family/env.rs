// SPDX-License-Identifier: GPL-2.0

//! The kernel adapters of the data path: what `hwif/`'s SQs and RQs call back into while they
//! transmit, complete and refill (the skb as a [`TxPacket`], DMA mapping, the netdev TX
//! queue and BQL, the page pool, the registers and barriers).
//!
//! Upstream counterpart: none as a file; mlx5e makes these calls inline in `en_tx.c` (DMA
//! mapping, BQL) and `en_rx.c` (page pool).

use crate::bus::Bar;
use crate::hwif::hw::DmaAddr;
use crate::hwif::pkt::{
    DmaEntry, DmaKind, Gso, RxBufProvider, RxBuffer, TxCsum, TxDmaMap, TxPacket,
    TxQueue as DpTxQueue, VlanTag,
};
use crate::kernel_ext::dma::DmaDevice;
use crate::kernel_ext::net::page_pool::{PagePool, RxPage};
use crate::kernel_ext::net::queue::TxQueue;
use crate::kernel_ext::net::skb::SkBuff;

/// The transmit side's packet: an skb.
pub(crate) struct TxSkb(pub(crate) SkBuff);

impl TxPacket for TxSkb {
    fn pkt_len(&self) -> u32 {
        self.0.len()
    }

    fn linear(&self) -> &[u8] {
        self.0.linear()
    }

    fn nr_frags(&self) -> usize {
        self.0.nr_frags() as usize
    }

    fn frag_len(&self, i: usize) -> u32 {
        self.0.frag_len(i as u32)
    }

    fn gso(&self) -> Option<Gso> {
        self.0.gso().map(|(size, segs)| Gso {
            size: size as u16,
            segs: segs as u16,
        })
    }

    fn csum(&self) -> TxCsum {
        match self.0.csum_partial() {
            None => TxCsum::None,
            Some(false) => TxCsum::Partial,
            Some(true) => TxCsum::PartialInner,
        }
    }

    fn vlan(&self) -> Option<VlanTag> {
        self.0
            .vlan_tag()
            .map(|(tci, dot1ad)| VlanTag { tci, dot1ad })
    }
}

impl RxBuffer for RxPage {
    fn dma_addr(&self) -> DmaAddr {
        self.buf_dma_addr()
    }
}

crate::xdp::via_bar!(TxEnv);
crate::xdp::via_bar!(RxEnv);

/// What an SQ needs from the kernel while it transmits or completes: the registers, the DMA
/// API and the netdev TX queue (BQL).
pub(crate) struct TxEnv<'a> {
    /// The device's registers.
    pub(crate) mmio: Bar<'a>,
    /// DMA mapping of the packets.
    pub(crate) dma: &'a DmaDevice,
    /// The netdev TX queue (stop/wake, BQL).
    pub(crate) txq: &'a TxQueue,
    /// The channel is closing: its TX queue was disabled and must stay so (completions
    /// reaped during teardown do not wake it).
    pub(crate) closing: bool,
}

impl TxDmaMap<TxSkb> for TxEnv<'_> {
    fn map_linear(&mut self, pkt: &TxSkb, offset: u32, len: u32) -> Option<DmaAddr> {
        self.dma
            .map_skb_head(&pkt.0, offset, len)
            .ok()
            .map(|m| m.addr())
    }

    fn map_frag(&mut self, pkt: &TxSkb, index: usize) -> Option<DmaAddr> {
        self.dma
            .map_skb_frag(&pkt.0, index as u32)
            .ok()
            .map(|m| m.addr())
    }

    fn unmap(&mut self, entry: DmaEntry) {
        self.dma
            .unmap_raw(entry.addr, entry.len, entry.kind == DmaKind::Page);
    }
}

impl DpTxQueue for TxEnv<'_> {
    fn stop(&mut self) {
        self.txq.stop();
    }

    fn wake(&mut self) {
        if !self.closing {
            self.txq.wake();
        }
    }

    fn is_stopped(&self) -> bool {
        !self.closing && self.txq.driver_stopped()
    }

    fn sent(&mut self, bytes: u32, xmit_more: bool) -> bool {
        self.txq.sent(bytes, xmit_more)
    }

    fn completed(&mut self, pkts: u32, bytes: u32) {
        self.txq.completed(pkts, bytes);
    }
}

/// What an RQ needs from the kernel: barriers, the page pool and (MANA) the registers.
pub(crate) struct RxEnv<'a> {
    /// Where RX buffers come from and go back to.
    pub(crate) pool: &'a PagePool,
    /// The device's registers (MANA rings its RQ doorbell through them).
    pub(crate) mmio: Bar<'a>,
}

impl RxBufProvider<RxPage> for RxEnv<'_> {
    fn alloc(&mut self) -> Option<RxPage> {
        self.pool.alloc()
    }

    fn recycle(&mut self, buf: RxPage) {
        self.pool.recycle(buf);
    }
}
