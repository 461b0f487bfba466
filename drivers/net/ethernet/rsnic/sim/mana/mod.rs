// SPDX-License-Identifier: GPL-2.0

//! A simulated MANA (GDMA) Ethernet device (Documentation/networking/device_drivers/ethernet/
//! rsnic-hardware.rst, part D, counters E.3).
//!
//! Like [`crate::sim::mlx5`], the device decodes the formats itself (an independent reading
//! of those facts and a cross-check of the driver's `dp::mana`); it shares no code with the
//! driver side. It sees only register writes and host memory by bus address.
//!
//! # Ports and wiring
//!
//! N ports wired back to back in pairs (2k ↔ 2k+1); a packet sent on a port's SQ arrives at
//! the peer, which spreads it over its RQs with RSS (Toeplitz under the vport's hash key over
//! the IP addresses and TCP/UDP ports, [`crate::sim::pkt::rss_hash_key`], entry `hash % len`
//! of the table). A port
//! without a peer, or a link down at either end, drops and counts
//! [`PortCounters::tx_link_down_drops`].
//!
//! **Loopback** ([`Device::set_loopback`], off after creation; what `ethtool -K <dev> loopback
//! on`, `NETIF_F_LOOPBACK`, asks for). A port in loopback delivers every frame it transmits
//! to its own receive side instead of its peer: RSS, RQ selection, RX CQEs and RX counters
//! exactly as for a frame from the wire. The model follows ConnectX's internal loopback: the
//! frame turns around inside the device, before the wire, so neither end's link state
//! matters (a looped port carries traffic to itself while it or its peer is down, and a port
//! without a peer loops too), the peer sees nothing, and the link state reported by the
//! model does not change. Looped frames count in the sender's `hc_tx_*` counters (they left
//! its SQs) and in [`PortCounters::loopback_packets`] / [`PortCounters::loopback_bytes`], so
//! the peer's receive outcomes balance `tx_packets() − loopback_packets`. The switch governs
//! the port's transmit direction only: what its peer sends still arrives when both links
//! are up. It applies from the next frame the engine sends: a WQE already executed was
//! delivered under the old setting, so toggling between runs loses nothing. Flow control
//! follows the frames: a looping port pauses on its own RQs (see below).
//!
//! # BAR0 layout (chosen by this model)
//!
//! * Page 0 holds the registers a VF has: 0x08 the doorbell page base (a u64 as two u32
//!   reads, low at 0x08, high at 0x0C) = [`DB_PAGE_BASE`], 0x10 the doorbell page size =
//!   [`DB_PAGE_SIZE`], 0x18 the SMC window's offset (a u64, high at 0x1C) = [`SMC_BASE`], and
//!   the SMC window itself (eight dwords, see below).
//! * Doorbell page p is at `DB_PAGE_BASE + p * DB_PAGE_SIZE` ([`DB_PAGES`] pages), with the
//!   queue offsets of spec D.3: SQ 0x000, RQ 0x400, CQ 0x800, EQ 0xFF8. Each doorbell is one
//!   64-bit little-endian write of `union gdma_doorbell_entry`. Port p's queues use page p
//!   until GDMA_REGISTER_DEVICE, then page [`MANA_DB_ID`]; the HWC's use page [`HWC_DB_ID`].
//!
//! A doorbell naming a queue that does not use the page counts in the page's port's
//! [`PortCounters::bad_doorbells`]; any other unknown access counts in [`Device::bad_mmio`].
//! **An RQ doorbell with a non-zero `wqe_cnt` is a device error**: it is counted in
//! [`PortCounters::rq_db_wqe_cnt_errors`] and ignored (spec D.6: the hardware requires 0). An
//! SQ/RQ `tail_ptr` more than the queue size ahead of the device's consumer offset, or not a
//! multiple of 32, is counted in [`PortCounters::db_invalid`] and ignored.
//!
//! # Control path through the hardware channel ([`hwc`](self))
//!
//! The device side of 6.12's `shm_channel.c`, `hw_channel.c` and the GDMA/MANA requests
//! (`gdma.h`, `mana.h`), with layouts read from the headers independently of `dp::mana`.
//!
//! **Registers.** 0x08/0x0C `GDMA_REG_DB_PAGE_OFFSET` (64-bit, read as two dwords), 0x10
//! `GDMA_REG_DB_PAGE_SIZE`, 0x18/0x1C `GDMA_REG_SHM_OFFSET` = [`SMC_BASE`]: the SMC window of
//! eight dwords. Writing its last dword hands it to the device (bit 31 reads set, "PF owns")
//! until the next engine run executes the message and writes the response header
//! (direction 1, status: 0 ok, 1 unsupported version/direction/`reset_vf`, 2 bad MSI-X
//! index, 3 wrong state such as ESTABLISH twice). Writes while it is busy are ignored and
//! counted. ESTABLISH_HWC takes the EQ, CQ, RQ and SQ page frames (48 + 4 bits each) and the
//! EQ's MSI-X index; the HWC queues are 4 KiB each; the EQ and CQ start armed (the driver
//! cannot ring them before it knows their ids). The device then writes INIT_EQ_ID_DB (EQ id
//! [`HWC_EQ_ID`], doorbell page [`HWC_DB_ID`]), INIT_DATA for the CQ, RQ and SQ ids, queue
//! depth, max request/response ([`HWC_MAX_MSG`]), [`MAX_NUM_CQS`], pdid and gpa_mkey, and
//! INIT_DONE. DESTROY_HWC takes the HWC down.
//!
//! **HWC.** An SQ doorbell on page [`HWC_DB_ID`] makes the next run execute the posted WQEs:
//! each must be 2 BUs with one SGE, a 24-byte `hwc_tx_oob` naming the HWC SQ and CQ, the
//! HWC memory key and at most 4 KiB; a malformed one stops the HWC SQ with an error CQE
//! (`vendor_err` 1). The request is read from host memory (page lists and indirection
//! tables entry by entry), executed, the SQ completed (`is_sq` = 1) and the response written
//! into the buffer of the next posted HWC RQ WQE, completed with `hwc_rx_oob`
//! (`wqe_offset`, `tx_oob_data_size` = the response length). With no RQ WQE posted the
//! response is dropped and counted ([`HwcCounters::no_rx_wqe`]). CQ → EQE → MSI-X follow
//! the arming rules of the data path.
//!
//! **Requests** (codes of `enum gdma_request_type` and `enum mana_command_code`):
//! VERIFY_VF_DRIVER_VERSION, QUERY_MAX_RESOURCES, LIST_DEVICES (HWC and MANA
//! [`MANA_DEV_ID`], with a hole between them), REGISTER_DEVICE (pdid [`MANA_PDID`],
//! gpa_mkey [`MANA_MKEY`], db_id [`MANA_DB_ID`]), DEREGISTER_DEVICE, GENERATE_TEST_EQE,
//! CREATE_QUEUE and DISABLE_QUEUE for EQs (an EQ lives in the rows of the first port with a
//! free slot and serves CQs of every port), CREATE_DMA_REGION / DMA_REGION_ADD_PAGES /
//! DESTROY_DMA_REGION (4 KiB pages that must be contiguous: the model keeps one base
//! address; a queue created over a region owns it until the queue is destroyed),
//! MANA_QUERY_DEV_CONFIG (v1 or v2 response), MANA_QUERY_VPORT_CONFIG (vport p = port p,
//! MAC [`vport_mac`] unless the device host set one with [`Device::set_permanent_mac`], handle [`VPORT_HANDLE_BASE`] + p), MANA_CONFIG_VPORT_TX,
//! MANA_CREATE_WQ_OBJ / MANA_DESTROY_WQ_OBJ (the SQ or RQ and its CQ over two regions),
//! MANA_CONFIG_VPORT_RX (version 2: RX on/off, RSS on/off, default RQ, the hash key received
//! frames are hashed with from the next frame on ([`crate::sim::pkt::RSS_KEY`] until one is
//! given), indirection table of at most [`MAX_RSS`] RQ objects, each field changed only with
//! its `update_*` flag; the hashed fields are fixed: TCP and UDP over IPv4 and IPv6 hash
//! addresses and ports, other IP the addresses, as mana's `rx_hashtype` reports),
//! MANA_FENCE_RQ (an RX_OBJECT_FENCE CQE on the RQ's CQ) and MANA_QUERY_GF_STAT (the sums
//! over all ports of the counters the model keeps; `reported_stats` says which), and
//! rsnic's own requests, for what MANA does not have (codes in a range upstream does not use;
//! advertised in MANA_QUERY_DEV_CONFIG's reserved u16 at 66 as [`RSNIC_CAPS`] while
//! [`Device::set_rsnic_requests`] has them, the default; without them the field is 0 and the
//! codes are unknown, as on a real MANA; an unknown vport is [`STATUS_INVALID_HANDLE`], a
//! flag other than 0 or 1 [`STATUS_INVALID_PARAMETER`]): RSNIC_SET_LOOPBACK (0x2F001: vport 40, enable 48 as 0 or 1;
//! internal loopback), RSNIC_SET_PAUSE (0x2F002: vport 40, rx 48, tx 52, each a u32 0 or 1;
//! the vport's flow control per direction, [`Device::set_pause_rx_tx`]; the response is the
//! header) and RSNIC_QUERY_PAUSE (0x2F003: vport 40; the response's body is rx 32 and tx 36 as
//! u32 0 or 1, then [`PortCounters::tx_pause_frames`] 40 and
//! [`PortCounters::rx_pause_frames`] 48 as u64, 56 bytes in all). Upstream mana has no
//! request for the link's flow control (a VF has no say over it); rsnic's model gives the
//! vport one so the driver's `ethtool -a`/`-A`/`-I -a` have a device to talk to.
//!
//! After REGISTER_DEVICE every queue's doorbells must use page [`MANA_DB_ID`] (before it,
//! port p's queues use page p, as the Rust API's users do).
//!
//! **Statuses** (`gdma_resp_hdr.status`; NTSTATUS values, the convention
//! `GDMA_STATUS_MORE_ENTRIES` = 0x105 comes from; the hardware's own codes are not public).
//! A failure response is only the 32-byte header (`msg_size` 32), with `hwc_msg_id`,
//! `dev_id` and `activity_id` echoed:
//!
//! | status | when |
//! |---|---|
//! | [`STATUS_INVALID_PARAMETER`] 0xC000000D | a request shorter than its header, `hdr_type` ≠ 0, `req.msg_size` ≠ the bytes sent, request and response codes differ, a length that does not match the struct (or its list), a field out of range (sizes, alignment, pdid, doorbell page, TRI_STATE values, MSI-X index) |
//! | [`STATUS_INVALID_DEVICE_REQUEST`] 0xC0000010 | an unknown code |
//! | [`STATUS_REVISION_MISMATCH`] 0xC0000059 | a request version other than 1 (2 for CONFIG_VPORT_RX), protocol or MANA major version not supported |
//! | [`STATUS_NO_SUCH_DEVICE`] 0xC000000E | a `dev_id` that is not the one the request needs (zero/HWC for function-level requests, [`MANA_DEV_ID`] for device and MANA ones) |
//! | [`STATUS_INVALID_DEVICE_STATE`] 0xC0000184 | a MANA request before REGISTER_DEVICE, an SQ object before CONFIG_VPORT_TX |
//! | [`STATUS_INVALID_HANDLE`] 0xC0000008 | an unknown region, vport, WQ object or queue id (also one of another vport) |
//! | [`STATUS_OBJECT_NAME_COLLISION`] 0xC0000035 | REGISTER_DEVICE twice |
//! | [`STATUS_DEVICE_BUSY`] 0x80000011 | destroying a region a queue owns, an EQ with CQs, an RQ in an enabled steering table; DEREGISTER_DEVICE with regions alive; a region used twice |
//! | [`STATUS_INSUFFICIENT_RESOURCES`] 0xC000009A | no free queue slot or region entry |
//! | [`STATUS_NOT_SUPPORTED`] 0xC00000BB | CREATE/DISABLE_QUEUE of a type other than EQ, a page type other than 4K or an offset in page, non-contiguous region pages, CQ moderation, CQE coalescing, more than [`MAX_RSS`] indirection entries |
//! | [`STATUS_BUFFER_TOO_SMALL`] 0xC0000023 | `req.resp.msg_size` smaller than the response |
//!
//! | [`STATUS_INTERNAL_ERROR`] 0xC00000E5 | an injected failure ([`Device::fail_request`], the device host's `cmd_fail` knob) |
//!
//! [`Device::hwc_fail`] makes a chosen code fail with a chosen status (fault injection).
//!
//! # Control path (Rust API)
//!
//! [`Device::create_eq`], [`Device::create_cq`], [`Device::create_sq`], [`Device::create_rq`]
//! (queue memory: a power of two ≥ 4 KiB for SQ/RQ; `num` entries for CQ/EQ), their
//! `destroy_*`, [`Device::set_rss`], [`Device::set_link`], [`Device::set_pause`],
//! [`Device::set_loopback`]. Ids are `base + port * 16 + slot` ([`SQ_ID_BASE`], [`RQ_ID_BASE`],
//! [`CQ_ID_BASE`], [`EQ_ID_BASE`]). Storage is the caller's ([`Port`], [`QueueSet`], scratch
//! bytes); nothing allocates, nothing panics.
//!
//! # Engine ([`Device::process`], [`Device::process_budget`])
//!
//! A register write only latches state (SQ/RQ tail, arm request); the engine does the work,
//! as the hardware does asynchronously. [`Device::process`] runs until no SQ that is not
//! paused (or held by [`Fault::TxStall`] or [`Fault::DevStop`]) has work; [`Device::process_budget`] executes at most a budget of TX WQEs and says
//! whether work is left (for a caller that runs the model on a workqueue and yields between
//! runs). Each run first evaluates the latched CQ/EQ arm requests (also with a budget of 0).
//! SQs with work are served round robin in the order (port, slot), [`SQ_BURST`] WQEs at a
//! time; the position, including the part of a burst already used, persists across runs, so
//! a series of budgeted runs executes the WQEs in the same order, and writes the same CQEs,
//! EQEs, interrupts and counters, as one unbudgeted run.
//!
//! **Flow control** (802.3x global pause per port and direction: RX pause "honour PAUSE",
//! TX pause "send PAUSE"; both off after creation, [`Device::set_pause`] sets both,
//! [`Device::set_pause_rx_tx`] and RSNIC_SET_PAUSE each). A model of PAUSE frames sent by a
//! receiver short of buffers, as in [`crate::sim::mlx5`]: for a port p with a receiver for its
//! frames (the peer with both links up, or p itself in loopback whatever the links), before
//! each TX WQE of p the device checks every usable RQ (created, not in error) in the
//! receiver's RSS table; if one has fewer than `min(`[`PAUSE_THRESHOLD`]`, wqes / 2)` posted
//! WQEs and the receiver's TX pause is on, the receiver sends p a PAUSE frame, counted in the
//! receiver's [`PortCounters::tx_pause_frames`] and p's [`PortCounters::rx_pause_frames`]. p
//! honours it if its RX pause is on: the SQ does not execute the WQE, pauses and counts
//! [`PortCounters::tx_pause`]; otherwise the frame goes out and the receiver drops what it has
//! no WQE for. A PAUSE covers p until the next register write (a pause quantum): a receiver
//! sends at most one to each sender between two register writes, and none once it has room.
//! Posted WQEs are `(tail_ptr − consumer offset) / 32` and `wqes` is the ring size / 32, i.e.
//! WQEs are counted as 1-BU WQEs (the driver's 1-SGE RX WQEs; larger WQEs make the count
//! optimistic). Since RX doorbells carry only `tail_ptr` (`wqe_cnt` = 0), the device learns of
//! re-posted WQEs only at a doorbell: a paused SQ stays paused, and the engine reports no work
//! for it, until the next register write (or [`Device::set_pause`], [`Device::set_link`],
//! [`Device::set_loopback`], [`Device::set_rss`], [`Device::destroy_rq`]); the run after it
//! retries the SQ. A looping port that pauses on itself cannot deadlock: its receive side never
//! waits for its transmit side, and the RQ doorbell of the driver's refill ends the pause. The
//! check is per WQE: a TSO WQE whose segments outnumber the posted WQEs still overruns the RQ.
//! Stall prevention is the receiver's: after [`PAUSE_STORM`] PAUSE frames in a row (a receiver
//! that stopped posting, such as an AF_XDP socket whose fill ring stays empty) it stops
//! sending them until it has room again, counted in its [`PortCounters::tx_pause_storms`];
//! what it has no WQE for is then dropped (`hc_rx_discards_no_wqe`). With the receiver's TX
//! pause or the sender's RX pause off, a link down or an empty receiver RSS table, nothing
//! pauses and packets are dropped and counted as described here.
//!
//! **SQ.** After a doorbell, WQEs from the device's consumer offset to `tail_ptr` are
//! executed in order. The device reads the first BU (header and inline OOB), then the rest of
//! the WQE (the SGL wraps to the ring start). Structural checks: `num_sge` 1..=30, inline OOB
//! 8 or 24 bytes, WQE ≤ 512 bytes and fully posted. A structural failure leaves the device
//! unable to find the next WQE: it writes one error CQE (HDR_PROCESSING_ERROR, `vendor_err` =
//! [`WqeError`] code), counts `hc_tx_err_gdma` and puts the SQ in error (it stops). Every other
//! failure gets an error CQE for that WQE and the SQ goes on: OOB checks (`pkt_fmt` matching
//! the OOB size, `vcq_num` = the SQ's CQ, `suppress_txcqe_gen` = 0, OOB_IN_SGL with ≥ 2 SGEs)
//! → INVALID_OOB (`hc_tx_err_inval_oob`); an SGE of size 0, under a `mem_key` other than
//! the device's ([`MANA_MKEY`], REGISTER_DEVICE's `gpa_mkey`; counted in
//! [`PortCounters::mkey_errors`]) or at an unreadable address → HDR_PROCESSING_ERROR
//! (`hc_tx_err_gdma`); a frame shorter than 14 bytes or checksum/TSO
//! requests that do not match the parsed headers → HDR_PROCESSING_ERROR; a frame (or TSO
//! segment) longer than [`MAX_FRAME`] → MTU_DROP (`hc_tx_err_mtu_violation`).
//!
//! Offloads: `comp_tcp_csum` / `comp_udp_csum` fill the TCP/UDP checksum (for TCP the
//! parsed header must be at `trans_off`; for UDP the device finds the header itself and
//! ignores `trans_off`, which upstream mana leaves 0 there), `comp_iphdr_csum` the IPv4
//! header checksum. TSO
//! (`client_data_unit` = MSS ≠ 0 with `client_oob_in_sgl`): SGE0 must hold exactly the
//! Ethernet/IP/TCP headers (`last_vbytes` = SGE0's size), the payload is cut into MSS pieces
//! and each segment's lengths, IPv4 ID, sequence number, flags and checksums are fixed
//! ([`crate::sim::pkt::fix_segment`]). The long OOB's `inject_vlan_pri_tag` inserts an 802.1Q
//! tag (pcp, dei, vlan_id) after the MACs. Frames are zero-padded to 60 bytes on the wire.
//! Every WQE gets exactly one TX CQE (TX_OKAY or the error type; `tx_wqe_offset` = the
//! WQE's BU index in the ring, `wq_num` = SQ id, `is_sq` = 1).
//!
//! **RX.** The receiving port (the peer, or the sender in loopback) picks an RQ with RSS.
//! The chosen RQ must have a posted WQE (consumer offset ≠ the last `tail_ptr`), else the
//! packet is dropped and counted in **`hc_rx_discards_no_wqe`**. The WQE (1..=15
//! SGEs, inline OOB 0 or 8 bytes, ≤ 256 bytes) is read, the packet scattered over its SGEs
//! and an RX CQE written: RX_OKAY with `ppi[0].pkt_len`, `pkt_hash`, the NDIS hash type
//! (bits: IPv4 0, TCP/IPv4 1, UDP/IPv4 2, IPv6 3, TCP/IPv6 4, UDP/IPv6 5 — the model's
//! assignment), IP/TCP/UDP checksum ok/fail as verified (an IPv6 header, which has no checksum, reports IP ok), `rx_wqe_offset` = the WQE's byte
//! offset; an outer 802.1Q tag (TPID 0x8100) is stripped (the host gets the frame without
//! it, `pkt_len` 4 less) and its VLAN id reported (`rx_vlantag_present`, `rx_vlan_id`), as
//! mana's fixed NETIF_F_HW_VLAN_CTAG_RX and mana_rx_skb say the hardware does (the byte
//! counters count the frame as it came); or RX_TRUNCATED when the SGEs are too small or one is under another key than
//! [`MANA_MKEY`] (nothing is written; the WQE is consumed). A malformed RX
//! WQE drops the packet, counts `rx_wqe_errors` and puts the RQ in error (no CQE: the device
//! cannot trust the WQE's size).
//!
//! **CQ/EQ.** The CQE with 0-based producer index `i` goes to slot `i mod num` with owner
//! bits `(i / num + 1) & 7` (consumers start at `head = num`, so zeroed memory is empty). The
//! device does not check CQ room (the driver sizes CQs for one CQE per WQE), but counts
//! [`PortCounters::cq_db_overdue`] when more than 8 × num CQEs are written without a CQ
//! doorbell (the hardware's "one CQ doorbell per 8 wraps"). A CQ doorbell with arm = 1 arms
//! it; an armed CQ posts one EQE (type COMPLETION, `details[0]` = CQ id) to its EQ as soon as
//! its producer index differs from the armed `tail_ptr` (a new CQE, or CQEs already pending),
//! then disarms. EQEs use the same owner rule; an armed EQ raises its MSI-X vector for the
//! next EQE (or at arm time if EQEs are pending) and disarms.
//!
//! **Faults** ([`Device::inject`], for tests of the driver): an error CQE of a chosen type
//! for the next TX WQE (the packet is not sent, the SQ goes on), RX_TRUNCATED for the next
//! received frame, lost interrupts (the EQ disarms, the vector is not raised) and a
//! completion EQE naming a CQ id no CQ has ([`BAD_CQ_ID`]), a fault on the next read of packet
//! data (the WQE completes with HDR_PROCESSING_ERROR), a TX or RX CQE naming a WQ id no WQ has
//! ([`BAD_WQ_ID`]), a TX CQE with owner bits four passes off ([`BAD_OWNER_XOR`]: the driver
//! reads a CQ overflow). Each applies once and counts in [`PortCounters::faults_injected`] when it
//! takes effect. Two last until the driver destroys a WQ object of the port (an SQ for the
//! first; MANA has no queue reset, its driver re-creates the queues): a hung transmit engine
//! ([`Fault::TxStall`]: SQ doorbells are accepted, nothing is executed) and a hung data path
//! ([`Fault::DevStop`]: nothing executed, frames arriving dropped and counted in
//! [`PortCounters::rx_stopped`], no CQE, no EQE, no interrupt for the port's queues, while the
//! HWC goes on answering). [`Device::fail_request`] makes every request of a type fail with
//! [`STATUS_INTERNAL_ERROR`] until it is called with `None`.
//!
//! **PCIe accounting** ([`crate::sim::pcie`], per port): doorbells inbound (8 B each); WQE and
//! packet-data reads as DMA reads; received data as DMA writes; CQEs as 64-byte writes; EQEs
//! as 16-byte DMA writes; MSI-X as 4-byte writes. [`PortCounters::tx_floor_in_bytes`] sums
//! [`crate::sim::pcie::inbound_floor`] over the host bytes of every sent packet.

mod engine;
mod hwc;

pub use hwc::vport_mac;
pub use hwc::RSNIC_CAPS;
pub use hwc::{HwcCounters, Region, Steer};
pub use hwc::{HWC_CQ_ID, HWC_DB_ID, HWC_DEV_ID, HWC_EQ_ID, HWC_MAX_MSG, HWC_MKEY, HWC_PDID};
pub use hwc::{HWC_QUEUE_DEPTH, HWC_RQ_ID, HWC_SQ_ID, MANA_DB_ID, MANA_DEV_ID, MANA_MKEY};
pub use hwc::{MANA_PDID, MAX_MSIX, MAX_NUM_CQS, REGIONS_PER_ROW, SMC_BASE, VPORT_HANDLE_BASE};
pub use hwc::{STATUS_BUFFER_TOO_SMALL, STATUS_DEVICE_BUSY, STATUS_INSUFFICIENT_RESOURCES};
pub use hwc::{STATUS_INTERNAL_ERROR, STATUS_INVALID_DEVICE_REQUEST};
pub use hwc::{STATUS_INVALID_DEVICE_STATE, STATUS_INVALID_HANDLE};
pub use hwc::{STATUS_INVALID_PARAMETER, STATUS_NOT_SUPPORTED, STATUS_NO_SUCH_DEVICE};
pub use hwc::{STATUS_OBJECT_NAME_COLLISION, STATUS_REVISION_MISMATCH, STATUS_SUCCESS};

use crate::dp::hw::{BusMemory, DmaAddr, InterruptSink};
use crate::sim::pcie::PcieCounters;
use crate::sim::wire::{self, PauseEvent, WirePort};
use core::ops::DerefMut;

/// SQs, RQs, CQs and EQs per port (a driver channel with AF_XDP zero-copy has two SQs, two
/// RQs and four CQs; the queue bitmaps of a [`Port`] are 32 bits wide).
pub const MAX_QUEUES: usize = 32;
/// Maximum entries of a port's RSS table.
pub const MAX_RSS: usize = 64;
/// Maximum number of ports.
pub const MAX_PORTS: usize = 64;
/// BAR0 offset of port 0's doorbell page (register 0x08 reads it).
pub const DB_PAGE_BASE: u32 = 0x1000;
/// Size of a doorbell page (register 0x10 reads it).
pub const DB_PAGE_SIZE: u32 = 0x1000;
/// Register: doorbell page base, low 32 bits (VF layout).
pub const REG_DB_PAGE_BASE: u32 = 0x08;
/// Register: doorbell page size.
pub const REG_DB_PAGE_SIZE: u32 = 0x10;
/// Register: BAR0 offset of the SMC window, low 32 bits (`GDMA_REG_SHM_OFFSET`; 0x1C reads
/// the high half, 0).
pub const REG_SHM_OFFSET: u32 = 0x18;
/// Doorbell pages in BAR0 (page p at `DB_PAGE_BASE + p * DB_PAGE_SIZE`).
pub const DB_PAGES: u32 = MAX_PORTS as u32;
/// SQ doorbell offset in a page.
pub const DB_SQ: u32 = 0x000;
/// RQ doorbell offset in a page.
pub const DB_RQ: u32 = 0x400;
/// CQ doorbell offset in a page.
pub const DB_CQ: u32 = 0x800;
/// EQ doorbell offset in a page.
pub const DB_EQ: u32 = 0xFF8;
/// First SQ id.
pub const SQ_ID_BASE: u32 = 0x1000;
/// First RQ id.
pub const RQ_ID_BASE: u32 = 0x2000;
/// First CQ id.
pub const CQ_ID_BASE: u32 = 0x3000;
/// First EQ id (EQ ids are 16 bits).
pub const EQ_ID_BASE: u32 = 0x4000;
/// Largest frame (without FCS) sent or received.
pub const MAX_FRAME: usize = 9728;
/// Minimum scratch for [`Device::new`]: an output frame and a gather buffer of one frame.
pub const MIN_SCRATCH: usize = 2 * MAX_FRAME;
/// Scratch that lets TSO carry a 64 KiB payload plus headers.
pub const SCRATCH_LEN: usize = MAX_FRAME + 65536 + 1024;
/// WQEs one SQ executes before the engine moves to the next.
pub const SQ_BURST: usize = 64;
/// Flow control's thresholds (the model's pause quantum lasts until the next register
/// write): see [`crate::sim::wire`].
pub use crate::sim::wire::{PAUSE_STORM, PAUSE_THRESHOLD};

/// Doorbell BAR0 offset of `reg` (one of the `DB_*` offsets) on `port`.
pub const fn doorbell_offset(port: usize, reg: u32) -> u32 {
    DB_PAGE_BASE + port as u32 * DB_PAGE_SIZE + reg
}

/// Why a control-path command failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmdError {
    /// No such port.
    BadPort,
    /// A parameter is out of range or misaligned.
    BadParam,
    /// The port's table is full.
    NoResources,
    /// No such queue (or one of another port).
    NoSuchQueue,
    /// The queue is still used.
    Busy,
}

/// Why the device rejected a TX WQE; the code goes to the CQE's `vendor_err`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WqeError {
    /// `num_sge` is 0 or above the maximum.
    BadNumSge = 1,
    /// The inline OOB size is not allowed.
    BadOobSize,
    /// The WQE is larger than the maximum or than what was posted.
    BadSize,
    /// `pkt_fmt` does not match the OOB size.
    BadPktFmt,
    /// `vcq_num` is not the SQ's CQ.
    BadVcq,
    /// `suppress_txcqe_gen` is set (the model always completes).
    SuppressCqe,
    /// OOB_IN_SGL with fewer than 2 SGEs.
    OobInSgl,
    /// An SGE of size 0.
    ZeroSge,
    /// An SGE address is not readable.
    ReadFault,
    /// Shorter than an Ethernet header.
    TooShort,
    /// Longer than [`MAX_FRAME`] (or the gather buffer).
    TooLong,
    /// A checksum request that does not match the headers.
    Csum,
    /// A TSO request that does not match the headers or SGE0.
    Tso,
    /// An SGE whose `mem_key` is not the device's (`gpa_mkey` of REGISTER_DEVICE): the
    /// device cannot read host memory through it.
    BadMkey,
}

impl WqeError {
    /// The TX CQE type reporting it.
    pub fn cqe_type(self) -> u8 {
        match self {
            Self::BadPktFmt | Self::BadVcq | Self::SuppressCqe | Self::OobInSgl => 35,
            Self::TooLong => 34,
            _ => 37,
        }
    }
}

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

#[derive(Clone, Copy)]
struct WqCtx {
    used: bool,
    error: bool,
    buf: DmaAddr,
    size: u32,
    cq: u8,
    /// Consumer byte offset (free-running).
    cons: u32,
    /// Producer byte offset from the last accepted doorbell.
    tail: u32,
}

impl WqCtx {
    const EMPTY: Self = Self {
        used: false,
        error: false,
        buf: 0,
        size: 0,
        cq: 0,
        cons: 0,
        tail: 0,
    };
}

#[derive(Clone, Copy)]
struct CqCtx {
    used: bool,
    buf: DmaAddr,
    num: u32,
    /// The EQ it reports to: its global row index (`port * MAX_QUEUES + slot`; an EQ created
    /// through the HWC may live in another port's rows).
    eq: Option<u16>,
    /// CQEs written (0-based producer index).
    pi: u32,
    armed: bool,
    arm_tail: u32,
    since_db: u32,
    users: u8,
}

impl CqCtx {
    const EMPTY: Self = Self {
        used: false,
        buf: 0,
        num: 0,
        eq: None,
        pi: 0,
        armed: false,
        arm_tail: 0,
        since_db: 0,
        users: 0,
    };
}

#[derive(Clone, Copy)]
struct EqCtx {
    used: bool,
    buf: DmaAddr,
    num: u32,
    vector: u16,
    pi: u32,
    armed: bool,
    arm_tail: u32,
    /// CQs reporting to it (of any port).
    users: u16,
}

impl EqCtx {
    const EMPTY: Self = Self {
        used: false,
        buf: 0,
        num: 0,
        vector: 0,
        pi: 0,
        armed: false,
        arm_tail: 0,
        users: 0,
    };
}

/// One row of the queue tables (an SQ, an RQ, a CQ and an EQ context). A device needs
/// [`MAX_QUEUES`] per port; slot i of port p is entry `p * MAX_QUEUES + i`.
#[derive(Clone, Copy)]
pub struct QueueSet {
    sq: WqCtx,
    rq: WqCtx,
    cq: CqCtx,
    eq: EqCtx,
    /// A share of the device's DMA region table (GDMA_CREATE_DMA_REGION).
    regions: [Region; REGIONS_PER_ROW],
}

impl QueueSet {
    /// An unused row.
    pub const EMPTY: Self = Self {
        sq: WqCtx::EMPTY,
        rq: WqCtx::EMPTY,
        cq: CqCtx::EMPTY,
        eq: EqCtx::EMPTY,
        regions: [Region::EMPTY; REGIONS_PER_ROW],
    };
}

impl Default for QueueSet {
    fn default() -> Self {
        Self::EMPTY
    }
}

/// State of one port: link, RSS table, pending work, counters.
pub struct Port {
    link_up: bool,
    rss: [u8; MAX_RSS],
    rss_len: usize,
    /// The Toeplitz key received frames are hashed with (the vport's, as CONFIG_VPORT_RX
    /// last set it; [`crate::sim::pkt::RSS_KEY`] before).
    rss_key: [u8; 40],
    /// SQs with posted work.
    sq_work: u32,
    /// SQs paused by flow control until the next register write.
    sq_paused: u32,
    /// Flow control (RSNIC_SET_PAUSE `rx`, `tx`; the pause quantum lasts until the next
    /// register write).
    pause: wire::Pause,
    /// Deliver transmitted frames to this port's own receive side ([`Device::set_loopback`]).
    loopback: bool,
    /// CQs with an arm to evaluate.
    cq_arm: u32,
    /// EQs with an arm to evaluate.
    eq_arm: u32,
    counters: PortCounters,
    /// MANA_CONFIG_VPORT_TX configured the vport.
    vport_tx: bool,
    /// RX steering as MANA_CONFIG_VPORT_RX set it.
    steer: Steer,
    /// The vport's permanent MAC ([`Device::set_permanent_mac`]; `None`: [`vport_mac`]).
    mac: Option<[u8; 6]>,
    /// Faults waiting to take effect ([`Device::inject`]).
    pub(super) faults: Faults,
}

/// A fault for [`Device::inject`], for tests of the driver's handling of device errors. Each
/// applies once, to the next event of its kind on the port, and counts in
/// [`PortCounters::faults_injected`] when it takes effect; [`Fault::TxStall`] and
/// [`Fault::DevStop`] last until the driver destroys a WQ object of the port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The next WQE any SQ of the port executes completes with a CQE of this type (1..=63
    /// but not TX_OKAY, 32: a TX error type 33..=41 or one the driver does not know) and
    /// `vendor_err` 0; the packet is not sent
    /// and the SQ goes on, as for a WQE the device refuses.
    TxErrCqe(u8),
    /// The next frame the port receives into an RQ completes with RX_TRUNCATED (MANA's RX
    /// error CQE): the WQE is consumed, nothing is delivered.
    RxTruncated,
    /// The next N interrupts of the port's channel EQs (completion events and EQ arms) are
    /// lost: the EQ disarms as if it had fired and its vector is not raised.
    DropIrqs(u32),
    /// The next completion EQE of the port names a CQ id that no CQ has (a corrupt EQE).
    EqeBadCq,
    /// The next read of packet data by an SQ of the port faults (as an unmapped address
    /// would): that WQE completes with HDR_PROCESSING_ERROR, the SQ goes on.
    DmaReadFault,
    /// The port's SQs execute nothing (their doorbells are accepted; no WQE executed, no
    /// CQE) until an SQ of the port is destroyed (MANA_DESTROY_WQ_OBJ, or
    /// [`Device::destroy_sq`]): a hung transmit engine. As ConnectX's, whose reset clears it;
    /// not counted in [`PortCounters::faults_injected`] (ConnectX's is not either). The
    /// other SQs' WQEs execute after the destruction.
    TxStall,
    /// The next TX CQE of the port (good or error) names WQ id [`BAD_WQ_ID`] (a corrupt CQE);
    /// otherwise it is what it would have been.
    TxBadWqId,
    /// The next TX CQE the port writes (good or error) carries owner bits that are neither
    /// its pass's nor the next pass's: its pass's XOR [`BAD_OWNER_XOR`], four passes away (a
    /// corrupt CQE). The driver (spec D.4, `mana_gd_read_cqe`) reads the previous pass's
    /// count as "not yet valid" and any other than its pass's as an overflow: this one is
    /// an overflow. Otherwise the CQE is what it would have been; counted in
    /// [`PortCounters::faults_injected`] when written (a stopped port holds it back).
    TxBadOwner,
    /// The next RX CQE of a frame the port receives (RX_OKAY or RX_TRUNCATED; not the
    /// fence's) names WQ id [`BAD_WQ_ID`] (a corrupt CQE).
    RxBadWqId,
    /// The port's whole data path hangs: no WQE of any of its SQs is executed (doorbells are
    /// accepted), frames arriving at the port are dropped and counted in
    /// [`PortCounters::rx_stopped`], no CQE is written to its CQs (MANA_FENCE_RQ's neither),
    /// no completion EQE posted for them, no CQ or EQ arm of the port evaluated (it waits),
    /// no interrupt raised, until a WQ object of the port (an SQ or an RQ) is destroyed.
    /// The HWC goes on (requests, responses, their EQEs, and GENERATE_TEST_EQE's test
    /// event: the control path is alive). Counted in [`PortCounters::faults_injected`] once,
    /// the first time the port holds something back (a WQE, a frame, a CQE).
    DevStop,
}

/// The faults waiting on a port.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Faults {
    pub(super) tx_err: Option<u8>,
    pub(super) rx_trunc: bool,
    pub(super) drop_irqs: u32,
    pub(super) eqe_bad_cq: bool,
    pub(super) dma_read: bool,
    /// The SQs execute nothing ([`Fault::TxStall`]).
    pub(super) tx_stall: bool,
    pub(super) tx_bad_wq: bool,
    pub(super) tx_bad_owner: bool,
    pub(super) rx_bad_wq: bool,
    /// The data path is stopped ([`Fault::DevStop`]).
    pub(super) dev_stop: bool,
    /// The stop held something back (it was counted).
    pub(super) dev_stop_hit: bool,
}

/// CQ id a corrupt completion EQE names ([`Fault::EqeBadCq`]): no CQ of the device has it.
pub const BAD_CQ_ID: u32 = 0x00ff_fffe;
/// WQ id a corrupt TX or RX CQE names ([`Fault::TxBadWqId`], [`Fault::RxBadWqId`]): no SQ or
/// RQ of the device (nor the HWC's) has it.
pub const BAD_WQ_ID: u32 = 0x00ff_fffd;
/// What a corrupt TX CQE's owner bits ([`Fault::TxBadOwner`]) are XORed with: the top bit
/// of the 3-bit owner count, so the count is four passes away from the right one (e.g. 5
/// instead of 1 on the first pass), which the driver reads as an overflow.
pub const BAD_OWNER_XOR: u32 = 4;

impl Default for Port {
    fn default() -> Self {
        Self::new()
    }
}

impl WirePort for Port {
    fn loopback(&self) -> bool {
        self.loopback
    }

    fn link_up(&self) -> bool {
        self.link_up
    }

    fn pause(&self) -> &wire::Pause {
        &self.pause
    }

    fn pause_mut(&mut self) -> &mut wire::Pause {
        &mut self.pause
    }

    fn count(&mut self, e: PauseEvent) {
        let c = &mut self.counters;
        match e {
            PauseEvent::Storm => c.tx_pause_storms += 1,
            PauseEvent::Sent => c.tx_pause_frames += 1,
            PauseEvent::Received => c.rx_pause_frames += 1,
        }
    }
}

impl Port {
    /// A port with link up, flow control off (both directions) and no queues.
    pub fn new() -> Self {
        Self {
            link_up: true,
            rss: [0; MAX_RSS],
            rss_len: 0,
            rss_key: crate::sim::pkt::RSS_KEY,
            sq_work: 0,
            sq_paused: 0,
            pause: wire::Pause::new(false),
            loopback: false,
            cq_arm: 0,
            eq_arm: 0,
            counters: PortCounters::default(),
            vport_tx: false,
            steer: Steer::EMPTY,
            mac: None,
            faults: Faults {
                tx_err: None,
                rx_trunc: false,
                drop_irqs: 0,
                eqe_bad_cq: false,
                dma_read: false,
                tx_stall: false,
                tx_bad_wq: false,
                tx_bad_owner: false,
                rx_bad_wq: false,
                dev_stop: false,
                dev_stop_hit: false,
            },
        }
    }

    /// Whether the port's data path is stopped ([`Fault::DevStop`]).
    fn stopped(&self) -> bool {
        self.faults.dev_stop
    }

    /// The stopped port held something back: the fault took effect (counted once).
    fn stop_hit(&mut self) {
        if !self.faults.dev_stop_hit {
            self.faults.dev_stop_hit = true;
            self.counters.faults_injected += 1;
        }
    }

    /// A WQ object of the port was destroyed (`sq`: an SQ): the driver's recovery ends a
    /// stop, and a stall if it was an SQ.
    fn wq_destroyed(&mut self, sq: bool) {
        if sq {
            self.faults.tx_stall = false;
        }
        self.faults.dev_stop = false;
        self.faults.dev_stop_hit = false;
    }
}

/// The simulated device. `P` holds the ports, `Q` the queue tables (`ports.len() *
/// MAX_QUEUES` rows), `B` scratch (at least [`MIN_SCRATCH`] bytes, [`SCRATCH_LEN`] for
/// 64 KiB TSO).
pub struct Device<P, Q, B> {
    ports: P,
    queues: Q,
    scratch: B,
    bad_mmio: u64,
    rr: Cursor,
    hwc: hwc::HwcDev,
}

/// The engine's round-robin position, kept across runs so that budgeted runs serve the SQs
/// in the same order as one unbudgeted run.
#[derive(Clone, Copy, Default)]
struct Cursor {
    /// Global index (`port * MAX_QUEUES + slot`) of the SQ served next.
    next: usize,
    /// WQEs of that SQ's current burst already executed.
    used: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Sq,
    Rq,
    Cq,
    Eq,
}

fn base(k: Kind) -> u32 {
    match k {
        Kind::Sq => SQ_ID_BASE,
        Kind::Rq => RQ_ID_BASE,
        Kind::Cq => CQ_ID_BASE,
        Kind::Eq => EQ_ID_BASE,
    }
}

fn split_id(id: u32, k: Kind) -> Option<(usize, usize)> {
    let rel = id.checked_sub(base(k))? as usize;
    let port = rel / MAX_QUEUES;
    (port < MAX_PORTS).then_some((port, rel % MAX_QUEUES))
}

fn make_id(k: Kind, port: usize, slot: usize) -> u32 {
    base(k) + (port * MAX_QUEUES + slot) as u32
}

fn used(r: &QueueSet, k: Kind) -> bool {
    match k {
        Kind::Sq => r.sq.used,
        Kind::Rq => r.rq.used,
        Kind::Cq => r.cq.used,
        Kind::Eq => r.eq.used,
    }
}

impl<P, Q, B> Device<P, Q, B>
where
    P: DerefMut<Target = [Port]>,
    Q: DerefMut<Target = [QueueSet]>,
    B: DerefMut<Target = [u8]>,
{
    /// A device with `ports.len()` ports (1..=[`MAX_PORTS`]).
    pub fn new(ports: P, queues: Q, scratch: B) -> Result<Self, CmdError> {
        if ports.is_empty()
            || ports.len() > MAX_PORTS
            || queues.len() < ports.len() * MAX_QUEUES
            || scratch.len() < MIN_SCRATCH
        {
            return Err(CmdError::BadParam);
        }
        Ok(Self {
            ports,
            queues,
            scratch,
            bad_mmio: 0,
            rr: Cursor::default(),
            hwc: hwc::HwcDev::new(),
        })
    }

    /// Number of ports.
    pub fn num_ports(&self) -> usize {
        self.ports.len()
    }

    fn row(&self, port: usize, slot: usize) -> Option<&QueueSet> {
        if slot >= MAX_QUEUES || port >= self.ports.len() {
            return None;
        }
        self.queues.get(port * MAX_QUEUES + slot)
    }

    fn row_mut(&mut self, port: usize, slot: usize) -> Option<&mut QueueSet> {
        if slot >= MAX_QUEUES || port >= self.ports.len() {
            return None;
        }
        self.queues.get_mut(port * MAX_QUEUES + slot)
    }

    fn loc(&self, id: u32, k: Kind) -> Result<(usize, usize), CmdError> {
        let (p, s) = split_id(id, k).ok_or(CmdError::NoSuchQueue)?;
        match self.row(p, s) {
            Some(r) if used(r, k) => Ok((p, s)),
            _ => Err(CmdError::NoSuchQueue),
        }
    }

    fn alloc(&mut self, port: usize, k: Kind) -> Result<usize, CmdError> {
        if port >= self.ports.len() {
            return Err(CmdError::BadPort);
        }
        (0..MAX_QUEUES)
            .find(|&s| self.row(port, s).is_some_and(|r| !used(r, k)))
            .ok_or(CmdError::NoResources)
    }

    /// Creates an EQ of `num` 16-byte entries (a power of two, 2..=2^16) at `buf` that raises
    /// MSI-X `vector`. It starts disarmed: the driver arms it with an EQ doorbell.
    pub fn create_eq(
        &mut self,
        port: usize,
        buf: DmaAddr,
        num: u32,
        vector: u16,
    ) -> Result<u32, CmdError> {
        if !num.is_power_of_two() || !(2..=1 << 16).contains(&num) || buf % 16 != 0 {
            return Err(CmdError::BadParam);
        }
        let s = self.alloc(port, Kind::Eq)?;
        let r = self.row_mut(port, s).ok_or(CmdError::NoSuchQueue)?;
        r.eq = EqCtx {
            used: true,
            buf,
            num,
            vector,
            ..EqCtx::EMPTY
        };
        Ok(make_id(Kind::Eq, port, s))
    }

    /// Creates a CQ of `num` 64-byte entries (a power of two, 2..=2^24) at `buf`, reporting
    /// to EQ `eq` (of the same port) if given.
    pub fn create_cq(
        &mut self,
        port: usize,
        buf: DmaAddr,
        num: u32,
        eq: Option<u32>,
    ) -> Result<u32, CmdError> {
        if !num.is_power_of_two() || !(2..=1 << 24).contains(&num) || buf % 64 != 0 {
            return Err(CmdError::BadParam);
        }
        let eq = match eq {
            Some(id) => match self.loc(id, Kind::Eq)? {
                (p, _) if p == port => Some(id),
                _ => return Err(CmdError::NoSuchQueue),
            },
            None => None,
        };
        self.create_cq_on(port, buf, num, eq)
    }

    /// Creates a CQ reporting to EQ `eq` of any port (the HWC path: MANA EQs are shared by
    /// the vports).
    fn create_cq_on(
        &mut self,
        port: usize,
        buf: DmaAddr,
        num: u32,
        eq: Option<u32>,
    ) -> Result<u32, CmdError> {
        if !num.is_power_of_two() || !(2..=1 << 24).contains(&num) || buf % 64 != 0 {
            return Err(CmdError::BadParam);
        }
        let eq = match eq {
            Some(id) => {
                let (p, s) = self.loc(id, Kind::Eq)?;
                Some(p * MAX_QUEUES + s)
            }
            None => None,
        };
        let s = self.alloc(port, Kind::Cq)?;
        if let Some(g) = eq {
            if let Some(r) = self.queues.get_mut(g) {
                r.eq.users = r.eq.users.saturating_add(1);
            }
        }
        let r = self.row_mut(port, s).ok_or(CmdError::NoSuchQueue)?;
        r.cq = CqCtx {
            used: true,
            buf,
            num,
            eq: eq.map(|g| g as u16),
            ..CqCtx::EMPTY
        };
        Ok(make_id(Kind::Cq, port, s))
    }

    fn create_wq(
        &mut self,
        k: Kind,
        port: usize,
        buf: DmaAddr,
        size: u32,
        cq: u32,
    ) -> Result<u32, CmdError> {
        if !size.is_power_of_two() || size < 4096 || buf % 4096 != 0 {
            return Err(CmdError::BadParam);
        }
        let c = match self.loc(cq, Kind::Cq)? {
            (p, s) if p == port => s,
            _ => return Err(CmdError::NoSuchQueue),
        };
        let s = self.alloc(port, k)?;
        let ctx = WqCtx {
            used: true,
            buf,
            size,
            cq: c as u8,
            ..WqCtx::EMPTY
        };
        let r = self.row_mut(port, s).ok_or(CmdError::NoSuchQueue)?;
        if k == Kind::Sq {
            r.sq = ctx;
        } else {
            r.rq = ctx;
        }
        if let Some(r) = self.row_mut(port, c) {
            r.cq.users += 1;
        }
        Ok(make_id(k, port, s))
    }

    /// Creates an SQ of `size` bytes (a power of two ≥ 4 KiB, page aligned) completing to CQ
    /// `cq` of the same port.
    pub fn create_sq(
        &mut self,
        port: usize,
        buf: DmaAddr,
        size: u32,
        cq: u32,
    ) -> Result<u32, CmdError> {
        self.create_wq(Kind::Sq, port, buf, size, cq)
    }

    /// Creates an RQ of `size` bytes completing to CQ `cq` of the same port.
    pub fn create_rq(
        &mut self,
        port: usize,
        buf: DmaAddr,
        size: u32,
        cq: u32,
    ) -> Result<u32, CmdError> {
        self.create_wq(Kind::Rq, port, buf, size, cq)
    }

    fn release_cq(&mut self, port: usize, c: usize) {
        if let Some(r) = self.row_mut(port, c) {
            r.cq.users = r.cq.users.saturating_sub(1);
        }
    }

    /// Destroys an SQ; WQEs not executed are abandoned. Ends a [`Fault::TxStall`] or
    /// [`Fault::DevStop`] of its port (the other SQs' posted WQEs execute at the next run).
    pub fn destroy_sq(&mut self, id: u32) -> Result<(), CmdError> {
        let (p, s) = self.loc(id, Kind::Sq)?;
        let c = self.row(p, s).map_or(0, |r| usize::from(r.sq.cq));
        if let Some(r) = self.row_mut(p, s) {
            r.sq = WqCtx::EMPTY;
        }
        self.release_cq(p, c);
        if let Some(pt) = self.ports.get_mut(p) {
            pt.sq_work &= !(1 << s);
            pt.sq_paused &= !(1 << s);
            pt.wq_destroyed(true);
        }
        Ok(())
    }

    /// Destroys an RQ; it leaves the port's RSS table. Ends a [`Fault::DevStop`] of its port.
    pub fn destroy_rq(&mut self, id: u32) -> Result<(), CmdError> {
        let (p, s) = self.loc(id, Kind::Rq)?;
        let c = self.row(p, s).map_or(0, |r| usize::from(r.rq.cq));
        if let Some(r) = self.row_mut(p, s) {
            r.rq = WqCtx::EMPTY;
        }
        self.release_cq(p, c);
        if let Some(pt) = self.ports.get_mut(p) {
            let mut w = 0;
            for i in 0..pt.rss_len.min(MAX_RSS) {
                let e = pt.rss[i];
                if usize::from(e) != s {
                    pt.rss[w] = e;
                    w += 1;
                }
            }
            pt.rss_len = w;
            pt.wq_destroyed(false);
        }
        self.resume();
        Ok(())
    }

    /// Destroys a CQ no queue uses.
    pub fn destroy_cq(&mut self, id: u32) -> Result<(), CmdError> {
        let (p, s) = self.loc(id, Kind::Cq)?;
        let (users, eq) = self.row(p, s).map_or((0, None), |r| (r.cq.users, r.cq.eq));
        if users != 0 {
            return Err(CmdError::Busy);
        }
        if let Some(r) = self.row_mut(p, s) {
            r.cq = CqCtx::EMPTY;
        }
        if let Some(e) = eq.and_then(|g| self.queues.get_mut(usize::from(g))) {
            e.eq.users = e.eq.users.saturating_sub(1);
        }
        if let Some(pt) = self.ports.get_mut(p) {
            pt.cq_arm &= !(1 << s);
        }
        Ok(())
    }

    /// Destroys an EQ no CQ uses.
    pub fn destroy_eq(&mut self, id: u32) -> Result<(), CmdError> {
        let (p, s) = self.loc(id, Kind::Eq)?;
        if self.row(p, s).is_some_and(|r| r.eq.users != 0) {
            return Err(CmdError::Busy);
        }
        if let Some(r) = self.row_mut(p, s) {
            r.eq = EqCtx::EMPTY;
        }
        if let Some(pt) = self.ports.get_mut(p) {
            pt.eq_arm &= !(1 << s);
        }
        Ok(())
    }

    /// Sets a port's RSS table (RQs of that port; empty drops everything).
    pub fn set_rss(&mut self, port: usize, rqs: &[u32]) -> Result<(), CmdError> {
        if rqs.len() > MAX_RSS {
            return Err(CmdError::BadParam);
        }
        let mut t = [0u8; MAX_RSS];
        for (i, &id) in rqs.iter().enumerate() {
            match self.loc(id, Kind::Rq)? {
                (p, s) if p == port => t[i] = s as u8,
                _ => return Err(CmdError::NoSuchQueue),
            }
        }
        let pt = self.ports.get_mut(port).ok_or(CmdError::BadPort)?;
        pt.rss = t;
        pt.rss_len = rqs.len();
        self.resume();
        Ok(())
    }

    /// Sets a port's link state (the wire's: frames a port loops back ignore it).
    pub fn set_link(&mut self, port: usize, up: bool) -> Result<(), CmdError> {
        self.ports.get_mut(port).ok_or(CmdError::BadPort)?.link_up = up;
        self.resume();
        Ok(())
    }

    /// Turns 802.3x flow control on or off in both directions of `port` (both off after
    /// creation): [`Device::set_pause_rx_tx`] with `rx` = `tx` = `on`. A port sends PAUSE
    /// frames while a usable RQ of its RSS table is short of posted WQEs (TX pause) and waits
    /// while its receiver sends them (RX pause): an SQ does not execute its next WQE, which
    /// stays posted, pauses (counted in [`PortCounters::tx_pause`]) until the next register
    /// write, and an engine run then retries it. See "Flow control" in the module
    /// documentation. Between two ports with flow control off, a packet that finds no posted
    /// RX WQE is dropped and counted in [`PortCounters::hc_rx_discards_no_wqe`].
    pub fn set_pause(&mut self, port: usize, on: bool) -> Result<(), CmdError> {
        self.set_pause_rx_tx(port, on, on)
    }

    /// Sets `port`'s flow control per direction, as RSNIC_SET_PAUSE does: `rx` honours the
    /// PAUSE frames the port receives, `tx` sends them when its receive side is short of
    /// posted WQEs. Lifts flow-control pauses (the next engine run decides again).
    /// [`CmdError::BadPort`] for a port that does not exist.
    pub fn set_pause_rx_tx(&mut self, port: usize, rx: bool, tx: bool) -> Result<(), CmdError> {
        let pt = self.ports.get_mut(port).ok_or(CmdError::BadPort)?;
        pt.pause.rx = rx;
        pt.pause.tx = tx;
        self.resume();
        Ok(())
    }

    /// Whether flow control is on in both directions of `port` (false for a port that does
    /// not exist).
    pub fn pause(&self, port: usize) -> bool {
        self.pause_rx_tx(port) == Some((true, true))
    }

    /// A port's flow control, `(rx, tx)` (`None` for a port that does not exist).
    pub fn pause_rx_tx(&self, port: usize) -> Option<(bool, bool)> {
        self.ports.get(port).map(|p| (p.pause.rx, p.pause.tx))
    }

    /// Turns internal loopback on or off for `port` (off after creation): with it on, every
    /// frame the port transmits is delivered to its own receive side (RSS, RQs, RX CQEs and
    /// counters as for a frame from the wire) instead of its peer, whatever the link states,
    /// and counted in [`PortCounters::loopback_packets`]. Off restores the wire. Lifts
    /// flow-control pauses (the receiver changed). See the module documentation ("Ports and
    /// wiring"). [`CmdError::BadPort`] for a port that does not exist.
    pub fn set_loopback(&mut self, port: usize, on: bool) -> Result<(), CmdError> {
        self.ports.get_mut(port).ok_or(CmdError::BadPort)?.loopback = on;
        self.resume();
        Ok(())
    }

    /// Sets the permanent MAC address MANA_QUERY_VPORT_CONFIG reports for `port`'s vport (what
    /// the device host burns in; [`vport_mac`] until then).
    pub fn set_permanent_mac(&mut self, port: usize, mac: [u8; 6]) -> Result<(), CmdError> {
        self.ports.get_mut(port).ok_or(CmdError::BadPort)?.mac = Some(mac);
        Ok(())
    }

    /// Whether `port` is in loopback (false for a port that does not exist).
    pub fn loopback(&self, port: usize) -> bool {
        self.ports.get(port).is_some_and(|p| p.loopback)
    }

    /// Lifts every flow-control pause: the next engine run retries the paused SQs. Called on
    /// every register write and on the commands that can end a pause.
    fn resume(&mut self) {
        for pt in self.ports.iter_mut() {
            pt.sq_paused = 0;
            pt.pause.new_quantum();
        }
    }

    /// Whether an SQ or RQ is in the error state.
    pub fn wq_in_error(&self, id: u32) -> Result<bool, CmdError> {
        if let Ok((p, s)) = self.loc(id, Kind::Sq) {
            return Ok(self.row(p, s).is_some_and(|r| r.sq.error));
        }
        let (p, s) = self.loc(id, Kind::Rq)?;
        Ok(self.row(p, s).is_some_and(|r| r.rq.error))
    }

    /// The device's consumer byte offset of an SQ or RQ.
    pub fn wq_consumer(&self, id: u32) -> Result<u32, CmdError> {
        if let Ok((p, s)) = self.loc(id, Kind::Sq) {
            return Ok(self.row(p, s).map_or(0, |r| r.sq.cons));
        }
        let (p, s) = self.loc(id, Kind::Rq)?;
        Ok(self.row(p, s).map_or(0, |r| r.rq.cons))
    }

    /// CQEs written to a CQ so far.
    pub fn cq_producer(&self, id: u32) -> Result<u32, CmdError> {
        let (p, s) = self.loc(id, Kind::Cq)?;
        Ok(self.row(p, s).map_or(0, |r| r.cq.pi))
    }

    /// Counters of one port.
    pub fn counters(&self, port: usize) -> Option<&PortCounters> {
        self.ports.get(port).map(|p| &p.counters)
    }

    /// Arms `fault` on `port` (replacing one of the same kind still waiting; a port already
    /// stopped stays stopped). `false` for a port that does not exist or a TX error type that
    /// is TX_OKAY or out of range.
    pub fn inject(&mut self, port: usize, fault: Fault) -> bool {
        let Some(p) = self.ports.get_mut(port) else {
            return false;
        };
        match fault {
            Fault::TxErrCqe(t) if t == 0 || t == 32 || t > 0x3f => return false,
            Fault::TxErrCqe(t) => p.faults.tx_err = Some(t),
            Fault::RxTruncated => p.faults.rx_trunc = true,
            Fault::DropIrqs(n) => p.faults.drop_irqs = n,
            Fault::EqeBadCq => p.faults.eqe_bad_cq = true,
            Fault::DmaReadFault => p.faults.dma_read = true,
            Fault::TxStall => p.faults.tx_stall = true,
            Fault::TxBadWqId => p.faults.tx_bad_wq = true,
            Fault::TxBadOwner => p.faults.tx_bad_owner = true,
            Fault::RxBadWqId => p.faults.rx_bad_wq = true,
            Fault::DevStop => p.faults.dev_stop = true,
        }
        true
    }

    /// Ends a [`Fault::TxStall`] or [`Fault::DevStop`] of port `port` by itself, as a
    /// device that stalled for a while does (the driver destroyed nothing): the work posted
    /// meanwhile executes at the next run. Returns `false` if there is no such port or
    /// `fault` is of another kind.
    pub fn end_fault(&mut self, port: usize, fault: Fault) -> bool {
        let Some(p) = self.ports.get_mut(port) else {
            return false;
        };
        match fault {
            Fault::TxStall => p.faults.tx_stall = false,
            Fault::DevStop => {
                p.faults.dev_stop = false;
                p.faults.dev_stop_hit = false;
            }
            _ => return false,
        }
        true
    }

    /// Register accesses to unknown offsets.
    pub fn bad_mmio(&self) -> u64 {
        self.bad_mmio
    }

    /// A 64-bit register write at `offset`, bytes in bus order (a little-endian u64).
    pub fn mmio_write64(&mut self, offset: u32, bytes: [u8; 8]) {
        self.resume();
        let Some(rel) = offset.checked_sub(DB_PAGE_BASE) else {
            self.bad_mmio = self.bad_mmio.wrapping_add(1);
            return;
        };
        let page = rel / DB_PAGE_SIZE;
        let reg = rel % DB_PAGE_SIZE;
        let v = u64::from_le_bytes(bytes);
        if page >= DB_PAGES {
            self.bad_mmio = self.bad_mmio.wrapping_add(1);
            return;
        }
        if self.hwc_doorbell(page, reg, v) {
            return;
        }
        let lo = v as u32;
        let hi = (v >> 32) as u32;
        let kind = match reg {
            DB_SQ => Kind::Sq,
            DB_RQ => Kind::Rq,
            DB_CQ => Kind::Cq,
            DB_EQ => Kind::Eq,
            _ => {
                self.bad_mmio = self.bad_mmio.wrapping_add(1);
                return;
            }
        };
        let id = if kind == Kind::Eq {
            lo & 0xffff
        } else {
            lo & 0x00ff_ffff
        };
        // A queue's doorbells go to its port's page (page p for port p), or after
        // GDMA_REGISTER_DEVICE to the registered page for every port. Counted on the queue's
        // port when the page is right, else on the page's port.
        let registered = self.hwc.registered();
        let page_ok = |p: usize| {
            if registered {
                page == MANA_DB_ID
            } else {
                page as usize == p
            }
        };
        let port = match split_id(id, kind) {
            Some((p, _)) if p < self.ports.len() && page_ok(p) => p,
            _ => page as usize,
        };
        if port >= self.ports.len() {
            self.bad_mmio = self.bad_mmio.wrapping_add(1);
            return;
        }
        let slot = match split_id(id, kind) {
            Some((p, s))
                if p == port && page_ok(p) && self.row(p, s).is_some_and(|r| used(r, kind)) =>
            {
                Some(s)
            }
            _ => None,
        };
        let Some(pt) = self.ports.get_mut(port) else {
            return;
        };
        let c = &mut pt.counters;
        c.pcie.doorbell();
        match kind {
            Kind::Sq => c.sq_doorbells += 1,
            Kind::Rq => c.rq_doorbells += 1,
            Kind::Cq => c.cq_doorbells += 1,
            Kind::Eq => c.eq_doorbells += 1,
        }
        let Some(s) = slot else {
            c.bad_doorbells += 1;
            return;
        };
        if kind == Kind::Rq && (lo >> 24) != 0 {
            c.rq_db_wqe_cnt_errors += 1;
            return;
        }
        c.doorbells += 1;
        let arm = hi >> 31 != 0;
        let tail31 = hi & 0x7fff_ffff;
        if kind == Kind::Cq && arm {
            c.cq_arms += 1;
        }
        let mut invalid = false;
        let mut sq_work = false;
        let Some(r) = self.queues.get_mut(port * MAX_QUEUES + s) else {
            return;
        };
        match kind {
            Kind::Sq | Kind::Rq => {
                let q = if kind == Kind::Sq {
                    &mut r.sq
                } else {
                    &mut r.rq
                };
                let ahead = hi.wrapping_sub(q.cons);
                if ahead > q.size || hi % 32 != 0 {
                    invalid = true;
                } else {
                    q.tail = hi;
                    sq_work = kind == Kind::Sq && ahead > 0 && !q.error;
                }
            }
            Kind::Cq => {
                r.cq.since_db = 0;
                if arm {
                    r.cq.armed = true;
                    r.cq.arm_tail = tail31;
                }
            }
            Kind::Eq => {
                if arm {
                    r.eq.armed = true;
                    r.eq.arm_tail = tail31;
                }
            }
        }
        let Some(pt) = self.ports.get_mut(port) else {
            return;
        };
        if invalid {
            pt.counters.db_invalid += 1;
        }
        if sq_work {
            pt.sq_work |= 1 << s;
        }
        if kind == Kind::Cq && arm {
            pt.cq_arm |= 1 << s;
        }
        if kind == Kind::Eq && arm {
            pt.eq_arm |= 1 << s;
        }
    }

    /// A 32-bit register write: the SMC window's dwords; anything else counts as bad.
    pub fn mmio_write32(&mut self, offset: u32, value: u32) {
        self.resume();
        if !self.smc_write(offset, value) {
            self.bad_mmio = self.bad_mmio.wrapping_add(1);
        }
    }

    /// A 32-bit register read: the doorbell page base (0x08 low, 0x0C high) and size (0x10);
    /// anything else reads all ones and counts as bad.
    pub fn mmio_read32(&mut self, offset: u32) -> u32 {
        if let Some(v) = self.smc_read(offset) {
            return v;
        }
        match offset {
            REG_DB_PAGE_BASE => DB_PAGE_BASE,
            0x0C => 0,
            REG_DB_PAGE_SIZE => DB_PAGE_SIZE,
            REG_SHM_OFFSET => SMC_BASE,
            0x1C => 0,
            _ => {
                self.bad_mmio = self.bad_mmio.wrapping_add(1);
                u32::MAX
            }
        }
    }

    /// Runs the device until it has no work (SQs paused by flow control wait for the next
    /// register write, those of a stalled or stopped port for the end of the fault). Returns
    /// the TX WQEs executed.
    pub fn process<M: BusMemory, I: InterruptSink>(&mut self, mem: &M, irq: &mut I) -> usize {
        let mut n = 0usize;
        loop {
            let (done, more) = self.process_budget(mem, irq, usize::MAX);
            n = n.saturating_add(done);
            if !more {
                return n;
            }
        }
    }

    /// Like [`Device::process`] but executes at most `budget` TX WQEs (over all SQs, round
    /// robin, at most [`SQ_BURST`] per SQ in a row). CQ and EQ arm requests are evaluated
    /// even with a budget of 0 (not those of a stopped port). Returns (TX WQEs executed,
    /// whether an SQ that is not paused, stalled or stopped still has work). Repeated calls
    /// produce the same device-visible results as one [`Device::process`].
    pub fn process_budget<M: BusMemory, I: InterruptSink>(
        &mut self,
        mem: &M,
        irq: &mut I,
        budget: usize,
    ) -> (usize, bool) {
        if self.scratch.len() < MIN_SCRATCH {
            return (0, false);
        }
        self.hwc_run(mem, irq);
        let (frame, gather) = self.scratch.split_at_mut(MAX_FRAME);
        let mut io = engine::Io {
            mem,
            irq,
            frame,
            gather,
        };
        engine::run(
            &mut self.ports,
            &mut self.queues,
            &mut self.rr,
            &mut io,
            budget,
        )
    }
}
