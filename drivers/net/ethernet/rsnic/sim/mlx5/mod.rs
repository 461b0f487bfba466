// SPDX-License-Identifier: GPL-2.0

//! A simulated ConnectX (mlx5) Ethernet device.
//!
//! The device decodes the formats of Documentation/networking/device_drivers/ethernet/
//! rsnic-hardware.rst, parts A–C, itself (this is an independent implementation of those
//! facts and a cross-check of the driver's); it shares no code with the driver-side data
//! path but the byte order of [`crate::hwif::bytes`].
//!
//! This file holds the device's state ([`Device`], its [`Port`]s, [`Caps`], the constants of
//! its windows and object numbers) and its wiring: register writes and reads decoded into
//! doorbells and command-queue rings, and the engine run that follows. The rest is in:
//!
//! * [`cmd`]: the command interface (PRM "Command Interface"; one file per command group,
//!   named as the driver's halves in `hwif/mlx5/cmd/`, but for `rss.rs`: RQT and TIR, which
//!   the driver keeps in its `res.rs`), with [`ifc`] its layouts (mlx5_ifc.h).
//! * `eq.rs`: event queues (eq.c); [`pas`]: page lists of queue buffers; [`steer`]: the
//!   flow-table lookup of a received frame.
//! * `engine.rs`: SQ execution, delivery, RX, CQEs, interrupts (spec parts A–C).
//! * `queues.rs`: a row of object contexts ([`QueueSet`]); `tables.rs`: the object tables
//!   and queue lifecycles; `counters.rs`: the model's own counters ([`PortCounters`]);
//!   `api.rs`: the device host's back door (below).
//! * `faults.rs`: the faults a device host injects ([`Fault`]).
//! * [`crate::sim::wire`]: the wire between the ports and its flow control, and
//!   [`crate::sim::fault`]: the data-path stop, both shared with the MANA model.
//!
//! # Ports and wiring
//!
//! A device has N ports (`ports.len()`, default 2 in the host test bed), wired back to back
//! in pairs: port 2k ↔ port 2k+1. A packet sent on a port's SQ arrives at the peer port. A
//! port without a peer (the last one of an odd count) drops what it sends. Each port has a
//! link state ([`Device::set_link`], up after creation): a packet is dropped and counted in
//! [`PortCounters::tx_link_down_drops`] of the sending port when either end is down, or when
//! the two ports' link modes (PTYS) resolve to none ([`cmd::link`]: autonegotiation picks
//! the fastest mode both advertise, forced ports must force the same one).
//!
//! **Loopback** ([`Device::set_loopback`], off after creation; what `ethtool -K <dev> loopback
//! on`, `NETIF_F_LOOPBACK`, asks for). A port in loopback delivers every frame it transmits
//! to its own receive side instead of its peer: RSS, RQ selection, RX CQEs and RX counters
//! exactly as for a frame that arrived from the wire. As ConnectX's internal loopback, the
//! frame turns around inside the device, before the MAC and the wire: neither end's link
//! state matters (a looped port carries traffic to itself while it or its peer is down, and
//! a port without a peer loops too), the peer sees nothing, and the carrier the driver sees
//! ([`Device::link_up`]) does not change. Looped frames count in the sender's
//! [`PortCounters::tx_packets`] / [`PortCounters::tx_bytes`] (they left its SQs) and also in
//! [`PortCounters::loopback_packets`] / [`PortCounters::loopback_bytes`], so the peer's
//! receive outcomes balance `tx_packets − loopback_packets`. The switch governs the port's
//! transmit direction only: frames its peer sends still arrive when both links are up. It
//! takes effect for the next frame the engine sends; a WQE already executed was delivered
//! under the old setting, so toggling between runs loses nothing. Flow control
//! ([`Device::set_pause`]) follows the frames: a looping port pauses on its own RQs.
//!
//! **Flow control** (802.3x global pause, per port and direction as PFCC sets it: `pptx`
//! "send PAUSE", `pprx` "honour PAUSE"; both on after creation, as ConnectX ships). The port
//! that receives a port's frames (the peer, or the port itself in loopback) watches its RSS
//! table's RQs: when one has fewer than [`PAUSE_THRESHOLD`] (at most half the RQ) posted
//! WQEs as the sender is about to execute a WQE that puts a frame on the wire (not a NOP),
//! the receiver, if its TX pause is on, transmits a PAUSE frame to the sender: counted in
//! the receiver's [`PortCounters::tx_pause_frames`] and the sender's
//! [`PortCounters::rx_pause_frames`] (PPCNT's `a_pause_mac_ctrl_frames_transmitted` /
//! `_received`). The sender honours it if its RX pause is on: the SQ waits
//! ([`PortCounters::tx_pause`]) and is retried on the next engine run (every register write
//! runs the engine; a driver re-arms its RX CQ after refilling). Otherwise the frame goes
//! out and the receiver drops what it has no buffer for
//! ([`PortCounters::rx_out_of_buffer`]). A PAUSE covers the whole engine run it arrived in
//! (a pause quantum): a receiver sends at most one per run to each sender, and a run after
//! the receiver found room again sends none. The receiver's stall prevention
//! ([`PAUSE_STORM`]) stops its PAUSE frames while it stays short for long.
//!
//! # Control plane: command interface and event queues
//!
//! Each port is one PCI function with its own window of [`FUNC_BAR_SIZE`] bytes in BAR0: its
//! initialization segment, command queue and commands are [`cmd`]'s (documented there, one
//! file per command group as in the driver's `hwif/mlx5/cmd/`), its event queues `eq.rs`'s.
//!
//! # Rust API (the device host's back door)
//!
//! [`Device::create_cq`], [`Device::create_sq`], [`Device::create_rq`], their `destroy_*`,
//! [`Device::reset_sq`] / [`Device::reset_rq`] (ERR → RST → RDY, counters at 0),
//! [`Device::set_rss`], [`Device::set_link`], [`Device::set_pause`],
//! [`Device::set_loopback`] remain for the test fixtures and, transitionally, for the driver
//! until it switches to commands. Queues made this way are ready at once, rung through UAR
//! page [`API_UAR`] of their port ([`api_uar_offset`]), and their CQs raise
//! [`CqConfig::vector`] directly, without an EQ. Errors are a [`CmdError`], never a panic.
//! Tables have a fixed capacity of [`MAX_QUEUES`] objects of each kind per port and
//! [`MAX_RSS`] RSS entries per port; nothing allocates. The caller provides all storage as
//! slices of small entries ([`Port`], under 1.5 KiB, and [`QueueSet`], under a kilobyte,
//! 64 per port, plus scratch bytes), so no large value is ever built on a (kernel) stack.
//! A queue's CQ must belong to the same port.
//!
//! The device does not initialise CQ or EQ buffers: like mlx5e (spec C.2) the driver fills
//! every CQE with `op_own = 0xF1` before creating the CQ, so the first pass writes owner bit
//! 0; eq.c fills EQE owner bytes with 1.
//!
//! # Doorbells (UAR pages)
//!
//! * UAR + 0x800 ([`SQ_DOORBELL`]): 64-bit SQ doorbell = the first 8 bytes of the ctrl segment
//!   as they sit in memory (`opmod_idx_opcode` ‖ `qpn_ds`); the SQN is `qpn_ds` bits 31..8.
//!   Only offset 0x800 is decoded (mlx5e does no BlueFlame and uses one bfreg). An SQ in RST
//!   or ERR ignores it.
//! * UAR + 0x20 ([`CQ_ARM_DOORBELL`]): CQ arm = {BE32(sn<<28 | cmd | ci), BE32(cqn)}. `cmd`
//!   REQ_NOT (0) and REQ_NOT_SOL (1<<24) both arm (the model has no solicited events).
//! * UAR + 0x40 / 0x48: the EQ doorbells above (32-bit).
//!
//! A register write only latches state (doorbell pending, arm request) and is accounted as
//! one inbound TLP; [`Device::process`] does the work, as the hardware does asynchronously. A
//! write to an unknown offset, port or UAR page that was not allocated ([`Device::bad_mmio`])
//! or naming a queue that is not this function's and this UAR page's
//! ([`PortCounters::bad_doorbells`]) is counted, never a panic. Unknown 32-bit reads return
//! all ones (a master abort) and count as bad too.
//!
//! # Engine
//!
//! `engine.rs` executes what the doorbells latched, as the hardware does asynchronously: SQs
//! (fetch, validation, TX offloads, MPWQE), delivery over the wire or loopback, RX (RSS,
//! steering, scatter, VLAN stripping), CQEs with compression, moderation and interrupts;
//! its module documentation gives the rules.

mod api;
pub mod cmd;
pub mod consts;
mod counters;
mod engine;
mod eq;
mod faults;
pub mod ifc;
pub mod pas;
mod queues;
pub mod steer;
mod tables;

pub use counters::PortCounters;
pub use faults::Fault;
pub use pas::Ring;
pub use queues::{CqConfig, QueueSet, RqConfig, SqConfig, MATCH_LEN, MAX_FT_LEVEL};

pub(super) use queues::{
    CqCtx, Dest, EqCtx, FgCtx, FtCtx, FteCtx, RqCtx, RqtCtx, RxRule, SqCtx, TirCtx, TisCtx,
    MAX_CHAIN,
};
pub(super) use tables::Tables;

use faults::Faults;

use crate::hwif::hw::{BusMemory, InterruptSink};
use crate::sim::wire;
use core::ops::DerefMut;

/// SQs, RQs and CQs per port.
pub const MAX_QUEUES: usize = 64;
/// Maximum entries of the RSS table the device host sets through the Rust API
/// ([`Device::set_rss`]).
pub const MAX_RSS: usize = 64;
const _: () = assert!(MAX_RSS <= u8::MAX as usize);
/// Largest RQ table (RQT) the model implements: `log_max_rqt_size` 8, the 256 entries of
/// mlx5e's indirection table (`MLX5E_INDIR_MIN_RQT_SIZE`).
pub const MAX_RQT_SIZE: usize = 256;
/// Maximum number of ports.
pub const MAX_PORTS: usize = 64;
/// Size of one port's (PCI function's) window in BAR0: port p's starts at
/// `p * FUNC_BAR_SIZE`, with the initialization segment at its offset 0.
pub const FUNC_BAR_SIZE: u32 = 0x10_0000;
/// Size of one UAR page; UAR page u of port p starts at [`uar_offset`]`(p, u)`.
pub const UAR_PAGE_SIZE: u32 = 4096;
/// First UAR index ALLOC_UAR hands out (pages 0 and 1 hold the initialization segment).
pub const FIRST_UAR: u32 = 8;
/// UAR pages ALLOC_UAR hands out per function ([`FIRST_UAR`] ..
/// `FIRST_UAR + MAX_UARS`).
pub const MAX_UARS: u32 = 64;
/// The UAR page of queues created through the Rust API (transitional; never handed out by
/// ALLOC_UAR).
pub const API_UAR: u32 = 2;
/// Offset of the EQ doorbell "update consumer index and arm" in a UAR page (32-bit,
/// `eqn << 24 | ci`).
pub const EQ_ARM_DOORBELL: u32 = 0x40;
/// Offset of the EQ doorbell "update consumer index" (no arm).
pub const EQ_CI_DOORBELL: u32 = 0x48;
/// MSI-X vectors per function: EQ `intr` v of port p raises device vector
/// `p * MAX_VECTORS + v`.
pub const MAX_VECTORS: u32 = 64;
/// Offset of the SQ doorbell (blue-flame register 0) in a UAR page.
pub const SQ_DOORBELL: u32 = 0x800;
/// Offset of the CQ arm doorbell in a UAR page.
pub const CQ_ARM_DOORBELL: u32 = 0x20;
/// First SQ number; SQN = `SQN_BASE + port * 64 + slot`.
pub const SQN_BASE: u32 = 0x1000;
/// First RQ number.
pub const RQN_BASE: u32 = 0x2000;
/// First CQ number.
pub const CQN_BASE: u32 = 0x3000;
/// First TIS number (same encoding as queues).
pub const TISN_BASE: u32 = 0x4000;
/// First RQT number.
pub const RQTN_BASE: u32 = 0x5000;
/// First TIR number.
pub const TIRN_BASE: u32 = 0x6000;
/// First PD number.
pub const PD_BASE: u32 = 0x7000;
/// First transport domain number.
pub const TD_BASE: u32 = 0x8000;
/// First flow table id (NIC RX tables; same encoding as queues).
pub const FT_BASE: u32 = 0x9000;
/// First flow group id.
pub const FG_BASE: u32 = 0xa000;
/// First EQ number; EQ numbers are per function (8 bits): `EQN_BASE + slot`.
pub const EQN_BASE: u32 = 0x40;
/// Largest frame (without FCS) a port sends or receives.
pub const MAX_FRAME: usize = 9728;
/// Minimum scratch buffer for [`Device::new`]: a frame buffer plus a gather buffer of one frame.
pub const MIN_SCRATCH: usize = pas::POOL_BYTES + 2 * MAX_FRAME;
/// Scratch size that lets LSO carry a 64 KiB payload plus headers.
pub const SCRATCH_LEN: usize = pas::POOL_BYTES + MAX_FRAME + 65536 + 1024;
/// Flow control's thresholds (the model's pause quantum is one engine run): see
/// [`crate::sim::wire`].
pub use crate::sim::wire::{PAUSE_STORM, PAUSE_THRESHOLD};
/// WQEs one SQ processes before the engine moves to the next SQ.
pub const SQ_BURST: usize = 64;
/// Maximum CQEs in one compression session.
pub const MAX_SESSION: u32 = 64;

/// Why a control-path command failed (shared by both models: [`crate::sim::CmdError`]).
pub use crate::sim::CmdError;

/// Why the device rejected a send WQE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WqeError {
    /// Opcode not NOP/SEND/LSO/ENHANCED_MPSW.
    BadOpcode,
    /// opmod not 0.
    BadOpmod,
    /// WQE index differs from the device's consumer counter.
    BadIndex,
    /// SQN in the ctrl segment is not this SQ.
    BadSqn,
    /// DS count too small for the opcode.
    BadDsCount,
    /// The WQE extends past the doorbell record's producer counter.
    NotPosted,
    /// The WQE crosses the end of the ring.
    CrossesRingEnd,
    /// Inline header or inline segment does not fit the WQE, or is not allowed here.
    BadInline,
    /// A data segment with byte count 0, or an inline segment of length 0.
    ZeroByteCount,
    /// A packet shorter than an Ethernet header.
    TooShort,
    /// A packet longer than [`MAX_FRAME`] (or an LSO super packet longer than the gather buffer).
    TooLong,
    /// mss set on SEND/MPWQE, or 0 on LSO.
    BadMss,
    /// LSO without a complete, parsable header in the inline part.
    LsoHeaders,
    /// The WQE or a data segment address is not readable.
    ReadFault,
    /// A data segment's lkey is not a memory key of the function (checked once the
    /// function has created one: see [`PortCounters::mkey_errors`]).
    BadLkey,
}

impl WqeError {
    /// The CQE syndrome (spec C.1).
    pub fn syndrome(self) -> u8 {
        use consts::*;
        match self {
            Self::BadOpcode | Self::BadOpmod | Self::BadIndex | Self::BadSqn => SYND_LOCAL_QP_OP,
            Self::BadMss | Self::LsoHeaders => SYND_LOCAL_QP_OP,
            Self::ReadFault | Self::BadLkey => SYND_LOCAL_PROT,
            Self::BadDsCount
            | Self::NotPosted
            | Self::CrossesRingEnd
            | Self::BadInline
            | Self::ZeroByteCount
            | Self::TooShort
            | Self::TooLong => SYND_LOCAL_LENGTH,
        }
    }

    /// The model's own reason code, written to `vendor_err_synd` (byte 54): 1 + the variant's
    /// position in this enum (BadOpcode = 1 … ReadFault = 14).
    pub fn vendor_code(self) -> u8 {
        self as u8 + 1
    }
}

/// State of a work queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueState {
    /// Created or reset by command: doorbells are ignored, no work is done.
    Reset,
    /// Processing work.
    Ready,
    /// Stopped after an error; needs a reset.
    Error,
}

/// State of one port: link, RSS table, work flags, counters, and the function's command
/// interface state. Opaque; create with [`Port::new`] and hand a slice of them to
/// [`Device::new`].
pub struct Port {
    /// The port's administrative state (PAOS, or [`Device::set_link`] from the device host).
    link_up: bool,
    /// The Rust API's RSS table ([`Device::set_rss`]; RQ slots).
    rss: [u8; MAX_RSS],
    /// Entries of `rss` in use (at most [`MAX_RSS`]; a byte keeps the port's entry small).
    rss_len: u8,
    /// Received frames go through the Rust API's table (it was written after the last
    /// command that changed the steering).
    rx_api: bool,
    /// No root flow table: the first indirect TIR hashes every frame over its addresses
    /// and TCP/UDP ports, whatever its field selector (the model before flow tables).
    rx_legacy: bool,
    /// The RQ slots a received frame can reach (flow control checks them).
    rx_rqs: u64,
    /// SQs with a doorbell whose record has not been read yet.
    sq_doorbell: u64,
    /// SQs with WQEs between cc and the last read pc.
    sq_active: u64,
    /// SQs paused by flow control until the next engine run.
    sq_paused: u64,
    /// Flow control (PFCC `pprx`: `rx`, `pptx`: `tx`; the pause quantum is one engine run).
    pause: wire::Pause,
    /// Deliver transmitted frames to this port's own receive side ([`Device::set_loopback`]).
    loopback: bool,
    /// CQs with an arm request to evaluate.
    arm_pending: u64,
    /// CQs held back by moderation, evaluated again at the start of every engine run.
    moder_wait: u64,
    /// EQs with an arm request to evaluate.
    eq_arm_pending: u64,
    /// CQs that name an EQ (0: the EQ pass after an engine run has nothing to look at).
    eq_cqs: u16,
    counters: PortCounters,
    func: cmd::Func,
    /// Faults waiting for the event they apply to ([`Device::inject`]).
    faults: Faults,
}

impl Default for Port {
    fn default() -> Self {
        Self::new()
    }
}

wire::wire_port!(Port, pause_storms);

impl Port {
    /// A port with link up and no queues, its function disabled (no command queue yet).
    pub const fn new() -> Self {
        Self {
            link_up: true,
            rss: [0; MAX_RSS],
            rss_len: 0,
            rx_api: false,
            rx_legacy: false,
            rx_rqs: 0,
            sq_doorbell: 0,
            sq_active: 0,
            sq_paused: 0,
            pause: wire::Pause::new(true),
            loopback: false,
            arm_pending: 0,
            moder_wait: 0,
            eq_arm_pending: 0,
            eq_cqs: 0,
            counters: PortCounters::ZERO,
            func: cmd::Func::NEW,
            faults: Faults {
                tx_err: None,
                rx_err: None,
                rx_bad_wc: false,
                drop_irqs: 0,
                tx_stall: false,
                tx_bad_sqn: false,
                tx_bad_owner: false,
                rx_bad_len: false,
                dma_read: false,
                stop: crate::sim::fault::Stop::OFF,
            },
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

    /// The driver reset (RST) or destroyed a queue of the port: a stop ends.
    fn restart(&mut self) {
        self.faults.stop.end();
    }
}

/// What the device supports, given by the device host at creation ([`Device::with_caps`]);
/// reported through QUERY_HCA_CAP and enforced by the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// Enhanced multi-packet send WQEs (`enhanced_multi_pkt_send_wqe`): without it an
    /// ENHANCED_MPSW WQE gets an error CQE (bad opcode) and `allow_multi_pkt_send_wqe` in an
    /// SQ context is refused.
    pub mpwqe: bool,
    /// Minimum WQE inline mode the device requires (0 none, 1 L2, 2 IP, 3 TCP/UDP): an SQ
    /// created with a lower `min_wqe_inline_mode` is refused (BAD_PARAM). Reported as
    /// `wqe_inline_mode` = 0 (L2 required) when 1, 2 (not required) when 0, 1 (vport
    /// context) otherwise; QUERY_NIC_VPORT_CONTEXT returns the mode itself. On an SQ with a
    /// mode, a SEND or LSO WQE needs at least the Ethernet header inline and every packet of
    /// an ENHANCED_MPSW WQE must be an inline segment (a packet by address is refused:
    /// BadInline).
    pub min_inline: u8,
    /// Basic CQE compression (`cqe_compression`): without it `cqe_comp_en` is refused.
    pub cqe_compression: bool,
    /// log2 of the largest CQ (CQEs), at most 22.
    pub log_max_cq_sz: u8,
    /// log2 of the largest SQ/RQ (WQEs / WQEBBs), at most 15.
    pub log_max_wq_sz: u8,
    /// log2 of the largest EQ (EQEs), at most 22.
    pub log_max_eq_sz: u8,
    /// log2 of the largest RQ table, at most log2([`MAX_RQT_SIZE`]).
    pub log_max_rqt_size: u8,
    /// The largest send WQE in bytes (`max_wqe_sz_sq`), a multiple of 64 from 64 to 1024
    /// (the 6-bit DS count's 16 WQEBBs): a larger WQE gets an error CQE (bad DS count).
    pub max_wqe_sz_sq: u16,
    /// The port's largest MTU (PMTU `max_mtu`, the hardware's: frame without FCS plus the
    /// FCS), from 1522 to [`cmd::PORT_MAX_MTU`]: a PMTU write above it is refused.
    pub port_max_mtu: u16,
}

impl Caps {
    /// Everything the model implements.
    pub const FULL: Self = Self {
        mpwqe: true,
        min_inline: 0,
        cqe_compression: true,
        log_max_cq_sz: 22,
        log_max_wq_sz: 15,
        log_max_eq_sz: 22,
        log_max_rqt_size: 8,
        max_wqe_sz_sq: 1024,
        port_max_mtu: cmd::PORT_MAX_MTU as u16,
    };

    fn sane(&self) -> bool {
        self.min_inline <= 3
            && (1..=22).contains(&self.log_max_cq_sz)
            && self.log_max_wq_sz <= 15
            && (1..=22).contains(&self.log_max_eq_sz)
            && (1usize << self.log_max_rqt_size) <= MAX_RQT_SIZE
            && (64..=1024).contains(&self.max_wqe_sz_sq)
            && self.max_wqe_sz_sq % 64 == 0
            && (1522..=cmd::PORT_MAX_MTU).contains(&u32::from(self.port_max_mtu))
    }
}

impl Default for Caps {
    fn default() -> Self {
        Self::FULL
    }
}

/// The simulated device.
///
/// `P` holds the ports and `Q` the queue tables (`ports.len() * MAX_QUEUES` entries of
/// [`QueueSet::EMPTY`]); the host passes `Vec`s, the kernel `KVec`s. `B` is scratch memory
/// for gathering and segmenting packets, at least [`MIN_SCRATCH`] bytes ([`SCRATCH_LEN`] to
/// carry 64 KiB LSO payloads): the first [`MAX_FRAME`] bytes build output frames, the rest
/// gathers a WQE's packet; the command processor borrows it before the engine runs.
pub struct Device<P, Q, B> {
    ports: P,
    queues: Q,
    scratch: B,
    wqe: [u8; 1024],
    bad_mmio: u64,
    caps: Caps,
    /// The clock of CQ moderation, nanoseconds ([`Device::set_clock`]).
    now: u64,
}

pub(super) fn split_qn(qn: u32, base: u32) -> Option<(usize, usize)> {
    let rel = qn.checked_sub(base)? as usize;
    let port = rel / MAX_QUEUES;
    if port >= MAX_PORTS {
        return None;
    }
    Some((port, rel % MAX_QUEUES))
}

pub(super) fn make_qn(base: u32, port: usize, slot: usize) -> u32 {
    base + (port * MAX_QUEUES + slot) as u32
}

/// BAR0 offset of UAR page `uar` of port (function) `port`.
pub const fn uar_offset(port: usize, uar: u32) -> u32 {
    (port as u32)
        .wrapping_mul(FUNC_BAR_SIZE)
        .wrapping_add(uar.wrapping_mul(UAR_PAGE_SIZE))
}

/// BAR0 offset of the UAR page that rings the queues created through the Rust API
/// ([`Device::create_cq`], [`Device::create_sq`]) of `port`: page [`API_UAR`] of its window.
/// Transitional, for the driver that still creates its queues through the Rust API.
pub const fn api_uar_offset(port: usize) -> u32 {
    uar_offset(port, API_UAR)
}

fn row(q: &[QueueSet], port: usize, slot: usize) -> Option<&QueueSet> {
    if slot >= MAX_QUEUES {
        return None;
    }
    q.get(port * MAX_QUEUES + slot)
}

impl<P, Q, B> Device<P, Q, B>
where
    P: DerefMut<Target = [Port]>,
    Q: DerefMut<Target = [QueueSet]>,
    B: DerefMut<Target = [u8]>,
{
    /// A device with `ports.len()` ports (1..=[`MAX_PORTS`]), queue tables of at least
    /// `ports.len() * MAX_QUEUES` entries and `scratch` of at least [`MIN_SCRATCH`] bytes,
    /// with every capability of the model ([`Caps::FULL`]). Fails with
    /// [`CmdError::BadParam`] otherwise.
    pub fn new(ports: P, queues: Q, scratch: B) -> Result<Self, CmdError> {
        Self::with_caps(ports, queues, scratch, Caps::FULL)
    }

    /// Like [`Device::new`] with the capabilities `caps` (which must be within what the
    /// model implements, [`Caps::FULL`]).
    pub fn with_caps(mut ports: P, queues: Q, scratch: B, caps: Caps) -> Result<Self, CmdError> {
        if ports.is_empty()
            || ports.len() > MAX_PORTS
            || queues.len() < ports.len() * MAX_QUEUES
            || scratch.len() < MIN_SCRATCH
            || !caps.sane()
        {
            return Err(CmdError::BadParam);
        }
        for (i, p) in ports.iter_mut().enumerate() {
            p.func.set_port_index(i);
        }
        Ok(Self {
            ports,
            queues,
            scratch,
            wqe: [0; 1024],
            bad_mmio: 0,
            caps,
            now: 0,
        })
    }

    /// The capabilities the device was created with.
    pub fn caps(&self) -> Caps {
        self.caps
    }

    /// Number of ports.
    pub fn num_ports(&self) -> usize {
        self.ports.len()
    }

    fn tables(&mut self) -> Tables<'_> {
        // The scratch holds at least MIN_SCRATCH bytes (checked at creation), the pool first.
        let pool = self.scratch.get_mut(..pas::POOL_BYTES).unwrap_or_default();
        Tables {
            ports: &mut self.ports,
            queues: &mut self.queues,
            pool,
            now: self.now,
        }
    }

    fn tables_ref(&self) -> (&[Port], &[QueueSet]) {
        (&self.ports, &self.queues)
    }

    /// A 64-bit register write at `offset` in BAR0, bytes in bus (memory) order: the SQ
    /// doorbell and the CQ arm doorbell of a UAR page.
    pub fn mmio_write64(&mut self, offset: u32, bytes: [u8; 8]) {
        let port = (offset / FUNC_BAR_SIZE) as usize;
        let page = (offset % FUNC_BAR_SIZE) / UAR_PAGE_SIZE;
        let reg = offset % UAR_PAGE_SIZE;
        let known_page = self
            .ports
            .get(port)
            .is_some_and(|p| page == API_UAR || p.func.uar_allocated(page));
        if !known_page || (reg != SQ_DOORBELL && reg != CQ_ARM_DOORBELL) {
            self.bad_mmio = self.bad_mmio.wrapping_add(1);
            return;
        }
        let hi = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        let lo = u32::from_be_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
        let sq = reg == SQ_DOORBELL;
        let (kind, qn) = if sq {
            (SQN_BASE, lo >> 8)
        } else {
            (CQN_BASE, lo & 0xff_ffff)
        };
        // The queue must exist, belong to this function and to this UAR page.
        let slot = match split_qn(qn, kind) {
            Some((p, slot)) if p == port => row(&self.queues, p, slot).and_then(|r| {
                let (used, uar) = if sq {
                    (r.sq.used, r.sq.uar)
                } else {
                    (r.cq.used, r.cq.uar)
                };
                (used && u32::from(uar) == page).then_some((slot, r.sq.state))
            }),
            _ => None,
        };
        let Some(pt) = self.ports.get_mut(port) else {
            return;
        };
        pt.counters.pcie.doorbell();
        if sq {
            pt.counters.sq_doorbells += 1;
        } else {
            pt.counters.arm_doorbells += 1;
        }
        let Some((slot, state)) = slot else {
            pt.counters.bad_doorbells += 1;
            return;
        };
        pt.counters.doorbells += 1;
        if sq {
            if state == QueueState::Ready {
                pt.sq_doorbell |= 1u64 << slot;
            }
            return;
        }
        pt.arm_pending |= 1u64 << slot;
        if let Some(r) = self.queues.get_mut(port * MAX_QUEUES + slot) {
            r.cq.armed = true;
            r.cq.arm_sn = ((hi >> 28) & 3) as u8;
            r.cq.arm_ci = hi & 0xff_ffff;
        }
    }

    /// A 32-bit register write (the register's value): the initialization segment's command
    /// queue address and doorbell, and the EQ doorbells of a UAR page.
    pub fn mmio_write32(&mut self, offset: u32, value: u32) {
        let port = (offset / FUNC_BAR_SIZE) as usize;
        let within = offset % FUNC_BAR_SIZE;
        let page = within / UAR_PAGE_SIZE;
        let ok = match self.ports.get_mut(port) {
            Some(pt) if page < FIRST_UAR => {
                let cmd_eqs = if within == ifc::iseg::CMD_DBELL {
                    (0..MAX_QUEUES)
                        .filter(|&i| {
                            row(&self.queues, port, i).is_some_and(|r| r.eq.used && r.eq.cmd_events)
                        })
                        .count()
                } else {
                    0
                };
                pt.func.iseg_write(within, value, &mut pt.counters, cmd_eqs)
            }
            Some(pt) if pt.func.uar_allocated(page) => {
                let reg = within % UAR_PAGE_SIZE;
                if reg == EQ_ARM_DOORBELL || reg == EQ_CI_DOORBELL {
                    pt.counters.pcie.doorbell();
                    pt.counters.eq_doorbells += 1;
                    let slot = (value >> 24).wrapping_sub(EQN_BASE) as usize;
                    match row(&self.queues, port, slot) {
                        Some(r) if r.eq.used && u32::from(r.eq.uar) == page => {
                            pt.counters.doorbells += 1;
                            if let Some(r) = self.queues.get_mut(port * MAX_QUEUES + slot) {
                                r.eq.ci = value & 0xff_ffff;
                                if reg == EQ_ARM_DOORBELL {
                                    r.eq.armed = true;
                                    pt.eq_arm_pending |= 1u64 << slot;
                                }
                            }
                        }
                        _ => pt.counters.bad_doorbells += 1,
                    }
                    true
                } else {
                    false
                }
            }
            _ => false,
        };
        if !ok {
            self.bad_mmio = self.bad_mmio.wrapping_add(1);
        }
    }

    /// A 32-bit register read (the register's value) of the initialization segment; anything
    /// else returns all ones (master abort) and counts as bad.
    pub fn mmio_read32(&mut self, offset: u32) -> u32 {
        let port = (offset / FUNC_BAR_SIZE) as usize;
        let within = offset % FUNC_BAR_SIZE;
        let now = self.now;
        match self
            .ports
            .get(port)
            .and_then(|pt| pt.func.iseg_read(within, now))
        {
            Some(v) => v,
            None => {
                self.bad_mmio = self.bad_mmio.wrapping_add(1);
                u32::MAX
            }
        }
    }

    /// Runs the device until it has no work: executes commands and posted WQEs, delivers
    /// packets, writes CQEs and EQEs, raises interrupts. Returns the number of WQEs executed
    /// (good or bad).
    pub fn process<M: BusMemory, I: InterruptSink>(&mut self, mem: &M, irq: &mut I) -> usize {
        crate::sim::drain(|budget| self.process_budget(mem, irq, budget))
    }

    /// Like [`Device::process`] but executes at most `budget` WQEs. Returns (WQEs executed,
    /// whether work is left). Rung commands all execute first; open compression sessions
    /// are always closed before returning.
    pub fn process_budget<M: BusMemory, I: InterruptSink>(
        &mut self,
        mem: &M,
        irq: &mut I,
        budget: usize,
    ) -> (usize, bool) {
        if self.scratch.len() < MIN_SCRATCH {
            return (0, false);
        }
        let (pool, scratch) = self.scratch.split_at_mut(pas::POOL_BYTES);
        {
            let mut t = Tables {
                ports: &mut self.ports,
                queues: &mut self.queues,
                pool: &mut *pool,
                now: self.now,
            };
            cmd::run(&mut t, &self.caps, scratch, mem);
            eq::cmd_events(&mut t, mem, irq);
            eq::port_events(&mut t, mem, irq);
            eq::page_requests(&mut t, mem, irq);
        }
        let (frame, gather) = scratch.split_at_mut(MAX_FRAME);
        let mut bufs = engine::Bufs {
            frame,
            gather,
            wqe: &mut self.wqe,
        };
        let mut io = engine::Io {
            mem,
            irq,
            pool: &*pool,
            mpwqe: self.caps.mpwqe,
            max_wqe_sz: usize::from(self.caps.max_wqe_sz_sq),
            now: self.now,
        };
        let r = engine::run(
            &mut self.ports,
            &mut self.queues,
            &mut bufs,
            &mut io,
            budget,
        );
        let mut t = Tables {
            ports: &mut self.ports,
            queues: &mut self.queues,
            pool,
            now: self.now,
        };
        eq::completions(&mut t, mem, irq);
        r
    }
}
