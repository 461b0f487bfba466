//! Shared helpers of the mana_faults and mana_reopen tests.
#![allow(dead_code)]

use rsnic_core::sim::mana::Fault;
use rsnic_testbed::mana_pair::{ManaConfig, ManaPair};

/// A pair of the default configuration with `fault` injected into `port` (the device must
/// take it).
pub fn faulted(port: usize, fault: Fault) -> ManaPair {
    let p = ManaPair::new(ManaConfig::default());
    assert!(p.dev.borrow_mut().inject(port, fault));
    p
}
