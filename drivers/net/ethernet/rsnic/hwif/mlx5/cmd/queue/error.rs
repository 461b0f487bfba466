// SPDX-License-Identifier: GPL-2.0

//! Command errors: the delivery and status codes of a command entry and its output
//! ([`delivery`], [`status`]), [`CmdError`] with its kinds, and their names and errnos for
//! logs (upstream cmd.c `deliv_status_to_str`, `cmd_status_str`, `cmd_status_to_err`).
//! Re-exported by the parent module.

use core::fmt;

use super::CMD_IF_REV;

codes! {
    /// Delivery status values (cmd.c `MLX5_CMD_DELIVERY_STAT_*`).
    pub mod delivery: u8;
    /// cmd.c `deliv_status_to_str`.
    pub fn delivery_str, else "unknown status code";
    /// No error.
    OK = 0x0 => "no errors",
    /// Signature error.
    SIGNAT_ERR = 0x1 => "signature error",
    /// Token error.
    TOK_ERR = 0x2 => "token error",
    /// Bad block number.
    BAD_BLK_NUM_ERR = 0x3 => "bad block number",
    /// Output pointer not aligned.
    OUT_PTR_ALIGN_ERR = 0x4 => "output pointer not aligned to block size",
    /// Input pointer not aligned.
    IN_PTR_ALIGN_ERR = 0x5 => "input pointer not aligned to block size",
    /// Firmware internal error.
    FW_ERR = 0x6 => "firmware internal error",
    /// Input length error.
    IN_LENGTH_ERR = 0x7 => "command input length error",
    /// Output length error.
    OUT_LENGTH_ERR = 0x8 => "command output length error",
    /// Reserved fields not cleared.
    RES_FLD_NOT_CLR_ERR = 0x9 => "reserved fields not cleared",
    /// Bad command descriptor type.
    CMD_DESCR_ERR = 0x10 => "bad command descriptor type",
}

codes! {
    /// Command status values of the output header (device.h `MLX5_CMD_STAT_*`).
    pub mod status: u8;
    /// cmd.c `cmd_status_str`.
    pub fn status_str, else "unknown status";
    /// Success.
    OK = 0x0 => "OK",
    /// Internal error.
    INT_ERR = 0x1 => "internal error",
    /// Bad operation.
    BAD_OP_ERR = 0x2 => "bad operation",
    /// Bad parameter.
    BAD_PARAM_ERR = 0x3 => "bad parameter",
    /// Bad system state.
    BAD_SYS_STATE_ERR = 0x4 => "bad system state",
    /// Bad resource.
    BAD_RES_ERR = 0x5 => "bad resource",
    /// Resource busy.
    RES_BUSY = 0x6 => "resource busy",
    /// Firmware not ready.
    NOT_READY = 0x7 => "FW not ready",
    /// Limits exceeded.
    LIM_ERR = 0x8 => "limits exceeded",
    /// Bad resource state.
    BAD_RES_STATE_ERR = 0x9 => "bad resource state",
    /// Bad index.
    IX_ERR = 0xa => "bad index",
    /// No resources.
    NO_RES_ERR = 0xf => "no resources",
    /// Bad QP state.
    BAD_QP_STATE_ERR = 0x10 => "bad QP state",
    /// Bad packet.
    BAD_PKT_ERR = 0x30 => "bad packet (discarded)",
    /// Too many outstanding CQEs.
    BAD_SIZE_OUTS_CQES_ERR = 0x40 => "bad size too many outstanding CQEs",
    /// Bad input length.
    BAD_INP_LEN_ERR = 0x50 => "bad input length",
    /// Bad output length.
    BAD_OUTP_LEN_ERR = 0x51 => "bad output length",
}

/// What went wrong with a command (or with the command interface itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmdErrorKind {
    /// `cmdif_rev` is not [`CMD_IF_REV`].
    CmdifRev(u16),
    /// The device reports a queue geometry the driver cannot use (cmd.c: too many
    /// commands, or size and stride overflow the page, or entries smaller than 64 bytes).
    BadQueueGeometry {
        /// `log_cmdq_size` read from `cmdq_addr_l_sz`.
        log_sz: u8,
        /// `log_cmdq_stride` read from `cmdq_addr_l_sz`.
        log_stride: u8,
    },
    /// The queue page or the mailbox buffer is too small or badly aligned.
    BadBuffer,
    /// The queue is not enabled, or was abandoned after a timeout.
    Down,
    /// A command is already outstanding.
    Busy,
    /// `poll` without an outstanding command.
    NotPosted,
    /// Input or output shorter than a header, or longer than the mailboxes can carry.
    BadLength {
        /// Input length asked for.
        inlen: usize,
        /// Output length asked for.
        outlen: usize,
    },
    /// The caller's output buffer is shorter than the output length posted.
    OutputBufferTooSmall,
    /// The device reported a delivery error (`status_own >> 1`, `MLX5_CMD_DELIVERY_STAT_*`).
    Delivery(u8),
    /// The entry or an output mailbox came back with another token.
    TokenMismatch {
        /// Token the driver posted.
        expected: u8,
        /// Token found.
        found: u8,
    },
    /// An output mailbox block came back with a wrong block number.
    BadBlockNumber {
        /// Position in the chain.
        expected: u32,
        /// `block_num` found.
        found: u32,
    },
    /// The device changed the entry's `outlen`.
    BadOutLen {
        /// Length posted.
        posted: u32,
        /// Length found after completion.
        found: u32,
    },
    /// The command failed: status and syndrome of the output header.
    Status {
        /// `status` (output byte 0).
        status: u8,
        /// `syndrome` (output bytes 4..8).
        syndrome: u32,
    },
    /// The command's output is malformed (a value out of the range the command allows).
    BadOutput,
    /// The device lacks something the driver needs (an Ethernet port, Ethernet offloads).
    Unsupported,
    /// The device lacks a capability the Ethernet function needs (`mlx5_eth_supported`'s
    /// "Missing ... capability"), named.
    MissingCap(&'static str),
    /// A capability is below what the driver needs (`mlx5e_attach_netdev`'s
    /// `max_wqe_sz_sq` check).
    CapTooSmall {
        /// The capability's name.
        cap: &'static str,
        /// Its value.
        have: u32,
        /// The least the driver works with.
        need: u32,
    },
    /// The device did not complete the command (or leave `initializing`) within the
    /// caller's timeout.
    Timeout,
    /// The device is gone (surprise removal: its registers read all-ones): the command was
    /// not posted, or was abandoned.
    Gone,
    /// The firmware asks for more pages than the driver gives any function
    /// ([`MAX_FW_PAGES`](crate::hwif::mlx5::cmd::pages::MAX_FW_PAGES)); the driver refuses
    /// (-ENOMEM).
    TooManyPages {
        /// Pages asked for.
        asked: u32,
        /// The driver's cap.
        cap: u32,
    },
}

/// A failed command, with what a `dev_err` needs: opcode, op_mod, and what went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CmdError {
    /// Opcode of the command (0 for errors of the command interface itself).
    pub opcode: u16,
    /// `op_mod` of the command.
    pub op_mod: u16,
    /// What went wrong.
    pub kind: CmdErrorKind,
}

impl CmdError {
    /// An error of the command interface itself (no command involved).
    pub const fn iface(kind: CmdErrorKind) -> Self {
        Self {
            opcode: 0,
            op_mod: 0,
            kind,
        }
    }

    /// Status and syndrome when the device failed the command, as `mlx5_cmd_out_err` prints
    /// them.
    pub fn status(&self) -> Option<(u8, u32)> {
        match self.kind {
            CmdErrorKind::Status { status, syndrome } => Some((status, syndrome)),
            _ => None,
        }
    }
}

/// cmd.c `cmd_status_to_err`: the errno a failed status maps to (negative), 0 for OK.
pub fn status_to_errno(status: u8) -> i32 {
    const EIO: i32 = 5;
    const EAGAIN: i32 = 11;
    const ENOMEM: i32 = 12;
    const EBUSY: i32 = 16;
    const EINVAL: i32 = 22;
    match status {
        status::OK => 0,
        status::RES_BUSY => -EBUSY,
        status::NOT_READY | status::NO_RES_ERR => -EAGAIN,
        status::LIM_ERR => -ENOMEM,
        status::BAD_OP_ERR
        | status::BAD_PARAM_ERR
        | status::BAD_RES_ERR
        | status::BAD_RES_STATE_ERR
        | status::IX_ERR
        | status::BAD_QP_STATE_ERR
        | status::BAD_PKT_ERR
        | status::BAD_SIZE_OUTS_CQES_ERR => -EINVAL,
        _ => -EIO,
    }
}

impl fmt::Display for CmdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.opcode == 0 {
            f.write_str("command interface: ")?;
        } else {
            write!(
                f,
                "{}(0x{:x}) op_mod(0x{:x}) failed: ",
                crate::hwif::mlx5::cmd::opcode_name(self.opcode),
                self.opcode,
                self.op_mod
            )?;
        }
        match self.kind {
            CmdErrorKind::CmdifRev(r) => {
                write!(
                    f,
                    "driver cmdif rev({CMD_IF_REV}) differs from firmware's({r})"
                )
            }
            CmdErrorKind::BadQueueGeometry { log_sz, log_stride } => write!(
                f,
                "unusable command queue geometry (log_sz {log_sz}, log_stride {log_stride})"
            ),
            CmdErrorKind::BadBuffer => f.write_str("command queue memory too small or misaligned"),
            CmdErrorKind::Down => f.write_str("command interface is down"),
            CmdErrorKind::Busy => f.write_str("a command is outstanding"),
            CmdErrorKind::NotPosted => f.write_str("no command outstanding"),
            CmdErrorKind::BadLength { inlen, outlen } => {
                write!(f, "bad lengths (in {inlen}, out {outlen})")
            }
            CmdErrorKind::OutputBufferTooSmall => f.write_str("output buffer too small"),
            CmdErrorKind::Delivery(d) => {
                write!(f, "delivery status {}(0x{:x})", delivery_str(d), d)
            }
            CmdErrorKind::TokenMismatch { expected, found } => {
                write!(
                    f,
                    "token mismatch (posted 0x{expected:x}, found 0x{found:x})"
                )
            }
            CmdErrorKind::BadBlockNumber { expected, found } => write!(
                f,
                "output mailbox block {expected} came back as block {found}"
            ),
            CmdErrorKind::BadOutLen { posted, found } => {
                write!(f, "outlen changed by the device ({posted} -> {found})")
            }
            CmdErrorKind::Status { status, syndrome } => write!(
                f,
                "status {}(0x{:x}), syndrome (0x{:x}), err({})",
                status_str(status),
                status,
                syndrome,
                status_to_errno(status)
            ),
            CmdErrorKind::BadOutput => f.write_str("malformed output"),
            CmdErrorKind::Unsupported => f.write_str("device lacks a required capability"),
            CmdErrorKind::MissingCap(cap) => write!(f, "missing {cap} capability"),
            CmdErrorKind::CapTooSmall { cap, have, need } => {
                write!(f, "capability {cap} is {have}, needed {need}")
            }
            CmdErrorKind::Timeout => f.write_str("timed out"),
            CmdErrorKind::Gone => f.write_str("the device is gone"),
            CmdErrorKind::TooManyPages { asked, cap } => write!(
                f,
                "the firmware asks for {asked} pages, more than the driver's cap of {cap} \
                 (-ENOMEM)"
            ),
        }
    }
}
