//! The operating-system calls of rsnic-devd, and the only module of the crate with `unsafe`:
//! shared mappings ([`Mapping`], with bounds- and alignment-checked access), memfd, eventfd,
//! signalfd, epoll ([`Epoll`]) and vfio-user's byte stream with descriptors ([`send_fds`],
//! [`recv_fds`]). Everything it exports is safe to call.

#![allow(unsafe_code)]

use std::ffi::CString;
use std::io;
use std::mem;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicU32, AtomicU64};

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// Takes ownership of the descriptor a system call just returned (or its error).
fn owned(r: libc::c_int) -> io::Result<OwnedFd> {
    let fd = cvt(r)?;
    // SAFETY: `fd` was just returned by a successful system call that creates a descriptor;
    // nothing else owns it, and it is closed exactly once, by the returned `OwnedFd`.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// An anonymous memory file (`memfd_create`, close-on-exec), empty: size it with
/// `File::set_len`.
pub fn memfd(name: &str) -> io::Result<OwnedFd> {
    let c = CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `c` is a NUL-terminated string that outlives the call; the flags are valid.
    owned(unsafe { libc::memfd_create(c.as_ptr(), libc::MFD_CLOEXEC) })
}

/// A non-blocking, close-on-exec eventfd with counter 0.
pub fn eventfd() -> io::Result<OwnedFd> {
    // SAFETY: no pointers are passed; the flags are valid.
    owned(unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) })
}

/// The system's page size (mmap offsets are multiples of it).
pub fn page_size() -> usize {
    // SAFETY: sysconf takes no pointers; a failure (-1) falls back to 4 KiB.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(n).ok().filter(|&n| n > 0).unwrap_or(4096)
}

/// Makes the open file description of `fd` non-blocking (`O_NONBLOCK`), so that a write
/// to it can never stall the caller.
pub fn set_nonblocking(fd: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: F_GETFL/F_SETFL take and return plain ints; `fd` is open for the calls.
    unsafe {
        let fl = cvt(libc::fcntl(fd.as_raw_fd(), libc::F_GETFL))?;
        cvt(libc::fcntl(
            fd.as_raw_fd(),
            libc::F_SETFL,
            fl | libc::O_NONBLOCK,
        ))?;
    }
    Ok(())
}

/// Blocks SIGTERM, SIGINT and SIGUSR1 for the calling thread (call it before starting
/// threads) and returns a non-blocking signalfd that becomes readable when one is pending.
pub fn term_signalfd() -> io::Result<OwnedFd> {
    // SAFETY: `set` is a valid, initialised sigset_t (sigemptyset initialises it) living on
    // this stack frame for every call that takes its address; the old mask is not asked for.
    unsafe {
        let mut set: libc::sigset_t = mem::zeroed();
        cvt(libc::sigemptyset(&mut set))?;
        cvt(libc::sigaddset(&mut set, libc::SIGTERM))?;
        cvt(libc::sigaddset(&mut set, libc::SIGINT))?;
        cvt(libc::sigaddset(&mut set, libc::SIGUSR1))?;
        let r = libc::pthread_sigmask(libc::SIG_BLOCK, &set, ptr::null_mut());
        if r != 0 {
            return Err(io::Error::from_raw_os_error(r));
        }
        owned(libc::signalfd(
            -1,
            &set,
            libc::SFD_CLOEXEC | libc::SFD_NONBLOCK,
        ))
    }
}

/// A shared, read-write mapping of a file (`mmap(MAP_SHARED)`), unmapped on drop.
///
/// Other processes (QEMU, the guest) change the bytes at any time: nothing hands out a
/// reference to plain bytes. Access is by copy ([`Mapping::read`], [`Mapping::write`]) or
/// through atomics ([`Mapping::u64_at`], [`Mapping::u32_at`]); every access is checked to
/// lie inside the mapping, atomics to be naturally aligned.
pub struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
    /// Mapped with PROT_WRITE ([`Mapping::write`] refuses otherwise).
    writable: bool,
}

impl Mapping {
    /// Maps the first `len` bytes of `fd` (a file at least that long) shared, read-write.
    pub fn new(fd: BorrowedFd<'_>, len: usize) -> io::Result<Self> {
        Self::with_offset(fd, 0, len, true)
    }

    /// Maps `len` bytes of `fd` from file offset `offset` (a multiple of [`page_size`])
    /// shared, read-write if `writable`, else read-only. The caller checks that the file
    /// holds them (a mapping past the end of a file faults when touched).
    pub fn with_offset(
        fd: BorrowedFd<'_>,
        offset: u64,
        len: usize,
        writable: bool,
    ) -> io::Result<Self> {
        if len == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "cannot map 0 bytes",
            ));
        }
        let off = libc::off_t::try_from(offset)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "offset too large"))?;
        let prot = if writable {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_READ
        };
        // SAFETY: a fresh mapping chosen by the kernel (no address hint), of a descriptor we
        // borrow for the call; the result is checked against MAP_FAILED before use. The
        // kernel checks the offset's alignment and the descriptor's access mode.
        let p = unsafe {
            libc::mmap(
                ptr::null_mut(),
                len,
                prot,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                off,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr = NonNull::new(p.cast::<u8>()).ok_or_else(io::Error::last_os_error)?;
        Ok(Self { ptr, len, writable })
    }

    /// Whether [`Mapping::write`] may write (the mapping is read-write).
    pub fn writable(&self) -> bool {
        self.writable
    }

    /// Length of the mapping in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the mapping is empty (never: [`Mapping::new`] refuses 0 bytes).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Pointer to byte `off` if `off..off + n` lies inside the mapping.
    fn at(&self, off: usize, n: usize) -> Option<*mut u8> {
        let end = off.checked_add(n)?;
        if end > self.len {
            return None;
        }
        // SAFETY: `off <= end <= len`: the result stays inside (or one past) the mapping.
        Some(unsafe { self.ptr.as_ptr().add(off) })
    }

    /// Copies `dst.len()` bytes at `off` into `dst`; `false` (nothing copied) if they do not
    /// lie inside the mapping.
    pub fn read(&self, off: usize, dst: &mut [u8]) -> bool {
        let Some(p) = self.at(off, dst.len()) else {
            return false;
        };
        // SAFETY: `p..p + dst.len()` is inside the live mapping (checked by `at`); `dst` is a
        // distinct Rust buffer, so the ranges do not overlap. The bytes may be changed by
        // another process meanwhile: the copy then sees some mix, as a device's DMA would.
        unsafe { ptr::copy_nonoverlapping(p, dst.as_mut_ptr(), dst.len()) };
        true
    }

    /// Copies `src` to `off`; `false` (nothing written) if it does not fit inside the
    /// mapping or the mapping is read-only.
    pub fn write(&self, off: usize, src: &[u8]) -> bool {
        if !self.writable {
            return false;
        }
        let Some(p) = self.at(off, src.len()) else {
            return false;
        };
        // SAFETY: `p..p + src.len()` is inside the live mapping (checked by `at`), which was
        // mapped PROT_WRITE (checked above: a read-only one would fault);
        // `src` is a distinct Rust buffer. No Rust reference to these bytes exists.
        unsafe { ptr::copy_nonoverlapping(src.as_ptr(), p, src.len()) };
        true
    }

    /// The u64 at `off` as an atomic, if it lies inside the mapping, `off` is 8-aligned
    /// (the mapping is page aligned) and the mapping is read-write (an atomic can store).
    pub fn u64_at(&self, off: usize) -> Option<&AtomicU64> {
        if !self.writable || off % mem::align_of::<AtomicU64>() != 0 {
            return None;
        }
        let p = self.at(off, mem::size_of::<AtomicU64>())?;
        // SAFETY: in bounds (checked by `at`) and aligned (page-aligned base, aligned `off`);
        // the bytes live as long as `self`, which the reference borrows. Every access through
        // it is atomic, which is what the other process sharing the page relies on too; no
        // non-atomic Rust reference to these bytes exists.
        Some(unsafe { &*p.cast::<AtomicU64>() })
    }

    /// The u32 at `off` as an atomic, if it lies inside the mapping, `off` is 4-aligned and
    /// the mapping is read-write.
    pub fn u32_at(&self, off: usize) -> Option<&AtomicU32> {
        if !self.writable || off % mem::align_of::<AtomicU32>() != 0 {
            return None;
        }
        let p = self.at(off, mem::size_of::<AtomicU32>())?;
        // SAFETY: as in `u64_at`, for 4 bytes.
        Some(unsafe { &*p.cast::<AtomicU32>() })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `ptr, len` is the mapping `new` created; no reference into it outlives
        // `self` (they all borrow it).
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// Most descriptors [`recv_fds`] takes from one `recvmsg`; more are a truncation.
pub const MAX_RECV_FDS: usize = 64;

/// Most descriptors [`send_fds`] attaches to one `sendmsg` (the kernel's SCM_MAX_FD).
pub const MAX_SEND_FDS: usize = 253;

/// Sends the bytes of `data` (as many as the socket takes: the count is returned) with
/// `fds` attached (SCM_RIGHTS) to the first byte, without raising SIGPIPE. An empty `fds`
/// attaches nothing. At most [`MAX_SEND_FDS`] descriptors.
pub fn send_fds(sock: &UnixStream, data: &[u8], fds: &[BorrowedFd<'_>]) -> io::Result<usize> {
    if fds.len() > MAX_SEND_FDS {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "too many fds"));
    }
    // Room for one cmsghdr with MAX_SEND_FDS ints, u64-aligned.
    let mut cbuf = [0u64; 2 + MAX_SEND_FDS / 2 + 1];
    // The argument for the block below: `msg` is zero-initialised (valid: null pointers,
    // zero lengths) and then points at `iov` (over `data`) and `cbuf`, all outliving the
    // call. The control length is CMSG_SPACE(4 * fds.len()) <= 16 + 4 * MAX_SEND_FDS
    // (rounded up to 8), inside `cbuf` (asserted); CMSG_FIRSTHDR of a control buffer that
    // large is non-null and CMSG_DATA has room for the ints, written unaligned-safe one by one.
    // SAFETY: as argued just above: every pointer outlives the call, every length is in bounds.
    let n = unsafe {
        let mut iov = libc::iovec {
            iov_base: data.as_ptr() as *mut libc::c_void,
            iov_len: data.len(),
        };
        let mut msg: libc::msghdr = mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        if !fds.is_empty() {
            let bytes = (fds.len() * mem::size_of::<libc::c_int>()) as u32;
            let space = libc::CMSG_SPACE(bytes) as usize;
            assert!(space <= mem::size_of_val(&cbuf));
            msg.msg_control = cbuf.as_mut_ptr().cast();
            msg.msg_controllen = space as _;
            let c = libc::CMSG_FIRSTHDR(&msg);
            assert!(!c.is_null());
            (*c).cmsg_level = libc::SOL_SOCKET;
            (*c).cmsg_type = libc::SCM_RIGHTS;
            (*c).cmsg_len = libc::CMSG_LEN(bytes) as _;
            let d = libc::CMSG_DATA(c).cast::<libc::c_int>();
            for (i, fd) in fds.iter().enumerate() {
                ptr::write_unaligned(d.add(i), fd.as_raw_fd());
            }
        }
        libc::sendmsg(sock.as_raw_fd(), &msg, libc::MSG_NOSIGNAL)
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// What one [`recv_fds`] got.
#[derive(Debug, Default)]
pub struct Received {
    /// Bytes read into the buffer (0: end of stream).
    pub len: usize,
    /// Descriptors that came with them (close-on-exec).
    pub fds: Vec<OwnedFd>,
    /// The sender attached more descriptors than fit ([`MAX_RECV_FDS`]): the kernel closed
    /// the rest (MSG_CTRUNC).
    pub truncated: bool,
}

/// One `recvmsg` into `buf` (at most `buf.len()` bytes, so a caller reading exactly one
/// message's bytes never takes the next message's descriptors), collecting the
/// descriptors attached (SCM_RIGHTS). Follows the socket's blocking mode.
pub fn recv_fds(sock: &UnixStream, buf: &mut [u8]) -> io::Result<Received> {
    let mut cbuf = [0u64; 2 + MAX_RECV_FDS / 2 + 1];
    let mut raw: Vec<libc::c_int> = Vec::new();
    // SAFETY: `msg` is zeroed, then points at `iov` (over `buf`) and `cbuf`, all outliving
    // the call. After it, the kernel filled `msg_controllen` bytes of `cbuf`: the CMSG_*
    // walk stays inside them (CMSG_NXTHDR checks against msg_controllen), and the ints of
    // an SCM_RIGHTS header are read unaligned-safe, as many as its cmsg_len holds.
    let (n, flags) = unsafe {
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        let mut msg: libc::msghdr = mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.as_mut_ptr().cast();
        msg.msg_controllen = mem::size_of_val(&cbuf) as _;
        let n = libc::recvmsg(sock.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC);
        if n >= 0 {
            let mut c = libc::CMSG_FIRSTHDR(&msg);
            while !c.is_null() {
                if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_RIGHTS {
                    let head = libc::CMSG_LEN(0) as usize;
                    let count = ((*c).cmsg_len as usize).saturating_sub(head)
                        / mem::size_of::<libc::c_int>();
                    let d = libc::CMSG_DATA(c).cast::<libc::c_int>();
                    for i in 0..count {
                        raw.push(ptr::read_unaligned(d.add(i)));
                    }
                }
                c = libc::CMSG_NXTHDR(&msg, c);
            }
        }
        (n, msg.msg_flags)
    };
    // Own every descriptor received first, so none leaks on the error paths.
    let mut fds = Vec::with_capacity(raw.len());
    for r in raw {
        fds.push(owned(r)?);
    }
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Received {
        len: n as usize,
        fds,
        truncated: flags & libc::MSG_CTRUNC != 0,
    })
}

/// Readiness flags of [`Epoll`] (the `EPOLL*` bits).
pub mod ev {
    /// Readable.
    pub const IN: u32 = libc::EPOLLIN as u32;
    /// Hang-up.
    pub const HUP: u32 = libc::EPOLLHUP as u32;
    /// Peer closed its end of a stream.
    pub const RDHUP: u32 = libc::EPOLLRDHUP as u32;
    /// Error.
    pub const ERR: u32 = libc::EPOLLERR as u32;
    /// Writable.
    pub const OUT: u32 = libc::EPOLLOUT as u32;
}

/// An epoll instance (close-on-exec), level-triggered.
pub struct Epoll(OwnedFd);

impl Epoll {
    /// A new, empty epoll instance.
    pub fn new() -> io::Result<Self> {
        // SAFETY: no pointers are passed; the flag is valid.
        owned(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) }).map(Self)
    }

    /// Watches `fd` for `events` ([`ev`]), reported with `token`.
    pub fn add(&self, fd: BorrowedFd<'_>, token: u64, events: u32) -> io::Result<()> {
        let mut e = libc::epoll_event { events, u64: token };
        // SAFETY: `e` is a valid epoll_event living across the call; both fds are open.
        cvt(unsafe {
            libc::epoll_ctl(
                self.0.as_raw_fd(),
                libc::EPOLL_CTL_ADD,
                fd.as_raw_fd(),
                &mut e,
            )
        })
        .map(drop)
    }

    /// Changes the events `fd` (already watched) is watched for, reported with `token`.
    pub fn modify(&self, fd: BorrowedFd<'_>, token: u64, events: u32) -> io::Result<()> {
        let mut e = libc::epoll_event { events, u64: token };
        // SAFETY: as in `add`.
        cvt(unsafe {
            libc::epoll_ctl(
                self.0.as_raw_fd(),
                libc::EPOLL_CTL_MOD,
                fd.as_raw_fd(),
                &mut e,
            )
        })
        .map(drop)
    }

    /// Stops watching `fd`.
    pub fn delete(&self, fd: BorrowedFd<'_>) -> io::Result<()> {
        let mut e = libc::epoll_event { events: 0, u64: 0 };
        // SAFETY: as in `add` (the event is ignored for EPOLL_CTL_DEL but must be non-null on
        // old kernels).
        cvt(unsafe {
            libc::epoll_ctl(
                self.0.as_raw_fd(),
                libc::EPOLL_CTL_DEL,
                fd.as_raw_fd(),
                &mut e,
            )
        })
        .map(drop)
    }

    /// Waits up to `timeout_ms` (-1: forever, 0: just look) and appends `(token, events)` of
    /// the ready descriptors to `out`. An interrupted wait returns with nothing appended.
    pub fn wait(&self, out: &mut Vec<(u64, u32)>, timeout_ms: i32) -> io::Result<()> {
        let mut evs = [libc::epoll_event { events: 0, u64: 0 }; 16];
        // SAFETY: `evs` is a writable array of `evs.len()` events living across the call.
        let n = unsafe {
            libc::epoll_wait(
                self.0.as_raw_fd(),
                evs.as_mut_ptr(),
                evs.len() as libc::c_int,
                timeout_ms,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted {
                Ok(())
            } else {
                Err(e)
            };
        }
        for e in evs.iter().take(n as usize) {
            // Copies out of the (packed on x86-64) struct.
            let (token, events) = (e.u64, e.events);
            out.push((token, events));
        }
        Ok(())
    }
}
