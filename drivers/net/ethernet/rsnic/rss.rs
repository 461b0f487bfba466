// SPDX-License-Identifier: GPL-2.0

//! A port's RSS configuration, family-independent: the indirection table of channel
//! indices, the Toeplitz key and the hash fields of each flow type (`ethtool -x/-X`,
//! `-n/-N rx-flow-hash`), as mlx5e's `mlx5e_rss` and mana's `apc->indir_table` /
//! `apc->hashkey` keep them.
//!
//! The table names channels, not device queues: a family maps each entry to the RQ of that
//! channel when it programs the device ([`RssSpec::rq_of`]), so an XSK RQ that takes its
//! channel's place (AF_XDP zero-copy) takes its entries too, and a reopen of the channels
//! (new RQs) keeps the table. While the user has not set a table
//! ([`crate::kernel_ext::net::device::Device::rxfh_configured`]), it is the default spread
//! over the channels, recomputed when their number changes; once set, the core refuses a
//! channel count the table does not fit (`ethtool_check_max_channel`).

use crate::kernel_ext::net::ethtool::{flow, rxfh_indir_default, rxh};

/// Bytes of the Toeplitz key (mlx5's `rx_hash_toeplitz_key`, `MANA_HASH_KEY_SIZE`).
pub(crate) const KEY_LEN: usize = 40;

/// Most additional RSS contexts of a port (ids `1..=MAX_CONTEXTS`).
pub(crate) const MAX_CONTEXTS: usize = 8;
/// Most entries of an indirection table (`MANA_INDIRECT_TABLE_MAX_SIZE`; mlx5e's is 256).
pub(crate) const MAX_TABLE: usize = 512;

/// The key a port starts with: the example key of Microsoft's RSS specification (mlx5e and
/// mana fill a random one with `netdev_rss_key_fill`; a fixed one keeps the spreading of the
/// VM tests' flows the same from run to run).
pub(crate) const DEFAULT_KEY: [u8; KEY_LEN] = [
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
    0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
    0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
];

/// The flow types whose hash fields a port keeps (`ethtool -n/-N rx-flow-hash`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    /// TCP over IPv4 (`tcp4`).
    Tcp4 = 0,
    /// UDP over IPv4 (`udp4`).
    Udp4,
    /// Other IPv4 (`ip4`).
    Ip4,
    /// TCP over IPv6 (`tcp6`).
    Tcp6,
    /// UDP over IPv6 (`udp6`).
    Udp6,
    /// Other IPv6 (`ip6`).
    Ip6,
}

/// Number of [`Flow`]s.
pub(crate) const FLOWS: usize = 6;

impl Flow {
    /// The flow of an ethtool flow type (`*_FLOW`), if the port keeps fields for it.
    pub(crate) fn from_ethtool(flow_type: u32) -> Option<Self> {
        Some(match flow_type {
            flow::TCP_V4 => Flow::Tcp4,
            flow::UDP_V4 => Flow::Udp4,
            flow::IPV4 => Flow::Ip4,
            flow::TCP_V6 => Flow::Tcp6,
            flow::UDP_V6 => Flow::Udp6,
            flow::IPV6 => Flow::Ip6,
            _ => return None,
        })
    }
}

/// The header fields a flow is hashed over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Fields(u8);

impl Fields {
    /// Source IP address (`s`).
    pub(crate) const SRC_IP: Self = Self(1);
    /// Destination IP address (`d`).
    pub(crate) const DST_IP: Self = Self(2);
    /// L4 source port (`f`).
    pub(crate) const SRC_PORT: Self = Self(4);
    /// L4 destination port (`n`).
    pub(crate) const DST_PORT: Self = Self(8);
    /// The address pair (`sd`).
    pub(crate) const ADDRS: Self = Self(1 | 2);
    /// Addresses and ports (`sdfn`).
    pub(crate) const ADDRS_PORTS: Self = Self(1 | 2 | 4 | 8);

    /// Whether every field of `f` is in `self`.
    pub(crate) const fn has(self, f: Self) -> bool {
        self.0 & f.0 == f.0
    }

    /// The fields of `RXH_*` bits; `None` if it has bits of other fields (MAC, VLAN, L3
    /// protocol, discard: no family hashes them).
    pub(crate) fn from_rxh(bits: u32) -> Option<Self> {
        let map = [
            (rxh::IP_SRC, Self::SRC_IP),
            (rxh::IP_DST, Self::DST_IP),
            (rxh::L4_B_0_1, Self::SRC_PORT),
            (rxh::L4_B_2_3, Self::DST_PORT),
        ];
        let mut f = 0;
        let mut rest = bits;
        for (b, x) in map {
            if bits & b != 0 {
                f |= x.0;
                rest &= !b;
            }
        }
        (rest == 0).then_some(Self(f))
    }

    /// The `RXH_*` bits of the fields.
    pub(crate) fn to_rxh(self) -> u32 {
        self.bits([rxh::IP_SRC, rxh::IP_DST, rxh::L4_B_0_1, rxh::L4_B_2_3])
    }

    /// The fields in another encoding: the OR of the bits `map` gives for the source IP,
    /// destination IP, source port and destination port, those present.
    pub(crate) fn bits(self, map: [u32; 4]) -> u32 {
        [Self::SRC_IP, Self::DST_IP, Self::SRC_PORT, Self::DST_PORT]
            .iter()
            .zip(map)
            .filter(|(f, _)| self.has(**f))
            .fold(0, |m, (_, b)| m | b)
    }
}

/// Which parts of the configuration a change touches (what the family must send).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RssChange {
    /// The table (or the RQs it maps to).
    pub(crate) table: bool,
    /// The key.
    pub(crate) key: bool,
    /// The hash fields.
    pub(crate) fields: bool,
}

impl RssChange {
    /// Everything (the channels were just opened).
    pub(crate) const ALL: Self = Self {
        table: true,
        key: true,
        fields: true,
    };
}

/// A port's RSS configuration.
#[derive(Clone)]
pub(crate) struct RssConfig {
    table: [u8; MAX_TABLE],
    len: usize,
    key: [u8; KEY_LEN],
    fields: [Fields; FLOWS],
}

impl RssConfig {
    /// A table of `len` entries (at most [`MAX_TABLE`], at least 1) spread over `channels`,
    /// the default key and `fields`.
    pub(crate) fn new(len: usize, channels: u32, fields: [Fields; FLOWS]) -> Self {
        let mut c = Self {
            table: [0; MAX_TABLE],
            len: len.clamp(1, MAX_TABLE),
            key: DEFAULT_KEY,
            fields,
        };
        c.spread(channels);
        c
    }

    /// Entries of the table.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The table: a channel index per entry.
    pub(crate) fn table(&self) -> &[u8] {
        self.table.get(..self.len).unwrap_or(&[])
    }

    /// The key.
    pub(crate) fn key(&self) -> &[u8; KEY_LEN] {
        &self.key
    }

    /// The fields of `flow`.
    pub(crate) fn fields(&self, flow: Flow) -> Fields {
        self.fields.get(flow as usize).copied().unwrap_or_default()
    }

    /// The default table over `channels` (`ethtool_rxfh_indir_default`).
    pub(crate) fn spread(&mut self, channels: u32) {
        let n = channels.max(1);
        for (i, e) in self.table.iter_mut().take(self.len).enumerate() {
            *e = rxfh_indir_default(i as u32, n) as u8;
        }
    }

    /// Takes a table of channel indices, each below `channels`; `false` (nothing changed)
    /// for a table of another size or an entry beyond the channels.
    pub(crate) fn set_table(&mut self, indir: &[u32], channels: u32) -> bool {
        if indir.len() != self.len || indir.iter().any(|&q| q >= channels) {
            return false;
        }
        for (e, &q) in self.table.iter_mut().zip(indir) {
            *e = q as u8;
        }
        true
    }

    /// Takes a key; `false` for one of another length.
    pub(crate) fn set_key(&mut self, key: &[u8]) -> bool {
        match <[u8; KEY_LEN]>::try_from(key) {
            Ok(k) => {
                self.key = k;
                true
            }
            Err(_) => false,
        }
    }

    /// Sets the fields of `flow`.
    pub(crate) fn set_fields(&mut self, flow: Flow, f: Fields) {
        if let Some(x) = self.fields.get_mut(flow as usize) {
            *x = f;
        }
    }

    /// What a family programs for the channels whose device RQs are `rqns` (by channel).
    pub(crate) fn spec<'a>(&'a self, rqns: &'a [u32]) -> RssSpec<'a> {
        RssSpec {
            table: self.table(),
            rqns,
            key: &self.key,
            fields: &self.fields,
        }
    }
}

/// What a family programs into its device (see the module documentation).
pub(crate) struct RssSpec<'a> {
    /// The table: a channel index per entry.
    pub(crate) table: &'a [u8],
    /// The device RQ of each channel (the XSK RQ of a zero-copy channel); not empty.
    pub(crate) rqns: &'a [u32],
    /// The key.
    pub(crate) key: &'a [u8; KEY_LEN],
    /// The hash fields, by [`Flow`].
    pub(crate) fields: &'a [Fields; FLOWS],
}

impl RssSpec<'_> {
    /// The RQ of table entry `e` (a channel index): that channel's. An index beyond the
    /// channels, which the table's checks keep out, wraps rather than fail. `None` without
    /// channels.
    pub(crate) fn rq_of(&self, e: u8) -> Option<u32> {
        let n = self.rqns.len();
        if n == 0 {
            return None;
        }
        self.rqns.get(usize::from(e) % n).copied()
    }

    /// The fields of `flow`.
    pub(crate) fn fields(&self, flow: Flow) -> Fields {
        self.fields.get(flow as usize).copied().unwrap_or_default()
    }
}
