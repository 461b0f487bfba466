// SPDX-License-Identifier: GPL-2.0

//! rsnic: an Ethernet driver for work-queue NICs (ConnectX / mlx5 and MANA families), driving
//! a simulated device through the same hardware interface a real one has.
//!
//! The crate root only declares modules: see `Documentation/networking/device_drivers/
//! ethernet/rsnic.rst` for the layering.

// `pin_init!` of a channel (every field of `channel::Channel`) expands past the default 128.
#![recursion_limit = "256"]

#[path = "../../../../rust/mod.rs"]
pub mod kernel_ext;

pub mod hwif;
pub mod sim;

mod bus;
mod channel;
mod devlink;
mod driver;
mod family;
mod kdma;
mod ntuple;
mod port;
mod rss;
mod xdp;

use driver::Rsnic;
use kernel::prelude::*;

module! {
    type: Rsnic,
    name: "rsnic",
    author: "rsnic developers",
    description: "Ethernet driver for work-queue NICs (mlx5, MANA) over a simulated device",
    license: "GPL",
}
