// SPDX-License-Identifier: GPL-2.0

//! Module load and unload: the one place that wires devices to ports.
//!
//! Devices come from two places. The PCI transport (`pcidev.rs`): the module registers a PCI
//! driver for rsnic's emulated device, and each probe reads what the device is (family,
//! ports) from it, binds its functions and keeps them in the device's driver data until
//! remove. The in-kernel device host (`host/`): it creates the simulated devices the module
//! parameters ask for and offers their functions on the bus. Module parameter `host` chooses:
//! `auto` (default) creates the in-kernel devices only when no PCI device was bound at load,
//! `kernel` always, `pci` never. For each function the driver of its family brings it up
//! (probe), makes its port and registers the netdev, and undoes all of it at unload (or PCI
//! remove). The device wires its ports in pairs (ports 0 and 1 share a cable, 2 and 3, ...).
//! Both families can run at once (`family=mlx5,mana`), each device with its own engine and
//! ports.

use crate::bus::{Function, Kind};
use crate::channel::MAX_CHANNELS;
use crate::family::{mana::Mana, mlx5::Mlx5, Family};
use crate::host::Host;
use crate::kernel_ext::pci::{DeviceId, PciDevice, PciDriver, Registration as PciRegistration};
use crate::kernel_ext::{net::device::Registration, params};
use crate::pcidev::PciTransport;
use crate::port::{Port, PortOps, MAX_MTU, MIN_MTU};
use core::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use kernel::{c_str, fmt, prelude::*, sync::Arc};

/// Most channels by default (as mlx5e: min(online CPUs, this)).
const DEFAULT_MAX_CHANNELS: u32 = 4;

/// The driver bound to one device of family `F`: its functions and ports.
struct Bound<F: Family> {
    /// The functions, brought up, in port order (torn down after the ports are gone).
    funcs: KVec<(Arc<Function>, Arc<F::Func>)>,
    ports: KVec<Registration<PortOps<F>>>,
}

impl<F: Family> Bound<F> {
    /// Probes every function of a device (`funcs`, in port order) and registers its ports.
    fn bind(funcs: &[Arc<Function>], channels: u32) -> Result<Self> {
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
                // The RSS hash of every received packet (ethtool -K rxhash), both families.
                rx_hash: true,
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
        for hw in funcs {
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

/// The driver bound to one device of either family.
enum AnyBound {
    Mlx5(Bound<Mlx5>),
    Mana(Bound<Mana>),
}

impl AnyBound {
    /// Binds the functions `funcs` of a device of `kind`.
    fn bind(kind: Kind, funcs: &[Arc<Function>], channels: u32) -> Result<Self> {
        Ok(match kind {
            Kind::Mlx5 => AnyBound::Mlx5(Bound::bind(funcs, channels)?),
            Kind::Mana => AnyBound::Mana(Bound::bind(funcs, channels)?),
        })
    }

    /// The ports registered.
    fn ports(&self) -> usize {
        match self {
            AnyBound::Mlx5(b) => b.ports.len(),
            AnyBound::Mana(b) => b.ports.len(),
        }
    }
}

/// The family's name, for log lines.
fn family_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Mlx5 => Mlx5::NAME,
        Kind::Mana => Mana::NAME,
    }
}

/// Channels per port: as mlx5e, min(online CPUs, [`DEFAULT_MAX_CHANNELS`]).
fn default_channels() -> u32 {
    params::online_cpus().clamp(1, DEFAULT_MAX_CHANNELS)
}

/// rsnic's emulated PCI device: QEMU's ivshmem-doorbell (Red Hat, Inc. 1af4:1110). The ids
/// are ivshmem's, not rsnic's: the probe refuses a device whose shared memory does not hold
/// an rsnic identity block. (No MODULE_DEVICE_TABLE: an ivshmem device does not make udev
/// load rsnic.)
const PCI_IDS: [DeviceId; 1] = [DeviceId {
    vendor: 0x1af4,
    device: 0x1110,
}];

/// PCI devices bound so far (tells `host=auto` whether one was bound at load).
static PCI_BOUND: AtomicUsize = AtomicUsize::new(0);
/// The next PCI device's number (for names and logs; after the in-kernel host's).
static PCI_NEXT_DEV: AtomicU32 = AtomicU32::new(crate::host::MAX_DEVS);

/// The PCI driver of rsnic's emulated device.
struct RsnicPci;

/// What a PCI probe leaves bound to its device; dropped in field order at remove: the
/// ports and functions' bring-up, the functions, then the PCI device's resources.
struct PciBound {
    bound: AnyBound,
    funcs: KVec<Arc<Function>>,
    xport: Arc<PciTransport>,
}

impl PciDriver for RsnicPci {
    type Data = PciBound;

    fn probe(dev: &PciDevice) -> Result<PciBound> {
        let xport = PciTransport::probe(dev)?;
        let kind = xport.kind();
        let num = PCI_NEXT_DEV.fetch_add(1, Ordering::Relaxed);
        let funcs = PciTransport::functions(&xport, num)?;
        let channels = default_channels();
        let bound = AnyBound::bind(kind, &funcs, channels).inspect_err(|e| {
            dev.err(fmt!(
                "{} device with {} ports: bind failed: {:?}",
                family_name(kind),
                funcs.len(),
                e
            ));
        })?;
        dev.info(fmt!(
            "version {}: PCI device {}, family {}, {} ports, {} channels per port",
            crate::port::DRV_VERSION,
            num,
            family_name(kind),
            bound.ports(),
            channels
        ));
        PCI_BOUND.fetch_add(1, Ordering::Relaxed);
        Ok(PciBound {
            bound,
            funcs,
            xport,
        })
    }

    fn remove(data: PciBound) {
        let PciBound {
            bound,
            funcs,
            xport,
        } = data;
        drop(bound);
        drop(funcs);
        let (lost, timeouts) = (xport.lost(), xport.read_timeouts());
        if lost != 0 || timeouts != 0 {
            xport.pci().err(fmt!(
                "{} register writes lost, {} reads unanswered",
                lost,
                timeouts
            ));
        }
        // The last reference to the transport: the vectors, mappings, regions and the
        // enable go here, before remove returns.
        drop(xport);
    }
}

/// Where devices come from (module parameter `host`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum HostMode {
    /// PCI devices; the in-kernel devices only when no PCI device was bound at load.
    Auto,
    /// The in-kernel devices always (PCI devices are bound too).
    Kernel,
    /// PCI devices only.
    Pci,
}

impl HostMode {
    fn from_param() -> Result<Self> {
        match params::host().as_bytes() {
            b"auto" => Ok(HostMode::Auto),
            b"kernel" => Ok(HostMode::Kernel),
            b"pci" => Ok(HostMode::Pci),
            other => {
                pr_err!(
                    "host={:?}: use auto, kernel or pci\n",
                    core::str::from_utf8(other).unwrap_or("?")
                );
                Err(EINVAL)
            }
        }
    }
}

/// The module: the devices and the driver bound to them.
pub(crate) struct Rsnic {
    // Dropped in this order: the PCI driver unregisters (removing every bound PCI device),
    // then the driver lets go of the in-kernel functions, then those devices go.
    _pci: PciRegistration<RsnicPci>,
    _bound: KVec<AnyBound>,
    _host: Option<Host>,
}

impl kernel::Module for Rsnic {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // The driver's own parameters, checked before any device exists.
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
        let mode = HostMode::from_param()?;
        // Probes the PCI devices present before it returns.
        let pci = PciRegistration::<RsnicPci>::new(c_str!("rsnic"), &PCI_IDS)?;
        let pci_bound = PCI_BOUND.load(Ordering::Relaxed);
        let want_host = match mode {
            HostMode::Auto => pci_bound == 0,
            HostMode::Kernel => true,
            HostMode::Pci => false,
        };
        if !want_host {
            pr_info!(
                "version {}: {} PCI device(s), no simulated devices (host={})\n",
                crate::port::DRV_VERSION,
                pci_bound,
                if mode == HostMode::Pci { "pci" } else { "auto" }
            );
            return Ok(Rsnic {
                _pci: pci,
                _bound: KVec::new(),
                _host: None,
            });
        }
        let host = Host::new()?;
        let channels = default_channels();
        let mut bound = KVec::with_capacity(host.devices().len(), GFP_KERNEL)?;
        for (i, dev) in host.devices().iter().enumerate() {
            bound.push(
                AnyBound::bind(dev.kind(), dev.functions(), channels)?,
                GFP_KERNEL,
            )?;
            pr_info!("device {}: family {}\n", i, family_name(dev.kind()));
        }
        pr_info!(
            "version {}: {} simulated device(s), {} ports each, {} channels per port\n",
            crate::port::DRV_VERSION,
            host.devices().len(),
            params::num_ports(),
            channels
        );
        Ok(Rsnic {
            _pci: pci,
            _bound: bound,
            _host: Some(host),
        })
    }
}
