// SPDX-License-Identifier: GPL-2.0

//! The ConnectX family's data path: what NAPI and the transmit path do with a channel's
//! `hwif::mlx5` queues (transmit, completions, receive, the CQ and EQ doorbells, the XDP and
//! XSK queues, the faults that stop a queue).
//!
//! Upstream counterpart: `en_tx.c`, `en_rx.c`, `en_txrx.c`, `en/xdp.c`, `en/xsk/rx.c`,
//! `en/xsk/tx.c`.

use crate::bus::Bar;
use crate::family::env::{RxEnv, TxEnv, TxSkb};
use crate::family::mlx5::{hash_type, KEq, KRq, KSq, KXdpSq, KXskRq, Mlx5, COMP_EQ_BUDGET};
use crate::family::{DataPath, QueueDiag, QueueFault, RxMeta, TxReaped};
use crate::hwif::mlx5::cq::CQ_DB_REQ_NOT;
use crate::hwif::mlx5::rq::{RqError, RxCompletion};
use crate::hwif::mlx5::sq::SqError;
use crate::hwif::mlx5::stats::{RxStats, TxStats};
use crate::hwif::pkt::{RxFrags, TxReject};
use crate::kdma::KBarriers;
use crate::kernel_ext::net::page_pool::RxPage;
use crate::kernel_ext::net::xsk::XskBuf;
use crate::xdp::{XdpEnv, XdpTx, XskRxEnv};

/// What a CQE says about its packet, for the RQ and the XSK RQ alike.
#[inline(always)]
fn meta(c: &RxCompletion) -> RxMeta {
    RxMeta {
        len: c.len,
        // hds_ip_ext: bit 1 L3_OK, bit 2 L4_OK.
        csum_ok: c.hds_ip_ext & 0x6 == 0x6,
        sum: Some(c.csum),
        hash: c.hash,
        hash_type: hash_type(c),
        // A tag the device stripped (`cqe_has_vlan`), as mlx5e_build_rx_skb.
        vlan: c.vlan,
    }
}

/// Reaps an SQ's CQ: the regular SQ and the XDP SQs are the same `hwif` SQ over other
/// packets. Busy as the CQ poll says; idle when nothing is outstanding or the SQ stopped.
macro_rules! reap {
    ($sq:ident, $env:ident, $release:ident) => {{
        let r = $sq.poll_cq($env, $release);
        TxReaped {
            busy: r.busy,
            idle: $sq.pc() == $sq.cc() || $sq.error().is_some(),
            cqes: r.cqes,
        }
    }};
}

impl DataPath for Mlx5 {
    type Sq = KSq;
    type Rx = KRq;
    type Irq = KEq;
    type TxStats = TxStats;
    type RxStats = RxStats;
    type XdpSq = KXdpSq;
    type XskRx = KXskRq;

    crate::family::datapath_common!(
        arm = |cq, mmio| cq.arm(CQ_DB_REQ_NOT, mmio, &KBarriers),
        arms = |cq| cq.arms(),
    );

    #[inline(always)]
    fn xmit(
        sq: &mut KSq,
        pkt: TxSkb,
        more: bool,
        env: &mut TxEnv<'_>,
    ) -> core::result::Result<(), TxReject<TxSkb>> {
        sq.xmit(pkt, more, env)
    }

    #[inline(always)]
    fn tx_reap(sq: &mut KSq, env: &mut TxEnv<'_>, release: impl FnMut(TxSkb)) -> TxReaped {
        reap!(sq, env, release)
    }

    #[inline(always)]
    fn rx_poll(
        rq: &mut KRq,
        env: &mut RxEnv<'_>,
        budget: u32,
        mut deliver: impl FnMut(RxPage, &RxMeta, RxFrags<'_, RxPage>),
    ) -> u32 {
        rq.napi_poll_frags(budget, env, |page, c: &RxCompletion, frags| {
            deliver(page, &meta(c), frags)
        })
        .work
    }

    fn tx_fault(sq: &KSq) -> Option<QueueFault> {
        sq.error().map(|e| match e {
            SqError::ReqErr {
                syndrome,
                wqe_counter,
                ..
            } => QueueFault {
                what: "error CQE",
                syndrome,
                wqe_counter,
            },
            SqError::BadWqeCounter { wqe_counter } => QueueFault {
                what: "CQE with a bad wqe_counter",
                syndrome: 0,
                wqe_counter,
            },
            SqError::BadOpcode { opcode } => QueueFault {
                what: "CQE with a bad opcode",
                syndrome: opcode,
                wqe_counter: 0,
            },
            SqError::BadSqn { .. } => QueueFault::found("CQE naming another SQ"),
        })
    }

    fn tx_diag(sq: &KSq) -> QueueDiag {
        QueueDiag {
            qn: Some(sq.sqn()),
            size: u32::from(sq.size()),
            pc: u32::from(sq.pc()),
            cc: u32::from(sq.cc()),
            cqn: sq.cq().cqn(),
            cq_cc: sq.cq().cc(),
        }
    }

    fn rx_diag(rq: &KRq) -> QueueDiag {
        // The RQ's number is the channel's (the ring does not keep it).
        QueueDiag {
            qn: None,
            size: u32::from(rq.size()),
            pc: u32::from(rq.wqe_ctr()),
            cc: u32::from(rq.cc()),
            cqn: rq.cq().cqn(),
            cq_cc: rq.cq().cc(),
        }
    }

    fn tx_reset(sq: &mut KSq) -> bool {
        sq.discard_cqes(&KBarriers);
        sq.reset().is_ok()
    }

    fn rx_fault(rq: &KRq) -> Option<QueueFault> {
        rq.error().map(|e| match e {
            RqError::ErrCqe {
                syndrome,
                wqe_counter,
            } => QueueFault {
                what: "error CQE",
                syndrome,
                wqe_counter,
            },
            RqError::BadWqeCounter { got, .. } => QueueFault {
                what: "CQE with a bad wqe_counter",
                syndrome: 0,
                wqe_counter: got,
            },
            RqError::BadSession { count } => QueueFault {
                what: "compressed session too long",
                syndrome: 0,
                wqe_counter: count as u16,
            },
        })
    }

    fn rx_discard(rq: &mut KRq, env: &mut RxEnv<'_>) -> u32 {
        rq.discard_cqes(env)
    }

    fn rx_reset(rq: &mut KRq, env: &mut RxEnv<'_>) -> bool {
        if rq.reset().is_err() {
            return false;
        }
        rq.post(env);
        true
    }

    // The consumer index is in the doorbell record, which every poll updates: no register
    // write is needed while NAPI keeps polling.
    fn tx_continue(_sq: &mut KSq, _work: u32, _mmio: &Bar<'_>) {}

    fn rx_continue(_rq: &mut KRq, _work: u32, _mmio: &Bar<'_>) {}

    fn irq_start(eq: &mut KEq, mmio: &Bar<'_>) {
        eq.update_ci(true, mmio, mmio);
    }

    /// `mlx5_eq_comp_int`: consume the completion EQEs and re-arm the EQ. Every CQ on the
    /// EQ is the channel's, and NAPI polls them all: the EQEs' CQ numbers need no lookup.
    fn irq_handle(eq: &mut KEq, mmio: &Bar<'_>) -> bool {
        eq.poll(COMP_EQ_BUDGET, mmio, mmio, |_| {});
        true
    }

    /// `mlx5_eq_poll_irq_disabled`, as mlx5e's TX timeout recovery uses it.
    fn irq_recover(eq: &mut KEq, mmio: &Bar<'_>) -> u32 {
        eq.poll(COMP_EQ_BUDGET, mmio, mmio, |_| {})
    }

    fn xdp_sq_nop(sq: &mut KXdpSq, env: &mut XdpEnv<'_>) -> bool {
        sq.nop(env)
    }

    fn xdp_sq_flush(sq: &mut KXdpSq, env: &mut XdpEnv<'_>) {
        sq.flush(env);
    }

    #[inline(always)]
    fn xdp_sq_reap(sq: &mut KXdpSq, env: &mut XdpEnv<'_>, release: impl FnMut(XdpTx)) -> TxReaped {
        reap!(sq, env, release)
    }

    #[inline(always)]
    fn xsk_rx_poll(
        rq: &mut KXskRq,
        env: &mut XskRxEnv<'_>,
        budget: u32,
        mut deliver: impl FnMut(XskBuf, &RxMeta),
    ) -> u32 {
        rq.napi_poll(budget, env, |buf, c: &RxCompletion| deliver(buf, &meta(c)))
            .work
    }
}
