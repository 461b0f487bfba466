// SPDX-License-Identifier: GPL-2.0

//! The kernel glue of a MANA device's control plane: its hardware channel (HWC) in coherent
//! DMA memory, established through the shared memory channel (SMC) and driven by
//! `hwif::mana::probe` with sleeping polls (process context only), the bring-up of
//! `mana_gd_probe` + `mana_probe` at probe, the teardown of `mana_remove` +
//! `mana_gd_remove` at removal, and the requests of the channels' queues and RSS
//! (`mana_create_eq`'s GDMA_CREATE_QUEUE over a DMA region, MANA_CREATE_WQ_OBJ,
//! MANA_DESTROY_WQ_OBJ, DISABLE_QUEUE, MANA_CONFIG_VPORT_RX) while the device runs.
//!
//! A MANA function has one hardware channel and the vports the device reports (one port
//! each), so the device is brought up once per function ([`Gdma::probe`]); every port's
//! [`Func`] holds the device ([`Gdma`]) and the configuration QUERY_VPORT_CONFIG gave its
//! vport (configured for transmission by MANA_CONFIG_VPORT_TX when the port is brought up),
//! and the last port torn down takes the device down: DISABLE_QUEUE for each EQ the probe
//! created (the queue owns its DMA region, which goes with it), DEREGISTER_DEVICE, then
//! DESTROY_HWC through the SMC (`mana_destroy_eq`, `mana_gd_deregister_device`,
//! `mana_hwc_destroy_channel`). A failed probe undoes what it did in the same order.
//!
//! The device answers when its engine runs (every register write queues the engine's work,
//! as a doorbell does); the caller sleeps a millisecond between polls of the HWC's EQ, as
//! `mana_hwc_send_request` waits for its completion, and gives up after
//! [`REQ_TIMEOUT_MS`] without progress. Failures are logged with the request's name, code
//! and the device's status and become an errno (`-EPROTO` for a failure status, as upstream;
//! `-ETIMEDOUT`). One request is outstanding at a time (the channel's depth is 1): the
//! channel is behind a mutex.
//!
//! Upstream counterpart: `gdma_main.c` (`mana_gd_probe`, `mana_gd_remove`), `hw_channel.c`,
//! `shm_channel.c` and `mana_en.c` (`mana_probe`, `mana_remove`). The requests of a running
//! device (queues, RSS, loopback, pause, counters) are `requests`.

mod requests;

use crate::bus::{Bar, Function};
use crate::family::params::MAX_CHANNELS;
use crate::hwif::hw::Coherent;
use crate::hwif::mana::{
    cq::Eq,
    fmt::EQE_SIZE,
    gdma_req::{self as req, Caller, DevId, MsgError, VportConfig},
    hwc::{GdmaRegs, Hwc, HwcBuffers, HwcError, HwcStats, HWC_MAX_MSG, HWC_QUEUE_SIZE},
    probe::{Action, Probe, ProbeConfig, ProbeErrorKind, ProbeInfo, Stage, EQ_SIZE, MAX_VPORTS},
    smc::{self, SmcError},
};
use crate::kdma::KCoherent;
use crate::kernel_ext::{params, sync::PollWait};

use core::fmt;
use core::sync::atomic::{AtomicUsize, Ordering};
use kernel::{
    new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
};

/// How long the driver waits for the device to make progress on one request (or SMC
/// message), in milliseconds (`HW_CHANNEL_WAIT_RESOURCE_TIMEOUT_MS` is 30 s for a real
/// device; this one answers within a few engine runs, so a request that takes seconds is
/// lost, not slow).
pub(crate) const REQ_TIMEOUT_MS: u32 = 5_000;

/// RQ objects a device has at most: an RQ and an XSK RQ per channel of each port.
const RQ_OBJS: usize = 2 * MAX_CHANNELS * MAX_VPORTS;

/// The device's own EQs, made at probe: one per online CPU, at most [`MAX_CHANNELS`] (as
/// upstream's `mana_gd_query_max_resources` wants them).
fn device_eqs() -> usize {
    params::online_cpus().clamp(1, MAX_CHANNELS as u32) as usize
}

/// What the driver tells VERIFY_VF_DRIVER_VERSION about the OS.
const OS: req::OsInfo<'static> = req::OsInfo {
    major: 6,
    minor: 12,
    build: 0,
    sysname: b"Linux",
    release: b"6.12",
    version: b"rsnic",
};

/// Why a control-path step failed.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Cause {
    /// The SMC refused ESTABLISH_HWC or DESTROY_HWC, or answered wrongly.
    Smc(SmcError),
    /// The channel failed (or refused the request).
    Hwc(HwcError),
    /// The device answered with a failure status, or a response the parser refused.
    Msg(MsgError),
    /// The probe found the device's limits unusable (or an EQ overflowed).
    Probe(ProbeErrorKind),
    /// The device made no progress for [`REQ_TIMEOUT_MS`].
    Timeout,
    /// The device is gone (surprise removal: its registers read all-ones).
    Gone,
}

/// A failed control-path step: the request (`None`: the SMC or the HWC's init events), the
/// SMC message, and why.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CtlError {
    /// The request's code.
    pub(crate) code: Option<u32>,
    /// The SMC message (`Some` for SMC steps).
    pub(crate) smc: Option<&'static str>,
    /// Why.
    pub(crate) cause: Cause,
}

impl CtlError {
    fn req(code: u32, cause: Cause) -> Self {
        Self {
            code: Some(code),
            smc: None,
            cause,
        }
    }

    fn smc(msg: &'static str, cause: Cause) -> Self {
        Self {
            code: None,
            smc: Some(msg),
            cause,
        }
    }

    /// The errno the failure becomes (`mana_hwc_send_request`: `-EPROTO` for a failure
    /// status or a bad response, `-ETIMEDOUT`).
    pub(crate) fn errno(&self) -> Error {
        match self.cause {
            Cause::Timeout => crate::kernel_ext::net::etimedout(),
            Cause::Probe(ProbeErrorKind::Limits) | Cause::Gone => ENODEV,
            _ => crate::kernel_ext::net::eproto(),
        }
    }
}

impl fmt::Display for CtlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.code, self.smc) {
            (Some(c), _) => write!(f, "{}({:#x}) ", req::request_name(c), c)?,
            (None, Some(m)) => write!(f, "SMC {} ", m)?,
            (None, None) => write!(f, "HWC init ")?,
        }
        match self.cause {
            Cause::Timeout => write!(f, "timed out after {} ms", REQ_TIMEOUT_MS),
            Cause::Gone => write!(f, "failed: the device is gone"),
            Cause::Msg(MsgError::Status(s))
            | Cause::Hwc(HwcError::Status(s))
            | Cause::Probe(ProbeErrorKind::Msg(MsgError::Status(s))) => {
                write!(f, "failed: status {:#x}", s)
            }
            Cause::Smc(SmcError::Status(s)) => write!(f, "failed: status {:#x}", s),
            c => write!(f, "failed: {:?}", c),
        }
    }
}

/// The channel and what the probe created on the device.
struct Ctl {
    hwc: Hwc<KCoherent>,
    /// The MANA EQs (`mana_create_eq`); the first `eqs_created` exist on the device.
    eqs: KVec<Eq<KCoherent>>,
    eqs_created: usize,
    /// REGISTER_DEVICE succeeded.
    registered: bool,
    /// ESTABLISH_HWC succeeded (DESTROY_HWC is due).
    established: bool,
    /// Request and response buffers.
    buf: KVec<u8>,
    resp: KVec<u8>,
    /// The `activity_id` of the last MANA request (`mana_send_request`'s counter).
    activity: u32,
    /// The RQ objects alive: (RQ id, handle), for the RSS table ([`RQ_OBJS`] slots).
    rqs: KVec<Option<(u32, u64)>>,
}

/// One MANA device after bring-up: its hardware channel, its EQs and what the probe learnt.
#[pin_data]
pub(crate) struct Gdma {
    /// The device's (first) function: MANA's registers are the device's.
    hw: Arc<Function>,
    dev: u32,
    /// The channel and its state (boxed, as the probe's results: they stay off the stack).
    #[pin]
    ctl: Mutex<KBox<Ctl>>,
    info: KBox<ProbeInfo>,
    /// Ports whose function is up on the device (the last one down takes the device down).
    ports_up: AtomicUsize,
}

/// One port's function: the device it is a vport of, and the vport's configuration.
pub(crate) struct Func {
    gdma: Arc<Gdma>,
    port: usize,
    vport: VportConfig,
    /// CONFIG_VPORT_TX's `tx_vport_offset` (the SQs' OOB `vp_offset`).
    tx_vp_offset: u16,
}

/// A work queue object the device created (MANA_CREATE_WQ_OBJ): the SQ or RQ with its CQ.
#[derive(Clone, Copy)]
pub(crate) struct WqObj {
    /// SQ or RQ id (doorbells, CQEs).
    pub(crate) wq_id: u32,
    /// The CQ's id.
    pub(crate) cq_id: u32,
    /// The object's handle (destroy, RSS).
    pub(crate) handle: u64,
}

/// A progress marker of the probe: a change means the device answered something.
fn progress(p: &Probe<'_>, s: &HwcStats) -> (Stage, u64, u64, u64) {
    (p.stage(), s.requests, s.responses, s.eqes)
}

/// The request code in a request's header.
fn code_of(r: &[u8]) -> u32 {
    r.get(4..8)
        .map_or(0, |c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
}

impl Ctl {
    /// Sends the request in `self.buf[..n]` and waits for its response, copied into
    /// `self.resp` (returns its length). Sleeps.
    fn call(&mut self, env: &Bar<'_>, n: usize) -> Result<usize, CtlError> {
        let r = self.buf.get(..n).unwrap_or(&[]);
        let code = code_of(r);
        if env.is_gone() {
            return Err(CtlError::req(code, Cause::Gone));
        }
        let id = self
            .hwc
            .send(env, r)
            .map_err(|e| CtlError::req(code, Cause::Hwc(e)))?;
        let mut wait = PollWait::new();
        loop {
            self.hwc.process_events(env);
            if let Some(r) = self.hwc.take_response(env, id, &mut self.resp[..]) {
                return r.map_err(|e| CtlError::req(code, Cause::Hwc(e)));
            }
            if gone(env, &wait) {
                self.hwc.abandon(env, id);
                return Err(CtlError::req(code, Cause::Gone));
            }
            if !wait.sleep(REQ_TIMEOUT_MS) {
                self.hwc.abandon(env, id);
                return Err(CtlError::req(code, Cause::Timeout));
            }
        }
    }

    /// Builds a request whose response is only the header with `build`, calls it and checks
    /// the response. Sleeps.
    fn simple(
        &mut self,
        env: &Bar<'_>,
        code: u32,
        build: impl FnOnce(&mut [u8]) -> Result<usize, MsgError>,
    ) -> Result<(), CtlError> {
        self.request(env, code, build, |r| req::parse_general(r, code, None))
    }

    /// The `Caller` of the next MANA request on `mana` (a fresh `activity_id`).
    fn caller(&mut self, mana: DevId) -> Caller {
        self.activity = self.activity.wrapping_add(1);
        Caller {
            dev_id: mana,
            activity_id: self.activity,
        }
    }

    /// Builds a request with `build`, calls it and hands the response to `parse`. Sleeps.
    fn request<T>(
        &mut self,
        env: &Bar<'_>,
        code: u32,
        build: impl FnOnce(&mut [u8]) -> Result<usize, MsgError>,
        parse: impl FnOnce(&[u8]) -> Result<T, MsgError>,
    ) -> Result<T, CtlError> {
        let n = build(&mut self.buf[..]).map_err(|e| CtlError::req(code, Cause::Msg(e)))?;
        let len = self.call(env, n)?;
        parse(self.resp.get(..len).unwrap_or(&[])).map_err(|e| CtlError::req(code, Cause::Msg(e)))
    }

    /// Registers `buf` (whole 4 KiB pages, contiguous) as a DMA region
    /// (`mana_gd_create_dma_region`: CREATE_DMA_REGION, then DMA_REGION_ADD_PAGES while
    /// pages are left). A region left half listed is destroyed. Sleeps.
    fn region(&mut self, env: &Bar<'_>, buf: &KCoherent) -> Result<u64, CtlError> {
        let (base, len) = (buf.dma_addr(), buf.size() as u32);
        let pages = len / req::MANA_PAGE_SIZE;
        let mut done = 0;
        let h = self.request(
            env,
            req::GDMA_CREATE_DMA_REGION,
            |b| {
                let (n, k) = req::create_dma_region(b, base, len)?;
                done = k;
                Ok(n)
            },
            req::parse_create_dma_region,
        )?;
        while done < pages {
            let code = req::GDMA_DMA_REGION_ADD_PAGES;
            let mut listed = 0;
            let r = self.request(
                env,
                code,
                |b| {
                    let (n, k) = req::dma_region_add_pages(b, h, base, done, pages)?;
                    listed = k;
                    Ok(n)
                },
                |r| req::parse_general(r, code, None),
            );
            if let Err(e) = r {
                self.destroy_region(env, h);
                return Err(e);
            }
            done += listed;
        }
        Ok(h)
    }

    /// DESTROY_DMA_REGION; a failure is logged. Sleeps.
    fn destroy_region(&mut self, env: &Bar<'_>, h: u64) {
        let code = req::GDMA_DESTROY_DMA_REGION;
        if let Err(e) = self.simple(env, code, |b| req::destroy_dma_region(b, h)) {
            pr_warn!("{}\n", e);
        }
    }

    /// Undoes what the probe did, in `mana_remove` / `mana_gd_remove`'s order: DISABLE_QUEUE
    /// for each EQ created, DESTROY_DMA_REGION for a region no queue owns (`region`),
    /// DEREGISTER_DEVICE, then DESTROY_HWC. Every step runs; the first failure is returned.
    /// Sleeps.
    fn undo(&mut self, env: &Bar<'_>, mana: DevId, region: Option<u64>) -> Option<CtlError> {
        let mut first = None;
        let mut record = |r: Result<(), CtlError>| {
            if first.is_none() {
                first = r.err();
            }
        };
        if self.hwc.ready() {
            for i in 0..self.eqs_created {
                let id = self.eqs.get(i).map_or(0, |e| e.id());
                record(self.simple(env, req::GDMA_DISABLE_QUEUE, |b| {
                    req::disable_queue(b, mana, req::GDMA_EQ, id)
                }));
            }
            self.eqs_created = 0;
            if let Some(h) = region {
                record(self.simple(env, req::GDMA_DESTROY_DMA_REGION, |b| {
                    req::destroy_dma_region(b, h)
                }));
            }
            if self.registered {
                let who = Caller {
                    dev_id: mana,
                    activity_id: 0,
                };
                record(self.simple(env, req::GDMA_DEREGISTER_DEVICE, |b| {
                    req::general(b, req::GDMA_DEREGISTER_DEVICE, req::RESP_HDR_SIZE, who)
                }));
                self.registered = false;
            }
        }
        if self.established {
            record(smc_destroy(env, self.hwc.regs()));
            self.established = false;
        }
        first
    }
}

/// How often a slow request looks whether the device is still there, in ms of waiting.
const GONE_CHECK_MS: u32 = 16;

/// Whether a request waiting (`wait` so far) should give up because the device is gone: the
/// HWC's answers come through DMA memory, which a removed device never writes, so a slow
/// request looks now and then whether the function is still on the bus (an SMC poll's
/// all-ones read finds it too) rather than wait out its timeout for nothing.
fn gone(env: &Bar<'_>, wait: &PollWait) -> bool {
    env.is_gone() || (wait.due(GONE_CHECK_MS) && !env.check_present())
}

/// Waits until the SMC window is the driver's again (sleeps; [`REQ_TIMEOUT_MS`] at most).
fn smc_wait_idle(env: &Bar<'_>, base: u32, msg: &'static str) -> Result<(), CtlError> {
    let mut wait = PollWait::new();
    while !smc::poll_idle(env, base) {
        if gone(env, &wait) {
            return Err(CtlError::smc(msg, Cause::Gone));
        }
        if !wait.sleep(REQ_TIMEOUT_MS) {
            return Err(CtlError::smc(msg, Cause::Timeout));
        }
    }
    Ok(())
}

/// DESTROY_HWC through the SMC (`mana_smc_teardown_hwc`). Sleeps.
fn smc_destroy(env: &Bar<'_>, regs: &GdmaRegs) -> Result<(), CtlError> {
    const MSG: &str = "DESTROY_HWC";
    let base = regs
        .smc_base()
        .ok_or(CtlError::smc(MSG, Cause::Smc(SmcError::BadAddress)))?;
    smc_wait_idle(env, base, MSG)?;
    smc::write_destroy(env, base);
    smc_wait_idle(env, base, MSG)?;
    smc::read_response(env, base, smc::SMC_MSG_DESTROY_HWC)
        .map_err(|e| CtlError::smc(MSG, Cause::Smc(e)))
}

impl Gdma {
    /// Brings device `dev` up: reads the VF registers, allocates the HWC's queues and
    /// messages and the MANA EQs (one per online CPU, at most a port's channels) in coherent
    /// DMA memory, and drives the probe to its end. On a failure, undoes what was done and
    /// returns the failed step, which the caller reports. Sleeps.
    pub(crate) fn probe(hw: &Arc<Function>) -> Result<Arc<Self>, ProbeFailure> {
        let (dma, dev) = (hw.dma(), hw.device());
        let env = hw.bar();
        let regs = GdmaRegs::read(&env);
        if !regs.valid() {
            pr_err!(
                "device {}: unusable VF registers: doorbell page size {:#x}, SMC at {:#x}\n",
                dev,
                regs.db_page_size,
                regs.shm_offset
            );
            return Err(ProbeFailure::Kernel(ENODEV));
        }
        let q = || KCoherent::alloc(dma, HWC_QUEUE_SIZE as usize);
        let bufs = HwcBuffers {
            eq: q()?,
            cq: q()?,
            rq: q()?,
            sq: q()?,
            req: KCoherent::alloc(dma, HWC_MAX_MSG)?,
            resp: KCoherent::alloc(dma, HWC_MAX_MSG)?,
        };
        let hwc = Hwc::new(bufs, regs).map_err(|_| ProbeFailure::Kernel(EINVAL))?;
        let neqs = device_eqs();
        let mut eqs = KVec::with_capacity(neqs, GFP_KERNEL)?;
        for _ in 0..neqs {
            let ring = KCoherent::alloc(dma, EQ_SIZE as usize)?;
            let eq = Eq::new(ring, 0, EQ_SIZE / EQE_SIZE as u32, 0).ok_or(EINVAL)?;
            eqs.push(eq, GFP_KERNEL)?;
        }
        let mut ctl = KBox::new(
            Ctl {
                hwc,
                eqs,
                eqs_created: 0,
                registered: false,
                established: false,
                buf: KVec::from_elem(0u8, HWC_MAX_MSG, GFP_KERNEL)?,
                resp: KVec::from_elem(0u8, HWC_MAX_MSG, GFP_KERNEL)?,
                activity: 0,
                rqs: KVec::from_elem(None, RQ_OBJS, GFP_KERNEL)?,
            },
            GFP_KERNEL,
        )?;
        let c: &mut Ctl = &mut ctl;
        // Where what the probe learns is kept, allocated before anything is done on the device.
        let mut info = KBox::new(ProbeInfo::default(), GFP_KERNEL)?;
        // The probe keeps a response buffer and what it learnt: off the stack.
        let mut p = KBox::new(
            Probe::new(ProbeConfig {
                msix: hw.num_vectors() as u32,
                max_vports: MAX_VPORTS,
                os: OS,
                max_region_request: 0,
            }),
            GFP_KERNEL,
        )?;
        let mut wait = PollWait::new();
        let mut mark = progress(&p, &c.hwc.stats);
        let r = loop {
            match p.step(&env, &mut c.hwc, &mut c.eqs[..], &mut c.buf[..]) {
                Action::Done => break Ok(()),
                Action::Failed(e) => {
                    let cause = match e.kind {
                        ProbeErrorKind::Smc(s) => Cause::Smc(s),
                        ProbeErrorKind::Msg(m) => Cause::Msg(m),
                        ProbeErrorKind::Hwc(h) => Cause::Hwc(h),
                        k => Cause::Probe(k),
                    };
                    break Err(probe_error(&p, e.stage, cause));
                }
                Action::Wait => {
                    let now = progress(&p, &c.hwc.stats);
                    if now != mark {
                        mark = now;
                        wait.reset();
                    }
                    if gone(&env, &wait) {
                        break Err(probe_error(&p, p.stage(), Cause::Gone));
                    }
                    if !wait.sleep(REQ_TIMEOUT_MS) {
                        break Err(probe_error(&p, p.stage(), Cause::Timeout));
                    }
                }
            }
        };
        c.established = p.stage() != Stage::SmcSetup;
        c.registered = p.registered();
        c.eqs_created = p.eqs_created();
        if let Err(e) = r {
            if let Some(u) = c.undo(&env, p.info().mana, p.pending_region()) {
                pr_warn!("device {}: undoing a failed bring-up: {}\n", dev, u);
            }
            return Err(ProbeFailure::Ctl(e));
        }
        *info = *p.info();
        Arc::pin_init(
            pin_init!(Self {
                hw: hw.clone(),
                dev,
                ctl <- new_mutex!(ctl, "rsnic::mana::Gdma::ctl"),
                info,
                ports_up: AtomicUsize::new(0),
            }),
            GFP_KERNEL,
        )
        .map_err(ProbeFailure::Kernel)
    }

    /// The vports the probe found (QUERY_DEV_CONFIG's `max_num_vports`, at most
    /// `MAX_VPORTS`), each queried with QUERY_VPORT_CONFIG.
    pub(crate) fn num_vports(&self) -> usize {
        self.info.num_vports
    }

    /// The GDMA protocol version the device answered VERIFY_VF_DRIVER_VERSION with.
    pub(crate) fn gdma_protocol_ver(&self) -> u64 {
        self.info.gdma_protocol_ver
    }

    /// Which of rsnic's own requests the device advertises (QUERY_DEV_CONFIG, see
    /// [`req::RsnicCaps`]): the others are never sent.
    pub(crate) fn rsnic_caps(&self) -> req::RsnicCaps {
        self.info.dev.rsnic_caps
    }

    /// Takes the device down (see the module documentation); the first failure is returned,
    /// the other steps still run. Sleeps.
    pub(crate) fn tear_down(&self) -> Option<CtlError> {
        let env = self.hw.bar();
        self.ctl.lock().undo(&env, self.info.mana, None)
    }
}

/// The failed step of a probe: the request it sent last, or the SMC / HWC init stage.
fn probe_error(p: &Probe<'_>, stage: Stage, cause: Cause) -> CtlError {
    match stage {
        Stage::SmcSetup => CtlError::smc("ESTABLISH_HWC", cause),
        Stage::HwcInit => CtlError {
            code: None,
            smc: None,
            cause,
        },
        _ => CtlError {
            code: p.last_request(),
            smc: None,
            cause,
        },
    }
}

/// Why a bring-up failed.
pub(crate) enum ProbeFailure {
    /// A control-path step failed (reported with the request's name and status).
    Ctl(CtlError),
    /// Memory, or a device the driver cannot use.
    Kernel(Error),
}

crate::family::kernel_error_from!(ProbeFailure);

impl Func {
    /// Port `port`'s function on `gdma` (its vport `port`, configured for transmission with
    /// CONFIG_VPORT_TX as `mana_cfg_vport` does); `ENODEV` if the device has no such vport.
    /// Sleeps.
    pub(crate) fn new(gdma: Arc<Gdma>, port: usize) -> Result<Arc<Self>> {
        if port >= gdma.info.num_vports {
            pr_err!(
                "device {}: port {} has no vport (the device has {})\n",
                gdma.dev,
                port,
                gdma.info.num_vports
            );
            return Err(ENODEV);
        }
        let vport = gdma.info.vports.get(port).copied().ok_or(ENODEV)?;
        let (pdid, db) = (gdma.info.reg.pdid, gdma.info.reg.db_id);
        let tx = {
            let env = gdma.hw.bar();
            let mut ctl = gdma.ctl.lock();
            let who = ctl.caller(gdma.info.mana);
            ctl.request(
                &env,
                req::MANA_CONFIG_VPORT_TX,
                |b| req::config_vport_tx(b, who, vport.vport, pdid, db),
                |r| req::parse_config_vport_tx(r, who),
            )
        };
        let tx = tx.map_err(|e| {
            pr_err!("device {} port {}: {}\n", gdma.dev, port, e);
            e.errno()
        })?;
        let f = Arc::new(
            Self {
                gdma: gdma.clone(),
                port,
                vport,
                tx_vp_offset: tx.tx_vport_offset,
            },
            GFP_KERNEL,
        )?;
        gdma.ports_up.fetch_add(1, Ordering::AcqRel);
        Ok(f)
    }

    /// The device.
    pub(crate) fn gdma(&self) -> &Arc<Gdma> {
        &self.gdma
    }

    /// The vport's configuration (MAC, queue limits, handle).
    pub(crate) fn vport(&self) -> &VportConfig {
        &self.vport
    }

    /// The port's index among its function's vports.
    pub(crate) fn port(&self) -> usize {
        self.port
    }

    /// The memory key REGISTER_DEVICE gave (`gpa_mkey`): every SGE of the data path
    /// carries it (guest physical addresses of the device's protection domain).
    pub(crate) fn gpa_mkey(&self) -> u32 {
        self.gdma.info.reg.gpa_mkey
    }

    /// Most channels the device has room for on this vport: its share (the device's limits
    /// over its vports) of QUERY_MAX_RESOURCES's SQs, RQs, CQs and EQs, as a channel takes
    /// an SQ, an RQ, two CQs (one per direction) and an EQ, after the device's own EQs.
    /// Upstream's `mana_gd_query_max_resources` compares its queue count with each limit
    /// whole (its vports share EQs, and it counts a queue per CQ).
    pub(crate) fn resource_channels(&self) -> u32 {
        let m = &self.gdma.info.max;
        let vports = (self.gdma.info.num_vports as u32).max(1);
        let eqs = m.max_eq.saturating_sub(device_eqs() as u32);
        (m.max_sq / vports)
            .min(m.max_rq / vports)
            .min(m.max_cq / vports / 2)
            .min(eqs / vports)
    }

    /// MSI-X vectors the device can use (`num_msix_usable`: the function's, bounded by
    /// QUERY_MAX_RESOURCES); vector 0 is the HWC's.
    pub(crate) fn msix_usable(&self) -> usize {
        self.gdma.info.num_msix_usable as usize
    }

    /// Refuses one of rsnic's own requests the device does not advertise: `EOPNOTSUPP`,
    /// with the reason in the log (the request is never sent; upstream mana has none).
    fn rsnic_request(&self, has: bool, what: &str) -> Result {
        if has {
            return Ok(());
        }
        pr_err!(
            "device {} port {}: the device does not offer {} (rsnic's own request, not MANA's)\n",
            self.gdma.dev,
            self.port,
            what
        );
        Err(crate::kernel_ext::net::eopnotsupp())
    }

    /// BAR0 offset of the doorbell page REGISTER_DEVICE gave (every queue's doorbells).
    pub(crate) fn db_page(&self) -> u32 {
        self.gdma.info.db_page
    }

    /// CONFIG_VPORT_TX's `tx_vport_offset`.
    pub(crate) fn tx_vp_offset(&self) -> u16 {
        self.tx_vp_offset
    }

    /// Runs `f` on the channel (one request at a time); a failure is logged with the port
    /// and becomes its errno. Sleeps.
    fn with_ctl<T>(
        &self,
        f: impl FnOnce(&mut Ctl, &Bar<'_>, DevId) -> Result<T, CtlError>,
    ) -> Result<T> {
        let env = self.gdma.hw.bar();
        let r = f(&mut self.gdma.ctl.lock(), &env, self.gdma.info.mana);
        r.map_err(|e| {
            pr_err!("port {}: {}\n", self.port, e);
            e.errno()
        })
    }

    /// The port's function goes down; the last one takes the device down. Sleeps.
    pub(crate) fn tear_down(&self) -> Option<CtlError> {
        if self.gdma.ports_up.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.gdma.tear_down()
        } else {
            None
        }
    }
}
