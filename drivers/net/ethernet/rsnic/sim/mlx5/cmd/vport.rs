// SPDX-License-Identifier: GPL-2.0

//! The device's half of the vport and port commands (the driver's is `hwif/mlx5/cmd/vport.rs`):
//! QUERY / MODIFY_NIC_VPORT_CONTEXT (MTU, permanent address, min inline, the UC/MC/VLAN lists
//! and promiscuous flags that filter what reaches the function), QUERY_VPORT_STATE,
//! QUERY_VPORT_COUNTER and ACCESS_REG (PAOS, PPLR, PFCC, PPCNT with the IEEE 802.3, RFC 2863,
//! RFC 2819 and per-priority groups, PMTU, PTYS), with the vport's and the MAC's traffic
//! counters they report. PRM "NIC Vport Commands", "Access Register"; upstream vport.c,
//! port.c, en_stats.c; layouts `nic_vport_context`, `query_vport_counter_out`, the `pddr`
//! / `ppcnt_reg` / `pfcc_reg` / `paos_reg` registers of mlx5_ifc.h.

use super::{bad, link, synd, CmdResult, Cx, Func};
use crate::hwif::bytes::put_be64;
use crate::hwif::hw::BusMemory;
use crate::sim::mlx5::ifc::{self, get, set, status};

/// The UC and MC address lists of the NIC vport context (`log_max_current_uc_list` 2,
/// `log_max_current_mc_list` 4).
pub const UC_LIST: usize = 4;

/// See [`UC_LIST`].
pub const MC_LIST: usize = 16;

/// The VLAN list of the NIC vport context (`log_max_vlan_list` 3).
pub const VLAN_LIST: usize = 8;

/// The largest port MTU the model has (PMTU `max_mtu` of [`crate::sim::mlx5::Caps::FULL`]):
/// the largest frame without FCS plus the FCS.
pub const PORT_MAX_MTU: u32 = crate::sim::mlx5::MAX_FRAME as u32 + 4;

/// PPCNT group 0, the IEEE 802.3 counters (`eth_802_3_cntrs_grp_data_layout`): the index of
/// each counter the model keeps in the group (counter i is the 64-bit value at byte
/// `ifc::reg::PPCNT_SET + 8 * i` of the register). The model counts frames that crossed the
/// port's MAC, i.e. went over the wire (a looped frame turns around before it and is not
/// counted), PAUSE frames included (60 bytes each, to the multicast address
/// 01:80:c2:00:00:01); octets are the frame bytes without the FCS. The other counters of the
/// group (FCS, alignment, length and symbol errors, unsupported opcodes) stay 0: the
/// simulated wire corrupts nothing.
pub mod ieee {
    /// Counters in the group.
    pub const COUNT: usize = 19;
    /// 64-bit counters a PPCNT counter set holds (0x7c0 bits).
    pub const COUNT_MAX: usize = 31;
    /// `a_frames_transmitted_ok`.
    pub const FRAMES_TX_OK: usize = 0;
    /// `a_frames_received_ok`.
    pub const FRAMES_RX_OK: usize = 1;
    /// `a_octets_transmitted_ok`.
    pub const OCTETS_TX_OK: usize = 4;
    /// `a_octets_received_ok`.
    pub const OCTETS_RX_OK: usize = 5;
    /// `a_multicast_frames_xmitted_ok`.
    pub const MCAST_TX_OK: usize = 6;
    /// `a_broadcast_frames_xmitted_ok`.
    pub const BCAST_TX_OK: usize = 7;
    /// `a_multicast_frames_received_ok`.
    pub const MCAST_RX_OK: usize = 8;
    /// `a_broadcast_frames_received_ok`.
    pub const BCAST_RX_OK: usize = 9;
    /// `a_mac_control_frames_transmitted` (PAUSE is the only MAC control frame sent).
    pub const MAC_CTRL_TX: usize = 14;
    /// `a_mac_control_frames_received`.
    pub const MAC_CTRL_RX: usize = 15;
    /// `a_pause_mac_ctrl_frames_received`.
    pub const PAUSE_RX: usize = 17;
    /// `a_pause_mac_ctrl_frames_transmitted`.
    pub const PAUSE_TX: usize = 18;
    /// Length of a PAUSE frame without the FCS (a minimum-size frame).
    pub(in crate::sim::mlx5::cmd) const PAUSE_LEN: u64 = 60;
}

/// Traffic counters of QUERY_VPORT_COUNTER, by destination address class.
#[derive(Clone, Copy)]
pub(in crate::sim::mlx5) struct Vport {
    /// rx ucast/mcast/bcast, tx ucast/mcast/bcast: (packets, octets).
    pub(in crate::sim::mlx5) c: [(u64, u64); 6],
}

impl Vport {
    pub(super) const ZERO: Self = Self { c: [(0, 0); 6] };

    pub(super) fn class(frame: &[u8]) -> usize {
        match frame.get(..6) {
            Some(d) if d.iter().all(|&b| b == 0xff) => 2,
            Some(d) if d[0] & 1 != 0 => 1,
            _ => 0,
        }
    }

    /// Counts a received frame.
    pub(in crate::sim::mlx5) fn rx(&mut self, frame: &[u8]) {
        let e = &mut self.c[Self::class(frame)];
        e.0 = e.0.wrapping_add(1);
        e.1 = e.1.wrapping_add(frame.len() as u64);
    }

    /// Counts a transmitted frame.
    pub(in crate::sim::mlx5) fn tx(&mut self, frame: &[u8]) {
        let e = &mut self.c[3 + Self::class(frame)];
        e.0 = e.0.wrapping_add(1);
        e.1 = e.1.wrapping_add(frame.len() as u64);
    }
}

/// Frames through a port's MAC (over the wire) since PPCNT last cleared them, for its IEEE
/// 802.3, RFC 2863, RFC 2819 and per-priority groups (see [`ieee`]).
#[derive(Clone, Copy)]
pub(in crate::sim::mlx5) struct Mac {
    /// Received (0) and transmitted (1): frames, octets, multicast frames, broadcast frames.
    pub(super) c: [[u64; 4]; 2],
    /// Received frames by size with the FCS (RMON's buckets from 64 to 8192..10239 octets).
    pub(super) sizes: [u64; 10],
    /// The port's PAUSE frame counters (received, transmitted) at the last clear.
    pause_base: (u64, u64),
}

impl Mac {
    pub(super) const ZERO: Self = Self {
        c: [[0; 4]; 2],
        sizes: [0; 10],
        pause_base: (0, 0),
    };

    pub(super) fn count(&mut self, dir: usize, frame: &[u8]) {
        let class = Vport::class(frame);
        if let Some(c) = self.c.get_mut(dir) {
            c[0] = c[0].wrapping_add(1);
            c[1] = c[1].wrapping_add(frame.len() as u64);
            if let Some(e) = c.get_mut(1 + class).filter(|_| class > 0) {
                *e = e.wrapping_add(1);
            }
        }
    }

    /// Counts a frame received from the wire.
    pub(in crate::sim::mlx5) fn rx(&mut self, frame: &[u8]) {
        self.count(0, frame);
        let len = frame.len() + 4;
        let b = match len {
            0..=64 => 0,
            65..=127 => 1,
            128..=255 => 2,
            256..=511 => 3,
            512..=1023 => 4,
            1024..=1518 => 5,
            1519..=2047 => 6,
            2048..=4095 => 7,
            4096..=8191 => 8,
            _ => 9,
        };
        if let Some(e) = self.sizes.get_mut(b) {
            *e = e.wrapping_add(1);
        }
    }

    /// Counts a frame transmitted on the wire.
    pub(in crate::sim::mlx5) fn tx(&mut self, frame: &[u8]) {
        self.count(1, frame);
    }
}

/// The NIC vport context's address lists and promiscuous flags (MODIFY_NIC_VPORT_CONTEXT
/// `addresses_list`, `promisc`): what a VF's vport lets through to it ([`Func::vport_accepts`]).
#[derive(Clone, Copy)]
pub(in crate::sim::mlx5) struct VportFilter {
    /// A driver programmed the lists or the flags: from then on the vport lets through only
    /// what they allow (a driver that never does receives every frame).
    pub(in crate::sim::mlx5) active: bool,
    pub(in crate::sim::mlx5) uc: [[u8; 6]; UC_LIST],
    pub(in crate::sim::mlx5) uc_len: u8,
    pub(in crate::sim::mlx5) mc: [[u8; 6]; MC_LIST],
    pub(in crate::sim::mlx5) mc_len: u8,
    pub(in crate::sim::mlx5) promisc_uc: bool,
    pub(in crate::sim::mlx5) promisc_mc: bool,
    pub(in crate::sim::mlx5) promisc_all: bool,
    /// The VLAN list the driver wrote, recorded and filtering nothing: on a VF it is for
    /// the e-switch manager, and 6.12's (eswitch.c) arms only UC, MC and promiscuous
    /// change events, so a VF receives every VID whatever its list.
    pub(in crate::sim::mlx5) vlans: [u16; VLAN_LIST],
    pub(in crate::sim::mlx5) vlans_len: u8,
}

impl VportFilter {
    pub(super) const NONE: Self = Self {
        active: false,
        uc: [[0; 6]; UC_LIST],
        uc_len: 0,
        mc: [[0; 6]; MC_LIST],
        mc_len: 0,
        promisc_uc: false,
        promisc_mc: false,
        promisc_all: false,
        vlans: [0; VLAN_LIST],
        vlans_len: 0,
    };
}

/// A port's operational state: its administrative state and its peer's are up and their
/// PTYS settings resolve to a mode ([`link::resolve`]) (its own only when it loops back; a
/// port without a peer is down).
pub(in crate::sim::mlx5) fn oper_up(ports: &[crate::sim::mlx5::Port], p: usize) -> bool {
    let Some(pt) = ports.get(p) else {
        return false;
    };
    if pt.loopback {
        return pt.link_up;
    }
    pt.link_up && ports.get(p ^ 1).is_some_and(|q| q.link_up) && link::resolve(ports, p) != 0
}

/// The IEEE 802.3 counters of `pt` since PPCNT last cleared them (see [`ieee`]).
fn ieee_802_3(pt: &crate::sim::mlx5::Port) -> [u64; ieee::COUNT_MAX] {
    let w = &pt.func.wire;
    let [rx, tx] = w.c;
    let prx = pt.counters.rx_pause_frames.wrapping_sub(w.pause_base.0);
    let ptx = pt.counters.tx_pause_frames.wrapping_sub(w.pause_base.1);
    let mut c = [0u64; ieee::COUNT_MAX];
    let mut put = |i: usize, v: u64, pause: u64, each: u64| {
        if let Some(e) = c.get_mut(i) {
            *e = v.wrapping_add(pause.wrapping_mul(each));
        }
    };
    put(ieee::FRAMES_RX_OK, rx[0], prx, 1);
    put(ieee::FRAMES_TX_OK, tx[0], ptx, 1);
    put(ieee::OCTETS_RX_OK, rx[1], prx, ieee::PAUSE_LEN);
    put(ieee::OCTETS_TX_OK, tx[1], ptx, ieee::PAUSE_LEN);
    put(ieee::MCAST_RX_OK, rx[2], prx, 1);
    put(ieee::MCAST_TX_OK, tx[2], ptx, 1);
    put(ieee::BCAST_RX_OK, rx[3], 0, 0);
    put(ieee::BCAST_TX_OK, tx[3], 0, 0);
    put(ieee::MAC_CTRL_RX, 0, prx, 1);
    put(ieee::MAC_CTRL_TX, 0, ptx, 1);
    put(ieee::PAUSE_RX, 0, prx, 1);
    put(ieee::PAUSE_TX, 0, ptx, 1);
    c
}

/// The RFC 2863 group (`eth_2863_cntrs_grp_data_layout`) of `pt`'s MAC: octets, unicast,
/// multicast and broadcast frames each way (no discards, errors or unknown protocols on
/// the simulated wire; PAUSE frames are the MAC's own and not counted here).
fn rfc_2863(pt: &crate::sim::mlx5::Port) -> [u64; ieee::COUNT_MAX] {
    let [rx, tx] = pt.func.wire.c;
    let mut c = [0u64; ieee::COUNT_MAX];
    let uc = |d: [u64; 4]| d[0].wrapping_sub(d[2]).wrapping_sub(d[3]);
    for (i, v) in [
        (0, rx[1]),
        (1, uc(rx)),
        (5, tx[1]),
        (6, uc(tx)),
        (9, rx[2]),
        (10, rx[3]),
        (11, tx[2]),
        (12, tx[3]),
    ] {
        if let Some(e) = c.get_mut(i) {
            *e = v;
        }
    }
    c
}

/// The RFC 2819 group (`eth_2819_cntrs_grp_data_layout`, RMON, received frames): octets,
/// frames, broadcast, multicast and the size buckets (with the FCS); no errors. Every frame
/// the MAC received is a packet here, PAUSE frames too (multicast, 64 octets with the FCS),
/// so that the buckets add up to the IEEE 802.3 group's `a_frames_received_ok`.
fn rfc_2819(pt: &crate::sim::mlx5::Port) -> [u64; ieee::COUNT_MAX] {
    let w = &pt.func.wire;
    let rx = w.c[0];
    let prx = pt.counters.rx_pause_frames.wrapping_sub(w.pause_base.0);
    let mut c = [0u64; ieee::COUNT_MAX];
    for (i, v) in [
        (1, rx[1].wrapping_add(prx.wrapping_mul(ieee::PAUSE_LEN))),
        (2, rx[0].wrapping_add(prx)),
        (3, rx[3]),
        (4, rx[2].wrapping_add(prx)),
    ] {
        if let Some(e) = c.get_mut(i) {
            *e = v;
        }
    }
    for (k, v) in w.sizes.iter().enumerate() {
        if let Some(e) = c.get_mut(11 + k) {
            *e = if k == 0 { v.wrapping_add(prx) } else { *v };
        }
    }
    c
}

/// The per-priority group (`eth_per_prio_grp_data_layout`) of priority `prio`: every frame
/// of the model is of priority 0 (no PFC: global pause counts in the IEEE 802.3 group).
fn per_prio(pt: &crate::sim::mlx5::Port, prio: u32) -> [u64; ieee::COUNT_MAX] {
    let mut c = [0u64; ieee::COUNT_MAX];
    if prio == 0 {
        let [rx, tx] = pt.func.wire.c;
        for (i, v) in [(0, rx[1]), (4, rx[0]), (5, tx[1]), (9, tx[0])] {
            if let Some(e) = c.get_mut(i) {
                *e = v;
            }
        }
    }
    c
}

impl Func {
    /// Whether the vport lets a frame with destination `dmac` through to the function
    /// (its UC / MC lists, broadcast, the promiscuous flags; everything while no driver
    /// programmed them; the VLAN list filters nothing, see [`VportFilter::vlans`]).
    pub(in crate::sim::mlx5) fn vport_accepts(&self, dmac: &[u8]) -> bool {
        let f = &self.filter;
        if !f.active || f.promisc_all {
            return true;
        }
        let Some(d) = dmac.get(..6) else {
            return false;
        };
        if d.iter().all(|&b| b == 0xff) {
            return true;
        }
        if d[0] & 1 != 0 {
            f.promisc_mc || f.mc.iter().take(usize::from(f.mc_len)).any(|m| m[..] == *d)
        } else {
            f.promisc_uc
                || d == self.mac
                || f.uc.iter().take(usize::from(f.uc_len)).any(|m| m[..] == *d)
        }
    }
}

impl<M: BusMemory> Cx<'_, '_, M> {
    pub(super) fn modify_vport(&mut self) -> CmdResult {
        use ifc::vport::*;
        if self.g(OTHER_VPORT) != 0 {
            return Err(bad(synd::OTHER_FUNCTION));
        }
        let fs = self.g(FIELD_SELECT);
        let bit = |f: ifc::Fld| 1u32 << (31 - (f.bit - 0x60));
        let known =
            bit(FS_MTU) | bit(FS_PERMANENT_ADDRESS) | bit(FS_PROMISC) | bit(FS_ADDRESSES_LIST);
        if fs & !known != 0 {
            return Err(bad(synd::FIELD_SELECT));
        }
        if self.g(FS_PROMISC) != 0 {
            let c = self.inp.get(CTX_MODIFY..).unwrap_or_default();
            let (uc, mc, all) = (
                get(c, PROMISC_UC) != 0,
                get(c, PROMISC_MC) != 0,
                get(c, PROMISC_ALL) != 0,
            );
            let f = &mut self.port().func.filter;
            f.active = true;
            f.promisc_uc = uc;
            f.promisc_mc = mc;
            f.promisc_all = all;
        }
        if self.g(FS_ADDRESSES_LIST) != 0 {
            let c = self.inp.get(CTX_MODIFY..).unwrap_or_default();
            let (ty, n) = (
                get(c, ALLOWED_LIST_TYPE),
                get(c, ALLOWED_LIST_SIZE) as usize,
            );
            let cap = match ty {
                LIST_UC => UC_LIST,
                LIST_MC => MC_LIST,
                LIST_VLAN => VLAN_LIST,
                _ => return Err(bad(synd::FIELD_SELECT)),
            };
            if n > cap {
                return Err(bad(synd::ADDRESS_LIST));
            }
            if ty == LIST_VLAN {
                // `vlan_layout`: the VID in bits 11..0 of the entry's first word.
                let mut vl = [0u16; VLAN_LIST];
                for (i, e) in vl.iter_mut().enumerate().take(n) {
                    let mut b = [0u8; 8];
                    if !self.read_in(CTX_MODIFY + ADDRESSES + 8 * i, &mut b) {
                        return Err((status::BAD_INPUT_LEN, synd::ADDRESS_LIST));
                    }
                    *e = u16::from_be_bytes([b[2], b[3]]) & 0xfff;
                }
                // Recorded only (see `VportFilter::vlans`): the address filter stays as
                // it was.
                let f = &mut self.port().func.filter;
                f.vlans = vl;
                f.vlans_len = n as u8;
            } else {
                let mut list = [[0u8; 6]; MC_LIST];
                for (i, e) in list.iter_mut().enumerate().take(n) {
                    let mut b = [0u8; 8];
                    if !self.read_in(CTX_MODIFY + ADDRESSES + 8 * i, &mut b) {
                        return Err((status::BAD_INPUT_LEN, synd::ADDRESS_LIST));
                    }
                    e.copy_from_slice(&b[2..]);
                }
                let f = &mut self.port().func.filter;
                f.active = true;
                if ty == LIST_UC {
                    // Element by element: a slice copy's length check is a panic path
                    // objtool does not know ends.
                    for (d, e) in f.uc.iter_mut().zip(list.iter()) {
                        *d = *e;
                    }
                    f.uc_len = n as u8;
                } else {
                    f.mc = list;
                    f.mc_len = n as u8;
                }
            }
        }
        let ctx = self.inp.get(CTX_MODIFY..).unwrap_or_default();
        let mtu = get(ctx, MTU);
        let a = PERMANENT_ADDRESS + 2;
        let mut mac = [0u8; 6];
        if let Some(s) = ctx.get(a..a + 6) {
            mac.copy_from_slice(s);
        }
        let set_mtu = self.g(FS_MTU) != 0;
        let set_mac = self.g(FS_PERMANENT_ADDRESS) != 0;
        if set_mtu && !(64..=(crate::sim::mlx5::MAX_FRAME as u32 + 4)).contains(&mtu) {
            return Err(bad(synd::MTU));
        }
        if set_mac && mac[0] & 1 != 0 {
            return Err(bad(synd::MAC));
        }
        let f = &mut self.port().func;
        if set_mtu {
            f.mtu = mtu as u16;
        }
        if set_mac {
            f.mac = mac;
        }
        Ok(())
    }

    pub(super) fn access_reg(&mut self, op_mod: u32) -> CmdResult {
        use ifc::reg::*;
        let id = self.g(REGISTER_ID);
        if let Some(r) = self.access_port_reg(id, op_mod) {
            return r;
        }
        if let Some(r) = self.access_module_reg(id, op_mod) {
            return r;
        }
        let len = match id {
            PMTU => PMTU_LEN,
            PTYS => PTYS_LEN,
            PAOS => PAOS_LEN,
            PFCC => PFCC_LEN,
            PPLR => PPLR_LEN,
            PPCNT => PPCNT_LEN,
            _ => return Err(bad(synd::REGISTER_ID)),
        };
        if self.inlen < DATA + len {
            return Err((status::BAD_INPUT_LEN, synd::REG_LENGTH));
        }
        if self.outlen < DATA + len {
            return Err((status::BAD_OUTPUT_LEN, synd::REG_LENGTH));
        }
        let r = self.inp.get(DATA..DATA + len).unwrap_or_default();
        // local_port 1 (mlx5 core), or 0 (the contract leaves it 0): the function's port.
        if get(r, LOCAL_PORT) > 1 {
            return Err(bad(synd::LOCAL_PORT));
        }
        if id == PPCNT {
            let (grp, clr) = (get(r, PPCNT_GRP), get(r, PPCNT_CLR) != 0);
            return self.ppcnt(grp, clr, get(r, PPCNT_PRIO_TC));
        }
        if op_mod == OP_WRITE {
            match id {
                PMTU => {
                    let mtu = get(r, PMTU_ADMIN);
                    if !(64..=u32::from(self.caps.port_max_mtu)).contains(&mtu) {
                        return Err(bad(synd::PMTU_MTU));
                    }
                    self.port().func.port_mtu = mtu as u16;
                }
                // The modes to advertise, some of the port's, and whether to negotiate (the
                // port can run without): taken at once, the link resolved again with the
                // peer's (the model's link has no training to redo; see `link`).
                PTYS => {
                    let admin = get(r, PTYS_ETH_ADMIN);
                    if get(r, PTYS_PROTO_MASK) & 4 == 0 || admin == 0 || admin & !link::CAP != 0 {
                        return Err(bad(synd::PTYS_ADMIN));
                    }
                    let f = &mut self.port().func;
                    f.ptys_admin = admin;
                    f.an_disabled = get(r, PTYS_AN_DISABLE_ADMIN) != 0;
                }
                PAOS => {
                    if get(r, PAOS_ASE) != 0 {
                        let up = match get(r, PAOS_ADMIN_STATUS) {
                            PORT_UP => true,
                            PORT_DOWN => false,
                            _ => return Err(bad(synd::ADMIN_STATUS)),
                        };
                        self.port().link_up = up;
                    }
                }
                PPLR => {
                    // Any of the PRM's loopback modes (phy remote 1, phy local 2, external
                    // local 4) turns the model's one internal loopback on.
                    let en = get(r, PPLR_LB_EN);
                    if en & !PPLR_LB_ANY != 0 {
                        return Err(bad(synd::LOOPBACK_MODE));
                    }
                    self.port().loopback = en != 0;
                    self.port().func.lb_en = en as u8;
                }
                _ => {
                    let (tx, rx) = (get(r, PFCC_PPTX) != 0, get(r, PFCC_PPRX) != 0);
                    let pt = self.port();
                    pt.pause.tx = tx;
                    pt.pause.rx = rx;
                }
            }
        }
        // Both directions answer with the register's (new) contents.
        let p = self.p;
        let oper = oper_up(self.t.ports, p);
        let resolved = link::resolve(self.t.ports, p);
        let lp = link::lp_advertise(self.t.ports, p, oper);
        // PANIC: `p` indexes a port (see `Cx::port`).
        let pt = &self.t.ports[p];
        let o = match self.out.get_mut(DATA..DATA + len) {
            Some(o) => o,
            None => return Ok(()),
        };
        set(o, LOCAL_PORT, 1);
        match id {
            PMTU => {
                set(o, PMTU_MAX, u32::from(self.caps.port_max_mtu));
                set(o, PMTU_ADMIN, u32::from(pt.func.port_mtu));
                set(o, PMTU_OPER, u32::from(pt.func.port_mtu));
            }
            PTYS => {
                // Ethernet (proto_mask 4): the port's modes, those advertised, and while the
                // port is up the one the pair resolved (with the partner's advertised modes
                // when both negotiated).
                set(o, PTYS_PROTO_MASK, 4);
                set(o, PTYS_AN_DISABLE_CAP, 1);
                set(o, PTYS_AN_DISABLE_ADMIN, u32::from(pt.func.an_disabled));
                set(o, PTYS_ETH_CAP, link::CAP);
                set(o, PTYS_ETH_ADMIN, pt.func.ptys_admin);
                set(o, PTYS_ETH_OPER, if oper { resolved } else { 0 });
                set(o, PTYS_LP_ADVERTISE, lp);
                set(
                    o,
                    PTYS_AN_STATUS,
                    if lp != 0 { link::AN_COMPLETE } else { 0 },
                );
                // Direct-attach copper (MLX5E_PORT_DA).
                set(o, PTYS_CONNECTOR, 7);
            }
            PAOS => {
                let st = |up: bool| if up { PORT_UP } else { PORT_DOWN };
                set(o, PAOS_ADMIN_STATUS, st(pt.link_up));
                set(o, PAOS_OPER_STATUS, st(oper));
            }
            PPLR => {
                set(o, PPLR_LB_CAP, PPLR_LB_LOCAL);
                // The mode last written, or phy local when the device host turned it on.
                let en = match (pt.loopback, pt.func.lb_en) {
                    (false, _) => 0,
                    (true, 0) => PPLR_LB_LOCAL,
                    (true, m) => u32::from(m),
                };
                set(o, PPLR_LB_EN, en);
            }
            _ => {
                set(o, PFCC_PPTX, u32::from(pt.pause.tx));
                set(o, PFCC_PPRX, u32::from(pt.pause.rx));
            }
        }
        Ok(())
    }

    /// PPCNT (read or write alike): the counters of group `grp` since the last clear, then,
    /// with `clr`, restarts them.
    fn ppcnt(&mut self, grp: u32, clr: bool, prio: u32) -> CmdResult {
        use ifc::reg::*;
        let pt = self.port();
        let now = match grp {
            PPCNT_IEEE_802_3 => ieee_802_3(pt),
            PPCNT_RFC_2863 => rfc_2863(pt),
            PPCNT_RFC_2819 => rfc_2819(pt),
            PPCNT_PER_PRIO => per_prio(pt, prio),
            // The physical layer: no symbol, FEC or lane errors on the simulated wire.
            PPCNT_PHYS => [0; ieee::COUNT_MAX],
            // Its statistical group (`phys_layer_statistical_cntrs`): no corrected bits or
            // symbol errors either (nor a bit count or time: the model keeps neither).
            ifc::port::PPCNT_PHYS_STATISTICAL => [0; ieee::COUNT_MAX],
            _ => return Err(bad(synd::PPCNT_GROUP)),
        };
        if clr {
            let c = &pt.counters;
            pt.func.wire = Mac {
                pause_base: (c.rx_pause_frames, c.tx_pause_frames),
                ..Mac::ZERO
            };
        }
        let Some(o) = self.out.get_mut(DATA..DATA + PPCNT_LEN) else {
            return Ok(());
        };
        set(o, LOCAL_PORT, 1);
        set(o, PPCNT_GRP, grp);
        set(o, PPCNT_PRIO_TC, prio);
        for (i, v) in now.iter().enumerate() {
            let at = PPCNT_SET + 8 * i;
            if let Some(d) = o.get_mut(at..at + 8) {
                d.copy_from_slice(&v.to_be_bytes());
            }
        }
        Ok(())
    }

    pub(super) fn query_vport_counter(&mut self) -> CmdResult {
        use ifc::vport::*;
        if self.g(CNT_OTHER_VPORT) != 0 {
            return Err(bad(synd::OTHER_FUNCTION));
        }
        let clear = self.g(CNT_CLEAR) != 0;
        let pt = self.port();
        let (v, b) = (pt.func.vport, pt.func.vport_base);
        let c = pt.counters;
        if clear {
            pt.func.vport_base = v;
        }
        let o = &mut *self.out;
        let d = |i: usize| {
            (
                v.c[i].0.wrapping_sub(b.c[i].0),
                v.c[i].1.wrapping_sub(b.c[i].1),
            )
        };
        for (i, off) in [
            CNT_RX_UCAST,
            CNT_RX_MCAST,
            CNT_RX_BCAST,
            CNT_TX_UCAST,
            CNT_TX_MCAST,
            CNT_TX_BCAST,
        ]
        .into_iter()
        .enumerate()
        {
            let (pk, oc) = d(i);
            put_be64(o, off, pk);
            put_be64(o, off + 8, oc);
        }
        put_be64(
            o,
            CNT_RX_ERRORS,
            c.rx_too_long.wrapping_add(c.rx_dma_faults),
        );
        put_be64(o, CNT_TX_ERRORS, c.wqe_errors);
        put_be64(o, CNT_LOCAL_LB, c.loopback_packets);
        put_be64(o, CNT_LOCAL_LB + 8, c.loopback_bytes);
        Ok(())
    }

    /// QUERY_NIC_VPORT_CONTEXT: min inline, MTU, permanent address.
    pub(super) fn query_nic_vport_context(&mut self) -> CmdResult {
        if self.g(ifc::vport::OTHER_VPORT) != 0 {
            return Err(bad(synd::OTHER_FUNCTION));
        }
        let (mtu, mac) = {
            let f = &self.port().func;
            (f.mtu, f.mac)
        };
        let min_inline = u32::from(self.caps.min_inline);
        let ctx = self
            .out
            .get_mut(ifc::vport::CTX_QUERY..)
            .unwrap_or_default();
        set(ctx, ifc::fld(0x5, 3), min_inline);
        set(ctx, ifc::vport::MTU, u32::from(mtu));
        let a = ifc::vport::PERMANENT_ADDRESS + 2;
        if let Some(d) = ctx.get_mut(a..a + 6) {
            d.copy_from_slice(&mac);
        }
        Ok(())
    }

    /// QUERY_VPORT_STATE: operational and admin state.
    pub(super) fn query_vport_state(&mut self) -> CmdResult {
        if self.g(ifc::vport::OTHER_VPORT) != 0 {
            return Err(bad(synd::OTHER_FUNCTION));
        }
        let p = self.p;
        let up = oper_up(self.t.ports, p);
        let admin = self.port().link_up;
        set(self.out, ifc::vport::STATE_OPER, u32::from(up));
        set(self.out, ifc::vport::STATE_ADMIN, u32::from(admin));
        Ok(())
    }
}
