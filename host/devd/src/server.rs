//! The ivshmem server side of QEMU's `ivshmem-doorbell` (docs/specs/ivshmem-spec.rst): the
//! listening socket and the setup messages a new client gets.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;

use rsnic_core::dp::xport::{DEVD_PEER, GUEST_PEER};

use crate::sys::send_msg;

/// The ivshmem protocol version devd speaks.
pub const PROTOCOL_VERSION: i64 = 0;

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

/// Sends a new client its setup, each message an 8-byte little-endian int64 in its own
/// `sendmsg`: the protocol version; its peer id ([`GUEST_PEER`]); `-1` with the
/// shared-memory fd `shm`; [`DEVD_PEER`] with each of devd's own eventfds `host_vectors`
/// (the guest's doorbell targets); then [`GUEST_PEER`] with each of the client's eventfds
/// `guest_vectors`, in vector order (writing one raises that MSI-X vector).
pub fn setup_client(
    sock: &UnixStream,
    shm: BorrowedFd<'_>,
    host_vectors: &[File],
    guest_vectors: &[File],
) -> io::Result<()> {
    send_msg(sock, PROTOCOL_VERSION, None)?;
    send_msg(sock, i64::from(GUEST_PEER), None)?;
    send_msg(sock, -1, Some(shm))?;
    for v in host_vectors {
        send_msg(sock, i64::from(DEVD_PEER), Some(v.as_fd()))?;
    }
    for v in guest_vectors {
        send_msg(sock, i64::from(GUEST_PEER), Some(v.as_fd()))?;
    }
    Ok(())
}
