// SPDX-License-Identifier: GPL-2.0

//! The counters of a channel as the family contract speaks of them, each declared once.
//!
//! A channel's counters ([`ChannelStats`]) are the family's queue counters
//! ([`crate::family::DataPath::TxStats`], `RxStats`) of each of its queues, and the
//! family-neutral ones the driver keeps: the channel's ([`ChStats`]: recovery, interrupts,
//! what the stack was handed), the XDP actions' ([`XdpStats`]) and AF_XDP's ([`XskStats`]).
//!
//! [`counters!`] declares counters once: a field with its `ethtool -S` rows. For counters of
//! the driver's own it makes the struct, its zero (`Default`), the wrapping
//! [`Counters::accumulate`], the rows and, if asked, an atomic mirror whose
//! [`snapshot`](ChAtomics::snapshot) gives the struct; for a family's queue counters (a
//! `hwif/` struct) it makes `accumulate` and the family's rows, with the family's upstream
//! names. Adding a counter is its declaration and its increment.
//!
//! `ethtool -S` shows the device-wide sums ([`Scope::Global`]), then the family's hardware
//! counters, then per TX queue, per RX queue and per channel ([`Scope::Txq`], `Rxq`, `Ch`:
//! `tx<N>_x`, `rx<N>_x`, `ch<N>_x`, with the family's infix). Within a scope the rows come
//! by the part of [`ChannelStats`] they read ([`Part`], in field order): for each part, the
//! rows that combine a family's and the driver's counters (below), the family's rows, then
//! the family-neutral ones, each in declaration order. A family-neutral row may show only
//! on the families with a capability (`if F::QUEUE_RESET`, ...).
//!
//! Upstream counterpart: `en_stats.h`/`en_stats.c` (`struct mlx5e_sw_stats`, the channel
//! and queue stats and their `DECLARE_*_STAT` descriptions) and `mana_ethtool.c`.

use crate::family::Family;

/// Counters that add up: every field a free-running `u64` that wraps.
pub(crate) trait Counters: Copy + Default + Send {
    /// Adds `b` into `self`, counter by counter (wrapping, like the counters themselves).
    fn accumulate(&mut self, b: &Self);
}

/// Where an `ethtool -S` row shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scope {
    /// The device-wide sums over the port's queues.
    Global,
    /// One row per TX queue (`tx<N>_x`).
    Txq,
    /// One row per RX queue (`rx<N>_x`).
    Rxq,
    /// One row per channel (`ch<N>_x`).
    Ch,
}

/// The part of [`ChannelStats`] a row reads: its field's name. Rows are shown by part, in
/// this order.
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    /// [`ChannelStats::tx`].
    tx,
    /// [`ChannelStats::rx`].
    rx,
    /// [`ChannelStats::xdpsq`].
    xdpsq,
    /// [`ChannelStats::xdp_rd`].
    xdp_rd,
    /// [`ChannelStats::xsk_rx`].
    xsk_rx,
    /// [`ChannelStats::xsk_sq`].
    xsk_sq,
    /// [`ChannelStats::ch`].
    ch,
    /// [`ChannelStats::xdp`].
    xdp,
    /// [`ChannelStats::xsk`].
    xsk,
}

impl Part {
    /// Every part, in the order rows are shown.
    pub(crate) const ALL: [Part; 9] = [
        Part::tx,
        Part::rx,
        Part::xdpsq,
        Part::xdp_rd,
        Part::xsk_rx,
        Part::xsk_sq,
        Part::ch,
        Part::xdp,
        Part::xsk,
    ];
}

/// One `ethtool -S` row of counters `S` (control path only: `get` is a function pointer).
pub(crate) struct Row<S> {
    /// What it reads, for the order.
    pub(crate) part: Part,
    /// Where it shows.
    pub(crate) scope: Scope,
    /// Its name (per queue and channel, after the `tx<N>_`, `rx<N>_`, `ch<N>_` prefix).
    pub(crate) name: &'static str,
    /// Its value.
    pub(crate) get: fn(&S) -> u64,
    /// Whether the family shows it.
    pub(crate) shown: bool,
}

/// The `ethtool -S` rows of family-neutral counters, for any family `F`.
pub(crate) trait NeutralRows<F: Family> {
    /// The rows, in declaration order.
    const ROWS: &'static [Row<ChannelStats<F>>];
}

/// Declares counters once, with their `ethtool -S` rows.
///
/// The driver's own counters, read through part `$part` of [`ChannelStats`] (rows may show
/// on some families only: `if` a constant expression of `$F`), optionally with an atomic
/// mirror `$atomic`:
///
/// ```ignore
/// counters! {
///     /// Doc.
///     pub(crate) struct ChStats in ch, atomic ChAtomics, for<F> {
///         /// Doc.
///         tx_recover [Global "tx_recover" if F::QUEUE_RESET, Txq "recover" if F::QUEUE_RESET],
///         /// Doc (no row: read by a combined row).
///         tx_dropped,
///     }
/// }
/// ```
///
/// A family's view of a `hwif/` queue counter struct `$ty`, its rows `$rows` for family
/// `$fam`: each row names the part(s) it reads (several, `tx + rx`, are added) and has the
/// family's upstream name; every field of the struct must be listed (it does not compile
/// otherwise), and is accumulated:
///
/// ```ignore
/// counters! {
///     pub(super) view TxStats as SQ_ROWS for Mlx5 {
///         cqes [tx Global "tx_cqes", tx Txq "cqes", xsk_sq Global "tx_xsk_cqes"],
///         busy,
///     }
/// }
/// ```
macro_rules! counters {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident in $part:ident, atomic $atomic:ident, for<$F:ident> {
            $(
                $(#[$fmeta:meta])*
                $field:ident $([ $( $scope:ident $row:literal $(if $cond:expr)? ),* $(,)? ])?,
            )*
        }
    ) => {
        $crate::family::stats::counters! {
            $(#[$meta])*
            $vis struct $name in $part, for<$F> {
                $(
                    $(#[$fmeta])*
                    $field $([ $( $scope $row $(if $cond)? ),* ])?,
                )*
            }
        }

        #[doc = concat!("[`", stringify!($name), "`] as atomics, for counters that are")]
        #[doc = "incremented where no lock is held."]
        #[derive(Default)]
        $vis struct $atomic {
            $( $(#[$fmeta])* pub(crate) $field: ::core::sync::atomic::AtomicU64, )*
        }

        impl $atomic {
            /// The counters now (each read on its own).
            pub(crate) fn snapshot(&self) -> $name {
                $name {
                    $( $field: self.$field.load(::core::sync::atomic::Ordering::Relaxed), )*
                }
            }
        }
    };
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident in $part:ident, for<$F:ident> {
            $(
                $(#[$fmeta:meta])*
                $field:ident $([ $( $scope:ident $row:literal $(if $cond:expr)? ),* $(,)? ])?,
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, Default)]
        $vis struct $name {
            $( $(#[$fmeta])* pub(crate) $field: u64, )*
        }

        impl $crate::family::stats::Counters for $name {
            fn accumulate(&mut self, b: &Self) {
                $( self.$field = self.$field.wrapping_add(b.$field); )*
            }
        }

        impl<$F: $crate::family::Family> $crate::family::stats::NeutralRows<$F> for $name {
            const ROWS: &'static [$crate::family::stats::Row<
                $crate::family::stats::ChannelStats<$F>,
            >] = &[
                $( $( $(
                    $crate::family::stats::Row {
                        part: $crate::family::stats::Part::$part,
                        scope: $crate::family::stats::Scope::$scope,
                        name: $row,
                        get: |s| s.$part.$field,
                        shown: true $(&& $cond)?,
                    },
                )* )? )*
            ];
        }
    };
    (
        $(#[$meta:meta])*
        $vis:vis view $ty:ty as $rows:ident for $fam:ty {
            $(
                $field:ident $([ $( $part:ident $(+ $more:ident)* $scope:ident $row:literal ),* $(,)? ])?,
            )*
        }
    ) => {
        impl $crate::family::stats::Counters for $ty {
            fn accumulate(&mut self, b: &Self) {
                // Every field of the struct, or this does not compile: none is left out.
                let Self { $( $field ),* } = *b;
                $( self.$field = self.$field.wrapping_add($field); )*
            }
        }

        $(#[$meta])*
        $vis const $rows: &[$crate::family::stats::Row<$crate::family::stats::ChannelStats<$fam>>] = &[
            $( $( $(
                $crate::family::stats::Row {
                    part: $crate::family::stats::Part::$part,
                    scope: $crate::family::stats::Scope::$scope,
                    name: $row,
                    get: |s| s.$part.$field $(+ s.$more.$field)*,
                    shown: true,
                },
            )* )? )*
        ];
    };
}
pub(crate) use counters;

counters! {
    /// The channel's own counters (and the port's, in its sums), family-neutral.
    pub(crate) struct ChStats in ch, atomic ChAtomics, for<F> {
        /// Packets dropped on the transmit side that no SQ counted: still queued when the
        /// channel closed or its SQ was recovered, or handed to a TX queue whose channel was
        /// closed (port-wide). Shown in `tx_queue_dropped` with the SQ's own.
        tx_dropped,
        /// Received packets the stack could not take (no skb).
        rx_dropped [Global "rx_dropped"],
        /// Packets handed to the stack that went to a group address, multicast or
        /// broadcast (mlx5e's `mcast_packets`, which only `ndo_get_stats64` shows).
        rx_mcast,
        /// Packets handed to the stack `CHECKSUM_UNNECESSARY` (mlx5e `rx_csum_unnecessary`).
        rx_csum_unnecessary [Global "rx_csum_unnecessary", Rxq "csum_unnecessary"],
        /// Packets handed to the stack `CHECKSUM_NONE` (mlx5e `rx_csum_none`).
        rx_csum_none [Global "rx_csum_none", Rxq "csum_none"],
        /// Packets handed to the stack `CHECKSUM_COMPLETE` (mlx5e `rx_csum_complete`); only
        /// families whose devices give a sum ([`crate::family::Family::NO_CSUM_COMPLETE`]).
        rx_csum_complete [
            Global "rx_csum_complete" if F::NO_CSUM_COMPLETE.is_some(),
            Rxq "csum_complete" if F::NO_CSUM_COMPLETE.is_some(),
        ],
        /// Of those, packets with at most 8 bytes after the IP datagram, added to the sum
        /// (mlx5e `rx_csum_complete_tail`).
        rx_csum_complete_tail [
            Global "rx_csum_complete_tail" if F::NO_CSUM_COMPLETE.is_some(),
            Rxq "csum_complete_tail" if F::NO_CSUM_COMPLETE.is_some(),
        ],
        /// Of those, packets with more bytes after the IP datagram (mlx5e
        /// `rx_csum_complete_tail_slow`).
        rx_csum_complete_tail_slow [
            Global "rx_csum_complete_tail_slow" if F::NO_CSUM_COMPLETE.is_some(),
            Rxq "csum_complete_tail_slow" if F::NO_CSUM_COMPLETE.is_some(),
        ],
        /// CQ arms of the channel's CQs.
        arms [Ch "arm"],
        /// SQ recoveries (mlx5e `tx<N>_recover`).
        tx_recover [Global "tx_recover" if F::QUEUE_RESET, Txq "recover" if F::QUEUE_RESET],
        /// RQ recoveries (mlx5e `rx<N>_recover`).
        rx_recover [Global "rx_recover" if F::QUEUE_RESET, Rxq "recover" if F::QUEUE_RESET],
        /// TX watchdog timeouts on the channel's queue.
        tx_timeout [Global "tx_timeout"],
        /// Timeouts recovered (a lost interrupt found, or the SQ reset).
        tx_timeout_recovered [Global "tx_timeout_recovered"],
        /// Lost interrupts found by a timeout (mlx5e `ch_eq_rearm`).
        eq_rearm [Global "ch_eq_rearm", Ch "eq_rearm"],
        /// Events naming a queue the channel does not have
        /// ([`crate::family::DataPath::irq_bad_events`]; upstream mana warns once).
        eq_bad_events [Global "eqe_bad_cq" if F::IRQ_BAD_EVENTS],
        /// Reopens of the port's channels this channel's faults caused (`ch<N>_reopen`): a
        /// fault no queue reset covers ([`crate::channel::shared::PortShared::request_reopen`]).
        reopen [Global "ch_reopen", Ch "reopen"],
        /// Transmits refused in hard interrupt context (netpoll from an interrupt handler;
        /// port-wide, in the port's sums).
        tx_hardirq_busy [Global "tx_hardirq_busy"],
        /// Interrupts of the channel (mlx5e `ch<N>_events`; DIM's event count).
        events [Global "ch_events" if F::COALESCE, Ch "events" if F::COALESCE],
        /// Moderation profiles DIM applied to the channel's CQs (RX and TX).
        dim_changes [Global "ch_dim_changes" if F::COALESCE, Ch "dim_changes" if F::COALESCE],
    }
}

counters! {
    /// Counters of the XDP actions on one RX queue and of the XDP frames an SQ refused
    /// (kept by the channel, family-neutral). Families with XDP SQs count what those SQs
    /// sent in their queue counters; the per-queue rows of refusals are those SQs' (mlx5e's).
    pub(crate) struct XdpStats in xdp, for<F> {
        /// Frames the program dropped, aborted on, or failed to redirect (`rx_xdp_drop`).
        drop [Global "rx_xdp_drop", Rxq "xdp_drop"],
        /// Of those, `XDP_ABORTED`, unknown actions and failed redirects (traced).
        aborted [Global "rx_xdp_aborted"],
        /// Frames redirected (`rx_xdp_redirect`).
        redirect [Global "rx_xdp_redirect", Rxq "xdp_redirect"],
        /// Frames the program passed to the stack.
        pass [Global "rx_xdp_pass"],
        /// `XDP_TX` verdicts (MANA's `rx_xdp_tx`; mlx5 counts what the XDP SQ took in its own
        /// counters).
        tx [Global "rx_xdp_tx" if !F::XDP_SQS, Rxq "xdp_tx" if !F::XDP_SQS],
        /// `XDP_TX` frames dropped: the XDP SQ was full (`rx_xdp_tx_full`).
        tx_full [Global "rx_xdp_tx_full" if F::XDP_SQS, Rxq "xdp_tx_full" if F::XDP_SQS],
        /// `XDP_TX` frames dropped for another reason (`rx_xdp_tx_err`).
        tx_err [Global "rx_xdp_tx_err", Rxq "xdp_tx_err" if F::XDP_SQS],
        /// Bytes of the frames a program consumed (dropped, redirected, sent back): what the
        /// RQ received but the stack never saw.
        consumed_bytes,
        /// Frames taken by `ndo_xdp_xmit` on this channel's queue (`tx_xdp_xmit` on MANA).
        xmit [Global "tx_xdp_xmit" if !F::XDP_SQS, Txq "xdp_xmit" if !F::XDP_SQS],
        /// Redirected frames refused: the XDP SQ was full (`tx_xdp_full`).
        xmit_full [Global "tx_xdp_full", Txq "xdp_full" if F::XDP_SQS],
        /// Redirected frames refused for another reason (`tx_xdp_err`).
        xmit_err [Global "tx_xdp_err", Txq "xdp_err" if F::XDP_SQS],
    }
}

impl XdpStats {
    /// Frames a program consumed: dropped (aborted included), redirected, or sent back
    /// (`XDP_TX`, whether or not the XDP SQ took them).
    pub(crate) fn consumed(&self) -> u64 {
        self.drop.wrapping_add(self.redirect).wrapping_add(self.tx)
    }
}

counters! {
    /// Counters of a channel's AF_XDP zero-copy queues (mlx5e's `rx_xsk_*`, `tx_xsk_*`).
    pub(crate) struct XskStats in xsk, atomic XskAtomics, for<F> {
        /// Frames the program redirected (into the socket).
        xdp_redirect [Global "rx_xsk_xdp_redirect", Rxq "xsk_xdp_redirect"],
        /// Frames dropped by the program, aborted or failed to redirect.
        xdp_drop [Global "rx_xsk_xdp_drop", Rxq "xsk_xdp_drop"],
        /// Frames copied into skbs for the stack (XDP_PASS, or no program).
        pass [Global "rx_xsk_pass"],
        /// XDP_TX verdicts (copied out of the UMEM and sent on the redirect SQ).
        xdp_tx [Global "rx_xsk_xdp_tx"],
        /// XDP_PASS or XDP_TX frames lost for lack of memory.
        copy_err [Global "rx_xsk_copy_err"],
        /// Rounds in which the fill ring ran dry (`rx_xsk_buff_alloc_err`).
        alloc_err [Global "rx_xsk_buff_alloc_err", Rxq "xsk_buff_alloc_err"],
        /// TX descriptors the XSK SQ could not take (`tx_xsk_err`).
        tx_err [Global "tx_xsk_err"],
        /// `ndo_xsk_wakeup` calls that reached the channel (`xsk_wakeups`).
        wakeups [Global "xsk_wakeups"],
        /// Of those, the ones that found NAPI scheduled or running and marked it missed
        /// (`xsk_wakeup_missed`): no NOP, no schedule.
        wake_missed [Global "xsk_wakeup_missed"],
        /// The NOPs they posted on the ICO SQ (families with XDP SQs, which have an ICO SQ:
        /// ConnectX, `xsk_wakeup_nops`), or the NAPI polls they scheduled (MANA,
        /// `xsk_wakeup_napi`).
        wake_kicks [
            Global "xsk_wakeup_nops" if F::XDP_SQS,
            Global "xsk_wakeup_napi" if !F::XDP_SQS,
        ],
    }
}

/// Counters of one channel, read under its locks.
pub(crate) struct ChannelStats<F: Family> {
    /// The SQ's counters.
    pub(crate) tx: F::TxStats,
    /// The RQ's counters.
    pub(crate) rx: F::RxStats,
    /// The XDP_TX SQ's counters.
    pub(crate) xdpsq: F::TxStats,
    /// The `ndo_xdp_xmit` SQ's counters.
    pub(crate) xdp_rd: F::TxStats,
    /// The XSK RQ's counters.
    pub(crate) xsk_rx: F::RxStats,
    /// The XSK SQ's counters.
    pub(crate) xsk_sq: F::TxStats,
    /// The channel's own counters.
    pub(crate) ch: ChStats,
    /// XDP action and refusal counters.
    pub(crate) xdp: XdpStats,
    /// AF_XDP zero-copy counters.
    pub(crate) xsk: XskStats,
}

impl<F: Family> Clone for ChannelStats<F> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<F: Family> Copy for ChannelStats<F> {}

impl<F: Family> Default for ChannelStats<F> {
    fn default() -> Self {
        Self {
            tx: Default::default(),
            rx: Default::default(),
            xdpsq: Default::default(),
            xdp_rd: Default::default(),
            xsk_rx: Default::default(),
            xsk_sq: Default::default(),
            ch: Default::default(),
            xdp: Default::default(),
            xsk: Default::default(),
        }
    }
}

impl<F: Family> ChannelStats<F> {
    /// Packets the regular RQ handed to the stack: what it received minus what an XDP
    /// program consumed (as mlx5e and mana count `rx_packets`).
    pub(crate) fn rx_stack_packets(&self) -> u64 {
        F::rx_packets(&self.rx).wrapping_sub(self.xdp.consumed())
    }

    /// Bytes of [`ChannelStats::rx_stack_packets`].
    pub(crate) fn rx_stack_bytes(&self) -> u64 {
        F::rx_bytes(&self.rx).wrapping_sub(self.xdp.consumed_bytes)
    }

    /// Adds `b` into `self`, counter by counter (wrapping, like the counters themselves).
    pub(crate) fn accumulate(&mut self, b: &Self) {
        self.tx.accumulate(&b.tx);
        self.rx.accumulate(&b.rx);
        self.xdpsq.accumulate(&b.xdpsq);
        self.xdp_rd.accumulate(&b.xdp_rd);
        self.xsk_rx.accumulate(&b.xsk_rx);
        self.xsk_sq.accumulate(&b.xsk_sq);
        self.ch.accumulate(&b.ch);
        self.xdp.accumulate(&b.xdp);
        self.xsk.accumulate(&b.xsk);
    }

    /// The rows that combine a family's queue counters and the driver's: the same in every
    /// family (mlx5e's and mana's names).
    const COMBINED: &'static [Row<Self>] = &[
        Row {
            part: Part::tx,
            scope: Scope::Global,
            name: "tx_packets",
            get: |s| F::tx_packets(&s.tx),
            shown: true,
        },
        Row {
            part: Part::tx,
            scope: Scope::Txq,
            name: "packets",
            get: |s| F::tx_packets(&s.tx),
            shown: true,
        },
        Row {
            part: Part::tx,
            scope: Scope::Global,
            name: "tx_bytes",
            get: |s| F::tx_bytes(&s.tx),
            shown: true,
        },
        Row {
            part: Part::tx,
            scope: Scope::Txq,
            name: "bytes",
            get: |s| F::tx_bytes(&s.tx),
            shown: true,
        },
        Row {
            part: Part::tx,
            scope: Scope::Global,
            name: "tx_queue_dropped",
            get: |s| F::tx_dropped(&s.tx) + s.ch.tx_dropped,
            shown: true,
        },
        Row {
            part: Part::tx,
            scope: Scope::Txq,
            name: "dropped",
            get: |s| F::tx_dropped(&s.tx) + s.ch.tx_dropped,
            shown: true,
        },
        Row {
            part: Part::rx,
            scope: Scope::Global,
            name: "rx_packets",
            get: |s| s.rx_stack_packets(),
            shown: true,
        },
        Row {
            part: Part::rx,
            scope: Scope::Rxq,
            name: "packets",
            get: |s| s.rx_stack_packets(),
            shown: true,
        },
        Row {
            part: Part::rx,
            scope: Scope::Global,
            name: "rx_bytes",
            get: |s| s.rx_stack_bytes(),
            shown: true,
        },
        Row {
            part: Part::rx,
            scope: Scope::Rxq,
            name: "bytes",
            get: |s| s.rx_stack_bytes(),
            shown: true,
        },
    ];

    /// Calls `f` with each row of `scope` the family shows, in `ethtool -S` order (see the
    /// module documentation).
    pub(crate) fn for_each_row(scope: Scope, mut f: impl FnMut(&Row<Self>)) {
        let neutral = [
            <ChStats as NeutralRows<F>>::ROWS,
            <XdpStats as NeutralRows<F>>::ROWS,
            <XskStats as NeutralRows<F>>::ROWS,
        ];
        for part in Part::ALL {
            let tables = core::iter::once(Self::COMBINED)
                .chain(F::ROWS.iter().copied())
                .chain(neutral);
            for table in tables {
                for r in table {
                    if r.part == part && r.scope == scope && r.shown {
                        f(r);
                    }
                }
            }
        }
    }
}
