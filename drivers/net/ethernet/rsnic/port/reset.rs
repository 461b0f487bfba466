// SPDX-License-Identifier: GPL-2.0

//! The reopen of a port's channels after a fault no queue reset covers, from a work item
//! under RTNL.
//!
//! Upstream counterpart: `en_main.c` (`mlx5e_safe_reopen_channels`, `mlx5e_tx_timeout_work`).

use crate::family::Family;
use crate::kernel_ext::net::device::Device;
use crate::kernel_ext::sync::with_rtnl;
use crate::port::Port;
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex};
use kernel::types::ARef;
use kernel::workqueue::{Work, WorkItem};
use kernel::{new_mutex, new_work};

/// Why a port's channels are reopened ([`PortShared::request_reopen`]): a fault on a queue
/// that is not reset in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Reopen {
    /// The regular SQ stopped on a fault, and the family has no in-place reset.
    SqFault = 1,
    /// The regular RQ stopped on a fault, and the family has no in-place reset.
    RqFault,
    /// The TX watchdog fired with no lost interrupt, and the family has no SQ reset.
    TxTimeout,
    /// An XDP SQ (XDP_TX, redirect, XSK or ICO) stopped on a fault.
    XdpSqFault,
    /// The XSK RQ stopped on a fault.
    XskRqFault,
}

impl Reopen {
    fn from_u32(v: u32) -> Option<Self> {
        [
            Self::SqFault,
            Self::RqFault,
            Self::TxTimeout,
            Self::XdpSqFault,
            Self::XskRqFault,
        ]
        .into_iter()
        .find(|r| *r as u32 == v)
    }

    fn what(self) -> &'static str {
        match self {
            Self::SqFault => "SQ fault",
            Self::RqFault => "RQ fault",
            Self::TxTimeout => "transmit timeout, no lost interrupt",
            Self::XdpSqFault => "XDP SQ fault",
            Self::XskRqFault => "XSK RQ fault",
        }
    }
}

/// The reopen of a port's channels after a fault no queue reset covers, as mlx5e reopens
/// its channels from a work item under RTNL. Runs on the port's `reset_wq` (not the
/// channels' recovery queue, which closing a channel flushes).
///
/// Lifetimes: the port and its device are reachable only while the interface is up
/// (`target`, set by `ndo_open` and cleared by `ndo_stop`, both under RTNL); the work takes
/// RTNL before it looks, so it never sees a device being unregistered, and it drops its
/// reference to the port before RTNL is released, while the netdev's own reference still
/// exists (that one goes only after `unregister_netdev`): the port is never freed here.
/// Nothing waits for this work under RTNL (the queue is destroyed when the port's shared
/// state goes, after unregistration).
#[pin_data]
pub(crate) struct PortReset<F: Family> {
    #[pin]
    work: Work<PortReset<F>>,
    /// The pending request, `(reason << 16) | channel` (0: none); one at a time.
    req: AtomicU32,
    /// The port and its device while the interface is up (a reference cycle until
    /// `ndo_stop`).
    #[pin]
    pub(super) target: Mutex<Option<(Arc<Port<F>>, ARef<Device>)>>,
}

kernel::impl_has_work! {
    impl{F: Family} HasWork<Self> for PortReset<F> { self.work }
}

impl<F: Family> PortReset<F> {
    /// An idle reset with no port attached.
    pub(crate) fn new() -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self {
                work <- new_work!("rsnic::PortReset::work"),
                req: AtomicU32::new(0),
                target <- new_mutex!(None, "rsnic::PortReset::target"),
            }),
            GFP_KERNEL,
        )
    }

    /// Records a request from channel `ch`; `false` if one is already waiting (that reopen
    /// covers this fault too). Any context.
    pub(crate) fn arm(&self, ch: u32, why: Reopen) -> bool {
        let code = ((why as u32) << 16) | (ch & 0xffff);
        self.req
            .compare_exchange(0, code, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }
}

impl<F: Family> WorkItem for PortReset<F> {
    type Pointer = Arc<PortReset<F>>;

    fn run(this: Arc<PortReset<F>>) {
        with_rtnl(|| {
            let code = this.req.load(Ordering::Acquire);
            let target = this.target.lock().clone();
            match (target, Reopen::from_u32(code >> 16)) {
                (Some((port, dev)), Some(why)) => port.reopen(&dev, code & 0xffff, why, &this.req),
                _ => this.req.store(0, Ordering::Release),
            }
        });
    }
}

impl<F: Family> Port<F> {
    /// Reopens the channels after a fault on channel `ch` no queue reset covers
    /// ([`PortReset`]), and clears the request `req` once the old channels are closed
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
}
