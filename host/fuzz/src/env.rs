// SPDX-License-Identifier: GPL-2.0

//! What the driver-side harnesses share ([`crate::tx_completion`], [`crate::rx_completion`],
//! [`crate::mana_tx_completion`], [`crate::mana_rx_completion`]): the packets and receive
//! buffers they hand the driver, one environment that plays the netdev, the DMA API, the page
//! pool and BAR0 and checks every call, and the hostile device's CQ writes.
//!
//! [`Env`] checks, whatever the harness: an address is never mapped twice and every unmap
//! matches a live mapping of the same length and kind; the linear part is mapped only inside
//! it and no empty or missing fragment is mapped; the TX queue is neither stopped twice nor
//! woken while running; BQL never completes more bytes or packets than were sent; a buffer is
//! recycled or delivered only while the RQ holds it, with a length of 1..=its size.
//! Register writes are logged for the harness to check ([`Env::take_writes`]); 32-bit writes
//! and reads panic (neither family's data path does them).

use std::cell::RefCell;
use std::collections::HashMap;

use rsnic_core::hwif::hw::{Coherent, DmaAddr, Mmio};
use rsnic_core::hwif::mlx5::cqe::{off, Cqe64, CQE_OP_OWN_INIT};
use rsnic_core::hwif::mlx5::rq::{RxBufProvider, RxBuffer};
use rsnic_core::hwif::mlx5::tx::{
    DmaEntry, DmaKind, Gso, TxCsum, TxDmaMap, TxPacket, TxQueue, VlanTag,
};
use rsnic_testbed::fixtures::write_cqe;
use rsnic_testbed::mem::HostBuf;

use crate::Input;

/// A packet: a linear part (real bytes, parsed for headers) and fragment lengths.
#[derive(Debug)]
pub struct Pkt {
    /// Its number: the index of its state in the harness.
    pub id: u32,
    /// The linear part.
    pub linear: Vec<u8>,
    /// Fragment lengths.
    pub frags: Vec<u32>,
    /// Segmentation offload request.
    pub gso: Option<Gso>,
    /// Checksum offload request.
    pub csum: TxCsum,
    /// VLAN tag to insert.
    pub vlan: Option<VlanTag>,
}

impl Pkt {
    /// A linear packet with a checksum request and nothing else.
    pub fn linear(id: u32, linear: Vec<u8>, csum: TxCsum) -> Self {
        Self {
            id,
            linear,
            frags: Vec::new(),
            gso: None,
            csum,
            vlan: None,
        }
    }
}

impl TxPacket for Pkt {
    fn pkt_len(&self) -> u32 {
        self.linear.len() as u32 + self.frags.iter().sum::<u32>()
    }
    fn linear(&self) -> &[u8] {
        &self.linear
    }
    fn nr_frags(&self) -> usize {
        self.frags.len()
    }
    fn frag_len(&self, i: usize) -> u32 {
        self.frags.get(i).copied().unwrap_or(0)
    }
    fn gso(&self) -> Option<Gso> {
        self.gso
    }
    fn csum(&self) -> TxCsum {
        self.csum
    }
    fn vlan(&self) -> Option<VlanTag> {
        self.vlan
    }
}

/// Bus address of a packet's linear part (fragment i at `+ (i + 1) << 17`).
fn pkt_base(id: u32) -> DmaAddr {
    0x10_0000_0000_0000 | (u64::from(id) << 24)
}

/// Where a packet handed to `xmit` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxSt {
    /// Accepted (or being offered) and not back.
    InFlight,
    /// Handed back by `xmit`.
    Rejected,
    /// Handed back by a completion or the drain.
    Released,
}

/// Packet `id` comes back from a completion or the drain: it must have been posted and be in
/// flight.
pub fn release(states: &mut [TxSt], id: u32) {
    let st = states
        .get_mut(id as usize)
        .expect("released a packet that was never posted");
    assert_eq!(*st, TxSt::InFlight, "packet {id} released twice");
    *st = TxSt::Released;
}

/// After a recovery, packet `id` sent on the recovered SQ has come back by its completion.
pub fn assert_sent_after_recovery(states: &[TxSt], id: u32) {
    assert_eq!(
        states[id as usize],
        TxSt::Released,
        "the SQ does not complete after recovery"
    );
}

/// A receive buffer (the fuzzer plays the device: nothing is written into it).
#[derive(Debug)]
pub struct RxBuf {
    /// Its number: the index of its state in [`Env::bufs`].
    pub id: u32,
}

/// Bus address of buffer `id`.
pub fn buf_addr(id: u32) -> DmaAddr {
    0x20_0000_0000_0000 | (u64::from(id) << 16)
}

impl RxBuffer for RxBuf {
    fn dma_addr(&self) -> DmaAddr {
        buf_addr(self.id)
    }
}

/// Where a receive buffer is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RxSt {
    /// The RQ holds it.
    Held,
    /// Delivered with a packet.
    Delivered,
    /// Given back unused.
    Recycled,
}

/// Everything the data path talks to: registers, barriers, DMA mapper, netdev queue with
/// BQL, RX buffer pool.
#[derive(Default)]
pub struct Env {
    /// Live DMA mappings: address → (length, kind).
    pub maps: HashMap<DmaAddr, (u32, DmaKind)>,
    /// Map calls so far (failed ones included).
    pub map_calls: u32,
    /// Fail the map call with this number.
    pub fail_at: Option<u32>,
    /// Whether the TX queue is stopped.
    pub stopped: bool,
    /// Woken during the current operation (the harness clears it).
    pub woke: bool,
    /// BQL: bytes reported sent.
    pub sent_bytes: u64,
    /// BQL: packets reported sent.
    pub sent_pkts: u64,
    /// BQL: bytes reported completed.
    pub completed_bytes: u64,
    /// BQL: packets reported completed.
    pub completed_pkts: u64,
    /// Every RX buffer allocated, by id.
    pub bufs: Vec<RxSt>,
    /// Buffers in the `Held` state.
    pub held: usize,
    /// Fail the next allocations while > 0.
    pub fail_allocs: u32,
    writes: RefCell<Vec<(u32, [u8; 8])>>,
}

impl Env {
    fn map(&mut self, addr: DmaAddr, len: u32, kind: DmaKind) -> Option<DmaAddr> {
        let n = self.map_calls;
        self.map_calls += 1;
        if self.fail_at == Some(n) {
            return None;
        }
        assert!(
            self.maps.insert(addr, (len, kind)).is_none(),
            "address mapped twice"
        );
        Some(addr)
    }

    /// Fails one of the next eight map calls when the top bit of `f` is set (the low three
    /// bits say which).
    pub fn fail_map(&mut self, f: u8) {
        self.fail_at = (f & 0x80 != 0).then(|| self.map_calls + u32::from(f & 7));
    }

    /// Whether `[addr, addr + len)` lies inside one live mapping.
    pub fn mapped(&self, addr: DmaAddr, len: u32) -> bool {
        self.maps
            .iter()
            .any(|(&base, &(l, _))| addr >= base && addr + u64::from(len) <= base + u64::from(l))
    }

    /// The register writes since the last [`Env::take_writes`]: (offset, bytes).
    pub fn writes(&self) -> std::cell::Ref<'_, Vec<(u32, [u8; 8])>> {
        self.writes.borrow()
    }

    /// The register writes since the last call: (offset, bytes).
    pub fn take_writes(&self) -> Vec<(u32, [u8; 8])> {
        std::mem::take(&mut *self.writes.borrow_mut())
    }

    /// After the final drain: every packet handed to `xmit` (`states`) came back, no DMA
    /// mapping is left, and BQL balances: completed plus drained is what was sent, in bytes
    /// and in packets.
    pub fn check_all_back(&self, states: &[TxSt], drained_bytes: u64, drained_pkts: u64) {
        assert!(
            !states.contains(&TxSt::InFlight),
            "a packet never came back"
        );
        assert!(self.maps.is_empty(), "DMA mappings leaked");
        assert_eq!(
            self.sent_bytes,
            self.completed_bytes + drained_bytes,
            "BQL bytes do not balance"
        );
        assert_eq!(
            self.sent_pkts,
            self.completed_pkts + drained_pkts,
            "BQL packets do not balance"
        );
    }

    /// Runs `f` with the next `n` RX buffer allocations failing; none fails after it.
    pub fn failing_allocs<R>(&mut self, n: u32, f: impl FnOnce(&mut Self) -> R) -> R {
        self.fail_allocs = n;
        let r = f(self);
        self.fail_allocs = 0;
        r
    }

    /// Buffers in the `Held` state, counted one by one.
    pub fn held_count(&self) -> usize {
        self.bufs.iter().filter(|s| **s == RxSt::Held).count()
    }

    /// Buffer `b` leaves the RQ for state `to` (`verb` says how, in messages): the RQ must
    /// hold it.
    fn give_back(&mut self, b: RxBuf, to: RxSt, verb: &str) {
        let st = self
            .bufs
            .get_mut(b.id as usize)
            .unwrap_or_else(|| panic!("{verb} a buffer that was never allocated"));
        assert_eq!(*st, RxSt::Held, "buffer {} {verb} but not held", b.id);
        *st = to;
        self.held -= 1;
    }

    /// Buffer `b` is delivered with a packet of `len` bytes: the RQ must hold it, and the
    /// length must fit a buffer of `buf_size`.
    pub fn deliver(&mut self, b: RxBuf, len: u32, buf_size: u32) {
        self.give_back(b, RxSt::Delivered, "delivered");
        assert!(
            (1..=buf_size).contains(&len),
            "delivered length {len} outside 1..={buf_size}"
        );
    }
}

impl Mmio for Env {
    fn write64(&self, offset: u32, bytes: [u8; 8]) {
        self.writes.borrow_mut().push((offset, bytes));
    }
    fn write32(&self, _: u32, _: u32) {
        panic!("the data path never writes 32-bit registers");
    }
    fn read32(&self, _: u32) -> u32 {
        panic!("the data path never reads registers");
    }
}

rsnic_testbed::no_barriers!(Env);

impl TxDmaMap<Pkt> for Env {
    fn map_linear(&mut self, pkt: &Pkt, offset: u32, len: u32) -> Option<DmaAddr> {
        assert!(
            u64::from(offset) + u64::from(len) <= pkt.linear.len() as u64,
            "map past the linear part"
        );
        self.map(pkt_base(pkt.id) + u64::from(offset), len, DmaKind::Single)
    }
    fn map_frag(&mut self, pkt: &Pkt, index: usize) -> Option<DmaAddr> {
        let len = *pkt
            .frags
            .get(index)
            .expect("map of a fragment that does not exist");
        assert!(len != 0, "map of an empty fragment");
        self.map(
            pkt_base(pkt.id) + ((index as u64 + 1) << 17),
            len,
            DmaKind::Page,
        )
    }
    fn unmap(&mut self, e: DmaEntry) {
        let got = self
            .maps
            .remove(&e.addr)
            .expect("unmap of an unmapped address");
        assert_eq!(got, (e.len, e.kind), "unmap does not match its map");
    }
}

impl TxQueue for Env {
    fn stop(&mut self) {
        assert!(!self.stopped, "stopped twice");
        self.stopped = true;
    }
    fn wake(&mut self) {
        assert!(self.stopped, "woken while running");
        self.stopped = false;
        self.woke = true;
    }
    fn is_stopped(&self) -> bool {
        self.stopped
    }
    fn sent(&mut self, bytes: u32, xmit_more: bool) -> bool {
        self.sent_bytes += u64::from(bytes);
        self.sent_pkts += 1;
        !xmit_more || self.stopped
    }
    fn completed(&mut self, pkts: u32, bytes: u32) {
        self.completed_bytes += u64::from(bytes);
        self.completed_pkts += u64::from(pkts);
        assert!(
            self.completed_bytes <= self.sent_bytes && self.completed_pkts <= self.sent_pkts,
            "BQL: completed more than was sent"
        );
    }
}

impl RxBufProvider<RxBuf> for Env {
    fn alloc(&mut self) -> Option<RxBuf> {
        if self.fail_allocs > 0 {
            self.fail_allocs -= 1;
            return None;
        }
        let id = self.bufs.len() as u32;
        self.bufs.push(RxSt::Held);
        self.held += 1;
        Some(RxBuf { id })
    }
    fn recycle(&mut self, buf: RxBuf) {
        self.give_back(buf, RxSt::Recycled, "recycled");
    }
}

/// A delivered length for buffers of `buf_size` bytes, as the low bits of `sel` pick:
/// inside the buffer (two more input bytes), exactly its size, one more, 0, or `any`.
pub fn pick_len(
    sel: u8,
    buf_size: u32,
    inp: &mut Input<'_>,
    any: impl FnOnce(&mut Input<'_>) -> u32,
) -> u32 {
    match sel & 7 {
        0..=3 => 1 + u32::from(inp.u16()) % buf_size,
        4 => buf_size,
        5 => buf_size + 1,
        6 => 0,
        _ => any(inp),
    }
}

/// The hostile device pokes one byte of a CQ of `entries` 64-byte entries.
pub fn poke_cq(cqbuf: &HostBuf, entries: usize, inp: &mut Input<'_>) {
    let slot = usize::from(inp.u8()) % entries;
    let at = usize::from(inp.u8() % 64);
    cqbuf.write(slot * 64 + at, &[inp.u8()]);
}

/// The hostile device's arbitrary CQE: (slot counter, 64 bytes).
pub fn raw_cqe(inp: &mut Input<'_>) -> (u32, [u8; 64]) {
    let slot = u32::from(inp.u8());
    let mut c = [0u8; 64];
    inp.fill(&mut c);
    (slot, c)
}

/// An mlx5 CQ (`1 << log` entries) as the hostile device writes it.
pub struct Mlx5Cq<'a> {
    /// The CQ buffer.
    pub buf: &'a HostBuf,
    /// log2 of the entries.
    pub log: u8,
}

impl Mlx5Cq<'_> {
    /// Writes `c` at counter `ctr` (body first, owner byte last).
    pub fn write(&self, ctr: u32, c: &Cqe64) {
        write_cqe(self.buf, (ctr & ((1 << self.log) - 1)) as usize, c);
    }

    /// Makes the entry at counter `next` hardware-owned (its owner bit the opposite of
    /// `parity`, what the driver expects of a valid entry): the rest of the CQ may still hold
    /// the fuzzer's bytes, and only the slot before may be read.
    pub fn hw_owned(&self, next: u32, parity: u8) {
        let o = (next & ((1 << self.log) - 1)) as usize * 64 + off::OP_OWN;
        self.buf.write(o, &[(CQE_OP_OWN_INIT & !1) | (parity ^ 1)]);
    }
}

/// Owner bits of a MANA CQE at counter `ctr` of a CQ of `num` entries, as `sel` (bits 2..4)
/// picks: valid, from the pass before, or any (one more byte).
pub fn mana_owner(sel: u8, ctr: u32, num: u32, inp: &mut Input<'_>) -> u32 {
    let good = (ctr / num) & 7;
    match (sel >> 2) & 3 {
        0 | 1 => good,
        2 => good.wrapping_sub(1) & 7,
        _ => u32::from(inp.u8()) & 7,
    }
}

/// A MANA CQE: CQE type `typ` (client type 1) with `vendor` error bits, for queue `wq`
/// (an SQ when `is_sq`) with owner bits `owner`; the rest zero.
pub fn mana_cqe(typ: u8, vendor: u32, wq: u32, is_sq: bool, owner: u32) -> [u8; 64] {
    let mut b = [0u8; 64];
    let dw0 = u32::from(typ) | (1 << 6) | (vendor << 8);
    b[0..4].copy_from_slice(&dw0.to_le_bytes());
    let info = wq | (u32::from(is_sq) << 24) | (owner << 29);
    b[60..64].copy_from_slice(&info.to_le_bytes());
    b
}

/// Writes a MANA CQE at counter `ctr` of a CQ of `num` entries.
pub fn write_mana_cqe(cqbuf: &HostBuf, num: u32, ctr: u32, b: &[u8; 64]) {
    cqbuf.write((ctr & (num - 1)) as usize * 64, b);
}
