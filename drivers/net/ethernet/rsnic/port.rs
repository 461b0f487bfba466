// SPDX-License-Identifier: GPL-2.0

//! One Ethernet port of a simulated device: its netdev and ethtool operations, its channels.
//!
//! Channels exist while the interface is up: `ndo_open` creates them, `ndo_stop` tears them
//! down. A change of their parameters (MTU, `skb_tx_mpwqe`) on a running interface closes and
//! reopens them under RTNL, as mlx5e's channel switch does; packets the device had not sent
//! by then are dropped and counted in `tx_queue_dropped`.
//!
//! Everything here is generic over the device [`Family`]: ring limits, private flags and
//! counter names come from it.

use crate::bus::Function;
use crate::channel::xsk_geometry;
use crate::channel::MAX_CHANNELS;
use crate::channel::{dim_default, Coalesce, Moderation};
use crate::channel::{new_tx_slot, new_xdp_slot, Channel, ChannelParams, ChannelStats, PortShared};
use crate::dp::xsk;
use crate::family::{Family, Summary};
use crate::kernel_ext::{
    net::{
        device::{self, Device, Features, LinkStats64, MacChange, QueueStats, RxMode, TxOutcome},
        ethtool::{
            self, Channels, DrvInfo, ExtAck, FlowSpec, LinkSettings, Rings, RxfhContext, RxfhGet,
            RxfhSet, Strings,
        },
        ethtool::{PauseParam, PauseStats},
        queue::XmitCtx,
        skb::SkBuff,
        xdp::{BpfProg, XdpFrames},
        xsk::XskPool,
    },
    sync::{with_bh, with_rtnl},
    wq::OwnedQueue,
};
use crate::ntuple::{Dest, Rule};
use crate::rss::{Fields, Flow, RssChange, RssConfig, KEY_LEN};
use core::marker::PhantomData;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use kernel::{
    c_str, new_mutex, new_spinlock, new_work,
    prelude::*,
    str::{CStr, CString},
    sync::{Arc, ArcBorrow, Mutex, SpinLock},
    types::ARef,
    workqueue::{Work, WorkItem},
};

/// Driver version reported by `ethtool -i`.
pub(crate) const DRV_VERSION: &str = "0.2.0";

/// Smallest and largest MTU a port accepts.
pub(crate) const MIN_MTU: u32 = 68;
pub(crate) const MAX_MTU: u32 = 9600;

/// Reported link speed of the simulated wire, in Mb/s.
const SPEED_MBPS: u32 = 100_000;

/// [`Port::pause`]: received PAUSE frames are honoured.
const PAUSE_RX: u32 = 1;
/// [`Port::pause`]: PAUSE frames are sent.
const PAUSE_TX: u32 = 2;
/// [`Port::pause`]: the device reported or was given a setting.
const PAUSE_KNOWN: u32 = 4;

/// [`Port::pause`] of a known setting.
fn pause_bits(rx: bool, tx: bool) -> u32 {
    let mut b = PAUSE_KNOWN;
    if rx {
        b |= PAUSE_RX;
    }
    if tx {
        b |= PAUSE_TX;
    }
    b
}

/// Why a port's channels are reopened ([`PortShared::request_reopen`]): a fault on a queue
/// that is not reset in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Reopen {
    /// The regular SQ stopped on a fault, and the family has no in-place reset.
    SqFault = 1,
    /// The regular RQ stopped on a fault, and the family has no in-place reset.
    RqFault,
    /// The TX watchdog fired with no lost interrupt, and the family has no SQ reset.
    TxTimeout,
    /// An XDP SQ (XDP_TX, redirect, XSK or ICO) stopped on a fault.
    XdpSqFault,
    /// The XSK RQ stopped on a fault.
    XskRqFault,
}

impl Reopen {
    fn from_u32(v: u32) -> Option<Self> {
        [
            Self::SqFault,
            Self::RqFault,
            Self::TxTimeout,
            Self::XdpSqFault,
            Self::XskRqFault,
        ]
        .into_iter()
        .find(|r| *r as u32 == v)
    }

    fn what(self) -> &'static str {
        match self {
            Self::SqFault => "SQ fault",
            Self::RqFault => "RQ fault",
            Self::TxTimeout => "transmit timeout, no lost interrupt",
            Self::XdpSqFault => "XDP SQ fault",
            Self::XskRqFault => "XSK RQ fault",
        }
    }
}

/// The reopen of a port's channels after a fault no queue reset covers, as mlx5e reopens
/// its channels from a work item under RTNL. Runs on the port's `reset_wq` (not the
/// channels' recovery queue, which closing a channel flushes).
///
/// Lifetimes: the port and its device are reachable only while the interface is up
/// (`target`, set by `ndo_open` and cleared by `ndo_stop`, both under RTNL); the work takes
/// RTNL before it looks, so it never sees a device being unregistered, and it drops its
/// reference to the port before RTNL is released, while the netdev's own reference still
/// exists (that one goes only after `unregister_netdev`): the port is never freed here.
/// Nothing waits for this work under RTNL (the queue is destroyed when the port's shared
/// state goes, after unregistration).
#[pin_data]
pub(crate) struct PortReset<F: Family> {
    #[pin]
    work: Work<PortReset<F>>,
    /// The pending request, `(reason << 16) | channel` (0: none); one at a time.
    req: AtomicU32,
    /// The port and its device while the interface is up (a reference cycle until
    /// `ndo_stop`).
    #[pin]
    target: Mutex<Option<(Arc<Port<F>>, ARef<Device>)>>,
}

kernel::impl_has_work! {
    impl{F: Family} HasWork<Self> for PortReset<F> { self.work }
}

impl<F: Family> PortReset<F> {
    /// An idle reset with no port attached.
    pub(crate) fn new() -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self {
                work <- new_work!("rsnic::PortReset::work"),
                req: AtomicU32::new(0),
                target <- new_mutex!(None, "rsnic::PortReset::target"),
            }),
            GFP_KERNEL,
        )
    }

    /// Records a request from channel `ch`; `false` if one is already waiting (that reopen
    /// covers this fault too). Any context.
    pub(crate) fn arm(&self, ch: u32, why: Reopen) -> bool {
        let code = ((why as u32) << 16) | (ch & 0xffff);
        self.req
            .compare_exchange(0, code, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }
}

impl<F: Family> WorkItem for PortReset<F> {
    type Pointer = Arc<PortReset<F>>;

    fn run(this: Arc<PortReset<F>>) {
        with_rtnl(|| {
            let code = this.req.load(Ordering::Acquire);
            let target = this.target.lock().clone();
            match (target, Reopen::from_u32(code >> 16)) {
                (Some((port, dev)), Some(why)) => port.reopen(&dev, code & 0xffff, why, &this.req),
                _ => this.req.store(0, Ordering::Release),
            }
        });
    }
}

/// Configuration and live channels, changed under RTNL.
struct PortState<F: Family> {
    params: ChannelParams,
    /// Channels while the interface is up.
    open: bool,
    /// The attached XDP program (`params.xdp` says whether there is one).
    prog: Option<BpfProg>,
    /// AF_XDP zero-copy pools by queue, DMA-mapped while bound. A channel has XSK queues
    /// for its pool only while the interface is up with a program attached (as mlx5e: a
    /// socket may bind before its program comes, as libxdp does, and the queue's traffic
    /// goes to the stack until then).
    xsk: [Option<XskPool>; MAX_CHANNELS],
    /// The hardware counters the device last reported (shown again if a query fails).
    hw: F::HwCounters,
    /// RSS: the indirection table, key and hash fields (`ethtool -x/-X`, `-n/-N`).
    rss: RssConfig,
    /// Additional RSS contexts and ntuple rules.
    steer: Steering,
}

/// What the port steers beyond its main RSS table: the additional RSS contexts and the
/// ntuple rules the user made (programmed while the channels are open, again at each
/// open).
struct Steering {
    /// Contexts by id - 1 ([`Family`]'s `RSS_CONTEXTS` of them).
    ctxs: KVec<Option<RssConfig>>,
    /// Rules by location ([`Family`]'s `NTUPLE_RULES` of them).
    rules: KVec<Option<Rule>>,
    /// `ntuple-filters` is on (rules are taken).
    ntuple: bool,
}

impl Steering {
    fn new<F: Family>() -> Result<Self> {
        let mut ctxs = KVec::with_capacity(F::RSS_CONTEXTS, GFP_KERNEL)?;
        for _ in 0..F::RSS_CONTEXTS {
            ctxs.push(None, GFP_KERNEL)?;
        }
        let mut rules = KVec::with_capacity(F::NTUPLE_RULES, GFP_KERNEL)?;
        for _ in 0..F::NTUPLE_RULES {
            rules.push(None, GFP_KERNEL)?;
        }
        Ok(Self {
            ctxs,
            rules,
            ntuple: F::NTUPLE_RULES > 0,
        })
    }

    /// Programs every context, then every rule, into the device (the channels whose RQs
    /// are `rqns` just opened).
    fn program<F: Family>(&self, hw: &Arc<Function>, func: &Arc<F::Func>, rqns: &[u32]) -> Result {
        for (i, c) in self.ctxs.iter().enumerate() {
            if let Some(c) = c {
                F::apply_rss_ctx(
                    hw,
                    func,
                    i.saturating_add(1),
                    Some(&c.spec(rqns)),
                    RssChange::ALL,
                )?;
            }
        }
        for (loc, r) in self.rules.iter().enumerate() {
            if let Some(r) = r {
                F::apply_rule(hw, func, loc, Some(r))?;
            }
        }
        Ok(())
    }
}

/// State of one port, shared by its callbacks.
#[pin_data]
pub(crate) struct Port<F: Family> {
    bus_info: CString,
    /// Most channels (`ethtool -l`'s maximum): [`crate::family::Control::max_channels`].
    max_channels: u32,
    pflags: AtomicU32,
    /// Internal loopback as last set on the device (off at load).
    loopback: AtomicBool,
    /// Flow control as the device last reported or was given it ([`PAUSE_KNOWN`] with
    /// [`PAUSE_RX`], [`PAUSE_TX`]; 0 before): what `ethtool -a` shows if the device cannot
    /// be asked.
    pause: AtomicU32,
    shared: Arc<PortShared<F>>,
    #[pin]
    state: Mutex<PortState<F>>,
    /// Live channels (for counters, read from any context).
    #[pin]
    chans: SpinLock<KVec<Arc<Channel<F>>>>,
    /// Final counters of closed channels, per queue.
    #[pin]
    /// (On the heap: a `ChannelStats` is several hundred bytes, too many for the stack
    /// times eight.)
    totals: SpinLock<KVec<ChannelStats<F>>>,
}

impl<F: Family> Port<F> {
    /// The port of function `hw`, brought up as `func`.
    #[inline(never)]
    pub(crate) fn new(hw: Arc<Function>, func: Arc<F::Func>, channels: u32) -> Result<Arc<Self>> {
        let pflags = F::default_pflags(&func);
        // As many channels as asked, within what the port can have (its vectors, the
        // device's limits).
        let max_channels = F::max_channels(&hw, &func).clamp(1, MAX_CHANNELS as u32);
        let channels = channels.clamp(1, max_channels);
        let rss = RssConfig::new(F::rss_table_size(&func), channels, F::RSS_FIELDS);
        // The port's number on its device (a MANA function's vports share its index).
        let port_no = hw.index() + F::port_index(&func);
        let bus_info = hw.bus_info(F::port_index(&func))?;
        let dma = hw.dma().clone();
        let mut txs = KVec::with_capacity(MAX_CHANNELS, GFP_KERNEL)?;
        let mut xdp_txs = KVec::with_capacity(MAX_CHANNELS, GFP_KERNEL)?;
        for _ in 0..MAX_CHANNELS {
            txs.push(new_tx_slot::<F>(), GFP_KERNEL)?;
            xdp_txs.push(new_xdp_slot::<F>()?, GFP_KERNEL)?;
        }
        // Queue recovery of the port's channels (one per port: `rsnic_recover<dev*8+port>`).
        let wq = OwnedQueue::new(
            c_str!("rsnic_recover"),
            (hw.device() as usize * 8 + port_no) as i32,
        )?;
        // Reopens of its channels (`rsnic_reset<dev*8+port>`): see [`PortReset`].
        let reset_wq = OwnedQueue::new(
            c_str!("rsnic_reset"),
            (hw.device() as usize * 8 + port_no) as i32,
        )?;
        let shared = Arc::new(
            PortShared {
                hw,
                dma,
                func,
                txs,
                xdp_txs,
                live: AtomicU32::new(0),
                dropped_closed: AtomicU64::new(0),
                hardirq_busy: AtomicU64::new(0),
                // The device registers with NETIF_F_RXCSUM and NETIF_F_RXHASH on (driver.rs:
                // offloads).
                rx_csum: AtomicBool::new(true),
                rx_hash: AtomicBool::new(true),
                xsk_active: AtomicBool::new(false),
                wq,
                reset: PortReset::new()?,
                reset_wq,
            },
            GFP_KERNEL,
        )?;
        let mut totals = KVec::with_capacity(MAX_CHANNELS, GFP_KERNEL)?;
        for _ in 0..MAX_CHANNELS {
            totals.push(ChannelStats::default(), GFP_KERNEL)?;
        }
        let steer = Steering::new::<F>()?;
        let params = ChannelParams {
            count: channels.clamp(1, MAX_CHANNELS as u32),
            log_sq: F::SQ_RING.default,
            log_rq: F::RQ_RING.default,
            mtu: 1500,
            pflags,
            xdp: false,
            coal: Coalesce::DEFAULT,
            // NETIF_F_HW_VLAN_CTAG_RX is on at registration (both families).
            rx_vlan: true,
        };
        Arc::pin_init(
            pin_init!(Self {
                bus_info,
                max_channels,
                pflags: AtomicU32::new(pflags),
                loopback: AtomicBool::new(false),
                pause: AtomicU32::new(0),
                shared,
                state <- new_mutex!(
                    PortState {
                        params,
                        open: false,
                        prog: None,
                        xsk: [None; MAX_CHANNELS],
                        hw: F::HwCounters::default(),
                        rss,
                        steer,
                    },
                    "rsnic::Port::state"
                ),
                chans <- new_spinlock!(KVec::new(), "rsnic::Port::chans"),
                totals <- new_spinlock!(totals, "rsnic::Port::totals"),
            }),
            GFP_KERNEL,
        )
    }

    /// Number of channels configured.
    fn channel_count(&self) -> u32 {
        self.state.lock().params.count
    }

    /// Opens `p.count` channels (running `prog` on received packets, if given, with the
    /// AF_XDP zero-copy queues of the pools in `xsk` then), steers received frames over them
    /// as `rss` says (its table re-spread over the channels while the user has not set one)
    /// and starts their TX queues.
    fn open_channels(
        &self,
        dev: &Device,
        p: &ChannelParams,
        prog: Option<&BpfProg>,
        xsk: &[Option<XskPool>; MAX_CHANNELS],
        rss: &mut RssConfig,
        steer: &Steering,
    ) -> Result {
        dev.set_real_num_queues(p.count, p.count)?;
        let mut chans = KVec::with_capacity(p.count as usize, GFP_KERNEL)?;
        let mut rqns = KVec::with_capacity(p.count as usize, GFP_KERNEL)?;
        for i in 0..p.count {
            // XSK queues only with a program (`Channel::open` checks it too).
            let pool = xsk
                .get(i as usize)
                .copied()
                .flatten()
                .filter(|_| prog.is_some());
            let opened = Channel::open(dev, &self.shared, i, p, prog).and_then(|ch| {
                // Its XSK queues now, while nothing runs on it yet.
                if let Some(pool) = pool {
                    if let Err(e) = ch.xsk_enable(p, pool) {
                        let i = ch.index();
                        self.add_totals(i, ch.close());
                        return Err(e);
                    }
                    ch.steer_xsk(true);
                }
                Ok(ch)
            });
            match opened {
                Ok(ch) => {
                    rqns.push(ch.rqn(), GFP_KERNEL)?;
                    chans.push(ch, GFP_KERNEL)?;
                }
                Err(e) => {
                    for ch in chans.into_iter() {
                        let i = ch.index();
                        self.add_totals(i, ch.close());
                    }
                    return Err(e);
                }
            }
        }
        if !dev.rxfh_configured() {
            rss.spread(p.count);
        }
        let spec = rss.spec(&rqns);
        let (hw, func) = (&self.shared.hw, &self.shared.func);
        let programmed = F::apply_rss(hw, func, Some(&spec), RssChange::ALL).and_then(|()| {
            // Contexts and rules again (the channels' closing removed them).
            steer.program::<F>(hw, func, &rqns).inspect_err(|_| {
                let _ = F::apply_rss(hw, func, None, RssChange::ALL);
            })
        });
        if let Err(e) = programmed {
            for ch in chans.into_iter() {
                let i = ch.index();
                self.add_totals(i, ch.close());
            }
            return Err(e);
        }
        for ch in chans.iter() {
            ch.activate();
        }
        self.shared.live.store(p.count, Ordering::Release);
        // Wake, not just start: after a reopen under traffic the qdisc holds packets and
        // must be rescheduled, or they wait for TCP's retransmit timer.
        for i in 0..p.count {
            if let Some(txq) = dev.tx_queue(i) {
                txq.wake();
            }
        }
        // Queues beyond the channels are started too, as mlx5e starts them all: the stack
        // sends nothing there, and a queue left stopped would trip the TX watchdog.
        for i in p.count..MAX_CHANNELS as u32 {
            if let Some(txq) = dev.tx_queue(i) {
                txq.start();
            }
        }
        with_bh(|| *self.chans.lock() = chans);
        Ok(())
    }

    /// Stops interrupts and NAPI (nothing may wake a TX queue after that), then the TX
    /// queues, then closes every channel, keeping their counters.
    fn close_channels(&self, dev: &Device) {
        self.shared.live.store(0, Ordering::Release);
        let chans = with_bh(|| core::mem::take(&mut *self.chans.lock()));
        for ch in chans.iter() {
            ch.quiesce();
        }
        dev.tx_disable();
        let _ = F::apply_rss(&self.shared.hw, &self.shared.func, None, RssChange::ALL);
        for ch in chans.into_iter() {
            let i = ch.index();
            self.add_totals(i, ch.close());
        }
    }

    fn add_totals(&self, index: u32, s: ChannelStats<F>) {
        with_bh(|| {
            if let Some(t) = self.totals.lock().get_mut(index as usize) {
                t.accumulate(&s);
            }
        });
    }

    /// Applies new channel parameters: stores them, and reopens the channels if the
    /// interface is up.
    fn reconfigure(&self, dev: &Device, f: impl FnOnce(&mut ChannelParams)) -> Result {
        let mut st = self.state.lock();
        let mut new = st.params;
        f(&mut new);
        let prog = st.prog.as_ref().map(BpfProg::clone_ref);
        self.reconfigure_locked(&mut st, dev, new, prog)
    }

    /// As [`Port::reconfigure`] with the state locked, installing `prog` as the attached
    /// program (reopening the channels if `new` differs from the current parameters).
    fn reconfigure_locked(
        &self,
        st: &mut PortState<F>,
        dev: &Device,
        new: ChannelParams,
        prog: Option<BpfProg>,
    ) -> Result {
        let old = st.params;
        if new == old {
            st.prog = prog;
            self.sync_xsk_active(st);
            return Ok(());
        }
        if st.open {
            self.close_channels(dev);
            if let Err(e) =
                self.open_channels(dev, &new, prog.as_ref(), &st.xsk, &mut st.rss, &st.steer)
            {
                // Back to what worked.
                pr_err!(
                    "{}: reopening channels failed ({:?}); restoring\n",
                    dev.name(),
                    e
                );
                self.open_channels(dev, &old, st.prog.as_ref(), &st.xsk, &mut st.rss, &st.steer)?;
                return Err(e);
            }
        } else if new.count != old.count && !dev.rxfh_configured() {
            // Shown by `ethtool -x` while down, applied at the next open.
            st.rss.spread(new.count);
        }
        st.params = new;
        st.prog = prog;
        self.sync_xsk_active(st);
        Ok(())
    }

    /// Tells `ndo_xsk_wakeup` whether AF_XDP zero-copy queues may exist: the interface is up
    /// with a program attached (mlx5e's `mlx5e_xdp_is_active`).
    fn sync_xsk_active(&self, st: &PortState<F>) {
        self.shared
            .xsk_active
            .store(st.open && st.prog.is_some(), Ordering::Release);
    }

    /// Reopens the channels after a fault on channel `ch` no queue reset covers
    /// ([`PortReset`]), and clears the request `req` once the old channels are closed
    /// (what they asked for until then is this reopen; a fault of the new ones asks again).
    /// Under RTNL.
    fn reopen(&self, dev: &Device, ch: u32, why: Reopen, req: &AtomicU32) {
        let mut st = self.state.lock();
        if !st.open {
            req.store(0, Ordering::Release);
            return;
        }
        // A device that is gone (surprise removal) cannot take channels again: the port
        // stays as it is with its carrier off, so the TX watchdog (which watches only a port
        // with carrier) does not fire again, until the interface is set down or the driver
        // unbinds. No reopen is tried.
        if !self.shared.hw.check_present() {
            dev.carrier_off();
            req.store(0, Ordering::Release);
            pr_err!(
                "{}: ch{}: {}: the device is gone: carrier off, the channels are not reopened\n",
                dev.name(),
                ch,
                why.what()
            );
            return;
        }
        pr_err!(
            "{}: ch{}: {}: reopening the channels\n",
            dev.name(),
            ch,
            why.what()
        );
        self.close_channels(dev);
        req.store(0, Ordering::Release);
        let p = st.params;
        let st = &mut *st;
        if let Err(e) =
            self.open_channels(dev, &p, st.prog.as_ref(), &st.xsk, &mut st.rss, &st.steer)
        {
            pr_err!(
                "{}: reopening the channels failed ({:?}): none until the interface is set down and up\n",
                dev.name(),
                e
            );
        }
    }

    /// Interrupt moderation (`ethtool -C`): checks `c` against what the device takes,
    /// stores it for the channels opened from now on, and changes the CQs of the live
    /// channels in place (MODIFY_CQ on ConnectX), as mlx5e does. With `adaptive-rx`/`-tx`
    /// DIM moves that direction's moderation, starting at its default profile (what
    /// `ethtool -c` shows meanwhile; values given with it are ignored, as mlx5e ignores
    /// them); turned off, the given values apply. A channel whose change fails keeps its
    /// old moderation until it is reopened; the first error is returned (the others are
    /// logged). Under RTNL; sleeps.
    fn set_coalesce(&self, dev: &Device, c: &ethtool::Coalesce, extack: &mut ExtAck) -> Result {
        let max = F::COALESCE_MAX;
        let to = |usecs: u32, frames: u32| -> Option<Moderation> {
            Some(Moderation {
                usecs: u16::try_from(usecs).ok().filter(|&u| u <= max.usecs)?,
                frames: u16::try_from(frames).ok().filter(|&f| f <= max.frames)?,
            })
        };
        let (Some(rx), Some(tx)) = (to(c.rx_usecs, c.rx_frames), to(c.tx_usecs, c.tx_frames))
        else {
            // mlx5e's answer (ERANGE), with its limits: a 12-bit period, a 16-bit count.
            extack.set_message(c_str!(
                "out of range: rx/tx-usecs at most 4095, rx/tx-frames at most 65535"
            ));
            return Err(ERANGE);
        };
        let mut st = self.state.lock();
        let old = st.params.coal;
        // Adaptive: DIM's default profile when turned on, unchanged while it stays on.
        let pick = |adaptive: bool, was: bool, given: Moderation, cur: Moderation, rx: bool| match (
            adaptive, was,
        ) {
            (true, true) => cur,
            (true, false) => dim_default::<F>(rx),
            (false, _) => given,
        };
        let new = Coalesce {
            rx: pick(c.adaptive_rx, old.adaptive_rx, rx, old.rx, true),
            tx: pick(c.adaptive_tx, old.adaptive_tx, tx, old.tx, false),
            adaptive_rx: c.adaptive_rx,
            adaptive_tx: c.adaptive_tx,
        };
        st.params.coal = new;
        if !st.open || new == old {
            return Ok(());
        }
        let chans = self.live_chans()?;
        let mut first: Result = Ok(());
        for ch in chans.iter() {
            let dirs = [
                (true, new.rx, old.rx, new.adaptive_rx, old.adaptive_rx),
                (false, new.tx, old.tx, new.adaptive_tx, old.adaptive_tx),
            ];
            for (rx, m, was_m, on, was_on) in dirs {
                let r = if on != was_on {
                    ch.set_adaptive(rx, on, m)
                } else if !on && m != was_m {
                    ch.modify_moderation(rx, m)
                } else {
                    continue;
                };
                if let Err(e) = r {
                    pr_err!(
                        "{}: ch{}: changing the {} interrupt moderation failed ({:?})\n",
                        dev.name(),
                        ch.index(),
                        if rx { "RX" } else { "TX" },
                        e
                    );
                    if first.is_ok() {
                        first = Err(e);
                    }
                }
            }
        }
        first
    }

    /// The live channels, each with a reference, for commands that sleep (so not under the
    /// list's spinlock). The caller holds the state lock, which keeps them from being closed
    /// meanwhile.
    fn live_chans(&self) -> Result<KVec<Arc<Channel<F>>>> {
        with_bh(|| {
            let l = self.chans.lock();
            let mut v = KVec::with_capacity(l.len(), GFP_ATOMIC)?;
            for ch in l.iter() {
                v.push(ch.clone(), GFP_ATOMIC)?;
            }
            Ok(v)
        })
    }

    /// VLAN stripping on (`strip`) or off (`ethtool -K rxvlan`, as mlx5e's
    /// `set_feature_rx_vlan`): new RQs are made so, and the live channels' RQs are changed
    /// in place (MODIFY_RQ `vsd`), nothing reopened. A tag the device stripped goes up with
    /// its packet either way, so frames received meanwhile lose nothing. On a failure the
    /// channels changed so far are set back and the feature stays as it was. Under RTNL;
    /// sleeps.
    fn set_rx_vlan(&self, strip: bool) -> Result {
        let mut st = self.state.lock();
        if st.params.rx_vlan == strip {
            return Ok(());
        }
        if st.open {
            let chans = self.live_chans()?;
            for (i, ch) in chans.iter().enumerate() {
                if let Err(e) = ch.set_rx_vlan(strip) {
                    for done in chans.iter().take(i + 1) {
                        let _ = done.set_rx_vlan(!strip);
                    }
                    return Err(e);
                }
            }
        }
        st.params.rx_vlan = strip;
        Ok(())
    }

    /// Attaches, replaces or detaches the XDP program. Attaching or detaching reopens the
    /// channels (buffers get XDP's headroom, mlx5 channels an XDP_TX SQ); a replacement is
    /// swapped into the running channels.
    fn xdp_setup(&self, dev: &Device, prog: Option<BpfProg>, extack: &mut ExtAck) -> Result {
        let mut st = self.state.lock();
        let mut new = st.params;
        new.xdp = prog.is_some();
        if new.xdp && new.mtu > ChannelParams::max_xdp_mtu() {
            extack.set_message(c_str!(
                "MTU too large for XDP: a frame must fit one page (see rsnic.rst)"
            ));
            return Err(EINVAL);
        }
        if new == st.params {
            if let Some(p) = prog.as_ref() {
                // The port still holds the old program, so no channel puts the last
                // reference here.
                with_bh(|| {
                    for ch in self.chans.lock().iter() {
                        ch.swap_prog(p);
                    }
                });
            }
            st.prog = prog;
            self.sync_xsk_active(&st);
            return Ok(());
        }
        self.reconfigure_locked(&mut st, dev, new, prog)
    }

    /// Registers (`Some`) or unregisters (`None`) the AF_XDP zero-copy pool of queue `q`,
    /// as mlx5e's `mlx5e_xsk_setup_pool`. Registration checks the pool against the port
    /// (`crate::dp::xsk::check_pool`; a refusal is logged with its reason: the call has no
    /// extack) and maps it; if the interface is up with an XDP program attached, channel `q`
    /// gets its XSK queues and its RSS entries point at its XSK RQ, the other channels going
    /// on untouched (otherwise they come when a program is attached or the interface comes
    /// up). Unregistration points the entries back at the regular RQ, closes the XSK queues
    /// and unmaps the pool, so the driver no longer touches it when this returns. Under
    /// RTNL.
    fn xsk_setup(&self, dev: &Device, pool: Option<XskPool>, q: u32) -> Result {
        if !F::XSK_ZC {
            return Err(crate::kernel_ext::net::eopnotsupp());
        }
        let qi = q as usize;
        if qi >= MAX_CHANNELS {
            return Err(EINVAL);
        }
        let mut st = self.state.lock();
        match pool {
            Some(pool) => {
                if q >= st.params.count {
                    pr_err!(
                        "{}: AF_XDP queue {} is not a channel ({} channels)\n",
                        dev.name(),
                        q,
                        st.params.count
                    );
                    return Err(EINVAL);
                }
                if st.xsk[qi].is_some() {
                    return Err(EBUSY);
                }
                let (chunk, headroom) = (pool.chunk_size(), pool.headroom());
                if let Err(why) = xsk::check_pool(chunk, headroom, st.params.mtu, &xsk_geometry()) {
                    pr_err!("{}: AF_XDP queue {}: {}\n", dev.name(), q, why);
                    return Err(EINVAL);
                }
                pool.dma_map(&self.shared.dma)?;
                st.xsk[qi] = Some(pool);
                if let Err(e) = self.xsk_activate(dev, &mut st, q, pool) {
                    st.xsk[qi] = None;
                    pool.dma_unmap();
                    return Err(e);
                }
                Ok(())
            }
            None => {
                let Some(old) = st.xsk[qi].take() else {
                    return Ok(());
                };
                self.xsk_deactivate(dev, &mut st, q);
                old.dma_unmap();
                Ok(())
            }
        }
    }

    /// The live channel of queue `q`, if any.
    fn live_channel(&self, q: u32) -> Option<Arc<Channel<F>>> {
        with_bh(|| self.chans.lock().iter().find(|c| c.index() == q).cloned())
    }

    /// Opens channel `q`'s XSK queues for `pool` if the interface is up with a program
    /// attached, and points its RSS entries at its XSK RQ (`mlx5e_rx_res_xsk_update`).
    /// A failure leaves the channel as it was. Under RTNL, the state locked.
    fn xsk_activate(&self, dev: &Device, st: &mut PortState<F>, q: u32, pool: XskPool) -> Result {
        if !st.open || st.prog.is_none() {
            return Ok(());
        }
        // Open without channels (a reopen failed): made at the next open.
        let Some(ch) = self.live_channel(q) else {
            return Ok(());
        };
        ch.xsk_enable(&st.params, pool)?;
        ch.steer_xsk(true);
        if let Err(e) = self.steer_live(st) {
            pr_err!(
                "{}: AF_XDP queue {}: steering to the XSK RQ failed ({:?})\n",
                dev.name(),
                q,
                e
            );
            ch.steer_xsk(false);
            let _ = self.steer_live(st);
            ch.xsk_disable();
            return Err(e);
        }
        Ok(())
    }

    /// Points channel `q`'s RSS entries back at its regular RQ and closes its XSK queues,
    /// if it has them. Cannot be refused: a failed steering command is logged (the XSK RQ
    /// may then stay named, and its destruction be refused and logged too). Under RTNL, the
    /// state locked.
    fn xsk_deactivate(&self, dev: &Device, st: &mut PortState<F>, q: u32) {
        let Some(ch) = self.live_channel(q).filter(|c| c.has_xsk()) else {
            return;
        };
        ch.steer_xsk(false);
        if let Err(e) = self.steer_live(st) {
            pr_err!(
                "{}: AF_XDP queue {}: steering back to the regular RQ failed ({:?})\n",
                dev.name(),
                q,
                e
            );
        }
        ch.xsk_disable();
    }

    /// Programs the RQs the live channels now name ([`Channel::rqn`]) into the main RSS
    /// table, the additional contexts and (ConnectX) the channels' direct steering, in place,
    /// as `mlx5e_rx_res_xsk_update` does. Nothing while there are no channels.
    fn steer_live(&self, st: &PortState<F>) -> Result {
        if !st.open {
            return Ok(());
        }
        let (rqns, n) = self.live_rqns();
        let Some(rqns) = rqns.get(..n).filter(|r| !r.is_empty()) else {
            return Ok(());
        };
        let table = RssChange {
            table: true,
            key: false,
            fields: false,
        };
        let (hw, func) = (&self.shared.hw, &self.shared.func);
        F::apply_rss(hw, func, Some(&st.rss.spec(rqns)), table)?;
        for (i, c) in st.steer.ctxs.iter().enumerate() {
            if let Some(c) = c {
                F::apply_rss_ctx(hw, func, i.saturating_add(1), Some(&c.spec(rqns)), table)?;
            }
        }
        Ok(())
    }

    /// `ndo_xsk_wakeup` for queue `q`: `ENETDOWN` unless the interface is up with a program
    /// attached (mlx5e's answer); otherwise the channel's wake-up, or 0 while the channels
    /// are being reopened (the reopen polls them).
    fn xsk_wakeup(&self, q: u32) -> Result {
        if !self.shared.xsk_active.load(Ordering::Acquire) {
            return Err(crate::kernel_ext::net::enetdown());
        }
        // Under the channels' lock, without taking a reference: the caller may be in an RCU
        // read-side section (xsk_sendmsg), where dropping the last reference to a channel
        // closed meanwhile (whose NAPI deletion sleeps) is not allowed.
        with_bh(|| {
            self.chans
                .lock()
                .iter()
                .find(|c| c.index() == q)
                .map_or(Ok(()), |ch| ch.xsk_wakeup())
        })
    }

    /// `ndo_tx_timeout` for queue `q` (watchdog timer, every xmit lock held): the channel
    /// queues its recovery. Under the channels' lock, so no reference outlives it here.
    fn tx_timeout(&self, q: u32) {
        with_bh(|| {
            if let Some(ch) = self.chans.lock().iter().find(|c| c.index() == q) {
                ch.tx_timeout();
            }
        });
    }

    /// The device RQ of each live channel (its XSK RQ under AF_XDP zero-copy), by channel,
    /// and how many there are (0: closed, or open without channels after a failed reopen:
    /// what is set is programmed at the next open).
    fn live_rqns(&self) -> ([u32; MAX_CHANNELS], usize) {
        let mut rqns = [0u32; MAX_CHANNELS];
        let n = with_bh(|| {
            let chans = self.chans.lock();
            for ch in chans.iter() {
                if let Some(r) = rqns.get_mut(ch.index() as usize) {
                    *r = ch.rqn();
                }
            }
            chans.len().min(MAX_CHANNELS)
        });
        (rqns, n)
    }

    /// Programs context `id`'s configuration `c` (`None`: removes it) into the running
    /// channels with `change`; nothing while there are none (the next open programs it).
    fn apply_ctx_locked(
        &self,
        st: &PortState<F>,
        id: usize,
        c: Option<&RssConfig>,
        change: RssChange,
    ) -> Result {
        let (rqns, n) = self.live_rqns();
        match rqns.get(..n).filter(|r| !r.is_empty() && st.open) {
            Some(rqns) => F::apply_rss_ctx(
                &self.shared.hw,
                &self.shared.func,
                id,
                c.map(|c| c.spec(rqns)).as_ref(),
                change,
            ),
            None => Ok(()),
        }
    }

    /// Programs the rule at `loc` (`None`: removes it) into the running channels; nothing
    /// while there are none.
    fn apply_rule_locked(&self, st: &PortState<F>, loc: usize, rule: Option<&Rule>) -> Result {
        if !st.open || self.live_rqns().1 == 0 {
            return Ok(());
        }
        F::apply_rule(&self.shared.hw, &self.shared.func, loc, rule)
    }

    /// Programs a changed RSS configuration (`change`) into the running channels, in place
    /// (the family updates the device without re-creating anything); on a failure the
    /// previous configuration `old` comes back and is programmed again. Nothing to do while
    /// the channels are closed (the next open programs it all). Under RTNL, the state
    /// locked.
    fn apply_rss_locked(
        &self,
        dev: &Device,
        st: &mut PortState<F>,
        old: &RssConfig,
        change: RssChange,
    ) -> Result {
        if !st.open {
            return Ok(());
        }
        let (rqns, n) = self.live_rqns();
        let Some(rqns) = rqns.get(..n).filter(|r| !r.is_empty()) else {
            // Open without channels (a reopen failed): applied when they open again.
            return Ok(());
        };
        let (hw, func) = (&self.shared.hw, &self.shared.func);
        if let Err(e) = F::apply_rss(hw, func, Some(&st.rss.spec(rqns)), change) {
            pr_err!(
                "{}: updating RSS failed ({:?}); restoring the previous settings\n",
                dev.name(),
                e
            );
            st.rss = old.clone();
            let _ = F::apply_rss(hw, func, Some(&st.rss.spec(rqns)), change);
            return Err(e);
        }
        Ok(())
    }

    /// Counters of queue `i`: its closed channels' totals plus its live channel. The
    /// channel's counters are read after `chans` is released: they are read under the TX
    /// queue's xmit lock, and the watchdog takes `chans` (`tx_timeout`) while it holds every
    /// xmit lock.
    fn queue_stats(&self, i: usize) -> ChannelStats<F> {
        let (mut q, ch) = with_bh(|| {
            let q = self.totals.lock().get(i).copied().unwrap_or_default();
            let ch = self
                .chans
                .lock()
                .iter()
                .find(|c| c.index() as usize == i)
                .cloned();
            (q, ch)
        });
        if let Some(ch) = ch {
            q.accumulate(&ch.stats());
        }
        q
    }

    /// Device totals: every queue, plus what no queue took.
    fn sum_stats(&self) -> ChannelStats<F> {
        let mut sum = ChannelStats::<F>::default();
        for i in 0..MAX_CHANNELS {
            sum.accumulate(&self.queue_stats(i));
        }
        self.finish_sum(&mut sum);
        sum
    }

    /// Adds to a sum of the queues' counters what belongs to the port as a whole.
    fn finish_sum(&self, sum: &mut ChannelStats<F>) {
        sum.tx_dropped = sum
            .tx_dropped
            .wrapping_add(self.shared.dropped_closed.load(Ordering::Relaxed));
        sum.tx_hardirq_busy = self.shared.hardirq_busy.load(Ordering::Relaxed);
    }
}

/// The operations of a port of family `F`.
pub(crate) struct PortOps<F>(PhantomData<F>);

#[vtable]
impl<F: Family> device::Operations for PortOps<F> {
    type Data = Arc<Port<F>>;

    fn open(dev: &Device, port: ArcBorrow<'_, Port<F>>) -> Result {
        let mut st = port.state.lock();
        let params = st.params;
        let st = &mut *st;
        port.open_channels(
            dev,
            &params,
            st.prog.as_ref(),
            &st.xsk,
            &mut st.rss,
            &st.steer,
        )?;
        if let Err(e) = F::set_admin(&port.shared.hw, &port.shared.func, true) {
            port.close_channels(dev);
            return Err(e);
        }
        st.open = true;
        port.sync_xsk_active(st);
        *port.shared.reset.target.lock() = Some((port.into(), ARef::from(dev)));
        if !F::CARRIER_FROM_EVENTS {
            // As upstream mana: the carrier is on while the interface is up.
            dev.carrier_on();
        }
        Ok(())
    }

    fn stop(dev: &Device, port: ArcBorrow<'_, Port<F>>) -> Result {
        // No reopen from now on; one waiting for RTNL finds nothing to do.
        drop(port.shared.reset.target.lock().take());
        let mut st = port.state.lock();
        dev.carrier_off();
        if let Err(e) = F::set_admin(&port.shared.hw, &port.shared.func, false) {
            // The interface goes down regardless; the device may keep the link up.
            pr_err!("{}: setting the port down failed: {:?}\n", dev.name(), e);
        }
        if st.open {
            st.open = false;
            port.sync_xsk_active(&st);
            port.close_channels(dev);
        }
        Ok(())
    }

    fn start_xmit(
        skb: SkBuff,
        dev: &Device,
        port: ArcBorrow<'_, Port<F>>,
        ctx: &mut XmitCtx,
    ) -> TxOutcome {
        match port.shared.xmit(dev, skb, ctx) {
            Ok(()) => TxOutcome::Ok,
            Err(skb) => TxOutcome::Busy(skb),
        }
    }

    fn get_stats64(_dev: &Device, port: ArcBorrow<'_, Port<F>>, s: &mut LinkStats64) {
        let sum = F::summary(&port.sum_stats());
        s.tx_packets = sum.tx_packets;
        s.tx_bytes = sum.tx_bytes;
        s.tx_dropped = sum.tx_dropped;
        s.rx_packets = sum.rx_packets;
        s.rx_bytes = sum.rx_bytes;
        s.rx_dropped = sum.rx_dropped;
        s.rx_errors = sum.rx_errors;
        s.tx_errors = sum.tx_errors;
    }

    fn change_mtu(dev: &Device, port: ArcBorrow<'_, Port<F>>, new_mtu: u32) -> Result {
        {
            // mlx5e_xsk_validate_mtu: every bound pool takes the MTU, and an XDP program
            // with its headroom could too; a refusal names the largest MTU they all take
            // (ndo_change_mtu has no extack: the log says it).
            let st = port.state.lock();
            let g = xsk_geometry();
            for (q, pool) in st.xsk.iter().enumerate() {
                let Some(pool) = pool else {
                    continue;
                };
                let (chunk, headroom) = (pool.chunk_size(), pool.headroom());
                if let Err(why) = xsk::check_mtu(chunk, headroom, new_mtu, &g) {
                    pr_err!(
                        "{}: MTU {} is too big for an XSK running on channel {} ({}). Try MTU <= {}\n",
                        dev.name(),
                        new_mtu,
                        q,
                        why,
                        xsk::max_mtu(chunk, headroom, &g)
                    );
                    return Err(EINVAL);
                }
            }
        }
        if port.state.lock().params.xdp && new_mtu > ChannelParams::max_xdp_mtu() {
            pr_err!(
                "{}: MTU {} too large with an XDP program attached (at most {})\n",
                dev.name(),
                new_mtu,
                ChannelParams::max_xdp_mtu()
            );
            return Err(EINVAL);
        }
        port.reconfigure(dev, |p| p.mtu = new_mtu)
    }

    fn set_rx_mode(_dev: &Device, port: ArcBorrow<'_, Port<F>>, mode: &RxMode) {
        F::set_rx_mode(&port.shared.func, mode);
    }

    fn set_mac_address(
        _dev: &Device,
        port: ArcBorrow<'_, Port<F>>,
        change: MacChange<'_>,
    ) -> Result {
        F::set_mac_address(&port.shared.func, change)
    }

    fn set_features(_dev: &Device, port: ArcBorrow<'_, Port<F>>, f: Features) -> Result {
        // Only a change reaches the device (set_features runs for every feature change).
        if port.loopback.load(Ordering::Relaxed) != f.loopback {
            F::apply_loopback(&port.shared.hw, &port.shared.func, f.loopback)?;
            port.loopback.store(f.loopback, Ordering::Relaxed);
        }
        if F::RX_VLAN_TOGGLE {
            port.set_rx_vlan(f.rx_vlan)?;
        }
        // Read by NAPI per packet; take effect from the next packet on.
        port.shared.rx_csum.store(f.rx_csum, Ordering::Relaxed);
        port.shared.rx_hash.store(f.rx_hash, Ordering::Relaxed);
        if F::NTUPLE_RULES > 0 {
            let mut st = port.state.lock();
            if st.steer.ntuple && !f.ntuple {
                // ntuple-filters off takes the rules away (as ice and i40e do; mlx5e ties
                // the feature to aRFS and keeps its ethtool rules).
                for loc in 0..st.steer.rules.len() {
                    if st.steer.rules.get(loc).is_some_and(|r| r.is_some()) {
                        port.apply_rule_locked(&st, loc, None)?;
                        if let Some(r) = st.steer.rules.get_mut(loc) {
                            *r = None;
                        }
                    }
                }
            }
            st.steer.ntuple = f.ntuple;
        }
        Ok(())
    }

    fn xdp_setup(
        dev: &Device,
        port: ArcBorrow<'_, Port<F>>,
        prog: Option<BpfProg>,
        extack: &mut ExtAck,
    ) -> Result {
        port.xdp_setup(dev, prog, extack)
    }

    fn xsk_setup(
        dev: &Device,
        port: ArcBorrow<'_, Port<F>>,
        pool: Option<XskPool>,
        queue: u32,
    ) -> Result {
        port.xsk_setup(dev, pool, queue)
    }

    fn xsk_wakeup(_dev: &Device, port: ArcBorrow<'_, Port<F>>, queue: u32) -> Result {
        port.xsk_wakeup(queue)
    }

    fn tx_timeout(_dev: &Device, port: ArcBorrow<'_, Port<F>>, queue: u32) {
        port.tx_timeout(queue);
    }

    fn xdp_xmit(
        dev: &Device,
        port: ArcBorrow<'_, Port<F>>,
        frames: &mut XdpFrames<'_>,
        flush: bool,
    ) {
        port.shared.xdp_xmit(dev, frames, flush);
    }

    fn queue_stats(_dev: &Device, port: ArcBorrow<'_, Port<F>>, index: u32) -> QueueStats {
        if index as usize >= MAX_CHANNELS {
            return QueueStats::default();
        }
        to_queue_stats(&port.queue_stats(index as usize))
    }

    fn base_stats(_dev: &Device, port: ArcBorrow<'_, Port<F>>) -> QueueStats {
        // Queues beyond the live ones (closed by a channel-count change) are the base.
        let n = port.channel_count() as usize;
        let mut base = ChannelStats::<F>::default();
        for i in n..MAX_CHANNELS {
            base.accumulate(&port.queue_stats(i));
        }
        to_queue_stats(&base)
    }
}

fn to_queue_stats<F: Family>(s: &ChannelStats<F>) -> QueueStats {
    let s: Summary = F::summary(s);
    QueueStats {
        rx_packets: s.rx_packets,
        rx_bytes: s.rx_bytes,
        rx_alloc_fail: s.rx_alloc_fail,
        tx_packets: s.tx_packets,
        tx_bytes: s.tx_bytes,
        tx_stop: s.tx_stop,
        tx_wake: s.tx_wake,
    }
}

#[vtable]
impl<F: Family> ethtool::Operations for PortOps<F> {
    const PRIV_FLAGS: &'static [&'static CStr] = F::PRIV_FLAGS;

    fn get_drvinfo(_dev: &Device, port: ArcBorrow<'_, Port<F>>, info: &mut DrvInfo<'_>) {
        info.set_driver("rsnic");
        info.set_version(DRV_VERSION);
        info.set_fw_version(F::FW_VERSION);
        if let Ok(bus) = port.bus_info.to_str() {
            info.set_bus_info(bus);
        }
    }

    fn get_link_ksettings(
        _dev: &Device,
        _port: ArcBorrow<'_, Port<F>>,
        ks: &mut LinkSettings<'_>,
    ) -> Result {
        ks.set_speed(SPEED_MBPS);
        ks.set_full_duplex(true);
        ks.set_port_other();
        Ok(())
    }

    fn get_priv_flags(_dev: &Device, port: ArcBorrow<'_, Port<F>>) -> u32 {
        port.pflags.load(Ordering::Relaxed)
    }

    fn set_priv_flags(dev: &Device, port: ArcBorrow<'_, Port<F>>, flags: u32) -> Result {
        // (ethtool's set_priv_flags has no extack: the reason goes to the kernel log, as
        // mlx5e's "Failed setting private flags" does.)
        if let Some(why) = F::refuse_pflags(&port.shared.func, flags) {
            pr_err!("{}: {}\n", dev.name(), why);
            return Err(crate::kernel_ext::net::eopnotsupp());
        }
        port.reconfigure(dev, |p| p.pflags = flags)?;
        port.pflags.store(flags, Ordering::Relaxed);
        Ok(())
    }

    fn get_channels(_dev: &Device, port: ArcBorrow<'_, Port<F>>) -> Channels {
        Channels {
            max_combined: port.max_channels,
            combined: port.channel_count(),
        }
    }

    fn set_channels(dev: &Device, port: ArcBorrow<'_, Port<F>>, combined: u32) -> Result {
        if combined == 0 || combined > port.max_channels {
            return Err(EINVAL);
        }
        // With AF_XDP zero-copy sockets bound, as 6.12's mlx5e: any count that keeps their
        // queues (the channels reopen with their XSK queues); the ethtool core refuses a
        // count below a bound queue itself ("requested channel counts are too low for
        // existing zerocopy AF_XDP sockets").
        port.reconfigure(dev, |p| p.count = combined)
    }

    fn get_ringparam(_dev: &Device, port: ArcBorrow<'_, Port<F>>) -> Rings {
        let p = port.state.lock().params;
        Rings {
            rx_max: 1 << F::RQ_RING.max,
            tx_max: 1 << F::SQ_RING.max,
            rx: 1 << p.log_rq,
            tx: 1 << p.log_sq,
        }
    }

    fn set_ringparam(
        dev: &Device,
        port: ArcBorrow<'_, Port<F>>,
        rx: u32,
        tx: u32,
        extack: &mut ExtAck,
    ) -> Result {
        if rx < 1 << F::RQ_RING.min {
            extack.set_message(c_str!("RX ring size below the minimum (see ethtool -g)"));
            return Err(EINVAL);
        }
        if tx < 1 << F::SQ_RING.min {
            extack.set_message(c_str!("TX ring size below the minimum (see ethtool -g)"));
            return Err(EINVAL);
        }
        // Rounded up to a power of two, as mlx5e does.
        let log = |n: u32| (32 - (n - 1).leading_zeros()) as u8;
        let (log_rq, log_sq) = (log(rx), log(tx));
        if log_rq > F::RQ_RING.max || log_sq > F::SQ_RING.max {
            extack.set_message(c_str!("ring size above the maximum"));
            return Err(EINVAL);
        }
        port.reconfigure(dev, |p| {
            p.log_rq = log_rq;
            p.log_sq = log_sq;
        })
    }

    // Link flow control (802.3x global pause), for the families that own it: the
    // operations are absent for the others (ethtool answers EOPNOTSUPP).
    const HAS_GET_PAUSEPARAM: bool = F::PAUSE;
    const HAS_SET_PAUSEPARAM: bool = F::PAUSE;
    const HAS_GET_PAUSE_STATS: bool = F::PAUSE;

    fn get_pauseparam(dev: &Device, port: ArcBorrow<'_, Port<F>>) -> PauseParam {
        // Asked of the device every time, as mlx5e_get_pauseparam does; there is no pause
        // autonegotiation (a fixed-speed simulated wire).
        let bits = match F::query_pause(&port.shared.hw, &port.shared.func) {
            Ok((rx, tx)) => {
                let b = pause_bits(rx, tx);
                port.pause.store(b, Ordering::Relaxed);
                b
            }
            Err(e) => {
                // The family logged the command; the last known setting is shown.
                pr_warn!("{}: reading the flow control failed: {:?}\n", dev.name(), e);
                port.pause.load(Ordering::Relaxed)
            }
        };
        PauseParam {
            autoneg: false,
            rx: bits & PAUSE_RX != 0,
            tx: bits & PAUSE_TX != 0,
        }
    }

    fn set_pauseparam(dev: &Device, port: ArcBorrow<'_, Port<F>>, p: PauseParam) -> Result {
        if p.autoneg {
            // (No extack in 6.12's set_pauseparam: the reason goes to the kernel log.)
            pr_err!(
                "{}: pause autonegotiation is not supported (the link has no autonegotiation); \
                 set rx and tx with autoneg off\n",
                dev.name()
            );
            return Err(EINVAL);
        }
        // The device keeps the setting across interface down/up and channel reopens (it
        // is the port's, not the queues'): nothing to re-apply there.
        F::apply_pause(&port.shared.hw, &port.shared.func, p.rx, p.tx)?;
        let b = pause_bits(p.rx, p.tx);
        port.pause.store(b, Ordering::Relaxed);
        Ok(())
    }

    fn get_pause_stats(_dev: &Device, port: ArcBorrow<'_, Port<F>>) -> Option<PauseStats> {
        // A failure was logged by the family, with the command: nothing is reported.
        F::query_pause_stats(&port.shared.hw, &port.shared.func)
            .ok()
            .map(|(tx_frames, rx_frames)| PauseStats {
                tx_frames,
                rx_frames,
            })
    }

    const COALESCE_PARAMS: u32 = if F::COALESCE {
        ethtool::COALESCE_USECS | ethtool::COALESCE_MAX_FRAMES | ethtool::COALESCE_USE_ADAPTIVE
    } else {
        0
    };

    fn get_coalesce(
        _dev: &Device,
        port: ArcBorrow<'_, Port<F>>,
        _extack: &mut ExtAck,
    ) -> Result<ethtool::Coalesce> {
        let c = port.state.lock().params.coal;
        Ok(ethtool::Coalesce {
            rx_usecs: c.rx.usecs.into(),
            rx_frames: c.rx.frames.into(),
            tx_usecs: c.tx.usecs.into(),
            tx_frames: c.tx.frames.into(),
            adaptive_rx: c.adaptive_rx,
            adaptive_tx: c.adaptive_tx,
        })
    }

    fn set_coalesce(
        dev: &Device,
        port: ArcBorrow<'_, Port<F>>,
        c: &ethtool::Coalesce,
        extack: &mut ExtAck,
    ) -> Result {
        port.set_coalesce(dev, c, extack)
    }

    fn stats_count(_dev: &Device, port: ArcBorrow<'_, Port<F>>) -> usize {
        let n = port.channel_count() as usize;
        F::GLOBAL.len() + F::HW.len() + n * (F::TXQ.len() + F::RXQ.len() + F::CH.len())
    }

    fn stats_strings(_dev: &Device, port: ArcBorrow<'_, Port<F>>, out: &mut Strings<'_>) {
        for (name, _) in F::GLOBAL {
            out.push_fmt(format_args!("{}", name));
        }
        for (name, _) in F::HW {
            out.push_fmt(format_args!("{}", name));
        }
        let n = port.channel_count();
        let sep = F::QUEUE_INFIX;
        for (dir, table) in [("tx", F::TXQ), ("rx", F::RXQ), ("ch", F::CH)] {
            for i in 0..n {
                for (name, _) in table {
                    out.push_fmt(format_args!("{}{}{}_{}", dir, sep, i, name));
                }
            }
        }
    }

    fn stats_values(_dev: &Device, port: ArcBorrow<'_, Port<F>>, out: &mut [u64]) {
        let n = port.channel_count() as usize;
        // Asked of the device on every read (a command; this context may sleep), as
        // mlx5e's stats update does; a failed query shows the last values.
        let hw = {
            let mut st = port.state.lock();
            // A failure was logged by the family, with the command.
            if let Ok(c) = F::query_counters(&port.shared.hw, &port.shared.func) {
                st.hw = c;
            }
            st.hw
        };
        let mut put = |at: usize, v: u64| {
            if let Some(o) = out.get_mut(at) {
                *o = v;
            }
        };
        // Each queue is read once, and the totals are the sum of the very values shown per
        // queue: a packet that arrives during the read counts in both or in neither, so the
        // per-queue rows of one `ethtool -S` add up to its totals.
        let (lt, lr, lc) = (F::TXQ.len(), F::RXQ.len(), F::CH.len());
        let txq_at = F::GLOBAL.len() + F::HW.len();
        let (rxq_at, ch_at) = (txq_at + n * lt, txq_at + n * (lt + lr));
        let mut sum = ChannelStats::<F>::default();
        for i in 0..MAX_CHANNELS {
            let s = port.queue_stats(i);
            if i < n {
                for (at, len, table) in [
                    (txq_at, lt, F::TXQ),
                    (rxq_at, lr, F::RXQ),
                    (ch_at, lc, F::CH),
                ] {
                    for (k, (_, f)) in table.iter().enumerate() {
                        put(at + i * len + k, f(&s));
                    }
                }
            }
            sum.accumulate(&s);
        }
        port.finish_sum(&mut sum);
        for (k, (_, f)) in F::GLOBAL.iter().enumerate() {
            put(k, f(&sum));
        }
        for (k, (_, f)) in F::HW.iter().enumerate() {
            put(F::GLOBAL.len() + k, f(&hw));
        }
    }

    // RSS: `ethtool -x/-X` and `-n/-N rx-flow-hash` (see crate::rss).

    fn rxfh_indir_size(_dev: &Device, port: ArcBorrow<'_, Port<F>>) -> u32 {
        port.state.lock().rss.len() as u32
    }

    fn rxfh_key_size(_dev: &Device, _port: ArcBorrow<'_, Port<F>>) -> u32 {
        KEY_LEN as u32
    }

    fn get_rxfh(_dev: &Device, port: ArcBorrow<'_, Port<F>>, rxfh: &mut RxfhGet<'_>) -> Result {
        let st = port.state.lock();
        rxfh.set_hfunc(ethtool::rss_hash::TOP);
        if let Some(t) = rxfh.indir() {
            for (o, &e) in t.iter_mut().zip(st.rss.table()) {
                *o = u32::from(e);
            }
        }
        if let Some(k) = rxfh.key() {
            for (o, &b) in k.iter_mut().zip(st.rss.key()) {
                *o = b;
            }
        }
        Ok(())
    }

    fn set_rxfh(
        dev: &Device,
        port: ArcBorrow<'_, Port<F>>,
        rxfh: &RxfhSet<'_>,
        extack: &mut ExtAck,
    ) -> Result {
        // (The core refuses contexts itself: rsnic declares none.)
        if rxfh.rss_context != 0 || rxfh.rss_delete {
            extack.set_message(c_str!("rsnic has no additional RSS contexts"));
            return Err(crate::kernel_ext::net::eopnotsupp());
        }
        // 6.12's `ethtool -X` goes through the ioctl, where there is no extack: the log
        // says it too.
        if rxfh.hfunc != ethtool::rss_hash::NO_CHANGE && rxfh.hfunc != ethtool::rss_hash::TOP {
            extack.set_message(c_str!("rsnic hashes with Toeplitz only"));
            pr_err!(
                "{}: RSS hash function {:#x} refused: rsnic hashes with Toeplitz only\n",
                dev.name(),
                rxfh.hfunc
            );
            return Err(crate::kernel_ext::net::eopnotsupp());
        }
        let mut st = port.state.lock();
        let old = st.rss.clone();
        let mut change = RssChange {
            table: false,
            key: false,
            fields: false,
        };
        if let Some(t) = rxfh.indir {
            let count = st.params.count;
            if !st.rss.set_table(t, count) {
                extack.set_message(c_str!(
                    "the indirection table has the wrong size or names a queue beyond the channels"
                ));
                pr_err!(
                    "{}: RSS table refused: {} entries expected, queues below {}\n",
                    dev.name(),
                    st.rss.len(),
                    count
                );
                return Err(EINVAL);
            }
            change.table = true;
        }
        if let Some(k) = rxfh.key {
            if !st.rss.set_key(k) {
                st.rss = old;
                extack.set_message(c_str!("the RSS hash key is 40 bytes"));
                pr_err!(
                    "{}: RSS key of {} bytes refused (40)\n",
                    dev.name(),
                    k.len()
                );
                return Err(EINVAL);
            }
            change.key = true;
        }
        port.apply_rss_locked(dev, &mut st, &old, change)
    }

    fn rx_rings(_dev: &Device, port: ArcBorrow<'_, Port<F>>) -> u32 {
        port.channel_count()
    }

    fn get_rx_flow_hash(
        _dev: &Device,
        port: ArcBorrow<'_, Port<F>>,
        flow_type: u32,
    ) -> Result<u32> {
        // mlx5e answers EINVAL for a flow type it has no traffic type for.
        let flow = Flow::from_ethtool(flow_type).ok_or(EINVAL)?;
        Ok(port.state.lock().rss.fields(flow).to_rxh())
    }

    fn set_rx_flow_hash(
        dev: &Device,
        port: ArcBorrow<'_, Port<F>>,
        flow_type: u32,
        fields: u32,
    ) -> Result {
        // (rxnfc operations have no extack: the reason goes to the kernel log.)
        let Some(flow) = Flow::from_ethtool(flow_type) else {
            pr_err!(
                "{}: rx-flow-hash: flow type {:#x} is not one rsnic hashes (tcp4, udp4, ip4, tcp6, udp6, ip6)\n",
                dev.name(),
                flow_type
            );
            return Err(crate::kernel_ext::net::eopnotsupp());
        };
        let Some(f) = Fields::from_rxh(fields) else {
            pr_err!(
                "{}: rx-flow-hash: only IP addresses (s, d) and L4 ports (f, n) can be hashed\n",
                dev.name()
            );
            return Err(crate::kernel_ext::net::eopnotsupp());
        };
        if let Some(why) = F::refuse_rss_fields(flow, f) {
            pr_err!("{}: rx-flow-hash: {}\n", dev.name(), why);
            return Err(crate::kernel_ext::net::eopnotsupp());
        }
        let mut st = port.state.lock();
        if st.rss.fields(flow) == f {
            return Ok(());
        }
        let old = st.rss.clone();
        st.rss.set_fields(flow, f);
        let change = RssChange {
            table: false,
            key: false,
            fields: true,
        };
        port.apply_rss_locked(dev, &mut st, &old, change)
    }

    // ntuple rules (see crate::ntuple): rxnfc has no extack, refusals are logged.

    fn rule_count(_dev: &Device, port: ArcBorrow<'_, Port<F>>) -> Result<(u32, u32)> {
        if F::NTUPLE_RULES == 0 {
            return Err(crate::kernel_ext::net::eopnotsupp());
        }
        let st = port.state.lock();
        let n = st.steer.rules.iter().flatten().count();
        Ok((n as u32, F::NTUPLE_RULES as u32))
    }

    fn get_rule(_dev: &Device, port: ArcBorrow<'_, Port<F>>, location: u32) -> Result<FlowSpec> {
        if F::NTUPLE_RULES == 0 {
            return Err(crate::kernel_ext::net::eopnotsupp());
        }
        let st = port.state.lock();
        let rule = st
            .steer
            .rules
            .get(location as usize)
            .copied()
            .flatten()
            .ok_or(ENOENT)?;
        Ok(rule.to_spec(location))
    }

    fn rule_locations(
        _dev: &Device,
        port: ArcBorrow<'_, Port<F>>,
        locs: &mut [u32],
    ) -> Result<u32> {
        if F::NTUPLE_RULES == 0 {
            return Err(crate::kernel_ext::net::eopnotsupp());
        }
        let st = port.state.lock();
        let mut n = 0usize;
        for (loc, r) in st.steer.rules.iter().enumerate() {
            if r.is_some() {
                if let Some(o) = locs.get_mut(n) {
                    *o = loc as u32;
                }
                n = n.saturating_add(1);
            }
        }
        Ok(n as u32)
    }

    fn insert_rule(dev: &Device, port: ArcBorrow<'_, Port<F>>, spec: &FlowSpec) -> Result {
        if F::NTUPLE_RULES == 0 {
            pr_err!("{}: ntuple rules are not supported\n", dev.name());
            return Err(crate::kernel_ext::net::eopnotsupp());
        }
        let mut st = port.state.lock();
        if !st.steer.ntuple {
            pr_err!(
                "{}: ntuple-filters is off (ethtool -K {} ntuple on)\n",
                dev.name(),
                dev.name()
            );
            return Err(crate::kernel_ext::net::eopnotsupp());
        }
        let loc = spec.location as usize;
        if loc >= F::NTUPLE_RULES {
            pr_err!(
                "{}: rule location {} refused: the rule table has locations 0..{}\n",
                dev.name(),
                spec.location,
                F::NTUPLE_RULES
            );
            return Err(EINVAL);
        }
        let rule = Rule::from_spec(spec).map_err(|why| {
            pr_err!("{}: rule refused: {}\n", dev.name(), why);
            EINVAL
        })?;
        match rule.dest {
            Dest::Queue(q) if q >= st.params.count => {
                pr_err!(
                    "{}: rule refused: queue {} is not below the {} channels\n",
                    dev.name(),
                    q,
                    st.params.count
                );
                return Err(EINVAL);
            }
            Dest::Context(c)
                if !st
                    .steer
                    .ctxs
                    .get((c as usize).wrapping_sub(1))
                    .is_some_and(|x| x.is_some()) =>
            {
                pr_err!("{}: rule refused: no RSS context {}\n", dev.name(), c);
                return Err(EINVAL);
            }
            _ => {}
        }
        let old = st.steer.rules.get(loc).copied().flatten();
        if let Err(e) = port.apply_rule_locked(&st, loc, Some(&rule)) {
            pr_err!(
                "{}: programming rule {} failed ({:?})\n",
                dev.name(),
                loc,
                e
            );
            // What was there before comes back (the device dropped it).
            let _ = port.apply_rule_locked(&st, loc, old.as_ref());
            return Err(e);
        }
        if let Some(r) = st.steer.rules.get_mut(loc) {
            *r = Some(rule);
        }
        Ok(())
    }

    fn delete_rule(dev: &Device, port: ArcBorrow<'_, Port<F>>, location: u32) -> Result {
        if F::NTUPLE_RULES == 0 {
            return Err(crate::kernel_ext::net::eopnotsupp());
        }
        let mut st = port.state.lock();
        let loc = location as usize;
        if !st.steer.rules.get(loc).is_some_and(|r| r.is_some()) {
            pr_err!("{}: no rule at location {}\n", dev.name(), location);
            return Err(ENOENT);
        }
        port.apply_rule_locked(&st, loc, None)?;
        if let Some(r) = st.steer.rules.get_mut(loc) {
            *r = None;
        }
        Ok(())
    }

    // Additional RSS contexts: the core keeps ids, tables and keys; the port keeps what it
    // programs (RssConfig per context) so that a reopen programs them again.

    const RSS_CONTEXTS: u32 = F::RSS_CONTEXTS as u32;

    fn create_rxfh_context(
        dev: &Device,
        port: ArcBorrow<'_, Port<F>>,
        ctx: &mut RxfhContext<'_>,
        rxfh: &RxfhSet<'_>,
        extack: &mut ExtAck,
    ) -> Result {
        let id = rxfh.rss_context as usize;
        let mut st = port.state.lock();
        if id == 0
            || !st
                .steer
                .ctxs
                .get(id.wrapping_sub(1))
                .is_some_and(|c| c.is_none())
        {
            extack.set_message(c_str!("no such RSS context slot"));
            return Err(EINVAL);
        }
        // A context starts as the main one is now (key, fields) over every channel.
        let mut c = st.rss.clone();
        c.spread(st.params.count);
        context_settings(dev, &mut c, rxfh, st.params.count, extack)?;
        port.apply_ctx_locked(&st, id, Some(&c), RssChange::ALL)?;
        for (o, &e) in ctx.indir().iter_mut().zip(c.table()) {
            *o = u32::from(e);
        }
        for (o, &b) in ctx.key().iter_mut().zip(c.key()) {
            *o = b;
        }
        ctx.set_hfunc(ethtool::rss_hash::TOP);
        if let Some(slot) = st.steer.ctxs.get_mut(id.wrapping_sub(1)) {
            *slot = Some(c);
        }
        Ok(())
    }

    fn modify_rxfh_context(
        dev: &Device,
        port: ArcBorrow<'_, Port<F>>,
        _ctx: &mut RxfhContext<'_>,
        rxfh: &RxfhSet<'_>,
        extack: &mut ExtAck,
    ) -> Result {
        let id = rxfh.rss_context as usize;
        let mut st = port.state.lock();
        let Some(old) = st.steer.ctxs.get(id.wrapping_sub(1)).cloned().flatten() else {
            extack.set_message(c_str!("no such RSS context"));
            return Err(ENOENT);
        };
        let mut c = old.clone();
        let change = context_settings(dev, &mut c, rxfh, st.params.count, extack)?;
        if let Err(e) = port.apply_ctx_locked(&st, id, Some(&c), change) {
            pr_err!(
                "{}: updating RSS context {} failed ({:?}); restoring it\n",
                dev.name(),
                id,
                e
            );
            let _ = port.apply_ctx_locked(&st, id, Some(&old), change);
            return Err(e);
        }
        if let Some(slot) = st.steer.ctxs.get_mut(id.wrapping_sub(1)) {
            *slot = Some(c);
        }
        Ok(())
    }

    fn remove_rxfh_context(
        dev: &Device,
        port: ArcBorrow<'_, Port<F>>,
        id: u32,
        extack: &mut ExtAck,
    ) -> Result {
        let mut st = port.state.lock();
        let used = st
            .steer
            .rules
            .iter()
            .flatten()
            .any(|r| r.dest == Dest::Context(id));
        if used {
            // As mlx5e (the context's TIRs are in use): the rules go first.
            extack.set_message(c_str!("ntuple rules steer to this RSS context"));
            pr_err!(
                "{}: RSS context {} is in use by ntuple rules: delete them first\n",
                dev.name(),
                id
            );
            return Err(EBUSY);
        }
        let i = (id as usize).wrapping_sub(1);
        if !st.steer.ctxs.get(i).is_some_and(|c| c.is_some()) {
            return Err(ENOENT);
        }
        port.apply_ctx_locked(&st, id as usize, None, RssChange::ALL)?;
        if let Some(slot) = st.steer.ctxs.get_mut(i) {
            *slot = None;
        }
        Ok(())
    }
}

/// Applies what `rxfh` asks of an RSS context to `c` (a table over `channels`, a key,
/// Toeplitz only) and says what changed; a refusal explained through `extack` and the log.
fn context_settings(
    dev: &Device,
    c: &mut RssConfig,
    rxfh: &RxfhSet<'_>,
    channels: u32,
    extack: &mut ExtAck,
) -> Result<RssChange> {
    if rxfh.hfunc != ethtool::rss_hash::NO_CHANGE && rxfh.hfunc != ethtool::rss_hash::TOP {
        extack.set_message(c_str!("rsnic hashes with Toeplitz only"));
        pr_err!(
            "{}: RSS hash function {:#x} refused: rsnic hashes with Toeplitz only\n",
            dev.name(),
            rxfh.hfunc
        );
        return Err(crate::kernel_ext::net::eopnotsupp());
    }
    let mut change = RssChange {
        table: false,
        key: false,
        fields: false,
    };
    if let Some(t) = rxfh.indir {
        if !c.set_table(t, channels) {
            extack.set_message(c_str!(
                "the indirection table has the wrong size or names a queue beyond the channels"
            ));
            return Err(EINVAL);
        }
        change.table = true;
    }
    if let Some(k) = rxfh.key {
        if !c.set_key(k) {
            extack.set_message(c_str!("the RSS hash key is 40 bytes"));
            return Err(EINVAL);
        }
        change.key = true;
    }
    Ok(change)
}
