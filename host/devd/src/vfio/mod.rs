//! devd as a vfio-user server (QEMU's `vfio-user-pci`, docs/interop/vfio-user.rst):
//! [`VfioDevd`] presents PCI functions with the real vendor/device IDs of the family (a
//! ConnectX VF per port, or one MANA VF carrying every vport), each on its own UNIX socket,
//! all backed by one `sim/` model whose ports are wired back to back.
//!
//! * Config space: [`pci::ConfigSpace`]. BAR0: 4- and 8-byte accesses go to the model's
//!   `mmio_*` entry points (a ConnectX function's BAR0 is the model's window
//!   `f * FUNC_BAR_SIZE ..`); the MSI-X table and PBA at BAR0's end are plain storage (QEMU
//!   emulates them). Any other access is refused with an error reply and counted.
//! * DMA: [`dma::DmaTable`] per connection, the model's memory a lookup across them
//!   ([`dma::GuestMem`]).
//! * Interrupts: a model vector is a function's MSI-X index ([`msix_target`]) whose eventfd
//!   came with SET_IRQS; without one the interrupt is counted as dropped.
//! * DEVICE_RESET: a ConnectX function is reset in the model
//!   (`sim::mlx5::Device::reset_function`), the MANA function gets a fresh model; config
//!   space returns to power-on and the function's IRQ eventfds are dropped.
//!
//! One thread, one epoll loop: the listening sockets, the connections and a stop
//! descriptor (the signalfd) are its descriptors; the model runs after every BAR0 write
//! and whenever it has work left or its moderation deadline passes. Nothing from a client is trusted: a malformed message gets
//! an error reply (or, when the framing is lost, the connection is closed), is counted
//! and logged.

pub mod dma;
pub mod pci;
pub mod proto;

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::Instant;

use rsnic_core::sim;

use crate::devd::{write_counters_files, Log, COUNTERS_INTERVAL, SLICES_PER_ROUND, SLICE_WQES};
use crate::model::{Entry, Family, Irqs, Model, MAX_PORTS, MODEL_VECTORS_PER_PORT};
use crate::sys::{self, ev, recv_fds, send_fds, Epoll};

use dma::{DmaTable, GuestMem};
use pci::{ConfigSpace, FunctionKind, MSIX_WINDOW};
use proto::{cmd, irq, region, Header, Out, HDR_LEN};

/// Log lines about refused messages per connection; later ones are only counted.
const LOG_BUDGET: u32 = 64;
/// How long [`VfioDevd::unplug`] drains what the clients send before it closes.
pub const UNPLUG_DRAIN: std::time::Duration = std::time::Duration::from_millis(300);
/// Messages handled per readiness event of one connection (then the others get a turn).
const MSGS_PER_EVENT: usize = 64;

/// What `--vfio-user` mode's command line says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VfioConfig {
    /// Directory of the sockets `fn<F>.sock`.
    pub dir: PathBuf,
    /// The device's family.
    pub family: Family,
    /// Ports: ConnectX functions, or MANA vports.
    pub ports: u32,
    /// Where the per-port counters files go.
    pub state_dir: PathBuf,
    /// Log file (stderr if none).
    pub log: Option<PathBuf>,
}

impl VfioConfig {
    /// PCI functions presented: one per port for a ConnectX, one for MANA.
    pub fn functions(&self) -> usize {
        match self.family {
            Family::Mlx5 => self.ports as usize,
            Family::Mana => 1,
        }
    }

    /// The socket of function `f`.
    pub fn socket(&self, f: usize) -> PathBuf {
        self.dir.join(format!("fn{f}.sock"))
    }
}

/// The function and its MSI-X index a model vector raises: a ConnectX function `f`'s
/// model vectors are `f * MODEL_VECTORS_PER_PORT + i` (MSI-X index `i`); MANA's model
/// vectors are the driver's MSI-X indices of its one function. `None`: no such vector.
pub fn msix_target(family: Family, vector: u16, functions: usize) -> Option<(usize, u16)> {
    match family {
        Family::Mlx5 => {
            let f = usize::from(vector / MODEL_VECTORS_PER_PORT);
            let i = vector % MODEL_VECTORS_PER_PORT;
            (f < functions && i < pci::MLX5_VECTORS).then_some((f, i))
        }
        Family::Mana => (vector < pci::MANA_VECTORS).then_some((0, vector)),
    }
}

/// Counters of one function.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct FnStats {
    /// Messages handled.
    pub msgs: u64,
    /// Messages refused (error replies, or dropped).
    pub msgs_refused: u64,
    /// BAR0 accesses applied (reads and writes, the MSI-X window included).
    pub bar_accesses: u64,
    /// BAR0 writes applied.
    pub bar_writes: u64,
    /// BAR0 accesses refused (size, alignment, beyond BAR0).
    pub bar_refused: u64,
    /// MSI-X messages sent (eventfd writes).
    pub irqs_sent: u64,
    /// Interrupts with no eventfd to send to.
    pub irqs_dropped: u64,
    /// DEVICE_RESETs.
    pub resets: u64,
}

/// A message as received.
struct Msg {
    hdr: Header,
    payload: Vec<u8>,
    fds: Vec<OwnedFd>,
    /// More descriptors came than devd takes.
    fds_truncated: bool,
}

/// A message being received: the header first, then the rest of `size` bytes.
struct Rx {
    buf: Vec<u8>,
    got: usize,
    hdr: Option<Header>,
    fds: Vec<OwnedFd>,
    truncated: bool,
}

impl Rx {
    fn new() -> Self {
        Self {
            buf: vec![0; HDR_LEN],
            got: 0,
            hdr: None,
            fds: Vec::new(),
            truncated: false,
        }
    }
}

/// A connected client.
struct Conn {
    sock: UnixStream,
    rx: Rx,
    /// Reply bytes not yet sent (the connection is not read while there are any).
    out: Vec<u8>,
    versioned: bool,
    dma: DmaTable,
    log_left: u32,
}

/// One presented PCI function.
struct Function {
    path: PathBuf,
    listener: UnixListener,
    conn: Option<Conn>,
    config: ConfigSpace,
    /// The eventfd of each MSI-X index.
    irqs: Vec<Option<File>>,
    /// Storage behind the MSI-X table and PBA.
    msix: Vec<u8>,
    stats: FnStats,
}

impl Function {
    fn kind(&self) -> FunctionKind {
        self.config.kind()
    }

    /// Back to power-on: config space, MSI-X storage, no eventfds.
    fn power_on(&mut self) {
        self.config.reset();
        self.msix = msix_storage(self.kind());
        self.irqs = (0..self.kind().vectors).map(|_| None).collect();
    }
}

/// The MSI-X table (every vector masked, as after reset) and an empty PBA.
fn msix_storage(k: FunctionKind) -> Vec<u8> {
    let mut v = vec![0u8; MSIX_WINDOW as usize];
    for i in 0..usize::from(k.vectors) {
        v[i * 16 + 12] = 1;
    }
    v
}

/// What handling one message asks of the loop.
#[derive(Default)]
struct Outcome {
    reply: Option<Vec<u8>>,
    close: bool,
}

/// Why a connection stopped being read.
enum ReadError {
    /// The client closed it.
    Closed,
    /// The framing is lost or the socket failed.
    Broken(String),
}

/// The vfio-user server.
pub struct VfioDevd {
    cfg: VfioConfig,
    model: Model,
    funcs: Vec<Function>,
    start: Instant,
    log: Log,
    ever_connected: bool,
    /// BAR0 accesses since the last round (the loop is busy while there are any).
    accesses: usize,
}

/// Adds what failed to an I/O error.
fn ctx<T>(r: io::Result<T>, what: impl FnOnce() -> String) -> Result<T, String> {
    r.map_err(|e| format!("{}: {e}", what()))
}

impl VfioDevd {
    /// Creates the model, the state directories and the listening sockets of `cfg`.
    pub fn new(cfg: VfioConfig) -> Result<Self, String> {
        if cfg.ports == 0 || cfg.ports > MAX_PORTS {
            return Err(format!("ports {} outside 1..={MAX_PORTS}", cfg.ports));
        }
        let log = Log::open(cfg.log.as_deref())?;
        let model = Model::new(cfg.family, cfg.ports as usize, 0)?;
        for p in 0..cfg.ports {
            let d = cfg.state_dir.join(format!("port{p}"));
            ctx(std::fs::create_dir_all(&d), || {
                format!("state dir {}", d.display())
            })?;
        }
        ctx(std::fs::create_dir_all(&cfg.dir), || {
            format!("socket dir {}", cfg.dir.display())
        })?;
        let kind = FunctionKind::of(cfg.family);
        let mut funcs = Vec::new();
        for f in 0..cfg.functions() {
            let path = cfg.socket(f);
            let listener = ctx(listen(&path), || format!("socket {}", path.display()))?;
            ctx(listener.set_nonblocking(true), || "listening socket".into())?;
            let mut func = Function {
                path,
                listener,
                conn: None,
                config: ConfigSpace::new(kind),
                irqs: Vec::new(),
                msix: Vec::new(),
                stats: FnStats::default(),
            };
            func.power_on();
            funcs.push(func);
        }
        Ok(Self {
            cfg,
            model,
            funcs,
            start: Instant::now(),
            log,
            ever_connected: false,
            accesses: 0,
        })
    }

    /// The sockets, in function order.
    pub fn sockets(&self) -> Vec<PathBuf> {
        self.funcs.iter().map(|f| f.path.clone()).collect()
    }

    /// The model (tests drive its control path directly).
    pub fn model(&mut self) -> &mut Model {
        &mut self.model
    }

    /// Function `f`'s counters.
    pub fn stats(&self, f: usize) -> Option<FnStats> {
        self.funcs.get(f).map(|x| x.stats)
    }

    /// The model's clock: monotonic nanoseconds from 1 s.
    fn now(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_nanos())
            .unwrap_or(u64::MAX)
            .saturating_add(1_000_000_000)
    }

    /// One round: runs the model for up to [`SLICES_PER_ROUND`] slices of [`SLICE_WQES`]
    /// WQEs over the connected functions' memory, delivering each slice's interrupts after
    /// it. Returns whether work is left and the model's moderation deadline.
    pub fn work(&mut self) -> (bool, Option<u64>) {
        let mut more = false;
        let mut deadline = None;
        for _ in 0..SLICES_PER_ROUND {
            let mut irqs = Irqs::default();
            let now = self.now();
            {
                let mem = GuestMem {
                    tables: self
                        .funcs
                        .iter()
                        .filter_map(|f| f.conn.as_ref().map(|c| &c.dma))
                        .collect(),
                };
                (more, deadline) = self.model.run(&mem, &mut irqs, SLICE_WQES, now);
            }
            self.deliver(&mut irqs);
            if !more {
                break;
            }
        }
        (more, deadline)
    }

    /// Sends the raised vectors to their functions' eventfds.
    fn deliver(&mut self, irqs: &mut Irqs) {
        let (family, n) = (self.cfg.family, self.funcs.len());
        if irqs.out_of_range > 0 {
            if let Some(f) = self.funcs.first_mut() {
                f.stats.irqs_dropped += irqs.out_of_range;
            }
        }
        let funcs = &mut self.funcs;
        irqs.take(|v| match msix_target(family, v, n) {
            Some((f, i)) => {
                let func = &mut funcs[f];
                match func.irqs.get(usize::from(i)).and_then(Option::as_ref) {
                    Some(mut fd) => {
                        // A full counter (EAGAIN) still has the interrupt pending.
                        let _ = fd.write(&1u64.to_ne_bytes());
                        func.stats.irqs_sent += 1;
                    }
                    None => func.stats.irqs_dropped += 1,
                }
            }
            None => {
                if let Some(f) = funcs.first_mut() {
                    f.stats.irqs_dropped += 1;
                }
            }
        });
    }

    /// Rewrites every port's counters file, with the transport counters of the function
    /// carrying the port.
    pub fn write_counters(&self) -> Result<(), String> {
        write_counters_files(&self.cfg.state_dir, &self.model, self.cfg.ports, |p| {
            let f = match self.cfg.family {
                Family::Mlx5 => p,
                Family::Mana => 0,
            };
            let s = self.funcs.get(f).map(|x| x.stats).unwrap_or_default();
            vec![
                ("devd_ring_entries", s.bar_accesses),
                ("devd_ring_bad_ops", s.bar_refused),
                ("devd_doorbells", s.bar_writes),
                ("devd_irqs_sent", s.irqs_sent),
                ("devd_irqs_dropped", s.irqs_dropped),
                ("devd_vfio_msgs", s.msgs),
                ("devd_vfio_msgs_refused", s.msgs_refused),
                ("devd_vfio_resets", s.resets),
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

    /// The main loop: accepts one client per socket (a second one is closed at once),
    /// handles their messages in order, runs the model. Returns `Ok` when every client that
    /// connected has gone (after at least one did) or `stop` (a signalfd for
    /// SIGTERM/SIGINT/SIGUSR1, or any descriptor that becomes readable) fires, SIGUSR1
    /// unplugging the functions first ([`VfioDevd::unplug`]); the counters files are
    /// written then.
    pub fn serve(&mut self, stop: OwnedFd) -> Result<(), String> {
        const STOP: u64 = u64::MAX;
        let ep = ctx(Epoll::new(), || "epoll".into())?;
        ctx(ep.add(stop.as_fd(), STOP, ev::IN), || "epoll add".into())?;
        for (f, func) in self.funcs.iter().enumerate() {
            ctx(ep.add(func.listener.as_fd(), 2 * f as u64, ev::IN), || {
                "epoll add".into()
            })?;
        }
        let mut stop = File::from(stop);
        let mut events = Vec::new();
        let mut dirty = true;
        let mut last_write: Option<Instant> = None;
        let why = loop {
            let (more, deadline) = self.work();
            let busy = self.accesses > 0 || more;
            self.accesses = 0;
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
                self.timeout_ms(deadline)
            };
            events.clear();
            ctx(ep.wait(&mut events, timeout), || "epoll_wait".into())?;
            let mut why = None;
            for &(token, flags) in &events {
                if token == STOP {
                    let mut b = [0u8; 128];
                    let n = stop.read(&mut b).unwrap_or(0);
                    let signo = if n >= 4 {
                        u32::from_ne_bytes([b[0], b[1], b[2], b[3]])
                    } else {
                        0
                    };
                    why = Some(if signo == libc::SIGUSR1 as u32 {
                        self.unplug(&ep);
                        "SIGUSR1: unplugged"
                    } else if signo == libc::SIGINT as u32 {
                        "SIGINT"
                    } else if signo == libc::SIGTERM as u32 {
                        "SIGTERM"
                    } else {
                        "stop requested"
                    });
                    continue;
                }
                let f = (token / 2) as usize;
                if f >= self.funcs.len() {
                    continue;
                }
                if token % 2 == 0 {
                    self.accept(&ep, f)?;
                } else {
                    self.service(&ep, f, flags);
                }
            }
            if let Some(w) = why {
                break w;
            }
            if self.ever_connected && self.funcs.iter().all(|f| f.conn.is_none()) {
                break "every client disconnected";
            }
        };
        self.log.line(&format!("{why}: exiting"));
        self.write_counters()
    }

    /// Unplugs every function, as a device that goes away mid-run, but so that each client
    /// reads the end of its stream rather than a reset: a UNIX socket closed with messages
    /// it has not read makes the client's next read fail with ECONNRESET, not EOF, and QEMU
    /// 11.1.3's vfio-user client aborts on that (an assertion in `error_setv`), while it
    /// handles EOF (the function's accesses fail from then on: all-ones reads). So devd
    /// shuts its side for writing (the client reads EOF once it has read the replies sent),
    /// reads and drops what the clients send for [`UNPLUG_DRAIN`] (time for them to see
    /// the EOF and stop reading), then closes the connections, their DMA mappings and IRQ
    /// eventfds going with them.
    pub fn unplug(&mut self, ep: &Epoll) {
        use std::net::Shutdown;
        for c in self.funcs.iter().filter_map(|f| f.conn.as_ref()) {
            let _ = c.sock.shutdown(Shutdown::Write);
        }
        let until = Instant::now() + UNPLUG_DRAIN;
        let mut buf = vec![0u8; proto::MAX_MSG];
        loop {
            for c in self.funcs.iter().filter_map(|f| f.conn.as_ref()) {
                // Until it would block: a client that closed reads as 0, an error ends it.
                while matches!((&c.sock).read(&mut buf), Ok(n) if n > 0) {}
            }
            if Instant::now() >= until {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        for f in 0..self.funcs.len() {
            self.close(ep, f, "unplugged");
        }
    }

    /// Accepts the clients waiting on function `f`'s socket.
    fn accept(&mut self, ep: &Epoll, f: usize) -> Result<(), String> {
        loop {
            let r = self.funcs[f].listener.accept();
            match r {
                Ok((s, _)) if self.funcs[f].conn.is_some() => {
                    self.log.line(&format!("fn{f}: refusing a second client"));
                    drop(s);
                }
                Ok((s, _)) => {
                    ctx(s.set_nonblocking(true), || "client socket".into())?;
                    ctx(
                        ep.add(s.as_fd(), 2 * f as u64 + 1, ev::IN | ev::RDHUP),
                        || "epoll add".into(),
                    )?;
                    self.log.line(&format!("fn{f}: client connected"));
                    self.funcs[f].conn = Some(Conn {
                        sock: s,
                        rx: Rx::new(),
                        out: Vec::new(),
                        versioned: false,
                        dma: DmaTable::default(),
                        log_left: LOG_BUDGET,
                    });
                    self.ever_connected = true;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(format!("accept: {e}")),
            }
        }
    }

    /// Drops function `f`'s connection: its DMA mappings and IRQ eventfds go with it (the
    /// device's state stays, as the protocol asks).
    fn close(&mut self, ep: &Epoll, f: usize, why: &str) {
        let func = &mut self.funcs[f];
        if let Some(c) = func.conn.take() {
            let _ = ep.delete(c.sock.as_fd());
            self.log.line(&format!("fn{f}: {why}: connection closed"));
        }
        func.irqs.iter_mut().for_each(|i| *i = None);
    }

    /// A readiness event of function `f`'s connection: sends pending replies, then handles
    /// the messages that arrived.
    fn service(&mut self, ep: &Epoll, f: usize, flags: u32) {
        if self.funcs[f].conn.is_none() {
            return;
        }
        match self.flush(f) {
            Ok(true) => {}
            Ok(false) => {
                if flags & (ev::HUP | ev::ERR) != 0 {
                    self.close(ep, f, "hung up with replies pending");
                }
                return;
            }
            Err(e) => return self.close(ep, f, &format!("send failed: {e}")),
        }
        if let Some(c) = &self.funcs[f].conn {
            let _ = ep.modify(c.sock.as_fd(), 2 * f as u64 + 1, ev::IN | ev::RDHUP);
        }
        for _ in 0..MSGS_PER_EVENT {
            let Some(conn) = self.funcs[f].conn.as_mut() else {
                return;
            };
            let msg = match read_msg(conn) {
                Ok(Some(m)) => m,
                Ok(None) => return,
                Err(ReadError::Closed) => return self.close(ep, f, "client closed"),
                Err(ReadError::Broken(e)) => return self.close(ep, f, &e),
            };
            let no_reply = msg.hdr.no_reply();
            let out = self.handle(f, msg);
            if out.close {
                return self.close(ep, f, "protocol violation");
            }
            if let (Some(r), false) = (out.reply, no_reply) {
                let Some(c) = self.funcs[f].conn.as_mut() else {
                    return;
                };
                c.out.extend_from_slice(&r);
                match self.flush(f) {
                    Ok(true) => {}
                    Ok(false) => {
                        // The client is not reading: wait until it can take more.
                        if let Some(c) = &self.funcs[f].conn {
                            let _ = ep.modify(c.sock.as_fd(), 2 * f as u64 + 1, ev::OUT);
                        }
                        return;
                    }
                    Err(e) => return self.close(ep, f, &format!("send failed: {e}")),
                }
            }
        }
    }

    /// Sends what is pending on function `f`'s connection; `true` when nothing is left.
    fn flush(&mut self, f: usize) -> io::Result<bool> {
        let Some(c) = self.funcs[f].conn.as_mut() else {
            return Ok(true);
        };
        while !c.out.is_empty() {
            match send_fds(&c.sock, &c.out, &[]) {
                Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero)),
                Ok(n) => {
                    c.out.drain(..n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// Logs a refused message of function `f` (within the connection's log budget) and
    /// counts it.
    fn refuse(&mut self, f: usize, hdr: &Header, errno: i32, what: &str) {
        let func = &mut self.funcs[f];
        func.stats.msgs_refused += 1;
        if let Some(c) = func.conn.as_mut() {
            if c.log_left > 0 {
                c.log_left -= 1;
                let more = if c.log_left == 0 {
                    " (further refusals are only counted)"
                } else {
                    ""
                };
                self.log.line(&format!(
                    "fn{f}: refused command {} id {}: {what} (errno {errno}){more}",
                    hdr.command, hdr.id
                ));
            }
        }
    }

    /// Handles one message of function `f`.
    fn handle(&mut self, f: usize, msg: Msg) -> Outcome {
        let hdr = msg.hdr;
        self.funcs[f].stats.msgs += 1;
        if hdr.flags & proto::TYPE_MASK != proto::TYPE_COMMAND {
            // devd sends no commands, so nothing answers to a reply.
            self.refuse(f, &hdr, libc::EINVAL, "not a command");
            return Outcome::default();
        }
        let r = self.dispatch(f, msg);
        match r {
            Ok(payload) => Outcome {
                reply: Some(proto::reply(&hdr, &payload)),
                close: false,
            },
            Err((errno, what)) => {
                self.refuse(f, &hdr, errno, &what);
                Outcome {
                    reply: Some(proto::error_reply(&hdr, errno)),
                    close: false,
                }
            }
        }
    }

    /// Executes one command; the reply's payload, or (errno, what was wrong).
    fn dispatch(&mut self, f: usize, msg: Msg) -> Result<Vec<u8>, (i32, String)> {
        let inval = |what: &str| (libc::EINVAL, what.to_string());
        let Msg {
            hdr,
            payload: p,
            fds,
            fds_truncated,
        } = msg;
        // read_msg keeps at most MAX_MSG_FDS descriptors and marks the rest.
        if fds_truncated {
            return Err(inval("too many file descriptors"));
        }
        if !fds.is_empty() && hdr.command != cmd::DMA_MAP && hdr.command != cmd::DEVICE_SET_IRQS {
            return Err(inval("file descriptors with a command that takes none"));
        }
        let versioned = self.funcs[f].conn.as_ref().is_some_and(|c| c.versioned);
        if hdr.command == cmd::VERSION {
            if versioned {
                return Err(inval("VERSION again"));
            }
            let reply = version(&p).map_err(|e| inval(&e))?;
            if let Some(c) = self.funcs[f].conn.as_mut() {
                c.versioned = true;
            }
            return Ok(reply);
        }
        if !versioned {
            return Err(inval("a command before VERSION"));
        }
        let kind = self.funcs[f].kind();
        let short = || inval("payload too short");
        // A GET_*_INFO request's argsz (its first field) must leave room for the `reply`.
        let argsz_fits = |reply: u32| match proto::u32_at(&p, 0) {
            None => Err(short()),
            Some(argsz) if argsz < reply => Err((
                libc::EINVAL,
                format!("argsz below the reply's {reply} bytes"),
            )),
            Some(_) => Ok(()),
        };
        match hdr.command {
            cmd::DEVICE_GET_INFO => {
                argsz_fits(16)?;
                Ok(Out::default()
                    .u32(16)
                    .u32(proto::DEVICE_FLAG_RESET | proto::DEVICE_FLAG_PCI)
                    .u32(region::COUNT)
                    .u32(irq::COUNT)
                    .0)
            }
            cmd::DEVICE_GET_REGION_INFO => {
                let index = proto::u32_at(&p, 8).ok_or_else(short)?;
                argsz_fits(32)?;
                let rw = region::FLAG_READ | region::FLAG_WRITE;
                let (flags, size) = match index {
                    region::BAR0 => (rw, kind.bar0_size),
                    region::CONFIG => (rw, pci::CONFIG_SIZE as u64),
                    i if i < region::COUNT => (0, 0),
                    _ => return Err(inval("no such region")),
                };
                Ok(Out::default()
                    .u32(32)
                    .u32(flags)
                    .u32(index)
                    .u32(0)
                    .u64(size)
                    .u64(0)
                    .0)
            }
            cmd::DEVICE_GET_IRQ_INFO => {
                let index = proto::u32_at(&p, 8).ok_or_else(short)?;
                argsz_fits(16)?;
                let (flags, count) = match index {
                    irq::MSIX => (irq::INFO_EVENTFD, u32::from(kind.vectors)),
                    irq::INTX | irq::MSI | irq::ERR | irq::REQ => (irq::INFO_EVENTFD, 0),
                    _ => return Err(inval("no such IRQ type")),
                };
                Ok(Out::default().u32(16).u32(flags).u32(index).u32(count).0)
            }
            cmd::DEVICE_SET_IRQS => self.set_irqs(f, &p, fds).map(|()| Vec::new()),
            cmd::REGION_READ | cmd::REGION_WRITE => {
                let (off, index, count) = (
                    proto::u64_at(&p, 0).ok_or_else(short)?,
                    proto::u32_at(&p, 8).ok_or_else(short)?,
                    proto::u32_at(&p, 12).ok_or_else(short)? as usize,
                );
                if count > proto::MAX_DATA_XFER {
                    return Err(inval("count beyond max_data_xfer_size"));
                }
                let write = hdr.command == cmd::REGION_WRITE;
                let want = if write { 16 + count } else { 16 };
                if p.len() != want {
                    return Err(inval("payload size does not match count"));
                }
                let head = Out::default().u64(off).u32(index).u32(count as u32);
                if write {
                    self.region_access(f, index, off, BarOp::Write(&p[16..]))?;
                    Ok(head.0)
                } else {
                    let mut data = vec![0u8; count];
                    self.region_access(f, index, off, BarOp::Read(&mut data))?;
                    Ok(head.bytes(&data).0)
                }
            }
            cmd::DMA_MAP => {
                let (flags, offset, gpa, size) = (
                    proto::u32_at(&p, 4).ok_or_else(short)?,
                    proto::u64_at(&p, 8).ok_or_else(short)?,
                    proto::u64_at(&p, 16).ok_or_else(short)?,
                    proto::u64_at(&p, 24).ok_or_else(short)?,
                );
                let mut fds = fds.into_iter();
                let fd = fds.next();
                if fds.next().is_some() {
                    return Err(inval("more than one descriptor"));
                }
                let conn = self.funcs[f].conn.as_mut().ok_or_else(|| inval("gone"))?;
                conn.dma
                    .map(gpa, size, offset, fd, flags)
                    .map_err(|e| (e, format!("DMA_MAP {gpa:#x}+{size:#x}")))?;
                Ok(Vec::new())
            }
            cmd::DMA_UNMAP => {
                let (flags, gpa, size) = (
                    proto::u32_at(&p, 4).ok_or_else(short)?,
                    proto::u64_at(&p, 8).ok_or_else(short)?,
                    proto::u64_at(&p, 16).ok_or_else(short)?,
                );
                let conn = self.funcs[f].conn.as_mut().ok_or_else(|| inval("gone"))?;
                match flags {
                    0 => conn.dma.unmap(gpa, size).map_err(|e| {
                        (e, format!("DMA_UNMAP {gpa:#x}+{size:#x}: no such mapping"))
                    })?,
                    proto::UNMAP_ALL if gpa == 0 && size == 0 => conn.dma.clear(),
                    fl if fl & proto::UNMAP_DIRTY_BITMAP != 0 => {
                        return Err((libc::ENOTSUP, "dirty page logging".into()))
                    }
                    _ => return Err(inval("DMA_UNMAP flags")),
                }
                Ok(p[..24].to_vec())
            }
            cmd::DEVICE_RESET => {
                self.reset(f);
                Ok(Vec::new())
            }
            c => Err((libc::ENOTSUP, format!("unsupported command {c}"))),
        }
    }

    /// DEVICE_SET_IRQS.
    fn set_irqs(&mut self, f: usize, p: &[u8], fds: Vec<OwnedFd>) -> Result<(), (i32, String)> {
        let inval = |what: &str| (libc::EINVAL, what.to_string());
        let short = || inval("payload too short");
        let flags = proto::u32_at(p, 4).ok_or_else(short)?;
        let index = proto::u32_at(p, 8).ok_or_else(short)?;
        let start = proto::u32_at(p, 12).ok_or_else(short)?;
        let count = proto::u32_at(p, 16).ok_or_else(short)?;
        let (data, action) = (flags & irq::DATA_MASK, flags & irq::ACTION_MASK_ALL);
        if flags & !(irq::DATA_MASK | irq::ACTION_MASK_ALL) != 0
            || data.count_ones() != 1
            || action.count_ones() != 1
        {
            return Err(inval("SET_IRQS flags"));
        }
        if index >= irq::COUNT {
            return Err(inval("no such IRQ type"));
        }
        if data != irq::DATA_EVENTFD && !fds.is_empty() {
            return Err(inval("descriptors without DATA_EVENTFD"));
        }
        let func = &mut self.funcs[f];
        let vectors = if index == irq::MSIX {
            u32::from(func.kind().vectors)
        } else {
            0
        };
        if count == 0 {
            // Disable every IRQ of the type.
            if start != 0 || data != irq::DATA_NONE || action != irq::ACTION_TRIGGER {
                return Err(inval("count 0 is only DATA_NONE|ACTION_TRIGGER from 0"));
            }
            if index == irq::MSIX {
                func.irqs.iter_mut().for_each(|i| *i = None);
            }
            return Ok(());
        }
        let end = start
            .checked_add(count)
            .filter(|&e| e <= vectors)
            .ok_or_else(|| inval("IRQs beyond the type's count"))?;
        if action != irq::ACTION_TRIGGER {
            return Err(inval("MSI-X is not maskable"));
        }
        let range = start as usize..end as usize;
        match data {
            irq::DATA_EVENTFD => {
                if !fds.is_empty() && fds.len() != count as usize {
                    return Err(inval("descriptor count differs from count"));
                }
                let mut files = Vec::with_capacity(fds.len());
                for fd in fds {
                    files.push(eventfd_target(fd).map_err(|e| inval(&e))?);
                }
                let mut files = files.into_iter();
                for i in range {
                    func.irqs[i] = files.next();
                }
            }
            irq::DATA_NONE => {
                for i in range {
                    if let Some(mut fd) = func.irqs[i].as_ref() {
                        let _ = fd.write(&1u64.to_ne_bytes());
                        func.stats.irqs_sent += 1;
                    }
                }
            }
            _ => {
                let bools = p
                    .get(20..20 + count as usize)
                    .ok_or_else(|| inval("DATA_BOOL without its bytes"))?;
                for (i, &b) in range.zip(bools) {
                    if let (true, Some(mut fd)) = (b != 0, func.irqs[i].as_ref()) {
                        let _ = fd.write(&1u64.to_ne_bytes());
                        func.stats.irqs_sent += 1;
                    }
                }
            }
        }
        Ok(())
    }

    /// REGION_READ or REGION_WRITE of config space or BAR0, as `op` says.
    fn region_access(
        &mut self,
        f: usize,
        index: u32,
        off: u64,
        op: BarOp<'_>,
    ) -> Result<(), (i32, String)> {
        let (verb, len) = (op.verb(), op.len());
        match index {
            region::CONFIG => {
                let config = &mut self.funcs[f].config;
                let done = match op {
                    BarOp::Read(d) => config.read(off, d),
                    BarOp::Write(d) => config.write(off, d),
                };
                if done {
                    Ok(())
                } else {
                    Err((libc::EINVAL, format!("config {verb} {off:#x}+{len}")))
                }
            }
            region::BAR0 => {
                let write = matches!(op, BarOp::Write(_));
                self.bar_access(f, off, op)?;
                if write {
                    // The write may have rung a doorbell: let the device act on it now.
                    self.work();
                }
                Ok(())
            }
            _ => Err((libc::EINVAL, format!("{verb} of region {index}"))),
        }
    }

    /// A BAR0 access of function `f`: 4 or 8 bytes, naturally aligned, inside BAR0.
    fn bar_access(&mut self, f: usize, off: u64, op: BarOp<'_>) -> Result<(), (i32, String)> {
        let now = self.now();
        let func = &mut self.funcs[f];
        let kind = func.kind();
        let len = op.len();
        let end = off.checked_add(len as u64);
        // Byte and 16-bit reads are of a part of a 32-bit register (mlx5_core reads the
        // health buffer's byte fields with ioread8); writes are 32 or 64 bits.
        let narrow_read = matches!(op, BarOp::Read(_)) && (len == 1 || len == 2);
        if !(len == 4 || len == 8 || narrow_read)
            || off % len as u64 != 0
            || end.map_or(true, |e| e > kind.bar0_size)
        {
            func.stats.bar_refused += 1;
            return Err((libc::EINVAL, format!("BAR0 access {off:#x}+{len}")));
        }
        func.stats.bar_accesses += 1;
        self.accesses += 1;
        let table = kind.msix_table();
        if off >= table {
            let o = (off - table) as usize;
            match op {
                BarOp::Read(d) => d.copy_from_slice(&func.msix[o..o + len]),
                BarOp::Write(d) => {
                    func.stats.bar_writes += 1;
                    // The PBA is read-only.
                    if off < kind.msix_pba() {
                        func.msix[o..o + len].copy_from_slice(d);
                    }
                }
            }
            return Ok(());
        }
        let base = match self.cfg.family {
            Family::Mlx5 => f as u32 * sim::mlx5::FUNC_BAR_SIZE,
            Family::Mana => 0,
        };
        let reg = base + off as u32;
        // A 32-bit register's value travels in the family's byte order: a ConnectX's
        // registers are big-endian on the bus (mlx5 uses ioread32be/iowrite32be on the
        // initialization segment and its EQ doorbells), MANA's little-endian. A 64-bit
        // write reaches the model in bus order, as the bytes came.
        let big = self.cfg.family == Family::Mlx5;
        let to_bus = |v: u32| {
            if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        // A ConnectX's health counter follows the device's clock: give the model the time
        // of the read (mlx5_core polls the counter while the device may be idle).
        if let Some(m) = self.model.mlx5() {
            m.set_clock(now);
        }
        match op {
            BarOp::Read(d) if len < 4 => {
                // The register's bytes as they lie on the bus, then the ones asked for.
                let within = (reg % 4) as usize;
                let v = self.model.apply(Entry::Read32 { reg: reg - reg % 4 });
                d.copy_from_slice(&to_bus(v)[within..within + len]);
            }
            BarOp::Read(d) => {
                let lo = self.model.apply(Entry::Read32 { reg });
                d[..4].copy_from_slice(&to_bus(lo));
                if len == 8 {
                    let hi = self.model.apply(Entry::Read32 { reg: reg + 4 });
                    d[4..].copy_from_slice(&to_bus(hi));
                }
            }
            BarOp::Write(d) => {
                func.stats.bar_writes += 1;
                let entry = if len == 8 {
                    let mut bytes = [0u8; 8];
                    bytes.copy_from_slice(d);
                    Entry::Write64 { reg, bytes }
                } else {
                    let w = [d[0], d[1], d[2], d[3]];
                    let value = if big {
                        u32::from_be_bytes(w)
                    } else {
                        u32::from_le_bytes(w)
                    };
                    Entry::Write32 { reg, value }
                };
                self.model.apply(entry);
            }
        }
        Ok(())
    }

    /// DEVICE_RESET of function `f`.
    fn reset(&mut self, f: usize) {
        match self.cfg.family {
            Family::Mlx5 => {
                if let Some(m) = self.model.mlx5() {
                    let _ = m.reset_function(f);
                }
            }
            Family::Mana => match Model::new(Family::Mana, self.cfg.ports as usize, 0) {
                Ok(m) => self.model = m,
                Err(e) => self.log.line(&format!("fn{f}: reset: {e}")),
            },
        }
        let func = &mut self.funcs[f];
        func.power_on();
        func.stats.resets += 1;
        self.log.line(&format!("fn{f}: device reset"));
    }
}

/// Listens on `path`, replacing a stale socket left there (anything else there is an
/// error).
pub fn listen(path: &Path) -> io::Result<UnixListener> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_socket() => std::fs::remove_file(path)?,
        Ok(_) => {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "exists and is not a socket",
            ))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    UnixListener::bind(path)
}

/// A region access (BAR0 or config space).
enum BarOp<'a> {
    Read(&'a mut [u8]),
    Write(&'a [u8]),
}

impl BarOp<'_> {
    fn len(&self) -> usize {
        match self {
            BarOp::Read(d) => d.len(),
            BarOp::Write(d) => d.len(),
        }
    }

    /// "read" or "write", for error messages.
    fn verb(&self) -> &'static str {
        match self {
            BarOp::Read(_) => "read",
            BarOp::Write(_) => "write",
        }
    }
}

/// VERSION: the client's proposal `p` (major, minor, optional NUL-terminated JSON); the
/// reply's payload.
fn version(p: &[u8]) -> Result<Vec<u8>, String> {
    let major = proto::u16_at(p, 0).ok_or("payload too short")?;
    if major != proto::VERSION_MAJOR {
        return Err(format!("major version {major}"));
    }
    let json = &p[4..];
    if !json.is_empty()
        && (json.last() != Some(&0) || std::str::from_utf8(&json[..json.len() - 1]).is_err())
    {
        return Err("capabilities are not a NUL-terminated string".into());
    }
    let mut caps = proto::server_capabilities().into_bytes();
    caps.push(0);
    Ok(Out::default()
        .bytes(&proto::VERSION_MAJOR.to_le_bytes())
        .bytes(&proto::VERSION_MINOR.to_le_bytes())
        .bytes(&caps)
        .0)
}

/// An interrupt target from SET_IRQS: it must be an eventfd (a write to anything else
/// could block or land in a file); made non-blocking.
fn eventfd_target(fd: OwnedFd) -> Result<File, String> {
    let link = std::fs::read_link(format!("/proc/self/fd/{}", {
        use std::os::fd::AsRawFd;
        fd.as_raw_fd()
    }))
    .map_err(|e| format!("descriptor: {e}"))?;
    if link.as_os_str() != "anon_inode:[eventfd]" {
        return Err(format!("descriptor is not an eventfd: {}", link.display()));
    }
    sys::set_nonblocking(fd.as_fd()).map_err(|e| format!("eventfd: {e}"))?;
    Ok(File::from(fd))
}

/// Reads what arrived of the next message; `Ok(None)` until it is whole.
fn read_msg(c: &mut Conn) -> Result<Option<Msg>, ReadError> {
    loop {
        let need = c.rx.hdr.map_or(HDR_LEN, |h| h.size as usize);
        if c.rx.got == need {
            if c.rx.hdr.is_none() {
                let h =
                    Header::parse(&c.rx.buf).ok_or_else(|| ReadError::Broken("header".into()))?;
                let size = h.size as usize;
                if !(HDR_LEN..=proto::MAX_MSG).contains(&size) {
                    return Err(ReadError::Broken(format!("message size {size}")));
                }
                c.rx.hdr = Some(h);
                c.rx.buf.resize(size, 0);
                continue;
            }
            let rx = std::mem::replace(&mut c.rx, Rx::new());
            let hdr = rx.hdr.unwrap_or_default();
            let mut payload = rx.buf;
            payload.drain(..HDR_LEN);
            return Ok(Some(Msg {
                hdr,
                payload,
                fds: rx.fds,
                fds_truncated: rx.truncated,
            }));
        }
        let got = c.rx.got;
        match recv_fds(&c.sock, &mut c.rx.buf[got..need]) {
            Ok(r) => {
                if r.len == 0 {
                    return Err(ReadError::Closed);
                }
                c.rx.truncated |= r.truncated;
                for fd in r.fds {
                    if c.rx.fds.len() < proto::MAX_MSG_FDS {
                        c.rx.fds.push(fd);
                    } else {
                        c.rx.truncated = true;
                    }
                }
                c.rx.got += r.len;
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ReadError::Broken(format!("receive: {e}"))),
        }
    }
}

/// Runs `--vfio-user` mode as the binary does: blocks SIGTERM/SIGINT/SIGUSR1, creates the
/// functions, prints `rsnic-devd: listening on PATH` on stdout for each socket, serves
/// until the clients are gone or a signal comes (SIGUSR1 unplugs the functions first:
/// [`VfioDevd::unplug`]), removes the sockets.
pub fn run(cfg: VfioConfig) -> Result<(), String> {
    let signals = ctx(sys::term_signalfd(), || "signalfd".into())?;
    let mut d = VfioDevd::new(cfg)?;
    let mut out = io::stdout();
    for s in d.sockets() {
        let _ = writeln!(out, "rsnic-devd: listening on {}", s.display());
    }
    let _ = out.flush();
    let r = d.serve(signals);
    for s in d.sockets() {
        let _ = std::fs::remove_file(s);
    }
    r
}
