// SPDX-License-Identifier: GPL-2.0

//! The driver-side MANA hardware channel (`hwif::mana::hwc`) and the response parsers
//! (`hwif::mana::gdma_req`) against a hostile device.
//!
//! The input runs a program: write EQEs into the HWC EQ (init events with any type and
//! value, test events, completions naming the HWC CQ or anything, with valid or wrong owner
//! bits), let the driver handle an interrupt, finish the init, post requests of any length,
//! answer them (a CQE for the SQ or the RQ or another queue, a `wqe_offset` that is right or
//! anything, a response with the message id in flight or any, any status, any length),
//! poke raw bytes into the EQ, the CQ or the response buffer, take responses into buffers of
//! any size, abandon messages, and run every response parser over response bytes.
//!
//! Invariants checked:
//! * nothing panics and no host DMA buffer is accessed out of bounds;
//! * a response handed to the caller holds a response header and fits the caller's buffer,
//!   its status is 0 or `GDMA_STATUS_MORE_ENTRIES`, and it is the bytes the device wrote;
//! * at most one message is in flight (the depth) and a message id is answered at most once;
//! * every register write is a doorbell on the HWC's page (SQ, RQ, CQ or EQ offset) naming
//!   the HWC queue the init events gave, and the SQ/RQ `tail_ptr` only moves forward by
//!   whole WQEs; nothing is rung before the init events named the doorbell page;
//! * a parser that accepts a response returns only values it checked (handles, ids, sizes).

use rsnic_core::hwif::hw::Coherent;
use rsnic_core::hwif::mana::gdma_req::{self as req, Caller, DevId};
use rsnic_core::hwif::mana::hwc::{GdmaRegs, Hwc, HwcBuffers, HwcError, HWC_MAX_MSG};
use rsnic_testbed::mem::{HostBuf, HostMemory};

use crate::env::Env;
use crate::{Harness, Input};

const EQ_ID: u32 = 0x10;
const CQ_ID: u32 = 0x11;
const RQ_ID: u32 = 0x12;
const SQ_ID: u32 = 0x13;
const DB_PAGE: u32 = 0x1000;
const DB_PAGE_SIZE: u32 = 0x1000;
const EQ_NUM: u32 = 4096 / 16;
const CQ_NUM: u32 = 4096 / 64;

struct H {
    env: Env,
    hwc: Hwc<HostBuf>,
    eq: HostBuf,
    cq: HostBuf,
    resp: HostBuf,
    rq: HostBuf,
    /// Producer indexes of the hostile device.
    eq_pi: u32,
    cq_pi: u32,
    /// The message in flight and what the device last wrote for it.
    inflight: Option<u16>,
    /// Doorbell pages (BAR0 offsets) and EQ ids the INIT_EQ_ID_DB events announced (written
    /// by the harness, or as the driver parsed them).
    pages: Vec<u32>,
    eq_ids: Vec<u32>,
    sq_tail: u32,
    rq_tail: u32,
}

fn owner(sel: u8, pi: u32, num: u32) -> u32 {
    let good = ((pi / num).wrapping_add(1)) & 7;
    match sel % 4 {
        0 | 1 => good,
        2 => good.wrapping_sub(1) & 7,
        _ => u32::from(sel >> 5),
    }
}

impl H {
    fn eqe(&mut self, ty: u8, d0: u32, sel: u8) {
        if ty == 129 {
            self.pages.push(DB_PAGE + (d0 >> 16) * DB_PAGE_SIZE);
            self.eq_ids.push(d0 & 0xffff);
        }
        let idx = self.eq_pi % EQ_NUM;
        let o = owner(sel, self.eq_pi, EQ_NUM);
        let mut b = [0u8; 16];
        b[0..4].copy_from_slice(&d0.to_le_bytes());
        b[12..16].copy_from_slice(&(u32::from(ty) | (o << 29)).to_le_bytes());
        self.eq.write(idx as usize * 16, &b);
        self.eq_pi = self.eq_pi.wrapping_add(1);
    }

    fn cqe(&mut self, data: &[u8; 32], wq: u32, is_sq: bool, sel: u8) {
        let idx = self.cq_pi % CQ_NUM;
        let o = owner(sel, self.cq_pi, CQ_NUM);
        let mut b = [0u8; 64];
        b[..32].copy_from_slice(data);
        b[60..64].copy_from_slice(
            &((wq & 0xff_ffff) | (u32::from(is_sq) << 24) | (o << 29)).to_le_bytes(),
        );
        self.cq.write(idx as usize * 64, &b);
        self.cq_pi = self.cq_pi.wrapping_add(1);
    }

    /// Every register write since the last check is a doorbell of the HWC on a page and
    /// for a queue the device announced.
    fn check_writes(&mut self) {
        let i = *self.hwc.init();
        // Raw pokes can write init events too: what the driver parsed is announced.
        if let (Some(d), Some(e)) = (i.doorbell, i.eq_id) {
            self.pages.push(DB_PAGE + d * DB_PAGE_SIZE);
            self.eq_ids.push(e);
        }
        for (off, bytes) in self.env.take_writes() {
            let page = self
                .pages
                .iter()
                .copied()
                .find(|&p| off.checked_sub(p).is_some_and(|r| r < DB_PAGE_SIZE))
                .unwrap_or_else(|| panic!("write at {off:#x} on no announced doorbell page"));
            let v = u64::from_le_bytes(bytes);
            let (lo, hi) = (v as u32, (v >> 32) as u32);
            match off.checked_sub(page) {
                Some(0x000) => {
                    assert_eq!(Some(lo), i.sq_id.map(|x| x & 0xff_ffff), "SQ doorbell id");
                    assert_eq!(hi.wrapping_sub(self.sq_tail) % 64, 0, "SQ tail by WQEs");
                    assert!(hi.wrapping_sub(self.sq_tail) <= 4096, "SQ tail jumps");
                    self.sq_tail = hi;
                }
                Some(0x400) => {
                    assert_eq!(Some(lo), i.rq_id.map(|x| x & 0xff_ffff), "RQ id, wqe_cnt 0");
                    assert_eq!(hi.wrapping_sub(self.rq_tail) % 32, 0, "RQ tail by WQEs");
                    assert!(hi.wrapping_sub(self.rq_tail) <= 4096, "RQ tail jumps");
                    self.rq_tail = hi;
                }
                Some(0x800) => {
                    assert_eq!(
                        Some(lo & 0xff_ffff),
                        i.cq_id.map(|x| x & 0xff_ffff),
                        "CQ id"
                    )
                }
                Some(0xff8) => assert!(self.eq_ids.contains(&(lo & 0xffff)), "EQ doorbell id"),
                _ => panic!("register write at {off:#x} outside the HWC doorbells"),
            }
        }
    }
}

/// Every parser over `r`: no panic, and what is accepted holds its checked values.
fn parse_all(r: &[u8]) {
    let who = Caller {
        dev_id: DevId { ty: 2, instance: 1 },
        activity_id: 7,
    };
    let _ = req::parse_verify_vf_version(r);
    let _ = req::parse_query_max_resources(r);
    if let Ok(l) = req::parse_list_devices(r) {
        assert!(l.found as usize <= req::GDMA_DEV_LIST_SIZE);
        assert!(l.mana.map_or(true, |d| d.ty == req::GDMA_DEVICE_MANA));
    }
    if let Ok(g) = req::parse_register_device(r) {
        assert!(g.pdid != u32::MAX && g.db_id != u32::MAX);
    }
    if let Ok(q) = req::parse_create_queue(r) {
        assert_ne!(q, u32::MAX);
    }
    if let Ok(h) = req::parse_create_dma_region(r) {
        assert_ne!(h, req::GDMA_INVALID_DMA_REGION);
    }
    if let Ok(c) = req::parse_query_dev_config(r, who) {
        assert!(c.max_num_vports > 0);
    }
    if let Ok(c) = req::parse_query_vport_config(r, who) {
        assert!(c.max_num_sq > 0 && c.max_num_rq > 0);
        assert!(c.indir_table_size.is_power_of_two() && c.indir_table_size <= 512);
    }
    let _ = req::parse_config_vport_tx(r, who);
    if let Ok(o) = req::parse_create_wq_obj(r, who) {
        assert_ne!(o.handle, req::INVALID_MANA_HANDLE);
    }
    let _ = req::parse_query_gf_stat(r, who);
    for code in [req::GDMA_DISABLE_QUEUE, req::MANA_FENCE_RQ] {
        if req::parse_general(r, code, Some(who)).is_ok() {
            assert!(r.len() >= req::RESP_HDR_SIZE);
        }
    }
}

impl Harness for H {
    const MAX_OPS: usize = 200;

    fn new(_inp: &mut Input<'_>) -> Self {
        let mem = HostMemory::new();
        let q = || mem.alloc(4096);
        let (eq, cq, rq, sq) = (q(), q(), q(), q());
        let resp = mem.alloc(HWC_MAX_MSG);
        let regs = GdmaRegs {
            db_page_size: DB_PAGE_SIZE,
            db_page_offset: u64::from(DB_PAGE),
            shm_offset: 0x100,
        };
        let hwc = Hwc::new(
            HwcBuffers {
                eq: eq.clone(),
                cq: cq.clone(),
                rq: rq.clone(),
                sq,
                req: mem.alloc(HWC_MAX_MSG),
                resp: resp.clone(),
            },
            regs,
        )
        .expect("HWC");
        Self {
            env: Env::default(),
            hwc,
            eq,
            cq,
            resp,
            rq,
            eq_pi: 0,
            cq_pi: 0,
            inflight: None,
            pages: Vec::new(),
            eq_ids: Vec::new(),
            sq_tail: 0,
            rq_tail: 0,
        }
    }

    fn op(&mut self, inp: &mut Input<'_>) {
        match inp.u8() % 10 {
            // The init events, plausible or not.
            0 => {
                let sel = inp.u8();
                let (ty, d0) = match inp.u8() % 6 {
                    0 => (129, EQ_ID | (inp.u8() as u32 % 2) << 16),
                    1 => {
                        let t = inp.u8() % 11;
                        let v = match t {
                            1 => CQ_ID,
                            2 => RQ_ID,
                            3 => SQ_ID,
                            4 => u32::from(inp.u8() % 3),
                            5 | 6 => u32::from(inp.u16()),
                            7 => 0x4000,
                            _ => inp.u32() & 0xff_ffff,
                        };
                        (130, v | u32::from(t) << 24)
                    }
                    2 => (131, 0),
                    3 => (64, 0),
                    4 => (3, if inp.bool() { CQ_ID } else { inp.u32() }),
                    _ => (inp.u8(), inp.u32()),
                };
                self.eqe(ty, d0, sel);
            }
            1 => {
                self.hwc.process_events(&self.env);
                self.check_writes();
            }
            2 => {
                let r = self.hwc.finish_init(&self.env);
                if r.is_ok() {
                    assert!(self.hwc.ready());
                }
                self.check_writes();
            }
            // A request of any length.
            3 => {
                let len = usize::from(inp.u16()) % 4200;
                let mut b = inp.bytes(len.min(256));
                b.resize(len, 0x5a);
                match self.hwc.send(&self.env, &b) {
                    Ok(id) => {
                        assert!(self.inflight.is_none(), "two messages in flight");
                        assert!((40..=HWC_MAX_MSG).contains(&len));
                        self.inflight = Some(id);
                    }
                    Err(e) => assert!(
                        matches!(
                            e,
                            HwcError::NotReady
                                | HwcError::BadRequest
                                | HwcError::Busy
                                | HwcError::NoSpace
                                | HwcError::BadDoorbell
                        ),
                        "{e:?}"
                    ),
                }
                self.check_writes();
            }
            // The device answers: response bytes, the RQ CQE, maybe the SQ CQE, the EQE.
            4 => {
                let len = u32::from(inp.u16()) % 4200;
                let id = if inp.bool() {
                    self.inflight.unwrap_or(0)
                } else {
                    inp.u16()
                };
                let status = match inp.u8() % 4 {
                    0 | 1 => 0,
                    2 => req::GDMA_STATUS_MORE_ENTRIES,
                    _ => inp.u32(),
                };
                let mut r = inp.bytes(32);
                r[10..12].copy_from_slice(&id.to_le_bytes());
                r[24..28].copy_from_slice(&status.to_le_bytes());
                self.resp.write(0, &r);
                let mut d = [0u8; 32];
                let off = if inp.bool() {
                    (self.rq_tail.wrapping_sub(32)) % 4096
                } else {
                    inp.u32()
                };
                d[12..16].copy_from_slice(&off.to_le_bytes());
                d[24..28].copy_from_slice(&len.to_le_bytes());
                let sel = inp.u8();
                if inp.bool() {
                    self.cqe(&[0; 32], SQ_ID, true, sel);
                }
                let wq = if inp.bool() { RQ_ID } else { inp.u32() };
                let is_sq = inp.u8() % 8 == 0;
                self.cqe(&d, wq, is_sq, sel);
                self.eqe(3, CQ_ID, sel);
            }
            // Raw bytes into the EQ, the CQ, the response buffer or the driver's RQ ring.
            5 => {
                let which = inp.u8() % 4;
                let at = usize::from(inp.u16()) % 4096;
                let v = inp.bytes(8);
                let n = v.len().min(4096 - at);
                match which {
                    0 => self.eq.write(at, &v[..n]),
                    1 => self.cq.write(at, &v[..n]),
                    2 => self.resp.write(at, &v[..n]),
                    _ => self.rq.write(at, &v[..n]),
                }
            }
            // The caller's wait.
            6 => {
                let id = if inp.bool() {
                    self.inflight.unwrap_or(0)
                } else {
                    inp.u16()
                };
                let cap = usize::from(inp.u16()) % 4200;
                let mut out = vec![0u8; cap];
                match self.hwc.take_response(&self.env, id, &mut out) {
                    None => assert_eq!(self.inflight, Some(id), "waiting for an id not sent"),
                    Some(r) => {
                        if self.inflight == Some(id) {
                            self.inflight = None;
                        }
                        if let Ok(n) = r {
                            assert!(n >= req::RESP_HDR_SIZE && n <= cap);
                            let mut dev = vec![0u8; n];
                            self.resp.read(0, &mut dev);
                            assert_eq!(out[..n], dev[..], "not the device's bytes");
                            let s = u32::from_le_bytes([out[24], out[25], out[26], out[27]]);
                            assert!(s == 0 || s == req::GDMA_STATUS_MORE_ENTRIES);
                            parse_all(&out[..n]);
                        }
                    }
                }
                self.check_writes();
            }
            7 => {
                if let Some(id) = self.inflight.take() {
                    self.hwc.abandon(&self.env, id);
                }
            }
            8 => {
                let n = usize::from(inp.u16()) % 400;
                let r = inp.bytes(n);
                parse_all(&r);
            }
            _ => {
                let take = self.hwc.take_test_event();
                let _ = take;
            }
        }
    }

    fn finish(mut self) {
        self.hwc.process_events(&self.env);
        self.check_writes();
        let s = self.hwc.stats;
        assert!(s.responses <= s.requests);
    }
}

/// Runs one input.
pub fn run(data: &[u8]) {
    crate::drive::<H>(data);
}
