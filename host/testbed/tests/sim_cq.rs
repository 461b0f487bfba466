//! Completion queues of the simulated mlx5 device: owner bits across wraps, arming and
//! interrupts, CQ overrun, basic CQE compression (spec C.2, C.5).

mod sim_util;

use rsnic_core::hwif::hw::Mmio;
use sim_util::*;

fn arm(r: &Rig, port: usize, cq: &Cq, sn: u32) {
    let mut b = [0u8; 8];
    b[..4].copy_from_slice(&((sn << 28) | (cq.cc & 0xff_ffff)).to_be_bytes());
    b[4..].copy_from_slice(&cq.cqn.to_be_bytes());
    r.bus.write64(api_uar_offset(port) + 0x20, b);
}

#[test]
fn owner_bit_flips_on_every_wrap() {
    let mut r = Rig::new(RigOpts {
        tx_cq_log: 2,
        rx_cq_log: 2,
        ..RigOpts::default()
    });
    for i in 0..11u32 {
        r.send(&udp4_frame(30, i as u16, 1), CQ_UPDATE);
        r.tb.step();
        for cq in [&mut r.tx_cq, &mut r.rx_cq] {
            // Slot i & 3 holds a CQE whose owner is the pass parity (i >> 2) & 1.
            let raw = cq.slot(i);
            assert_eq!(raw[63] & 1, ((i >> 2) & 1) as u8, "CQE {i}");
            let c = cq.poll().expect("valid at cc");
            assert_eq!(cqe_wqe_counter(&c), i as u16);
            assert!(cq.poll().is_none());
            cq.update_ci();
        }
    }
    assert_eq!(r.tb.counters(0).cq_overruns, 0);
    assert_eq!(r.tb.counters(1).cq_overruns, 0);
}

#[test]
fn cq_overrun_is_detected_through_set_ci() {
    let mut r = Rig::new(RigOpts {
        tx_cq_log: 1,
        ..RigOpts::default()
    });
    for i in 0..2 {
        r.send(&udp4_frame(30, i, 1), CQ_UPDATE);
    }
    r.tb.step();
    assert_eq!(
        r.tb.counters(0).dbr_reads,
        1,
        "SQ record only: room was known"
    );
    // The CQ is full; consuming one and publishing set_ci makes room for one more.
    r.tx_cq.poll().unwrap();
    r.tx_cq.update_ci();
    for i in 0..2 {
        r.send(&udp4_frame(30, i, 1), CQ_UPDATE);
    }
    r.tb.step();
    let t = r.tb.counters(0);
    // SQ record once more, set_ci twice (room for the 3rd CQE, none for the 4th).
    assert_eq!(t.dbr_reads, 4);
    assert_eq!(t.cq_overruns, 1);
    assert_eq!(t.cqes_lost, 1);
    assert_eq!(r.tb.device().cq_in_error(r.tx_cq.cqn), Ok(true));
    assert_eq!(cqe_wqe_counter(&r.tx_cq.poll().unwrap()), 1);
    assert_eq!(cqe_wqe_counter(&r.tx_cq.poll().unwrap()), 2);
    assert!(r.tx_cq.poll().is_none());
}

#[test]
fn arming_raises_exactly_one_interrupt() {
    let mut r = Rig::new(RigOpts::default());
    arm(&r, 0, &r.tx_cq, 1);
    r.tb.step();
    assert!(r.tb.take_irqs().is_empty(), "nothing pending at arm time");
    let mut last = [0u8; 16];
    for i in 0..3 {
        last = r.post_send(&udp4_frame(30, i, 1), CQ_UPDATE).1;
    }
    r.ring(&last);
    r.tb.step();
    assert_eq!(
        r.tb.take_irqs(),
        vec![1],
        "one interrupt for three CQEs, TX vector"
    );
    for _ in 0..3 {
        r.tx_cq.poll().unwrap();
    }
    r.tx_cq.update_ci();
    // Re-arm with the up-to-date ci: nothing new, no interrupt.
    arm(&r, 0, &r.tx_cq, 2);
    r.tb.step();
    assert!(r.tb.take_irqs().is_empty());
    r.send(&udp4_frame(30, 9, 1), CQ_UPDATE);
    r.tb.step();
    assert_eq!(r.tb.take_irqs(), vec![1]);
    // Not armed any more: another CQE raises nothing.
    r.send(&udp4_frame(30, 9, 1), CQ_UPDATE);
    r.tb.step();
    assert!(r.tb.take_irqs().is_empty());
    // Arming with a stale ci (CQEs not consumed) fires at once.
    arm(&r, 0, &r.tx_cq, 3);
    r.tb.step();
    assert_eq!(r.tb.take_irqs(), vec![1]);
    let t = r.tb.counters(0);
    assert_eq!((t.interrupts, t.arm_doorbells), (3, 3));
    // The RX CQ (vector 2) was never armed.
    assert_eq!(r.tb.counters(1).interrupts, 0);
}

/// Test-side basic decompression (spec C.5): the title at cc, mini arrays at cc+1, cc+8,
/// cc+16, …; packet k gets byte_cnt/check_sum from its mini CQE and wqe_counter title + k.
fn decompress(cq: &Cq, cc: u32) -> Vec<(u32, u16, u16)> {
    let title = cq.slot(cc);
    assert_eq!((title[63] >> 2) & 3, 3, "title has format 3");
    let n = cqe_byte_cnt(&title);
    let wc0 = cqe_wqe_counter(&title);
    let mut arr = cq.slot(cc + 1);
    (0..n)
        .map(|k| {
            if k >= 8 && k % 8 == 0 {
                arr = cq.slot(cc + k);
            }
            let m = &arr[(k % 8) as usize * 8..][..8];
            (
                u32::from_be_bytes([m[4], m[5], m[6], m[7]]),
                u16::from_be_bytes([m[0], m[1]]),
                wc0.wrapping_add(k as u16),
            )
        })
        .collect()
}

#[test]
fn rx_cqe_compression_layout() {
    let mut r = Rig::new(RigOpts {
        compress: true,
        ..RigOpts::default()
    });
    arm(&r, 1, &r.rx_cq, 0);
    let frames: Vec<Vec<u8>> = (0..11).map(|i| udp4_frame(20 + 3 * i, 7, 8)).collect();
    let mut last = [0u8; 16];
    for f in &frames {
        last = r.post_send(f, 0).1;
    }
    r.ring(&last);
    r.tb.step();
    let title = r.rx_cq.slot(0);
    assert_eq!(cqe_opcode(&title), 2, "title keeps the opcode RESP_SEND");
    assert_eq!(title[63] & 1, 0, "owner of index 0");
    assert_eq!(cqe_byte_cnt(&title), 11, "byte_cnt = number of CQEs");
    assert_eq!(cqe_wqe_counter(&title), 0);
    let got = decompress(&r.rx_cq, 0);
    for (k, f) in frames.iter().enumerate() {
        // check_sum: the ones' complement sum of the bytes after the L2 header.
        let csum = !inet_csum(&[&f[14..]]);
        assert_eq!(got[k], (f.len() as u32, csum, k as u16), "packet {k}");
        assert_eq!(r.rx_data(k, f.len()), *f);
    }
    // Slots neither title nor array stay as the driver initialised them.
    for idx in [2u32, 3, 4, 5, 6, 7, 9, 10] {
        assert_eq!(r.rx_cq.slot(idx)[63], 0xf1, "slot {idx} untouched");
    }
    let c = r.tb.counters(1);
    assert_eq!((c.compress_sessions, c.compressed_cqes), (1, 11));
    assert_eq!(c.cq_slot_writes, 3, "title + arrays at 1 and 8");
    assert_eq!(r.tb.take_irqs(), vec![2], "one interrupt, after the title");
    assert_eq!(r.tb.device().cq_producer(r.rx_cq.cqn), Ok(11));

    // Consume the session (cc += 11, as SW does), then a single completion is a plain CQE
    // at index 11 with the first pass owner.
    r.rx_cq.cc = 11;
    r.rx_cq.update_ci();
    r.send(&frames[0], 0);
    r.tb.step();
    let one = r.rx_cq.poll().unwrap();
    assert_eq!((one[63] >> 2) & 3, 0, "a session of one is not compressed");
    assert_eq!(cqe_wqe_counter(&one), 11);
    assert_eq!(cqe_byte_cnt(&one), frames[0].len() as u32);
}

#[test]
fn compression_session_breaks_on_different_common_fields() {
    let mut r = Rig::new(RigOpts {
        compress: true,
        ..RigOpts::default()
    });
    // Two UDP/IPv4 frames (checksums 0: L3 not ok), then a non-IP frame (different hds_ip_ext
    // and l4_l3_hdr_type), then two more UDP frames.
    let udp = udp4_frame(40, 1, 2);
    let mut other = udp.clone();
    other[12..14].copy_from_slice(&[0x88, 0xb5]);
    let mut last = [0u8; 16];
    for f in [&udp, &udp, &other, &udp, &udp] {
        last = r.post_send(f, 0).1;
    }
    r.ring(&last);
    r.tb.step();
    assert_eq!(decompress(&r.rx_cq, 0).len(), 2);
    let single = r.rx_cq.slot(2);
    assert_eq!((single[63] >> 2) & 3, 0);
    assert_eq!(single[63] & 1, 0);
    assert_eq!(cqe_wqe_counter(&single), 2);
    let second = decompress(&r.rx_cq, 3);
    assert_eq!(second.iter().map(|x| x.2).collect::<Vec<_>>(), vec![3, 4]);
    assert_eq!(r.tb.counters(1).compress_sessions, 2);
}
