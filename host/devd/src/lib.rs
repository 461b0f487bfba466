//! rsnic-devd: the device process of rsnic's vfio-user transport.
//!
//! devd presents the `sim/` device models as PCI functions with the hardware's IDs and
//! register layouts to QEMU's `vfio-user-pci` ([`vfio`]: `--vfio-user DIR`): a ConnectX VF
//! (15b3:101e) per port, or one MANA VF (1414:00ba) carrying every vport. BAR0 accesses
//! arrive as messages and go straight to the model ([`model`]); guest RAM comes as DMA
//! mappings, every bus address checked against them; MSI-X vectors are raised by writing
//! the eventfds QEMU gave. The command line is [`devd::Cli`].
//!
//! All `unsafe` code is in [`sys`].

#![deny(unsafe_code)]
#![deny(missing_docs)]

pub mod devd;
pub mod model;
pub mod sys;
pub mod vfio;

pub use devd::{Cli, Log};
