// SPDX-License-Identifier: GPL-2.0

//! The wire between two ports and its 802.3x flow control (global pause, IEEE 802.3
//! Annex 31B: PAUSE frames, per port and direction), shared by both device models
//! ([`crate::sim::mlx5`], [`crate::sim::mana`]; each model's "Flow control" section says
//! what its registers or requests set and when its pause quantum ends).
//!
//! Ports are wired back to back in pairs (port `p` with `p ^ 1`); a port in loopback is its
//! own receiver. Before a sender's SQ executes its next WQE, the receiver of its frames
//! ([`rx_port`]) with its TX pause on and short of posted receive buffers sends it a PAUSE
//! frame, at most one per pause quantum and sender; a sender with its RX pause on honours it
//! and holds the SQ until the quantum ends. A receiver that stays short stops sending PAUSE
//! frames after [`PAUSE_STORM`] in a row (stall prevention) until it has room again. What a
//! frame is, how a receiver counts its room and how a sender holds an SQ are the models'.

/// Posted receive WQEs each RQ in a port's RSS table (or the port itself in loopback) must
/// have for the port not to send PAUSE frames to the ports whose frames it receives: see
/// [`room_needed`]. On ConnectX the most packets one MPWQE carries, rounded up.
pub const PAUSE_THRESHOLD: u32 = 64;

/// PAUSE frames in a row (one per pause quantum and sender, while the port's receive side
/// stayed short of posted WQEs) after which the port stops sending them until it has room
/// again, as the device-stall prevention of NICs with pause frames does: its senders
/// transmit, and it drops what it has no WQE for (ConnectX: `rx_out_of_buffer`, its
/// prevention being `ethtool --set-tunable DEV pfc-prevention-tout`; MANA:
/// `hc_rx_discards_no_wqe`). Without it a receiver that stops posting (an AF_XDP socket
/// whose fill ring stays empty) would hold its sender, or in loopback its own port, forever.
/// Counted in the receiver's pause-storm counter (`pause_storms`, `tx_pause_storms`).
pub const PAUSE_STORM: u32 = 1024;

/// The posted WQEs a receive queue of `wqes` entries needs for its port to send no PAUSE
/// frame: `min(PAUSE_THRESHOLD, wqes / 2)`, at least 1.
pub fn room_needed(wqes: u32) -> u32 {
    PAUSE_THRESHOLD.min(wqes / 2).max(1)
}

/// One port's flow control: the two directions as set and the state of its PAUSE frames.
#[derive(Clone, Copy, Debug)]
pub struct Pause {
    /// Honour received PAUSE frames (RX pause).
    pub rx: bool,
    /// Send PAUSE frames when the receive side is short of posted WQEs (TX pause).
    pub tx: bool,
    /// A PAUSE frame reached this port in the current pause quantum.
    xoff: bool,
    /// PAUSE frames this port sent in a row without getting room (see [`PAUSE_STORM`]).
    streak: u32,
    /// This port sends no PAUSE frame until it has room again (see [`PAUSE_STORM`]).
    storm: bool,
}

impl Pause {
    /// Flow control with both directions `on`.
    pub const fn new(on: bool) -> Self {
        Self {
            rx: on,
            tx: on,
            xoff: false,
            streak: 0,
            storm: false,
        }
    }

    /// A new pause quantum begins: PAUSE frames received before it no longer hold the port.
    pub fn new_quantum(&mut self) {
        self.xoff = false;
    }
}

/// What the wire counts at a port, in the model's own counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireEvent {
    /// The port stopped sending PAUSE frames after [`PAUSE_STORM`] in a row.
    Storm,
    /// The port transmitted a PAUSE frame.
    Sent,
    /// The port received a PAUSE frame (whether or not it honours it).
    Received,
    /// A PAUSE frame the port honours held one of its SQs ([`hold`]).
    Held,
    /// A frame the port transmitted was dropped: a link is down ([`route`]).
    LinkDown,
    /// A frame of this many bytes the port transmitted came back to it (loopback, [`route`]).
    Looped(u64),
}

/// A port as the wire sees it. The models implement it with `wire_port!` (below).
pub trait WirePort {
    /// Frames this port transmits come back to its own receive side.
    fn loopback(&self) -> bool;
    /// The port's link is up.
    fn link_up(&self) -> bool;
    /// The port's flow control.
    fn pause(&self) -> &Pause;
    /// The port's flow control, to change.
    fn pause_mut(&mut self) -> &mut Pause;
    /// Counts a wire event.
    fn count(&mut self, e: WireEvent);
}

/// Implements [`WirePort`] for a model's port type `$port`, whose fields `link_up`,
/// `loopback` and `pause` ([`Pause`]) hold its wire state and whose `counters` count the
/// events: `$storm` ([`WireEvent::Storm`]), `tx_pause_frames`, `rx_pause_frames`,
/// `tx_pause` (held SQs), `tx_link_down_drops`, `loopback_packets`, `loopback_bytes`.
macro_rules! wire_port {
    ($port:ty, $storm:ident) => {
        impl $crate::sim::wire::WirePort for $port {
            fn loopback(&self) -> bool {
                self.loopback
            }

            fn link_up(&self) -> bool {
                self.link_up
            }

            fn pause(&self) -> &$crate::sim::wire::Pause {
                &self.pause
            }

            fn pause_mut(&mut self) -> &mut $crate::sim::wire::Pause {
                &mut self.pause
            }

            fn count(&mut self, e: $crate::sim::wire::WireEvent) {
                use $crate::sim::wire::WireEvent as E;
                let c = &mut self.counters;
                match e {
                    E::Storm => c.$storm += 1,
                    E::Sent => c.tx_pause_frames += 1,
                    E::Received => c.rx_pause_frames += 1,
                    E::Held => c.tx_pause += 1,
                    E::LinkDown => c.tx_link_down_drops += 1,
                    E::Looped(n) => {
                        c.loopback_packets += 1;
                        c.loopback_bytes += n;
                    }
                }
            }
        }
    };
}
pub(crate) use wire_port;

/// The port that receives what port `p` transmits: `p` itself in loopback (the frame turns
/// around before the wire, so no link state or peer matters), else its peer `p ^ 1` when
/// both links are up. None: the frame is dropped (a link is down, or `p` has no peer).
pub fn rx_port<P: WirePort>(ports: &[P], p: usize) -> Option<usize> {
    let pt = ports.get(p)?;
    if pt.loopback() {
        return Some(p);
    }
    let peer = p ^ 1;
    (pt.link_up() && ports.get(peer)?.link_up()).then_some(peer)
}

/// Where a frame of `len` bytes port `src` transmits goes ([`rx_port`]), counted at `src`:
/// [`WireEvent::LinkDown`] when it is dropped (None), [`WireEvent::Looped`] when it comes
/// back to `src`.
pub fn route<P: WirePort>(ports: &mut [P], src: usize, len: usize) -> Option<usize> {
    let dst = rx_port(ports, src);
    let sp = ports.get_mut(src)?;
    match dst {
        None => sp.count(WireEvent::LinkDown),
        Some(d) if d == src => sp.count(WireEvent::Looped(len as u64)),
        Some(_) => {}
    }
    dst
}

/// Flow control before port `p` transmits its next frame. The receiver of `p`'s frames
/// ([`rx_port`]; none while a link is down or `p` has no peer: the frame will be dropped and
/// counted anyway) with its TX pause on and without room (`room(ports, receiver)` false)
/// sends `p` a PAUSE frame, one per pause quantum and sender, unless its stall prevention
/// stopped them or the frame is `exempt` (asked only when the receiver has no room); `p`
/// receives it. Returns true if `p` honours it (its RX pause on), counted at `p`
/// ([`WireEvent::Held`]): the caller holds the SQ until the quantum ends.
pub fn hold<P: WirePort>(
    ports: &mut [P],
    p: usize,
    room: impl FnOnce(&mut [P], usize) -> bool,
    exempt: impl FnOnce() -> bool,
) -> bool {
    let Some(rx) = rx_port(ports, p) else {
        return false;
    };
    let (sends, honours, xoff) = match (ports.get(rx), ports.get(p)) {
        (Some(r), Some(s)) => (r.pause().tx, s.pause().rx, s.pause().xoff),
        _ => return false,
    };
    // Nothing to decide: the receiver sends no PAUSE, or this quantum's already reached a
    // sender that ignores it.
    if !sends || (xoff && !honours) {
        return false;
    }
    let room = room(ports, rx);
    let Some(r) = ports.get_mut(rx) else {
        return false;
    };
    if room {
        let rp = r.pause_mut();
        rp.streak = 0;
        rp.storm = false;
        return false;
    }
    if r.pause().storm || exempt() {
        return false;
    }
    if !xoff {
        if r.pause().streak >= PAUSE_STORM {
            // Stall prevention: no PAUSE frame until the receiver has room again.
            r.pause_mut().storm = true;
            r.count(WireEvent::Storm);
            return false;
        }
        r.pause_mut().streak += 1;
        r.count(WireEvent::Sent);
    }
    let Some(s) = ports.get_mut(p) else {
        return false;
    };
    if !xoff {
        s.pause_mut().xoff = true;
        s.count(WireEvent::Received);
    }
    if honours {
        s.count(WireEvent::Held);
    }
    honours
}
