// SPDX-License-Identifier: GPL-2.0

//! The model's own per-port counters ([`PortCounters`]): traffic, doorbells and WQEs,
//! validation failures, flow control, offloads, faults and the modeled PCIe bytes, as the
//! device hosts show them (debugfs, the device process's counters files; text in
//! [`crate::sim::counters`]). The driver never reads these: what it learns of the device's
//! counts comes by command (QUERY_VPORT_COUNTER, PPCNT, QUERY_Q_COUNTER; [`super::cmd`]).

use crate::sim::pcie::PcieCounters;

/// Counters of one port (device-wide: [`Device::totals`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PortCounters {
    /// PCIe traffic of this port's queues.
    pub pcie: PcieCounters,
    /// Register writes accepted on this port's UAR (SQ + arm doorbells).
    pub doorbells: u64,
    /// SQ doorbell writes.
    pub sq_doorbells: u64,
    /// CQ arm doorbell writes.
    pub arm_doorbells: u64,
    /// Register writes naming a queue this UAR does not own.
    pub bad_doorbells: u64,
    /// Doorbell-record reads (SQ pc, RQ wqe_ctr, CQ set_ci).
    pub dbr_reads: u64,
    /// Doorbell records with an impossible producer counter.
    pub dbr_invalid: u64,
    /// WQEs executed successfully (all opcodes): `nop_wqes + send_wqes + lso_wqes +
    /// mpwqe_wqes`.
    pub wqes: u64,
    /// WQEBBs of those WQEs.
    pub wqebbs: u64,
    /// Descriptor bytes fetched: the first WQEBB of every WQE plus the rest of its DS count
    /// (failed fetches included, as the read was on the bus).
    pub wqe_bytes: u64,
    /// NOP WQEs.
    pub nop_wqes: u64,
    /// SEND WQEs.
    pub send_wqes: u64,
    /// LSO WQEs.
    pub lso_wqes: u64,
    /// Packets the device cut out of LSO WQEs (each counts in `tx_packets` too): more than
    /// `lso_wqes` when the device really segmented.
    pub lso_segs: u64,
    /// Packets sent with an L3/L4 checksum the device computed: a SEND or MPWQE packet whose
    /// eth segment asks for one (`cs_flags`), and every LSO segment (segmentation fills the
    /// checksums). Counted when computed, before the link decides the frame's fate.
    pub tx_csum_offload: u64,
    /// SEND and LSO WQEs (host packets; an LSO WQE counts once) whose data segments point at
    /// more than one buffer: a segment whose address does not continue the previous one's
    /// starts a new buffer (the header inline in the WQE is none).
    pub tx_gather_pkts: u64,
    /// Enhanced MPWQEs executed successfully. One that faults while gathering counts in
    /// `wqe_errors` only (the packets it sent before the fault count in `mpwqe_pkts`).
    pub mpwqe_wqes: u64,
    /// Packets carried by enhanced MPWQEs.
    pub mpwqe_pkts: u64,
    /// WQEs rejected with an error CQE.
    pub wqe_errors: u64,
    /// Packets transmitted (LSO counts segments): put on the wire, or looped back to this
    /// port's own receive side (those also count in `loopback_packets`).
    pub tx_packets: u64,
    /// Bytes transmitted (after VLAN insertion and padding), looped ones included.
    pub tx_bytes: u64,
    /// Packets of `tx_packets` looped back to this port's receive side instead of the wire
    /// ([`Device::set_loopback`]).
    pub loopback_packets: u64,
    /// Bytes of `tx_bytes` looped back.
    pub loopback_bytes: u64,
    /// Packets dropped because this port or its peer is down (or has no peer); never a looped
    /// packet.
    pub tx_link_down_drops: u64,
    /// Sum of [`crate::sim::pcie::inbound_floor`] over the host bytes of every sent packet.
    pub tx_floor_in_bytes: u64,
    /// TX completions written (REQ).
    pub tx_cqes: u64,
    /// TX error CQEs written (REQ_ERR).
    pub tx_err_cqes: u64,
    /// RX completions (RESP_SEND), compressed ones included.
    pub rx_cqes: u64,
    /// RX error CQEs (RESP_ERR).
    pub rx_err_cqes: u64,
    /// 64-byte CQ slot writes (CQEs, titles and mini arrays).
    pub cq_slot_writes: u64,
    /// Compression sessions written (N ≥ 2).
    pub compress_sessions: u64,
    /// CQEs carried by compression sessions.
    pub compressed_cqes: u64,
    /// CQ overruns detected.
    pub cq_overruns: u64,
    /// CQEs not written because their CQ is in error.
    pub cqes_lost: u64,
    /// Faults the device host injected that took effect ([`Device::inject`]).
    pub faults_injected: u64,
    /// Interrupts lost to an injected fault ([`Fault::DropIrqs`]).
    pub irqs_lost: u64,
    /// Interrupts raised.
    pub interrupts: u64,
    /// Completion events: times a CQ fired (a completion EQE owed to its EQ, or its vector
    /// raised directly), whatever became of the EQE or interrupt afterwards. With
    /// `tx_cqes + rx_cqes` it gives the events per CQE that CQ moderation sets.
    pub cq_events: u64,
    /// Completion events of `cq_events` that moderation had held back and the period
    /// released (it ran out before `cq_max_count` CQEs were pending).
    pub cq_timer_events: u64,
    /// Packets received into an RQ.
    pub rx_packets: u64,
    /// Bytes received into an RQ, counted as they came off the wire (a tag the RQ stripped
    /// included, as the vport and port counters count it; the CQE's `byte_cnt` is without).
    pub rx_bytes: u64,
    /// Received frames whose outer 802.1Q tag the RQ stripped (`rqc.vsd` clear) and
    /// reported in the CQE.
    pub rx_vlan_stripped: u64,
    /// Transmitted frames the device tagged (the eth segment's VLAN insertion; LSO counts
    /// segments).
    pub tx_vlan_inserted: u64,
    /// Packets written over more than one data segment of their RX WQE (scatter).
    pub rx_scatter_pkts: u64,
    /// RX data segments written into (one per buffer a packet went into).
    pub rx_segs: u64,
    /// Packets dropped: RQ had no posted WQE.
    pub rx_out_of_buffer: u64,
    /// Times an SQ of this port waited because it honoured a PAUSE frame (its RX pause on;
    /// the receiver's queues, the peer's or its own in loopback, were short of posted WQEs;
    /// see "Flow control" in the module documentation).
    pub tx_pause: u64,
    /// Times this port stopped sending PAUSE frames after [`PAUSE_STORM`] in a row (stall
    /// prevention).
    pub pause_storms: u64,
    /// PAUSE frames this port transmitted (its receive side was short of posted WQEs and
    /// its TX pause is on): PPCNT's `a_pause_mac_ctrl_frames_transmitted`.
    pub tx_pause_frames: u64,
    /// PAUSE frames this port received (whether or not it honoured them): PPCNT's
    /// `a_pause_mac_ctrl_frames_received`.
    pub rx_pause_frames: u64,
    /// Packets dropped: no RSS table or the RQ is missing or in error.
    pub rx_no_rq_drops: u64,
    /// Packets longer than the RX WQE's buffers.
    pub rx_too_long: u64,
    /// RX DMA write faults.
    pub rx_dma_faults: u64,
    /// Faults reading a doorbell record or writing a CQE.
    pub dma_faults: u64,
    /// Commands executed (delivered, whatever their status).
    pub commands: u64,
    /// Queues created by command (CREATE_EQ, CREATE_CQ, CREATE_SQ, CREATE_RQ that
    /// succeeded): what a driver's channel opens cost the device.
    pub queues_created: u64,
    /// Pages of queues created with a page list that is not one contiguous range (the
    /// entries they took from the device's page-list pool, [`super::pas`]).
    pub pas_list_pages: u64,
    /// Commands answered with a status other than OK.
    pub cmd_errors: u64,
    /// Command entries answered with a delivery error.
    pub cmd_delivery_errors: u64,
    /// EQ doorbell writes (arm and ci).
    pub eq_doorbells: u64,
    /// EQEs written.
    pub eqes: u64,
    /// Command completion EQEs written (`MLX5_EVENT_TYPE_CMD`, events mode), among
    /// [`PortCounters::eqes`].
    pub cmd_eqes: u64,
    /// EQ overruns detected (the EQ is in error from then on).
    pub eq_overruns: u64,
    /// EQEs not written because their EQ is in error.
    pub eqes_lost: u64,
    /// PORT_CHANGE events (operational state changes reported).
    pub port_events: u64,
    /// Frames that arrived while the port's data path was stopped ([`Fault::DevStop`]),
    /// dropped.
    pub rx_stopped: u64,
    /// Firmware pages the function holds (MANAGE_PAGES given, not yet taken back).
    pub fw_pages: u64,
    /// Frames the vport's address filter (the UC / MC lists and promiscuous flags a driver
    /// programmed in the NIC vport context) did not let through.
    pub rx_vport_filtered: u64,
    /// Frames the flow tables dropped (an entry's drop action, a miss without a miss table);
    /// they count in `rx_no_rq_drops` too.
    pub rx_steering_drops: u64,
    /// Data segments whose lkey is not a memory key of the function (error CQEs).
    pub mkey_errors: u64,
}

macro_rules! add_counters {
    ($dst:expr, $src:expr, $($f:ident),*) => {
        $( $dst.$f = $dst.$f.wrapping_add($src.$f); )*
    };
}

impl PortCounters {
    /// All zero.
    pub const ZERO: Self = Self {
        pcie: PcieCounters {
            in_tlps: 0,
            in_bytes: 0,
            out_tlps: 0,
            out_bytes: 0,
        },
        doorbells: 0,
        sq_doorbells: 0,
        arm_doorbells: 0,
        bad_doorbells: 0,
        dbr_reads: 0,
        dbr_invalid: 0,
        wqes: 0,
        wqebbs: 0,
        wqe_bytes: 0,
        nop_wqes: 0,
        send_wqes: 0,
        lso_wqes: 0,
        lso_segs: 0,
        tx_csum_offload: 0,
        tx_gather_pkts: 0,
        mpwqe_wqes: 0,
        mpwqe_pkts: 0,
        wqe_errors: 0,
        tx_packets: 0,
        tx_bytes: 0,
        loopback_packets: 0,
        loopback_bytes: 0,
        tx_link_down_drops: 0,
        tx_floor_in_bytes: 0,
        tx_cqes: 0,
        tx_err_cqes: 0,
        rx_cqes: 0,
        rx_err_cqes: 0,
        cq_slot_writes: 0,
        compress_sessions: 0,
        compressed_cqes: 0,
        cq_overruns: 0,
        cqes_lost: 0,
        faults_injected: 0,
        irqs_lost: 0,
        interrupts: 0,
        cq_events: 0,
        cq_timer_events: 0,
        rx_packets: 0,
        rx_bytes: 0,
        rx_vlan_stripped: 0,
        tx_vlan_inserted: 0,
        rx_scatter_pkts: 0,
        rx_segs: 0,
        rx_out_of_buffer: 0,
        tx_pause: 0,
        pause_storms: 0,
        tx_pause_frames: 0,
        rx_pause_frames: 0,
        rx_no_rq_drops: 0,
        rx_too_long: 0,
        rx_dma_faults: 0,
        dma_faults: 0,
        commands: 0,
        queues_created: 0,
        pas_list_pages: 0,
        cmd_errors: 0,
        cmd_delivery_errors: 0,
        eq_doorbells: 0,
        eqes: 0,
        cmd_eqes: 0,
        eq_overruns: 0,
        eqes_lost: 0,
        port_events: 0,
        rx_stopped: 0,
        fw_pages: 0,
        rx_vport_filtered: 0,
        rx_steering_drops: 0,
        mkey_errors: 0,
    };

    /// Adds `o` into `self`.
    pub fn add(&mut self, o: &PortCounters) {
        self.pcie.add(&o.pcie);
        add_counters!(
            self,
            o,
            doorbells,
            sq_doorbells,
            arm_doorbells,
            bad_doorbells,
            dbr_reads,
            dbr_invalid,
            wqes,
            wqebbs,
            wqe_bytes,
            nop_wqes,
            send_wqes,
            lso_wqes,
            lso_segs,
            tx_csum_offload,
            tx_gather_pkts,
            mpwqe_wqes,
            mpwqe_pkts,
            wqe_errors,
            tx_packets,
            tx_bytes,
            loopback_packets,
            loopback_bytes,
            tx_link_down_drops,
            tx_floor_in_bytes,
            tx_cqes,
            tx_err_cqes,
            rx_cqes,
            rx_err_cqes,
            cq_slot_writes,
            compress_sessions,
            compressed_cqes,
            cq_overruns,
            cqes_lost,
            faults_injected,
            irqs_lost,
            interrupts,
            cq_events,
            cq_timer_events,
            rx_packets,
            rx_bytes,
            rx_vlan_stripped,
            tx_vlan_inserted,
            rx_scatter_pkts,
            rx_segs,
            rx_out_of_buffer,
            tx_pause,
            pause_storms,
            tx_pause_frames,
            rx_pause_frames,
            rx_no_rq_drops,
            rx_too_long,
            rx_dma_faults,
            dma_faults,
            commands,
            queues_created,
            pas_list_pages,
            cmd_errors,
            cmd_delivery_errors,
            eq_doorbells,
            eqes,
            cmd_eqes,
            eq_overruns,
            eqes_lost,
            port_events,
            rx_stopped,
            fw_pages,
            rx_vport_filtered,
            rx_steering_drops,
            mkey_errors
        );
    }
}
