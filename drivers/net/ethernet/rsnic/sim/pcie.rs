// SPDX-License-Identifier: GPL-2.0

//! PCIe link accounting, exactly the model of Documentation/networking/device_drivers/ethernet/
//! rsnic-datapath.rst, section "How figures are measured".
//!
//! *Inbound* is towards the NIC, *outbound* towards host memory. Every TLP costs its payload
//! plus [`TLP_OVERHEAD`] bytes. The device model calls one of the methods of
//! [`PcieCounters`] for every bus transaction it makes:
//!
//! | transaction | outbound | inbound |
//! |---|---|---|
//! | DMA read of N bytes at A ([`PcieCounters::dma_read`]) | ceil(N/512) read requests, 24 B each, no payload | completions: the range of each request split at 64-byte address boundaries (RCB), one TLP per piece |
//! | DMA write of N bytes at A ([`PcieCounters::dma_write`]) | one TLP per 256-byte aligned block touched (MPS), payload = the bytes in that block | — |
//! | CQE write ([`PcieCounters::cqe_write`]) | one TLP of 64 B | — |
//! | MSI-X message ([`PcieCounters::msix`]) | one TLP of 4 B | — |
//! | doorbell register write ([`PcieCounters::doorbell`]) | — | one TLP of 8 B |
//!
//! Read requests are cut into chunks of 512 bytes starting at the first byte (so a read of N
//! bytes is exactly ceil(N/512) requests, as that section says); each chunk's completions
//! are split at 64-byte boundaries. Since 512 is a multiple of 64 this equals splitting the
//! whole range at 64-byte boundaries whenever the read starts 64-byte aligned.

/// Bytes of overhead per TLP (header, sequence number, LCRC, framing).
pub const TLP_OVERHEAD: u64 = 24;
/// Maximum read request size.
pub const MRRS: u64 = 512;
/// Read completion boundary.
pub const RCB: u64 = 64;
/// Maximum payload size of a posted write.
pub const MPS: u64 = 256;
/// Payload of a doorbell register write.
pub const DOORBELL_BYTES: u64 = 8;
/// Payload of a CQE write.
pub const CQE_BYTES: u64 = 64;
/// Payload of an MSI-X message.
pub const MSIX_BYTES: u64 = 4;

/// TLPs and bytes (payload plus overhead) in each direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PcieCounters {
    /// TLPs towards the NIC (read completions, register writes).
    pub in_tlps: u64,
    /// Bytes towards the NIC, overhead included.
    pub in_bytes: u64,
    /// TLPs towards host memory (read requests, DMA writes, MSI-X).
    pub out_tlps: u64,
    /// Bytes towards host memory, overhead included.
    pub out_bytes: u64,
}

/// Number of `size`-aligned blocks that the byte range `[addr, addr + len)` touches
/// (0 for an empty range). `size` must be non-zero; 0 is treated as 1.
pub fn blocks(addr: u64, len: u64, size: u64) -> u64 {
    if len == 0 {
        return 0;
    }
    let size = size.max(1);
    let first = addr / size;
    let last = addr.saturating_add(len - 1) / size;
    last - first + 1
}

/// Inbound bytes needed to carry `len` bytes of packet data and nothing else: the data
/// itself plus [`TLP_OVERHEAD`] per 64-byte read completion, the data being 64-byte aligned.
/// This is the TX floor of rsnic-datapath.rst, "How figures are measured".
pub fn inbound_floor(len: u64) -> u64 {
    len.saturating_add(TLP_OVERHEAD.saturating_mul(len.div_ceil(RCB)))
}

impl PcieCounters {
    fn outbound(&mut self, tlps: u64, payload: u64) {
        self.out_tlps = self.out_tlps.wrapping_add(tlps);
        self.out_bytes = self
            .out_bytes
            .wrapping_add(payload.wrapping_add(tlps.wrapping_mul(TLP_OVERHEAD)));
    }

    fn inbound(&mut self, tlps: u64, payload: u64) {
        self.in_tlps = self.in_tlps.wrapping_add(tlps);
        self.in_bytes = self
            .in_bytes
            .wrapping_add(payload.wrapping_add(tlps.wrapping_mul(TLP_OVERHEAD)));
    }

    /// A device DMA read of `len` bytes at bus address `addr`.
    pub fn dma_read(&mut self, addr: u64, len: u64) {
        let mut off = 0u64;
        while off < len {
            let chunk = (len - off).min(MRRS);
            self.outbound(1, 0);
            self.inbound(blocks(addr.wrapping_add(off), chunk, RCB), chunk);
            off += chunk;
        }
    }

    /// A device DMA write of `len` bytes at bus address `addr` (posted writes of at most
    /// [`MPS`] bytes, split at MPS-aligned boundaries).
    pub fn dma_write(&mut self, addr: u64, len: u64) {
        self.outbound(blocks(addr, len, MPS), len);
    }

    /// One CQE (or mini-CQE array) write: one TLP of 64 bytes.
    pub fn cqe_write(&mut self) {
        self.outbound(1, CQE_BYTES);
    }

    /// One MSI-X message.
    pub fn msix(&mut self) {
        self.outbound(1, MSIX_BYTES);
    }

    /// One 64-bit doorbell register write by the driver.
    pub fn doorbell(&mut self) {
        self.inbound(1, DOORBELL_BYTES);
    }

    /// Adds `other` into `self`.
    pub fn add(&mut self, other: &PcieCounters) {
        self.in_tlps = self.in_tlps.wrapping_add(other.in_tlps);
        self.in_bytes = self.in_bytes.wrapping_add(other.in_bytes);
        self.out_tlps = self.out_tlps.wrapping_add(other.out_tlps);
        self.out_bytes = self.out_bytes.wrapping_add(other.out_bytes);
    }
}
