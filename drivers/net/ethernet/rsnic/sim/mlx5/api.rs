// SPDX-License-Identifier: GPL-2.0

//! The device host's back door (see "Rust API" in the parent module): queues, RSS, link,
//! flow control, loopback, faults, counters and the moderation clock, set and read without
//! the command interface, for the test fixtures and the device hosts.

use super::{
    cmd, row, split_qn, CmdError, CqConfig, Device, Fault, Port, PortCounters, QueueSet,
    QueueState, RqConfig, SqConfig, SqCtx, API_UAR, CQN_BASE, EQN_BASE, RQN_BASE, SQN_BASE,
};
use core::ops::DerefMut;

impl<P, Q, B> Device<P, Q, B>
where
    P: DerefMut<Target = [Port]>,
    Q: DerefMut<Target = [QueueSet]>,
    B: DerefMut<Target = [u8]>,
{
    pub(super) fn loc(
        &self,
        qn: u32,
        base: u32,
        used: fn(&QueueSet) -> bool,
    ) -> Result<&QueueSet, CmdError> {
        let (ports, queues) = self.tables_ref();
        let (p, slot) = split_qn(qn, base).ok_or(CmdError::NoSuchQueue)?;
        match row(queues, p, slot) {
            Some(r) if used(r) && p < ports.len() => Ok(r),
            _ => Err(CmdError::NoSuchQueue),
        }
    }

    /// Creates a CQ and returns its number (Rust API: the device host's back door, used by
    /// test fixtures and, transitionally, by the driver). The CQ is armed through the port's
    /// [`API_UAR`] page and raises `cfg.vector` directly, without an EQ.
    pub fn create_cq(&mut self, cfg: &CqConfig) -> Result<u32, CmdError> {
        self.tables().create_cq(cfg, API_UAR as u16, 0)
    }

    /// Destroys a CQ that no SQ or RQ uses any more. An open compression session is discarded.
    pub fn destroy_cq(&mut self, cqn: u32) -> Result<(), CmdError> {
        self.tables().destroy_cq(cqn)
    }

    /// Creates an SQ (ready, counters 0, rung through the port's [`API_UAR`] page) and
    /// returns its number.
    pub fn create_sq(&mut self, cfg: &SqConfig) -> Result<u32, CmdError> {
        self.create_sq_inline(cfg, 0)
    }

    /// As [`Device::create_sq`], with `sqc.min_wqe_inline_mode` = `min_inline` (0..=3): the
    /// SQ then refuses WQEs that do not inline the Ethernet header (see
    /// [`Caps::min_inline`]).
    pub fn create_sq_inline(&mut self, cfg: &SqConfig, min_inline: u8) -> Result<u32, CmdError> {
        let extra = SqCtx {
            uar: API_UAR as u16,
            min_inline: min_inline.min(3),
            ..SqCtx::EMPTY
        };
        self.tables().create_sq(cfg, QueueState::Ready, extra)
    }

    /// Destroys an SQ. WQEs not yet executed are abandoned.
    pub fn destroy_sq(&mut self, sqn: u32) -> Result<(), CmdError> {
        self.tables().destroy_sq(sqn)
    }

    /// Resets an SQ to ready with its consumer counter at 0 (modify ERR → RST → RDY; the
    /// driver restarts its producer counter at 0 too). Pending doorbells are forgotten.
    pub fn reset_sq(&mut self, sqn: u32) -> Result<(), CmdError> {
        let mut t = self.tables();
        t.set_sq_state(sqn, QueueState::Reset)?;
        t.set_sq_state(sqn, QueueState::Ready)
    }

    /// State of an SQ.
    pub fn sq_state(&self, sqn: u32) -> Result<QueueState, CmdError> {
        self.loc(sqn, SQN_BASE, |r| r.sq.used).map(|r| r.sq.state)
    }

    /// The device's consumer counter of an SQ (index of the next WQE it expects).
    pub fn sq_consumer(&self, sqn: u32) -> Result<u16, CmdError> {
        self.loc(sqn, SQN_BASE, |r| r.sq.used).map(|r| r.sq.cc)
    }

    /// Creates a cyclic RQ (ready, counters 0) and returns its number.
    pub fn create_rq(&mut self, cfg: &RqConfig) -> Result<u32, CmdError> {
        self.tables().create_rq(cfg, QueueState::Ready, 0, false)
    }

    /// Destroys an RQ; it is removed from the port's RSS table. An RQ that an RQT names
    /// (made by command) is busy.
    pub fn destroy_rq(&mut self, rqn: u32) -> Result<(), CmdError> {
        if self.loc(rqn, RQN_BASE, |r| r.rq.used)?.rq.users != 0 {
            return Err(CmdError::Busy);
        }
        self.tables().destroy_rq(rqn)
    }

    /// Resets an RQ to ready with its counters at 0.
    pub fn reset_rq(&mut self, rqn: u32) -> Result<(), CmdError> {
        let mut t = self.tables();
        t.set_rq_state(rqn, QueueState::Reset)?;
        t.set_rq_state(rqn, QueueState::Ready)
    }

    /// State of an RQ.
    pub fn rq_state(&self, rqn: u32) -> Result<QueueState, CmdError> {
        self.loc(rqn, RQN_BASE, |r| r.rq.used).map(|r| r.rq.state)
    }

    /// The device's consumer counter of an RQ (WQEs it has used).
    pub fn rq_consumer(&self, rqn: u32) -> Result<u16, CmdError> {
        self.loc(rqn, RQN_BASE, |r| r.rq.used).map(|r| r.rq.cc)
    }

    /// The producer index of a CQ (CQ indices used so far, compression sessions included).
    pub fn cq_producer(&self, cqn: u32) -> Result<u32, CmdError> {
        self.loc(cqn, CQN_BASE, |r| r.cq.used).map(|r| r.cq.pi)
    }

    /// Whether a CQ entered the error state (overrun or CQE write fault).
    pub fn cq_in_error(&self, cqn: u32) -> Result<bool, CmdError> {
        self.loc(cqn, CQN_BASE, |r| r.cq.used).map(|r| r.cq.error)
    }

    /// Whether EQ `eqn` of `port` exists and is in error (overrun or EQE write fault).
    pub fn eq_in_error(&self, port: usize, eqn: u32) -> Result<bool, CmdError> {
        let slot = eqn.wrapping_sub(EQN_BASE) as usize;
        match row(&self.queues, port, slot) {
            Some(r) if r.eq.used && port < self.ports.len() => Ok(r.eq.error),
            _ => Err(CmdError::NoSuchQueue),
        }
    }

    /// Sets a port's RSS indirection table (1..=[`MAX_RSS`] RQs of that port, repetitions
    /// allowed; empty = drop everything). A packet with hash h (Toeplitz with
    /// [`crate::sim::pkt::RSS_KEY`] over its addresses and TCP/UDP ports) goes to
    /// `rqns[h % len]`. Device-host back door: the command path configures RSS with RQTs,
    /// TIRs and flow tables; whichever was written last, this or a command that changed
    /// the steering, steers.
    pub fn set_rss(&mut self, port: usize, rqns: &[u32]) -> Result<(), CmdError> {
        self.tables().set_rss(port, rqns)
    }

    /// Sets a port's administrative link state (what PAOS admin_status also sets; the
    /// device host's side of the wire). A port's operational state is up when its own and
    /// its peer's administrative states are up and their link modes resolve ([`cmd::link`])
    /// (in loopback: its own); changes are reported
    /// as PORT_CHANGE events. Frames a port loops back ignore it.
    pub fn set_link(&mut self, port: usize, up: bool) -> Result<(), CmdError> {
        self.tables().port_mut(port)?.link_up = up;
        Ok(())
    }

    /// Turns 802.3x flow control on or off in both directions of `port` (both on after
    /// creation): [`Device::set_pause_rx_tx`] with `rx` = `tx` = `on`. A port sends
    /// PAUSE frames while the receive queues of its RSS table are short of posted WQEs
    /// (TX pause) and waits while its receiver sends them (RX pause); see "Flow control" in
    /// the module documentation. Between two ports with flow control off, a packet that finds
    /// no posted WQE is dropped and counted in [`PortCounters::rx_out_of_buffer`].
    ///
    /// In loopback ([`Device::set_loopback`]) the receiver is the port itself: it pauses on
    /// its own RSS table's queues, whatever the link states. That cannot deadlock the port:
    /// its receive side never waits for its transmit side (RX CQEs, interrupts and the
    /// driver's refills go on while its SQs wait), and the next engine run retries them.
    pub fn set_pause(&mut self, port: usize, on: bool) -> Result<(), CmdError> {
        self.set_pause_rx_tx(port, on, on)
    }

    /// Sets `port`'s flow control per direction, as a PFCC write does: `rx` (`pprx`) honours
    /// the PAUSE frames the port receives, `tx` (`pptx`) sends them when its receive side is
    /// short of posted WQEs. [`CmdError::BadPort`] for a port that does not exist.
    pub fn set_pause_rx_tx(&mut self, port: usize, rx: bool, tx: bool) -> Result<(), CmdError> {
        let mut t = self.tables();
        let pt = t.port_mut(port)?;
        pt.pause.rx = rx;
        pt.pause.tx = tx;
        Ok(())
    }

    /// A port's flow control, `(rx, tx)` (PFCC `pprx`, `pptx`; `None` for a port that does
    /// not exist).
    pub fn pause_rx_tx(&self, port: usize) -> Option<(bool, bool)> {
        self.ports.get(port).map(|p| (p.pause.rx, p.pause.tx))
    }

    /// Turns internal loopback on or off for `port` (off after creation): with it on, every
    /// frame the port transmits is delivered to its own receive side (RSS, RQs, RX CQEs and
    /// counters as for a frame from the wire) instead of its peer, whatever the link states,
    /// and counted in [`PortCounters::loopback_packets`]. Off restores the wire. See the
    /// module documentation ("Ports and wiring") for the rules. [`CmdError::BadPort`] for a
    /// port that does not exist. PPLR `lb_en` sets the same switch.
    pub fn set_loopback(&mut self, port: usize, on: bool) -> Result<(), CmdError> {
        self.tables().port_mut(port)?.loopback = on;
        Ok(())
    }

    /// Whether `port` is in loopback (false for a port that does not exist).
    pub fn loopback(&self, port: usize) -> bool {
        self.ports.get(port).is_some_and(|p| p.loopback)
    }

    /// The VLAN list a port's driver wrote into its NIC vport context (recorded only; see
    /// [`cmd::VLAN_LIST`]): the list and how many of its entries are set (0 for a port that
    /// does not exist).
    pub fn vport_vlans(&self, port: usize) -> ([u16; cmd::VLAN_LIST], usize) {
        self.ports.get(port).map_or(([0; cmd::VLAN_LIST], 0), |p| {
            let f = &p.func.filter;
            (f.vlans, usize::from(f.vlans_len))
        })
    }

    /// A port's administrative link state (false for a port that does not exist).
    pub fn link_up(&self, port: usize) -> bool {
        self.ports.get(port).is_some_and(|p| p.link_up)
    }

    /// A port's operational state: its administrative state and its peer's are up and
    /// their link modes resolve ([`cmd::link`]) (in loopback: its own is up).
    pub fn oper_up(&self, port: usize) -> bool {
        cmd::oper_up(&self.ports, port)
    }

    /// Asks the device to fail every command of `opcode` on `port` with status INT_ERR and
    /// syndrome [`cmd::synd::INJECTED`] (None: stop). A device-host fault knob.
    pub fn fail_command(&mut self, port: usize, opcode: Option<u16>) -> Result<(), CmdError> {
        self.tables().port_mut(port)?.func.fail_opcode = opcode.map_or(0, u32::from);
        Ok(())
    }

    /// Resets function `port` as a function-level reset does (what a device host does for a
    /// PCI function's reset): every object of the function is freed as TEARDOWN_HCA frees
    /// them, and the command interface returns to its power-on state (HCA disabled, no
    /// command queue, `initializing` set until the driver writes the queue's address again,
    /// nothing allocated). The device host's settings (permanent MAC, link, flow control,
    /// loopback, injected command failure) and the port's counters stay; other functions are
    /// not touched.
    pub fn reset_function(&mut self, port: usize) -> Result<(), CmdError> {
        let mut t = self.tables();
        t.port_mut(port)?;
        cmd::teardown(&mut t, port);
        t.port_mut(port)?.func.power_on();
        Ok(())
    }

    /// Burns `mac` into `port` as its permanent address, the one QUERY_NIC_VPORT_CONTEXT
    /// reports (a device-host setting, as a NIC's factory MAC is; by default port `i` has
    /// 02:00:00:00:00:(i + 1), the same on every device). A multicast or all-zero address is
    /// refused.
    pub fn set_permanent_mac(&mut self, port: usize, mac: [u8; 6]) -> Result<(), CmdError> {
        if mac[0] & 1 != 0 || mac == [0; 6] {
            return Err(CmdError::BadParam);
        }
        self.tables().port_mut(port)?.func.set_permanent_mac(mac);
        Ok(())
    }

    /// Arms `fault` on port `port` (it replaces one of the same kind still waiting; a port
    /// already stopped stays stopped). Returns `false` if there is no such port.
    pub fn inject(&mut self, port: usize, fault: Fault) -> bool {
        let Some(p) = self.ports.get_mut(port) else {
            return false;
        };
        p.faults.arm(fault);
        true
    }

    /// Ends a [`Fault::TxStall`] or [`Fault::DevStop`] of port `port` by itself, as a
    /// device that stalled for a while does (the driver reset nothing): the work posted
    /// meanwhile executes at the next run. Returns `false` if there is no such port or
    /// `fault` is of another kind.
    pub fn end_fault(&mut self, port: usize, fault: Fault) -> bool {
        let Some(p) = self.ports.get_mut(port) else {
            return false;
        };
        match fault {
            Fault::TxStall => p.faults.tx_stall = false,
            Fault::DevStop => p.restart(),
            _ => return false,
        }
        true
    }

    /// Counters of one port.
    pub fn counters(&self, port: usize) -> Option<&PortCounters> {
        self.ports.get(port).map(|p| &p.counters)
    }

    /// Counters summed over all ports.
    pub fn totals(&self) -> PortCounters {
        let mut t = PortCounters::default();
        for p in self.ports.iter() {
            t.add(&p.counters);
        }
        t
    }

    /// Register accesses to unknown offsets or ports.
    pub fn bad_mmio(&self) -> u64 {
        self.bad_mmio
    }

    /// A CQ's moderation as the device holds it: (`cq_period` µs, `cq_max_count`, whether
    /// `cq_period_mode` is upon CQE).
    pub fn cq_moderation(&self, cqn: u32) -> Result<(u16, u16, bool), CmdError> {
        let m = self.loc(cqn, CQN_BASE, |r| r.cq.used)?.cq.moder;
        Ok((m.period, m.max_count, m.cqe_mode))
    }

    /// Sets the device's clock, in nanoseconds, for CQ moderation: what the timers of the
    /// CQs compare with on the next engine run. The device host passes a monotonic time
    /// before every run; a clock that goes back is ignored (it stays where it was). It
    /// starts at 0, and a host that never sets it has moderation timers that never run out.
    pub fn set_clock(&mut self, now_ns: u64) {
        self.now = self.now.max(now_ns);
    }

    /// The device's clock ([`Device::set_clock`]).
    pub fn clock(&self) -> u64 {
        self.now
    }

    /// The earliest time (nanoseconds, the clock of [`Device::set_clock`]) at which a CQ
    /// held back by moderation fires, if one is: the device host runs the engine again then
    /// (a real device's timer). Up to date after every engine run and command. A port whose
    /// data path is stopped ([`Fault::DevStop`]) has none: its CQs wait for the stop's end.
    pub fn moderation_deadline(&self) -> Option<u64> {
        let mut best: Option<u64> = None;
        for (p, port) in self.ports.iter().enumerate() {
            if port.stopped() {
                continue;
            }
            let mut wait = port.moder_wait;
            while wait != 0 {
                let slot = wait.trailing_zeros() as usize;
                wait &= wait - 1;
                if let Some(r) = row(&self.queues, p, slot) {
                    if r.cq.used && r.cq.moder.held {
                        let d = r.cq.moder.deadline();
                        best = Some(best.map_or(d, |b| b.min(d)));
                    }
                }
            }
        }
        best
    }
}
