// SPDX-License-Identifier: GPL-2.0

//! The device's half of the function-level commands (the driver's is `hwif/mlx5/cmd/hca.rs`):
//! ENABLE_HCA / DISABLE_HCA, QUERY_ISSI / SET_ISSI, QUERY_HCA_CAP / SET_HCA_CAP (the general,
//! Ethernet-offload and NIC flow table capabilities, current and maximum), QUERY_ADAPTER,
//! INIT_HCA / TEARDOWN_HCA, and what a teardown or a function reset frees. PRM "HCA
//! Management"; upstream main.c (`mlx5_core_enable_hca`, `mlx5_core_set_issi`, `set_hca_cap`),
//! fw.c (`mlx5_core_get_caps_mode`, `mlx5_cmd_init_hca`, `mlx5_cmd_teardown_hca`); layouts
//! `cmd_hca_cap`, `per_protocol_networking_offload_caps`, `flow_table_nic_cap`,
//! `query_adapter_out` of mlx5_ifc.h.

use super::mkey::Q_COUNTERS;
use super::pages::{Pages, BOOT_PAGES, INIT_PAGES};
use super::vport::{oper_up, Vport, VportFilter, MC_LIST, UC_LIST, VLAN_LIST};
use super::{bad, synd, CmdResult, Cx, Hca};
use crate::hwif::hw::BusMemory;
use crate::sim::mlx5::ifc::{self, get, set, status};
use crate::sim::mlx5::{
    make_qn, Caps, Tables, CQN_BASE, MAX_QUEUES, MAX_SESSION, RQN_BASE, SQN_BASE,
};

/// The largest `log_max_qp` (the model has no QPs: what mlx5_core's profile may set).
pub const MAX_LOG_QP: u32 = 0;

/// The general capabilities SET_HCA_CAP changes (the current values; the maximum is the
/// model's).
#[derive(Clone, Copy)]
pub(in crate::sim::mlx5) struct SetCaps {
    pub(super) pkey_table_size: u16,
    pub(super) log_max_qp: u8,
    pub(super) cmdif_checksum: u8,
}

/// The general capabilities (`cmd_hca_cap`), their maximum values, into `cap`.
pub(in crate::sim::mlx5) fn general_caps(cap: &mut [u8], caps: &Caps) {
    use ifc::gen_cap::*;
    // The one-bit capabilities the model has, and the fields that are 1 (an Ethernet port,
    // one port, one UAR per page).
    for f in [
        CQ_MODERATION,
        CQ_PERIOD_MODE_MODIFY,
        CQ_PERIOD_START_FROM_CQE,
        VPORT_COUNTERS,
        NIC_FLOW_TABLE,
        PCAM_REG,
        PORT_TYPE,
        NUM_PORTS,
        ETH_NET_OFFLOADS,
        BASIC_CYCLIC_RCV_WQE,
        NUM_OF_UARS_PER_PAGE,
    ] {
        set(cap, f, 1);
    }
    // 2^6 objects of each kind.
    for f in [
        LOG_MAX_CQ,
        LOG_MAX_EQ,
        LOG_MAX_TRANSPORT_DOMAIN,
        LOG_MAX_PD,
        LOG_MAX_RQ,
        LOG_MAX_SQ,
        LOG_MAX_TIR,
        LOG_MAX_TIS,
        LOG_MAX_RQT,
    ] {
        set(cap, f, 6);
    }
    set(cap, LOG_MAX_CQ_SZ, u32::from(caps.log_max_cq_sz));
    set(cap, LOG_MAX_EQ_SZ, u32::from(caps.log_max_eq_sz));
    set(cap, LOG_MAX_MKEY, 3);
    set(cap, MAX_QP_CNT, Q_COUNTERS as u32);
    set(cap, LOG_MAX_MSG, 20);
    set(cap, MAX_TC, 0);
    set(cap, LOG_PG_SZ, 12);
    set(cap, MAX_WQE_SZ_SQ, u32::from(caps.max_wqe_sz_sq));
    set(cap, MAX_WQE_SZ_RQ, 256);
    set(cap, LOG_MAX_RQT_SIZE, u32::from(caps.log_max_rqt_size));
    set(cap, LOG_MAX_TIS_PER_SQ, 0);
    set(cap, LOG_MAX_WQ_SZ, u32::from(caps.log_max_wq_sz));
    set(cap, LOG_MAX_VLAN_LIST, VLAN_LIST.trailing_zeros());
    set(cap, LOG_MAX_CURRENT_MC_LIST, MC_LIST.trailing_zeros());
    set(cap, LOG_MAX_CURRENT_UC_LIST, UC_LIST.trailing_zeros());
    set(cap, MAX_NUM_EQS, MAX_QUEUES as u32);
    set(cap, LOG_UAR_PAGE_SZ, 0);
    set(cap, DEVICE_FREQUENCY_KHZ, 1_000_000);
    set(cap, CQE_COMPRESSION, u32::from(caps.cqe_compression));
    set(cap, CQE_COMPRESSION_MAX_NUM, MAX_SESSION);
}

/// Frees every object of function `p` (TEARDOWN_HCA, as firmware does; a function reset
/// too): its queues, steering objects, UARs, PDs and transport domains. The HCA is left
/// ENABLED.
pub(in crate::sim::mlx5) fn teardown(t: &mut Tables<'_>, p: usize) {
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
        r.fte = crate::sim::mlx5::QueueSet::EMPTY.fte;
        r.fg = crate::sim::mlx5::QueueSet::EMPTY.fg;
        r.ft = crate::sim::mlx5::QueueSet::EMPTY.ft;
        r.tir = crate::sim::mlx5::QueueSet::EMPTY.tir;
        r.rqt = crate::sim::mlx5::QueueSet::EMPTY.rqt;
        r.rq.users = 0;
        r.tis = crate::sim::mlx5::QueueSet::EMPTY.tis;
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
            r.eq = crate::sim::mlx5::QueueSet::EMPTY.eq;
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

impl<M: BusMemory> Cx<'_, '_, M> {
    /// QUERY_HCA_CAP: op_mod bit 0 current (1) or maximum (0), bits 15..1 the type:
    /// general (0), Ethernet offloads (1) and the NIC flow table (7); other types are
    /// refused (the general caps advertise none of them).
    pub(super) fn query_hca_cap(&mut self, op_mod: u32) -> CmdResult {
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
                set(rx, MAX_FT_LEVEL, crate::sim::mlx5::MAX_FT_LEVEL);
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
    pub(super) fn set_hca_cap(&mut self, op_mod: u32) -> CmdResult {
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

    /// Frees every object of the function (TEARDOWN_HCA, as firmware does).
    pub(super) fn teardown(&mut self) {
        teardown(self.t, self.p);
    }

    /// ENABLE_HCA (`enable`) / DISABLE_HCA.
    pub(super) fn enable_hca(&mut self, enable: bool) -> CmdResult {
        if self.g(ifc::hca::FUNCTION_ID) != 0 || self.g(ifc::hca::EMBEDDED_CPU_FUNCTION) != 0 {
            return Err(bad(synd::FUNCTION_ID));
        }
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
            port.counters = crate::sim::mlx5::PortCounters::ZERO;
            port.func.vport = Vport::ZERO;
            port.func.vport_base = Vport::ZERO;
        }
        Ok(())
    }

    /// QUERY_ISSI: the current ISSI and the supported ones (0 and 1).
    pub(super) fn query_issi(&mut self) -> CmdResult {
        let issi = u32::from(self.port().func.issi);
        set(self.out, ifc::hca::QUERY_ISSI_CURRENT, issi);
        set(self.out, ifc::hca::QUERY_ISSI_SUPPORTED_DW0, 0b11);
        Ok(())
    }

    /// SET_ISSI: 0 or 1.
    pub(super) fn set_issi(&mut self) -> CmdResult {
        let v = self.g(ifc::hca::SET_ISSI_CURRENT);
        if v > 1 {
            return Err(bad(synd::ISSI));
        }
        self.port().func.issi = v as u16;
        Ok(())
    }

    /// QUERY_ADAPTER: the vendor and the PSID.
    pub(super) fn query_adapter(&mut self) -> CmdResult {
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

    /// INIT_HCA: with the boot and init pages given, if the driver asked for them.
    pub(super) fn init_hca(&mut self) -> CmdResult {
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

    /// TEARDOWN_HCA, graceful profile only.
    pub(super) fn teardown_hca(&mut self) -> CmdResult {
        if self.g(ifc::hca::TEARDOWN_PROFILE) != 0 {
            return Err(bad(synd::TEARDOWN_PROFILE));
        }
        self.teardown();
        Ok(())
    }
}
