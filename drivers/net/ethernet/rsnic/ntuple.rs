// SPDX-License-Identifier: GPL-2.0

//! A port's ntuple steering rules (`ethtool -N <dev> flow-type ... action Q | context C
//! [loc L]`), family-independent: what each rule matches and where it sends the frames,
//! kept by location so that a reopen of the channels programs them again
//! ([`crate::family::Control::apply_rule`]), as mlx5e's ethtool steering
//! (`en_fs_ethtool.c`) keeps its `mlx5e_ethtool_rule`s.
//!
//! The subset taken, the simplest honest one: TCP and UDP over IPv4 and IPv6; any of the
//! source / destination address and port, each with a full mask (or absent, mask 0); no
//! TOS / traffic class, no extensions (VLAN, user data, MAC), no drop action. Everything
//! else is refused, with the reason in the kernel log (rxnfc has no extack).

use crate::kernel_ext::net::ethtool::{flow, rx_cls, FlowSpec};

/// Most rules a family's table holds (locations `0..MAX_RULES`).
pub(crate) const MAX_RULES: usize = 32;

/// Where a rule sends the frames it matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dest {
    /// A channel's RX queue (`action Q`).
    Queue(u32),
    /// An RSS context (`context C`, 1..): spread over its table.
    Context(u32),
}

/// What a rule matches: TCP or UDP over IPv4 or IPv6 and whichever fields are given (each
/// whole). Addresses in network order (IPv4 in the first 4 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Match {
    /// IPv6 (else IPv4).
    pub(crate) ipv6: bool,
    /// UDP (else TCP).
    pub(crate) udp: bool,
    /// Source address.
    pub(crate) src: Option<[u8; 16]>,
    /// Destination address.
    pub(crate) dst: Option<[u8; 16]>,
    /// Source port.
    pub(crate) sport: Option<u16>,
    /// Destination port.
    pub(crate) dport: Option<u16>,
}

/// A rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rule {
    /// What it matches.
    pub(crate) m: Match,
    /// Where the frames go.
    pub(crate) dest: Dest,
}

/// A field given with a full mask (`Some`), absent (mask 0: `None`), or partly masked
/// (`Err`).
fn whole<T: Copy>(v: T, mask: &[u8]) -> Result<Option<T>, ()> {
    if mask.iter().all(|&b| b == 0) {
        Ok(None)
    } else if mask.iter().all(|&b| b == 0xff) {
        Ok(Some(v))
    } else {
        Err(())
    }
}

impl Rule {
    /// The rule of `spec`, or why rsnic cannot steer it.
    pub(crate) fn from_spec(spec: &FlowSpec) -> Result<Self, &'static str> {
        let (ipv6, udp) = match spec.flow_type {
            flow::TCP_V4 => (false, false),
            flow::UDP_V4 => (false, true),
            flow::TCP_V6 => (true, false),
            flow::UDP_V6 => (true, true),
            _ => return Err("only tcp4, udp4, tcp6 and udp6 rules are supported"),
        };
        if spec.ext {
            return Err("VLAN, user-def and MAC extensions are not supported");
        }
        if spec.tos_mask != 0 {
            return Err("matching tos / tclass is not supported");
        }
        let alen = if ipv6 { 16 } else { 4 };
        let part =
            "only full masks are supported (an address or port is matched whole or not at all)";
        let addr = |v: &[u8; 16], m: &[u8; 16]| -> Result<Option<[u8; 16]>, &'static str> {
            let mut a = [0u8; 16];
            let n = alen.min(16);
            if let (Some(d), Some(s)) = (a.get_mut(..n), v.get(..n)) {
                d.copy_from_slice(s);
            }
            whole(a, m.get(..n).unwrap_or_default()).map_err(|()| part)
        };
        let port = |v: u16, m: u16| whole(v, &m.to_be_bytes()).map_err(|()| part);
        let m = Match {
            ipv6,
            udp,
            src: addr(&spec.src, &spec.src_mask)?,
            dst: addr(&spec.dst, &spec.dst_mask)?,
            sport: port(spec.sport, spec.sport_mask)?,
            dport: port(spec.dport, spec.dport_mask)?,
        };
        let dest = if spec.rss {
            if spec.rss_context == 0 {
                return Err("context 0 is the main table: give a queue or an additional context");
            }
            // The core refused a nonzero queue with a context already (cap_rss_rxnfc_adds).
            Dest::Context(spec.rss_context)
        } else {
            match spec.ring_cookie {
                rx_cls::FLOW_DISC => return Err("the drop action is not supported"),
                rx_cls::FLOW_WAKE => return Err("the wake action is not supported"),
                // A queue (a VF in the upper bits is not one of ours).
                q => Dest::Queue(u32::try_from(q).map_err(|_| "no such queue")?),
            }
        };
        Ok(Self { m, dest })
    }

    /// The rule as ethtool shows it (at `location`).
    pub(crate) fn to_spec(self, location: u32) -> FlowSpec {
        let flow_type = match (self.m.ipv6, self.m.udp) {
            (false, false) => flow::TCP_V4,
            (false, true) => flow::UDP_V4,
            (true, false) => flow::TCP_V6,
            (true, true) => flow::UDP_V6,
        };
        let alen = if self.m.ipv6 { 16 } else { 4 };
        let mut s = FlowSpec {
            flow_type,
            location,
            ..FlowSpec::default()
        };
        for (a, v, m) in [
            (self.m.src, &mut s.src, &mut s.src_mask),
            (self.m.dst, &mut s.dst, &mut s.dst_mask),
        ] {
            if let Some(a) = a {
                *v = a;
                for b in m.iter_mut().take(alen) {
                    *b = 0xff;
                }
            }
        }
        if let Some(p) = self.m.sport {
            (s.sport, s.sport_mask) = (p, 0xffff);
        }
        if let Some(p) = self.m.dport {
            (s.dport, s.dport_mask) = (p, 0xffff);
        }
        match self.dest {
            Dest::Queue(q) => s.ring_cookie = u64::from(q),
            Dest::Context(c) => {
                s.rss = true;
                s.rss_context = c;
            }
        }
        s
    }
}
