// SPDX-License-Identifier: GPL-2.0

//! devlink: one instance per device, what `devlink dev info` shows, and a devlink port per
//! network device.
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
//! `devlink_unregister()` returns the core calls none of the instance's operations.

use super::bindings;
use core::{marker::PhantomData, ptr::NonNull};
use kernel::{
    error::to_result,
    prelude::*,
    sync::{Arc, UniqueArc},
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
