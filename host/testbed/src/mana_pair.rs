//! One MANA port pair: the driver-side SQ, RQ, CQs and EQs of `dp/mana` against the
//! simulated MANA device of `sim/mana`, port 0 (TX) wired to port 1 (RX). The MANA twin of
//! [`crate::pair`], used by the `mana_*` tests and the benchmark.
//!
//! ```
//! use rsnic_testbed::mana_pair::{ManaPair, ManaConfig, Frame};
//! let mut p = ManaPair::new(ManaConfig::default());
//! let frames: Vec<Frame> = (0..32).map(|i| Frame::linear(vec![i as u8; 64])).collect();
//! assert_eq!(p.send_burst(&frames), 32);  // xmit_more on all but the last: one doorbell
//! p.run_device();
//! p.poll_tx(64);
//! let rx = p.poll_rx(64);
//! assert_eq!(rx.len(), 32);
//! p.check_counters().unwrap();
//! ```
//!
//! The host side is [`crate::glue`]'s, shared with the mlx5 pair: packets, the TX buffer
//! pool and in-order bookkeeping, and the environment. Register writes are latched in
//! program order and handed to the device when it next runs (or its counters are read).
//! Every RQ doorbell value the driver writes is also logged ([`ManaEnv::rq_doorbell_log`]).
//! A [`Frame`]'s VLAN tag goes on the wire as 802.1Q ([`Frame::expected_wire_8021q`]).

use std::cell::RefCell;
use std::rc::Rc;

use rsnic_core::dp::hw::Coherent;
use rsnic_core::dp::mana::cq::{Cq, Eq};
use rsnic_core::dp::mana::gdma_req::{self as req, RxSteer};
use rsnic_core::dp::mana::rq::{Rq, RqParams, RxCompletion, RxPoll};
use rsnic_core::dp::mana::sq::{Sq, SqParams, TxPending, TxPoll};
use rsnic_core::dp::mana::stats::{RxStats, TxStats};
use rsnic_core::dp::mlx5::tx::{DmaEntry, TxQueue, TxRejectReason};
use rsnic_core::sim::mana::{
    doorbell_offset, Device, Port, PortCounters, QueueSet, DB_CQ, DB_EQ, DB_RQ, DB_SQ, MANA_DB_ID,
    MAX_QUEUES, SCRATCH_LEN,
};

use crate::bus::IrqLog;
use crate::glue::{Balance, Bar0, Doorbell, Env, TxBook};
pub use crate::glue::{
    EnvCounts as ManaCounts, RxBuf, TxFrame as Frame, TxPkt as ManaPkt, BUF_SIZE, RX_PORT, TX_PORT,
};
use crate::mana_hwc::HwcHost;
use crate::mem::{HostBuf, HostMemory};

/// The MANA device model with host storage.
pub type HostMana = Device<Vec<Port>, Vec<QueueSet>, Vec<u8>>;
/// The driver-side SQ with host storage.
pub type ManaSq = Sq<ManaPkt, HostBuf, Vec<TxPending<ManaPkt>>, Vec<DmaEntry>>;
/// The driver-side RQ with host storage.
pub type ManaRq = Rq<RxBuf, HostBuf, Vec<Option<RxBuf>>>;
/// One received packet.
pub type RxFrame = crate::glue::RxFrame<RxCompletion>;
/// The driver's environment: BAR0 (latched), DMA API, TX queue with BQL, RX buffer pool.
pub type ManaEnv = Env<ManaBar>;

/// Memory key of the SGEs (the model does not check it).
pub const MKEY: u32 = 0x77;

/// BAR0 of the pair's MANA device behind [`ManaEnv`]: the SQ doorbell of [`TX_PORT`], the
/// RQ doorbell of [`RX_PORT`] and both ports' CQ doorbells are counted.
pub struct ManaBar(pub Rc<RefCell<HostMana>>);

impl Bar0 for ManaBar {
    fn write64(&self, offset: u32, bytes: [u8; 8]) {
        self.0.borrow_mut().mmio_write64(offset, bytes);
    }
    fn write32(&self, offset: u32, value: u32) {
        self.0.borrow_mut().mmio_write32(offset, value);
    }
    fn read32(&self, offset: u32) -> u32 {
        self.0.borrow_mut().mmio_read32(offset)
    }
    #[inline]
    fn doorbell(offset: u32) -> Option<Doorbell> {
        // The second SQ offset is the registered doorbell page of a device set up through
        // the HWC (page MANA_DB_ID = RX_PORT, where the legacy layout has no SQ).
        if offset == doorbell_offset(TX_PORT, DB_SQ)
            || offset == doorbell_offset(MANA_DB_ID as usize, DB_SQ)
        {
            Some(Doorbell::Sq)
        } else if offset == doorbell_offset(RX_PORT, DB_RQ) {
            Some(Doorbell::Rq)
        } else if offset == doorbell_offset(TX_PORT, DB_CQ)
            || offset == doorbell_offset(RX_PORT, DB_CQ)
        {
            Some(Doorbell::Cq)
        } else {
            None
        }
    }
}

/// A device with `ports` ports and full scratch.
pub fn new_mana(ports: usize) -> HostMana {
    let q = vec![QueueSet::EMPTY; ports * MAX_QUEUES];
    Device::new(
        (0..ports).map(|_| Port::new()).collect(),
        q,
        vec![0u8; SCRATCH_LEN],
    )
    .expect("valid port count")
}

/// How the pair is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ManaConfig {
    /// SQ size in bytes (power of two ≥ 4096); the TX CQ has one entry per BU.
    pub sq_size: u32,
    /// RX WQEs (power of two ≥ 128); the RX CQ has the next power of two above.
    pub rq_wqes: u32,
    /// Pre-2023 RX doorbells: one per re-posted WQE.
    pub ring_per_packet: bool,
    /// Check DMA map/unmap balance.
    pub track_dma: bool,
}

impl Default for ManaConfig {
    /// MANA's defaults: 256 TX entries (8 KiB), 512 RX buffers.
    fn default() -> Self {
        Self {
            sq_size: 256 * 32,
            rq_wqes: 512,
            ring_per_packet: false,
            track_dma: true,
        }
    }
}

/// The pair. Fields are public so that benchmarks can call the driver directly.
pub struct ManaPair {
    /// DMA memory.
    pub mem: HostMemory,
    /// The device.
    pub dev: Rc<RefCell<HostMana>>,
    /// Interrupts raised.
    pub irqs: IrqLog,
    /// The driver's environment.
    pub env: ManaEnv,
    /// SQ on [`TX_PORT`].
    pub sq: ManaSq,
    /// RQ on [`RX_PORT`].
    pub rq: ManaRq,
    /// EQ of the TX port (vector 0).
    pub tx_eq: Eq<HostBuf>,
    /// EQ of the RX port (vector 1).
    pub rx_eq: Eq<HostBuf>,
    /// Device ids: SQ, TX CQ, RQ, RX CQ.
    pub ids: [u32; 4],
    cfg: ManaConfig,
    /// The host side of TX: packet buffers, packets in flight.
    pub tx: TxBook,
    rx_delivered: u64,
}

impl ManaPair {
    /// Builds both ports' queues, fills the RQ (one doorbell) and sets RSS.
    pub fn new(cfg: ManaConfig) -> Self {
        let mem = HostMemory::new();
        let dev = Rc::new(RefCell::new(new_mana(2)));
        let mut env = ManaEnv::new(&mem, ManaBar(dev.clone()), cfg.track_dma);
        let eq_num = 64;
        let (teq_buf, req_buf) = (
            mem.alloc(eq_num as usize * 16),
            mem.alloc(eq_num as usize * 16),
        );
        let mut d = dev.borrow_mut();
        let teq = d.create_eq(TX_PORT, teq_buf.dma_addr(), eq_num, 0).unwrap();
        let req = d.create_eq(RX_PORT, req_buf.dma_addr(), eq_num, 1).unwrap();
        let tcq_n = cfg.sq_size / 32;
        let tcq_buf = mem.alloc(tcq_n as usize * 64);
        let tcq = d
            .create_cq(TX_PORT, tcq_buf.dma_addr(), tcq_n, Some(teq))
            .unwrap();
        let sq_ring = mem.alloc(cfg.sq_size as usize);
        let sqid = d
            .create_sq(TX_PORT, sq_ring.dma_addr(), cfg.sq_size, tcq)
            .unwrap();
        let rcq_n = (cfg.rq_wqes + 1).next_power_of_two();
        let rcq_buf = mem.alloc(rcq_n as usize * 64);
        let rcq = d
            .create_cq(RX_PORT, rcq_buf.dma_addr(), rcq_n, Some(req))
            .unwrap();
        let rq_size = cfg.rq_wqes * 32;
        let rq_ring = mem.alloc(rq_size as usize);
        let rqid = d
            .create_rq(RX_PORT, rq_ring.dma_addr(), rq_size, rcq)
            .unwrap();
        d.set_rss(RX_PORT, &[rqid]).unwrap();
        drop(d);
        let n = (cfg.sq_size / 32) as usize;
        let sq = Sq::new(
            SqParams {
                queue_size: cfg.sq_size,
                sq_id: sqid,
                cq_id: tcq,
                mkey: MKEY,
                db_offset: doorbell_offset(TX_PORT, DB_SQ),
                vp_offset: 0,
            },
            sq_ring,
            Cq::new(tcq_buf, tcq, tcq_n, doorbell_offset(TX_PORT, DB_CQ)).unwrap(),
            (0..n).map(|_| TxPending::default()).collect(),
            vec![DmaEntry::default(); 2 * n],
        )
        .expect("SQ");
        let mut rq = Rq::new(
            RqParams {
                queue_size: rq_size,
                rq_id: rqid,
                mkey: MKEY,
                buf_size: BUF_SIZE as u32,
                db_offset: doorbell_offset(RX_PORT, DB_RQ),
                ring_per_packet: cfg.ring_per_packet,
            },
            rq_ring,
            Cq::new(rcq_buf, rcq, rcq_n, doorbell_offset(RX_PORT, DB_CQ)).unwrap(),
            (0..cfg.rq_wqes).map(|_| None).collect(),
        )
        .expect("RQ");
        rq.fill(&mut env);
        let tx_eq = Eq::new(teq_buf, teq, eq_num, doorbell_offset(TX_PORT, DB_EQ)).unwrap();
        let rx_eq = Eq::new(req_buf, req, eq_num, doorbell_offset(RX_PORT, DB_EQ)).unwrap();
        Self {
            tx: TxBook::new(&mem),
            mem,
            dev,
            irqs: IrqLog::default(),
            env,
            sq,
            rq,
            tx_eq,
            rx_eq,
            ids: [sqid, tcq, rqid, rcq],
            cfg,
            rx_delivered: 0,
        }
    }

    /// The configuration.
    pub fn config(&self) -> ManaConfig {
        self.cfg
    }

    /// Offers one frame. `Ok(id)` if accepted.
    pub fn send_one(&mut self, f: &Frame, more: bool) -> Result<u64, TxRejectReason> {
        let (sq, env) = (&mut self.sq, &mut self.env);
        self.tx.offer(f, |pkt| sq.xmit(pkt, more, env))
    }

    /// Offers a burst (xmit_more on all but the last); stops when the queue stops. Returns
    /// how many were accepted.
    pub fn send_burst(&mut self, frames: &[Frame]) -> usize {
        let mut n = 0;
        for (i, f) in frames.iter().enumerate() {
            if self.env.is_stopped() {
                // The stack would requeue the rest; announce what was posted.
                self.sq.ring(&self.env);
                break;
            }
            if self.send_one(f, i + 1 < frames.len()).is_ok() {
                n += 1;
            }
        }
        n
    }

    /// Whether the TX queue is stopped.
    pub fn tx_stopped(&self) -> bool {
        self.env.is_stopped()
    }

    /// Runs the device until idle. Returns TX WQEs executed.
    pub fn run_device(&mut self) -> usize {
        self.env.flush_mmio();
        self.dev.borrow_mut().process(&self.mem, &mut self.irqs)
    }

    /// One TX NAPI round (poll, then the CQ re-arm rule with `budget`).
    pub fn poll_tx(&mut self, budget: u32) -> TxPoll {
        let mut done = Vec::new();
        let (r, _) = self.sq.napi_poll(budget, &mut self.env, |p| done.push(p));
        for p in done {
            self.tx.release(p);
        }
        r
    }

    /// One RX NAPI round; returns the delivered frames.
    pub fn poll_rx(&mut self, budget: u32) -> Vec<RxFrame> {
        self.poll_rx_full(budget).0
    }

    /// One RX NAPI round; returns the frames and the poll result.
    pub fn poll_rx_full(&mut self, budget: u32) -> (Vec<RxFrame>, RxPoll) {
        let rq = &mut self.rq;
        let (out, r) = self
            .env
            .collect_rx(|env, deliver| rq.napi_poll(budget, env, |b, c| deliver(b, c)));
        self.rx_delivered += out.len() as u64;
        (out, r)
    }

    /// Runs device and driver until nothing moves; returns what was delivered.
    pub fn settle(&mut self, budget: u32) -> Vec<RxFrame> {
        let mut out = Vec::new();
        loop {
            let mut moved = self.run_device() > 0;
            loop {
                let t = self.poll_tx(budget);
                moved |= t.cqes > 0;
                if t.cqes == 0 {
                    break;
                }
            }
            loop {
                let got = self.poll_rx(budget.max(1));
                if got.is_empty() {
                    break;
                }
                moved = true;
                out.extend(got);
            }
            // Empty polls re-arm their CQs (latched doorbells), which moves nothing.
            if !moved {
                self.env.flush_mmio();
                return out;
            }
        }
    }

    /// Packets accepted and not completed.
    pub fn tx_in_flight(&self) -> usize {
        self.tx.in_flight()
    }
    /// Driver TX counters.
    pub fn drv_tx(&self) -> TxStats {
        self.sq.stats
    }
    /// Driver RX counters.
    pub fn drv_rx(&self) -> RxStats {
        self.rq.stats
    }
    /// Device counters of a port (latched writes first).
    pub fn dev(&self, port: usize) -> PortCounters {
        self.env.flush_mmio();
        self.dev
            .borrow()
            .counters(port)
            .copied()
            .unwrap_or_default()
    }
    /// Interrupt vectors raised since the last call.
    pub fn take_irqs(&mut self) -> Vec<u16> {
        std::mem::take(&mut self.irqs.raised)
    }

    /// Checks that driver, host and device counters balance (call when settled, with no
    /// faults injected).
    pub fn check_counters(&mut self) -> Result<(), String> {
        let (d, r, t, x, e) = (
            self.drv_tx(),
            self.drv_rx(),
            self.dev(TX_PORT),
            self.dev(RX_PORT),
            self.env.counts(),
        );
        let mut b = Balance::default();
        b.eq("driver WQEs vs device WQEs", d.wqes, t.wqes);
        b.eq("device TX CQEs vs driver CQEs", t.tx_cqes, d.cqes);
        b.eq(
            "device TX packets vs RX + drops",
            t.tx_packets(),
            x.rx_packets() + x.hc_rx_discards_no_wqe + x.rx_no_rq_drops + x.rx_truncated,
        );
        b.eq("device RX CQEs vs driver RX CQEs", x.rx_cqes, r.cqes);
        b.eq("device RX packets vs driver", x.rx_packets(), r.packets);
        b.eq("device RX bytes vs driver", x.hc_rx_bytes, r.bytes);
        b.eq("driver RX vs delivered", r.packets, self.rx_delivered);
        b.eq("SQ doorbells: driver vs host", d.doorbells, e.sq_doorbells);
        b.eq(
            "SQ doorbells: driver vs device",
            d.doorbells,
            t.sq_doorbells,
        );
        b.eq("RQ doorbells: driver vs host", r.doorbells, e.rq_doorbells);
        b.eq(
            "RQ doorbells: driver vs device",
            r.doorbells,
            x.rq_doorbells,
        );
        b.eq("RQ doorbells with wqe_cnt != 0", x.rq_db_wqe_cnt_errors, 0);
        b.eq(
            "bad doorbells",
            t.bad_doorbells + x.bad_doorbells + t.db_invalid + x.db_invalid,
            0,
        );
        self.env.check_host(&mut b, &self.tx, d.bytes);
        b.eq("device TX WQE errors", t.tx_wqe_errors, 0);
        b.eq("driver protocol errors", d.cqe_bad + r.cqe_bad, 0);
        b.eq(
            "RX WQEs posted vs outstanding + completed",
            r.wqes,
            u64::from(self.rq.posted()) + r.cqes,
        );
        b.floor(t.pcie.in_bytes, t.tx_floor_in_bytes);
        b.finish()
    }
}

/// What a pair set up through the HWC created, for its teardown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HwcObjects {
    /// The TX port's SQ object.
    pub sq: req::WqObj,
    /// The RX port's RQ object.
    pub rq: req::WqObj,
    /// CONFIG_VPORT_TX's answer for the TX port.
    pub vport_tx: req::VportTx,
}

/// The RSS key a pair set up through the HWC configures.
pub const HWC_PAIR_KEY: [u8; 40] = [0x6d; 40];

impl ManaPair {
    /// The pair built as the driver does it through the hardware: the probe over the SMC and
    /// the HWC (two MANA EQs), CONFIG_VPORT_TX on both vports, the SQ and RQ as WQ objects
    /// over DMA regions, RX steering with MANA_CONFIG_VPORT_RX (64 entries, all the RQ), and
    /// every doorbell on the page GDMA_REGISTER_DEVICE returned. The control side is
    /// returned for teardown.
    pub fn new_hwc(cfg: ManaConfig) -> (Self, HwcHost, HwcObjects) {
        let mut h = HwcHost::new(new_mana(2));
        let mut eqs = h.alloc_eqs(2);
        h.probe(&mut eqs, 4096).expect("probe");
        let rx_eq = eqs.pop().expect("EQ");
        let tx_eq = eqs.pop().expect("EQ");
        let vport_tx = h.config_vport_tx(TX_PORT).expect("vport TX");
        h.config_vport_tx(RX_PORT).expect("vport RX port TX");
        let mem = h.mem.clone();
        let tcq_n = cfg.sq_size / 32;
        let tcq_buf = mem.alloc(tcq_n as usize * 64);
        let sq_ring = mem.alloc(cfg.sq_size as usize);
        let so = h
            .create_wq_obj(TX_PORT, req::GDMA_SQ, &sq_ring, &tcq_buf, tx_eq.id())
            .expect("SQ object");
        let rcq_n = (cfg.rq_wqes + 1).next_power_of_two();
        let rcq_buf = mem.alloc(rcq_n as usize * 64);
        let rq_size = cfg.rq_wqes * 32;
        let rq_ring = mem.alloc(rq_size as usize);
        let ro = h
            .create_wq_obj(RX_PORT, req::GDMA_RQ, &rq_ring, &rcq_buf, rx_eq.id())
            .expect("RQ object");
        let tab = vec![ro.handle; 64];
        let vport = h.info.vports[RX_PORT].vport;
        h.simple(req::MANA_CONFIG_VPORT_RX, |b, who| {
            req::config_vport_rx(
                b,
                who,
                &RxSteer {
                    vport,
                    rx_enable: req::TRI_STATE_TRUE,
                    rss_enable: req::TRI_STATE_TRUE,
                    update_default_rxobj: true,
                    update_hashkey: true,
                    update_indir_tab: true,
                    default_rxobj: ro.handle,
                    hashkey: &HWC_PAIR_KEY,
                    indir_tab: &tab,
                },
            )
        })
        .expect("RX steering");
        let page = h.info.db_page;
        let mkey = h.info.reg.gpa_mkey;
        let mut env = ManaEnv::new(&mem, ManaBar(h.dev.clone()), cfg.track_dma);
        let n = (cfg.sq_size / 32) as usize;
        let sq = Sq::new(
            SqParams {
                queue_size: cfg.sq_size,
                sq_id: so.wq_id,
                cq_id: so.cq_id,
                mkey,
                db_offset: page + DB_SQ,
                vp_offset: vport_tx.tx_vport_offset,
            },
            sq_ring,
            Cq::new(tcq_buf, so.cq_id, tcq_n, page + DB_CQ).expect("TX CQ"),
            (0..n).map(|_| TxPending::default()).collect(),
            vec![DmaEntry::default(); 2 * n],
        )
        .expect("SQ");
        let mut rq = Rq::new(
            RqParams {
                queue_size: rq_size,
                rq_id: ro.wq_id,
                mkey,
                buf_size: BUF_SIZE as u32,
                db_offset: page + DB_RQ,
                ring_per_packet: cfg.ring_per_packet,
            },
            rq_ring,
            Cq::new(rcq_buf, ro.cq_id, rcq_n, page + DB_CQ).expect("RX CQ"),
            (0..cfg.rq_wqes).map(|_| None).collect(),
        )
        .expect("RQ");
        rq.fill(&mut env);
        let pair = Self {
            tx: TxBook::new(&mem),
            mem,
            dev: h.dev.clone(),
            irqs: IrqLog::default(),
            env,
            sq,
            rq,
            tx_eq,
            rx_eq,
            ids: [so.wq_id, so.cq_id, ro.wq_id, ro.cq_id],
            cfg,
            rx_delivered: 0,
        };
        let objs = HwcObjects {
            sq: so,
            rq: ro,
            vport_tx,
        };
        (pair, h, objs)
    }
}
