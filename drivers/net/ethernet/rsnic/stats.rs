// SPDX-License-Identifier: GPL-2.0

//! The counters of `ethtool -S`: mlx5's names where they exist, then the device's doorbell
//! and PCIe-model counters (`dev_*`), then the per-queue `txN_*`, `rxN_*` and `chN_*` forms.
//!
//! Counters of a port survive closing and reopening its channels: a closed channel's final
//! counts are added into the port's per-queue totals.

use crate::channel::ChannelStats;
use crate::sim::mlx5::PortCounters;

type Get<T> = fn(&T) -> u64;

/// Device-wide sums over the port's queues (mlx5 names).
pub(crate) const GLOBAL: &[(&str, Get<ChannelStats>)] = &[
    ("tx_packets", |s| s.tx.packets),
    ("tx_bytes", |s| s.tx.bytes),
    ("tx_mpwqe_blks", |s| s.tx.mpwqe_blks),
    ("tx_mpwqe_pkts", |s| s.tx.mpwqe_pkts),
    ("tx_xmit_more", |s| s.tx.xmit_more),
    ("tx_nop", |s| s.tx.nop),
    ("tx_queue_stopped", |s| s.tx.stopped),
    ("tx_queue_wake", |s| s.tx.wake),
    ("tx_queue_dropped", |s| s.tx.dropped + s.tx_dropped),
    ("tx_cqes", |s| s.tx.cqes),
    ("tx_cqe_err", |s| s.tx.cqe_err),
    ("tx_wqes", |s| s.tx.wqes),
    ("tx_doorbells", |s| s.tx.doorbells),
    ("rx_packets", |s| s.rx.packets),
    ("rx_bytes", |s| s.rx.bytes),
    ("rx_wqe_err", |s| s.rx.wqe_err),
    ("rx_buff_alloc_err", |s| s.rx.buff_alloc_err),
    ("rx_cqe_compress_blks", |s| s.rx.cqe_compress_blks),
    ("rx_cqe_compress_pkts", |s| s.rx.cqe_compress_pkts),
    ("rx_dropped", |s| s.rx_dropped),
    ("rx_dbr_writes", |s| s.rx.dbr_writes),
    ("rx_polls", |s| s.rx.polls),
];

/// The simulated device's counters for the port.
pub(crate) const DEVICE: &[(&str, Get<PortCounters>)] = &[
    ("dev_doorbells", |c| c.doorbells),
    ("dev_sq_doorbells", |c| c.sq_doorbells),
    ("dev_arm_doorbells", |c| c.arm_doorbells),
    ("dev_bad_doorbells", |c| c.bad_doorbells),
    ("dev_dbr_reads", |c| c.dbr_reads),
    ("dev_wqes", |c| c.wqes),
    ("dev_wqebbs", |c| c.wqebbs),
    ("dev_wqe_bytes", |c| c.wqe_bytes),
    ("dev_mpwqe_wqes", |c| c.mpwqe_wqes),
    ("dev_mpwqe_pkts", |c| c.mpwqe_pkts),
    ("dev_wqe_errors", |c| c.wqe_errors),
    ("dev_tx_packets", |c| c.tx_packets),
    ("dev_tx_bytes", |c| c.tx_bytes),
    ("dev_tx_link_down_drops", |c| c.tx_link_down_drops),
    ("dev_tx_cqes", |c| c.tx_cqes),
    ("dev_rx_packets", |c| c.rx_packets),
    ("dev_rx_bytes", |c| c.rx_bytes),
    ("dev_rx_cqes", |c| c.rx_cqes),
    ("dev_rx_out_of_buffer", |c| c.rx_out_of_buffer),
    ("dev_tx_pause", |c| c.tx_pause),
    ("dev_rx_no_rq_drops", |c| c.rx_no_rq_drops),
    ("dev_rx_too_long", |c| c.rx_too_long),
    ("dev_cq_overruns", |c| c.cq_overruns),
    ("dev_interrupts", |c| c.interrupts),
    ("dev_dma_faults", |c| c.dma_faults),
    ("dev_pcie_in_tlps", |c| c.pcie.in_tlps),
    ("dev_pcie_in_bytes", |c| c.pcie.in_bytes),
    ("dev_pcie_out_tlps", |c| c.pcie.out_tlps),
    ("dev_pcie_out_bytes", |c| c.pcie.out_bytes),
    ("dev_tx_floor_in_bytes", |c| c.tx_floor_in_bytes),
];

/// Per-queue forms: `tx<N>_<name>`.
pub(crate) const TXQ: &[(&str, Get<ChannelStats>)] = &[
    ("packets", |s| s.tx.packets),
    ("bytes", |s| s.tx.bytes),
    ("mpwqe_blks", |s| s.tx.mpwqe_blks),
    ("mpwqe_pkts", |s| s.tx.mpwqe_pkts),
    ("xmit_more", |s| s.tx.xmit_more),
    ("nop", |s| s.tx.nop),
    ("stopped", |s| s.tx.stopped),
    ("wake", |s| s.tx.wake),
    ("dropped", |s| s.tx.dropped + s.tx_dropped),
    ("cqes", |s| s.tx.cqes),
    ("cqe_err", |s| s.tx.cqe_err),
    ("doorbells", |s| s.tx.doorbells),
];

/// Per-queue forms: `rx<N>_<name>`.
pub(crate) const RXQ: &[(&str, Get<ChannelStats>)] = &[
    ("packets", |s| s.rx.packets),
    ("bytes", |s| s.rx.bytes),
    ("wqe_err", |s| s.rx.wqe_err),
    ("buff_alloc_err", |s| s.rx.buff_alloc_err),
    ("cqe_compress_blks", |s| s.rx.cqe_compress_blks),
    ("cqe_compress_pkts", |s| s.rx.cqe_compress_pkts),
];

/// Per-channel forms: `ch<N>_<name>`.
pub(crate) const CH: &[(&str, Get<ChannelStats>)] =
    &[("arm", |s| s.arms), ("poll", |s| s.rx.polls)];

/// Adds `b` into `a`, counter by counter (wrapping, like the counters themselves).
pub(crate) fn accumulate(a: &mut ChannelStats, b: &ChannelStats) {
    macro_rules! sum {
        ($side:ident; $($g:ident),+) => {
            $( a.$side.$g = a.$side.$g.wrapping_add(b.$side.$g); )+
        };
    }
    sum!(tx; packets, bytes, tso_packets, tso_bytes, added_vlan_packets, csum_none,
        csum_partial, csum_partial_inner, nop, mpwqe_blks, mpwqe_pkts, inlnw, xmit_more,
        stopped, wake, dropped, busy, cqes, cqe_err, cqe_bad, wqes, doorbells);
    sum!(rx; packets, bytes, wqe_err, buff_alloc_err, cqe_compress_blks, cqe_compress_pkts,
        cqes, cqe_bad, dbr_writes, polls);
    a.tx_dropped = a.tx_dropped.wrapping_add(b.tx_dropped);
    a.rx_dropped = a.rx_dropped.wrapping_add(b.rx_dropped);
    a.arms = a.arms.wrapping_add(b.arms);
}
