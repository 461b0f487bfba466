//! rsnic-devd: the device process of rsnic's PCI transport.
//!
//! QEMU's `ivshmem-doorbell` device connects to devd's socket ([`server`]); devd hands it
//! BAR2 (a memfd holding the identity block and the register ring of
//! `rsnic_core::dp::xport`, [`ring`]), its own doorbell eventfd and the guest's MSI-X
//! eventfds. The guest appends register writes and reads to the ring and rings the
//! doorbell; devd applies them in order to a `sim/` device model ([`model`]) that reaches
//! guest RAM (a file QEMU maps as the guest's memory) by bus address, every address checked
//! against the RAM's size, and raises MSI-X vectors by writing the guest's eventfds. The
//! main loop is [`devd::Devd::serve`].
//!
//! The same models can be presented as real-ID PCI functions to QEMU's `vfio-user-pci`
//! instead ([`vfio`]: `--vfio-user DIR`): devd is then a vfio-user server, BAR0 accesses
//! arrive as messages and go straight to the model, guest RAM comes as DMA mappings.
//!
//! All `unsafe` code is in [`sys`].

#![deny(unsafe_code)]
#![deny(missing_docs)]

pub mod devd;
pub mod model;
pub mod ring;
pub mod server;
pub mod sys;
pub mod vfio;

pub use devd::{run, Config, Devd};
