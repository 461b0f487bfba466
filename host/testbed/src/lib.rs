//! Host test bed for rsnic's kernel-free code: DMA memory that both the driver side and the
//! simulated device reach, plus what tests and benchmarks share.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod bus;
pub mod chaos;
pub mod fixtures;
pub mod fwpages;
pub mod glue;
pub mod mana_hwc;
pub mod mana_pair;
pub mod mem;
pub mod pair;
