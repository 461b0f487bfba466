// SPDX-License-Identifier: GPL-2.0

//! The command interface of the model, the device's half of each ConnectX command: the
//! function's command-interface state ([`Func`]), the check every command passes (opcode,
//! op_mod, HCA state, input and output lengths: [`CMDS`]) and the dispatch to the handlers,
//! which sit in files named as the driver's halves in `hwif/mlx5/cmd/` (PRM "Command
//! Interface"; upstream drivers/net/ethernet/mellanox/mlx5/core/cmd.c and the callers each
//! file names; layouts from include/linux/mlx5/mlx5_ifc.h, transcribed in [`super::ifc`]):
//!
//! * [`queue`]: the initialization segment's registers and the command queue processor
//!   (entries, mailbox chains, delivery status; cmd.c).
//! * [`hca`]: ENABLE/DISABLE_HCA, QUERY/SET_ISSI, QUERY/SET_HCA_CAP, QUERY_ADAPTER,
//!   INIT/TEARDOWN_HCA (main.c, fw.c).
//! * [`pages`]: QUERY_PAGES, MANAGE_PAGES (pagealloc.c).
//! * [`mkey`]: CREATE/DESTROY_MKEY, the Q counters (mr.c, en_main.c).
//! * [`res`]: UAR, PD, transport domain, EQ, CQ, TIS, SQ, RQ, RQT, TIR (uar.c, eq.c,
//!   en_main.c, en/rqt.c, en/tir.c).
//! * [`fs`]: flow tables, groups, entries, the root (fs_cmd.c).
//! * [`vport`]: the NIC vport context, vport state and counters, ACCESS_REG (PAOS, PPLR,
//!   PFCC, PPCNT, PMTU, PTYS; vport.c, port.c).
//! * [`port`]: ACCESS_REG of PCAM (the port's registers and features), PPLM (FEC), PMLP
//!   (lanes) and PDDR (why the link is down) (en/port.c, en_stats.c, en_ethtool.c).
//!
//! # The command interface as the model implements it
//!
//! Each port is one PCI function with its own window of [`super::FUNC_BAR_SIZE`] bytes in BAR0
//! (port p at `p * FUNC_BAR_SIZE`); every offset below is relative to the window. The layouts
//! are the 6.12 headers' (`include/linux/mlx5/mlx5_ifc.h`, `device.h`), transcribed in
//! [`super::ifc`] as big-endian bit positions.
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
//! and every millisecond of the device's clock ([`super::Device::set_clock`]: a host that runs the
//! device rarely still shows a live heartbeat; mlx5_core declares a device whose counter
//! stands still over three 2 s polls dead). Other offsets of pages 0..7 are bad register
//! accesses.
//!
//! **Command queue** (cmd.c, polling and events mode): 32 entries of 64 bytes (`mlx5_cmd_layout`).
//! A rung entry executes the next time the device runs ([`super::Device::process`]: commands first,
//! then events, then WQEs). Delivery checks, in order, answered in `status_own` bits 7..1 with
//! cmd.c's `MLX5_CMD_DELIVERY_STAT_*`: an entry software still owns (bit 0 clear) is skipped
//! untouched; `type` ≠ 7 → CMD_DESCR_ERR; `inlen` < 8 or > [`MAX_MSG`] → IN_LENGTH_ERR; `outlen`
//! likewise → OUT_LENGTH_ERR; then the input and output mailbox chains (`mlx5_cmd_prot_block`, as
//! many blocks as the length needs beyond the 16 inline bytes): a null, misaligned (not 8-byte) or
//! unreadable block → IN_PTR_ALIGN_ERR / OUT_PTR_ALIGN_ERR, a `block_num` out of sequence →
//! BAD_BLK_NUM_ERR, a `token` other than the entry's → TOK_ERR. Signatures are not checked. A
//! delivered command gets its output (16 inline bytes, the rest through the output mailboxes, at
//! most 0x1010 bytes written) and then `status_own` = 0. Inputs are copied into the scratch buffer
//! (4 KiB); longer PAS lists are streamed from the mailboxes. Nothing allocates. An entry rung
//! while one of the function's EQs takes command events (`event_bitmask` bit 0x0a, mlx5_core's
//! command EQ) also completes by event: after it executed, an EQE of type 0x0a with the entry's bit
//! in `data.cmd.vector` (BE32 at 0x20) goes to each such EQ, with its interrupt if armed
//! (mlx5_core's events mode; the CREATE_EQ that makes the first such EQ was rung before it existed
//! and completes by its ownership bit alone, which mlx5_core polls).
//!
//! **Command checks**, answered with the output header's status (byte 0) and a syndrome
//! (bytes 4..8) naming the check ([`synd`] lists them all): unknown opcode → BAD_OP;
//! injected failure ([`super::Device::fail_command`]) → INT_ERR; wrong HCA state → BAD_SYS_STATE;
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
//! **Objects** (per function, [`super::MAX_QUEUES`] of each kind): UAR indices from
//! [`super::FIRST_UAR`] ([`super::MAX_UARS`] of them); PDs, transport domains, TISs, RQTs, TIRs,
//! flow tables and flow groups numbered like queues (`base + port * 64 + slot`, bases
//! [`super::PD_BASE`], [`super::TD_BASE`], [`super::TISN_BASE`], [`super::RQTN_BASE`],
//! [`super::TIRN_BASE`], [`super::FT_BASE`], [`super::FG_BASE`]); SQs, RQs and CQs keep
//! [`super::SQN_BASE`], [`super::RQN_BASE`], [`super::CQN_BASE`]; EQ numbers are `EQN_BASE + slot`
//! ([`super::EQN_BASE`], 8 bits, per function). Queue memory comes as a PAS list of page-aligned,
//! non-zero pages (page size 4 KiB << log_page_size, page_offset 0), else BAD_PARAM; the list must
//! be as long as the queue needs (BAD_INPUT_LEN). Contiguous pages are kept as one address; any
//! other list goes into the device's bounded page-list pool ([`super::pas`]; a list longer than
//! [`super::pas::MAX_LIST_PAGES`] or one the pool has no room for: NO_RESOURCES). An RQ may have PD
//! 0 (mlx5e's drop RQ); a CQ may have one CQE. CREATE_CQ names an EQ (`c_eqn`) and a UAR and takes
//! the moderation fields (see "CQ moderation" below; `cq_period_mode` 2 or 3 is BAD_PARAM);
//! MODIFY_CQ (op_mod 0) changes `cq_period`, `cq_max_count` and `cq_period_mode` as
//! `modify_field_select` bits 0, 1 and 4 say (no bit, or any other bit: BAD_PARAM; a CQ of no CQ of
//! this function: BAD_RESOURCE); QUERY_HCA_CAP reports `cq_moderation`, `cq_period_mode_modify` and
//! `cq_period_start_from_cqe`; CREATE_SQ a CQ, a TIS (`tis_num_0`; `tis_lst_sz` is not checked), a
//! PD and a UAR, with `log_wq_stride` 6; CREATE_RQ a CQ and a PD, cyclic, `log_wq_stride` 4..=8.
//! SQs and RQs are created in RST; MODIFY (current state in the input header) allows RST→RDY,
//! RDY→ERR and ERR→RST (counters restart at 0), anything else is BAD_RES_STATE; a WQE error puts an
//! SQ in ERR (an RX write fault an RQ); QUERY_SQ/RQ report the state, the CQ and the counters. A CQ
//! with an SQ or RQ, an EQ with a CQ, a TIS with an SQ, an RQT with a TIR, an RQ in an RQT or
//! direct TIR, a UAR/PD/TD an object names: RESOURCE_BUSY.
//!
//! **RSS and flow steering** (the receive side of mlx5e: RQT, TIRs, the traffic-type table
//! of `lib/fs_ttc.c`). An RQT lists 1..=2^`log_max_rqt_size` RQs ([`super::MAX_RQT_SIZE`], 256 as
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
//! Which TIR a frame goes to is flow steering's, the NIC RX tables as mlx5_core's fs_core builds
//! them for mlx5e (its VLAN, L2, traffic-type and aRFS tables, ethtool's rules) and rsnic builds
//! its own. CREATE_FLOW_TABLE makes a NIC RX table of `2^log_size` (≤ 2^16) flow indices at a
//! `level` (≤ [`super::MAX_FT_LEVEL`]), whose misses drop (the default miss action) or go on to the
//! table `table_miss_id` names (`table_miss_action` 1, FWD; a table of this function at a higher
//! level; no flags, no other miss action); MODIFY_FLOW_TABLE (`modify_field_select` 1) changes the
//! miss the same way (fs_core chains each new table after those of earlier levels so).
//! CREATE_FLOW_GROUP takes a range of a table's indices and match criteria on the outer headers
//! (`match_criteria_enable` 0 or 1; criteria in the misc, inner or later sets, or on `l4_type` /
//! `ipv4_ihl`, are refused; no group type, no match definer; ranges of a table do not overlap): any
//! bits of `fte_match_set_lyr_2_4` (MACs, ethertype, the first VLAN tag, `cvlan_tag`/`svlan_tag`,
//! IP version, protocol, DSCP/ECN, fragment, TTL, TCP flags and ports, UDP ports, addresses: see
//! [`super::steer`]). SET_FLOW_TABLE_ENTRY (op_mod 0 a new index of its group, 1 that entry
//! replaced) makes an entry that, for the frames whose headers equal its values under its group's
//! criteria, forwards (FWD_DEST, one destination: a TIR of the function, or a flow table of a
//! higher level) or drops (DROP, no destination); a flow tag is taken (and not reported); counters,
//! reformat, modify header and extended destinations are refused. SET_FLOW_TABLE_ROOT (op_mod 0)
//! makes a table the root; op_mod 1 disconnects it. A received frame walks from the root: in each
//! table its entries by flow index, the first that matches decides; none: the table's miss, or
//! dropped ([`super::PortCounters::rx_steering_drops`]); at most [`super::MAX_CHAIN`] tables. A
//! table with groups, a table an entry forwards to, a group with entries, a TIR an entry forwards
//! to, an RQT a TIR names: RESOURCE_BUSY (a root table may go, and so may a table others miss to:
//! fs_core destroys its tables so at cleanup; the function has no root then, and those misses
//! drop). DELETE_FLOW_TABLE_ENTRY, DESTROY_FLOW_GROUP and DESTROY_FLOW_TABLE undo them. When a
//! command changes any of this the model orders the entries (by table, then flow index) and finds
//! the RQs frames can reach (for flow control); per frame the work is the frame's header image (64
//! bytes), one masked compare per entry looked at, the hash and two table lookups. QUERY_HCA_CAP
//! type 7 reports the NIC RX table properties (`ft_support`, `max_ft_level`, sizes, the outer
//! fields above); [`super::MAX_QUEUES`] tables, groups and entries per function.
//!
//! Without a root table the model dispatches as it did before it had flow tables: every
//! received frame goes to the first indirect TIR created on the function (when it is
//! destroyed, the lowest-numbered remaining one), hashed over its IP addresses and TCP/UDP
//! ports whatever the TIR's selector, with the TIR's key; no indirect TIR: dropped. The test
//! fixtures of single-TIR set-ups rely on it. [`super::Device::set_rss`] remains as the device
//! host's back door (a table of at most [`super::MAX_RSS`] RQs hashed over addresses and ports with
//! [`crate::sim::pkt::RSS_KEY`]): whichever was written last, it or a command changing the
//! steering, steers.
//!
//! **Port**: QUERY/MODIFY_NIC_VPORT_CONTEXT carry the MTU (64..=[`super::MAX_FRAME`] + 4, recorded,
//! not enforced; 1522 at first) and the permanent MAC (unicast; `02:00:00:00:00:<port + 1>`
//! at first); QUERY_VPORT_STATE the administrative and
//! operational states; ACCESS_REG implements PAOS (admin_status up 1 / down 2 when `ase`;
//! oper_status), PPLR (`lb_en` 0 = off, any of the loopback bits 1/2/4 = the model's one
//! internal loopback, [`super::Device::set_loopback`]; `lb_cap` = 2, phy local), PFCC (`pprx` =
//! `pprx` and `pptx`, see "Flow control" above; the other fields read 0), PPCNT (read only,
//! counting frames through the MAC: group 0 the IEEE 802.3 counters, see [`ieee`], 1 RFC
//! 2863, 2 RFC 2819 with the size histogram, 0x10 per priority, 0x12 the physical layer's
//! errors and 0x16 its statistical counters, all 0; `clr` restarts them after the answer;
//! other groups are BAD_PARAM), PCAM, PPLM (FEC), PMLP and PDDR (see [`port`]), PTYS (Ethernet
//! only: five modes of direct-attach copper, 10 to 100 Gb/s; the running mode is the one the
//! two ports resolve, see [`link`]; a write sets the advertised modes, which must be some of
//! the port's, and `an_disable_admin`, which the port allows: else BAD_PARAM),
//! local_port 1 (or 0), reads and writes both answer with the register's contents. QUERY_VPORT_COUNTER reports unicast / multicast /
//! broadcast packets and octets by destination address, received errors (too long + DMA
//! faults), transmit errors (rejected WQEs) and local loopback; `clear` restarts them.
//!
//! **Capabilities** ([`super::Caps`], given at creation by the device host): QUERY_HCA_CAP reports
//! them (op_mod bit 0: current 1, maximum 0; types general 0, Ethernet offloads 1, NIC flow
//! table 7; others BAD_PARAM) and the model enforces them (see [`super::Caps`]). The general caps
//! are what mlx5_core and mlx5e read (`cmd::hca::general_caps`): no QPs, no striding RQ, no
//! `hca_cap_2`, no RoCE, no ODP, no tunnels, 8 Q counters, 8 memory keys, UC / MC vport
//! lists of 4 / 16, a 1 GHz internal timer. SET_HCA_CAP (general, while ENABLED) sets
//! `pkey_table_size`, `log_max_qp` (≤ its maximum, 0) and `cmdif_checksum`, which the
//! current caps then show; `log_uar_page_sz` must stay 0 (4 KiB UARs); the other fields
//! are read-only and ignored. QUERY_ADAPTER answers Mellanox's OUI and a PSID.
//!
//! **Firmware pages** (pagealloc.c): QUERY_PAGES (ENABLED or INITIALIZED) says how many pages the
//! function wants for boot (op_mod 1: [`BOOT_PAGES`]), init (2: [`INIT_PAGES`]) and regular use (3:
//! [`REGULAR_PAGES`] after INIT_HCA); MANAGE_PAGES GIVE (1) takes 4 KiB-aligned pages (a bad
//! address refuses the whole command; at most [`MAX_FW_PAGES`]), TAKE (2) returns pages (never
//! those an initialized HCA needs; at most what the output holds), CANT_GIVE (0) is taken. The
//! device keeps the list of held pages in the pages (each one's first 8 bytes link the next), as
//! firmware keeps its bookkeeping in the memory it was given. Once a driver asked QUERY_PAGES,
//! INIT_HCA is BAD_SYS_STATE until the function holds its boot and init pages, and after INIT_HCA
//! the function asks for its regular pages by a page request EQE (type 0x0b, `func_id` 0,
//! `num_pages`) on its EQs that take page requests. A driver that never asks (the device host's
//! fixtures) is not held to them; rsnic's and mlx5_core ask. DISABLE_HCA and a function reset
//! forget the pages; the function's count is [`super::PortCounters::fw_pages`].
//!
//! **Memory keys**: CREATE_MKEY takes a PA-mode key (local read and write, `length64`, a PD
//! of the function; no UMR, no umem) and answers index [`MKEY_INDEX_BASE`] + i; the key
//! is `index << 8 | mkey_7_0`. Once the function has a key, every data segment's lkey must
//! be one of its keys: a TX WQE with another fails before anything is sent (error CQE,
//! LOCAL_PROT, [`super::WqeError::BadLkey`]), an RX WQE with another completes with LOCAL_PROT and
//! puts the RQ in error ([`super::PortCounters::mkey_errors`]). A function without keys (the device
//! host's fixtures) is not checked; rsnic and mlx5e make one.
//!
//! **Q counters**: ALLOC_Q_COUNTER hands out set ids 1..=[`Q_COUNTERS`]; an RQ naming one
//! (`rqc.counter_set_id`) counts its drops for lack of a WQE in it; QUERY_Q_COUNTER reports
//! `out_of_buffer` (`clear` restarts it), DEALLOC_Q_COUNTER frees an id no RQ names.
//!
//! **The vport's filter**: MODIFY_NIC_VPORT_CONTEXT `addresses_list` (UC up to
//! [`UC_LIST`], MC up to [`MC_LIST`]) and `promisc` (uc, mc, all) program what the
//! VF's vport lets through (as the eswitch of a VF's PF does): once a driver programmed
//! either, a received frame reaches the function only if it is broadcast, its destination
//! is the function's MAC or on the list of its kind, or the matching promiscuous flag is on
//! ([`super::PortCounters::rx_vport_filtered`] counts the others). A driver that never programs
//! them receives every frame (rsnic's ConnectX driver programs them, as mlx5e does).
//!
//! Every failure is a delivery status (in the entry's `status_own`) or a command status and
//! a syndrome (in the output header); [`synd`] lists the syndromes. The command interface's
//! behaviour as a whole is described above.

pub mod fs;
pub mod hca;
pub mod link;
pub mod mkey;
pub mod module;
pub mod pages;
pub mod port;
pub mod queue;
pub mod res;
pub mod rss;
pub mod synd;
pub mod vport;

pub use hca::MAX_LOG_QP;
pub use mkey::{MAX_MKEYS, MKEY_INDEX_BASE, Q_COUNTERS};
pub use pages::{BOOT_PAGES, INIT_PAGES, MAX_FW_PAGES, REGULAR_PAGES};
pub use queue::{CMDQ_ENTRIES, FW_REV, FW_SUB, MAX_MSG};
pub use vport::{ieee, MC_LIST, PORT_MAX_MTU, UC_LIST, VLAN_LIST};

pub(super) use hca::teardown;
pub(super) use queue::run;
pub(super) use vport::oper_up;

use hca::SetCaps;
use pages::Pages;
use queue::Chain;
use vport::{Mac, Vport, VportFilter};

use super::ifc::{self, get, op, status};
use super::{Caps, Tables, FIRST_UAR, MAX_QUEUES, MAX_UARS};
use crate::hwif::hw::BusMemory;

/// State of the HCA (function).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Hca {
    Disabled,
    Enabled,
    Initialized,
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
    /// PTYS's `eth_proto_admin`: the modes the port advertises (a subset of [`link::CAP`]).
    pub(super) ptys_admin: u32,
    /// PTYS's `an_disable_admin`: autonegotiation turned off.
    pub(super) an_disabled: bool,
    /// The vport's address filter.
    pub(super) filter: VportFilter,
    /// PPLM's legacy `fec_override_admin_*` (10G/40G, 25G, 50G, 56G, 100G): the FEC mode
    /// asked for at each speed (0: auto).
    pub(super) fec_admin: [u8; 5],
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
        ptys_admin: link::CAP,
        an_disabled: false,
        filter: VportFilter::NONE,
        fec_admin: [0; 5],
    };

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
}

type Fail = (u8, u32);

type CmdResult = Result<(), Fail>;

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

impl<M: BusMemory> Cx<'_, '_, M> {
    /// Field `f` of the input.
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
            // hca.rs
            op::ENABLE_HCA => self.enable_hca(true),
            op::DISABLE_HCA => self.enable_hca(false),
            op::QUERY_ISSI => self.query_issi(),
            op::SET_ISSI => self.set_issi(),
            op::QUERY_HCA_CAP => self.query_hca_cap(op_mod),
            op::SET_HCA_CAP => self.set_hca_cap(op_mod),
            op::QUERY_ADAPTER => self.query_adapter(),
            op::INIT_HCA => self.init_hca(),
            op::TEARDOWN_HCA => self.teardown_hca(),
            // pages.rs
            op::QUERY_PAGES => self.query_pages(op_mod),
            op::MANAGE_PAGES => self.manage_pages(op_mod),
            // mkey.rs
            op::CREATE_MKEY => self.create_mkey(),
            op::DESTROY_MKEY => self.destroy_mkey(),
            op::ALLOC_Q_COUNTER => self.alloc_q_counter(),
            op::DEALLOC_Q_COUNTER => self.dealloc_q_counter(),
            op::QUERY_Q_COUNTER => self.query_q_counter(),
            // res.rs
            op::ALLOC_UAR => self.alloc(0),
            op::ALLOC_PD => self.alloc(1),
            op::ALLOC_TRANSPORT_DOMAIN => self.alloc(2),
            op::DEALLOC_UAR => self.dealloc(0),
            op::DEALLOC_PD => self.dealloc(1),
            op::DEALLOC_TRANSPORT_DOMAIN => self.dealloc(2),
            op::CREATE_EQ => self.create_eq(),
            op::DESTROY_EQ => self.destroy_eq(),
            op::CREATE_CQ => self.create_cq(),
            op::DESTROY_CQ => self.destroy_cq(),
            op::MODIFY_CQ => self.modify_cq(),
            op::CREATE_TIS => self.create_tis(),
            op::DESTROY_TIS => self.destroy_tis(),
            op::CREATE_SQ => self.create_sq(),
            op::MODIFY_SQ => self.modify_wq(true),
            op::DESTROY_SQ => self.destroy_sq(),
            op::QUERY_SQ => self.query_wq(true),
            op::CREATE_RQ => self.create_rq(),
            op::MODIFY_RQ => self.modify_wq(false),
            op::DESTROY_RQ => self.destroy_rq(),
            op::QUERY_RQ => self.query_wq(false),
            op::CREATE_RQT => self.rqt(None),
            op::MODIFY_RQT => self.modify_rqt(),
            op::DESTROY_RQT => self.destroy_rqt(),
            op::CREATE_TIR => self.create_tir(),
            op::MODIFY_TIR => self.modify_tir(),
            op::DESTROY_TIR => self.destroy_tir(),
            // fs.rs
            op::CREATE_FLOW_TABLE => self.create_flow_table(),
            op::MODIFY_FLOW_TABLE => self.modify_flow_table(),
            op::DESTROY_FLOW_TABLE => self.destroy_flow_table(),
            op::CREATE_FLOW_GROUP => self.create_flow_group(),
            op::DESTROY_FLOW_GROUP => self.destroy_flow_group(),
            op::SET_FLOW_TABLE_ENTRY => self.set_fte(op_mod),
            op::DELETE_FLOW_TABLE_ENTRY => self.delete_fte(),
            op::SET_FLOW_TABLE_ROOT => self.set_root(op_mod),
            // vport.rs
            op::QUERY_NIC_VPORT_CONTEXT => self.query_nic_vport_context(),
            op::MODIFY_NIC_VPORT_CONTEXT => self.modify_vport(),
            op::QUERY_VPORT_STATE => self.query_vport_state(),
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

    /// A free slot in this function's rows for an object `used` tells apart; NO_RESOURCES
    /// with `s` if there is none.
    fn free(&self, used: fn(&super::QueueSet) -> bool, s: u32) -> Result<usize, Fail> {
        self.t
            .free_slot(self.p, used)
            .map_err(|_| (status::NO_RESOURCES, s))
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
}
