//! The vfio-user protocol's wire format (QEMU's docs/interop/vfio-user.rst, protocol 0.0):
//! the 16-byte message header, the command numbers, the flag bits of the VFIO structures
//! the messages carry, and little helpers to take fields out of a payload and to build
//! replies. Pure data handling: no I/O, nothing here trusts its input.

/// Bytes of the header every message starts with.
pub const HDR_LEN: usize = 16;

/// The protocol version devd speaks (major).
pub const VERSION_MAJOR: u16 = 0;
/// The protocol version devd speaks (minor).
pub const VERSION_MINOR: u16 = 0;

/// Most descriptors devd takes with one message (advertised as `max_msg_fds`).
pub const MAX_MSG_FDS: usize = 16;
/// Most data bytes of one REGION_READ/REGION_WRITE (advertised as `max_data_xfer_size`);
/// config space (4 KiB) is the largest thing read at once.
pub const MAX_DATA_XFER: usize = 64 << 10;
/// Most DMA mappings one connection may hold (advertised as `max_dma_maps`).
pub const MAX_DMA_MAPS: usize = 1024;
/// The DMA page size devd supports (advertised as `pgsizes`); mapped addresses and sizes
/// are multiples of it.
pub const DMA_PGSIZE: u64 = 4096;
/// The largest message devd accepts: a REGION_WRITE of [`MAX_DATA_XFER`] bytes. A header
/// announcing more loses the framing: the connection is closed.
pub const MAX_MSG: usize = HDR_LEN + 16 + MAX_DATA_XFER;

/// Command numbers (the header's `command`).
pub mod cmd {
    /// Version and capability negotiation (first message).
    pub const VERSION: u16 = 1;
    /// Client memory made available for DMA.
    pub const DMA_MAP: u16 = 2;
    /// Client memory withdrawn.
    pub const DMA_UNMAP: u16 = 3;
    /// Device flags, region and IRQ-type counts.
    pub const DEVICE_GET_INFO: u16 = 4;
    /// One region's size and flags.
    pub const DEVICE_GET_REGION_INFO: u16 = 5;
    /// ioeventfd sub-regions (not supported).
    pub const DEVICE_GET_REGION_IO_FDS: u16 = 6;
    /// One IRQ type's count and flags.
    pub const DEVICE_GET_IRQ_INFO: u16 = 7;
    /// Eventfds and actions of IRQs.
    pub const DEVICE_SET_IRQS: u16 = 8;
    /// Read of a region (config space, BAR0).
    pub const REGION_READ: u16 = 9;
    /// Write of a region.
    pub const REGION_WRITE: u16 = 10;
    /// Device reset.
    pub const DEVICE_RESET: u16 = 13;
}

/// Header flags: the message type (bits 0..3): a command.
pub const TYPE_COMMAND: u32 = 0x0;
/// Header flags: the message type: a reply.
pub const TYPE_REPLY: u32 = 0x1;
/// Header flags: the type's bits.
pub const TYPE_MASK: u32 = 0xf;
/// Header flags: the sender wants no reply.
pub const NO_REPLY: u32 = 0x10;
/// Header flags: the reply reports an error (errno in the header's `error`).
pub const ERROR: u32 = 0x20;

/// Region indices of a PCI device (`VFIO_PCI_*_REGION_INDEX`).
pub mod region {
    /// BAR0.
    pub const BAR0: u32 = 0;
    /// Expansion ROM.
    pub const ROM: u32 = 6;
    /// Config space.
    pub const CONFIG: u32 = 7;
    /// VGA.
    pub const VGA: u32 = 8;
    /// Regions a PCI device has (`VFIO_PCI_NUM_REGIONS`).
    pub const COUNT: u32 = 9;
    /// Region flag: readable.
    pub const FLAG_READ: u32 = 1;
    /// Region flag: writable.
    pub const FLAG_WRITE: u32 = 2;
}

/// IRQ indices of a PCI device (`VFIO_PCI_*_IRQ_INDEX`) and `vfio_irq_set` flags.
pub mod irq {
    /// INTx.
    pub const INTX: u32 = 0;
    /// MSI.
    pub const MSI: u32 = 1;
    /// MSI-X.
    pub const MSIX: u32 = 2;
    /// AER error notification.
    pub const ERR: u32 = 3;
    /// Device request notification.
    pub const REQ: u32 = 4;
    /// IRQ types a PCI device has (`VFIO_PCI_NUM_IRQS`).
    pub const COUNT: u32 = 5;
    /// IRQ info flag: the type signals eventfds.
    pub const INFO_EVENTFD: u32 = 1;
    /// SET_IRQS: no data.
    pub const DATA_NONE: u32 = 1 << 0;
    /// SET_IRQS: a bool byte per IRQ.
    pub const DATA_BOOL: u32 = 1 << 1;
    /// SET_IRQS: an eventfd per IRQ (in the message's descriptors).
    pub const DATA_EVENTFD: u32 = 1 << 2;
    /// SET_IRQS: mask.
    pub const ACTION_MASK: u32 = 1 << 3;
    /// SET_IRQS: unmask.
    pub const ACTION_UNMASK: u32 = 1 << 4;
    /// SET_IRQS: trigger.
    pub const ACTION_TRIGGER: u32 = 1 << 5;
    /// SET_IRQS: the data flags.
    pub const DATA_MASK: u32 = DATA_NONE | DATA_BOOL | DATA_EVENTFD;
    /// SET_IRQS: the action flags.
    pub const ACTION_MASK_ALL: u32 = ACTION_MASK | ACTION_UNMASK | ACTION_TRIGGER;
}

/// DEVICE_GET_INFO flag: the device supports DEVICE_RESET.
pub const DEVICE_FLAG_RESET: u32 = 1 << 0;
/// DEVICE_GET_INFO flag: the device is a PCI device.
pub const DEVICE_FLAG_PCI: u32 = 1 << 1;

/// DMA_MAP flag: the device may read the range.
pub const DMA_READ: u32 = 1 << 0;
/// DMA_MAP flag: the device may write the range.
pub const DMA_WRITE: u32 = 1 << 1;
/// DMA_UNMAP flag: report dirty pages (not supported).
pub const UNMAP_DIRTY_BITMAP: u32 = 1 << 0;
/// DMA_UNMAP flag: unmap every mapping (address and size 0).
pub const UNMAP_ALL: u32 = 1 << 1;

/// A message header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Header {
    /// Message id (echoed in the reply).
    pub id: u16,
    /// Command number ([`cmd`]).
    pub command: u16,
    /// Size of the whole message, header included.
    pub size: u32,
    /// Flags ([`TYPE_MASK`], [`NO_REPLY`], [`ERROR`]).
    pub flags: u32,
    /// errno of an error reply.
    pub error: u32,
}

impl Header {
    /// The header in the first [`HDR_LEN`] bytes of `b` (host byte order, which is
    /// little-endian here).
    pub fn parse(b: &[u8]) -> Option<Self> {
        Some(Self {
            id: u16_at(b, 0)?,
            command: u16_at(b, 2)?,
            size: u32_at(b, 4)?,
            flags: u32_at(b, 8)?,
            error: u32_at(b, 12)?,
        })
    }

    /// The header's bytes.
    pub fn encode(&self) -> [u8; HDR_LEN] {
        let mut b = [0u8; HDR_LEN];
        b[0..2].copy_from_slice(&self.id.to_le_bytes());
        b[2..4].copy_from_slice(&self.command.to_le_bytes());
        b[4..8].copy_from_slice(&self.size.to_le_bytes());
        b[8..12].copy_from_slice(&self.flags.to_le_bytes());
        b[12..16].copy_from_slice(&self.error.to_le_bytes());
        b
    }

    /// Whether the sender asked for no reply.
    pub fn no_reply(&self) -> bool {
        self.flags & NO_REPLY != 0
    }
}

/// The u16 at `off` of `b`, if `b` holds it.
pub fn u16_at(b: &[u8], off: usize) -> Option<u16> {
    Some(u16::from_le_bytes(
        b.get(off..off.checked_add(2)?)?.try_into().ok()?,
    ))
}

/// The u32 at `off` of `b`, if `b` holds it.
pub fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        b.get(off..off.checked_add(4)?)?.try_into().ok()?,
    ))
}

/// The u64 at `off` of `b`, if `b` holds it.
pub fn u64_at(b: &[u8], off: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        b.get(off..off.checked_add(8)?)?.try_into().ok()?,
    ))
}

/// A reply to `req` carrying `payload`.
pub fn reply(req: &Header, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(HDR_LEN + payload.len());
    v.extend_from_slice(
        &Header {
            id: req.id,
            command: req.command,
            size: (HDR_LEN + payload.len()) as u32,
            flags: TYPE_REPLY,
            error: 0,
        }
        .encode(),
    );
    v.extend_from_slice(payload);
    v
}

/// An error reply to `req` (header only) with `errno`.
pub fn error_reply(req: &Header, errno: i32) -> Vec<u8> {
    Header {
        id: req.id,
        command: req.command,
        size: HDR_LEN as u32,
        flags: TYPE_REPLY | ERROR,
        error: errno as u32,
    }
    .encode()
    .to_vec()
}

/// The capabilities devd answers VERSION with (JSON, NUL-terminated in the message): no
/// migration, no twin socket, no WRITE_MULTI.
pub fn server_capabilities() -> String {
    format!(
        "{{\"capabilities\":{{\"max_msg_fds\":{MAX_MSG_FDS},\"max_data_xfer_size\":{MAX_DATA_XFER},\
\"pgsizes\":{DMA_PGSIZE},\"max_dma_maps\":{MAX_DMA_MAPS}}}}}"
    )
}

/// Little-endian payload builder.
#[derive(Default)]
pub struct Out(pub Vec<u8>);

impl Out {
    /// Appends a u32.
    pub fn u32(mut self, v: u32) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }

    /// Appends a u64.
    pub fn u64(mut self, v: u64) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }

    /// Appends bytes.
    pub fn bytes(mut self, b: &[u8]) -> Self {
        self.0.extend_from_slice(b);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips() {
        let h = Header {
            id: 0x1234,
            command: cmd::REGION_READ,
            size: 32,
            flags: NO_REPLY,
            error: 7,
        };
        assert_eq!(Header::parse(&h.encode()), Some(h));
        assert_eq!(Header::parse(&h.encode()[..15]), None);
    }

    #[test]
    fn field_readers_refuse_short_and_overflowing_offsets() {
        let b = [1u8, 2, 3, 4, 5, 6, 7, 8];
        assert_eq!(u32_at(&b, 4), Some(0x0807_0605));
        assert_eq!(u32_at(&b, 5), None);
        assert_eq!(u64_at(&b, 0), Some(0x0807_0605_0403_0201));
        assert_eq!(u64_at(&b, usize::MAX - 3), None);
    }

    #[test]
    fn capabilities_are_json_with_the_limits() {
        let c = server_capabilities();
        assert!(
            c.starts_with("{\"capabilities\":{") && c.ends_with("}}"),
            "{c}"
        );
        assert!(c.contains("\"max_msg_fds\":16"), "{c}");
        assert!(c.contains("\"pgsizes\":4096"), "{c}");
        assert!(!c.contains("migration"), "{c}");
    }
}
