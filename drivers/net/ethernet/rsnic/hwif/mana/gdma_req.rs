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

use crate::hwif::bytes::{le16, le32, le64, put_le16, put_le32, put_le64};

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
    pub const GDMA: Self = Self {
        dev_id: DevId::NONE,
        activity_id: 0,
    };
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

/// Zeroes `len` bytes of `buf` and writes the header of a request of that length; the
/// request body is the caller's.
fn start(
    buf: &mut [u8],
    len: usize,
    code: u32,
    resp_size: usize,
    who: Caller,
) -> Result<&mut [u8], MsgError> {
    let b = buf.get_mut(..len).ok_or(MsgError::BufferTooSmall)?;
    b.fill(0);
    ReqHdr::new(code, len, resp_size, who).put(b);
    Ok(b)
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
    start(buf, REQ_HDR_SIZE, code, resp_size, who)?;
    Ok(REQ_HDR_SIZE)
}

/// What the driver tells the device about the OS in VERIFY_VF_DRIVER_VERSION.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OsInfo<'a> {
    /// `os_ver_major` (`LINUX_VERSION_MAJOR`).
    pub major: u32,
    /// `os_ver_minor`.
    pub minor: u32,
    /// `os_ver_build` (the sublevel).
    pub build: u32,
    /// `os_ver_str1` (`utsname()->sysname`), cut to 127 bytes plus NUL like `strscpy`.
    pub sysname: &'a [u8],
    /// `os_ver_str2` (release).
    pub release: &'a [u8],
    /// `os_ver_str3` (version).
    pub version: &'a [u8],
}

/// `struct gdma_verify_ver_req` (640 bytes): protocol_ver_min 40, protocol_ver_max 48,
/// gd_drv_cap_flags1..4 56..88, drv_ver 88, os_type 96, reserved 100, os_ver_major 104,
/// minor 108, build 112, platform 116, reserved_2 120, os_ver_str1..4 128, 256, 384, 512.
pub fn verify_vf_version(buf: &mut [u8], os: &OsInfo<'_>) -> Result<usize, MsgError> {
    let b = start(
        buf,
        VERIFY_VER_REQ_SIZE,
        GDMA_VERIFY_VF_DRIVER_VERSION,
        VERIFY_VER_RESP_SIZE,
        Caller::GDMA,
    )?;
    put_le64(b, 40, GDMA_PROTOCOL_V1);
    put_le64(b, 48, GDMA_PROTOCOL_V1);
    put_le64(b, 56, RSNIC_DRV_CAP_FLAGS1);
    put_le32(b, 96, OS_TYPE_LINUX);
    put_le32(b, 104, os.major);
    put_le32(b, 108, os.minor);
    put_le32(b, 112, os.build);
    for (off, s) in [(128, os.sysname), (256, os.release), (384, os.version)] {
        let n = s.len().min(127);
        if let (Some(d), Some(src)) = (b.get_mut(off..off + n), s.get(..n)) {
            d.copy_from_slice(src);
        }
    }
    Ok(VERIFY_VER_REQ_SIZE)
}

/// `struct gdma_verify_ver_resp`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VerifyVerResp {
    /// `gdma_protocol_ver` (32).
    pub gdma_protocol_ver: u64,
    /// `pf_cap_flags1` (40).
    pub pf_cap_flags1: u64,
}

/// Parses the VERIFY_VF_DRIVER_VERSION response.
pub fn parse_verify_vf_version(resp: &[u8]) -> Result<VerifyVerResp, MsgError> {
    check_resp(
        resp,
        GDMA_VERIFY_VF_DRIVER_VERSION,
        VERIFY_VER_RESP_SIZE,
        None,
    )?;
    Ok(VerifyVerResp {
        gdma_protocol_ver: le64(resp, 32),
        pf_cap_flags1: le64(resp, 40),
    })
}

/// `struct gdma_query_max_resources_resp` (after the header an extra `status` at 32).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MaxResources {
    /// `max_sq` (36).
    pub max_sq: u32,
    /// `max_rq` (40).
    pub max_rq: u32,
    /// `max_cq` (44).
    pub max_cq: u32,
    /// `max_eq` (48).
    pub max_eq: u32,
    /// `max_db` (52).
    pub max_db: u32,
    /// `max_msix` (68).
    pub max_msix: u32,
}

/// Parses the QUERY_MAX_RESOURCES response.
pub fn parse_query_max_resources(resp: &[u8]) -> Result<MaxResources, MsgError> {
    check_resp(
        resp,
        GDMA_QUERY_MAX_RESOURCES,
        QUERY_MAX_RES_RESP_SIZE,
        None,
    )?;
    Ok(MaxResources {
        max_sq: le32(resp, 36),
        max_rq: le32(resp, 40),
        max_cq: le32(resp, 44),
        max_eq: le32(resp, 48),
        max_db: le32(resp, 52),
        max_msix: le32(resp, 68),
    })
}

/// What LIST_DEVICES found (`mana_gd_detect_devices`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeviceList {
    /// The MANA device, if listed.
    pub mana: Option<DevId>,
    /// Whether the HWC was listed.
    pub hwc: bool,
    /// Non-empty entries read.
    pub found: u32,
}

/// Parses the LIST_DEVICES response: `num_of_devs` at 32, `devs[64]` at 40. Like
/// `mana_gd_detect_devices` it walks at most 64 entries until `num_of_devs` non-zero ones
/// were seen, skipping holes; the first MANA device wins.
pub fn parse_list_devices(resp: &[u8]) -> Result<DeviceList, MsgError> {
    check_resp(resp, GDMA_LIST_DEVICES, LIST_DEVICES_RESP_SIZE, None)?;
    let num = le32(resp, 32);
    let mut l = DeviceList::default();
    for i in 0..GDMA_DEV_LIST_SIZE {
        if l.found >= num {
            break;
        }
        let d = le32(resp, 40 + 4 * i);
        if d == 0 {
            continue;
        }
        l.found += 1;
        let id = DevId::from_u32(d);
        match id.ty {
            GDMA_DEVICE_HWC => l.hwc = true,
            GDMA_DEVICE_MANA if l.mana.is_none() => l.mana = Some(id),
            _ => {}
        }
    }
    Ok(l)
}

/// `struct gdma_register_device_resp`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Registration {
    /// `pdid` (32).
    pub pdid: u32,
    /// `gpa_mkey` (36).
    pub gpa_mkey: u32,
    /// `db_id` (40): the doorbell page index.
    pub db_id: u32,
}

/// Parses the REGISTER_DEVICE response. `INVALID_PDID` / `INVALID_DOORBELL` (all ones) are
/// refused.
pub fn parse_register_device(resp: &[u8]) -> Result<Registration, MsgError> {
    check_resp(resp, GDMA_REGISTER_DEVICE, REGISTER_DEVICE_RESP_SIZE, None)?;
    let r = Registration {
        pdid: le32(resp, 32),
        gpa_mkey: le32(resp, 36),
        db_id: le32(resp, 40),
    };
    if r.pdid == u32::MAX || r.db_id == u32::MAX || r.gpa_mkey == u32::MAX {
        return Err(MsgError::BadValue);
    }
    Ok(r)
}

/// `struct gdma_generate_test_event_req`: `queue_index` at 40, with the EQ owner's `dev_id`.
pub fn generate_test_eqe(buf: &mut [u8], dev_id: DevId, eq_id: u32) -> Result<usize, MsgError> {
    let who = Caller {
        dev_id,
        activity_id: 0,
    };
    let b = start(
        buf,
        TEST_EQE_REQ_SIZE,
        GDMA_GENERATE_TEST_EQE,
        RESP_HDR_SIZE,
        who,
    )?;
    put_le32(b, 40, eq_id);
    Ok(TEST_EQE_REQ_SIZE)
}

/// An EQ to create with GDMA_CREATE_QUEUE (`mana_gd_create_hw_eq`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EqSpec {
    /// The device's `dev_id`.
    pub dev_id: DevId,
    /// `pdid` from REGISTER_DEVICE.
    pub pdid: u32,
    /// `doolbell_id` (sic): the doorbell page from REGISTER_DEVICE.
    pub doorbell: u32,
    /// The queue memory's DMA region handle.
    pub region: u64,
    /// Queue size in bytes.
    pub queue_size: u32,
    /// `log2_throttle_limit`.
    pub log2_throttle_limit: u32,
    /// `eq_pci_msix_index`.
    pub msix_index: u32,
}

/// `struct gdma_create_queue_req` for an EQ (96 bytes): type 40, reserved1 44, pdid 48,
/// doolbell_id 52, gdma_region 56, reserved2 64, queue_size 68, log2_throttle_limit 72,
/// eq_pci_msix_index 76, cq_mod_ctx_id 80, cq_parent_eq_id 84, four u8 flags 88..92,
/// reserved3 92.
pub fn create_eq(buf: &mut [u8], s: &EqSpec) -> Result<usize, MsgError> {
    let who = Caller {
        dev_id: s.dev_id,
        activity_id: 0,
    };
    let b = start(
        buf,
        CREATE_QUEUE_REQ_SIZE,
        GDMA_CREATE_QUEUE,
        CREATE_QUEUE_RESP_SIZE,
        who,
    )?;
    put_le32(b, 40, GDMA_EQ);
    put_le32(b, 48, s.pdid);
    put_le32(b, 52, s.doorbell);
    put_le64(b, 56, s.region);
    put_le32(b, 68, s.queue_size);
    put_le32(b, 72, s.log2_throttle_limit);
    put_le32(b, 76, s.msix_index);
    Ok(CREATE_QUEUE_REQ_SIZE)
}

/// Parses the CREATE_QUEUE response: `queue_index` at 32.
pub fn parse_create_queue(resp: &[u8]) -> Result<u32, MsgError> {
    check_resp(resp, GDMA_CREATE_QUEUE, CREATE_QUEUE_RESP_SIZE, None)?;
    let id = le32(resp, 32);
    if id == u32::MAX {
        return Err(MsgError::BadValue);
    }
    Ok(id)
}

/// `struct gdma_disable_queue_req` (52 bytes): type 40, queue_index 44,
/// alloc_res_id_on_creation 48 (= 1).
pub fn disable_queue(
    buf: &mut [u8],
    dev_id: DevId,
    qtype: u32,
    id: u32,
) -> Result<usize, MsgError> {
    let who = Caller {
        dev_id,
        activity_id: 0,
    };
    let b = start(
        buf,
        DISABLE_QUEUE_REQ_SIZE,
        GDMA_DISABLE_QUEUE,
        RESP_HDR_SIZE,
        who,
    )?;
    put_le32(b, 40, qtype);
    put_le32(b, 44, id);
    put_le32(b, 48, 1);
    Ok(DISABLE_QUEUE_REQ_SIZE)
}

/// Pages of a region that fit in a CREATE_DMA_REGION request of at most `max_req` bytes.
pub fn region_pages_in_create(max_req: usize) -> usize {
    max_req.saturating_sub(CREATE_DMA_REGION_REQ_SIZE) / 8
}

/// Pages that fit in an ADD_PAGES request of at most `max_req` bytes.
pub fn region_pages_in_add(max_req: usize) -> usize {
    max_req.saturating_sub(ADD_PAGES_REQ_SIZE) / 8
}

/// `struct gdma_create_dma_region_req` for `length` bytes of contiguous DMA memory at
/// `base` (4 KiB aligned, a power of two ≥ 4 KiB as `mana_gd_create_dma_region` requires):
/// length 40 (u64), offset_in_page 48, gdma_page_type 52 (4K = 0), page_count 56,
/// page_addr_list_len 60, page_addr_list 64. Lists as many pages as fit in `buf`; returns
/// (request length, pages listed). The rest go in [`dma_region_add_pages`] requests.
pub fn create_dma_region(buf: &mut [u8], base: u64, length: u32) -> Result<(usize, u32), MsgError> {
    if length < MANA_PAGE_SIZE || !length.is_power_of_two() || base % u64::from(MANA_PAGE_SIZE) != 0
    {
        return Err(MsgError::BadArgument);
    }
    let pages = length / MANA_PAGE_SIZE;
    let fit = region_pages_in_create(buf.len()).min(pages as usize);
    if fit == 0 {
        return Err(MsgError::BufferTooSmall);
    }
    let len = CREATE_DMA_REGION_REQ_SIZE + 8 * fit;
    let b = start(
        buf,
        len,
        GDMA_CREATE_DMA_REGION,
        CREATE_DMA_REGION_RESP_SIZE,
        Caller::GDMA,
    )?;
    put_le64(b, 40, u64::from(length));
    put_le32(b, 56, pages);
    put_le32(b, 60, fit as u32);
    for i in 0..fit {
        put_le64(
            b,
            CREATE_DMA_REGION_REQ_SIZE + 8 * i,
            base + (i as u64) * u64::from(MANA_PAGE_SIZE),
        );
    }
    Ok((len, fit as u32))
}

/// Parses the CREATE_DMA_REGION response: `dma_region_handle` at 32 (0 is refused, as
/// upstream does).
pub fn parse_create_dma_region(resp: &[u8]) -> Result<u64, MsgError> {
    check_resp(
        resp,
        GDMA_CREATE_DMA_REGION,
        CREATE_DMA_REGION_RESP_SIZE,
        None,
    )?;
    match le64(resp, 32) {
        GDMA_INVALID_DMA_REGION => Err(MsgError::BadValue),
        h => Ok(h),
    }
}

/// `struct gdma_dma_region_add_pages_req`: dma_region_handle 40, page_addr_list_len 48,
/// reserved3 52, page_addr_list 56. Lists pages `first..` of the region at `base`
/// (`pages` in all) as far as they fit; returns (request length, pages listed).
pub fn dma_region_add_pages(
    buf: &mut [u8],
    handle: u64,
    base: u64,
    first: u32,
    pages: u32,
) -> Result<(usize, u32), MsgError> {
    if first >= pages || base % u64::from(MANA_PAGE_SIZE) != 0 {
        return Err(MsgError::BadArgument);
    }
    let fit = region_pages_in_add(buf.len()).min((pages - first) as usize);
    if fit == 0 {
        return Err(MsgError::BufferTooSmall);
    }
    let len = ADD_PAGES_REQ_SIZE + 8 * fit;
    let b = start(
        buf,
        len,
        GDMA_DMA_REGION_ADD_PAGES,
        RESP_HDR_SIZE,
        Caller::GDMA,
    )?;
    put_le64(b, 40, handle);
    put_le32(b, 48, fit as u32);
    for i in 0..fit {
        let page = u64::from(first) + i as u64;
        put_le64(
            b,
            ADD_PAGES_REQ_SIZE + 8 * i,
            base + page * u64::from(MANA_PAGE_SIZE),
        );
    }
    Ok((len, fit as u32))
}

/// `struct gdma_destroy_dma_region_req`: dma_region_handle at 40.
pub fn destroy_dma_region(buf: &mut [u8], handle: u64) -> Result<usize, MsgError> {
    let b = start(
        buf,
        DESTROY_DMA_REGION_REQ_SIZE,
        GDMA_DESTROY_DMA_REGION,
        RESP_HDR_SIZE,
        Caller::GDMA,
    )?;
    put_le64(b, 40, handle);
    Ok(DESTROY_DMA_REGION_REQ_SIZE)
}

/// `struct mana_query_device_cfg_req` (88 bytes): mn_drv_cap_flags1..4 40..72 (0),
/// proto_major_ver 72, proto_minor_ver 76, proto_micro_ver 80, reserved 84. Asks for a
/// version-2 response.
pub fn query_dev_config(buf: &mut [u8], who: Caller) -> Result<usize, MsgError> {
    let b = start(
        buf,
        QUERY_DEV_CFG_REQ_SIZE,
        MANA_QUERY_DEV_CONFIG,
        QUERY_DEV_CFG_RESP_SIZE,
        who,
    )?;
    put_le16(b, 16 + 8, GDMA_MESSAGE_V2);
    put_le32(b, 72, MANA_PROTO_VERSION.0);
    put_le32(b, 76, MANA_PROTO_VERSION.1);
    put_le32(b, 80, MANA_PROTO_VERSION.2);
    Ok(QUERY_DEV_CFG_REQ_SIZE)
}

/// `struct mana_query_device_cfg_resp`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DevConfig {
    /// `pf_cap_flags1` (32).
    pub pf_cap_flags1: u64,
    /// `max_num_vports` (64, u16).
    pub max_num_vports: u16,
    /// `max_num_eqs` (68).
    pub max_num_eqs: u32,
    /// `adapter_mtu` (72, u16; version 2) or `ETH_FRAME_LEN` for a version-1 response.
    pub adapter_mtu: u16,
    /// rsnic's own requests the device implements (`reserved` at 66, see
    /// [`DEV_CFG_RSNIC_CAPS`]; none on a real device).
    pub rsnic_caps: RsnicCaps,
}

/// Parses the QUERY_DEV_CONFIG response (`mana_query_device_cfg`): a version-1 response
/// needs 72 bytes, a version-2 one 80; no vport is refused.
pub fn parse_query_dev_config(resp: &[u8], who: Caller) -> Result<DevConfig, MsgError> {
    let h = check_resp(
        resp,
        MANA_QUERY_DEV_CONFIG,
        QUERY_DEV_CFG_RESP_V1_SIZE,
        Some(who),
    )?;
    let v2 = h.response.msg_version >= GDMA_MESSAGE_V2;
    if v2
        && (resp.len() < QUERY_DEV_CFG_RESP_SIZE
            || (h.response.msg_size as usize) < QUERY_DEV_CFG_RESP_SIZE)
    {
        return Err(MsgError::Short);
    }
    let c = DevConfig {
        pf_cap_flags1: le64(resp, 32),
        max_num_vports: le16(resp, 64),
        max_num_eqs: le32(resp, 68),
        adapter_mtu: if v2 { le16(resp, 72) } else { ETH_FRAME_LEN },
        rsnic_caps: RsnicCaps::from_word(le16(resp, DEV_CFG_RSNIC_CAPS)),
    };
    if c.max_num_vports == 0 {
        return Err(MsgError::BadValue);
    }
    Ok(c)
}

/// `struct mana_query_vport_cfg_req`: vport_index at 40.
pub fn query_vport_config(
    buf: &mut [u8],
    who: Caller,
    vport_index: u32,
) -> Result<usize, MsgError> {
    let b = start(
        buf,
        QUERY_VPORT_CFG_REQ_SIZE,
        MANA_QUERY_VPORT_CONFIG,
        QUERY_VPORT_CFG_RESP_SIZE,
        who,
    )?;
    put_le32(b, 40, vport_index);
    Ok(QUERY_VPORT_CFG_REQ_SIZE)
}

/// `struct mana_query_vport_cfg_resp`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VportConfig {
    /// `max_num_sq` (32).
    pub max_num_sq: u32,
    /// `max_num_rq` (36).
    pub max_num_rq: u32,
    /// `num_indirection_ent` (40) after `mana_query_vport_cfg`'s rule: a power of two in
    /// 1..=512, else the default 64.
    pub indir_table_size: u32,
    /// `mac_addr` (48..54).
    pub mac: [u8; 6],
    /// `vport` (56): the vport handle.
    pub vport: u64,
}

/// Parses the QUERY_VPORT_CONFIG response; no SQ or no RQ is refused.
pub fn parse_query_vport_config(resp: &[u8], who: Caller) -> Result<VportConfig, MsgError> {
    check_resp(
        resp,
        MANA_QUERY_VPORT_CONFIG,
        QUERY_VPORT_CFG_RESP_SIZE,
        Some(who),
    )?;
    let n = le32(resp, 40);
    let mut mac = [0u8; 6];
    if let Some(s) = resp.get(48..54) {
        mac.copy_from_slice(s);
    }
    let c = VportConfig {
        max_num_sq: le32(resp, 32),
        max_num_rq: le32(resp, 36),
        indir_table_size: if n > 0 && n <= MANA_INDIRECT_TABLE_MAX_SIZE && n.is_power_of_two() {
            n
        } else {
            MANA_INDIRECT_TABLE_DEF_SIZE
        },
        mac,
        vport: le64(resp, 56),
    };
    if c.max_num_sq == 0 || c.max_num_rq == 0 {
        return Err(MsgError::BadValue);
    }
    Ok(c)
}

/// `struct mana_config_vport_req`: vport 40, pdid 48, doorbell_pageid 52.
pub fn config_vport_tx(
    buf: &mut [u8],
    who: Caller,
    vport: u64,
    pdid: u32,
    doorbell_page: u32,
) -> Result<usize, MsgError> {
    let b = start(
        buf,
        CONFIG_VPORT_TX_REQ_SIZE,
        MANA_CONFIG_VPORT_TX,
        CONFIG_VPORT_TX_RESP_SIZE,
        who,
    )?;
    put_le64(b, 40, vport);
    put_le32(b, 48, pdid);
    put_le32(b, 52, doorbell_page);
    Ok(CONFIG_VPORT_TX_REQ_SIZE)
}

/// `struct mana_config_vport_resp`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VportTx {
    /// `tx_vport_offset` (32, u16).
    pub tx_vport_offset: u16,
    /// `short_form_allowed` (34).
    pub short_form_allowed: bool,
}

/// Parses the CONFIG_VPORT_TX response.
pub fn parse_config_vport_tx(resp: &[u8], who: Caller) -> Result<VportTx, MsgError> {
    check_resp(
        resp,
        MANA_CONFIG_VPORT_TX,
        CONFIG_VPORT_TX_RESP_SIZE,
        Some(who),
    )?;
    Ok(VportTx {
        tx_vport_offset: le16(resp, 32),
        short_form_allowed: resp.get(34).is_some_and(|&v| v != 0),
    })
}

/// A work queue object to create (`mana_create_wq_obj` with its `mana_obj_spec`s).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WqObjSpec {
    /// The vport handle.
    pub vport: u64,
    /// [`GDMA_SQ`] or [`GDMA_RQ`].
    pub wq_type: u32,
    /// The WQ memory's DMA region.
    pub wq_region: u64,
    /// The CQ memory's DMA region.
    pub cq_region: u64,
    /// WQ size in bytes.
    pub wq_size: u32,
    /// CQ size in bytes.
    pub cq_size: u32,
    /// `cq_moderation_ctx_id` (0).
    pub cq_moderation_ctx_id: u32,
    /// `cq_parent_qid`: the EQ the CQ reports to.
    pub cq_parent_eq: u32,
}

/// `struct mana_create_wqobj_req` (88 bytes): vport 40, wq_type 48, reserved 52,
/// wq_gdma_region 56, cq_gdma_region 64, wq_size 72, cq_size 76, cq_moderation_ctx_id 80,
/// cq_parent_qid 84.
pub fn create_wq_obj(buf: &mut [u8], who: Caller, s: &WqObjSpec) -> Result<usize, MsgError> {
    if s.wq_type != GDMA_SQ && s.wq_type != GDMA_RQ {
        return Err(MsgError::BadArgument);
    }
    let b = start(
        buf,
        CREATE_WQ_OBJ_REQ_SIZE,
        MANA_CREATE_WQ_OBJ,
        CREATE_WQ_OBJ_RESP_SIZE,
        who,
    )?;
    put_le64(b, 40, s.vport);
    put_le32(b, 48, s.wq_type);
    put_le64(b, 56, s.wq_region);
    put_le64(b, 64, s.cq_region);
    put_le32(b, 72, s.wq_size);
    put_le32(b, 76, s.cq_size);
    put_le32(b, 80, s.cq_moderation_ctx_id);
    put_le32(b, 84, s.cq_parent_eq);
    Ok(CREATE_WQ_OBJ_REQ_SIZE)
}

/// `struct mana_create_wqobj_resp`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WqObj {
    /// `wq_id` (32): the SQ or RQ id for doorbells and CQEs.
    pub wq_id: u32,
    /// `cq_id` (36).
    pub cq_id: u32,
    /// `wq_obj` (40): the handle.
    pub handle: u64,
}

/// Parses the CREATE_WQ_OBJ response; `INVALID_MANA_HANDLE` is refused.
pub fn parse_create_wq_obj(resp: &[u8], who: Caller) -> Result<WqObj, MsgError> {
    check_resp(resp, MANA_CREATE_WQ_OBJ, CREATE_WQ_OBJ_RESP_SIZE, Some(who))?;
    let o = WqObj {
        wq_id: le32(resp, 32),
        cq_id: le32(resp, 36),
        handle: le64(resp, 40),
    };
    if o.handle == INVALID_MANA_HANDLE {
        return Err(MsgError::BadValue);
    }
    Ok(o)
}

/// `struct mana_destroy_wqobj_req`: wq_type 40, reserved 44, wq_obj_handle 48.
pub fn destroy_wq_obj(
    buf: &mut [u8],
    who: Caller,
    wq_type: u32,
    handle: u64,
) -> Result<usize, MsgError> {
    let b = start(
        buf,
        DESTROY_WQ_OBJ_REQ_SIZE,
        MANA_DESTROY_WQ_OBJ,
        RESP_HDR_SIZE,
        who,
    )?;
    put_le32(b, 40, wq_type);
    put_le64(b, 48, handle);
    Ok(DESTROY_WQ_OBJ_REQ_SIZE)
}

/// `struct mana_fence_rq_req`: wq_obj_handle at 40.
pub fn fence_rq(buf: &mut [u8], who: Caller, handle: u64) -> Result<usize, MsgError> {
    let b = start(buf, FENCE_RQ_REQ_SIZE, MANA_FENCE_RQ, RESP_HDR_SIZE, who)?;
    put_le64(b, 40, handle);
    Ok(FENCE_RQ_REQ_SIZE)
}

/// [`RSNIC_SET_LOOPBACK`]'s request: vport 40, enable 48 (u32: 0 or 1), reserved to 56;
/// the response is the header alone.
pub fn set_loopback(buf: &mut [u8], who: Caller, vport: u64, on: bool) -> Result<usize, MsgError> {
    const SET_LOOPBACK_REQ_SIZE: usize = 56;
    let b = start(
        buf,
        SET_LOOPBACK_REQ_SIZE,
        RSNIC_SET_LOOPBACK,
        RESP_HDR_SIZE,
        who,
    )?;
    put_le64(b, 40, vport);
    put_le32(b, 48, u32::from(on));
    Ok(SET_LOOPBACK_REQ_SIZE)
}

/// [`RSNIC_SET_PAUSE`]'s request: vport 40, rx 48 (u32: honour received PAUSE frames, 0 or
/// 1), tx 52 (u32: send them, 0 or 1); the response is the header alone.
pub fn set_pause(
    buf: &mut [u8],
    who: Caller,
    vport: u64,
    rx: bool,
    tx: bool,
) -> Result<usize, MsgError> {
    const SET_PAUSE_REQ_SIZE: usize = 56;
    let b = start(buf, SET_PAUSE_REQ_SIZE, RSNIC_SET_PAUSE, RESP_HDR_SIZE, who)?;
    put_le64(b, 40, vport);
    put_le32(b, 48, u32::from(rx));
    put_le32(b, 52, u32::from(tx));
    Ok(SET_PAUSE_REQ_SIZE)
}

/// Bytes of [`RSNIC_QUERY_PAUSE`]'s response.
pub const QUERY_PAUSE_RESP_SIZE: usize = 56;

/// [`RSNIC_QUERY_PAUSE`]'s request: vport 40, reserved to 48.
pub fn query_pause(buf: &mut [u8], who: Caller, vport: u64) -> Result<usize, MsgError> {
    const QUERY_PAUSE_REQ_SIZE: usize = 48;
    let b = start(
        buf,
        QUERY_PAUSE_REQ_SIZE,
        RSNIC_QUERY_PAUSE,
        QUERY_PAUSE_RESP_SIZE,
        who,
    )?;
    put_le64(b, 40, vport);
    Ok(QUERY_PAUSE_REQ_SIZE)
}

/// A vport's flow control as [`RSNIC_QUERY_PAUSE`] answers it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PauseState {
    /// `rx` (32, u32): received PAUSE frames are honoured.
    pub rx: bool,
    /// `tx` (36, u32): PAUSE frames are sent when the vport's receive side is short.
    pub tx: bool,
    /// `tx_pause_frames` (40, u64): PAUSE frames the vport sent.
    pub tx_pause_frames: u64,
    /// `rx_pause_frames` (48, u64): PAUSE frames the vport received.
    pub rx_pause_frames: u64,
}

/// Parses the [`RSNIC_QUERY_PAUSE`] response; a flag other than 0 or 1 is
/// [`MsgError::BadValue`].
pub fn parse_query_pause(resp: &[u8], who: Caller) -> Result<PauseState, MsgError> {
    check_resp(resp, RSNIC_QUERY_PAUSE, QUERY_PAUSE_RESP_SIZE, Some(who))?;
    let flag = |v| match v {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(MsgError::BadValue),
    };
    Ok(PauseState {
        rx: flag(le32(resp, 32))?,
        tx: flag(le32(resp, 36))?,
        tx_pause_frames: le64(resp, 40),
        rx_pause_frames: le64(resp, 48),
    })
}

/// The RX steering of a vport (`mana_cfg_vport_steering`'s arguments and port state).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxSteer<'a> {
    /// The vport handle.
    pub vport: u64,
    /// `rx_enable`: [`TRI_STATE_TRUE`], [`TRI_STATE_FALSE`] or [`TRI_STATE_UNKNOWN`].
    pub rx_enable: u32,
    /// `rss_enable` (same values).
    pub rss_enable: u32,
    /// `update_default_rxobj`.
    pub update_default_rxobj: bool,
    /// `update_hashkey`.
    pub update_hashkey: bool,
    /// `update_indir_tab`.
    pub update_indir_tab: bool,
    /// `default_rxobj`.
    pub default_rxobj: u64,
    /// `hashkey` (copied only with `update_hashkey`).
    pub hashkey: &'a [u8; MANA_HASH_KEY_SIZE],
    /// `indir_tab`: RQ object handles; its length is `num_indir_entries` (the vport's
    /// table size); copied only with `update_indir_tab`.
    pub indir_tab: &'a [u64],
}

/// `struct mana_cfg_rx_steer_req_v2` (120 bytes + 8 per entry, version-2 request): vport 40,
/// num_indir_entries 48 (u16), indir_tab_offset 50 (u16, = 120), rx_enable 52, rss_enable
/// 56, update_default_rxobj 60, update_hashkey 61, update_indir_tab 62, reserved 63,
/// default_rxobj 64, hashkey 72..112, cqe_coalescing_enable 112 (0), reserved2 113..120,
/// indir_tab 120.
pub fn config_vport_rx(buf: &mut [u8], who: Caller, s: &RxSteer<'_>) -> Result<usize, MsgError> {
    let n = s.indir_tab.len();
    if n == 0 || n > MANA_INDIRECT_TABLE_MAX_SIZE as usize {
        return Err(MsgError::BadArgument);
    }
    let len = CONFIG_VPORT_RX_REQ_SIZE + 8 * n;
    let b = start(buf, len, MANA_CONFIG_VPORT_RX, RESP_HDR_SIZE, who)?;
    put_le16(b, 8, GDMA_MESSAGE_V2);
    put_le64(b, 40, s.vport);
    put_le16(b, 48, n as u16);
    put_le16(b, 50, CONFIG_VPORT_RX_REQ_SIZE as u16);
    put_le32(b, 52, s.rx_enable);
    put_le32(b, 56, s.rss_enable);
    put_u8(b, 60, u8::from(s.update_default_rxobj));
    put_u8(b, 61, u8::from(s.update_hashkey));
    put_u8(b, 62, u8::from(s.update_indir_tab));
    put_le64(b, 64, s.default_rxobj);
    if s.update_hashkey {
        if let Some(d) = b.get_mut(72..72 + MANA_HASH_KEY_SIZE) {
            d.copy_from_slice(s.hashkey);
        }
    }
    if s.update_indir_tab {
        for (i, &h) in s.indir_tab.iter().enumerate() {
            put_le64(b, CONFIG_VPORT_RX_REQ_SIZE + 8 * i, h);
        }
    }
    Ok(len)
}

#[inline]
fn put_u8(b: &mut [u8], off: usize, v: u8) {
    if let Some(x) = b.get_mut(off) {
        *x = v;
    }
}

/// `STATISTICS_FLAGS_*` of `mana_query_gf_stats`: every counter of the response
/// (bits 0..26).
pub const GF_STAT_ALL: u64 = (1 << 27) - 1;

/// `struct mana_query_gf_stat_req`: req_stats at 40; asks for a version-2 response.
pub fn query_gf_stat(buf: &mut [u8], who: Caller, req_stats: u64) -> Result<usize, MsgError> {
    let b = start(
        buf,
        QUERY_GF_STAT_REQ_SIZE,
        MANA_QUERY_GF_STAT,
        QUERY_GF_STAT_RESP_SIZE,
        who,
    )?;
    put_le16(b, 16 + 8, GDMA_MESSAGE_V2);
    put_le64(b, 40, req_stats);
    Ok(QUERY_GF_STAT_REQ_SIZE)
}

/// `struct mana_query_gf_stat_resp`: the function's counters (the `hc_*` of ethtool).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GfStats {
    /// `reported_stats` (32): which counters the device filled.
    pub reported: u64,
    /// `rx_discards_nowqe` (40) → `hc_rx_discards_no_wqe`.
    pub rx_discards_no_wqe: u64,
    /// `rx_err_vport_disabled` (48).
    pub rx_err_vport_disabled: u64,
    /// `hc_rx_bytes` (56).
    pub hc_rx_bytes: u64,
    /// `hc_rx_ucast_pkts` (64).
    pub hc_rx_ucast_pkts: u64,
    /// `hc_rx_ucast_bytes` (72).
    pub hc_rx_ucast_bytes: u64,
    /// `hc_rx_bcast_pkts` (80).
    pub hc_rx_bcast_pkts: u64,
    /// `hc_rx_bcast_bytes` (88).
    pub hc_rx_bcast_bytes: u64,
    /// `hc_rx_mcast_pkts` (96).
    pub hc_rx_mcast_pkts: u64,
    /// `hc_rx_mcast_bytes` (104).
    pub hc_rx_mcast_bytes: u64,
    /// `tx_err_gf_disabled` (112).
    pub tx_err_gf_disabled: u64,
    /// `tx_err_vport_disabled` (120).
    pub tx_err_vport_disabled: u64,
    /// `tx_err_inval_vport_offset_pkt` (128).
    pub tx_err_inval_vport_offset_pkt: u64,
    /// `tx_err_vlan_enforcement` (136).
    pub tx_err_vlan_enforcement: u64,
    /// `tx_err_ethtype_enforcement` (144).
    pub tx_err_ethtype_enforcement: u64,
    /// `tx_err_SA_enforcement` (152).
    pub tx_err_sa_enforcement: u64,
    /// `tx_err_SQPDID_enforcement` (160).
    pub tx_err_sqpdid_enforcement: u64,
    /// `tx_err_CQPDID_enforcement` (168).
    pub tx_err_cqpdid_enforcement: u64,
    /// `tx_err_mtu_violation` (176).
    pub tx_err_mtu_violation: u64,
    /// `tx_err_inval_oob` (184).
    pub tx_err_inval_oob: u64,
    /// `hc_tx_bytes` (192).
    pub hc_tx_bytes: u64,
    /// `hc_tx_ucast_pkts` (200).
    pub hc_tx_ucast_pkts: u64,
    /// `hc_tx_ucast_bytes` (208).
    pub hc_tx_ucast_bytes: u64,
    /// `hc_tx_bcast_pkts` (216).
    pub hc_tx_bcast_pkts: u64,
    /// `hc_tx_bcast_bytes` (224).
    pub hc_tx_bcast_bytes: u64,
    /// `hc_tx_mcast_pkts` (232).
    pub hc_tx_mcast_pkts: u64,
    /// `hc_tx_mcast_bytes` (240).
    pub hc_tx_mcast_bytes: u64,
    /// `tx_err_gdma` (248).
    pub tx_err_gdma: u64,
}

/// Parses the QUERY_GF_STAT response.
pub fn parse_query_gf_stat(resp: &[u8], who: Caller) -> Result<GfStats, MsgError> {
    check_resp(resp, MANA_QUERY_GF_STAT, QUERY_GF_STAT_RESP_SIZE, Some(who))?;
    let g = |i: usize| le64(resp, 40 + 8 * i);
    Ok(GfStats {
        reported: le64(resp, 32),
        rx_discards_no_wqe: g(0),
        rx_err_vport_disabled: g(1),
        hc_rx_bytes: g(2),
        hc_rx_ucast_pkts: g(3),
        hc_rx_ucast_bytes: g(4),
        hc_rx_bcast_pkts: g(5),
        hc_rx_bcast_bytes: g(6),
        hc_rx_mcast_pkts: g(7),
        hc_rx_mcast_bytes: g(8),
        tx_err_gf_disabled: g(9),
        tx_err_vport_disabled: g(10),
        tx_err_inval_vport_offset_pkt: g(11),
        tx_err_vlan_enforcement: g(12),
        tx_err_ethtype_enforcement: g(13),
        tx_err_sa_enforcement: g(14),
        tx_err_sqpdid_enforcement: g(15),
        tx_err_cqpdid_enforcement: g(16),
        tx_err_mtu_violation: g(17),
        tx_err_inval_oob: g(18),
        hc_tx_bytes: g(19),
        hc_tx_ucast_pkts: g(20),
        hc_tx_ucast_bytes: g(21),
        hc_tx_bcast_pkts: g(22),
        hc_tx_bcast_bytes: g(23),
        hc_tx_mcast_pkts: g(24),
        hc_tx_mcast_bytes: g(25),
        tx_err_gdma: g(26),
    })
}
