// SPDX-License-Identifier: GPL-2.0

//! The device's half of the RSS commands (the driver's is `hwif/mlx5/cmd/rss.rs`): RQT
//! and TIR (create, modify, destroy; Toeplitz, symmetric Toeplitz and XOR8), split from
//! [`super::res`]; what a TIR does with a frame is [`crate::sim::mlx5::steer`]'s. PRM
//! "Transport Interface Commands"; upstream en/rqt.c, en/tir.c; layouts `rqtc`, `tirc` of
//! mlx5_ifc.h.

use super::{bad, synd, CmdResult, Cx, Fail};
use crate::hwif::bytes::be64;
use crate::hwif::hw::BusMemory;
use crate::sim::mlx5::ifc::{self, set, status};
use crate::sim::mlx5::{make_qn, MAX_QUEUES, MAX_RQT_SIZE, RQN_BASE, RQTN_BASE, TIRN_BASE};

impl<M: BusMemory> Cx<'_, '_, M> {
    /// CREATE_RQT (`existing` None) or MODIFY_RQT of RQT `existing`.
    pub(super) fn rqt(&mut self, existing: Option<usize>) -> CmdResult {
        use ifc::rqt::*;
        if self.g(LIST_Q_TYPE) != 0 || self.g(RQ_VHCA_ID_FORMAT) != 0 {
            return Err(bad(synd::RQT_FORMAT));
        }
        let actual = self.g(RQT_ACTUAL_SIZE) as usize;
        let max = match existing {
            Some(s) => usize::from(self.row(s).rqt.max),
            None => self.g(RQT_MAX_SIZE) as usize,
        };
        let cap = 1usize << self.caps.log_max_rqt_size;
        if actual == 0 || actual > max || max > cap {
            return Err(bad(synd::RQT_SIZE));
        }
        if self.inlen < RQ_NUM + 4 * actual {
            return Err((status::BAD_INPUT_LEN, synd::INPUT_TOO_SHORT));
        }
        let mut rqs = [0u8; MAX_RQT_SIZE];
        for (i, e) in rqs.iter_mut().enumerate().take(actual) {
            let mut b = [0u8; 4];
            if !self.read_in(RQ_NUM + 4 * i, &mut b) {
                return Err((status::BAD_INPUT_LEN, synd::INPUT_TOO_SHORT));
            }
            let rqn = u32::from_be_bytes(b) & 0xff_ffff;
            match self.t.rq_loc(rqn) {
                Ok((p, slot)) if p == self.p => *e = slot as u8,
                _ => return Err((status::BAD_RESOURCE, synd::BAD_RQ)),
            }
        }
        let p = self.p;
        let slot = match existing {
            Some(s) => {
                self.set_rqt_refs(s, false);
                s
            }
            None => self.free(|r| r.rqt.used, synd::NO_RQT)?,
        };
        let users = self.row(slot).rqt.users;
        self.row(slot).rqt = crate::sim::mlx5::RqtCtx {
            used: true,
            max: max as u16,
            len: actual as u16,
            rqs,
            users,
        };
        self.set_rqt_refs(slot, true);
        if existing.is_none() {
            set(self.out, ifc::OBJ_NUM, make_qn(RQTN_BASE, p, slot));
        }
        self.t.refresh_rx(p, true);
        Ok(())
    }

    /// MODIFY_RQT: a new RQ list for an existing RQT.
    pub(super) fn modify_rqt(&mut self) -> CmdResult {
        // bitmask.rqn_list is not required (the contract leaves it 0): the list is
        // what MODIFY_RQT changes. Other bitmask bits are refused.
        if be64(self.inp, 0x10) & !1 != 0 {
            return Err(bad(synd::RQT_BITMASK));
        }
        let (_, slot) = self.own(ifc::OBJ_NUM, RQTN_BASE, |r| r.rqt.used, synd::BAD_RQT)?;
        self.rqt(Some(slot))
    }

    /// Adds (`on`) or drops the RQ references of RQT `slot`.
    fn set_rqt_refs(&mut self, slot: usize, on: bool) {
        let r = self.row(slot).rqt;
        for &rq in r.rqs.iter().take(usize::from(r.len)) {
            let q = &mut self.row(usize::from(rq)).rq;
            q.users = if on {
                q.users.saturating_add(1)
            } else {
                q.users.saturating_sub(1)
            };
        }
    }

    /// DESTROY_RQT of an RQT no TIR names.
    pub(super) fn destroy_rqt(&mut self) -> CmdResult {
        let (_, slot) = self.own(ifc::OBJ_NUM, RQTN_BASE, |r| r.rqt.used, synd::BAD_RQT)?;
        if self.row(slot).rqt.users != 0 {
            return Err((status::RESOURCE_BUSY, synd::RQT_IN_USE));
        }
        self.set_rqt_refs(slot, false);
        self.row(slot).rqt.used = false;
        Ok(())
    }

    /// The hash parameters of a TIR context (`rx_hash_fn`, `rx_hash_symmetric`, the key and
    /// the outer field selector) at the context's usual place: Toeplitz, not symmetric, and
    /// only the fields the model hashes.
    fn tir_hash(&self) -> Result<([u8; 40], crate::sim::pkt::HashSel, bool, bool), Fail> {
        use ifc::tir::*;
        // Toeplitz (2) or inverted XOR8 (1: mlx5e's one-RQ TIRs).
        let xor8 = match self.g(RX_HASH_FN) {
            2 => false,
            1 => true,
            _ => return Err(bad(synd::TIR_HASH)),
        };
        let symmetric = self.g(RX_HASH_SYMMETRIC) != 0 && !xor8;
        let fields = self.g(SEL_FIELDS);
        // The SPI (mlx5e's IPsec AH / ESP traffic types) is taken and not hashed: the model
        // hashes the addresses of such frames.
        let known = SEL_SRC_IP | SEL_DST_IP | SEL_L4_SPORT | SEL_L4_DPORT | SEL_IPSEC_SPI;
        if fields & !known != 0 {
            return Err(bad(synd::TIR_FIELDS));
        }
        let mut key = [0u8; 40];
        if let Some(k) = self.inp.get(TOEPLITZ_KEY..TOEPLITZ_KEY + 40) {
            key.copy_from_slice(k);
        }
        let sel = crate::sim::pkt::HashSel {
            ipv6: self.g(SEL_L3_PROT_TYPE) == 1,
            udp: self.g(SEL_L4_PROT_TYPE) == 1,
            src_ip: fields & SEL_SRC_IP != 0,
            dst_ip: fields & SEL_DST_IP != 0,
            sport: fields & SEL_L4_SPORT != 0,
            dport: fields & SEL_L4_DPORT != 0,
        };
        Ok((key, sel, symmetric, xor8))
    }

    pub(super) fn create_tir(&mut self) -> CmdResult {
        use ifc::tir::*;
        let indirect = match self.g(DISP_TYPE) {
            0 => false,
            1 => true,
            _ => return Err(bad(synd::TIR_DISP_TYPE)),
        };
        let td = self.td_field(TRANSPORT_DOMAIN)?;
        let (rqt, inline_rq, (key, sel, symmetric, xor8)) = if indirect {
            let hash = self.tir_hash()?;
            let (_, s) = self.own(INDIRECT_TABLE, RQTN_BASE, |r| r.rqt.used, synd::BAD_RQT)?;
            (s, 0, hash)
        } else {
            let (_, s) = self.own(INLINE_RQN, RQN_BASE, |r| r.rq.used, synd::BAD_RQ)?;
            (
                0,
                s,
                (
                    [0; 40],
                    crate::sim::mlx5::QueueSet::EMPTY.tir.sel,
                    false,
                    false,
                ),
            )
        };
        let p = self.p;
        let slot = self.free(|r| r.tir.used, synd::NO_TIR)?;
        self.row(slot).tir = crate::sim::mlx5::TirCtx {
            used: true,
            indirect,
            rqt: rqt as u8,
            inline_rq: inline_rq as u8,
            td,
            key,
            sel,
            symmetric,
            xor8,
            users: 0,
        };
        if indirect {
            self.row(rqt).rqt.users += 1;
        } else {
            let q = &mut self.row(inline_rq).rq;
            q.users = q.users.saturating_add(1);
        }
        if indirect && self.port().func.rss_tir == 0 {
            self.port().func.rss_tir = slot as u8 + 1;
        }
        self.t.refresh_rx(p, true);
        set(self.out, ifc::OBJ_NUM, make_qn(TIRN_BASE, p, slot));
        Ok(())
    }

    /// MODIFY_TIR: `bitmask.hash` replaces the hash parameters of an indirect TIR (hash
    /// function, symmetry, key, outer field selector); its RQT stays. Frames received after
    /// the command are hashed the new way (nothing is lost: mlx5e's hitless key change).
    pub(super) fn modify_tir(&mut self) -> CmdResult {
        use ifc::tir::*;
        let (_, slot) = self.own(MODIFY_TIRN, TIRN_BASE, |r| r.tir.used, synd::BAD_TIR)?;
        let bm = be64(self.inp, MODIFY_BITMASK);
        // self_lb_en changes `self_lb_block` (which of the function's own frames it may
        // receive back); the model loops no frame back to a function but by PPLR, so it
        // takes the field and nothing changes.
        if bm & !(MODIFY_BITMASK_HASH | MODIFY_BITMASK_SELF_LB) != 0
            || (bm & MODIFY_BITMASK_HASH != 0 && !self.row(slot).tir.indirect)
        {
            return Err(bad(synd::TIR_BITMASK));
        }
        if bm & MODIFY_BITMASK_HASH != 0 {
            let (key, sel, symmetric, xor8) = self.tir_hash()?;
            let t = &mut self.row(slot).tir;
            t.key = key;
            t.sel = sel;
            t.symmetric = symmetric;
            t.xor8 = xor8;
        }
        let p = self.p;
        self.t.refresh_rx(p, true);
        Ok(())
    }

    /// DESTROY_TIR.
    pub(super) fn destroy_tir(&mut self) -> CmdResult {
        let (_, slot) = self.own(ifc::OBJ_NUM, TIRN_BASE, |r| r.tir.used, synd::BAD_TIR)?;
        self.destroy_tir_slot(slot)
    }

    fn destroy_tir_slot(&mut self, slot: usize) -> CmdResult {
        let t = self.row(slot).tir;
        if t.users != 0 {
            return Err((status::RESOURCE_BUSY, synd::TIR_IN_USE));
        }
        if t.indirect {
            let r = &mut self.row(usize::from(t.rqt)).rqt;
            r.users = r.users.saturating_sub(1);
        } else {
            let q = &mut self.row(usize::from(t.inline_rq)).rq;
            q.users = q.users.saturating_sub(1);
        }
        self.row(slot).tir.used = false;
        if usize::from(self.port().func.rss_tir) == slot + 1 {
            // The next indirect TIR (lowest slot) takes over; none: received frames drop.
            let next = (0..MAX_QUEUES).find(|&i| {
                let r = self.row(i).tir;
                r.used && r.indirect
            });
            self.port().func.rss_tir = next.map_or(0, |i| i as u8 + 1);
        }
        let p = self.p;
        self.t.refresh_rx(p, true);
        Ok(())
    }
}
