// SPDX-License-Identifier: GPL-2.0

//! Channel parameters: what a set of channels is built with (ring sizes, MTU and the RX
//! buffer layout it implies, private flags, XDP, interrupt moderation, VLAN stripping) and
//! the limits they are checked against; and the families' private flags, a typed set per
//! family ([`PrivFlags`] of the family's [`PrivFlag`] enum, made by [`priv_flags!`]).
//!
//! Upstream counterpart: `en/params.c` (and `struct mlx5e_params` in `en.h`; the private
//! flags as `enum mlx5e_priv_flag` and `mlx5e_priv_flags` in `en_ethtool.c`).

use crate::kernel_ext::net::xdp::XDP_PACKET_HEADROOM;
use core::marker::PhantomData;
use kernel::str::CStr;

/// One private flag of a family (`ethtool --show-priv-flags`): the family's flag enum, one
/// variant per flag in ethtool's bit order, each with its upstream name. Made by
/// [`priv_flags!`].
pub(crate) trait PrivFlag: Copy + Eq + core::fmt::Debug + Send + Sync + 'static {
    /// The flags' ethtool names, in bit order.
    const NAMES: &'static [&'static CStr];
    /// The flag's bit in ethtool's flag word.
    fn bit(self) -> u32;
}

/// Declares a family's private flags: an enum `$name` of the flags, in ethtool's bit order,
/// each with its ethtool name, implementing [`PrivFlag`].
macro_rules! priv_flags {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $flag:ident = $ethtool:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        $vis enum $name {
            $( $(#[$vmeta])* $flag, )+
        }

        impl $name {
            /// The flag's bit in ethtool's flag word (usable in constants).
            pub(crate) const fn bit(self) -> u32 {
                1 << self as u32
            }
        }

        impl $crate::family::params::PrivFlag for $name {
            const NAMES: &'static [&'static ::kernel::str::CStr] =
                &[$( ::kernel::c_str!($ethtool), )+];

            fn bit(self) -> u32 {
                $name::bit(self)
            }
        }
    };
}
pub(crate) use priv_flags;

/// A set of private flags of one family, as ethtool's flag word (bit `i`: the flag named
/// `E::NAMES[i]`). Only the family's flag enum `E` reads it, so a bit means one flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PrivFlags<E> {
    bits: u32,
    flag: PhantomData<E>,
}

impl<E: PrivFlag> PrivFlags<E> {
    /// No flag set.
    pub(crate) const NONE: Self = Self::from_ethtool(0);

    /// The set ethtool's flag word `bits` names (`ethtool --set-priv-flags`, whose adapter
    /// refuses bits beyond the family's flags).
    pub(crate) const fn from_ethtool(bits: u32) -> Self {
        Self {
            bits,
            flag: PhantomData,
        }
    }

    /// ethtool's flag word of the set.
    pub(crate) const fn ethtool(self) -> u32 {
        self.bits
    }

    /// Whether `flag` is set.
    pub(crate) fn has(self, flag: E) -> bool {
        self.bits & flag.bit() != 0
    }
}

/// Headroom before received packets (`NET_SKB_PAD + NET_IP_ALIGN`, so the IP header is
/// aligned); with an XDP program attached, [`XDP_PACKET_HEADROOM`].
pub(crate) const RX_HEADROOM: u32 = 64 + 2;
/// Bytes the skb needs after the packet data (`skb_shared_info`, rounded up).
const RX_TAILROOM: u32 = 384;

/// Parameters a set of channels is built with; changing any of them reopens the channels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ChannelParams<E> {
    /// Number of channels.
    pub(crate) count: u32,
    /// log2 of the SQ size in WQEBBs.
    pub(crate) log_sq: u8,
    /// log2 of the RQ size in WQEs.
    pub(crate) log_rq: u8,
    /// MTU the RX buffers are sized for.
    pub(crate) mtu: u32,
    /// The family's private flags (`E`: its [`PrivFlag`] enum; mlx5: `rx_cqe_compress`,
    /// `xdp_tx_mpwqe`, `skb_tx_mpwqe`; MANA: `rx_db_per_packet`).
    pub(crate) pflags: PrivFlags<E>,
    /// An XDP program is attached: RX buffers have [`XDP_PACKET_HEADROOM`], one page each,
    /// mapped for the device to read too (XDP_TX), and mlx5 channels get an XDP_TX SQ.
    pub(crate) xdp: bool,
    /// Interrupt moderation new CQs are made with (`ethtool -C`; a change is applied to
    /// live channels in place, without reopening them).
    pub(crate) coal: Coalesce,
    /// The device strips received frames' outer 802.1Q tag into the completion
    /// (`NETIF_F_HW_VLAN_CTAG_RX`): what new RQs are made with (a change is applied to live
    /// channels in place, [`crate::family::Control::apply_rx_vlan`]).
    pub(crate) rx_vlan: bool,
}

/// Interrupt moderation of one direction's completion queues (`ethtool -C rx-usecs N
/// rx-frames M`): the device holds a completion event back until `frames` completions are
/// pending or `usecs` have passed; `usecs` 0 is none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Moderation {
    /// Period, microseconds.
    pub(crate) usecs: u16,
    /// Completions per event.
    pub(crate) frames: u16,
}

impl Moderation {
    /// This moderation cut to what a device whose largest is `max` takes.
    pub(crate) fn within(self, max: Moderation) -> Self {
        Self {
            usecs: self.usecs.min(max.usecs),
            frames: self.frames.min(max.frames),
        }
    }

    /// DIM's default profile for the RX (`rx`) or TX CQs (the kernel's
    /// `net_dim_get_def_{rx,tx}_moderation()`, periods starting at the event), cut to `max`.
    pub(crate) fn dim_default(rx: bool, max: Moderation) -> Self {
        let (usecs, frames) = crate::kernel_ext::net::dim::default_profile(!rx);
        Self { usecs, frames }.within(max)
    }
}

/// Interrupt moderation of a port's channels (`ethtool -c`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Coalesce {
    /// RX CQs (with `adaptive_rx`: DIM's default profile, what they start with).
    pub(crate) rx: Moderation,
    /// TX CQs (with `adaptive_tx`: likewise).
    pub(crate) tx: Moderation,
    /// DIM moves the RX CQs' moderation (`adaptive-rx`).
    pub(crate) adaptive_rx: bool,
    /// DIM moves the TX CQs' moderation (`adaptive-tx`).
    pub(crate) adaptive_tx: bool,
}

impl Coalesce {
    /// No moderation: one event per completion, nothing adaptive (a family without
    /// coalescing, such as MANA, as upstream mana).
    pub(crate) const NONE: Self = Self {
        rx: Moderation {
            usecs: 0,
            frames: 1,
        },
        tx: Moderation {
            usecs: 0,
            frames: 1,
        },
        adaptive_rx: false,
        adaptive_tx: false,
    };

    /// mlx5e's fixed moderation where DIM is off (`MLX5E_PARAMS_DEFAULT_{RX,TX}_CQ_
    /// MODERATION_USEC` 16 and `_PKTS` 32, en.h), both directions.
    pub(crate) const MLX5E_STATIC: Moderation = Moderation {
        usecs: 16,
        frames: 32,
    };
}

impl<E> ChannelParams<E> {
    /// Headroom the device leaves before each received packet.
    pub(crate) fn rx_headroom(&self) -> u32 {
        if self.xdp {
            XDP_PACKET_HEADROOM
        } else {
            RX_HEADROOM
        }
    }

    /// Bytes the device may write into one RX buffer (frame with two VLAN tags).
    pub(crate) fn rx_buf_len(&self) -> u32 {
        self.mtu + 14 + 8
    }

    /// How RX buffers are laid out. A frame that fits one page with the headroom and the
    /// skb's tailroom gets one page; a longer one gets one higher-order page, or with
    /// `scatter` (a family whose RQ takes several buffers per WQE) as many order-0 pages
    /// as it needs, each with the same headroom and tailroom (the first becomes the skb's
    /// head, the others its fragments). XDP programs see one linear buffer, so an attached
    /// program never scatters (its MTU fits one page anyway, [`max_xdp_mtu`]).
    pub(crate) fn rx_layout(&self, scatter: bool) -> RxLayout {
        let page = kernel::page::PAGE_SIZE as u32;
        let room = self.rx_headroom() + RX_TAILROOM;
        let len = self.rx_buf_len();
        if scatter && !self.xdp && room + len > page {
            let seg_len = page - room;
            return RxLayout {
                order: 0,
                seg_len,
                segs: len.div_ceil(seg_len),
            };
        }
        let mut order = 0;
        while page << order < room + len {
            order += 1;
        }
        RxLayout {
            order,
            seg_len: len,
            segs: 1,
        }
    }
}

/// Largest MTU whose frames fit one page with XDP's headroom and the skb's tailroom
/// (XDP programs see one linear buffer).
pub(crate) fn max_xdp_mtu() -> u32 {
    kernel::page::PAGE_SIZE as u32 - XDP_PACKET_HEADROOM - RX_TAILROOM - (14 + 8)
}

/// What the AF_XDP zero-copy pool checks ([`crate::hwif::xsk`]) depend on: the page, a
/// frame's bytes beyond the MTU ([`ChannelParams::rx_buf_len`]) and the skb's tail room.
pub(crate) fn xsk_geometry() -> crate::hwif::xsk::Geometry {
    crate::hwif::xsk::Geometry {
        page: kernel::page::PAGE_SIZE as u32,
        hard_mtu: 14 + 8,
        skb_tail: RX_TAILROOM,
    }
}

/// RX buffers of a set of channels ([`ChannelParams::rx_layout`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RxLayout {
    /// Page order of each buffer.
    pub(crate) order: u32,
    /// Bytes the device may write into each buffer.
    pub(crate) seg_len: u32,
    /// Buffers per received frame (1: linear).
    pub(crate) segs: u32,
}

/// The compile-time bound on a port's channels: what the per-channel arrays are sized by.
/// A port's own maximum (`ethtool -l`'s) comes from its device
/// ([`crate::family::Family::max_channels`]) and is at most this: upstream mana's
/// `MANA_MAX_NUM_QUEUES` (64). mlx5e's `MLX5E_MAX_NUM_CHANNELS` is 256, but its channels
/// are bounded by the function's completion vectors first (one per channel), and both device
/// hosts give a ConnectX function 64 vectors, one of them the control EQ's.
pub(crate) const MAX_CHANNELS: usize = 64;
