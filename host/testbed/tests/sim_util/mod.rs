//! Shared helpers of the sim_* tests: a minimal hand-written "driver" that builds mlx5 WQEs
//! and reads CQEs straight from rsnic-hardware.rst (parts A–C), independent of both the
//! device model and the real driver.

#![allow(dead_code)]

use rsnic_core::hwif::hw::{Coherent, Mmio};
pub use rsnic_core::sim::mlx5::api_uar_offset;
use rsnic_core::sim::mlx5::{Caps, CqConfig, RqConfig, SqConfig};
use rsnic_testbed::bus::{RegisterBus, Testbed};
use rsnic_testbed::mem::HostBuf;

pub const OP_NOP: u8 = 0x00;
pub const OP_SEND: u8 = 0x0a;
pub const OP_LSO: u8 = 0x0e;
pub const OP_MPSW: u8 = 0x29;
pub const CQ_UPDATE: u8 = 0x08;

/// Ctrl segment (A.3): opmod_idx_opcode, qpn_ds, signature 0, fm_ce_se, general id 0.
pub fn ctrl(opcode: u8, idx: u16, sqn: u32, ds: u8, fm_ce_se: u8) -> [u8; 16] {
    let mut c = [0u8; 16];
    c[0..4].copy_from_slice(&(((idx as u32) << 8) | opcode as u32).to_be_bytes());
    c[4..8].copy_from_slice(&((sqn << 8) | (ds as u32 & 0x3f)).to_be_bytes());
    c[11] = fm_ce_se;
    c
}

/// Eth segment (A.3) with cs_flags, mss and inline_hdr.sz/start (the first 2 inline bytes).
pub fn eseg(cs_flags: u8, mss: u16, inline_sz: u16, start: [u8; 2]) -> [u8; 16] {
    let mut e = [0u8; 16];
    e[4] = cs_flags;
    e[6..8].copy_from_slice(&mss.to_be_bytes());
    e[12..14].copy_from_slice(&inline_sz.to_be_bytes());
    e[14..16].copy_from_slice(&start);
    e
}

/// Data segment (A.3): byte_count, lkey, addr.
pub fn dseg(len: u32, lkey: u32, addr: u64) -> [u8; 16] {
    let mut d = [0u8; 16];
    d[0..4].copy_from_slice(&len.to_be_bytes());
    d[4..8].copy_from_slice(&lkey.to_be_bytes());
    d[8..16].copy_from_slice(&addr.to_be_bytes());
    d
}

/// A CQ as the driver keeps it (C.2).
pub struct Cq {
    pub buf: HostBuf,
    pub dbr: HostBuf,
    pub cqn: u32,
    pub log: u8,
    pub cc: u32,
}

impl Cq {
    /// Is the CQE at cc software-owned? (op_own & 1) == (cc >> log) & 1.
    pub fn peek(&self) -> Option<[u8; 64]> {
        let mask = (1u32 << self.log) - 1;
        let off = ((self.cc & mask) * 64) as usize;
        let mut c = [0u8; 64];
        self.buf.read(off, &mut c);
        if (c[63] & 1) as u32 == (self.cc >> self.log) & 1 {
            Some(c)
        } else {
            None
        }
    }

    pub fn poll(&mut self) -> Option<[u8; 64]> {
        let c = self.peek()?;
        self.cc = self.cc.wrapping_add(1);
        Some(c)
    }

    /// Raw slot contents at CQ index `idx`.
    pub fn slot(&self, idx: u32) -> [u8; 64] {
        let mask = (1u32 << self.log) - 1;
        let mut c = [0u8; 64];
        self.buf.read(((idx & mask) * 64) as usize, &mut c);
        c
    }

    pub fn update_ci(&self) {
        self.dbr.write_be32(0, self.cc & 0xff_ffff);
    }
}

pub fn cqe_opcode(c: &[u8; 64]) -> u8 {
    c[63] >> 4
}
pub fn cqe_wqe_counter(c: &[u8; 64]) -> u16 {
    u16::from_be_bytes([c[60], c[61]])
}
pub fn cqe_byte_cnt(c: &[u8; 64]) -> u32 {
    u32::from_be_bytes([c[44], c[45], c[46], c[47]])
}
pub fn cqe_syndrome(c: &[u8; 64]) -> u8 {
    c[55]
}

/// Options of a [`Rig`].
#[derive(Clone, Copy)]
pub struct RigOpts {
    pub sq_log: u8,
    pub tx_cq_log: u8,
    pub rq_log: u8,
    pub rx_cq_log: u8,
    pub rx_buf: usize,
    pub compress: bool,
    /// RX WQEs posted at creation.
    pub rx_posted: u16,
    /// The device's `max_wqe_sz_sq` ([`Caps::max_wqe_sz_sq`]).
    pub max_wqe_sz_sq: u16,
}

impl Default for RigOpts {
    fn default() -> Self {
        Self {
            sq_log: 6,
            tx_cq_log: 6,
            rq_log: 6,
            rx_cq_log: 6,
            rx_buf: 2048,
            compress: false,
            rx_posted: 64,
            max_wqe_sz_sq: Caps::FULL.max_wqe_sz_sq,
        }
    }
}

/// Port 0 transmits (SQ + TX CQ, vector 1), port 1 receives (RQ + RX CQ, vector 2), RSS of
/// port 1 = [rqn]. RX WQEs are one data segment (stride 16) pointing at `rx_bufs[i]`.
pub struct Rig {
    pub tb: Testbed,
    pub bus: RegisterBus,
    pub sq: HostBuf,
    pub sq_dbr: HostBuf,
    pub sqn: u32,
    pub sq_log: u8,
    pub pc: u16,
    pub tx_cq: Cq,
    pub rq: HostBuf,
    pub rq_dbr: HostBuf,
    pub rqn: u32,
    pub rq_log: u8,
    pub rq_pc: u16,
    pub rx_cq: Cq,
    pub rx_bufs: Vec<HostBuf>,
    pub rx_buf_len: usize,
    /// The lkey of the TX data segments [`Rig::send_wqe`] writes (the model checks it once
    /// the function has a memory key).
    pub lkey: u32,
}

pub fn new_cq(tb: &Testbed, port: usize, log: u8, vector: u16, compress: bool) -> Cq {
    let buf = tb.mem.alloc(64 << log);
    for i in 0..(1usize << log) {
        buf.write(i * 64 + 63, &[0xf1]);
        buf.write(i * 64 + 62, &[0xff]);
    }
    let dbr = tb.mem.alloc(8);
    let cqn = tb
        .device()
        .create_cq(&CqConfig {
            port,
            buf: buf.dma_addr(),
            log_size: log,
            dbr: dbr.dma_addr(),
            vector,
            compress,
        })
        .unwrap();
    Cq {
        buf,
        dbr,
        cqn,
        log,
        cc: 0,
    }
}

/// An SQ of 2^`log` WQEBBs on `port` completing to `cqn`: its ring, doorbell record and
/// number.
pub fn new_sq(tb: &Testbed, port: usize, log: u8, cqn: u32) -> (HostBuf, HostBuf, u32) {
    let ring = tb.mem.alloc(64 << log);
    let dbr = tb.mem.alloc(8);
    let cfg = SqConfig {
        port,
        buf: ring.dma_addr(),
        log_size: log,
        dbr: dbr.dma_addr(),
        cqn,
    };
    let sqn = tb.device().create_sq(&cfg).unwrap();
    (ring, dbr, sqn)
}

impl Rig {
    pub fn new(o: RigOpts) -> Self {
        let tb = Testbed::with_caps(
            2,
            Caps {
                max_wqe_sz_sq: o.max_wqe_sz_sq,
                ..Caps::FULL
            },
        );
        let bus = tb.bus();
        let tx_cq = new_cq(&tb, 0, o.tx_cq_log, 1, false);
        let (sq, sq_dbr, sqn) = new_sq(&tb, 0, o.sq_log, tx_cq.cqn);
        let rx_cq = new_cq(&tb, 1, o.rx_cq_log, 2, o.compress);
        let rq = tb.mem.alloc(16 << o.rq_log);
        let rq_dbr = tb.mem.alloc(8);
        let rqn = tb
            .device()
            .create_rq(&RqConfig {
                port: 1,
                buf: rq.dma_addr(),
                log_size: o.rq_log,
                log_stride: 4,
                dbr: rq_dbr.dma_addr(),
                cqn: rx_cq.cqn,
            })
            .unwrap();
        tb.device().set_rss(1, &[rqn]).unwrap();
        let rx_bufs: Vec<HostBuf> = (0..1usize << o.rq_log)
            .map(|_| tb.mem.alloc(o.rx_buf))
            .collect();
        for (i, b) in rx_bufs.iter().enumerate() {
            // byte_count = size | HW_START_PADDING as mlx5e writes it (C.4).
            rq.write(
                i * 16,
                &dseg(o.rx_buf as u32 | 0x8000_0000, 0x1234, b.dma_addr()),
            );
        }
        let mut rig = Self {
            tb,
            bus,
            sq,
            sq_dbr,
            sqn,
            sq_log: o.sq_log,
            pc: 0,
            tx_cq,
            rq,
            rq_dbr,
            rqn,
            rq_log: o.rq_log,
            rq_pc: 0,
            rx_cq,
            rx_bufs,
            rx_buf_len: o.rx_buf,
            lkey: 0x1234,
        };
        rig.post_rx(o.rx_posted);
        rig
    }

    /// A rig of the default options but for `n` RX WQEs posted at creation (a receiver
    /// short of buffers).
    pub fn with_rx_posted(n: u16) -> Self {
        Self::new(RigOpts {
            rx_posted: n,
            ..RigOpts::default()
        })
    }

    /// Makes `n` more RX WQEs available: RQ DBR db[0] = BE32(wqe_ctr).
    pub fn post_rx(&mut self, n: u16) {
        self.rq_pc = self.rq_pc.wrapping_add(n);
        self.rq_dbr.write_be32(0, self.rq_pc as u32);
    }

    /// Writes a WQE at pc (it must not cross the ring end) and advances pc by its WQEBBs.
    /// Returns the WQE's index.
    pub fn post(&mut self, wqe: &[u8]) -> u16 {
        let mask = (1u16 << self.sq_log) - 1;
        let idx = self.pc;
        let off = ((idx & mask) as usize) * 64;
        let n = wqe.len().div_ceil(64);
        self.sq.zero(off, n * 64);
        self.sq.write(off, wqe);
        self.pc = self.pc.wrapping_add(n as u16);
        idx
    }

    /// Rings: SQ DBR db[1] = BE32(pc), then the first 8 bytes of `ctrl` to UAR 0 + 0x800.
    pub fn ring(&self, ctrl: &[u8; 16]) {
        self.sq_dbr.write_be32(4, self.pc as u32);
        let mut b = [0u8; 8];
        b.copy_from_slice(&ctrl[..8]);
        self.bus.write64(api_uar_offset(0) + 0x800, b);
    }

    /// A SEND WQE: ctrl, eth (no inline), one data segment pointing at `buf`.
    pub fn send_wqe(&self, idx: u16, buf: &HostBuf, len: u32, fm: u8) -> Vec<u8> {
        let mut w = Vec::new();
        w.extend_from_slice(&ctrl(OP_SEND, idx, self.sqn, 3, fm));
        w.extend_from_slice(&eseg(0, 0, 0, [0, 0]));
        w.extend_from_slice(&dseg(len, self.lkey, buf.dma_addr()));
        w
    }

    /// Posts a SEND of `data` (copied into a fresh DMA buffer) and returns (index, ctrl).
    pub fn post_send(&mut self, data: &[u8], fm: u8) -> (u16, [u8; 16]) {
        let buf = self.tb.mem.alloc_from(data);
        let idx = self.pc;
        let w = self.send_wqe(idx, &buf, data.len() as u32, fm);
        self.post(&w);
        let mut c = [0u8; 16];
        c.copy_from_slice(&w[..16]);
        (idx, c)
    }

    /// Posts a SEND of `data` ([`Rig::post_send`]) and rings its doorbell; returns its index.
    pub fn send(&mut self, data: &[u8], fm: u8) -> u16 {
        let (idx, c) = self.post_send(data, fm);
        self.ring(&c);
        idx
    }

    /// Bytes of RX buffer `i` (ring index).
    pub fn rx_data(&self, i: usize, len: usize) -> Vec<u8> {
        self.rx_bufs[i % self.rx_bufs.len()].to_vec()[..len].to_vec()
    }
}

/// An IPv4 header without options: total length `total`, identification `id`, DF, TTL 64,
/// protocol `proto`, checksum left 0.
pub fn ipv4_hdr(total: u16, id: u16, proto: u8, src: [u8; 4], dst: [u8; 4]) -> [u8; 20] {
    let mut h = [0u8; 20];
    h[0] = 0x45;
    h[2..4].copy_from_slice(&total.to_be_bytes());
    h[4..6].copy_from_slice(&id.to_be_bytes());
    h[6] = 0x40;
    h[8] = 64;
    h[9] = proto;
    h[12..16].copy_from_slice(&src);
    h[16..20].copy_from_slice(&dst);
    h
}

/// A UDP/IPv4 frame with `payload` bytes (checksums left 0).
pub fn udp4_frame(payload: usize, sport: u16, dport: u16) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&[0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x00]);
    let total = (20 + 8 + payload) as u16;
    f.extend_from_slice(&ipv4_hdr(total, 0x1234, 17, [10, 0, 0, 1], [10, 0, 0, 2]));
    let ulen = (8 + payload) as u16;
    f.extend_from_slice(&sport.to_be_bytes());
    f.extend_from_slice(&dport.to_be_bytes());
    f.extend_from_slice(&ulen.to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    for i in 0..payload {
        f.push((i * 7 + 3) as u8);
    }
    f
}

/// Test-side reference Internet checksum (RFC 1071), written independently of the model.
pub fn inet_csum(chunks: &[&[u8]]) -> u16 {
    let mut all = Vec::new();
    for c in chunks {
        all.extend_from_slice(c);
    }
    if all.len() % 2 == 1 {
        all.push(0);
    }
    let mut s: u32 = 0;
    for w in all.chunks(2) {
        s += u16::from_be_bytes([w[0], w[1]]) as u32;
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}
