// SPDX-License-Identifier: GPL-2.0

//! The hardware channel (HWC), driver side (6.12 `hw_channel.c`, `gdma_main.c`).
//!
//! The HWC is a GDMA device of its own with one EQ, one CQ, one RQ and one SQ in DMA memory
//! the driver allocates (4 KiB each here, `MANA_MIN_QSIZE`), plus one request and one
//! response buffer per in-flight message. Mirrors upstream as follows:
//!
//! * [`Hwc::new`]: `mana_hwc_init_queues` (queue memory and message buffers; nothing touches
//!   the device). CQ and EQ start with `head = num` (`INITIALIZED_OWNER_BIT`).
//! * [`Hwc::addrs`] and [`crate::hwif::mana::smc`]: `mana_hwc_establish_channel` hands the
//!   queue addresses and the EQ's MSI-X index to the device through the SMC.
//! * [`Hwc::process_events`]: the HWC EQ's interrupt (`mana_gd_process_eq_events` with
//!   `mana_hwc_init_event_handler` for the INIT_EQ_ID_DB / INIT_DATA / INIT_DONE events,
//!   GDMA_EQE_TEST_EVENT for `mana_gd_test_eq`, and `mana_hwc_comp_event` for completions:
//!   up to `2 × depth` CQEs, then the CQ is rung with arm = 1).
//! * [`Hwc::finish_init`]: after INIT_DONE, the checks of `mana_hwc_establish_channel` and
//!   the RQ half of `mana_hwc_test_channel` (every RQ WQE posted and rung); the caller then
//!   sends GDMA_GENERATE_TEST_EQE for the HWC EQ and waits for the test event
//!   ([`Hwc::take_test_event`]), as upstream does.
//! * [`Hwc::send`]: `mana_hwc_send_request`: a free message id, the request copied into its
//!   buffer with `hwc_msg_id` set, one SQ WQE (8-byte header, 24-byte `hwc_tx_oob`, one SGE)
//!   and the SQ doorbell.
//! * [`Hwc::take_response`]: the caller's wait: `mana_hwc_rx_event_handler` /
//!   `mana_hwc_handle_resp` stored the response; it is copied out, its RQ WQE re-posted and
//!   the message id freed; a status other than 0 or `GDMA_STATUS_MORE_ENTRIES` is an error.
//!
//! Nothing from the device is trusted: an RX completion must name the HWC RQ and a WQE
//! offset inside it, the SGE of that WQE (read from the driver's own ring, as upstream does)
//! must point at the start of a response buffer, the message id (read once) must be one in
//! flight, and the length must hold a response header and fit the buffer. A completion that
//! fails a check is counted and its RQ WQE re-posted (upstream leaks it for a bad msg_id).
//! Nothing here sleeps or allocates: waiting (with a timeout) is the caller's.

use super::cq::{Cq, Eq, Overflow};
use super::fmt::{
    eq_doorbell, rq_doorbell, sq_doorbell, Eqe, Sge, WqeHeader, BU_SIZE, CQE_SIZE, DB_CQ, DB_EQ,
    DB_RQ, DB_SQ, EQE_COMPLETION, EQE_SIZE, INLINE_OOB_LARGE, INLINE_OOB_SMALL, SGE_SIZE,
    WQE_HDR_SIZE,
};
use super::gdma_req::{RespHdr, GDMA_STATUS_MORE_ENTRIES, RESP_HDR_SIZE};
use super::smc::HwcAddrs;
use super::wq::Wq;
use crate::hwif::bytes::le32;
use crate::hwif::hw::{Barriers, Coherent, Mmio};

/// Bytes of every HWC queue (`MANA_MIN_QSIZE`: the sizes upstream computes for a depth of 1
/// all round up to it).
pub const HWC_QUEUE_SIZE: u32 = 4096;
/// Bytes of each request and response buffer (`HW_CHANNEL_MAX_REQUEST_SIZE`,
/// `HW_CHANNEL_MAX_RESPONSE_SIZE`).
pub const HWC_MAX_MSG: usize = 4096;
/// Messages in flight (`HW_CHANNEL_VF_BOOTSTRAP_QUEUE_DEPTH`).
pub const HWC_DEPTH: usize = 1;
/// The HWC EQ's MSI-X index (`mana_hwc_create_gdma_eq`).
pub const HWC_MSIX: u16 = 0;
/// `sizeof(struct hwc_tx_oob)`.
pub const HWC_TX_OOB_SIZE: usize = 24;

/// `GDMA_EQE_TEST_EVENT`.
pub const EQE_TEST_EVENT: u8 = 64;
/// `GDMA_EQE_HWC_INIT_EQ_ID_DB`.
pub const EQE_HWC_INIT_EQ_ID_DB: u8 = 129;
/// `GDMA_EQE_HWC_INIT_DATA`.
pub const EQE_HWC_INIT_DATA: u8 = 130;
/// `GDMA_EQE_HWC_INIT_DONE`.
pub const EQE_HWC_INIT_DONE: u8 = 131;

/// `HWC_INIT_DATA_CQID`.
pub const HWC_INIT_DATA_CQID: u8 = 1;
/// `HWC_INIT_DATA_RQID`.
pub const HWC_INIT_DATA_RQID: u8 = 2;
/// `HWC_INIT_DATA_SQID`.
pub const HWC_INIT_DATA_SQID: u8 = 3;
/// `HWC_INIT_DATA_QUEUE_DEPTH`.
pub const HWC_INIT_DATA_QUEUE_DEPTH: u8 = 4;
/// `HWC_INIT_DATA_MAX_REQUEST`.
pub const HWC_INIT_DATA_MAX_REQUEST: u8 = 5;
/// `HWC_INIT_DATA_MAX_RESPONSE`.
pub const HWC_INIT_DATA_MAX_RESPONSE: u8 = 6;
/// `HWC_INIT_DATA_MAX_NUM_CQS`.
pub const HWC_INIT_DATA_MAX_NUM_CQS: u8 = 7;
/// `HWC_INIT_DATA_PDID`.
pub const HWC_INIT_DATA_PDID: u8 = 8;
/// `HWC_INIT_DATA_GPA_MKEY`.
pub const HWC_INIT_DATA_GPA_MKEY: u8 = 9;

/// VF register: doorbell page size (`GDMA_REG_DB_PAGE_SIZE`, low 16 bits).
pub const GDMA_REG_DB_PAGE_SIZE: u32 = 0x10;
/// VF register: BAR0 offset of the doorbell pages (`GDMA_REG_DB_PAGE_OFFSET`, 64-bit).
pub const GDMA_REG_DB_PAGE_OFFSET: u32 = 0x08;
/// VF register: BAR0 offset of the SMC window (`GDMA_REG_SHM_OFFSET`, 64-bit).
pub const GDMA_REG_SHM_OFFSET: u32 = 0x18;

/// What `mana_gd_init_vf_regs` reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GdmaRegs {
    /// Doorbell page size (`& 0xFFFF`).
    pub db_page_size: u32,
    /// BAR0 offset of doorbell page 0.
    pub db_page_offset: u64,
    /// BAR0 offset of the SMC window.
    pub shm_offset: u64,
}

impl GdmaRegs {
    /// Reads the VF registers (64-bit ones with [`Mmio::read64`]).
    pub fn read<M: Mmio>(mmio: &M) -> Self {
        Self {
            db_page_size: mmio.read32(GDMA_REG_DB_PAGE_SIZE) & 0xffff,
            db_page_offset: mmio.read64(GDMA_REG_DB_PAGE_OFFSET),
            shm_offset: mmio.read64(GDMA_REG_SHM_OFFSET),
        }
    }

    /// BAR0 offset of doorbell page `db_id` (`db_page_base + db_page_size × db_index`), if it
    /// fits the 32-bit register space.
    pub fn doorbell_page(&self, db_id: u32) -> Option<u32> {
        let off = u64::from(self.db_page_size)
            .checked_mul(u64::from(db_id))?
            .checked_add(self.db_page_offset)?;
        u32::try_from(off).ok()?.checked_add(0x1000)?;
        u32::try_from(off).ok()
    }

    /// BAR0 offset of the SMC window, if it fits (it has 8 dwords).
    pub fn smc_base(&self) -> Option<u32> {
        let b = u32::try_from(self.shm_offset).ok()?;
        b.checked_add(32)?;
        (b % 4 == 0).then_some(b)
    }

    /// Whether the page size is usable (at least the 4 KiB the queue offsets need).
    pub fn valid(&self) -> bool {
        self.db_page_size >= 0x1000 && self.smc_base().is_some()
    }
}

/// Why the HWC refused or failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HwcError {
    /// A buffer is smaller than required.
    BadBuffer,
    /// The channel is not established (INIT_DONE not seen, or not tested).
    NotReady,
    /// The device's init events are incomplete or impossible (`-EPROTO`).
    BadInit,
    /// Every message id is in flight.
    Busy,
    /// The request is shorter than a header or longer than the channel allows (`-EINVAL`).
    BadRequest,
    /// The SQ or RQ has no room (a device that does not complete).
    NoSpace,
    /// The message id is not in flight.
    NotInFlight,
    /// The response length is impossible or larger than the caller's buffer (`-EPROTO`).
    BadLength(u32),
    /// The device answered with a failure status (`-EPROTO`).
    Status(u32),
    /// The doorbell page does not fit in BAR0.
    BadDoorbell,
}

/// Values the init events gave (`mana_hwc_init_event_handler`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HwcInit {
    /// HWC EQ id (INIT_EQ_ID_DB bits 0..15).
    pub eq_id: Option<u32>,
    /// HWC doorbell page (INIT_EQ_ID_DB bits 16..31).
    pub doorbell: Option<u32>,
    /// HWC CQ id.
    pub cq_id: Option<u32>,
    /// HWC RQ id.
    pub rq_id: Option<u32>,
    /// HWC SQ id.
    pub sq_id: Option<u32>,
    /// `hwc_init_q_depth_max`.
    pub queue_depth: u32,
    /// `hwc_init_max_req_msg_size`.
    pub max_req: u32,
    /// `hwc_init_max_resp_msg_size`.
    pub max_resp: u32,
    /// `max_num_cqs`: CQ ids are below it.
    pub max_num_cqs: u32,
    /// The HWC's `pdid`.
    pub pdid: u32,
    /// The HWC queues' `gpa_mkey`.
    pub gpa_mkey: u32,
    /// INIT_DONE arrived.
    pub done: bool,
}

/// Counts of the channel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HwcStats {
    /// Requests posted.
    pub requests: u64,
    /// Responses delivered to a waiting caller.
    pub responses: u64,
    /// EQEs handled.
    pub eqes: u64,
    /// EQEs of a type the HWC does not handle (ignored, as upstream does).
    pub unknown_events: u64,
    /// SQ completions.
    pub tx_cqes: u64,
    /// Completions or responses refused by a check (wrong queue, offset, buffer, message
    /// id or length).
    pub bad_completions: u64,
    /// EQ or CQ overflows seen.
    pub overflows: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Slot {
    busy: bool,
    /// The response arrived: (response buffer index, length) or the error.
    done: Option<Result<(usize, u32), HwcError>>,
}

/// One interrupt's work ([`Hwc::process_events`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HwcPoll {
    /// EQEs handled.
    pub events: u32,
    /// Responses stored for callers.
    pub responses: u32,
}

/// The queue memory and message buffers of the HWC, allocated by the caller: four queues of
/// [`HWC_QUEUE_SIZE`] bytes (page aligned), and [`HWC_DEPTH`] × [`HWC_MAX_MSG`] bytes for
/// requests and for responses.
pub struct HwcBuffers<C> {
    /// EQ memory.
    pub eq: C,
    /// CQ memory.
    pub cq: C,
    /// RQ memory.
    pub rq: C,
    /// SQ memory.
    pub sq: C,
    /// Request buffers.
    pub req: C,
    /// Response buffers.
    pub resp: C,
}

/// The hardware channel.
pub struct Hwc<C: Coherent> {
    eq: Eq<C>,
    cq: Cq<C>,
    rq: Wq<C>,
    sq: Wq<C>,
    req: C,
    resp: C,
    regs: GdmaRegs,
    init: HwcInit,
    ready: bool,
    rq_posted: bool,
    slots: [Slot; HWC_DEPTH],
    /// Response buffers holding a response not yet taken.
    resp_held: [bool; HWC_DEPTH],
    test_event: Option<u32>,
    /// Counts.
    pub stats: HwcStats,
}

impl<C: Coherent> Hwc<C> {
    /// The channel over `b` (`mana_hwc_init_queues`); zeroes the queue memory. The registers
    /// come from [`GdmaRegs::read`].
    pub fn new(b: HwcBuffers<C>, regs: GdmaRegs) -> Result<Self, HwcError> {
        let qs = HWC_QUEUE_SIZE as usize;
        let msgs = HWC_DEPTH * HWC_MAX_MSG;
        if b.req.size() < msgs || b.resp.size() < msgs {
            return Err(HwcError::BadBuffer);
        }
        for q in [&b.eq, &b.cq, &b.rq, &b.sq] {
            if q.size() < qs || q.dma_addr() % u64::from(HWC_QUEUE_SIZE) != 0 {
                return Err(HwcError::BadBuffer);
            }
        }
        b.rq.zero(0, qs);
        b.sq.zero(0, qs);
        let eq =
            Eq::new(b.eq, 0, HWC_QUEUE_SIZE / EQE_SIZE as u32, 0).ok_or(HwcError::BadBuffer)?;
        let cq =
            Cq::new(b.cq, 0, HWC_QUEUE_SIZE / CQE_SIZE as u32, 0).ok_or(HwcError::BadBuffer)?;
        let rq = Wq::new(b.rq, HWC_QUEUE_SIZE).ok_or(HwcError::BadBuffer)?;
        let sq = Wq::new(b.sq, HWC_QUEUE_SIZE).ok_or(HwcError::BadBuffer)?;
        Ok(Self {
            eq,
            cq,
            rq,
            sq,
            req: b.req,
            resp: b.resp,
            regs,
            init: HwcInit::default(),
            ready: false,
            rq_posted: false,
            slots: [Slot::default(); HWC_DEPTH],
            resp_held: [false; HWC_DEPTH],
            test_event: None,
            stats: HwcStats::default(),
        })
    }

    /// The queue addresses for ESTABLISH_HWC.
    pub fn addrs(&self) -> HwcAddrs {
        HwcAddrs {
            eq: self.eq.buffer().dma_addr(),
            cq: self.cq.buffer().dma_addr(),
            rq: self.rq.ring().dma_addr(),
            sq: self.sq.ring().dma_addr(),
        }
    }

    /// What the init events said so far.
    pub fn init(&self) -> &HwcInit {
        &self.init
    }

    /// Whether the channel carries requests ([`Hwc::finish_init`] succeeded).
    pub fn ready(&self) -> bool {
        self.ready
    }

    /// The registers the channel was built with.
    pub fn regs(&self) -> &GdmaRegs {
        &self.regs
    }

    /// The largest request the channel carries: the smaller of the buffer and the device's
    /// `MAX_REQUEST`.
    pub fn max_request(&self) -> usize {
        HWC_MAX_MSG.min(self.init.max_req as usize)
    }

    fn page(&self) -> Result<u32, HwcError> {
        self.init
            .doorbell
            .and_then(|d| self.regs.doorbell_page(d))
            .ok_or(HwcError::BadDoorbell)
    }

    fn on_init_event(&mut self, e: &Eqe) {
        let d = e.details[0];
        match e.eqe_type {
            EQE_HWC_INIT_EQ_ID_DB => {
                self.init.eq_id = Some(d & 0xffff);
                self.init.doorbell = Some(d >> 16);
                if let Some(p) = self.init.doorbell.and_then(|x| self.regs.doorbell_page(x)) {
                    self.eq.set_id(d & 0xffff, p + DB_EQ);
                }
            }
            EQE_HWC_INIT_DATA => {
                let v = d & 0x00ff_ffff;
                match (d >> 24) as u8 {
                    HWC_INIT_DATA_CQID => self.init.cq_id = Some(v),
                    HWC_INIT_DATA_RQID => self.init.rq_id = Some(v),
                    HWC_INIT_DATA_SQID => self.init.sq_id = Some(v),
                    HWC_INIT_DATA_QUEUE_DEPTH => self.init.queue_depth = v & 0xffff,
                    HWC_INIT_DATA_MAX_REQUEST => self.init.max_req = v,
                    HWC_INIT_DATA_MAX_RESPONSE => self.init.max_resp = v,
                    HWC_INIT_DATA_MAX_NUM_CQS => self.init.max_num_cqs = v,
                    HWC_INIT_DATA_PDID => self.init.pdid = v,
                    HWC_INIT_DATA_GPA_MKEY => self.init.gpa_mkey = v,
                    _ => self.stats.unknown_events += 1,
                }
            }
            EQE_HWC_INIT_DONE => self.init.done = true,
            _ => self.stats.unknown_events += 1,
        }
    }

    /// After INIT_DONE: checks what the device said (every id present, the CQ id below
    /// `max_num_cqs`, a depth and message sizes the channel can use, a doorbell page in BAR0)
    /// and posts every RQ WQE, ringing the RQ doorbell (`mana_hwc_test_channel`).
    pub fn finish_init<E: Mmio + Barriers>(&mut self, env: &E) -> Result<(), HwcError> {
        let i = self.init;
        let (Some(_), Some(cq), Some(_), Some(_), true) =
            (i.eq_id, i.cq_id, i.rq_id, i.sq_id, i.done)
        else {
            return Err(HwcError::BadInit);
        };
        if cq >= i.max_num_cqs
            || (i.queue_depth as usize) < HWC_DEPTH
            || (i.max_req as usize) < super::gdma_req::REQ_HDR_SIZE
            || (i.max_resp as usize) < RESP_HDR_SIZE
        {
            return Err(HwcError::BadInit);
        }
        let page = self.page()?;
        self.cq.set_id(cq, page + DB_CQ);
        if !self.rq_posted {
            for k in 0..HWC_DEPTH {
                self.post_rx(k)?;
            }
            self.ring_rq(env, page);
            self.rq_posted = true;
        }
        self.ready = true;
        Ok(())
    }

    fn post_rx(&mut self, k: usize) -> Result<(), HwcError> {
        let hdr = WqeHeader {
            num_sge: 1,
            inline_oob_size_div4: (INLINE_OOB_SMALL / 4) as u8,
            ..WqeHeader::default()
        };
        let sge = Sge {
            address: self.resp.dma_addr() + (k * HWC_MAX_MSG) as u64,
            mem_key: self.init.gpa_mkey,
            size: HWC_MAX_MSG as u32,
        };
        self.rq
            .post(&hdr, &[], INLINE_OOB_SMALL, &[sge])
            .map_err(|_| HwcError::NoSpace)?;
        Ok(())
    }

    fn ring_rq<E: Mmio + Barriers>(&self, env: &E, page: u32) {
        let id = self.init.rq_id.unwrap_or(0);
        env.wmb();
        env.write64(
            page + DB_RQ,
            rq_doorbell(id, 0, self.rq.doorbell_tail()).to_le_bytes(),
        );
    }

    /// Posts a request (`mana_hwc_send_request` up to the wait) and returns its message id.
    /// `req` must hold a request header and fit [`Hwc::max_request`].
    pub fn send<E: Mmio + Barriers>(&mut self, env: &E, req: &[u8]) -> Result<u16, HwcError> {
        if !self.ready {
            return Err(HwcError::NotReady);
        }
        if req.len() < super::gdma_req::REQ_HDR_SIZE || req.len() > self.max_request() {
            return Err(HwcError::BadRequest);
        }
        let id = self
            .slots
            .iter()
            .position(|s| !s.busy)
            .ok_or(HwcError::Busy)?;
        let page = self.page()?;
        let off = id * HWC_MAX_MSG;
        self.req.write(off, req);
        self.req.write(off + 10, &(id as u16).to_le_bytes());
        let (sq_id, cq_id) = (self.init.sq_id.unwrap_or(0), self.init.cq_id.unwrap_or(0));
        let mut oob = [0u8; HWC_TX_OOB_SIZE];
        // vrq_id, dest_vfid, vrcq_id: 0 on a VF; vscq_id at 16, loopback/lso/dest_pf 0.
        oob[16..20].copy_from_slice(&(cq_id & 0x00ff_ffff).to_le_bytes());
        oob[20..24].copy_from_slice(&(sq_id & 0x00ff_ffff).to_le_bytes());
        let hdr = WqeHeader {
            num_sge: 1,
            inline_oob_size_div4: (INLINE_OOB_LARGE / 4) as u8,
            ..WqeHeader::default()
        };
        let sge = Sge {
            address: self.req.dma_addr() + off as u64,
            mem_key: self.init.gpa_mkey,
            size: req.len() as u32,
        };
        self.sq
            .post(&hdr, &oob, INLINE_OOB_LARGE, &[sge])
            .map_err(|_| HwcError::NoSpace)?;
        if let Some(s) = self.slots.get_mut(id) {
            *s = Slot {
                busy: true,
                done: None,
            };
        }
        self.stats.requests += 1;
        env.wmb();
        env.write64(
            page + DB_SQ,
            sq_doorbell(sq_id, self.sq.doorbell_tail()).to_le_bytes(),
        );
        Ok(id as u16)
    }

    /// The caller's wait for message `id`: `None` while no response arrived. Otherwise the
    /// message id is freed and the result returned: the response copied into `out` (its
    /// length), or the error (a response longer than `out`, a failure status). A status of
    /// `GDMA_STATUS_MORE_ENTRIES` counts as success, as upstream.
    pub fn take_response<E: Mmio + Barriers>(
        &mut self,
        env: &E,
        id: u16,
        out: &mut [u8],
    ) -> Option<Result<usize, HwcError>> {
        let slot = match self.slots.get(usize::from(id)) {
            Some(s) if s.busy => *s,
            _ => return Some(Err(HwcError::NotInFlight)),
        };
        let done = slot.done?;
        if let Some(s) = self.slots.get_mut(usize::from(id)) {
            *s = Slot::default();
        }
        let r = match done {
            Err(e) => Err(e),
            Ok((k, len)) => {
                let n = len as usize;
                let r = match out.get_mut(..n) {
                    None => Err(HwcError::BadLength(len)),
                    Some(dst) => {
                        self.resp.read(k * HWC_MAX_MSG, dst);
                        match RespHdr::get(dst).status {
                            0 | GDMA_STATUS_MORE_ENTRIES => Ok(n),
                            s => Err(HwcError::Status(s)),
                        }
                    }
                };
                self.repost(env, k);
                r
            }
        };
        self.stats.responses += 1;
        Some(r)
    }

    /// Forgets message `id` (the caller timed out). A response that already arrived has
    /// its buffer re-posted; one that comes later is refused (and its buffer re-posted).
    pub fn abandon<E: Mmio + Barriers>(&mut self, env: &E, id: u16) {
        let Some(s) = self.slots.get_mut(usize::from(id)) else {
            return;
        };
        let done = s.done;
        *s = Slot::default();
        if let Some(Ok((k, _))) = done {
            self.repost(env, k);
        }
    }

    fn repost<E: Mmio + Barriers>(&mut self, env: &E, k: usize) {
        if let Some(h) = self.resp_held.get_mut(k) {
            *h = false;
        }
        if self.post_rx(k).is_ok() {
            if let Ok(p) = self.page() {
                self.ring_rq(env, p);
            }
        }
    }

    /// Whether a GDMA_EQE_TEST_EVENT arrived on the HWC EQ since the last call, consuming it.
    pub fn take_test_event(&mut self) -> bool {
        self.test_event.take().is_some()
    }

    /// Handles one HWC EQ interrupt: up to 5 EQEs (init events, test event, completions of
    /// the HWC CQ), then the EQ is re-armed (also after an overflow). Before the first init
    /// event the EQ's id is unknown and it is rung with id 0 on no page: nothing is rung.
    pub fn process_events<E: Mmio + Barriers>(&mut self, env: &E) -> HwcPoll {
        let mut r = HwcPoll::default();
        let mut n = 0;
        while n < super::cq::EQ_EVENTS_PER_IRQ {
            let e = match self.eq.next_event(env) {
                Ok(Some(e)) => e,
                Ok(None) => break,
                Err(Overflow) => {
                    self.stats.overflows += 1;
                    n += 1;
                    break;
                }
            };
            n += 1;
            r.events += 1;
            self.stats.eqes += 1;
            match e.eqe_type {
                EQE_COMPLETION => {
                    if Some(e.details[0] & 0x00ff_ffff) == self.init.cq_id && self.ready {
                        r.responses += self.comp_event(env);
                    } else {
                        self.stats.bad_completions += 1;
                    }
                }
                EQE_TEST_EVENT => self.test_event = self.init.eq_id,
                // Once the channel runs, its ids and sizes are fixed: later init events
                // are ignored (upstream would apply them).
                _ if self.ready => self.stats.unknown_events += 1,
                _ => self.on_init_event(&e),
            }
        }
        if n > 0 && self.init.eq_id.is_some() && self.page().is_ok() {
            let num = self.eq.num();
            let tail = self.eq.head() & ((num << 3) - 1);
            if let Ok(p) = self.page() {
                env.wmb();
                env.write64(
                    p + DB_EQ,
                    eq_doorbell(self.eq.id(), tail, true).to_le_bytes(),
                );
            }
        }
        r
    }

    /// `mana_hwc_comp_event`: up to `2 × depth` CQEs, then the CQ is rung with arm = 1.
    fn comp_event<E: Mmio + Barriers>(&mut self, env: &E) -> u32 {
        let mut got = 0;
        for _ in 0..2 * HWC_DEPTH {
            match self.cq.poll_one(env) {
                Ok(Some(c)) => {
                    if c.is_sq {
                        if Some(c.wq_num) == self.init.sq_id {
                            self.stats.tx_cqes += 1;
                            self.sq.move_tail(2);
                        } else {
                            self.stats.bad_completions += 1;
                        }
                    } else if Some(c.wq_num) == self.init.rq_id {
                        got += u32::from(self.rx_event(env, &c.data));
                    } else {
                        self.stats.bad_completions += 1;
                    }
                }
                Ok(None) => break,
                Err(Overflow) => {
                    self.stats.overflows += 1;
                    break;
                }
            }
        }
        self.cq.ring(true, env);
        got
    }

    /// `mana_hwc_rx_event_handler` + `mana_hwc_handle_resp` for one RQ completion
    /// (`struct hwc_rx_oob`: `wqe_offset` at 12, `tx_oob_data_size` at 24).
    fn rx_event<E: Mmio + Barriers>(&mut self, env: &E, oob: &[u8; 60]) -> bool {
        let wqe_offset = le32(oob, 12);
        let len = le32(oob, 24);
        self.rq.move_tail(1);
        if wqe_offset % BU_SIZE != 0 || wqe_offset >= HWC_QUEUE_SIZE {
            self.stats.bad_completions += 1;
            return false;
        }
        // The SGE of that WQE, from the driver's own ring.
        let mut h = [0u8; WQE_HDR_SIZE];
        self.rq.ring().read(wqe_offset as usize, &mut h);
        let hdr = WqeHeader::decode(&h);
        let sge_off = wqe_offset as usize + WQE_HDR_SIZE + hdr.oob_size();
        let mut s = [0u8; SGE_SIZE];
        if sge_off + SGE_SIZE > HWC_QUEUE_SIZE as usize {
            self.stats.bad_completions += 1;
            return false;
        }
        self.rq.ring().read(sge_off, &mut s);
        let sge = Sge::decode(&s);
        let base = self.resp.dma_addr();
        let rel = sge.address.wrapping_sub(base);
        let k = (rel / HWC_MAX_MSG as u64) as usize;
        if sge.address < base || rel % HWC_MAX_MSG as u64 != 0 || k >= HWC_DEPTH {
            self.stats.bad_completions += 1;
            return false;
        }
        // Read the message id once (the device could change the buffer).
        let mut idb = [0u8; 2];
        self.resp.read(k * HWC_MAX_MSG + 10, &mut idb);
        let id = usize::from(u16::from_le_bytes(idb));
        let in_flight = self
            .slots
            .get(id)
            .is_some_and(|s| s.busy && s.done.is_none());
        if !in_flight {
            self.stats.bad_completions += 1;
            self.repost(env, k);
            return false;
        }
        let res = if (len as usize) < RESP_HDR_SIZE || len as usize > HWC_MAX_MSG {
            self.repost(env, k);
            Err(HwcError::BadLength(len))
        } else {
            if let Some(h) = self.resp_held.get_mut(k) {
                *h = true;
            }
            Ok((k, len))
        };
        if let Some(s) = self.slots.get_mut(id) {
            s.done = Some(res);
        }
        true
    }
}
