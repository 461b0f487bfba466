//! Regressions found by fuzzing the driver-side data path (host/fuzz, targets tx_completion
//! and rx_completion). Self-contained: a minimal environment, no shared fixtures.

use std::collections::HashMap;

use rsnic_core::hwif::hw::{Coherent, DmaAddr, Mmio};
use rsnic_core::hwif::mlx5::cq::Cq;
use rsnic_core::hwif::mlx5::sq::{SqParams, BF_OFFSET};
use rsnic_core::hwif::mlx5::tx::{DmaEntry, InlineMode, TxDmaMap, TxPacket, TxQueue};
use rsnic_testbed::mem::{HostBuf, HostMemory};
use rsnic_testbed::pair::{new_vec_sq, VecSq};

const SQN: u32 = 0x0abc;

#[derive(Debug)]
struct Pkt {
    id: u32,
    data: Vec<u8>,
}

impl TxPacket for Pkt {
    fn pkt_len(&self) -> u32 {
        self.data.len() as u32
    }
    fn linear(&self) -> &[u8] {
        &self.data
    }
    fn nr_frags(&self) -> usize {
        0
    }
    fn frag_len(&self, _: usize) -> u32 {
        0
    }
}

#[derive(Default)]
struct Env {
    maps: HashMap<DmaAddr, u32>,
    stopped: bool,
}

impl Mmio for Env {
    fn write64(&self, _: u32, _: [u8; 8]) {}
    fn write32(&self, _: u32, _: u32) {}
    fn read32(&self, _: u32) -> u32 {
        0
    }
}

rsnic_testbed::no_barriers!(Env);

impl TxDmaMap<Pkt> for Env {
    fn map_linear(&mut self, pkt: &Pkt, offset: u32, len: u32) -> Option<DmaAddr> {
        let addr = (u64::from(pkt.id) << 16) + u64::from(offset);
        self.maps.insert(addr, len);
        Some(addr)
    }
    fn map_frag(&mut self, _: &Pkt, _: usize) -> Option<DmaAddr> {
        None
    }
    fn unmap(&mut self, e: DmaEntry) {
        assert_eq!(self.maps.remove(&e.addr), Some(e.len));
    }
}

impl TxQueue for Env {
    fn stop(&mut self) {
        self.stopped = true;
    }
    fn wake(&mut self) {
        self.stopped = false;
    }
    fn is_stopped(&self) -> bool {
        self.stopped
    }
    fn sent(&mut self, _: u32, xmit_more: bool) -> bool {
        !xmit_more || self.stopped
    }
    fn completed(&mut self, _: u32, _: u32) {}
}

type TestSq = VecSq<Pkt, HostBuf>;

fn sq(mem: &HostMemory, log_sz: u8, max_sq_wqebbs: u16) -> (TestSq, HostBuf) {
    let n = 1usize << log_sz;
    let ring = mem.alloc(n * 64);
    let cq = Cq::new(mem.alloc(n * 64), mem.alloc(8), 0, log_sz, 0x77, 0).unwrap();
    let p = SqParams {
        log_sz,
        sqn: SQN,
        lkey: 0x1234,
        db_offset: BF_OFFSET,
        dbr_off: 0,
        min_inline: InlineMode::None,
        vlan_need_l2_inline: false,
        max_sq_wqebbs,
        mpwqe: true,
        mpwqe_inline: true,
    };
    let sq = new_vec_sq(p, ring.clone(), mem.alloc(8), cq).unwrap();
    (sq, ring)
}

/// Fuzzer finding (tx_completion): with a small device WQE limit (`max_sq_wqebbs` 2, so
/// MPWQE sessions of 2 WQEBBs = 8 DS) and inlining switched on by the hysteresis, the first
/// packet of a session was written as an inline segment of up to 16 DS: past the room the
/// session had reserved, into WQEBBs the device may still own, and out of the ring at its
/// end. Now a packet whose inline segment does not fit goes by address.
#[test]
fn mpwqe_inline_segment_never_overflows_a_small_session() {
    let mem = HostMemory::new();
    let (mut sq, ring) = sq(&mem, 8, 2);
    let mut env = Env::default();
    assert_eq!(sq.max_mpw_wqebbs(), 2);
    // 132 outstanding MPWQE packets (22 full sessions of 6) turn inlining on at the next
    // session start.
    for id in 0..132 {
        let data = vec![id as u8; 60];
        assert!(sq.xmit(Pkt { id, data }, true, &mut env).is_ok());
    }
    assert!(!sq.inline_on());
    let pc = sq.pc();
    let start = usize::from(pc & (sq.size() - 1));
    sq.xmit(
        Pkt {
            id: 1000,
            data: vec![0xee; 200],
        },
        false,
        &mut env,
    )
    .unwrap();
    assert!(sq.inline_on(), "the hysteresis switched inlining on");
    // The session of the 200-byte packet: ctrl + eth + one data segment, one WQEBB.
    let mut ctrl = [0u8; 16];
    ring.read(start * 64, &mut ctrl);
    assert_eq!(ctrl[3], 0x29, "an enhanced MPWQE");
    assert_eq!(
        ctrl[7] & 0x3f,
        3,
        "DS count of ctrl + eth + one data segment"
    );
    assert_eq!(sq.pc().wrapping_sub(pc), 1);
    let mut dseg = [0u8; 16];
    ring.read(start * 64 + 32, &mut dseg);
    assert_eq!(&dseg[0..4], &200u32.to_be_bytes(), "byte count, not inline");
    assert_eq!(
        &dseg[8..16],
        &(1000u64 << 16).to_be_bytes(),
        "the mapped address"
    );
    assert_eq!(sq.stats.inlnw, 0);

    // Every packet is still released exactly once.
    let mut got = Vec::new();
    sq.drain(&mut env, |p| got.push(p.id));
    got.sort_unstable();
    let mut want: Vec<u32> = (0..132).collect();
    want.push(1000);
    assert_eq!(got, want);
    assert!(env.maps.is_empty());
}

/// With sessions large enough, inlining still happens (the fix does not turn it off).
#[test]
fn mpwqe_inline_still_used_when_the_session_has_room() {
    let mem = HostMemory::new();
    let (mut sq, _ring) = sq(&mem, 8, 16);
    let mut env = Env::default();
    // 3 full sessions of 58 packets.
    for id in 0..174 {
        assert!(sq
            .xmit(
                Pkt {
                    id,
                    data: vec![1; 60]
                },
                true,
                &mut env
            )
            .is_ok());
    }
    let before = sq.stats.inlnw;
    sq.xmit(
        Pkt {
            id: 1000,
            data: vec![2; 200],
        },
        false,
        &mut env,
    )
    .unwrap();
    assert!(sq.inline_on());
    assert_eq!(sq.stats.inlnw, before + 1);
    sq.drain(&mut env, |_| {});
    assert!(env.maps.is_empty());
}
