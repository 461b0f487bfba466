//! One port pair: the driver-side mlx5 SQ and RQ of `hwif/mlx5` against the simulated
//! ConnectX, port 0 (TX) wired to port 1 (RX), with host implementations of every trait the
//! data path asks its caller for. Shared by the end-to-end tests, the property tests, the
//! benchmark and the fuzzer.
//!
//! ```
//! use rsnic_testbed::pair::{Pair, PairConfig, TxFrame};
//! let mut p = Pair::new(PairConfig { mpwqe: true, ..PairConfig::default() });
//! let frames: Vec<TxFrame> = (0..32).map(|i| TxFrame::linear(vec![i as u8; 64])).collect();
//! let sent = p.send_burst(&frames);        // xmit_more on all but the last: one doorbell
//! assert_eq!(sent.accepted.len(), 32);
//! p.run_device();                          // the device executes the WQEs
//! p.poll_tx();                             // TX completions hand every packet back
//! let rx = p.poll_rx(64);                  // NAPI poll of the RQ
//! assert_eq!(rx.len(), 32);
//! assert_eq!(rx[5].bytes, vec![5u8; 64]);
//! p.check_counters().unwrap();             // driver and device counters balance
//! ```
//!
//! # What the host implementations do
//!
//! The host side is [`crate::glue`]'s, shared with the MANA pair: [`TxPkt`] packets in
//! [`HostMemory`] buffers of 2 KiB (at least) reused after completion, the data 64-byte
//! aligned (page aligned); [`HostEnv`] maps DMA by identity (with [`PairConfig::track_dma`],
//! checking that every mapping is undone exactly once with the same length and kind), keeps
//! the TX queue's stop state and BQL balance, hands out 2 KiB RX buffers from a pool, and
//! latches register writes in program order until the device next runs
//! ([`Pair::run_device`]) or its counters are read: register writes only latch state in the
//! device anyway, and this keeps the device model's decoder out of the driver's instruction
//! counts.
//!
//! * The TX CQ has the SQ's size; the RX CQ has the RQ's size and optional CQE compression.
//!   No CQ is armed unless the caller does it ([`Pair::arm`]); polling is explicit.
//!
//! Invariants the pair itself enforces (a violation panics, it is a driver bug): a TX packet
//! is handed back at most once and only if it was accepted, TX completions come back in the
//! order the packets were accepted, DMA mappings balance (with `track_dma`).

use rsnic_core::hwif::hw::{Coherent, Mmio};
use rsnic_core::hwif::mlx5::cmd::CmdQueue;
use rsnic_core::hwif::mlx5::cq::{Cq, QueueSetupError, CQ_DB_REQ_NOT};
use rsnic_core::hwif::mlx5::rq::{Rq, RqParams, RxBuffer, RxCompletion};
use rsnic_core::hwif::mlx5::sq::{FifoEntry, Sq, SqParams, TxPoll, WqeInfo};
use rsnic_core::hwif::mlx5::stats::{RxStats, TxStats};
use rsnic_core::hwif::mlx5::tx::{DmaEntry, InlineMode, TxPacket, TxQueue, TxRejectReason};
use rsnic_core::sim::mlx5::{
    api_uar_offset, CqConfig, PortCounters, QueueState, RqConfig, SqConfig, SQ_DOORBELL,
};

use crate::bus::{RegisterBus, Testbed};
use crate::glue::{Balance, Bar0, Doorbell, Env, TxBook};
pub use crate::glue::{EnvCounts, RxBuf, TxFrame, TxPkt, BUF_SIZE, RX_PORT, TX_PORT};
use crate::mem::{HostBuf, HostMemory};

/// Memory key the driver puts in data segments of a pair that is not
/// [`PairConfig::keyed`] (the model checks no lkey of a function without memory keys).
pub const LKEY: u32 = 0x0000_1234;

/// The driver-side SQ with host storage.
pub type HostSq = VecSq<TxPkt, HostBuf>;
/// The driver-side RQ with host storage.
pub type HostRq = VecRq<RxBuf, HostBuf>;

/// The TX port's SQ of a pair with `cfg` (`2^log_sz` WQEBBs over `wq`, doorbell record
/// `dbr`, completions in `cq`), as the pair makes it; tests that re-create it call this too.
pub fn tx_sq(
    cfg: &PairConfig,
    log_sz: u8,
    sqn: u32,
    wq: HostBuf,
    dbr: HostBuf,
    cq: Cq<HostBuf>,
) -> Option<HostSq> {
    new_vec_sq(
        SqParams {
            log_sz,
            sqn,
            lkey: cfg.lkey[TX_PORT],
            db_offset: api_uar_offset(TX_PORT) + SQ_DOORBELL,
            dbr_off: 0,
            min_inline: cfg.min_inline,
            vlan_need_l2_inline: false,
            max_sq_wqebbs: 16,
            mpwqe: cfg.mpwqe,
            mpwqe_inline: cfg.mpwqe_inline,
        },
        wq,
        dbr,
        cq,
    )
    .ok()
}

/// An mlx5 SQ with `p` over `wq`, `dbr` and `cq`, its per-WQEBB and per-packet storage in
/// vectors of the exact lengths `Sq::new` asks for (`2^log_sz` WQE infos, four times as
/// many FIFO and DMA entries).
pub type VecSq<P, C> = Sq<P, C, Vec<WqeInfo<P>>, Vec<FifoEntry<P>>, Vec<DmaEntry>>;

/// An mlx5 RQ with `p` over `wq`, `dbr` and `cq`, its buffer slots in a vector of the exact
/// length `Rq::new` asks for (`segs` per WQE).
pub type VecRq<B, C> = Rq<B, C, Vec<Option<B>>>;

/// Builds a [`VecRq`]: `Rq::new` with every buffer slot empty.
pub fn new_vec_rq<B: RxBuffer, C: Coherent>(
    p: RqParams,
    wq: C,
    dbr: C,
    cq: Cq<C>,
) -> Result<VecRq<B, C>, QueueSetupError> {
    let n = (1usize << p.log_sz) * usize::from(p.segs);
    Rq::new(p, wq, dbr, cq, (0..n).map(|_| None).collect())
}

/// Builds a [`VecSq`]: `Sq::new` with freshly allocated storage.
pub fn new_vec_sq<P: TxPacket, C: Coherent>(
    p: SqParams,
    wq: C,
    dbr: C,
    cq: Cq<C>,
) -> Result<VecSq<P, C>, QueueSetupError> {
    let n = 1usize << p.log_sz;
    Sq::new(
        p,
        wq,
        dbr,
        cq,
        (0..n).map(|_| WqeInfo::default()).collect(),
        (0..4 * n).map(|_| FifoEntry::default()).collect(),
        vec![DmaEntry::default(); 4 * n],
    )
}
/// One packet the RQ delivered.
pub type RxFrame = crate::glue::RxFrame<RxCompletion>;
/// The environment the data path talks to (netdev TX queue, DMA API, page pool, BAR0).
pub type HostEnv = Env<PairBar>;

/// BAR0 of the pair's simulated ConnectX behind [`HostEnv`]: the SQ doorbell of
/// [`TX_PORT`] is the counted doorbell.
pub struct PairBar(RegisterBus);

impl Bar0 for PairBar {
    fn write64(&self, offset: u32, bytes: [u8; 8]) {
        self.0.write64(offset, bytes);
    }
    fn write32(&self, offset: u32, value: u32) {
        self.0.write32(offset, value);
    }
    fn read32(&self, offset: u32) -> u32 {
        self.0.read32(offset)
    }
    #[inline]
    fn doorbell(offset: u32) -> Option<Doorbell> {
        (offset == SQ_DOORBELL + api_uar_offset(TX_PORT)).then_some(Doorbell::Sq)
    }
}

/// How the pair is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PairConfig {
    /// log2 of the SQ size in WQEBBs (6..=13); the TX CQ has as many entries.
    pub sq_log_sz: u8,
    /// log2 of the RQ size in WQEs (1..=15); the RX CQ has as many entries.
    pub rq_log_sz: u8,
    /// Enhanced MPWQE for eligible packets.
    pub mpwqe: bool,
    /// Inline small packets inside MPWQE sessions (when enough packets are outstanding).
    pub mpwqe_inline: bool,
    /// Basic CQE compression on the RX CQ.
    pub cqe_compress: bool,
    /// The SQ's min-inline mode.
    pub min_inline: InlineMode,
    /// Refill the RQ only when this many WQEs are missing (1..=RQ size).
    pub wqe_bulk: u16,
    /// Check DMA map/unmap balance with a map of live mappings (the benchmark turns it off
    /// so that the map callbacks stay as cheap as a direct-mapped `dma_map_single`).
    pub track_dma: bool,
    /// Bring both functions up by the driver's commands first (`hwif::mlx5::cmd::seq` with
    /// the firmware's pages given, [`crate::fwpages`]): each function then has the memory
    /// key CREATE_MKEY made, the model checks every data segment's lkey, and the pair's
    /// queues name the keys (`lkey` is set from them).
    pub keyed: bool,
    /// The lkey of each port's data segments (by port; [`LKEY`] unless `keyed`).
    pub lkey: [u32; 2],
}

impl Default for PairConfig {
    /// mlx5e's defaults: 1024-WQEBB SQ, 1024-WQE RQ, everything off, bulk of 8.
    fn default() -> Self {
        Self {
            sq_log_sz: 10,
            rq_log_sz: 10,
            mpwqe: false,
            mpwqe_inline: false,
            cqe_compress: false,
            min_inline: InlineMode::None,
            wqe_bulk: 8,
            track_dma: true,
            keyed: false,
            lkey: [LKEY; 2],
        }
    }
}

/// What [`Pair::send`] did with a burst.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SendResult {
    /// Ids of the accepted packets, in order.
    pub accepted: Vec<u64>,
    /// Index in the burst and reason of every packet handed back.
    pub rejected: Vec<(usize, TxRejectReason)>,
    /// Packets at the end of the burst not offered because the queue was stopped (the stack
    /// would requeue them).
    pub not_sent: usize,
}

/// The port pair. Fields are public so that benchmarks can call the driver directly.
pub struct Pair {
    /// Memory, device, interrupts.
    pub tb: Testbed,
    /// The driver's environment.
    pub env: HostEnv,
    /// The driver's SQ on [`TX_PORT`].
    pub sq: HostSq,
    /// The driver's RQ on [`RX_PORT`].
    pub rq: HostRq,
    cfg: PairConfig,
    /// The host side of TX: packet buffers, packets in flight.
    pub tx: TxBook,
    rx_delivered: u64,
    /// Device numbers of the SQ and the RQ.
    qn: (u32, u32),
    recovery: RecoveryCounts,
}

/// What one SQ recovery ([`Pair::recover_tx`]) did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxRecovery {
    /// Packets released without a completion and counted dropped (channel/recover.rs
    /// `tx_recover_dropped`): everything still in flight when the SQ stopped.
    pub dropped: u32,
    /// Of those, the packets whose WQEs the device never executed (between its consumer
    /// counter and the driver's producer counter when the SQ went to RST): the rest went on
    /// the wire, only their completions were lost. Counted in WQEBBs, which is packets for
    /// one-WQEBB WQEs (no MPWQE, no inline headers, linear packets).
    pub abandoned: u32,
    /// CQEs left in the TX CQ and discarded.
    pub cqes_discarded: u32,
}

/// What one RQ recovery ([`Pair::recover_rx`]) did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RxRecovery {
    /// CQEs the device wrote after the fault, discarded with their packets (also counted
    /// in the driver's `cqe_discarded`).
    pub cqes_discarded: u32,
    /// Posted buffers given back to the pool.
    pub buffers_drained: u32,
    /// Buffers posted again.
    pub reposted: u32,
}

/// Recoveries a pair ran, summed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecoveryCounts {
    /// SQ recoveries (`tx_recover`).
    pub tx_recover: u64,
    /// RQ recoveries (`rx_recover`).
    pub rx_recover: u64,
    /// Packets SQ recoveries dropped (`tx_recover_dropped`).
    pub tx_recover_dropped: u64,
    /// Of those, packets the device never executed ([`TxRecovery::abandoned`]).
    pub tx_recover_abandoned: u64,
    /// TX CQEs SQ recoveries discarded.
    pub tx_cqes_discarded: u64,
    /// RX CQEs RQ recoveries discarded ([`RxRecovery::cqes_discarded`]).
    pub rx_cqes_discarded: u64,
}

fn coherent(mem: &HostMemory, len: usize) -> HostBuf {
    mem.alloc(len)
}

/// A CQ of `2^log_sz` entries on `port` of `tb` (MSI-X `vector`, CQE compression as
/// `compress`): created in the device, then the driver's CQ over it; (cqn, CQ). `what` names
/// it in panics.
pub fn new_cq(
    tb: &Testbed,
    port: usize,
    log_sz: u8,
    vector: u16,
    compress: bool,
    what: &str,
) -> (u32, Cq<HostBuf>) {
    let (buf, dbr) = (coherent(&tb.mem, 64 << log_sz), coherent(&tb.mem, 8));
    let cqn = tb
        .device()
        .create_cq(&CqConfig {
            port,
            buf: buf.dma_addr(),
            log_size: log_sz,
            dbr: dbr.dma_addr(),
            vector,
            compress,
        })
        .unwrap_or_else(|e| panic!("create {what}: {e:?}"));
    let cq = Cq::new(buf, dbr, 0, log_sz, cqn, api_uar_offset(port)).expect(what);
    (cqn, cq)
}

impl Pair {
    /// Creates the queues on both ports, posts the RQ and sets RSS of the RX port to it.
    ///
    /// Panics if the configuration is out of range (a test bug).
    pub fn new(mut cfg: PairConfig) -> Self {
        let mut tb = Testbed::new();
        if cfg.keyed {
            for port in 0..2 {
                let f = crate::fwpages::FuncBar::new(&tb, port);
                let mut q = CmdQueue::new(tb.mem.alloc(4096), tb.mem.alloc(16 * 1024))
                    .expect("a command queue");
                let mut fw = crate::fwpages::HostPages::default();
                let (b, r) = crate::fwpages::bring_up(&mut tb, &mut q, &f, &mut fw);
                r.expect("the driver's bring-up");
                cfg.lkey[port] = b.resources().mkey.expect("a memory key");
            }
        }
        // The pair checks the data path's drop-and-count accounting: a starved RQ drops
        // (rx_out_of_buffer) instead of pausing the sender. Flow control has its own test
        // (sim_device::flow_control_pauses_instead_of_dropping).
        for port in 0..2 {
            tb.device()
                .set_pause(port, false)
                .expect("the test bed has two ports");
        }
        let mem = tb.mem.clone();
        let mut env = HostEnv::new(&mem, PairBar(tb.bus()), cfg.track_dma);
        let (sn, rn) = (1usize << cfg.sq_log_sz, 1usize << cfg.rq_log_sz);

        let (tcqn, tcq) = new_cq(&tb, TX_PORT, cfg.sq_log_sz, 0, false, "TX CQ");
        let (wq, sq_dbr) = (coherent(&mem, sn * 64), coherent(&mem, 8));
        let sqn = tb
            .device()
            .create_sq_inline(
                &SqConfig {
                    port: TX_PORT,
                    buf: wq.dma_addr(),
                    log_size: cfg.sq_log_sz,
                    dbr: sq_dbr.dma_addr(),
                    cqn: tcqn,
                },
                // The device enforces the mode the driver's SQ is built with.
                cfg.min_inline as u8,
            )
            .expect("create SQ");
        let sq = tx_sq(&cfg, cfg.sq_log_sz, sqn, wq, sq_dbr, tcq).expect("SQ");

        let (rcqn, rcq) = new_cq(&tb, RX_PORT, cfg.rq_log_sz, 1, cfg.cqe_compress, "RX CQ");
        let (rwq, rq_dbr) = (coherent(&mem, rn * 16), coherent(&mem, 8));
        let rqn = tb
            .device()
            .create_rq(&RqConfig {
                port: RX_PORT,
                buf: rwq.dma_addr(),
                log_size: cfg.rq_log_sz,
                log_stride: 4,
                dbr: rq_dbr.dma_addr(),
                cqn: rcqn,
            })
            .expect("create RQ");
        tb.device().set_rss(RX_PORT, &[rqn]).expect("RSS");
        let mut rq = new_vec_rq(
            RqParams {
                log_sz: cfg.rq_log_sz,
                buf_size: BUF_SIZE as u32,
                segs: 1,
                lkey: cfg.lkey[RX_PORT],
                dbr_off: 0,
                wqe_bulk: cfg.wqe_bulk,
            },
            rwq,
            rq_dbr,
            rcq,
        )
        .expect("RQ");
        rq.post(&mut env);
        Self {
            tb,
            env,
            sq,
            rq,
            cfg,
            tx: TxBook::new(&mem),
            rx_delivered: 0,
            qn: (sqn, rqn),
            recovery: RecoveryCounts::default(),
        }
    }

    /// The device's numbers of the SQ and the RQ.
    pub fn queue_numbers(&self) -> (u32, u32) {
        self.qn
    }

    /// Recoveries run so far.
    pub fn recovery_counts(&self) -> RecoveryCounts {
        self.recovery
    }

    /// SQ recovery, in the order of the driver's (`Channel::reset_sq` in channel/recover.rs with
    /// `family/mlx5.rs`'s `tx_drain` and `tx_reset`): the device SQ to RST, every packet in
    /// flight released as dropped (in order, through [`TxBook::release`]), the CQEs left
    /// discarded, the SQ reset (counters and doorbell record 0), BQL reset, the SQ to RDY,
    /// the queue woken. Call it when the SQ reports an error, or for a transmit timeout.
    ///
    /// The device's RST and RDY steps are one back-door call ([`Device::reset_sq`]) made
    /// first: the device does not run until the caller next runs it, so nothing it could do
    /// between the two steps is lost.
    ///
    /// Panics if a step fails (the SQ not idle after the drain, or BQL not matching what
    /// was dropped): a driver bug.
    ///
    /// [`Device::reset_sq`]: rsnic_core::sim::mlx5::Device::reset_sq
    pub fn recover_tx(&mut self) -> TxRecovery {
        self.env.flush_mmio();
        let sqn = self.qn.0;
        let (state, dev_cc) = {
            let d = self.tb.device();
            (
                d.sq_state(sqn).expect("the pair's SQ"),
                d.sq_consumer(sqn).expect("the pair's SQ"),
            )
        };
        // A WQE that failed stopped the SQ without being consumed; its packet came back
        // with its error CQE.
        let failed = u16::from(state == QueueState::Error);
        let abandoned = self
            .sq
            .pc()
            .wrapping_sub(dev_cc)
            .wrapping_sub(failed)
            .min(self.sq.pc().wrapping_sub(self.sq.cc()));
        self.tb.device().reset_sq(sqn).expect("reset the pair's SQ");
        let mut drained = Vec::new();
        let (pkts, bytes) = self.sq.drain(&mut self.env, |p| drained.push(p));
        for p in drained {
            self.tx.release(p);
        }
        let cqes = self.sq.discard_cqes(&self.env);
        self.sq.reset().expect("the SQ is idle after the drain");
        let forgot = self.env.reset_bql();
        assert_eq!(
            forgot,
            (u64::from(pkts), u64::from(bytes)),
            "BQL in flight vs what the SQ recovery dropped"
        );
        self.env.wake();
        let r = TxRecovery {
            dropped: pkts,
            abandoned: u32::from(abandoned),
            cqes_discarded: cqes,
        };
        let c = &mut self.recovery;
        c.tx_recover += 1;
        c.tx_recover_dropped += u64::from(r.dropped);
        c.tx_recover_abandoned += u64::from(r.abandoned);
        c.tx_cqes_discarded += u64::from(r.cqes_discarded);
        r
    }

    /// RQ recovery, in the order of the driver's (`Channel::recover_rx` in channel/recover.rs with
    /// `family/mlx5.rs`'s `rx_discard`, `rx_drain` and `rx_reset`): the device RQ to RST, the
    /// CQEs written meanwhile discarded, every posted buffer back to the pool, the RQ reset
    /// and refilled, the RQ to RDY. Call it when the RQ reports an error.
    ///
    /// The device's RST and RDY steps are one back-door call ([`Device::reset_rq`]) made
    /// first, as in [`Pair::recover_tx`]. Panics if the RQ is not idle after the drain.
    ///
    /// [`Device::reset_rq`]: rsnic_core::sim::mlx5::Device::reset_rq
    pub fn recover_rx(&mut self) -> RxRecovery {
        self.env.flush_mmio();
        self.tb
            .device()
            .reset_rq(self.qn.1)
            .expect("reset the pair's RQ");
        let cqes = self.rq.discard_cqes(&self.env);
        let drained = self.rq.drain(&mut self.env);
        self.rq.reset().expect("the RQ is idle after the drain");
        let posted = self.rq.post(&mut self.env);
        let r = RxRecovery {
            cqes_discarded: cqes,
            buffers_drained: drained,
            reposted: posted,
        };
        self.recovery.rx_recover += 1;
        self.recovery.rx_cqes_discarded += u64::from(cqes);
        r
    }

    /// The configuration.
    pub fn config(&self) -> PairConfig {
        self.cfg
    }

    /// Offers one frame to the driver (`ndo_start_xmit`). `Ok(id)` if accepted.
    pub fn send_one(&mut self, frame: &TxFrame, xmit_more: bool) -> Result<u64, TxRejectReason> {
        let (sq, env) = (&mut self.sq, &mut self.env);
        self.tx.offer(frame, |pkt| sq.xmit(pkt, xmit_more, env))
    }

    /// Offers a burst with `xmit_more` set on all packets but the last.
    pub fn send_burst(&mut self, frames: &[TxFrame]) -> SendResult {
        let n = frames.len();
        let more: Vec<bool> = (0..n).map(|i| i + 1 < n).collect();
        self.send(frames, &more)
    }

    /// Offers `frames` with the given `xmit_more` flags (`more[i]` for `frames[i]`; missing
    /// flags are false). Stops offering when the driver stopped the queue, as the stack does.
    pub fn send(&mut self, frames: &[TxFrame], more: &[bool]) -> SendResult {
        let mut r = SendResult::default();
        for (i, f) in frames.iter().enumerate() {
            if self.env.is_stopped() {
                r.not_sent = frames.len() - i;
                break;
            }
            match self.send_one(f, more.get(i).copied().unwrap_or(false)) {
                Ok(id) => r.accepted.push(id),
                Err(reason) => r.rejected.push((i, reason)),
            }
        }
        r
    }

    /// Whether the driver stopped the TX queue.
    pub fn tx_stopped(&self) -> bool {
        self.env.is_stopped()
    }

    /// Runs the device until it has no work. Returns the WQEs it executed.
    pub fn run_device(&mut self) -> usize {
        self.env.flush_mmio();
        self.tb.step()
    }

    /// Runs the device for at most `budget` WQEs. Returns (WQEs executed, work left).
    pub fn run_device_budget(&mut self, budget: usize) -> (usize, bool) {
        self.env.flush_mmio();
        self.tb.step_budget(budget)
    }

    /// One TX CQ poll (at most 128 CQEs); every packet handed back is checked and recycled.
    pub fn poll_tx(&mut self) -> TxPoll {
        let mut done = Vec::new();
        let r = self.sq.poll_cq(&mut self.env, |p| done.push(p));
        for p in done {
            self.tx.release(p);
        }
        r
    }

    /// One NAPI poll of the RQ for up to `budget` packets, then the refill. Returns the
    /// delivered packets (their buffers go back to the pool).
    pub fn poll_rx(&mut self, budget: u32) -> Vec<RxFrame> {
        let rq = &mut self.rq;
        let (out, _) = self
            .env
            .collect_rx(|env, deliver| rq.napi_poll(budget, env, |b, c| deliver(b, c)));
        self.rx_delivered += out.len() as u64;
        out
    }

    /// Runs device and driver until nothing moves: device steps, TX polls, RX polls of
    /// `rx_budget` until empty. Returns the packets delivered on the way.
    pub fn settle(&mut self, rx_budget: u32) -> Vec<RxFrame> {
        let mut out = Vec::new();
        loop {
            let w = self.run_device();
            let mut moved = w > 0;
            loop {
                let t = self.poll_tx();
                moved |= t.cqes > 0;
                if !t.busy {
                    break;
                }
            }
            loop {
                let got = self.poll_rx(rx_budget.max(1));
                if got.is_empty() {
                    break;
                }
                moved = true;
                out.extend(got);
            }
            if !moved && !self.env.mmio_pending() {
                return out;
            }
        }
    }

    /// Arms the TX and RX CQs (one register write each).
    pub fn arm(&mut self) {
        self.sq.cq_mut().arm(CQ_DB_REQ_NOT, &self.env, &self.env);
        self.rq.cq_mut().arm(CQ_DB_REQ_NOT, &self.env, &self.env);
    }

    /// Interrupt vectors raised since the last call (0 = TX CQ, 1 = RX CQ).
    pub fn take_irqs(&mut self) -> Vec<u16> {
        self.tb.take_irqs()
    }

    /// Packets accepted and not yet handed back.
    pub fn tx_in_flight(&self) -> usize {
        self.tx.in_flight()
    }

    /// Packets handed back by TX completions.
    pub fn tx_completed(&self) -> u64 {
        self.tx.completed()
    }

    /// Packets delivered by the RQ.
    pub fn rx_delivered(&self) -> u64 {
        self.rx_delivered
    }

    /// The driver's TX counters.
    pub fn drv_tx(&self) -> TxStats {
        self.sq.stats
    }

    /// The driver's RX counters.
    pub fn drv_rx(&self) -> RxStats {
        self.rq.stats
    }

    /// The device counters of the TX port (latched register writes counted first).
    pub fn dev_tx(&mut self) -> PortCounters {
        self.env.flush_mmio();
        self.tb.counters(TX_PORT)
    }

    /// The device counters of the RX port.
    pub fn dev_rx(&mut self) -> PortCounters {
        self.env.flush_mmio();
        self.tb.counters(RX_PORT)
    }

    /// Checks that driver, host and device counters balance. Call it when the pair is
    /// quiet ([`Pair::settle`]) and no fault was injected. Returns every mismatch found.
    pub fn check_counters(&mut self) -> Result<(), String> {
        let (d, r, t, x, e) = (
            self.drv_tx(),
            self.drv_rx(),
            self.dev_tx(),
            self.dev_rx(),
            self.env.counts(),
        );
        let mut b = Balance::default();
        b.eq(
            "driver tx packets vs device tx + link drops",
            d.packets,
            t.tx_packets + t.tx_link_down_drops,
        );
        b.eq(
            "device tx packets vs device rx packets + rx drops",
            t.tx_packets,
            x.rx_packets + x.rx_out_of_buffer + x.rx_no_rq_drops + x.rx_too_long + x.rx_dma_faults,
        );
        b.eq(
            "driver doorbells vs host SQ doorbell writes",
            d.doorbells,
            e.sq_doorbells,
        );
        b.eq(
            "driver doorbells vs device SQ doorbells",
            d.doorbells,
            t.sq_doorbells,
        );
        b.eq(
            "device TX CQEs vs driver TX CQEs",
            t.tx_cqes + t.tx_err_cqes,
            d.cqes,
        );
        b.eq(
            "device RX CQEs vs driver RX CQ entries",
            x.rx_cqes + x.rx_err_cqes,
            r.cqes,
        );
        b.eq(
            "compression sessions",
            x.compress_sessions,
            r.cqe_compress_blks,
        );
        b.eq("compressed CQEs", x.compressed_cqes, r.cqe_compress_pkts);
        b.eq("MPWQE packets", d.mpwqe_pkts, t.mpwqe_pkts);
        b.eq(
            "driver WQEs vs device non-NOP WQEs",
            d.wqes,
            t.wqes - t.nop_wqes,
        );
        b.eq("NOPs", d.nop, t.nop_wqes);
        b.eq(
            "device RX packets vs driver RX packets",
            x.rx_packets,
            r.packets,
        );
        b.eq("device RX bytes vs driver RX bytes", x.rx_bytes, r.bytes);
        b.eq(
            "driver RX packets vs delivered",
            r.packets,
            self.rx_delivered,
        );
        self.env.check_host(&mut b, &self.tx, d.bytes);
        b.eq("device WQE errors", t.wqe_errors, 0);
        b.eq("driver CQE protocol errors", d.cqe_bad + r.cqe_bad, 0);
        b.floor(t.pcie.in_bytes, t.tx_floor_in_bytes);
        b.finish()
    }
}
