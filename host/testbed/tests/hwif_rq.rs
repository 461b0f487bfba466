//! The cyclic RQ (spec C.4) and basic CQE compression (C.5): WQE layout, bulk posting with
//! one doorbell-record write per poll, CQE handling including error CQEs, hostile CQEs,
//! and decompression of title + mini-CQE arrays with the owner rewrite, across polls.

mod hwif_common;

use hwif_common::*;
use rsnic_core::hwif::hw::Coherent;
use rsnic_core::hwif::mlx5::cqe::{
    Cqe64, MiniCqe8, CQE_FORMAT_COMPRESSED, CQE_L3_OK, CQE_L4_OK, CQE_RESP_ERR, CQE_RESP_SEND,
    SYND_LOCAL_LENGTH, SYND_LOCAL_PROT,
};
use rsnic_core::hwif::mlx5::rq::{RqError, RxCompletion};
use rsnic_testbed::mem::HostMemory;

fn rx_cqe(wqe_counter: u16, len: u32) -> Cqe64 {
    let mut c = Cqe64::default();
    c.set_wqe_counter(wqe_counter);
    c.set_byte_cnt(len);
    c.set_check_sum(0xbeef);
    c.set_rss_hash_result(0x1111_2222);
    c.set_hds_ip_ext(CQE_L3_OK | CQE_L4_OK);
    c.set_op_own(CQE_RESP_SEND, 0, 0);
    c
}

/// An error CQE (RESP_ERR) for WQE `wqe_counter` with `syndrome`.
fn err_cqe(wqe_counter: u16, syndrome: u8) -> Cqe64 {
    let mut e = rx_cqe(wqe_counter, 0);
    e.set_op_own(CQE_RESP_ERR, 0, 0);
    e.set_syndrome(syndrome, 0);
    e
}

/// The title CQE of a compressed session of `count` packets, the first for WQE `first_wc`.
fn title_cqe(first_wc: u16, count: u32) -> Cqe64 {
    let mut t = rx_cqe(first_wc, count);
    t.set_op_own(CQE_RESP_SEND, CQE_FORMAT_COMPRESSED, 0);
    t
}

/// Writes `c` at CQ counter `ctr` with that pass's owner bit.
fn put(rq: &TestRq, ctr: u32, c: Cqe64) {
    put_cqe(rq.cq(), ctr, c);
}

fn dbr_writes(env: &Env) -> Vec<Vec<u8>> {
    env.log
        .borrow()
        .iter()
        .filter_map(|e| match e {
            Ev::Write("rq_dbr", 0, v) => Some(v.clone()),
            _ => None,
        })
        .collect()
}

type Got = Vec<(u32, RxCompletion)>;

/// An RQ of `2^log_sz` WQEs of one `buf_size`-byte buffer, refilled in bulks of `wqe_bulk`,
/// every WQE posted, and its environment.
fn posted_rq(log_sz: u8, buf_size: u32, wqe_bulk: u16) -> (Env, TestRq) {
    let mut env = Env::new(&HostMemory::new());
    let mut rq = make_rq(&env, log_sz, buf_size, wqe_bulk);
    rq.post(&mut env);
    (env, rq)
}

/// The (buffer id, length) of every completion.
fn ids_lens(got: &Got) -> Vec<(u32, u32)> {
    got.iter().map(|(id, c)| (*id, c.len)).collect()
}

fn napi(rq: &mut TestRq, env: &mut Env, budget: u32) -> (Got, u32) {
    let mut got = Vec::new();
    let r = rq.napi_poll(budget, env, |b, c| got.push((b.id, *c)));
    (got, r.work)
}

#[test]
fn wqe_layout_and_bulk_posting() {
    let mem = HostMemory::new();
    let mut env = Env::new(&mem);
    let mut rq = make_rq(&env, 6, 2048, 8);
    env.log.borrow_mut().clear();
    assert_eq!(rq.post(&mut env), 64);
    // One DBR write: BE32(64).
    assert_eq!(dbr_writes(&env), vec![vec![0, 0, 0, 64]]);
    // WQE 5: byte_count = 2048 | HW_START_PADDING, lkey, address of buffer 5.
    let mut want = vec![0x80, 0, 0x08, 0, 0, 0, 0x12, 0x34];
    want.extend_from_slice(&bufs_addr(&mut rq, &mut env, 5).to_be_bytes());
    assert_eq!(rq.ring().bytes(5 * 16, 16), want);
    // The ring is full: nothing more to post, no DBR write.
    assert_eq!(rq.post(&mut env), 0);
    assert_eq!(dbr_writes(&env).len(), 1);
}

/// The DMA address of the buffer posted in WQE `i`, learnt by receiving into it.
fn bufs_addr(rq: &mut TestRq, env: &mut Env, i: u16) -> u64 {
    for k in 0..=i {
        put(rq, u32::from(k), rx_cqe(k, 64));
    }
    let mut addr = 0;
    rq.poll_cq(u32::from(i) + 1, env, |b, _| addr = b.addr);
    addr
}

#[test]
fn poll_delivers_in_order_and_posts_once_per_poll() {
    let (mut env, mut rq) = posted_rq(6, 2048, 8);
    env.log.borrow_mut().clear();
    for i in 0..5u16 {
        put(&rq, u32::from(i), rx_cqe(i, 100 + u32::from(i)));
    }
    let (got, work) = napi(&mut rq, &mut env, 64);
    assert_eq!(work, 5);
    assert_eq!(
        ids_lens(&got),
        vec![(0, 100), (1, 101), (2, 102), (3, 103), (4, 104)]
    );
    let c = got[0].1;
    assert_eq!(
        (c.csum, c.hash, c.hds_ip_ext, c.decompressed),
        (0xbeef, 0x1111_2222, 6, false)
    );
    // 5 missing < bulk 8: no refill, no DBR write.
    assert!(dbr_writes(&env).is_empty());
    for i in 5..10u16 {
        put(&rq, u32::from(i), rx_cqe(i, 60));
    }
    let (got, _) = napi(&mut rq, &mut env, 64);
    assert_eq!(got.len(), 5);
    // 10 missing: one refill of 10, one DBR write = 74.
    assert_eq!(dbr_writes(&env), vec![vec![0, 0, 0, 74]]);
    assert_eq!(rq.stats.dbr_writes, 2);
    assert_eq!((rq.stats.packets, rq.stats.bytes), (10, 510 + 300));
    // set_ci followed the consumer.
    assert_eq!(rq.cq().cc(), 10);
    // An empty poll writes nothing.
    env.log.borrow_mut().clear();
    let (got, work) = napi(&mut rq, &mut env, 64);
    assert!(got.is_empty() && work == 0);
    assert!(dbr_writes(&env).is_empty());
}

#[test]
fn budget_and_cq_wrap() {
    let (mut env, mut rq) = posted_rq(4, 256, 1);
    let mut ctr = 0u32;
    let mut next_id = 0u32;
    // 10 rounds of 16 packets, polled with budget 8: the CQ (16 entries) wraps 10 times.
    for _ in 0..10 {
        for _ in 0..16 {
            put(&rq, ctr, rx_cqe(ctr as u16, 64));
            ctr += 1;
        }
        for _ in 0..2 {
            let (got, work) = napi(&mut rq, &mut env, 8);
            assert_eq!(work, 8);
            for (id, _) in got {
                // Buffers come back in posting order.
                assert_eq!(id, next_id);
                next_id += 1;
            }
        }
    }
    assert_eq!(rq.stats.packets, 160);
    assert_eq!(rq.outstanding(), 16);
}

#[test]
fn error_cqes_and_hostile_cqes() {
    let (mut env, mut rq) = posted_rq(4, 256, 1);
    // RESP_ERR: counted, buffer recycled.
    put(&rq, 0, err_cqe(0, SYND_LOCAL_LENGTH));
    // byte_cnt larger than the buffer: dropped, recycled, counted.
    put(&rq, 1, rx_cqe(1, 257));
    // byte_cnt 0.
    put(&rq, 2, rx_cqe(2, 0));
    // A good one.
    put(&rq, 3, rx_cqe(3, 256));
    let (got, work) = napi(&mut rq, &mut env, 64);
    assert_eq!(work, 4);
    assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), vec![3]);
    assert_eq!(rq.stats.wqe_err, 1);
    assert_eq!(rq.stats.cqe_bad, 2);
    assert_eq!(env.rx_recycled, vec![0, 1, 2]);
    assert!(rq.error().is_none());
    // wqe_counter not the expected one: nothing delivered, error state, no more polling.
    put(&rq, 4, rx_cqe(9, 64));
    put(&rq, 5, rx_cqe(5, 64));
    let (got, _) = napi(&mut rq, &mut env, 64);
    assert!(got.is_empty());
    assert_eq!(
        rq.error(),
        Some(RqError::BadWqeCounter {
            got: 9,
            expected: 4
        })
    );
    let (got, work) = napi(&mut rq, &mut env, 64);
    assert!(got.is_empty() && work == 0);
    // Drain gives back every posted buffer exactly once.
    env.rx_recycled.clear();
    let n = rq.drain(&mut env);
    assert_eq!(n, 16);
    let mut ids = env.rx_recycled.clone();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 16);
    rq.reset().unwrap();
    assert_eq!((rq.wqe_ctr(), rq.cc(), rq.error()), (0, 0, None));
}

#[test]
fn allocation_failure_counts_and_retries() {
    let mem = HostMemory::new();
    let mut env = Env::new(&mem);
    env.rx_fail_after = Some(10);
    let mut rq = make_rq(&env, 4, 256, 1);
    assert!(!rq.short());
    assert_eq!(rq.post(&mut env), 10);
    assert_eq!(rq.stats.buff_alloc_err, 1);
    // The RQ says it is short, so that NAPI polls again (mlx5e's busy).
    assert!(rq.short());
    env.rx_fail_after = None;
    assert_eq!(rq.post(&mut env), 6);
    assert_eq!(rq.outstanding(), 16);
    assert!(!rq.short());
    // An empty RQ whose first allocation fails posts nothing and stays short; a NAPI round
    // (no CQE to read) posts the buffers once they can be had.
    let mut rq = make_rq(&env, 4, 256, 1);
    env.rx_fail_after = Some(0);
    assert_eq!(rq.post(&mut env), 0);
    assert!(rq.short() && rq.outstanding() == 0);
    env.rx_fail_after = None;
    let r = rq.napi_poll(64, &mut env, |_, _| {});
    assert_eq!(
        (r.work, r.posted, rq.outstanding(), rq.short()),
        (0, 16, 16, false)
    );
}

/// Writes a basic compressed session at CQ counter `c`: mini arrays at c+1 and c+8j, title
/// at c (written last, as the device does). Array slots get a garbage owner byte.
fn put_session(rq: &TestRq, c: u32, first_wc: u16, lens: &[u32]) {
    let n = lens.len();
    let cq = rq.cq().buffer();
    let size = rq.cq().size();
    for j in 0..n.div_ceil(8) {
        let mut arr = [0u8; 64];
        for k in 0..8 {
            if let Some(&l) = lens.get(8 * j + k) {
                let m = MiniCqe8::with_checksum(0x1000 + (8 * j + k) as u16, l);
                arr[k * 8..k * 8 + 8].copy_from_slice(&m.0);
            }
        }
        let slot = c + if j == 0 { 1 } else { 8 * j as u32 };
        cq.write(((slot & (size - 1)) * 64) as usize, &arr);
    }
    put(rq, c, title_cqe(first_wc, n as u32));
}

#[test]
fn decompression_across_polls_with_owner_rewrite() {
    let (mut env, mut rq) = posted_rq(5, 2048, 1);
    // One plain CQE, then a session of 10 at CQ index 1 (arrays at 2 and 9).
    put(&rq, 0, rx_cqe(0, 1000));
    let lens: Vec<u32> = (0..10).map(|k| 200 + k).collect();
    put_session(&rq, 1, 1, &lens);
    // A plain CQE after the session, at index 11.
    put(&rq, 11, rx_cqe(11, 1500));
    // Budget 4: the plain one and 3 of the session.
    let (got, work) = napi(&mut rq, &mut env, 4);
    assert_eq!(work, 4);
    assert_eq!(
        ids_lens(&got),
        vec![(0, 1000), (1, 200), (2, 201), (3, 202)]
    );
    // The session's first packet is the title's: it keeps the title's RSS hash
    // (mlx5e_decompress_cqes_start); the others get none (mlx5e_decompress_cqe_no_hash).
    let c = got[1].1;
    assert!(c.decompressed);
    assert_eq!(
        (c.csum, c.hash, c.hds_ip_ext),
        (0x1000, 0x1111_2222, CQE_L3_OK | CQE_L4_OK)
    );
    let c = got[2].1;
    assert_eq!(
        (c.csum, c.hash, c.hash_type, c.hds_ip_ext),
        (0x1001, 0, 0, CQE_L3_OK | CQE_L4_OK)
    );
    assert_eq!(rq.decompress_left(), 7);
    // The plain CQE is left alone; the consumed session slots 1..3 (the array slot 2
    // among them) now read op_own 0: opcode 0, owner of pass 0.
    let cqb = rq.cq().buffer().clone();
    assert_eq!(cqb.bytes(63, 1), vec![0x20]);
    for s in 1..4 {
        assert_eq!(cqb.bytes(s * 64 + 63, 1), vec![0]);
    }
    // Next poll: the remaining 7 (crossing into the array at slot 9), then the plain CQE.
    let (got, work) = napi(&mut rq, &mut env, 64);
    assert_eq!(work, 8);
    assert_eq!(
        ids_lens(&got),
        vec![
            (4, 203),
            (5, 204),
            (6, 205),
            (7, 206),
            (8, 207),
            (9, 208),
            (10, 209),
            (11, 1500)
        ]
    );
    assert_eq!(got[5].1.csum, 0x1008);
    // The session's packets after its first have no hash across the polls too; the plain
    // CQE after it has its own.
    assert!(got[..7].iter().all(|(_, c)| c.hash == 0 && c.decompressed));
    assert_eq!(got[7].1.hash, 0x1111_2222);
    assert_eq!(rq.stats.cqe_compress_blks, 1);
    assert_eq!(rq.stats.cqe_compress_pkts, 10);
    assert_eq!(rq.stats.packets, 12);
    assert_eq!(rq.cq().cc(), 12);
    for s in 1..11 {
        assert_eq!(cqb.bytes(s * 64 + 63, 1), vec![0], "slot {s}");
    }
}

#[test]
fn decompression_on_second_pass_and_bad_sessions() {
    let (mut env, mut rq) = posted_rq(3, 2048, 1);
    // Pass 0: 6 plain CQEs.
    for i in 0..6u16 {
        put(&rq, u32::from(i), rx_cqe(i, 64));
    }
    assert_eq!(napi(&mut rq, &mut env, 64).0.len(), 6);
    // A session of 5 at index 6: wraps the 8-entry CQ (slots 6, 7, 0, 1, 2), owner 0 then 1.
    put_session(&rq, 6, 6, &[70, 71, 72, 73, 74]);
    let (got, _) = napi(&mut rq, &mut env, 64);
    assert_eq!(
        ids_lens(&got),
        vec![(6, 70), (7, 71), (8, 72), (9, 73), (10, 74)]
    );
    let cqb = rq.cq().buffer().clone();
    assert_eq!(cqb.bytes(6 * 64 + 63, 1), vec![0]);
    assert_eq!(cqb.bytes(7 * 64 + 63, 1), vec![0]);
    for s in 0..3 {
        assert_eq!(cqb.bytes(s * 64 + 63, 1), vec![1], "slot {s} on pass 1");
    }
    // A session claiming more packets than are posted: error, nothing delivered.
    put_session(&rq, 11, 11, &[1; 9]);
    let (got, _) = napi(&mut rq, &mut env, 64);
    assert!(got.is_empty());
    assert_eq!(rq.error(), Some(RqError::BadSession { count: 9 }));
    // A session of 0.
    let mut rq = make_rq(&env, 3, 2048, 1);
    rq.post(&mut env);
    put(&rq, 0, title_cqe(0, 0));
    let (got, _) = napi(&mut rq, &mut env, 64);
    assert!(got.is_empty());
    assert_eq!(rq.error(), Some(RqError::BadSession { count: 0 }));
}

#[test]
fn garbage_rx_cqs_never_deliver_twice() {
    let mem = HostMemory::new();
    let mut rnd = rsnic_testbed::fixtures::xorshift64(0x9e37_79b9_7f4a_7c15u64);
    // Miri (orders of magnitude slower) runs the same checks over fewer rounds.
    const ROUNDS: u32 = if cfg!(miri) { 6 } else { 100 };
    for _round in 0..ROUNDS {
        let mut env = Env::new(&mem);
        let mut rq = make_rq(&env, 4, 512, 1);
        rq.post(&mut env);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..5 {
            let cq = rq.cq().buffer().clone();
            for slot in 0..16usize {
                let mut c = [0u8; 64];
                for b in c.iter_mut() {
                    *b = rnd() as u8;
                }
                if rnd() % 2 == 0 {
                    // Plausible: expected counter, RESP_SEND or compressed, small counts.
                    let wc = rq.cc().wrapping_add((rnd() % 3) as u16);
                    c[60..62].copy_from_slice(&wc.to_be_bytes());
                    c[44..48].copy_from_slice(&((rnd() % 600) as u32).to_be_bytes());
                    c[63] = (c[63] & 1) | (2 << 4) | if rnd() % 3 == 0 { 0x0c } else { 0 };
                }
                cq.write(slot * 64, &c);
            }
            for _ in 0..3 {
                rq.napi_poll((rnd() % 20) as u32, &mut env, |b, c| {
                    assert!(c.len >= 1 && c.len <= 512);
                    assert!(seen.insert(b.id), "buffer delivered twice");
                });
            }
        }
        let n = rq.drain(&mut env);
        // Every buffer ever allocated is delivered, recycled or drained: exactly once.
        let mut all: Vec<u32> = seen.iter().copied().collect();
        all.extend(env.rx_recycled.iter().copied());
        all.sort();
        let len = all.len();
        all.dedup();
        assert_eq!(all.len(), len, "a buffer came back twice");
        assert_eq!(len as u32, env.rx_allocs);
        assert!(n <= 16);
    }
}

/// An RQ stopped on a fault must not leave CQEs in its CQ: a CQ armed with CQEs beyond its
/// consumer index fires at once, and NAPI and the interrupt would chase each other forever.
/// The poll of a stopped RQ consumes what the device wrote (without touching a buffer), so
/// the arm that follows is past it.
#[test]
fn stopped_rq_consumes_its_cqes_so_the_arm_does_not_fire_again() {
    let (mut env, mut rq) = posted_rq(4, 256, 1);
    // A corrupt CQE (wrong wqe_counter), then three more the device goes on writing.
    put(&rq, 0, rx_cqe(5, 64));
    for i in 1..4 {
        put(&rq, i, rx_cqe(i as u16, 64));
    }
    let (got, work) = napi(&mut rq, &mut env, 64);
    assert!(got.is_empty() && work == 1);
    assert!(matches!(
        rq.error(),
        Some(RqError::BadWqeCounter { got: 5, .. })
    ));
    // The next poll (NAPI runs again, or the interrupt fired) consumes the rest.
    let (got, work) = napi(&mut rq, &mut env, 64);
    assert!(got.is_empty() && work == 0);
    assert_eq!(rq.cq().cc(), 4, "every CQE the device wrote is consumed");
    assert_eq!(rq.stats.cqe_discarded, 3);
    assert!(
        env.rx_recycled.is_empty(),
        "no buffer is touched before the drain"
    );
    // Nothing left: another poll consumes nothing.
    napi(&mut rq, &mut env, 64);
    assert_eq!((rq.cq().cc(), rq.stats.cqe_discarded), (4, 3));
    // Recovery: drain, reset, post again.
    assert_eq!(rq.drain(&mut env), 16);
    rq.reset().unwrap();
    assert_eq!(rq.post(&mut env), 16);
    put(&rq, 4, rx_cqe(0, 64));
    let (got, _) = napi(&mut rq, &mut env, 64);
    assert_eq!(got.len(), 1);
    assert!(rq.error().is_none());
}

/// An error CQE whose syndrome stops the device's RQ (LOCAL_PROT) stops the RQ for
/// recovery; LOCAL_LENGTH (a frame too long) does not.
#[test]
fn error_cqe_syndromes_that_need_recovery_stop_the_rq() {
    let (mut env, mut rq) = posted_rq(4, 256, 1);
    put(&rq, 0, err_cqe(0, SYND_LOCAL_LENGTH));
    put(&rq, 1, err_cqe(1, SYND_LOCAL_PROT));
    put(&rq, 2, rx_cqe(2, 64));
    let (got, work) = napi(&mut rq, &mut env, 64);
    assert!(got.is_empty());
    assert_eq!(work, 2);
    assert_eq!(rq.stats.wqe_err, 2);
    assert_eq!(
        rq.error(),
        Some(RqError::ErrCqe {
            syndrome: SYND_LOCAL_PROT,
            wqe_counter: 1
        })
    );
    assert_eq!(env.rx_recycled, vec![0, 1]);
}

/// The buffer addresses in the first `segs` data segments of WQE `ix` (64-byte stride).
fn seg_addrs(rq: &TestRq, ix: usize, segs: usize) -> Vec<u64> {
    let wqe = rq.ring().bytes(ix * 64, 64);
    (0..segs)
        .map(|j| u64::from_be_bytes(wqe[j * 16 + 8..j * 16 + 16].try_into().unwrap()))
        .collect()
}

/// RX scatter: a WQE of three 1000-byte buffers (four data segments, the last terminating
/// the list); a packet takes as many buffers as its length needs, the others stay posted
/// and are not reallocated; a packet longer than the WQE's buffers is refused.
#[test]
fn scatter_wqes_take_as_many_buffers_as_the_packet_needs() {
    let mem = HostMemory::new();
    let mut env = Env::new(&mem);
    let mut rq = make_rq_segs(&env, 2, 1000, 3, 1);
    assert_eq!(rq.post(&mut env), 4);
    assert_eq!(env.rx_allocs, 12, "three buffers per WQE");
    // WQE 1 (64-byte stride): three segments of 1000 | HW_START_PADDING, then byte count 0
    // with the terminating lkey 0x100.
    let wqe = rq.ring().bytes(64, 64);
    for j in 0..3 {
        assert_eq!(
            wqe[j * 16..j * 16 + 8],
            [0x80, 0, 0x03, 0xe8, 0, 0, 0x12, 0x34]
        );
    }
    assert_eq!(wqe[48..56], [0, 0, 0, 0, 0, 0, 0x01, 0x00]);
    let addrs = seg_addrs(&rq, 1, 3);

    // WQE 0: 2500 bytes over three buffers (1000 + 1000 + 500); WQE 1: 900 bytes in its
    // first; WQE 2: 1001 bytes in two; WQE 3: 3001 bytes, more than its buffers.
    for (k, len) in [2500, 900, 1001, 3001].into_iter().enumerate() {
        put(&rq, k as u32, rx_cqe(k as u16, len));
    }
    let mut got = Vec::new();
    let r = rq.napi_poll_frags(16, &mut env, |b, c, frags| {
        let mut parts = vec![(b.id, c.len - frags.bytes())];
        parts.extend(frags.map(|(f, len)| (f.id, len)));
        got.push((c.len, parts));
    });
    assert_eq!(r.work, 4);
    assert_eq!(
        got,
        vec![
            (2500, vec![(0, 1000), (1, 1000), (2, 500)]),
            (900, vec![(3, 900)]),
            (1001, vec![(6, 1000), (7, 1)]),
        ]
    );
    assert_eq!(rq.stats.scatter_pkts, 2);
    assert_eq!(rq.stats.packets, 3);
    assert_eq!(rq.stats.cqe_bad, 1, "3001 bytes do not fit 3 x 1000");
    assert_eq!(
        env.rx_recycled,
        vec![9],
        "the refused packet's first buffer"
    );
    // The poll re-posted the four WQEs with a new buffer only where one was taken:
    // 3 + 1 + 2 + 1 = 7 allocations; WQE 1 keeps its second and third buffers.
    assert_eq!(r.posted, 4);
    assert_eq!(env.rx_allocs, 12 + 7);
    let now = seg_addrs(&rq, 1, 3);
    assert_ne!(
        now[0], addrs[0],
        "WQE 1's first buffer was delivered and replaced"
    );
    assert_eq!(now[1..], addrs[1..], "WQE 1's unused buffers stay posted");
    // Teardown gives back every posted buffer: 4 WQEs x 3.
    assert_eq!(rq.drain(&mut env), 12);
}

/// A packet whose further buffers are not all taken by the consumer (it stopped early)
/// leaves them posted: nothing is lost and nothing is allocated twice.
#[test]
fn scatter_fragments_not_taken_stay_posted() {
    let mem = HostMemory::new();
    let mut env = Env::new(&mem);
    let mut rq = make_rq_segs(&env, 1, 512, 4, 1);
    assert_eq!(rq.post(&mut env), 2);
    assert_eq!(env.rx_allocs, 8);
    put(&rq, 0, rx_cqe(0, 2048));
    let mut taken = Vec::new();
    rq.napi_poll_frags(4, &mut env, |b, _, mut frags| {
        taken.push(b.id);
        taken.extend(frags.next().map(|(f, _)| f.id));
    });
    assert_eq!(taken, vec![0, 1]);
    assert_eq!(
        env.rx_allocs,
        8 + 2,
        "only the two buffers taken were replaced"
    );
    assert!(env.rx_recycled.is_empty());
    assert_eq!(rq.drain(&mut env), 8);
}
