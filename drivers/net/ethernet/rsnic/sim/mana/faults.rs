// SPDX-License-Identifier: GPL-2.0

//! The faults a device host can inject into a port of the MANA model ([`Fault`], for tests
//! of the driver's recovery: error CQEs, lost interrupts, stalls, a stopped device, corrupt
//! CQEs and EQEs, DMA read faults) and what is pending of them ([`Faults`]); injected with
//! [`super::Device::inject`], ended with [`super::Device::end_fault`]. The ConnectX model's
//! are in `sim/mlx5/faults.rs`; the data-path stop both share is [`crate::sim::fault`].

use crate::sim::fault::Stop;

/// A fault for [`Device::inject`](super::Device::inject), for tests of the driver's handling of device errors. Each
/// applies once, to the next event of its kind on the port, and counts in
/// [`PortCounters::faults_injected`](super::PortCounters::faults_injected) when it takes effect; [`Fault::TxStall`] and
/// [`Fault::DevStop`] last until the driver destroys a WQ object of the port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The next WQE any SQ of the port executes completes with a CQE of this type (1..=63
    /// but not TX_OKAY, 32: a TX error type 33..=41 or one the driver does not know) and
    /// `vendor_err` 0; the packet is not sent
    /// and the SQ goes on, as for a WQE the device refuses.
    TxErrCqe(u8),
    /// The next frame the port receives into an RQ completes with RX_TRUNCATED (MANA's RX
    /// error CQE): the WQE is consumed, nothing is delivered.
    RxTruncated,
    /// The next N interrupts of the port's channel EQs (completion events and EQ arms) are
    /// lost: the EQ disarms as if it had fired and its vector is not raised.
    DropIrqs(u32),
    /// The next completion EQE of the port names a CQ id that no CQ has (a corrupt EQE).
    EqeBadCq,
    /// The next read of packet data by an SQ of the port faults (as an unmapped address
    /// would): that WQE completes with HDR_PROCESSING_ERROR, the SQ goes on.
    DmaReadFault,
    /// The port's SQs execute nothing (their doorbells are accepted; no WQE executed, no
    /// CQE) until an SQ of the port is destroyed (MANA_DESTROY_WQ_OBJ, or
    /// [`Device::destroy_sq`](super::Device::destroy_sq)): a hung transmit engine. As ConnectX's, whose reset clears it;
    /// not counted in [`PortCounters::faults_injected`](super::PortCounters::faults_injected) (ConnectX's is not either). The
    /// other SQs' WQEs execute after the destruction.
    TxStall,
    /// The next TX CQE of the port (good or error) names WQ id [`BAD_WQ_ID`] (a corrupt CQE);
    /// otherwise it is what it would have been.
    TxBadWqId,
    /// The next TX CQE the port writes (good or error) carries owner bits that are neither
    /// its pass's nor the next pass's: its pass's XOR [`BAD_OWNER_XOR`], four passes away (a
    /// corrupt CQE). The driver (spec D.4, `mana_gd_read_cqe`) reads the previous pass's
    /// count as "not yet valid" and any other than its pass's as an overflow: this one is
    /// an overflow. Otherwise the CQE is what it would have been; counted in
    /// [`PortCounters::faults_injected`](super::PortCounters::faults_injected) when written (a stopped port holds it back).
    TxBadOwner,
    /// The next RX CQE of a frame the port receives (RX_OKAY or RX_TRUNCATED; not the
    /// fence's) names WQ id [`BAD_WQ_ID`] (a corrupt CQE).
    RxBadWqId,
    /// The port's whole data path hangs: no WQE of any of its SQs is executed (doorbells are
    /// accepted), frames arriving at the port are dropped and counted in
    /// [`PortCounters::rx_stopped`](super::PortCounters::rx_stopped), no CQE is written to its CQs (MANA_FENCE_RQ's neither),
    /// no completion EQE posted for them, no CQ or EQ arm of the port evaluated (it waits),
    /// no interrupt raised, until a WQ object of the port (an SQ or an RQ) is destroyed.
    /// The HWC goes on (requests, responses, their EQEs, and GENERATE_TEST_EQE's test
    /// event: the control path is alive). Counted in [`PortCounters::faults_injected`](super::PortCounters::faults_injected) once,
    /// the first time the port holds something back (a WQE, a frame, a CQE).
    DevStop,
}

/// The faults waiting on a port.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Faults {
    pub(super) tx_err: Option<u8>,
    pub(super) rx_trunc: bool,
    pub(super) drop_irqs: u32,
    pub(super) eqe_bad_cq: bool,
    pub(super) dma_read: bool,
    /// The SQs execute nothing ([`Fault::TxStall`]).
    pub(super) tx_stall: bool,
    pub(super) tx_bad_wq: bool,
    pub(super) tx_bad_owner: bool,
    pub(super) rx_bad_wq: bool,
    /// The data path is stopped ([`Fault::DevStop`]).
    pub(super) stop: Stop,
}

impl Faults {
    /// Arms `fault` ([`super::Device::inject`]); `false` for a TX error type that is TX_OKAY
    /// or out of range.
    pub(super) fn arm(&mut self, fault: Fault) -> bool {
        match fault {
            Fault::TxErrCqe(t) if t == 0 || t == 32 || t > 0x3f => return false,
            Fault::TxErrCqe(t) => self.tx_err = Some(t),
            Fault::RxTruncated => self.rx_trunc = true,
            Fault::DropIrqs(n) => self.drop_irqs = n,
            Fault::EqeBadCq => self.eqe_bad_cq = true,
            Fault::DmaReadFault => self.dma_read = true,
            Fault::TxStall => self.tx_stall = true,
            Fault::TxBadWqId => self.tx_bad_wq = true,
            Fault::TxBadOwner => self.tx_bad_owner = true,
            Fault::RxBadWqId => self.rx_bad_wq = true,
            Fault::DevStop => self.stop.start(),
        }
        true
    }
}

/// CQ id a corrupt completion EQE names ([`Fault::EqeBadCq`]): no CQ of the device has it.
pub const BAD_CQ_ID: u32 = 0x00ff_fffe;
/// WQ id a corrupt TX or RX CQE names ([`Fault::TxBadWqId`], [`Fault::RxBadWqId`]): no SQ or
/// RQ of the device (nor the HWC's) has it.
pub const BAD_WQ_ID: u32 = 0x00ff_fffd;
/// What a corrupt TX CQE's owner bits ([`Fault::TxBadOwner`]) are XORed with: the top bit
/// of the 3-bit owner count, so the count is four passes away from the right one (e.g. 5
/// instead of 1 on the first pass), which the driver reads as an overflow.
pub const BAD_OWNER_XOR: u32 = 4;
