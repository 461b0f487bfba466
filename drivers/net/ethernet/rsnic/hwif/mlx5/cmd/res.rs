// SPDX-License-Identifier: GPL-2.0

//! Resource commands: UAR, PD and transport domain (uar.c, en_common.c), EQ (eq.c
//! `create_map_eq`), CQ (en_main.c `mlx5e_create_cq`), TIS (`mlx5e_create_tis`), SQ and RQ
//! (`mlx5e_create_sq`, `mlx5e_modify_sq`, `mlx5e_create_rq`, `mlx5e_modify_rq_state`), RQT
//! and TIR for RSS (en/rqt.c, en/tir.c).
//!
//! The RQT and TIR commands are in the sibling module [`super::rss`] (named as the model's
//! `sim/mlx5/cmd/rss.rs`), re-exported here.

pub use super::rss::*;

use super::{
    build, built, fits, hdr, obj_cmd, obj_out, op, output, set_fields, start, Field, FormatError,
    Pas,
};

/// Length of the 16-byte ALLOC_*/DEALLOC_*/DESTROY_* inputs and of most create outputs.
pub const SHORT_LEN: usize = 16;

/// ALLOC_UAR.
pub fn alloc_uar(buf: &mut [u8]) -> Result<usize, FormatError> {
    build(buf, SHORT_LEN, op::ALLOC_UAR, 0, &[])
}

/// `alloc_uar_out.uar` (bit 0x48, 24 bits): the UAR page index.
pub fn parse_alloc_uar(out: &[u8]) -> Result<u32, FormatError> {
    obj_out(out)
}

/// DEALLOC_UAR `uar` (`dealloc_uar_in.uar`, bit 0x48).
pub fn dealloc_uar(buf: &mut [u8], uar: u32) -> Result<usize, FormatError> {
    obj_cmd(buf, op::DEALLOC_UAR, uar)
}

/// ALLOC_PD.
pub fn alloc_pd(buf: &mut [u8]) -> Result<usize, FormatError> {
    build(buf, SHORT_LEN, op::ALLOC_PD, 0, &[])
}

/// `alloc_pd_out.pd` (bit 0x48, 24 bits).
pub fn parse_alloc_pd(out: &[u8]) -> Result<u32, FormatError> {
    obj_out(out)
}

/// DEALLOC_PD `pd` (`dealloc_pd_in.pd`, bit 0x48).
pub fn dealloc_pd(buf: &mut [u8], pd: u32) -> Result<usize, FormatError> {
    obj_cmd(buf, op::DEALLOC_PD, pd)
}

/// ALLOC_TRANSPORT_DOMAIN.
pub fn alloc_transport_domain(buf: &mut [u8]) -> Result<usize, FormatError> {
    build(buf, SHORT_LEN, op::ALLOC_TRANSPORT_DOMAIN, 0, &[])
}

/// `alloc_transport_domain_out.transport_domain` (bit 0x48, 24 bits).
pub fn parse_alloc_transport_domain(out: &[u8]) -> Result<u32, FormatError> {
    obj_out(out)
}

/// DEALLOC_TRANSPORT_DOMAIN `td` (`dealloc_transport_domain_in.transport_domain`, bit 0x48).
pub fn dealloc_transport_domain(buf: &mut [u8], td: u32) -> Result<usize, FormatError> {
    obj_cmd(buf, op::DEALLOC_TRANSPORT_DOMAIN, td)
}

/// Byte offset of `pas[]` in `create_eq_in`, `create_cq_in` (bit 0x880) and of `wq.pas[]` in
/// `create_sq_in` / `create_rq_in` (sqc/rqc at 0x100, wq at +0x180, pas at +0x600).
pub const PAS_OFFSET: usize = 0x110;

/// Input length of a command with a PAS list of `npages` entries.
pub const fn with_pas_len(npages: usize) -> usize {
    PAS_OFFSET + 8 * npages
}

// ---------------------------------------------------------------------------------------
// EQ

/// `create_eq_in.eq_context_entry` (`struct mlx5_ifc_eqc_bits`): bit 0x80.
pub const EQC: usize = 0x80;
/// `eqc.page_offset`: bit 0x54, 6 bits.
pub const EQC_PAGE_OFFSET: Field = Field::new(0x54, 6).at(EQC);
/// `eqc.log_eq_size`: bit 0x63, 5 bits.
pub const EQC_LOG_EQ_SIZE: Field = Field::new(0x63, 5).at(EQC);
/// `eqc.uar_page`: bit 0x68, 24 bits.
pub const EQC_UAR_PAGE: Field = Field::new(0x68, 24).at(EQC);
/// `eqc.intr`: bit 0xb4, 12 bits.
pub const EQC_INTR: Field = Field::new(0xb4, 12).at(EQC);
/// `eqc.log_page_size`: bit 0xc3, 5 bits.
pub const EQC_LOG_PAGE_SIZE: Field = Field::new(0xc3, 5).at(EQC);
/// `create_eq_in.event_bitmask[0]`: bit 0x2c0, 64 bits (bit t routes event type t).
pub const CREATE_EQ_EVENT_BITMASK0: Field = Field::new(0x2c0, 64);
/// `create_eq_out.eq_number` / `destroy_eq_in.eq_number`: bit 0x58, 8 bits.
pub const EQ_NUMBER: Field = Field::new(0x58, 8);

/// Event type bit of port-change events in `event_bitmask` (`MLX5_EVENT_TYPE_PORT_CHANGE`).
pub const EVENT_TYPE_PORT_CHANGE: u8 = 0x09;
/// Event type bit of command completions in `event_bitmask` (`MLX5_EVENT_TYPE_CMD`): the
/// command EQ's only bit.
pub const EVENT_TYPE_CMD: u8 = crate::hwif::mlx5::eq::EVENT_TYPE_CMD;

/// Parameters of CREATE_EQ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreateEq<'a> {
    /// log2 of the number of 64-byte EQEs.
    pub log_eq_size: u8,
    /// UAR page whose doorbells serve this EQ.
    pub uar_page: u32,
    /// MSI-X vector index within the function.
    pub intr: u16,
    /// `event_bitmask[0]`: bit t routes events of type t (completions need no bit).
    pub event_bitmask: u64,
    /// The EQE ring.
    pub pas: Pas<'a>,
}

/// Input length of CREATE_EQ for `p`.
pub fn create_eq_len(p: &CreateEq<'_>) -> usize {
    with_pas_len(p.pas.npages())
}

/// CREATE_EQ.
pub fn create_eq(buf: &mut [u8], p: &CreateEq<'_>) -> Result<usize, FormatError> {
    fits(u64::from(p.log_eq_size), 5)?;
    fits(u64::from(p.uar_page), 24)?;
    fits(u64::from(p.intr), 12)?;
    if p.pas.size < (64usize << p.log_eq_size) {
        return Err(FormatError::BadParam);
    }
    let len = create_eq_len(p);
    let b = start(
        buf,
        len,
        op::CREATE_EQ,
        0,
        &[
            (CREATE_EQ_EVENT_BITMASK0, p.event_bitmask),
            (EQC_LOG_EQ_SIZE, u64::from(p.log_eq_size)),
            (EQC_UAR_PAGE, u64::from(p.uar_page)),
            (EQC_INTR, u64::from(p.intr)),
            (EQC_LOG_PAGE_SIZE, 0),
        ],
    )?;
    p.pas.write(b, PAS_OFFSET)?;
    Ok(len)
}

/// `create_eq_out.eq_number`.
pub fn parse_create_eq(out: &[u8]) -> Result<u8, FormatError> {
    Ok(EQ_NUMBER.get8(output(out, SHORT_LEN)?))
}

/// DESTROY_EQ `eqn`.
pub fn destroy_eq(buf: &mut [u8], eqn: u8) -> Result<usize, FormatError> {
    let f = [(EQ_NUMBER, u64::from(eqn))];
    build(buf, SHORT_LEN, op::DESTROY_EQ, 0, &f)
}

// ---------------------------------------------------------------------------------------
// CQ

/// `create_cq_in.cq_context` (`struct mlx5_ifc_cqc_bits`): bit 0x80.
pub const CQC: usize = 0x80;
/// `cqc.cqe_sz`: bit 0x08, 3 bits (0 = 64 bytes).
pub const CQC_CQE_SZ: Field = Field::new(0x08, 3).at(CQC);
/// `cqc.cqe_comp_en`: bit 0x11, 1 bit.
pub const CQC_CQE_COMP_EN: Field = Field::new(0x11, 1).at(CQC);
/// `cqc.mini_cqe_res_format`: bit 0x12, 2 bits.
pub const CQC_MINI_CQE_RES_FORMAT: Field = Field::new(0x12, 2).at(CQC);
/// `cqc.page_offset`: bit 0x54, 6 bits.
pub const CQC_PAGE_OFFSET: Field = Field::new(0x54, 6).at(CQC);
/// `cqc.log_cq_size`: bit 0x63, 5 bits.
pub const CQC_LOG_CQ_SIZE: Field = Field::new(0x63, 5).at(CQC);
/// `cqc.uar_page`: bit 0x68, 24 bits.
pub const CQC_UAR_PAGE: Field = Field::new(0x68, 24).at(CQC);
/// `cqc.c_eqn_or_apu_element`: bit 0xa0, 32 bits.
pub const CQC_C_EQN: Field = Field::new(0xa0, 32).at(CQC);
/// `cqc.log_page_size`: bit 0xc3, 5 bits.
pub const CQC_LOG_PAGE_SIZE: Field = Field::new(0xc3, 5).at(CQC);
/// `cqc.dbr_addr`: bit 0x1c0, 64 bits.
pub const CQC_DBR_ADDR: Field = Field::new(0x1c0, 64).at(CQC);

/// Parameters of CREATE_CQ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreateCq<'a> {
    /// log2 of the number of 64-byte CQEs.
    pub log_cq_size: u8,
    /// UAR page of the CQ's arm doorbell.
    pub uar_page: u32,
    /// EQ that gets this CQ's completion events.
    pub c_eqn: u8,
    /// Bus address of the doorbell record (set_ci, arm), 8-byte aligned.
    pub dbr_addr: u64,
    /// CQE compression on.
    pub cqe_comp_en: bool,
    /// `mini_cqe_res_format` (0: hash + byte count; [`MINI_CQE_FORMAT_CSUM`]).
    pub mini_cqe_res_format: u8,
    /// The CQE ring.
    pub pas: Pas<'a>,
}

/// `mini_cqe_res_format` CSUM (`MLX5_CQE_FORMAT_CSUM`): each mini CQE carries the packet's
/// `check_sum` and `byte_cnt`, what mlx5e's cyclic RQ asks for.
pub const MINI_CQE_FORMAT_CSUM: u8 = 1;

/// Input length of CREATE_CQ for `p`.
pub fn create_cq_len(p: &CreateCq<'_>) -> usize {
    with_pas_len(p.pas.npages())
}

/// CREATE_CQ with 64-byte CQEs.
pub fn create_cq(buf: &mut [u8], p: &CreateCq<'_>) -> Result<usize, FormatError> {
    fits(u64::from(p.log_cq_size), 5)?;
    fits(u64::from(p.uar_page), 24)?;
    fits(u64::from(p.mini_cqe_res_format), 2)?;
    if p.dbr_addr & 7 != 0 || p.pas.size < (64usize << p.log_cq_size) {
        return Err(FormatError::BadParam);
    }
    let len = create_cq_len(p);
    let b = start(
        buf,
        len,
        op::CREATE_CQ,
        0,
        &[
            (CQC_CQE_SZ, 0),
            (CQC_CQE_COMP_EN, u64::from(p.cqe_comp_en)),
            (CQC_MINI_CQE_RES_FORMAT, u64::from(p.mini_cqe_res_format)),
            (CQC_LOG_CQ_SIZE, u64::from(p.log_cq_size)),
            (CQC_UAR_PAGE, u64::from(p.uar_page)),
            (CQC_C_EQN, u64::from(p.c_eqn)),
            (CQC_LOG_PAGE_SIZE, 0),
            (CQC_DBR_ADDR, p.dbr_addr),
        ],
    )?;
    p.pas.write(b, PAS_OFFSET)?;
    Ok(len)
}

/// `create_cq_out.cqn` (bit 0x48, 24 bits).
pub fn parse_create_cq(out: &[u8]) -> Result<u32, FormatError> {
    obj_out(out)
}

/// DESTROY_CQ `cqn` (`destroy_cq_in.cqn`, bit 0x48).
pub fn destroy_cq(buf: &mut [u8], cqn: u32) -> Result<usize, FormatError> {
    obj_cmd(buf, op::DESTROY_CQ, cqn)
}

// ---------------------------------------------------------------------------------------
// CQ moderation (en_main.c `mlx5e_create_cq`, cq.c `mlx5_core_modify_cq_moderation`)

/// `cqc.cq_period_mode`: bit 0x0f, 2 bits (0: the period restarts on each event).
pub const CQC_CQ_PERIOD_MODE: Field = Field::new(0x0f, 2).at(CQC);
/// `cqc.cq_period`: bit 0x84, 12 bits (microseconds).
pub const CQC_CQ_PERIOD: Field = Field::new(0x84, 12).at(CQC);
/// `cqc.cq_max_count`: bit 0x90, 16 bits.
pub const CQC_CQ_MAX_COUNT: Field = Field::new(0x90, 16).at(CQC);
/// `modify_cq_in.cqn`: bit 0x48, 24 bits.
pub const MODIFY_CQ_CQN: Field = Field::new(0x48, 24);
/// `modify_cq_in.modify_field_select`: bit 0x60, 32 bits.
pub const MODIFY_CQ_FIELD_SELECT: Field = Field::new(0x60, 32);
/// `modify_field_select` bit of `cq_period` (`MLX5_CQ_MODIFY_PERIOD`).
pub const CQ_MODIFY_PERIOD: u32 = 1 << 0;
/// `modify_field_select` bit of `cq_max_count` (`MLX5_CQ_MODIFY_COUNT`).
pub const CQ_MODIFY_COUNT: u32 = 1 << 1;
/// Input length of MODIFY_CQ (`modify_cq_in` up to its empty `pas[]`).
pub const MODIFY_CQ_LEN: usize = 0x110;
/// Largest `cq_period` (12 bits, `MLX5_MAX_CQ_PERIOD`).
pub const MAX_CQ_PERIOD: u16 = 0xfff;

/// A CQ's moderation: the device holds the completion event of an armed CQ back until
/// `max_count` CQEs are pending or `period` microseconds have passed since its last event
/// (`cq_period_mode` 0, mlx5e's default); `period` 0 is none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CqModeration {
    /// `cq_period`, microseconds (at most [`MAX_CQ_PERIOD`]).
    pub period: u16,
    /// `cq_max_count`.
    pub max_count: u16,
}

/// Writes `m` into the CQ context of a CREATE_CQ input that [`create_cq`] built.
pub fn set_create_cq_moderation(input: &mut [u8], m: &CqModeration) -> Result<(), FormatError> {
    fits(u64::from(m.period), 12)?;
    let b = built(input, PAS_OFFSET)?;
    CQC_CQ_PERIOD_MODE.set(b, 0);
    CQC_CQ_PERIOD.set(b, u64::from(m.period));
    CQC_CQ_MAX_COUNT.set(b, u64::from(m.max_count));
    Ok(())
}

/// MODIFY_CQ of CQ `cqn`'s period and count (`mlx5_core_modify_cq_moderation`).
pub fn modify_cq_moderation(
    buf: &mut [u8],
    cqn: u32,
    m: &CqModeration,
) -> Result<usize, FormatError> {
    fits(u64::from(cqn), 24)?;
    fits(u64::from(m.period), 12)?;
    build(
        buf,
        MODIFY_CQ_LEN,
        op::MODIFY_CQ,
        0,
        &[
            (MODIFY_CQ_CQN, u64::from(cqn)),
            (
                MODIFY_CQ_FIELD_SELECT,
                u64::from(CQ_MODIFY_PERIOD | CQ_MODIFY_COUNT),
            ),
            (CQC_CQ_PERIOD, u64::from(m.period)),
            (CQC_CQ_MAX_COUNT, u64::from(m.max_count)),
        ],
    )
}

// ---------------------------------------------------------------------------------------
// TIS

/// `create_tis_in` length (0x600 bits).
pub const CREATE_TIS_IN_LEN: usize = 192;
/// `create_tis_in.ctx` (`struct mlx5_ifc_tisc_bits`): bit 0x100.
pub const TISC: usize = 0x100;
/// `tisc.transport_domain`: bit 0x128, 24 bits.
pub const TISC_TRANSPORT_DOMAIN: Field = Field::new(0x128, 24).at(TISC);

/// CREATE_TIS in transport domain `td`.
pub fn create_tis(buf: &mut [u8], td: u32) -> Result<usize, FormatError> {
    fits(u64::from(td), 24)?;
    let f = [(TISC_TRANSPORT_DOMAIN, u64::from(td))];
    build(buf, CREATE_TIS_IN_LEN, op::CREATE_TIS, 0, &f)
}

/// `create_tis_out.tisn` (bit 0x48, 24 bits).
pub fn parse_create_tis(out: &[u8]) -> Result<u32, FormatError> {
    obj_out(out)
}

/// DESTROY_TIS `tisn` (`destroy_tis_in.tisn`, bit 0x48).
pub fn destroy_tis(buf: &mut [u8], tisn: u32) -> Result<usize, FormatError> {
    obj_cmd(buf, op::DESTROY_TIS, tisn)
}

// ---------------------------------------------------------------------------------------
// SQ and RQ

/// `create_sq_in.ctx` / `create_rq_in.ctx` / `modify_*_in.ctx` / `query_*_out.*_context`
/// (`sqc` / `rqc`): bit 0x100.
pub const QC: usize = 0x100;
/// `sqc.flush_in_error_en`: bit 0x03, 1 bit.
pub const SQC_FLUSH_IN_ERROR_EN: Field = Field::new(0x03, 1).at(QC);
/// `sqc.min_wqe_inline_mode`: bit 0x05, 3 bits.
pub const SQC_MIN_WQE_INLINE_MODE: Field = Field::new(0x05, 3).at(QC);
/// `sqc.state` / `rqc.state`: bit 0x08, 4 bits.
pub const QC_STATE: Field = Field::new(0x08, 4).at(QC);
/// `sqc.cqn` / `rqc.cqn`: bit 0x48, 24 bits.
pub const QC_CQN: Field = Field::new(0x48, 24).at(QC);
/// `sqc.tis_lst_sz`: bit 0x100, 16 bits.
pub const SQC_TIS_LST_SZ: Field = Field::new(0x100, 16).at(QC);
/// `sqc.tis_num_0`: bit 0x168, 24 bits.
pub const SQC_TIS_NUM_0: Field = Field::new(0x168, 24).at(QC);
/// `rqc.vsd`: bit 0x03, 1 bit (VLAN strip disable: received frames keep their C-tag).
pub const RQC_VSD: Field = Field::new(0x03, 1).at(QC);
/// `rqc.mem_rq_type`: bit 0x04, 4 bits.
pub const RQC_MEM_RQ_TYPE: Field = Field::new(0x04, 4).at(QC);
/// `rqc.flush_in_error_en`: bit 0x0d, 1 bit.
pub const RQC_FLUSH_IN_ERROR_EN: Field = Field::new(0x0d, 1).at(QC);
/// `rqc.counter_set_id`: bit 0x60, 8 bits (the Q counter set counting the RQ's drops).
pub const RQC_COUNTER_SET_ID: Field = Field::new(0x60, 8).at(QC);

/// `sqc.wq` / `rqc.wq` (`struct mlx5_ifc_wq_bits`): bit 0x180 of the context.
pub const WQ: usize = QC + 0x180;
/// `wq.wq_type`: bit 0x00, 4 bits.
pub const WQ_TYPE: Field = Field::new(0x00, 4).at(WQ);
/// `wq.pd`: bit 0x48, 24 bits.
pub const WQ_PD: Field = Field::new(0x48, 24).at(WQ);
/// `wq.uar_page`: bit 0x68, 24 bits.
pub const WQ_UAR_PAGE: Field = Field::new(0x68, 24).at(WQ);
/// `wq.dbr_addr`: bit 0x80, 64 bits.
pub const WQ_DBR_ADDR: Field = Field::new(0x80, 64).at(WQ);
/// `wq.log_wq_stride`: bit 0x10c, 4 bits.
pub const WQ_LOG_WQ_STRIDE: Field = Field::new(0x10c, 4).at(WQ);
/// `wq.log_wq_pg_sz`: bit 0x113, 5 bits.
pub const WQ_LOG_WQ_PG_SZ: Field = Field::new(0x113, 5).at(WQ);
/// `wq.log_wq_sz`: bit 0x11b, 5 bits.
pub const WQ_LOG_WQ_SZ: Field = Field::new(0x11b, 5).at(WQ);

/// `modify_sq_in.sq_state` / `modify_rq_in.rq_state`: bit 0x40, 4 bits (current state).
pub const MODIFY_CUR_STATE: Field = Field::new(0x40, 4);
/// `modify_sq_in.sqn` / `modify_rq_in.rqn` / `query_sq_in.sqn` / `query_rq_in.rqn`: bit 0x48.
pub const MODIFY_QN: Field = Field::new(0x48, 24);
/// `modify_rq_in.modify_bitmask`: bit 0x80, 64 bits.
pub const MODIFY_RQ_BITMASK: Field = Field::new(0x80, 64);
/// `MLX5_MODIFY_RQ_IN_MODIFY_BITMASK_VSD`: the MODIFY_RQ changes `rqc.vsd`.
pub const MODIFY_RQ_BITMASK_VSD: u64 = 1 << 1;
/// `modify_*_in` / `query_*_out` length.
pub const MODIFY_Q_IN_LEN: usize = 272;
/// `query_sq_out` / `query_rq_out` length.
pub const QUERY_Q_OUT_LEN: usize = 272;

/// `wq_type`: cyclic (`MLX5_WQ_TYPE_CYCLIC`).
pub const WQ_TYPE_CYCLIC: u8 = 1;
/// `log_wq_stride` of an SQ (64-byte WQEBBs).
pub const SQ_LOG_WQ_STRIDE: u8 = 6;

/// SQ / RQ states (`MLX5_SQC_STATE_*`, `MLX5_RQC_STATE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum QState {
    /// Reset.
    Rst = 0,
    /// Ready.
    Rdy = 1,
    /// Error.
    Err = 3,
}

impl QState {
    /// The state of a raw 4-bit value, if it names one.
    pub fn from_raw(v: u8) -> Option<Self> {
        match v {
            0 => Some(Self::Rst),
            1 => Some(Self::Rdy),
            3 => Some(Self::Err),
            _ => None,
        }
    }
}

/// The work queue part of CREATE_SQ / CREATE_RQ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wq<'a> {
    /// Protection domain.
    pub pd: u32,
    /// UAR page of the doorbell (SQ; 0 for RQs).
    pub uar_page: u32,
    /// Bus address of the doorbell record, 8-byte aligned.
    pub dbr_addr: u64,
    /// log2 of the stride (64-byte WQEBB for SQs, the RX WQE size for RQs).
    pub log_wq_stride: u8,
    /// log2 of the number of strides.
    pub log_wq_sz: u8,
    /// The ring.
    pub pas: Pas<'a>,
}

fn write_wq(b: &mut [u8], w: &Wq<'_>) -> Result<(), FormatError> {
    fits(u64::from(w.pd), 24)?;
    fits(u64::from(w.uar_page), 24)?;
    fits(u64::from(w.log_wq_stride), 4)?;
    fits(u64::from(w.log_wq_sz), 5)?;
    if w.dbr_addr & 7 != 0 || w.pas.size < (1usize << w.log_wq_stride) << w.log_wq_sz {
        return Err(FormatError::BadParam);
    }
    set_fields(
        b,
        &[
            (WQ_TYPE, u64::from(WQ_TYPE_CYCLIC)),
            (WQ_PD, u64::from(w.pd)),
            (WQ_UAR_PAGE, u64::from(w.uar_page)),
            (WQ_DBR_ADDR, w.dbr_addr),
            (WQ_LOG_WQ_STRIDE, u64::from(w.log_wq_stride)),
            (WQ_LOG_WQ_PG_SZ, 0),
            (WQ_LOG_WQ_SZ, u64::from(w.log_wq_sz)),
        ],
    );
    w.pas.write(b, PAS_OFFSET)
}

/// Parameters of CREATE_SQ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreateSq<'a> {
    /// Completion queue.
    pub cqn: u32,
    /// The TIS the SQ sends through.
    pub tisn: u32,
    /// `min_wqe_inline_mode` (`MLX5_INLINE_MODE_*`; set when the caps say the vport context
    /// decides).
    pub min_wqe_inline_mode: u8,
    /// The work queue (`log_wq_stride` must be [`SQ_LOG_WQ_STRIDE`]).
    pub wq: Wq<'a>,
}

/// Input length of CREATE_SQ for `p`.
pub fn create_sq_len(p: &CreateSq<'_>) -> usize {
    with_pas_len(p.wq.pas.npages())
}

/// CREATE_SQ in state RST with `flush_in_error_en` (mlx5e_create_sq).
pub fn create_sq(buf: &mut [u8], p: &CreateSq<'_>) -> Result<usize, FormatError> {
    fits(u64::from(p.cqn), 24)?;
    fits(u64::from(p.tisn), 24)?;
    fits(u64::from(p.min_wqe_inline_mode), 3)?;
    if p.wq.log_wq_stride != SQ_LOG_WQ_STRIDE {
        return Err(FormatError::BadParam);
    }
    let len = create_sq_len(p);
    let b = start(
        buf,
        len,
        op::CREATE_SQ,
        0,
        &[
            (SQC_FLUSH_IN_ERROR_EN, 1),
            (SQC_MIN_WQE_INLINE_MODE, u64::from(p.min_wqe_inline_mode)),
            (QC_STATE, QState::Rst as u64),
            (QC_CQN, u64::from(p.cqn)),
            (SQC_TIS_LST_SZ, 1),
            (SQC_TIS_NUM_0, u64::from(p.tisn)),
        ],
    )?;
    write_wq(b, &p.wq)?;
    Ok(len)
}

/// `create_sq_out.sqn` (bit 0x48, 24 bits).
pub fn parse_create_sq(out: &[u8]) -> Result<u32, FormatError> {
    obj_out(out)
}

/// Parameters of CREATE_RQ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreateRq<'a> {
    /// Completion queue.
    pub cqn: u32,
    /// The Q counter set that counts the RQ's drops for want of a WQE (ALLOC_Q_COUNTER's
    /// id; 0: none), as mlx5e_create_rq sets `counter_set_id`.
    pub counter_set_id: u8,
    /// `vsd`: the device leaves received frames' VLAN tags in place (NETIF_F_HW_VLAN_CTAG_RX
    /// off, mlx5e's `vlan_strip_disable`); clear, it strips an outer C-tag into the CQE.
    pub vsd: bool,
    /// The work queue (`log_wq_stride` 4..=8; `uar_page` unused).
    pub wq: Wq<'a>,
}

/// Input length of CREATE_RQ for `p`.
pub fn create_rq_len(p: &CreateRq<'_>) -> usize {
    with_pas_len(p.wq.pas.npages())
}

/// CREATE_RQ (cyclic, memory RQ) in state RST with `flush_in_error_en` (mlx5e_create_rq).
pub fn create_rq(buf: &mut [u8], p: &CreateRq<'_>) -> Result<usize, FormatError> {
    fits(u64::from(p.cqn), 24)?;
    if !(4..=8).contains(&p.wq.log_wq_stride) {
        return Err(FormatError::BadParam);
    }
    let len = create_rq_len(p);
    let b = start(
        buf,
        len,
        op::CREATE_RQ,
        0,
        &[
            (RQC_MEM_RQ_TYPE, 0),
            (QC_STATE, QState::Rst as u64),
            (RQC_FLUSH_IN_ERROR_EN, 1),
            (QC_CQN, u64::from(p.cqn)),
            (RQC_COUNTER_SET_ID, u64::from(p.counter_set_id)),
            (RQC_VSD, u64::from(p.vsd)),
        ],
    )?;
    write_wq(b, &p.wq)?;
    Ok(len)
}

/// `create_rq_out.rqn` (bit 0x48, 24 bits).
pub fn parse_create_rq(out: &[u8]) -> Result<u32, FormatError> {
    obj_out(out)
}

fn modify_q(
    buf: &mut [u8],
    opcode: u16,
    qn: u32,
    cur: QState,
    next: QState,
) -> Result<usize, FormatError> {
    fits(u64::from(qn), 24)?;
    let f = [
        (MODIFY_CUR_STATE, cur as u64),
        (MODIFY_QN, u64::from(qn)),
        (QC_STATE, next as u64),
    ];
    build(buf, MODIFY_Q_IN_LEN, opcode, 0, &f)
}

/// MODIFY_SQ `sqn` from `cur` to `next` (`sq_state` in the header, `sqc.state` the new one).
pub fn modify_sq(
    buf: &mut [u8],
    sqn: u32,
    cur: QState,
    next: QState,
) -> Result<usize, FormatError> {
    modify_q(buf, op::MODIFY_SQ, sqn, cur, next)
}

/// MODIFY_RQ `rqn` from `cur` to `next`.
pub fn modify_rq(
    buf: &mut [u8],
    rqn: u32,
    cur: QState,
    next: QState,
) -> Result<usize, FormatError> {
    modify_q(buf, op::MODIFY_RQ, rqn, cur, next)
}

/// MODIFY_RQ of a ready RQ `rqn` that changes only its `vsd` (RDY -> RDY with the VSD bit
/// of `modify_bitmask`, as `mlx5e_modify_rq_vsd` for ethtool -K rxvlan).
pub fn modify_rq_vsd(buf: &mut [u8], rqn: u32, vsd: bool) -> Result<usize, FormatError> {
    let len = modify_q(buf, op::MODIFY_RQ, rqn, QState::Rdy, QState::Rdy)?;
    let b = built(buf, len)?;
    MODIFY_RQ_BITMASK.set(b, MODIFY_RQ_BITMASK_VSD);
    RQC_VSD.set(b, u64::from(vsd));
    Ok(len)
}

/// DESTROY_SQ `sqn`.
pub fn destroy_sq(buf: &mut [u8], sqn: u32) -> Result<usize, FormatError> {
    obj_cmd(buf, op::DESTROY_SQ, sqn)
}

/// DESTROY_RQ `rqn`.
pub fn destroy_rq(buf: &mut [u8], rqn: u32) -> Result<usize, FormatError> {
    obj_cmd(buf, op::DESTROY_RQ, rqn)
}

/// QUERY_SQ `sqn`.
pub fn query_sq(buf: &mut [u8], sqn: u32) -> Result<usize, FormatError> {
    obj_cmd(buf, op::QUERY_SQ, sqn)
}

/// QUERY_RQ `rqn`.
pub fn query_rq(buf: &mut [u8], rqn: u32) -> Result<usize, FormatError> {
    obj_cmd(buf, op::QUERY_RQ, rqn)
}

/// The state of a QUERY_SQ / QUERY_RQ output (`sq_context.state` / `rq_context.state`);
/// `BadParam` for a value that names no state.
pub fn parse_query_q_state(out: &[u8]) -> Result<QState, FormatError> {
    let o = output(out, QUERY_Q_OUT_LEN)?;
    QState::from_raw(QC_STATE.get8(o)).ok_or(FormatError::BadParam)
}

/// Output length of every command here except QUERY_SQ / QUERY_RQ.
pub const OUT_LEN: usize = hdr::LEN;
