// SPDX-License-Identifier: GPL-2.0

//! Module load and unload: the simulated devices and their ports.

use crate::engine::{Engine, MAX_CHANNELS};
use crate::ext::{dma::DmaDevice, net::device::Registration, params};
use crate::link::Wire;
use crate::port::{Port, PortOps, MAX_MTU, MIN_MTU};
use kernel::{c_str, prelude::*, sync::Arc};

/// Most simulated devices one load may create.
const MAX_DEVS: u32 = 8;
/// Most ports per simulated device.
const MAX_PORTS: u32 = 8;
/// Most channels by default (as mlx5e: min(online CPUs, this)).
const DEFAULT_MAX_CHANNELS: u32 = 4;

/// One simulated device: its DMA parent, the device model, its cables and its ports.
struct SimNic {
    engine: Arc<Engine>,
    wires: KVec<Arc<Wire>>,
    ports: KVec<Registration<PortOps>>,
    _dma: Arc<DmaDevice>,
}

impl SimNic {
    fn new(index: u32, num_ports: u32, channels: u32) -> Result<Self> {
        let dma = DmaDevice::new(c_str!("rsnic-sim"), index as i32)?;
        let engine = Engine::new(index as i32, num_ports as usize)?;
        let mut nic = SimNic {
            engine: engine.clone(),
            wires: KVec::new(),
            ports: KVec::new(),
            _dma: dma.clone(),
        };
        let config = crate::ext::net::device::Config {
            tx_queues: MAX_CHANNELS as u32,
            rx_queues: MAX_CHANNELS as u32,
            min_mtu: MIN_MTU,
            max_mtu: MAX_MTU,
            // The data path builds gather lists, checksum and LSO WQEs; the device executes
            // them and verifies received checksums.
            offloads: crate::ext::net::device::Offloads {
                sg: true,
                tx_csum: true,
                tso: true,
                rx_csum: true,
            },
        };
        for pair in 0..num_ports / 2 {
            let wire = Wire::new()?;
            nic.wires.push(wire.clone(), GFP_KERNEL)?;
            for side in 0..2 {
                let p = pair * 2 + side as u32;
                let port = Port::new(
                    wire.clone(),
                    side,
                    index,
                    p,
                    engine.clone(),
                    dma.clone(),
                    channels,
                )?;
                let reg = Registration::<PortOps>::register(port, &config, Some(&dma))?;
                wire.attach(side, reg.device());
                nic.ports.push(reg, GFP_KERNEL)?;
            }
        }
        // Ports start administratively down: no link until both ends are up.
        engine.with_model(|m| {
            for p in 0..num_ports as usize {
                let _ = m.set_link(p, false);
            }
        });
        Ok(nic)
    }
}

impl Drop for SimNic {
    fn drop(&mut self) {
        // Release the cables' device references first: unregistering waits for them.
        for wire in self.wires.iter() {
            wire.detach_all();
        }
        // Unregister (closing channels), then stop the device's engine before it goes.
        drop(core::mem::take(&mut self.ports));
        self.engine.shutdown();
    }
}

/// The module: every simulated device it created.
pub(crate) struct Rsnic {
    _nics: KVec<SimNic>,
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
        let channels = params::online_cpus().clamp(1, DEFAULT_MAX_CHANNELS);
        let mut nics = KVec::new();
        for i in 0..num_devs {
            nics.push(SimNic::new(i, num_ports, channels)?, GFP_KERNEL)?;
        }
        pr_info!(
            "version {}: {} simulated device(s), {} ports each, {} channels per port\n",
            crate::port::DRV_VERSION,
            num_devs,
            num_ports,
            channels
        );
        Ok(Rsnic { _nics: nics })
    }
}
