// SPDX-License-Identifier: GPL-2.0

//! GDMA and MANA control messages, driver side: the requests rsnic sends over the hardware
//! channel and the responses it parses (6.12 `include/net/mana/gdma.h`, `mana.h`).
//!
//! Every request starts with `struct gdma_req_hdr` (40 bytes) and every response with
//! `struct gdma_resp_hdr` (32 bytes); all fields are little-endian at the offsets of the
//! headers (the structs are naturally aligned, `/* HW DATA */`). Builders write into a
//! caller buffer and return the message length; parsers read a response the device wrote and
//! return a typed value, after the checks upstream does (and a few more: nothing read from
//! the device is trusted).
//!
//! | request | code | builder / parser | upstream |
//! |---|---|---|---|
//! | GDMA_VERIFY_VF_DRIVER_VERSION | 1 | [`verify_vf_version`] / [`parse_verify_vf_version`] | `mana_gd_verify_vf_version` |
//! | GDMA_QUERY_MAX_RESOURCES | 2 | [`general`] / [`parse_query_max_resources`] | `mana_gd_query_max_resources` |
//! | GDMA_LIST_DEVICES | 3 | [`general`] / [`parse_list_devices`] | `mana_gd_detect_devices` |
//! | GDMA_REGISTER_DEVICE | 4 | [`general`] / [`parse_register_device`] | `mana_gd_register_device` |
//! | GDMA_DEREGISTER_DEVICE | 5 | [`general`] / [`parse_general`] | `mana_gd_deregister_device` |
//! | GDMA_GENERATE_TEST_EQE | 10 | [`generate_test_eqe`] / [`parse_general`] | `mana_gd_test_eq` |
//! | GDMA_CREATE_QUEUE (EQ) | 12 | [`create_eq`] / [`parse_create_queue`] | `mana_gd_create_hw_eq` |
//! | GDMA_DISABLE_QUEUE | 13 | [`disable_queue`] / [`parse_general`] | `mana_gd_disable_queue` |
//! | GDMA_CREATE_DMA_REGION | 25 | [`create_dma_region`] / [`parse_create_dma_region`] | `mana_gd_create_dma_region` |
//! | GDMA_DMA_REGION_ADD_PAGES | 26 | [`dma_region_add_pages`] / [`parse_general`] | (gdma.h; 6.12 never needs it) |
//! | GDMA_DESTROY_DMA_REGION | 27 | [`destroy_dma_region`] / [`parse_general`] | `mana_gd_destroy_dma_region` |
//! | MANA_QUERY_DEV_CONFIG | 0x20001 | [`query_dev_config`] / [`parse_query_dev_config`] | `mana_query_device_cfg` |
//! | MANA_QUERY_GF_STAT | 0x20002 | [`query_gf_stat`] / [`parse_query_gf_stat`] | `mana_query_gf_stats` |
//! | MANA_CONFIG_VPORT_TX | 0x20003 | [`config_vport_tx`] / [`parse_config_vport_tx`] | `mana_cfg_vport` |
//! | MANA_CREATE_WQ_OBJ | 0x20004 | [`create_wq_obj`] / [`parse_create_wq_obj`] | `mana_create_wq_obj` |
//! | MANA_DESTROY_WQ_OBJ | 0x20005 | [`destroy_wq_obj`] / [`parse_general`] | `mana_destroy_wq_obj` |
//! | MANA_FENCE_RQ | 0x20006 | [`fence_rq`] / [`parse_general`] | `mana_fence_rq` |
//! | MANA_CONFIG_VPORT_RX | 0x20007 | [`config_vport_rx`] / [`parse_general`] | `mana_cfg_vport_steering` |
//! | MANA_QUERY_VPORT_CONFIG | 0x20008 | [`query_vport_config`] / [`parse_query_vport_config`] | `mana_query_vport_cfg` |
//!
//! Header rules (`mana_gd_init_req_hdr`): `hdr_type` 0, `msg_type` = the code in both the
//! request and the expected-response header, `msg_version` 1 (QUERY_DEV_CONFIG and
//! QUERY_GF_STAT ask for a version-2 response, CONFIG_VPORT_RX sends a version-2 request),
//! `msg_size` = the request size and the expected response size. `hwc_msg_id` is filled by
//! the channel ([`crate::hwif::mana::hwc`]). GDMA requests go with the `dev_id` upstream gives
//! them (zero for the function-level ones); MANA requests carry the MANA device's `dev_id` and
//! an `activity_id` the response must echo (`mana_send_request`).
//!
//! Response checks ([`check_resp`]): at least the 32-byte header and the struct's size in
//! the buffer, status 0, `msg_type` = the code, `msg_version` ≥ 1, `msg_size` ≥ the struct's
//! size (`mana_verify_resp_hdr`), and for MANA requests `dev_id` and `activity_id` equal to
//! the request's.
//!
//! This module holds the codes, sizes and the header framing; the GDMA requests' builders
//! and parsers are in module `gdma` and the MANA requests' in module `mana`, both
//! re-exported here.

mod gdma;
mod mana;

pub use gdma::*;
pub use mana::*;

use crate::hwif::bytes::{le16, le32, put_le16, put_le32, put_le64};

/// `GDMA_STANDARD_HEADER_TYPE`.
pub const GDMA_STANDARD_HEADER_TYPE: u32 = 0;
/// `GDMA_MESSAGE_V1`.
pub const GDMA_MESSAGE_V1: u16 = 1;
/// `GDMA_MESSAGE_V2`.
pub const GDMA_MESSAGE_V2: u16 = 2;

/// `GDMA_VERIFY_VF_DRIVER_VERSION`.
pub const GDMA_VERIFY_VF_DRIVER_VERSION: u32 = 1;
/// `GDMA_QUERY_MAX_RESOURCES`.
pub const GDMA_QUERY_MAX_RESOURCES: u32 = 2;
/// `GDMA_LIST_DEVICES`.
pub const GDMA_LIST_DEVICES: u32 = 3;
/// `GDMA_REGISTER_DEVICE`.
pub const GDMA_REGISTER_DEVICE: u32 = 4;
/// `GDMA_DEREGISTER_DEVICE`.
pub const GDMA_DEREGISTER_DEVICE: u32 = 5;
/// `GDMA_GENERATE_TEST_EQE`.
pub const GDMA_GENERATE_TEST_EQE: u32 = 10;
/// `GDMA_CREATE_QUEUE`.
pub const GDMA_CREATE_QUEUE: u32 = 12;
/// `GDMA_DISABLE_QUEUE`.
pub const GDMA_DISABLE_QUEUE: u32 = 13;
/// `GDMA_CREATE_DMA_REGION`.
pub const GDMA_CREATE_DMA_REGION: u32 = 25;
/// `GDMA_DMA_REGION_ADD_PAGES`.
pub const GDMA_DMA_REGION_ADD_PAGES: u32 = 26;
/// `GDMA_DESTROY_DMA_REGION`.
pub const GDMA_DESTROY_DMA_REGION: u32 = 27;
/// `MANA_QUERY_DEV_CONFIG`.
pub const MANA_QUERY_DEV_CONFIG: u32 = 0x20001;
/// `MANA_QUERY_GF_STAT`.
pub const MANA_QUERY_GF_STAT: u32 = 0x20002;
/// `MANA_CONFIG_VPORT_TX`.
pub const MANA_CONFIG_VPORT_TX: u32 = 0x20003;
/// `MANA_CREATE_WQ_OBJ`.
pub const MANA_CREATE_WQ_OBJ: u32 = 0x20004;
/// `MANA_DESTROY_WQ_OBJ`.
pub const MANA_DESTROY_WQ_OBJ: u32 = 0x20005;
/// `MANA_FENCE_RQ`.
pub const MANA_FENCE_RQ: u32 = 0x20006;
/// `MANA_CONFIG_VPORT_RX`.
pub const MANA_CONFIG_VPORT_RX: u32 = 0x20007;
/// `MANA_QUERY_VPORT_CONFIG`.
pub const MANA_QUERY_VPORT_CONFIG: u32 = 0x20008;
/// rsnic's own request, not MANA's (upstream MANA has no internal loopback): a vport's
/// internal loopback on or off, in a code range upstream does not use.
pub const RSNIC_SET_LOOPBACK: u32 = 0x2F001;
/// rsnic's own request, not MANA's (upstream MANA has no flow-control request: a VF has no say
/// over the link's pause): a vport's 802.3x flow control per direction.
pub const RSNIC_SET_PAUSE: u32 = 0x2F002;
/// rsnic's own request, not MANA's: a vport's flow control and its PAUSE frame counters.
pub const RSNIC_QUERY_PAUSE: u32 = 0x2F003;

/// Where a device advertises rsnic's own requests: the QUERY_DEV_CONFIG response's
/// `reserved` field (u16 at 66, between `max_num_vports` and `max_num_eqs`), read as
/// [`RsnicCaps`].
///
/// Why there. rsnic's requests ([`RSNIC_SET_LOOPBACK`], [`RSNIC_SET_PAUSE`],
/// [`RSNIC_QUERY_PAUSE`]) exist only in rsnic's device model; a real MANA device does not know
/// them, so the driver must not send them unless the device says it has them. Upstream mana
/// (6.12 `mana_query_device_cfg`) reads only `max_num_vports` and, in a version-2 response,
/// `adapter_mtu` from this response: a device may put anything in a reserved field without
/// changing what upstream does, and a real device leaves it 0, which reads as "none". The
/// `pf_cap_flags1..4` words of the same response are the device's own capability bits,
/// whose meanings Microsoft assigns (a future device could set any of them), so they are not
/// borrowed. QUERY_DEV_CONFIG rather than QUERY_VPORT_CONFIG: the requests are the device's,
/// one answer for all its vports, learnt once at probe before any port exists (the vport
/// response's reserved bytes would have to agree across vports). The high byte is a
/// signature, [`RSNIC_CAPS_SIGNATURE`] ('R'): should the field ever get a meaning of its own,
/// a value without it is not taken for rsnic's.
pub const DEV_CFG_RSNIC_CAPS: usize = 66;
/// [`DEV_CFG_RSNIC_CAPS`]'s high byte when the low byte holds rsnic's capability bits.
pub const RSNIC_CAPS_SIGNATURE: u16 = 0x5200;
/// [`DEV_CFG_RSNIC_CAPS`] bit: [`RSNIC_SET_LOOPBACK`] is implemented.
pub const RSNIC_CAP_LOOPBACK: u16 = 1 << 0;
/// [`DEV_CFG_RSNIC_CAPS`] bit: [`RSNIC_SET_PAUSE`] and [`RSNIC_QUERY_PAUSE`] are implemented.
pub const RSNIC_CAP_PAUSE: u16 = 1 << 1;

/// Which of rsnic's own requests a device implements ([`DEV_CFG_RSNIC_CAPS`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RsnicCaps {
    /// [`RSNIC_SET_LOOPBACK`].
    pub loopback: bool,
    /// [`RSNIC_SET_PAUSE`] and [`RSNIC_QUERY_PAUSE`].
    pub pause: bool,
}

impl RsnicCaps {
    /// None of them (what a real device's zeroed reserved field says).
    pub const NONE: Self = Self {
        loopback: false,
        pause: false,
    };

    /// Reads the capability word: nothing unless its high byte is the signature; bits that
    /// are not known are ignored.
    pub fn from_word(w: u16) -> Self {
        if w & 0xff00 != RSNIC_CAPS_SIGNATURE {
            return Self::NONE;
        }
        Self {
            loopback: w & RSNIC_CAP_LOOPBACK != 0,
            pause: w & RSNIC_CAP_PAUSE != 0,
        }
    }

    /// The capability word a device that has these puts in its response.
    pub fn word(self) -> u16 {
        RSNIC_CAPS_SIGNATURE
            | if self.loopback { RSNIC_CAP_LOOPBACK } else { 0 }
            | if self.pause { RSNIC_CAP_PAUSE } else { 0 }
    }
}

/// The name of request `code` as upstream spells it (for logs), or `"UNKNOWN"`.
pub fn request_name(code: u32) -> &'static str {
    match code {
        GDMA_VERIFY_VF_DRIVER_VERSION => "GDMA_VERIFY_VF_DRIVER_VERSION",
        GDMA_QUERY_MAX_RESOURCES => "GDMA_QUERY_MAX_RESOURCES",
        GDMA_LIST_DEVICES => "GDMA_LIST_DEVICES",
        GDMA_REGISTER_DEVICE => "GDMA_REGISTER_DEVICE",
        GDMA_DEREGISTER_DEVICE => "GDMA_DEREGISTER_DEVICE",
        GDMA_GENERATE_TEST_EQE => "GDMA_GENERATE_TEST_EQE",
        GDMA_CREATE_QUEUE => "GDMA_CREATE_QUEUE",
        GDMA_DISABLE_QUEUE => "GDMA_DISABLE_QUEUE",
        GDMA_CREATE_DMA_REGION => "GDMA_CREATE_DMA_REGION",
        GDMA_DMA_REGION_ADD_PAGES => "GDMA_DMA_REGION_ADD_PAGES",
        GDMA_DESTROY_DMA_REGION => "GDMA_DESTROY_DMA_REGION",
        MANA_QUERY_DEV_CONFIG => "MANA_QUERY_DEV_CONFIG",
        MANA_QUERY_GF_STAT => "MANA_QUERY_GF_STAT",
        MANA_CONFIG_VPORT_TX => "MANA_CONFIG_VPORT_TX",
        MANA_CREATE_WQ_OBJ => "MANA_CREATE_WQ_OBJ",
        MANA_DESTROY_WQ_OBJ => "MANA_DESTROY_WQ_OBJ",
        MANA_FENCE_RQ => "MANA_FENCE_RQ",
        MANA_CONFIG_VPORT_RX => "MANA_CONFIG_VPORT_RX",
        MANA_QUERY_VPORT_CONFIG => "MANA_QUERY_VPORT_CONFIG",
        RSNIC_SET_LOOPBACK => "RSNIC_SET_LOOPBACK",
        RSNIC_SET_PAUSE => "RSNIC_SET_PAUSE",
        RSNIC_QUERY_PAUSE => "RSNIC_QUERY_PAUSE",
        _ => "UNKNOWN",
    }
}

/// `GDMA_STATUS_MORE_ENTRIES`: the only non-zero status `mana_hwc_send_request` accepts.
pub const GDMA_STATUS_MORE_ENTRIES: u32 = 0x105;

/// `enum gdma_queue_type`: SQ.
pub const GDMA_SQ: u32 = 1;
/// `enum gdma_queue_type`: RQ.
pub const GDMA_RQ: u32 = 2;
/// `enum gdma_queue_type`: CQ.
pub const GDMA_CQ: u32 = 3;
/// `enum gdma_queue_type`: EQ.
pub const GDMA_EQ: u32 = 4;

/// `GDMA_DEVICE_HWC`.
pub const GDMA_DEVICE_HWC: u16 = 1;
/// `GDMA_DEVICE_MANA`.
pub const GDMA_DEVICE_MANA: u16 = 2;

/// `GDMA_PROTOCOL_V1` (first and last protocol version).
pub const GDMA_PROTOCOL_V1: u64 = 1;
/// `GDMA_DRV_CAP_FLAG_1_EQ_SHARING_MULTI_VPORT`.
pub const CAP1_EQ_SHARING_MULTI_VPORT: u64 = 1 << 0;
/// `GDMA_DRV_CAP_FLAG_1_NAPI_WKDONE_FIX`.
pub const CAP1_NAPI_WKDONE_FIX: u64 = 1 << 2;
/// `GDMA_DRV_CAP_FLAG_1_HWC_TIMEOUT_RECONFIG` (rsnic does not advertise it: it has no
/// GDMA_QUERY_HWC_TIMEOUT nor SOC_RECONFIG handling).
pub const CAP1_HWC_TIMEOUT_RECONFIG: u64 = 1 << 3;
/// `GDMA_DRV_CAP_FLAG_1_VARIABLE_INDIRECTION_TABLE_SUPPORT`.
pub const CAP1_VARIABLE_INDIRECTION_TABLE: u64 = 1 << 5;
/// `GDMA_DRV_CAP_FLAG_1_DEV_LIST_HOLES_SUP`.
pub const CAP1_DEV_LIST_HOLES_SUP: u64 = 1 << 11;
/// The capability flags rsnic advertises: upstream's `GDMA_DRV_CAP_FLAGS1` without
/// [`CAP1_HWC_TIMEOUT_RECONFIG`].
pub const RSNIC_DRV_CAP_FLAGS1: u64 = CAP1_EQ_SHARING_MULTI_VPORT
    | CAP1_NAPI_WKDONE_FIX
    | CAP1_VARIABLE_INDIRECTION_TABLE
    | CAP1_DEV_LIST_HOLES_SUP;
/// `os_type` for Linux.
pub const OS_TYPE_LINUX: u32 = 0x10;

/// `MANA_MAJOR_VERSION` / `MINOR` / `MICRO` of 6.12's `mana_probe`.
pub const MANA_PROTO_VERSION: (u32, u32, u32) = (0, 1, 1);

/// `GDMA_INVALID_DMA_REGION`.
pub const GDMA_INVALID_DMA_REGION: u64 = 0;
/// `INVALID_MANA_HANDLE`.
pub const INVALID_MANA_HANDLE: u64 = u64::MAX;
/// `MANA_PAGE_SIZE`: the unit of DMA regions.
pub const MANA_PAGE_SIZE: u32 = 4096;
/// `GDMA_DEV_LIST_SIZE`.
pub const GDMA_DEV_LIST_SIZE: usize = 64;
/// `MANA_HASH_KEY_SIZE`.
pub const MANA_HASH_KEY_SIZE: usize = 40;
/// `MANA_INDIRECT_TABLE_MAX_SIZE`.
pub const MANA_INDIRECT_TABLE_MAX_SIZE: u32 = 512;
/// `MANA_INDIRECT_TABLE_DEF_SIZE`.
pub const MANA_INDIRECT_TABLE_DEF_SIZE: u32 = 64;
/// `ETH_FRAME_LEN`: the adapter MTU a version-1 QUERY_DEV_CONFIG response implies.
pub const ETH_FRAME_LEN: u16 = 1514;
/// `enum TRI_STATE`: TRUE.
pub const TRI_STATE_TRUE: u32 = 1;
/// `enum TRI_STATE`: FALSE.
pub const TRI_STATE_FALSE: u32 = 0;
/// `enum TRI_STATE`: UNKNOWN (-1: leave as is).
pub const TRI_STATE_UNKNOWN: u32 = u32::MAX;

/// `sizeof(struct gdma_req_hdr)`.
pub const REQ_HDR_SIZE: usize = 40;
/// `sizeof(struct gdma_resp_hdr)`.
pub const RESP_HDR_SIZE: usize = 32;
/// `sizeof(struct gdma_verify_ver_req)`.
pub const VERIFY_VER_REQ_SIZE: usize = 640;
/// `sizeof(struct gdma_verify_ver_resp)`.
pub const VERIFY_VER_RESP_SIZE: usize = 72;
/// `sizeof(struct gdma_query_max_resources_resp)`.
pub const QUERY_MAX_RES_RESP_SIZE: usize = 72;
/// `sizeof(struct gdma_list_devices_resp)`.
pub const LIST_DEVICES_RESP_SIZE: usize = 296;
/// `sizeof(struct gdma_register_device_resp)`.
pub const REGISTER_DEVICE_RESP_SIZE: usize = 44;
/// `sizeof(struct gdma_generate_test_event_req)`.
pub const TEST_EQE_REQ_SIZE: usize = 44;
/// `sizeof(struct gdma_create_queue_req)`.
pub const CREATE_QUEUE_REQ_SIZE: usize = 96;
/// `sizeof(struct gdma_create_queue_resp)`.
pub const CREATE_QUEUE_RESP_SIZE: usize = 36;
/// `sizeof(struct gdma_disable_queue_req)`.
pub const DISABLE_QUEUE_REQ_SIZE: usize = 52;
/// `sizeof(struct gdma_create_dma_region_req)` without the page list.
pub const CREATE_DMA_REGION_REQ_SIZE: usize = 64;
/// `sizeof(struct gdma_create_dma_region_resp)`.
pub const CREATE_DMA_REGION_RESP_SIZE: usize = 40;
/// `sizeof(struct gdma_dma_region_add_pages_req)` without the page list.
pub const ADD_PAGES_REQ_SIZE: usize = 56;
/// `sizeof(struct gdma_destroy_dma_region_req)`.
pub const DESTROY_DMA_REGION_REQ_SIZE: usize = 48;
/// `sizeof(struct mana_query_device_cfg_req)`.
pub const QUERY_DEV_CFG_REQ_SIZE: usize = 88;
/// `sizeof(struct mana_query_device_cfg_resp)` (version 2).
pub const QUERY_DEV_CFG_RESP_SIZE: usize = 80;
/// The version-1 response: without `adapter_mtu` and the reserved fields after it.
pub const QUERY_DEV_CFG_RESP_V1_SIZE: usize = 72;
/// `sizeof(struct mana_query_vport_cfg_req)`.
pub const QUERY_VPORT_CFG_REQ_SIZE: usize = 44;
/// `sizeof(struct mana_query_vport_cfg_resp)`.
pub const QUERY_VPORT_CFG_RESP_SIZE: usize = 64;
/// `sizeof(struct mana_config_vport_req)`.
pub const CONFIG_VPORT_TX_REQ_SIZE: usize = 56;
/// `sizeof(struct mana_config_vport_resp)`.
pub const CONFIG_VPORT_TX_RESP_SIZE: usize = 36;
/// `sizeof(struct mana_create_wqobj_req)`.
pub const CREATE_WQ_OBJ_REQ_SIZE: usize = 88;
/// `sizeof(struct mana_create_wqobj_resp)`.
pub const CREATE_WQ_OBJ_RESP_SIZE: usize = 48;
/// `sizeof(struct mana_destroy_wqobj_req)`.
pub const DESTROY_WQ_OBJ_REQ_SIZE: usize = 56;
/// `sizeof(struct mana_fence_rq_req)`.
pub const FENCE_RQ_REQ_SIZE: usize = 48;
/// `sizeof(struct mana_query_gf_stat_req)`.
pub const QUERY_GF_STAT_REQ_SIZE: usize = 48;
/// `sizeof(struct mana_query_gf_stat_resp)`.
pub const QUERY_GF_STAT_RESP_SIZE: usize = 256;
/// `offsetof(struct mana_cfg_rx_steer_req_v2, indir_tab)`.
pub const CONFIG_VPORT_RX_REQ_SIZE: usize = 120;

/// Why a message could not be built or a response was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MsgError {
    /// The caller's buffer cannot hold the request.
    BufferTooSmall,
    /// An argument is out of range (say which rule upstream would refuse it by).
    BadArgument,
    /// The response is shorter than the header or the struct (`-EPROTO`).
    Short,
    /// The device answered with a failure status (`resp.hdr.status`).
    Status(u32),
    /// `response.msg_type` is not the request's code.
    WrongCode(u32),
    /// `response.msg_version` is 0 (`mana_verify_resp_hdr`).
    BadVersion(u16),
    /// `response.msg_size` is smaller than the struct.
    BadSize(u32),
    /// `dev_id` or `activity_id` differ from the request's (`mana_send_request`).
    Mismatch,
    /// A field of an otherwise well-formed response is impossible (an invalid handle, no
    /// queues, ...).
    BadValue,
}

/// `struct gdma_dev_id`: `type` in bits 0..15, `instance` in bits 16..31.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DevId {
    /// `GDMA_DEVICE_*`.
    pub ty: u16,
    /// Instance number.
    pub instance: u16,
}

impl DevId {
    /// The zero id the function-level GDMA requests carry.
    pub const NONE: Self = Self { ty: 0, instance: 0 };
    /// The HWC's id (`type` 1, instance 0, as `mana_hwc_create_channel` sets it).
    pub const HWC: Self = Self {
        ty: GDMA_DEVICE_HWC,
        instance: 0,
    };

    /// `as_uint32`.
    pub fn as_u32(self) -> u32 {
        u32::from(self.ty) | (u32::from(self.instance) << 16)
    }

    /// From `as_uint32`.
    pub fn from_u32(v: u32) -> Self {
        Self {
            ty: v as u16,
            instance: (v >> 16) as u16,
        }
    }
}

/// `struct gdma_msg_hdr` (16 bytes): `hdr_type` 0, `msg_type` 4, `msg_version` 8 (u16),
/// `hwc_msg_id` 10 (u16), `msg_size` 12.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MsgHdr {
    /// `hdr_type`.
    pub hdr_type: u32,
    /// `msg_type`: the request code.
    pub msg_type: u32,
    /// `msg_version`.
    pub msg_version: u16,
    /// `hwc_msg_id`: filled by the channel.
    pub hwc_msg_id: u16,
    /// `msg_size`.
    pub msg_size: u32,
}

impl MsgHdr {
    fn put(&self, b: &mut [u8], off: usize) {
        put_le32(b, off, self.hdr_type);
        put_le32(b, off + 4, self.msg_type);
        put_le16(b, off + 8, self.msg_version);
        put_le16(b, off + 10, self.hwc_msg_id);
        put_le32(b, off + 12, self.msg_size);
    }

    fn get(b: &[u8], off: usize) -> Self {
        Self {
            hdr_type: le32(b, off),
            msg_type: le32(b, off + 4),
            msg_version: le16(b, off + 8),
            hwc_msg_id: le16(b, off + 10),
            msg_size: le32(b, off + 12),
        }
    }
}

/// Who sends a request: the `dev_id` and `activity_id` of its header.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Caller {
    /// `hdr.dev_id`.
    pub dev_id: DevId,
    /// `hdr.activity_id` (MANA requests: a counter the response echoes).
    pub activity_id: u32,
}

impl Caller {
    /// Function-level GDMA requests: zero `dev_id` and `activity_id`.
    pub const GDMA: Self = Self::dev(DevId::NONE);

    /// A GDMA request for device `dev_id` (`activity_id` 0).
    pub const fn dev(dev_id: DevId) -> Self {
        Self {
            dev_id,
            activity_id: 0,
        }
    }
}

/// `struct gdma_req_hdr` (40 bytes): `req` 0, `resp` 16, `dev_id` 32, `activity_id` 36.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReqHdr {
    /// The request's header.
    pub req: MsgHdr,
    /// The expected response's header.
    pub resp: MsgHdr,
    /// `dev_id`.
    pub dev_id: DevId,
    /// `activity_id`.
    pub activity_id: u32,
}

impl ReqHdr {
    /// `mana_gd_init_req_hdr(hdr, code, req_size, resp_size)` with `dev_id` and
    /// `activity_id` from `who`.
    pub fn new(code: u32, req_size: usize, resp_size: usize, who: Caller) -> Self {
        Self {
            req: MsgHdr {
                hdr_type: GDMA_STANDARD_HEADER_TYPE,
                msg_type: code,
                msg_version: GDMA_MESSAGE_V1,
                hwc_msg_id: 0,
                msg_size: req_size as u32,
            },
            resp: MsgHdr {
                hdr_type: GDMA_STANDARD_HEADER_TYPE,
                msg_type: code,
                msg_version: GDMA_MESSAGE_V1,
                hwc_msg_id: 0,
                msg_size: resp_size as u32,
            },
            dev_id: who.dev_id,
            activity_id: who.activity_id,
        }
    }

    /// Writes the 40 bytes at the start of `b` (which must hold them).
    pub fn put(&self, b: &mut [u8]) {
        self.req.put(b, 0);
        self.resp.put(b, 16);
        put_le32(b, 32, self.dev_id.as_u32());
        put_le32(b, 36, self.activity_id);
    }

    /// Reads the 40 bytes at the start of `b` (missing bytes read as 0).
    pub fn get(b: &[u8]) -> Self {
        Self {
            req: MsgHdr::get(b, 0),
            resp: MsgHdr::get(b, 16),
            dev_id: DevId::from_u32(le32(b, 32)),
            activity_id: le32(b, 36),
        }
    }
}

/// `struct gdma_resp_hdr` (32 bytes): `response` 0, `dev_id` 16, `activity_id` 20,
/// `status` 24, reserved 28.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RespHdr {
    /// The response's header.
    pub response: MsgHdr,
    /// `dev_id`.
    pub dev_id: DevId,
    /// `activity_id`.
    pub activity_id: u32,
    /// `status`: 0 on success.
    pub status: u32,
}

impl RespHdr {
    /// Reads the 32 bytes at the start of `b` (missing bytes read as 0).
    pub fn get(b: &[u8]) -> Self {
        Self {
            response: MsgHdr::get(b, 0),
            dev_id: DevId::from_u32(le32(b, 16)),
            activity_id: le32(b, 20),
            status: le32(b, 24),
        }
    }

    /// Writes the 32 bytes at the start of `b` (tests and fuzzers build responses with it).
    pub fn put(&self, b: &mut [u8]) {
        self.response.put(b, 0);
        put_le32(b, 16, self.dev_id.as_u32());
        put_le32(b, 20, self.activity_id);
        put_le32(b, 24, self.status);
        put_le32(b, 28, 0);
    }
}

/// A little-endian value of a request at its byte offset: a field of the body, or a
/// header field a request sets otherwise than [`ReqHdr::new`] (a message version).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Put {
    /// A byte.
    U8(usize, u8),
    /// A `u16`.
    U16(usize, u16),
    /// A `u32`.
    U32(usize, u32),
    /// A `u64`.
    U64(usize, u64),
}

impl Put {
    fn write(self, b: &mut [u8]) {
        match self {
            Put::U8(off, v) => put_u8(b, off, v),
            Put::U16(off, v) => put_le16(b, off, v),
            Put::U32(off, v) => put_le32(b, off, v),
            Put::U64(off, v) => put_le64(b, off, v),
        }
    }
}

#[inline]
fn put_u8(b: &mut [u8], off: usize, v: u8) {
    if let Some(x) = b.get_mut(off) {
        *x = v;
    }
}

/// Zeroes `len` bytes of `buf`, writes the header of a request of that length and then
/// each value of `body` in order; what a list of values does not say (strings, page and
/// handle lists) is the caller's.
fn start<'a>(
    buf: &'a mut [u8],
    len: usize,
    code: u32,
    resp_size: usize,
    who: Caller,
    body: &[Put],
) -> Result<&'a mut [u8], MsgError> {
    let b = buf.get_mut(..len).ok_or(MsgError::BufferTooSmall)?;
    b.fill(0);
    ReqHdr::new(code, len, resp_size, who).put(b);
    for p in body {
        p.write(b);
    }
    Ok(b)
}

/// A request of `len` bytes that [`start`] writes in whole; returns `len`.
fn request(
    buf: &mut [u8],
    len: usize,
    code: u32,
    resp_size: usize,
    who: Caller,
    body: &[Put],
) -> Result<usize, MsgError> {
    start(buf, len, code, resp_size, who, body)?;
    Ok(len)
}

/// A GDMA request with a page list (CREATE_DMA_REGION, DMA_REGION_ADD_PAGES): [`start`]
/// with `body` for `at` bytes, then the bus addresses of `pages` of the region at `base` as
/// a list of `u64` from byte `at`. Returns (request length, pages listed); no page to list
/// (none fit) is [`MsgError::BufferTooSmall`].
fn page_list_request(
    buf: &mut [u8],
    code: u32,
    resp_size: usize,
    body: &[Put],
    at: usize,
    base: u64,
    pages: core::ops::Range<u32>,
) -> Result<(usize, u32), MsgError> {
    let n = pages.len();
    if n == 0 {
        return Err(MsgError::BufferTooSmall);
    }
    let len = at + 8 * n;
    let b = start(buf, len, code, resp_size, Caller::GDMA, body)?;
    for (i, page) in pages.enumerate() {
        put_le64(
            b,
            at + 8 * i,
            base + u64::from(page) * u64::from(MANA_PAGE_SIZE),
        );
    }
    Ok((len, n as u32))
}

/// Checks a response to a request with `code` (see the module documentation) and returns
/// its header. `min` is the size of the response struct; `who` the request's caller when
/// `dev_id`/`activity_id` must be echoed (MANA requests).
pub fn check_resp(
    resp: &[u8],
    code: u32,
    min: usize,
    who: Option<Caller>,
) -> Result<RespHdr, MsgError> {
    if resp.len() < RESP_HDR_SIZE {
        return Err(MsgError::Short);
    }
    let h = RespHdr::get(resp);
    if h.status != 0 {
        return Err(MsgError::Status(h.status));
    }
    if let Some(w) = who {
        if h.dev_id != w.dev_id || h.activity_id != w.activity_id {
            return Err(MsgError::Mismatch);
        }
    }
    if h.response.msg_type != code {
        return Err(MsgError::WrongCode(h.response.msg_type));
    }
    if h.response.msg_version < GDMA_MESSAGE_V1 {
        return Err(MsgError::BadVersion(h.response.msg_version));
    }
    if (h.response.msg_size as usize) < min {
        return Err(MsgError::BadSize(h.response.msg_size));
    }
    if resp.len() < min {
        return Err(MsgError::Short);
    }
    Ok(h)
}

/// A response that is only the header (`struct gdma_general_resp` and the MANA responses
/// without a body).
pub fn parse_general(resp: &[u8], code: u32, who: Option<Caller>) -> Result<(), MsgError> {
    check_resp(resp, code, RESP_HDR_SIZE, who).map(|_| ())
}

/// `struct gdma_general_req`: a request that is only the header (QUERY_MAX_RESOURCES,
/// LIST_DEVICES, REGISTER_DEVICE, DEREGISTER_DEVICE), expecting `resp_size` bytes.
pub fn general(
    buf: &mut [u8],
    code: u32,
    resp_size: usize,
    who: Caller,
) -> Result<usize, MsgError> {
    request(buf, REQ_HDR_SIZE, code, resp_size, who, &[])
}
