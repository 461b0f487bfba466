// SPDX-License-Identifier: GPL-2.0

//! rsnic's module parameters, declared with `module_param()` in `rust/helpers/rsnic_helpers.c`.

use super::bindings;
use kernel::str::CStr;

/// Defines `pub fn $name() -> $ty`, the value of a scalar module parameter, read by its C
/// helper `bindings::$helper`.
macro_rules! param {
    ($(#[$doc:meta])* $name:ident: $ty:ty = $helper:ident) => {
        $(#[$doc])*
        pub fn $name() -> $ty {
            // SAFETY: the helper only reads a `static` scalar (`unsigned int` or `bool`) that
            // the module loader wrote before `init` ran; it takes no arguments and has no
            // preconditions.
            unsafe { bindings::$helper() }
        }
    };
}

param! {
    /// `num_devs`: how many simulated devices to create.
    num_devs: u32 = rsnic_helper_param_num_devs
}

/// Number of online CPUs (`num_online_cpus()`).
pub fn online_cpus() -> u32 {
    // SAFETY: reads a global counter; no preconditions.
    unsafe { bindings::rsnic_helper_num_online_cpus() }
}

param! {
    /// `num_ports`: how many ports each simulated device has.
    num_ports: u32 = rsnic_helper_param_num_ports
}

/// `family`: the family of each simulated device, as given (`mlx5`, `mana`, or a
/// comma-separated list).
pub fn family() -> &'static CStr {
    // SAFETY: the helper returns the parameter's string (or a literal ""), NUL-terminated.
    // The parameter is read-only after load (mode 0444), so the string is neither changed
    // nor freed while the module runs, and the module's code does not outlive it.
    unsafe { CStr::from_char_ptr(bindings::rsnic_helper_param_family()) }
}

param! {
    /// `tx_timeout_ms`: the TX watchdog timeout in milliseconds (unchecked; see
    /// [`TX_TIMEOUT_MS`]).
    tx_timeout_ms: u32 = rsnic_helper_param_tx_timeout_ms
}

/// The range `tx_timeout_ms` must be in.
pub const TX_TIMEOUT_MS: core::ops::RangeInclusive<u32> = 1000..=120_000;

param! {
    /// `sim_fail_cmd`: a ConnectX command opcode every simulated ConnectX function fails (a
    /// device-host knob for the driver's error path), or 0.
    sim_fail_cmd: u32 = rsnic_helper_param_sim_fail_cmd
}

param! {
    /// `sim_fail_req`: a MANA hardware-channel request code every simulated MANA device fails (a
    /// device-host knob for the driver's error path), or 0.
    sim_fail_req: u32 = rsnic_helper_param_sim_fail_req
}

param! {
    /// `sim_mpwqe`: whether simulated ConnectX devices report enhanced MPWQE in their caps.
    sim_mpwqe: bool = rsnic_helper_param_sim_mpwqe
}

param! {
    /// `sim_cqe_compression`: whether simulated ConnectX devices report basic CQE compression in
    /// their caps.
    sim_cqe_compression: bool = rsnic_helper_param_sim_cqe_compression
}

/// `sim_min_inline`: the minimum TX inline mode simulated ConnectX devices require (values
/// above 3 are taken as 3).
pub fn sim_min_inline() -> u8 {
    // SAFETY: as for every scalar parameter (`param!`).
    unsafe { bindings::rsnic_helper_param_sim_min_inline() }.min(3) as u8
}

/// `sim_max_mtu`: the largest port MTU (hardware bytes) simulated ConnectX devices report,
/// `None` for the model's own (0, or a value the model does not take: refused at load by
/// the device host).
pub fn sim_max_mtu() -> Option<u16> {
    // SAFETY: as for every scalar parameter (`param!`).
    let v = unsafe { bindings::rsnic_helper_param_sim_max_mtu() };
    Some(u16::try_from(v).unwrap_or(u16::MAX)).filter(|&v| v != 0)
}

param! {
    /// `sim_rsnic_requests`: whether simulated MANA devices implement and advertise rsnic's own
    /// HWC requests (loopback, pause).
    sim_rsnic_requests: bool = rsnic_helper_param_sim_rsnic_requests
}

/// `host`: which devices the driver binds (`pci` or `kernel`), as given.
pub fn host() -> &'static CStr {
    // SAFETY: as in `family`: the helper returns the read-only parameter's string (or a
    // literal ""), NUL-terminated, never changed or freed while the module runs.
    unsafe { CStr::from_char_ptr(bindings::rsnic_helper_param_host()) }
}
