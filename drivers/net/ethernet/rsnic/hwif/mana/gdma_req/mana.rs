// SPDX-License-Identifier: GPL-2.0

//! MANA requests (codes 0x20001..), driver side: device and vport configuration, WQ objects
//! and RQ fences, RSS steering, the GF statistics, and rsnic's own loopback and pause
//! requests (6.12 `include/net/mana/mana.h`; upstream senders in `mana_en.c`). The header
//! framing and response checks are the parent module's.

use super::{
    check_resp, request, start, Caller, MsgError, Put, RsnicCaps, CONFIG_VPORT_RX_REQ_SIZE,
    CONFIG_VPORT_TX_REQ_SIZE, CONFIG_VPORT_TX_RESP_SIZE, CREATE_WQ_OBJ_REQ_SIZE,
    CREATE_WQ_OBJ_RESP_SIZE, DESTROY_WQ_OBJ_REQ_SIZE, DEV_CFG_RSNIC_CAPS, ETH_FRAME_LEN,
    FENCE_RQ_REQ_SIZE, GDMA_MESSAGE_V2, GDMA_RQ, GDMA_SQ, INVALID_MANA_HANDLE,
    MANA_CONFIG_VPORT_RX, MANA_CONFIG_VPORT_TX, MANA_CREATE_WQ_OBJ, MANA_DESTROY_WQ_OBJ,
    MANA_FENCE_RQ, MANA_HASH_KEY_SIZE, MANA_INDIRECT_TABLE_DEF_SIZE, MANA_INDIRECT_TABLE_MAX_SIZE,
    MANA_PROTO_VERSION, MANA_QUERY_DEV_CONFIG, MANA_QUERY_GF_STAT, MANA_QUERY_VPORT_CONFIG,
    QUERY_DEV_CFG_REQ_SIZE, QUERY_DEV_CFG_RESP_SIZE, QUERY_DEV_CFG_RESP_V1_SIZE,
    QUERY_GF_STAT_REQ_SIZE, QUERY_GF_STAT_RESP_SIZE, QUERY_VPORT_CFG_REQ_SIZE,
    QUERY_VPORT_CFG_RESP_SIZE, RESP_HDR_SIZE, RSNIC_QUERY_PAUSE, RSNIC_SET_LOOPBACK,
    RSNIC_SET_PAUSE,
};
use crate::hwif::bytes::{le16, le32, le64, put_le64};

/// `struct mana_query_device_cfg_req` (88 bytes): mn_drv_cap_flags1..4 40..72 (0),
/// proto_major_ver 72, proto_minor_ver 76, proto_micro_ver 80, reserved 84. Asks for a
/// version-2 response.
pub fn query_dev_config(buf: &mut [u8], who: Caller) -> Result<usize, MsgError> {
    request(
        buf,
        QUERY_DEV_CFG_REQ_SIZE,
        MANA_QUERY_DEV_CONFIG,
        QUERY_DEV_CFG_RESP_SIZE,
        who,
        &[
            Put::U16(16 + 8, GDMA_MESSAGE_V2),
            Put::U32(72, MANA_PROTO_VERSION.0),
            Put::U32(76, MANA_PROTO_VERSION.1),
            Put::U32(80, MANA_PROTO_VERSION.2),
        ],
    )
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
    request(
        buf,
        QUERY_VPORT_CFG_REQ_SIZE,
        MANA_QUERY_VPORT_CONFIG,
        QUERY_VPORT_CFG_RESP_SIZE,
        who,
        &[Put::U32(40, vport_index)],
    )
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
    request(
        buf,
        CONFIG_VPORT_TX_REQ_SIZE,
        MANA_CONFIG_VPORT_TX,
        CONFIG_VPORT_TX_RESP_SIZE,
        who,
        &[
            Put::U64(40, vport),
            Put::U32(48, pdid),
            Put::U32(52, doorbell_page),
        ],
    )
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
    request(
        buf,
        CREATE_WQ_OBJ_REQ_SIZE,
        MANA_CREATE_WQ_OBJ,
        CREATE_WQ_OBJ_RESP_SIZE,
        who,
        &[
            Put::U64(40, s.vport),
            Put::U32(48, s.wq_type),
            Put::U64(56, s.wq_region),
            Put::U64(64, s.cq_region),
            Put::U32(72, s.wq_size),
            Put::U32(76, s.cq_size),
            Put::U32(80, s.cq_moderation_ctx_id),
            Put::U32(84, s.cq_parent_eq),
        ],
    )
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
    request(
        buf,
        DESTROY_WQ_OBJ_REQ_SIZE,
        MANA_DESTROY_WQ_OBJ,
        RESP_HDR_SIZE,
        who,
        &[Put::U32(40, wq_type), Put::U64(48, handle)],
    )
}

/// `struct mana_fence_rq_req`: wq_obj_handle at 40.
pub fn fence_rq(buf: &mut [u8], who: Caller, handle: u64) -> Result<usize, MsgError> {
    let body = [Put::U64(40, handle)];
    request(
        buf,
        FENCE_RQ_REQ_SIZE,
        MANA_FENCE_RQ,
        RESP_HDR_SIZE,
        who,
        &body,
    )
}

/// [`RSNIC_SET_LOOPBACK`]'s request: vport 40, enable 48 (u32: 0 or 1), reserved to 56;
/// the response is the header alone.
pub fn set_loopback(buf: &mut [u8], who: Caller, vport: u64, on: bool) -> Result<usize, MsgError> {
    const SET_LOOPBACK_REQ_SIZE: usize = 56;
    request(
        buf,
        SET_LOOPBACK_REQ_SIZE,
        RSNIC_SET_LOOPBACK,
        RESP_HDR_SIZE,
        who,
        &[Put::U64(40, vport), Put::U32(48, u32::from(on))],
    )
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
    let body = [
        Put::U64(40, vport),
        Put::U32(48, u32::from(rx)),
        Put::U32(52, u32::from(tx)),
    ];
    request(
        buf,
        SET_PAUSE_REQ_SIZE,
        RSNIC_SET_PAUSE,
        RESP_HDR_SIZE,
        who,
        &body,
    )
}

/// Bytes of [`RSNIC_QUERY_PAUSE`]'s response.
pub const QUERY_PAUSE_RESP_SIZE: usize = 56;

/// [`RSNIC_QUERY_PAUSE`]'s request: vport 40, reserved to 48.
pub fn query_pause(buf: &mut [u8], who: Caller, vport: u64) -> Result<usize, MsgError> {
    const QUERY_PAUSE_REQ_SIZE: usize = 48;
    request(
        buf,
        QUERY_PAUSE_REQ_SIZE,
        RSNIC_QUERY_PAUSE,
        QUERY_PAUSE_RESP_SIZE,
        who,
        &[Put::U64(40, vport)],
    )
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
    /// `rx_enable`: [`TRI_STATE_TRUE`](super::TRI_STATE_TRUE),
    /// [`TRI_STATE_FALSE`](super::TRI_STATE_FALSE) or
    /// [`TRI_STATE_UNKNOWN`](super::TRI_STATE_UNKNOWN).
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
    let body = [
        Put::U16(8, GDMA_MESSAGE_V2),
        Put::U64(40, s.vport),
        Put::U16(48, n as u16),
        Put::U16(50, CONFIG_VPORT_RX_REQ_SIZE as u16),
        Put::U32(52, s.rx_enable),
        Put::U32(56, s.rss_enable),
        Put::U8(60, u8::from(s.update_default_rxobj)),
        Put::U8(61, u8::from(s.update_hashkey)),
        Put::U8(62, u8::from(s.update_indir_tab)),
        Put::U64(64, s.default_rxobj),
    ];
    let b = start(buf, len, MANA_CONFIG_VPORT_RX, RESP_HDR_SIZE, who, &body)?;
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

/// `STATISTICS_FLAGS_*` of `mana_query_gf_stats`: every counter of the response
/// (bits 0..26).
pub const GF_STAT_ALL: u64 = (1 << 27) - 1;

/// `struct mana_query_gf_stat_req`: req_stats at 40; asks for a version-2 response.
pub fn query_gf_stat(buf: &mut [u8], who: Caller, req_stats: u64) -> Result<usize, MsgError> {
    request(
        buf,
        QUERY_GF_STAT_REQ_SIZE,
        MANA_QUERY_GF_STAT,
        QUERY_GF_STAT_RESP_SIZE,
        who,
        &[Put::U16(16 + 8, GDMA_MESSAGE_V2), Put::U64(40, req_stats)],
    )
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
