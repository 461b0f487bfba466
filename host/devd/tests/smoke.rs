//! The binary end to end, without a VM: `rsnic-devd` started with a socket and a temporary
//! RAM file; a client plays QEMU's ivshmem-doorbell: it receives the setup messages in the
//! design's order (version 0, peer id 1, -1 with the 1 MiB BAR2 memfd, peer 0 with one
//! eventfd, peer 1 with one eventfd per MSI-X vector), maps BAR2, checks the identity block,
//! posts a READ32 through the ring, rings peer 0's doorbell eventfd and checks the answer
//! against the model's. A second client is refused; devd exits 0 when the client closes
//! and on SIGTERM, leaving the counters files.

mod common;

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use common::*;
use rsnic_core::dp::xport::{Family, Identity, Status, BAR2_SIZE, IDENTITY_LEN, VPP};
use rsnic_devd::model::Model;
use rsnic_devd::ring::{Entry, GuestRing};
use rsnic_devd::sys::{recv_msg, Mapping};

const PORTS: u32 = 2;
const RAM: u64 = 64 << 20;

fn start(t: &Tmp, family: &str) -> Child {
    let dir = t.path();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rsnic-devd"))
        .arg("--socket")
        .arg(dir.join("sock"))
        .arg("--ram")
        .arg(dir.join("ram"))
        .args(["--ram-size", "64M", "--family", family, "--ports"])
        .arg(PORTS.to_string())
        .arg("--state-dir")
        .arg(dir.join("state"))
        .arg("--log")
        .arg(dir.join("log"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(
        line.trim_end(),
        format!("rsnic-devd: listening on {}", dir.join("sock").display())
    );
    assert_eq!(std::fs::metadata(dir.join("ram")).unwrap().len(), RAM);
    child
}

fn wait_exit(child: &mut Child) -> ExitStatus {
    let t0 = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if t0.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            panic!("rsnic-devd did not exit");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// What the descriptor is: `/proc/self/fd` link text.
fn kind(fd: &OwnedFd) -> String {
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

fn msg(s: &UnixStream) -> (i64, Option<OwnedFd>) {
    recv_msg(s).unwrap()
}

/// Receives and checks the setup; returns BAR2's fd, devd's doorbell and the MSI-X
/// eventfds.
fn setup(s: &UnixStream) -> (OwnedFd, OwnedFd, Vec<OwnedFd>) {
    let (v, fd) = msg(s);
    assert_eq!((v, fd.is_none()), (0, true), "protocol version");
    let (v, fd) = msg(s);
    assert_eq!((v, fd.is_none()), (1, true), "peer id");
    let (v, shm) = msg(s);
    assert_eq!(v, -1);
    let shm = shm.expect("shared-memory fd");
    assert!(kind(&shm).contains("memfd:"), "{}", kind(&shm));
    let len = File::from(shm.try_clone().unwrap())
        .metadata()
        .unwrap()
        .len();
    assert_eq!(len, BAR2_SIZE as u64);
    let (v, db) = msg(s);
    assert_eq!(v, 0, "devd's own vector");
    let db = db.expect("doorbell eventfd");
    assert_eq!(kind(&db), "anon_inode:[eventfd]");
    let mut vectors = Vec::new();
    for i in 0..PORTS * u32::from(VPP) {
        let (v, fd) = msg(s);
        assert_eq!(v, 1, "vector {i} is the client's");
        let fd = fd.expect("vector eventfd");
        assert_eq!(kind(&fd), "anon_inode:[eventfd]");
        vectors.push(fd);
    }
    // Nothing more.
    s.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let e = recv_msg(s).unwrap_err();
    assert!(
        matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
        "{e}"
    );
    s.set_read_timeout(None).unwrap();
    (shm, db, vectors)
}

fn counters(dir: &Path, port: u32) -> String {
    std::fs::read_to_string(dir.join(format!("state/port{port}/counters"))).unwrap()
}

fn smoke(family: Family, name: &str) {
    let t = Tmp::new(&format!("smoke-{name}"));
    let mut child = start(&t, name);
    let s = UnixStream::connect(t.path().join("sock")).unwrap();
    let (shm, db, vectors) = setup(&s);
    assert_eq!(vectors.len(), 32);

    let bar2 = Mapping::new(shm.as_fd(), BAR2_SIZE).unwrap();
    let mut id = [0u8; IDENTITY_LEN];
    assert!(bar2.read(0, &mut id));
    assert_eq!(
        Identity::parse(&id),
        Ok(Identity {
            family,
            ports: PORTS,
            status: Status::Ready,
            ram_size: RAM
        })
    );

    // A second client is refused: closed without a message.
    let s2 = UnixStream::connect(t.path().join("sock")).unwrap();
    s2.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let e = recv_msg(&s2).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof, "{e}");

    // READ32 of register 0 (ConnectX: the init segment's fw_rev; MANA: its first register).
    let g = GuestRing::new(&bar2).unwrap();
    let pos = g.post_read(0).unwrap();
    File::from(db).write_all(&1u64.to_ne_bytes()).unwrap();
    let t0 = Instant::now();
    let got = loop {
        if let Some(v) = g.read_answer(pos) {
            break v;
        }
        assert!(t0.elapsed() < Duration::from_secs(5), "no answer");
        std::thread::sleep(Duration::from_millis(1));
    };
    let want = Model::new(family, PORTS as usize, 0)
        .unwrap()
        .apply(Entry::Read32 { reg: 0 });
    assert_eq!(got, want);
    assert_eq!(g.head(), Some(1));

    drop(s);
    let status = wait_exit(&mut child);
    assert!(status.success(), "{status}");
    for p in 0..PORTS {
        let c = counters(t.path(), p);
        assert!(c.contains("     dev_doorbells: "), "{c}");
        assert!(c.contains("     devd_ring_entries: 1\n"), "{c}");
        assert!(c.contains("     dev_mmio_posted_lost: 0\n"), "{c}");
    }
    let log = std::fs::read_to_string(t.path().join("log")).unwrap();
    assert!(log.contains("refusing a second client"), "{log}");
    assert!(!t.path().join("sock").exists(), "socket left behind");
}

#[test]
fn mlx5_protocol_read32_and_exit_on_close() {
    smoke(Family::Mlx5, "mlx5");
}

#[test]
fn mana_protocol_read32_and_exit_on_close() {
    smoke(Family::Mana, "mana");
}

#[test]
fn sigterm_exits_cleanly_with_counters() {
    let t = Tmp::new("sigterm");
    let mut child = start(&t, "mlx5");
    let s = UnixStream::connect(t.path().join("sock")).unwrap();
    let _ = setup(&s);
    let st = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let status = wait_exit(&mut child);
    assert!(status.success(), "{status}");
    assert!(counters(t.path(), 0).contains("dev_doorbells"));
    let log = std::fs::read_to_string(t.path().join("log")).unwrap();
    assert!(log.contains("SIGTERM: exiting"), "{log}");
}

#[test]
fn bad_arguments_are_refused_with_usage() {
    let out = Command::new(env!("CARGO_BIN_EXE_rsnic-devd"))
        .args(["--family", "e1000"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown family") && err.contains("usage:"),
        "{err}"
    );
}
