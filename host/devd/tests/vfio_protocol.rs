//! devd as a vfio-user server, driven the way QEMU's vfio-user-pci drives it: VERSION
//! first, device, region and IRQ info, config space (IDs, class, capabilities, BAR0
//! sizing), BAR0 reads of the identifying registers (8-byte reads as two 4-byte ones),
//! DMA_MAP and SET_IRQS with descriptors (a ConnectX send completes into the mapped memory
//! and raises its function's MSI-X eventfd), DEVICE_RESET of one function, and the server's
//! exit when its clients close.

mod common;

use std::os::fd::AsFd;

use common::vfio::*;
use rsnic_core::sim;
use rsnic_core::sim::mlx5::{api_uar_offset, CQ_ARM_DOORBELL, SQ_DOORBELL};
use rsnic_devd::model::Entry;
use rsnic_devd::model::{Family, MODEL_VECTORS_PER_PORT};
use rsnic_devd::model::{Mlx5Model, Model};
use rsnic_devd::vfio::pci::{FunctionKind, CAP_MSIX, CAP_PCIE};
use rsnic_devd::vfio::proto::{self, cmd, irq, region};

#[test]
fn version_is_first_and_only_once() {
    let s = Server::start("vfio-version", Family::Mana, 2, |_| {});
    let mut c = Client::connect(&s.sockets[0]);
    let info = out().u32(16).u32(0).u32(0).u32(0).0;
    assert_eq!(
        c.call(cmd::DEVICE_GET_INFO, &info, &[]),
        Err(libc::EINVAL as u32),
        "a command before VERSION"
    );
    // An unknown major version is refused.
    assert_eq!(
        c.call(cmd::VERSION, &[1, 0, 0, 0], &[]),
        Err(libc::EINVAL as u32)
    );
    let r = c.version().unwrap();
    assert_eq!(&r[..4], &[0, 0, 0, 0], "version 0.0");
    let json = std::str::from_utf8(&r[4..r.len() - 1]).unwrap();
    assert_eq!(r.last(), Some(&0), "NUL-terminated");
    for cap in [
        "\"max_msg_fds\":16",
        "\"max_data_xfer_size\":65536",
        "\"pgsizes\":4096",
    ] {
        assert!(json.contains(cap), "{json}");
    }
    assert!(!json.contains("migration"), "{json}");
    assert_eq!(c.version(), Err(libc::EINVAL as u32), "VERSION twice");
    // Device info after VERSION.
    let r = c.call(cmd::DEVICE_GET_INFO, &info, &[]).unwrap();
    let want = out()
        .u32(16)
        .u32(proto::DEVICE_FLAG_RESET | proto::DEVICE_FLAG_PCI)
        .u32(9)
        .u32(5)
        .0;
    assert_eq!(r, want);
    drop(c);
    let (r, stats) = s.join();
    assert_eq!(r, Ok(()), "exits when its client closed");
    assert_eq!(stats[0].msgs_refused, 3);
}

fn check_regions_and_irqs(family: Family, bar0: u64, vectors: u32) {
    let s = Server::start("vfio-info", family, 2, |_| {});
    let mut c = s.client(0);
    let rw = region::FLAG_READ | region::FLAG_WRITE;
    assert_eq!(c.region_info(region::BAR0), Ok((rw, bar0)));
    assert_eq!(c.region_info(region::CONFIG), Ok((rw, 4096)));
    for i in [1, 2, 3, 4, 5, region::ROM, region::VGA] {
        assert_eq!(c.region_info(i), Ok((0, 0)), "region {i}");
    }
    assert_eq!(c.region_info(9), Err(libc::EINVAL as u32));
    assert_eq!(c.irq_info(irq::MSIX), Ok((irq::INFO_EVENTFD, vectors)));
    for i in [irq::INTX, irq::MSI, irq::ERR, irq::REQ] {
        assert_eq!(c.irq_info(i).map(|x| x.1), Ok(0), "irq type {i}");
    }
    assert_eq!(c.irq_info(5), Err(libc::EINVAL as u32));
}

#[test]
fn region_and_irq_info_mana() {
    check_regions_and_irqs(Family::Mana, 512 << 10, 65);
}

#[test]
fn region_and_irq_info_mlx5() {
    check_regions_and_irqs(Family::Mlx5, 1 << 20, 64);
}

fn check_config(family: Family, ids: u32, bar0: u64, vectors: u32) {
    let s = Server::start("vfio-config", family, 1, |_| {});
    let mut c = s.client(0);
    let all = c.region_read(region::CONFIG, 0, 4096).unwrap();
    assert_eq!(all.len(), 4096);
    assert_eq!(c.cfg32(0), ids, "vendor and device");
    assert_eq!(c.cfg32(0x08) >> 8, 0x02_0000, "class: Ethernet");
    assert_ne!(c.cfg32(0x04) >> 16 & 0x10, 0, "status: capability list");
    assert_eq!(c.cfg32(0x10) & 0xf, 0xc, "BAR0 64-bit prefetchable memory");
    // Capabilities: PCI Express endpoint, then MSI-X with its table and PBA in BAR0.
    assert_eq!(c.cfg32(0x34) & 0xff, CAP_PCIE as u32);
    let pcie = c.cfg32(CAP_PCIE as u64);
    assert_eq!((pcie & 0xff, pcie >> 8 & 0xff), (0x10, CAP_MSIX as u32));
    assert_eq!(pcie >> 16 & 0xf0, 0, "endpoint");
    let msix = c.cfg32(CAP_MSIX as u64);
    assert_eq!(
        (msix & 0xff, msix >> 8 & 0xff),
        (0x11, 0),
        "last capability"
    );
    assert_eq!((msix >> 16) & 0x7ff, vectors - 1, "table size");
    let (table, pba) = (c.cfg32(CAP_MSIX as u64 + 4), c.cfg32(CAP_MSIX as u64 + 8));
    assert_eq!((table & 7, pba & 7), (0, 0), "BIR 0");
    assert!(u64::from(table) + 16 * u64::from(vectors) <= u64::from(pba));
    assert!(u64::from(pba) < bar0);
    let k = FunctionKind::of(family);
    assert_eq!(
        (u64::from(table), u64::from(pba)),
        (k.msix_table(), k.msix_pba())
    );
    // Sizing BAR0.
    c.region_write(region::CONFIG, 0x10, &[0xff; 4]).unwrap();
    c.region_write(region::CONFIG, 0x14, &[0xff; 4]).unwrap();
    let lo = c.cfg32(0x10);
    assert_eq!(u64::from(!(lo & !0xf)) + 1, bar0, "size mask {lo:#x}");
    assert_eq!(c.cfg32(0x14), u32::MAX);
    // IDs do not take writes.
    c.region_write(region::CONFIG, 0, &[0; 4]).unwrap();
    assert_eq!(c.cfg32(0), ids);
    // Beyond config space.
    assert_eq!(
        c.region_read(region::CONFIG, 4093, 4),
        Err(libc::EINVAL as u32)
    );
}

#[test]
fn config_space_mana() {
    check_config(Family::Mana, 0x00ba_1414, 512 << 10, 65);
}

#[test]
fn config_space_mlx5() {
    check_config(Family::Mlx5, 0x101e_15b3, 1 << 20, 64);
}

#[test]
fn mana_identifying_registers() {
    let s = Server::start("vfio-mana-regs", Family::Mana, 2, |_| {});
    let mut c = s.client(0);
    assert_eq!(c.bar32(0x08), Ok(sim::mana::DB_PAGE_BASE));
    assert_eq!(c.bar32(0x10), Ok(sim::mana::DB_PAGE_SIZE));
    assert_eq!(c.bar32(0x18), Ok(sim::mana::SMC_BASE));
    // mana reads the doorbell page base and the SMC offset with readq.
    assert_eq!(c.bar64(0x08), Ok(u64::from(sim::mana::DB_PAGE_BASE)));
    assert_eq!(c.bar64(0x18), Ok(u64::from(sim::mana::SMC_BASE)));
    // A write then a read of the SMC window.
    c.region_write(region::BAR0, 0x100, &0x1234_5678u32.to_le_bytes())
        .unwrap();
    assert_eq!(c.bar32(0x100), Ok(0x1234_5678));
}

#[test]
fn mlx5_identifying_registers_per_function() {
    let s = Server::start("vfio-mlx5-regs", Family::Mlx5, 2, |_| {});
    let mut fresh = Model::new(Family::Mlx5, 2, 0).unwrap();
    let fw = fresh.apply(Entry::Read32 { reg: 0 });
    let cmdif = fresh.apply(Entry::Read32 { reg: 4 });
    assert_eq!(cmdif >> 16, 5, "cmdif_rev 5");
    // Both connected at once (devd exits once every client that connected has gone).
    let mut clients: Vec<Client> = (0..2).map(|f| s.client(f)).collect();
    for (f, c) in clients.iter_mut().enumerate() {
        // The initialization segment is big-endian on the bus, as mlx5_core reads it
        // (ioread32be): cmdif_rev, the upper half of the dword at 4, comes first.
        let raw = c.region_read(region::BAR0, 4, 4).unwrap();
        assert_eq!(raw[..2], [0, 5], "fn{f}: cmdif_rev 5 in bus order");
        assert_eq!(c.bar32_be(0), Ok(fw), "fn{f} fw_rev");
        assert_eq!(c.bar32_be(4), Ok(cmdif), "fn{f} cmdif_rev");
        let mut both = fw.to_be_bytes().to_vec();
        both.extend_from_slice(&cmdif.to_be_bytes());
        assert_eq!(
            c.region_read(region::BAR0, 0, 8),
            Ok(both),
            "fn{f}: one 8-byte read"
        );
        // Each function's BAR0 is its own window: the command queue address of fn1 is not
        // fn0's (written as mlx5_core writes it, iowrite32be).
        let addr = 0x0100_0000 * (f as u32 + 1);
        c.region_write(region::BAR0, 0x14, &addr.to_be_bytes())
            .unwrap();
        assert_eq!(c.bar32_be(0x14).map(|v| v & !0xfff), Ok(addr), "fn{f}");
        assert_eq!(c.bar32_be(0x1fc), Ok(0), "fn{f}: no longer initializing");
        // mlx5_core's health poll reads the health buffer's byte fields (ioread8): a byte
        // or 16-bit read is that part of the register as it lies on the bus.
        for (off, count, want, what) in [
            (5, 1, Ok(vec![5]), "byte read"),
            (4, 2, Ok(vec![0, 5]), "16-bit read"),
            (0x23d, 1, Ok(vec![0]), "health.synd"),
            (5, 2, Err(libc::EINVAL as u32), "misaligned"),
        ] {
            assert_eq!(
                c.region_read(region::BAR0, off, count),
                want,
                "fn{f}: {what}"
            );
        }
        assert_eq!(
            c.region_write(region::BAR0, 0x18, &[1]),
            Err(libc::EINVAL as u32),
            "a byte write"
        );
    }
    assert_eq!(
        clients[0].bar32_be(0x14).map(|v| v & !0xfff),
        Ok(0x0100_0000),
        "fn1's write did not reach fn0's window"
    );
}

const RAM: u64 = 4 << 20;
const DATA: u64 = 0x60000;

/// A ConnectX model with, on port `port`, a CQ (64 entries at [`CQ`], MSI-X vector `intr`
/// of the function) and an SQ (64 WQEBBs at [`SQ`]); returns (cqn, sqn) through `tx`.
pub fn mlx5_queues(m: &mut Mlx5Model, port: usize, intr: u16) -> (u32, u32) {
    m.set_link(0, true).unwrap();
    m.set_link(1, true).unwrap();
    mlx5_cq_sq(m, port, port as u16 * MODEL_VECTORS_PER_PORT + intr)
}

/// Lays out the CQ (hardware-owned) and a SEND of `len` bytes at `addr` at SQ index 0;
/// returns the doorbell's 8 bytes.
pub fn mlx5_post(g: &GuestRam, sqn: u32, addr: u64, len: u32) -> [u8; 8] {
    g.put(CQ, &vec![0u8; 64 * 64]);
    for i in 0..64 {
        g.put(CQ + i * 64 + 63, &[0xf1]);
    }
    g.put(CQ_DBR, &[0; 8]);
    g.put(SQ, &vec![0u8; 64 * 64]);
    mlx5_send_wqe(g, sqn, addr, len)
}

/// The CQ arm doorbell's 8 bytes for `cqn` (sn 0, ci 0).
pub fn mlx5_arm(cqn: u32) -> [u8; 8] {
    let mut b = [0u8; 8];
    b[4..].copy_from_slice(&cqn.to_be_bytes());
    b
}

/// The opcode nibble of the CQE at slot 0.
pub fn cqe_opcode(g: &GuestRam) -> u8 {
    g.get::<64>(CQ)[63] >> 4
}

#[test]
fn dma_map_and_msix_eventfds_carry_a_send_of_function_1() {
    // Port 1 = function 1; its CQ raises its MSI-X index 3.
    let s = Server::start("vfio-dma", Family::Mlx5, 2, |m| {
        let ids = mlx5_queues(m.mlx5().unwrap(), 1, 3);
        assert_eq!(ids.0 & 0xff, 0x40, "port 1's first CQ");
    });
    let g = GuestRam::new(RAM);
    let mut c0 = s.client(0);
    let mut c1 = s.client(1);
    // QEMU maps guest RAM on every function's connection; a ROM range comes without fd.
    for c in [&mut c0, &mut c1] {
        c.map_ram(&g);
        c.dma_map(None, 0, 0xfffc_0000, 0x40000, proto::DMA_READ)
            .unwrap();
    }
    let ev = c1.msix_eventfd(3);
    let sqn = sim::mlx5::SQN_BASE + 64;
    let cqn = sim::mlx5::CQN_BASE + 64;
    g.put(DATA, &[0x11; 64]);
    let db = mlx5_post(&g, sqn, DATA, 64);
    // Function 1's BAR0 is 0-based: its API UAR is at api_uar_offset(0) in its BAR.
    let uar = u64::from(api_uar_offset(0));
    c1.region_write(
        region::BAR0,
        uar + u64::from(CQ_ARM_DOORBELL),
        &mlx5_arm(cqn),
    )
    .unwrap();
    c1.region_write(region::BAR0, uar + u64::from(SQ_DOORBELL), &db)
        .unwrap();
    assert_eq!(
        cqe_opcode(&g),
        sim::mlx5::consts::CQE_REQ,
        "a good send completion"
    );
    assert_eq!(eventfd_count(&ev), 1, "fn1's MSI-X 3 fired");
    assert!(g.canary_intact());
    // Without its eventfd (disabled: count 0, DATA_NONE|TRIGGER), the interrupt is dropped.
    c1.set_irqs(irq::DATA_NONE | irq::ACTION_TRIGGER, irq::MSIX, 0, 0, &[])
        .unwrap();
    // A second send (SQ index 1) with the CQ armed again for ci 1.
    let mut w = g.get::<64>(SQ).to_vec();
    w[0..4].copy_from_slice(&((1u32 << 8) | 0x0a).to_be_bytes());
    g.put(SQ + 64, &w);
    g.put(SQ_DBR + 4, &2u32.to_be_bytes());
    let mut arm = mlx5_arm(cqn);
    arm[0..4].copy_from_slice(&1u32.to_be_bytes());
    c1.region_write(region::BAR0, uar + u64::from(CQ_ARM_DOORBELL), &arm)
        .unwrap();
    c1.region_write(region::BAR0, uar + u64::from(SQ_DOORBELL), &w[..8])
        .unwrap();
    assert_eq!(g.get::<64>(CQ + 64)[63] >> 4, sim::mlx5::consts::CQE_REQ);
    assert_eq!(eventfd_count(&ev), 0, "no eventfd: nothing sent");
    drop((c0, c1));
    let (r, stats) = s.join();
    assert_eq!(r, Ok(()));
    assert_eq!(stats[1].irqs_sent, 1);
    assert_eq!(stats[1].irqs_dropped, 1);
    assert_eq!(stats[1].bar_writes, 4);
    assert_eq!(stats[0].bar_writes, 0);
}

#[test]
fn set_irqs_data_none_triggers_and_count_zero_disables() {
    let s = Server::start("vfio-irqs", Family::Mana, 1, |_| {});
    let mut c = s.client(0);
    let evs = eventfds(3);
    let fds: Vec<_> = evs.iter().map(|e| e.as_fd()).collect();
    c.set_irqs(
        irq::DATA_EVENTFD | irq::ACTION_TRIGGER,
        irq::MSIX,
        62,
        3,
        &fds,
    )
    .unwrap();
    c.set_irqs(irq::DATA_NONE | irq::ACTION_TRIGGER, irq::MSIX, 63, 2, &[])
        .unwrap();
    assert_eq!(
        evs.iter().map(eventfd_count).collect::<Vec<_>>(),
        vec![0, 1, 1]
    );
    c.set_irqs(irq::DATA_NONE | irq::ACTION_TRIGGER, irq::MSIX, 0, 0, &[])
        .unwrap();
    c.set_irqs(irq::DATA_NONE | irq::ACTION_TRIGGER, irq::MSIX, 62, 3, &[])
        .unwrap();
    assert_eq!(
        evs.iter().map(eventfd_count).collect::<Vec<_>>(),
        vec![0, 0, 0],
        "disabled"
    );
}

#[test]
fn device_reset_of_one_mlx5_function() {
    let s = Server::start("vfio-reset", Family::Mlx5, 2, |m| {
        mlx5_queues(m.mlx5().unwrap(), 0, 1);
    });
    let mut c0 = s.client(0);
    let mut c1 = s.client(1);
    for c in [&mut c0, &mut c1] {
        c.region_write(region::BAR0, 0x14, &0x0010_0000u32.to_be_bytes())
            .unwrap();
        assert_eq!(c.bar32_be(0x1fc), Ok(0));
    }
    // fn0: MSI-X enabled, BAR0 assigned, an eventfd set.
    c0.region_write(region::CONFIG, CAP_MSIX as u64 + 3, &[0x80])
        .unwrap();
    c0.region_write(region::CONFIG, 0x10, &0xfe00_0000u32.to_le_bytes())
        .unwrap();
    let ev = c0.msix_eventfd(1);
    assert_eq!(c0.call(cmd::DEVICE_RESET, &[], &[]), Ok(vec![]));
    // fn0 is back at power-on: ready, its SQ gone, config space reset, no eventfd.
    assert_eq!(c0.bar32_be(0x1fc), Ok(0), "ready from power-on");
    assert_eq!(
        c0.bar32_be(0x14).map(|v| v & !0xfff),
        Ok(0),
        "no command queue address"
    );
    assert_eq!(c0.cfg32(CAP_MSIX as u64) >> 31, 0, "MSI-X disabled");
    assert_eq!(c0.cfg32(0x10), 0xc, "BAR0 unassigned");
    c0.set_irqs(irq::DATA_NONE | irq::ACTION_TRIGGER, irq::MSIX, 1, 1, &[])
        .unwrap();
    assert_eq!(eventfd_count(&ev), 0, "the eventfd was dropped");
    // fn1 is untouched.
    assert_eq!(c1.bar32_be(0x1fc), Ok(0));
    assert_eq!(c1.bar32_be(0x14).map(|v| v & !0xfff), Ok(0x0010_0000));
    drop((c0, c1));
    let (r, stats) = s.join();
    assert_eq!(r, Ok(()));
    assert_eq!((stats[0].resets, stats[1].resets), (1, 0));
}

#[test]
fn device_reset_of_the_mana_function() {
    let s = Server::start("vfio-reset-mana", Family::Mana, 2, |_| {});
    let mut c = s.client(0);
    c.region_write(region::BAR0, 0x100, &7u32.to_le_bytes())
        .unwrap();
    assert_eq!(c.bar32(0x100), Ok(7));
    assert_eq!(c.call(cmd::DEVICE_RESET, &[], &[]), Ok(vec![]));
    assert_eq!(c.bar32(0x100), Ok(0), "a fresh device's SMC window");
    assert_eq!(c.bar32(0x08), Ok(sim::mana::DB_PAGE_BASE));
}

#[test]
fn mlx5_model_reset_function_frees_one_functions_objects() {
    let mut m = match Model::new(Family::Mlx5, 2, 0).unwrap() {
        Model::Mlx5(m) => m,
        Model::Mana(_) => unreachable!(),
    };
    let (_, sq0) = mlx5_queues(&mut m, 0, 1);
    let (_, sq1) = mlx5_queues(&mut m, 1, 1);
    let win = sim::mlx5::FUNC_BAR_SIZE;
    m.mmio_write32(0x14, 0x0010_0000);
    m.mmio_write32(win + 0x14, 0x0020_0000);
    m.reset_function(0).unwrap();
    assert_eq!(
        m.mmio_read32(0x1fc),
        0,
        "fn0 ready again (no command queue yet)"
    );
    assert_eq!(
        m.mmio_read32(0x14) & !0xfff,
        0,
        "fn0's command queue forgotten"
    );
    assert_eq!(m.mmio_read32(win + 0x1fc), 0, "fn1 still set up");
    assert!(m.destroy_sq(sq0).is_err(), "fn0's SQ was freed");
    assert!(m.destroy_sq(sq1).is_ok(), "fn1's SQ was kept");
    assert!(m.reset_function(2).is_err(), "no such function");
}

#[test]
fn posted_writes_get_no_reply() {
    let s = Server::start("vfio-posted", Family::Mana, 1, |_| {});
    let mut c = s.client(0);
    let p = out()
        .u64(0x100)
        .u32(region::BAR0)
        .u32(4)
        .bytes(&9u32.to_le_bytes())
        .0;
    c.send(cmd::REGION_WRITE, proto::NO_REPLY, &p, &[]);
    // The next reply is the read's, and it sees the posted write.
    assert_eq!(c.bar32(0x100), Ok(9));
}
