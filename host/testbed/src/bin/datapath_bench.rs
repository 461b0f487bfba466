//! Deterministic data-path figures of the mlx5 SQ against the simulated ConnectX
//! (rsnic-datapath.rst, "How figures are measured"). `scripts/bench.sh` (`make bench`) runs
//! every configuration in its own process under callgrind and writes
//! `target/bench/datapath.csv`.
//!
//! ```text
//! datapath_bench [--packets N]                          every configuration, no instructions
//! datapath_bench --one PATH SIZE BURST [--packets N]    one configuration, one ROW line
//! datapath_bench --mana PATH BUDGET [--packets N]       one MANA RX configuration, one ROW line
//! datapath_bench --mana-tx SIZE BURST [--packets N]     one MANA TX configuration, one ROW line
//! datapath_bench --xdp PATH SIZE BURST [--packets N]    one XDP SQ configuration, one ROW line
//! ```
//!
//! XDP rows (`--xdp`, family `mlx5`): the SQ as the driver's XDP SQs use it (`xdp.rs`,
//! `family/mlx5.rs` `xdp_sq_open`): a second SQ on the TX port (the pair's own stays idle)
//! with Enhanced MPWQE on, every frame posted with `xmit_more` set, one
//! [`Sq::flush`](rsnic_core::hwif::mlx5::sq::Sq::flush) (close the session, one doorbell) per
//! burst of BURST frames, as the driver flushes once per NAPI poll or `ndo_xdp_xmit` batch,
//! and the driver's XDP TX queue ([`XdpHostEnv`]): no BQL, no stack queue, a full ring only
//! sets a flag. PATH is `xdp_mpwqe` (inline off) or `xdp_mpwqe_inline` (inline on, the
//! driver's setting). The schedule and the figures are those of `--one`; callgrind counts
//! [`bench_xdp_xmit`], [`bench_xdp_flush`] and [`bench_xdp_tx_poll`]. When the ring is full
//! before a frame, the driver would drop frames until its next poll; the bench flushes, runs
//! the device and reaps instead, and prints how often (`FULL`).
//!
//! MANA rows (`--mana`, family `mana`): PATH is `rx_db_batched` (one RQ doorbell per NAPI
//! poll that read completions, the 2023 behaviour) or `rx_db_per_packet` (one per re-posted
//! WQE, the pre-2023 behaviour); BUDGET the NAPI budget. 64-byte UDP frames go from port 0 in
//! bursts of 32 until 256 are waiting at port 1, whose RQ (512 WQEs) is then polled with the
//! budget until empty. Figures are per packet for the RX port (port 1): RX WQE bytes fetched,
//! inbound PCIe bytes (doorbells and WQE read completions), outbound bytes (read requests,
//! packet data, CQEs, EQEs), all doorbells, RX CQEs, and RQ doorbells (`RXDB`); callgrind
//! counts [`bench_mana_rx_poll`]. For mlx5 rows `RXDB` is the RQ's doorbell-record writes
//! per packet (the driver's `dbr_writes`): the mlx5 RQ has no MMIO doorbell, it announces
//! re-posted WQEs by writing its doorbell record, once per refill of at least `wqe_bulk`
//! WQEs.
//!
//! MANA TX rows (`--mana-tx`, family `mana`, path `tx`): the schedule and figures of `--one`
//! on a [`ManaPair`] whose SQ has 1024 one-BU WQEs (as the mlx5 rows' 1024 WQEBBs); callgrind
//! counts [`bench_mana_xmit`] and [`bench_mana_tx_poll`] (one NAPI round of the TX CQ, called
//! until a round reads nothing).
//!
//! Output of `--one`, `--mana-tx` and `--mana`: `ROW` with the CSV fields up to
//! `cqes_per_pkt`, then `RXDB BUDGET,VALUE`, the fields `napi_budget` and
//! `rx_doorbells_per_pkt` (the RX NAPI budget, [`RX_BUDGET`] for mlx5 and MANA TX rows);
//! `scripts/bench.sh` writes every CSV row as `ROW,instr_per_pkt,RXDB,driver,glue`.
//!
//! PATH is `regular`, `mpwqe` or `mpwqe_inline`; SIZE the frame length in bytes (an
//! Ethernet/IPv4/UDP frame without FCS); BURST the packets per doorbell (`xmit_more` on all
//! but the last of each burst).
//!
//! Schedule, identical for every configuration: the device runs after every burst (it
//! processes what the doorbell announced), the RQ of the peer port is polled empty after
//! every device run, and TX completions are reaped every [`REAP_EVERY`] packets (and
//! whenever the driver stopped the queue), so up to 512 packets are outstanding, as under
//! load with interrupt moderation. [`WARMUP`] packets go first and are not measured.
//!
//! Figures are per packet, for the TX port (port 0) only: descriptor bytes the device fetched
//! (WQEs and NOPs), modeled inbound PCIe bytes and the inbound floor of the packet data,
//! outbound PCIe bytes (read requests, CQEs), SQ doorbell register writes and TX CQEs.
//! Driver instructions are what callgrind counts inside [`bench_driver_xmit`] and
//! [`bench_driver_tx_poll`] (toggle-collect on those two functions), divided by packets.
//! `scripts/bench.sh` builds this binary with the cargo profile `bench-kernel` (the kernel's
//! Rust codegen) and splits the count into the driver's own instructions and the host glue's
//! by each instruction's inline chain; the `bench_*` wrappers count as the driver's entry
//! points, closures in them (the release callbacks) as glue.

use std::process::ExitCode;

use rsnic_core::hwif::hw::{Barriers, Coherent, DmaAddr, Mmio};
use rsnic_core::hwif::mana::rq::RxPoll;
use rsnic_core::hwif::mlx5::sq::{FifoEntry, Sq, SqParams, TxPoll, WqeInfo};
use rsnic_core::hwif::mlx5::tx::{DmaEntry, InlineMode, TxDmaMap, TxPacket, TxQueue, TxReject};
use rsnic_core::sim::mlx5::{api_uar_offset, SqConfig, SQ_DOORBELL};
use rsnic_testbed::fixtures::Ipv4Frame;
use rsnic_testbed::glue::TxBook;
use rsnic_testbed::mana_pair::{self, ManaConfig, ManaEnv, ManaPair, ManaRq, ManaSq};
use rsnic_testbed::mem::HostBuf;
use rsnic_testbed::pair::{
    new_cq, new_vec_sq, HostEnv, HostSq, Pair, PairConfig, TxFrame, TxPkt, LKEY, TX_PORT,
};

/// Packets sent before measuring.
const WARMUP: u64 = 512;
/// TX completions are reaped every this many packets.
const REAP_EVERY: u64 = 512;
/// Packets measured by default.
const PACKETS: u64 = 4096;
/// RX NAPI budget.
const RX_BUDGET: u32 = 64;

const PATHS: [&str; 3] = ["regular", "mpwqe", "mpwqe_inline"];
const XDP_PATHS: [&str; 2] = ["xdp_mpwqe", "xdp_mpwqe_inline"];
/// Frame size of the XDP rows in the table without arguments.
const XDP_SIZE: usize = 64;
const SIZES: [usize; 5] = [64, 128, 256, 512, 1500];
const BURSTS: [u64; 2] = [1, 32];

/// The driver's xmit, out of line so that callgrind can count exactly it.
#[inline(never)]
fn bench_driver_xmit(
    sq: &mut HostSq,
    pkt: TxPkt,
    xmit_more: bool,
    env: &mut HostEnv,
) -> Result<(), TxReject<TxPkt>> {
    sq.xmit(pkt, xmit_more, env)
}

/// The driver's TX completion poll, out of line for callgrind. Released packets are only
/// collected here; the caller recycles them outside the measured function.
#[inline(never)]
fn bench_driver_tx_poll(sq: &mut HostSq, env: &mut HostEnv, done: &mut Vec<TxPkt>) -> TxPoll {
    sq.poll_cq(env, |p| done.push(p))
}

/// The MANA driver's RX NAPI poll, out of line for callgrind. Delivered buffers are only
/// collected here.
#[inline(never)]
fn bench_mana_rx_poll(
    rq: &mut ManaRq,
    budget: u32,
    env: &mut ManaEnv,
    out: &mut Vec<rsnic_testbed::pair::RxBuf>,
) -> RxPoll {
    rq.napi_poll(budget, env, |b, _| out.push(b))
}

/// The MANA driver's xmit, out of line for callgrind.
#[inline(never)]
fn bench_mana_xmit(
    sq: &mut ManaSq,
    pkt: TxPkt,
    xmit_more: bool,
    env: &mut ManaEnv,
) -> Result<(), TxReject<TxPkt>> {
    sq.xmit(pkt, xmit_more, env)
}

/// The MANA driver's TX completion: one NAPI round of the TX CQ (`Sq::napi_poll`: the CQ
/// poll, then the CQ doorbell rule), out of line for callgrind. Released packets are only
/// collected here.
#[inline(never)]
fn bench_mana_tx_poll(sq: &mut ManaSq, env: &mut ManaEnv, done: &mut Vec<TxPkt>) -> u32 {
    sq.napi_poll(MANA_TX_BUDGET, env, |p| done.push(p)).0.cqes
}

/// Frame size of the MANA TX rows in the table without arguments.
const MANA_TX_SIZE: usize = 64;
/// NAPI budget of the MANA TX completion rounds.
const MANA_TX_BUDGET: u32 = 64;
/// SQ of the MANA TX rows: 1024 one-BU (32-byte) WQEs, as the mlx5 rows' 1024 WQEBBs, so
/// that the schedule (up to [`REAP_EVERY`] packets outstanding) is the same.
const MANA_TX_SQ_SIZE: u32 = 1024 * 32;

/// One MANA TX configuration (path `tx`): the row of the TX port (port 0), as [`run_one`]'s.
fn run_mana_tx(size: usize, burst: u64, packets: u64) -> Row {
    let p = ManaPair::new(ManaConfig {
        ring_per_packet: false,
        rq_wqes: 512,
        sq_size: MANA_TX_SQ_SIZE,
        track_dma: false,
        sge_keys: None,
    });
    let mut r = Runner {
        p,
        frame: TxFrame::linear(udp4_frame(size)),
        done: Vec::with_capacity(1024),
        since_reap: 0,
    };
    r.send(WARMUP, burst, false);
    let base = r.p.dev(mana_pair::TX_PORT);
    let rx0 = r.p.dev(mana_pair::RX_PORT);
    let d0 = r.p.drv_tx();
    r.send(packets, burst, true);
    let c = r.p.dev(mana_pair::TX_PORT);
    let rx1 = r.p.dev(mana_pair::RX_PORT);
    let d = r.p.drv_tx();
    assert_eq!(
        d.packets - d0.packets,
        packets,
        "driver posted every packet"
    );
    assert_eq!(c.wqes - base.wqes, packets, "device sent every packet");
    assert_eq!(c.tx_err_cqes, 0, "TX errors");
    if let Err(e) = r.p.check_counters() {
        panic!("counters do not balance: {e}");
    }
    Row {
        // MANA has no inline data path.
        inlined: 0.0,
        rx_db: per_packet(rx1.rq_doorbells, rx0.rq_doorbells, packets),
        ..Row::tx("mana", "tx", size, burst, &c, &base, packets)
    }
}

const MANA_PATHS: [&str; 2] = ["rx_db_batched", "rx_db_per_packet"];
const MANA_BUDGETS: [u32; 3] = [8, 64, 256];
/// Packets waiting at the RX port before each round of polls.
const MANA_BATCH: u64 = 256;

/// One MANA RX configuration: (CSV row without instructions, RX doorbells per packet).
fn run_mana(path: &'static str, budget: u32, packets: u64) -> (String, f64) {
    let mut p = ManaPair::new(ManaConfig {
        ring_per_packet: path == "rx_db_per_packet",
        rq_wqes: 512,
        sq_size: 512 * 32,
        track_dma: false,
        sge_keys: None,
    });
    let frame = mana_pair::Frame::linear(udp4_frame(64));
    let frames: Vec<_> = (0..32).map(|_| frame.clone()).collect();
    let mut out = Vec::with_capacity(512);
    let mut round = |p: &mut ManaPair, n: u64, measured: bool| {
        let mut sent = 0;
        while sent < n {
            let mut waiting = 0;
            while waiting < MANA_BATCH && sent < n {
                let k = (n - sent).min(32) as usize;
                assert_eq!(p.send_burst(&frames[..k]), k, "TX queue stopped");
                p.run_device();
                p.poll_tx(256);
                waiting += k as u64;
                sent += k as u64;
            }
            loop {
                let r = if measured {
                    bench_mana_rx_poll(&mut p.rq, budget, &mut p.env, &mut out)
                } else {
                    p.rq.napi_poll(budget, &mut p.env, |b, _| out.push(b))
                };
                for b in out.drain(..) {
                    rsnic_core::hwif::mlx5::rq::RxBufProvider::recycle(&mut p.env, b);
                }
                if r.work == 0 {
                    break;
                }
            }
        }
    };
    round(&mut p, WARMUP, false);
    let b = p.dev(mana_pair::RX_PORT);
    let d0 = p.drv_rx();
    round(&mut p, packets, true);
    let c = p.dev(mana_pair::RX_PORT);
    let d = p.drv_rx();
    assert_eq!(d.packets - d0.packets, packets, "every packet received");
    assert_eq!(c.hc_rx_discards_no_wqe, 0);
    let per = |a: u64, b: u64| per_packet(a, b, packets);
    let rxdb = per(c.rq_doorbells, b.rq_doorbells);
    let row = format!(
        "mana,{},64,32,{:.2},{:.2},{:.2},{:.2},{:.4},{:.4}",
        path,
        per(c.wqe_bytes, b.wqe_bytes),
        per(c.pcie.in_bytes, b.pcie.in_bytes),
        0.0,
        per(c.pcie.out_bytes, b.pcie.out_bytes),
        per(
            c.sq_doorbells + c.rq_doorbells + c.cq_doorbells + c.eq_doorbells,
            b.sq_doorbells + b.rq_doorbells + b.cq_doorbells + b.eq_doorbells
        ),
        per(c.rx_cqes, b.rx_cqes),
    );
    (row, rxdb)
}

/// Ethernet + IPv4 + UDP frame of `len` bytes (at least 42), lengths filled in.
fn udp4_frame(len: usize) -> Vec<u8> {
    Ipv4Frame::udp(len)
        .lengths()
        .ttl(64)
        .addrs()
        .ports(9000, 9001)
        .payload(|i| i as u8)
        .build()
}

/// One configuration's figures, per packet.
struct Row {
    family: &'static str,
    path: &'static str,
    size: usize,
    burst: u64,
    desc: f64,
    inbound: f64,
    floor: f64,
    outbound: f64,
    doorbells: f64,
    cqes: f64,
    inlined: f64,
    rx_db: f64,
}

/// What a counter moved from `base` to `now`, per packet of `packets`.
fn per_packet(now: u64, base: u64, packets: u64) -> f64 {
    (now - base) as f64 / packets as f64
}

/// The TX port's device counters behind a [`Row`]'s figures, in either family's model.
trait TxCounters {
    /// The counters of `desc`, `inbound`, `floor`, `outbound`, `doorbells` and `cqes`.
    fn tx_figures(&self) -> [u64; 6];
}

macro_rules! tx_counters {
    ($($ty:ty),*) => {$(
        impl TxCounters for $ty {
            fn tx_figures(&self) -> [u64; 6] {
                [
                    self.wqe_bytes,
                    self.pcie.in_bytes,
                    self.tx_floor_in_bytes,
                    self.pcie.out_bytes,
                    self.sq_doorbells,
                    self.tx_cqes,
                ]
            }
        }
    )*};
}

tx_counters!(
    rsnic_core::sim::mlx5::PortCounters,
    rsnic_core::sim::mana::PortCounters
);

impl Row {
    /// A TX configuration's row: the figures from the TX port's counters `c` against `base`,
    /// per packet of `packets`; `inlined` and `rx_db` 0, for the caller to fill in.
    fn tx<C: TxCounters>(
        family: &'static str,
        path: &'static str,
        size: usize,
        burst: u64,
        c: &C,
        base: &C,
        packets: u64,
    ) -> Row {
        let (c, base) = (c.tx_figures(), base.tx_figures());
        let [desc, inbound, floor, outbound, doorbells, cqes] =
            std::array::from_fn(|i| per_packet(c[i], base[i], packets));
        Row {
            family,
            path,
            size,
            burst,
            desc,
            inbound,
            floor,
            outbound,
            doorbells,
            cqes,
            inlined: 0.0,
            rx_db: 0.0,
        }
    }
}

/// A port pair under [`Runner`]'s schedule: the mlx5 [`Pair`] or the [`ManaPair`], with its
/// driver's xmit and TX completion, through the `bench_*` wrappers when measured.
trait TxPair {
    /// The stack's side of the TX packets.
    fn book(&mut self) -> &mut TxBook;
    /// Whether the driver stopped the TX queue.
    fn stopped(&self) -> bool;
    /// Packets the driver accepted and has not handed back.
    fn in_flight(&self) -> usize;
    /// The driver's xmit of `pkt`.
    fn xmit(&mut self, pkt: TxPkt, more: bool, measured: bool) -> Result<(), TxReject<TxPkt>>;
    /// One TX completion round, released packets into `done`; whether to poll again.
    fn tx_poll(&mut self, done: &mut Vec<TxPkt>, measured: bool) -> bool;
    /// Runs the device, then polls the peer port's RQ empty.
    fn device_and_rx(&mut self);
}

/// The [`TxPair`] methods that both pairs' own methods of the same names answer.
macro_rules! same_in_both_pairs {
    () => {
        fn book(&mut self) -> &mut TxBook {
            &mut self.tx
        }
        fn stopped(&self) -> bool {
            self.tx_stopped()
        }
        fn in_flight(&self) -> usize {
            self.tx_in_flight()
        }
        fn device_and_rx(&mut self) {
            self.run_device();
            while !self.poll_rx(RX_BUDGET).is_empty() {}
        }
    };
}

impl TxPair for Pair {
    same_in_both_pairs!();
    fn xmit(&mut self, pkt: TxPkt, more: bool, measured: bool) -> Result<(), TxReject<TxPkt>> {
        if measured {
            bench_driver_xmit(&mut self.sq, pkt, more, &mut self.env)
        } else {
            self.sq.xmit(pkt, more, &mut self.env)
        }
    }
    fn tx_poll(&mut self, done: &mut Vec<TxPkt>, measured: bool) -> bool {
        let r = if measured {
            bench_driver_tx_poll(&mut self.sq, &mut self.env, done)
        } else {
            self.sq.poll_cq(&mut self.env, |x| done.push(x))
        };
        r.busy
    }
}

impl TxPair for ManaPair {
    same_in_both_pairs!();
    fn xmit(&mut self, pkt: TxPkt, more: bool, measured: bool) -> Result<(), TxReject<TxPkt>> {
        if measured {
            bench_mana_xmit(&mut self.sq, pkt, more, &mut self.env)
        } else {
            self.sq.xmit(pkt, more, &mut self.env)
        }
    }
    fn tx_poll(&mut self, done: &mut Vec<TxPkt>, measured: bool) -> bool {
        let cqes = if measured {
            bench_mana_tx_poll(&mut self.sq, &mut self.env, done)
        } else {
            self.sq
                .napi_poll(MANA_TX_BUDGET, &mut self.env, |x| done.push(x))
                .0
                .cqes
        };
        cqes != 0
    }
}

/// The TX schedule of the mlx5 and MANA TX rows on a port pair.
struct Runner<P> {
    p: P,
    frame: TxFrame,
    done: Vec<TxPkt>,
    since_reap: u64,
}

impl<P: TxPair> Runner<P> {
    fn reap(&mut self, measured: bool) {
        loop {
            let again = self.p.tx_poll(&mut self.done, measured);
            for pkt in self.done.drain(..) {
                self.p.book().release(pkt);
            }
            if !again {
                break;
            }
        }
        self.since_reap = 0;
    }

    fn send(&mut self, packets: u64, burst: u64, measured: bool) {
        let mut sent = 0;
        while sent < packets {
            for k in 0..burst {
                if self.p.stopped() {
                    self.p.device_and_rx();
                    self.reap(measured);
                    assert!(!self.p.stopped(), "queue still stopped after a reap");
                }
                let pkt = self.p.book().make_pkt(&self.frame);
                let id = pkt.id();
                let more = k + 1 < burst;
                if let Err(e) = self.p.xmit(pkt, more, measured) {
                    panic!("packet {id} rejected: {:?}", e.reason);
                }
                self.p.book().accepted(id);
                sent += 1;
                self.since_reap += 1;
            }
            self.p.device_and_rx();
            if self.since_reap >= REAP_EVERY {
                self.reap(measured);
            }
        }
        // Everything out and completed.
        self.p.device_and_rx();
        self.reap(measured);
        assert_eq!(self.p.in_flight(), 0);
    }
}

fn run_one(path: &'static str, size: usize, burst: u64, packets: u64) -> Row {
    let (mpwqe, mpwqe_inline) = match path {
        "regular" => (false, false),
        "mpwqe" => (true, false),
        _ => (true, true),
    };
    let p = Pair::new(PairConfig {
        mpwqe,
        mpwqe_inline,
        cqe_compress: true,
        track_dma: false,
        ..PairConfig::default()
    });
    let mut r = Runner {
        p,
        frame: TxFrame::linear(udp4_frame(size)),
        done: Vec::with_capacity(1024),
        since_reap: 0,
    };
    r.send(WARMUP, burst, false);
    let base = r.p.dev_tx();
    let rx0 = r.p.dev_rx();
    let rx_dbr0 = r.p.drv_rx().dbr_writes;
    let inl0 = r.p.drv_tx().inlnw;
    r.send(packets, burst, true);
    let c = r.p.dev_tx();
    let rx1 = r.p.dev_rx();
    let rx_dbr1 = r.p.drv_rx().dbr_writes;
    let d = r.p.drv_tx();
    assert_eq!(
        rx1.doorbells + rx1.bad_doorbells,
        rx0.doorbells + rx0.bad_doorbells,
        "a register write to the RX port's UAR (the mlx5 RQ has no MMIO doorbell)"
    );
    assert_eq!(
        c.tx_packets - base.tx_packets,
        packets,
        "device sent every packet"
    );
    if let Err(e) = r.p.check_counters() {
        panic!("counters do not balance: {e}");
    }
    Row {
        inlined: per_packet(d.inlnw, inl0, packets),
        // The RQ's doorbell-record writes: the mlx5 RQ has no MMIO doorbell.
        rx_db: per_packet(rx_dbr1, rx_dbr0, packets),
        ..Row::tx("mlx5", path, size, burst, &c, &base, packets)
    }
}

/// A frame on the bench's XDP SQ: a host packet under its own type, so that the XDP SQ is
/// its own instantiation of the SQ code, as the driver's `Sq<XdpTx, ..>` is. (The skb rows'
/// `Sq<TxPkt, ..>` is then compiled exactly as without the XDP rows: sharing it, with a second
/// environment type or only a second caller of its flush, changed the compiler's inlining of
/// the shared code and moved the skb rows' instruction counts.)
struct XdpPkt(TxPkt);

impl TxPacket for XdpPkt {
    #[inline]
    fn pkt_len(&self) -> u32 {
        self.0.pkt_len()
    }
    #[inline]
    fn linear(&self) -> &[u8] {
        self.0.linear()
    }
    #[inline]
    fn nr_frags(&self) -> usize {
        self.0.nr_frags()
    }
    #[inline]
    fn frag_len(&self, i: usize) -> u32 {
        self.0.frag_len(i)
    }
}

/// The driver-side XDP SQ with host storage.
type XdpSq = Sq<XdpPkt, HostBuf, Vec<WqeInfo<XdpPkt>>, Vec<FifoEntry<XdpPkt>>, Vec<DmaEntry>>;

/// An XDP SQ's environment (`XdpEnv` in the driver's `xdp.rs`) over the host one: the
/// registers, barriers and DMA mapping of [`HostEnv`], the TX queue of an XDP SQ. XDP SQs
/// have no BQL and no stack queue: `sent` never asks for a doorbell (the caller flushes)
/// and a full ring only sets `full`.
struct XdpHostEnv<'a> {
    env: &'a mut HostEnv,
    full: &'a mut bool,
}

impl Mmio for XdpHostEnv<'_> {
    #[inline]
    fn write64(&self, offset: u32, bytes: [u8; 8]) {
        self.env.write64(offset, bytes);
    }
    #[inline]
    fn write32(&self, offset: u32, value: u32) {
        self.env.write32(offset, value);
    }
    #[inline]
    fn read32(&self, offset: u32) -> u32 {
        self.env.read32(offset)
    }
}

impl Barriers for XdpHostEnv<'_> {
    #[inline]
    fn dma_wmb(&self) {
        self.env.dma_wmb();
    }
    #[inline]
    fn dma_rmb(&self) {
        self.env.dma_rmb();
    }
    #[inline]
    fn wmb(&self) {
        self.env.wmb();
    }
}

impl TxDmaMap<XdpPkt> for XdpHostEnv<'_> {
    #[inline]
    fn map_linear(&mut self, pkt: &XdpPkt, offset: u32, len: u32) -> Option<DmaAddr> {
        self.env.map_linear(&pkt.0, offset, len)
    }
    #[inline]
    fn map_frag(&mut self, pkt: &XdpPkt, index: usize) -> Option<DmaAddr> {
        self.env.map_frag(&pkt.0, index)
    }
    #[inline]
    fn unmap(&mut self, entry: DmaEntry) {
        self.env.unmap(entry);
    }
}

impl TxQueue for XdpHostEnv<'_> {
    #[inline]
    fn stop(&mut self) {
        *self.full = true;
    }
    #[inline]
    fn wake(&mut self) {
        *self.full = false;
    }
    #[inline]
    fn is_stopped(&self) -> bool {
        *self.full
    }
    // The caller rings explicitly, once per burst.
    #[inline]
    fn sent(&mut self, _bytes: u32, _xmit_more: bool) -> bool {
        false
    }
    #[inline]
    fn completed(&mut self, _pkts: u32, _bytes: u32) {}
}

/// The XDP SQ's post of one frame (`xmit_more` always set), out of line for callgrind.
#[inline(never)]
fn bench_xdp_xmit(
    sq: &mut XdpSq,
    pkt: XdpPkt,
    env: &mut XdpHostEnv<'_>,
) -> Result<(), TxReject<XdpPkt>> {
    sq.xmit(pkt, true, env)
}

/// The XDP SQ's flush at the end of a burst (close the session, ring once), out of line.
#[inline(never)]
fn bench_xdp_flush(sq: &mut XdpSq, env: &mut XdpHostEnv<'_>) {
    sq.flush(env)
}

/// The XDP SQ's completion poll, out of line for callgrind.
#[inline(never)]
fn bench_xdp_tx_poll(sq: &mut XdpSq, env: &mut XdpHostEnv<'_>, done: &mut Vec<XdpPkt>) -> TxPoll {
    sq.poll_cq(env, |p| done.push(p))
}

/// Creates an XDP SQ (and its CQ) of `2^log_sz` WQEBBs on the TX port of `p`, next to the
/// pair's own SQ (which stays idle), with the driver's XDP SQ parameters (`xdp_sq_open`):
/// Enhanced MPWQE on, `inline` for `mpwqe_inline`.
fn xdp_sq(p: &Pair, log_sz: u8, inline: bool) -> XdpSq {
    let mem = &p.tb.mem;
    let n = 1usize << log_sz;
    let (cqn, cq) = new_cq(&p.tb, TX_PORT, log_sz, 0, false, "XDP CQ");
    let (wq, dbr) = (mem.alloc(n * 64), mem.alloc(8));
    let sqn =
        p.tb.device()
            .create_sq(&SqConfig {
                port: TX_PORT,
                buf: wq.dma_addr(),
                log_size: log_sz,
                dbr: dbr.dma_addr(),
                cqn,
            })
            .expect("create XDP SQ");
    new_vec_sq(
        SqParams {
            log_sz,
            sqn,
            lkey: LKEY,
            db_offset: api_uar_offset(TX_PORT) + SQ_DOORBELL,
            dbr_off: 0,
            min_inline: InlineMode::None,
            vlan_need_l2_inline: false,
            max_sq_wqebbs: 16,
            mpwqe: true,
            mpwqe_inline: inline,
        },
        wq,
        dbr,
        cq,
    )
    .expect("XDP SQ")
}

/// The XDP SQ usage pattern on the port pair: the schedule of [`Runner`], with every frame
/// posted with `xmit_more` and one flush per burst.
struct XdpRunner {
    p: Pair,
    sq: XdpSq,
    frame: TxFrame,
    done: Vec<XdpPkt>,
    since_reap: u64,
    /// The XDP SQ is past its stop room (the driver's `XdpSqSide::full`).
    full: bool,
    /// Times the ring was full before a frame (flushed and reaped there).
    full_events: u64,
}

impl XdpRunner {
    fn flush(&mut self, measured: bool) {
        let mut env = XdpHostEnv {
            env: &mut self.p.env,
            full: &mut self.full,
        };
        if measured {
            bench_xdp_flush(&mut self.sq, &mut env);
        } else {
            self.sq.flush(&mut env);
        }
    }

    fn reap(&mut self, measured: bool) {
        loop {
            let mut env = XdpHostEnv {
                env: &mut self.p.env,
                full: &mut self.full,
            };
            let r = if measured {
                bench_xdp_tx_poll(&mut self.sq, &mut env, &mut self.done)
            } else {
                let done = &mut self.done;
                self.sq.poll_cq(&mut env, |x| done.push(x))
            };
            for pkt in self.done.drain(..) {
                self.p.tx.release(pkt.0);
            }
            if !r.busy {
                break;
            }
        }
        self.since_reap = 0;
    }

    fn send(&mut self, packets: u64, burst: u64, measured: bool) {
        let mut sent = 0;
        while sent < packets {
            for _ in 0..burst {
                if self.full {
                    // The ring is past its stop room. The driver's XDP SQ would drop frames
                    // until its next NAPI poll reaps; the bench rings what is posted and
                    // reaps, so that every configuration sends every frame. Counted: the
                    // figures describe the usage pattern only while this stays rare.
                    self.full_events += 1;
                    self.flush(measured);
                    self.p.device_and_rx();
                    self.reap(measured);
                    assert!(!self.full, "XDP SQ still full after a reap");
                }
                let pkt = XdpPkt(self.p.tx.make_pkt(&self.frame));
                let id = pkt.0.id();
                let mut env = XdpHostEnv {
                    env: &mut self.p.env,
                    full: &mut self.full,
                };
                let r = if measured {
                    bench_xdp_xmit(&mut self.sq, pkt, &mut env)
                } else {
                    self.sq.xmit(pkt, true, &mut env)
                };
                if let Err(e) = r {
                    panic!("frame {id} rejected: {:?}", e.reason);
                }
                self.p.tx.accepted(id);
                sent += 1;
                self.since_reap += 1;
            }
            self.flush(measured);
            self.p.device_and_rx();
            if self.since_reap >= REAP_EVERY {
                self.reap(measured);
            }
        }
        self.p.device_and_rx();
        self.reap(measured);
        assert_eq!(self.p.tx_in_flight(), 0);
    }
}

/// One XDP SQ configuration: the row, and how often the ring was full before a frame.
fn run_xdp(path: &'static str, size: usize, burst: u64, packets: u64) -> (Row, u64) {
    let cfg = PairConfig {
        cqe_compress: true,
        track_dma: false,
        ..PairConfig::default()
    };
    let p = Pair::new(cfg);
    let sq = xdp_sq(&p, cfg.sq_log_sz, path == "xdp_mpwqe_inline");
    let mut r = XdpRunner {
        p,
        sq,
        frame: TxFrame::linear(udp4_frame(size)),
        done: Vec::with_capacity(1024),
        since_reap: 0,
        full: false,
        full_events: 0,
    };
    r.send(WARMUP, burst, false);
    let base = r.p.dev_tx();
    let rx_dbr0 = r.p.drv_rx().dbr_writes;
    let d0 = r.sq.stats;
    let full0 = r.full_events;
    r.send(packets, burst, true);
    let c = r.p.dev_tx();
    let x = r.p.dev_rx();
    let rx_dbr1 = r.p.drv_rx().dbr_writes;
    let d = r.sq.stats;
    let e = r.p.env.counts();
    // The balances of Pair::check_counters that apply (the pair's own SQ is idle, and an
    // XDP SQ reports nothing to BQL).
    assert_eq!(r.p.drv_tx().packets, 0, "the pair's own SQ stays idle");
    assert_eq!(
        c.tx_packets - base.tx_packets,
        packets,
        "device sent every frame"
    );
    assert_eq!(d.packets - d0.packets, packets, "driver posted every frame");
    assert_eq!(
        d.xmit_more - d0.xmit_more,
        packets,
        "every frame posted with xmit_more"
    );
    assert_eq!(d.doorbells, c.sq_doorbells, "driver vs device doorbells");
    assert_eq!(
        d.doorbells, e.sq_doorbells,
        "driver vs host doorbell writes"
    );
    assert_eq!(
        c.tx_cqes + c.tx_err_cqes,
        d.cqes,
        "device vs driver TX CQEs"
    );
    assert_eq!(d.mpwqe_pkts, c.mpwqe_pkts, "MPWQE packets");
    assert_eq!(d.wqes, c.wqes - c.nop_wqes, "WQEs");
    assert_eq!(d.nop, c.nop_wqes, "NOPs");
    assert_eq!((c.wqe_errors, d.cqe_bad), (0, 0), "errors");
    assert_eq!(e.maps, e.unmaps, "DMA maps vs unmaps");
    assert_eq!(e.bql_sent_pkts, 0, "an XDP SQ reports nothing to BQL");
    assert_eq!(
        x.rx_packets + x.rx_out_of_buffer + x.rx_no_rq_drops + x.rx_too_long,
        c.tx_packets,
        "every frame reached the RX port"
    );
    assert_eq!(r.p.tx_in_flight(), 0);
    let row = Row {
        inlined: per_packet(d.inlnw, d0.inlnw, packets),
        rx_db: per_packet(rx_dbr1, rx_dbr0, packets),
        ..Row::tx("mlx5", path, size, burst, &c, &base, packets)
    };
    (row, r.full_events - full0)
}

fn row_csv(r: &Row) -> String {
    format!(
        "{},{},{},{},{:.2},{:.2},{:.2},{:.2},{:.4},{:.4}",
        r.family,
        r.path,
        r.size,
        r.burst,
        r.desc,
        r.inbound,
        r.floor,
        r.outbound,
        r.doorbells,
        r.cqes
    )
}

/// The lines of `--one`, `--xdp` and `--mana-tx`: `ROW`, `INLINED` and `RXDB` (with the RX
/// budget of those rows).
fn print_row(r: &Row) {
    println!("ROW {}", row_csv(r));
    println!("INLINED {:.4}", r.inlined);
    println!("RXDB {RX_BUDGET},{:.4}", r.rx_db);
}

/// A TX row of the table without arguments, under the name `name`.
fn table_line(name: &str, r: &Row) -> String {
    format!(
        "{:13} {:5} {:5} {:9.2} {:9.2} {:9.2} {:9.2} {:9.4} {:7.4} {:8.3} {:8.4}",
        name,
        r.size,
        r.burst,
        r.desc,
        r.inbound,
        r.floor,
        r.outbound,
        r.doorbells,
        r.cqes,
        r.inlined,
        r.rx_db
    )
}

/// The PATH SIZE BURST arguments after `args[i]`: PATH one of `paths`, SIZE from 42 to
/// `max_size`, BURST at least 1.
fn path_size_burst(
    args: &[String],
    i: usize,
    paths: &[&'static str],
    max_size: usize,
) -> Option<(&'static str, usize, u64)> {
    let path = args
        .get(i + 1)
        .and_then(|s| paths.iter().find(|p| **p == s.as_str()))?;
    let size = args.get(i + 2).and_then(|s| s.parse::<usize>().ok())?;
    let burst = args.get(i + 3).and_then(|s| s.parse::<u64>().ok())?;
    ((42..=max_size).contains(&size) && burst > 0).then_some((*path, size, burst))
}

fn usage() -> ExitCode {
    eprintln!(
        "usage: datapath_bench [--packets N] | --one PATH SIZE BURST [--packets N] \
         | --mana PATH BUDGET [--packets N] | --mana-tx SIZE BURST [--packets N] \
         | --xdp PATH SIZE BURST [--packets N]"
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut packets = PACKETS;
    let mut one = None;
    let mut mana = None;
    let mut xdp = None;
    let mut mana_tx = None;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--packets" => {
                let Some(n) = args.get(i + 1).and_then(|s| s.parse().ok()) else {
                    return usage();
                };
                packets = n;
                i += 2;
            }
            "--one" => {
                let Some(c) = path_size_burst(&args, i, &PATHS, 9000) else {
                    return usage();
                };
                one = Some(c);
                i += 4;
            }
            "--xdp" => {
                let Some(c) = path_size_burst(&args, i, &XDP_PATHS, 3434) else {
                    return usage();
                };
                xdp = Some(c);
                i += 4;
            }
            "--mana-tx" => {
                let (Some(size), Some(burst)) = (
                    args.get(i + 1).and_then(|s| s.parse::<usize>().ok()),
                    args.get(i + 2).and_then(|s| s.parse::<u64>().ok()),
                ) else {
                    return usage();
                };
                if !(42..=1514).contains(&size) || burst == 0 {
                    return usage();
                }
                mana_tx = Some((size, burst));
                i += 3;
            }
            "--mana" => {
                let (Some(path), Some(budget)) = (
                    args.get(i + 1)
                        .and_then(|s| MANA_PATHS.iter().find(|p| **p == s.as_str())),
                    args.get(i + 2).and_then(|s| s.parse::<u32>().ok()),
                ) else {
                    return usage();
                };
                if budget == 0 {
                    return usage();
                }
                mana = Some((*path, budget));
                i += 3;
            }
            _ => return usage(),
        }
    }
    if packets == 0 {
        return usage();
    }
    if let Some((path, size, burst)) = one {
        print_row(&run_one(path, size, burst, packets));
        return ExitCode::SUCCESS;
    }
    if let Some((path, size, burst)) = xdp {
        let (r, full) = run_xdp(path, size, burst, packets);
        print_row(&r);
        println!("FULL {full}");
        return ExitCode::SUCCESS;
    }
    if let Some((size, burst)) = mana_tx {
        print_row(&run_mana_tx(size, burst, packets));
        return ExitCode::SUCCESS;
    }
    if let Some((path, budget)) = mana {
        let (row, rxdb) = run_mana(path, budget, packets);
        println!("ROW {row}");
        println!("RXDB {budget},{rxdb:.4}");
        return ExitCode::SUCCESS;
    }
    println!(
        "{:13} {:>5} {:>5} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7} {:>8} {:>8}",
        "path",
        "size",
        "burst",
        "desc/pkt",
        "in/pkt",
        "floor",
        "out/pkt",
        "db/pkt",
        "cqe/pkt",
        "inlined",
        "rxdb/pkt"
    );
    for size in SIZES {
        for burst in BURSTS {
            for path in PATHS {
                println!("{}", table_line(path, &run_one(path, size, burst, packets)));
            }
        }
    }
    for burst in BURSTS {
        for path in XDP_PATHS {
            let (r, full) = run_xdp(path, XDP_SIZE, burst, packets);
            println!(
                "{}{}",
                table_line(path, &r),
                if full > 0 {
                    format!("  (ring full {full}x)")
                } else {
                    String::new()
                }
            );
        }
    }
    for burst in BURSTS {
        let r = run_mana_tx(MANA_TX_SIZE, burst, packets);
        println!("{}", table_line("mana tx", &r));
    }
    println!();
    println!(
        "{:17} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "mana path", "budget", "desc/pkt", "in/pkt", "out/pkt", "db/pkt", "rxdb/pkt"
    );
    for path in MANA_PATHS {
        for budget in MANA_BUDGETS {
            let (row, rxdb) = run_mana(path, budget, packets);
            let f: Vec<&str> = row.split(',').collect();
            println!(
                "{:17} {:6} {:>9} {:>9} {:>9} {:>9} {:9.4}",
                path, budget, f[4], f[5], f[7], f[8], rxdb
            );
        }
    }
    ExitCode::SUCCESS
}
