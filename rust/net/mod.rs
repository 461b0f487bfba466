// SPDX-License-Identifier: GPL-2.0

//! Network devices.
//!
//! * [`device`] — `struct net_device`, its registration and its operations
//!   (`net_device_ops`).
//! * [`ethtool`] — `ethtool_ops`.
//! * [`napi`] — NAPI contexts embedded in driver structures.
//! * [`page_pool`] — receive pages from a page pool.
//! * [`queue`] — TX queue control and byte queue limits (BQL).
//! * [`skb`] — `struct sk_buff`, owned and freed only explicitly.
//! * [`xdp`] — XDP programs, their RX queue info, redirected frames.
//! * [`xsk`] — AF_XDP zero-copy: XSK buffer pools, their buffers and TX descriptors.

use kernel::error::Error;

pub mod device;
pub mod dim;
pub mod ethtool;
pub mod napi;
pub mod page_pool;
pub mod queue;
pub mod skb;
pub mod xdp;
pub mod xsk;

/// `-EOPNOTSUPP`, which the 6.12 `kernel::error::code` list lacks.
pub fn eopnotsupp() -> Error {
    Error::from_errno(-(super::bindings::EOPNOTSUPP as i32))
}

/// `-EADDRNOTAVAIL`, which the 6.12 `kernel::error::code` list lacks (an address that is not
/// a valid unicast one).
pub fn eaddrnotavail() -> Error {
    Error::from_errno(-(super::bindings::EADDRNOTAVAIL as i32))
}

/// `-EPROTO`, which the 6.12 `kernel::error::code` list lacks (MANA: a request the device
/// answered with a failure status).
pub fn eproto() -> Error {
    Error::from_errno(-(super::bindings::EPROTO as i32))
}

/// `-ETIMEDOUT`, which the 6.12 `kernel::error::code` list lacks.
pub fn etimedout() -> Error {
    Error::from_errno(-(super::bindings::ETIMEDOUT as i32))
}

/// `-ENETDOWN`, which the 6.12 `kernel::error::code` list lacks (`ndo_xsk_wakeup` of a port
/// without AF_XDP zero-copy queues, as mlx5e answers).
pub fn enetdown() -> Error {
    Error::from_errno(-(super::bindings::ENETDOWN as i32))
}
