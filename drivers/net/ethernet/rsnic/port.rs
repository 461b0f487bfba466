// SPDX-License-Identifier: GPL-2.0

//! One Ethernet port of a simulated device: its netdev and ethtool operations, its channels.
//!
//! Channels exist while the interface is up: `ndo_open` creates them, `ndo_stop` tears them
//! down. A change of their parameters (MTU, `tx_mpwqe`) on a running interface closes and
//! reopens them under RTNL, as mlx5e's channel switch does; packets the device had not sent
//! by then are dropped and counted in `tx_queue_dropped`.

use crate::channel::{new_tx_slot, Channel, ChannelParams, ChannelStats, PortShared};
use crate::engine::{Engine, MAX_CHANNELS};
use crate::ext::{
    dma::DmaDevice,
    net::{
        device::{self, Device, LinkStats64, QueueStats, TxOutcome},
        ethtool::{self, Channels, DrvInfo, ExtAck, LinkSettings, Rings, Strings},
        skb::SkBuff,
    },
    sync::with_bh,
};
use crate::link::Wire;
use crate::stats;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use kernel::{
    c_str, new_mutex, new_spinlock,
    prelude::*,
    str::{CStr, CString},
    sync::{Arc, ArcBorrow, Mutex, SpinLock},
};

/// Driver version reported by `ethtool -i`.
pub(crate) const DRV_VERSION: &str = "0.2.0";

/// Private flag bit: the multi-packet TX WQE (MPWQE) path.
pub(crate) const PFLAG_TX_MPWQE: u32 = 1 << 0;

/// Smallest and largest MTU a port accepts.
pub(crate) const MIN_MTU: u32 = 68;
pub(crate) const MAX_MTU: u32 = 9600;

/// Ring sizes (log2): SQ in WQEBBs, RQ in WQEs. The SQ must hold the stop room of a full
/// MPWQE session plus a largest WQE (60 WQEBBs), so at least 64.
const DEFAULT_LOG_SQ: u8 = 10;
const DEFAULT_LOG_RQ: u8 = 9;
const MIN_LOG_SQ: u8 = 6;
const MAX_LOG_SQ: u8 = 13;
const MIN_LOG_RQ: u8 = 6;
const MAX_LOG_RQ: u8 = 13;

/// Reported link speed of the simulated wire, in Mb/s.
const SPEED_MBPS: u32 = 100_000;

/// Configuration and live channels, changed under RTNL.
struct PortState {
    params: ChannelParams,
    /// Channels while the interface is up.
    open: bool,
}

/// State of one port, shared by its callbacks.
#[pin_data]
pub(crate) struct Port {
    wire: Arc<Wire>,
    side: usize,
    bus_info: CString,
    pflags: AtomicU32,
    shared: Arc<PortShared>,
    #[pin]
    state: Mutex<PortState>,
    /// Live channels (for counters, read from any context).
    #[pin]
    chans: SpinLock<KVec<Arc<Channel>>>,
    /// Final counters of closed channels, per queue.
    #[pin]
    totals: SpinLock<[ChannelStats; MAX_CHANNELS]>,
}

impl Port {
    /// Port `port` of device `dev_index`, on end `side` of `wire`.
    pub(crate) fn new(
        wire: Arc<Wire>,
        side: usize,
        dev_index: u32,
        port: u32,
        engine: Arc<Engine>,
        dma: Arc<DmaDevice>,
        channels: u32,
    ) -> Result<Arc<Self>> {
        let bus_info = CString::try_from_fmt(kernel::fmt!("rsnic-sim{}:port{}", dev_index, port))?;
        let mut txs = KVec::with_capacity(MAX_CHANNELS, GFP_KERNEL)?;
        for _ in 0..MAX_CHANNELS {
            txs.push(new_tx_slot()?, GFP_KERNEL)?;
        }
        let shared = Arc::new(
            PortShared {
                engine,
                dma,
                port: port as usize,
                txs,
                dropped_closed: AtomicU64::new(0),
            },
            GFP_KERNEL,
        )?;
        let params = ChannelParams {
            count: channels.clamp(1, MAX_CHANNELS as u32),
            log_sq: DEFAULT_LOG_SQ,
            log_rq: DEFAULT_LOG_RQ,
            mtu: 1500,
            mpwqe: true,
        };
        Arc::pin_init(
            pin_init!(Self {
                wire,
                side,
                bus_info,
                pflags: AtomicU32::new(PFLAG_TX_MPWQE),
                shared,
                state <- new_mutex!(PortState { params, open: false }, "rsnic::Port::state"),
                chans <- new_spinlock!(KVec::new(), "rsnic::Port::chans"),
                totals <- new_spinlock!([ChannelStats::default(); MAX_CHANNELS], "rsnic::Port::totals"),
            }),
            GFP_KERNEL,
        )
    }

    /// Number of channels configured.
    fn channel_count(&self) -> u32 {
        self.state.lock().params.count
    }

    /// Opens `p.count` channels and starts their TX queues.
    fn open_channels(&self, dev: &Device, p: &ChannelParams) -> Result {
        dev.set_real_num_queues(p.count, p.count)?;
        let mut chans = KVec::with_capacity(p.count as usize, GFP_KERNEL)?;
        let mut rqns = KVec::with_capacity(p.count as usize, GFP_KERNEL)?;
        for i in 0..p.count {
            match Channel::open(dev, &self.shared, i, p) {
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
        let port = self.shared.port;
        self.shared
            .engine
            .with_model(|m| m.set_rss(port, &rqns))
            .map_err(|_| EINVAL)?;
        for ch in chans.iter() {
            ch.activate();
        }
        // Wake, not just start: after a reopen under traffic the qdisc holds packets and
        // must be rescheduled, or they wait for TCP's retransmit timer.
        for i in 0..p.count {
            if let Some(txq) = dev.tx_queue(i) {
                txq.wake();
            }
        }
        with_bh(|| *self.chans.lock() = chans);
        Ok(())
    }

    /// Stops interrupts and NAPI (nothing may wake a TX queue after that), then the TX
    /// queues, then closes every channel, keeping their counters.
    fn close_channels(&self, dev: &Device) {
        let chans = with_bh(|| core::mem::take(&mut *self.chans.lock()));
        for ch in chans.iter() {
            ch.quiesce();
        }
        dev.tx_disable();
        let port = self.shared.port;
        self.shared.engine.with_model(|m| {
            let _ = m.set_rss(port, &[]);
        });
        for ch in chans.into_iter() {
            let i = ch.index();
            self.add_totals(i, ch.close());
        }
    }

    fn add_totals(&self, index: u32, s: ChannelStats) {
        with_bh(|| {
            if let Some(t) = self.totals.lock().get_mut(index as usize) {
                stats::accumulate(t, &s);
            }
        });
    }

    /// Applies new channel parameters: stores them, and reopens the channels if the
    /// interface is up.
    fn reconfigure(&self, dev: &Device, f: impl FnOnce(&mut ChannelParams)) -> Result {
        let mut st = self.state.lock();
        let old = st.params;
        let mut new = old;
        f(&mut new);
        if new == old {
            return Ok(());
        }
        if st.open {
            self.close_channels(dev);
            if let Err(e) = self.open_channels(dev, &new) {
                // Back to what worked.
                pr_err!(
                    "{}: reopening channels failed ({:?}); restoring\n",
                    dev.name(),
                    e
                );
                self.open_channels(dev, &old)?;
                return Err(e);
            }
        }
        st.params = new;
        Ok(())
    }

    /// Per-queue counters: closed channels' totals plus live channels.
    fn queue_stats(&self) -> [ChannelStats; MAX_CHANNELS] {
        with_bh(|| {
            let mut q = *self.totals.lock();
            for ch in self.chans.lock().iter() {
                let s = ch.stats();
                if let Some(t) = q.get_mut(ch.index() as usize) {
                    stats::accumulate(t, &s);
                }
            }
            q
        })
    }

    /// Device totals: every queue, plus what no queue took.
    fn sum_stats(&self) -> ChannelStats {
        let mut sum = ChannelStats::default();
        for s in self.queue_stats().iter() {
            stats::accumulate(&mut sum, s);
        }
        sum.tx_dropped = sum
            .tx_dropped
            .wrapping_add(self.shared.dropped_closed.load(Ordering::Relaxed));
        sum
    }
}

/// The operations of a port.
pub(crate) struct PortOps;

#[vtable]
impl device::Operations for PortOps {
    type Data = Arc<Port>;

    fn open(dev: &Device, port: ArcBorrow<'_, Port>) -> Result {
        let mut st = port.state.lock();
        let params = st.params;
        port.open_channels(dev, &params)?;
        st.open = true;
        let p = port.shared.port;
        port.shared.engine.with_model(|m| {
            let _ = m.set_link(p, true);
        });
        port.wire.set_admin(port.side, true);
        Ok(())
    }

    fn stop(dev: &Device, port: ArcBorrow<'_, Port>) -> Result {
        let mut st = port.state.lock();
        port.wire.set_admin(port.side, false);
        let p = port.shared.port;
        port.shared.engine.with_model(|m| {
            let _ = m.set_link(p, false);
        });
        if st.open {
            port.close_channels(dev);
            st.open = false;
        }
        Ok(())
    }

    fn start_xmit(skb: SkBuff, dev: &Device, port: ArcBorrow<'_, Port>) -> TxOutcome {
        match port.shared.xmit(dev, skb) {
            Ok(()) => TxOutcome::Ok,
            Err(skb) => TxOutcome::Busy(skb),
        }
    }

    fn get_stats64(_dev: &Device, port: ArcBorrow<'_, Port>, s: &mut LinkStats64) {
        let sum = port.sum_stats();
        s.tx_packets = sum.tx.packets;
        s.tx_bytes = sum.tx.bytes;
        s.tx_dropped = sum.tx.dropped + sum.tx_dropped;
        s.rx_packets = sum.rx.packets;
        s.rx_bytes = sum.rx.bytes;
        s.rx_dropped = sum.rx_dropped;
        s.rx_errors = sum.rx.wqe_err;
        s.tx_errors = sum.tx.cqe_err;
    }

    fn change_mtu(dev: &Device, port: ArcBorrow<'_, Port>, new_mtu: u32) -> Result {
        port.reconfigure(dev, |p| p.mtu = new_mtu)
    }

    fn queue_stats(_dev: &Device, port: ArcBorrow<'_, Port>, index: u32) -> QueueStats {
        port.queue_stats()
            .get(index as usize)
            .map(to_queue_stats)
            .unwrap_or_default()
    }

    fn base_stats(_dev: &Device, port: ArcBorrow<'_, Port>) -> QueueStats {
        // Queues beyond the live ones (closed by a channel-count change) are the base.
        let n = port.channel_count() as usize;
        let mut base = ChannelStats::default();
        for s in port.queue_stats().iter().skip(n) {
            stats::accumulate(&mut base, s);
        }
        to_queue_stats(&base)
    }
}

fn to_queue_stats(s: &ChannelStats) -> QueueStats {
    QueueStats {
        rx_packets: s.rx.packets,
        rx_bytes: s.rx.bytes,
        rx_alloc_fail: s.rx.buff_alloc_err,
        tx_packets: s.tx.packets,
        tx_bytes: s.tx.bytes,
        tx_stop: s.tx.stopped,
        tx_wake: s.tx.wake,
    }
}

#[vtable]
impl ethtool::Operations for PortOps {
    const PRIV_FLAGS: &'static [&'static CStr] = &[c_str!("tx_mpwqe")];

    fn get_drvinfo(_dev: &Device, port: ArcBorrow<'_, Port>, info: &mut DrvInfo<'_>) {
        info.set_driver("rsnic");
        info.set_version(DRV_VERSION);
        info.set_fw_version("sim-mlx5");
        if let Ok(bus) = port.bus_info.to_str() {
            info.set_bus_info(bus);
        }
    }

    fn get_link_ksettings(
        _dev: &Device,
        _port: ArcBorrow<'_, Port>,
        ks: &mut LinkSettings<'_>,
    ) -> Result {
        ks.set_speed(SPEED_MBPS);
        ks.set_full_duplex(true);
        ks.set_port_other();
        Ok(())
    }

    fn get_priv_flags(_dev: &Device, port: ArcBorrow<'_, Port>) -> u32 {
        port.pflags.load(Ordering::Relaxed)
    }

    fn set_priv_flags(dev: &Device, port: ArcBorrow<'_, Port>, flags: u32) -> Result {
        port.reconfigure(dev, |p| p.mpwqe = flags & PFLAG_TX_MPWQE != 0)?;
        port.pflags.store(flags, Ordering::Relaxed);
        Ok(())
    }

    fn get_channels(_dev: &Device, port: ArcBorrow<'_, Port>) -> Channels {
        Channels {
            max_combined: MAX_CHANNELS as u32,
            combined: port.channel_count(),
        }
    }

    fn set_channels(dev: &Device, port: ArcBorrow<'_, Port>, combined: u32) -> Result {
        if combined == 0 || combined as usize > MAX_CHANNELS {
            return Err(EINVAL);
        }
        port.reconfigure(dev, |p| p.count = combined)
    }

    fn get_ringparam(_dev: &Device, port: ArcBorrow<'_, Port>) -> Rings {
        let p = port.state.lock().params;
        Rings {
            rx_max: 1 << MAX_LOG_RQ,
            tx_max: 1 << MAX_LOG_SQ,
            rx: 1 << p.log_rq,
            tx: 1 << p.log_sq,
        }
    }

    fn set_ringparam(
        dev: &Device,
        port: ArcBorrow<'_, Port>,
        rx: u32,
        tx: u32,
        extack: &mut ExtAck,
    ) -> Result {
        if rx < 1 << MIN_LOG_RQ {
            extack.set_message(c_str!("RX ring size must be at least 64"));
            return Err(EINVAL);
        }
        if tx < 1 << MIN_LOG_SQ {
            extack.set_message(c_str!("TX ring size must be at least 64"));
            return Err(EINVAL);
        }
        // Rounded up to a power of two, as mlx5e does.
        let log = |n: u32| (32 - (n - 1).leading_zeros()) as u8;
        let (log_rq, log_sq) = (log(rx), log(tx));
        if log_rq > MAX_LOG_RQ || log_sq > MAX_LOG_SQ {
            extack.set_message(c_str!("ring size above the maximum"));
            return Err(EINVAL);
        }
        port.reconfigure(dev, |p| {
            p.log_rq = log_rq;
            p.log_sq = log_sq;
        })
    }

    fn stats_count(_dev: &Device, port: ArcBorrow<'_, Port>) -> usize {
        let n = port.channel_count() as usize;
        stats::GLOBAL.len()
            + stats::DEVICE.len()
            + n * (stats::TXQ.len() + stats::RXQ.len() + stats::CH.len())
    }

    fn stats_strings(_dev: &Device, port: ArcBorrow<'_, Port>, out: &mut Strings<'_>) {
        for (name, _) in stats::GLOBAL {
            out.push_fmt(format_args!("{}", name));
        }
        for (name, _) in stats::DEVICE {
            out.push_fmt(format_args!("{}", name));
        }
        let n = port.channel_count();
        for i in 0..n {
            for (name, _) in stats::TXQ {
                out.push_fmt(format_args!("tx{}_{}", i, name));
            }
        }
        for i in 0..n {
            for (name, _) in stats::RXQ {
                out.push_fmt(format_args!("rx{}_{}", i, name));
            }
        }
        for i in 0..n {
            for (name, _) in stats::CH {
                out.push_fmt(format_args!("ch{}_{}", i, name));
            }
        }
    }

    fn stats_values(_dev: &Device, port: ArcBorrow<'_, Port>, out: &mut [u64]) {
        let n = port.channel_count() as usize;
        let q = port.queue_stats();
        let sum = port.sum_stats();
        let p = port.shared.port;
        let dev = port
            .shared
            .engine
            .with_model(|m| m.counters(p).copied().unwrap_or_default());
        let mut it = out.iter_mut();
        let mut put = |v: u64| {
            if let Some(o) = it.next() {
                *o = v;
            }
        };
        stats::GLOBAL.iter().for_each(|(_, f)| put(f(&sum)));
        stats::DEVICE.iter().for_each(|(_, f)| put(f(&dev)));
        for table in [stats::TXQ, stats::RXQ, stats::CH] {
            for s in q.iter().take(n) {
                table.iter().for_each(|(_, f)| put(f(s)));
            }
        }
    }
}
