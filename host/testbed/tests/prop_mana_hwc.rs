//! Random sequences of control requests over the HWC against the MANA model: every request
//! is answered (success or a status, never a lost response, a refused WQE or a panic), and
//! the state stays consistent: whatever was created can be torn down in upstream's order,
//! after which DEREGISTER_DEVICE finds nothing alive. Mutated requests (one byte changed)
//! are answered too. `PROPTEST_CASES` sets the number of cases (default 64).

use proptest::prelude::*;
use rsnic_core::hwif::hw::Coherent;
use rsnic_core::hwif::mana::gdma_req as req;
use rsnic_core::hwif::mana::hwc::HwcError;
use rsnic_testbed::mana_hwc::{deregister_device, CallError, HwcHost};
use rsnic_testbed::mana_pair::new_mana;
use rsnic_testbed::mem::HostBuf;

#[derive(Debug, Clone)]
enum Op {
    Region(u8),
    DestroyRegion(u8),
    CreateEq(u8),
    DisableEq(u8),
    VportTx(u8),
    WqObj(bool, u8, u8, u8),
    DestroyWqObj(u8, bool),
    Steer(u8, bool, Vec<u8>),
    Fence(u8),
    Stats,
    Mutated(u8, u16, u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u8..4).prop_map(Op::Region),
        any::<u8>().prop_map(Op::DestroyRegion),
        any::<u8>().prop_map(Op::CreateEq),
        any::<u8>().prop_map(Op::DisableEq),
        (0u8..3).prop_map(Op::VportTx),
        (any::<bool>(), 0u8..3, any::<u8>(), any::<u8>())
            .prop_map(|(a, b, c, d)| Op::WqObj(a, b, c, d)),
        (any::<u8>(), any::<bool>()).prop_map(|(a, b)| Op::DestroyWqObj(a, b)),
        (
            0u8..3,
            any::<bool>(),
            prop::collection::vec(any::<u8>(), 1..5)
        )
            .prop_map(|(a, b, c)| Op::Steer(a, b, c)),
        any::<u8>().prop_map(Op::Fence),
        Just(Op::Stats),
        (any::<u8>(), any::<u16>(), any::<u8>()).prop_map(|(a, b, c)| Op::Mutated(a, b, c)),
    ]
}

struct World {
    h: HwcHost,
    /// Live regions: (handle, buffer).
    regions: Vec<(u64, HostBuf)>,
    eqs: Vec<u32>,
    /// WQ objects: (handle, is_rq, vport).
    objs: Vec<(u64, bool, usize)>,
    probe_eqs: Vec<u32>,
}

fn pick<T: Clone>(v: &[T], i: u8) -> Option<T> {
    (!v.is_empty()).then(|| v[usize::from(i) % v.len()].clone())
}

/// Success, or a failure status: nothing else is acceptable from the device.
fn answered(r: &Result<Vec<u8>, CallError>) -> Result<bool, TestCaseError> {
    match r {
        Ok(_) => Ok(true),
        Err(CallError::Hwc(HwcError::Status(_))) => Ok(false),
        Err(e) => Err(TestCaseError::fail(format!("not answered: {e:?}"))),
    }
}

impl World {
    fn new() -> Self {
        let mut h = HwcHost::new(new_mana(2));
        let mut eqs = h.alloc_eqs(2);
        h.probe(&mut eqs, 4096).unwrap();
        let probe_eqs = eqs.iter().map(|e| e.id()).collect();
        Self {
            h,
            regions: Vec::new(),
            eqs: Vec::new(),
            objs: Vec::new(),
            probe_eqs,
        }
    }

    fn all_eqs(&self) -> Vec<u32> {
        self.probe_eqs
            .iter()
            .chain(self.eqs.iter())
            .copied()
            .collect()
    }

    fn apply(&mut self, o: &Op) -> Result<(), TestCaseError> {
        let mana = self.h.info.mana;
        let eqs = self.all_eqs();
        let h = &mut self.h;
        match o {
            Op::Region(p) => {
                let buf = h.mem.alloc(4096 << p);
                let mut b = vec![0u8; 4096];
                let (n, _) =
                    req::create_dma_region(&mut b, buf.dma_addr(), buf.size() as u32).unwrap();
                let r = h.call(&b[..n]);
                if answered(&r)? {
                    let hd = req::parse_create_dma_region(&r.unwrap()).unwrap();
                    self.regions.push((hd, buf));
                }
            }
            Op::DestroyRegion(i) => {
                let hd = pick(&self.regions, *i).map_or(0x5200_0000_0000_0042, |x| x.0);
                let r = h.request(|b| req::destroy_dma_region(b, hd));
                if answered(&r)? {
                    self.regions.retain(|x| x.0 != hd);
                }
            }
            Op::CreateEq(i) => {
                let Some((hd, buf)) = pick(&self.regions, *i) else {
                    return Ok(());
                };
                let spec = req::EqSpec {
                    dev_id: mana,
                    pdid: h.info.reg.pdid,
                    doorbell: h.info.reg.db_id,
                    region: hd,
                    queue_size: buf.size() as u32,
                    log2_throttle_limit: 3,
                    msix_index: 1,
                };
                let r = h.request(|b| req::create_eq(b, &spec));
                if answered(&r)? {
                    self.eqs.push(req::parse_create_queue(&r.unwrap()).unwrap());
                    self.regions.retain(|x| x.0 != hd);
                }
            }
            Op::DisableEq(i) => {
                let id = pick(&self.eqs, *i).unwrap_or(0x4321);
                let r = h.request(|b| req::disable_queue(b, mana, req::GDMA_EQ, id));
                if answered(&r)? {
                    self.eqs.retain(|&x| x != id);
                }
            }
            Op::VportTx(p) => {
                let vport = h.info.vports[usize::from(*p) % 2].vport + u64::from(*p / 2) * 7;
                let (pdid, db) = (h.info.reg.pdid, h.info.reg.db_id);
                let who = h.mana();
                let r = h.request(|b| req::config_vport_tx(b, who, vport, pdid, db));
                answered(&r)?;
            }
            Op::WqObj(rq, p, w, c) => {
                let (Some((wh, wb)), Some((ch, cb))) =
                    (pick(&self.regions, *w), pick(&self.regions, *c))
                else {
                    return Ok(());
                };
                let eq = pick(&eqs, *w ^ *c).unwrap_or(0);
                let port = usize::from(*p) % 2;
                let who = h.mana();
                let ty = if *rq { req::GDMA_RQ } else { req::GDMA_SQ };
                let spec = h.wq_obj_spec(port, ty, (wh, &wb), (ch, &cb), eq);
                let r = h.request(|b| req::create_wq_obj(b, who, &spec));
                if answered(&r)? {
                    let o = req::parse_create_wq_obj(&r.unwrap(), who).unwrap();
                    self.objs.push((o.handle, *rq, port));
                    self.regions.retain(|x| x.0 != wh && x.0 != ch);
                }
            }
            Op::DestroyWqObj(i, wrong) => {
                let Some((hd, rq, _)) = pick(&self.objs, *i) else {
                    return Ok(());
                };
                let ty = if rq ^ wrong {
                    req::GDMA_RQ
                } else {
                    req::GDMA_SQ
                };
                let who = h.mana();
                let r = h.request(|b| req::destroy_wq_obj(b, who, ty, hd));
                if answered(&r)? {
                    prop_assert!(!wrong, "destroyed with the wrong type");
                    self.objs.retain(|x| x.0 != hd);
                }
            }
            Op::Steer(p, on, picks) => {
                let port = usize::from(*p) % 2;
                let rqs: Vec<u64> = self.objs.iter().filter(|x| x.1).map(|x| x.0).collect();
                let tab: Vec<u64> = picks
                    .iter()
                    .map(|&i| pick(&rqs, i).unwrap_or(0x77))
                    .collect();
                let key = [7u8; 40];
                let s = req::RxSteer {
                    vport: h.info.vports[port].vport,
                    rx_enable: if *on {
                        req::TRI_STATE_TRUE
                    } else {
                        req::TRI_STATE_FALSE
                    },
                    rss_enable: req::TRI_STATE_TRUE,
                    update_default_rxobj: false,
                    update_hashkey: true,
                    update_indir_tab: true,
                    default_rxobj: 0,
                    hashkey: &key,
                    indir_tab: &tab,
                };
                let who = h.mana();
                let r = h.request(|b| req::config_vport_rx(b, who, &s));
                answered(&r)?;
            }
            Op::Fence(i) => {
                let hd = pick(&self.objs, *i).map_or(0x99, |x| x.0);
                let who = h.mana();
                let r = h.request(|b| req::fence_rq(b, who, hd));
                answered(&r)?;
            }
            Op::Stats => {
                let who = h.mana();
                let r = h.request(|b| req::query_gf_stat(b, who, req::GF_STAT_ALL));
                prop_assert!(answered(&r)?);
                req::parse_query_gf_stat(&r.unwrap(), who).unwrap();
            }
            Op::Mutated(which, off, val) => {
                let who = h.mana();
                let vport = h.info.vports[0].vport;
                let mut b = vec![0u8; 4096];
                let n = match which % 4 {
                    0 => req::query_vport_config(&mut b, who, 1).unwrap(),
                    1 => req::config_vport_tx(&mut b, who, vport, 2, 1).unwrap(),
                    2 => req::query_dev_config(&mut b, who).unwrap(),
                    _ => req::destroy_dma_region(&mut b, 0x5200_0001_0000_0001).unwrap(),
                };
                let i = usize::from(*off) % n;
                // Byte 10..12 is the channel's hwc_msg_id, overwritten when sent.
                b[i] ^= val | 1;
                let r = h.call(&b[..n]);
                answered(&r)?;
            }
        }
        Ok(())
    }

    /// Teardown in upstream's order; every step must succeed.
    fn teardown(&mut self) -> Result<(), TestCaseError> {
        for p in 0..2 {
            let vport = self.h.info.vports[p].vport;
            self.h
                .vport_rx_off(vport, 1)
                .map_err(|e| TestCaseError::fail(format!("rx off: {e:?}")))?;
        }
        for (hd, rq, _) in std::mem::take(&mut self.objs) {
            let ty = if rq { req::GDMA_RQ } else { req::GDMA_SQ };
            self.h
                .simple(req::MANA_DESTROY_WQ_OBJ, |b, who| {
                    req::destroy_wq_obj(b, who, ty, hd)
                })
                .map_err(|e| TestCaseError::fail(format!("destroy obj: {e:?}")))?;
        }
        let mana = self.h.info.mana;
        for id in self.all_eqs() {
            let r = self
                .h
                .request(|b| req::disable_queue(b, mana, req::GDMA_EQ, id));
            prop_assert!(r.is_ok(), "disable EQ {id:#x}: {r:?}");
        }
        for (hd, _) in std::mem::take(&mut self.regions) {
            let r = self.h.request(|b| req::destroy_dma_region(b, hd));
            prop_assert!(r.is_ok(), "destroy region: {r:?}");
        }
        let r = self.h.request(|b| deregister_device(b, mana));
        prop_assert!(r.is_ok(), "deregister: {r:?}");
        let d = self.h.dev.borrow();
        let c = d.hwc_counters();
        prop_assert_eq!(c.bad_wqes, 0);
        prop_assert_eq!(c.no_rx_wqe, 0);
        prop_assert_eq!(c.dma_faults, 0);
        prop_assert_eq!(d.bad_mmio(), 0);
        prop_assert_eq!(self.h.hwc.stats.bad_completions, 0);
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)
    ))]

    #[test]
    fn random_control_sequences_stay_consistent(ops in prop::collection::vec(op(), 1..40)) {
        let mut w = World::new();
        for o in &ops {
            w.apply(o)?;
        }
        w.teardown()?;
    }
}
