// SPDX-License-Identifier: GPL-2.0

//! The MANA model's own per-port counters ([`PortCounters`]): traffic, doorbells and WQEs,
//! validation failures, flow control, faults, the `hc_*` counters MANA_QUERY_GF_STAT reports
//! and the modeled PCIe bytes, as the device hosts show them (text in
//! [`crate::sim::counters`]).

use crate::sim::pcie::PcieCounters;

/// Counters of one port. `hc_*` are MANA's names (spec E.3); the rest are rsnic's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PortCounters {
    /// PCIe traffic of this port.
    pub pcie: PcieCounters,
    /// Doorbells accepted on this port's page (all four kinds).
    pub doorbells: u64,
    /// SQ doorbells.
    pub sq_doorbells: u64,
    /// RQ doorbells (those with a non-zero wqe_cnt included).
    pub rq_doorbells: u64,
    /// CQ doorbells.
    pub cq_doorbells: u64,
    /// CQ doorbells with arm = 1.
    pub cq_arms: u64,
    /// EQ doorbells.
    pub eq_doorbells: u64,
    /// Doorbells naming a queue this port does not own.
    pub bad_doorbells: u64,
    /// RQ doorbells with a non-zero `wqe_cnt` (device error; the doorbell is ignored).
    pub rq_db_wqe_cnt_errors: u64,
    /// SQ/RQ doorbells with an impossible `tail_ptr` (ignored).
    pub db_invalid: u64,
    /// TX WQEs executed (good or bad).
    pub wqes: u64,
    /// Descriptor bytes fetched (TX and RX WQEs).
    pub wqe_bytes: u64,
    /// TX WQEs answered with an error CQE.
    pub tx_wqe_errors: u64,
    /// TSO WQEs executed (MSS in `client_data_unit`, headers in SGE 0).
    pub lso_wqes: u64,
    /// Packets the device cut out of TSO WQEs (each counts in the `hc_tx_*_pkts` too): more
    /// than `lso_wqes` when the device really segmented.
    pub lso_segs: u64,
    /// Packets sent with an L3/L4 checksum the device computed: a packet whose OOB asks for
    /// one (`comp_iphdr_csum`, `comp_tcp_csum`, `comp_udp_csum`), and every TSO segment
    /// (segmentation fills the checksums). Counted when computed, before the link decides the
    /// frame's fate.
    pub tx_csum_offload: u64,
    /// TX WQEs sent (host packets; a TSO WQE counts once) whose SGEs point at more than one
    /// buffer: an SGE whose address does not continue the previous one's starts a new buffer
    /// (so the header SGE of a linear TSO packet is not one of its own).
    pub tx_gather_pkts: u64,
    /// Unicast packets transmitted (TSO counts segments): put on the wire or looped back.
    pub hc_tx_ucast_pkts: u64,
    /// Broadcast packets sent.
    pub hc_tx_bcast_pkts: u64,
    /// Multicast packets sent.
    pub hc_tx_mcast_pkts: u64,
    /// Bytes transmitted (on the wire or looped back).
    pub hc_tx_bytes: u64,
    /// Bytes of the unicast packets sent (`hc_tx_ucast_bytes`; the three casts' bytes add up
    /// to [`PortCounters::hc_tx_bytes`]).
    pub hc_tx_ucast_bytes: u64,
    /// Bytes of the broadcast packets sent.
    pub hc_tx_bcast_bytes: u64,
    /// Bytes of the multicast packets sent.
    pub hc_tx_mcast_bytes: u64,
    /// TX errors: invalid OOB.
    pub hc_tx_err_inval_oob: u64,
    /// TX errors: MTU violation.
    pub hc_tx_err_mtu_violation: u64,
    /// TX errors: GDMA-level (malformed WQE, SGE, read fault, headers).
    pub hc_tx_err_gdma: u64,
    /// Packets of the `hc_tx_*_pkts` looped back to this port's receive side instead of the
    /// wire ([`Device::set_loopback`]).
    pub loopback_packets: u64,
    /// Bytes of `hc_tx_bytes` looped back.
    pub loopback_bytes: u64,
    /// Packets dropped because a link is down or there is no peer (never a looped packet).
    pub tx_link_down_drops: u64,
    /// Times an SQ of this port waited because it honoured a PAUSE frame (its RX pause on;
    /// an RQ of the receiver, the peer or this port in loopback, was short of posted WQEs;
    /// see "Flow control" in the module documentation).
    pub tx_pause: u64,
    /// Times this port stopped sending PAUSE frames after [`PAUSE_STORM`] in a row (stall
    /// prevention, counted at the receiver).
    pub tx_pause_storms: u64,
    /// PAUSE frames this port transmitted (its receive side was short of posted WQEs and its
    /// TX pause is on); RSNIC_QUERY_PAUSE reports it.
    pub tx_pause_frames: u64,
    /// PAUSE frames this port received (whether or not it honoured them); RSNIC_QUERY_PAUSE
    /// reports it.
    pub rx_pause_frames: u64,
    /// Sum of [`crate::sim::pcie::inbound_floor`] over the host bytes of every sent packet.
    pub tx_floor_in_bytes: u64,
    /// TX CQEs written (all types).
    pub tx_cqes: u64,
    /// TX error CQEs written.
    pub tx_err_cqes: u64,
    /// Unicast packets received into an RQ.
    pub hc_rx_ucast_pkts: u64,
    /// Broadcast packets received.
    pub hc_rx_bcast_pkts: u64,
    /// Multicast packets received.
    pub hc_rx_mcast_pkts: u64,
    /// Bytes received into an RQ.
    pub hc_rx_bytes: u64,
    /// Bytes of the unicast packets received (`hc_rx_ucast_bytes`; the three casts' bytes
    /// add up to [`PortCounters::hc_rx_bytes`]).
    pub hc_rx_ucast_bytes: u64,
    /// Bytes of the broadcast packets received.
    pub hc_rx_bcast_bytes: u64,
    /// Bytes of the multicast packets received.
    pub hc_rx_mcast_bytes: u64,
    /// Received frames whose 802.1Q tag the device stripped (reported in the CQE; the
    /// `hc_rx_*bytes` count the frame with its tag, the host got 4 bytes less).
    pub rx_vlan_stripped: u64,
    /// Packets dropped because the RQ had no posted WQE.
    pub hc_rx_discards_no_wqe: u64,
    /// Packets dropped: no RSS table, or the RQ is missing or in error.
    pub rx_no_rq_drops: u64,
    /// Of [`PortCounters::rx_no_rq_drops`], those that came while the vport's RX was off
    /// (MANA_CONFIG_VPORT_RX's `rx_enable` false, or never set): `hc_rx_err_vport_disabled`.
    pub hc_rx_err_vport_disabled: u64,
    /// Malformed RX WQEs (the RQ enters the error state).
    pub rx_wqe_errors: u64,
    /// RX CQEs written (RX_OKAY and RX_TRUNCATED).
    pub rx_cqes: u64,
    /// Truncated packets (RX_TRUNCATED CQEs).
    pub rx_truncated: u64,
    /// CQEs written more than 8 × num after the last CQ doorbell.
    pub cq_db_overdue: u64,
    /// EQEs written.
    pub eqes: u64,
    /// Interrupts raised.
    pub interrupts: u64,
    /// DMA faults (RX data, CQE, EQE or doorbell-unrelated reads).
    pub dma_faults: u64,
    /// SGEs (TX or RX) whose `mem_key` is not the device's `gpa_mkey`: a TX WQE completes
    /// with HDR_PROCESSING_ERROR, an RX WQE with RX_TRUNCATED (nothing is read or written
    /// through the key).
    pub mkey_errors: u64,
    /// Injected faults that took effect ([`Device::inject`]).
    pub faults_injected: u64,
    /// Interrupts lost to an injected fault ([`Fault::DropIrqs`]).
    pub irqs_lost: u64,
    /// Frames that arrived while the port's data path was stopped ([`Fault::DevStop`]),
    /// dropped.
    pub rx_stopped: u64,
    /// Queues created by request (GDMA_CREATE_QUEUE's EQs, MANA_CREATE_WQ_OBJ's SQs and RQs,
    /// each with its CQ) that succeeded: what a driver's channel opens cost the device.
    pub queues_created: u64,
}

impl PortCounters {
    /// Packets received into RQs (all casts).
    pub fn rx_packets(&self) -> u64 {
        self.hc_rx_ucast_pkts + self.hc_rx_bcast_pkts + self.hc_rx_mcast_pkts
    }
    /// Packets sent (all casts).
    pub fn tx_packets(&self) -> u64 {
        self.hc_tx_ucast_pkts + self.hc_tx_bcast_pkts + self.hc_tx_mcast_pkts
    }
}
