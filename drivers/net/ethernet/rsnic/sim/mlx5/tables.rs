// SPDX-License-Identifier: GPL-2.0

//! The device's object tables ([`Tables`]: ports and their rows, borrowed apart from the
//! scratch memory) and what creating, destroying and changing the state of a CQ, SQ or RQ
//! does to them, shared by the command handlers ([`super::cmd`]) and the Rust API; and
//! which RQs and rules a received frame can reach (`refresh_rx`, after every change of the
//! steering).

use super::{
    make_qn, pas, row, split_qn, CmdError, CqConfig, CqCtx, Dest, Port, QueueSet, QueueState, Ring,
    RqConfig, RqCtx, RxRule, SqConfig, SqCtx, CQN_BASE, MAX_QUEUES, MAX_RSS, RQN_BASE, SQN_BASE,
};

/// The tables of a device, borrowed apart from its scratch memory so that the command
/// processor can use both.
pub(in crate::sim) struct Tables<'a> {
    pub(in crate::sim) ports: &'a mut [Port],
    pub(in crate::sim) queues: &'a mut [QueueSet],
    /// The page-list pool ([`pas`]): the first [`pas::POOL_BYTES`] of the scratch memory.
    pub(in crate::sim) pool: &'a mut [u8],
    /// The model's clock ([`Device::set_clock`]), nanoseconds.
    pub(in crate::sim) now: u64,
}

impl Tables<'_> {
    pub(in crate::sim) fn port_mut(&mut self, port: usize) -> Result<&mut Port, CmdError> {
        self.ports.get_mut(port).ok_or(CmdError::BadPort)
    }

    pub(in crate::sim) fn row(&self, port: usize, slot: usize) -> Option<&QueueSet> {
        row(self.queues, port, slot)
    }

    pub(in crate::sim) fn row_mut(
        &mut self,
        port: usize,
        slot: usize,
    ) -> Result<&mut QueueSet, CmdError> {
        if slot >= MAX_QUEUES {
            return Err(CmdError::NoSuchQueue);
        }
        self.queues
            .get_mut(port * MAX_QUEUES + slot)
            .ok_or(CmdError::NoSuchQueue)
    }

    pub(in crate::sim) fn free_slot(
        &self,
        port: usize,
        used: impl Fn(&QueueSet) -> bool,
    ) -> Result<usize, CmdError> {
        (0..MAX_QUEUES)
            .find(|&i| self.row(port, i).is_some_and(|r| !used(r)))
            .ok_or(CmdError::NoResources)
    }

    /// (port, slot) of an object number of kind `base` that `used` says exists.
    pub(in crate::sim) fn loc(
        &self,
        qn: u32,
        base: u32,
        used: impl Fn(&QueueSet) -> bool,
    ) -> Result<(usize, usize), CmdError> {
        let (p, slot) = split_qn(qn, base).ok_or(CmdError::NoSuchQueue)?;
        match self.row(p, slot) {
            Some(r) if used(r) && p < self.ports.len() => Ok((p, slot)),
            _ => Err(CmdError::NoSuchQueue),
        }
    }

    pub(in crate::sim) fn cq_loc(&self, cqn: u32) -> Result<(usize, usize), CmdError> {
        self.loc(cqn, CQN_BASE, |r| r.cq.used)
    }

    pub(in crate::sim) fn sq_loc(&self, sqn: u32) -> Result<(usize, usize), CmdError> {
        self.loc(sqn, SQN_BASE, |r| r.sq.used)
    }

    pub(in crate::sim) fn rq_loc(&self, rqn: u32) -> Result<(usize, usize), CmdError> {
        self.loc(rqn, RQN_BASE, |r| r.rq.used)
    }

    /// The CQ slot of `cqn` if it belongs to `port`.
    pub(in crate::sim) fn cq_of_port(&self, port: usize, cqn: u32) -> Result<usize, CmdError> {
        match self.cq_loc(cqn)? {
            (p, slot) if p == port => Ok(slot),
            _ => Err(CmdError::NoSuchQueue),
        }
    }

    /// Creates a CQ in `uar` signalling through EQ slot `eq` (+1; 0 = `cfg.vector`).
    pub(in crate::sim) fn create_cq(
        &mut self,
        cfg: &CqConfig,
        uar: u16,
        eq: u8,
    ) -> Result<u32, CmdError> {
        if cfg.log_size > 22 || cfg.buf % 64 != 0 || cfg.dbr % 8 != 0 {
            return Err(CmdError::BadParam);
        }
        self.port_mut(cfg.port)?;
        let slot = self.free_slot(cfg.port, |r| r.cq.used)?;
        if eq != 0 {
            self.row_mut(cfg.port, usize::from(eq - 1))?.eq.users += 1;
            self.port_mut(cfg.port)?.eq_cqs += 1;
        }
        let now = self.now;
        let cq = &mut self.row_mut(cfg.port, slot)?.cq;
        *cq = CqCtx::EMPTY;
        // The moderation timer starts with the CQ (an event-mode CQ's first event waits
        // for the period like any other).
        cq.moder.start = now;
        cq.used = true;
        cq.buf = Ring::contiguous(cfg.buf);
        cq.log_size = cfg.log_size;
        cq.dbr = cfg.dbr;
        cq.vector = cfg.vector;
        cq.eq = eq;
        cq.uar = uar;
        cq.compress = cfg.compress;
        Ok(make_qn(CQN_BASE, cfg.port, slot))
    }

    pub(in crate::sim) fn destroy_cq(&mut self, cqn: u32) -> Result<(), CmdError> {
        let (p, slot) = self.cq_loc(cqn)?;
        let row = self.row_mut(p, slot)?;
        if row.cq.users != 0 {
            return Err(CmdError::Busy);
        }
        let eq = row.cq.eq;
        let ring = row.cq.buf;
        row.cq = CqCtx::EMPTY;
        pas::free(self.pool, &ring);
        if eq != 0 {
            if let Ok(r) = self.row_mut(p, usize::from(eq - 1)) {
                r.eq.users = r.eq.users.saturating_sub(1);
            }
        }
        let port = self.port_mut(p)?;
        if eq != 0 {
            port.eq_cqs = port.eq_cqs.saturating_sub(1);
        }
        port.arm_pending &= !(1u64 << slot);
        port.moder_wait &= !(1u64 << slot);
        Ok(())
    }

    /// Creates an SQ in `state`; `extra` carries what only commands set.
    pub(in crate::sim) fn create_sq(
        &mut self,
        cfg: &SqConfig,
        state: QueueState,
        extra: SqCtx,
    ) -> Result<u32, CmdError> {
        if cfg.log_size > 15 || cfg.buf % 64 != 0 || cfg.dbr % 8 != 0 {
            return Err(CmdError::BadParam);
        }
        self.port_mut(cfg.port)?;
        let cq = self.cq_of_port(cfg.port, cfg.cqn)?;
        let slot = self.free_slot(cfg.port, |r| r.sq.used)?;
        self.row_mut(cfg.port, slot)?.sq = SqCtx {
            used: true,
            state,
            buf: Ring::contiguous(cfg.buf),
            log_size: cfg.log_size,
            dbr: cfg.dbr,
            cq: cq as u8,
            cc: 0,
            pc: 0,
            ..extra
        };
        self.row_mut(cfg.port, cq)?.cq.users += 1;
        if extra.tis != 0 {
            self.row_mut(cfg.port, usize::from(extra.tis - 1))?
                .tis
                .users += 1;
        }
        Ok(make_qn(SQN_BASE, cfg.port, slot))
    }

    pub(super) fn release_cq(&mut self, port: usize, cq: usize) {
        if let Ok(r) = self.row_mut(port, cq) {
            r.cq.users = r.cq.users.saturating_sub(1);
        }
    }

    pub(in crate::sim) fn destroy_sq(&mut self, sqn: u32) -> Result<(), CmdError> {
        let (p, slot) = self.sq_loc(sqn)?;
        let row = self.row_mut(p, slot)?;
        let cq = usize::from(row.sq.cq);
        let tis = row.sq.tis;
        let ring = row.sq.buf;
        row.sq = SqCtx::EMPTY;
        pas::free(self.pool, &ring);
        self.release_cq(p, cq);
        if tis != 0 {
            if let Ok(r) = self.row_mut(p, usize::from(tis - 1)) {
                r.tis.users = r.tis.users.saturating_sub(1);
            }
        }
        let port = self.port_mut(p)?;
        port.sq_doorbell &= !(1u64 << slot);
        port.sq_active &= !(1u64 << slot);
        // Destroying an SQ restarts a stalled transmit engine, as a reset does.
        port.faults.tx_stall = false;
        port.restart();
        Ok(())
    }

    /// Puts an SQ in `state`; RST and RDY restart its counters at 0. RST ends a stall or a
    /// stop of the port ([`Fault::TxStall`], [`Fault::DevStop`]).
    pub(in crate::sim) fn set_sq_state(
        &mut self,
        sqn: u32,
        state: QueueState,
    ) -> Result<(), CmdError> {
        let (p, slot) = self.sq_loc(sqn)?;
        let sq = &mut self.row_mut(p, slot)?.sq;
        let old = sq.state;
        sq.state = state;
        if state != QueueState::Error && old != QueueState::Ready {
            sq.cc = 0;
            sq.pc = 0;
        }
        // Leaving or entering RDY: pending doorbells are forgotten.
        if state != QueueState::Ready || old != QueueState::Ready {
            let port = self.port_mut(p)?;
            port.sq_doorbell &= !(1u64 << slot);
            port.sq_active &= !(1u64 << slot);
            // A reset restarts a stalled transmit engine and a stopped data path (injected
            // faults).
            if state == QueueState::Reset {
                port.faults.tx_stall = false;
                port.restart();
            }
        }
        Ok(())
    }

    /// Creates a cyclic RQ in `state`.
    pub(in crate::sim) fn create_rq(
        &mut self,
        cfg: &RqConfig,
        state: QueueState,
        pd: u8,
        flush: bool,
    ) -> Result<u32, CmdError> {
        if cfg.log_size > 15
            || !(4..=8).contains(&cfg.log_stride)
            || cfg.buf % (1u64 << cfg.log_stride) != 0
            || cfg.dbr % 8 != 0
        {
            return Err(CmdError::BadParam);
        }
        self.port_mut(cfg.port)?;
        let cq = self.cq_of_port(cfg.port, cfg.cqn)?;
        let slot = self.free_slot(cfg.port, |r| r.rq.used)?;
        self.row_mut(cfg.port, slot)?.rq = RqCtx {
            used: true,
            state,
            buf: Ring::contiguous(cfg.buf),
            log_size: cfg.log_size,
            log_stride: cfg.log_stride,
            dbr: cfg.dbr,
            cq: cq as u8,
            cc: 0,
            posted: 0,
            pd,
            flush,
            users: 0,
            counter: 0,
            strip_vlan: false,
        };
        self.row_mut(cfg.port, cq)?.cq.users += 1;
        Ok(make_qn(RQN_BASE, cfg.port, slot))
    }

    pub(in crate::sim) fn destroy_rq(&mut self, rqn: u32) -> Result<(), CmdError> {
        let (p, slot) = self.rq_loc(rqn)?;
        let row = self.row_mut(p, slot)?;
        let cq = usize::from(row.rq.cq);
        let ring = row.rq.buf;
        row.rq = RqCtx::EMPTY;
        pas::free(self.pool, &ring);
        self.release_cq(p, cq);
        let port = self.port_mut(p)?;
        // Keep the Rust API table's order, drop the entries of this RQ.
        let mut w = 0;
        for r in 0..usize::from(port.rss_len).min(MAX_RSS) {
            let e = port.rss[r];
            if usize::from(e) != slot {
                port.rss[w] = e;
                w += 1;
            }
        }
        port.rss_len = w as u8;
        port.restart();
        self.refresh_rx(p, false);
        Ok(())
    }

    /// Puts an RQ in `state`; RST and RDY from another state restart its counters at 0. RST
    /// ends a stop of the port ([`Fault::DevStop`]).
    pub(in crate::sim) fn set_rq_state(
        &mut self,
        rqn: u32,
        state: QueueState,
    ) -> Result<(), CmdError> {
        let (p, slot) = self.rq_loc(rqn)?;
        let rq = &mut self.row_mut(p, slot)?.rq;
        if state != QueueState::Error && rq.state != QueueState::Ready {
            rq.cc = 0;
            rq.posted = 0;
        }
        rq.state = state;
        if state == QueueState::Reset {
            self.port_mut(p)?.restart();
        }
        Ok(())
    }

    pub(in crate::sim) fn set_rss(&mut self, port: usize, rqns: &[u32]) -> Result<(), CmdError> {
        if rqns.len() > MAX_RSS {
            return Err(CmdError::BadParam);
        }
        let mut table = [0u8; MAX_RSS];
        for (i, &rqn) in rqns.iter().enumerate() {
            let (p, slot) = self.rq_loc(rqn)?;
            if p != port {
                return Err(CmdError::NoSuchQueue);
            }
            table[i] = slot as u8;
        }
        let pt = self.port_mut(port)?;
        pt.rss = table;
        // At most MAX_RSS (64), checked above.
        pt.rss_len = rqns.len() as u8;
        pt.rx_api = true;
        self.refresh_rx(port, false);
        Ok(())
    }

    /// Recomputes where port `p`'s received frames go: the order in which its flow table
    /// entries are looked at (by table, then flow index; each table's run in
    /// [`FtCtx::first`] / [`FtCtx::count`]), whether it steers by flow tables (a root table)
    /// or by its first indirect TIR (none), and the RQs frames can reach (every RQ behind a
    /// TIR an entry forwards to, or the first indirect TIR's). `by_commands`: a command
    /// changed the steering, which takes the port back from the Rust API's table. Control
    /// path only (it scans the port's rows).
    pub(in crate::sim) fn refresh_rx(&mut self, p: usize, by_commands: bool) {
        let Some(pt) = self.ports.get(p) else {
            return;
        };
        let (root, first) = (pt.func.root_ft, pt.func.rss_tir);
        // Entries by (table, index): a selection sort over the port's rows, bounded.
        let mut order = [0u8; MAX_QUEUES];
        let mut n = 0usize;
        let mut last: Option<(u8, u32)> = None;
        while n < MAX_QUEUES {
            let mut next: Option<((u8, u32), usize)> = None;
            for i in 0..MAX_QUEUES {
                let Some(e) = self.row(p, i).map(|r| r.fte).filter(|e| e.used) else {
                    continue;
                };
                let at = (e.table, e.index);
                if last.map_or(true, |l| at > l) && next.map_or(true, |(b, _)| at < b) {
                    next = Some((at, i));
                }
            }
            let Some((at, slot)) = next else {
                break;
            };
            last = Some(at);
            if let Some(o) = order.get_mut(n) {
                *o = (slot as u8).wrapping_add(1);
            }
            n += 1;
        }
        for t in 0..MAX_QUEUES {
            let run: Option<(usize, usize)> = {
                let mut it = order.iter().take(n).enumerate().filter(|(_, &f)| {
                    self.row(p, usize::from(f.wrapping_sub(1)))
                        .is_some_and(|r| usize::from(r.fte.table) == t)
                });
                it.next().map(|(k, _)| (k, 1 + it.count()))
            };
            if let Ok(r) = self.row_mut(p, t) {
                let (f, c) = run.unwrap_or((0, 0));
                r.ft.first = f as u8;
                r.ft.count = c as u8;
            }
        }
        for (i, &f) in order.iter().enumerate() {
            if let Ok(row) = self.row_mut(p, i) {
                row.rx_rule = RxRule {
                    fte: if i < n { f } else { 0 },
                };
            }
        }
        // The RQs behind every TIR frames can reach.
        let mut rqs = 0u64;
        let add_tir = |q: &[QueueSet], tir: usize, rqs: &mut u64| {
            let Some(t) = row(q, p, tir).map(|r| r.tir).filter(|t| t.used) else {
                return;
            };
            if !t.indirect {
                *rqs |= 1u64 << (t.inline_rq % 64);
            } else if let Some(r) = row(q, p, usize::from(t.rqt)) {
                for &s in r.rqt.rqs.iter().take(usize::from(r.rqt.len)) {
                    *rqs |= 1u64 << (s % 64);
                }
            }
        };
        if root == 0 {
            if first != 0 {
                add_tir(self.queues, usize::from(first - 1), &mut rqs);
            }
        } else {
            for i in 0..MAX_QUEUES {
                if let Some(Dest::Tir(t)) =
                    self.row(p, i).filter(|r| r.fte.used).map(|r| r.fte.dest)
                {
                    add_tir(self.queues, usize::from(t), &mut rqs);
                }
            }
        }
        let Some(pt) = self.ports.get_mut(p) else {
            return;
        };
        if by_commands {
            pt.rx_api = false;
        }
        pt.rx_legacy = root == 0;
        pt.rx_rqs = if pt.rx_api {
            pt.rss
                .iter()
                .take(usize::from(pt.rss_len).min(MAX_RSS))
                .fold(0, |m, &s| m | 1u64 << (s % 64))
        } else {
            rqs
        };
    }
}
