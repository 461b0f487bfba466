// SPDX-License-Identifier: GPL-2.0

//! The ConnectX (mlx5) family: `hwif::mlx5` queues on a ConnectX function of the bus.
//!
//! A channel has an SQ with its TX CQ and an RQ with its RX CQ; the doorbell records of all
//! four share one coherent page (SQ at 0, RQ at 8, TX CQ at 16, RX CQ at 24). Every queue is
//! made and destroyed by command (`ctrl`); the CQs complete on the channel's completion EQ,
//! which raises the channel's vector. Counters carry mlx5e's names.
//!
//! Upstream counterpart: the channel's queues as `en_main.c` creates them
//! (`mlx5e_open_channel`: CQs, SQ, RQ, XDP and XSK SQs) and the counter names of
//! `en_stats.c`. The data path is `datapath` (`en_tx.c`, `en_rx.c`, `en_txrx.c`); the
//! function's commands, bring-up and events are `ctrl`.

use crate::bus::Function;
use crate::family::env::{RxEnv, TxSkb};
use crate::family::params::{
    priv_flags, ChannelParams, Coalesce, Moderation, PrivFlags, MAX_CHANNELS,
};
use crate::family::stats::{ChannelStats, Row};
use crate::family::{
    filled, Control, DeviceLinkStats, Family, Get, OpenCtx, Opened, RingLimits, Summary,
};
use crate::hwif::hw::Coherent;
use crate::hwif::mlx5::cmd::res;
use crate::hwif::mlx5::cmd::vport::{self, Ieee8023Counters, VportCounters};
use crate::hwif::mlx5::cq::Cq;
use crate::hwif::mlx5::eq::Eq;
use crate::hwif::mlx5::rq::{Rq, RqParams, RxCompletion};
use crate::hwif::mlx5::sq::{FifoEntry, Sq, SqParams, WqeInfo, BF_OFFSET};
use crate::hwif::pkt::DmaEntry;
use crate::kdma::KCoherent;
use crate::kernel_ext::net::device::{MacChange, RxMode};
use crate::kernel_ext::net::ethtool;
use crate::kernel_ext::net::page_pool::RxPage;
use crate::kernel_ext::net::xsk::XskBuf;
use crate::rss::{Fields, Flow, RssChange, RssSpec, FLOWS};
use crate::xdp::{XdpSqKind, XdpTx, XskRxEnv};
use kernel::{
    c_str, fmt,
    prelude::*,
    str::{CStr, CString},
    sync::Arc,
};

mod ctrl;
mod datapath;
mod link;
mod open;
mod stats;

use stats::{RQ_ROWS, SQ_ROWS};

use ctrl::cmd_errno;

priv_flags! {
    /// The private flags of a ConnectX port: mlx5e's (`enum mlx5e_priv_flag`) that rsnic
    /// has, with mlx5e's names, in mlx5e's order.
    pub(crate) enum Mlx5Flag {
        /// Basic CQE compression on the RX CQs (`MLX5E_PFLAG_RX_CQE_COMPRESS`).
        RxCqeCompress = "rx_cqe_compress",
        /// Received packets go up with the device's checksum verdict
        /// (`CHECKSUM_UNNECESSARY`) instead of `CHECKSUM_COMPLETE` from the CQE's sum
        /// (`MLX5E_PFLAG_RX_NO_CSUM_COMPLETE`; off at load).
        RxNoCsumComplete = "rx_no_csum_complete",
        /// Enhanced MPWQE on the XDP SQs (XDP_TX, `ndo_xdp_xmit`, XSK TX;
        /// `MLX5E_PFLAG_XDP_TX_MPWQE`).
        XdpTxMpwqe = "xdp_tx_mpwqe",
        /// Enhanced MPWQE on the regular SQs (`MLX5E_PFLAG_SKB_TX_MPWQE`).
        SkbTxMpwqe = "skb_tx_mpwqe",
    }
}

/// The flags that need the device's enhanced multi-packet send WQE (`enhanced_multi_pkt_send_wqe`).
const PFLAGS_MPWQE: PrivFlags<Mlx5Flag> =
    PrivFlags::from_ethtool(Mlx5Flag::XdpTxMpwqe.bit() | Mlx5Flag::SkbTxMpwqe.bit());

/// The mlx5 family.
pub(crate) struct Mlx5;

/// The device's counters `ethtool -S` shows: the port's Q counter and its vport's.
#[derive(Clone, Copy, Default)]
pub(crate) struct HwCounters {
    /// Received frames dropped for want of a WQE in the RQ (the Q counter's
    /// `out_of_buffer`, mlx5e's `rx_out_of_buffer`).
    out_of_buffer: u64,
    /// QUERY_VPORT_COUNTER.
    vport: VportCounters,
    /// PPCNT's IEEE 802.3 group (the receive errors of `ip -s -s link`).
    ieee: Ieee8023Counters,
}

/// The hardware counter rows `$first`, then for each `VportCounters` field its packets and
/// bytes as mlx5e's `vport_stats_desc` names them (`<dir>_vport_<cast>_{packets,bytes}`).
macro_rules! vport_rows {
    ($($first:expr),*; $($field:ident: $dir:literal $cast:literal),*) => {
        &[
            $($first,)*
            $(
                (concat!($dir, "_vport_", $cast, "_packets"), |c| c.vport.$field.packets),
                (concat!($dir, "_vport_", $cast, "_bytes"), |c| c.vport.$field.octets),
            )*
        ]
    };
}

/// An SQ of packets `P` on the module's memory.
type KSqOf<P> = Sq<P, KCoherent, KVec<WqeInfo<P>>, KVec<FifoEntry<P>>, KVec<DmaEntry>>;
type KSq = KSqOf<TxSkb>;
type KRq = Rq<RxPage, KCoherent, KVec<Option<RxPage>>>;
type KXdpSq = KSqOf<XdpTx>;
type KXskRq = Rq<XskBuf, KCoherent, KVec<Option<XskBuf>>>;
type KEq = Eq<KCoherent>;

/// Most EQEs one interrupt consumes (`MLX5_EQ_POLLING_BUDGET` is 128; a channel's EQ holds
/// at most one per CQ between interrupts).
const COMP_EQ_BUDGET: u32 = 64;

/// Records in `slot` the object a create command made (so a failed open destroys it).
fn rec(slot: &mut Option<u32>, r: Result<u32>) -> Result<u32> {
    let n = r?;
    *slot = Some(n);
    Ok(n)
}

/// Device queue numbers of a channel.
#[derive(Clone, Copy, Default)]
pub(crate) struct Queues {
    tx_cq: Option<u32>,
    rx_cq: Option<u32>,
    sq: Option<u32>,
    rq: Option<u32>,
    /// The XDP_TX SQ and its CQ (while a program is attached).
    xdp_tx_cq: Option<u32>,
    xdp_tx_sq: Option<u32>,
    /// The ndo_xdp_xmit SQ and its CQ.
    xdp_rd_cq: Option<u32>,
    xdp_rd_sq: Option<u32>,
    /// The channel's completion EQ.
    eq: Option<u8>,
    /// AF_XDP zero-copy: the XSK SQ, the ICO SQ, the XSK RQ, and their CQs.
    xsk_sq_cq: Option<u32>,
    xsk_sq: Option<u32>,
    ico_cq: Option<u32>,
    ico_sq: Option<u32>,
    xsk_rq_cq: Option<u32>,
    xsk_rq: Option<u32>,
}

/// A channel's moderation as the CQ context takes it (event-based period, mlx5e's default
/// `cq_period_mode`); the port bounded it by [`Control::COALESCE_MAX`].
fn cq_moderation(m: Moderation) -> res::CqModeration {
    res::CqModeration {
        period: m.usecs.min(res::MAX_CQ_PERIOD),
        max_count: m.frames,
    }
}

/// The RSS hash type of a CQE (`rss_hash_type`): L4 when the TCP/UDP ports were hashed, L3
/// when only addresses were.
fn hash_type(c: &RxCompletion) -> u8 {
    if c.hash_type >> 6 != 0 {
        2
    } else if (c.hash_type >> 2) & 3 != 0 {
        1
    } else {
        0
    }
}

impl Family for Mlx5 {
    const NAME: &'static str = "mlx5";
    const FW_VERSION: &'static str = "sim-mlx5";
    const DEFAULT_PFLAGS: PrivFlags<Mlx5Flag> = PFLAGS_MPWQE;
    const NO_CSUM_COMPLETE: Option<Mlx5Flag> = Some(Mlx5Flag::RxNoCsumComplete);

    /// The initialization segment's `fw_rev`, as mlx5's `devlink dev info` (`fw.version`,
    /// major.minor.subminor).
    fn fw_version(hw: &Arc<Function>, _func: &Self::Func) -> Result<(&'static CStr, CString)> {
        let (maj, min, sub) = crate::hwif::mlx5::cmd::queue::fw_rev(&hw.bar());
        let v = CString::try_from_fmt(fmt!("{}.{}.{:04}", maj, min, sub))?;
        Ok((c_str!("fw.version"), v))
    }

    fn board_id(func: &Self::Func) -> Option<(&'static CStr, CString)> {
        // The PSID is NUL-padded ASCII; a device that reported none has no board id.
        let psid = &func.resources().psid;
        let n = psid.iter().position(|&b| b == 0).unwrap_or(psid.len());
        let id = psid
            .get(..n)
            .filter(|s| !s.is_empty() && s.iter().all(u8::is_ascii_graphic))?;
        let id = core::str::from_utf8(id).ok()?;
        CString::try_from_fmt(fmt!("{}", id))
            .ok()
            .map(|v| (c_str!("fw.psid"), v))
    }

    // The SQ must hold the stop room of a full MPWQE session plus a largest WQE (60
    // WQEBBs), so at least 64 WQEBBs.
    const SQ_RING: RingLimits = RingLimits {
        min: 6,
        default: 10,
        max: 13,
    };
    const RQ_RING: RingLimits = RingLimits {
        min: 6,
        default: 9,
        max: 13,
    };
    const XDP_SQS: bool = true;
    const XSK_ZC: bool = true;
    const RX_SCATTER: bool = true;
    const QUEUE_INFIX: &'static str = "";

    const ROWS: &'static [&'static [Row<ChannelStats<Self>>]] = &[SQ_ROWS, RQ_ROWS];

    // mlx5e's Q counter (`q_stats_desc`, QUERY_Q_COUNTER of the port's counter set, which
    // every RQ names), then its vport counters (`vport_stats_desc`, QUERY_VPORT_COUNTER).
    const HW: &'static [(&'static str, Get<HwCounters>)] = vport_rows![
        ("rx_out_of_buffer", |c| c.out_of_buffer);
        rx_unicast: "rx" "unicast",
        tx_unicast: "tx" "unicast",
        rx_multicast: "rx" "multicast",
        tx_multicast: "tx" "multicast",
        rx_broadcast: "rx" "broadcast",
        tx_broadcast: "tx" "broadcast"
    ];

    fn summary(s: &ChannelStats<Self>) -> Summary {
        Summary {
            tx_packets: s.tx.packets,
            tx_bytes: s.tx.bytes,
            tx_dropped: s.tx.dropped + s.ch.tx_dropped,
            tx_errors: s.tx.cqe_err,
            tx_stop: s.tx.stopped,
            tx_wake: s.tx.wake,
            rx_packets: s.rx_stack_packets(),
            rx_bytes: s.rx_stack_bytes(),
            rx_dropped: s.ch.rx_dropped,
            multicast: s.ch.rx_mcast,
            rx_errors: s.rx.wqe_err,
            rx_alloc_fail: s.rx.buff_alloc_err,
        }
    }

    // mlx5e_build_nic_params: both MPWQE flags follow the capability
    // (`mlx5e_tx_mpwqe_supported`).
    fn default_pflags(func: &ctrl::Func) -> PrivFlags<Mlx5Flag> {
        if func.resources().caps.has_enhanced_mpwqe() {
            PFLAGS_MPWQE
        } else {
            PrivFlags::NONE
        }
    }
}

/// PCAM of a port with PPLM (`mlx5e_get_fec_mode`'s checks: `pcam_reg` and PCAM's `pplm`),
/// else `EOPNOTSUPP`. Sleeps.
fn fec_pplm(func: &ctrl::Func) -> Result<vport::Pcam> {
    match func.query_pcam()? {
        Some(p) if p.pplm => Ok(p),
        _ => Err(crate::kernel_ext::net::eopnotsupp()),
    }
}

/// The RMON size buckets of PPCNT's RFC 2819 group (`ether_stats_pkts64octets` ..
/// `ether_stats_pkts8192to10239octets`, frame lengths with the FCS), as `mlx5e_rmon_ranges`.
const RMON_RANGES: [ethtool::RmonRange; 11] = [
    ethtool::RmonRange::new(0, 64),
    ethtool::RmonRange::new(65, 127),
    ethtool::RmonRange::new(128, 255),
    ethtool::RmonRange::new(256, 511),
    ethtool::RmonRange::new(512, 1023),
    ethtool::RmonRange::new(1024, 1518),
    ethtool::RmonRange::new(1519, 2047),
    ethtool::RmonRange::new(2048, 4095),
    ethtool::RmonRange::new(4096, 8191),
    ethtool::RmonRange::new(8192, 10239),
    ethtool::RmonRange::END,
];

impl Control for Mlx5 {
    type Queues = Queues;
    type PrivFlag = Mlx5Flag;

    type Func = ctrl::Func;
    type HwCounters = HwCounters;

    fn query_counters(_hw: &Arc<Function>, func: &Arc<ctrl::Func>) -> Result<HwCounters> {
        Ok(HwCounters {
            vport: func.query_counters()?,
            out_of_buffer: u64::from(func.query_out_of_buffer()?),
            ieee: func.query_ieee_802_3()?,
        })
    }

    // As mlx5e_get_stats: the Q counter's drops are rx_missed_errors, PPCNT's length and
    // FCS errors the receive errors.
    fn link_stats(c: &HwCounters) -> DeviceLinkStats {
        DeviceLinkStats {
            // The device's values: wrapping, never an overflow panic.
            rx_length_errors: c
                .ieee
                .in_range_len_errors
                .wrapping_add(c.ieee.out_of_range_len)
                .wrapping_add(c.ieee.too_long_errors),
            rx_crc_errors: c.ieee.fcs_errors,
            rx_missed_errors: c.out_of_buffer,
        }
    }

    // A ConnectX function is one port.
    fn bring_up(hw: &Arc<Function>) -> Result<KVec<Arc<ctrl::Func>>> {
        let f = ctrl::Func::bring_up(hw).map_err(|e| match e {
            ctrl::BringupError::Cmd(e) => {
                pr_err!(
                    "device {} port {}: bring-up failed: {}\n",
                    hw.device(),
                    hw.index(),
                    e
                );
                cmd_errno(&e)
            }
            ctrl::BringupError::Kernel(e) => e,
        })?;
        let mut v = KVec::new();
        if let Err(e) = v.push(f.clone(), GFP_KERNEL) {
            Self::tear_down(hw, &f);
            return Err(e.into());
        }
        Ok(v)
    }

    // As mlx5: vector 0 carries the function's control EQ (the async EQ, ASYNC_INTR), the
    // completion vectors follow, one per channel (`mlx5_comp_vector`), never shared.
    fn channel_vector(hw: &Function, _func: &ctrl::Func, ch: u32) -> Option<usize> {
        let v = (ch as usize).checked_add(1)?;
        (v < hw.num_vectors()).then_some(v)
    }

    // As mlx5e_get_max_num_channels: the function's completion vectors (all but the control
    // EQ's; mlx5_core's `get_num_eqs` also stops at the device's EQs less the async ones,
    // rsnic's one) and the RQ table (log_max_rqt_size), at most MAX_CHANNELS (mlx5e: 256).
    // And what a real ConnectX never lacks but the device may say it has fewer of: CQs, SQs
    // and RQs (log_max_cq, log_max_sq, log_max_rq) for every channel with an XDP program
    // (4 CQs: TX, RX, redirect SQ, XDP_TX SQ; 3 SQs; 1 RQ), so that attaching a program
    // never runs out. AF_XDP queues take 3 CQs, 2 SQs and an RQ more each; a bind the
    // device has no room for is refused with the device's error.
    fn max_channels(hw: &Function, func: &ctrl::Func) -> u32 {
        let c = &func.resources().caps;
        let objs = |log: u8| 1usize << log.min(24);
        let eqs = if c.max_num_eqs != 0 {
            usize::from(c.max_num_eqs)
        } else {
            objs(c.log_max_eq)
        };
        hw.num_vectors()
            .saturating_sub(1)
            .min(eqs.saturating_sub(1))
            .min(objs(c.log_max_rqt_size))
            .min(objs(c.log_max_cq) / 4)
            .min(objs(c.log_max_sq) / 3)
            .min(objs(c.log_max_rq))
            .min(MAX_CHANNELS) as u32
    }

    fn tear_down(hw: &Arc<Function>, func: &ctrl::Func) {
        if let Some(e) = func.tear_down() {
            pr_warn!("port {}: teardown: {}\n", hw.index(), e);
        }
    }

    fn func_attach(
        _hw: &Arc<Function>,
        func: &Arc<ctrl::Func>,
        dev: Option<&crate::kernel_ext::net::device::Device>,
    ) {
        func.attach(dev);
    }

    const CARRIER_FROM_EVENTS: bool = true;

    fn set_admin(hw: &Arc<Function>, func: &Arc<ctrl::Func>, up: bool) -> Result {
        func.set_admin(up).map_err(|e| {
            pr_err!("port {}: {}\n", hw.index(), e);
            cmd_errno(&e)
        })
    }

    fn permanent_mac(func: &ctrl::Func) -> Option<[u8; 6]> {
        Some(func.resources().vport.mac)
    }

    fn max_mtu(func: &ctrl::Func) -> u32 {
        func.max_mtu()
    }

    fn apply_mtu(_hw: &Arc<Function>, func: &Arc<ctrl::Func>, mtu: u32) -> Result {
        func.set_mtu(mtu)
    }

    const RX_FILTER: bool = true;

    fn set_rx_mode(func: &Arc<ctrl::Func>, mode: &RxMode) {
        func.set_rx_mode(mode);
    }

    fn set_mac_address(func: &Arc<ctrl::Func>, change: MacChange<'_>) -> Result {
        func.set_mac(change)
    }

    const VLAN_FILTER: bool = true;

    fn vlan_rx_vid(func: &Arc<ctrl::Func>, vid: u16, add: bool) -> Result {
        func.vlan_rx_vid(vid, add)
    }

    fn set_vlan_filter(func: &Arc<ctrl::Func>, on: bool) -> Result {
        func.set_vlan_filter(on)
    }

    fn refuse_pflags(func: &ctrl::Func, flags: PrivFlags<Mlx5Flag>) -> Option<&'static str> {
        // As mlx5e's set_pflag_skb_tx_mpwqe / set_pflag_xdp_tx_mpwqe (EOPNOTSUPP).
        if !func.resources().caps.has_enhanced_mpwqe() {
            if flags.has(Mlx5Flag::SkbTxMpwqe) {
                return Some(
                    "skb_tx_mpwqe: the device has no enhanced multi-packet send WQE \
                     (enhanced_multi_pkt_send_wqe is 0 in its capabilities)",
                );
            }
            if flags.has(Mlx5Flag::XdpTxMpwqe) {
                return Some(
                    "xdp_tx_mpwqe: the device has no enhanced multi-packet send WQE \
                     (enhanced_multi_pkt_send_wqe is 0 in its capabilities)",
                );
            }
        }
        if flags.has(Mlx5Flag::RxCqeCompress) && !func.resources().caps.cqe_compression {
            return Some(
                "rx_cqe_compress: the device has no CQE compression \
                 (cqe_compression is 0 in its capabilities)",
            );
        }
        None
    }

    // Global pause through PFCC, its counters through PPCNT (mlx5e_get_pauseparam,
    // mlx5e_set_pauseparam, mlx5e_stats_pause_get).
    const PAUSE: bool = true;

    fn query_pause(_hw: &Arc<Function>, func: &Arc<ctrl::Func>) -> Result<(bool, bool)> {
        func.query_pause()
    }

    fn apply_pause(_hw: &Arc<Function>, func: &Arc<ctrl::Func>, rx: bool, tx: bool) -> Result {
        func.set_pause(rx, tx)
    }

    // PTYS (modes, speed, connector, autonegotiation) and PFCC (pause), read each time as
    // mlx5e_ethtool_get_link_ksettings does.
    fn link_settings(
        func: &Arc<ctrl::Func>,
        carrier: bool,
        ks: &mut ethtool::LinkSettings<'_>,
    ) -> Result {
        let p = func.query_ptys()?;
        let (rx, tx) = func.query_pause()?;
        link::fill(&p, rx, tx, carrier, ks);
        Ok(())
    }

    // As mlx5e_get_link_ext_state: PDDR's troubleshooting status opcode, mapped as
    // mlx5e_link_ext_state_opcode_map (0, an unmapped opcode or a failed read: no reason).
    const LINK_EXT_STATE: bool = true;

    fn link_down_reason(func: &Arc<ctrl::Func>) -> Option<ethtool::LinkExtState> {
        let opcode = func.query_link_down_reason().ok()?;
        let (state, substate) = vport::link_ext_state(opcode)?;
        Some(ethtool::LinkExtState { state, substate })
    }

    // As mlx5e_ethtool_set_link_ksettings: the modes asked for (those advertised with
    // autonegotiation, those of the speed without), within the port's; a PTYS write if
    // anything changes, then the port's link toggled if it was up (mlx5_toggle_port_link).
    const LINK_SET: bool = true;

    fn set_link_settings(
        func: &Arc<ctrl::Func>,
        dev: &crate::kernel_ext::net::device::Device,
        req: &ethtool::LinkRequest<'_>,
    ) -> Result {
        let p = func.query_ptys()?;
        let (admin, an_disable) = link::wanted(&p, req).map_err(|why| {
            pr_err!("{}: ethtool -s: {}\n", dev.name(), why);
            EINVAL
        })?;
        if admin == p.admin && an_disable == p.an_disable_admin {
            return Ok(());
        }
        func.set_ptys(admin, an_disable)?;
        if dev.is_running() {
            let toggle = func.set_admin(false).and_then(|()| func.set_admin(true));
            toggle.map_err(|e| ctrl::cmd_errno(&e))?;
        }
        Ok(())
    }

    fn query_pause_stats(_hw: &Arc<Function>, func: &Arc<ctrl::Func>) -> Result<(u64, u64)> {
        let c = func.query_ieee_802_3()?;
        Ok((c.pause_tx, c.pause_rx))
    }

    // The IEEE 802.3 group of PPCNT for eth-mac and eth-ctrl, the RFC 2819 group for rmon,
    // field for field as mlx5e_stats_eth_mac_get, _eth_ctrl_get and _rmon_get.
    const MAC_STATS: bool = true;
    const RMON_RANGES: ethtool::RmonRanges = ethtool::RmonRanges::new(&RMON_RANGES);

    fn query_mac_stats(func: &Arc<ctrl::Func>) -> Result<(ethtool::MacStats, ethtool::CtrlStats)> {
        let c = func.query_ieee_802_3()?;
        let mac = ethtool::MacStats {
            frames_tx: c.frames_tx,
            frames_rx: c.frames_rx,
            fcs_errors: c.fcs_errors,
            octets_tx: c.octets_tx,
            octets_rx: c.octets_rx,
            mcast_tx: c.mcast_tx,
            bcast_tx: c.bcast_tx,
            mcast_rx: c.mcast_rx,
            bcast_rx: c.bcast_rx,
            in_range_len_errors: c.in_range_len_errors,
            out_of_range_len: c.out_of_range_len,
            too_long_errors: c.too_long_errors,
        };
        let ctrl = ethtool::CtrlStats {
            mac_ctrl_tx: c.mac_ctrl_tx,
            mac_ctrl_rx: c.mac_ctrl_rx,
            unsupported_opcodes: c.unsupported_opcodes,
        };
        Ok((mac, ctrl))
    }

    fn query_rmon_stats(func: &Arc<ctrl::Func>) -> Result<ethtool::RmonStats> {
        let c = func.query_rfc_2819()?;
        let mut hist = [0u64; ethtool::RMON_HIST_MAX];
        for (h, v) in hist.iter_mut().zip(c.hist) {
            *h = v;
        }
        Ok(ethtool::RmonStats {
            undersize: c.undersize,
            oversize: c.oversize,
            fragments: c.fragments,
            jabbers: c.jabbers,
            hist,
        })
    }

    // mlx5e_stats_eth_phy_get: the IEEE 802.3 group's a_symbol_error_during_carrier.
    fn query_phy_stats(func: &Arc<ctrl::Func>) -> Result<u64> {
        Ok(func.query_ieee_802_3()?.symbol_errors)
    }

    // FEC through PPLM, as mlx5e_get_fecparam / mlx5e_set_fecparam / mlx5e_get_fec_stats,
    // on a device whose PCAM lists PPLM.
    const FEC: bool = true;

    fn query_fec(func: &Arc<ctrl::Func>) -> Result<ethtool::FecParam> {
        fec_pplm(func)?;
        let p = func.query_pplm()?;
        let active = vport::pplm_to_ethtool(p.active);
        if active == 0 {
            // A running mode ethtool has no name for (mlx5e: EOPNOTSUPP).
            return Err(crate::kernel_ext::net::eopnotsupp());
        }
        Ok(ethtool::FecParam {
            fec: vport::pplm_to_ethtool(p.configured()),
            active,
        })
    }

    fn set_fec(
        func: &Arc<ctrl::Func>,
        dev: &crate::kernel_ext::net::device::Device,
        fec: u32,
    ) -> Result {
        let pcam = fec_pplm(func)?;
        // (6.12's set_fecparam has no extack: the reason goes to the kernel log.)
        let refuse = |why: &str| {
            pr_err!("{}: ethtool --set-fec: {}\n", dev.name(), why);
            crate::kernel_ext::net::eopnotsupp()
        };
        let policy = vport::fec_policy(fec, pcam.fec_50g_per_lane).map_err(refuse)?;
        let p = func.query_pplm()?;
        let new = p
            .with_policy(policy)
            .ok_or_else(|| refuse("the port offers that FEC mode at no speed"))?;
        func.set_pplm(&new)?;
        // mlx5_toggle_port_link: the link retrains with the new mode if it was up.
        if dev.is_running() {
            let toggle = func.set_admin(false).and_then(|()| func.set_admin(true));
            toggle.map_err(|e| ctrl::cmd_errno(&e))?;
        }
        Ok(())
    }

    const MODULE: bool = true;

    fn module_info(func: &Arc<ctrl::Func>) -> Result<ethtool::ModuleInfo> {
        ctrl::module::module_info(func)
    }

    fn module_eeprom(func: &Arc<ctrl::Func>, offset: u32, buf: &mut [u8]) -> Result {
        ctrl::module::module_eeprom(func, offset, buf)
    }

    fn module_page(
        func: &Arc<ctrl::Func>,
        page: &ethtool::ModulePage,
        buf: &mut [u8],
        extack: &mut ethtool::ExtAck,
    ) -> Result<usize> {
        ctrl::module::module_page(func, page, buf, extack)
    }

    fn query_fec_stats(func: &Arc<ctrl::Func>) -> Result<Option<ethtool::FecStats>> {
        let Some(pcam) = func.query_pcam()? else {
            return Ok(None);
        };
        if !pcam.pplm || !pcam.ppcnt_statistical {
            return Ok(None);
        }
        // fec_active_mode: the lowest mode running; none (link down: 32) is not "no FEC".
        let mode = func.query_pplm()?.active.trailing_zeros();
        if mode == vport::mode::NOFEC {
            return Ok(None);
        }
        let mut s = ethtool::FecStats::default();
        s.corrected_bits.total = Some(func.query_corrected_bits()?);
        match mode {
            vport::mode::RS_528_514 | vport::mode::RS_544_514 | vport::mode::LLRS_272_257_1 => {
                let c = func.query_phys()?;
                s.corrected_blocks.total = Some(c.rs_corrected);
                s.uncorrectable_blocks.total = Some(c.rs_uncorrectable);
            }
            vport::mode::FIRECODE => {
                let c = func.query_phys()?;
                // Per lane, as many as the port has (at most the four PPCNT counts).
                let lanes = usize::from(func.query_lanes().unwrap_or(0)).min(4);
                for i in 0..lanes {
                    s.corrected_blocks.lanes[i] = Some(c.fc_corrected[i]);
                    s.uncorrectable_blocks.lanes[i] = Some(c.fc_uncorrectable[i]);
                }
            }
            _ => {}
        }
        Ok(Some(s))
    }

    fn open(
        ctx: &OpenCtx<'_, Self>,
        q: &mut Queues,
        p: &ChannelParams<Mlx5Flag>,
    ) -> Result<Opened<Self>> {
        open::channel(ctx, q, p)
    }

    const COALESCE: bool = true;
    const COALESCE_MAX: Moderation = Moderation {
        usecs: res::MAX_CQ_PERIOD,
        frames: u16::MAX,
    };

    // As mlx5e_build_nic_params: DIM on in both directions where the device moderates CQs
    // and changes live ones, starting at DIM's default profile; otherwise 16 µs / 32
    // completions, fixed. (mlx5e times RX periods from the CQE where the device offers it;
    // rsnic's CQs always time from the event, cq_period_mode 0.)
    fn default_coalesce(func: &ctrl::Func) -> Coalesce {
        let dim = func.cq_moderation();
        let pick = |rx| {
            if dim {
                Moderation::dim_default(rx, Self::COALESCE_MAX)
            } else {
                Coalesce::MLX5E_STATIC
            }
        };
        Coalesce {
            rx: pick(true),
            tx: pick(false),
            adaptive_rx: dim,
            adaptive_tx: dim,
        }
    }

    fn modify_moderation(func: &Arc<ctrl::Func>, q: &Queues, rx: bool, m: Moderation) -> Result {
        // mlx5e changes the regular queues' CQs; the XSK RQ takes the RQ's place for RX.
        let cqs = if rx {
            [q.rx_cq, q.xsk_rq_cq]
        } else {
            [q.tx_cq, None]
        };
        for cqn in cqs.into_iter().flatten() {
            func.modify_cq_moderation(cqn, cq_moderation(m))?;
        }
        Ok(())
    }

    const RX_VLAN_TOGGLE: bool = true;

    fn apply_rx_vlan(func: &Arc<ctrl::Func>, q: &Queues, strip: bool) -> Result {
        // mlx5e_modify_channels_vsd changes the regular RQs; the XSK RQ is one too.
        for rqn in [q.rq, q.xsk_rq].into_iter().flatten() {
            func.set_rq_vsd(rqn, !strip)?;
        }
        Ok(())
    }

    const QUEUE_RESET: bool = true;

    fn queue_to_reset(func: &Arc<ctrl::Func>, q: &Queues, sq: bool) -> Result {
        let qn = if sq { q.sq } else { q.rq };
        func.queue_to_reset(sq, qn.ok_or(EINVAL)?)
    }

    fn query_queue_state(func: &Arc<ctrl::Func>, q: &Queues, sq: bool) -> Option<&'static str> {
        let qn = if sq { q.sq } else { q.rq };
        Some(match func.query_queue_state(sq, qn?) {
            Ok(res::QState::Rst) => "RST",
            Ok(res::QState::Rdy) => "RDY",
            Ok(res::QState::Err) => "ERR",
            Err(_) => "query failed",
        })
    }

    fn queue_to_ready(func: &Arc<ctrl::Func>, q: &Queues, sq: bool) -> Result {
        match (sq, q.sq, q.rq) {
            (true, Some(n), _) => func.ready_sq(n),
            (false, _, Some(n)) => func.ready_rq(n),
            _ => Err(EINVAL),
        }
    }

    fn xsk_split(q: &mut Queues) -> Queues {
        Queues {
            xsk_sq_cq: q.xsk_sq_cq.take(),
            xsk_sq: q.xsk_sq.take(),
            ico_cq: q.ico_cq.take(),
            ico_sq: q.ico_sq.take(),
            xsk_rq_cq: q.xsk_rq_cq.take(),
            xsk_rq: q.xsk_rq.take(),
            ..Queues::default()
        }
    }

    fn destroy(_hw: &Arc<Function>, func: &Arc<ctrl::Func>, q: &Queues) {
        // Queues before their CQs, CQs before the EQ.
        for n in [q.rq, q.xsk_rq].into_iter().flatten() {
            func.destroy(|b| res::destroy_rq(b, n));
        }
        for n in [q.sq, q.xdp_tx_sq, q.xdp_rd_sq, q.xsk_sq, q.ico_sq]
            .into_iter()
            .flatten()
        {
            func.destroy(|b| res::destroy_sq(b, n));
        }
        for n in [
            q.rx_cq,
            q.tx_cq,
            q.xdp_tx_cq,
            q.xdp_rd_cq,
            q.xsk_sq_cq,
            q.ico_cq,
            q.xsk_rq_cq,
        ]
        .into_iter()
        .flatten()
        {
            func.destroy(|b| res::destroy_cq(b, n));
        }
        if let Some(n) = q.eq {
            func.destroy(|b| res::destroy_eq(b, n));
        }
    }

    fn apply_loopback(_hw: &Arc<Function>, func: &Arc<ctrl::Func>, on: bool) -> Result {
        func.set_loopback(on)
    }

    fn apply_rss(
        _hw: &Arc<Function>,
        func: &Arc<ctrl::Func>,
        spec: Option<&RssSpec<'_>>,
        change: RssChange,
    ) -> Result {
        func.set_rss(spec, change)
    }

    // Contexts: an RQT and six TIRs each, within the model's 64 TIRs per function
    // (6 + 8 direct + 8 * 6).
    const RSS_CONTEXTS: usize = crate::rss::MAX_CONTEXTS;

    fn apply_rss_ctx(
        _hw: &Arc<Function>,
        func: &Arc<ctrl::Func>,
        id: usize,
        spec: Option<&RssSpec<'_>>,
        change: RssChange,
    ) -> Result {
        func.set_rss_ctx(id, spec, change)
    }

    // A rule table of 32 (mlx5e's ethtool tables take 1024; the model's 64 entries and
    // groups per function hold the traffic-type table's and these).
    const NTUPLE_RULES: usize = crate::ntuple::MAX_RULES;

    fn apply_rule(
        _hw: &Arc<Function>,
        func: &Arc<ctrl::Func>,
        loc: usize,
        rule: Option<&crate::ntuple::Rule>,
    ) -> Result {
        func.set_rule(loc, rule)
    }

    // mlx5e_rqt_size: 256 entries for up to 32 channels, within the device's
    // log_max_rqt_size.
    fn rss_table_size(func: &ctrl::Func) -> usize {
        let log = func.resources().caps.log_max_rqt_size.min(8);
        (1usize << log).min(ctrl::rss::RQT_SIZE)
    }

    // mlx5e's rss_default_config: TCP and UDP over addresses and ports, other IP over the
    // addresses.
    const RSS_FIELDS: [Fields; FLOWS] = [
        Fields::ADDRS_PORTS,
        Fields::ADDRS_PORTS,
        Fields::ADDRS,
        Fields::ADDRS_PORTS,
        Fields::ADDRS_PORTS,
        Fields::ADDRS,
    ];

    // mlx5e_set_rss_hash_opt: TCP and UDP only, any of addresses and ports.
    fn refuse_rss_fields(flow: Flow, _fields: Fields) -> Option<&'static str> {
        match flow {
            Flow::Tcp4 | Flow::Udp4 | Flow::Tcp6 | Flow::Udp6 => None,
            Flow::Ip4 | Flow::Ip6 => Some(
                "the hash fields of other IP traffic are fixed (source and destination address)",
            ),
        }
    }

    fn xdp_sq_open(
        ctx: &OpenCtx<'_, Self>,
        q: &mut Queues,
        p: &ChannelParams<Mlx5Flag>,
        kind: XdpSqKind,
    ) -> Result<Option<KXdpSq>> {
        open::xdp_sq(ctx, q, p, kind)
    }

    fn xsk_rq_open(
        ctx: &OpenCtx<'_, Self>,
        q: &mut Queues,
        p: &ChannelParams<Mlx5Flag>,
        buf_size: u32,
        env: &mut XskRxEnv<'_>,
    ) -> Result<Option<(KXskRq, u32)>> {
        open::xsk_rq(ctx, q, p, buf_size, env)
    }
}
