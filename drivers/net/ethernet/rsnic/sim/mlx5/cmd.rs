// SPDX-License-Identifier: GPL-2.0

//! The command interface of the model: the initialization segment's registers, the command
//! queue processor and the commands (see the parent module's "Control plane" section).
//!
//! Every failure is a delivery status (in the entry's `status_own`) or a command status and
//! a syndrome (in the output header); [`synd`] lists the syndromes.

use super::ifc::{self, delivery, get, iseg, layout, mbox, op, set, status};
use super::pas::{self, Ring};
use super::{
    make_qn, split_qn, Caps, CqConfig, PortCounters, QueueState, RqConfig, SqConfig, SqCtx, Tables,
    API_UAR, CQN_BASE, EQN_BASE, FG_BASE, FIRST_UAR, FT_BASE, MAX_QUEUES, MAX_RQT_SIZE,
    MAX_SESSION, MAX_UARS, MAX_VECTORS, PD_BASE, RQN_BASE, RQTN_BASE, SQN_BASE, TD_BASE, TIRN_BASE,
    TISN_BASE,
};
use crate::dp::bytes::{be32, be64, put_be64};
use crate::dp::hw::{BusMemory, DmaAddr};

/// The syndromes of failed commands: one per check, so a failure names the check.
pub mod synd {
    /// Unknown opcode (BAD_OP).
    pub const UNKNOWN_OPCODE: u32 = 0x01;
    /// op_mod not allowed for this opcode (BAD_OP).
    pub const BAD_OP_MOD: u32 = 0x02;
    /// Command not allowed in the HCA's state (BAD_SYS_STATE).
    pub const WRONG_HCA_STATE: u32 = 0x03;
    /// inlen below the command's input size (BAD_INPUT_LEN).
    pub const INPUT_TOO_SHORT: u32 = 0x04;
    /// outlen below the command's output size (BAD_OUTPUT_LEN).
    pub const OUTPUT_TOO_SHORT: u32 = 0x05;
    /// Failed on request of the device host ([`crate::sim::mlx5::Device::fail_command`];
    /// INT_ERR).
    pub const INJECTED: u32 = 0x06;
    /// ENABLE/DISABLE_HCA: function_id or embedded_cpu_function not 0 (BAD_PARAM).
    pub const FUNCTION_ID: u32 = 0x10;
    /// SET_ISSI: an ISSI other than 0 or 1 (BAD_PARAM).
    pub const ISSI: u32 = 0x11;
    /// QUERY_HCA_CAP: a capability type other than general (0) or Ethernet (1) (BAD_PARAM).
    pub const CAP_TYPE: u32 = 0x12;
    /// other_function / other_vport set (BAD_PARAM).
    pub const OTHER_FUNCTION: u32 = 0x13;
    /// TEARDOWN_HCA: profile not graceful (BAD_PARAM).
    pub const TEARDOWN_PROFILE: u32 = 0x14;
    /// ALLOC_UAR/PD/TRANSPORT_DOMAIN: table full (NO_RESOURCES).
    pub const NO_ALLOC: u32 = 0x20;
    /// A UAR index this function did not allocate (BAD_RESOURCE).
    pub const BAD_UAR: u32 = 0x21;
    /// A PD this function did not allocate (BAD_RESOURCE).
    pub const BAD_PD: u32 = 0x22;
    /// A transport domain this function did not allocate (BAD_RESOURCE).
    pub const BAD_TD: u32 = 0x23;
    /// DEALLOC of a UAR, PD or transport domain an object still uses (RESOURCE_BUSY).
    pub const ALLOC_IN_USE: u32 = 0x24;
    /// EQ: log_eq_size 0 or above log_max_eq_sz (BAD_PARAM).
    pub const EQ_SIZE: u32 = 0x30;
    /// EQ: intr beyond the function's vectors (BAD_PARAM).
    pub const EQ_INTR: u32 = 0x31;
    /// A page_offset other than 0 (BAD_PARAM).
    pub const PAGE_OFFSET: u32 = 0x32;
    /// pas\[0\] not aligned to the page size (BAD_PARAM).
    pub const PAS_ALIGN: u32 = 0x33;
    /// Not produced any more: a list of pages that are not contiguous is a page list
    /// ([`super::super::pas`]).
    pub const PAS_NOT_CONTIGUOUS: u32 = 0x34;
    /// inlen too short for the PAS list the queue size needs (BAD_INPUT_LEN).
    pub const PAS_TOO_SHORT: u32 = 0x35;
    /// log_page_size above 16 (BAD_PARAM).
    pub const LOG_PAGE_SIZE: u32 = 0x36;
    /// No free EQ (NO_RESOURCES).
    pub const NO_EQ: u32 = 0x37;
    /// An EQ number of no EQ of this function (BAD_RESOURCE).
    pub const BAD_EQ: u32 = 0x38;
    /// DESTROY_EQ of an EQ a CQ names (RESOURCE_BUSY).
    pub const EQ_IN_USE: u32 = 0x39;
    /// CQ: cqe_sz not 64 bytes (BAD_PARAM).
    pub const CQE_SIZE: u32 = 0x40;
    /// CQ: log_cq_size above log_max_cq_sz (BAD_PARAM).
    pub const CQ_SIZE: u32 = 0x41;
    /// CQ: cqe_comp_en without the capability, a layout other than basic, or a mini CQE
    /// format other than CSUM (1) / CSUM_STRIDX (3) (BAD_PARAM).
    pub const CQE_COMPRESSION: u32 = 0x42;
    /// A doorbell record not 8-byte aligned (BAD_PARAM).
    pub const DBR_ALIGN: u32 = 0x43;
    /// No free CQ (NO_RESOURCES).
    pub const NO_CQ: u32 = 0x44;
    /// A CQ number of no CQ of this function (BAD_RESOURCE).
    pub const BAD_CQ: u32 = 0x45;
    /// DESTROY_CQ of a CQ an SQ or RQ uses (RESOURCE_BUSY).
    pub const CQ_IN_USE: u32 = 0x46;
    /// CQ: cq_period_mode other than 0 (restart on event) or 1 (restart on CQE)
    /// (BAD_PARAM).
    pub const CQ_PERIOD_MODE: u32 = 0x47;
    /// MODIFY_CQ: modify_field_select bits other than PERIOD, COUNT and PERIOD_MODE, or none
    /// (BAD_PARAM).
    pub const CQ_MODIFY_FIELDS: u32 = 0x48;
    /// A TIS number of no TIS of this function (BAD_RESOURCE).
    pub const BAD_TIS: u32 = 0x50;
    /// No free TIS (NO_RESOURCES).
    pub const NO_TIS: u32 = 0x51;
    /// DESTROY_TIS of a TIS an SQ names (RESOURCE_BUSY).
    pub const TIS_IN_USE: u32 = 0x52;
    /// CREATE_SQ/RQ: state not RST (BAD_PARAM).
    pub const CREATE_STATE: u32 = 0x60;
    /// wq_type not cyclic (BAD_PARAM).
    pub const WQ_TYPE: u32 = 0x61;
    /// log_wq_stride not 6 (SQ) or outside 4..=8 (RQ) (BAD_PARAM).
    pub const WQ_STRIDE: u32 = 0x62;
    /// log_wq_sz above log_max_wq_sz (BAD_PARAM).
    pub const WQ_SIZE: u32 = 0x63;
    /// min_wqe_inline_mode below what the device requires (BAD_PARAM).
    pub const MIN_INLINE: u32 = 0x64;
    /// allow_multi_pkt_send_wqe without enhanced MPWQE support (BAD_PARAM).
    pub const MULTI_PKT: u32 = 0x65;
    /// No free SQ (NO_RESOURCES).
    pub const NO_SQ: u32 = 0x66;
    /// An SQ number of no SQ of this function (BAD_RESOURCE).
    pub const BAD_SQ: u32 = 0x67;
    /// MODIFY: the current state in the input is not the queue's state (BAD_RES_STATE).
    pub const CUR_STATE: u32 = 0x68;
    /// MODIFY: a transition other than RST→RDY, RDY→ERR, ERR→RST (and RDY→RDY of an RQ)
    /// (BAD_RES_STATE).
    pub const TRANSITION: u32 = 0x69;
    /// MODIFY: a modify_bitmask bit other than an RQ's VSD (BAD_PARAM).
    pub const MODIFY_BITMASK: u32 = 0x6a;
    /// CREATE_RQ: mem_rq_type not inline (BAD_PARAM).
    pub const MEM_RQ_TYPE: u32 = 0x6b;
    /// No free RQ (NO_RESOURCES).
    pub const NO_RQ: u32 = 0x6c;
    /// An RQ number of no RQ of this function (BAD_RESOURCE).
    pub const BAD_RQ: u32 = 0x6d;
    /// DESTROY_RQ of an RQ an RQT or a direct TIR names (RESOURCE_BUSY).
    pub const RQ_IN_USE: u32 = 0x6e;
    /// RQT: sizes 0, actual > max, or max above the capability (BAD_PARAM).
    pub const RQT_SIZE: u32 = 0x70;
    /// RQT: list_q_type or rq_vhca_id_format not 0 (BAD_PARAM).
    pub const RQT_FORMAT: u32 = 0x71;
    /// No free RQT (NO_RESOURCES).
    pub const NO_RQT: u32 = 0x72;
    /// An RQT number of no RQT of this function (BAD_RESOURCE).
    pub const BAD_RQT: u32 = 0x73;
    /// DESTROY_RQT of an RQT a TIR names (RESOURCE_BUSY).
    pub const RQT_IN_USE: u32 = 0x74;
    /// MODIFY_RQT with modify bitmask bits other than rqn_list (BAD_PARAM).
    pub const RQT_BITMASK: u32 = 0x75;
    /// TIR: disp_type other than direct (0) or indirect (1) (BAD_PARAM).
    pub const TIR_DISP_TYPE: u32 = 0x80;
    /// TIR: an indirect TIR whose rx_hash_fn is neither Toeplitz nor inverted XOR8
    /// (BAD_PARAM).
    pub const TIR_HASH: u32 = 0x81;
    /// No free TIR (NO_RESOURCES).
    pub const NO_TIR: u32 = 0x82;
    /// A TIR number of no TIR of this function (BAD_RESOURCE).
    pub const BAD_TIR: u32 = 0x83;
    /// TIR: selected fields other than the source / destination IP and the L4 ports
    /// (BAD_PARAM).
    pub const TIR_FIELDS: u32 = 0x84;
    /// MODIFY_TIR: bitmask bits other than `hash` and `self_lb_en`, or `hash` of a direct
    /// TIR (BAD_PARAM).
    pub const TIR_BITMASK: u32 = 0x85;
    /// DESTROY_TIR of a TIR a flow table entry forwards to (RESOURCE_BUSY).
    pub const TIR_IN_USE: u32 = 0x86;
    /// Flow steering: a table type other than NIC RX, or other_vport (BAD_PARAM).
    pub const FT_TYPE: u32 = 0xb0;
    /// CREATE_FLOW_TABLE: flags, a miss action other than the default or forwarding to a
    /// table of this function at a higher level, a miss table without that action,
    /// log_size above 16; SET_FLOW_TABLE_ROOT: an underlay QPN (BAD_PARAM).
    pub const FT_PARAM: u32 = 0xb1;
    /// No free flow table, group or entry (NO_RESOURCES).
    pub const NO_FS: u32 = 0xb2;
    /// A table id of no flow table of this function (BAD_RESOURCE).
    pub const BAD_FT: u32 = 0xb3;
    /// DESTROY_FLOW_TABLE of a table with groups or one an entry forwards to
    /// (RESOURCE_BUSY).
    pub const FT_IN_USE: u32 = 0xb4;
    /// CREATE_FLOW_GROUP: a group type or match definer, or criteria other than whole outer
    /// `ethertype`, `ip_protocol`, TCP / UDP ports and IPv4 (last 32 bits) or IPv6 (128
    /// bits) addresses (BAD_PARAM).
    pub const FG_CRITERIA: u32 = 0xb5;
    /// CREATE_FLOW_GROUP: start after end, end beyond the table, or indices of another
    /// group (BAD_PARAM).
    pub const FG_RANGE: u32 = 0xb6;
    /// A group id of no flow group of that table (BAD_RESOURCE).
    pub const BAD_FG: u32 = 0xb7;
    /// DESTROY_FLOW_GROUP of a group with entries (RESOURCE_BUSY).
    pub const FG_IN_USE: u32 = 0xb8;
    /// SET_FLOW_TABLE_ENTRY: anything but forwarding to one TIR (another action, a flow
    /// tag, counters, reformat, modify header, extended destinations, a modify mask)
    /// (BAD_PARAM).
    pub const FTE_ACTION: u32 = 0xb9;
    /// SET_FLOW_TABLE_ENTRY: a match value the model cannot tell apart (an ethertype other
    /// than IPv4 / IPv6, an ip_protocol other than TCP / UDP) (BAD_PARAM).
    pub const FTE_MATCH: u32 = 0xba;
    /// SET_FLOW_TABLE_ENTRY: a flow index outside its group or already used;
    /// DELETE_FLOW_TABLE_ENTRY: an index without an entry (BAD_PARAM).
    pub const FTE_INDEX: u32 = 0xbb;
    /// MODIFY_NIC_VPORT_CONTEXT: a field_select bit other than mtu / permanent_address
    /// (BAD_PARAM).
    pub const FIELD_SELECT: u32 = 0x90;
    /// MTU outside 64..=MAX_FRAME + 4 (BAD_PARAM).
    pub const MTU: u32 = 0x91;
    /// A multicast permanent address (BAD_PARAM).
    pub const MAC: u32 = 0x92;
    /// ACCESS_REG: a register the model does not implement (BAD_PARAM).
    pub const REGISTER_ID: u32 = 0xa0;
    /// ACCESS_REG: local_port above 1 (BAD_PARAM).
    pub const LOCAL_PORT: u32 = 0xa1;
    /// PAOS: admin_status neither up (1) nor down (2) (BAD_PARAM).
    pub const ADMIN_STATUS: u32 = 0xa2;
    /// PPLR: lb_en with bits other than phy remote (1), phy local (2) and external local
    /// (4) loopback (BAD_PARAM).
    pub const LOOPBACK_MODE: u32 = 0xa3;
    /// ACCESS_REG: inlen/outlen shorter than header + register (BAD_INPUT_LEN /
    /// BAD_OUTPUT_LEN).
    pub const REG_LENGTH: u32 = 0xa4;
    /// PPCNT: a counter group other than IEEE 802.3 (0) (BAD_PARAM).
    pub const PPCNT_GROUP: u32 = 0xa5;
    /// PMTU: an admin MTU above the port's maximum or below 64 (BAD_PARAM).
    pub const PMTU_MTU: u32 = 0xa6;
    /// QUERY_PAGES / MANAGE_PAGES: an op_mod the command has not (BAD_OP).
    pub const PAGES_OP_MOD: u32 = 0xc0;
    /// QUERY_PAGES / MANAGE_PAGES: a function other than the caller (function_id or
    /// embedded_cpu_function not 0) (BAD_PARAM).
    pub const PAGES_FUNCTION: u32 = 0xc1;
    /// MANAGE_PAGES: a page address 0 or not 4 KiB aligned, or a page the device cannot
    /// write (BAD_PARAM).
    pub const PAGE_ADDRESS: u32 = 0xc2;
    /// MANAGE_PAGES: the function would hold more than [`MAX_FW_PAGES`] pages
    /// (NO_RESOURCES).
    pub const TOO_MANY_PAGES: u32 = 0xc3;
    /// MANAGE_PAGES: inlen shorter than the page list it announces (BAD_INPUT_LEN).
    pub const PAGES_LENGTH: u32 = 0xc4;
    /// INIT_HCA before the function holds its boot and init pages (BAD_SYS_STATE).
    pub const INIT_PAGES_MISSING: u32 = 0xc5;
    /// SET_HCA_CAP: a capability type other than general, or a value the device cannot
    /// take (log_uar_page_sz other than 4 KiB, log_max_qp above the maximum) (BAD_PARAM).
    pub const SET_CAP: u32 = 0xc6;
    /// A page list (PAS) too long for one queue or with no room left in the device's pool
    /// (NO_RESOURCES).
    pub const PAS_POOL: u32 = 0xc7;
    /// CREATE_MKEY: anything but a PA-mode key of local read/write over all memory
    /// (length64) of a PD of this function (BAD_PARAM).
    pub const MKEY_PARAM: u32 = 0xc8;
    /// No free memory key (NO_RESOURCES).
    pub const NO_MKEY: u32 = 0xc9;
    /// A memory key of no key of this function (BAD_RESOURCE).
    pub const BAD_MKEY: u32 = 0xca;
    /// No free Q counter (NO_RESOURCES).
    pub const NO_Q_COUNTER: u32 = 0xcb;
    /// A Q counter set id of no counter of this function (BAD_RESOURCE).
    pub const BAD_Q_COUNTER: u32 = 0xcc;
    /// MODIFY_FLOW_TABLE: a field other than the miss table (BAD_PARAM).
    pub const FT_MODIFY_FIELDS: u32 = 0xcd;
    /// MODIFY_NIC_VPORT_CONTEXT: an address list longer than the capability allows
    /// (BAD_PARAM) or than the input (BAD_INPUT_LEN).
    pub const ADDRESS_LIST: u32 = 0xce;
}

/// Pages the function wants before its HCA is initialized, its boot pages (QUERY_PAGES
/// boot), then for INIT_HCA (init), then after INIT_HCA (regular, asked for by a page
/// request event): modest counts, a VF's few hundred KiB of firmware memory.
pub const BOOT_PAGES: u32 = 8;
/// Init pages (QUERY_PAGES init): INIT_HCA needs the boot and these.
pub const INIT_PAGES: u32 = 64;
/// Regular pages the function asks for after INIT_HCA.
pub const REGULAR_PAGES: u32 = 32;
/// Most pages a function holds.
pub const MAX_FW_PAGES: u32 = 4096;
/// Memory keys per function.
pub const MAX_MKEYS: usize = 8;
/// Q counters per function (`max_qp_cnt`); their set ids are 1..=Q_COUNTERS.
pub const Q_COUNTERS: usize = 8;
/// The UC and MC address lists of the NIC vport context (`log_max_current_uc_list` 2,
/// `log_max_current_mc_list` 4).
pub const UC_LIST: usize = 4;
/// See [`UC_LIST`].
pub const MC_LIST: usize = 16;
/// The VLAN list of the NIC vport context (`log_max_vlan_list` 3).
pub const VLAN_LIST: usize = 8;
/// The largest `log_max_qp` (the model has no QPs: what mlx5_core's profile may set).
pub const MAX_LOG_QP: u32 = 0;
/// The first memory key index CREATE_MKEY hands out (key = index << 8 | variant; index 1
/// with variant 0 would be 0x100, the RX scatter list's terminating lkey).
pub const MKEY_INDEX_BASE: u32 = 0x20;
/// The port's largest MTU (PMTU `max_mtu`): the largest frame without FCS plus the FCS.
pub const PORT_MAX_MTU: u32 = super::MAX_FRAME as u32 + 4;

/// PPCNT group 0, the IEEE 802.3 counters (`eth_802_3_cntrs_grp_data_layout`): the index of
/// each counter the model keeps in the group (counter i is the 64-bit value at byte
/// `ifc::reg::PPCNT_SET + 8 * i` of the register). The model counts frames that crossed the
/// port's MAC, i.e. went over the wire (a looped frame turns around before it and is not
/// counted), PAUSE frames included (60 bytes each, to the multicast address
/// 01:80:c2:00:00:01); octets are the frame bytes without the FCS. The other counters of the
/// group (FCS, alignment, length and symbol errors, unsupported opcodes) stay 0: the
/// simulated wire corrupts nothing.
pub mod ieee {
    /// Counters in the group.
    pub const COUNT: usize = 19;
    /// 64-bit counters a PPCNT counter set holds (0x7c0 bits).
    pub const COUNT_MAX: usize = 31;
    /// `a_frames_transmitted_ok`.
    pub const FRAMES_TX_OK: usize = 0;
    /// `a_frames_received_ok`.
    pub const FRAMES_RX_OK: usize = 1;
    /// `a_octets_transmitted_ok`.
    pub const OCTETS_TX_OK: usize = 4;
    /// `a_octets_received_ok`.
    pub const OCTETS_RX_OK: usize = 5;
    /// `a_multicast_frames_xmitted_ok`.
    pub const MCAST_TX_OK: usize = 6;
    /// `a_broadcast_frames_xmitted_ok`.
    pub const BCAST_TX_OK: usize = 7;
    /// `a_multicast_frames_received_ok`.
    pub const MCAST_RX_OK: usize = 8;
    /// `a_broadcast_frames_received_ok`.
    pub const BCAST_RX_OK: usize = 9;
    /// `a_mac_control_frames_transmitted` (PAUSE is the only MAC control frame sent).
    pub const MAC_CTRL_TX: usize = 14;
    /// `a_mac_control_frames_received`.
    pub const MAC_CTRL_RX: usize = 15;
    /// `a_pause_mac_ctrl_frames_received`.
    pub const PAUSE_RX: usize = 17;
    /// `a_pause_mac_ctrl_frames_transmitted`.
    pub const PAUSE_TX: usize = 18;
    /// Length of a PAUSE frame without the FCS (a minimum-size frame).
    pub(super) const PAUSE_LEN: u64 = 60;
}

/// Longest command message (inlen, outlen) the model accepts: 16 inline bytes plus 2048
/// mailboxes (1 MiB).
pub const MAX_MSG: usize = 16 + 2048 * mbox::DATA_SIZE;
/// Scratch bytes the processor keeps of an input (the rest of a long PAS list is streamed).
const IN_BUF: usize = 4096;
/// Scratch bytes of an output (the largest output, QUERY_HCA_CAP, is 0x1010).
const OUT_BUF: usize = 0x1010;
/// Entries of the command queue (log_cmdq_size 5).
pub const CMDQ_ENTRIES: u32 = 32;
/// `fw_rev`: 16.35 (minor in bits 31..16, major in 15..0).
pub const FW_REV: u32 = (35 << 16) | 16;
/// Sub-minor firmware version in `cmdif_rev_fw_sub` bits 15..0.
pub const FW_SUB: u32 = 1000;

/// State of the HCA (function).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Hca {
    Disabled,
    Enabled,
    Initialized,
}

/// Traffic counters of QUERY_VPORT_COUNTER, by destination address class.
#[derive(Clone, Copy)]
pub(super) struct Vport {
    /// rx ucast/mcast/bcast, tx ucast/mcast/bcast: (packets, octets).
    pub(super) c: [(u64, u64); 6],
}

impl Vport {
    const ZERO: Self = Self { c: [(0, 0); 6] };

    fn class(frame: &[u8]) -> usize {
        match frame.get(..6) {
            Some(d) if d.iter().all(|&b| b == 0xff) => 2,
            Some(d) if d[0] & 1 != 0 => 1,
            _ => 0,
        }
    }

    /// Counts a received frame.
    pub(super) fn rx(&mut self, frame: &[u8]) {
        let e = &mut self.c[Self::class(frame)];
        e.0 = e.0.wrapping_add(1);
        e.1 = e.1.wrapping_add(frame.len() as u64);
    }

    /// Counts a transmitted frame.
    pub(super) fn tx(&mut self, frame: &[u8]) {
        let e = &mut self.c[3 + Self::class(frame)];
        e.0 = e.0.wrapping_add(1);
        e.1 = e.1.wrapping_add(frame.len() as u64);
    }
}

/// Frames through a port's MAC (over the wire) since PPCNT last cleared them, for its IEEE
/// 802.3, RFC 2863, RFC 2819 and per-priority groups (see [`ieee`]).
#[derive(Clone, Copy)]
pub(super) struct Mac {
    /// Received (0) and transmitted (1): frames, octets, multicast frames, broadcast frames.
    c: [[u64; 4]; 2],
    /// Received frames by size with the FCS (RMON's buckets from 64 to 8192..10239 octets).
    sizes: [u64; 10],
    /// The port's PAUSE frame counters (received, transmitted) at the last clear.
    pause_base: (u64, u64),
}

impl Mac {
    const ZERO: Self = Self {
        c: [[0; 4]; 2],
        sizes: [0; 10],
        pause_base: (0, 0),
    };

    fn count(&mut self, dir: usize, frame: &[u8]) {
        let class = Vport::class(frame);
        if let Some(c) = self.c.get_mut(dir) {
            c[0] = c[0].wrapping_add(1);
            c[1] = c[1].wrapping_add(frame.len() as u64);
            if let Some(e) = c.get_mut(1 + class).filter(|_| class > 0) {
                *e = e.wrapping_add(1);
            }
        }
    }

    /// Counts a frame received from the wire.
    pub(super) fn rx(&mut self, frame: &[u8]) {
        self.count(0, frame);
        let len = frame.len() + 4;
        let b = match len {
            0..=64 => 0,
            65..=127 => 1,
            128..=255 => 2,
            256..=511 => 3,
            512..=1023 => 4,
            1024..=1518 => 5,
            1519..=2047 => 6,
            2048..=4095 => 7,
            4096..=8191 => 8,
            _ => 9,
        };
        if let Some(e) = self.sizes.get_mut(b) {
            *e = e.wrapping_add(1);
        }
    }

    /// Counts a frame transmitted on the wire.
    pub(super) fn tx(&mut self, frame: &[u8]) {
        self.count(1, frame);
    }
}

/// The firmware pages a function holds (QUERY_PAGES / MANAGE_PAGES). The device keeps the
/// list of held pages in the pages themselves, as firmware keeps its bookkeeping in the
/// memory it was given: the first 8 bytes of each held page (big-endian) are the bus
/// address of the next one, 0 ending the list.
#[derive(Clone, Copy)]
pub(super) struct Pages {
    /// Pages held (given and not taken back).
    pub(super) held: u32,
    /// The first held page (0: none).
    head: u64,
    /// The driver asked QUERY_PAGES: from then on the function needs its boot and init
    /// pages for INIT_HCA, and asks for regular pages after it. A driver that never asks
    /// (the device host's test fixtures) is not held to it.
    asked: bool,
    /// The page request for the regular pages was posted.
    requested: bool,
}

impl Pages {
    const NONE: Self = Self {
        held: 0,
        head: 0,
        asked: false,
        requested: false,
    };
}

/// The general capabilities SET_HCA_CAP changes (the current values; the maximum is the
/// model's).
#[derive(Clone, Copy)]
pub(super) struct SetCaps {
    pkey_table_size: u16,
    log_max_qp: u8,
    cmdif_checksum: u8,
}

/// The NIC vport context's address lists and promiscuous flags (MODIFY_NIC_VPORT_CONTEXT
/// `addresses_list`, `promisc`): what a VF's vport lets through to it ([`Func::vport_accepts`]).
#[derive(Clone, Copy)]
pub(super) struct VportFilter {
    /// A driver programmed the lists or the flags: from then on the vport lets through only
    /// what they allow (a driver that never does receives every frame).
    pub(super) active: bool,
    pub(super) uc: [[u8; 6]; UC_LIST],
    pub(super) uc_len: u8,
    pub(super) mc: [[u8; 6]; MC_LIST],
    pub(super) mc_len: u8,
    pub(super) promisc_uc: bool,
    pub(super) promisc_mc: bool,
    pub(super) promisc_all: bool,
    /// The VLAN list was programmed: a C-tagged frame passes only with a listed VID.
    pub(super) vlans_set: bool,
    pub(super) vlans: [u16; VLAN_LIST],
    pub(super) vlans_len: u8,
}

impl VportFilter {
    const NONE: Self = Self {
        active: false,
        uc: [[0; 6]; UC_LIST],
        uc_len: 0,
        mc: [[0; 6]; MC_LIST],
        mc_len: 0,
        promisc_uc: false,
        promisc_mc: false,
        promisc_all: false,
        vlans_set: false,
        vlans: [0; VLAN_LIST],
        vlans_len: 0,
    };
}

/// The command-interface state of one function (port).
pub(super) struct Func {
    pub(super) hca: Hca,
    issi: u16,
    cmdq_h: u32,
    cmdq_l: u32,
    cmdq_set: bool,
    /// Entries rung and not executed yet.
    pending: u32,
    health: u32,
    /// UARs allocated: bit i = index FIRST_UAR + i.
    uars: u64,
    pds: u64,
    tds: u64,
    /// Hardware MTU of the NIC vport context.
    mtu: u16,
    mac: [u8; 6],
    /// PPLR lb_en last written (reported while loopback is on).
    lb_en: u8,
    /// The first indirect TIR (slot + 1; 0: none): it dispatches every received frame while
    /// no root flow table is set.
    pub(super) rss_tir: u8,
    /// The NIC RX root flow table (slot + 1; 0: none).
    pub(super) root_ft: u8,
    /// Operational state last reported by a PORT_CHANGE event.
    pub(super) oper_reported: bool,
    pub(super) vport: Vport,
    vport_base: Vport,
    /// Frames through the MAC (over the wire), for PPCNT's IEEE 802.3 group.
    pub(super) wire: Mac,
    /// Opcode every command of which fails (0: none).
    pub(super) fail_opcode: u32,
    /// Entries rung while an EQ asked for command events (their completions are EQEs).
    cmd_ev_entries: u32,
    /// Completed entries owed a command completion EQE ([`super::eq::cmd_events`]).
    pub(super) cmd_done_events: u32,
    /// Firmware pages.
    pub(super) pages: Pages,
    /// What SET_HCA_CAP set.
    set_caps: SetCaps,
    /// Memory keys (bit i: key index i + 1 exists).
    pub(super) mkeys: u8,
    /// The keys' variant bytes (`mkey_7_0`): key = index << 8 | variant.
    pub(super) mkey_var: [u8; MAX_MKEYS],
    /// Q counters (bit i: counter set id i + 1).
    qcnts: u8,
    /// Each Q counter's `out_of_buffer` at allocation or the last clear.
    qcnt_base: [u32; Q_COUNTERS],
    /// Frames dropped for lack of a posted WQE by the RQs naming each Q counter
    /// (`rqc.counter_set_id`).
    pub(super) qcnt_oob: [u32; Q_COUNTERS],
    /// PMTU's admin MTU.
    pub(super) port_mtu: u16,
    /// The vport's address filter.
    pub(super) filter: VportFilter,
}

impl Func {
    pub(super) const NEW: Self = Self {
        hca: Hca::Disabled,
        issi: 0,
        cmdq_h: 0,
        cmdq_l: 0,
        cmdq_set: false,
        pending: 0,
        health: 0,
        uars: 0,
        pds: 0,
        tds: 0,
        mtu: 1522,
        mac: [0x02, 0, 0, 0, 0, 0],
        lb_en: 0,
        rss_tir: 0,
        root_ft: 0,
        oper_reported: false,
        vport: Vport::ZERO,
        vport_base: Vport::ZERO,
        wire: Mac::ZERO,
        fail_opcode: 0,
        cmd_ev_entries: 0,
        cmd_done_events: 0,
        pages: Pages::NONE,
        set_caps: SetCaps {
            pkey_table_size: 0,
            log_max_qp: 0,
            cmdif_checksum: 0,
        },
        mkeys: 0,
        mkey_var: [0; MAX_MKEYS],
        qcnts: 0,
        qcnt_base: [0; Q_COUNTERS],
        qcnt_oob: [0; Q_COUNTERS],
        port_mtu: 1522,
        filter: VportFilter::NONE,
    };

    /// The number of pages the function needs in all (boot and init before INIT_HCA; the
    /// regular ones too after it, once it asked: see [`Pages::asked`]).
    fn pages_target(&self) -> u32 {
        if !self.pages.asked {
            0
        } else if self.hca == Hca::Initialized {
            BOOT_PAGES + INIT_PAGES + REGULAR_PAGES
        } else {
            BOOT_PAGES + INIT_PAGES
        }
    }

    /// The page request to post, if the function wants pages it has not asked for by event:
    /// after INIT_HCA, the regular pages (positive: pages to give). Marks it posted.
    pub(super) fn page_request(&mut self) -> Option<i32> {
        let missing = self.pages_target().saturating_sub(self.pages.held);
        if self.hca != Hca::Initialized || self.pages.requested || missing == 0 {
            return None;
        }
        self.pages.requested = true;
        i32::try_from(missing).ok()
    }

    /// Whether `lkey` is one of the function's memory keys (`index << 8 | variant`); any
    /// key while it has none (see [`super::engine::lkey_ok`]).
    pub(super) fn lkey_ok(&self, lkey: u32) -> bool {
        if self.mkeys == 0 {
            return true;
        }
        let i = (lkey >> 8).wrapping_sub(MKEY_INDEX_BASE) as usize;
        i < MAX_MKEYS && self.mkeys & (1u8 << i) != 0 && self.mkey_var.get(i) == Some(&(lkey as u8))
    }

    /// Whether the vport lets a frame with destination `dmac` through to the function
    /// (its UC / MC lists, broadcast, the promiscuous flags; everything while no driver
    /// programmed them).
    pub(super) fn vport_accepts(&self, dmac: &[u8]) -> bool {
        let f = &self.filter;
        if !f.active || f.promisc_all {
            return true;
        }
        let Some(d) = dmac.get(..6) else {
            return false;
        };
        // A C-tagged frame (802.1Q after the MACs) needs its VID on the VLAN list, once the
        // driver programmed one.
        if f.vlans_set && dmac.get(12..14) == Some(&[0x81, 0x00][..]) {
            let vid = dmac
                .get(14..16)
                .map_or(0, |t| u16::from_be_bytes([t[0], t[1]]) & 0xfff);
            if !f
                .vlans
                .iter()
                .take(usize::from(f.vlans_len))
                .any(|&v| v == vid)
            {
                return false;
            }
        }
        if d.iter().all(|&b| b == 0xff) {
            return true;
        }
        if d[0] & 1 != 0 {
            f.promisc_mc || f.mc.iter().take(usize::from(f.mc_len)).any(|m| m[..] == *d)
        } else {
            f.promisc_uc
                || d == self.mac
                || f.uc.iter().take(usize::from(f.uc_len)).any(|m| m[..] == *d)
        }
    }

    /// The function as after power-on (a function-level reset): HCA disabled, no command
    /// queue, nothing allocated; the permanent MAC and the device host's failure knob stay.
    pub(super) fn power_on(&mut self) {
        *self = Self {
            mac: self.mac,
            fail_opcode: self.fail_opcode,
            ..Self::NEW
        };
    }

    /// Gives the function of port `i` its default permanent MAC, 02:00:00:00:00:(i + 1).
    pub(super) fn set_port_index(&mut self, i: usize) {
        self.mac[5] = (i + 1) as u8;
    }

    /// Replaces the function's permanent MAC (a device-host setting).
    pub(super) fn set_permanent_mac(&mut self, mac: [u8; 6]) {
        self.mac = mac;
    }

    /// Whether UAR page `page` was allocated by ALLOC_UAR.
    pub(super) fn uar_allocated(&self, page: u32) -> bool {
        (FIRST_UAR..FIRST_UAR + MAX_UARS).contains(&page)
            && self.uars & (1u64 << (page - FIRST_UAR)) != 0
    }

    /// A write to the initialization segment at `off`; false for a register that does not
    /// take writes.
    /// `cmd_eqs`: the function's EQs that take command events.
    pub(super) fn iseg_write(
        &mut self,
        off: u32,
        value: u32,
        c: &mut PortCounters,
        cmd_eqs: usize,
    ) -> bool {
        match off {
            iseg::CMDQ_ADDR_H => self.cmdq_h = value,
            iseg::CMDQ_ADDR_L_SZ => {
                self.cmdq_l = value & !0xfff;
                self.cmdq_set = true;
            }
            iseg::CMD_DBELL if self.cmdq_set => {
                c.pcie.doorbell();
                c.doorbells += 1;
                self.pending |= value;
                // Entries rung while an EQ takes command events complete by event too.
                if cmd_eqs > 0 {
                    self.cmd_ev_entries |= value;
                } else {
                    self.cmd_ev_entries &= !value;
                }
            }
            _ => return false,
        }
        true
    }

    /// A read of the initialization segment at `off`; None for no readable register.
    /// `now`: the device's clock (nanoseconds), which the health counter follows.
    pub(super) fn iseg_read(&self, off: u32, now: u64) -> Option<u32> {
        Some(match off {
            iseg::FW_REV => FW_REV,
            iseg::CMDIF_REV_FW_SUB => (iseg::CMD_IF_REV << 16) | FW_SUB,
            iseg::CMDQ_ADDR_H => self.cmdq_h,
            // nic_interface 0 (full driver) in bits 9..8, log size 5, log stride 6.
            iseg::CMDQ_ADDR_L_SZ => self.cmdq_l | (5 << 4) | 6,
            // The firmware is ready from power-on: mlx5_core waits for `initializing` to
            // clear before it writes the command queue's address ("pre-initializing") and
            // again after; the model needs no time for either.
            iseg::INITIALIZING => 0,
            iseg::HEALTH_FW_VER => FW_REV,
            iseg::CMD_EXEC_TO | iseg::CMD_Q_INIT_TO => 0,
            // The internal timer counts the device's clock in nanoseconds
            // (`device_frequency_khz` 1 GHz).
            iseg::INTERNAL_TIMER_H => (now >> 32) as u32,
            iseg::INTERNAL_TIMER_L => now as u32,
            o if (iseg::HEALTH..iseg::HEALTH + 0x40).contains(&o) && o % 4 == 0 => 0,
            // The firmware's heartbeat: it advances with every engine run and every
            // millisecond of the device's clock, so a device that is alive but idle still
            // shows it (mlx5_core's health poll declares a device whose counter stops for
            // three polls dead).
            iseg::HEALTH_COUNTER => self.health.wrapping_add((now / 1_000_000) as u32),
            _ => return None,
        })
    }

    fn cmdq(&self) -> DmaAddr {
        (u64::from(self.cmdq_h) << 32) | u64::from(self.cmdq_l)
    }
}

/// The general capabilities (`cmd_hca_cap`), their maximum values, into `cap`.
pub(super) fn general_caps(cap: &mut [u8], caps: &Caps) {
    use ifc::gen_cap::*;
    set(cap, LOG_MAX_CQ_SZ, u32::from(caps.log_max_cq_sz));
    set(cap, LOG_MAX_CQ, 6);
    set(cap, CQ_MODERATION, 1);
    set(cap, CQ_PERIOD_MODE_MODIFY, 1);
    set(cap, CQ_PERIOD_START_FROM_CQE, 1);
    set(cap, LOG_MAX_EQ_SZ, u32::from(caps.log_max_eq_sz));
    set(cap, LOG_MAX_EQ, 6);
    set(cap, LOG_MAX_MKEY, 3);
    set(cap, MAX_QP_CNT, Q_COUNTERS as u32);
    set(cap, VPORT_COUNTERS, 1);
    set(cap, NIC_FLOW_TABLE, 1);
    set(cap, PORT_TYPE, 1);
    set(cap, NUM_PORTS, 1);
    set(cap, LOG_MAX_MSG, 20);
    set(cap, MAX_TC, 0);
    set(cap, ETH_NET_OFFLOADS, 1);
    set(cap, LOG_PG_SZ, 12);
    set(cap, MAX_WQE_SZ_SQ, 1024);
    set(cap, MAX_WQE_SZ_RQ, 256);
    set(cap, LOG_MAX_TRANSPORT_DOMAIN, 6);
    set(cap, LOG_MAX_PD, 6);
    set(cap, LOG_MAX_RQ, 6);
    set(cap, LOG_MAX_SQ, 6);
    set(cap, LOG_MAX_TIR, 6);
    set(cap, LOG_MAX_TIS, 6);
    set(cap, BASIC_CYCLIC_RCV_WQE, 1);
    set(cap, LOG_MAX_RQT, 6);
    set(cap, LOG_MAX_RQT_SIZE, u32::from(caps.log_max_rqt_size));
    set(cap, LOG_MAX_TIS_PER_SQ, 0);
    set(cap, LOG_MAX_WQ_SZ, u32::from(caps.log_max_wq_sz));
    set(cap, LOG_MAX_VLAN_LIST, VLAN_LIST.trailing_zeros());
    set(cap, LOG_MAX_CURRENT_MC_LIST, MC_LIST.trailing_zeros());
    set(cap, LOG_MAX_CURRENT_UC_LIST, UC_LIST.trailing_zeros());
    set(cap, MAX_NUM_EQS, MAX_QUEUES as u32);
    set(cap, LOG_UAR_PAGE_SZ, 0);
    set(cap, DEVICE_FREQUENCY_KHZ, 1_000_000);
    set(cap, NUM_OF_UARS_PER_PAGE, 1);
    set(cap, CQE_COMPRESSION, u32::from(caps.cqe_compression));
    set(cap, CQE_COMPRESSION_MAX_NUM, MAX_SESSION);
}

/// A port's operational state: its administrative state and its peer's are up (its own
/// only when it loops back; a port without a peer is down).
pub(super) fn oper_up(ports: &[super::Port], p: usize) -> bool {
    let Some(pt) = ports.get(p) else {
        return false;
    };
    if pt.loopback {
        return pt.link_up;
    }
    pt.link_up && ports.get(p ^ 1).is_some_and(|q| q.link_up)
}

/// The IEEE 802.3 counters of `pt` since PPCNT last cleared them (see [`ieee`]).
fn ieee_802_3(pt: &super::Port) -> [u64; ieee::COUNT_MAX] {
    let w = &pt.func.wire;
    let [rx, tx] = w.c;
    let prx = pt.counters.rx_pause_frames.wrapping_sub(w.pause_base.0);
    let ptx = pt.counters.tx_pause_frames.wrapping_sub(w.pause_base.1);
    let mut c = [0u64; ieee::COUNT_MAX];
    let mut put = |i: usize, v: u64, pause: u64, each: u64| {
        if let Some(e) = c.get_mut(i) {
            *e = v.wrapping_add(pause.wrapping_mul(each));
        }
    };
    put(ieee::FRAMES_RX_OK, rx[0], prx, 1);
    put(ieee::FRAMES_TX_OK, tx[0], ptx, 1);
    put(ieee::OCTETS_RX_OK, rx[1], prx, ieee::PAUSE_LEN);
    put(ieee::OCTETS_TX_OK, tx[1], ptx, ieee::PAUSE_LEN);
    put(ieee::MCAST_RX_OK, rx[2], prx, 1);
    put(ieee::MCAST_TX_OK, tx[2], ptx, 1);
    put(ieee::BCAST_RX_OK, rx[3], 0, 0);
    put(ieee::BCAST_TX_OK, tx[3], 0, 0);
    put(ieee::MAC_CTRL_RX, 0, prx, 1);
    put(ieee::MAC_CTRL_TX, 0, ptx, 1);
    put(ieee::PAUSE_RX, 0, prx, 1);
    put(ieee::PAUSE_TX, 0, ptx, 1);
    c
}

/// The RFC 2863 group (`eth_2863_cntrs_grp_data_layout`) of `pt`'s MAC: octets, unicast,
/// multicast and broadcast frames each way (no discards, errors or unknown protocols on
/// the simulated wire; PAUSE frames are the MAC's own and not counted here).
fn rfc_2863(pt: &super::Port) -> [u64; ieee::COUNT_MAX] {
    let [rx, tx] = pt.func.wire.c;
    let mut c = [0u64; ieee::COUNT_MAX];
    let uc = |d: [u64; 4]| d[0].wrapping_sub(d[2]).wrapping_sub(d[3]);
    for (i, v) in [
        (0, rx[1]),
        (1, uc(rx)),
        (5, tx[1]),
        (6, uc(tx)),
        (9, rx[2]),
        (10, rx[3]),
        (11, tx[2]),
        (12, tx[3]),
    ] {
        if let Some(e) = c.get_mut(i) {
            *e = v;
        }
    }
    c
}

/// The RFC 2819 group (`eth_2819_cntrs_grp_data_layout`, RMON, received frames): octets,
/// frames, broadcast, multicast and the size buckets (with the FCS); no errors.
fn rfc_2819(pt: &super::Port) -> [u64; ieee::COUNT_MAX] {
    let w = &pt.func.wire;
    let rx = w.c[0];
    let mut c = [0u64; ieee::COUNT_MAX];
    for (i, v) in [(1, rx[1]), (2, rx[0]), (3, rx[3]), (4, rx[2])] {
        if let Some(e) = c.get_mut(i) {
            *e = v;
        }
    }
    for (k, v) in w.sizes.iter().enumerate() {
        if let Some(e) = c.get_mut(11 + k) {
            *e = *v;
        }
    }
    c
}

/// The per-priority group (`eth_per_prio_grp_data_layout`) of priority `prio`: every frame
/// of the model is of priority 0 (no PFC: global pause counts in the IEEE 802.3 group).
fn per_prio(pt: &super::Port, prio: u32) -> [u64; ieee::COUNT_MAX] {
    let mut c = [0u64; ieee::COUNT_MAX];
    if prio == 0 {
        let [rx, tx] = pt.func.wire.c;
        for (i, v) in [(0, rx[1]), (4, rx[0]), (5, tx[1]), (9, tx[0])] {
            if let Some(e) = c.get_mut(i) {
                *e = v;
            }
        }
    }
    c
}

type Fail = (u8, u32);
type CmdResult = Result<(), Fail>;

/// A mailbox chain, walked forward with a cursor.
struct Chain {
    first: DmaAddr,
    idx: usize,
    addr: DmaAddr,
}

impl Chain {
    fn new(first: DmaAddr) -> Self {
        Self {
            first,
            idx: 0,
            addr: first,
        }
    }

    /// Bus address of block `idx` (the chain was validated up to it).
    fn block<M: BusMemory>(
        &mut self,
        mem: &M,
        idx: usize,
        c: &mut PortCounters,
    ) -> Option<DmaAddr> {
        if idx < self.idx {
            self.idx = 0;
            self.addr = self.first;
        }
        while self.idx < idx {
            let mut n = [0u8; 8];
            c.pcie
                .dma_read(self.addr.wrapping_add(mbox::NEXT as u64), 8);
            mem.dma_read(self.addr.wrapping_add(mbox::NEXT as u64), &mut n)
                .ok()?;
            self.addr = u64::from_be_bytes(n);
            self.idx += 1;
        }
        Some(self.addr)
    }
}

/// Checks `n` blocks of a chain: alignment, readability, block numbers and tokens.
fn walk<M: BusMemory>(
    mem: &M,
    first: DmaAddr,
    n: usize,
    token: u8,
    ptr_err: u8,
    c: &mut PortCounters,
) -> Result<(), u8> {
    let mut addr = first;
    for k in 0..n {
        if addr == 0 || addr % 8 != 0 {
            return Err(ptr_err);
        }
        let mut t = [0u8; 16];
        c.pcie.dma_read(addr.wrapping_add(mbox::NEXT as u64), 16);
        if mem
            .dma_read(addr.wrapping_add(mbox::NEXT as u64), &mut t)
            .is_err()
        {
            return Err(ptr_err);
        }
        if be32(&t, 8) as usize != k {
            return Err(delivery::BAD_BLK_NUM_ERR);
        }
        if t[mbox::TOKEN - mbox::NEXT] != token {
            return Err(delivery::TOK_ERR);
        }
        let mut a = [0u8; 8];
        a.copy_from_slice(&t[..8]);
        addr = u64::from_be_bytes(a);
    }
    Ok(())
}

fn blocks(len: usize) -> usize {
    len.saturating_sub(layout::INLINE).div_ceil(mbox::DATA_SIZE)
}

/// Copies message bytes `[from, from + dst.len())` (from ≥ 16) out of the chain.
fn chain_read<M: BusMemory>(
    ch: &mut Chain,
    mem: &M,
    from: usize,
    dst: &mut [u8],
    c: &mut PortCounters,
) -> bool {
    let mut done = 0;
    while done < dst.len() {
        let o = from + done - layout::INLINE;
        let (bi, within) = (o / mbox::DATA_SIZE, o % mbox::DATA_SIZE);
        let n = (mbox::DATA_SIZE - within).min(dst.len() - done);
        let Some(addr) = ch.block(mem, bi, c) else {
            return false;
        };
        let a = addr.wrapping_add(within as u64);
        c.pcie.dma_read(a, n as u64);
        if mem.dma_read(a, &mut dst[done..done + n]).is_err() {
            return false;
        }
        done += n;
    }
    true
}

/// Writes `src` as message bytes `[from, ...)` (from ≥ 16) into the chain.
fn chain_write<M: BusMemory>(
    ch: &mut Chain,
    mem: &M,
    from: usize,
    src: &[u8],
    c: &mut PortCounters,
) -> bool {
    let mut done = 0;
    while done < src.len() {
        let o = from + done - layout::INLINE;
        let (bi, within) = (o / mbox::DATA_SIZE, o % mbox::DATA_SIZE);
        let n = (mbox::DATA_SIZE - within).min(src.len() - done);
        let Some(addr) = ch.block(mem, bi, c) else {
            return false;
        };
        let a = addr.wrapping_add(within as u64);
        c.pcie.dma_write(a, n as u64);
        if mem.dma_write(a, &src[done..done + n]).is_err() {
            return false;
        }
        done += n;
    }
    true
}

/// Executes the rung command entries of every function.
pub(super) fn run<M: BusMemory>(t: &mut Tables<'_>, caps: &Caps, scratch: &mut [u8], mem: &M) {
    for p in 0..t.ports.len() {
        let Some(pt) = t.ports.get_mut(p) else {
            continue;
        };
        pt.func.health = pt.func.health.wrapping_add(1);
        let mut pending = core::mem::take(&mut pt.func.pending);
        while pending != 0 {
            let i = pending.trailing_zeros();
            pending &= pending - 1;
            let completed = exec_entry(t, caps, scratch, mem, p, i);
            if let Some(f) = t.ports.get_mut(p).map(|pt| &mut pt.func) {
                let bit = 1u32 << i;
                if completed && f.cmd_ev_entries & bit != 0 {
                    f.cmd_done_events |= bit;
                }
                f.cmd_ev_entries &= !bit;
            }
        }
    }
}

/// Frees every object of function `p` (TEARDOWN_HCA, as firmware does; a function reset
/// too): its queues, steering objects, UARs, PDs and transport domains. The HCA is left
/// ENABLED.
pub(super) fn teardown(t: &mut Tables<'_>, p: usize) {
    for slot in 0..MAX_QUEUES {
        if t.queues
            .get(p * MAX_QUEUES + slot)
            .is_some_and(|r| r.sq.used)
        {
            let _ = t.destroy_sq(make_qn(SQN_BASE, p, slot));
        }
    }
    for slot in 0..MAX_QUEUES {
        let Some(r) = t.queues.get_mut(p * MAX_QUEUES + slot) else {
            continue;
        };
        r.fte = super::QueueSet::EMPTY.fte;
        r.fg = super::QueueSet::EMPTY.fg;
        r.ft = super::QueueSet::EMPTY.ft;
        r.tir = super::QueueSet::EMPTY.tir;
        r.rqt = super::QueueSet::EMPTY.rqt;
        r.rq.users = 0;
        r.tis = super::QueueSet::EMPTY.tis;
        if r.rq.used {
            let _ = t.destroy_rq(make_qn(RQN_BASE, p, slot));
        }
    }
    for slot in 0..MAX_QUEUES {
        if let Some(r) = t.queues.get_mut(p * MAX_QUEUES + slot) {
            if r.cq.used {
                r.cq.users = 0;
                let _ = t.destroy_cq(make_qn(CQN_BASE, p, slot));
            }
        }
        if let Some(r) = t.queues.get_mut(p * MAX_QUEUES + slot) {
            r.eq = super::QueueSet::EMPTY.eq;
        }
    }
    let Some(pt) = t.ports.get_mut(p) else {
        return;
    };
    pt.rss_len = 0;
    pt.eq_arm_pending = 0;
    let f = &mut pt.func;
    f.uars = 0;
    f.pds = 0;
    f.tds = 0;
    f.mkeys = 0;
    f.qcnts = 0;
    f.filter = VportFilter::NONE;
    f.rss_tir = 0;
    f.root_ft = 0;
    f.hca = Hca::Enabled;
    t.refresh_rx(p, true);
}

fn exec_entry<M: BusMemory>(
    t: &mut Tables<'_>,
    caps: &Caps,
    scratch: &mut [u8],
    mem: &M,
    p: usize,
    i: u32,
) -> bool {
    let Some(pt) = t.ports.get_mut(p) else {
        return false;
    };
    let base = pt
        .func
        .cmdq()
        .wrapping_add(u64::from(i) * layout::SIZE as u64);
    let c = &mut pt.counters;
    let mut ent = [0u8; layout::SIZE];
    c.pcie.dma_read(base, layout::SIZE as u64);
    if mem.dma_read(base, &mut ent).is_err() {
        c.dma_faults += 1;
        c.cmd_delivery_errors += 1;
        return false;
    }
    if ent[layout::STATUS_OWN] & 1 == 0 {
        // Software still owns the entry: nothing to execute, nothing to write.
        c.cmd_delivery_errors += 1;
        return false;
    }
    let token = ent[layout::TOKEN];
    let inlen = be32(&ent, layout::INLEN) as usize;
    let outlen = be32(&ent, layout::OUTLEN) as usize;
    let in_ptr = be64(&ent, layout::IN_PTR);
    let out_ptr = be64(&ent, layout::OUT_PTR);
    let checked = if ent[layout::TYPE] != layout::PCI_CMD_XPORT {
        Err(delivery::CMD_DESCR_ERR)
    } else if !(8..=MAX_MSG).contains(&inlen) {
        Err(delivery::IN_LENGTH_ERR)
    } else if !(8..=MAX_MSG).contains(&outlen) {
        Err(delivery::OUT_LENGTH_ERR)
    } else {
        walk(
            mem,
            in_ptr,
            blocks(inlen),
            token,
            delivery::IN_PTR_ALIGN_ERR,
            c,
        )
        .and_then(|()| {
            walk(
                mem,
                out_ptr,
                blocks(outlen),
                token,
                delivery::OUT_PTR_ALIGN_ERR,
                c,
            )
        })
    };
    if let Err(d) = checked {
        c.cmd_delivery_errors += 1;
        let st = [d << 1];
        c.pcie
            .dma_write(base.wrapping_add(layout::STATUS_OWN as u64), 1);
        if mem
            .dma_write(base.wrapping_add(layout::STATUS_OWN as u64), &st)
            .is_err()
        {
            c.dma_faults += 1;
        }
        return true;
    }
    c.commands += 1;
    let (inb, rest) = scratch.split_at_mut(IN_BUF);
    let Some(outb) = rest.get_mut(..OUT_BUF) else {
        return false;
    };
    let n = inlen.min(IN_BUF);
    inb[..layout::INLINE].copy_from_slice(&ent[layout::IN..layout::IN + layout::INLINE]);
    let mut inch = Chain::new(in_ptr);
    let mut fail = None;
    if n > layout::INLINE
        && !chain_read(
            &mut inch,
            mem,
            layout::INLINE,
            &mut inb[layout::INLINE..n],
            c,
        )
    {
        // The chain was readable a moment ago; report it like an unreadable pointer.
        fail = Some(delivery::IN_PTR_ALIGN_ERR);
    }
    let mut delivery_status = delivery::OK;
    if let Some(d) = fail {
        delivery_status = d;
        c.cmd_delivery_errors += 1;
        c.commands -= 1;
    } else {
        // The command sees exactly its input (fields beyond inlen read as 0) and writes at
        // most outlen bytes: nothing stale from an earlier command.
        let m = outlen.min(OUT_BUF);
        outb[..m].fill(0);
        let mut cx = Cx {
            t,
            caps,
            p,
            inp: &inb[..n],
            inlen,
            outlen,
            chain: inch,
            out: &mut outb[..m],
            mem,
        };
        let opcode = cx.g(ifc::IN_OPCODE);
        match cx.dispatch() {
            Err((st, sy)) => {
                cx.out.fill(0);
                set(cx.out, ifc::OUT_STATUS, u32::from(st));
                set(cx.out, ifc::OUT_SYNDROME, sy);
                if let Some(pt) = cx.t.ports.get_mut(p) {
                    pt.counters.cmd_errors += 1;
                }
            }
            Ok(()) => {
                let queue = [op::CREATE_EQ, op::CREATE_CQ, op::CREATE_SQ, op::CREATE_RQ]
                    .iter()
                    .any(|&o| u32::from(o) == opcode);
                if let (true, Some(pt)) = (queue, cx.t.ports.get_mut(p)) {
                    pt.counters.queues_created += 1;
                }
            }
        }
    }
    let Some(pt) = t.ports.get_mut(p) else {
        return false;
    };
    let c = &mut pt.counters;
    let mut ok = true;
    if delivery_status == delivery::OK {
        let m = outlen.min(OUT_BUF);
        if m > layout::INLINE {
            let mut och = Chain::new(out_ptr);
            ok &= chain_write(&mut och, mem, layout::INLINE, &outb[layout::INLINE..m], c);
        }
        let k = m.min(layout::INLINE);
        c.pcie
            .dma_write(base.wrapping_add(layout::OUT as u64), k as u64);
        ok &= mem
            .dma_write(base.wrapping_add(layout::OUT as u64), &outb[..k])
            .is_ok();
    }
    c.pcie
        .dma_write(base.wrapping_add(layout::STATUS_OWN as u64), 1);
    ok &= mem
        .dma_write(
            base.wrapping_add(layout::STATUS_OWN as u64),
            &[delivery_status << 1],
        )
        .is_ok();
    if !ok {
        c.dma_faults += 1;
    }
    true
}

/// Bad parameter.
const fn bad(s: u32) -> Fail {
    (status::BAD_PARAM, s)
}

/// One command being executed.
struct Cx<'a, 'b, M> {
    t: &'a mut Tables<'b>,
    caps: &'a Caps,
    p: usize,
    inp: &'a [u8],
    inlen: usize,
    outlen: usize,
    chain: Chain,
    out: &'a mut [u8],
    mem: &'a M,
}

/// Which HCA states a command is allowed in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum When {
    Disabled,
    Enabled,
    /// Enabled or initialized.
    Up,
    Initialized,
}

/// (opcode, input size, output size, state) of every command the model implements.
const CMDS: &[(u16, usize, usize, When)] = &[
    (op::ENABLE_HCA, 0x10, 0xc, When::Disabled),
    (op::DISABLE_HCA, 0x10, 0xc, When::Enabled),
    (op::QUERY_ISSI, 0x10, 0x70, When::Up),
    (op::SET_ISSI, 0x10, 0x10, When::Enabled),
    (op::QUERY_HCA_CAP, 0x10, 0x1010, When::Up),
    (op::SET_HCA_CAP, 0x1010, 0x10, When::Enabled),
    (op::QUERY_ADAPTER, 0x10, ifc::adapter::OUT_LEN, When::Up),
    (op::QUERY_PAGES, 0x10, 0x10, When::Up),
    (op::MANAGE_PAGES, 0x10, 0x10, When::Up),
    (op::CREATE_MKEY, 0x110, 0x10, When::Initialized),
    (op::DESTROY_MKEY, 0x10, 0x10, When::Initialized),
    (op::ALLOC_Q_COUNTER, 0x10, 0x10, When::Initialized),
    (op::DEALLOC_Q_COUNTER, 0x10, 0x10, When::Initialized),
    (
        op::QUERY_Q_COUNTER,
        0x20,
        ifc::qcnt::OUT_LEN,
        When::Initialized,
    ),
    (op::MODIFY_FLOW_TABLE, 0x50, 0x10, When::Initialized),
    (op::INIT_HCA, 0x20, 0x10, When::Enabled),
    (op::TEARDOWN_HCA, 0x10, 0x10, When::Initialized),
    (op::ALLOC_UAR, 0x10, 0x10, When::Initialized),
    (op::DEALLOC_UAR, 0x10, 0x10, When::Initialized),
    (op::ALLOC_PD, 0x10, 0x10, When::Initialized),
    (op::DEALLOC_PD, 0x10, 0x10, When::Initialized),
    (op::ALLOC_TRANSPORT_DOMAIN, 0x10, 0x10, When::Initialized),
    (op::DEALLOC_TRANSPORT_DOMAIN, 0x10, 0x10, When::Initialized),
    (op::CREATE_EQ, 0x110, 0x10, When::Initialized),
    (op::DESTROY_EQ, 0x10, 0x10, When::Initialized),
    (op::CREATE_CQ, 0x110, 0x10, When::Initialized),
    (op::DESTROY_CQ, 0x10, 0x10, When::Initialized),
    (op::MODIFY_CQ, 0x110, 0x10, When::Initialized),
    (op::CREATE_TIS, 0xc0, 0x10, When::Initialized),
    (op::DESTROY_TIS, 0x10, 0x10, When::Initialized),
    (op::CREATE_SQ, 0x110, 0x10, When::Initialized),
    (op::MODIFY_SQ, 0x110, 0x10, When::Initialized),
    (op::DESTROY_SQ, 0x10, 0x10, When::Initialized),
    (op::QUERY_SQ, 0x10, 0x110, When::Initialized),
    (op::CREATE_RQ, 0x110, 0x10, When::Initialized),
    (op::MODIFY_RQ, 0x110, 0x10, When::Initialized),
    (op::DESTROY_RQ, 0x10, 0x10, When::Initialized),
    (op::QUERY_RQ, 0x10, 0x110, When::Initialized),
    (op::CREATE_RQT, 0x110, 0x10, When::Initialized),
    (op::MODIFY_RQT, 0x110, 0x10, When::Initialized),
    (op::DESTROY_RQT, 0x10, 0x10, When::Initialized),
    (op::CREATE_TIR, 0x110, 0x10, When::Initialized),
    (op::MODIFY_TIR, 0x110, 0x10, When::Initialized),
    (op::DESTROY_TIR, 0x10, 0x10, When::Initialized),
    (op::CREATE_FLOW_TABLE, 0x40, 0x10, When::Initialized),
    (op::DESTROY_FLOW_TABLE, 0x40, 0x10, When::Initialized),
    (op::CREATE_FLOW_GROUP, 0x400, 0x10, When::Initialized),
    (op::DESTROY_FLOW_GROUP, 0x40, 0x10, When::Initialized),
    (op::SET_FLOW_TABLE_ENTRY, 0x340, 0x10, When::Initialized),
    (op::DELETE_FLOW_TABLE_ENTRY, 0x40, 0x10, When::Initialized),
    (op::SET_FLOW_TABLE_ROOT, 0x40, 0x10, When::Initialized),
    (op::QUERY_NIC_VPORT_CONTEXT, 0x10, 0x110, When::Initialized),
    (op::MODIFY_NIC_VPORT_CONTEXT, 0x200, 0x10, When::Initialized),
    (op::QUERY_VPORT_STATE, 0x10, 0x10, When::Initialized),
    (op::ACCESS_REG, 0x10, 0x10, When::Initialized),
    (op::QUERY_VPORT_COUNTER, 0x20, 0x210, When::Initialized),
];

/// Queue states as the command interface encodes them.
fn state_code(s: QueueState) -> u32 {
    match s {
        QueueState::Reset => ifc::wq::STATE_RST,
        QueueState::Ready => ifc::wq::STATE_RDY,
        QueueState::Error => ifc::wq::STATE_ERR,
    }
}

impl<M: BusMemory> Cx<'_, '_, M> {
    fn g(&self, f: ifc::Fld) -> u32 {
        get(self.inp, f)
    }

    fn port(&mut self) -> &mut super::Port {
        // PANIC: `p` indexes a port: `run` only executes the entries of existing ports.
        &mut self.t.ports[self.p]
    }

    fn dispatch(&mut self) -> CmdResult {
        let opcode = self.g(ifc::IN_OPCODE);
        let op_mod = self.g(ifc::IN_OP_MOD);
        let Some(&(_, min_in, min_out, when)) = CMDS.iter().find(|e| u32::from(e.0) == opcode)
        else {
            return Err((status::BAD_OP, synd::UNKNOWN_OPCODE));
        };
        if self.port().func.fail_opcode == opcode {
            return Err((status::INT_ERR, synd::INJECTED));
        }
        let hca = self.port().func.hca;
        let ok = match when {
            When::Disabled => hca == Hca::Disabled,
            When::Enabled => hca == Hca::Enabled,
            When::Up => hca != Hca::Disabled,
            When::Initialized => hca == Hca::Initialized,
        };
        if !ok {
            return Err((status::BAD_SYS_STATE, synd::WRONG_HCA_STATE));
        }
        let op_mod_ok = match opcode as u16 {
            op::QUERY_HCA_CAP | op::SET_HCA_CAP => true,
            op::QUERY_PAGES => (1..=3).contains(&op_mod),
            op::MANAGE_PAGES => op_mod <= 2,
            // ACCESS_REG: write / read; SET_FLOW_TABLE_ROOT: connect / disconnect.
            // ACCESS_REG: write / read; SET_FLOW_TABLE_ROOT: connect / disconnect;
            // SET_FLOW_TABLE_ENTRY: new / modify.
            op::ACCESS_REG | op::SET_FLOW_TABLE_ROOT | op::SET_FLOW_TABLE_ENTRY => op_mod <= 1,
            _ => op_mod == 0,
        };
        if !op_mod_ok {
            return Err((status::BAD_OP, synd::BAD_OP_MOD));
        }
        if self.inlen < min_in {
            return Err((status::BAD_INPUT_LEN, synd::INPUT_TOO_SHORT));
        }
        if self.outlen < min_out {
            return Err((status::BAD_OUTPUT_LEN, synd::OUTPUT_TOO_SHORT));
        }
        match opcode as u16 {
            op::ENABLE_HCA | op::DISABLE_HCA => {
                if self.g(ifc::hca::FUNCTION_ID) != 0
                    || self.g(ifc::hca::EMBEDDED_CPU_FUNCTION) != 0
                {
                    return Err(bad(synd::FUNCTION_ID));
                }
                let enable = opcode as u16 == op::ENABLE_HCA;
                let port = self.port();
                port.func.hca = if enable { Hca::Enabled } else { Hca::Disabled };
                // A disabled function holds no pages: what a driver did not take back
                // before DISABLE_HCA is forgotten (the driver frees it), and an enabled one
                // starts without any.
                port.func.pages = Pages::NONE;
                if enable {
                    // The function starts afresh: its counters (vport and the model's own) at
                    // 0. The in-kernel host makes a new device per load anyway; a device in
                    // its own process (the PCI transport) outlives the driver.
                    port.counters = super::PortCounters::ZERO;
                    port.func.vport = Vport::ZERO;
                    port.func.vport_base = Vport::ZERO;
                }
                Ok(())
            }
            op::QUERY_ISSI => {
                let issi = u32::from(self.port().func.issi);
                set(self.out, ifc::hca::QUERY_ISSI_CURRENT, issi);
                set(self.out, ifc::hca::QUERY_ISSI_SUPPORTED_DW0, 0b11);
                Ok(())
            }
            op::SET_ISSI => {
                let v = self.g(ifc::hca::SET_ISSI_CURRENT);
                if v > 1 {
                    return Err(bad(synd::ISSI));
                }
                self.port().func.issi = v as u16;
                Ok(())
            }
            op::QUERY_HCA_CAP => self.query_hca_cap(op_mod),
            op::SET_HCA_CAP => self.set_hca_cap(op_mod),
            op::QUERY_ADAPTER => {
                use ifc::adapter::*;
                let b = self.out.get_mut(BLOCK..).unwrap_or_default();
                // Mellanox's IEEE OUI, its PCI vendor id, and a PSID naming the model.
                if let Some(d) = b.get_mut(IEEE_VENDOR_ID..IEEE_VENDOR_ID + 3) {
                    d.copy_from_slice(&[0x00, 0x02, 0xc9]);
                }
                if let Some(d) = b.get_mut(VSD_VENDOR_ID..VSD_VENDOR_ID + 2) {
                    d.copy_from_slice(&0x15b3u16.to_be_bytes());
                }
                if let Some(d) = b.get_mut(PSID..PSID + 13) {
                    d.copy_from_slice(b"RSNIC00000001");
                }
                Ok(())
            }
            op::QUERY_PAGES => self.query_pages(op_mod),
            op::MANAGE_PAGES => self.manage_pages(op_mod),
            op::CREATE_MKEY => self.create_mkey(),
            op::DESTROY_MKEY => {
                let i = self.mkey_slot(self.g(ifc::mkey::INDEX))?;
                self.port().func.mkeys &= !(1u8 << i);
                Ok(())
            }
            op::ALLOC_Q_COUNTER => {
                let f = &mut self.port().func;
                let i = (!f.qcnts).trailing_zeros() as usize;
                if i >= Q_COUNTERS {
                    return Err((status::NO_RESOURCES, synd::NO_Q_COUNTER));
                }
                f.qcnts |= 1u8 << i;
                f.qcnt_base[i] = f.qcnt_oob[i];
                set(self.out, ifc::qcnt::SET_ID, i as u32 + 1);
                Ok(())
            }
            op::DEALLOC_Q_COUNTER => {
                let i = self.qcnt_slot(self.g(ifc::qcnt::SET_ID))?;
                let busy = (0..MAX_QUEUES).any(|r| {
                    let q = self.row(r).rq;
                    q.used && usize::from(q.counter) == i + 1
                });
                if busy {
                    return Err((status::RESOURCE_BUSY, synd::ALLOC_IN_USE));
                }
                self.port().func.qcnts &= !(1u8 << i);
                Ok(())
            }
            op::QUERY_Q_COUNTER => {
                use ifc::qcnt::*;
                if self.g(OTHER_VPORT) != 0 || self.g(AGGREGATE) != 0 {
                    return Err(bad(synd::OTHER_FUNCTION));
                }
                let i = self.qcnt_slot(self.g(QUERY_SET_ID))?;
                let clear = self.g(CLEAR) != 0;
                let f = &mut self.port().func;
                let v = f.qcnt_oob[i].wrapping_sub(f.qcnt_base[i]);
                if clear {
                    f.qcnt_base[i] = f.qcnt_oob[i];
                }
                set(self.out, OUT_OF_BUFFER, v);
                Ok(())
            }
            op::MODIFY_FLOW_TABLE => self.modify_flow_table(),
            op::INIT_HCA => {
                let p = self.p;
                let up = oper_up(self.t.ports, p);
                let f = &self.port().func;
                if f.pages.asked && f.pages.held < BOOT_PAGES + INIT_PAGES {
                    return Err((status::BAD_SYS_STATE, synd::INIT_PAGES_MISSING));
                }
                let f = &mut self.port().func;
                f.hca = Hca::Initialized;
                f.oper_reported = up;
                Ok(())
            }
            op::TEARDOWN_HCA => {
                if self.g(ifc::hca::TEARDOWN_PROFILE) != 0 {
                    return Err(bad(synd::TEARDOWN_PROFILE));
                }
                self.teardown();
                Ok(())
            }
            op::ALLOC_UAR => self.alloc(0),
            op::ALLOC_PD => self.alloc(1),
            op::ALLOC_TRANSPORT_DOMAIN => self.alloc(2),
            op::DEALLOC_UAR => self.dealloc(0),
            op::DEALLOC_PD => self.dealloc(1),
            op::DEALLOC_TRANSPORT_DOMAIN => self.dealloc(2),
            op::CREATE_EQ => self.create_eq(),
            op::DESTROY_EQ => self.destroy_eq(),
            op::CREATE_CQ => self.create_cq(),
            op::DESTROY_CQ => {
                let (p, slot) = self.own(ifc::OBJ_NUM, CQN_BASE, |r| r.cq.used, synd::BAD_CQ)?;
                self.t
                    .destroy_cq(super::make_qn(CQN_BASE, p, slot))
                    .map_err(|_| (status::RESOURCE_BUSY, synd::CQ_IN_USE))
            }
            op::MODIFY_CQ => self.modify_cq(),
            op::CREATE_TIS => self.create_tis(),
            op::DESTROY_TIS => {
                let (_, slot) = self.own(ifc::OBJ_NUM, TISN_BASE, |r| r.tis.used, synd::BAD_TIS)?;
                let tis = self.row(slot).tis;
                if tis.users != 0 {
                    return Err((status::RESOURCE_BUSY, synd::TIS_IN_USE));
                }
                self.row(slot).tis.used = false;
                Ok(())
            }
            op::CREATE_SQ => self.create_sq(),
            op::MODIFY_SQ => self.modify_wq(true),
            op::DESTROY_SQ => {
                let (p, slot) = self.own(ifc::OBJ_NUM, SQN_BASE, |r| r.sq.used, synd::BAD_SQ)?;
                self.t
                    .destroy_sq(make_qn(SQN_BASE, p, slot))
                    .map_err(|_| (status::BAD_RESOURCE, synd::BAD_SQ))
            }
            op::QUERY_SQ => self.query_wq(true),
            op::CREATE_RQ => self.create_rq(),
            op::MODIFY_RQ => self.modify_wq(false),
            op::DESTROY_RQ => {
                let (p, slot) = self.own(ifc::OBJ_NUM, RQN_BASE, |r| r.rq.used, synd::BAD_RQ)?;
                if self.row(slot).rq.users != 0 {
                    return Err((status::RESOURCE_BUSY, synd::RQ_IN_USE));
                }
                self.t
                    .destroy_rq(make_qn(RQN_BASE, p, slot))
                    .map_err(|_| (status::BAD_RESOURCE, synd::BAD_RQ))
            }
            op::QUERY_RQ => self.query_wq(false),
            op::CREATE_RQT => self.rqt(None),
            op::MODIFY_RQT => {
                // bitmask.rqn_list is not required (the contract leaves it 0): the list is
                // what MODIFY_RQT changes. Other bitmask bits are refused.
                if be64(self.inp, 0x10) & !1 != 0 {
                    return Err(bad(synd::RQT_BITMASK));
                }
                let (_, slot) = self.own(ifc::OBJ_NUM, RQTN_BASE, |r| r.rqt.used, synd::BAD_RQT)?;
                self.rqt(Some(slot))
            }
            op::DESTROY_RQT => {
                let (_, slot) = self.own(ifc::OBJ_NUM, RQTN_BASE, |r| r.rqt.used, synd::BAD_RQT)?;
                if self.row(slot).rqt.users != 0 {
                    return Err((status::RESOURCE_BUSY, synd::RQT_IN_USE));
                }
                self.set_rqt_refs(slot, false);
                self.row(slot).rqt.used = false;
                Ok(())
            }
            op::CREATE_TIR => self.create_tir(),
            op::MODIFY_TIR => self.modify_tir(),
            op::DESTROY_TIR => {
                let (_, slot) = self.own(ifc::OBJ_NUM, TIRN_BASE, |r| r.tir.used, synd::BAD_TIR)?;
                self.destroy_tir(slot)
            }
            op::CREATE_FLOW_TABLE => self.create_flow_table(),
            op::DESTROY_FLOW_TABLE => self.destroy_flow_table(),
            op::CREATE_FLOW_GROUP => self.create_flow_group(),
            op::DESTROY_FLOW_GROUP => self.destroy_flow_group(),
            op::SET_FLOW_TABLE_ENTRY => self.set_fte(op_mod),
            op::DELETE_FLOW_TABLE_ENTRY => self.delete_fte(),
            op::SET_FLOW_TABLE_ROOT => self.set_root(op_mod),
            op::QUERY_NIC_VPORT_CONTEXT => {
                if self.g(ifc::vport::OTHER_VPORT) != 0 {
                    return Err(bad(synd::OTHER_FUNCTION));
                }
                let (mtu, mac) = {
                    let f = &self.port().func;
                    (f.mtu, f.mac)
                };
                let min_inline = u32::from(self.caps.min_inline);
                let ctx = self
                    .out
                    .get_mut(ifc::vport::CTX_QUERY..)
                    .unwrap_or_default();
                set(ctx, ifc::fld(0x5, 3), min_inline);
                set(ctx, ifc::vport::MTU, u32::from(mtu));
                let a = ifc::vport::PERMANENT_ADDRESS + 2;
                if let Some(d) = ctx.get_mut(a..a + 6) {
                    d.copy_from_slice(&mac);
                }
                Ok(())
            }
            op::MODIFY_NIC_VPORT_CONTEXT => self.modify_vport(),
            op::QUERY_VPORT_STATE => {
                if self.g(ifc::vport::OTHER_VPORT) != 0 {
                    return Err(bad(synd::OTHER_FUNCTION));
                }
                let p = self.p;
                let up = oper_up(self.t.ports, p);
                let admin = self.port().link_up;
                set(self.out, ifc::vport::STATE_OPER, u32::from(up));
                set(self.out, ifc::vport::STATE_ADMIN, u32::from(admin));
                Ok(())
            }
            op::ACCESS_REG => self.access_reg(op_mod),
            op::QUERY_VPORT_COUNTER => self.query_vport_counter(),
            _ => Err((status::BAD_OP, synd::UNKNOWN_OPCODE)),
        }
    }

    fn row(&mut self, slot: usize) -> &mut super::QueueSet {
        // PANIC: the tables hold MAX_QUEUES rows per port (checked by `Device::new`).
        let i = self.p * MAX_QUEUES + slot.min(MAX_QUEUES - 1);
        &mut self.t.queues[i]
    }

    /// (port, slot) of the object numbered by field `f` of kind `base` if this function owns
    /// it; BAD_RESOURCE with `s` otherwise.
    fn own(
        &self,
        f: ifc::Fld,
        base: u32,
        used: fn(&super::QueueSet) -> bool,
        s: u32,
    ) -> Result<(usize, usize), Fail> {
        let n = self.g(f);
        match self.t.loc(n, base, used) {
            Ok((p, slot)) if p == self.p => Ok((p, slot)),
            _ => Err((status::BAD_RESOURCE, s)),
        }
    }

    /// QUERY_HCA_CAP: op_mod bit 0 current (1) or maximum (0), bits 15..1 the type:
    /// general (0), Ethernet offloads (1) and the NIC flow table (7); other types are
    /// refused (the general caps advertise none of them).
    fn query_hca_cap(&mut self, op_mod: u32) -> CmdResult {
        if self.g(ifc::hca::CAP_OTHER_FUNCTION) != 0 {
            return Err(bad(synd::OTHER_FUNCTION));
        }
        let cur = op_mod & 1 == 1;
        let caps = *self.caps;
        let set_caps = self.port().func.set_caps;
        let cap = self.out.get_mut(ifc::hca::CAP_OFF..).unwrap_or_default();
        match op_mod >> 1 {
            0 => {
                general_caps(cap, &caps);
                if cur {
                    use ifc::gen_cap::*;
                    set(cap, LOG_MAX_QP, u32::from(set_caps.log_max_qp));
                    set(cap, PKEY_TABLE_SIZE, u32::from(set_caps.pkey_table_size));
                    set(cap, CMDIF_CHECKSUM, u32::from(set_caps.cmdif_checksum));
                } else {
                    set(cap, ifc::gen_cap::LOG_MAX_QP, MAX_LOG_QP);
                }
            }
            1 => {
                use ifc::eth_cap::*;
                set(cap, CSUM_CAP, 1);
                set(cap, VLAN_CAP, 1);
                set(cap, WQE_VLAN_INSERT, 1);
                set(cap, MAX_LSO_CAP, 16);
                let mode = match caps.min_inline {
                    0 => 2,
                    1 => 0,
                    _ => 1,
                };
                set(cap, WQE_INLINE_MODE, mode);
                set(cap, RSS_IND_TBL_CAP, u32::from(caps.log_max_rqt_size));
                set(cap, ENHANCED_MULTI_PKT_SEND_WQE, u32::from(caps.mpwqe));
                set(cap, SWP, 1);
                set(cap, SELF_LB_EN_MODIFIABLE, 1);
            }
            7 => {
                use ifc::ft_cap::*;
                let rx = cap.get_mut(NIC_RX / 8..).unwrap_or_default();
                set(rx, FT_SUPPORT, 1);
                set(rx, FLOW_MODIFY_EN, 1);
                set(rx, MODIFY_ROOT, 1);
                set(rx, IDENTIFIED_MISS_TABLE_MODE, 1);
                set(rx, FLOW_TABLE_MODIFY, 1);
                set(rx, LOG_MAX_FT_SIZE, 16);
                set(rx, MAX_FT_LEVEL, super::MAX_FT_LEVEL);
                set(rx, LOG_MAX_FT_NUM, 6);
                set(rx, LOG_MAX_DESTINATION, 0);
                set(rx, LOG_MAX_FLOW, 6);
                for f in [
                    FIELD_OUTER_DMAC,
                    FIELD_OUTER_ETHER_TYPE,
                    FIELD_OUTER_FIRST_VID,
                    FIELD_OUTER_SIP,
                    FIELD_OUTER_DIP,
                    FIELD_OUTER_IP_PROTOCOL,
                    FIELD_OUTER_UDP_SPORT,
                    FIELD_OUTER_UDP_DPORT,
                    FIELD_OUTER_TCP_SPORT,
                    FIELD_OUTER_TCP_DPORT,
                ] {
                    set(rx, f, 1);
                }
            }
            _ => return Err(bad(synd::CAP_TYPE)),
        }
        Ok(())
    }

    /// SET_HCA_CAP of the general capabilities (op_mod 0): the fields the device lets a
    /// driver set (`pkey_table_size`, `log_max_qp` up to its maximum, `cmdif_checksum`,
    /// `log_uar_page_sz` 0: the model's UAR pages are 4 KiB); the capability's other
    /// fields are read-only and ignored, as mlx5_core writes back the whole current set.
    fn set_hca_cap(&mut self, op_mod: u32) -> CmdResult {
        use ifc::gen_cap::*;
        if op_mod >> 1 != 0 || self.g(ifc::hca::CAP_OTHER_FUNCTION) != 0 {
            return Err(bad(synd::SET_CAP));
        }
        let cap = self.inp.get(ifc::hca::CAP_OFF..).unwrap_or_default();
        let (qp, pkey, csum, uar) = (
            get(cap, LOG_MAX_QP),
            get(cap, PKEY_TABLE_SIZE),
            get(cap, CMDIF_CHECKSUM),
            get(cap, LOG_UAR_PAGE_SZ),
        );
        if qp > MAX_LOG_QP || uar != 0 {
            return Err(bad(synd::SET_CAP));
        }
        self.port().func.set_caps = SetCaps {
            pkey_table_size: pkey as u16,
            log_max_qp: qp as u8,
            cmdif_checksum: csum as u8,
        };
        Ok(())
    }

    /// QUERY_PAGES: the pages the function wants for boot (1), init (2) or regular use
    /// (3), given what it holds; asking makes the function need them (see [`Pages`]).
    fn query_pages(&mut self, op_mod: u32) -> CmdResult {
        use ifc::pages::*;
        if self.g(FUNCTION_ID) != 0 || self.g(EMBEDDED_CPU_FUNCTION) != 0 {
            return Err(bad(synd::PAGES_FUNCTION));
        }
        let f = &mut self.port().func;
        f.pages.asked = true;
        let held = f.pages.held;
        let want = match op_mod {
            BOOT => BOOT_PAGES.saturating_sub(held),
            INIT => (BOOT_PAGES + INIT_PAGES).saturating_sub(held.max(BOOT_PAGES)),
            _ => f.pages_target().saturating_sub(held),
        };
        set(self.out, FUNCTION_ID, 0);
        set(self.out, NUM_PAGES, want);
        Ok(())
    }

    /// MANAGE_PAGES: GIVE (1) hands the device `input_num_entries` pages (4 KiB aligned;
    /// each is linked into the held list, which writes its first 8 bytes), TAKE (2) returns
    /// up to `input_num_entries` of them (never those an initialized function needs, at
    /// most what the output holds), CANT_GIVE (0) answers a page request the driver cannot
    /// meet.
    fn manage_pages(&mut self, op_mod: u32) -> CmdResult {
        use ifc::pages::*;
        if self.g(FUNCTION_ID) != 0 || self.g(EMBEDDED_CPU_FUNCTION) != 0 {
            return Err(bad(synd::PAGES_FUNCTION));
        }
        let n = self.g(INPUT_NUM_ENTRIES);
        match op_mod {
            CANT_GIVE => Ok(()),
            GIVE => {
                let held = self.port().func.pages.held;
                if held.saturating_add(n) > MAX_FW_PAGES {
                    return Err((status::NO_RESOURCES, synd::TOO_MANY_PAGES));
                }
                if self.inlen < PAS + 8 * n as usize {
                    return Err((status::BAD_INPUT_LEN, synd::PAGES_LENGTH));
                }
                // Every address first, so that a bad one leaves nothing given.
                let mut b = [0u8; 8];
                for i in 0..n as usize {
                    if !self.read_in(PAS + 8 * i, &mut b) {
                        return Err((status::BAD_INPUT_LEN, synd::PAGES_LENGTH));
                    }
                    let a = u64::from_be_bytes(b);
                    if a == 0 || a % 4096 != 0 {
                        return Err(bad(synd::PAGE_ADDRESS));
                    }
                }
                let old = self.port().func.pages;
                for i in 0..n as usize {
                    if !self.read_in(PAS + 8 * i, &mut b) {
                        self.port().func.pages = old;
                        return Err((status::BAD_INPUT_LEN, synd::PAGES_LENGTH));
                    }
                    let a = u64::from_be_bytes(b);
                    let head = self.port().func.pages.head;
                    let p = self.p;
                    // PANIC: `p` indexes a port (see `Cx::port`).
                    self.t.ports[p].counters.pcie.dma_write(a, 8);
                    if self.mem.dma_write(a, &head.to_be_bytes()).is_err() {
                        self.port().func.pages = old;
                        return Err(bad(synd::PAGE_ADDRESS));
                    }
                    let pg = &mut self.port().func.pages;
                    pg.head = a;
                    pg.held += 1;
                }
                let held = self.port().func.pages.held;
                self.port().counters.fw_pages = u64::from(held);
                Ok(())
            }
            _ => {
                let room = (self.outlen.min(OUT_BUF).saturating_sub(PAS) / 8) as u32;
                let f = &self.port().func;
                let keep = if f.hca == Hca::Initialized {
                    f.pages_target()
                } else {
                    0
                };
                let k = n.min(room).min(f.pages.held.saturating_sub(keep));
                let mut given = 0u32;
                for i in 0..k as usize {
                    let a = self.port().func.pages.head;
                    let mut next = [0u8; 8];
                    let p = self.p;
                    // PANIC: `p` indexes a port (see `Cx::port`).
                    self.t.ports[p].counters.pcie.dma_read(a, 8);
                    if self.mem.dma_read(a, &mut next).is_err() {
                        // The list is broken there: what follows is lost to the device.
                        let pg = &mut self.port().func.pages;
                        pg.head = 0;
                        pg.held = 0;
                        self.port().counters.dma_faults += 1;
                        break;
                    }
                    put_be64(self.out, PAS + 8 * i, a);
                    let pg = &mut self.port().func.pages;
                    pg.head = u64::from_be_bytes(next);
                    pg.held -= 1;
                    given += 1;
                }
                set(self.out, OUTPUT_NUM_ENTRIES, given);
                let held = self.port().func.pages.held;
                self.port().counters.fw_pages = u64::from(held);
                Ok(())
            }
        }
    }

    /// CREATE_MKEY: a physical-address (PA) key for local reads and writes of all memory
    /// (`length64`) in a PD of the function, what mlx5e's `mlx5e_create_mkey` makes. Its
    /// key is `index << 8 | mkey_7_0`. From the function's first key on, the device checks
    /// the lkey of every data segment (see the module documentation).
    fn create_mkey(&mut self) -> CmdResult {
        use ifc::mkey::*;
        if self.g(PG_ACCESS) != 0
            || self.g(UMEM_VALID) != 0
            || self.g(FREE) != 0
            || self.g(ACCESS_MODE_4_2) != 0
            || self.g(ACCESS_MODE_1_0) != 0
            || self.g(UMR_EN) != 0
            || self.g(LW) == 0
            || self.g(LR) == 0
            || self.g(LENGTH64) == 0
        {
            return Err(bad(synd::MKEY_PARAM));
        }
        self.alloc_slot(1, self.g(PD))
            .map_err(|_| bad(synd::MKEY_PARAM))?;
        let var = self.g(MKEY_7_0) as u8;
        let f = &mut self.port().func;
        let i = (!f.mkeys).trailing_zeros() as usize;
        if i >= MAX_MKEYS {
            return Err((status::NO_RESOURCES, synd::NO_MKEY));
        }
        f.mkeys |= 1u8 << i;
        f.mkey_var[i] = var;
        set(self.out, INDEX, MKEY_INDEX_BASE + i as u32);
        Ok(())
    }

    /// The slot of memory key index `index` of this function.
    fn mkey_slot(&mut self, index: u32) -> Result<usize, Fail> {
        let i = index.wrapping_sub(MKEY_INDEX_BASE) as usize;
        if i < MAX_MKEYS && self.port().func.mkeys & (1u8 << i) != 0 {
            Ok(i)
        } else {
            Err((status::BAD_RESOURCE, synd::BAD_MKEY))
        }
    }

    /// The slot of Q counter set id `id` of this function.
    fn qcnt_slot(&mut self, id: u32) -> Result<usize, Fail> {
        let i = id.wrapping_sub(1) as usize;
        if i < Q_COUNTERS && self.port().func.qcnts & (1u8 << i) != 0 {
            Ok(i)
        } else {
            Err((status::BAD_RESOURCE, synd::BAD_Q_COUNTER))
        }
    }

    /// Frees every object of the function (TEARDOWN_HCA, as firmware does).
    fn teardown(&mut self) {
        teardown(self.t, self.p);
    }

    /// ALLOC_UAR (0), ALLOC_PD (1), ALLOC_TRANSPORT_DOMAIN (2).
    fn alloc(&mut self, kind: usize) -> CmdResult {
        let f = &mut self.port().func;
        let map = match kind {
            0 => &mut f.uars,
            1 => &mut f.pds,
            _ => &mut f.tds,
        };
        let free = (!*map).trailing_zeros();
        if free >= 64 {
            return Err((status::NO_RESOURCES, synd::NO_ALLOC));
        }
        *map |= 1u64 << free;
        let p = self.p;
        let n = match kind {
            0 => FIRST_UAR + free,
            1 => make_qn(PD_BASE, p, free as usize),
            _ => make_qn(TD_BASE, p, free as usize),
        };
        set(self.out, ifc::OBJ_NUM, n);
        Ok(())
    }

    /// The slot of an allocated UAR/PD/TD number `n`, or BAD_RESOURCE.
    fn alloc_slot(&mut self, kind: usize, n: u32) -> Result<usize, Fail> {
        let p = self.p;
        let f = &self.port().func;
        let (slot, map, s) = match kind {
            0 => (n.wrapping_sub(FIRST_UAR) as usize, f.uars, synd::BAD_UAR),
            1 => match split_qn(n, PD_BASE) {
                Some((q, slot)) if q == p => (slot, f.pds, synd::BAD_PD),
                _ => (64, 0, synd::BAD_PD),
            },
            _ => match split_qn(n, TD_BASE) {
                Some((q, slot)) if q == p => (slot, f.tds, synd::BAD_TD),
                _ => (64, 0, synd::BAD_TD),
            },
        };
        if slot < 64 && map & (1u64 << slot) != 0 {
            Ok(slot)
        } else {
            Err((status::BAD_RESOURCE, s))
        }
    }

    fn dealloc(&mut self, kind: usize) -> CmdResult {
        let n = self.g(ifc::OBJ_NUM);
        let slot = self.alloc_slot(kind, n)?;
        // In use by any object of this function?
        let busy = (0..MAX_QUEUES).any(|i| {
            let r = *self.row(i);
            match kind {
                0 => {
                    let u = (slot as u32 + FIRST_UAR) as u16;
                    (r.sq.used && r.sq.uar == u)
                        || (r.cq.used && r.cq.uar == u)
                        || (r.eq.used && r.eq.uar == u)
                }
                1 => {
                    let d = slot as u8 + 1;
                    (r.sq.used && r.sq.pd == d) || (r.rq.used && r.rq.pd == d)
                }
                _ => {
                    (r.tis.used && usize::from(r.tis.td) == slot)
                        || (r.tir.used && usize::from(r.tir.td) == slot)
                }
            }
        });
        if busy {
            return Err((status::RESOURCE_BUSY, synd::ALLOC_IN_USE));
        }
        let f = &mut self.port().func;
        let map = match kind {
            0 => &mut f.uars,
            1 => &mut f.pds,
            _ => &mut f.tds,
        };
        *map &= !(1u64 << slot);
        Ok(())
    }

    /// Reads input bytes at `off` (beyond the scratch copy: from the mailboxes).
    fn read_in(&mut self, off: usize, dst: &mut [u8]) -> bool {
        if let Some(s) = self.inp.get(off..off + dst.len()) {
            if off + dst.len() <= self.inlen {
                dst.copy_from_slice(s);
                return true;
            }
        }
        if off + dst.len() > self.inlen || off < layout::INLINE {
            return false;
        }
        let p = self.p;
        // PANIC: `p` indexes a port (see `Cx::port`).
        let c = &mut self.t.ports[p].counters;
        chain_read(&mut self.chain, self.mem, off, dst, c)
    }

    /// Reads a PAS list at `pas` for `bytes` of queue in pages of 4 KiB << `log_pg`: a
    /// contiguous list is the queue's base address; any other list goes into the device's
    /// page-list pool ([`super::pas`]), which the caller gives back if the command fails
    /// after this (`pas::free`).
    fn pas(&mut self, pas: usize, bytes: u64, log_pg: u32, offset: u32) -> Result<Ring, Fail> {
        if offset != 0 {
            return Err(bad(synd::PAGE_OFFSET));
        }
        if log_pg > 16 {
            return Err(bad(synd::LOG_PAGE_SIZE));
        }
        let pg = 4096u64 << log_pg;
        let n = bytes.div_ceil(pg).max(1) as usize;
        if self.inlen < pas + 8 * n {
            return Err((status::BAD_INPUT_LEN, synd::PAS_TOO_SHORT));
        }
        let mut b = [0u8; 8];
        let mut contiguous = true;
        let mut first = 0u64;
        for i in 0..n {
            if !self.read_in(pas + 8 * i, &mut b) {
                return Err((status::BAD_INPUT_LEN, synd::PAS_TOO_SHORT));
            }
            let a = u64::from_be_bytes(b);
            if a % pg != 0 || a == 0 {
                return Err(bad(synd::PAS_ALIGN));
            }
            if i == 0 {
                first = a;
            } else if a != first.wrapping_add(i as u64 * pg) {
                contiguous = false;
            }
        }
        let log_pg = (12 + log_pg) as u8;
        if contiguous {
            return Ok(Ring {
                log_pg,
                ..Ring::contiguous(first)
            });
        }
        let at = pas::alloc(self.t.pool, n).ok_or((status::NO_RESOURCES, synd::PAS_POOL))?;
        let ring = Ring {
            base: first,
            log_pg,
            first: at,
            pages: n as u16,
        };
        for i in 0..n {
            if !self.read_in(pas + 8 * i, &mut b)
                || !pas::set_entry(self.t.pool, usize::from(at) + i, u64::from_be_bytes(b))
            {
                pas::free(self.t.pool, &ring);
                return Err((status::BAD_INPUT_LEN, synd::PAS_TOO_SHORT));
            }
        }
        Ok(ring)
    }

    fn uar_field(&mut self, f: ifc::Fld) -> Result<u16, Fail> {
        let u = self.g(f);
        if self.port().func.uar_allocated(u) {
            Ok(u as u16)
        } else {
            Err((status::BAD_RESOURCE, synd::BAD_UAR))
        }
    }

    fn create_eq(&mut self) -> CmdResult {
        use ifc::eq::*;
        let log = self.g(LOG_EQ_SIZE);
        if log == 0 || log > u32::from(self.caps.log_max_eq_sz) {
            return Err(bad(synd::EQ_SIZE));
        }
        let intr = self.g(INTR);
        if intr >= MAX_VECTORS {
            return Err(bad(synd::EQ_INTR));
        }
        let uar = self.uar_field(UAR_PAGE)?;
        let buf = self.pas(
            PAS,
            64u64 << log,
            self.g(LOG_PAGE_SIZE),
            self.g(PAGE_OFFSET),
        )?;
        let mask = be64(self.inp, EVENT_BITMASK);
        let p = self.p;
        let slot = match self.t.free_slot(p, |r| r.eq.used) {
            Ok(s) => s,
            Err(_) => {
                pas::free(self.t.pool, &buf);
                return Err((status::NO_RESOURCES, synd::NO_EQ));
            }
        };
        self.row(slot).eq = super::EqCtx {
            used: true,
            error: false,
            buf,
            log_size: log as u8,
            uar,
            intr: intr as u16,
            pi: 0,
            ci: 0,
            armed: false,
            port_events: mask & (1u64 << ifc::eqe::TYPE_PORT_CHANGE) != 0,
            cmd_events: mask & (1u64 << ifc::eqe::TYPE_CMD) != 0,
            page_events: mask & (1u64 << ifc::eqe::TYPE_PAGE_REQUEST) != 0,
            users: 0,
        };
        set(self.out, ifc::EQ_NUMBER, EQN_BASE + slot as u32);
        Ok(())
    }

    fn eq_slot(&mut self, eqn: u32) -> Result<usize, Fail> {
        let slot = eqn.wrapping_sub(EQN_BASE) as usize;
        if slot < MAX_QUEUES && self.row(slot).eq.used {
            Ok(slot)
        } else {
            Err((status::BAD_RESOURCE, synd::BAD_EQ))
        }
    }

    fn destroy_eq(&mut self) -> CmdResult {
        let slot = self.eq_slot(self.g(ifc::EQ_NUMBER))?;
        if self.row(slot).eq.users != 0 {
            return Err((status::RESOURCE_BUSY, synd::EQ_IN_USE));
        }
        let ring = self.row(slot).eq.buf;
        self.row(slot).eq = super::QueueSet::EMPTY.eq;
        pas::free(self.t.pool, &ring);
        self.port().eq_arm_pending &= !(1u64 << slot);
        Ok(())
    }

    fn create_cq(&mut self) -> CmdResult {
        use ifc::cq::*;
        if self.g(CQE_SZ) != 0 {
            return Err(bad(synd::CQE_SIZE));
        }
        // One CQE (log 0) is a CQ too: mlx5e's drop RQ has one.
        let log = self.g(LOG_CQ_SIZE);
        if log > u32::from(self.caps.log_max_cq_sz) {
            return Err(bad(synd::CQ_SIZE));
        }
        let comp = self.g(CQE_COMP_EN) != 0;
        if comp
            && (!self.caps.cqe_compression
                || self.g(CQE_COMPRESSION_LAYOUT) != 0
                || !matches!(self.g(MINI_CQE_RES_FORMAT), 1 | 3))
        {
            return Err(bad(synd::CQE_COMPRESSION));
        }
        let mode = self.g(CQ_PERIOD_MODE);
        if mode > 1 {
            return Err(bad(synd::CQ_PERIOD_MODE));
        }
        let uar = self.uar_field(UAR_PAGE)?;
        let eq = self.eq_slot(self.g(C_EQN))?;
        let dbr = be64(self.inp, DBR_ADDR);
        if dbr % 8 != 0 {
            return Err(bad(synd::DBR_ALIGN));
        }
        let buf = self.pas(
            PAS,
            64u64 << log,
            self.g(LOG_PAGE_SIZE),
            self.g(PAGE_OFFSET),
        )?;
        let cfg = CqConfig {
            port: self.p,
            buf: buf.base,
            log_size: log as u8,
            dbr,
            vector: 0,
            compress: comp,
        };
        let cqn = match self.t.create_cq(&cfg, uar, eq as u8 + 1) {
            Ok(n) => n,
            Err(_) => {
                pas::free(self.t.pool, &buf);
                return Err((status::NO_RESOURCES, synd::NO_CQ));
            }
        };
        // The fields are 12 and 16 bits wide: every value is one the device takes.
        let (period, count) = (self.g(CQ_PERIOD) as u16, self.g(CQ_MAX_COUNT) as u16);
        if let Ok((_, slot)) = self.t.cq_loc(cqn) {
            self.row(slot).cq.buf = buf;
            let m = &mut self.row(slot).cq.moder;
            m.period = period;
            m.max_count = count;
            m.cqe_mode = mode == 1;
        }
        set(self.out, ifc::OBJ_NUM, cqn);
        Ok(())
    }

    /// MODIFY_CQ (op_mod 0, MODIFY_CQ; RESIZE_CQ is refused as a bad op_mod): changes the
    /// moderation of a live CQ, the fields `modify_field_select` names. A CQ moderation
    /// holds back is evaluated again on the next engine run under the new values.
    fn modify_cq(&mut self) -> CmdResult {
        use ifc::cq::*;
        let (_, slot) = self.own(ifc::OBJ_NUM, CQN_BASE, |r| r.cq.used, synd::BAD_CQ)?;
        let sel = self.g(MODIFY_FIELD_SELECT);
        let known = MODIFY_PERIOD | MODIFY_COUNT | MODIFY_PERIOD_MODE;
        if sel == 0 || sel & !known != 0 {
            return Err(bad(synd::CQ_MODIFY_FIELDS));
        }
        let mode = self.g(CQ_PERIOD_MODE);
        if sel & MODIFY_PERIOD_MODE != 0 && mode > 1 {
            return Err(bad(synd::CQ_PERIOD_MODE));
        }
        let (period, count) = (self.g(CQ_PERIOD) as u16, self.g(CQ_MAX_COUNT) as u16);
        let m = &mut self.row(slot).cq.moder;
        if sel & MODIFY_PERIOD != 0 {
            m.period = period;
        }
        if sel & MODIFY_COUNT != 0 {
            m.max_count = count;
        }
        if sel & MODIFY_PERIOD_MODE != 0 {
            m.cqe_mode = mode == 1;
        }
        self.port().arm_pending |= 1u64 << slot;
        Ok(())
    }

    fn td_field(&mut self, f: ifc::Fld) -> Result<u8, Fail> {
        let n = self.g(f);
        self.alloc_slot(2, n).map(|s| s as u8)
    }

    fn create_tis(&mut self) -> CmdResult {
        let td = self.td_field(ifc::tis::TRANSPORT_DOMAIN)?;
        let p = self.p;
        let slot = self
            .t
            .free_slot(p, |r| r.tis.used)
            .map_err(|_| (status::NO_RESOURCES, synd::NO_TIS))?;
        self.row(slot).tis = super::TisCtx {
            used: true,
            td,
            users: 0,
        };
        set(self.out, ifc::OBJ_NUM, make_qn(TISN_BASE, p, slot));
        Ok(())
    }

    /// The common WQ fields: (pd slot + 1, dbr, log_wq_sz, bus address of the ring).
    fn wq_common(&mut self, log_stride: u32) -> Result<(u8, DmaAddr, u32, Ring), Fail> {
        use ifc::wq::*;
        if self.g(STATE) != STATE_RST {
            return Err(bad(synd::CREATE_STATE));
        }
        if self.g(WQ_TYPE) != 1 {
            return Err(bad(synd::WQ_TYPE));
        }
        // PD 0 is no PD: mlx5e's drop RQ (one WQE, never posted) is created without one,
        // and the firmware takes it.
        let pd = match self.g(PD) {
            0 => 0,
            n => self.alloc_slot(1, n)? as u8 + 1,
        };
        let dbr = be64(self.inp, DBR_ADDR);
        if dbr % 8 != 0 {
            return Err(bad(synd::DBR_ALIGN));
        }
        let log = self.g(LOG_WQ_SZ);
        if log > u32::from(self.caps.log_max_wq_sz) {
            return Err(bad(synd::WQ_SIZE));
        }
        let bytes = 1u64 << (log + log_stride);
        let buf = self.pas(PAS, bytes, self.g(LOG_WQ_PG_SZ), self.g(PAGE_OFFSET))?;
        Ok((pd, dbr, log, buf))
    }

    /// The CQ of a queue: must be this function's.
    fn cq_field(&mut self) -> Result<u32, Fail> {
        let cqn = self.g(ifc::wq::CQN);
        match self.t.cq_loc(cqn) {
            Ok((p, _)) if p == self.p => Ok(cqn),
            _ => Err((status::BAD_RESOURCE, synd::BAD_CQ)),
        }
    }

    fn create_sq(&mut self) -> CmdResult {
        use ifc::wq::*;
        if self.g(LOG_WQ_STRIDE) != 6 {
            return Err(bad(synd::WQ_STRIDE));
        }
        let min_inline = self.g(SQ_MIN_WQE_INLINE_MODE);
        if min_inline < u32::from(self.caps.min_inline) || min_inline > 3 {
            return Err(bad(synd::MIN_INLINE));
        }
        if self.g(SQ_ALLOW_MULTI_PKT) != 0 && !self.caps.mpwqe {
            return Err(bad(synd::MULTI_PKT));
        }
        let cqn = self.cq_field()?;
        let tisn = self.g(SQ_TIS_NUM_0);
        // tis_lst_sz is not checked: rsnic leaves it 0 with a TIS, mlx5e writes 1; an SQ
        // without a TIS (TIS 0 and an empty list: mlx5e's ICO SQs) has none.
        let tis = if tisn == 0 && self.g(SQ_TIS_LST_SZ) == 0 {
            None
        } else {
            match self.t.loc(tisn, TISN_BASE, |r| r.tis.used) {
                Ok((p, slot)) if p == self.p => Some(slot),
                _ => return Err((status::BAD_RESOURCE, synd::BAD_TIS)),
            }
        };
        let uar = self.uar_field(UAR_PAGE)?;
        let (pd, dbr, log, buf) = self.wq_common(6)?;
        let cfg = SqConfig {
            port: self.p,
            buf: buf.base,
            log_size: log as u8,
            dbr,
            cqn,
        };
        let extra = SqCtx {
            uar,
            tis: tis.map_or(0, |t| t as u8 + 1),
            pd,
            min_inline: min_inline as u8,
            flush: self.g(SQ_FLUSH_IN_ERROR_EN) != 0,
            ..SqCtx::EMPTY
        };
        let sqn = match self.t.create_sq(&cfg, QueueState::Reset, extra) {
            Ok(n) => n,
            Err(_) => {
                pas::free(self.t.pool, &buf);
                return Err((status::NO_RESOURCES, synd::NO_SQ));
            }
        };
        if let Ok((_, slot)) = self.t.sq_loc(sqn) {
            self.row(slot).sq.buf = buf;
        }
        set(self.out, ifc::OBJ_NUM, sqn);
        Ok(())
    }

    fn create_rq(&mut self) -> CmdResult {
        use ifc::wq::*;
        if self.g(RQ_MEM_RQ_TYPE) != 0 {
            return Err(bad(synd::MEM_RQ_TYPE));
        }
        let stride = self.g(LOG_WQ_STRIDE);
        if !(4..=8).contains(&stride) {
            return Err(bad(synd::WQ_STRIDE));
        }
        let cqn = self.cq_field()?;
        // The Q counter that counts the RQ's drops (0: none).
        let counter = self.g(RQ_COUNTER_SET_ID);
        if counter != 0 {
            self.qcnt_slot(counter)?;
        }
        let (pd, dbr, log, buf) = self.wq_common(stride)?;
        let cfg = RqConfig {
            port: self.p,
            buf: buf.base,
            log_size: log as u8,
            log_stride: stride as u8,
            dbr,
            cqn,
        };
        let flush = self.g(RQ_FLUSH_IN_ERROR_EN) != 0;
        let rqn = match self.t.create_rq(&cfg, QueueState::Reset, pd, flush) {
            Ok(n) => n,
            Err(_) => {
                pas::free(self.t.pool, &buf);
                return Err((status::NO_RESOURCES, synd::NO_RQ));
            }
        };
        let strip = self.g(RQ_VSD) == 0;
        if let Ok((_, slot)) = self.t.rq_loc(rqn) {
            let q = &mut self.row(slot).rq;
            q.buf = buf;
            q.counter = counter as u8;
            q.strip_vlan = strip;
        }
        set(self.out, ifc::OBJ_NUM, rqn);
        Ok(())
    }

    fn modify_wq(&mut self, sq: bool) -> CmdResult {
        use ifc::wq::*;
        let (base, bad_q) = if sq {
            (SQN_BASE, synd::BAD_SQ)
        } else {
            (RQN_BASE, synd::BAD_RQ)
        };
        let used: fn(&super::QueueSet) -> bool = if sq { |r| r.sq.used } else { |r| r.rq.used };
        let (p, slot) = self.own(MODIFY_QN, base, used, bad_q)?;
        // The fields a MODIFY may change besides the state: of an RQ, `vsd` (mlx5e's
        // `mlx5e_modify_rq_vsd`, ethtool -K rxvlan); nothing of an SQ.
        let bitmask = be64(self.inp, MODIFY_BITMASK);
        let allowed = if sq { 0 } else { MODIFY_RQ_BITMASK_VSD };
        if bitmask & !allowed != 0 {
            return Err(bad(synd::MODIFY_BITMASK));
        }
        let cur = if sq {
            self.row(slot).sq.state
        } else {
            self.row(slot).rq.state
        };
        if self.g(MODIFY_CUR_STATE) != state_code(cur) {
            return Err((status::BAD_RES_STATE, synd::CUR_STATE));
        }
        let next = match (cur, self.g(STATE)) {
            (QueueState::Reset, STATE_RDY) => QueueState::Ready,
            (QueueState::Ready, STATE_ERR) => QueueState::Error,
            (QueueState::Error, STATE_RST) => QueueState::Reset,
            // RDY -> RDY changes fields only (the RQ's `vsd`, as mlx5e does it on live RQs).
            (QueueState::Ready, STATE_RDY) if !sq => QueueState::Ready,
            _ => return Err((status::BAD_RES_STATE, synd::TRANSITION)),
        };
        let qn = make_qn(base, p, slot);
        let r = if sq {
            self.t.set_sq_state(qn, next)
        } else {
            self.t.set_rq_state(qn, next)
        };
        r.map_err(|_| (status::BAD_RESOURCE, bad_q))?;
        if bitmask & MODIFY_RQ_BITMASK_VSD != 0 {
            // From the next frame the RQ receives on (the engine reads the context per
            // frame).
            self.row(slot).rq.strip_vlan = self.g(RQ_VSD) == 0;
        }
        Ok(())
    }

    fn query_wq(&mut self, sq: bool) -> CmdResult {
        use ifc::wq::*;
        let (base, bad_q) = if sq {
            (SQN_BASE, synd::BAD_SQ)
        } else {
            (RQN_BASE, synd::BAD_RQ)
        };
        let used: fn(&super::QueueSet) -> bool = if sq { |r| r.sq.used } else { |r| r.rq.used };
        let (p, slot) = self.own(ifc::OBJ_NUM, base, used, bad_q)?;
        let r = *self.row(slot);
        let o = &mut *self.out;
        if sq {
            let q = r.sq;
            set(o, STATE, state_code(q.state));
            set(o, CQN, make_qn(CQN_BASE, p, usize::from(q.cq)));
            set(o, SQ_MIN_WQE_INLINE_MODE, u32::from(q.min_inline));
            set(o, SQ_FLUSH_IN_ERROR_EN, u32::from(q.flush));
            if q.tis != 0 {
                set(o, SQ_TIS_LST_SZ, 1);
                set(
                    o,
                    SQ_TIS_NUM_0,
                    make_qn(TISN_BASE, p, usize::from(q.tis - 1)),
                );
            }
            if q.pd != 0 {
                set(o, PD, make_qn(PD_BASE, p, usize::from(q.pd - 1)));
            }
            set(o, UAR_PAGE, u32::from(q.uar));
            set(o, LOG_WQ_STRIDE, 6);
            set(o, LOG_WQ_SZ, u32::from(q.log_size));
            set(o, HW_COUNTER, u32::from(q.cc));
            set(o, SW_COUNTER, u32::from(q.pc));
            set(o, WQ_TYPE, 1);
            put_be64(o, DBR_ADDR, q.dbr);
        } else {
            let q = r.rq;
            set(o, STATE, state_code(q.state));
            set(o, CQN, make_qn(CQN_BASE, p, usize::from(q.cq)));
            set(o, RQ_FLUSH_IN_ERROR_EN, u32::from(q.flush));
            set(o, RQ_VSD, u32::from(!q.strip_vlan));
            if q.pd != 0 {
                set(o, PD, make_qn(PD_BASE, p, usize::from(q.pd - 1)));
            }
            set(o, LOG_WQ_STRIDE, u32::from(q.log_stride));
            set(o, LOG_WQ_SZ, u32::from(q.log_size));
            set(o, HW_COUNTER, u32::from(q.cc));
            set(o, SW_COUNTER, u32::from(q.posted));
            set(o, WQ_TYPE, 1);
            put_be64(o, DBR_ADDR, q.dbr);
        }
        Ok(())
    }

    /// Adds (`on`) or drops the RQ references of RQT `slot`.
    fn set_rqt_refs(&mut self, slot: usize, on: bool) {
        let r = self.row(slot).rqt;
        for &rq in r.rqs.iter().take(usize::from(r.len)) {
            let q = &mut self.row(usize::from(rq)).rq;
            q.users = if on {
                q.users.saturating_add(1)
            } else {
                q.users.saturating_sub(1)
            };
        }
    }

    /// CREATE_RQT (`existing` None) or MODIFY_RQT of RQT `existing`.
    fn rqt(&mut self, existing: Option<usize>) -> CmdResult {
        use ifc::rqt::*;
        if self.g(LIST_Q_TYPE) != 0 || self.g(RQ_VHCA_ID_FORMAT) != 0 {
            return Err(bad(synd::RQT_FORMAT));
        }
        let actual = self.g(RQT_ACTUAL_SIZE) as usize;
        let max = match existing {
            Some(s) => usize::from(self.row(s).rqt.max),
            None => self.g(RQT_MAX_SIZE) as usize,
        };
        let cap = 1usize << self.caps.log_max_rqt_size;
        if actual == 0 || actual > max || max > cap {
            return Err(bad(synd::RQT_SIZE));
        }
        if self.inlen < RQ_NUM + 4 * actual {
            return Err((status::BAD_INPUT_LEN, synd::INPUT_TOO_SHORT));
        }
        let mut rqs = [0u8; MAX_RQT_SIZE];
        for (i, e) in rqs.iter_mut().enumerate().take(actual) {
            let mut b = [0u8; 4];
            if !self.read_in(RQ_NUM + 4 * i, &mut b) {
                return Err((status::BAD_INPUT_LEN, synd::INPUT_TOO_SHORT));
            }
            let rqn = u32::from_be_bytes(b) & 0xff_ffff;
            match self.t.rq_loc(rqn) {
                Ok((p, slot)) if p == self.p => *e = slot as u8,
                _ => return Err((status::BAD_RESOURCE, synd::BAD_RQ)),
            }
        }
        let p = self.p;
        let slot = match existing {
            Some(s) => {
                self.set_rqt_refs(s, false);
                s
            }
            None => self
                .t
                .free_slot(p, |r| r.rqt.used)
                .map_err(|_| (status::NO_RESOURCES, synd::NO_RQT))?,
        };
        let users = self.row(slot).rqt.users;
        self.row(slot).rqt = super::RqtCtx {
            used: true,
            max: max as u16,
            len: actual as u16,
            rqs,
            users,
        };
        self.set_rqt_refs(slot, true);
        if existing.is_none() {
            set(self.out, ifc::OBJ_NUM, make_qn(RQTN_BASE, p, slot));
        }
        self.t.refresh_rx(p, true);
        Ok(())
    }

    /// The hash parameters of a TIR context (`rx_hash_fn`, `rx_hash_symmetric`, the key and
    /// the outer field selector) at the context's usual place: Toeplitz, not symmetric, and
    /// only the fields the model hashes.
    fn tir_hash(&self) -> Result<([u8; 40], crate::sim::pkt::HashSel, bool, bool), Fail> {
        use ifc::tir::*;
        // Toeplitz (2) or inverted XOR8 (1: mlx5e's one-RQ TIRs).
        let xor8 = match self.g(RX_HASH_FN) {
            2 => false,
            1 => true,
            _ => return Err(bad(synd::TIR_HASH)),
        };
        let symmetric = self.g(RX_HASH_SYMMETRIC) != 0 && !xor8;
        let fields = self.g(SEL_FIELDS);
        // The SPI (mlx5e's IPsec AH / ESP traffic types) is taken and not hashed: the model
        // hashes the addresses of such frames.
        let known = SEL_SRC_IP | SEL_DST_IP | SEL_L4_SPORT | SEL_L4_DPORT | SEL_IPSEC_SPI;
        if fields & !known != 0 {
            return Err(bad(synd::TIR_FIELDS));
        }
        let mut key = [0u8; 40];
        if let Some(k) = self.inp.get(TOEPLITZ_KEY..TOEPLITZ_KEY + 40) {
            key.copy_from_slice(k);
        }
        let sel = crate::sim::pkt::HashSel {
            ipv6: self.g(SEL_L3_PROT_TYPE) == 1,
            udp: self.g(SEL_L4_PROT_TYPE) == 1,
            src_ip: fields & SEL_SRC_IP != 0,
            dst_ip: fields & SEL_DST_IP != 0,
            sport: fields & SEL_L4_SPORT != 0,
            dport: fields & SEL_L4_DPORT != 0,
        };
        Ok((key, sel, symmetric, xor8))
    }

    fn create_tir(&mut self) -> CmdResult {
        use ifc::tir::*;
        let indirect = match self.g(DISP_TYPE) {
            0 => false,
            1 => true,
            _ => return Err(bad(synd::TIR_DISP_TYPE)),
        };
        let td = self.td_field(TRANSPORT_DOMAIN)?;
        let (rqt, inline_rq, (key, sel, symmetric, xor8)) = if indirect {
            let hash = self.tir_hash()?;
            let (_, s) = self.own(INDIRECT_TABLE, RQTN_BASE, |r| r.rqt.used, synd::BAD_RQT)?;
            (s, 0, hash)
        } else {
            let (_, s) = self.own(INLINE_RQN, RQN_BASE, |r| r.rq.used, synd::BAD_RQ)?;
            (
                0,
                s,
                ([0; 40], super::QueueSet::EMPTY.tir.sel, false, false),
            )
        };
        let p = self.p;
        let slot = self
            .t
            .free_slot(p, |r| r.tir.used)
            .map_err(|_| (status::NO_RESOURCES, synd::NO_TIR))?;
        self.row(slot).tir = super::TirCtx {
            used: true,
            indirect,
            rqt: rqt as u8,
            inline_rq: inline_rq as u8,
            td,
            key,
            sel,
            symmetric,
            xor8,
            users: 0,
        };
        if indirect {
            self.row(rqt).rqt.users += 1;
        } else {
            let q = &mut self.row(inline_rq).rq;
            q.users = q.users.saturating_add(1);
        }
        if indirect && self.port().func.rss_tir == 0 {
            self.port().func.rss_tir = slot as u8 + 1;
        }
        self.t.refresh_rx(p, true);
        set(self.out, ifc::OBJ_NUM, make_qn(TIRN_BASE, p, slot));
        Ok(())
    }

    /// MODIFY_TIR: `bitmask.hash` replaces the hash parameters of an indirect TIR (hash
    /// function, symmetry, key, outer field selector); its RQT stays. Frames received after
    /// the command are hashed the new way (nothing is lost: mlx5e's hitless key change).
    fn modify_tir(&mut self) -> CmdResult {
        use ifc::tir::*;
        let (_, slot) = self.own(MODIFY_TIRN, TIRN_BASE, |r| r.tir.used, synd::BAD_TIR)?;
        let bm = be64(self.inp, MODIFY_BITMASK);
        // self_lb_en changes `self_lb_block` (which of the function's own frames it may
        // receive back); the model loops no frame back to a function but by PPLR, so it
        // takes the field and nothing changes.
        if bm & !(MODIFY_BITMASK_HASH | MODIFY_BITMASK_SELF_LB) != 0
            || (bm & MODIFY_BITMASK_HASH != 0 && !self.row(slot).tir.indirect)
        {
            return Err(bad(synd::TIR_BITMASK));
        }
        if bm & MODIFY_BITMASK_HASH != 0 {
            let (key, sel, symmetric, xor8) = self.tir_hash()?;
            let t = &mut self.row(slot).tir;
            t.key = key;
            t.sel = sel;
            t.symmetric = symmetric;
            t.xor8 = xor8;
        }
        let p = self.p;
        self.t.refresh_rx(p, true);
        Ok(())
    }

    fn destroy_tir(&mut self, slot: usize) -> CmdResult {
        let t = self.row(slot).tir;
        if t.users != 0 {
            return Err((status::RESOURCE_BUSY, synd::TIR_IN_USE));
        }
        if t.indirect {
            let r = &mut self.row(usize::from(t.rqt)).rqt;
            r.users = r.users.saturating_sub(1);
        } else {
            let q = &mut self.row(usize::from(t.inline_rq)).rq;
            q.users = q.users.saturating_sub(1);
        }
        self.row(slot).tir.used = false;
        if usize::from(self.port().func.rss_tir) == slot + 1 {
            // The next indirect TIR (lowest slot) takes over; none: received frames drop.
            let next = (0..MAX_QUEUES).find(|&i| {
                let r = self.row(i).tir;
                r.used && r.indirect
            });
            self.port().func.rss_tir = next.map_or(0, |i| i as u8 + 1);
        }
        let p = self.p;
        self.t.refresh_rx(p, true);
        Ok(())
    }

    /// The table of a flow-steering command (`table_type`, `other_vport`, `table_id`).
    fn fs_table(&self) -> Result<usize, Fail> {
        use ifc::fs::*;
        if self.g(TABLE_TYPE) != TABLE_TYPE_NIC_RX || self.g(OTHER_VPORT) != 0 {
            return Err(bad(synd::FT_TYPE));
        }
        let (_, s) = self.own(TABLE_ID, FT_BASE, |r| r.ft.used, synd::BAD_FT)?;
        Ok(s)
    }

    /// CREATE_FLOW_TABLE: a NIC RX table of `2^log_size` flow indices at its `level`,
    /// whose misses drop (the default miss action) or go to a table of a higher level.
    fn create_flow_table(&mut self) -> CmdResult {
        use ifc::fs::*;
        if self.g(TABLE_TYPE) != TABLE_TYPE_NIC_RX || self.g(OTHER_VPORT) != 0 {
            return Err(bad(synd::FT_TYPE));
        }
        let log_size = self.g(FT_LOG_SIZE);
        let level = self.g(FT_LEVEL);
        // The level orders tables (a miss or an entry forwards only to a higher one);
        // fs_core's anchor table sits above every level it uses.
        if self.g(FT_FLAGS) != 0 || log_size > 16 {
            return Err(bad(synd::FT_PARAM));
        }
        let miss = self.miss_table(level)?;
        let p = self.p;
        let slot = self
            .t
            .free_slot(p, |r| r.ft.used)
            .map_err(|_| (status::NO_RESOURCES, synd::NO_FS))?;
        self.row(slot).ft = super::FtCtx {
            used: true,
            log_size: log_size as u8,
            level: level as u8,
            miss,
            ..super::QueueSet::EMPTY.ft
        };
        self.table_ref(miss, true);
        set(self.out, ifc::OBJ_NUM, make_qn(FT_BASE, p, slot));
        Ok(())
    }

    /// MODIFY_FLOW_TABLE (`modify_field_select` bit 0, MLX5_MODIFY_FLOW_TABLE_MISS_TABLE_ID):
    /// the table's miss action and miss table, as CREATE_FLOW_TABLE takes them; what
    /// fs_core does to chain a new table after the tables of an earlier level.
    fn modify_flow_table(&mut self) -> CmdResult {
        use ifc::fs::*;
        let t = self.fs_table()?;
        if self.g(FT_MODIFY_SELECT) != 1 {
            return Err(bad(synd::FT_MODIFY_FIELDS));
        }
        let level = u32::from(self.row(t).ft.level);
        let miss = self.miss_table(level)?;
        let old = self.row(t).ft.miss;
        self.table_ref(old, false);
        self.table_ref(miss, true);
        self.row(t).ft.miss = miss;
        let p = self.p;
        self.t.refresh_rx(p, true);
        Ok(())
    }

    /// The miss table of a flow table context at `level` (slot + 1; 0: the default miss
    /// action, a drop): a table of this function at a higher level.
    fn miss_table(&mut self, level: u32) -> Result<u8, Fail> {
        use ifc::fs::*;
        let action = self.g(FT_MISS_ACTION);
        if (action == 0 && self.g(FT_MISS_ID) != 0) || (action != 0 && action != MISS_ACTION_FWD) {
            return Err(bad(synd::FT_PARAM));
        }
        if action != MISS_ACTION_FWD {
            return Ok(0);
        }
        let m = match self.t.loc(self.g(FT_MISS_ID), FT_BASE, |r| r.ft.used) {
            Ok((p, s)) if p == self.p => s,
            _ => return Err((status::BAD_RESOURCE, synd::BAD_FT)),
        };
        if u32::from(self.row(m).ft.level) <= level {
            return Err(bad(synd::FT_PARAM));
        }
        Ok((m as u8).wrapping_add(1))
    }

    /// Counts (`on`) or drops a reference to table `t` (slot + 1; 0: none).
    fn table_ref(&mut self, t: u8, on: bool) {
        if t == 0 {
            return;
        }
        let f = &mut self.row(usize::from(t - 1)).ft;
        f.refs = if on {
            f.refs.saturating_add(1)
        } else {
            f.refs.saturating_sub(1)
        };
    }

    /// DESTROY_FLOW_TABLE of a table without groups that no entry forwards to. fs_core
    /// destroys its tables at cleanup without disconnecting them first: a root table goes
    /// (the function has no root then: received frames go to its first indirect TIR), and a
    /// table others miss to goes (their misses drop from then on).
    fn destroy_flow_table(&mut self) -> CmdResult {
        let t = self.fs_table()?;
        let f = self.row(t).ft;
        let entry_refs = (0..MAX_QUEUES).any(|i| {
            let e = self.row(i).fte;
            e.used && e.dest == super::Dest::Table(t as u8)
        });
        if f.users != 0 || entry_refs {
            return Err((status::RESOURCE_BUSY, synd::FT_IN_USE));
        }
        for i in 0..MAX_QUEUES {
            let o = &mut self.row(i).ft;
            if o.used && usize::from(o.miss) == t + 1 {
                o.miss = 0;
            }
        }
        self.table_ref(f.miss, false);
        self.row(t).ft.used = false;
        if usize::from(self.port().func.root_ft) == t + 1 {
            self.port().func.root_ft = 0;
        }
        let p = self.p;
        self.t.refresh_rx(p, true);
        Ok(())
    }

    /// CREATE_FLOW_GROUP: flow indices `start..=end` of a table whose entries match the
    /// outer headers under the group's criteria (`match_criteria_enable` bit 0; no other
    /// part of the match parameter: misc, inner, the later sets), or every frame (no
    /// criteria).
    fn create_flow_group(&mut self) -> CmdResult {
        use ifc::fs::*;
        let t = self.fs_table()?;
        if self.g(FG_GROUP_TYPE) != 0 || self.g(FG_DEFINER) != 0 {
            return Err(bad(synd::FG_CRITERIA));
        }
        let enable = self.g(FG_CRITERIA_ENABLE);
        let crit = self
            .inp
            .get(FG_CRITERIA..FG_CRITERIA + MATCH_PARAM_LEN)
            .ok_or((status::BAD_INPUT_LEN, synd::INPUT_TOO_SHORT))?;
        let (outer, rest) = crit.split_at(super::MATCH_LEN);
        let any = outer.iter().any(|&b| b != 0);
        if enable & !1 != 0
            || rest.iter().any(|&b| b != 0)
            || (enable == 0 && any)
            || !super::steer::criteria_supported(outer)
        {
            return Err(bad(synd::FG_CRITERIA));
        }
        let mut mask = [0u8; super::MATCH_LEN];
        mask.copy_from_slice(outer);
        let (start, end) = (self.g(FG_START), self.g(FG_END));
        let size = 1u64 << self.row(t).ft.log_size;
        let overlaps = (0..MAX_QUEUES).any(|i| {
            let g = self.row(i).fg;
            g.used && usize::from(g.table) == t && g.start <= end && start <= g.end
        });
        if start > end || u64::from(end) >= size || overlaps {
            return Err(bad(synd::FG_RANGE));
        }
        let p = self.p;
        let slot = self
            .t
            .free_slot(p, |r| r.fg.used)
            .map_err(|_| (status::NO_RESOURCES, synd::NO_FS))?;
        self.row(slot).fg = super::FgCtx {
            used: true,
            table: t as u8,
            start,
            end,
            mask,
            users: 0,
        };
        let ft = &mut self.row(t).ft;
        ft.users = ft.users.saturating_add(1);
        set(self.out, ifc::OBJ_NUM, make_qn(FG_BASE, p, slot));
        Ok(())
    }

    /// The slot of flow group `f` (a field of the input) of table `t`.
    fn fs_group(&self, f: ifc::Fld, t: usize) -> Result<usize, Fail> {
        let (_, g) = self.own(f, FG_BASE, |r| r.fg.used, synd::BAD_FG)?;
        let fg = match self.t.row(self.p, g) {
            Some(r) => r.fg,
            None => return Err((status::BAD_RESOURCE, synd::BAD_FG)),
        };
        if usize::from(fg.table) != t {
            return Err((status::BAD_RESOURCE, synd::BAD_FG));
        }
        Ok(g)
    }

    fn destroy_flow_group(&mut self) -> CmdResult {
        let t = self.fs_table()?;
        let g = self.fs_group(ifc::fs::FG_ID_IN, t)?;
        if self.row(g).fg.users != 0 {
            return Err((status::RESOURCE_BUSY, synd::FG_IN_USE));
        }
        self.row(g).fg.used = false;
        let ft = &mut self.row(t).ft;
        ft.users = ft.users.saturating_sub(1);
        Ok(())
    }

    /// The slot of the entry at flow index `index` of table `t`.
    fn fte_at(&mut self, t: usize, index: u32) -> Option<usize> {
        (0..MAX_QUEUES).find(|&i| {
            let e = self.row(i).fte;
            e.used && usize::from(e.table) == t && e.index == index
        })
    }

    /// Counts (`on`) or drops the reference an entry's destination holds.
    fn dest_ref(&mut self, d: super::Dest, on: bool) {
        match d {
            super::Dest::Tir(x) => {
                let tc = &mut self.row(usize::from(x)).tir;
                tc.users = if on {
                    tc.users.saturating_add(1)
                } else {
                    tc.users.saturating_sub(1)
                };
            }
            super::Dest::Table(x) => self.table_ref(x.wrapping_add(1), on),
            super::Dest::Drop => {}
        }
    }

    /// SET_FLOW_TABLE_ENTRY: op_mod 0 a new entry, 1 (with a `modify_enable_mask`) the
    /// entry at that index replaced. An entry forwards what its group's criteria match with
    /// its values (the outer headers) to one destination, a TIR or a table of a higher
    /// level (`FWD_DEST`), or drops it (`DROP`); a flow tag is taken and not reported.
    fn set_fte(&mut self, op_mod: u32) -> CmdResult {
        use ifc::fs::*;
        let t = self.fs_table()?;
        let g = self.fs_group(FTE_GROUP, t)?;
        let index = self.g(FTE_INDEX);
        let fg = self.row(g).fg;
        let existing = self.fte_at(t, index);
        if index < fg.start || index > fg.end || (op_mod == 0) == existing.is_some() {
            return Err(bad(synd::FTE_INDEX));
        }
        let action = self.g(FTE_ACTION);
        let n = self.g(FTE_DEST_LIST_SIZE);
        if (op_mod == 0 && self.g(FTE_MODIFY_MASK) != 0)
            || self.g(FTE_DEST_FLAGS) != 0
            || self.g(FTE_COUNTER_LIST_SIZE) != 0
            || self.g(FTE_REFORMAT_ID) != 0
            || self.g(FTE_MODIFY_HEADER_ID) != 0
            || !((action == ACTION_FWD_DEST && n == 1) || (action == ACTION_DROP && n == 0))
        {
            return Err(bad(synd::FTE_ACTION));
        }
        let dest = if action == ACTION_DROP {
            super::Dest::Drop
        } else {
            let Some(d) = self.inp.get(FTE_DEST..FTE_DEST + 8) else {
                return Err((status::BAD_INPUT_LEN, synd::INPUT_TOO_SHORT));
            };
            let (ty, id) = (get(d, DEST_TYPE), get(d, DEST_ID));
            if self.inlen < FTE_DEST + 8 {
                return Err((status::BAD_INPUT_LEN, synd::INPUT_TOO_SHORT));
            }
            match ty {
                DEST_TYPE_TIR => match self.t.loc(id, TIRN_BASE, |r| r.tir.used) {
                    Ok((p, s)) if p == self.p => super::Dest::Tir(s as u8),
                    _ => return Err((status::BAD_RESOURCE, synd::BAD_TIR)),
                },
                DEST_TYPE_FLOW_TABLE => match self.t.loc(id, FT_BASE, |r| r.ft.used) {
                    Ok((p, s)) if p == self.p => {
                        // Forward only to a table of a higher level: the walk ends.
                        if self.row(s).ft.level <= self.row(t).ft.level {
                            return Err(bad(synd::FTE_ACTION));
                        }
                        super::Dest::Table(s as u8)
                    }
                    _ => return Err((status::BAD_RESOURCE, synd::BAD_FT)),
                },
                _ => return Err(bad(synd::FTE_ACTION)),
            }
        };
        let m = self
            .inp
            .get(FTE_MATCH..FTE_MATCH + super::MATCH_LEN)
            .ok_or((status::BAD_INPUT_LEN, synd::INPUT_TOO_SHORT))?;
        let mut value = [0u8; super::MATCH_LEN];
        for ((v, &x), &k) in value.iter_mut().zip(m).zip(fg.mask.iter()) {
            *v = x & k;
        }
        let lo = fg.mask.iter().position(|&b| b != 0).unwrap_or(0);
        let hi = fg.mask.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
        let p = self.p;
        let slot = match existing {
            Some(s) => {
                let old = self.row(s).fte.dest;
                self.dest_ref(old, false);
                s
            }
            None => {
                let s = self
                    .t
                    .free_slot(p, |r| r.fte.used)
                    .map_err(|_| (status::NO_RESOURCES, synd::NO_FS))?;
                let fg = &mut self.row(g).fg;
                fg.users = fg.users.saturating_add(1);
                s
            }
        };
        self.row(slot).fte = super::FteCtx {
            used: true,
            table: t as u8,
            group: g as u8,
            index,
            mask: fg.mask,
            value,
            lo: lo as u8,
            hi: hi as u8,
            dest,
        };
        self.dest_ref(dest, true);
        self.t.refresh_rx(p, true);
        Ok(())
    }

    fn delete_fte(&mut self) -> CmdResult {
        let t = self.fs_table()?;
        let index = self.g(ifc::fs::FTE_INDEX);
        let Some(slot) = self.fte_at(t, index) else {
            return Err(bad(synd::FTE_INDEX));
        };
        let e = self.row(slot).fte;
        self.row(slot).fte.used = false;
        let fg = &mut self.row(usize::from(e.group)).fg;
        fg.users = fg.users.saturating_sub(1);
        self.dest_ref(e.dest, false);
        let p = self.p;
        self.t.refresh_rx(p, true);
        Ok(())
    }

    /// SET_FLOW_TABLE_ROOT: op_mod 0 makes a table the NIC RX root (received frames are
    /// steered by it), op_mod 1 disconnects the root.
    fn set_root(&mut self, op_mod: u32) -> CmdResult {
        use ifc::fs::*;
        if self.g(ROOT_UNDERLAY_QPN) != 0 {
            return Err(bad(synd::FT_PARAM));
        }
        let root = if op_mod == 1 {
            if self.g(TABLE_TYPE) != TABLE_TYPE_NIC_RX || self.g(OTHER_VPORT) != 0 {
                return Err(bad(synd::FT_TYPE));
            }
            0
        } else {
            self.fs_table()? as u8 + 1
        };
        self.port().func.root_ft = root;
        let p = self.p;
        self.t.refresh_rx(p, true);
        Ok(())
    }

    fn modify_vport(&mut self) -> CmdResult {
        use ifc::vport::*;
        if self.g(OTHER_VPORT) != 0 {
            return Err(bad(synd::OTHER_FUNCTION));
        }
        let fs = self.g(FIELD_SELECT);
        let bit = |f: ifc::Fld| 1u32 << (31 - (f.bit - 0x60));
        let known =
            bit(FS_MTU) | bit(FS_PERMANENT_ADDRESS) | bit(FS_PROMISC) | bit(FS_ADDRESSES_LIST);
        if fs & !known != 0 {
            return Err(bad(synd::FIELD_SELECT));
        }
        if self.g(FS_PROMISC) != 0 {
            let c = self.inp.get(CTX_MODIFY..).unwrap_or_default();
            let (uc, mc, all) = (
                get(c, PROMISC_UC) != 0,
                get(c, PROMISC_MC) != 0,
                get(c, PROMISC_ALL) != 0,
            );
            let f = &mut self.port().func.filter;
            f.active = true;
            f.promisc_uc = uc;
            f.promisc_mc = mc;
            f.promisc_all = all;
        }
        if self.g(FS_ADDRESSES_LIST) != 0 {
            let c = self.inp.get(CTX_MODIFY..).unwrap_or_default();
            let (ty, n) = (
                get(c, ALLOWED_LIST_TYPE),
                get(c, ALLOWED_LIST_SIZE) as usize,
            );
            let cap = match ty {
                LIST_UC => UC_LIST,
                LIST_MC => MC_LIST,
                LIST_VLAN => VLAN_LIST,
                _ => return Err(bad(synd::FIELD_SELECT)),
            };
            if n > cap {
                return Err(bad(synd::ADDRESS_LIST));
            }
            if ty == LIST_VLAN {
                // `vlan_layout`: the VID in bits 11..0 of the entry's first word.
                let mut vl = [0u16; VLAN_LIST];
                for (i, e) in vl.iter_mut().enumerate().take(n) {
                    let mut b = [0u8; 8];
                    if !self.read_in(CTX_MODIFY + ADDRESSES + 8 * i, &mut b) {
                        return Err((status::BAD_INPUT_LEN, synd::ADDRESS_LIST));
                    }
                    *e = u16::from_be_bytes([b[2], b[3]]) & 0xfff;
                }
                let f = &mut self.port().func.filter;
                f.active = true;
                f.vlans_set = true;
                f.vlans = vl;
                f.vlans_len = n as u8;
            } else {
                let mut list = [[0u8; 6]; MC_LIST];
                for (i, e) in list.iter_mut().enumerate().take(n) {
                    let mut b = [0u8; 8];
                    if !self.read_in(CTX_MODIFY + ADDRESSES + 8 * i, &mut b) {
                        return Err((status::BAD_INPUT_LEN, synd::ADDRESS_LIST));
                    }
                    e.copy_from_slice(&b[2..]);
                }
                let f = &mut self.port().func.filter;
                f.active = true;
                if ty == LIST_UC {
                    // Element by element: a slice copy's length check is a panic path
                    // objtool does not know ends.
                    for (d, e) in f.uc.iter_mut().zip(list.iter()) {
                        *d = *e;
                    }
                    f.uc_len = n as u8;
                } else {
                    f.mc = list;
                    f.mc_len = n as u8;
                }
            }
        }
        let ctx = self.inp.get(CTX_MODIFY..).unwrap_or_default();
        let mtu = get(ctx, MTU);
        let a = PERMANENT_ADDRESS + 2;
        let mut mac = [0u8; 6];
        if let Some(s) = ctx.get(a..a + 6) {
            mac.copy_from_slice(s);
        }
        let set_mtu = self.g(FS_MTU) != 0;
        let set_mac = self.g(FS_PERMANENT_ADDRESS) != 0;
        if set_mtu && !(64..=(super::MAX_FRAME as u32 + 4)).contains(&mtu) {
            return Err(bad(synd::MTU));
        }
        if set_mac && mac[0] & 1 != 0 {
            return Err(bad(synd::MAC));
        }
        let f = &mut self.port().func;
        if set_mtu {
            f.mtu = mtu as u16;
        }
        if set_mac {
            f.mac = mac;
        }
        Ok(())
    }

    fn access_reg(&mut self, op_mod: u32) -> CmdResult {
        use ifc::reg::*;
        let id = self.g(REGISTER_ID);
        let len = match id {
            PMTU => PMTU_LEN,
            PTYS => PTYS_LEN,
            PAOS => PAOS_LEN,
            PFCC => PFCC_LEN,
            PPLR => PPLR_LEN,
            PPCNT => PPCNT_LEN,
            _ => return Err(bad(synd::REGISTER_ID)),
        };
        if self.inlen < DATA + len {
            return Err((status::BAD_INPUT_LEN, synd::REG_LENGTH));
        }
        if self.outlen < DATA + len {
            return Err((status::BAD_OUTPUT_LEN, synd::REG_LENGTH));
        }
        let r = self.inp.get(DATA..DATA + len).unwrap_or_default();
        // local_port 1 (mlx5 core), or 0 (the contract leaves it 0): the function's port.
        if get(r, LOCAL_PORT) > 1 {
            return Err(bad(synd::LOCAL_PORT));
        }
        if id == PPCNT {
            let (grp, clr) = (get(r, PPCNT_GRP), get(r, PPCNT_CLR) != 0);
            return self.ppcnt(grp, clr, get(r, PPCNT_PRIO_TC));
        }
        if op_mod == OP_WRITE {
            match id {
                PMTU => {
                    let mtu = get(r, PMTU_ADMIN);
                    if !(64..=PORT_MAX_MTU).contains(&mtu) {
                        return Err(bad(synd::PMTU_MTU));
                    }
                    self.port().func.port_mtu = mtu as u16;
                }
                // The link modes are fixed (one 100G mode): a write changes nothing.
                PTYS => {}
                PAOS => {
                    if get(r, PAOS_ASE) != 0 {
                        let up = match get(r, PAOS_ADMIN_STATUS) {
                            PORT_UP => true,
                            PORT_DOWN => false,
                            _ => return Err(bad(synd::ADMIN_STATUS)),
                        };
                        self.port().link_up = up;
                    }
                }
                PPLR => {
                    // Any of the PRM's loopback modes (phy remote 1, phy local 2, external
                    // local 4) turns the model's one internal loopback on.
                    let en = get(r, PPLR_LB_EN);
                    if en & !PPLR_LB_ANY != 0 {
                        return Err(bad(synd::LOOPBACK_MODE));
                    }
                    self.port().loopback = en != 0;
                    self.port().func.lb_en = en as u8;
                }
                _ => {
                    let (tx, rx) = (get(r, PFCC_PPTX) != 0, get(r, PFCC_PPRX) != 0);
                    let pt = self.port();
                    pt.pause_tx = tx;
                    pt.pause_rx = rx;
                }
            }
        }
        // Both directions answer with the register's (new) contents.
        let p = self.p;
        let oper = oper_up(self.t.ports, p);
        // PANIC: `p` indexes a port (see `Cx::port`).
        let pt = &self.t.ports[p];
        let o = match self.out.get_mut(DATA..DATA + len) {
            Some(o) => o,
            None => return Ok(()),
        };
        set(o, LOCAL_PORT, 1);
        match id {
            PMTU => {
                set(o, PMTU_MAX, PORT_MAX_MTU);
                set(o, PMTU_ADMIN, u32::from(pt.func.port_mtu));
                set(o, PMTU_OPER, u32::from(pt.func.port_mtu));
            }
            PTYS => {
                // Ethernet (proto_mask 4), one 100GBASE-CR4 mode: capable, advertised,
                // and running while the port is up.
                set(o, PTYS_PROTO_MASK, 4);
                set(o, PTYS_ETH_CAP, PTYS_100GBASE_CR4);
                set(o, PTYS_ETH_ADMIN, PTYS_100GBASE_CR4);
                set(o, PTYS_ETH_OPER, if oper { PTYS_100GBASE_CR4 } else { 0 });
                // Direct-attach copper (MLX5E_PORT_DA).
                set(o, PTYS_CONNECTOR, 7);
            }
            PAOS => {
                let st = |up: bool| if up { PORT_UP } else { PORT_DOWN };
                set(o, PAOS_ADMIN_STATUS, st(pt.link_up));
                set(o, PAOS_OPER_STATUS, st(oper));
            }
            PPLR => {
                set(o, PPLR_LB_CAP, PPLR_LB_LOCAL);
                // The mode last written, or phy local when the device host turned it on.
                let en = match (pt.loopback, pt.func.lb_en) {
                    (false, _) => 0,
                    (true, 0) => PPLR_LB_LOCAL,
                    (true, m) => u32::from(m),
                };
                set(o, PPLR_LB_EN, en);
            }
            _ => {
                set(o, PFCC_PPTX, u32::from(pt.pause_tx));
                set(o, PFCC_PPRX, u32::from(pt.pause_rx));
            }
        }
        Ok(())
    }

    /// PPCNT (read or write alike): the counters of group `grp` since the last clear, then,
    /// with `clr`, restarts them.
    fn ppcnt(&mut self, grp: u32, clr: bool, prio: u32) -> CmdResult {
        use ifc::reg::*;
        let pt = self.port();
        let now = match grp {
            PPCNT_IEEE_802_3 => ieee_802_3(pt),
            PPCNT_RFC_2863 => rfc_2863(pt),
            PPCNT_RFC_2819 => rfc_2819(pt),
            PPCNT_PER_PRIO => per_prio(pt, prio),
            // The physical layer: no symbol, FEC or lane errors on the simulated wire.
            PPCNT_PHYS => [0; ieee::COUNT_MAX],
            _ => return Err(bad(synd::PPCNT_GROUP)),
        };
        if clr {
            let c = &pt.counters;
            pt.func.wire = Mac {
                pause_base: (c.rx_pause_frames, c.tx_pause_frames),
                ..Mac::ZERO
            };
        }
        let Some(o) = self.out.get_mut(DATA..DATA + PPCNT_LEN) else {
            return Ok(());
        };
        set(o, LOCAL_PORT, 1);
        set(o, PPCNT_GRP, grp);
        set(o, PPCNT_PRIO_TC, prio);
        for (i, v) in now.iter().enumerate() {
            let at = PPCNT_SET + 8 * i;
            if let Some(d) = o.get_mut(at..at + 8) {
                d.copy_from_slice(&v.to_be_bytes());
            }
        }
        Ok(())
    }

    fn query_vport_counter(&mut self) -> CmdResult {
        use ifc::vport::*;
        if self.g(CNT_OTHER_VPORT) != 0 {
            return Err(bad(synd::OTHER_FUNCTION));
        }
        let clear = self.g(CNT_CLEAR) != 0;
        let pt = self.port();
        let (v, b) = (pt.func.vport, pt.func.vport_base);
        let c = pt.counters;
        if clear {
            pt.func.vport_base = v;
        }
        let o = &mut *self.out;
        let d = |i: usize| {
            (
                v.c[i].0.wrapping_sub(b.c[i].0),
                v.c[i].1.wrapping_sub(b.c[i].1),
            )
        };
        for (i, off) in [
            CNT_RX_UCAST,
            CNT_RX_MCAST,
            CNT_RX_BCAST,
            CNT_TX_UCAST,
            CNT_TX_MCAST,
            CNT_TX_BCAST,
        ]
        .into_iter()
        .enumerate()
        {
            let (pk, oc) = d(i);
            put_be64(o, off, pk);
            put_be64(o, off + 8, oc);
        }
        put_be64(
            o,
            CNT_RX_ERRORS,
            c.rx_too_long.wrapping_add(c.rx_dma_faults),
        );
        put_be64(o, CNT_TX_ERRORS, c.wqe_errors);
        put_be64(o, CNT_LOCAL_LB, c.loopback_packets);
        put_be64(o, CNT_LOCAL_LB + 8, c.loopback_bytes);
        Ok(())
    }
}

// The API's UAR page is never one ALLOC_UAR hands out.
const _: () = assert!(API_UAR < FIRST_UAR);
