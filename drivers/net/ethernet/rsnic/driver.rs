// SPDX-License-Identifier: GPL-2.0

//! Module load and unload: the simulated devices and their ports.
//!
//! The `family` module parameter chooses each device's family: `family=mana` makes every
//! device a MANA one, `family=mlx5,mana` makes device 0 a ConnectX and device 1 (and any
//! later one) a MANA; the last entry repeats. Both families run at once, each device with
//! its own engine, workqueue and ports.

use crate::engine::{Engine, EngineMmio, MAX_CHANNELS};
use crate::ext::debugfs::{Dir, SeqFile, Show, ShowFile};
use crate::ext::{dma::DmaDevice, net::device::Registration, params, sync::with_bh};
use crate::family::{mana::Mana, mlx5::Mlx5, Family};
use crate::link::Wire;
use crate::port::{Port, PortDevice, PortOps, MAX_MTU, MIN_MTU};
use core::fmt::Write;
use kernel::{c_str, fmt, prelude::*, str::CString, sync::Arc};

/// Most simulated devices one load may create.
const MAX_DEVS: u32 = 8;
/// Most ports per simulated device.
const MAX_PORTS: u32 = 8;
/// Most channels by default (as mlx5e: min(online CPUs, this)).
const DEFAULT_MAX_CHANNELS: u32 = 4;

/// One simulated device of family `F`: its DMA parent, the device model, its cables and its
/// ports.
struct SimNic<F: Family> {
    engine: Arc<Engine<F>>,
    wires: KVec<Arc<Wire>>,
    /// The ports' functions, brought up, in port order (torn down after the ports are gone).
    funcs: KVec<Arc<F::Func>>,
    ports: KVec<Registration<PortOps<F>>>,
    /// The device host's debugfs files (`rsnic/rsnic-sim<N>/port<P>/counters`).
    debugfs: KVec<ShowFile<ModelCounters<F>>>,
    _dma: Arc<DmaDevice>,
}

/// A port's `counters` file in debugfs: the device model's own counts (doorbells, WQEs,
/// modeled PCIe bytes, drops), one `name: value` line each as `ethtool -S` prints them. They
/// are the device host's view, for tests and the bench; the driver shows what the device
/// reports through its control interface.
struct ModelCounters<F: Family> {
    engine: Arc<Engine<F>>,
    port: usize,
}

impl<F: Family> Show for ModelCounters<F> {
    fn show(&self, out: &mut SeqFile<'_>) {
        let c = self.engine.with_model(|m| F::model_counters(m, self.port));
        for (name, get) in F::MODEL_COUNTERS {
            let _ = writeln!(out, "     {}: {}", name, get(&c));
        }
    }
}

impl<F: Family> SimNic<F> {
    fn new(index: u32, num_ports: u32, channels: u32, debugfs: &Arc<Dir>) -> Result<Self> {
        let dma = DmaDevice::new(c_str!("rsnic-sim"), index as i32)?;
        let engine = Engine::<F>::new(index as i32, num_ports as usize)?;
        let mut nic = SimNic {
            engine: engine.clone(),
            wires: KVec::new(),
            funcs: KVec::new(),
            ports: KVec::new(),
            debugfs: KVec::new(),
            _dma: dma.clone(),
        };
        let dir = debugfs.subdir(&CString::try_from_fmt(fmt!("rsnic-sim{}", index))?)?;
        for p in 0..num_ports as usize {
            let file = dir
                .subdir(&CString::try_from_fmt(fmt!("port{}", p))?)?
                .show_file(
                    c_str!("counters"),
                    ModelCounters {
                        engine: engine.clone(),
                        port: p,
                    },
                )?;
            nic.debugfs.push(file, GFP_KERNEL)?;
        }
        let mut config = crate::ext::net::device::Config {
            tx_queues: MAX_CHANNELS as u32,
            rx_queues: MAX_CHANNELS as u32,
            min_mtu: MIN_MTU,
            max_mtu: MAX_MTU,
            // The data paths build gather lists, checksum and LSO WQEs; the devices execute
            // them and verify received checksums.
            offloads: crate::ext::net::device::Offloads {
                sg: true,
                tx_csum: true,
                tso: true,
                rx_csum: true,
                // Internal loopback (ethtool -K <dev> loopback on), as ConnectX has.
                loopback: true,
            },
            // Native XDP (drop, pass, tx, redirect) on every RX queue, frames redirected
            // from other devices (ndo_xdp_xmit), and AF_XDP zero-copy where the family has
            // it.
            xdp_features: {
                use crate::ext::net::xdp::features::{BASIC, NDO_XMIT, REDIRECT, XSK_ZEROCOPY};
                BASIC | REDIRECT | NDO_XMIT | if F::XSK_ZC { XSK_ZEROCOPY } else { 0 }
            },
            mac: None,
        };
        for pair in 0..num_ports / 2 {
            let wire = Wire::new()?;
            nic.wires.push(wire.clone(), GFP_KERNEL)?;
            for side in 0..2 {
                let p = pair * 2 + side as u32;
                // Probe: bring the function up through the device's control interface.
                let func = F::bring_up(&engine, &dma, index, p as usize)?;
                nic.funcs.push(func.clone(), GFP_KERNEL)?;
                config.mac = F::permanent_mac(&func);
                let port = Port::<F>::new(
                    wire.clone(),
                    side,
                    index,
                    p,
                    PortDevice {
                        engine: engine.clone(),
                        dma: dma.clone(),
                        func: func.clone(),
                    },
                    channels,
                )?;
                let reg = Registration::<PortOps<F>>::register(port, &config, Some(&dma))?;
                wire.attach(side, reg.device());
                // The function's events reach the port now: route its async vector, then
                // take whatever was posted before (the EQ raised its vector once and waits
                // for a re-arm).
                F::func_attach(&func, Some(reg.device()));
                engine.set_func_irq(p as usize, Some(func.clone()));
                with_bh(|| F::func_irq(&func, &EngineMmio(&engine)));
                nic.ports.push(reg, GFP_KERNEL)?;
            }
        }
        Ok(nic)
    }
}

impl<F: Family> Drop for SimNic<F> {
    fn drop(&mut self) {
        drop(core::mem::take(&mut self.debugfs));
        // Release the cables' device references first: unregistering waits for them.
        for wire in self.wires.iter() {
            wire.detach_all();
        }
        for (p, func) in self.funcs.iter().enumerate() {
            drop(self.engine.set_func_irq(p, None));
            F::func_attach(func, None);
        }
        // Unregister (closing channels), tear the functions down through the control
        // interface, then stop the device's engine before it goes.
        drop(core::mem::take(&mut self.ports));
        for (p, func) in self.funcs.iter().enumerate() {
            F::tear_down(&self.engine, func, p);
        }
        self.engine.shutdown();
    }
}

/// The family names of the `family` parameter, one per device (the last one repeats).
fn families(param: &[u8], num_devs: u32) -> Result<KVec<&'static str>> {
    let mut names = KVec::new();
    for item in param.split(|&b| b == b',') {
        let name = match item {
            b"mlx5" => Mlx5::NAME,
            b"mana" => Mana::NAME,
            _ => {
                pr_err!(
                    "family: unknown family {:?} (use mlx5, mana, or a comma-separated list)\n",
                    core::str::from_utf8(item).unwrap_or("?")
                );
                return Err(EINVAL);
            }
        };
        names.push(name, GFP_KERNEL)?;
    }
    if names.len() > num_devs as usize {
        pr_err!(
            "family lists {} devices but num_devs={}\n",
            names.len(),
            num_devs
        );
        return Err(EINVAL);
    }
    while names.len() < num_devs as usize {
        let last = names.last().copied().unwrap_or(Mlx5::NAME);
        names.push(last, GFP_KERNEL)?;
    }
    Ok(names)
}

/// The module: every simulated device it created.
pub(crate) struct Rsnic {
    _mlx5: KVec<SimNic<Mlx5>>,
    _mana: KVec<SimNic<Mana>>,
    /// `/sys/kernel/debug/rsnic`, the device host's (removed after the devices' files).
    _debugfs: Arc<Dir>,
}

impl kernel::Module for Rsnic {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let num_devs = params::num_devs();
        let num_ports = params::num_ports();
        if num_devs == 0 || num_devs > MAX_DEVS {
            pr_err!("num_devs={} is out of range 1..={}\n", num_devs, MAX_DEVS);
            return Err(EINVAL);
        }
        if !(2..=MAX_PORTS).contains(&num_ports) || num_ports % 2 != 0 {
            pr_err!(
                "num_ports={} must be even and within 2..={} (ports are wired in pairs)\n",
                num_ports,
                MAX_PORTS
            );
            return Err(EINVAL);
        }
        let fams = families(params::family().as_bytes(), num_devs)?;
        let channels = params::online_cpus().clamp(1, DEFAULT_MAX_CHANNELS);
        let (mut mlx5, mut mana) = (KVec::new(), KVec::new());
        let debugfs = Dir::root(c_str!("rsnic"))?;
        for (i, fam) in fams.iter().enumerate() {
            let i = i as u32;
            if *fam == Mana::NAME {
                mana.push(SimNic::new(i, num_ports, channels, &debugfs)?, GFP_KERNEL)?;
            } else {
                mlx5.push(SimNic::new(i, num_ports, channels, &debugfs)?, GFP_KERNEL)?;
            }
            pr_info!("device {}: family {}\n", i, fam);
        }
        pr_info!(
            "version {}: {} simulated device(s), {} ports each, {} channels per port\n",
            crate::port::DRV_VERSION,
            num_devs,
            num_ports,
            channels
        );
        Ok(Rsnic {
            _mlx5: mlx5,
            _mana: mana,
            _debugfs: debugfs,
        })
    }
}
