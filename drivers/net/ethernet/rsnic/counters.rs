// SPDX-License-Identifier: GPL-2.0

//! Counter arithmetic shared by every layer of the driver: free-running `u64` counters that
//! wrap, as the kernel's own do. A leaf: it uses nothing of the driver.

/// Adds `b` into `a`, wrapping like the counters.
#[inline]
pub(crate) fn wadd(a: &mut u64, b: u64) {
    *a = a.wrapping_add(b);
}
