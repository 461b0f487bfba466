// SPDX-License-Identifier: GPL-2.0

//! The probe-time sequence of `mana_gd_probe` and `mana_probe` (6.12), for the subset rsnic
//! needs, as a step machine the caller drives: [`Probe::step`] does what it can without
//! waiting and returns [`Action::Wait`] when the device has to answer first; the caller
//! sleeps (or runs the device, in host tests) and calls again, and gives up after its own
//! timeout. Nothing here sleeps or allocates.
//!
//! Before the first step the caller reads the VF registers ([`super::hwc::GdmaRegs::read`],
//! `mana_gd_init_registers` / `mana_gd_init_vf_regs`) and builds the channel
//! ([`Hwc::new`], `mana_hwc_init_queues`). The steps ([`Stage`]) then mirror:
//!
//! | stage | upstream |
//! |---|---|
//! | [`Stage::SmcSetup`] | `mana_smc_setup_hwc`: wait for the window, write ESTABLISH_HWC, wait for and check the response |
//! | [`Stage::HwcInit`] | `mana_hwc_establish_channel`: the init EQEs up to INIT_DONE, then [`Hwc::finish_init`] |
//! | [`Stage::HwcTest`] | `mana_hwc_test_channel` → `mana_gd_test_eq` on the HWC EQ |
//! | [`Stage::VerifyVersion`] | `mana_gd_verify_vf_version` |
//! | [`Stage::QueryMaxResources`] | `mana_gd_query_max_resources` |
//! | [`Stage::ListDevices`] | `mana_gd_detect_devices` |
//! | [`Stage::RegisterDevice`] | `mana_probe` → `mana_gd_register_device` (pdid, gpa_mkey, doorbell page) |
//! | [`Stage::CreateEqs`] | `mana_create_eq` → `mana_gd_create_mana_eq`: per EQ `mana_gd_create_dma_region` (+ ADD_PAGES when the page list does not fit one request), `mana_gd_create_hw_eq`, `mana_gd_test_eq` |
//! | [`Stage::QueryDevConfig`] | `mana_query_device_cfg` |
//! | [`Stage::QueryVports`] | `mana_init_port` → `mana_query_vport_cfg` per port |
//!
//! The doorbell page of every later queue is the one GDMA_REGISTER_DEVICE returned
//! (`db_id`), at `GDMA_REG_DB_PAGE_OFFSET + db_id × GDMA_REG_DB_PAGE_SIZE` ([`ProbeInfo::db_page`]).

use super::cq::{Eq, Overflow};
use super::fmt::{DB_EQ, EQE_SIZE};
use super::gdma_req::{self as req, Caller, DevConfig, DevId, MaxResources, MsgError};
use super::gdma_req::{Registration, VportConfig};
use super::hwc::{Hwc, HwcError, EQE_TEST_EVENT};
use super::smc::{self, SmcError};
use crate::hwif::hw::{Barriers, Coherent, Mmio};

/// Most vports the probe queries.
pub const MAX_VPORTS: usize = 16;
/// `LOG2_EQ_THROTTLE`.
pub const LOG2_EQ_THROTTLE: u32 = 3;
/// `EQ_SIZE`: bytes of each MANA EQ (8 pages).
pub const EQ_SIZE: u32 = 8 * 4096;
/// Bytes of the response buffer the probe keeps (the largest response it reads is
/// LIST_DEVICES, 296 bytes).
const RESP_BUF: usize = 512;

/// Where the probe is (and, in a [`ProbeError`], where it failed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// ESTABLISH_HWC through the SMC.
    SmcSetup,
    /// Waiting for the HWC init events.
    HwcInit,
    /// The HWC EQ test event.
    HwcTest,
    /// GDMA_VERIFY_VF_DRIVER_VERSION.
    VerifyVersion,
    /// GDMA_QUERY_MAX_RESOURCES.
    QueryMaxResources,
    /// GDMA_LIST_DEVICES.
    ListDevices,
    /// GDMA_REGISTER_DEVICE.
    RegisterDevice,
    /// The MANA EQs (DMA region, CREATE_QUEUE, test event).
    CreateEqs,
    /// MANA_QUERY_DEV_CONFIG.
    QueryDevConfig,
    /// MANA_QUERY_VPORT_CONFIG.
    QueryVports,
    /// Finished.
    Done,
}

/// What went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeErrorKind {
    /// The SMC refused or answered wrongly.
    Smc(SmcError),
    /// The channel failed.
    Hwc(HwcError),
    /// A request could not be built or its response was refused.
    Msg(MsgError),
    /// The device offers too little (no MSI-X for a queue, no MANA device, no EQ buffers).
    Limits,
    /// An EQ overflowed while waiting for its test event.
    EqOverflow,
}

/// The failure of a probe: the stage (which names the request) and the cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeError {
    /// Where.
    pub stage: Stage,
    /// Why.
    pub kind: ProbeErrorKind,
}

/// What [`Probe::step`] asks of the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// The device has to answer: sleep (or run the device) and call again.
    Wait,
    /// The probe is complete: see [`Probe::info`].
    Done,
    /// The probe failed; calling again returns the same error.
    Failed(ProbeError),
}

/// What the probe learnt.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProbeInfo {
    /// The MANA device's id.
    pub mana: DevId,
    /// The PF's capability flags from VERIFY_VF_DRIVER_VERSION.
    pub pf_cap_flags1: u64,
    /// The GDMA protocol version the device answered VERIFY_VF_DRIVER_VERSION with.
    pub gdma_protocol_ver: u64,
    /// The device's limits.
    pub max: MaxResources,
    /// `max_num_queues` as `mana_gd_query_max_resources` computes it from the wanted
    /// number of EQs.
    pub max_num_queues: u32,
    /// `num_msix_usable` after the limit of the device.
    pub num_msix_usable: u32,
    /// pdid, gpa_mkey and doorbell page from REGISTER_DEVICE.
    pub reg: Registration,
    /// BAR0 offset of the registered doorbell page.
    pub db_page: u32,
    /// The device configuration.
    pub dev: DevConfig,
    /// Vports queried.
    pub num_vports: usize,
    /// Their configuration.
    pub vports: [VportConfig; MAX_VPORTS],
}

/// What the caller asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeConfig<'a> {
    /// MSI-X vectors the caller has (`num_msix_usable` before the device's limit; one is
    /// the HWC's).
    pub msix: u32,
    /// Most vports to query.
    pub max_vports: usize,
    /// What VERIFY_VF_DRIVER_VERSION tells about the OS.
    pub os: req::OsInfo<'a>,
    /// Largest DMA region request (0: what the channel carries); a region whose page list
    /// does not fit continues with GDMA_DMA_REGION_ADD_PAGES.
    pub max_region_request: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sub {
    /// Send the stage's (next) request, or wait for the SMC window.
    Start,
    /// Waiting for the SMC response.
    SmcResp,
    /// Waiting for a response to message `id`.
    Resp(u16),
    /// Waiting for a test event on the HWC EQ or on MANA EQ `eq`.
    TestEvent,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum EqStep {
    #[default]
    Region,
    AddPages,
    Create,
    Test,
}

/// The probe state machine.
pub struct Probe<'a> {
    cfg: ProbeConfig<'a>,
    stage: Stage,
    sub: Sub,
    failed: Option<ProbeError>,
    info: ProbeInfo,
    activity: u32,
    /// Current EQ, its step, region handle and pages listed so far.
    eq: usize,
    eq_step: EqStep,
    region: u64,
    pages_done: u32,
    vport: usize,
    /// The code of the request sent last.
    last_req: Option<u32>,
    /// REGISTER_DEVICE succeeded.
    registered: bool,
    resp: [u8; RESP_BUF],
}

/// The length of the response to message `id` ([`Probe::response`]), or `return Ok(false)`
/// (wait) from the calling step when it has not arrived yet.
macro_rules! response_or_wait {
    ($self:ident, $env:ident, $hwc:ident, $id:ident) => {
        match $self.response($env, $hwc, $id)? {
            Some(n) => n,
            None => return Ok(false),
        }
    };
}

impl<'a> Probe<'a> {
    /// A probe that has not started.
    pub fn new(cfg: ProbeConfig<'a>) -> Self {
        Self {
            cfg,
            stage: Stage::SmcSetup,
            sub: Sub::Start,
            failed: None,
            info: ProbeInfo::default(),
            activity: 0,
            eq: 0,
            eq_step: EqStep::Region,
            region: 0,
            pages_done: 0,
            vport: 0,
            last_req: None,
            registered: false,
            resp: [0; RESP_BUF],
        }
    }

    /// The current stage.
    pub fn stage(&self) -> Stage {
        self.stage
    }

    /// What the probe learnt (complete once [`Action::Done`] was returned).
    pub fn info(&self) -> &ProbeInfo {
        &self.info
    }

    /// The code of the request sent last (the one a failure in an HWC stage is about), or
    /// `None` before the first (SMC and HWC init stages).
    pub fn last_request(&self) -> Option<u32> {
        self.last_req
    }

    /// Whether GDMA_REGISTER_DEVICE succeeded (the device must be deregistered on the way
    /// back).
    pub fn registered(&self) -> bool {
        self.registered
    }

    /// How many of the caller's EQs the device created (GDMA_CREATE_QUEUE answered), from
    /// the first: the ones to disable on the way back.
    pub fn eqs_created(&self) -> usize {
        match self.stage {
            Stage::CreateEqs if self.eq_step == EqStep::Test => self.eq + 1,
            Stage::CreateEqs => self.eq,
            Stage::QueryDevConfig | Stage::QueryVports | Stage::Done => self.eq,
            _ => 0,
        }
    }

    /// The DMA region the device created for an EQ that does not own it yet (the probe
    /// stopped between CREATE_DMA_REGION and CREATE_QUEUE): the one to destroy on the way
    /// back.
    pub fn pending_region(&self) -> Option<u64> {
        (self.region != req::GDMA_INVALID_DMA_REGION).then_some(self.region)
    }

    /// The `Caller` of the next MANA request (`mana_send_request`: the MANA `dev_id` and a
    /// fresh `activity_id`).
    fn mana_caller(&mut self) -> Caller {
        self.activity = self.activity.wrapping_add(1);
        Caller {
            dev_id: self.info.mana,
            activity_id: self.activity,
        }
    }

    /// Runs the probe as far as it goes without waiting. `eqs` are the MANA EQs to create
    /// (their buffers of [`EQ_SIZE`] bytes, ids set here), at most `max_num_queues` of them
    /// are created; `scratch` holds each request before it is copied to the channel (at
    /// least 640 bytes, VERIFY_VF_DRIVER_VERSION's size).
    pub fn step<C: Coherent, E: Mmio + Barriers>(
        &mut self,
        env: &E,
        hwc: &mut Hwc<C>,
        eqs: &mut [Eq<C>],
        scratch: &mut [u8],
    ) -> Action {
        if let Some(e) = self.failed {
            return Action::Failed(e);
        }
        loop {
            if self.stage == Stage::Done {
                return Action::Done;
            }
            match self.advance(env, hwc, eqs, scratch) {
                Ok(true) => {}
                Ok(false) => return Action::Wait,
                Err(kind) => {
                    let e = ProbeError {
                        stage: self.stage,
                        kind,
                    };
                    self.failed = Some(e);
                    return Action::Failed(e);
                }
            }
        }
    }

    fn send<C: Coherent, E: Mmio + Barriers>(
        &mut self,
        env: &E,
        hwc: &mut Hwc<C>,
        scratch: &[u8],
    ) -> Result<bool, ProbeErrorKind> {
        let id = hwc.send(env, scratch).map_err(ProbeErrorKind::Hwc)?;
        self.last_req = scratch
            .get(4..8)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
        self.sub = Sub::Resp(id);
        Ok(true)
    }

    /// Sends `struct gdma_general_req` with `code` ([`req::general`]), expecting
    /// `resp_size` bytes back.
    fn send_general<C: Coherent, E: Mmio + Barriers>(
        &mut self,
        env: &E,
        hwc: &mut Hwc<C>,
        scratch: &mut [u8],
        code: u32,
        resp_size: usize,
        who: Caller,
    ) -> Result<bool, ProbeErrorKind> {
        let n = req::general(scratch, code, resp_size, who).map_err(ProbeErrorKind::Msg)?;
        self.send(env, hwc, &scratch[..n])
    }

    /// The response to message `id`, if it arrived (`Ok(None)`: wait).
    fn response<C: Coherent, E: Mmio + Barriers>(
        &mut self,
        env: &E,
        hwc: &mut Hwc<C>,
        id: u16,
    ) -> Result<Option<usize>, ProbeErrorKind> {
        hwc.process_events(env);
        match hwc.take_response(env, id, &mut self.resp) {
            None => Ok(None),
            Some(Ok(n)) => {
                self.sub = Sub::Start;
                Ok(Some(n))
            }
            Some(Err(HwcError::Status(s))) => Err(ProbeErrorKind::Msg(MsgError::Status(s))),
            Some(Err(e)) => Err(ProbeErrorKind::Hwc(e)),
        }
    }

    /// One move; `Ok(false)` means wait.
    fn advance<C: Coherent, E: Mmio + Barriers>(
        &mut self,
        env: &E,
        hwc: &mut Hwc<C>,
        eqs: &mut [Eq<C>],
        scratch: &mut [u8],
    ) -> Result<bool, ProbeErrorKind> {
        use ProbeErrorKind::{Msg, Smc};
        let max = hwc.max_request().min(scratch.len());
        let buf = &mut scratch[..max];
        match (self.stage, self.sub) {
            (Stage::SmcSetup, Sub::Start) => {
                let base = hwc.regs().smc_base().ok_or(Smc(SmcError::BadAddress))?;
                if !smc::poll_idle(env, base) {
                    return Ok(false);
                }
                let w = smc::establish_words(&hwc.addrs(), super::hwc::HWC_MSIX).map_err(Smc)?;
                smc::write(env, base, &w);
                self.sub = Sub::SmcResp;
                Ok(true)
            }
            (Stage::SmcSetup, _) => {
                let base = hwc.regs().smc_base().ok_or(Smc(SmcError::BadAddress))?;
                if !smc::poll_idle(env, base) {
                    return Ok(false);
                }
                smc::read_response(env, base, smc::SMC_MSG_ESTABLISH_HWC).map_err(Smc)?;
                self.stage = Stage::HwcInit;
                self.sub = Sub::Start;
                Ok(true)
            }
            (Stage::HwcInit, _) => {
                hwc.process_events(env);
                if !hwc.init().done {
                    return Ok(false);
                }
                hwc.finish_init(env).map_err(ProbeErrorKind::Hwc)?;
                self.stage = Stage::HwcTest;
                Ok(true)
            }
            (Stage::HwcTest, Sub::Start) => {
                let eq = hwc.init().eq_id.unwrap_or(0);
                req::generate_test_eqe(buf, DevId::HWC, eq).map_err(Msg)?;
                let n = req::TEST_EQE_REQ_SIZE;
                self.send(env, hwc, &buf[..n])
            }
            (Stage::HwcTest, Sub::Resp(id)) => {
                let n = response_or_wait!(self, env, hwc, id);
                req::parse_general(&self.resp[..n], req::GDMA_GENERATE_TEST_EQE, None)
                    .map_err(Msg)?;
                self.sub = Sub::TestEvent;
                Ok(true)
            }
            (Stage::HwcTest, _) => {
                hwc.process_events(env);
                if !hwc.take_test_event() {
                    return Ok(false);
                }
                self.stage = Stage::VerifyVersion;
                self.sub = Sub::Start;
                Ok(true)
            }
            (Stage::VerifyVersion, Sub::Start) => {
                let n = req::verify_vf_version(buf, &self.cfg.os).map_err(Msg)?;
                self.send(env, hwc, &buf[..n])
            }
            (Stage::VerifyVersion, Sub::Resp(id)) => {
                let n = response_or_wait!(self, env, hwc, id);
                let r = req::parse_verify_vf_version(&self.resp[..n]).map_err(Msg)?;
                self.info.pf_cap_flags1 = r.pf_cap_flags1;
                self.info.gdma_protocol_ver = r.gdma_protocol_ver;
                self.stage = Stage::QueryMaxResources;
                Ok(true)
            }
            (Stage::QueryMaxResources, Sub::Start) => self.send_general(
                env,
                hwc,
                buf,
                req::GDMA_QUERY_MAX_RESOURCES,
                req::QUERY_MAX_RES_RESP_SIZE,
                Caller::GDMA,
            ),
            (Stage::QueryMaxResources, Sub::Resp(id)) => {
                let n = response_or_wait!(self, env, hwc, id);
                let m = req::parse_query_max_resources(&self.resp[..n]).map_err(Msg)?;
                self.info.max = m;
                // mana_gd_query_max_resources: MSI-X, then queues bounded by every limit and
                // by the vectors left after the HWC's.
                let msix = self.cfg.msix.min(m.max_msix);
                if msix <= 1 {
                    return Err(ProbeErrorKind::Limits);
                }
                self.info.num_msix_usable = msix;
                self.info.max_num_queues = (eqs.len() as u32)
                    .min(64)
                    .min(m.max_eq)
                    .min(m.max_cq)
                    .min(m.max_sq)
                    .min(m.max_rq)
                    .min(msix - 1);
                self.stage = Stage::ListDevices;
                Ok(true)
            }
            (Stage::ListDevices, Sub::Start) => self.send_general(
                env,
                hwc,
                buf,
                req::GDMA_LIST_DEVICES,
                req::LIST_DEVICES_RESP_SIZE,
                Caller::GDMA,
            ),
            (Stage::ListDevices, Sub::Resp(id)) => {
                let n = response_or_wait!(self, env, hwc, id);
                let l = req::parse_list_devices(&self.resp[..n]).map_err(Msg)?;
                self.info.mana = l.mana.ok_or(ProbeErrorKind::Limits)?;
                self.stage = Stage::RegisterDevice;
                Ok(true)
            }
            (Stage::RegisterDevice, Sub::Start) => {
                let who = Caller::dev(self.info.mana);
                self.send_general(
                    env,
                    hwc,
                    buf,
                    req::GDMA_REGISTER_DEVICE,
                    req::REGISTER_DEVICE_RESP_SIZE,
                    who,
                )
            }
            (Stage::RegisterDevice, Sub::Resp(id)) => {
                let n = response_or_wait!(self, env, hwc, id);
                let r = req::parse_register_device(&self.resp[..n]).map_err(Msg)?;
                self.info.reg = r;
                self.registered = true;
                self.info.db_page = hwc
                    .regs()
                    .doorbell_page(r.db_id)
                    .ok_or(ProbeErrorKind::Hwc(HwcError::BadDoorbell))?;
                self.stage = Stage::CreateEqs;
                self.eq = 0;
                self.eq_step = EqStep::Region;
                Ok(true)
            }
            (Stage::CreateEqs, _) => self.eq_advance(env, hwc, eqs, buf),
            (Stage::QueryDevConfig, Sub::Start) => {
                let who = self.mana_caller();
                let n = req::query_dev_config(buf, who).map_err(Msg)?;
                self.send(env, hwc, &buf[..n])
            }
            (Stage::QueryDevConfig, Sub::Resp(id)) => {
                let n = response_or_wait!(self, env, hwc, id);
                let who = self.last_caller();
                self.info.dev = req::parse_query_dev_config(&self.resp[..n], who).map_err(Msg)?;
                self.stage = Stage::QueryVports;
                self.vport = 0;
                Ok(true)
            }
            (Stage::QueryVports, Sub::Start) => {
                let want = usize::from(self.info.dev.max_num_vports)
                    .min(MAX_VPORTS)
                    .min(self.cfg.max_vports);
                if self.vport >= want {
                    self.info.num_vports = want;
                    self.stage = Stage::Done;
                    return Ok(true);
                }
                let who = self.mana_caller();
                let n = req::query_vport_config(buf, who, self.vport as u32).map_err(Msg)?;
                self.send(env, hwc, &buf[..n])
            }
            (Stage::QueryVports, Sub::Resp(id)) => {
                let n = response_or_wait!(self, env, hwc, id);
                let who = self.last_caller();
                let v = req::parse_query_vport_config(&self.resp[..n], who).map_err(Msg)?;
                if let Some(d) = self.info.vports.get_mut(self.vport) {
                    *d = v;
                }
                self.vport += 1;
                Ok(true)
            }
            (Stage::Done, _) => Ok(true),
            // Sub-states that do not occur in these stages.
            (_, _) => {
                self.sub = Sub::Start;
                Ok(true)
            }
        }
    }

    fn last_caller(&self) -> Caller {
        Caller {
            dev_id: self.info.mana,
            activity_id: self.activity,
        }
    }

    /// `mana_create_eq`: for each EQ, its DMA region, GDMA_CREATE_QUEUE and the test event.
    fn eq_advance<C: Coherent, E: Mmio + Barriers>(
        &mut self,
        env: &E,
        hwc: &mut Hwc<C>,
        eqs: &mut [Eq<C>],
        buf: &mut [u8],
    ) -> Result<bool, ProbeErrorKind> {
        use ProbeErrorKind::Msg;
        let count = (self.info.max_num_queues as usize).min(eqs.len());
        if count == 0 {
            return Err(ProbeErrorKind::Limits);
        }
        if self.eq >= count {
            self.stage = Stage::QueryDevConfig;
            self.sub = Sub::Start;
            return Ok(true);
        }
        let i = self.eq;
        let (base, len) = match eqs.get(i) {
            Some(e) => (e.buffer().dma_addr(), e.num() * EQE_SIZE as u32),
            None => return Err(ProbeErrorKind::Limits),
        };
        let pages = len / req::MANA_PAGE_SIZE;
        let lim = match self.cfg.max_region_request {
            0 => buf.len(),
            n => n.min(buf.len()),
        };
        match (self.eq_step, self.sub) {
            (EqStep::Region, Sub::Start) => {
                let (n, listed) =
                    req::create_dma_region(&mut buf[..lim], base, len).map_err(Msg)?;
                self.pages_done = listed;
                self.send(env, hwc, &buf[..n])
            }
            (EqStep::Region, Sub::Resp(id)) => {
                let n = response_or_wait!(self, env, hwc, id);
                self.region = req::parse_create_dma_region(&self.resp[..n]).map_err(Msg)?;
                self.eq_step = if self.pages_done < pages {
                    EqStep::AddPages
                } else {
                    EqStep::Create
                };
                Ok(true)
            }
            (EqStep::AddPages, Sub::Start) => {
                let (n, listed) = req::dma_region_add_pages(
                    &mut buf[..lim],
                    self.region,
                    base,
                    self.pages_done,
                    pages,
                )
                .map_err(Msg)?;
                self.pages_done += listed;
                self.send(env, hwc, &buf[..n])
            }
            (EqStep::AddPages, Sub::Resp(id)) => {
                let n = response_or_wait!(self, env, hwc, id);
                req::parse_general(&self.resp[..n], req::GDMA_DMA_REGION_ADD_PAGES, None)
                    .map_err(Msg)?;
                if self.pages_done >= pages {
                    self.eq_step = EqStep::Create;
                }
                Ok(true)
            }
            (EqStep::Create, Sub::Start) => {
                let spec = req::EqSpec {
                    dev_id: self.info.mana,
                    pdid: self.info.reg.pdid,
                    doorbell: self.info.reg.db_id,
                    region: self.region,
                    queue_size: len,
                    log2_throttle_limit: LOG2_EQ_THROTTLE,
                    msix_index: (i as u32 + 1) % self.info.num_msix_usable.max(1),
                };
                let n = req::create_eq(buf, &spec).map_err(Msg)?;
                self.send(env, hwc, &buf[..n])
            }
            (EqStep::Create, Sub::Resp(id)) => {
                let n = response_or_wait!(self, env, hwc, id);
                let q = req::parse_create_queue(&self.resp[..n]).map_err(Msg)?;
                if q > 0xffff {
                    return Err(Msg(MsgError::BadValue));
                }
                let db = self.info.db_page + DB_EQ;
                if let Some(e) = eqs.get_mut(i) {
                    e.set_id(q, db);
                }
                // The region now belongs to the queue (upstream forgets its handle).
                self.region = req::GDMA_INVALID_DMA_REGION;
                self.eq_step = EqStep::Test;
                Ok(true)
            }
            (EqStep::Test, Sub::Start) => {
                let q = eqs.get(i).map_or(0, |e| e.id());
                let n = req::generate_test_eqe(buf, self.info.mana, q).map_err(Msg)?;
                self.send(env, hwc, &buf[..n])
            }
            (EqStep::Test, Sub::Resp(id)) => {
                let n = response_or_wait!(self, env, hwc, id);
                req::parse_general(&self.resp[..n], req::GDMA_GENERATE_TEST_EQE, None)
                    .map_err(Msg)?;
                self.sub = Sub::TestEvent;
                Ok(true)
            }
            (EqStep::Test, _) => {
                let Some(e) = eqs.get_mut(i) else {
                    return Err(ProbeErrorKind::Limits);
                };
                loop {
                    match e.next_event(env) {
                        Ok(Some(ev)) if ev.eqe_type == EQE_TEST_EVENT => {
                            e.arm(env);
                            self.eq += 1;
                            self.eq_step = EqStep::Region;
                            self.sub = Sub::Start;
                            return Ok(true);
                        }
                        Ok(Some(_)) => {}
                        Ok(None) => return Ok(false),
                        Err(Overflow) => return Err(ProbeErrorKind::EqOverflow),
                    }
                }
            }
            (_, _) => {
                self.sub = Sub::Start;
                Ok(true)
            }
        }
    }
}
