// SPDX-License-Identifier: GPL-2.0

//! The simulated cable between two ports wired back to back.
//!
//! A port's carrier is up exactly when both ends of its cable are administratively up: bring
//! one end down and both lose carrier; bring it back up and both regain it. Callers run under
//! RTNL (`ndo_open`/`ndo_stop`), which orders the updates; the mutex protects the state
//! against the teardown path, which runs without RTNL.

use crate::kernel_ext::net::device::Device;
use kernel::{
    new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
    types::ARef,
};

struct End {
    admin_up: bool,
    dev: Option<ARef<Device>>,
}

/// One cable with two ends (sides 0 and 1).
#[pin_data]
pub(crate) struct Wire {
    #[pin]
    ends: Mutex<[End; 2]>,
}

impl Wire {
    /// A new cable with both ends down and no device attached.
    pub(crate) fn new() -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self {
                ends <- new_mutex!([
                    End { admin_up: false, dev: None },
                    End { admin_up: false, dev: None },
                ]),
            }),
            GFP_KERNEL,
        )
    }

    /// Plugs `dev` into end `side` (holds a reference until [`Wire::detach_all`]).
    pub(crate) fn attach(&self, side: usize, dev: &Device) {
        let mut ends = self.ends.lock();
        if let Some(end) = ends.get_mut(side) {
            end.dev = Some(ARef::from(dev));
        }
    }

    /// Unplugs both devices, dropping the references that would otherwise keep
    /// `unregister_netdev()` waiting.
    pub(crate) fn detach_all(&self) {
        let mut ends = self.ends.lock();
        for end in ends.iter_mut() {
            end.dev = None;
        }
    }

    /// End `side` went administratively up or down: recompute both carriers.
    pub(crate) fn set_admin(&self, side: usize, up: bool) {
        let mut ends = self.ends.lock();
        if let Some(end) = ends.get_mut(side) {
            end.admin_up = up;
        }
        let link = ends.iter().all(|e| e.admin_up);
        for end in ends.iter() {
            if let Some(dev) = &end.dev {
                if link {
                    dev.carrier_on();
                } else {
                    dev.carrier_off();
                }
            }
        }
    }
}
