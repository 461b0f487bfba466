// SPDX-License-Identifier: GPL-2.0

//! The MANA model's queues: the contexts of a work queue (SQ or RQ), CQ and EQ
//! ([`QueueSet`], one row per slot of a port; GDMA "work queue", "completion queue", "event
//! queue" as gdma.h and mana.h describe them) and their lifecycles, which the HWC requests
//! (GDMA_CREATE_QUEUE, MANA_CREATE_WQ_OBJ, their destroys) and the Rust API share. The
//! driver's halves are `hwif/mana/wq.rs`, `cq.rs`, `sq.rs`, `rq.rs`.

use super::{
    make_id, used, CmdError, Device, Kind, Port, Region, MAX_QUEUES, MAX_RSS, REGIONS_PER_ROW,
};
use crate::hwif::hw::DmaAddr;
use core::ops::DerefMut;

with_empty! {
    #[derive(Clone, Copy)]
    pub(super) struct WqCtx {
        pub(super) used: bool = false,
        pub(super) error: bool = false,
        pub(super) buf: DmaAddr = 0,
        pub(super) size: u32 = 0,
        pub(super) cq: u8 = 0,
        /// Consumer byte offset (free-running).
        pub(super) cons: u32 = 0,
        /// Producer byte offset from the last accepted doorbell.
        pub(super) tail: u32 = 0,
    }
    pub(super) const EMPTY;
}

with_empty! {
    #[derive(Clone, Copy)]
    pub(super) struct CqCtx {
        pub(super) used: bool = false,
        pub(super) buf: DmaAddr = 0,
        pub(super) num: u32 = 0,
        /// The EQ it reports to: its global row index (`port * MAX_QUEUES + slot`; an EQ created
        /// through the HWC may live in another port's rows).
        pub(super) eq: Option<u16> = None,
        /// CQEs written (0-based producer index).
        pub(super) pi: u32 = 0,
        pub(super) armed: bool = false,
        pub(super) arm_tail: u32 = 0,
        pub(super) since_db: u32 = 0,
        pub(super) users: u8 = 0,
    }
    pub(super) const EMPTY;
}

with_empty! {
    #[derive(Clone, Copy)]
    pub(super) struct EqCtx {
        pub(super) used: bool = false,
        pub(super) buf: DmaAddr = 0,
        pub(super) num: u32 = 0,
        pub(super) vector: u16 = 0,
        pub(super) pi: u32 = 0,
        pub(super) armed: bool = false,
        pub(super) arm_tail: u32 = 0,
        /// CQs reporting to it (of any port).
        pub(super) users: u16 = 0,
    }
    pub(super) const EMPTY;
}

with_empty! {
    /// One row of the queue tables (an SQ, an RQ, a CQ and an EQ context). A device needs
    /// [`MAX_QUEUES`] per port; slot i of port p is entry `p * MAX_QUEUES + i`.
    #[derive(Clone, Copy)]
    pub struct QueueSet {
        pub(super) sq: WqCtx = WqCtx::EMPTY,
        pub(super) rq: WqCtx = WqCtx::EMPTY,
        pub(super) cq: CqCtx = CqCtx::EMPTY,
        pub(super) eq: EqCtx = EqCtx::EMPTY,
        /// A share of the device's DMA region table (GDMA_CREATE_DMA_REGION).
        pub(super) regions: [Region; REGIONS_PER_ROW] = [Region::EMPTY; REGIONS_PER_ROW],
    }
    /// An unused row.
    pub const EMPTY;
}

impl QueueSet {
    /// The SQ's (`k` [`Kind::Sq`]) or the RQ's context.
    pub(super) fn wq(&self, k: Kind) -> &WqCtx {
        if k == Kind::Sq {
            &self.sq
        } else {
            &self.rq
        }
    }

    /// The SQ's (`k` [`Kind::Sq`]) or the RQ's context, to change.
    pub(super) fn wq_mut(&mut self, k: Kind) -> &mut WqCtx {
        if k == Kind::Sq {
            &mut self.sq
        } else {
            &mut self.rq
        }
    }
}

/// A CQ of `num` 64-byte entries at `buf` must have a power of two of them, 2..=2^24, and
/// be 64-byte aligned.
fn check_cq(buf: DmaAddr, num: u32) -> Result<(), CmdError> {
    if !num.is_power_of_two() || !(2..=1 << 24).contains(&num) || buf % 64 != 0 {
        return Err(CmdError::BadParam);
    }
    Ok(())
}

impl Default for QueueSet {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl<P, Q, B> Device<P, Q, B>
where
    P: DerefMut<Target = [Port]>,
    Q: DerefMut<Target = [QueueSet]>,
    B: DerefMut<Target = [u8]>,
{
    pub(super) fn alloc(&mut self, port: usize, k: Kind) -> Result<usize, CmdError> {
        if port >= self.ports.len() {
            return Err(CmdError::BadPort);
        }
        (0..MAX_QUEUES)
            .find(|&s| self.row(port, s).is_some_and(|r| !used(r, k)))
            .ok_or(CmdError::NoResources)
    }

    /// Creates an EQ of `num` 16-byte entries (a power of two, 2..=2^16) at `buf` that raises
    /// MSI-X `vector`. It starts disarmed: the driver arms it with an EQ doorbell.
    pub fn create_eq(
        &mut self,
        port: usize,
        buf: DmaAddr,
        num: u32,
        vector: u16,
    ) -> Result<u32, CmdError> {
        if !num.is_power_of_two() || !(2..=1 << 16).contains(&num) || buf % 16 != 0 {
            return Err(CmdError::BadParam);
        }
        let s = self.alloc(port, Kind::Eq)?;
        let r = self.row_mut(port, s).ok_or(CmdError::NoSuchQueue)?;
        r.eq = EqCtx {
            used: true,
            buf,
            num,
            vector,
            ..EqCtx::EMPTY
        };
        Ok(make_id(Kind::Eq, port, s))
    }

    /// Creates a CQ of `num` 64-byte entries (a power of two, 2..=2^24) at `buf`, reporting
    /// to EQ `eq` (of the same port) if given.
    pub fn create_cq(
        &mut self,
        port: usize,
        buf: DmaAddr,
        num: u32,
        eq: Option<u32>,
    ) -> Result<u32, CmdError> {
        check_cq(buf, num)?;
        let eq = match eq {
            Some(id) => match self.loc(id, Kind::Eq)? {
                (p, _) if p == port => Some(id),
                _ => return Err(CmdError::NoSuchQueue),
            },
            None => None,
        };
        self.create_cq_on(port, buf, num, eq)
    }

    /// Creates a CQ reporting to EQ `eq` of any port (the HWC path: MANA EQs are shared by
    /// the vports).
    pub(super) fn create_cq_on(
        &mut self,
        port: usize,
        buf: DmaAddr,
        num: u32,
        eq: Option<u32>,
    ) -> Result<u32, CmdError> {
        check_cq(buf, num)?;
        let eq = match eq {
            Some(id) => {
                let (p, s) = self.loc(id, Kind::Eq)?;
                Some(p * MAX_QUEUES + s)
            }
            None => None,
        };
        let s = self.alloc(port, Kind::Cq)?;
        if let Some(g) = eq {
            if let Some(r) = self.queues.get_mut(g) {
                r.eq.users = r.eq.users.saturating_add(1);
            }
        }
        let r = self.row_mut(port, s).ok_or(CmdError::NoSuchQueue)?;
        r.cq = CqCtx {
            used: true,
            buf,
            num,
            eq: eq.map(|g| g as u16),
            ..CqCtx::EMPTY
        };
        Ok(make_id(Kind::Cq, port, s))
    }

    pub(super) fn create_wq(
        &mut self,
        k: Kind,
        port: usize,
        buf: DmaAddr,
        size: u32,
        cq: u32,
    ) -> Result<u32, CmdError> {
        if !size.is_power_of_two() || size < 4096 || buf % 4096 != 0 {
            return Err(CmdError::BadParam);
        }
        let c = match self.loc(cq, Kind::Cq)? {
            (p, s) if p == port => s,
            _ => return Err(CmdError::NoSuchQueue),
        };
        let s = self.alloc(port, k)?;
        let ctx = WqCtx {
            used: true,
            buf,
            size,
            cq: c as u8,
            ..WqCtx::EMPTY
        };
        let r = self.row_mut(port, s).ok_or(CmdError::NoSuchQueue)?;
        *r.wq_mut(k) = ctx;
        if let Some(r) = self.row_mut(port, c) {
            r.cq.users += 1;
        }
        Ok(make_id(k, port, s))
    }

    /// Creates an SQ of `size` bytes (a power of two ≥ 4 KiB, page aligned) completing to CQ
    /// `cq` of the same port.
    pub fn create_sq(
        &mut self,
        port: usize,
        buf: DmaAddr,
        size: u32,
        cq: u32,
    ) -> Result<u32, CmdError> {
        self.create_wq(Kind::Sq, port, buf, size, cq)
    }

    /// Creates an RQ of `size` bytes completing to CQ `cq` of the same port.
    pub fn create_rq(
        &mut self,
        port: usize,
        buf: DmaAddr,
        size: u32,
        cq: u32,
    ) -> Result<u32, CmdError> {
        self.create_wq(Kind::Rq, port, buf, size, cq)
    }

    /// Empties WQ `id` of kind `k` (an SQ or an RQ) and releases its CQ; returns its port
    /// and slot.
    fn clear_wq(&mut self, id: u32, k: Kind) -> Result<(usize, usize), CmdError> {
        let (p, s) = self.loc(id, k)?;
        let c = self.row(p, s).map_or(0, |r| usize::from(r.wq(k).cq));
        if let Some(r) = self.row_mut(p, s) {
            *r.wq_mut(k) = WqCtx::EMPTY;
        }
        self.release_cq(p, c);
        Ok((p, s))
    }

    pub(super) fn release_cq(&mut self, port: usize, c: usize) {
        if let Some(r) = self.row_mut(port, c) {
            r.cq.users = r.cq.users.saturating_sub(1);
        }
    }

    /// Destroys an SQ; WQEs not executed are abandoned. Ends a [`Fault::TxStall`] or
    /// [`Fault::DevStop`] of its port (the other SQs' posted WQEs execute at the next run).
    pub fn destroy_sq(&mut self, id: u32) -> Result<(), CmdError> {
        let (p, s) = self.clear_wq(id, Kind::Sq)?;
        if let Some(pt) = self.ports.get_mut(p) {
            pt.sq_work &= !(1 << s);
            pt.sq_paused &= !(1 << s);
            pt.wq_destroyed(true);
        }
        Ok(())
    }

    /// Destroys an RQ; it leaves the port's RSS table. Ends a [`Fault::DevStop`] of its port.
    pub fn destroy_rq(&mut self, id: u32) -> Result<(), CmdError> {
        let (p, s) = self.clear_wq(id, Kind::Rq)?;
        if let Some(pt) = self.ports.get_mut(p) {
            let mut w = 0;
            for i in 0..pt.rss_len.min(MAX_RSS) {
                let e = pt.rss[i];
                if usize::from(e) != s {
                    pt.rss[w] = e;
                    w += 1;
                }
            }
            pt.rss_len = w;
            pt.wq_destroyed(false);
        }
        self.resume();
        Ok(())
    }

    /// Destroys a CQ no queue uses.
    pub fn destroy_cq(&mut self, id: u32) -> Result<(), CmdError> {
        let (p, s) = self.loc(id, Kind::Cq)?;
        let (users, eq) = self.row(p, s).map_or((0, None), |r| (r.cq.users, r.cq.eq));
        if users != 0 {
            return Err(CmdError::Busy);
        }
        if let Some(r) = self.row_mut(p, s) {
            r.cq = CqCtx::EMPTY;
        }
        if let Some(e) = eq.and_then(|g| self.queues.get_mut(usize::from(g))) {
            e.eq.users = e.eq.users.saturating_sub(1);
        }
        if let Some(pt) = self.ports.get_mut(p) {
            pt.cq_arm &= !(1 << s);
        }
        Ok(())
    }

    /// Destroys an EQ no CQ uses.
    pub fn destroy_eq(&mut self, id: u32) -> Result<(), CmdError> {
        let (p, s) = self.loc(id, Kind::Eq)?;
        if self.row(p, s).is_some_and(|r| r.eq.users != 0) {
            return Err(CmdError::Busy);
        }
        if let Some(r) = self.row_mut(p, s) {
            r.eq = EqCtx::EMPTY;
        }
        if let Some(pt) = self.ports.get_mut(p) {
            pt.eq_arm &= !(1 << s);
        }
        Ok(())
    }
}
