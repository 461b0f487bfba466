// SPDX-License-Identifier: GPL-2.0

//! The queues of a ConnectX function's channels by command: completion EQs, CQs (and their
//! moderation), SQs and RQs, their state changes (RST, RDY, VLAN stripping) and their
//! destruction.
//!
//! Upstream counterpart: `en_main.c` (`mlx5e_create_sq`, `mlx5e_create_rq`,
//! `mlx5e_modify_rq_vsd`, `mlx5e_destroy_*`), `en/params.c` (the queues' contexts), `eq.c`
//! (`mlx5_create_eq`), `cq.c`.

use crate::family::mlx5::ctrl::{Func, COMP_EQ_LOG};
use crate::hwif::hw::Coherent;
use crate::hwif::mlx5::cmd::res::CreateEq;
use crate::hwif::mlx5::cmd::{res, Pas, PAS_PAGE};
use crate::kdma::KCoherent;
use crate::kernel_ext::dma::DmaDevice;
use kernel::prelude::*;
use kernel::sync::Arc;

/// A ring of EQEs with every owner bit at 1 (`init_eq_buf`: hardware owned), page by page
/// ([`queue_buf`]).
pub(super) fn eq_ring(dma: &Arc<DmaDevice>, log: u8) -> Result<KCoherent> {
    let ring = queue_buf(dma, 64 << log)?;
    for i in 0..(1usize << log) {
        ring.write(i * 64 + 63, &[1]);
    }
    Ok(ring)
}

/// A queue buffer (EQ, CQ, SQ or RQ ring) of `size` bytes, allocated page by page as
/// mlx5_core's `mlx5_frag_buf_alloc_node` does (every ring, whatever its size): the device
/// finds it through the page list of its create command ([`pas_list`]), so a ring needs no
/// physically contiguous memory beyond a page.
pub(crate) fn queue_buf(dma: &Arc<DmaDevice>, size: usize) -> Result<KCoherent> {
    KCoherent::alloc_pages(dma, size)
}

/// The 4 KiB page addresses of `buf` for a create command's PAS list
/// (`mlx5_fill_page_frag_array`, `log_page_size` 0).
pub(super) fn pas_list(buf: &KCoherent) -> Result<KVec<u64>> {
    buf.page_list(PAS_PAGE)
}

impl Func {
    /// CREATE_EQ for a channel's completions on vector `intr` of the function: returns the
    /// EQ number and the ring (the caller records the number before anything can fail).
    pub(crate) fn create_comp_eq(
        &self,
        dma: &Arc<DmaDevice>,
        intr: u16,
    ) -> Result<(u8, KCoherent)> {
        let ring = eq_ring(dma, COMP_EQ_LOG)?;
        let pages = pas_list(&ring)?;
        let p = CreateEq {
            log_eq_size: COMP_EQ_LOG,
            uar_page: self.res.uar.unwrap_or(0),
            intr,
            event_bitmask: 0,
            pas: Pas::list(&pages, ring.size()),
        };
        let out = self.cmd(res::create_eq_len(&p), res::SHORT_LEN, |b| {
            res::create_eq(b, &p)
        })?;
        let eqn = res::parse_create_eq(&out).map_err(|_| EIO)?;
        Ok((eqn, ring))
    }

    /// CREATE_CQ of `2^log` CQEs in `buf`, doorbell record at bus address `dbr`, completion
    /// events to EQ `eqn`, moderated as `moder`; `compress`: basic CQE compression (RX CQs
    /// only, the caller checked the capability).
    pub(crate) fn create_cq(
        &self,
        buf: &KCoherent,
        log: u8,
        dbr: u64,
        eqn: u8,
        compress: bool,
        moder: res::CqModeration,
    ) -> Result<u32> {
        let pages = pas_list(buf)?;
        let p = res::CreateCq {
            log_cq_size: log,
            uar_page: self.res.uar.unwrap_or(0),
            c_eqn: eqn,
            dbr_addr: dbr,
            cqe_comp_en: compress,
            mini_cqe_res_format: if compress {
                res::MINI_CQE_FORMAT_CSUM
            } else {
                0
            },
            pas: Pas::list(&pages, buf.size()),
        };
        let out = self.cmd(res::create_cq_len(&p), res::SHORT_LEN, |b| {
            let n = res::create_cq(b, &p)?;
            res::set_create_cq_moderation(b, &moder)?;
            Ok(n)
        })?;
        self.created(&out, res::parse_create_cq)
    }

    /// MODIFY_CQ: CQ `cqn`'s moderation becomes `moder` (the CQ stays as it is otherwise).
    pub(crate) fn modify_cq_moderation(&self, cqn: u32, moder: res::CqModeration) -> Result {
        self.cmd(res::MODIFY_CQ_LEN, res::SHORT_LEN, |b| {
            res::modify_cq_moderation(b, cqn, &moder)
        })?;
        Ok(())
    }

    /// CREATE_SQ (in RST) of `2^log` WQEBBs in `buf` completing on `cqn`, through the port's
    /// TIS; [`Func::ready_sq`] moves it to RDY.
    pub(crate) fn create_sq(&self, buf: &KCoherent, log: u8, dbr: u64, cqn: u32) -> Result<u32> {
        let pages = pas_list(buf)?;
        let p = res::CreateSq {
            cqn,
            tisn: self.tisn,
            // Always the mode the device asked for (mlx5e sets it when the caps defer to the
            // vport context; a device that requires it by caps ignores the field).
            min_wqe_inline_mode: self.res.min_inline_mode(),
            wq: res::Wq {
                pd: self.res.pd.unwrap_or(0),
                uar_page: self.res.uar.unwrap_or(0),
                dbr_addr: dbr,
                log_wq_stride: res::SQ_LOG_WQ_STRIDE,
                log_wq_sz: log,
                pas: Pas::list(&pages, buf.size()),
            },
        };
        let out = self.cmd(res::create_sq_len(&p), res::SHORT_LEN, |b| {
            res::create_sq(b, &p)
        })?;
        self.created(&out, res::parse_create_sq)
    }

    /// MODIFY_SQ RST -> RDY.
    pub(crate) fn ready_sq(&self, sqn: u32) -> Result {
        self.cmd(res::MODIFY_Q_IN_LEN, res::OUT_LEN, |b| {
            res::modify_sq(b, sqn, res::QState::Rst, res::QState::Rdy)
        })?;
        Ok(())
    }

    /// CREATE_RQ (in RST) of `2^log` WQEs of `2^log_stride` bytes in `buf` completing on
    /// `cqn`, stripping received VLAN tags unless `vsd`; [`Func::ready_rq`] moves it to RDY.
    pub(crate) fn create_rq(
        &self,
        buf: &KCoherent,
        log: u8,
        log_stride: u8,
        dbr: u64,
        cqn: u32,
        vsd: bool,
    ) -> Result<u32> {
        let pages = pas_list(buf)?;
        let p = res::CreateRq {
            cqn,
            vsd,
            // The port's Q counter counts the RQ's drops (`rx_out_of_buffer`).
            counter_set_id: self.res.q_counter.unwrap_or(0),
            wq: res::Wq {
                pd: self.res.pd.unwrap_or(0),
                uar_page: 0,
                dbr_addr: dbr,
                log_wq_stride: log_stride,
                log_wq_sz: log,
                pas: Pas::list(&pages, buf.size()),
            },
        };
        let out = self.cmd(res::create_rq_len(&p), res::SHORT_LEN, |b| {
            res::create_rq(b, &p)
        })?;
        self.created(&out, res::parse_create_rq)
    }

    /// Turns VLAN stripping of ready RQ `rqn` off (`vsd`) or on in place (MODIFY_RQ RDY ->
    /// RDY, `mlx5e_modify_rq_vsd`). Sleeps.
    pub(crate) fn set_rq_vsd(&self, rqn: u32, vsd: bool) -> Result {
        self.cmd(res::MODIFY_Q_IN_LEN, res::OUT_LEN, |b| {
            res::modify_rq_vsd(b, rqn, vsd)
        })?;
        Ok(())
    }

    /// MODIFY_RQ RST -> RDY.
    pub(crate) fn ready_rq(&self, rqn: u32) -> Result {
        self.cmd(res::MODIFY_Q_IN_LEN, res::OUT_LEN, |b| {
            res::modify_rq(b, rqn, res::QState::Rst, res::QState::Rdy)
        })?;
        Ok(())
    }

    /// The state the device reports for an SQ (`sq`) or RQ (QUERY_SQ / QUERY_RQ), for
    /// `devlink health dump`. Sleeps.
    pub(crate) fn query_queue_state(&self, sq: bool, qn: u32) -> Result<res::QState> {
        let out = self.cmd(res::SHORT_LEN, res::QUERY_Q_OUT_LEN, |b| {
            if sq {
                res::query_sq(b, qn)
            } else {
                res::query_rq(b, qn)
            }
        })?;
        res::parse_query_q_state(&out).map_err(|_| EIO)
    }

    /// Moves an SQ (`sq`) or RQ to RST for recovery (mlx5e's `mlx5e_tx_reporter_err_cqe_recover`
    /// and RQ recovery): QUERY_SQ/RQ for its state; RDY (the driver found the fault, the
    /// device did not stop the queue) goes to ERR first; then ERR -> RST. The device no
    /// longer touches the queue's ring when this returns. Sleeps.
    pub(crate) fn queue_to_reset(&self, sq: bool, qn: u32) -> Result {
        let modify = |cur, next| {
            self.cmd(res::MODIFY_Q_IN_LEN, res::OUT_LEN, |b| {
                if sq {
                    res::modify_sq(b, qn, cur, next)
                } else {
                    res::modify_rq(b, qn, cur, next)
                }
            })
            .map(|_| ())
        };
        match self.query_queue_state(sq, qn)? {
            res::QState::Rst => return Ok(()),
            res::QState::Rdy => modify(res::QState::Rdy, res::QState::Err)?,
            res::QState::Err => {}
        }
        modify(res::QState::Err, res::QState::Rst)
    }

    /// Destroys an object (DESTROY_RQ/SQ/CQ/EQ): errors are logged and otherwise ignored, as
    /// mlx5e's destroy paths do.
    pub(crate) fn destroy(
        &self,
        build: impl FnOnce(
            &mut [u8],
        ) -> core::result::Result<usize, crate::hwif::mlx5::cmd::FormatError>,
    ) {
        let _ = self.cmd(res::SHORT_LEN, res::OUT_LEN, build);
    }
}
