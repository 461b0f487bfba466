// SPDX-License-Identifier: GPL-2.0

//! The device side of the MANA control path: the shared memory channel (SMC), the hardware
//! channel (HWC) and the GDMA/MANA requests it carries, executed against the model. See the
//! parent module's "Control path through the HWC" for the rules and the statuses. The
//! message layouts are read here from the 6.12 headers independently of the driver's
//! `dp::mana::gdma_req` (no code is shared).

use super::engine::{eqe_to, rx_fence_cqe};
use super::MAX_FRAME;
use super::{CmdError, Device, Kind, Port, QueueSet, MAX_QUEUES, MAX_RSS};
use crate::dp::bytes::{le16, le32, le64, put_le16, put_le32, put_le64};
use crate::dp::hw::{BusMemory, DmaAddr, InterruptSink};
use core::ops::DerefMut;

/// Success.
pub const STATUS_SUCCESS: u32 = 0;
/// An unknown DMA region, vport or WQ object handle, or queue id.
pub const STATUS_INVALID_HANDLE: u32 = 0xC000_0008;
/// A malformed request: a header field, a length or a value out of range.
pub const STATUS_INVALID_PARAMETER: u32 = 0xC000_000D;
/// A `dev_id` that names no device of this function (or the wrong one for the request).
pub const STATUS_NO_SUCH_DEVICE: u32 = 0xC000_000E;
/// An unknown request code.
pub const STATUS_INVALID_DEVICE_REQUEST: u32 = 0xC000_0010;
/// The expected response size (`req.hdr.resp.msg_size`) is smaller than the response.
pub const STATUS_BUFFER_TOO_SMALL: u32 = 0xC000_0023;
/// An injected failure ([`Device::fail_request`]): NTSTATUS's internal error, as ConnectX's
/// INT_ERR for its injected command failures.
pub const STATUS_INTERNAL_ERROR: u32 = 0xC000_00E5;
/// An object created twice (REGISTER_DEVICE twice).
pub const STATUS_OBJECT_NAME_COLLISION: u32 = 0xC000_0035;
/// A message or protocol version the model does not speak.
pub const STATUS_REVISION_MISMATCH: u32 = 0xC000_0059;
/// A table of the model is full.
pub const STATUS_INSUFFICIENT_RESOURCES: u32 = 0xC000_009A;
/// A valid request for something the model does not implement (queue types other than EQ
/// in CREATE_QUEUE, non-contiguous DMA regions, CQ moderation, CQE coalescing).
pub const STATUS_NOT_SUPPORTED: u32 = 0xC000_00BB;
/// The request needs a state the device is not in (MANA requests before REGISTER_DEVICE,
/// an SQ before CONFIG_VPORT_TX).
pub const STATUS_INVALID_DEVICE_STATE: u32 = 0xC000_0184;
/// The object is in use (a region owned by a queue, an EQ with CQs, an RQ in an enabled RSS
/// table, DEREGISTER_DEVICE with objects alive).
pub const STATUS_DEVICE_BUSY: u32 = 0x8000_0011;

/// What QUERY_DEV_CONFIG's `reserved` field (u16 at response offset 66) holds when the
/// device implements rsnic's own requests: the signature 0x52 ('R') in the high byte, bit 0
/// RSNIC_SET_LOOPBACK, bit 1 RSNIC_SET_PAUSE and RSNIC_QUERY_PAUSE. A real MANA leaves the
/// field 0, and upstream mana does not read it.
pub const RSNIC_CAPS: u16 = 0x5203;

/// BAR0 offset of the SMC window (register 0x18 reads it).
pub const SMC_BASE: u32 = 0x100;
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
/// `max_num_cqs` (HWC_INIT_DATA_MAX_NUM_CQS): every CQ id is below it.
pub const MAX_NUM_CQS: u32 = super::CQ_ID_BASE + (super::MAX_PORTS * MAX_QUEUES) as u32;
/// MSI-X vectors (QUERY_MAX_RESOURCES `max_msix`): 64 per port, as the device host numbers
/// them (port p's from p × 64; the HWC's index 0 is port 0's first).
pub const MAX_MSIX: u32 = 64 * super::MAX_PORTS as u32;
/// DMA regions per queue-table row (the region table lives in the rows).
pub const REGIONS_PER_ROW: usize = 4;
/// First vport handle (vport p is `VPORT_HANDLE_BASE + p`).
pub const VPORT_HANDLE_BASE: u64 = 0x7670_0000_0000;

const PAGE: u64 = 4096;
const HWC_QSIZE: u32 = 4096;
/// Bytes of a request the device reads at once; page lists and indirection tables are read
/// from host memory entry by entry.
const HEAD: usize = 128;
/// Largest response the model writes.
const RESP_MAX: usize = 512;
const WQ_OBJ_TAG: u64 = 0x5751 << 48;
const REGION_TAG: u64 = 0x52 << 56;

const EQE_TEST_EVENT: u32 = 64;
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
struct Ring {
    buf: DmaAddr,
    num: u32,
    pi: u32,
    armed: bool,
    arm_tail: u32,
}

impl Ring {
    fn pending(&self) -> bool {
        self.armed && (self.num.wrapping_add(self.pi) & ((self.num << 3) - 1)) != self.arm_tail
    }
}

#[derive(Clone, Copy, Default)]
struct WqRing {
    buf: DmaAddr,
    cons: u32,
    tail: u32,
}

/// A DMA region (GDMA_CREATE_DMA_REGION).
#[derive(Clone, Copy)]
pub struct Region {
    used: bool,
    gen: u16,
    base: DmaAddr,
    len: u32,
    pages: u32,
    have: u32,
    /// The queue that consumed it: (kind, id).
    owner: Option<(Kind, u32)>,
}

impl Region {
    /// An unused entry.
    pub const EMPTY: Self = Self {
        used: false,
        gen: 0,
        base: 0,
        len: 0,
        pages: 0,
        have: 0,
        owner: None,
    };
}

/// RX steering of a vport (MANA_CONFIG_VPORT_RX).
#[derive(Clone, Copy)]
pub struct Steer {
    rx_enable: bool,
    rss_enable: bool,
    indir: [u8; MAX_RSS],
    indir_len: usize,
    default_rq: Option<u8>,
    hashkey: [u8; 40],
    configured: bool,
}

impl Steer {
    /// Whether the vport's RX is on (MANA_CONFIG_VPORT_RX's `rx_enable`).
    pub(super) fn rx_enabled(&self) -> bool {
        self.rx_enable
    }

    /// Nothing configured.
    pub const EMPTY: Self = Self {
        rx_enable: false,
        rss_enable: false,
        indir: [0; MAX_RSS],
        indir_len: 0,
        default_rq: None,
        hashkey: crate::sim::pkt::RSS_KEY,
        configured: false,
    };
}

/// State of the SMC, the HWC and the registration.
pub(super) struct HwcDev {
    smc: [u32; 8],
    smc_busy: bool,
    up: bool,
    msix: u16,
    eq: Ring,
    cq: Ring,
    rq: WqRing,
    sq: WqRing,
    sq_error: bool,
    init_pending: bool,
    registered: bool,
    fail: Option<(u32, u32)>,
    /// rsnic's own requests (0x2F001..=0x2F003) are implemented and advertised in
    /// QUERY_DEV_CONFIG ([`Device::set_rsnic_requests`]).
    rsnic_reqs: bool,
    counters: HwcCounters,
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
struct Msg<'a, M> {
    mem: &'a M,
    addr: DmaAddr,
    len: usize,
    head: [u8; HEAD],
}

impl<M: BusMemory> Msg<'_, M> {
    /// Reads the u64 at `off` of the message (from `head`, or from host memory).
    fn u64_at(&self, off: usize) -> Option<u64> {
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

/// Outcome of one request: the status and the response body length (after the header).
type Exec = Result<usize, u32>;

fn st(e: CmdError) -> u32 {
    match e {
        CmdError::BadPort | CmdError::BadParam => STATUS_INVALID_PARAMETER,
        CmdError::NoResources => STATUS_INSUFFICIENT_RESOURCES,
        CmdError::NoSuchQueue => STATUS_INVALID_HANDLE,
        CmdError::Busy => STATUS_DEVICE_BUSY,
    }
}

fn expect_len(len: usize, want: usize) -> Result<(), u32> {
    if len == want {
        Ok(())
    } else {
        Err(STATUS_INVALID_PARAMETER)
    }
}

/// The MAC address of vport `p` (locally administered).
pub const fn vport_mac(p: usize) -> [u8; 6] {
    [0x02, 0x6d, 0x61, 0x6e, (p >> 8) as u8, p as u8]
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

    /// A 32-bit write into the SMC window; the last dword hands it to the device.
    pub(super) fn smc_write(&mut self, off: u32, v: u32) -> bool {
        let Some(rel) = off.checked_sub(SMC_BASE) else {
            return false;
        };
        let i = (rel / 4) as usize;
        if rel % 4 != 0 || i >= 8 {
            return false;
        }
        if self.hwc.smc_busy {
            self.hwc.counters.smc_busy_writes += 1;
            return true;
        }
        self.hwc.smc[i] = v;
        if i == 7 {
            self.hwc.smc_busy = true;
        }
        true
    }

    /// A 32-bit read of the SMC window: the last dword carries the busy bit.
    pub(super) fn smc_read(&self, off: u32) -> Option<u32> {
        let rel = off.checked_sub(SMC_BASE)?;
        let i = (rel / 4) as usize;
        if rel % 4 != 0 || i >= 8 {
            return None;
        }
        let v = self.hwc.smc[i];
        Some(if i == 7 && self.hwc.smc_busy {
            v | 1 << 31
        } else {
            v
        })
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

    fn smc_exec<M: BusMemory, I: InterruptSink>(&mut self, mem: &M, irq: &mut I) {
        let w = self.hwc.smc;
        let hdr = w[7];
        let ty = hdr & 7;
        let ver = (hdr >> 3) & 7;
        let dir = (hdr >> 7) & 1;
        let reset_vf = (hdr >> 24) & 1;
        self.hwc.counters.smc_msgs += 1;
        let status: u32 = if ver != 0 || dir != 0 || reset_vf != 0 {
            1
        } else {
            match ty {
                1 if !self.hwc.up => {
                    let mut b = [0u8; 32];
                    for (i, d) in w.iter().enumerate() {
                        b[4 * i..4 * i + 4].copy_from_slice(&d.to_le_bytes());
                    }
                    let high = le16(&b, 24);
                    let msix = le16(&b, 26);
                    let mut a = [0u64; 4];
                    for (i, x) in a.iter_mut().enumerate() {
                        let mut l = [0u8; 8];
                        l[..6].copy_from_slice(&b[6 * i..6 * i + 6]);
                        let pfn =
                            u64::from_le_bytes(l) | (u64::from((high >> (4 * i)) & 0xf) << 48);
                        *x = pfn << 12;
                    }
                    if u32::from(msix) >= MAX_MSIX {
                        2
                    } else {
                        self.hwc_establish(a, msix);
                        0
                    }
                }
                2 if self.hwc.up => {
                    self.hwc.up = false;
                    0
                }
                _ => 3,
            }
        };
        if status != 0 {
            self.hwc.counters.smc_errors += 1;
        }
        // Response: same type and version, direction 1, the status, window back to the VF.
        self.hwc.smc[7] = ty | (ver << 3) | (1 << 7) | (status << 8);
        self.hwc.smc_busy = false;
        if status == 0 && ty == 1 {
            self.hwc.init_pending = true;
            self.hwc_init_events(mem, irq);
        }
    }

    fn hwc_establish(&mut self, a: [u64; 4], msix: u16) {
        // A driver taking the device (the HWC is its first step) finds every counter at 0,
        // as after the reset a VF gets when its driver is bound. The in-kernel host makes a
        // new device per load anyway; a device in its own process (the PCI transport)
        // outlives the driver.
        for p in self.ports.iter_mut() {
            p.counters = super::PortCounters::default();
        }
        let h = &mut self.hwc;
        h.up = true;
        h.msix = msix;
        // The HWC CQ and EQ start armed: the driver learns their ids from the init events.
        h.eq = Ring {
            buf: a[0],
            num: HWC_QSIZE / 16,
            pi: 0,
            armed: true,
            // Armed at the consumer's start (`head = num`): nothing pending yet.
            arm_tail: HWC_QSIZE / 16,
        };
        h.cq = Ring {
            buf: a[1],
            num: HWC_QSIZE / 64,
            pi: 0,
            armed: true,
            arm_tail: HWC_QSIZE / 64,
        };
        h.rq = WqRing {
            buf: a[2],
            cons: 0,
            tail: 0,
        };
        h.sq = WqRing {
            buf: a[3],
            cons: 0,
            tail: 0,
        };
        h.sq_error = false;
    }

    fn hwc_init_events<M: BusMemory, I: InterruptSink>(&mut self, mem: &M, irq: &mut I) {
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
    fn hwc_eqe<M: BusMemory, I: InterruptSink>(
        &mut self,
        mem: &M,
        irq: &mut I,
        details: [u32; 3],
        ty: u32,
    ) {
        let e = &mut self.hwc.eq;
        let idx = e.pi & (e.num - 1);
        let owner = ((e.pi / e.num).wrapping_add(1)) & 7;
        let mut b = [0u8; 16];
        put_le32(&mut b, 0, details[0]);
        put_le32(&mut b, 4, details[1]);
        put_le32(&mut b, 8, details[2]);
        put_le32(&mut b, 12, (ty & 0xff) | (owner << 29));
        if mem.dma_write(e.buf + u64::from(idx) * 16, &b).is_err() {
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
        let idx = c.pi & (c.num - 1);
        let owner = ((c.pi / c.num).wrapping_add(1)) & 7;
        let mut b = [0u8; 64];
        b[..32].copy_from_slice(data);
        put_le32(&mut b, 60, wq | (u32::from(is_sq) << 24) | (owner << 29));
        if mem.dma_write(c.buf + u64::from(idx) * 64, &b).is_err() {
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
    fn execute<M: BusMemory, I: InterruptSink>(
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

    fn check_dev(&self, code: u32, dev: u32) -> Result<(), u32> {
        match code {
            // Function-level requests: the zero id (upstream leaves it zero) or the HWC's.
            1..=3 | 25..=27 => {
                if dev == 0
                    || dev == HWC_DEV_ID
                    || (dev == MANA_DEV_ID && (25..=27).contains(&code))
                {
                    Ok(())
                } else {
                    Err(STATUS_NO_SUCH_DEVICE)
                }
            }
            10 => {
                if dev == HWC_DEV_ID || (dev == MANA_DEV_ID && self.hwc.registered) {
                    Ok(())
                } else if dev == MANA_DEV_ID {
                    Err(STATUS_INVALID_DEVICE_STATE)
                } else {
                    Err(STATUS_NO_SUCH_DEVICE)
                }
            }
            4 => {
                if dev != MANA_DEV_ID {
                    Err(STATUS_NO_SUCH_DEVICE)
                } else {
                    Ok(())
                }
            }
            _ => {
                if dev != MANA_DEV_ID {
                    Err(STATUS_NO_SUCH_DEVICE)
                } else if !self.hwc.registered {
                    Err(STATUS_INVALID_DEVICE_STATE)
                } else {
                    Ok(())
                }
            }
        }
    }

    fn dispatch<M: BusMemory, I: InterruptSink>(
        &mut self,
        code: u32,
        m: &Msg<'_, M>,
        resp_ver: u16,
        irq: &mut I,
        b: &mut [u8],
    ) -> Exec {
        let h = &m.head;
        let len = m.len;
        match code {
            // GDMA_VERIFY_VF_DRIVER_VERSION: protocol_ver_min 40, max 48.
            1 => {
                expect_len(len, 640)?;
                if le64(h, 40) > 1 || le64(h, 48) < 1 {
                    return Err(STATUS_REVISION_MISMATCH);
                }
                put_le64(b, 0, 1);
                Ok(40)
            }
            // GDMA_QUERY_MAX_RESOURCES: status 32, max_sq 36 .. max_msix 68.
            2 => {
                expect_len(len, 40)?;
                let q = (self.ports.len() * MAX_QUEUES) as u32;
                for (i, v) in [0, q, q, q, q, super::MAX_PORTS as u32, 0, 0, 0, MAX_MSIX]
                    .into_iter()
                    .enumerate()
                {
                    put_le32(b, 4 * i, v);
                }
                Ok(40)
            }
            // GDMA_LIST_DEVICES: num_of_devs 32, devs 40 (with a hole at entry 1).
            3 => {
                expect_len(len, 40)?;
                put_le32(b, 0, 2);
                put_le32(b, 8, HWC_DEV_ID);
                put_le32(b, 16, MANA_DEV_ID);
                Ok(264)
            }
            // GDMA_REGISTER_DEVICE: pdid 32, gpa_mkey 36, db_id 40.
            4 => {
                expect_len(len, 40)?;
                if self.hwc.registered {
                    return Err(STATUS_OBJECT_NAME_COLLISION);
                }
                self.hwc.registered = true;
                put_le32(b, 0, MANA_PDID);
                put_le32(b, 4, MANA_MKEY);
                put_le32(b, 8, MANA_DB_ID);
                Ok(12)
            }
            // GDMA_DEREGISTER_DEVICE.
            5 => {
                expect_len(len, 40)?;
                if self.regions_alive() {
                    return Err(STATUS_DEVICE_BUSY);
                }
                self.hwc.registered = false;
                for p in self.ports.iter_mut() {
                    p.vport_tx = false;
                }
                Ok(0)
            }
            // GDMA_GENERATE_TEST_EQE: queue_index 40.
            10 => {
                expect_len(len, 44)?;
                let q = le32(h, 40);
                if le32(h, 32) == HWC_DEV_ID {
                    if q != HWC_EQ_ID {
                        return Err(STATUS_INVALID_HANDLE);
                    }
                    self.hwc_eqe(m.mem, irq, [0, 0, 0], EQE_TEST_EVENT);
                } else {
                    let (p, s) = self.loc(q, Kind::Eq).map_err(st)?;
                    let g = p * MAX_QUEUES + s;
                    eqe_to(
                        &mut self.ports,
                        &mut self.queues,
                        p,
                        g,
                        [0, 0, 0],
                        EQE_TEST_EVENT,
                        m.mem,
                        irq,
                    );
                }
                Ok(0)
            }
            12 => self.create_queue(h, len, b),
            // GDMA_DISABLE_QUEUE: type 40, queue_index 44.
            13 => {
                expect_len(len, 52)?;
                if le32(h, 40) != 4 {
                    return Err(STATUS_NOT_SUPPORTED);
                }
                let id = le32(h, 44);
                if self.owned_region(Kind::Eq, id).is_none() {
                    return Err(STATUS_INVALID_HANDLE);
                }
                self.destroy_eq(id).map_err(st)?;
                self.free_owned(Kind::Eq, id);
                Ok(0)
            }
            25 => self.create_region(m, b),
            26 => self.add_pages(m),
            // GDMA_DESTROY_DMA_REGION: dma_region_handle 40.
            27 => {
                expect_len(len, 48)?;
                let r = self.region_of(le64(h, 40)).ok_or(STATUS_INVALID_HANDLE)?;
                if self.region(r).is_some_and(|x| x.owner.is_some()) {
                    return Err(STATUS_DEVICE_BUSY);
                }
                if let Some(x) = self.region_mut(r) {
                    x.used = false;
                }
                Ok(0)
            }
            // MANA_QUERY_DEV_CONFIG: proto_major_ver 72.
            0x20001 => {
                expect_len(len, 88)?;
                if le32(h, 72) != 0 {
                    return Err(STATUS_REVISION_MISMATCH);
                }
                put_le16(b, 32, self.ports.len() as u16);
                // `reserved` (66): rsnic's capability word, when it has its requests.
                if self.hwc.rsnic_reqs {
                    put_le16(b, 34, RSNIC_CAPS);
                }
                put_le32(b, 36, (self.ports.len() * MAX_QUEUES) as u32);
                if resp_ver >= 2 {
                    put_le16(b, 40, MAX_FRAME as u16);
                    Ok(48)
                } else {
                    Ok(40)
                }
            }
            // MANA_QUERY_GF_STAT: req_stats 40.
            0x20002 => {
                expect_len(len, 48)?;
                self.gf_stats(le64(h, 40), b);
                Ok(224)
            }
            // MANA_CONFIG_VPORT_TX: vport 40, pdid 48, doorbell_pageid 52.
            0x20003 => {
                expect_len(len, 56)?;
                let p = self.vport(le64(h, 40))?;
                if le32(h, 48) != MANA_PDID || le32(h, 52) != MANA_DB_ID {
                    return Err(STATUS_INVALID_PARAMETER);
                }
                if let Some(pt) = self.ports.get_mut(p) {
                    pt.vport_tx = true;
                }
                put_le16(b, 0, p as u16);
                if let Some(x) = b.get_mut(2) {
                    *x = 1;
                }
                Ok(4)
            }
            0x20004 => self.create_wq_obj(h, len, b),
            // MANA_DESTROY_WQ_OBJ: wq_type 40, handle 48.
            0x20005 => {
                expect_len(len, 56)?;
                let (k, id) = self.wq_obj(le64(h, 48))?;
                let ty = le32(h, 40);
                if (k == Kind::Sq && ty != 1) || (k == Kind::Rq && ty != 2) {
                    return Err(STATUS_INVALID_PARAMETER);
                }
                self.destroy_wq_obj(k, id)?;
                Ok(0)
            }
            // MANA_FENCE_RQ: handle 40.
            0x20006 => {
                expect_len(len, 48)?;
                let (k, id) = self.wq_obj(le64(h, 40))?;
                if k != Kind::Rq {
                    return Err(STATUS_INVALID_HANDLE);
                }
                let (p, s) = self.loc(id, Kind::Rq).map_err(st)?;
                let c = self.row(p, s).map_or(0, |r| usize::from(r.rq.cq));
                rx_fence_cqe(&mut self.ports, &mut self.queues, p, c, id, m.mem, irq);
                Ok(0)
            }
            0x20007 => self.config_vport_rx(m, b),
            // RSNIC_SET_LOOPBACK (rsnic's, not MANA's): vport 40, enable 48 (0 or 1).
            0x2F001 => {
                expect_len(len, 56)?;
                let p = self.vport(le64(h, 40))?;
                let on = match le32(h, 48) {
                    0 => false,
                    1 => true,
                    _ => return Err(STATUS_INVALID_PARAMETER),
                };
                self.set_loopback(p, on).map_err(st)?;
                Ok(0)
            }
            // RSNIC_SET_PAUSE (rsnic's, not MANA's): vport 40, rx 48, tx 52 (each 0 or 1).
            0x2F002 => {
                expect_len(len, 56)?;
                let p = self.vport(le64(h, 40))?;
                let flag = |v| match v {
                    0 => Ok(false),
                    1 => Ok(true),
                    _ => Err(STATUS_INVALID_PARAMETER),
                };
                let (rx, tx) = (flag(le32(h, 48))?, flag(le32(h, 52))?);
                self.set_pause_rx_tx(p, rx, tx).map_err(st)?;
                Ok(0)
            }
            // RSNIC_QUERY_PAUSE (rsnic's): vport 40; answers rx 32, tx 36 (u32 0 or 1),
            // tx_pause_frames 40, rx_pause_frames 48 (u64).
            0x2F003 => {
                expect_len(len, 48)?;
                let p = self.vport(le64(h, 40))?;
                let pt = self.ports.get(p).ok_or(STATUS_INVALID_HANDLE)?;
                put_le32(b, 0, u32::from(pt.pause.rx));
                put_le32(b, 4, u32::from(pt.pause.tx));
                put_le64(b, 8, pt.counters.tx_pause_frames);
                put_le64(b, 16, pt.counters.rx_pause_frames);
                Ok(24)
            }
            // MANA_QUERY_VPORT_CONFIG: vport_index 40.
            0x20008 => {
                expect_len(len, 44)?;
                let p = le32(h, 40) as usize;
                if p >= self.ports.len() {
                    return Err(STATUS_INVALID_PARAMETER);
                }
                put_le32(b, 0, MAX_QUEUES as u32);
                put_le32(b, 4, MAX_QUEUES as u32);
                put_le32(b, 8, MAX_RSS as u32);
                let mac = self
                    .ports
                    .get(p)
                    .and_then(|x| x.mac)
                    .unwrap_or(vport_mac(p));
                if let Some(d) = b.get_mut(16..22) {
                    d.copy_from_slice(&mac);
                }
                put_le64(b, 24, VPORT_HANDLE_BASE + p as u64);
                Ok(32)
            }
            _ => Err(STATUS_INVALID_DEVICE_REQUEST),
        }
    }

    fn vport(&self, handle: u64) -> Result<usize, u32> {
        let p = handle.wrapping_sub(VPORT_HANDLE_BASE);
        if handle < VPORT_HANDLE_BASE || p >= self.ports.len() as u64 {
            return Err(STATUS_INVALID_HANDLE);
        }
        Ok(p as usize)
    }

    fn wq_obj(&self, handle: u64) -> Result<(Kind, u32), u32> {
        if handle & (0xffff << 48) != WQ_OBJ_TAG {
            return Err(STATUS_INVALID_HANDLE);
        }
        let id = handle as u32;
        let k = match (handle >> 32) & 0xffff {
            1 => Kind::Sq,
            2 => Kind::Rq,
            _ => return Err(STATUS_INVALID_HANDLE),
        };
        self.loc(id, k).map_err(|_| STATUS_INVALID_HANDLE)?;
        if self.owned_region(k, id).is_none() {
            return Err(STATUS_INVALID_HANDLE);
        }
        Ok((k, id))
    }

    // GDMA_CREATE_QUEUE (EQ): type 40, pdid 48, doolbell_id 52, gdma_region 56,
    // queue_size 68, log2_throttle_limit 72, eq_pci_msix_index 76, cq_mod_ctx_id 80,
    // cq_parent_eq_id 84.
    fn create_queue(&mut self, h: &[u8], len: usize, b: &mut [u8]) -> Exec {
        expect_len(len, 96)?;
        if le32(h, 40) != 4 {
            return Err(STATUS_NOT_SUPPORTED);
        }
        if le32(h, 48) != MANA_PDID || le32(h, 52) != MANA_DB_ID {
            return Err(STATUS_INVALID_PARAMETER);
        }
        let r = self.ready_region(le64(h, 56))?;
        let (base, rlen) = self.region(r).map_or((0, 0), |x| (x.base, x.len));
        let size = le32(h, 68);
        let num = size / 16;
        if size != rlen || !size.is_power_of_two() || size < 4096 || num > 1 << 16 {
            return Err(STATUS_INVALID_PARAMETER);
        }
        if le32(h, 72) > num.trailing_zeros() || le32(h, 76) >= MAX_MSIX {
            return Err(STATUS_INVALID_PARAMETER);
        }
        let vector = le32(h, 76) as u16;
        let mut id = Err(STATUS_INSUFFICIENT_RESOURCES);
        for p in 0..self.ports.len() {
            match self.create_eq(p, base, num, vector) {
                Ok(q) => {
                    id = Ok(q);
                    if let Some(pt) = self.ports.get_mut(p) {
                        pt.counters.queues_created += 1;
                    }
                    break;
                }
                Err(CmdError::NoResources) => {}
                Err(e) => return Err(st(e)),
            }
        }
        let id = id?;
        // Upstream never rings a new EQ before its test event: it starts armed.
        if let Ok((p, s)) = self.loc(id, Kind::Eq) {
            if let Some(row) = self.row_mut(p, s) {
                row.eq.armed = true;
                row.eq.arm_tail = num;
            }
        }
        if let Some(x) = self.region_mut(r) {
            x.owner = Some((Kind::Eq, id));
        }
        put_le32(b, 0, id);
        Ok(4)
    }

    // MANA_CREATE_WQ_OBJ: vport 40, wq_type 48, wq_gdma_region 56, cq_gdma_region 64,
    // wq_size 72, cq_size 76, cq_moderation_ctx_id 80, cq_parent_qid 84.
    fn create_wq_obj(&mut self, h: &[u8], len: usize, b: &mut [u8]) -> Exec {
        expect_len(len, 88)?;
        let p = self.vport(le64(h, 40))?;
        let ty = le32(h, 48);
        let k = match ty {
            1 => Kind::Sq,
            2 => Kind::Rq,
            _ => return Err(STATUS_INVALID_PARAMETER),
        };
        if k == Kind::Sq && !self.ports.get(p).is_some_and(|x| x.vport_tx) {
            return Err(STATUS_INVALID_DEVICE_STATE);
        }
        let (wr, cr) = (
            self.ready_region(le64(h, 56))?,
            self.ready_region(le64(h, 64))?,
        );
        if wr == cr {
            return Err(STATUS_INVALID_PARAMETER);
        }
        let (wbase, wlen) = self.region(wr).map_or((0, 0), |x| (x.base, x.len));
        let (cbase, clen) = self.region(cr).map_or((0, 0), |x| (x.base, x.len));
        let (wsize, csize) = (le32(h, 72), le32(h, 76));
        if wsize != wlen || csize != clen || csize % 64 != 0 {
            return Err(STATUS_INVALID_PARAMETER);
        }
        if le32(h, 80) != 0 {
            return Err(STATUS_NOT_SUPPORTED);
        }
        let eq = le32(h, 84);
        self.loc(eq, Kind::Eq).map_err(|_| STATUS_INVALID_HANDLE)?;
        let cq = self
            .create_cq_on(p, cbase, csize / 64, Some(eq))
            .map_err(st)?;
        let wq = match k {
            Kind::Sq => self.create_sq(p, wbase, wsize, cq),
            _ => self.create_rq(p, wbase, wsize, cq),
        };
        let wq = match wq {
            Ok(id) => id,
            Err(e) => {
                let _ = self.destroy_cq(cq);
                return Err(st(e));
            }
        };
        if let Some(x) = self.region_mut(wr) {
            x.owner = Some((k, wq));
        }
        if let Some(x) = self.region_mut(cr) {
            x.owner = Some((Kind::Cq, cq));
        }
        if let Some(pt) = self.ports.get_mut(p) {
            pt.counters.queues_created += 1;
        }
        put_le32(b, 0, wq);
        put_le32(b, 4, cq);
        put_le64(b, 8, WQ_OBJ_TAG | (u64::from(ty) << 32) | u64::from(wq));
        Ok(16)
    }

    fn destroy_wq_obj(&mut self, k: Kind, id: u32) -> Result<(), u32> {
        let (p, s) = self.loc(id, k).map_err(st)?;
        let row = self.row(p, s).copied().ok_or(STATUS_INVALID_HANDLE)?;
        let cq_slot = usize::from(if k == Kind::Sq { row.sq.cq } else { row.rq.cq });
        if k == Kind::Rq {
            let pt = self.ports.get(p).ok_or(STATUS_INVALID_HANDLE)?;
            let st_ = &pt.steer;
            let in_table = st_.indir[..st_.indir_len.min(MAX_RSS)]
                .iter()
                .any(|&x| usize::from(x) == s)
                || st_.default_rq == Some(s as u8);
            if st_.rx_enable && in_table {
                return Err(STATUS_DEVICE_BUSY);
            }
            self.destroy_rq(id).map_err(st)?;
            if let Some(pt) = self.ports.get_mut(p) {
                let t = &mut pt.steer;
                let mut w = 0;
                for i in 0..t.indir_len.min(MAX_RSS) {
                    if usize::from(t.indir[i]) != s {
                        t.indir[w] = t.indir[i];
                        w += 1;
                    }
                }
                t.indir_len = w;
                if t.default_rq == Some(s as u8) {
                    t.default_rq = None;
                }
            }
        } else {
            self.destroy_sq(id).map_err(st)?;
        }
        let cq = super::make_id(Kind::Cq, p, cq_slot);
        self.destroy_cq(cq).map_err(st)?;
        self.free_owned(k, id);
        self.free_owned(Kind::Cq, cq);
        Ok(())
    }

    // MANA_CONFIG_VPORT_RX (v2): vport 40, num_indir_entries 48, indir_tab_offset 50,
    // rx_enable 52, rss_enable 56, update_default_rxobj 60, update_hashkey 61,
    // update_indir_tab 62, default_rxobj 64, hashkey 72..112, cqe_coalescing_enable 112,
    // indir_tab at indir_tab_offset.
    fn config_vport_rx<M: BusMemory>(&mut self, m: &Msg<'_, M>, _b: &mut [u8]) -> Exec {
        let h = &m.head;
        if m.len < 120 {
            return Err(STATUS_INVALID_PARAMETER);
        }
        let p = self.vport(le64(h, 40))?;
        let n = usize::from(le16(h, 48));
        let tab = usize::from(le16(h, 50));
        if n == 0 || n > 512 || tab != 120 || m.len != tab + 8 * n {
            return Err(STATUS_INVALID_PARAMETER);
        }
        if n > MAX_RSS {
            return Err(STATUS_NOT_SUPPORTED);
        }
        let tri = |v: u32| match v {
            0 => Ok(Some(false)),
            1 => Ok(Some(true)),
            u32::MAX => Ok(None),
            _ => Err(STATUS_INVALID_PARAMETER),
        };
        let rx = tri(le32(h, 52))?;
        let rss = tri(le32(h, 56))?;
        let (upd_def, upd_key, upd_tab) = (h[60], h[61], h[62]);
        if upd_def > 1 || upd_key > 1 || upd_tab > 1 {
            return Err(STATUS_INVALID_PARAMETER);
        }
        if h[112] != 0 {
            return Err(STATUS_NOT_SUPPORTED);
        }
        let rq_slot = |d: &Self, handle: u64| -> Result<u8, u32> {
            let (k, id) = d.wq_obj(handle)?;
            let (q, s) = d.loc(id, Kind::Rq).map_err(st)?;
            if k != Kind::Rq || q != p {
                return Err(STATUS_INVALID_HANDLE);
            }
            Ok(s as u8)
        };
        let default = if upd_def == 1 {
            Some(rq_slot(self, le64(h, 64))?)
        } else {
            None
        };
        let mut table = [0u8; MAX_RSS];
        if upd_tab == 1 {
            for (i, t) in table.iter_mut().enumerate().take(n) {
                let e = m.u64_at(tab + 8 * i).ok_or(STATUS_INVALID_PARAMETER)?;
                *t = rq_slot(self, e)?;
            }
        }
        let Some(pt) = self.ports.get_mut(p) else {
            return Err(STATUS_INVALID_HANDLE);
        };
        let s = &mut pt.steer;
        s.configured = true;
        if let Some(v) = rx {
            s.rx_enable = v;
        }
        if let Some(v) = rss {
            s.rss_enable = v;
        }
        if let Some(d) = default {
            s.default_rq = Some(d);
        }
        if upd_key == 1 {
            s.hashkey.copy_from_slice(&h[72..112]);
        }
        if upd_tab == 1 {
            s.indir = table;
            s.indir_len = n;
        }
        self.apply_steer(p);
        Ok(0)
    }

    /// Sets the engine's RSS table from the vport's steering: empty with RX disabled, the
    /// indirection table with RSS on, the default RQ with RSS off.
    fn apply_steer(&mut self, p: usize) {
        let Some(pt) = self.ports.get_mut(p) else {
            return;
        };
        let s = pt.steer;
        let (t, n) = if !s.rx_enable {
            ([0u8; MAX_RSS], 0)
        } else if s.rss_enable {
            (s.indir, s.indir_len)
        } else if let Some(d) = s.default_rq {
            let mut t = [0u8; MAX_RSS];
            t[0] = d;
            (t, 1)
        } else {
            ([0u8; MAX_RSS], 0)
        };
        pt.rss = t;
        pt.rss_len = n;
        pt.rss_key = s.hashkey;
        self.resume();
    }

    fn gf_stats(&self, req: u64, b: &mut [u8]) {
        let mut c = [0u64; 27];
        for pt in self.ports.iter() {
            let k = &pt.counters;
            let add = |c: &mut [u64; 27], i: usize, v: u64| c[i] = c[i].wrapping_add(v);
            add(&mut c, 0, k.hc_rx_discards_no_wqe);
            add(&mut c, 1, k.hc_rx_err_vport_disabled);
            add(&mut c, 2, k.hc_rx_bytes);
            add(&mut c, 3, k.hc_rx_ucast_pkts);
            add(&mut c, 4, k.hc_rx_ucast_bytes);
            add(&mut c, 5, k.hc_rx_bcast_pkts);
            add(&mut c, 6, k.hc_rx_bcast_bytes);
            add(&mut c, 7, k.hc_rx_mcast_pkts);
            add(&mut c, 8, k.hc_rx_mcast_bytes);
            add(&mut c, 17, k.hc_tx_err_mtu_violation);
            add(&mut c, 18, k.hc_tx_err_inval_oob);
            add(&mut c, 19, k.hc_tx_bytes);
            add(&mut c, 20, k.hc_tx_ucast_pkts);
            add(&mut c, 21, k.hc_tx_ucast_bytes);
            add(&mut c, 22, k.hc_tx_bcast_pkts);
            add(&mut c, 23, k.hc_tx_bcast_bytes);
            add(&mut c, 24, k.hc_tx_mcast_pkts);
            add(&mut c, 25, k.hc_tx_mcast_bytes);
            add(&mut c, 26, k.hc_tx_err_gdma);
        }
        // Field i of the response and its STATISTICS_FLAGS bit (the flags order the
        // multicast and broadcast counters the other way round).
        const FLAG: [u8; 27] = [
            0, 1, 2, 3, 4, 7, 8, 5, 6, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 24, 25,
            22, 23, 26,
        ];
        // The counters the model keeps: those it adds above.
        const KEPT: [usize; 19] = [
            0, 1, 2, 3, 4, 5, 6, 7, 8, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26,
        ];
        let mut reported = 0u64;
        for &i in KEPT.iter() {
            let bit = 1u64 << FLAG[i];
            if req & bit != 0 {
                reported |= bit;
                put_le64(b, 8 + 8 * i, c[i]);
            }
        }
        put_le64(b, 0, reported);
    }

    fn region_count(&self) -> usize {
        self.queues.len().min(self.ports.len() * MAX_QUEUES) * REGIONS_PER_ROW
    }

    fn region(&self, r: usize) -> Option<&Region> {
        self.queues
            .get(r / REGIONS_PER_ROW)
            .and_then(|q| q.regions.get(r % REGIONS_PER_ROW))
    }

    fn region_mut(&mut self, r: usize) -> Option<&mut Region> {
        self.queues
            .get_mut(r / REGIONS_PER_ROW)
            .and_then(|q| q.regions.get_mut(r % REGIONS_PER_ROW))
    }

    fn region_of(&self, handle: u64) -> Option<usize> {
        if handle & (0xff << 56) != REGION_TAG {
            return None;
        }
        let r = (handle as u32).checked_sub(1)? as usize;
        let gen = (handle >> 32) as u16;
        if r >= self.region_count() {
            return None;
        }
        self.region(r).filter(|x| x.used && x.gen == gen).map(|_| r)
    }

    /// A complete region no queue owns.
    fn ready_region(&self, handle: u64) -> Result<usize, u32> {
        let r = self.region_of(handle).ok_or(STATUS_INVALID_HANDLE)?;
        match self.region(r) {
            Some(x) if x.owner.is_some() => Err(STATUS_DEVICE_BUSY),
            Some(x) if x.have < x.pages => Err(STATUS_INVALID_PARAMETER),
            Some(_) => Ok(r),
            None => Err(STATUS_INVALID_HANDLE),
        }
    }

    fn owned_region(&self, k: Kind, id: u32) -> Option<usize> {
        (0..self.region_count()).find(|&r| {
            self.region(r)
                .is_some_and(|x| x.used && x.owner == Some((k, id)))
        })
    }

    fn free_owned(&mut self, k: Kind, id: u32) {
        while let Some(r) = self.owned_region(k, id) {
            if let Some(x) = self.region_mut(r) {
                x.used = false;
                x.owner = None;
            }
        }
    }

    fn regions_alive(&self) -> bool {
        (0..self.region_count()).any(|r| self.region(r).is_some_and(|x| x.used))
    }

    // GDMA_CREATE_DMA_REGION: length 40, offset_in_page 48, gdma_page_type 52,
    // page_count 56, page_addr_list_len 60, page_addr_list 64.
    fn create_region<M: BusMemory>(&mut self, m: &Msg<'_, M>, b: &mut [u8]) -> Exec {
        let h = &m.head;
        if m.len < 64 {
            return Err(STATUS_INVALID_PARAMETER);
        }
        let length = le64(h, 40);
        let count = le32(h, 56);
        let listed = le32(h, 60);
        if m.len != 64 + 8 * listed as usize
            || count == 0
            || listed == 0
            || listed > count
            || length != u64::from(count) * PAGE
            || length > u64::from(u32::MAX)
        {
            return Err(STATUS_INVALID_PARAMETER);
        }
        if le32(h, 48) != 0 || le32(h, 52) != 0 {
            return Err(STATUS_NOT_SUPPORTED);
        }
        let base = m.u64_at(64).ok_or(STATUS_INVALID_PARAMETER)?;
        check_pages(m, 64, listed, base, 0)?;
        let r = (0..self.region_count())
            .find(|&r| self.region(r).is_some_and(|x| !x.used))
            .ok_or(STATUS_INSUFFICIENT_RESOURCES)?;
        let x = self.region_mut(r).ok_or(STATUS_INSUFFICIENT_RESOURCES)?;
        x.gen = x.gen.wrapping_add(1);
        x.used = true;
        x.base = base;
        x.len = length as u32;
        x.pages = count;
        x.have = listed;
        x.owner = None;
        put_le64(b, 0, REGION_TAG | (u64::from(x.gen) << 32) | (r as u64 + 1));
        Ok(8)
    }

    // GDMA_DMA_REGION_ADD_PAGES: handle 40, page_addr_list_len 48, page_addr_list 56.
    fn add_pages<M: BusMemory>(&mut self, m: &Msg<'_, M>) -> Exec {
        let h = &m.head;
        if m.len < 56 {
            return Err(STATUS_INVALID_PARAMETER);
        }
        let r = self.region_of(le64(h, 40)).ok_or(STATUS_INVALID_HANDLE)?;
        let x = *self.region(r).ok_or(STATUS_INVALID_HANDLE)?;
        let n = le32(h, 48);
        if m.len != 56 + 8 * n as usize || n == 0 || x.owner.is_some() || n > x.pages - x.have {
            return Err(STATUS_INVALID_PARAMETER);
        }
        check_pages(m, 56, n, x.base, x.have)?;
        if let Some(y) = self.region_mut(r) {
            y.have += n;
        }
        Ok(0)
    }
}

/// Page `i` of a list at `off` must be 4 KiB aligned and continue the region contiguously
/// from page `first` (the model keeps one base address per region).
fn check_pages<M: BusMemory>(
    m: &Msg<'_, M>,
    off: usize,
    n: u32,
    base: u64,
    first: u32,
) -> Result<(), u32> {
    for i in 0..n as usize {
        let a = m.u64_at(off + 8 * i).ok_or(STATUS_INVALID_PARAMETER)?;
        if a % PAGE != 0 {
            return Err(STATUS_INVALID_PARAMETER);
        }
        if a != base.wrapping_add((u64::from(first) + i as u64) * PAGE) {
            return Err(STATUS_NOT_SUPPORTED);
        }
    }
    Ok(())
}

fn known(code: u32) -> bool {
    matches!(code, 1..=5 | 10 | 12 | 13 | 25..=27 | 0x20001..=0x20008 | 0x2F001..=0x2F003)
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
