//! MANA's memory key: GDMA_REGISTER_DEVICE gives the driver the device's key for guest
//! physical addresses (`gpa_mkey`), which every SGE of the data path carries (upstream:
//! `gd->gpa_mkey` in `mana_start_xmit` and `mana_post_pkt_rxq`'s SGEs). The device reads and
//! writes host memory only through a key it knows: an SGE under another one is refused with
//! an error completion (TX: CQE_TX_HDR_PROCESSING_ERROR, nothing sent; RX: the frame is not
//! written and completes as CQE_RX_TRUNCATED, the WQE consumed), counted in the model's
//! `mkey_errors`. Each test here fails against a device that does not check the key.

use rsnic_core::sim::mana::MANA_MKEY;
use rsnic_testbed::mana_pair::{Frame, ManaConfig, ManaPair, RX_PORT, TX_PORT};

fn frames(n: usize) -> Vec<Frame> {
    (0..n)
        .map(|i| Frame::linear(vec![(i % 251) as u8 + 1; 60 + i % 64]))
        .collect()
}

/// A pair built through the HWC, its SGEs under `keys` (TX, RX), or the registered key.
fn pair(keys: Option<(u32, u32)>) -> ManaPair {
    let (p, h, _) = ManaPair::new_hwc(ManaConfig {
        rq_wqes: 128,
        sge_keys: keys,
        ..ManaConfig::default()
    });
    // The device's key is not 0: a driver that put 0 in its SGEs (as rsnic did) is refused.
    assert_eq!(h.info.reg.gpa_mkey, MANA_MKEY);
    assert_ne!(MANA_MKEY, 0);
    p
}

/// A pair under `keys` that sends eight frames, of which none arrives (`what`: what the
/// failure message says the frames were).
fn eight_refused(keys: Option<(u32, u32)>, what: &str) -> ManaPair {
    let mut p = pair(keys);
    let f = frames(8);
    assert_eq!(p.send_burst(&f), f.len());
    let got = p.settle(64);
    assert!(
        got.is_empty(),
        "{} frames {what} under a foreign key",
        got.len()
    );
    p
}

#[test]
fn sges_under_the_registered_key_carry_traffic() {
    let mut p = pair(None);
    let f = frames(16);
    assert_eq!(p.send_burst(&f), f.len());
    let got = p.settle(64);
    assert_eq!(got.len(), f.len());
    for (g, s) in got.iter().zip(&f) {
        assert_eq!(g.bytes, s.bytes());
    }
    assert_eq!(p.dev(TX_PORT).mkey_errors, 0);
    assert_eq!(p.dev(RX_PORT).mkey_errors, 0);
    p.check_counters().expect("counters balance");
}

#[test]
fn tx_sges_under_another_key_complete_with_an_error_and_send_nothing() {
    // Key 0: what rsnic put in every SGE before it used the registered one.
    let p = eight_refused(Some((0, MANA_MKEY)), "crossed");
    let t = p.dev(TX_PORT);
    assert_eq!(t.mkey_errors, 8);
    assert_eq!((t.tx_cqes, t.tx_err_cqes, t.hc_tx_err_gdma), (8, 8, 8));
    assert_eq!(t.hc_tx_ucast_pkts, 0);
    let r = p.dev(RX_PORT);
    assert_eq!(r.hc_rx_ucast_pkts + r.hc_rx_discards_no_wqe, 0);
    // The driver saw an error completion for each (mana's `tx_cqe_err`) and took the packets
    // back: nothing is left in flight.
    assert_eq!(p.drv_tx().tx_cqe_err, 8);
    assert_eq!(p.tx_in_flight(), 0);
}

#[test]
fn rx_sges_under_another_key_are_not_written_and_complete_truncated() {
    let p = eight_refused(Some((MANA_MKEY, 0x1234)), "written");
    let r = p.dev(RX_PORT);
    // One WQE of one SGE per frame: each refused, consumed and completed.
    assert_eq!(r.mkey_errors, 8);
    assert_eq!((r.rx_cqes, r.rx_truncated), (8, 8));
    assert_eq!(r.hc_rx_ucast_pkts, 0);
    assert_eq!(p.drv_rx().rx_truncated, 8);
    // The sender's side was fine.
    let t = p.dev(TX_PORT);
    assert_eq!((t.tx_err_cqes, t.mkey_errors), (0, 0));
    assert_eq!(p.drv_tx().tx_cqe_err, 0);
}
