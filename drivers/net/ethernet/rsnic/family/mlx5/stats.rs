// SPDX-License-Identifier: GPL-2.0

//! The ConnectX family's queue counters in `ethtool -S`: its views of the `hwif::mlx5` SQ and RQ
//! counters (what is accumulated, which rows show them, with which names).
//!
//! Upstream counterpart: `en_stats.c` (`sq_stats_desc`, `rq_stats_desc`, `sw_stats_desc`, `xdpsq_stats_desc`, `xsksq_stats_desc`, `xskrq_stats_desc`: mlx5e's names).

use crate::family::mlx5::Mlx5;
use crate::family::stats::counters;
use crate::hwif::mlx5::stats::{RxStats, TxStats};

counters! {
    /// A ConnectX SQ's counters in `ethtool -S`, by the SQ they count: the regular SQ
    /// (mlx5e's `tx*`), the XDP_TX SQ (`rx_xdp_tx_*`), the `ndo_xdp_xmit` SQ (`tx_xdp_*`) and
    /// the XSK SQ (`tx_xsk_*`), with mlx5e's names (the doorbells, WQEs and inlined MPWQE
    /// packets are rsnic's). Packets, bytes and drops of the regular SQ are the
    /// family-neutral rows'.
    pub(super) view TxStats as SQ_ROWS for Mlx5 {
        packets [
            xdpsq Global "rx_xdp_tx_xmit",
            xdpsq Rxq "xdp_tx_xmit",
            xdp_rd Global "tx_xdp_xmit",
            xdp_rd Txq "xdp_xmit",
            xsk_sq Global "tx_xsk_xmit",
            xsk_sq Txq "xsk_xmit",
        ],
        bytes,
        tso_packets,
        tso_bytes,
        added_vlan_packets,
        csum_none,
        csum_partial,
        csum_partial_inner,
        nop [
            tx Global "tx_nop",
            tx Txq "nop",
            xdpsq Global "rx_xdp_tx_nops",
            xdpsq Rxq "xdp_tx_nops",
            xdp_rd Global "tx_xdp_nops",
        ],
        mpwqe_blks [
            tx Global "tx_mpwqe_blks",
            tx Txq "mpwqe_blks",
            xdpsq Global "rx_xdp_tx_mpwqe",
            xdpsq Rxq "xdp_tx_mpwqe",
            xdp_rd Global "tx_xdp_mpwqe",
            xdp_rd Txq "xdp_mpwqe",
            xsk_sq Global "tx_xsk_mpwqe",
        ],
        mpwqe_pkts [tx Global "tx_mpwqe_pkts", tx Txq "mpwqe_pkts"],
        // MPWQE packets inlined whole (a device that demands inline headers; rsnic's).
        inlnw [
            tx Global "tx_mpwqe_inlnw",
            xdpsq Global "rx_xdp_tx_inlnw",
            xdpsq Rxq "xdp_tx_inlnw",
            xdp_rd Global "tx_xdp_inlnw",
            xdp_rd Txq "xdp_inlnw",
            xsk_sq Global "tx_xsk_inlnw",
        ],
        xmit_more [tx Global "tx_xmit_more", tx Txq "xmit_more"],
        stopped [tx Global "tx_queue_stopped", tx Txq "stopped", xsk_sq Global "tx_xsk_full"],
        wake [tx Global "tx_queue_wake", tx Txq "wake"],
        dropped,
        busy,
        cqes [
            tx Global "tx_cqes",
            tx Txq "cqes",
            xdpsq Global "rx_xdp_tx_cqe",
            xdpsq Rxq "xdp_tx_cqes",
            xdp_rd Global "tx_xdp_cqes",
            xdp_rd Txq "xdp_cqes",
            xsk_sq Global "tx_xsk_cqes",
            xsk_sq Txq "xsk_cqes",
        ],
        cqe_err [tx Global "tx_cqe_err", tx Txq "cqe_err"],
        cqe_bad,
        wqes [tx Global "tx_wqes"],
        doorbells [
            tx Global "tx_doorbells",
            tx Txq "doorbells",
            xdpsq Global "rx_xdp_tx_doorbells",
            xdp_rd Global "tx_xdp_doorbells",
            xsk_sq Global "tx_xsk_doorbells",
        ],
    }
}

counters! {
    /// A ConnectX RQ's counters in `ethtool -S`, by the RQ they count: the regular RQ
    /// (mlx5e's `rx*`, `ch*_poll`) and the XSK RQ (`rx_xsk_*`), with mlx5e's names (the
    /// doorbell-record writes, polls, scattered packets, bad and discarded CQEs are rsnic's).
    /// Packets and bytes of the regular RQ are the family-neutral rows'.
    pub(super) view RxStats as RQ_ROWS for Mlx5 {
        packets [xsk_rx Global "rx_xsk_packets", xsk_rx Rxq "xsk_packets"],
        bytes [xsk_rx Global "rx_xsk_bytes"],
        wqe_err [rx Global "rx_wqe_err", rx Rxq "wqe_err", xsk_rx Global "rx_xsk_wqe_err"],
        buff_alloc_err [rx Global "rx_buff_alloc_err", rx Rxq "buff_alloc_err"],
        cqe_compress_blks [rx Global "rx_cqe_compress_blks", rx Rxq "cqe_compress_blks"],
        cqe_compress_pkts [rx Global "rx_cqe_compress_pkts", rx Rxq "cqe_compress_pkts"],
        cqes,
        cqe_bad [rx Global "rx_cqe_bad"],
        dbr_writes [rx Global "rx_dbr_writes"],
        polls [rx Global "rx_polls", rx Ch "poll"],
        // Packets received over several pages (RX scatter, MTU above a page; rsnic's).
        scatter_pkts [rx Global "rx_scatter_pkts"],
        cqe_discarded [rx Global "rx_cqe_discarded"],
    }
}
