// SPDX-License-Identifier: GPL-2.0

//! The HWC requests of a running MANA device for one port: the channels' EQs and WQ
//! objects, RSS (MANA_CONFIG_VPORT_RX), loopback and flow control (rsnic's own requests),
//! and the device's counters (MANA_QUERY_GF_STAT).
//!
//! Upstream counterpart: `mana_en.c` (`mana_create_wq_obj`, `mana_destroy_wq_obj`,
//! `mana_config_rss`, `mana_query_gf_stats`) and `gdma_main.c` (`mana_gd_create_mana_eq`,
//! `mana_gd_destroy_queue`).

use crate::family::mana::ctrl::{Cause, CtlError, Func, WqObj};
use crate::hwif::hw::Coherent;
use crate::hwif::mana::gdma_req as req;
use crate::hwif::mana::gdma_req::MsgError;
use crate::hwif::mana::probe::ProbeErrorKind;
use crate::kdma::KCoherent;
use crate::rss::{RssChange, RssSpec};
use kernel::prelude::*;

impl Func {
    /// An EQ over `buf` raising MSI-X index `msix` (`mana_create_eq` for one queue:
    /// CREATE_DMA_REGION, GDMA_CREATE_QUEUE; the queue owns the region from then on).
    /// Returns its id. Sleeps.
    pub(crate) fn create_eq(&self, buf: &KCoherent, msix: u32) -> Result<u32> {
        let info = &self.gdma.info;
        self.with_ctl(|ctl, env, mana| {
            let region = ctl.region(env, buf)?;
            let spec = req::EqSpec {
                dev_id: mana,
                pdid: info.reg.pdid,
                doorbell: info.reg.db_id,
                region,
                queue_size: buf.size() as u32,
                log2_throttle_limit: crate::hwif::mana::probe::LOG2_EQ_THROTTLE,
                msix_index: msix,
            };
            let code = req::GDMA_CREATE_QUEUE;
            let r = ctl.request(
                env,
                code,
                |b| req::create_eq(b, &spec),
                req::parse_create_queue,
            );
            if r.is_err() {
                ctl.destroy_region(env, region);
            }
            r
        })
    }

    /// The vport's internal loopback on or off (RSNIC_SET_LOOPBACK: rsnic's request, the
    /// model's feature; upstream MANA has none). Sleeps.
    pub(crate) fn set_loopback(&self, on: bool) -> Result {
        self.rsnic_request(self.gdma.rsnic_caps().loopback, "internal loopback")?;
        let vport = self.vport.vport;
        self.mana_request(
            req::RSNIC_SET_LOOPBACK,
            |b, who| req::set_loopback(b, who, vport, on),
            |r, who| req::parse_general(r, req::RSNIC_SET_LOOPBACK, Some(who)),
        )
    }

    /// The vport's flow control per direction (RSNIC_SET_PAUSE: rsnic's request, the model's
    /// feature; upstream MANA has none). The device keeps it as the vport's state, across
    /// the WQ objects' destruction and re-creation. Sleeps.
    pub(crate) fn set_pause(&self, rx: bool, tx: bool) -> Result {
        self.rsnic_request(self.gdma.rsnic_caps().pause, "flow control")?;
        let vport = self.vport.vport;
        self.mana_request(
            req::RSNIC_SET_PAUSE,
            |b, who| req::set_pause(b, who, vport, rx, tx),
            |r, who| req::parse_general(r, req::RSNIC_SET_PAUSE, Some(who)),
        )
    }

    /// The vport's flow control and PAUSE frame counters (RSNIC_QUERY_PAUSE, rsnic's).
    /// Sleeps.
    pub(crate) fn query_pause(&self) -> Result<req::PauseState> {
        self.rsnic_request(self.gdma.rsnic_caps().pause, "flow control")?;
        let vport = self.vport.vport;
        self.mana_request(
            req::RSNIC_QUERY_PAUSE,
            |b, who| req::query_pause(b, who, vport),
            req::parse_query_pause,
        )
    }

    /// The device's counters (MANA_QUERY_GF_STAT for every counter, as `mana_query_gf_stats`
    /// asks): the function's, so the sums over all its vports. Sleeps.
    pub(crate) fn query_gf_stat(&self) -> Result<req::GfStats> {
        self.mana_request(
            req::MANA_QUERY_GF_STAT,
            |b, who| req::query_gf_stat(b, who, req::GF_STAT_ALL),
            req::parse_query_gf_stat,
        )
    }

    /// Calls MANA request `code` as a fresh caller (a new `activity_id`): `build` writes
    /// it, `parse` reads the response, both for that caller. Sleeps.
    fn mana_request<T>(
        &self,
        code: u32,
        build: impl FnOnce(&mut [u8], req::Caller) -> Result<usize, MsgError>,
        parse: impl FnOnce(&[u8], req::Caller) -> Result<T, MsgError>,
    ) -> Result<T> {
        self.with_ctl(|ctl, env, mana| {
            let who = ctl.caller(mana);
            ctl.request(env, code, |b| build(b, who), |r| parse(r, who))
        })
    }

    /// DISABLE_QUEUE of EQ `id` (its region goes with it); a failure is logged. Sleeps.
    pub(crate) fn destroy_eq(&self, id: u32) {
        let _ = self.with_ctl(|ctl, env, mana| {
            ctl.simple(env, req::GDMA_DISABLE_QUEUE, |b| {
                req::disable_queue(b, mana, req::GDMA_EQ, id)
            })
        });
    }

    /// An SQ (`wq_type` [`req::GDMA_SQ`]) or RQ over `wq` with its CQ over `cq`, reporting
    /// to EQ `eq` (`mana_create_wq_obj`: a DMA region for each, then MANA_CREATE_WQ_OBJ).
    /// Sleeps.
    pub(crate) fn create_wq(
        &self,
        wq_type: u32,
        wq: &KCoherent,
        cq: &KCoherent,
        eq: u32,
    ) -> Result<WqObj> {
        let vport = self.vport.vport;
        self.with_ctl(|ctl, env, mana| {
            let wr = ctl.region(env, wq)?;
            let cr = match ctl.region(env, cq) {
                Ok(r) => r,
                Err(e) => {
                    ctl.destroy_region(env, wr);
                    return Err(e);
                }
            };
            let spec = req::WqObjSpec {
                vport,
                wq_type,
                wq_region: wr,
                cq_region: cr,
                wq_size: wq.size() as u32,
                cq_size: cq.size() as u32,
                cq_moderation_ctx_id: 0,
                cq_parent_eq: eq,
            };
            let who = ctl.caller(mana);
            let r = ctl.request(
                env,
                req::MANA_CREATE_WQ_OBJ,
                |b| req::create_wq_obj(b, who, &spec),
                |r| req::parse_create_wq_obj(r, who),
            );
            let o = match r {
                Ok(o) => o,
                Err(e) => {
                    ctl.destroy_region(env, cr);
                    ctl.destroy_region(env, wr);
                    return Err(e);
                }
            };
            if wq_type == req::GDMA_RQ {
                match ctl.rqs.iter_mut().find(|x| x.is_none()) {
                    Some(x) => *x = Some((o.wq_id, o.handle)),
                    None => {
                        // Not reachable by RSS without its entry: destroy it again.
                        let who = ctl.caller(mana);
                        let _ = ctl.simple(env, req::MANA_DESTROY_WQ_OBJ, |b| {
                            req::destroy_wq_obj(b, who, wq_type, o.handle)
                        });
                        return Err(CtlError::req(
                            req::MANA_CREATE_WQ_OBJ,
                            Cause::Probe(ProbeErrorKind::Limits),
                        ));
                    }
                }
            }
            Ok(WqObj {
                wq_id: o.wq_id,
                cq_id: o.cq_id,
                handle: o.handle,
            })
        })
    }

    /// MANA_DESTROY_WQ_OBJ of an SQ or RQ object (its CQ and both regions go with it); a
    /// failure is logged. Sleeps.
    pub(crate) fn destroy_wq(&self, wq_type: u32, handle: u64) {
        let _ = self.with_ctl(|ctl, env, mana| {
            for x in ctl.rqs.iter_mut() {
                if x.is_some_and(|(_, h)| h == handle) {
                    *x = None;
                }
            }
            let who = ctl.caller(mana);
            ctl.simple(env, req::MANA_DESTROY_WQ_OBJ, |b| {
                req::destroy_wq_obj(b, who, wq_type, handle)
            })
        });
    }

    /// Steers the vport's received frames as `spec` says (MANA_CONFIG_VPORT_RX as
    /// `mana_config_rss` does): RX and RSS on, the indirection table (the vport's size) of
    /// the objects of its channels' RQs with the first channel's as default when `change`
    /// has the table, the hash key when it has the key (`update_indir_tab`,
    /// `update_hashkey`: a key-only change leaves the table, nothing is re-created).
    /// `None` turns RX off (the table is not updated, the request carries it anyway).
    /// Sleeps.
    pub(crate) fn set_rss(&self, spec: Option<&RssSpec<'_>>, change: RssChange) -> Result {
        let vport = self.vport.vport;
        let n = (self.vport.indir_table_size as usize).clamp(1, crate::rss::MAX_TABLE);
        let mut tab = KVec::from_elem(0u64, n, GFP_KERNEL)?;
        let off = [0u8; req::MANA_HASH_KEY_SIZE];
        self.with_ctl(|ctl, env, mana| {
            let bad = CtlError::req(req::MANA_CONFIG_VPORT_RX, Cause::Msg(MsgError::BadArgument));
            let handle = |rqn: Option<u32>| {
                ctl.rqs
                    .iter()
                    .flatten()
                    .find(|&&(id, _)| Some(id) == rqn)
                    .map(|&(_, h)| h)
                    .ok_or(bad)
            };
            let mut default = 0;
            if let Some(spec) = spec {
                if spec.table.len() != n {
                    return Err(bad);
                }
                for (t, &e) in tab.iter_mut().zip(spec.table) {
                    *t = handle(spec.rq_of(e))?;
                }
                default = handle(spec.rqns.first().copied())?;
            }
            let on = spec.is_some();
            let steer = req::RxSteer {
                vport,
                rx_enable: if on {
                    req::TRI_STATE_TRUE
                } else {
                    req::TRI_STATE_FALSE
                },
                rss_enable: if on {
                    req::TRI_STATE_TRUE
                } else {
                    req::TRI_STATE_UNKNOWN
                },
                update_default_rxobj: on && change.table,
                update_hashkey: on && change.key,
                update_indir_tab: on && change.table,
                default_rxobj: default,
                hashkey: spec.map_or(&off, |s| s.key),
                indir_tab: &tab,
            };
            let who = ctl.caller(mana);
            let code = req::MANA_CONFIG_VPORT_RX;
            ctl.request(
                env,
                code,
                |b| req::config_vport_rx(b, who, &steer),
                |r| req::parse_general(r, code, Some(who)),
            )
        })
    }
}
