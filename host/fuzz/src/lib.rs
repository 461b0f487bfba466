// SPDX-License-Identifier: GPL-2.0

//! Fuzz harnesses for rsnic's hardware boundary, in both directions.
//!
//! * [`tx_completion`]: the driver-side SQ (regular WQEs, non-linear packets, MPWQE
//!   sessions) while a hostile device writes arbitrary bytes into its CQ.
//! * [`rx_completion`]: the driver-side RQ while a hostile device writes arbitrary CQEs,
//!   compressed sessions and mini-CQE arrays.
//! * [`device_wqe`]: the simulated ConnectX while a hostile driver writes arbitrary WQEs,
//!   doorbell records and doorbells.
//! * [`device_cmd`]: the simulated ConnectX's command interface while a hostile driver
//!   writes arbitrary command entries, mailbox chains, command inputs and registers.
//! * [`mana_tx_completion`], [`mana_rx_completion`]: the driver-side MANA SQ and RQ while a
//!   hostile device writes arbitrary CQEs.
//! * [`mana_device_wqe`]: the simulated MANA device while a hostile driver writes arbitrary
//!   WQEs and doorbells.
//! * [`cmd_output`]: the driver-side ConnectX command queue, command parsers and bring-up
//!   while a hostile device answers commands with arbitrary bytes.
//! * [`eqe`]: the driver-side ConnectX event queue while a hostile device writes arbitrary
//!   EQEs.
//! * [`mana_hwc`]: the driver-side MANA hardware channel and response parsers while a
//!   hostile device writes arbitrary EQEs, CQEs and responses.
//!
//! Each harness is a plain function of the fuzzer's bytes (`run(data)`), so the same code
//! runs under libFuzzer (`fuzz_targets/`), as a unit test over the seed corpus, and under
//! Miri. A harness asserts its invariants with `assert!`: a violated invariant, a panic in
//! the code under test or an out-of-bounds access of a host DMA buffer (`HostBuf` panics)
//! is a crash for libFuzzer.

//!
//! What the harnesses share is in [`env`](mod@env) (the driver-side ones) and [`device`] (the
//! device-side ones); every harness runs the same way ([`drive`]).

#![forbid(unsafe_code)]

pub mod cmd_output;
pub mod cx_bar;
pub mod device;
pub mod device_cmd;
pub mod device_wqe;
pub mod env;
pub mod eqe;
pub mod mana_device_wqe;
pub mod mana_hwc;
pub mod mana_rx_completion;
pub mod mana_tx_completion;
pub mod rx_completion;
pub mod tx_completion;

/// A cursor over the fuzzer's bytes. Reads past the end yield zeroes, so every input is a
/// valid program; [`Input::done`] ends the op loop.
pub struct Input<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Input<'a> {
    /// A cursor at the start of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Self { data, pos: 0 }
    }

    /// Whether every byte was consumed.
    pub fn done(&self) -> bool {
        self.pos >= self.data.len()
    }

    /// The next byte (0 past the end).
    pub fn u8(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }

    /// A big-endian u16.
    pub fn u16(&mut self) -> u16 {
        u16::from_be_bytes([self.u8(), self.u8()])
    }

    /// A big-endian u32.
    pub fn u32(&mut self) -> u32 {
        u32::from_be_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }

    /// A big-endian u64.
    pub fn u64(&mut self) -> u64 {
        (u64::from(self.u32()) << 32) | u64::from(self.u32())
    }

    /// A boolean from the low bit of the next byte.
    pub fn bool(&mut self) -> bool {
        self.u8() & 1 != 0
    }

    /// Fills `dst` (zeroes past the end).
    pub fn fill(&mut self, dst: &mut [u8]) {
        for b in dst.iter_mut() {
            *b = self.u8();
        }
    }

    /// `n` bytes as a vector.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut v = vec![0u8; n];
        self.fill(&mut v);
        v
    }
}

/// A harness: built from the first bytes of the input, then one operation at a time while
/// input lasts, then a final check.
pub trait Harness: Sized {
    /// Upper bound of operations per input (keeps every run short).
    const MAX_OPS: usize;
    /// The harness, configured by the first bytes.
    fn new(inp: &mut Input<'_>) -> Self;
    /// One operation.
    fn op(&mut self, inp: &mut Input<'_>);
    /// What is checked when the input is used up.
    fn finish(self);
}

/// Runs harness `H` over one fuzz input.
pub fn drive<H: Harness>(data: &[u8]) {
    let mut inp = Input::new(data);
    let mut h = H::new(&mut inp);
    let mut ops = 0;
    while !inp.done() && ops < H::MAX_OPS {
        h.op(&mut inp);
        ops += 1;
    }
    h.finish();
}

/// The little-endian u32 at `at` of `b`.
pub fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Runs every seed file of `host/fuzz/seeds/<target>/` through `f` (used by the unit tests
/// and under Miri).
pub fn run_seeds(target: &str, f: impl Fn(&[u8])) -> usize {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("seeds")
        .join(target);
    let mut n = 0;
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for p in entries {
        let data = std::fs::read(&p).expect("seed");
        f(&data);
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_completion_seeds() {
        assert!(run_seeds("tx_completion", tx_completion::run) > 0);
    }

    #[test]
    fn rx_completion_seeds() {
        assert!(run_seeds("rx_completion", rx_completion::run) > 0);
    }

    #[test]
    fn device_cmd_seeds() {
        assert!(run_seeds("device_cmd", device_cmd::run) > 0);
    }

    #[test]
    fn device_wqe_seeds() {
        assert!(run_seeds("device_wqe", device_wqe::run) > 0);
    }

    #[test]
    fn mana_tx_completion_seeds() {
        assert!(run_seeds("mana_tx_completion", mana_tx_completion::run) > 0);
    }

    #[test]
    fn mana_rx_completion_seeds() {
        assert!(run_seeds("mana_rx_completion", mana_rx_completion::run) > 0);
    }

    #[test]
    fn mana_device_wqe_seeds() {
        assert!(run_seeds("mana_device_wqe", mana_device_wqe::run) > 0);
    }

    #[test]
    fn cmd_output_seeds() {
        assert!(run_seeds("cmd_output", cmd_output::run) > 0);
    }

    #[test]
    fn eqe_seeds() {
        assert!(run_seeds("eqe", eqe::run) > 0);
    }

    #[test]
    fn mana_hwc_seeds() {
        assert!(run_seeds("mana_hwc", mana_hwc::run) > 0);
    }

    #[test]
    fn empty_and_short_inputs() {
        for data in [&[][..], &[0], &[0xff; 3], &[0x55; 40]] {
            tx_completion::run(data);
            rx_completion::run(data);
            device_wqe::run(data);
            device_cmd::run(data);
            mana_tx_completion::run(data);
            mana_rx_completion::run(data);
            mana_device_wqe::run(data);
            cmd_output::run(data);
            eqe::run(data);
            mana_hwc::run(data);
        }
    }
}
