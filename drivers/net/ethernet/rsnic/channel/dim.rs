// SPDX-License-Identifier: GPL-2.0

//! Interrupt moderation of a live channel: `ethtool -C` applied in place, and adaptive
//! moderation (DIM) sampling at the end of a NAPI poll and applying the profiles it picks.
//!
//! Upstream counterpart: `en_dim.c` (and the moderation parts of `en_main.c`).

use crate::channel::shared::PortShared;
use crate::channel::Channel;
use crate::family::params::Moderation;
use crate::family::Family;
use crate::kernel_ext::net::dim::DimApply;
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex};

/// DIM's default profile of the RX (`rx`) or TX CQs, within what the family's device takes.
pub(crate) fn dim_default<F: Family>(rx: bool) -> Moderation {
    Moderation::dim_default(rx, F::COALESCE_MAX)
}

/// Changes the moderation of a channel's RX (`rx`) or TX CQs in place: those of its
/// device queues `queues` and, for RX, the XSK RQ's while it exists (`xsk`, held meanwhile so
/// that it is not destroyed under the command). Sleeps.
fn moderate<F: Family>(
    shared: &PortShared<F>,
    queues: &F::Queues,
    xsk: &Mutex<F::Queues>,
    rx: bool,
    m: Moderation,
) -> Result {
    F::modify_moderation(&shared.func, queues, rx, m)?;
    if rx {
        F::modify_moderation(&shared.func, &xsk.lock(), rx, m)?;
    }
    Ok(())
}

/// Where DIM applies the profiles it picks for one direction of a channel: MODIFY_CQ on
/// the channel's CQs of that direction ([`crate::family::Control::modify_moderation`]).
pub(crate) struct DimCqs<F: Family> {
    pub(super) shared: Arc<PortShared<F>>,
    pub(super) queues: F::Queues,
    /// The channel's AF_XDP zero-copy queues, while they exist.
    pub(super) xsk: Arc<Mutex<F::Queues>>,
    pub(super) rx: bool,
    /// Profiles applied (`ch<N>_dim_changes`, RX and TX together).
    pub(super) changes: AtomicU64,
}

impl<F: Family> DimApply for DimCqs<F> {
    fn apply(&self, usecs: u16, pkts: u16) {
        // A failure was logged by the family with its command; the CQs keep the profile
        // they had, and DIM goes on measuring.
        if moderate(
            &self.shared,
            &self.queues,
            &self.xsk,
            self.rx,
            Moderation {
                usecs,
                frames: pkts,
            }
            .within(F::COALESCE_MAX),
        )
        .is_ok()
        {
            self.changes.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl<F: Family> Channel<F> {
    /// Changes the interrupt moderation of the channel's RX (`rx`) or TX CQs on the device,
    /// in place ([`crate::family::Control::modify_moderation`]; for RX the XSK RQ's CQ
    /// too). Sleeps.
    pub(crate) fn modify_moderation(&self, rx: bool, m: Moderation) -> Result {
        moderate(&self.shared, &self.queues, &self.xsk_queues, rx, m)
    }

    /// Turns DIM of the RX (`rx`) or TX CQs on or off, setting the CQs to `m` (DIM's
    /// default profile when turning it on, the port's static moderation when turning it
    /// off). Off, DIM has stopped (no profile change runs or follows) before the CQs are
    /// set. Sleeps.
    pub(crate) fn set_adaptive(&self, rx: bool, on: bool, m: Moderation) -> Result {
        let dim = if rx { &self.dim_rx } else { &self.dim_tx };
        if on {
            let r = self.modify_moderation(rx, m);
            dim.start();
            r
        } else {
            dim.stop();
            self.modify_moderation(rx, m)
        }
    }

    /// DIM's sample at the end of a NAPI poll (mlx5e's `mlx5e_rx_dim_cq_rearm` and
    /// `mlx5e_tx_dim`): the channel's interrupts and the direction's cumulative packets and
    /// bytes. Softirq; allocates nothing.
    #[inline(never)]
    pub(super) fn dim_sample(&self) {
        // DIM's event counter is 16 bits wide and wraps.
        let events = self.counters.events.load(Ordering::Relaxed) as u16;
        if self.dim_rx.is_on() {
            let c = self.rx.lock().as_ref().map(|side| {
                let (s, _) = F::rx_stats(&side.rx);
                (F::rx_packets(&s), F::rx_bytes(&s))
            });
            if let Some((packets, bytes)) = c {
                self.dim_rx.sample(events, packets, bytes);
            }
        }
        if self.dim_tx.is_on() {
            let c = self.with_tx(|tx, _| {
                let (s, _) = F::tx_stats(&tx.sq);
                (F::tx_packets(&s), F::tx_bytes(&s))
            });
            if let Some((packets, bytes)) = c {
                self.dim_tx.sample(events, packets, bytes);
            }
        }
    }
}
