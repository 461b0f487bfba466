//! TX completion (spec C.3): one CQE releasing several regular and MPWQE WQEs and NOPs in
//! FIFO order, the 128-CQE budget, error CQEs, and hostile CQEs that must never panic the
//! driver nor release a packet twice.

mod hwif_common;

use std::collections::HashSet;

use hwif_common::*;
use rsnic_core::hwif::hw::Coherent;
use rsnic_core::hwif::mlx5::cqe::{Cqe64, CQE_REQ, CQE_REQ_ERR, CQE_RESP_SEND, SYND_LOCAL_PROT};
use rsnic_core::hwif::mlx5::sq::SqError;
use rsnic_core::hwif::mlx5::tx::{TxCsum, TxRejectReason};
use rsnic_testbed::mem::HostMemory;

/// The k-th CQE from the current consumer counter, with the right owner bit.
fn put(sq: &TestSq, k: u32, c: Cqe64) {
    put_cqe(sq.cq(), sq.cq().cc() + k, c);
}

fn poll(sq: &mut TestSq, env: &mut Env) -> (Vec<u32>, rsnic_core::hwif::mlx5::sq::TxPoll) {
    let mut ids = Vec::new();
    let r = sq.poll_cq(env, |p| ids.push(p.id));
    (ids, r)
}

#[test]
fn one_cqe_releases_regular_mpwqe_and_nops() {
    let (mem, mut env, mut sq) = sq_env(mpwqe_params(7, false));
    let mut id = 0u32;
    let mut xmit = |sq: &mut TestSq, env: &mut Env, frag: bool, csum: bool, more: bool| {
        let frags = if frag { vec![vec![1u8; 50]] } else { vec![] };
        let mut p = Pkt::new(&mem, id, tcp4_frame(80, 0), frags);
        if csum {
            p.csum = TxCsum::Partial;
        }
        id += 1;
        sq.xmit(p, more, env).unwrap();
        id - 1
    };
    xmit(&mut sq, &mut env, true, false, true);
    for _ in 0..3 {
        xmit(&mut sq, &mut env, false, false, true);
    }
    xmit(&mut sq, &mut env, true, false, true);
    xmit(&mut sq, &mut env, false, true, true);
    xmit(&mut sq, &mut env, false, true, false);
    // regular @0 (1 WQEBB), session ds 5 @1 (2), regular @3 (1), session ds 4 @4 (1).
    assert_eq!(sq.pc(), 5);
    assert_eq!(env.maps.len(), 2 * 2 + 5);
    put(&sq, 0, tx_cqe(CQE_REQ, 4, 0));
    let (ids, r) = poll(&mut sq, &mut env);
    assert_eq!(ids, (0..7).collect::<Vec<_>>());
    assert_eq!((r.cqes, r.packets), (1, 7));
    assert_eq!(r.bytes, 130 + 80 * 3 + 130 + 80 * 2);
    assert_eq!(sq.cc(), 5);
    assert!(env.maps.is_empty());
    assert_eq!(env.bql_inflight, 0);
    // set_ci written: BE32(1).
    let ci = {
        let log = env.log.borrow();
        log.iter()
            .rev()
            .find_map(|e| match e {
                Ev::Write("cq_dbr", 0, v) => Some(v.clone()),
                _ => None,
            })
            .unwrap()
    };
    assert_eq!(ci, vec![0, 0, 0, 1]);
    assert_eq!(sq.stats.cqes, 1);

    // Phase 2: regular WQEs up to pc 60, then a session start pads 4 NOPs (60..63, the
    // end of the first 4 KiB fragment) and sits at 64; a regular WQE follows at 65. One CQE for 65 releases all of it.
    let mut regular_ids = Vec::new();
    while sq.pc() < 60 {
        regular_ids.push(xmit(&mut sq, &mut env, true, false, true));
    }
    let first_session = xmit(&mut sq, &mut env, false, false, true);
    xmit(&mut sq, &mut env, false, false, true);
    assert_eq!(sq.stats.nop, 4);
    xmit(&mut sq, &mut env, true, false, false);
    assert_eq!(sq.pc(), 66);
    assert_eq!(sq.ring().bytes(64 * 64, 4), vec![0, 0, 64, 0x29]);
    put(&sq, 0, tx_cqe(CQE_REQ, 65, 0));
    let (ids, r) = poll(&mut sq, &mut env);
    let mut want = regular_ids;
    want.extend([first_session, first_session + 1, first_session + 2]);
    assert_eq!(ids, want);
    assert_eq!(r.packets as usize, want.len());
    assert_eq!(sq.cc(), 66);
    assert!(env.maps.is_empty());
    assert_eq!(env.bql_inflight, 0);
}

#[test]
fn budget_is_128_cqes() {
    let (_, mut env, mut sq) = sq_env(sq_params(8));
    for i in 0..130u16 {
        xmit_one(&mut sq, &mut env, i.into(), 60, false);
        put(&sq, u32::from(i), tx_cqe(CQE_REQ, i, 0));
    }
    let (ids, r) = poll(&mut sq, &mut env);
    assert_eq!((ids.len(), r.cqes, r.busy), (128, 128, true));
    let (ids, r) = poll(&mut sq, &mut env);
    assert_eq!((ids, r.cqes, r.busy), (vec![128, 129], 2, false));
    let (ids, r) = poll(&mut sq, &mut env);
    assert_eq!((ids.len(), r.cqes), (0, 0));
    assert_eq!(sq.stats.cqes, 130);
}

#[test]
fn error_cqe_puts_sq_in_error_then_drain_and_reset() {
    let (_, mut env, mut sq) = sq_env(sq_params(6));
    xmit_tcp(&mut sq, &mut env, 5, 60, |_| false);
    let mut e = tx_cqe(CQE_REQ_ERR, 1, 0);
    e.set_syndrome(SYND_LOCAL_PROT, 0x42);
    put(&sq, 0, e);
    let (ids, r) = poll(&mut sq, &mut env);
    assert_eq!(ids, vec![0, 1]);
    let want = SqError::ReqErr {
        syndrome: SYND_LOCAL_PROT,
        vendor: 0x42,
        wqe_counter: 1,
    };
    assert_eq!(r.error, Some(want));
    assert_eq!(sq.stats.cqe_err, 1);
    // No more packets are accepted.
    let rej = reject_one(&mut sq, &mut env, 9, 60);
    assert_eq!((rej.pkt.id, rej.reason), (9, TxRejectReason::SqError));
    // Drain hands back the rest exactly once.
    assert!(sq.reset().is_err());
    let mut ids = Vec::new();
    let (n, _) = sq.drain(&mut env, |p| ids.push(p.id));
    assert_eq!((n, ids), (3, vec![2, 3, 4]));
    assert!(env.maps.is_empty());
    sq.reset().unwrap();
    assert_eq!((sq.pc(), sq.cc(), sq.error()), (0, 0, None));
    xmit_one(&mut sq, &mut env, 10, 60, false);
}

#[test]
fn hostile_wqe_counters_and_opcodes() {
    let mem = HostMemory::new();
    let mut env = Env::new(&mem);
    // wqe_counter beyond pc, equal to pc, behind cc: nothing released.
    for bad in [3u16, 4, 0xffff, 0x8000] {
        let mut sq = make_sq(&env, sq_params(6));
        xmit_tcp(&mut sq, &mut env, 3, 60, |_| false);
        put(&sq, 0, tx_cqe(CQE_REQ, bad, 0));
        put(&sq, 1, tx_cqe(CQE_REQ, 2, 0));
        let (ids, r) = poll(&mut sq, &mut env);
        assert!(ids.is_empty(), "bad={bad}");
        assert_eq!(r.error, Some(SqError::BadWqeCounter { wqe_counter: bad }));
        assert_eq!(sq.stats.cqe_bad, 1);
        // The walk stopped at the bad CQE; a later poll releases from the good one.
        let (ids, _) = poll(&mut sq, &mut env);
        assert_eq!(ids, vec![0, 1, 2]);
        let mut rest = Vec::new();
        sq.drain(&mut env, |p| rest.push(p.id));
        assert!(rest.is_empty());
    }
    // wqe_counter inside a 2-WQEBB WQE: the WQEs before it complete, that one does not.
    let mut sq = make_sq(&env, sq_params(6));
    xmit_one(&mut sq, &mut env, 0, 60, false);
    let p = Pkt::new(&mem, 1, tcp4_frame(60, 0), vec![vec![0; 9]; 4]);
    sq.xmit(p, false, &mut env).unwrap();
    assert_eq!(sq.pc(), 3);
    put(&sq, 0, tx_cqe(CQE_REQ, 2, 0));
    let (ids, r) = poll(&mut sq, &mut env);
    assert_eq!(ids, vec![0]);
    assert_eq!(r.error, Some(SqError::BadWqeCounter { wqe_counter: 2 }));
    let mut rest = Vec::new();
    sq.drain(&mut env, |p| rest.push(p.id));
    assert_eq!(rest, vec![1]);
    assert!(env.maps.is_empty());
    // An RX opcode on the TX CQ.
    let mut sq = make_sq(&env, sq_params(6));
    xmit_one(&mut sq, &mut env, 0, 60, false);
    put(&sq, 0, tx_cqe(CQE_RESP_SEND, 0, 0));
    let (ids, r) = poll(&mut sq, &mut env);
    assert!(ids.is_empty());
    assert_eq!(r.error, Some(SqError::BadOpcode { opcode: 2 }));
}

/// A CQE that names another SQ releases nothing: the SQ stops for recovery, and after the
/// CQEs are discarded and the SQ is drained and reset, it works again.
#[test]
fn cqe_for_another_sq_stops_the_sq() {
    let (_, mut env, mut sq) = sq_env(sq_params(6));
    xmit_tcp(&mut sq, &mut env, 2, 60, |_| false);
    let mut c = tx_cqe(CQE_REQ, 1, 0);
    c.set_sop_drop_qpn(SQN + 1);
    put(&sq, 0, c);
    put(&sq, 1, tx_cqe(CQE_REQ, 1, 0));
    let (ids, r) = poll(&mut sq, &mut env);
    assert!(ids.is_empty());
    assert_eq!(r.error, Some(SqError::BadSqn { sqn: SQN + 1 }));
    assert_eq!(sq.stats.cqe_bad, 1);
    // Recovery: drain (both packets back), discard the CQE left, reset.
    let mut rest = Vec::new();
    sq.drain(&mut env, |p| rest.push(p.id));
    assert_eq!(rest, vec![0, 1]);
    assert_eq!(sq.discard_cqes(&env), 1);
    sq.reset().unwrap();
    assert!(sq.error().is_none());
    xmit_one(&mut sq, &mut env, 2, 60, false);
    put(&sq, 0, tx_cqe(CQE_REQ, 0, 0));
    let (ids, r) = poll(&mut sq, &mut env);
    assert_eq!((ids, r.error), (vec![2], None));
}

/// xorshift64*: deterministic garbage.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn one_in(&mut self, n: u64) -> bool {
        self.next() % n == 0
    }
}

#[test]
fn garbage_cqs_never_release_twice() {
    let mem = HostMemory::new();
    let mut rng = Rng(0x1234_5678_9abc_def1);
    // Miri (orders of magnitude slower) runs the same checks over fewer rounds.
    const ROUNDS: u32 = if cfg!(miri) { 6 } else { 200 };
    for round in 0..ROUNDS {
        let mut env = Env::new(&mem);
        let mut p = sq_params(6);
        p.mpwqe = round % 2 == 0;
        let mut sq = make_sq(&env, p);
        let mut posted = HashSet::new();
        let mut released = HashSet::new();
        for step in 0..6 {
            let n = rng.next() % 40;
            for k in 0..n {
                let id = round * 10_000 + step * 100 + k as u32;
                let frags = if rng.one_in(3) {
                    vec![vec![1u8; 20]; (rng.next() % 5) as usize]
                } else {
                    vec![]
                };
                let pkt = Pkt::new(
                    &mem,
                    id,
                    tcp4_frame(60 + (rng.next() % 200) as usize, 0),
                    frags,
                );
                match sq.xmit(pkt, !rng.one_in(4), &mut env) {
                    Ok(()) => {
                        posted.insert(id);
                    }
                    Err(r) => assert!(matches!(
                        r.reason,
                        TxRejectReason::Busy | TxRejectReason::SqError
                    )),
                }
            }
            // The device scribbles over the whole CQ: garbage bodies, random owners, and
            // some plausible CQEs.
            let cq = sq.cq().buffer().clone();
            for slot in 0..64 {
                let mut c = [0u8; 64];
                for b in c.iter_mut() {
                    *b = rng.next() as u8;
                }
                if rng.one_in(2) {
                    let wc = sq.cc().wrapping_add((rng.next() % 70) as u16);
                    c[60..62].copy_from_slice(&wc.to_be_bytes());
                    c[63] = (c[63] & 1) | if rng.one_in(4) { 0xd0 } else { 0 };
                }
                cq.write(slot * 64, &c);
            }
            for _ in 0..3 {
                sq.poll_cq(&mut env, |p| {
                    assert!(released.insert(p.id), "double release")
                });
            }
        }
        sq.drain(&mut env, |p| {
            assert!(released.insert(p.id), "double release")
        });
        assert_eq!(posted, released, "round {round}");
        assert!(env.maps.is_empty());
        assert_eq!(sq.outstanding_pkts(), 0);
    }
}

#[test]
fn counters_wrap_u16() {
    // 70 000 single-WQEBB WQEs: pc/cc wrap past 65535 and the CQ wraps many times. Miri
    // runs the same checks over 640 (the CQ still wraps 10 times; the u16 wrap itself is
    // covered by the native run).
    const PKTS: u32 = if cfg!(miri) { 640 } else { 70_000 };
    let (mem, mut env, mut sq) = sq_env(sq_params(6));
    let frame = tcp4_frame(60, 0);
    let pkt_buf = mem.alloc_from(&frame);
    let mut next = 0u32;
    let mut done = 0u32;
    while next < PKTS {
        for k in 0..16 {
            let p = Pkt {
                id: next,
                linear: frame.clone(),
                frags: vec![],
                // Distinct addresses for the 16 packets in flight.
                lin_addr: pkt_buf.dma_addr() + u64::from(next % 16),
                frag_addr: vec![],
                gso: None,
                csum: TxCsum::None,
                vlan: None,
            };
            sq.xmit(p, k != 15, &mut env).unwrap();
            next += 1;
        }
        let last = sq.pc().wrapping_sub(1);
        put(&sq, 0, tx_cqe(CQE_REQ, last, 0));
        let mut got = 0;
        sq.poll_cq(&mut env, |p| {
            assert_eq!(p.id, done + got);
            got += 1;
        });
        done += got;
        assert_eq!(got, 16);
    }
    assert_eq!(sq.pc(), (PKTS % 65_536) as u16);
    assert_eq!(sq.cc(), sq.pc());
    assert_eq!(sq.stats.doorbells, u64::from(PKTS / 16));
    assert_eq!(env.bql_inflight, 0);
}
