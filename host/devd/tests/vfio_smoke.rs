//! The binary in `--vfio-user` mode, end to end without a VM: it prints one listening line
//! per function socket, a client per socket negotiates and reads its function's IDs, a
//! second client on an occupied socket is refused, and devd exits 0 once every client has
//! closed (or on SIGTERM), leaving the per-port counters files and removing its sockets.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use common::vfio::Client;
use common::Tmp;
use rsnic_devd::vfio::proto::region;

fn start(t: &Tmp, family: &str, ports: u32) -> (Child, Vec<PathBuf>) {
    let dir = t.path();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rsnic-devd"))
        .arg("--vfio-user")
        .arg(dir.join("sock"))
        .args(["--family", family, "--ports"])
        .arg(ports.to_string())
        .arg("--state-dir")
        .arg(dir.join("state"))
        .arg("--log")
        .arg(dir.join("log"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let functions = if family == "mana" { 1 } else { ports };
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut socks = Vec::new();
    for f in 0..functions {
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        let p = dir.join("sock").join(format!("fn{f}.sock"));
        assert_eq!(
            line.trim_end(),
            format!("rsnic-devd: listening on {}", p.display())
        );
        socks.push(p);
    }
    (child, socks)
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

/// A client on every socket, each past version negotiation.
fn connect_all(socks: &[PathBuf]) -> Vec<Client> {
    socks
        .iter()
        .map(|s| {
            let mut c = Client::connect(s);
            c.version().unwrap();
            c
        })
        .collect()
}

fn counters(dir: &Path, port: u32) -> String {
    std::fs::read_to_string(dir.join(format!("state/port{port}/counters"))).unwrap()
}

#[test]
fn mlx5_two_functions_serve_and_exit_when_both_close() {
    let t = Tmp::new("vfio-smoke-cx");
    let (mut child, socks) = start(&t, "mlx5", 2);
    assert_eq!(socks.len(), 2);
    let mut clients = connect_all(&socks);
    // A second client on an occupied socket is closed at once.
    let mut extra = Client::connect(&socks[1]);
    assert!(extra.closed_by_server());
    for c in &mut clients {
        assert_eq!(c.cfg32(0), 0x101e_15b3);
        assert_eq!(c.bar32_be(4).map(|v| v >> 16), Ok(5), "cmdif_rev");
        // A refused access shows in the counters.
        assert!(c.region_read(region::BAR0, 1 << 20, 4).is_err());
    }
    drop(clients.pop());
    // One function still connected: devd keeps serving it.
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        child.try_wait().unwrap().is_none(),
        "exited with a client left"
    );
    assert_eq!(clients[0].bar32_be(0x1fc), Ok(0), "fn0 ready");
    drop(clients);
    let status = wait_exit(&mut child);
    assert!(status.success(), "{status}");
    for p in 0..2 {
        let c = counters(t.path(), p);
        for line in [
            "     dev_mmio_posted_lost: 0\n",
            "     devd_ring_bad_ops: 1\n",
            "     devd_irqs_dropped: 0\n",
        ] {
            assert!(c.contains(line), "port {p}: {line:?} in {c}");
        }
        assert!(c.contains("     dev_doorbells: "), "{c}");
    }
    let log = std::fs::read_to_string(t.path().join("log")).unwrap();
    assert!(log.contains("fn1: refusing a second client"), "{log}");
    assert!(log.contains("every client disconnected: exiting"), "{log}");
    for s in socks {
        assert!(!s.exists(), "socket {} left behind", s.display());
    }
}

#[test]
fn mana_one_function_for_all_vports_and_sigterm() {
    let t = Tmp::new("vfio-smoke-mana");
    let (mut child, socks) = start(&t, "mana", 3);
    assert_eq!(socks.len(), 1, "one function carries every vport");
    let mut c = Client::connect(&socks[0]);
    c.version().unwrap();
    assert_eq!(c.cfg32(0), 0x00ba_1414);
    assert_eq!(c.bar32(0x10), Ok(0x1000));
    let st = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let status = wait_exit(&mut child);
    assert!(status.success(), "{status}");
    for p in 0..3 {
        assert!(counters(t.path(), p).contains("devd_vfio_msgs: "));
    }
    let log = std::fs::read_to_string(t.path().join("log")).unwrap();
    assert!(log.contains("SIGTERM: exiting"), "{log}");
}

#[test]
fn bad_command_lines_are_refused() {
    // The ivshmem transport's options are gone with it.
    let out = Command::new(env!("CARGO_BIN_EXE_rsnic-devd"))
        .args(["--vfio-user", "/tmp/x", "--ram", "/tmp/r"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown argument \"--ram\""), "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_rsnic-devd"))
        .args(["--vfio-user", "/tmp/x", "--family", "mlx5", "--ports", "9"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = Command::new(env!("CARGO_BIN_EXE_rsnic-devd"))
        .args(["--family", "mlx5", "--ports", "1", "--state-dir", "/tmp/s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--vfio-user is required"), "{err}");
}

#[test]
fn sigusr1_unplugs_and_each_client_reads_the_end_of_its_stream() {
    use rsnic_devd::vfio::proto::{cmd, Header, HDR_LEN, NO_REPLY};
    use std::io::{Read, Write};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    let t = Tmp::new("vfio-smoke-unplug");
    let (mut child, socks) = start(&t, "mlx5", 2);
    let mut clients = connect_all(&socks);
    // Function 0's client streams posted BAR0 writes (no reply asked, as QEMU posts a
    // doorbell) while devd is unplugged: whatever devd has not read when it closes must not
    // turn the client's next read into a reset (ECONNRESET: QEMU 11.1.3 aborts on it).
    let writer_sock = clients[0].sock.try_clone().unwrap();
    let writing = Arc::new(AtomicBool::new(true));
    let w = writing.clone();
    let writer = std::thread::spawn(move || {
        let mut sent = 0u64;
        let mut m = Header {
            id: 0,
            command: cmd::REGION_WRITE,
            size: (HDR_LEN + 20) as u32,
            flags: NO_REPLY,
            error: 0,
        }
        .encode()
        .to_vec();
        // BAR0 offset 0 (the firmware version: read-only, the write is dropped), 4 bytes.
        m.extend_from_slice(&0u64.to_le_bytes());
        m.extend_from_slice(&region::BAR0.to_le_bytes());
        m.extend_from_slice(&4u32.to_le_bytes());
        m.extend_from_slice(&[0u8; 4]);
        while w.load(Ordering::Relaxed) {
            if (&writer_sock).write_all(&m).is_err() {
                break;
            }
            sent += 1;
        }
        sent
    });
    std::thread::sleep(Duration::from_millis(200));
    let st = Command::new("kill")
        .args(["-USR1", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    // Each client reads the end of its stream: EOF, not an error.
    for (f, c) in clients.iter_mut().enumerate() {
        let mut buf = [0u8; 4096];
        loop {
            match c.sock.read(&mut buf) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => panic!("fn{f}: {e} instead of the end of the stream"),
            }
        }
    }
    let status = wait_exit(&mut child);
    writing.store(false, Ordering::Relaxed);
    let sent = writer.join().unwrap();
    assert!(sent > 0, "the writer sent nothing");
    assert!(status.success(), "{status}");
    let log = std::fs::read_to_string(t.path().join("log")).unwrap();
    for line in [
        "fn0: unplugged: connection closed",
        "fn1: unplugged: connection closed",
        "SIGUSR1: unplugged: exiting",
    ] {
        assert!(log.contains(line), "{line:?} in {log}");
    }
    for s in socks {
        assert!(!s.exists(), "socket {} left behind", s.display());
    }
}
