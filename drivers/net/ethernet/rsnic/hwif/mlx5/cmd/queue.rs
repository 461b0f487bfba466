// SPDX-License-Identifier: GPL-2.0

//! The ConnectX command queue as the driver drives it (mlx5/core/cmd.c, polling and events
//! mode).
//!
//! * [`CmdQueue::enable`] mirrors `mlx5_cmd_enable`: check `cmdif_rev` (5, `CMD_IF_REV`),
//!   read `log_cmdq_size`/`log_cmdq_stride` from `cmdq_addr_l_sz`, write the queue page's
//!   address to `cmdq_addr_h` and `cmdq_addr_l_sz`. [`CmdQueue::poll_ready`] is one step of
//!   `wait_fw_init` (the `initializing` bit 31); the caller sleeps between steps.
//! * [`CmdQueue::post`] mirrors `cmd_work_handler`: the 64-byte `mlx5_cmd_layout` entry
//!   (type `MLX5_PCI_CMD_XPORT`, lengths, the first 16 bytes of the input inline, pointers to
//!   the mailbox chains, token, `status_own = CMD_OWNER_HW`), the input copied into the
//!   `mlx5_cmd_prot_block` chain (`mlx5_copy_to_msg`), `wmb()`, then `cmd_dbell`.
//! * [`CmdQueue::poll`] is one step of `poll_timeout` plus `mlx5_cmd_comp_handler` and
//!   `mlx5_copy_from_msg`: the ownership bit, `rmb()`, the delivery status
//!   (`status_own >> 1`), the token, block numbers and tokens of the output mailboxes, then
//!   the status and syndrome of the output header (`cmd_status_to_err`).
//! * [`CmdQueue::use_events`] / [`CmdQueue::use_polling`] mirror `mlx5_cmd_use_events` /
//!   `mlx5_cmd_use_polling`: in events mode the caller waits for the command completion EQE
//!   (`MLX5_EVENT_TYPE_CMD` naming [`CMD_ENTRY_BIT`]) instead of polling, and
//!   [`CmdQueue::poll_event`] is the step after a wake (`mlx5_cmd_comp_handler`) or after a
//!   wait that saw no EQE (the timeout path of `wait_func`, which recovers a lost EQE). The
//!   ownership bit stays the truth: an EQE for an entry the device still owns is not
//!   trusted, a completion found without its EQE is taken; both are counted
//!   ([`CmdEventStats`]).
//!
//! Nothing here sleeps or allocates: one command is outstanding at a time (entry 0), the
//! mailboxes live in a caller-allocated coherent buffer of 1024-byte slots (the alignment
//! of cmd.c's `dma_pool`), and outputs are copied into caller buffers. The driver never
//! follows a pointer the device wrote: it reads its own blocks at its own offsets.
//!
//! The delivery and status codes and [`CmdError`] are in module `error`, re-exported here.

mod error;

pub use error::*;

use crate::hwif::hw::{Barriers, Coherent, Mmio};

/// `mlx5_init_seg.fw_rev` (RO): minor in bits 31:16, major in bits 15:0.
pub const ISEG_FW_REV: u32 = 0x000;
/// `mlx5_init_seg.cmdif_rev_fw_sub` (RO): cmdif revision in bits 31:16, fw subminor 15:0.
pub const ISEG_CMDIF_REV_FW_SUB: u32 = 0x004;
/// `mlx5_init_seg.cmdq_addr_h` (RW): bits 63:32 of the command queue address.
pub const ISEG_CMDQ_ADDR_H: u32 = 0x010;
/// `mlx5_init_seg.cmdq_addr_l_sz` (RW): bits 31:12 of the address; reads give
/// `nic_interface` (9:8), `log_cmdq_size` (7:4), `log_cmdq_stride` (3:0).
pub const ISEG_CMDQ_ADDR_L_SZ: u32 = 0x014;
/// `mlx5_init_seg.cmd_dbell` (WO): bit i rings command entry i.
pub const ISEG_CMD_DBELL: u32 = 0x018;
/// `mlx5_init_seg.initializing` (RO): bit 31 set while firmware initialises.
pub const ISEG_INITIALIZING: u32 = 0x1fc;
/// `mlx5_init_seg.health_counter` (RO): advances while firmware runs.
pub const ISEG_HEALTH_COUNTER: u32 = 0x1010;

/// The command interface revision this driver speaks (cmd.c `CMD_IF_REV`).
pub const CMD_IF_REV: u16 = 5;
/// Most command entries a queue may have (cmd.c `MLX5_MAX_COMMANDS`).
pub const MAX_COMMANDS: u32 = 32;
/// Size of the command queue page (`MLX5_ADAPTER_PAGE_SIZE`).
pub const CMDQ_PAGE_SIZE: usize = 4096;
/// Size of one `mlx5_cmd_layout` entry.
pub const CMD_ENTRY_SIZE: usize = 64;
/// Input/output bytes carried inline in the entry (`in[4]`, `out[4]`).
pub const CMD_INLINE_LEN: usize = 16;
/// Data bytes of one mailbox block (`MLX5_CMD_DATA_BLOCK_SIZE`).
pub const MBOX_DATA_LEN: usize = 512;
/// Size of `struct mlx5_cmd_prot_block`.
pub const MBOX_BLOCK_SIZE: usize = 576;
/// Distance between mailbox blocks in the mailbox buffer (cmd.c's `dma_pool` aligns blocks to
/// `roundup_pow_of_two(sizeof(mlx5_cmd_prot_block))`).
pub const MBOX_STRIDE: usize = 1024;
/// Smallest input or output a command has (`mbox_in`/`mbox_out` header: opcode or status and
/// syndrome).
pub const CMD_MIN_LEN: usize = 8;

/// `mlx5_cmd_layout.type`: PCI command transport (`MLX5_PCI_CMD_XPORT`).
pub const CMD_TYPE_PCI: u8 = 0x7;
/// `status_own` bit 0: the device owns the entry (`CMD_OWNER_HW`).
pub const CMD_OWNER_HW: u8 = 0x1;

/// Byte offsets in `struct mlx5_cmd_layout` (device.h).
pub mod entry {
    /// `type` (u8).
    pub const TYPE: usize = 0x00;
    /// `inlen` (BE32): full input length.
    pub const INLEN: usize = 0x04;
    /// `in_ptr` (BE64): first input mailbox block.
    pub const IN_PTR: usize = 0x08;
    /// `in[4]`: the first 16 input bytes.
    pub const IN: usize = 0x10;
    /// `out[4]`: the first 16 output bytes.
    pub const OUT: usize = 0x20;
    /// `out_ptr` (BE64): first output mailbox block.
    pub const OUT_PTR: usize = 0x30;
    /// `outlen` (BE32): full output length.
    pub const OUTLEN: usize = 0x38;
    /// `token` (u8).
    pub const TOKEN: usize = 0x3c;
    /// `sig` (u8).
    pub const SIG: usize = 0x3d;
    /// `status_own` (u8): delivery status in bits 7:1, ownership in bit 0.
    pub const STATUS_OWN: usize = 0x3f;
}

/// Byte offsets in `struct mlx5_cmd_prot_block` (device.h).
pub mod block {
    /// `data[512]`.
    pub const DATA: usize = 0;
    /// `next` (BE64): bus address of the next block, 0 at the end of the chain.
    pub const NEXT: usize = 560;
    /// `block_num` (BE32): 0, 1, 2, ... along the chain.
    pub const BLOCK_NUM: usize = 568;
    /// `token` (u8): the entry's token.
    pub const TOKEN: usize = 573;
    /// `ctrl_sig` (u8).
    pub const CTRL_SIG: usize = 574;
    /// `sig` (u8).
    pub const SIG: usize = 575;
}

/// The bit of the entry rsnic posts on (entry 0: one command at a time) in a command
/// completion EQE's `vector`.
pub const CMD_ENTRY_BIT: u32 = 1;

/// How the driver learns that a command completed (cmd.c's `cmd->mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmdMode {
    /// By polling the entry's ownership bit (from `mlx5_cmd_enable` until the command EQ
    /// exists, and again from before it is destroyed).
    Polling,
    /// By the command completion EQE on the command EQ, then the ownership bit.
    Events,
}

/// Counts of events-mode completions ([`CmdQueue::poll_event`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CmdEventStats {
    /// Commands that finished after their completion EQE came.
    pub by_eqe: u64,
    /// Commands found finished by the fallback poll with no EQE for them (a lost EQE,
    /// `wait_func_handle_exec_timeout`'s "recovered after timeout").
    pub lost_eqe: u64,
    /// Completion EQEs for the entry while its ownership bit was still the device's (a
    /// device bug: not trusted, the command is waited for further).
    pub early_eqe: u64,
}

/// What one [`CmdQueue::poll_event`] step saw, besides its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventNote {
    /// Nothing to report: the command finished after its EQE, or is still the device's
    /// without one.
    None,
    /// The command finished without its EQE (counted in [`CmdEventStats::lost_eqe`]).
    LostEqe,
    /// An EQE came for the entry the device still owns (counted in
    /// [`CmdEventStats::early_eqe`]).
    EarlyEqe,
}

/// Result of one [`CmdQueue::poll`] step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmdPoll {
    /// The device still owns the entry.
    Pending,
    /// The command completed successfully; its output (this many bytes) is in the caller's
    /// buffer.
    Done(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Built, `enable` not called yet.
    Off,
    /// Address written, `initializing` not seen clear yet.
    Initializing,
    /// Ready for commands.
    Up,
    /// Abandoned (timeout): the device may still write the entry; nothing more is posted.
    Dead,
}

#[derive(Debug, Clone, Copy)]
struct Pending {
    token: u8,
    opcode: u16,
    op_mod: u16,
    outlen: u32,
    out_first: usize,
    out_blocks: usize,
}

/// The command queue: one page of entries and a buffer of mailbox blocks, both in coherent
/// DMA memory.
pub struct CmdQueue<C: Coherent> {
    page: C,
    mbox: C,
    slots: usize,
    log_sz: u8,
    log_stride: u8,
    state: State,
    token: u8,
    pending: Option<Pending>,
    posted: u64,
    mode: CmdMode,
    ev: CmdEventStats,
}

/// Reads the firmware version from the initialization segment: (major, minor, subminor), as
/// main.c's `fw_rev_maj`, `fw_rev_min`, `fw_rev_sub`.
pub fn fw_rev<M: Mmio>(mmio: &M) -> (u16, u16, u16) {
    let r = mmio.read32(ISEG_FW_REV);
    let s = mmio.read32(ISEG_CMDIF_REV_FW_SUB);
    ((r & 0xffff) as u16, (r >> 16) as u16, (s & 0xffff) as u16)
}

/// Whether the firmware is still initializing (`initializing`, bit 31 of the
/// initialization segment's word at 0x1fc): main.c's `wait_fw_init` waits for it to clear
/// before the command queue's address is written ("pre-initializing") and after.
pub fn fw_initializing<M: Mmio>(mmio: &M) -> bool {
    mmio.read32(ISEG_INITIALIZING) >> 31 != 0
}

/// Reads the health counter (it advances while firmware runs; health.c polls it).
pub fn health_counter<M: Mmio>(mmio: &M) -> u32 {
    mmio.read32(ISEG_HEALTH_COUNTER)
}

/// Number of mailbox blocks that carry `len` bytes beyond the inline 16.
pub const fn mbox_blocks(len: usize) -> usize {
    if len <= CMD_INLINE_LEN {
        0
    } else {
        (len - CMD_INLINE_LEN).div_ceil(MBOX_DATA_LEN)
    }
}

impl<C: Coherent> CmdQueue<C> {
    /// A queue over `page` (at least 4 KiB, 4 KiB aligned: the entries) and `mbox` (mailbox
    /// blocks every [`MBOX_STRIDE`] bytes, 1024-byte aligned; its size bounds the longest
    /// input plus output the queue can carry).
    pub fn new(page: C, mbox: C) -> Result<Self, CmdError> {
        if page.size() < CMDQ_PAGE_SIZE
            || page.dma_addr() & 0xfff != 0
            || mbox.dma_addr() & (MBOX_STRIDE as u64 - 1) != 0
        {
            return Err(CmdError::iface(CmdErrorKind::BadBuffer));
        }
        let slots = mbox.size() / MBOX_STRIDE;
        Ok(Self {
            page,
            mbox,
            slots,
            log_sz: 0,
            log_stride: 0,
            state: State::Off,
            token: 0,
            pending: None,
            posted: 0,
            mode: CmdMode::Polling,
            ev: CmdEventStats::default(),
        })
    }

    /// `mlx5_cmd_enable`: checks the interface revision and the queue geometry, then writes
    /// the queue page's address. Follow with [`CmdQueue::poll_ready`] until it says ready.
    pub fn enable<M: Mmio, B: Barriers>(&mut self, mmio: &M, bar: &B) -> Result<(), CmdError> {
        let rev = (mmio.read32(ISEG_CMDIF_REV_FW_SUB) >> 16) as u16;
        if rev != CMD_IF_REV {
            return Err(CmdError::iface(CmdErrorKind::CmdifRev(rev)));
        }
        let l = mmio.read32(ISEG_CMDQ_ADDR_L_SZ) & 0xff;
        let log_sz = ((l >> 4) & 0xf) as u8;
        let log_stride = (l & 0xf) as u8;
        if (1u32 << log_sz) > MAX_COMMANDS
            || u32::from(log_sz) + u32::from(log_stride) > 12
            || (1usize << log_stride) < CMD_ENTRY_SIZE
        {
            return Err(CmdError::iface(CmdErrorKind::BadQueueGeometry {
                log_sz,
                log_stride,
            }));
        }
        self.log_sz = log_sz;
        self.log_stride = log_stride;
        // Every entry starts owned by software.
        self.page.zero(0, CMDQ_PAGE_SIZE);
        let addr = self.page.dma_addr();
        bar.wmb();
        mmio.write32(ISEG_CMDQ_ADDR_H, (addr >> 32) as u32);
        mmio.write32(ISEG_CMDQ_ADDR_L_SZ, addr as u32);
        bar.wmb();
        self.state = State::Initializing;
        Ok(())
    }

    /// One step of `wait_fw_init`: true once `initializing` (bit 31) reads clear. The caller
    /// sleeps between steps and gives up after its own timeout.
    pub fn poll_ready<M: Mmio>(&mut self, mmio: &M) -> Result<bool, CmdError> {
        match self.state {
            State::Up => Ok(true),
            State::Initializing => {
                if mmio.read32(ISEG_INITIALIZING) >> 31 == 0 {
                    self.state = State::Up;
                    Ok(true)
                } else {
                    Ok(false)
                }
            }
            State::Off | State::Dead => Err(CmdError::iface(CmdErrorKind::Down)),
        }
    }

    /// True when commands may be posted.
    pub fn is_up(&self) -> bool {
        self.state == State::Up
    }

    /// True while a command is outstanding.
    pub fn is_busy(&self) -> bool {
        self.pending.is_some()
    }

    /// `log_cmdq_size` and `log_cmdq_stride` read at enable time.
    pub fn geometry(&self) -> (u8, u8) {
        (self.log_sz, self.log_stride)
    }

    /// Commands posted so far.
    pub fn posted(&self) -> u64 {
        self.posted
    }

    /// How completions are learnt.
    pub fn mode(&self) -> CmdMode {
        self.mode
    }

    /// Counts of events-mode completions.
    pub fn event_stats(&self) -> &CmdEventStats {
        &self.ev
    }

    /// `mlx5_cmd_use_events`: from now on the caller waits for each command's completion
    /// EQE (its command EQ exists and its handler runs). Not while a command is outstanding
    /// ([`CmdErrorKind::Busy`]): mlx5 switches with every entry held.
    pub fn use_events(&mut self) -> Result<(), CmdError> {
        if self.pending.is_some() {
            return Err(CmdError::iface(CmdErrorKind::Busy));
        }
        self.mode = CmdMode::Events;
        Ok(())
    }

    /// `mlx5_cmd_use_polling`: back to polling the ownership bit (before the command EQ is
    /// destroyed). An outstanding command is finished by polling.
    pub fn use_polling(&mut self) {
        self.mode = CmdMode::Polling;
    }

    /// Whether the device still owns the outstanding command's entry (its ownership bit),
    /// without finishing the command: false when nothing is outstanding.
    pub fn device_owns(&self) -> bool {
        self.pending.is_some() && self.page.read_u8(entry::STATUS_OWN) & CMD_OWNER_HW != 0
    }

    /// One events-mode step for the outstanding command, as [`CmdQueue::poll`] (whose
    /// ownership check decides): `eqe` says whether a completion EQE naming the entry came
    /// since the command was posted or since the previous step. A command finished with
    /// `eqe` false had its EQE lost; `eqe` with the entry still the device's is an EQE that
    /// is not trusted. Both are counted and reported in the [`EventNote`].
    pub fn poll_event<B: Barriers>(
        &mut self,
        eqe: bool,
        bar: &B,
        out: &mut [u8],
    ) -> (Result<CmdPoll, CmdError>, EventNote) {
        let was_busy = self.pending.is_some();
        let r = self.poll(bar, out);
        let finished = was_busy && self.pending.is_none();
        let note = match (finished, eqe) {
            (true, true) => {
                self.ev.by_eqe = self.ev.by_eqe.wrapping_add(1);
                EventNote::None
            }
            (true, false) => {
                self.ev.lost_eqe = self.ev.lost_eqe.wrapping_add(1);
                EventNote::LostEqe
            }
            (false, true) if matches!(r, Ok(CmdPoll::Pending)) => {
                self.ev.early_eqe = self.ev.early_eqe.wrapping_add(1);
                EventNote::EarlyEqe
            }
            _ => EventNote::None,
        };
        (r, note)
    }

    /// Longest input plus output (beyond the inline bytes) this queue's mailboxes carry, in
    /// blocks.
    pub fn mailbox_blocks(&self) -> usize {
        self.slots
    }

    /// The queue page (tests and diagnostics read entries from it).
    pub fn page(&self) -> &C {
        &self.page
    }

    /// The mailbox buffer.
    pub fn mailboxes(&self) -> &C {
        &self.mbox
    }

    /// Gives up on the outstanding command (the caller's timeout expired): the device may
    /// still own the entry, so the queue takes no more commands (cmd.c then recovers the
    /// function; here the caller tears it down).
    pub fn abandon(&mut self) {
        self.pending = None;
        self.state = State::Dead;
    }

    /// Gives up on the outstanding command after the caller's timeout, as
    /// [`CmdQueue::abandon`], and returns the [`CmdErrorKind::Timeout`] error naming it (an
    /// interface error if nothing was outstanding: `initializing` never cleared).
    pub fn time_out(&mut self) -> CmdError {
        self.abandon_with(CmdErrorKind::Timeout)
    }

    /// Gives up on the outstanding command, if any, because the device is gone, as
    /// [`CmdQueue::abandon`] (the queue takes no more commands), and returns the
    /// [`CmdErrorKind::Gone`] error naming it.
    pub fn gone(&mut self) -> CmdError {
        self.abandon_with(CmdErrorKind::Gone)
    }

    /// [`CmdQueue::abandon`], returning the error of `kind` that names the outstanding
    /// command (an interface error if nothing was outstanding): what [`CmdQueue::time_out`]
    /// and [`CmdQueue::gone`] share.
    fn abandon_with(&mut self, kind: CmdErrorKind) -> CmdError {
        let e = match self.pending {
            Some(p) => CmdError {
                opcode: p.opcode,
                op_mod: p.op_mod,
                kind,
            },
            None => CmdError::iface(kind),
        };
        self.abandon();
        e
    }

    fn next_token(&mut self) -> u8 {
        // alloc_token: a non-zero u8 that changes with every command.
        self.token = self.token.wrapping_add(1);
        if self.token == 0 {
            self.token = 1;
        }
        self.token
    }

    fn slot_addr(&self, slot: usize) -> u64 {
        self.mbox.dma_addr() + (slot * MBOX_STRIDE) as u64
    }

    /// Prepares `n` blocks from `first`, chained, numbered 0.., with `token`, and the
    /// payload `data` (which may be shorter than the blocks, or empty for output chains).
    fn write_chain(&self, first: usize, n: usize, token: u8, data: &[u8]) {
        for k in 0..n {
            let slot = first + k;
            let o = slot * MBOX_STRIDE;
            self.mbox.zero(o, MBOX_BLOCK_SIZE);
            let lo = (k * MBOX_DATA_LEN).min(data.len());
            let hi = ((k + 1) * MBOX_DATA_LEN).min(data.len());
            if hi > lo {
                self.mbox.write(o + block::DATA, &data[lo..hi]);
            }
            let next = if k + 1 < n {
                self.slot_addr(slot + 1)
            } else {
                0
            };
            self.mbox.write(o + block::NEXT, &next.to_be_bytes());
            self.mbox.write_be32(o + block::BLOCK_NUM, k as u32);
            self.mbox.write(o + block::TOKEN, &[token]);
        }
    }

    /// Posts one command: `input` (its full length is `inlen`), an output of `outlen` bytes
    /// expected, and rings the command doorbell. The opcode and op_mod are taken from the
    /// input header for error reports.
    pub fn post<M: Mmio, B: Barriers>(
        &mut self,
        input: &[u8],
        outlen: usize,
        mmio: &M,
        bar: &B,
    ) -> Result<(), CmdError> {
        let opcode = input
            .get(0..2)
            .map_or(0, |b| u16::from_be_bytes([b[0], b[1]]));
        let op_mod = input
            .get(6..8)
            .map_or(0, |b| u16::from_be_bytes([b[0], b[1]]));
        let err = |kind| CmdError {
            opcode,
            op_mod,
            kind,
        };
        if self.state != State::Up {
            return Err(err(CmdErrorKind::Down));
        }
        if self.pending.is_some() {
            return Err(err(CmdErrorKind::Busy));
        }
        let inlen = input.len();
        let in_blocks = mbox_blocks(inlen);
        let out_blocks = mbox_blocks(outlen);
        if inlen < CMD_MIN_LEN
            || outlen < CMD_MIN_LEN
            || in_blocks + out_blocks > self.slots
            || inlen > u32::MAX as usize
            || outlen > u32::MAX as usize
        {
            return Err(err(CmdErrorKind::BadLength { inlen, outlen }));
        }
        let token = self.next_token();
        let extra_in = input.get(CMD_INLINE_LEN..).unwrap_or(&[]);
        self.write_chain(0, in_blocks, token, extra_in);
        self.write_chain(in_blocks, out_blocks, token, &[]);

        let mut e = [0u8; CMD_ENTRY_SIZE];
        e[entry::TYPE] = CMD_TYPE_PCI;
        e[entry::INLEN..entry::INLEN + 4].copy_from_slice(&(inlen as u32).to_be_bytes());
        let in_ptr = if in_blocks > 0 { self.slot_addr(0) } else { 0 };
        e[entry::IN_PTR..entry::IN_PTR + 8].copy_from_slice(&in_ptr.to_be_bytes());
        let n = inlen.min(CMD_INLINE_LEN);
        e[entry::IN..entry::IN + n].copy_from_slice(&input[..n]);
        let out_ptr = if out_blocks > 0 {
            self.slot_addr(in_blocks)
        } else {
            0
        };
        e[entry::OUT_PTR..entry::OUT_PTR + 8].copy_from_slice(&out_ptr.to_be_bytes());
        e[entry::OUTLEN..entry::OUTLEN + 4].copy_from_slice(&(outlen as u32).to_be_bytes());
        e[entry::TOKEN] = token;
        e[entry::STATUS_OWN] = CMD_OWNER_HW;
        // Entry 0: one command at a time.
        self.page.write(0, &e);

        self.pending = Some(Pending {
            token,
            opcode,
            op_mod,
            outlen: outlen as u32,
            out_first: in_blocks,
            out_blocks,
        });
        self.posted = self.posted.wrapping_add(1);
        // Ring the doorbell after the descriptor is valid.
        bar.wmb();
        mmio.write32(ISEG_CMD_DBELL, 1);
        Ok(())
    }

    /// One polling step for the outstanding command. `Pending` while the device owns the
    /// entry; otherwise the command is finished (success or error) and the queue takes the
    /// next one. On success the output is in `out[..outlen]`.
    pub fn poll<B: Barriers>(&mut self, bar: &B, out: &mut [u8]) -> Result<CmdPoll, CmdError> {
        let Some(p) = self.pending else {
            return Err(CmdError::iface(CmdErrorKind::NotPosted));
        };
        let err = |kind| CmdError {
            opcode: p.opcode,
            op_mod: p.op_mod,
            kind,
        };
        let outlen = p.outlen as usize;
        if out.len() < outlen {
            return Err(err(CmdErrorKind::OutputBufferTooSmall));
        }
        let own = self.page.read_u8(entry::STATUS_OWN);
        if own & CMD_OWNER_HW != 0 {
            return Ok(CmdPoll::Pending);
        }
        // Read the descriptor only after ownership came back to software.
        bar.dma_rmb();
        self.pending = None;
        let mut e = [0u8; CMD_ENTRY_SIZE];
        self.page.read(0, &mut e);
        let d = own >> 1;
        if d != delivery::OK {
            return Err(err(CmdErrorKind::Delivery(d)));
        }
        if e[entry::TOKEN] != p.token {
            return Err(err(CmdErrorKind::TokenMismatch {
                expected: p.token,
                found: e[entry::TOKEN],
            }));
        }
        let seen = u32::from_be_bytes([
            e[entry::OUTLEN],
            e[entry::OUTLEN + 1],
            e[entry::OUTLEN + 2],
            e[entry::OUTLEN + 3],
        ]);
        if seen != p.outlen {
            return Err(err(CmdErrorKind::BadOutLen {
                posted: p.outlen,
                found: seen,
            }));
        }
        let n = outlen.min(CMD_INLINE_LEN);
        out[..n].copy_from_slice(&e[entry::OUT..entry::OUT + n]);
        for k in 0..p.out_blocks {
            let o = (p.out_first + k) * MBOX_STRIDE;
            let num = self.mbox.read_be32(o + block::BLOCK_NUM);
            if num != k as u32 {
                return Err(err(CmdErrorKind::BadBlockNumber {
                    expected: k as u32,
                    found: num,
                }));
            }
            let t = self.mbox.read_u8(o + block::TOKEN);
            if t != p.token {
                return Err(err(CmdErrorKind::TokenMismatch {
                    expected: p.token,
                    found: t,
                }));
            }
            let lo = CMD_INLINE_LEN + k * MBOX_DATA_LEN;
            let hi = (lo + MBOX_DATA_LEN).min(outlen);
            self.mbox.read(o + block::DATA, &mut out[lo..hi]);
        }
        let st = out[0];
        let syndrome = u32::from_be_bytes([out[4], out[5], out[6], out[7]]);
        if st != status::OK {
            return Err(err(CmdErrorKind::Status {
                status: st,
                syndrome,
            }));
        }
        Ok(CmdPoll::Done(outlen))
    }
}
