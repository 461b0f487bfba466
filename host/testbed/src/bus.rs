//! The register bus and the test bed around the simulated mlx5 device.
//!
//! * [`RegisterBus`]: the driver's view of BAR0. It implements [`Mmio`] (every write goes
//!   straight to the device model's register decoder, which latches it; nothing is executed
//!   until the test bed steps the device) and [`Barriers`] (compiler fences: host memory is
//!   coherent and single threaded here, so only compiler reordering matters).
//! * [`Testbed`]: owns the DMA arena ([`HostMemory`]) and the device (shared with every
//!   [`RegisterBus`] through `Rc<RefCell<..>>`), steps the device's engine and collects the
//!   interrupts it raises.
//!
//! Typical use by a driver-side test:
//!
//! ```
//! use rsnic_testbed::bus::Testbed;
//! let mut tb = Testbed::new(); // 2 ports, wired 0 <-> 1
//! let bus = tb.bus();          // give this to the driver as its Mmio + Barriers
//! let ring = tb.mem.alloc(4096); // driver DMA memory (HostBuf: Coherent)
//! // ... create queues with tb.device().create_cq(..) etc., post WQEs, ring through `bus` ...
//! tb.step();                   // the device runs until it has no work
//! let irqs = tb.take_irqs();   // MSI-X vectors raised, in order
//! # let _ = (bus, ring, irqs);
//! ```

use std::cell::{RefCell, RefMut};
use std::rc::Rc;
use std::sync::atomic::{compiler_fence, Ordering};

use rsnic_core::hwif::hw::{Barriers, InterruptSink, Mmio};
use rsnic_core::sim::mlx5::{Caps, Device, Port, PortCounters, QueueSet, MAX_QUEUES, SCRATCH_LEN};

use crate::mem::HostMemory;

/// The mlx5 device model with host storage.
pub type HostMlx5 = Device<Vec<Port>, Vec<QueueSet>, Vec<u8>>;

/// The device shared between the test bed and its register buses.
pub type SharedMlx5 = Rc<RefCell<HostMlx5>>;

/// A device with `ports` ports (1..=64) and full-size scratch (64 KiB LSO).
pub fn new_mlx5(ports: usize) -> HostMlx5 {
    new_mlx5_with_caps(ports, Caps::FULL)
}

/// [`new_mlx5`] with the capabilities `caps`.
pub fn new_mlx5_with_caps(ports: usize, caps: Caps) -> HostMlx5 {
    let queues = vec![QueueSet::EMPTY; ports * MAX_QUEUES];
    let ports: Vec<Port> = (0..ports).map(|_| Port::new()).collect();
    Device::with_caps(ports, queues, vec![0u8; SCRATCH_LEN], caps).expect("valid device")
}

/// BAR0 of the simulated device as the driver sees it.
#[derive(Clone)]
pub struct RegisterBus {
    dev: SharedMlx5,
}

impl RegisterBus {
    /// A bus in front of `dev`.
    pub fn new(dev: SharedMlx5) -> Self {
        Self { dev }
    }
}

impl Mmio for RegisterBus {
    fn write64(&self, offset: u32, bytes: [u8; 8]) {
        self.dev.borrow_mut().mmio_write64(offset, bytes);
    }

    fn write32(&self, offset: u32, value: u32) {
        self.dev.borrow_mut().mmio_write32(offset, value);
    }

    fn read32(&self, offset: u32) -> u32 {
        self.dev.borrow_mut().mmio_read32(offset)
    }
}

impl Barriers for RegisterBus {
    fn dma_wmb(&self) {
        compiler_fence(Ordering::SeqCst);
    }

    fn dma_rmb(&self) {
        compiler_fence(Ordering::SeqCst);
    }

    fn wmb(&self) {
        compiler_fence(Ordering::SeqCst);
    }
}

/// Interrupts raised by the device, in order.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct IrqLog {
    /// MSI-X vectors raised.
    pub raised: Vec<u16>,
}

impl InterruptSink for IrqLog {
    fn raise(&mut self, vector: u16) {
        self.raised.push(vector);
    }
}

/// DMA memory + simulated mlx5 device + interrupt log.
pub struct Testbed {
    /// The DMA arena shared by the driver side (HostBuf) and the device (BusMemory).
    pub mem: HostMemory,
    dev: SharedMlx5,
    irqs: IrqLog,
}

impl Default for Testbed {
    fn default() -> Self {
        Self::new()
    }
}

impl Testbed {
    /// Two ports wired back to back.
    pub fn new() -> Self {
        Self::with_ports(2)
    }

    /// `ports` ports, wired 0↔1, 2↔3, …
    pub fn with_ports(ports: usize) -> Self {
        Self::with_caps(ports, Caps::FULL)
    }

    /// `ports` ports with the capabilities `caps`.
    pub fn with_caps(ports: usize, caps: Caps) -> Self {
        Self {
            mem: HostMemory::new(),
            dev: Rc::new(RefCell::new(new_mlx5_with_caps(ports, caps))),
            irqs: IrqLog::default(),
        }
    }

    /// A register bus for the driver (cheap to clone; all share this device).
    pub fn bus(&self) -> RegisterBus {
        RegisterBus::new(self.dev.clone())
    }

    /// The shared device handle.
    pub fn shared(&self) -> SharedMlx5 {
        self.dev.clone()
    }

    /// Mutable access to the device: control-path commands, counters. Do not hold it across
    /// register writes through a [`RegisterBus`] (that would be a double borrow).
    pub fn device(&self) -> RefMut<'_, HostMlx5> {
        self.dev.borrow_mut()
    }

    /// Runs the device until it has no work. Returns the number of WQEs it executed.
    pub fn step(&mut self) -> usize {
        self.dev.borrow_mut().process(&self.mem, &mut self.irqs)
    }

    /// Runs the device for at most `budget` WQEs. Returns (WQEs executed, work left).
    pub fn step_budget(&mut self, budget: usize) -> (usize, bool) {
        self.dev
            .borrow_mut()
            .process_budget(&self.mem, &mut self.irqs, budget)
    }

    /// Interrupts raised since the last call, in order.
    pub fn take_irqs(&mut self) -> Vec<u16> {
        std::mem::take(&mut self.irqs.raised)
    }

    /// A copy of one port's counters.
    pub fn counters(&self, port: usize) -> PortCounters {
        self.dev
            .borrow()
            .counters(port)
            .copied()
            .unwrap_or_default()
    }

    /// The VLAN list port `port`'s driver wrote into its vport context.
    pub fn vport_vlans(&self, port: usize) -> Vec<u16> {
        let (l, n) = self.dev.borrow().vport_vlans(port);
        l[..n.min(l.len())].to_vec()
    }

    /// Counters summed over the device.
    pub fn totals(&self) -> PortCounters {
        self.dev.borrow().totals()
    }
}
