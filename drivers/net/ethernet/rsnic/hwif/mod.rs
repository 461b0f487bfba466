// SPDX-License-Identifier: GPL-2.0

//! The hardware interface: kernel-free, `no_std`, safe Rust.
//!
//! The formats and state machines the driver speaks to the device: the data path (SQs,
//! RQs, CQs, EQs, the XSK pool checks) and the control channels (ConnectX commands in
//! `mlx5/cmd/`, MANA's SMC, HWC and GDMA requests). Called `dp/` until the control
//! formats outgrew that name. Compiled into `rsnic.ko` and into the host crate
//! `rsnic-core`. It talks to the hardware only through [`hw`]; [`bytes`] is the byte order
//! on byte slices that the device models (`sim/`) share with it.

pub mod bytes;
pub mod csum;
pub mod hdr;
pub mod hw;
pub mod mana;
pub mod mlx5;
pub mod pkt;
pub mod xsk;

/// Adds `n` to a free-running counter (the queues' statistics of both families,
/// `mlx5::stats` and `mana::stats`).
#[inline(always)]
pub(crate) fn add(c: &mut u64, n: u64) {
    *c = c.wrapping_add(n);
}
