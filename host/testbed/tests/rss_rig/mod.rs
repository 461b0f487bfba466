//! A ConnectX function of the model driven by hand-built commands, for the steering tests
//! (sim_rss, sim_ntuple): its RQs, an SQ looping frames back, and builders of the RSS and
//! flow-steering commands from the 6.12 mlx5_ifc.h layouts (independent of the driver's).
#![allow(dead_code)]

use super::cx_fake_driver::*;
use super::sim_util::{ctrl, dseg, eseg, ipv4_hdr, OP_SEND};
use rsnic_core::hwif::hw::{Coherent, Mmio};
use rsnic_core::hwif::mlx5::cmd::fs::{self, Tt, TTC_GROUPS, TTC_LOG_SIZE};
use rsnic_core::hwif::mlx5::cmd::{res, FormatError};
use rsnic_core::sim::pkt::RSS_KEY;
use rsnic_testbed::mem::HostBuf;

/// An IPv4 frame with transport `proto` (6 TCP, 17 UDP, other: 8 bytes of nothing).
pub fn ip4_frame(proto: u8, src: [u8; 4], sp: u16, dst: [u8; 4], dp: u16) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00];
    let l4 = if proto == 6 { 20 } else { 8 };
    let total = (20 + l4) as u16;
    f.extend_from_slice(&ipv4_hdr(total, 0, proto, src, dst));
    f.extend_from_slice(&sp.to_be_bytes());
    f.extend_from_slice(&dp.to_be_bytes());
    if proto == 6 {
        f.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0, 0, 0, 0]);
    } else {
        f.extend_from_slice(&[0, 8, 0, 0]);
    }
    f.resize(60, 0);
    f
}

/// A UDP/IPv6 frame.
pub fn udp6_frame(src: [u8; 16], sp: u16, dst: [u8; 16], dp: u16) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x86, 0xdd];
    f.extend_from_slice(&[0x60, 0, 0, 0, 0, 8, 17, 64]);
    f.extend_from_slice(&src);
    f.extend_from_slice(&dst);
    f.extend_from_slice(&sp.to_be_bytes());
    f.extend_from_slice(&dp.to_be_bytes());
    f.extend_from_slice(&[0, 8, 0, 0]);
    f
}

/// An ARP request (not IP).
pub fn arp_frame() -> Vec<u8> {
    let mut f = vec![0xff; 6];
    f.extend_from_slice(&[0x02, 0, 0, 0, 0, 1, 0x08, 0x06]);
    f.extend_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1]);
    f.resize(60, 0);
    f
}

/// One function's objects for the tests below.
pub struct Rig {
    pub h: Host,
    pub uar: u32,
    pub pd: u32,
    pub td: u32,
    pub cq: Cq,
    pub _eq: Eq,
    /// (rqn, ring, doorbell record)
    pub rqs: Vec<(u32, HostBuf, HostBuf)>,
    pub sq: (u32, HostBuf, HostBuf),
    pub pc: u16,
}

impl Rig {
    /// Port 1 brought up by commands, looping back to itself (PPLR), with an SQ and four
    /// RQs of 64 posted WQEs on one CQ.
    pub fn new() -> Self {
        Self::with_compression(false)
    }

    /// As [`Rig::new`], the CQ with CQE compression (`cqe_comp_en`) if `compress`.
    pub fn with_compression(compress: bool) -> Self {
        let mut h = Host::new(1);
        let (uar, pd, td) = h.bring_up_with_objects();
        let eq = h.create_eq(6, uar, 5, 0).unwrap();
        let cq = h.create_cq(8, uar, eq.eqn, compress).unwrap();
        let mut rqs = Vec::new();
        for _ in 0..4 {
            rqs.push(h.posted_rq(cq.cqn, pd));
        }
        h.set_loopback(2).ok();
        let tis = h.exec(&tis_in(td), 16).ok().obj();
        let (sqn, sqb, sdbr) = h.ready_sq(cq.cqn, tis, pd, uar);
        Self {
            h,
            uar,
            pd,
            td,
            cq,
            _eq: eq,
            rqs,
            sq: (sqn, sqb, sdbr),
            pc: 0,
        }
    }

    pub fn rqns(&self) -> Vec<u32> {
        self.rqs.iter().map(|r| r.0).collect()
    }

    /// Sends `frame` to itself; returns (index of the RQ that took it, CQE hash, CQE hash
    /// type), or None if the port dropped it. Every RQ is re-posted to 64 WQEs.
    pub fn send(&mut self, frame: &[u8]) -> Option<(usize, u32, u8)> {
        let before: Vec<u16> = self
            .rqs
            .iter()
            .map(|r| self.h.tb.device().rq_consumer(r.0).unwrap())
            .collect();
        let (_data, ctrl) = self.post_send(frame);
        self.sq.2.write_be32(4, u32::from(self.pc));
        self.h
            .bus
            .write64(self.h.reg(self.uar * 4096 + 0x800), ctrl);
        self.h.step();
        let mut took = None;
        for (i, r) in self.rqs.iter().enumerate() {
            let now = self.h.tb.device().rq_consumer(r.0).unwrap();
            r.2.write_be32(0, u32::from(now) + 64);
            if now != before[i] {
                assert!(took.is_none(), "one frame, one RQ");
                took = Some(i);
            }
        }
        let c = self.cq.poll();
        self.cq.dbr.write_be32(0, self.cq.cc & 0xff_ffff);
        match took {
            Some(i) => {
                let c = c.expect("an RX CQE");
                let hash = u32::from_be_bytes(c[12..16].try_into().unwrap());
                Some((i, hash, c[16]))
            }
            None => {
                assert!(c.is_none(), "no CQE for a dropped frame");
                None
            }
        }
    }

    /// Writes a SEND WQE (no CQE requested) carrying `frame` at the producer counter and
    /// advances it, without ringing: (the frame's buffer, the WQE's first 8 bytes for the
    /// doorbell).
    fn post_send(&mut self, frame: &[u8]) -> (HostBuf, [u8; 8]) {
        let data = self.h.tb.mem.alloc_from(frame);
        let mut w = Vec::new();
        w.extend_from_slice(&ctrl(OP_SEND, self.pc, self.sq.0, 3, 0));
        w.extend_from_slice(&eseg(0, 0, 0, [0, 0]));
        w.extend_from_slice(&dseg(frame.len() as u32, 0, data.dma_addr()));
        self.sq.1.write((usize::from(self.pc) % 64) * 64, &w);
        self.pc = self.pc.wrapping_add(1);
        (data, w[..8].try_into().unwrap())
    }

    /// Sends `frames` to itself in one burst (one doorbell, one engine run, so that their
    /// RX CQEs can share a compression session) and re-posts every RQ to 64 WQEs. The CQ
    /// is left unread.
    pub fn burst(&mut self, frames: &[Vec<u8>]) {
        let mut last = [0u8; 8];
        let mut keep = Vec::new();
        for frame in frames {
            let (data, ctrl) = self.post_send(frame);
            last = ctrl;
            keep.push(data);
        }
        self.sq.2.write_be32(4, u32::from(self.pc));
        self.h
            .bus
            .write64(self.h.reg(self.uar * 4096 + 0x800), last);
        self.h.step();
        for r in &self.rqs {
            let now = self.h.tb.device().rq_consumer(r.0).unwrap();
            r.2.write_be32(0, u32::from(now) + 64);
        }
    }

    /// The first `len` bytes of the buffer of WQE `wqe` of RQ `rq` (the address its one
    /// data segment names).
    pub fn rx_data(&self, rq: usize, wqe: u16, len: usize) -> Vec<u8> {
        use rsnic_core::hwif::hw::BusMemory;
        let mut d = [0u8; 16];
        self.rqs[rq].1.read((usize::from(wqe) % 64) * 16, &mut d);
        let addr = u64::from_be_bytes(d[8..16].try_into().unwrap());
        let mut out = vec![0u8; len];
        self.h.tb.mem.dma_read(addr, &mut out).unwrap();
        out
    }

    /// CREATE_TIR (indirect, Toeplitz) over `rqtn` with `key` and the outer selector.
    pub fn tir(&mut self, rqtn: u32, key: &[u8; 40], l3: u8, l4: u8, fields: u32) -> u32 {
        let td = self.td;
        self.h
            .exec(&tir_sel_in(rqtn, td, key, l3, l4, fields), 16)
            .ok()
            .obj()
    }
}

/// create_tir_in with an outer field selector (`rx_hash_field_selector_outer` at bit 0x380:
/// l3_prot_type 0x380, l4_prot_type 0x381, selected_fields 0x382, 30 bits).
pub fn tir_sel_in(rqtn: u32, td: u32, key: &[u8; 40], l3: u8, l4: u8, fields: u32) -> Vec<u8> {
    let mut i = tir_in(rqtn, td, key);
    put(&mut i, 0x380, 1, u64::from(l3));
    put(&mut i, 0x381, 1, u64::from(l4));
    put(&mut i, 0x382, 30, u64::from(fields));
    i
}

/// modify_tir_in: tirn at 0x48, bitmask at byte 0x10 (hash = bit 0xbd), the context at byte
/// 0x20 as in create_tir_in.
pub fn modify_tir_in(tirn: u32, key: &[u8; 40], l3: u8, l4: u8, fields: u32) -> Vec<u8> {
    let mut i = tir_sel_in(0, 0, key, l3, l4, fields);
    i[0..2].copy_from_slice(&0x901u16.to_be_bytes());
    put(&mut i, 0x120, 4, 0); // disp_type is not part of a hash modification
    put(&mut i, 0x48, 24, u64::from(tirn));
    put(&mut i, 0xbd, 1, 1); // bitmask.hash
    i
}

/// modify_rqt_in: rqtn at 0x48, bitmask.rqn_list at 0xbf, the list as in create_rqt_in.
pub fn modify_rqt_in(rqtn: u32, rqns: &[u32]) -> Vec<u8> {
    let mut i = rqt_in(rqns);
    i[0..2].copy_from_slice(&0x917u16.to_be_bytes());
    put(&mut i, 0x48, 24, u64::from(rqtn));
    put(&mut i, 0xbf, 1, 1);
    i
}

/// create_flow_table_in: table_type 0 (NIC RX) at 0x80, flow_table_context at 0xc0 with
/// log_size at its 0x18.
pub fn ft_in(log_size: u8) -> Vec<u8> {
    let mut i = cmd_in(0x930, 0, 0x40);
    put(&mut i, 0xd8, 8, u64::from(log_size));
    i
}

/// create_flow_group_in: table_id 0xa8, start 0xe0, end 0x120, match_criteria_enable 0x1f8,
/// match_criteria at 0x200 (outer ethertype at +0x30, ip_protocol at +0x80).
pub fn fg_in(ft: u32, start: u32, end: u32, eth: bool, proto: bool) -> Vec<u8> {
    let mut i = cmd_in(0x933, 0, 0x400);
    put(&mut i, 0xa8, 24, u64::from(ft));
    put(&mut i, 0xe0, 32, u64::from(start));
    put(&mut i, 0x120, 32, u64::from(end));
    if eth || proto {
        put(&mut i, 0x1f8, 8, 1);
    }
    if eth {
        put(&mut i, 0x230, 16, 0xffff);
    }
    if proto {
        put(&mut i, 0x280, 8, 0xff);
    }
    i
}

/// set_fte_in: table_id 0xa8, flow_index 0x100, flow_context at 0x200 (group_id +0x20,
/// action +0x70, destination_list_size +0x88, match_value +0x200, destination[0] +0x1800:
/// type 8 bits, id 24 bits).
pub fn fte_in(ft: u32, fg: u32, index: u32, eth: u16, proto: u8, tirn: u32) -> Vec<u8> {
    let mut i = cmd_in(0x936, 0, 0x348);
    put(&mut i, 0xa8, 24, u64::from(ft));
    put(&mut i, 0x100, 32, u64::from(index));
    put(&mut i, 0x220, 32, u64::from(fg));
    put(&mut i, 0x270, 16, 4); // FWD_DEST
    put(&mut i, 0x288, 24, 1);
    put(&mut i, 0x430, 16, u64::from(eth));
    put(&mut i, 0x480, 8, u64::from(proto));
    put(&mut i, 0x1a00, 8, 2); // TIR
    put(&mut i, 0x1a08, 24, u64::from(tirn));
    i
}

/// A 0x40-byte flow-steering command naming table `ft` (table_id at 0xa8).
pub fn ft_cmd(opcode: u16, op_mod: u16, ft: u32) -> Vec<u8> {
    let mut i = cmd_in(opcode, op_mod, 0x40);
    put(&mut i, 0xa8, 24, u64::from(ft));
    i
}

/// The traffic-type table over `tirs` = [tcp4, tcp6, udp4, udp6, ip4, ip6] as mlx5e's
/// fs_ttc.c builds it: group 0 (ethertype + ip_protocol) indices 0..=3, group 1
/// (ethertype) 4..=5, group 2 (nothing) 6. Returns (table, groups).
pub fn ttc(r: &mut Rig, tirs: [u32; 6]) -> (u32, [u32; 3]) {
    let ft = r.h.exec(&ft_in(3), 16).ok().obj();
    let g0 = r.h.exec(&fg_in(ft, 0, 3, true, true), 16).ok().obj();
    let g1 = r.h.exec(&fg_in(ft, 4, 5, true, false), 16).ok().obj();
    let g2 = r.h.exec(&fg_in(ft, 6, 6, false, false), 16).ok().obj();
    let rules = [
        (g0, 0, 0x0800, 6, tirs[0]),
        (g0, 1, 0x86dd, 6, tirs[1]),
        (g0, 2, 0x0800, 17, tirs[2]),
        (g0, 3, 0x86dd, 17, tirs[3]),
        (g1, 4, 0x0800, 0, tirs[4]),
        (g1, 5, 0x86dd, 0, tirs[5]),
        (g2, 6, 0, 0, tirs[4]),
    ];
    for (g, ix, eth, proto, tir) in rules {
        r.h.exec(&fte_in(ft, g, ix, eth, proto, tir), 16).ok();
    }
    (ft, [g0, g1, g2])
}

/// The RQ index RQT entry `hash % 256` names in a table whose entry i is RQ `i % 4`.
pub fn spread(hash: u32) -> usize {
    (hash % 256 % 4) as usize
}

/// A command built by one of the driver's builders (`hwif::mlx5::cmd`).
pub fn build(f: &dyn Fn(&mut [u8]) -> Result<usize, FormatError>) -> Vec<u8> {
    let mut b = vec![0u8; 2048];
    let n = f(&mut b).unwrap();
    b.truncate(n);
    b
}

/// The driver's default RSS of `r`, built with the driver's builders: an RQT of 256 entries
/// over the four RQs, an indirect TIR per hashed traffic type (mlx5e's default fields, the
/// model's key), and the traffic-type table at `level` with its groups and one entry per
/// traffic type. Returns (rqtn, TIRs by `tir_index`, table, groups).
pub fn driver_rss(r: &mut Rig, level: u8) -> (u32, Vec<u32>, u32, Vec<u32>) {
    let rqns = r.rqns();
    let table: Vec<u32> = (0..256).map(|i| rqns[i % 4]).collect();
    let rqtn = driver_rqt(r, &table);
    let mut tirs = Vec::new();
    for tt in Tt::HASHED {
        tirs.push(rss_tir(r, rqtn, tt));
    }
    let o =
        r.h.exec(
            &build(&|b| fs::create_flow_table(b, TTC_LOG_SIZE, level)),
            16,
        )
        .ok();
    let ft = fs::parse_create_flow_table(&o.b).unwrap();
    let mut groups = Vec::new();
    for (s, e, c) in TTC_GROUPS {
        let o =
            r.h.exec(&build(&|b| fs::create_flow_group(b, ft, s, e, c)), 16)
                .ok();
        groups.push(fs::parse_create_flow_group(&o.b).unwrap());
    }
    for tt in Tt::ALL {
        let (g, tir) = (groups[tt.group()], tirs[tt.tir_index()]);
        r.h.exec(
            &build(&|b| fs::set_fte_fwd_tir(b, ft, g, tt.flow_index(), &tt.match_value(), tir)),
            16,
        )
        .ok();
    }
    (rqtn, tirs, ft, groups)
}

/// CREATE_RQT of 256 entries, `table`, built by the driver's builder: the RQT number.
pub fn driver_rqt(r: &mut Rig, table: &[u32]) -> u32 {
    res::parse_create_rqt(
        &r.h.exec(&build(&|b| res::create_rqt(b, 256, table)), 16)
            .ok()
            .b,
    )
    .unwrap()
}

/// An indirect TIR over `rqtn` hashing as mlx5e's defaults for `tt`.
pub fn rss_tir(r: &mut Rig, rqtn: u32, tt: Tt) -> u32 {
    let t = res::CreateTir {
        transport_domain: r.td,
        rqtn,
        key: RSS_KEY,
        l3_prot_type: tt.l3_prot_type(),
        l4_prot_type: tt.l4_prot_type(),
        selected_fields: tt.default_fields(),
    };
    let o = r.h.exec(&build(&|b| res::create_tir(b, &t)), 16).ok();
    res::parse_create_tir(&o.b).unwrap()
}

/// A traffic-type table at `level` whose every traffic type goes to one TIR over the first
/// RQ (no hashing), built with the driver's builders: what the receive filtering tests put
/// behind their L2 and VLAN tables. Returns the table.
pub fn one_tir_ttc(r: &mut Rig, level: u8) -> u32 {
    let rqns = r.rqns();
    let rqt = r.h.exec(&rqt_in(&rqns[..1]), 16).ok().obj();
    let tir = r.tir(rqt, &[7; 40], 0, 0, 3);
    let ttc = fs::parse_create_flow_table(
        &r.h.exec(
            &build(&|b| fs::create_flow_table(b, TTC_LOG_SIZE, level)),
            16,
        )
        .ok()
        .b,
    )
    .unwrap();
    let mut tg = Vec::new();
    for (s, e, c) in TTC_GROUPS {
        let o =
            r.h.exec(&build(&|b| fs::create_flow_group(b, ttc, s, e, c)), 16)
                .ok();
        tg.push(fs::parse_create_flow_group(&o.b).unwrap());
    }
    for tt in Tt::ALL {
        let g = tg[tt.group()];
        r.h.exec(
            &build(&|b| fs::set_fte_fwd_tir(b, ttc, g, tt.flow_index(), &tt.match_value(), tir)),
            16,
        )
        .ok();
    }
    ttc
}

/// Reads `len` bits at bit `bit` of `b` (big-endian bit order, as mlx5_ifc.h).
pub fn bits(b: &[u8], bit: usize, len: usize) -> u64 {
    (0..len).fold(0, |v, i| {
        let p = bit + i;
        (v << 1) | u64::from(b[p / 8] >> (7 - p % 8) & 1)
    })
}

/// Runs the command `build` writes into a buffer of `len` bytes on `r`; it must succeed.
pub fn cmd(
    r: &mut Rig,
    len: usize,
    build: impl FnOnce(&mut [u8]) -> Result<usize, FormatError>,
) -> Out {
    let mut b = vec![0u8; len];
    let n = build(&mut b).unwrap();
    r.h.exec(&b[..n], 16).ok()
}
