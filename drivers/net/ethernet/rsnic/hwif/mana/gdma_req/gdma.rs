// SPDX-License-Identifier: GPL-2.0

//! GDMA requests (codes 1..27), driver side: VERIFY_VF_DRIVER_VERSION, the resource, device
//! and registration queries, test EQE, EQ create and queue disable, and the DMA regions
//! (6.12 `include/net/mana/gdma.h`; upstream senders in `gdma_main.c`). The header framing
//! and response checks are the parent module's.

use super::{
    check_resp, page_list_request, request, start, Caller, DevId, MsgError, Put,
    ADD_PAGES_REQ_SIZE, CREATE_DMA_REGION_REQ_SIZE, CREATE_DMA_REGION_RESP_SIZE,
    CREATE_QUEUE_REQ_SIZE, CREATE_QUEUE_RESP_SIZE, DESTROY_DMA_REGION_REQ_SIZE,
    DISABLE_QUEUE_REQ_SIZE, GDMA_CREATE_DMA_REGION, GDMA_CREATE_QUEUE, GDMA_DESTROY_DMA_REGION,
    GDMA_DEVICE_HWC, GDMA_DEVICE_MANA, GDMA_DEV_LIST_SIZE, GDMA_DISABLE_QUEUE,
    GDMA_DMA_REGION_ADD_PAGES, GDMA_EQ, GDMA_GENERATE_TEST_EQE, GDMA_INVALID_DMA_REGION,
    GDMA_LIST_DEVICES, GDMA_PROTOCOL_V1, GDMA_QUERY_MAX_RESOURCES, GDMA_REGISTER_DEVICE,
    GDMA_VERIFY_VF_DRIVER_VERSION, LIST_DEVICES_RESP_SIZE, MANA_PAGE_SIZE, OS_TYPE_LINUX,
    QUERY_MAX_RES_RESP_SIZE, REGISTER_DEVICE_RESP_SIZE, RESP_HDR_SIZE, RSNIC_DRV_CAP_FLAGS1,
    TEST_EQE_REQ_SIZE, VERIFY_VER_REQ_SIZE, VERIFY_VER_RESP_SIZE,
};
use crate::hwif::bytes::{le32, le64};

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
        &[
            Put::U64(40, GDMA_PROTOCOL_V1),
            Put::U64(48, GDMA_PROTOCOL_V1),
            Put::U64(56, RSNIC_DRV_CAP_FLAGS1),
            Put::U32(96, OS_TYPE_LINUX),
            Put::U32(104, os.major),
            Put::U32(108, os.minor),
            Put::U32(112, os.build),
        ],
    )?;
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
    request(
        buf,
        TEST_EQE_REQ_SIZE,
        GDMA_GENERATE_TEST_EQE,
        RESP_HDR_SIZE,
        Caller::dev(dev_id),
        &[Put::U32(40, eq_id)],
    )
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
    request(
        buf,
        CREATE_QUEUE_REQ_SIZE,
        GDMA_CREATE_QUEUE,
        CREATE_QUEUE_RESP_SIZE,
        Caller::dev(s.dev_id),
        &[
            Put::U32(40, GDMA_EQ),
            Put::U32(48, s.pdid),
            Put::U32(52, s.doorbell),
            Put::U64(56, s.region),
            Put::U32(68, s.queue_size),
            Put::U32(72, s.log2_throttle_limit),
            Put::U32(76, s.msix_index),
        ],
    )
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
    request(
        buf,
        DISABLE_QUEUE_REQ_SIZE,
        GDMA_DISABLE_QUEUE,
        RESP_HDR_SIZE,
        Caller::dev(dev_id),
        &[Put::U32(40, qtype), Put::U32(44, id), Put::U32(48, 1)],
    )
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
    let fit = region_pages_in_create(buf.len()).min(pages as usize) as u32;
    page_list_request(
        buf,
        GDMA_CREATE_DMA_REGION,
        CREATE_DMA_REGION_RESP_SIZE,
        &[
            Put::U64(40, u64::from(length)),
            Put::U32(56, pages),
            Put::U32(60, fit),
        ],
        CREATE_DMA_REGION_REQ_SIZE,
        base,
        0..fit,
    )
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
    let fit = region_pages_in_add(buf.len()).min((pages - first) as usize) as u32;
    page_list_request(
        buf,
        GDMA_DMA_REGION_ADD_PAGES,
        RESP_HDR_SIZE,
        &[Put::U64(40, handle), Put::U32(48, fit)],
        ADD_PAGES_REQ_SIZE,
        base,
        first..first + fit,
    )
}

/// `struct gdma_destroy_dma_region_req`: dma_region_handle at 40.
pub fn destroy_dma_region(buf: &mut [u8], handle: u64) -> Result<usize, MsgError> {
    request(
        buf,
        DESTROY_DMA_REGION_REQ_SIZE,
        GDMA_DESTROY_DMA_REGION,
        RESP_HDR_SIZE,
        Caller::GDMA,
        &[Put::U64(40, handle)],
    )
}
