//! Golden bytes of the MANA control messages, written by hand from the 6.12 headers
//! (`gdma.h`, `mana.h`, `hw_channel.h`), checked against the driver's builders and parsers
//! (`hwif::mana::gdma_req`, `smc`) and against the device model, which receives the very same
//! request bytes over the HWC and must answer with the golden response bytes.
//!
//! Every vector lists its non-zero fields as (byte offset, little-endian bytes) with the
//! field's name; the rest is zero.

use rsnic_core::hwif::mana::gdma_req::{self as req, Caller, DevId, MsgError};
use rsnic_core::hwif::mana::hwc::HwcError;
use rsnic_core::hwif::mana::smc;
use rsnic_core::sim::mana as sim;
use rsnic_testbed::mana_hwc::{CallError, HwcHost, LINUX_6_12};
use rsnic_testbed::mana_pair::new_mana;

fn v(len: usize, fields: &[(usize, &[u8])]) -> Vec<u8> {
    let mut b = vec![0u8; len];
    for (off, bytes) in fields {
        b[*off..*off + bytes.len()].copy_from_slice(bytes);
    }
    b
}

const fn l16(x: u16) -> [u8; 2] {
    x.to_le_bytes()
}
const fn l32(x: u32) -> [u8; 4] {
    x.to_le_bytes()
}
const fn l64(x: u64) -> [u8; 8] {
    x.to_le_bytes()
}

const MANA: Caller = Caller {
    dev_id: DevId { ty: 2, instance: 1 },
    activity_id: 0x55,
};

fn built(f: impl FnOnce(&mut [u8]) -> Result<usize, MsgError>) -> Vec<u8> {
    let mut b = vec![0xAAu8; 4096];
    let n = f(&mut b).unwrap();
    b.truncate(n);
    b
}

// ---------------------------------------------------------------------------------------
// Requests.

/// The header of a request (gdma_req_hdr): msg_type `code` for the request and for the
/// response it asks for, req.msg_version `ver`, req.msg_size `size`, resp.msg_version
/// `resp_ver`, resp.msg_size `resp_size`, then dev_id and activity_id.
fn req_hdr(
    code: u32,
    ver: u16,
    size: u32,
    resp_ver: u16,
    resp_size: u32,
    dev: u32,
    act: u32,
) -> Vec<(usize, Vec<u8>)> {
    vec![
        (4, l32(code).to_vec()),       // req.msg_type
        (8, l16(ver).to_vec()),        // req.msg_version
        (12, l32(size).to_vec()),      // req.msg_size
        (20, l32(code).to_vec()),      // resp.msg_type
        (24, l16(resp_ver).to_vec()),  // resp.msg_version
        (28, l32(resp_size).to_vec()), // resp.msg_size
        (32, l32(dev).to_vec()),       // dev_id
        (36, l32(act).to_vec()),       // activity_id
    ]
}

fn verify_req() -> Vec<u8> {
    rv(
        640,
        // GDMA_VERIFY_VF_DRIVER_VERSION, GDMA_MESSAGE_V1, sizeof(gdma_verify_ver_req) and _resp
        req_hdr(1, 1, 640, 1, 72, 0, 0),
        &[
            (40, &l64(1)),      // protocol_ver_min = GDMA_PROTOCOL_FIRST
            (48, &l64(1)),      // protocol_ver_max = GDMA_PROTOCOL_LAST
            (56, &l64(0x825)),  // gd_drv_cap_flags1: bits 0, 2, 5, 11 (no 3: HWC timeout)
            (96, &l32(0x10)),   // os_type = Linux
            (104, &l32(6)),     // os_ver_major
            (108, &l32(12)),    // os_ver_minor
            (112, &l32(118)),   // os_ver_build
            (128, b"Linux"),    // os_ver_str1
            (256, b"6.12.118"), // os_ver_str2
            (384, b"#1 SMP"),   // os_ver_str3
        ],
    )
}

fn general_req(code: u32, resp_size: u32, dev: u32) -> Vec<u8> {
    rv(
        40,
        req_hdr(code, 1, 40, 1, resp_size, dev, 0), // msg_size = sizeof(gdma_general_req)
        &[],
    )
}

#[test]
fn request_golden_vectors() {
    assert_eq!(
        built(|b| req::verify_vf_version(b, &LINUX_6_12)),
        verify_req()
    );
    assert_eq!(
        built(|b| req::general(b, 2, 72, Caller::GDMA)),
        general_req(2, 72, 0) // GDMA_QUERY_MAX_RESOURCES
    );
    assert_eq!(
        built(|b| req::general(b, 3, 296, Caller::GDMA)),
        general_req(3, 296, 0) // GDMA_LIST_DEVICES
    );
    let mana_dev = Caller {
        dev_id: MANA.dev_id,
        activity_id: 0,
    };
    assert_eq!(
        built(|b| req::general(b, 4, 44, mana_dev)),
        general_req(4, 44, 0x0001_0002) // GDMA_REGISTER_DEVICE, dev_id {type 2, instance 1}
    );
    assert_eq!(
        built(|b| req::generate_test_eqe(b, MANA.dev_id, 0x4000)),
        rv(
            44,
            req_hdr(10, 1, 44, 1, 32, 0x0001_0002, 0), // GDMA_GENERATE_TEST_EQE, gdma_general_resp
            &[
                (40, &l32(0x4000)), // queue_index
            ]
        )
    );
    let spec = req::EqSpec {
        dev_id: MANA.dev_id,
        pdid: 2,
        doorbell: 1,
        region: 0x5200_0001_0000_0001,
        queue_size: 0x8000,
        log2_throttle_limit: 3,
        msix_index: 1,
    };
    assert_eq!(
        built(|b| req::create_eq(b, &spec)),
        rv(
            96,
            req_hdr(12, 1, 96, 1, 36, 0x0001_0002, 0), // GDMA_CREATE_QUEUE
            &[
                (40, &l32(4)),                     // type = GDMA_EQ
                (48, &l32(2)),                     // pdid
                (52, &l32(1)),                     // doolbell_id
                (56, &l64(0x5200_0001_0000_0001)), // gdma_region
                (68, &l32(0x8000)),                // queue_size
                (72, &l32(3)),                     // log2_throttle_limit
                (76, &l32(1)),                     // eq_pci_msix_index
            ]
        )
    );
    assert_eq!(
        built(|b| req::disable_queue(b, MANA.dev_id, req::GDMA_EQ, 0x4001)),
        rv(
            52,
            req_hdr(13, 1, 52, 1, 32, 0x0001_0002, 0), // GDMA_DISABLE_QUEUE
            &[
                (40, &l32(4)),      // type = GDMA_EQ
                (44, &l32(0x4001)), // queue_index
                (48, &l32(1)),      // alloc_res_id_on_creation
            ]
        )
    );
    let mut small = vec![0u8; 64 + 16];
    let (n, listed) = req::create_dma_region(&mut small, 0x1_0000_3000, 0x4000).unwrap();
    assert_eq!((n, listed), (80, 2));
    assert_eq!(
        small,
        rv(
            80,
            req_hdr(25, 1, 80, 1, 40, 0, 0), // GDMA_CREATE_DMA_REGION, size 64 + 8 × 2
            &[
                (40, &l64(0x4000)),        // length
                (56, &l32(4)),             // page_count
                (60, &l32(2)),             // page_addr_list_len
                (64, &l64(0x1_0000_3000)), // page_addr_list[0]
                (72, &l64(0x1_0000_4000)), // page_addr_list[1]
            ]
        )
    );
    let mut small = vec![0u8; 56 + 16];
    let (n, listed) = req::dma_region_add_pages(&mut small, 0x77, 0x1_0000_3000, 2, 4).unwrap();
    assert_eq!((n, listed), (72, 2));
    assert_eq!(
        small,
        rv(
            72,
            req_hdr(26, 1, 72, 1, 32, 0, 0), // GDMA_DMA_REGION_ADD_PAGES, size 56 + 8 × 2
            &[
                (40, &l64(0x77)),          // dma_region_handle
                (48, &l32(2)),             // page_addr_list_len
                (56, &l64(0x1_0000_5000)), // page 2
                (64, &l64(0x1_0000_6000)), // page 3
            ]
        )
    );
    assert_eq!(
        built(|b| req::destroy_dma_region(b, 0x77)),
        rv(
            48,
            req_hdr(27, 1, 48, 1, 32, 0, 0), // GDMA_DESTROY_DMA_REGION
            &[
                (40, &l64(0x77)), // dma_region_handle
            ]
        )
    );
    assert_eq!(built(|b| req::query_dev_config(b, MANA)), dev_config_req());
    assert_eq!(
        built(|b| req::query_vport_config(b, MANA, 1)),
        vport_config_req()
    );
    assert_eq!(
        built(|b| req::config_vport_tx(b, MANA, 0x7670_0000_0001, 2, 1)),
        vport_tx_req()
    );
    let spec = req::WqObjSpec {
        vport: 0x7670_0000_0001,
        wq_type: req::GDMA_RQ,
        wq_region: 0x11,
        cq_region: 0x22,
        wq_size: 0x4000,
        cq_size: 0x10000,
        cq_moderation_ctx_id: 0,
        cq_parent_eq: 0x4001,
    };
    assert_eq!(
        built(|b| req::create_wq_obj(b, MANA, &spec)),
        rv(
            88,
            req_hdr(0x20004, 1, 88, 1, 48, 0x0001_0002, 0x55), // MANA_CREATE_WQ_OBJ
            &[
                (40, &l64(0x7670_0000_0001)), // vport
                (48, &l32(2)),                // wq_type = GDMA_RQ
                (56, &l64(0x11)),             // wq_gdma_region
                (64, &l64(0x22)),             // cq_gdma_region
                (72, &l32(0x4000)),           // wq_size
                (76, &l32(0x10000)),          // cq_size
                (84, &l32(0x4001)),           // cq_parent_qid
            ]
        )
    );
    assert_eq!(
        built(|b| req::destroy_wq_obj(b, MANA, req::GDMA_SQ, 0x99)),
        rv(
            56,
            req_hdr(0x20005, 1, 56, 1, 32, 0x0001_0002, 0x55), // MANA_DESTROY_WQ_OBJ
            &[
                (40, &l32(1)),    // wq_type = GDMA_SQ
                (48, &l64(0x99)), // wq_obj_handle
            ]
        )
    );
    assert_eq!(
        built(|b| req::fence_rq(b, MANA, 0x98)),
        rv(
            48,
            req_hdr(0x20006, 1, 48, 1, 32, 0x0001_0002, 0x55), // MANA_FENCE_RQ
            &[
                (40, &l64(0x98)), // wq_obj_handle
            ]
        )
    );
    let key = [0x6du8; 40];
    let tab = [0x98u64, 0x97];
    let steer = req::RxSteer {
        vport: 0x7670_0000_0001,
        rx_enable: req::TRI_STATE_TRUE,
        rss_enable: req::TRI_STATE_UNKNOWN,
        update_default_rxobj: true,
        update_hashkey: true,
        update_indir_tab: true,
        default_rxobj: 0x98,
        hashkey: &key,
        indir_tab: &tab,
    };
    assert_eq!(
        built(|b| req::config_vport_rx(b, MANA, &steer)),
        rv(
            136,
            // MANA_CONFIG_VPORT_RX, GDMA_MESSAGE_V2, size 120 + 8 × 2
            req_hdr(0x20007, 2, 136, 1, 32, 0x0001_0002, 0x55),
            &[
                (40, &l64(0x7670_0000_0001)), // vport
                (48, &l16(2)),                // num_indir_entries
                (50, &l16(120)),              // indir_tab_offset
                (52, &l32(1)),                // rx_enable = TRI_STATE_TRUE
                (56, &l32(u32::MAX)),         // rss_enable = TRI_STATE_UNKNOWN
                (60, &[1, 1, 1]),             // update_default_rxobj, _hashkey, _indir_tab
                (64, &l64(0x98)),             // default_rxobj
                (72, &[0x6d; 40]),            // hashkey
                (120, &l64(0x98)),            // indir_tab[0]
                (128, &l64(0x97)),            // indir_tab[1]
            ]
        )
    );
    assert_eq!(
        built(|b| req::query_gf_stat(b, MANA, req::GF_STAT_ALL)),
        gf_stat_req()
    );
}

fn dev_config_req() -> Vec<u8> {
    rv(
        88,
        req_hdr(0x20001, 1, 88, 2, 80, 0x0001_0002, 0x55), // MANA_QUERY_DEV_CONFIG, resp V2
        &[
            (76, &l32(1)), // proto_minor_ver (major 0 at 72)
            (80, &l32(1)), // proto_micro_ver
        ],
    )
}

fn vport_config_req() -> Vec<u8> {
    rv(
        44,
        req_hdr(0x20008, 1, 44, 1, 64, 0x0001_0002, 0x55), // MANA_QUERY_VPORT_CONFIG
        &[
            (40, &l32(1)), // vport_index
        ],
    )
}

fn vport_tx_req() -> Vec<u8> {
    rv(
        56,
        req_hdr(0x20003, 1, 56, 1, 36, 0x0001_0002, 0x55), // MANA_CONFIG_VPORT_TX
        &[
            (40, &l64(0x7670_0000_0001)), // vport
            (48, &l32(2)),                // pdid
            (52, &l32(1)),                // doorbell_pageid
        ],
    )
}

fn gf_stat_req() -> Vec<u8> {
    rv(
        48,
        req_hdr(0x20002, 1, 48, 2, 256, 0x0001_0002, 0x55), // MANA_QUERY_GF_STAT, resp V2
        &[
            (40, &l64(0x7ff_ffff)), // req_stats: every STATISTICS_FLAGS_* (bits 0..26)
        ],
    )
}

// ---------------------------------------------------------------------------------------
// Responses.

/// The header of a response: msg_type, msg_version, msg_size, dev_id, activity_id, status.
fn resp_hdr(
    code: u32,
    ver: u16,
    size: u32,
    dev: u32,
    act: u32,
    status: u32,
) -> Vec<(usize, Vec<u8>)> {
    vec![
        (4, l32(code).to_vec()),    // response.msg_type
        (8, l16(ver).to_vec()),     // response.msg_version
        (12, l32(size).to_vec()),   // response.msg_size
        (16, l32(dev).to_vec()),    // dev_id
        (20, l32(act).to_vec()),    // activity_id
        (24, l32(status).to_vec()), // status
    ]
}

/// A message of `len` bytes: the header's fields (`req_hdr`, `resp_hdr`), then the body's.
fn rv(len: usize, hdr: Vec<(usize, Vec<u8>)>, body: &[(usize, &[u8])]) -> Vec<u8> {
    let mut b = vec![0u8; len];
    for (o, x) in hdr.iter() {
        b[*o..*o + x.len()].copy_from_slice(x);
    }
    for (o, x) in body {
        b[*o..*o + x.len()].copy_from_slice(x);
    }
    b
}

fn max_res_resp() -> Vec<u8> {
    rv(
        72,
        resp_hdr(2, 1, 72, 0, 0, 0),
        &[
            (36, &l32(64)),   // max_sq: 2 ports × 32
            (40, &l32(64)),   // max_rq
            (44, &l32(64)),   // max_cq
            (48, &l32(64)),   // max_eq
            (52, &l32(64)),   // max_db: doorbell pages
            (68, &l32(4096)), // max_msix: 64 per port (the model's 64 ports)
        ],
    )
}

fn list_resp() -> Vec<u8> {
    rv(
        296,
        resp_hdr(3, 1, 296, 0, 0, 0),
        &[
            (32, &l32(2)),           // num_of_devs
            (40, &l32(1)),           // devs[0] = HWC {type 1, instance 0}
            (48, &l32(0x0001_0002)), // devs[2] = MANA {type 2, instance 1}; devs[1] a hole
        ],
    )
}

fn dev_config_resp() -> Vec<u8> {
    rv(
        80,
        resp_hdr(0x20001, 2, 80, 0x0001_0002, 0x55, 0),
        &[
            (64, &l16(2)),      // max_num_vports
            (66, &l16(0x5203)), // reserved: rsnic's requests (signature 'R', loopback, pause)
            (68, &l32(64)),     // max_num_eqs
            (72, &l16(9728)),   // adapter_mtu (v2)
        ],
    )
}

fn vport_config_resp() -> Vec<u8> {
    rv(
        64,
        resp_hdr(0x20008, 1, 64, 0x0001_0002, 0x55, 0),
        &[
            (32, &l32(32)),                              // max_num_sq
            (36, &l32(32)),                              // max_num_rq
            (40, &l32(64)),                              // num_indirection_ent
            (48, &[0x02, 0x6d, 0x61, 0x6e, 0x00, 0x01]), // mac_addr of vport 1
            (56, &l64(0x7670_0000_0001)),                // vport handle
        ],
    )
}

fn vport_tx_resp() -> Vec<u8> {
    rv(
        36,
        resp_hdr(0x20003, 1, 36, 0x0001_0002, 0x55, 0),
        &[
            (32, &l16(1)), // tx_vport_offset (the model: the vport index)
            (34, &[1]),    // short_form_allowed
        ],
    )
}

#[test]
fn response_golden_vectors_parse() {
    let r = rv(
        72,
        resp_hdr(1, 1, 72, 0, 0, 0),
        &[(32, &l64(1)), (40, &l64(0x8))], // gdma_protocol_ver, pf_cap_flags1
    );
    let p = req::parse_verify_vf_version(&r).unwrap();
    assert_eq!((p.gdma_protocol_ver, p.pf_cap_flags1), (1, 8));
    let m = req::parse_query_max_resources(&max_res_resp()).unwrap();
    assert_eq!(
        (m.max_sq, m.max_rq, m.max_cq, m.max_eq, m.max_db, m.max_msix),
        (64, 64, 64, 64, 64, 4096)
    );
    let l = req::parse_list_devices(&list_resp()).unwrap();
    assert_eq!(l.mana, Some(DevId { ty: 2, instance: 1 }));
    assert!(l.hwc);
    assert_eq!(l.found, 2);
    let r = rv(
        44,
        resp_hdr(4, 1, 44, 0, 0, 0),
        &[(32, &l32(2)), (36, &l32(0x4d4e)), (40, &l32(1))], // pdid, gpa_mkey, db_id
    );
    let g = req::parse_register_device(&r).unwrap();
    assert_eq!((g.pdid, g.gpa_mkey, g.db_id), (2, 0x4d4e, 1));
    let r = rv(36, resp_hdr(12, 1, 36, 0, 0, 0), &[(32, &l32(0x4003))]); // queue_index
    assert_eq!(req::parse_create_queue(&r), Ok(0x4003));
    let r = rv(40, resp_hdr(25, 1, 40, 0, 0, 0), &[(32, &l64(0x5201))]); // handle
    assert_eq!(req::parse_create_dma_region(&r), Ok(0x5201));
    let d = req::parse_query_dev_config(&dev_config_resp(), MANA).unwrap();
    assert_eq!(
        (d.max_num_vports, d.max_num_eqs, d.adapter_mtu),
        (2, 64, 9728)
    );
    let all = req::RsnicCaps {
        loopback: true,
        pause: true,
    };
    assert_eq!(d.rsnic_caps, all);
    assert_eq!(all.word(), 0x5203);
    // Version 1: 72 bytes, no adapter_mtu (ETH_FRAME_LEN); the reserved field 0, as a real
    // device has it: none of rsnic's requests.
    let r1 = rv(
        72,
        resp_hdr(0x20001, 1, 72, 0x0001_0002, 0x55, 0),
        &[(64, &l16(3))], // max_num_vports
    );
    let d = req::parse_query_dev_config(&r1, MANA).unwrap();
    assert_eq!((d.max_num_vports, d.adapter_mtu), (3, 1514));
    assert_eq!(d.rsnic_caps, req::RsnicCaps::NONE);
    // The capability bits count only under the signature; unknown bits are ignored.
    for (word, loopback, pause) in [
        (0x0003, false, false),
        (0x5303, false, false),
        (0x5201, true, false),
        (0x5202, false, true),
        (0x52fc, false, false),
    ] {
        let r = rv(
            72,
            resp_hdr(0x20001, 1, 72, 0x0001_0002, 0x55, 0),
            &[(64, &l16(1)), (66, &l16(word))],
        );
        let d = req::parse_query_dev_config(&r, MANA).unwrap();
        assert_eq!(
            d.rsnic_caps,
            req::RsnicCaps { loopback, pause },
            "word {word:#x}"
        );
    }
    let c = req::parse_query_vport_config(&vport_config_resp(), MANA).unwrap();
    assert_eq!(c.mac, [0x02, 0x6d, 0x61, 0x6e, 0, 1]);
    assert_eq!(
        (c.max_num_sq, c.max_num_rq, c.indir_table_size),
        (32, 32, 64)
    );
    assert_eq!(c.vport, 0x7670_0000_0001);
    let t = req::parse_config_vport_tx(&vport_tx_resp(), MANA).unwrap();
    assert_eq!((t.tx_vport_offset, t.short_form_allowed), (1, true));
    let r = rv(
        48,
        resp_hdr(0x20004, 1, 48, 0x0001_0002, 0x55, 0),
        &[
            (32, &l32(0x2011)),
            (36, &l32(0x3011)),
            (40, &l64(0x5751_0002_0000_2011)),
        ],
    ); // wq_id, cq_id, wq_obj
    let o = req::parse_create_wq_obj(&r, MANA).unwrap();
    assert_eq!(
        (o.wq_id, o.cq_id, o.handle),
        (0x2011, 0x3011, 0x5751_0002_0000_2011)
    );
    let mut fields: Vec<(usize, Vec<u8>)> = Vec::new();
    fields.push((32, l64(0x7ff_ffff).to_vec())); // reported_stats
    for i in 0..27 {
        fields.push((40 + 8 * i, l64(100 + i as u64).to_vec())); // field i = 100 + i
    }
    let body: Vec<(usize, &[u8])> = fields.iter().map(|(o, x)| (*o, x.as_slice())).collect();
    let r = rv(256, resp_hdr(0x20002, 2, 256, 0x0001_0002, 0x55, 0), &body);
    let s = req::parse_query_gf_stat(&r, MANA).unwrap();
    assert_eq!(s.rx_discards_no_wqe, 100); // at 40
    assert_eq!(s.hc_rx_bcast_pkts, 105); // at 80
    assert_eq!(s.hc_rx_mcast_pkts, 107); // at 96
    assert_eq!(s.tx_err_inval_oob, 118); // at 184
    assert_eq!(s.hc_tx_bytes, 119); // at 192
    assert_eq!(s.tx_err_gdma, 126); // at 248
    let r = rv(32, resp_hdr(0x20006, 1, 32, 0x0001_0002, 0x55, 0), &[]);
    assert_eq!(
        req::parse_general(&r, req::MANA_FENCE_RQ, Some(MANA)),
        Ok(())
    );
}

#[test]
fn response_checks_refuse_what_upstream_refuses() {
    let good = vport_tx_resp();
    let p = |r: &[u8]| req::parse_config_vport_tx(r, MANA);
    assert!(p(&good).is_ok());
    assert_eq!(p(&good[..31]), Err(MsgError::Short));
    assert_eq!(p(&good[..35]), Err(MsgError::Short));
    let mut r = good.clone();
    r[24] = 0x0d; // status
    assert_eq!(p(&r), Err(MsgError::Status(0x0d)));
    let mut r = good.clone();
    r[4] = 0x04; // msg_type 0x20004
    assert_eq!(p(&r), Err(MsgError::WrongCode(0x20004)));
    let mut r = good.clone();
    r[8] = 0; // msg_version 0
    assert_eq!(p(&r), Err(MsgError::BadVersion(0)));
    let mut r = good.clone();
    r[12] = 35; // msg_size < sizeof
    assert_eq!(p(&r), Err(MsgError::BadSize(35)));
    let mut r = good.clone();
    r[20] = 0x56; // activity_id
    assert_eq!(p(&r), Err(MsgError::Mismatch));
    let mut r = good.clone();
    r[18] = 2; // dev_id instance 2
    assert_eq!(p(&r), Err(MsgError::Mismatch));
    // Impossible values.
    let r = rv(40, resp_hdr(25, 1, 40, 0, 0, 0), &[]); // region handle 0
    assert_eq!(req::parse_create_dma_region(&r), Err(MsgError::BadValue));
    let r = rv(
        44,
        resp_hdr(4, 1, 44, 0, 0, 0),
        &[(32, &l32(u32::MAX))], // pdid = INVALID_PDID
    );
    assert_eq!(req::parse_register_device(&r), Err(MsgError::BadValue));
    let r = rv(
        48,
        resp_hdr(0x20004, 1, 48, 0x0001_0002, 0x55, 0),
        &[(40, &l64(u64::MAX))], // wq_obj = INVALID_MANA_HANDLE
    );
    assert_eq!(req::parse_create_wq_obj(&r, MANA), Err(MsgError::BadValue));
    let r = rv(64, resp_hdr(0x20008, 1, 64, 0x0001_0002, 0x55, 0), &[]); // no SQ, no RQ
    assert_eq!(
        req::parse_query_vport_config(&r, MANA),
        Err(MsgError::BadValue)
    );
    // A v2 dev config response of 72 bytes is short.
    let r = rv(
        72,
        resp_hdr(0x20001, 2, 72, 0x0001_0002, 0x55, 0),
        &[(64, &l16(1))],
    );
    assert_eq!(req::parse_query_dev_config(&r, MANA), Err(MsgError::Short));
    // A table size that is not a power of two falls back to 64.
    let r = rv(
        64,
        resp_hdr(0x20008, 1, 64, 0x0001_0002, 0x55, 0),
        &[(32, &l32(1)), (36, &l32(1)), (40, &l32(48))],
    );
    assert_eq!(
        req::parse_query_vport_config(&r, MANA)
            .unwrap()
            .indir_table_size,
        64
    );
    // LIST_DEVICES: num_of_devs bounds the walk; entries after it are ignored.
    let r = rv(
        296,
        resp_hdr(3, 1, 296, 0, 0, 0),
        &[(32, &l32(1)), (40, &l32(1)), (44, &l32(0x0001_0002))],
    );
    assert_eq!(req::parse_list_devices(&r).unwrap().mana, None);
    // Builders refuse what upstream would not send.
    let mut b = [0u8; 4096];
    assert_eq!(
        req::create_dma_region(&mut b, 0x1000, 0x3000),
        Err(MsgError::BadArgument)
    );
    assert_eq!(
        req::create_dma_region(&mut b, 0x1001, 0x4000),
        Err(MsgError::BadArgument)
    );
    assert_eq!(
        req::create_dma_region(&mut b[..70], 0x1000, 0x4000),
        Err(MsgError::BufferTooSmall)
    );
    assert_eq!(
        req::general(&mut b[..39], 2, 72, Caller::GDMA),
        Err(MsgError::BufferTooSmall)
    );
}

#[test]
fn smc_golden_vectors() {
    let a = smc::HwcAddrs {
        eq: 0x1_2345_6000,
        cq: 0xf000_0000_0000_1000,
        rq: 0x2000,
        sq: 0x3000,
    };
    let w = smc::establish_words(&a, 0x0102).unwrap();
    let mut b = [0u8; 32];
    for (i, d) in w.iter().enumerate() {
        b[4 * i..4 * i + 4].copy_from_slice(&d.to_le_bytes());
    }
    let want = v(
        32,
        &[
            (0, &[0x56, 0x34, 0x12, 0x00, 0x00, 0x00]), // EQ frame 0x123456, low 48 bits
            (6, &[0x01, 0x00, 0x00, 0x00, 0x00, 0x00]), // CQ frame 0xf_0000_0000_0001: low 48 = 1
            (12, &[0x02, 0, 0, 0, 0, 0]),               // RQ frame 2
            (18, &[0x03, 0, 0, 0, 0, 0]),               // SQ frame 3
            (24, &l16(0x00f0)),                         // high 4 bits: CQ's 0xf in bits 4..7
            (26, &l16(0x0102)),                         // EQ MSI-X index
            (28, &l32(1)),                              // hdr: msg_type ESTABLISH_HWC
        ],
    );
    assert_eq!(b.to_vec(), want);
    assert_eq!(smc::request_header(2, false), 2); // DESTROY_HWC
    assert_eq!(smc::request_header(1, true), 1 | 1 << 24); // reset_vf bit 24
    assert_eq!(smc::check_response(0x81, 1), Ok(())); // type 1, direction 1
    assert_eq!(
        smc::check_response(0x01, 1),
        Err(smc::SmcError::Protocol(1))
    );
    assert_eq!(
        smc::check_response(0x82, 1),
        Err(smc::SmcError::Protocol(0x82))
    );
    assert_eq!(
        smc::check_response(0x89, 1),
        Err(smc::SmcError::Protocol(0x89))
    ); // ver 1
    assert_eq!(smc::check_response(0x381, 1), Err(smc::SmcError::Status(3)));
    assert_eq!(
        smc::establish_words(&smc::HwcAddrs { eq: 0x1001, ..a }, 0),
        Err(smc::SmcError::BadAddress)
    );
}

// ---------------------------------------------------------------------------------------
// The same vectors on the device side.

fn probed() -> HwcHost {
    let mut h = HwcHost::new(new_mana(2));
    let mut eqs = h.alloc_eqs(2);
    h.probe(&mut eqs, 4096).unwrap();
    h
}

#[test]
fn device_answers_golden_requests_with_golden_responses() {
    let mut h = probed();
    assert_eq!(h.call(&general_req(2, 72, 0)).unwrap(), max_res_resp());
    assert_eq!(h.call(&general_req(3, 296, 0)).unwrap(), list_resp());
    assert_eq!(h.call(&dev_config_req()).unwrap(), dev_config_resp());
    assert_eq!(h.call(&vport_config_req()).unwrap(), vport_config_resp());
    assert_eq!(h.call(&vport_tx_req()).unwrap(), vport_tx_resp());
    // Verify: gdma_protocol_ver 1, no PF capability flags.
    assert_eq!(
        h.call(&verify_req()).unwrap(),
        rv(72, resp_hdr(1, 1, 72, 0, 0, 0), &[(32, &l64(1))])
    );
    // GF stats: nothing moved yet; reported_stats = every counter asked for.
    let r = h.call(&gf_stat_req()).unwrap();
    assert_eq!(
        r[..32],
        rv(32, resp_hdr(0x20002, 2, 256, 0x0001_0002, 0x55, 0), &[])[..]
    );
    assert_eq!(r.len(), 256);
    // STATISTICS_FLAGS: all 27 (bits 0..26), every counter mana asks for, reported; those
    // of the errors the model never raises (GF/vport disabled, the enforcements) are 0.
    let kept: u64 = 0x7ff_ffff;
    assert_eq!(r[32..40], l64(kept));
    assert!(r[40..].iter().all(|&x| x == 0));
    // A region of two pages, then one more with ADD_PAGES, then destroyed.
    let buf = h.mem.alloc(0x3000);
    let base = rsnic_core::hwif::hw::Coherent::dma_addr(&buf);
    let mut create = rv(
        72,
        req_hdr(25, 1, 72, 1, 40, 0, 0), // GDMA_CREATE_DMA_REGION, size 64 + 8
        &[
            (40, &l64(0x3000)), // length
            (56, &l32(3)),      // page_count
            (60, &l32(1)),      // page_addr_list_len
        ],
    );
    create[64..72].copy_from_slice(&l64(base)); // page_addr_list[0]
    let r = h.call(&create).unwrap();
    assert_eq!(r[..32], rv(32, resp_hdr(25, 1, 40, 0, 0, 0), &[])[..]);
    let handle = u64::from_le_bytes(r[32..40].try_into().unwrap());
    assert_ne!(handle, 0);
    let mut add = rv(
        72,
        req_hdr(26, 1, 72, 1, 32, 0, 0), // GDMA_DMA_REGION_ADD_PAGES, size 56 + 8 × 2
        &[
            (48, &l32(2)), // page_addr_list_len
        ],
    );
    add[40..48].copy_from_slice(&l64(handle)); // dma_region_handle
    add[56..64].copy_from_slice(&l64(base + 0x1000)); // page 1
    add[64..72].copy_from_slice(&l64(base + 0x2000)); // page 2
    assert_eq!(
        h.call(&add).unwrap(),
        rv(32, resp_hdr(26, 1, 32, 0, 0, 0), &[])
    );
    // A third ADD_PAGES has nothing left to add.
    let e = h.call(&add);
    assert_eq!(
        e,
        Err(CallError::Hwc(
            rsnic_core::hwif::mana::hwc::HwcError::Status(sim::STATUS_INVALID_PARAMETER)
        ))
    );
    let mut destroy = rv(
        48,
        req_hdr(27, 1, 48, 1, 32, 0, 0), // GDMA_DESTROY_DMA_REGION
        &[],
    );
    destroy[40..48].copy_from_slice(&l64(handle)); // dma_region_handle
    assert_eq!(
        h.call(&destroy).unwrap(),
        rv(32, resp_hdr(27, 1, 32, 0, 0, 0), &[])
    );
}

/// RSNIC_SET_LOOPBACK (rsnic's request, not MANA's): its bytes, and the device turning the
/// vport's internal loopback on and off, refusing a bad flag or an unknown vport.
#[test]
fn set_loopback_request() {
    let vport0 = 0x7670_0000_0000u64; // VPORT_HANDLE_BASE: vport 0
    assert_eq!(
        built(|b| req::set_loopback(b, MANA, vport0 + 1, true)),
        rv(
            56,
            req_hdr(0x2F001, 1, 56, 1, 32, 0x0001_0002, 0x55), // RSNIC_SET_LOOPBACK
            &[
                (40, &l64(vport0 + 1)), // vport
                (48, &l32(1)),          // enable
            ]
        )
    );
    let mut h = probed();
    let status = |r: &[u8]| u32::from_le_bytes(r[24..28].try_into().unwrap());
    let r = h
        .request(|b| req::set_loopback(b, MANA, vport0 + 1, true))
        .unwrap();
    assert_eq!(status(&r), 0);
    assert!(req::parse_general(&r, req::RSNIC_SET_LOOPBACK, Some(MANA)).is_ok());
    assert!(h.dev.borrow().loopback(1));
    assert!(!h.dev.borrow().loopback(0));
    let r = h
        .request(|b| req::set_loopback(b, MANA, vport0 + 1, false))
        .unwrap();
    assert_eq!(status(&r), 0);
    assert!(!h.dev.borrow().loopback(1));
    // enable must be 0 or 1 (STATUS_INVALID_PARAMETER); the vport must exist
    // (STATUS_INVALID_HANDLE).
    let mut bad = built(|b| req::set_loopback(b, MANA, vport0, true));
    bad[48] = 2;
    assert_eq!(
        h.call(&bad),
        Err(CallError::Hwc(HwcError::Status(
            sim::STATUS_INVALID_PARAMETER
        )))
    );
    assert!(!h.dev.borrow().loopback(0));
    assert_eq!(
        h.request(|b| req::set_loopback(b, MANA, vport0 + 9, true)),
        Err(CallError::Hwc(HwcError::Status(sim::STATUS_INVALID_HANDLE)))
    );
}

/// RSNIC_SET_PAUSE and RSNIC_QUERY_PAUSE (rsnic's requests, not MANA's): their bytes, the
/// response's, and the device setting and reporting the vport's flow control per direction,
/// refusing a bad flag or an unknown vport.
#[test]
fn pause_requests() {
    let vport0 = 0x7670_0000_0000u64; // VPORT_HANDLE_BASE: vport 0
    assert_eq!(
        built(|b| req::set_pause(b, MANA, vport0 + 1, false, true)),
        rv(
            56,
            req_hdr(0x2F002, 1, 56, 1, 32, 0x0001_0002, 0x55), // RSNIC_SET_PAUSE
            &[
                (40, &l64(vport0 + 1)), // vport
                (48, &l32(0)),          // rx
                (52, &l32(1)),          // tx
            ]
        )
    );
    assert_eq!(
        built(|b| req::query_pause(b, MANA, vport0 + 1)),
        rv(
            48,
            req_hdr(0x2F003, 1, 48, 1, 56, 0x0001_0002, 0x55), // RSNIC_QUERY_PAUSE
            &[
                (40, &l64(vport0 + 1)), // vport
            ]
        )
    );
    assert_eq!(req::request_name(0x2F002), "RSNIC_SET_PAUSE");
    assert_eq!(req::request_name(0x2F003), "RSNIC_QUERY_PAUSE");

    // The parser: flags 0 or 1, the counters as u64.
    let resp = |rx: u32, tx: u32| {
        rv(
            56,
            resp_hdr(0x2F003, 1, 56, 0x0001_0002, 0x55, 0),
            &[
                (32, &l32(rx)),
                (36, &l32(tx)),
                (40, &l64(0x1_0000_0007)),
                (48, &l64(9)),
            ],
        )
    };
    assert_eq!(
        req::parse_query_pause(&resp(1, 0), MANA),
        Ok(req::PauseState {
            rx: true,
            tx: false,
            tx_pause_frames: 0x1_0000_0007,
            rx_pause_frames: 9,
        })
    );
    assert_eq!(
        req::parse_query_pause(&resp(2, 0), MANA),
        Err(MsgError::BadValue)
    );
    assert_eq!(
        req::parse_query_pause(&resp(0, 1)[..48], MANA),
        Err(MsgError::Short)
    );

    // The device: both directions off after creation, each set on its own.
    let mut h = probed();
    let query = |h: &mut HwcHost, vport: u64| {
        let r = h.request(|b| req::query_pause(b, MANA, vport)).unwrap();
        assert_eq!(r.len(), 56);
        req::parse_query_pause(&r, MANA).unwrap()
    };
    assert_eq!(query(&mut h, vport0 + 1), req::PauseState::default());
    for (rx, tx) in [(false, true), (true, false), (true, true), (false, false)] {
        let r = h
            .request(|b| req::set_pause(b, MANA, vport0 + 1, rx, tx))
            .unwrap();
        assert!(req::parse_general(&r, req::RSNIC_SET_PAUSE, Some(MANA)).is_ok());
        assert_eq!(h.dev.borrow().pause_rx_tx(1), Some((rx, tx)));
        assert_eq!(h.dev.borrow().pause_rx_tx(0), Some((false, false)));
        let q = query(&mut h, vport0 + 1);
        assert_eq!((q.rx, q.tx), (rx, tx));
        assert_eq!((q.tx_pause_frames, q.rx_pause_frames), (0, 0));
    }
    // The device's response, byte for byte.
    h.request(|b| req::set_pause(b, MANA, vport0, true, false))
        .unwrap();
    assert_eq!(
        h.request(|b| req::query_pause(b, MANA, vport0)).unwrap(),
        rv(
            56,
            resp_hdr(0x2F003, 1, 56, 0x0001_0002, 0x55, 0),
            &[(32, &l32(1)), (36, &l32(0))]
        )
    );
    h.request(|b| req::set_pause(b, MANA, vport0, false, false))
        .unwrap();
    // A flag must be 0 or 1 (STATUS_INVALID_PARAMETER), nothing changes; the vport must
    // exist (STATUS_INVALID_HANDLE), for both requests.
    for off in [48, 52] {
        let mut bad = built(|b| req::set_pause(b, MANA, vport0, true, true));
        bad[off] = 2;
        assert_eq!(
            h.call(&bad),
            Err(CallError::Hwc(HwcError::Status(
                sim::STATUS_INVALID_PARAMETER
            )))
        );
        assert_eq!(h.dev.borrow().pause_rx_tx(0), Some((false, false)));
    }
    assert_eq!(
        h.request(|b| req::set_pause(b, MANA, vport0 + 9, true, true)),
        Err(CallError::Hwc(HwcError::Status(sim::STATUS_INVALID_HANDLE)))
    );
    assert_eq!(
        h.request(|b| req::query_pause(b, MANA, vport0 + 9)),
        Err(CallError::Hwc(HwcError::Status(sim::STATUS_INVALID_HANDLE)))
    );
}
