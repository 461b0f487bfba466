// SPDX-License-Identifier: GPL-2.0

//! The device's half of the command queue (the driver's is `hwif/mlx5/cmd/queue.rs`): the
//! initialization segment's registers (`cmdq_addr_h`, `cmdq_addr_l_sz`, the command doorbell,
//! `initializing`, health), and the processor that executes rung entries: the 64-byte
//! `mlx5_cmd_layout` entry, the input and output mailbox chains (`mlx5_cmd_prot_block`,
//! every block number, token and address checked), the delivery status and the ownership
//! bit. PRM "Command Interface"; upstream cmd.c (`mlx5_cmd_enable`, `cmd_work_handler`,
//! `mlx5_cmd_comp_handler`), device.h (`mlx5_init_seg`, `mlx5_cmd_layout`).

use super::{Cx, Func};
use crate::hwif::bytes::{be32, be64};
use crate::hwif::hw::{BusMemory, DmaAddr};
use crate::sim::mlx5::ifc::{self, delivery, iseg, layout, mbox, op, set};
use crate::sim::mlx5::{Caps, PortCounters, Tables};

/// Longest command message (inlen, outlen) the model accepts: 16 inline bytes plus 2048
/// mailboxes (1 MiB).
pub const MAX_MSG: usize = 16 + 2048 * mbox::DATA_SIZE;

/// Scratch bytes the processor keeps of an input (the rest of a long PAS list is streamed).
const IN_BUF: usize = 4096;

/// Scratch bytes of an output (the largest output, QUERY_HCA_CAP, is 0x1010).
pub(super) const OUT_BUF: usize = 0x1010;

/// Entries of the command queue (log_cmdq_size 5).
pub const CMDQ_ENTRIES: u32 = 32;

/// `fw_rev`: 16.35 (minor in bits 31..16, major in 15..0).
pub const FW_REV: u32 = (35 << 16) | 16;

/// Sub-minor firmware version in `cmdif_rev_fw_sub` bits 15..0.
pub const FW_SUB: u32 = 1000;

/// A mailbox chain, walked forward with a cursor.
pub(super) struct Chain {
    pub(super) first: DmaAddr,
    pub(super) idx: usize,
    pub(super) addr: DmaAddr,
}

impl Chain {
    pub(super) fn new(first: DmaAddr) -> Self {
        Self {
            first,
            idx: 0,
            addr: first,
        }
    }

    /// Bus address of block `idx` (the chain was validated up to it).
    pub(super) fn block<M: BusMemory>(
        &mut self,
        mem: &M,
        idx: usize,
        c: &mut PortCounters,
    ) -> Option<DmaAddr> {
        if idx < self.idx {
            self.idx = 0;
            self.addr = self.first;
        }
        while self.idx < idx {
            let mut n = [0u8; 8];
            c.pcie
                .dma_read(self.addr.wrapping_add(mbox::NEXT as u64), 8);
            mem.dma_read(self.addr.wrapping_add(mbox::NEXT as u64), &mut n)
                .ok()?;
            self.addr = u64::from_be_bytes(n);
            self.idx += 1;
        }
        Some(self.addr)
    }
}

/// Checks `n` blocks of a chain: alignment, readability, block numbers and tokens.
pub(super) fn walk<M: BusMemory>(
    mem: &M,
    first: DmaAddr,
    n: usize,
    token: u8,
    ptr_err: u8,
    c: &mut PortCounters,
) -> Result<(), u8> {
    let mut addr = first;
    for k in 0..n {
        if addr == 0 || addr % 8 != 0 {
            return Err(ptr_err);
        }
        let mut t = [0u8; 16];
        c.pcie.dma_read(addr.wrapping_add(mbox::NEXT as u64), 16);
        if mem
            .dma_read(addr.wrapping_add(mbox::NEXT as u64), &mut t)
            .is_err()
        {
            return Err(ptr_err);
        }
        if be32(&t, 8) as usize != k {
            return Err(delivery::BAD_BLK_NUM_ERR);
        }
        if t[mbox::TOKEN - mbox::NEXT] != token {
            return Err(delivery::TOK_ERR);
        }
        let mut a = [0u8; 8];
        a.copy_from_slice(&t[..8]);
        addr = u64::from_be_bytes(a);
    }
    Ok(())
}

pub(super) fn blocks(len: usize) -> usize {
    len.saturating_sub(layout::INLINE).div_ceil(mbox::DATA_SIZE)
}

/// Walks message bytes `[from, from + len)` (from ≥ 16) through the chain's mailboxes:
/// `f(counters, bus address, range of the bytes)` for each piece inside one block. False if
/// a block is missing or `f` fails.
fn chain_walk<M: BusMemory>(
    ch: &mut Chain,
    mem: &M,
    from: usize,
    len: usize,
    c: &mut PortCounters,
    mut f: impl FnMut(&mut PortCounters, u64, core::ops::Range<usize>) -> bool,
) -> bool {
    let mut done = 0;
    while done < len {
        let o = from + done - layout::INLINE;
        let (bi, within) = (o / mbox::DATA_SIZE, o % mbox::DATA_SIZE);
        let n = (mbox::DATA_SIZE - within).min(len - done);
        let Some(addr) = ch.block(mem, bi, c) else {
            return false;
        };
        if !f(c, addr.wrapping_add(within as u64), done..done + n) {
            return false;
        }
        done += n;
    }
    true
}

/// Copies message bytes `[from, from + dst.len())` (from ≥ 16) out of the chain.
pub(super) fn chain_read<M: BusMemory>(
    ch: &mut Chain,
    mem: &M,
    from: usize,
    dst: &mut [u8],
    c: &mut PortCounters,
) -> bool {
    chain_walk(ch, mem, from, dst.len(), c, |c, a, r| {
        c.pcie.dma_read(a, r.len() as u64);
        dst.get_mut(r).is_some_and(|d| mem.dma_read(a, d).is_ok())
    })
}

/// Writes `src` as message bytes `[from, ...)` (from ≥ 16) into the chain.
fn chain_write<M: BusMemory>(
    ch: &mut Chain,
    mem: &M,
    from: usize,
    src: &[u8],
    c: &mut PortCounters,
) -> bool {
    chain_walk(ch, mem, from, src.len(), c, |c, a, r| {
        c.pcie.dma_write(a, r.len() as u64);
        src.get(r).is_some_and(|d| mem.dma_write(a, d).is_ok())
    })
}

/// Executes the rung command entries of every function.
pub(in crate::sim::mlx5) fn run<M: BusMemory>(
    t: &mut Tables<'_>,
    caps: &Caps,
    scratch: &mut [u8],
    mem: &M,
) {
    for p in 0..t.ports.len() {
        let Some(pt) = t.ports.get_mut(p) else {
            continue;
        };
        pt.func.health = pt.func.health.wrapping_add(1);
        let mut pending = core::mem::take(&mut pt.func.pending);
        while pending != 0 {
            let i = pending.trailing_zeros();
            pending &= pending - 1;
            let completed = exec_entry(t, caps, scratch, mem, p, i);
            if let Some(f) = t.ports.get_mut(p).map(|pt| &mut pt.func) {
                let bit = 1u32 << i;
                if completed && f.cmd_ev_entries & bit != 0 {
                    f.cmd_done_events |= bit;
                }
                f.cmd_ev_entries &= !bit;
            }
        }
    }
}

fn exec_entry<M: BusMemory>(
    t: &mut Tables<'_>,
    caps: &Caps,
    scratch: &mut [u8],
    mem: &M,
    p: usize,
    i: u32,
) -> bool {
    let Some(pt) = t.ports.get_mut(p) else {
        return false;
    };
    let base = pt
        .func
        .cmdq()
        .wrapping_add(u64::from(i) * layout::SIZE as u64);
    let c = &mut pt.counters;
    let mut ent = [0u8; layout::SIZE];
    c.pcie.dma_read(base, layout::SIZE as u64);
    if mem.dma_read(base, &mut ent).is_err() {
        c.dma_faults += 1;
        c.cmd_delivery_errors += 1;
        return false;
    }
    if ent[layout::STATUS_OWN] & 1 == 0 {
        // Software still owns the entry: nothing to execute, nothing to write.
        c.cmd_delivery_errors += 1;
        return false;
    }
    let token = ent[layout::TOKEN];
    let inlen = be32(&ent, layout::INLEN) as usize;
    let outlen = be32(&ent, layout::OUTLEN) as usize;
    let in_ptr = be64(&ent, layout::IN_PTR);
    let out_ptr = be64(&ent, layout::OUT_PTR);
    let checked = if ent[layout::TYPE] != layout::PCI_CMD_XPORT {
        Err(delivery::CMD_DESCR_ERR)
    } else if !(8..=MAX_MSG).contains(&inlen) {
        Err(delivery::IN_LENGTH_ERR)
    } else if !(8..=MAX_MSG).contains(&outlen) {
        Err(delivery::OUT_LENGTH_ERR)
    } else {
        walk(
            mem,
            in_ptr,
            blocks(inlen),
            token,
            delivery::IN_PTR_ALIGN_ERR,
            c,
        )
        .and_then(|()| {
            walk(
                mem,
                out_ptr,
                blocks(outlen),
                token,
                delivery::OUT_PTR_ALIGN_ERR,
                c,
            )
        })
    };
    if let Err(d) = checked {
        c.cmd_delivery_errors += 1;
        let st = [d << 1];
        c.pcie
            .dma_write(base.wrapping_add(layout::STATUS_OWN as u64), 1);
        if mem
            .dma_write(base.wrapping_add(layout::STATUS_OWN as u64), &st)
            .is_err()
        {
            c.dma_faults += 1;
        }
        return true;
    }
    c.commands += 1;
    let (inb, rest) = scratch.split_at_mut(IN_BUF);
    let Some(outb) = rest.get_mut(..OUT_BUF) else {
        return false;
    };
    let n = inlen.min(IN_BUF);
    inb[..layout::INLINE].copy_from_slice(&ent[layout::IN..layout::IN + layout::INLINE]);
    let mut inch = Chain::new(in_ptr);
    let mut fail = None;
    if n > layout::INLINE
        && !chain_read(
            &mut inch,
            mem,
            layout::INLINE,
            &mut inb[layout::INLINE..n],
            c,
        )
    {
        // The chain was readable a moment ago; report it like an unreadable pointer.
        fail = Some(delivery::IN_PTR_ALIGN_ERR);
    }
    let mut delivery_status = delivery::OK;
    if let Some(d) = fail {
        delivery_status = d;
        c.cmd_delivery_errors += 1;
        c.commands -= 1;
    } else {
        // The command sees exactly its input (fields beyond inlen read as 0) and writes at
        // most outlen bytes: nothing stale from an earlier command.
        let m = outlen.min(OUT_BUF);
        outb[..m].fill(0);
        let mut cx = Cx {
            t,
            caps,
            p,
            inp: &inb[..n],
            inlen,
            outlen,
            chain: inch,
            out: &mut outb[..m],
            mem,
        };
        let opcode = cx.g(ifc::IN_OPCODE);
        match cx.dispatch() {
            Err((st, sy)) => {
                cx.out.fill(0);
                set(cx.out, ifc::OUT_STATUS, u32::from(st));
                set(cx.out, ifc::OUT_SYNDROME, sy);
                if let Some(pt) = cx.t.ports.get_mut(p) {
                    pt.counters.cmd_errors += 1;
                }
            }
            Ok(()) => {
                let queue = [op::CREATE_EQ, op::CREATE_CQ, op::CREATE_SQ, op::CREATE_RQ]
                    .iter()
                    .any(|&o| u32::from(o) == opcode);
                if let (true, Some(pt)) = (queue, cx.t.ports.get_mut(p)) {
                    pt.counters.queues_created += 1;
                }
            }
        }
    }
    let Some(pt) = t.ports.get_mut(p) else {
        return false;
    };
    let c = &mut pt.counters;
    let mut ok = true;
    if delivery_status == delivery::OK {
        let m = outlen.min(OUT_BUF);
        if m > layout::INLINE {
            let mut och = Chain::new(out_ptr);
            ok &= chain_write(&mut och, mem, layout::INLINE, &outb[layout::INLINE..m], c);
        }
        let k = m.min(layout::INLINE);
        c.pcie
            .dma_write(base.wrapping_add(layout::OUT as u64), k as u64);
        ok &= mem
            .dma_write(base.wrapping_add(layout::OUT as u64), &outb[..k])
            .is_ok();
    }
    c.pcie
        .dma_write(base.wrapping_add(layout::STATUS_OWN as u64), 1);
    ok &= mem
        .dma_write(
            base.wrapping_add(layout::STATUS_OWN as u64),
            &[delivery_status << 1],
        )
        .is_ok();
    if !ok {
        c.dma_faults += 1;
    }
    true
}

impl Func {
    /// A write to the initialization segment at `off`; false for a register that does not
    /// take writes.
    /// `cmd_eqs`: the function's EQs that take command events.
    pub(in crate::sim::mlx5) fn iseg_write(
        &mut self,
        off: u32,
        value: u32,
        c: &mut PortCounters,
        cmd_eqs: usize,
    ) -> bool {
        match off {
            iseg::CMDQ_ADDR_H => self.cmdq_h = value,
            iseg::CMDQ_ADDR_L_SZ => {
                self.cmdq_l = value & !0xfff;
                self.cmdq_set = true;
            }
            iseg::CMD_DBELL if self.cmdq_set => {
                c.pcie.doorbell();
                c.doorbells += 1;
                self.pending |= value;
                // Entries rung while an EQ takes command events complete by event too.
                if cmd_eqs > 0 {
                    self.cmd_ev_entries |= value;
                } else {
                    self.cmd_ev_entries &= !value;
                }
            }
            _ => return false,
        }
        true
    }

    /// A read of the initialization segment at `off`; None for no readable register.
    /// `now`: the device's clock (nanoseconds), which the health counter follows.
    pub(in crate::sim::mlx5) fn iseg_read(&self, off: u32, now: u64) -> Option<u32> {
        Some(match off {
            iseg::FW_REV => FW_REV,
            iseg::CMDIF_REV_FW_SUB => (iseg::CMD_IF_REV << 16) | FW_SUB,
            iseg::CMDQ_ADDR_H => self.cmdq_h,
            // nic_interface 0 (full driver) in bits 9..8, log size 5, log stride 6.
            iseg::CMDQ_ADDR_L_SZ => self.cmdq_l | (5 << 4) | 6,
            // The firmware is ready from power-on: mlx5_core waits for `initializing` to
            // clear before it writes the command queue's address ("pre-initializing") and
            // again after; the model needs no time for either.
            iseg::INITIALIZING => 0,
            iseg::HEALTH_FW_VER => FW_REV,
            iseg::CMD_EXEC_TO | iseg::CMD_Q_INIT_TO => 0,
            // The internal timer counts the device's clock in nanoseconds
            // (`device_frequency_khz` 1 GHz).
            iseg::INTERNAL_TIMER_H => (now >> 32) as u32,
            iseg::INTERNAL_TIMER_L => now as u32,
            o if (iseg::HEALTH..iseg::HEALTH + 0x40).contains(&o) && o % 4 == 0 => 0,
            // The firmware's heartbeat: it advances with every engine run and every
            // millisecond of the device's clock, so a device that is alive but idle still
            // shows it (mlx5_core's health poll declares a device whose counter stops for
            // three polls dead).
            iseg::HEALTH_COUNTER => self.health.wrapping_add((now / 1_000_000) as u32),
            _ => return None,
        })
    }

    fn cmdq(&self) -> DmaAddr {
        (u64::from(self.cmdq_h) << 32) | u64::from(self.cmdq_l)
    }
}
