// SPDX-License-Identifier: GPL-2.0

//! The MANA family's queue counters in `ethtool -S`: its views of the `hwif::mana` SQ and RQ
//! counters (what is accumulated, which rows show them, with which names).
//!
//! Upstream counterpart: `mana_ethtool.c` (`mana_eth_stats` and the per-queue `tx_%d_*`, `rx_%d_*`: MANA's names).

use crate::family::mana::Mana;
use crate::family::stats::counters;
use crate::hwif::mana::stats::{RxStats, TxStats};

counters! {
    /// A MANA SQ's counters in `ethtool -S`, by the SQ they count: the regular SQ (MANA's
    /// names: `stop_queue`, `tx_cq_err`, `tx_<N>_tso_packets`, ...) and the XSK SQ (mlx5e's
    /// `tx_xsk_*`, as upstream mana has no AF_XDP zero-copy); the doorbells, WQEs, CQEs and
    /// the bad, overflowed and discarded CQEs are rsnic's. Packets, bytes and drops of the
    /// regular SQ are the family-neutral rows'.
    pub(super) view TxStats as SQ_ROWS for Mana {
        packets [xsk_sq Global "tx_xsk_xmit", xsk_sq Txq "xsk_xmit"],
        bytes,
        tso_packets [tx Global "tx_tso_packets", tx Txq "tso_packets"],
        tso_bytes [tx Txq "tso_bytes"],
        short_pkt_fmt [tx Global "tx_short_pkt_fmt", tx Txq "short_pkt_fmt"],
        long_pkt_fmt [tx Global "tx_long_pkt_fmt", tx Txq "long_pkt_fmt"],
        csum_partial [tx Global "tx_csum_partial", tx Txq "csum_partial"],
        mana_map_err [tx Txq "mana_map_err"],
        stop_queue [tx Global "stop_queue", tx Txq "stop_queue", xsk_sq Global "tx_xsk_full"],
        wake_queue [tx Global "wake_queue", tx Txq "wake_queue"],
        tx_cqe_err [tx Global "tx_cq_err", xsk_sq Global "tx_xsk_cqe_err"],
        tx_cqe_unknown_type [tx Global "tx_cqe_unknown_type"],
        xmit_more [tx Global "tx_xmit_more", tx Txq "xmit_more"],
        busy,
        dropped,
        cqes [
            tx Global "tx_cqes",
            tx Txq "cqes",
            xsk_sq Global "tx_xsk_cqes",
            xsk_sq Txq "xsk_cqes",
        ],
        // The SQ's and the RQ's together.
        cqe_bad [tx + rx Global "cqe_bad"],
        // CQ overflows the owner bits showed (the queue stops), of every CQ.
        cq_overflow [tx + rx + xsk_sq + xsk_rx Global "cq_overflow"],
        cqe_discarded [tx + xsk_sq Global "tx_cqe_discarded"],
        wqes [tx Global "tx_wqes"],
        bus,
        doorbells [
            tx Global "tx_doorbells",
            tx Txq "doorbells",
            xsk_sq Global "tx_xsk_doorbells",
        ],
    }
}

counters! {
    /// A MANA RQ's counters in `ethtool -S`, by the RQ they count: the regular RQ (MANA's
    /// names: `rx_coalesced_err`, `rx_<N>_packets`, ...) and the XSK RQ (mlx5e's
    /// `rx_xsk_*`); the CQEs, WQEs, doorbells and polls are rsnic's. Packets and bytes of the
    /// regular RQ are the family-neutral rows'.
    pub(super) view RxStats as RQ_ROWS for Mana {
        packets [xsk_rx Global "rx_xsk_packets", xsk_rx Rxq "xsk_packets"],
        bytes [xsk_rx Global "rx_xsk_bytes"],
        rx_coalesced_err [rx Global "rx_coalesced_err"],
        rx_cqe_unknown_type [rx Global "rx_cqe_unknown_type"],
        rx_truncated [rx Global "rx_truncated", xsk_rx Global "rx_xsk_truncated"],
        rx_dropped [rx Global "rx_buff_alloc_err"],
        buff_alloc_err [rx Global "rx_fill_alloc_err"],
        cqes [rx Global "rx_cqes", rx Rxq "cqes", xsk_rx Global "rx_xsk_cqes"],
        cqe_bad,
        cq_overflow,
        cqe_discarded [rx + xsk_rx Global "rx_cqe_discarded"],
        wqes [rx Global "rx_wqes"],
        doorbells [rx Global "rx_doorbells", rx Rxq "doorbells", xsk_rx Global "rx_xsk_doorbells"],
        polls [rx Global "rx_polls", rx Ch "poll"],
        polls_with_work [rx Global "rx_polls_with_work", rx Rxq "polls_with_work"],
    }
}
