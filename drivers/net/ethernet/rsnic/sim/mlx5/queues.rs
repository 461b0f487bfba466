// SPDX-License-Identifier: GPL-2.0

//! One row of a port's object tables ([`QueueSet`]): the device's contexts of an SQ, RQ, CQ
//! and EQ (PRM "Send Queue Context", "Receive Queue Context", "Completion Queue Context",
//! "Event Queue Context"; mlx5_ifc.h `sqc`, `rqc`, `cqc`, `eqc`) and of a TIS, RQT, TIR, flow
//! table, flow group and flow table entry, each as the model keeps it once a command (or the
//! Rust API's [`CqConfig`], [`SqConfig`], [`RqConfig`]) created it.

use super::{QueueState, Ring, MAX_RQT_SIZE};
use crate::hwif::hw::DmaAddr;

/// CQ creation parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CqConfig {
    /// Port that owns the CQ.
    pub port: usize,
    /// Bus address of the CQE buffer (64-byte aligned, 2^log_size × 64 bytes).
    pub buf: DmaAddr,
    /// log2 of the number of CQEs (1..=22).
    pub log_size: u8,
    /// Bus address of the doorbell record (8-byte aligned): db\[0\] set_ci, db\[1\] arm.
    pub dbr: DmaAddr,
    /// MSI-X vector raised when armed.
    pub vector: u16,
    /// Basic CQE compression of RX completions.
    pub compress: bool,
}

/// SQ creation parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqConfig {
    /// Port that owns the SQ.
    pub port: usize,
    /// Bus address of the ring (64-byte aligned, 2^log_size WQEBBs).
    pub buf: DmaAddr,
    /// log2 of the ring size in WQEBBs (0..=15).
    pub log_size: u8,
    /// Bus address of the doorbell record (8-byte aligned; db\[1\] is the producer counter).
    pub dbr: DmaAddr,
    /// Completion queue.
    pub cqn: u32,
}

/// RQ (cyclic) creation parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RqConfig {
    /// Port that owns the RQ.
    pub port: usize,
    /// Bus address of the ring (aligned to the stride, 2^log_size WQEs).
    pub buf: DmaAddr,
    /// log2 of the number of RX WQEs (0..=15).
    pub log_size: u8,
    /// log2 of the WQE stride in bytes (4..=8: 1 to 16 data segments).
    pub log_stride: u8,
    /// Bus address of the doorbell record (8-byte aligned; db\[0\] is wqe_ctr).
    pub dbr: DmaAddr,
    /// Completion queue.
    pub cqn: u32,
}

with_empty! {
    #[derive(Clone, Copy)]
    pub(in crate::sim) struct SqCtx {
        pub(in crate::sim) used: bool = false,
        pub(in crate::sim) state: QueueState = QueueState::Ready,
        /// The ring's memory.
        pub(in crate::sim) buf: Ring = Ring::contiguous(0),
        pub(in crate::sim) log_size: u8 = 0,
        pub(in crate::sim) dbr: DmaAddr = 0,
        pub(in crate::sim) cq: u8 = 0,
        /// Device consumer counter: index of the next WQE expected.
        pub(in crate::sim) cc: u16 = 0,
        /// Producer counter last read from the doorbell record.
        pub(in crate::sim) pc: u16 = 0,
        /// UAR page (index in the function's window) whose doorbell rings this SQ.
        pub(in crate::sim) uar: u16 = 0,
        /// TIS slot + 1 (0: none, an SQ made through the Rust API).
        pub(in crate::sim) tis: u8 = 0,
        /// PD slot + 1 (0: none).
        pub(in crate::sim) pd: u8 = 0,
        /// `sqc.min_wqe_inline_mode`.
        pub(in crate::sim) min_inline: u8 = 0,
        /// `sqc.flush_in_error_en` (recorded).
        pub(in crate::sim) flush: bool = false,
    }
    pub(super) const EMPTY;
}

with_empty! {
    #[derive(Clone, Copy)]
    pub(in crate::sim) struct RqCtx {
        pub(in crate::sim) used: bool = false,
        pub(in crate::sim) state: QueueState = QueueState::Ready,
        /// The ring's memory.
        pub(in crate::sim) buf: Ring = Ring::contiguous(0),
        pub(in crate::sim) log_size: u8 = 0,
        pub(in crate::sim) log_stride: u8 = 0,
        pub(in crate::sim) dbr: DmaAddr = 0,
        pub(in crate::sim) cq: u8 = 0,
        pub(in crate::sim) cc: u16 = 0,
        /// wqe_ctr last read from the doorbell record.
        pub(in crate::sim) posted: u16 = 0,
        /// PD slot + 1 (0: none).
        pub(in crate::sim) pd: u8 = 0,
        /// `rqc.flush_in_error_en` (recorded).
        pub(in crate::sim) flush: bool = false,
        /// RQTs naming this RQ.
        pub(in crate::sim) users: u16 = 0,
        /// The Q counter (set id; 0: none) that counts the frames it drops for lack of a WQE.
        pub(in crate::sim) counter: u8 = 0,
        /// Strips the C-VLAN tag of received frames (`rqc.vsd` clear), reporting it in the CQE.
        pub(in crate::sim) strip_vlan: bool = false,
    }
    pub(super) const EMPTY;
}

with_empty! {
    #[derive(Clone, Copy)]
    pub(in crate::sim) struct Session {
        /// CQEs in the session (0 = none open).
        pub(in crate::sim) n: u32 = 0,
        /// CQ index of the title.
        pub(in crate::sim) start: u32 = 0,
        /// RQ slot the session belongs to.
        pub(in crate::sim) rq: u8 = 0,
        /// wqe_counter of the last CQE added.
        pub(in crate::sim) last_wc: u16 = 0,
        pub(in crate::sim) title: [u8; 64] = [0; 64],
        pub(in crate::sim) arr: [u8; 64] = [0; 64],
    }
    pub(super) const EMPTY;
}

with_empty! {
    #[derive(Clone, Copy)]
    pub(in crate::sim) struct CqCtx {
        pub(in crate::sim) used: bool = false,
        pub(in crate::sim) error: bool = false,
        /// The CQE buffer's memory.
        pub(in crate::sim) buf: Ring = Ring::contiguous(0),
        pub(in crate::sim) log_size: u8 = 0,
        pub(in crate::sim) dbr: DmaAddr = 0,
        /// Vector raised directly when `eq` is 0 (CQs made through the Rust API).
        pub(in crate::sim) vector: u16 = 0,
        /// EQ slot + 1 that gets this CQ's completion EQEs (0: raise `vector` directly).
        pub(in crate::sim) eq: u8 = 0,
        /// UAR page whose arm doorbell arms this CQ.
        pub(in crate::sim) uar: u16 = 0,
        pub(in crate::sim) compress: bool = false,
        /// Producer index (CQ indices reserved so far).
        pub(in crate::sim) pi: u32 = 0,
        /// Consumer index last read from set_ci.
        pub(in crate::sim) ci: u32 = 0,
        pub(in crate::sim) armed: bool = false,
        pub(in crate::sim) arm_sn: u8 = 0,
        pub(in crate::sim) arm_ci: u32 = 0,
        /// Fired while naming an EQ: a completion EQE is owed to it.
        pub(in crate::sim) eqe_owed: bool = false,
        /// SQs and RQs using this CQ.
        pub(in crate::sim) users: u16 = 0,
        pub(in crate::sim) sess: Session = Session::EMPTY,
        /// CQ moderation (`cq_period`, `cq_max_count`, `cq_period_mode`): see the module's
        /// "Interrupts" section.
        pub(in crate::sim) moder: Moder = Moder::EMPTY,
    }
    pub(super) const EMPTY;
}

with_empty! {
    /// A CQ's moderation: when an armed CQ with CQEs pending may fire.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub(in crate::sim) struct Moder {
        /// `cq_period` in microseconds (12 bits); 0: no moderation, the CQ fires at once.
        pub(in crate::sim) period: u16 = 0,
        /// `cq_max_count` (16 bits); 0: only the period releases an event.
        pub(in crate::sim) max_count: u16 = 0,
        /// `cq_period_mode` 1: the timer restarts with every CQE (else with every event).
        pub(in crate::sim) cqe_mode: bool = false,
        /// When the timer last started, in the model's nanoseconds ([`Device::set_clock`]).
        pub(in crate::sim) start: u64 = 0,
        /// Armed with CQEs pending, held back until the count or the period is reached.
        pub(in crate::sim) held: bool = false,
    }
    pub(super) const EMPTY;
}

impl Moder {
    /// When the period runs out (nanoseconds).
    pub(in crate::sim) fn deadline(&self) -> u64 {
        self.start
            .saturating_add(u64::from(self.period).saturating_mul(1000))
    }

    /// Whether a CQ with `pending` CQEs beyond its armed index may fire at `now`.
    pub(in crate::sim) fn due(&self, pending: u32, now: u64) -> bool {
        self.period == 0
            || (self.max_count != 0 && pending >= u32::from(self.max_count))
            || now >= self.deadline()
    }
}

impl CqCtx {
    /// Producer index as the driver can see it (a session's title not yet written hides it).
    pub(in crate::sim) fn visible_pi(&self) -> u32 {
        if self.sess.n > 0 {
            self.sess.start
        } else {
            self.pi
        }
    }
}

with_empty! {
    /// An event queue (eq.c semantics, see the module documentation).
    #[derive(Clone, Copy)]
    pub(in crate::sim) struct EqCtx {
        pub(in crate::sim) used: bool = false,
        /// Overrun: nothing more is written until the EQ is destroyed.
        pub(in crate::sim) error: bool = false,
        /// The EQE buffer's memory.
        pub(in crate::sim) buf: Ring = Ring::contiguous(0),
        pub(in crate::sim) log_size: u8 = 0,
        pub(in crate::sim) uar: u16 = 0,
        /// MSI-X vector index within the function.
        pub(in crate::sim) intr: u16 = 0,
        /// Producer index (EQEs written).
        pub(in crate::sim) pi: u32 = 0,
        /// Consumer index from the last EQ doorbell (24 bits).
        pub(in crate::sim) ci: u32 = 0,
        pub(in crate::sim) armed: bool = false,
        /// `event_bitmask` has MLX5_EVENT_TYPE_PORT_CHANGE.
        pub(in crate::sim) port_events: bool = false,
        /// `event_bitmask` has MLX5_EVENT_TYPE_CMD: command completions are reported here.
        pub(in crate::sim) cmd_events: bool = false,
        /// `event_bitmask` has MLX5_EVENT_TYPE_PAGE_REQUEST: page requests are reported here.
        pub(in crate::sim) page_events: bool = false,
        /// CQs naming this EQ.
        pub(in crate::sim) users: u16 = 0,
    }
    pub(super) const EMPTY;
}

with_empty! {
    /// A transport interface send object.
    #[derive(Clone, Copy)]
    pub(in crate::sim) struct TisCtx {
        pub(in crate::sim) used: bool = false,
        /// Transport domain slot.
        pub(in crate::sim) td: u8 = 0,
        /// SQs naming this TIS.
        pub(in crate::sim) users: u16 = 0,
    }
    pub(super) const EMPTY;
}

with_empty! {
    /// An RQ table.
    #[derive(Clone, Copy)]
    pub(in crate::sim) struct RqtCtx {
        pub(in crate::sim) used: bool = false,
        pub(in crate::sim) max: u16 = 0,
        pub(in crate::sim) len: u16 = 0,
        /// RQ slots.
        pub(in crate::sim) rqs: [u8; MAX_RQT_SIZE] = [0; MAX_RQT_SIZE],
        /// TIRs naming this RQT.
        pub(in crate::sim) users: u16 = 0,
    }
    pub(super) const EMPTY;
}

with_empty! {
    /// A transport interface receive object.
    #[derive(Clone, Copy)]
    pub(in crate::sim) struct TirCtx {
        pub(in crate::sim) used: bool = false,
        /// Indirect (RSS through `rqt`) or direct (`inline_rq`).
        pub(in crate::sim) indirect: bool = false,
        pub(in crate::sim) rqt: u8 = 0,
        pub(in crate::sim) inline_rq: u8 = 0,
        pub(in crate::sim) td: u8 = 0,
        pub(in crate::sim) key: [u8; 40] = [0; 40],
        /// `rx_hash_field_selector_outer`.
        pub(in crate::sim) sel: crate::sim::pkt::HashSel = crate::sim::pkt::HashSel {
            ipv6: false,
            udp: false,
            src_ip: false,
            dst_ip: false,
            sport: false,
            dport: false,
        },
        /// `rx_hash_symmetric`: both directions of a flow hash alike.
        pub(in crate::sim) symmetric: bool = false,
        /// `rx_hash_fn` inverted XOR8 (else Toeplitz).
        pub(in crate::sim) xor8: bool = false,
        /// Flow table entries forwarding to this TIR.
        pub(in crate::sim) users: u16 = 0,
    }
    pub(super) const EMPTY;
}

with_empty! {
    /// A flow table (CREATE_FLOW_TABLE; NIC RX only).
    #[derive(Clone, Copy)]
    pub(in crate::sim) struct FtCtx {
        pub(in crate::sim) used: bool = false,
        /// log2 of its flow indices.
        pub(in crate::sim) log_size: u8 = 0,
        /// Its level (a miss goes to a table of a higher level only).
        pub(in crate::sim) level: u8 = 0,
        /// The table a miss goes to (slot + 1; 0: the default miss action, dropped).
        pub(in crate::sim) miss: u8 = 0,
        /// Flow groups in it.
        pub(in crate::sim) users: u16 = 0,
        /// Entries and tables that forward to it (as destination or miss table).
        pub(in crate::sim) refs: u16 = 0,
        /// Its entries' run in the port's order of entries ([`RxRule`]).
        pub(in crate::sim) first: u8 = 0,
        pub(in crate::sim) count: u8 = 0,
    }
    pub(super) const EMPTY;
}

/// Most tables a frame goes through (root, then its miss table or an entry's destination
/// table, and so on; levels rise along the way, so a walk ends: bounded all the same).
pub(in crate::sim) const MAX_CHAIN: usize = 16;

/// The deepest flow table level (`max_ft_level`).
pub const MAX_FT_LEVEL: u32 = 63;

/// Bytes of the match parameter the model matches on: the outer headers
/// (`fte_match_set_lyr_2_4`), the first 64 bytes of `fte_match_param`.
pub const MATCH_LEN: usize = 64;

with_empty! {
    /// A flow group (CREATE_FLOW_GROUP): a range of a table's flow indices whose entries match
    /// the fields its criteria mask.
    #[derive(Clone, Copy)]
    pub(in crate::sim) struct FgCtx {
        pub(in crate::sim) used: bool = false,
        /// Its table's slot.
        pub(in crate::sim) table: u8 = 0,
        /// Its flow indices, `start..=end`.
        pub(in crate::sim) start: u32 = 0,
        pub(in crate::sim) end: u32 = 0,
        /// The outer-header criteria (`match_criteria.outer_headers`): the bits compared.
        pub(in crate::sim) mask: [u8; MATCH_LEN] = [0; MATCH_LEN],
        /// Entries in it.
        pub(in crate::sim) users: u16 = 0,
    }
    pub(super) const EMPTY;
}

/// What a flow table entry does with a frame it matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::sim) enum Dest {
    /// Forward to a TIR (slot).
    Tir(u8),
    /// Forward to a flow table (slot) of a higher level.
    Table(u8),
    /// Drop (`MLX5_FLOW_CONTEXT_ACTION_DROP`).
    Drop,
}

with_empty! {
    /// A flow table entry (SET_FLOW_TABLE_ENTRY).
    #[derive(Clone, Copy)]
    pub(in crate::sim) struct FteCtx {
        pub(in crate::sim) used: bool = false,
        /// Its table's and group's slots.
        pub(in crate::sim) table: u8 = 0,
        pub(in crate::sim) group: u8 = 0,
        pub(in crate::sim) index: u32 = 0,
        /// The group's criteria, copied for the per-frame check, and the entry's values under
        /// them (`value & mask`); bytes `lo..hi` hold every masked bit.
        pub(in crate::sim) mask: [u8; MATCH_LEN] = [0; MATCH_LEN],
        pub(in crate::sim) value: [u8; MATCH_LEN] = [0; MATCH_LEN],
        pub(in crate::sim) lo: u8 = 0,
        pub(in crate::sim) hi: u8 = 0,
        pub(in crate::sim) dest: Dest = Dest::Drop,
    }
    pub(super) const EMPTY;
}

impl FteCtx {
    /// Whether a frame whose outer headers are `img` ([`steer::image`]) matches. Per frame:
    /// at most [`MATCH_LEN`] byte compares, no allocation.
    pub(in crate::sim) fn matches(&self, img: &[u8; MATCH_LEN]) -> bool {
        let (lo, hi) = (usize::from(self.lo), usize::from(self.hi).min(MATCH_LEN));
        let r = lo.min(hi)..hi;
        match (
            img.get(r.clone()),
            self.mask.get(r.clone()),
            self.value.get(r),
        ) {
            (Some(i), Some(m), Some(v)) => i.iter().zip(m).zip(v).all(|((i, m), v)| i & m == *v),
            _ => false,
        }
    }
}

with_empty! {
    /// One place of the order in which a port's flow table entries are looked at
    /// ([`Tables::refresh_rx`]): the entry's slot + 1 (0: none). Each table's entries are a run
    /// of it, by flow index ([`FtCtx::first`], [`FtCtx::count`]).
    #[derive(Clone, Copy)]
    pub(in crate::sim) struct RxRule {
        pub(in crate::sim) fte: u8 = 0,
    }
    pub(super) const EMPTY;
}

with_empty! {
    /// One row of the queue tables: an SQ, an RQ, a CQ, an EQ, a TIS, an RQT, a TIR, a flow
    /// table, a flow group and a flow table entry context (under a kilobyte, so the tables can
    /// be built entry by entry without a large value on the stack). A device needs
    /// [`MAX_QUEUES`] of them per port; slot i of port p is entry `p * MAX_QUEUES + i`.
    #[derive(Clone, Copy)]
    pub struct QueueSet {
        pub(super) sq: SqCtx = SqCtx::EMPTY,
        pub(super) rq: RqCtx = RqCtx::EMPTY,
        pub(super) cq: CqCtx = CqCtx::EMPTY,
        pub(super) eq: EqCtx = EqCtx::EMPTY,
        pub(super) tis: TisCtx = TisCtx::EMPTY,
        pub(super) rqt: RqtCtx = RqtCtx::EMPTY,
        pub(super) tir: TirCtx = TirCtx::EMPTY,
        pub(super) ft: FtCtx = FtCtx::EMPTY,
        pub(super) fg: FgCtx = FgCtx::EMPTY,
        pub(super) fte: FteCtx = FteCtx::EMPTY,
        /// The port's rule in this row's place of the checking order.
        pub(super) rx_rule: RxRule = RxRule::EMPTY,
    }
    /// An unused row.
    pub const EMPTY;
}

impl Default for QueueSet {
    fn default() -> Self {
        Self::EMPTY
    }
}
