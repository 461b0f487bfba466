// SPDX-License-Identifier: GPL-2.0

//! Enhanced TX MPWQE sessions for SKBs (opcode 0x29, spec B.2), kept out of line.
//!
//! One WQE = ctrl | eth seg shared by the session | one data segment per packet (or, with
//! `mpwqe_inline` and enough packets outstanding, an inline segment per small packet; on an
//! SQ whose device demands inline headers, [`Sq::inline_required`], an inline segment per
//! packet always).
//! A session reserves contiguous room for a full session when it starts; `pc` moves only
//! when it closes. It closes (without ringing) when a packet that cannot join arrives, and
//! closes and rings when it is full or the burst ends.

use super::{DmaFifo, PktFifo, Session, Sq, WqeInfo, WqeInfos};
use crate::hwif::hw::{Barriers, Coherent, Mmio};
use crate::hwif::mlx5::seg::{
    inline_seg_ds, write_inline_seg, CtrlSeg, DataSeg, EthSeg, CTRL_CQ_UPDATE, MPWQE_INLINE_MAX,
    OPCODE_ENHANCED_MPSW, SEND_WQE_BB, SEND_WQE_DS, WQEBB_NUM_DS,
};
use crate::hwif::mlx5::stats::add;
use crate::hwif::mlx5::tx::{
    csum_flags, DmaEntry, DmaKind, TxCsum, TxDmaMap, TxPacket, TxQueue, TxReject, TxRejectReason,
};

/// Outstanding packets at or below which inlining turns off.
pub(super) const INLINE_WATERMARK_LOW: u16 = 10;
/// Outstanding packets at or above which inlining turns on.
pub(super) const INLINE_WATERMARK_HIGH: u16 = 128;
/// DS units of the largest inline segment (a packet of [`MPWQE_INLINE_MAX`] bytes).
const INLINE_SEG_MAX_DS: u16 = inline_seg_ds(MPWQE_INLINE_MAX) as u16;

impl<P: TxPacket, C: Coherent, W: WqeInfos<P>, F: PktFifo<P>, D: DmaFifo> Sq<P, C, W, F, D> {
    /// `mlx5e_tx_mpwqe_session_start`: reserves a full session, writes ctrl (zero) and the
    /// eth seg (`cs_flags`, the only offload bits rsnic sets), re-evaluates the inline
    /// hysteresis. `None` if no room.
    fn session_start(&mut self, csum: TxCsum) -> Option<Session> {
        let pi = self.get_next_pi(self.max_mpw_wqebbs)?;
        let e = EthSeg {
            cs_flags: csum_flags(csum),
            ..EthSeg::default()
        };
        let mut hdr = [0u8; 2 * SEND_WQE_DS];
        hdr[SEND_WQE_DS..].copy_from_slice(&e.encode());
        self.wq.write(usize::from(pi) * SEND_WQE_BB, &hdr);
        if self.p.mpwqe_inline && !self.inline_required {
            let outstanding = self.outstanding_pkts();
            if self.inline_on && outstanding <= INLINE_WATERMARK_LOW {
                self.inline_on = false;
            } else if !self.inline_on && outstanding >= INLINE_WATERMARK_HIGH {
                self.inline_on = true;
            }
        } else {
            // Off, or always on where the device demands inline headers.
            self.inline_on = self.inline_required;
        }
        let max_ds = self.max_mpw_wqebbs * WQEBB_NUM_DS;
        // With inlining, full when a 16-DS inline segment (252 bytes) no longer fits.
        let ds_full = if self.inline_on {
            max_ds.saturating_sub(INLINE_SEG_MAX_DS - 1)
        } else {
            max_ds
        };
        let s = Session {
            pi,
            csum,
            ds_count: 2,
            ds_full: ds_full as u8,
            pkt_start: self.pkt_pc,
            bytes_count: 0,
        };
        self.session = Some(s);
        add(&mut self.stats.mpwqe_blks, 1);
        Some(s)
    }

    /// `mlx5e_tx_mpwqe_session_complete` without the stop check: ctrl seg, `wqe_info`,
    /// `pc`. The session becomes the newest unannounced WQE. Its packets are counted here,
    /// once per session: the counters include a session's packets from when it is posted
    /// (at the latest when the burst ends).
    pub(super) fn close_session(&mut self, s: Session) {
        let nw = u16::from(s.ds_count).div_ceil(WQEBB_NUM_DS);
        let ctrl = CtrlSeg {
            opcode: OPCODE_ENHANCED_MPSW,
            wqe_index: self.pc,
            sqn: self.p.sqn,
            ds: s.ds_count,
            fm_ce_se: if super::asks_cqe(self.pc, self.pc.wrapping_add(nw)) {
                CTRL_CQ_UPDATE
            } else {
                0
            },
            ..CtrlSeg::default()
        };
        let off = usize::from(s.pi) * SEND_WQE_BB;
        self.wq.write(off, &ctrl.encode());
        self.unrung = Some((off, ctrl));
        // At most one packet per DS: fits the u8.
        let pkts = self.pkt_pc.wrapping_sub(s.pkt_start);
        if let Some(wi) = self.wqe_info.get_mut(usize::from(s.pi)) {
            *wi = WqeInfo {
                pkt: None,
                num_bytes: s.bytes_count,
                num_dma: 0,
                num_wqebbs: nw as u8,
                num_fifo_pkts: pkts as u8,
            };
        }
        self.pc = self.pc.wrapping_add(nw);
        let st = &mut self.stats;
        add(&mut st.wqes, 1);
        let pkts = u64::from(pkts);
        add(&mut st.packets, pkts);
        add(&mut st.mpwqe_pkts, pkts);
        add(&mut st.bytes, u64::from(s.bytes_count));
        match s.csum {
            TxCsum::None => add(&mut st.csum_none, pkts),
            TxCsum::Partial => add(&mut st.csum_partial, pkts),
            TxCsum::PartialInner => add(&mut st.csum_partial_inner, pkts),
        }
    }

    /// Closes the open session: ctrl, bookkeeping, `pc`, stop check. No doorbell.
    fn session_complete<E: TxQueue>(&mut self, env: &mut E) {
        if let Some(s) = self.session.take() {
            self.close_session(s);
            self.check_stop(env);
        }
    }

    /// `mlx5e_tx_mpwqe_ensure_complete`: closes an open session without ringing (the next
    /// doorbell covers it). A session without packets is abandoned: it has no WQE to post.
    #[inline(always)]
    pub(super) fn mpwqe_ensure_complete<E: TxQueue>(&mut self, env: &mut E) {
        match self.session {
            Some(s) if s.pkt_start == self.pkt_pc => self.session = None,
            Some(_) => {
                self.session_complete(env);
            }
            None => {}
        }
    }

    /// The open session if a packet with checksum request `csum` can join it; else the open
    /// one is closed (without ringing) and a new one started. `None` if the ring has no room.
    #[inline(always)]
    fn session_for<E: TxQueue>(&mut self, csum: TxCsum, env: &mut E) -> Option<Session> {
        match self.session {
            Some(s) if s.csum == csum => Some(s),
            _ => {
                self.session_complete(env);
                self.session_start(csum)
            }
        }
    }

    /// The MPWQE path for one eligible packet (`mlx5e_sq_xmit_mpwqe`). Of the packet's
    /// attributes it needs only the checksum request (the rest of an eligible packet's are
    /// fixed: SEND, nothing inline, the whole packet in one data segment), so that
    /// [`Sq::xmit`] hands over in registers.
    #[inline(never)]
    pub(super) fn xmit_mpwqe<E>(
        &mut self,
        pkt: P,
        csum: TxCsum,
        xmit_more: bool,
        env: &mut E,
    ) -> Result<(), TxReject<P>>
    where
        E: Mmio + Barriers + TxDmaMap<P> + TxQueue,
    {
        let len = pkt.pkt_len();
        let Some(s) = self.session_for(csum, env) else {
            return Err(self.reject(pkt, TxRejectReason::Busy, xmit_more, env));
        };
        let seg_off = usize::from(s.pi) * SEND_WQE_BB + usize::from(s.ds_count) * SEND_WQE_DS;
        // An inline segment must fit the room reserved for the session. The full check below
        // keeps room for the largest one after every packet, but not for the first packet of
        // a session when the session is small (`max_sq_wqebbs` < 5): then send it by
        // address.
        let (ds, mapping) = if self.inline_on
            && len <= MPWQE_INLINE_MAX
            && pkt.linear().len() == len as usize
            && u32::from(s.ds_count) + inline_seg_ds(len)
                <= u32::from(self.max_mpw_wqebbs * WQEBB_NUM_DS)
        {
            let ds = write_inline_seg(&self.wq, seg_off, pkt.linear());
            add(&mut self.stats.inlnw, 1);
            (ds as u8, None)
        } else {
            let Some(addr) = env.map_linear(&pkt, 0, len) else {
                return Err(self.reject(pkt, TxRejectReason::MapError, xmit_more, env));
            };
            let d = DataSeg {
                byte_count: len,
                lkey: self.p.lkey,
                addr,
            };
            self.wq.write(seg_off, &d.encode());
            (
                1,
                Some(DmaEntry {
                    addr,
                    len,
                    kind: DmaKind::Single,
                }),
            )
        };
        let ds_count = s.ds_count + ds;
        if let Some(open) = self.session.as_mut() {
            open.ds_count = ds_count;
            open.bytes_count = open.bytes_count.wrapping_add(len);
        }
        self.push_pkt(pkt, mapping);
        add(&mut self.stats.xmit_more, u64::from(xmit_more));

        if ds_count >= s.ds_full {
            self.session_complete(env);
            if env.sent(len, xmit_more) {
                self.ring_pending(env);
            }
        } else if env.sent(len, xmit_more) {
            self.session_complete(env);
            self.ring_pending(env);
        }
        Ok(())
    }
}
