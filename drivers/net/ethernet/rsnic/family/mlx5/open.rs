// SPDX-License-Identifier: GPL-2.0

//! The queues of a ConnectX channel as `en_main.c` opens them: the completion EQ, the CQs
//! before the queues that complete on them, the SQ and the RQ with their doorbell records
//! (`mlx5e_open_channel`, `mlx5e_open_cq`, `mlx5e_open_txqsq`, `mlx5e_open_rq`), an XDP SQ
//! (`mlx5e_open_xdpsq`: XDP_TX, `ndo_xdp_xmit`, XSK, ICO) and the XSK RQ
//! (`en/xsk/setup.c`). Each object a command made is recorded in the channel's [`Queues`]
//! as soon as it exists, so that a failed open destroys what was made (the family's
//! `destroy`).

use super::*;
use crate::hwif::pkt::TxPacket;
use ctrl::queue_buf;

/// Opens channel `ctx`'s regular queues (EQ, CQs, SQ, RQ with its buffers posted): the
/// family's [`Control::open`].
pub(super) fn channel(
    ctx: &OpenCtx<'_, Mlx5>,
    q: &mut Queues,
    p: &ChannelParams<Mlx5Flag>,
) -> Result<Opened<Mlx5>> {
    let pool = ctx.pool.ok_or(EINVAL)?;
    let func = ctx.func;
    let uar = func.uar_offset();
    let dma = ctx.dma;
    // The channel's completion EQ, on its vector (mlx5e: one per channel's IRQ).
    let intr = ctx.intr as u16;
    let (eqn, ring) = func.create_comp_eq(dma, intr)?;
    q.eq = Some(eqn);
    let eq = Eq::new(ring, ctrl::COMP_EQ_LOG, eqn, uar).map_err(|_| EINVAL)?;
    // Doorbell records: SQ at 0, RQ at 8, TX CQ at 16, RX CQ at 24.
    let dbr = KCoherent::alloc(dma, 64)?;
    let nsq = 1usize << p.log_sq;
    let nrq = 1usize << p.log_rq;
    let tx_cq_buf = queue_buf(dma, nsq * 64)?;
    let rx_cq_buf = queue_buf(dma, nrq * 64)?;
    let sq_buf = queue_buf(dma, nsq * 64)?;
    let layout = p.rx_layout(Mlx5::RX_SCATTER);
    let rq_params = RqParams {
        log_sz: p.log_rq,
        buf_size: layout.seg_len,
        // At most 16 (checked by `Rq::new`): a 9000-byte MTU takes 3 pages.
        segs: layout.segs.min(u32::from(u8::MAX)) as u8,
        lkey: func.lkey(),
        dbr_off: 8,
        wqe_bulk: 8,
    };
    let rq_buf = queue_buf(dma, nrq << rq_params.log_stride())?;
    let dbr_addr = dbr.dma_addr();

    // Device queues by command, CQs before the queues that complete on them (the CQ
    // buffers get their initial owner bytes from `Cq::new`, before any WQE is posted).
    let tx_cqn = rec(
        &mut q.tx_cq,
        func.create_cq(
            &tx_cq_buf,
            p.log_sq,
            dbr_addr + 16,
            eqn,
            false,
            cq_moderation(p.coal.tx),
        ),
    )?;
    let rx_cqn = rec(
        &mut q.rx_cq,
        func.create_cq(
            &rx_cq_buf,
            p.log_rq,
            dbr_addr + 24,
            eqn,
            p.pflags.has(Mlx5Flag::RxCqeCompress),
            cq_moderation(p.coal.rx),
        ),
    )?;
    let tx_cq = Cq::new(tx_cq_buf, dbr.clone(), 16, p.log_sq, tx_cqn, uar).map_err(|_| EINVAL)?;
    let rx_cq = Cq::new(rx_cq_buf, dbr.clone(), 24, p.log_rq, rx_cqn, uar).map_err(|_| EINVAL)?;
    let sqn = rec(
        &mut q.sq,
        func.create_sq(&sq_buf, p.log_sq, dbr_addr, tx_cqn),
    )?;
    func.ready_sq(sqn)?;
    let rqn = rec(
        &mut q.rq,
        func.create_rq(
            &rq_buf,
            p.log_rq,
            rq_params.log_stride(),
            dbr_addr + 8,
            rx_cqn,
            !p.rx_vlan,
        ),
    )?;
    func.ready_rq(rqn)?;
    let sq = new_sq(
        func,
        (p.log_sq, sqn),
        (p.pflags.has(Mlx5Flag::SkbTxMpwqe), false),
        sq_buf,
        dbr.clone(),
        tx_cq,
    )?;
    let mut rq = Rq::new(
        rq_params,
        rq_buf,
        dbr,
        rx_cq,
        filled(nrq * usize::from(rq_params.segs), || None)?,
    )
    .map_err(|_| EINVAL)?;
    rq.post(&mut RxEnv {
        pool,
        mmio: ctx.hw.bar(),
    });
    Ok(Opened {
        sq,
        rx: rq,
        irq: eq,
        rqn,
    })
}

/// Opens an XDP SQ of `kind` with its CQ on the channel's EQ: the family's
/// [`Control::xdp_sq_open`].
pub(super) fn xdp_sq(
    ctx: &OpenCtx<'_, Mlx5>,
    q: &mut Queues,
    p: &ChannelParams<Mlx5Flag>,
    kind: XdpSqKind,
) -> Result<Option<KXdpSq>> {
    let (cq_slot, sq_slot) = match kind {
        XdpSqKind::Tx => (&mut q.xdp_tx_cq, &mut q.xdp_tx_sq),
        XdpSqKind::Redirect => (&mut q.xdp_rd_cq, &mut q.xdp_rd_sq),
        XdpSqKind::Xsk => (&mut q.xsk_sq_cq, &mut q.xsk_sq),
        XdpSqKind::Ico => (&mut q.ico_cq, &mut q.ico_sq),
    };
    let func = ctx.func;
    let uar = func.uar_offset();
    let eqn = q.eq.ok_or(EINVAL)?;
    // Doorbell records: SQ at 0, CQ at 16.
    let dbr = KCoherent::alloc(ctx.dma, 64)?;
    // The ICO SQ only carries wake-up NOPs: the smallest ring.
    let log_sq = if kind == XdpSqKind::Ico {
        Mlx5::SQ_RING.min
    } else {
        p.log_sq
    };
    let n = 1usize << log_sq;
    let cq_buf = queue_buf(ctx.dma, n * 64)?;
    let sq_buf = queue_buf(ctx.dma, n * 64)?;
    // XDP SQs complete with the TX moderation, as mlx5e's; the ICO SQ's wake-ups with
    // none.
    let moder = if kind == XdpSqKind::Ico {
        res::CqModeration::default()
    } else {
        cq_moderation(p.coal.tx)
    };
    let cqn = rec(
        cq_slot,
        func.create_cq(&cq_buf, log_sq, dbr.dma_addr() + 16, eqn, false, moder),
    )?;
    let cq = Cq::new(cq_buf, dbr.clone(), 16, log_sq, cqn, uar).map_err(|_| EINVAL)?;
    let sqn = rec(
        sq_slot,
        func.create_sq(&sq_buf, log_sq, dbr.dma_addr(), cqn),
    )?;
    func.ready_sq(sqn)?;
    // mlx5e's XDP SQs: with `xdp_tx_mpwqe` (the capability's default), Enhanced MPWQE
    // sessions with small frames inlined while the ring is busy (the inline
    // watermarks); without it (a device without enhanced MPWQE, such as ConnectX-4 Lx),
    // one regular send WQE per frame, NOP-padded at the fragment's end, completions
    // asked for by threshold, as mlx5e_xmit_xdp_frame. The ICO SQ posts NOPs only.
    let mpwqe = kind != XdpSqKind::Ico && p.pflags.has(Mlx5Flag::XdpTxMpwqe);
    let sq = new_sq(func, (log_sq, sqn), (mpwqe, mpwqe), sq_buf, dbr, cq)?;
    Ok(Some(sq))
}

/// Builds the driver's side of SQ `sqn` of `2^log_sz` WQEBBs on `sq_buf`, its doorbell
/// record at offset 0 of `dbr`, completing on `cq`: the parameters every SQ of a channel
/// shares (the function's lkey, BlueFlame doorbell, inline mode), with `mpwqe` saying
/// whether it uses Enhanced MPWQE sessions and whether those inline small frames.
fn new_sq<P: TxPacket>(
    func: &ctrl::Func,
    (log_sz, sqn): (u8, u32),
    (mpwqe, mpwqe_inline): (bool, bool),
    sq_buf: KCoherent,
    dbr: KCoherent,
    cq: Cq<KCoherent>,
) -> Result<KSqOf<P>> {
    let n = 1usize << log_sz;
    Sq::new(
        SqParams {
            log_sz,
            sqn,
            lkey: func.lkey(),
            db_offset: func.uar_offset() + BF_OFFSET,
            dbr_off: 0,
            min_inline: func.min_inline(),
            // Without `wqe_vlan_insert` the tag goes into the inline header
            // (MLX5E_SQ_STATE_VLAN_NEED_L2_INLINE).
            vlan_need_l2_inline: !func.resources().caps.wqe_vlan_insert,
            // The device's largest send WQE (`mlx5e_get_max_sq_wqebbs`), checked at
            // bring-up to hold the largest WQE the data path builds.
            max_sq_wqebbs: func.resources().caps.max_sq_wqebbs(),
            mpwqe,
            mpwqe_inline,
        },
        sq_buf,
        dbr,
        cq,
        filled(n, WqeInfo::default)?,
        filled(4 * n, FifoEntry::default)?,
        filled(4 * n, DmaEntry::default)?,
    )
    .map_err(|_| EINVAL)
}

/// Opens the channel's XSK RQ with its CQ, buffers of `buf_size` bytes from the pool
/// posted: the family's [`Control::xsk_rq_open`].
pub(super) fn xsk_rq(
    ctx: &OpenCtx<'_, Mlx5>,
    q: &mut Queues,
    p: &ChannelParams<Mlx5Flag>,
    buf_size: u32,
    env: &mut XskRxEnv<'_>,
) -> Result<Option<(KXskRq, u32)>> {
    let func = ctx.func;
    let uar = func.uar_offset();
    let eqn = q.eq.ok_or(EINVAL)?;
    // Doorbell records: RQ at 0, CQ at 16.
    let dbr = KCoherent::alloc(ctx.dma, 64)?;
    let n = 1usize << p.log_rq;
    let cq_buf = queue_buf(ctx.dma, n * 64)?;
    let rq_buf = queue_buf(ctx.dma, n * 16)?;
    let cqn = rec(
        &mut q.xsk_rq_cq,
        func.create_cq(
            &cq_buf,
            p.log_rq,
            dbr.dma_addr() + 16,
            eqn,
            p.pflags.has(Mlx5Flag::RxCqeCompress),
            cq_moderation(p.coal.rx),
        ),
    )?;
    let cq = Cq::new(cq_buf, dbr.clone(), 16, p.log_rq, cqn, uar).map_err(|_| EINVAL)?;
    let rqn = rec(
        &mut q.xsk_rq,
        func.create_rq(&rq_buf, p.log_rq, 4, dbr.dma_addr(), cqn, !p.rx_vlan),
    )?;
    func.ready_rq(rqn)?;
    let mut rq = Rq::new(
        RqParams {
            log_sz: p.log_rq,
            buf_size,
            segs: 1,
            lkey: func.lkey(),
            dbr_off: 0,
            wqe_bulk: 8,
        },
        rq_buf,
        dbr,
        cq,
        filled(n, || None)?,
    )
    .map_err(|_| EINVAL)?;
    // Posts what the fill ring has now; the rest follows as the socket refills it.
    rq.post(env);
    Ok(Some((rq, rqn)))
}
