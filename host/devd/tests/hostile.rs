//! A hostile driver: a ConnectX and a MANA device driven through the ring (register writes
//! in BAR2, as the guest posts them) with garbage descriptors and bus addresses outside
//! guest RAM. The models answer with error CQEs (or count a DMA fault when the CQ itself is
//! outside RAM), and nothing outside guest RAM (a canary right after it) nor inside it
//! outside the queues' own CQ buffers is ever written.
//!
//! Queues are created through the models' control API (as the host test bed's sim_* and
//! mana_device tests do); the data path's doorbells go through the ring.

mod common;

use common::*;
use rsnic_core::dp::mana::fmt::{sq_doorbell, Cqe, Sge, TxOob, WqeHeader, DB_SQ};
use rsnic_core::dp::xport::{Family, OP_WRITE64};
use rsnic_core::sim::mana::doorbell_offset;
use rsnic_core::sim::mlx5::{api_uar_offset, CqConfig, SqConfig, SQ_DOORBELL};
use rsnic_devd::ring::GuestRing;
use rsnic_devd::Devd;

const RAM: u64 = 4 << 20;
const CQ: u64 = 0x10000;
const CQ_DBR: u64 = 0x20000;
const SQ: u64 = 0x30000;
const SQ_DBR: u64 = 0x40000;
const MANA_EQ: u64 = 0x50000;

/// Runs devd until the ring is empty and the model idle.
fn settle(d: &mut Devd) {
    for _ in 0..1000 {
        let p = d.work();
        if p.drained == 0 && !p.more {
            return;
        }
    }
    panic!("device never went idle");
}

/// Posts a 64-bit register write through the ring.
fn ring_write64(d: &Devd, reg: u32, bytes: [u8; 8]) {
    let g = GuestRing::new(d.bar2().mapping()).unwrap();
    g.push(OP_WRITE64, reg, u64::from_le_bytes(bytes)).unwrap();
}

fn zero(d: &Devd, addr: u64, len: usize) {
    assert!(d.ram().mapping().write(addr as usize, &vec![0u8; len]));
}

fn put(d: &Devd, addr: u64, b: &[u8]) {
    assert!(d.ram().mapping().write(addr as usize, b));
}

fn get<const N: usize>(d: &Devd, addr: u64) -> [u8; N] {
    let mut b = [0u8; N];
    assert!(d.ram().mapping().read(addr as usize, &mut b));
    b
}

/// Every byte that changed lies in one of `allowed` (`[start, end)`), the canary none.
fn only_changed(before: &[u8], d: &Devd, allowed: &[(u64, u64)]) {
    let after = snapshot(d.ram().mapping());
    for (s, e) in diff_ranges(before, &after) {
        assert!(
            allowed
                .iter()
                .any(|&(a, b)| a as usize <= s && e <= b as usize),
            "device wrote {s:#x}..{e:#x} (allowed {allowed:x?})"
        );
    }
    assert!(after[RAM as usize..].iter().all(|&b| b == CANARY_BYTE));
}

/// A deterministic byte stream (xorshift).
fn garbage(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

// ConnectX.

const OP_SEND: u32 = 0x0a;
const CQ_UPDATE: u8 = 0x08;
const CQE_REQ_ERR: u8 = 13;

/// ConnectX port 0 with a TX CQ (64 entries at `cq`) and an SQ (64 WQEBBs at [`SQ`]).
fn mlx5(tag: &str, cq: u64) -> (Tmp, Devd, u32) {
    let t = Tmp::new(tag);
    let mut d = devd(t.path(), Family::Mlx5, 2, RAM);
    zero(&d, CQ, 64 * 64);
    for i in 0..64 {
        // Hardware-owned (owner 1, invalid opcode), as mlx5e initialises its CQs.
        put(&d, CQ + i * 64 + 63, &[0xf1]);
    }
    zero(&d, CQ_DBR, 8);
    zero(&d, SQ, 64 * 64);
    zero(&d, SQ_DBR, 8);
    let m = d.model().mlx5().unwrap();
    m.set_link(0, true).unwrap();
    m.set_link(1, true).unwrap();
    let cqn = m
        .create_cq(&CqConfig {
            port: 0,
            buf: cq,
            log_size: 6,
            dbr: CQ_DBR,
            vector: 1,
            compress: false,
        })
        .unwrap();
    let sqn = m
        .create_sq(&SqConfig {
            port: 0,
            buf: SQ,
            log_size: 6,
            dbr: SQ_DBR,
            cqn,
        })
        .unwrap();
    (t, d, sqn)
}

fn mlx5_ctrl(opcode: u32, idx: u16, sqn: u32, ds: u32) -> [u8; 16] {
    let mut c = [0u8; 16];
    c[0..4].copy_from_slice(&((u32::from(idx) << 8) | opcode).to_be_bytes());
    c[4..8].copy_from_slice(&((sqn << 8) | (ds & 0x3f)).to_be_bytes());
    c[11] = CQ_UPDATE;
    c
}

/// Posts a SEND of one data segment (`len` bytes at `addr`) at SQ index 0 (WQE and doorbell
/// record); returns its control segment for [`mlx5_ring`].
fn mlx5_post(d: &Devd, sqn: u32, addr: u64, len: u32) -> [u8; 16] {
    let ctrl = mlx5_ctrl(OP_SEND, 0, sqn, 3);
    let mut w = ctrl.to_vec();
    w.extend_from_slice(&[0u8; 16]);
    w.extend_from_slice(&len.to_be_bytes());
    w.extend_from_slice(&0x1234u32.to_be_bytes());
    w.extend_from_slice(&addr.to_be_bytes());
    put(d, SQ, &w);
    put(d, SQ_DBR + 4, &1u32.to_be_bytes());
    ctrl
}

/// The SQ doorbell (the first 8 bytes of `ctrl`), written through the ring.
fn mlx5_ring(d: &Devd, ctrl: &[u8]) {
    let mut b = [0u8; 8];
    b.copy_from_slice(&ctrl[..8]);
    ring_write64(d, api_uar_offset(0) + SQ_DOORBELL, b);
}

#[test]
fn mlx5_send_from_outside_ram_gets_an_error_cqe() {
    for addr in [RAM - 8, RAM, RAM + 0x1000, u64::MAX - 15, 1 << 63] {
        let (_t, mut d, sqn) = mlx5("hostile-cx", CQ);
        let ctrl = mlx5_post(&d, sqn, addr, 64);
        let before = snapshot(d.ram().mapping());
        mlx5_ring(&d, &ctrl);
        settle(&mut d);
        let cqe: [u8; 64] = get(&d, CQ);
        assert_eq!(cqe[63] >> 4, CQE_REQ_ERR, "addr {addr:#x}: {cqe:x?}");
        assert_eq!(cqe[63] & 1, 0, "software-owned on the first pass");
        assert!(d.model().mlx5().unwrap().counters(0).unwrap().wqe_errors >= 1);
        only_changed(&before, &d, &[(CQ, CQ + 64 * 64)]);
    }
}

#[test]
fn mlx5_garbage_wqes_never_write_outside_the_cq() {
    for seed in 1..=16u64 {
        let (_t, mut d, sqn) = mlx5("hostile-cx-garbage", CQ);
        let mut w = garbage(seed, 64 * 4);
        // Half of them name the right SQ, so that they get past the queue lookup.
        if seed % 2 == 0 {
            w[4..7].copy_from_slice(&sqn.to_be_bytes()[1..]);
        }
        put(&d, SQ, &w);
        put(&d, SQ_DBR + 4, &(1 + seed as u32 % 4).to_be_bytes());
        let before = snapshot(d.ram().mapping());
        mlx5_ring(&d, &w[..8]);
        settle(&mut d);
        only_changed(&before, &d, &[(CQ, CQ + 64 * 64)]);
        let c = *d.model().mlx5().unwrap().counters(0).unwrap();
        let cqe: [u8; 64] = get(&d, CQ);
        // Either the doorbell was refused, or what executed was completed or is an error.
        assert!(
            c.bad_doorbells > 0 || c.wqe_errors > 0 || c.wqes > 0 || cqe[63] >> 4 == CQE_REQ_ERR,
            "seed {seed}: {c:?}"
        );
    }
}

#[test]
fn mlx5_cq_outside_ram_is_a_dma_fault_and_nothing_is_written() {
    for cq in [RAM, RAM - 64 * 63, u64::MAX - 63] {
        let (_t, mut d, sqn) = mlx5("hostile-cx-cq", cq);
        // A good send: 60 bytes of RAM inside it.
        let ctrl = mlx5_post(&d, sqn, 0x60000, 60);
        let before = snapshot(d.ram().mapping());
        mlx5_ring(&d, &ctrl);
        settle(&mut d);
        let c = *d.model().mlx5().unwrap().counters(0).unwrap();
        if cq == RAM - 64 * 63 {
            // Slot 0 lies inside RAM, the rest outside: the CQE lands in RAM.
            only_changed(&before, &d, &[(cq, RAM)]);
        } else {
            assert!(c.dma_faults >= 1, "cq {cq:#x}: {c:?}");
            only_changed(&before, &d, &[]);
        }
    }
}

// MANA.

const CQE_TX_HDR_PROCESSING_ERROR: u8 = 37;
/// `sim::mana::WqeError::ReadFault` as the CQE's vendor_err.
const VENDOR_READ_FAULT: u32 = 9;

/// MANA port 0 with an EQ, a CQ of 8 entries at `cq` and a 4 KiB SQ at [`SQ`].
fn mana(tag: &str, cq: u64) -> (Tmp, Devd, u32, u32) {
    let t = Tmp::new(tag);
    let mut d = devd(t.path(), Family::Mana, 2, RAM);
    zero(&d, MANA_EQ, 16 * 16);
    zero(&d, CQ, 8 * 64);
    zero(&d, SQ, 4096);
    let m = d.model().mana().unwrap();
    let eq = m.create_eq(0, MANA_EQ, 16, 5).unwrap();
    let cq_id = m.create_cq(0, cq, 8, Some(eq)).unwrap();
    let sq_id = m.create_sq(0, SQ, 4096, cq_id).unwrap();
    (t, d, cq_id, sq_id)
}

/// Posts a one-SGE send (`size` bytes at `addr`) at SQ offset 0; [`mana_ring`] rings it.
fn mana_post(d: &Devd, cq_id: u32, addr: u64, size: u32) {
    let h = WqeHeader {
        num_sge: 1,
        inline_oob_size_div4: 2,
        ..WqeHeader::default()
    };
    let oob = TxOob {
        vcq_num: cq_id,
        ..TxOob::default()
    };
    put(d, SQ, &h.encode());
    put(d, SQ + 8, &oob.encode_short());
    let sge = Sge {
        address: addr,
        mem_key: rsnic_core::sim::mana::MANA_MKEY,
        size,
    };
    put(d, SQ + 16, &sge.encode());
}

/// The SQ doorbell (tail 32: one WQE), written through the ring.
fn mana_ring(d: &Devd, sq_id: u32) {
    ring_write64(
        d,
        doorbell_offset(0, DB_SQ),
        sq_doorbell(sq_id, 32).to_le_bytes(),
    );
}

#[test]
fn mana_send_from_outside_ram_gets_an_error_cqe() {
    for addr in [RAM - 8, RAM, u64::MAX - 15, 1 << 63] {
        let (_t, mut d, cq_id, sq_id) = mana("hostile-mana", CQ);
        mana_post(&d, cq_id, addr, 64);
        let before = snapshot(d.ram().mapping());
        mana_ring(&d, sq_id);
        settle(&mut d);
        let c = Cqe::decode(&get(&d, CQ));
        assert_eq!((c.wq_num, c.is_sq, c.owner), (sq_id, true, 1), "{addr:#x}");
        assert_eq!(
            (c.header().cqe_type, c.header().vendor_err),
            (CQE_TX_HDR_PROCESSING_ERROR, VENDOR_READ_FAULT),
            "addr {addr:#x}"
        );
        only_changed(&before, &d, &[(CQ, CQ + 8 * 64)]);
    }
}

#[test]
fn mana_garbage_wqes_never_write_outside_the_cq_and_eq() {
    for seed in 1..=16u64 {
        let (_t, mut d, _cq_id, sq_id) = mana("hostile-mana-garbage", CQ);
        put(&d, SQ, &garbage(seed, 256));
        let before = snapshot(d.ram().mapping());
        ring_write64(
            &d,
            doorbell_offset(0, DB_SQ),
            sq_doorbell(sq_id, 32 * (1 + seed as u32 % 8)).to_le_bytes(),
        );
        settle(&mut d);
        only_changed(&before, &d, &[(CQ, CQ + 8 * 64), (MANA_EQ, MANA_EQ + 256)]);
    }
}

#[test]
fn mana_cq_outside_ram_is_a_dma_fault_and_nothing_is_written() {
    for cq in [RAM, u64::MAX - 63] {
        let (_t, mut d, cq_id, sq_id) = mana("hostile-mana-cq", cq);
        let mut frame = [0u8; 64];
        frame[12..14].copy_from_slice(&[0x88, 0xb5]);
        put(&d, 0x60000, &frame);
        mana_post(&d, cq_id, 0x60000, 64);
        let before = snapshot(d.ram().mapping());
        mana_ring(&d, sq_id);
        settle(&mut d);
        let c = *d.model().mana().unwrap().counters(0).unwrap();
        assert!(c.dma_faults >= 1, "cq {cq:#x}: {c:?}");
        only_changed(&before, &d, &[]);
    }
}
