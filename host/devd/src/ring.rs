//! BAR2: the identity block and the register ring of `dp::xport`, over the shared memfd.
//!
//! [`Bar2`] is devd's side: it sets BAR2 up ([`Bar2::new`]) and consumes the ring
//! ([`Bar2::drain`]) strictly in order, answering READ32s in `read_value`/`read_done` and
//! publishing `head` with release ordering. [`GuestRing`] is the guest's side of the same
//! algorithm (claim `tail` by CAS when the slot's `seq` equals the position), for tests and
//! tools on the host: the guest driver implements it over its memremap of BAR2.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use rsnic_core::dp::xport::{
    self, Identity, Status, CTRL_HEAD, CTRL_READ_DONE, CTRL_READ_TICKET, CTRL_READ_VALUE,
    CTRL_TAIL, IDENTITY_LEN, ID_STATUS, OP_READ32, OP_WRITE32, OP_WRITE64, READ_DONE_NONE,
    RING_END, RING_ENTRIES, SLOT_OP, SLOT_REG, SLOT_SEQ, SLOT_VALUE,
};

use crate::sys::Mapping;

/// One ring entry, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// A 32-bit register write.
    Write32 {
        /// Register offset.
        reg: u32,
        /// Value written.
        value: u32,
    },
    /// A 64-bit register write, its bytes in memory (bus) order.
    Write64 {
        /// Register offset.
        reg: u32,
        /// The 8 bytes written.
        bytes: [u8; 8],
    },
    /// A 32-bit register read.
    Read32 {
        /// Register offset.
        reg: u32,
    },
    /// An entry with an unknown op (skipped and counted).
    Bad {
        /// Register offset.
        reg: u32,
        /// The op.
        op: u32,
    },
}

/// The u64 control field or slot field at `off` (inside the ring area: [`Bar2::new`] and
/// [`GuestRing::new`] checked the mapping covers it, and the offsets are aligned).
fn a64(map: &Mapping, off: usize) -> Option<&AtomicU64> {
    map.u64_at(off)
}

fn a32(map: &Mapping, off: usize) -> Option<&AtomicU32> {
    map.u32_at(off)
}

/// devd's side of BAR2.
pub struct Bar2 {
    map: Mapping,
    /// The next position to apply (devd's own copy: the shared `head` is only published).
    head: u64,
    /// Entries with an unknown op.
    bad_ops: u64,
    /// Entries applied.
    applied: u64,
}

impl Bar2 {
    /// Sets up BAR2 in `map` (at least [`RING_END`] bytes) for a device `id`: the identity
    /// block with status not-ready, every slot free for lap 0, `tail` = `head` = 0,
    /// `read_done` = [`READ_DONE_NONE`]. [`Bar2::set_status`] makes it ready.
    pub fn new(map: Mapping, id: Identity) -> Result<Self, String> {
        if map.len() < RING_END {
            return Err(format!(
                "BAR2 mapping of {} bytes is smaller than the ring's end {:#x}",
                map.len(),
                RING_END
            ));
        }
        let mut block = [0u8; IDENTITY_LEN];
        Identity {
            status: Status::NotReady,
            ..id
        }
        .encode(&mut block)
        .map_err(|e| format!("identity block: {e}"))?;
        if !map.write(xport::IDENTITY_OFFSET, &block) {
            return Err("identity block does not fit BAR2".into());
        }
        let init = || -> Option<()> {
            for i in 0..RING_ENTRIES as u64 {
                a64(&map, xport::slot_offset(i) + SLOT_SEQ)?.store(i, Ordering::Relaxed);
            }
            a64(&map, CTRL_TAIL)?.store(0, Ordering::Relaxed);
            a64(&map, CTRL_HEAD)?.store(0, Ordering::Relaxed);
            a64(&map, CTRL_READ_TICKET)?.store(0, Ordering::Relaxed);
            a32(&map, CTRL_READ_VALUE)?.store(0, Ordering::Relaxed);
            a64(&map, CTRL_READ_DONE)?.store(READ_DONE_NONE, Ordering::Release);
            Some(())
        };
        init().ok_or("BAR2 ring fields out of the mapping")?;
        Ok(Self {
            map,
            head: 0,
            bad_ops: 0,
            applied: 0,
        })
    }

    /// Publishes `status` in the identity block (release: everything set up before is
    /// visible to a guest that sees it).
    pub fn set_status(&self, status: Status) {
        if let Some(s) = a32(&self.map, ID_STATUS) {
            s.store(status.code().to_le(), Ordering::Release);
        }
    }

    /// The mapping (tests look at BAR2 through it, as the guest would).
    pub fn mapping(&self) -> &Mapping {
        &self.map
    }

    /// Entries with an unknown op so far.
    pub fn bad_ops(&self) -> u64 {
        self.bad_ops
    }

    /// Entries applied so far.
    pub fn applied(&self) -> u64 {
        self.applied
    }

    /// Applies the published entries in ring order, at most [`RING_ENTRIES`] of them, up to
    /// the first one not yet published: `apply` gets each entry and returns the answer of a
    /// READ32 (ignored for the others), which is stored in `read_value` before `read_done`
    /// names the entry's position (release). Each applied slot is freed for the next lap and
    /// `head` published (release). Returns the number of entries applied.
    pub fn drain(&mut self, mut apply: impl FnMut(Entry) -> u32) -> usize {
        let mut n = 0;
        while n < RING_ENTRIES {
            let pos = self.head;
            let off = xport::slot_offset(pos);
            let (Some(seq), Some(reg), Some(op), Some(val)) = (
                a64(&self.map, off + SLOT_SEQ),
                a32(&self.map, off + SLOT_REG),
                a32(&self.map, off + SLOT_OP),
                a64(&self.map, off + SLOT_VALUE),
            ) else {
                break;
            };
            if u64::from_le(seq.load(Ordering::Acquire)) != pos.wrapping_add(1) {
                break;
            }
            let reg = u32::from_le(reg.load(Ordering::Relaxed));
            let op = u32::from_le(op.load(Ordering::Relaxed));
            let val = u64::from_le(val.load(Ordering::Relaxed));
            let entry = match op {
                OP_WRITE32 => Entry::Write32 {
                    reg,
                    value: val as u32,
                },
                OP_WRITE64 => Entry::Write64 {
                    reg,
                    bytes: val.to_le_bytes(),
                },
                OP_READ32 => Entry::Read32 { reg },
                op => Entry::Bad { reg, op },
            };
            if let Entry::Bad { .. } = entry {
                self.bad_ops += 1;
            }
            let answer = apply(entry);
            if let Entry::Read32 { .. } = entry {
                if let (Some(v), Some(done)) = (
                    a32(&self.map, CTRL_READ_VALUE),
                    a64(&self.map, CTRL_READ_DONE),
                ) {
                    v.store(answer.to_le(), Ordering::Relaxed);
                    done.store(pos.to_le(), Ordering::Release);
                }
            }
            seq.store(
                pos.wrapping_add(RING_ENTRIES as u64).to_le(),
                Ordering::Release,
            );
            self.head = pos.wrapping_add(1);
            if let Some(h) = a64(&self.map, CTRL_HEAD) {
                h.store(self.head.to_le(), Ordering::Release);
            }
            self.applied += 1;
            n += 1;
        }
        n
    }
}

/// The guest's side of the ring over a mapping of BAR2 (tests and tools).
pub struct GuestRing<'a> {
    map: &'a Mapping,
}

impl<'a> GuestRing<'a> {
    /// The ring in `map` (BAR2, at least [`RING_END`] bytes).
    pub fn new(map: &'a Mapping) -> Option<Self> {
        (map.len() >= RING_END).then_some(Self { map })
    }

    /// Appends one entry (`op`, `reg`, `value`); returns its ring position, or `None` when
    /// the ring is full.
    pub fn push(&self, op: u32, reg: u32, value: u64) -> Option<u64> {
        let tail = a64(self.map, CTRL_TAIL)?;
        let mut pos = u64::from_le(tail.load(Ordering::Relaxed));
        loop {
            let off = xport::slot_offset(pos);
            let seq = a64(self.map, off + SLOT_SEQ)?;
            let s = u64::from_le(seq.load(Ordering::Acquire));
            if s == pos {
                match tail.compare_exchange_weak(
                    pos.to_le(),
                    pos.wrapping_add(1).to_le(),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        a32(self.map, off + SLOT_REG)?.store(reg.to_le(), Ordering::Relaxed);
                        a32(self.map, off + SLOT_OP)?.store(op.to_le(), Ordering::Relaxed);
                        a64(self.map, off + SLOT_VALUE)?.store(value.to_le(), Ordering::Relaxed);
                        seq.store(pos.wrapping_add(1).to_le(), Ordering::Release);
                        return Some(pos);
                    }
                    Err(p) => pos = u64::from_le(p),
                }
            } else if (s.wrapping_sub(pos) as i64) < 0 {
                return None;
            } else {
                pos = u64::from_le(tail.load(Ordering::Relaxed));
            }
        }
    }

    /// Appends a READ32 of `reg` and records its position in `read_ticket` (informational:
    /// devd answers by position through `read_done`); returns the position.
    pub fn post_read(&self, reg: u32) -> Option<u64> {
        let pos = self.push(OP_READ32, reg, 0)?;
        a64(self.map, CTRL_READ_TICKET)?.store(pos.to_le(), Ordering::Relaxed);
        Some(pos)
    }

    /// The answer of the READ32 at `pos`, if devd has given it.
    pub fn read_answer(&self, pos: u64) -> Option<u32> {
        let done = u64::from_le(a64(self.map, CTRL_READ_DONE)?.load(Ordering::Acquire));
        (done == pos)
            .then(|| {
                a32(self.map, CTRL_READ_VALUE).map(|v| u32::from_le(v.load(Ordering::Relaxed)))
            })
            .flatten()
    }

    /// devd's published `head`.
    pub fn head(&self) -> Option<u64> {
        a64(self.map, CTRL_HEAD).map(|h| u64::from_le(h.load(Ordering::Acquire)))
    }
}
