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

/// Implements [`Barriers`](rsnic_core::hwif::hw::Barriers) for each type given with every
/// barrier a no-op, for host-side code in which driver and device run on one thread in
/// program order: there is nothing to order. (The data path's own host environment,
/// [`glue::Env`], keeps compiler fences, so that the compiler keeps their order too.)
#[macro_export]
macro_rules! no_barriers {
    ($($ty:ty),+ $(,)?) => {$(
        impl ::rsnic_core::hwif::hw::Barriers for $ty {
            fn dma_wmb(&self) {}
            fn dma_rmb(&self) {}
            fn wmb(&self) {}
        }
    )+};
}
