// SPDX-License-Identifier: GPL-2.0

//! The shared memory channel (SMC), driver side (6.12 `shm_channel.c`).
//!
//! A 256-bit window of eight 32-bit registers in BAR0 (at the offset the VF register
//! `GDMA_REG_SHM_OFFSET` gives). The last dword carries `union smc_proto_hdr`: bits 0..2
//! `msg_type`, 3..5 `msg_version`, 7 `direction` (0 request, 1 response), 8..15 `status`,
//! 24 `reset_vf`, 31 `owner_is_pf` (the busy bit: set while the PF/device owns the window).
//! Writing the last dword hands the window to the device.
//!
//! ESTABLISH_HWC (`mana_smc_setup_hwc`) packs the page frame numbers of the HWC's EQ, CQ, RQ
//! and SQ: the low 48 bits of each, 6 bytes apiece, at bytes 0, 6, 12, 18; the high 4 bits of
//! the four in the u16 at byte 24 (EQ in bits 0..3, then CQ, RQ, SQ); the EQ's MSI-X index
//! in the u16 at byte 26; the header in the dword at byte 28. DESTROY_HWC
//! (`mana_smc_teardown_hwc`) writes only the header.
//!
//! The driver polls the busy bit before it writes ([`poll_idle`], `mana_smc_poll_register`)
//! and for the response ([`read_response`], `mana_smc_read_response`); the sleeping between
//! polls is the caller's.

use crate::hwif::hw::{DmaAddr, Mmio};

/// Dwords in the window (`SMC_APERTURE_DWORDS`).
pub const SMC_DWORDS: usize = 8;
/// `SMC_MSG_TYPE_ESTABLISH_HWC`.
pub const SMC_MSG_ESTABLISH_HWC: u8 = 1;
/// `SMC_MSG_TYPE_DESTROY_HWC`.
pub const SMC_MSG_DESTROY_HWC: u8 = 2;
/// `SMC_MSG_TYPE_*_VERSION`.
pub const SMC_MSG_VERSION: u8 = 0;
/// The busy bit (`owner_is_pf`, bit 31 of the last dword).
pub const SMC_BUSY: u32 = 1 << 31;
/// The value the window reads in a VF reset (`SHMEM_VF_RESET_STATE`).
pub const SMC_RESET_STATE: u32 = u32::MAX;
/// `MANA_PAGE_SHIFT`.
const PAGE_SHIFT: u32 = 12;

/// Why the SMC refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmcError {
    /// An address is not page aligned.
    BadAddress,
    /// The response header names another message, a newer version or is not a response
    /// (`-EPROTO`).
    Protocol(u32),
    /// The device answered with a non-zero status (`-EPROTO`).
    Status(u8),
}

/// The HWC queue memory the ESTABLISH_HWC message carries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HwcAddrs {
    /// EQ memory.
    pub eq: DmaAddr,
    /// CQ memory.
    pub cq: DmaAddr,
    /// RQ memory.
    pub rq: DmaAddr,
    /// SQ memory.
    pub sq: DmaAddr,
}

/// The header dword of a request (`union smc_proto_hdr`, direction 0, owner 0).
pub fn request_header(msg_type: u8, reset_vf: bool) -> u32 {
    u32::from(msg_type & 7) | (u32::from(SMC_MSG_VERSION & 7) << 3) | (u32::from(reset_vf) << 24)
}

/// The eight dwords of ESTABLISH_HWC (`mana_smc_setup_hwc`, reset_vf = false).
pub fn establish_words(a: &HwcAddrs, msix: u16) -> Result<[u32; SMC_DWORDS], SmcError> {
    let mut b = [0u8; 32];
    let mut high = 0u16;
    for (i, addr) in [a.eq, a.cq, a.rq, a.sq].into_iter().enumerate() {
        if addr % (1 << PAGE_SHIFT) != 0 {
            return Err(SmcError::BadAddress);
        }
        let pfn = addr >> PAGE_SHIFT;
        b[i * 6..i * 6 + 6].copy_from_slice(&pfn.to_le_bytes()[..6]);
        high |= (((pfn >> 48) & 0xf) as u16) << (4 * i);
    }
    b[24..26].copy_from_slice(&high.to_le_bytes());
    b[26..28].copy_from_slice(&msix.to_le_bytes());
    b[28..32].copy_from_slice(&request_header(SMC_MSG_ESTABLISH_HWC, false).to_le_bytes());
    let mut w = [0u32; SMC_DWORDS];
    for (i, d) in w.iter_mut().enumerate() {
        *d = u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]);
    }
    Ok(w)
}

/// Whether the window is the driver's (`mana_smc_poll_register`, one poll): busy bit clear.
pub fn poll_idle<M: Mmio>(mmio: &M, base: u32) -> bool {
    mmio.read32(base + 4 * (SMC_DWORDS as u32 - 1)) & SMC_BUSY == 0
}

/// Writes a message: dwords 0..7 in order, the last one handing the window to the device.
pub fn write<M: Mmio>(mmio: &M, base: u32, words: &[u32; SMC_DWORDS]) {
    for (i, &w) in words.iter().enumerate() {
        mmio.write32(base + 4 * i as u32, w);
    }
}

/// Writes DESTROY_HWC: only the header dword (`mana_smc_teardown_hwc`, reset_vf = false).
pub fn write_destroy<M: Mmio>(mmio: &M, base: u32) {
    mmio.write32(
        base + 4 * (SMC_DWORDS as u32 - 1),
        request_header(SMC_MSG_DESTROY_HWC, false),
    );
}

/// Checks the response once the window is idle again (`mana_smc_read_response`).
pub fn read_response<M: Mmio>(mmio: &M, base: u32, msg_type: u8) -> Result<(), SmcError> {
    check_response(mmio.read32(base + 4 * (SMC_DWORDS as u32 - 1)), msg_type)
}

/// The checks of `mana_smc_read_response` on a header dword.
pub fn check_response(hdr: u32, msg_type: u8) -> Result<(), SmcError> {
    let ty = (hdr & 7) as u8;
    let ver = ((hdr >> 3) & 7) as u8;
    let dir = (hdr >> 7) & 1;
    if ty != msg_type || ver > SMC_MSG_VERSION || dir != 1 {
        return Err(SmcError::Protocol(hdr));
    }
    match (hdr >> 8) as u8 {
        0 => Ok(()),
        s => Err(SmcError::Status(s)),
    }
}
