// SPDX-License-Identifier: GPL-2.0

//! The PCI transport's shared layout: what the guest driver and the device process
//! (`rsnic-devd`) agree on in the ivshmem device's BAR2, and how model interrupt vectors map
//! to MSI-X indices.
//!
//! Kernel-free and allocation-free: compiled into `rsnic.ko` (the PCI transport reads the
//! identity block at probe and appends to the ring) and into `rsnic-devd` (which writes the
//! identity block and consumes the ring). Everything is little-endian; offsets are in bytes
//! from the start of BAR2 unless said otherwise.
//!
//! * Identity block at [`IDENTITY_OFFSET`]: [`Identity`], written by devd before the guest
//!   runs, read-only for the guest ([`Identity::encode`], [`Identity::parse`]).
//! * Ring control at [`CTRL_TAIL`] .. [`CTRL_READ_VALUE`], each field in its own 64-byte
//!   line.
//! * Ring of [`RING_ENTRIES`] slots of [`SLOT_SIZE`] bytes at [`RING_OFFSET`]: the in-kernel
//!   device host's posted-write buffer moved into shared memory. Writers (any guest CPU)
//!   claim [`CTRL_TAIL`] by CAS when the slot's `seq` equals the position, fill the slot and
//!   store `pos + 1` into `seq` (release); devd, the only consumer, applies entries strictly
//!   in order and stores `pos + RING_ENTRIES` into `seq` once applied.
//!
//! devd sets BAR2 up before the guest can run: identity block, every slot's `seq` to its
//! index (free for lap 0), `tail` = `head` = 0, `read_done` = [`READ_DONE_NONE`]; the
//! identity's `status` becomes [`STATUS_READY`] last.

/// Size of BAR2 (the shared-memory fd devd hands to QEMU): 1 MiB.
pub const BAR2_SIZE: usize = 1 << 20;

/// `magic`: "RNIC" as little-endian bytes `'R', 'N', 'I', 'C'`.
pub const MAGIC: u32 = 0x4349_4e52;
/// `version`: the layout version this module describes.
pub const VERSION: u32 = 1;

/// Family code of a ConnectX (mlx5) device.
pub const FAMILY_MLX5: u32 = 1;
/// Family code of a MANA device.
pub const FAMILY_MANA: u32 = 2;

/// Most ports (functions) a device may have.
pub const MAX_PORTS: u32 = 8;
/// MSI-X vectors per port (VPP): port `p`'s interrupt `intr` is MSI-X index `p * VPP + intr`.
pub const VPP: u16 = 16;
/// Interrupt vectors per function as the device models number them: a model raises
/// `port * MODEL_VECTORS_PER_PORT + intr`.
pub const MODEL_VECTORS_PER_PORT: u16 = 64;

/// `status`: devd has not finished setting the device up.
pub const STATUS_NOT_READY: u32 = 0;
/// `status`: the device is ready; the guest may bind it.
pub const STATUS_READY: u32 = 1;
/// `status`: devd stopped the device (failed).
pub const STATUS_FAILED: u32 = 2;

/// Offset of the identity block in BAR2.
pub const IDENTITY_OFFSET: usize = 0x0;
/// Identity field `magic` (u32, [`MAGIC`]).
pub const ID_MAGIC: usize = 0x00;
/// Identity field `version` (u32, [`VERSION`]).
pub const ID_VERSION: usize = 0x04;
/// Identity field `family` (u32, [`FAMILY_MLX5`] or [`FAMILY_MANA`]).
pub const ID_FAMILY: usize = 0x08;
/// Identity field `ports` (u32, `1..=MAX_PORTS`).
pub const ID_PORTS: usize = 0x0C;
/// Identity field `vpp` (u32, MSI-X vectors per port, [`VPP`]).
pub const ID_VPP: usize = 0x10;
/// Identity field `ring_offset` (u32, offset of the ring in BAR2, [`RING_OFFSET`]).
pub const ID_RING_OFFSET: usize = 0x14;
/// Identity field `ring_entries` (u32, a power of two, [`RING_ENTRIES`]).
pub const ID_RING_ENTRIES: usize = 0x18;
/// Identity field `status` (u32: [`STATUS_NOT_READY`], [`STATUS_READY`], [`STATUS_FAILED`]).
pub const ID_STATUS: usize = 0x1C;
/// Identity field `ram_size` (u64): the guest RAM size devd checks bus addresses against
/// (informational for the guest).
pub const ID_RAM_SIZE: usize = 0x20;
/// Reserved: 6 bytes per port for [`MAX_PORTS`] ports (not used, MACs come through the
/// control path); devd leaves them 0.
pub const ID_RESERVED_MACS: usize = 0x28;
/// Length of the identity block in bytes (through the reserved MAC area).
pub const IDENTITY_LEN: usize = ID_RESERVED_MACS + 6 * MAX_PORTS as usize;

/// Ring control `tail` (u64, written by the guest with CAS): the next position a writer
/// claims.
pub const CTRL_TAIL: usize = 0x800;
/// Ring control `head` (u64, written by devd): the next position devd applies; every
/// position before it is applied.
pub const CTRL_HEAD: usize = 0x840;
/// Ring control `read_ticket` (u64, written by the guest before it posts a READ32): the
/// ring position of that READ32.
pub const CTRL_READ_TICKET: usize = 0x880;
/// Ring control `read_done` (u64, written by devd with release ordering): the ring position
/// of the last READ32 answered.
pub const CTRL_READ_DONE: usize = 0x8C0;
/// `read_done` before devd answered any READ32: no ring position. devd sets `read_done` to
/// it when it sets up BAR2 (0 would claim that a READ32 at ring position 0 was answered).
pub const READ_DONE_NONE: u64 = u64::MAX;
/// Ring control `read_value` (u32, written by devd before `read_done`): the answer of the
/// READ32 at position `read_done`.
pub const CTRL_READ_VALUE: usize = 0x8C8;

/// Offset of the ring in BAR2.
pub const RING_OFFSET: usize = 0x1000;
/// Slots of the ring (a power of two).
pub const RING_ENTRIES: usize = 4096;
/// Bytes per ring slot.
pub const SLOT_SIZE: usize = 32;
/// End of the ring in BAR2 (exclusive): `0x21000`.
pub const RING_END: usize = RING_OFFSET + RING_ENTRIES * SLOT_SIZE;

/// Slot field `seq` (u64): `pos` when free for the writer of ring position `pos`; the
/// writer stores `pos + 1` (release) once the slot is filled; devd stores
/// `pos + RING_ENTRIES` (release) after applying it.
pub const SLOT_SEQ: usize = 0x00;
/// Slot field `reg` (u32): the register offset in the device's register space, as the
/// in-kernel `Engine::mmio_*` takes it (port `p` of a ConnectX at `p * FUNC_BAR_SIZE`,
/// MANA at 0).
pub const SLOT_REG: usize = 0x08;
/// Slot field `op` (u32): [`OP_WRITE32`], [`OP_WRITE64`] or [`OP_READ32`].
pub const SLOT_OP: usize = 0x0C;
/// Slot field `value` (u64): WRITE32's value in the low 32 bits; WRITE64's 8 bytes as
/// `u64::from_ne_bytes(bytes)` (little-endian on x86).
pub const SLOT_VALUE: usize = 0x10;

/// Ring op: a 32-bit register write (`writel`).
pub const OP_WRITE32: u32 = 1;
/// Ring op: a 64-bit register write (`writeq`, memory-order bytes).
pub const OP_WRITE64: u32 = 2;
/// Ring op: a 32-bit register read; devd answers it in [`CTRL_READ_VALUE`] and
/// [`CTRL_READ_DONE`].
pub const OP_READ32: u32 = 3;

/// BAR0 (ivshmem registers): interrupt mask (unused with MSI-X).
pub const BAR0_INTR_MASK: usize = 0x0;
/// BAR0 (ivshmem registers): interrupt status (unused with MSI-X).
pub const BAR0_INTR_STATUS: usize = 0x4;
/// BAR0 (ivshmem registers): the guest's peer id (read-only).
pub const BAR0_IV_POSITION: usize = 0x8;
/// BAR0 (ivshmem registers): doorbell; write [`doorbell_value`] to notify a peer's vector.
pub const BAR0_DOORBELL: usize = 0xC;

/// Peer id of devd in the ivshmem protocol (the guest rings its vector 0 after appending to
/// the ring).
pub const DEVD_PEER: u16 = 0;
/// Peer id devd gives its one client (the guest).
pub const GUEST_PEER: u16 = 1;
/// Vectors (eventfds) devd registers for itself as peer [`DEVD_PEER`].
pub const VPP_HOST: u16 = 1;

/// The value the guest writes to [`BAR0_DOORBELL`] to notify `vector` of `peer`.
pub const fn doorbell_value(peer: u16, vector: u16) -> u32 {
    ((peer as u32) << 16) | vector as u32
}

/// Offset in BAR2 of the slot of ring position `pos`.
pub const fn slot_offset(pos: u64) -> usize {
    RING_OFFSET + (pos as usize & (RING_ENTRIES - 1)) * SLOT_SIZE
}

/// Maps a model interrupt vector (`port * MODEL_VECTORS_PER_PORT + intr`) to the MSI-X
/// index `port * vpp + intr`. `None` when `intr >= vpp` (more vectors than the transport
/// carries: devd drops and counts it), or the port is beyond [`MAX_PORTS`].
pub fn msix_index(vector: u16, vpp: u16) -> Option<u16> {
    let port = vector / MODEL_VECTORS_PER_PORT;
    let intr = vector % MODEL_VECTORS_PER_PORT;
    if intr >= vpp || u32::from(port) >= MAX_PORTS {
        return None;
    }
    port.checked_mul(vpp)?.checked_add(intr)
}

/// The MSI-X index a device of `family` with `ports` ports raises for the vector its model
/// raised. A ConnectX model numbers its vectors itself (`port * MODEL_VECTORS_PER_PORT +
/// intr`, the EQ's `intr`), so they are mapped with [`msix_index`]; a MANA driver gives its
/// device the MSI-X index itself (GDMA's `msix_index` of CREATE_EQ / the HWC setup), so
/// the model's vector is that index, checked against the vectors the function has. `None`:
/// dropped (and counted) by the device host.
pub fn msix_of(family: Family, vector: u16, ports: u32) -> Option<u16> {
    match family {
        Family::Mlx5 => msix_index(vector, VPP),
        Family::Mana => {
            (u32::from(vector) < ports.min(MAX_PORTS) * u32::from(VPP)).then_some(vector)
        }
    }
}

/// The family a device says it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// ConnectX ([`FAMILY_MLX5`]).
    Mlx5,
    /// MANA ([`FAMILY_MANA`]).
    Mana,
}

impl Family {
    /// The family's code in the identity block.
    pub const fn code(self) -> u32 {
        match self {
            Family::Mlx5 => FAMILY_MLX5,
            Family::Mana => FAMILY_MANA,
        }
    }

    /// The family of `code`, if it names one.
    pub const fn from_code(code: u32) -> Option<Self> {
        match code {
            FAMILY_MLX5 => Some(Family::Mlx5),
            FAMILY_MANA => Some(Family::Mana),
            _ => None,
        }
    }
}

/// The device's state as devd reports it in `status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// [`STATUS_NOT_READY`].
    NotReady,
    /// [`STATUS_READY`].
    Ready,
    /// [`STATUS_FAILED`].
    Failed,
}

impl Status {
    /// The status's code in the identity block.
    pub const fn code(self) -> u32 {
        match self {
            Status::NotReady => STATUS_NOT_READY,
            Status::Ready => STATUS_READY,
            Status::Failed => STATUS_FAILED,
        }
    }
}

/// What the identity block says (the fields that vary; the others are checked by
/// [`Identity::parse`] against this layout's constants).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    /// The device's family.
    pub family: Family,
    /// Ports (functions), `1..=MAX_PORTS`.
    pub ports: u32,
    /// The device's state.
    pub status: Status,
    /// Guest RAM size devd checks bus addresses against.
    pub ram_size: u64,
}

/// Why an identity block was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdentityError {
    /// The buffer is shorter than [`IDENTITY_LEN`].
    TooShort(usize),
    /// `magic` is not [`MAGIC`].
    Magic(u32),
    /// `version` is not [`VERSION`].
    Version(u32),
    /// `family` names no family.
    Family(u32),
    /// `ports` is outside `1..=MAX_PORTS`.
    Ports(u32),
    /// `vpp` is not [`VPP`].
    Vpp(u32),
    /// `ring_offset` is not [`RING_OFFSET`].
    RingOffset(u32),
    /// `ring_entries` is not [`RING_ENTRIES`].
    RingEntries(u32),
    /// `status` is no known status.
    Status(u32),
}

impl core::fmt::Display for IdentityError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            IdentityError::TooShort(n) => {
                write!(
                    f,
                    "identity block too short: {} < {} bytes",
                    n, IDENTITY_LEN
                )
            }
            IdentityError::Magic(v) => write!(f, "bad magic {:#x} (want {:#x})", v, MAGIC),
            IdentityError::Version(v) => {
                write!(f, "unsupported layout version {} (want {})", v, VERSION)
            }
            IdentityError::Family(v) => write!(f, "unknown family code {}", v),
            IdentityError::Ports(v) => write!(f, "ports {} outside 1..={}", v, MAX_PORTS),
            IdentityError::Vpp(v) => write!(f, "vectors per port {} (want {})", v, VPP),
            IdentityError::RingOffset(v) => {
                write!(f, "ring offset {:#x} (want {:#x})", v, RING_OFFSET)
            }
            IdentityError::RingEntries(v) => {
                write!(f, "ring entries {} (want {})", v, RING_ENTRIES)
            }
            IdentityError::Status(v) => write!(f, "unknown status {}", v),
        }
    }
}

fn get_u32(b: &[u8], off: usize) -> u32 {
    let mut w = [0u8; 4];
    if let Some(s) = b.get(off..off + 4) {
        w.copy_from_slice(s);
    }
    u32::from_le_bytes(w)
}

fn get_u64(b: &[u8], off: usize) -> u64 {
    let mut w = [0u8; 8];
    if let Some(s) = b.get(off..off + 8) {
        w.copy_from_slice(s);
    }
    u64::from_le_bytes(w)
}

fn put(b: &mut [u8], off: usize, v: &[u8]) {
    if let Some(d) = b.get_mut(off..off + v.len()) {
        d.copy_from_slice(v);
    }
}

impl Identity {
    /// Writes the identity block into `out` (BAR2 from [`IDENTITY_OFFSET`]): every field of
    /// the layout, the reserved area zeroed. Fails with [`IdentityError::TooShort`] when `out`
    /// is shorter than [`IDENTITY_LEN`] (nothing is written then), with
    /// [`IdentityError::Ports`] when `ports` is out of range.
    pub fn encode(&self, out: &mut [u8]) -> Result<(), IdentityError> {
        if out.len() < IDENTITY_LEN {
            return Err(IdentityError::TooShort(out.len()));
        }
        if self.ports == 0 || self.ports > MAX_PORTS {
            return Err(IdentityError::Ports(self.ports));
        }
        put(out, ID_MAGIC, &MAGIC.to_le_bytes());
        put(out, ID_VERSION, &VERSION.to_le_bytes());
        put(out, ID_FAMILY, &self.family.code().to_le_bytes());
        put(out, ID_PORTS, &self.ports.to_le_bytes());
        put(out, ID_VPP, &u32::from(VPP).to_le_bytes());
        put(out, ID_RING_OFFSET, &(RING_OFFSET as u32).to_le_bytes());
        put(out, ID_RING_ENTRIES, &(RING_ENTRIES as u32).to_le_bytes());
        put(out, ID_STATUS, &self.status.code().to_le_bytes());
        put(out, ID_RAM_SIZE, &self.ram_size.to_le_bytes());
        if let Some(r) = out.get_mut(ID_RESERVED_MACS..IDENTITY_LEN) {
            r.fill(0);
        }
        Ok(())
    }

    /// Reads and checks the identity block in `b` (BAR2 from [`IDENTITY_OFFSET`]): magic,
    /// version, family, ports, vectors per port, ring offset and entries must be what this
    /// layout says, the status a known one. The caller decides what a status other than
    /// [`Status::Ready`] means (the guest refuses to bind).
    pub fn parse(b: &[u8]) -> Result<Self, IdentityError> {
        if b.len() < IDENTITY_LEN {
            return Err(IdentityError::TooShort(b.len()));
        }
        let magic = get_u32(b, ID_MAGIC);
        if magic != MAGIC {
            return Err(IdentityError::Magic(magic));
        }
        let version = get_u32(b, ID_VERSION);
        if version != VERSION {
            return Err(IdentityError::Version(version));
        }
        let code = get_u32(b, ID_FAMILY);
        let family = Family::from_code(code).ok_or(IdentityError::Family(code))?;
        let ports = get_u32(b, ID_PORTS);
        if ports == 0 || ports > MAX_PORTS {
            return Err(IdentityError::Ports(ports));
        }
        let vpp = get_u32(b, ID_VPP);
        if vpp != u32::from(VPP) {
            return Err(IdentityError::Vpp(vpp));
        }
        let ro = get_u32(b, ID_RING_OFFSET);
        if ro as usize != RING_OFFSET {
            return Err(IdentityError::RingOffset(ro));
        }
        let re = get_u32(b, ID_RING_ENTRIES);
        if re as usize != RING_ENTRIES {
            return Err(IdentityError::RingEntries(re));
        }
        let status = match get_u32(b, ID_STATUS) {
            STATUS_NOT_READY => Status::NotReady,
            STATUS_READY => Status::Ready,
            STATUS_FAILED => Status::Failed,
            s => return Err(IdentityError::Status(s)),
        };
        Ok(Identity {
            family,
            ports,
            status,
            ram_size: get_u64(b, ID_RAM_SIZE),
        })
    }
}

// The layout's invariants, checked at compile time in both builds.
const _: () = {
    assert!(RING_ENTRIES.is_power_of_two());
    assert!(IDENTITY_LEN <= CTRL_TAIL);
    assert!(CTRL_READ_VALUE + 4 <= RING_OFFSET);
    assert!(RING_END == 0x21000);
    assert!(RING_END <= BAR2_SIZE);
    assert!(SLOT_VALUE + 8 <= SLOT_SIZE);
    assert!(MAGIC.to_le_bytes()[0] == b'R' && MAGIC.to_le_bytes()[3] == b'C');
    assert!(MAX_PORTS as usize * VPP as usize <= u16::MAX as usize);
};
