//! The device process's command line ([`Cli`]) and what its server shares: the log
//! ([`Log`]), the per-port counters files ([`write_counters_files`]) and how much the model
//! runs per round.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rsnic_core::sim;

use crate::model::{Family, Model, MAX_PORTS};
use crate::vfio::VfioConfig;

/// WQEs the model executes per slice (interrupts are delivered after each slice).
pub const SLICE_WQES: usize = 256;
/// Slices per round before devd looks at its descriptors again.
pub const SLICES_PER_ROUND: usize = 16;
/// Shortest interval between two rewrites of the counters files while busy.
pub const COUNTERS_INTERVAL: Duration = Duration::from_millis(50);

/// The command line's usage text.
pub const USAGE: &str = "usage: rsnic-devd --vfio-user DIR --family mlx5|mana --ports N \
--state-dir DIR [--log FILE]
  --vfio-user DIR   vfio-user server: sockets DIR/fn0.sock, DIR/fn1.sock, ... for QEMU's
                    vfio-user-pci (a ConnectX VF per port, or one MANA VF carrying N vports)
  --family F        mlx5 (ConnectX) or mana
  --ports N         ports, 1..=8
  --state-dir DIR   per-port counters in DIR/port<P>/counters
  --log FILE        append log lines to FILE instead of stderr
SIGTERM or SIGINT stops it; SIGUSR1 unplugs the functions first, as a device that goes
away (each client reads the end of its stream), then stops it.";

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cli {
    /// The vfio-user server ([`crate::vfio::run`]).
    VfioUser(VfioConfig),
}

impl Cli {
    /// Parses the arguments (without the program name).
    pub fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Self, String> {
        let (mut dir, mut family, mut ports, mut state, mut log) = (None, None, None, None, None);
        let mut it = args.into_iter();
        while let Some(flag) = it.next() {
            let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
            match flag.as_str() {
                "--vfio-user" => dir = Some(PathBuf::from(value()?)),
                "--family" => {
                    let v = value()?;
                    family = Some(match v.as_str() {
                        "mlx5" => Family::Mlx5,
                        "mana" => Family::Mana,
                        _ => return Err(format!("--family: unknown family {v:?} (mlx5, mana)")),
                    });
                }
                "--ports" => {
                    let v = value()?;
                    ports = Some(
                        v.parse::<u32>()
                            .ok()
                            .filter(|n| (1..=MAX_PORTS).contains(n))
                            .ok_or_else(|| format!("--ports: {v:?} is not in 1..={MAX_PORTS}"))?,
                    );
                }
                "--state-dir" => state = Some(PathBuf::from(value()?)),
                "--log" => log = Some(PathBuf::from(value()?)),
                _ => return Err(format!("unknown argument {flag:?}")),
            }
        }
        let need = |name: &str| format!("{name} is required");
        Ok(Cli::VfioUser(VfioConfig {
            dir: dir.ok_or_else(|| need("--vfio-user"))?,
            family: family.ok_or_else(|| need("--family"))?,
            ports: ports.ok_or_else(|| need("--ports"))?,
            state_dir: state.ok_or_else(|| need("--state-dir"))?,
            log,
        }))
    }

    /// Runs the mode.
    pub fn run(self) -> Result<(), String> {
        match self {
            Cli::VfioUser(c) => crate::vfio::run(c),
        }
    }
}

/// Where log lines go.
pub struct Log(Option<File>);

impl Log {
    /// Lines to `path` (appended), or to stderr.
    pub fn open(path: Option<&Path>) -> Result<Self, String> {
        match path {
            None => Ok(Log(None)),
            Some(p) => OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .map(|f| Log(Some(f)))
                .map_err(|e| format!("log file {}: {e}", p.display())),
        }
    }

    /// Writes one line, prefixed with `rsnic-devd: `.
    pub fn line(&self, msg: &str) {
        let l = format!("rsnic-devd: {msg}\n");
        let _ = match &self.0 {
            Some(f) => (&*f).write_all(l.as_bytes()),
            None => io::stderr().write_all(l.as_bytes()),
        };
    }
}

/// Adds what failed to an I/O error.
fn ctx<T>(r: io::Result<T>, what: impl FnOnce() -> String) -> Result<T, String> {
    r.map_err(|e| format!("{}: {e}", what()))
}

/// Rewrites the counters file of each of `ports` ports (`<state_dir>/port<P>/counters`,
/// through a temporary file and a rename): the model's counters of the port, the in-kernel
/// host's device-wide `dev_mmio_posted_lost` (0: devd posts nothing), then devd's own
/// transport counters `extra(port)`, one `sim::counters` line each.
pub fn write_counters_files<'a>(
    state_dir: &Path,
    model: &Model,
    ports: u32,
    extra: impl Fn(usize) -> Vec<(&'a str, u64)>,
) -> Result<(), String> {
    for p in 0..ports as usize {
        let mut text = String::new();
        model.counters_text(p, &mut text);
        let _ = sim::counters::line(&mut text, "dev_mmio_posted_lost", 0);
        for (name, v) in extra(p) {
            let _ = sim::counters::line(&mut text, name, v);
        }
        let dir = state_dir.join(format!("port{p}"));
        let tmp = dir.join("counters.tmp");
        let dst = dir.join("counters");
        ctx(std::fs::write(&tmp, text), || format!("{}", tmp.display()))?;
        ctx(std::fs::rename(&tmp, &dst), || format!("{}", dst.display()))?;
    }
    Ok(())
}
