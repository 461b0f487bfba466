// SPDX-License-Identifier: GPL-2.0

//! Fault injection into a port of a device model, from debugfs
//! (`rsnic/rsnic-sim<N>/port<P>/inject`, write-only, netdevsim-style): one command per
//! write, for tests of the driver's recovery. ConnectX only; MANA refuses with
//! `EOPNOTSUPP`.
//!
//! | command | fault ([`sim::mlx5::Fault`]) |
//! |---|---|
//! | `tx_err [SYND]` | the next WQE any SQ of the port executes fails: REQ_ERR CQE with syndrome SYND (default 0x02, LOCAL_QP_OP), the SQ enters ERR |
//! | `rx_err [SYND]` | the next frame the port receives completes with a RESP_ERR CQE with syndrome SYND (default 0x04, LOCAL_PROT); the RQ enters ERR (not for 0x01, LOCAL_LENGTH) |
//! | `rx_bad_wqe_counter` | the next RX CQE names a WQE the driver does not expect (a corrupt CQE) |
//! | `drop_irqs N` | the next N interrupts of the port's EQs are lost (each EQ disarms as if it had fired) |
//! | `tx_stall` | the port's SQs execute nothing until one of them is reset (a hung transmit engine) |
//! | `tx_bad_sqn` | the next TX CQE of the port names another SQ (a corrupt CQE) |
//! | `rx_bad_byte_count` | the next RX CQE claims 1 MiB (more than any buffer: a corrupt CQE) |
//! | `cmd_fail OPCODE` | every command of OPCODE on the port fails (status INT_ERR, syndrome INJECTED) until `cmd_fail 0` |
//!
//! Numbers are decimal or `0x` hexadecimal. A command arms its fault (replacing one of the
//! same kind still waiting); the port's `dev_faults_injected` counter (debugfs `counters`)
//! counts the faults that took effect.

use super::{Engine, Model};
use crate::kernel_ext::debugfs::Store;
use crate::kernel_ext::sync::with_bh;
use crate::sim;
use kernel::{prelude::*, sync::Arc};

/// A port's `inject` file.
pub(crate) struct PortInject {
    pub(super) engine: Arc<Engine>,
    pub(super) port: usize,
}

/// A number in decimal or `0x` hexadecimal that fits a byte.
fn byte(s: &[u8]) -> Option<u8> {
    let s = core::str::from_utf8(s).ok()?;
    match s.strip_prefix("0x") {
        Some(h) => u8::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// What a command asks of the model.
enum Knob {
    /// A one-shot fault.
    Fault(sim::mlx5::Fault),
    /// Fail every command of this opcode (0: none).
    CmdFail(u16),
}

/// Parses one command.
fn parse(input: &[u8]) -> Result<Knob> {
    let mut words = input
        .split(|b| b.is_ascii_whitespace())
        .filter(|w| !w.is_empty());
    let cmd = words.next().ok_or(EINVAL)?;
    let arg = words.next();
    if words.next().is_some() {
        return Err(EINVAL);
    }
    let synd = |default| match arg {
        None => Ok(default),
        Some(a) => byte(a).ok_or(EINVAL),
    };
    let count = || {
        arg.and_then(|a| core::str::from_utf8(a).ok())
            .and_then(|a| a.parse::<u32>().ok())
            .ok_or(EINVAL)
    };
    use sim::mlx5::consts::{SYND_LOCAL_PROT, SYND_LOCAL_QP_OP};
    use sim::mlx5::Fault;
    let fault = match cmd {
        b"tx_err" => Fault::TxErrCqe(synd(SYND_LOCAL_QP_OP)?),
        b"rx_err" => Fault::RxErrCqe(synd(SYND_LOCAL_PROT)?),
        b"rx_bad_wqe_counter" if arg.is_none() => Fault::RxBadWqeCounter,
        b"drop_irqs" => Fault::DropIrqs(count()?),
        b"tx_stall" if arg.is_none() => Fault::TxStall,
        b"tx_bad_sqn" if arg.is_none() => Fault::TxBadSqn,
        b"rx_bad_byte_count" if arg.is_none() => Fault::RxBadByteCount,
        b"cmd_fail" => {
            let op = arg
                .and_then(|a| core::str::from_utf8(a).ok())
                .and_then(|a| match a.strip_prefix("0x") {
                    Some(h) => u16::from_str_radix(h, 16).ok(),
                    None => a.parse().ok(),
                })
                .ok_or(EINVAL)?;
            return Ok(Knob::CmdFail(op));
        }
        _ => return Err(EINVAL),
    };
    Ok(Knob::Fault(fault))
}

impl Store for PortInject {
    fn store(&self, input: &[u8]) -> Result {
        let knob = parse(input)?;
        let armed = with_bh(|| match &mut *self.engine.model.lock() {
            Model::Mlx5(m) => Ok(match knob {
                Knob::Fault(f) => m.inject(self.port, f),
                Knob::CmdFail(op) => m.fail_command(self.port, (op != 0).then_some(op)).is_ok(),
            }),
            Model::Mana(_) => Err(crate::kernel_ext::net::eopnotsupp()),
        })?;
        if armed {
            Ok(())
        } else {
            Err(ENODEV)
        }
    }
}
