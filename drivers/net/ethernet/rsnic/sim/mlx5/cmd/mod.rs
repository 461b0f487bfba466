// SPDX-License-Identifier: GPL-2.0

//! The command interface of the model, the device's half of each ConnectX command: the
//! function's command-interface state ([`Func`]), the check every command passes (opcode,
//! op_mod, HCA state, input and output lengths: [`CMDS`]) and the dispatch to the handlers,
//! which sit in files named as the driver's halves in `dp/mlx5/cmd/` (PRM "Command
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
//!
//! Every failure is a delivery status (in the entry's `status_own`) or a command status and
//! a syndrome (in the output header); [`synd`] lists the syndromes. The command interface's
//! behaviour as a whole is described in the parent module's "Control plane" section.

pub mod fs;
pub mod hca;
pub mod mkey;
pub mod pages;
pub mod queue;
pub mod res;
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
use crate::dp::hw::BusMemory;

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
