// SPDX-License-Identifier: GPL-2.0

//! The device host's back door of the MANA model (see "Control path (Rust API)" in the
//! parent module): RSS, link, flow control, loopback, MAC, queue state, counters and faults,
//! set and read without the hardware channel.

use super::{CmdError, Device, Fault, Kind, Port, PortCounters, QueueSet, MAX_RSS};
use core::ops::DerefMut;

impl<P, Q, B> Device<P, Q, B>
where
    P: DerefMut<Target = [Port]>,
    Q: DerefMut<Target = [QueueSet]>,
    B: DerefMut<Target = [u8]>,
{
    /// Sets a port's RSS table (RQs of that port; empty drops everything).
    pub fn set_rss(&mut self, port: usize, rqs: &[u32]) -> Result<(), CmdError> {
        if rqs.len() > MAX_RSS {
            return Err(CmdError::BadParam);
        }
        let mut t = [0u8; MAX_RSS];
        for (i, &id) in rqs.iter().enumerate() {
            match self.loc(id, Kind::Rq)? {
                (p, s) if p == port => t[i] = s as u8,
                _ => return Err(CmdError::NoSuchQueue),
            }
        }
        let pt = self.ports.get_mut(port).ok_or(CmdError::BadPort)?;
        pt.rss = t;
        pt.rss_len = rqs.len();
        self.resume();
        Ok(())
    }

    /// Sets a port's link state (the wire's: frames a port loops back ignore it).
    pub fn set_link(&mut self, port: usize, up: bool) -> Result<(), CmdError> {
        self.ports.get_mut(port).ok_or(CmdError::BadPort)?.link_up = up;
        self.resume();
        Ok(())
    }

    /// Turns 802.3x flow control on or off in both directions of `port` (both off after
    /// creation): [`Device::set_pause_rx_tx`] with `rx` = `tx` = `on`. A port sends PAUSE
    /// frames while a usable RQ of its RSS table is short of posted WQEs (TX pause) and waits
    /// while its receiver sends them (RX pause): an SQ does not execute its next WQE, which
    /// stays posted, pauses (counted in [`PortCounters::tx_pause`]) until the next register
    /// write, and an engine run then retries it. See "Flow control" in the module
    /// documentation. Between two ports with flow control off, a packet that finds no posted
    /// RX WQE is dropped and counted in [`PortCounters::hc_rx_discards_no_wqe`].
    pub fn set_pause(&mut self, port: usize, on: bool) -> Result<(), CmdError> {
        self.set_pause_rx_tx(port, on, on)
    }

    /// Sets `port`'s flow control per direction, as RSNIC_SET_PAUSE does: `rx` honours the
    /// PAUSE frames the port receives, `tx` sends them when its receive side is short of
    /// posted WQEs. Lifts flow-control pauses (the next engine run decides again).
    /// [`CmdError::BadPort`] for a port that does not exist.
    pub fn set_pause_rx_tx(&mut self, port: usize, rx: bool, tx: bool) -> Result<(), CmdError> {
        let pt = self.ports.get_mut(port).ok_or(CmdError::BadPort)?;
        pt.pause.rx = rx;
        pt.pause.tx = tx;
        self.resume();
        Ok(())
    }

    /// Whether flow control is on in both directions of `port` (false for a port that does
    /// not exist).
    pub fn pause(&self, port: usize) -> bool {
        self.pause_rx_tx(port) == Some((true, true))
    }

    /// A port's flow control, `(rx, tx)` (`None` for a port that does not exist).
    pub fn pause_rx_tx(&self, port: usize) -> Option<(bool, bool)> {
        self.ports.get(port).map(|p| (p.pause.rx, p.pause.tx))
    }

    /// Turns internal loopback on or off for `port` (off after creation): with it on, every
    /// frame the port transmits is delivered to its own receive side (RSS, RQs, RX CQEs and
    /// counters as for a frame from the wire) instead of its peer, whatever the link states,
    /// and counted in [`PortCounters::loopback_packets`]. Off restores the wire. Lifts
    /// flow-control pauses (the receiver changed). See the module documentation ("Ports and
    /// wiring"). [`CmdError::BadPort`] for a port that does not exist.
    pub fn set_loopback(&mut self, port: usize, on: bool) -> Result<(), CmdError> {
        self.ports.get_mut(port).ok_or(CmdError::BadPort)?.loopback = on;
        self.resume();
        Ok(())
    }

    /// Sets the permanent MAC address MANA_QUERY_VPORT_CONFIG reports for `port`'s vport (what
    /// the device host burns in; [`vport_mac`] until then).
    pub fn set_permanent_mac(&mut self, port: usize, mac: [u8; 6]) -> Result<(), CmdError> {
        self.ports.get_mut(port).ok_or(CmdError::BadPort)?.mac = Some(mac);
        Ok(())
    }

    /// Whether `port` is in loopback (false for a port that does not exist).
    pub fn loopback(&self, port: usize) -> bool {
        self.ports.get(port).is_some_and(|p| p.loopback)
    }

    /// Lifts every flow-control pause: the next engine run retries the paused SQs. Called on
    /// every register write and on the commands that can end a pause.
    pub(super) fn resume(&mut self) {
        for pt in self.ports.iter_mut() {
            pt.sq_paused = 0;
            pt.pause.new_quantum();
        }
    }

    /// Whether an SQ or RQ is in the error state.
    pub fn wq_in_error(&self, id: u32) -> Result<bool, CmdError> {
        if let Ok((p, s)) = self.loc(id, Kind::Sq) {
            return Ok(self.row(p, s).is_some_and(|r| r.sq.error));
        }
        let (p, s) = self.loc(id, Kind::Rq)?;
        Ok(self.row(p, s).is_some_and(|r| r.rq.error))
    }

    /// The device's consumer byte offset of an SQ or RQ.
    pub fn wq_consumer(&self, id: u32) -> Result<u32, CmdError> {
        if let Ok((p, s)) = self.loc(id, Kind::Sq) {
            return Ok(self.row(p, s).map_or(0, |r| r.sq.cons));
        }
        let (p, s) = self.loc(id, Kind::Rq)?;
        Ok(self.row(p, s).map_or(0, |r| r.rq.cons))
    }

    /// CQEs written to a CQ so far.
    pub fn cq_producer(&self, id: u32) -> Result<u32, CmdError> {
        let (p, s) = self.loc(id, Kind::Cq)?;
        Ok(self.row(p, s).map_or(0, |r| r.cq.pi))
    }

    /// Counters of one port.
    pub fn counters(&self, port: usize) -> Option<&PortCounters> {
        self.ports.get(port).map(|p| &p.counters)
    }

    /// Arms `fault` on `port` (replacing one of the same kind still waiting; a port already
    /// stopped stays stopped). `false` for a port that does not exist or a TX error type that
    /// is TX_OKAY or out of range.
    pub fn inject(&mut self, port: usize, fault: Fault) -> bool {
        let Some(p) = self.ports.get_mut(port) else {
            return false;
        };
        p.faults.arm(fault)
    }

    /// Ends a [`Fault::TxStall`] or [`Fault::DevStop`] of port `port` by itself, as a
    /// device that stalled for a while does (the driver destroyed nothing): the work posted
    /// meanwhile executes at the next run. Returns `false` if there is no such port or
    /// `fault` is of another kind.
    pub fn end_fault(&mut self, port: usize, fault: Fault) -> bool {
        let Some(p) = self.ports.get_mut(port) else {
            return false;
        };
        match fault {
            Fault::TxStall => p.faults.tx_stall = false,
            Fault::DevStop => p.faults.stop.end(),
            _ => return false,
        }
        true
    }

    /// Register accesses to unknown offsets.
    pub fn bad_mmio(&self) -> u64 {
        self.bad_mmio
    }
}
