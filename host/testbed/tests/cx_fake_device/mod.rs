//! The fake ConnectX device of the driver-side tests (hwif_cmd.rs, hwif_eq.rs): a hand-written
//! stand-in for the device's half of the control plane, against which the real driver code
//! (hwif/) runs. It is deliberately tiny and independent of sim/: a BAR with the
//! initialization segment registers, and a command responder that reads the command entry
//! and its mailbox chains from test memory by bus address and writes hand-built outputs.

#![allow(dead_code)]

use std::cell::{Cell, RefCell};

use rsnic_core::hwif::hw::{BusMemory, DmaAddr, Mmio};
use rsnic_testbed::mem::HostMemory;

/// Builds an `len`-byte vector that is zero except at the listed (offset, byte) pairs.
pub fn sparse(len: usize, bytes: &[(usize, u8)]) -> Vec<u8> {
    let mut v = vec![0u8; len];
    for &(o, b) in bytes {
        assert_eq!(v[o], 0, "byte {o:#x} listed twice");
        v[o] = b;
    }
    v
}

/// Writes `x` big-endian at `o` of `v`.
pub fn put_be64(v: &mut [u8], o: usize, x: u64) {
    v[o..o + 8].copy_from_slice(&x.to_be_bytes());
}

/// Barriers of a single-threaded host test: nothing to order.
pub struct NoBarriers;

rsnic_testbed::no_barriers!(NoBarriers);

/// A register write the driver made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Write {
    /// 32-bit write (offset, value).
    W32(u32, u32),
    /// 64-bit write (offset, bytes in bus order).
    W64(u32, [u8; 8]),
}

/// BAR0 of the hand-written device: the initialization segment and a write log.
pub struct FakeBar {
    pub fw_rev: u32,
    pub cmdif_rev_fw_sub: u32,
    /// Low byte of `cmdq_addr_l_sz` reads: log_cmdq_size << 4 | log_cmdq_stride.
    pub geometry: u32,
    pub addr_h: Cell<u32>,
    pub addr_l: Cell<Option<u32>>,
    /// Reads of `initializing` that still return bit 31 after the address was written.
    pub init_polls: Cell<u32>,
    /// Reads of `initializing` that return bit 31 before the address is written (firmware
    /// still booting); then it reads clear until the address is written.
    pub pre_init_polls: Cell<u32>,
    pub writes: RefCell<Vec<Write>>,
}

impl Default for FakeBar {
    fn default() -> Self {
        Self {
            fw_rev: (7 << 16) | 16,
            cmdif_rev_fw_sub: (5 << 16) | 1000,
            geometry: (5 << 4) | 6,
            addr_h: Cell::new(0),
            addr_l: Cell::new(None),
            init_polls: Cell::new(0),
            pre_init_polls: Cell::new(0),
            writes: RefCell::new(Vec::new()),
        }
    }
}

impl FakeBar {
    /// The command queue page's bus address, once written.
    pub fn cmdq_addr(&self) -> Option<DmaAddr> {
        self.addr_l
            .get()
            .map(|l| (u64::from(self.addr_h.get()) << 32) | u64::from(l & !0xfff))
    }

    /// Takes the write log.
    pub fn take_writes(&self) -> Vec<Write> {
        std::mem::take(&mut self.writes.borrow_mut())
    }
}

impl Mmio for FakeBar {
    fn write64(&self, offset: u32, bytes: [u8; 8]) {
        self.writes.borrow_mut().push(Write::W64(offset, bytes));
    }

    fn write32(&self, offset: u32, value: u32) {
        self.writes.borrow_mut().push(Write::W32(offset, value));
        match offset {
            0x010 => self.addr_h.set(value),
            0x014 => self.addr_l.set(Some(value)),
            _ => {}
        }
    }

    fn read32(&self, offset: u32) -> u32 {
        match offset {
            0x000 => self.fw_rev,
            0x004 => self.cmdif_rev_fw_sub,
            0x014 => (self.addr_l.get().unwrap_or(0) & !0xfff) | self.geometry,
            0x1fc => {
                if self.addr_l.get().is_none() {
                    if self.pre_init_polls.get() > 0 {
                        self.pre_init_polls.set(self.pre_init_polls.get() - 1);
                        1 << 31
                    } else {
                        0
                    }
                } else if self.init_polls.get() > 0 {
                    self.init_polls.set(self.init_polls.get() - 1);
                    1 << 31
                } else {
                    0
                }
            }
            0x1010 => 42,
            _ => 0,
        }
    }
}

/// A command as the responder read it from memory.
#[derive(Debug, Clone)]
pub struct Cmd {
    pub input: Vec<u8>,
    pub outlen: usize,
    pub token: u8,
    pub out_ptr: u64,
    pub in_ptr: u64,
    /// Input mailbox blocks (bus address, block_num, token).
    pub in_blocks: Vec<(u64, u32, u8)>,
}

impl Cmd {
    pub fn opcode(&self) -> u16 {
        u16::from_be_bytes([self.input[0], self.input[1]])
    }

    pub fn op_mod(&self) -> u16 {
        u16::from_be_bytes([self.input[6], self.input[7]])
    }
}

fn rd(mem: &HostMemory, addr: u64, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    mem.dma_read(addr, &mut v).expect("device read");
    v
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

fn be64(b: &[u8]) -> u64 {
    u64::from_be_bytes(b[..8].try_into().unwrap())
}

/// Reads entry 0 if the driver handed it to the device; follows the input chain.
pub fn take(mem: &HostMemory, bar: &FakeBar) -> Option<Cmd> {
    let page = bar.cmdq_addr()?;
    let e = rd(mem, page, 64);
    if e[0x3f] & 1 == 0 {
        return None;
    }
    assert_eq!(e[0], 7, "entry type MLX5_PCI_CMD_XPORT");
    let inlen = be32(&e[4..]) as usize;
    let in_ptr = be64(&e[8..]);
    let out_ptr = be64(&e[0x30..]);
    let outlen = be32(&e[0x38..]) as usize;
    let token = e[0x3c];
    let mut input = e[0x10..0x10 + inlen.min(16)].to_vec();
    let mut in_blocks = Vec::new();
    let mut next = in_ptr;
    while input.len() < inlen {
        assert_ne!(next, 0, "input chain too short");
        let b = rd(mem, next, 576);
        let n = (inlen - input.len()).min(512);
        input.extend_from_slice(&b[..n]);
        in_blocks.push((next, be32(&b[568..]), b[573]));
        next = be64(&b[560..]);
    }
    Some(Cmd {
        input,
        outlen,
        token,
        out_ptr,
        in_ptr,
        in_blocks,
    })
}

/// Writes `output` (padded/truncated to the command's outlen) and hands the entry back with
/// `delivery` status.
pub fn complete(mem: &HostMemory, bar: &FakeBar, cmd: &Cmd, output: &[u8], delivery: u8) {
    let page = bar.cmdq_addr().unwrap();
    let mut out = output.to_vec();
    out.resize(cmd.outlen, 0);
    mem.dma_write(page + 0x20, &out[..cmd.outlen.min(16)])
        .unwrap();
    let mut next = cmd.out_ptr;
    let mut done = 16;
    while done < cmd.outlen {
        assert_ne!(next, 0, "output chain too short");
        let b = rd(mem, next, 576);
        let n = (cmd.outlen - done).min(512);
        mem.dma_write(next, &out[done..done + n]).unwrap();
        done += n;
        next = be64(&b[560..]);
    }
    mem.dma_write(page + 0x3f, &[delivery << 1]).unwrap();
}

/// A 16-byte output header with `status` and `syndrome`.
pub fn out_hdr(len: usize, status: u8, syndrome: u32) -> Vec<u8> {
    let mut v = vec![0u8; len];
    v[0] = status;
    v[4..8].copy_from_slice(&syndrome.to_be_bytes());
    v
}
