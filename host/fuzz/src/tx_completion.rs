// SPDX-License-Identifier: GPL-2.0

//! The driver-side SQ against a hostile device.
//!
//! The input configures an SQ (ring size, MPWQE with or without inlining, min-inline mode,
//! device WQE size limit), then runs a program of operations: transmit packets of every
//! shape (linear frames that MPWQE sessions carry, non-linear packets, GSO, VLAN, checksum
//! requests, raw header bytes, DMA mapping failures), write CQEs into the CQ (plausible ones
//! aimed at outstanding WQEs, and arbitrary bytes: owner bits, opcodes, `wqe_counter`s,
//! syndromes, formats), poke single bytes, poll, recover (drain + reset), arm, switch MPWQE,
//! flush (close the session and ring, as the XDP SQs do once per batch).
//!
//! Invariants checked:
//! * nothing panics and no host DMA buffer is accessed out of bounds (`HostBuf` panics);
//! * a packet is released at most once, only after it was accepted, never after it was
//!   handed back by `xmit`; the poll's and the drain's packet counts match the releases;
//! * `pc − cc` never exceeds the ring size; doorbells name this SQ at its register;
//! * the environment's own checks ([`Env`]): DMA maps and unmaps balance, no empty
//!   fragment is mapped, the queue is never stopped twice or woken while running, BQL never
//!   completes more than was sent;
//! * while the stack respects the stopped queue, `xmit` never answers `Busy` (the stop room
//!   is enough);
//! * at the end, after drain and reset, every accepted packet came back exactly once, every
//!   mapping was undone, BQL balances (bytes and packets), and the SQ works again: a new
//!   packet is completed by a valid CQE.

use rsnic_core::hwif::hw::Coherent;
use rsnic_core::hwif::mlx5::cq::{Cq, CQ_DOORBELL_OFFSET};
use rsnic_core::hwif::mlx5::cqe::{Cqe64, CQE_REQ, CQE_REQ_ERR};
use rsnic_core::hwif::mlx5::sq::{SqParams, BF_OFFSET};
use rsnic_core::hwif::mlx5::tx::{Gso, InlineMode, TxCsum, TxRejectReason, VlanTag};
use rsnic_testbed::fixtures::tcp4_frame;
use rsnic_testbed::mem::{HostBuf, HostMemory};
use rsnic_testbed::pair::{new_vec_sq, VecSq};

use crate::env::{
    assert_sent_after_recovery, poke_cq, raw_cqe, release, Env, Mlx5Cq, Pkt, TxSt as St,
};
use crate::Input;

const SQN: u32 = 0x00_0abc;
const LKEY: u32 = 0x1234;
const UAR: u32 = 0x4000;
const CQN: u32 = 0x77;

type FuzzSq = VecSq<Pkt, HostBuf>;

struct Harness {
    sq: FuzzSq,
    env: Env,
    ring: HostBuf,
    cqbuf: HostBuf,
    cq_log: u8,
    states: Vec<St>,
    drained_bytes: u64,
    drained_pkts: u64,
}

/// Ring positions (free-running) of the WQEs between `cc` and `pc`, read back from the
/// ctrl segments the driver wrote.
fn wqe_starts(sq: &FuzzSq, ring: &HostBuf) -> Vec<u16> {
    let mask = sq.size() - 1;
    let mut v = Vec::new();
    let mut c = sq.cc();
    let pc = sq.pc();
    while c != pc && v.len() <= usize::from(sq.size()) {
        let ds = ring.read_u8(usize::from(c & mask) * 64 + 7) & 0x3f;
        let nw = u16::from(ds).div_ceil(4).max(1);
        v.push(c);
        if nw > pc.wrapping_sub(c) {
            break;
        }
        c = c.wrapping_add(nw);
    }
    v
}

impl Harness {
    fn new_pkt(&mut self, inp: &mut Input<'_>) -> (Pkt, bool) {
        let kind = inp.u8();
        let len = usize::from(inp.u16() % 1600);
        let id = self.states.len() as u32;
        let mut pkt = Pkt {
            id,
            linear: Vec::new(),
            frags: Vec::new(),
            gso: None,
            csum: match (kind >> 4) & 3 {
                0 | 1 => TxCsum::None,
                2 => TxCsum::Partial,
                _ => TxCsum::PartialInner,
            },
            vlan: (kind & 8 != 0).then(|| VlanTag {
                tci: inp.u16(),
                dot1ad: kind & 0x40 != 0,
            }),
        };
        let nfrags = |inp: &mut Input<'_>| usize::from(inp.u8() % 20);
        match kind & 3 {
            // A linear frame: what MPWQE sessions carry.
            0 => pkt.linear = tcp4_frame(len.max(14), kind),
            // Headers in the linear part, payload in fragments.
            1 => {
                pkt.linear = tcp4_frame(54 + len % 200, kind);
                for _ in 0..nfrags(inp) {
                    pkt.frags.push(u32::from(inp.u16()));
                }
            }
            // GSO.
            2 => {
                pkt.linear = tcp4_frame(54 + len % 1500, kind);
                for _ in 0..nfrags(inp) {
                    pkt.frags.push(u32::from(inp.u16()));
                }
                pkt.gso = Some(Gso {
                    size: inp.u16(),
                    segs: inp.u16(),
                });
            }
            // Raw linear bytes: whatever the header parser makes of them.
            _ => {
                pkt.linear = inp.bytes(len % 300);
                for _ in 0..nfrags(inp) % 4 {
                    pkt.frags.push(u32::from(inp.u8()));
                }
            }
        }
        (pkt, kind & 4 != 0)
    }

    fn xmit(&mut self, pkt: Pkt, xmit_more: bool) -> Result<(), TxRejectReason> {
        let id = pkt.id;
        self.states.push(St::InFlight);
        let was_stopped = self.env.stopped;
        match self.sq.xmit(pkt, xmit_more, &mut self.env) {
            Ok(()) => Ok(()),
            Err(rej) => {
                assert_eq!(rej.pkt.id, id, "xmit handed back another packet");
                self.states[id as usize] = St::Rejected;
                if rej.reason == TxRejectReason::Busy {
                    assert!(was_stopped, "Busy although the queue was running");
                }
                Err(rej.reason)
            }
        }
    }

    fn poll(&mut self) {
        let mut n = 0u32;
        let states = &mut self.states;
        let r = self.sq.poll_cq(&mut self.env, |p| {
            release(states, p.id);
            n += 1;
        });
        assert_eq!(r.packets, n, "poll reports other packets than it released");
        assert!(r.cqes <= 128, "poll budget exceeded");
    }

    fn recover(&mut self) {
        let mut n = 0u32;
        let states = &mut self.states;
        let (pk, by) = self.sq.drain(&mut self.env, |p| {
            release(states, p.id);
            n += 1;
        });
        assert_eq!(pk, n, "drain reports other packets than it released");
        self.drained_bytes += u64::from(by);
        self.drained_pkts += u64::from(pk);
        assert_eq!(self.sq.pc(), self.sq.cc(), "drain left WQEs");
        assert_eq!(self.sq.outstanding_pkts(), 0, "drain left packets");
        self.sq.reset().expect("reset after drain");
        assert!(self.sq.error().is_none());
        // The channel is activated again (`netif_tx_start_queue`).
        self.env.stopped = false;
    }

    /// The CQ as the hostile device writes it.
    fn hw_cq(&self) -> Mlx5Cq<'_> {
        Mlx5Cq {
            buf: &self.cqbuf,
            log: self.cq_log,
        }
    }

    /// The register writes since the last check: arm doorbells name the CQ, doorbells name
    /// this SQ at its register.
    fn check_writes(&self) {
        for (offset, b) in self.env.take_writes() {
            let lo = u32::from_be_bytes([b[4], b[5], b[6], b[7]]);
            if offset == UAR + CQ_DOORBELL_OFFSET {
                assert_eq!(lo, CQN, "arm doorbell names another CQ");
            } else {
                assert_eq!(offset, UAR + BF_OFFSET, "doorbell at the wrong register");
                assert_eq!(lo >> 8, SQN, "doorbell names another SQ");
            }
        }
    }

    /// A CQE that looks plausible: aimed at an outstanding WQE, with the right owner bit
    /// most of the time.
    fn structured_cqe(&mut self, inp: &mut Input<'_>) {
        let starts = wqe_starts(&self.sq, &self.ring);
        let sel = inp.u8();
        let ctr = self.sq.cq().cc().wrapping_add(u32::from(sel & 3));
        let owner = self.sq.cq().parity(ctr) ^ u8::from(sel & 4 != 0);
        let opcode = match (sel >> 3) & 7 {
            0..=3 => CQE_REQ,
            4 | 5 => CQE_REQ_ERR,
            _ => inp.u8() & 0xf,
        };
        let format = if sel & 0x80 != 0 { inp.u8() & 3 } else { 0 };
        let wsel = inp.u8();
        let pick = inp.u8();
        let start = if starts.is_empty() {
            self.sq.pc().wrapping_sub(1)
        } else if pick >= 128 {
            starts[starts.len() - 1]
        } else {
            starts[usize::from(pick) % starts.len()]
        };
        let wc = match wsel & 3 {
            0 | 1 => start,
            2 => start
                .wrapping_add(u16::from((wsel >> 2) & 7))
                .wrapping_sub(3),
            _ => inp.u16(),
        };
        let mut c = Cqe64::default();
        c.set_wqe_counter(wc);
        c.set_sop_drop_qpn((u32::from(inp.u8()) << 24) | SQN);
        if opcode == CQE_REQ_ERR {
            c.set_syndrome(inp.u8(), inp.u8());
        }
        c.set_op_own(opcode, format, owner);
        self.hw_cq().write(ctr, &c);
    }
}

impl crate::Harness for Harness {
    const MAX_OPS: usize = 400;

    fn new(inp: &mut Input<'_>) -> Self {
        let cfg = inp.u8();
        let cfg2 = inp.u8();
        let log_sz = 6 + (cfg & 1);
        let max_sq_wqebbs = [16, 16, 8, 4, 2, 3, 15, 12][usize::from(cfg2 & 7)];
        let p = SqParams {
            log_sz,
            sqn: SQN,
            lkey: LKEY,
            db_offset: UAR + BF_OFFSET,
            dbr_off: 0,
            min_inline: match (cfg >> 3) & 3 {
                0 => InlineMode::None,
                1 => InlineMode::L2,
                2 => InlineMode::Ip,
                _ => InlineMode::TcpUdp,
            },
            vlan_need_l2_inline: cfg & 0x20 != 0,
            max_sq_wqebbs,
            mpwqe: cfg & 2 != 0,
            mpwqe_inline: cfg & 4 != 0,
        };
        let n = 1usize << log_sz;
        let cq_log = log_sz + ((cfg2 >> 3) & 1);
        let mem = HostMemory::new();
        let ring = mem.alloc(n * 64);
        let dbr = mem.alloc(8);
        let cqbuf = mem.alloc((1usize << cq_log) * 64);
        let cqdbr = mem.alloc(8);
        let cq = Cq::new(cqbuf.clone(), cqdbr, 0, cq_log, CQN, UAR).expect("cq");
        let sq = new_vec_sq(p, ring.clone(), dbr, cq).expect("sq");
        Self {
            sq,
            env: Env::default(),
            ring,
            cqbuf,
            cq_log,
            states: Vec::new(),
            drained_bytes: 0,
            drained_pkts: 0,
        }
    }

    fn op(&mut self, inp: &mut Input<'_>) {
        match inp.u8() % 16 {
            0..=4 => {
                let (pkt, xmit_more) = self.new_pkt(inp);
                let f = inp.u8();
                self.env.fail_map(f);
                // The stack does not transmit on a stopped queue.
                if !self.env.stopped {
                    let _ = self.xmit(pkt, xmit_more);
                }
                self.env.fail_at = None;
            }
            5..=7 => self.structured_cqe(inp),
            8 => {
                let (slot, c) = raw_cqe(inp);
                self.hw_cq().write(slot, &Cqe64(c));
            }
            9 => poke_cq(&self.cqbuf, 1 << self.cq_log, inp),
            10..=12 => self.poll(),
            13 => self.recover(),
            14 => {
                let cq = self.sq.cq_mut();
                cq.event();
                cq.arm(u32::from(inp.u8()) << 24, &self.env, &self.env);
            }
            _ => {
                let b = inp.u8();
                if b & 4 != 0 {
                    // The XDP SQs' batch doorbell (one per NAPI poll or ndo_xdp_xmit batch).
                    self.sq.flush(&mut self.env);
                } else if b & 1 != 0 {
                    let before = self.sq.stop_room();
                    if self.sq.set_mpwqe(b & 2 != 0).is_err() {
                        assert_eq!(self.sq.stop_room(), before);
                    }
                } else {
                    self.sq.set_mpwqe_inline(b & 2 != 0);
                }
            }
        }
        let used = self.sq.pc().wrapping_sub(self.sq.cc());
        assert!(used <= self.sq.size(), "pc − cc = {used} exceeds the ring");
        self.check_writes();
    }

    fn finish(mut self) {
        self.recover();
        self.env
            .check_all_back(&self.states, self.drained_bytes, self.drained_pkts);

        // The SQ works again: one packet, one valid CQE for it.
        let id = self.states.len() as u32;
        let pkt = Pkt::linear(id, tcp4_frame(64, 1), TxCsum::None);
        self.xmit(pkt, false).expect("xmit after recovery");
        let starts = wqe_starts(&self.sq, &self.ring);
        let last = *starts.last().expect("a WQE after recovery");
        let ctr = self.sq.cq().cc();
        let mut c = Cqe64::default();
        c.set_wqe_counter(last);
        c.set_sop_drop_qpn(SQN);
        c.set_op_own(CQE_REQ, 0, self.sq.cq().parity(ctr));
        self.hw_cq().write(ctr, &c);
        let next = ctr.wrapping_add(1);
        self.hw_cq().hw_owned(next, self.sq.cq().parity(next));
        self.poll();
        assert_sent_after_recovery(&self.states, id);
        assert!(self.sq.error().is_none());
        self.recover();
        assert!(self.env.maps.is_empty());
        self.check_writes();
    }
}

/// One fuzz input.
pub fn run(data: &[u8]) {
    crate::drive::<Harness>(data);
}
