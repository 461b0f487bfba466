// SPDX-License-Identifier: GPL-2.0

//! One Ethernet port of a simulated device: its netdev and ethtool operations.

use crate::ext::net::{
    device::{self, Device, LinkStats64, TxOutcome},
    ethtool::{self, DrvInfo, LinkSettings, Strings},
    skb::{DropReason, SkBuff},
};
use crate::link::Wire;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use kernel::{
    c_str,
    prelude::*,
    str::{CStr, CString},
    sync::{Arc, ArcBorrow},
};

/// Driver version reported by `ethtool -i`.
pub(crate) const DRV_VERSION: &str = "0.1.0";

/// Private flag bit: the multi-packet TX WQE (MPWQE) path.
pub(crate) const PFLAG_TX_MPWQE: u32 = 1 << 0;

/// Smallest and largest MTU a port accepts.
pub(crate) const MIN_MTU: u32 = 68;
pub(crate) const MAX_MTU: u32 = 9600;

/// Reported link speed of the simulated wire, in Mb/s.
const SPEED_MBPS: u32 = 100_000;

/// State of one port, shared by its callbacks.
pub(crate) struct Port {
    wire: Arc<Wire>,
    side: usize,
    bus_info: CString,
    pflags: AtomicU32,
    tx_dropped: AtomicU64,
}

impl Port {
    /// A port on end `side` of `wire`, with the default private flags.
    pub(crate) fn new(wire: Arc<Wire>, side: usize, dev: u32, port: u32) -> Result<Arc<Self>> {
        let bus_info = CString::try_from_fmt(kernel::fmt!("rsnic-sim{}:port{}", dev, port))?;
        Ok(Arc::new(
            Self {
                wire,
                side,
                bus_info,
                pflags: AtomicU32::new(PFLAG_TX_MPWQE),
                tx_dropped: AtomicU64::new(0),
            },
            GFP_KERNEL,
        )?)
    }
}

/// The operations of a port.
pub(crate) struct PortOps;

#[vtable]
impl device::Operations for PortOps {
    type Data = Arc<Port>;

    fn open(_dev: &Device, port: ArcBorrow<'_, Port>) -> Result {
        port.wire.set_admin(port.side, true);
        Ok(())
    }

    fn stop(_dev: &Device, port: ArcBorrow<'_, Port>) -> Result {
        port.wire.set_admin(port.side, false);
        Ok(())
    }

    fn start_xmit(skb: SkBuff, _dev: &Device, port: ArcBorrow<'_, Port>) -> TxOutcome {
        // No queues are set up yet (the data path arrives with the channels): the packet is
        // dropped and counted, as a NIC whose queues are not up would.
        port.tx_dropped.fetch_add(1, Ordering::Relaxed);
        skb.drop_reason(DropReason::DevReady);
        TxOutcome::Ok
    }

    fn get_stats64(_dev: &Device, port: ArcBorrow<'_, Port>, stats: &mut LinkStats64) {
        stats.tx_dropped = port.tx_dropped.load(Ordering::Relaxed);
    }

    fn change_mtu(_dev: &Device, _port: ArcBorrow<'_, Port>, _new_mtu: u32) -> Result {
        // The core has checked MIN_MTU..=MAX_MTU; there are no buffers to resize yet.
        Ok(())
    }
}

/// Names of the counters of `ethtool -S`.
const STATS: &[&CStr] = &[c_str!("tx_queue_dropped")];

#[vtable]
impl ethtool::Operations for PortOps {
    const PRIV_FLAGS: &'static [&'static CStr] = &[c_str!("tx_mpwqe")];

    fn get_drvinfo(_dev: &Device, port: ArcBorrow<'_, Port>, info: &mut DrvInfo<'_>) {
        info.set_driver("rsnic");
        info.set_version(DRV_VERSION);
        info.set_fw_version("sim");
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

    fn set_priv_flags(_dev: &Device, port: ArcBorrow<'_, Port>, flags: u32) -> Result {
        // Stored now; the TX path reads it once channels exist.
        port.pflags.store(flags, Ordering::Relaxed);
        Ok(())
    }

    fn stats_count(_dev: &Device, _port: ArcBorrow<'_, Port>) -> usize {
        STATS.len()
    }

    fn stats_strings(_dev: &Device, _port: ArcBorrow<'_, Port>, out: &mut Strings<'_>) {
        for name in STATS {
            out.push(name);
        }
    }

    fn stats_values(_dev: &Device, port: ArcBorrow<'_, Port>, out: &mut [u64]) {
        if let Some(v) = out.get_mut(0) {
            *v = port.tx_dropped.load(Ordering::Relaxed);
        }
    }
}
