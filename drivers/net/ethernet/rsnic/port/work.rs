// SPDX-License-Identifier: GPL-2.0

//! The reopen of a port's channels after a fault no queue reset covers, which the channels'
//! reopen work ([`crate::channel::shared::PortWork`]) runs under RTNL, and the read of the
//! hardware counters that `ndo_get_stats64` asks of the same work's second item.
//!
//! Upstream counterpart: `en_main.c` (`mlx5e_safe_reopen_channels`, `mlx5e_tx_timeout_work`,
//! `mlx5e_update_stats_work`).

use crate::channel::shared::{PortWorkTarget, Reopen};
use crate::family::Family;
use crate::kernel_ext::net::device::Device;
use crate::port::Port;
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::prelude::*;

impl<F: Family> PortWorkTarget for Port<F> {
    /// Reopens the channels after a fault on channel `ch` no queue reset covers
    /// ([`crate::channel::shared::PortWork`]), and clears the request `req` once the old channels are closed
    /// (what they asked for until then is this reopen; a fault of the new ones asks again).
    /// Under RTNL.
    fn reopen(&self, dev: &Device, ch: u32, why: Reopen, req: &AtomicU32) {
        let mut st = self.state.lock();
        if !st.open {
            req.store(0, Ordering::Release);
            return;
        }
        // A device that is gone (surprise removal) cannot take channels again: the port
        // stays as it is with its carrier off, so the TX watchdog (which watches only a port
        // with carrier) does not fire again, until the interface is set down or the driver
        // unbinds. No reopen is tried.
        if !self.shared.hw.check_present() {
            dev.carrier_off();
            req.store(0, Ordering::Release);
            pr_err!(
                "{}: ch{}: {}: the device is gone: carrier off, the channels are not reopened\n",
                dev.name(),
                ch,
                why.what()
            );
            return;
        }
        pr_err!(
            "{}: ch{}: {}: reopening the channels\n",
            dev.name(),
            ch,
            why.what()
        );
        self.close_channels(dev);
        req.store(0, Ordering::Release);
        let p = st.params;
        let st = &mut *st;
        if let Err(e) =
            self.open_channels(dev, &p, st.prog.as_ref(), &st.xsk, &mut st.rss, &st.steer)
        {
            pr_err!(
                "{}: reopening the channels failed ({:?}): none until the interface is set down and up\n",
                dev.name(),
                e
            );
        }
    }

    fn refresh_counters(&self) {
        self.read_hw_counters();
    }
}
