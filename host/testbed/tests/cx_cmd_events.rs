//! Events-mode command completion (cmd.c `mlx5_cmd_use_events`, `mlx5_cmd_comp_handler`,
//! `wait_func`) of the driver's command interface (`hwif::mlx5::cmd::queue`,
//! `hwif::mlx5::eq`) against the simulated ConnectX (`sim::mlx5`), in the order of the
//! kernel glue's bring-up (`family/mlx5/ctrl.rs`): main.c's sequence in polling mode, the
//! command EQ (command events only, vector 0) created by a polled CREATE_EQ, events mode,
//! then every command completed by its EQE (the vector raised, the EQE naming entry 0, the
//! ownership bit checked); polling mode again before the command EQ's DESTROY_EQ and the
//! teardown. A lost interrupt and a lost EQE are recovered by the bounded poll that a wait
//! without an EQE ends in; a forged EQE is not trusted.

use rsnic_core::hwif::hw::Coherent;
use rsnic_core::hwif::mlx5::cmd::queue::{CmdMode, EventNote, CMD_ENTRY_BIT};
use rsnic_core::hwif::mlx5::cmd::res::{self, CreateEq, EVENT_TYPE_CMD, EVENT_TYPE_PORT_CHANGE};
use rsnic_core::hwif::mlx5::cmd::seq::Resources;
use rsnic_core::hwif::mlx5::cmd::{CmdError, CmdPoll, CmdQueue, Pas};
use rsnic_core::hwif::mlx5::eq::{Eq, EQ_POLLING_BUDGET};
use rsnic_core::sim::mlx5::Fault;
use rsnic_testbed::bus::Testbed;
use rsnic_testbed::fwpages::{self, FuncBar, HostPages};
use rsnic_testbed::mem::HostBuf;

/// log2 of the command EQ's EQEs (ctrl.rs's `CMD_EQ_LOG`).
const CMD_EQ_LOG: u8 = 5;

/// The driver of function 0 as the kernel glue drives it.
struct Driver {
    f: FuncBar,
    q: CmdQueue<HostBuf>,
    fw: HostPages,
    /// The command EQ (from its CREATE_EQ to its DESTROY_EQ).
    cmd_eq: Option<Eq<HostBuf>>,
    /// Interrupts of the command EQ's vector the handler served.
    irqs: u32,
    /// Waits that ended without an EQE and went to the EQ and the ownership bit.
    fallbacks: u32,
}

impl Driver {
    fn new(tb: &Testbed) -> Self {
        Self {
            f: FuncBar::new(tb, 0),
            q: CmdQueue::new(tb.mem.alloc(4096), tb.mem.alloc(16 * 1024)).unwrap(),
            fw: HostPages::default(),
            cmd_eq: None,
            irqs: 0,
            fallbacks: 0,
        }
    }

    /// The command EQ's handler (ctrl.rs `CmdEvents::poll_eq`): whether an EQE named the
    /// entry.
    fn poll_cmd_eq(&mut self) -> bool {
        match self.cmd_eq.as_mut() {
            Some(eq) => {
                eq.poll_cmd(EQ_POLLING_BUDGET, CMD_ENTRY_BIT, &self.f, &self.f)
                    .entry
            }
            None => false,
        }
    }

    /// ctrl.rs `run_cmd`: in polling mode the ownership bit between device runs; in events
    /// mode a wait for the command EQ's interrupt (a device run that raised vector 0),
    /// whose EQE wakes the waiter, and after a wait without one (a device run that raised
    /// nothing) the EQ polled as `mlx5_cmd_eq_recover` does; the ownership bit decides.
    fn exec(&mut self, tb: &mut Testbed, input: &[u8], out: &mut [u8]) -> Result<usize, CmdError> {
        self.q.post(input, out.len(), &self.f, &self.f)?;
        for _ in 0..8 {
            if self.q.mode() == CmdMode::Polling {
                if let CmdPoll::Done(n) = self.q.poll(&self.f, out)? {
                    return Ok(n);
                }
                tb.step();
                continue;
            }
            tb.step();
            let raised = tb.take_irqs().contains(&0);
            if raised {
                self.irqs += 1;
            } else {
                self.fallbacks += 1;
            }
            let eqe = self.poll_cmd_eq();
            if let CmdPoll::Done(n) = self.q.poll_event(eqe, &self.f, out).0? {
                return Ok(n);
            }
        }
        panic!("the command never completed");
    }

    /// A short command `build` writes; must succeed. Its output.
    fn exec_short(
        &mut self,
        tb: &mut Testbed,
        build: impl FnOnce(&mut [u8]) -> usize,
    ) -> [u8; res::SHORT_LEN] {
        let mut inp = vec![0u8; 4096];
        let n = build(&mut inp);
        let mut out = [0u8; res::SHORT_LEN];
        self.exec(tb, &inp[..n], &mut out).unwrap();
        out
    }

    /// CREATE_EQ of 2^`log` EQEs on vector 0 for `events`, its ring initialised first
    /// (init_eq_buf); armed.
    fn create_eq(&mut self, tb: &mut Testbed, uar: u32, log: u8, events: u64) -> Eq<HostBuf> {
        let ring = tb.mem.alloc_eq(log);
        let p = CreateEq {
            log_eq_size: log,
            uar_page: uar,
            intr: 0,
            event_bitmask: events,
            pas: Pas::contiguous(ring.dma_addr(), ring.size()),
        };
        let out = self.exec_short(tb, |b| {
            res::create_eq(&mut b[..res::create_eq_len(&p)], &p).unwrap()
        });
        let eqn = res::parse_create_eq(&out).unwrap();
        let mut eq = Eq::created(ring, log, eqn, uar * 4096).unwrap();
        eq.update_ci(true, &self.f, &self.f);
        eq
    }

    /// ctrl.rs's bring-up up to events mode: main.c's sequence (polling), the command EQ
    /// (its CREATE_EQ polled), `mlx5_cmd_use_events`.
    fn bring_up(&mut self, tb: &mut Testbed) -> Resources {
        let (b, r) = fwpages::bring_up(tb, &mut self.q, &self.f, &mut self.fw);
        r.unwrap();
        let res = *b.resources();
        let uar = res.uar.unwrap();
        tb.take_irqs();
        let eq = self.create_eq(tb, uar, CMD_EQ_LOG, 1 << EVENT_TYPE_CMD);
        self.cmd_eq = Some(eq);
        self.q.use_events().unwrap();
        res
    }

    /// ctrl.rs's teardown: polling mode, the command EQ's DESTROY_EQ, main.c's teardown.
    fn tear_down(&mut self, tb: &mut Testbed, res: &Resources) {
        self.q.use_polling();
        let eqn = self.cmd_eq.as_ref().unwrap().eqn();
        self.exec_short(tb, |b| res::destroy_eq(b, eqn).unwrap());
        self.cmd_eq = None;
        let t = fwpages::tear_down(tb, &mut self.q, &self.f, res, &mut self.fw);
        assert_eq!(t.first_error(), None);
    }

    /// ALLOC_PD: a command with an output to check.
    fn alloc_pd(&mut self, tb: &mut Testbed) -> u32 {
        let out = self.exec_short(tb, |b| res::alloc_pd(b).unwrap());
        res::parse_alloc_pd(&out).unwrap()
    }
}

#[test]
fn commands_complete_by_eqe_in_events_mode_and_by_polling_around_it() {
    let mut tb = Testbed::new();
    let mut d = Driver::new(&tb);
    let res = d.bring_up(&mut tb);
    // main.c's sequence and the command EQ's own CREATE_EQ completed by polling: no EQE.
    assert_eq!(d.q.event_stats().by_eqe, 0);
    assert_eq!(tb.counters(0).cmd_eqes, 0);
    let commands = tb.counters(0).commands;
    assert_eq!(d.cmd_eq.as_ref().unwrap().stats().eqes, 0);
    assert_eq!(d.q.mode(), CmdMode::Events);
    // The async EQ (no command events) and commands after it: each completed by its EQE,
    // with the command EQ's interrupt, and nothing else.
    let uar = res.uar.unwrap();
    let events = 1 << EVENT_TYPE_PORT_CHANGE;
    let async_eq = d.create_eq(&mut tb, uar, 6, events);
    let pds: Vec<u32> = (0..40).map(|_| d.alloc_pd(&mut tb)).collect();
    for w in pds.windows(2) {
        assert_ne!(w[0], w[1], "each ALLOC_PD's own output");
    }
    let n = 42; // CREATE_EQ, 40 ALLOC_PD, DESTROY_EQ
    assert_eq!(
        async_eq.stats().eqes,
        0,
        "an EQ without the CMD bit gets none"
    );
    d.exec_short(&mut tb, |b| res::destroy_eq(b, async_eq.eqn()).unwrap());
    let st = *d.q.event_stats();
    assert_eq!((st.by_eqe, st.lost_eqe, st.early_eqe), (n, 0, 0));
    assert_eq!((d.irqs, d.fallbacks), (n as u32, 0));
    let eqs = *d.cmd_eq.as_ref().unwrap().stats();
    // Past the 32 EQEs of the ring: the consumer index wrapped.
    assert_eq!((eqs.cmd_completions, eqs.eqes, eqs.bogus_cmd), (n, n, 0));
    // The device wrote one command EQE per command it ran.
    let c = tb.counters(0);
    assert_eq!((c.commands - commands, c.cmd_eqes), (n, n));
    // Teardown in polling mode: its commands (the command EQ's DESTROY_EQ first) have no
    // EQE and need none.
    let posted = d.q.posted();
    d.tear_down(&mut tb, &res);
    assert!(d.q.posted() > posted + 3);
    assert_eq!(d.q.event_stats().by_eqe, n);
    assert_eq!(d.q.mode(), CmdMode::Polling);
    assert!(tb.take_irqs().is_empty(), "no EQ left to raise a vector");
    assert_eq!(tb.counters(0).cmd_eqes, n, "none for the polled teardown");
    assert_eq!(tb.counters(0).eqes_lost, 0);
}

#[test]
fn a_lost_interrupt_is_recovered_from_the_eq() {
    let mut tb = Testbed::new();
    let mut d = Driver::new(&tb);
    let res = d.bring_up(&mut tb);
    d.alloc_pd(&mut tb);
    assert!(tb.device().inject(0, Fault::DropIrqs(1)));
    // The EQE is written but its interrupt lost: the wait ends without a wake, polls the
    // EQ (mlx5_cmd_eq_recover) and finds it.
    d.alloc_pd(&mut tb);
    assert_eq!((d.irqs, d.fallbacks), (1, 1));
    assert_eq!(tb.counters(0).irqs_lost, 1);
    let st = *d.q.event_stats();
    assert_eq!((st.by_eqe, st.lost_eqe), (2, 0));
    // The poll re-armed the EQ: the next command has its interrupt again.
    d.alloc_pd(&mut tb);
    assert_eq!((d.irqs, d.fallbacks), (2, 1));
    d.tear_down(&mut tb, &res);
}

#[test]
fn a_lost_eqe_is_recovered_by_the_ownership_bit() {
    let mut tb = Testbed::new();
    let mut d = Driver::new(&tb);
    let res = d.bring_up(&mut tb);
    d.alloc_pd(&mut tb);
    // The command EQ's ring becomes unreachable for the device: its next EQE write fails,
    // the EQ goes to error, every later EQE is lost.
    let ring = d.cmd_eq.as_ref().unwrap().buffer().clone();
    tb.mem.free(&ring);
    let pds: Vec<u32> = (0..3).map(|_| d.alloc_pd(&mut tb)).collect();
    assert!(pds[0] != pds[1] && pds[1] != pds[2]);
    let st = *d.q.event_stats();
    assert_eq!((st.by_eqe, st.lost_eqe, st.early_eqe), (1, 3, 0));
    assert_eq!(d.fallbacks, 3);
    assert!(tb.counters(0).dma_faults >= 1);
    d.tear_down(&mut tb, &res);
}

#[test]
fn an_eqe_for_an_entry_the_device_owns_is_not_trusted() {
    let mut tb = Testbed::new();
    let mut d = Driver::new(&tb);
    let res = d.bring_up(&mut tb);
    d.alloc_pd(&mut tb);
    let eq = d.cmd_eq.as_ref().unwrap();
    let (ring, cc) = (eq.buffer().clone(), eq.cc());
    // A forged command EQE for entry 0 at the consumer index, before the device ran the
    // command, and one naming only entries the driver never rings.
    let mut inp = [0u8; res::SHORT_LEN];
    let n = res::alloc_pd(&mut inp).unwrap();
    let mut out = [0u8; res::SHORT_LEN];
    d.q.post(&inp[..n], out.len(), &d.f, &d.f).unwrap();
    let forge = |i: u32, vector: u32| {
        let o = (i as usize % 32) * 64;
        let mut e = [0u8; 64];
        e[1] = EVENT_TYPE_CMD;
        e[0x20..0x24].copy_from_slice(&vector.to_be_bytes());
        e[63] = ((i >> CMD_EQ_LOG) & 1) as u8;
        ring.write(o, &e);
    };
    forge(cc, 0x8000_0000);
    forge(cc + 1, CMD_ENTRY_BIT);
    assert!(d.poll_cmd_eq(), "the forged EQE names the entry");
    let (r, note) = d.q.poll_event(true, &d.f, &mut out);
    assert_eq!(r, Ok(CmdPoll::Pending), "the ownership bit is the device's");
    assert!(d.q.device_owns());
    assert_eq!(note, EventNote::EarlyEqe);
    assert_eq!(d.cmd_eq.as_ref().unwrap().stats().bogus_cmd, 1);
    // The command still completes (its own EQE went to the slot the forgery took: the
    // poll finds it by the ownership bit), with its output.
    tb.step();
    let eqe = d.poll_cmd_eq();
    let (r, note) = d.q.poll_event(eqe, &d.f, &mut out);
    assert_eq!(r, Ok(CmdPoll::Done(res::SHORT_LEN)));
    assert!(!d.q.device_owns(), "nothing outstanding");
    res::parse_alloc_pd(&out).unwrap();
    assert_eq!(note, EventNote::LostEqe);
    assert_eq!(d.q.event_stats().early_eqe, 1);
    d.tear_down(&mut tb, &res);
}
