//! The binary in `--vfio-user` mode, end to end without a VM: it prints one listening line
//! per function socket, a client per socket negotiates and reads its function's IDs, a
//! second client on an occupied socket is refused, and devd exits 0 once every client has
//! closed (or on SIGTERM), leaving the per-port counters files in the ivshmem mode's format
//! and removing its sockets.

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

fn counters(dir: &Path, port: u32) -> String {
    std::fs::read_to_string(dir.join(format!("state/port{port}/counters"))).unwrap()
}

#[test]
fn mlx5_two_functions_serve_and_exit_when_both_close() {
    let t = Tmp::new("vfio-smoke-cx");
    let (mut child, socks) = start(&t, "mlx5", 2);
    assert_eq!(socks.len(), 2);
    let mut clients: Vec<Client> = socks
        .iter()
        .map(|s| {
            let mut c = Client::connect(s);
            c.version().unwrap();
            c
        })
        .collect();
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
fn vfio_mode_refuses_ivshmem_options() {
    let out = Command::new(env!("CARGO_BIN_EXE_rsnic-devd"))
        .args(["--vfio-user", "/tmp/x", "--ram", "/tmp/r"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--ram is not an option of --vfio-user mode"),
        "{err}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_rsnic-devd"))
        .args(["--vfio-user", "/tmp/x", "--family", "mlx5", "--ports", "9"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
