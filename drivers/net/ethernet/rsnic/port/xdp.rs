// SPDX-License-Identifier: GPL-2.0

//! XDP and AF_XDP set-up of a port: attaching, replacing and detaching the program, binding
//! and unbinding AF_XDP zero-copy pools per queue, and `ndo_xsk_wakeup`.
//!
//! Upstream counterpart: `en_main.c` (`mlx5e_xdp_set`) and `en/xsk/pool.c`
//! (`mlx5e_xsk_setup_pool`), `en/xsk/tx.c` (`mlx5e_xsk_wakeup`).

use crate::family::params::{max_xdp_mtu, xsk_geometry, MAX_CHANNELS};
use crate::family::Family;
use crate::hwif::xsk;
use crate::kernel_ext::net::device::Device;
use crate::kernel_ext::net::ethtool::ExtAck;
use crate::kernel_ext::net::xdp::BpfProg;
use crate::kernel_ext::net::xsk::XskPool;
use crate::kernel_ext::sync::with_bh;
use crate::port::{Port, PortState};
use core::sync::atomic::Ordering;
use kernel::c_str;
use kernel::prelude::*;

impl<F: Family> Port<F> {
    /// Attaches, replaces or detaches the XDP program. Attaching or detaching reopens the
    /// channels (buffers get XDP's headroom, mlx5 channels an XDP_TX SQ); a replacement is
    /// swapped into the running channels.
    pub(super) fn xdp_setup(
        &self,
        dev: &Device,
        prog: Option<BpfProg>,
        extack: &mut ExtAck,
    ) -> Result {
        let mut st = self.state.lock();
        let mut new = st.params;
        new.xdp = prog.is_some();
        if new.xdp && new.mtu > max_xdp_mtu() {
            extack.set_message(c_str!(
                "MTU too large for XDP: a frame must fit one page (see rsnic.rst)"
            ));
            return Err(EINVAL);
        }
        if new == st.params {
            if let Some(p) = prog.as_ref() {
                // The port still holds the old program, so no channel puts the last
                // reference here.
                with_bh(|| {
                    for ch in self.chans.lock().iter() {
                        ch.swap_prog(p);
                    }
                });
            }
            st.prog = prog;
            self.sync_xsk_active(&st);
            return Ok(());
        }
        self.reconfigure_locked(&mut st, dev, new, prog)
    }

    /// Registers (`Some`) or unregisters (`None`) the AF_XDP zero-copy pool of queue `q`,
    /// as mlx5e's `mlx5e_xsk_setup_pool`. Registration checks the pool against the port
    /// (`crate::hwif::xsk::check_pool`; a refusal is logged with its reason: the call has no
    /// extack) and maps it; if the interface is up with an XDP program attached, channel `q`
    /// gets its XSK queues and its RSS entries point at its XSK RQ, the other channels going
    /// on untouched (otherwise they come when a program is attached or the interface comes
    /// up). Unregistration points the entries back at the regular RQ, closes the XSK queues
    /// and unmaps the pool, so the driver no longer touches it when this returns. Under
    /// RTNL.
    pub(super) fn xsk_setup(&self, dev: &Device, pool: Option<XskPool>, q: u32) -> Result {
        if !F::XSK_ZC {
            return Err(crate::kernel_ext::net::eopnotsupp());
        }
        let qi = q as usize;
        if qi >= MAX_CHANNELS || q >= self.max_channels {
            return Err(EINVAL);
        }
        let mut st = self.state.lock();
        match pool {
            Some(pool) => {
                if q >= st.params.count {
                    pr_err!(
                        "{}: AF_XDP queue {} is not a channel ({} channels)\n",
                        dev.name(),
                        q,
                        st.params.count
                    );
                    return Err(EINVAL);
                }
                if st.xsk[qi].is_some() {
                    return Err(EBUSY);
                }
                let (chunk, headroom) = (pool.chunk_size(), pool.headroom());
                if let Err(why) = xsk::check_pool(chunk, headroom, st.params.mtu, &xsk_geometry()) {
                    pr_err!("{}: AF_XDP queue {}: {}\n", dev.name(), q, why);
                    return Err(EINVAL);
                }
                pool.dma_map(&self.shared.dma)?;
                st.xsk[qi] = Some(pool);
                if let Err(e) = self.xsk_activate(dev, &mut st, q, pool) {
                    st.xsk[qi] = None;
                    pool.dma_unmap();
                    return Err(e);
                }
                Ok(())
            }
            None => {
                let Some(old) = st.xsk[qi].take() else {
                    return Ok(());
                };
                self.xsk_deactivate(dev, &mut st, q);
                old.dma_unmap();
                Ok(())
            }
        }
    }

    /// Opens channel `q`'s XSK queues for `pool` if the interface is up with a program
    /// attached, and points its RSS entries at its XSK RQ (`mlx5e_rx_res_xsk_update`).
    /// A failure leaves the channel as it was. Under RTNL, the state locked.
    fn xsk_activate(&self, dev: &Device, st: &mut PortState<F>, q: u32, pool: XskPool) -> Result {
        if !st.open || st.prog.is_none() {
            return Ok(());
        }
        // Open without channels (a reopen failed): made at the next open.
        let Some(ch) = self.live_channel(q) else {
            return Ok(());
        };
        ch.xsk_enable(&st.params, pool)?;
        ch.steer_xsk(true);
        if let Err(e) = self.steer_live(st) {
            pr_err!(
                "{}: AF_XDP queue {}: steering to the XSK RQ failed ({:?})\n",
                dev.name(),
                q,
                e
            );
            ch.steer_xsk(false);
            let _ = self.steer_live(st);
            ch.xsk_disable();
            return Err(e);
        }
        Ok(())
    }

    /// Points channel `q`'s RSS entries back at its regular RQ and closes its XSK queues,
    /// if it has them. Cannot be refused: a failed steering command is logged (the XSK RQ
    /// may then stay named, and its destruction be refused and logged too). Under RTNL, the
    /// state locked.
    fn xsk_deactivate(&self, dev: &Device, st: &mut PortState<F>, q: u32) {
        let Some(ch) = self.live_channel(q).filter(|c| c.has_xsk()) else {
            return;
        };
        ch.steer_xsk(false);
        if let Err(e) = self.steer_live(st) {
            pr_err!(
                "{}: AF_XDP queue {}: steering back to the regular RQ failed ({:?})\n",
                dev.name(),
                q,
                e
            );
        }
        ch.xsk_disable();
    }

    /// `ndo_xsk_wakeup` for queue `q`: `ENETDOWN` unless the interface is up with a program
    /// attached (mlx5e's answer); otherwise the channel's wake-up, or 0 while the channels
    /// are being reopened (the reopen polls them).
    pub(super) fn xsk_wakeup(&self, q: u32) -> Result {
        if !self.shared.xsk_active.load(Ordering::Acquire) {
            return Err(crate::kernel_ext::net::enetdown());
        }
        // Under the channels' lock, without taking a reference: the caller may be in an RCU
        // read-side section (xsk_sendmsg), where dropping the last reference to a channel
        // closed meanwhile (whose NAPI deletion sleeps) is not allowed.
        with_bh(|| {
            self.chans
                .lock()
                .iter()
                .find(|c| c.index() == q)
                .map_or(Ok(()), |ch| ch.xsk_wakeup())
        })
    }
}
