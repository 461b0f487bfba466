//! The fake ConnectX driver of the model-side tests (sim_cmd, sim_eq, sim_rss, sim_steer,
//! ...): a minimal hand-written command-interface host that drives the device model (sim/):
//! command queue entries, mailbox chains and command inputs built straight from the 6.12
//! headers (device.h `mlx5_cmd_layout`/`mlx5_cmd_prot_block`, mlx5_ifc.h), independent of
//! the device model's layout code and of the driver's.

#![allow(dead_code)]

use rsnic_core::hwif::hw::{Coherent, Mmio};
use rsnic_core::sim::mlx5::Caps;
use rsnic_testbed::bus::{RegisterBus, Testbed};
use rsnic_testbed::mem::HostBuf;

use super::sim_util::dseg;

/// Command status values (mlx5_ifc.h `MLX5_CMD_STAT_*`).
pub const ST_BAD_OP: u8 = 0x2;
pub const ST_BAD_PARAM: u8 = 0x3;
pub const ST_BAD_SYS_STATE: u8 = 0x4;
pub const ST_BAD_RESOURCE: u8 = 0x5;
pub const ST_BUSY: u8 = 0x6;
pub const ST_BAD_RES_STATE: u8 = 0x9;
pub const ST_NO_RESOURCES: u8 = 0xf;
pub const ST_BAD_IN_LEN: u8 = 0x50;
pub const ST_BAD_OUT_LEN: u8 = 0x51;

/// Asserts a command's (status, syndrome).
pub fn expect(o: impl std::borrow::Borrow<Out>, status: u8, syndrome: u32) {
    let o = o.borrow();
    assert_eq!(
        (o.status(), o.syndrome()),
        (status, syndrome),
        "status/syndrome"
    );
}

/// BAR0 window of one function.
pub const FUNC: u32 = 0x10_0000;

/// Writes `v` into the `len`-bit field at big-endian bit offset `bit` (mlx5_ifc numbering:
/// bit 0 is the MSB of byte 0), like MLX5_SET.
pub fn put(b: &mut [u8], bit: usize, len: usize, v: u64) {
    for i in 0..len {
        let pos = bit + i;
        let val = (v >> (len - 1 - i)) & 1;
        let byte = &mut b[pos / 8];
        let m = 0x80u8 >> (pos % 8);
        if val != 0 {
            *byte |= m;
        } else {
            *byte &= !m;
        }
    }
}

/// Reads the `len`-bit field at bit `bit`, like MLX5_GET.
pub fn getf(b: &[u8], bit: usize, len: usize) -> u64 {
    let mut v = 0u64;
    for i in 0..len {
        let pos = bit + i;
        v = (v << 1) | u64::from((b[pos / 8] >> (7 - pos % 8)) & 1);
    }
    v
}

/// A command input of `len` bytes with opcode (bits 0x0..0x10) and op_mod (0x30..0x40).
pub fn cmd_in(opcode: u16, op_mod: u16, len: usize) -> Vec<u8> {
    let mut b = vec![0u8; len];
    b[0..2].copy_from_slice(&opcode.to_be_bytes());
    b[6..8].copy_from_slice(&op_mod.to_be_bytes());
    b
}

/// The answer to one command.
#[derive(Debug, Clone)]
pub struct Out {
    /// The whole output (outlen bytes).
    pub b: Vec<u8>,
}

impl Out {
    /// Output status (byte 0).
    pub fn status(&self) -> u8 {
        self.b[0]
    }
    /// Output syndrome (bytes 4..8).
    pub fn syndrome(&self) -> u32 {
        u32::from_be_bytes(self.b[4..8].try_into().unwrap())
    }
    /// The 24-bit object number at bit 0x48 (alloc_*/create_* outputs).
    pub fn obj(&self) -> u32 {
        getf(&self.b, 0x48, 24) as u32
    }
    /// Asserts status OK.
    pub fn ok(self) -> Self {
        assert_eq!(
            (self.status(), self.syndrome()),
            (0, 0),
            "command failed: status {:#x} syndrome {:#x}",
            self.status(),
            self.syndrome()
        );
        self
    }
}

/// A host driving one function's command queue.
pub struct Host {
    pub tb: Testbed,
    pub bus: RegisterBus,
    /// The function commands go to (switch freely: every function has its queue).
    pub port: usize,
    /// Command queue page of each function.
    pub qs: Vec<HostBuf>,
    pub token: u8,
    /// Next entry of each function.
    pub slots: Vec<u32>,
}

/// Mailbox layout (device.h `mlx5_cmd_prot_block`).
pub const MB_SIZE: usize = 576;
pub const MB_NEXT: usize = 560;
pub const MB_BLOCK_NUM: usize = 568;
pub const MB_TOKEN: usize = 573;

/// A mailbox chain for `len` message bytes (16 of them inline).
pub fn chain(tb: &Testbed, len: usize, token: u8) -> Vec<HostBuf> {
    let n = len.saturating_sub(16).div_ceil(512);
    let blocks: Vec<HostBuf> = (0..n).map(|_| tb.mem.alloc(MB_SIZE)).collect();
    for (i, b) in blocks.iter().enumerate() {
        let next = blocks.get(i + 1).map_or(0, |x| x.dma_addr());
        b.write(MB_NEXT, &next.to_be_bytes());
        b.write(MB_BLOCK_NUM, &(i as u32).to_be_bytes());
        b.write(MB_TOKEN, &[token]);
    }
    blocks
}

/// An entry as the test writes it (device.h `mlx5_cmd_layout`).
#[derive(Clone)]
pub struct Entry {
    pub typ: u8,
    pub inlen: u32,
    pub in_ptr: u64,
    pub inline_in: [u8; 16],
    pub out_ptr: u64,
    pub outlen: u32,
    pub token: u8,
    pub status_own: u8,
}

impl Entry {
    pub fn bytes(&self) -> [u8; 64] {
        let mut e = [0u8; 64];
        e[0] = self.typ;
        e[4..8].copy_from_slice(&self.inlen.to_be_bytes());
        e[8..16].copy_from_slice(&self.in_ptr.to_be_bytes());
        e[16..32].copy_from_slice(&self.inline_in);
        e[48..56].copy_from_slice(&self.out_ptr.to_be_bytes());
        e[56..60].copy_from_slice(&self.outlen.to_be_bytes());
        e[60] = self.token;
        e[63] = self.status_own;
        e
    }
}

impl Host {
    /// A two-port device (`caps`) whose function `port` has its command queue set up.
    pub fn with_caps(port: usize, caps: Caps) -> Self {
        let tb = Testbed::with_caps(2, caps);
        Self::on(tb, port)
    }

    /// Function `port` of `tb` (both functions get their command queue set up).
    pub fn on(tb: Testbed, port: usize) -> Self {
        let bus = tb.bus();
        let mut qs = Vec::new();
        for p in 0..2u32 {
            let q = tb.mem.alloc(4096);
            let base = p * FUNC;
            assert_eq!(
                bus.read32(base + 0x1fc) >> 31,
                0,
                "ready before cmdq (mlx5_core's pre-initializing wait)"
            );
            bus.write32(base + 0x10, (q.dma_addr() >> 32) as u32);
            bus.write32(base + 0x14, q.dma_addr() as u32);
            assert_eq!(bus.read32(base + 0x1fc) >> 31, 0, "ready after cmdq");
            qs.push(q);
        }
        Self {
            tb,
            bus,
            port,
            qs,
            token: 0,
            slots: vec![0, 0],
        }
    }

    pub fn new(port: usize) -> Self {
        Self::with_caps(port, Caps::FULL)
    }

    /// BAR0 offset of register `off` of this function.
    pub fn reg(&self, off: u32) -> u32 {
        self.port as u32 * FUNC + off
    }

    /// Writes `e` at the next slot, rings it, runs the device; returns the entry as the
    /// device left it.
    pub fn ring_entry(&mut self, e: &Entry) -> [u8; 64] {
        let slot = self.slots[self.port];
        self.slots[self.port] = (slot + 1) % 32;
        let q = self.qs[self.port].clone();
        q.write(slot as usize * 64, &e.bytes());
        self.bus.write32(self.reg(0x18), 1 << slot);
        self.tb.step();
        let mut got = [0u8; 64];
        q.read(slot as usize * 64, &mut got);
        got
    }

    fn next_token(&mut self) -> u8 {
        self.token = self.token.wrapping_add(1).max(1);
        self.token
    }

    /// A well-formed command entry with `token` for `input` (the first 16 bytes inline, the
    /// rest in a mailbox chain) and an output chain for `outlen` bytes: (entry, input
    /// mailboxes, output mailboxes).
    pub fn entry(
        &self,
        input: &[u8],
        outlen: usize,
        token: u8,
    ) -> (Entry, Vec<HostBuf>, Vec<HostBuf>) {
        let inb = chain(&self.tb, input.len(), token);
        let outb = chain(&self.tb, outlen, token);
        for (i, b) in inb.iter().enumerate() {
            let from = 16 + i * 512;
            let to = input.len().min(from + 512);
            b.write(0, &input[from..to]);
        }
        let mut inline_in = [0u8; 16];
        let k = input.len().min(16);
        inline_in[..k].copy_from_slice(&input[..k]);
        let e = Entry {
            typ: 7,
            inlen: input.len() as u32,
            in_ptr: inb.first().map_or(0, |b| b.dma_addr()),
            inline_in,
            out_ptr: outb.first().map_or(0, |b| b.dma_addr()),
            outlen: outlen as u32,
            token,
            status_own: 1,
        };
        (e, inb, outb)
    }

    /// Executes a command; Err(delivery status) or the output of `outlen` bytes.
    pub fn exec_raw(&mut self, input: &[u8], outlen: usize) -> Result<Out, u8> {
        let token = self.next_token();
        let (e, _inb, outb) = self.entry(input, outlen, token);
        let got = self.ring_entry(&e);
        assert_eq!(got[63] & 1, 0, "ownership back to software");
        if got[63] >> 1 != 0 {
            return Err(got[63] >> 1);
        }
        let mut out = vec![0u8; outlen];
        let k = outlen.min(16);
        out[..k].copy_from_slice(&got[32..32 + k]);
        for (i, b) in outb.iter().enumerate() {
            let from = 16 + i * 512;
            let to = outlen.min(from + 512);
            b.read(0, &mut out[from..to]);
        }
        Ok(Out { b: out })
    }

    /// Executes a command that must be delivered.
    pub fn exec(&mut self, input: &[u8], outlen: usize) -> Out {
        self.exec_raw(input, outlen).expect("delivered")
    }

    /// ENABLE_HCA, QUERY_ISSI, SET_ISSI 1, QUERY_HCA_CAP (general), INIT_HCA.
    pub fn bring_up(&mut self) {
        self.exec(&cmd_in(0x104, 0, 16), 12).ok();
        let issi = self.exec(&cmd_in(0x10a, 0, 16), 0x70).ok();
        assert_eq!(getf(&issi.b, 0x360, 32) & 2, 2, "ISSI 1 supported");
        let mut i = cmd_in(0x10b, 0, 16);
        put(&mut i, 0x50, 16, 1);
        self.exec(&i, 16).ok();
        self.exec(&cmd_in(0x100, 1, 16), 0x1010).ok();
        self.exec(&cmd_in(0x102, 0, 0x20), 16).ok();
    }

    /// [`Host::bring_up`], then a UAR, a PD and a transport domain: (uar, pd, td).
    pub fn bring_up_with_objects(&mut self) -> (u32, u32, u32) {
        self.bring_up();
        let uar = self.alloc(0x802);
        let pd = self.alloc(0x800);
        let td = self.alloc(0x816);
        (uar, pd, td)
    }

    /// ALLOC_UAR / ALLOC_PD / ALLOC_TRANSPORT_DOMAIN: the number.
    pub fn alloc(&mut self, opcode: u16) -> u32 {
        self.exec(&cmd_in(opcode, 0, 16), 16).ok().obj()
    }

    /// PPLR of local port 1 with loopback mode `lb` (2: internal loopback, the port
    /// receives what it sends).
    pub fn set_loopback(&mut self, lb: u64) -> Out {
        let mut pl = vec![0u8; 8];
        put(&mut pl, 0x8, 8, 1);
        put(&mut pl, 0x38, 8, lb);
        self.exec(&reg_in(0x5018, true, &pl), 24)
    }

    /// An SQ of 64 WQEBBs on `cqn` sending through `tis`, created and moved to RDY:
    /// (sqn, ring, doorbell record).
    pub fn ready_sq(&mut self, cqn: u32, tis: u32, pd: u32, uar: u32) -> (u32, HostBuf, HostBuf) {
        let sq = self.tb.mem.alloc(4096);
        let dbr = self.tb.mem.alloc(8);
        let sqn = self
            .exec(
                &sq_in(cqn, tis, pd, uar, dbr.dma_addr(), 6, sq.dma_addr()),
                16,
            )
            .ok()
            .obj();
        self.exec(&modify_in(0x905, sqn, 0, 1), 16).ok();
        (sqn, sq, dbr)
    }

    /// An RQ of 64 WQEs (16-byte stride) on `cqn`, created and moved to RDY, nothing
    /// posted: (rqn, ring, doorbell record).
    pub fn ready_rq(&mut self, cqn: u32, pd: u32) -> (u32, HostBuf, HostBuf) {
        let rq = self.tb.mem.alloc(1024);
        let dbr = self.tb.mem.alloc(8);
        let rqn = self
            .exec(&rq_in(cqn, pd, dbr.dma_addr(), 4, 6, rq.dma_addr()), 16)
            .ok()
            .obj();
        self.exec(&modify_in(0x909, rqn, 0, 1), 16).ok();
        (rqn, rq, dbr)
    }

    /// An RQT of the one RQ `rqn` and an indirect TIR over it in `td` with hash `key`: the
    /// TIR number.
    pub fn tir_over(&mut self, rqn: u32, td: u32, key: &[u8; 40]) -> u32 {
        let rqtn = self.exec(&rqt_in(&[rqn]), 16).ok().obj();
        self.exec(&tir_in(rqtn, td, key), 16).ok().obj()
    }

    /// An RQ of 64 WQEs on `cqn`, created, moved to RDY and every WQE posted with a 2 KiB
    /// buffer of its own: (rqn, ring, doorbell record).
    pub fn posted_rq(&mut self, cqn: u32, pd: u32) -> (u32, HostBuf, HostBuf) {
        let (rqn, rq, dbr) = self.ready_rq(cqn, pd);
        for i in 0..64 {
            let b = self.tb.mem.alloc(2048);
            rq.write(i * 16, &dseg(2048, 0, b.dma_addr()));
        }
        dbr.write_be32(0, 64);
        (rqn, rq, dbr)
    }

    /// Raw register accesses.
    pub fn bus_write32(&self, off: u32, v: u32) {
        self.bus.write32(off, v);
    }
    pub fn bus_write64(&self, off: u32, v: [u8; 8]) {
        self.bus.write64(off, v);
    }
    pub fn bus_read32(&self, off: u32) -> u32 {
        self.bus.read32(off)
    }

    /// Writes this function's command queue address again.
    pub fn reset_cmdq(&mut self) {
        let a = self.qs[self.port].dma_addr();
        self.bus.write32(self.reg(0x10), (a >> 32) as u32);
        self.bus.write32(self.reg(0x14), a as u32);
    }

    /// Runs the device.
    pub fn step(&mut self) {
        self.tb.step();
    }

    /// CREATE_EQ of 2^log EQEs on `uar`, vector `intr`, `mask` = event_bitmask[0]. The
    /// buffer has every owner byte 1, as eq.c init_eq_buf leaves it.
    pub fn create_eq(&mut self, log: u8, uar: u32, intr: u16, mask: u64) -> Result<Eq, Out> {
        let buf = self.tb.mem.alloc_eq(log);
        let o = self.exec(&eq_in(log, uar, intr, mask, buf.dma_addr()), 16);
        if o.status() != 0 {
            return Err(o);
        }
        Ok(Eq {
            eqn: getf(&o.b, 0x58, 8) as u32, // create_eq_out.eq_number
            buf,
            log,
            cc: 0,
            uar,
        })
    }

    /// CREATE_CQ of 2^log CQEs on `uar` and EQ `eqn` (buffer filled with op_own 0xf1).
    pub fn create_cq(&mut self, log: u8, uar: u32, eqn: u32, comp: bool) -> Result<Cq, Out> {
        let buf = self.tb.mem.alloc(64 << log);
        for i in 0..(1usize << log) {
            buf.write(i * 64 + 63, &[0xf1]);
        }
        let dbr = self.tb.mem.alloc(8);
        let o = self.exec(
            &cq_in(log, uar, eqn, comp, buf.dma_addr(), dbr.dma_addr()),
            16,
        );
        if o.status() != 0 {
            return Err(o);
        }
        Ok(Cq {
            buf,
            dbr,
            cqn: o.obj(),
            log,
            cc: 0,
        })
    }

    /// The EQ doorbell of `eq` (0x40 arm + ci, 0x48 ci only) with its consumer index.
    pub fn eq_doorbell(&self, eq: &Eq, arm: bool) {
        let off = self.reg(eq.uar * 4096 + if arm { 0x40 } else { 0x48 });
        self.bus.write32(off, (eq.eqn << 24) | (eq.cc & 0xff_ffff));
    }

    /// The CQ arm doorbell (UAR + 0x20) with sn, ci: {BE32(sn << 28 | ci), BE32(cqn)}.
    pub fn cq_arm(&self, cq: &Cq, uar: u32, sn: u32) {
        let hi = (sn << 28) | (cq.cc & 0xff_ffff);
        let mut b = [0u8; 8];
        b[..4].copy_from_slice(&hi.to_be_bytes());
        b[4..].copy_from_slice(&cq.cqn.to_be_bytes());
        cq.dbr.write_be32(4, hi);
        self.bus.write64(self.reg(uar * 4096 + 0x20), b);
    }
}

/// A CQ as the test host keeps it.
pub use crate::sim_util::Cq;

/// An EQ as eq.c keeps it.
pub struct Eq {
    pub eqn: u32,
    pub buf: HostBuf,
    pub log: u8,
    pub cc: u32,
    pub uar: u32,
}

impl Eq {
    /// eq.c next_eqe_sw: the EQE at cc is software's when (owner ^ (cc >> log)) & 1 == 0.
    pub fn poll(&mut self) -> Option<[u8; 64]> {
        let mask = (1u32 << self.log) - 1;
        let mut e = [0u8; 64];
        self.buf.read(((self.cc & mask) * 64) as usize, &mut e);
        if (u32::from(e[63]) ^ (self.cc >> self.log)) & 1 != 0 {
            return None;
        }
        self.cc = self.cc.wrapping_add(1);
        Some(e)
    }
}

/// Appends a PAS list of `n` contiguous 4 KiB pages from `addr` at byte `at`.
pub fn pas(i: &mut [u8], at: usize, addr: u64, n: usize) {
    for p in 0..n {
        let a = addr + 4096 * p as u64;
        i[at + 8 * p..at + 8 * p + 8].copy_from_slice(&a.to_be_bytes());
    }
}

fn pages(bytes: usize) -> usize {
    bytes.div_ceil(4096).max(1)
}

/// create_eq_in.
pub fn eq_in(log: u8, uar: u32, intr: u16, mask: u64, buf: u64) -> Vec<u8> {
    let n = pages(64 << log);
    let mut i = cmd_in(0x301, 0, 0x110 + 8 * n);
    put(&mut i, 0xe3, 5, u64::from(log)); // eq_context_entry.log_eq_size
    put(&mut i, 0xe8, 24, u64::from(uar)); // eq_context_entry.uar_page
    put(&mut i, 0x134, 12, u64::from(intr)); // eq_context_entry.intr
    i[0x58..0x60].copy_from_slice(&mask.to_be_bytes()); // event_bitmask[0]
    pas(&mut i, 0x110, buf, n);
    i
}

/// create_cq_in.
pub fn cq_in(log: u8, uar: u32, eqn: u32, comp: bool, buf: u64, dbr: u64) -> Vec<u8> {
    let n = pages(64 << log);
    let mut i = cmd_in(0x400, 0, 0x110 + 8 * n);
    if comp {
        put(&mut i, 0x91, 1, 1); // cq_context.cqe_comp_en
        put(&mut i, 0x92, 2, 1); // cq_context.mini_cqe_res_format = CSUM
    }
    put(&mut i, 0xe3, 5, u64::from(log)); // cq_context.log_cq_size
    put(&mut i, 0xe8, 24, u64::from(uar)); // cq_context.uar_page
    put(&mut i, 0x120, 32, u64::from(eqn)); // cq_context.c_eqn_or_apu_element
    i[0x48..0x50].copy_from_slice(&dbr.to_be_bytes()); // cq_context.dbr_addr
    pas(&mut i, 0x110, buf, n);
    i
}

/// create_tis_in.
pub fn tis_in(td: u32) -> Vec<u8> {
    let mut i = cmd_in(0x912, 0, 0xc0);
    put(&mut i, 0x228, 24, u64::from(td)); // ctx.transport_domain
    i
}

/// The wq part shared by create_sq_in / create_rq_in (ctx at byte 0x20, wq at 0x50).
#[allow(clippy::too_many_arguments)]
fn wq(i: &mut [u8], pd: u32, uar: u32, dbr: u64, log_stride: u8, log: u8, buf: u64, n: usize) {
    put(i, 0x280, 4, 1); // wq.wq_type = cyclic
    put(i, 0x2c8, 24, u64::from(pd)); // wq.pd
    put(i, 0x2e8, 24, u64::from(uar)); // wq.uar_page
    i[0x60..0x68].copy_from_slice(&dbr.to_be_bytes()); // wq.dbr_addr
    put(i, 0x38c, 4, u64::from(log_stride)); // wq.log_wq_stride
    put(i, 0x39b, 5, u64::from(log)); // wq.log_wq_sz
    pas(i, 0x110, buf, n);
}

/// create_sq_in (state RST).
pub fn sq_in(cqn: u32, tisn: u32, pd: u32, uar: u32, dbr: u64, log: u8, buf: u64) -> Vec<u8> {
    let n = pages(64 << log);
    let mut i = cmd_in(0x904, 0, 0x110 + 8 * n);
    put(&mut i, 0x148, 24, u64::from(cqn)); // ctx.cqn
    put(&mut i, 0x200, 16, 1); // ctx.tis_lst_sz
    put(&mut i, 0x268, 24, u64::from(tisn)); // ctx.tis_num_0
    wq(&mut i, pd, uar, dbr, 6, log, buf, n);
    i
}

/// create_rq_in (state RST).
pub fn rq_in(cqn: u32, pd: u32, dbr: u64, log_stride: u8, log: u8, buf: u64) -> Vec<u8> {
    let n = pages(1 << (log + log_stride));
    let mut i = cmd_in(0x908, 0, 0x110 + 8 * n);
    put(&mut i, 0x148, 24, u64::from(cqn)); // ctx.cqn
    wq(&mut i, pd, 0, dbr, log_stride, log, buf, n);
    i
}

/// modify_sq_in / modify_rq_in (opcode 0x905 / 0x909).
pub fn modify_in(opcode: u16, qn: u32, cur: u8, next: u8) -> Vec<u8> {
    let mut i = cmd_in(opcode, 0, 0x110);
    put(&mut i, 0x40, 4, u64::from(cur)); // sq_state / rq_state
    put(&mut i, 0x48, 24, u64::from(qn)); // sqn / rqn
    put(&mut i, 0x108, 4, u64::from(next)); // ctx.state
    i
}

/// A command naming one object at bit 0x48 (destroy_*, dealloc_*, query_sq/rq).
pub fn obj_in(opcode: u16, n: u32) -> Vec<u8> {
    let mut i = cmd_in(opcode, 0, 16);
    put(&mut i, 0x48, 24, u64::from(n));
    i
}

/// create_rqt_in with `rqns` (max size = len).
pub fn rqt_in(rqns: &[u32]) -> Vec<u8> {
    let mut i = cmd_in(0x916, 0, 0x110 + 4 * rqns.len());
    put(&mut i, 0x1b0, 16, rqns.len() as u64); // rqt_context.rqt_max_size
    put(&mut i, 0x1d0, 16, rqns.len() as u64); // rqt_context.rqt_actual_size
    for (k, r) in rqns.iter().enumerate() {
        i[0x110 + 4 * k..0x114 + 4 * k].copy_from_slice(&r.to_be_bytes());
    }
    i
}

/// create_tir_in: indirect, Toeplitz, `key`.
pub fn tir_in(rqtn: u32, td: u32, key: &[u8; 40]) -> Vec<u8> {
    let mut i = cmd_in(0x900, 0, 0x110);
    put(&mut i, 0x120, 4, 1); // ctx.disp_type = indirect
    put(&mut i, 0x208, 24, u64::from(rqtn)); // ctx.indirect_table
    put(&mut i, 0x220, 4, 2); // ctx.rx_hash_fn = Toeplitz
    put(&mut i, 0x228, 24, u64::from(td)); // ctx.transport_domain
    i[0x48..0x70].copy_from_slice(key); // ctx.rx_hash_toeplitz_key
    i
}

/// access_register_in for `reg` (op_mod 0 write, 1 read) with `data`.
pub fn reg_in(reg: u16, write: bool, data: &[u8]) -> Vec<u8> {
    let mut i = cmd_in(0x805, u16::from(!write), 16 + data.len());
    put(&mut i, 0x50, 16, u64::from(reg)); // register_id
    i[16..].copy_from_slice(data);
    i
}

/// PAOS data (16 bytes): local_port 1, admin_status, ase.
pub fn paos(admin: u8) -> Vec<u8> {
    let mut r = vec![0u8; 16];
    put(&mut r, 0x8, 8, 1); // local_port
    put(&mut r, 0x14, 4, u64::from(admin)); // admin_status
    put(&mut r, 0x20, 1, 1); // ase
    r
}
