// SPDX-License-Identifier: GPL-2.0

//! The driver-side MANA SQ (`hwif::mana::sq`) against a hostile device.
//!
//! The input configures an SQ (queue size, TX CQ size, vport offset: above 255 every WQE
//! takes the long OOB), then runs a program: transmit packets of every shape (linear frames,
//! headers in the linear part with the payload in fragments, empty fragments, TSO, checksum
//! requests for TCP/UDP over IPv4/IPv6 or for protocols the device cannot offload, VLAN tags
//! to insert, raw bytes, DMA mapping failures, `xmit_more` bursts), write CQEs into the TX CQ
//! (plausible ones at the consumer and a few slots beyond, with owner bits that are valid,
//! stale or from another pass; TX_OKAY, the nine error types, RX types or anything; for this
//! SQ, another queue or an RQ), write arbitrary CQE bytes, poke single bytes, poll (plain or
//! as a NAPI round with a budget), ring the CQ, and recover (drain, then a new SQ).
//!
//! Invariants checked:
//! * nothing panics and no host DMA buffer is accessed out of bounds (`HostBuf` panics);
//! * every packet handed to `xmit` comes back exactly once: handed back by `xmit`, released
//!   by a completion (in FIFO order) or by the drain; the poll's counts match the releases;
//! * a rejected packet leaves no DMA mapping behind and no WQE unannounced; a well-formed
//!   packet is accepted while the queue runs and the SQ is healthy (never `Busy`);
//! * every WQE the driver posts is one the device accepts structurally (spec D.2, D.5),
//!   decoded here independently: `num_sge` 1..=30, an 8- or 24-byte OOB matching `pkt_fmt`,
//!   at most 512 bytes, `vcq_num`/`vsq_frame`/vport offset, VLAN fields, checksum and TSO
//!   bits with the right transport offset, OOB_IN_SGL only with at least 2 SGEs, SGE0 = the
//!   headers for TSO, SGEs of non-zero size inside live DMA mappings that add up to the
//!   packet length;
//! * doorbells: SQ doorbells name this SQ with `tail_ptr = head · 32` at the SQ register,
//!   once per burst (nothing stays unannounced after a packet without `xmit_more`, a stop or
//!   a rejection); CQ doorbells name the CQ with `head mod (num << 3)`;
//! * ring accounting: `head − tail` is the sum of the BUs of the outstanding WQEs and never
//!   exceeds the ring; the free space is `size − 32 · used`; the completion moves the tail by
//!   exactly the BUs of the WQEs it completes;
//! * the queue is stopped exactly when less than a maximum WQE is free (while healthy), and
//!   never woken while the SQ is in error; an SQ in error completes nothing: the CQEs it
//!   consumes are discarded unread and counted (`cqe_discarded`), so its CQ is armed past
//!   them;
//! * BQL never completes more than was sent, and balances after the drain; DMA maps and
//!   unmaps balance;
//! * at the end (drain, then a new SQ, as a channel reopen does) the SQ works: a packet is
//!   completed by a valid CQE.

use std::collections::VecDeque;

use rsnic_core::hwif::hw::Coherent;
use rsnic_core::hwif::mana::cq::Cq;
use rsnic_core::hwif::mana::sq::{Sq, SqParams, TxPending, STOP_ROOM, TX_POLL_MAX};
use rsnic_core::hwif::mlx5::tx::{DmaEntry, Gso, TxCsum, TxPacket, TxRejectReason, VlanTag};
use rsnic_testbed::mem::{HostBuf, HostMemory};

use crate::env::{
    assert_sent_after_recovery, mana_cqe, mana_owner, poke_cq, raw_cqe, release, write_mana_cqe,
    Env, Pkt, TxSt as St,
};
use crate::{le32, Input};

/// SQ id (24 bits, with bits above 10 set: `vsq_frame` must still be 0, as upstream's).
pub const SQ_ID: u32 = 0x12_3456;
/// TX CQ id.
pub const CQ_ID: u32 = 0x00_3007;
const MKEY: u32 = 0x77;
/// SQ doorbell register (page 0, SQ offset 0x000).
pub const SQ_DB: u32 = 0x1000;
/// CQ doorbell register (page 0, CQ offset 0x800).
pub const CQ_DB: u32 = 0x1800;
const TX_OKAY: u8 = 32;

/// Packet header shape the harness builds (and therefore knows).
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    /// Offset of the transport header.
    pub trans_off: u16,
    /// Transport header length (TCP with options, UDP 8), 0 for another protocol.
    pub l4_len: u16,
    /// TCP (true) or UDP (false); None: neither.
    pub tcp: Option<bool>,
    /// IPv4 (true) or IPv6 (false); None: not IP.
    pub ipv4: Option<bool>,
}

type FuzzSq = Sq<Pkt, HostBuf, Vec<TxPending<Pkt>>, Vec<DmaEntry>>;

/// What the harness knows about a packet it offers.
#[derive(Debug, Clone)]
struct Offer {
    len: u32,
    linear: u32,
    frags: Vec<u32>,
    gso: Option<Gso>,
    csum: TxCsum,
    vlan: Option<VlanTag>,
    /// Headers the harness built (None: raw bytes).
    layout: Option<Layout>,
}

impl Offer {
    /// What the harness knows of `pkt`, whose headers it built as `layout` (if it did).
    fn of(pkt: &Pkt, layout: Option<Layout>) -> Self {
        Self {
            len: pkt.pkt_len(),
            linear: pkt.linear.len() as u32,
            frags: pkt.frags.clone(),
            gso: pkt.gso,
            csum: pkt.csum,
            vlan: pkt.vlan,
            layout,
        }
    }
}

/// An accepted packet, in FIFO order.
#[derive(Debug, Clone, Copy)]
struct Posted {
    id: u32,
    bus: u32,
    bytes: u32,
    maps: usize,
}

/// Ethernet (+ an optional in-band 802.1Q tag) + IPv4/IPv6/ARP + TCP (with `opt_words` of
/// options)/UDP/GRE + payload, at least as long as the headers.
pub fn build_frame(
    l3: u8,
    l4: u8,
    opt_words: u8,
    inband_vlan: bool,
    len: usize,
    seed: u8,
) -> (Vec<u8>, Layout) {
    let mut h = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
    if inband_vlan {
        h.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
    }
    let ipv4 = match l3 % 3 {
        0 => Some(true),
        1 => Some(false),
        _ => None,
    };
    let (tcp, l4_len, proto) = match l4 % 3 {
        0 => (Some(true), 20 + 4 * u16::from(opt_words % 11), 6u8),
        1 => (Some(false), 8, 17),
        _ => (None, 0, 47),
    };
    match ipv4 {
        Some(true) => {
            h.extend_from_slice(&[0x08, 0x00]);
            let mut ip = [0u8; 20];
            ip[0] = 0x45;
            ip[8] = 64;
            ip[9] = proto;
            ip[12..16].copy_from_slice(&[10, 0, 0, 1]);
            ip[16..20].copy_from_slice(&[10, 0, 0, 2]);
            h.extend_from_slice(&ip);
        }
        Some(false) => {
            h.extend_from_slice(&[0x86, 0xdd]);
            let mut ip = [0u8; 40];
            ip[0] = 0x60;
            ip[6] = proto;
            ip[7] = 64;
            ip[23] = 1;
            ip[39] = 2;
            h.extend_from_slice(&ip);
        }
        None => h.extend_from_slice(&[0x08, 0x06]),
    }
    let trans_off = h.len() as u16;
    if ipv4.is_some() {
        let mut l = vec![0u8; usize::from(l4_len)];
        if tcp == Some(true) {
            l[12] = ((l4_len / 4) as u8) << 4;
        }
        h.extend_from_slice(&l);
    }
    let layout = Layout {
        trans_off,
        l4_len: if ipv4.is_some() { l4_len } else { 0 },
        tcp: if ipv4.is_some() { tcp } else { None },
        ipv4,
    };
    let n = len.max(h.len());
    let mut f = h;
    let start = f.len();
    f.resize(n, 0);
    for (i, b) in f.iter_mut().enumerate().skip(start) {
        *b = seed.wrapping_add(i as u8);
    }
    (f, layout)
}

/// Sizes of the CQ relative to the number of BUs of the SQ.
const CQ_FACTORS: [u32; 3] = [1, 2, 4];

struct Harness {
    sq: FuzzSq,
    env: Env,
    ring: HostBuf,
    cqbuf: HostBuf,
    queue_size: u32,
    cq_num: u32,
    vp_offset: u16,
    states: Vec<St>,
    fifo: VecDeque<Posted>,
    drained_bytes: u64,
    drained_pkts: u64,
    /// tail_ptr of the last SQ doorbell of the current SQ.
    last_sq_tail: Option<u32>,
    /// Whether the SQ was in error at the start of the current operation.
    was_error: bool,
}

fn build(queue_size: u32, cq_num: u32, vp_offset: u16) -> (FuzzSq, HostBuf, HostBuf) {
    let mem = HostMemory::new();
    let ring = mem.alloc(queue_size as usize);
    let cqbuf = mem.alloc(cq_num as usize * 64);
    let cq = Cq::new(cqbuf.clone(), CQ_ID, cq_num, CQ_DB).expect("cq");
    let n = (queue_size / 32) as usize;
    let sq = Sq::new(
        SqParams {
            queue_size,
            sq_id: SQ_ID,
            cq_id: CQ_ID,
            mkey: MKEY,
            db_offset: SQ_DB,
            vp_offset,
        },
        ring.clone(),
        cq,
        (0..n).map(|_| TxPending::default()).collect(),
        vec![DmaEntry::default(); 2 * n],
    )
    .expect("sq");
    (sq, ring, cqbuf)
}

impl Harness {
    fn new_pkt(&mut self, inp: &mut Input<'_>) -> (Pkt, Offer, bool) {
        let kind = inp.u8();
        let shape = inp.u8();
        let len = usize::from(inp.u16() % 1600);
        let id = self.states.len() as u32;
        let csum = match (kind >> 4) & 3 {
            0 | 1 => TxCsum::None,
            2 => TxCsum::Partial,
            _ => TxCsum::PartialInner,
        };
        let vlan = (kind & 8 != 0).then(|| VlanTag {
            tci: inp.u16(),
            dot1ad: false,
        });
        let (l3, l4, opts, inband) = (shape & 3, (shape >> 2) & 3, shape >> 4, shape & 0x80 != 0);
        let nfrags = |inp: &mut Input<'_>| usize::from(inp.u8() % 36);
        let frag = |inp: &mut Input<'_>| match inp.u8() % 8 {
            0 => 0,
            1 => 1 + u32::from(inp.u8()),
            _ => 1 + u32::from(inp.u16() % 4096),
        };
        let mut layout = None;
        let mut frags = Vec::new();
        let mut gso = None;
        let linear = match kind & 3 {
            // A linear frame.
            0 => {
                let (f, l) = build_frame(l3, l4, opts, inband, len.max(14), kind);
                layout = Some(l);
                f
            }
            // Headers (and maybe some payload) in the linear part, payload in fragments.
            1 | 2 => {
                let (f, l) = build_frame(l3, l4, opts, inband, len % 200, kind);
                layout = Some(l);
                for _ in 0..nfrags(inp) {
                    frags.push(frag(inp));
                }
                if kind & 3 == 2 {
                    let size = match inp.u8() % 8 {
                        0 => 0,
                        1 => 0x3fff + u16::from(inp.u8()),
                        _ => 1 + inp.u16() % 9000,
                    };
                    gso = Some(Gso {
                        size,
                        segs: inp.u16(),
                    });
                }
                f
            }
            // Raw bytes, maybe empty, with a few fragments and any offload request.
            _ => {
                let b = inp.bytes(len % 300);
                for _ in 0..nfrags(inp) % 4 {
                    frags.push(u32::from(inp.u8()));
                }
                if shape & 0x40 != 0 {
                    gso = Some(Gso {
                        size: inp.u16(),
                        segs: 1,
                    });
                }
                b
            }
        };
        let pkt = Pkt {
            id,
            linear,
            frags,
            gso,
            csum,
            vlan,
        };
        let offer = Offer::of(&pkt, layout);
        (pkt, offer, kind & 4 != 0)
    }

    /// Whether the harness's own reading of spec D.5 says the packet is transmittable.
    fn acceptable(o: &Offer) -> bool {
        let nfrag = o.frags.iter().filter(|&&f| f != 0).count();
        if o.len == 0 {
            return false;
        }
        let Some(l) = o.layout else {
            return false;
        };
        let ihs = u32::from(l.trans_off) + u32::from(l.l4_len);
        if let Some(g) = o.gso {
            // TSO needs TCP, an MSS, the headers in the linear part and some payload.
            let nsge = 1 + usize::from(o.linear > ihs) + nfrag;
            return l.tcp == Some(true)
                && (1..=0x3fff).contains(&g.size)
                && ihs <= o.linear
                && o.len > ihs
                && nsge <= 30;
        }
        if o.csum != TxCsum::None && (l.tcp.is_none() || o.linear < ihs) {
            return false;
        }
        let nsge = usize::from(o.linear > 0) + nfrag;
        (1..=30).contains(&nsge)
    }

    fn xmit(&mut self, pkt: Pkt, offer: &Offer, xmit_more: bool) {
        let id = pkt.id;
        self.states.push(St::InFlight);
        let head0 = self.sq.wq().head();
        let maps0 = self.env.maps.len();
        let calls0 = self.env.map_calls;
        let fail = self.env.fail_at;
        let in_error = self.sq.error().is_some();
        match self.sq.xmit(pkt, xmit_more, &mut self.env) {
            Ok(()) => {
                assert!(!in_error, "an SQ in error accepted a packet");
                let bus = self.sq.wq().head().wrapping_sub(head0);
                assert!((1..=16).contains(&bus), "a WQE of {bus} BUs");
                let maps = self.env.maps.len() - maps0;
                self.check_wqe(head0, bus, offer);
                self.fifo.push_back(Posted {
                    id,
                    bus,
                    bytes: offer.len,
                    maps,
                });
                if !xmit_more || self.env.stopped {
                    assert!(
                        !self.sq.unrung(),
                        "the end of a burst left WQEs unannounced"
                    );
                }
            }
            Err(rej) => {
                assert_eq!(rej.pkt.id, id, "xmit handed back another packet");
                self.states[id as usize] = St::Rejected;
                assert_ne!(
                    rej.reason,
                    TxRejectReason::Busy,
                    "Busy although the queue was running"
                );
                assert_eq!(self.sq.wq().head(), head0, "a rejected packet moved head");
                assert_eq!(
                    self.env.maps.len(),
                    maps0,
                    "a rejected packet left DMA mappings"
                );
                assert!(!self.sq.unrung(), "a rejection left WQEs unannounced");
                let failed = fail.is_some_and(|f| (calls0..self.env.map_calls).contains(&f));
                assert_eq!(
                    rej.reason == TxRejectReason::MapError,
                    failed,
                    "MapError without a map failure, or a map failure reported otherwise"
                );
                if !in_error && !failed {
                    assert!(
                        !Self::acceptable(offer),
                        "a transmittable packet was rejected: {:?} {offer:?}",
                        rej.reason
                    );
                }
                if in_error {
                    assert_eq!(rej.reason, TxRejectReason::SqError);
                }
            }
        }
        if !in_error && self.env.fail_at.is_none() && Self::acceptable(offer) {
            assert_eq!(self.states[id as usize], St::InFlight, "not accepted");
        }
    }

    /// Decodes the WQE at `head0` (spec D.2, D.5) without the driver's format code and
    /// checks it against the packet.
    fn check_wqe(&self, head0: u32, bus: u32, o: &Offer) {
        let mask = (self.queue_size - 1) as usize;
        let off = (head0.wrapping_mul(32) as usize) & mask;
        let mut w = [0u8; 512];
        for (i, b) in w.iter_mut().enumerate().take(bus as usize * 32) {
            *b = self.ring.read_u8((off + i) & mask);
        }
        let (dw0, dw1) = (le32(&w, 0), le32(&w, 4));
        let nsge = (dw1 & 0xff) as usize;
        let oob = ((dw1 >> 8) & 7) as usize * 4;
        let in_sgl = dw1 & (1 << 11) != 0;
        let cdu = (dw1 >> 16) & 0x3fff;
        let last_vbytes = dw0 >> 24;
        assert_eq!(dw0 & 0x00ff_ffff, 0, "reserved header bits");
        assert_eq!(dw1 & 0xc000_f000, 0, "reserved header bits");
        assert!((1..=30).contains(&nsge), "num_sge {nsge}");
        assert!(oob == 8 || oob == 24, "inline OOB of {oob} bytes");
        let size = (8 + oob + 16 * nsge).div_ceil(32);
        assert_eq!(size as u32, bus, "WQE size vs head advance");
        assert!(size * 32 <= 512);
        assert!(!in_sgl || nsge >= 2, "OOB_IN_SGL with {nsge} SGE");
        let long = oob == 24;
        assert_eq!(
            long,
            o.vlan.is_some() || self.vp_offset > 255,
            "long OOB iff VLAN insertion or a vport offset above 255"
        );
        let (o0, o1) = (le32(&w, 8), le32(&w, 12));
        assert_eq!(o0 & 3, u32::from(long), "pkt_fmt");
        assert_eq!(o0 >> 8, CQ_ID, "vcq_num");
        assert_eq!(o0 & 0x80, 0, "suppress_txcqe_gen");
        // Never set by upstream (txq->vsq_frame stays 0), nor by rsnic.
        assert_eq!((o1 >> 10) & 0x3fff, 0, "vsq_frame");
        let short_vp = if long { 0 } else { self.vp_offset as u32 };
        assert_eq!(o1 >> 24, short_vp, "short_vp_offset");
        if long {
            let (o2, o3) = (le32(&w, 16), le32(&w, 20));
            assert_eq!(
                (o3 >> 16) & 0xfff,
                u32::from(self.vp_offset),
                "long_vp_offset"
            );
            match o.vlan {
                Some(t) => {
                    assert_ne!(o2 & 8, 0, "inject_vlan_pri_tag");
                    assert_eq!((o2 >> 16) & 7, u32::from(t.tci >> 13), "pcp");
                    assert_eq!((o2 >> 19) & 1, u32::from((t.tci >> 12) & 1), "dei");
                    assert_eq!(o2 >> 20, u32::from(t.tci & 0xfff), "vlan_id");
                }
                None => assert_eq!(o2 & 8, 0, "inject_vlan_pri_tag without a tag"),
            }
        }
        // Offload bits.
        let (v4, v6, ipcs, tcpcs, udpcs) = (
            o0 & 4 != 0,
            o0 & 8 != 0,
            o0 & 16 != 0,
            o0 & 32 != 0,
            o0 & 64 != 0,
        );
        let trans_off = o1 & 0x3ff;
        let offload = o.gso.is_some() || o.csum != TxCsum::None;
        if !offload {
            assert!(
                !(v4 || v6 || ipcs || tcpcs || udpcs),
                "offload bits unasked"
            );
        } else if let Some(l) = o.layout {
            // trans_off for TCP (checksum, TSO); 0 for a UDP checksum, as upstream.
            let want = if l.tcp == Some(false) && o.gso.is_none() {
                0
            } else {
                u32::from(l.trans_off)
            };
            assert_eq!(trans_off, want, "trans_off");
            assert_eq!((v4, v6), (l.ipv4 == Some(true), l.ipv4 == Some(false)));
            if o.gso.is_some() {
                assert!(ipcs && tcpcs && !udpcs, "TSO checksum bits");
            } else {
                assert!(!ipcs, "IP header checksum without TSO");
                assert_eq!((tcpcs, udpcs), (l.tcp == Some(true), l.tcp == Some(false)));
            }
        }
        // TSO.
        assert_eq!(in_sgl, o.gso.is_some(), "OOB_IN_SGL iff TSO");
        match o.gso {
            Some(g) => assert_eq!(cdu, u32::from(g.size), "client_data_unit = MSS"),
            None => assert_eq!(cdu, 0, "client_data_unit without TSO"),
        }
        // SGEs.
        let mut total = 0u64;
        let mut sizes = Vec::new();
        for i in 0..nsge {
            let at = 8 + oob + 16 * i;
            let addr = u64::from(le32(&w, at)) | (u64::from(le32(&w, at + 4)) << 32);
            let mkey = le32(&w, at + 8);
            let sz = le32(&w, at + 12);
            assert_eq!(mkey, MKEY, "SGE mem_key");
            assert!(sz > 0, "SGE {i} of size 0");
            assert!(
                self.env.mapped(addr, sz),
                "SGE {i} {addr:#x}+{sz} outside every live mapping"
            );
            total += u64::from(sz);
            sizes.push(sz);
        }
        assert_eq!(total, u64::from(o.len), "SGEs do not add up to the packet");
        if o.gso.is_some() {
            assert_eq!(last_vbytes, sizes[0] & 0xff, "last_vbytes = SGE0's size");
            if let Some(l) = o.layout {
                let ihs = u32::from(l.trans_off) + u32::from(l.l4_len);
                assert_eq!(sizes[0], ihs, "TSO: SGE0 holds exactly the headers");
            }
        } else {
            assert_eq!(last_vbytes, 0, "last_vbytes without TSO");
        }
    }

    /// The SQ, the environment and the packets' bookkeeping, borrowed apart for a poll or
    /// drain whose callback releases packets.
    fn parts(&mut self) -> (&mut FuzzSq, &mut Env, &mut [St], &mut VecDeque<Posted>) {
        (
            &mut self.sq,
            &mut self.env,
            &mut self.states,
            &mut self.fifo,
        )
    }

    fn release(states: &mut [St], fifo: &mut VecDeque<Posted>, p: Pkt) -> Posted {
        release(states, p.id);
        let front = fifo.pop_front().expect("released with nothing outstanding");
        assert_eq!(front.id, p.id, "completion out of FIFO order");
        front
    }

    fn poll(&mut self, napi: Option<u32>) {
        let tail0 = self.sq.wq().tail();
        let head0 = self.sq.cq().head();
        let discarded0 = self.sq.stats.cqe_discarded;
        let (sq, env, states, fifo) = self.parts();
        let mut done: Vec<Posted> = Vec::new();
        let r = match napi {
            Some(budget) => {
                let (r, _) =
                    sq.napi_poll(budget, env, |p| done.push(Self::release(states, fifo, p)));
                r
            }
            None => sq.poll_cq(env, |p| done.push(Self::release(states, fifo, p))),
        };
        assert_eq!(r.packets as usize, done.len(), "poll counts other packets");
        assert_eq!(
            u64::from(r.bytes),
            done.iter().map(|d| u64::from(d.bytes)).sum::<u64>(),
            "poll counts other bytes"
        );
        let max = (self.cq_num * 4).min(TX_POLL_MAX);
        assert!(r.cqes <= max, "{} CQEs in one poll (max {max})", r.cqes);
        assert_eq!(
            self.sq.cq().head().wrapping_sub(head0),
            r.cqes,
            "CQEs consumed != CQEs reported"
        );
        assert!(r.packets <= r.cqes);
        let bus: u32 = done.iter().map(|d| d.bus).sum();
        assert_eq!(
            self.sq.wq().tail().wrapping_sub(tail0),
            bus,
            "the tail moved by other than the completed WQEs"
        );
        if self.was_error {
            assert_eq!(r.packets, 0, "an SQ in error completed packets");
            assert_eq!(
                self.sq.stats.cqe_discarded.wrapping_sub(discarded0),
                u64::from(r.cqes),
                "an SQ in error consumed CQEs it did not count as discarded"
            );
        }
        if r.woke {
            assert!(r.error.is_none() && self.sq.error().is_none());
        }
        assert_eq!(r.error, self.sq.error());
        if let Some(budget) = napi {
            // The CQ re-arm rule: arm when the poll did less than its budget.
            let arms = self.cq_doorbells(true);
            assert_eq!(arms > 0, r.cqes < budget, "CQ arm vs work < budget");
        }
    }

    /// CQ doorbells of the current operation (with arm = `arm`).
    fn cq_doorbells(&self, arm: bool) -> usize {
        self.env
            .writes()
            .iter()
            .filter(|(o, b)| *o == CQ_DB && (u64::from_le_bytes(*b) >> 63 != 0) == arm)
            .count()
    }

    fn recover(&mut self) {
        let (sq, env, states, fifo) = self.parts();
        let mut n = 0u32;
        let mut bytes = 0u64;
        let (pk, by) = sq.drain(env, |p| {
            let d = Self::release(states, fifo, p);
            n += 1;
            bytes += u64::from(d.bytes);
        });
        assert_eq!(pk, n, "drain reports other packets than it released");
        assert_eq!(u64::from(by), bytes, "drain reports other bytes");
        assert!(self.fifo.is_empty(), "drain left packets");
        assert_eq!(self.sq.outstanding(), 0);
        assert_eq!(self.sq.wq().used_bus(), 0, "drain left BUs");
        assert!(
            self.env.maps.is_empty(),
            "DMA mappings left after the drain"
        );
        self.drained_bytes += u64::from(by);
        self.drained_pkts += u64::from(pk);
        // The channel is closed and opened again: a new SQ and CQ, the queue started.
        let (sq, ring, cqbuf) = build(self.queue_size, self.cq_num, self.vp_offset);
        self.sq = sq;
        self.ring = ring;
        self.cqbuf = cqbuf;
        self.env.stopped = false;
        self.last_sq_tail = None;
        self.was_error = false;
    }

    fn write_cqe(&self, ctr: u32, b: &[u8; 64]) {
        write_mana_cqe(&self.cqbuf, self.cq_num, ctr, b);
    }

    /// A CQE that looks plausible: at the consumer or a little beyond, mostly for this SQ
    /// with the right owner bits.
    fn structured_cqe(&mut self, inp: &mut Input<'_>) {
        let sel = inp.u8();
        let sel2 = inp.u8();
        let ctr = self.sq.cq().head().wrapping_add(u32::from(sel & 3));
        let owner = mana_owner(sel, ctr, self.cq_num, inp);
        let typ = match (sel >> 4) & 7 {
            0..=3 => TX_OKAY,
            4 => 33 + inp.u8() % 9,
            5 => inp.u8() & 0x3f,
            6 => 1 + inp.u8() % 4,
            _ => TX_OKAY,
        };
        let wq_num = match sel2 & 7 {
            0..=4 => SQ_ID,
            5 => SQ_ID ^ 1,
            _ => inp.u32() & 0x00ff_ffff,
        };
        let is_sq = sel2 & 0x18 != 0x18;
        let vendor = if sel & 0x80 != 0 { inp.u32() } else { 0 };
        let mut b = mana_cqe(typ, vendor, wq_num, is_sq, owner);
        b[8..12].copy_from_slice(&(self.sq.wq().tail() << 5).to_le_bytes());
        self.write_cqe(ctr, &b);
    }

    fn check_writes(&mut self) {
        let mut last_cq = None;
        for (o, b) in self.env.take_writes() {
            let v = u64::from_le_bytes(b);
            let lo = v as u32;
            let hi = (v >> 32) as u32;
            match o {
                SQ_DB => {
                    assert_eq!(lo, SQ_ID, "SQ doorbell: id, reserved bits");
                    assert_eq!(hi % 32, 0, "SQ doorbell tail_ptr not in BUs");
                    if let Some(prev) = self.last_sq_tail {
                        let d = hi.wrapping_sub(prev);
                        assert!(
                            (32..=self.queue_size).contains(&d),
                            "SQ doorbell moved the tail by {d}"
                        );
                    }
                    self.last_sq_tail = Some(hi);
                }
                CQ_DB => {
                    assert_eq!(lo, CQ_ID, "CQ doorbell: id, reserved bits");
                    last_cq = Some(hi & 0x7fff_ffff);
                }
                _ => panic!("register write at {o:#x}"),
            }
        }
        if let Some(t) = last_cq {
            assert_eq!(t, self.sq.cq().doorbell_tail(), "CQ doorbell tail");
            assert_eq!(
                t,
                self.sq.cq().head() % (self.cq_num << 3),
                "CQ doorbell tail = head mod (num << 3)"
            );
        }
        if !self.sq.unrung() {
            if let Some(t) = self.last_sq_tail {
                assert_eq!(
                    t,
                    self.sq.wq().head().wrapping_mul(32),
                    "the last SQ doorbell is not head · 32"
                );
            }
        }
    }

    fn check(&mut self) {
        self.check_writes();
        let wq = self.sq.wq();
        let used = wq.used_bus();
        assert!(
            used * 32 <= self.queue_size,
            "{used} BUs used exceed the ring"
        );
        assert_eq!(wq.avail_space(), self.queue_size - used * 32, "free space");
        assert_eq!(
            used,
            self.fifo.iter().map(|p| p.bus).sum::<u32>(),
            "BUs used != BUs of the outstanding WQEs"
        );
        assert_eq!(self.sq.outstanding() as usize, self.fifo.len());
        assert_eq!(
            self.env.maps.len(),
            self.fifo.iter().map(|p| p.maps).sum::<usize>(),
            "DMA mappings != those of the outstanding packets"
        );
        if self.sq.error().is_some() {
            assert!(!self.env.woke, "woken while the SQ is in error");
        } else {
            assert_eq!(
                self.env.stopped,
                wq.avail_space() < STOP_ROOM,
                "stopped iff less than a maximum WQE is free"
            );
        }
        if self.was_error {
            assert!(
                self.sq.error().is_some(),
                "an SQ left the error state by itself"
            );
        }
    }
}

impl crate::Harness for Harness {
    const MAX_OPS: usize = 400;

    fn new(inp: &mut Input<'_>) -> Self {
        let cfg = inp.u8();
        let queue_size = 4096u32 << (cfg & 1);
        let cq_num = queue_size / 32 * CQ_FACTORS[usize::from((cfg >> 1) & 3) % 3];
        let vp_offset = match (cfg >> 3) & 3 {
            0 | 1 => 0,
            2 => u16::from(inp.u8()),
            _ => 256 + inp.u16() % 0xf00,
        };
        let (sq, ring, cqbuf) = build(queue_size, cq_num, vp_offset);
        Self {
            sq,
            env: Env::default(),
            ring,
            cqbuf,
            queue_size,
            cq_num,
            vp_offset,
            states: Vec::new(),
            fifo: VecDeque::new(),
            drained_bytes: 0,
            drained_pkts: 0,
            last_sq_tail: None,
            was_error: false,
        }
    }

    fn op(&mut self, inp: &mut Input<'_>) {
        self.env.woke = false;
        self.was_error = self.sq.error().is_some();
        match inp.u8() % 16 {
            0..=4 => {
                let (pkt, offer, xmit_more) = self.new_pkt(inp);
                let f = inp.u8();
                self.env.fail_map(f);
                // The stack does not transmit on a stopped queue.
                if !self.env.stopped {
                    self.xmit(pkt, &offer, xmit_more);
                } else {
                    // It announces what is queued instead (the burst ended).
                    self.sq.ring(&self.env);
                }
                self.env.fail_at = None;
            }
            5..=7 => self.structured_cqe(inp),
            8 => {
                let (slot, c) = raw_cqe(inp);
                self.write_cqe(slot, &c);
            }
            9 => poke_cq(&self.cqbuf, self.cq_num as usize, inp),
            10 | 11 => self.poll(None),
            12 => {
                let budget = u32::from(inp.u8());
                self.poll(Some(budget));
            }
            13 => self.recover(),
            14 => {
                let arm = inp.bool();
                self.sq.cq_mut().ring(arm, &self.env);
            }
            _ => {
                // A burst of small linear frames with xmit_more.
                let n = 1 + inp.u8() % 64;
                let len = 60 + usize::from(inp.u8());
                for k in 0..n {
                    if self.env.stopped {
                        self.sq.ring(&self.env);
                        break;
                    }
                    let id = self.states.len() as u32;
                    let (linear, layout) = build_frame(0, 1, 0, false, len, k);
                    let pkt = Pkt::linear(id, linear, TxCsum::Partial);
                    let offer = Offer::of(&pkt, Some(layout));
                    self.xmit(pkt, &offer, k + 1 < n);
                }
            }
        }
        self.check();
    }

    fn finish(mut self) {
        self.was_error = false;
        self.recover();
        self.check();
        self.env
            .check_all_back(&self.states, self.drained_bytes, self.drained_pkts);

        // The new SQ works: one packet, one valid CQE for it.
        let id = self.states.len() as u32;
        let (linear, layout) = build_frame(0, 0, 0, false, 64, 1);
        let pkt = Pkt::linear(id, linear, TxCsum::None);
        let offer = Offer::of(&pkt, Some(layout));
        self.xmit(pkt, &offer, false);
        self.check();
        let ctr = self.sq.cq().head();
        let b = mana_cqe(TX_OKAY, 0, SQ_ID, true, (ctr / self.cq_num) & 7);
        self.write_cqe(ctr, &b);
        self.poll(None);
        self.check();
        assert_sent_after_recovery(&self.states, id);
        assert!(self.sq.error().is_none());
        self.recover();
        assert!(self.env.maps.is_empty());
    }
}

/// One fuzz input.
pub fn run(data: &[u8]) {
    crate::drive::<Harness>(data);
}
