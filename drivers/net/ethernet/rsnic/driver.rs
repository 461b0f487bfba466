// SPDX-License-Identifier: GPL-2.0

//! Module load and unload: the one place that wires devices to ports.
//!
//! The device host (`host/`) creates the simulated devices the module parameters ask for and
//! offers their functions on the bus; for each function the driver of its family brings it
//! up (probe), makes its port and registers the netdev, and undoes all of it at unload. The
//! device wires its ports in pairs (ports 0 and 1 share a cable, 2 and 3, ...). Both families
//! can run at once (`family=mlx5,mana`), each device with its own engine and ports.

use crate::bus::{Function, Kind};
use crate::channel::MAX_CHANNELS;
use crate::family::{mana::Mana, mlx5::Mlx5, Family};
use crate::host::{Host, SimDevice};
use crate::kernel_ext::{net::device::Registration, params};
use crate::port::{Port, PortOps, MAX_MTU, MIN_MTU};
use kernel::{prelude::*, sync::Arc};

/// Most channels by default (as mlx5e: min(online CPUs, this)).
const DEFAULT_MAX_CHANNELS: u32 = 4;

/// The driver bound to one device of family `F`: its functions and ports.
struct Bound<F: Family> {
    /// The functions, brought up, in port order (torn down after the ports are gone).
    funcs: KVec<(Arc<Function>, Arc<F::Func>)>,
    ports: KVec<Registration<PortOps<F>>>,
}

impl<F: Family> Bound<F> {
    /// Probes every function of `dev` and registers its ports.
    fn bind(dev: &SimDevice, channels: u32) -> Result<Self> {
        let mut b = Bound {
            funcs: KVec::new(),
            ports: KVec::new(),
        };
        let mut config = crate::kernel_ext::net::device::Config {
            tx_queues: MAX_CHANNELS as u32,
            rx_queues: MAX_CHANNELS as u32,
            min_mtu: MIN_MTU,
            max_mtu: MAX_MTU,
            // The data paths build gather lists, checksum and LSO WQEs; the devices execute
            // them and verify received checksums.
            offloads: crate::kernel_ext::net::device::Offloads {
                sg: true,
                tx_csum: true,
                tso: true,
                rx_csum: true,
                // Internal loopback (ethtool -K <dev> loopback on), as ConnectX has.
                loopback: true,
                // ntuple steering rules where the family has them (ConnectX).
                ntuple: F::NTUPLE_RULES > 0,
            },
            // Native XDP (drop, pass, tx, redirect) on every RX queue, frames redirected
            // from other devices (ndo_xdp_xmit), and AF_XDP zero-copy where the family has
            // it.
            xdp_features: {
                use crate::kernel_ext::net::xdp::features::{
                    BASIC, NDO_XMIT, REDIRECT, XSK_ZEROCOPY,
                };
                BASIC | REDIRECT | NDO_XMIT | if F::XSK_ZC { XSK_ZEROCOPY } else { 0 }
            },
            mac: None,
            // mlx5e's 15 s by default: a queue stopped that long without a completion has
            // lost its interrupt or its device (ndo_tx_timeout recovers it). The range was
            // checked at load (`Rsnic::init`).
            watchdog_timeo_ms: params::tx_timeout_ms(),
        };
        // The functions brought up so far, in order (MANA's share their device's channel).
        let mut up = KVec::new();
        for hw in dev.functions().iter() {
            // Probe: bring the function up through the device's control interface.
            let func = F::bring_up_after(hw, &up)?;
            up.push(func.clone(), GFP_KERNEL)?;
            b.funcs.push((hw.clone(), func.clone()), GFP_KERNEL)?;
            config.mac = F::permanent_mac(&func);
            let port = Port::<F>::new(hw.clone(), func.clone(), channels)?;
            let reg = Registration::<PortOps<F>>::register(port, &config, Some(hw.dma()))?;
            // The function's events reach the port now.
            F::func_attach(hw, &func, Some(reg.device()));
            b.ports.push(reg, GFP_KERNEL)?;
        }
        Ok(b)
    }
}

impl<F: Family> Drop for Bound<F> {
    fn drop(&mut self) {
        for (hw, func) in self.funcs.iter() {
            F::func_attach(hw, func, None);
        }
        // Unregister (closing channels), then tear the functions down through the control
        // interface.
        drop(core::mem::take(&mut self.ports));
        for (hw, func) in self.funcs.iter() {
            F::tear_down(hw, func);
        }
    }
}

/// The module: the devices and the driver bound to them.
pub(crate) struct Rsnic {
    // Dropped in this order: the driver lets go of the functions, then the devices go.
    _mlx5: KVec<Bound<Mlx5>>,
    _mana: KVec<Bound<Mana>>,
    _host: Host,
}

impl kernel::Module for Rsnic {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // The driver's own parameter, checked before any device exists.
        let tx_timeout = params::tx_timeout_ms();
        if !params::TX_TIMEOUT_MS.contains(&tx_timeout) {
            pr_err!(
                "tx_timeout_ms={} is out of range {}..={}\n",
                tx_timeout,
                params::TX_TIMEOUT_MS.start(),
                params::TX_TIMEOUT_MS.end()
            );
            return Err(EINVAL);
        }
        let host = Host::new()?;
        let channels = params::online_cpus().clamp(1, DEFAULT_MAX_CHANNELS);
        let (mut mlx5, mut mana) = (KVec::new(), KVec::new());
        for (i, dev) in host.devices().iter().enumerate() {
            match dev.kind() {
                Kind::Mlx5 => mlx5.push(Bound::bind(dev, channels)?, GFP_KERNEL)?,
                Kind::Mana => mana.push(Bound::bind(dev, channels)?, GFP_KERNEL)?,
            }
            let name = match dev.kind() {
                Kind::Mlx5 => Mlx5::NAME,
                Kind::Mana => Mana::NAME,
            };
            pr_info!("device {}: family {}\n", i, name);
        }
        pr_info!(
            "version {}: {} simulated device(s), {} ports each, {} channels per port\n",
            crate::port::DRV_VERSION,
            host.devices().len(),
            params::num_ports(),
            channels
        );
        Ok(Rsnic {
            _mlx5: mlx5,
            _mana: mana,
            _host: host,
        })
    }
}
