// SPDX-License-Identifier: GPL-2.0

//! The driver-side RQ against a hostile device.
//!
//! The input configures an RQ (ring size, buffer size, posting bulk), then runs a program:
//! post and poll with budgets (buffer allocation may fail), write CQEs (plausible ones for
//! the next WQE, error CQEs, compressed sessions with arbitrary counts and mini-CQE arrays,
//! and arbitrary bytes), poke single bytes, recover (drain + reset), arm.
//!
//! Invariants checked:
//! * nothing panics and no host DMA buffer is accessed out of bounds;
//! * a buffer is delivered or recycled at most once, and only while the RQ holds it;
//! * a delivered length is 1..=buffer size;
//! * the RQ holds exactly the buffers of its outstanding WQEs (`wqe_ctr − cc`), never more
//!   than the ring; the work reported by a poll is at most its budget;
//! * at the end, after drain and reset, every buffer came back exactly once, and the RQ
//!   works again: it posts a full ring and delivers a valid CQE's buffer.

use rsnic_core::dp::hw::{Barriers, Coherent, DmaAddr};
use rsnic_core::dp::mlx5::cq::Cq;
use rsnic_core::dp::mlx5::cqe::{
    off, Cqe64, CQE_FORMAT_COMPRESSED, CQE_OP_OWN_INIT, CQE_RESP_ERR, CQE_RESP_SEND,
    MINI_CQE_ARRAY_SIZE,
};
use rsnic_core::dp::mlx5::rq::{Rq, RqParams, RxBufProvider, RxBuffer, RxCompletion};
use rsnic_testbed::mem::{HostBuf, HostMemory};

use crate::Input;

const MAX_OPS: usize = 400;

/// A receive buffer (the device never writes here: the fuzzer plays the device).
pub struct RxBuf {
    id: u32,
}

impl RxBuffer for RxBuf {
    fn dma_addr(&self) -> DmaAddr {
        0x20_0000_0000_0000 | (u64::from(self.id) << 16)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    Held,
    Delivered,
    Recycled,
}

struct Env {
    states: Vec<St>,
    /// Fail the next allocations while > 0.
    fail_allocs: u32,
}

impl Barriers for Env {
    fn dma_wmb(&self) {}
    fn dma_rmb(&self) {}
    fn wmb(&self) {}
}

impl RxBufProvider<RxBuf> for Env {
    fn alloc(&mut self) -> Option<RxBuf> {
        if self.fail_allocs > 0 {
            self.fail_allocs -= 1;
            return None;
        }
        let id = self.states.len() as u32;
        self.states.push(St::Held);
        Some(RxBuf { id })
    }
    fn recycle(&mut self, buf: RxBuf) {
        let st = &mut self.states[buf.id as usize];
        assert_eq!(*st, St::Held, "buffer {} recycled but not held", buf.id);
        *st = St::Recycled;
    }
}

impl Env {
    fn held(&self) -> usize {
        self.states.iter().filter(|s| **s == St::Held).count()
    }
}

type FuzzRq = Rq<RxBuf, HostBuf, Vec<Option<RxBuf>>>;

struct Harness {
    rq: FuzzRq,
    env: Env,
    cqbuf: HostBuf,
    cq_log: u8,
    buf_size: u32,
}

impl Harness {
    fn new(inp: &mut Input<'_>) -> Self {
        let cfg = inp.u8();
        let log_sz = 1 + cfg % 7;
        let n = 1usize << log_sz;
        let cq_log = log_sz + ((cfg >> 3) & 1);
        let buf_size = 1 + u32::from(inp.u16() % 4096);
        let wqe_bulk = 1 + u16::from(inp.u8()) % n as u16;
        let mem = HostMemory::new();
        let wq = mem.alloc(n * 16);
        let dbr = mem.alloc(8);
        let cqbuf = mem.alloc((1usize << cq_log) * 64);
        let cqdbr = mem.alloc(8);
        let cq = Cq::new(cqbuf.clone(), cqdbr, 0, cq_log, 0x99, 0x4000).expect("cq");
        let rq = Rq::new(
            RqParams {
                log_sz,
                buf_size,
                lkey: 0x1234,
                dbr_off: 0,
                wqe_bulk,
            },
            wq,
            dbr,
            cq,
            (0..n).map(|_| None).collect(),
        )
        .expect("rq");
        Self {
            rq,
            env: Env {
                states: Vec::new(),
                fail_allocs: 0,
            },
            cqbuf,
            cq_log,
            buf_size,
        }
    }

    fn deliver(states: &mut [St], buf_size: u32, b: RxBuf, c: &RxCompletion) {
        let st = states
            .get_mut(b.id as usize)
            .expect("delivered a buffer that was never allocated");
        assert_eq!(*st, St::Held, "buffer {} delivered but not held", b.id);
        *st = St::Delivered;
        assert!(
            (1..=buf_size).contains(&c.len),
            "delivered length {} outside 1..={buf_size}",
            c.len
        );
    }

    /// Polls (and posts, for a NAPI round); returns the number of deliveries.
    fn poll(&mut self, budget: u32, post: bool) -> u32 {
        let Self {
            rq, env, buf_size, ..
        } = self;
        let mut got = Vec::new();
        let work = if post {
            rq.napi_poll(budget, env, |b, c| got.push((b, *c))).work
        } else {
            rq.poll_cq(budget, env, |b, c| got.push((b, *c)))
        };
        assert!(work <= budget, "poll did {work} work with budget {budget}");
        assert!(got.len() as u32 <= work, "more deliveries than work");
        let n = got.len() as u32;
        for (b, c) in got {
            Self::deliver(&mut env.states, *buf_size, b, &c);
        }
        n
    }

    fn write_cqe(&self, ctr: u32, c: &Cqe64) {
        let o = (ctr & ((1 << self.cq_log) - 1)) as usize * 64;
        self.cqbuf.write(o, &c.0[..63]);
        self.cqbuf.write(o + 63, &c.0[63..]);
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
                self.write_cqe(slot, &a);
            }
        } else {
            c.set_byte_cnt(len);
            c.set_op_own(opcode, inp.u8() & 3 & (sel >> 5), owner);
        }
        self.write_cqe(ctr, &c);
    }

    fn pick_len(&self, sel: u8, inp: &mut Input<'_>) -> u32 {
        match sel & 7 {
            0..=3 => 1 + u32::from(inp.u16()) % self.buf_size,
            4 => self.buf_size,
            5 => self.buf_size + 1,
            6 => 0,
            _ => inp.u32(),
        }
    }

    fn recover(&mut self) {
        let before = self.env.held();
        let n = self.rq.drain(&mut self.env);
        assert_eq!(n as usize, before, "drain returned other buffers than held");
        assert_eq!(self.env.held(), 0);
        assert_eq!(self.rq.outstanding(), 0);
        self.rq.reset().expect("reset after drain");
        assert!(self.rq.error().is_none());
    }

    fn check(&self) {
        let out = self.rq.outstanding();
        assert!(out <= self.rq.size(), "outstanding {out} exceeds the ring");
        assert_eq!(
            self.env.held(),
            usize::from(out),
            "buffers held differ from outstanding WQEs"
        );
    }

    fn op(&mut self, inp: &mut Input<'_>) {
        match inp.u8() % 16 {
            0 | 1 => {
                self.env.fail_allocs = u32::from(inp.u8() >> 5);
                self.rq.post(&mut self.env);
                self.env.fail_allocs = 0;
            }
            2..=6 => self.structured_cqe(inp),
            7 => {
                let slot = u32::from(inp.u8());
                let mut c = Cqe64::default();
                inp.fill(&mut c.0);
                self.write_cqe(slot, &c);
            }
            8 => {
                let slot = usize::from(inp.u8()) % (1 << self.cq_log);
                let at = usize::from(inp.u8() % 64);
                self.cqbuf.write(slot * 64 + at, &[inp.u8()]);
            }
            9..=11 => {
                let budget = u32::from(inp.u8() % 70);
                self.poll(budget, false);
            }
            12 | 13 => {
                let budget = u32::from(inp.u8() % 70);
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
            !self.env.states.contains(&St::Held),
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
        self.write_cqe(ctr, &c);
        let next = ctr.wrapping_add(1);
        let o = (next & ((1 << self.cq_log) - 1)) as usize * 64 + off::OP_OWN;
        self.cqbuf.write(
            o,
            &[(CQE_OP_OWN_INIT & !1) | (self.rq.cq().parity(next) ^ 1)],
        );
        let first = self.env.states.len() - usize::from(self.rq.size());
        assert_eq!(self.poll(1, false), 1, "no delivery after recovery");
        assert_eq!(self.env.states[first], St::Delivered);
        assert!(self.rq.error().is_none());
        self.check();
        self.recover();
        assert!(!self.env.states.contains(&St::Held));
    }
}

/// One fuzz input.
pub fn run(data: &[u8]) {
    let mut inp = Input::new(data);
    let mut h = Harness::new(&mut inp);
    let mut ops = 0;
    while !inp.done() && ops < MAX_OPS {
        h.op(&mut inp);
        ops += 1;
    }
    h.finish();
}
