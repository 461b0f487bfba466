// SPDX-License-Identifier: GPL-2.0

//! Enhanced TX MPWQE sessions for SKBs (opcode 0x29, spec B.2), kept out of line.
//!
//! One WQE = ctrl | eth seg shared by the session | one data segment per packet (or, with
//! `mpwqe_inline` and enough packets outstanding, an inline segment per small packet).
//! A session reserves contiguous room for a full session when it starts; `pc` moves only
//! when it closes. It closes (without ringing) when a packet that cannot join arrives, and
//! closes and rings when it is full or the burst ends.

use core::ops::DerefMut;

use super::{FifoEntry, Session, Sq, WqeInfo};
use crate::dp::hw::{Barriers, Coherent, Mmio};
use crate::dp::mlx5::seg::{
    inline_seg_ds, write_inline_seg, CtrlSeg, DataSeg, EthSeg, CTRL_CQ_UPDATE, MPWQE_INLINE_MAX,
    OPCODE_ENHANCED_MPSW, SEND_WQE_BB, SEND_WQE_DS, WQEBB_NUM_DS,
};
use crate::dp::mlx5::stats::add;
use crate::dp::mlx5::tx::{
    csum_flags, DmaEntry, DmaKind, TxCsum, TxDmaMap, TxPacket, TxQueue, TxReject, TxRejectReason,
};

/// Outstanding packets at or below which inlining turns off.
pub(super) const INLINE_WATERMARK_LOW: u16 = 10;
/// Outstanding packets at or above which inlining turns on.
pub(super) const INLINE_WATERMARK_HIGH: u16 = 128;

impl<P, C, W, F, D> Sq<P, C, W, F, D>
where
    P: TxPacket,
    C: Coherent,
    W: DerefMut<Target = [WqeInfo<P>]>,
    F: DerefMut<Target = [FifoEntry<P>]>,
    D: DerefMut<Target = [DmaEntry]>,
{
    /// `mlx5e_tx_mpwqe_session_start`: reserves a full session, writes ctrl (zero) and the
    /// eth seg (`cs_flags`, the only offload bits rsnic sets), re-evaluates the inline
    /// hysteresis. `false` if no room.
    fn session_start(&mut self, cs_flags: u8) -> bool {
        let Some(pi) = self.get_next_pi(self.max_mpw_wqebbs) else {
            return false;
        };
        let e = EthSeg {
            cs_flags,
            ..EthSeg::default()
        };
        let mut hdr = [0u8; 2 * SEND_WQE_DS];
        hdr[SEND_WQE_DS..].copy_from_slice(&e.encode());
        self.wq.write(usize::from(pi) * SEND_WQE_BB, &hdr);
        if self.p.mpwqe_inline {
            let outstanding = self.outstanding_pkts();
            if self.inline_on && outstanding <= INLINE_WATERMARK_LOW {
                self.inline_on = false;
            } else if !self.inline_on && outstanding >= INLINE_WATERMARK_HIGH {
                self.inline_on = true;
            }
        } else {
            self.inline_on = false;
        }
        self.session = Some(Session {
            pi,
            cs_flags,
            ds_count: 2,
            pkt_count: 0,
            bytes_count: 0,
        });
        add(&mut self.stats.mpwqe_blks, 1);
        true
    }

    /// `mlx5e_tx_mpwqe_session_complete` without the stop check: ctrl seg, `wqe_info`,
    /// `pc`. The session becomes the newest unannounced WQE.
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
        if let Some(wi) = self.wqe_info.get_mut(usize::from(s.pi)) {
            *wi = WqeInfo {
                pkt: None,
                num_bytes: s.bytes_count,
                num_dma: 0,
                num_wqebbs: nw as u8,
                num_fifo_pkts: s.pkt_count,
            };
        }
        self.pc = self.pc.wrapping_add(nw);
        add(&mut self.stats.wqes, 1);
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
            Some(s) if s.pkt_count == 0 => self.session = None,
            Some(_) => {
                self.session_complete(env);
            }
            None => {}
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
        let cs_flags = csum_flags(csum);
        // The open session, if this packet can join it; else a new one. Only its position
        // is read here: it is updated in place below.
        let (pi, ds_count) = match self.session {
            Some(ref s) if s.cs_flags == cs_flags => (s.pi, s.ds_count),
            _ => {
                if self.session.is_some() {
                    self.session_complete(env);
                }
                if !self.session_start(cs_flags) {
                    return Err(self.reject(pkt, TxRejectReason::Busy, xmit_more, env));
                }
                match self.session {
                    Some(ref s) => (s.pi, s.ds_count),
                    None => return Err(self.reject(pkt, TxRejectReason::Busy, xmit_more, env)),
                }
            }
        };
        let seg_off = usize::from(pi) * SEND_WQE_BB + usize::from(ds_count) * SEND_WQE_DS;
        let max_ds = self.max_mpw_wqebbs * WQEBB_NUM_DS;
        // An inline segment must fit the room reserved for the session. The full check below
        // keeps room for the largest one after every packet, but not for the first packet of
        // a session when the session is small (`max_sq_wqebbs` < 5): then send it by
        // address.
        let (ds, mapping) = if self.inline_on
            && len <= MPWQE_INLINE_MAX
            && pkt.linear().len() == len as usize
            && u32::from(ds_count) + inline_seg_ds(len) <= u32::from(max_ds)
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
        let ds_count = ds_count + ds;
        if let Some(s) = self.session.as_mut() {
            s.ds_count = ds_count;
            s.pkt_count += 1;
            s.bytes_count = s.bytes_count.wrapping_add(len);
        }
        self.push_pkt(pkt, mapping);
        let st = &mut self.stats;
        add(&mut st.packets, 1);
        add(&mut st.bytes, u64::from(len));
        add(&mut st.mpwqe_pkts, 1);
        if xmit_more {
            add(&mut st.xmit_more, 1);
        }
        match csum {
            TxCsum::None => add(&mut st.csum_none, 1),
            TxCsum::Partial => add(&mut st.csum_partial, 1),
            TxCsum::PartialInner => add(&mut st.csum_partial_inner, 1),
        }

        let ds = u16::from(ds_count);
        let full = if self.inline_on {
            ds + 16 > max_ds
        } else {
            ds == max_ds
        };
        if full {
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
