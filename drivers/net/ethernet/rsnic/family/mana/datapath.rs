// SPDX-License-Identifier: GPL-2.0

//! The MANA family's data path: what NAPI and the transmit path do with a channel's
//! `hwif::mana` queues (transmit, completions, receive, the CQ, RQ and EQ doorbells, the XSK
//! queues, the faults that stop a queue).
//!
//! Upstream counterpart: `mana_en.c` (`mana_start_xmit`, `mana_poll_tx_cq`,
//! `mana_poll_rx_cq`, `mana_poll`), `gdma_main.c` (the EQ's interrupt).

use crate::bus::Bar;
use crate::family::env::{RxEnv, TxEnv, TxSkb};
use crate::family::mana::{meta, KRq, KSq, KXskRq, KXskSq, Mana};
use crate::family::{DataPath, QueueDiag, QueueFault, RxMeta, TxReaped};
use crate::hwif::mana::cq::Eq;
use crate::hwif::mana::rq::{RqError, RxCompletion};
use crate::hwif::mana::sq::{SqError, TX_POLL_MAX};
use crate::hwif::mana::stats::{RxStats, TxStats};
use crate::hwif::pkt::{RxFrags, TxReject, TxRejectReason};
use crate::kdma::KCoherent;
use crate::kernel_ext::net::page_pool::RxPage;
use crate::kernel_ext::net::xsk::XskBuf;
use crate::xdp::{XdpEnv, XdpTx, XskRxEnv};

/// What a reap of an SQ's CQ (the regular or the XSK SQ) left, as `mana_poll_tx_cq`: busy
/// when it read its full share of CQEs without an error; idle when nothing is outstanding
/// or the SQ stopped.
macro_rules! reaped {
    ($sq:ident, $r:ident) => {{
        let max = $sq.cq().num().saturating_mul(4).min(TX_POLL_MAX);
        TxReaped {
            busy: $r.error.is_none() && $r.cqes >= max,
            idle: $sq.outstanding() == 0 || $sq.error().is_some(),
            cqes: $r.cqes,
        }
    }};
}

impl DataPath for Mana {
    type Sq = KSq;
    type Rx = KRq;
    type Irq = Eq<KCoherent>;
    type TxStats = TxStats;
    type RxStats = RxStats;
    // As upstream mana, XDP_TX and redirected frames go out through the regular SQ as skbs;
    // the only XDP SQ is the XSK SQ of AF_XDP zero-copy.
    type XdpSq = KXskSq;
    type XskRx = KXskRq;

    crate::family::datapath_common!(
        arm = |cq, mmio| cq.ring(true, mmio),
        arms = |cq| cq.stats.arms,
    );

    #[inline(always)]
    fn xmit(
        sq: &mut KSq,
        mut pkt: TxSkb,
        more: bool,
        env: &mut TxEnv<'_>,
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
    fn tx_reap(sq: &mut KSq, env: &mut TxEnv<'_>, release: impl FnMut(TxSkb)) -> TxReaped {
        let r = sq.poll_cq(env, release);
        reaped!(sq, r)
    }

    #[inline(always)]
    fn rx_poll(
        rq: &mut KRq,
        env: &mut RxEnv<'_>,
        budget: u32,
        mut deliver: impl FnMut(RxPage, &RxMeta, RxFrags<'_, RxPage>),
    ) -> u32 {
        rq.poll(budget, env, |page, c: &RxCompletion| {
            deliver(page, &meta(c), RxFrags::none())
        })
        .work
    }

    fn tx_continue(sq: &mut KSq, work: u32, mmio: &Bar<'_>) {
        sq.cq_mut().keep_polling(work, mmio);
    }

    fn rx_continue(rq: &mut KRq, work: u32, mmio: &Bar<'_>) {
        rq.cq_mut().keep_polling(work, mmio);
    }

    fn irq_start(eq: &mut Eq<KCoherent>, mmio: &Bar<'_>) {
        eq.arm(mmio);
    }

    fn irq_handle(eq: &mut Eq<KCoherent>, mmio: &Bar<'_>) -> bool {
        // Every CQ of the channel reports to this EQ and shares its NAPI context. A
        // completion event naming another CQ is counted (`eqe_bad_cq`) and not dispatched;
        // NAPI is scheduled all the same: it polls every CQ of the channel, so a corrupt id
        // cannot leave a completion unseen and the channel deaf (upstream mana drops the
        // event, and the CQ it meant stays disarmed).
        let r = eq.process(mmio, |_cq| {});
        r.completions > 0 || r.overflow
    }

    const IRQ_BAD_EVENTS: bool = true;

    fn irq_bad_events(eq: &Eq<KCoherent>) -> u64 {
        eq.bad_cq
    }

    // A MANA SQ or RQ stops only on a CQE that breaks the protocol (one naming another
    // queue, one with nothing outstanding) or on a CQ overflow: the driver's finding, not an
    // error the device reports (error CQEs complete their WQE and the queue goes on). The
    // family has no in-place reset (`QUEUE_RESET` is false): the port's channels are
    // reopened, which destroys and re-creates every WQ object through the HWC.
    fn tx_diag(sq: &KSq) -> QueueDiag {
        QueueDiag {
            qn: Some(sq.id()),
            size: sq.wq().size(),
            pc: sq.wq().head(),
            cc: sq.wq().tail(),
            cqn: sq.cq().id(),
            cq_cc: sq.cq().head(),
        }
    }

    fn rx_diag(rq: &KRq) -> QueueDiag {
        QueueDiag {
            qn: Some(rq.id()),
            size: rq.wq().size(),
            pc: rq.wq().head(),
            cc: rq.wq().tail(),
            cqn: rq.cq().id(),
            cq_cc: rq.cq().head(),
        }
    }

    fn tx_fault(sq: &KSq) -> Option<QueueFault> {
        sq.error().map(|e| match e {
            SqError::WrongQueue { is_sq, .. } => QueueFault::found(if is_sq {
                "TX CQE naming another SQ"
            } else {
                "TX CQE naming an RQ"
            }),
            SqError::Unexpected => QueueFault::found("TX CQE with no WQE outstanding"),
            SqError::CqOverflow => QueueFault::found("TX CQ overflow"),
        })
    }

    fn rx_fault(rq: &KRq) -> Option<QueueFault> {
        rq.error().map(|e| match e {
            RqError::WrongQueue { is_sq, .. } => QueueFault::found(if is_sq {
                "RX CQE naming an SQ"
            } else {
                "RX CQE naming another RQ"
            }),
            RqError::Unexpected => QueueFault::found("RX CQE with no WQE posted"),
            RqError::CqOverflow => QueueFault::found("RX CQ overflow"),
        })
    }

    fn irq_recover(eq: &mut Eq<KCoherent>, mmio: &Bar<'_>) -> u32 {
        let r = eq.process(mmio, |_cq| {});
        r.completions + u32::from(r.overflow)
    }

    fn xdp_sq_flush(sq: &mut KXskSq, env: &mut XdpEnv<'_>) {
        sq.ring(env);
    }

    #[inline(always)]
    fn xdp_sq_reap(sq: &mut KXskSq, env: &mut XdpEnv<'_>, release: impl FnMut(XdpTx)) -> TxReaped {
        let r = sq.poll_cq(env, release);
        // The CQ doorbell the hardware needs while NAPI keeps polling (the channel's
        // tx_continue covers the regular SQ only); the arm at completion resets it.
        sq.cq_mut().keep_polling(r.cqes, env);
        reaped!(sq, r)
    }

    #[inline(always)]
    fn xsk_rx_poll(
        rq: &mut KXskRq,
        env: &mut XskRxEnv<'_>,
        budget: u32,
        mut deliver: impl FnMut(XskBuf, &RxMeta),
    ) -> u32 {
        let r = rq.poll_refill(budget, env, |buf, c: &RxCompletion| deliver(buf, &meta(c)));
        rq.cq_mut().keep_polling(r.work, env);
        r.work
    }
}
