// SPDX-License-Identifier: GPL-2.0

//! The simulated NIC: kernel-free, `no_std`, safe Rust.
//!
//! It sees only what a real device sees: register writes, and host memory through
//! [`crate::hwif::hw::BusMemory`] by bus address. It raises interrupts through
//! [`crate::hwif::hw::InterruptSink`]. It never holds driver state or a reference into driver
//! memory, and it validates everything it reads.
//!
//! * [`counters`]: the models' per-port counters as text, what every device host shows.
//! * [`mana`]: a MANA (GDMA) device (Documentation/networking/device_drivers/ethernet/
//!   rsnic-hardware.rst, part D; "spec D.2" and the like in the models' comments).
//! * [`mlx5`]: a ConnectX-like device (rsnic-hardware.rst, parts A–C), with the ConnectX
//!   command interface and event queues of the 6.12 mlx5 headers.
//! * [`pcie`]: the PCIe link accounting that every model keeps (rsnic-datapath.rst, "How
//!   figures are measured").
//! * [`pkt`]: what a NIC does to packets in hardware (parsing, checksums, segmentation, RSS).
//! * [`wire`]: the wire between two ports and its 802.3x flow control (PAUSE frames),
//!   shared by both models.

/// Declares a context struct and its `EMPTY` constant (the value of an unused slot) from
/// one list, so that each field is written once, with its type and its empty value:
/// `vis name: Type = empty,`; then `vis const EMPTY;` says who sees the constant.
macro_rules! with_empty {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $($(#[$fmeta:meta])* $fvis:vis $field:ident: $ty:ty = $empty:expr,)*
        }
        $(#[$emeta:meta])*
        $evis:vis const EMPTY;
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $($(#[$fmeta])* $fvis $field: $ty,)*
        }

        impl $name {
            $(#[$emeta])*
            $evis const EMPTY: Self = Self {
                $($field: $empty,)*
            };
        }
    };
}

pub mod counters;
pub mod fault;
pub mod mana;
pub mod mlx5;
pub mod pcie;
pub mod pkt;
pub mod wire;

/// Why a control-path request of a device host or of a model's own command handling failed
/// (both models' `CmdError`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmdError {
    /// No such port.
    BadPort,
    /// A parameter is out of range or misaligned.
    BadParam,
    /// The port's table for this kind of object is full.
    NoResources,
    /// No such queue (or a queue of another port).
    NoSuchQueue,
    /// The queue is still used (a CQ by an SQ or RQ, an RQ by an RQT, an EQ by a CQ).
    Busy,
}

/// Runs a device to the end: `step(budget)` runs it once with `budget` ([`usize::MAX`]) and
/// returns (work done, whether work is left). Returns the work done over all steps; both
/// models' `process` is their `process_budget` run this way.
pub fn drain(mut step: impl FnMut(usize) -> (usize, bool)) -> usize {
    let mut n = 0usize;
    loop {
        let (done, more) = step(usize::MAX);
        n = n.saturating_add(done);
        if !more {
            return n;
        }
    }
}
