// SPDX-License-Identifier: GPL-2.0

//! The counters of a channel as the family contract speaks of them: the family's queue
//! counters ([`crate::family::DataPath::TxStats`], `RxStats`) of each of a channel's queues,
//! and the family-neutral ones the channel keeps (XDP actions, AF_XDP, recovery, events).
//!
//! Upstream counterpart: `struct mlx5e_sw_stats` and the channel stats of `en_stats.h`.

use crate::family::Family;
use crate::xdp::{XdpStats, XskStats};

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
    /// XDP action and refusal counters.
    pub(crate) xdp: XdpStats,
    /// The XSK RQ's counters.
    pub(crate) xsk_rx: F::RxStats,
    /// The XSK SQ's counters.
    pub(crate) xsk_sq: F::TxStats,
    /// AF_XDP zero-copy counters.
    pub(crate) xsk: XskStats,
    /// Packets still queued when the channel closed (dropped).
    pub(crate) tx_dropped: u64,
    /// Received packets the stack could not take (no skb).
    pub(crate) rx_dropped: u64,
    /// Packets handed to the stack `CHECKSUM_UNNECESSARY` (mlx5e `rx_csum_unnecessary`).
    pub(crate) rx_csum_unnecessary: u64,
    /// Packets handed to the stack `CHECKSUM_NONE` (mlx5e `rx_csum_none`).
    pub(crate) rx_csum_none: u64,
    /// CQ arms of the channel's CQs.
    pub(crate) arms: u64,
    /// SQ recoveries (mlx5e `tx<N>_recover`).
    pub(crate) tx_recover: u64,
    /// RQ recoveries (mlx5e `rx<N>_recover`).
    pub(crate) rx_recover: u64,
    /// TX watchdog timeouts on the channel's queue.
    pub(crate) tx_timeout: u64,
    /// Timeouts recovered (a lost interrupt found, or the SQ reset).
    pub(crate) tx_timeout_recovered: u64,
    /// Lost interrupts found by a timeout (mlx5e `ch_eq_rearm`).
    pub(crate) eq_rearm: u64,
    /// Events naming a queue the channel does not have ([`crate::family::DataPath::irq_bad_events`]).
    pub(crate) eq_bad_events: u64,
    /// Reopens of the port's channels this channel's faults caused (`ch<N>_reopen`): a
    /// fault no queue reset covers ([`PortShared::request_reopen`]).
    pub(crate) reopen: u64,
    /// Transmits refused in hard interrupt context (netpoll from an interrupt handler;
    /// port-wide, filled in by the port's sums).
    pub(crate) tx_hardirq_busy: u64,
    /// Interrupts of the channel (mlx5e `ch<N>_events`; DIM's event count).
    pub(crate) events: u64,
    /// Moderation profiles DIM applied to the channel's CQs (RX and TX).
    pub(crate) dim_changes: u64,
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
            xdp: Default::default(),
            xsk_rx: Default::default(),
            xsk_sq: Default::default(),
            xsk: Default::default(),
            tx_dropped: 0,
            rx_dropped: 0,
            rx_csum_unnecessary: 0,
            rx_csum_none: 0,
            arms: 0,
            tx_recover: 0,
            rx_recover: 0,
            tx_timeout: 0,
            tx_timeout_recovered: 0,
            eq_rearm: 0,
            eq_bad_events: 0,
            reopen: 0,
            tx_hardirq_busy: 0,
            events: 0,
            dim_changes: 0,
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
        F::accumulate(self, b);
        self.xdp.accumulate(&b.xdp);
        self.xsk.accumulate(&b.xsk);
        self.tx_dropped = self.tx_dropped.wrapping_add(b.tx_dropped);
        self.rx_dropped = self.rx_dropped.wrapping_add(b.rx_dropped);
        self.rx_csum_unnecessary = self.rx_csum_unnecessary.wrapping_add(b.rx_csum_unnecessary);
        self.rx_csum_none = self.rx_csum_none.wrapping_add(b.rx_csum_none);
        self.arms = self.arms.wrapping_add(b.arms);
        self.tx_recover = self.tx_recover.wrapping_add(b.tx_recover);
        self.rx_recover = self.rx_recover.wrapping_add(b.rx_recover);
        self.tx_timeout = self.tx_timeout.wrapping_add(b.tx_timeout);
        self.tx_timeout_recovered = self
            .tx_timeout_recovered
            .wrapping_add(b.tx_timeout_recovered);
        self.eq_rearm = self.eq_rearm.wrapping_add(b.eq_rearm);
        self.eq_bad_events = self.eq_bad_events.wrapping_add(b.eq_bad_events);
        self.reopen = self.reopen.wrapping_add(b.reopen);
        self.tx_hardirq_busy = self.tx_hardirq_busy.wrapping_add(b.tx_hardirq_busy);
        self.events = self.events.wrapping_add(b.events);
        self.dim_changes = self.dim_changes.wrapping_add(b.dim_changes);
    }
}
