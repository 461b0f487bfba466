// SPDX-License-Identifier: GPL-2.0

//! The device's half of the shared memory channel (the driver's is `hwif/mana/smc.rs`): the
//! SMC window's registers and the handshake that establishes the hardware channel (the
//! HWC's EQ, CQ, RQ and SQ addresses, then the init EQEs with their ids). Upstream
//! shm_channel.c (`mana_smc_setup_hwc`, `mana_smc_teardown_hwc`) and hw_channel.c
//! (`mana_hwc_init_event_handler`).

use super::hwc::{Ring, WqRing, HWC_QSIZE};
use super::{Device, Port, QueueSet, MAX_MSIX};
use crate::hwif::bytes::le16;
use crate::hwif::hw::{BusMemory, InterruptSink};
use core::ops::DerefMut;

/// BAR0 offset of the SMC window (register 0x18 reads it).
pub const SMC_BASE: u32 = 0x100;

impl<P, Q, B> Device<P, Q, B>
where
    P: DerefMut<Target = [Port]>,
    Q: DerefMut<Target = [QueueSet]>,
    B: DerefMut<Target = [u8]>,
{
    /// A 32-bit write into the SMC window; the last dword hands it to the device.
    pub(super) fn smc_write(&mut self, off: u32, v: u32) -> bool {
        let Some(rel) = off.checked_sub(SMC_BASE) else {
            return false;
        };
        let i = (rel / 4) as usize;
        if rel % 4 != 0 || i >= 8 {
            return false;
        }
        if self.hwc.smc_busy {
            self.hwc.counters.smc_busy_writes += 1;
            return true;
        }
        self.hwc.smc[i] = v;
        if i == 7 {
            self.hwc.smc_busy = true;
        }
        true
    }

    /// A 32-bit read of the SMC window: the last dword carries the busy bit.
    pub(super) fn smc_read(&self, off: u32) -> Option<u32> {
        let rel = off.checked_sub(SMC_BASE)?;
        let i = (rel / 4) as usize;
        if rel % 4 != 0 || i >= 8 {
            return None;
        }
        let v = self.hwc.smc[i];
        Some(if i == 7 && self.hwc.smc_busy {
            v | 1 << 31
        } else {
            v
        })
    }

    pub(super) fn smc_exec<M: BusMemory, I: InterruptSink>(&mut self, mem: &M, irq: &mut I) {
        let w = self.hwc.smc;
        let hdr = w[7];
        let ty = hdr & 7;
        let ver = (hdr >> 3) & 7;
        let dir = (hdr >> 7) & 1;
        let reset_vf = (hdr >> 24) & 1;
        self.hwc.counters.smc_msgs += 1;
        let status: u32 = if ver != 0 || dir != 0 || reset_vf != 0 {
            1
        } else {
            match ty {
                1 if !self.hwc.up => {
                    let mut b = [0u8; 32];
                    for (i, d) in w.iter().enumerate() {
                        b[4 * i..4 * i + 4].copy_from_slice(&d.to_le_bytes());
                    }
                    let high = le16(&b, 24);
                    let msix = le16(&b, 26);
                    let mut a = [0u64; 4];
                    for (i, x) in a.iter_mut().enumerate() {
                        let mut l = [0u8; 8];
                        l[..6].copy_from_slice(&b[6 * i..6 * i + 6]);
                        let pfn =
                            u64::from_le_bytes(l) | (u64::from((high >> (4 * i)) & 0xf) << 48);
                        *x = pfn << 12;
                    }
                    if u32::from(msix) >= MAX_MSIX {
                        2
                    } else {
                        self.hwc_establish(a, msix);
                        0
                    }
                }
                2 if self.hwc.up => {
                    self.hwc.up = false;
                    0
                }
                _ => 3,
            }
        };
        if status != 0 {
            self.hwc.counters.smc_errors += 1;
        }
        // Response: same type and version, direction 1, the status, window back to the VF.
        self.hwc.smc[7] = ty | (ver << 3) | (1 << 7) | (status << 8);
        self.hwc.smc_busy = false;
        if status == 0 && ty == 1 {
            self.hwc.init_pending = true;
            self.hwc_init_events(mem, irq);
        }
    }

    fn hwc_establish(&mut self, a: [u64; 4], msix: u16) {
        // A driver taking the device (the HWC is its first step) finds every counter at 0,
        // as after the reset a VF gets when its driver is bound. The in-kernel host makes a
        // new device per load anyway; a device in its own process (the PCI transport)
        // outlives the driver.
        for p in self.ports.iter_mut() {
            p.counters = super::PortCounters::default();
        }
        let h = &mut self.hwc;
        h.up = true;
        h.msix = msix;
        // The HWC CQ and EQ start armed: the driver learns their ids from the init events.
        h.eq = Ring {
            buf: a[0],
            num: HWC_QSIZE / 16,
            pi: 0,
            armed: true,
            // Armed at the consumer's start (`head = num`): nothing pending yet.
            arm_tail: HWC_QSIZE / 16,
        };
        h.cq = Ring {
            buf: a[1],
            num: HWC_QSIZE / 64,
            pi: 0,
            armed: true,
            arm_tail: HWC_QSIZE / 64,
        };
        h.rq = WqRing {
            buf: a[2],
            cons: 0,
            tail: 0,
        };
        h.sq = WqRing {
            buf: a[3],
            cons: 0,
            tail: 0,
        };
        h.sq_error = false;
    }
}
