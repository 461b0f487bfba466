//! What the upstream mlx5_core boot needs of the simulated ConnectX, driven through registers
//! and DMA memory as mlx5_core drives them: command completions as EQEs once an EQ takes
//! command events (events mode), firmware pages (QUERY_PAGES, MANAGE_PAGES, the page request,
//! INIT_HCA refused without its pages), queues in page lists (and the pool's bounds), memory
//! keys checked in data segments, and the capability layouts at the 6.12 mlx5_ifc.h offsets
//! (written here by hand from the header, not shared with the model).

mod cx_fake_driver;
mod sim_util;

use cx_fake_driver::*;
use rsnic_core::hwif::hw::{BusMemory, Coherent, DmaAddr, DmaFault, Mmio};
use rsnic_core::sim::mlx5::cmd::{synd, BOOT_PAGES, INIT_PAGES, REGULAR_PAGES};
use rsnic_core::sim::mlx5::pas::{self, Ring};
use sim_util::{ctrl, dseg, eseg, udp4_frame, CQ_UPDATE, OP_SEND};

/// `MLX5_EVENT_TYPE_CMD`, `MLX5_EVENT_TYPE_PAGE_REQUEST` (device.h).
const EV_CMD: u64 = 0x0a;
const EV_PAGE_REQUEST: u64 = 0x0b;

/// ENABLE_HCA and ISSI 1, as mlx5_function_enable does before the boot pages.
fn enable(h: &mut Host) {
    h.exec(&cmd_in(0x104, 0, 16), 12).ok();
    let mut i = cmd_in(0x10b, 0, 16);
    put(&mut i, 0x50, 16, 1);
    h.exec(&i, 16).ok();
}

/// QUERY_PAGES (op_mod 1 boot, 2 init, 3 regular): `num_pages` (bit 0x60, signed).
fn query_pages(h: &mut Host, op_mod: u16) -> i32 {
    let o = h.exec(&cmd_in(0x107, op_mod, 16), 16).ok();
    assert_eq!(getf(&o.b, 0x50, 16), 0, "function_id: the function itself");
    getf(&o.b, 0x60, 32) as u32 as i32
}

/// MANAGE_PAGES GIVE of `pages` (manage_pages_in.pas[] at byte 0x10).
fn give(h: &mut Host, pages: &[u64]) -> Out {
    let mut i = cmd_in(0x108, 1, 0x10 + 8 * pages.len());
    put(&mut i, 0x60, 32, pages.len() as u64); // input_num_entries
    for (k, a) in pages.iter().enumerate() {
        i[0x10 + 8 * k..0x18 + 8 * k].copy_from_slice(&a.to_be_bytes());
    }
    h.exec(&i, 16)
}

/// MANAGE_PAGES TAKE of up to `n`: the returned page addresses.
fn take(h: &mut Host, n: usize) -> Vec<u64> {
    let mut i = cmd_in(0x108, 2, 16);
    put(&mut i, 0x60, 32, n as u64);
    let o = h.exec(&i, 0x10 + 8 * n).ok();
    let got = getf(&o.b, 0x40, 32) as usize; // output_num_entries
    assert!(got <= n, "no more than asked");
    (0..got)
        .map(|k| u64::from_be_bytes(o.b[0x10 + 8 * k..0x18 + 8 * k].try_into().unwrap()))
        .collect()
}

fn alloc_pages(h: &mut Host, n: usize) -> Vec<u64> {
    (0..n).map(|_| h.tb.mem.alloc(4096).dma_addr()).collect()
}

#[test]
fn firmware_pages_boot_init_regular_and_reclaim() {
    let mut h = Host::new(0);
    enable(&mut h);
    assert_eq!(query_pages(&mut h, 1), BOOT_PAGES as i32, "boot pages");
    // The boot pages, one of them misaligned: refused whole, nothing held.
    let mut boot = alloc_pages(&mut h, BOOT_PAGES as usize);
    let good = boot[0];
    boot[0] += 8;
    expect(give(&mut h, &boot), ST_BAD_PARAM, synd::PAGE_ADDRESS);
    assert_eq!(h.tb.counters(0).fw_pages, 0);
    boot[0] = good;
    give(&mut h, &boot).ok();
    assert_eq!(query_pages(&mut h, 1), 0, "boot pages given");
    // SET_HCA_CAP, then the init pages: INIT_HCA is refused until they are there.
    assert_eq!(query_pages(&mut h, 2), INIT_PAGES as i32, "init pages");
    let o = h.exec(&cmd_in(0x102, 0, 0x20), 16);
    expect(&o, ST_BAD_SYS_STATE, synd::INIT_PAGES_MISSING);
    let init = alloc_pages(&mut h, INIT_PAGES as usize);
    give(&mut h, &init[..10]).ok();
    expect(
        h.exec(&cmd_in(0x102, 0, 0x20), 16),
        ST_BAD_SYS_STATE,
        synd::INIT_PAGES_MISSING,
    );
    give(&mut h, &init[10..]).ok();
    assert_eq!(query_pages(&mut h, 2), 0);
    h.exec(&cmd_in(0x102, 0, 0x20), 16).ok();
    assert_eq!(
        h.tb.counters(0).fw_pages,
        u64::from(BOOT_PAGES + INIT_PAGES)
    );
    // The device keeps its list in the pages: the last page given links the one before.
    let mut link = [0u8; 8];
    h.tb.mem
        .dma_read(init[INIT_PAGES as usize - 1], &mut link)
        .unwrap();
    assert_eq!(u64::from_be_bytes(link), init[INIT_PAGES as usize - 2]);
    // The pages EQ (PAGE_REQUEST only) gets the regular page request after INIT_HCA.
    let uar = h.alloc(0x802);
    let mut eq = h.create_eq(6, uar, 0, 1 << EV_PAGE_REQUEST).unwrap();
    h.eq_doorbell(&eq, true);
    h.step();
    let e = eq.poll().expect("page request EQE");
    assert_eq!(
        u64::from(e[1]),
        EV_PAGE_REQUEST,
        "MLX5_EVENT_TYPE_PAGE_REQUEST"
    );
    assert_eq!(u16::from_be_bytes([e[0x22], e[0x23]]), 0, "func_id");
    assert_eq!(
        i32::from_be_bytes(e[0x24..0x28].try_into().unwrap()),
        REGULAR_PAGES as i32,
        "num_pages"
    );
    assert!(eq.poll().is_none(), "asked once");
    assert_eq!(query_pages(&mut h, 3), REGULAR_PAGES as i32);
    let regular = alloc_pages(&mut h, REGULAR_PAGES as usize);
    give(&mut h, &regular).ok();
    assert_eq!(query_pages(&mut h, 3), 0);
    // While initialized the device keeps what it needs.
    assert!(
        take(&mut h, 16).is_empty(),
        "an initialized HCA keeps its pages"
    );
    // TEARDOWN_HCA, then every page comes back, each once, in batches.
    h.exec(
        &cmd_in(0x302, 0, 16).tap(|i| put(i, 0x58, 8, u64::from(eq.eqn))),
        16,
    )
    .ok();
    h.exec(&obj_in(0x803, uar), 16).ok();
    h.exec(&cmd_in(0x103, 0, 16), 16).ok();
    let mut back = Vec::new();
    loop {
        let got = take(&mut h, 40);
        if got.is_empty() {
            break;
        }
        back.extend(got);
    }
    let mut given: Vec<u64> = boot.iter().chain(&init).chain(&regular).copied().collect();
    given.sort();
    back.sort();
    assert_eq!(back, given, "every page given comes back once");
    assert_eq!(h.tb.counters(0).fw_pages, 0);
    h.exec(&cmd_in(0x105, 0, 16), 12).ok();
}

/// rsnic's own driver never asks QUERY_PAGES: it is not held to the pages (explicitly gated,
/// see rsnic.rst), and it gets no page request.
#[test]
fn a_driver_that_never_asks_for_pages_is_not_held_to_them() {
    let mut h = Host::new(0);
    h.bring_up(); // ENABLE, ISSI, caps, INIT_HCA: no QUERY_PAGES
    let uar = h.alloc(0x802);
    let mut eq = h.create_eq(6, uar, 0, 1 << EV_PAGE_REQUEST).unwrap();
    h.eq_doorbell(&eq, true);
    h.step();
    assert!(eq.poll().is_none(), "no page request");
}

#[test]
fn events_mode_command_completions() {
    let mut h = Host::new(0);
    h.bring_up();
    let uar = h.alloc(0x802);
    h.tb.take_irqs();
    // mlx5_core's command EQ (CMD only) on vector 0, and an async EQ without the CMD bit.
    let mut cmd_eq = h.create_eq(5, uar, 0, 1 << EV_CMD).unwrap();
    let mut async_eq = h.create_eq(6, uar, 0, 1 << 9).unwrap();
    h.eq_doorbell(&cmd_eq, true);
    h.eq_doorbell(&async_eq, true);
    h.step();
    // The CREATE_EQ of the command EQ was rung before the EQ existed: no EQE for it (the
    // driver polled it); the second CREATE_EQ was rung after: its completion is an EQE.
    let e = cmd_eq
        .poll()
        .expect("completion EQE of the second CREATE_EQ");
    assert_eq!(u64::from(e[1]), EV_CMD, "MLX5_EVENT_TYPE_CMD");
    let slot_of_second = (h.slots[0] + 32 - 1) % 32;
    assert_eq!(
        u32::from_be_bytes(e[0x20..0x24].try_into().unwrap()),
        1 << slot_of_second,
        "data.cmd.vector: the entry's bit"
    );
    assert!(cmd_eq.poll().is_none());
    // Every later command completes by event too, with the EQ's vector raised once armed.
    h.eq_doorbell(&cmd_eq, true);
    h.tb.take_irqs();
    let slot = h.slots[0];
    h.alloc(0x800); // ALLOC_PD
    let e = cmd_eq.poll().expect("ALLOC_PD completion EQE");
    assert_eq!(
        u32::from_be_bytes(e[0x20..0x24].try_into().unwrap()),
        1 << slot
    );
    assert_eq!(h.tb.take_irqs(), vec![0], "the command EQ's vector");
    assert!(
        async_eq.poll().is_none(),
        "an EQ without the CMD bit gets none"
    );
    // Past the EQ's first page: 32 EQEs of 64 bytes fill 2 KiB; keep going around it.
    for _ in 0..40 {
        h.eq_doorbell(&cmd_eq, true);
        h.exec(&cmd_in(0x10a, 0, 16), 0x70).ok(); // QUERY_ISSI
        assert_eq!(cmd_eq.poll().expect("EQE")[1], 0x0a);
    }
}

/// A BusMemory of one 64 KiB region at 0x10000 (for Ring addressing).
struct Flat(std::cell::RefCell<Vec<u8>>);

impl BusMemory for Flat {
    fn dma_read(&self, addr: DmaAddr, dst: &mut [u8]) -> Result<(), DmaFault> {
        let f = DmaFault {
            addr,
            len: dst.len(),
        };
        let o = addr.checked_sub(0x10000).ok_or(f)? as usize;
        let m = self.0.borrow();
        dst.copy_from_slice(m.get(o..o + dst.len()).ok_or(f)?);
        Ok(())
    }
    fn dma_write(&self, addr: DmaAddr, src: &[u8]) -> Result<(), DmaFault> {
        let f = DmaFault {
            addr,
            len: src.len(),
        };
        let o = addr.checked_sub(0x10000).ok_or(f)? as usize;
        let mut m = self.0.borrow_mut();
        m.get_mut(o..o + src.len()).ok_or(f)?.copy_from_slice(src);
        Ok(())
    }
}

#[test]
fn page_list_addressing_and_bounds() {
    let mut pool = vec![0u8; pas::POOL_BYTES];
    // Three pages out of order: 0x13000, 0x11000, 0x1a000.
    let pages = [0x13000u64, 0x11000, 0x1a000];
    let first = pas::alloc(&mut pool, 3).expect("room");
    for (k, a) in pages.iter().enumerate() {
        assert!(pas::set_entry(&mut pool, usize::from(first) + k, *a));
    }
    let r = Ring {
        base: pages[0],
        log_pg: 12,
        first,
        pages: 3,
    };
    assert_eq!(r.addr(&pool, 0, 64), Some(0x13000));
    assert_eq!(r.addr(&pool, 4096 + 64, 64), Some(0x11040));
    assert_eq!(r.addr(&pool, 2 * 4096 + 4032, 64), Some(0x1afc0));
    assert_eq!(r.addr(&pool, 3 * 4096, 64), None, "beyond the list");
    assert_eq!(
        r.addr(&pool, 4096 - 32, 64),
        None,
        "an entry across a page edge"
    );
    // A read across the page edge takes the next page's bytes.
    let mem = Flat(std::cell::RefCell::new(vec![0u8; 0x10000]));
    mem.dma_write(0x13ff8, &[1; 8]).unwrap();
    mem.dma_write(0x11000, &[2; 8]).unwrap();
    let mut got = [0u8; 16];
    r.read(&pool, &mem, 4096 - 8, &mut got).unwrap();
    assert_eq!(got, [1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2]);
    assert!(r.read(&pool, &mem, 3 * 4096 - 8, &mut got).is_err());
    // Bounds: no empty or over-long list; the pool runs out; a freed list is free again.
    assert_eq!(pas::alloc(&mut pool, 0), None);
    assert_eq!(pas::alloc(&mut pool, pas::MAX_LIST_PAGES + 1), None);
    let mut taken = vec![r];
    while let Some(f) = pas::alloc(&mut pool, pas::MAX_LIST_PAGES) {
        taken.push(Ring {
            first: f,
            pages: pas::MAX_LIST_PAGES as u16,
            ..r
        });
    }
    assert!(pas::in_use(&pool) > pas::POOL_PAGES - pas::MAX_LIST_PAGES);
    for t in &taken {
        pas::free(&mut pool, t);
    }
    assert_eq!(pas::in_use(&pool), 0);
    // Entries outside the pool are no address.
    assert_eq!(pas::entry(&pool, pas::POOL_PAGES), None);
}

/// An EQ in a page list (as mlx5_core allocates its EQs, page by page): its EQEs land page
/// by page; a list the pool has no room for is refused; the pool entries come back.
#[test]
fn eq_in_a_page_list_through_commands() {
    let mut h = Host::new(0);
    h.bring_up();
    let uar = h.alloc(0x802);
    // 128 EQEs = 2 pages, second page first in memory.
    let p0 = h.tb.mem.alloc(8192);
    let (a, b) = (p0.dma_addr() + 4096, p0.dma_addr());
    for i in 0..128 {
        p0.write(i * 64 + 63, &[1]);
    }
    let mut i = eq_in(7, uar, 0, 1 << EV_CMD, a);
    i[0x118..0x120].copy_from_slice(&b.to_be_bytes());
    let o = h.exec(&i, 16).ok();
    let eqn = getf(&o.b, 0x58, 8) as u32;
    assert_eq!(
        h.tb.counters(0).pas_list_pages,
        2,
        "two pages taken from a page list"
    );
    let eq = Eq {
        eqn,
        buf: p0.clone(),
        log: 7,
        cc: 0,
        uar,
    };
    h.eq_doorbell(&eq, false);
    for _ in 0..70 {
        h.exec(&cmd_in(0x10a, 0, 16), 0x70).ok(); // QUERY_ISSI
    }
    // EQE 0 at page 0 (= a), EQE 64 at page 1 (= b): read them where the list puts them.
    let mut e = [0u8; 64];
    p0.read(4096, &mut e);
    assert_eq!(e[1], 0x0a, "EQE 0 in the first listed page");
    p0.read(0, &mut e);
    assert_eq!(e[1], 0x0a, "EQE 64 in the second listed page");
    p0.read(5 * 64, &mut e);
    assert_eq!(e[1], 0x0a, "EQE 69");
    p0.read(6 * 64, &mut e);
    assert_eq!(e[63], 1, "EQE 70 not written");
    // A list longer than one queue may have.
    let n = pas::MAX_LIST_PAGES + 1;
    let log = (n * 4096 / 64).next_power_of_two().trailing_zeros() as u8;
    let mut i = eq_in(log.min(22), uar, 0, 0, 0x10000);
    let pages = 1usize << (log + 6 - 12);
    for k in 0..pages {
        let a = 0x100_0000u64 + 2 * 4096 * k as u64;
        i[0x110 + 8 * k..0x118 + 8 * k].copy_from_slice(&a.to_be_bytes());
    }
    expect(h.exec(&i, 16), ST_NO_RESOURCES, synd::PAS_POOL);
    assert_eq!(
        h.tb.counters(0).pas_list_pages,
        2,
        "a refused list counts nothing"
    );
}

#[test]
fn caps_at_the_mlx5_ifc_offsets() {
    let mut h = Host::new(0);
    enable(&mut h);
    // query_hca_cap_out.capability at byte 0x10; cmd_hca_cap, bits from the MSB of byte 0.
    let cap = |o: &Out, bit: usize, len: usize| getf(&o.b, 0x80 + bit, len);
    let max = h.exec(&cmd_in(0x100, 0, 16), 0x1010).ok();
    let cur = h.exec(&cmd_in(0x100, 1, 16), 0x1010).ok();
    for o in [&max, &cur] {
        assert_eq!(cap(o, 0x1b6, 2), 1, "port_type Ethernet");
        assert_eq!(cap(o, 0x1a6, 1), 1, "nic_flow_table");
        assert_eq!(cap(o, 0x21c, 1), 1, "eth_net_offloads");
        assert_eq!(cap(o, 0x222, 1), 1, "cq_moderation");
        assert_eq!(cap(o, 0x186, 10), 8, "max_qp_cnt");
        assert_eq!(cap(o, 0xea, 6), 3, "log_max_mkey");
        assert_eq!(cap(o, 0x258, 8), 12, "log_pg_sz");
        assert_eq!(cap(o, 0x3fb, 5), 2, "log_max_current_uc_list");
        assert_eq!(cap(o, 0x3f3, 5), 4, "log_max_current_mc_list");
        assert_eq!(cap(o, 0x201, 1), 0, "striding_rq: not offered");
        assert_eq!(cap(o, 0x20, 1), 0, "hca_cap_2: not offered");
    }
    // SET_HCA_CAP (general): pkey_table_size (bit 0x190) shows in cur, not in max.
    let mut i = cmd_in(0x109, 0, 0x1010);
    i[0x10..0x110].copy_from_slice(&cur.b[0x10..0x110]);
    put(&mut i, 0x80 + 0x190, 16, 2);
    h.exec(&i, 16).ok();
    let cur = h.exec(&cmd_in(0x100, 1, 16), 0x1010).ok();
    let max = h.exec(&cmd_in(0x100, 0, 16), 0x1010).ok();
    assert_eq!(cap(&cur, 0x190, 16), 2, "pkey_table_size set");
    assert_eq!(cap(&max, 0x190, 16), 0);
    put(&mut i, 0x80 + 0x490, 16, 1); // log_uar_page_sz 8 KiB
    expect(h.exec(&i, 16), ST_BAD_PARAM, synd::SET_CAP);
    // per_protocol_networking_offload_caps (type 1): what mlx5_eth_supported() needs.
    let eth = h.exec(&cmd_in(0x100, 3, 16), 0x1010).ok();
    assert_eq!(cap(&eth, 0x0, 1), 1, "csum_cap");
    assert_eq!(cap(&eth, 0x1, 1), 1, "vlan_cap");
    assert_ne!(cap(&eth, 0xb, 5), 0, "max_lso_cap");
    assert_ne!(cap(&eth, 0x14, 4), 0, "rss_ind_tbl_cap");
    // flow_table_nic_cap (type 7): flow_table_properties_nic_receive at bit 0x200.
    let ft = h.exec(&cmd_in(0x100, 15, 16), 0x1010).ok();
    assert_eq!(cap(&ft, 0x200, 1), 1, "ft_support");
    assert!(cap(&ft, 0x238, 8) >= 3, "max_ft_level >= 3");
    assert_eq!(cap(&ft, 0x300, 1), 1, "ft_field_support.outer_dmac");
    // QUERY_ADAPTER: Mellanox's OUI in ieee_vendor_id (block at 0x10, bytes 0x19..0x1c).
    let a = h.exec(&cmd_in(0x101, 0, 16), 0x110).ok();
    assert_eq!(&a.b[0x10 + 0x19..0x10 + 0x1c], &[0x00, 0x02, 0xc9]);
    // Another capability type is refused.
    expect(
        h.exec(&cmd_in(0x100, 2 << 1 | 1, 16), 0x1010),
        ST_BAD_PARAM,
        synd::CAP_TYPE,
    );
}

/// Memory keys: before the function has one, any lkey (rsnic's 0) passes; after
/// CREATE_MKEY, a data segment under another key fails its WQE with LOCAL_PROT.
#[test]
fn memory_keys_are_checked_once_the_function_has_one() {
    let mut h = Host::new(0);
    let (uar, pd, td) = h.bring_up_with_objects();
    let eq = h.create_eq(6, uar, 0, 0).unwrap();
    let mut cq = h.create_cq(6, uar, eq.eqn, false).unwrap();
    let tis = h.exec(&tis_in(td), 16).ok().obj();
    let (sqn, sq, dbr) = h.ready_sq(cq.cqn, tis, pd, uar);
    let frame = udp4_frame(100, 7, 9);
    let data = h.tb.mem.alloc_from(&frame);
    let post = |h: &mut Host, pc: u16, lkey: u32| {
        let mut w = Vec::new();
        w.extend_from_slice(&ctrl(OP_SEND, pc, sqn, 3, CQ_UPDATE));
        w.extend_from_slice(&eseg(0, 0, 0, [0, 0]));
        w.extend_from_slice(&dseg(frame.len() as u32, lkey, data.dma_addr()));
        sq.write(usize::from(pc) * 64, &w);
        dbr.write_be32(4, u32::from(pc) + 1);
        h.bus
            .write64(h.reg(uar * 4096 + 0x800), w[..8].try_into().unwrap());
        h.step();
    };
    post(&mut h, 0, 0);
    assert_eq!(
        cq.poll().expect("CQE")[63] >> 4,
        0,
        "lkey 0 without keys: REQ"
    );
    // mlx5e_create_mkey: PA, lw, lr, length64, the PD, qpn 0xffffff, variant 0x5a.
    let mut i = cmd_in(0x200, 0, 0x110);
    put(&mut i, 0x80 + 0x14, 1, 1); // lw
    put(&mut i, 0x80 + 0x15, 1, 1); // lr
    put(&mut i, 0x80 + 0x20, 24, 0xff_ffff); // qpn
    put(&mut i, 0x80 + 0x38, 8, 0x5a); // mkey_7_0
    put(&mut i, 0x80 + 0x60, 1, 1); // length64
    put(&mut i, 0x80 + 0x68, 24, u64::from(pd)); // pd
    let mut bad = i.clone();
    put(&mut bad, 0x80 + 0x16, 2, 1); // access_mode MTT
    expect(h.exec(&bad, 16), ST_BAD_PARAM, synd::MKEY_PARAM);
    let o = h.exec(&i, 16).ok();
    let key = (getf(&o.b, 0x48, 24) as u32) << 8 | 0x5a;
    post(&mut h, 1, key);
    assert_eq!(cq.poll().expect("CQE")[63] >> 4, 0, "its own key: REQ");
    post(&mut h, 2, 0);
    let c = cq.poll().expect("error CQE");
    assert_eq!(c[63] >> 4, 13, "REQ_ERR");
    assert_eq!(c[55], 0x04, "LOCAL_PROT");
    assert_eq!(h.tb.counters(0).mkey_errors, 1);
    // DESTROY_MKEY of a key the function does not have.
    expect(h.exec(&obj_in(0x202, 0x7), 16), 0x5, synd::BAD_MKEY);
}

/// Q counters: ALLOC_Q_COUNTER, QUERY_Q_COUNTER's out_of_buffer, DEALLOC of another id.
#[test]
fn q_counter_counts_its_rq_drops() {
    let mut h = Host::new(0);
    h.bring_up();
    let id = h.exec(&cmd_in(0x771, 0, 16), 16).ok();
    let id = getf(&id.b, 0x58, 8);
    assert_eq!(id, 1, "counter_set_id");
    let mut q = cmd_in(0x773, 0, 0x20);
    put(&mut q, 0xf8, 8, id);
    let o = h.exec(&q, 0x100).ok();
    assert_eq!(getf(&o.b, 0x180, 32), 0, "out_of_buffer");
    let mut d5 = cmd_in(0x772, 0, 16);
    put(&mut d5, 0x58, 8, 5);
    expect(h.exec(&d5, 16), 0x5, synd::BAD_Q_COUNTER);
    let mut d = cmd_in(0x772, 0, 16);
    put(&mut d, 0x58, 8, id);
    h.exec(&d, 16).ok();
}

trait Tap {
    fn tap(self, f: impl FnOnce(&mut Self)) -> Self;
}
impl Tap for Vec<u8> {
    fn tap(mut self, f: impl FnOnce(&mut Self)) -> Self {
        f(&mut self);
        self
    }
}
