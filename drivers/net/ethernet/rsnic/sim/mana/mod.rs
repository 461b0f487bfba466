// SPDX-License-Identifier: GPL-2.0

//! A simulated MANA (GDMA) Ethernet device (Documentation/networking/device_drivers/ethernet/
//! rsnic-hardware.rst, part D, counters E.3).
//!
//! Like [`crate::sim::mlx5`], the device decodes the formats itself (an independent reading
//! of those facts and a cross-check of the driver's `hwif::mana`); it shares no code with the
//! driver side. It sees only register writes and host memory by bus address.
//!
//! # Ports and wiring
//!
//! N ports wired back to back in pairs (2k ↔ 2k+1); a packet sent on a port's SQ arrives at
//! the peer, which spreads it over its RQs with RSS (Toeplitz under the vport's hash key over
//! the IP addresses and TCP/UDP ports, [`crate::sim::pkt::rss_hash_key`], entry `hash % len`
//! of the table). A port
//! without a peer, or a link down at either end, drops and counts
//! [`PortCounters::tx_link_down_drops`].
//!
//! **Loopback** ([`Device::set_loopback`], off after creation; what `ethtool -K <dev> loopback
//! on`, `NETIF_F_LOOPBACK`, asks for). A port in loopback delivers every frame it transmits
//! to its own receive side instead of its peer: RSS, RQ selection, RX CQEs and RX counters
//! exactly as for a frame from the wire. The model follows ConnectX's internal loopback: the
//! frame turns around inside the device, before the wire, so neither end's link state
//! matters (a looped port carries traffic to itself while it or its peer is down, and a port
//! without a peer loops too), the peer sees nothing, and the link state reported by the
//! model does not change. Looped frames count in the sender's `hc_tx_*` counters (they left
//! its SQs) and in [`PortCounters::loopback_packets`] / [`PortCounters::loopback_bytes`], so
//! the peer's receive outcomes balance `tx_packets() − loopback_packets`. The switch governs
//! the port's transmit direction only: what its peer sends still arrives when both links
//! are up. It applies from the next frame the engine sends: a WQE already executed was
//! delivered under the old setting, so toggling between runs loses nothing. Flow control
//! follows the frames: a looping port pauses on its own RQs (see below).
//!
//! # BAR0 layout (chosen by this model)
//!
//! * Page 0 holds the registers a VF has: 0x08 the doorbell page base (a u64 as two u32
//!   reads, low at 0x08, high at 0x0C) = [`DB_PAGE_BASE`], 0x10 the doorbell page size =
//!   [`DB_PAGE_SIZE`], 0x18 the SMC window's offset (a u64, high at 0x1C) = [`SMC_BASE`], and
//!   the SMC window itself (eight dwords, see below).
//! * Doorbell page p is at `DB_PAGE_BASE + p * DB_PAGE_SIZE` ([`DB_PAGES`] pages), with the
//!   queue offsets of spec D.3: SQ 0x000, RQ 0x400, CQ 0x800, EQ 0xFF8. Each doorbell is one
//!   64-bit little-endian write of `union gdma_doorbell_entry`. Port p's queues use page p
//!   until GDMA_REGISTER_DEVICE, then page [`MANA_DB_ID`]; the HWC's use page [`HWC_DB_ID`].
//!
//! A doorbell naming a queue that does not use the page counts in the page's port's
//! [`PortCounters::bad_doorbells`]; any other unknown access counts in [`Device::bad_mmio`].
//! **An RQ doorbell with a non-zero `wqe_cnt` is a device error**: it is counted in
//! [`PortCounters::rq_db_wqe_cnt_errors`] and ignored (spec D.6: the hardware requires 0). An
//! SQ/RQ `tail_ptr` more than the queue size ahead of the device's consumer offset, or not a
//! multiple of 32, is counted in [`PortCounters::db_invalid`] and ignored.
//!
//! # Control path through the hardware channel
//!
//! The device side of 6.12's `shm_channel.c`, `hw_channel.c` and the GDMA/MANA requests
//! (`gdma.h`, `mana.h`), with layouts read from the headers independently of `hwif::mana`.
//!
//! The SMC window and the handshake that sets the channel up are `smc.rs`'s, the channel's
//! queues `hwc.rs`'s, and the requests it carries, with their statuses, `gdma_req.rs`'s
//! (the DMA regions' in `region.rs`, MANA_CONFIG_VPORT_RX's steering in `steer.rs`): each
//! documents its rules. The faults a device host injects ([`Fault`]) are `faults.rs`'s.
//!
//! # Control path (Rust API)
//!
//! [`Device::create_eq`], [`Device::create_cq`], [`Device::create_sq`], [`Device::create_rq`]
//! (queue memory: a power of two ≥ 4 KiB for SQ/RQ; `num` entries for CQ/EQ), their
//! `destroy_*`, [`Device::set_rss`], [`Device::set_link`], [`Device::set_pause`],
//! [`Device::set_loopback`]. Ids are `base + port * 16 + slot` ([`SQ_ID_BASE`], [`RQ_ID_BASE`],
//! [`CQ_ID_BASE`], [`EQ_ID_BASE`]). Storage is the caller's ([`Port`], [`QueueSet`], scratch
//! bytes); nothing allocates, nothing panics.
//!
//! # Engine ([`Device::process`], [`Device::process_budget`])
//!
//! `engine.rs` executes what the doorbells latched: SQs, delivery over the wire or loopback
//! (flow control in [`crate::sim::wire`]), RX, CQEs, EQEs and interrupts, faults; its module
//! documentation gives the rules.

mod api;
mod counters;
mod engine;
mod faults;
mod gdma_req;
mod hwc;
mod queues;
mod region;
mod smc;
mod steer;

pub use counters::PortCounters;
pub use faults::{Fault, BAD_CQ_ID, BAD_OWNER_XOR, BAD_WQ_ID};
pub use queues::QueueSet;

use faults::Faults;
use queues::WqCtx;

pub use gdma_req::vport_mac;
pub use gdma_req::RSNIC_CAPS;
pub use gdma_req::{MAX_MSIX, MAX_NUM_CQS, REGIONS_PER_ROW, VPORT_HANDLE_BASE};
pub use gdma_req::{STATUS_BUFFER_TOO_SMALL, STATUS_DEVICE_BUSY, STATUS_INSUFFICIENT_RESOURCES};
pub use gdma_req::{STATUS_INTERNAL_ERROR, STATUS_INVALID_DEVICE_REQUEST};
pub use gdma_req::{STATUS_INVALID_DEVICE_STATE, STATUS_INVALID_HANDLE};
pub use gdma_req::{STATUS_INVALID_PARAMETER, STATUS_NOT_SUPPORTED, STATUS_NO_SUCH_DEVICE};
pub use gdma_req::{STATUS_OBJECT_NAME_COLLISION, STATUS_REVISION_MISMATCH, STATUS_SUCCESS};
pub use hwc::HwcCounters;
pub use hwc::MANA_PDID;
pub use hwc::{HWC_CQ_ID, HWC_DB_ID, HWC_DEV_ID, HWC_EQ_ID, HWC_MAX_MSG, HWC_MKEY, HWC_PDID};
pub use hwc::{HWC_QUEUE_DEPTH, HWC_RQ_ID, HWC_SQ_ID, MANA_DB_ID, MANA_DEV_ID, MANA_MKEY};
pub use region::Region;
pub use smc::SMC_BASE;
pub use steer::Steer;

use crate::hwif::hw::{BusMemory, InterruptSink};
use crate::sim::wire;
use core::ops::DerefMut;

/// SQs, RQs, CQs and EQs per port (a driver channel with AF_XDP zero-copy has two SQs, two
/// RQs and four CQs; the queue bitmaps of a [`Port`] are 32 bits wide).
pub const MAX_QUEUES: usize = 32;
/// Maximum entries of a port's RSS table.
pub const MAX_RSS: usize = 64;
/// Maximum number of ports.
pub const MAX_PORTS: usize = 64;
/// BAR0 offset of port 0's doorbell page (register 0x08 reads it).
pub const DB_PAGE_BASE: u32 = 0x1000;
/// Size of a doorbell page (register 0x10 reads it).
pub const DB_PAGE_SIZE: u32 = 0x1000;
/// Register: doorbell page base, low 32 bits (VF layout).
pub const REG_DB_PAGE_BASE: u32 = 0x08;
/// Register: doorbell page size.
pub const REG_DB_PAGE_SIZE: u32 = 0x10;
/// Register: BAR0 offset of the SMC window, low 32 bits (`GDMA_REG_SHM_OFFSET`; 0x1C reads
/// the high half, 0).
pub const REG_SHM_OFFSET: u32 = 0x18;
/// Doorbell pages in BAR0 (page p at `DB_PAGE_BASE + p * DB_PAGE_SIZE`).
pub const DB_PAGES: u32 = MAX_PORTS as u32;
/// SQ doorbell offset in a page.
pub const DB_SQ: u32 = 0x000;
/// RQ doorbell offset in a page.
pub const DB_RQ: u32 = 0x400;
/// CQ doorbell offset in a page.
pub const DB_CQ: u32 = 0x800;
/// EQ doorbell offset in a page.
pub const DB_EQ: u32 = 0xFF8;
/// First SQ id.
pub const SQ_ID_BASE: u32 = 0x1000;
/// First RQ id.
pub const RQ_ID_BASE: u32 = 0x2000;
/// First CQ id.
pub const CQ_ID_BASE: u32 = 0x3000;
/// First EQ id (EQ ids are 16 bits).
pub const EQ_ID_BASE: u32 = 0x4000;
/// Largest frame (without FCS) sent or received.
pub const MAX_FRAME: usize = 9728;
/// Minimum scratch for [`Device::new`]: an output frame and a gather buffer of one frame.
pub const MIN_SCRATCH: usize = 2 * MAX_FRAME;
/// Scratch that lets TSO carry a 64 KiB payload plus headers.
pub const SCRATCH_LEN: usize = MAX_FRAME + 65536 + 1024;
/// WQEs one SQ executes before the engine moves to the next.
pub const SQ_BURST: usize = 64;
/// Flow control's thresholds (the model's pause quantum lasts until the next register
/// write): see [`crate::sim::wire`].
pub use crate::sim::wire::{PAUSE_STORM, PAUSE_THRESHOLD};

/// Doorbell BAR0 offset of `reg` (one of the `DB_*` offsets) on `port`.
pub const fn doorbell_offset(port: usize, reg: u32) -> u32 {
    DB_PAGE_BASE + port as u32 * DB_PAGE_SIZE + reg
}

/// Why a control-path command failed (shared by both models: [`crate::sim::CmdError`]).
pub use crate::sim::CmdError;

/// Why the device rejected a TX WQE; the code goes to the CQE's `vendor_err`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WqeError {
    /// `num_sge` is 0 or above the maximum.
    BadNumSge = 1,
    /// The inline OOB size is not allowed.
    BadOobSize,
    /// The WQE is larger than the maximum or than what was posted.
    BadSize,
    /// `pkt_fmt` does not match the OOB size.
    BadPktFmt,
    /// `vcq_num` is not the SQ's CQ.
    BadVcq,
    /// `suppress_txcqe_gen` is set (the model always completes).
    SuppressCqe,
    /// OOB_IN_SGL with fewer than 2 SGEs.
    OobInSgl,
    /// An SGE of size 0.
    ZeroSge,
    /// An SGE address is not readable.
    ReadFault,
    /// Shorter than an Ethernet header.
    TooShort,
    /// Longer than [`MAX_FRAME`] (or the gather buffer).
    TooLong,
    /// A checksum request that does not match the headers.
    Csum,
    /// A TSO request that does not match the headers or SGE0.
    Tso,
    /// An SGE whose `mem_key` is not the device's (`gpa_mkey` of REGISTER_DEVICE): the
    /// device cannot read host memory through it.
    BadMkey,
}

impl WqeError {
    /// The TX CQE type reporting it.
    pub fn cqe_type(self) -> u8 {
        match self {
            Self::BadPktFmt | Self::BadVcq | Self::SuppressCqe | Self::OobInSgl => 35,
            Self::TooLong => 34,
            _ => 37,
        }
    }
}

/// State of one port: link, RSS table, pending work, counters.
pub struct Port {
    link_up: bool,
    rss: [u8; MAX_RSS],
    rss_len: usize,
    /// The Toeplitz key received frames are hashed with (the vport's, as CONFIG_VPORT_RX
    /// last set it; [`crate::sim::pkt::RSS_KEY`] before).
    rss_key: [u8; 40],
    /// SQs with posted work.
    sq_work: u32,
    /// SQs paused by flow control until the next register write.
    sq_paused: u32,
    /// Flow control (RSNIC_SET_PAUSE `rx`, `tx`; the pause quantum lasts until the next
    /// register write).
    pause: wire::Pause,
    /// Deliver transmitted frames to this port's own receive side ([`Device::set_loopback`]).
    loopback: bool,
    /// CQs with an arm to evaluate.
    cq_arm: u32,
    /// EQs with an arm to evaluate.
    eq_arm: u32,
    counters: PortCounters,
    /// MANA_CONFIG_VPORT_TX configured the vport.
    vport_tx: bool,
    /// RX steering as MANA_CONFIG_VPORT_RX set it.
    steer: Steer,
    /// The vport's permanent MAC ([`Device::set_permanent_mac`]; `None`: [`vport_mac`]).
    mac: Option<[u8; 6]>,
    /// Faults waiting to take effect ([`Device::inject`]).
    faults: Faults,
}

impl Default for Port {
    fn default() -> Self {
        Self::new()
    }
}

wire::wire_port!(Port, tx_pause_storms);

impl Port {
    /// A port with link up, flow control off (both directions) and no queues.
    pub fn new() -> Self {
        Self {
            link_up: true,
            rss: [0; MAX_RSS],
            rss_len: 0,
            rss_key: crate::sim::pkt::RSS_KEY,
            sq_work: 0,
            sq_paused: 0,
            pause: wire::Pause::new(false),
            loopback: false,
            cq_arm: 0,
            eq_arm: 0,
            counters: PortCounters::default(),
            vport_tx: false,
            steer: Steer::EMPTY,
            mac: None,
            faults: Faults::default(),
        }
    }

    /// Whether the port's data path is stopped ([`Fault::DevStop`]).
    fn stopped(&self) -> bool {
        self.faults.stop.on()
    }

    /// The stopped port held something back: the fault took effect (counted once).
    fn stop_hit(&mut self) {
        if self.faults.stop.hit() {
            self.counters.faults_injected += 1;
        }
    }

    /// A WQ object of the port was destroyed (`sq`: an SQ): the driver's recovery ends a
    /// stop, and a stall if it was an SQ.
    fn wq_destroyed(&mut self, sq: bool) {
        if sq {
            self.faults.tx_stall = false;
        }
        self.faults.stop.end();
    }
}

/// The simulated device. `P` holds the ports, `Q` the queue tables (`ports.len() *
/// MAX_QUEUES` rows), `B` scratch (at least [`MIN_SCRATCH`] bytes, [`SCRATCH_LEN`] for
/// 64 KiB TSO).
pub struct Device<P, Q, B> {
    ports: P,
    queues: Q,
    scratch: B,
    bad_mmio: u64,
    rr: Cursor,
    hwc: hwc::HwcDev,
}

/// The engine's round-robin position, kept across runs so that budgeted runs serve the SQs
/// in the same order as one unbudgeted run.
#[derive(Clone, Copy, Default)]
struct Cursor {
    /// Global index (`port * MAX_QUEUES + slot`) of the SQ served next.
    next: usize,
    /// WQEs of that SQ's current burst already executed.
    used: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Sq,
    Rq,
    Cq,
    Eq,
}

fn base(k: Kind) -> u32 {
    match k {
        Kind::Sq => SQ_ID_BASE,
        Kind::Rq => RQ_ID_BASE,
        Kind::Cq => CQ_ID_BASE,
        Kind::Eq => EQ_ID_BASE,
    }
}

fn split_id(id: u32, k: Kind) -> Option<(usize, usize)> {
    let rel = id.checked_sub(base(k))? as usize;
    let port = rel / MAX_QUEUES;
    (port < MAX_PORTS).then_some((port, rel % MAX_QUEUES))
}

fn make_id(k: Kind, port: usize, slot: usize) -> u32 {
    base(k) + (port * MAX_QUEUES + slot) as u32
}

fn used(r: &QueueSet, k: Kind) -> bool {
    match k {
        Kind::Sq => r.sq.used,
        Kind::Rq => r.rq.used,
        Kind::Cq => r.cq.used,
        Kind::Eq => r.eq.used,
    }
}

impl<P, Q, B> Device<P, Q, B>
where
    P: DerefMut<Target = [Port]>,
    Q: DerefMut<Target = [QueueSet]>,
    B: DerefMut<Target = [u8]>,
{
    /// A device with `ports.len()` ports (1..=[`MAX_PORTS`]).
    pub fn new(ports: P, queues: Q, scratch: B) -> Result<Self, CmdError> {
        if ports.is_empty()
            || ports.len() > MAX_PORTS
            || queues.len() < ports.len() * MAX_QUEUES
            || scratch.len() < MIN_SCRATCH
        {
            return Err(CmdError::BadParam);
        }
        Ok(Self {
            ports,
            queues,
            scratch,
            bad_mmio: 0,
            rr: Cursor::default(),
            hwc: hwc::HwcDev::new(),
        })
    }

    /// Number of ports.
    pub fn num_ports(&self) -> usize {
        self.ports.len()
    }

    fn row(&self, port: usize, slot: usize) -> Option<&QueueSet> {
        if slot >= MAX_QUEUES || port >= self.ports.len() {
            return None;
        }
        self.queues.get(port * MAX_QUEUES + slot)
    }

    fn row_mut(&mut self, port: usize, slot: usize) -> Option<&mut QueueSet> {
        if slot >= MAX_QUEUES || port >= self.ports.len() {
            return None;
        }
        self.queues.get_mut(port * MAX_QUEUES + slot)
    }

    fn loc(&self, id: u32, k: Kind) -> Result<(usize, usize), CmdError> {
        let (p, s) = split_id(id, k).ok_or(CmdError::NoSuchQueue)?;
        match self.row(p, s) {
            Some(r) if used(r, k) => Ok((p, s)),
            _ => Err(CmdError::NoSuchQueue),
        }
    }

    /// A 64-bit register write at `offset`, bytes in bus order (a little-endian u64).
    pub fn mmio_write64(&mut self, offset: u32, bytes: [u8; 8]) {
        self.resume();
        let Some(rel) = offset.checked_sub(DB_PAGE_BASE) else {
            self.bad_mmio = self.bad_mmio.wrapping_add(1);
            return;
        };
        let page = rel / DB_PAGE_SIZE;
        let reg = rel % DB_PAGE_SIZE;
        let v = u64::from_le_bytes(bytes);
        if page >= DB_PAGES {
            self.bad_mmio = self.bad_mmio.wrapping_add(1);
            return;
        }
        if self.hwc_doorbell(page, reg, v) {
            return;
        }
        let lo = v as u32;
        let hi = (v >> 32) as u32;
        let kind = match reg {
            DB_SQ => Kind::Sq,
            DB_RQ => Kind::Rq,
            DB_CQ => Kind::Cq,
            DB_EQ => Kind::Eq,
            _ => {
                self.bad_mmio = self.bad_mmio.wrapping_add(1);
                return;
            }
        };
        let id = if kind == Kind::Eq {
            lo & 0xffff
        } else {
            lo & 0x00ff_ffff
        };
        // A queue's doorbells go to its port's page (page p for port p), or after
        // GDMA_REGISTER_DEVICE to the registered page for every port. Counted on the queue's
        // port when the page is right, else on the page's port.
        let registered = self.hwc.registered();
        let page_ok = |p: usize| {
            if registered {
                page == MANA_DB_ID
            } else {
                page as usize == p
            }
        };
        let port = match split_id(id, kind) {
            Some((p, _)) if p < self.ports.len() && page_ok(p) => p,
            _ => page as usize,
        };
        if port >= self.ports.len() {
            self.bad_mmio = self.bad_mmio.wrapping_add(1);
            return;
        }
        let slot = match split_id(id, kind) {
            Some((p, s))
                if p == port && page_ok(p) && self.row(p, s).is_some_and(|r| used(r, kind)) =>
            {
                Some(s)
            }
            _ => None,
        };
        let Some(pt) = self.ports.get_mut(port) else {
            return;
        };
        let c = &mut pt.counters;
        c.pcie.doorbell();
        match kind {
            Kind::Sq => c.sq_doorbells += 1,
            Kind::Rq => c.rq_doorbells += 1,
            Kind::Cq => c.cq_doorbells += 1,
            Kind::Eq => c.eq_doorbells += 1,
        }
        let Some(s) = slot else {
            c.bad_doorbells += 1;
            return;
        };
        if kind == Kind::Rq && (lo >> 24) != 0 {
            c.rq_db_wqe_cnt_errors += 1;
            return;
        }
        c.doorbells += 1;
        let arm = hi >> 31 != 0;
        let tail31 = hi & 0x7fff_ffff;
        if kind == Kind::Cq && arm {
            c.cq_arms += 1;
        }
        let mut invalid = false;
        let mut sq_work = false;
        let Some(r) = self.queues.get_mut(port * MAX_QUEUES + s) else {
            return;
        };
        match kind {
            Kind::Sq | Kind::Rq => {
                let q = r.wq_mut(kind);
                let ahead = hi.wrapping_sub(q.cons);
                if ahead > q.size || hi % 32 != 0 {
                    invalid = true;
                } else {
                    q.tail = hi;
                    sq_work = kind == Kind::Sq && ahead > 0 && !q.error;
                }
            }
            Kind::Cq => {
                r.cq.since_db = 0;
                if arm {
                    r.cq.armed = true;
                    r.cq.arm_tail = tail31;
                }
            }
            Kind::Eq => {
                if arm {
                    r.eq.armed = true;
                    r.eq.arm_tail = tail31;
                }
            }
        }
        let Some(pt) = self.ports.get_mut(port) else {
            return;
        };
        if invalid {
            pt.counters.db_invalid += 1;
        }
        if sq_work {
            pt.sq_work |= 1 << s;
        }
        if kind == Kind::Cq && arm {
            pt.cq_arm |= 1 << s;
        }
        if kind == Kind::Eq && arm {
            pt.eq_arm |= 1 << s;
        }
    }

    /// A 32-bit register write: the SMC window's dwords; anything else counts as bad.
    pub fn mmio_write32(&mut self, offset: u32, value: u32) {
        self.resume();
        if !self.smc_write(offset, value) {
            self.bad_mmio = self.bad_mmio.wrapping_add(1);
        }
    }

    /// A 32-bit register read: the doorbell page base (0x08 low, 0x0C high) and size (0x10);
    /// anything else reads all ones and counts as bad.
    pub fn mmio_read32(&mut self, offset: u32) -> u32 {
        if let Some(v) = self.smc_read(offset) {
            return v;
        }
        match offset {
            REG_DB_PAGE_BASE => DB_PAGE_BASE,
            0x0C => 0,
            REG_DB_PAGE_SIZE => DB_PAGE_SIZE,
            REG_SHM_OFFSET => SMC_BASE,
            0x1C => 0,
            _ => {
                self.bad_mmio = self.bad_mmio.wrapping_add(1);
                u32::MAX
            }
        }
    }

    /// Runs the device until it has no work (SQs paused by flow control wait for the next
    /// register write, those of a stalled or stopped port for the end of the fault). Returns
    /// the TX WQEs executed.
    pub fn process<M: BusMemory, I: InterruptSink>(&mut self, mem: &M, irq: &mut I) -> usize {
        crate::sim::drain(|budget| self.process_budget(mem, irq, budget))
    }

    /// Like [`Device::process`] but executes at most `budget` TX WQEs (over all SQs, round
    /// robin, at most [`SQ_BURST`] per SQ in a row). CQ and EQ arm requests are evaluated
    /// even with a budget of 0 (not those of a stopped port). Returns (TX WQEs executed,
    /// whether an SQ that is not paused, stalled or stopped still has work). Repeated calls
    /// produce the same device-visible results as one [`Device::process`].
    pub fn process_budget<M: BusMemory, I: InterruptSink>(
        &mut self,
        mem: &M,
        irq: &mut I,
        budget: usize,
    ) -> (usize, bool) {
        if self.scratch.len() < MIN_SCRATCH {
            return (0, false);
        }
        self.hwc_run(mem, irq);
        let (frame, gather) = self.scratch.split_at_mut(MAX_FRAME);
        let mut io = engine::Io {
            mem,
            irq,
            frame,
            gather,
        };
        engine::run(
            &mut self.ports,
            &mut self.queues,
            &mut self.rr,
            &mut io,
            budget,
        )
    }
}
