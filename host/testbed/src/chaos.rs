//! Seeded chaos soak of both families' port pairs ([`crate::pair`] for mlx5,
//! [`crate::mana_pair`] for MANA): traffic with faults drawn at random from what the device
//! models can inject, the accounting invariant checked after every round.
//!
//! ```
//! use rsnic_testbed::chaos::{soak_mana, soak_mlx5, ChaosConfig};
//! let cfg = ChaosConfig { packets: 2_000, seed: 7 };
//! let r = soak_mlx5(&cfg).unwrap();
//! assert!(r.accepted >= 2_000);
//! assert_eq!(r.accepted, r.delivered + r.dropped());
//! soak_mana(&cfg).unwrap();
//! ```
//!
//! # A round
//!
//! A burst of up to [`MAX_BURST`] packets is offered (the stack's way: `xmit_more` on all but
//! the last, nothing more once the driver stops the queue), the device and the driver then
//! run in a random interleaving (device runs with a WQE budget, TX and RX polls with random
//! budgets; MANA's polls are NAPI rounds scheduled by interrupts), and the round ends
//! quiet: everything runs until nothing moves, every queue that stopped on a fault is
//! recovered, and the invariant is checked. With no fault waiting, a round arms one with
//! probability 1/[`FAULT_ODDS`]; the next is armed only after it took effect and the queue
//! was back in service.
//!
//! # The invariant (checked after every round)
//!
//! * Every packet carries a sequence number and a payload derived from it. A packet handed
//!   to the driver (accepted by `xmit`) is delivered at most once with its payload intact:
//!   delivery is in sequence order (one SQ feeds one RQ), so a sequence number at or below
//!   the last one delivered is a duplicate or a reordering, and fails the soak.
//! * `accepted == delivered + dropped`, where `dropped` is the sum of the specific drop
//!   counters of the report ([`ChaosReport::drops`]), each counting one packet once: device
//!   and driver counters of the family, and the packets a recovery released whose WQEs the
//!   device never executed (mlx5: [`crate::pair::TxRecovery::abandoned`]; MANA:
//!   [`crate::mana_pair::Reopened::tx_abandoned`], and [`crate::mana_pair::Reopened::tx_failed`]
//!   for those it executed with an error CQE the driver never processed). A packet a
//!   recovery dropped whose WQE the device did execute went on the wire: it is accounted
//!   where the receiver put it (delivered, or one of the RX drop counters). The family's
//!   own balances are checked with it (device TX vs wire vs RX, CQEs, driver vs device per
//!   queue).
//! * No buffer freed twice or lost: [`crate::glue::TxBook`] panics on a TX packet handed
//!   back twice or out of order, and at every check nothing is in flight and every
//!   accepted packet came back exactly once; DMA tracking ([`crate::glue::Env`] with
//!   `track_dma`) panics on a double unmap and every mapping is undone at every check; BQL
//!   balances; every RX buffer handed out is back in the pool or posted in the RQ.
//! * After every fault the queue is back in service within [`SERVICE_POLL_BOUND`] polls:
//!   once the fault took effect and the round's recoveries ran, one packet is sent and must
//!   be delivered within that many polls (a poll: device run, TX poll, RX poll; for MANA,
//!   interrupts handled and NAPI run).
//!
//! # Faults
//!
//! mlx5 ([`rsnic_core::sim::mlx5::Fault`]): `TxErrCqe`, `RxErrCqe` (syndromes LOCAL_QP_OP,
//! LOCAL_PROT, WR_FLUSH, which stop the RQ, and LOCAL_LENGTH and 0x10, which do not),
//! `RxBadWqeCounter`,
//! `TxStall`, `TxBadSqn`, `RxBadByteCount`, `DmaReadFault`, `DevStop` (on the TX port). A
//! stopped SQ or RQ is recovered as the driver does ([`crate::pair::Pair::recover_tx`],
//! [`crate::pair::Pair::recover_rx`]); `TxStall` and `DevStop` by the transmit watchdog,
//! modelled at the end of every round: packets in flight on a quiet pair without an SQ error
//! is a transmit timeout, and the SQ is reset (its RST restarts the port). Frames a stopped
//! port drops are the device's `rx_stopped`. `DevStop` is armed on the TX port only: that is
//! what the driver can find (the pair's RX port has no SQ, so no watchdog would notice it
//! stopped; the frames the RX port's stop would drop are counted all the same). `DropIrqs`
//! is left out: the mlx5 pair's CQs raise vectors directly, without an EQ, and the model
//! loses only EQ interrupts; the pair polls instead.
//!
//! MANA ([`rsnic_core::sim::mana::Fault`]): `TxErrCqe` (a TX error type 33..=41, or one the
//! driver does not know), `RxTruncated`, `DropIrqs(1..=3)`, `EqeBadCq`, `DmaReadFault`,
//! `TxBadWqId` and `RxBadWqId` (a CQE naming a WQ no WQ has: the inject knob's `tx_bad_sqn`
//! and `rx_bad_rqn`), `TxStall` and `DevStop` (on the TX port, for the reason given for
//! mlx5). MANA has no queue reset: an SQ or RQ that stopped on a CQE breaking the protocol
//! (`error()` some) is recovered by reopening the channels ([`ManaPair::reopen`]), and so is
//! a transmit timeout, the watchdog having found no lost interrupt (`TxStall`, `DevStop`:
//! destroying the WQ objects ends both). The
//! MANA pair runs interrupt-driven here: both EQs armed, an interrupt processes its EQ and
//! schedules NAPI for any completion event, NAPI polls until a poll does less than its
//! budget and re-arms the CQ. A lost interrupt leaves the EQ disarmed; the transmit
//! watchdog's `irq_recover` (the channel's EQs, both here, as one channel's EQ serves its
//! SQ and RQ in the driver) finds the events waiting, re-arms and schedules NAPI; the soak
//! checks it never recovers more interrupts than the device lost. A stopped queue's NAPI
//! consumes its CQEs unread (`cqe_discarded`), so the pair goes quiet; the recovery work
//! (the reopen) runs once it has, with the reopens counted by cause.

use std::fmt;

use rsnic_core::hwif::mlx5::cqe::{
    SYND_LOCAL_LENGTH, SYND_LOCAL_PROT, SYND_LOCAL_QP_OP, SYND_WR_FLUSH,
};
use rsnic_core::sim::mana::Fault as ManaFault;
use rsnic_core::sim::mlx5::Fault as Mlx5Fault;

use crate::glue::{Bar0, Env, TxFrame, RX_PORT, TX_PORT};
use crate::mana_pair::{self, ManaConfig, ManaPair};
use crate::pair::{Pair, PairConfig};

/// Polls within which a queue must deliver a packet again after a fault (see the module
/// documentation). The models need 1 for mlx5 and at most 2 for MANA; 8 leaves room.
pub const SERVICE_POLL_BOUND: u32 = 8;
/// Largest burst offered in one round.
pub const MAX_BURST: u32 = 320;
/// A round with no fault waiting arms one with probability 1/`FAULT_ODDS`.
pub const FAULT_ODDS: u64 = 8;
/// Rounds a fault may wait to take effect before the soak fails (every round carries
/// traffic, so each fault takes effect in the round it was armed or the next).
const FAULT_PATIENCE: u64 = 64;
/// Quiesce passes (everything run until nothing moves, then recoveries) before a round
/// that cannot go quiet fails the soak.
const QUIESCE_PASSES: u32 = 16;

/// Packets per family when `RSNIC_CHAOS_PACKETS` is not set.
pub const DEFAULT_PACKETS: u64 = 10_000_000;
/// Seed when `RSNIC_CHAOS_SEED` is not set.
pub const DEFAULT_SEED: u64 = 0x5eed_c4a0_5000_0001;

/// What to soak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChaosConfig {
    /// Packets to hand to the driver (at least; the last round may go over), per family.
    pub packets: u64,
    /// PRNG seed: the same seed gives the same run.
    pub seed: u64,
}

impl ChaosConfig {
    /// From the environment: `RSNIC_CHAOS_PACKETS` (per family; `_` separators allowed,
    /// `1e8` style too) and `RSNIC_CHAOS_SEED` (decimal or `0x` hex), else
    /// `default_packets` and [`DEFAULT_SEED`]. Panics on a value it cannot parse.
    pub fn from_env(default_packets: u64) -> Self {
        let packets = std::env::var("RSNIC_CHAOS_PACKETS")
            .ok()
            .map(|v| parse_count(&v).unwrap_or_else(|| panic!("RSNIC_CHAOS_PACKETS={v}")))
            .unwrap_or(default_packets);
        let seed = std::env::var("RSNIC_CHAOS_SEED")
            .ok()
            .map(|v| parse_seed(&v).unwrap_or_else(|| panic!("RSNIC_CHAOS_SEED={v}")))
            .unwrap_or(DEFAULT_SEED);
        Self { packets, seed }
    }
}

fn parse_count(v: &str) -> Option<u64> {
    let v = v.trim().replace('_', "");
    if let Some((m, e)) = v.split_once(['e', 'E']) {
        let (m, e): (u64, u32) = (m.parse().ok()?, e.parse().ok()?);
        return m.checked_mul(10u64.checked_pow(e)?);
    }
    v.parse().ok()
}

fn parse_seed(v: &str) -> Option<u64> {
    let v = v.trim().replace('_', "");
    match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => v.parse().ok(),
    }
}

/// xorshift64* (Vigna): small, fast, and enough for drawing faults and interleavings.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed` (any value; 0 is mapped to a fixed non-zero state).
    pub fn new(seed: u64) -> Self {
        Self(mix64(seed) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `lo..=hi` (`lo <= hi`).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }

    /// True with probability 1/`n`.
    pub fn one_in(&mut self, n: u64) -> bool {
        self.next_u64() % n == 0
    }
}

/// A round's burst size.
fn burst(rng: &mut Rng) -> u64 {
    if rng.one_in(4) {
        rng.range(64, u64::from(MAX_BURST))
    } else {
        rng.range(1, 64)
    }
}

/// splitmix64's finalizer.
fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Offset of the sequence number in a soak frame (after the Ethernet header).
const SEQ_OFF: usize = 14;

/// The frame carrying sequence number `seq`: an Ethernet header (ethertype 0x88b5, local
/// experimental), the sequence number, and a payload derived from it; 60..=256 bytes.
pub fn seq_frame(seq: u64) -> Vec<u8> {
    let h = mix64(seq);
    let len = 60 + (h % 197) as usize;
    let mut f = Vec::with_capacity(len);
    f.extend_from_slice(&[0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x88, 0xb5]);
    f.extend_from_slice(&seq.to_be_bytes());
    let mut x = h;
    while f.len() < len {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        f.push((x >> 56) as u8);
    }
    f
}

/// Every packet handed to the driver and what became of it.
#[derive(Debug, Default)]
struct Ledger {
    /// Packets accepted (the next sequence number).
    accepted: u64,
    /// Packets delivered.
    delivered: u64,
    /// Last sequence number delivered.
    last: Option<u64>,
}

impl Ledger {
    fn deliver(&mut self, bytes: &[u8]) -> Result<u64, String> {
        let seq = bytes
            .get(SEQ_OFF..SEQ_OFF + 8)
            .map(|b| u64::from_be_bytes(b.try_into().expect("8 bytes")))
            .ok_or_else(|| format!("received a runt of {} bytes", bytes.len()))?;
        if seq >= self.accepted {
            return Err(format!(
                "received sequence number {seq}, never accepted ({} were)",
                self.accepted
            ));
        }
        if self.last.is_some_and(|l| seq <= l) {
            return Err(format!(
                "received sequence number {seq} after {}: duplicate or reordered",
                self.last.unwrap_or(0)
            ));
        }
        if bytes != seq_frame(seq).as_slice() {
            return Err(format!("packet {seq}: payload corrupted"));
        }
        self.last = Some(seq);
        self.delivered += 1;
        Ok(seq)
    }
}

/// What a soak did: per-fault counts, the packets' fates, the recoveries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChaosReport {
    /// "mlx5" or "mana".
    pub family: &'static str,
    /// The seed.
    pub seed: u64,
    /// Rounds run.
    pub rounds: u64,
    /// Packets handed to the driver (accepted by xmit).
    pub accepted: u64,
    /// Packets delivered (each exactly once, intact).
    pub delivered: u64,
    /// Packets dropped, by counter; the counters sum to `accepted - delivered`.
    pub drops: Vec<(&'static str, u64)>,
    /// Faults armed, by kind.
    pub faults: Vec<(&'static str, u64)>,
    /// Queue recoveries and other repairs, by kind.
    pub recoveries: Vec<(&'static str, u64)>,
    /// Most polls a queue needed to deliver again after a fault.
    pub max_service_polls: u32,
    /// Packets the driver handed back at xmit (rejected) or the stack kept (queue stopped).
    pub not_accepted: u64,
}

impl ChaosReport {
    /// Sum of [`ChaosReport::drops`].
    pub fn dropped(&self) -> u64 {
        self.drops.iter().map(|d| d.1).sum()
    }

    /// Faults armed, all kinds.
    pub fn faults_total(&self) -> u64 {
        self.faults.iter().map(|f| f.1).sum()
    }
}

impl fmt::Display for ChaosReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "chaos soak {}: seed {:#x}, {} rounds, {} packets accepted, {} delivered, {} dropped ({} not accepted)",
            self.family,
            self.seed,
            self.rounds,
            self.accepted,
            self.delivered,
            self.dropped(),
            self.not_accepted
        )?;
        let list = |f: &mut fmt::Formatter<'_>, what: &str, v: &[(&str, u64)]| {
            write!(f, "  {what}:")?;
            for (k, n) in v {
                write!(f, " {k}={n}")?;
            }
            writeln!(f)
        };
        list(f, "faults", &self.faults)?;
        list(f, "drops", &self.drops)?;
        list(f, "recoveries", &self.recoveries)?;
        write!(
            f,
            "  back in service within {} poll(s) at most (bound {SERVICE_POLL_BOUND})",
            self.max_service_polls
        )
    }
}

/// Collects mismatches of a check.
struct Check(Vec<String>);

impl Check {
    fn eq(&mut self, what: &str, a: u64, b: u64) {
        if a != b {
            self.0.push(format!("{what}: {a} != {b}"));
        }
    }
    /// Buffers: every DMA mapping undone, BQL balanced, every RX buffer of `env` handed out
    /// back in the pool, delivered (`delivered`), or posted in the RQ (`rx_posted`).
    fn buffers<B: Bar0>(&mut self, env: &Env<B>, delivered: u64, rx_posted: u64) {
        let e = env.counts();
        self.eq("DMA maps vs unmaps", e.maps, e.unmaps);
        self.eq("live DMA mappings", env.live_mappings() as u64, 0);
        self.eq("BQL packets", e.bql_sent_pkts, e.bql_done_pkts);
        self.eq("BQL bytes", e.bql_sent_bytes, e.bql_done_bytes);
        self.eq(
            "RX buffers handed out vs back + posted",
            e.rx_allocs,
            e.rx_recycled + delivered + rx_posted,
        );
    }

    fn finish(self, family: &str, seed: u64, round: u64) -> Result<(), String> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "{family} soak, seed {seed:#x}, round {round}: {}",
                self.0.join("; ")
            ))
        }
    }
}

/// A fault waiting to take effect.
#[derive(Debug, Clone, Copy)]
struct Armed {
    kind: usize,
    /// `faults_injected` (both ports) at which it has taken effect; `None`: the model does
    /// not count it (TxStall), it has taken effect when the watchdog resets the SQ.
    until: Option<u64>,
    since: u64,
}

/// What both families' soaks keep: the generator, the ledger, where the run is, the fault
/// waiting to take effect.
struct Core {
    family: &'static str,
    rng: Rng,
    led: Ledger,
    seed: u64,
    round: u64,
    armed: Option<Armed>,
    /// A fault took effect this round: probe the queues after it.
    fired: bool,
    max_polls: u32,
    not_accepted: u64,
    /// Every fault drawn is of this kind (index in the family's fault list).
    only: Option<usize>,
}

impl Core {
    fn new(family: &'static str, seed: u64, only: Option<usize>) -> Self {
        Self {
            only,
            family,
            rng: Rng::new(seed),
            led: Ledger::default(),
            seed,
            round: 0,
            armed: None,
            fired: false,
            max_polls: 0,
            not_accepted: 0,
        }
    }

    fn fail(&self, what: &str) -> String {
        format!(
            "{} soak, seed {:#x}, round {}: {what}",
            self.family, self.seed, self.round
        )
    }

    /// Whether a fault is still armed (no new one then); an error if it has waited more
    /// than [`FAULT_PATIENCE`] rounds. `names`: the family's fault names.
    fn still_armed(&self, names: &[&str]) -> Result<bool, String> {
        match self.armed {
            Some(a) if self.round - a.since > FAULT_PATIENCE => Err(self.fail(&format!(
                "fault {} armed in round {} never took effect",
                names[a.kind], a.since
            ))),
            a => Ok(a.is_some()),
        }
    }

    /// The kind of fault to arm this round, of the family's `names`, if any: none while one
    /// is still armed ([`Core::still_armed`]), else one with probability 1/[`FAULT_ODDS`].
    fn next_fault(&mut self, names: &[&str]) -> Result<Option<usize>, String> {
        if self.still_armed(names)? || !self.rng.one_in(FAULT_ODDS) {
            return Ok(None);
        }
        Ok(Some(match self.only {
            Some(k) => k,
            None => self.rng.range(0, names.len() as u64 - 1) as usize,
        }))
    }

    /// Enters the received frames in the ledger; returns their sequence numbers.
    fn deliver<C>(&mut self, frames: Vec<crate::glue::RxFrame<C>>) -> Result<Vec<u64>, String> {
        let mut seqs = Vec::with_capacity(frames.len());
        for f in frames {
            seqs.push(self.led.deliver(&f.bytes).map_err(|e| self.fail(&e))?);
        }
        Ok(seqs)
    }

    /// The report, with what only the family knows.
    fn report(
        &self,
        drops: Vec<(&'static str, u64)>,
        faults: Vec<(&'static str, u64)>,
        recoveries: Vec<(&'static str, u64)>,
    ) -> ChaosReport {
        ChaosReport {
            family: self.family,
            seed: self.seed,
            rounds: self.round,
            accepted: self.led.accepted,
            delivered: self.led.delivered,
            drops,
            faults,
            recoveries,
            max_service_polls: self.max_polls,
            not_accepted: self.not_accepted,
        }
    }
}

/// A family's soak: what the shared parts ([`Soak::send`], [`Soak::probe`]) need of it.
trait Soak {
    fn core(&mut self) -> &mut Core;
    fn tx_stopped(&self) -> bool;
    /// Sends one packet (`more`: xmit_more); whether the driver accepted it.
    fn send_one(&mut self, f: &TxFrame, more: bool) -> bool;
    /// The queue stopped in the middle of a burst: the stack keeps the rest.
    fn burst_cut(&mut self) {}
    /// One service poll (device, TX completions, RX); the sequence numbers delivered.
    fn service_poll(&mut self) -> Result<Vec<u64>, String>;

    /// Hands `n` numbered packets to the driver as one burst.
    fn send(&mut self, n: u64) {
        for i in 0..n {
            if self.tx_stopped() {
                self.burst_cut();
                self.core().not_accepted += n - i;
                return;
            }
            let f = TxFrame::linear(seq_frame(self.core().led.accepted));
            if self.send_one(&f, i + 1 < n) {
                self.core().led.accepted += 1;
            } else {
                self.core().not_accepted += 1;
            }
        }
    }

    /// One packet must get through within [`SERVICE_POLL_BOUND`] polls.
    fn probe(&mut self) -> Result<(), String> {
        let seq = self.core().led.accepted;
        self.send(1);
        if self.core().led.accepted != seq + 1 {
            return Err(self.core().fail("the queue refused a packet after a fault"));
        }
        for polls in 1..=SERVICE_POLL_BOUND {
            if self.service_poll()?.contains(&seq) {
                let c = self.core();
                c.max_polls = c.max_polls.max(polls);
                return Ok(());
            }
        }
        Err(self.core().fail(&format!(
            "packet {seq} not delivered within {SERVICE_POLL_BOUND} polls after a fault"
        )))
    }
}

// ---------------------------------------------------------------------------------------
// mlx5

/// The mlx5 soak's fault kinds, in the report's order (names of
/// [`rsnic_core::sim::mlx5::Fault`]).
pub const MLX5_FAULTS: [&str; 8] = [
    "TxErrCqe",
    "RxErrCqe",
    "RxBadWqeCounter",
    "TxStall",
    "TxBadSqn",
    "RxBadByteCount",
    "DmaReadFault",
    "DevStop",
];
/// mlx5 faults the transmit watchdog recovers (nothing else reports them).
const MLX5_TX_STALL: usize = 3;
const MLX5_DEV_STOP: usize = 7;
/// RX error syndromes drawn: the three that stop the RQ, LOCAL_LENGTH, and a remote error
/// (0x10) that, like LOCAL_LENGTH, completes the WQE and leaves the RQ going.
const MLX5_SYNDROMES: [u8; 5] = [
    SYND_LOCAL_LENGTH,
    SYND_LOCAL_QP_OP,
    SYND_LOCAL_PROT,
    SYND_WR_FLUSH,
    0x10,
];

/// The [`Soak`] methods that both soaks answer alike, from their `c` ([`Core`]) and `p` (the
/// pair, whose own methods of the same names serve).
macro_rules! same_in_both_soaks {
    () => {
        fn core(&mut self) -> &mut Core {
            &mut self.c
        }
        fn tx_stopped(&self) -> bool {
            self.p.tx_stopped()
        }
        fn send_one(&mut self, f: &TxFrame, more: bool) -> bool {
            self.p.send_one(f, more).is_ok()
        }
    };
}

struct Mlx5Soak {
    p: Pair,
    c: Core,
    faults: [u64; MLX5_FAULTS.len()],
    timeouts: u64,
}

impl Soak for Mlx5Soak {
    same_in_both_soaks!();
    fn service_poll(&mut self) -> Result<Vec<u64>, String> {
        self.p.run_device();
        self.p.poll_tx();
        let got = self.p.poll_rx(64);
        self.c.deliver(got)
    }
}

impl Mlx5Soak {
    fn injected(&mut self) -> u64 {
        self.p.dev_tx().faults_injected + self.p.dev_rx().faults_injected
    }

    fn maybe_arm(&mut self) -> Result<(), String> {
        let Some(kind) = self.c.next_fault(&MLX5_FAULTS)? else {
            return Ok(());
        };
        let synd = MLX5_SYNDROMES[self.c.rng.range(0, MLX5_SYNDROMES.len() as u64 - 1) as usize];
        let (port, fault) = match kind {
            0 => (TX_PORT, Mlx5Fault::TxErrCqe(synd)),
            1 => (RX_PORT, Mlx5Fault::RxErrCqe(synd)),
            2 => (RX_PORT, Mlx5Fault::RxBadWqeCounter),
            3 => (TX_PORT, Mlx5Fault::TxStall),
            4 => (TX_PORT, Mlx5Fault::TxBadSqn),
            5 => (RX_PORT, Mlx5Fault::RxBadByteCount),
            6 => (TX_PORT, Mlx5Fault::DmaReadFault),
            _ => (TX_PORT, Mlx5Fault::DevStop),
        };
        let base = self.injected();
        assert!(self.p.tb.device().inject(port, fault), "the pair's ports");
        self.faults[kind] += 1;
        self.c.armed = Some(Armed {
            kind,
            // A stall is not counted; a stop is, when it first holds a WQE back.
            until: (kind != MLX5_TX_STALL).then_some(base + 1),
            since: self.c.round,
        });
        Ok(())
    }

    /// Runs everything until nothing moves, recovering stopped queues (and a stuck SQ: the
    /// transmit watchdog).
    fn quiesce(&mut self) -> Result<(), String> {
        for _ in 0..QUIESCE_PASSES {
            let got = self.p.settle(64);
            self.c.deliver(got)?;
            if self.p.sq.error().is_some() {
                self.p.recover_tx();
                self.c.fired = true;
                continue;
            }
            if self.p.rq.error().is_some() {
                self.p.recover_rx();
                self.c.fired = true;
                continue;
            }
            if self.p.tx_in_flight() > 0 {
                // Transmit timeout: the SQ made no progress on a quiet pair. A stall took
                // effect now; a stop took effect (counted) when it held a WQE back.
                self.timeouts += 1;
                match self.c.armed {
                    Some(a) if a.kind == MLX5_TX_STALL => self.c.armed = None,
                    Some(a) if a.kind == MLX5_DEV_STOP => {}
                    _ => {
                        return Err(self
                            .c
                            .fail("transmit timeout without a stall or a stop armed"))
                    }
                }
                self.p.recover_tx();
                self.c.fired = true;
                continue;
            }
            return Ok(());
        }
        Err(self.c.fail("the pair does not go quiet"))
    }

    fn check(&mut self) -> Result<(), String> {
        let (d, r, t, x) = (
            self.p.drv_tx(),
            self.p.drv_rx(),
            self.p.dev_tx(),
            self.p.dev_rx(),
        );
        let rc = self.p.recovery_counts();
        let led = &self.c.led;
        let mut c = Check(Vec::new());
        // TX: every accepted packet came back exactly once (TxBook checks each release).
        c.eq("TX in flight", self.p.tx_in_flight() as u64, 0);
        c.eq(
            "TX handed back vs accepted",
            self.p.tx_completed(),
            led.accepted,
        );
        c.eq("driver TX packets vs accepted", d.packets, led.accepted);
        c.eq("one WQE per packet", d.wqes, d.packets);
        c.eq("NOPs", d.nop + t.nop_wqes, 0);
        // Device TX: each accepted packet went on the wire, failed, or was abandoned.
        c.eq(
            "accepted vs device TX + failed + abandoned",
            led.accepted,
            t.tx_packets + t.tx_err_cqes + rc.tx_recover_abandoned,
        );
        c.eq("device TX error CQEs vs driver", t.tx_err_cqes, d.cqe_err);
        c.eq(
            "device WQE errors vs error CQEs",
            t.wqe_errors,
            t.tx_err_cqes,
        );
        c.eq(
            "device TX CQEs vs driver CQEs",
            t.tx_cqes + t.tx_err_cqes,
            d.cqes,
        );
        c.eq("link drops", t.tx_link_down_drops, 0);
        // The wire.
        c.eq(
            "device TX vs RX + RX drops",
            t.tx_packets,
            x.rx_packets + x.rx_out_of_buffer + x.rx_no_rq_drops + x.rx_err_cqes + x.rx_stopped,
        );
        c.eq(
            "frames arriving at the TX port",
            t.rx_stopped + t.rx_packets,
            0,
        );
        // Driver RX.
        c.eq(
            "device RX packets vs driver delivered + bad + discarded",
            x.rx_packets,
            r.packets + r.cqe_bad + r.cqe_discarded,
        );
        c.eq("device RX error CQEs vs driver", x.rx_err_cqes, r.wqe_err);
        c.eq(
            "device RX CQEs vs driver",
            x.rx_cqes + x.rx_err_cqes,
            r.cqes,
        );
        c.eq("driver RX packets vs delivered", r.packets, led.delivered);
        // The packets' fates, by counter.
        let drops = mlx5_drops(&self.p);
        c.eq(
            "accepted vs delivered + dropped",
            led.accepted,
            led.delivered + drops.iter().map(|d| d.1).sum::<u64>(),
        );
        c.buffers(
            &self.p.env,
            led.delivered,
            u64::from(self.p.rq.outstanding()),
        );
        c.eq("RX buffer allocation failures", r.buff_alloc_err, 0);
        c.finish("mlx5", self.c.seed, self.c.round)
    }

    fn round(&mut self) -> Result<(), String> {
        self.c.round += 1;
        self.maybe_arm()?;
        let n = burst(&mut self.c.rng);
        self.send(n);
        for _ in 0..self.c.rng.range(0, 4) {
            match self.c.rng.range(0, 2) {
                0 => {
                    let b = self.c.rng.range(1, 96) as usize;
                    self.p.run_device_budget(b);
                }
                1 => {
                    self.p.poll_tx();
                }
                _ => {
                    let b = self.c.rng.range(1, 96) as u32;
                    let got = self.p.poll_rx(b);
                    self.c.deliver(got)?;
                }
            }
        }
        self.quiesce()?;
        self.check()?;
        if let Some(Armed {
            until: Some(until), ..
        }) = self.c.armed
        {
            if self.injected() >= until {
                self.c.armed = None;
                self.c.fired = true;
            }
        }
        if std::mem::take(&mut self.c.fired) {
            self.probe()?;
        }
        Ok(())
    }

    fn report(&self) -> ChaosReport {
        let rc = self.p.recovery_counts();
        self.c.report(
            mlx5_drops(&self.p),
            MLX5_FAULTS.iter().copied().zip(self.faults).collect(),
            vec![
                ("sq_recover", rc.tx_recover),
                ("rq_recover", rc.rx_recover),
                ("tx_timeout", self.timeouts),
                ("tx_recover_dropped", rc.tx_recover_dropped),
            ],
        )
    }
}

fn mlx5_drops(p: &Pair) -> Vec<(&'static str, u64)> {
    let (r, rc) = (p.drv_rx(), p.recovery_counts());
    p.env.flush_mmio();
    let t = p.tb.counters(TX_PORT);
    let x = p.tb.counters(RX_PORT);
    vec![
        ("dev.tx_err_cqes", t.tx_err_cqes),
        ("sq_recover.abandoned", rc.tx_recover_abandoned),
        ("dev.rx_out_of_buffer", x.rx_out_of_buffer),
        ("dev.rx_no_rq_drops", x.rx_no_rq_drops),
        ("dev.rx_stopped", x.rx_stopped),
        ("dev.rx_err_cqes", x.rx_err_cqes),
        ("drv.rx_cqe_bad", r.cqe_bad),
        ("drv.rx_cqe_discarded", r.cqe_discarded),
    ]
}

/// The mlx5 soak: [`Pair`] with a 256-WQEBB SQ and a 128-WQE RQ (bursts overrun both), DMA
/// tracked. Returns the report, or the first violation (with seed and round).
pub fn soak_mlx5(cfg: &ChaosConfig) -> Result<ChaosReport, String> {
    mlx5_run(cfg, None)
}

/// [`soak_mlx5`] with every fault of the kind named `fault` (one of [`MLX5_FAULTS`]): one
/// recovery exercised many times. Panics on a name not in the list.
pub fn soak_mlx5_only(cfg: &ChaosConfig, fault: &str) -> Result<ChaosReport, String> {
    mlx5_run(cfg, Some(kind_of(&MLX5_FAULTS, fault)))
}

/// The index of `fault` in `kinds`.
fn kind_of(kinds: &[&str], fault: &str) -> usize {
    kinds
        .iter()
        .position(|k| *k == fault)
        .unwrap_or_else(|| panic!("no fault {fault} in {kinds:?}"))
}

fn mlx5_run(cfg: &ChaosConfig, only: Option<usize>) -> Result<ChaosReport, String> {
    let p = Pair::new(PairConfig {
        sq_log_sz: 8,
        rq_log_sz: 7,
        track_dma: true,
        ..PairConfig::default()
    });
    let mut s = Mlx5Soak {
        p,
        c: Core::new("mlx5", cfg.seed, only),
        faults: [0; MLX5_FAULTS.len()],
        timeouts: 0,
    };
    while s.c.led.accepted < cfg.packets {
        s.round()?;
    }
    Ok(s.report())
}

// ---------------------------------------------------------------------------------------
// MANA

/// The MANA soak's fault kinds, in the report's order (names of
/// [`rsnic_core::sim::mana::Fault`]).
pub const MANA_FAULTS: [&str; 9] = [
    "TxErrCqe",
    "RxTruncated",
    "DropIrqs",
    "EqeBadCq",
    "DmaReadFault",
    "TxBadWqId",
    "RxBadWqId",
    "TxStall",
    "DevStop",
];
const MANA_EQE_BAD_CQ: usize = 3;
const MANA_TX_BAD_WQ: usize = 5;
const MANA_RX_BAD_WQ: usize = 6;
const MANA_TX_STALL: usize = 7;
const MANA_DEV_STOP: usize = 8;

/// NAPI budget of the MANA soak.
const NAPI_BUDGET: u32 = 64;

struct ManaSoak {
    p: ManaPair,
    c: Core,
    faults: [u64; MANA_FAULTS.len()],
    napi_tx: bool,
    napi_rx: bool,
    irq_recovered: u64,
    bad_cq_events: u64,
    bad_cq_fired: u64,
    /// Corrupt TX and RX CQEs the device wrote (`TxBadWqId`, `RxBadWqId` that took effect).
    bad_wq_fired: [u64; 2],
    /// Reopens for a stopped SQ, for a stopped RQ.
    reopen_sq: u64,
    reopen_rq: u64,
    /// Transmit timeouts (each reopens the channels).
    timeouts: u64,
}

impl Soak for ManaSoak {
    same_in_both_soaks!();
    fn burst_cut(&mut self) {
        // Announce what was posted.
        self.p.sq.ring(&self.p.env);
    }
    fn service_poll(&mut self) -> Result<Vec<u64>, String> {
        Ok(self.poll()?.0)
    }
}

impl ManaSoak {
    fn injected(&self) -> u64 {
        self.p.dev(TX_PORT).faults_injected + self.p.dev(RX_PORT).faults_injected
    }

    fn maybe_arm(&mut self) -> Result<(), String> {
        let Some(kind) = self.c.next_fault(&MANA_FAULTS)? else {
            return Ok(());
        };
        let port = if self.c.rng.one_in(2) {
            TX_PORT
        } else {
            RX_PORT
        };
        let mut n = 1;
        let (port, fault) = match kind {
            0 => {
                // Mostly the TX error types the driver knows, sometimes one it does not.
                let t = if self.c.rng.one_in(4) {
                    loop {
                        let t = self.c.rng.range(1, 63) as u8;
                        if t != 32 && !(33..=41).contains(&t) {
                            break t;
                        }
                    }
                } else {
                    self.c.rng.range(33, 41) as u8
                };
                (TX_PORT, ManaFault::TxErrCqe(t))
            }
            1 => (RX_PORT, ManaFault::RxTruncated),
            2 => {
                n = self.c.rng.range(1, 3);
                (port, ManaFault::DropIrqs(n as u32))
            }
            MANA_EQE_BAD_CQ => (port, ManaFault::EqeBadCq),
            4 => (TX_PORT, ManaFault::DmaReadFault),
            MANA_TX_BAD_WQ => (TX_PORT, ManaFault::TxBadWqId),
            MANA_RX_BAD_WQ => (RX_PORT, ManaFault::RxBadWqId),
            MANA_TX_STALL => (TX_PORT, ManaFault::TxStall),
            _ => (TX_PORT, ManaFault::DevStop),
        };
        let base = self.injected();
        assert!(self.p.dev.borrow_mut().inject(port, fault), "valid fault");
        self.faults[kind] += 1;
        self.c.armed = Some(Armed {
            kind,
            // A stall is not counted (it took effect when the watchdog finds it); a stop
            // is, when it first holds a WQE back.
            until: (kind != MANA_TX_STALL).then_some(base + n),
            since: self.c.round,
        });
        Ok(())
    }

    /// An interrupt on `vector`: its EQ processed (`mana_gd_process_eq_events`), NAPI
    /// scheduled for any completion event.
    fn interrupt(&mut self, vector: u16) {
        let (eq, napi) = if vector == 0 {
            (&mut self.p.tx_eq, &mut self.napi_tx)
        } else {
            (&mut self.p.rx_eq, &mut self.napi_rx)
        };
        let r = eq.process(&self.p.env, |_| {});
        self.bad_cq_events += u64::from(r.bad_cq);
        if r.completions > 0 {
            *napi = true;
        }
    }

    /// One poll: the device runs, interrupts are handled, scheduled NAPI instances poll
    /// once. Returns the sequence numbers delivered and whether anything moved.
    fn poll(&mut self) -> Result<(Vec<u64>, bool), String> {
        let mut moved = self.p.run_device() > 0;
        for v in self.p.take_irqs() {
            moved = true;
            self.interrupt(v);
        }
        if self.napi_tx {
            moved = true;
            let mut done = Vec::new();
            let (_, complete) = self
                .p
                .sq
                .napi_poll(NAPI_BUDGET, &mut self.p.env, |p| done.push(p));
            for p in done {
                self.p.tx.release(p);
            }
            self.napi_tx = !complete;
        }
        let mut seqs = Vec::new();
        if self.napi_rx {
            moved = true;
            let (got, r) = self.p.poll_rx_full(NAPI_BUDGET);
            seqs = self.c.deliver(got)?;
            self.napi_rx = !r.completed;
        }
        Ok((seqs, moved))
    }

    /// The channels reopened ([`ManaPair::reopen`]); NAPI's first rounds arm the new CQs,
    /// as at the start.
    fn reopen(&mut self) {
        self.p.reopen();
        self.napi_tx = true;
        self.napi_rx = true;
        self.c.fired = true;
    }

    /// Runs everything until nothing moves; then the transmit watchdog's look at the EQs
    /// (`irq_recover`): events waiting without an interrupt are consumed, the EQ re-armed
    /// and NAPI scheduled. Then the recovery work: a queue NAPI found stopped on a fault
    /// reopens the channels, and so does a transmit timeout the EQs do not explain (packets
    /// in flight on a quiet pair with no event waiting: a stalled or stopped TX port).
    fn quiesce(&mut self) -> Result<(), String> {
        for _ in 0..QUIESCE_PASSES {
            let mut spins = 0u64;
            while self.poll()?.1 {
                spins += 1;
                if spins > 1 << 20 {
                    return Err(self.c.fail("the pair never goes quiet"));
                }
            }
            let a = self.p.tx_eq.process(&self.p.env, |_| {});
            let b = self.p.rx_eq.process(&self.p.env, |_| {});
            self.bad_cq_events += u64::from(a.bad_cq + b.bad_cq);
            if a.events + b.events > 0 {
                self.irq_recovered += 1;
                self.napi_tx = true;
                self.napi_rx = true;
                continue;
            }
            let (sq, rq) = (self.p.sq.error().is_some(), self.p.rq.error().is_some());
            if sq || rq {
                self.reopen_sq += u64::from(sq);
                self.reopen_rq += u64::from(rq);
                self.reopen();
                continue;
            }
            if self.p.tx_in_flight() > 0 {
                self.timeouts += 1;
                match self.c.armed {
                    Some(a) if a.kind == MANA_TX_STALL => self.c.armed = None,
                    Some(a) if a.kind == MANA_DEV_STOP => {}
                    _ => {
                        return Err(self.c.fail(
                            "packets in flight on a quiet pair with no events waiting, \
                             no stall or stop armed",
                        ))
                    }
                }
                self.reopen();
                continue;
            }
            return Ok(());
        }
        Err(self.c.fail("the pair does not go quiet"))
    }

    fn check(&mut self) -> Result<(), String> {
        let (d, r, t, x, o) = (
            self.p.drv_tx(),
            self.p.drv_rx(),
            self.p.dev(TX_PORT),
            self.p.dev(RX_PORT),
            self.p.reopen_counts(),
        );
        let led = &self.c.led;
        let mut c = Check(Vec::new());
        // TX: every accepted packet came back exactly once, by a completion or dropped by a
        // reopen.
        c.eq("TX in flight", self.p.tx_in_flight() as u64, 0);
        c.eq(
            "TX handed back vs accepted",
            self.p.tx.completed(),
            led.accepted,
        );
        c.eq("driver TX packets vs accepted", d.packets, led.accepted);
        c.eq(
            "TX completions + dropped by reopens vs accepted",
            d.cqes - d.cqe_bad - d.cqe_discarded + o.tx_dropped,
            led.accepted,
        );
        // Device TX: each WQE executed (sent, or an error CQE) or abandoned by a reopen.
        c.eq(
            "driver TX WQEs vs device WQEs + abandoned",
            d.wqes,
            t.wqes + o.tx_abandoned,
        );
        c.eq(
            "accepted vs device TX + error CQEs + abandoned",
            led.accepted,
            t.tx_packets() + t.tx_err_cqes + o.tx_abandoned,
        );
        c.eq(
            "device TX error CQEs vs driver + failed at reopens",
            t.tx_err_cqes,
            d.tx_cqe_err + d.tx_cqe_unknown_type + o.tx_failed,
        );
        c.eq(
            "device TX CQEs vs driver + unread at reopens",
            t.tx_cqes,
            d.cqes + o.tx_cqes_unread,
        );
        // The wire.
        c.eq(
            "device TX vs RX + RX drops",
            t.tx_packets(),
            x.rx_packets() + mana_pair::rx_port_drops(&x),
        );
        c.eq(
            "frames arriving at the TX port",
            t.rx_packets() + t.rx_truncated + t.rx_stopped,
            0,
        );
        // Driver RX: a frame in an RQ WQE is delivered, dropped by the driver, lost with a
        // corrupt CQE, or discarded unread by a stopped RQ.
        c.eq(
            "device RX vs driver delivered + dropped + corrupt + discarded",
            x.rx_packets(),
            r.packets + r.rx_dropped + r.cqe_bad + r.cqe_discarded + o.rx_cqes_unread,
        );
        c.eq("device vs driver truncated", x.rx_truncated, r.rx_truncated);
        c.eq(
            "device RX CQEs vs driver + unread at reopens",
            x.rx_cqes,
            r.cqes + o.rx_cqes_unread,
        );
        c.eq(
            "RX CQEs a reopen left unread (NAPI polled the RQ empty first)",
            o.rx_cqes_unread,
            0,
        );
        c.eq("driver RX packets vs delivered", r.packets, led.delivered);
        // Protocol errors: exactly the corrupt CQEs the device wrote, each costing one
        // reopen.
        c.eq(
            "corrupt TX CQEs: driver vs TxBadWqId that took effect",
            d.cqe_bad,
            self.bad_wq_fired[0],
        );
        c.eq(
            "corrupt RX CQEs: driver vs RxBadWqId that took effect",
            r.cqe_bad,
            self.bad_wq_fired[1],
        );
        c.eq(
            "other protocol errors",
            r.rx_cqe_unknown_type + r.rx_coalesced_err + d.cq_overflow + r.cq_overflow,
            0,
        );
        c.eq(
            "queue errors",
            u64::from(self.p.sq.error().is_some()) + u64::from(self.p.rq.error().is_some()),
            0,
        );
        c.eq(
            "SQ reopens vs corrupt TX CQEs",
            self.reopen_sq,
            self.bad_wq_fired[0],
        );
        c.eq(
            "RQ reopens vs corrupt RX CQEs",
            self.reopen_rq,
            self.bad_wq_fired[1],
        );
        c.eq(
            "reopens vs stopped queues + transmit timeouts",
            o.reopens,
            self.reopen_sq + self.reopen_rq + self.timeouts,
        );
        let drops = mana_drops(&self.p);
        c.eq(
            "accepted vs delivered + dropped",
            led.accepted,
            led.delivered + drops.iter().map(|d| d.1).sum::<u64>(),
        );
        // Interrupts: the watchdog never finds more lost interrupts than the device lost,
        // and every corrupt EQE the device wrote was seen.
        c.eq(
            "EQEs naming no CQ: driver vs EqeBadCq faults that took effect",
            self.p.tx_eq.bad_cq + self.p.rx_eq.bad_cq,
            self.bad_cq_fired,
        );
        if self.irq_recovered > t.irqs_lost + x.irqs_lost {
            c.0.push(format!(
                "irq_recover found events {} times, the device lost {} interrupts",
                self.irq_recovered,
                t.irqs_lost + x.irqs_lost
            ));
        }
        c.eq(
            "EQ overflows",
            self.p.tx_eq.stats.overflows + self.p.rx_eq.stats.overflows,
            0,
        );
        c.buffers(&self.p.env, led.delivered, u64::from(self.p.rq.posted()));
        c.eq(
            "device DMA faults vs DmaReadFault that took effect",
            t.dma_faults + x.dma_faults,
            self.faults[4] - u64::from(matches!(self.c.armed, Some(a) if a.kind == 4)),
        );
        c.finish("mana", self.c.seed, self.c.round)
    }

    fn round(&mut self) -> Result<(), String> {
        self.c.round += 1;
        self.maybe_arm()?;
        let n = burst(&mut self.c.rng);
        self.send(n);
        for _ in 0..self.c.rng.range(0, 3) {
            self.poll()?;
        }
        self.quiesce()?;
        if let Some(Armed {
            kind,
            until: Some(until),
            ..
        }) = self.c.armed
        {
            if self.injected() >= until {
                self.c.armed = None;
                self.c.fired = true;
                self.bad_cq_fired += u64::from(kind == MANA_EQE_BAD_CQ);
                self.bad_wq_fired[0] += u64::from(kind == MANA_TX_BAD_WQ);
                self.bad_wq_fired[1] += u64::from(kind == MANA_RX_BAD_WQ);
            }
        }
        self.check()?;
        if std::mem::take(&mut self.c.fired) {
            self.probe()?;
        }
        Ok(())
    }

    fn report(&self) -> ChaosReport {
        let o = self.p.reopen_counts();
        self.c.report(
            mana_drops(&self.p),
            MANA_FAULTS.iter().copied().zip(self.faults).collect(),
            vec![
                ("irq_recover", self.irq_recovered),
                ("eqe_bad_cq", self.bad_cq_events),
                ("reopen", o.reopens),
                ("reopen.sq_fault", self.reopen_sq),
                ("reopen.rq_fault", self.reopen_rq),
                ("tx_timeout", self.timeouts),
                ("tx_queue_dropped", o.tx_dropped),
            ],
        )
    }
}

fn mana_drops(p: &ManaPair) -> Vec<(&'static str, u64)> {
    let (d, r, x, o) = (p.drv_tx(), p.drv_rx(), p.dev(RX_PORT), p.reopen_counts());
    vec![
        ("drv.tx_cqe_err", d.tx_cqe_err),
        ("drv.tx_cqe_unknown_type", d.tx_cqe_unknown_type),
        ("reopen.tx_abandoned", o.tx_abandoned),
        ("reopen.tx_failed", o.tx_failed),
        ("dev.hc_rx_discards_no_wqe", x.hc_rx_discards_no_wqe),
        ("dev.rx_no_rq_drops", x.rx_no_rq_drops),
        ("dev.rx_stopped", x.rx_stopped),
        ("drv.rx_truncated", r.rx_truncated),
        ("drv.rx_dropped", r.rx_dropped),
        ("drv.rx_cqe_bad", r.cqe_bad),
        ("drv.rx_cqe_discarded", r.cqe_discarded),
    ]
}

/// The MANA soak: [`ManaPair`] with the default 256-entry SQ and a 128-WQE RQ (bursts
/// overrun both), DMA tracked, interrupt-driven. Returns the report, or the first violation
/// (with seed and round).
pub fn soak_mana(cfg: &ChaosConfig) -> Result<ChaosReport, String> {
    mana_run(cfg, None)
}

/// [`soak_mana`] with every fault of the kind named `fault` (one of [`MANA_FAULTS`]): one
/// recovery exercised many times. Panics on a name not in the list.
pub fn soak_mana_only(cfg: &ChaosConfig, fault: &str) -> Result<ChaosReport, String> {
    mana_run(cfg, Some(kind_of(&MANA_FAULTS, fault)))
}

fn mana_run(cfg: &ChaosConfig, only: Option<usize>) -> Result<ChaosReport, String> {
    let mut p = ManaPair::new(ManaConfig {
        rq_wqes: 128,
        track_dma: true,
        ..ManaConfig::default()
    });
    let (tcq, rcq) = (p.ids[1], p.ids[3]);
    p.tx_eq.expect_cqs(&[tcq]);
    p.rx_eq.expect_cqs(&[rcq]);
    p.tx_eq.arm(&p.env);
    p.rx_eq.arm(&p.env);
    let mut s = ManaSoak {
        p,
        c: Core::new("mana", cfg.seed, only),
        faults: [0; MANA_FAULTS.len()],
        // The first NAPI rounds arm the CQs.
        napi_tx: true,
        napi_rx: true,
        irq_recovered: 0,
        bad_cq_events: 0,
        bad_cq_fired: 0,
        bad_wq_fired: [0; 2],
        reopen_sq: 0,
        reopen_rq: 0,
        timeouts: 0,
    };
    s.quiesce()?;
    while s.c.led.accepted < cfg.packets {
        s.round()?;
    }
    Ok(s.report())
}
