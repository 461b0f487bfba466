// SPDX-License-Identifier: GPL-2.0

//! The device models' own counters of a port, shown in debugfs
//! (`rsnic/rsnic-sim<N>/port<P>/counters`, one `name: value` line each, as `ethtool -S`
//! prints them): doorbells, WQEs, modeled PCIe bytes, drops. They are the device host's view,
//! for tests and the bench; the driver reports what the device tells it through its control
//! interface. The format is [`sim::counters`]'s.

use super::{Engine, Model};
use crate::kernel_ext::debugfs::{SeqFile, Show};
use crate::sim;
use kernel::sync::Arc;

/// A port's counters file.
pub(crate) struct PortCounters {
    pub(super) engine: Arc<Engine>,
    pub(super) port: usize,
}

impl Show for PortCounters {
    fn show(&self, out: &mut SeqFile<'_>) {
        // Copied under the model's lock, formatted after it.
        enum C {
            Mlx5(sim::mlx5::PortCounters),
            Mana(sim::mana::PortCounters),
        }
        let c = self.engine.with_model(|m| match m {
            Model::Mlx5(m) => C::Mlx5(m.counters(self.port).copied().unwrap_or_default()),
            Model::Mana(m) => C::Mana(m.counters(self.port).copied().unwrap_or_default()),
        });
        let _ = match c {
            C::Mlx5(c) => sim::counters::mlx5_text(out, &c),
            C::Mana(c) => sim::counters::mana_text(out, &c),
        };
        // The device's, not the port's: shown with every port.
        let _ = sim::counters::line(out, "dev_mmio_posted_lost", self.engine.posted_lost());
    }
}
