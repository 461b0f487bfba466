// SPDX-License-Identifier: GPL-2.0

//! Device families: what differs between a ConnectX (mlx5) port and a MANA (GDMA) port.
//!
//! The channel, NAPI, port, ethtool and engine machinery is written once, generic over a
//! [`Family`]; each family supplies its device model, its queues (SQ with its TX CQ, RQ with
//! its RX CQ, and for MANA the event queue behind the interrupt) and its counter names. Every
//! call is resolved at compile time (monomorphised): there is no function pointer on the
//! transmit or NAPI path. The counter tables of `ethtool -S` are function pointers, read on
//! the control path only.

pub(crate) mod mana;
pub(crate) mod mlx5;

use crate::channel::{ChannelParams, ChannelStats, RxEnv, TxEnv, TxSkb};
use crate::dp::mlx5::tx::{TxReject, TxRejectReason};
use crate::engine::{EngineMmio, IrqSink};
use crate::ext::net::page_pool::{PagePool, RxPage};
use crate::ext::net::xsk::XskBuf;
use crate::xdp::{XdpEnv, XdpSqKind, XdpTx, XskRxEnv};
use kernel::{prelude::*, str::CStr, sync::Arc};

/// Ring size limits of a family, as log2 of the number of entries (WQEs for MANA, WQEBBs
/// for the mlx5 SQ).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RingLimits {
    /// Smallest size.
    pub(crate) min: u8,
    /// Size at load.
    pub(crate) default: u8,
    /// Largest size.
    pub(crate) max: u8,
}

/// What a receive completion says about a packet, in the stack's terms.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RxMeta {
    /// Packet length.
    pub(crate) len: u32,
    /// The device verified the L3 and L4 checksums (`CHECKSUM_UNNECESSARY`).
    pub(crate) csum_ok: bool,
    /// RSS hash.
    pub(crate) hash: u32,
    /// Hash type: 0 none, 1 L3, 2 L4.
    pub(crate) hash_type: u8,
}

/// The counters every family has, for `ndo_get_stats64` and the netdev queue stats.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Summary {
    /// Packets queued for transmission.
    pub(crate) tx_packets: u64,
    /// Bytes queued for transmission.
    pub(crate) tx_bytes: u64,
    /// Packets dropped on the transmit side (refused, or still queued at close).
    pub(crate) tx_dropped: u64,
    /// Error completions of sent packets.
    pub(crate) tx_errors: u64,
    /// TX queue stops by the driver.
    pub(crate) tx_stop: u64,
    /// TX queue wakes by the completion path.
    pub(crate) tx_wake: u64,
    /// Packets handed to the stack.
    pub(crate) rx_packets: u64,
    /// Bytes handed to the stack.
    pub(crate) rx_bytes: u64,
    /// Received packets dropped by the driver.
    pub(crate) rx_dropped: u64,
    /// Receive errors (bad or unhandled completions).
    pub(crate) rx_errors: u64,
    /// Receive buffer allocation failures.
    pub(crate) rx_alloc_fail: u64,
}

/// Result of reaping a TX CQ.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TxReaped {
    /// CQEs were left for the next poll (the poll's limit was hit).
    pub(crate) busy: bool,
    /// Nothing is outstanding any more, or the SQ stopped in an error state.
    pub(crate) idle: bool,
    /// CQEs read.
    pub(crate) cqes: u32,
}

/// The queues of a channel, just opened.
pub(crate) struct Opened<F: Family> {
    /// The SQ with its TX CQ (goes to the port's TX slot).
    pub(crate) sq: F::Sq,
    /// The RQ with its RX CQ, buffers posted.
    pub(crate) rx: F::Rx,
    /// Interrupt state (MANA: the event queue).
    pub(crate) irq: F::Irq,
    /// Device RQ id (for the RSS table).
    pub(crate) rqn: u32,
}

/// Where a channel is being opened.
pub(crate) struct OpenCtx<'a, F: Family> {
    /// The device's engine (model commands, registers).
    pub(crate) engine: &'a Arc<crate::engine::Engine<F>>,
    /// The DMA parent.
    pub(crate) dma: &'a Arc<crate::ext::dma::DmaDevice>,
    /// Index of the port on its device.
    pub(crate) port: usize,
    /// MSI-X vector of the channel.
    pub(crate) vector: usize,
    /// The channel's page pool (RX buffers).
    pub(crate) pool: &'a PagePool,
    /// The port's function (queue commands).
    pub(crate) func: &'a Arc<F::Func>,
}

/// A counter getter of `ethtool -S` (control path only).
pub(crate) type Get<T> = fn(&T) -> u64;

/// One device family. See the module documentation.
pub(crate) trait Family: Sized + Send + Sync + 'static {
    /// Name of the family in the `family` module parameter.
    const NAME: &'static str;
    /// What `ethtool -i` reports as firmware version.
    const FW_VERSION: &'static str;
    /// Private flags (`ethtool --show-priv-flags`), bit 0 first.
    const PRIV_FLAGS: &'static [&'static CStr];
    /// Private flags at load.
    const DEFAULT_PFLAGS: u32;
    /// SQ ring limits.
    const SQ_RING: RingLimits;
    /// RQ ring limits.
    const RQ_RING: RingLimits;
    /// Per-queue counter names: `tx<N>_x` (mlx5, infix "") or `tx_<N>_x` (MANA, infix "_").
    const QUEUE_INFIX: &'static str;
    /// Whether channels have XDP SQs ([`Family::xdp_sq_open`]); without them, XDP_TX and
    /// redirected frames go out through the regular SQ as skbs.
    const XDP_SQS: bool;
    /// Whether channels support AF_XDP zero-copy ([`Family::xsk_rq_open`] and an XDP SQ of
    /// kind `Xsk`; an ICO SQ for wake-up NOPs if the family opens one, else `ndo_xsk_wakeup`
    /// schedules NAPI directly).
    const XSK_ZC: bool = false;

    /// The simulated device.
    type Model: Send;
    /// The control state of one port's function after bring-up (ConnectX: its command queue
    /// and what bring-up created and learnt; MANA: nothing yet).
    type Func: Send + Sync;
    /// The device model's own counters of one port (doorbells, WQEs, modeled PCIe bytes:
    /// what a real device does not count). The device host shows them in debugfs
    /// (`rsnic/<device>/port<N>/counters`), never the driver.
    type ModelCounters: Copy + Default;
    /// The port's hardware counters, as the device reports them through its control
    /// interface (ConnectX: QUERY_VPORT_COUNTER).
    type HwCounters: Copy + Default + Send;
    /// The transmit queue with its CQ, as the TX slot holds it.
    type Sq: Send;
    /// The receive queue with its CQ.
    type Rx: Send;
    /// Per-channel interrupt state.
    type Irq: Send;
    /// Ids of a channel's device queues, for teardown (unused ones `None`).
    type Queues: Copy + Default + Send + Sync;
    /// Per-SQ counters.
    type TxStats: Copy + Default + Send;
    /// Per-RQ counters.
    type RxStats: Copy + Default + Send;
    /// An XDP SQ with its CQ (see [`crate::xdp`]); families without XDP SQs use `()`
    /// (MANA has only the XSK SQ).
    type XdpSq: Send;
    /// An XSK RQ (AF_XDP zero-copy) with its CQ; families without zero-copy use `()`.
    type XskRx: Send;

    /// Device-wide sums over the port's queues.
    const GLOBAL: &'static [(&'static str, Get<ChannelStats<Self>>)];
    /// The model's counters of a port, by name, for the device host's debugfs file.
    const MODEL_COUNTERS: &'static [(&'static str, Get<Self::ModelCounters>)];
    /// The port's hardware counters in `ethtool -S`, with the family's upstream names.
    const HW: &'static [(&'static str, Get<Self::HwCounters>)];
    /// Per TX queue.
    const TXQ: &'static [(&'static str, Get<ChannelStats<Self>>)];
    /// Per RX queue.
    const RXQ: &'static [(&'static str, Get<ChannelStats<Self>>)];
    /// Per channel (`ch<N>_x`).
    const CH: &'static [(&'static str, Get<ChannelStats<Self>>)];

    /// A device with `ports` ports.
    fn new_model(ports: usize) -> Result<Self::Model>;
    /// Puts a new port in its initial state: link down, flow control on.
    fn init_port(m: &mut Self::Model, port: usize);
    /// Runs the device for at most `budget` WQEs; returns (WQEs, work left).
    fn run(m: &mut Self::Model, irq: &mut IrqSink, budget: usize) -> (usize, bool);
    /// A 64-bit register write (doorbells).
    fn mmio_write64(m: &mut Self::Model, offset: u32, bytes: [u8; 8]);
    /// A 32-bit register write.
    fn mmio_write32(m: &mut Self::Model, offset: u32, value: u32);
    /// A 32-bit register read.
    fn mmio_read32(m: &mut Self::Model, offset: u32) -> u32;
    /// Link state of a port.
    fn set_link(m: &mut Self::Model, port: usize, up: bool);
    /// The port's RSS table.
    fn set_rss(m: &mut Self::Model, port: usize, rqns: &[u32]) -> Result;
    /// Internal loopback of a port: its transmitted frames go to its own receive side.
    fn set_loopback(m: &mut Self::Model, port: usize, on: bool) -> Result;
    /// The model's counters of a port (device host only).
    fn model_counters(m: &Self::Model, port: usize) -> Self::ModelCounters;
    /// Asks the device for the port's hardware counters (`ethtool -S`). Sleeps.
    fn query_counters(
        engine: &Arc<crate::engine::Engine<Self>>,
        func: &Arc<Self::Func>,
        port: usize,
    ) -> Result<Self::HwCounters>;

    /// Device-host configuration of port `port` of device `dev` on a new model (what the
    /// hardware would come with: factory MAC, capabilities, fault knobs).
    fn host_config(_m: &mut Self::Model, _dev: u32, _port: usize) {}
    /// Brings port `port`'s function up through the device's control interface, logging
    /// which step failed (probe fails with its errno). Sleeps.
    fn bring_up(
        engine: &Arc<crate::engine::Engine<Self>>,
        dma: &Arc<crate::ext::dma::DmaDevice>,
        dev: u32,
        port: usize,
    ) -> Result<Arc<Self::Func>>;
    /// Undoes [`Family::bring_up`] (at removal; failures are logged). Sleeps.
    fn tear_down(engine: &Arc<crate::engine::Engine<Self>>, func: &Self::Func, port: usize);
    /// The function's asynchronous event vector fired (interrupt-like context: cannot
    /// sleep).
    fn func_irq(_func: &Arc<Self::Func>, _mmio: &EngineMmio<'_, Self>) {}
    /// Gives the function its netdev, for the carrier (`None` before unregistering: the
    /// reference is dropped).
    fn func_attach(_func: &Self::Func, _dev: Option<&crate::ext::net::device::Device>) {}
    /// Whether the carrier follows the device's port-change events (else the driver's
    /// model of the cable, `link.rs`, sets it).
    const CARRIER_FROM_EVENTS: bool = false;
    /// Sets the port's administrative state (`ndo_open`/`ndo_stop`). Sleeps.
    fn set_admin(
        engine: &Arc<crate::engine::Engine<Self>>,
        _func: &Arc<Self::Func>,
        port: usize,
        up: bool,
    ) -> Result {
        engine.with_model(|m| Self::set_link(m, port, up));
        engine.kick();
        Ok(())
    }
    /// The permanent MAC address the function reported (`None`: a random one).
    fn permanent_mac(_func: &Self::Func) -> Option<[u8; 6]> {
        None
    }
    /// The private flags a new port starts with, given what the device can do.
    fn default_pflags(_func: &Self::Func) -> u32 {
        Self::DEFAULT_PFLAGS
    }
    /// Why the device cannot run with private flags `flags` (`None`: it can).
    fn refuse_pflags(_func: &Self::Func, _flags: u32) -> Option<&'static str> {
        None
    }

    /// Creates a channel's device queues (recording each in `queues` as it is made, so a
    /// failure can destroy what exists) and its data-path structures, and posts RX buffers.
    fn open(
        ctx: &OpenCtx<'_, Self>,
        queues: &mut Self::Queues,
        p: &ChannelParams,
    ) -> Result<Opened<Self>>;
    /// Destroys the device queues in `queues` (queues before their CQs, CQs before EQs).
    /// Sleeps.
    fn destroy(
        engine: &Arc<crate::engine::Engine<Self>>,
        func: &Arc<Self::Func>,
        queues: &Self::Queues,
    );
    /// Internal loopback of the port on or off (`ethtool -K <dev> loopback`). Sleeps.
    fn apply_loopback(
        engine: &Arc<crate::engine::Engine<Self>>,
        _func: &Arc<Self::Func>,
        port: usize,
        on: bool,
    ) -> Result {
        engine.with_model(|m| Self::set_loopback(m, port, on))
    }
    /// Steers received frames over the RQs `rqns` (an empty list: none). Sleeps.
    fn apply_rss(
        engine: &Arc<crate::engine::Engine<Self>>,
        _func: &Arc<Self::Func>,
        port: usize,
        rqns: &[u32],
    ) -> Result {
        engine.with_model(|m| Self::set_rss(m, port, rqns))
    }

    /// Transmits one packet; the doorbell is rung when `more` is false or the queue stops.
    fn xmit(
        sq: &mut Self::Sq,
        pkt: TxSkb,
        more: bool,
        env: &mut TxEnv<'_, Self>,
    ) -> core::result::Result<(), TxReject<TxSkb>>;
    /// Reaps TX completions, releasing completed packets to `release`.
    fn tx_reap(
        sq: &mut Self::Sq,
        env: &mut TxEnv<'_, Self>,
        release: impl FnMut(TxSkb),
    ) -> TxReaped;
    /// Releases every outstanding packet (the device no longer runs the SQ). Returns how
    /// many.
    fn tx_drain(sq: &mut Self::Sq, env: &mut TxEnv<'_, Self>, release: impl FnMut(TxSkb)) -> u32;
    /// Polls the RX CQ for up to `budget` packets and re-posts buffers (one RQ doorbell per
    /// poll). Returns the work done (CQEs read).
    fn rx_poll(
        rx: &mut Self::Rx,
        env: &mut RxEnv<'_, Self>,
        budget: u32,
        deliver: impl FnMut(RxPage, &RxMeta),
    ) -> u32;
    /// Gives every posted RX buffer back.
    fn rx_drain(rx: &mut Self::Rx, env: &mut RxEnv<'_, Self>);
    /// Arms the TX CQ (NAPI completed).
    fn arm_tx(sq: &mut Self::Sq, mmio: &EngineMmio<'_, Self>);
    /// Arms the RX CQ (NAPI completed).
    fn arm_rx(rx: &mut Self::Rx, mmio: &EngineMmio<'_, Self>);
    /// NAPI goes on polling after `work` TX CQEs: CQ doorbells the hardware needs anyway.
    fn tx_continue(sq: &mut Self::Sq, work: u32, mmio: &EngineMmio<'_, Self>);
    /// NAPI goes on polling after `work` RX CQEs: CQ doorbells the hardware needs anyway.
    fn rx_continue(rx: &mut Self::Rx, work: u32, mmio: &EngineMmio<'_, Self>);
    /// Arms the interrupt state when the channel starts.
    fn irq_start(irq: &mut Self::Irq, mmio: &EngineMmio<'_, Self>);
    /// The channel's vector fired: returns whether NAPI must be scheduled.
    fn irq_handle(irq: &mut Self::Irq, mmio: &EngineMmio<'_, Self>) -> bool;
    /// TX counters and CQ arms.
    fn tx_stats(sq: &Self::Sq) -> (Self::TxStats, u64);
    /// RX counters and CQ arms.
    fn rx_stats(rx: &Self::Rx) -> (Self::RxStats, u64);

    /// Creates an XDP SQ of `kind` with its CQ on the channel's vector, recording its
    /// device queues in `queues`. `None`: the family has no XDP SQ of that kind (`Tx`,
    /// `Redirect`: XDP_TX and redirected frames go out through the regular SQ as skbs;
    /// `Ico`: no NOP WQE, wake-ups schedule NAPI directly).
    fn xdp_sq_open(
        _ctx: &OpenCtx<'_, Self>,
        _queues: &mut Self::Queues,
        _p: &ChannelParams,
        _kind: XdpSqKind,
    ) -> Result<Option<Self::XdpSq>> {
        Ok(None)
    }
    /// Posts one frame on an XDP SQ without ringing.
    fn xdp_sq_xmit(
        _sq: &mut Self::XdpSq,
        frame: XdpTx,
        _env: &mut XdpEnv<'_, Self>,
    ) -> core::result::Result<(), TxReject<XdpTx>> {
        Err(TxReject {
            pkt: frame,
            reason: TxRejectReason::SqError,
        })
    }
    /// Posts a NOP on the XDP SQ (an ICO SQ's wake-up) and rings; `false` if it had no room.
    fn xdp_sq_nop(_sq: &mut Self::XdpSq, _env: &mut XdpEnv<'_, Self>) -> bool {
        false
    }
    /// Rings the XDP SQ's doorbell for what was posted (once per NAPI poll or batch).
    fn xdp_sq_flush(_sq: &mut Self::XdpSq, _env: &mut XdpEnv<'_, Self>) {}
    /// Reaps the XDP SQ's completions.
    fn xdp_sq_reap(
        _sq: &mut Self::XdpSq,
        _env: &mut XdpEnv<'_, Self>,
        _release: impl FnMut(XdpTx),
    ) -> TxReaped {
        TxReaped {
            idle: true,
            ..TxReaped::default()
        }
    }
    /// Releases every frame still on the XDP SQ (the device no longer runs it).
    fn xdp_sq_drain(
        _sq: &mut Self::XdpSq,
        _env: &mut XdpEnv<'_, Self>,
        _release: impl FnMut(XdpTx),
    ) -> u32 {
        0
    }
    /// Arms the XDP SQ's CQ (NAPI completed).
    fn xdp_sq_arm(_sq: &mut Self::XdpSq, _mmio: &EngineMmio<'_, Self>) {}
    /// The XDP SQ's counters and CQ arms.
    fn xdp_sq_stats(_sq: &Self::XdpSq) -> (Self::TxStats, u64) {
        (Self::TxStats::default(), 0)
    }

    /// Creates an XSK RQ of `buf_size`-byte buffers with its CQ on the channel's vector and
    /// posts buffers from the pool (as many as the fill ring has). Returns it with its device
    /// RQ id.
    fn xsk_rq_open(
        _ctx: &OpenCtx<'_, Self>,
        _queues: &mut Self::Queues,
        _p: &ChannelParams,
        _buf_size: u32,
        _env: &mut XskRxEnv<'_, Self>,
    ) -> Result<Option<(Self::XskRx, u32)>> {
        Ok(None)
    }
    /// Polls the XSK RQ for up to `budget` frames and re-posts buffers from the pool.
    fn xsk_rx_poll(
        _rx: &mut Self::XskRx,
        _env: &mut XskRxEnv<'_, Self>,
        _budget: u32,
        _deliver: impl FnMut(XskBuf, &RxMeta),
    ) -> u32 {
        0
    }
    /// Frees every posted buffer of the XSK RQ.
    fn xsk_rx_drain(_rx: &mut Self::XskRx, _env: &mut XskRxEnv<'_, Self>) {}
    /// Arms the XSK RQ's CQ.
    fn xsk_rx_arm(_rx: &mut Self::XskRx, _mmio: &EngineMmio<'_, Self>) {}
    /// The XSK RQ's counters and CQ arms.
    fn xsk_rx_stats(_rx: &Self::XskRx) -> (Self::RxStats, u64) {
        (Self::RxStats::default(), 0)
    }

    /// Packets an RQ received (whatever became of them).
    fn rx_packets(s: &Self::RxStats) -> u64;
    /// Bytes an RQ received.
    fn rx_bytes(s: &Self::RxStats) -> u64;

    /// The family-independent counters.
    fn summary(s: &ChannelStats<Self>) -> Summary;
    /// Adds the family counters of `b` into `a`.
    fn accumulate(a: &mut ChannelStats<Self>, b: &ChannelStats<Self>);
}

/// The part of a [`Family`] implementation that only forwards to the family's simulated
/// device (`sim::mlx5` and `sim::mana` have the same control interface): the model type, its
/// construction with the kernel's storage, and its registers, engine and port commands.
/// Expands inside `impl Family for ...`; the arguments are the sim module's path and the
/// model's constructor (ports, queue sets, scratch).
macro_rules! sim_model_glue {
    ($($sim:ident)::+, $ctor:expr) => {
        type Model = $($sim)::+::Device<
            KVec<$($sim)::+::Port>,
            KVVec<$($sim)::+::QueueSet>,
            KVVec<u8>,
        >;
        type ModelCounters = $($sim)::+::PortCounters;

        fn new_model(ports: usize) -> Result<Self::Model> {
            let mut p = KVec::with_capacity(ports, GFP_KERNEL)?;
            for _ in 0..ports {
                p.push($($sim)::+::Port::new(), GFP_KERNEL)?;
            }
            let n = ports * $($sim)::+::MAX_QUEUES;
            let mut q = KVVec::with_capacity(n, GFP_KERNEL)?;
            for _ in 0..n {
                q.push($($sim)::+::QueueSet::EMPTY, GFP_KERNEL)?;
            }
            let scratch = KVVec::from_elem(0u8, $($sim)::+::SCRATCH_LEN, GFP_KERNEL)?;
            let ctor = $ctor;
            ctor(p, q, scratch).map_err(|_| EINVAL)
        }

        fn init_port(m: &mut Self::Model, port: usize) {
            let _ = m.set_link(port, false);
            // Back-pressure between the wired ports instead of drops.
            let _ = m.set_pause(port, true);
        }

        fn run(m: &mut Self::Model, irq: &mut IrqSink, budget: usize) -> (usize, bool) {
            m.process_budget(&crate::hw::KBus, irq, budget)
        }

        fn mmio_write64(m: &mut Self::Model, offset: u32, bytes: [u8; 8]) {
            m.mmio_write64(offset, bytes);
        }

        fn mmio_write32(m: &mut Self::Model, offset: u32, value: u32) {
            m.mmio_write32(offset, value);
        }

        fn mmio_read32(m: &mut Self::Model, offset: u32) -> u32 {
            m.mmio_read32(offset)
        }

        fn set_link(m: &mut Self::Model, port: usize, up: bool) {
            let _ = m.set_link(port, up);
        }

        fn set_rss(m: &mut Self::Model, port: usize, rqns: &[u32]) -> Result {
            m.set_rss(port, rqns).map_err(|_| EINVAL)
        }

        fn set_loopback(m: &mut Self::Model, port: usize, on: bool) -> Result {
            m.set_loopback(port, on).map_err(|_| EINVAL)
        }

        fn model_counters(m: &Self::Model, port: usize) -> Self::ModelCounters {
            m.counters(port).copied().unwrap_or_default()
        }
    };
}
pub(crate) use sim_model_glue;

/// Records in `slot` the queue a device command made (so a failed open can destroy it) and
/// returns its id; a command error becomes `EINVAL`.
pub(crate) fn made<E>(slot: &mut Option<u32>, r: core::result::Result<u32, E>) -> Result<u32> {
    let id = r.map_err(|_| EINVAL)?;
    *slot = Some(id);
    Ok(id)
}

/// A vector of `n` values made by `f`.
pub(crate) fn filled<T>(n: usize, mut f: impl FnMut() -> T) -> Result<KVec<T>> {
    let mut v = KVec::with_capacity(n, GFP_KERNEL)?;
    for _ in 0..n {
        v.push(f(), GFP_KERNEL)?;
    }
    Ok(v)
}

/// Adds `b` into `a`, wrapping like the counters.
#[inline]
pub(crate) fn wadd(a: &mut u64, b: u64) {
    *a = a.wrapping_add(b);
}
