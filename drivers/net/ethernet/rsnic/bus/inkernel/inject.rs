// SPDX-License-Identifier: GPL-2.0

//! Fault injection into a port of a device model, from debugfs
//! (`rsnic/rsnic-sim<N>/port<P>/inject`, write-only, netdevsim-style): one command per
//! write, for tests of the driver's recovery. A command the port's family does not model is
//! refused with `EOPNOTSUPP`.
//!
//! | command | ConnectX fault ([`sim::mlx5::Fault`]) | MANA fault ([`sim::mana::Fault`]) |
//! |---|---|---|
//! | `tx_err [SYND]` | the next WQE any SQ of the port executes fails: REQ_ERR CQE with syndrome SYND (default 0x02, LOCAL_QP_OP), the SQ enters ERR | the next WQE any SQ of the port executes completes with CQE type SYND (default 37, HDR_PROCESSING_ERROR; not 32, TX_OKAY), the packet is not sent, the SQ goes on |
//! | `rx_err [SYND]` | the next frame the port receives completes with a RESP_ERR CQE with syndrome SYND (default 0x04, LOCAL_PROT); the RQ enters ERR for 0x02, 0x04 and 0x05 (LOCAL_QP_OP, LOCAL_PROT, WR_FLUSH), any other syndrome completes the WQE and the RQ goes on | (no SYND) the next frame completes with RX_TRUNCATED |
//! | `rx_bad_wqe_counter` | the next RX CQE names a WQE the driver does not expect (a corrupt CQE) | - |
//! | `drop_irqs N` | the next N interrupts of the port's EQs are lost (each EQ disarms as if it had fired) | the same, for the port's channel EQs |
//! | `tx_stall [MS]` | the port's SQs execute nothing until one of them is reset (a hung transmit engine); with MS (1 to 60000), also until MS ms have passed (a stall the device recovers from), and the write returns then | the port's SQs execute nothing (doorbells accepted, no CQE) until an SQ of the port is destroyed (MANA_DESTROY_WQ_OBJ); with MS, also until MS ms have passed, as for ConnectX |
//! | `tx_bad_sqn` | the next TX CQE of the port names another SQ (a corrupt CQE) | the next TX CQE of the port names WQ id 0xfffffd, which no WQ has (a corrupt CQE) |
//! | `tx_bad_owner` | the next TX CQE of the port carries the owner bit of the previous pass, so the driver reads it as still the hardware's and stops there (a corrupt CQE; later CQEs wait behind it) | the next TX CQE of the port carries the owner count of its pass XOR 4 (four passes away: neither its pass's nor the next one's), which the driver reads as a CQ overflow (a corrupt CQE) |
//! | `rx_bad_rqn` | - | the next RX CQE of a frame the port receives names WQ id 0xfffffd (a corrupt CQE) |
//! | `rx_bad_byte_count` | the next RX CQE claims 1 MiB (more than any buffer: a corrupt CQE) | - |
//! | `dma_read_fault` | the next read of packet data by an SQ of the port faults: the WQE fails with LOCAL_PROT, the SQ enters ERR | the same fault: the WQE completes with HDR_PROCESSING_ERROR, the SQ goes on |
//! | `eqe_bad_cq` | - | the next completion EQE of the port names a CQ id no CQ has (a corrupt EQE) |
//! | `cmd_fail OPCODE` | every command of OPCODE on the port fails (status INT_ERR, syndrome INJECTED) until `cmd_fail 0` | (OPCODE: a request type the device executes, else `EINVAL`) every HWC request of that type fails (status 0xC00000E5, STATUS_INTERNAL_ERROR, a header-only response) until `cmd_fail 0`; device-wide (the HWC is the device's), whichever port's file set it, and it replaces the `sim_fail_req` module parameter's failure |
//! | `dev_stop [MS]` | the port's data path hangs: no WQE executed, frames arriving dropped (`dev_rx_stopped`), no CQE, EQE or interrupt, until an SQ or RQ of the port goes to RST (MODIFY_SQ/MODIFY_RQ) or is destroyed; commands keep working; with MS (1 to 60000), also until MS ms have passed, and the write returns then | the same, until a WQ object (SQ or RQ) of the port is destroyed (MANA_DESTROY_WQ_OBJ); the HWC keeps working; MS as for ConnectX |
//!
//! Numbers are decimal or `0x` hexadecimal. A command arms its fault (replacing one of the
//! same kind still waiting); the port's `dev_faults_injected` counter (debugfs `counters`)
//! counts the faults that took effect (`dev_stop` once, at the first WQE, frame or CQE it
//! holds back; `tx_stall` and `cmd_fail` are not counted).

use super::{Engine, ManaModel, Mlx5Model, Model};
use crate::kernel_ext::{debugfs::Store, sync::msleep};
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

/// A parsed command, before the port's family gives it a meaning.
enum Knob {
    TxErr(Option<u8>),
    RxErr(Option<u8>),
    RxBadWqeCounter,
    DropIrqs(u32),
    /// With a duration in ms: the stall ends by itself then.
    TxStall(Option<u32>),
    TxBadSqn,
    TxBadOwner,
    RxBadRqn,
    RxBadByteCount,
    EqeBadCq,
    DmaReadFault,
    /// Fail every command (ConnectX) or HWC request (MANA) of this code (0: none).
    CmdFail(u32),
    /// With a duration in ms: the stop ends by itself then.
    DevStop(Option<u32>),
}

/// Longest timed stall or stop, in ms.
const MAX_STALL_MS: u32 = 60_000;

/// Parses one command.
fn parse(input: &[u8]) -> Result<Knob> {
    let mut words = input
        .split(|b| b.is_ascii_whitespace())
        .filter(|w| !w.is_empty());
    let word = words.next().ok_or(EINVAL)?;
    let arg = words.next();
    if words.next().is_some() {
        return Err(EINVAL);
    }
    let synd = || arg.map(|a| byte(a).ok_or(EINVAL)).transpose();
    let count = || {
        arg.and_then(|a| core::str::from_utf8(a).ok())
            .and_then(|a| a.parse::<u32>().ok())
            .ok_or(EINVAL)
    };
    let ms = || match arg {
        None => Ok(None),
        Some(_) => match count()? {
            ms @ 1..=MAX_STALL_MS => Ok(Some(ms)),
            _ => Err(EINVAL),
        },
    };
    Ok(match word {
        b"tx_err" => Knob::TxErr(synd()?),
        b"rx_err" => Knob::RxErr(synd()?),
        b"rx_bad_wqe_counter" if arg.is_none() => Knob::RxBadWqeCounter,
        b"drop_irqs" => Knob::DropIrqs(count()?),
        b"tx_stall" => Knob::TxStall(ms()?),
        b"tx_bad_sqn" if arg.is_none() => Knob::TxBadSqn,
        b"tx_bad_owner" if arg.is_none() => Knob::TxBadOwner,
        b"rx_bad_rqn" if arg.is_none() => Knob::RxBadRqn,
        b"rx_bad_byte_count" if arg.is_none() => Knob::RxBadByteCount,
        b"eqe_bad_cq" if arg.is_none() => Knob::EqeBadCq,
        b"dma_read_fault" if arg.is_none() => Knob::DmaReadFault,
        b"dev_stop" => Knob::DevStop(ms()?),
        b"cmd_fail" => Knob::CmdFail(
            arg.and_then(|a| core::str::from_utf8(a).ok())
                .and_then(|a| match a.strip_prefix("0x") {
                    Some(h) => u32::from_str_radix(h, 16).ok(),
                    None => a.parse().ok(),
                })
                .ok_or(EINVAL)?,
        ),
        _ => return Err(EINVAL),
    })
}

/// Arms `cmd` on port `port` of a ConnectX model. `Ok(false)`: no such port.
fn mlx5(m: &mut Mlx5Model, port: usize, cmd: Knob) -> Result<bool> {
    use sim::mlx5::consts::{SYND_LOCAL_PROT, SYND_LOCAL_QP_OP};
    use sim::mlx5::Fault;
    let fault = match cmd {
        Knob::TxErr(s) => Fault::TxErrCqe(s.unwrap_or(SYND_LOCAL_QP_OP)),
        Knob::RxErr(s) => Fault::RxErrCqe(s.unwrap_or(SYND_LOCAL_PROT)),
        Knob::RxBadWqeCounter => Fault::RxBadWqeCounter,
        Knob::DropIrqs(n) => Fault::DropIrqs(n),
        Knob::TxStall(_) => Fault::TxStall,
        Knob::TxBadSqn => Fault::TxBadSqn,
        Knob::TxBadOwner => Fault::TxBadOwner,
        Knob::RxBadByteCount => Fault::RxBadByteCount,
        Knob::DmaReadFault => Fault::DmaReadFault,
        Knob::DevStop(_) => Fault::DevStop,
        Knob::CmdFail(op) => {
            // ConnectX opcodes are 16 bits.
            let op = u16::try_from(op).map_err(|_| EINVAL)?;
            return Ok(m.fail_command(port, (op != 0).then_some(op)).is_ok());
        }
        Knob::EqeBadCq | Knob::RxBadRqn => return Err(crate::kernel_ext::net::eopnotsupp()),
    };
    Ok(m.inject(port, fault))
}

/// Arms `cmd` on port `port` of a MANA model. `Ok(false)`: no such port.
fn mana(m: &mut ManaModel, port: usize, cmd: Knob) -> Result<bool> {
    use sim::mana::Fault;
    /// CQE_TX_HDR_PROCESSING_ERROR.
    const TX_ERR_DEFAULT: u8 = 37;
    let fault = match cmd {
        Knob::TxErr(t) => Fault::TxErrCqe(t.unwrap_or(TX_ERR_DEFAULT)),
        Knob::RxErr(None) => Fault::RxTruncated,
        Knob::RxErr(Some(_)) => return Err(EINVAL),
        Knob::DropIrqs(n) => Fault::DropIrqs(n),
        Knob::EqeBadCq => Fault::EqeBadCq,
        Knob::DmaReadFault => Fault::DmaReadFault,
        Knob::TxStall(_) => Fault::TxStall,
        Knob::TxBadSqn => Fault::TxBadWqId,
        Knob::TxBadOwner => Fault::TxBadOwner,
        Knob::RxBadRqn => Fault::RxBadWqId,
        Knob::DevStop(_) => Fault::DevStop,
        Knob::CmdFail(code) => {
            if m.counters(port).is_none() {
                return Ok(false);
            }
            // The HWC is the device's: the failure is device-wide. A code the device does
            // not execute is refused.
            return m
                .fail_request((code != 0).then_some(code))
                .map(|()| true)
                .map_err(|_| EINVAL);
        }
        Knob::RxBadWqeCounter | Knob::RxBadByteCount => {
            return Err(crate::kernel_ext::net::eopnotsupp())
        }
    };
    if m.counters(port).is_none() {
        return Ok(false);
    }
    // The model refuses what the port cannot take (a TX CQE type that is TX_OKAY or out of
    // range).
    if m.inject(port, fault) {
        Ok(true)
    } else {
        Err(EINVAL)
    }
}

/// Ends a timed `tx_stall` (`stall`) or `dev_stop` of `port` (`false`: none to end).
fn end_timed(m: &mut Model, port: usize, stall: bool) -> bool {
    use sim::{mana, mlx5};
    match m {
        Model::Mlx5(m) if stall => m.end_fault(port, mlx5::Fault::TxStall),
        Model::Mlx5(m) => m.end_fault(port, mlx5::Fault::DevStop),
        Model::Mana(m) if stall => m.end_fault(port, mana::Fault::TxStall),
        Model::Mana(m) => m.end_fault(port, mana::Fault::DevStop),
    }
}

impl Store for PortInject {
    fn store(&self, input: &[u8]) -> Result {
        let cmd = parse(input)?;
        let timed = match cmd {
            Knob::TxStall(Some(ms)) => Some((ms, true)),
            Knob::DevStop(Some(ms)) => Some((ms, false)),
            _ => None,
        };
        let armed = self.engine.with_model(|m| match m {
            Model::Mlx5(m) => mlx5(m, self.port, cmd),
            Model::Mana(m) => mana(m, self.port, cmd),
        })?;
        if !armed {
            return Err(ENODEV);
        }
        if let Some((ms, stall)) = timed {
            // The write returns when the fault has ended (run it in the background to act
            // meanwhile). If the driver ended it first (a reset), this ends nothing.
            msleep(ms);
            self.engine.with_model(|m| end_timed(m, self.port, stall));
            self.engine.kick();
        }
        Ok(())
    }
}
