// SPDX-License-Identifier: GPL-2.0

//! rsnic's devlink: one instance per device (a PCI function, or an in-kernel simulated
//! device with all its functions), what `devlink dev info` shows of it, and a devlink port
//! per network device.
//!
//! `devlink dev info` shows, besides the driver's name (the devlink core's, from the
//! device's driver), a fixed `asic.id` (a PCI function's vendor:device, or the simulated
//! device's model), the board's identity where the device reported one
//! ([`Family::board_id`]: ConnectX's PSID as a fixed `fw.psid`, as mlx5), and the firmware
//! version the device reported at bring-up
//! ([`Family::fw_version`]: ConnectX's initialization segment `fw_rev` as `fw.version`,
//! MANA's GDMA protocol version as `fw.gdma_protocol`). Driver wiring only (`driver.rs`
//! calls it): the unsafe part is `kernel_ext::devlink`.

use crate::bus::Function;
use crate::family::Family;
use crate::kernel_ext::devlink::{self, InfoReq, Instance};
use kernel::{c_str, prelude::*, str::CStr, str::CString, sync::Arc};

/// What a device's devlink instance answers (`devlink dev info`).
struct DevInfo {
    /// `asic.id` (fixed).
    asic: CString,
    /// The firmware version's name and value (running), if the device reported one.
    fw: Option<(&'static CStr, CString)>,
    /// The board's identity (fixed: ConnectX's `fw.psid`), if the device reported one.
    board: Option<(&'static CStr, CString)>,
}

impl devlink::Operations for DevInfo {
    fn info_get(&self, req: &mut InfoReq<'_>) -> Result {
        req.fixed(c_str!("asic.id"), &self.asic)?;
        if let Some((name, v)) = &self.board {
            req.fixed(name, v)?;
        }
        if let Some((name, v)) = &self.fw {
            req.running(name, v)?;
        }
        Ok(())
    }
}

/// Registers the devlink instance of the device whose first function is `hw` (up, as
/// `func`), `asic` its `asic.id`.
pub(crate) fn register<F: Family>(
    hw: &Arc<Function>,
    func: &F::Func,
    asic: CString,
) -> Result<Instance> {
    let fw = F::fw_version(hw, func).ok();
    let board = F::board_id(func);
    Instance::register(hw.dma(), DevInfo { asic, fw, board })
}

/// The devlink port of the device's port `index` (its netdev's, registered with it).
pub(crate) fn port(dl: &Instance, index: usize) -> Result<Arc<devlink::Port>> {
    let i = u32::try_from(index).map_err(|_| EINVAL)?;
    devlink::Port::register(dl, i, i)
}
