// SPDX-License-Identifier: GPL-2.0

//! The kernel glue of a ConnectX function's control plane: its command queue in coherent DMA
//! memory, driven by `hwif::mlx5::cmd` with sleeping polls (process context only), the
//! bring-up of main.c at probe and its teardown at removal, the port's administrative state,
//! and its asynchronous event queue, whose port-change events set the carrier.
//!
//! The device completes a command when its engine runs (the command doorbell queues the
//! engine's work, as any register write does). Until the command EQ exists (main.c's
//! sequence, the command EQ's own CREATE_EQ) and again from before its DESTROY_EQ (the
//! teardown), the caller polls the entry's ownership bit, sleeping between polls, as
//! `mlx5_cmd_invoke` in polling mode does; in between, commands complete in events mode:
//! the caller sleeps until the command EQ's handler sees the completion EQE
//! ([`cmd_events`]). One command is outstanding at a time: the queue is behind a mutex.
//!
//! Events, as mlx5e handles `MLX5_EVENT_TYPE_PORT_CHANGE`: the function's async EQ raises its
//! vector ([`ASYNC_INTR`]); the handler ([`Func::irq`], interrupt-like context) consumes the
//! EQEs, re-arms the EQ and queues the carrier work, which asks the device for the vport's
//! operational state (QUERY_VPORT_STATE, a sleeping command) and sets the carrier from it
//! (`mlx5e_update_carrier`). Every change of the state posts an event, so the last query
//! sees the last state.
//!
//! Firmware pages, as pagealloc.c: bring-up gives the boot and init pages the firmware asks
//! for (QUERY_PAGES, MANAGE_PAGES GIVE) before INIT_HCA; afterwards the firmware asks by a
//! page request EQE on the async EQ (`MLX5_EVENT_TYPE_PAGE_REQUEST`), which the handler
//! adds up and the same work serves from process context (GIVE, or TAKE for a negative
//! count; CANT_GIVE when the driver cannot). Each page is a 4 KiB coherent allocation the
//! driver keeps ([`FwPages`]) until the firmware returns it. Teardown takes every page back
//! after TEARDOWN_HCA (`mlx5_reclaim_startup_pages`) and frees them all after DISABLE_HCA;
//! so does a failed bring-up. Only a TEARDOWN_HCA the firmware refused keeps them (the
//! firmware may still use them; main.c skips the cleanup then too).
//!
//! Receive filtering, as mlx5e's `set_rx_mode_work` (en_fs.c): `ndo_set_rx_mode` (atomic,
//! under the address lock) and `ndo_set_mac_address` only record what the stack wants
//! ([`Func::set_rx_mode`], [`Func::set_mac`]) and queue the control work, which programs the
//! vport (MODIFY_NIC_VPORT_CONTEXT: the UC list with the port's address first, the MC list
//! with broadcast first, each cut at the caps' `log_max_current_*_list`, and the promiscuous
//! flags) and, while the channels are open, the L2 flow table ahead of the traffic-type
//! table (an entry per address, the all-multicast and promiscuous catch-alls).
//!
//! Upstream counterpart: `main.c` (bring-up and teardown), `cmd.c` (the command queue in
//! polling and events mode), `eq.c` (the command and async EQs) and `en/port.c`, `vport.c` (port and vport
//! queries). Its parts: `fw_pages` (`pagealloc.c`), `queues` (the channels' queues by
//! command), `rss` (RQT, TIRs, flow tables, contexts, ntuple rules), `rx_mode` (`en_fs.c`).

mod cmd_events;
mod fw_pages;
pub(super) mod module;
mod queues;
pub(super) mod rss;
mod rx_mode;

use cmd_events::CmdEvents;
use fw_pages::FwPages;
use queues::eq_ring;
pub(crate) use queues::queue_buf;
use rss::Rss;

use crate::bus::{Bar, Function, IrqHandler, IrqKey};
use crate::hwif::hw::Coherent;
use crate::hwif::mlx5::cmd::queue::CmdMode;
use crate::hwif::mlx5::cmd::{
    mkey, op, pages,
    queue::{CMDQ_PAGE_SIZE, MBOX_STRIDE},
    res::{self, CreateEq, EVENT_TYPE_PORT_CHANGE},
    seq::{Bringup, Progress, Resources, Teardown, SEQ_OUT_LEN},
    vport, CmdError, CmdErrorKind, CmdPoll, CmdQueue, FormatError, Pas,
};
use crate::hwif::mlx5::eq::{Eq, Event};
use crate::hwif::mlx5::tx::InlineMode;
use crate::kdma::KCoherent;
use crate::kernel_ext::{
    dma::DmaDevice,
    net::device::{Device, RxMode},
    sync::{with_bh, PollWait},
    wq::OwnedQueue,
};
use core::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use kernel::{
    c_str, new_mutex, new_spinlock, new_work,
    prelude::*,
    sync::{Arc, Mutex, SpinLock},
    types::ARef,
    workqueue::{Work, WorkItem},
};

/// How long the driver waits for one command, in milliseconds (cmd.c's default command
/// timeout is 60 s for firmware that may be busy; the device here answers within a few
/// engine runs, so a command that takes seconds is lost, not slow).
const CMD_TIMEOUT_MS: u32 = 5_000;
/// Mailbox slots of 1 KiB: the longest command rsnic sends, QUERY_HCA_CAP's output, takes 9
/// blocks of 512 bytes.
const MBOX_SLOTS: usize = 16;
/// log2 of the async EQ's EQEs (64 EQEs of 64 bytes: one page).
const ASYNC_EQ_LOG: u8 = 6;
/// Most EQEs one interrupt consumes (`MLX5_EQ_POLLING_BUDGET` is 128; port changes are
/// rare).
const ASYNC_EQ_BUDGET: u32 = 64;

/// log2 of a channel's completion EQ (one EQE per armed CQ between two interrupts: a
/// channel has at most seven CQs).
pub(crate) const COMP_EQ_LOG: u8 = 6;
/// The function's vector of its async EQ (port changes): vector 0, the control vector, as
/// mlx5's (its completion vectors follow: channel `c` on vector `c + 1`).
pub(crate) const ASYNC_INTR: usize = 0;
/// The key of the async EQ's handler on [`ASYNC_INTR`] (the channels' keys are their
/// indices).
const ASYNC_KEY: IrqKey = usize::MAX;

/// The errno of a failed command, as `mlx5_cmd_check` gives it.
pub(crate) fn cmd_errno(e: &CmdError) -> Error {
    match e.kind {
        CmdErrorKind::Status { status, .. } => {
            Error::from_errno(crate::hwif::mlx5::cmd::queue::status_to_errno(status))
        }
        CmdErrorKind::Timeout => crate::kernel_ext::net::etimedout(),
        CmdErrorKind::Gone => ENODEV,
        CmdErrorKind::TooManyPages { .. } => ENOMEM,
        CmdErrorKind::Unsupported
        | CmdErrorKind::MissingCap(_)
        | CmdErrorKind::CapTooSmall { .. } => crate::kernel_ext::net::eopnotsupp(),
        _ => EIO,
    }
}

/// The command queue and, in events mode, its command EQ.
pub(crate) struct CmdIf {
    q: CmdQueue<KCoherent>,
    /// The command EQ and its handler's wake-up (from bring-up's switch to events mode to
    /// teardown's switch back).
    ev: Option<Arc<CmdEvents>>,
    /// The port, for messages.
    port: usize,
}

/// The async EQ and the netdev whose carrier its events set.
struct Events {
    eq: Option<Eq<KCoherent>>,
    dev: Option<ARef<Device>>,
}

/// One function after bring-up: its command queue, what bring-up created and learnt, and
/// its asynchronous events.
#[pin_data]
pub(crate) struct Func {
    #[pin]
    cmd: Mutex<CmdIf>,
    res: Resources,
    hw: Arc<Function>,
    port: usize,
    #[pin]
    events: SpinLock<Events>,
    /// The control work on `wq`: the firmware's page requests, then the carrier
    /// (QUERY_VPORT_STATE) when `carrier_due`.
    #[pin]
    work: Work<Func>,
    /// The carrier is to be queried.
    carrier_due: AtomicBool,
    /// Pages the firmware asked for by page request EQEs and the work has not served yet
    /// (negative: to take back).
    pages_due: AtomicI32,
    /// The pages the firmware holds. Locked before `cmd`.
    #[pin]
    pages: Mutex<FwPages>,
    wq: OwnedQueue,
    /// Teardown began: the carrier work does nothing any more.
    stopping: AtomicBool,
    /// The TIS every SQ of the port sends through.
    tisn: u32,
    /// The largest netdev MTU the port takes (from PMTU's `max_mtu`, at most rsnic's own).
    max_mtu: u32,
    /// The RSS objects (while channels are open).
    #[pin]
    rss: Mutex<Option<Rss>>,
    /// What the stack asks the port to receive, as `ndo_set_rx_mode` last saw it (with the
    /// address `ndo_set_mac_address` set since). Written in atomic context.
    #[pin]
    rx: SpinLock<RxMode>,
    /// The receive filter is to be programmed (by the control work).
    rx_due: AtomicBool,
    /// The stack's VLAN ids and the VLAN filter feature. Locked after `rss`.
    #[pin]
    vlans: Mutex<rx_mode::Vlans>,
}

kernel::impl_has_work! {
    impl HasWork<Self> for Func { self.work }
}

impl WorkItem for Func {
    type Pointer = Arc<Func>;

    fn run(this: Arc<Func>) {
        if this.stopping.load(Ordering::Acquire) {
            return;
        }
        let n = this.pages_due.swap(0, Ordering::AcqRel);
        if n != 0 {
            this.serve_page_request(n);
        }
        if this.rx_due.swap(false, Ordering::AcqRel) {
            this.apply_rx_mode();
        }
        if !this.carrier_due.swap(false, Ordering::AcqRel) {
            return;
        }
        let mut inp = [0u8; vport::QUERY_VPORT_STATE_LEN];
        let mut out = [0u8; vport::QUERY_VPORT_STATE_LEN];
        let r = vport::query_vport_state(&mut inp)
            .map_err(|_| CmdError::iface(CmdErrorKind::BadOutput))
            .and_then(|n| this.exec(&inp[..n], &mut out))
            .and_then(|_| {
                vport::parse_query_vport_state(&out)
                    .map_err(|_| CmdError::iface(CmdErrorKind::BadOutput))
            });
        match r {
            Ok(st) => with_bh(|| {
                if let Some(dev) = &this.events.lock().dev {
                    if st.is_up() {
                        dev.carrier_on();
                    } else {
                        dev.carrier_off();
                    }
                }
            }),
            Err(e) => pr_warn!("port {}: carrier: {}\n", this.port, e),
        }
    }
}

impl Func {
    /// What bring-up created and learnt (caps, UAR, PD, TD, vport context).
    pub(crate) fn resources(&self) -> &Resources {
        &self.res
    }

    /// Brings the function of `port` up (main.c's order, see `hwif::mlx5::cmd::seq`) and
    /// creates its async EQ for port-change events, armed. On a failure, undoes what was
    /// done and returns the failed command, which the caller reports. Sleeps.
    pub(crate) fn bring_up(hw: &Arc<Function>) -> core::result::Result<Arc<Self>, BringupError> {
        let (dma, port) = (hw.dma(), hw.index());
        let alloc = |size| KCoherent::alloc(dma, size).map_err(BringupError::Kernel);
        let mut q = CmdIf {
            q: CmdQueue::new(alloc(CMDQ_PAGE_SIZE)?, alloc(MBOX_SLOTS * MBOX_STRIDE)?)
                .map_err(BringupError::Cmd)?,
            ev: None,
            port,
        };
        let mut out = KVec::from_elem(0u8, SEQ_OUT_LEN, GFP_KERNEL).map_err(|_| ENOMEM)?;
        let bar = hw.bar();
        let mut b = Bringup::new();
        let mut wait = PollWait::new();
        let mut fw = FwPages::new();
        let r = loop {
            match b.poll(&mut q.q, &bar, &bar, &mut out) {
                Ok(Progress::Done) => break Ok(()),
                Ok(Progress::GivePages(n)) => match fw.give(&mut q, &bar, dma, n) {
                    Ok(()) => b.pages_given(),
                    Err(e) => break Err(e),
                },
                Ok(Progress::Pending) if gone(&bar, &wait) => {
                    break Err(BringupError::Cmd(q.q.gone()))
                }
                Ok(Progress::Pending) if wait.sleep(CMD_TIMEOUT_MS) => {}
                Ok(Progress::Pending) => break Err(BringupError::Cmd(q.q.time_out())),
                Ok(Progress::Reclaim) => break Err(BringupError::Kernel(EINVAL)),
                Err(e) => break Err(BringupError::Cmd(e)),
            }
        };
        let res = *b.resources();
        let mut eq = None;
        let mut tisn = None;
        let mut wq = None;
        let mut max_mtu = crate::family::MAX_MTU;
        let r = r.and_then(|()| {
            // create_async_eqs: the command EQ first, then events mode for the rest.
            cmd_events::use_events(&mut q, hw, res.uar.ok_or(BringupError::Kernel(EINVAL))?)?;
            eq = Some(create_async_eq(&mut q, &bar, dma, &res)?);
            // mlx5e_create_tises: the TIS of the port's SQs, in its transport domain.
            let mut inp = [0u8; res::CREATE_TIS_IN_LEN];
            let mut out = [0u8; res::SHORT_LEN];
            let n = res::create_tis(&mut inp, res.td.unwrap_or(0)).map_err(bad_format)?;
            run_cmd(&mut q, &bar, &inp[..n], &mut out).map_err(BringupError::Cmd)?;
            tisn = Some(res::parse_create_tis(&out).map_err(bad_format)?);
            // mlx5e_set_netdev_mtu_boundaries: the port's largest MTU, less the L2 overhead,
            // bounds the netdev's (rsnic's own bound is its RX buffers'). A failed read is
            // logged and leaves rsnic's bound (mlx5_query_port_max_mtu ignores errors).
            let mut inp = [0u8; vport::access_reg_len(vport::PMTU_LEN)];
            let mut out = [0u8; vport::access_reg_len(vport::PMTU_LEN)];
            let n = vport::pmtu_query(&mut inp).map_err(bad_format)?;
            match run_cmd(&mut q, &bar, &inp[..n], &mut out).and_then(|_| {
                vport::parse_pmtu(&out).map_err(|_| CmdError::iface(CmdErrorKind::BadOutput))
            }) {
                Ok(p) => {
                    let port_max = vport::hw_to_sw_mtu(u32::from(p.max));
                    if port_max >= crate::family::MIN_MTU {
                        max_mtu = max_mtu.min(port_max);
                    } else {
                        pr_warn!("port {}: PMTU max_mtu {} ignored\n", port, p.max);
                    }
                }
                Err(e) if e.kind == CmdErrorKind::Gone || e.kind == CmdErrorKind::Timeout => {
                    return Err(BringupError::Cmd(e))
                }
                Err(e) => pr_warn!("port {}: PMTU read: {}\n", port, e),
            }
            // The control work's queue: without it, what was made is undone too.
            wq = Some(OwnedQueue::new(c_str!("rsnic-ctl"), port as i32)?);
            Ok(())
        });
        if let Err(e) = r {
            let mut first = None;
            if let Some(tisn) = tisn {
                first = destroy_obj(&mut q, &bar, |b| res::destroy_tis(b, tisn)).err();
            }
            if let Some(eq) = eq {
                let r = destroy_obj(&mut q, &bar, |b| res::destroy_eq(b, eq.eqn()));
                first = first.or(r.err());
            }
            let r = cmd_events::use_polling(&mut q, hw, &bar);
            first = first.or(r.err());
            let te = first.or(tear_down(&mut q, &bar, &res, &mut fw, port));
            if let Some(te) = te {
                pr_warn!("port {}: undoing a failed bring-up: {}\n", port, te);
            }
            return Err(e);
        }
        let (Some(eq), Some(tisn), Some(wq)) = (eq, tisn, wq) else {
            return Err(BringupError::Kernel(EINVAL));
        };
        Arc::pin_init(
            pin_init!(Self {
                cmd <- new_mutex!(q, "rsnic::mlx5::Func::cmd"),
                res,
                hw: hw.clone(),
                port,
                events <- new_spinlock!(Events { eq: Some(eq), dev: None }, "rsnic::mlx5::Func::events"),
                work <- new_work!("rsnic::mlx5::Func::work"),
                carrier_due: AtomicBool::new(false),
                pages_due: AtomicI32::new(0),
                pages <- new_mutex!(fw, "rsnic::mlx5::Func::pages"),
                wq,
                stopping: AtomicBool::new(false),
                tisn,
                max_mtu,
                rss <- new_mutex!(None, "rsnic::mlx5::Func::rss"),
                rx <- new_spinlock!(RxMode::new(res.vport.mac), "rsnic::mlx5::Func::rx"),
                rx_due: AtomicBool::new(false),
                vlans <- new_mutex!(rx_mode::Vlans::new(), "rsnic::mlx5::Func::vlans"),
            }),
            GFP_KERNEL,
        )
        .map_err(BringupError::Kernel)
    }

    /// Runs one command to completion (sleeps; 5 s at most).
    pub(crate) fn exec(&self, input: &[u8], out: &mut [u8]) -> Result<usize, CmdError> {
        let bar = self.hw.bar();
        run_cmd(&mut self.cmd.lock(), &bar, input, out)
    }

    /// The offset of the function's UAR page in the device's registers (doorbells of the
    /// port's queues and EQs).
    pub(crate) fn uar_offset(&self) -> u32 {
        self.res.uar.unwrap_or(0) * 4096
    }

    /// Runs the command `build` writes into an `inlen`-byte buffer and returns its output of
    /// `outlen` bytes. A failure is logged with the port and the command (not one for a
    /// device that is gone). Sleeps.
    fn cmd(
        &self,
        inlen: usize,
        outlen: usize,
        build: impl FnOnce(
            &mut [u8],
        ) -> core::result::Result<usize, crate::hwif::mlx5::cmd::FormatError>,
    ) -> Result<KVec<u8>> {
        let mut inp = KVec::from_elem(0u8, inlen, GFP_KERNEL)?;
        let mut out = KVec::from_elem(0u8, outlen, GFP_KERNEL)?;
        let n = build(&mut inp).map_err(|e| {
            pr_err!(
                "port {}: a command does not fit its format: {:?}\n",
                self.port,
                e
            );
            EINVAL
        })?;
        self.exec(&inp[..n], &mut out).map_err(|e| {
            // A device that is gone was logged once (`bus/pci.rs`); its teardown's every
            // DESTROY_* would say so again.
            if e.kind != CmdErrorKind::Gone {
                pr_err!("port {}: {}\n", self.port, e);
            }
            cmd_errno(&e)
        })?;
        Ok(out)
    }

    /// The object number a create command returned.
    fn created(
        &self,
        out: &[u8],
        parse: impl FnOnce(&[u8]) -> core::result::Result<u32, crate::hwif::mlx5::cmd::FormatError>,
    ) -> Result<u32> {
        parse(out).map_err(|_| {
            pr_err!(
                "port {}: a create command returned a malformed output\n",
                self.port
            );
            EIO
        })
    }

    /// The device's CQs take a moderation that MODIFY_CQ may change on live CQs (caps
    /// `cq_moderation` and `cq_period_mode_modify`): what mlx5e needs to turn DIM on.
    pub(crate) fn cq_moderation(&self) -> bool {
        self.res.caps.cq_moderation && self.res.caps.cq_period_mode_modify
    }

    /// The minimum inline mode every TX WQE must honour (`mlx5_query_min_inline`: the caps,
    /// or the vport context when the caps defer to it).
    pub(crate) fn min_inline(&self) -> InlineMode {
        match self.res.min_inline_mode() {
            0 => InlineMode::None,
            1 => InlineMode::L2,
            2 => InlineMode::Ip,
            _ => InlineMode::TcpUdp,
        }
    }

    /// The vport's traffic counters (QUERY_VPORT_COUNTER, not clearing, as
    /// `mlx5e_update_vport_counters`). Sleeps.
    pub(crate) fn query_counters(&self) -> Result<vport::VportCounters> {
        let out = self.cmd(
            vport::QUERY_VPORT_COUNTER_IN_LEN,
            vport::QUERY_VPORT_COUNTER_OUT_LEN,
            vport::query_vport_counter,
        )?;
        vport::parse_query_vport_counter(&out).map_err(|_| {
            pr_err!(
                "port {}: QUERY_VPORT_COUNTER returned a malformed output\n",
                self.port
            );
            EIO
        })
    }

    /// The port's RX drops for want of a WQE (QUERY_Q_COUNTER `out_of_buffer` of its Q
    /// counter, not clearing, as `mlx5e_update_q_counter`); 0 without a counter. Sleeps.
    pub(crate) fn query_out_of_buffer(&self) -> Result<u32> {
        let Some(id) = self.res.q_counter else {
            return Ok(0);
        };
        let out = self.cmd(
            mkey::QUERY_Q_COUNTER_IN_LEN,
            mkey::QUERY_Q_COUNTER_OUT_LEN,
            |b| mkey::query_q_counter(b, id),
        )?;
        mkey::parse_out_of_buffer(&out).map_err(|_| {
            pr_err!(
                "port {}: QUERY_Q_COUNTER returned a malformed output\n",
                self.port
            );
            EIO
        })
    }

    /// Internal loopback on or off: ACCESS_REG of the PRM's PPLR register, PHY local
    /// loopback (the register mlxsw writes for `ethtool -K loopback`). Sleeps.
    pub(crate) fn set_loopback(&self, on: bool) -> Result {
        let len = vport::access_reg_len(vport::PPLR_LEN);
        self.cmd(len, len, |b| vport::pplr_set_loopback(b, on))?;
        Ok(())
    }

    /// The largest netdev MTU the port takes: the port's PMTU `max_mtu` less the L2 overhead
    /// (`mlx5e_set_netdev_mtu_boundaries`), at most rsnic's own [`crate::family::MAX_MTU`].
    pub(crate) fn max_mtu(&self) -> u32 {
        self.max_mtu
    }

    /// Sets the port's MTU to netdev MTU `mtu`, as `mlx5e_set_dev_port_mtu`: the port's
    /// administrative MTU (PMTU write, `mlx5_set_port_mtu`), the vport context's
    /// (MODIFY_NIC_VPORT_CONTEXT, whose failure mlx5e ignores: logged), then the port's
    /// operational MTU read back (PMTU), logged when the port runs another. Sleeps.
    pub(crate) fn set_mtu(&self, mtu: u32) -> Result {
        let hw = u16::try_from(vport::sw_to_hw_mtu(mtu)).map_err(|_| EINVAL)?;
        let len = vport::access_reg_len(vport::PMTU_LEN);
        self.cmd(len, len, |b| vport::pmtu_set(b, hw))?;
        let _ = self.cmd(
            vport::MODIFY_NIC_VPORT_CONTEXT_IN_LEN,
            vport::MODIFY_NIC_VPORT_CONTEXT_OUT_LEN,
            |b| vport::modify_nic_vport_mtu(b, hw),
        );
        let p = self.read_reg(
            vport::PMTU_LEN,
            vport::pmtu_query,
            vport::parse_pmtu,
            format_args!("PMTU read"),
        )?;
        if p.oper != hw {
            pr_warn!(
                "port {}: port MTU {} is different than netdev mtu {}\n",
                self.port,
                vport::hw_to_sw_mtu(u32::from(p.oper)),
                mtu
            );
        }
        Ok(())
    }

    /// The port's global pause, (rx, tx): a PFCC read, as `mlx5_query_port_pause`. Sleeps.
    pub(crate) fn query_pause(&self) -> Result<(bool, bool)> {
        self.read_reg(
            vport::PFCC_LEN,
            vport::pfcc_query,
            vport::parse_pfcc,
            format_args!("PFCC read"),
        )
    }

    /// The port's troubleshooting status opcode (PDDR's troubleshooting page, monitor group;
    /// 0: nothing to say), as mlx5e's `query_port_status_opcode`. Sleeps.
    pub(crate) fn query_link_down_reason(&self) -> Result<u16> {
        self.read_reg(
            vport::PDDR_LEN,
            vport::pddr_query,
            vport::parse_pddr,
            format_args!("PDDR read"),
        )
    }

    /// Sets the port's global pause: a PFCC write of `pprx` / `pptx`, as
    /// `mlx5_set_port_pause` (the device keeps it: it is the port's state, untouched by
    /// queue or channel changes). Sleeps.
    pub(crate) fn set_pause(&self, rx: bool, tx: bool) -> Result {
        let len = vport::access_reg_len(vport::PFCC_LEN);
        self.cmd(len, len, |b| vport::pfcc_set_pause(b, rx, tx))?;
        Ok(())
    }

    /// The port's IEEE 802.3 counters (PPCNT group 0, not clearing), as
    /// `mlx5e_stats_get_ieee`. Sleeps.
    pub(crate) fn query_ieee_802_3(&self) -> Result<vport::Ieee8023Counters> {
        self.query_ppcnt(vport::PPCNT_IEEE_802_3, vport::parse_ppcnt_ieee_802_3)
    }

    /// The port's RFC 2819 (RMON) counters (PPCNT group 2, not clearing), as
    /// `mlx5e_stats_rmon_get`. Sleeps.
    pub(crate) fn query_rfc_2819(&self) -> Result<vport::Rfc2819Counters> {
        self.query_ppcnt(vport::PPCNT_RFC_2819, vport::parse_ppcnt_rfc_2819)
    }

    /// The port's PTYS register (Ethernet protocols), as `mlx5_query_port_ptys`. Sleeps.
    pub(crate) fn query_ptys(&self) -> Result<vport::Ptys> {
        self.read_reg(
            vport::PTYS_LEN,
            vport::ptys_query,
            vport::parse_ptys,
            format_args!("PTYS read"),
        )
    }

    /// Sets the modes the port advertises (`admin`, PTYS legacy bits) and whether it
    /// negotiates (a PTYS write, as `mlx5_port_set_eth_ptys`). Sleeps.
    pub(crate) fn set_ptys(&self, admin: u32, an_disable: bool) -> Result {
        let len = vport::access_reg_len(vport::PTYS_LEN);
        self.cmd(len, len, |b| vport::ptys_set(b, admin, an_disable))?;
        Ok(())
    }

    /// The port's capabilities (PCAM, as `mlx5_query_pcam_reg`), `None` on a device
    /// without PCAM (`pcam_reg` 0 in its capabilities). Sleeps.
    pub(crate) fn query_pcam(&self) -> Result<Option<vport::Pcam>> {
        if !self.res.caps.pcam_reg {
            return Ok(None);
        }
        self.read_reg(
            vport::PCAM_LEN,
            vport::pcam_query,
            vport::parse_pcam,
            format_args!("PCAM read"),
        )
        .map(Some)
    }

    /// The port's FEC (PPLM, as `mlx5e_get_fec_mode`). Sleeps.
    pub(crate) fn query_pplm(&self) -> Result<vport::Pplm> {
        self.read_reg(
            vport::PPLM_LEN,
            vport::pplm_query,
            vport::parse_pplm,
            format_args!("PPLM read"),
        )
    }

    /// Sets the port's FEC admin fields (a PPLM write, as `mlx5e_set_fec_mode`). Sleeps.
    pub(crate) fn set_pplm(&self, p: &vport::Pplm) -> Result {
        let len = vport::access_reg_len(vport::PPLM_LEN);
        self.cmd(len, len, |b| vport::pplm_set(b, p))?;
        Ok(())
    }

    /// The port's lanes (PMLP `width`, as `fec_num_lanes`). Sleeps.
    pub(crate) fn query_lanes(&self) -> Result<u8> {
        self.read_reg(
            vport::PMLP_LEN,
            vport::pmlp_query,
            vport::parse_pmlp,
            format_args!("PMLP read"),
        )
    }

    /// The FEC block counters (PPCNT physical layer group). Sleeps.
    pub(crate) fn query_phys(&self) -> Result<vport::PhysCounters> {
        self.query_ppcnt(vport::PPCNT_PHYS, vport::parse_ppcnt_phys)
    }

    /// The bits the FEC corrected (PPCNT physical layer statistical group). Sleeps.
    pub(crate) fn query_corrected_bits(&self) -> Result<u64> {
        self.query_ppcnt(
            vport::PPCNT_PHYS_STATISTICAL,
            vport::parse_ppcnt_corrected_bits,
        )
    }

    /// A PPCNT read of counter group `grp`, parsed by `parse`. Sleeps.
    fn query_ppcnt<T>(&self, grp: u8, parse: fn(&[u8]) -> Result<T, FormatError>) -> Result<T> {
        self.read_reg(
            vport::PPCNT_LEN,
            |b| vport::ppcnt_query(b, grp, false),
            parse,
            format_args!("PPCNT read of group {}", grp),
        )
    }

    /// Reads a port register of `reg_len` bytes (ACCESS_REG): `query` builds the read,
    /// `parse` reads the register; a malformed one is logged as `what`'s and is `EIO`.
    /// Sleeps.
    fn read_reg<T>(
        &self,
        reg_len: usize,
        query: impl FnOnce(&mut [u8]) -> core::result::Result<usize, FormatError>,
        parse: impl FnOnce(&[u8]) -> core::result::Result<T, FormatError>,
        what: core::fmt::Arguments<'_>,
    ) -> Result<T> {
        let len = vport::access_reg_len(reg_len);
        let out = self.cmd(len, len, query)?;
        parse(&out).map_err(|_| {
            pr_err!("port {}: {} returned a malformed output\n", self.port, what);
            EIO
        })
    }

    /// Sets the port's administrative state (PAOS, as `mlx5_set_port_admin_status`); when
    /// it goes up, the carrier work runs (as `mlx5e_open` queues `update_carrier_work`).
    /// Sleeps.
    pub(crate) fn set_admin(self: &Arc<Self>, up: bool) -> Result<(), CmdError> {
        let mut reg = [0u8; vport::access_reg_len(vport::PAOS_LEN)];
        let mut out = [0u8; vport::access_reg_len(vport::PAOS_LEN)];
        let st = if up { vport::PORT_UP } else { vport::PORT_DOWN };
        let n = vport::paos_set_admin(&mut reg, st)
            .map_err(|_| CmdError::iface(CmdErrorKind::BadOutput))?;
        self.exec(&reg[..n], &mut out)?;
        if up {
            self.update_carrier();
        }
        Ok(())
    }

    /// Queues the carrier work (unless it is queued already).
    fn update_carrier(self: &Arc<Self>) {
        self.carrier_due.store(true, Ordering::Release);
        self.kick();
    }

    /// Queues the control work (unless it is queued already or teardown began).
    fn kick(self: &Arc<Self>) {
        if !self.stopping.load(Ordering::Acquire) {
            let _ = self.wq.queue().enqueue(self.clone());
        }
    }

    /// The memory key every data segment names (CREATE_MKEY at bring-up, which a brought-up
    /// function always has).
    pub(crate) fn lkey(&self) -> u32 {
        self.res.mkey.unwrap_or(0)
    }

    /// Gives the function its netdev and takes its events on the async vector, then takes
    /// what was posted before (the EQ raised its vector once and waits for a re-arm). With
    /// `None`: releases the vector, then drops the netdev reference.
    pub(crate) fn attach(self: &Arc<Self>, dev: Option<&Device>) {
        let on = dev.is_some();
        if !on {
            self.hw.free_irq(ASYNC_INTR, ASYNC_KEY);
        }
        let old = with_bh(|| core::mem::replace(&mut self.events.lock().dev, dev.map(ARef::from)));
        drop(old);
        if on {
            match Arc::new(AsyncIrq(self.clone()), GFP_KERNEL) {
                Ok(h) => {
                    if let Err(e) = self.hw.request_irq(ASYNC_INTR, ASYNC_KEY, h) {
                        pr_err!("port {}: no async event vector: {:?}\n", self.port, e);
                    }
                }
                Err(_) => pr_err!("port {}: no memory for the event handler\n", self.port),
            }
            with_bh(|| self.irq());
        }
    }

    /// The async vector fired: consumes the EQEs, re-arms the EQ, and queues the control
    /// work if a port changed or the firmware asked for pages (served there, not here).
    /// Interrupt-like context (does not sleep).
    fn irq(self: &Arc<Self>) {
        let bar = self.hw.bar();
        let mut changed = false;
        let mut pages = 0i32;
        with_bh(|| {
            if let Some(eq) = self.events.lock().eq.as_mut() {
                eq.poll(ASYNC_EQ_BUDGET, &bar, &bar, |e| match e {
                    // Requests for other functions (an ECPF's or a PF's VFs) are not this
                    // driver's to serve.
                    Event::PageRequest {
                        func_id: 0,
                        pages: n,
                    } => {
                        pages = pages.saturating_add(n);
                    }
                    e => changed |= e.link_up().is_some(),
                });
            }
        });
        if pages != 0 {
            let _ = self
                .pages_due
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |d| {
                    Some(d.saturating_add(pages))
                });
            self.kick();
        }
        if changed {
            self.update_carrier();
        }
    }

    /// Tears the function down: stops the carrier work, destroys the async EQ, switches the
    /// command queue back to polling and destroys the command EQ, then runs main.c's unload
    /// order. The first failed command is returned (the others still ran).
    /// The caller has routed the async vector away. Sleeps.
    pub(crate) fn tear_down(&self) -> Option<CmdError> {
        self.stopping.store(true, Ordering::Release);
        self.wq.flush();
        let bar = self.hw.bar();
        // The channels closed before (ndo_stop): normally nothing is left.
        let rss = self.rss.lock().take();
        if let Some(rss) = rss {
            self.destroy_rss(&rss);
        }
        let mut fw = self.pages.lock();
        let mut q = self.cmd.lock();
        let mut first = None;
        let mut record = |r: Result<(), CmdError>| {
            if first.is_none() {
                first = r.err();
            }
        };
        record(destroy_obj(&mut q, &bar, |b| {
            res::destroy_tis(b, self.tisn)
        }));
        let eq = with_bh(|| self.events.lock().eq.take());
        if let Some(eq) = eq {
            record(destroy_obj(&mut q, &bar, |b| res::destroy_eq(b, eq.eqn())));
            // The ring is freed only now that the device has stopped writing it.
            drop(eq);
        }
        // destroy_async_eqs: polling mode, then the command EQ goes.
        record(cmd_events::use_polling(&mut q, &self.hw, &bar));
        let t = tear_down(&mut q, &bar, &self.res, &mut fw, self.port);
        first.or(t)
    }
}

/// Runs one command on `q` to completion: in polling mode sleeping between polls of the
/// ownership bit, in events mode sleeping until its completion EQE ([`cmd_events`]).
fn run_cmd(q: &mut CmdIf, bar: &Bar<'_>, input: &[u8], out: &mut [u8]) -> Result<usize, CmdError> {
    let opcode = input
        .get(0..2)
        .map_or(0, |b| u16::from_be_bytes([b[0], b[1]]));
    // A device that is gone answers nothing: the command fails at once (as mlx5's in the
    // internal error state), naming itself.
    if bar.is_gone() {
        q.q.abandon();
        return Err(CmdError {
            opcode,
            op_mod: input
                .get(6..8)
                .map_or(0, |b| u16::from_be_bytes([b[0], b[1]])),
            kind: CmdErrorKind::Gone,
        });
    }
    let ev = match q.q.mode() {
        CmdMode::Events => q.ev.as_deref(),
        CmdMode::Polling => None,
    };
    if let Some(ev) = ev {
        ev.rearm_wait();
    }
    q.q.post(input, out.len(), bar, bar)?;
    if let Some(ev) = ev {
        return cmd_events::wait_events(&mut q.q, ev, q.port, opcode, bar, out);
    }
    let q = &mut q.q;
    let mut wait = PollWait::new();
    loop {
        if let CmdPoll::Done(n) = q.poll(bar, out)? {
            return Ok(n);
        }
        if gone(bar, &wait) {
            return Err(q.gone());
        }
        if !wait.sleep(CMD_TIMEOUT_MS) {
            return Err(q.time_out());
        }
    }
}

/// How often a slow command looks whether the device is still there, in ms of waiting.
const GONE_CHECK_MS: u32 = 16;

/// Whether a command waiting (`wait` so far) should give up because the device is gone. The
/// completion is in DMA memory, which a removed device never writes: a slow command looks
/// now and then whether the function is still on the bus (as mlx5's health poll finds a
/// gone device by its all-ones reads), so that it does not wait out its timeout for nothing.
fn gone(bar: &Bar<'_>, wait: &PollWait) -> bool {
    bar.is_gone() || (wait.due(GONE_CHECK_MS) && !bar.check_present())
}

/// A command's format was refused by its builder (a driver bug).
fn bad_format(_: crate::hwif::mlx5::cmd::FormatError) -> BringupError {
    BringupError::Cmd(CmdError::iface(CmdErrorKind::BadOutput))
}

/// Runs a DESTROY_* command `build` writes, on `q`.
fn destroy_obj(
    q: &mut CmdIf,
    bar: &Bar<'_>,
    build: impl FnOnce(&mut [u8]) -> core::result::Result<usize, crate::hwif::mlx5::cmd::FormatError>,
) -> Result<(), CmdError> {
    let mut inp = [0u8; res::SHORT_LEN];
    let mut out = [0u8; res::OUT_LEN];
    let n = build(&mut inp).map_err(|_| CmdError::iface(CmdErrorKind::BadOutput))?;
    run_cmd(q, bar, &inp[..n], &mut out).map(|_| ())
}

/// Creates the function's async EQ (port-change events on vector [`ASYNC_INTR`]), armed.
fn create_async_eq(
    q: &mut CmdIf,
    bar: &Bar<'_>,
    dma: &Arc<DmaDevice>,
    r: &Resources,
) -> core::result::Result<Eq<KCoherent>, BringupError> {
    let bad = bad_format;
    let uar = r.uar.ok_or(BringupError::Kernel(EINVAL))?;
    let ring = eq_ring(dma, ASYNC_EQ_LOG)?;
    let pages = queues::pas_list(&ring)?;
    let p = CreateEq {
        log_eq_size: ASYNC_EQ_LOG,
        uar_page: uar,
        intr: ASYNC_INTR as u16,
        event_bitmask: 1 << EVENT_TYPE_PORT_CHANGE | 1 << pages::EVENT_TYPE_PAGE_REQUEST,
        pas: Pas::list(&pages, ring.size()),
    };
    let mut inp = KVec::from_elem(0u8, res::create_eq_len(&p), GFP_KERNEL).map_err(|_| ENOMEM)?;
    let mut out = [0u8; res::SHORT_LEN];
    let n = res::create_eq(&mut inp, &p).map_err(bad)?;
    run_cmd(q, bar, &inp[..n], &mut out).map_err(BringupError::Cmd)?;
    let eqn = res::parse_create_eq(&out).map_err(bad)?;
    // The ring was initialised before the command: the page request the firmware posts at
    // once is already in it.
    let mut eq = Eq::created(ring, ASYNC_EQ_LOG, eqn, uar * 4096).map_err(|_| EINVAL)?;
    eq.update_ci(true, bar, bar);
    Ok(eq)
}

/// Runs a teardown of what `res` records to its end, sleeping between polls: the firmware's
/// pages are taken back after TEARDOWN_HCA and every page of `fw` is freed at the end
/// (kept only when the firmware refused TEARDOWN_HCA).
fn tear_down(
    q: &mut CmdIf,
    bar: &Bar<'_>,
    res: &Resources,
    fw: &mut FwPages,
    port: usize,
) -> Option<CmdError> {
    let mut t = Teardown::new(res);
    let mut out = [0u8; 64];
    let mut wait = PollWait::new();
    let mut reclaim_err = None;
    // Nothing is posted to a device that is gone: the queue refuses, the teardown ends.
    if bar.is_gone() {
        q.q.abandon();
    }
    let err = loop {
        match t.poll(&mut q.q, bar, bar, &mut out) {
            Progress::Done => break None,
            Progress::Reclaim => {
                if let Err(e) = fw.reclaim(q, bar, port) {
                    reclaim_err.get_or_insert(match e {
                        BringupError::Cmd(e) => e,
                        BringupError::Kernel(_) => CmdError {
                            opcode: op::MANAGE_PAGES,
                            op_mod: pages::TAKE,
                            kind: CmdErrorKind::BadOutput,
                        },
                    });
                }
                t.reclaimed();
            }
            _ if gone(bar, &wait) => break Some(q.q.gone()),
            // The rest cannot be posted on an abandoned queue.
            _ if !wait.sleep(CMD_TIMEOUT_MS) => break Some(q.q.time_out()),
            _ => {}
        }
    };
    let first = t.first_error().or(reclaim_err).or(err);
    let refused = t.first_error().is_some_and(|e| {
        e.opcode == op::TEARDOWN_HCA && matches!(e.kind, CmdErrorKind::Status { .. })
    });
    if refused {
        fw.abandon(port);
    } else {
        fw.release(port);
    }
    first
}

/// Why a bring-up failed.
pub(crate) enum BringupError {
    /// A command failed (reported with its name, status and syndrome).
    Cmd(CmdError),
    /// Memory for the command queue or the EQ.
    Kernel(Error),
}

crate::family::kernel_error_from!(BringupError);

/// The handler of a function's async vector.
struct AsyncIrq(Arc<Func>);

impl IrqHandler for AsyncIrq {
    fn irq(&self) {
        self.0.irq();
    }
}
