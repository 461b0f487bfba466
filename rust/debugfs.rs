// SPDX-License-Identifier: GPL-2.0

//! debugfs files of Rust code (`debugfs_create_dir()`, `debugfs_create_file()`): read-only
//! ones whose contents a `seq_file` show operation writes, and write-only ones whose writes
//! a store operation parses (knobs, netdevsim-style).
//!
//! The 6.12 `kernel` crate has no debugfs. A [`Dir`] is removed when the last reference to it
//! goes (what is created in it holds one); a [`ShowFile`] owns the object its show operation
//! reads and removes its entry before freeing it. debugfs makes removal wait for readers that are inside the file's
//! operations, so the object outlives every call of [`Show::show`].
//!
//! When debugfs is off (or creation fails) the dentry is an error pointer, which every
//! debugfs function accepts and ignores: the files are a diagnostic aid, never a reason to
//! fail.

use super::bindings;
use core::{ffi::c_void, fmt};
use kernel::{prelude::*, str::CStr, sync::Arc};

/// What a debugfs file shows: called for each read of the file (process context; may
/// sleep).
pub trait Show: Send + Sync + 'static {
    /// Writes the file's contents.
    fn show(&self, out: &mut SeqFile<'_>);
}

/// What a write-only debugfs file does with a write: called once per `write()` with its
/// bytes (at most 127; process context; may sleep). An error is the write's result.
pub trait Store: Send + Sync + 'static {
    /// Handles one write.
    fn store(&self, input: &[u8]) -> Result;
}

/// The `seq_file` a [`Show::show`] writes into (`seq_write()`; output beyond the buffer is
/// retried by the seq_file core with a larger one).
pub struct SeqFile<'a> {
    m: &'a mut bindings::seq_file,
}

impl fmt::Write for SeqFile<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        // SAFETY: `self.m` is the live seq_file of the current show call; `s` is valid for
        // `s.len()` bytes, which seq_write copies.
        unsafe { bindings::seq_write(self.m, s.as_ptr().cast(), s.len()) };
        Ok(())
    }
}

/// A debugfs directory, removed on drop. Shared ([`Arc`]) because what is created in it
/// holds a reference: a directory goes only after its files and subdirectories.
///
/// # Invariants
///
/// `dentry` was returned by `debugfs_create_dir()` (possibly an error pointer) and is removed
/// only in `drop`; `_parent`, if any, is the directory it was created in.
pub struct Dir {
    dentry: *mut bindings::dentry,
    _parent: Option<Arc<Dir>>,
}

// SAFETY: a dentry pointer may be used and removed from any thread.
unsafe impl Send for Dir {}
// SAFETY: `Dir` exposes no interior state.
unsafe impl Sync for Dir {}

impl Dir {
    /// Creates `name` at the top of debugfs.
    pub fn root(name: &CStr) -> Result<Arc<Self>> {
        Self::create(name, None)
    }

    /// Creates the directory `name` in this one.
    pub fn subdir(self: &Arc<Self>, name: &CStr) -> Result<Arc<Self>> {
        Self::create(name, Some(self.clone()))
    }

    fn create(name: &CStr, parent: Option<Arc<Dir>>) -> Result<Arc<Self>> {
        let p = parent.as_ref().map_or(core::ptr::null_mut(), |d| d.dentry);
        // SAFETY: `name` is a valid C string; `p` is null (the root) or the dentry of a live
        // directory, kept alive by the reference the new one holds (an error pointer is
        // accepted and yields an error pointer).
        let dentry = unsafe { bindings::debugfs_create_dir(name.as_char_ptr(), p) };
        Ok(Arc::new(
            Self {
                dentry,
                _parent: parent,
            },
            GFP_KERNEL,
        )?)
    }

    /// Creates the read-only file `name` in this directory, showing `data`.
    pub fn show_file<T: Show>(self: &Arc<Self>, name: &CStr, data: T) -> Result<ShowFile<T>> {
        let entry = Entry {
            show: show_entry::<T>,
            data,
        };
        Ok(ShowFile {
            _file: self.file(name, entry)?,
        })
    }

    /// Creates the write-only file `name` in this directory, whose writes go to `data`.
    pub fn store_file<T: Store>(self: &Arc<Self>, name: &CStr, data: T) -> Result<StoreFile<T>> {
        let entry = StoreEntry {
            store: store_entry::<T>,
            data,
        };
        Ok(StoreFile {
            _file: self.file(name, entry)?,
        })
    }

    /// Creates file `name` in this directory with `entry` (boxed) as its private data.
    fn file<E: FileEntry>(self: &Arc<Self>, name: &CStr, entry: E) -> Result<File<E>> {
        let entry = KBox::new(entry, GFP_KERNEL)?;
        let private = (&*entry as *const E).cast_mut().cast::<c_void>();
        // SAFETY: `name` is a valid C string, `self.dentry` the dentry of this live directory
        // (or an error pointer, which debugfs accepts); `private` points to an `E`, which the
        // file's glue reads as `E::CREATE` makes it (`FileEntry`'s contract), and which stays
        // valid until the entry is removed (`File::drop` removes it before freeing `entry`).
        let dentry = unsafe { (E::CREATE)(name.as_char_ptr(), self.dentry, private) };
        Ok(File {
            dentry,
            _entry: entry,
            _dir: self.clone(),
        })
    }
}

/// A C helper that creates debugfs file `name` under `parent` with private data `private`.
type CreateFn = unsafe extern "C" fn(
    name: *const kernel::ffi::c_char,
    parent: *mut bindings::dentry,
    private: *mut c_void,
) -> *mut bindings::dentry;

/// The private data of a debugfs file, and the C helper that creates a file for it.
///
/// # Safety
///
/// [`FileEntry::CREATE`] makes a file whose glue reads its private data as `Self` (its
/// operation first, as laid out by `#[repr(C)]`) for as long as the file exists.
unsafe trait FileEntry {
    /// The helper that creates a file for this private data.
    const CREATE: CreateFn;
}

// SAFETY: `rsnic_helper_debugfs_show_file`'s glue (`rsnic_rust_debugfs_show`) reads the
// private data's first field, the `show` of an `Entry`.
unsafe impl<T: Show> FileEntry for Entry<T> {
    const CREATE: CreateFn = bindings::rsnic_helper_debugfs_show_file;
}

// SAFETY: `rsnic_helper_debugfs_store_file`'s glue (`rsnic_rust_debugfs_store`) reads the
// private data's first field, the `store` of a `StoreEntry`.
unsafe impl<T: Store> FileEntry for StoreEntry<T> {
    const CREATE: CreateFn = bindings::rsnic_helper_debugfs_store_file;
}

/// A store file's private data: its store operation first, then the object it feeds.
#[repr(C)]
struct StoreEntry<T> {
    store: unsafe fn(*const c_void, &[u8]) -> Result,
    data: T,
}

/// The store operation of a `StoreEntry<T>`.
///
/// # Safety
///
/// `entry` points to a live `StoreEntry<T>`.
unsafe fn store_entry<T: Store>(entry: *const c_void, input: &[u8]) -> Result {
    // SAFETY: per the function's contract.
    let entry = unsafe { &*entry.cast::<StoreEntry<T>>() };
    entry.data.store(input)
}

/// A write-only debugfs file and the object its writes go to.
pub struct StoreFile<T: Store> {
    _file: File<StoreEntry<T>>,
}

/// The write operation of every [`StoreFile`] (called by the C side's glue with the bytes it
/// copied from user space). Returns 0 or a negative errno.
///
/// # Safety
///
/// `private` is the private pointer a [`Dir::store_file`] passed, whose entry has not been
/// removed; `buf` points to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn rsnic_rust_debugfs_store(
    private: *mut c_void,
    buf: *const core::ffi::c_char,
    len: usize,
) -> core::ffi::c_int {
    // SAFETY: per the function's contract, `private` points to the live `StoreEntry` of a
    // `StoreFile`, whose first field is its store operation (`repr(C)`).
    let store = unsafe { *private.cast::<unsafe fn(*const c_void, &[u8]) -> Result>() };
    // SAFETY: `buf` is valid for `len` bytes for the duration of the call (contract).
    let input = unsafe { core::slice::from_raw_parts(buf.cast::<u8>(), len) };
    // SAFETY: `store` is `store_entry::<T>` for the `StoreEntry<T>` `private` points to.
    match unsafe { store(private, input) } {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// A file's private data: its show operation first, then the object it shows.
#[repr(C)]
struct Entry<T> {
    show: unsafe fn(*const c_void, &mut SeqFile<'_>),
    data: T,
}

/// The show operation of an `Entry<T>`.
///
/// # Safety
///
/// `entry` points to a live `Entry<T>`.
unsafe fn show_entry<T: Show>(entry: *const c_void, out: &mut SeqFile<'_>) {
    // SAFETY: per the function's contract.
    let entry = unsafe { &*entry.cast::<Entry<T>>() };
    entry.data.show(out);
}

impl Drop for Dir {
    fn drop(&mut self) {
        // SAFETY: `dentry` came from `debugfs_create_dir()` (type invariant) and is still in
        // debugfs: its parent is alive (we hold it) and everything created in it holds a
        // reference to it, so it is empty now. Removing an error pointer does nothing.
        unsafe { bindings::debugfs_remove(self.dentry) };
    }
}

/// A read-only debugfs file and the object it shows.
pub struct ShowFile<T: Show> {
    _file: File<Entry<T>>,
}

/// A debugfs file and its private data (an [`Entry`] or a [`StoreEntry`]): the file is
/// removed on drop, before the data is freed.
///
/// # Invariants
///
/// `dentry` was returned by `rsnic_helper_debugfs_show_file()` or
/// `rsnic_helper_debugfs_store_file()` in `_dir` with `_entry` as its private data.
struct File<E> {
    dentry: *mut bindings::dentry,
    _entry: KBox<E>,
    _dir: Arc<Dir>,
}

// SAFETY: as for `Dir`; the private data is `Send + Sync` (`Show`'s and `Store`'s bounds on
// the object it holds).
unsafe impl<E: Send + Sync> Send for File<E> {}
// SAFETY: as for `Send`.
unsafe impl<E: Send + Sync> Sync for File<E> {}

impl<E> Drop for File<E> {
    fn drop(&mut self) {
        // SAFETY: `dentry` came from debugfs (type invariant) and its directory is alive (we
        // hold it). `debugfs_remove()` waits for the readers and writers inside the file's
        // operations, so none touches `_entry` afterwards, which is freed after this (fields
        // drop after `drop`).
        unsafe { bindings::debugfs_remove(self.dentry) };
    }
}

/// The show operation of every [`ShowFile`] (called by the C side's `seq_file` glue).
///
/// # Safety
///
/// `m` is a live seq_file inside a show call, `private` the private pointer a
/// [`Dir::show_file`] passed, whose entry has not been removed.
#[no_mangle]
pub unsafe extern "C" fn rsnic_rust_debugfs_show(
    m: *mut bindings::seq_file,
    private: *mut c_void,
) -> core::ffi::c_int {
    // SAFETY: per the function's contract, `private` points to the live `Entry` of a
    // `ShowFile` (entries are removed, and readers drained, before it is freed), whose first
    // field is its show operation (`repr(C)`).
    let show = unsafe { *private.cast::<unsafe fn(*const c_void, &mut SeqFile<'_>)>() };
    // SAFETY: `m` is the live seq_file of this call, used by nothing else meanwhile.
    let m = unsafe { &mut *m };
    let mut out = SeqFile { m };
    // SAFETY: `show` is `show_entry::<T>` for the `Entry<T>` that `private` points to.
    unsafe { show(private, &mut out) };
    0
}
