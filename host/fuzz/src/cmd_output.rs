// SPDX-License-Identifier: GPL-2.0

//! The driver-side ConnectX command queue and command parsers (hwif/mlx5/cmd) while a hostile
//! device answers commands with arbitrary bytes: the entry (delivery status, token, outlen,
//! the inline output), the output mailbox blocks (data, block numbers, tokens), or nothing
//! at all. The bring-up sequence runs against the same device.
//!
//! Invariants: nothing panics; a command that completes successfully returned exactly its
//! output length with status 0; a finished command (success or error) frees the queue;
//! every parser accepts any output of its length; object numbers are 24 bits; the bring-up
//! never records a resource after a failed step and its teardown posts one command per
//! recorded resource.

use rsnic_core::hwif::hw::{BusMemory, Coherent};
use rsnic_core::hwif::mlx5::cmd::hca::{self, DevCaps};
use rsnic_core::hwif::mlx5::cmd::queue::{CmdPoll, MBOX_STRIDE};
use rsnic_core::hwif::mlx5::cmd::seq::{Bringup, Progress, Teardown, SEQ_OUT_LEN};
use rsnic_core::hwif::mlx5::cmd::{res, vport, CmdQueue, Pas};
use rsnic_testbed::mem::{HostBuf, HostMemory};

use crate::cx_bar::CxBar;
use crate::{drive, Harness, Input};

/// Mailbox slots of the queue under test.
const SLOTS: usize = 12;

/// Runs one input.
pub fn run(data: &[u8]) {
    drive::<CmdOutput>(data);
}

/// The harness.
pub struct CmdOutput {
    mem: HostMemory,
    bar: CxBar,
    q: CmdQueue<HostBuf>,
    /// Bring-up in progress (ops alternate between single commands and the sequence).
    seq: Option<Bringup>,
    completed: u64,
}

/// Builds one command chosen by `sel`; returns (input, outlen, parser id).
fn build(sel: u8, inp: &mut Input<'_>) -> (Vec<u8>, usize, u8) {
    let mut b = vec![0u8; 2048];
    let k = sel % 12;
    let (n, outlen) = match k {
        0 => (hca::query_issi(&mut b).unwrap(), hca::QUERY_ISSI_OUT_LEN),
        1 => (
            hca::query_hca_cap(&mut b, u16::from(inp.u8() & 1)).unwrap(),
            hca::QUERY_HCA_CAP_OUT_LEN,
        ),
        2 => (res::alloc_uar(&mut b).unwrap(), 16),
        3 => (res::query_sq(&mut b, inp.u32() & 0xff_ffff).unwrap(), 272),
        4 => (vport::query_nic_vport_context(&mut b).unwrap(), 272),
        5 => (vport::query_vport_state(&mut b).unwrap(), 16),
        6 => (
            vport::paos_query(&mut b).unwrap(),
            vport::access_reg_len(16),
        ),
        7 => (
            vport::pfcc_query(&mut b).unwrap(),
            vport::access_reg_len(32),
        ),
        8 => (
            vport::query_vport_counter(&mut b).unwrap(),
            vport::QUERY_VPORT_COUNTER_OUT_LEN,
        ),
        9 => {
            let npages = 1 + usize::from(inp.u8() % 160);
            let p = res::CreateCq {
                log_cq_size: 6,
                uar_page: 8,
                c_eqn: 0,
                dbr_addr: 0x1000,
                cqe_comp_en: inp.bool(),
                mini_cqe_res_format: 0,
                pas: Pas::contiguous(0x10_0000, npages * 4096),
            };
            (res::create_cq(&mut b, &p).unwrap(), 16)
        }
        10 => {
            let n = 1 + usize::from(inp.u8() % 128);
            let rqns: Vec<u32> = (0..n as u32).collect();
            (res::create_rqt(&mut b, 128, &rqns).unwrap(), 16)
        }
        _ => (
            res::create_eq(
                &mut b,
                &res::CreateEq {
                    log_eq_size: 6,
                    uar_page: 8,
                    intr: 0,
                    event_bitmask: 1 << 9,
                    pas: Pas::contiguous(0x20_0000, 4096),
                },
            )
            .unwrap(),
            16,
        ),
    };
    b.truncate(n);
    (b, outlen, k)
}

/// Runs the parser of command kind `k` over a successful output; checks what it returns.
fn parse(k: u8, out: &[u8]) {
    match k {
        0 => {
            hca::parse_query_issi(out).unwrap();
        }
        1 => {
            let mut c = DevCaps::default();
            hca::parse_general_caps(out, &mut c).unwrap();
            hca::parse_eth_caps(out, &mut c).unwrap();
            assert!(c.wqe_inline_mode < 4 && c.max_lso_cap < 32);
        }
        2 => assert!(res::parse_alloc_uar(out).unwrap() < 1 << 24),
        3 => {
            // Any state value: a named one or BadParam, never a panic.
            let _ = res::parse_query_q_state(out);
        }
        4 => {
            let c = vport::parse_query_nic_vport_context(out).unwrap();
            assert!(c.min_wqe_inline_mode < 8);
        }
        5 => {
            let s = vport::parse_query_vport_state(out).unwrap();
            assert!(s.state < 16 && s.admin_state < 16);
        }
        6 => {
            vport::parse_paos(out).unwrap();
        }
        7 => {
            vport::parse_pfcc(out).unwrap();
        }
        8 => {
            vport::parse_query_vport_counter(out).unwrap();
        }
        11 => {
            res::parse_create_eq(out).unwrap();
        }
        _ => assert!(res::parse_create_cq(out).unwrap() < 1 << 24),
    }
}

impl CmdOutput {
    /// The hostile device: answers the outstanding command (if any) with arbitrary bytes.
    fn device(&mut self, inp: &mut Input<'_>) {
        let Some(page) = self.bar.cmdq_addr() else {
            return;
        };
        let mode = inp.u8();
        if mode & 0x80 != 0 {
            return; // keeps the entry a while
        }
        let mut e = [0u8; 64];
        self.mem.dma_read(page, &mut e).unwrap();
        // A well-formed answer first: the inline output with a status, then corruption.
        let mut out = [0u8; 16];
        out[0] = if mode & 1 != 0 { inp.u8() } else { 0 };
        self.mem.dma_write(page + 0x20, &out).unwrap();
        if mode & 2 != 0 {
            let o = usize::from(inp.u8() % 64);
            let v = inp.u8();
            self.mem.dma_write(page + o as u64, &[v]).unwrap();
        }
        // Output mailbox data and headers: the driver's own blocks, by slot.
        let blocks = usize::from(inp.u8() % 4);
        for _ in 0..blocks {
            let slot = usize::from(inp.u8()) % SLOTS;
            let at = usize::from(inp.u16()) % 576;
            let n = 1 + usize::from(inp.u8() % 16);
            let bytes = inp.bytes(n);
            let addr = self.q.mailboxes().dma_addr() + (slot * MBOX_STRIDE + at) as u64;
            let end = (576 - at).min(bytes.len());
            self.mem.dma_write(addr, &bytes[..end]).unwrap();
        }
        let own = if mode & 4 != 0 { inp.u8() & !1 } else { 0 };
        let own = if mode & 8 != 0 { own | 1 } else { own };
        self.mem.dma_write(page + 0x3f, &[own]).unwrap();
    }

    fn single(&mut self, inp: &mut Input<'_>) {
        if !self.q.is_busy() {
            let (input, outlen, k) = build(inp.u8(), inp);
            self.q
                .post(&input, outlen, &self.bar, &self.bar)
                .expect("an idle queue takes a command");
            self.device(inp);
            let mut out = vec![0u8; outlen];
            match self.q.poll(&self.bar, &mut out) {
                Ok(CmdPoll::Done(n)) => {
                    assert_eq!(n, outlen);
                    assert_eq!(out[0], 0);
                    assert!(!self.q.is_busy());
                    self.completed += 1;
                    parse(k, &out);
                }
                Ok(CmdPoll::Pending) => assert!(self.q.is_busy()),
                Err(_) => assert!(!self.q.is_busy()),
            }
        } else {
            self.device(inp);
            let mut out = vec![0u8; SEQ_OUT_LEN];
            if let Ok(CmdPoll::Done(_)) | Err(_) = self.q.poll(&self.bar, &mut out) {
                assert!(!self.q.is_busy());
            }
        }
    }

    fn sequence(&mut self, inp: &mut Input<'_>) {
        let mut b = self.seq.take().unwrap_or_default();
        let mut out = vec![0u8; SEQ_OUT_LEN];
        for _ in 0..24 {
            match b.poll(&mut self.q, &self.bar, &self.bar, &mut out) {
                Ok(Progress::Done) => break,
                Ok(Progress::Pending) => self.device(inp),
                // The fuzzed device asked for pages: give none and go on (the device
                // decides what INIT_HCA says then).
                Ok(Progress::GivePages(_)) => b.pages_given(),
                Ok(Progress::Reclaim) => unreachable!("a bring-up never reclaims"),
                Err(_) => {
                    let r = *b.resources();
                    if r.uar.is_some() || r.pd.is_some() || r.td.is_some() {
                        assert!(r.hca_initialized && r.hca_enabled);
                    }
                    let want = usize::from(r.uar.is_some())
                        + usize::from(r.pd.is_some())
                        + usize::from(r.td.is_some())
                        + usize::from(r.mkey.is_some())
                        + usize::from(r.q_counter.is_some())
                        + usize::from(r.hca_initialized)
                        + usize::from(r.hca_enabled);
                    let before = self.q.posted();
                    let mut t = Teardown::new(&r);
                    let mut short = [0u8; 16];
                    let mut polls = 0;
                    loop {
                        match t.poll(&mut self.q, &self.bar, &self.bar, &mut short) {
                            Progress::Pending => {}
                            // No page was given: nothing to take back.
                            Progress::Reclaim => {
                                t.reclaimed();
                                continue;
                            }
                            _ => break,
                        }
                        self.device(inp);
                        polls += 1;
                        if polls > 64 {
                            self.q.abandon();
                        }
                    }
                    assert!(self.q.posted() - before <= want as u64);
                    return;
                }
            }
        }
        self.seq = Some(b);
    }
}

impl Harness for CmdOutput {
    const MAX_OPS: usize = 64;

    fn new(_inp: &mut Input<'_>) -> Self {
        let mem = HostMemory::new();
        let page = mem.alloc(4096);
        let mbox = mem.alloc(SLOTS * MBOX_STRIDE);
        let q = CmdQueue::new(page, mbox).expect("aligned queue memory");
        Self {
            mem,
            bar: CxBar::default(),
            q,
            seq: None,
            completed: 0,
        }
    }

    fn op(&mut self, inp: &mut Input<'_>) {
        if !self.q.is_up() {
            if self.bar.cmdq_addr().is_none() {
                self.q.enable(&self.bar, &self.bar).unwrap();
                assert_eq!(self.q.poll_ready(&self.bar), Ok(true));
            } else {
                return; // abandoned after a timeout: nothing more to do
            }
        }
        if inp.u8() & 3 == 0 || self.seq.is_some() {
            self.sequence(inp);
        } else {
            self.single(inp);
        }
    }

    fn finish(self) {
        assert!(self.completed <= self.q.posted());
    }
}
