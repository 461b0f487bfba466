// SPDX-License-Identifier: GPL-2.0

//! The faults a device host can inject into a port of the model ([`Fault`], for tests of
//! the driver's recovery: error CQEs, lost interrupts, stalls, a stopped device, corrupt
//! CQEs and EQEs, DMA read faults) and what is pending of them ([`Faults`]); injected with
//! [`super::Device::inject`], ended with [`super::Device::end_fault`]. The MANA model's are
//! in `sim/mana/faults.rs`; the data-path stop both share is [`crate::sim::fault`].

use crate::sim::fault::Stop;

/// A fault the device host injects into a port ([`Device::inject`]), for tests of the
/// driver's recovery: each applies once, to the next event of its kind on the port
/// ([`Fault::TxStall`] and [`Fault::DevStop`] last until the driver resets or destroys a
/// queue, or the host ends them: [`Device::end_fault`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The next WQE any SQ of the port executes fails: an error CQE (REQ_ERR) with this
    /// syndrome, and the SQ enters the error state.
    TxErrCqe(u8),
    /// The next frame the port receives completes with an error CQE (RESP_ERR) with this
    /// syndrome; the RQ enters the error state for LOCAL_QP_OP, LOCAL_PROT and WR_FLUSH (the
    /// syndromes after which mlx5e recovers the RQ); for any other (LOCAL_LENGTH, as for a
    /// frame too long, or a remote error) the WQE is consumed and the RQ goes on.
    RxErrCqe(u8),
    /// The next RX CQE of the port carries a wrong `wqe_counter` (a corrupt CQE: the RQ
    /// goes on as if nothing happened).
    RxBadWqeCounter,
    /// The next N interrupts of the port's EQs are lost: each EQ disarms as if it had
    /// fired, and its vector is not raised (the EQEs wait until the driver polls the EQ).
    DropIrqs(u32),
    /// The port's SQs execute nothing (their doorbells are latched) until one of them goes
    /// through RST or is destroyed, as a hung transmit engine.
    TxStall,
    /// The next TX CQE of the port names another SQ (a corrupt CQE).
    TxBadSqn,
    /// The next TX CQE the port writes (good or error) carries the owner bit of the
    /// previous pass (a corrupt CQE): the driver reads its slot as still the hardware's and
    /// stops there, the CQEs after it wait behind it. Otherwise the CQE is what it would
    /// have been; counted in [`PortCounters::faults_injected`] when written (one a CQ in
    /// error loses does not take it). Nothing of it stays in the model: the CQ's producer
    /// index moved on as for any CQE, so a CQ made again (destroy, create) starts clean,
    /// while an SQ reset leaves the CQ, and the corrupt CQE in it, as they are.
    TxBadOwner,
    /// The next RX CQE of the port claims more bytes than any buffer holds (a corrupt
    /// CQE).
    RxBadByteCount,
    /// The next read of packet data by an SQ of the port faults (as an unmapped address
    /// would): the WQE fails with LOCAL_PROT and the SQ enters the error state.
    DmaReadFault,
    /// The port's whole data path hangs: no WQE of any of its SQs is executed (doorbells are
    /// latched), frames arriving at the port are dropped and counted in
    /// [`PortCounters::rx_stopped`], no CQE is written, no CQ or EQ arm of the port is
    /// evaluated (it waits), no EQE (completion or PORT_CHANGE: a change is reported after
    /// the stop) and no interrupt, until an SQ or RQ of the port goes to RST (MODIFY_SQ /
    /// MODIFY_RQ, [`Device::reset_sq`], [`Device::reset_rq`]) or is destroyed. Commands keep
    /// working (the control path is alive). Counted in [`PortCounters::faults_injected`]
    /// once, the first time the port holds something back (a WQE or a frame).
    DevStop,
}

/// The faults waiting on a port.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Faults {
    pub(super) tx_err: Option<u8>,
    pub(super) rx_err: Option<u8>,
    pub(super) rx_bad_wc: bool,
    pub(super) drop_irqs: u32,
    pub(super) tx_stall: bool,
    pub(super) tx_bad_sqn: bool,
    pub(super) tx_bad_owner: bool,
    pub(super) rx_bad_len: bool,
    pub(super) dma_read: bool,
    /// The data path is stopped ([`Fault::DevStop`]).
    pub(super) stop: Stop,
}

impl Faults {
    /// Arms `fault` ([`super::Device::inject`]).
    pub(super) fn arm(&mut self, fault: Fault) {
        match fault {
            Fault::TxErrCqe(s) => self.tx_err = Some(s),
            Fault::RxErrCqe(s) => self.rx_err = Some(s),
            Fault::RxBadWqeCounter => self.rx_bad_wc = true,
            Fault::DropIrqs(n) => self.drop_irqs = n,
            Fault::TxStall => self.tx_stall = true,
            Fault::TxBadSqn => self.tx_bad_sqn = true,
            Fault::TxBadOwner => self.tx_bad_owner = true,
            Fault::RxBadByteCount => self.rx_bad_len = true,
            Fault::DmaReadFault => self.dma_read = true,
            Fault::DevStop => self.stop.start(),
        }
    }
}
