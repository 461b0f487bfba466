// SPDX-License-Identifier: GPL-2.0

//! What the two models' fault injection shares ([`crate::sim::mlx5::Fault`],
//! [`crate::sim::mana::Fault`]): the data-path stop of a port ([`Stop`], each model's
//! `Fault::DevStop`), which lasts until the driver's recovery or the device host ends it
//! and counts once, the first time the port holds something back. The driver side has no
//! counterpart: its recovery is what these faults test (`hwif/mlx5/`, `hwif/mana/` health
//! and timeout handling).

/// A port's data-path stop: whether it is on, and whether it took effect yet.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stop {
    /// The data path is stopped.
    on: bool,
    /// The stop held something back (it was counted).
    hit: bool,
}

impl Stop {
    /// No stop.
    pub const OFF: Self = Self {
        on: false,
        hit: false,
    };

    /// Stops the data path (a port already stopped stays stopped, counted or not).
    pub fn start(&mut self) {
        self.on = true;
    }

    /// Whether the data path is stopped.
    pub fn on(&self) -> bool {
        self.on
    }

    /// The stopped port held something back: true the first time (the caller counts the
    /// fault as taken effect), false after.
    pub fn hit(&mut self) -> bool {
        !core::mem::replace(&mut self.hit, true)
    }

    /// Ends the stop.
    pub fn end(&mut self) {
        *self = Self::OFF;
    }
}
