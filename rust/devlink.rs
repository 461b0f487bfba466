// SPDX-License-Identifier: GPL-2.0

//! devlink: one instance per device, what `devlink dev info` shows, a devlink port per
//! network device, and health reporters on a port ([`HealthReporter`], [`HealthOps`],
//! [`Fmsg`]).
//!
//! A driver implements [`Operations`] for the data its instance carries and registers it
//! with [`Instance::register`] on the device's `struct device`. The C operation table is a
//! constant of this module; the driver writes no function pointers.
//!
//! Lifetimes: an [`Instance`] is reference counted. Each [`Port`] holds a reference, and
//! so does the network device registration a port is given to
//! ([`super::net::device::Registration::register_with_devlink_port`]): the netdev is
//! unregistered before its devlink port, every port before the instance is unregistered,
//! and the instance is unregistered before its data is dropped and it is freed. After
//! `devlink_unregister()` returns the core calls none of the instance's operations. A
//! [`HealthReporter`] holds a reference to its port, so it is destroyed before the port is
//! unregistered.
//!
//! Every devlink function used here is exported to modules (`EXPORT_SYMBOL_GPL`: the
//! health reporter's create, destroy, report and priv, the `devlink_fmsg_*` builders);
//! only `devlink_alloc()` and the port's attributes and sizes need C helpers
//! (`rsnic_helpers.c`).

use super::bindings;
use core::{marker::PhantomData, pin::Pin, ptr::NonNull};
use kernel::{
    error::to_result,
    prelude::*,
    sync::{Arc, Mutex, UniqueArc},
    types::Opaque,
};

/// What a devlink instance answers. Called by the devlink core in process context with the
/// instance lock held; may sleep.
pub trait Operations: Send + Sync + Sized + 'static {
    /// Fills `devlink dev info` (the core adds the driver's name itself): versions and the
    /// serial number.
    fn info_get(&self, req: &mut InfoReq<'_>) -> Result;
}

/// A `devlink dev info` request being filled ([`Operations::info_get`]).
pub struct InfoReq<'a> {
    req: *mut bindings::devlink_info_req,
    _p: PhantomData<&'a mut bindings::devlink_info_req>,
}

impl InfoReq<'_> {
    /// Adds a version of a part that cannot change (`versions: fixed:`), e.g. the ASIC.
    pub fn fixed(&mut self, name: &CStr, value: &CStr) -> Result {
        // SAFETY: `self.req` is the core's request for the duration of `info_get`; both
        // strings are NUL-terminated and only read during the call.
        to_result(unsafe {
            bindings::devlink_info_version_fixed_put(
                self.req,
                name.as_char_ptr(),
                value.as_char_ptr(),
            )
        })
    }

    /// Adds a version of what runs now (`versions: running:`), e.g. the firmware.
    pub fn running(&mut self, name: &CStr, value: &CStr) -> Result {
        // SAFETY: as in `fixed`.
        to_result(unsafe {
            bindings::devlink_info_version_running_put(
                self.req,
                name.as_char_ptr(),
                value.as_char_ptr(),
            )
        })
    }

    /// Sets the device's serial number (`serial_number`).
    pub fn serial_number(&mut self, sn: &CStr) -> Result {
        // SAFETY: as in `fixed`.
        to_result(unsafe { bindings::devlink_info_serial_number_put(self.req, sn.as_char_ptr()) })
    }
}

/// The C operation table of a driver type.
struct Adapter<T>(PhantomData<T>);

impl<T: Operations> Adapter<T> {
    const OPS: bindings::devlink_ops = {
        // SAFETY: `devlink_ops` is a C struct of integers and nullable function pointers,
        // for which all-zero bytes are a valid value (nothing supported).
        let mut ops: bindings::devlink_ops = unsafe { core::mem::zeroed() };
        ops.info_get = Some(Self::info_get);
        ops
    };

    /// `devlink_ops.info_get`.
    ///
    /// # Safety
    ///
    /// Called by the devlink core on an instance `Instance::register` made for `T`, with a
    /// request valid for the call.
    unsafe extern "C" fn info_get(
        devlink: *mut bindings::devlink,
        req: *mut bindings::devlink_info_req,
        _extack: *mut bindings::netlink_ext_ack,
    ) -> core::ffi::c_int {
        // SAFETY: the core calls this only on a registered instance, which
        // `Instance::register` made with a `T` in its private area; it stays there until
        // after `devlink_unregister()`, after which the core calls no operation.
        let data = unsafe { &*bindings::devlink_priv(devlink).cast::<T>() };
        let mut r = InfoReq {
            req,
            _p: PhantomData,
        };
        match data.info_get(&mut r) {
            Ok(()) => 0,
            Err(e) => e.to_errno(),
        }
    }

    /// Drops the `T` in the private area of `devlink`.
    ///
    /// # Safety
    ///
    /// `devlink` holds a `T` written by `Instance::register`, is unregistered, and the
    /// `T` is not used again.
    unsafe fn drop_priv(devlink: *mut bindings::devlink) {
        // SAFETY: the caller's guarantees.
        unsafe { core::ptr::drop_in_place(bindings::devlink_priv(devlink).cast::<T>()) };
    }
}

/// A registered devlink instance.
///
/// # Invariants
///
/// `dl` was allocated by `devlink_alloc()` with a `T` (the type `drop_priv` drops) written
/// in its private area, and is registered until `drop`.
struct Inner {
    dl: NonNull<bindings::devlink>,
    drop_priv: unsafe fn(*mut bindings::devlink),
}

// SAFETY: the instance is used only through the devlink core's functions, which lock it
// themselves; its data is `Send + Sync` (`Operations`).
unsafe impl Send for Inner {}
// SAFETY: as for `Send`.
unsafe impl Sync for Inner {}

impl Drop for Inner {
    fn drop(&mut self) {
        let dl = self.dl.as_ptr();
        // SAFETY: registered (type invariant); every `Port` holds a reference to `self`, so
        // none is registered any more. After `devlink_unregister()` no operation runs, so
        // the data can go, then the instance (`devlink_free()` puts the device reference
        // `devlink_alloc()` took).
        unsafe {
            bindings::devlink_unregister(dl);
            (self.drop_priv)(dl);
            bindings::devlink_free(dl);
        }
    }
}

/// A registered devlink instance whose operations are `T`'s (`devlink dev show` lists it
/// under its device's bus and name, e.g. `pci/0000:00:06.0`). Clones share it; the last
/// one dropped unregisters and frees it.
#[derive(Clone)]
pub struct Instance {
    inner: Arc<Inner>,
}

impl Instance {
    /// Allocates a devlink instance on `dev`, moves `data` into it and registers it.
    pub fn register<T: Operations>(dev: &super::dma::DmaDevice, data: T) -> Result<Self> {
        // The core aligns the private area to NETDEV_ALIGN (32 bytes).
        if core::mem::align_of::<T>() > 32 {
            return Err(EINVAL);
        }
        // Allocated first, so that nothing can fail once the instance is registered.
        let slot = UniqueArc::<Inner>::new_uninit(GFP_KERNEL)?;
        // SAFETY: `dev` is a valid device (`DmaDevice` invariant); the op table is a
        // `'static` constant; the private area is `size_of::<T>()` bytes.
        let dl = unsafe {
            bindings::rsnic_helper_devlink_alloc(
                &Adapter::<T>::OPS,
                core::mem::size_of::<T>(),
                dev.raw(),
            )
        };
        let dl = NonNull::new(dl).ok_or(ENOMEM)?;
        // SAFETY: the private area is at least `size_of::<T>()` bytes, aligned (checked
        // above), and nothing reads it before registration. Then the instance is complete.
        unsafe {
            bindings::devlink_priv(dl.as_ptr()).cast::<T>().write(data);
            bindings::devlink_register(dl.as_ptr());
        }
        // From here `Inner::drop` unregisters and frees it.
        let inner: Arc<Inner> = slot
            .write(Inner {
                dl,
                drop_priv: Adapter::<T>::drop_priv,
            })
            .into();
        Ok(Self { inner })
    }
}

/// A devlink port of an [`Instance`], registered until dropped: `devlink port show` lists
/// it as `<instance>/<index>`, flavour physical, with the network device registered with it
/// ([`super::net::device::Registration::register_with_devlink_port`]).
///
/// # Invariants
///
/// `port` is registered with the instance `dl` refers to until `drop`.
pub struct Port {
    port: KBox<Opaque<bindings::devlink_port>>,
    dl: Instance,
}

// SAFETY: the port is used only through the devlink core's functions, which lock it.
unsafe impl Send for Port {}
// SAFETY: as for `Send`.
unsafe impl Sync for Port {}

impl Port {
    /// Registers port `index` of `dl`, a physical port numbered `number`.
    pub fn register(dl: &Instance, index: u32, number: u32) -> Result<Arc<Self>> {
        // The core reads the port zeroed (not yet initialised).
        let port = KBox::new(Opaque::new(bindings::devlink_port::default()), GFP_KERNEL)?;
        // SAFETY: the helper only returns a `sizeof`.
        let c_size = unsafe { bindings::rsnic_helper_devlink_port_size() };
        // The opaque type bindgen made must be the C struct's size.
        if core::mem::size_of::<bindings::devlink_port>() != c_size {
            return Err(EINVAL);
        }
        let p = port.get();
        // SAFETY: `p` is a zeroed `struct devlink_port` at a stable address (boxed) that
        // outlives its registration (unregistered in `drop`, before the box goes); the
        // instance is registered (`Instance`'s invariant). Attributes are set before
        // registration, as the core requires.
        to_result(unsafe {
            bindings::rsnic_helper_devlink_port_attrs_physical(p, number);
            bindings::devlink_port_register_with_ops(
                dl.inner.dl.as_ptr(),
                p,
                index,
                core::ptr::null(),
            )
        })?;
        Ok(Arc::new(
            Self {
                port,
                dl: dl.clone(),
            },
            GFP_KERNEL,
        )?)
    }

    /// The C port, for the netdev registration.
    pub(crate) fn raw(&self) -> *mut bindings::devlink_port {
        self.port.get()
    }

    /// The instance the port belongs to.
    pub fn instance(&self) -> &Instance {
        &self.dl
    }
}

impl Drop for Port {
    fn drop(&mut self) {
        // SAFETY: registered (type invariant); any netdev registered with the port holds a
        // reference to `self`, so it is unregistered already.
        unsafe { bindings::devlink_port_unregister(self.port.get()) };
    }
}

/// `-ECANCELED`, which the 6.12 `kernel::error::code` list lacks: what
/// [`HealthReporter::report`] returns when the core did not try to recover.
pub fn ecanceled() -> Error {
    Error::from_errno(-(bindings::ECANCELED as i32))
}

/// What a devlink health reporter does ([`HealthReporter`]): its name, how it recovers,
/// what `devlink health diagnose` and `devlink health dump show` print. Called by the
/// devlink core in process context with the instance lock held (may sleep); `recover` and
/// `dump` also from [`HealthReporter::report`], with the report's context.
pub trait HealthOps: Send + Sync + Sized + 'static {
    /// The reporter's name (`devlink health show` lists it), unique on its port.
    const NAME: &'static CStr;
    /// Whether the reporter has a dump ([`HealthOps::dump`]): the core then stores one at
    /// the first report of an error (auto-dump on) and `devlink health dump show` shows it.
    const HAS_DUMP: bool = false;
    /// What a report carries to `recover` and `dump`: the fault.
    type Context: Sync;
    /// Recovers from the fault `ctx` (a report's), or, for `None` (`devlink health
    /// recover` of a reporter in error), everything the reporter covers. `Ok` makes the
    /// reporter healthy again and counts a recovery.
    fn recover(&self, ctx: Option<&Self::Context>) -> Result;
    /// Describes the current state (`devlink health diagnose`).
    fn diagnose(&self, fmsg: &mut Fmsg<'_>) -> Result;
    /// Describes what a dump keeps (`devlink health dump show`), for the fault `ctx` of a
    /// report or, for `None`, the current state. Only with [`HealthOps::HAS_DUMP`].
    fn dump(&self, _fmsg: &mut Fmsg<'_>, _ctx: Option<&Self::Context>) -> Result {
        Err(super::net::eopnotsupp())
    }
}

/// A devlink formatted message being built (`diagnose`, `dump`): name-value pairs, named
/// objects and arrays of objects. The devlink core records an allocation failure in the
/// message itself and fails the request; the builder's nesting is balanced by construction
/// (each nest is a closure).
pub struct Fmsg<'a> {
    f: *mut bindings::devlink_fmsg,
    _p: PhantomData<&'a mut bindings::devlink_fmsg>,
}

impl Fmsg<'_> {
    /// A `name: value` pair of a `u32`.
    pub fn u32(&mut self, name: &CStr, v: u32) -> &mut Self {
        // SAFETY: `self.f` is the core's message for the duration of the operation (type
        // invariant); `name` is NUL-terminated and copied by the core.
        unsafe { bindings::devlink_fmsg_u32_pair_put(self.f, name.as_char_ptr(), v) };
        self
    }

    /// A `name: value` pair of a `u64`.
    pub fn u64(&mut self, name: &CStr, v: u64) -> &mut Self {
        // SAFETY: as in `u32`.
        unsafe { bindings::devlink_fmsg_u64_pair_put(self.f, name.as_char_ptr(), v) };
        self
    }

    /// A `name: true|false` pair.
    pub fn bool(&mut self, name: &CStr, v: bool) -> &mut Self {
        // SAFETY: as in `u32`.
        unsafe { bindings::devlink_fmsg_bool_pair_put(self.f, name.as_char_ptr(), v) };
        self
    }

    /// A `name: value` pair of a string.
    pub fn string(&mut self, name: &CStr, v: &CStr) -> &mut Self {
        // SAFETY: as in `u32`; `v` is NUL-terminated and copied by the core too.
        unsafe {
            bindings::devlink_fmsg_string_pair_put(self.f, name.as_char_ptr(), v.as_char_ptr())
        };
        self
    }

    /// A named object (`name: { ... }`) whose pairs `f` puts.
    pub fn object(&mut self, name: &CStr, f: impl FnOnce(&mut Self)) -> &mut Self {
        // SAFETY: as in `u32`; the pair and object nests opened here are closed below in
        // reverse order, and `f` can only add balanced content.
        unsafe {
            bindings::devlink_fmsg_pair_nest_start(self.f, name.as_char_ptr());
            bindings::devlink_fmsg_obj_nest_start(self.f);
        }
        f(self);
        // SAFETY: closes the nests opened above.
        unsafe {
            bindings::devlink_fmsg_obj_nest_end(self.f);
            bindings::devlink_fmsg_pair_nest_end(self.f);
        }
        self
    }

    /// A named array of objects (`name: [ {...}, ... ]`), each added by `f` through
    /// [`FmsgArray::item`].
    pub fn array(&mut self, name: &CStr, f: impl FnOnce(&mut FmsgArray<'_, '_>)) -> &mut Self {
        // SAFETY: as in `object`.
        unsafe { bindings::devlink_fmsg_arr_pair_nest_start(self.f, name.as_char_ptr()) };
        f(&mut FmsgArray { m: self });
        // SAFETY: closes the nest opened above.
        unsafe { bindings::devlink_fmsg_arr_pair_nest_end(self.f) };
        self
    }
}

/// An array of a [`Fmsg`] being filled ([`Fmsg::array`]).
pub struct FmsgArray<'a, 'b> {
    m: &'a mut Fmsg<'b>,
}

impl FmsgArray<'_, '_> {
    /// Adds an object to the array, its pairs put by `f`.
    pub fn item(&mut self, f: impl FnOnce(&mut Fmsg<'_>)) -> &mut Self {
        // SAFETY: the message is the core's (`Fmsg`'s invariant), inside an array nest;
        // the object nest is closed below and `f` adds balanced content.
        unsafe { bindings::devlink_fmsg_obj_nest_start(self.m.f) };
        f(self.m);
        // SAFETY: closes the nest opened above.
        unsafe { bindings::devlink_fmsg_obj_nest_end(self.m.f) };
        self
    }
}

/// The C operation table of a health reporter type.
struct HealthAdapter<T>(PhantomData<T>);

impl<T: HealthOps> HealthAdapter<T> {
    const OPS: bindings::devlink_health_reporter_ops = {
        // SAFETY: a C struct of a name pointer and nullable function pointers, for which
        // all-zero bytes are a valid value.
        let mut ops: bindings::devlink_health_reporter_ops = unsafe { core::mem::zeroed() };
        // The core only reads the name (it is `char *` for historical reasons).
        ops.name = T::NAME.as_char_ptr().cast_mut();
        ops.recover = Some(Self::recover);
        ops.diagnose = Some(Self::diagnose);
        if T::HAS_DUMP {
            ops.dump = Some(Self::dump);
        }
        ops
    };

    /// The reporter's `T`.
    ///
    /// # Safety
    ///
    /// `r` is a reporter `HealthReporter::<T>::create` made, not yet destroyed.
    unsafe fn data<'a>(r: *mut bindings::devlink_health_reporter) -> &'a T {
        // SAFETY: `create` gave the core a pointer to the `T` it keeps boxed until after
        // the reporter is destroyed, after which the core calls no operation of it.
        unsafe { &*bindings::devlink_health_reporter_priv(r).cast::<T>() }
    }

    /// A report's context, if any.
    ///
    /// # Safety
    ///
    /// `ctx` is null or what `HealthReporter::<T>::report` passed: a `&T::Context` valid
    /// for the duration of the report, during which the core makes this call.
    unsafe fn ctx<'a>(ctx: *mut core::ffi::c_void) -> Option<&'a T::Context> {
        // SAFETY: the caller's guarantees.
        unsafe { ctx.cast::<T::Context>().cast_const().as_ref() }
    }

    /// `devlink_health_reporter_ops.recover`.
    ///
    /// # Safety
    ///
    /// Called by the core on a reporter of `T`, with a null context or a report's.
    unsafe extern "C" fn recover(
        r: *mut bindings::devlink_health_reporter,
        ctx: *mut core::ffi::c_void,
        _extack: *mut bindings::netlink_ext_ack,
    ) -> core::ffi::c_int {
        // SAFETY: the caller's guarantees.
        let (data, ctx) = unsafe { (Self::data(r), Self::ctx(ctx)) };
        match data.recover(ctx) {
            Ok(()) => 0,
            Err(e) => e.to_errno(),
        }
    }

    /// `devlink_health_reporter_ops.diagnose`.
    ///
    /// # Safety
    ///
    /// Called by the core on a reporter of `T`, with a message valid for the call.
    unsafe extern "C" fn diagnose(
        r: *mut bindings::devlink_health_reporter,
        fmsg: *mut bindings::devlink_fmsg,
        _extack: *mut bindings::netlink_ext_ack,
    ) -> core::ffi::c_int {
        // SAFETY: the caller's guarantees.
        let data = unsafe { Self::data(r) };
        let mut m = Fmsg {
            f: fmsg,
            _p: PhantomData,
        };
        match data.diagnose(&mut m) {
            Ok(()) => 0,
            Err(e) => e.to_errno(),
        }
    }

    /// `devlink_health_reporter_ops.dump`.
    ///
    /// # Safety
    ///
    /// As `recover` and `diagnose`.
    unsafe extern "C" fn dump(
        r: *mut bindings::devlink_health_reporter,
        fmsg: *mut bindings::devlink_fmsg,
        ctx: *mut core::ffi::c_void,
        _extack: *mut bindings::netlink_ext_ack,
    ) -> core::ffi::c_int {
        // SAFETY: the caller's guarantees.
        let (data, ctx) = unsafe { (Self::data(r), Self::ctx(ctx)) };
        let mut m = Fmsg {
            f: fmsg,
            _p: PhantomData,
        };
        match data.dump(&mut m, ctx) {
            Ok(()) => 0,
            Err(e) => e.to_errno(),
        }
    }
}

/// A devlink health reporter of a [`Port`] (`devlink health show` lists it under the port),
/// doing what `T` says; destroyed when dropped.
///
/// The devlink core keeps its state: `healthy` until a [`HealthReporter::report`], which
/// counts an error, sets it to `error` and, with auto-recover on (the default for a
/// reporter that can recover), recovers at once (`T::recover` with the report's context);
/// a recovery that works counts one and makes the reporter healthy. A report while the
/// reporter is in error, or within the grace period after the last recovery, is counted but
/// not recovered (`ECANCELED`): the reporter stays in error until `devlink health recover`
/// (`T::recover` without context) succeeds.
///
/// # Invariants
///
/// `rep` was made by `devlink_port_health_reporter_create()` on `port` with a pointer to
/// `*data` as its private data, and is destroyed only in `drop`.
pub struct HealthReporter<T: HealthOps> {
    rep: NonNull<bindings::devlink_health_reporter>,
    data: KBox<T>,
    port: Arc<Port>,
    /// Held around `devlink_health_report()`, which updates the reporter's state and
    /// counters without a lock of its own: one report of the reporter at a time.
    report_lock: Pin<KBox<Mutex<()>>>,
}

// SAFETY: the reporter is used through the devlink core's functions, which may be called
// from any thread; `T` is `Send + Sync`.
unsafe impl<T: HealthOps> Send for HealthReporter<T> {}
// SAFETY: as for `Send`.
unsafe impl<T: HealthOps> Sync for HealthReporter<T> {}

impl<T: HealthOps> HealthReporter<T> {
    /// Creates the reporter `T::NAME` on `port`, with a grace period of `grace_period_ms`
    /// (the least time between two automatic recoveries; `devlink health set ...
    /// grace_period` changes it) and auto-recover and auto-dump on. Takes the instance lock.
    pub fn create(port: &Arc<Port>, grace_period_ms: u64, data: T) -> Result<Self> {
        let data = KBox::new(data, GFP_KERNEL)?;
        let report_lock = KBox::pin_init(
            kernel::new_mutex!((), "rsnic::HealthReporter::report"),
            GFP_KERNEL,
        )?;
        let p: *const T = &*data;
        // SAFETY: the port is registered (`Port`'s invariant) and outlives the reporter (a
        // reference is kept); the op table is a `'static` constant; `p` stays valid until
        // the reporter is destroyed (`drop`, before the box goes).
        let rep = unsafe {
            bindings::devlink_port_health_reporter_create(
                port.raw(),
                &HealthAdapter::<T>::OPS,
                grace_period_ms,
                p.cast_mut().cast(),
            )
        };
        let rep = kernel::error::from_err_ptr(rep)?;
        let rep = NonNull::new(rep).ok_or(ENOMEM)?;
        Ok(Self {
            rep,
            data,
            port: port.clone(),
            report_lock,
        })
    }

    /// Reports an error described by `msg`, with its context `ctx` for recovery and dump
    /// (see the type's documentation for what the core does with it). Returns what the
    /// recovery returned, `ECANCELED` if the core did not try one, `Ok` if it worked. Takes
    /// the instance lock: the caller must hold no lock `T::recover`, `T::diagnose` or
    /// `T::dump` takes, nor one a holder of the instance lock waits for. Reports of one
    /// reporter are serialized (the core's report updates its counters without a lock).
    /// Sleeps.
    pub fn report(&self, msg: &CStr, ctx: &T::Context) -> Result {
        let c: *const T::Context = ctx;
        let _one_at_a_time = self.report_lock.lock();
        // The core hands `c` only to this reporter's `recover` and `dump` during the call,
        // while `ctx` is borrowed. No other report of the reporter runs meanwhile
        // (`report_lock`); the core's own accesses to the state (`devlink health`
        // commands) are under the instance lock, as in C.
        // SAFETY: `self.rep` is live (type invariant), `msg` NUL-terminated and read only
        // during the call, `c` valid for the call (above).
        let ret = unsafe {
            bindings::devlink_health_report(
                self.rep.as_ptr(),
                msg.as_char_ptr(),
                c.cast_mut().cast(),
            )
        };
        to_result(ret)
    }

    /// The reporter's data.
    pub fn data(&self) -> &T {
        &self.data
    }

    /// The port the reporter is on.
    pub fn port(&self) -> &Arc<Port> {
        &self.port
    }
}

impl<T: HealthOps> Drop for HealthReporter<T> {
    fn drop(&mut self) {
        // SAFETY: `self.rep` is live (type invariant). The core runs the reporter's
        // operations under the instance lock, which the destroy takes: none runs after it,
        // so `data` can go afterwards; no `report` is under way (it borrows `self`).
        unsafe { bindings::devlink_health_reporter_destroy(self.rep.as_ptr()) };
    }
}
