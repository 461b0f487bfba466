//! The driver's ConnectX control plane (`hwif::mlx5::cmd`, `hwif::mlx5::eq`) against the
//! simulated ConnectX (`sim::mlx5`), through registers and DMA memory only.
//!
//! The two sides were written independently from the 6.12 mlx5_ifc.h layouts (sim/ shares
//! no format code with hwif/); these tests check that they agree: the bring-up and teardown
//! sequence of main.c, the capabilities the device was configured with, a failed command
//! reported with its opcode, port-change events through an event queue, flow control
//! (PFCC) with its pause counters (PPCNT), and CQ moderation set at CREATE_CQ and
//! changed by MODIFY_CQ.

mod sim_util;

use rsnic_core::hwif::hw::Coherent;
use rsnic_core::hwif::mlx5::cmd::pages;
use rsnic_core::hwif::mlx5::cmd::res::{self, CreateEq, EVENT_TYPE_PORT_CHANGE};
use rsnic_core::hwif::mlx5::cmd::seq::{Bringup, Progress, Resources, Teardown, SEQ_OUT_LEN};
use rsnic_core::hwif::mlx5::cmd::vport::{self, PORT_DOWN, PORT_UP};
use rsnic_core::hwif::mlx5::cmd::{CmdError, CmdErrorKind, CmdPoll, CmdQueue, Pas};
use rsnic_core::hwif::mlx5::eq::{Eq, Event};
use rsnic_core::sim::mlx5::cmd::{BOOT_PAGES, INIT_PAGES, REGULAR_PAGES};
use rsnic_core::sim::mlx5::{Caps, FUNC_BAR_SIZE};
use rsnic_testbed::bus::Testbed;
use rsnic_testbed::fwpages::FuncBar;
use rsnic_testbed::fwpages::{self, HostPages};
use rsnic_testbed::mem::HostBuf;

/// The driver of one function: its BAR window, its command queue and the pages its
/// firmware holds.
struct Driver {
    f: FuncBar,
    q: CmdQueue<HostBuf>,
    fw: HostPages,
}

impl Driver {
    fn new(tb: &Testbed, port: u32) -> Self {
        let f = FuncBar::new(tb, port as usize);
        // The command page and 16 mailbox slots of 1 KiB (the longest command rsnic sends,
        // QUERY_HCA_CAP's output, takes 9).
        let q = CmdQueue::new(tb.mem.alloc(4096), tb.mem.alloc(16 * 1024)).unwrap();
        Self {
            f,
            q,
            fw: HostPages::default(),
        }
    }

    /// Runs one command to completion, letting the device run between polls.
    fn exec(&mut self, tb: &mut Testbed, input: &[u8], out: &mut [u8]) -> Result<usize, CmdError> {
        let outlen = out.len();
        self.q.post(input, outlen, &self.f, &self.f)?;
        for _ in 0..4 {
            if let CmdPoll::Done(n) = self.q.poll(&self.f, out)? {
                return Ok(n);
            }
            tb.step();
        }
        panic!("the device never completed the command");
    }
}

fn bring_up(tb: &mut Testbed, d: &mut Driver) -> (Bringup, Result<(), CmdError>) {
    fwpages::bring_up(tb, &mut d.q, &d.f, &mut d.fw)
}

/// [`bring_up`], which must succeed: the resources it made.
fn brought_up(tb: &mut Testbed, d: &mut Driver) -> Resources {
    let (b, r) = bring_up(tb, d);
    r.unwrap();
    *b.resources()
}

fn tear_down(tb: &mut Testbed, d: &mut Driver, res: &Resources) -> Teardown {
    fwpages::tear_down(tb, &mut d.q, &d.f, res, &mut d.fw)
}

/// Runs one command on `d`, which must succeed: `build` writes the input into `len` zeroed
/// bytes and returns the length it used. Returns the (short) output.
fn exec_short(
    tb: &mut Testbed,
    d: &mut Driver,
    len: usize,
    build: impl FnOnce(&mut [u8]) -> usize,
) -> [u8; res::SHORT_LEN] {
    let mut inp = vec![0u8; len];
    let n = build(&mut inp);
    let mut out = [0u8; res::SHORT_LEN];
    d.exec(tb, &inp[..n], &mut out).unwrap();
    out
}

/// An EQ of 2^`log` EQEs made by the driver's CREATE_EQ on UAR page `uar`, vector `intr`,
/// for the event types of `events`; its owner bytes are set to 1 first (init_eq_buf).
/// Returns its ring and number.
fn create_eq(
    tb: &mut Testbed,
    d: &mut Driver,
    log: u8,
    uar: u32,
    intr: u16,
    events: u64,
) -> (HostBuf, u8) {
    let ring = tb.mem.alloc_eq(log);
    let p = CreateEq {
        log_eq_size: log,
        uar_page: uar,
        intr,
        event_bitmask: events,
        pas: Pas::contiguous(ring.dma_addr(), ring.size()),
    };
    let out = exec_short(tb, d, res::create_eq_len(&p), |b| {
        res::create_eq(b, &p).unwrap()
    });
    (ring, res::parse_create_eq(&out).unwrap())
}

/// A CQ of 2^`log` CQEs made by the driver's CREATE_CQ on UAR page `uar`, completing to EQ
/// `eqn`, with `moderation` if given; its owner bytes are invalid (0xf1) first. Returns its
/// ring, a doorbell page of 64 bytes whose first record is the CQ's, and its number.
fn create_cq(
    tb: &mut Testbed,
    d: &mut Driver,
    log: u8,
    uar: u32,
    eqn: u8,
    moderation: Option<&res::CqModeration>,
) -> (HostBuf, HostBuf, u32) {
    let ring = tb.mem.alloc(64 << log);
    for i in 0..(1usize << log) {
        ring.write(i * 64 + 63, &[0xf1]);
    }
    let dbr = tb.mem.alloc(64);
    let p = res::CreateCq {
        log_cq_size: log,
        uar_page: uar,
        c_eqn: eqn,
        dbr_addr: dbr.dma_addr(),
        cqe_comp_en: false,
        mini_cqe_res_format: 0,
        pas: Pas::contiguous(ring.dma_addr(), ring.size()),
    };
    let out = exec_short(tb, d, res::create_cq_len(&p), |b| {
        let n = res::create_cq(b, &p).unwrap();
        if let Some(m) = moderation {
            res::set_create_cq_moderation(b, m).unwrap();
        }
        n
    });
    (ring, dbr, res::parse_create_cq(&out).unwrap())
}

#[test]
fn the_driver_brings_both_functions_up_and_down() {
    let mut tb = Testbed::new();
    for port in 0..2 {
        let mut d = Driver::new(&tb, port);
        let (b, r) = bring_up(&mut tb, &mut d);
        r.unwrap_or_else(|e| panic!("port {port}: {e}"));
        let res = *b.resources();
        assert!(res.hca_enabled && res.hca_initialized);
        assert_eq!(
            res.issi, 1,
            "the device supports ISSI 1 and the driver sets it"
        );
        assert!(res.caps.has_enhanced_mpwqe());
        // wqe_inline_mode NOT_REQUIRED: no minimum (MLX5_INLINE_MODE_NONE).
        assert_eq!(res.min_inline_mode(), 0);
        let uar = res.uar.expect("a UAR");
        assert!(uar >= 8 && uar * 4096 < FUNC_BAR_SIZE, "UAR {uar}");
        assert!(res.pd.is_some() && res.td.is_some());
        // The model gives each port its own MAC.
        assert_ne!(res.vport.mac, [0; 6]);
        let t = tear_down(&mut tb, &mut d, &res);
        assert_eq!(t.first_error(), None);
    }
    assert_eq!(tb.device().bad_mmio(), 0);
}

#[test]
fn the_driver_reads_the_caps_the_device_was_given() {
    let caps = Caps {
        mpwqe: false,
        min_inline: 1,
        ..Caps::FULL
    };
    let mut tb = Testbed::with_caps(2, caps);
    let mut d = Driver::new(&tb, 0);
    let res = brought_up(&mut tb, &mut d);
    assert!(!res.caps.has_enhanced_mpwqe(), "no enhanced MPWQE");
    assert_eq!(res.min_inline_mode(), 1, "L2 headers inline");
    assert_eq!(tear_down(&mut tb, &mut d, &res).first_error(), None);
}

#[test]
fn the_driver_sets_the_general_caps_as_mlx5_core_and_reads_the_board_id() {
    use rsnic_core::hwif::mlx5::cmd::hca;
    let mut tb = Testbed::new();
    let mut d = Driver::new(&tb, 0);
    let res = brought_up(&mut tb, &mut d);
    // The model's maximum log_max_qp is 0 (it has no QPs): SET_HCA_CAP asked for that, and
    // the current caps read after INIT_HCA say what the device took.
    assert_eq!(res.max_caps.log_max_qp, 0);
    let mut inp = [0u8; hca::QUERY_HCA_CAP_IN_LEN];
    let mut out = vec![0u8; hca::QUERY_HCA_CAP_OUT_LEN];
    let n = hca::query_hca_cap(&mut inp, hca::CAP_GENERAL).unwrap();
    d.exec(&mut tb, &inp[..n], &mut out).unwrap();
    // pkey_table_size 0 (128 entries), cmdif_checksum 0, log_uar_page_sz 0 (4 KiB).
    assert_eq!(&out[0x10 + 0x32..0x10 + 0x34], &[0, 0]);
    assert_eq!(out[0x10 + 0x42] & 0xc0, 0);
    assert_eq!(&out[0x10 + 0x92..0x10 + 0x94], &[0, 0]);
    // The caps the data path sizes itself by.
    assert!(res.caps.nic_flow_table && res.caps.vlan_cap);
    assert_eq!(res.caps.max_sq_wqebbs(), 16);
    assert_eq!(&res.psid[..13], b"RSNIC00000001");
    assert_eq!(tear_down(&mut tb, &mut d, &res).first_error(), None);
}

#[test]
fn a_device_with_a_small_send_wqe_is_refused_and_left_clean() {
    use rsnic_core::hwif::mlx5::cmd::CmdErrorKind;
    for (sz, ok) in [(640u16, false), (704, true)] {
        let caps = Caps {
            max_wqe_sz_sq: sz,
            ..Caps::FULL
        };
        let mut tb = Testbed::with_caps(2, caps);
        let mut d = Driver::new(&tb, 0);
        let (b, r) = bring_up(&mut tb, &mut d);
        let res = *b.resources();
        if ok {
            r.unwrap();
            assert_eq!(res.caps.max_sq_wqebbs(), 11);
        } else {
            let e = r.expect_err("refused");
            assert_eq!(
                e.kind,
                CmdErrorKind::CapTooSmall {
                    cap: "max_wqe_sz_sq",
                    have: 640,
                    need: 704
                }
            );
            assert_eq!(
                e.to_string(),
                "QUERY_HCA_CAP(0x100) op_mod(0x1) failed: capability max_wqe_sz_sq is 640, \
                 needed 704"
            );
            // Nothing was allocated after the caps were read.
            assert_eq!(
                (res.uar, res.pd, res.td, res.mkey),
                (None, None, None, None)
            );
        }
        let t = tear_down(&mut tb, &mut d, &res);
        assert_eq!(t.first_error(), None);
        // Every firmware page back, the function disabled: it comes up again.
        assert!(d.fw.held.is_empty());
        assert_eq!(tb.counters(0).fw_pages, 0);
        let mut d = Driver::new(&tb, 0);
        let (_, r) = bring_up(&mut tb, &mut d);
        assert_eq!(r.is_ok(), ok);
    }
}

#[test]
fn a_failed_command_stops_the_bring_up_with_its_opcode() {
    for opcode in [0x104u16, 0x100, 0x102, 0x802, 0x816] {
        let mut tb = Testbed::new();
        tb.device().fail_command(0, Some(opcode)).unwrap();
        let mut d = Driver::new(&tb, 0);
        let (b, r) = bring_up(&mut tb, &mut d);
        let e = r.expect_err("the injected failure");
        assert_eq!(e.opcode, opcode, "{e}");
        let msg = format!("{e}");
        assert!(msg.contains(&format!("(0x{opcode:x})")), "{msg}");
        // What was made is undone, and the device takes a new bring-up afterwards.
        let res = *b.resources();
        tear_down(&mut tb, &mut d, &res);
        tb.device().fail_command(0, None).unwrap();
        let mut d = Driver::new(&tb, 0);
        let (_, r) = bring_up(&mut tb, &mut d);
        r.unwrap_or_else(|e| panic!("after a failed {opcode:#x}: {e}"));
    }
}

#[test]
fn port_changes_arrive_on_the_event_queue() {
    let mut tb = Testbed::new();
    let mut d0 = Driver::new(&tb, 0);
    let mut d1 = Driver::new(&tb, 1);
    let uar = brought_up(&mut tb, &mut d0).uar.unwrap();
    brought_up(&mut tb, &mut d1);
    // An async EQ of 64 EQEs on port 0 for port-change events, vector 0.
    let log = 6;
    let (ring, eqn) = create_eq(&mut tb, &mut d0, log, uar, 0, 1 << EVENT_TYPE_PORT_CHANGE);
    let mut eq = Eq::new(ring, log, eqn, uar * 4096).unwrap();
    eq.update_ci(true, &d0.f, &d0.f);
    tb.take_irqs();

    // The model's ports come out of reset with their admin state up (as a ConnectX port
    // whose firmware brings the link up by itself), so the wired pair is up already.
    assert!(tb.device().oper_up(0));
    let mut reg = vec![0u8; vport::access_reg_len(vport::PAOS_LEN)];
    let mut out = vec![0u8; vport::access_reg_len(vport::PAOS_LEN)];
    // The peer's admin state goes down, then up: port 0 hears of both through its EQ.
    for (admin, up) in [(PORT_DOWN, false), (PORT_UP, true)] {
        let n = vport::paos_set_admin(&mut reg, admin).unwrap();
        d1.exec(&mut tb, &reg[..n], &mut out).unwrap();
        tb.step();
        assert_eq!(
            tb.take_irqs(),
            vec![0],
            "the armed EQ raised its vector (port 0, intr 0)"
        );
        let mut seen = Vec::new();
        eq.poll(16, &d0.f, &d0.f, |e| seen.push(e));
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert_eq!(seen[0].link_up(), Some(up), "{seen:?}");
        // The event names the function's own port (port_num 1 of a one-port function).
        assert!(
            matches!(seen[0], Event::PortChange { port: 1, .. }),
            "{seen:?}"
        );
        assert_eq!(tb.device().oper_up(0), up);
    }
    // Nothing more: the poll re-armed the EQ and no event is pending.
    tb.step();
    assert!(tb.take_irqs().is_empty());
    assert_eq!(eq.stats().unknown, 0);
}

/// The model port's legacy PTYS modes: 10GBASE-CR (12), 40GBASE-CR4 (6), 25GBASE-CR (27),
/// 50GBASE-CR2 (30), 100GBASE-CR4 (20).
const CX_MODES: u32 = (1 << 12) | (1 << 6) | (1 << 27) | (1 << 30) | (1 << 20);

/// Runs the ACCESS_REG command `build` writes (a register of `reg_len` bytes) on `d`.
fn access_reg(
    tb: &mut Testbed,
    d: &mut Driver,
    reg_len: usize,
    build: impl FnOnce(&mut [u8]) -> Result<usize, rsnic_core::hwif::mlx5::cmd::FormatError>,
) -> Result<Vec<u8>, CmdError> {
    let len = vport::access_reg_len(reg_len);
    let (mut inp, mut out) = (vec![0u8; len], vec![0u8; len]);
    let n = build(&mut inp).unwrap();
    d.exec(tb, &inp[..n], &mut out)?;
    Ok(out)
}

#[test]
fn the_driver_sets_pause_and_reads_pause_frames() {
    use sim_util::{udp4_frame, Rig, CQ_UPDATE};
    // Port 0 sends to port 1, whose RQ has nothing posted (sim_util's rig: queues through
    // the device host's API); both functions are brought up by the driver's commands.
    let mut r = Rig::with_rx_posted(0);
    let mut d0 = Driver::new(&r.tb, 0);
    let mut d1 = Driver::new(&r.tb, 1);
    let res0 = brought_up(&mut r.tb, &mut d0);
    brought_up(&mut r.tb, &mut d1);
    // Port 0 has a memory key now: its data segments must name it.
    r.lkey = res0.mkey.unwrap();
    let pfcc = |tb: &mut Testbed, d: &mut Driver| {
        let out = access_reg(tb, d, vport::PFCC_LEN, vport::pfcc_query).unwrap();
        vport::parse_pfcc(&out).unwrap()
    };
    let ieee = |tb: &mut Testbed, d: &mut Driver| {
        let out = access_reg(tb, d, vport::PPCNT_LEN, |b| {
            vport::ppcnt_query(b, vport::PPCNT_IEEE_802_3, false)
        })
        .unwrap();
        vport::parse_ppcnt_ieee_802_3(&out).unwrap()
    };
    // ConnectX ships with global pause on both ways.
    assert_eq!(pfcc(&mut r.tb, &mut d0), (true, true));
    // The driver's PTYS read of the model: five modes, all advertised, direct-attach
    // copper (7), autonegotiation on, the link at 100GBASE-CR4 (bit 20).
    let out = access_reg(&mut r.tb, &mut d0, vport::PTYS_LEN, vport::ptys_query).unwrap();
    let p = vport::parse_ptys(&out).unwrap();
    assert_eq!(
        (p.cap, p.admin, p.oper, p.connector, p.an_disable_admin),
        (CX_MODES, CX_MODES, 1 << 20, 7, false)
    );
    // The driver turns autonegotiation off with the fastest mode (the peer negotiates and
    // advertises it: the link stays up); a mode the port cannot run (100GBASE-SR4, bit 21)
    // is refused and changes nothing.
    let ptys = |tb: &mut Testbed, d: &mut Driver| {
        let out = access_reg(tb, d, vport::PTYS_LEN, vport::ptys_query).unwrap();
        vport::parse_ptys(&out).unwrap()
    };
    access_reg(&mut r.tb, &mut d0, vport::PTYS_LEN, |b| {
        vport::ptys_set(b, 1 << 20, true)
    })
    .unwrap();
    let p = ptys(&mut r.tb, &mut d0);
    assert_eq!(
        (p.admin, p.an_disable_admin, p.an_disable_cap),
        (1 << 20, true, true)
    );
    let e = access_reg(&mut r.tb, &mut d0, vport::PTYS_LEN, |b| {
        vport::ptys_set(b, 1 << 21, false)
    })
    .unwrap_err();
    assert_eq!(e.opcode, 0x805, "{e}");
    assert_eq!(ptys(&mut r.tb, &mut d0), p);
    assert!(r.tb.device().oper_up(0));
    assert_eq!(ieee(&mut r.tb, &mut d1), vport::Ieee8023Counters::default());
    // A frame to the starved receiver: port 1 sends PAUSE, port 0 holds the WQE.
    let frame = udp4_frame(10, 3, 4);
    r.send(&frame, CQ_UPDATE);
    r.tb.step();
    assert!(r.tx_cq.poll().is_none(), "held");
    // Port 0 stops honouring PAUSE (`ethtool -A rx off`): the frame goes out (and is
    // dropped by the receiver), and the SQ is idle, so the counts stop moving.
    access_reg(&mut r.tb, &mut d0, vport::PFCC_LEN, |b| {
        vport::pfcc_set_pause(b, false, true)
    })
    .unwrap();
    assert_eq!(r.tb.device().pause_rx_tx(0), Some((false, true)));
    assert_eq!(pfcc(&mut r.tb, &mut d0), (false, true));
    r.tb.step();
    assert!(r.tx_cq.poll().is_some(), "sent");
    let (m0, m1) = (r.tb.counters(0), r.tb.counters(1));
    assert!(m1.tx_pause_frames >= 2, "{m1:?}");
    let (c0, c1) = (ieee(&mut r.tb, &mut d0), ieee(&mut r.tb, &mut d1));
    assert_eq!((c0.pause_rx, c0.pause_tx), (m0.rx_pause_frames, 0));
    assert_eq!((c1.pause_tx, c1.pause_rx), (m1.tx_pause_frames, 0));
    assert_eq!(c0.pause_rx, c1.pause_tx, "every PAUSE sent was received");
    assert_eq!((c1.mac_ctrl_tx, c0.mac_ctrl_rx), (c1.pause_tx, c0.pause_rx));
    assert_eq!(
        (c0.frames_tx, c0.octets_tx),
        (1, 60),
        "the data frame (padded to 60)"
    );
    assert_eq!(
        c1.frames_rx, 1,
        "received by the MAC, then dropped for want of a WQE"
    );
    assert_eq!(m1.rx_out_of_buffer, 1);
    // The driver's RFC 2819 read: the one data frame port 1's MAC took, in the 64-octet
    // bucket (60 + FCS), and every PAUSE frame it received (none: it sent them).
    let out = access_reg(&mut r.tb, &mut d1, vport::PPCNT_LEN, |b| {
        vport::ppcnt_query(b, vport::PPCNT_RFC_2819, false)
    })
    .unwrap();
    let rmon = vport::parse_ppcnt_rfc_2819(&out).unwrap();
    assert_eq!(rmon.hist, [1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    // Port 0's histogram counts the PAUSE frames it received (64 octets each).
    let out = access_reg(&mut r.tb, &mut d0, vport::PPCNT_LEN, |b| {
        vport::ppcnt_query(b, vport::PPCNT_RFC_2819, false)
    })
    .unwrap();
    let rmon0 = vport::parse_ppcnt_rfc_2819(&out).unwrap();
    assert_eq!(rmon0.hist[0], c0.pause_rx);
    assert_eq!(rmon0.hist[1..].iter().sum::<u64>(), 0);
    // A group the model does not keep (3, RFC 3635) is refused; the driver's parser checks
    // the group of an answer.
    let e = access_reg(&mut r.tb, &mut d0, vport::PPCNT_LEN, |b| {
        vport::ppcnt_query(b, 3, false)
    })
    .unwrap_err();
    assert_eq!(e.opcode, 0x805, "{e}");
    let mut other = vec![0u8; vport::access_reg_len(vport::PPCNT_LEN)];
    other[16 + 3] = 1; // grp 1 in the answer
    assert!(vport::parse_ppcnt_ieee_802_3(&other).is_err());
    assert_eq!(r.tb.device().bad_mmio(), 0);
}

#[test]
fn the_two_ports_resolve_their_link_from_ptys() {
    use sim_util::{udp4_frame, Rig, CQ_UPDATE};
    const G100: u32 = 1 << 20;
    const G50: u32 = 1 << 30;
    const G40: u32 = 1 << 6;
    const G25: u32 = 1 << 27;
    const G10: u32 = 1 << 12;
    // Port 1's RQ full: no PAUSE holds port 0's frames.
    let mut r = Rig::with_rx_posted(64);
    let mut d0 = Driver::new(&r.tb, 0);
    let mut d1 = Driver::new(&r.tb, 1);
    r.lkey = brought_up(&mut r.tb, &mut d0).mkey.unwrap();
    brought_up(&mut r.tb, &mut d1);
    let ptys = |tb: &mut Testbed, d: &mut Driver| {
        let out = access_reg(tb, d, vport::PTYS_LEN, vport::ptys_query).unwrap();
        vport::parse_ptys(&out).unwrap()
    };
    let set = |tb: &mut Testbed, d: &mut Driver, admin: u32, an_off: bool| {
        access_reg(tb, d, vport::PTYS_LEN, |b| {
            vport::ptys_set(b, admin, an_off)
        })
        .map(|_| ())
    };
    // One case: port 0's and port 1's (eth_proto_admin, an_disable_admin), the mode both
    // must report running (0: no link) and the partner modes each reports.
    type Case = ((u32, bool), (u32, bool), u32, (u32, u32));
    // Sets port 0 then port 1 and checks the mode, the operational state, the partner's
    // modes and the PORT_CHANGE events: each end hears an odd number of them when its state
    // changed (setting one end first may pass through the other state), an even one when
    // it did not.
    let (mut events, mut was_up) = ([0u64; 2], true);
    let mut step = |r: &mut Rig, d0: &mut Driver, d1: &mut Driver, (a, b, want, lp): Case| {
        set(&mut r.tb, d0, a.0, a.1).unwrap();
        set(&mut r.tb, d1, b.0, b.1).unwrap();
        r.tb.step();
        let (p0, p1) = (ptys(&mut r.tb, d0), ptys(&mut r.tb, d1));
        let why = format!("{a:x?} vs {b:x?}");
        assert_eq!((p0.admin, p0.an_disable_admin), a, "{why}");
        assert_eq!((p1.admin, p1.an_disable_admin), b, "{why}");
        assert_eq!((p0.oper, p1.oper), (want, want), "{why}");
        assert_eq!((p0.lp_advertise, p1.lp_advertise), lp, "{why}");
        // an_status: complete (1) where the partner's modes are known, else 0.
        let an = (u8::from(lp.0 != 0), u8::from(lp.1 != 0));
        assert_eq!((p0.an_status, p1.an_status), an, "{why}");
        let up = want != 0;
        let oper0 = r.tb.device().oper_up(0);
        let oper1 = r.tb.device().oper_up(1);
        assert_eq!((oper0, oper1), (up, up), "{why}");
        let now = [r.tb.counters(0).port_events, r.tb.counters(1).port_events];
        let odd = |p: usize| (now[p] - events[p]) % 2 == 1;
        let changed = up != was_up;
        assert_eq!(
            (odd(0), odd(1)),
            (changed, changed),
            "{why}: {events:?} {now:?}"
        );
        (events, was_up) = (now, up);
    };
    let negotiating: [Case; 3] = [
        // Both negotiate, all modes: the fastest, each seeing the other's modes.
        (
            (CX_MODES, false),
            (CX_MODES, false),
            G100,
            (CX_MODES, CX_MODES),
        ),
        // Port 0 advertises 25G and 10G: the pair settles at 25G.
        (
            (G25 | G10, false),
            (CX_MODES, false),
            G25,
            (CX_MODES, G25 | G10),
        ),
        // Nothing in common: no link on either end.
        ((G25 | G10, false), (G100 | G40, false), 0, (0, 0)),
    ];
    for c in negotiating {
        step(&mut r, &mut d0, &mut d1, c);
    }
    // A frame sent now is dropped at port 0 as over a link that is down: port 1's MAC
    // (PPCNT) sees nothing.
    let mac_rx = |tb: &mut Testbed, d: &mut Driver| {
        let out = access_reg(tb, d, vport::PPCNT_LEN, |b| {
            vport::ppcnt_query(b, vport::PPCNT_IEEE_802_3, false)
        })
        .unwrap();
        vport::parse_ppcnt_ieee_802_3(&out).unwrap().frames_rx
    };
    let drops = r.tb.counters(0).tx_link_down_drops;
    r.send(&udp4_frame(10, 3, 4), CQ_UPDATE);
    r.tb.step();
    assert!(r.tx_cq.poll().is_some(), "the WQE completes");
    assert_eq!(r.tb.counters(0).tx_link_down_drops, drops + 1);
    assert_eq!(mac_rx(&mut r.tb, &mut d1), 0);
    let forced: [Case; 5] = [
        // Both forced: different speeds, no link; the same one, up, no partner modes.
        ((G40, true), (G50, true), 0, (0, 0)),
        ((G40, true), (G40, true), G40, (0, 0)),
        // One forced, the other negotiating: up when the negotiating end advertises the
        // forced mode (parallel detection), down when it does not.
        ((G40, true), (CX_MODES, false), G40, (0, 0)),
        ((G40, true), (G100 | G50, false), 0, (0, 0)),
        // A forced port given several modes runs the fastest.
        ((G25 | G10, true), (G25, true), G25, (0, 0)),
    ];
    for c in forced {
        step(&mut r, &mut d0, &mut d1, c);
    }
    // Up again: the frame reaches port 1.
    r.send(&udp4_frame(10, 3, 4), CQ_UPDATE);
    r.tb.step();
    assert!(r.tx_cq.poll().is_some());
    assert_eq!(mac_rx(&mut r.tb, &mut d1), 1);
    assert_eq!(r.tb.counters(0).tx_link_down_drops, drops + 1);
    // Refused, changing nothing: a mode the port cannot run (100GBASE-SR4), no mode.
    for bad in [1 << 21, G25 | (1 << 21), 0] {
        let e = set(&mut r.tb, &mut d0, bad, false).unwrap_err();
        assert_eq!(e.opcode, 0x805, "{e}");
        assert!(
            matches!(e.kind, CmdErrorKind::Status { status: 3, .. }),
            "BAD_PARAM: {e}"
        );
    }
    let p0 = ptys(&mut r.tb, &mut d0);
    assert_eq!(
        (p0.admin, p0.an_disable_admin, p0.oper),
        (G25 | G10, true, G25)
    );
    assert_eq!(r.tb.device().bad_mmio(), 0);
}

#[test]
fn cq_moderation_from_the_driver_reaches_the_device() {
    let mut tb = Testbed::new();
    let mut d0 = Driver::new(&tb, 0);
    let uar = brought_up(&mut tb, &mut d0).uar.unwrap();
    let (_eq_ring, eqn) = create_eq(&mut tb, &mut d0, 6, uar, 1, 0);
    let m = res::CqModeration {
        period: 100,
        max_count: 32,
    };
    let (_cq_ring, _dbr, cqn) = create_cq(&mut tb, &mut d0, 6, uar, eqn, Some(&m));
    assert_eq!(tb.device().cq_moderation(cqn), Ok((100, 32, false)));
    // ethtool -C on a live channel: MODIFY_CQ, the CQ stays.
    let mut inp = vec![0u8; res::MODIFY_CQ_LEN];
    let mut out = [0u8; res::SHORT_LEN];
    for (period, count) in [(4095, 65535), (0, 1)] {
        let m = res::CqModeration {
            period,
            max_count: count,
        };
        let n = res::modify_cq_moderation(&mut inp, cqn, &m).unwrap();
        d0.exec(&mut tb, &inp[..n], &mut out).unwrap();
        assert_eq!(tb.device().cq_moderation(cqn), Ok((period, count, false)));
    }
    // A CQ the function does not have: the device's refusal reaches the driver.
    let n = res::modify_cq_moderation(&mut inp, cqn + 1, &m).unwrap();
    let e = d0.exec(&mut tb, &inp[..n], &mut out).unwrap_err();
    assert_eq!(e.opcode, 0x403);
    // BAD_RESOURCE with the model's BAD_CQ syndrome.
    assert_eq!(
        e.status(),
        Some((0x5, rsnic_core::sim::mlx5::cmd::synd::BAD_CQ))
    );
    assert_eq!(tb.device().cq_moderation(cqn), Ok((0, 1, false)));
}

/// The async EQ the kernel glue makes (`ctrl.rs`): port changes and page requests, vector 0,
/// armed.
fn async_eq(tb: &mut Testbed, d: &mut Driver, uar: u32) -> Eq<HostBuf> {
    let log = 6;
    // init_eq_buf before CREATE_EQ (create_eq does): the page request comes at once.
    let events = 1 << EVENT_TYPE_PORT_CHANGE | 1 << pages::EVENT_TYPE_PAGE_REQUEST;
    let (ring, eqn) = create_eq(tb, d, log, uar, 0, events);
    let mut eq = Eq::created(ring, log, eqn, uar * 4096).unwrap();
    eq.update_ci(true, &d.f, &d.f);
    eq
}

#[test]
fn the_driver_gives_the_firmware_its_pages_and_takes_every_one_back() {
    let mut tb = Testbed::new();
    let mut d = Driver::new(&tb, 0);
    let res = brought_up(&mut tb, &mut d);
    assert!(res.pages_asked, "QUERY_PAGES was asked");
    // The boot and init pages, before INIT_HCA (which the model refuses without them).
    let startup = u64::from(BOOT_PAGES + INIT_PAGES);
    assert_eq!(tb.counters(0).fw_pages, startup);
    assert_eq!(d.fw.held.len() as u64, startup);
    // After INIT_HCA the firmware asks for its regular pages on the async EQ.
    let mut eq = async_eq(&mut tb, &mut d, res.uar.unwrap());
    tb.step();
    let mut seen = Vec::new();
    eq.poll(16, &d.f, &d.f, |e| seen.push(e));
    let want = match seen.as_slice() {
        [Event::PageRequest { func_id: 0, pages }] => *pages,
        other => panic!("one page request: {other:?}"),
    };
    assert_eq!(want, REGULAR_PAGES as i32);
    d.fw.give(&mut tb, &mut d.q, &d.f, want as u32).unwrap();
    let all = startup + u64::from(REGULAR_PAGES);
    assert_eq!(tb.counters(0).fw_pages, all);
    let mut inp = [0u8; res::SHORT_LEN];
    let mut out = [0u8; res::OUT_LEN];
    let n = res::destroy_eq(&mut inp, eq.eqn()).unwrap();
    d.exec(&mut tb, &inp[..n], &mut out).unwrap();
    // Teardown: TEARDOWN_HCA, every page back (TAKE until none is held), DISABLE_HCA.
    let t = tear_down(&mut tb, &mut d, &res);
    assert_eq!(t.first_error(), None);
    assert!(
        d.fw.held.is_empty(),
        "{} pages not returned",
        d.fw.held.len()
    );
    assert_eq!((d.fw.given as u64, d.fw.returned as u64), (all, all));
    assert_eq!(d.fw.strangers, 0);
    assert_eq!(tb.counters(0).fw_pages, 0);
    // And the function comes up again.
    let mut d = Driver::new(&tb, 0);
    brought_up(&mut tb, &mut d);
    assert_eq!(tb.counters(0).fw_pages, startup);
}

#[test]
fn init_hca_is_refused_when_the_pages_are_withheld() {
    let mut tb = Testbed::new();
    let mut d = Driver::new(&tb, 0);
    let mut b = Bringup::new();
    let mut out = vec![0u8; SEQ_OUT_LEN];
    let mut asked = Vec::new();
    let e = loop {
        match b.poll(&mut d.q, &d.f, &d.f, &mut out) {
            Ok(Progress::Done) => panic!("INIT_HCA went through without pages"),
            Ok(Progress::Pending) => {
                tb.step();
            }
            // A driver that does not give (rsnic's before it did): the model holds the
            // function to its pages once it asked.
            Ok(Progress::GivePages(n)) => {
                asked.push(n);
                b.pages_given();
            }
            Ok(Progress::Reclaim) => unreachable!(),
            Err(e) => break e,
        }
    };
    assert_eq!(asked, vec![BOOT_PAGES, INIT_PAGES]);
    assert_eq!(e.opcode, 0x102, "{e}");
    assert_eq!(e.status().map(|(s, _)| s), Some(0x04), "BAD_SYS_STATE: {e}");
    let msg = format!("{e}");
    assert!(msg.contains("INIT_HCA(0x102)"), "{msg}");
    let t = tear_down(&mut tb, &mut d, b.resources());
    assert_eq!(t.first_error(), None);
    assert_eq!(tb.counters(0).fw_pages, 0);
}

#[test]
fn the_data_path_names_the_functions_keys() {
    use rsnic_testbed::pair::{Pair, PairConfig, TxFrame, LKEY, RX_PORT, TX_PORT};
    let mut p = Pair::new(PairConfig {
        keyed: true,
        ..PairConfig::default()
    });
    let keys = p.config().lkey;
    assert!(keys.iter().all(|&k| k != LKEY && k != 0), "{keys:x?}");
    let frames: Vec<TxFrame> = (0..64u8)
        .map(|k| TxFrame::linear(sim_util::udp4_frame(100, u16::from(k), 7)))
        .collect();
    let r = p.send_burst(&frames);
    assert_eq!(r.accepted.len(), 64, "{r:?}");
    let got = p.settle(256);
    assert_eq!(
        got.len(),
        64,
        "every frame through keyed TX and RX segments"
    );
    let (tx, rx) = (p.tb.counters(TX_PORT), p.tb.counters(RX_PORT));
    assert_eq!((tx.mkey_errors, rx.mkey_errors), (0, 0));
    assert_eq!(p.poll_tx().error, None);
}

#[test]
fn a_data_segment_without_the_functions_key_is_refused() {
    use sim_util::{udp4_frame, Rig, RigOpts, CQ_UPDATE};
    let mut r = Rig::new(RigOpts::default());
    let mut d0 = Driver::new(&r.tb, 0);
    assert!(brought_up(&mut r.tb, &mut d0).mkey.is_some());
    // lkey 0, what rsnic's data segments carried before it made a key.
    r.lkey = 0;
    r.send(&udp4_frame(10, 3, 4), CQ_UPDATE);
    r.tb.step();
    assert_eq!(r.tb.counters(0).tx_packets, 0, "nothing sent");
    assert_eq!(r.tb.counters(0).mkey_errors, 1);
}

#[test]
fn the_ports_q_counter_counts_its_rqs_drops() {
    use rsnic_core::hwif::mlx5::cmd::mkey;
    use sim_util::{udp4_frame, Rig, CQ_UPDATE};
    // Port 0 sends (the rig's SQ); port 1's frames go to an RQ its driver made by CREATE_RQ
    // naming the port's Q counter, with no WQE posted; no PAUSE, so the frames are dropped.
    let mut r = Rig::with_rx_posted(0);
    for port in 0..2 {
        r.tb.device().set_pause(port, false).unwrap();
    }
    let mut d0 = Driver::new(&r.tb, 0);
    r.lkey = brought_up(&mut r.tb, &mut d0).mkey.unwrap();
    let mut d1 = Driver::new(&r.tb, 1);
    let res1 = brought_up(&mut r.tb, &mut d1);
    let id = res1.q_counter.expect("ALLOC_Q_COUNTER at bring-up");
    let uar = res1.uar.unwrap();
    let eq = async_eq(&mut r.tb, &mut d1, uar);
    let log = 6;
    let (_cq_ring, dbr, cqn) = create_cq(&mut r.tb, &mut d1, log, uar, eq.eqn(), None);
    let wq = r.tb.mem.alloc(16 << log);
    let p = res::CreateRq {
        cqn,
        counter_set_id: id,
        vsd: false,
        wq: res::Wq {
            pd: res1.pd.unwrap(),
            uar_page: 0,
            dbr_addr: dbr.dma_addr() + 8,
            log_wq_stride: 4,
            log_wq_sz: log,
            pas: Pas::contiguous(wq.dma_addr(), wq.size()),
        },
    };
    let out = exec_short(&mut r.tb, &mut d1, res::create_rq_len(&p), |b| {
        res::create_rq(b, &p).unwrap()
    });
    let rqn = res::parse_create_rq(&out).unwrap();
    let mut inp = vec![0u8; res::MODIFY_Q_IN_LEN];
    let n = res::modify_rq(&mut inp, rqn, res::QState::Rst, res::QState::Rdy).unwrap();
    d1.exec(&mut r.tb, &inp[..n], &mut [0u8; res::OUT_LEN])
        .unwrap();
    // The driver's ethtool -K rxvlan command (MODIFY_RQ RDY -> RDY, VSD) both ways: the
    // model takes it and QUERY_RQ shows the RQ's `vsd` (rq_context bit 0x103).
    for vsd in [true, false] {
        let n = res::modify_rq_vsd(&mut inp, rqn, vsd).unwrap();
        d1.exec(&mut r.tb, &inp[..n], &mut [0u8; res::OUT_LEN])
            .unwrap();
        let n = res::query_rq(&mut inp, rqn).unwrap();
        let mut q = [0u8; res::QUERY_Q_OUT_LEN];
        d1.exec(&mut r.tb, &inp[..n], &mut q).unwrap();
        assert_eq!(q[0x20] & 0x10 != 0, vsd, "vsd after MODIFY_RQ");
        assert_eq!(res::parse_query_q_state(&q).unwrap(), res::QState::Rdy);
    }
    r.tb.device().set_rss(1, &[rqn]).unwrap();
    for k in 0..3 {
        r.send(&udp4_frame(10, k, 4), CQ_UPDATE);
        r.tb.step();
    }
    assert_eq!(r.tb.counters(0).tx_packets, 3);
    let query = |tb: &mut Testbed, d: &mut Driver| {
        let mut inp = [0u8; mkey::QUERY_Q_COUNTER_IN_LEN];
        let mut out = [0u8; mkey::QUERY_Q_COUNTER_OUT_LEN];
        let n = mkey::query_q_counter(&mut inp, id).unwrap();
        d.exec(tb, &inp[..n], &mut out).unwrap();
        mkey::parse_out_of_buffer(&out).unwrap()
    };
    assert_eq!(query(&mut r.tb, &mut d1), 3, "rx_out_of_buffer");
    assert_eq!(r.tb.counters(1).rx_out_of_buffer, 3);
    // Teardown gives the counter back (DEALLOC_Q_COUNTER after the RQ is gone).
    for (op, obj) in [(0x90a_u16, rqn), (0x401, cqn)] {
        let mut inp = [0u8; 16];
        inp[..2].copy_from_slice(&op.to_be_bytes());
        inp[9..12].copy_from_slice(&obj.to_be_bytes()[1..]);
        d1.exec(&mut r.tb, &inp, &mut [0u8; 16]).unwrap();
    }
    let n = res::destroy_eq(&mut inp, eq.eqn()).unwrap();
    d1.exec(&mut r.tb, &inp[..n], &mut [0u8; 16]).unwrap();
    assert_eq!(tear_down(&mut r.tb, &mut d1, &res1).first_error(), None);
}

#[test]
fn the_driver_reads_and_sets_fec_as_mlx5e() {
    use vport::{ethtool_fec as et, mode};
    let r = sim_util::Rig::with_rx_posted(0);
    let mut tb = r.tb;
    let mut d0 = Driver::new(&tb, 0);
    let mut d1 = Driver::new(&tb, 1);
    let res0 = brought_up(&mut tb, &mut d0);
    brought_up(&mut tb, &mut d1);
    // The capabilities name PCAM; PCAM names PPLM, PPCNT and the statistical group, no
    // per-lane FEC fields.
    assert!(res0.caps.pcam_reg);
    let out = access_reg(&mut tb, &mut d0, vport::PCAM_LEN, vport::pcam_query).unwrap();
    let pcam = vport::parse_pcam(&out).unwrap();
    assert_eq!(
        pcam,
        vport::Pcam {
            pplm: true,
            ppcnt: true,
            ppcnt_statistical: true,
            fec_50g_per_lane: false,
            fec_100g_per_lane: false,
        }
    );
    let pplm = |tb: &mut Testbed, d: &mut Driver| {
        let out = access_reg(tb, d, vport::PPLM_LEN, vport::pplm_query).unwrap();
        vport::parse_pplm(&out).unwrap()
    };
    // Auto at first: RS-FEC runs at 100G; what `ethtool --show-fec` shows (Configured:
    // Auto, Active: RS) and offers (None, BaseR, RS; 10G/40G no RS, 56G nothing).
    let p = pplm(&mut tb, &mut d0);
    assert_eq!(
        (p.active, p.configured(), p.cap),
        (1 << 2, 0, [3, 7, 7, 0, 7])
    );
    assert_eq!(vport::pplm_to_ethtool(p.active), et::RS);
    assert_eq!(vport::pplm_to_ethtool(p.configured()), et::AUTO);
    assert!(p.in_caps(1 << mode::NOFEC) && p.in_caps(1 << mode::FIRECODE));
    assert!(!p.in_caps(1 << mode::LLRS_272_257_1));
    // `--set-fec baser`: FireCode at every speed that offers it (all but 56G: auto).
    let policy = vport::fec_policy(et::BASER, pcam.fec_50g_per_lane).unwrap();
    assert_eq!(policy, 1 << mode::FIRECODE);
    let new = p.with_policy(policy).unwrap();
    assert_eq!(new.admin, [2, 2, 2, 0, 2]);
    access_reg(&mut tb, &mut d0, vport::PPLM_LEN, |b| {
        vport::pplm_set(b, &new)
    })
    .unwrap();
    let p = pplm(&mut tb, &mut d0);
    assert_eq!(vport::pplm_to_ethtool(p.active), et::BASER);
    assert_eq!(vport::pplm_to_ethtool(p.configured()), et::BASER);
    // `off`, then `auto` (all speeds auto) round-trip too.
    for (ask, configured, active) in [(et::OFF, et::OFF, et::OFF), (et::AUTO, et::AUTO, et::RS)] {
        let policy = vport::fec_policy(ask, false).unwrap();
        let new = pplm(&mut tb, &mut d0).with_policy(policy).unwrap();
        access_reg(&mut tb, &mut d0, vport::PPLM_LEN, |b| {
            vport::pplm_set(b, &new)
        })
        .unwrap();
        let p = pplm(&mut tb, &mut d0);
        assert_eq!(
            (
                vport::pplm_to_ethtool(p.configured()),
                vport::pplm_to_ethtool(p.active)
            ),
            (configured, active)
        );
    }
    // mlx5e's refusals (EOPNOTSUPP): two modes, LLRS without the 50G-per-lane fields; a
    // mode no speed offers is refused by `with_policy`.
    assert!(vport::fec_policy(et::RS | et::BASER, false).is_err());
    assert!(vport::fec_policy(et::AUTO | et::RS, false).is_err());
    assert!(vport::fec_policy(et::LLRS, false).is_err());
    let p = pplm(&mut tb, &mut d0);
    assert!(p.with_policy(1 << mode::RS_544_514).is_none());
    // The device refuses a mode the speed does not offer, whatever the driver asks.
    let mut forced = p;
    forced.admin[4] = 1 << 3;
    let e = access_reg(&mut tb, &mut d0, vport::PPLM_LEN, |b| {
        vport::pplm_set(b, &forced)
    })
    .unwrap_err();
    assert_eq!(e.opcode, 0x805, "{e}");
    assert_eq!(pplm(&mut tb, &mut d0), p, "unchanged");
    // The lanes, and the FEC counters (0: the wire corrupts nothing), as the driver parses
    // them; eth-phy's symbol errors too.
    let out = access_reg(&mut tb, &mut d0, vport::PMLP_LEN, vport::pmlp_query).unwrap();
    assert_eq!(vport::parse_pmlp(&out).unwrap(), 4);
    let out = access_reg(&mut tb, &mut d0, vport::PPCNT_LEN, |b| {
        vport::ppcnt_query(b, vport::PPCNT_PHYS, false)
    })
    .unwrap();
    assert_eq!(
        vport::parse_ppcnt_phys(&out).unwrap(),
        vport::PhysCounters::default()
    );
    assert!(
        vport::parse_ppcnt_corrected_bits(&out).is_err(),
        "not group 0x16"
    );
    let out = access_reg(&mut tb, &mut d0, vport::PPCNT_LEN, |b| {
        vport::ppcnt_query(b, vport::PPCNT_PHYS_STATISTICAL, false)
    })
    .unwrap();
    assert_eq!(vport::parse_ppcnt_corrected_bits(&out).unwrap(), 0);
    let out = access_reg(&mut tb, &mut d0, vport::PPCNT_LEN, |b| {
        vport::ppcnt_query(b, vport::PPCNT_IEEE_802_3, false)
    })
    .unwrap();
    assert_eq!(
        vport::parse_ppcnt_ieee_802_3(&out).unwrap().symbol_errors,
        0
    );
    // The FEC and the lanes follow the speed the link resolves to: with `--set-fec rs`
    // (RS at 25G, 50G and 100G, auto at 10G/40G) and both ends forced to each speed, the
    // driver reads RS (RS) at 25G (one lane) and 50G (two), and at 40G (four lanes) what
    // auto runs there, no FEC (Off).
    let new = pplm(&mut tb, &mut d0)
        .with_policy(vport::fec_policy(et::RS, false).unwrap())
        .unwrap();
    assert_eq!(new.admin, [0, 4, 4, 0, 4]);
    access_reg(&mut tb, &mut d0, vport::PPLM_LEN, |b| {
        vport::pplm_set(b, &new)
    })
    .unwrap();
    for (mode, lanes, active) in [
        (1u32 << 27, 1, et::RS),
        (1 << 30, 2, et::RS),
        (1 << 6, 4, et::OFF),
    ] {
        for d in [&mut d0, &mut d1] {
            access_reg(&mut tb, d, vport::PTYS_LEN, |b| {
                vport::ptys_set(b, mode, true)
            })
            .unwrap();
        }
        let p = pplm(&mut tb, &mut d0);
        let out = access_reg(&mut tb, &mut d0, vport::PMLP_LEN, vport::pmlp_query).unwrap();
        assert_eq!(
            (
                vport::parse_pmlp(&out).unwrap(),
                vport::pplm_to_ethtool(p.active),
                vport::pplm_to_ethtool(p.configured())
            ),
            (lanes, active, et::RS),
            "{mode:#x}"
        );
    }
}

#[test]
fn the_driver_reads_why_the_link_is_down() {
    use vport::link_ext::*;
    let r = sim_util::Rig::with_rx_posted(0);
    let mut tb = r.tb;
    let mut d0 = Driver::new(&tb, 0);
    let mut d1 = Driver::new(&tb, 1);
    brought_up(&mut tb, &mut d0);
    brought_up(&mut tb, &mut d1);
    // What `ethtool <dev>` would show after "Link detected: no" on each port.
    let reasons = |tb: &mut Testbed, d0: &mut Driver, d1: &mut Driver| {
        [d0, d1].map(|d| {
            let out = access_reg(tb, d, vport::PDDR_LEN, vport::pddr_query).unwrap();
            vport::link_ext_state(vport::parse_pddr(&out).unwrap())
        })
    };
    let ptys = |tb: &mut Testbed, d: &mut Driver, admin: u32, an_off: bool| {
        access_reg(tb, d, vport::PTYS_LEN, |b| {
            vport::ptys_set(b, admin, an_off)
        })
        .unwrap();
    };
    let paos = |tb: &mut Testbed, d: &mut Driver, st: u8| {
        access_reg(tb, d, vport::PAOS_LEN, |b| vport::paos_set_admin(b, st)).unwrap();
    };
    // Up: nothing to say.
    assert_eq!(reasons(&mut tb, &mut d0, &mut d1), [None, None]);
    // ethtool_extended_state.sh's autoneg: port 0 up alone (port 1 down).
    paos(&mut tb, &mut d1, vport::PORT_DOWN);
    assert_eq!(
        reasons(&mut tb, &mut d0, &mut d1),
        [Some((AUTONEG, AN_NO_PARTNER)), None]
    );
    // Its autoneg_force_mode: both up, forced to different speeds.
    paos(&mut tb, &mut d1, vport::PORT_UP);
    ptys(&mut tb, &mut d0, 1 << 20, true);
    ptys(&mut tb, &mut d1, 1 << 27, true);
    let force = Some((AUTONEG, AN_NO_PARTNER_FORCE));
    assert_eq!(reasons(&mut tb, &mut d0, &mut d1), [force, force]);
    // Both negotiating, nothing in common.
    ptys(&mut tb, &mut d0, 1 << 20, false);
    ptys(&mut tb, &mut d1, 1 << 27, false);
    let no_hcd = Some((AUTONEG, AN_NO_HCD));
    assert_eq!(reasons(&mut tb, &mut d0, &mut d1), [no_hcd, no_hcd]);
    // A common mode: up again.
    ptys(&mut tb, &mut d0, CX_MODES, false);
    assert_eq!(reasons(&mut tb, &mut d0, &mut d1), [None, None]);
}

#[test]
fn the_ports_mtu_follows_the_drivers_pmtu_writes_within_its_maximum() {
    // A port whose largest frame is 4000 bytes of netdev MTU (4022 with L2 header, tag and
    // FCS).
    let caps = Caps {
        port_max_mtu: 4022,
        ..Caps::FULL
    };
    let mut tb = Testbed::with_caps(2, caps);
    let mut d = Driver::new(&tb, 0);
    let res = brought_up(&mut tb, &mut d);
    let pmtu = |tb: &mut Testbed, d: &mut Driver| {
        let out = access_reg(tb, d, vport::PMTU_LEN, vport::pmtu_query).unwrap();
        vport::parse_pmtu(&out).unwrap()
    };
    let p = pmtu(&mut tb, &mut d);
    assert_eq!(p.max, 4022);
    // The netdev's bound, as mlx5e_set_netdev_mtu_boundaries computes it.
    assert_eq!(vport::hw_to_sw_mtu(u32::from(p.max)), 4000);
    // mlx5e_set_mtu of 3000: the admin MTU, and the port runs it.
    let hw = vport::sw_to_hw_mtu(3000) as u16;
    access_reg(&mut tb, &mut d, vport::PMTU_LEN, |b| vport::pmtu_set(b, hw)).unwrap();
    let p = pmtu(&mut tb, &mut d);
    assert_eq!((p.admin, p.oper), (3022, 3022));
    // Above the port's maximum: refused (BAD_PARAM), nothing changes.
    let e = access_reg(&mut tb, &mut d, vport::PMTU_LEN, |b| {
        vport::pmtu_set(b, 4023)
    })
    .expect_err("above max_mtu");
    assert_eq!(e.status().map(|(s, _)| s), Some(0x03), "{e}");
    assert_eq!(pmtu(&mut tb, &mut d).oper, 3022);
    assert_eq!(tear_down(&mut tb, &mut d, &res).first_error(), None);
}

#[test]
fn the_driver_reads_the_ports_cable_module_as_mlx5e() {
    use rsnic_core::sim::mlx5::cmd::module as sim_module;
    use vport::{module_id, EepromLayout, MciaRead, MCIA_LEN};
    let r = sim_util::Rig::with_rx_posted(0);
    let mut tb = r.tb;
    let mut d = Driver::new(&tb, 0);
    let res = brought_up(&mut tb, &mut d);
    // The module of lane 0.
    let out = access_reg(&mut tb, &mut d, vport::PMLP_LEN, vport::pmlp_query).unwrap();
    let module = vport::parse_pmlp_module(&out).unwrap();
    assert_eq!(module, 0);
    // The MCIA input at mlx5_ifc.h's offsets (the register data after the ACCESS_REG
    // header): module byte 1, i2c address byte 4, page byte 5, offset bytes 6-7, size 10-11.
    let read = MciaRead {
        module: 0,
        i2c_address: 0x50,
        page: 2,
        offset: 0x90,
        size: 60,
    };
    let mut inp = vec![0u8; vport::access_reg_len(MCIA_LEN)];
    vport::mcia_query(&mut inp, &read).unwrap();
    let reg = &inp[vport::ACCESS_REG_DATA..];
    assert_eq!(
        &reg[..12],
        &[0, 0, 0, 0, 0x50, 2, 0, 0x90, 0, 0, 0, 48],
        "size cut to 48"
    );
    assert_eq!(u16::from_be_bytes([inp[0], inp[1]]), 0x805, "ACCESS_REG");
    assert_eq!(
        u16::from_be_bytes([inp[6], inp[7]]),
        1,
        "op_mod 1: read (mlx5: !write)"
    );
    assert_eq!(u16::from_be_bytes([inp[10], inp[11]]), 0x9014, "MCIA");
    // A read of `size` bytes at `offset` of page 0 at address 0x50, of module `module`.
    let at = |module: u8, offset: u16, size: u16| MciaRead {
        module,
        i2c_address: 0x50,
        page: 0,
        offset,
        size,
    };
    let mcia = |tb: &mut Testbed, d: &mut Driver, r: MciaRead| {
        access_reg(tb, d, MCIA_LEN, |b| vport::mcia_query(b, &r)).map(|out| {
            let mut data = vec![0u8; usize::from(r.size)];
            let st = vport::parse_mcia(&out, &mut data).unwrap();
            (st, data)
        })
    };
    // Identifier and revision: a QSFP28, SFF-8636 (640 bytes as ethtool reads it).
    let (st, id) = mcia(&mut tb, &mut d, at(0, 0, 2)).unwrap();
    assert_eq!((st, id.as_slice()), (0, &[0x11, 0x08][..]));
    let layout = EepromLayout::of(id[0], id[1]).unwrap();
    assert_eq!((layout, layout.bytes()), (EepromLayout::Sff8636, 640));
    assert_eq!(
        EepromLayout::of(module_id::QSFP_PLUS, 2),
        Some(EepromLayout::Sff8436)
    );
    assert_eq!(
        EepromLayout::of(module_id::SFP, 0),
        Some(EepromLayout::Sff8472)
    );
    assert_eq!(EepromLayout::of(0x18, 0), None, "QSFP-DD: not mlx5e's");
    // Page 0 in the reads mlx5e makes (48 bytes, never across the page).
    let mut page0 = Vec::new();
    let mut off = 0;
    while off < 256 {
        let r = MciaRead::flat(0, id[0], off, 640 - off).unwrap();
        assert_eq!(
            (r.i2c_address, r.page, usize::from(r.offset)),
            (0x50, 0, off)
        );
        let (st, data) = mcia(&mut tb, &mut d, r).unwrap();
        assert_eq!(st, 0);
        off += data.len();
        page0.extend(data);
    }
    assert_eq!(page0.len(), 256, "the last read cut at the page's end");
    assert_eq!(page0.as_slice(), &sim_module::EEPROM[..]);
    // SFF-8636 at hand-written offsets: identifier again in upper page 00h, no separable
    // connector, extended compliance 100GBASE-CR4 (SFF-8024 0x0b), 1 m of copper, the
    // vendor's name, flat memory, and both check codes.
    assert_eq!(
        (
            page0[2] & 0x04,
            page0[128],
            page0[130],
            page0[131],
            page0[146],
            page0[192]
        ),
        (0x04, 0x11, 0x23, 0x80, 1, 0x0b)
    );
    assert_eq!(&page0[148..164], b"RSNIC MODEL     ");
    let sum = |a: usize, b: usize| page0[a..b].iter().map(|&x| u32::from(x)).sum::<u32>() as u8;
    assert_eq!(page0[191], sum(128, 191), "CC_BASE");
    assert_eq!(page0[223], sum(192, 223), "CC_EXT");
    // Flat offsets past 256 are upper pages 1..3 from byte 128 (mlx5's addressing); the
    // flat-memory module answers them with page 00h.
    let r = MciaRead::flat(0, id[0], 400, 100).unwrap();
    assert_eq!((r.page, r.offset, r.size), (2, 144, 48));
    let (st, data) = mcia(&mut tb, &mut d, r).unwrap();
    assert_eq!((st, data.as_slice()), (0, &page0[144..192]));
    let r = MciaRead::flat(0, module_id::SFP, 300, 10).unwrap();
    assert_eq!((r.i2c_address, r.page, r.offset, r.size), (0x51, 0, 44, 10));
    // The device's refusals: more than 12 dwords, across the page's end, another module,
    // a write (BAD_PARAM); another I2C address answers status 9.
    for bad in [at(0, 250, 8), at(1, 0, 4)] {
        let e = mcia(&mut tb, &mut d, bad).expect_err("refused");
        assert_eq!(e.status().map(|(s, _)| s), Some(0x03), "{e}");
    }
    let mut big = vec![0u8; vport::access_reg_len(MCIA_LEN)];
    vport::mcia_query(&mut big, &read).unwrap();
    big[vport::ACCESS_REG_DATA + 11] = 49;
    let mut out = vec![0u8; big.len()];
    let e = d.exec(&mut tb, &big, &mut out).expect_err("49 bytes");
    assert_eq!(e.status().map(|(s, _)| s), Some(0x03), "{e}");
    big[vport::ACCESS_REG_DATA + 11] = 4;
    big[6..8].copy_from_slice(&0u16.to_be_bytes());
    let e = d.exec(&mut tb, &big, &mut out).expect_err("a write");
    assert_eq!(e.status().map(|(s, _)| s), Some(0x03), "{e}");
    let (st, _) = mcia(
        &mut tb,
        &mut d,
        MciaRead {
            i2c_address: 0x51,
            ..at(0, 0, 4)
        },
    )
    .unwrap();
    assert_eq!(st, 9);
    assert_eq!(tear_down(&mut tb, &mut d, &res).first_error(), None);
}
