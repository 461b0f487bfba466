// SPDX-License-Identifier: GPL-2.0

//! Per-queue counters with MANA's names where MANA has them (spec E.3), plus rsnic's exact
//! event counts (doorbells, CQEs, protocol violations).

pub(crate) use crate::hwif::add;

/// Per-SQ counters (`tx_%d_*` and the global software counters).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxStats {
    /// Packets queued (a TSO packet counts once, as MANA does).
    pub packets: u64,
    /// Bytes queued (`skb->len`).
    pub bytes: u64,
    /// TSO packets.
    pub tso_packets: u64,
    /// TSO payload bytes (length minus headers).
    pub tso_bytes: u64,
    /// WQEs with the short OOB.
    pub short_pkt_fmt: u64,
    /// WQEs with the long OOB.
    pub long_pkt_fmt: u64,
    /// Packets with checksum offload.
    pub csum_partial: u64,
    /// DMA mapping failures.
    pub mana_map_err: u64,
    /// Queue stopped for lack of room.
    pub stop_queue: u64,
    /// Queue woken by the completion path.
    pub wake_queue: u64,
    /// TX error CQEs (`tx_cq_err`).
    pub tx_cqe_err: u64,
    /// TX CQEs of an unknown type.
    pub tx_cqe_unknown_type: u64,
    /// Packets sent with xmit_more (rsnic: MANA has no xmit_more batching).
    pub xmit_more: u64,
    /// Packets handed back as busy; rsnic-specific.
    pub busy: u64,
    /// Packets handed back to be freed; rsnic-specific.
    pub dropped: u64,
    /// CQEs polled; rsnic-specific.
    pub cqes: u64,
    /// CQEs that broke the protocol (wrong queue, nothing outstanding); rsnic-specific.
    pub cqe_bad: u64,
    /// CQ overflows seen through the owner bits; rsnic-specific.
    pub cq_overflow: u64,
    /// CQEs written after the SQ stopped on a fault, consumed unread; rsnic-specific.
    pub cqe_discarded: u64,
    /// WQEs posted; rsnic-specific.
    pub wqes: u64,
    /// BUs posted; rsnic-specific.
    pub bus: u64,
    /// SQ doorbell register writes; rsnic-specific.
    pub doorbells: u64,
}

/// Per-RQ counters (`rx_%d_*` and the global software counters).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RxStats {
    /// Packets delivered.
    pub packets: u64,
    /// Bytes delivered.
    pub bytes: u64,
    /// COALESCED CQEs (the driver does not handle them).
    pub rx_coalesced_err: u64,
    /// RX CQEs of an unknown type (not OBJECT_FENCE: that one is known and counts nothing).
    pub rx_cqe_unknown_type: u64,
    /// Truncated packets dropped; rsnic-specific.
    pub rx_truncated: u64,
    /// Packets dropped because no fresh buffer was available (the old one is re-posted).
    pub rx_dropped: u64,
    /// Fresh buffers a fill or top-up of the ring could not allocate (no packet is lost: the
    /// WQE stays empty until a later poll fills it); rsnic-specific.
    pub buff_alloc_err: u64,
    /// CQEs read; rsnic-specific.
    pub cqes: u64,
    /// CQEs that broke the protocol (wrong queue, bad length, nothing posted);
    /// rsnic-specific.
    pub cqe_bad: u64,
    /// CQ overflows seen through the owner bits; rsnic-specific.
    pub cq_overflow: u64,
    /// CQEs written after the RQ stopped on a fault, consumed unread (their frames are
    /// lost); rsnic-specific.
    pub cqe_discarded: u64,
    /// WQEs posted; rsnic-specific.
    pub wqes: u64,
    /// RQ doorbell register writes; rsnic-specific.
    pub doorbells: u64,
    /// Polls; rsnic-specific.
    pub polls: u64,
    /// Polls that read at least one CQE; rsnic-specific.
    pub polls_with_work: u64,
}
