// SPDX-License-Identifier: GPL-2.0

//! The MANA model's RX steering of a vport ([`Steer`]): MANA_CONFIG_VPORT_RX (version 2:
//! RX on/off, RSS on/off, default RQ, hash key, indirection table of at most
//! [`super::MAX_RSS`] RQ objects, each field changed only with its `update_*` flag) and how
//! it becomes the engine's RSS table. Split from [`super::gdma_req`], which dispatches the
//! request. The driver's half is `config_vport_rx` in `hwif/mana/gdma_req.rs`.

use super::gdma_req::{
    st, Exec, STATUS_INVALID_HANDLE, STATUS_INVALID_PARAMETER, STATUS_NOT_SUPPORTED,
};
use super::hwc::Msg;
use super::{Device, Kind, Port, QueueSet, MAX_RSS};
use crate::hwif::bytes::{le16, le32, le64};
use crate::hwif::hw::BusMemory;
use core::ops::DerefMut;

/// RX steering of a vport (MANA_CONFIG_VPORT_RX).
#[derive(Clone, Copy)]
pub struct Steer {
    pub(super) rx_enable: bool,
    rss_enable: bool,
    indir: [u8; MAX_RSS],
    indir_len: usize,
    default_rq: Option<u8>,
    pub(super) hashkey: [u8; 40],
    pub(super) configured: bool,
}

impl Steer {
    /// Whether the vport's RX is on (MANA_CONFIG_VPORT_RX's `rx_enable`).
    pub(super) fn rx_enabled(&self) -> bool {
        self.rx_enable
    }

    /// Whether RX is on and RQ `slot` is in the indirection table or the default RQ (a
    /// MANA_DESTROY_WQ_OBJ of it is refused: busy).
    pub(super) fn holds(&self, slot: usize) -> bool {
        let in_table = self.indir[..self.indir_len.min(MAX_RSS)]
            .iter()
            .any(|&x| usize::from(x) == slot)
            || self.default_rq == Some(slot as u8);
        self.rx_enable && in_table
    }

    /// RQ `slot` was destroyed: it leaves the indirection table and the default RQ.
    pub(super) fn forget(&mut self, slot: usize) {
        let mut w = 0;
        for i in 0..self.indir_len.min(MAX_RSS) {
            if usize::from(self.indir[i]) != slot {
                self.indir[w] = self.indir[i];
                w += 1;
            }
        }
        self.indir_len = w;
        if self.default_rq == Some(slot as u8) {
            self.default_rq = None;
        }
    }

    /// Nothing configured.
    pub const EMPTY: Self = Self {
        rx_enable: false,
        rss_enable: false,
        indir: [0; MAX_RSS],
        indir_len: 0,
        default_rq: None,
        hashkey: crate::sim::pkt::RSS_KEY,
        configured: false,
    };
}

impl<P, Q, B> Device<P, Q, B>
where
    P: DerefMut<Target = [Port]>,
    Q: DerefMut<Target = [QueueSet]>,
    B: DerefMut<Target = [u8]>,
{
    // MANA_CONFIG_VPORT_RX (v2): vport 40, num_indir_entries 48, indir_tab_offset 50,
    // rx_enable 52, rss_enable 56, update_default_rxobj 60, update_hashkey 61,
    // update_indir_tab 62, default_rxobj 64, hashkey 72..112, cqe_coalescing_enable 112,
    // indir_tab at indir_tab_offset.
    pub(super) fn config_vport_rx<M: BusMemory>(&mut self, m: &Msg<'_, M>, _b: &mut [u8]) -> Exec {
        let h = &m.head;
        if m.len < 120 {
            return Err(STATUS_INVALID_PARAMETER);
        }
        let p = self.vport(le64(h, 40))?;
        let n = usize::from(le16(h, 48));
        let tab = usize::from(le16(h, 50));
        if n == 0 || n > 512 || tab != 120 || m.len != tab + 8 * n {
            return Err(STATUS_INVALID_PARAMETER);
        }
        if n > MAX_RSS {
            return Err(STATUS_NOT_SUPPORTED);
        }
        let tri = |v: u32| match v {
            0 => Ok(Some(false)),
            1 => Ok(Some(true)),
            u32::MAX => Ok(None),
            _ => Err(STATUS_INVALID_PARAMETER),
        };
        let rx = tri(le32(h, 52))?;
        let rss = tri(le32(h, 56))?;
        let (upd_def, upd_key, upd_tab) = (h[60], h[61], h[62]);
        if upd_def > 1 || upd_key > 1 || upd_tab > 1 {
            return Err(STATUS_INVALID_PARAMETER);
        }
        if h[112] != 0 {
            return Err(STATUS_NOT_SUPPORTED);
        }
        let rq_slot = |d: &Self, handle: u64| -> Result<u8, u32> {
            let (k, id) = d.wq_obj(handle)?;
            let (q, s) = d.loc(id, Kind::Rq).map_err(st)?;
            if k != Kind::Rq || q != p {
                return Err(STATUS_INVALID_HANDLE);
            }
            Ok(s as u8)
        };
        let default = if upd_def == 1 {
            Some(rq_slot(self, le64(h, 64))?)
        } else {
            None
        };
        let mut table = [0u8; MAX_RSS];
        if upd_tab == 1 {
            for (i, t) in table.iter_mut().enumerate().take(n) {
                let e = m.u64_at(tab + 8 * i).ok_or(STATUS_INVALID_PARAMETER)?;
                *t = rq_slot(self, e)?;
            }
        }
        let Some(pt) = self.ports.get_mut(p) else {
            return Err(STATUS_INVALID_HANDLE);
        };
        let s = &mut pt.steer;
        s.configured = true;
        if let Some(v) = rx {
            s.rx_enable = v;
        }
        if let Some(v) = rss {
            s.rss_enable = v;
        }
        if let Some(d) = default {
            s.default_rq = Some(d);
        }
        if upd_key == 1 {
            s.hashkey.copy_from_slice(&h[72..112]);
        }
        if upd_tab == 1 {
            s.indir = table;
            s.indir_len = n;
        }
        self.apply_steer(p);
        Ok(0)
    }

    /// Sets the engine's RSS table from the vport's steering: empty with RX disabled, the
    /// indirection table with RSS on, the default RQ with RSS off.
    fn apply_steer(&mut self, p: usize) {
        let Some(pt) = self.ports.get_mut(p) else {
            return;
        };
        let s = pt.steer;
        let (t, n) = if !s.rx_enable {
            ([0u8; MAX_RSS], 0)
        } else if s.rss_enable {
            (s.indir, s.indir_len)
        } else if let Some(d) = s.default_rq {
            let mut t = [0u8; MAX_RSS];
            t[0] = d;
            (t, 1)
        } else {
            ([0u8; MAX_RSS], 0)
        };
        pt.rss = t;
        pt.rss_len = n;
        pt.rss_key = s.hashkey;
        self.resume();
    }
}
