// SPDX-License-Identifier: GPL-2.0

//! The driver-side ConnectX event queue (hwif/mlx5/eq.rs) while a hostile device writes
//! arbitrary EQEs: any type, sub type, CQ number and port, owner bits right or wrong, raw
//! bytes anywhere in the ring.
//!
//! Invariants: nothing panics; a poll returns at most its budget; the consumer index moves
//! by exactly the EQEs consumed; every EQE consumed is a completion, a port change or an
//! unknown type; completions are split between known CQs (whose arm_sn advanced by as many)
//! and bogus ones; CQ numbers are 24 bits and ports 4 bits; every poll ends with one arm
//! doorbell `(eqn << 24) | (cc & 0xffffff)` at UAR + 0x40.

use rsnic_core::hwif::hw::Coherent;
use rsnic_core::hwif::mlx5::cq::Cq;
use rsnic_core::hwif::mlx5::eq::{Eq, Event};
use rsnic_testbed::mem::{HostBuf, HostMemory};

use crate::cx_bar::CxBar;
use crate::{drive, Harness, Input};

const UAR: u32 = 8 * 4096;

/// Runs one input.
pub fn run(data: &[u8]) {
    drive::<EqeHarness>(data);
}

/// The harness.
pub struct EqeHarness {
    eq: Eq<HostBuf>,
    ring: HostBuf,
    log_sz: u8,
    pi: u32,
    cqs: Vec<Cq<HostBuf>>,
    comps_known: u64,
    bar: CxBar,
}

impl Harness for EqeHarness {
    const MAX_OPS: usize = 128;

    fn new(inp: &mut Input<'_>) -> Self {
        let mem = HostMemory::new();
        let log_sz = 1 + inp.u8() % 6;
        let eqn = inp.u8();
        let ring = mem.alloc(64 << log_sz);
        let eq = Eq::new(ring.clone(), log_sz, eqn, UAR).unwrap();
        let cqs = (0..4)
            .map(|i| Cq::new(mem.alloc(64 * 4), mem.alloc(8), 0, 2, i, UAR).unwrap())
            .collect();
        Self {
            eq,
            ring,
            log_sz,
            pi: 0,
            cqs,
            comps_known: 0,
            bar: CxBar::default(),
        }
    }

    fn op(&mut self, inp: &mut Input<'_>) {
        match inp.u8() % 3 {
            0 => {
                // A run of EQEs with the right owner bit, arbitrary contents.
                let n = inp.u8() % 8;
                for _ in 0..n {
                    let mut e = [0u8; 64];
                    e[1] = inp.u8() % 12; // mostly known types, some unknown
                    e[3] = inp.u8();
                    e[0x28] = inp.u8();
                    let cqn = inp.u32();
                    e[0x38..0x3c].copy_from_slice(&cqn.to_be_bytes());
                    e[63] = ((self.pi >> self.log_sz) & 1) as u8 | (inp.u8() & 0xfe);
                    let slot = (self.pi as usize) & ((1 << self.log_sz) - 1);
                    self.ring.write(slot * 64, &e);
                    self.pi = self.pi.wrapping_add(1);
                }
            }
            1 => {
                // Raw bytes anywhere in the ring (owner bits included).
                let at = usize::from(inp.u16()) % (64 << self.log_sz);
                let n = 1 + usize::from(inp.u8() % 64);
                let b = inp.bytes(n);
                let end = ((64 << self.log_sz) - at).min(b.len());
                self.ring.write(at, &b[..end]);
            }
            _ => {
                let budget = u32::from(inp.u8() % 40);
                let before = *self.eq.stats();
                let cc0 = self.eq.cc();
                let sn0: u32 = self.cqs.iter().map(|c| u32::from(c.arm_sn())).sum();
                let mut comps = 0u64;
                let mut ports = 0u64;
                let n = self.eq.poll_completions(
                    budget,
                    &self.bar,
                    &self.bar,
                    &mut self.cqs[..],
                    |cqn| {
                        assert!(cqn < 4);
                        comps += 1;
                    },
                    |e| {
                        if let Event::PortChange { port, .. } = e {
                            assert!(port < 16);
                        }
                        ports += 1;
                    },
                );
                assert!(n <= budget);
                let after = *self.eq.stats();
                let eqes = after.eqes - before.eqes;
                assert_eq!(u64::from(self.eq.cc().wrapping_sub(cc0)), eqes);
                let c = after.completions - before.completions;
                let p = after.port_changes - before.port_changes;
                let g = after.page_requests - before.page_requests;
                let m = after.cmd_completions - before.cmd_completions;
                let u = after.unknown - before.unknown;
                assert_eq!(c + p + g + m + u, eqes);
                // Port changes, page requests and command completions all go to the
                // asynchronous handler.
                assert_eq!(p + g + m, ports);
                assert_eq!(u64::from(n), c + p + g + m);
                assert_eq!(c, comps + (after.bogus_cqn - before.bogus_cqn));
                let sn1: u32 = self.cqs.iter().map(|c| u32::from(c.arm_sn())).sum();
                // arm_sn is a u8 per CQ: compare modulo 256 per CQ via the total while small.
                if comps < 200 {
                    assert_eq!(
                        (sn1.wrapping_sub(sn0)) % 256,
                        (comps as u32) % 256,
                        "arm_sn advanced once per known completion"
                    );
                }
                self.comps_known += comps;
                let w = self.bar.w32.borrow_mut().pop();
                assert_eq!(w, Some((UAR + 0x40, self.eq.doorbell_value())));
                assert_eq!(
                    self.eq.doorbell_value(),
                    (u32::from(self.eq.eqn()) << 24) | (self.eq.cc() & 0xff_ffff)
                );
            }
        }
    }

    fn finish(self) {
        assert!(self.comps_known <= self.eq.stats().completions);
    }
}
