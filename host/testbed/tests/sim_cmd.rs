//! The simulated ConnectX's command interface, driven purely through registers and DMA
//! memory by a hand-written host (tests/cx_fake_driver): golden byte vectors from the 6.12
//! mlx5_ifc layouts, every validation's status and syndrome, a whole bring-up / traffic / teardown,
//! and seeded random command sequences.

mod cx_fake_driver;
mod sim_util;

use cx_fake_driver::*;
use rsnic_core::hwif::hw::{Coherent, Mmio};
use rsnic_core::sim::mlx5::cmd::{link, synd};
use rsnic_core::sim::mlx5::Caps;
use sim_util::{ctrl, dseg, eseg, udp4_frame, CQ_UPDATE, OP_MPSW, OP_SEND};

#[test]
fn initialization_segment_registers() {
    let tb = rsnic_testbed::bus::Testbed::new();
    let bus = tb.bus();
    // fw_rev: minor in 31..16, major in 15..0; cmdif_rev 5 in 31..16 (cmd.c CMD_IF_REV).
    assert_eq!(bus.read32(0x000), (35 << 16) | 16);
    assert_eq!(bus.read32(0x004) >> 16, 5);
    assert_eq!(bus.read32(FUNC + 0x004) >> 16, 5, "second function");
    assert_eq!(
        bus.read32(0x1fc) >> 31,
        0,
        "not initializing: ready from power-on"
    );
    // A doorbell before the queue address is a bad register write.
    bus.write32(0x018, 1);
    assert_eq!(tb.device().bad_mmio(), 1);
    bus.write32(0x010, 0x1);
    bus.write32(0x014, 0x2345_6000);
    assert_eq!(bus.read32(0x010), 1);
    // Address bits, nic_interface 0, log_cmdq_size 5 (bits 7..4), log_cmdq_stride 6.
    assert_eq!(bus.read32(0x014), 0x2345_6056);
    assert_eq!(bus.read32(0x1fc), 0);
    let h0 = bus.read32(0x1010);
    drop(bus);
    let mut tb = tb;
    tb.step();
    assert_eq!(tb.bus().read32(0x1010), h0 + 1, "health counter advances");
    // Reserved offsets read as a master abort.
    assert_eq!(tb.bus().read32(0x100), u32::MAX);
}

#[test]
fn golden_enable_hca_entry_and_output() {
    let mut h = Host::new(0);
    // ENABLE_HCA input: opcode 0x0104 at bytes 0..2, op_mod 0, function_id 0.
    let input = [0x01, 0x04, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    let e = Entry {
        typ: 7,
        inlen: 16,
        in_ptr: 0,
        inline_in: input,
        out_ptr: 0,
        outlen: 12,
        token: 0x5a,
        status_own: 1,
    };
    let b = e.bytes();
    // mlx5_cmd_layout: type @0, inlen @4 (BE), in[] @0x10, outlen @0x38, token @0x3c,
    // status_own @0x3f.
    assert_eq!(b[0], 7);
    assert_eq!(&b[4..8], &[0, 0, 0, 16]);
    assert_eq!(&b[0x10..0x12], &[0x01, 0x04]);
    assert_eq!(&b[0x38..0x3c], &[0, 0, 0, 12]);
    assert_eq!(b[0x3c], 0x5a);
    assert_eq!(b[0x3f], 1);
    let got = h.ring_entry(&e);
    assert_eq!(got[0x3f], 0, "delivery OK, owned by software");
    assert_eq!(&got[0x20..0x30], &[0u8; 16], "status OK, syndrome 0");
    assert_eq!(
        &got[..0x20],
        &b[..0x20],
        "the device writes only out[] and status_own"
    );
    assert_eq!(&got[0x30..0x3f], &b[0x30..0x3f]);
}

#[test]
fn golden_query_issi_and_hca_caps() {
    let mut h = Host::new(0);
    h.exec(&cmd_in(0x104, 0, 16), 12).ok();
    let issi = h.exec(&cmd_in(0x10a, 0, 16), 0x70).ok();
    // query_issi_out.current_issi (bit 0x50) = 0; supported_issi_dw0 at byte 0x6c = 0b11.
    assert_eq!(&issi.b[0x08..0x0c], &[0, 0, 0, 0]);
    assert_eq!(&issi.b[0x6c..0x70], &[0, 0, 0, 3]);
    // QUERY_HCA_CAP general, current (op_mod = 0 << 1 | 1); capability at byte 0x10.
    let g = h.exec(&cmd_in(0x100, 1, 16), 0x1010).ok();
    let c = &g.b[0x10..];
    assert_eq!(c[0x19], 22, "log_max_cq_sz (bit 0xc8)");
    assert_eq!(c[0x1b] & 0x1f, 6, "log_max_cq (bit 0xdb)");
    assert_eq!(c[0x1c], 22, "log_max_eq_sz (bit 0xe0)");
    assert_eq!(c[0x36] & 0x03, 1, "port_type Ethernet (bit 0x1b6)");
    assert_eq!(c[0x43] & 0x08, 0x08, "eth_net_offloads (bit 0x21c)");
    assert_eq!(c[0x6c] & 0x1f, 6, "log_max_rq (bit 0x363)");
    assert_eq!(c[0x72] & 0x1f, 8, "log_max_rqt_size (bit 0x393)");
    assert_eq!(c[0x34] & 0x02, 0x02, "nic_flow_table (bit 0x1a6)");
    assert_eq!(c[0x7b] & 0x1f, 15, "log_max_wq_sz (bit 0x3db)");
    assert_eq!(c[0xb7] & 0x01, 1, "cqe_compression (bit 0x5bf)");
    // Ethernet offloads (op_mod = 1 << 1 | 1).
    let e = h.exec(&cmd_in(0x100, 3, 16), 0x1010).ok();
    let c = &e.b[0x10..];
    assert_eq!(c[0] & 0x80, 0x80, "csum_cap (bit 0)");
    assert_eq!(c[1] & 0x1f, 16, "max_lso_cap (bit 0xb)");
    assert_eq!(
        (c[2] >> 4) & 3,
        2,
        "wqe_inline_mode NOT_REQUIRED (bit 0x12)"
    );
    assert_eq!(c[2] & 0x0f, 8, "rss_ind_tbl_cap (bit 0x14)");
    assert_eq!(c[3] & 0x20, 0x20, "enhanced_multi_pkt_send_wqe (bit 0x1a)");
    // An unknown capability type.
    expect(
        h.exec(&cmd_in(0x100, 5 << 1 | 1, 16), 0x1010),
        ST_BAD_PARAM,
        synd::CAP_TYPE,
    );
}

#[test]
fn caps_are_reported_and_enforced() {
    let caps = Caps {
        mpwqe: false,
        min_inline: 1,
        cqe_compression: false,
        ..Caps::FULL
    };
    let mut h = Host::with_caps(0, caps);
    h.bring_up();
    let e = h.exec(&cmd_in(0x100, 3, 16), 0x1010).ok();
    assert_eq!(e.b[0x13] & 0x20, 0, "no enhanced MPWQE");
    assert_eq!((e.b[0x12] >> 4) & 3, 0, "wqe_inline_mode L2");
    let g = h.exec(&cmd_in(0x100, 1, 16), 0x1010).ok();
    assert_eq!(g.b[0x10 + 0xb7] & 1, 0, "no CQE compression");
    let uar = h.alloc(0x802);
    let pd = h.alloc(0x800);
    let td = h.alloc(0x816);
    let eq = h.create_eq(4, uar, 0, 0).unwrap();
    expect(
        h.create_cq(4, uar, eq.eqn, true).err().unwrap(),
        ST_BAD_PARAM,
        synd::CQE_COMPRESSION,
    );
    let cq = h.create_cq(4, uar, eq.eqn, false).unwrap();
    let tis = h.exec(&tis_in(td), 16).ok().obj();
    let buf = h.tb.mem.alloc(4096);
    let dbr = h.tb.mem.alloc(8);
    let mut i = sq_in(cq.cqn, tis, pd, uar, dbr.dma_addr(), 6, buf.dma_addr());
    expect(h.exec(&i, 16), ST_BAD_PARAM, synd::MIN_INLINE);
    put(&mut i, 0x105, 3, 1); // sqc.min_wqe_inline_mode = L2
    put(&mut i, 0x104, 1, 1); // sqc.allow_multi_pkt_send_wqe
    expect(h.exec(&i, 16), ST_BAD_PARAM, synd::MULTI_PKT);
    put(&mut i, 0x104, 1, 0);
    let sqn = h.exec(&i, 16).ok().obj();
    h.exec(&modify_in(0x905, sqn, 0, 1), 16).ok();
    // A SEND without an inline Ethernet header: error CQE, SQ in error.
    let data = h.tb.mem.alloc_from(&udp4_frame(20, 1, 2));
    let mut w = Vec::new();
    w.extend_from_slice(&ctrl(OP_SEND, 0, sqn, 3, CQ_UPDATE));
    w.extend_from_slice(&eseg(0, 0, 0, [0, 0]));
    w.extend_from_slice(&dseg(62, 0, data.dma_addr()));
    buf.write(0, &w);
    dbr.write_be32(4, 1);
    h.bus
        .write64(uar * 4096 + 0x800, w[..8].try_into().unwrap());
    h.step();
    let mut cq = cq;
    let c = cq.poll().expect("error CQE");
    assert_eq!(c[63] >> 4, 13, "REQ_ERR");
    let q = h.exec(&obj_in(0x907, sqn), 0x110).ok();
    assert_eq!(getf(&q.b, 0x108, 4), 3, "sqc.state ERR");
    // Recovery ERR -> RST -> RDY; then an MPWQE is a bad opcode on this device.
    h.exec(&modify_in(0x905, sqn, 3, 0), 16).ok();
    h.exec(&modify_in(0x905, sqn, 0, 1), 16).ok();
    let mut w = Vec::new();
    w.extend_from_slice(&ctrl(OP_MPSW, 0, sqn, 3, CQ_UPDATE));
    w.extend_from_slice(&eseg(0, 0, 0, [0, 0]));
    w.extend_from_slice(&dseg(62, 0, data.dma_addr()));
    buf.write(0, &w);
    dbr.write_be32(4, 1);
    h.bus
        .write64(uar * 4096 + 0x800, w[..8].try_into().unwrap());
    h.step();
    let c = cq.poll().expect("error CQE");
    assert_eq!(c[63] >> 4, 13, "REQ_ERR");
    assert_eq!(c[54], 1, "vendor reason: bad opcode");
}

/// A function set up with UAR, PD, TD, an EQ (vector `intr`, port events) and a CQ.
struct Func {
    uar: u32,
    pd: u32,
    td: u32,
    eq: Eq,
    cq: Cq,
}

fn func(h: &mut Host, port: usize, intr: u16) -> Func {
    h.port = port;
    let (uar, pd, td) = h.bring_up_with_objects();
    assert_eq!(uar, 8, "first UAR index");
    let eq = h.create_eq(6, uar, intr, 1 << 9).unwrap();
    h.eq_doorbell(&eq, true);
    let cq = h.create_cq(6, uar, eq.eqn, false).unwrap();
    Func {
        uar,
        pd,
        td,
        eq,
        cq,
    }
}

#[test]
fn bring_up_channels_traffic_and_teardown_through_commands() {
    let mut h = Host::new(0);
    let mut f0 = func(&mut h, 0, 3);
    let mut f1 = func(&mut h, 1, 5);
    // Port 0: TIS + SQ.
    h.port = 0;
    let tis = h.exec(&tis_in(f0.td), 16).ok().obj();
    let sq = h.tb.mem.alloc(4096);
    let sq_dbr = h.tb.mem.alloc(8);
    let sqn = h
        .exec(
            &sq_in(
                f0.cq.cqn,
                tis,
                f0.pd,
                f0.uar,
                sq_dbr.dma_addr(),
                6,
                sq.dma_addr(),
            ),
            16,
        )
        .ok()
        .obj();
    let q = h.exec(&obj_in(0x907, sqn), 0x110).ok();
    assert_eq!(getf(&q.b, 0x108, 4), 0, "created in RST");
    h.exec(&modify_in(0x905, sqn, 0, 1), 16).ok();
    // Port 1: RQ + RQT + TIR.
    h.port = 1;
    let (rqn, rq, rq_dbr) = h.ready_rq(f1.cq.cqn, f1.pd);
    let rqtn = h.exec(&rqt_in(&[rqn]), 16).ok().obj();
    let key = [0x6du8; 40];
    let tirn = h.exec(&tir_in(rqtn, f1.td, &key), 16).ok().obj();
    let rx_buf = h.tb.mem.alloc(2048);
    // All 64 WQEs posted (flow control holds the sender while fewer than 32 are).
    for i in 0..64 {
        rq.write(i * 16, &dseg(2048 | 0x8000_0000, 0x1234, rx_buf.dma_addr()));
    }
    rq_dbr.write_be32(0, 64);
    // Arm both CQs; EQs are armed already.
    h.port = 0;
    h.cq_arm(&f0.cq, f0.uar, 0);
    h.port = 1;
    h.cq_arm(&f1.cq, f1.uar, 0);
    h.tb.take_irqs();
    // One SEND on port 0's SQ through its UAR page.
    let frame = udp4_frame(100, 7, 9);
    let data = h.tb.mem.alloc_from(&frame);
    let mut w = Vec::new();
    w.extend_from_slice(&ctrl(OP_SEND, 0, sqn, 3, CQ_UPDATE));
    w.extend_from_slice(&eseg(0, 0, 0, [0, 0]));
    w.extend_from_slice(&dseg(frame.len() as u32, 0, data.dma_addr()));
    sq.write(0, &w);
    sq_dbr.write_be32(4, 1);
    h.bus
        .write64(f0.uar * 4096 + 0x800, w[..8].try_into().unwrap());
    h.step();
    let tx = f0.cq.poll().expect("TX CQE");
    assert_eq!(tx[63] >> 4, 0, "REQ");
    let rx = f1.cq.poll().expect("RX CQE");
    assert_eq!(rx[63] >> 4, 2, "RESP_SEND");
    assert_eq!(&rx_buf.to_vec()[..frame.len()], &frame[..]);
    // CQ -> completion EQE (type 0, cqn at byte 0x38) -> EQ vector (function * 64 + intr).
    let e0 = f0.eq.poll().expect("EQE port 0");
    assert_eq!(e0[1], 0, "MLX5_EVENT_TYPE_COMP");
    assert_eq!(
        u32::from_be_bytes(e0[0x38..0x3c].try_into().unwrap()),
        f0.cq.cqn
    );
    assert_eq!(e0[63] & 1, 0, "first pass owner 0");
    let e1 = f1.eq.poll().expect("EQE port 1");
    assert_eq!(
        u32::from_be_bytes(e1[0x38..0x3c].try_into().unwrap()),
        f1.cq.cqn
    );
    assert!(f0.eq.poll().is_none());
    let mut irqs = h.tb.take_irqs();
    irqs.sort();
    assert_eq!(irqs, vec![3, 64 + 5]);
    // Counters by command.
    h.port = 0;
    let c = h.exec(&cmd_in(0x770, 0, 0x20), 0x210).ok();
    assert_eq!(
        u64::from_be_bytes(c.b[0xa0..0xa8].try_into().unwrap()),
        1,
        "tx ucast"
    );
    assert_eq!(
        u64::from_be_bytes(c.b[0xa8..0xb0].try_into().unwrap()),
        frame.len() as u64
    );
    h.port = 1;
    let c = h.exec(&cmd_in(0x770, 0, 0x20), 0x210).ok();
    assert_eq!(
        u64::from_be_bytes(c.b[0x90..0x98].try_into().unwrap()),
        1,
        "rx ucast"
    );
    let q = h.exec(&obj_in(0x90b, rqn), 0x110).ok();
    assert_eq!(getf(&q.b, 0x108, 4), 1, "RQ RDY");
    assert_eq!(getf(&q.b, 0x340, 32), 1, "hw_counter: one WQE used");
    // Teardown: objects in use are refused, then everything goes in order.
    expect(h.exec(&obj_in(0x90a, rqn), 16), ST_BUSY, synd::RQ_IN_USE);
    expect(h.exec(&obj_in(0x918, rqtn), 16), ST_BUSY, synd::RQT_IN_USE);
    expect(
        h.exec(&obj_in(0x401, f1.cq.cqn), 16),
        ST_BUSY,
        synd::CQ_IN_USE,
    );
    h.exec(&obj_in(0x902, tirn), 16).ok();
    h.exec(&obj_in(0x918, rqtn), 16).ok();
    h.exec(&obj_in(0x90a, rqn), 16).ok();
    expect(
        h.exec(&obj_in(0x90a, rqn), 16),
        ST_BAD_RESOURCE,
        synd::BAD_RQ,
    );
    let mut d = cmd_in(0x302, 0, 16);
    put(&mut d, 0x58, 8, u64::from(f1.eq.eqn));
    expect(h.exec(&d, 16), ST_BUSY, synd::EQ_IN_USE);
    h.exec(&obj_in(0x401, f1.cq.cqn), 16).ok();
    h.exec(&d, 16).ok();
    expect(h.exec(&obj_in(0x803, f1.uar), 16), 0, 0);
    h.exec(&cmd_in(0x103, 0, 16), 16).ok();
    h.exec(&cmd_in(0x105, 0, 16), 12).ok();
    h.port = 0;
    expect(
        h.exec(&obj_in(0x401, f0.cq.cqn), 16),
        ST_BUSY,
        synd::CQ_IN_USE,
    );
    expect(h.exec(&obj_in(0x914, tis), 16), ST_BUSY, synd::TIS_IN_USE);
    expect(
        h.exec(&obj_in(0x817, f0.td), 16),
        ST_BUSY,
        synd::ALLOC_IN_USE,
    );
    h.exec(&obj_in(0x906, sqn), 16).ok();
    expect(
        h.exec(&obj_in(0x906, sqn), 16),
        ST_BAD_RESOURCE,
        synd::BAD_SQ,
    );
    // TEARDOWN_HCA frees the rest, as firmware does.
    h.exec(&cmd_in(0x103, 0, 16), 16).ok();
    expect(
        h.exec(&obj_in(0x401, f0.cq.cqn), 16),
        ST_BAD_SYS_STATE,
        synd::WRONG_HCA_STATE,
    );
    h.exec(&cmd_in(0x102, 0, 0x20), 16).ok();
    expect(
        h.exec(&obj_in(0x401, f0.cq.cqn), 16),
        ST_BAD_RESOURCE,
        synd::BAD_CQ,
    );
    let t = h.tb.totals();
    assert_eq!(t.cmd_delivery_errors, 0);
    assert!(t.commands > 40);
    let _ = &mut f0.eq;
}

#[test]
fn delivery_errors() {
    let mut h = Host::new(0);
    let token = 9;
    let good = |h: &Host, input: &[u8], outlen: usize| h.entry(input, outlen, token);
    let issi = cmd_in(0x10a, 0, 16);
    let long = cmd_in(0x10a, 0, 600); // two input mailboxes
                                      // Bad type: MLX5_CMD_DELIVERY_STAT_CMD_DESCR_ERR.
    let (mut e, _i, _o) = good(&h, &issi, 0x70);
    e.typ = 3;
    assert_eq!(h.ring_entry(&e)[63], 0x10 << 1);
    // Lengths below a header.
    let (mut e, _i, _o) = good(&h, &issi, 0x70);
    e.inlen = 4;
    assert_eq!(h.ring_entry(&e)[63], 0x7 << 1);
    let (mut e, _i, _o) = good(&h, &issi, 0x70);
    e.outlen = 4;
    assert_eq!(h.ring_entry(&e)[63], 0x8 << 1);
    let (mut e, _i, _o) = good(&h, &issi, 0x70);
    e.inlen = 0x7fff_ffff;
    assert_eq!(h.ring_entry(&e)[63], 0x7 << 1);
    // Input pointers: null, misaligned.
    let (mut e, _i, _o) = good(&h, &long, 0x70);
    e.in_ptr = 0;
    assert_eq!(h.ring_entry(&e)[63], 0x5 << 1);
    let (mut e, _i, _o) = good(&h, &long, 0x70);
    e.in_ptr += 4;
    assert_eq!(h.ring_entry(&e)[63], 0x5 << 1);
    // Output pointer unmapped.
    let (mut e, _i, _o) = good(&h, &issi, 0x70);
    e.out_ptr = 0x40;
    assert_eq!(h.ring_entry(&e)[63], 0x4 << 1);
    // Token of the second input block wrong; block numbers out of order.
    let (e, i, _o) = good(&h, &long, 0x70);
    i[1].write(MB_TOKEN, &[token + 1]);
    assert_eq!(h.ring_entry(&e)[63], 0x2 << 1);
    let (e, i, _o) = good(&h, &long, 0x70);
    i[1].write(MB_BLOCK_NUM, &7u32.to_be_bytes());
    assert_eq!(h.ring_entry(&e)[63], 0x3 << 1);
    let (e, _i, o) = good(&h, &issi, 0x70);
    o[0].write(MB_TOKEN, &[0]);
    assert_eq!(h.ring_entry(&e)[63], 0x2 << 1);
    // An entry software still owns is not executed or written.
    let (mut e, _i, _o) = good(&h, &issi, 0x70);
    e.status_own = 0;
    let got = h.ring_entry(&e);
    assert_eq!(got, e.bytes());
    assert_eq!(h.tb.counters(0).cmd_delivery_errors, 11);
    assert_eq!(h.tb.counters(0).commands, 0);
    // A good one still works afterwards (ENABLE_HCA, then QUERY_ISSI over two blocks).
    h.exec(&cmd_in(0x104, 0, 16), 12).ok();
    let (e, _i, o) = good(&h, &long, 0x70);
    assert_eq!(h.ring_entry(&e)[63], 0);
    let mut b = [0u8; 4];
    o[0].read(0x6c - 16, &mut b);
    assert_eq!(b, [0, 0, 0, 3]);
}

#[test]
fn command_errors_carry_status_and_syndrome() {
    let mut h = Host::new(0);
    expect(
        h.exec(&cmd_in(0x999, 0, 16), 16),
        ST_BAD_OP,
        synd::UNKNOWN_OPCODE,
    );
    expect(
        h.exec(&cmd_in(0x102, 0, 0x20), 16),
        ST_BAD_SYS_STATE,
        synd::WRONG_HCA_STATE,
    );
    expect(
        h.exec(&cmd_in(0x104, 1, 16), 12),
        ST_BAD_OP,
        synd::BAD_OP_MOD,
    );
    let mut i = cmd_in(0x104, 0, 16);
    put(&mut i, 0x50, 16, 3); // function_id
    expect(h.exec(&i, 12), ST_BAD_PARAM, synd::FUNCTION_ID);
    h.exec(&cmd_in(0x104, 0, 16), 12).ok();
    expect(
        h.exec(&cmd_in(0x104, 0, 16), 12),
        ST_BAD_SYS_STATE,
        synd::WRONG_HCA_STATE,
    );
    expect(
        h.exec(&cmd_in(0x100, 1, 16), 16),
        ST_BAD_OUT_LEN,
        synd::OUTPUT_TOO_SHORT,
    );
    expect(
        h.exec(&cmd_in(0x102, 0, 16), 16),
        ST_BAD_IN_LEN,
        synd::INPUT_TOO_SHORT,
    );
    let mut i = cmd_in(0x10b, 0, 16);
    put(&mut i, 0x50, 16, 2);
    expect(h.exec(&i, 16), ST_BAD_PARAM, synd::ISSI);
    expect(
        h.exec(&cmd_in(0x400, 0, 0x110), 16),
        ST_BAD_SYS_STATE,
        synd::WRONG_HCA_STATE,
    );
    h.exec(&cmd_in(0x102, 0, 0x20), 16).ok();
    let mut t = cmd_in(0x103, 0, 16);
    put(&mut t, 0x50, 16, 1); // profile: force close
    expect(h.exec(&t, 16), ST_BAD_PARAM, synd::TEARDOWN_PROFILE);
    expect(
        h.exec(&cmd_in(0x105, 0, 16), 12),
        ST_BAD_SYS_STATE,
        synd::WRONG_HCA_STATE,
    );
    let uar = h.alloc(0x802);
    let pd = h.alloc(0x800);
    let td = h.alloc(0x816);
    expect(
        h.exec(&obj_in(0x803, 77), 16),
        ST_BAD_RESOURCE,
        synd::BAD_UAR,
    );
    // EQs.
    let b = h.tb.mem.alloc(4096).dma_addr();
    expect(
        h.exec(&eq_in(0, uar, 0, 0, b), 16),
        ST_BAD_PARAM,
        synd::EQ_SIZE,
    );
    expect(
        h.exec(&eq_in(4, uar, 64, 0, b), 16),
        ST_BAD_PARAM,
        synd::EQ_INTR,
    );
    expect(
        h.exec(&eq_in(4, 9, 0, 0, b), 16),
        ST_BAD_RESOURCE,
        synd::BAD_UAR,
    );
    expect(
        h.exec(&eq_in(4, uar, 0, 0, b + 64), 16),
        ST_BAD_PARAM,
        synd::PAS_ALIGN,
    );
    let mut i = eq_in(4, uar, 0, 0, b);
    i.truncate(0x110);
    expect(h.exec(&i, 16), ST_BAD_IN_LEN, synd::PAS_TOO_SHORT);
    let mut i = eq_in(4, uar, 0, 0, b);
    put(&mut i, 0xd4, 6, 1); // page_offset
    expect(h.exec(&i, 16), ST_BAD_PARAM, synd::PAGE_OFFSET);
    let eq = h.create_eq(4, uar, 0, 0).unwrap();
    // CQs.
    let cb = h.tb.mem.alloc(2 * 4096);
    let dbr = h.tb.mem.alloc(8).dma_addr();
    let mut i = cq_in(7, uar, eq.eqn, false, cb.dma_addr(), dbr);
    expect(h.exec(&i, 16), 0, 0); // two contiguous pages
    i[0x118..0x120].copy_from_slice(&(cb.dma_addr() + 3 * 4096).to_be_bytes());
    expect(h.exec(&i, 16), 0, 0); // a page list (sim_pages.rs has its addressing)
    let i = cq_in(4, uar, eq.eqn + 1, false, cb.dma_addr(), dbr);
    expect(h.exec(&i, 16), ST_BAD_RESOURCE, synd::BAD_EQ);
    let i = cq_in(4, uar, eq.eqn, false, cb.dma_addr(), dbr + 4);
    expect(h.exec(&i, 16), ST_BAD_PARAM, synd::DBR_ALIGN);
    let mut i = cq_in(4, uar, eq.eqn, false, cb.dma_addr(), dbr);
    put(&mut i, 0xe3, 5, 23); // log_cq_size above log_max_cq_sz
    expect(h.exec(&i, 16), ST_BAD_PARAM, synd::CQ_SIZE);
    let mut i = cq_in(4, uar, eq.eqn, false, cb.dma_addr(), dbr);
    put(&mut i, 0x88, 3, 1); // cqe_sz 128
    expect(h.exec(&i, 16), ST_BAD_PARAM, synd::CQE_SIZE);
    let cq = h.create_cq(4, uar, eq.eqn, true).unwrap();
    // SQs.
    let tis = h.exec(&tis_in(td), 16).ok().obj();
    expect(h.exec(&tis_in(td + 1), 16), ST_BAD_RESOURCE, synd::BAD_TD);
    let sb = h.tb.mem.alloc(4096).dma_addr();
    let sd = h.tb.mem.alloc(8).dma_addr();
    let ok = sq_in(cq.cqn, tis, pd, uar, sd, 6, sb);
    let mut i = ok.clone();
    put(&mut i, 0x108, 4, 1);
    expect(h.exec(&i, 16), ST_BAD_PARAM, synd::CREATE_STATE);
    let mut i = ok.clone();
    put(&mut i, 0x280, 4, 0);
    expect(h.exec(&i, 16), ST_BAD_PARAM, synd::WQ_TYPE);
    let mut i = ok.clone();
    put(&mut i, 0x38c, 4, 7);
    expect(h.exec(&i, 16), ST_BAD_PARAM, synd::WQ_STRIDE);
    let mut i = ok.clone();
    put(&mut i, 0x39b, 5, 16);
    expect(h.exec(&i, 16), ST_BAD_PARAM, synd::WQ_SIZE);
    let i = sq_in(cq.cqn + 1, tis, pd, uar, sd, 6, sb);
    expect(h.exec(&i, 16), ST_BAD_RESOURCE, synd::BAD_CQ);
    let i = sq_in(cq.cqn, tis + 1, pd, uar, sd, 6, sb);
    expect(h.exec(&i, 16), ST_BAD_RESOURCE, synd::BAD_TIS);
    let i = sq_in(cq.cqn, tis, pd + 1, uar, sd, 6, sb);
    expect(h.exec(&i, 16), ST_BAD_RESOURCE, synd::BAD_PD);
    let sqn = h.exec(&ok, 16).ok().obj();
    // State machine.
    expect(
        h.exec(&modify_in(0x905, sqn, 1, 3), 16),
        ST_BAD_RES_STATE,
        synd::CUR_STATE,
    );
    expect(
        h.exec(&modify_in(0x905, sqn, 0, 3), 16),
        ST_BAD_RES_STATE,
        synd::TRANSITION,
    );
    h.exec(&modify_in(0x905, sqn, 0, 1), 16).ok();
    h.exec(&modify_in(0x905, sqn, 1, 3), 16).ok();
    expect(
        h.exec(&modify_in(0x905, sqn, 3, 1), 16),
        ST_BAD_RES_STATE,
        synd::TRANSITION,
    );
    h.exec(&modify_in(0x905, sqn, 3, 0), 16).ok();
    let mut i = modify_in(0x905, sqn, 0, 1);
    i[0x17] = 1; // modify_bitmask
    expect(h.exec(&i, 16), ST_BAD_PARAM, synd::MODIFY_BITMASK);
    expect(
        h.exec(&modify_in(0x905, 0xff_ffff, 0, 1), 16),
        ST_BAD_RESOURCE,
        synd::BAD_SQ,
    );
    expect(
        h.exec(&obj_in(0x907, 0x1234), 0x110),
        ST_BAD_RESOURCE,
        synd::BAD_SQ,
    );
    // RQs, RQTs, TIRs.
    let rb = h.tb.mem.alloc(4096).dma_addr();
    let mut i = rq_in(cq.cqn, pd, sd, 4, 6, rb);
    put(&mut i, 0x104, 4, 1); // mem_rq_type RMP
    expect(h.exec(&i, 16), ST_BAD_PARAM, synd::MEM_RQ_TYPE);
    expect(
        h.exec(&rq_in(cq.cqn, pd, sd, 9, 6, rb), 16),
        ST_BAD_PARAM,
        synd::WQ_STRIDE,
    );
    let rqn = h.exec(&rq_in(cq.cqn, pd, sd, 4, 6, rb), 16).ok().obj();
    expect(h.exec(&rqt_in(&[]), 16), ST_BAD_PARAM, synd::RQT_SIZE);
    expect(
        h.exec(&rqt_in(&[rqn + 1]), 16),
        ST_BAD_RESOURCE,
        synd::BAD_RQ,
    );
    // log_max_rqt_size 8: 256 entries, not 257.
    let big: Vec<u32> = vec![rqn; 257];
    expect(h.exec(&rqt_in(&big), 16), ST_BAD_PARAM, synd::RQT_SIZE);
    let rqtn = h.exec(&rqt_in(&[rqn; 256]), 16).ok().obj();
    let key = [1u8; 40];
    let mut i = tir_in(rqtn, td, &key);
    put(&mut i, 0x220, 4, 0); // no hash function
    expect(h.exec(&i, 16), ST_BAD_PARAM, synd::TIR_HASH);
    let mut i = tir_in(rqtn, td, &key);
    put(&mut i, 0x120, 4, 2);
    expect(h.exec(&i, 16), ST_BAD_PARAM, synd::TIR_DISP_TYPE);
    expect(
        h.exec(&tir_in(rqtn + 1, td, &key), 16),
        ST_BAD_RESOURCE,
        synd::BAD_RQT,
    );
    let tir = h.exec(&tir_in(rqtn, td, &key), 16).ok().obj();
    let mut m = cmd_in(0x917, 0, 0x114);
    put(&mut m, 0x48, 24, u64::from(rqtn));
    put(&mut m, 0x1d0, 16, 1);
    m[0x110..0x114].copy_from_slice(&rqn.to_be_bytes());
    h.exec(&m, 16).ok(); // bitmask.rqn_list not required
    put(&mut m, 0xbf, 1, 1); // bitmask.rqn_list
    h.exec(&m, 16).ok();
    put(&mut m, 0xbe, 1, 1); // an unknown bitmask bit
    expect(h.exec(&m, 16), ST_BAD_PARAM, synd::RQT_BITMASK);
    expect(
        h.exec(&obj_in(0x902, tir + 1), 16),
        ST_BAD_RESOURCE,
        synd::BAD_TIR,
    );
    // Vport context and registers.
    let q = h.exec(&cmd_in(0x754, 0, 16), 0x110).ok();
    assert_eq!(getf(&q.b, 0x80 + 0x130, 16), 1522, "default hardware MTU");
    assert_eq!(
        &q.b[0x106..0x10c],
        &[0x02, 0, 0, 0, 0, 0x01],
        "default MAC of port 0"
    );
    let mut v = cmd_in(0x755, 0, 0x200);
    put(&mut v, 0x72, 1, 1); // field_select.affiliation: not one the model takes
    expect(h.exec(&v, 16), ST_BAD_PARAM, synd::FIELD_SELECT);
    let mut v = cmd_in(0x755, 0, 0x200);
    put(&mut v, 0x79, 1, 1); // field_select.mtu
    put(&mut v, 0x930, 16, 20_000); // nic_vport_context.mtu
    expect(h.exec(&v, 16), ST_BAD_PARAM, synd::MTU);
    put(&mut v, 0x930, 16, 9018);
    put(&mut v, 0x7c, 1, 1); // field_select.permanent_address
    v[0x1f6..0x1fc].copy_from_slice(&[0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee]);
    h.exec(&v, 16).ok();
    let q = h.exec(&cmd_in(0x754, 0, 16), 0x110).ok();
    assert_eq!(getf(&q.b, 0x80 + 0x130, 16), 9018, "mtu");
    assert_eq!(&q.b[0x106..0x10c], &[0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee]);
    let mut v = cmd_in(0x754, 0, 16);
    put(&mut v, 0x40, 1, 1); // other_vport
    expect(h.exec(&v, 0x110), ST_BAD_PARAM, synd::OTHER_FUNCTION);
    expect(
        h.exec(&reg_in(0x5001, false, &[0; 16]), 32),
        ST_BAD_PARAM,
        synd::REGISTER_ID,
    );
    let mut r = paos(3);
    expect(
        h.exec(&reg_in(0x5006, true, &r), 32),
        ST_BAD_PARAM,
        synd::ADMIN_STATUS,
    );
    put(&mut r, 0x8, 8, 2);
    expect(
        h.exec(&reg_in(0x5006, true, &r), 32),
        ST_BAD_PARAM,
        synd::LOCAL_PORT,
    );
    expect(
        h.exec(&reg_in(0x5006, true, &paos(1)[..8]), 32),
        ST_BAD_IN_LEN,
        synd::REG_LENGTH,
    );
    expect(
        h.exec(&reg_in(0x5006, false, &paos(1)), 24),
        ST_BAD_OUT_LEN,
        synd::REG_LENGTH,
    );
    let mut pl = vec![0u8; 8];
    put(&mut pl, 0x8, 8, 1);
    put(&mut pl, 0x38, 8, 8); // no such loopback mode
    expect(
        h.exec(&reg_in(0x5018, true, &pl), 24),
        ST_BAD_PARAM,
        synd::LOOPBACK_MODE,
    );
    // Injected failure.
    h.tb.device().fail_command(0, Some(0x802)).unwrap();
    expect(h.exec(&cmd_in(0x802, 0, 16), 16), 0x1, synd::INJECTED);
    h.tb.device().fail_command(0, None).unwrap();
    h.alloc(0x802);
    assert_eq!(h.tb.counters(0).cmd_delivery_errors, 0);
}

/// An SQ (RDY) of function `port` on its CQ: (sqn, ring, doorbell record).
fn make_sq(
    h: &mut Host,
    f: &Func,
) -> (
    u32,
    rsnic_testbed::mem::HostBuf,
    rsnic_testbed::mem::HostBuf,
) {
    let tis = h.exec(&tis_in(f.td), 16).ok().obj();
    let (sqn, sq, dbr) = h.ready_sq(f.cq.cqn, tis, f.pd, f.uar);
    (sqn, sq, dbr)
}

/// Posts SEND WQE `pc` (no CQE requested) carrying `frame` and rings it.
fn send(
    h: &mut Host,
    f: &Func,
    sq: &(
        u32,
        rsnic_testbed::mem::HostBuf,
        rsnic_testbed::mem::HostBuf,
    ),
    pc: u16,
    frame: &[u8],
) {
    let data = h.tb.mem.alloc_from(frame);
    let mut w = Vec::new();
    w.extend_from_slice(&ctrl(OP_SEND, pc, sq.0, 3, 0));
    w.extend_from_slice(&eseg(0, 0, 0, [0, 0]));
    w.extend_from_slice(&dseg(frame.len() as u32, 0, data.dma_addr()));
    sq.1.write((usize::from(pc) % 64) * 64, &w);
    sq.2.write_be32(4, u32::from(pc) + 1);
    h.bus
        .write64(h.reg(f.uar * 4096 + 0x800), w[..8].try_into().unwrap());
    h.step();
}

#[test]
fn rss_follows_the_first_indirect_tir_and_its_key() {
    let mut h = Host::new(1);
    let mut f = func(&mut h, 1, 0);
    let mut rqns = Vec::new();
    for _ in 0..4 {
        let (rqn, rq, dbr) = h.posted_rq(f.cq.cqn, f.pd);
        rqns.push((rqn, rq, dbr));
    }
    let list: Vec<u32> = rqns.iter().map(|r| r.0).collect();
    let rqtn = h.exec(&rqt_in(&list), 16).ok().obj();
    // Port 1 loops back to itself (PPLR lb_en = phy local loopback).
    let mut pl = vec![0u8; 8];
    put(&mut pl, 0x8, 8, 1);
    put(&mut pl, 0x38, 8, 2);
    let r = h.exec(&reg_in(0x5018, true, &pl), 24).ok();
    assert_eq!(r.b[16 + 7], 2, "lb_en");
    assert_eq!(r.b[16 + 5], 2, "lb_cap");
    assert!(h.tb.device().loopback(1));
    let sq = make_sq(&mut h, &f);
    // No TIR yet: dropped.
    send(&mut h, &f, &sq, 0, &udp4_frame(10, 1, 2));
    assert_eq!(h.tb.counters(1).rx_no_rq_drops, 1);
    let key = rsnic_core::sim::pkt::RSS_KEY;
    let tir = h.exec(&tir_in(rqtn, f.td, &key), 16).ok().obj();
    h.exec(&tir_in(rqtn, f.td, &[0; 40]), 16).ok();
    let mut pc = 1;
    for sport in 0..8u16 {
        let frame = udp4_frame(10, 1000 + sport, 2);
        send(&mut h, &f, &sq, pc, &frame);
        pc += 1;
        let c = f.cq.poll().expect("RX CQE");
        let hash = u32::from_be_bytes(c[12..16].try_into().unwrap());
        // Toeplitz over src/dst address and ports (IPv4 UDP).
        let mut t = Vec::new();
        t.extend_from_slice(&frame[26..34]);
        t.extend_from_slice(&frame[34..38]);
        assert_eq!(hash, rsnic_core::sim::pkt::toeplitz(&key, &t));
        assert_ne!(hash, 0);
    }
    // The first TIR goes: the second (an all-zero key) takes over.
    h.exec(&obj_in(0x902, tir), 16).ok();
    send(&mut h, &f, &sq, pc, &udp4_frame(10, 5, 6));
    let c = f.cq.poll().expect("RX CQE");
    assert_eq!(&c[12..16], &[0, 0, 0, 0], "hash under a zero key");
    let _ = &mut f.eq;
}

/// The input builders against literal bytes: each field's byte position worked out by hand
/// from mlx5_ifc.h (bit offset / 8, and the bits inside the byte for narrow fields).
#[test]
fn golden_create_inputs_byte_by_byte() {
    // create_cq_in: log_cq_size bit 0xe3 = byte 0x1c bits 4..0; uar_page bit 0xe8 = bytes
    // 0x1d..0x20; c_eqn bit 0x120 = bytes 0x24..0x28; cqe_comp_en bit 0x91 = byte 0x12 0x40;
    // mini_cqe_res_format bit 0x92 = byte 0x12 bits 5..4; dbr_addr byte 0x48; pas[0] 0x110.
    let i = cq_in(6, 0x12_3456, 0x41, true, 0x1_0000_2000, 0xabc0);
    let mut want = vec![0u8; 0x118];
    want[0] = 0x04; // opcode 0x400
    want[0x12] = 0x40 | 0x10;
    want[0x1c] = 6;
    want[0x1d..0x20].copy_from_slice(&[0x12, 0x34, 0x56]);
    want[0x27] = 0x41;
    want[0x48..0x50].copy_from_slice(&0xabc0u64.to_be_bytes());
    want[0x110..0x118].copy_from_slice(&0x1_0000_2000u64.to_be_bytes());
    assert_eq!(i, want);
    // create_eq_in: log_eq_size byte 0x1c, uar_page 0x1d..0x20, intr bit 0x134 = byte 0x26
    // bits 3..0 and byte 0x27; event_bitmask[0] bytes 0x58..0x60 (bit 9 = byte 0x5e 0x02).
    let i = eq_in(6, 9, 0x1a5, 1 << 9, 0x2_0000_0000);
    let mut want = vec![0u8; 0x118];
    want[0..2].copy_from_slice(&[0x03, 0x01]);
    want[0x1c] = 6;
    want[0x1f] = 9;
    want[0x26] = 0x01;
    want[0x27] = 0xa5;
    want[0x5e] = 0x02;
    want[0x110..0x118].copy_from_slice(&0x2_0000_0000u64.to_be_bytes());
    assert_eq!(i, want);
    // create_sq_in (sqc at 0x20, wq at 0x50): cqn bit 0x148 = bytes 0x29..0x2c; tis_lst_sz
    // bytes 0x40..0x42; tis_num_0 bytes 0x4d..0x50; wq_type byte 0x50 high nibble; pd bytes
    // 0x59..0x5c; uar_page bytes 0x5d..0x60; dbr_addr 0x60; log_wq_stride byte 0x71 low
    // nibble; log_wq_sz byte 0x73 bits 4..0.
    let i = sq_in(0x3001, 0x4002, 0x7003, 8, 0x5000, 6, 0x9000);
    let mut want = vec![0u8; 0x118];
    want[0..2].copy_from_slice(&[0x09, 0x04]);
    want[0x29..0x2c].copy_from_slice(&[0x00, 0x30, 0x01]);
    want[0x40..0x42].copy_from_slice(&[0, 1]);
    want[0x4d..0x50].copy_from_slice(&[0x00, 0x40, 0x02]);
    want[0x50] = 0x10;
    want[0x59..0x5c].copy_from_slice(&[0x00, 0x70, 0x03]);
    want[0x5f] = 8;
    want[0x60..0x68].copy_from_slice(&0x5000u64.to_be_bytes());
    want[0x71] = 6;
    want[0x73] = 6;
    want[0x110..0x118].copy_from_slice(&0x9000u64.to_be_bytes());
    assert_eq!(i, want);
    // modify_sq_in: sq_state bit 0x40 = byte 8 high nibble, sqn bytes 9..0xc, new state
    // (ctx.state bit 0x108) byte 0x21 high nibble.
    let i = modify_in(0x905, 0x1005, 3, 0);
    assert_eq!(&i[..0x22], &{
        let mut w = [0u8; 0x22];
        w[0..2].copy_from_slice(&[0x09, 0x05]);
        w[8] = 0x30;
        w[9..0xc].copy_from_slice(&[0x00, 0x10, 0x05]);
        w
    });
    // create_tir_in (tirc at 0x20): disp_type byte 0x24 high nibble; indirect_table bytes
    // 0x41..0x44; rx_hash_fn byte 0x44 high nibble; transport_domain bytes 0x45..0x48;
    // Toeplitz key bytes 0x48..0x70.
    let i = tir_in(0x5001, 0x8002, &[0xee; 40]);
    let mut want = vec![0u8; 0x110];
    want[0..2].copy_from_slice(&[0x09, 0x00]);
    want[0x24] = 0x10;
    want[0x41..0x44].copy_from_slice(&[0x00, 0x50, 0x01]);
    want[0x44] = 0x20;
    want[0x45..0x48].copy_from_slice(&[0x00, 0x80, 0x02]);
    want[0x48..0x70].fill(0xee);
    assert_eq!(i, want);
    // create_rqt_in (rqtc at 0x20): rqt_max_size bytes 0x36..0x38, rqt_actual_size bytes
    // 0x3a..0x3c, rq_num[] from 0x110.
    let i = rqt_in(&[0x2001, 0x2002]);
    let mut want = vec![0u8; 0x118];
    want[0..2].copy_from_slice(&[0x09, 0x16]);
    want[0x37] = 2;
    want[0x3b] = 2;
    want[0x110..0x118].copy_from_slice(&[0, 0, 0x20, 0x01, 0, 0, 0x20, 0x02]);
    assert_eq!(i, want);
    // PAOS: local_port byte 1, admin_status byte 2 low nibble, ase byte 4 bit 7.
    assert_eq!(paos(2), {
        let mut w = vec![0u8; 16];
        w[1] = 1;
        w[2] = 2;
        w[4] = 0x80;
        w
    });
    // And the device's answers to them, byte by byte.
    let mut h = Host::new(0);
    h.bring_up();
    let uar = h.alloc(0x802);
    let o = h.exec(&cmd_in(0x802, 0, 16), 16).ok();
    assert_eq!(
        &o.b,
        &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, uar as u8 + 1, 0, 0, 0, 0]
    );
    let pd = h.exec(&cmd_in(0x800, 0, 16), 16).ok();
    assert_eq!(
        &pd.b[8..12],
        &[0, 0, 0x70, 0x00],
        "alloc_pd_out.pd (bit 0x48)"
    );
    let eq = h
        .exec(&eq_in(4, uar, 0, 0, h.tb.mem.alloc(4096).dma_addr()), 16)
        .ok();
    assert_eq!(
        &eq.b[8..12],
        &[0, 0, 0, 0x40],
        "create_eq_out.eq_number (bit 0x58)"
    );
    let st = h.exec(&cmd_in(0x750, 0, 16), 16).ok();
    // query_vport_state_out: admin_state byte 0xf high nibble, state low nibble.
    assert_eq!(st.b[0xf], 0x11);
    let r = h.exec(&reg_in(0x5006, false, &paos(0)), 32).ok();
    assert_eq!(
        &r.b[16..21],
        &[0, 1, 1, 1, 0],
        "PAOS: local_port, admin, oper up"
    );
}

/// The kernel builds its tables entry by entry on its stack: every entry stays small.
#[test]
fn table_entries_stay_small() {
    use rsnic_core::sim::mlx5::{Port, QueueSet};
    let (p, q) = (size_of::<Port>(), size_of::<QueueSet>());
    // A Port carries the function's command state (firmware pages, vport filter lists, Q
    // counters, keys) besides its counters: 1.5 KiB, pushed once per port at creation.
    assert!(p < 1536, "Port is {p} bytes");
    assert!(q < 1024, "QueueSet is {q} bytes");
    println!("Port {p} B, QueueSet {q} B");
}

/// A command queue at an address that maps to nothing, or at the very top of the bus
/// address space: every rung entry is a counted fault, never a panic.
#[test]
fn command_queue_anywhere_never_panics() {
    let mut tb = rsnic_testbed::bus::Testbed::new();
    let bus = tb.bus();
    for (h, l) in [(0xffff_ffffu32, 0xffff_f000u32), (0, 0), (0x1234, 0x5000)] {
        bus.write32(0x10, h);
        bus.write32(0x14, l);
        bus.write32(0x18, u32::MAX);
        tb.step();
    }
    assert_eq!(tb.counters(0).cmd_delivery_errors, 3 * 32);
    assert_eq!(tb.counters(0).commands, 0);
}

/// Doorbells must come through the UAR page the queue was created with; vport counters
/// split traffic by destination class and `clear` restarts them; an SQ that hits a WQE
/// error reports ERR through QUERY_SQ and recovers with ERR -> RST -> RDY (counters at 0).
#[test]
fn uar_ownership_counters_and_sq_recovery() {
    let mut h = Host::new(0);
    let mut f = func(&mut h, 0, 1);
    let uar2 = h.alloc(0x802);
    let sq = make_sq(&mut h, &f);
    // The SQ's doorbell on another allocated UAR page, and on the Rust API's page.
    let w = ctrl(OP_SEND, 0, sq.0, 3, 0);
    h.bus
        .write64(uar2 * 4096 + 0x800, w[..8].try_into().unwrap());
    h.bus.write64(2 * 4096 + 0x800, w[..8].try_into().unwrap());
    // A page that was never allocated is not a register at all.
    h.bus.write64(30 * 4096 + 0x800, w[..8].try_into().unwrap());
    h.step();
    let c = h.tb.counters(0);
    assert_eq!(c.bad_doorbells, 2);
    assert_eq!(h.tb.device().bad_mmio(), 1);
    assert_eq!(c.wqes, 0);
    // Port 0 loops back to itself (PPLR) and receives through one RQ.
    h.set_loopback(2).ok();
    let (rqn, _rq, _dbr) = h.posted_rq(f.cq.cqn, f.pd);
    h.tir_over(rqn, f.td, &[1; 40]);
    let mut uni = udp4_frame(30, 1, 2);
    let mut multi = uni.clone();
    multi[0] = 0x01;
    let mut bcast = uni.clone();
    bcast[..6].fill(0xff);
    for (pc, fr) in [&uni, &multi, &bcast, &bcast].into_iter().enumerate() {
        send(&mut h, &f, &sq, pc as u16, fr);
    }
    let q = |h: &mut Host, clear: bool| {
        let mut i = cmd_in(0x770, 0, 0x20);
        put(&mut i, 0xc0, 1, u64::from(clear)); // clear
        let o = h.exec(&i, 0x210).ok();
        let at = |off: usize| u64::from_be_bytes(o.b[off..off + 8].try_into().unwrap());
        // rx ucast/mcast/bcast, tx ucast/mcast/bcast packets, local loopback packets.
        [
            at(0x90),
            at(0xb0),
            at(0x70),
            at(0xa0),
            at(0xc0),
            at(0x80),
            at(0xd0),
        ]
    };
    assert_eq!(q(&mut h, true), [1, 1, 2, 1, 1, 2, 4]);
    assert_eq!(
        q(&mut h, false),
        [0, 0, 0, 0, 0, 0, 4],
        "cleared (loopback is not)"
    );
    // A WQE error: the SQ goes to ERR, QUERY_SQ says so, recovery restarts it at 0.
    uni[0] = 0x02;
    let data = h.tb.mem.alloc_from(&uni);
    let mut bad = Vec::new();
    bad.extend_from_slice(&ctrl(0x7f, 4, sq.0, 3, CQ_UPDATE));
    bad.extend_from_slice(&eseg(0, 0, 0, [0, 0]));
    bad.extend_from_slice(&dseg(uni.len() as u32, 0, data.dma_addr()));
    sq.1.write(4 * 64, &bad);
    sq.2.write_be32(4, 5);
    h.bus
        .write64(f.uar * 4096 + 0x800, bad[..8].try_into().unwrap());
    h.step();
    while let Some(c) = f.cq.poll() {
        if c[63] >> 4 == 13 {
            break;
        }
    }
    let s = h.exec(&obj_in(0x907, sq.0), 0x110).ok();
    assert_eq!(getf(&s.b, 0x108, 4), 3, "ERR");
    assert_eq!(getf(&s.b, 0x340, 32), 4, "hw_counter stops at the bad WQE");
    h.exec(&modify_in(0x905, sq.0, 3, 0), 16).ok();
    h.exec(&modify_in(0x905, sq.0, 0, 1), 16).ok();
    let s = h.exec(&obj_in(0x907, sq.0), 0x110).ok();
    assert_eq!((getf(&s.b, 0x108, 4), getf(&s.b, 0x340, 32)), (1, 0));
    send(&mut h, &f, &sq, 0, &uni);
    assert_eq!(q(&mut h, false)[0], 1, "traffic again after recovery");
    let _ = &mut f.eq;
}

/// PFCC data (32 bytes): local_port 1, `pptx`, `pprx`.
fn pfcc(rx: bool, tx: bool) -> Vec<u8> {
    let mut r = vec![0u8; 32];
    put(&mut r, 0x8, 8, 1); // local_port
    put(&mut r, 0x40, 1, u64::from(tx)); // pptx
    put(&mut r, 0x60, 1, u64::from(rx)); // pprx
    r
}

/// PPCNT data (256 bytes): local_port 1, counter group `grp`, `clr`.
fn ppcnt(grp: u8, clr: bool) -> Vec<u8> {
    let mut r = vec![0u8; 256];
    put(&mut r, 0x8, 8, 1); // local_port
    put(&mut r, 0x1a, 6, u64::from(grp)); // grp
    put(&mut r, 0x20, 1, u64::from(clr)); // clr
    r
}

/// Reads PFCC: (pprx, pptx).
fn read_pfcc(h: &mut Host) -> (bool, bool) {
    let o = h.exec(&reg_in(0x5007, false, &pfcc(false, false)), 48).ok();
    (
        getf(&o.b, 0x80 + 0x60, 1) != 0,
        getf(&o.b, 0x80 + 0x40, 1) != 0,
    )
}

/// Reads PPCNT group 0 (IEEE 802.3) of function `h.port`: the 19 counters.
fn read_ieee(h: &mut Host, clr: bool) -> [u64; 19] {
    let o = h
        .exec(&reg_in(0x5008, false, &ppcnt(0, clr)), 16 + 256)
        .ok();
    assert_eq!(getf(&o.b, 0x80 + 0x8, 8), 1, "local_port");
    let mut c = [0u64; 19];
    for (i, v) in c.iter_mut().enumerate() {
        // counter_set at byte 8 of the register: 64-bit high/low pairs.
        let at = 16 + 8 + 8 * i;
        *v = u64::from_be_bytes(o.b[at..at + 8].try_into().unwrap());
    }
    c
}

// eth_802_3_cntrs_grp_data_layout indices.
const FRAMES_TX: usize = 0;
const FRAMES_RX: usize = 1;
const OCTETS_TX: usize = 4;
const OCTETS_RX: usize = 5;
const MCAST_TX: usize = 6;
const MCAST_RX: usize = 8;
const MAC_CTRL_TX: usize = 14;
const MAC_CTRL_RX: usize = 15;
const PAUSE_RX: usize = 17;
const PAUSE_TX: usize = 18;

#[test]
fn pfcc_sets_each_direction_and_ppcnt_counts_pause_frames() {
    let mut h = Host::new(0);
    let f0 = func(&mut h, 0, 3);
    let mut f1 = func(&mut h, 1, 5);
    // Port 1 receives through one RQ with 8 WQEs posted: short of the threshold (32).
    h.port = 1;
    let (rqn, rq, rq_dbr) = h.ready_rq(f1.cq.cqn, f1.pd);
    h.tir_over(rqn, f1.td, &[0x6d; 40]);
    let rx_buf = h.tb.mem.alloc(2048);
    for i in 0..64 {
        rq.write(i * 16, &dseg(2048, 0x1234, rx_buf.dma_addr()));
    }
    rq_dbr.write_be32(0, 8);
    // Both directions on after creation, on both ports.
    assert_eq!(read_pfcc(&mut h), (true, true));
    h.port = 0;
    assert_eq!(read_pfcc(&mut h), (true, true));
    let sq = make_sq(&mut h, &f0);
    let frame = udp4_frame(100, 7, 9);
    // The receiver is short: it sends a PAUSE frame, the sender honours it. Every engine
    // run (each command runs one) finds it still short: one PAUSE more per run.
    send(&mut h, &f0, &sq, 0, &frame);
    assert!(f1.cq.poll().is_none(), "held by the PAUSE");
    let c0 = read_ieee(&mut h, false);
    assert!(c0[PAUSE_RX] >= 1, "{c0:?}");
    assert_eq!(
        (c0[PAUSE_TX], c0[FRAMES_TX], c0[MAC_CTRL_RX]),
        (0, 0, c0[PAUSE_RX])
    );
    h.port = 1;
    let c1 = read_ieee(&mut h, false);
    assert!(c1[PAUSE_TX] >= c0[PAUSE_RX], "{c1:?}");
    assert_eq!(c1[PAUSE_RX], 0);
    // PAUSE is a MAC control frame of 60 bytes (no FCS) to a multicast address.
    let n = c1[PAUSE_TX];
    assert_eq!(
        (c1[MAC_CTRL_TX], c1[FRAMES_TX], c1[OCTETS_TX], c1[MCAST_TX]),
        (n, n, 60 * n, n)
    );
    // Port 0 stops honouring PAUSE (pprx 0, pptx 1): the write runs the engine, the
    // receiver, still short, sends one more PAUSE, and the frame goes out regardless.
    h.port = 0;
    let o = h.exec(&reg_in(0x5007, true, &pfcc(false, true)), 48).ok();
    assert_eq!(
        (getf(&o.b, 0x80 + 0x60, 1), getf(&o.b, 0x80 + 0x40, 1)),
        (0, 1),
        "a write answers with the new contents"
    );
    assert_eq!(h.tb.device().pause_rx_tx(0), Some((false, true)));
    assert_eq!(read_pfcc(&mut h), (false, true));
    assert!(f1.cq.poll().is_some(), "delivered although paused");
    // The SQ is idle now: the counts are final. Every PAUSE sent was received; all but
    // the last held the SQ.
    let (m0, m1) = (h.tb.counters(0), h.tb.counters(1));
    let n = m1.tx_pause_frames;
    assert!(n >= 2);
    assert_eq!(
        (m0.rx_pause_frames, m0.tx_pause, m0.tx_pause_frames),
        (n, n - 1, 0)
    );
    let c0 = read_ieee(&mut h, false);
    assert_eq!(
        (c0[PAUSE_RX], c0[MAC_CTRL_RX], c0[FRAMES_TX]),
        (n, n, 1),
        "PAUSE received whether honoured or not"
    );
    assert_eq!(c0[OCTETS_TX], frame.len() as u64);
    // Port 1 stops sending PAUSE (pptx 0): nothing more is counted, the frame arrives.
    h.port = 1;
    h.exec(&reg_in(0x5007, true, &pfcc(true, false)), 48).ok();
    assert_eq!(h.tb.device().pause_rx_tx(1), Some((true, false)));
    h.port = 0;
    send(&mut h, &f0, &sq, 1, &frame);
    assert!(f1.cq.poll().is_some());
    assert_eq!(read_ieee(&mut h, false)[PAUSE_RX], n);
    h.port = 1;
    let c1 = read_ieee(&mut h, true);
    assert_eq!((c1[PAUSE_TX], c1[FRAMES_RX], c1[MAC_CTRL_RX]), (n, 2, 0));
    assert_eq!(c1[OCTETS_RX], 2 * frame.len() as u64);
    assert_eq!(c1[MCAST_RX], 0, "unicast data frames");
    // clr answered, then restarted the group.
    assert_eq!(read_ieee(&mut h, false), [0; 19]);
    assert_eq!(
        h.tb.counters(1).tx_pause_frames,
        n,
        "the model's own count stays"
    );
    // Port 0 sent two frames over the wire: RFC 2863 (group 1, counter_set at byte 8:
    // if_out_octets at 0x28, if_out_ucast_pkts at 0x30), the per-priority group (0x10,
    // prio_tc 0: tx_octets at 0x28, tx_frames at 0x48; prio 1: nothing), RFC 2819 (group 2,
    // received: ether_stats_pkts at 0x10) on port 1, and group 0x12 (no errors). Other
    // groups (3: RFC 3635) are refused; the register must fit.
    h.port = 0;
    let at = |o: &Out, off: usize| {
        let b = 16 + 8 + off;
        u64::from_be_bytes(o.b[b..b + 8].try_into().unwrap())
    };
    let g1 = h
        .exec(&reg_in(0x5008, false, &ppcnt(1, false)), 16 + 256)
        .ok();
    assert_eq!((at(&g1, 0x28), at(&g1, 0x30)), (2 * frame.len() as u64, 2));
    let mut pp = ppcnt(0x10, false);
    let g16 = h.exec(&reg_in(0x5008, false, &pp), 16 + 256).ok();
    assert_eq!(
        (at(&g16, 0x28), at(&g16, 0x48)),
        (2 * frame.len() as u64, 2)
    );
    put(&mut pp, 0x3b, 5, 1); // prio_tc 1
    let g16 = h.exec(&reg_in(0x5008, false, &pp), 16 + 256).ok();
    assert_eq!((at(&g16, 0x28), at(&g16, 0x48)), (0, 0));
    // Port 1's groups were cleared above (clr restarts every group): one more frame.
    h.port = 1;
    let g2 = h
        .exec(&reg_in(0x5008, false, &ppcnt(2, false)), 16 + 256)
        .ok();
    assert_eq!(at(&g2, 0x10), 0, "cleared");
    h.port = 0;
    send(&mut h, &f0, &sq, 2, &frame);
    assert!(f1.cq.poll().is_some());
    h.port = 1;
    let g2 = h
        .exec(&reg_in(0x5008, false, &ppcnt(2, false)), 16 + 256)
        .ok();
    assert_eq!(at(&g2, 0x10), 1, "ether_stats_pkts");
    let bucket = match frame.len() + 4 {
        0..=64 => 0,
        65..=127 => 1,
        _ => 2,
    };
    assert_eq!(at(&g2, 0x58 + 8 * bucket), 1, "the size bucket");
    let g18 = h
        .exec(&reg_in(0x5008, false, &ppcnt(0x12, false)), 16 + 256)
        .ok();
    assert!(g18.b[24..].iter().all(|&b| b == 0));
    h.port = 1;
    expect(
        h.exec(&reg_in(0x5008, false, &ppcnt(3, false)), 16 + 256),
        ST_BAD_PARAM,
        synd::PPCNT_GROUP,
    );
    expect(
        h.exec(&reg_in(0x5008, false, &ppcnt(0, false)[..128]), 16 + 256),
        ST_BAD_IN_LEN,
        synd::REG_LENGTH,
    );
    expect(
        h.exec(&reg_in(0x5008, false, &ppcnt(0, false)), 16 + 128),
        ST_BAD_OUT_LEN,
        synd::REG_LENGTH,
    );
    // Looped frames turn around before the MAC: PPCNT does not count them.
    h.port = 0;
    read_ieee(&mut h, true);
    h.set_loopback(2).ok();
    send(&mut h, &f0, &sq, 3, &frame);
    assert_eq!(h.tb.counters(0).loopback_packets, 1);
    assert_eq!(read_ieee(&mut h, false), [0; 19]);
}

#[test]
fn enable_hca_starts_the_function_counters_afresh() {
    // A device that outlives its driver (the PCI transport's device process) must give the
    // next driver a function whose counters start at 0, as the in-kernel host's new device
    // does; the other function's stay.
    let mut h = Host::new(0);
    let f0 = func(&mut h, 0, 3);
    let _f1 = func(&mut h, 1, 5);
    h.port = 0;
    let sq = make_sq(&mut h, &f0);
    send(&mut h, &f0, &sq, 0, &udp4_frame(100, 7, 9));
    let c = |h: &Host, p: usize| {
        let c = *h.tb.device().counters(p).unwrap();
        (
            c.tx_packets,
            c.tx_bytes,
            c.wqes,
            c.sq_doorbells,
            c.rx_packets,
        )
    };
    let sent = c(&h, 0);
    assert_eq!((sent.0, sent.2, sent.3), (1, 1, 1), "the frame was counted");
    let other = *h.tb.device().counters(1).unwrap();
    assert_ne!(other.pcie.in_tlps, 0, "port 1 was set up");
    // QUERY_VPORT_COUNTER (0x770): tx unicast packets at byte 0xa0 of the output.
    let vport_tx = |h: &mut Host| {
        let o = h.exec(&cmd_in(0x770, 0, 0x20), 0x210).ok();
        u64::from_be_bytes(o.b[0xa0..0xa8].try_into().unwrap())
    };
    assert_eq!(vport_tx(&mut h), 1, "the vport counted it");
    h.exec(&cmd_in(0x103, 0, 16), 16).ok(); // TEARDOWN_HCA
    h.exec(&cmd_in(0x105, 0, 16), 12).ok(); // DISABLE_HCA
    assert_eq!(c(&h, 0), sent, "kept while disabled");
    h.bring_up(); // ENABLE_HCA, ISSI, INIT_HCA
    assert_eq!(c(&h, 0), (0, 0, 0, 0, 0));
    assert_eq!(vport_tx(&mut h), 0, "the vport's counters too");
    assert_eq!(*h.tb.device().counters(1).unwrap(), other);
}

/// PPLM data (0x50 bytes): local_port 1, `fec_override_admin_100g` = `admin`.
fn pplm(admin: u8) -> Vec<u8> {
    let mut r = vec![0u8; 0x50];
    put(&mut r, 0x8, 8, 1); // local_port
    put(&mut r, 0xb0, 4, u64::from(admin)); // fec_override_admin_100g
    r
}

/// Reads PPLM of function `h.port`: (fec_mode_active, cap_100g, admin_100g, the caps of
/// 10G/40G, 25G, 50G, 56G).
fn read_pplm(h: &mut Host) -> (u64, u64, u64, [u64; 4]) {
    let o = h.exec(&reg_in(0x5023, false, &pplm(0)), 16 + 0x50).ok();
    let d = &o.b[16..];
    let others = [0x9c, 0x98, 0x94, 0x8c].map(|b| getf(d, b, 4));
    (
        getf(d, 0x68, 24),
        getf(d, 0x90, 4),
        getf(d, 0xb0, 4),
        others,
    )
}

/// The caps of 10G/40G (no FEC, FireCode), 25G and 50G (those and RS), 56G (none).
const OTHER_CAPS: [u64; 4] = [0x3, 0x7, 0x7, 0];

#[test]
fn pcam_pplm_and_the_physical_layer_counters() {
    let mut h = Host::new(0);
    h.port = 0;
    h.bring_up();
    h.port = 1;
    h.bring_up();
    h.port = 0;
    // The general capabilities say PCAM exists (pcam_reg, cap bit 0x1aa).
    let caps = h.exec(&cmd_in(0x100, 1, 16), 16 + 0x1000).ok();
    assert_eq!(getf(&caps.b, 0x80 + 0x1aa, 1), 1, "pcam_reg");
    // PCAM, feature group 0 / register group 0: PPLM (0x5023: bit 0x40 + 127 - 0x23),
    // PPCNT (bit 0x40 + 127 - 8) and PDDR (0x5031: bit 0x40 + 127 - 0x31) are listed, the
    // statistical group too; no per-lane FEC.
    let pcam = h.exec(&reg_in(0x507f, false, &[0u8; 0x50]), 16 + 0x50).ok();
    let d = &pcam.b[16..];
    assert_eq!(
        (
            getf(d, 0x9c, 1),
            getf(d, 0xb7, 1),
            getf(d, 0x8e, 1),
            getf(d, 0x1bf, 1)
        ),
        (1, 1, 1, 1)
    );
    assert_eq!((getf(d, 0x1a8, 1), getf(d, 0x188, 1)), (0, 0));
    let mut other = vec![0u8; 0x50];
    put(&mut other, 0x18, 8, 1); // access_reg_group 1
    expect(
        h.exec(&reg_in(0x507f, false, &other), 16 + 0x50),
        ST_BAD_PARAM,
        synd::PCAM_GROUP,
    );
    expect(
        h.exec(&reg_in(0x507f, true, &[0u8; 0x50]), 16 + 0x50),
        ST_BAD_PARAM,
        synd::REG_READ_ONLY,
    );
    // PMLP: four lanes (100GBASE-CR4).
    let mut pm = vec![0u8; 0x40];
    put(&mut pm, 0x8, 8, 1);
    let o = h.exec(&reg_in(0x5002, false, &pm), 16 + 0x40).ok();
    assert_eq!(getf(&o.b[16..], 0x18, 8), 4);
    // PPLM: 100G offers no FEC (bit 0), FireCode (1), RS-528 (2), and so do 25G and 50G;
    // 10G/40G no RS, 56G nothing. The link is up both ends at 100G (admin up after
    // bring-up): auto runs RS-FEC (bit 2).
    assert_eq!(read_pplm(&mut h), (1 << 2, 0x7, 0, OTHER_CAPS));
    // FireCode asked for: it runs; the answer is the new contents.
    let o = h.exec(&reg_in(0x5023, true, &pplm(1 << 1)), 16 + 0x50).ok();
    assert_eq!(getf(&o.b[16..], 0xb0, 4), 1 << 1);
    assert_eq!(read_pplm(&mut h), (1 << 1, 0x7, 1 << 1, OTHER_CAPS));
    // Refused, changing nothing: two modes at once, a mode bit 100G does not offer (3), RS
    // at 10G/40G, a mode at speeds that offer none (56G, 50G per lane), the RS bypass.
    for bad in [
        pplm(0x3),
        pplm(1 << 3),
        {
            let mut r = pplm(0);
            put(&mut r, 0xbc, 4, 1 << 2); // fec_override_admin_10g_40g
            r
        },
        {
            let mut r = pplm(0);
            put(&mut r, 0xac, 4, 1); // fec_override_admin_56g
            r
        },
        {
            let mut r = pplm(1 << 2);
            put(&mut r, 0x130, 16, 1 << 2); // fec_override_admin_50g_1x
            r
        },
        {
            let mut r = pplm(0);
            put(&mut r, 0xa0, 4, 1); // rs_fec_correction_bypass_admin
            r
        },
    ] {
        expect(
            h.exec(&reg_in(0x5023, true, &bad), 16 + 0x50),
            ST_BAD_PARAM,
            synd::PPLM_ADMIN,
        );
    }
    assert_eq!(read_pplm(&mut h), (1 << 1, 0x7, 1 << 1, OTHER_CAPS));
    // The read-only fields a driver writes back (caps, active) are ignored.
    let mut wb = pplm(1);
    put(&mut wb, 0x68, 24, 1 << 2);
    put(&mut wb, 0x90, 4, 0x7);
    h.exec(&reg_in(0x5023, true, &wb), 16 + 0x50).ok();
    assert_eq!(read_pplm(&mut h), (1, 0x7, 1, OTHER_CAPS), "no FEC");
    // Each port keeps its own: port 1 still runs auto (RS).
    h.port = 1;
    assert_eq!(read_pplm(&mut h), (1 << 2, 0x7, 0, OTHER_CAPS));
    // The link down (port 1's admin down): nothing runs on port 0.
    h.exec(&reg_in(0x5006, true, &paos(2)), 32).ok();
    h.port = 0;
    assert_eq!(read_pplm(&mut h).0, 0, "no FEC mode while down");
    h.port = 1;
    h.exec(&reg_in(0x5006, true, &paos(1)), 32).ok();
    h.port = 0;
    assert_eq!(read_pplm(&mut h).0, 1);
    // PPCNT's physical layer group (0x12) and its statistical group (0x16): the wire
    // corrupts nothing, so every count is 0, and the group answered is the one asked.
    for grp in [0x12u8, 0x16] {
        let o = h
            .exec(&reg_in(0x5008, false, &ppcnt(grp, false)), 16 + 256)
            .ok();
        assert_eq!(getf(&o.b[16..], 0x1a, 6), u64::from(grp));
        assert!(
            o.b[16 + 8..16 + 256].iter().all(|&b| b == 0),
            "group {grp:#x}"
        );
    }
    expect(
        h.exec(&reg_in(0x5008, false, &ppcnt(0x17, false)), 16 + 256),
        ST_BAD_PARAM,
        synd::PPCNT_GROUP,
    );
}

/// PTYS write data: Ethernet (proto_mask 4), the modes `admin` advertised, autonegotiation
/// off with `an_off`.
fn ptys(admin: u32, an_off: bool) -> Vec<u8> {
    let mut r = vec![0u8; 0x40];
    put(&mut r, 0x8, 8, 1); // local_port
    put(&mut r, 0x1, 1, u64::from(an_off)); // an_disable_admin
    put(&mut r, 0x1d, 3, 4); // proto_mask
    put(&mut r, 0xc0, 32, u64::from(admin)); // eth_proto_admin
    r
}

/// PDDR data as mlx5e's `query_port_status_opcode` builds it: local port 1, the
/// troubleshooting page (page_select 1), its monitor group (group_opcode 0).
fn pddr() -> Vec<u8> {
    let mut r = vec![0u8; 0x100];
    put(&mut r, 0x8, 8, 1); // local_port
    put(&mut r, 0x38, 8, 1); // page_select
    r
}

/// PDDR's answer for function `h.port` (the 256 register bytes).
fn read_pddr(h: &mut Host) -> Vec<u8> {
    let o = h.exec(&reg_in(0x5031, false, &pddr()), 16 + 0x100).ok();
    o.b[16..16 + 0x100].to_vec()
}

/// PDDR's troubleshooting status opcode of ports 0 and 1.
fn opcodes(h: &mut Host) -> (u64, u64) {
    let keep = h.port;
    let mut op = [0u64; 2];
    for (p, o) in op.iter_mut().enumerate() {
        h.port = p;
        *o = getf(&read_pddr(h), 0x70, 16); // monitor_opcode
    }
    h.port = keep;
    (op[0], op[1])
}

const G100: u32 = 1 << 20;
const G50: u32 = 1 << 30;
const G40: u32 = 1 << 6;
const G25: u32 = 1 << 27;
const G10: u32 = 1 << 12;

/// Both ports of a device brought up (port 0 current).
fn both_up() -> Host {
    let mut h = Host::new(0);
    for p in [1, 0] {
        h.port = p;
        h.bring_up();
    }
    h
}

/// A PTYS write on port `p`: modes `admin`, autonegotiation off if `an_off`; port `p` is
/// current afterwards.
fn set_ptys(h: &mut Host, p: usize, admin: u32, an_off: bool) {
    h.port = p;
    h.exec(&reg_in(0x5004, true, &ptys(admin, an_off)), 16 + 0x40)
        .ok();
}

#[test]
fn pddr_says_why_the_link_is_down() {
    let mut h = both_up();
    let set = |h: &mut Host, p: usize, admin: u32, an_off: bool| {
        set_ptys(h, p, admin, an_off);
        h.port = 0;
    };
    let admin = |h: &mut Host, p: usize, up: bool| {
        h.port = p;
        h.exec(&reg_in(0x5006, true, &paos(if up { 1 } else { 2 })), 32)
            .ok();
        h.port = 0;
    };
    // The link is up: the page says nothing. Golden bytes: local_port 1 (byte 1),
    // page_select 1 (byte 7), the rest 0.
    let mut want = vec![0u8; 0x100];
    want[1] = 1;
    want[7] = 1;
    assert_eq!(read_pddr(&mut h), want);
    // Port 1 disabled: port 0, negotiating, hears no partner (opcode 2 in monitor_opcode,
    // bytes 14..16 of the register); port 1, disabled, has nothing to say.
    admin(&mut h, 1, false);
    want[15] = 2;
    assert_eq!(read_pddr(&mut h), want);
    assert_eq!(opcodes(&mut h), (2, 0));
    // Port 0 forced to 100G, still alone: no partner in force mode (36).
    set(&mut h, 0, G100, true);
    assert_eq!(opcodes(&mut h), (36, 0));
    // Port 1 back, forced to 40G: both forced at different speeds, 36 on both ends.
    admin(&mut h, 1, true);
    set(&mut h, 1, G40, true);
    assert_eq!(opcodes(&mut h), (36, 36));
    // The same forced speed: up, nothing to say.
    set(&mut h, 1, G100, true);
    assert!(h.tb.device().oper_up(0));
    assert_eq!(opcodes(&mut h), (0, 0));
    // Both negotiate, nothing in common: no highest common denominator (39).
    set(&mut h, 0, G25 | G10, false);
    set(&mut h, 1, G100 | G40, false);
    assert_eq!(opcodes(&mut h), (39, 39));
    // Port 0 negotiates 100G and 50G, port 1 forced to 40G: no negotiating partner for
    // port 0 (2), no partner at 40G for port 1 (36).
    set(&mut h, 0, G100 | G50, false);
    set(&mut h, 1, G40, true);
    assert_eq!(opcodes(&mut h), (2, 36));
    // Port 0 disabled: 0 on it; port 1, forced, alone: 36.
    admin(&mut h, 0, false);
    assert_eq!(opcodes(&mut h), (0, 36));
    admin(&mut h, 0, true);
    // Port 0 in loopback runs with itself: up, nothing to say.
    let mut lb = vec![0u8; 8];
    put(&mut lb, 0x8, 8, 1);
    put(&mut lb, 0x38, 8, 2); // lb_en: phy local
    h.exec(&reg_in(0x5018, true, &lb), 16 + 8).ok();
    assert_eq!(opcodes(&mut h).0, 0);
    // Refused: another page (0, 3), another port number type (pnat 1), another group
    // (1), local port 2, a write (read-only), a register shorter than PDDR either way.
    for (bit, len, v, syn) in [
        (0x38, 8, 0, synd::PDDR_PAGE),
        (0x38, 8, 3, synd::PDDR_PAGE),
        (0x10, 2, 1, synd::PDDR_PAGE),
        (0x50, 16, 1, synd::PDDR_GROUP),
        (0x8, 8, 2, synd::LOCAL_PORT),
    ] {
        let mut r = pddr();
        put(&mut r, bit, len, v);
        expect(
            h.exec(&reg_in(0x5031, false, &r), 16 + 0x100),
            ST_BAD_PARAM,
            syn,
        );
    }
    expect(
        h.exec(&reg_in(0x5031, true, &pddr()), 16 + 0x100),
        ST_BAD_PARAM,
        synd::REG_READ_ONLY,
    );
    expect(
        h.exec(&reg_in(0x5031, false, &pddr()[..0x80]), 16 + 0x100),
        ST_BAD_IN_LEN,
        synd::REG_LENGTH,
    );
    expect(
        h.exec(&reg_in(0x5031, false, &pddr()), 16 + 0x80),
        ST_BAD_OUT_LEN,
        synd::REG_LENGTH,
    );
}

/// PMLP `width` and PPLM (fec_mode_active, the legacy admin fields) of function `h.port`.
fn lanes_and_fec(h: &mut Host) -> (u64, u64, [u64; 5]) {
    let mut pm = vec![0u8; 0x40];
    put(&mut pm, 0x8, 8, 1);
    let o = h.exec(&reg_in(0x5002, false, &pm), 16 + 0x40).ok();
    let width = getf(&o.b[16..], 0x18, 8);
    let o = h.exec(&reg_in(0x5023, false, &pplm(0)), 16 + 0x50).ok();
    let d = &o.b[16..];
    // fec_override_admin_ 10g_40g, 25g, 50g, 56g, 100g.
    let admin = [0xbc, 0xb8, 0xb4, 0xac, 0xb0].map(|b| getf(d, b, 4));
    (width, getf(d, 0x68, 24), admin)
}

#[test]
fn lanes_and_fec_follow_the_speed_the_link_runs() {
    let mut h = both_up();
    let set = set_ptys;
    // Each speed forced on both ends: its lanes on both, and what auto runs there (RS-FEC,
    // bit 2, on 25G lanes; no FEC, bit 0, at 10G and 40G).
    for (mode, lanes, auto) in [
        (G100, 4, 1 << 2),
        (G50, 2, 1 << 2),
        (G40, 4, 1),
        (G25, 1, 1 << 2),
        (G10, 1, 1),
    ] {
        set(&mut h, 0, mode, true);
        set(&mut h, 1, mode, true);
        for p in [0, 1] {
            h.port = p;
            assert_eq!(
                lanes_and_fec(&mut h),
                (lanes, auto, [0; 5]),
                "{mode:#x} port {p}"
            );
        }
    }
    // As mlx5e's --set-fec baser: FireCode in every field that offers it (all but 56G).
    h.port = 0;
    let mut w = pplm(1 << 1);
    for b in [0xbc, 0xb8, 0xb4] {
        put(&mut w, b, 4, 1 << 1);
    }
    h.exec(&reg_in(0x5023, true, &w), 16 + 0x50).ok();
    let baser = [2, 2, 2, 0, 2];
    assert_eq!(lanes_and_fec(&mut h), (1, 1 << 1, baser), "10G: FireCode");
    // Negotiated at 25G (port 0 advertises 25G and 10G, port 1 everything): 25G's field.
    set(&mut h, 0, G25 | G10, false);
    set(&mut h, 1, link::CAP, false);
    h.port = 0;
    assert_eq!(lanes_and_fec(&mut h), (1, 1 << 1, baser));
    h.port = 1;
    assert_eq!(lanes_and_fec(&mut h), (1, 1 << 2, [0; 5]), "port 1: auto");
    // Port 0: RS at 25G, none at 50G; at 25G RS runs, at 50G none.
    h.port = 0;
    let mut w = pplm(0);
    put(&mut w, 0xb8, 4, 1 << 2);
    put(&mut w, 0xb4, 4, 1);
    h.exec(&reg_in(0x5023, true, &w), 16 + 0x50).ok();
    assert_eq!(lanes_and_fec(&mut h), (1, 1 << 2, [0, 4, 1, 0, 0]));
    set(&mut h, 0, G50, false);
    h.port = 0;
    assert_eq!(lanes_and_fec(&mut h), (2, 1, [0, 4, 1, 0, 0]));
    // At 100G (auto there): RS.
    set(&mut h, 0, link::CAP, false);
    h.port = 0;
    assert_eq!(lanes_and_fec(&mut h), (4, 1 << 2, [0, 4, 1, 0, 0]));
    // The link down (port 0 advertises only 40G, port 1 forced to 25G): nothing runs;
    // each port's lanes are those of the fastest mode it offers.
    set(&mut h, 0, G40, false);
    set(&mut h, 1, G25, true);
    for (p, lanes) in [(0, 4), (1, 1)] {
        h.port = p;
        let (w, active, _) = lanes_and_fec(&mut h);
        assert_eq!((w, active), (lanes, 0), "port {p}");
    }
    // The per-speed tables the model's link module gives.
    for (&(bit, mbps), lanes) in link::MODES.iter().zip([4, 2, 4, 1, 1]) {
        let m = link::mode(bit).unwrap();
        assert_eq!(m.lanes, lanes, "{mbps}");
        assert_ne!(m.fec_cap & m.fec_auto, 0, "{mbps}: auto is one it offers");
    }
    assert_eq!(link::mode(21), None, "100GBASE-SR4 is not the port's");
    assert_eq!(
        (0..5).map(link::fec_cap).collect::<Vec<_>>(),
        [3, 7, 7, 0, 7]
    );
}
