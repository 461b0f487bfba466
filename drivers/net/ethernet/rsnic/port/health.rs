// SPDX-License-Identifier: GPL-2.0

//! The port's devlink health reporters, `tx` and `rx`, on its devlink port, as mlx5e's
//! (`devlink health show` lists them).
//!
//! A fault the channels' recovery work finds is reported to the reporter of its queue
//! ([`HealthReport::report`], from the work, holding none of the channel's locks): the
//! devlink core counts the error and, unless the reporter is in error or within its grace
//! period (500 ms, mlx5e's for both), calls the reporter's recover operation with the fault
//! as its context, which recovers as the work did before ([`Fault::recover`]: the SQ or RQ
//! reset in place, the TX watchdog's lost-interrupt check, the reopen of the channels). A
//! recover without context (`devlink health recover` of a reporter in error) asks for the
//! reopen of the port's channels, as mlx5e's `mlx5e_health_recover_channels` reopens them
//! (here through the port's reopen work, which takes RTNL: the recover operation runs under
//! the devlink instance lock and takes neither RTNL nor the port's state lock).
//!
//! `devlink health diagnose` shows each open channel's SQ (`tx`) or RQ (`rx`) as the driver
//! sees it: numbers, producer and consumer counters, ring size, state, the CQ's number and
//! consumer counter. It reads the channel list under its spinlock and each queue under its
//! own lock, never RTNL or the port's state lock (a channel close holds those while it
//! flushes the recovery work, which may be waiting for the devlink lock diagnose holds).
//!
//! Lifetimes: the reporters hold the port, which holds them ([`PortShared::health`]): the
//! driver makes them after the port's netdev is registered ([`Port::health_on`]) and takes
//! them away before it is unregistered ([`Port::health_off`]). A recovery under way keeps
//! them until its report returns.
//!
//! Upstream counterpart: `en/reporter_tx.c`, `en/reporter_rx.c`, `en/health.c`.

use crate::channel::recover::{Fault, QueueState};
use crate::channel::shared::{HealthReport, Reopen};
use crate::channel::Channel;
use crate::family::params::MAX_CHANNELS;
use crate::family::Family;
use crate::kernel_ext::devlink::{self, Fmsg, HealthOps, HealthReporter};
use crate::kernel_ext::net::device::Device;
use crate::kernel_ext::sync::with_bh;
use crate::port::Port;
use kernel::prelude::*;
use kernel::str::{CStr, CString};
use kernel::sync::Arc;
use kernel::{c_str, fmt};

/// The reporters' grace period: mlx5e's (`MLX5_REPORTER_TX_GRACEFUL_PERIOD`,
/// `MLX5E_REPORTER_RX_GRACEFUL_PERIOD`), in ms.
const GRACE_PERIOD_MS: u64 = 500;

/// The `tx` reporter: faults of the SQs (error CQEs, CQEs that break the protocol) and the
/// TX watchdog's timeouts.
pub(crate) struct TxReporter<F: Family> {
    port: Arc<Port<F>>,
}

/// The `rx` reporter: faults of the RQs.
pub(crate) struct RxReporter<F: Family> {
    port: Arc<Port<F>>,
}

impl<F: Family> HealthOps for TxReporter<F> {
    const NAME: &'static CStr = c_str!("tx");
    const HAS_DUMP: bool = true;
    type Context = Fault<F>;

    fn recover(&self, ctx: Option<&Fault<F>>) -> Result {
        recover(&self.port, ctx)
    }

    fn diagnose(&self, m: &mut Fmsg<'_>) -> Result {
        self.port.diagnose(m, false)
    }

    fn dump(&self, m: &mut Fmsg<'_>, ctx: Option<&Fault<F>>) -> Result {
        self.port.dump(m, false, ctx)
    }
}

impl<F: Family> HealthOps for RxReporter<F> {
    const NAME: &'static CStr = c_str!("rx");
    const HAS_DUMP: bool = true;
    type Context = Fault<F>;

    fn recover(&self, ctx: Option<&Fault<F>>) -> Result {
        recover(&self.port, ctx)
    }

    fn diagnose(&self, m: &mut Fmsg<'_>) -> Result {
        self.port.diagnose(m, true)
    }

    fn dump(&self, m: &mut Fmsg<'_>, ctx: Option<&Fault<F>>) -> Result {
        self.port.dump(m, true, ctx)
    }
}

/// The recover operation of both reporters: the fault's recovery, or without one the
/// reopen of the port's channels (asked for; it runs on the port's work under RTNL).
fn recover<F: Family>(port: &Port<F>, ctx: Option<&Fault<F>>) -> Result {
    match ctx {
        Some(f) => f.recover(),
        None => {
            port.shared.request_reopen(0, Reopen::Devlink);
            Ok(())
        }
    }
}

/// A port's reporters (either may be missing if it could not be made).
struct Health<F: Family> {
    tx: Option<HealthReporter<TxReporter<F>>>,
    rx: Option<HealthReporter<RxReporter<F>>>,
}

impl<F: Family> HealthReport<F> for Health<F> {
    fn report(&self, msg: &CStr, fault: &Fault<F>) -> Result {
        match (fault.is_rx(), &self.tx, &self.rx) {
            (false, Some(r), _) => r.report(msg, fault),
            (true, _, Some(r)) => r.report(msg, fault),
            _ => fault.recover(),
        }
    }
}

impl<F: Family> Port<F> {
    /// Makes the port's `tx` and `rx` reporters on its devlink port `dl_port` (once its
    /// netdev is registered). One that cannot be made is logged and left out, as mlx5e
    /// does; the recovery then runs without it.
    pub(crate) fn health_on(self: &Arc<Self>, dl_port: &Arc<devlink::Port>, dev: &Device) {
        let tx =
            HealthReporter::create(dl_port, GRACE_PERIOD_MS, TxReporter { port: self.clone() })
                .inspect_err(|e| pr_warn!("{}: no tx health reporter ({:?})\n", dev.name(), e))
                .ok();
        let rx =
            HealthReporter::create(dl_port, GRACE_PERIOD_MS, RxReporter { port: self.clone() })
                .inspect_err(|e| pr_warn!("{}: no rx health reporter ({:?})\n", dev.name(), e))
                .ok();
        if let Ok(h) = Arc::new(Health { tx, rx }, GFP_KERNEL) {
            let h: Arc<dyn HealthReport<F>> = h;
            *self.shared.health.lock() = Some(h);
        }
    }

    /// Takes the reporters away (before the port's netdev is unregistered): they are
    /// destroyed now, or when a report under way returns.
    pub(crate) fn health_off(&self) {
        let h = self.shared.health.lock().take();
        drop(h);
    }

    /// `devlink health diagnose` of the `tx` (`rx` false) or `rx` reporter: the open
    /// channels' SQs (`SQs`) or RQs (`RQs`), as the driver sees them.
    fn diagnose(&self, m: &mut Fmsg<'_>, rx: bool) -> Result {
        let chans = self.open_chans()?;
        put_queues(m, rx, &chans, false)
    }

    /// `devlink health dump` of the `tx` (`rx` false) or `rx` reporter: the queue of the
    /// fault being reported, or without one every open channel's (`SQs`, `RQs`), as
    /// diagnose shows them and with the state the device reports where the
    /// family can ask (`HW state`: ConnectX's QUERY_SQ / QUERY_RQ).
    fn dump(&self, m: &mut Fmsg<'_>, rx: bool, ctx: Option<&Fault<F>>) -> Result {
        match ctx {
            Some(f) => {
                let mut one = KVec::with_capacity(1, GFP_KERNEL)?;
                one.push(f.ch.clone(), GFP_KERNEL)?;
                put_queues(m, rx, &one, true)
            }
            None => {
                let chans = self.open_chans()?;
                put_queues(m, rx, &chans, true)
            }
        }
    }

    /// The open channels, read under the channel list's spinlock (no RTNL, no state lock).
    fn open_chans(&self) -> Result<KVec<Arc<Channel<F>>>> {
        let mut chans: KVec<Arc<Channel<F>>> = KVec::with_capacity(MAX_CHANNELS, GFP_KERNEL)?;
        with_bh(|| {
            for ch in self.chans.lock().iter() {
                // Within the capacity reserved above: no allocation.
                let _ = chans.push(ch.clone(), GFP_ATOMIC);
            }
        });
        Ok(chans)
    }
}

/// One queue of [`put_queues`]: its channel, its state, the state's name, the device's view.
type QueueRow = (u32, QueueState, CString, Option<&'static str>);

/// Puts the SQs (`rx` false) or RQs of `chans` as an array (`SQs`, `RQs`), with the
/// device's view of each if `hw`.
fn put_queues<F: Family>(
    m: &mut Fmsg<'_>,
    rx: bool,
    chans: &[Arc<Channel<F>>],
    hw: bool,
) -> Result {
    let mut rows: KVec<QueueRow> = KVec::with_capacity(chans.len(), GFP_KERNEL)?;
    for ch in chans.iter() {
        let s = if rx { ch.rx_state() } else { ch.tx_state() };
        if let Some(s) = s {
            let name = state_name(&s)?;
            let dev = if hw { ch.hw_state(!rx) } else { None };
            rows.push((ch.index(), s, name, dev), GFP_KERNEL)?;
        }
    }
    let (arr, qn) = if rx {
        (c_str!("RQs"), c_str!("rqn"))
    } else {
        (c_str!("SQs"), c_str!("sqn"))
    };
    let mut hw_names = KVec::with_capacity(rows.len(), GFP_KERNEL)?;
    for r in rows.iter() {
        hw_names.push(
            match r.3 {
                Some(h) => Some(CString::try_from_fmt(fmt!("{}", h))?),
                None => None,
            },
            GFP_KERNEL,
        )?;
    }
    m.array(arr, |a| {
        for ((ix, s, state, _), dev) in rows.iter().zip(hw_names.iter()) {
            a.item(|o| {
                o.u32(c_str!("channel ix"), *ix);
                if let Some(n) = s.q.qn {
                    o.u32(qn, n);
                }
                if let Some(d) = dev {
                    o.string(c_str!("HW state"), d);
                }
                if !rx {
                    o.bool(c_str!("stopped"), s.stopped);
                }
                o.u32(c_str!("size"), s.q.size)
                    .u32(c_str!("pc"), s.q.pc)
                    .u32(c_str!("cc"), s.q.cc)
                    .string(c_str!("state"), state)
                    .object(c_str!("CQ"), |c| {
                        c.u32(c_str!("cqn"), s.q.cqn).u32(c_str!("ci"), s.q.cq_cc);
                    });
            });
        }
    });
    Ok(())
}

/// A queue's state as diagnose names it: `ok`, or the fault it stopped on and whether its
/// recovery is asked for.
fn state_name(s: &QueueState) -> Result<CString> {
    match (&s.fault, s.recovering) {
        (None, false) => CString::try_from_fmt(fmt!("ok")),
        (None, true) => CString::try_from_fmt(fmt!("recovery pending")),
        (Some(f), r) => CString::try_from_fmt(fmt!(
            "{}{}",
            f.what,
            if r { ", recovery pending" } else { "" }
        )),
    }
}
