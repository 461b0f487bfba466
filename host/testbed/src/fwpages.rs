//! The ConnectX bring-up and teardown as rsnic's kernel glue (`family/mlx5/ctrl.rs`) runs
//! them, on the host: [`hwif::mlx5::cmd::seq`](rsnic_core::hwif::mlx5::cmd::seq) driven to the
//! end with the device run between polls, the firmware's pages given from host memory when
//! the sequence asks ([`HostPages`], MANAGE_PAGES GIVE in batches) and taken back after
//! TEARDOWN_HCA (TAKE until the firmware holds none).

use crate::bus::{RegisterBus, Testbed};
use crate::mem::HostBuf;
use rsnic_core::hwif::hw::{Barriers, Coherent, Mmio};
use rsnic_core::hwif::mlx5::cmd::pages::{self, BATCH_PAGES, FW_PAGE_SIZE, MAX_FW_PAGES};
use rsnic_core::hwif::mlx5::cmd::seq::{Bringup, Progress, Resources, Teardown, SEQ_OUT_LEN};
use rsnic_core::hwif::mlx5::cmd::{CmdError, CmdErrorKind, CmdPoll, CmdQueue};

/// One function's BAR0 window, as the driver of that function sees it.
#[derive(Clone)]
pub struct FuncBar {
    bus: RegisterBus,
    base: u32,
}

impl FuncBar {
    /// The window of function `port`.
    pub fn new(tb: &Testbed, port: usize) -> Self {
        Self {
            bus: tb.bus(),
            base: port as u32 * rsnic_core::sim::mlx5::FUNC_BAR_SIZE,
        }
    }
}

impl Mmio for FuncBar {
    fn write64(&self, offset: u32, bytes: [u8; 8]) {
        self.bus.write64(self.base + offset, bytes);
    }

    fn write32(&self, offset: u32, value: u32) {
        self.bus.write32(self.base + offset, value);
    }

    fn read32(&self, offset: u32) -> u32 {
        self.bus.read32(self.base + offset)
    }
}

crate::no_barriers!(FuncBar);

/// Runs one command to completion on `q`, letting the device run between polls.
pub fn exec<F: Mmio + Barriers>(
    tb: &mut Testbed,
    q: &mut CmdQueue<HostBuf>,
    f: &F,
    input: &[u8],
    out: &mut [u8],
) -> Result<usize, CmdError> {
    q.post(input, out.len(), f, f)?;
    for _ in 0..8 {
        if let CmdPoll::Done(n) = q.poll(f, out)? {
            return Ok(n);
        }
        tb.step();
    }
    panic!("the device never completed the command");
}

/// The pages the firmware holds, as the driver gave them, and what came back.
#[derive(Default)]
pub struct HostPages {
    /// Pages given and not returned.
    pub held: Vec<HostBuf>,
    /// Pages given in all.
    pub given: usize,
    /// Pages returned in all.
    pub returned: usize,
    /// Returned addresses the driver never gave.
    pub strangers: usize,
}

impl HostPages {
    /// Gives `n` pages (MANAGE_PAGES GIVE, batches of [`BATCH_PAGES`]); more than
    /// [`MAX_FW_PAGES`] in all is refused as the kernel glue refuses it.
    pub fn give<F: Mmio + Barriers>(
        &mut self,
        tb: &mut Testbed,
        q: &mut CmdQueue<HostBuf>,
        f: &F,
        n: u32,
    ) -> Result<(), CmdError> {
        if n as usize > (MAX_FW_PAGES as usize).saturating_sub(self.held.len()) {
            return Err(CmdError {
                opcode: 0x108,
                op_mod: pages::GIVE,
                kind: CmdErrorKind::TooManyPages {
                    asked: n,
                    cap: MAX_FW_PAGES,
                },
            });
        }
        let mut left = n;
        while left > 0 {
            let k = left.min(BATCH_PAGES) as usize;
            let batch: Vec<HostBuf> = (0..k).map(|_| tb.mem.alloc(FW_PAGE_SIZE)).collect();
            let addrs: Vec<u64> = batch.iter().map(|b| b.dma_addr()).collect();
            let mut inp = vec![0u8; pages::give_len(k)];
            let len = pages::give_pages(&mut inp, &addrs).expect("a GIVE fits");
            exec(tb, q, f, &inp[..len], &mut [0u8; 16])?;
            self.given += k;
            self.held.extend(batch);
            left -= k as u32;
        }
        Ok(())
    }

    /// Takes back up to `n` pages (one TAKE); returns how many came back.
    pub fn take<F: Mmio + Barriers>(
        &mut self,
        tb: &mut Testbed,
        q: &mut CmdQueue<HostBuf>,
        f: &F,
        n: u32,
    ) -> Result<u32, CmdError> {
        let k = n.min(BATCH_PAGES);
        let mut inp = [0u8; 16];
        let len = pages::take_pages(&mut inp, k).expect("a TAKE fits");
        let mut out = vec![0u8; pages::take_out_len(k as usize)];
        exec(tb, q, f, &inp[..len], &mut out)?;
        let t = pages::parse_take(&out, k).expect("a well-formed TAKE answer");
        for a in t.iter() {
            match self.held.iter().position(|b| b.dma_addr() == a) {
                Some(i) => {
                    self.held.swap_remove(i);
                    self.returned += 1;
                }
                None => self.strangers += 1,
            }
        }
        Ok(t.len() as u32)
    }

    /// `mlx5_reclaim_startup_pages`: TAKE until the firmware holds none (or returns none).
    pub fn reclaim<F: Mmio + Barriers>(
        &mut self,
        tb: &mut Testbed,
        q: &mut CmdQueue<HostBuf>,
        f: &F,
    ) -> Result<(), CmdError> {
        while !self.held.is_empty() {
            if self.take(tb, q, f, self.held.len() as u32)? == 0 {
                break;
            }
        }
        Ok(())
    }
}

/// Runs a bring-up to its end (or first error), giving the pages it asks for.
pub fn bring_up<F: Mmio + Barriers>(
    tb: &mut Testbed,
    q: &mut CmdQueue<HostBuf>,
    f: &F,
    fw: &mut HostPages,
) -> (Bringup, Result<(), CmdError>) {
    let mut b = Bringup::new();
    let mut out = vec![0u8; SEQ_OUT_LEN];
    for _ in 0..400 {
        match b.poll(q, f, f, &mut out) {
            Ok(Progress::Done) => return (b, Ok(())),
            Ok(Progress::Pending) => {
                tb.step();
            }
            Ok(Progress::GivePages(n)) => match fw.give(tb, q, f, n) {
                Ok(()) => b.pages_given(),
                Err(e) => return (b, Err(e)),
            },
            Ok(Progress::Reclaim) => panic!("a bring-up never reclaims"),
            Err(e) => return (b, Err(e)),
        }
    }
    panic!("bring-up did not finish");
}

/// Runs a teardown of what `res` records to its end, taking the pages back after
/// TEARDOWN_HCA.
pub fn tear_down<F: Mmio + Barriers>(
    tb: &mut Testbed,
    q: &mut CmdQueue<HostBuf>,
    f: &F,
    res: &Resources,
    fw: &mut HostPages,
) -> Teardown {
    let mut t = Teardown::new(res);
    let mut out = vec![0u8; 64];
    for _ in 0..400 {
        match t.poll(q, f, f, &mut out) {
            Progress::Done => return t,
            Progress::Reclaim => {
                fw.reclaim(tb, q, f).expect("the pages come back");
                t.reclaimed();
            }
            _ => {
                tb.step();
            }
        }
    }
    panic!("teardown did not finish");
}
