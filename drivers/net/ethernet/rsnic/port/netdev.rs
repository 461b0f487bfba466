// SPDX-License-Identifier: GPL-2.0

//! The port's netdev operations (`ndo_open`, `ndo_stop`, `ndo_start_xmit`, MTU, features,
//! XDP and AF_XDP set-up, stats64 and the netdev queue stats).
//!
//! Upstream counterpart: `en_main.c` (`mlx5e_netdev_ops`).

use crate::channel::shared::PortWorkTarget;
use crate::family::params::{max_xdp_mtu, xsk_geometry};
use crate::family::stats::ChannelStats;
use crate::family::{Family, Summary};
use crate::hwif::xsk;
use crate::kernel_ext::net::device;
use crate::kernel_ext::net::device::{
    Device, Features, LinkStats64, MacChange, QueueStats, RxMode, TxOutcome,
};
use crate::kernel_ext::net::ethtool::ExtAck;
use crate::kernel_ext::net::queue::XmitCtx;
use crate::kernel_ext::net::skb::SkBuff;
use crate::kernel_ext::net::xdp::{BpfProg, XdpFrames};
use crate::kernel_ext::net::xsk::XskPool;
use crate::kernel_ext::sync::with_bh;
use crate::port::Port;
use core::marker::PhantomData;
use core::sync::atomic::Ordering;
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow};
use kernel::types::ARef;

impl<F: Family> Port<F> {
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

    /// `ndo_tx_timeout` for queue `q` (watchdog timer, every xmit lock held): the channel
    /// queues its recovery. Under the channels' lock, so no reference outlives it here.
    fn tx_timeout(&self, q: u32) {
        with_bh(|| {
            if let Some(ch) = self.chans.lock().iter().find(|c| c.index() == q) {
                ch.tx_timeout();
            }
        });
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
        let target: Arc<dyn PortWorkTarget> = Arc::<Port<F>>::from(port);
        *port.shared.port_work.target.lock() = Some((target, ARef::from(dev)));
        if !F::CARRIER_FROM_EVENTS {
            // As upstream mana: the carrier is on while the interface is up.
            dev.carrier_on();
        }
        Ok(())
    }

    fn stop(dev: &Device, port: ArcBorrow<'_, Port<F>>) -> Result {
        // No reopen from now on; one waiting for RTNL finds nothing to do.
        drop(port.shared.port_work.target.lock().take());
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
        // The device's own counters as its last read found them (this may not sleep), and
        // a new read asked for: `ip -s link` twice shows the second one's.
        let d = F::link_stats(&port.hw_counters.lock());
        port.shared.request_counters();
        s.multicast = sum.multicast;
        s.rx_length_errors = d.rx_length_errors;
        s.rx_crc_errors = d.rx_crc_errors;
        s.rx_missed_errors = d.rx_missed_errors;
        s.rx_errors = sum
            .rx_errors
            .wrapping_add(d.rx_length_errors)
            .wrapping_add(d.rx_crc_errors);
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
        if port.state.lock().params.xdp && new_mtu > max_xdp_mtu() {
            pr_err!(
                "{}: MTU {} too large with an XDP program attached (at most {})\n",
                dev.name(),
                new_mtu,
                max_xdp_mtu()
            );
            return Err(EINVAL);
        }
        // The device first (mlx5e's preactivate mlx5e_set_dev_port_mtu), then the channels;
        // a failed reconfiguration gives the device the old MTU back.
        let old = dev.mtu();
        F::apply_mtu(&port.shared.hw, &port.shared.func, new_mtu)?;
        port.reconfigure(dev, |p| p.mtu = new_mtu).inspect_err(|_| {
            let _ = F::apply_mtu(&port.shared.hw, &port.shared.func, old);
        })
    }

    fn set_rx_mode(_dev: &Device, port: ArcBorrow<'_, Port<F>>, mode: &RxMode) {
        F::set_rx_mode(&port.shared.func, mode);
    }

    fn vlan_rx_add_vid(_dev: &Device, port: ArcBorrow<'_, Port<F>>, vid: u16) -> Result {
        F::vlan_rx_vid(&port.shared.func, vid, true)
    }

    fn vlan_rx_kill_vid(_dev: &Device, port: ArcBorrow<'_, Port<F>>, vid: u16) -> Result {
        F::vlan_rx_vid(&port.shared.func, vid, false)
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
        if F::VLAN_FILTER {
            F::set_vlan_filter(&port.shared.func, f.vlan_filter)?;
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
        if index >= port.max_channels {
            return QueueStats::default();
        }
        to_queue_stats(&port.queue_stats(index as usize))
    }

    fn base_stats(_dev: &Device, port: ArcBorrow<'_, Port<F>>) -> QueueStats {
        // Queues beyond the live ones (closed by a channel-count change) are the base.
        let n = port.channel_count() as usize;
        let mut base = ChannelStats::<F>::default();
        for i in n..port.max_channels as usize {
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
