//! RSS of the simulated MANA device as MANA_CONFIG_VPORT_RX configures it: frames are
//! hashed with the vport's key (Toeplitz over addresses and ports) and spread by its
//! indirection table; a key-only update (`update_hashkey` without `update_indir_tab`) moves
//! flows without touching the table, nothing is re-created. Expected RQs come from the
//! Toeplitz function checked against the Microsoft verification vectors (sim_pkt.rs).

use rsnic_core::hwif::mana::gdma_req as req;
use rsnic_core::hwif::mana::hwc::HwcError;
use rsnic_core::sim::mana as sim;
use rsnic_core::sim::pkt::{toeplitz, RSS_KEY};
use rsnic_testbed::mana_hwc::{CallError, HwcHost};
use rsnic_testbed::mana_pair::{Frame, ManaConfig, ManaPair, RX_PORT};

/// A UDP/IPv4 frame 10.0.0.1:`sport` → 10.0.0.2:9.
fn udp(sport: u16) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00];
    f.extend_from_slice(&[0x45, 0, 0, 32, 0, 0, 0x40, 0, 64, 17, 0, 0]);
    f.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2]);
    f.extend_from_slice(&sport.to_be_bytes());
    f.extend_from_slice(&9u16.to_be_bytes());
    f.extend_from_slice(&[0, 12, 0, 0, 1, 2, 3, 4]);
    f.resize(60, 0);
    f
}

/// The frame's Toeplitz input: addresses, then ports.
fn tuple(f: &[u8]) -> &[u8] {
    &f[26..38]
}

fn config(
    h: &mut HwcHost,
    key: &[u8; 40],
    tab: &[u64],
    update_key: bool,
    update_tab: bool,
) -> Result<(), CallError> {
    let vport = h.info.vports[RX_PORT].vport;
    h.vport_rss(vport, key, tab, None, update_key, update_tab)
}

/// Sends `frames` and returns the source ports of those delivered (the pair's RQ took
/// them) and how many the other RQ, which has no buffer posted, dropped.
fn run(p: &mut ManaPair, frames: &[Vec<u8>]) -> (Vec<u16>, u64) {
    let drops = p.dev(RX_PORT).hc_rx_discards_no_wqe;
    let fs: Vec<Frame> = frames.iter().map(|f| Frame::linear(f.clone())).collect();
    assert_eq!(p.send_burst(&fs), fs.len());
    let mut got: Vec<u16> = p
        .settle(64)
        .iter()
        .map(|r| u16::from_be_bytes([r.bytes[34], r.bytes[35]]))
        .collect();
    got.sort_unstable();
    (got, p.dev(RX_PORT).hc_rx_discards_no_wqe - drops)
}

#[test]
fn the_vports_key_and_table_steer_and_a_key_change_moves_flows() {
    let (mut p, mut h, o) = ManaPair::new_hwc(ManaConfig::default());
    // A second RQ object on the receiving vport with nothing posted: what RSS sends there
    // is dropped and counted (hc_rx_discards_no_wqe).
    let rq2 = h.mem.alloc(4096);
    let cq2 = h.mem.alloc(4096);
    let o2 = h
        .create_wq_obj(RX_PORT, req::GDMA_RQ, &rq2, &cq2, p.rx_eq.id())
        .expect("second RQ object");
    // Even entries: the pair's RQ; odd: the empty one.
    let tab: Vec<u64> = (0..64)
        .map(|i| if i % 2 == 0 { o.rq.handle } else { o2.handle })
        .collect();
    let frames: Vec<Vec<u8>> = (0..40).map(|i| udp(4000 + i)).collect();
    let expect = |key: &[u8; 40]| -> (Vec<u16>, u64) {
        let mut ok = Vec::new();
        let mut dropped = 0;
        for f in &frames {
            if toeplitz(key, tuple(f)) % 64 % 2 == 0 {
                ok.push(u16::from_be_bytes([f[34], f[35]]));
            } else {
                dropped += 1;
            }
        }
        (ok, dropped)
    };
    let key1 = RSS_KEY;
    config(&mut h, &key1, &tab, true, true).unwrap();
    assert_eq!(h.dev.borrow().vport_hashkey(RX_PORT), Some(key1));
    let want1 = expect(&key1);
    assert!(want1.1 > 0 && !want1.0.is_empty(), "both RQs get flows");
    assert_eq!(run(&mut p, &frames), want1);
    // The CQE carries the hash under the vport's key (a flow the pair's RQ takes).
    let f = udp(want1.0[0]);
    assert_eq!(p.send_burst(&[Frame::linear(f.clone())]), 1);
    let rx = p.settle(64);
    assert_eq!(rx.len(), 1);
    assert_eq!(rx[0].comp.hash, toeplitz(&key1, tuple(&f)));
    // A new key alone (the table is not sent: update_indir_tab 0): flows move as the new
    // key says, and at least one moves.
    let mut key2 = RSS_KEY;
    key2.rotate_left(7);
    config(&mut h, &key2, &[0; 64], true, false).unwrap();
    assert_eq!(h.dev.borrow().vport_hashkey(RX_PORT), Some(key2));
    let want2 = expect(&key2);
    assert_ne!(want1, want2, "the key change moves flows");
    assert_eq!(run(&mut p, &frames), want2);
    // The whole table to the pair's RQ, key unchanged (`-X equal 1`): everything arrives.
    config(&mut h, &key1, &[o.rq.handle; 64], false, true).unwrap();
    assert_eq!(h.dev.borrow().vport_hashkey(RX_PORT), Some(key2));
    let (got, dropped) = run(&mut p, &frames);
    assert_eq!((got.len(), dropped), (frames.len(), 0));
    // Refused: a table of 128 entries (the vport's is 64), a flag that is not 0 or 1, an
    // object of the other vport.
    let big = vec![o.rq.handle; 128];
    assert_eq!(
        config(&mut h, &key1, &big, false, true),
        Err(CallError::Hwc(HwcError::Status(sim::STATUS_NOT_SUPPORTED)))
    );
    let sq_of_tx_port = o.sq.handle;
    assert_eq!(
        config(&mut h, &key1, &[sq_of_tx_port; 64], false, true),
        Err(CallError::Hwc(HwcError::Status(sim::STATUS_INVALID_HANDLE)))
    );
    // Nothing was re-created: the pair's RQ is the one made at the start.
    assert_eq!(p.ids[2], o.rq.wq_id);
}
