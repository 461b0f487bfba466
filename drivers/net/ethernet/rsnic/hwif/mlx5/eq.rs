// SPDX-License-Identifier: GPL-2.0

//! mlx5 event queue, driver side (mlx5/core/eq.c, lib/eq.h).
//!
//! * [`Eq::new`] mirrors `create_map_eq`'s `init_eq_buf`: every EQE's owner byte starts at 1
//!   (`MLX5_EQE_OWNER_INIT_VAL`), so the whole ring reads as device-owned on the first pass.
//! * [`Eq::next`] mirrors `next_eqe_sw` and the loop of `mlx5_eq_comp_int` /
//!   `mlx5_eq_async_int`: the EQE at consumer index `cc` belongs to software when
//!   `(owner ^ (cc >> log_sz)) & 1 == 0`, i.e. its owner bit equals the parity of the pass
//!   (the device writes `owner = (pi >> log_sz) & 1`); the body is read after `dma_rmb()`.
//! * [`Eq::update_ci`] mirrors `eq_update_ci`: one 32-bit write of
//!   `(eqn << 24) | (cc & 0xffffff)` at UAR + 0x40 (update and arm) or UAR + 0x48 (update
//!   only).
//! * [`Eq::poll_completions`] mirrors `mlx5_eq_comp_int`: for every completion EQE whose CQ
//!   the caller knows, the CQ's `arm_sn` advances ([`Cq::event`]) and the caller's handler
//!   runs; EQEs for unknown CQs are counted (`"Completion event for bogus CQ"`).
//!
//! Nothing in an EQE is trusted: unknown event types are counted and skipped, the CQ number
//! is handed to the caller for a bounds check, the port number is masked to its 4 bits, a
//! command completion's entry bitmask is handed to the caller, who checks it against the
//! entries it rang (`mlx5_cmd_comp_handler`) and the entry's ownership bit.

use super::cq::{Cq, QueueSetupError};
use crate::hwif::hw::{Barriers, Coherent, Mmio};

/// Size of an EQE (`MLX5_EQE_SIZE`).
pub const EQE_SIZE: usize = 64;
/// Owner byte value of every EQE at creation (`MLX5_EQE_OWNER_INIT_VAL`).
pub const EQE_OWNER_INIT: u8 = 1;
/// Offset of the EQ doorbells in a UAR page (`MLX5_EQ_DOORBEL_OFFSET`): update ci and arm.
pub const EQ_DOORBELL_ARM: u32 = 0x40;
/// Update ci without arming (`eq->doorbell + 2` dwords).
pub const EQ_DOORBELL_CI: u32 = 0x48;
/// Most EQEs one poll consumes (`MLX5_EQ_POLLING_BUDGET`).
pub const EQ_POLLING_BUDGET: u32 = 128;
/// Smallest supported log2 EQ size.
pub const EQ_LOG_SIZE_MIN: u8 = 1;
/// Largest supported log2 EQ size.
pub const EQ_LOG_SIZE_MAX: u8 = 16;

/// Byte offsets in `struct mlx5_eqe` (device.h).
pub mod off {
    /// `type`.
    pub const TYPE: usize = 1;
    /// `sub_type`.
    pub const SUB_TYPE: usize = 3;
    /// `data` (`union ev_data`, 28 bytes).
    pub const DATA: usize = 0x20;
    /// `data.comp.cqn` (BE32, low 24 bits): `mlx5_eqe_comp.reserved[6]` then `cqn`.
    pub const COMP_CQN: usize = DATA + 24;
    /// `data.cmd.vector` (BE32, `mlx5_eqe_cmd`): bit i for command entry i.
    pub const CMD_VECTOR: usize = DATA;
    /// `data.port.port` (`mlx5_eqe_port_state.reserved0[8]` then `port`): port number in
    /// bits 7:4.
    pub const PORT: usize = DATA + 8;
    /// `signature`.
    pub const SIGNATURE: usize = 62;
    /// `owner` (bit 0).
    pub const OWNER: usize = 63;
}

/// Event type: completion (`MLX5_EVENT_TYPE_COMP`).
pub const EVENT_TYPE_COMP: u8 = 0x00;
/// Event type: port change (`MLX5_EVENT_TYPE_PORT_CHANGE`).
pub const EVENT_TYPE_PORT_CHANGE: u8 = 0x09;
/// Event type: command completion (`MLX5_EVENT_TYPE_CMD`), posted for completed command
/// entries to an EQ whose `event_bitmask` has this bit (mlx5_core's command EQ, events mode).
pub const EVENT_TYPE_CMD: u8 = 0x0a;
/// Port-change sub type: down (`MLX5_PORT_CHANGE_SUBTYPE_DOWN`).
pub const PORT_CHANGE_SUBTYPE_DOWN: u8 = 1;
/// Port-change sub type: active (`MLX5_PORT_CHANGE_SUBTYPE_ACTIVE`).
pub const PORT_CHANGE_SUBTYPE_ACTIVE: u8 = 4;

/// One event, as read from an EQE the driver owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A CQ has a new completion (not yet bounds-checked: the caller looks `cqn` up).
    Completion {
        /// CQ number (24 bits).
        cqn: u32,
    },
    /// The port's state changed.
    PortChange {
        /// `sub_type` (`PORT_CHANGE_SUBTYPE_*`; others are passed on as they are).
        sub_type: u8,
        /// Port number (`(data.port.port >> 4) & 0xf`).
        port: u8,
    },
    /// The firmware wants pages (`MLX5_EVENT_TYPE_PAGE_REQUEST`, `mlx5_eqe_page_req`).
    PageRequest {
        /// The function whose firmware asks (0: the function itself).
        func_id: u16,
        /// Pages to give; negative: pages to take back.
        pages: i32,
    },
    /// Command entries completed (`MLX5_EVENT_TYPE_CMD`, `data.cmd.vector`): bit i for
    /// entry i. Not yet checked: the caller matches it against the entries it rang and
    /// trusts only their ownership bits.
    Cmd {
        /// The entries' bitmask.
        vector: u32,
    },
}

impl Event {
    /// For a port change: `Some(true)` when the port became active, `Some(false)` when it
    /// went down, `None` otherwise.
    pub fn link_up(&self) -> Option<bool> {
        match *self {
            Event::PortChange { sub_type, .. } => match sub_type {
                PORT_CHANGE_SUBTYPE_ACTIVE => Some(true),
                PORT_CHANGE_SUBTYPE_DOWN => Some(false),
                _ => None,
            },
            Event::Completion { .. } | Event::PageRequest { .. } | Event::Cmd { .. } => None,
        }
    }
}

/// Event counts of one EQ.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EqStats {
    /// EQEs consumed.
    pub eqes: u64,
    /// Completion EQEs.
    pub completions: u64,
    /// Port-change EQEs.
    pub port_changes: u64,
    /// Page request EQEs.
    pub page_requests: u64,
    /// Command completion EQEs.
    pub cmd_completions: u64,
    /// EQEs of a type this driver does not handle (skipped).
    pub unknown: u64,
    /// Completion EQEs naming a CQ the driver does not know.
    pub bogus_cqn: u64,
    /// Command completion EQEs naming entries the driver did not ring, and EQEs of other
    /// types on the command EQ ([`Eq::poll_cmd`]): ignored.
    pub bogus_cmd: u64,
    /// Doorbell writes.
    pub doorbells: u64,
}

/// An event queue of 64-byte EQEs.
pub struct Eq<C: Coherent> {
    buf: C,
    log_sz: u8,
    mask: u32,
    cc: u32,
    eqn: u8,
    uar_offset: u32,
    stats: EqStats,
}

impl<C: Coherent> Eq<C> {
    /// An EQ of `2^log_sz` EQEs over `buf`, number `eqn` (from CREATE_EQ), whose doorbells
    /// are in the UAR page at `uar_offset` of BAR0. Initialises every owner byte to 1.
    pub fn new(buf: C, log_sz: u8, eqn: u8, uar_offset: u32) -> Result<Self, QueueSetupError> {
        let eq = Self::created(buf, log_sz, eqn, uar_offset)?;
        for i in 0..=eq.mask as usize {
            eq.buf.write(i * EQE_SIZE + off::OWNER, &[EQE_OWNER_INIT]);
        }
        Ok(eq)
    }

    /// An EQ over a ring the caller initialised before CREATE_EQ (every owner byte 1, as
    /// `create_map_eq` runs `init_eq_buf` before the command): unlike [`Eq::new`] it leaves
    /// the ring alone, so an event the device posted as soon as the EQ existed (a page
    /// request) is kept.
    pub fn created(buf: C, log_sz: u8, eqn: u8, uar_offset: u32) -> Result<Self, QueueSetupError> {
        if !(EQ_LOG_SIZE_MIN..=EQ_LOG_SIZE_MAX).contains(&log_sz) {
            return Err(QueueSetupError::BadLogSize);
        }
        let n = 1usize << log_sz;
        if buf.size() < n * EQE_SIZE {
            return Err(QueueSetupError::BufferTooSmall);
        }
        Ok(Self {
            buf,
            log_sz,
            mask: (n - 1) as u32,
            cc: 0,
            eqn,
            uar_offset,
            stats: EqStats::default(),
        })
    }

    /// The EQ number.
    pub fn eqn(&self) -> u8 {
        self.eqn
    }

    /// The consumer index (free-running).
    pub fn cc(&self) -> u32 {
        self.cc
    }

    /// log2 of the number of EQEs.
    pub fn log_sz(&self) -> u8 {
        self.log_sz
    }

    /// Event counts.
    pub fn stats(&self) -> &EqStats {
        &self.stats
    }

    /// The EQE ring.
    pub fn buffer(&self) -> &C {
        &self.buf
    }

    /// Counts a completion EQE for a CQ the caller does not know.
    pub fn note_bogus_cqn(&mut self) {
        self.stats.bogus_cqn = self.stats.bogus_cqn.wrapping_add(1);
    }

    /// The value of an EQ doorbell write: `(eqn << 24) | (cc & 0xffffff)`.
    pub fn doorbell_value(&self) -> u32 {
        (u32::from(self.eqn) << 24) | (self.cc & 0x00ff_ffff)
    }

    /// `eq_update_ci`: tells the device the consumer index, and re-arms the EQ when `arm`.
    pub fn update_ci<M: Mmio, B: Barriers>(&mut self, arm: bool, mmio: &M, bar: &B) {
        let reg = if arm { EQ_DOORBELL_ARM } else { EQ_DOORBELL_CI };
        mmio.write32(self.uar_offset.wrapping_add(reg), self.doorbell_value());
        // eq_update_ci: "We still want ordering, just not swabbing, so add a barrier".
        bar.wmb();
        self.stats.doorbells = self.stats.doorbells.wrapping_add(1);
    }

    /// `next_eqe_sw` + `dma_rmb` + consume: the next event software owns, skipping (and
    /// counting) EQEs of unknown types. `None` when the next EQE is still the device's.
    pub fn next<B: Barriers>(&mut self, bar: &B) -> Option<Event> {
        loop {
            let o = (self.cc & self.mask) as usize * EQE_SIZE;
            let owner = self.buf.read_u8(o + off::OWNER);
            if (owner ^ (self.cc >> self.log_sz) as u8) & 1 != 0 {
                return None;
            }
            // Read the EQE's contents only after the ownership check.
            bar.dma_rmb();
            let mut e = [0u8; EQE_SIZE];
            self.buf.read(o, &mut e);
            self.cc = self.cc.wrapping_add(1);
            self.stats.eqes = self.stats.eqes.wrapping_add(1);
            match e[off::TYPE] {
                EVENT_TYPE_COMP => {
                    self.stats.completions = self.stats.completions.wrapping_add(1);
                    let c = off::COMP_CQN;
                    let cqn =
                        u32::from_be_bytes([e[c], e[c + 1], e[c + 2], e[c + 3]]) & 0x00ff_ffff;
                    return Some(Event::Completion { cqn });
                }
                EVENT_TYPE_PORT_CHANGE => {
                    self.stats.port_changes = self.stats.port_changes.wrapping_add(1);
                    return Some(Event::PortChange {
                        sub_type: e[off::SUB_TYPE],
                        port: (e[off::PORT] >> 4) & 0xf,
                    });
                }
                EVENT_TYPE_CMD => {
                    self.stats.cmd_completions = self.stats.cmd_completions.wrapping_add(1);
                    let v = off::CMD_VECTOR;
                    let vector = u32::from_be_bytes([e[v], e[v + 1], e[v + 2], e[v + 3]]);
                    return Some(Event::Cmd { vector });
                }
                crate::hwif::mlx5::cmd::pages::EVENT_TYPE_PAGE_REQUEST => {
                    self.stats.page_requests = self.stats.page_requests.wrapping_add(1);
                    if let Some((func_id, pages)) =
                        crate::hwif::mlx5::cmd::pages::parse_page_request(&e)
                    {
                        return Some(Event::PageRequest { func_id, pages });
                    }
                }
                _ => {
                    self.stats.unknown = self.stats.unknown.wrapping_add(1);
                }
            }
        }
    }

    /// One interrupt's worth of work (`mlx5_eq_comp_int` / `mlx5_eq_async_int`): consumes up
    /// to `budget` events, handing each to `f`, then writes the consumer index and re-arms
    /// (`eq_update_ci(eq, 1)`). Returns the number of events handled.
    pub fn poll<M: Mmio, B: Barriers, F: FnMut(Event)>(
        &mut self,
        budget: u32,
        mmio: &M,
        bar: &B,
        mut f: F,
    ) -> u32 {
        let mut n = 0;
        while n < budget {
            let Some(ev) = self.next(bar) else {
                break;
            };
            f(ev);
            n += 1;
        }
        self.update_ci(true, mmio, bar);
        n
    }

    /// [`Eq::poll`] for a completion EQ: every completion EQE whose CQ `cqs` knows advances
    /// that CQ's arm sequence number (`++cq->arm_sn`) and is then passed to `comp`;
    /// completion EQEs for unknown CQs are counted; other events go to `port`.
    pub fn poll_completions<D, T, M, B, H, P>(
        &mut self,
        budget: u32,
        mmio: &M,
        bar: &B,
        cqs: &mut T,
        mut comp: H,
        mut port: P,
    ) -> u32
    where
        D: Coherent,
        T: CqLookup<D> + ?Sized,
        M: Mmio,
        B: Barriers,
        H: FnMut(u32),
        P: FnMut(Event),
    {
        let mut n = 0;
        while n < budget {
            let Some(ev) = self.next(bar) else {
                break;
            };
            match ev {
                Event::Completion { cqn } => {
                    if cqs.with_cq(cqn, |cq| cq.event()).is_some() {
                        comp(cqn);
                    } else {
                        self.note_bogus_cqn();
                    }
                }
                Event::PortChange { .. } | Event::PageRequest { .. } | Event::Cmd { .. } => {
                    port(ev)
                }
            }
            n += 1;
        }
        self.update_ci(true, mmio, bar);
        n
    }
}

/// What one [`Eq::poll_cmd`] found on the command EQ.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CmdEqes {
    /// EQEs consumed.
    pub eqes: u32,
    /// Some EQE named the entry the driver rings (`entry_bit`): its waiter is to be woken,
    /// and to check the entry's ownership bit.
    pub entry: bool,
}

impl<C: Coherent> Eq<C> {
    /// One interrupt of the command EQ (`mlx5_eq_async_int` handing `MLX5_EVENT_TYPE_CMD`
    /// to `mlx5_cmd_comp_handler`): consumes up to `budget` EQEs, then writes the consumer
    /// index and re-arms. Only the bits of `entry_bit` (the entries the driver rings) count:
    /// an EQE with other bits, or of another type (the EQ asked for command events only),
    /// is counted in [`EqStats::bogus_cmd`] and otherwise ignored.
    pub fn poll_cmd<M: Mmio, B: Barriers>(
        &mut self,
        budget: u32,
        entry_bit: u32,
        mmio: &M,
        bar: &B,
    ) -> CmdEqes {
        let mut r = CmdEqes::default();
        while r.eqes < budget {
            let Some(ev) = self.next(bar) else {
                break;
            };
            r.eqes += 1;
            match ev {
                Event::Cmd { vector } => {
                    r.entry |= vector & entry_bit != 0;
                    if vector & !entry_bit != 0 || vector == 0 {
                        self.stats.bogus_cmd = self.stats.bogus_cmd.wrapping_add(1);
                    }
                }
                _ => self.stats.bogus_cmd = self.stats.bogus_cmd.wrapping_add(1),
            }
        }
        self.update_ci(true, mmio, bar);
        r
    }
}

/// Finds a CQ by number for the completion EQ handler (`mlx5_eq_cq_get`).
pub trait CqLookup<D: Coherent> {
    /// Runs `f` on the CQ numbered `cqn`; `None` when no CQ has that number.
    fn with_cq<R, F: FnOnce(&mut Cq<D>) -> R>(&mut self, cqn: u32, f: F) -> Option<R>;
}

impl<D: Coherent> CqLookup<D> for [Cq<D>] {
    fn with_cq<R, F: FnOnce(&mut Cq<D>) -> R>(&mut self, cqn: u32, f: F) -> Option<R> {
        self.iter_mut().find(|cq| cq.cqn() == cqn).map(f)
    }
}
