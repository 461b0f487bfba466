//! The register ring of BAR2 (`ring::Bar2` against `ring::GuestRing`): set-up state, entries
//! applied strictly in order, a READ32 answered after the writes before it and only then,
//! an unpublished slot stopping the consumer, a full ring, wrap-around over several laps.

use std::fs::File;
use std::os::fd::AsFd;
use std::sync::atomic::Ordering;

use rsnic_core::dp::xport::*;
use rsnic_devd::ring::{Bar2, Entry, GuestRing};
use rsnic_devd::sys::{memfd, Mapping};

fn bar2() -> Bar2 {
    let fd = memfd("test-bar2").unwrap();
    File::from(fd.try_clone().unwrap())
        .set_len(BAR2_SIZE as u64)
        .unwrap();
    let map = Mapping::new(fd.as_fd(), BAR2_SIZE).unwrap();
    let b = Bar2::new(
        map,
        Identity {
            family: Family::Mana,
            ports: 2,
            status: Status::Ready,
            ram_size: 1 << 30,
        },
    )
    .unwrap();
    b.set_status(Status::Ready);
    b
}

/// Drains, recording entries; a READ32 is answered with the number of writes seen so far.
fn drain(b: &mut Bar2, log: &mut Vec<Entry>) -> usize {
    b.drain(|e| {
        log.push(e);
        log.iter()
            .filter(|e| matches!(e, Entry::Write32 { .. } | Entry::Write64 { .. }))
            .count() as u32
    })
}

#[test]
fn setup_state_is_what_the_guest_expects() {
    let b = bar2();
    let m = b.mapping();
    let mut id = [0u8; IDENTITY_LEN];
    assert!(m.read(0, &mut id));
    assert_eq!(
        Identity::parse(&id),
        Ok(Identity {
            family: Family::Mana,
            ports: 2,
            status: Status::Ready,
            ram_size: 1 << 30
        })
    );
    for i in [0u64, 1, 4095] {
        let seq = m.u64_at(slot_offset(i) + SLOT_SEQ).unwrap();
        assert_eq!(seq.load(Ordering::Relaxed), i);
    }
    let done = m.u64_at(CTRL_READ_DONE).unwrap();
    assert_eq!(done.load(Ordering::Relaxed), READ_DONE_NONE);
    // Position 0's READ32 is not answered before devd sees it.
    let g = GuestRing::new(m).unwrap();
    let pos = g.post_read(0).unwrap();
    assert_eq!(pos, 0);
    assert_eq!(g.read_answer(pos), None);
}

#[test]
fn entries_apply_in_order_and_reads_follow_the_writes_before_them() {
    let mut b = bar2();
    let mut log = Vec::new();
    let (p_read1, p_read2);
    {
        let g = GuestRing::new(b.mapping()).unwrap();
        g.push(OP_WRITE32, 0x10, 0xdead_beef_0000_0001).unwrap();
        g.push(OP_WRITE64, 0x20, 0x8877_6655_4433_2211).unwrap();
        p_read1 = g.post_read(0x30).unwrap();
        assert_eq!(g.read_answer(p_read1), None);
    }
    assert_eq!(drain(&mut b, &mut log), 3);
    {
        let g = GuestRing::new(b.mapping()).unwrap();
        assert_eq!(g.read_answer(p_read1), Some(2));
        assert_eq!(g.head(), Some(3));
        g.push(OP_WRITE32, 0x14, 2).unwrap();
        g.push(9, 0x18, 0).unwrap();
        p_read2 = g.post_read(0x34).unwrap();
        g.push(OP_WRITE32, 0x1c, 3).unwrap();
    }
    assert_eq!(drain(&mut b, &mut log), 4);
    assert_eq!(
        log,
        vec![
            Entry::Write32 {
                reg: 0x10,
                value: 1
            },
            Entry::Write64 {
                reg: 0x20,
                bytes: [0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88]
            },
            Entry::Read32 { reg: 0x30 },
            Entry::Write32 {
                reg: 0x14,
                value: 2
            },
            Entry::Bad { reg: 0x18, op: 9 },
            Entry::Read32 { reg: 0x34 },
            Entry::Write32 {
                reg: 0x1c,
                value: 3
            },
        ]
    );
    let g = GuestRing::new(b.mapping()).unwrap();
    // The second READ32 saw the three writes before it, not the one after.
    assert_eq!(g.read_answer(p_read2), Some(3));
    assert_eq!(g.read_answer(p_read1), None, "read_done moved on");
    assert_eq!((b.bad_ops(), b.applied()), (1, 7));
}

#[test]
fn an_unpublished_slot_stops_the_consumer_until_published() {
    let mut b = bar2();
    let mut log = Vec::new();
    {
        let m = b.mapping();
        let g = GuestRing::new(m).unwrap();
        g.push(OP_WRITE32, 0, 1).unwrap();
        // A writer claims position 1 and has not published it yet.
        let tail = m.u64_at(CTRL_TAIL).unwrap();
        assert_eq!(tail.fetch_add(1, Ordering::Relaxed), 1);
        m.u32_at(slot_offset(1) + SLOT_OP)
            .unwrap()
            .store(OP_WRITE32, Ordering::Relaxed);
        m.u64_at(slot_offset(1) + SLOT_VALUE)
            .unwrap()
            .store(2, Ordering::Relaxed);
        g.push(OP_WRITE32, 0, 3).unwrap();
    }
    assert_eq!(drain(&mut b, &mut log), 1);
    assert_eq!(drain(&mut b, &mut log), 0);
    b.mapping()
        .u64_at(slot_offset(1) + SLOT_SEQ)
        .unwrap()
        .store(2, Ordering::Release);
    assert_eq!(drain(&mut b, &mut log), 2);
    let values: Vec<u32> = log
        .iter()
        .map(|e| match e {
            Entry::Write32 { value, .. } => *value,
            _ => 0,
        })
        .collect();
    assert_eq!(values, vec![1, 2, 3]);
}

#[test]
fn full_ring_and_wrap_around_over_several_laps() {
    let mut b = bar2();
    let mut log = Vec::new();
    let mut next = 0u64;
    let total = 3 * RING_ENTRIES as u64 + 100;
    while next < total {
        {
            let g = GuestRing::new(b.mapping()).unwrap();
            // Fill: exactly RING_ENTRIES fit ahead of the consumer.
            let mut pushed = 0;
            while next < total {
                match g.push(OP_WRITE32, 0x40, next) {
                    Some(pos) => {
                        assert_eq!(pos, next);
                        next += 1;
                        pushed += 1;
                    }
                    None => break,
                }
            }
            assert!(pushed == RING_ENTRIES || next == total, "pushed {pushed}");
        }
        drain(&mut b, &mut log);
    }
    assert_eq!(log.len() as u64, total);
    for (i, e) in log.iter().enumerate() {
        assert_eq!(
            *e,
            Entry::Write32 {
                reg: 0x40,
                value: i as u32
            }
        );
    }
    let pos = {
        let g = GuestRing::new(b.mapping()).unwrap();
        assert_eq!(g.head(), Some(total));
        // A READ32 past the wrap is answered at its own position.
        g.post_read(0x44).unwrap()
    };
    assert_eq!(pos, total);
    drain(&mut b, &mut log);
    let g = GuestRing::new(b.mapping()).unwrap();
    assert_eq!(g.read_answer(pos), Some(total as u32));
}
