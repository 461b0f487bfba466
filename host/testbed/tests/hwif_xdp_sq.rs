//! The SQ as the driver's XDP SQs use it (`crate::xdp` in the driver): every frame posted
//! with `xmit_more` set, then one [`Sq::flush`] per NAPI poll or `ndo_xdp_xmit` batch,
//! Enhanced MPWQE with inline on. One doorbell per flush, none for an empty flush, and the
//! session the flush closes is the WQE the doorbell announces.

mod hwif_common;

use hwif_common::*;

#[test]
fn frames_wait_for_the_flush_then_one_doorbell() {
    let (_, mut env, mut sq) = sq_env(mpwqe_params(7, true));
    env.log.borrow_mut().clear();
    xmit_tcp(&mut sq, &mut env, 32, 64, |_| true);
    assert!(env.mmio_writes().is_empty(), "no doorbell before the flush");
    assert!(sq.session_open());
    assert_eq!(sq.pc(), 0, "the open session is not posted yet");
    sq.flush(&mut env);
    assert!(!sq.session_open());
    // One session of 32 data segments: ds = 2 + 32 = 34, 9 WQEBBs.
    assert_eq!(
        env.mmio_writes(),
        vec![(UAR + 0x800, [0, 0, 0, 0x29, 0, 0x0a, 0xbc, 34])]
    );
    assert_eq!(sq.pc(), 9);
    let dbr = env.sq_dbr_writes();
    assert_eq!(dbr, vec![Ev::Write("sq_dbr", 4, vec![0, 0, 0, 9])]);
    assert_eq!((sq.stats.doorbells, sq.stats.mpwqe_blks), (1, 1));
    // Nothing posted since: a second flush rings nothing.
    sq.flush(&mut env);
    assert_eq!(env.mmio_writes().len(), 1);
    assert_eq!(
        complete_all(&mut sq, &mut env, 0),
        (0..32).collect::<Vec<_>>()
    );
    assert!(env.maps.is_empty(), "every frame unmapped at completion");
}

#[test]
fn flush_after_a_full_ring_announces_everything_posted() {
    let (mem, mut env, mut sq) = sq_env(mpwqe_params(6, true));
    env.log.borrow_mut().clear();
    let (mut posted, mut busy) = (0u64, 0u64);
    for i in 0..400u32 {
        match sq.xmit(Pkt::new(&mem, i, tcp4_frame(64, 0), vec![]), true, &mut env) {
            Ok(()) => posted += 1,
            Err(_) => busy += 1,
        }
    }
    assert!(busy > 0, "a 64-WQEBB ring cannot take 400 frames");
    assert_eq!(sq.stats.packets, posted);
    sq.flush(&mut env);
    assert!(!sq.session_open());
    // The newest doorbell record carries the final producer counter: nothing posted is
    // left unannounced.
    let last_dbr = env
        .log
        .borrow()
        .iter()
        .rev()
        .find_map(|e| match e {
            Ev::Write("sq_dbr", 4, v) => Some(v.clone()),
            _ => None,
        })
        .expect("a doorbell record write");
    let pc = sq.pc();
    assert_eq!(last_dbr, vec![0, 0, (pc >> 8) as u8, pc as u8]);
    let n = env.mmio_writes().len();
    sq.flush(&mut env);
    assert_eq!(env.mmio_writes().len(), n, "nothing new to ring");
}
