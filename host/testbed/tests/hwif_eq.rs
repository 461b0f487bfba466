//! Driver side of ConnectX event queues (hwif/mlx5/eq.rs) and the CQ arm sequence number:
//! EQEs written by hand as a device would (mlx5_eqe layout of device.h, owner semantics of
//! eq.c), owner-bit wraparound, EQ doorbell values at UAR 0x40 / 0x48, port-change parsing,
//! hostile EQEs (unknown types, CQ numbers nobody owns), and arm_sn advancing once per
//! completion EQE into the CQ arm doorbell.

mod cx_fake_device;

use cx_fake_device::{NoBarriers, Write};
use rsnic_core::hwif::hw::Coherent;
use rsnic_core::hwif::mlx5::cq::{Cq, CQ_DB_REQ_NOT};
use rsnic_core::hwif::mlx5::eq::{self, Eq, Event};
use rsnic_testbed::mem::{HostBuf, HostMemory};

/// UAR page 8.
const UAR: u32 = 8 * 4096;

/// A device-side writer of EQEs: producer index `pi`, owner = (pi >> log_sz) & 1.
struct EqWriter {
    buf: HostBuf,
    log_sz: u8,
    pi: u32,
}

impl EqWriter {
    fn write(&mut self, eqe: [u8; 64]) {
        let mut e = eqe;
        e[63] = ((self.pi >> self.log_sz) & 1) as u8;
        let slot = (self.pi & ((1 << self.log_sz) - 1)) as usize;
        self.buf.write(slot * 64, &e);
        self.pi += 1;
    }

    /// A completion EQE: type 0 (byte 1), `mlx5_eqe_comp.cqn` BE32 at byte 0x20 + 24.
    fn comp(&mut self, cqn: u32) {
        let mut e = [0u8; 64];
        e[0x38..0x3c].copy_from_slice(&cqn.to_be_bytes());
        self.write(e);
    }

    /// A port-change EQE: type 0x09 (byte 1), sub_type (byte 3), port << 4 at byte 0x28.
    fn port(&mut self, sub_type: u8, port: u8) {
        let mut e = [0u8; 64];
        e[1] = 0x09;
        e[3] = sub_type;
        e[0x28] = port << 4;
        self.write(e);
    }
}

fn eq_pair(log_sz: u8, eqn: u8) -> (Eq<HostBuf>, EqWriter, cx_fake_device::FakeBar) {
    let mem = HostMemory::new();
    let buf = mem.alloc(64 << log_sz);
    let q = Eq::new(buf.clone(), log_sz, eqn, UAR).unwrap();
    (
        q,
        EqWriter { buf, log_sz, pi: 0 },
        cx_fake_device::FakeBar::default(),
    )
}

#[test]
fn init_sets_every_owner_byte_to_one() {
    let (q, w, _) = eq_pair(3, 1);
    for i in 0..8 {
        let mut e = [0u8; 64];
        w.buf.read(i * 64, &mut e);
        let mut want = [0u8; 64];
        want[63] = 1; // owner = MLX5_EQE_OWNER_INIT_VAL
        assert_eq!(e, want);
    }
    assert_eq!(q.cc(), 0);
    let mem = HostMemory::new();
    assert!(Eq::new(mem.alloc(64 * 7), 3, 0, UAR).is_err());
    assert!(Eq::new(mem.alloc(64), 0, 0, UAR).is_err());
}

#[test]
fn owner_bit_wraps_around_over_several_passes() {
    let (mut q, mut w, _) = eq_pair(2, 3);
    let mut next_cqn = 0;
    for _pass in 0..5 {
        for _ in 0..4 {
            w.comp(next_cqn);
            next_cqn += 1;
        }
        for k in 0..4 {
            assert_eq!(
                q.next(&NoBarriers),
                Some(Event::Completion {
                    cqn: next_cqn - 4 + k
                })
            );
        }
        // The ring is consumed: the next slot still holds the previous pass's owner.
        assert_eq!(q.next(&NoBarriers), None);
    }
    assert_eq!(q.cc(), 20);
    assert_eq!(q.stats().completions, 20);
}

#[test]
fn a_stale_eqe_is_not_consumed() {
    let (mut q, mut w, _) = eq_pair(2, 0);
    for c in 0..4 {
        w.comp(c);
    }
    for _ in 0..4 {
        assert!(q.next(&NoBarriers).is_some());
    }
    // Second pass expects owner 1; slot 0 still has owner 0 from pass one.
    assert_eq!(q.next(&NoBarriers), None);
    w.comp(9);
    assert_eq!(q.next(&NoBarriers), Some(Event::Completion { cqn: 9 }));
}

#[test]
fn doorbells_carry_eqn_and_consumer_index() {
    let (mut q, mut w, bar) = eq_pair(3, 5);
    for c in 0..3 {
        w.comp(c);
    }
    let mut seen = Vec::new();
    let n = q.poll(eq::EQ_POLLING_BUDGET, &bar, &NoBarriers, |e| seen.push(e));
    assert_eq!(n, 3);
    assert_eq!(seen.len(), 3);
    // eq_update_ci(eq, 1): (eqn << 24) | cc at UAR + 0x40.
    assert_eq!(bar.take_writes(), vec![Write::W32(UAR + 0x40, 0x0500_0003)]);
    q.update_ci(false, &bar, &NoBarriers);
    assert_eq!(bar.take_writes(), vec![Write::W32(UAR + 0x48, 0x0500_0003)]);
    assert_eq!(q.stats().doorbells, 2);
    // An empty poll still re-arms.
    assert_eq!(q.poll(8, &bar, &NoBarriers, |_| {}), 0);
    assert_eq!(bar.take_writes(), vec![Write::W32(UAR + 0x40, 0x0500_0003)]);
}

#[test]
fn doorbell_puts_the_eqn_in_the_top_byte() {
    let (mut q, mut w, bar) = eq_pair(1, 0xfe);
    for c in 0..2 {
        w.comp(c);
    }
    q.poll(8, &bar, &NoBarriers, |_| {});
    assert_eq!(q.doorbell_value(), 0xfe00_0002);
    assert_eq!(bar.take_writes(), vec![Write::W32(UAR + 0x40, 0xfe00_0002)]);
}

#[test]
fn poll_respects_the_budget() {
    let (mut q, mut w, bar) = eq_pair(4, 1);
    for c in 0..10 {
        w.comp(c);
    }
    assert_eq!(q.poll(4, &bar, &NoBarriers, |_| {}), 4);
    assert_eq!(q.cc(), 4);
    assert_eq!(q.poll(100, &bar, &NoBarriers, |_| {}), 6);
    assert_eq!(q.cc(), 10);
}

#[test]
fn port_change_events_are_parsed() {
    let (mut q, mut w, _) = eq_pair(3, 0);
    w.port(eq::PORT_CHANGE_SUBTYPE_ACTIVE, 1);
    w.port(eq::PORT_CHANGE_SUBTYPE_DOWN, 2);
    w.port(5, 1); // INITIALIZED: passed on, not a link change
    let e = q.next(&NoBarriers).unwrap();
    assert_eq!(
        e,
        Event::PortChange {
            sub_type: 4,
            port: 1
        }
    );
    assert_eq!(e.link_up(), Some(true));
    let e = q.next(&NoBarriers).unwrap();
    assert_eq!(e.link_up(), Some(false));
    assert_eq!(
        e,
        Event::PortChange {
            sub_type: 1,
            port: 2
        }
    );
    assert_eq!(q.next(&NoBarriers).unwrap().link_up(), None);
    assert_eq!(q.stats().port_changes, 3);
}

#[test]
fn hostile_eqes_are_counted_not_trusted() {
    let (mut q, mut w, bar) = eq_pair(3, 0);
    // Unknown types (0x04 = CQ error, 0xff) are skipped and counted.
    let mut e = [0u8; 64];
    e[1] = 0x04;
    w.write(e);
    e[1] = 0xff;
    e.iter_mut().take(62).for_each(|b| *b |= 0xa5);
    e[1] = 0xff;
    w.write(e);
    // A completion EQE whose cqn word has garbage in its top byte: masked to 24 bits.
    let mut e = [0u8; 64];
    e[0x38..0x3c].copy_from_slice(&0xff00_0007u32.to_be_bytes());
    w.write(e);
    // A port number with garbage in the low nibble: masked.
    let mut e = [0u8; 64];
    e[1] = 0x09;
    e[3] = 4;
    e[0x28] = 0xff;
    w.write(e);
    let mut seen = Vec::new();
    q.poll(8, &bar, &NoBarriers, |e| seen.push(e));
    assert_eq!(
        seen,
        vec![
            Event::Completion { cqn: 7 },
            Event::PortChange {
                sub_type: 4,
                port: 15
            }
        ]
    );
    assert_eq!(q.stats().unknown, 2);
    assert_eq!(q.stats().eqes, 4);
    assert_eq!(q.cc(), 4);
}

fn cq(mem: &HostMemory, cqn: u32) -> Cq<HostBuf> {
    Cq::new(mem.alloc(64 * 8), mem.alloc(8), 0, 3, cqn, UAR).unwrap()
}

#[test]
fn completion_eqes_advance_arm_sn_and_bogus_cqns_are_counted() {
    let (mut q, mut w, bar) = eq_pair(3, 2);
    let mem = HostMemory::new();
    let mut cqs = [cq(&mem, 0x10), cq(&mem, 0x11)];
    w.comp(0x10);
    w.comp(0x11);
    w.comp(0x10);
    w.comp(0x99); // nobody's CQ
    w.port(eq::PORT_CHANGE_SUBTYPE_DOWN, 1);
    let mut comps = Vec::new();
    let mut ports = Vec::new();
    let n = q.poll_completions(
        eq::EQ_POLLING_BUDGET,
        &bar,
        &NoBarriers,
        &mut cqs[..],
        |cqn| comps.push(cqn),
        |e| ports.push(e),
    );
    assert_eq!(n, 5);
    assert_eq!(comps, vec![0x10, 0x11, 0x10]);
    assert_eq!(ports.len(), 1);
    assert_eq!(q.stats().bogus_cqn, 1);
    assert_eq!(cqs[0].arm_sn(), 2);
    assert_eq!(cqs[1].arm_sn(), 1);
    assert_eq!(bar.take_writes(), vec![Write::W32(UAR + 0x40, 0x0200_0005)]);

    // The arm doorbell carries sn = arm_sn & 3 in bits 29:28 of its first word (mlx5_cq_arm),
    // the format unchanged: {BE32(sn << 28 | cmd | ci), BE32(cqn)} at UAR + 0x20.
    cqs[0].arm(CQ_DB_REQ_NOT, &bar, &NoBarriers);
    assert_eq!(
        bar.take_writes(),
        vec![Write::W64(UAR + 0x20, [0x20, 0, 0, 0, 0, 0, 0, 0x10])]
    );
    for _ in 0..3 {
        w.comp(0x10);
    }
    q.poll_completions(8, &bar, &NoBarriers, &mut cqs[..], |_| {}, |_| {});
    bar.take_writes();
    assert_eq!(cqs[0].arm_sn(), 5);
    cqs[0].arm(CQ_DB_REQ_NOT, &bar, &NoBarriers);
    assert_eq!(
        bar.take_writes(),
        vec![Write::W64(UAR + 0x20, [0x10, 0, 0, 0, 0, 0, 0, 0x10])]
    );
}
