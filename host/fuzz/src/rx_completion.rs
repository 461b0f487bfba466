// SPDX-License-Identifier: GPL-2.0

//! The driver-side RQ against a hostile device.
//!
//! The input configures an RQ (ring size, buffer size, buffers per WQE, posting bulk), then
//! runs a program:
//! post and poll with budgets (buffer allocation may fail), write CQEs (plausible ones for
//! the next WQE, error CQEs, compressed sessions with arbitrary counts and mini-CQE arrays,
//! and arbitrary bytes), poke single bytes, recover (drain + reset), arm.
//!
//! Invariants checked:
//! * nothing panics and no host DMA buffer is accessed out of bounds;
//! * a buffer is delivered or recycled at most once, and only while the RQ holds it (the
//!   environment's check, [`Env`]);
//! * a delivered length is 1..=buffer size, for the first buffer and for each further one
//!   of a scattered packet (the consumer takes all, some or none of them, as the input
//!   says); a packet's parts add up to its length and are at most the WQE's buffers;
//! * the RQ holds every buffer of its outstanding WQEs (`wqe_ctr − cc`, all their slots
//!   filled) and at most a ring's worth; with one buffer per WQE exactly those; the work
//!   reported by a poll is at most its budget;
//! * at the end, after drain and reset, every buffer came back exactly once, and the RQ
//!   works again: it posts a full ring and delivers a valid CQE's buffer.

use rsnic_core::hwif::mlx5::cq::Cq;
use rsnic_core::hwif::mlx5::cqe::{
    off, Cqe64, CQE_FORMAT_COMPRESSED, CQE_RESP_ERR, CQE_RESP_SEND, MINI_CQE_ARRAY_SIZE,
};
use rsnic_core::hwif::mlx5::rq::{Rq, RqParams, RxCompletion, RxFrags};
use rsnic_testbed::mem::{HostBuf, HostMemory};
use rsnic_testbed::pair::new_vec_rq;

use crate::env::{pick_len, poke_cq, raw_cqe, Env, Mlx5Cq, RxBuf, RxSt as St};
use crate::Input;

type FuzzRq = Rq<RxBuf, HostBuf, Vec<Option<RxBuf>>>;

struct Harness {
    rq: FuzzRq,
    env: Env,
    cqbuf: HostBuf,
    cq_log: u8,
    buf_size: u32,
    segs: u8,
    /// How many further buffers of a scattered packet the consumer takes (255: all).
    take: u8,
}

impl Harness {
    /// Polls (and posts, for a NAPI round); returns the number of deliveries.
    fn poll(&mut self, budget: u32, post: bool) -> u32 {
        let Self {
            rq,
            env,
            buf_size,
            segs,
            take,
            ..
        } = self;
        let mut got = Vec::new();
        let deliver = |b, c: &RxCompletion, frags: RxFrags<'_, RxBuf>| {
            let mut parts = vec![(b, c.len - frags.bytes())];
            let all = frags.bytes();
            let mut taken = 0;
            for (f, len) in frags.take(usize::from(*take)) {
                taken += len;
                parts.push((f, len));
            }
            got.push((c.len, parts, taken, all));
        };
        let work = if post {
            rq.napi_poll_frags(budget, env, deliver).work
        } else {
            rq.poll_cq_frags(budget, env, deliver)
        };
        assert!(work <= budget, "poll did {work} work with budget {budget}");
        assert!(got.len() as u32 <= work, "more deliveries than work");
        let n = got.len() as u32;
        for (len, parts, taken, all) in got {
            assert!(parts.len() <= usize::from(*segs), "more parts than buffers");
            if usize::from(*take) >= usize::from(*segs) {
                assert_eq!(taken, all, "the further buffers hold less than announced");
                assert_eq!(
                    parts.iter().map(|p| p.1).sum::<u32>(),
                    len,
                    "parts do not add up"
                );
            }
            for (b, l) in parts {
                env.deliver(b, l, *buf_size);
            }
        }
        n
    }

    /// The CQ as the hostile device writes it.
    fn hw_cq(&self) -> Mlx5Cq<'_> {
        Mlx5Cq {
            buf: &self.cqbuf,
            log: self.cq_log,
        }
    }

    fn structured_cqe(&mut self, inp: &mut Input<'_>) {
        let sel = inp.u8();
        let ctr = self.rq.cq().cc().wrapping_add(u32::from(sel & 3));
        let owner = self.rq.cq().parity(ctr) ^ u8::from(sel & 4 != 0);
        let opcode = match (sel >> 3) & 7 {
            0..=4 => CQE_RESP_SEND,
            5 => CQE_RESP_ERR,
            _ => inp.u8() & 0xf,
        };
        let wsel = inp.u8();
        let wc = match wsel & 3 {
            0 | 1 => self.rq.cc(),
            2 => self
                .rq
                .cc()
                .wrapping_add(u16::from((wsel >> 2) & 7))
                .wrapping_sub(3),
            _ => inp.u16(),
        };
        let len_sel = inp.u8();
        let len = self.pick_len(len_sel, inp);
        let mut c = Cqe64::default();
        c.set_wqe_counter(wc);
        c.set_check_sum(inp.u16());
        c.set_rss_hash_result(inp.u32());
        c.set_hds_ip_ext(inp.u8());
        c.0[off::L4_L3_HDR_TYPE] = inp.u8();
        if sel & 0x80 != 0 {
            // A compressed session: the title's byte_cnt is the packet count, mini-CQE
            // arrays follow at +1, +8, +16, ...
            let outstanding = u32::from(self.rq.outstanding());
            let count = match len_sel >> 6 {
                0 | 1 => 1 + u32::from(inp.u8()) % outstanding.max(1),
                2 => u32::from(inp.u8()),
                _ => inp.u32(),
            };
            c.set_byte_cnt(count);
            c.set_op_own(opcode, CQE_FORMAT_COMPRESSED, owner);
            let arrays = (count.min(64) as usize).div_ceil(MINI_CQE_ARRAY_SIZE);
            for j in 0..arrays {
                let slot = ctr.wrapping_add(if j == 0 { 1 } else { 8 * j as u32 });
                let mut a = Cqe64::default();
                for m in 0..MINI_CQE_ARRAY_SIZE {
                    let ms = inp.u8();
                    let l = self.pick_len(ms, inp);
                    let at = m * 8;
                    a.0[at..at + 2].copy_from_slice(&inp.u16().to_be_bytes());
                    a.0[at + 4..at + 8].copy_from_slice(&l.to_be_bytes());
                }
                self.hw_cq().write(slot, &a);
            }
        } else {
            c.set_byte_cnt(len);
            c.set_op_own(opcode, inp.u8() & 3 & (sel >> 5), owner);
        }
        self.hw_cq().write(ctr, &c);
    }

    fn pick_len(&self, sel: u8, inp: &mut Input<'_>) -> u32 {
        // A packet may fill every buffer of its WQE.
        pick_len(sel, self.buf_size * u32::from(self.segs), inp, |inp| {
            inp.u32()
        })
    }

    fn recover(&mut self) {
        let before = self.env.held_count();
        let n = self.rq.drain(&mut self.env);
        assert_eq!(n as usize, before, "drain returned other buffers than held");
        assert_eq!(self.env.held_count(), 0);
        assert_eq!(self.rq.outstanding(), 0);
        self.rq.reset().expect("reset after drain");
        assert!(self.rq.error().is_none());
    }

    fn check(&self) {
        let out = self.rq.outstanding();
        assert!(out <= self.rq.size(), "outstanding {out} exceeds the ring");
        let segs = usize::from(self.segs);
        let held = self.env.held_count();
        assert!(
            held >= usize::from(out) * segs && held <= usize::from(self.rq.size()) * segs,
            "{held} buffers held for {out} outstanding WQEs of {segs}"
        );
        if segs == 1 {
            assert_eq!(held, usize::from(out), "buffers held differ from outstanding WQEs");
        }
    }
}

impl crate::Harness for Harness {
    const MAX_OPS: usize = 400;

    fn new(inp: &mut Input<'_>) -> Self {
        let cfg = inp.u8();
        let log_sz = 1 + cfg % 7;
        let n = 1usize << log_sz;
        let cq_log = log_sz + ((cfg >> 3) & 1);
        let buf_size = 1 + u32::from(inp.u16() % 4096);
        let segs = 1 + (cfg >> 4) % 4;
        let wqe_bulk = 1 + u16::from(inp.u8()) % n as u16;
        let mem = HostMemory::new();
        let wq = mem.alloc(n * 16 * usize::from(segs).next_power_of_two());
        let dbr = mem.alloc(8);
        let cqbuf = mem.alloc((1usize << cq_log) * 64);
        let cqdbr = mem.alloc(8);
        let cq = Cq::new(cqbuf.clone(), cqdbr, 0, cq_log, 0x99, 0x4000).expect("cq");
        let rq = new_vec_rq(
            RqParams {
                log_sz,
                buf_size,
                segs,
                lkey: 0x1234,
                dbr_off: 0,
                wqe_bulk,
            },
            wq,
            dbr,
            cq,
        )
        .expect("rq");
        Self {
            rq,
            env: Env::default(),
            cqbuf,
            cq_log,
            buf_size,
            segs,
            take: 255,
        }
    }

    fn op(&mut self, inp: &mut Input<'_>) {
        match inp.u8() % 16 {
            0 | 1 => {
                let fail = u32::from(inp.u8() >> 5);
                self.env.failing_allocs(fail, |env| self.rq.post(env));
            }
            2..=6 => self.structured_cqe(inp),
            7 => {
                let (slot, c) = raw_cqe(inp);
                self.hw_cq().write(slot, &Cqe64(c));
            }
            8 => poke_cq(&self.cqbuf, 1 << self.cq_log, inp),
            9..=11 => {
                let budget = u32::from(inp.u8() % 70);
                self.poll(budget, false);
            }
            12 | 13 => {
                let budget = u32::from(inp.u8() % 70);
                self.take = match inp.u8() % 4 {
                    0 => 0,
                    1 => 1,
                    _ => 255,
                };
                self.env.fail_allocs = u32::from(inp.u8() >> 6);
                self.poll(budget, true);
                self.env.fail_allocs = 0;
            }
            14 => self.recover(),
            _ => {
                let cq = self.rq.cq_mut();
                cq.event();
                cq.update_ci(&self.env);
            }
        }
        self.check();
    }

    fn finish(mut self) {
        self.recover();
        assert!(
            !self.env.bufs.contains(&St::Held),
            "a buffer never came back"
        );
        // The RQ works again: a full ring, then one valid CQE for WQE 0.
        let n = self.rq.post(&mut self.env);
        assert_eq!(n, u32::from(self.rq.size()), "post after recovery");
        self.check();
        let ctr = self.rq.cq().cc();
        let len = self.buf_size.min(60);
        let mut c = Cqe64::default();
        c.set_wqe_counter(0);
        c.set_byte_cnt(len);
        c.set_op_own(CQE_RESP_SEND, 0, self.rq.cq().parity(ctr));
        self.hw_cq().write(ctr, &c);
        let next = ctr.wrapping_add(1);
        self.hw_cq().hw_owned(next, self.rq.cq().parity(next));
        let first = self.env.bufs.len() - usize::from(self.rq.size()) * usize::from(self.segs);
        assert_eq!(self.poll(1, false), 1, "no delivery after recovery");
        assert_eq!(self.env.bufs[first], St::Delivered);
        assert!(self.rq.error().is_none());
        self.check();
        self.recover();
        assert!(!self.env.bufs.contains(&St::Held));
    }
}

/// One fuzz input.
pub fn run(data: &[u8]) {
    crate::drive::<Harness>(data);
}
