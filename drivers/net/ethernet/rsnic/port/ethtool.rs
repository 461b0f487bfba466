// SPDX-License-Identifier: GPL-2.0

//! The port's ethtool operations: driver info, link, private flags, channels, rings,
//! pause, coalescing, the `ethtool -S` counters, RSS (`-x/-X`, `-n/-N rx-flow-hash`, RSS
//! contexts) and ntuple rules.
//!
//! Upstream counterpart: `en_ethtool.c` (and `en_fs_ethtool.c` for the ntuple rules).

use crate::channel::dim::dim_default;
use crate::family::params::{Coalesce, Moderation, PrivFlag, PrivFlags};
use crate::family::stats::{ChannelStats, Scope};
use crate::family::Family;
use crate::kernel_ext::net::device::Device;
use crate::kernel_ext::net::ethtool;
use crate::kernel_ext::net::ethtool::{
    Channels, DrvInfo, ExtAck, FlowSpec, LinkSettings, PauseParam, PauseStats, Rings, RxfhContext,
    RxfhGet, RxfhSet, Strings,
};
use crate::ntuple::{Dest, Rule};
use crate::port::netdev::PortOps;
use crate::port::steering::{context_settings, toeplitz_only};
use crate::port::{Port, DRV_VERSION};
use crate::rss::{Fields, Flow, RssChange, KEY_LEN};
use core::sync::atomic::Ordering;
use kernel::c_str;
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::ArcBorrow;

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

impl<F: Family> Port<F> {
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
}

#[vtable]
impl<F: Family> ethtool::Operations for PortOps<F> {
    const PRIV_FLAGS: &'static [&'static CStr] = <F::PrivFlag as PrivFlag>::NAMES;

    fn get_drvinfo(_dev: &Device, port: ArcBorrow<'_, Port<F>>, info: &mut DrvInfo<'_>) {
        info.set_driver("rsnic");
        info.set_version(DRV_VERSION);
        info.set_fw_version(F::FW_VERSION);
        if let Ok(bus) = port.bus_info.to_str() {
            info.set_bus_info(bus);
        }
    }

    fn get_link_ksettings(
        dev: &Device,
        port: ArcBorrow<'_, Port<F>>,
        ks: &mut LinkSettings<'_>,
    ) -> Result {
        F::link_settings(&port.shared.func, dev.carrier_ok(), ks)
    }

    // Why the link is down, for the families that can say (ConnectX); asked of the device
    // only while the carrier is off, as mlx5e (with the carrier on there is nothing to say).
    const HAS_GET_LINK_EXT_STATE: bool = F::LINK_EXT_STATE;

    fn get_link_ext_state(
        dev: &Device,
        port: ArcBorrow<'_, Port<F>>,
    ) -> Option<ethtool::LinkExtState> {
        if dev.carrier_ok() {
            return None;
        }
        F::link_down_reason(&port.shared.func)
    }

    const HAS_SET_LINK_KSETTINGS: bool = F::LINK_SET;

    fn set_link_ksettings(
        dev: &Device,
        port: ArcBorrow<'_, Port<F>>,
        req: &ethtool::LinkRequest<'_>,
    ) -> Result {
        F::set_link_settings(&port.shared.func, dev, req)
    }

    fn get_priv_flags(_dev: &Device, port: ArcBorrow<'_, Port<F>>) -> u32 {
        port.pflags.load(Ordering::Relaxed)
    }

    fn set_priv_flags(dev: &Device, port: ArcBorrow<'_, Port<F>>, flags: u32) -> Result {
        // (ethtool's set_priv_flags has no extack: the reason goes to the kernel log, as
        // mlx5e's "Failed setting private flags" does.)
        let flags = PrivFlags::from_ethtool(flags);
        if let Some(why) = F::refuse_pflags(&port.shared.func, flags) {
            pr_err!("{}: {}\n", dev.name(), why);
            return Err(crate::kernel_ext::net::eopnotsupp());
        }
        // The flag the data path reads as it goes (mlx5e flips its RQs' state bit) is not
        // a channel parameter: it reopens nothing.
        let live = F::NO_CSUM_COMPLETE.map_or(0, |f| f.bit());
        port.reconfigure(dev, |p| {
            p.pflags = PrivFlags::from_ethtool(flags.ethtool() & !live)
        })?;
        port.shared
            .rx_csum_complete
            .store(crate::port::csum_complete::<F>(flags), Ordering::Relaxed);
        port.pflags.store(flags.ethtool(), Ordering::Relaxed);
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

    // The standard counter groups, for the families whose device keeps them.
    const HAS_GET_ETH_MAC_STATS: bool = F::MAC_STATS;
    const HAS_GET_ETH_CTRL_STATS: bool = F::MAC_STATS;
    const HAS_GET_RMON_STATS: bool = F::MAC_STATS;
    const RMON_RANGES: ethtool::RmonRanges = F::RMON_RANGES;

    // Asked of the device every time, as mlx5e does; a failure was logged by the family,
    // with the command: nothing is reported then.
    fn get_eth_mac_stats(_dev: &Device, port: ArcBorrow<'_, Port<F>>) -> Option<ethtool::MacStats> {
        F::query_mac_stats(&port.shared.func).ok().map(|(m, _)| m)
    }

    fn get_eth_ctrl_stats(
        _dev: &Device,
        port: ArcBorrow<'_, Port<F>>,
    ) -> Option<ethtool::CtrlStats> {
        F::query_mac_stats(&port.shared.func).ok().map(|(_, c)| c)
    }

    fn get_rmon_stats(_dev: &Device, port: ArcBorrow<'_, Port<F>>) -> Option<ethtool::RmonStats> {
        F::query_rmon_stats(&port.shared.func).ok()
    }

    const HAS_GET_ETH_PHY_STATS: bool = F::MAC_STATS;

    fn get_eth_phy_stats(_dev: &Device, port: ArcBorrow<'_, Port<F>>) -> Option<u64> {
        F::query_phy_stats(&port.shared.func).ok()
    }

    // Forward error correction, for the families that offer it (ConnectX): absent for the
    // others (ethtool answers EOPNOTSUPP). Asked of the device every time, as mlx5e does.
    const HAS_GET_FECPARAM: bool = F::FEC;
    const HAS_SET_FECPARAM: bool = F::FEC;
    const HAS_GET_FEC_STATS: bool = F::FEC;

    fn get_fecparam(_dev: &Device, port: ArcBorrow<'_, Port<F>>) -> Result<ethtool::FecParam> {
        F::query_fec(&port.shared.func)
    }

    fn set_fecparam(dev: &Device, port: ArcBorrow<'_, Port<F>>, fec: u32) -> Result {
        F::set_fec(&port.shared.func, dev, fec)
    }

    fn get_fec_stats(_dev: &Device, port: ArcBorrow<'_, Port<F>>) -> Option<ethtool::FecStats> {
        // A failure was logged by the family, with the command: nothing is reported.
        F::query_fec_stats(&port.shared.func).ok().flatten()
    }

    // The cable module (`ethtool -m`), for the families that read it (ConnectX); absent for
    // the others. Read from the device every time, as mlx5e does.
    const HAS_GET_MODULE_INFO: bool = F::MODULE;
    const HAS_GET_MODULE_EEPROM: bool = F::MODULE;
    const HAS_GET_MODULE_EEPROM_BY_PAGE: bool = F::MODULE;

    fn get_module_info(_dev: &Device, port: ArcBorrow<'_, Port<F>>) -> Result<ethtool::ModuleInfo> {
        F::module_info(&port.shared.func)
    }

    fn get_module_eeprom(
        _dev: &Device,
        port: ArcBorrow<'_, Port<F>>,
        offset: u32,
        buf: &mut [u8],
    ) -> Result {
        F::module_eeprom(&port.shared.func, offset, buf)
    }

    fn get_module_eeprom_by_page(
        _dev: &Device,
        port: ArcBorrow<'_, Port<F>>,
        page: &ethtool::ModulePage,
        buf: &mut [u8],
        extack: &mut ethtool::ExtAck,
    ) -> Result<usize> {
        F::module_page(&port.shared.func, page, buf, extack)
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
        let queue_rows: usize = QUEUE_SCOPES
            .iter()
            .map(|(_, scope)| rows::<F>(*scope))
            .sum();
        rows::<F>(Scope::Global) + F::HW.len() + n * queue_rows
    }

    fn stats_strings(_dev: &Device, port: ArcBorrow<'_, Port<F>>, out: &mut Strings<'_>) {
        ChannelStats::<F>::for_each_row(Scope::Global, |r| {
            out.push_fmt(format_args!("{}", r.name));
        });
        for (name, _) in F::HW {
            out.push_fmt(format_args!("{}", name));
        }
        let n = port.channel_count();
        let sep = F::QUEUE_INFIX;
        for (dir, scope) in QUEUE_SCOPES {
            for i in 0..n {
                ChannelStats::<F>::for_each_row(scope, |r| {
                    out.push_fmt(format_args!("{}{}{}_{}", dir, sep, i, r.name));
                });
            }
        }
    }

    fn stats_values(_dev: &Device, port: ArcBorrow<'_, Port<F>>, out: &mut [u64]) {
        let n = port.channel_count() as usize;
        // Asked of the device on every read (a command; this context may sleep), as
        // mlx5e's stats update does; a failed query shows the last values.
        let hw = port.read_hw_counters();
        let mut put = |at: usize, v: u64| {
            if let Some(o) = out.get_mut(at) {
                *o = v;
            }
        };
        // Each queue is read once, and the totals are the sum of the very values shown per
        // queue: a packet that arrives during the read counts in both or in neither, so the
        // per-queue rows of one `ethtool -S` add up to its totals.
        let global = rows::<F>(Scope::Global);
        // Where each queue scope's rows start: n queues' worth of rows each, after the
        // totals and the hardware counters.
        let lens = QUEUE_SCOPES.map(|(_, scope)| rows::<F>(scope));
        let mut starts = [0usize; 3];
        let mut next = global + F::HW.len();
        for (start, len) in starts.iter_mut().zip(lens) {
            *start = next;
            next += n * len;
        }
        let mut sum = ChannelStats::<F>::default();
        for i in 0..port.max_channels as usize {
            let s = port.queue_stats(i);
            if i < n {
                for (k, (_, scope)) in QUEUE_SCOPES.into_iter().enumerate() {
                    let mut at = starts[k] + i * lens[k];
                    ChannelStats::<F>::for_each_row(scope, |r| {
                        put(at, (r.get)(&s));
                        at += 1;
                    });
                }
            }
            sum.accumulate(&s);
        }
        port.finish_sum(&mut sum);
        let mut at = 0;
        ChannelStats::<F>::for_each_row(Scope::Global, |r| {
            put(at, (r.get)(&sum));
            at += 1;
        });
        for (k, (_, f)) in F::HW.iter().enumerate() {
            put(global + k, f(&hw));
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
        toeplitz_only(dev, rxfh, extack)?;
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

/// The per-queue and per-channel scopes of `ethtool -S`, in order, with their row prefix
/// (`tx<N>_`, `rx<N>_`, `ch<N>_`, with the family's infix).
const QUEUE_SCOPES: [(&str, Scope); 3] =
    [("tx", Scope::Txq), ("rx", Scope::Rxq), ("ch", Scope::Ch)];

/// How many rows of `scope` family `F` shows.
fn rows<F: Family>(scope: Scope) -> usize {
    let mut n = 0;
    ChannelStats::<F>::for_each_row(scope, |_| n += 1);
    n
}
