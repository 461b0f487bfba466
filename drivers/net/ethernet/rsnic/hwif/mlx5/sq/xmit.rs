// SPDX-License-Identifier: GPL-2.0

//! The mlx5 SQ's transmit path (spec A.5, A.6, B.1): [`Sq::xmit`] and its stages, WQE fill,
//! complete and finish (upstream `en_tx.c`: `mlx5e_xmit`, `mlx5e_sq_xmit_wqe`,
//! `mlx5e_txwqe_build_dsegs`, `mlx5e_txwqe_complete`), and the flush and reject paths.

use super::{asks_cqe, DmaFifo, PktFifo, Sq, WqeInfo, WqeInfos};
use crate::hwif::hw::{Barriers, Coherent, Mmio};
use crate::hwif::mlx5::seg::{
    CtrlSeg, DataSeg, EthSeg, CTRL_CQ_UPDATE, INL_HDR_START_SZ, MPWQE_INLINE_MAX, SEND_WQE_BB,
    SEND_WQE_DS,
};
use crate::hwif::mlx5::stats::add;
use crate::hwif::mlx5::tx::{
    tx_attr, tx_attr_common, tx_wqe_attr, DmaEntry, DmaKind, InlineMode, TxAttr, TxCsum, TxDmaMap,
    TxPacket, TxQueue, TxReject, TxRejectReason, TxWqeAttr,
};

impl<P: TxPacket, C: Coherent, W: WqeInfos<P>, F: PktFifo<P>, D: DmaFifo> Sq<P, C, W, F, D> {
    pub(super) fn reject<E>(
        &mut self,
        pkt: P,
        reason: TxRejectReason,
        xmit_more: bool,
        env: &mut E,
    ) -> TxReject<P>
    where
        E: Mmio + Barriers + TxQueue,
    {
        if reason == TxRejectReason::Busy {
            add(&mut self.stats.busy, 1);
            self.check_stop(env);
        } else {
            add(&mut self.stats.dropped, 1);
        }
        // Whatever was queued with xmit_more must not wait for a packet that will not come.
        if self.error.is_none()
            && (matches!(reason, TxRejectReason::Busy | TxRejectReason::MapError) || !xmit_more)
        {
            self.tx_flush(env);
        }
        TxReject { pkt, reason }
    }

    /// Transmits one packet (`mlx5e_xmit`). `xmit_more`: more packets follow in this burst.
    ///
    /// On success the SQ owns the packet until a completion hands it back. On failure the
    /// packet comes back with the reason; the caller frees it (or requeues it if `Busy`).
    #[inline]
    pub fn xmit<E>(&mut self, pkt: P, xmit_more: bool, env: &mut E) -> Result<(), TxReject<P>>
    where
        E: Mmio + Barriers + TxDmaMap<P> + TxQueue,
    {
        // The common packet on an MPWQE SQ goes straight to the (out-of-line) session: this
        // test needs no stack frame, so the call is a tail call.
        if self.common_to_session && self.error.is_none() {
            if let Some(attr) = tx_attr_common(&pkt, InlineMode::None) {
                return self.xmit_mpwqe(pkt, attr.csum, xmit_more, env);
            }
        }
        self.xmit_staged(pkt, xmit_more, env)
    }

    /// [`Sq::xmit`] for every packet but the common one on an MPWQE SQ: the stages. Out of
    /// line, so that [`Sq::xmit`] is only the test and two tail calls (its register
    /// saves are paid on this path only).
    #[inline(never)]
    pub(super) fn xmit_staged<E>(
        &mut self,
        pkt: P,
        xmit_more: bool,
        env: &mut E,
    ) -> Result<(), TxReject<P>>
    where
        E: Mmio + Barriers + TxDmaMap<P> + TxQueue,
    {
        if self.error.is_some() {
            return Err(self.reject(pkt, TxRejectReason::SqError, xmit_more, env));
        }
        let attr = match tx_attr_common(&pkt, self.p.min_inline) {
            Some(attr) => {
                // MPWQE-eligible by construction.
                if self.p.mpwqe {
                    return self.xmit_mpwqe(pkt, attr.csum, xmit_more, env);
                }
                // (With MPWQE off no session is ever open: `set_mpwqe` needs an idle SQ.)
                return self.xmit_common(pkt, &attr, xmit_more, env);
            }
            None => {
                // The device demands inline headers: a small common packet joins a session
                // inlined whole ([`Sq::inline_required`]).
                if self.inline_required {
                    if let Some(attr) = tx_attr_common(&pkt, InlineMode::None)
                        .filter(|a| a.headlen <= MPWQE_INLINE_MAX)
                    {
                        return self.xmit_mpwqe(pkt, attr.csum, xmit_more, env);
                    }
                }
                let attr = match tx_attr(&pkt, self.p.min_inline, self.p.vlan_need_l2_inline) {
                    Ok(a) => a,
                    Err(r) => return Err(self.reject(pkt, r, xmit_more, env)),
                };
                if self.p.mpwqe && attr.mpwqe_eligible() {
                    return self.xmit_mpwqe(pkt, attr.csum, xmit_more, env);
                }
                attr
            }
        };
        self.mpwqe_ensure_complete(env);
        let wattr = match tx_wqe_attr(&attr, self.p.max_sq_wqebbs) {
            Ok(w) => w,
            Err(r) => return Err(self.reject(pkt, r, xmit_more, env)),
        };
        let Some(pi) = self.get_next_pi(wattr.num_wqebbs) else {
            return Err(self.reject(pkt, TxRejectReason::Busy, xmit_more, env));
        };
        let num_dma = match self.fill_wqe(pi, &pkt, &attr, &wattr, env) {
            Ok(n) => n,
            Err(r) => return Err(self.reject(pkt, r, xmit_more, env)),
        };
        if xmit_more {
            add(&mut self.stats.xmit_more, 1);
        }
        self.complete_wqe(pi, pkt, &attr, &wattr, num_dma, xmit_more, env);
        Ok(())
    }

    /// The regular WQE of the common packet ([`tx_attr_common`]: linear, nothing inline, no
    /// VLAN tag, not GSO): ctrl, eth and one data segment, 3 DS in one WQEBB, built on the
    /// stack and written in one access (stages 2 and 3's writes; the bytes are those
    /// [`Sq::fill_wqe`] and [`Sq::complete_wqe`] would write).
    #[inline(always)]
    pub(super) fn xmit_common<E>(
        &mut self,
        pkt: P,
        attr: &TxAttr,
        xmit_more: bool,
        env: &mut E,
    ) -> Result<(), TxReject<P>>
    where
        E: Mmio + Barriers + TxDmaMap<P> + TxQueue,
    {
        // One WQEBB never crosses a fragment's edge: no NOP padding, only the room check
        // (`get_next_pi` for a size of 1).
        if !self.has_room_for(1) {
            return Err(self.reject(pkt, TxRejectReason::Busy, xmit_more, env));
        }
        let pi = self.pc & self.mask;
        let Some(addr) = env.map_linear(&pkt, 0, attr.headlen) else {
            return Err(self.reject(pkt, TxRejectReason::MapError, xmit_more, env));
        };
        self.dma_fifo.push(DmaEntry {
            addr,
            len: attr.headlen,
            kind: DmaKind::Single,
        });
        let next = self.pc.wrapping_add(1);
        let ctrl = CtrlSeg {
            opcode: attr.opcode,
            wqe_index: self.pc,
            sqn: self.p.sqn,
            ds: 3,
            fm_ce_se: if asks_cqe(self.pc, next) {
                CTRL_CQ_UPDATE
            } else {
                0
            },
            ..CtrlSeg::default()
        };
        let eseg = EthSeg {
            cs_flags: attr.cs_flags(),
            ..EthSeg::default()
        };
        let dseg = DataSeg {
            byte_count: attr.headlen,
            lkey: self.p.lkey,
            addr,
        };
        let mut wqe = [0u8; 3 * SEND_WQE_DS];
        wqe[..SEND_WQE_DS].copy_from_slice(&ctrl.encode());
        wqe[SEND_WQE_DS..2 * SEND_WQE_DS].copy_from_slice(&eseg.encode());
        wqe[2 * SEND_WQE_DS..].copy_from_slice(&dseg.encode());
        let wqe_off = usize::from(pi) * SEND_WQE_BB;
        self.wq.write(wqe_off, &wqe);
        if xmit_more {
            add(&mut self.stats.xmit_more, 1);
        }
        self.finish_wqe(pi, pkt, attr, 1, 1, (wqe_off, ctrl), xmit_more, env);
        Ok(())
    }

    /// Stage 2 (`mlx5e_sq_xmit_wqe`): eth seg, inline header, data segments. Returns the
    /// number of dma FIFO entries pushed. On a mapping failure, everything it mapped is
    /// unmapped again.
    #[inline(always)]
    pub(super) fn fill_wqe<M: TxDmaMap<P>>(
        &mut self,
        pi: u16,
        pkt: &P,
        attr: &TxAttr,
        wattr: &TxWqeAttr,
        map: &mut M,
    ) -> Result<u8, TxRejectReason> {
        let wqe_off = usize::from(pi) * SEND_WQE_BB;
        let mut eseg = EthSeg {
            cs_flags: attr.cs_flags(),
            mss: attr.mss,
            ..EthSeg::default()
        };
        let ihs = usize::from(attr.ihs);
        let linear = pkt.linear();
        let inl_off = wqe_off + 2 * SEND_WQE_DS;
        if ihs > 0 {
            let h = linear.get(..ihs).ok_or(TxRejectReason::Malformed)?;
            if let Some(tag) = attr.vlan {
                // Inline copy: MACs (12) | TPID | TCI | the rest of the headers.
                let tpid: u16 = if tag.dot1ad {
                    crate::hwif::hdr::ETH_P_8021AD
                } else {
                    crate::hwif::hdr::ETH_P_8021Q
                };
                let t = tpid.to_be_bytes();
                let v = tag.tci.to_be_bytes();
                let (Some(macs), Some(rest)) = (h.get(INL_HDR_START_SZ..12), h.get(12..)) else {
                    return Err(TxRejectReason::Malformed);
                };
                eseg.set_inline((ihs + 4) as u16, [h[0], h[1]]);
                self.wq.write(inl_off, macs);
                self.wq.write(inl_off + 10, &[t[0], t[1], v[0], v[1]]);
                self.wq.write(inl_off + 14, rest);
            } else {
                eseg.set_inline(ihs as u16, [h[0], *h.get(1).unwrap_or(&0)]);
                if let Some(rest) = h.get(INL_HDR_START_SZ..) {
                    self.wq.write(inl_off, rest);
                }
            }
            let used = ihs + if attr.vlan.is_some() { 4 } else { 0 } - INL_HDR_START_SZ.min(ihs);
            let room = usize::from(wattr.ds_cnt_inl) * SEND_WQE_DS;
            if room > used {
                self.wq.zero(inl_off + used, room - used);
            }
        } else if let Some(tag) = attr.vlan {
            eseg.set_vlan_insert(tag.tci, tag.dot1ad);
        }
        self.wq.write(wqe_off + SEND_WQE_DS, &eseg.encode());

        let mut dseg_off = inl_off + usize::from(wattr.ds_cnt_inl) * SEND_WQE_DS;
        let mut num_dma: u32 = 0;
        let lkey = self.p.lkey;
        if attr.headlen > 0 {
            let Some(addr) = map.map_linear(pkt, u32::from(attr.ihs), attr.headlen) else {
                return Err(TxRejectReason::MapError);
            };
            self.dma_fifo.push(DmaEntry {
                addr,
                len: attr.headlen,
                kind: DmaKind::Single,
            });
            num_dma += 1;
            let d = DataSeg {
                byte_count: attr.headlen,
                lkey,
                addr,
            };
            self.wq.write(dseg_off, &d.encode());
            dseg_off += SEND_WQE_DS;
        }
        for i in 0..pkt.nr_frags() {
            let len = pkt.frag_len(i);
            if len == 0 {
                continue;
            }
            let Some(addr) = map.map_frag(pkt, i) else {
                self.dma_fifo.unwind(num_dma, map);
                return Err(TxRejectReason::MapError);
            };
            self.dma_fifo.push(DmaEntry {
                addr,
                len,
                kind: DmaKind::Page,
            });
            num_dma += 1;
            let d = DataSeg {
                byte_count: len,
                lkey,
                addr,
            };
            self.wq.write(dseg_off, &d.encode());
            dseg_off += SEND_WQE_DS;
        }
        Ok(num_dma as u8)
    }

    /// Stage 3 (`mlx5e_txwqe_complete`): the ctrl seg, then [`Sq::finish_wqe`].
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) fn complete_wqe<E>(
        &mut self,
        pi: u16,
        pkt: P,
        attr: &TxAttr,
        wattr: &TxWqeAttr,
        num_dma: u8,
        xmit_more: bool,
        env: &mut E,
    ) where
        E: Mmio + Barriers + TxQueue,
    {
        let mut ctrl = CtrlSeg {
            opcode: attr.opcode,
            wqe_index: self.pc,
            sqn: self.p.sqn,
            ds: wattr.ds_cnt as u8,
            ..CtrlSeg::default()
        };
        let wqe_off = usize::from(pi) * SEND_WQE_BB;
        self.wq.write(wqe_off, &ctrl.encode());
        // One WQE in 32 (a predictable branch; the ctrl seg above stays a constant pattern).
        if asks_cqe(self.pc, self.pc.wrapping_add(wattr.num_wqebbs)) {
            ctrl.fm_ce_se = CTRL_CQ_UPDATE;
            self.wq.write(wqe_off + 11, &[CTRL_CQ_UPDATE]);
        }
        self.finish_wqe(
            pi,
            pkt,
            attr,
            wattr.num_wqebbs,
            num_dma,
            (wqe_off, ctrl),
            xmit_more,
            env,
        );
    }

    /// The end of stage 3, once the WQE is written: counters, `wqe_info`, `pc`, stop check,
    /// BQL, and the doorbell (with `last`, the WQE's offset and ctrl seg) if the burst ends
    /// or the queue stopped.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) fn finish_wqe<E>(
        &mut self,
        pi: u16,
        pkt: P,
        attr: &TxAttr,
        num_wqebbs: u16,
        num_dma: u8,
        last: (usize, CtrlSeg),
        xmit_more: bool,
        env: &mut E,
    ) where
        E: Mmio + Barriers + TxQueue,
    {
        let s = &mut self.stats;
        add(&mut s.packets, u64::from(attr.segs));
        add(&mut s.bytes, u64::from(attr.num_bytes));
        add(&mut s.wqes, 1);
        if attr.mss != 0 {
            add(&mut s.tso_packets, 1);
            add(
                &mut s.tso_bytes,
                u64::from(pkt.pkt_len().saturating_sub(u32::from(attr.ihs))),
            );
        }
        if attr.vlan.is_some() {
            add(&mut s.added_vlan_packets, 1);
        }
        match attr.csum {
            TxCsum::None => add(&mut s.csum_none, 1),
            TxCsum::Partial => add(&mut s.csum_partial, 1),
            TxCsum::PartialInner => add(&mut s.csum_partial_inner, 1),
        }
        if let Some(wi) = self.wqe_info.get_mut(usize::from(pi)) {
            *wi = WqeInfo {
                pkt: Some(pkt),
                num_bytes: attr.num_bytes,
                num_dma,
                num_wqebbs: num_wqebbs as u8,
                num_fifo_pkts: 0,
            };
        }
        self.unrung = Some(last);
        self.pc = self.pc.wrapping_add(num_wqebbs);
        self.check_stop(env);
        if env.sent(attr.num_bytes, xmit_more) {
            self.ring_pending(env);
        }
    }
}
