// SPDX-License-Identifier: GPL-2.0

//! A simulated ConnectX (mlx5) Ethernet device.
//!
//! The device decodes the formats of Documentation/networking/device_drivers/ethernet/
//! rsnic-hardware.rst, parts A–C, itself (this is an independent implementation of those
//! facts and a cross-check of the driver's); it shares no code with the driver-side data
//! path.
//!
//! # Ports and wiring
//!
//! A device has N ports (`ports.len()`, default 2 in the host test bed), wired back to back
//! in pairs: port 2k ↔ port 2k+1. A packet sent on a port's SQ arrives at the peer port. A
//! port without a peer (the last one of an odd count) drops what it sends. Each port has a
//! link state ([`Device::set_link`], up after creation): a packet is dropped and counted in
//! [`PortCounters::tx_link_down_drops`] of the sending port when either end is down.
//!
//! **Loopback** ([`Device::set_loopback`], off after creation; what `ethtool -K <dev> loopback
//! on`, `NETIF_F_LOOPBACK`, asks for). A port in loopback delivers every frame it transmits
//! to its own receive side instead of its peer: RSS, RQ selection, RX CQEs and RX counters
//! exactly as for a frame that arrived from the wire. As ConnectX's internal loopback, the
//! frame turns around inside the device, before the MAC and the wire: neither end's link
//! state matters (a looped port carries traffic to itself while it or its peer is down, and
//! a port without a peer loops too), the peer sees nothing, and the carrier the driver sees
//! ([`Device::link_up`]) does not change. Looped frames count in the sender's
//! [`PortCounters::tx_packets`] / [`PortCounters::tx_bytes`] (they left its SQs) and also in
//! [`PortCounters::loopback_packets`] / [`PortCounters::loopback_bytes`], so the peer's
//! receive outcomes balance `tx_packets − loopback_packets`. The switch governs the port's
//! transmit direction only: frames its peer sends still arrive when both links are up. It
//! takes effect for the next frame the engine sends; a WQE already executed was delivered
//! under the old setting, so toggling between runs loses nothing. Flow control
//! ([`Device::set_pause`]) follows the frames: a looping port pauses on its own RQs.
//!
//! **Flow control** (802.3x global pause, per port and direction as PFCC sets it: `pptx`
//! "send PAUSE", `pprx` "honour PAUSE"; both on after creation, as ConnectX ships). The port
//! that receives a port's frames (the peer, or the port itself in loopback) watches its RSS
//! table's RQs: when one has fewer than [`PAUSE_THRESHOLD`] (at most half the RQ) posted
//! WQEs as the sender is about to execute a WQE that puts a frame on the wire (not a NOP),
//! the receiver, if its TX pause is on, transmits a PAUSE frame to the sender: counted in
//! the receiver's [`PortCounters::tx_pause_frames`] and the sender's
//! [`PortCounters::rx_pause_frames`] (PPCNT's `a_pause_mac_ctrl_frames_transmitted` /
//! `_received`). The sender honours it if its RX pause is on: the SQ waits
//! ([`PortCounters::tx_pause`]) and is retried on the next engine run (every register write
//! runs the engine; a driver re-arms its RX CQ after refilling). Otherwise the frame goes
//! out and the receiver drops what it has no buffer for
//! ([`PortCounters::rx_out_of_buffer`]). A PAUSE covers the whole engine run it arrived in
//! (a pause quantum): a receiver sends at most one per run to each sender, and a run after
//! the receiver found room again sends none. The receiver's stall prevention
//! ([`PAUSE_STORM`]) stops its PAUSE frames while it stays short for long.
//!
//! # Control plane: command interface and event queues
//!
//! Each port is one PCI function with its own window of [`FUNC_BAR_SIZE`] bytes in BAR0
//! (port p at `p * FUNC_BAR_SIZE`); every offset below is relative to the window. The layouts
//! are the 6.12 headers' (`include/linux/mlx5/mlx5_ifc.h`, `device.h`), transcribed in
//! [`ifc`] as big-endian bit positions.
//!
//! **Initialization segment** (`struct mlx5_init_seg`, 32-bit registers carrying their
//! numeric value): `fw_rev` @0x000 and `cmdif_rev_fw_sub` @0x004 (cmdif_rev 5 in bits 31..16)
//! read only; `cmdq_addr_h` @0x010 and `cmdq_addr_l_sz` @0x014 take the command queue's bus
//! address (reads return the address with log_cmdq_size 5 in bits 7..4 and log_cmdq_stride 6
//! in bits 3..0); `cmd_dbell` @0x018: bit i rings entry i; `initializing` @0x1fc reads 0
//! (the firmware is ready from power-on: mlx5_core waits for that before it writes the
//! queue's address); the health buffer @0x200 reads 0 (fw_ver aside; byte reads of it are
//! the transport's: devd serves them from the register); `cmd_exec_to` @0xff8 and
//! `cmd_q_init_to` @0xffc read 0 (no device timeouts: mlx5_core then reads no DTOR
//! register); `internal_timer_h/l` @0x1000/0x1004 the device's clock in ns
//! (`device_frequency_khz` 1 GHz); `health_counter` @0x1010 advances with every engine run
//! and every millisecond of the device's clock ([`Device::set_clock`]: a host that runs the
//! device rarely still shows a live heartbeat; mlx5_core declares a device whose counter
//! stands still over three 2 s polls dead). Other offsets of pages 0..7 are bad register
//! accesses.
//!
//! **Command queue** (cmd.c, polling and events mode): 32 entries of 64 bytes (`mlx5_cmd_layout`). A rung
//! entry executes the next time the device runs ([`Device::process`]: commands first, then
//! events, then WQEs). Delivery checks, in order, answered in `status_own` bits 7..1 with
//! cmd.c's `MLX5_CMD_DELIVERY_STAT_*`: an entry software still owns (bit 0 clear) is skipped
//! untouched; `type` ≠ 7 → CMD_DESCR_ERR; `inlen` < 8 or > [`cmd::MAX_MSG`] → IN_LENGTH_ERR;
//! `outlen` likewise → OUT_LENGTH_ERR; then the input and output mailbox chains
//! (`mlx5_cmd_prot_block`, as many blocks as the length needs beyond the 16 inline bytes):
//! a null, misaligned (not 8-byte) or unreadable block → IN_PTR_ALIGN_ERR / OUT_PTR_ALIGN_ERR,
//! a `block_num` out of sequence → BAD_BLK_NUM_ERR, a `token` other than the entry's →
//! TOK_ERR. Signatures are not checked. A delivered command gets its output (16 inline bytes,
//! the rest through the output mailboxes, at most 0x1010 bytes written) and then
//! `status_own` = 0. Inputs are copied into the scratch buffer (4 KiB); longer PAS lists are
//! streamed from the mailboxes. Nothing allocates. An entry rung while one of the function's
//! EQs takes command events (`event_bitmask` bit 0x0a, mlx5_core's command EQ) also
//! completes by event: after it executed, an EQE of type 0x0a with the entry's bit in
//! `data.cmd.vector` (BE32 at 0x20) goes to each such EQ, with its interrupt if armed
//! (mlx5_core's events mode; the CREATE_EQ that makes the first such EQ was rung before it
//! existed and completes by its ownership bit alone, which mlx5_core polls).
//!
//! **Command checks**, answered with the output header's status (byte 0) and a syndrome
//! (bytes 4..8) naming the check ([`cmd::synd`] lists them all): unknown opcode → BAD_OP;
//! injected failure ([`Device::fail_command`]) → INT_ERR; wrong HCA state → BAD_SYS_STATE;
//! op_mod not allowed → BAD_OP; `inlen`/`outlen` below the command's structure size →
//! BAD_INPUT_LEN / BAD_OUTPUT_LEN; then the command's own parameters (BAD_PARAM), object
//! numbers of no object of this function (BAD_RESOURCE), objects in use (RESOURCE_BUSY),
//! state transitions (BAD_RES_STATE), full tables (NO_RESOURCES).
//!
//! **HCA state**: DISABLED —ENABLE_HCA→ ENABLED (QUERY_ISSI, SET_ISSI 0/1, QUERY_HCA_CAP,
//! SET_HCA_CAP, QUERY_ADAPTER, QUERY_PAGES, MANAGE_PAGES, DISABLE_HCA) —INIT_HCA→
//! INITIALIZED (every other command but SET_HCA_CAP) —TEARDOWN_HCA (profile 0)→ ENABLED.
//! TEARDOWN_HCA frees every object of the function, as firmware does (its pages stay until
//! the driver takes them).
//!
//! **Objects** (per function, [`MAX_QUEUES`] of each kind): UAR indices from [`FIRST_UAR`]
//! ([`MAX_UARS`] of them); PDs, transport domains, TISs, RQTs, TIRs, flow tables and flow
//! groups numbered like queues (`base + port * 64 + slot`, bases [`PD_BASE`], [`TD_BASE`],
//! [`TISN_BASE`], [`RQTN_BASE`], [`TIRN_BASE`], [`FT_BASE`], [`FG_BASE`]); SQs, RQs and CQs keep [`SQN_BASE`], [`RQN_BASE`], [`CQN_BASE`]; EQ numbers
//! are `EQN_BASE + slot` ([`EQN_BASE`], 8 bits, per function). Queue memory comes as a PAS
//! list of page-aligned, non-zero pages (page size 4 KiB << log_page_size, page_offset 0),
//! else BAD_PARAM; the list must be as long as the queue needs (BAD_INPUT_LEN). Contiguous
//! pages are kept as one address; any other list goes into the device's bounded page-list
//! pool ([`pas`]; a list longer than [`pas::MAX_LIST_PAGES`] or one the pool has no room
//! for: NO_RESOURCES). An RQ may have PD 0 (mlx5e's drop RQ); a CQ may have one CQE. CREATE_CQ names an EQ (`c_eqn`) and a UAR
//! and takes the moderation fields (see "CQ moderation" below; `cq_period_mode` 2 or 3 is
//! BAD_PARAM); MODIFY_CQ (op_mod 0) changes `cq_period`, `cq_max_count` and `cq_period_mode`
//! as `modify_field_select` bits 0, 1 and 4 say (no bit, or any other bit: BAD_PARAM; a
//! CQ of no CQ of this function: BAD_RESOURCE); QUERY_HCA_CAP reports `cq_moderation`,
//! `cq_period_mode_modify` and `cq_period_start_from_cqe`;
//! CREATE_SQ a CQ, a TIS (`tis_num_0`; `tis_lst_sz` is not checked), a PD and a UAR, with `log_wq_stride` 6; CREATE_RQ
//! a CQ and a PD, cyclic, `log_wq_stride` 4..=8. SQs and RQs are created in RST; MODIFY
//! (current state in the input header) allows RST→RDY, RDY→ERR and ERR→RST (counters restart
//! at 0), anything else is BAD_RES_STATE; a WQE error puts an SQ in ERR (an RX write fault an
//! RQ); QUERY_SQ/RQ report the state, the CQ and the counters. A CQ with an SQ or RQ, an EQ
//! with a CQ, a TIS with an SQ, an RQT with a TIR, an RQ in an RQT or direct TIR, a UAR/PD/TD
//! an object names: RESOURCE_BUSY.
//!
//! **RSS and flow steering** (the receive side of mlx5e: RQT, TIRs, the traffic-type table
//! of `lib/fs_ttc.c`). An RQT lists 1..=2^`log_max_rqt_size` RQs ([`MAX_RQT_SIZE`], 256 as
//! mlx5e's table; repetitions allowed); MODIFY_RQT replaces the list (`bitmask.rqn_list` is
//! not required, other bits are refused). An indirect TIR (Toeplitz, not symmetric) hashes
//! with its `rx_hash_toeplitz_key` the fields its `rx_hash_field_selector_outer` selects:
//! source / destination address of `l3_prot_type`'s IP version, source / destination port of
//! `l4_prot_type`'s transport (other `selected_fields` bits are refused), in that order, and
//! the frame goes to RQT entry `hash % size`; a field the frame does not have is not hashed
//! ([`crate::sim::pkt::rss_hash_sel`]). A direct TIR names one RQ (no hash). MODIFY_TIR with
//! `bitmask.hash` replaces an indirect TIR's hash function, key and selector (the next frame
//! is hashed the new way, nothing is lost); `bitmask.self_lb_en` is taken (the model loops
//! no frame back to its function but by PPLR, so `self_lb_block` changes nothing); other
//! bitmask bits are refused.
//!
//! An indirect TIR with `rx_hash_symmetric` (mlx5e sets it on every Toeplitz TIR) hashes
//! the lower of the two addresses, and of the two ports, first, so both directions of a
//! flow hash alike ([`crate::sim::pkt::rss_hash_sym`]).
//!
//! Which TIR a frame goes to is flow steering's, the NIC RX tables as mlx5_core's fs_core
//! builds them for mlx5e (its VLAN, L2, traffic-type and aRFS tables, ethtool's rules) and
//! rsnic builds its own. CREATE_FLOW_TABLE makes a NIC RX table of `2^log_size` (≤ 2^16)
//! flow indices at a `level` (≤ [`MAX_FT_LEVEL`]), whose misses drop (the default miss
//! action) or go on to the table `table_miss_id` names (`table_miss_action` 1, FWD; a table
//! of this function at a higher level; no flags, no other miss action); MODIFY_FLOW_TABLE
//! (`modify_field_select` 1) changes the miss the same way (fs_core chains each new table
//! after those of earlier levels so). CREATE_FLOW_GROUP takes a range of a table's indices
//! and match criteria on the outer headers (`match_criteria_enable` 0 or 1; criteria in the
//! misc, inner or later sets, or on `l4_type` / `ipv4_ihl`, are refused; no group type, no
//! match definer; ranges of a table do not overlap): any bits of `fte_match_set_lyr_2_4`
//! (MACs, ethertype, the first VLAN tag, `cvlan_tag`/`svlan_tag`, IP version, protocol,
//! DSCP/ECN, fragment, TTL, TCP flags and ports, UDP ports, addresses: see [`steer`]).
//! SET_FLOW_TABLE_ENTRY (op_mod 0 a new index of its group, 1 that entry replaced) makes an
//! entry that, for the frames whose headers equal its values under its group's criteria,
//! forwards (FWD_DEST, one destination: a TIR of the function, or a flow table of a higher
//! level) or drops (DROP, no destination); a flow tag is taken (and not reported); counters,
//! reformat, modify header and extended destinations are refused. SET_FLOW_TABLE_ROOT
//! (op_mod 0) makes a table the root; op_mod 1 disconnects it. A received frame walks from
//! the root: in each table its entries by flow index, the first that matches decides; none:
//! the table's miss, or dropped ([`PortCounters::rx_steering_drops`]); at most
//! [`MAX_CHAIN`] tables. A table with groups, a table an entry forwards to, a group with
//! entries, a TIR an entry forwards to, an RQT a TIR names: RESOURCE_BUSY (a root table may
//! go, and so may a table others miss to: fs_core destroys its tables so at cleanup; the
//! function has no root then, and those misses drop). DELETE_FLOW_TABLE_ENTRY, DESTROY_FLOW_GROUP and DESTROY_FLOW_TABLE
//! undo them. When a command changes any of this the model orders the entries (by table,
//! then flow index) and finds the RQs frames can reach (for flow control); per frame the
//! work is the frame's header image (64 bytes), one masked compare per entry looked at, the
//! hash and two table lookups. QUERY_HCA_CAP type 7 reports the NIC RX table properties
//! (`ft_support`, `max_ft_level`, sizes, the outer fields above); [`MAX_QUEUES`] tables,
//! groups and entries per function.
//!
//! Without a root table the model dispatches as it did before it had flow tables: every
//! received frame goes to the first indirect TIR created on the function (when it is
//! destroyed, the lowest-numbered remaining one), hashed over its IP addresses and TCP/UDP
//! ports whatever the TIR's selector, with the TIR's key; no indirect TIR: dropped. The test
//! fixtures of single-TIR set-ups rely on it. [`Device::set_rss`] remains as the device
//! host's back door (a table of at most [`MAX_RSS`] RQs hashed over addresses and ports with
//! [`crate::sim::pkt::RSS_KEY`]): whichever was written last, it or a command changing the
//! steering, steers.
//!
//! **Port**: QUERY/MODIFY_NIC_VPORT_CONTEXT carry the MTU (64..=[`MAX_FRAME`] + 4, recorded,
//! not enforced; 1522 at first) and the permanent MAC (unicast; `02:00:00:00:00:<port + 1>`
//! at first); QUERY_VPORT_STATE the administrative and
//! operational states; ACCESS_REG implements PAOS (admin_status up 1 / down 2 when `ase`;
//! oper_status), PPLR (`lb_en` 0 = off, any of the loopback bits 1/2/4 = the model's one
//! internal loopback, [`Device::set_loopback`]; `lb_cap` = 2, phy local), PFCC (`pprx` =
//! `pprx` and `pptx`, see "Flow control" above; the other fields read 0), PPCNT (group 0, the
//! IEEE 802.3 counters, read only: see [`cmd::ieee`]; `clr` restarts them after the
//! answer; other groups are BAD_PARAM), local_port 1 (or 0), reads and writes both answer
//! with the register's contents. QUERY_VPORT_COUNTER reports unicast / multicast /
//! broadcast packets and octets by destination address, received errors (too long + DMA
//! faults), transmit errors (rejected WQEs) and local loopback; `clear` restarts them.
//!
//! **Capabilities** ([`Caps`], given at creation by the device host): QUERY_HCA_CAP reports
//! them (op_mod bit 0: current 1, maximum 0; types general 0, Ethernet offloads 1, NIC flow
//! table 7; others BAD_PARAM) and the model enforces them (see [`Caps`]). The general caps
//! are what mlx5_core and mlx5e read (`cmd::hca::general_caps`): no QPs, no striding RQ, no
//! `hca_cap_2`, no RoCE, no ODP, no tunnels, 8 Q counters, 8 memory keys, UC / MC vport
//! lists of 4 / 16, a 1 GHz internal timer. SET_HCA_CAP (general, while ENABLED) sets
//! `pkey_table_size`, `log_max_qp` (≤ its maximum, 0) and `cmdif_checksum`, which the
//! current caps then show; `log_uar_page_sz` must stay 0 (4 KiB UARs); the other fields
//! are read-only and ignored. QUERY_ADAPTER answers Mellanox's OUI and a PSID.
//!
//! **Firmware pages** (pagealloc.c): QUERY_PAGES (ENABLED or INITIALIZED) says how many pages
//! the function wants for boot (op_mod 1: [`cmd::BOOT_PAGES`]), init (2: [`cmd::INIT_PAGES`])
//! and regular use (3: [`cmd::REGULAR_PAGES`] after INIT_HCA); MANAGE_PAGES GIVE (1) takes
//! 4 KiB-aligned pages (a bad address refuses the whole command; at most
//! [`cmd::MAX_FW_PAGES`]), TAKE (2) returns pages (never those an initialized HCA needs; at
//! most what the output holds), CANT_GIVE (0) is taken. The device keeps the list of held
//! pages in the pages (each one's first 8 bytes link the next), as firmware keeps its
//! bookkeeping in the memory it was given. Once a driver asked QUERY_PAGES, INIT_HCA is
//! BAD_SYS_STATE until the function holds its boot and init pages, and after INIT_HCA the
//! function asks for its regular pages by a page request EQE (type 0x0b, `func_id` 0,
//! `num_pages`) on its EQs that take page requests. A driver that never asks (the device
//! host's fixtures) is not held to them; rsnic's and mlx5_core ask. DISABLE_HCA and a function reset forget the pages; the
//! function's count is [`PortCounters::fw_pages`].
//!
//! **Memory keys**: CREATE_MKEY takes a PA-mode key (local read and write, `length64`, a PD
//! of the function; no UMR, no umem) and answers index [`cmd::MKEY_INDEX_BASE`] + i; the key
//! is `index << 8 | mkey_7_0`. Once the function has a key, every data segment's lkey must
//! be one of its keys: a TX WQE with another fails before anything is sent (error CQE,
//! LOCAL_PROT, [`WqeError::BadLkey`]), an RX WQE with another completes with LOCAL_PROT and
//! puts the RQ in error ([`PortCounters::mkey_errors`]). A function without keys (the device
//! host's fixtures) is not checked; rsnic and mlx5e make one.
//!
//! **Q counters**: ALLOC_Q_COUNTER hands out set ids 1..=[`cmd::Q_COUNTERS`]; an RQ naming one
//! (`rqc.counter_set_id`) counts its drops for lack of a WQE in it; QUERY_Q_COUNTER reports
//! `out_of_buffer` (`clear` restarts it), DEALLOC_Q_COUNTER frees an id no RQ names.
//!
//! **The vport's filter**: MODIFY_NIC_VPORT_CONTEXT `addresses_list` (UC up to
//! [`cmd::UC_LIST`], MC up to [`cmd::MC_LIST`]) and `promisc` (uc, mc, all) program what the
//! VF's vport lets through (as the eswitch of a VF's PF does): once a driver programmed
//! either, a received frame reaches the function only if it is broadcast, its destination
//! is the function's MAC or on the list of its kind, or the matching promiscuous flag is on
//! ([`PortCounters::rx_vport_filtered`] counts the others). A driver that never programs
//! them receives every frame (rsnic's ConnectX driver programs them, as mlx5e does).
//!
//! **Event queues** (eq.c): CREATE_EQ gives a ring of 2^log_eq_size 64-byte EQEs, a UAR page,
//! an MSI-X vector `intr` < [`MAX_VECTORS`] (device vector `port * MAX_VECTORS + intr`) and
//! `event_bitmask[0]`; bit 9 (PORT_CHANGE) subscribes it to port events. The EQE for producer
//! index i goes to slot `i mod size` with `owner = (i >> log_eq_size) & 1`: the driver fills
//! every owner byte with 1 (init_eq_buf) and reads an EQE as its own when `(owner ^ (cc >>
//! log_eq_size)) & 1 == 0` (next_eqe_sw). UAR + 0x40 ([`EQ_ARM_DOORBELL`]) takes `eqn << 24 |
//! ci` and arms, UAR + 0x48 ([`EQ_CI_DOORBELL`]) only updates ci. An armed EQ raises its
//! vector once an EQE lies beyond ci, then disarms. An EQE that finds the ring full (producer
//! − ci = size) overruns the EQ: it is in error until destroyed and later EQEs are lost
//! ([`PortCounters::eq_overruns`], [`PortCounters::eqes_lost`]). A CQ made by CREATE_CQ
//! that fires (armed, a CQE beyond the armed ci) writes a completion EQE (type 0, `cqn` at
//! byte 0x38) to its EQ after the engine run, instead of raising a vector; the CQ arm
//! doorbell's `arm_sn` is recorded only (hardware uses it to drop a stale arm: the model
//! serves every arm request). A function's operational state is up when its administrative
//! state (PAOS, [`Device::set_link`]) and its peer's are up (in loopback: its own); after
//! INIT_HCA every change writes a PORT_CHANGE EQE (type 0x09, sub_type 4 ACTIVE / 1 DOWN,
//! port 1 in bits 7..4 of `data.port.port`) to each of the function's EQs that asked for it.
//!
//! # Rust API (the device host's back door)
//!
//! [`Device::create_cq`], [`Device::create_sq`], [`Device::create_rq`], their `destroy_*`,
//! [`Device::reset_sq`] / [`Device::reset_rq`] (ERR → RST → RDY, counters at 0),
//! [`Device::set_rss`], [`Device::set_link`], [`Device::set_pause`],
//! [`Device::set_loopback`] remain for the test fixtures and, transitionally, for the driver
//! until it switches to commands. Queues made this way are ready at once, rung through UAR
//! page [`API_UAR`] of their port ([`api_uar_offset`]), and their CQs raise
//! [`CqConfig::vector`] directly, without an EQ. Errors are a [`CmdError`], never a panic.
//! Tables have a fixed capacity of [`MAX_QUEUES`] objects of each kind per port and
//! [`MAX_RSS`] RSS entries per port; nothing allocates. The caller provides all storage as
//! slices of small entries ([`Port`], under 1.5 KiB, and [`QueueSet`], under a kilobyte,
//! 64 per port, plus scratch bytes), so no large value is ever built on a (kernel) stack.
//! A queue's CQ must belong to the same port.
//!
//! The device does not initialise CQ or EQ buffers: like mlx5e (spec C.2) the driver fills
//! every CQE with `op_own = 0xF1` before creating the CQ, so the first pass writes owner bit
//! 0; eq.c fills EQE owner bytes with 1.
//!
//! # Doorbells (UAR pages)
//!
//! * UAR + 0x800 ([`SQ_DOORBELL`]): 64-bit SQ doorbell = the first 8 bytes of the ctrl segment
//!   as they sit in memory (`opmod_idx_opcode` ‖ `qpn_ds`); the SQN is `qpn_ds` bits 31..8.
//!   Only offset 0x800 is decoded (mlx5e does no BlueFlame and uses one bfreg). An SQ in RST
//!   or ERR ignores it.
//! * UAR + 0x20 ([`CQ_ARM_DOORBELL`]): CQ arm = {BE32(sn<<28 | cmd | ci), BE32(cqn)}. `cmd`
//!   REQ_NOT (0) and REQ_NOT_SOL (1<<24) both arm (the model has no solicited events).
//! * UAR + 0x40 / 0x48: the EQ doorbells above (32-bit).
//!
//! A register write only latches state (doorbell pending, arm request) and is accounted as
//! one inbound TLP; [`Device::process`] does the work, as the hardware does asynchronously. A
//! write to an unknown offset, port or UAR page that was not allocated ([`Device::bad_mmio`])
//! or naming a queue that is not this function's and this UAR page's
//! ([`PortCounters::bad_doorbells`]) is counted, never a panic. Unknown 32-bit reads return
//! all ones (a master abort) and count as bad too.
//!
//! # Engine
//!
//! [`Device::process`] runs until no SQ has work (or [`Device::process_budget`] until a WQE
//! budget is spent). SQs with work are served round robin, [`SQ_BURST`] WQEs at a time.
//!
//! **SQ.** When a doorbell was rung, the device reads the SQ's doorbell record (db\[1\] =
//! BE32(pc), a 4-byte DMA read) once, then consumes WQEs from its own consumer counter up to
//! that `pc`. A `pc` more than the ring size ahead is ignored and counted
//! ([`PortCounters::dbr_invalid`]).
//!
//! *Fetch granularity:* the device reads the first WQEBB of a WQE (64 bytes, one DMA read),
//! learns the DS count from the ctrl segment, and if the WQE is larger reads the remaining
//! `ds * 16 - 64` bytes in a second DMA read. A one-WQEBB WQE therefore costs one read request
//! (24 B outbound) and one 64-byte completion (88 B inbound); an MPWQE of N packets costs
//! about 16 B of descriptor per packet plus the overhead of ceil((2+N)*16/64) completions.
//!
//! *Validation*, in this order, each failure answered with an error CQE (opcode REQ_ERR 13,
//! the syndrome of [`WqeError::syndrome`], the model's own reason in `vendor_err_synd`, see
//! [`WqeError::vendor_code`]), after which the SQ enters the error state and stops (no flush
//! CQEs; the driver resets it with [`Device::reset_sq`]):
//! opcode ∈ {NOP, SEND, LSO, ENHANCED_MPSW}; opmod 0; WQE index == the device's consumer
//! counter; SQN == this SQ; DS ≥ 1 (≥ 2 for SEND/LSO, ≥ 3 for MPWQE; the 6-bit field bounds
//! it to 63 DS = 16 WQEBBs); the whole WQE posted (`num_wqebbs ≤ pc − cc`) and not crossing
//! the end of the ring (stricter than hardware, which wraps: it catches a driver that forgot
//! the NOP edge padding); the inline header (`inline_hdr.sz` bytes from byte 30 of the WQE)
//! inside the WQE; SEND has mss 0, LSO mss ≠ 0 and an inline header; MPWQE has no inline header
//! and mss 0; data segments have a non-zero byte count, inline segments a non-zero length that
//! fits in the WQE; a SEND packet (and every MPWQE packet and LSO segment) is between 14 and
//! [`MAX_FRAME`] bytes; an LSO super packet fits the gather buffer and its inline header
//! holds the whole Ethernet/IP/TCP-or-UDP header; finally every data segment address is
//! readable (else LOCAL_PROT). Structural checks all happen before any packet is sent; a read
//! fault inside an MPWQE is found while gathering, so the packets before it have been sent.
//! lkeys are not checked (the model has no memory-key table).
//!
//! `insert.type` and `inline_hdr.sz` share bytes 12–13 of the eth segment: bit 15 set means
//! VLAN insertion (an 802.1Q tag, or 802.1ad if bit 0 is set, with `vlan_tci`), otherwise it
//! is the inline header size. The packet is: inline header, then the segments in order, then
//! the VLAN tag inserted after the MAC addresses. Checksum offload: `cs_flags` L3_CSUM/L4_CSUM
//! fill the outer IPv4 header / TCP-UDP checksums (the outer headers are parsed); the inner
//! flags use the SWP inner offsets (2-byte words) and SWP flags. LSO cuts the payload after the
//! headers into `mss` pieces and fixes lengths, IPv4 ID, TCP sequence and flags and all
//! checksums ([`crate::sim::pkt::fix_segment`]). Frames shorter than 60 bytes are zero-padded
//! to 60 on the wire, as a MAC does. A TX CQE (opcode REQ 0, `wqe_counter` = the WQE's index,
//! `sop_drop_qpn` = SQN) is written only for a WQE whose `fm_ce_se` asks for CQ_UPDATE.
//!
//! **RX.** The receiving port (the peer, or the sender itself in loopback) picks an RQ as
//! "RSS and flow steering" says; no table, no entry or a missing RQ drops
//! ([`PortCounters::rx_no_rq_drops`]). The
//! device caches the RQ's producer counter and reads the RQ doorbell record (db\[0\] =
//! BE32(wqe_ctr)) again only when it has no known free WQE; still none ⇒ drop and count
//! [`PortCounters::rx_out_of_buffer`]. Otherwise it reads the RX WQE (`stride` bytes of data
//! segments; a segment with byte count 0 or the terminating lkey 0x100 ends the list; bit 31 of
//! the byte count, HW_START_PADDING, is ignored), scatters the packet into its buffers and
//! writes an RX CQE (opcode RESP_SEND 2, `byte_cnt`, `wqe_counter` = the RQ's 16-bit consumer
//! counter, `rss_hash_result`/`rss_hash_type`, `hds_ip_ext` L2_OK|L3_OK|L4_OK as verified,
//! `check_sum` = the ones' complement sum of the bytes after the L2 header). A packet longer
//! than the WQE's buffers consumes the WQE and gets an error CQE (RESP_ERR 14, syndrome
//! LOCAL_LENGTH; the RQ stays ready, mlx5e does not recover for it); a write fault gets
//! RESP_ERR with LOCAL_PROT and puts the RQ in error.
//!
//! Beyond the spec's table, RX CQEs also carry `l4_l3_hdr_type` as ConnectX does: bits 6..4
//! L4 type (1 TCP, 2 UDP; 3/4 for a TCP ACK without/with data), bits 3..2 L3 type (1 IPv6,
//! 2 IPv4). VLAN stripping: unless the RQ's `vsd` is set (CREATE_RQ, or MODIFY_RQ with
//! the VSD bit of `modify_bitmask`, RDY -> RDY), a frame whose outer tag is 802.1Q (TPID
//! 0x8100 after the MACs; not 802.1ad) reaches the host without those 4 bytes, and its CQE
//! has the cv bit (bit 0 of `l4_l3_hdr_type`, device.h's `cqe_has_vlan`), the whole TCI in
//! `vlan_info` and `byte_cnt` of the shortened frame
//! ([`PortCounters::rx_vlan_stripped`]); steering, RSS, the checksums and the vport's
//! counters see the frame as it came off the wire. A compression session only takes CQEs
//! whose cv bit and `vlan_info` equal its title's, which carries them for all (mini CQEs
//! have no room for them; mlx5e copies the title). No timestamps, no LRO.
//!
//! **CQ.** The CQE for producer index `pi` goes to slot `pi & mask` with owner bit
//! `(pi >> log_size) & 1`. Before using a slot the device checks room against its cached copy
//! of the consumer index and re-reads the set_ci doorbell record (a 4-byte DMA read) only when
//! the CQ looks full; still full ⇒ CQ overrun: counted, and the CQ enters the error state (later
//! CQEs for it are lost and counted in [`PortCounters::cqes_lost`]).
//!
//! **CQE compression** (basic layout of spec C.5, per CQ at creation). Session rules of this
//! model: consecutive RX completions (RESP_SEND) for the same CQ and RQ, produced within one
//! `process` call, with consecutive `wqe_counter`s and identical fields apart from `byte_cnt`,
//! `check_sum`, the RSS hash fields, `wqe_counter` and `op_own`, form one session of at most
//! [`MAX_SESSION`] CQEs. A session of one is written as a plain CQE. A session of N ≥ 2 at CQ
//! index c is written as: mini-CQE arrays (8 × 8 B, CSUM format: `check_sum` BE16, stride
//! index 0, `byte_cnt` BE32) at slot c+1 for packets 0..7 and at slot c+8j for packets
//! 8j..8j+7, written as each fills; then, last, the title at slot c: packet 0's CQE with
//! `byte_cnt` = N and format 3 in `op_own`, with the owner bit of index c. A session ends at a
//! non-matching CQE for the CQ, when full, and at the end of every `process` call. The
//! session's indices are reserved (room-checked) as its CQEs arrive, but the producer index
//! seen by arming stays at c until the title is written.
//!
//! **Interrupts.** An arm doorbell arms the CQ with its `ci`. An armed CQ fires once, as soon
//! as its visible producer index differs from the armed `ci` (a new CQE written, or CQEs
//! already pending at arm time), then disarms: a completion EQE to its EQ (CQs made by
//! command), or its MSI-X vector directly (CQs made through the Rust API). Every firing
//! counts in [`PortCounters::cq_events`].
//!
//! **CQ moderation** (`cq_period` µs, `cq_max_count`, `cq_period_mode` of the CQ context;
//! CREATE_CQ sets them, MODIFY_CQ changes them on a live CQ). With `cq_period` 0 the CQ fires
//! as above, whatever `cq_max_count` says (a zero period is a timer that has always run
//! out: the model never holds a CQE back on a count alone, which would hide the last CQEs of
//! a burst until the next one). With a period, an armed CQ with `n` CQEs beyond its armed
//! `ci` fires when `n ≥ cq_max_count` (`cq_max_count` 0: no count limit) or when the period
//! has run out, whichever comes first; until then it stays armed and is *held*. The period
//! runs from the timer's start, which is, as the PRM's `cq_period_mode` says: mode 0 (upon
//! event, mlx5e's default) the CQ's last event (its creation before the first), so sparse
//! CQEs fire at once and a busy CQ fires at most once per period unless the count is
//! reached; mode 1 (upon CQE) its last CQE, so an event follows a gap of one period in the
//! CQEs. Time is the device's clock ([`Device::set_clock`], nanoseconds, set by the device
//! host before a run; a host that never sets it leaves period-only moderation held for
//! ever). Held CQs are evaluated again at the start of every engine run, and
//! [`Device::moderation_deadline`] tells the host when the earliest one's period runs out,
//! so it can run the engine then (the device's timer). An event held back and then released
//! by the period counts in [`PortCounters::cq_timer_events`]. A MODIFY_CQ takes effect on the next run (a held
//! CQ is evaluated again under the new values; the timer's start does not change).
//!
//! **PCIe accounting** ([`crate::sim::pcie`], per port, [`Device::totals`] for the device):
//! WQE and doorbell-record reads, packet-data reads (TX gather) and RX WQE reads are DMA reads;
//! received data are DMA writes; each CQE or mini array is one 64-byte write; each interrupt
//! one 4-byte write; each register write one inbound 8-byte TLP. Accesses that fault are
//! accounted too (the transaction was on the bus). [`PortCounters::tx_floor_in_bytes`]
//! accumulates [`crate::sim::pcie::inbound_floor`] of the bytes of every sent packet as the
//! host holds them (headers once for LSO), the floor to compare inbound bytes with.

pub mod cmd;
mod engine;
mod eq;
pub mod ifc;
pub mod pas;
pub mod steer;

pub use pas::Ring;

use crate::dp::hw::{BusMemory, DmaAddr, InterruptSink};
use crate::sim::pcie::PcieCounters;
use crate::sim::wire::{self, PauseEvent, WirePort};
use core::ops::DerefMut;

/// SQs, RQs and CQs per port.
pub const MAX_QUEUES: usize = 64;
/// Maximum entries of the RSS table the device host sets through the Rust API
/// ([`Device::set_rss`]).
pub const MAX_RSS: usize = 64;
const _: () = assert!(MAX_RSS <= u8::MAX as usize);
/// Largest RQ table (RQT) the model implements: `log_max_rqt_size` 8, the 256 entries of
/// mlx5e's indirection table (`MLX5E_INDIR_MIN_RQT_SIZE`).
pub const MAX_RQT_SIZE: usize = 256;
/// Maximum number of ports.
pub const MAX_PORTS: usize = 64;
/// Size of one port's (PCI function's) window in BAR0: port p's starts at
/// `p * FUNC_BAR_SIZE`, with the initialization segment at its offset 0.
pub const FUNC_BAR_SIZE: u32 = 0x10_0000;
/// Size of one UAR page; UAR page u of port p starts at [`uar_offset`]`(p, u)`.
pub const UAR_PAGE_SIZE: u32 = 4096;
/// First UAR index ALLOC_UAR hands out (pages 0 and 1 hold the initialization segment).
pub const FIRST_UAR: u32 = 8;
/// UAR pages ALLOC_UAR hands out per function ([`FIRST_UAR`] ..
/// `FIRST_UAR + MAX_UARS`).
pub const MAX_UARS: u32 = 64;
/// The UAR page of queues created through the Rust API (transitional; never handed out by
/// ALLOC_UAR).
pub const API_UAR: u32 = 2;
/// Offset of the EQ doorbell "update consumer index and arm" in a UAR page (32-bit,
/// `eqn << 24 | ci`).
pub const EQ_ARM_DOORBELL: u32 = 0x40;
/// Offset of the EQ doorbell "update consumer index" (no arm).
pub const EQ_CI_DOORBELL: u32 = 0x48;
/// MSI-X vectors per function: EQ `intr` v of port p raises device vector
/// `p * MAX_VECTORS + v`.
pub const MAX_VECTORS: u32 = 64;
/// Offset of the SQ doorbell (blue-flame register 0) in a UAR page.
pub const SQ_DOORBELL: u32 = 0x800;
/// Offset of the CQ arm doorbell in a UAR page.
pub const CQ_ARM_DOORBELL: u32 = 0x20;
/// First SQ number; SQN = `SQN_BASE + port * 64 + slot`.
pub const SQN_BASE: u32 = 0x1000;
/// First RQ number.
pub const RQN_BASE: u32 = 0x2000;
/// First CQ number.
pub const CQN_BASE: u32 = 0x3000;
/// First TIS number (same encoding as queues).
pub const TISN_BASE: u32 = 0x4000;
/// First RQT number.
pub const RQTN_BASE: u32 = 0x5000;
/// First TIR number.
pub const TIRN_BASE: u32 = 0x6000;
/// First PD number.
pub const PD_BASE: u32 = 0x7000;
/// First transport domain number.
pub const TD_BASE: u32 = 0x8000;
/// First flow table id (NIC RX tables; same encoding as queues).
pub const FT_BASE: u32 = 0x9000;
/// First flow group id.
pub const FG_BASE: u32 = 0xa000;
/// First EQ number; EQ numbers are per function (8 bits): `EQN_BASE + slot`.
pub const EQN_BASE: u32 = 0x40;
/// Largest frame (without FCS) a port sends or receives.
pub const MAX_FRAME: usize = 9728;
/// Minimum scratch buffer for [`Device::new`]: a frame buffer plus a gather buffer of one frame.
pub const MIN_SCRATCH: usize = pas::POOL_BYTES + 2 * MAX_FRAME;
/// Scratch size that lets LSO carry a 64 KiB payload plus headers.
pub const SCRATCH_LEN: usize = pas::POOL_BYTES + MAX_FRAME + 65536 + 1024;
/// Flow control's thresholds (the model's pause quantum is one engine run): see
/// [`crate::sim::wire`].
pub use crate::sim::wire::{PAUSE_STORM, PAUSE_THRESHOLD};
/// WQEs one SQ processes before the engine moves to the next SQ.
pub const SQ_BURST: usize = 64;
/// Maximum CQEs in one compression session.
pub const MAX_SESSION: u32 = 64;

/// mlx5 constants from rsnic-hardware.rst, parts A and C.
pub mod consts {
    /// WQE basic block.
    pub const WQEBB: usize = 64;
    /// DS unit.
    pub const DS: usize = 16;
    /// NOP opcode.
    pub const OP_NOP: u8 = 0x00;
    /// SEND opcode.
    pub const OP_SEND: u8 = 0x0a;
    /// LSO opcode.
    pub const OP_LSO: u8 = 0x0e;
    /// Enhanced multi-packet send WQE opcode.
    pub const OP_ENHANCED_MPSW: u8 = 0x29;
    /// `fm_ce_se` CQ_UPDATE.
    pub const CQ_UPDATE: u8 = 0x08;
    /// Inline segment flag in `byte_count`.
    pub const INLINE_SEG: u32 = 0x8000_0000;
    /// `insert.type` INSERT_VLAN.
    pub const INSERT_VLAN: u16 = 0x8000;
    /// cs_flags: inner L3 checksum.
    pub const CS_L3_INNER: u8 = 0x10;
    /// cs_flags: inner L4 checksum.
    pub const CS_L4_INNER: u8 = 0x20;
    /// cs_flags: L3 checksum.
    pub const CS_L3: u8 = 0x40;
    /// cs_flags: L4 checksum.
    pub const CS_L4: u8 = 0x80;
    /// CQE opcode: requester (TX) completion.
    pub const CQE_REQ: u8 = 0;
    /// CQE opcode: responder send (RX) completion.
    pub const CQE_RESP_SEND: u8 = 2;
    /// CQE opcode: requester error.
    pub const CQE_REQ_ERR: u8 = 13;
    /// CQE opcode: responder error.
    pub const CQE_RESP_ERR: u8 = 14;
    /// CQE opcode: invalid (initial buffer contents).
    pub const CQE_INVALID: u8 = 15;
    /// CQE format "compressed" (op_own bits 3..2).
    pub const CQE_FORMAT_COMPRESSED: u8 = 3;
    /// Syndrome LOCAL_LENGTH.
    pub const SYND_LOCAL_LENGTH: u8 = 0x01;
    /// Syndrome LOCAL_QP_OP.
    pub const SYND_LOCAL_QP_OP: u8 = 0x02;
    /// Syndrome LOCAL_PROT.
    pub const SYND_LOCAL_PROT: u8 = 0x04;
    /// Syndrome WR_FLUSH.
    pub const SYND_WR_FLUSH: u8 = 0x05;
    /// The terminating lkey of an RX scatter list.
    pub const TERMINATE_LKEY: u32 = 0x100;
    /// hds_ip_ext: L2 ok.
    pub const L2_OK: u8 = 0x01;
    /// hds_ip_ext: L3 ok.
    pub const L3_OK: u8 = 0x02;
    /// hds_ip_ext: L4 ok.
    pub const L4_OK: u8 = 0x04;
}

/// Why a control-path command failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmdError {
    /// No such port.
    BadPort,
    /// A parameter is out of range or misaligned.
    BadParam,
    /// The port's table for this queue type is full.
    NoResources,
    /// No such queue (or a queue of another port).
    NoSuchQueue,
    /// The CQ is still used by an SQ or RQ.
    Busy,
}

/// Why the device rejected a send WQE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WqeError {
    /// Opcode not NOP/SEND/LSO/ENHANCED_MPSW.
    BadOpcode,
    /// opmod not 0.
    BadOpmod,
    /// WQE index differs from the device's consumer counter.
    BadIndex,
    /// SQN in the ctrl segment is not this SQ.
    BadSqn,
    /// DS count too small for the opcode.
    BadDsCount,
    /// The WQE extends past the doorbell record's producer counter.
    NotPosted,
    /// The WQE crosses the end of the ring.
    CrossesRingEnd,
    /// Inline header or inline segment does not fit the WQE, or is not allowed here.
    BadInline,
    /// A data segment with byte count 0, or an inline segment of length 0.
    ZeroByteCount,
    /// A packet shorter than an Ethernet header.
    TooShort,
    /// A packet longer than [`MAX_FRAME`] (or an LSO super packet longer than the gather buffer).
    TooLong,
    /// mss set on SEND/MPWQE, or 0 on LSO.
    BadMss,
    /// LSO without a complete, parsable header in the inline part.
    LsoHeaders,
    /// The WQE or a data segment address is not readable.
    ReadFault,
    /// A data segment's lkey is not a memory key of the function (checked once the
    /// function has created one: see [`PortCounters::mkey_errors`]).
    BadLkey,
}

impl WqeError {
    /// The CQE syndrome (spec C.1).
    pub fn syndrome(self) -> u8 {
        use consts::*;
        match self {
            Self::BadOpcode | Self::BadOpmod | Self::BadIndex | Self::BadSqn => SYND_LOCAL_QP_OP,
            Self::BadMss | Self::LsoHeaders => SYND_LOCAL_QP_OP,
            Self::ReadFault | Self::BadLkey => SYND_LOCAL_PROT,
            Self::BadDsCount
            | Self::NotPosted
            | Self::CrossesRingEnd
            | Self::BadInline
            | Self::ZeroByteCount
            | Self::TooShort
            | Self::TooLong => SYND_LOCAL_LENGTH,
        }
    }

    /// The model's own reason code, written to `vendor_err_synd` (byte 54): 1 + the variant's
    /// position in this enum (BadOpcode = 1 … ReadFault = 14).
    pub fn vendor_code(self) -> u8 {
        self as u8 + 1
    }
}

/// State of a work queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueState {
    /// Created or reset by command: doorbells are ignored, no work is done.
    Reset,
    /// Processing work.
    Ready,
    /// Stopped after an error; needs a reset.
    Error,
}

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
    /// Commands answered with a status other than OK.
    pub cmd_errors: u64,
    /// Command entries answered with a delivery error.
    pub cmd_delivery_errors: u64,
    /// EQ doorbell writes (arm and ci).
    pub eq_doorbells: u64,
    /// EQEs written.
    pub eqes: u64,
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
        cmd_errors: 0,
        cmd_delivery_errors: 0,
        eq_doorbells: 0,
        eqes: 0,
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
            cmd_errors,
            cmd_delivery_errors,
            eq_doorbells,
            eqes,
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

/// CQ creation parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CqConfig {
    /// Port that owns the CQ.
    pub port: usize,
    /// Bus address of the CQE buffer (64-byte aligned, 2^log_size × 64 bytes).
    pub buf: DmaAddr,
    /// log2 of the number of CQEs (1..=22).
    pub log_size: u8,
    /// Bus address of the doorbell record (8-byte aligned): db\[0\] set_ci, db\[1\] arm.
    pub dbr: DmaAddr,
    /// MSI-X vector raised when armed.
    pub vector: u16,
    /// Basic CQE compression of RX completions.
    pub compress: bool,
}

/// SQ creation parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqConfig {
    /// Port that owns the SQ.
    pub port: usize,
    /// Bus address of the ring (64-byte aligned, 2^log_size WQEBBs).
    pub buf: DmaAddr,
    /// log2 of the ring size in WQEBBs (0..=15).
    pub log_size: u8,
    /// Bus address of the doorbell record (8-byte aligned; db\[1\] is the producer counter).
    pub dbr: DmaAddr,
    /// Completion queue.
    pub cqn: u32,
}

/// RQ (cyclic) creation parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RqConfig {
    /// Port that owns the RQ.
    pub port: usize,
    /// Bus address of the ring (aligned to the stride, 2^log_size WQEs).
    pub buf: DmaAddr,
    /// log2 of the number of RX WQEs (0..=15).
    pub log_size: u8,
    /// log2 of the WQE stride in bytes (4..=8: 1 to 16 data segments).
    pub log_stride: u8,
    /// Bus address of the doorbell record (8-byte aligned; db\[0\] is wqe_ctr).
    pub dbr: DmaAddr,
    /// Completion queue.
    pub cqn: u32,
}

#[derive(Clone, Copy)]
pub(super) struct SqCtx {
    pub(super) used: bool,
    pub(super) state: QueueState,
    /// The ring's memory.
    pub(super) buf: Ring,
    pub(super) log_size: u8,
    pub(super) dbr: DmaAddr,
    pub(super) cq: u8,
    /// Device consumer counter: index of the next WQE expected.
    pub(super) cc: u16,
    /// Producer counter last read from the doorbell record.
    pub(super) pc: u16,
    /// UAR page (index in the function's window) whose doorbell rings this SQ.
    pub(super) uar: u16,
    /// TIS slot + 1 (0: none, an SQ made through the Rust API).
    pub(super) tis: u8,
    /// PD slot + 1 (0: none).
    pub(super) pd: u8,
    /// `sqc.min_wqe_inline_mode`.
    pub(super) min_inline: u8,
    /// `sqc.flush_in_error_en` (recorded).
    pub(super) flush: bool,
}

impl SqCtx {
    const EMPTY: Self = Self {
        used: false,
        state: QueueState::Ready,
        buf: Ring::contiguous(0),
        log_size: 0,
        dbr: 0,
        cq: 0,
        cc: 0,
        pc: 0,
        uar: 0,
        tis: 0,
        pd: 0,
        min_inline: 0,
        flush: false,
    };
}

#[derive(Clone, Copy)]
pub(super) struct RqCtx {
    pub(super) used: bool,
    pub(super) state: QueueState,
    /// The ring's memory.
    pub(super) buf: Ring,
    pub(super) log_size: u8,
    pub(super) log_stride: u8,
    pub(super) dbr: DmaAddr,
    pub(super) cq: u8,
    pub(super) cc: u16,
    /// wqe_ctr last read from the doorbell record.
    pub(super) posted: u16,
    /// PD slot + 1 (0: none).
    pub(super) pd: u8,
    /// `rqc.flush_in_error_en` (recorded).
    pub(super) flush: bool,
    /// RQTs naming this RQ.
    pub(super) users: u16,
    /// The Q counter (set id; 0: none) that counts the frames it drops for lack of a WQE.
    pub(super) counter: u8,
    /// Strips the C-VLAN tag of received frames (`rqc.vsd` clear), reporting it in the CQE.
    pub(super) strip_vlan: bool,
}

impl RqCtx {
    const EMPTY: Self = Self {
        used: false,
        state: QueueState::Ready,
        buf: Ring::contiguous(0),
        log_size: 0,
        log_stride: 0,
        dbr: 0,
        cq: 0,
        cc: 0,
        posted: 0,
        pd: 0,
        flush: false,
        users: 0,
        counter: 0,
        strip_vlan: false,
    };
}

#[derive(Clone, Copy)]
pub(super) struct Session {
    /// CQEs in the session (0 = none open).
    pub(super) n: u32,
    /// CQ index of the title.
    pub(super) start: u32,
    /// RQ slot the session belongs to.
    pub(super) rq: u8,
    /// wqe_counter of the last CQE added.
    pub(super) last_wc: u16,
    pub(super) title: [u8; 64],
    pub(super) arr: [u8; 64],
}

#[derive(Clone, Copy)]
pub(super) struct CqCtx {
    pub(super) used: bool,
    pub(super) error: bool,
    /// The CQE buffer's memory.
    pub(super) buf: Ring,
    pub(super) log_size: u8,
    pub(super) dbr: DmaAddr,
    /// Vector raised directly when `eq` is 0 (CQs made through the Rust API).
    pub(super) vector: u16,
    /// EQ slot + 1 that gets this CQ's completion EQEs (0: raise `vector` directly).
    pub(super) eq: u8,
    /// UAR page whose arm doorbell arms this CQ.
    pub(super) uar: u16,
    pub(super) compress: bool,
    /// Producer index (CQ indices reserved so far).
    pub(super) pi: u32,
    /// Consumer index last read from set_ci.
    pub(super) ci: u32,
    pub(super) armed: bool,
    pub(super) arm_sn: u8,
    pub(super) arm_ci: u32,
    /// Fired while naming an EQ: a completion EQE is owed to it.
    pub(super) eqe_owed: bool,
    /// SQs and RQs using this CQ.
    pub(super) users: u16,
    pub(super) sess: Session,
    /// CQ moderation (`cq_period`, `cq_max_count`, `cq_period_mode`): see the module's
    /// "Interrupts" section.
    pub(super) moder: Moder,
}

/// A CQ's moderation: when an armed CQ with CQEs pending may fire.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Moder {
    /// `cq_period` in microseconds (12 bits); 0: no moderation, the CQ fires at once.
    pub(super) period: u16,
    /// `cq_max_count` (16 bits); 0: only the period releases an event.
    pub(super) max_count: u16,
    /// `cq_period_mode` 1: the timer restarts with every CQE (else with every event).
    pub(super) cqe_mode: bool,
    /// When the timer last started, in the model's nanoseconds ([`Device::set_clock`]).
    pub(super) start: u64,
    /// Armed with CQEs pending, held back until the count or the period is reached.
    pub(super) held: bool,
}

impl Moder {
    /// When the period runs out (nanoseconds).
    pub(super) fn deadline(&self) -> u64 {
        self.start
            .saturating_add(u64::from(self.period).saturating_mul(1000))
    }

    /// Whether a CQ with `pending` CQEs beyond its armed index may fire at `now`.
    pub(super) fn due(&self, pending: u32, now: u64) -> bool {
        self.period == 0
            || (self.max_count != 0 && pending >= u32::from(self.max_count))
            || now >= self.deadline()
    }
}

impl CqCtx {
    const EMPTY: Self = Self {
        used: false,
        error: false,
        buf: Ring::contiguous(0),
        log_size: 0,
        dbr: 0,
        vector: 0,
        eq: 0,
        uar: 0,
        compress: false,
        pi: 0,
        ci: 0,
        armed: false,
        arm_sn: 0,
        arm_ci: 0,
        eqe_owed: false,
        users: 0,
        moder: Moder {
            period: 0,
            max_count: 0,
            cqe_mode: false,
            start: 0,
            held: false,
        },
        sess: Session {
            n: 0,
            start: 0,
            rq: 0,
            last_wc: 0,
            title: [0; 64],
            arr: [0; 64],
        },
    };

    /// Producer index as the driver can see it (a session's title not yet written hides it).
    pub(super) fn visible_pi(&self) -> u32 {
        if self.sess.n > 0 {
            self.sess.start
        } else {
            self.pi
        }
    }
}

/// An event queue (eq.c semantics, see the module documentation).
#[derive(Clone, Copy)]
pub(super) struct EqCtx {
    pub(super) used: bool,
    /// Overrun: nothing more is written until the EQ is destroyed.
    pub(super) error: bool,
    /// The EQE buffer's memory.
    pub(super) buf: Ring,
    pub(super) log_size: u8,
    pub(super) uar: u16,
    /// MSI-X vector index within the function.
    pub(super) intr: u16,
    /// Producer index (EQEs written).
    pub(super) pi: u32,
    /// Consumer index from the last EQ doorbell (24 bits).
    pub(super) ci: u32,
    pub(super) armed: bool,
    /// `event_bitmask` has MLX5_EVENT_TYPE_PORT_CHANGE.
    pub(super) port_events: bool,
    /// `event_bitmask` has MLX5_EVENT_TYPE_CMD: command completions are reported here.
    pub(super) cmd_events: bool,
    /// `event_bitmask` has MLX5_EVENT_TYPE_PAGE_REQUEST: page requests are reported here.
    pub(super) page_events: bool,
    /// CQs naming this EQ.
    pub(super) users: u16,
}

impl EqCtx {
    const EMPTY: Self = Self {
        used: false,
        error: false,
        buf: Ring::contiguous(0),
        log_size: 0,
        uar: 0,
        intr: 0,
        pi: 0,
        ci: 0,
        armed: false,
        port_events: false,
        cmd_events: false,
        page_events: false,
        users: 0,
    };
}

/// A transport interface send object.
#[derive(Clone, Copy)]
pub(super) struct TisCtx {
    pub(super) used: bool,
    /// Transport domain slot.
    pub(super) td: u8,
    /// SQs naming this TIS.
    pub(super) users: u16,
}

/// An RQ table.
#[derive(Clone, Copy)]
pub(super) struct RqtCtx {
    pub(super) used: bool,
    pub(super) max: u16,
    pub(super) len: u16,
    /// RQ slots.
    pub(super) rqs: [u8; MAX_RQT_SIZE],
    /// TIRs naming this RQT.
    pub(super) users: u16,
}

/// A transport interface receive object.
#[derive(Clone, Copy)]
pub(super) struct TirCtx {
    pub(super) used: bool,
    /// Indirect (RSS through `rqt`) or direct (`inline_rq`).
    pub(super) indirect: bool,
    pub(super) rqt: u8,
    pub(super) inline_rq: u8,
    pub(super) td: u8,
    pub(super) key: [u8; 40],
    /// `rx_hash_field_selector_outer`.
    pub(super) sel: crate::sim::pkt::HashSel,
    /// `rx_hash_symmetric`: both directions of a flow hash alike.
    pub(super) symmetric: bool,
    /// `rx_hash_fn` inverted XOR8 (else Toeplitz).
    pub(super) xor8: bool,
    /// Flow table entries forwarding to this TIR.
    pub(super) users: u16,
}

/// A flow table (CREATE_FLOW_TABLE; NIC RX only).
#[derive(Clone, Copy)]
pub(super) struct FtCtx {
    pub(super) used: bool,
    /// log2 of its flow indices.
    pub(super) log_size: u8,
    /// Its level (a miss goes to a table of a higher level only).
    pub(super) level: u8,
    /// The table a miss goes to (slot + 1; 0: the default miss action, dropped).
    pub(super) miss: u8,
    /// Flow groups in it.
    pub(super) users: u16,
    /// Entries and tables that forward to it (as destination or miss table).
    pub(super) refs: u16,
    /// Its entries' run in the port's order of entries ([`RxRule`]).
    pub(super) first: u8,
    pub(super) count: u8,
}

/// Most tables a frame goes through (root, then its miss table or an entry's destination
/// table, and so on; levels rise along the way, so a walk ends: bounded all the same).
pub(super) const MAX_CHAIN: usize = 16;
/// The deepest flow table level (`max_ft_level`).
pub const MAX_FT_LEVEL: u32 = 63;
/// Bytes of the match parameter the model matches on: the outer headers
/// (`fte_match_set_lyr_2_4`), the first 64 bytes of `fte_match_param`.
pub const MATCH_LEN: usize = 64;

/// A flow group (CREATE_FLOW_GROUP): a range of a table's flow indices whose entries match
/// the fields its criteria mask.
#[derive(Clone, Copy)]
pub(super) struct FgCtx {
    pub(super) used: bool,
    /// Its table's slot.
    pub(super) table: u8,
    /// Its flow indices, `start..=end`.
    pub(super) start: u32,
    pub(super) end: u32,
    /// The outer-header criteria (`match_criteria.outer_headers`): the bits compared.
    pub(super) mask: [u8; MATCH_LEN],
    /// Entries in it.
    pub(super) users: u16,
}

/// What a flow table entry does with a frame it matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Dest {
    /// Forward to a TIR (slot).
    Tir(u8),
    /// Forward to a flow table (slot) of a higher level.
    Table(u8),
    /// Drop (`MLX5_FLOW_CONTEXT_ACTION_DROP`).
    Drop,
}

/// A flow table entry (SET_FLOW_TABLE_ENTRY).
#[derive(Clone, Copy)]
pub(super) struct FteCtx {
    pub(super) used: bool,
    /// Its table's and group's slots.
    pub(super) table: u8,
    pub(super) group: u8,
    pub(super) index: u32,
    /// The group's criteria, copied for the per-frame check, and the entry's values under
    /// them (`value & mask`); bytes `lo..hi` hold every masked bit.
    pub(super) mask: [u8; MATCH_LEN],
    pub(super) value: [u8; MATCH_LEN],
    pub(super) lo: u8,
    pub(super) hi: u8,
    pub(super) dest: Dest,
}

impl FteCtx {
    /// Whether a frame whose outer headers are `img` ([`steer::image`]) matches. Per frame:
    /// at most [`MATCH_LEN`] byte compares, no allocation.
    pub(super) fn matches(&self, img: &[u8; MATCH_LEN]) -> bool {
        let (lo, hi) = (usize::from(self.lo), usize::from(self.hi).min(MATCH_LEN));
        let r = lo.min(hi)..hi;
        match (
            img.get(r.clone()),
            self.mask.get(r.clone()),
            self.value.get(r),
        ) {
            (Some(i), Some(m), Some(v)) => i.iter().zip(m).zip(v).all(|((i, m), v)| i & m == *v),
            _ => false,
        }
    }
}

/// One place of the order in which a port's flow table entries are looked at
/// ([`Tables::refresh_rx`]): the entry's slot + 1 (0: none). Each table's entries are a run
/// of it, by flow index ([`FtCtx::first`], [`FtCtx::count`]).
#[derive(Clone, Copy)]
pub(super) struct RxRule {
    pub(super) fte: u8,
}

/// State of one port: link, RSS table, work flags, counters, and the function's command
/// interface state. Opaque; create with [`Port::new`] and hand a slice of them to
/// [`Device::new`].
pub struct Port {
    /// The port's administrative state (PAOS, or [`Device::set_link`] from the device host).
    link_up: bool,
    /// The Rust API's RSS table ([`Device::set_rss`]; RQ slots).
    rss: [u8; MAX_RSS],
    /// Entries of `rss` in use (at most [`MAX_RSS`]; a byte keeps the port's entry small).
    rss_len: u8,
    /// Received frames go through the Rust API's table (it was written after the last
    /// command that changed the steering).
    rx_api: bool,
    /// No root flow table: the first indirect TIR hashes every frame over its addresses
    /// and TCP/UDP ports, whatever its field selector (the model before flow tables).
    rx_legacy: bool,
    /// The RQ slots a received frame can reach (flow control checks them).
    rx_rqs: u64,
    /// SQs with a doorbell whose record has not been read yet.
    sq_doorbell: u64,
    /// SQs with WQEs between cc and the last read pc.
    sq_active: u64,
    /// SQs paused by flow control until the next engine run.
    sq_paused: u64,
    /// Flow control (PFCC `pprx`: `rx`, `pptx`: `tx`; the pause quantum is one engine run).
    pause: wire::Pause,
    /// Deliver transmitted frames to this port's own receive side ([`Device::set_loopback`]).
    loopback: bool,
    /// CQs with an arm request to evaluate.
    arm_pending: u64,
    /// CQs held back by moderation, evaluated again at the start of every engine run.
    moder_wait: u64,
    /// EQs with an arm request to evaluate.
    eq_arm_pending: u64,
    /// CQs that name an EQ (0: the EQ pass after an engine run has nothing to look at).
    eq_cqs: u16,
    counters: PortCounters,
    func: cmd::Func,
    /// Faults waiting for the event they apply to ([`Device::inject`]).
    faults: Faults,
}

/// A fault the device host injects into a port ([`Device::inject`]), for tests of the
/// driver's recovery: each applies once, to the next event of its kind on the port
/// ([`Fault::TxStall`] and [`Fault::DevStop`] last until the driver resets or destroys a
/// queue, or the host ends them: [`Device::end_fault`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The next WQE any SQ of the port executes fails: an error CQE (REQ_ERR) with this
    /// syndrome, and the SQ enters the error state.
    TxErrCqe(u8),
    /// The next frame the port receives completes with an error CQE (RESP_ERR) with this
    /// syndrome; the RQ enters the error state for LOCAL_QP_OP, LOCAL_PROT and WR_FLUSH (the
    /// syndromes after which mlx5e recovers the RQ); for any other (LOCAL_LENGTH, as for a
    /// frame too long, or a remote error) the WQE is consumed and the RQ goes on.
    RxErrCqe(u8),
    /// The next RX CQE of the port carries a wrong `wqe_counter` (a corrupt CQE: the RQ
    /// goes on as if nothing happened).
    RxBadWqeCounter,
    /// The next N interrupts of the port's EQs are lost: each EQ disarms as if it had
    /// fired, and its vector is not raised (the EQEs wait until the driver polls the EQ).
    DropIrqs(u32),
    /// The port's SQs execute nothing (their doorbells are latched) until one of them goes
    /// through RST or is destroyed, as a hung transmit engine.
    TxStall,
    /// The next TX CQE of the port names another SQ (a corrupt CQE).
    TxBadSqn,
    /// The next TX CQE the port writes (good or error) carries the owner bit of the
    /// previous pass (a corrupt CQE): the driver reads its slot as still the hardware's and
    /// stops there, the CQEs after it wait behind it. Otherwise the CQE is what it would
    /// have been; counted in [`PortCounters::faults_injected`] when written (one a CQ in
    /// error loses does not take it). Nothing of it stays in the model: the CQ's producer
    /// index moved on as for any CQE, so a CQ made again (destroy, create) starts clean,
    /// while an SQ reset leaves the CQ, and the corrupt CQE in it, as they are.
    TxBadOwner,
    /// The next RX CQE of the port claims more bytes than any buffer holds (a corrupt
    /// CQE).
    RxBadByteCount,
    /// The next read of packet data by an SQ of the port faults (as an unmapped address
    /// would): the WQE fails with LOCAL_PROT and the SQ enters the error state.
    DmaReadFault,
    /// The port's whole data path hangs: no WQE of any of its SQs is executed (doorbells are
    /// latched), frames arriving at the port are dropped and counted in
    /// [`PortCounters::rx_stopped`], no CQE is written, no CQ or EQ arm of the port is
    /// evaluated (it waits), no EQE (completion or PORT_CHANGE: a change is reported after
    /// the stop) and no interrupt, until an SQ or RQ of the port goes to RST (MODIFY_SQ /
    /// MODIFY_RQ, [`Device::reset_sq`], [`Device::reset_rq`]) or is destroyed. Commands keep
    /// working (the control path is alive). Counted in [`PortCounters::faults_injected`]
    /// once, the first time the port holds something back (a WQE or a frame).
    DevStop,
}

/// The faults waiting on a port.
#[derive(Clone, Copy, Debug, Default)]
struct Faults {
    tx_err: Option<u8>,
    rx_err: Option<u8>,
    rx_bad_wc: bool,
    drop_irqs: u32,
    tx_stall: bool,
    tx_bad_sqn: bool,
    tx_bad_owner: bool,
    rx_bad_len: bool,
    dma_read: bool,
    /// The data path is stopped ([`Fault::DevStop`]).
    dev_stop: bool,
    /// The stop held something back (it was counted).
    dev_stop_hit: bool,
}

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
            PauseEvent::Storm => c.pause_storms += 1,
            PauseEvent::Sent => c.tx_pause_frames += 1,
            PauseEvent::Received => c.rx_pause_frames += 1,
        }
    }
}

impl Port {
    /// A port with link up and no queues, its function disabled (no command queue yet).
    pub const fn new() -> Self {
        Self {
            link_up: true,
            rss: [0; MAX_RSS],
            rss_len: 0,
            rx_api: false,
            rx_legacy: false,
            rx_rqs: 0,
            sq_doorbell: 0,
            sq_active: 0,
            sq_paused: 0,
            pause: wire::Pause::new(true),
            loopback: false,
            arm_pending: 0,
            moder_wait: 0,
            eq_arm_pending: 0,
            eq_cqs: 0,
            counters: PortCounters::ZERO,
            func: cmd::Func::NEW,
            faults: Faults {
                tx_err: None,
                rx_err: None,
                rx_bad_wc: false,
                drop_irqs: 0,
                tx_stall: false,
                tx_bad_sqn: false,
                tx_bad_owner: false,
                rx_bad_len: false,
                dma_read: false,
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

    /// The driver reset (RST) or destroyed a queue of the port: a stop ends.
    fn restart(&mut self) {
        self.faults.dev_stop = false;
        self.faults.dev_stop_hit = false;
    }
}

/// One row of the queue tables: an SQ, an RQ, a CQ, an EQ, a TIS, an RQT, a TIR, a flow
/// table, a flow group and a flow table entry context (under a kilobyte, so the tables can
/// be built entry by entry without a large value on the stack). A device needs
/// [`MAX_QUEUES`] of them per port; slot i of port p is entry `p * MAX_QUEUES + i`.
#[derive(Clone, Copy)]
pub struct QueueSet {
    sq: SqCtx,
    rq: RqCtx,
    cq: CqCtx,
    eq: EqCtx,
    tis: TisCtx,
    rqt: RqtCtx,
    tir: TirCtx,
    ft: FtCtx,
    fg: FgCtx,
    fte: FteCtx,
    /// The port's rule in this row's place of the checking order.
    rx_rule: RxRule,
}

impl QueueSet {
    /// An unused row.
    pub const EMPTY: Self = Self {
        sq: SqCtx::EMPTY,
        rq: RqCtx::EMPTY,
        cq: CqCtx::EMPTY,
        eq: EqCtx::EMPTY,
        tis: TisCtx {
            used: false,
            td: 0,
            users: 0,
        },
        rqt: RqtCtx {
            used: false,
            max: 0,
            len: 0,
            rqs: [0; MAX_RQT_SIZE],
            users: 0,
        },
        tir: TirCtx {
            used: false,
            indirect: false,
            rqt: 0,
            inline_rq: 0,
            td: 0,
            key: [0; 40],
            sel: crate::sim::pkt::HashSel {
                ipv6: false,
                udp: false,
                src_ip: false,
                dst_ip: false,
                sport: false,
                dport: false,
            },
            symmetric: false,
            xor8: false,
            users: 0,
        },
        ft: FtCtx {
            used: false,
            log_size: 0,
            level: 0,
            miss: 0,
            users: 0,
            refs: 0,
            first: 0,
            count: 0,
        },
        fg: FgCtx {
            used: false,
            table: 0,
            start: 0,
            end: 0,
            mask: [0; MATCH_LEN],
            users: 0,
        },
        fte: FteCtx {
            used: false,
            table: 0,
            group: 0,
            index: 0,
            mask: [0; MATCH_LEN],
            value: [0; MATCH_LEN],
            lo: 0,
            hi: 0,
            dest: Dest::Drop,
        },
        rx_rule: RxRule { fte: 0 },
    };
}

impl Default for QueueSet {
    fn default() -> Self {
        Self::EMPTY
    }
}

/// What the device supports, given by the device host at creation ([`Device::with_caps`]);
/// reported through QUERY_HCA_CAP and enforced by the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// Enhanced multi-packet send WQEs (`enhanced_multi_pkt_send_wqe`): without it an
    /// ENHANCED_MPSW WQE gets an error CQE (bad opcode) and `allow_multi_pkt_send_wqe` in an
    /// SQ context is refused.
    pub mpwqe: bool,
    /// Minimum WQE inline mode the device requires (0 none, 1 L2, 2 IP, 3 TCP/UDP): an SQ
    /// created with a lower `min_wqe_inline_mode` is refused (BAD_PARAM). Reported as
    /// `wqe_inline_mode` = 0 (L2 required) when 1, 2 (not required) when 0, 1 (vport
    /// context) otherwise; QUERY_NIC_VPORT_CONTEXT returns the mode itself. On an SQ with a
    /// mode, a SEND or LSO WQE needs at least the Ethernet header inline and every packet of
    /// an ENHANCED_MPSW WQE must be an inline segment (a packet by address is refused:
    /// BadInline).
    pub min_inline: u8,
    /// Basic CQE compression (`cqe_compression`): without it `cqe_comp_en` is refused.
    pub cqe_compression: bool,
    /// log2 of the largest CQ (CQEs), at most 22.
    pub log_max_cq_sz: u8,
    /// log2 of the largest SQ/RQ (WQEs / WQEBBs), at most 15.
    pub log_max_wq_sz: u8,
    /// log2 of the largest EQ (EQEs), at most 22.
    pub log_max_eq_sz: u8,
    /// log2 of the largest RQ table, at most log2([`MAX_RQT_SIZE`]).
    pub log_max_rqt_size: u8,
}

impl Caps {
    /// Everything the model implements.
    pub const FULL: Self = Self {
        mpwqe: true,
        min_inline: 0,
        cqe_compression: true,
        log_max_cq_sz: 22,
        log_max_wq_sz: 15,
        log_max_eq_sz: 22,
        log_max_rqt_size: 8,
    };

    fn sane(&self) -> bool {
        self.min_inline <= 3
            && (1..=22).contains(&self.log_max_cq_sz)
            && self.log_max_wq_sz <= 15
            && (1..=22).contains(&self.log_max_eq_sz)
            && (1usize << self.log_max_rqt_size) <= MAX_RQT_SIZE
    }
}

impl Default for Caps {
    fn default() -> Self {
        Self::FULL
    }
}

/// The simulated device.
///
/// `P` holds the ports and `Q` the queue tables (`ports.len() * MAX_QUEUES` entries of
/// [`QueueSet::EMPTY`]); the host passes `Vec`s, the kernel `KVec`s. `B` is scratch memory
/// for gathering and segmenting packets, at least [`MIN_SCRATCH`] bytes ([`SCRATCH_LEN`] to
/// carry 64 KiB LSO payloads): the first [`MAX_FRAME`] bytes build output frames, the rest
/// gathers a WQE's packet; the command processor borrows it before the engine runs.
pub struct Device<P, Q, B> {
    ports: P,
    queues: Q,
    scratch: B,
    wqe: [u8; 1024],
    bad_mmio: u64,
    caps: Caps,
    /// The clock of CQ moderation, nanoseconds ([`Device::set_clock`]).
    now: u64,
}

pub(super) fn split_qn(qn: u32, base: u32) -> Option<(usize, usize)> {
    let rel = qn.checked_sub(base)? as usize;
    let port = rel / MAX_QUEUES;
    if port >= MAX_PORTS {
        return None;
    }
    Some((port, rel % MAX_QUEUES))
}

pub(super) fn make_qn(base: u32, port: usize, slot: usize) -> u32 {
    base + (port * MAX_QUEUES + slot) as u32
}

/// BAR0 offset of UAR page `uar` of port (function) `port`.
pub const fn uar_offset(port: usize, uar: u32) -> u32 {
    (port as u32)
        .wrapping_mul(FUNC_BAR_SIZE)
        .wrapping_add(uar.wrapping_mul(UAR_PAGE_SIZE))
}

/// BAR0 offset of the UAR page that rings the queues created through the Rust API
/// ([`Device::create_cq`], [`Device::create_sq`]) of `port`: page [`API_UAR`] of its window.
/// Transitional, for the driver that still creates its queues through the Rust API.
pub const fn api_uar_offset(port: usize) -> u32 {
    uar_offset(port, API_UAR)
}

fn row(q: &[QueueSet], port: usize, slot: usize) -> Option<&QueueSet> {
    if slot >= MAX_QUEUES {
        return None;
    }
    q.get(port * MAX_QUEUES + slot)
}

/// The tables of a device, borrowed apart from its scratch memory so that the command
/// processor can use both.
pub(super) struct Tables<'a> {
    pub(super) ports: &'a mut [Port],
    pub(super) queues: &'a mut [QueueSet],
    /// The page-list pool ([`pas`]): the first [`pas::POOL_BYTES`] of the scratch memory.
    pub(super) pool: &'a mut [u8],
    /// The model's clock ([`Device::set_clock`]), nanoseconds.
    pub(super) now: u64,
}

impl Tables<'_> {
    pub(super) fn port_mut(&mut self, port: usize) -> Result<&mut Port, CmdError> {
        self.ports.get_mut(port).ok_or(CmdError::BadPort)
    }

    pub(super) fn row(&self, port: usize, slot: usize) -> Option<&QueueSet> {
        row(self.queues, port, slot)
    }

    pub(super) fn row_mut(&mut self, port: usize, slot: usize) -> Result<&mut QueueSet, CmdError> {
        if slot >= MAX_QUEUES {
            return Err(CmdError::NoSuchQueue);
        }
        self.queues
            .get_mut(port * MAX_QUEUES + slot)
            .ok_or(CmdError::NoSuchQueue)
    }

    pub(super) fn free_slot(
        &self,
        port: usize,
        used: impl Fn(&QueueSet) -> bool,
    ) -> Result<usize, CmdError> {
        (0..MAX_QUEUES)
            .find(|&i| self.row(port, i).is_some_and(|r| !used(r)))
            .ok_or(CmdError::NoResources)
    }

    /// (port, slot) of an object number of kind `base` that `used` says exists.
    pub(super) fn loc(
        &self,
        qn: u32,
        base: u32,
        used: impl Fn(&QueueSet) -> bool,
    ) -> Result<(usize, usize), CmdError> {
        let (p, slot) = split_qn(qn, base).ok_or(CmdError::NoSuchQueue)?;
        match self.row(p, slot) {
            Some(r) if used(r) && p < self.ports.len() => Ok((p, slot)),
            _ => Err(CmdError::NoSuchQueue),
        }
    }

    pub(super) fn cq_loc(&self, cqn: u32) -> Result<(usize, usize), CmdError> {
        self.loc(cqn, CQN_BASE, |r| r.cq.used)
    }

    pub(super) fn sq_loc(&self, sqn: u32) -> Result<(usize, usize), CmdError> {
        self.loc(sqn, SQN_BASE, |r| r.sq.used)
    }

    pub(super) fn rq_loc(&self, rqn: u32) -> Result<(usize, usize), CmdError> {
        self.loc(rqn, RQN_BASE, |r| r.rq.used)
    }

    /// The CQ slot of `cqn` if it belongs to `port`.
    pub(super) fn cq_of_port(&self, port: usize, cqn: u32) -> Result<usize, CmdError> {
        match self.cq_loc(cqn)? {
            (p, slot) if p == port => Ok(slot),
            _ => Err(CmdError::NoSuchQueue),
        }
    }

    /// Creates a CQ in `uar` signalling through EQ slot `eq` (+1; 0 = `cfg.vector`).
    pub(super) fn create_cq(&mut self, cfg: &CqConfig, uar: u16, eq: u8) -> Result<u32, CmdError> {
        if cfg.log_size > 22 || cfg.buf % 64 != 0 || cfg.dbr % 8 != 0 {
            return Err(CmdError::BadParam);
        }
        self.port_mut(cfg.port)?;
        let slot = self.free_slot(cfg.port, |r| r.cq.used)?;
        if eq != 0 {
            self.row_mut(cfg.port, usize::from(eq - 1))?.eq.users += 1;
            self.port_mut(cfg.port)?.eq_cqs += 1;
        }
        let now = self.now;
        let cq = &mut self.row_mut(cfg.port, slot)?.cq;
        *cq = CqCtx::EMPTY;
        // The moderation timer starts with the CQ (an event-mode CQ's first event waits
        // for the period like any other).
        cq.moder.start = now;
        cq.used = true;
        cq.buf = Ring::contiguous(cfg.buf);
        cq.log_size = cfg.log_size;
        cq.dbr = cfg.dbr;
        cq.vector = cfg.vector;
        cq.eq = eq;
        cq.uar = uar;
        cq.compress = cfg.compress;
        Ok(make_qn(CQN_BASE, cfg.port, slot))
    }

    pub(super) fn destroy_cq(&mut self, cqn: u32) -> Result<(), CmdError> {
        let (p, slot) = self.cq_loc(cqn)?;
        let row = self.row_mut(p, slot)?;
        if row.cq.users != 0 {
            return Err(CmdError::Busy);
        }
        let eq = row.cq.eq;
        let ring = row.cq.buf;
        row.cq = CqCtx::EMPTY;
        pas::free(self.pool, &ring);
        if eq != 0 {
            if let Ok(r) = self.row_mut(p, usize::from(eq - 1)) {
                r.eq.users = r.eq.users.saturating_sub(1);
            }
        }
        let port = self.port_mut(p)?;
        if eq != 0 {
            port.eq_cqs = port.eq_cqs.saturating_sub(1);
        }
        port.arm_pending &= !(1u64 << slot);
        port.moder_wait &= !(1u64 << slot);
        Ok(())
    }

    /// Creates an SQ in `state`; `extra` carries what only commands set.
    pub(super) fn create_sq(
        &mut self,
        cfg: &SqConfig,
        state: QueueState,
        extra: SqCtx,
    ) -> Result<u32, CmdError> {
        if cfg.log_size > 15 || cfg.buf % 64 != 0 || cfg.dbr % 8 != 0 {
            return Err(CmdError::BadParam);
        }
        self.port_mut(cfg.port)?;
        let cq = self.cq_of_port(cfg.port, cfg.cqn)?;
        let slot = self.free_slot(cfg.port, |r| r.sq.used)?;
        self.row_mut(cfg.port, slot)?.sq = SqCtx {
            used: true,
            state,
            buf: Ring::contiguous(cfg.buf),
            log_size: cfg.log_size,
            dbr: cfg.dbr,
            cq: cq as u8,
            cc: 0,
            pc: 0,
            ..extra
        };
        self.row_mut(cfg.port, cq)?.cq.users += 1;
        if extra.tis != 0 {
            self.row_mut(cfg.port, usize::from(extra.tis - 1))?
                .tis
                .users += 1;
        }
        Ok(make_qn(SQN_BASE, cfg.port, slot))
    }

    fn release_cq(&mut self, port: usize, cq: usize) {
        if let Ok(r) = self.row_mut(port, cq) {
            r.cq.users = r.cq.users.saturating_sub(1);
        }
    }

    pub(super) fn destroy_sq(&mut self, sqn: u32) -> Result<(), CmdError> {
        let (p, slot) = self.sq_loc(sqn)?;
        let row = self.row_mut(p, slot)?;
        let cq = usize::from(row.sq.cq);
        let tis = row.sq.tis;
        let ring = row.sq.buf;
        row.sq = SqCtx::EMPTY;
        pas::free(self.pool, &ring);
        self.release_cq(p, cq);
        if tis != 0 {
            if let Ok(r) = self.row_mut(p, usize::from(tis - 1)) {
                r.tis.users = r.tis.users.saturating_sub(1);
            }
        }
        let port = self.port_mut(p)?;
        port.sq_doorbell &= !(1u64 << slot);
        port.sq_active &= !(1u64 << slot);
        // Destroying an SQ restarts a stalled transmit engine, as a reset does.
        port.faults.tx_stall = false;
        port.restart();
        Ok(())
    }

    /// Puts an SQ in `state`; RST and RDY restart its counters at 0. RST ends a stall or a
    /// stop of the port ([`Fault::TxStall`], [`Fault::DevStop`]).
    pub(super) fn set_sq_state(&mut self, sqn: u32, state: QueueState) -> Result<(), CmdError> {
        let (p, slot) = self.sq_loc(sqn)?;
        let sq = &mut self.row_mut(p, slot)?.sq;
        let old = sq.state;
        sq.state = state;
        if state != QueueState::Error && old != QueueState::Ready {
            sq.cc = 0;
            sq.pc = 0;
        }
        // Leaving or entering RDY: pending doorbells are forgotten.
        if state != QueueState::Ready || old != QueueState::Ready {
            let port = self.port_mut(p)?;
            port.sq_doorbell &= !(1u64 << slot);
            port.sq_active &= !(1u64 << slot);
            // A reset restarts a stalled transmit engine and a stopped data path (injected
            // faults).
            if state == QueueState::Reset {
                port.faults.tx_stall = false;
                port.restart();
            }
        }
        Ok(())
    }

    /// Creates a cyclic RQ in `state`.
    pub(super) fn create_rq(
        &mut self,
        cfg: &RqConfig,
        state: QueueState,
        pd: u8,
        flush: bool,
    ) -> Result<u32, CmdError> {
        if cfg.log_size > 15
            || !(4..=8).contains(&cfg.log_stride)
            || cfg.buf % (1u64 << cfg.log_stride) != 0
            || cfg.dbr % 8 != 0
        {
            return Err(CmdError::BadParam);
        }
        self.port_mut(cfg.port)?;
        let cq = self.cq_of_port(cfg.port, cfg.cqn)?;
        let slot = self.free_slot(cfg.port, |r| r.rq.used)?;
        self.row_mut(cfg.port, slot)?.rq = RqCtx {
            used: true,
            state,
            buf: Ring::contiguous(cfg.buf),
            log_size: cfg.log_size,
            log_stride: cfg.log_stride,
            dbr: cfg.dbr,
            cq: cq as u8,
            cc: 0,
            posted: 0,
            pd,
            flush,
            users: 0,
            counter: 0,
            strip_vlan: false,
        };
        self.row_mut(cfg.port, cq)?.cq.users += 1;
        Ok(make_qn(RQN_BASE, cfg.port, slot))
    }

    pub(super) fn destroy_rq(&mut self, rqn: u32) -> Result<(), CmdError> {
        let (p, slot) = self.rq_loc(rqn)?;
        let row = self.row_mut(p, slot)?;
        let cq = usize::from(row.rq.cq);
        let ring = row.rq.buf;
        row.rq = RqCtx::EMPTY;
        pas::free(self.pool, &ring);
        self.release_cq(p, cq);
        let port = self.port_mut(p)?;
        // Keep the Rust API table's order, drop the entries of this RQ.
        let mut w = 0;
        for r in 0..usize::from(port.rss_len).min(MAX_RSS) {
            let e = port.rss[r];
            if usize::from(e) != slot {
                port.rss[w] = e;
                w += 1;
            }
        }
        port.rss_len = w as u8;
        port.restart();
        self.refresh_rx(p, false);
        Ok(())
    }

    /// Puts an RQ in `state`; RST and RDY from another state restart its counters at 0. RST
    /// ends a stop of the port ([`Fault::DevStop`]).
    pub(super) fn set_rq_state(&mut self, rqn: u32, state: QueueState) -> Result<(), CmdError> {
        let (p, slot) = self.rq_loc(rqn)?;
        let rq = &mut self.row_mut(p, slot)?.rq;
        if state != QueueState::Error && rq.state != QueueState::Ready {
            rq.cc = 0;
            rq.posted = 0;
        }
        rq.state = state;
        if state == QueueState::Reset {
            self.port_mut(p)?.restart();
        }
        Ok(())
    }

    pub(super) fn set_rss(&mut self, port: usize, rqns: &[u32]) -> Result<(), CmdError> {
        if rqns.len() > MAX_RSS {
            return Err(CmdError::BadParam);
        }
        let mut table = [0u8; MAX_RSS];
        for (i, &rqn) in rqns.iter().enumerate() {
            let (p, slot) = self.rq_loc(rqn)?;
            if p != port {
                return Err(CmdError::NoSuchQueue);
            }
            table[i] = slot as u8;
        }
        let pt = self.port_mut(port)?;
        pt.rss = table;
        // At most MAX_RSS (64), checked above.
        pt.rss_len = rqns.len() as u8;
        pt.rx_api = true;
        self.refresh_rx(port, false);
        Ok(())
    }

    /// Recomputes where port `p`'s received frames go: the order in which its flow table
    /// entries are looked at (by table, then flow index; each table's run in
    /// [`FtCtx::first`] / [`FtCtx::count`]), whether it steers by flow tables (a root table)
    /// or by its first indirect TIR (none), and the RQs frames can reach (every RQ behind a
    /// TIR an entry forwards to, or the first indirect TIR's). `by_commands`: a command
    /// changed the steering, which takes the port back from the Rust API's table. Control
    /// path only (it scans the port's rows).
    pub(super) fn refresh_rx(&mut self, p: usize, by_commands: bool) {
        let Some(pt) = self.ports.get(p) else {
            return;
        };
        let (root, first) = (pt.func.root_ft, pt.func.rss_tir);
        // Entries by (table, index): a selection sort over the port's rows, bounded.
        let mut order = [0u8; MAX_QUEUES];
        let mut n = 0usize;
        let mut last: Option<(u8, u32)> = None;
        while n < MAX_QUEUES {
            let mut next: Option<((u8, u32), usize)> = None;
            for i in 0..MAX_QUEUES {
                let Some(e) = self.row(p, i).map(|r| r.fte).filter(|e| e.used) else {
                    continue;
                };
                let at = (e.table, e.index);
                if last.map_or(true, |l| at > l) && next.map_or(true, |(b, _)| at < b) {
                    next = Some((at, i));
                }
            }
            let Some((at, slot)) = next else {
                break;
            };
            last = Some(at);
            if let Some(o) = order.get_mut(n) {
                *o = (slot as u8).wrapping_add(1);
            }
            n += 1;
        }
        for t in 0..MAX_QUEUES {
            let run: Option<(usize, usize)> = {
                let mut it = order.iter().take(n).enumerate().filter(|(_, &f)| {
                    self.row(p, usize::from(f.wrapping_sub(1)))
                        .is_some_and(|r| usize::from(r.fte.table) == t)
                });
                it.next().map(|(k, _)| (k, 1 + it.count()))
            };
            if let Ok(r) = self.row_mut(p, t) {
                let (f, c) = run.unwrap_or((0, 0));
                r.ft.first = f as u8;
                r.ft.count = c as u8;
            }
        }
        for (i, &f) in order.iter().enumerate() {
            if let Ok(row) = self.row_mut(p, i) {
                row.rx_rule = RxRule {
                    fte: if i < n { f } else { 0 },
                };
            }
        }
        // The RQs behind every TIR frames can reach.
        let mut rqs = 0u64;
        let add_tir = |q: &[QueueSet], tir: usize, rqs: &mut u64| {
            let Some(t) = row(q, p, tir).map(|r| r.tir).filter(|t| t.used) else {
                return;
            };
            if !t.indirect {
                *rqs |= 1u64 << (t.inline_rq % 64);
            } else if let Some(r) = row(q, p, usize::from(t.rqt)) {
                for &s in r.rqt.rqs.iter().take(usize::from(r.rqt.len)) {
                    *rqs |= 1u64 << (s % 64);
                }
            }
        };
        if root == 0 {
            if first != 0 {
                add_tir(self.queues, usize::from(first - 1), &mut rqs);
            }
        } else {
            for i in 0..MAX_QUEUES {
                if let Some(Dest::Tir(t)) =
                    self.row(p, i).filter(|r| r.fte.used).map(|r| r.fte.dest)
                {
                    add_tir(self.queues, usize::from(t), &mut rqs);
                }
            }
        }
        let Some(pt) = self.ports.get_mut(p) else {
            return;
        };
        if by_commands {
            pt.rx_api = false;
        }
        pt.rx_legacy = root == 0;
        pt.rx_rqs = if pt.rx_api {
            pt.rss
                .iter()
                .take(usize::from(pt.rss_len).min(MAX_RSS))
                .fold(0, |m, &s| m | 1u64 << (s % 64))
        } else {
            rqs
        };
    }
}

impl<P, Q, B> Device<P, Q, B>
where
    P: DerefMut<Target = [Port]>,
    Q: DerefMut<Target = [QueueSet]>,
    B: DerefMut<Target = [u8]>,
{
    /// A device with `ports.len()` ports (1..=[`MAX_PORTS`]), queue tables of at least
    /// `ports.len() * MAX_QUEUES` entries and `scratch` of at least [`MIN_SCRATCH`] bytes,
    /// with every capability of the model ([`Caps::FULL`]). Fails with
    /// [`CmdError::BadParam`] otherwise.
    pub fn new(ports: P, queues: Q, scratch: B) -> Result<Self, CmdError> {
        Self::with_caps(ports, queues, scratch, Caps::FULL)
    }

    /// Like [`Device::new`] with the capabilities `caps` (which must be within what the
    /// model implements, [`Caps::FULL`]).
    pub fn with_caps(mut ports: P, queues: Q, scratch: B, caps: Caps) -> Result<Self, CmdError> {
        if ports.is_empty()
            || ports.len() > MAX_PORTS
            || queues.len() < ports.len() * MAX_QUEUES
            || scratch.len() < MIN_SCRATCH
            || !caps.sane()
        {
            return Err(CmdError::BadParam);
        }
        for (i, p) in ports.iter_mut().enumerate() {
            p.func.set_port_index(i);
        }
        Ok(Self {
            ports,
            queues,
            scratch,
            wqe: [0; 1024],
            bad_mmio: 0,
            caps,
            now: 0,
        })
    }

    /// The capabilities the device was created with.
    pub fn caps(&self) -> Caps {
        self.caps
    }

    /// Number of ports.
    pub fn num_ports(&self) -> usize {
        self.ports.len()
    }

    fn tables(&mut self) -> Tables<'_> {
        // The scratch holds at least MIN_SCRATCH bytes (checked at creation), the pool first.
        let pool = self.scratch.get_mut(..pas::POOL_BYTES).unwrap_or_default();
        Tables {
            ports: &mut self.ports,
            queues: &mut self.queues,
            pool,
            now: self.now,
        }
    }

    fn tables_ref(&self) -> (&[Port], &[QueueSet]) {
        (&self.ports, &self.queues)
    }

    fn loc(&self, qn: u32, base: u32, used: fn(&QueueSet) -> bool) -> Result<&QueueSet, CmdError> {
        let (ports, queues) = self.tables_ref();
        let (p, slot) = split_qn(qn, base).ok_or(CmdError::NoSuchQueue)?;
        match row(queues, p, slot) {
            Some(r) if used(r) && p < ports.len() => Ok(r),
            _ => Err(CmdError::NoSuchQueue),
        }
    }

    /// Creates a CQ and returns its number (Rust API: the device host's back door, used by
    /// test fixtures and, transitionally, by the driver). The CQ is armed through the port's
    /// [`API_UAR`] page and raises `cfg.vector` directly, without an EQ.
    pub fn create_cq(&mut self, cfg: &CqConfig) -> Result<u32, CmdError> {
        self.tables().create_cq(cfg, API_UAR as u16, 0)
    }

    /// Destroys a CQ that no SQ or RQ uses any more. An open compression session is discarded.
    pub fn destroy_cq(&mut self, cqn: u32) -> Result<(), CmdError> {
        self.tables().destroy_cq(cqn)
    }

    /// Creates an SQ (ready, counters 0, rung through the port's [`API_UAR`] page) and
    /// returns its number.
    pub fn create_sq(&mut self, cfg: &SqConfig) -> Result<u32, CmdError> {
        self.create_sq_inline(cfg, 0)
    }

    /// As [`Device::create_sq`], with `sqc.min_wqe_inline_mode` = `min_inline` (0..=3): the
    /// SQ then refuses WQEs that do not inline the Ethernet header (see
    /// [`Caps::min_inline`]).
    pub fn create_sq_inline(&mut self, cfg: &SqConfig, min_inline: u8) -> Result<u32, CmdError> {
        let extra = SqCtx {
            uar: API_UAR as u16,
            min_inline: min_inline.min(3),
            ..SqCtx::EMPTY
        };
        self.tables().create_sq(cfg, QueueState::Ready, extra)
    }

    /// Destroys an SQ. WQEs not yet executed are abandoned.
    pub fn destroy_sq(&mut self, sqn: u32) -> Result<(), CmdError> {
        self.tables().destroy_sq(sqn)
    }

    /// Resets an SQ to ready with its consumer counter at 0 (modify ERR → RST → RDY; the
    /// driver restarts its producer counter at 0 too). Pending doorbells are forgotten.
    pub fn reset_sq(&mut self, sqn: u32) -> Result<(), CmdError> {
        let mut t = self.tables();
        t.set_sq_state(sqn, QueueState::Reset)?;
        t.set_sq_state(sqn, QueueState::Ready)
    }

    /// State of an SQ.
    pub fn sq_state(&self, sqn: u32) -> Result<QueueState, CmdError> {
        self.loc(sqn, SQN_BASE, |r| r.sq.used).map(|r| r.sq.state)
    }

    /// The device's consumer counter of an SQ (index of the next WQE it expects).
    pub fn sq_consumer(&self, sqn: u32) -> Result<u16, CmdError> {
        self.loc(sqn, SQN_BASE, |r| r.sq.used).map(|r| r.sq.cc)
    }

    /// Creates a cyclic RQ (ready, counters 0) and returns its number.
    pub fn create_rq(&mut self, cfg: &RqConfig) -> Result<u32, CmdError> {
        self.tables().create_rq(cfg, QueueState::Ready, 0, false)
    }

    /// Destroys an RQ; it is removed from the port's RSS table. An RQ that an RQT names
    /// (made by command) is busy.
    pub fn destroy_rq(&mut self, rqn: u32) -> Result<(), CmdError> {
        if self.loc(rqn, RQN_BASE, |r| r.rq.used)?.rq.users != 0 {
            return Err(CmdError::Busy);
        }
        self.tables().destroy_rq(rqn)
    }

    /// Resets an RQ to ready with its counters at 0.
    pub fn reset_rq(&mut self, rqn: u32) -> Result<(), CmdError> {
        let mut t = self.tables();
        t.set_rq_state(rqn, QueueState::Reset)?;
        t.set_rq_state(rqn, QueueState::Ready)
    }

    /// State of an RQ.
    pub fn rq_state(&self, rqn: u32) -> Result<QueueState, CmdError> {
        self.loc(rqn, RQN_BASE, |r| r.rq.used).map(|r| r.rq.state)
    }

    /// The device's consumer counter of an RQ (WQEs it has used).
    pub fn rq_consumer(&self, rqn: u32) -> Result<u16, CmdError> {
        self.loc(rqn, RQN_BASE, |r| r.rq.used).map(|r| r.rq.cc)
    }

    /// The producer index of a CQ (CQ indices used so far, compression sessions included).
    pub fn cq_producer(&self, cqn: u32) -> Result<u32, CmdError> {
        self.loc(cqn, CQN_BASE, |r| r.cq.used).map(|r| r.cq.pi)
    }

    /// Whether a CQ entered the error state (overrun or CQE write fault).
    pub fn cq_in_error(&self, cqn: u32) -> Result<bool, CmdError> {
        self.loc(cqn, CQN_BASE, |r| r.cq.used).map(|r| r.cq.error)
    }

    /// Whether EQ `eqn` of `port` exists and is in error (overrun or EQE write fault).
    pub fn eq_in_error(&self, port: usize, eqn: u32) -> Result<bool, CmdError> {
        let slot = eqn.wrapping_sub(EQN_BASE) as usize;
        match row(&self.queues, port, slot) {
            Some(r) if r.eq.used && port < self.ports.len() => Ok(r.eq.error),
            _ => Err(CmdError::NoSuchQueue),
        }
    }

    /// Sets a port's RSS indirection table (1..=[`MAX_RSS`] RQs of that port, repetitions
    /// allowed; empty = drop everything). A packet with hash h (Toeplitz with
    /// [`crate::sim::pkt::RSS_KEY`] over its addresses and TCP/UDP ports) goes to
    /// `rqns[h % len]`. Device-host back door: the command path configures RSS with RQTs,
    /// TIRs and flow tables; whichever was written last, this or a command that changed
    /// the steering, steers.
    pub fn set_rss(&mut self, port: usize, rqns: &[u32]) -> Result<(), CmdError> {
        self.tables().set_rss(port, rqns)
    }

    /// Sets a port's administrative link state (what PAOS admin_status also sets; the
    /// device host's side of the wire). A port's operational state is up when its own and
    /// its peer's administrative states are up (in loopback: its own); changes are reported
    /// as PORT_CHANGE events. Frames a port loops back ignore it.
    pub fn set_link(&mut self, port: usize, up: bool) -> Result<(), CmdError> {
        self.tables().port_mut(port)?.link_up = up;
        Ok(())
    }

    /// Turns 802.3x flow control on or off in both directions of `port` (both on after
    /// creation): [`Device::set_pause_rx_tx`] with `rx` = `tx` = `on`. A port sends
    /// PAUSE frames while the receive queues of its RSS table are short of posted WQEs
    /// (TX pause) and waits while its receiver sends them (RX pause); see "Flow control" in
    /// the module documentation. Between two ports with flow control off, a packet that finds
    /// no posted WQE is dropped and counted in [`PortCounters::rx_out_of_buffer`].
    ///
    /// In loopback ([`Device::set_loopback`]) the receiver is the port itself: it pauses on
    /// its own RSS table's queues, whatever the link states. That cannot deadlock the port:
    /// its receive side never waits for its transmit side (RX CQEs, interrupts and the
    /// driver's refills go on while its SQs wait), and the next engine run retries them.
    pub fn set_pause(&mut self, port: usize, on: bool) -> Result<(), CmdError> {
        self.set_pause_rx_tx(port, on, on)
    }

    /// Sets `port`'s flow control per direction, as a PFCC write does: `rx` (`pprx`) honours
    /// the PAUSE frames the port receives, `tx` (`pptx`) sends them when its receive side is
    /// short of posted WQEs. [`CmdError::BadPort`] for a port that does not exist.
    pub fn set_pause_rx_tx(&mut self, port: usize, rx: bool, tx: bool) -> Result<(), CmdError> {
        let mut t = self.tables();
        let pt = t.port_mut(port)?;
        pt.pause.rx = rx;
        pt.pause.tx = tx;
        Ok(())
    }

    /// A port's flow control, `(rx, tx)` (PFCC `pprx`, `pptx`; `None` for a port that does
    /// not exist).
    pub fn pause_rx_tx(&self, port: usize) -> Option<(bool, bool)> {
        self.ports.get(port).map(|p| (p.pause.rx, p.pause.tx))
    }

    /// Turns internal loopback on or off for `port` (off after creation): with it on, every
    /// frame the port transmits is delivered to its own receive side (RSS, RQs, RX CQEs and
    /// counters as for a frame from the wire) instead of its peer, whatever the link states,
    /// and counted in [`PortCounters::loopback_packets`]. Off restores the wire. See the
    /// module documentation ("Ports and wiring") for the rules. [`CmdError::BadPort`] for a
    /// port that does not exist. PPLR `lb_en` sets the same switch.
    pub fn set_loopback(&mut self, port: usize, on: bool) -> Result<(), CmdError> {
        self.tables().port_mut(port)?.loopback = on;
        Ok(())
    }

    /// Whether `port` is in loopback (false for a port that does not exist).
    pub fn loopback(&self, port: usize) -> bool {
        self.ports.get(port).is_some_and(|p| p.loopback)
    }

    /// A port's administrative link state (false for a port that does not exist).
    pub fn link_up(&self, port: usize) -> bool {
        self.ports.get(port).is_some_and(|p| p.link_up)
    }

    /// A port's operational state: its administrative state and its peer's are up (in
    /// loopback: its own is up).
    pub fn oper_up(&self, port: usize) -> bool {
        cmd::oper_up(&self.ports, port)
    }

    /// Asks the device to fail every command of `opcode` on `port` with status INT_ERR and
    /// syndrome [`cmd::synd::INJECTED`] (None: stop). A device-host fault knob.
    pub fn fail_command(&mut self, port: usize, opcode: Option<u16>) -> Result<(), CmdError> {
        self.tables().port_mut(port)?.func.fail_opcode = opcode.map_or(0, u32::from);
        Ok(())
    }

    /// Resets function `port` as a function-level reset does (what a device host does for a
    /// PCI function's reset): every object of the function is freed as TEARDOWN_HCA frees
    /// them, and the command interface returns to its power-on state (HCA disabled, no
    /// command queue, `initializing` set until the driver writes the queue's address again,
    /// nothing allocated). The device host's settings (permanent MAC, link, flow control,
    /// loopback, injected command failure) and the port's counters stay; other functions are
    /// not touched.
    pub fn reset_function(&mut self, port: usize) -> Result<(), CmdError> {
        let mut t = self.tables();
        t.port_mut(port)?;
        cmd::teardown(&mut t, port);
        t.port_mut(port)?.func.power_on();
        Ok(())
    }

    /// Burns `mac` into `port` as its permanent address, the one QUERY_NIC_VPORT_CONTEXT
    /// reports (a device-host setting, as a NIC's factory MAC is; by default port `i` has
    /// 02:00:00:00:00:(i + 1), the same on every device). A multicast or all-zero address is
    /// refused.
    pub fn set_permanent_mac(&mut self, port: usize, mac: [u8; 6]) -> Result<(), CmdError> {
        if mac[0] & 1 != 0 || mac == [0; 6] {
            return Err(CmdError::BadParam);
        }
        self.tables().port_mut(port)?.func.set_permanent_mac(mac);
        Ok(())
    }

    /// Arms `fault` on port `port` (it replaces one of the same kind still waiting; a port
    /// already stopped stays stopped). Returns `false` if there is no such port.
    pub fn inject(&mut self, port: usize, fault: Fault) -> bool {
        let Some(p) = self.ports.get_mut(port) else {
            return false;
        };
        match fault {
            Fault::TxErrCqe(s) => p.faults.tx_err = Some(s),
            Fault::RxErrCqe(s) => p.faults.rx_err = Some(s),
            Fault::RxBadWqeCounter => p.faults.rx_bad_wc = true,
            Fault::DropIrqs(n) => p.faults.drop_irqs = n,
            Fault::TxStall => p.faults.tx_stall = true,
            Fault::TxBadSqn => p.faults.tx_bad_sqn = true,
            Fault::TxBadOwner => p.faults.tx_bad_owner = true,
            Fault::RxBadByteCount => p.faults.rx_bad_len = true,
            Fault::DmaReadFault => p.faults.dma_read = true,
            Fault::DevStop => p.faults.dev_stop = true,
        }
        true
    }

    /// Ends a [`Fault::TxStall`] or [`Fault::DevStop`] of port `port` by itself, as a
    /// device that stalled for a while does (the driver reset nothing): the work posted
    /// meanwhile executes at the next run. Returns `false` if there is no such port or
    /// `fault` is of another kind.
    pub fn end_fault(&mut self, port: usize, fault: Fault) -> bool {
        let Some(p) = self.ports.get_mut(port) else {
            return false;
        };
        match fault {
            Fault::TxStall => p.faults.tx_stall = false,
            Fault::DevStop => p.restart(),
            _ => return false,
        }
        true
    }

    /// Counters of one port.
    pub fn counters(&self, port: usize) -> Option<&PortCounters> {
        self.ports.get(port).map(|p| &p.counters)
    }

    /// Counters summed over all ports.
    pub fn totals(&self) -> PortCounters {
        let mut t = PortCounters::default();
        for p in self.ports.iter() {
            t.add(&p.counters);
        }
        t
    }

    /// Register accesses to unknown offsets or ports.
    pub fn bad_mmio(&self) -> u64 {
        self.bad_mmio
    }

    /// A CQ's moderation as the device holds it: (`cq_period` µs, `cq_max_count`, whether
    /// `cq_period_mode` is upon CQE).
    pub fn cq_moderation(&self, cqn: u32) -> Result<(u16, u16, bool), CmdError> {
        let m = self.loc(cqn, CQN_BASE, |r| r.cq.used)?.cq.moder;
        Ok((m.period, m.max_count, m.cqe_mode))
    }

    /// Sets the device's clock, in nanoseconds, for CQ moderation: what the timers of the
    /// CQs compare with on the next engine run. The device host passes a monotonic time
    /// before every run; a clock that goes back is ignored (it stays where it was). It
    /// starts at 0, and a host that never sets it has moderation timers that never run out.
    pub fn set_clock(&mut self, now_ns: u64) {
        self.now = self.now.max(now_ns);
    }

    /// The device's clock ([`Device::set_clock`]).
    pub fn clock(&self) -> u64 {
        self.now
    }

    /// The earliest time (nanoseconds, the clock of [`Device::set_clock`]) at which a CQ
    /// held back by moderation fires, if one is: the device host runs the engine again then
    /// (a real device's timer). Up to date after every engine run and command. A port whose
    /// data path is stopped ([`Fault::DevStop`]) has none: its CQs wait for the stop's end.
    pub fn moderation_deadline(&self) -> Option<u64> {
        let mut best: Option<u64> = None;
        for (p, port) in self.ports.iter().enumerate() {
            if port.stopped() {
                continue;
            }
            let mut wait = port.moder_wait;
            while wait != 0 {
                let slot = wait.trailing_zeros() as usize;
                wait &= wait - 1;
                if let Some(r) = row(&self.queues, p, slot) {
                    if r.cq.used && r.cq.moder.held {
                        let d = r.cq.moder.deadline();
                        best = Some(best.map_or(d, |b| b.min(d)));
                    }
                }
            }
        }
        best
    }

    /// A 64-bit register write at `offset` in BAR0, bytes in bus (memory) order: the SQ
    /// doorbell and the CQ arm doorbell of a UAR page.
    pub fn mmio_write64(&mut self, offset: u32, bytes: [u8; 8]) {
        let port = (offset / FUNC_BAR_SIZE) as usize;
        let page = (offset % FUNC_BAR_SIZE) / UAR_PAGE_SIZE;
        let reg = offset % UAR_PAGE_SIZE;
        let known_page = self
            .ports
            .get(port)
            .is_some_and(|p| page == API_UAR || p.func.uar_allocated(page));
        if !known_page || (reg != SQ_DOORBELL && reg != CQ_ARM_DOORBELL) {
            self.bad_mmio = self.bad_mmio.wrapping_add(1);
            return;
        }
        let hi = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        let lo = u32::from_be_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
        let sq = reg == SQ_DOORBELL;
        let (kind, qn) = if sq {
            (SQN_BASE, lo >> 8)
        } else {
            (CQN_BASE, lo & 0xff_ffff)
        };
        // The queue must exist, belong to this function and to this UAR page.
        let slot = match split_qn(qn, kind) {
            Some((p, slot)) if p == port => row(&self.queues, p, slot).and_then(|r| {
                let (used, uar) = if sq {
                    (r.sq.used, r.sq.uar)
                } else {
                    (r.cq.used, r.cq.uar)
                };
                (used && u32::from(uar) == page).then_some((slot, r.sq.state))
            }),
            _ => None,
        };
        let Some(pt) = self.ports.get_mut(port) else {
            return;
        };
        pt.counters.pcie.doorbell();
        if sq {
            pt.counters.sq_doorbells += 1;
        } else {
            pt.counters.arm_doorbells += 1;
        }
        let Some((slot, state)) = slot else {
            pt.counters.bad_doorbells += 1;
            return;
        };
        pt.counters.doorbells += 1;
        if sq {
            if state == QueueState::Ready {
                pt.sq_doorbell |= 1u64 << slot;
            }
            return;
        }
        pt.arm_pending |= 1u64 << slot;
        if let Some(r) = self.queues.get_mut(port * MAX_QUEUES + slot) {
            r.cq.armed = true;
            r.cq.arm_sn = ((hi >> 28) & 3) as u8;
            r.cq.arm_ci = hi & 0xff_ffff;
        }
    }

    /// A 32-bit register write (the register's value): the initialization segment's command
    /// queue address and doorbell, and the EQ doorbells of a UAR page.
    pub fn mmio_write32(&mut self, offset: u32, value: u32) {
        let port = (offset / FUNC_BAR_SIZE) as usize;
        let within = offset % FUNC_BAR_SIZE;
        let page = within / UAR_PAGE_SIZE;
        let ok = match self.ports.get_mut(port) {
            Some(pt) if page < FIRST_UAR => {
                let cmd_eqs = if within == ifc::iseg::CMD_DBELL {
                    (0..MAX_QUEUES)
                        .filter(|&i| {
                            row(&self.queues, port, i).is_some_and(|r| r.eq.used && r.eq.cmd_events)
                        })
                        .count()
                } else {
                    0
                };
                pt.func.iseg_write(within, value, &mut pt.counters, cmd_eqs)
            }
            Some(pt) if pt.func.uar_allocated(page) => {
                let reg = within % UAR_PAGE_SIZE;
                if reg == EQ_ARM_DOORBELL || reg == EQ_CI_DOORBELL {
                    pt.counters.pcie.doorbell();
                    pt.counters.eq_doorbells += 1;
                    let slot = (value >> 24).wrapping_sub(EQN_BASE) as usize;
                    match row(&self.queues, port, slot) {
                        Some(r) if r.eq.used && u32::from(r.eq.uar) == page => {
                            pt.counters.doorbells += 1;
                            if let Some(r) = self.queues.get_mut(port * MAX_QUEUES + slot) {
                                r.eq.ci = value & 0xff_ffff;
                                if reg == EQ_ARM_DOORBELL {
                                    r.eq.armed = true;
                                    pt.eq_arm_pending |= 1u64 << slot;
                                }
                            }
                        }
                        _ => pt.counters.bad_doorbells += 1,
                    }
                    true
                } else {
                    false
                }
            }
            _ => false,
        };
        if !ok {
            self.bad_mmio = self.bad_mmio.wrapping_add(1);
        }
    }

    /// A 32-bit register read (the register's value) of the initialization segment; anything
    /// else returns all ones (master abort) and counts as bad.
    pub fn mmio_read32(&mut self, offset: u32) -> u32 {
        let port = (offset / FUNC_BAR_SIZE) as usize;
        let within = offset % FUNC_BAR_SIZE;
        let now = self.now;
        match self
            .ports
            .get(port)
            .and_then(|pt| pt.func.iseg_read(within, now))
        {
            Some(v) => v,
            None => {
                self.bad_mmio = self.bad_mmio.wrapping_add(1);
                u32::MAX
            }
        }
    }

    /// Runs the device until it has no work: executes commands and posted WQEs, delivers
    /// packets, writes CQEs and EQEs, raises interrupts. Returns the number of WQEs executed
    /// (good or bad).
    pub fn process<M: BusMemory, I: InterruptSink>(&mut self, mem: &M, irq: &mut I) -> usize {
        let mut n = 0;
        loop {
            let (done, more) = self.process_budget(mem, irq, usize::MAX);
            n += done;
            if !more {
                return n;
            }
        }
    }

    /// Like [`Device::process`] but executes at most `budget` WQEs. Returns (WQEs executed,
    /// whether work is left). Rung commands all execute first; open compression sessions
    /// are always closed before returning.
    pub fn process_budget<M: BusMemory, I: InterruptSink>(
        &mut self,
        mem: &M,
        irq: &mut I,
        budget: usize,
    ) -> (usize, bool) {
        if self.scratch.len() < MIN_SCRATCH {
            return (0, false);
        }
        let (pool, scratch) = self.scratch.split_at_mut(pas::POOL_BYTES);
        {
            let mut t = Tables {
                ports: &mut self.ports,
                queues: &mut self.queues,
                pool: &mut *pool,
                now: self.now,
            };
            cmd::run(&mut t, &self.caps, scratch, mem);
            eq::cmd_events(&mut t, mem, irq);
            eq::port_events(&mut t, mem, irq);
            eq::page_requests(&mut t, mem, irq);
        }
        let (frame, gather) = scratch.split_at_mut(MAX_FRAME);
        let mut bufs = engine::Bufs {
            frame,
            gather,
            wqe: &mut self.wqe,
        };
        let mut io = engine::Io {
            mem,
            irq,
            pool: &*pool,
            mpwqe: self.caps.mpwqe,
            now: self.now,
        };
        let r = engine::run(
            &mut self.ports,
            &mut self.queues,
            &mut bufs,
            &mut io,
            budget,
        );
        let mut t = Tables {
            ports: &mut self.ports,
            queues: &mut self.queues,
            pool,
            now: self.now,
        };
        eq::completions(&mut t, mem, irq);
        r
    }
}
