// SPDX-License-Identifier: GPL-2.0

//! The simulated NIC: kernel-free, `no_std`, safe Rust.
//!
//! It sees only what a real device sees: register writes, and host memory through
//! [`crate::dp::hw::BusMemory`] by bus address. It raises interrupts through
//! [`crate::dp::hw::InterruptSink`].
