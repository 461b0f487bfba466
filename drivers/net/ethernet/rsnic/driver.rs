// SPDX-License-Identifier: GPL-2.0

//! Module load and unload: the one place that wires devices to ports.
//!
//! Devices come from the PCI bus or from the in-kernel device host. The module registers the
//! PCI driver `rsnic`, whose id table ([`__mod_pci__rsnic_pci_ids_device_table`], also the
//! module's `alias:` lines, so udev loads rsnic for them) names the real functions rsnic
//! drives, the MANA VF (1414:00ba) and the ConnectX functions upstream `mlx5_core` binds
//! (ConnectX-4 and later, PFs and VFs). The family of a function comes from its vendor id; a
//! probe maps it (`bus/pci.rs`), binds it and keeps it in the device's driver data until
//! remove. The in-kernel transport's device host (`bus/inkernel/`) creates the
//! simulated devices the module parameters ask for, only with `host=kernel`; a plain `insmod`
//! binds PCI functions and creates nothing else. For each function the driver of its family
//! brings it up (probe: one port per ConnectX function, one per vport of a MANA function),
//! makes the ports and registers their netdevs, and undoes all of it at unload (or PCI
//! remove). A simulated device wires its ports in pairs (ports 0 and 1 share a cable, 2 and
//! 3, ...). Both families can run at once (`family=mlx5,mana`), each device with its own
//! engine and ports.

use crate::bus::inkernel::Host;
use crate::bus::pci::PciFunction;
use crate::bus::{Function, Kind};
use crate::family::params::MAX_CHANNELS;
use crate::family::{mana::Mana, mlx5::Mlx5, Family};
use crate::kernel_ext::pci::{
    pci_device_table, DeviceId, PciDevice, PciDriver, Registration as PciRegistration,
};
use crate::kernel_ext::{dma::SimDriver, net::device::Registration, params};
use crate::port::netdev::PortOps;
use crate::port::{Port, MIN_MTU};
use core::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use kernel::{c_str, fmt, prelude::*, str::CString, sync::Arc};

/// Most channels by default (as mlx5e: min(online CPUs, this)).
const DEFAULT_MAX_CHANNELS: u32 = 4;

/// The driver bound to one device of family `F`: its functions and ports.
struct Bound<F: Family> {
    /// The ports' functions and control states, brought up, in port order (torn down after
    /// the ports are gone).
    funcs: KVec<(Arc<Function>, Arc<F::Func>)>,
    ports: KVec<Registration<PortOps<F>>>,
    /// The device's devlink instance (`devlink.rs`); its ports are the netdevs'.
    devlink: Option<crate::kernel_ext::devlink::Instance>,
    /// The ports with devlink health reporters (which hold their port: taken away before
    /// the ports are unregistered).
    health: KVec<Arc<Port<F>>>,
}

impl<F: Family> Bound<F> {
    /// Brings every function of a device (`funcs`, in order) up and registers its ports
    /// (one per ConnectX function, one per vport of a MANA function).
    fn bind(funcs: &[Arc<Function>], channels: u32, asic: CString) -> Result<Self> {
        let mut b = Bound {
            funcs: KVec::new(),
            ports: KVec::new(),
            devlink: None,
            health: KVec::new(),
        };
        for hw in funcs {
            // Probe: bring the function up through the device's control interface. Its
            // ports are held in `b` from here on: a failure below tears them down (`Drop`).
            let up = F::bring_up(hw)?;
            if let Err(e) = b.funcs.reserve(up.len(), GFP_KERNEL) {
                for func in up.iter() {
                    F::tear_down(hw, func);
                }
                return Err(e.into());
            }
            for func in up {
                b.funcs.push((hw.clone(), func), GFP_KERNEL)?;
            }
        }
        b.ports.reserve(b.funcs.len(), GFP_KERNEL)?;
        b.health.reserve(b.funcs.len(), GFP_KERNEL)?;
        if let Some((hw, func)) = b.funcs.first() {
            b.devlink = Some(crate::devlink::register::<F>(hw, func, asic)?);
        }
        for (i, (hw, func)) in b.funcs.iter().enumerate() {
            let config = port_config::<F>(hw, func);
            let port = Port::<F>::new(hw.clone(), func.clone(), channels)?;
            // The device learns the port's MTU before the netdev exists (mlx5e_nic_enable's
            // mlx5e_set_dev_port_mtu, whose failure it ignores: the family logged it).
            let _ = F::apply_mtu(hw, func, crate::port::DEFAULT_MTU);
            let dl_port = match &b.devlink {
                Some(dl) => Some(crate::devlink::port(dl, i)?),
                None => None,
            };
            let reg = Registration::<PortOps<F>>::register_with_devlink_port(
                port.clone(),
                &config,
                Some(hw.dma()),
                dl_port.clone(),
            )?;
            // The function's events reach the port now.
            F::func_attach(hw, func, Some(reg.device()));
            b.ports.push(reg, GFP_KERNEL)?;
            // Its devlink health reporters (`tx`, `rx`), once the netdev is there (listed
            // in `b.health` first, so that a failure from here on takes them away).
            if let (Some(dl_port), Some(reg)) = (&dl_port, b.ports.last()) {
                b.health.push(port.clone(), GFP_KERNEL)?;
                port.health_on(dl_port, reg.device());
            }
        }
        Ok(b)
    }
}

/// How the netdev of port `func` (of function `hw`) is registered: with a queue per channel
/// the port may have (as mana's `alloc_etherdev_mq(.., max_num_queues)`; mlx5e allocates its
/// netdev with the profile's maximum).
fn port_config<F: Family>(hw: &Function, func: &F::Func) -> crate::kernel_ext::net::device::Config {
    let queues = Port::<F>::max_channels_of(hw, func);
    crate::kernel_ext::net::device::Config {
        tx_queues: queues,
        rx_queues: queues,
        min_mtu: MIN_MTU,
        max_mtu: F::max_mtu(func),
        // The data paths build gather lists, checksum and LSO WQEs; the devices execute
        // them and verify received checksums.
        offloads: crate::kernel_ext::net::device::Offloads {
            sg: true,
            tx_csum: true,
            tso: true,
            rx_csum: true,
            // Internal loopback (ethtool -K <dev> loopback on), where the device has it
            // (ConnectX; MANA through rsnic's own request, when the device offers it).
            loopback: F::has_loopback(func),
            // ntuple steering rules where the family has them (ConnectX).
            ntuple: F::NTUPLE_RULES > 0,
            // The RSS hash of every received packet (ethtool -K rxhash), both families.
            rx_hash: true,
            // 802.1Q tag insertion and stripping by the device: ConnectX's changeable (the
            // eth segment's insert, the RQs' `vsd`, as mlx5e), MANA's fixed on (as mana).
            vlan: if F::RX_VLAN_TOGGLE {
                crate::kernel_ext::net::device::VlanOffload::Changeable
            } else {
                crate::kernel_ext::net::device::VlanOffload::Fixed
            },
            // VLAN filtering by the device: ConnectX's VLAN flow table, as mlx5e; none on
            // MANA, as mana.
            vlan_filter: F::VLAN_FILTER,
        },
        // Native XDP (drop, pass, tx, redirect) on every RX queue, frames redirected from
        // other devices (ndo_xdp_xmit), and AF_XDP zero-copy where the family has it.
        xdp_features: {
            use crate::kernel_ext::net::xdp::features::{BASIC, NDO_XMIT, REDIRECT, XSK_ZEROCOPY};
            BASIC | REDIRECT | NDO_XMIT | if F::XSK_ZC { XSK_ZEROCOPY } else { 0 }
        },
        mac: F::permanent_mac(func),
        // mlx5e's 15 s by default: a queue stopped that long without a completion has lost
        // its interrupt or its device (ndo_tx_timeout recovers it). The range was checked at
        // load (`Rsnic::init`).
        watchdog_timeo_ms: params::tx_timeout_ms(),
        // Flow control where the device has it (else ethtool's pause requests get
        // EOPNOTSUPP, as from upstream mana).
        pause: F::has_pause(func),
        // A MANA function's vports are told apart by it, as upstream mana's netdevs.
        dev_port: u16::try_from(F::port_index(func)).unwrap_or(u16::MAX),
        // ConnectX filters by the stack's unicast list (mlx5e's IFF_UNICAST_FLT).
        unicast_filter: F::RX_FILTER,
    }
}

impl<F: Family> Drop for Bound<F> {
    fn drop(&mut self) {
        for (hw, func) in self.funcs.iter() {
            F::func_attach(hw, func, None);
        }
        // The health reporters go before their ports (they hold them); a recovery under way
        // keeps them until its report returns, and the unregistration below waits for it.
        for port in self.health.iter() {
            port.health_off();
        }
        drop(core::mem::take(&mut self.health));
        // Unregister (closing channels), then tear the functions down through the control
        // interface.
        drop(core::mem::take(&mut self.ports));
        // The devlink ports went with the netdevs; the instance goes before the functions.
        drop(self.devlink.take());
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
    /// `asic` is the device's `asic.id` in `devlink dev info`.
    fn bind(kind: Kind, funcs: &[Arc<Function>], channels: u32, asic: CString) -> Result<Self> {
        Ok(match kind {
            Kind::Mlx5 => AnyBound::Mlx5(Bound::bind(funcs, channels, asic)?),
            Kind::Mana => AnyBound::Mana(Bound::bind(funcs, channels, asic)?),
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

/// Channels per port: min(online CPUs, [`DEFAULT_MAX_CHANNELS`]), within the port's
/// maximum. Upstream opens one per online CPU up to the maximum (mlx5e: min(its maximum,
/// `MLX5E_MAX_NUM_CHANNELS` / 2); mana: `max_num_queues`, at most the online CPUs); rsnic
/// stops at 4 because its maximum is not cut by the CPUs (the device models run on them).
fn default_channels() -> u32 {
    params::online_cpus().clamp(1, DEFAULT_MAX_CHANNELS)
}

/// Entries of [`__mod_pci__rsnic_pci_ids_device_table`], the terminator included.
const PCI_IDS: usize = 25;

pci_device_table!(
    __mod_pci__rsnic_pci_ids_device_table,
    PCI_IDS,
    [
        // MANA VF (GDMA). Not the PF (00b9): its register set differs.
        DeviceId::new(Kind::VENDOR_MICROSOFT, 0x00ba),
        // ConnectX, as upstream mlx5_core's mlx5_core_pci_table (6.12) from ConnectX-4 on
        // (Connect-IB, 1011/1012, is InfiniBand only): PFs and VFs, one port per function.
        DeviceId::new(Kind::VENDOR_MELLANOX, 0x1013), // ConnectX-4
        DeviceId::new(Kind::VENDOR_MELLANOX, 0x1014), // ConnectX-4 VF
        DeviceId::new(Kind::VENDOR_MELLANOX, 0x1015), // ConnectX-4 Lx
        DeviceId::new(Kind::VENDOR_MELLANOX, 0x1016), // ConnectX-4 Lx VF
        DeviceId::new(Kind::VENDOR_MELLANOX, 0x1017), // ConnectX-5, PCIe 3.0
        DeviceId::new(Kind::VENDOR_MELLANOX, 0x1018), // ConnectX-5 VF
        DeviceId::new(Kind::VENDOR_MELLANOX, 0x1019), // ConnectX-5 Ex
        DeviceId::new(Kind::VENDOR_MELLANOX, 0x101a), // ConnectX-5 Ex VF
        DeviceId::new(Kind::VENDOR_MELLANOX, 0x101b), // ConnectX-6
        DeviceId::new(Kind::VENDOR_MELLANOX, 0x101c), // ConnectX-6 VF
        DeviceId::new(Kind::VENDOR_MELLANOX, 0x101d), // ConnectX-6 Dx
        DeviceId::new(Kind::VENDOR_MELLANOX, 0x101e), // ConnectX family mlx5Gen VF
        DeviceId::new(Kind::VENDOR_MELLANOX, 0x101f), // ConnectX-6 Lx
        DeviceId::new(Kind::VENDOR_MELLANOX, 0x1021), // ConnectX-7
        DeviceId::new(Kind::VENDOR_MELLANOX, 0x1023), // ConnectX-8
        DeviceId::new(Kind::VENDOR_MELLANOX, 0x1025), // ConnectX-9
        DeviceId::new(Kind::VENDOR_MELLANOX, 0x1027), // ConnectX-10
        DeviceId::new(Kind::VENDOR_MELLANOX, 0x2101), // ConnectX-10 NVLink-C2C
        DeviceId::new(Kind::VENDOR_MELLANOX, 0xa2d2), // BlueField ConnectX-5
        DeviceId::new(Kind::VENDOR_MELLANOX, 0xa2d3), // BlueField ConnectX-5 VF
        DeviceId::new(Kind::VENDOR_MELLANOX, 0xa2d6), // BlueField-2 ConnectX-6 Dx
        DeviceId::new(Kind::VENDOR_MELLANOX, 0xa2dc), // BlueField-3 ConnectX-7
        DeviceId::new(Kind::VENDOR_MELLANOX, 0xa2df), // BlueField-4 ConnectX-8
        DeviceId::END,
    ]
);

/// The BAR0 a real function needs at least: MANA's VF registers (0x08, 0x10, 0x18, read
/// before anything else), ConnectX's initialization segment (4 KiB). What lies beyond
/// (MANA's SMC window and doorbell pages, ConnectX's UAR pages) is where the device says;
/// an access outside BAR0 is not made (`bus/pci.rs`).
fn min_bar0(kind: Kind) -> usize {
    match kind {
        Kind::Mana => 0x20,
        Kind::Mlx5 => 0x1000,
    }
}

/// The MSI-X vectors a real function of `kind` asks for (at least, at most). MANA as
/// upstream's `mana_gd_setup_irqs`: one per online CPU (at most 64) and the HWC's, at least
/// 2; the vports share them. ConnectX: the control vector (the async EQ) and one per
/// channel (a port has at most [`MAX_CHANNELS`]; the function's table may hold fewer, and
/// `ethtool -l`'s maximum follows what is given). mlx5_core asks one per online CPU and
/// the control one; rsnic's channels are not bound to CPUs, so it asks for its bound.
fn msix_range(kind: Kind) -> (u32, u32) {
    match kind {
        Kind::Mana => (2, (params::online_cpus().clamp(1, 64) + 1).max(2)),
        Kind::Mlx5 => (2, 1 + MAX_CHANNELS as u32),
    }
}

/// PCI devices bound so far (reported at load).
static PCI_BOUND: AtomicUsize = AtomicUsize::new(0);
/// The next PCI device's number (for names and logs; after the in-kernel host's).
static PCI_NEXT_DEV: AtomicU32 = AtomicU32::new(crate::bus::inkernel::MAX_DEVS);

/// rsnic's PCI driver.
struct RsnicPci;

/// What a PCI probe leaves bound to its device; dropped in field order at remove: the
/// ports and functions' bring-up, the functions, then the PCI device's resources.
struct PciBound {
    bound: AnyBound,
    funcs: KVec<Arc<Function>>,
    pci: Arc<PciFunction>,
}

impl PciDriver for RsnicPci {
    type Data = PciBound;

    fn probe(dev: &PciDevice) -> Result<PciBound> {
        let num = PCI_NEXT_DEV.fetch_add(1, Ordering::Relaxed);
        // The id table has only these vendors' devices.
        let kind = Kind::from_vendor(dev.vendor_id()).ok_or(ENODEV)?;
        let pci = PciFunction::probe(dev, kind, min_bar0(kind), msix_range(kind))?;
        let mut funcs = KVec::new();
        funcs.push(Function::new_direct(pci.clone(), num)?, GFP_KERNEL)?;
        let channels = default_channels();
        let asic = CString::try_from_fmt(fmt!("{:04x}:{:04x}", dev.vendor_id(), dev.device_id()))?;
        let bound = AnyBound::bind(kind, &funcs, channels, asic).inspect_err(|e| {
            dev.err(fmt!(
                "{} device ({:04x}:{:04x}): bind failed: {:?}",
                family_name(kind),
                dev.vendor_id(),
                dev.device_id(),
                e
            ));
        })?;
        let vectors = funcs.iter().map(|f| f.num_vectors()).sum::<usize>();
        dev.info(fmt!(
            "version {}: PCI device {} ({:04x}:{:04x}), family {}, {} ports, {} MSI-X vectors, {} channels per port",
            crate::port::DRV_VERSION,
            num,
            dev.vendor_id(),
            dev.device_id(),
            family_name(kind),
            bound.ports(),
            vectors,
            channels
        ));
        PCI_BOUND.fetch_add(1, Ordering::Relaxed);
        Ok(PciBound { bound, funcs, pci })
    }

    fn remove(data: PciBound) {
        let PciBound { bound, funcs, pci } = data;
        drop(bound);
        drop(funcs);
        let bad = pci.bad_accesses();
        if bad != 0 {
            pci.pci()
                .err(fmt!("{} register accesses outside BAR0 not made", bad));
        }
        // The last reference to the function: the vectors, mapping, regions and the enable
        // go here, before remove returns.
        drop(pci);
    }
}

/// Where devices come from (module parameter `host`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum HostMode {
    /// PCI functions only (the default: a plain insmod creates nothing).
    Pci,
    /// The in-kernel device host's simulated devices too.
    Kernel,
}

impl HostMode {
    fn from_param() -> Result<Self> {
        match params::host().as_bytes() {
            b"pci" => Ok(HostMode::Pci),
            b"kernel" => Ok(HostMode::Kernel),
            other => {
                pr_err!(
                    "host={:?}: use pci (PCI functions only, the default) or kernel (simulated devices as well)\n",
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
    /// Binds the simulated devices' platform devices to a driver named rsnic (what
    /// `devlink dev info` shows as their driver); unregistered after they are gone.
    _sim_driver: Option<SimDriver>,
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
        let pci = PciRegistration::<RsnicPci>::new(
            c_str!("rsnic"),
            &__mod_pci__rsnic_pci_ids_device_table,
        )?;
        let pci_bound = PCI_BOUND.load(Ordering::Relaxed);
        if mode == HostMode::Pci {
            pr_info!(
                "version {}: {} PCI device(s) bound; no simulated devices (host=kernel creates them)\n",
                crate::port::DRV_VERSION,
                pci_bound
            );
            return Ok(Rsnic {
                _pci: pci,
                _bound: KVec::new(),
                _host: None,
                _sim_driver: None,
            });
        }
        let sim_driver = SimDriver::register()?;
        let host = Host::new()?;
        let channels = default_channels();
        let mut bound = KVec::with_capacity(host.devices().len(), GFP_KERNEL)?;
        for (i, dev) in host.devices().iter().enumerate() {
            // The simulated device's model stands for its ASIC.
            let asic = CString::try_from_fmt(fmt!("sim-{}", family_name(dev.kind())))?;
            bound.push(
                AnyBound::bind(dev.kind(), dev.functions(), channels, asic)?,
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
            _sim_driver: Some(sim_driver),
        })
    }
}
