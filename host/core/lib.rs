// SPDX-License-Identifier: GPL-2.0

//! rsnic's kernel-free code, built for the host.
//!
//! The kernel module compiles the very same files (its crate root declares the same two
//! modules with the same `#[path]`s), so `crate::hwif` and `crate::sim` resolve identically in
//! both builds. `no_std` and `forbid(unsafe_code)` here are what keeps that code kernel-free
//! and safe.

#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

#[path = "../../drivers/net/ethernet/rsnic/hwif/mod.rs"]
pub mod hwif;

#[path = "../../drivers/net/ethernet/rsnic/sim/mod.rs"]
pub mod sim;
