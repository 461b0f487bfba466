// SPDX-License-Identifier: GPL-2.0

//! rsnic's abstraction layer: what would be upstream `kernel` crate code.
//!
//! The 6.12 `kernel` crate has no network-device abstractions, and an out-of-tree module
//! cannot add modules to it, so rsnic compiles this layer into its own crate (the crate root
//! declares it with a `#[path]`). All of rsnic's `unsafe` lives here, each block argued with a
//! `// SAFETY:` comment; the driver under `drivers/` uses only the safe API.
//!
//! * [`bindings`] — generated at build time from `rust/bindings/rsnic_bindings.h`.
//! * [`debugfs`] — read-only debugfs files whose contents Rust code writes.
//! * [`devlink`] — a devlink instance per device, its info, its ports, their health reporters.
//! * [`dma`] — a DMA-capable parent device, coherent buffers, streaming mappings, and the
//!   simulated device's view of host memory.
//! * [`net`] — net_device registration and operations, ethtool operations, `SkBuff`.
//! * [`sync`] — memory barriers for device-shared memory, bottom-half guard, a completion.
//! * [`wq`] — a workqueue of one's own, flushed and destroyed by its owner.
//! * [`timer`] — a one-shot high-resolution timer that hands its owner to a handler, and the
//!   monotonic clock.
//! * [`pci`] — a PCI driver registration, and what its probe uses of a device: enabling,
//!   regions, DMA mask, BARs mapped as registers or shared memory, MSI-X, threaded IRQs.
//! * [`params`] — the module parameters (declared in C: Rust modules gained parameters only
//!   after 6.12).

pub mod bindings;
pub mod debugfs;
pub mod devlink;
pub mod dma;
pub mod net;
pub mod params;
pub mod pci;
pub mod sync;
pub mod timer;
pub mod wq;
