// SPDX-License-Identifier: GPL-2.0

//! Channels: each has an SQ with its TX CQ, an RQ with its RX CQ, one NAPI context and one
//! interrupt vector, as an mlx5e channel does; generic over the device [`Family`].
//!
//! The SQ of queue `i` lives in the port's TX slot `i` ([`TxSlot`]), where `ndo_start_xmit`
//! finds it; the rest lives in the [`Channel`], which NAPI polls. The slot is guarded by the
//! TX queue's own xmit lock, which the stack already holds around `ndo_start_xmit`: the
//! transmit path takes no lock of its own per packet. NAPI's TX completion walk takes the
//! xmit lock once per poll (as virtio-net's TX NAPI does), and so do the control paths
//! (open, close, recovery, counters). mlx5e needs no lock in its completion walk because its
//! producer and consumer counters are split by hand; the data path's SQs keep both in one
//! `&mut` structure, which the xmit lock stands for.
//!
//! NAPI reaps the TX CQ first (also with budget 0), then the RX CQ within the budget, hands
//! packets to GRO, re-posts RX buffers with one doorbell per poll (mlx5: a doorbell-record
//! write; MANA: an RQ doorbell with `wqe_cnt = 0`), and re-arms both CQs when it completes.
//! While it keeps polling, the family rings the CQ doorbells its hardware needs anyway (MANA:
//! at least one per 8 wraps of a CQ).
//!
//! MANA's interrupt goes through an event queue: the channel's vector handler reads the EQ
//! ([`Family::irq_handle`]) before scheduling NAPI.
//!
//! Upstream counterpart: `struct mlx5e_channel` and its queues in `en.h`. The channel's code
//! is spread as mlx5e spreads it: `params` (`en/params.c`), `dim` (`en_dim.c`), `env` (the
//! kernel calls `en_tx.c` and `en_rx.c` make inline), `open` (`en_main.c`), `napi`
//! (`en_txrx.c`), `rx` (`en_rx.c`, `en/xdp.c`), `xsk` (`en/xsk/`), `recover`
//! (`en/reporter_tx.c`, `en/reporter_rx.c`), `stats` (`en_stats.c`).

pub(crate) mod dim;
mod napi;
mod open;
pub(crate) mod recover;
mod rx;
pub(crate) mod shared;
mod stats;
mod xsk;

use crate::bus::IrqKey;
use crate::channel::dim::DimCqs;
use crate::channel::shared::PortShared;
use crate::family::stats::{ChAtomics, ChStats, ChannelStats, XdpStats, XskAtomics, XskStats};
use crate::family::Family;
use crate::kernel_ext::net::device::Device;
use crate::kernel_ext::net::dim::Dim;
use crate::kernel_ext::net::napi::Napi;
use crate::kernel_ext::net::page_pool::PagePool;
use crate::kernel_ext::net::queue::{TxQueue, TxqCell};
use crate::kernel_ext::net::xdp::{BpfProg, XdpRxq};
use crate::kernel_ext::net::xsk::{XskPool, XskRxq};
use crate::kernel_ext::sync::with_bh;
use core::pin::Pin;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use kernel::new_spinlock;
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex, SpinLock};
use kernel::types::ARef;
use kernel::workqueue::Work;

/// The transmit side of a channel: its SQ (with the TX CQ inside). The SQ counts the
/// packets it refuses (`dropped`); packets still queued at close are counted by the channel.
pub(crate) struct TxSide<F: Family> {
    /// The SQ with its TX CQ.
    pub(crate) sq: F::Sq,
    /// Redirected frames sent through this SQ as skbs (families without XDP SQs): taken
    /// (`xmit`), dropped because the SQ was full (`xmit_full`) or refused for another reason
    /// (`xmit_err`).
    pub(crate) xdp: XdpStats,
}

/// A port's TX slot: the SQ of one TX queue, if its channel is open, under the queue's xmit
/// lock ([`TxqCell`]; bound to the queue when a channel first opens on it).
///
/// Netpoll transmits with interrupts disabled, having only tried the xmit lock
/// (`HARD_TX_TRYLOCK`): a slot held by this CPU's NAPI or control path refuses netpoll
/// there, in the stack, before the driver is called.
pub(crate) type TxSlot<F> = TxqCell<Option<TxSide<F>>>;

/// A new, empty TX slot.
pub(crate) fn new_tx_slot<F: Family>() -> TxSlot<F> {
    TxqCell::new(None)
}

/// An XDP SQ with its state.
pub(crate) struct XdpSqSide<F: Family> {
    /// The XDP SQ with its CQ.
    pub(crate) sq: F::XdpSq,
    /// Past the stop room: frames are refused until completions free room.
    pub(crate) full: bool,
    /// Frames were posted since the last doorbell.
    pub(crate) posted: bool,
    /// Refusals (full ring, other errors) of this SQ.
    pub(crate) stats: XdpStats,
}

impl<F: Family> XdpSqSide<F> {
    fn new(sq: F::XdpSq) -> Self {
        Self {
            sq,
            full: false,
            posted: false,
            stats: XdpStats::default(),
        }
    }
}

/// A port's slot for the `ndo_xdp_xmit` SQ of one channel (families with XDP SQs).
pub(crate) type XdpSlot<F> = Pin<KBox<SpinLock<Option<XdpSqSide<F>>>>>;

/// A new, empty XDP slot.
pub(crate) fn new_xdp_slot<F: Family>() -> Result<XdpSlot<F>> {
    KBox::pin_init(new_spinlock!(None, "rsnic::XdpSlot"), GFP_KERNEL)
}

/// The receive side of a channel.
struct RxSide<F: Family> {
    rx: F::Rx,
    pool: PagePool,
    /// The queue's `xdp_rxq_info` (registered while the channel exists).
    rxq: XdpRxq,
    /// The attached XDP program, if any.
    prog: Option<BpfProg>,
    /// The XDP_TX SQ (families with XDP SQs, while a program is attached).
    xdpsq: Option<XdpSqSide<F>>,
    /// XDP action counters.
    xdp: XdpStats,
    /// AF_XDP zero-copy queues, while a pool is registered for the channel's queue, an XDP
    /// program is attached and the interface is up.
    xsk: Option<KBox<XskSide<F>>>,
    /// What happened to the packets handed to the stack (`rx_dropped`, `rx_csum_*`).
    counts: ChStats,
}

/// A channel's AF_XDP zero-copy queues (polled in its NAPI, under the RX lock).
struct XskSide<F: Family> {
    pool: XskPool,
    rxq: XskRxq,
    rq: F::XskRx,
    rqn: u32,
    /// The XSK SQ: descriptors from the socket's TX ring.
    sq: XdpSqSide<F>,
    /// TX descriptors taken from the ring but not sent; reported complete once the SQ is
    /// idle, so the completion ring keeps the order in which descriptors were taken.
    tx_lost: u32,
    stats: XskStats,
}

/// A channel's AF_XDP zero-copy state that `ndo_xsk_wakeup` and the port read without the
/// channel's locks.
#[derive(Default)]
struct XskFlags {
    /// The channel has AF_XDP zero-copy queues (in `rx` and `ico`): `ndo_xsk_wakeup` kicks
    /// NAPI for them. Set once they are in place, cleared before they go.
    zc: AtomicBool,
    /// The device RQ the RSS table names for this channel is the XSK RQ ([`Channel::rqn`]):
    /// set by the port around its steering switch (`mlx5e_rx_res_xsk_update`).
    steered: AtomicBool,
    /// The XSK RQ's device id while the XSK queues exist.
    rqn: AtomicU32,
    /// A wake-up's NOP is on the ICO SQ and its completion not yet reaped: no other is
    /// posted (mlx5e's `MLX5E_SQ_STATE_PENDING_XSK_TX`).
    nop_pending: AtomicBool,
    /// `ndo_xsk_wakeup`'s counters (`wakeups`, `wake_missed`, `wake_kicks`).
    counts: XskAtomics,
}

/// A channel's AF_XDP zero-copy queues as [`Channel::open_xsk`] makes them: the XSK side,
/// the ICO SQ (families with a NOP WQE), and their device ids.
type XskQueues<F> = (
    KBox<XskSide<F>>,
    Option<KBox<XdpSqSide<F>>>,
    <F as crate::family::Control>::Queues,
);

/// One channel: NAPI, the receive side, the interrupt state, and the way to the transmit
/// side.
#[pin_data]
pub(crate) struct Channel<F: Family> {
    #[pin]
    napi: Napi<Channel<F>>,
    #[pin]
    rx: SpinLock<Option<RxSide<F>>>,
    #[pin]
    irq: SpinLock<F::Irq>,
    /// The internal control SQ for `ndo_xsk_wakeup` NOPs (with AF_XDP zero-copy, families
    /// with a NOP WQE; userspace may kick from any CPU, hence its own lock).
    #[pin]
    ico: SpinLock<Option<KBox<XdpSqSide<F>>>>,
    /// The AF_XDP zero-copy state read without the channel's locks.
    xsk: XskFlags,
    shared: Arc<PortShared<F>>,
    dev: ARef<Device>,
    index: u32,
    /// The function's vector of the channel's interrupt, and the key of its handler there.
    intr: usize,
    irq_key: IrqKey,
    rqn: u32,
    /// Device queues, for teardown (the AF_XDP zero-copy queues are in `xsk_queues`).
    queues: F::Queues,
    /// Device ids of the AF_XDP zero-copy queues while they exist: they come and go with
    /// their pool while the channel lives. Shared with DIM, whose moderation changes reach
    /// the XSK RQ's CQ; held while they are destroyed.
    xsk_queues: Arc<Mutex<F::Queues>>,
    /// Counters of the AF_XDP zero-copy queues closed while the channel lived (only the
    /// XSK fields and CQ arms are set; on the heap, made at the first close: a
    /// `ChannelStats` is too large for the stack of the open path).
    #[pin]
    xsk_closed: SpinLock<Option<KBox<ChannelStats<F>>>>,
    /// Queue recovery ([`Channel::recover`]), on the port's `wq`.
    #[pin]
    recover_work: Work<Channel<F>>,
    /// Queues waiting for recovery ([`RECOVER_TX`], [`RECOVER_RX`]); set by NAPI, cleared by
    /// the recovery when the queue is back.
    recover_req: AtomicU32,
    /// Held by a recovery and by `close`; `true` once the channel is closing (recovery
    /// does nothing any more).
    #[pin]
    recover_lock: Mutex<bool>,
    /// The channel's counters kept where no lock is held: its interrupts (`events`), the
    /// recoveries of its SQ and RQ (`tx_recover`, `rx_recover`) and the packets an SQ
    /// recovery dropped (`tx_dropped`), its TX watchdog timeouts (`tx_timeout`), those
    /// recovered (`tx_timeout_recovered`) and of those the lost interrupts (`eq_rearm`), the
    /// reopens it asked for (`reopen`).
    counters: ChAtomics,
    /// A corrupt event (one naming a queue the channel does not have) was logged.
    eq_bad_logged: AtomicBool,
    /// This channel asked for a reopen (it asks once: the reopen closes it).
    reopen_asked: AtomicBool,
    /// The channel itself while it is active (from `activate` to `close`), for queueing
    /// its recovery from NAPI, which has only `&self`.
    #[pin]
    me: SpinLock<Option<Arc<Channel<F>>>>,
    /// Adaptive moderation (DIM) of the RX and TX CQs (`ethtool -C adaptive-rx/-tx`),
    /// sampled when a NAPI poll completes while on.
    #[pin]
    dim_rx: Dim<DimCqs<F>>,
    #[pin]
    dim_tx: Dim<DimCqs<F>>,
}

crate::impl_has_napi!(impl{F: Family} Channel<F>, napi);

kernel::impl_has_work! {
    impl{F: Family} HasWork<Self> for Channel<F> { self.recover_work }
}

/// [`Channel::recover_req`]: the SQ waits for recovery.
const RECOVER_TX: u32 = 1 << 0;
/// [`Channel::recover_req`]: the RQ waits for recovery.
const RECOVER_RX: u32 = 1 << 1;
/// [`Channel::recover_req`]: the TX watchdog fired on the channel's queue.
const RECOVER_TIMEOUT: u32 = 1 << 2;

impl<F: Family> Channel<F> {
    /// The channel's index (its TX and RX queue number).
    pub(crate) fn index(&self) -> u32 {
        self.index
    }

    /// Device RQ number for the RSS table: the XSK RQ's while the channel steers to it
    /// (AF_XDP zero-copy; [`Channel::steer_xsk`]), else the regular RQ's.
    pub(crate) fn rqn(&self) -> u32 {
        if self.xsk.steered.load(Ordering::Acquire) {
            self.xsk.rqn.load(Ordering::Acquire)
        } else {
            self.rqn
        }
    }

    /// Turns VLAN stripping of the channel's RQs (the regular one and the AF_XDP zero-copy
    /// one, while it exists) on or off in place. Sleeps.
    pub(crate) fn set_rx_vlan(&self, strip: bool) -> Result {
        let func = &self.shared.func;
        F::apply_rx_vlan(func, &self.queues, strip)?;
        F::apply_rx_vlan(func, &self.xsk_queues.lock(), strip)
    }

    /// Replaces the attached XDP program by `prog` (same attach state: the channel keeps
    /// its queues). The old program is put after the RX lock is released.
    pub(crate) fn swap_prog(&self, prog: &BpfProg) {
        let old = with_bh(|| {
            self.rx
                .lock()
                .as_mut()
                .and_then(|side| side.prog.replace(prog.clone_ref()))
        });
        drop(old);
    }

    /// Runs `f` on the channel's TX slot under its queue's xmit lock, taken with bottom
    /// halves disabled (the lock the stack holds around `ndo_start_xmit`). `None` if the
    /// channel has no TX queue or its slot is bound to another queue. The caller must not
    /// hold the xmit lock already, nor call into the stack's transmit path from `f`.
    fn with_tx_slot<R>(&self, f: impl FnOnce(&mut Option<TxSide<F>>, &TxQueue) -> R) -> Option<R> {
        let slot = self.shared.txs.get(self.index as usize)?;
        let txq = self.dev.tx_queue(self.index)?;
        with_bh(|| {
            let mut xmit = txq.lock();
            slot.get(&mut xmit).map(|s| f(s, txq))
        })
    }

    /// As [`Channel::with_tx_slot`], if the TX side is there.
    fn with_tx<R>(&self, f: impl FnOnce(&mut TxSide<F>, &TxQueue) -> R) -> Option<R> {
        self.with_tx_slot(|slot, txq| slot.as_mut().map(|tx| f(tx, txq)))
            .flatten()
    }
}
