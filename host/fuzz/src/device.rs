// SPDX-License-Identifier: GPL-2.0

//! What the device-side harnesses share ([`crate::device_wqe`], [`crate::mana_device_wqe`]):
//! host memory as the device sees it with an independent check of every access
//! ([`Checked`]), the interrupt sink, the packet buffers the hostile driver points the device
//! at, and the addresses and lengths it picks.

use std::cell::{Cell, RefCell};

use rsnic_core::hwif::hw::{BusMemory, Coherent, DmaAddr, DmaFault, InterruptSink};
use rsnic_testbed::fixtures::Ipv4Frame;
use rsnic_testbed::mem::{HostBuf, HostMemory};

use crate::Input;

struct Region {
    base: DmaAddr,
    len: usize,
    dev_writes: bool,
    live: bool,
    name: &'static str,
}

/// The device's view of host memory, with an independent check of every access that
/// succeeds (what an IOMMU would enforce): it lies inside a live (mapped) region, and a write
/// only inside a region the device may write.
#[derive(Default)]
pub struct Checked {
    mem: HostMemory,
    regions: RefCell<Vec<Region>>,
    faults: Cell<u64>,
}

impl Checked {
    /// A buffer of `len` bytes the device may write (`dev_writes`) or only read.
    pub fn alloc(&self, len: usize, dev_writes: bool, name: &'static str) -> HostBuf {
        let b = self.mem.alloc(len);
        self.regions.borrow_mut().push(Region {
            base: b.dma_addr(),
            len: b.size(),
            dev_writes,
            live: true,
            name,
        });
        b
    }

    /// Unmaps `buf`: the device's accesses to it fault from now on.
    pub fn unmap(&self, buf: &HostBuf) {
        self.mem.free(buf);
        for r in self.regions.borrow_mut().iter_mut() {
            if r.base == buf.dma_addr() {
                r.live = false;
            }
        }
    }

    fn check(&self, addr: DmaAddr, len: usize, write: bool) {
        let regions = self.regions.borrow();
        let r = regions
            .iter()
            .find(|r| {
                r.live
                    && addr >= r.base
                    && addr
                        .checked_add(len as u64)
                        .is_some_and(|end| end <= r.base + r.len as u64)
            })
            .unwrap_or_else(|| panic!("DMA {addr:#x}+{len} outside every mapped region succeeded"));
        assert!(
            !write || r.dev_writes,
            "the device wrote {len} bytes at {addr:#x} into {}",
            r.name
        );
    }

    /// Whether the device may write at `addr` (or the access faults): the harnesses never
    /// hand the device their rings or packets as receive buffers.
    pub fn writable_or_unmapped(&self, addr: DmaAddr) -> bool {
        !self.regions.borrow().iter().any(|r| {
            r.live && !r.dev_writes && addr >= r.base && addr < r.base + r.len as u64 + 4096
        })
    }

    /// Four packet buffers the device may only read, each a TCP frame (or the first bytes
    /// of one) of 14..=4109 bytes (two input bytes each); with `addrs`, the frames carry
    /// IPv4 addresses.
    pub fn packets(&self, inp: &mut Input<'_>, addrs: bool) -> Vec<HostBuf> {
        (0..4)
            .map(|_| {
                let len = 14 + usize::from(inp.u16() % 4096);
                let b = self.alloc(len, false, "tx packet");
                b.write(0, &tcp4_frame(len, addrs));
                b
            })
            .collect()
    }

    /// The bus address of a buffer that was mapped and is not any more.
    pub fn freed(&self) -> DmaAddr {
        let gone = self.alloc(256, false, "freed");
        let freed = gone.dma_addr();
        self.unmap(&gone);
        freed
    }
}

impl BusMemory for Checked {
    fn dma_read(&self, addr: DmaAddr, dst: &mut [u8]) -> Result<(), DmaFault> {
        let r = self.mem.dma_read(addr, dst);
        match r {
            Ok(()) => self.check(addr, dst.len(), false),
            Err(_) => self.faults.set(self.faults.get() + 1),
        }
        r
    }

    fn dma_write(&self, addr: DmaAddr, src: &[u8]) -> Result<(), DmaFault> {
        let r = self.mem.dma_write(addr, src);
        match r {
            Ok(()) => self.check(addr, src.len(), true),
            Err(_) => self.faults.set(self.faults.get() + 1),
        }
        r
    }
}

/// Interrupts raised, per vector; a vector the harness gave no queue is a crash.
pub struct Irqs {
    /// Count per vector.
    pub raised: Vec<u64>,
}

impl Irqs {
    /// Vectors `0..vectors`.
    pub fn new(vectors: usize) -> Self {
        Self {
            raised: vec![0; vectors],
        }
    }
}

impl InterruptSink for Irqs {
    fn raise(&mut self, vector: u16) {
        let v = self
            .raised
            .get_mut(usize::from(vector))
            .unwrap_or_else(|| panic!("interrupt on vector {vector}, which no queue uses"));
        *v += 1;
    }
}

/// Ethernet + IPv4 + TCP + payload of `len` bytes (lengths filled in, with `addrs` the
/// addresses too), or the first bytes of one.
pub fn tcp4_frame(len: usize, addrs: bool) -> Vec<u8> {
    let f = Ipv4Frame::tcp(len).lengths().ttl(64);
    let f = if addrs { f.addrs() } else { f };
    let mut f = f.payload(|i| i as u8).build();
    f.truncate(len);
    f
}

/// What the hostile driver points the device at.
pub struct Targets {
    /// The packet buffers ([`Checked::packets`]).
    pub pkts: Vec<HostBuf>,
    /// The receive buffers.
    pub rx_bufs: Vec<HostBuf>,
    /// A ring (read-only for the device).
    pub ring: HostBuf,
    /// [`Checked::freed`].
    pub freed: DmaAddr,
}

impl Targets {
    /// A bus address for a data segment, an SGE or an RX WQE: good, straddling, unmapped or
    /// wild.
    pub fn addr(&self, inp: &mut Input<'_>) -> DmaAddr {
        let sel = inp.u8();
        let off = u64::from(inp.u16());
        match sel % 12 {
            0..=3 => {
                let b = &self.pkts[usize::from(sel % 4)];
                b.dma_addr() + off % (b.size() as u64 + 8)
            }
            4 => self.ring.dma_addr() + off % 4096,
            5 => self.rx_bufs[usize::from(sel >> 4) % self.rx_bufs.len()].dma_addr() + off % 2100,
            6 => {
                // The guard page after a packet buffer.
                let b = &self.pkts[0];
                (b.dma_addr() + b.size() as u64).div_ceil(4096) * 4096 + off % 4096
            }
            7 => off,
            8 => u64::MAX - off,
            9 => self.freed + off % 300,
            _ => inp.u64(),
        }
    }

    /// A segment length: a frame's, a whole packet buffer's, short, just above the 9728-byte
    /// limit (by less than `jumbo_over`), huge or anything.
    pub fn seg_len(&self, inp: &mut Input<'_>, jumbo_over: u8) -> u32 {
        let sel = inp.u8();
        match sel % 8 {
            0..=2 => 14 + u32::from(inp.u16() % 1600),
            3 => self.pkts[usize::from(sel >> 4) % 4].size() as u32,
            4 => u32::from(inp.u8()),
            5 => 9728 + u32::from(inp.u8() % jumbo_over),
            6 => 60_000 + u32::from(inp.u16()),
            _ => inp.u32(),
        }
    }

    /// Packet data changes under the device's feet.
    pub fn scribble(&self, inp: &mut Input<'_>) {
        let b = &self.pkts[usize::from(inp.u8() % 4)];
        let at = usize::from(inp.u16()) % b.size();
        let n = usize::from(inp.u8() % 16);
        let v = inp.bytes(n);
        let n = v.len().min(b.size() - at);
        b.write(at, &v[..n]);
    }
}
