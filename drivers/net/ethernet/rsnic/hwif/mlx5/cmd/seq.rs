// SPDX-License-Identifier: GPL-2.0

//! Bring-up and teardown of a ConnectX function as main.c does it, the subset rsnic needs,
//! as state machines the caller drives one poll at a time (the kernel glue sleeps between
//! polls; host tests run the device between them).
//!
//! Bring-up ([`Bringup`]), in main.c order:
//!
//! 1. `mlx5_function_enable`'s `wait_fw_init` "pre-initializing" ([`Step::WaitPreInit`]:
//!    the firmware accepts the initialization segment's configuration), `mlx5_cmd_enable`
//!    ([`Step::CmdEnable`]) and `wait_fw_init` "initializing" ([`Step::WaitInit`]);
//! 2. `mlx5_core_enable_hca` (ENABLE_HCA);
//! 3. `mlx5_core_set_issi` (QUERY_ISSI, then SET_ISSI 1 when supported);
//! 4. `mlx5_satisfy_startup_pages(dev, 1)`: QUERY_PAGES boot; when the firmware wants
//!    pages the poll returns [`Progress::GivePages`], the caller gives them (MANAGE_PAGES
//!    GIVE, see [`super::pages`]) and resumes with [`Bringup::pages_given`];
//! 5. `set_hca_cap`'s `handle_hca_cap`: the general caps, maximum and current
//!    (QUERY_HCA_CAP twice; an Ethernet port with Ethernet offloads and NIC flow tables is
//!    required), written back with what mlx5_core sets (SET_HCA_CAP, see
//!    [`hca::set_general_caps`]);
//! 6. `mlx5_satisfy_startup_pages(dev, 0)`: QUERY_PAGES init, given the same way;
//! 7. `mlx5_cmd_init_hca` (INIT_HCA), then `mlx5_query_hca_caps`: the current general,
//!    Ethernet and flow table caps (QUERY_HCA_CAP three times), checked as
//!    `mlx5_eth_supported` and `mlx5e_attach_netdev` check them ([`DevCaps::check_eth`],
//!    [`DevCaps::check_flow_table`]: a missing capability fails the bring-up with
//!    [`CmdErrorKind::MissingCap`] or [`CmdErrorKind::CapTooSmall`]),
//!    and `mlx5_query_board_id` (QUERY_ADAPTER: the PSID);
//! 8. `mlx5_load`'s UAR (`mlx5_get_uars_page`: ALLOC_UAR) and `mlx5e_create_mdev_resources`
//!    (ALLOC_PD, ALLOC_TRANSPORT_DOMAIN, CREATE_MKEY: the PA key every data segment names);
//! 9. `mlx5e_create_q_counters` (ALLOC_Q_COUNTER; a failure leaves the port without
//!    `rx_out_of_buffer`, as mlx5e only warns);
//! 10. `mlx5_query_nic_vport_mac_address` / `mlx5_query_nic_vport_mtu` /
//!     `mlx5_query_nic_vport_min_inline` (one QUERY_NIC_VPORT_CONTEXT).
//!
//! A firmware asking for more than [`MAX_FW_PAGES`] pages is refused
//! ([`CmdErrorKind::TooManyPages`]). A negative count at start-up (the firmware has pages
//! to spare) needs nothing given.
//!
//! Teardown ([`Teardown`]) undoes exactly what a (possibly failed) bring-up did, in
//! `mlx5_unload` / `mlx5_function_close` / `mlx5_function_disable` order: DEALLOC_Q_COUNTER,
//! DESTROY_MKEY, DEALLOC_TRANSPORT_DOMAIN, DEALLOC_PD, DEALLOC_UAR, TEARDOWN_HCA, then
//! (when the function was asked about pages) `mlx5_reclaim_startup_pages`: the poll returns
//! [`Progress::Reclaim`], the caller takes every page back (MANAGE_PAGES TAKE until the
//! firmware holds none) and resumes with [`Teardown::reclaimed`]; last DISABLE_HCA. A
//! failing command is recorded and the next one still runs, except after a failed
//! TEARDOWN_HCA (main.c: "skip cleanup": the pages are not reclaimed from a firmware that
//! may still use them).

use super::hca::{
    self, DevCaps, Issi, CAP_ETHERNET_OFFLOADS, CAP_FLOW_TABLE, CAP_GENERAL, ISSI_1, PSID_LEN,
};
use super::mkey;
use super::pages::{self, MAX_FW_PAGES};
use super::queue::{fw_initializing, CmdError, CmdErrorKind, CmdPoll, CmdQueue};
use super::vport::{self, NicVportContext};
use super::{op, res, FormatError};
use crate::hwif::hw::{Barriers, Coherent, Mmio};

/// The longest output of the bring-up (QUERY_HCA_CAP).
const SEQ_CMD_OUT_LEN: usize = hca::QUERY_HCA_CAP_OUT_LEN;
/// Buffer a bring-up or teardown poll needs: the longest output (QUERY_HCA_CAP's), then
/// the longest input (SET_HCA_CAP's, built from the QUERY_HCA_CAP output before it).
pub const SEQ_OUT_LEN: usize = SEQ_CMD_OUT_LEN + hca::SET_HCA_CAP_IN_LEN;
/// UAR pages in a function's BAR window (1 MiB of 4 KiB pages). Page 0 holds the
/// initialization segment, so ALLOC_UAR must give an index in `1..UAR_PAGES`; anything
/// else is refused as a malformed output (the doorbells would land outside the window or
/// on the command registers).
pub const UAR_PAGES: u32 = 256;
/// Longest input of the teardown (CREATE_MKEY's, the longest the bring-up builds besides
/// SET_HCA_CAP).
const SEQ_IN_LEN: usize = mkey::CREATE_MKEY_IN_LEN;
/// The variant byte of the data path's memory key (`mkc.mkey_7_0`, the key's low byte,
/// chosen by the driver: mlx5e leaves it 0; rsnic's is not 0, so a segment that carried
/// the key's index alone would be refused).
pub const MKEY_VARIANT: u8 = 0x5a;

/// Bring-up steps, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Wait for `initializing` to clear before writing the command queue address.
    WaitPreInit,
    /// Write the command queue address.
    CmdEnable,
    /// Wait for `initializing` to clear.
    WaitInit,
    /// ENABLE_HCA.
    EnableHca,
    /// QUERY_ISSI.
    QueryIssi,
    /// SET_ISSI 1.
    SetIssi,
    /// QUERY_PAGES boot.
    QueryBootPages,
    /// The caller gives the boot pages.
    GiveBootPages,
    /// QUERY_HCA_CAP, general, maximum.
    QueryGeneralCapsMax,
    /// QUERY_HCA_CAP, general, current (before SET_HCA_CAP).
    QueryGeneralCaps,
    /// SET_HCA_CAP, general.
    SetGeneralCaps,
    /// QUERY_PAGES init.
    QueryInitPages,
    /// The caller gives the init pages.
    GiveInitPages,
    /// INIT_HCA.
    InitHca,
    /// QUERY_HCA_CAP, general, current (what SET_HCA_CAP left).
    QueryCurCaps,
    /// QUERY_HCA_CAP, Ethernet offloads, current.
    QueryEthCaps,
    /// QUERY_HCA_CAP, flow table, current.
    QueryFlowTableCaps,
    /// QUERY_ADAPTER.
    QueryAdapter,
    /// ALLOC_UAR.
    AllocUar,
    /// ALLOC_PD.
    AllocPd,
    /// ALLOC_TRANSPORT_DOMAIN.
    AllocTd,
    /// CREATE_MKEY.
    CreateMkey,
    /// ALLOC_Q_COUNTER.
    AllocQCounter,
    /// QUERY_NIC_VPORT_CONTEXT.
    QueryVport,
    /// All done.
    Done,
}

/// What a bring-up created and learnt.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Resources {
    /// ENABLE_HCA succeeded.
    pub hca_enabled: bool,
    /// INIT_HCA succeeded.
    pub hca_initialized: bool,
    /// ISSI in use.
    pub issi: u16,
    /// Current capabilities.
    pub caps: DevCaps,
    /// Maximum general capabilities (what SET_HCA_CAP may set).
    pub max_caps: DevCaps,
    /// The board's PSID (QUERY_ADAPTER), NUL-padded.
    pub psid: [u8; PSID_LEN],
    /// UAR page index (ALLOC_UAR).
    pub uar: Option<u32>,
    /// Protection domain.
    pub pd: Option<u32>,
    /// Transport domain.
    pub td: Option<u32>,
    /// The data path's memory key (CREATE_MKEY): the lkey of every data segment.
    pub mkey: Option<u32>,
    /// The port's Q counter set (ALLOC_Q_COUNTER), which its RQs name.
    pub q_counter: Option<u8>,
    /// QUERY_PAGES succeeded: the firmware may hold pages, which teardown reclaims.
    pub pages_asked: bool,
    /// NIC vport context: MAC, MTU, min inline mode.
    pub vport: NicVportContext,
}

impl Resources {
    /// The minimum TX inline mode (`mlx5_query_min_inline`): from the caps, or from the
    /// vport context when the caps defer to it.
    pub fn min_inline_mode(&self) -> u8 {
        self.caps
            .min_inline_from_caps()
            .unwrap_or(self.vport.min_wqe_inline_mode)
    }
}

/// Whether a sequence is finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Waiting for the device; poll again later.
    Pending,
    /// Bring-up: the firmware wants this many pages (at most [`MAX_FW_PAGES`]). Give them
    /// (MANAGE_PAGES GIVE), then call [`Bringup::pages_given`] and poll again.
    GivePages(u32),
    /// Teardown: TEARDOWN_HCA is done; take every page back (MANAGE_PAGES TAKE until the
    /// firmware returns none), then call [`Teardown::reclaimed`] and poll again.
    Reclaim,
    /// Finished.
    Done,
}

/// The bring-up state machine.
#[derive(Debug, Clone)]
pub struct Bringup {
    step: Step,
    /// The outstanding command's opcode and op_mod, once posted.
    posted: Option<(u16, u16)>,
    res: Resources,
    /// Pages the firmware asked for at the current give step.
    want: u32,
}

impl Default for Bringup {
    fn default() -> Self {
        Self::new()
    }
}

fn bad_output(opcode: u16, op_mod: u16) -> impl Fn(FormatError) -> CmdError {
    move |_| CmdError {
        opcode,
        op_mod,
        kind: CmdErrorKind::BadOutput,
    }
}

impl Bringup {
    /// A bring-up at its first step.
    pub fn new() -> Self {
        Self {
            step: Step::WaitPreInit,
            posted: None,
            res: Resources::default(),
            want: 0,
        }
    }

    /// The caller gave the pages [`Progress::GivePages`] asked for: the bring-up goes on.
    /// Does nothing at any other step.
    pub fn pages_given(&mut self) {
        self.step = match self.step {
            Step::GiveBootPages => Step::QueryGeneralCapsMax,
            Step::GiveInitPages => Step::InitHca,
            s => s,
        };
        self.want = 0;
    }

    /// The current step.
    pub fn step(&self) -> Step {
        self.step
    }

    /// What has been created and learnt so far (also after a failure: give it to
    /// [`Teardown::new`]).
    pub fn resources(&self) -> &Resources {
        &self.res
    }

    /// Builds the input of a command step; returns (length, output length). `prev` is the
    /// output of the step before (SET_HCA_CAP writes the current caps back).
    fn build(
        &self,
        step: Step,
        inp: &mut [u8],
        prev: &[u8],
    ) -> Result<(usize, usize), FormatError> {
        Ok(match step {
            Step::EnableHca => (hca::enable_hca(inp)?, hca::ENABLE_HCA_OUT_LEN),
            Step::QueryIssi => (hca::query_issi(inp)?, hca::QUERY_ISSI_OUT_LEN),
            Step::SetIssi => (hca::set_issi(inp, ISSI_1)?, hca::SET_ISSI_OUT_LEN),
            Step::QueryBootPages => (
                pages::query_pages(inp, pages::QUERY_BOOT)?,
                pages::QUERY_PAGES_LEN,
            ),
            Step::QueryInitPages => (
                pages::query_pages(inp, pages::QUERY_INIT)?,
                pages::QUERY_PAGES_LEN,
            ),
            Step::QueryGeneralCapsMax => (
                hca::query_hca_cap_max(inp, CAP_GENERAL)?,
                hca::QUERY_HCA_CAP_OUT_LEN,
            ),
            Step::QueryGeneralCaps | Step::QueryCurCaps => (
                hca::query_hca_cap(inp, CAP_GENERAL)?,
                hca::QUERY_HCA_CAP_OUT_LEN,
            ),
            Step::SetGeneralCaps => (
                hca::set_general_caps(inp, prev, &self.res.max_caps)?,
                hca::SET_HCA_CAP_OUT_LEN,
            ),
            Step::QueryAdapter => (hca::query_adapter(inp)?, hca::QUERY_ADAPTER_OUT_LEN),
            Step::QueryEthCaps => (
                hca::query_hca_cap(inp, CAP_ETHERNET_OFFLOADS)?,
                hca::QUERY_HCA_CAP_OUT_LEN,
            ),
            Step::QueryFlowTableCaps => (
                hca::query_hca_cap(inp, CAP_FLOW_TABLE)?,
                hca::QUERY_HCA_CAP_OUT_LEN,
            ),
            Step::InitHca => (hca::init_hca(inp)?, hca::INIT_HCA_OUT_LEN),
            Step::AllocUar => (res::alloc_uar(inp)?, res::OUT_LEN),
            Step::AllocPd => (res::alloc_pd(inp)?, res::OUT_LEN),
            Step::AllocTd => (res::alloc_transport_domain(inp)?, res::OUT_LEN),
            Step::CreateMkey => (
                mkey::create_mkey(inp, self.res.pd.ok_or(FormatError::BadParam)?, MKEY_VARIANT)?,
                mkey::SHORT_LEN,
            ),
            Step::AllocQCounter => (mkey::alloc_q_counter(inp)?, mkey::SHORT_LEN),
            Step::QueryVport => (
                vport::query_nic_vport_context(inp)?,
                vport::QUERY_NIC_VPORT_CONTEXT_OUT_LEN,
            ),
            Step::WaitPreInit
            | Step::CmdEnable
            | Step::WaitInit
            | Step::GiveBootPages
            | Step::GiveInitPages
            | Step::Done => {
                return Err(FormatError::BadParam);
            }
        })
    }

    /// Records a successful command's output and moves to the next step.
    fn complete(&mut self, out: &[u8], opcode: u16, op_mod: u16) -> Result<(), CmdError> {
        let bad = bad_output(opcode, op_mod);
        self.step = match self.step {
            Step::EnableHca => {
                self.res.hca_enabled = true;
                Step::QueryIssi
            }
            Step::QueryIssi => {
                let issi: Issi = hca::parse_query_issi(out).map_err(&bad)?;
                if issi.supports_1() {
                    Step::SetIssi
                } else {
                    // mlx5_core_set_issi: "Only ISSI 0 is supported".
                    self.res.issi = 0;
                    Step::QueryBootPages
                }
            }
            Step::SetIssi => {
                self.res.issi = ISSI_1;
                Step::QueryBootPages
            }
            Step::QueryBootPages | Step::QueryInitPages => {
                let (_, n) = pages::parse_query_pages(out).map_err(&bad)?;
                self.res.pages_asked = true;
                let boot = self.step == Step::QueryBootPages;
                if n > 0 {
                    let n = n as u32;
                    if n > MAX_FW_PAGES {
                        return Err(CmdError {
                            opcode,
                            op_mod,
                            kind: CmdErrorKind::TooManyPages {
                                asked: n,
                                cap: MAX_FW_PAGES,
                            },
                        });
                    }
                    self.want = n;
                    if boot {
                        Step::GiveBootPages
                    } else {
                        Step::GiveInitPages
                    }
                } else if boot {
                    Step::QueryGeneralCapsMax
                } else {
                    Step::InitHca
                }
            }
            Step::QueryGeneralCapsMax => {
                hca::parse_general_caps(out, &mut self.res.max_caps).map_err(&bad)?;
                Step::QueryGeneralCaps
            }
            Step::QueryGeneralCaps | Step::QueryCurCaps => {
                hca::parse_general_caps(out, &mut self.res.caps).map_err(&bad)?;
                // mlx5_eth_supported's general caps: without them there is no Ethernet
                // function to bring up.
                self.res.caps.check_general().map_err(|kind| CmdError {
                    opcode,
                    op_mod,
                    kind,
                })?;
                if self.step == Step::QueryGeneralCaps {
                    Step::SetGeneralCaps
                } else {
                    Step::QueryEthCaps
                }
            }
            Step::SetGeneralCaps => Step::QueryInitPages,
            Step::QueryEthCaps => {
                hca::parse_eth_caps(out, &mut self.res.caps).map_err(&bad)?;
                self.res
                    .caps
                    .check_eth()
                    .map_err(|(cap_type, kind)| CmdError {
                        opcode,
                        op_mod: cap_type << 1 | hca::HCA_CAP_OPMOD_GET_CUR,
                        kind,
                    })?;
                Step::QueryFlowTableCaps
            }
            Step::QueryFlowTableCaps => {
                hca::parse_flow_table_caps(out, &mut self.res.caps).map_err(&bad)?;
                // mlx5_eth_supported's max_ft_level, fs_core's ft_support, and room for
                // rsnic's tables.
                self.res
                    .caps
                    .check_flow_table(super::fs::MAX_LOG_SIZE, super::fs::TABLES)
                    .map_err(|kind| CmdError {
                        opcode,
                        op_mod,
                        kind,
                    })?;
                Step::QueryAdapter
            }
            Step::QueryAdapter => {
                self.res.psid = hca::parse_query_adapter(out).map_err(&bad)?;
                Step::AllocUar
            }
            Step::InitHca => {
                self.res.hca_initialized = true;
                Step::QueryCurCaps
            }
            Step::AllocUar => {
                let uar = res::parse_alloc_uar(out).map_err(&bad)?;
                if uar == 0 || uar >= UAR_PAGES {
                    // The device handed out a UAR the driver cannot use: give it back.
                    self.res.uar = Some(uar);
                    return Err(bad(FormatError::BadParam));
                }
                self.res.uar = Some(uar);
                Step::AllocPd
            }
            Step::AllocPd => {
                self.res.pd = Some(res::parse_alloc_pd(out).map_err(&bad)?);
                Step::AllocTd
            }
            Step::AllocTd => {
                self.res.td = Some(res::parse_alloc_transport_domain(out).map_err(&bad)?);
                Step::CreateMkey
            }
            Step::CreateMkey => {
                self.res.mkey = Some(mkey::parse_create_mkey(out, MKEY_VARIANT).map_err(&bad)?);
                Step::AllocQCounter
            }
            Step::AllocQCounter => {
                // A set id of 0 counts nowhere: the port goes without (as a failure).
                self.res.q_counter = mkey::parse_alloc_q_counter(out).ok();
                Step::QueryVport
            }
            Step::QueryVport => {
                self.res.vport = vport::parse_query_nic_vport_context(out).map_err(&bad)?;
                Step::Done
            }
            s @ (Step::WaitPreInit
            | Step::CmdEnable
            | Step::WaitInit
            | Step::GiveBootPages
            | Step::GiveInitPages
            | Step::Done) => s,
        };
        Ok(())
    }

    /// Advances as far as possible without waiting. `buf` must hold [`SEQ_OUT_LEN`] bytes
    /// (the outputs, then the inputs), and the caller leaves it alone between polls. On an
    /// error the sequence stops where it is: tear down with
    /// `Teardown::new(self.resources())`.
    pub fn poll<C: Coherent, M: Mmio, B: Barriers>(
        &mut self,
        q: &mut CmdQueue<C>,
        mmio: &M,
        bar: &B,
        buf: &mut [u8],
    ) -> Result<Progress, CmdError> {
        let have = buf.len();
        let Some((out, inp)) = buf
            .get_mut(..SEQ_OUT_LEN)
            .map(|b| b.split_at_mut(SEQ_CMD_OUT_LEN))
        else {
            return Err(CmdError::iface(CmdErrorKind::BadLength {
                inlen: hca::SET_HCA_CAP_IN_LEN,
                outlen: have,
            }));
        };
        loop {
            match self.step {
                Step::Done => return Ok(Progress::Done),
                Step::WaitPreInit => {
                    if fw_initializing(mmio) {
                        return Ok(Progress::Pending);
                    }
                    self.step = Step::CmdEnable;
                }
                Step::CmdEnable => {
                    q.enable(mmio, bar)?;
                    self.step = Step::WaitInit;
                }
                Step::WaitInit => {
                    if !q.poll_ready(mmio)? {
                        return Ok(Progress::Pending);
                    }
                    self.step = Step::EnableHca;
                }
                Step::GiveBootPages | Step::GiveInitPages => {
                    return Ok(Progress::GivePages(self.want));
                }
                step => {
                    // Built once, when posted: the input of SET_HCA_CAP is the output of
                    // the QUERY_HCA_CAP just completed, which the poll overwrites.
                    let (opcode, op_mod) = match self.posted {
                        Some(p) => p,
                        None => {
                            let (n, outlen) = self.build(step, inp, out).map_err(|_| {
                                CmdError::iface(CmdErrorKind::BadLength {
                                    inlen: inp.len(),
                                    outlen: out.len(),
                                })
                            })?;
                            let opcode = u16::from_be_bytes([inp[0], inp[1]]);
                            let op_mod = u16::from_be_bytes([inp[6], inp[7]]);
                            q.post(&inp[..n], outlen, mmio, bar)?;
                            self.posted = Some((opcode, op_mod));
                            (opcode, op_mod)
                        }
                    };
                    match q.poll(bar, out) {
                        Ok(CmdPoll::Pending) => return Ok(Progress::Pending),
                        Ok(CmdPoll::Done(len)) => {
                            self.posted = None;
                            self.complete(&out[..len], opcode, op_mod)?;
                        }
                        Err(e)
                            if step == Step::AllocQCounter
                                && matches!(e.kind, CmdErrorKind::Status { .. }) =>
                        {
                            // mlx5e_create_q_counters: "alloc queue counter failed", and
                            // the port goes on without.
                            self.posted = None;
                            self.res.q_counter = None;
                            self.step = Step::QueryVport;
                        }
                        Err(e) => {
                            if e.kind != CmdErrorKind::OutputBufferTooSmall {
                                self.posted = None;
                            }
                            return Err(e);
                        }
                    }
                }
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TStep {
    DeallocQCounter(u8),
    DestroyMkey(u32),
    DeallocTd(u32),
    DeallocPd(u32),
    DeallocUar(u32),
    TeardownHca,
    Reclaim,
    DisableHca,
}

/// The teardown state machine.
#[derive(Debug, Clone)]
pub struct Teardown {
    steps: [Option<TStep>; 8],
    idx: usize,
    posted: bool,
    first_error: Option<CmdError>,
}

impl Teardown {
    /// Undoes what `res` records.
    pub fn new(res: &Resources) -> Self {
        let steps = [
            res.q_counter.map(TStep::DeallocQCounter),
            res.mkey.map(TStep::DestroyMkey),
            res.td.map(TStep::DeallocTd),
            res.pd.map(TStep::DeallocPd),
            res.uar.map(TStep::DeallocUar),
            res.hca_initialized.then_some(TStep::TeardownHca),
            (res.hca_enabled && res.pages_asked).then_some(TStep::Reclaim),
            res.hca_enabled.then_some(TStep::DisableHca),
        ];
        Self {
            steps,
            idx: 0,
            posted: false,
            first_error: None,
        }
    }

    /// The first command that failed, if any (the others still ran).
    pub fn first_error(&self) -> Option<CmdError> {
        self.first_error
    }

    /// The caller took the pages back ([`Progress::Reclaim`]): the teardown goes on.
    /// Does nothing at any other step.
    pub fn reclaimed(&mut self) {
        if self.steps.get(self.idx).copied().flatten() == Some(TStep::Reclaim) {
            self.idx += 1;
        }
    }

    fn record(&mut self, e: CmdError) {
        if self.first_error.is_none() {
            self.first_error = Some(e);
        }
    }

    /// Advances as far as possible without waiting. `out` must hold at least 16 bytes.
    /// Returns `Done` when every step ran (see [`Teardown::first_error`]).
    pub fn poll<C: Coherent, M: Mmio, B: Barriers>(
        &mut self,
        q: &mut CmdQueue<C>,
        mmio: &M,
        bar: &B,
        out: &mut [u8],
    ) -> Progress {
        while self.idx < self.steps.len() {
            let Some(step) = self.steps[self.idx] else {
                self.idx += 1;
                continue;
            };
            if step == TStep::Reclaim {
                return Progress::Reclaim;
            }
            let mut inp = [0u8; SEQ_IN_LEN];
            let built = match step {
                TStep::DeallocQCounter(id) => mkey::dealloc_q_counter(&mut inp, id),
                TStep::DestroyMkey(k) => mkey::destroy_mkey(&mut inp, k),
                TStep::Reclaim => Err(FormatError::BadParam),
                TStep::DeallocTd(td) => res::dealloc_transport_domain(&mut inp, td),
                TStep::DeallocPd(pd) => res::dealloc_pd(&mut inp, pd),
                TStep::DeallocUar(uar) => res::dealloc_uar(&mut inp, uar),
                TStep::TeardownHca => hca::teardown_hca(&mut inp),
                TStep::DisableHca => hca::disable_hca(&mut inp),
            };
            let outlen = match step {
                TStep::DisableHca => hca::ENABLE_HCA_OUT_LEN,
                _ => res::OUT_LEN,
            };
            let Ok(n) = built else {
                self.record(CmdError::iface(CmdErrorKind::BadOutput));
                self.idx += 1;
                continue;
            };
            if !self.posted {
                if let Err(e) = q.post(&inp[..n], outlen, mmio, bar) {
                    // Nothing can be posted any more (queue down or abandoned).
                    self.record(e);
                    self.idx = self.steps.len();
                    break;
                }
                self.posted = true;
            }
            match q.poll(bar, out) {
                Ok(CmdPoll::Pending) => return Progress::Pending,
                Ok(CmdPoll::Done(_)) => {
                    self.posted = false;
                    self.idx += 1;
                }
                Err(e) => {
                    self.posted = false;
                    self.record(e);
                    if e.opcode == op::TEARDOWN_HCA || e.kind == CmdErrorKind::OutputBufferTooSmall
                    {
                        // main.c: "tear_down_hca failed, skip cleanup".
                        self.idx = self.steps.len();
                    } else {
                        self.idx += 1;
                    }
                }
            }
        }
        Progress::Done
    }
}
