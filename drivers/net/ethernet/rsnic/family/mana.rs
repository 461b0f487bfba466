// SPDX-License-Identifier: GPL-2.0

//! The MANA (GDMA) family: `dp::mana` queues on the simulated MANA device (`sim::mana`).
//!
//! A channel has an event queue on its vector, an SQ with its TX CQ and an RQ with its RX
//! CQ; both CQs report to the EQ. The driver finds its doorbell page through the VF
//! registers (page base at 0x08, page size at 0x10; port `p` uses page `p`).
//!
//! Doorbells: the SQ is rung by `xmit_more` with BQL (beyond upstream MANA, which rings per
//! packet); the RQ is rung once per NAPI poll that read completions, with `wqe_cnt = 0`
//! (private flag `rx_db_per_packet` restores the pre-2023 doorbell per re-posted WQE, for
//! the comparison in `make bench`); CQs are armed when NAPI completes and rung with arm = 0
//! at least once per 8 wraps while it keeps polling; the EQ is re-armed by every interrupt
//! that read events. Counters carry MANA's names (`stop_queue`, `hc_rx_discards_no_wqe`,
//! `tx_<N>_packets`, ...) plus rsnic's exact doorbell and PCIe-model counts.

use super::{Family, Get, OpenCtx, Opened, RingLimits, RxMeta, Summary, TxReaped};
use crate::channel::{ChannelParams, ChannelStats, RxEnv, TxEnv, TxSkb, LKEY};
use crate::dp::hw::{Coherent, Mmio};
use crate::dp::mana::{
    cq::{Cq, Eq},
    fmt::{BU_SIZE, DB_CQ, DB_EQ, DB_RQ, DB_SQ, EQE_SIZE},
    rq::{Rq, RqParams, RxCompletion},
    sq::{Sq, SqParams, TxPending, TX_POLL_MAX},
    stats::{RxStats, TxStats},
};
use crate::dp::mlx5::tx::{DmaEntry, TxReject, TxRejectReason};
use crate::engine::{EngineMmio, IrqSink};
use crate::ext::net::page_pool::RxPage;
use crate::family::{filled, made, wadd};
use crate::hw::KCoherent;
use crate::sim::mana::PortCounters;
use kernel::{c_str, prelude::*, str::CStr};

/// Private flag bit: ring the RQ doorbell for every re-posted WQE (the pre-2023 behaviour,
/// kept only to measure what batching saves).
pub(crate) const PFLAG_RX_DB_PER_PACKET: u32 = 1 << 0;

/// VF register: BAR0 offset of the doorbell pages (`GDMA_REG_DB_PAGE_OFFSET`).
const REG_DB_PAGE_OFFSET: u32 = 0x08;
/// VF register: size of a doorbell page (`GDMA_REG_DB_PAGE_SIZE`).
const REG_DB_PAGE_SIZE: u32 = 0x10;
/// Entries of a channel's EQ (two CQs post at most one event each per arm).
const EQ_ENTRIES: u32 = 64;

/// The MANA family.
pub(crate) struct Mana;

type KSq = Sq<TxSkb, KCoherent, KVec<TxPending<TxSkb>>, KVec<DmaEntry>>;
type KRq = Rq<RxPage, KCoherent, KVec<Option<RxPage>>>;

/// Device queue ids of a channel.
#[derive(Clone, Copy, Default)]
pub(crate) struct Queues {
    eq: Option<u32>,
    tx_cq: Option<u32>,
    rx_cq: Option<u32>,
    sq: Option<u32>,
    rq: Option<u32>,
}

/// NDIS hash-type bits hashing TCP or UDP ports (TCP/UDP over IPv4, IPv6 and IPv6-ex).
const NDIS_HASH_L4: u16 = (1 << 1) | (1 << 2) | (1 << 4) | (1 << 5) | (1 << 7) | (1 << 8);

fn meta(c: &RxCompletion) -> RxMeta {
    RxMeta {
        len: c.len,
        // IPv4 reports the header checksum too; a failure of any checked sum clears it.
        csum_ok: c.l4_csum_ok && !c.csum_fail,
        hash: c.hash,
        hash_type: if c.hashtype & NDIS_HASH_L4 != 0 {
            2
        } else if c.hashtype != 0 {
            1
        } else {
            0
        },
    }
}

impl Family for Mana {
    const NAME: &'static str = "mana";
    const FW_VERSION: &'static str = "sim-mana";
    const PRIV_FLAGS: &'static [&'static CStr] = &[c_str!("rx_db_per_packet")];
    const DEFAULT_PFLAGS: u32 = 0;
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
    const QUEUE_INFIX: &'static str = "_";

    type Sq = KSq;
    type Rx = KRq;
    type Irq = Eq<KCoherent>;
    type Queues = Queues;
    type TxStats = TxStats;
    type RxStats = RxStats;
    // As upstream mana: XDP_TX and redirected frames go out through the regular SQ as skbs.
    type XdpSq = ();
    type XskRx = ();

    const GLOBAL: &'static [(&'static str, Get<ChannelStats<Self>>)] = &[
        // MANA's names.
        ("stop_queue", |s| s.tx.stop_queue),
        ("wake_queue", |s| s.tx.wake_queue),
        ("tx_cqe_err", |s| s.tx.tx_cqe_err),
        ("tx_cqe_unknown_type", |s| s.tx.tx_cqe_unknown_type),
        ("rx_coalesced_err", |s| s.rx.rx_coalesced_err),
        ("rx_cqe_unknown_type", |s| s.rx.rx_cqe_unknown_type),
        // rsnic's sums over the queues.
        ("tx_packets", |s| s.tx.packets),
        ("tx_bytes", |s| s.tx.bytes),
        ("tx_tso_packets", |s| s.tx.tso_packets),
        ("tx_long_pkt_fmt", |s| s.tx.long_pkt_fmt),
        ("tx_short_pkt_fmt", |s| s.tx.short_pkt_fmt),
        ("tx_csum_partial", |s| s.tx.csum_partial),
        ("tx_xmit_more", |s| s.tx.xmit_more),
        ("tx_queue_dropped", |s| s.tx.dropped + s.tx_dropped),
        ("tx_cqes", |s| s.tx.cqes),
        ("tx_wqes", |s| s.tx.wqes),
        ("tx_doorbells", |s| s.tx.doorbells),
        ("rx_packets", |s| s.rx_stack_packets()),
        ("rx_bytes", |s| s.rx_stack_bytes()),
        ("rx_buff_alloc_err", |s| s.rx.rx_dropped),
        ("rx_truncated", |s| s.rx.rx_truncated),
        ("rx_dropped", |s| s.rx_dropped),
        ("rx_csum_unnecessary", |s| s.rx_csum_unnecessary),
        ("rx_csum_none", |s| s.rx_csum_none),
        ("rx_cqes", |s| s.rx.cqes),
        ("rx_wqes", |s| s.rx.wqes),
        ("rx_doorbells", |s| s.rx.doorbells),
        ("rx_polls", |s| s.rx.polls),
        ("rx_polls_with_work", |s| s.rx.polls_with_work),
        ("cqe_bad", |s| s.tx.cqe_bad + s.rx.cqe_bad),
        // XDP (mana's names; rx_xdp_aborted, rx_xdp_pass and rx_xdp_tx_err are rsnic's).
        ("rx_xdp_drop", |s| s.xdp.drop),
        ("rx_xdp_tx", |s| s.xdp.tx),
        ("rx_xdp_redirect", |s| s.xdp.redirect),
        ("tx_xdp_xmit", |s| s.xdp.xmit),
        ("rx_xdp_aborted", |s| s.xdp.aborted),
        ("rx_xdp_pass", |s| s.xdp.pass),
        ("rx_xdp_tx_err", |s| s.xdp.tx_err),
    ];

    const DEVICE: &'static [(&'static str, Get<PortCounters>)] = &[
        // MANA's names (hardware counters).
        ("hc_rx_discards_no_wqe", |c| c.hc_rx_discards_no_wqe),
        ("hc_rx_bytes", |c| c.hc_rx_bytes),
        ("hc_rx_ucast_pkts", |c| c.hc_rx_ucast_pkts),
        ("hc_rx_bcast_pkts", |c| c.hc_rx_bcast_pkts),
        ("hc_rx_mcast_pkts", |c| c.hc_rx_mcast_pkts),
        ("hc_tx_bytes", |c| c.hc_tx_bytes),
        ("hc_tx_ucast_pkts", |c| c.hc_tx_ucast_pkts),
        ("hc_tx_bcast_pkts", |c| c.hc_tx_bcast_pkts),
        ("hc_tx_mcast_pkts", |c| c.hc_tx_mcast_pkts),
        ("hc_tx_err_inval_oob", |c| c.hc_tx_err_inval_oob),
        ("hc_tx_err_mtu_violation", |c| c.hc_tx_err_mtu_violation),
        ("hc_tx_err_gdma", |c| c.hc_tx_err_gdma),
        // rsnic's device-model counters.
        ("dev_tx_packets", |c| c.tx_packets()),
        ("dev_rx_packets", |c| c.rx_packets()),
        ("dev_doorbells", |c| c.doorbells),
        ("dev_sq_doorbells", |c| c.sq_doorbells),
        ("dev_rq_doorbells", |c| c.rq_doorbells),
        ("dev_cq_doorbells", |c| c.cq_doorbells),
        ("dev_cq_arms", |c| c.cq_arms),
        ("dev_eq_doorbells", |c| c.eq_doorbells),
        ("dev_bad_doorbells", |c| c.bad_doorbells),
        ("dev_rq_db_wqe_cnt_errors", |c| c.rq_db_wqe_cnt_errors),
        ("dev_db_invalid", |c| c.db_invalid),
        ("dev_wqes", |c| c.wqes),
        ("dev_wqe_bytes", |c| c.wqe_bytes),
        ("dev_tx_wqe_errors", |c| c.tx_wqe_errors),
        ("dev_tx_link_down_drops", |c| c.tx_link_down_drops),
        ("dev_tx_cqes", |c| c.tx_cqes),
        ("dev_tx_err_cqes", |c| c.tx_err_cqes),
        ("dev_rx_no_rq_drops", |c| c.rx_no_rq_drops),
        ("dev_rx_wqe_errors", |c| c.rx_wqe_errors),
        ("dev_rx_cqes", |c| c.rx_cqes),
        ("dev_rx_truncated", |c| c.rx_truncated),
        ("dev_cq_db_overdue", |c| c.cq_db_overdue),
        ("dev_eqes", |c| c.eqes),
        ("dev_interrupts", |c| c.interrupts),
        ("dev_dma_faults", |c| c.dma_faults),
        ("dev_tx_pause", |c| c.tx_pause),
        ("dev_loopback_packets", |c| c.loopback_packets),
        ("dev_loopback_bytes", |c| c.loopback_bytes),
        ("dev_pcie_in_tlps", |c| c.pcie.in_tlps),
        ("dev_pcie_in_bytes", |c| c.pcie.in_bytes),
        ("dev_pcie_out_tlps", |c| c.pcie.out_tlps),
        ("dev_pcie_out_bytes", |c| c.pcie.out_bytes),
        ("dev_tx_floor_in_bytes", |c| c.tx_floor_in_bytes),
    ];

    const TXQ: &'static [(&'static str, Get<ChannelStats<Self>>)] = &[
        ("packets", |s| s.tx.packets),
        ("bytes", |s| s.tx.bytes),
        ("tso_packets", |s| s.tx.tso_packets),
        ("tso_bytes", |s| s.tx.tso_bytes),
        ("long_pkt_fmt", |s| s.tx.long_pkt_fmt),
        ("short_pkt_fmt", |s| s.tx.short_pkt_fmt),
        ("csum_partial", |s| s.tx.csum_partial),
        ("mana_map_err", |s| s.tx.mana_map_err),
        ("stop_queue", |s| s.tx.stop_queue),
        ("wake_queue", |s| s.tx.wake_queue),
        ("xmit_more", |s| s.tx.xmit_more),
        ("dropped", |s| s.tx.dropped + s.tx_dropped),
        ("cqes", |s| s.tx.cqes),
        ("doorbells", |s| s.tx.doorbells),
        ("xdp_xmit", |s| s.xdp.xmit),
    ];

    const RXQ: &'static [(&'static str, Get<ChannelStats<Self>>)] = &[
        ("packets", |s| s.rx_stack_packets()),
        ("bytes", |s| s.rx_stack_bytes()),
        ("csum_unnecessary", |s| s.rx_csum_unnecessary),
        ("csum_none", |s| s.rx_csum_none),
        ("cqes", |s| s.rx.cqes),
        ("doorbells", |s| s.rx.doorbells),
        ("polls_with_work", |s| s.rx.polls_with_work),
        ("xdp_drop", |s| s.xdp.drop),
        ("xdp_tx", |s| s.xdp.tx),
        ("xdp_redirect", |s| s.xdp.redirect),
    ];

    const CH: &'static [(&'static str, Get<ChannelStats<Self>>)] =
        &[("arm", |s| s.arms), ("poll", |s| s.rx.polls)];

    super::sim_model_glue!(crate::sim::mana);

    fn open(ctx: &OpenCtx<'_, Self>, q: &mut Queues, p: &ChannelParams) -> Result<Opened<Self>> {
        let port = ctx.port;
        let dma = ctx.dma;
        let mmio = EngineMmio(ctx.engine);
        // The doorbell page of this port, as a VF finds it.
        let page = mmio
            .read32(REG_DB_PAGE_OFFSET)
            .checked_add(
                (port as u32)
                    .checked_mul(mmio.read32(REG_DB_PAGE_SIZE))
                    .ok_or(EINVAL)?,
            )
            .ok_or(EINVAL)?;
        let nsq = 1u32 << p.log_sq;
        let nrq = 1u32 << p.log_rq;
        let (sq_size, rq_size) = (nsq * BU_SIZE, nrq * BU_SIZE);
        let eq_buf = KCoherent::alloc(dma, EQ_ENTRIES as usize * EQE_SIZE)?;
        let tx_cq_buf = KCoherent::alloc(dma, nsq as usize * 64)?;
        let rx_cq_buf = KCoherent::alloc(dma, nrq as usize * 64)?;
        let sq_buf = KCoherent::alloc(dma, sq_size as usize)?;
        let rq_buf = KCoherent::alloc(dma, rq_size as usize)?;
        let (eq_addr, tx_cq_addr, rx_cq_addr) = (
            eq_buf.dma_addr(),
            tx_cq_buf.dma_addr(),
            rx_cq_buf.dma_addr(),
        );
        let (sq_addr, rq_addr) = (sq_buf.dma_addr(), rq_buf.dma_addr());
        let vector = ctx.vector as u16;

        // EQ, then the CQs reporting to it, then the queues completing on them. The entries
        // are zeroed (empty to the owner-bit check) before the device can write them.
        let eq_id = made(
            &mut q.eq,
            ctx.engine
                .with_model(|m| m.create_eq(port, eq_addr, EQ_ENTRIES, vector)),
        )?;
        let eq = Eq::new(eq_buf, eq_id, EQ_ENTRIES, page + DB_EQ).ok_or(EINVAL)?;
        let tx_cq_id = made(
            &mut q.tx_cq,
            ctx.engine
                .with_model(|m| m.create_cq(port, tx_cq_addr, nsq, Some(eq_id))),
        )?;
        let tx_cq = Cq::new(tx_cq_buf, tx_cq_id, nsq, page + DB_CQ).ok_or(EINVAL)?;
        let rx_cq_id = made(
            &mut q.rx_cq,
            ctx.engine
                .with_model(|m| m.create_cq(port, rx_cq_addr, nrq, Some(eq_id))),
        )?;
        let rx_cq = Cq::new(rx_cq_buf, rx_cq_id, nrq, page + DB_CQ).ok_or(EINVAL)?;
        let sq_id = made(
            &mut q.sq,
            ctx.engine
                .with_model(|m| m.create_sq(port, sq_addr, sq_size, tx_cq_id)),
        )?;
        let rq_id = made(
            &mut q.rq,
            ctx.engine
                .with_model(|m| m.create_rq(port, rq_addr, rq_size, rx_cq_id)),
        )?;
        let sq = Sq::new(
            SqParams {
                queue_size: sq_size,
                sq_id,
                cq_id: tx_cq_id,
                mkey: LKEY,
                db_offset: page + DB_SQ,
                vp_offset: 0,
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
                mkey: LKEY,
                buf_size: p.rx_buf_len(),
                db_offset: page + DB_RQ,
                ring_per_packet: p.pflags & PFLAG_RX_DB_PER_PACKET != 0,
            },
            rq_buf,
            rx_cq,
            filled(nrq as usize, || None)?,
        )
        .map_err(|_| EINVAL)?;
        rq.fill(&mut RxEnv {
            pool: ctx.pool,
            mmio,
        });
        Ok(Opened {
            sq,
            rx: rq,
            irq: eq,
            rqn: rq_id,
        })
    }

    fn destroy(m: &mut Self::Model, q: &Queues) {
        // Queues before their CQs, CQs before the EQ.
        if let Some(id) = q.rq {
            let _ = m.destroy_rq(id);
        }
        if let Some(id) = q.sq {
            let _ = m.destroy_sq(id);
        }
        for id in [q.rx_cq, q.tx_cq].into_iter().flatten() {
            let _ = m.destroy_cq(id);
        }
        if let Some(id) = q.eq {
            let _ = m.destroy_eq(id);
        }
    }

    #[inline(always)]
    fn xmit(
        sq: &mut KSq,
        mut pkt: TxSkb,
        more: bool,
        env: &mut TxEnv<'_, Self>,
    ) -> core::result::Result<(), TxReject<TxSkb>> {
        // TSO: the hardware wants the IPv4 total length and header checksum cleared and the
        // TCP checksum seeded with the length-less pseudo-header sum (mana_start_xmit).
        if pkt.0.gso().is_some() && pkt.0.tso_pseudo_prepare().is_err() {
            sq.stats.dropped = sq.stats.dropped.wrapping_add(1);
            // What was queued with xmit_more must not wait for this packet.
            sq.ring(env);
            return Err(TxReject {
                pkt,
                reason: TxRejectReason::MapError,
            });
        }
        sq.xmit(pkt, more, env)
    }

    #[inline(always)]
    fn tx_reap(sq: &mut KSq, env: &mut TxEnv<'_, Self>, release: impl FnMut(TxSkb)) -> TxReaped {
        let r = sq.poll_cq(env, release);
        let max = sq.cq().num().saturating_mul(4).min(TX_POLL_MAX);
        TxReaped {
            busy: r.error.is_none() && r.cqes >= max,
            idle: sq.outstanding() == 0 || sq.error().is_some(),
            cqes: r.cqes,
        }
    }

    fn tx_drain(sq: &mut KSq, env: &mut TxEnv<'_, Self>, release: impl FnMut(TxSkb)) -> u32 {
        sq.drain(env, release).0
    }

    #[inline(always)]
    fn rx_poll(
        rq: &mut KRq,
        env: &mut RxEnv<'_, Self>,
        budget: u32,
        mut deliver: impl FnMut(RxPage, &RxMeta),
    ) -> u32 {
        rq.poll(budget, env, |page, c: &RxCompletion| {
            deliver(page, &meta(c))
        })
        .work
    }

    fn rx_drain(rq: &mut KRq, env: &mut RxEnv<'_, Self>) {
        rq.drain(env);
    }

    fn arm_tx(sq: &mut KSq, mmio: &EngineMmio<'_, Self>) {
        sq.cq_mut().ring(true, mmio);
    }

    fn arm_rx(rq: &mut KRq, mmio: &EngineMmio<'_, Self>) {
        rq.cq_mut().ring(true, mmio);
    }

    fn tx_continue(sq: &mut KSq, work: u32, mmio: &EngineMmio<'_, Self>) {
        sq.cq_mut().keep_polling(work, mmio);
    }

    fn rx_continue(rq: &mut KRq, work: u32, mmio: &EngineMmio<'_, Self>) {
        rq.cq_mut().keep_polling(work, mmio);
    }

    fn irq_start(eq: &mut Eq<KCoherent>, mmio: &EngineMmio<'_, Self>) {
        eq.arm(mmio);
    }

    fn irq_handle(eq: &mut Eq<KCoherent>, mmio: &EngineMmio<'_, Self>) -> bool {
        // Both CQs of the channel report to this EQ and share its NAPI context.
        let r = eq.process(mmio, |_cq| {});
        r.completions > 0 || r.overflow
    }

    fn tx_stats(sq: &KSq) -> (TxStats, u64) {
        (sq.stats, sq.cq().stats.arms)
    }

    fn rx_stats(rq: &KRq) -> (RxStats, u64) {
        (rq.stats, rq.cq().stats.arms)
    }

    fn rx_packets(s: &RxStats) -> u64 {
        s.packets
    }

    fn rx_bytes(s: &RxStats) -> u64 {
        s.bytes
    }

    fn summary(s: &ChannelStats<Self>) -> Summary {
        Summary {
            tx_packets: s.tx.packets,
            tx_bytes: s.tx.bytes,
            tx_dropped: s.tx.dropped + s.tx_dropped,
            tx_errors: s.tx.tx_cqe_err + s.tx.tx_cqe_unknown_type,
            tx_stop: s.tx.stop_queue,
            tx_wake: s.tx.wake_queue,
            rx_packets: s.rx_stack_packets(),
            rx_bytes: s.rx_stack_bytes(),
            rx_dropped: s.rx_dropped + s.rx.rx_dropped + s.rx.rx_truncated,
            rx_errors: s.rx.rx_coalesced_err + s.rx.rx_cqe_unknown_type + s.rx.cqe_bad,
            rx_alloc_fail: s.rx.rx_dropped,
        }
    }

    fn accumulate(a: &mut ChannelStats<Self>, b: &ChannelStats<Self>) {
        macro_rules! sum {
            ($side:ident; $($g:ident),+) => {
                $( wadd(&mut a.$side.$g, b.$side.$g); )+
            };
        }
        sum!(tx; packets, bytes, tso_packets, tso_bytes, short_pkt_fmt, long_pkt_fmt,
            csum_partial, mana_map_err, stop_queue, wake_queue, tx_cqe_err, tx_cqe_unknown_type,
            xmit_more, busy, dropped, cqes, cqe_bad, cq_overflow, wqes, bus, doorbells);
        sum!(rx; packets, bytes, rx_coalesced_err, rx_cqe_unknown_type, rx_truncated, rx_dropped,
            cqes, cqe_bad, cq_overflow, wqes, doorbells, polls, polls_with_work);
    }
}
