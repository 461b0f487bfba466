// SPDX-License-Identifier: GPL-2.0

//! The mlx5 (ConnectX) data path, driver side: WQE and CQE formats, the cyclic SQ with its
//! staged xmit path and Enhanced MPWQE sessions, TX completion, the cyclic RQ with CQE
//! decompression, and CQ arming. Facts: Documentation/networking/device_drivers/ethernet/
//! rsnic-hardware.rst, parts A, B, C and E.1 ("spec A.3" and the like in these modules).
//!
//! The control plane crosses the same boundary: the command interface ([`cmd`]: command
//! queue, command formats, bring-up and teardown) and event queues ([`eq`]), from
//! include/linux/mlx5/mlx5_ifc.h and mlx5/core/cmd.c, eq.c, main.c.

pub mod cmd;
pub mod cq;
pub mod cqe;
pub mod eq;
// Re-exported: the header parser lived here before both families shared it.
pub use crate::hwif::hdr;
pub mod rq;
pub mod seg;
pub mod sq;
pub mod stats;
pub mod tx;
