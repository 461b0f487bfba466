// SPDX-License-Identifier: GPL-2.0

//! What a channel does with a received packet: the skb handed to GRO with its checksum
//! verdict, hash and VLAN tag, or the attached XDP program's verdict (XDP_TX, redirect,
//! drop, pass).
//!
//! Upstream counterpart: `en_rx.c` (skb building) and `en/xdp.c` (`mlx5e_xdp_handle`).

use crate::channel::{Channel, XdpSqSide};
use crate::family::stats::{ChStats, XdpStats};
use crate::family::{Family, RxMeta};
use crate::hwif::csum::{self, Tail};
use crate::hwif::pkt::{RxFrags, TxRejectReason};
use crate::kernel_ext::net::napi::Napi;
use crate::kernel_ext::net::page_pool::{PagePool, RxPage};
use crate::kernel_ext::net::skb::{DropReason, RxCsum, SkBuff};
use crate::kernel_ext::net::xdp::{BpfProg, Verdict, XdpRxq};
use crate::xdp::{XdpSqKind, XdpTx};
use core::sync::atomic::Ordering;

/// What a channel does with one received packet when a program is attached (XDP_TX goes
/// to the XDP_TX SQ, or through the regular SQ as an skb for families without XDP SQs).
pub(super) struct XdpRx<'a, F: Family> {
    pub(super) ch: &'a Channel<F>,
    pub(super) napi: &'a Napi<Channel<F>>,
    pub(super) pool: &'a PagePool,
    pub(super) rxq: &'a XdpRxq,
    pub(super) prog: &'a BpfProg,
    pub(super) xdpsq: Option<&'a mut XdpSqSide<F>>,
    pub(super) xdp: &'a mut XdpStats,
    pub(super) counts: &'a mut ChStats,
    /// A frame was redirected in this poll: flush before it ends.
    pub(super) redirected: bool,
}

impl<F: Family> XdpRx<'_, F> {
    #[inline]
    pub(super) fn rx(&mut self, page: RxPage, m: &RxMeta) {
        let v = self.rxq.run(self.prog, self.pool, page, m.len);
        if !matches!(v, Verdict::Pass { .. }) {
            self.xdp.consumed_bytes += u64::from(m.len);
        }
        match v {
            Verdict::Pass { page, off, len } => {
                self.xdp.pass += 1;
                // Checksum status and hash no longer describe a frame the program changed
                // (mlx5e keeps them; we keep them only when the frame kept its length and
                // place). Never CHECKSUM_COMPLETE under a program, which may have changed
                // the bytes the sum covers (mlx5e's MLX5E_RQ_STATE_NO_CSUM_COMPLETE with
                // an XDP program): the device's verdict at most.
                let intact = off == self.pool.offset() && len == m.len;
                let m = RxMeta { sum: None, ..*m };
                self.ch.deliver(
                    self.napi,
                    self.pool,
                    page,
                    off,
                    len,
                    &m,
                    intact,
                    self.counts,
                    RxFrags::none(),
                );
            }
            Verdict::Tx { page, off, len } => {
                self.xdp.tx += 1;
                self.tx(page, off, len);
            }
            Verdict::Drop(page) => {
                self.xdp.drop += 1;
                self.pool.recycle(page);
            }
            Verdict::Aborted(page) => {
                self.xdp.drop += 1;
                self.xdp.aborted += 1;
                self.pool.recycle(page);
            }
            Verdict::Redirected => {
                self.xdp.redirect += 1;
                self.redirected = true;
            }
        }
    }

    /// XDP_TX of a frame in `page`.
    fn tx(&mut self, page: RxPage, off: u32, len: u32) {
        let shared = &self.ch.shared;
        match self.xdpsq.as_deref_mut() {
            Some(side) => {
                let XdpSqSide {
                    sq, full, posted, ..
                } = side;
                if *full {
                    self.xdp.tx_full += 1;
                    self.pool.recycle(page);
                    return;
                }
                let mut env = shared.xdp_env(XdpSqKind::Tx, Some(self.pool), full);
                match F::xdp_sq_xmit(sq, XdpTx::Page { page, off, len }, &mut env) {
                    Ok(()) => *posted = true,
                    Err(rej) => {
                        if rej.reason == TxRejectReason::Busy {
                            self.xdp.tx_full += 1;
                        } else {
                            self.xdp.tx_err += 1;
                        }
                        rej.pkt.release(Some(self.pool));
                    }
                }
            }
            None => {
                // As mana_xdp_tx: an skb through the channel's own TX queue.
                let q = self.ch.index;
                match self.pool.build_skb_at(page, off, len) {
                    Some(mut skb) => {
                        skb.set_queue_mapping(q as u16);
                        if !shared.xmit_xdp_skb(&self.ch.dev, q, skb, |_, _| ()) {
                            self.xdp.tx_err += 1;
                        }
                    }
                    None => self.xdp.tx_err += 1,
                }
            }
        }
    }
}

impl<F: Family> Channel<F> {
    /// Hands a received packet at `off`, `len` bytes, to GRO. `meta_valid`: the device's
    /// checksum and hash still describe it.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(super) fn deliver(
        &self,
        napi: &Napi<Self>,
        pool: &PagePool,
        page: RxPage,
        off: u32,
        len: u32,
        m: &RxMeta,
        meta_valid: bool,
        counts: &mut ChStats,
        frags: RxFrags<'_, RxPage>,
    ) {
        match pool.build_skb_at(page, off, len) {
            Some(mut skb) => {
                // RX scatter: the packet's further pages become the skb's fragments.
                for (page, len) in frags {
                    if !pool.add_frag(&mut skb, page, len) {
                        counts.rx_dropped += 1;
                        skb.drop_reason(DropReason::NoMem);
                        return;
                    }
                }
                let (csum, (hash, hash_type)) = if meta_valid {
                    (self.rx_csum(m, &skb, counts), self.hash_of(m))
                } else {
                    counts.rx_csum_none += 1;
                    (RxCsum::None, (0, 0))
                };
                if skb.rx_finish(&self.dev, csum, hash, hash_type, self.index as u16) {
                    counts.rx_mcast += 1;
                }
                // A tag the device stripped stays the packet's whatever XDP did to the rest.
                if let Some(t) = m.vlan {
                    skb.put_vlan_tag(t);
                }
                napi.gro_receive(skb);
            }
            None => counts.rx_dropped += 1,
        }
    }

    /// The RSS hash a packet goes up with and its type (0: none): the device's, unless the
    /// user turned `rxhash` off (as mlx5e's `mlx5e_skb_set_hash` under `NETIF_F_RXHASH`).
    #[inline(always)]
    pub(super) fn hash_of(&self, m: &RxMeta) -> (u32, u8) {
        if self.shared.rx_hash.load(Ordering::Relaxed) {
            (m.hash, m.hash_type)
        } else {
            (0, 0)
        }
    }

    /// The checksum status a packet in `skb` (not yet through `eth_type_trans`) goes up
    /// with, as mlx5e's `mlx5e_handle_csum`: none when the user turned `rx` checksumming
    /// off; `CHECKSUM_COMPLETE` from the device's sum where [`csum::complete`] allows and
    /// the port lets it (its `rx_no_csum_complete` flag off); else the device's verdict.
    /// Counts it.
    #[inline(always)]
    fn rx_csum(&self, m: &RxMeta, skb: &SkBuff, counts: &mut ChStats) -> RxCsum {
        if !self.shared.rx_csum.load(Ordering::Relaxed) {
            counts.rx_csum_none += 1;
            return RxCsum::None;
        }
        if let Some(sum) = m.sum {
            if self.shared.rx_csum_complete.load(Ordering::Relaxed) {
                let tail = |off, n| skb.checksum(off, n).unwrap_or(0);
                if let Some((s, t)) = csum::complete(skb.linear(), skb.len(), sum, tail) {
                    counts.rx_csum_complete += 1;
                    match t {
                        Tail::None => {}
                        Tail::Fast => counts.rx_csum_complete_tail += 1,
                        Tail::Slow => counts.rx_csum_complete_tail_slow += 1,
                    }
                    return RxCsum::Complete(s);
                }
            }
        }
        if m.csum_ok {
            counts.rx_csum_unnecessary += 1;
            RxCsum::Unnecessary
        } else {
            counts.rx_csum_none += 1;
            RxCsum::None
        }
    }

    /// The device's verdict, for packets that never go up `CHECKSUM_COMPLETE` (AF_XDP
    /// zero-copy queues run a program): `CHECKSUM_UNNECESSARY` if the device verified the
    /// packet and the user left `rx` checksumming on, else `CHECKSUM_NONE`. Counts it.
    #[inline(always)]
    pub(super) fn csum_verdict(&self, m: &RxMeta, counts: &mut ChStats) -> RxCsum {
        if m.csum_ok && self.shared.rx_csum.load(Ordering::Relaxed) {
            counts.rx_csum_unnecessary += 1;
            RxCsum::Unnecessary
        } else {
            counts.rx_csum_none += 1;
            RxCsum::None
        }
    }
}
