// SPDX-License-Identifier: GPL-2.0

//! Module load and unload: the simulated devices and their ports.

use crate::ext::{net::device::Registration, params};
use crate::link::Wire;
use crate::port::{Port, PortOps, MAX_MTU, MIN_MTU};
use kernel::{prelude::*, sync::Arc};

/// Most simulated devices one load may create.
const MAX_DEVS: u32 = 8;
/// Most ports per simulated device.
const MAX_PORTS: u32 = 8;

/// One simulated device: its cables and its registered ports.
struct SimNic {
    wires: KVec<Arc<Wire>>,
    ports: KVec<Registration<PortOps>>,
}

impl SimNic {
    fn new(index: u32, num_ports: u32) -> Result<Self> {
        let mut nic = SimNic {
            wires: KVec::new(),
            ports: KVec::new(),
        };
        let config = crate::ext::net::device::Config {
            tx_queues: 1,
            rx_queues: 1,
            min_mtu: MIN_MTU,
            max_mtu: MAX_MTU,
        };
        for pair in 0..num_ports / 2 {
            let wire = Wire::new()?;
            nic.wires.push(wire.clone(), GFP_KERNEL)?;
            for side in 0..2 {
                let port = Port::new(wire.clone(), side, index, pair * 2 + side as u32)?;
                let reg = Registration::<PortOps>::register(port, &config)?;
                wire.attach(side, reg.device());
                nic.ports.push(reg, GFP_KERNEL)?;
            }
        }
        Ok(nic)
    }
}

impl Drop for SimNic {
    fn drop(&mut self) {
        // Release the cables' device references first: unregistering waits for them.
        for wire in self.wires.iter() {
            wire.detach_all();
        }
        // `ports` is dropped after this, unregistering every port.
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
        let mut nics = KVec::new();
        for i in 0..num_devs {
            nics.push(SimNic::new(i, num_ports)?, GFP_KERNEL)?;
        }
        pr_info!(
            "version {}: {} simulated device(s), {} ports each\n",
            crate::port::DRV_VERSION,
            num_devs,
            num_ports
        );
        Ok(Rsnic { _nics: nics })
    }
}
