// SPDX-License-Identifier: GPL-2.0

//! The kernel glue of a ConnectX function's control plane: its command queue in coherent DMA
//! memory, driven by `dp::mlx5::cmd` with sleeping polls (process context only), the
//! bring-up of main.c at probe and its teardown at removal, the port's administrative state,
//! and its asynchronous event queue, whose port-change events set the carrier.
//!
//! The device completes a command when its engine runs (the command doorbell queues the
//! engine's work, as any register write does); the caller sleeps a millisecond between polls,
//! as `mlx5_cmd_invoke` in polling mode does. One command is outstanding at a time: the
//! queue is behind a mutex.
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

use crate::bus::{Bar, Function, IrqHandler, IrqKey};
use crate::channel::params::MAX_CHANNELS;
use crate::dp::hw::Coherent;
use crate::dp::mlx5::cmd::{
    fs::{self, Tt},
    mkey, op,
    pages::{self, BATCH_PAGES, FW_PAGE_SIZE, MAX_FW_PAGES},
    queue::{CMDQ_PAGE_SIZE, MBOX_STRIDE},
    res::{self, CreateEq, EVENT_TYPE_PORT_CHANGE},
    seq::{Bringup, Progress, Resources, Teardown, SEQ_OUT_LEN},
    vport, CmdError, CmdErrorKind, CmdPoll, CmdQueue, FormatError, Pas,
};
use crate::dp::mlx5::eq::{Eq, Event};
use crate::dp::mlx5::tx::InlineMode;
use crate::kdma::KCoherent;
use crate::kernel_ext::{
    dma::DmaDevice,
    net::device::{Device, MacChange, RxMode},
    sync::{with_bh, PollWait},
    wq::OwnedQueue,
};
use crate::ntuple::{Dest, Rule, MAX_RULES};
use crate::rss::{Fields, Flow, RssChange, RssSpec, MAX_CONTEXTS};
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

/// The receive side's objects, as mlx5e's `mlx5e_rss`, its TTC table and its ethtool
/// steering: the RQT, an indirect TIR per hashed traffic type ([`Tt::HASHED`]), the
/// traffic-type flow table that sends each type to its TIR (level 1), a direct TIR per
/// channel over the channel's direct RQT (one entry, the channel's RQ: mlx5e's
/// `rx_res->channels[ix].direct_rqt`, which `mlx5e_rx_res_xsk_update` points at the XSK RQ
/// and back), the L2 table ahead of it (level 1, [`L2`]), the rule table ahead of that
/// (level 0, the root; misses go on to the L2 table) with the ntuple rules, and the
/// additional RSS contexts. Only what exists is recorded: a creation that fails half way
/// destroys exactly that.
struct Rss {
    rqtn: u32,
    /// The TIRs, in [`Tt::HASHED`] order.
    tirs: [Option<u32>; 6],
    /// The traffic-type table and its groups ([`fs::TTC_GROUPS`] order).
    ft: Option<u32>,
    groups: [Option<u32>; 3],
    /// Entries set, one bit per flow index.
    entries: u8,
    /// The rule table is the NIC RX root.
    root: bool,
    /// Direct TIRs, by channel (`action Q` rules forward to them; mlx5e's direct TIRs).
    direct: [Option<u32>; MAX_CHANNELS],
    /// The direct TIRs' RQTs, by channel, with the RQ each names.
    direct_rqt: [Option<(u32, u32)>; MAX_CHANNELS],
    /// The rule table.
    rule_ft: Option<u32>,
    /// Each location's rule: its group (one index of the rule table, masking what the rule
    /// gives) and whether its entry is set.
    rules: [Option<(u32, bool)>; MAX_RULES],
    /// Additional RSS contexts, by id - 1.
    ctxs: [Option<Ctx>; MAX_CONTEXTS],
    /// The L2 table.
    l2: L2,
}

/// The L2 table (mlx5e's `fs->l2`): frames by destination MAC on to the traffic-type table;
/// what misses is dropped. Its groups are [`fs::L2_GROUPS`]; `slots` holds the address of
/// each full-match index that has an entry.
#[derive(Clone, Copy)]
struct L2 {
    ft: Option<u32>,
    groups: [Option<u32>; 3],
    slots: [Option<[u8; 6]>; fs::L2_FULL],
    allmulti: bool,
    promisc: bool,
}

impl L2 {
    const NONE: Self = Self {
        ft: None,
        groups: [None; 3],
        slots: [None; fs::L2_FULL],
        allmulti: false,
        promisc: false,
    };
}

/// An additional RSS context's objects (mlx5e's `mlx5e_rss` of a context): its RQT and a
/// TIR per hashed traffic type, which rules of `context C` forward to.
#[derive(Clone, Copy)]
struct Ctx {
    rqtn: u32,
    /// In [`Tt::HASHED`] order.
    tirs: [Option<u32>; 6],
}

/// log2 of the rule table's flow indices ([`MAX_RULES`]).
const RULE_LOG_SIZE: u8 = 5;
/// Level of the rule table; the L2 table's is one more, the traffic-type table's two more.
const RULE_LEVEL: u8 = 0;
const _: () = assert!(1 << RULE_LOG_SIZE == MAX_RULES);

/// Entries of the port's RQT: mlx5e's 256 (`mlx5e_rqt_size` for up to 32 channels), fewer
/// if the device's `log_max_rqt_size` is lower.
pub(crate) const RQT_SIZE: usize = 256;

/// The ethtool flow whose hash fields a traffic type's TIR takes (anything not IP shares
/// the IPv4 TIR).
fn tt_flow(tt: Tt) -> Flow {
    match tt {
        Tt::Tcp4 => Flow::Tcp4,
        Tt::Tcp6 => Flow::Tcp6,
        Tt::Udp4 => Flow::Udp4,
        Tt::Udp6 => Flow::Udp6,
        Tt::Ip4 | Tt::Any => Flow::Ip4,
        Tt::Ip6 => Flow::Ip6,
    }
}

/// The TIR hash parameters of traffic type `tt` under `spec` (mlx5e_rss's
/// `mlx5e_rss_get_tt_config` with the ethtool fields).
fn tir_hash(tt: Tt, spec: &RssSpec<'_>) -> res::TirHash {
    let f = spec.fields(tt_flow(tt));
    let sel = [
        (Fields::SRC_IP, res::HASH_SEL_SRC_IP),
        (Fields::DST_IP, res::HASH_SEL_DST_IP),
        (Fields::SRC_PORT, res::HASH_SEL_L4_SPORT),
        (Fields::DST_PORT, res::HASH_SEL_L4_DPORT),
    ]
    .iter()
    .filter(|(x, _)| f.has(*x))
    .fold(0, |m, (_, b)| m | b);
    res::TirHash {
        key: *spec.key,
        l3_prot_type: tt.l3_prot_type(),
        l4_prot_type: tt.l4_prot_type(),
        selected_fields: sel,
    }
}
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
            Error::from_errno(crate::dp::mlx5::cmd::queue::status_to_errno(status))
        }
        CmdErrorKind::Timeout => crate::kernel_ext::net::etimedout(),
        CmdErrorKind::Gone => ENODEV,
        CmdErrorKind::TooManyPages { .. } => ENOMEM,
        _ => EIO,
    }
}

/// A ring of EQEs with every owner bit at 1 (`init_eq_buf`: hardware owned).
fn eq_ring(dma: &Arc<DmaDevice>, log: u8) -> Result<KCoherent> {
    let ring = KCoherent::alloc(dma, 64 << log)?;
    for i in 0..(1usize << log) {
        ring.write(i * 64 + 63, &[1]);
    }
    Ok(ring)
}

/// The pages the function's firmware holds: 4 KiB coherent allocations the driver gave
/// (MANAGE_PAGES GIVE) and keeps until the firmware returns them (TAKE). A slot of `None` was
/// returned and is reused.
struct FwPages {
    pages: KVec<Option<KCoherent>>,
    /// Pages given and not returned.
    held: u32,
}

impl FwPages {
    fn new() -> Self {
        Self {
            pages: KVec::new(),
            held: 0,
        }
    }

    /// Gives the firmware `n` new pages, in MANAGE_PAGES of at most [`BATCH_PAGES`]; refuses
    /// to hold more than [`MAX_FW_PAGES`] in all (-ENOMEM, the firmware's request named). A
    /// batch the firmware refused is freed; what it took before stays given.
    fn give(
        &mut self,
        q: &mut CmdQueue<KCoherent>,
        bar: &Bar<'_>,
        dma: &Arc<DmaDevice>,
        n: u32,
    ) -> core::result::Result<(), BringupError> {
        if n > MAX_FW_PAGES.saturating_sub(self.held) {
            return Err(BringupError::Cmd(CmdError {
                opcode: op::MANAGE_PAGES,
                op_mod: pages::GIVE,
                kind: CmdErrorKind::TooManyPages {
                    asked: n,
                    cap: MAX_FW_PAGES,
                },
            }));
        }
        let mut left = n;
        while left > 0 {
            let k = left.min(BATCH_PAGES) as usize;
            let mut batch = KVec::with_capacity(k, GFP_KERNEL)?;
            let mut addrs = KVec::with_capacity(k, GFP_KERNEL)?;
            for _ in 0..k {
                let p = KCoherent::alloc(dma, FW_PAGE_SIZE)?;
                if !pages::page_ok(p.dma_addr()) {
                    // dma_alloc_coherent gives page-aligned memory; anything else cannot
                    // be a firmware page.
                    return Err(BringupError::Kernel(EINVAL));
                }
                addrs.push(p.dma_addr(), GFP_KERNEL)?;
                batch.push(p, GFP_KERNEL)?;
            }
            // Room for the batch before the firmware owns it: nothing can fail after.
            let free = self.pages.iter().filter(|p| p.is_none()).count();
            self.pages.reserve(k.saturating_sub(free), GFP_KERNEL)?;
            let mut inp = KVec::from_elem(0u8, pages::give_len(k), GFP_KERNEL)?;
            let mut out = [0u8; res::OUT_LEN];
            let len = pages::give_pages(&mut inp, &addrs).map_err(bad_format)?;
            run_cmd(q, bar, &inp[..len], &mut out).map_err(BringupError::Cmd)?;
            for p in batch {
                self.keep(p);
            }
            left -= k as u32;
        }
        Ok(())
    }

    /// Records a page the firmware now holds (room was reserved).
    fn keep(&mut self, p: KCoherent) {
        self.held += 1;
        if let Some(slot) = self.pages.iter_mut().find(|s| s.is_none()) {
            *slot = Some(p);
        } else if self.pages.len() < self.pages.capacity() {
            // Within the capacity: no allocation, cannot fail.
            let _ = self.pages.push(Some(p), GFP_KERNEL);
        } else {
            // Cannot happen (room was reserved); never free a page the firmware holds.
            core::mem::forget(p);
        }
    }

    /// Takes back up to `n` pages (one MANAGE_PAGES TAKE of at most [`BATCH_PAGES`]) and
    /// frees those returned; returns how many came back. A returned address the driver
    /// never gave is not freed (it is not the driver's) and is reported.
    fn take(
        &mut self,
        q: &mut CmdQueue<KCoherent>,
        bar: &Bar<'_>,
        port: usize,
        n: u32,
    ) -> core::result::Result<u32, BringupError> {
        let k = n.min(BATCH_PAGES);
        if k == 0 {
            return Ok(0);
        }
        let mut inp = [0u8; res::SHORT_LEN];
        let mut out = KVec::from_elem(0u8, pages::take_out_len(k as usize), GFP_KERNEL)?;
        let len = pages::take_pages(&mut inp, k).map_err(bad_format)?;
        run_cmd(q, bar, &inp[..len], &mut out).map_err(BringupError::Cmd)?;
        let t = pages::parse_take(&out, k).map_err(|_| {
            BringupError::Cmd(CmdError {
                opcode: op::MANAGE_PAGES,
                op_mod: pages::TAKE,
                kind: CmdErrorKind::BadOutput,
            })
        })?;
        let mut strangers = 0u32;
        for a in t.iter() {
            // The firmware returns the pages given last first: search from the end.
            let slot = self
                .pages
                .iter_mut()
                .rev()
                .find(|s| s.as_ref().is_some_and(|p| p.dma_addr() == a));
            match slot {
                Some(s) => {
                    *s = None;
                    self.held -= 1;
                }
                None => strangers += 1,
            }
        }
        if strangers > 0 {
            pr_err!(
                "port {}: MANAGE_PAGES returned {} pages the driver never gave\n",
                port,
                strangers
            );
        }
        Ok(t.len() as u32)
    }

    /// `mlx5_reclaim_startup_pages`: TAKE until the firmware holds none of the driver's
    /// pages, or returns none, or a command fails (returned).
    fn reclaim(
        &mut self,
        q: &mut CmdQueue<KCoherent>,
        bar: &Bar<'_>,
        port: usize,
    ) -> core::result::Result<(), BringupError> {
        while self.held > 0 {
            if self.take(q, bar, port, self.held)? == 0 {
                pr_warn!(
                    "port {}: the firmware returns none of its last {} pages\n",
                    port,
                    self.held
                );
                break;
            }
        }
        Ok(())
    }

    /// Frees every page still kept (the function is disabled, or never got to hold them).
    fn release(&mut self, port: usize) {
        if self.held > 0 {
            pr_warn!(
                "port {}: freeing {} pages the firmware did not return\n",
                port,
                self.held
            );
        }
        for s in self.pages.iter_mut() {
            *s = None;
        }
        self.held = 0;
    }

    /// Keeps every page for good: the firmware refused TEARDOWN_HCA and may still use them.
    /// (Dropping an `FwPages` that still holds pages does the same.)
    fn abandon(&mut self, port: usize) {
        if self.held > 0 {
            pr_err!(
                "port {}: TEARDOWN_HCA failed: leaving {} pages to the firmware\n",
                port,
                self.held
            );
        }
        for s in self.pages.iter_mut() {
            if let Some(p) = s.take() {
                core::mem::forget(p);
            }
        }
        self.held = 0;
    }
}

impl Drop for FwPages {
    /// Pages neither returned nor released (a path that did not tear the function down)
    /// may still be the firmware's: they stay allocated rather than freed under it.
    fn drop(&mut self) {
        if self.held > 0 {
            pr_err!(
                "{} firmware pages dropped without a teardown: left allocated\n",
                self.held
            );
            for s in self.pages.iter_mut() {
                if let Some(p) = s.take() {
                    core::mem::forget(p);
                }
            }
        }
    }
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
    cmd: Mutex<CmdQueue<KCoherent>>,
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
    /// The RSS objects (while channels are open).
    #[pin]
    rss: Mutex<Option<Rss>>,
    /// What the stack asks the port to receive, as `ndo_set_rx_mode` last saw it (with the
    /// address `ndo_set_mac_address` set since). Written in atomic context.
    #[pin]
    rx: SpinLock<RxMode>,
    /// The receive filter is to be programmed (by the control work).
    rx_due: AtomicBool,
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

    /// Brings the function of `port` up (main.c's order, see `dp::mlx5::cmd::seq`) and
    /// creates its async EQ for port-change events, armed. On a failure, undoes what was
    /// done and returns the failed command, which the caller reports. Sleeps.
    pub(crate) fn bring_up(hw: &Arc<Function>) -> core::result::Result<Arc<Self>, BringupError> {
        let (dma, port) = (hw.dma(), hw.index());
        let alloc = |size| KCoherent::alloc(dma, size).map_err(BringupError::Kernel);
        let mut q = CmdQueue::new(alloc(CMDQ_PAGE_SIZE)?, alloc(MBOX_SLOTS * MBOX_STRIDE)?)
            .map_err(BringupError::Cmd)?;
        let mut out = KVec::from_elem(0u8, SEQ_OUT_LEN, GFP_KERNEL).map_err(|_| ENOMEM)?;
        let bar = hw.bar();
        let mut b = Bringup::new();
        let mut wait = PollWait::new();
        let mut fw = FwPages::new();
        let r = loop {
            match b.poll(&mut q, &bar, &bar, &mut out) {
                Ok(Progress::Done) => break Ok(()),
                Ok(Progress::GivePages(n)) => match fw.give(&mut q, &bar, dma, n) {
                    Ok(()) => b.pages_given(),
                    Err(e) => break Err(e),
                },
                Ok(Progress::Pending) if gone(&bar, &wait) => {
                    break Err(BringupError::Cmd(q.gone()))
                }
                Ok(Progress::Pending) if wait.sleep(CMD_TIMEOUT_MS) => {}
                Ok(Progress::Pending) => break Err(BringupError::Cmd(q.time_out())),
                Ok(Progress::Reclaim) => break Err(BringupError::Kernel(EINVAL)),
                Err(e) => break Err(BringupError::Cmd(e)),
            }
        };
        let res = *b.resources();
        let mut eq = None;
        let mut tisn = None;
        let mut wq = None;
        let r = r.and_then(|()| {
            eq = Some(create_async_eq(&mut q, &bar, dma, &res)?);
            // mlx5e_create_tises: the TIS of the port's SQs, in its transport domain.
            let mut inp = [0u8; res::CREATE_TIS_IN_LEN];
            let mut out = [0u8; res::SHORT_LEN];
            let n = res::create_tis(&mut inp, res.td.unwrap_or(0)).map_err(bad_format)?;
            run_cmd(&mut q, &bar, &inp[..n], &mut out).map_err(BringupError::Cmd)?;
            tisn = Some(res::parse_create_tis(&out).map_err(bad_format)?);
            // The control work's queue: without it, what was made is undone too.
            wq = Some(OwnedQueue::new(c_str!("rsnic-ctl"), port as i32)?);
            Ok(())
        });
        if let Err(e) = r {
            let mut first = None;
            if let Some(eq) = eq {
                first = destroy_obj(&mut q, &bar, |b| res::destroy_eq(b, eq.eqn())).err();
            }
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
                rss <- new_mutex!(None, "rsnic::mlx5::Func::rss"),
                rx <- new_spinlock!(RxMode::new(res.vport.mac), "rsnic::mlx5::Func::rx"),
                rx_due: AtomicBool::new(false),
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
        build: impl FnOnce(&mut [u8]) -> core::result::Result<usize, crate::dp::mlx5::cmd::FormatError>,
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
            // A device that is gone was logged once (`realpci.rs`); its teardown's every
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
        parse: impl FnOnce(&[u8]) -> core::result::Result<u32, crate::dp::mlx5::cmd::FormatError>,
    ) -> Result<u32> {
        parse(out).map_err(|_| {
            pr_err!(
                "port {}: a create command returned a malformed output\n",
                self.port
            );
            EIO
        })
    }

    /// CREATE_EQ for a channel's completions on vector `intr` of the function: returns the
    /// EQ number and the ring (the caller records the number before anything can fail).
    pub(crate) fn create_comp_eq(
        &self,
        dma: &Arc<DmaDevice>,
        intr: u16,
    ) -> Result<(u8, KCoherent)> {
        let ring = eq_ring(dma, COMP_EQ_LOG)?;
        let p = CreateEq {
            log_eq_size: COMP_EQ_LOG,
            uar_page: self.res.uar.unwrap_or(0),
            intr,
            event_bitmask: 0,
            pas: Pas {
                addr: ring.dma_addr(),
                size: ring.size(),
            },
        };
        let out = self.cmd(res::create_eq_len(&p), res::SHORT_LEN, |b| {
            res::create_eq(b, &p)
        })?;
        let eqn = res::parse_create_eq(&out).map_err(|_| EIO)?;
        Ok((eqn, ring))
    }

    /// CREATE_CQ of `2^log` CQEs in `buf`, doorbell record at bus address `dbr`, completion
    /// events to EQ `eqn`, moderated as `moder`; `compress`: basic CQE compression (RX CQs
    /// only, the caller checked the capability).
    pub(crate) fn create_cq(
        &self,
        buf: &KCoherent,
        log: u8,
        dbr: u64,
        eqn: u8,
        compress: bool,
        moder: res::CqModeration,
    ) -> Result<u32> {
        let p = res::CreateCq {
            log_cq_size: log,
            uar_page: self.res.uar.unwrap_or(0),
            c_eqn: eqn,
            dbr_addr: dbr,
            cqe_comp_en: compress,
            mini_cqe_res_format: if compress {
                res::MINI_CQE_FORMAT_CSUM
            } else {
                0
            },
            pas: Pas {
                addr: buf.dma_addr(),
                size: buf.size(),
            },
        };
        let out = self.cmd(res::create_cq_len(&p), res::SHORT_LEN, |b| {
            let n = res::create_cq(b, &p)?;
            res::set_create_cq_moderation(b, &moder)?;
            Ok(n)
        })?;
        self.created(&out, res::parse_create_cq)
    }

    /// MODIFY_CQ: CQ `cqn`'s moderation becomes `moder` (the CQ stays as it is otherwise).
    pub(crate) fn modify_cq_moderation(&self, cqn: u32, moder: res::CqModeration) -> Result {
        self.cmd(res::MODIFY_CQ_LEN, res::SHORT_LEN, |b| {
            res::modify_cq_moderation(b, cqn, &moder)
        })?;
        Ok(())
    }

    /// CREATE_SQ (in RST) of `2^log` WQEBBs in `buf` completing on `cqn`, through the port's
    /// TIS; [`Func::ready_sq`] moves it to RDY.
    pub(crate) fn create_sq(&self, buf: &KCoherent, log: u8, dbr: u64, cqn: u32) -> Result<u32> {
        let p = res::CreateSq {
            cqn,
            tisn: self.tisn,
            // Always the mode the device asked for (mlx5e sets it when the caps defer to the
            // vport context; a device that requires it by caps ignores the field).
            min_wqe_inline_mode: self.res.min_inline_mode(),
            wq: res::Wq {
                pd: self.res.pd.unwrap_or(0),
                uar_page: self.res.uar.unwrap_or(0),
                dbr_addr: dbr,
                log_wq_stride: res::SQ_LOG_WQ_STRIDE,
                log_wq_sz: log,
                pas: Pas {
                    addr: buf.dma_addr(),
                    size: buf.size(),
                },
            },
        };
        let out = self.cmd(res::create_sq_len(&p), res::SHORT_LEN, |b| {
            res::create_sq(b, &p)
        })?;
        self.created(&out, res::parse_create_sq)
    }

    /// MODIFY_SQ RST -> RDY.
    pub(crate) fn ready_sq(&self, sqn: u32) -> Result {
        self.cmd(res::MODIFY_Q_IN_LEN, res::OUT_LEN, |b| {
            res::modify_sq(b, sqn, res::QState::Rst, res::QState::Rdy)
        })?;
        Ok(())
    }

    /// CREATE_RQ (in RST) of `2^log` WQEs of `2^log_stride` bytes in `buf` completing on
    /// `cqn`, stripping received VLAN tags unless `vsd`; [`Func::ready_rq`] moves it to RDY.
    pub(crate) fn create_rq(
        &self,
        buf: &KCoherent,
        log: u8,
        log_stride: u8,
        dbr: u64,
        cqn: u32,
        vsd: bool,
    ) -> Result<u32> {
        let p = res::CreateRq {
            cqn,
            vsd,
            // The port's Q counter counts the RQ's drops (`rx_out_of_buffer`).
            counter_set_id: self.res.q_counter.unwrap_or(0),
            wq: res::Wq {
                pd: self.res.pd.unwrap_or(0),
                uar_page: 0,
                dbr_addr: dbr,
                log_wq_stride: log_stride,
                log_wq_sz: log,
                pas: Pas {
                    addr: buf.dma_addr(),
                    size: buf.size(),
                },
            },
        };
        let out = self.cmd(res::create_rq_len(&p), res::SHORT_LEN, |b| {
            res::create_rq(b, &p)
        })?;
        self.created(&out, res::parse_create_rq)
    }

    /// Turns VLAN stripping of ready RQ `rqn` off (`vsd`) or on in place (MODIFY_RQ RDY ->
    /// RDY, `mlx5e_modify_rq_vsd`). Sleeps.
    pub(crate) fn set_rq_vsd(&self, rqn: u32, vsd: bool) -> Result {
        self.cmd(res::MODIFY_Q_IN_LEN, res::OUT_LEN, |b| {
            res::modify_rq_vsd(b, rqn, vsd)
        })?;
        Ok(())
    }

    /// MODIFY_RQ RST -> RDY.
    pub(crate) fn ready_rq(&self, rqn: u32) -> Result {
        self.cmd(res::MODIFY_Q_IN_LEN, res::OUT_LEN, |b| {
            res::modify_rq(b, rqn, res::QState::Rst, res::QState::Rdy)
        })?;
        Ok(())
    }

    /// Moves an SQ (`sq`) or RQ to RST for recovery (mlx5e's `mlx5e_tx_reporter_err_cqe_recover`
    /// and RQ recovery): QUERY_SQ/RQ for its state; RDY (the driver found the fault, the
    /// device did not stop the queue) goes to ERR first; then ERR -> RST. The device no
    /// longer touches the queue's ring when this returns. Sleeps.
    pub(crate) fn queue_to_reset(&self, sq: bool, qn: u32) -> Result {
        let out = self.cmd(res::SHORT_LEN, res::QUERY_Q_OUT_LEN, |b| {
            if sq {
                res::query_sq(b, qn)
            } else {
                res::query_rq(b, qn)
            }
        })?;
        let modify = |cur, next| {
            self.cmd(res::MODIFY_Q_IN_LEN, res::OUT_LEN, |b| {
                if sq {
                    res::modify_sq(b, qn, cur, next)
                } else {
                    res::modify_rq(b, qn, cur, next)
                }
            })
            .map(|_| ())
        };
        match res::parse_query_q_state(&out).map_err(|_| EIO)? {
            res::QState::Rst => return Ok(()),
            res::QState::Rdy => modify(res::QState::Rdy, res::QState::Err)?,
            res::QState::Err => {}
        }
        modify(res::QState::Err, res::QState::Rst)
    }

    /// Destroys an object (DESTROY_RQ/SQ/CQ/EQ): errors are logged and otherwise ignored, as
    /// mlx5e's destroy paths do.
    pub(crate) fn destroy(
        &self,
        build: impl FnOnce(&mut [u8]) -> core::result::Result<usize, crate::dp::mlx5::cmd::FormatError>,
    ) {
        let _ = self.cmd(res::SHORT_LEN, res::OUT_LEN, build);
    }

    /// Steers received frames as `spec` says (mlx5e's RSS): the first time, CREATE_RQT of
    /// the table's RQs, CREATE_TIR per traffic type (its fields, the key), the traffic-type
    /// flow table with its groups and entries, and SET_FLOW_TABLE_ROOT; after, in place,
    /// MODIFY_RQT for a table change and MODIFY_TIR of every TIR for a key or field change
    /// (hitless: no queue or object is re-created). `None` destroys it all (nothing is
    /// received). Sleeps.
    pub(crate) fn set_rss(&self, spec: Option<&RssSpec<'_>>, change: RssChange) -> Result {
        let mut rss = self.rss.lock();
        let Some(spec) = spec else {
            if let Some(r) = rss.take() {
                self.destroy_rss(&r);
            }
            return Ok(());
        };
        let (rqns, max) = Self::table_rqns(spec)?;
        let Some(r) = rss.as_mut() else {
            *rss = Some(self.create_rss(&rqns, max, spec)?);
            return Ok(());
        };
        self.update_in_place(r.rqtn, &r.tirs, &rqns, max, spec, change)?;
        if change.table {
            // A channel whose RQ changed (its XSK RQ came or went): its direct RQT too.
            for (&rqn, d) in spec.rqns.iter().zip(r.direct_rqt.iter_mut()) {
                if let Some((rqtn, named)) = d.as_mut().filter(|(_, named)| *named != rqn) {
                    self.cmd(res::rqt_len(1), res::OUT_LEN, |b| {
                        res::modify_rqt(b, *rqtn, 1, &[rqn])
                    })?;
                    *named = rqn;
                }
            }
        }
        Ok(())
    }

    /// The in-place update of an RQT and its TIRs (the main table's or a context's):
    /// MODIFY_RQT for a table change, MODIFY_TIR of every TIR for a key or field change.
    fn update_in_place(
        &self,
        rqtn: u32,
        tirs: &[Option<u32>],
        rqns: &[u32],
        max: u16,
        spec: &RssSpec<'_>,
        change: RssChange,
    ) -> Result {
        if change.table {
            self.cmd(res::rqt_len(rqns.len()), res::OUT_LEN, |b| {
                res::modify_rqt(b, rqtn, max, rqns)
            })?;
        }
        if change.key || change.fields {
            for (&tt, tir) in Tt::HASHED.iter().zip(tirs.iter()) {
                if let Some(tirn) = *tir {
                    let h = tir_hash(tt, spec);
                    self.cmd(res::MODIFY_TIR_IN_LEN, res::OUT_LEN, |b| {
                        res::modify_tir_hash(b, tirn, &h)
                    })?;
                }
            }
        }
        Ok(())
    }

    /// The RQs of `spec`'s table (its channel indices mapped to their RQs) and their count.
    fn table_rqns(spec: &RssSpec<'_>) -> Result<(KVec<u32>, u16)> {
        let mut rqns = KVec::with_capacity(spec.table.len(), GFP_KERNEL)?;
        for &e in spec.table {
            rqns.push(spec.rq_of(e).ok_or(EINVAL)?, GFP_KERNEL)?;
        }
        let max = u16::try_from(rqns.len()).map_err(|_| EINVAL)?;
        if max == 0 {
            return Err(EINVAL);
        }
        Ok((rqns, max))
    }

    /// Programs additional RSS context `id` (1..) as `spec` says: the first time its RQT
    /// and a TIR per traffic type (mlx5e creates them on demand, rsnic with the context:
    /// the model holds [`MAX_CONTEXTS`] of them), after, MODIFY_RQT / MODIFY_TIR in place;
    /// `None` destroys them (the port deletes the context's rules first). Only while the
    /// channels are open ([`Func::set_rss`] made the rest). Sleeps.
    pub(crate) fn set_rss_ctx(
        &self,
        id: usize,
        spec: Option<&RssSpec<'_>>,
        change: RssChange,
    ) -> Result {
        let mut rss = self.rss.lock();
        let r = rss.as_mut().ok_or(ENODEV)?;
        let slot = r.ctxs.get_mut(id.wrapping_sub(1)).ok_or(EINVAL)?;
        let Some(spec) = spec else {
            if let Some(c) = slot.take() {
                self.destroy_ctx(&c);
            }
            return Ok(());
        };
        let (rqns, max) = Self::table_rqns(spec)?;
        let Some(c) = slot.as_ref() else {
            let out = self.cmd(res::rqt_len(rqns.len()), res::SHORT_LEN, |b| {
                res::create_rqt(b, max, &rqns)
            })?;
            let mut c = Ctx {
                rqtn: self.created(&out, res::parse_create_rqt)?,
                tirs: [None; 6],
            };
            if let Err(e) = self.ctx_tirs(&mut c, spec) {
                self.destroy_ctx(&c);
                return Err(e);
            }
            *slot = Some(c);
            return Ok(());
        };
        self.update_in_place(c.rqtn, &c.tirs, &rqns, max, spec, change)
    }

    /// A context's TIRs over its RQT, recorded as they are made.
    fn ctx_tirs(&self, c: &mut Ctx, spec: &RssSpec<'_>) -> Result {
        let td = self.res.td.unwrap_or(0);
        for (&tt, slot) in Tt::HASHED.iter().zip(c.tirs.iter_mut()) {
            let h = tir_hash(tt, spec);
            let t = res::CreateTir {
                transport_domain: td,
                rqtn: c.rqtn,
                key: h.key,
                l3_prot_type: h.l3_prot_type,
                l4_prot_type: h.l4_prot_type,
                selected_fields: h.selected_fields,
            };
            let out = self.cmd(res::CREATE_TIR_IN_LEN, res::SHORT_LEN, |b| {
                res::create_tir(b, &t)
            })?;
            *slot = Some(self.created(&out, res::parse_create_tir)?);
        }
        Ok(())
    }

    /// Destroys a context's TIRs, then its RQT.
    fn destroy_ctx(&self, c: &Ctx) {
        for &t in c.tirs.iter().flatten() {
            self.destroy(|b| res::destroy_tir(b, t));
        }
        self.destroy(|b| res::destroy_rqt(b, c.rqtn));
    }

    /// Programs the ntuple rule at `loc` (mlx5e's `mlx5e_ethtool_flow_replace`): whatever
    /// was there goes (DELETE_FLOW_TABLE_ENTRY, DESTROY_FLOW_GROUP), then, for a rule, a
    /// group of that one index masking the fields it gives and its entry, forwarding to the
    /// direct TIR of its queue or its context's TIR of its traffic type. Only while the
    /// channels are open. Sleeps.
    pub(crate) fn set_rule(&self, loc: usize, rule: Option<&Rule>) -> Result {
        let mut rss = self.rss.lock();
        let r = rss.as_mut().ok_or(ENODEV)?;
        let ft = r.rule_ft.ok_or(EINVAL)?;
        let index = u32::try_from(loc).map_err(|_| EINVAL)?;
        let tirn = match rule.map(|x| x.dest) {
            None => None,
            Some(Dest::Queue(q)) => {
                Some(r.direct.get(q as usize).copied().flatten().ok_or(EINVAL)?)
            }
            Some(Dest::Context(c)) => {
                let m = rule.map(|x| x.m).unwrap_or_default();
                let tt = match (m.ipv6, m.udp) {
                    (false, false) => Tt::Tcp4,
                    (false, true) => Tt::Udp4,
                    (true, false) => Tt::Tcp6,
                    (true, true) => Tt::Udp6,
                };
                let ctx = r
                    .ctxs
                    .get((c as usize).wrapping_sub(1))
                    .copied()
                    .flatten()
                    .ok_or(EINVAL)?;
                Some(
                    ctx.tirs
                        .get(tt.tir_index())
                        .copied()
                        .flatten()
                        .ok_or(EINVAL)?,
                )
            }
        };
        let slot = r.rules.get_mut(loc).ok_or(EINVAL)?;
        let run = |build: &dyn Fn(&mut [u8]) -> core::result::Result<usize, FormatError>| {
            let _ = self.cmd(fs::FT_CMD_LEN, res::OUT_LEN, build);
        };
        if let Some((g, set)) = slot.take() {
            if set {
                run(&|b| fs::delete_fte(b, ft, index));
            }
            run(&|b| fs::destroy_flow_group(b, ft, g));
        }
        let (Some(rule), Some(tirn)) = (rule, tirn) else {
            return Ok(());
        };
        let m = fs::TupleMatch {
            ipv6: rule.m.ipv6,
            udp: rule.m.udp,
            src: rule.m.src,
            dst: rule.m.dst,
            sport: rule.m.sport,
            dport: rule.m.dport,
        };
        let out = self.cmd(fs::CREATE_FG_IN_LEN, res::SHORT_LEN, |b| {
            fs::create_flow_group_tuple(b, ft, index, index, &m)
        })?;
        let g = self.created(&out, fs::parse_create_flow_group)?;
        *slot = Some((g, false));
        if let Err(e) = self.cmd(fs::SET_FTE_IN_LEN, res::OUT_LEN, |b| {
            fs::set_fte_tuple(b, ft, g, index, &m, tirn)
        }) {
            *slot = None;
            run(&|b| fs::destroy_flow_group(b, ft, g));
            return Err(e);
        }
        *slot = Some((g, true));
        Ok(())
    }

    /// Creates the RSS objects over the RQs `rqns` (`max` of them); on a failure destroys
    /// what was made.
    fn create_rss(&self, rqns: &[u32], max: u16, spec: &RssSpec<'_>) -> Result<Rss> {
        let out = self.cmd(res::rqt_len(rqns.len()), res::SHORT_LEN, |b| {
            res::create_rqt(b, max, rqns)
        })?;
        let mut r = Rss {
            rqtn: self.created(&out, res::parse_create_rqt)?,
            tirs: [None; 6],
            ft: None,
            groups: [None; 3],
            entries: 0,
            root: false,
            direct: [None; MAX_CHANNELS],
            direct_rqt: [None; MAX_CHANNELS],
            rule_ft: None,
            rules: [None; MAX_RULES],
            ctxs: [None; MAX_CONTEXTS],
            l2: L2::NONE,
        };
        match self.build_rss(&mut r, spec) {
            Ok(()) => Ok(r),
            Err(e) => {
                self.destroy_rss(&r);
                Err(e)
            }
        }
    }

    /// The TIRs, the traffic-type table, its groups, entries and root (`mlx5e_rss_init`,
    /// `mlx5_create_ttc_table`), recorded in `r` as they are made.
    fn build_rss(&self, r: &mut Rss, spec: &RssSpec<'_>) -> Result {
        let td = self.res.td.unwrap_or(0);
        for (&tt, slot) in Tt::HASHED.iter().zip(r.tirs.iter_mut()) {
            let h = tir_hash(tt, spec);
            let t = res::CreateTir {
                transport_domain: td,
                rqtn: r.rqtn,
                key: h.key,
                l3_prot_type: h.l3_prot_type,
                l4_prot_type: h.l4_prot_type,
                selected_fields: h.selected_fields,
            };
            let out = self.cmd(res::CREATE_TIR_IN_LEN, res::SHORT_LEN, |b| {
                res::create_tir(b, &t)
            })?;
            *slot = Some(self.created(&out, res::parse_create_tir)?);
        }
        let out = self.cmd(fs::FT_CMD_LEN, res::SHORT_LEN, |b| {
            fs::create_flow_table(b, fs::TTC_LOG_SIZE, RULE_LEVEL + 2)
        })?;
        let ft = self.created(&out, fs::parse_create_flow_table)?;
        r.ft = Some(ft);
        for (&(start, end, crit), slot) in fs::TTC_GROUPS.iter().zip(r.groups.iter_mut()) {
            let out = self.cmd(fs::CREATE_FG_IN_LEN, res::SHORT_LEN, |b| {
                fs::create_flow_group(b, ft, start, end, crit)
            })?;
            *slot = Some(self.created(&out, fs::parse_create_flow_group)?);
        }
        for tt in Tt::ALL {
            let g = r.groups.get(tt.group()).copied().flatten().ok_or(EINVAL)?;
            let tir = r
                .tirs
                .get(tt.tir_index())
                .copied()
                .flatten()
                .ok_or(EINVAL)?;
            self.cmd(fs::SET_FTE_IN_LEN, res::OUT_LEN, |b| {
                fs::set_fte_fwd_tir(b, ft, g, tt.flow_index(), &tt.match_value(), tir)
            })?;
            r.entries |= 1 << tt.flow_index();
        }
        // A direct TIR per channel, for rules of `action Q`, over the channel's RQT of one
        // entry (mlx5e's direct TIRs dispatch through a direct RQT, so the RQ behind them
        // changes in place; their hash is XOR8, which the model lacks: here Toeplitz over no
        // field, which on one entry picks it as well).
        for ((&rqn, slot), rqt) in spec
            .rqns
            .iter()
            .zip(r.direct.iter_mut())
            .zip(r.direct_rqt.iter_mut())
        {
            let out = self.cmd(res::rqt_len(1), res::SHORT_LEN, |b| {
                res::create_rqt(b, 1, &[rqn])
            })?;
            let rqtn = self.created(&out, res::parse_create_rqt)?;
            *rqt = Some((rqtn, rqn));
            let t = res::CreateTir {
                transport_domain: td,
                rqtn,
                key: *spec.key,
                l3_prot_type: 0,
                l4_prot_type: 0,
                selected_fields: 0,
            };
            let out = self.cmd(res::CREATE_TIR_IN_LEN, res::SHORT_LEN, |b| {
                res::create_tir(b, &t)
            })?;
            *slot = Some(self.created(&out, res::parse_create_tir)?);
        }
        // The L2 table ahead of the traffic-type table (mlx5e_create_l2_table), with the
        // entries of what the stack asks for now.
        let out = self.cmd(fs::FT_CMD_LEN, res::SHORT_LEN, |b| {
            fs::create_flow_table(b, fs::L2_LOG_SIZE, RULE_LEVEL + 1)
        })?;
        let l2 = self.created(&out, fs::parse_create_flow_table)?;
        r.l2.ft = Some(l2);
        for (&(start, end, mask), slot) in fs::L2_GROUPS.iter().zip(r.l2.groups.iter_mut()) {
            let out = self.cmd(fs::CREATE_FG_IN_LEN, res::SHORT_LEN, |b| {
                fs::create_flow_group_dmac(b, l2, start, end, &mask)
            })?;
            *slot = Some(self.created(&out, fs::parse_create_flow_group)?);
        }
        let want = with_bh(|| *self.rx.lock());
        if let Err(e) = self.sync_l2(&mut r.l2, ft, &want) {
            // As mlx5e's L2 rules: logged, the port opens; the next change tries again.
            pr_err!("port {}: the L2 table: {:?}\n", self.port, e);
        }
        // The rule table ahead of the L2 table (as fs_core chains the ethtool priorities to
        // the next), empty until rules come.
        let out = self.cmd(fs::FT_CMD_LEN, res::SHORT_LEN, |b| {
            fs::create_flow_table_miss(b, RULE_LOG_SIZE, RULE_LEVEL, l2)
        })?;
        let rule_ft = self.created(&out, fs::parse_create_flow_table)?;
        r.rule_ft = Some(rule_ft);
        self.cmd(fs::FT_CMD_LEN, res::OUT_LEN, |b| {
            fs::set_flow_table_root(b, rule_ft)
        })?;
        r.root = true;
        Ok(())
    }

    /// Destroys the RSS objects that exist, in the reverse order of their creation; failures
    /// are logged and otherwise ignored, as mlx5e's destroy paths do. Sleeps.
    fn destroy_rss(&self, r: &Rss) {
        let run = |build: &dyn Fn(&mut [u8]) -> core::result::Result<usize, FormatError>| {
            let _ = self.cmd(fs::FT_CMD_LEN, res::OUT_LEN, build);
        };
        if r.root {
            run(&fs::disconnect_flow_table_root);
        }
        if let Some(ft) = r.rule_ft {
            for (loc, rule) in r.rules.iter().enumerate() {
                if let (Some((g, set)), Ok(index)) = (*rule, u32::try_from(loc)) {
                    if set {
                        run(&|b| fs::delete_fte(b, ft, index));
                    }
                    run(&|b| fs::destroy_flow_group(b, ft, g));
                }
            }
            run(&|b| fs::destroy_flow_table(b, ft));
        }
        // The L2 table's entries forward to the traffic-type table: they go first.
        if let Some(l2) = r.l2.ft {
            for (i, slot) in r.l2.slots.iter().enumerate() {
                if let (Some(_), Ok(index)) = (slot, u32::try_from(i)) {
                    run(&|b| fs::delete_fte(b, l2, index));
                }
            }
            if r.l2.allmulti {
                run(&|b| fs::delete_fte(b, l2, fs::L2_ALLMULTI_INDEX));
            }
            if r.l2.promisc {
                run(&|b| fs::delete_fte(b, l2, fs::L2_PROMISC_INDEX));
            }
            for &g in r.l2.groups.iter().flatten() {
                run(&|b| fs::destroy_flow_group(b, l2, g));
            }
            run(&|b| fs::destroy_flow_table(b, l2));
        }
        if let Some(ft) = r.ft {
            for tt in Tt::ALL {
                if r.entries & (1 << tt.flow_index()) != 0 {
                    run(&|b| fs::delete_fte(b, ft, tt.flow_index()));
                }
            }
            for &g in r.groups.iter().flatten() {
                run(&|b| fs::destroy_flow_group(b, ft, g));
            }
            run(&|b| fs::destroy_flow_table(b, ft));
        }
        for c in r.ctxs.iter().flatten() {
            self.destroy_ctx(c);
        }
        for &t in r.direct.iter().flatten() {
            self.destroy(|b| res::destroy_tir(b, t));
        }
        for &(t, _) in r.direct_rqt.iter().flatten() {
            self.destroy(|b| res::destroy_rqt(b, t));
        }
        for &t in r.tirs.iter().flatten() {
            self.destroy(|b| res::destroy_tir(b, t));
        }
        self.destroy(|b| res::destroy_rqt(b, r.rqtn));
    }

    /// Records the stack's receive filter (`ndo_set_rx_mode`: atomic context) and queues the
    /// control work that programs it.
    pub(crate) fn set_rx_mode(self: &Arc<Self>, mode: &RxMode) {
        with_bh(|| *self.rx.lock() = *mode);
        self.rx_due.store(true, Ordering::Release);
        self.kick();
    }

    /// `ndo_set_mac_address` (under RTNL), as `mlx5e_set_mac`: commits the address (an
    /// invalid one is refused with `EADDRNOTAVAIL`), then has the control work program the
    /// vport's UC list and the L2 table with it.
    pub(crate) fn set_mac(self: &Arc<Self>, change: MacChange<'_>) -> Result {
        let mac = change.mac();
        change.commit()?;
        with_bh(|| self.rx.lock().addr = mac);
        self.rx_due.store(true, Ordering::Release);
        self.kick();
        Ok(())
    }

    /// Programs the receive filter the stack asked for last (the control work, process
    /// context), as `mlx5e_fs_set_rx_mode_work`: the L2 table's entries while the channels
    /// are open, then the vport context's UC and MC lists and its promiscuous flags
    /// (`mlx5e_vport_context_update`). Failures are logged; the next change tries again.
    fn apply_rx_mode(&self) {
        let want = with_bh(|| *self.rx.lock());
        {
            let mut rss = self.rss.lock();
            if let Some(r) = rss.as_mut() {
                if let Some(ttc) = r.ft {
                    if let Err(e) = self.sync_l2(&mut r.l2, ttc, &want) {
                        pr_err!("port {}: the L2 table: {:?}\n", self.port, e);
                    }
                }
            }
        }
        let caps = &self.res.caps;
        let lists = vport::VportLists::new(
            &want.addr,
            want.broadcast,
            want.uc(),
            want.mc(),
            caps.log_max_current_uc_list,
            caps.log_max_current_mc_list,
        );
        for (ty, name, list, dropped) in [
            (vport::LIST_TYPE_UC, "UC", lists.uc(), lists.uc_dropped),
            (vport::LIST_TYPE_MC, "MC", lists.mc(), lists.mc_dropped),
        ] {
            if dropped > 0 {
                pr_warn!(
                    "port {}: the vport's {} list holds {} addresses: {} left out\n",
                    self.port,
                    name,
                    list.len(),
                    dropped
                );
            }
            let len = vport::modify_nic_vport_mac_list_len(list.len());
            let _ = self.cmd(len, vport::MODIFY_NIC_VPORT_CONTEXT_OUT_LEN, |b| {
                vport::modify_nic_vport_mac_list(b, ty, list)
            });
        }
        let _ = self.cmd(
            vport::MODIFY_NIC_VPORT_CONTEXT_IN_LEN,
            vport::MODIFY_NIC_VPORT_CONTEXT_OUT_LEN,
            |b| vport::modify_nic_vport_promisc(b, false, want.allmulti, want.promisc),
        );
    }

    /// Makes the L2 table's entries those of `want` (forwarding to traffic-type table
    /// `ttc`): the catch-alls turned on first, then the address entries no longer wanted
    /// deleted and the new ones set, then the catch-alls turned off (as mlx5e orders them,
    /// so that a change lets through at least what both sides allow). Sleeps.
    fn sync_l2(&self, l2: &mut L2, ttc: u32, want: &RxMode) -> Result {
        let (Some(ft), [Some(g_full), Some(g_multi), Some(g_all)]) = (l2.ft, l2.groups) else {
            return Err(EINVAL);
        };
        let rules = fs::L2Rules::new(&fs::RxFilter {
            own: want.addr,
            broadcast: want.broadcast,
            promisc: want.promisc,
            allmulti: want.allmulti,
            uc: want.uc(),
            uc_more: want.uc_overflow(),
            mc: want.mc(),
            mc_more: want.mc_overflow(),
        });
        let set = |g: u32, index: u32, dmac: &[u8; 6]| {
            self.cmd(fs::SET_FTE_IN_LEN, res::OUT_LEN, |b| {
                fs::set_fte_dmac_fwd_table(b, ft, g, index, dmac, ttc)
            })
            .map(|_| ())
        };
        let del = |index: u32| {
            self.cmd(fs::FT_CMD_LEN, res::OUT_LEN, |b| {
                fs::delete_fte(b, ft, index)
            })
            .map(|_| ())
        };
        if rules.promisc && !l2.promisc {
            set(g_all, fs::L2_PROMISC_INDEX, &[0; 6])?;
            l2.promisc = true;
        }
        if rules.allmulti && !l2.allmulti {
            set(g_multi, fs::L2_ALLMULTI_INDEX, &[0x01, 0, 0, 0, 0, 0])?;
            l2.allmulti = true;
        }
        for (i, slot) in l2.slots.iter_mut().enumerate() {
            let index = u32::try_from(i).map_err(|_| EINVAL)?;
            if let Some(a) = *slot {
                if !rules.addrs().contains(&a) {
                    del(index)?;
                    *slot = None;
                }
            }
        }
        for a in rules.addrs() {
            if l2.slots.contains(&Some(*a)) {
                continue;
            }
            let Some(i) = l2.slots.iter().position(|s| s.is_none()) else {
                // L2Rules holds at most as many addresses as there are slots.
                return Err(ENOSPC);
            };
            let index = u32::try_from(i).map_err(|_| EINVAL)?;
            set(g_full, index, a)?;
            if let Some(s) = l2.slots.get_mut(i) {
                *s = Some(*a);
            }
        }
        if !rules.allmulti && l2.allmulti {
            del(fs::L2_ALLMULTI_INDEX)?;
            l2.allmulti = false;
        }
        if !rules.promisc && l2.promisc {
            del(fs::L2_PROMISC_INDEX)?;
            l2.promisc = false;
        }
        Ok(())
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

    /// The port's global pause, (rx, tx): a PFCC read, as `mlx5_query_port_pause`. Sleeps.
    pub(crate) fn query_pause(&self) -> Result<(bool, bool)> {
        let len = vport::access_reg_len(vport::PFCC_LEN);
        let out = self.cmd(len, len, vport::pfcc_query)?;
        vport::parse_pfcc(&out).map_err(|_| {
            pr_err!(
                "port {}: PFCC read returned a malformed output\n",
                self.port
            );
            EIO
        })
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
        let len = vport::access_reg_len(vport::PPCNT_LEN);
        let out = self.cmd(len, len, |b| {
            vport::ppcnt_query(b, vport::PPCNT_IEEE_802_3, false)
        })?;
        vport::parse_ppcnt_ieee_802_3(&out).map_err(|_| {
            pr_err!(
                "port {}: PPCNT read returned a malformed output\n",
                self.port
            );
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

    /// Serves page requests adding up to `n` pages (`pages_work_handler`): gives them, or
    /// takes `-n` back; a request the driver cannot meet is answered CANT_GIVE
    /// (`page_notify_fail`). Sleeps.
    fn serve_page_request(&self, n: i32) {
        let dma = self.hw.dma();
        let bar = self.hw.bar();
        let mut fw = self.pages.lock();
        let mut q = self.cmd.lock();
        if n > 0 {
            if let Err(e) = fw.give(&mut q, &bar, dma, n as u32) {
                match e {
                    BringupError::Cmd(e) => pr_err!("port {}: page request: {}\n", self.port, e),
                    BringupError::Kernel(e) => {
                        pr_err!("port {}: page request of {} pages: {:?}\n", self.port, n, e)
                    }
                }
                let mut inp = [0u8; res::SHORT_LEN];
                let mut out = [0u8; res::OUT_LEN];
                if let Ok(len) = pages::cant_give(&mut inp, n as u32) {
                    let _ = run_cmd(&mut q, &bar, &inp[..len], &mut out);
                }
            }
        } else {
            let mut left = n.unsigned_abs().min(fw.held);
            while left > 0 {
                match fw.take(&mut q, &bar, self.port, left) {
                    Ok(0) => break,
                    Ok(k) => left = left.saturating_sub(k),
                    Err(BringupError::Cmd(e)) => {
                        pr_err!("port {}: page request: {}\n", self.port, e);
                        break;
                    }
                    Err(BringupError::Kernel(e)) => {
                        pr_err!("port {}: page request: {:?}\n", self.port, e);
                        break;
                    }
                }
            }
        }
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

    /// Tears the function down: stops the carrier work, destroys the async EQ, then runs
    /// main.c's unload order. The first failed command is returned (the others still ran).
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
        let t = tear_down(&mut q, &bar, &self.res, &mut fw, self.port);
        first.or(t)
    }
}

/// Runs one command on `q` to completion, sleeping between polls.
fn run_cmd(
    q: &mut CmdQueue<KCoherent>,
    bar: &Bar<'_>,
    input: &[u8],
    out: &mut [u8],
) -> Result<usize, CmdError> {
    // A device that is gone answers nothing: the command fails at once (as mlx5's in the
    // internal error state), naming itself.
    if bar.is_gone() {
        q.abandon();
        return Err(CmdError {
            opcode: input
                .get(0..2)
                .map_or(0, |b| u16::from_be_bytes([b[0], b[1]])),
            op_mod: input
                .get(6..8)
                .map_or(0, |b| u16::from_be_bytes([b[0], b[1]])),
            kind: CmdErrorKind::Gone,
        });
    }
    q.post(input, out.len(), bar, bar)?;
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
fn bad_format(_: crate::dp::mlx5::cmd::FormatError) -> BringupError {
    BringupError::Cmd(CmdError::iface(CmdErrorKind::BadOutput))
}

/// Runs a DESTROY_* command `build` writes, on `q`.
fn destroy_obj(
    q: &mut CmdQueue<KCoherent>,
    bar: &Bar<'_>,
    build: impl FnOnce(&mut [u8]) -> core::result::Result<usize, crate::dp::mlx5::cmd::FormatError>,
) -> Result<(), CmdError> {
    let mut inp = [0u8; res::SHORT_LEN];
    let mut out = [0u8; res::OUT_LEN];
    let n = build(&mut inp).map_err(|_| CmdError::iface(CmdErrorKind::BadOutput))?;
    run_cmd(q, bar, &inp[..n], &mut out).map(|_| ())
}

/// Creates the function's async EQ (port-change events on vector [`ASYNC_INTR`]), armed.
fn create_async_eq(
    q: &mut CmdQueue<KCoherent>,
    bar: &Bar<'_>,
    dma: &Arc<DmaDevice>,
    r: &Resources,
) -> core::result::Result<Eq<KCoherent>, BringupError> {
    let bad = bad_format;
    let uar = r.uar.ok_or(BringupError::Kernel(EINVAL))?;
    let ring = eq_ring(dma, ASYNC_EQ_LOG)?;
    let p = CreateEq {
        log_eq_size: ASYNC_EQ_LOG,
        uar_page: uar,
        intr: ASYNC_INTR as u16,
        event_bitmask: 1 << EVENT_TYPE_PORT_CHANGE | 1 << pages::EVENT_TYPE_PAGE_REQUEST,
        pas: Pas {
            addr: ring.dma_addr(),
            size: ring.size(),
        },
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
    q: &mut CmdQueue<KCoherent>,
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
        q.abandon();
    }
    let err = loop {
        match t.poll(q, bar, bar, &mut out) {
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
            _ if gone(bar, &wait) => break Some(q.gone()),
            // The rest cannot be posted on an abandoned queue.
            _ if !wait.sleep(CMD_TIMEOUT_MS) => break Some(q.time_out()),
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

impl From<Error> for BringupError {
    fn from(e: Error) -> Self {
        Self::Kernel(e)
    }
}

impl From<kernel::alloc::AllocError> for BringupError {
    fn from(_: kernel::alloc::AllocError) -> Self {
        Self::Kernel(ENOMEM)
    }
}

/// The handler of a function's async vector.
struct AsyncIrq(Arc<Func>);

impl IrqHandler for AsyncIrq {
    fn irq(&self) {
        self.0.irq();
    }
}
