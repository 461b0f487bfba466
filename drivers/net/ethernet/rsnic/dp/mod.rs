// SPDX-License-Identifier: GPL-2.0

//! The data path: kernel-free, `no_std`, safe Rust.
//!
//! Compiled into `rsnic.ko` and into the host crate `rsnic-core`. It talks to the hardware
//! only through [`hw`]; [`xsk`] holds the AF_XDP zero-copy pool checks; [`bytes`] is the
//! byte order on byte slices that the device models (`sim/`) share with it.

pub mod bytes;
pub mod hdr;
pub mod hw;
pub mod mana;
pub mod mlx5;
pub mod pkt;
pub mod xsk;
