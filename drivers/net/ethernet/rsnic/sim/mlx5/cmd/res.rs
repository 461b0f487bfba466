// SPDX-License-Identifier: GPL-2.0

//! The device's half of the resource commands (the driver's is `hwif/mlx5/cmd/res.rs`): UAR,
//! PD and transport domain allocation, EQ, CQ (with moderation, MODIFY_CQ), TIS, SQ and RQ
//! (create, modify state, query, destroy; page lists through [`crate::sim::mlx5::pas`]); RQT
//! and TIR are in [`super::rss`]. PRM "EQ Commands", "CQ Commands", "Transport Interface
//! Commands"; upstream uar.c, eq.c (`create_map_eq`), en_main.c (`mlx5e_create_cq`,
//! `mlx5e_create_sq`, `mlx5e_create_rq`, `mlx5e_modify_*`); layouts `eqc`, `cqc`, `sqc`,
//! `rqc`, `wq` of mlx5_ifc.h.

use super::queue::chain_read;
use super::{bad, synd, CmdResult, Cx, Fail};
use crate::hwif::bytes::{be64, put_be64};
use crate::hwif::hw::{BusMemory, DmaAddr};
use crate::sim::mlx5::ifc::{self, layout, set, status};
use crate::sim::mlx5::pas::{self, Ring};
use crate::sim::mlx5::{
    make_qn, split_qn, CqConfig, QueueState, RqConfig, SqConfig, SqCtx, API_UAR, CQN_BASE,
    EQN_BASE, FIRST_UAR, MAX_QUEUES, MAX_VECTORS, PD_BASE, RQN_BASE, SQN_BASE, TD_BASE, TISN_BASE,
};

/// Queue states as the command interface encodes them.
fn state_code(s: QueueState) -> u32 {
    match s {
        QueueState::Reset => ifc::wq::STATE_RST,
        QueueState::Ready => ifc::wq::STATE_RDY,
        QueueState::Error => ifc::wq::STATE_ERR,
    }
}

// The API's UAR page is never one ALLOC_UAR hands out.
const _: () = assert!(API_UAR < FIRST_UAR);

impl<M: BusMemory> Cx<'_, '_, M> {
    /// ALLOC_UAR (0), ALLOC_PD (1), ALLOC_TRANSPORT_DOMAIN (2).
    pub(super) fn alloc(&mut self, kind: usize) -> CmdResult {
        let f = &mut self.port().func;
        let map = match kind {
            0 => &mut f.uars,
            1 => &mut f.pds,
            _ => &mut f.tds,
        };
        let free = (!*map).trailing_zeros();
        if free >= 64 {
            return Err((status::NO_RESOURCES, synd::NO_ALLOC));
        }
        *map |= 1u64 << free;
        let p = self.p;
        let n = match kind {
            0 => FIRST_UAR + free,
            1 => make_qn(PD_BASE, p, free as usize),
            _ => make_qn(TD_BASE, p, free as usize),
        };
        set(self.out, ifc::OBJ_NUM, n);
        Ok(())
    }

    /// The slot of an allocated UAR/PD/TD number `n`, or BAD_RESOURCE.
    pub(super) fn alloc_slot(&mut self, kind: usize, n: u32) -> Result<usize, Fail> {
        let p = self.p;
        let f = &self.port().func;
        let (slot, map, s) = match kind {
            0 => (n.wrapping_sub(FIRST_UAR) as usize, f.uars, synd::BAD_UAR),
            1 => match split_qn(n, PD_BASE) {
                Some((q, slot)) if q == p => (slot, f.pds, synd::BAD_PD),
                _ => (64, 0, synd::BAD_PD),
            },
            _ => match split_qn(n, TD_BASE) {
                Some((q, slot)) if q == p => (slot, f.tds, synd::BAD_TD),
                _ => (64, 0, synd::BAD_TD),
            },
        };
        if slot < 64 && map & (1u64 << slot) != 0 {
            Ok(slot)
        } else {
            Err((status::BAD_RESOURCE, s))
        }
    }

    pub(super) fn dealloc(&mut self, kind: usize) -> CmdResult {
        let n = self.g(ifc::OBJ_NUM);
        let slot = self.alloc_slot(kind, n)?;
        // In use by any object of this function?
        let busy = (0..MAX_QUEUES).any(|i| {
            let r = *self.row(i);
            match kind {
                0 => {
                    let u = (slot as u32 + FIRST_UAR) as u16;
                    (r.sq.used && r.sq.uar == u)
                        || (r.cq.used && r.cq.uar == u)
                        || (r.eq.used && r.eq.uar == u)
                }
                1 => {
                    let d = slot as u8 + 1;
                    (r.sq.used && r.sq.pd == d) || (r.rq.used && r.rq.pd == d)
                }
                _ => {
                    (r.tis.used && usize::from(r.tis.td) == slot)
                        || (r.tir.used && usize::from(r.tir.td) == slot)
                }
            }
        });
        if busy {
            return Err((status::RESOURCE_BUSY, synd::ALLOC_IN_USE));
        }
        let f = &mut self.port().func;
        let map = match kind {
            0 => &mut f.uars,
            1 => &mut f.pds,
            _ => &mut f.tds,
        };
        *map &= !(1u64 << slot);
        Ok(())
    }

    /// Reads input bytes at `off` (beyond the scratch copy: from the mailboxes).
    pub(super) fn read_in(&mut self, off: usize, dst: &mut [u8]) -> bool {
        if let Some(s) = self.inp.get(off..off + dst.len()) {
            if off + dst.len() <= self.inlen {
                dst.copy_from_slice(s);
                return true;
            }
        }
        if off + dst.len() > self.inlen || off < layout::INLINE {
            return false;
        }
        let p = self.p;
        // PANIC: `p` indexes a port (see `Cx::port`).
        let c = &mut self.t.ports[p].counters;
        chain_read(&mut self.chain, self.mem, off, dst, c)
    }

    /// Reads a PAS list at `pas` for `bytes` of queue in pages of 4 KiB << the context's
    /// `log_pg` field (its `offset` field must be 0): a contiguous list is the queue's base
    /// address; any other list goes into the device's page-list pool
    /// ([`crate::sim::mlx5::pas`]), which the caller gives back if the command fails after
    /// this (`pas::free`).
    pub(super) fn pas(
        &mut self,
        pas: usize,
        bytes: u64,
        log_pg: ifc::Fld,
        offset: ifc::Fld,
    ) -> Result<Ring, Fail> {
        let (log_pg, offset) = (self.g(log_pg), self.g(offset));
        if offset != 0 {
            return Err(bad(synd::PAGE_OFFSET));
        }
        if log_pg > 16 {
            return Err(bad(synd::LOG_PAGE_SIZE));
        }
        let pg = 4096u64 << log_pg;
        let n = bytes.div_ceil(pg).max(1) as usize;
        if self.inlen < pas + 8 * n {
            return Err((status::BAD_INPUT_LEN, synd::PAS_TOO_SHORT));
        }
        let mut b = [0u8; 8];
        let mut contiguous = true;
        let mut first = 0u64;
        for i in 0..n {
            if !self.read_in(pas + 8 * i, &mut b) {
                return Err((status::BAD_INPUT_LEN, synd::PAS_TOO_SHORT));
            }
            let a = u64::from_be_bytes(b);
            if a % pg != 0 || a == 0 {
                return Err(bad(synd::PAS_ALIGN));
            }
            if i == 0 {
                first = a;
            } else if a != first.wrapping_add(i as u64 * pg) {
                contiguous = false;
            }
        }
        let log_pg = (12 + log_pg) as u8;
        if contiguous {
            return Ok(Ring {
                log_pg,
                ..Ring::contiguous(first)
            });
        }
        let at = pas::alloc(self.t.pool, n).ok_or((status::NO_RESOURCES, synd::PAS_POOL))?;
        let ring = Ring {
            base: first,
            log_pg,
            first: at,
            pages: n as u16,
        };
        for i in 0..n {
            if !self.read_in(pas + 8 * i, &mut b)
                || !pas::set_entry(self.t.pool, usize::from(at) + i, u64::from_be_bytes(b))
            {
                pas::free(self.t.pool, &ring);
                return Err((status::BAD_INPUT_LEN, synd::PAS_TOO_SHORT));
            }
        }
        // Counted here, at the list's acceptance (a create that fails later gives the
        // entries back but was still a list the device read).
        self.port().counters.pas_list_pages += n as u64;
        Ok(ring)
    }

    fn uar_field(&mut self, f: ifc::Fld) -> Result<u16, Fail> {
        let u = self.g(f);
        if self.port().func.uar_allocated(u) {
            Ok(u as u16)
        } else {
            Err((status::BAD_RESOURCE, synd::BAD_UAR))
        }
    }

    pub(super) fn create_eq(&mut self) -> CmdResult {
        use ifc::eq::*;
        let log = self.g(LOG_EQ_SIZE);
        if log == 0 || log > u32::from(self.caps.log_max_eq_sz) {
            return Err(bad(synd::EQ_SIZE));
        }
        let intr = self.g(INTR);
        if intr >= MAX_VECTORS {
            return Err(bad(synd::EQ_INTR));
        }
        let uar = self.uar_field(UAR_PAGE)?;
        let buf = self.pas(PAS, 64u64 << log, LOG_PAGE_SIZE, PAGE_OFFSET)?;
        let mask = be64(self.inp, EVENT_BITMASK);
        let p = self.p;
        let slot = match self.t.free_slot(p, |r| r.eq.used) {
            Ok(s) => s,
            Err(_) => {
                pas::free(self.t.pool, &buf);
                return Err((status::NO_RESOURCES, synd::NO_EQ));
            }
        };
        self.row(slot).eq = crate::sim::mlx5::EqCtx {
            used: true,
            error: false,
            buf,
            log_size: log as u8,
            uar,
            intr: intr as u16,
            pi: 0,
            ci: 0,
            armed: false,
            port_events: mask & (1u64 << ifc::eqe::TYPE_PORT_CHANGE) != 0,
            cmd_events: mask & (1u64 << ifc::eqe::TYPE_CMD) != 0,
            page_events: mask & (1u64 << ifc::eqe::TYPE_PAGE_REQUEST) != 0,
            users: 0,
        };
        set(self.out, ifc::EQ_NUMBER, EQN_BASE + slot as u32);
        Ok(())
    }

    fn eq_slot(&mut self, eqn: u32) -> Result<usize, Fail> {
        let slot = eqn.wrapping_sub(EQN_BASE) as usize;
        if slot < MAX_QUEUES && self.row(slot).eq.used {
            Ok(slot)
        } else {
            Err((status::BAD_RESOURCE, synd::BAD_EQ))
        }
    }

    pub(super) fn destroy_eq(&mut self) -> CmdResult {
        let slot = self.eq_slot(self.g(ifc::EQ_NUMBER))?;
        if self.row(slot).eq.users != 0 {
            return Err((status::RESOURCE_BUSY, synd::EQ_IN_USE));
        }
        let ring = self.row(slot).eq.buf;
        self.row(slot).eq = crate::sim::mlx5::QueueSet::EMPTY.eq;
        pas::free(self.t.pool, &ring);
        self.port().eq_arm_pending &= !(1u64 << slot);
        Ok(())
    }

    pub(super) fn create_cq(&mut self) -> CmdResult {
        use ifc::cq::*;
        if self.g(CQE_SZ) != 0 {
            return Err(bad(synd::CQE_SIZE));
        }
        // One CQE (log 0) is a CQ too: mlx5e's drop RQ has one.
        let log = self.g(LOG_CQ_SIZE);
        if log > u32::from(self.caps.log_max_cq_sz) {
            return Err(bad(synd::CQ_SIZE));
        }
        let comp = self.g(CQE_COMP_EN) != 0;
        if comp
            && (!self.caps.cqe_compression
                || self.g(CQE_COMPRESSION_LAYOUT) != 0
                || !matches!(self.g(MINI_CQE_RES_FORMAT), 1 | 3))
        {
            return Err(bad(synd::CQE_COMPRESSION));
        }
        let mode = self.g(CQ_PERIOD_MODE);
        if mode > 1 {
            return Err(bad(synd::CQ_PERIOD_MODE));
        }
        let uar = self.uar_field(UAR_PAGE)?;
        let eq = self.eq_slot(self.g(C_EQN))?;
        let dbr = be64(self.inp, DBR_ADDR);
        if dbr % 8 != 0 {
            return Err(bad(synd::DBR_ALIGN));
        }
        let buf = self.pas(PAS, 64u64 << log, LOG_PAGE_SIZE, PAGE_OFFSET)?;
        let cfg = CqConfig {
            port: self.p,
            buf: buf.base,
            log_size: log as u8,
            dbr,
            vector: 0,
            compress: comp,
        };
        let cqn = match self.t.create_cq(&cfg, uar, eq as u8 + 1) {
            Ok(n) => n,
            Err(_) => {
                pas::free(self.t.pool, &buf);
                return Err((status::NO_RESOURCES, synd::NO_CQ));
            }
        };
        // The fields are 12 and 16 bits wide: every value is one the device takes.
        let (period, count) = (self.g(CQ_PERIOD) as u16, self.g(CQ_MAX_COUNT) as u16);
        if let Ok((_, slot)) = self.t.cq_loc(cqn) {
            self.row(slot).cq.buf = buf;
            let m = &mut self.row(slot).cq.moder;
            m.period = period;
            m.max_count = count;
            m.cqe_mode = mode == 1;
        }
        set(self.out, ifc::OBJ_NUM, cqn);
        Ok(())
    }

    /// MODIFY_CQ (op_mod 0, MODIFY_CQ; RESIZE_CQ is refused as a bad op_mod): changes the
    /// moderation of a live CQ, the fields `modify_field_select` names. A CQ moderation
    /// holds back is evaluated again on the next engine run under the new values.
    pub(super) fn modify_cq(&mut self) -> CmdResult {
        use ifc::cq::*;
        let (_, slot) = self.own(ifc::OBJ_NUM, CQN_BASE, |r| r.cq.used, synd::BAD_CQ)?;
        let sel = self.g(MODIFY_FIELD_SELECT);
        let known = MODIFY_PERIOD | MODIFY_COUNT | MODIFY_PERIOD_MODE;
        if sel == 0 || sel & !known != 0 {
            return Err(bad(synd::CQ_MODIFY_FIELDS));
        }
        let mode = self.g(CQ_PERIOD_MODE);
        if sel & MODIFY_PERIOD_MODE != 0 && mode > 1 {
            return Err(bad(synd::CQ_PERIOD_MODE));
        }
        let (period, count) = (self.g(CQ_PERIOD) as u16, self.g(CQ_MAX_COUNT) as u16);
        let m = &mut self.row(slot).cq.moder;
        if sel & MODIFY_PERIOD != 0 {
            m.period = period;
        }
        if sel & MODIFY_COUNT != 0 {
            m.max_count = count;
        }
        if sel & MODIFY_PERIOD_MODE != 0 {
            m.cqe_mode = mode == 1;
        }
        self.port().arm_pending |= 1u64 << slot;
        Ok(())
    }

    /// The queue of this function that `obj_num` names (a DESTROY_CQ, DESTROY_SQ or
    /// DESTROY_RQ; of another function or none: BAD_RESOURCE with `bad`): its number and slot.
    fn own_queue(
        &self,
        base: u32,
        used: fn(&crate::sim::mlx5::QueueSet) -> bool,
        bad: u32,
    ) -> Result<(u32, usize), Fail> {
        let (p, slot) = self.own(ifc::OBJ_NUM, base, used, bad)?;
        Ok((make_qn(base, p, slot), slot))
    }

    /// DESTROY_CQ of a CQ no queue names.
    pub(super) fn destroy_cq(&mut self) -> CmdResult {
        let (cqn, _) = self.own_queue(CQN_BASE, |r| r.cq.used, synd::BAD_CQ)?;
        let busy = (status::RESOURCE_BUSY, synd::CQ_IN_USE);
        self.t.destroy_cq(cqn).map_err(|_| busy)
    }

    pub(super) fn td_field(&mut self, f: ifc::Fld) -> Result<u8, Fail> {
        let n = self.g(f);
        self.alloc_slot(2, n).map(|s| s as u8)
    }

    pub(super) fn create_tis(&mut self) -> CmdResult {
        let td = self.td_field(ifc::tis::TRANSPORT_DOMAIN)?;
        let p = self.p;
        let slot = self.free(|r| r.tis.used, synd::NO_TIS)?;
        self.row(slot).tis = crate::sim::mlx5::TisCtx {
            used: true,
            td,
            users: 0,
        };
        set(self.out, ifc::OBJ_NUM, make_qn(TISN_BASE, p, slot));
        Ok(())
    }

    /// DESTROY_TIS of a TIS no SQ names.
    pub(super) fn destroy_tis(&mut self) -> CmdResult {
        let (_, slot) = self.own(ifc::OBJ_NUM, TISN_BASE, |r| r.tis.used, synd::BAD_TIS)?;
        let tis = self.row(slot).tis;
        if tis.users != 0 {
            return Err((status::RESOURCE_BUSY, synd::TIS_IN_USE));
        }
        self.row(slot).tis.used = false;
        Ok(())
    }

    /// The common WQ fields: (pd slot + 1, dbr, log_wq_sz, bus address of the ring).
    fn wq_common(&mut self, log_stride: u32) -> Result<(u8, DmaAddr, u32, Ring), Fail> {
        use ifc::wq::*;
        if self.g(STATE) != STATE_RST {
            return Err(bad(synd::CREATE_STATE));
        }
        if self.g(WQ_TYPE) != 1 {
            return Err(bad(synd::WQ_TYPE));
        }
        // PD 0 is no PD: mlx5e's drop RQ (one WQE, never posted) is created without one,
        // and the firmware takes it.
        let pd = match self.g(PD) {
            0 => 0,
            n => self.alloc_slot(1, n)? as u8 + 1,
        };
        let dbr = be64(self.inp, DBR_ADDR);
        if dbr % 8 != 0 {
            return Err(bad(synd::DBR_ALIGN));
        }
        let log = self.g(LOG_WQ_SZ);
        if log > u32::from(self.caps.log_max_wq_sz) {
            return Err(bad(synd::WQ_SIZE));
        }
        let bytes = 1u64 << (log + log_stride);
        let buf = self.pas(PAS, bytes, LOG_WQ_PG_SZ, PAGE_OFFSET)?;
        Ok((pd, dbr, log, buf))
    }

    /// The CQ of a queue: must be this function's.
    fn cq_field(&mut self) -> Result<u32, Fail> {
        let cqn = self.g(ifc::wq::CQN);
        match self.t.cq_loc(cqn) {
            Ok((p, _)) if p == self.p => Ok(cqn),
            _ => Err((status::BAD_RESOURCE, synd::BAD_CQ)),
        }
    }

    pub(super) fn create_sq(&mut self) -> CmdResult {
        use ifc::wq::*;
        if self.g(LOG_WQ_STRIDE) != 6 {
            return Err(bad(synd::WQ_STRIDE));
        }
        let min_inline = self.g(SQ_MIN_WQE_INLINE_MODE);
        if min_inline < u32::from(self.caps.min_inline) || min_inline > 3 {
            return Err(bad(synd::MIN_INLINE));
        }
        if self.g(SQ_ALLOW_MULTI_PKT) != 0 && !self.caps.mpwqe {
            return Err(bad(synd::MULTI_PKT));
        }
        let cqn = self.cq_field()?;
        let tisn = self.g(SQ_TIS_NUM_0);
        // tis_lst_sz is not checked: rsnic leaves it 0 with a TIS, mlx5e writes 1; an SQ
        // without a TIS (TIS 0 and an empty list: mlx5e's ICO SQs) has none.
        let tis = if tisn == 0 && self.g(SQ_TIS_LST_SZ) == 0 {
            None
        } else {
            match self.t.loc(tisn, TISN_BASE, |r| r.tis.used) {
                Ok((p, slot)) if p == self.p => Some(slot),
                _ => return Err((status::BAD_RESOURCE, synd::BAD_TIS)),
            }
        };
        let uar = self.uar_field(UAR_PAGE)?;
        let (pd, dbr, log, buf) = self.wq_common(6)?;
        let cfg = SqConfig {
            port: self.p,
            buf: buf.base,
            log_size: log as u8,
            dbr,
            cqn,
        };
        let extra = SqCtx {
            uar,
            tis: tis.map_or(0, |t| t as u8 + 1),
            pd,
            min_inline: min_inline as u8,
            flush: self.g(SQ_FLUSH_IN_ERROR_EN) != 0,
            ..SqCtx::EMPTY
        };
        let sqn = match self.t.create_sq(&cfg, QueueState::Reset, extra) {
            Ok(n) => n,
            Err(_) => {
                pas::free(self.t.pool, &buf);
                return Err((status::NO_RESOURCES, synd::NO_SQ));
            }
        };
        if let Ok((_, slot)) = self.t.sq_loc(sqn) {
            self.row(slot).sq.buf = buf;
        }
        set(self.out, ifc::OBJ_NUM, sqn);
        Ok(())
    }

    pub(super) fn create_rq(&mut self) -> CmdResult {
        use ifc::wq::*;
        if self.g(RQ_MEM_RQ_TYPE) != 0 {
            return Err(bad(synd::MEM_RQ_TYPE));
        }
        let stride = self.g(LOG_WQ_STRIDE);
        if !(4..=8).contains(&stride) {
            return Err(bad(synd::WQ_STRIDE));
        }
        let cqn = self.cq_field()?;
        // The Q counter that counts the RQ's drops (0: none).
        let counter = self.g(RQ_COUNTER_SET_ID);
        if counter != 0 {
            self.qcnt_slot(counter)?;
        }
        let (pd, dbr, log, buf) = self.wq_common(stride)?;
        let cfg = RqConfig {
            port: self.p,
            buf: buf.base,
            log_size: log as u8,
            log_stride: stride as u8,
            dbr,
            cqn,
        };
        let flush = self.g(RQ_FLUSH_IN_ERROR_EN) != 0;
        let rqn = match self.t.create_rq(&cfg, QueueState::Reset, pd, flush) {
            Ok(n) => n,
            Err(_) => {
                pas::free(self.t.pool, &buf);
                return Err((status::NO_RESOURCES, synd::NO_RQ));
            }
        };
        let strip = self.g(RQ_VSD) == 0;
        if let Ok((_, slot)) = self.t.rq_loc(rqn) {
            let q = &mut self.row(slot).rq;
            q.buf = buf;
            q.counter = counter as u8;
            q.strip_vlan = strip;
        }
        set(self.out, ifc::OBJ_NUM, rqn);
        Ok(())
    }

    /// The SQ (`sq`) or RQ of this function that field `f` names: its port and slot, the
    /// base of its numbers and the syndrome of a bad one.
    fn own_wq(&self, sq: bool, f: ifc::Fld) -> Result<(usize, usize, u32, u32), Fail> {
        let (base, bad_q) = if sq {
            (SQN_BASE, synd::BAD_SQ)
        } else {
            (RQN_BASE, synd::BAD_RQ)
        };
        let used: fn(&crate::sim::mlx5::QueueSet) -> bool =
            if sq { |r| r.sq.used } else { |r| r.rq.used };
        let (p, slot) = self.own(f, base, used, bad_q)?;
        Ok((p, slot, base, bad_q))
    }

    pub(super) fn modify_wq(&mut self, sq: bool) -> CmdResult {
        use ifc::wq::*;
        let (p, slot, base, bad_q) = self.own_wq(sq, MODIFY_QN)?;
        // The fields a MODIFY may change besides the state: of an RQ, `vsd` (mlx5e's
        // `mlx5e_modify_rq_vsd`, ethtool -K rxvlan); nothing of an SQ.
        let bitmask = be64(self.inp, MODIFY_BITMASK);
        let allowed = if sq { 0 } else { MODIFY_RQ_BITMASK_VSD };
        if bitmask & !allowed != 0 {
            return Err(bad(synd::MODIFY_BITMASK));
        }
        let cur = if sq {
            self.row(slot).sq.state
        } else {
            self.row(slot).rq.state
        };
        if self.g(MODIFY_CUR_STATE) != state_code(cur) {
            return Err((status::BAD_RES_STATE, synd::CUR_STATE));
        }
        let next = match (cur, self.g(STATE)) {
            (QueueState::Reset, STATE_RDY) => QueueState::Ready,
            (QueueState::Ready, STATE_ERR) => QueueState::Error,
            (QueueState::Error, STATE_RST) => QueueState::Reset,
            // RDY -> RDY changes fields only (the RQ's `vsd`, as mlx5e does it on live RQs).
            (QueueState::Ready, STATE_RDY) if !sq => QueueState::Ready,
            _ => return Err((status::BAD_RES_STATE, synd::TRANSITION)),
        };
        let qn = make_qn(base, p, slot);
        let r = if sq {
            self.t.set_sq_state(qn, next)
        } else {
            self.t.set_rq_state(qn, next)
        };
        r.map_err(|_| (status::BAD_RESOURCE, bad_q))?;
        if bitmask & MODIFY_RQ_BITMASK_VSD != 0 {
            // From the next frame the RQ receives on (the engine reads the context per
            // frame).
            self.row(slot).rq.strip_vlan = self.g(RQ_VSD) == 0;
        }
        Ok(())
    }

    pub(super) fn query_wq(&mut self, sq: bool) -> CmdResult {
        use ifc::wq::*;
        let (p, slot, _, _) = self.own_wq(sq, ifc::OBJ_NUM)?;
        let r = *self.row(slot);
        let o = &mut *self.out;
        // The fields only one kind has, then what both have: (state, CQ slot, flush field
        // and value, PD (0: none), log stride, log size, hardware and software counters,
        // doorbell record).
        let (state, cq, flush, pd, stride, size, hw, sw, dbr) = if sq {
            let q = r.sq;
            set(o, SQ_MIN_WQE_INLINE_MODE, u32::from(q.min_inline));
            if q.tis != 0 {
                set(o, SQ_TIS_LST_SZ, 1);
                set(
                    o,
                    SQ_TIS_NUM_0,
                    make_qn(TISN_BASE, p, usize::from(q.tis - 1)),
                );
            }
            set(o, UAR_PAGE, u32::from(q.uar));
            let flush = (SQ_FLUSH_IN_ERROR_EN, q.flush);
            (q.state, q.cq, flush, q.pd, 6, q.log_size, q.cc, q.pc, q.dbr)
        } else {
            let q = r.rq;
            set(o, RQ_VSD, u32::from(!q.strip_vlan));
            let flush = (RQ_FLUSH_IN_ERROR_EN, q.flush);
            let (stride, size) = (q.log_stride, q.log_size);
            (
                q.state, q.cq, flush, q.pd, stride, size, q.cc, q.posted, q.dbr,
            )
        };
        set(o, STATE, state_code(state));
        set(o, CQN, make_qn(CQN_BASE, p, usize::from(cq)));
        set(o, flush.0, u32::from(flush.1));
        if pd != 0 {
            set(o, PD, make_qn(PD_BASE, p, usize::from(pd - 1)));
        }
        set(o, LOG_WQ_STRIDE, u32::from(stride));
        set(o, LOG_WQ_SZ, u32::from(size));
        set(o, HW_COUNTER, u32::from(hw));
        set(o, SW_COUNTER, u32::from(sw));
        set(o, WQ_TYPE, 1);
        put_be64(o, DBR_ADDR, dbr);
        Ok(())
    }

    /// DESTROY_SQ.
    pub(super) fn destroy_sq(&mut self) -> CmdResult {
        let (sqn, _) = self.own_queue(SQN_BASE, |r| r.sq.used, synd::BAD_SQ)?;
        self.t
            .destroy_sq(sqn)
            .map_err(|_| (status::BAD_RESOURCE, synd::BAD_SQ))
    }

    /// DESTROY_RQ of an RQ no RQT names.
    pub(super) fn destroy_rq(&mut self) -> CmdResult {
        let (rqn, slot) = self.own_queue(RQN_BASE, |r| r.rq.used, synd::BAD_RQ)?;
        if self.row(slot).rq.users != 0 {
            return Err((status::RESOURCE_BUSY, synd::RQ_IN_USE));
        }
        self.t
            .destroy_rq(rqn)
            .map_err(|_| (status::BAD_RESOURCE, synd::BAD_RQ))
    }
}
