//! The device process: configuration ([`Config`]), the device's state ([`Devd`]: guest RAM,
//! BAR2, the model, the eventfds) and its main loop ([`Devd::serve`]).

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rsnic_core::dp::xport::{msix_of, Family, Identity, Status, BAR2_SIZE, MAX_PORTS, VPP};
use rsnic_core::sim;

use crate::model::{Irqs, Model, Ram};
use crate::ring::Bar2;
use crate::server;
use crate::sys::{self, ev, Epoll, Mapping};
use crate::vfio::VfioConfig;

/// WQEs the model executes per slice (interrupts are delivered after each slice).
pub const SLICE_WQES: usize = 256;
/// Slices per round before devd looks at its descriptors again.
pub const SLICES_PER_ROUND: usize = 16;
/// Shortest interval between two rewrites of the counters files while busy.
pub const COUNTERS_INTERVAL: Duration = Duration::from_millis(50);

/// The command line's usage text.
pub const USAGE: &str = "usage: rsnic-devd --socket PATH --ram PATH --ram-size BYTES \
--family mlx5|mana --ports N --state-dir DIR [--log FILE]
       rsnic-devd --vfio-user DIR --family mlx5|mana --ports N --state-dir DIR [--log FILE]
  --vfio-user DIR   vfio-user server mode: sockets DIR/fn0.sock, DIR/fn1.sock, ... for
                    QEMU's vfio-user-pci (a ConnectX VF per port, or one MANA VF carrying
                    N vports); the options below without --socket/--ram/--ram-size
  --socket PATH     ivshmem server socket QEMU's ivshmem-doorbell connects to
  --ram PATH        guest RAM file devd creates (QEMU's memory-backend-file mem-path)
  --ram-size BYTES  its size (suffixes K, M, G: powers of 1024), QEMU's size=
  --family F        mlx5 (ConnectX) or mana
  --ports N         ports (functions), 1..=8; QEMU's vectors= must be N*16
  --state-dir DIR   per-port counters in DIR/port<P>/counters
  --log FILE        append log lines to FILE instead of stderr";

/// What the command line says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// The ivshmem server socket.
    pub socket: PathBuf,
    /// The guest RAM file.
    pub ram: PathBuf,
    /// Its size in bytes.
    pub ram_size: u64,
    /// The device's family.
    pub family: Family,
    /// Ports (functions).
    pub ports: u32,
    /// Where the per-port counters files go.
    pub state_dir: PathBuf,
    /// Log file (stderr if none).
    pub log: Option<PathBuf>,
}

fn parse_size(s: &str) -> Option<u64> {
    let (num, mul) = match s.as_bytes().last()? {
        b'K' | b'k' => (&s[..s.len() - 1], 1u64 << 10),
        b'M' | b'm' => (&s[..s.len() - 1], 1 << 20),
        b'G' | b'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<u64>().ok()?.checked_mul(mul)
}

/// What the command line asks for: one of the two modes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cli {
    /// The ivshmem server ([`run`]).
    Ivshmem(Config),
    /// The vfio-user server ([`crate::vfio::run`]).
    VfioUser(VfioConfig),
}

impl Cli {
    /// Parses the arguments (without the program name).
    pub fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Self, String> {
        let args: Vec<String> = args.into_iter().collect();
        if !args.iter().any(|a| a == "--vfio-user") {
            return Config::parse(args).map(Cli::Ivshmem);
        }
        let (mut dir, mut rest) = (None, Vec::new());
        let mut it = args.into_iter();
        while let Some(a) = it.next() {
            match a.as_str() {
                "--vfio-user" => {
                    dir = Some(PathBuf::from(it.next().ok_or("--vfio-user needs a value")?))
                }
                "--socket" | "--ram" | "--ram-size" => {
                    return Err(format!("{a} is not an option of --vfio-user mode"))
                }
                _ => rest.push(a),
            }
        }
        // The shared options, parsed as the ivshmem mode's with its own three filled in.
        let mut full = vec![
            "--socket".to_string(),
            "-".into(),
            "--ram".into(),
            "-".into(),
            "--ram-size".into(),
            "1".into(),
        ];
        full.extend(rest);
        let c = Config::parse(full)?;
        Ok(Cli::VfioUser(VfioConfig {
            dir: dir.ok_or("--vfio-user needs a value")?,
            family: c.family,
            ports: c.ports,
            state_dir: c.state_dir,
            log: c.log,
        }))
    }

    /// Runs the mode.
    pub fn run(self) -> Result<(), String> {
        match self {
            Cli::Ivshmem(c) => run(c),
            Cli::VfioUser(c) => crate::vfio::run(c),
        }
    }
}

impl Config {
    /// Parses the arguments (without the program name).
    pub fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Self, String> {
        let (mut socket, mut ram, mut ram_size, mut family, mut ports, mut state, mut log) =
            (None, None, None, None, None, None, None);
        let mut it = args.into_iter();
        while let Some(flag) = it.next() {
            let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
            match flag.as_str() {
                "--socket" => socket = Some(PathBuf::from(value()?)),
                "--ram" => ram = Some(PathBuf::from(value()?)),
                "--ram-size" => {
                    let v = value()?;
                    ram_size = Some(
                        parse_size(&v)
                            .filter(|&n| n > 0)
                            .ok_or_else(|| format!("--ram-size: bad size {v:?}"))?,
                    );
                }
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
        Ok(Config {
            socket: socket.ok_or_else(|| need("--socket"))?,
            ram: ram.ok_or_else(|| need("--ram"))?,
            ram_size: ram_size.ok_or_else(|| need("--ram-size"))?,
            family: family.ok_or_else(|| need("--family"))?,
            ports: ports.ok_or_else(|| need("--ports"))?,
            state_dir: state.ok_or_else(|| need("--state-dir"))?,
            log,
        })
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

/// What one round of work did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Ring entries applied.
    pub drained: usize,
    /// The model has work left.
    pub more: bool,
    /// When a CQ that moderation holds back wants the model to run (model clock, ns).
    pub deadline: Option<u64>,
}

/// Transport counters of devd, printed with every port's counters.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    /// MSI-X messages sent (eventfd writes).
    pub irqs_sent: u64,
    /// Model vectors with no MSI-X index (interrupt number >= VPP) or no client to send to.
    pub irqs_dropped: u64,
    /// Doorbell wake-ups.
    pub doorbells: u64,
}

/// The device: guest RAM, BAR2, the model and the eventfds.
pub struct Devd {
    cfg: Config,
    ram: Ram,
    bar2: Bar2,
    bar2_fd: OwnedFd,
    /// devd's own vector 0: the guest's doorbell.
    doorbell: File,
    model: Model,
    /// The client's (guest's) eventfds, one per MSI-X vector.
    vectors: Vec<File>,
    start: Instant,
    stats: Stats,
    log: Log,
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

/// Creates (or truncates) the guest RAM file `path`, sized to `size` bytes, and maps it.
pub fn create_ram(path: &Path, size: u64) -> Result<Mapping, String> {
    let f = ctx(
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path),
        || format!("RAM file {}", path.display()),
    )?;
    ctx(f.set_len(size), || {
        format!("RAM file {}: ftruncate to {size}", path.display())
    })?;
    let len = usize::try_from(size).map_err(|_| format!("RAM size {size} too large"))?;
    ctx(Mapping::new(f.as_fd(), len), || {
        format!("RAM file {}: mmap", path.display())
    })
}

impl Devd {
    /// Creates the RAM file, BAR2 and the model of `cfg`; BAR2's status is ready.
    pub fn new(cfg: Config) -> Result<Self, String> {
        let map = create_ram(&cfg.ram, cfg.ram_size)?;
        let ram = Ram::new(map, cfg.ram_size)?;
        Self::with_ram(cfg, ram)
    }

    /// As [`Devd::new`] over guest RAM the caller mapped (`cfg.ram` is not touched).
    pub fn with_ram(cfg: Config, ram: Ram) -> Result<Self, String> {
        let log = Log::open(cfg.log.as_deref())?;
        let bar2_fd = ctx(sys::memfd("rsnic-bar2"), || "BAR2 memfd".into())?;
        let bar2_file = File::from(ctx(bar2_fd.try_clone(), || "BAR2 memfd dup".into())?);
        ctx(bar2_file.set_len(BAR2_SIZE as u64), || {
            "BAR2 memfd: ftruncate".into()
        })?;
        let map = ctx(Mapping::new(bar2_fd.as_fd(), BAR2_SIZE), || {
            "BAR2 memfd: mmap".into()
        })?;
        let bar2 = Bar2::new(
            map,
            Identity {
                family: cfg.family,
                ports: cfg.ports,
                status: Status::NotReady,
                ram_size: ram.size(),
            },
        )?;
        let doorbell = File::from(ctx(sys::eventfd(), || "doorbell eventfd".into())?);
        let model = Model::new(cfg.family, cfg.ports as usize, 0)?;
        for p in 0..cfg.ports {
            let d = cfg.state_dir.join(format!("port{p}"));
            ctx(std::fs::create_dir_all(&d), || {
                format!("state dir {}", d.display())
            })?;
        }
        bar2.set_status(Status::Ready);
        Ok(Self {
            cfg,
            ram,
            bar2,
            bar2_fd,
            doorbell,
            model,
            vectors: Vec::new(),
            start: Instant::now(),
            stats: Stats::default(),
            log,
        })
    }

    /// Guest RAM.
    pub fn ram(&self) -> &Ram {
        &self.ram
    }

    /// BAR2.
    pub fn bar2(&self) -> &Bar2 {
        &self.bar2
    }

    /// The model (tests drive its control path directly).
    pub fn model(&mut self) -> &mut Model {
        &mut self.model
    }

    /// devd's transport counters.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// Sets the client's eventfds (one per MSI-X vector) interrupts go to.
    pub fn set_vectors(&mut self, vectors: Vec<File>) {
        self.vectors = vectors;
    }

    /// The model's clock: monotonic nanoseconds.
    fn now(&self) -> u64 {
        // Starts at 1 s, so that no time the model sees is 0.
        u64::try_from(self.start.elapsed().as_nanos())
            .unwrap_or(u64::MAX)
            .saturating_add(1_000_000_000)
    }

    /// One round: applies the ring's published entries, then runs the model for up to
    /// [`SLICES_PER_ROUND`] slices of [`SLICE_WQES`] WQEs, delivering the interrupts of each
    /// slice after it.
    pub fn work(&mut self) -> Progress {
        let model = &mut self.model;
        let drained = self.bar2.drain(|e| model.apply(e));
        let mut more = false;
        let mut deadline = None;
        for _ in 0..SLICES_PER_ROUND {
            let mut irqs = Irqs::default();
            let now = self.now();
            (more, deadline) = self.model.run(&self.ram, &mut irqs, SLICE_WQES, now);
            self.stats.irqs_dropped += irqs.out_of_range;
            let (vectors, stats) = (&self.vectors, &mut self.stats);
            let (family, ports) = (self.cfg.family, self.cfg.ports);
            irqs.take(|v| {
                match msix_of(family, v, ports).and_then(|i| vectors.get(usize::from(i))) {
                    Some(mut f) => {
                        // A full counter (EAGAIN) still has the interrupt pending.
                        let _ = f.write(&1u64.to_ne_bytes());
                        stats.irqs_sent += 1;
                    }
                    None => stats.irqs_dropped += 1,
                }
            });
            if !more {
                break;
            }
        }
        Progress {
            drained,
            more,
            deadline,
        }
    }

    /// Rewrites every port's counters file (`<state-dir>/port<P>/counters`, through a
    /// temporary file and a rename).
    pub fn write_counters(&self) -> Result<(), String> {
        write_counters_files(&self.cfg.state_dir, &self.model, self.cfg.ports, |_| {
            vec![
                ("devd_ring_entries", self.bar2.applied()),
                ("devd_ring_bad_ops", self.bar2.bad_ops()),
                ("devd_doorbells", self.stats.doorbells),
                ("devd_irqs_sent", self.stats.irqs_sent),
                ("devd_irqs_dropped", self.stats.irqs_dropped),
            ]
        })
    }

    /// Milliseconds until `deadline` (model clock), rounded up; -1 (forever) without one.
    fn timeout_ms(&self, deadline: Option<u64>) -> i32 {
        match deadline {
            None => -1,
            Some(at) => {
                let ns = at.saturating_sub(self.now());
                i32::try_from(ns.div_ceil(1_000_000)).unwrap_or(i32::MAX)
            }
        }
    }

    /// Sends a new client its setup and makes its eventfds the interrupt targets.
    fn connect(&mut self, sock: &UnixStream) -> Result<(), String> {
        let n = self.cfg.ports as usize * usize::from(VPP);
        let mut vectors = Vec::with_capacity(n);
        for i in 0..n {
            vectors.push(File::from(ctx(sys::eventfd(), || {
                format!("eventfd of MSI-X vector {i}")
            })?));
        }
        ctx(
            server::setup_client(
                sock,
                self.bar2_fd.as_fd(),
                std::slice::from_ref(&self.doorbell),
                &vectors,
            ),
            || "ivshmem setup of the client".into(),
        )?;
        self.vectors = vectors;
        Ok(())
    }

    /// The main loop: accepts one client (QEMU) on `listener`, sends it its setup, then
    /// applies the ring and runs the model whenever the doorbell rings or work is left,
    /// sleeping at most until the model's moderation deadline. Returns `Ok` when the client
    /// goes away or `signals` (a signalfd for SIGTERM/SIGINT) fires; the counters files are
    /// written then. A second client is refused (closed).
    pub fn serve(&mut self, listener: UnixListener, signals: OwnedFd) -> Result<(), String> {
        const LISTEN: u64 = 1;
        const CLIENT: u64 = 2;
        const DOORBELL: u64 = 3;
        const SIGNAL: u64 = 4;
        let ep = ctx(Epoll::new(), || "epoll".into())?;
        ctx(listener.set_nonblocking(true), || "listening socket".into())?;
        ctx(ep.add(listener.as_fd(), LISTEN, ev::IN), || {
            "epoll add".into()
        })?;
        ctx(ep.add(signals.as_fd(), SIGNAL, ev::IN), || {
            "epoll add".into()
        })?;
        ctx(ep.add(self.doorbell.as_fd(), DOORBELL, ev::IN), || {
            "epoll add".into()
        })?;
        let mut signals = File::from(signals);
        let mut client: Option<UnixStream> = None;
        let mut events = Vec::new();
        let mut dirty = true;
        let mut last_write: Option<Instant> = None;
        let result = loop {
            let p = self.work();
            let busy = p.drained > 0 || p.more;
            dirty |= busy;
            let timeout = if busy {
                if last_write.map_or(true, |t| t.elapsed() >= COUNTERS_INTERVAL) {
                    self.write_counters()?;
                    last_write = Some(Instant::now());
                    dirty = false;
                }
                0
            } else {
                if dirty {
                    self.write_counters()?;
                    last_write = Some(Instant::now());
                    dirty = false;
                }
                self.timeout_ms(p.deadline)
            };
            events.clear();
            ctx(ep.wait(&mut events, timeout), || "epoll_wait".into())?;
            let mut stop = None;
            for &(token, flags) in &events {
                match token {
                    LISTEN => loop {
                        match listener.accept() {
                            Ok((s, _)) if client.is_some() => {
                                self.log.line("refusing a second client");
                                drop(s);
                            }
                            Ok((s, _)) => {
                                self.connect(&s)?;
                                ctx(s.set_nonblocking(true), || "client socket".into())?;
                                ctx(ep.add(s.as_fd(), CLIENT, ev::IN | ev::RDHUP), || {
                                    "epoll add".into()
                                })?;
                                self.log.line(&format!(
                                    "client connected: peer {}, {} MSI-X vectors",
                                    rsnic_core::dp::xport::GUEST_PEER,
                                    self.vectors.len()
                                ));
                                client = Some(s);
                            }
                            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                            Err(e) => return Err(format!("accept: {e}")),
                        }
                    },
                    CLIENT => {
                        let mut buf = [0u8; 64];
                        let r = client.as_ref().map(|mut s| s.read(&mut buf));
                        match r {
                            Some(Ok(0)) => stop = Some("client closed the connection"),
                            Some(Ok(_)) => {}
                            Some(Err(e)) if e.kind() == io::ErrorKind::WouldBlock => {
                                if flags & (ev::HUP | ev::RDHUP | ev::ERR) != 0 {
                                    stop = Some("client hung up");
                                }
                            }
                            Some(Err(_)) | None => stop = Some("client connection failed"),
                        }
                    }
                    DOORBELL => {
                        let mut b = [0u8; 8];
                        if let Ok(8) = (&self.doorbell).read(&mut b) {
                            self.stats.doorbells += 1;
                        }
                    }
                    SIGNAL => {
                        let mut b = [0u8; 128];
                        let _ = signals.read(&mut b);
                        let signo = u32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
                        stop = Some(if signo == libc::SIGINT as u32 {
                            "SIGINT"
                        } else {
                            "SIGTERM"
                        });
                    }
                    _ => {}
                }
            }
            if let Some(why) = stop {
                break why;
            }
        };
        // Whatever the ring still holds is applied, so the counters are final.
        self.work();
        self.log.line(&format!("{result}: exiting"));
        self.write_counters()
    }
}

/// Runs devd as the binary does: blocks SIGTERM/SIGINT, creates the device, listens on
/// the socket, prints `rsnic-devd: listening on PATH` on stdout, serves one client.
pub fn run(cfg: Config) -> Result<(), String> {
    let signals = ctx(sys::term_signalfd(), || "signalfd".into())?;
    let socket = cfg.socket.clone();
    let mut d = Devd::new(cfg)?;
    let listener = ctx(server::listen(&socket), || {
        format!("socket {}", socket.display())
    })?;
    let mut out = io::stdout();
    let _ = writeln!(out, "rsnic-devd: listening on {}", socket.display());
    let _ = out.flush();
    let r = d.serve(listener, signals);
    if r.is_err() {
        d.bar2.set_status(Status::Failed);
    }
    let _ = std::fs::remove_file(&socket);
    r
}
