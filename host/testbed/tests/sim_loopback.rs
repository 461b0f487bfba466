//! Port loopback in both simulated families (`Device::set_loopback`, what `ethtool -K <dev>
//! loopback on` asks for), driven by hand-built queues written from the spec: every port has
//! one SQ and RQs spread by RSS, and the same tests run against the mlx5 and the MANA model
//! through [`Family`].
//!
//! What they check: with loopback on, what a port sends arrives byte-exact on its own RQs and
//! not at the peer; RSS treats a looped frame as the same frame from the wire; the counters
//! balance; off again restores the wire; the link state does not matter to a looped frame;
//! toggling under traffic loses nothing (or, without flow control, counts what it drops);
//! flow control follows the frames, and a port that pauses on its own RQs resumes when they
//! are refilled.

mod sim_util;

use std::collections::{BTreeMap, BTreeSet};

use rsnic_core::hwif::hw::{Coherent, Mmio};
use rsnic_core::hwif::mana::fmt::{
    cq_doorbell, rq_doorbell, sq_doorbell, Cqe, RxCompOob, Sge, TxOob, WqeHeader, CQE_RX_OKAY,
    CQE_TX_OKAY, DB_CQ, DB_RQ, DB_SQ,
};
use rsnic_core::sim::mana::{self, doorbell_offset};
use rsnic_core::sim::mlx5::{self, api_uar_offset, RqConfig, SQ_DOORBELL};
use rsnic_testbed::bus::{IrqLog, RegisterBus, Testbed};
use rsnic_testbed::mana_pair::{new_mana, HostMana};
use rsnic_testbed::mem::{HostBuf, HostMemory};
use sim_util::{
    cqe_byte_cnt, cqe_opcode, cqe_wqe_counter, ctrl, dseg, eseg, ipv4_hdr, new_cq, new_sq,
    udp4_frame, Cq, CQ_UPDATE, OP_LSO, OP_MPSW, OP_SEND,
};

/// Bytes of every RX buffer.
const RX_BUF: usize = 2048;

/// One frame a port's RQs received.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rx {
    /// The RQ (position in the port's RSS table).
    rq: usize,
    /// The frame as written to the RX buffer.
    bytes: Vec<u8>,
    /// What RSS and the receive offloads wrote into the completion (hash, hash type,
    /// checksum flags, length): the same for the same headers, whatever path they took.
    meta: Vec<u8>,
}

/// The counters the tests balance, in family-independent terms.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Sum {
    /// TX WQEs executed (good or rejected).
    wqes: u64,
    tx_packets: u64,
    tx_bytes: u64,
    loopback_packets: u64,
    loopback_bytes: u64,
    /// Dropped at transmit: a link down or no peer.
    link_drops: u64,
    tx_pause: u64,
    rx_packets: u64,
    rx_bytes: u64,
    /// Dropped at receive: no posted RX WQE.
    rx_no_buffer: u64,
    /// Every other receive outcome that is not a good packet (no RQ, too long, faults).
    rx_other: u64,
    /// RX completions written (good and error).
    rx_cqes: u64,
}

/// A device of one family with hand-built queues: every port has one SQ (room for 1024
/// one-packet WQEs, a CQE for each) and `nrq` RQs of `rq_wqes` WQEs (a power of two ≥ 128)
/// of [`RX_BUF`] bytes, each with its own CQ, in the port's RSS table in creation order.
trait Family: Sized {
    /// `posted` WQEs of every RQ are posted at creation.
    fn new(ports: usize, nrq: usize, rq_wqes: u32, posted: u32) -> Self;
    /// Posts one SEND of each frame on `port`'s SQ, one doorbell at the end.
    fn send(&mut self, port: usize, frames: &[Vec<u8>]);
    /// Runs the device until it has no work; returns the TX WQEs executed.
    fn run(&mut self) -> usize;
    /// Runs the device for at most `budget` WQEs: (executed, work left).
    fn run_budget(&mut self, budget: usize) -> (usize, bool);
    /// Polls `port`'s TX CQ and RX CQs (RQ by RQ, each in arrival order), re-posting the
    /// consumed RX WQEs if `refill` (one RQ doorbell per RQ, as a driver's NAPI refill).
    fn poll(&mut self, port: usize, refill: bool) -> Vec<Rx>;
    /// Posts `n` more WQEs on every RQ of `port`.
    fn refill(&mut self, port: usize, n: u32);
    fn set_loopback(&mut self, port: usize, on: bool);
    fn loopback(&self, port: usize) -> bool;
    fn set_link(&mut self, port: usize, up: bool);
    fn set_pause(&mut self, port: usize, on: bool);
    fn sum(&self, port: usize) -> Sum;
    /// Port by port: (WQEs posted on its SQ, TX completions polled on it) so far.
    fn tx_tally(&self) -> Vec<(u64, u64)>;
    fn ports(&self) -> usize {
        self.tx_tally().len()
    }
    /// WQEs posted on `port`'s SQ so far.
    fn sent(&self, port: usize) -> u64 {
        self.tx_tally()[port].0
    }
    /// TX completions polled on `port` so far.
    fn tx_cqes(&self, port: usize) -> u64 {
        self.tx_tally()[port].1
    }
}

// ---- mlx5 -------------------------------------------------------------------------------

/// log2 of the mlx5 SQ size in WQEBBs (and of its TX CQ).
const X_SQ_LOG: u8 = 10;

struct XRq {
    dbr: HostBuf,
    log: u8,
    pc: u16,
    cq: Cq,
    bufs: Vec<HostBuf>,
}

struct XPort {
    sq: HostBuf,
    sq_dbr: HostBuf,
    sqn: u32,
    pc: u16,
    tx_cq: Cq,
    rqs: Vec<XRq>,
    sent: u64,
    tx_cqes: u64,
}

struct Mlx5 {
    tb: Testbed,
    bus: RegisterBus,
    p: Vec<XPort>,
}

impl Mlx5 {
    /// Posts one WQE built by `build(index, sqn)` (WQEBB multiple, not crossing the ring
    /// end) on `port` and rings.
    fn post_raw(&mut self, port: usize, build: impl Fn(u16, u32) -> Vec<u8>) {
        let x = &mut self.p[port];
        let mask = (1u16 << X_SQ_LOG) - 1;
        let w = build(x.pc, x.sqn);
        let n = w.len().div_ceil(64);
        assert!(
            usize::from(x.pc & mask) + n <= 1 << X_SQ_LOG,
            "crosses the ring end"
        );
        let off = usize::from(x.pc & mask) * 64;
        x.sq.zero(off, n * 64);
        x.sq.write(off, &w);
        x.pc = x.pc.wrapping_add(n as u16);
        x.sent += 1;
        x.sq_dbr.write_be32(4, u32::from(x.pc));
        let mut b = [0u8; 8];
        b.copy_from_slice(&w[..8]);
        self.bus.write64(api_uar_offset(port) + SQ_DOORBELL, b);
    }
}

impl Family for Mlx5 {
    fn new(ports: usize, nrq: usize, rq_wqes: u32, posted: u32) -> Self {
        assert!(rq_wqes.is_power_of_two() && posted <= rq_wqes);
        let log = rq_wqes.trailing_zeros() as u8;
        let tb = Testbed::with_ports(ports);
        let bus = tb.bus();
        let mut p = Vec::new();
        for port in 0..ports {
            let tx_cq = new_cq(&tb, port, X_SQ_LOG, (port * 8) as u16, false);
            let (sq, sq_dbr, sqn) = new_sq(&tb, port, X_SQ_LOG, tx_cq.cqn);
            let mut rqs = Vec::new();
            let mut rqns = Vec::new();
            for i in 0..nrq {
                let cq = new_cq(&tb, port, log, (port * 8 + 1 + i) as u16, false);
                let ring = tb.mem.alloc(16 << log);
                let dbr = tb.mem.alloc(8);
                let bufs: Vec<HostBuf> = (0..rq_wqes).map(|_| tb.mem.alloc(RX_BUF)).collect();
                for (j, b) in bufs.iter().enumerate() {
                    ring.write(j * 16, &dseg(RX_BUF as u32, 0x1234, b.dma_addr()));
                }
                rqns.push(
                    tb.device()
                        .create_rq(&RqConfig {
                            port,
                            buf: ring.dma_addr(),
                            log_size: log,
                            log_stride: 4,
                            dbr: dbr.dma_addr(),
                            cqn: cq.cqn,
                        })
                        .unwrap(),
                );
                dbr.write_be32(0, posted);
                rqs.push(XRq {
                    dbr,
                    log,
                    pc: posted as u16,
                    cq,
                    bufs,
                });
            }
            tb.device().set_rss(port, &rqns).unwrap();
            p.push(XPort {
                sq,
                sq_dbr,
                sqn,
                pc: 0,
                tx_cq,
                rqs,
                sent: 0,
                tx_cqes: 0,
            });
        }
        Self { tb, bus, p }
    }

    fn send(&mut self, port: usize, frames: &[Vec<u8>]) {
        let x = &mut self.p[port];
        let cc = self.tb.device().sq_consumer(x.sqn).unwrap();
        assert!(
            usize::from(x.pc.wrapping_sub(cc)) + frames.len() <= 1 << X_SQ_LOG,
            "the SQ has room"
        );
        let mask = (1u16 << X_SQ_LOG) - 1;
        let mut last = [0u8; 16];
        for f in frames {
            let buf = self.tb.mem.alloc_from(f);
            let c = ctrl(OP_SEND, x.pc, x.sqn, 3, CQ_UPDATE);
            let mut w = Vec::with_capacity(64);
            w.extend_from_slice(&c);
            w.extend_from_slice(&eseg(0, 0, 0, [0, 0]));
            w.extend_from_slice(&dseg(f.len() as u32, 0x1234, buf.dma_addr()));
            let off = usize::from(x.pc & mask) * 64;
            x.sq.zero(off, 64);
            x.sq.write(off, &w);
            x.pc = x.pc.wrapping_add(1);
            x.sent += 1;
            last = c;
        }
        x.sq_dbr.write_be32(4, u32::from(x.pc));
        let mut b = [0u8; 8];
        b.copy_from_slice(&last[..8]);
        self.bus.write64(api_uar_offset(port) + SQ_DOORBELL, b);
    }

    fn run(&mut self) -> usize {
        self.tb.step()
    }

    fn run_budget(&mut self, budget: usize) -> (usize, bool) {
        self.tb.step_budget(budget)
    }

    fn poll(&mut self, port: usize, refill: bool) -> Vec<Rx> {
        let x = &mut self.p[port];
        while let Some(c) = x.tx_cq.poll() {
            assert_eq!(cqe_opcode(&c), 0, "REQ");
            x.tx_cqes += 1;
        }
        x.tx_cq.update_ci();
        let mut out = Vec::new();
        for (i, rq) in x.rqs.iter_mut().enumerate() {
            let mask = (1usize << rq.log) - 1;
            let mut n = 0u16;
            while let Some(c) = rq.cq.poll() {
                assert_eq!(cqe_opcode(&c), 2, "RESP_SEND");
                let len = cqe_byte_cnt(&c) as usize;
                let buf = &rq.bufs[usize::from(cqe_wqe_counter(&c)) & mask];
                let meta = [&c[12..17], &c[28..30], &c[44..48]].concat();
                out.push(Rx {
                    rq: i,
                    bytes: buf.to_vec()[..len].to_vec(),
                    meta,
                });
                n += 1;
            }
            rq.cq.update_ci();
            if refill && n > 0 {
                rq.pc = rq.pc.wrapping_add(n);
                rq.dbr.write_be32(0, u32::from(rq.pc));
            }
        }
        out
    }

    fn refill(&mut self, port: usize, n: u32) {
        for rq in &mut self.p[port].rqs {
            rq.pc = rq.pc.wrapping_add(n as u16);
            rq.dbr.write_be32(0, u32::from(rq.pc));
        }
    }

    fn set_loopback(&mut self, port: usize, on: bool) {
        self.tb.device().set_loopback(port, on).unwrap();
    }

    fn loopback(&self, port: usize) -> bool {
        self.tb.device().loopback(port)
    }

    fn set_link(&mut self, port: usize, up: bool) {
        self.tb.device().set_link(port, up).unwrap();
    }

    fn set_pause(&mut self, port: usize, on: bool) {
        self.tb.device().set_pause(port, on).unwrap();
    }

    fn sum(&self, port: usize) -> Sum {
        let c = self.tb.counters(port);
        Sum {
            wqes: c.wqes + c.wqe_errors,
            tx_packets: c.tx_packets,
            tx_bytes: c.tx_bytes,
            loopback_packets: c.loopback_packets,
            loopback_bytes: c.loopback_bytes,
            link_drops: c.tx_link_down_drops,
            tx_pause: c.tx_pause,
            rx_packets: c.rx_packets,
            rx_bytes: c.rx_bytes,
            rx_no_buffer: c.rx_out_of_buffer,
            rx_other: c.rx_no_rq_drops + c.rx_too_long + c.rx_dma_faults,
            rx_cqes: c.rx_cqes + c.rx_err_cqes,
        }
    }

    fn tx_tally(&self) -> Vec<(u64, u64)> {
        self.p.iter().map(|p| (p.sent, p.tx_cqes)).collect()
    }
}

// ---- MANA -------------------------------------------------------------------------------

/// Bytes of the MANA SQ: 1024 one-BU WQEs.
const M_SQ: u32 = 1024 * 32;

/// A MANA CQ as a driver reads it (0-based head; owner bits `(head / num + 1) & 7`).
struct MCq {
    buf: HostBuf,
    id: u32,
    num: u32,
    head: u32,
}

impl MCq {
    fn poll(&mut self) -> Option<Cqe> {
        let mut b = [0u8; 64];
        self.buf
            .read(((self.head % self.num) * 64) as usize, &mut b);
        let c = Cqe::decode(&b);
        if u32::from(c.owner) != (self.head / self.num + 1) & 7 {
            return None;
        }
        self.head = self.head.wrapping_add(1);
        Some(c)
    }

    /// The CQ doorbell a driver rings after polling (not armed).
    fn doorbell(&self, dev: &mut HostMana, port: usize) {
        let tail = self.head.wrapping_add(self.num) & 0x7fff_ffff;
        dev.mmio_write64(
            doorbell_offset(port, DB_CQ),
            cq_doorbell(self.id, tail, false).to_le_bytes(),
        );
    }
}

struct MRq {
    id: u32,
    wqes: u32,
    tail: u32,
    cq: MCq,
    bufs: Vec<HostBuf>,
}

struct MPort {
    sq: HostBuf,
    sq_id: u32,
    tail: u32,
    tx_cq: MCq,
    rqs: Vec<MRq>,
    sent: u64,
    tx_cqes: u64,
}

struct Mana {
    mem: HostMemory,
    dev: HostMana,
    irq: IrqLog,
    p: Vec<MPort>,
}

impl Mana {
    fn ring_rq(&mut self, port: usize, i: usize) {
        let rq = &self.p[port].rqs[i];
        self.dev.mmio_write64(
            doorbell_offset(port, DB_RQ),
            rq_doorbell(rq.id, 0, rq.tail).to_le_bytes(),
        );
    }
}

impl Family for Mana {
    fn new(ports: usize, nrq: usize, rq_wqes: u32, posted: u32) -> Self {
        assert!(rq_wqes.is_power_of_two() && rq_wqes >= 128 && posted <= rq_wqes);
        let mem = HostMemory::new();
        let mut dev = new_mana(ports);
        let mut p = Vec::new();
        for port in 0..ports {
            let tx_num = M_SQ / 32;
            let tx_buf = mem.alloc(tx_num as usize * 64);
            let tx_id = dev
                .create_cq(port, tx_buf.dma_addr(), tx_num, None)
                .unwrap();
            let sq = mem.alloc(M_SQ as usize);
            let sq_id = dev.create_sq(port, sq.dma_addr(), M_SQ, tx_id).unwrap();
            let mut rqs = Vec::new();
            for _ in 0..nrq {
                let cq_buf = mem.alloc(rq_wqes as usize * 64);
                let cq_id = dev
                    .create_cq(port, cq_buf.dma_addr(), rq_wqes, None)
                    .unwrap();
                let ring = mem.alloc(rq_wqes as usize * 32);
                let id = dev
                    .create_rq(port, ring.dma_addr(), rq_wqes * 32, cq_id)
                    .unwrap();
                let bufs: Vec<HostBuf> = (0..rq_wqes).map(|_| mem.alloc(RX_BUF)).collect();
                let hdr = WqeHeader {
                    num_sge: 1,
                    inline_oob_size_div4: 2,
                    ..WqeHeader::default()
                };
                for (j, b) in bufs.iter().enumerate() {
                    ring.write(j * 32, &hdr.encode());
                    let sge = Sge {
                        address: b.dma_addr(),
                        mem_key: rsnic_core::sim::mana::MANA_MKEY,
                        size: RX_BUF as u32,
                    };
                    ring.write(j * 32 + 16, &sge.encode());
                }
                rqs.push(MRq {
                    id,
                    wqes: rq_wqes,
                    tail: 0,
                    cq: MCq {
                        buf: cq_buf,
                        id: cq_id,
                        num: rq_wqes,
                        head: 0,
                    },
                    bufs,
                });
            }
            let ids: Vec<u32> = rqs.iter().map(|r| r.id).collect();
            dev.set_rss(port, &ids).unwrap();
            p.push(MPort {
                sq,
                sq_id,
                tail: 0,
                tx_cq: MCq {
                    buf: tx_buf,
                    id: tx_id,
                    num: tx_num,
                    head: 0,
                },
                rqs,
                sent: 0,
                tx_cqes: 0,
            });
        }
        let mut m = Self {
            mem,
            dev,
            irq: IrqLog::default(),
            p,
        };
        for port in 0..ports {
            m.refill(port, posted);
        }
        m
    }

    fn send(&mut self, port: usize, frames: &[Vec<u8>]) {
        let x = &mut self.p[port];
        let cons = self.dev.wq_consumer(x.sq_id).unwrap();
        assert!(
            x.tail.wrapping_sub(cons) as usize + 32 * frames.len() <= M_SQ as usize,
            "the SQ has room"
        );
        let hdr = WqeHeader {
            num_sge: 1,
            inline_oob_size_div4: 2,
            ..WqeHeader::default()
        };
        let oob = TxOob {
            vcq_num: x.tx_cq.id,
            ..TxOob::default()
        };
        for f in frames {
            let data = self.mem.alloc_from(f);
            let off = (x.tail % M_SQ) as usize;
            x.sq.write(off, &hdr.encode());
            x.sq.write(off + 8, &oob.encode_short());
            let sge = Sge {
                address: data.dma_addr(),
                mem_key: rsnic_core::sim::mana::MANA_MKEY,
                size: f.len() as u32,
            };
            x.sq.write(off + 16, &sge.encode());
            x.tail = x.tail.wrapping_add(32);
            x.sent += 1;
        }
        let db = sq_doorbell(x.sq_id, x.tail).to_le_bytes();
        self.dev.mmio_write64(doorbell_offset(port, DB_SQ), db);
    }

    fn run(&mut self) -> usize {
        self.dev.process(&self.mem, &mut self.irq)
    }

    fn run_budget(&mut self, budget: usize) -> (usize, bool) {
        self.dev.process_budget(&self.mem, &mut self.irq, budget)
    }

    fn poll(&mut self, port: usize, refill: bool) -> Vec<Rx> {
        let x = &mut self.p[port];
        let mut n = 0;
        while let Some(c) = x.tx_cq.poll() {
            assert_eq!((c.header().cqe_type, c.is_sq), (CQE_TX_OKAY, true));
            n += 1;
        }
        x.tx_cqes += n;
        if n > 0 {
            x.tx_cq.doorbell(&mut self.dev, port);
        }
        let mut out = Vec::new();
        for i in 0..self.p[port].rqs.len() {
            let rq = &mut self.p[port].rqs[i];
            let mut k = 0;
            while let Some(c) = rq.cq.poll() {
                let o = RxCompOob::decode(&c.data);
                assert_eq!(
                    (o.hdr.cqe_type, c.is_sq, c.wq_num),
                    (CQE_RX_OKAY, false, rq.id)
                );
                let buf = &rq.bufs[(o.rx_wqe_offset / 32 % rq.wqes) as usize];
                let meta = [&c.data[4..12], &c.data[16..20]].concat();
                out.push(Rx {
                    rq: i,
                    bytes: buf.to_vec()[..usize::from(o.pkt_len)].to_vec(),
                    meta,
                });
                k += 1;
            }
            if k > 0 {
                rq.cq.doorbell(&mut self.dev, port);
                if refill {
                    rq.tail = rq.tail.wrapping_add(32 * k);
                    self.ring_rq(port, i);
                }
            }
        }
        out
    }

    fn refill(&mut self, port: usize, n: u32) {
        for i in 0..self.p[port].rqs.len() {
            let rq = &mut self.p[port].rqs[i];
            rq.tail = rq.tail.wrapping_add(32 * n);
            self.ring_rq(port, i);
        }
    }

    fn set_loopback(&mut self, port: usize, on: bool) {
        self.dev.set_loopback(port, on).unwrap();
    }

    fn loopback(&self, port: usize) -> bool {
        self.dev.loopback(port)
    }

    fn set_link(&mut self, port: usize, up: bool) {
        self.dev.set_link(port, up).unwrap();
    }

    fn set_pause(&mut self, port: usize, on: bool) {
        self.dev.set_pause(port, on).unwrap();
    }

    fn sum(&self, port: usize) -> Sum {
        let c = self.dev.counters(port).copied().unwrap_or_default();
        Sum {
            wqes: c.wqes,
            tx_packets: c.tx_packets(),
            tx_bytes: c.hc_tx_bytes,
            loopback_packets: c.loopback_packets,
            loopback_bytes: c.loopback_bytes,
            link_drops: c.tx_link_down_drops,
            tx_pause: c.tx_pause,
            rx_packets: c.rx_packets(),
            rx_bytes: c.hc_rx_bytes,
            rx_no_buffer: c.hc_rx_discards_no_wqe,
            rx_other: c.rx_no_rq_drops + c.rx_truncated + c.rx_wqe_errors,
            rx_cqes: c.rx_cqes,
        }
    }

    fn tx_tally(&self) -> Vec<(u64, u64)> {
        self.p.iter().map(|p| (p.sent, p.tx_cqes)).collect()
    }
}

// ---- shared checks ----------------------------------------------------------------------

/// `n` UDP/IPv4 frames of 60 to about 1360 bytes (no padding on the wire) with distinct
/// source ports, so that RSS spreads them, carrying their index (payload bytes 0..4) and
/// `tag` (payload byte 4). Frames of the same index have the same headers whatever the tag.
fn frames(tag: u8, n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            let mut f = udp4_frame(18 + (i * 131) % 1300, 1000 + 7 * i as u16, 4791);
            f[42..46].copy_from_slice(&(i as u32).to_be_bytes());
            f[46] = tag;
            f
        })
        .collect()
}

/// (tag, index) of a frame of [`frames`].
fn id(f: &[u8]) -> (u8, u32) {
    (f[46], u32::from_be_bytes([f[42], f[43], f[44], f[45]]))
}

fn bytes(f: &[Vec<u8>]) -> u64 {
    f.iter().map(|x| x.len() as u64).sum()
}

/// `got` holds exactly the frames of `want` (one tag), byte for byte, each once, and every
/// RQ received them in the order sent.
fn check_arrival(got: &[Rx], want: &[Vec<u8>]) {
    assert_eq!(got.len(), want.len(), "frames received");
    let mut seen = BTreeSet::new();
    let mut last: BTreeMap<usize, u32> = BTreeMap::new();
    for g in got {
        let (_, i) = id(&g.bytes);
        let w = want.get(i as usize).expect("a frame that was sent");
        assert_eq!(&g.bytes, w, "frame {i} byte-exact");
        assert!(seen.insert(i), "frame {i} twice");
        if let Some(&prev) = last.get(&g.rq) {
            assert!(i > prev, "RQ {}: frame {i} after {prev}", g.rq);
        }
        last.insert(g.rq, i);
    }
}

/// The frames of `got` carrying `tag`.
fn tagged(got: &[Rx], tag: u8) -> Vec<Rx> {
    got.iter()
        .filter(|g| id(&g.bytes).0 == tag)
        .cloned()
        .collect()
}

/// Every port's counters balance (call when the device is idle and every CQ was polled):
/// each WQE sent one packet that was transmitted or dropped at the link; what a port
/// received or dropped is what it looped plus what its peer put on the wire; every
/// completion was written and seen.
fn balance<F: Family>(r: &F) {
    for p in 0..r.ports() {
        let s = r.sum(p);
        assert_eq!(s.wqes, r.sent(p), "port {p}: WQEs executed");
        assert_eq!(r.tx_cqes(p), s.wqes, "port {p}: TX completions");
        assert_eq!(
            s.tx_packets + s.link_drops,
            s.wqes,
            "port {p}: packets sent"
        );
        assert!(s.loopback_packets <= s.tx_packets, "port {p}: {s:?}");
        assert!(s.loopback_bytes <= s.tx_bytes, "port {p}: {s:?}");
        let wire = if p ^ 1 < r.ports() {
            let q = r.sum(p ^ 1);
            q.tx_packets - q.loopback_packets
        } else {
            0
        };
        assert_eq!(
            s.rx_packets + s.rx_no_buffer + s.rx_other,
            s.loopback_packets + wire,
            "port {p}: received or dropped vs looped + from the wire: {s:?}"
        );
        assert_eq!(s.rx_cqes, s.rx_packets, "port {p}: RX completions");
    }
}

/// The used RQs of `got`.
fn rqs_used(got: &[Rx]) -> BTreeSet<usize> {
    got.iter().map(|g| g.rq).collect()
}

fn loopback_delivers_to_the_own_rqs_only<F: Family>() {
    let mut r = F::new(2, 4, 256, 256);
    assert!(!r.loopback(0) && !r.loopback(1), "off after creation");
    r.set_loopback(0, true);
    assert!(r.loopback(0) && !r.loopback(1));
    let f = frames(1, 96);
    r.send(0, &f);
    assert_eq!(r.run(), f.len());
    let got = r.poll(0, true);
    assert!(r.poll(1, true).is_empty(), "the peer got nothing");
    check_arrival(&got, &f);
    assert!(
        rqs_used(&got).len() >= 3,
        "RSS spread: {:?}",
        rqs_used(&got)
    );
    let (s0, s1) = (r.sum(0), r.sum(1));
    let b = bytes(&f);
    assert_eq!((s0.tx_packets, s0.tx_bytes), (96, b));
    assert_eq!((s0.loopback_packets, s0.loopback_bytes), (96, b));
    assert_eq!((s0.rx_packets, s0.rx_bytes, s0.rx_cqes), (96, b, 96));
    assert_eq!((s0.link_drops, s0.rx_no_buffer, s0.rx_other), (0, 0, 0));
    assert_eq!(s1, Sum::default(), "nothing happened on the peer");
    balance(&r);
}

fn looped_frames_take_the_rss_path_of_wire_frames<F: Family>() {
    // Port 0 loops back; port 1 sends frames with the same headers over the wire to port 0,
    // which still receives from its peer.
    let mut r = F::new(2, 4, 256, 256);
    r.set_loopback(0, true);
    let looped = frames(1, 64);
    let wired = frames(2, 64);
    r.send(0, &looped);
    r.send(1, &wired);
    assert_eq!(r.run(), 128);
    let got = r.poll(0, true);
    assert!(r.poll(1, true).is_empty(), "port 1 got nothing");
    let (a, b) = (tagged(&got, 1), tagged(&got, 2));
    check_arrival(&a, &looped);
    check_arrival(&b, &wired);
    let by_index = |v: &[Rx]| -> BTreeMap<u32, (usize, Vec<u8>)> {
        v.iter()
            .map(|g| (id(&g.bytes).1, (g.rq, g.meta.clone())))
            .collect()
    };
    assert_eq!(
        by_index(&a),
        by_index(&b),
        "same RQ, hash and offload results"
    );
    assert!(rqs_used(&a).len() >= 3, "RSS spread: {:?}", rqs_used(&a));
    let (s0, s1) = (r.sum(0), r.sum(1));
    assert_eq!((s0.loopback_packets, s0.rx_packets), (64, 128));
    assert_eq!(
        (s1.tx_packets, s1.loopback_packets, s1.rx_packets),
        (64, 0, 0)
    );
    balance(&r);
}

fn loopback_off_restores_the_wire<F: Family>() {
    let mut r = F::new(2, 2, 256, 256);
    r.set_loopback(0, true);
    let a = frames(1, 40);
    r.send(0, &a);
    assert_eq!(r.run(), 40);
    r.set_loopback(0, false);
    assert!(!r.loopback(0));
    let b = frames(2, 40);
    r.send(0, &b);
    assert_eq!(r.run(), 40);
    check_arrival(&r.poll(0, true), &a);
    check_arrival(&r.poll(1, true), &b);
    let (s0, s1) = (r.sum(0), r.sum(1));
    assert_eq!((s0.tx_packets, s0.loopback_packets), (80, 40));
    assert_eq!(
        (s0.tx_bytes, s0.loopback_bytes),
        (bytes(&a) + bytes(&b), bytes(&a))
    );
    assert_eq!(
        (s0.rx_packets, s1.rx_packets, s1.rx_bytes),
        (40, 40, bytes(&b))
    );
    balance(&r);
}

fn a_looped_port_ignores_the_links_and_needs_no_peer<F: Family>() {
    // Ports 0 ↔ 1 and a port 2 without a peer.
    let mut r = F::new(3, 2, 256, 256);
    r.set_link(0, false);
    r.set_link(1, false);
    r.set_loopback(0, true);
    let a = frames(1, 30);
    r.send(0, &a);
    assert_eq!(r.run(), 30);
    check_arrival(&r.poll(0, true), &a);
    assert_eq!(r.sum(0).link_drops, 0, "looped before the wire");
    // Off again: the links are down, the frames are dropped at transmit.
    r.set_loopback(0, false);
    r.send(0, &frames(2, 30));
    assert_eq!(r.run(), 30);
    assert!(r.poll(0, true).is_empty() && r.poll(1, true).is_empty());
    assert_eq!(r.sum(0).link_drops, 30);
    // Port 2 drops what it sends, unless it loops.
    r.send(2, &frames(3, 20));
    assert_eq!(r.run(), 20);
    assert!(r.poll(2, true).is_empty());
    assert_eq!(r.sum(2).link_drops, 20);
    r.set_loopback(2, true);
    let d = frames(4, 20);
    r.send(2, &d);
    assert_eq!(r.run(), 20);
    check_arrival(&r.poll(2, true), &d);
    let s2 = r.sum(2);
    assert_eq!(
        (s2.tx_packets, s2.loopback_packets, s2.link_drops),
        (20, 20, 20)
    );
    balance(&r);
}

/// Frames of the toggling tests (fewer under Miri).
const TOGGLED: usize = if cfg!(miri) { 150 } else { 300 };

/// The start of the toggling tests: two ports of one RQ of 128 WQEs, `posted` of them
/// posted, `setup` done, then TOGGLED frames posted on port 0 (returned with the rig).
fn toggling_start<F: Family>(posted: u32, setup: impl FnOnce(&mut F)) -> (F, Vec<Vec<u8>>) {
    let mut r = F::new(2, 1, 128, posted);
    setup(&mut r);
    let f = frames(1, TOGGLED);
    r.send(0, &f);
    (r, f)
}

fn toggling_under_traffic_loses_nothing<F: Family>() {
    // One RQ of 128 per port, flow control on: the device never drops, although the
    // receivers poll only every third run and the destination flips after every run.
    let (mut r, f) = toggling_start::<F>(128, |r| {
        // Both ends: port 1 sends PAUSE frames when short, port 0 honours them and pauses
        // itself.
        r.set_pause(0, true);
        r.set_pause(1, true);
    });
    let (mut got0, mut got1) = (Vec::new(), Vec::new());
    let mut on = false;
    for run in 1.. {
        assert!(run < 10_000, "no progress: {:?}", r.sum(0));
        let (n, more) = r.run_budget(50);
        on = !on;
        r.set_loopback(0, on);
        if run % 3 == 0 || (!more && n == 0) {
            got0.extend(r.poll(0, true));
            got1.extend(r.poll(1, true));
        }
        if r.sum(0).wqes == f.len() as u64 && !more {
            break;
        }
    }
    got0.extend(r.poll(0, true));
    got1.extend(r.poll(1, true));
    assert!(!got0.is_empty() && !got1.is_empty(), "both paths were used");
    // Every frame exactly once, byte-exact, in order at each destination (one RQ per port:
    // tell them apart by port).
    let mut all = got0.clone();
    all.extend(got1.iter().map(|g| Rx { rq: 1, ..g.clone() }));
    check_arrival(&all, &f);
    let (s0, s1) = (r.sum(0), r.sum(1));
    assert!(s0.tx_pause > 0, "the receivers ran short: {s0:?}");
    assert_eq!(s0.tx_packets, f.len() as u64);
    assert_eq!(s0.loopback_packets, got0.len() as u64);
    assert_eq!(s1.rx_packets, got1.len() as u64);
    assert_eq!(
        s0.rx_no_buffer + s1.rx_no_buffer + s0.rx_other + s1.rx_other,
        0
    );
    balance(&r);
}

fn toggling_without_flow_control_counts_what_it_drops<F: Family>() {
    // Half of the RQ posted, nobody polls until the end: both receivers run out.
    let (mut r, f) = toggling_start::<F>(64, |r| r.set_pause(0, false));
    let mut on = false;
    loop {
        let (_, more) = r.run_budget(25);
        on = !on;
        r.set_loopback(0, on);
        if !more {
            break;
        }
    }
    let (got0, got1) = (r.poll(0, true), r.poll(1, true));
    let (s0, s1) = (r.sum(0), r.sum(1));
    assert_eq!((s0.tx_packets, s0.tx_pause), (f.len() as u64, 0));
    assert_eq!(
        s0.loopback_packets,
        f.len() as u64 / 2,
        "every other run looped"
    );
    assert!(s0.rx_no_buffer > 0 && s1.rx_no_buffer > 0, "both ran out");
    assert_eq!((got0.len(), got1.len()), (64, 64), "what the RQs held");
    assert_eq!(
        got0.len() as u64 + got1.len() as u64 + s0.rx_no_buffer + s1.rx_no_buffer,
        f.len() as u64,
        "received or counted"
    );
    assert_eq!(
        s0.loopback_packets,
        got0.len() as u64 + s0.rx_no_buffer,
        "looped = own received + own drops"
    );
    for g in got0.iter().chain(&got1) {
        let (_, i) = id(&g.bytes);
        assert_eq!(&g.bytes, &f[i as usize], "frame {i} byte-exact");
    }
    balance(&r);
}

fn a_port_pausing_itself_resumes_after_its_own_refill<F: Family>() {
    let (mut r, f) = toggling_start::<F>(128, |r| {
        r.set_pause(0, true);
        r.set_loopback(0, true);
    });
    // It sends until its own RQ holds fewer than min(64, 128 / 2) posted WQEs.
    let first = 128 - 64 + 1;
    assert_eq!(r.run(), first);
    assert_eq!(r.sum(0).tx_pause, 1);
    assert_eq!(r.run(), 0, "still paused, and the run ends");
    let mut got = Vec::new();
    for round in 1.. {
        assert!(round < 1000, "stuck: {:?}", r.sum(0));
        // NAPI: the port's own RX completions, its refill ends the pause.
        let g = r.poll(0, true);
        let n = r.run();
        if g.is_empty() && n == 0 {
            break;
        }
        got.extend(g);
    }
    check_arrival(&got, &f);
    let s0 = r.sum(0);
    assert!(s0.tx_pause > 1, "paused more than once: {s0:?}");
    assert_eq!((s0.rx_no_buffer, s0.loopback_packets), (0, f.len() as u64));
    assert!(r.poll(1, true).is_empty());
    balance(&r);
}

fn flow_control_follows_the_frames<F: Family>() {
    // Nothing posted anywhere, then port 0's own RQ filled: port 1's stays empty.
    let mut r = F::new(2, 1, 128, 0);
    r.refill(0, 128);
    r.set_pause(0, true);
    r.set_pause(1, true);
    r.set_loopback(0, true);
    let a = frames(1, 40);
    r.send(0, &a);
    assert_eq!(
        r.run(),
        40,
        "the peer's empty RQ does not pause a looping port"
    );
    assert_eq!(r.sum(0).tx_pause, 0);
    check_arrival(&r.poll(0, true), &a);
    // On the wire the peer's empty RQ pauses it.
    r.set_loopback(0, false);
    let b = frames(2, 10);
    r.send(0, &b);
    assert_eq!(r.run(), 0);
    assert_eq!(r.sum(0).tx_pause, 1);
    // Looping again: the paused WQEs go to its own RQ.
    r.set_loopback(0, true);
    assert_eq!(r.run(), 10);
    check_arrival(&r.poll(0, true), &b);
    assert!(r.poll(1, true).is_empty());
    let s1 = r.sum(1);
    assert_eq!(s1.rx_packets + s1.rx_no_buffer + s1.rx_other, 0);
    balance(&r);
}

macro_rules! both_families {
    ($($name:ident),* $(,)?) => {
        mod mlx5_family {
            $( #[test] fn $name() { super::$name::<super::Mlx5>(); } )*
        }
        mod mana_family {
            $( #[test] fn $name() { super::$name::<super::Mana>(); } )*
        }
    };
}

both_families!(
    loopback_delivers_to_the_own_rqs_only,
    looped_frames_take_the_rss_path_of_wire_frames,
    loopback_off_restores_the_wire,
    a_looped_port_ignores_the_links_and_needs_no_peer,
    toggling_under_traffic_loses_nothing,
    toggling_without_flow_control_counts_what_it_drops,
    a_port_pausing_itself_resumes_after_its_own_refill,
    flow_control_follows_the_frames,
);

// ---- family-specific --------------------------------------------------------------------

/// `set_loopback` of a device model's host API `$d` (`$bad_port` its error for a port the
/// device does not have): refused for such a port; a port of its own is switched alone.
macro_rules! set_loopback_checks_the_port {
    ($d:ident, $bad_port:expr) => {
        assert_eq!($d.set_loopback(2, true), Err($bad_port));
        assert_eq!($d.set_loopback(usize::MAX, false), Err($bad_port));
        assert!(!$d.loopback(2) && !$d.loopback(usize::MAX));
        $d.set_loopback(1, true).unwrap();
        assert!($d.loopback(1) && !$d.loopback(0));
    };
}

#[test]
fn mlx5_set_loopback_checks_the_port() {
    let r = Mlx5::new(2, 1, 128, 0);
    let mut d = r.tb.device();
    set_loopback_checks_the_port!(d, mlx5::CmdError::BadPort);
    // The carrier the driver sees is the wire's.
    d.set_link(1, false).unwrap();
    assert!(d.loopback(1) && !d.link_up(1));
}

#[test]
fn mana_set_loopback_checks_the_port() {
    let mut d = new_mana(2);
    set_loopback_checks_the_port!(d, mana::CmdError::BadPort);
}

/// A TCP/IPv4 header of 54 bytes for an LSO of `payload` bytes (checksums left to the
/// device), and the payload.
fn lso_packet(payload: usize) -> (Vec<u8>, Vec<u8>) {
    let mut hdr = vec![0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x08, 0x00];
    let tot = (40 + payload) as u16;
    hdr.extend_from_slice(&ipv4_hdr(tot, 0x1000, 6, [10, 0, 0, 1], [10, 0, 0, 2]));
    hdr.extend_from_slice(&[0x04, 0xd2, 0x16, 0x2e]);
    hdr.extend_from_slice(&1000u32.to_be_bytes());
    hdr.extend_from_slice(&7u32.to_be_bytes());
    hdr.extend_from_slice(&[0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0]);
    let data = (0..payload).map(|i| (i * 13 + 1) as u8).collect();
    (hdr, data)
}

#[test]
fn mlx5_mpwqe_and_lso_loop_back_as_they_go_on_the_wire() {
    // Port 0 loops; port 1 sends the same WQEs over the wire to port 0.
    let mut r = Mlx5::new(2, 2, 128, 128);
    r.set_loopback(0, true);
    let pkts = frames(1, 3);
    let (hdr, payload) = lso_packet(2500);
    for port in [0, 1] {
        let bufs: Vec<HostBuf> = pkts.iter().map(|p| r.tb.mem.alloc_from(p)).collect();
        r.post_raw(port, |idx, sqn| {
            let mut w = Vec::new();
            w.extend_from_slice(&ctrl(OP_MPSW, idx, sqn, 5, CQ_UPDATE));
            w.extend_from_slice(&eseg(0, 0, 0, [0, 0]));
            for (p, b) in pkts.iter().zip(&bufs) {
                w.extend_from_slice(&dseg(p.len() as u32, 0x1234, b.dma_addr()));
            }
            w
        });
        let data = r.tb.mem.alloc_from(&payload);
        r.post_raw(port, |idx, sqn| {
            // ds = 2 + ceil((54 - 2) / 16) = 6, + 1 data segment = 7.
            let mut w = Vec::new();
            w.extend_from_slice(&ctrl(OP_LSO, idx, sqn, 7, CQ_UPDATE));
            w.extend_from_slice(&eseg(0xc0, 1000, 54, [hdr[0], hdr[1]]));
            w.extend_from_slice(&hdr[2..]);
            w.resize(96, 0);
            w.extend_from_slice(&dseg(payload.len() as u32, 0x1234, data.dma_addr()));
            w
        });
    }
    assert_eq!(r.run(), 4);
    let got = r.poll(0, true);
    assert!(r.poll(1, true).is_empty());
    // 3 MPWQE packets and 3 LSO segments from each source.
    assert_eq!(got.len(), 12);
    let is_udp = |g: &&Rx| g.bytes[23] == 17;
    let mut mpw: Vec<u32> = got.iter().filter(is_udp).map(|g| id(&g.bytes).1).collect();
    for g in got.iter().filter(is_udp) {
        let (_, i) = id(&g.bytes);
        assert_eq!(&g.bytes, &pkts[i as usize], "MPWQE packet {i} byte-exact");
    }
    mpw.sort();
    assert_eq!(mpw, [0, 0, 1, 1, 2, 2], "each MPWQE packet from both paths");
    let mut segs: Vec<&Rx> = got.iter().filter(|g| g.bytes[23] == 6).collect();
    assert_eq!(segs.len(), 6);
    // The same segments from both paths: sort by (sequence number, path-independent bytes).
    segs.sort_by(|a, b| a.bytes.cmp(&b.bytes));
    for pair in segs.chunks(2) {
        assert_eq!(
            pair[0].bytes, pair[1].bytes,
            "a looped segment is the wire's"
        );
        assert_eq!((pair[0].rq, &pair[0].meta), (pair[1].rq, &pair[1].meta));
    }
    let (s0, s1) = (r.sum(0), r.sum(1));
    assert_eq!((s0.wqes, r.tx_cqes(0), s1.wqes, r.tx_cqes(1)), (2, 2, 2, 2));
    assert_eq!(
        (s0.tx_packets, s0.loopback_packets, s0.rx_packets),
        (6, 6, 12)
    );
    assert_eq!((s0.tx_bytes, s0.loopback_bytes), (s1.tx_bytes, s0.tx_bytes));
    assert_eq!(s0.rx_bytes, s0.tx_bytes + s1.tx_bytes);
    assert_eq!(
        (s1.tx_packets, s1.loopback_packets, s1.rx_packets),
        (6, 0, 0)
    );
}
