// SPDX-License-Identifier: GPL-2.0

//! The simulated ConnectX against a hostile driver.
//!
//! Port 0 has two SQs sharing one TX CQ; port 1 (wired to port 0) has an RQ behind RSS with
//! a CQ that may compress. The input then runs a program of what a driver can do to a
//! device: write WQEs into the SQ rings (plausible ones of every opcode with eth segments,
//! inline headers, inline and data segments whose addresses point into packet buffers,
//! across their ends, into guard pages, into unmapped or freed memory, or anywhere; and raw
//! bytes), write doorbell records with any producer counter, ring doorbells at any register
//! with any queue number, arm CQs, move (or not) the CQ consumer indices, post RX WQEs with
//! hostile addresses and lengths, unmap buffers, reset queues, toggle links, loopback and
//! RSS, and let the device run with a WQE budget.
//!
//! Invariants checked:
//! * nothing panics;
//! * a DMA access that succeeds lies inside a live (mapped) region, and the device writes only
//!   where a device may write (CQ buffers and RX buffers, never SQ rings, doorbell records or
//!   TX packet data);
//! * counters balance: WQEs executed = good (`wqes`) + rejected (`wqe_errors`), good = NOP +
//!   SEND + LSO + MPWQE, every rejection wrote (or lost) an error CQE, every TX CQE was
//!   written or counted lost, every frame port 0 put on the wire reached port 1 and was
//!   received or counted as a drop there, every frame port 0 looped back was counted as a
//!   drop at its own receive side (it has no RSS table), every received frame or RX error
//!   has a CQE, every interrupt was raised;
//! * an SQ in the error state executes nothing until it is reset.

use rsnic_core::hwif::hw::Coherent;
use rsnic_core::sim::mlx5::{
    api_uar_offset, CqConfig, PortCounters, QueueState, RqConfig, SqConfig, CQ_ARM_DOORBELL,
    SQ_DOORBELL,
};
use rsnic_testbed::bus::{new_mlx5, HostMlx5};
use rsnic_testbed::mem::HostBuf;

use crate::device::{tcp4_frame, Checked, Irqs, Targets};
use crate::Input;

const OP_NOP: u8 = 0x00;
const OP_SEND: u8 = 0x0a;
const OP_LSO: u8 = 0x0e;
const OP_MPSW: u8 = 0x29;
const CQ_UPDATE: u8 = 0x08;
const RX_BUFS: usize = 8;
const RX_BUF_SIZE: usize = 2048;

struct SqH {
    sqn: u32,
    ring: HostBuf,
    dbr: HostBuf,
    log: u8,
    /// The "driver's" producer counter.
    pc: u16,
}

struct Harness {
    dev: HostMlx5,
    mem: Checked,
    irqs: Irqs,
    sqs: [SqH; 2],
    tx_cqn: u32,
    tx_cq_dbr: HostBuf,
    rx_cqn: u32,
    rx_cq_dbr: HostBuf,
    rqn: u32,
    rq_ring: HostBuf,
    rq_dbr: HostBuf,
    rq_log: u8,
    /// Packet and receive buffers, what the hostile driver points the device at.
    t: Targets,
    executed: u64,
}

fn init_cq(buf: &HostBuf) {
    for i in 0..buf.size() / 64 {
        buf.write(i * 64 + 62, &[0xff, 0xf1]);
    }
}

/// A hardware-owned CQ `name` of `2^log` entries on `port`, raising the vector of the same
/// number: (cqn, doorbell record).
fn new_cq(
    dev: &mut HostMlx5,
    mem: &Checked,
    port: usize,
    log: u8,
    compress: bool,
    name: &'static str,
) -> (u32, HostBuf) {
    let buf = mem.alloc(64 << log, true, name);
    init_cq(&buf);
    let dbr = mem.alloc(8, false, "cq dbr");
    let cqn = dev
        .create_cq(&CqConfig {
            port,
            buf: buf.dma_addr(),
            log_size: log,
            dbr: dbr.dma_addr(),
            vector: port as u16,
            compress,
        })
        .expect(name);
    (cqn, dbr)
}

impl Harness {
    /// Builds a plausible WQE at the SQ's "driver" producer counter, or somewhere else.
    fn structured_wqe(&mut self, inp: &mut Input<'_>) {
        let sel = inp.u8();
        let flags = inp.u8();
        let q = usize::from(sel & 1);
        let opcode = match (sel >> 1) & 7 {
            0 => OP_NOP,
            1 | 2 => OP_SEND,
            3 => OP_LSO,
            4 | 5 => OP_MPSW,
            6 => OP_SEND,
            _ => inp.u8(),
        };
        let mut w = [0u8; 1024];
        let mut ds = 1usize;
        if opcode != OP_NOP {
            // Eth segment.
            w[20] = inp.u8(); // cs_flags
            if flags & 0x02 != 0 {
                inp.fill(&mut w[16..20]);
                w[21] = inp.u8();
            }
            let mss = match opcode {
                OP_LSO => 1 + inp.u16() % 9000,
                _ if flags & 0x04 != 0 => inp.u16(),
                _ => 0,
            };
            w[22..24].copy_from_slice(&mss.to_be_bytes());
            let isel = inp.u8();
            let inline_sz: usize = match isel % 8 {
                0..=2 if opcode == OP_LSO => 54,
                0..=2 => 0,
                3 => 18,
                4 => 54,
                5 => usize::from(inp.u8()),
                6 => {
                    // VLAN insertion instead of an inline header.
                    let t = 0x8000u16 | u16::from(isel >> 7);
                    w[28..30].copy_from_slice(&t.to_be_bytes());
                    w[30..32].copy_from_slice(&inp.u16().to_be_bytes());
                    0
                }
                _ => usize::from(inp.u16() % 1100),
            };
            if isel % 8 != 6 {
                w[28..30].copy_from_slice(&(inline_sz as u16).to_be_bytes());
                let hdr = tcp4_frame(inline_sz.max(54), false);
                let end = (30 + inline_sz).min(w.len());
                w[30..end].copy_from_slice(&hdr[..end - 30]);
            }
            ds = if inline_sz <= 2 {
                2
            } else {
                2 + (inline_sz - 2).div_ceil(16)
            };
            // Segments.
            for _ in 0..inp.u8() % 10 {
                if ds >= 63 {
                    break;
                }
                let at = ds * 16;
                if inp.u8() & 3 == 0 {
                    let len = usize::from(inp.u8()) % 200;
                    let bc = 0x8000_0000u32 | len as u32;
                    w[at..at + 4].copy_from_slice(&bc.to_be_bytes());
                    let data = tcp4_frame(len.max(54), false);
                    let end = (at + 4 + len).min(w.len());
                    w[at + 4..end].copy_from_slice(&data[..end - at - 4]);
                    ds += (4 + len).div_ceil(16);
                } else {
                    let len = self.t.seg_len(inp, 4);
                    let addr = self.t.addr(inp);
                    w[at..at + 4].copy_from_slice(&len.to_be_bytes());
                    w[at + 4..at + 8].copy_from_slice(&0x1234u32.to_be_bytes());
                    w[at + 8..at + 16].copy_from_slice(&addr.to_be_bytes());
                    ds += 1;
                }
            }
        }
        let ds = if flags & 0x08 != 0 {
            usize::from(inp.u8())
        } else {
            ds.min(63)
        };
        let sq = &self.sqs[q];
        let index = if flags & 0x10 != 0 { inp.u16() } else { sq.pc };
        let opmod = if flags & 0x20 != 0 { inp.u8() } else { 0 };
        let sqn = if flags & 0x40 != 0 {
            self.sqs[q ^ 1].sqn
        } else {
            sq.sqn
        };
        let w0 = (u32::from(opmod) << 24) | (u32::from(index) << 8) | u32::from(opcode);
        w[0..4].copy_from_slice(&w0.to_be_bytes());
        w[4..8].copy_from_slice(&((sqn << 8) | (ds as u32 & 0x3f)).to_be_bytes());
        w[11] = if flags & 0x80 != 0 {
            CQ_UPDATE
        } else {
            inp.u8()
        };
        let size = 64usize << sq.log;
        let ix = usize::from(sq.pc) & ((1 << sq.log) - 1);
        let len = (ds & 0x3f).max(1) * 16;
        // A hostile driver may also wrap a WQE around the ring end.
        for (k, chunk) in w[..len].chunks(16).enumerate() {
            sq.ring.write((ix * 64 + k * 16) % size, chunk);
        }
        let nw = (ds & 0x3f).max(1).div_ceil(4) as u16;
        self.sqs[q].pc = self.sqs[q].pc.wrapping_add(nw);
    }

    fn ring_sq(&mut self, inp: &mut Input<'_>) {
        let sel = inp.u8();
        let q = usize::from(sel & 1);
        let sq = &self.sqs[q];
        let dev_cc = self.dev.sq_consumer(sq.sqn).expect("sq");
        let pc = match (sel >> 1) & 7 {
            0..=3 => u32::from(sq.pc),
            4 => u32::from(dev_cc.wrapping_add(u16::from(inp.u8() % 80))),
            5 => u32::from(inp.u16()),
            6 => inp.u32(),
            _ => u32::from(dev_cc),
        };
        sq.dbr.write_be32(4, pc);
        let sqn = match (sel >> 4) & 3 {
            0 | 1 => sq.sqn,
            2 => self.sqs[q ^ 1].sqn,
            _ => inp.u32() >> 8,
        };
        let hi = inp.u32();
        let lo = (sqn << 8) | u32::from(inp.u8() & 0x3f);
        let mut b = [0u8; 8];
        b[..4].copy_from_slice(&hi.to_be_bytes());
        b[4..].copy_from_slice(&lo.to_be_bytes());
        let page = if sel & 0x40 != 0 { 1 } else { 0 };
        self.dev.mmio_write64(api_uar_offset(page) + SQ_DOORBELL, b);
    }

    fn arm(&mut self, inp: &mut Input<'_>) {
        let sel = inp.u8();
        let (cqn, port) = if sel & 1 == 0 {
            (self.tx_cqn, 0)
        } else {
            (self.rx_cqn, 1)
        };
        let ci = match (sel >> 1) & 3 {
            0 | 1 => self.dev.cq_producer(cqn).expect("cq"),
            2 => u32::from(inp.u16()),
            _ => inp.u32(),
        };
        let hi = (u32::from(sel >> 6) << 28) | (ci & 0xff_ffff) | (u32::from(sel & 8) << 21);
        let mut b = [0u8; 8];
        b[..4].copy_from_slice(&hi.to_be_bytes());
        b[4..].copy_from_slice(&cqn.to_be_bytes());
        let page = if sel & 0x20 != 0 { port ^ 1 } else { port };
        self.dev
            .mmio_write64(api_uar_offset(page) + CQ_ARM_DOORBELL, b);
    }

    fn consume(&mut self, inp: &mut Input<'_>) {
        let sel = inp.u8();
        let (cqn, dbr) = if sel & 1 == 0 {
            (self.tx_cqn, &self.tx_cq_dbr)
        } else {
            (self.rx_cqn, &self.rx_cq_dbr)
        };
        let ci = match (sel >> 1) & 3 {
            0 | 1 => self.dev.cq_producer(cqn).expect("cq"),
            2 => self
                .dev
                .cq_producer(cqn)
                .expect("cq")
                .wrapping_sub(u32::from(inp.u8())),
            _ => inp.u32(),
        };
        dbr.write_be32(0, ci);
    }

    fn post_rx(&mut self, inp: &mut Input<'_>) {
        let sel = inp.u8();
        let cc = self.dev.rq_consumer(self.rqn).expect("rq");
        let v = match sel & 3 {
            0 | 1 => u32::from(cc.wrapping_add(1 << self.rq_log)),
            2 => u32::from(cc.wrapping_add(u16::from(inp.u8() % 40))),
            _ => inp.u32(),
        };
        self.rq_dbr.write_be32(0, v);
        if sel & 4 != 0 {
            // A hostile RX WQE: any length, an address that may not be a (whole) buffer.
            let ix = usize::from(inp.u8()) % (1 << self.rq_log);
            let mut w = [0u8; 16];
            let len = if sel & 8 != 0 {
                inp.u32()
            } else {
                RX_BUF_SIZE as u32
            };
            w[0..4].copy_from_slice(&len.to_be_bytes());
            w[4..8].copy_from_slice(&inp.u32().to_be_bytes());
            let addr = match (sel >> 4) % 4 {
                0 | 1 => self.t.rx_bufs[usize::from(sel) % RX_BUFS].dma_addr(),
                _ => {
                    let a = self.t.addr(inp);
                    // Only RX buffers and faulting addresses: the harness does not hand the
                    // device its rings as receive buffers.
                    if self.mem.writable_or_unmapped(a) {
                        a
                    } else {
                        self.t.freed
                    }
                }
            };
            w[8..16].copy_from_slice(&addr.to_be_bytes());
            self.rq_ring.write(ix * 16, &w);
        }
    }

    fn process(&mut self, inp: &mut Input<'_>) {
        let budget = usize::from(inp.u8());
        let before = self.dev.totals();
        let states: Vec<(u32, QueueState, u16)> = self
            .sqs
            .iter()
            .map(|s| {
                (
                    s.sqn,
                    self.dev.sq_state(s.sqn).expect("sq"),
                    self.dev.sq_consumer(s.sqn).expect("sq"),
                )
            })
            .collect();
        let n = if budget == 0 {
            self.dev.process(&self.mem, &mut self.irqs)
        } else {
            let (n, _) = self.dev.process_budget(&self.mem, &mut self.irqs, budget);
            assert!(n <= budget, "{n} WQEs executed with budget {budget}");
            n
        };
        self.executed += n as u64;
        let t = self.dev.totals();
        assert_eq!(
            (t.wqes + t.wqe_errors) - (before.wqes + before.wqe_errors),
            n as u64,
            "WQEs executed != good + rejected"
        );
        for (sqn, st, cc) in states {
            if st == QueueState::Error {
                assert_eq!(
                    self.dev.sq_consumer(sqn).expect("sq"),
                    cc,
                    "an SQ in error executed WQEs"
                );
                assert_eq!(self.dev.sq_state(sqn), Ok(QueueState::Error));
            }
        }
        self.check();
    }

    fn check(&self) {
        let t = self.dev.totals();
        assert_eq!(t.wqes + t.wqe_errors, self.executed, "executed WQEs");
        assert_eq!(
            t.wqes,
            t.nop_wqes + t.send_wqes + t.lso_wqes + t.mpwqe_wqes,
            "good WQEs != NOP + SEND + LSO + MPWQE: {t:?}"
        );
        assert_eq!(t.tx_err_cqes, t.wqe_errors, "an error without error CQE");
        assert_eq!(
            t.interrupts,
            self.irqs.raised.iter().sum::<u64>(),
            "interrupts counted != raised"
        );
        let p0: PortCounters = *self.dev.counters(0).expect("port 0");
        let p1: PortCounters = *self.dev.counters(1).expect("port 1");
        assert_eq!(
            p0.tx_cqes + p0.tx_err_cqes,
            p0.cq_slot_writes + p0.cqes_lost,
            "TX CQEs neither written nor lost"
        );
        let rx_outcomes = |c: &PortCounters| {
            c.rx_packets + c.rx_out_of_buffer + c.rx_no_rq_drops + c.rx_too_long + c.rx_dma_faults
        };
        assert!(
            p0.loopback_packets <= p0.tx_packets && p0.loopback_bytes <= p0.tx_bytes,
            "more looped than sent: {p0:?}"
        );
        assert_eq!(
            rx_outcomes(&p1),
            p0.tx_packets - p0.loopback_packets,
            "frames port 0 put on the wire != frames port 1 received or dropped"
        );
        assert_eq!(
            (rx_outcomes(&p0), p0.rx_no_rq_drops),
            (p0.loopback_packets, p0.loopback_packets),
            "frames port 0 looped != its receive drops (it has no RSS table)"
        );
        assert_eq!(p1.loopback_packets, 0, "port 1 sends nothing");
        assert_eq!(
            p1.rx_cqes + p1.rx_err_cqes,
            p1.rx_packets + p1.rx_too_long + p1.rx_dma_faults,
            "RX outcomes without CQE"
        );
        assert_eq!(
            p0.rx_packets + p1.tx_packets,
            0,
            "traffic in the wrong direction"
        );
    }
}

impl crate::Harness for Harness {
    const MAX_OPS: usize = 300;

    fn new(inp: &mut Input<'_>) -> Self {
        let cfg = inp.u8();
        let cfg2 = inp.u8();
        let mem = Checked::default();
        let alloc =
            |len: usize, dev_writes: bool, name: &'static str| mem.alloc(len, dev_writes, name);
        let mut dev = new_mlx5(2);

        let (tx_cqn, tx_cq_dbr) = new_cq(&mut dev, &mem, 0, 2 + cfg % 5, false, "tx cq");
        let mut mk_sq = |log: u8, name: &'static str| {
            let ring = alloc(64 << log, false, name);
            let dbr = alloc(8, false, "sq dbr");
            let sqn = dev
                .create_sq(&SqConfig {
                    port: 0,
                    buf: ring.dma_addr(),
                    log_size: log,
                    dbr: dbr.dma_addr(),
                    cqn: tx_cqn,
                })
                .expect("sq");
            SqH {
                sqn,
                ring,
                dbr,
                log,
                pc: 0,
            }
        };
        let sqs = [mk_sq(6, "sq0 ring"), mk_sq(cfg2 % 7, "sq1 ring")];

        let rx_cq_log = 2 + (cfg >> 3) % 5;
        let compress = cfg & 0x80 != 0;
        let (rx_cqn, rx_cq_dbr) = new_cq(&mut dev, &mem, 1, rx_cq_log, compress, "rx cq");
        let rq_log = 1 + (cfg2 >> 3) % 3;
        let rq_ring = alloc(16 << rq_log, false, "rq ring");
        let rq_dbr = alloc(8, false, "rq dbr");
        let rx_bufs: Vec<HostBuf> = (0..RX_BUFS)
            .map(|_| alloc(RX_BUF_SIZE, true, "rx buf"))
            .collect();
        for i in 0..1usize << rq_log {
            let mut w = [0u8; 16];
            w[0..4].copy_from_slice(&(RX_BUF_SIZE as u32 | 0x8000_0000).to_be_bytes());
            w[8..16].copy_from_slice(&rx_bufs[i % RX_BUFS].dma_addr().to_be_bytes());
            rq_ring.write(i * 16, &w);
        }
        let rqn = dev
            .create_rq(&RqConfig {
                port: 1,
                buf: rq_ring.dma_addr(),
                log_size: rq_log,
                log_stride: 4,
                dbr: rq_dbr.dma_addr(),
                cqn: rx_cqn,
            })
            .expect("rq");
        dev.set_rss(1, &[rqn]).expect("rss");
        rq_dbr.write_be32(0, u32::from(inp.u8()) % (1 << rq_log));

        let pkts = mem.packets(inp, false);
        let freed = mem.freed();
        let ring = sqs[0].ring.clone();

        Self {
            dev,
            mem,
            irqs: Irqs::new(4),
            sqs,
            tx_cqn,
            tx_cq_dbr,
            rx_cqn,
            rx_cq_dbr,
            rqn,
            rq_ring,
            rq_dbr,
            rq_log,
            t: Targets {
                pkts,
                rx_bufs,
                ring,
                freed,
            },
            executed: 0,
        }
    }

    fn op(&mut self, inp: &mut Input<'_>) {
        match inp.u8() % 20 {
            0..=4 => self.structured_wqe(inp),
            5 => {
                let q = usize::from(inp.u8() & 1);
                let slot = usize::from(inp.u8()) % (1 << self.sqs[q].log);
                let mut b = [0u8; 64];
                inp.fill(&mut b);
                self.sqs[q].ring.write(slot * 64, &b);
            }
            6..=8 => self.ring_sq(inp),
            9 | 10 => self.process(inp),
            11 => self.arm(inp),
            12 => self.consume(inp),
            13 => self.post_rx(inp),
            14 => {
                // Any register, any bytes.
                let sel = inp.u8();
                let offset = if sel & 1 != 0 {
                    inp.u32()
                } else {
                    u32::from(inp.u16() % 0x3000)
                };
                match (sel >> 1) & 3 {
                    0 | 1 => {
                        let mut b = [0u8; 8];
                        inp.fill(&mut b);
                        self.dev.mmio_write64(offset, b);
                    }
                    2 => self.dev.mmio_write32(offset, inp.u32()),
                    _ => {
                        let _ = self.dev.mmio_read32(offset);
                    }
                }
            }
            15 => self.t.scribble(inp),
            16 => {
                let k = usize::from(inp.u8() % 4);
                let b = self.t.pkts[k].clone();
                self.mem.unmap(&b);
            }
            17 => {
                let sel = inp.u8();
                match sel % 4 {
                    0 => {
                        let q = usize::from((sel >> 2) & 1);
                        self.dev.reset_sq(self.sqs[q].sqn).expect("reset sq");
                        self.sqs[q].pc = 0;
                        self.sqs[q].dbr.write_be32(4, 0);
                    }
                    1 => {
                        self.dev.reset_rq(self.rqn).expect("reset rq");
                        self.rq_dbr.write_be32(0, 0);
                    }
                    2 => {
                        let port = usize::from((sel >> 2) & 1);
                        if sel & 0x10 != 0 {
                            self.dev.set_loopback(port, sel & 8 != 0).expect("loopback");
                        } else {
                            self.dev.set_link(port, sel & 8 != 0).expect("link");
                        }
                    }
                    _ => {
                        let t: &[u32] = if sel & 4 != 0 { &[self.rqn] } else { &[] };
                        self.dev.set_rss(1, t).expect("rss");
                    }
                }
            }
            18 => {
                // The driver skips WQEBBs (stale ring contents become "posted").
                let q = usize::from(inp.u8() & 1);
                self.sqs[q].pc = self.sqs[q].pc.wrapping_add(u16::from(inp.u8() % 8));
            }
            _ => {
                let q = usize::from(inp.u8() & 1);
                self.sqs[q].pc = self.dev.sq_consumer(self.sqs[q].sqn).expect("sq");
            }
        }
    }

    fn finish(mut self) {
        // Let the device finish whatever is pending.
        let mut last = Input::new(&[0]);
        self.process(&mut last);
        self.check();
    }
}

/// One fuzz input.
pub fn run(data: &[u8]) {
    crate::drive::<Harness>(data);
}
