// SPDX-License-Identifier: GPL-2.0

//! The device's half of the MANA hardware channel (the driver's is `hwif/mana/hwc.rs`): the
//! HWC's EQ, CQ, RQ and SQ, the WQEs the driver posts with its requests, the responses
//! written into its RQ buffers and announced by CQE and EQE. Upstream hw_channel.c
//! (`mana_hwc_send_request`, `mana_hwc_rx_event_handler`), gdma.h (`gdma_wqe`, `gdma_sge`,
//! `hwc_rx_oob`, `hwc_tx_oob`). The message layouts are read here from the 6.12 headers
//! independently of the driver's (only the byte order of `hwif/bytes.rs` is shared); the
//! requests themselves are `gdma_req.rs`'s, the SMC `smc.rs`'s.
//!
//! **Registers.** 0x08/0x0C `GDMA_REG_DB_PAGE_OFFSET` (64-bit, read as two dwords), 0x10
//! `GDMA_REG_DB_PAGE_SIZE`, 0x18/0x1C `GDMA_REG_SHM_OFFSET` = [`super::SMC_BASE`]: the SMC window
//! of eight dwords. Writing its last dword hands it to the device (bit 31 reads set, "PF owns")
//! until the next engine run executes the message and writes the response header (direction 1,
//! status: 0 ok, 1 unsupported version/direction/`reset_vf`, 2 bad MSI-X index, 3 wrong state such
//! as ESTABLISH twice). Writes while it is busy are ignored and counted. ESTABLISH_HWC takes the
//! EQ, CQ, RQ and SQ page frames (48 + 4 bits each) and the EQ's MSI-X index; the HWC queues are 4
//! KiB each; the EQ and CQ start armed (the driver cannot ring them before it knows their ids). The
//! device then writes INIT_EQ_ID_DB (EQ id [`super::HWC_EQ_ID`], doorbell page
//! [`super::HWC_DB_ID`]), INIT_DATA for the CQ, RQ and SQ ids, queue depth, max request/response
//! ([`super::HWC_MAX_MSG`]), [`super::MAX_NUM_CQS`], pdid and gpa_mkey, and INIT_DONE. DESTROY_HWC
//! takes the HWC down.
//!
//! **HWC.** An SQ doorbell on page [`super::HWC_DB_ID`] makes the next run execute the posted WQEs:
//! each must be 2 BUs with one SGE, a 24-byte `hwc_tx_oob` naming the HWC SQ and CQ, the
//! HWC memory key and at most 4 KiB; a malformed one stops the HWC SQ with an error CQE
//! (`vendor_err` 1). The request is read from host memory (page lists and indirection
//! tables entry by entry), executed, the SQ completed (`is_sq` = 1) and the response written
//! into the buffer of the next posted HWC RQ WQE, completed with `hwc_rx_oob`
//! (`wqe_offset`, `tx_oob_data_size` = the response length). With no RQ WQE posted the
//! response is dropped and counted ([`super::HwcCounters::no_rx_wqe`]). CQ → EQE → MSI-X follow
//! the arming rules of the data path.

use super::engine::{eqe, slot};
use super::gdma_req::{
    known, MAX_NUM_CQS, STATUS_BUFFER_TOO_SMALL, STATUS_INTERNAL_ERROR,
    STATUS_INVALID_DEVICE_REQUEST, STATUS_INVALID_PARAMETER, STATUS_REVISION_MISMATCH,
};
use super::{CmdError, Device, Port, QueueSet};
use crate::hwif::bytes::{le16, le32, le64, put_le16, put_le32};
use crate::hwif::hw::{BusMemory, DmaAddr, InterruptSink};
use core::ops::DerefMut;

/// Doorbell page of the HWC (INIT_EQ_ID_DB's `doorbell`).
pub const HWC_DB_ID: u32 = 0;
/// Doorbell page of the MANA device (GDMA_REGISTER_DEVICE's `db_id`).
pub const MANA_DB_ID: u32 = 1;
/// HWC EQ id.
pub const HWC_EQ_ID: u32 = 0x10;
/// HWC CQ id.
pub const HWC_CQ_ID: u32 = 0x11;
/// HWC RQ id.
pub const HWC_RQ_ID: u32 = 0x12;
/// HWC SQ id.
pub const HWC_SQ_ID: u32 = 0x13;
/// HWC protection domain (HWC_INIT_DATA_PDID).
pub const HWC_PDID: u32 = 0x1;
/// HWC memory key (HWC_INIT_DATA_GPA_MKEY): every HWC SGE must carry it.
pub const HWC_MKEY: u32 = 0x4857;
/// MANA protection domain (REGISTER_DEVICE's `pdid`).
pub const MANA_PDID: u32 = 0x2;
/// MANA memory key (REGISTER_DEVICE's `gpa_mkey`; data SGEs are not checked).
pub const MANA_MKEY: u32 = 0x4d4e;
/// `dev_id` of the HWC (type 1, instance 0).
pub const HWC_DEV_ID: u32 = 1;
/// `dev_id` of the MANA device (type 2, instance 1).
pub const MANA_DEV_ID: u32 = 2 | (1 << 16);
/// Messages the HWC takes at once (HWC_INIT_DATA_QUEUE_DEPTH).
pub const HWC_QUEUE_DEPTH: u32 = 1;
/// Largest request and response (HWC_INIT_DATA_MAX_REQUEST / MAX_RESPONSE).
pub const HWC_MAX_MSG: u32 = 4096;

pub(super) const PAGE: u64 = 4096;
pub(super) const HWC_QSIZE: u32 = 4096;
/// Bytes of a request the device reads at once; page lists and indirection tables are read
/// from host memory entry by entry.
const HEAD: usize = 128;
/// Largest response the model writes.
const RESP_MAX: usize = 512;

pub(super) const EQE_TEST_EVENT: u32 = 64;
const EQE_INIT_EQ_ID_DB: u32 = 129;
const EQE_INIT_DATA: u32 = 130;
const EQE_INIT_DONE: u32 = 131;

/// Counters of the control path.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HwcCounters {
    /// SMC messages handled.
    pub smc_msgs: u64,
    /// SMC messages refused (bad header, wrong state).
    pub smc_errors: u64,
    /// SMC writes while the device owned the window (ignored).
    pub smc_busy_writes: u64,
    /// HWC requests executed.
    pub requests: u64,
    /// Responses with a non-zero status.
    pub failed: u64,
    /// Malformed HWC SQ WQEs (the HWC SQ stops).
    pub bad_wqes: u64,
    /// Responses dropped because no HWC RQ WQE was posted.
    pub no_rx_wqe: u64,
    /// Responses dropped because the RQ WQE was malformed or its buffer too small.
    pub bad_rx_wqes: u64,
    /// HWC doorbells.
    pub doorbells: u64,
    /// DMA faults on the control path.
    pub dma_faults: u64,
    /// EQEs written to the HWC EQ.
    pub eqes: u64,
    /// Interrupts raised by the HWC EQ.
    pub interrupts: u64,
}

#[derive(Clone, Copy, Default)]
pub(super) struct Ring {
    pub(super) buf: DmaAddr,
    pub(super) num: u32,
    pub(super) pi: u32,
    pub(super) armed: bool,
    pub(super) arm_tail: u32,
}

impl Ring {
    pub(super) fn pending(&self) -> bool {
        self.armed && (self.num.wrapping_add(self.pi) & ((self.num << 3) - 1)) != self.arm_tail
    }
}

#[derive(Clone, Copy, Default)]
pub(super) struct WqRing {
    pub(super) buf: DmaAddr,
    pub(super) cons: u32,
    pub(super) tail: u32,
}

/// State of the SMC, the HWC and the registration.
pub(super) struct HwcDev {
    pub(super) smc: [u32; 8],
    pub(super) smc_busy: bool,
    pub(super) up: bool,
    pub(super) msix: u16,
    pub(super) eq: Ring,
    pub(super) cq: Ring,
    pub(super) rq: WqRing,
    pub(super) sq: WqRing,
    pub(super) sq_error: bool,
    pub(super) init_pending: bool,
    pub(super) registered: bool,
    pub(super) fail: Option<(u32, u32)>,
    /// rsnic's own requests (0x2F001..=0x2F003) are implemented and advertised in
    /// QUERY_DEV_CONFIG ([`Device::set_rsnic_requests`]).
    pub(super) rsnic_reqs: bool,
    pub(super) counters: HwcCounters,
}

impl HwcDev {
    pub(super) const fn new() -> Self {
        Self {
            smc: [0; 8],
            smc_busy: false,
            up: false,
            msix: 0,
            eq: Ring {
                buf: 0,
                num: 0,
                pi: 0,
                armed: false,
                arm_tail: 0,
            },
            cq: Ring {
                buf: 0,
                num: 0,
                pi: 0,
                armed: false,
                arm_tail: 0,
            },
            rq: WqRing {
                buf: 0,
                cons: 0,
                tail: 0,
            },
            sq: WqRing {
                buf: 0,
                cons: 0,
                tail: 0,
            },
            sq_error: false,
            init_pending: false,
            registered: false,
            fail: None,
            rsnic_reqs: true,
            counters: HwcCounters {
                smc_msgs: 0,
                smc_errors: 0,
                smc_busy_writes: 0,
                requests: 0,
                failed: 0,
                bad_wqes: 0,
                no_rx_wqe: 0,
                bad_rx_wqes: 0,
                doorbells: 0,
                dma_faults: 0,
                eqes: 0,
                interrupts: 0,
            },
        }
    }

    /// Whether MANA doorbells must use [`MANA_DB_ID`] (after REGISTER_DEVICE).
    pub(super) fn registered(&self) -> bool {
        self.registered
    }
}

/// A request in host memory: its first bytes read, the rest reachable by DMA.
pub(super) struct Msg<'a, M> {
    pub(super) mem: &'a M,
    pub(super) addr: DmaAddr,
    pub(super) len: usize,
    pub(super) head: [u8; HEAD],
}

impl<M: BusMemory> Msg<'_, M> {
    /// Reads the u64 at `off` of the message (from `head`, or from host memory).
    pub(super) fn u64_at(&self, off: usize) -> Option<u64> {
        if off + 8 > self.len {
            return None;
        }
        if off + 8 <= HEAD {
            return Some(le64(&self.head, off));
        }
        let mut b = [0u8; 8];
        self.mem.dma_read(self.addr + off as u64, &mut b).ok()?;
        Some(u64::from_le_bytes(b))
    }
}

impl<P, Q, B> Device<P, Q, B>
where
    P: DerefMut<Target = [Port]>,
    Q: DerefMut<Target = [QueueSet]>,
    B: DerefMut<Target = [u8]>,
{
    /// Counters of the control path.
    pub fn hwc_counters(&self) -> &HwcCounters {
        &self.hwc.counters
    }

    /// Whether the HWC is established.
    pub fn hwc_up(&self) -> bool {
        self.hwc.up
    }

    /// Makes every later request with `code` fail with `status` (0 clears), for tests of the
    /// driver's error paths (what a debugfs knob of the device host would set).
    pub fn hwc_fail(&mut self, code: u32, status: u32) {
        self.hwc.fail = (status != 0).then_some((code, status));
    }

    /// Whether the device implements rsnic's own requests (RSNIC_SET_LOOPBACK,
    /// RSNIC_SET_PAUSE, RSNIC_QUERY_PAUSE; on after creation) and advertises them in
    /// QUERY_DEV_CONFIG's `reserved` field ([`RSNIC_CAPS`]). Off, the device is what a real
    /// MANA is to them: the field reads 0 and the requests are unknown codes
    /// ([`STATUS_INVALID_DEVICE_REQUEST`]).
    pub fn set_rsnic_requests(&mut self, on: bool) {
        self.hwc.rsnic_reqs = on;
    }

    /// Makes every later request of type `code` (a `gdma_request_type` or
    /// `mana_command_code` the device executes) fail with [`STATUS_INTERNAL_ERROR`], a
    /// header-only response, until it is called with `None` (the device host's `cmd_fail`
    /// knob). The HWC is the device's, so the failure is device-wide: it replaces (or with
    /// `None` clears) any failure set before, [`Device::hwc_fail`]'s included. A request
    /// that fails an earlier check (a malformed header, a wrong `dev_id`, a version) gets
    /// that check's status instead. [`CmdError::BadParam`] for a code the device does not
    /// execute.
    pub fn fail_request(&mut self, code: Option<u32>) -> Result<(), CmdError> {
        self.hwc.fail = match code {
            None => None,
            Some(c) if known(c) => Some((c, STATUS_INTERNAL_ERROR)),
            Some(_) => return Err(CmdError::BadParam),
        };
        Ok(())
    }

    /// The vport's RSS hash key as CONFIG_VPORT_RX last set it (the key received frames are
    /// hashed with).
    pub fn vport_hashkey(&self, port: usize) -> Option<[u8; 40]> {
        self.ports
            .get(port)
            .filter(|p| p.steer.configured)
            .map(|p| p.steer.hashkey)
    }

    /// A doorbell on the HWC's page naming an HWC queue; false if it is not one.
    pub(super) fn hwc_doorbell(&mut self, page: u32, reg: u32, v: u64) -> bool {
        let h = &mut self.hwc;
        if !h.up || page != HWC_DB_ID {
            return false;
        }
        let (lo, hi) = (v as u32, (v >> 32) as u32);
        match reg {
            super::DB_SQ if lo & 0xff_ffff == HWC_SQ_ID => {
                let ahead = hi.wrapping_sub(h.sq.cons);
                if ahead <= HWC_QSIZE && hi % 32 == 0 {
                    h.sq.tail = hi;
                }
            }
            super::DB_RQ if lo & 0xff_ffff == HWC_RQ_ID => {
                let ahead = hi.wrapping_sub(h.rq.cons);
                if ahead <= HWC_QSIZE && hi % 32 == 0 && lo >> 24 == 0 {
                    h.rq.tail = hi;
                }
            }
            super::DB_CQ if lo & 0xff_ffff == HWC_CQ_ID => {
                if hi >> 31 != 0 {
                    h.cq.armed = true;
                    h.cq.arm_tail = hi & 0x7fff_ffff;
                }
            }
            super::DB_EQ if lo & 0xffff == HWC_EQ_ID => {
                if hi >> 31 != 0 {
                    h.eq.armed = true;
                    h.eq.arm_tail = hi & 0x7fff_ffff;
                }
            }
            _ => return false,
        }
        h.counters.doorbells += 1;
        true
    }

    /// The control path's share of an engine run: a pending SMC message, the HWC's latched
    /// arm requests, then every posted HWC request.
    pub(super) fn hwc_run<M: BusMemory, I: InterruptSink>(&mut self, mem: &M, irq: &mut I) {
        if self.hwc.smc_busy {
            self.smc_exec(mem, irq);
        }
        if !self.hwc.up {
            return;
        }
        if self.hwc.cq.pending() {
            self.hwc.cq.armed = false;
            self.hwc_eqe(mem, irq, [HWC_CQ_ID, 0, 0], 3);
        }
        if self.hwc.eq.pending() {
            self.hwc.eq.armed = false;
            self.hwc.counters.interrupts += 1;
            irq.raise(self.hwc.msix);
        }
        while !self.hwc.sq_error && self.hwc.sq.cons != self.hwc.sq.tail {
            self.hwc_exec_wqe(mem, irq);
        }
    }

    pub(super) fn hwc_init_events<M: BusMemory, I: InterruptSink>(&mut self, mem: &M, irq: &mut I) {
        self.hwc.init_pending = false;
        self.hwc_eqe(
            mem,
            irq,
            [HWC_EQ_ID | (HWC_DB_ID << 16), 0, 0],
            EQE_INIT_EQ_ID_DB,
        );
        let data = [
            (1, HWC_CQ_ID),
            (2, HWC_RQ_ID),
            (3, HWC_SQ_ID),
            (4, HWC_QUEUE_DEPTH),
            (5, HWC_MAX_MSG),
            (6, HWC_MAX_MSG),
            (7, MAX_NUM_CQS),
            (8, HWC_PDID),
            (9, HWC_MKEY),
        ];
        for (t, v) in data {
            self.hwc_eqe(mem, irq, [(v & 0xff_ffff) | (t << 24), 0, 0], EQE_INIT_DATA);
        }
        self.hwc_eqe(mem, irq, [0, 0, 0], EQE_INIT_DONE);
    }

    /// Writes an EQE to the HWC EQ; raises its vector if armed.
    pub(super) fn hwc_eqe<M: BusMemory, I: InterruptSink>(
        &mut self,
        mem: &M,
        irq: &mut I,
        details: [u32; 3],
        ty: u32,
    ) {
        let e = &mut self.hwc.eq;
        let (addr, owner) = slot(e.buf, e.pi, e.num, 16);
        if mem.dma_write(addr, &eqe(details, ty, owner)).is_err() {
            self.hwc.counters.dma_faults += 1;
            return;
        }
        e.pi = e.pi.wrapping_add(1);
        self.hwc.counters.eqes += 1;
        if self.hwc.eq.armed {
            self.hwc.eq.armed = false;
            self.hwc.counters.interrupts += 1;
            irq.raise(self.hwc.msix);
        }
    }

    /// Writes a CQE to the HWC CQ (`hwc_rx_oob` in the data), then its EQE if armed.
    fn hwc_cqe<M: BusMemory, I: InterruptSink>(
        &mut self,
        mem: &M,
        irq: &mut I,
        data: &[u8; 32],
        wq: u32,
        is_sq: bool,
    ) {
        let c = &mut self.hwc.cq;
        let (addr, owner) = slot(c.buf, c.pi, c.num, 64);
        let mut b = [0u8; 64];
        b[..32].copy_from_slice(data);
        put_le32(&mut b, 60, wq | (u32::from(is_sq) << 24) | (owner << 29));
        if mem.dma_write(addr, &b).is_err() {
            self.hwc.counters.dma_faults += 1;
            return;
        }
        c.pi = c.pi.wrapping_add(1);
        if self.hwc.cq.armed {
            self.hwc.cq.armed = false;
            self.hwc_eqe(mem, irq, [HWC_CQ_ID, 0, 0], 3);
        }
    }

    /// Executes the HWC SQ WQE at the consumer: header (8), `hwc_tx_oob` (24), one SGE.
    fn hwc_exec_wqe<M: BusMemory, I: InterruptSink>(&mut self, mem: &M, irq: &mut I) {
        let sq = self.hwc.sq;
        let off = sq.cons & (HWC_QSIZE - 1);
        let mut w = [0u8; 48];
        let ok_read = sq.tail.wrapping_sub(sq.cons) >= 64
            && mem.dma_read(sq.buf + u64::from(off), &mut w).is_ok();
        let dw1 = le32(&w, 4);
        let num_sge = dw1 & 0xff;
        let oob_div4 = (dw1 >> 8) & 7;
        let in_sgl = (dw1 >> 11) & 1;
        let vscq = le32(&w, 24) & 0xff_ffff;
        let vsq = le32(&w, 28) & 0xff_ffff;
        let addr = le64(&w, 32);
        let mkey = le32(&w, 40);
        let size = le32(&w, 44) as usize;
        let valid = ok_read
            && num_sge == 1
            && oob_div4 == 6
            && in_sgl == 0
            && vscq == HWC_CQ_ID
            && vsq == HWC_SQ_ID
            && mkey == HWC_MKEY
            && size <= HWC_MAX_MSG as usize;
        let mut oob = [0u8; 32];
        put_le32(&mut oob, 12, off);
        if !valid {
            // The device cannot trust the WQE's size: the SQ stops, one error CQE says why.
            self.hwc.counters.bad_wqes += 1;
            self.hwc.sq_error = true;
            put_le32(&mut oob, 0, 1 << 8);
            self.hwc_cqe(mem, irq, &oob, HWC_SQ_ID, true);
            return;
        }
        self.hwc.sq.cons = sq.cons.wrapping_add(64);
        let mut msg = Msg {
            mem,
            addr,
            len: size,
            head: [0; HEAD],
        };
        let n = size.min(HEAD);
        let readable = mem.dma_read(addr, &mut msg.head[..n]).is_ok();
        let mut resp = [0u8; RESP_MAX];
        let len = if readable {
            self.execute(&msg, irq, &mut resp)
        } else {
            self.hwc.counters.dma_faults += 1;
            header_only(&msg.head, size, STATUS_INVALID_PARAMETER, &mut resp)
        };
        self.hwc.counters.requests += 1;
        if le32(&resp, 24) != 0 {
            self.hwc.counters.failed += 1;
        }
        self.hwc_cqe(mem, irq, &oob, HWC_SQ_ID, true);
        self.hwc_respond(mem, irq, &resp[..len]);
    }

    /// Writes a response into the next posted HWC RQ WQE's buffer and completes it.
    fn hwc_respond<M: BusMemory, I: InterruptSink>(&mut self, mem: &M, irq: &mut I, r: &[u8]) {
        let rq = self.hwc.rq;
        if rq.cons == rq.tail {
            self.hwc.counters.no_rx_wqe += 1;
            return;
        }
        let off = rq.cons & (HWC_QSIZE - 1);
        let mut w = [0u8; 32];
        if mem.dma_read(rq.buf + u64::from(off), &mut w).is_err() {
            self.hwc.counters.dma_faults += 1;
            return;
        }
        let dw1 = le32(&w, 4);
        let oob = ((dw1 >> 8) & 7) as usize * 4;
        let sge = 8 + oob;
        self.hwc.rq.cons = rq.cons.wrapping_add(32);
        if dw1 & 0xff != 1 || (oob != 0 && oob != 8) {
            self.hwc.counters.bad_rx_wqes += 1;
            return;
        }
        let addr = le64(&w, sge);
        let mkey = le32(&w, sge + 8);
        let size = le32(&w, sge + 12) as usize;
        if mkey != HWC_MKEY || size < r.len() {
            self.hwc.counters.bad_rx_wqes += 1;
            return;
        }
        if mem.dma_write(addr, r).is_err() {
            self.hwc.counters.dma_faults += 1;
            return;
        }
        let mut d = [0u8; 32];
        // type 0, eom (bit 6) and som (bit 7): one chunk; wqe_offset; tx_oob_data_size.
        put_le32(&mut d, 0, (1 << 6) | (1 << 7));
        put_le32(&mut d, 12, off);
        put_le32(&mut d, 24, r.len() as u32);
        self.hwc_cqe(mem, irq, &d, HWC_RQ_ID, false);
    }

    /// Validates and executes one request; writes the response into `out`, returns its
    /// length.
    pub(super) fn execute<M: BusMemory, I: InterruptSink>(
        &mut self,
        m: &Msg<'_, M>,
        irq: &mut I,
        out: &mut [u8; RESP_MAX],
    ) -> usize {
        let h = &m.head;
        if m.len < 40 {
            return header_only(h, m.len, STATUS_INVALID_PARAMETER, out);
        }
        let code = le32(h, 4);
        let req_ver = le16(h, 8);
        let resp_ver = le16(h, 24);
        let resp_cap = le32(h, 28) as usize;
        if le32(h, 0) != 0
            || le32(h, 16) != 0
            || le32(h, 12) as usize != m.len
            || le32(h, 20) != code
        {
            return header_only(h, m.len, STATUS_INVALID_PARAMETER, out);
        }
        let dev = le32(h, 32);
        let want_ver = if code == 0x20007 { 2 } else { 1 };
        let rsnic = (0x2F001..=0x2F003).contains(&code);
        let r = if !known(code) || (rsnic && !self.hwc.rsnic_reqs) {
            Err(STATUS_INVALID_DEVICE_REQUEST)
        } else if req_ver != want_ver {
            Err(STATUS_REVISION_MISMATCH)
        } else {
            self.check_dev(code, dev).and(match self.hwc.fail {
                Some((c, s)) if c == code => Err(s),
                _ => Ok(()),
            })
        };
        // The body goes straight after the header's place (no second buffer on the stack).
        out.fill(0);
        let r = r.and_then(|()| self.dispatch(code, m, resp_ver, irq, &mut out[32..]));
        match r {
            Err(s) => header_only(h, m.len, s, out),
            Ok(blen) => {
                let total = 32 + blen;
                if total > resp_cap {
                    return header_only(h, m.len, STATUS_BUFFER_TOO_SMALL, out);
                }
                let ver = if code == 0x20001 || code == 0x20002 {
                    resp_ver.clamp(1, 2)
                } else {
                    1
                };
                resp_header(h, ver, total, 0, out);
                total
            }
        }
    }
}

/// Writes the response header (`struct gdma_resp_hdr`): the request's code, `hwc_msg_id`,
/// `dev_id` and `activity_id` echoed.
fn resp_header(req: &[u8], ver: u16, len: usize, status: u32, out: &mut [u8]) {
    out[..32].fill(0);
    put_le32(out, 4, le32(req, 4));
    put_le16(out, 8, ver);
    put_le16(out, 10, le16(req, 10));
    put_le32(out, 12, len as u32);
    put_le32(out, 16, le32(req, 32));
    put_le32(out, 20, le32(req, 36));
    put_le32(out, 24, status);
}

/// A failure response: only the header (what the device can echo of a request of `len`
/// bytes).
fn header_only(req: &[u8], len: usize, status: u32, out: &mut [u8]) -> usize {
    let mut r = [0u8; 40];
    let n = len.min(40).min(req.len());
    r[..n].copy_from_slice(&req[..n]);
    resp_header(&r, 1, 32, status, out);
    32
}
