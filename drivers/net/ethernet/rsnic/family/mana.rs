// SPDX-License-Identifier: GPL-2.0

//! The MANA (GDMA) family: `hwif::mana` queues on a MANA function of the bus.
//!
//! The device is brought up over its hardware channel at probe and taken down at removal
//! (`ctrl`, see there): SMC ESTABLISH_HWC, the HWC, VERIFY_VF_DRIVER_VERSION,
//! QUERY_MAX_RESOURCES, LIST_DEVICES, REGISTER_DEVICE, the MANA EQs, QUERY_DEV_CONFIG and
//! QUERY_VPORT_CONFIG per port, whose MAC the port takes. Every queue's doorbells then go to
//! the page REGISTER_DEVICE gave.
//!
//! A channel has an event queue on its vector, an SQ with its TX CQ and an RQ with its RX
//! CQ; both CQs report to the EQ. All are created and destroyed by HWC request when the
//! channel opens and closes (GDMA_CREATE_QUEUE over a DMA region for the EQ,
//! MANA_CREATE_WQ_OBJ for each queue with its CQ, MANA_DESTROY_WQ_OBJ, DISABLE_QUEUE), and
//! the RSS table is MANA_CONFIG_VPORT_RX. Loopback is rsnic's own request,
//! RSNIC_SET_LOOPBACK (upstream mana has none).
//!
//! Flow control (`ethtool -a`, `-A`, `-I -a`) goes through rsnic's own HWC requests,
//! RSNIC_SET_PAUSE and RSNIC_QUERY_PAUSE (upstream mana has no pause operation). The device
//! keeps the setting as the vport's state: channel reopens and interface down/up, which
//! destroy and re-create WQ objects and reconfigure RX steering, do not touch it, so nothing
//! is re-applied.
//!
//! Doorbells: the SQ is rung by `xmit_more` with BQL (beyond upstream MANA, which rings per
//! packet); the RQ is rung once per NAPI poll that read completions, with `wqe_cnt = 0`
//! (private flag `rx_db_per_packet` restores the pre-2023 doorbell per re-posted WQE, for
//! the comparison in `make bench`); CQs are armed when NAPI completes and rung with arm = 0
//! at least once per 8 wraps while it keeps polling; the EQ is re-armed by every interrupt
//! that read events. Counters carry MANA's names (`stop_queue`, `hc_rx_discards_no_wqe`,
//! `tx_<N>_packets`, ...) plus rsnic's exact doorbell and PCIe-model counts.
//!
//! AF_XDP zero-copy (beyond upstream mana, which has none): a channel whose queue has an XSK
//! pool also gets an XSK SQ and an XSK RQ, each with its CQ on the channel's EQ; the XSK RQ
//! takes the channel's place in the RSS table. The XSK RQ is filled from the socket's fill
//! ring at open and refilled at the end of every NAPI poll (a received buffer is always
//! delivered, [`Rq::poll_refill`]); the XSK SQ carries one short-OOB WQE per descriptor of
//! the socket's TX ring, rung once per poll. MANA has no NOP WQE, so there is no ICO SQ:
//! `ndo_xsk_wakeup` schedules the channel's NAPI directly. Counters: mlx5e's `rx_xsk_*`,
//! `tx_xsk_*` names.
//!
//! Upstream counterpart: `mana_en.c` (`mana_create_txq`, `mana_create_rxq`,
//! `mana_config_rss`) and the counter names of `mana_ethtool.c`. The data path is `datapath`
//! (`mana_start_xmit`, `mana_poll`); the device's bring-up and requests are `ctrl`.

use super::{Control, Family, Get, OpenCtx, Opened, RingLimits, RxMeta, Summary};
use crate::bus::Function;
use crate::family::env::{RxEnv, TxSkb};
use crate::family::filled;
use crate::family::params::{priv_flags, ChannelParams, PrivFlags, MAX_CHANNELS};
use crate::family::stats::{ChannelStats, Row};
use crate::hwif::mana::gdma_req::{GDMA_RQ, GDMA_SQ};
use crate::hwif::mana::{
    cq::{Cq, Eq, EQ_MAX_CQS},
    fmt::{BU_SIZE, DB_CQ, DB_EQ, DB_RQ, DB_SQ, EQE_SIZE},
    gdma_req::GfStats,
    rq::{Rq, RqParams, RxCompletion},
    sq::{Sq, SqParams, TxPending},
};
use crate::hwif::pkt::DmaEntry;
use crate::kdma::KCoherent;
use crate::kernel_ext::net::page_pool::RxPage;
use crate::kernel_ext::net::xsk::XskBuf;
use crate::rss::{Fields, Flow, RssChange, RssSpec, FLOWS, MAX_TABLE};
use crate::xdp::{XdpSqKind, XdpTx, XskRxEnv};
use kernel::{
    c_str, fmt,
    prelude::*,
    str::{CStr, CString},
    sync::Arc,
};

mod ctrl;
mod datapath;
mod stats;

use stats::{RQ_ROWS, SQ_ROWS};

priv_flags! {
    /// The private flags of a MANA port (upstream mana has none: the flag is rsnic's).
    pub(crate) enum ManaFlag {
        /// Ring the RQ doorbell for every re-posted WQE (the pre-2023 behaviour, kept only
        /// to measure what batching saves).
        RxDbPerPacket = "rx_db_per_packet",
    }
}

/// Entries of a channel's EQ: one 4 KiB page, the smallest GDMA queue (its CQs, at most
/// four, post at most one event each per arm).
const EQ_ENTRIES: u32 = 4096 / EQE_SIZE as u32;

/// The MANA family.
pub(crate) struct Mana;

type KSq = Sq<TxSkb, KCoherent, KVec<TxPending<TxSkb>>, KVec<DmaEntry>>;
type KRq = Rq<RxPage, KCoherent, KVec<Option<RxPage>>>;
type KXskSq = Sq<XdpTx, KCoherent, KVec<TxPending<XdpTx>>, KVec<DmaEntry>>;
type KXskRq = Rq<XskBuf, KCoherent, KVec<Option<XskBuf>>>;

/// A channel's device queues: the EQ's id and the WQ objects' handles (an SQ or RQ object
/// carries its CQ), each with its CQ's id as the device gave it (the EQ's completion events
/// may name only these).
#[derive(Clone, Copy, Default)]
pub(crate) struct Queues {
    eq: Option<u32>,
    sq: Option<(u64, u32)>,
    rq: Option<(u64, u32)>,
    /// AF_XDP zero-copy: the XSK SQ and the XSK RQ (their CQs on the channel's EQ).
    xsk_sq: Option<(u64, u32)>,
    xsk_rq: Option<(u64, u32)>,
}

impl Queues {
    /// The CQ ids of the WQ objects, at most [`EQ_MAX_CQS`] (four: one each).
    fn cqs(&self) -> impl Iterator<Item = u32> {
        [self.sq, self.rq, self.xsk_sq, self.xsk_rq]
            .into_iter()
            .flatten()
            .map(|(_, cq)| cq)
    }
}
const _: () = assert!(EQ_MAX_CQS >= 4);

/// NDIS hash-type bits hashing TCP or UDP ports (TCP/UDP over IPv4, IPv6 and IPv6-ex).
const NDIS_HASH_L4: u16 = (1 << 1) | (1 << 2) | (1 << 4) | (1 << 5) | (1 << 7) | (1 << 8);

fn meta(c: &RxCompletion) -> RxMeta {
    RxMeta {
        len: c.len,
        // As mana_rx_skb: the IP header and the L4 checksum verified.
        csum_ok: c.csum_unnecessary(),
        // As mana_rx_skb: CHECKSUM_UNNECESSARY or CHECKSUM_NONE, the device gives no sum.
        sum: None,
        hash: c.hash,
        hash_type: if c.hashtype & NDIS_HASH_L4 != 0 {
            2
        } else if c.hashtype != 0 {
            1
        } else {
            0
        },
        // The device strips an 802.1Q tag and reports its VLAN id (mana_rx_skb).
        vlan: c.vlan,
    }
}

/// BAR0 offset of the doorbell page every queue uses: the one GDMA_REGISTER_DEVICE gave
/// (`db_id`, at `GDMA_REG_DB_PAGE_OFFSET + db_id × GDMA_REG_DB_PAGE_SIZE`).
fn db_page(ctx: &OpenCtx<'_, Mana>) -> Result<u32> {
    Ok(ctx.func.db_page())
}

/// Creates an XSK work queue of type `wq_type` (`GDMA_SQ` or `GDMA_RQ`) of `n` basic units
/// with its CQ, recorded in `slot` as soon as it exists (a failed open destroys it): its
/// ring, its CQ, its id and the doorbell page. The CQ reports to the channel's EQ `eq`,
/// like the others: one interrupt, one NAPI.
fn xsk_wq(
    ctx: &OpenCtx<'_, Mana>,
    eq: Option<u32>,
    slot: &mut Option<(u64, u32)>,
    wq_type: u32,
    n: u32,
) -> Result<(KCoherent, Cq<KCoherent>, u32, u32)> {
    let page = db_page(ctx)?;
    let eq_id = eq.ok_or(EINVAL)?;
    let cq_buf = KCoherent::alloc(ctx.dma, n as usize * 64)?;
    let wq_buf = KCoherent::alloc(ctx.dma, (n * BU_SIZE) as usize)?;
    let o = ctx.func.create_wq(wq_type, &wq_buf, &cq_buf, eq_id)?;
    *slot = Some((o.handle, o.cq_id));
    let cq = Cq::new(cq_buf, o.cq_id, n, page + DB_CQ).ok_or(EINVAL)?;
    Ok((wq_buf, cq, o.wq_id, page))
}

impl Family for Mana {
    const NAME: &'static str = "mana";
    const FW_VERSION: &'static str = "sim-mana";
    const DEFAULT_PFLAGS: PrivFlags<ManaFlag> = PrivFlags::NONE;

    /// What a MANA device tells of its firmware: the GDMA protocol version it answered
    /// VERIFY_VF_DRIVER_VERSION with.
    fn fw_version(_hw: &Arc<Function>, func: &Self::Func) -> Result<(&'static CStr, CString)> {
        let v = CString::try_from_fmt(fmt!("{}", func.gdma().gdma_protocol_ver()))?;
        Ok((c_str!("fw.gdma_protocol"), v))
    }

    // Queues are at least 4 KiB: 128 one-BU WQEs (upstream MANA's minimum ring size too).
    const SQ_RING: RingLimits = RingLimits {
        min: 7,
        default: 10,
        max: 13,
    };
    const RQ_RING: RingLimits = RingLimits {
        min: 7,
        default: 9,
        max: 13,
    };
    const XDP_SQS: bool = false;
    // An XSK RQ and an XSK SQ; no ICO SQ (MANA has no NOP WQE): `ndo_xsk_wakeup` schedules
    // the channel's NAPI directly.
    const XSK_ZC: bool = true;
    const QUEUE_INFIX: &'static str = "_";

    const ROWS: &'static [&'static [Row<ChannelStats<Self>>]] = &[SQ_ROWS, RQ_ROWS];

    // MANA's hardware counters: `mana_eth_stats`' `hc_*`, all of them, in its order.
    const HW: &'static [(&'static str, Get<GfStats>)] = &[
        ("hc_rx_discards_no_wqe", |c| c.rx_discards_no_wqe),
        ("hc_rx_err_vport_disabled", |c| c.rx_err_vport_disabled),
        ("hc_rx_bytes", |c| c.hc_rx_bytes),
        ("hc_rx_ucast_pkts", |c| c.hc_rx_ucast_pkts),
        ("hc_rx_ucast_bytes", |c| c.hc_rx_ucast_bytes),
        ("hc_rx_bcast_pkts", |c| c.hc_rx_bcast_pkts),
        ("hc_rx_bcast_bytes", |c| c.hc_rx_bcast_bytes),
        ("hc_rx_mcast_pkts", |c| c.hc_rx_mcast_pkts),
        ("hc_rx_mcast_bytes", |c| c.hc_rx_mcast_bytes),
        ("hc_tx_err_gf_disabled", |c| c.tx_err_gf_disabled),
        ("hc_tx_err_vport_disabled", |c| c.tx_err_vport_disabled),
        ("hc_tx_err_inval_vportoffset_pkt", |c| {
            c.tx_err_inval_vport_offset_pkt
        }),
        ("hc_tx_err_vlan_enforcement", |c| c.tx_err_vlan_enforcement),
        ("hc_tx_err_eth_type_enforcement", |c| {
            c.tx_err_ethtype_enforcement
        }),
        ("hc_tx_err_sa_enforcement", |c| c.tx_err_sa_enforcement),
        ("hc_tx_err_sqpdid_enforcement", |c| {
            c.tx_err_sqpdid_enforcement
        }),
        ("hc_tx_err_cqpdid_enforcement", |c| {
            c.tx_err_cqpdid_enforcement
        }),
        ("hc_tx_err_mtu_violation", |c| c.tx_err_mtu_violation),
        ("hc_tx_err_inval_oob", |c| c.tx_err_inval_oob),
        ("hc_tx_err_gdma", |c| c.tx_err_gdma),
        ("hc_tx_bytes", |c| c.hc_tx_bytes),
        ("hc_tx_ucast_pkts", |c| c.hc_tx_ucast_pkts),
        ("hc_tx_ucast_bytes", |c| c.hc_tx_ucast_bytes),
        ("hc_tx_bcast_pkts", |c| c.hc_tx_bcast_pkts),
        ("hc_tx_bcast_bytes", |c| c.hc_tx_bcast_bytes),
        ("hc_tx_mcast_pkts", |c| c.hc_tx_mcast_pkts),
        ("hc_tx_mcast_bytes", |c| c.hc_tx_mcast_bytes),
    ];

    fn summary(s: &ChannelStats<Self>) -> Summary {
        Summary {
            tx_packets: s.tx.packets,
            tx_bytes: s.tx.bytes,
            tx_dropped: s.tx.dropped + s.ch.tx_dropped,
            tx_errors: s.tx.tx_cqe_err + s.tx.tx_cqe_unknown_type,
            tx_stop: s.tx.stop_queue,
            tx_wake: s.tx.wake_queue,
            rx_packets: s.rx_stack_packets(),
            rx_bytes: s.rx_stack_bytes(),
            rx_dropped: s.ch.rx_dropped + s.rx.rx_dropped + s.rx.rx_truncated,
            multicast: s.ch.rx_mcast,
            rx_errors: s.rx.rx_coalesced_err + s.rx.rx_cqe_unknown_type + s.rx.cqe_bad,
            rx_alloc_fail: s.rx.rx_dropped + s.rx.buff_alloc_err,
        }
    }
}

impl Control for Mana {
    type Queues = Queues;
    type PrivFlag = ManaFlag;

    type Func = ctrl::Func;
    type HwCounters = GfStats;

    // MANA_QUERY_GF_STAT over the HWC: the device's counters, summed over its vports as
    // upstream's `hc_*` are (a function per VF there, usually one vport).
    fn query_counters(_hw: &Arc<Function>, func: &Arc<ctrl::Func>) -> Result<GfStats> {
        func.query_gf_stat()
    }

    // One hardware channel per function, brought up once; each vport the device reports
    // becomes a port (`mana_probe`: QUERY_DEV_CONFIG's `max_num_vports`, a netdev per
    // vport), sharing the function's registers, channel and vectors.
    #[inline(never)]
    fn bring_up(hw: &Arc<Function>) -> Result<KVec<Arc<ctrl::Func>>> {
        let dev = hw.device();
        let gdma = ctrl::Gdma::probe(hw).map_err(|e| match e {
            ctrl::ProbeFailure::Ctl(e) => {
                pr_err!("device {}: bring-up failed: {}\n", dev, e);
                e.errno()
            }
            ctrl::ProbeFailure::Kernel(e) => e,
        })?;
        let n = gdma.num_vports();
        let mut ports = KVec::new();
        let r = if n == 0 {
            pr_err!("device {}: the device reports no vport\n", dev);
            Err(ENODEV)
        } else {
            ports
                .reserve(n, GFP_KERNEL)
                .map_err(Error::from)
                .and_then(|()| {
                    for p in 0..n {
                        ports.push(ctrl::Func::new(gdma.clone(), p)?, GFP_KERNEL)?;
                    }
                    Ok(())
                })
        };
        if let Err(e) = r {
            // The vports up so far go down; the last takes the device down. With none up,
            // nobody else holds the device: take it down here.
            if ports.is_empty() {
                if let Some(e) = gdma.tear_down() {
                    pr_warn!("device {}: teardown: {}\n", dev, e);
                }
            }
            for f in ports.iter() {
                Self::tear_down(hw, f);
            }
            return Err(e);
        }
        // rsnic's own requests only where the device advertises them (a real MANA has
        // none): what it lacks is not offered (ethtool: EOPNOTSUPP, as upstream mana).
        let caps = gdma.rsnic_caps();
        if !caps.loopback || !caps.pause {
            pr_info!(
                "device {}: no rsnic requests for{}{} on this device: not offered to ethtool\n",
                dev,
                if caps.loopback { "" } else { " loopback" },
                if caps.pause { "" } else { " pause" },
            );
        }
        Ok(ports)
    }

    fn port_index(func: &ctrl::Func) -> usize {
        func.port()
    }

    // As upstream mana (`mana_create_eq`: queue i's EQ on MSI-X (i + 1) % usable, vector 0
    // the HWC's): channel c of every vport on vector 1 + c % (usable - 1), so vports, and a
    // vport's channels beyond the vectors, share them (each channel keeps its own EQ; the
    // handlers of a vector each look at theirs).
    fn channel_vector(hw: &Function, func: &ctrl::Func, ch: u32) -> Option<usize> {
        let n = func.msix_usable().min(hw.num_vectors());
        if n < 2 {
            return None;
        }
        Some(1 + ch as usize % (n - 1))
    }

    // As mana_probe_port / mana_init_port: the vport's limits (QUERY_VPORT_CONFIG's
    // max_num_sq and max_num_rq) and the device's (QUERY_MAX_RESOURCES, as upstream's
    // gc->max_num_queues: here the vport's share, for the CQs and EQs a channel takes), at
    // most MAX_CHANNELS (MANA_MAX_NUM_QUEUES). gc->max_num_queues also stops at the online
    // CPUs and the usable vectors less the HWC's; rsnic's channels share vectors
    // (`channel_vector`) and are not bound to CPUs, so neither cuts the count.
    fn max_channels(_hw: &Function, func: &ctrl::Func) -> u32 {
        let v = func.vport();
        (MAX_CHANNELS as u32)
            .min(v.max_num_sq)
            .min(v.max_num_rq)
            .min(func.resource_channels())
            .max(1)
    }

    fn tear_down(hw: &Arc<Function>, func: &ctrl::Func) {
        if let Some(e) = func.tear_down() {
            pr_warn!("port {}: teardown: {}\n", hw.index(), e);
        }
    }

    fn permanent_mac(func: &ctrl::Func) -> Option<[u8; 6]> {
        Some(func.vport().mac)
    }

    // MANA has no administrative state (mana_open and mana_close send no request): the
    // vport receives while CONFIG_VPORT_RX has RX on (`apply_rss`), and the carrier is on
    // while the interface is up.
    fn set_admin(_hw: &Arc<Function>, _func: &Arc<ctrl::Func>, _up: bool) -> Result {
        Ok(())
    }

    fn apply_loopback(_hw: &Arc<Function>, func: &Arc<ctrl::Func>, on: bool) -> Result {
        func.set_loopback(on)
    }

    // RSNIC_SET_LOOPBACK is rsnic's request: offered only when the device advertises it.
    fn has_loopback(func: &ctrl::Func) -> bool {
        func.gdma().rsnic_caps().loopback
    }

    // Flow control through rsnic's own requests (upstream mana has no pause operation: a
    // VF has no say over the link's flow control; rsnic's model gives the vport one), when
    // the device advertises them.
    const PAUSE: bool = true;

    fn has_pause(func: &ctrl::Func) -> bool {
        func.gdma().rsnic_caps().pause
    }

    fn query_pause(_hw: &Arc<Function>, func: &Arc<ctrl::Func>) -> Result<(bool, bool)> {
        let s = func.query_pause()?;
        Ok((s.rx, s.tx))
    }

    fn apply_pause(_hw: &Arc<Function>, func: &Arc<ctrl::Func>, rx: bool, tx: bool) -> Result {
        func.set_pause(rx, tx)
    }

    fn query_pause_stats(_hw: &Arc<Function>, func: &Arc<ctrl::Func>) -> Result<(u64, u64)> {
        let s = func.query_pause()?;
        Ok((s.tx_pause_frames, s.rx_pause_frames))
    }

    fn apply_rss(
        _hw: &Arc<Function>,
        func: &Arc<ctrl::Func>,
        spec: Option<&RssSpec<'_>>,
        change: RssChange,
    ) -> Result {
        func.set_rss(spec, change)
    }

    // The vport's `num_indirection_ent` (mana_query_vport_cfg's rule: a power of two up to
    // 512, else 64).
    fn rss_table_size(func: &ctrl::Func) -> usize {
        (func.vport().indir_table_size as usize).clamp(1, MAX_TABLE)
    }

    // What MANA hashes (its RX CQE's `rx_hashtype`: the TCP and UDP types hash the ports,
    // the IP types the addresses); not configurable.
    const RSS_FIELDS: [Fields; FLOWS] = [
        Fields::ADDRS_PORTS,
        Fields::ADDRS_PORTS,
        Fields::ADDRS,
        Fields::ADDRS_PORTS,
        Fields::ADDRS_PORTS,
        Fields::ADDRS,
    ];

    fn refuse_rss_fields(_flow: Flow, _fields: Fields) -> Option<&'static str> {
        Some(
            "MANA hashes fixed fields (addresses and ports of TCP and UDP, addresses of other IP): rx-flow-hash cannot be changed",
        )
    }

    fn open(
        ctx: &OpenCtx<'_, Self>,
        q: &mut Queues,
        p: &ChannelParams<ManaFlag>,
    ) -> Result<Opened<Self>> {
        let pool = ctx.pool.ok_or(EINVAL)?;
        let dma = ctx.dma;
        let func = ctx.func;
        let mmio = ctx.hw.bar();
        let page = db_page(ctx)?;
        let nsq = 1u32 << p.log_sq;
        let nrq = 1u32 << p.log_rq;
        let (sq_size, rq_size) = (nsq * BU_SIZE, nrq * BU_SIZE);
        let eq_buf = KCoherent::alloc(dma, EQ_ENTRIES as usize * EQE_SIZE)?;
        let tx_cq_buf = KCoherent::alloc(dma, nsq as usize * 64)?;
        let rx_cq_buf = KCoherent::alloc(dma, nrq as usize * 64)?;
        let sq_buf = KCoherent::alloc(dma, sq_size as usize)?;
        let rq_buf = KCoherent::alloc(dma, rq_size as usize)?;

        // By HWC request: the EQ on the channel's vector, then the SQ and the RQ objects
        // with their CQs reporting to it. The entries are zeroed (empty to the owner-bit
        // check) before the device can write them.
        let eq_id = func.create_eq(&eq_buf, ctx.intr as u32)?;
        q.eq = Some(eq_id);
        let eq = Eq::new(eq_buf, eq_id, EQ_ENTRIES, page + DB_EQ).ok_or(EINVAL)?;
        let so = func.create_wq(GDMA_SQ, &sq_buf, &tx_cq_buf, eq_id)?;
        q.sq = Some((so.handle, so.cq_id));
        let tx_cq = Cq::new(tx_cq_buf, so.cq_id, nsq, page + DB_CQ).ok_or(EINVAL)?;
        let ro = func.create_wq(GDMA_RQ, &rq_buf, &rx_cq_buf, eq_id)?;
        q.rq = Some((ro.handle, ro.cq_id));
        let rx_cq = Cq::new(rx_cq_buf, ro.cq_id, nrq, page + DB_CQ).ok_or(EINVAL)?;
        let (sq_id, tx_cq_id, rq_id) = (so.wq_id, so.cq_id, ro.wq_id);
        let sq = Sq::new(
            SqParams {
                queue_size: sq_size,
                sq_id,
                cq_id: tx_cq_id,
                mkey: func.gpa_mkey(),
                db_offset: page + DB_SQ,
                vp_offset: func.tx_vp_offset(),
            },
            sq_buf,
            tx_cq,
            filled(nsq as usize, TxPending::default)?,
            filled(2 * nsq as usize, DmaEntry::default)?,
        )
        .map_err(|_| EINVAL)?;
        let mut rq = Rq::new(
            RqParams {
                queue_size: rq_size,
                rq_id,
                mkey: func.gpa_mkey(),
                buf_size: p.rx_buf_len(),
                db_offset: page + DB_RQ,
                ring_per_packet: p.pflags.has(ManaFlag::RxDbPerPacket),
            },
            rq_buf,
            rx_cq,
            filled(nrq as usize, || None)?,
        )
        .map_err(|_| EINVAL)?;
        rq.fill(&mut RxEnv { pool, mmio });
        Ok(Opened {
            sq,
            rx: rq,
            irq: eq,
            rqn: rq_id,
        })
    }

    fn irq_bind(eq: &mut Eq<KCoherent>, q: &Queues, xsk: Option<&Queues>) {
        // At most EQ_MAX_CQS: the channel's two and the XSK queues' two.
        let mut ids = [0u32; EQ_MAX_CQS];
        let mut n = 0;
        for (slot, id) in ids.iter_mut().zip(Iterator::chain(
            q.cqs(),
            xsk.into_iter().flat_map(Queues::cqs),
        )) {
            *slot = id;
            n += 1;
        }
        eq.expect_cqs(ids.get(..n).unwrap_or(&[]));
    }

    fn xsk_split(q: &mut Queues) -> Queues {
        Queues {
            xsk_sq: q.xsk_sq.take(),
            xsk_rq: q.xsk_rq.take(),
            ..Queues::default()
        }
    }

    fn destroy(_hw: &Arc<Function>, func: &Arc<ctrl::Func>, q: &Queues) {
        // The WQ objects (each with its CQ), then the EQ their CQs report to.
        for (h, _) in [q.rq, q.xsk_rq].into_iter().flatten() {
            func.destroy_wq(GDMA_RQ, h);
        }
        for (h, _) in [q.sq, q.xsk_sq].into_iter().flatten() {
            func.destroy_wq(GDMA_SQ, h);
        }
        if let Some(id) = q.eq {
            func.destroy_eq(id);
        }
    }

    fn xdp_sq_open(
        ctx: &OpenCtx<'_, Self>,
        q: &mut Queues,
        p: &ChannelParams<ManaFlag>,
        kind: XdpSqKind,
    ) -> Result<Option<KXskSq>> {
        // Only the XSK SQ: XDP_TX and redirected frames take the regular SQ as skbs, and
        // there is no ICO SQ (no NOP WQE: `ndo_xsk_wakeup` schedules NAPI itself).
        if kind != XdpSqKind::Xsk {
            return Ok(None);
        }
        let nsq = 1u32 << p.log_sq;
        let sq_size = nsq * BU_SIZE;
        let (sq_buf, cq, sq_id, page) = xsk_wq(ctx, q.eq, &mut q.xsk_sq, GDMA_SQ, nsq)?;
        let cq_id = cq.id();
        let sq = Sq::new(
            SqParams {
                queue_size: sq_size,
                sq_id,
                cq_id,
                mkey: ctx.func.gpa_mkey(),
                db_offset: page + DB_SQ,
                vp_offset: ctx.func.tx_vp_offset(),
            },
            sq_buf,
            cq,
            filled(nsq as usize, TxPending::default)?,
            filled(2 * nsq as usize, DmaEntry::default)?,
        )
        .map_err(|_| EINVAL)?;
        Ok(Some(sq))
    }

    fn xsk_rq_open(
        ctx: &OpenCtx<'_, Self>,
        q: &mut Queues,
        p: &ChannelParams<ManaFlag>,
        buf_size: u32,
        env: &mut XskRxEnv<'_>,
    ) -> Result<Option<(KXskRq, u32)>> {
        let nrq = 1u32 << p.log_rq;
        let rq_size = nrq * BU_SIZE;
        let (rq_buf, cq, rq_id, page) = xsk_wq(ctx, q.eq, &mut q.xsk_rq, GDMA_RQ, nrq)?;
        let mut rq = Rq::new(
            RqParams {
                queue_size: rq_size,
                rq_id,
                mkey: ctx.func.gpa_mkey(),
                buf_size,
                db_offset: page + DB_RQ,
                ring_per_packet: false,
            },
            rq_buf,
            cq,
            filled(nrq as usize, || None)?,
        )
        .map_err(|_| EINVAL)?;
        // Posts what the fill ring has now (one doorbell); the rest follows in NAPI as the
        // socket refills it.
        rq.fill(env);
        Ok(Some((rq, rq_id)))
    }
}
