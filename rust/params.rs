// SPDX-License-Identifier: GPL-2.0

//! rsnic's module parameters, declared with `module_param()` in `rust/helpers/rsnic_helpers.c`.

use super::bindings;

/// `num_devs`: how many simulated devices to create.
pub fn num_devs() -> u32 {
    // SAFETY: the helper only reads a `static unsigned int` that the module loader wrote
    // before `init` ran; it takes no arguments and has no preconditions.
    unsafe { bindings::rsnic_helper_param_num_devs() }
}

/// Number of online CPUs (`num_online_cpus()`).
pub fn online_cpus() -> u32 {
    // SAFETY: reads a global counter; no preconditions.
    unsafe { bindings::rsnic_helper_num_online_cpus() }
}

/// `num_ports`: how many ports each simulated device has.
pub fn num_ports() -> u32 {
    // SAFETY: as in `num_devs`.
    unsafe { bindings::rsnic_helper_param_num_ports() }
}
