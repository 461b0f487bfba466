//! The device model: [`Model`] (either family, built as the in-kernel device host builds it),
//! the register accesses it is given ([`Entry`]) and [`Irqs`] (the vectors a slice raised).

use rsnic_core::hwif::hw::{BusMemory, InterruptSink};
use rsnic_core::sim;

/// A simulated ConnectX with host storage.
pub type Mlx5Model = sim::mlx5::Device<Vec<sim::mlx5::Port>, Vec<sim::mlx5::QueueSet>, Vec<u8>>;
/// A simulated MANA with host storage.
pub type ManaModel = sim::mana::Device<Vec<sim::mana::Port>, Vec<sim::mana::QueueSet>, Vec<u8>>;

/// Most ports a device may have.
pub const MAX_PORTS: u32 = 8;
/// Interrupt vectors per function as the device models number them: a ConnectX model raises
/// `port * MODEL_VECTORS_PER_PORT + intr` (the in-kernel device host's numbering).
pub const MODEL_VECTORS_PER_PORT: u16 = 64;

/// The family of the device devd runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Mellanox ConnectX (mlx5).
    Mlx5,
    /// Microsoft Azure MANA.
    Mana,
}

/// One register access of BAR0, as the model takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// A 32-bit register write.
    Write32 {
        /// Register offset.
        reg: u32,
        /// Value written.
        value: u32,
    },
    /// A 64-bit register write, its bytes in bus order.
    Write64 {
        /// Register offset.
        reg: u32,
        /// The 8 bytes written.
        bytes: [u8; 8],
    },
    /// A 32-bit register read.
    Read32 {
        /// Register offset.
        reg: u32,
    },
}

/// Words of the raised-vector bitmap: every model vector of [`MAX_PORTS`] ports.
const IRQ_WORDS: usize = MAX_PORTS as usize * MODEL_VECTORS_PER_PORT as usize / 64;

/// Model vectors raised during one slice, delivered after it (each at most once).
#[derive(Default)]
pub struct Irqs {
    raised: [u64; IRQ_WORDS],
    /// Vectors raised beyond the bitmap (a model bug: counted, never delivered).
    pub out_of_range: u64,
}

impl InterruptSink for Irqs {
    fn raise(&mut self, vector: u16) {
        let v = usize::from(vector);
        match self.raised.get_mut(v / 64) {
            Some(w) => *w |= 1u64 << (v % 64),
            None => self.out_of_range += 1,
        }
    }
}

impl Irqs {
    /// Calls `f` with every raised model vector, in increasing order, and clears them.
    pub fn take(&mut self, mut f: impl FnMut(u16)) {
        for (w, bits) in self.raised.iter_mut().enumerate() {
            let mut b = core::mem::take(bits);
            while b != 0 {
                f((w * 64) as u16 + b.trailing_zeros() as u16);
                b &= b - 1;
            }
        }
    }
}

/// The permanent MAC of port `port` of ConnectX device `dev` (as the in-kernel host's).
pub fn mlx5_factory_mac(dev: u8, port: usize) -> [u8; 6] {
    [0x02, 0x52, 0x53, 0x00, dev, port as u8 + 1]
}

/// The permanent MAC of port `port` of MANA device `dev` (as the in-kernel host's).
pub fn mana_factory_mac(dev: u8, port: usize) -> [u8; 6] {
    [0x02, 0x4d, 0x41, 0x00, dev, port as u8 + 1]
}

/// A device model of either family.
pub enum Model {
    /// ConnectX.
    Mlx5(Box<Mlx5Model>),
    /// MANA.
    Mana(Box<ManaModel>),
}

impl Model {
    /// A device of `family` with `ports` ports, configured as the in-kernel device host
    /// configures its device `dev` without fault knobs: factory MACs, [`sim::mlx5::Caps::FULL`],
    /// flow control on, a ConnectX's links down (the driver brings them up).
    pub fn new(family: Family, ports: usize, dev: u8) -> Result<Self, String> {
        if ports == 0 || ports > MAX_PORTS as usize {
            return Err(format!("ports {ports} outside 1..={MAX_PORTS}"));
        }
        Ok(match family {
            Family::Mlx5 => {
                use sim::mlx5::{Caps, Device, Port, QueueSet, MAX_QUEUES, SCRATCH_LEN};
                let mut m = Device::with_caps(
                    (0..ports).map(|_| Port::new()).collect(),
                    vec![QueueSet::EMPTY; ports * MAX_QUEUES],
                    vec![0u8; SCRATCH_LEN],
                    Caps::FULL,
                )
                .map_err(|e| format!("ConnectX model: {e:?}"))?;
                for p in 0..ports {
                    let _ = m.set_permanent_mac(p, mlx5_factory_mac(dev, p));
                    let _ = m.set_link(p, false);
                    let _ = m.set_pause(p, true);
                }
                Model::Mlx5(Box::new(m))
            }
            Family::Mana => {
                use sim::mana::{Device, Port, QueueSet, MAX_QUEUES, SCRATCH_LEN};
                let mut m = Device::new(
                    (0..ports).map(|_| Port::new()).collect(),
                    vec![QueueSet::EMPTY; ports * MAX_QUEUES],
                    vec![0u8; SCRATCH_LEN],
                )
                .map_err(|e| format!("MANA model: {e:?}"))?;
                for p in 0..ports {
                    let _ = m.set_permanent_mac(p, mana_factory_mac(dev, p));
                    // A MANA vport's link is always up (the virtual switch).
                    let _ = m.set_pause(p, true);
                }
                Model::Mana(Box::new(m))
            }
        })
    }

    /// Applies one register access; returns a read's answer (0 for writes).
    pub fn apply(&mut self, e: Entry) -> u32 {
        match (self, e) {
            (Model::Mlx5(m), Entry::Write32 { reg, value }) => m.mmio_write32(reg, value),
            (Model::Mana(m), Entry::Write32 { reg, value }) => m.mmio_write32(reg, value),
            (Model::Mlx5(m), Entry::Write64 { reg, bytes }) => m.mmio_write64(reg, bytes),
            (Model::Mana(m), Entry::Write64 { reg, bytes }) => m.mmio_write64(reg, bytes),
            (Model::Mlx5(m), Entry::Read32 { reg }) => return m.mmio_read32(reg),
            (Model::Mana(m), Entry::Read32 { reg }) => return m.mmio_read32(reg),
        }
        0
    }

    /// Runs the device for at most `budget` WQEs at time `now` (monotonic nanoseconds);
    /// returns whether work is left and, for a ConnectX, when a CQ that moderation holds back
    /// wants the device to run again.
    pub fn run(
        &mut self,
        mem: &impl BusMemory,
        irq: &mut impl InterruptSink,
        budget: usize,
        now: u64,
    ) -> (bool, Option<u64>) {
        match self {
            Model::Mlx5(m) => {
                m.set_clock(now);
                let more = m.process_budget(mem, irq, budget).1;
                (more, m.moderation_deadline())
            }
            Model::Mana(m) => (m.process_budget(mem, irq, budget).1, None),
        }
    }

    /// Appends port `port`'s counters as text (`sim::counters`' format) to `out`.
    pub fn counters_text(&self, port: usize, out: &mut String) {
        let _ = match self {
            Model::Mlx5(m) => {
                sim::counters::mlx5_text(out, &m.counters(port).copied().unwrap_or_default())
            }
            Model::Mana(m) => {
                sim::counters::mana_text(out, &m.counters(port).copied().unwrap_or_default())
            }
        };
    }

    /// The ConnectX model, if it is one (tests drive its control path directly).
    pub fn mlx5(&mut self) -> Option<&mut Mlx5Model> {
        match self {
            Model::Mlx5(m) => Some(m),
            Model::Mana(_) => None,
        }
    }

    /// The MANA model, if it is one.
    pub fn mana(&mut self) -> Option<&mut ManaModel> {
        match self {
            Model::Mana(m) => Some(m),
            Model::Mlx5(_) => None,
        }
    }
}
