// SPDX-License-Identifier: GPL-2.0

//! Per-queue counters with mlx5's names (spec E.1), plus rsnic's exact event counts
//! (doorbells, doorbell-record writes, device protocol violations).

pub(crate) use crate::hwif::add;

/// Per-SQ counters (`tx%d_*`).
///
/// The packets of an MPWQE session count in `packets`, `bytes`, `mpwqe_pkts` and the
/// `csum_*` counters when the session is posted (closed), once per session; sessions close at
/// the latest when the burst ends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxStats {
    /// Packets queued (a GSO packet counts its segments).
    pub packets: u64,
    /// Bytes queued (BQL bytes: 60-byte minimum, GSO headers per segment).
    pub bytes: u64,
    /// GSO packets.
    pub tso_packets: u64,
    /// GSO payload bytes (length minus headers).
    pub tso_bytes: u64,
    /// Packets whose VLAN tag the SQ inserted (inline or by the device).
    pub added_vlan_packets: u64,
    /// Packets without checksum offload.
    pub csum_none: u64,
    /// Packets with outer checksum offload.
    pub csum_partial: u64,
    /// Packets with inner checksum offload.
    pub csum_partial_inner: u64,
    /// Edge-padding NOP WQEBBs.
    pub nop: u64,
    /// MPWQE sessions started.
    pub mpwqe_blks: u64,
    /// Packets added to MPWQE sessions.
    pub mpwqe_pkts: u64,
    /// Packets inlined into MPWQE sessions.
    pub inlnw: u64,
    /// Packets sent with xmit_more.
    pub xmit_more: u64,
    /// Times the queue was stopped for lack of room.
    pub stopped: u64,
    /// Times the queue was woken by the completion path.
    pub wake: u64,
    /// Packets dropped (handed back to be freed).
    pub dropped: u64,
    /// Packets handed back as busy (to be requeued); rsnic-specific.
    pub busy: u64,
    /// CQEs polled.
    pub cqes: u64,
    /// Error CQEs (REQ_ERR).
    pub cqe_err: u64,
    /// CQEs that broke the protocol (bad wqe_counter or opcode); rsnic-specific.
    pub cqe_bad: u64,
    /// WQEs posted (regular and MPWQE, NOPs not included); rsnic-specific.
    pub wqes: u64,
    /// Doorbell register writes; rsnic-specific.
    pub doorbells: u64,
}

/// Per-RQ counters (`rx%d_*`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RxStats {
    /// Packets delivered.
    pub packets: u64,
    /// Bytes delivered.
    pub bytes: u64,
    /// Error CQEs (opcode other than RESP_SEND).
    pub wqe_err: u64,
    /// Buffer allocation failures while refilling.
    pub buff_alloc_err: u64,
    /// Compressed CQE sessions.
    pub cqe_compress_blks: u64,
    /// CQEs rebuilt from mini CQEs.
    pub cqe_compress_pkts: u64,
    /// CQ entries consumed; rsnic-specific.
    pub cqes: u64,
    /// CQEs that broke the protocol (wqe_counter, byte count, session length);
    /// rsnic-specific.
    pub cqe_bad: u64,
    /// RQ doorbell-record writes; rsnic-specific.
    pub dbr_writes: u64,
    /// Poll calls; rsnic-specific.
    pub polls: u64,
    /// Packets received over more than one buffer (RX scatter); rsnic-specific.
    pub scatter_pkts: u64,
    /// CQEs discarded while the RQ was stopped on a fault; rsnic-specific.
    pub cqe_discarded: u64,
}
