// SPDX-License-Identifier: GPL-2.0

//! What the port steers: its RSS table, additional RSS contexts and ntuple rules, programmed
//! into the device while the channels are open (again at each open, and in place when the
//! RQs the channels name change).
//!
//! Upstream counterpart: `en/rx_res.c`, `en/rss.c` and `en_fs_ethtool.c`.

use crate::bus::Function;
use crate::family::params::MAX_CHANNELS;
use crate::family::Family;
use crate::kernel_ext::net::device::Device;
use crate::kernel_ext::net::ethtool;
use crate::kernel_ext::net::ethtool::{ExtAck, RxfhSet};
use crate::kernel_ext::sync::with_bh;
use crate::ntuple::Rule;
use crate::port::{Port, PortState};
use crate::rss::{RssChange, RssConfig};
use kernel::c_str;
use kernel::prelude::*;
use kernel::sync::Arc;

/// What the port steers beyond its main RSS table: the additional RSS contexts and the
/// ntuple rules the user made (programmed while the channels are open, again at each
/// open).
pub(super) struct Steering {
    /// Contexts by id - 1 ([`Family`]'s `RSS_CONTEXTS` of them).
    pub(super) ctxs: KVec<Option<RssConfig>>,
    /// Rules by location ([`Family`]'s `NTUPLE_RULES` of them).
    pub(super) rules: KVec<Option<Rule>>,
    /// `ntuple-filters` is on (rules are taken).
    pub(super) ntuple: bool,
}

impl Steering {
    pub(super) fn new<F: Family>() -> Result<Self> {
        let mut ctxs = KVec::with_capacity(F::RSS_CONTEXTS, GFP_KERNEL)?;
        for _ in 0..F::RSS_CONTEXTS {
            ctxs.push(None, GFP_KERNEL)?;
        }
        let mut rules = KVec::with_capacity(F::NTUPLE_RULES, GFP_KERNEL)?;
        for _ in 0..F::NTUPLE_RULES {
            rules.push(None, GFP_KERNEL)?;
        }
        Ok(Self {
            ctxs,
            rules,
            ntuple: F::NTUPLE_RULES > 0,
        })
    }

    /// Programs every context, then every rule, into the device (the channels whose RQs
    /// are `rqns` just opened).
    pub(super) fn program<F: Family>(
        &self,
        hw: &Arc<Function>,
        func: &Arc<F::Func>,
        rqns: &[u32],
    ) -> Result {
        for (i, c) in self.ctxs.iter().enumerate() {
            if let Some(c) = c {
                F::apply_rss_ctx(
                    hw,
                    func,
                    i.saturating_add(1),
                    Some(&c.spec(rqns)),
                    RssChange::ALL,
                )?;
            }
        }
        for (loc, r) in self.rules.iter().enumerate() {
            if let Some(r) = r {
                F::apply_rule(hw, func, loc, Some(r))?;
            }
        }
        Ok(())
    }
}

impl<F: Family> Port<F> {
    /// Programs the RQs the live channels now name ([`Channel::rqn`]) into the main RSS
    /// table, the additional contexts and (ConnectX) the channels' direct steering, in place,
    /// as `mlx5e_rx_res_xsk_update` does. Nothing while there are no channels.
    pub(super) fn steer_live(&self, st: &PortState<F>) -> Result {
        if !st.open {
            return Ok(());
        }
        let (rqns, n) = self.live_rqns();
        let Some(rqns) = rqns.get(..n).filter(|r| !r.is_empty()) else {
            return Ok(());
        };
        let table = RssChange {
            table: true,
            key: false,
            fields: false,
        };
        let (hw, func) = (&self.shared.hw, &self.shared.func);
        F::apply_rss(hw, func, Some(&st.rss.spec(rqns)), table)?;
        for (i, c) in st.steer.ctxs.iter().enumerate() {
            if let Some(c) = c {
                F::apply_rss_ctx(hw, func, i.saturating_add(1), Some(&c.spec(rqns)), table)?;
            }
        }
        Ok(())
    }

    /// The device RQ of each live channel (its XSK RQ under AF_XDP zero-copy), by channel,
    /// and how many there are (0: closed, or open without channels after a failed reopen:
    /// what is set is programmed at the next open).
    fn live_rqns(&self) -> ([u32; MAX_CHANNELS], usize) {
        let mut rqns = [0u32; MAX_CHANNELS];
        let n = with_bh(|| {
            let chans = self.chans.lock();
            for ch in chans.iter() {
                if let Some(r) = rqns.get_mut(ch.index() as usize) {
                    *r = ch.rqn();
                }
            }
            chans.len().min(MAX_CHANNELS)
        });
        (rqns, n)
    }

    /// Programs context `id`'s configuration `c` (`None`: removes it) into the running
    /// channels with `change`; nothing while there are none (the next open programs it).
    pub(super) fn apply_ctx_locked(
        &self,
        st: &PortState<F>,
        id: usize,
        c: Option<&RssConfig>,
        change: RssChange,
    ) -> Result {
        let (rqns, n) = self.live_rqns();
        match rqns.get(..n).filter(|r| !r.is_empty() && st.open) {
            Some(rqns) => F::apply_rss_ctx(
                &self.shared.hw,
                &self.shared.func,
                id,
                c.map(|c| c.spec(rqns)).as_ref(),
                change,
            ),
            None => Ok(()),
        }
    }

    /// Programs the rule at `loc` (`None`: removes it) into the running channels; nothing
    /// while there are none.
    pub(super) fn apply_rule_locked(
        &self,
        st: &PortState<F>,
        loc: usize,
        rule: Option<&Rule>,
    ) -> Result {
        if !st.open || self.live_rqns().1 == 0 {
            return Ok(());
        }
        F::apply_rule(&self.shared.hw, &self.shared.func, loc, rule)
    }

    /// Programs a changed RSS configuration (`change`) into the running channels, in place
    /// (the family updates the device without re-creating anything); on a failure the
    /// previous configuration `old` comes back and is programmed again. Nothing to do while
    /// the channels are closed (the next open programs it all). Under RTNL, the state
    /// locked.
    pub(super) fn apply_rss_locked(
        &self,
        dev: &Device,
        st: &mut PortState<F>,
        old: &RssConfig,
        change: RssChange,
    ) -> Result {
        if !st.open {
            return Ok(());
        }
        let (rqns, n) = self.live_rqns();
        let Some(rqns) = rqns.get(..n).filter(|r| !r.is_empty()) else {
            // Open without channels (a reopen failed): applied when they open again.
            return Ok(());
        };
        let (hw, func) = (&self.shared.hw, &self.shared.func);
        if let Err(e) = F::apply_rss(hw, func, Some(&st.rss.spec(rqns)), change) {
            pr_err!(
                "{}: updating RSS failed ({:?}); restoring the previous settings\n",
                dev.name(),
                e
            );
            st.rss = old.clone();
            let _ = F::apply_rss(hw, func, Some(&st.rss.spec(rqns)), change);
            return Err(e);
        }
        Ok(())
    }
}

/// Refuses a hash function other than Toeplitz in `rxfh`, explained through `extack` and the
/// log (6.12's `ethtool -X` goes through the ioctl, where there is no extack).
pub(super) fn toeplitz_only(dev: &Device, rxfh: &RxfhSet<'_>, extack: &mut ExtAck) -> Result {
    if rxfh.hfunc != ethtool::rss_hash::NO_CHANGE && rxfh.hfunc != ethtool::rss_hash::TOP {
        extack.set_message(c_str!("rsnic hashes with Toeplitz only"));
        pr_err!(
            "{}: RSS hash function {:#x} refused: rsnic hashes with Toeplitz only\n",
            dev.name(),
            rxfh.hfunc
        );
        return Err(crate::kernel_ext::net::eopnotsupp());
    }
    Ok(())
}

/// Applies what `rxfh` asks of an RSS context to `c` (a table over `channels`, a key,
/// Toeplitz only) and says what changed; a refusal explained through `extack` and the log.
pub(super) fn context_settings(
    dev: &Device,
    c: &mut RssConfig,
    rxfh: &RxfhSet<'_>,
    channels: u32,
    extack: &mut ExtAck,
) -> Result<RssChange> {
    toeplitz_only(dev, rxfh, extack)?;
    let mut change = RssChange {
        table: false,
        key: false,
        fields: false,
    };
    if let Some(t) = rxfh.indir {
        if !c.set_table(t, channels) {
            extack.set_message(c_str!(
                "the indirection table has the wrong size or names a queue beyond the channels"
            ));
            return Err(EINVAL);
        }
        change.table = true;
    }
    if let Some(k) = rxfh.key {
        if !c.set_key(k) {
            extack.set_message(c_str!("the RSS hash key is 40 bytes"));
            return Err(EINVAL);
        }
        change.key = true;
    }
    Ok(change)
}
