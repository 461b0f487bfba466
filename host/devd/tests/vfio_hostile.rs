//! A hostile vfio-user client: bad region indices, accesses beyond BAR0 or of bad sizes,
//! DMA_MAP/DMA_UNMAP that do not fit the table, descriptors where none belong or too many
//! of them, SET_IRQS out of range, broken framing. Each gets an error reply (or, with the
//! framing lost, the connection closed), devd keeps serving, nothing panics. And the model's
//! DMA never leaves the client's mappings: a ConnectX send from outside them, across two of
//! them, or from memory that came without a descriptor completes with an error CQE while a
//! canary after the mapped RAM stays intact; a MANA send from outside them completes with
//! the device's read-fault error.

mod common;

use std::fs::File;
use std::os::fd::AsFd;

use common::vfio::*;
use rsnic_core::sim;
use rsnic_core::sim::mlx5::{api_uar_offset, SQ_DOORBELL};
use rsnic_devd::model::Family;
use rsnic_devd::vfio::proto::{self, cmd, irq, region, Header, HDR_LEN, MAX_MSG};

const EINVAL: u32 = libc::EINVAL as u32;

#[test]
fn bad_regions_offsets_and_sizes_are_refused_and_the_connection_lives_on() {
    let s = Server::start("vfio-hostile-bar", Family::Mlx5, 1, |_| {});
    let mut c = s.client(0);
    let bar0 = 1u64 << 20;
    // Regions that are not there.
    for r in [1, 2, 5, region::ROM, region::VGA, 9, u32::MAX] {
        assert_eq!(c.region_read(r, 0, 4), Err(EINVAL), "region {r}");
        assert_eq!(c.region_write(r, 0, &[0; 4]), Err(EINVAL), "region {r}");
    }
    // Beyond BAR0, and wrapping.
    for off in [bar0, bar0 - 4 + 8, u64::MAX - 3, u64::MAX - 7, 1 << 63] {
        assert_eq!(c.region_read(region::BAR0, off, 4), Err(EINVAL), "{off:#x}");
        assert_eq!(c.region_read(region::BAR0, off, 8), Err(EINVAL), "{off:#x}");
        assert_eq!(
            c.region_write(region::BAR0, off, &[0; 8]),
            Err(EINVAL),
            "{off:#x}"
        );
    }
    // Sizes other than 1, 2 (reads only), 4 and 8, misaligned accesses.
    for (off, n) in [
        (0, 0),
        (0, 1),
        (0, 2),
        (0, 3),
        (0, 16),
        (2, 4),
        (4, 8),
        (0x14, 8),
        (1, 1),
        (1, 2),
        (3, 2),
    ] {
        // A naturally aligned byte or 16-bit read is a part of a register (mlx5_core's
        // health poll reads the health buffer's bytes so); writes are 4 or 8 bytes.
        let narrow_ok = (n == 1 || (n == 2 && off % 2 == 0)) && off + u64::from(n) <= 4;
        if !narrow_ok {
            assert_eq!(
                c.region_read(region::BAR0, off, n),
                Err(EINVAL),
                "{off:#x}+{n}"
            );
        } else {
            assert!(c.region_read(region::BAR0, off, n).is_ok(), "{off:#x}+{n}");
        }
        let data = vec![0u8; n as usize];
        assert_eq!(
            c.region_write(region::BAR0, off, &data),
            Err(EINVAL),
            "{off:#x}+{n}"
        );
    }
    // More than max_data_xfer_size, and a count that the payload does not carry.
    assert_eq!(
        c.region_read(region::CONFIG, 0, proto::MAX_DATA_XFER as u32 + 1),
        Err(EINVAL)
    );
    let p = out().u64(0x14).u32(region::BAR0).u32(8).bytes(&[0; 4]).0;
    assert_eq!(c.call(cmd::REGION_WRITE, &p, &[]), Err(EINVAL));
    let p = out().u64(0x14).u32(region::BAR0).u32(4).bytes(&[0; 4]).0;
    assert_eq!(
        c.call(cmd::REGION_READ, &p, &[]),
        Err(EINVAL),
        "a read with data"
    );
    assert_eq!(
        c.call(cmd::REGION_READ, &[0; 15], &[]),
        Err(EINVAL),
        "short"
    );
    // Unknown commands.
    for command in [0, 6, 11, 12, 14, 15, 16, 17, 18, 0xffff] {
        assert_eq!(
            c.call(command, &[0; 16], &[]),
            Err(libc::ENOTSUP as u32),
            "command {command}"
        );
    }
    // Still serving.
    assert_eq!(c.bar32(0).map(|v| v != u32::MAX), Ok(true));
    drop(c);
    let (r, stats) = s.join();
    assert_eq!(r, Ok(()));
    // 7 regions x 2, 5 offsets x 3, 11 bad write sizes and 8 bad read sizes (three of the
    // 11 are byte or 16-bit reads a register serves) counted as BAR0 refusals (the rest
    // did not reach BAR0).
    assert_eq!(stats[0].bar_refused, 5 * 3 + 11 + 8);
    assert!(refused_all(&stats[0]), "{:?}", stats[0]);
}

/// Every bad message of the test above was counted as refused.
fn refused_all(s: &rsnic_devd::vfio::FnStats) -> bool {
    s.msgs_refused >= 7 * 2 + 5 * 3 + 9 * 2 + 4 + 10
}

#[test]
fn dma_map_and_unmap_that_do_not_fit_are_refused() {
    let s = Server::start("vfio-hostile-dma", Family::Mana, 1, |_| {});
    let mut c = s.client(0);
    let g = GuestRam::new(2 << 20);
    let rw = proto::DMA_READ | proto::DMA_WRITE;
    let fd = Some(g.fd.as_fd());
    c.dma_map(fd, 0, 0x100000, 0x100000, rw).unwrap();
    // Overlapping an existing mapping, in every way.
    for (gpa, size) in [
        (0x100000, 0x1000),
        (0xff000, 0x2000),
        (0x1ff000, 0x1000),
        (0, 0x300000),
    ] {
        assert_eq!(
            c.dma_map(fd, 0, gpa, size, rw),
            Err(libc::EEXIST as u32),
            "{gpa:#x}"
        );
    }
    // Misaligned, empty, wrapping, unknown flags, beyond the file, several descriptors.
    assert_eq!(c.dma_map(fd, 0, 0x800, 0x1000, rw), Err(EINVAL));
    assert_eq!(c.dma_map(fd, 0, 0x400000, 0x800, rw), Err(EINVAL));
    assert_eq!(c.dma_map(fd, 0, 0x400000, 0, rw), Err(EINVAL));
    assert_eq!(c.dma_map(fd, 0, u64::MAX - 0xfff, 0x2000, rw), Err(EINVAL));
    assert_eq!(c.dma_map(fd, 0, 0x400000, 0x1000, 0x4), Err(EINVAL));
    assert_eq!(
        c.dma_map(fd, 2 << 20, 0x400000, CANARY + 0x1000, rw),
        Err(EINVAL),
        "past the file's end"
    );
    assert_eq!(
        c.dma_map(fd, u64::MAX - 0xfff, 0x400000, 0x2000, rw),
        Err(EINVAL)
    );
    let p = out().u32(32).u32(rw).u64(0).u64(0x400000).u64(0x1000).0;
    assert_eq!(
        c.call(cmd::DMA_MAP, &p, &[g.fd.as_fd(), g.fd.as_fd()]),
        Err(EINVAL),
        "two descriptors"
    );
    let ev = File::from(rsnic_devd::sys::eventfd().unwrap());
    assert_eq!(
        c.dma_map(Some(ev.as_fd()), 0, 0x400000, 0x1000, rw),
        Err(EINVAL),
        "not a file"
    );
    // DMA_UNMAP: only an exact earlier mapping.
    for (gpa, size, what) in [
        (0x100000, 0x1000, "part"),
        (0x0, 0x200000, "superset"),
        (0x800000, 0x1000, "unknown"),
    ] {
        assert_eq!(
            c.dma_unmap(gpa, size, 0),
            Err(libc::ENOENT as u32),
            "{what}"
        );
    }
    assert_eq!(
        c.dma_unmap(0, 0x1000, proto::UNMAP_ALL),
        Err(EINVAL),
        "all, with a range"
    );
    assert_eq!(
        c.dma_unmap(0x100000, 0x100000, proto::UNMAP_DIRTY_BITMAP),
        Err(libc::ENOTSUP as u32)
    );
    assert_eq!(c.call(cmd::DMA_UNMAP, &[0; 20], &[]), Err(EINVAL), "short");
    c.dma_unmap(0x100000, 0x100000, 0).unwrap();
    assert_eq!(
        c.dma_unmap(0x100000, 0x100000, 0),
        Err(libc::ENOENT as u32),
        "twice"
    );
    // Remap, then unmap everything.
    c.dma_map(fd, 0, 0x100000, 0x100000, rw).unwrap();
    c.dma_map(None, 0, 0xc0000, 0x20000, proto::DMA_READ)
        .unwrap();
    c.dma_unmap(0, 0, proto::UNMAP_ALL).unwrap();
    c.dma_map(fd, 0, 0, 0x200000, rw).unwrap();
}

#[test]
fn descriptors_where_none_belong_or_too_many() {
    let s = Server::start("vfio-hostile-fds", Family::Mlx5, 1, |_| {});
    let mut c = s.client(0);
    let evs = eventfds(70);
    let fds: Vec<_> = evs.iter().map(|e| e.as_fd()).collect();
    let set = irq::DATA_EVENTFD | irq::ACTION_TRIGGER;
    // 17 eventfds for 17 vectors: more than max_msg_fds.
    assert_eq!(c.set_irqs(set, irq::MSIX, 0, 17, &fds[..17]), Err(EINVAL));
    // 70: more than one recvmsg takes (the kernel truncates).
    assert_eq!(c.set_irqs(set, irq::MSIX, 0, 16, &fds[..70]), Err(EINVAL));
    // A descriptor with commands that take none.
    let p = out().u64(0).u32(region::CONFIG).u32(4).0;
    assert_eq!(c.call(cmd::REGION_READ, &p, &fds[..1]), Err(EINVAL));
    let info = out().u32(16).u32(0).u32(0).u32(0).0;
    assert_eq!(c.call(cmd::DEVICE_GET_INFO, &info, &fds[..1]), Err(EINVAL));
    // Fewer descriptors than count, or descriptors without DATA_EVENTFD.
    assert_eq!(c.set_irqs(set, irq::MSIX, 0, 3, &fds[..2]), Err(EINVAL));
    assert_eq!(
        c.set_irqs(
            irq::DATA_NONE | irq::ACTION_TRIGGER,
            irq::MSIX,
            0,
            1,
            &fds[..1]
        ),
        Err(EINVAL)
    );
    // Not an eventfd.
    let g = GuestRam::new(1 << 20);
    assert_eq!(
        c.set_irqs(set, irq::MSIX, 0, 1, &[g.fd.as_fd()]),
        Err(EINVAL)
    );
    // Still serving, and 16 at once is fine.
    c.set_irqs(set, irq::MSIX, 48, 16, &fds[..16]).unwrap();
}

#[test]
fn set_irqs_out_of_range() {
    let s = Server::start("vfio-hostile-irqs", Family::Mlx5, 1, |_| {});
    let mut c = s.client(0);
    let ev = File::from(rsnic_devd::sys::eventfd().unwrap());
    let one = [ev.as_fd()];
    let set = irq::DATA_EVENTFD | irq::ACTION_TRIGGER;
    assert_eq!(
        c.set_irqs(set, irq::MSIX, 64, 1, &one),
        Err(EINVAL),
        "past 64"
    );
    assert_eq!(
        c.set_irqs(set, irq::MSIX, u32::MAX, 1, &one),
        Err(EINVAL),
        "wraps"
    );
    assert_eq!(
        c.set_irqs(
            irq::DATA_NONE | irq::ACTION_TRIGGER,
            irq::MSIX,
            60,
            u32::MAX - 10,
            &[]
        ),
        Err(EINVAL)
    );
    for index in [irq::INTX, irq::MSI, irq::ERR, irq::REQ, 5, u32::MAX] {
        assert_eq!(
            c.set_irqs(set, index, 0, 1, &one),
            Err(EINVAL),
            "index {index}"
        );
    }
    // Flags: two data kinds, two actions, none, unknown bits; masking MSI-X.
    for flags in [
        irq::DATA_NONE | irq::DATA_BOOL | irq::ACTION_TRIGGER,
        irq::DATA_NONE | irq::ACTION_TRIGGER | irq::ACTION_MASK,
        irq::ACTION_TRIGGER,
        irq::DATA_NONE,
        irq::DATA_NONE | irq::ACTION_TRIGGER | 0x100,
        irq::DATA_NONE | irq::ACTION_MASK,
        irq::DATA_NONE | irq::ACTION_UNMASK,
    ] {
        assert_eq!(
            c.set_irqs(flags, irq::MSIX, 0, 1, &[]),
            Err(EINVAL),
            "{flags:#x}"
        );
    }
    // count 0 is only "disable all", from 0.
    assert_eq!(
        c.set_irqs(irq::DATA_NONE | irq::ACTION_TRIGGER, irq::MSIX, 3, 0, &[]),
        Err(EINVAL)
    );
    // DATA_BOOL without its bytes.
    assert_eq!(
        c.set_irqs(irq::DATA_BOOL | irq::ACTION_TRIGGER, irq::MSIX, 0, 4, &[]),
        Err(EINVAL)
    );
    assert_eq!(
        c.call(cmd::DEVICE_SET_IRQS, &[0; 19], &[]),
        Err(EINVAL),
        "short"
    );
    c.set_irqs(set, irq::MSIX, 63, 1, &one).unwrap();
}

/// Sends `bytes` as a whole message start and checks devd closed the connection.
fn framing_lost(bytes: &[u8]) {
    let s = Server::start("vfio-hostile-framing", Family::Mana, 1, |_| {});
    let mut c = s.client(0);
    c.send_raw(bytes, &[]);
    assert!(c.closed_by_server(), "{bytes:x?}");
    let (r, _) = s.join();
    assert_eq!(r, Ok(()), "devd ends normally");
}

#[test]
fn broken_framing_closes_the_connection() {
    let h = |size: u32| {
        Header {
            id: 9,
            command: cmd::REGION_READ,
            size,
            flags: 0,
            error: 0,
        }
        .encode()
    };
    framing_lost(&h(0));
    framing_lost(&h(HDR_LEN as u32 - 1));
    framing_lost(&h(MAX_MSG as u32 + 1));
    framing_lost(&h(u32::MAX));
}

#[test]
fn truncated_messages_and_a_reply_from_the_client() {
    let s = Server::start("vfio-hostile-trunc", Family::Mana, 1, |_| {});
    // A header cut short, then the client goes: devd ends normally.
    let c = s.client(0);
    let h = Header {
        id: 1,
        command: cmd::DEVICE_GET_INFO,
        size: 32,
        flags: 0,
        error: 0,
    };
    c.send_raw(&h.encode()[..10], &[]);
    // A client "reply" is dropped without an answer; the connection lives on.
    let mut c2 = Client::connect(&s.sockets[0]);
    assert!(c2.closed_by_server(), "a second client is refused");
    let r = Header {
        flags: proto::TYPE_REPLY,
        size: HDR_LEN as u32,
        ..h
    };
    drop(c);
    let (res, stats) = s.join();
    assert_eq!(res, Ok(()));
    assert_eq!(stats[0].msgs_refused, 0);
    let _ = r;

    let s = Server::start("vfio-hostile-reply", Family::Mana, 1, |_| {});
    let mut c = s.client(0);
    c.send_raw(&r.encode(), &[]);
    // A message whose body is cut short waits for the rest: the next bytes complete it.
    let p = out().u64(0x08).u32(region::BAR0).u32(4).0;
    let h = Header {
        id: 77,
        command: cmd::REGION_READ,
        size: (HDR_LEN + p.len()) as u32,
        flags: 0,
        error: 0,
    };
    let mut m = h.encode().to_vec();
    m.extend_from_slice(&p);
    c.send_raw(&m[..20], &[]);
    std::thread::sleep(std::time::Duration::from_millis(50));
    c.send_raw(&m[20..], &[]);
    let (rh, rp) = c.recv().unwrap();
    assert_eq!(
        (rh.id, rh.flags),
        (77, proto::TYPE_REPLY),
        "only the read is answered"
    );
    assert_eq!(rp[16..], sim::mana::DB_PAGE_BASE.to_le_bytes());
    drop(c);
    let (res, stats) = s.join();
    assert_eq!(res, Ok(()));
    assert_eq!(stats[0].msgs_refused, 1, "the client's reply");
}

// The model's DMA.

const RAM: u64 = 2 << 20;
const CQE_REQ_ERR: u8 = 13;

/// A ConnectX function 0 whose SQ's one SEND reads `len` bytes at `addr`; the device's
/// memory is `maps` (gpa, size, file offset; `None` offset: no descriptor). Returns the
/// CQE's opcode and whether the canary after the RAM file's mapped part is intact.
fn mlx5_send_from(addr: u64, len: u32, maps: &[(u64, u64, Option<u64>)]) -> (u8, bool) {
    let s = Server::start("vfio-hostile-cx", Family::Mlx5, 2, |m| {
        let m = m.mlx5().unwrap();
        m.set_link(0, true).unwrap();
        m.set_link(1, true).unwrap();
        mlx5_cq_sq(m, 0, 1);
    });
    let g = GuestRam::new(RAM);
    let mut c = s.client(0);
    for &(gpa, size, off) in maps {
        let fd = off.map(|_| g.fd.as_fd());
        c.dma_map(
            fd,
            off.unwrap_or(0),
            gpa,
            size,
            proto::DMA_READ | proto::DMA_WRITE,
        )
        .unwrap();
    }
    mlx5_send(&mut c, &g, addr, len);
    (g.get::<64>(CQ)[63] >> 4, g.canary_intact())
}

/// The CQ hardware-owned, then function 0's SQ rung with one SEND of `len` bytes at
/// `addr`; returns once the model ran (a read after the doorbell).
fn mlx5_send(c: &mut Client, g: &GuestRam, addr: u64, len: u32) {
    mlx5_cq_hw_owned(g);
    let db = mlx5_send_wqe(g, sim::mlx5::SQN_BASE, addr, len);
    let uar = u64::from(api_uar_offset(0) + SQ_DOORBELL);
    c.region_write(region::BAR0, uar, &db).unwrap();
    let _ = c.bar32(0);
}

#[test]
fn model_dma_stays_inside_one_mapping() {
    let ram = [(0, RAM, Some(0))];
    // Inside: a good completion (the check that the rest can fail for the right reason).
    assert_eq!(mlx5_send_from(0x60000, 64, &ram), (0, true));
    assert_eq!(mlx5_send_from(RAM - 64, 64, &ram), (0, true));
    // Outside the mapped RAM (the canary's bytes are in the same file, right after it).
    for addr in [RAM - 8, RAM, RAM + 0x1000, u64::MAX - 15, 1 << 63] {
        assert_eq!(
            mlx5_send_from(addr, 64, &ram),
            (CQE_REQ_ERR, true),
            "{addr:#x}"
        );
    }
    // Across two mappings that are contiguous in both address and file.
    let halves = [(0, RAM / 2, Some(0)), (RAM / 2, RAM / 2, Some(RAM / 2))];
    assert_eq!(
        mlx5_send_from(RAM / 2 - 32, 64, &halves),
        (CQE_REQ_ERR, true)
    );
    assert_eq!(mlx5_send_from(RAM / 2, 64, &halves), (0, true));
    // Memory that came without a descriptor (a ROM range), and a hole.
    let rom = [(0, RAM, Some(0)), (0x1000_0000, 0x10000, None)];
    assert_eq!(mlx5_send_from(0x1000_0000, 64, &rom), (CQE_REQ_ERR, true));
    let hole = [
        (0, 0x80000, Some(0)),
        (0x100000, RAM - 0x100000, Some(0x100000)),
    ];
    assert_eq!(mlx5_send_from(0x90000, 64, &hole), (CQE_REQ_ERR, true));
}

#[test]
fn model_dma_after_unmap_is_refused() {
    let s = Server::start("vfio-hostile-unmap", Family::Mlx5, 1, |m| {
        let m = m.mlx5().unwrap();
        m.set_link(0, true).unwrap();
    });
    let g = GuestRam::new(RAM);
    let mut c = s.client(0);
    c.map_ram(&g);
    // Command entries 0 and 1 at 0x1000, hardware-owned, of type 7 with inlen 0: the
    // device answers each with IN_LENGTH_ERR in status_own (it writes the entry).
    const STATUS_OWN: usize = 0x3f;
    for e in 0..2u64 {
        let mut ent = [0u8; 64];
        ent[0] = 7;
        ent[STATUS_OWN] = 1;
        g.put(0x1000 + e * 64, &ent);
    }
    c.region_write(region::BAR0, 0x10, &0u32.to_be_bytes())
        .unwrap();
    c.region_write(region::BAR0, 0x14, &0x1000u32.to_be_bytes())
        .unwrap();
    // Entry 0 while mapped: delivered (the control that this test sees DMA at all).
    c.region_write(region::BAR0, 0x18, &1u32.to_be_bytes())
        .unwrap();
    let _ = c.bar32(0);
    assert_ne!(g.get::<64>(0x1000)[STATUS_OWN], 1, "entry 0 answered");
    // Entry 1 after DMA_UNMAP: the device cannot reach it, nothing is written.
    c.dma_unmap(0, RAM, 0).unwrap();
    c.region_write(region::BAR0, 0x18, &2u32.to_be_bytes())
        .unwrap();
    let _ = c.bar32(0);
    assert_eq!(g.get::<64>(0x1040)[STATUS_OWN], 1, "entry 1 untouched");
    assert!(g.canary_intact());
}

#[test]
fn read_only_mapping_is_not_written() {
    // A CQ in memory the client mapped read-only: the CQE is a DMA fault.
    let s = Server::start("vfio-hostile-ro", Family::Mlx5, 1, |m| {
        let m = m.mlx5().unwrap();
        m.set_link(0, true).unwrap();
        mlx5_cq_sq(m, 0, 1);
    });
    let g = GuestRam::new(RAM);
    let mut c = s.client(0);
    c.dma_map(Some(g.fd.as_fd()), 0, 0, RAM, proto::DMA_READ)
        .unwrap();
    mlx5_send(&mut c, &g, 0x60000, 64);
    assert_eq!(g.get::<64>(CQ)[63], 0xf1, "the CQ was not written");
}

/// MANA's EQ, CQ and SQ for [`mana_send_from`].
const MANA_EQ: u64 = 0x50000;
/// `CQE_TX_HDR_PROCESSING_ERROR`: a send the device could not read.
const CQE_TX_HDR_PROCESSING_ERROR: u8 = 37;
/// `sim::mana::WqeError::ReadFault` as the CQE's vendor_err.
const VENDOR_READ_FAULT: u32 = 9;

/// The MANA function's vport 0 with an EQ, a CQ of 8 entries and a 4 KiB SQ, whose one
/// send reads 64 bytes at `addr`, the device's memory being the whole RAM file; rung through
/// BAR0. Returns the CQE's SQ id, type and vendor error, and whether the canary after the
/// RAM file's mapped part is intact.
fn mana_send_from(addr: u64) -> (bool, u8, u32, bool) {
    use rsnic_core::hwif::mana::fmt::{sq_doorbell, Cqe, Sge, TxOob, WqeHeader, DB_SQ};
    let ids = std::sync::Arc::new(std::sync::Mutex::new((0u32, 0u32)));
    let ids2 = ids.clone();
    let s = Server::start("vfio-hostile-mana", Family::Mana, 2, move |m| {
        let m = m.mana().unwrap();
        let eq = m.create_eq(0, MANA_EQ, 16, 1).unwrap();
        let cq = m.create_cq(0, CQ, 8, Some(eq)).unwrap();
        let sq = m.create_sq(0, SQ, 4096, cq).unwrap();
        *ids2.lock().unwrap() = (cq, sq);
    });
    let (cq_id, sq_id) = *ids.lock().unwrap();
    let g = GuestRam::new(RAM);
    let mut c = s.client(0);
    c.map_ram(&g);
    g.put(MANA_EQ, &[0u8; 16 * 16]);
    g.put(CQ, &[0u8; 8 * 64]);
    let h = WqeHeader {
        num_sge: 1,
        inline_oob_size_div4: 2,
        ..WqeHeader::default()
    };
    let oob = TxOob {
        vcq_num: cq_id,
        ..TxOob::default()
    };
    g.put(SQ, &h.encode());
    g.put(SQ + 8, &oob.encode_short());
    let sge = Sge {
        address: addr,
        mem_key: sim::mana::MANA_MKEY,
        size: 64,
    };
    g.put(SQ + 16, &sge.encode());
    let db = u64::from(sim::mana::doorbell_offset(0, DB_SQ));
    c.region_write(region::BAR0, db, &sq_doorbell(sq_id, 32).to_le_bytes())
        .unwrap();
    // A read after the write: the model ran.
    let _ = c.bar32(0x10);
    let cqe = Cqe::decode(&g.get::<64>(CQ));
    let hdr = cqe.header();
    (
        cqe.wq_num == sq_id && cqe.is_sq,
        hdr.cqe_type,
        hdr.vendor_err,
        g.canary_intact(),
    )
}

#[test]
fn mana_send_from_outside_the_mapping_gets_an_error_cqe() {
    // Inside: a good completion (the check that the rest can fail for the right reason).
    let (own, ty, _, canary) = mana_send_from(0x60000);
    assert!(own && canary);
    assert_ne!(ty, CQE_TX_HDR_PROCESSING_ERROR);
    for addr in [RAM - 8, RAM, RAM + 0x1000, u64::MAX - 15, 1 << 63] {
        assert_eq!(
            mana_send_from(addr),
            (true, CQE_TX_HDR_PROCESSING_ERROR, VENDOR_READ_FAULT, true),
            "addr {addr:#x}"
        );
    }
}
