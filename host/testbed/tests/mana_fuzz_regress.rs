//! Regressions found by fuzzing the MANA data path (host/fuzz, targets mana_tx_completion,
//! mana_rx_completion and mana_device_wqe).

use rsnic_core::hwif::mlx5::tx::{Gso, TxCsum, TxRejectReason};
use rsnic_testbed::fixtures::tcp4_segment;
use rsnic_testbed::mana_pair::{Frame, ManaConfig, ManaPair, TX_PORT};

fn tso(linear: Vec<u8>, frags: Vec<Vec<u8>>) -> Frame {
    let mut f = Frame::linear(linear);
    f.frags = frags;
    f.csum = TxCsum::Partial;
    f.gso = Some(Gso {
        size: 1000,
        segs: 1,
    });
    f
}

/// mana_tx_completion, crash-e5774c9d: a TSO packet whose linear part holds exactly the
/// headers and that has no payload (no fragment, or only empty ones) became a WQE with
/// OOB_IN_SGL and a single SGE, which the device rejects (OOB_IN_SGL needs two SGEs, spec
/// D.2) with an INVALID_OOB error CQE. The driver now hands such a packet back as malformed,
/// without mapping it or posting anything.
#[test]
fn tso_without_payload_is_rejected_not_posted() {
    let mut p = ManaPair::new(ManaConfig::default());
    let empty_frag = tso(tcp4_segment(0), vec![Vec::new()]);
    for f in [tso(tcp4_segment(0), Vec::new()), empty_frag] {
        let head = p.sq.wq().head();
        assert_eq!(p.send_one(&f, false), Err(TxRejectReason::Malformed));
        assert_eq!(p.sq.wq().head(), head, "nothing posted");
    }
    let e = p.env.counts();
    assert_eq!((e.maps, e.sq_doorbells, e.bql_sent_pkts), (0, 0, 0));
    assert_eq!(p.drv_tx().dropped, 2);

    // With payload, in the linear part or in a fragment, TSO goes through: SGE0 = headers.
    let whole = tso(tcp4_segment(1500), Vec::new());
    let split = tso(tcp4_segment(0), vec![tcp4_segment(1500)[54..].to_vec()]);
    for f in [&whole, &split] {
        p.send_one(f, false).unwrap();
    }
    let rx = p.settle(64);
    assert_eq!(rx.len(), 4, "two packets of two segments each");
    for r in &rx {
        assert!(r.bytes.len() == 54 + 1000 || r.bytes.len() == 54 + 500);
    }
    let t = p.dev(TX_PORT);
    assert_eq!(
        t.tx_wqe_errors + t.hc_tx_err_inval_oob,
        0,
        "the device rejected a WQE"
    );
    assert_eq!(p.drv_tx().tso_packets, 2);
    p.check_counters().unwrap();
}
