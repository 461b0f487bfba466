//! Property test of the simulated ConnectX's command interface against a reference model of
//! its object graph: random sequences of ALLOC/DEALLOC, CREATE/DESTROY of EQs, CQs, TISs,
//! SQs, RQs, RQTs and TIRs, SQ/RQ state changes and TEARDOWN/INIT_HCA, each naming objects
//! that exist, existed, or never did. The reference predicts every command's status (OK,
//! BAD_RESOURCE for an object that does not exist, RESOURCE_BUSY for one in use,
//! BAD_RES_STATE for a transition the model refuses) and the test asserts the device's
//! answer equals it, so the device's bookkeeping (reference counts, slot reuse, teardown) stays
//! consistent over any sequence.
//!
//! `PROPTEST_CASES` sets the number of cases (default 48).

mod cx_fake_driver;
mod sim_util;

use cx_fake_driver::*;
use proptest::prelude::*;
use rsnic_core::hwif::hw::Coherent;

#[derive(Debug, Clone)]
enum Act {
    Alloc(u8),
    Dealloc(u8, u8),
    Eq,
    DestroyEq(u8),
    Cq(u8),
    DestroyCq(u8),
    Tis(u8),
    DestroyTis(u8),
    Sq(u8, u8, u8),
    DestroySq(u8),
    Rq(u8, u8),
    DestroyRq(u8),
    Modify(bool, u8, u8, u8),
    Rqt(Vec<u8>),
    DestroyRqt(u8),
    Tir(u8),
    DestroyTir(u8),
    Teardown,
}

fn act() -> impl Strategy<Value = Act> {
    prop_oneof![
        (0u8..3).prop_map(Act::Alloc),
        (0u8..3, any::<u8>()).prop_map(|(k, i)| Act::Dealloc(k, i)),
        Just(Act::Eq),
        any::<u8>().prop_map(Act::DestroyEq),
        any::<u8>().prop_map(Act::Cq),
        any::<u8>().prop_map(Act::DestroyCq),
        any::<u8>().prop_map(Act::Tis),
        any::<u8>().prop_map(Act::DestroyTis),
        (any::<u8>(), any::<u8>(), any::<u8>()).prop_map(|(a, b, c)| Act::Sq(a, b, c)),
        any::<u8>().prop_map(Act::DestroySq),
        (any::<u8>(), any::<u8>()).prop_map(|(a, b)| Act::Rq(a, b)),
        any::<u8>().prop_map(Act::DestroyRq),
        (any::<bool>(), any::<u8>(), 0u8..4, 0u8..4)
            .prop_map(|(s, i, c, n)| Act::Modify(s, i, c, n)),
        proptest::collection::vec(any::<u8>(), 1..4).prop_map(Act::Rqt),
        any::<u8>().prop_map(Act::DestroyRqt),
        any::<u8>().prop_map(Act::Tir),
        any::<u8>().prop_map(Act::DestroyTir),
        Just(Act::Teardown),
    ]
}

/// One object the reference knows: its number, whether it lives, and what it names.
#[derive(Debug, Clone, Default)]
struct Obj {
    n: u32,
    live: bool,
    refs: Vec<(usize, usize)>,
    state: u8,
}

/// Kinds (index into `Ref::o`).
const UAR: usize = 0;
const PD: usize = 1;
const TD: usize = 2;
const EQ: usize = 3;
const CQ: usize = 4;
const TIS: usize = 5;
const SQ: usize = 6;
const RQ: usize = 7;
const RQT: usize = 8;
const TIR: usize = 9;

#[derive(Default)]
struct Ref {
    /// Every object ever created, per kind (dead ones stay, to be named again).
    o: [Vec<Obj>; 10],
}

impl Ref {
    /// Object `i` (mod count) of kind `k`, or a number that never existed.
    fn pick(&self, k: usize, i: u8) -> (Option<usize>, u32) {
        let v = &self.o[k];
        if v.is_empty() || i == 0xff {
            return (None, 0xff_fff0);
        }
        let j = usize::from(i) % v.len();
        (Some(j), v[j].n)
    }

    fn live(&self, k: usize, j: Option<usize>) -> bool {
        j.is_some_and(|j| self.o[k][j].live)
    }

    /// Whether any live object names (k, j).
    fn used(&self, k: usize, j: usize) -> bool {
        self.o
            .iter()
            .flatten()
            .any(|x| x.live && x.refs.contains(&(k, j)))
    }

    /// Checks the answer `o` to a CREATE of kind `k` naming the objects `deps` (kind, pick):
    /// OK exactly when all of them live, and then object `n` joins the reference naming them;
    /// BAD_RESOURCE otherwise.
    fn create(&mut self, o: &Out, k: usize, n: u32, deps: &[(usize, Option<usize>)]) {
        if deps.iter().all(|&(dk, j)| self.live(dk, j)) {
            assert_eq!(o.status(), 0);
            let refs = deps.iter().map(|&(dk, j)| (dk, j.unwrap())).collect();
            self.add(k, n, refs, 0);
        } else {
            assert_eq!(o.status(), 5);
        }
    }

    fn add(&mut self, k: usize, n: u32, refs: Vec<(usize, usize)>, state: u8) {
        // A number the device reuses names a new object: the old (dead) one keeps its place
        // (other objects' references are indices) under a number that never exists.
        for x in self.o[k].iter_mut().filter(|x| x.n == n) {
            assert!(!x.live, "number {n:#x} reused while alive");
            x.n = 0xff_ffee;
        }
        self.o[k].push(Obj {
            n,
            live: true,
            refs,
            state,
        });
    }
}

fn run(acts: &[Act]) {
    let mut h = Host::new(0);
    h.bring_up();
    let mut r = Ref::default();
    let mem = h.tb.mem.clone();
    let page = |n: usize| mem.alloc(4096 * n);
    let destroy = |h: &mut Host, r: &mut Ref, k: usize, op: u16, i: u8| {
        let (j, n) = r.pick(k, i);
        let o = if k == EQ {
            let mut d = cmd_in(op, 0, 16);
            put(&mut d, 0x58, 8, u64::from(n));
            h.exec(&d, 16)
        } else {
            h.exec(&obj_in(op, n), 16)
        };
        let want = match j {
            Some(j) if r.o[k][j].live => {
                if r.used(k, j) {
                    6
                } else {
                    0
                }
            }
            _ => 5,
        };
        assert_eq!(o.status(), want, "destroy kind {k} #{n:#x}");
        if want == 0 {
            if let Some(j) = j {
                r.o[k][j].live = false;
            }
        }
    };
    for a in acts {
        match a {
            Act::Alloc(k) => {
                let op = [0x802, 0x800, 0x816][usize::from(*k)];
                let o = h.exec(&cmd_in(op, 0, 16), 16).ok();
                r.add(usize::from(*k), o.obj(), vec![], 0);
            }
            Act::Dealloc(k, i) => {
                let op = [0x803, 0x801, 0x817][usize::from(*k)];
                destroy(&mut h, &mut r, usize::from(*k), op, *i);
            }
            Act::Eq => {
                let (u, un) = r.pick(UAR, 0);
                let b = page(1);
                let o = h.exec(&eq_in(4, un, 0, 0, b.dma_addr()), 16);
                r.create(&o, EQ, getf(&o.b, 0x58, 8) as u32, &[(UAR, u)]);
            }
            Act::DestroyEq(i) => destroy(&mut h, &mut r, EQ, 0x302, *i),
            Act::Cq(i) => {
                let (u, un) = r.pick(UAR, 0);
                let (e, en) = r.pick(EQ, *i);
                let b = page(1);
                let d = page(1);
                let o = h.exec(&cq_in(4, un, en, false, b.dma_addr(), d.dma_addr()), 16);
                r.create(&o, CQ, o.obj(), &[(UAR, u), (EQ, e)]);
            }
            Act::DestroyCq(i) => destroy(&mut h, &mut r, CQ, 0x401, *i),
            Act::Tis(i) => {
                let (t, tn) = r.pick(TD, *i);
                let o = h.exec(&tis_in(tn), 16);
                r.create(&o, TIS, o.obj(), &[(TD, t)]);
            }
            Act::DestroyTis(i) => destroy(&mut h, &mut r, TIS, 0x914, *i),
            Act::Sq(c, t, p) => {
                let (cj, cn) = r.pick(CQ, *c);
                let (tj, tn) = r.pick(TIS, *t);
                let (pj, pn) = r.pick(PD, *p);
                let (uj, un) = r.pick(UAR, 0);
                let b = page(1);
                let d = page(1);
                let o = h.exec(&sq_in(cn, tn, pn, un, d.dma_addr(), 6, b.dma_addr()), 16);
                r.create(&o, SQ, o.obj(), &[(CQ, cj), (TIS, tj), (PD, pj), (UAR, uj)]);
            }
            Act::DestroySq(i) => destroy(&mut h, &mut r, SQ, 0x906, *i),
            Act::Rq(c, p) => {
                let (cj, cn) = r.pick(CQ, *c);
                let (pj, pn) = r.pick(PD, *p);
                let b = page(1);
                let d = page(1);
                let o = h.exec(&rq_in(cn, pn, d.dma_addr(), 4, 6, b.dma_addr()), 16);
                r.create(&o, RQ, o.obj(), &[(CQ, cj), (PD, pj)]);
            }
            Act::DestroyRq(i) => destroy(&mut h, &mut r, RQ, 0x90a, *i),
            Act::Modify(sq, i, cur, next) => {
                let k = if *sq { SQ } else { RQ };
                let (j, n) = r.pick(k, *i);
                let op = if *sq { 0x905 } else { 0x909 };
                let o = h.exec(&modify_in(op, n, *cur, *next), 16);
                match j {
                    Some(j) if r.o[k][j].live => {
                        let st = r.o[k][j].state;
                        let ok = matches!((st, *next), (0, 1) | (1, 3) | (3, 0));
                        if *cur != st {
                            assert_eq!(o.status(), 9, "current state mismatch");
                        } else if ok {
                            assert_eq!(o.status(), 0);
                            r.o[k][j].state = *next;
                        } else {
                            assert_eq!(o.status(), 9, "transition {st} -> {next}");
                        }
                    }
                    _ => assert_eq!(o.status(), 5),
                }
            }
            Act::Rqt(is) => {
                let picks: Vec<(Option<usize>, u32)> = is.iter().map(|&i| r.pick(RQ, i)).collect();
                let ns: Vec<u32> = picks.iter().map(|p| p.1).collect();
                let o = h.exec(&rqt_in(&ns), 16);
                let deps: Vec<_> = picks.iter().map(|p| (RQ, p.0)).collect();
                r.create(&o, RQT, o.obj(), &deps);
            }
            Act::DestroyRqt(i) => destroy(&mut h, &mut r, RQT, 0x918, *i),
            Act::Tir(i) => {
                let (qj, qn) = r.pick(RQT, *i);
                let (tj, tn) = r.pick(TD, 0);
                let o = h.exec(&tir_in(qn, tn, &[7; 40]), 16);
                r.create(&o, TIR, o.obj(), &[(RQT, qj), (TD, tj)]);
            }
            Act::DestroyTir(i) => destroy(&mut h, &mut r, TIR, 0x902, *i),
            Act::Teardown => {
                h.exec(&cmd_in(0x103, 0, 16), 16).ok();
                h.exec(&cmd_in(0x102, 0, 0x20), 16).ok();
                for v in r.o.iter_mut() {
                    for x in v.iter_mut() {
                        x.live = false;
                    }
                }
            }
        }
    }
    // Everything still alive can be destroyed in reverse order of kind.
    for (k, op) in [
        (TIR, 0x902u16),
        (RQT, 0x918),
        (SQ, 0x906),
        (RQ, 0x90a),
        (TIS, 0x914),
        (CQ, 0x401),
    ] {
        let live: Vec<u32> = r.o[k].iter().filter(|x| x.live).map(|x| x.n).collect();
        for n in live {
            h.exec(&obj_in(op, n), 16).ok();
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(48),
        ..ProptestConfig::default()
    })]

    #[test]
    fn commands_match_the_reference_object_graph(acts in proptest::collection::vec(act(), 1..60)) {
        run(&acts);
    }
}

#[test]
fn a_busy_chain_unwinds_in_order() {
    run(&[
        Act::Alloc(0),
        Act::Alloc(1),
        Act::Alloc(2),
        Act::Eq,
        Act::Cq(0),
        Act::Tis(0),
        Act::Sq(0, 0, 0),
        Act::Rq(0, 0),
        Act::Rqt(vec![0, 0]),
        Act::Tir(0),
        Act::DestroyCq(0),
        Act::DestroyRq(0),
        Act::DestroyRqt(0),
        Act::Dealloc(0, 0),
        Act::Dealloc(2, 0),
        Act::DestroyTir(0),
        Act::DestroyRqt(0),
        Act::Modify(true, 0, 0, 1),
        Act::Modify(true, 0, 1, 3),
        Act::Modify(true, 0, 3, 1),
        Act::Teardown,
        Act::DestroySq(0),
    ]);
}
