// SPDX-License-Identifier: GPL-2.0

//! The device's half of the GDMA and MANA requests the hardware channel carries (the
//! driver's is `hwif/mana/gdma_req.rs`): the request header's checks, then each request
//! against the model (version, resources, device list, REGISTER_DEVICE, GDMA_CREATE_QUEUE,
//! DMA regions, MANA_QUERY_DEV_CONFIG / QUERY_VPORT_CONFIG, CONFIG_VPORT_TX / RX,
//! CREATE / DESTROY_WQ_OBJ, FENCE_RQ, QUERY_GF_STAT, and rsnic's RSNIC_* requests) and the
//! NTSTATUS-style status of each failure. Layouts from upstream include/net/mana/gdma.h
//! (`gdma_req_hdr`, `gdma_create_queue_req`, `gdma_create_dma_region_req`, ...) and mana.h
//! (`mana_query_device_cfg_req`, `mana_cfg_rx_steer_req_v2`, `mana_create_wqobj_req`,
//! `mana_query_gf_stat_req`, ...); callers in gdma_main.c and mana_en.c.
//! The DMA-region requests' handlers are in [`super::region`], MANA_CONFIG_VPORT_RX's in
//! [`super::steer`].
//!
//! **Requests** (codes of `enum gdma_request_type` and `enum mana_command_code`):
//! VERIFY_VF_DRIVER_VERSION, QUERY_MAX_RESOURCES, LIST_DEVICES (HWC and MANA
//! [`super::MANA_DEV_ID`], with a hole between them), REGISTER_DEVICE (pdid [`super::MANA_PDID`],
//! gpa_mkey [`super::MANA_MKEY`], db_id [`super::MANA_DB_ID`]), DEREGISTER_DEVICE,
//! GENERATE_TEST_EQE, CREATE_QUEUE and DISABLE_QUEUE for EQs (an EQ lives in the rows of the first
//! port with a free slot and serves CQs of every port), CREATE_DMA_REGION / DMA_REGION_ADD_PAGES /
//! DESTROY_DMA_REGION (4 KiB pages that must be contiguous: the model keeps one base address; a
//! queue created over a region owns it until the queue is destroyed), MANA_QUERY_DEV_CONFIG (v1 or
//! v2 response), MANA_QUERY_VPORT_CONFIG (vport p = port p, MAC [`super::vport_mac`] unless the
//! device host set one with [`super::Device::set_permanent_mac`], handle
//! [`super::VPORT_HANDLE_BASE`] + p), MANA_CONFIG_VPORT_TX, MANA_CREATE_WQ_OBJ /
//! MANA_DESTROY_WQ_OBJ (the SQ or RQ and its CQ over two regions), MANA_CONFIG_VPORT_RX (version 2:
//! RX on/off, RSS on/off, default RQ, the hash key received frames are hashed with from the next
//! frame on ([`crate::sim::pkt::RSS_KEY`] until one is given), indirection table of at most
//! [`super::MAX_RSS`] RQ objects, each field changed only with its `update_*` flag; the hashed
//! fields are fixed: TCP and UDP over IPv4 and IPv6 hash addresses and ports, other IP the
//! addresses, as mana's `rx_hashtype` reports), MANA_FENCE_RQ (an RX_OBJECT_FENCE CQE on the RQ's
//! CQ) and MANA_QUERY_GF_STAT (the sums over all ports of its counters, every one asked for
//! reported: those of errors the model never raises are 0), and rsnic's own requests, for what MANA does not have (codes in a
//! range upstream does not use; advertised in MANA_QUERY_DEV_CONFIG's reserved u16 at 66 as
//! [`super::RSNIC_CAPS`] while [`super::Device::set_rsnic_requests`] has them, the default; without
//! them the field is 0 and the codes are unknown, as on a real MANA; an unknown vport is
//! [`super::STATUS_INVALID_HANDLE`], a flag other than 0 or 1 [`super::STATUS_INVALID_PARAMETER`]):
//! RSNIC_SET_LOOPBACK (0x2F001: vport 40, enable 48 as 0 or 1; internal loopback), RSNIC_SET_PAUSE
//! (0x2F002: vport 40, rx 48, tx 52, each a u32 0 or 1; the vport's flow control per direction,
//! [`super::Device::set_pause_rx_tx`]; the response is the header) and RSNIC_QUERY_PAUSE (0x2F003:
//! vport 40; the response's body is rx 32 and tx 36 as u32 0 or 1, then
//! [`super::PortCounters::tx_pause_frames`] 40 and [`super::PortCounters::rx_pause_frames`] 48 as
//! u64, 56 bytes in all). Upstream mana has no request for the link's flow control (a VF has no say
//! over it); rsnic's model gives the vport one so the driver's `ethtool -a`/`-A`/`-I -a` have a
//! device to talk to.
//!
//! After REGISTER_DEVICE every queue's doorbells must use page [`super::MANA_DB_ID`] (before it,
//! port p's queues use page p, as the Rust API's users do).
//!
//! **Statuses** (`gdma_resp_hdr.status`; NTSTATUS values, the convention
//! `GDMA_STATUS_MORE_ENTRIES` = 0x105 comes from; the hardware's own codes are not public).
//! A failure response is only the 32-byte header (`msg_size` 32), with `hwc_msg_id`,
//! `dev_id` and `activity_id` echoed:
//!
//! | status | when |
//! |---|---|
//! | [`super::STATUS_INVALID_PARAMETER`] 0xC000000D | a request shorter than its header, `hdr_type` ≠ 0, `req.msg_size` ≠ the bytes sent, request and response codes differ, a length that does not match the struct (or its list), a field out of range (sizes, alignment, pdid, doorbell page, TRI_STATE values, MSI-X index) |
//! | [`super::STATUS_INVALID_DEVICE_REQUEST`] 0xC0000010 | an unknown code |
//! | [`super::STATUS_REVISION_MISMATCH`] 0xC0000059 | a request version other than 1 (2 for CONFIG_VPORT_RX), protocol or MANA major version not supported |
//! | [`super::STATUS_NO_SUCH_DEVICE`] 0xC000000E | a `dev_id` that is not the one the request needs (zero/HWC for function-level requests, [`super::MANA_DEV_ID`] for device and MANA ones) |
//! | [`super::STATUS_INVALID_DEVICE_STATE`] 0xC0000184 | a MANA request before REGISTER_DEVICE, an SQ object before CONFIG_VPORT_TX |
//! | [`super::STATUS_INVALID_HANDLE`] 0xC0000008 | an unknown region, vport, WQ object or queue id (also one of another vport) |
//! | [`super::STATUS_OBJECT_NAME_COLLISION`] 0xC0000035 | REGISTER_DEVICE twice |
//! | [`super::STATUS_DEVICE_BUSY`] 0x80000011 | destroying a region a queue owns, an EQ with CQs, an RQ in an enabled steering table; DEREGISTER_DEVICE with regions alive; a region used twice |
//! | [`super::STATUS_INSUFFICIENT_RESOURCES`] 0xC000009A | no free queue slot or region entry |
//! | [`super::STATUS_NOT_SUPPORTED`] 0xC00000BB | CREATE/DISABLE_QUEUE of a type other than EQ, a page type other than 4K or an offset in page, non-contiguous region pages, CQ moderation, CQE coalescing, more than [`super::MAX_RSS`] indirection entries |
//! | [`super::STATUS_BUFFER_TOO_SMALL`] 0xC0000023 | `req.resp.msg_size` smaller than the response |
//!
//! | [`super::STATUS_INTERNAL_ERROR`] 0xC00000E5 | an injected failure ([`super::Device::fail_request`], the device host's `cmd_fail` knob) |
//!
//! [`super::Device::hwc_fail`] makes a chosen code fail with a chosen status (fault injection).

use super::engine::{eqe_to, rx_fence_cqe};
use super::hwc::{Msg, EQE_TEST_EVENT};
use super::{
    CmdError, Device, Kind, Port, QueueSet, HWC_DEV_ID, HWC_EQ_ID, MANA_DB_ID, MANA_DEV_ID,
    MANA_MKEY, MANA_PDID, MAX_FRAME, MAX_QUEUES, MAX_RSS,
};
use crate::hwif::bytes::{le32, le64, put_le16, put_le32, put_le64};
use crate::hwif::hw::{BusMemory, InterruptSink};
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

/// `max_num_cqs` (HWC_INIT_DATA_MAX_NUM_CQS): every CQ id is below it.
pub const MAX_NUM_CQS: u32 = super::CQ_ID_BASE + (super::MAX_PORTS * MAX_QUEUES) as u32;

/// MSI-X vectors (QUERY_MAX_RESOURCES `max_msix`): 64 per port, as the device host numbers
/// them (port p's from p × 64; the HWC's index 0 is port 0's first).
pub const MAX_MSIX: u32 = 64 * super::MAX_PORTS as u32;

/// DMA regions per queue-table row (the region table lives in the rows).
pub const REGIONS_PER_ROW: usize = 4;

/// First vport handle (vport p is `VPORT_HANDLE_BASE + p`).
pub const VPORT_HANDLE_BASE: u64 = 0x7670_0000_0000;

const WQ_OBJ_TAG: u64 = 0x5751 << 48;

/// Outcome of one request: the status and the response body length (after the header).
pub(super) type Exec = Result<usize, u32>;

pub(super) fn st(e: CmdError) -> u32 {
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

pub(super) fn known(code: u32) -> bool {
    matches!(code, 1..=5 | 10 | 12 | 13 | 25..=27 | 0x20001..=0x20008 | 0x2F001..=0x2F003)
}

impl<P, Q, B> Device<P, Q, B>
where
    P: DerefMut<Target = [Port]>,
    Q: DerefMut<Target = [QueueSet]>,
    B: DerefMut<Target = [u8]>,
{
    pub(super) fn check_dev(&self, code: u32, dev: u32) -> Result<(), u32> {
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

    pub(super) fn dispatch<M: BusMemory, I: InterruptSink>(
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
            27 => {
                expect_len(len, 48)?;
                self.destroy_region(h)
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

    pub(super) fn vport(&self, handle: u64) -> Result<usize, u32> {
        let p = handle.wrapping_sub(VPORT_HANDLE_BASE);
        if handle < VPORT_HANDLE_BASE || p >= self.ports.len() as u64 {
            return Err(STATUS_INVALID_HANDLE);
        }
        Ok(p as usize)
    }

    pub(super) fn wq_obj(&self, handle: u64) -> Result<(Kind, u32), u32> {
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
        let cq_slot = usize::from(row.wq(k).cq);
        if k == Kind::Rq {
            let pt = self.ports.get(p).ok_or(STATUS_INVALID_HANDLE)?;
            if pt.steer.holds(s) {
                return Err(STATUS_DEVICE_BUSY);
            }
            self.destroy_rq(id).map_err(st)?;
            if let Some(pt) = self.ports.get_mut(p) {
                pt.steer.forget(s);
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
        // multicast and broadcast counters the other way round). Every counter is reported
        // when asked for, as the device reports them: the eight TX errors the model never
        // raises (fields 9..16: a disabled GF or vport, a bad vport offset, the VLAN,
        // EtherType, source-MAC, SQ and CQ protection-domain enforcements; the model
        // enforces none of them) are 0.
        const FLAG: [u8; 27] = [
            0, 1, 2, 3, 4, 7, 8, 5, 6, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 24, 25,
            22, 23, 26,
        ];
        let mut reported = 0u64;
        for (i, &flag) in FLAG.iter().enumerate() {
            let bit = 1u64 << flag;
            if req & bit != 0 {
                reported |= bit;
                put_le64(b, 8 + 8 * i, c[i]);
            }
        }
        put_le64(b, 0, reported);
    }
}
