//! The MANA control path end to end: probe over the SMC and the HWC, vports and queues as
//! WQ objects, traffic, teardown; every effect on the device goes through BAR0 registers,
//! DMA memory and interrupts.

use rsnic_core::hwif::mana::gdma_req::{self as req, MsgError};
use rsnic_core::hwif::mana::hwc::HwcError;
use rsnic_core::hwif::mana::probe::{
    Action, Probe, ProbeConfig, ProbeErrorKind, Stage, MAX_VPORTS,
};
use rsnic_core::sim::mana::{
    self as sim, HWC_EQ_ID, MANA_DB_ID, MANA_DEV_ID, MANA_MKEY, MANA_PDID,
};
use rsnic_testbed::mana_hwc::{deregister_device, device_caller, CallError, HwcHost};
use rsnic_testbed::mana_pair::{
    new_mana, Frame, ManaConfig, ManaPair, HWC_PAIR_KEY, RX_PORT, TX_PORT,
};

fn probed() -> (
    HwcHost,
    Vec<rsnic_core::hwif::mana::cq::Eq<rsnic_testbed::mem::HostBuf>>,
) {
    let mut h = HwcHost::new(new_mana(2));
    let mut eqs = h.alloc_eqs(2);
    h.probe(&mut eqs, 4096).expect("probe");
    (h, eqs)
}

#[test]
fn probe_learns_everything_through_the_hwc() {
    let (h, eqs) = probed();
    let i = &h.info;
    assert_eq!(i.mana.as_u32(), MANA_DEV_ID);
    assert_eq!(i.reg.pdid, MANA_PDID);
    assert_eq!(i.reg.gpa_mkey, MANA_MKEY);
    assert_eq!(i.reg.db_id, MANA_DB_ID);
    // The doorbell page: GDMA_REG_DB_PAGE_OFFSET + db_id × GDMA_REG_DB_PAGE_SIZE.
    assert_eq!(
        i.db_page,
        sim::DB_PAGE_BASE + MANA_DB_ID * sim::DB_PAGE_SIZE
    );
    assert_eq!(i.num_vports, 2);
    assert_eq!(i.dev.max_num_vports, 2);
    assert_eq!(i.dev.adapter_mtu as usize, sim::MAX_FRAME);
    assert_eq!(i.max.max_msix, sim::MAX_MSIX);
    assert_eq!(i.max_num_queues, 2);
    for (p, v) in i.vports[..2].iter().enumerate() {
        assert_eq!(v.mac, sim::vport_mac(p));
        assert_eq!(v.vport, sim::VPORT_HANDLE_BASE + p as u64);
        assert_eq!(v.indir_table_size, sim::MAX_RSS as u32);
    }
    // Both EQs got ids; the HWC is up and saw every request succeed.
    assert!(eqs.iter().all(|e| e.id() >= sim::EQ_ID_BASE));
    assert_ne!(eqs[0].id(), eqs[1].id());
    let d = h.dev.borrow();
    assert!(d.hwc_up());
    let c = d.hwc_counters();
    assert_eq!(c.failed, 0);
    assert_eq!(c.bad_wqes, 0);
    assert_eq!(c.no_rx_wqe, 0);
    assert_eq!(d.bad_mmio(), 0);
    // 2 HWC test + verify + max res + list + register + 2 × (region, create, test) + dev
    // config + 2 vports.
    assert_eq!(c.requests, 1 + 3 + 1 + 2 * 3 + 1 + 2);
    assert_eq!(h.hwc.stats.bad_completions, 0);
    // The MANA EQs use vectors 1 and 2, the HWC 0.
    assert!(h.irqs.raised.contains(&0) && h.irqs.raised.contains(&1));
    assert!(h.irqs.raised.contains(&2));
}

#[test]
fn query_vport_config_reports_the_mac_the_device_host_set() {
    let mut dev = new_mana(2);
    let mac = [0x02, 0x4d, 0x41, 0x00, 0x03, 0x02];
    dev.set_permanent_mac(1, mac).unwrap();
    assert!(dev.set_permanent_mac(2, mac).is_err());
    let mut h = HwcHost::new(dev);
    let mut eqs = h.alloc_eqs(1);
    h.probe(&mut eqs, 4096).expect("probe");
    // Port 0 keeps the model's default, port 1 reports the one set.
    assert_eq!(h.info.vports[0].mac, sim::vport_mac(0));
    assert_eq!(h.info.vports[1].mac, mac);
}

#[test]
fn probe_with_small_requests_uses_add_pages() {
    let mut h = HwcHost::new(new_mana(1));
    let mut eqs = h.alloc_eqs(1);
    // 88 bytes: 64 + 8 × 3, three pages in CREATE_DMA_REGION, then ADD_PAGES requests of
    // 56 + 8 × 4: the 8 pages of an EQ go as 3 + 4 + 1.
    h.probe(&mut eqs, 88).expect("probe");
    assert_eq!(h.info.num_vports, 1);
    // 1 HWC test, 4 GDMA, region + 2 ADD_PAGES, create, test, config, vport.
    assert_eq!(
        h.dev.borrow().hwc_counters().requests,
        1 + 4 + 3 + 2 + 1 + 1
    );
}

#[test]
fn pair_through_hwc_carries_traffic_and_tears_down() {
    let (mut p, mut h, o) = ManaPair::new_hwc(ManaConfig::default());
    let frames: Vec<Frame> = (0..100)
        .map(|i| Frame::linear(vec![(i % 251) as u8; 60 + i]))
        .collect();
    assert_eq!(p.send_burst(&frames), 100);
    let rx = p.settle(64);
    assert_eq!(rx.len(), 100);
    p.check_counters().unwrap();
    // Every data doorbell went to the registered page, none was refused.
    let t = p.dev(0);
    let x = p.dev(RX_PORT);
    assert_eq!(t.bad_doorbells + x.bad_doorbells, 0);
    assert!(t.sq_doorbells > 0 && x.rq_doorbells > 0);
    assert_eq!(h.dev.borrow().vport_hashkey(RX_PORT), Some(HWC_PAIR_KEY));

    // The counters come back through MANA_QUERY_GF_STAT (function-wide sums).
    let who = h.mana();
    let r = h
        .request(|b| req::query_gf_stat(b, who, req::GF_STAT_ALL))
        .unwrap();
    let g = req::parse_query_gf_stat(&r, who).unwrap();
    assert_eq!(
        g.hc_tx_ucast_pkts + g.hc_tx_bcast_pkts + g.hc_tx_mcast_pkts,
        100
    );
    assert_eq!(
        g.hc_rx_ucast_pkts + g.hc_rx_bcast_pkts + g.hc_rx_mcast_pkts,
        100
    );
    assert_eq!(g.hc_rx_bytes, x.hc_rx_bytes);
    assert_eq!(g.hc_tx_bytes, t.hc_tx_bytes);
    assert_eq!(g.rx_discards_no_wqe, 0);
    // Every counter asked for is reported, those of errors the model never raises as 0.
    assert_eq!(g.reported, req::GF_STAT_ALL);
    assert_eq!(g.tx_err_sa_enforcement + g.tx_err_vport_disabled, 0);
    // The bytes per cast (upstream's hc_{rx,tx}_{ucast,bcast,mcast}_bytes) are reported and
    // add up to the totals.
    assert_ne!(g.reported & (1 << 4), 0, "hc_rx_ucast_bytes reported");
    assert_eq!(
        g.hc_rx_ucast_bytes + g.hc_rx_bcast_bytes + g.hc_rx_mcast_bytes,
        g.hc_rx_bytes
    );
    assert_eq!(
        g.hc_tx_ucast_bytes + g.hc_tx_bcast_bytes + g.hc_tx_mcast_bytes,
        g.hc_tx_bytes
    );
    assert!(g.hc_rx_ucast_bytes + g.hc_rx_bcast_bytes > 0);

    // Teardown as mana_dealloc_queues: RX off, fence, destroy RQ and SQ objects.
    let vport = h.info.vports[RX_PORT].vport;
    h.vport_rx_off(vport, 64).unwrap();
    // With RX off, frames are dropped by the device, not delivered.
    assert_eq!(p.send_burst(&frames[..3]), 3);
    assert!(p.settle(64).is_empty());
    assert_eq!(p.dev(RX_PORT).rx_no_rq_drops, 3);
    // The fence CQE arrives on the RQ's CQ.
    h.simple(req::MANA_FENCE_RQ, |b, who| {
        req::fence_rq(b, who, o.rq.handle)
    })
    .unwrap();
    let (_, poll) = p.poll_rx_full(64);
    assert_eq!((poll.work, poll.delivered), (1, 0));
    h.simple(req::MANA_DESTROY_WQ_OBJ, |b, who| {
        req::destroy_wq_obj(b, who, req::GDMA_RQ, o.rq.handle)
    })
    .unwrap();
    h.simple(req::MANA_DESTROY_WQ_OBJ, |b, who| {
        req::destroy_wq_obj(b, who, req::GDMA_SQ, o.sq.handle)
    })
    .unwrap();
    // Twice: the object is gone.
    let e = h.simple(req::MANA_DESTROY_WQ_OBJ, |b, who| {
        req::destroy_wq_obj(b, who, req::GDMA_SQ, o.sq.handle)
    });
    assert_eq!(
        e,
        Err(CallError::Hwc(HwcError::Status(sim::STATUS_INVALID_HANDLE)))
    );
    // The EQs: DISABLE_QUEUE, then deregister and tear the HWC down over the SMC.
    for id in [p.tx_eq.id(), p.rx_eq.id()] {
        let dev = h.info.mana;
        let r = h
            .request(|b| req::disable_queue(b, dev, req::GDMA_EQ, id))
            .unwrap();
        req::parse_general(&r, req::GDMA_DISABLE_QUEUE, None).unwrap();
    }
    let dev = h.info.mana;
    let r = h.request(|b| deregister_device(b, dev)).unwrap();
    req::parse_general(&r, req::GDMA_DEREGISTER_DEVICE, None).unwrap();
    let base = h.hwc.regs().smc_base().unwrap();
    rsnic_core::hwif::mana::smc::write_destroy(&h.env, base);
    h.run();
    assert!(rsnic_core::hwif::mana::smc::poll_idle(&h.env, base));
    rsnic_core::hwif::mana::smc::read_response(
        &h.env,
        base,
        rsnic_core::hwif::mana::smc::SMC_MSG_DESTROY_HWC,
    )
    .unwrap();
    let d = h.dev.borrow();
    assert!(!d.hwc_up());
    assert_eq!(d.bad_mmio(), 0);
}

#[test]
fn failing_request_fails_the_probe_at_its_stage() {
    for (code, stage) in [
        (req::GDMA_VERIFY_VF_DRIVER_VERSION, Stage::VerifyVersion),
        (req::GDMA_QUERY_MAX_RESOURCES, Stage::QueryMaxResources),
        (req::GDMA_LIST_DEVICES, Stage::ListDevices),
        (req::GDMA_REGISTER_DEVICE, Stage::RegisterDevice),
        (req::GDMA_CREATE_DMA_REGION, Stage::CreateEqs),
        (req::GDMA_CREATE_QUEUE, Stage::CreateEqs),
        (req::MANA_QUERY_DEV_CONFIG, Stage::QueryDevConfig),
        (req::MANA_QUERY_VPORT_CONFIG, Stage::QueryVports),
    ] {
        let mut d = new_mana(1);
        d.hwc_fail(code, 0xC000_0001);
        let mut h = HwcHost::new(d);
        let mut eqs = h.alloc_eqs(1);
        let e = h.probe(&mut eqs, 4096).unwrap_err();
        assert_eq!(e.stage, stage, "code {code:#x}");
        assert_eq!(
            e.kind,
            ProbeErrorKind::Msg(MsgError::Status(0xC000_0001)),
            "code {code:#x}"
        );
    }
}

/// Runs a probe of a one-port device whose request `code` fails, to its failure; returns
/// the host and the probe as the failure left them.
fn failed_probe(code: u32) -> (HwcHost, Probe<'static>) {
    let mut d = new_mana(1);
    d.hwc_fail(code, 0xC000_0001);
    let mut h = HwcHost::new(d);
    let mut eqs = h.alloc_eqs(2);
    let mut s = vec![0u8; 4096];
    let mut p = Probe::new(ProbeConfig {
        msix: 64,
        max_vports: MAX_VPORTS,
        os: req::OsInfo::default(),
        max_region_request: 0,
    });
    for _ in 0..10_000 {
        match p.step(&h.env, &mut h.hwc, &mut eqs, &mut s) {
            Action::Wait => h.run(),
            Action::Done => panic!("probe with {code:#x} failing succeeded"),
            Action::Failed(_) => return (h, p),
        }
    }
    panic!("probe with {code:#x} failing did not end");
}

#[test]
fn failed_probe_says_what_to_undo() {
    // (code, EQs created, region pending, registered)
    for (code, eqs, region, reg) in [
        (req::GDMA_REGISTER_DEVICE, 0, false, false),
        (req::GDMA_CREATE_QUEUE, 0, true, true),
        (req::MANA_QUERY_VPORT_CONFIG, 2, false, true),
    ] {
        let (mut h, p) = failed_probe(code);
        assert_eq!(p.last_request(), Some(code));
        assert_ne!(req::request_name(code), "UNKNOWN");
        assert_eq!(p.eqs_created(), eqs, "code {code:#x}");
        assert_eq!(p.pending_region().is_some(), region, "code {code:#x}");
        assert_eq!(p.registered(), reg, "code {code:#x}");
        // Undoing exactly that leaves the device with nothing: DEREGISTER_DEVICE refuses
        // while a region is alive.
        if let Some(r) = p.pending_region() {
            let r = h.request(|b| req::destroy_dma_region(b, r)).unwrap();
            req::parse_general(&r, req::GDMA_DESTROY_DMA_REGION, None).unwrap();
        }
        if reg {
            let mana = p.info().mana;
            if eqs > 0 {
                // Still registered with EQs alive: refused.
                let e = h.request(|b| deregister_device(b, mana));
                assert_eq!(
                    e,
                    Err(CallError::Hwc(HwcError::Status(sim::STATUS_DEVICE_BUSY)))
                );
            }
            for id in sim::EQ_ID_BASE..sim::EQ_ID_BASE + eqs as u32 {
                let r = h
                    .request(|b| req::disable_queue(b, mana, req::GDMA_EQ, id))
                    .unwrap();
                req::parse_general(&r, req::GDMA_DISABLE_QUEUE, None).unwrap();
            }
            let r = h.request(|b| deregister_device(b, mana)).unwrap();
            req::parse_general(&r, req::GDMA_DEREGISTER_DEVICE, None).unwrap();
        }
    }
    assert_eq!(req::request_name(0x7777), "UNKNOWN");
}

#[test]
fn hwc_test_event_targets_the_hwc_eq() {
    let (mut h, _eqs) = probed();
    let r = h
        .request(|b| req::generate_test_eqe(b, req::DevId::HWC, HWC_EQ_ID))
        .unwrap();
    req::parse_general(&r, req::GDMA_GENERATE_TEST_EQE, None).unwrap();
    h.hwc.process_events(&h.env);
    assert!(h.hwc.take_test_event());
    // Another queue id on the HWC's dev_id is unknown.
    let e = h.request(|b| req::generate_test_eqe(b, req::DevId::HWC, HWC_EQ_ID + 1));
    assert_eq!(
        e,
        Err(CallError::Hwc(HwcError::Status(sim::STATUS_INVALID_HANDLE)))
    );
}

fn status(r: Result<Vec<u8>, CallError>) -> u32 {
    match r {
        Ok(_) => 0,
        Err(CallError::Hwc(HwcError::Status(s))) => s,
        Err(e) => panic!("no status: {e:?}"),
    }
}

fn build(f: impl FnOnce(&mut [u8]) -> Result<usize, MsgError>) -> Vec<u8> {
    let mut b = vec![0u8; 4096];
    let n = f(&mut b).unwrap();
    b.truncate(n);
    b
}

#[test]
fn device_refuses_malformed_requests_with_a_status() {
    let (mut h, eqs) = probed();
    let who = h.mana();
    let good = build(|b| req::query_vport_config(b, who, 0));
    assert_eq!(status(h.call(&good)), 0);
    // Unknown code (in both headers).
    let mut r = good.clone();
    r[4..8].copy_from_slice(&0x20099u32.to_le_bytes());
    r[20..24].copy_from_slice(&0x20099u32.to_le_bytes());
    assert_eq!(status(h.call(&r)), sim::STATUS_INVALID_DEVICE_REQUEST);
    // Sent with a trailing byte (msg_size says so, the struct does not).
    let mut r = good.clone();
    r.push(0);
    r[12] = 45;
    assert_eq!(status(h.call(&r)), sim::STATUS_INVALID_PARAMETER);
    // One byte changed: (offset, value, status).
    use sim::{
        STATUS_BUFFER_TOO_SMALL, STATUS_INVALID_PARAMETER, STATUS_NO_SUCH_DEVICE,
        STATUS_REVISION_MISMATCH,
    };
    for (at, v, want) in [
        (20, 0x07, STATUS_INVALID_PARAMETER), // request and expected-response codes differ
        (12, 48, STATUS_INVALID_PARAMETER),   // msg_size is not what was sent
        (0, 1, STATUS_INVALID_PARAMETER),     // hdr_type not standard
        (8, 2, STATUS_REVISION_MISMATCH),     // version 2 of a version-1 request
        (34, 7, STATUS_NO_SUCH_DEVICE),       // unknown dev_id
        (40, 2, STATUS_INVALID_PARAMETER),    // vport index out of range
        (28, 63, STATUS_BUFFER_TOO_SMALL),    // expected response smaller than the response
    ] {
        let mut r = good.clone();
        r[at] = v;
        assert_eq!(status(h.call(&r)), want, "byte {at} = {v:#x}");
    }
    // Registered twice.
    let mana = h.info.mana;
    let reg = build(|b| {
        req::general(
            b,
            req::GDMA_REGISTER_DEVICE,
            req::REGISTER_DEVICE_RESP_SIZE,
            device_caller(mana),
        )
    });
    assert_eq!(status(h.call(&reg)), sim::STATUS_OBJECT_NAME_COLLISION);
    // DEREGISTER with the EQs' regions alive.
    let dereg = build(|b| deregister_device(b, mana));
    assert_eq!(status(h.call(&dereg)), sim::STATUS_DEVICE_BUSY);
    // A failure response is only the header, with the message id and ids echoed.
    let mut r = good.clone();
    r[8] = 3;
    let id = h.hwc.send(&h.env, &r).unwrap();
    h.run();
    h.hwc.process_events(&h.env);
    let mut out = [0u8; 64];
    assert_eq!(
        h.hwc.take_response(&h.env, id, &mut out),
        Some(Err(HwcError::Status(sim::STATUS_REVISION_MISMATCH)))
    );
    // Regions: misaligned and non-contiguous pages, unknown handles.
    let buf = h.mem.alloc(0x2000);
    let base = rsnic_core::hwif::hw::Coherent::dma_addr(&buf);
    let mut c = build(|b| req::create_dma_region(b, base, 0x2000).map(|x| x.0));
    c[72..80].copy_from_slice(&(base + 0x3000).to_le_bytes());
    assert_eq!(status(h.call(&c)), sim::STATUS_NOT_SUPPORTED);
    c[72..80].copy_from_slice(&(base + 0x1004).to_le_bytes());
    assert_eq!(status(h.call(&c)), sim::STATUS_INVALID_PARAMETER);
    let d = build(|b| req::destroy_dma_region(b, 0x5200_0000_0000_0063));
    assert_eq!(status(h.call(&d)), sim::STATUS_INVALID_HANDLE);
    // An EQ over a region: the region is owned until the EQ is disabled, then gone.
    let eqbuf = h.mem.alloc(0x8000);
    let rh = h.region(&eqbuf, 4096).unwrap();
    let spec = req::EqSpec {
        dev_id: mana,
        pdid: h.info.reg.pdid,
        doorbell: h.info.reg.db_id,
        region: rh,
        queue_size: 0x8000,
        log2_throttle_limit: 3,
        msix_index: 3,
    };
    let mut bad = spec;
    bad.doorbell = 0;
    assert_eq!(
        status(h.request(|b| req::create_eq(b, &bad))),
        sim::STATUS_INVALID_PARAMETER
    );
    bad = spec;
    bad.queue_size = 0x4000;
    assert_eq!(
        status(h.request(|b| req::create_eq(b, &bad))),
        sim::STATUS_INVALID_PARAMETER
    );
    let r = h.request(|b| req::create_eq(b, &spec)).unwrap();
    let eq = req::parse_create_queue(&r).unwrap();
    assert_eq!(
        status(h.request(|b| req::create_eq(b, &spec))),
        sim::STATUS_DEVICE_BUSY,
        "a region used twice"
    );
    assert_eq!(
        status(h.request(|b| req::destroy_dma_region(b, rh))),
        sim::STATUS_DEVICE_BUSY
    );
    // An EQ serving a CQ cannot be disabled.
    h.config_vport_tx(0).unwrap();
    let (w, c) = (h.mem.alloc(0x1000), h.mem.alloc(0x1000));
    let o = h.create_wq_obj(0, req::GDMA_SQ, &w, &c, eq).unwrap();
    assert_eq!(
        status(h.request(|b| req::disable_queue(b, mana, req::GDMA_EQ, eq))),
        sim::STATUS_DEVICE_BUSY
    );
    h.simple(req::MANA_DESTROY_WQ_OBJ, |b, who| {
        req::destroy_wq_obj(b, who, req::GDMA_SQ, o.handle)
    })
    .unwrap();
    assert_eq!(
        status(h.request(|b| req::disable_queue(b, mana, req::GDMA_EQ, eq))),
        0
    );
    assert_eq!(
        status(h.request(|b| req::destroy_dma_region(b, rh))),
        sim::STATUS_INVALID_HANDLE
    );
    assert_eq!(
        status(h.request(|b| req::disable_queue(b, mana, req::GDMA_EQ, eq))),
        sim::STATUS_INVALID_HANDLE
    );
    // WQ objects: an SQ before CONFIG_VPORT_TX, an unknown EQ, a wrong type.
    let (w, c) = (h.mem.alloc(0x1000), h.mem.alloc(0x1000));
    assert_eq!(
        h.create_wq_obj(1, req::GDMA_SQ, &w, &c, eqs[0].id()),
        Err(CallError::Hwc(HwcError::Status(
            sim::STATUS_INVALID_DEVICE_STATE
        )))
    );
    let (w, c) = (h.mem.alloc(0x1000), h.mem.alloc(0x1000));
    assert_eq!(
        h.create_wq_obj(1, req::GDMA_RQ, &w, &c, 0x4fff),
        Err(CallError::Hwc(HwcError::Status(sim::STATUS_INVALID_HANDLE)))
    );
    // Steering: an RQ of another vport; an RQ in an enabled table cannot be destroyed.
    let (w, c) = (h.mem.alloc(0x1000), h.mem.alloc(0x1000));
    let rq0 = h
        .create_wq_obj(0, req::GDMA_RQ, &w, &c, eqs[0].id())
        .unwrap();
    const KEY: [u8; 40] = [1u8; 40];
    fn steer(vport: u64, tab: &[u64], rx: u32) -> req::RxSteer<'_> {
        req::RxSteer {
            vport,
            rx_enable: rx,
            rss_enable: req::TRI_STATE_TRUE,
            update_default_rxobj: false,
            update_hashkey: false,
            update_indir_tab: true,
            default_rxobj: 0,
            hashkey: &KEY,
            indir_tab: tab,
        }
    }
    let v1 = h.info.vports[1].vport;
    let v0 = h.info.vports[0].vport;
    let tab = [rq0.handle; 4];
    let who = h.mana();
    assert_eq!(
        status(h.request(|b| req::config_vport_rx(b, who, &steer(v1, &tab, 1)))),
        sim::STATUS_INVALID_HANDLE
    );
    let who = h.mana();
    assert_eq!(
        status(h.request(|b| req::config_vport_rx(b, who, &steer(v0, &tab, 1)))),
        0
    );
    let who = h.mana();
    let big = [rq0.handle; 128];
    assert_eq!(
        status(h.request(|b| req::config_vport_rx(b, who, &steer(v0, &big, 1)))),
        sim::STATUS_NOT_SUPPORTED
    );
    let who = h.mana();
    let mut r = build(|b| req::config_vport_rx(b, who, &steer(v0, &tab, 1)));
    r[52] = 2; // rx_enable neither TRUE, FALSE nor UNKNOWN
    assert_eq!(status(h.call(&r)), sim::STATUS_INVALID_PARAMETER);
    let who = h.mana();
    let mut r = build(|b| req::config_vport_rx(b, who, &steer(v0, &tab, 1)));
    r[8] = 1; // CONFIG_VPORT_RX needs the version-2 layout
    assert_eq!(status(h.call(&r)), sim::STATUS_REVISION_MISMATCH);
    let e = h.simple(req::MANA_DESTROY_WQ_OBJ, |b, who| {
        req::destroy_wq_obj(b, who, req::GDMA_RQ, rq0.handle)
    });
    assert_eq!(
        e,
        Err(CallError::Hwc(HwcError::Status(sim::STATUS_DEVICE_BUSY)))
    );
    let who = h.mana();
    assert_eq!(
        status(h.request(|b| req::config_vport_rx(b, who, &steer(v0, &tab, 0)))),
        0
    );
    // Wrong wq_type for the handle, then the right one.
    let e = h.simple(req::MANA_DESTROY_WQ_OBJ, |b, who| {
        req::destroy_wq_obj(b, who, req::GDMA_SQ, rq0.handle)
    });
    assert_eq!(
        e,
        Err(CallError::Hwc(HwcError::Status(
            sim::STATUS_INVALID_PARAMETER
        )))
    );
    h.simple(req::MANA_DESTROY_WQ_OBJ, |b, who| {
        req::destroy_wq_obj(b, who, req::GDMA_RQ, rq0.handle)
    })
    .unwrap();
    let d = h.dev.borrow();
    assert!(d.hwc_counters().failed > 20);
    assert_eq!(d.hwc_counters().bad_wqes, 0);
}

#[test]
fn mana_requests_before_registration_are_refused() {
    let mut d = new_mana(1);
    d.hwc_fail(req::GDMA_REGISTER_DEVICE, 0xC000_0001);
    let mut h = HwcHost::new(d);
    let mut eqs = h.alloc_eqs(1);
    assert_eq!(
        h.probe(&mut eqs, 4096).unwrap_err().stage,
        Stage::RegisterDevice
    );
    h.info.mana = req::DevId::from_u32(MANA_DEV_ID);
    let who = h.mana();
    let r = h.request(|b| req::query_dev_config(b, who));
    assert_eq!(
        r,
        Err(CallError::Hwc(HwcError::Status(
            sim::STATUS_INVALID_DEVICE_STATE
        )))
    );
    let r = h.request(|b| req::general(b, req::GDMA_LIST_DEVICES, 296, who));
    assert_eq!(
        r,
        Err(CallError::Hwc(HwcError::Status(sim::STATUS_NO_SUCH_DEVICE)))
    );
}

#[test]
fn smc_refuses_a_second_establish_and_unknown_messages() {
    let (h, _eqs) = probed();
    let base = h.hwc.regs().smc_base().unwrap();
    use rsnic_core::hwif::mana::smc;
    let w = smc::establish_words(&h.hwc.addrs(), 0).unwrap();
    smc::write(&h.env, base, &w);
    // Busy until the device runs.
    assert!(!smc::poll_idle(&h.env, base));
    let mut h = h;
    h.run();
    assert_eq!(
        smc::read_response(&h.env, base, smc::SMC_MSG_ESTABLISH_HWC),
        Err(smc::SmcError::Status(3))
    );
    rsnic_core::hwif::hw::Mmio::write32(&h.env, base + 28, 5); // msg_type 5
    h.run();
    assert_eq!(
        smc::read_response(&h.env, base, 5),
        Err(smc::SmcError::Status(3))
    );
    assert_eq!(h.dev.borrow().hwc_counters().smc_errors, 2);
    assert!(h.dev.borrow().hwc_up());
}

#[test]
fn eq_that_overflowed_is_still_rearmed() {
    use rsnic_core::hwif::hw::Coherent;
    use rsnic_core::hwif::mana::cq::Eq;
    use rsnic_testbed::mana_pair::{ManaBar, ManaEnv};
    use std::cell::RefCell;
    use std::rc::Rc;
    let mem = rsnic_testbed::mem::HostMemory::new();
    let dev = Rc::new(RefCell::new(new_mana(1)));
    let env = ManaEnv::new(&mem, ManaBar(dev.clone()), false);
    let buf = mem.alloc(64 * 16);
    let id = dev
        .borrow_mut()
        .create_eq(0, buf.dma_addr(), 64, 0)
        .unwrap();
    let mut eq = Eq::new(buf.clone(), id, 64, sim::doorbell_offset(0, sim::DB_EQ)).unwrap();
    // An empty EQ: no doorbell (mana_gd_process_eq_events returns at i == 0).
    let r = eq.process(&env, |_| {});
    assert!(!r.rang && r.events == 0);
    // Entry 0 with owner bits 3 while 1 is expected: the device lapped the driver.
    buf.write(15, &[3 << 5]);
    let r = eq.process(&env, |_| {});
    assert!(r.overflow && r.rang, "{r:?}");
    env.flush_mmio();
    let c = *dev.borrow().counters(0).unwrap();
    assert_eq!((c.eq_doorbells, c.bad_doorbells), (1, 0));
    assert_eq!(eq.stats.overflows, 1);
}

#[test]
fn channel_refuses_what_upstream_refuses() {
    use rsnic_core::hwif::mana::hwc::{GdmaRegs, Hwc, HwcBuffers};
    // Before the init events: not ready.
    let fresh = HwcHost::new(new_mana(1));
    let mem = &fresh.mem;
    let mut hwc = Hwc::new(
        HwcBuffers {
            eq: mem.alloc(4096),
            cq: mem.alloc(4096),
            rq: mem.alloc(4096),
            sq: mem.alloc(4096),
            req: mem.alloc(4096),
            resp: mem.alloc(4096),
        },
        GdmaRegs::read(&fresh.env),
    )
    .unwrap();
    assert_eq!(hwc.send(&fresh.env, &[0u8; 40]), Err(HwcError::NotReady));
    assert_eq!(hwc.finish_init(&fresh.env), Err(HwcError::BadInit));
    // Too small a message buffer.
    let small = HwcBuffers {
        eq: mem.alloc(4096),
        cq: mem.alloc(4096),
        rq: mem.alloc(4096),
        sq: mem.alloc(4096),
        req: mem.alloc(4095),
        resp: mem.alloc(4096),
    };
    assert!(matches!(
        Hwc::new(small, GdmaRegs::read(&fresh.env)),
        Err(HwcError::BadBuffer)
    ));

    let (mut h, _eqs) = probed();
    let env = &h.env;
    // Shorter than a request header, longer than the channel carries.
    assert_eq!(h.hwc.send(env, &[0u8; 39]), Err(HwcError::BadRequest));
    assert_eq!(h.hwc.send(env, &vec![0u8; 4097]), Err(HwcError::BadRequest));
    // One message in flight (depth 1).
    let who = h.mana();
    let r = build(|b| req::query_vport_config(b, who, 0));
    let id = h.hwc.send(&h.env, &r).unwrap();
    assert_eq!(h.hwc.send(&h.env, &r), Err(HwcError::Busy));
    let mut out = [0u8; 64];
    assert_eq!(h.hwc.take_response(&h.env, id, &mut out), None);
    assert_eq!(
        h.hwc.take_response(&h.env, id + 1, &mut out),
        Some(Err(HwcError::NotInFlight))
    );
    h.run();
    h.hwc.process_events(&h.env);
    // The 64-byte response does not fit 63 bytes (mana_hwc_verify_resp_msg: -EPROTO)...
    assert_eq!(
        h.hwc.take_response(&h.env, id, &mut out[..63]),
        Some(Err(HwcError::BadLength(64)))
    );
    // ... and the message id and the RQ buffer are free again: the next request works.
    let who = h.mana();
    let r = h.request(|b| req::query_vport_config(b, who, 1)).unwrap();
    assert_eq!(
        req::parse_query_vport_config(&r, who).unwrap().mac,
        sim::vport_mac(1)
    );
    // A timed-out caller abandons: its late response is refused, the channel goes on.
    let who = h.mana();
    let r = build(|b| req::query_vport_config(b, who, 0));
    let id = h.hwc.send(&h.env, &r).unwrap();
    h.hwc.abandon(&h.env, id);
    h.run();
    h.hwc.process_events(&h.env);
    assert_eq!(h.hwc.stats.bad_completions, 1);
    let who = h.mana();
    let r = h.request(|b| req::query_dev_config(b, who)).unwrap();
    assert_eq!(
        req::parse_query_dev_config(&r, who).unwrap().max_num_vports,
        2
    );
    assert_eq!(h.dev.borrow().hwc_counters().no_rx_wqe, 0);
}

/// RSNIC_SET_PAUSE on vport `i`, as the driver's `ethtool -A` sends it.
fn set_pause(h: &mut HwcHost, i: usize, rx: bool, tx: bool) {
    let vport = h.info.vports[i].vport;
    h.simple(req::RSNIC_SET_PAUSE, |b, who| {
        req::set_pause(b, who, vport, rx, tx)
    })
    .unwrap();
}

/// RSNIC_QUERY_PAUSE on vport `i`, as the driver's `ethtool -a` and `-I -a` send it.
fn query_pause(h: &mut HwcHost, i: usize) -> req::PauseState {
    let vport = h.info.vports[i].vport;
    let who = h.mana();
    let r = h.request(|b| req::query_pause(b, who, vport)).unwrap();
    req::parse_query_pause(&r, who).unwrap()
}

/// Flow control through rsnic's requests on a pair built through the HWC, with real PAUSE
/// traffic: a burst over three times the receiver's RQ arrives whole; the PAUSE frames the
/// receiver's vport reports sent are those the sender's reports received, the model's
/// counters (debugfs `dev_tx_pause_frames` / `dev_rx_pause_frames`) and the sender's waits;
/// the setting survives a reopen through the HWC; with the receiver's TX pause off no PAUSE
/// frame goes out and the receiver drops what it has no buffer for.
#[test]
fn pause_through_hwc_requests_counts_the_same_at_both_ends() {
    let (mut p, mut h, mut o) = ManaPair::new_hwc(ManaConfig {
        sq_size: 1024 * 32,
        rq_wqes: 128,
        ..ManaConfig::default()
    });
    let frames: Vec<Frame> = (0..400)
        .map(|i| Frame::linear(vec![(i % 251) as u8; 60 + i % 64]))
        .collect();
    assert!(frames.len() > 3 * p.config().rq_wqes as usize);
    let off = req::PauseState::default();
    assert_eq!(query_pause(&mut h, TX_PORT), off, "off after creation");
    for i in [TX_PORT, RX_PORT] {
        set_pause(&mut h, i, true, true);
    }
    // Two bursts, a reopen in between: the setting is the vport's, not the queues'.
    for round in 0..2 {
        if round == 1 {
            p.reopen_hwc(&mut h, &mut o).unwrap();
            p.check_counters().unwrap();
        }
        let before = p.dev(RX_PORT).tx_pause_frames;
        assert_eq!(p.send_burst(&frames), frames.len());
        let got = p.settle(64);
        assert_eq!(got.len(), frames.len(), "round {round}: nothing lost");
        for (g, f) in got.iter().zip(&frames) {
            assert_eq!(g.bytes, f.expected_wire_8021q(), "round {round}: in order");
        }
        let (t, r) = (query_pause(&mut h, TX_PORT), query_pause(&mut h, RX_PORT));
        assert_eq!((t.rx, t.tx, r.rx, r.tx), (true, true, true, true));
        assert!(
            r.tx_pause_frames > before,
            "round {round}: the receiver ran short"
        );
        assert_eq!(t.rx_pause_frames, r.tx_pause_frames, "sent = received");
        assert_eq!((t.tx_pause_frames, r.rx_pause_frames), (0, 0));
        let (dt, dr) = (p.dev(TX_PORT), p.dev(RX_PORT));
        assert_eq!(
            (dr.tx_pause_frames, dt.rx_pause_frames),
            (r.tx_pause_frames, t.rx_pause_frames),
            "the driver's counts are the model's"
        );
        // One SQ: each PAUSE frame held it once.
        assert_eq!(dt.tx_pause, t.rx_pause_frames);
        assert_eq!(dr.hc_rx_discards_no_wqe, 0);
        p.check_counters().unwrap();
    }

    // The receiver's TX pause off: no PAUSE frame, the whole burst in one device run, the
    // receiver keeps what its RQ holds and drops the rest.
    set_pause(&mut h, RX_PORT, true, false);
    let r0 = query_pause(&mut h, RX_PORT);
    assert_eq!((r0.rx, r0.tx), (true, false));
    assert_eq!(p.send_burst(&frames), frames.len());
    assert_eq!(p.run_device(), frames.len());
    let got = p.settle(64);
    let (t, r) = (query_pause(&mut h, TX_PORT), query_pause(&mut h, RX_PORT));
    assert_eq!(r.tx_pause_frames, r0.tx_pause_frames, "none sent");
    assert_eq!(t.rx_pause_frames, r.tx_pause_frames);
    let dropped = p.dev(RX_PORT).hc_rx_discards_no_wqe;
    assert!(dropped > 0);
    assert_eq!(got.len() as u64 + dropped, frames.len() as u64);
    p.check_counters().unwrap();
}

/// rsnic's own requests exist only in its model, which advertises them in QUERY_DEV_CONFIG's
/// reserved field (`RsnicCaps`); the probe learns what the device says. A device without them
/// (a real MANA) reads as none, and answers each as an unknown request, as a real one does:
/// the driver must not send them then.
#[test]
fn rsnic_requests_are_advertised_and_absent_without_the_capability() {
    let (mut h, _eqs) = probed();
    let all = req::RsnicCaps {
        loopback: true,
        pause: true,
    };
    assert_eq!(h.info.dev.rsnic_caps, all);
    let vport = h.info.vports[0].vport;
    h.simple(req::RSNIC_SET_LOOPBACK, |b, who| {
        req::set_loopback(b, who, vport, true)
    })
    .expect("loopback offered");

    let mut dev = new_mana(2);
    dev.set_rsnic_requests(false);
    let mut h = HwcHost::new(dev);
    let mut eqs = h.alloc_eqs(2);
    h.probe(&mut eqs, 4096).expect("probe");
    assert_eq!(h.info.dev.rsnic_caps, req::RsnicCaps::NONE);
    assert_eq!(h.info.num_vports, 2, "the rest of the device is the same");
    let vport = h.info.vports[0].vport;
    for r in [
        build(|b| req::set_loopback(b, h.mana(), vport, true)),
        build(|b| req::set_pause(b, h.mana(), vport, true, true)),
        build(|b| req::query_pause(b, h.mana(), vport)),
    ] {
        assert_eq!(status(h.call(&r)), sim::STATUS_INVALID_DEVICE_REQUEST);
    }
    assert!(!h.dev.borrow().loopback(0));
}
