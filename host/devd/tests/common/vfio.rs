//! A vfio-user client for the tests (it plays QEMU, and a hostile QEMU: it can send any
//! bytes and descriptors), an in-process vfio-user devd on a thread, and guest RAM as a
//! memfd with a canary after the part the device is given.

#![allow(dead_code)]

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use rsnic_core::sim::mlx5::{CqConfig, SqConfig};
use rsnic_devd::model::Family;
use rsnic_devd::model::{Mlx5Model, Model};
use rsnic_devd::sys::{self, send_fds, Mapping};
use rsnic_devd::vfio::proto::{self, cmd, Header, HDR_LEN};
use rsnic_devd::vfio::{FnStats, VfioConfig, VfioDevd};

use super::Tmp;

/// What the server thread ends with: `serve`'s result and every function's counters.
pub type Ended = (Result<(), String>, Vec<FnStats>);

/// An in-process devd in `--vfio-user` mode.
pub struct Server {
    pub tmp: Tmp,
    pub sockets: Vec<std::path::PathBuf>,
    stop: File,
    thread: Option<JoinHandle<Ended>>,
}

impl Server {
    /// Starts a server of `family` with `ports` ports; `setup` runs on its model first.
    pub fn start(
        tag: &str,
        family: Family,
        ports: u32,
        setup: impl FnOnce(&mut Model) + Send + 'static,
    ) -> Self {
        let tmp = Tmp::new(tag);
        let cfg = VfioConfig {
            dir: tmp.path().join("sock"),
            family,
            ports,
            state_dir: tmp.path().join("state"),
            log: Some(tmp.path().join("log")),
        };
        let stop = File::from(sys::eventfd().unwrap());
        let stop2: OwnedFd = stop.as_fd().try_clone_to_owned().unwrap();
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::spawn(move || {
            let mut d = VfioDevd::new(cfg).unwrap();
            setup(d.model());
            tx.send(d.sockets()).unwrap();
            let r = d.serve(stop2);
            let n = d.sockets().len();
            (r, (0..n).map(|f| d.stats(f).unwrap()).collect())
        });
        let sockets = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        Self {
            tmp,
            sockets,
            stop,
            thread: Some(thread),
        }
    }

    /// A client connected to function `f`, after VERSION.
    pub fn client(&self, f: usize) -> Client {
        let mut c = Client::connect(&self.sockets[f]);
        c.version().unwrap();
        c
    }

    /// Waits for the server to end by itself (its clients gone); its result and counters.
    pub fn join(mut self) -> Ended {
        self.wait()
    }

    fn wait(&mut self) -> Ended {
        let t = self.thread.take().unwrap();
        for _ in 0..1000 {
            if t.is_finished() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(t.is_finished(), "server did not exit");
        t.join().unwrap()
    }

    /// Stops the server (its stop descriptor) and returns its result and counters.
    pub fn stop(mut self) -> Ended {
        self.stop.write_all(&1u64.to_ne_bytes()).unwrap();
        self.wait()
    }

    /// The log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.tmp.path().join("log")).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.stop.write_all(&1u64.to_ne_bytes());
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
    }
}

/// A reply: its header and payload.
pub type Reply = (Header, Vec<u8>);

/// A vfio-user client.
pub struct Client {
    pub sock: UnixStream,
    next_id: u16,
}

impl Client {
    pub fn connect(path: &std::path::Path) -> Self {
        let sock = UnixStream::connect(path).unwrap();
        sock.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        Self { sock, next_id: 1 }
    }

    /// Sends raw bytes with descriptors (all in one sendmsg).
    pub fn send_raw(&self, bytes: &[u8], fds: &[BorrowedFd<'_>]) {
        let n = send_fds(&self.sock, bytes, fds).unwrap();
        assert_eq!(n, bytes.len());
    }

    /// Sends command `command` with `payload` and `fds`; returns its id.
    pub fn send(
        &mut self,
        command: u16,
        flags: u32,
        payload: &[u8],
        fds: &[BorrowedFd<'_>],
    ) -> u16 {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        let h = Header {
            id,
            command,
            size: (HDR_LEN + payload.len()) as u32,
            flags,
            error: 0,
        };
        let mut m = h.encode().to_vec();
        m.extend_from_slice(payload);
        self.send_raw(&m, fds);
        id
    }

    /// Receives one message.
    pub fn recv(&mut self) -> std::io::Result<Reply> {
        let mut h = [0u8; HDR_LEN];
        self.sock.read_exact(&mut h)?;
        let h = Header::parse(&h).unwrap();
        let mut p = vec![0u8; h.size as usize - HDR_LEN];
        self.sock.read_exact(&mut p)?;
        Ok((h, p))
    }

    /// Sends a command and waits for its reply: the payload, or the reply's errno.
    pub fn call(
        &mut self,
        command: u16,
        payload: &[u8],
        fds: &[BorrowedFd<'_>],
    ) -> Result<Vec<u8>, u32> {
        let id = self.send(command, 0, payload, fds);
        let (h, p) = self.recv().expect("reply");
        assert_eq!((h.id, h.command), (id, command), "reply to the command");
        assert_eq!(h.flags & proto::TYPE_MASK, proto::TYPE_REPLY);
        if h.flags & proto::ERROR != 0 {
            assert!(p.is_empty(), "an error reply is the header only");
            Err(h.error)
        } else {
            Ok(p)
        }
    }

    /// VERSION 0.0 with QEMU's capabilities; the server's reply payload.
    pub fn version(&mut self) -> Result<Vec<u8>, u32> {
        let mut p = vec![0u8, 0, 0, 0];
        p.extend_from_slice(
            b"{\"capabilities\":{\"max_msg_fds\":16,\"max_data_xfer_size\":1048576,\
\"pgsizes\":4096,\"max_dma_maps\":65535}}\0",
        );
        self.call(cmd::VERSION, &p, &[])
    }

    pub fn region_read(&mut self, region: u32, off: u64, count: u32) -> Result<Vec<u8>, u32> {
        let p = out().u64(off).u32(region).u32(count).0;
        let r = self.call(cmd::REGION_READ, &p, &[])?;
        assert_eq!(&r[..16], &p[..], "the reply echoes offset, region, count");
        Ok(r[16..].to_vec())
    }

    pub fn region_write(&mut self, region: u32, off: u64, data: &[u8]) -> Result<(), u32> {
        let p = out()
            .u64(off)
            .u32(region)
            .u32(data.len() as u32)
            .bytes(data)
            .0;
        let r = self.call(cmd::REGION_WRITE, &p, &[])?;
        assert_eq!(&r[..], &p[..16]);
        Ok(())
    }

    pub fn cfg32(&mut self, off: u64) -> u32 {
        let b = self.region_read(proto::region::CONFIG, off, 4).unwrap();
        u32::from_le_bytes(b.try_into().unwrap())
    }

    pub fn bar32(&mut self, off: u64) -> Result<u32, u32> {
        let b = self.region_read(proto::region::BAR0, off, 4)?;
        Ok(u32::from_le_bytes(b.try_into().unwrap()))
    }

    /// A 32-bit read of a big-endian register (a ConnectX's), as `ioread32be` reads it.
    pub fn bar32_be(&mut self, off: u64) -> Result<u32, u32> {
        let b = self.region_read(proto::region::BAR0, off, 4)?;
        Ok(u32::from_be_bytes(b.try_into().unwrap()))
    }

    pub fn bar64(&mut self, off: u64) -> Result<u64, u32> {
        let b = self.region_read(proto::region::BAR0, off, 8)?;
        Ok(u64::from_le_bytes(b.try_into().unwrap()))
    }

    pub fn dma_map(
        &mut self,
        fd: Option<BorrowedFd<'_>>,
        offset: u64,
        gpa: u64,
        size: u64,
        flags: u32,
    ) -> Result<(), u32> {
        let p = out().u32(32).u32(flags).u64(offset).u64(gpa).u64(size).0;
        let fds: Vec<BorrowedFd<'_>> = fd.into_iter().collect();
        self.call(cmd::DMA_MAP, &p, &fds)
            .map(|r| assert!(r.is_empty()))
    }

    /// DMA_MAP of all of `g`'s RAM (not its canary) at guest address 0, readable and
    /// writable by the device.
    pub fn map_ram(&mut self, g: &GuestRam) {
        self.dma_map(
            Some(g.fd.as_fd()),
            0,
            0,
            g.ram,
            proto::DMA_READ | proto::DMA_WRITE,
        )
        .unwrap();
    }

    pub fn dma_unmap(&mut self, gpa: u64, size: u64, flags: u32) -> Result<(), u32> {
        let p = out().u32(24).u32(flags).u64(gpa).u64(size).0;
        let r = self.call(cmd::DMA_UNMAP, &p, &[])?;
        assert_eq!(r, p, "DMA_UNMAP echoes the request");
        Ok(())
    }

    pub fn set_irqs(
        &mut self,
        flags: u32,
        index: u32,
        start: u32,
        count: u32,
        fds: &[BorrowedFd<'_>],
    ) -> Result<(), u32> {
        let p = out()
            .u32(20 + 4 * fds.len() as u32)
            .u32(flags)
            .u32(index)
            .u32(start)
            .u32(count)
            .0;
        self.call(cmd::DEVICE_SET_IRQS, &p, fds)
            .map(|r| assert!(r.is_empty()))
    }

    /// A new eventfd, set (SET_IRQS) as the trigger of MSI-X vector `vector`.
    pub fn msix_eventfd(&mut self, vector: u32) -> File {
        let ev = File::from(sys::eventfd().unwrap());
        let flags = proto::irq::DATA_EVENTFD | proto::irq::ACTION_TRIGGER;
        self.set_irqs(flags, proto::irq::MSIX, vector, 1, &[ev.as_fd()])
            .unwrap();
        ev
    }

    /// REGION_INFO of `index`: (flags, size).
    pub fn region_info(&mut self, index: u32) -> Result<(u32, u64), u32> {
        let p = out().u32(32).u32(0).u32(index).u32(0).u64(0).u64(0).0;
        let r = self.call(cmd::DEVICE_GET_REGION_INFO, &p, &[])?;
        assert_eq!(r.len(), 32);
        assert_eq!(proto::u32_at(&r, 8), Some(index));
        Ok((
            proto::u32_at(&r, 4).unwrap(),
            proto::u64_at(&r, 16).unwrap(),
        ))
    }

    /// IRQ_INFO of `index`: (flags, count).
    pub fn irq_info(&mut self, index: u32) -> Result<(u32, u32), u32> {
        let p = out().u32(16).u32(0).u32(index).u32(0).0;
        let r = self.call(cmd::DEVICE_GET_IRQ_INFO, &p, &[])?;
        assert_eq!(r.len(), 16);
        Ok((
            proto::u32_at(&r, 4).unwrap(),
            proto::u32_at(&r, 12).unwrap(),
        ))
    }

    /// Whether the server closed the connection (EOF within a second).
    pub fn closed_by_server(&mut self) -> bool {
        self.sock
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut b = [0u8; 1];
        matches!(self.sock.read(&mut b), Ok(0))
    }
}

pub fn out() -> proto::Out {
    proto::Out::default()
}

/// Guest RAM: a memfd of `ram + canary` bytes, mapped here; the device gets `0..ram`.
pub struct GuestRam {
    pub fd: OwnedFd,
    pub map: Mapping,
    pub ram: u64,
}

pub const CANARY: u64 = 64 << 10;
pub const CANARY_BYTE: u8 = 0xc3;

impl GuestRam {
    pub fn new(ram: u64) -> Self {
        let fd = sys::memfd("guest-ram").unwrap();
        let f = File::from(fd.try_clone().unwrap());
        f.set_len(ram + CANARY).unwrap();
        let map = Mapping::new(fd.as_fd(), (ram + CANARY) as usize).unwrap();
        assert!(map.write(ram as usize, &[CANARY_BYTE; CANARY as usize]));
        Self { fd, map, ram }
    }

    pub fn put(&self, addr: u64, b: &[u8]) {
        assert!(self.map.write(addr as usize, b));
    }

    pub fn get<const N: usize>(&self, addr: u64) -> [u8; N] {
        let mut b = [0u8; N];
        assert!(self.map.read(addr as usize, &mut b));
        b
    }

    pub fn canary_intact(&self) -> bool {
        let mut b = vec![0u8; CANARY as usize];
        assert!(self.map.read(self.ram as usize, &mut b));
        b.iter().all(|&x| x == CANARY_BYTE)
    }
}

/// `n` new eventfds.
pub fn eventfds(n: usize) -> Vec<File> {
    (0..n)
        .map(|_| File::from(sys::eventfd().unwrap()))
        .collect()
}

/// Reads an eventfd's counter (0 if nothing was signalled).
pub fn eventfd_count(f: &File) -> u64 {
    let mut b = [0u8; 8];
    match (&*f).read(&mut b) {
        Ok(8) => u64::from_ne_bytes(b),
        _ => 0,
    }
}

/// Where the ConnectX tests put their queues in guest RAM: a CQ of 64 entries and its
/// doorbell record, an SQ of 64 WQEBBs and its doorbell record.
pub const CQ: u64 = 0x10000;
pub const CQ_DBR: u64 = 0x20000;
pub const SQ: u64 = 0x30000;
pub const SQ_DBR: u64 = 0x40000;

/// On a ConnectX model, a CQ of 64 entries at [`CQ`] on `port` signalling MSI-X `vector`
/// and an SQ of 64 WQEBBs at [`SQ`] completing to it: (cqn, sqn).
pub fn mlx5_cq_sq(m: &mut Mlx5Model, port: usize, vector: u16) -> (u32, u32) {
    let cqn = m
        .create_cq(&CqConfig {
            port,
            buf: CQ,
            log_size: 6,
            dbr: CQ_DBR,
            vector,
            compress: false,
        })
        .unwrap();
    let sqn = m
        .create_sq(&SqConfig {
            port,
            buf: SQ,
            log_size: 6,
            dbr: SQ_DBR,
            cqn,
        })
        .unwrap();
    (cqn, sqn)
}

/// Every CQE of the CQ at [`CQ`] hardware-owned (zeros, the owner byte 0xf1).
pub fn mlx5_cq_hw_owned(g: &GuestRam) {
    for i in 0..64 {
        g.put(CQ + i * 64, &[0u8; 64]);
        g.put(CQ + i * 64 + 63, &[0xf1]);
    }
}

/// Writes a SEND WQE of SQ `sqn` (CQE requested) reading `len` bytes at `addr` (lkey
/// 0x1234) at SQ index 0 and its doorbell record (pc 1); returns the doorbell's 8 bytes.
pub fn mlx5_send_wqe(g: &GuestRam, sqn: u32, addr: u64, len: u32) -> [u8; 8] {
    let mut w = Vec::new();
    w.extend_from_slice(&0x0au32.to_be_bytes());
    w.extend_from_slice(&((sqn << 8) | 3).to_be_bytes());
    w.extend_from_slice(&[0, 0, 0, 0x08, 0, 0, 0, 0]);
    w.extend_from_slice(&[0u8; 16]);
    w.extend_from_slice(&len.to_be_bytes());
    w.extend_from_slice(&0x1234u32.to_be_bytes());
    w.extend_from_slice(&addr.to_be_bytes());
    g.put(SQ, &w);
    g.put(SQ_DBR, &[0, 0, 0, 0, 0, 0, 0, 1]);
    let mut db = [0u8; 8];
    db.copy_from_slice(&w[..8]);
    db
}
