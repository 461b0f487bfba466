// SPDX-License-Identifier: GPL-2.0

//! The simulated ConnectX's command interface against a hostile driver: command queue
//! entries with arbitrary types, lengths, pointers and tokens, mailbox chains with wrong
//! block numbers, tokens and `next` pointers, command inputs built from the opcodes the model
//! implements with arbitrary fields (and object numbers it handed out, to go deep), register
//! writes anywhere in both functions' windows, and wire state changes.
//!
//! Invariants, besides "no panic": the device writes only where it may ([`Checked`]: the
//! command queue page, output mailboxes and queue buffers, never an input mailbox); every
//! rung entry the driver handed over comes back owned by software with a delivery status the
//! model documents, and a delivered command's output has a known status, with a non-zero
//! syndrome when it failed; interrupts only on the two functions' 64 vectors each; and at the
//! end a clean TEARDOWN_HCA / INIT_HCA leaves no object behind.

use rsnic_core::hwif::hw::Coherent;
use rsnic_core::sim::mlx5::{Caps, Device, Port, QueueSet, MAX_QUEUES, SCRATCH_LEN};
use rsnic_testbed::mem::HostBuf;

use crate::device::{Checked, Irqs};
use crate::Input;

type Dev = Device<Vec<Port>, Vec<QueueSet>, Vec<u8>>;

const FUNC: u32 = 0x10_0000;
const OPS: [u16; 46] = [
    0x104, 0x105, 0x10a, 0x10b, 0x100, 0x102, 0x103, 0x802, 0x803, 0x800, 0x801, 0x816, 0x817,
    0x301, 0x302, 0x400, 0x401, 0x912, 0x914, 0x904, 0x905, 0x906, 0x907, 0x908, 0x909, 0x90a,
    0x90b, 0x916, 0x917, 0x918, 0x900, 0x901, 0x902, 0x754, 0x755, 0x750, 0x805, 0x770, 0x92f,
    0x930, 0x931, 0x933, 0x934, 0x936, 0x938, 0x999,
];
const DELIVERY: [u8; 6] = [0, 0x2, 0x3, 0x4, 0x5, 0x7];
const STATUS: [u8; 11] = [0, 0x1, 0x2, 0x3, 0x4, 0x5, 0x6, 0x9, 0xf, 0x50, 0x51];

struct Harness {
    dev: Dev,
    mem: Checked,
    irqs: Irqs,
    /// Command queue page of each function.
    cmdq: [HostBuf; 2],
    /// Queue memory the hostile driver may point PAS lists and doorbell records at.
    qmem: Vec<HostBuf>,
    /// Object numbers the device answered with.
    nums: Vec<u32>,
    slot: [u32; 2],
    commands: u64,
}

/// A mailbox chain for `len` message bytes; `input` ones are read-only for the device.
fn chain(mem: &Checked, len: usize, token: u8, input: bool) -> Vec<HostBuf> {
    let n = len.saturating_sub(16).div_ceil(512).min(40);
    let name = if input {
        "input mailbox"
    } else {
        "output mailbox"
    };
    let blocks: Vec<HostBuf> = (0..n).map(|_| mem.alloc(576, !input, name)).collect();
    for (i, b) in blocks.iter().enumerate() {
        let next = blocks.get(i + 1).map_or(0, |x| x.dma_addr());
        b.write(560, &next.to_be_bytes());
        b.write(568, &(i as u32).to_be_bytes());
        b.write(573, &[token]);
    }
    blocks
}

impl Harness {
    fn put(b: &mut [u8], bit: usize, len: usize, v: u64) {
        for i in 0..len {
            let pos = bit + i;
            if pos / 8 >= b.len() {
                return;
            }
            let m = 0x80u8 >> (pos % 8);
            if (v >> (len - 1 - i)) & 1 != 0 {
                b[pos / 8] |= m;
            } else {
                b[pos / 8] &= !m;
            }
        }
    }

    /// A command input: an implemented opcode, mostly plausible lengths and fields.
    fn input(&mut self, inp: &mut Input<'_>) -> Vec<u8> {
        let sel = inp.u8();
        let op = OPS[usize::from(sel) % OPS.len()];
        let len = match inp.u8() % 11 {
            0 => 16,
            1 => 0x20,
            2 => 0xc0,
            3 => 0x110,
            4 => 0x118,
            5 => 0x200,
            6 => 0x110 + 4 * usize::from(inp.u8()),
            // Flow steering: table / group / entry commands, an entry with a destination.
            7 => 0x40,
            8 => 0x400,
            9 => 0x348,
            _ => usize::from(inp.u16() % 0x1400),
        };
        let mut b = vec![0u8; len.max(8)];
        b[0..2].copy_from_slice(&op.to_be_bytes());
        b[6..8].copy_from_slice(&u16::from(inp.u8() % 4 == 0).to_be_bytes());
        // Fields: random bit ranges, plus object numbers and queue memory at the places
        // commands read them.
        for _ in 0..inp.u8() % 8 {
            let bit = usize::from(inp.u16()) % (b.len() * 8);
            let w = 1 + usize::from(inp.u8() % 32);
            let v = inp.u32();
            Self::put(&mut b, bit, w, u64::from(v));
        }
        // (Flow steering: 0xa8 the table_id; 0xc8 and 0x228 the low 24 bits of the group
        // ids at 0xc0 and 0x220, the latter also a TIR's transport domain; 0x1a08 an entry's
        // destination.)
        for &at in &[
            0x48usize, 0xe8, 0x120, 0x148, 0x208, 0x228, 0x268, 0x2c8, 0x2e8, 0xa8, 0xc8, 0x1a08,
        ] {
            if inp.u8() % 3 == 0 {
                let n = self.nums[usize::from(inp.u8()) % self.nums.len()];
                Self::put(&mut b, at, 24, u64::from(n));
            }
        }
        if op == 0x930 && inp.bool() {
            // A table whose misses go on to the table 0xe8 may name (FWD).
            Self::put(&mut b, 0xc4, 4, 1);
        }
        if op == 0x933 && b.len() >= 0x400 && inp.bool() {
            // A rule group: outer headers, whole ethertype and protocol, and a port or an
            // IPv4 / IPv6 address (match_criteria at bit 0x200).
            Self::put(&mut b, 0x1f8, 8, 1);
            Self::put(&mut b, 0x230, 16, 0xffff);
            Self::put(&mut b, 0x280, 8, 0xff);
            match inp.u8() % 4 {
                0 => Self::put(&mut b, 0x2b0, 16, 0xffff),
                1 => Self::put(&mut b, 0x2f0, 16, 0xffff),
                2 => Self::put(&mut b, 0x360, 32, 0xffff_ffff),
                _ => {
                    for k in 0..4 {
                        Self::put(&mut b, 0x300 + 32 * k, 32, 0xffff_ffff);
                    }
                }
            }
        }
        if op == 0x936 && b.len() >= 0x348 && inp.bool() {
            // An entry forwarding to one TIR (FWD_DEST, one destination of type TIR).
            Self::put(&mut b, 0x270, 16, 4);
            Self::put(&mut b, 0x288, 24, 1);
            Self::put(&mut b, 0x1a00, 8, 2);
        }
        if inp.bool() && b.len() >= 0x118 {
            let q = &self.qmem[usize::from(inp.u8()) % self.qmem.len()];
            let off = u64::from(inp.u16() % 4) * 4096;
            b[0x110..0x118].copy_from_slice(&(q.dma_addr() + off).to_be_bytes());
            if b.len() >= 0x120 {
                b[0x118..0x120].copy_from_slice(&(q.dma_addr() + off + 4096).to_be_bytes());
            }
            Self::put(&mut b, 0xe3, 5, u64::from(inp.u8() % 8)); // log_eq/cq_size
            Self::put(&mut b, 0x39b, 5, u64::from(inp.u8() % 8)); // log_wq_sz
            let dbr = q.dma_addr() + 4 * 4096;
            b[0x48..0x50].copy_from_slice(&dbr.to_be_bytes()); // cq dbr_addr
            b[0x60..0x68].copy_from_slice(&dbr.to_be_bytes()); // wq dbr_addr
        }
        b
    }

    fn command(&mut self, inp: &mut Input<'_>) {
        let f = usize::from(inp.u8() & 1);
        let input = self.input(inp);
        let flags = inp.u8();
        let outlen = match flags & 3 {
            0 => 16,
            1 => 0x110,
            2 => 0x1010,
            _ => usize::from(inp.u16() % 0x1400),
        };
        let token = inp.u8();
        let inb = chain(&self.mem, input.len(), token, true);
        let outb = chain(&self.mem, outlen, token, false);
        for (i, b) in inb.iter().enumerate() {
            let from = 16 + i * 512;
            let to = input.len().min(from + 512);
            if from < to {
                b.write(0, &input[from..to]);
            }
        }
        // Corruptions of the chain and the entry.
        let corrupt = inp.u8();
        if corrupt & 0x01 != 0 {
            if let Some(b) = inb.get(usize::from(inp.u8()) % inb.len().max(1)) {
                b.write(573, &[inp.u8()]);
            }
        }
        if corrupt & 0x02 != 0 {
            if let Some(b) = outb.get(usize::from(inp.u8()) % outb.len().max(1)) {
                b.write(568, &inp.u32().to_be_bytes());
            }
        }
        if corrupt & 0x04 != 0 {
            if let Some(b) = inb.first() {
                // A `next` pointing at the command queue or a queue buffer.
                let t = if inp.bool() {
                    self.cmdq[f].dma_addr()
                } else {
                    self.qmem[0].dma_addr() + u64::from(inp.u16())
                };
                b.write(560, &t.to_be_bytes());
            }
        }
        let mut e = [0u8; 64];
        e[0] = if corrupt & 0x08 != 0 { inp.u8() } else { 7 };
        let inlen = if corrupt & 0x10 != 0 {
            inp.u32()
        } else {
            input.len() as u32
        };
        e[4..8].copy_from_slice(&inlen.to_be_bytes());
        let in_ptr = inb.first().map_or(0, |b| b.dma_addr());
        let in_ptr = if corrupt & 0x20 != 0 {
            in_ptr.wrapping_add(u64::from(inp.u8()))
        } else {
            in_ptr
        };
        e[8..16].copy_from_slice(&in_ptr.to_be_bytes());
        let k = input.len().min(16);
        e[16..16 + k].copy_from_slice(&input[..k]);
        let out_ptr = outb.first().map_or(0, |b| b.dma_addr());
        e[48..56].copy_from_slice(&out_ptr.to_be_bytes());
        let outlen = if corrupt & 0x40 != 0 {
            inp.u32()
        } else {
            outlen as u32
        };
        e[56..60].copy_from_slice(&outlen.to_be_bytes());
        e[60] = token;
        let owned = corrupt & 0x80 == 0 || inp.bool();
        e[63] = u8::from(owned);
        let slot = self.slot[f];
        self.slot[f] = (slot + 1) % 32;
        let q = self.cmdq[f].clone();
        q.write(slot as usize * 64, &e);
        let bits = if inp.u8() % 8 == 0 {
            inp.u32() | (1 << slot)
        } else {
            1 << slot
        };
        self.dev.mmio_write32(f as u32 * FUNC + 0x18, bits);
        self.dev.process(&self.mem, &mut self.irqs);
        let mut got = [0u8; 64];
        q.read(slot as usize * 64, &mut got);
        if !owned {
            assert_eq!(got, e, "an entry software owns is left alone");
            return;
        }
        assert_eq!(got[63] & 1, 0, "ownership returned");
        let d = got[63] >> 1;
        if e[0] != 7 {
            assert_eq!(d, 0x10, "bad type");
            return;
        }
        assert!(DELIVERY.contains(&d) || d == 0x8, "delivery status {d:#x}");
        if d != 0 {
            return;
        }
        self.commands += 1;
        let st = got[32];
        let synd = u32::from_be_bytes([got[36], got[37], got[38], got[39]]);
        assert!(STATUS.contains(&st), "status {st:#x}");
        assert_eq!(st != 0, synd != 0, "a failure names its check");
        if st == 0 {
            let n = u32::from_be_bytes([0, got[41], got[42], got[43]]);
            if n != 0 {
                self.nums.push(n);
            }
        }
    }
}

impl crate::Harness for Harness {
    const MAX_OPS: usize = 64;

    fn new(inp: &mut Input<'_>) -> Self {
        let caps = Caps {
            mpwqe: inp.bool(),
            min_inline: inp.u8() % 4,
            cqe_compression: inp.bool(),
            ..Caps::FULL
        };
        let ports: Vec<Port> = (0..2).map(|_| Port::new()).collect();
        let dev = Device::with_caps(
            ports,
            vec![QueueSet::EMPTY; 2 * MAX_QUEUES],
            vec![0u8; SCRATCH_LEN],
            caps,
        )
        .expect("device");
        let mem = Checked::default();
        let cmdq = [
            mem.alloc(4096, true, "command queue"),
            mem.alloc(4096, true, "command queue"),
        ];
        let qmem = (0..3)
            .map(|_| mem.alloc(5 * 4096, true, "queue memory"))
            .collect();
        let mut h = Self {
            dev,
            mem,
            irqs: Irqs::new(2 * 64),
            cmdq,
            qmem,
            nums: vec![0, 8, 0x40],
            slot: [0, 0],
            commands: 0,
        };
        for f in 0..2u32 {
            let a = h.cmdq[f as usize].dma_addr();
            h.dev.mmio_write32(f * FUNC + 0x10, (a >> 32) as u32);
            h.dev.mmio_write32(f * FUNC + 0x14, a as u32);
        }
        h
    }

    fn op(&mut self, inp: &mut Input<'_>) {
        match inp.u8() % 8 {
            0..=4 => self.command(inp),
            5 => {
                // Register traffic anywhere in the two windows (not the command queue
                // address: the harness keeps that).
                let off = inp.u32() % (2 * FUNC);
                if off % FUNC == 0x10 || off % FUNC == 0x14 {
                    return;
                }
                match inp.u8() % 3 {
                    0 => self.dev.mmio_write32(off, inp.u32()),
                    1 => {
                        let mut b = [0u8; 8];
                        inp.fill(&mut b);
                        self.dev.mmio_write64(off, b);
                    }
                    _ => {
                        let _ = self.dev.mmio_read32(off);
                    }
                }
                self.dev.process(&self.mem, &mut self.irqs);
            }
            6 => {
                let p = usize::from(inp.u8() & 1);
                self.dev.set_link(p, inp.bool()).expect("port");
                self.dev.process(&self.mem, &mut self.irqs);
            }
            _ => {
                let p = usize::from(inp.u8() & 1);
                let op = if inp.bool() {
                    Some(OPS[usize::from(inp.u8()) % OPS.len()])
                } else {
                    None
                };
                self.dev.fail_command(p, op).expect("port");
            }
        }
    }

    fn finish(mut self) {
        // Both functions: back to a clean, initialized state, and nothing survived.
        for f in 0..2usize {
            self.dev.fail_command(f, None).expect("port");
            let a = self.cmdq[f].dma_addr();
            self.dev
                .mmio_write32(f as u32 * FUNC + 0x10, (a >> 32) as u32);
            self.dev.mmio_write32(f as u32 * FUNC + 0x14, a as u32);
            // Command `op` on object `num` with `inlen` bytes of input (those past the inline
            // 16 in the mailboxes at `in_ptr`) and 16 of output, through entry 0: the entry
            // as the device left it.
            let exec = |h: &mut Self, op: u16, num: u32, inlen: u32, in_ptr: u64| {
                let mut e = [0u8; 64];
                e[0] = 7;
                e[4..8].copy_from_slice(&inlen.to_be_bytes());
                e[8..16].copy_from_slice(&in_ptr.to_be_bytes());
                e[16..18].copy_from_slice(&op.to_be_bytes());
                e[25..28].copy_from_slice(&num.to_be_bytes()[1..]);
                e[56..60].copy_from_slice(&16u32.to_be_bytes());
                e[60] = 1;
                e[63] = 1;
                h.cmdq[f].write(0, &e);
                h.dev.mmio_write32(f as u32 * FUNC + 0x18, 1);
                h.dev.process(&h.mem, &mut h.irqs);
                let mut got = [0u8; 64];
                h.cmdq[f].read(0, &mut got);
                got
            };
            let run = |h: &mut Self, op: u16, num: u32| -> u8 {
                let got = exec(h, op, num, 16, 0);
                assert_eq!(got[63], 0, "delivered");
                got[32]
            };
            run(&mut self, 0x103, 0); // TEARDOWN_HCA (any state)
            run(&mut self, 0x105, 0); // DISABLE_HCA
            assert_eq!(run(&mut self, 0x104, 0), 0, "ENABLE_HCA");
            // INIT_HCA needs 0x20 bytes of input: inline 16 + one mailbox.
            let inb = chain(&self.mem, 0x20, 1, true);
            let got = exec(&mut self, 0x102, 0, 0x20, inb[0].dma_addr());
            assert_eq!((got[63], got[32]), (0, 0), "INIT_HCA");
            for n in self.nums.clone() {
                for op in [0x401u16, 0x906, 0x90a, 0x914, 0x918, 0x902] {
                    assert_eq!(
                        run(&mut self, op, n),
                        0x5,
                        "object {n:#x} survived teardown"
                    );
                }
            }
        }
        let _ = self.commands;
    }
}

/// One fuzz input.
pub fn run(data: &[u8]) {
    crate::drive::<Harness>(data);
}
