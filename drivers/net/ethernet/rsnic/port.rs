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
//!
//! Upstream counterpart: `en_main.c` (the port's state, `mlx5e_open_channels`,
//! `mlx5e_close_channels`, `mlx5e_safe_switch_params`). The rest of the port is spread as
//! mlx5e spreads it: `netdev` (`en_main.c`'s `mlx5e_netdev_ops`), `xmit` (`en_tx.c`,
//! `en/xdp.c`), `ethtool` (`en_ethtool.c`), `steering` (`en/rx_res.c`, `en/rss.c`,
//! `en_fs_ethtool.c`), `xdp` (`mlx5e_xdp_set`, `en/xsk/pool.c`), `work` (the channels'
//! reopen after a fault, the hardware counters' read), `health` (`en/reporter_tx.c`,
//! `en/reporter_rx.c`: the devlink health reporters).

pub(crate) mod ethtool;
mod health;
pub(crate) mod netdev;
mod steering;
mod work;
mod xdp;
mod xmit;

use crate::bus::Function;
use crate::channel::shared::PortShared;
use crate::channel::shared::PortWork;
use crate::channel::{new_tx_slot, new_xdp_slot, Channel};
use crate::family::params::{ChannelParams, PrivFlags, MAX_CHANNELS};
use crate::family::stats::{ChAtomics, ChannelStats, Counters};
use crate::family::Family;
use crate::kernel_ext::net::device::Device;
use crate::kernel_ext::net::xdp::BpfProg;
use crate::kernel_ext::net::xsk::XskPool;
use crate::kernel_ext::sync::with_bh;
use crate::kernel_ext::wq::OwnedQueue;
use crate::port::steering::Steering;
use crate::rss::{RssChange, RssConfig};
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use kernel::prelude::*;
use kernel::str::CString;
use kernel::sync::{Arc, Mutex, SpinLock};
use kernel::{c_str, new_mutex, new_spinlock};

/// Whether received packets may go up `CHECKSUM_COMPLETE` under the private flags `flags`:
/// the family's devices give a sum and its [`Family::NO_CSUM_COMPLETE`] flag is off.
pub(crate) fn csum_complete<F: Family>(flags: PrivFlags<F::PrivFlag>) -> bool {
    F::NO_CSUM_COMPLETE.is_some_and(|f| !flags.has(f))
}

/// Driver version reported by `ethtool -i`.
pub(crate) const DRV_VERSION: &str = "0.2.0";

pub(crate) use crate::family::{DEFAULT_MTU, MIN_MTU};

/// Configuration and live channels, changed under RTNL.
struct PortState<F: Family> {
    params: ChannelParams<F::PrivFlag>,
    /// Channels while the interface is up.
    open: bool,
    /// The attached XDP program (`params.xdp` says whether there is one).
    prog: Option<BpfProg>,
    /// AF_XDP zero-copy pools by queue, DMA-mapped while bound. A channel has XSK queues
    /// for its pool only while the interface is up with a program attached (as mlx5e: a
    /// socket may bind before its program comes, as libxdp does, and the queue's traffic
    /// goes to the stack until then).
    xsk: [Option<XskPool>; MAX_CHANNELS],
    /// RSS: the indirection table, key and hash fields (`ethtool -x/-X`, `-n/-N`).
    rss: RssConfig,
    /// Additional RSS contexts and ntuple rules.
    steer: Steering,
}

/// State of one port, shared by its callbacks.
#[pin_data]
pub(crate) struct Port<F: Family> {
    bus_info: CString,
    /// Most channels (`ethtool -l`'s maximum): [`crate::family::Control::max_channels`].
    max_channels: u32,
    /// The private flags as ethtool's flag word (`ethtool --show-priv-flags`).
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
    /// The hardware counters the device last reported (shown again if a query fails), for
    /// `ethtool -S` and for `ndo_get_stats64`, which may not sleep and so shows what the
    /// last query found ([`Port::read_hw_counters`]).
    #[pin]
    hw_counters: SpinLock<F::HwCounters>,
    /// Final counters of closed channels, per queue.
    #[pin]
    /// (On the heap, one per possible channel: a `ChannelStats` is several hundred bytes.)
    totals: SpinLock<KVec<ChannelStats<F>>>,
}

impl<F: Family> Port<F> {
    /// Most channels the port of function `hw`, brought up as `func`, can have: what its
    /// device allows ([`Family::max_channels`]), within [`MAX_CHANNELS`]. Its netdev has
    /// this many queues.
    pub(crate) fn max_channels_of(hw: &Function, func: &F::Func) -> u32 {
        F::max_channels(hw, func).clamp(1, MAX_CHANNELS as u32)
    }

    /// The port of function `hw`, brought up as `func`.
    #[inline(never)]
    pub(crate) fn new(hw: Arc<Function>, func: Arc<F::Func>, channels: u32) -> Result<Arc<Self>> {
        let pflags = F::default_pflags(&func);
        let coal = F::default_coalesce(&func);
        // As many channels as asked, within what the port can have (its vectors, the
        // device's limits).
        let max_channels = Self::max_channels_of(&hw, &func);
        let channels = channels.clamp(1, max_channels);
        let rss = RssConfig::new(F::rss_table_size(&func), channels, F::RSS_FIELDS);
        // The port's number on its device (a MANA function's vports share its index).
        let port_no = hw.index() + F::port_index(&func);
        let bus_info = hw.bus_info(F::port_index(&func))?;
        let dma = hw.dma().clone();
        // TX slots and totals for every channel the port may have, made here: a change of
        // the channel count allocates none.
        let slots = max_channels as usize;
        let mut txs = KVec::with_capacity(slots, GFP_KERNEL)?;
        let mut xdp_txs = KVec::with_capacity(slots, GFP_KERNEL)?;
        for _ in 0..slots {
            txs.push(new_tx_slot::<F>(), GFP_KERNEL)?;
            xdp_txs.push(new_xdp_slot::<F>()?, GFP_KERNEL)?;
        }
        // Queue recovery of the port's channels (one per port: `rsnic_recover<dev*8+port>`).
        let wq = OwnedQueue::new(
            c_str!("rsnic_recover"),
            (hw.device() as usize * 8 + port_no) as i32,
        )?;
        // The port's work (`rsnic_port<dev*8+port>`): reopens of its channels, reads of the
        // hardware counters; see [`PortWork`].
        let port_wq = OwnedQueue::new(
            c_str!("rsnic_port"),
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
                counters: ChAtomics::default(),
                // The device registers with NETIF_F_RXCSUM and NETIF_F_RXHASH on (driver.rs:
                // offloads).
                rx_csum: AtomicBool::new(true),
                rx_csum_complete: AtomicBool::new(csum_complete::<F>(pflags)),
                rx_hash: AtomicBool::new(true),
                xsk_active: AtomicBool::new(false),
                wq,
                port_work: PortWork::new()?,
                port_wq,
                health: KBox::pin_init(new_mutex!(None, "rsnic::PortShared::health"), GFP_KERNEL)?,
            },
            GFP_KERNEL,
        )?;
        let mut totals = KVec::with_capacity(slots, GFP_KERNEL)?;
        for _ in 0..slots {
            totals.push(ChannelStats::default(), GFP_KERNEL)?;
        }
        let steer = Steering::new::<F>()?;
        let params = ChannelParams {
            count: channels,
            log_sq: F::SQ_RING.default,
            log_rq: F::RQ_RING.default,
            mtu: DEFAULT_MTU,
            pflags,
            xdp: false,
            coal,
            // NETIF_F_HW_VLAN_CTAG_RX is on at registration (both families).
            rx_vlan: true,
        };
        Arc::pin_init(
            pin_init!(Self {
                bus_info,
                max_channels,
                pflags: AtomicU32::new(pflags.ethtool()),
                loopback: AtomicBool::new(false),
                pause: AtomicU32::new(0),
                shared,
                state <- new_mutex!(
                    PortState {
                        params,
                        open: false,
                        prog: None,
                        xsk: [None; MAX_CHANNELS],
                        rss,
                        steer,
                    },
                    "rsnic::Port::state"
                ),
                hw_counters <- new_spinlock!(F::HwCounters::default(), "rsnic::Port::hw_counters"),
                chans <- new_spinlock!(KVec::new(), "rsnic::Port::chans"),
                totals <- new_spinlock!(totals, "rsnic::Port::totals"),
            }),
            GFP_KERNEL,
        )
    }

    /// Asks the device for the port's hardware counters and keeps them; returns what it
    /// keeps (the last values if the query failed: the family logged why). Sleeps.
    fn read_hw_counters(&self) -> F::HwCounters {
        let fresh = F::query_counters(&self.shared.hw, &self.shared.func);
        let mut c = self.hw_counters.lock();
        if let Ok(v) = fresh {
            *c = v;
        }
        *c
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
        p: &ChannelParams<F::PrivFlag>,
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
        for i in p.count..self.max_channels {
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
    fn reconfigure(&self, dev: &Device, f: impl FnOnce(&mut ChannelParams<F::PrivFlag>)) -> Result {
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
        new: ChannelParams<F::PrivFlag>,
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

    /// The live channel of queue `q`, if any.
    fn live_channel(&self, q: u32) -> Option<Arc<Channel<F>>> {
        with_bh(|| self.chans.lock().iter().find(|c| c.index() == q).cloned())
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
        for i in 0..self.max_channels as usize {
            sum.accumulate(&self.queue_stats(i));
        }
        self.finish_sum(&mut sum);
        sum
    }

    /// Adds to a sum of the queues' counters what belongs to the port as a whole.
    fn finish_sum(&self, sum: &mut ChannelStats<F>) {
        sum.ch.accumulate(&self.shared.counters.snapshot());
    }
}
