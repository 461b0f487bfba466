// SPDX-License-Identifier: GPL-2.0

//! ethtool operations (`struct ethtool_ops`).
//!
//! C header: [`include/linux/ethtool.h`](srctree/include/linux/ethtool.h).
//!
//! A driver implements [`Operations`] for the same type as
//! [`super::device::Operations`]. Private flags are declared as a list of names; the adapter
//! reports them, their count and refuses unknown bits. Counters are reported as a list of
//! names written through [`Strings`] and values written into a slice of the same length.

use super::super::bindings;
use super::device::{self, Borrowed, Device};
use core::{ffi::c_int, fmt, marker::PhantomData};
use kernel::{error::from_result, prelude::*, str::CStr};

/// Length of one ethtool string (`ETH_GSTRING_LEN`).
pub const GSTRING_LEN: usize = bindings::ETH_GSTRING_LEN as usize;

/// Driver information reported by `ethtool -i` (`struct ethtool_drvinfo`).
pub struct DrvInfo<'a>(&'a mut bindings::ethtool_drvinfo);

fn copy_cstr(dst: &mut [kernel::ffi::c_char], src: &str) {
    // Leave room for the terminating NUL; the ethtool core zeroed the struct.
    let n = src.len().min(dst.len().saturating_sub(1));
    for (d, s) in dst.iter_mut().zip(src.bytes().take(n)) {
        *d = s;
    }
    if let Some(d) = dst.get_mut(n) {
        *d = 0;
    }
}

impl DrvInfo<'_> {
    /// Sets the driver name (truncated to 31 bytes).
    pub fn set_driver(&mut self, name: &str) {
        copy_cstr(&mut self.0.driver, name);
    }

    /// Sets the driver version (truncated to 31 bytes).
    pub fn set_version(&mut self, version: &str) {
        copy_cstr(&mut self.0.version, version);
    }

    /// Sets the firmware version (truncated to 31 bytes).
    pub fn set_fw_version(&mut self, version: &str) {
        copy_cstr(&mut self.0.fw_version, version);
    }

    /// Sets the bus information (truncated to 31 bytes).
    pub fn set_bus_info(&mut self, info: &str) {
        copy_cstr(&mut self.0.bus_info, info);
    }
}

/// Link settings reported by `ethtool <dev>` (`struct ethtool_link_ksettings`).
pub struct LinkSettings<'a>(&'a mut bindings::ethtool_link_ksettings);

impl LinkSettings<'_> {
    /// Sets the speed in Mb/s.
    pub fn set_speed(&mut self, mbps: u32) {
        self.0.base.speed = mbps;
    }

    /// Sets full (`true`) or half duplex.
    pub fn set_full_duplex(&mut self, full: bool) {
        self.0.base.duplex = if full {
            bindings::DUPLEX_FULL as u8
        } else {
            bindings::DUPLEX_HALF as u8
        };
    }

    /// Reports the port as "other" (neither twisted pair nor fibre: a simulated wire).
    pub fn set_port_other(&mut self) {
        self.0.base.port = bindings::PORT_OTHER as u8;
    }

    /// Reports no link: speed and duplex unknown (`SPEED_UNKNOWN`, `DUPLEX_UNKNOWN`).
    pub fn set_no_link(&mut self) {
        self.0.base.speed = bindings::SPEED_UNKNOWN as u32;
        self.0.base.duplex = bindings::DUPLEX_UNKNOWN as u8;
    }

    /// Sets the connector `ethtool <dev>` shows as "Port:".
    pub fn set_connector(&mut self, c: Connector) {
        self.0.base.port = match c {
            Connector::TwistedPair => bindings::PORT_TP,
            Connector::Aui => bindings::PORT_AUI,
            Connector::Bnc => bindings::PORT_BNC,
            Connector::Mii => bindings::PORT_MII,
            Connector::Fibre => bindings::PORT_FIBRE,
            Connector::DirectAttach => bindings::PORT_DA,
            Connector::None => bindings::PORT_NONE,
            Connector::Other => bindings::PORT_OTHER,
        } as u8;
    }

    /// Sets whether autonegotiation is on (`Auto-negotiation:`).
    pub fn set_autoneg(&mut self, on: bool) {
        self.0.base.autoneg = if on {
            bindings::AUTONEG_ENABLE
        } else {
            bindings::AUTONEG_DISABLE
        } as u8;
    }

    /// Adds `mode` to the modes the port supports.
    pub fn add_supported(&mut self, mode: LinkMode) {
        set_mode(&mut self.0.link_modes.supported, mode);
    }

    /// Adds `mode` to the modes the port advertises.
    pub fn add_advertising(&mut self, mode: LinkMode) {
        set_mode(&mut self.0.link_modes.advertising, mode);
    }

    /// Adds `mode` to the modes the link partner advertises.
    pub fn add_lp_advertising(&mut self, mode: LinkMode) {
        set_mode(&mut self.0.link_modes.lp_advertising, mode);
    }
}

/// What `ethtool -s <dev>` asks for (`set_link_ksettings`'s `struct ethtool_link_ksettings`,
/// the core's: the current settings with the user's changes merged in).
pub struct LinkRequest<'a>(&'a bindings::ethtool_link_ksettings);

impl LinkRequest<'_> {
    /// Autonegotiation is asked for (`autoneg on`).
    pub fn autoneg(&self) -> bool {
        u32::from(self.0.base.autoneg) == bindings::AUTONEG_ENABLE
    }

    /// The speed asked for, in Mb/s (what counts without autonegotiation).
    pub fn speed(&self) -> u32 {
        self.0.base.speed
    }

    /// Whether `mode` is among the modes to advertise (what counts with autonegotiation).
    pub fn advertises(&self, mode: LinkMode) -> bool {
        let (word, bit) = mode.place();
        self.0
            .link_modes
            .advertising
            .get(word)
            .is_some_and(|w| w & bit != 0)
    }
}

/// Sets bit `mode` of a link mode bitmap (`__ETHTOOL_DECLARE_LINK_MODE_MASK`, an array of
/// `unsigned long`); a bit beyond it is ignored.
fn set_mode(mask: &mut [usize], mode: LinkMode) {
    let (word, bit) = mode.place();
    if let Some(w) = mask.get_mut(word) {
        *w |= bit;
    }
}

/// The physical connector of a port (`PORT_*`: `ethtool <dev>`'s "Port:").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connector {
    /// Twisted pair.
    TwistedPair,
    /// AUI.
    Aui,
    /// BNC.
    Bnc,
    /// MII.
    Mii,
    /// Fibre.
    Fibre,
    /// Direct-attach copper.
    DirectAttach,
    /// None.
    None,
    /// Other, or unknown.
    Other,
}

/// A link mode: a bit of ethtool's link mode masks (`enum ethtool_link_mode_bit_indices`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkMode(u32);

impl LinkMode {
    /// Where the mode sits in a link mode bitmap (an array of `unsigned long`): the word's
    /// index and the bit's mask within it.
    fn place(self) -> (usize, usize) {
        const BITS: usize = usize::BITS as usize;
        let bit = self.0 as usize;
        (bit / BITS, 1 << (bit % BITS))
    }
}

/// Defines the named link modes from the uapi enum.
macro_rules! link_modes {
    ($($(#[$m:meta])* $name:ident = $c:ident,)*) => {
        impl LinkMode {
            $(
                $(#[$m])*
                pub const $name: Self = Self(bindings::$c as u32);
            )*
        }
    };
}

link_modes! {
    /// Autonegotiation.
    AUTONEG = ethtool_link_mode_bit_indices_ETHTOOL_LINK_MODE_Autoneg_BIT,
    /// Symmetric PAUSE.
    PAUSE = ethtool_link_mode_bit_indices_ETHTOOL_LINK_MODE_Pause_BIT,
    /// Asymmetric PAUSE.
    ASYM_PAUSE = ethtool_link_mode_bit_indices_ETHTOOL_LINK_MODE_Asym_Pause_BIT,
    /// 100baseT/Full.
    M100_BASE_T = ethtool_link_mode_bit_indices_ETHTOOL_LINK_MODE_100baseT_Full_BIT,
    /// 1000baseT/Full.
    G1_BASE_T = ethtool_link_mode_bit_indices_ETHTOOL_LINK_MODE_1000baseT_Full_BIT,
    /// 1000baseKX/Full.
    G1_BASE_KX = ethtool_link_mode_bit_indices_ETHTOOL_LINK_MODE_1000baseKX_Full_BIT,
    /// 10000baseT/Full.
    G10_BASE_T = ethtool_link_mode_bit_indices_ETHTOOL_LINK_MODE_10000baseT_Full_BIT,
    /// 10000baseKX4/Full.
    G10_BASE_KX4 = ethtool_link_mode_bit_indices_ETHTOOL_LINK_MODE_10000baseKX4_Full_BIT,
    /// 10000baseKR/Full.
    G10_BASE_KR = ethtool_link_mode_bit_indices_ETHTOOL_LINK_MODE_10000baseKR_Full_BIT,
    /// 20000baseKR2/Full.
    G20_BASE_KR2 = ethtool_link_mode_bit_indices_ETHTOOL_LINK_MODE_20000baseKR2_Full_BIT,
    /// 25000baseCR/Full.
    G25_BASE_CR = ethtool_link_mode_bit_indices_ETHTOOL_LINK_MODE_25000baseCR_Full_BIT,
    /// 25000baseKR/Full.
    G25_BASE_KR = ethtool_link_mode_bit_indices_ETHTOOL_LINK_MODE_25000baseKR_Full_BIT,
    /// 25000baseSR/Full.
    G25_BASE_SR = ethtool_link_mode_bit_indices_ETHTOOL_LINK_MODE_25000baseSR_Full_BIT,
    /// 40000baseCR4/Full.
    G40_BASE_CR4 = ethtool_link_mode_bit_indices_ETHTOOL_LINK_MODE_40000baseCR4_Full_BIT,
    /// 40000baseKR4/Full.
    G40_BASE_KR4 = ethtool_link_mode_bit_indices_ETHTOOL_LINK_MODE_40000baseKR4_Full_BIT,
    /// 40000baseSR4/Full.
    G40_BASE_SR4 = ethtool_link_mode_bit_indices_ETHTOOL_LINK_MODE_40000baseSR4_Full_BIT,
    /// 40000baseLR4/Full.
    G40_BASE_LR4 = ethtool_link_mode_bit_indices_ETHTOOL_LINK_MODE_40000baseLR4_Full_BIT,
    /// 50000baseCR2/Full.
    G50_BASE_CR2 = ethtool_link_mode_bit_indices_ETHTOOL_LINK_MODE_50000baseCR2_Full_BIT,
    /// 50000baseKR2/Full.
    G50_BASE_KR2 = ethtool_link_mode_bit_indices_ETHTOOL_LINK_MODE_50000baseKR2_Full_BIT,
    /// 50000baseSR2/Full.
    G50_BASE_SR2 = ethtool_link_mode_bit_indices_ETHTOOL_LINK_MODE_50000baseSR2_Full_BIT,
    /// 56000baseKR4/Full.
    G56_BASE_KR4 = ethtool_link_mode_bit_indices_ETHTOOL_LINK_MODE_56000baseKR4_Full_BIT,
    /// 100000baseCR4/Full.
    G100_BASE_CR4 = ethtool_link_mode_bit_indices_ETHTOOL_LINK_MODE_100000baseCR4_Full_BIT,
    /// 100000baseSR4/Full.
    G100_BASE_SR4 = ethtool_link_mode_bit_indices_ETHTOOL_LINK_MODE_100000baseSR4_Full_BIT,
    /// 100000baseKR4/Full.
    G100_BASE_KR4 = ethtool_link_mode_bit_indices_ETHTOOL_LINK_MODE_100000baseKR4_Full_BIT,
    /// 100000baseLR4_ER4/Full.
    G100_BASE_LR4_ER4 = ethtool_link_mode_bit_indices_ETHTOOL_LINK_MODE_100000baseLR4_ER4_Full_BIT,
}

/// Where a refusal is explained to the user (`struct netlink_ext_ack`; absent on the ioctl
/// path).
pub struct ExtAck {
    ptr: *mut bindings::netlink_ext_ack,
}

impl ExtAck {
    /// Wraps the core's extack of a callback (or NULL).
    pub(crate) fn from_raw(ptr: *mut bindings::netlink_ext_ack) -> Self {
        Self { ptr }
    }

    /// Sets the message the user sees with the error (`NL_SET_ERR_MSG()`).
    pub fn set_message(&mut self, msg: &'static CStr) {
        // SAFETY: `ptr` is the core's extack for this call or NULL (the helper checks);
        // `msg` has static storage, as the core keeps the pointer.
        unsafe { bindings::rsnic_helper_extack_msg(self.ptr, msg.as_char_ptr()) }
    }
}

/// What `ethtool -m` learns first (`struct ethtool_modinfo`): the layout of the cable
/// module's EEPROM and its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModuleInfo {
    /// One of [`module_layout`].
    pub layout: u32,
    /// Bytes of the EEPROM in that layout.
    pub len: u32,
}

/// EEPROM layouts of a cable module (`ETH_MODULE_SFF_*`).
pub mod module_layout {
    use super::bindings;
    /// SFF-8079 (SFP without diagnostics), 256 bytes.
    pub const SFF_8079: u32 = bindings::ETH_MODULE_SFF_8079;
    /// SFF-8472 (SFP with diagnostics), 512 bytes.
    pub const SFF_8472: u32 = bindings::ETH_MODULE_SFF_8472;
    /// SFF-8436 (QSFP), 256 bytes.
    pub const SFF_8436: u32 = bindings::ETH_MODULE_SFF_8436;
    /// SFF-8636 (QSFP28, QSFP+), 640 bytes.
    pub const SFF_8636: u32 = bindings::ETH_MODULE_SFF_8636;
}

/// Where a read of a module's EEPROM page goes (`struct ethtool_module_eeprom` without its
/// data): the core has checked that the read stays in one 256-byte page (an upper page:
/// from byte 128).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModulePage {
    /// Byte offset in the page.
    pub offset: u32,
    /// Page number.
    pub page: u8,
    /// Bank number.
    pub bank: u8,
    /// I2C address of the module's memory.
    pub i2c_address: u8,
}

/// Channel counts (`ethtool -l`): rsnic has only combined channels.
#[derive(Debug, Clone, Copy, Default)]
pub struct Channels {
    /// Most combined channels.
    pub max_combined: u32,
    /// Combined channels in use.
    pub combined: u32,
}

/// Ring sizes (`ethtool -g`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Rings {
    /// Largest RX ring.
    pub rx_max: u32,
    /// Largest TX ring.
    pub tx_max: u32,
    /// RX ring size.
    pub rx: u32,
    /// TX ring size.
    pub tx: u32,
}

/// Link flow control (`struct ethtool_pauseparam`: `ethtool -a`, `-A`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PauseParam {
    /// Pause is autonegotiated with the link partner.
    pub autoneg: bool,
    /// Received PAUSE frames are honoured.
    pub rx: bool,
    /// PAUSE frames are sent.
    pub tx: bool,
}

/// IEEE 802.3x PAUSE frame counters (`struct ethtool_pause_stats`: `ethtool -I -a`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PauseStats {
    /// PAUSE frames transmitted (`aPAUSEMACCtrlFramesTransmitted`).
    pub tx_frames: u64,
    /// PAUSE frames received (`aPAUSEMACCtrlFramesReceived`).
    pub rx_frames: u64,
}
/// IEEE 802.3 MAC counters (`struct ethtool_eth_mac_stats`: `ethtool -S <dev> --groups
/// eth-mac`), those a device keeps (30.3.1.1 names in the comments); the core shows each.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MacStats {
    /// `FramesTransmittedOK`.
    pub frames_tx: u64,
    /// `FramesReceivedOK`.
    pub frames_rx: u64,
    /// `FrameCheckSequenceErrors`.
    pub fcs_errors: u64,
    /// `OctetsTransmittedOK`.
    pub octets_tx: u64,
    /// `OctetsReceivedOK`.
    pub octets_rx: u64,
    /// `MulticastFramesXmittedOK`.
    pub mcast_tx: u64,
    /// `BroadcastFramesXmittedOK`.
    pub bcast_tx: u64,
    /// `MulticastFramesReceivedOK`.
    pub mcast_rx: u64,
    /// `BroadcastFramesReceivedOK`.
    pub bcast_rx: u64,
    /// `InRangeLengthErrors`.
    pub in_range_len_errors: u64,
    /// `OutOfRangeLengthField`.
    pub out_of_range_len: u64,
    /// `FrameTooLongErrors`.
    pub too_long_errors: u64,
}

/// IEEE 802.3 MAC control counters (`struct ethtool_eth_ctrl_stats`: `--groups eth-ctrl`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CtrlStats {
    /// `MACControlFramesTransmitted`.
    pub mac_ctrl_tx: u64,
    /// `MACControlFramesReceived`.
    pub mac_ctrl_rx: u64,
    /// `UnsupportedOpcodesReceived`.
    pub unsupported_opcodes: u64,
}

/// Why the link is down (`struct ethtool_link_ext_state_info`: `ethtool <dev>` shows it as
/// "Link detected: no (State, Substate)").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkExtState {
    /// The state, an `enum ethtool_link_ext_state` value of uapi ethtool.h (0 autoneg, 1
    /// link training failure, ..., 4 no cable, ...).
    pub state: u8,
    /// Its substate, a value of the state's `enum ethtool_link_ext_substate_*` (0: none
    /// known, not reported).
    pub substate: u8,
}

/// Forward error correction modes (`ETHTOOL_FEC_*` of `struct ethtool_fecparam`: `ethtool
/// --show-fec`, `--set-fec`), one bit each.
pub mod fec {
    /// FEC is not supported (`ETHTOOL_FEC_NONE`).
    pub const NONE: u32 = 1 << 0;
    /// The device picks the mode (`ETHTOOL_FEC_AUTO`).
    pub const AUTO: u32 = 1 << 1;
    /// No FEC (`ETHTOOL_FEC_OFF`).
    pub const OFF: u32 = 1 << 2;
    /// Reed-Solomon FEC (`ETHTOOL_FEC_RS`).
    pub const RS: u32 = 1 << 3;
    /// BASE-R (FireCode) FEC (`ETHTOOL_FEC_BASER`).
    pub const BASER: u32 = 1 << 4;
    /// Low-latency Reed-Solomon FEC (`ETHTOOL_FEC_LLRS`).
    pub const LLRS: u32 = 1 << 5;
}

/// The link's forward error correction (`struct ethtool_fecparam`), [`fec`] bits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FecParam {
    /// The configured modes (`fec`).
    pub fec: u32,
    /// The mode running (`active_fec`).
    pub active: u32,
}

/// The most lanes a FEC counter has (`ETHTOOL_MAX_LANES`).
pub const FEC_MAX_LANES: usize = 8;

/// One FEC counter (`struct ethtool_fec_stat`): its total, or its value per lane (the core
/// adds those up); `None` is not reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FecStat {
    /// The total, for a device that counts no lanes.
    pub total: Option<u64>,
    /// Per lane, from lane 0 (the core reads them up to the first `None`).
    pub lanes: [Option<u64>; FEC_MAX_LANES],
}

/// IEEE 802.3 FEC counters (`struct ethtool_fec_stats`: `ethtool -I --show-fec`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FecStats {
    /// `aFECCorrectedBlocks`.
    pub corrected_blocks: FecStat,
    /// `aFECUncorrectableBlocks`.
    pub uncorrectable_blocks: FecStat,
    /// Bits corrected by the FEC.
    pub corrected_bits: FecStat,
}

/// The most size buckets an RMON histogram has (`ETHTOOL_RMON_HIST_MAX`).
pub const RMON_HIST_MAX: usize = 10;

/// One size bucket of an RMON histogram, frame lengths `low..=high` with the FCS
/// (`struct ethtool_rmon_hist_range`).
#[repr(transparent)]
pub struct RmonRange(bindings::ethtool_rmon_hist_range);

impl RmonRange {
    /// The bucket of frames of `low..=high` octets.
    pub const fn new(low: u16, high: u16) -> Self {
        Self(bindings::ethtool_rmon_hist_range { low, high })
    }

    /// The entry that ends a table (all zero).
    pub const END: Self = Self::new(0, 0);
}

/// A device's RMON histogram buckets, as the ethtool core reads them: at most
/// [`RMON_HIST_MAX`] buckets, then [`RmonRange::END`].
pub struct RmonRanges(&'static [RmonRange]);

impl RmonRanges {
    /// The table `r`: checked when the constant is evaluated (a table without its end
    /// entry, or with too many buckets, does not build).
    pub const fn new(r: &'static [RmonRange]) -> Self {
        assert!(!r.is_empty() && r.len() <= RMON_HIST_MAX + 1);
        let end = &r[r.len() - 1].0;
        assert!(end.low == 0 && end.high == 0);
        Self(r)
    }

    /// How many buckets the table has.
    pub const fn buckets(&self) -> usize {
        self.0.len() - 1
    }
}

/// RFC 2819 (RMON) counters of received frames (`struct ethtool_rmon_stats`: `--groups
/// rmon`): errors and the size histogram, whose buckets [`Operations::RMON_RANGES`] gives.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RmonStats {
    /// `etherStatsUndersizePkts`.
    pub undersize: u64,
    /// `etherStatsOversizePkts`.
    pub oversize: u64,
    /// `etherStatsFragments`.
    pub fragments: u64,
    /// `etherStatsJabbers`.
    pub jabbers: u64,
    /// Received frames per bucket (the first [`RmonRanges::buckets`] are shown).
    pub hist: [u64; RMON_HIST_MAX],
}

/// Interrupt coalescing (`ethtool -c` / `-C`, `struct ethtool_coalesce`): the fields rsnic
/// handles; the ethtool core refuses the others (see [`Operations::COALESCE_PARAMS`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Coalesce {
    /// `rx-usecs`.
    pub rx_usecs: u32,
    /// `rx-frames`.
    pub rx_frames: u32,
    /// `tx-usecs`.
    pub tx_usecs: u32,
    /// `tx-frames`.
    pub tx_frames: u32,
    /// `adaptive-rx`.
    pub adaptive_rx: bool,
    /// `adaptive-tx`.
    pub adaptive_tx: bool,
}

/// `ETHTOOL_COALESCE_USECS`: `rx-usecs` and `tx-usecs` (`BIT(0) | BIT(4)`, a function-like
/// macro bindgen cannot evaluate).
pub const COALESCE_USECS: u32 = (1 << 0) | (1 << 4);
/// `ETHTOOL_COALESCE_MAX_FRAMES`: `rx-frames` and `tx-frames` (`BIT(1) | BIT(5)`).
pub const COALESCE_MAX_FRAMES: u32 = (1 << 1) | (1 << 5);
/// `ETHTOOL_COALESCE_USE_ADAPTIVE`: `adaptive-rx` and `adaptive-tx` (`BIT(9) | BIT(10)`).
pub const COALESCE_USE_ADAPTIVE: u32 = (1 << 9) | (1 << 10);

/// Writes ethtool strings (`ETH_GSTRING_LEN` bytes each) into the buffer the ethtool core
/// sized from the count the driver reported. Strings beyond that count are ignored.
pub struct Strings<'a> {
    cursor: *mut u8,
    remaining: usize,
    _buf: PhantomData<&'a mut [u8]>,
}

impl Strings<'_> {
    /// Appends one string (truncated to `GSTRING_LEN - 1` bytes).
    pub fn push(&mut self, s: &CStr) {
        if self.remaining == 0 {
            return;
        }
        self.remaining -= 1;
        // SAFETY: `cursor` points into the core's buffer with room for `remaining + 1`
        // strings of GSTRING_LEN bytes (invariant kept by `new` and this decrement);
        // `ethtool_puts` writes exactly one such string and advances the cursor past it.
        unsafe { bindings::ethtool_puts(&mut self.cursor, s.as_char_ptr()) };
    }

    /// Appends one formatted string (truncated to `GSTRING_LEN - 1` bytes), for per-queue
    /// names such as `tx3_packets`.
    pub fn push_fmt(&mut self, args: fmt::Arguments<'_>) {
        let mut buf = StrBuf {
            bytes: [0; GSTRING_LEN],
            len: 0,
        };
        // A formatting error can only mean truncation, which is what we want.
        let _ = fmt::write(&mut buf, args);
        let end = buf.len.min(GSTRING_LEN - 1);
        buf.bytes[end] = 0;
        if let Ok(s) = CStr::from_bytes_with_nul(&buf.bytes[..=end]) {
            self.push(s);
        }
    }
}

struct StrBuf {
    bytes: [u8; GSTRING_LEN],
    len: usize,
}

impl fmt::Write for StrBuf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for b in s.bytes() {
            // Keep one byte for the NUL; stop at embedded NULs.
            if self.len + 1 >= GSTRING_LEN || b == 0 {
                return Err(fmt::Error);
            }
            self.bytes[self.len] = b;
            self.len += 1;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// RSS: `ethtool -x/-X` (rxfh) and `-n/-N rx-flow-hash` (rxnfc)

/// RSS hash functions (`ETH_RSS_HASH_*`).
pub mod rss_hash {
    use super::bindings;
    /// No change requested (`ETH_RSS_HASH_NO_CHANGE`).
    pub const NO_CHANGE: u8 = bindings::ETH_RSS_HASH_NO_CHANGE as u8;
    /// Toeplitz (`ETH_RSS_HASH_TOP`).
    pub const TOP: u8 = 1 << bindings::ETH_RSS_HASH_TOP_BIT;
    /// XOR (`ETH_RSS_HASH_XOR`).
    pub const XOR: u8 = 1 << bindings::ETH_RSS_HASH_XOR_BIT;
    /// CRC32 (`ETH_RSS_HASH_CRC32`).
    pub const CRC32: u8 = 1 << bindings::ETH_RSS_HASH_CRC32_BIT;
}

/// Flow types of `ethtool -n/-N rx-flow-hash` (`*_FLOW`).
pub mod flow {
    use super::bindings;
    /// TCP over IPv4 (`tcp4`).
    pub const TCP_V4: u32 = bindings::TCP_V4_FLOW;
    /// UDP over IPv4 (`udp4`).
    pub const UDP_V4: u32 = bindings::UDP_V4_FLOW;
    /// IPv4 (`ip4`).
    pub const IPV4: u32 = bindings::IPV4_FLOW;
    /// TCP over IPv6 (`tcp6`).
    pub const TCP_V6: u32 = bindings::TCP_V6_FLOW;
    /// UDP over IPv6 (`udp6`).
    pub const UDP_V6: u32 = bindings::UDP_V6_FLOW;
    /// IPv6 (`ip6`).
    pub const IPV6: u32 = bindings::IPV6_FLOW;
}

/// Hash field bits of `ethtool -n/-N rx-flow-hash` (`RXH_*`).
pub mod rxh {
    use super::bindings;
    /// Destination MAC (`m`).
    pub const L2DA: u32 = bindings::RXH_L2DA;
    /// VLAN tag (`v`).
    pub const VLAN: u32 = bindings::RXH_VLAN;
    /// L3 protocol (`t`).
    pub const L3_PROTO: u32 = bindings::RXH_L3_PROTO;
    /// Source IP address (`s`).
    pub const IP_SRC: u32 = bindings::RXH_IP_SRC;
    /// Destination IP address (`d`).
    pub const IP_DST: u32 = bindings::RXH_IP_DST;
    /// Bytes 0-1 of the L4 header: the source port (`f`).
    pub const L4_B_0_1: u32 = bindings::RXH_L4_B_0_1;
    /// Bytes 2-3 of the L4 header: the destination port (`n`).
    pub const L4_B_2_3: u32 = bindings::RXH_L4_B_2_3;
    /// Discard the flow type's packets (`r`).
    pub const DISCARD: u32 = bindings::RXH_DISCARD;
}

/// The RSS configuration `ethtool -x` reads (`get_rxfh`'s `struct ethtool_rxfh_param`): the
/// buffers the core asks to be filled and the hash function to report.
pub struct RxfhGet<'a> {
    indir: Option<&'a mut [u32]>,
    key: Option<&'a mut [u8]>,
    hfunc: &'a mut u8,
}

impl RxfhGet<'_> {
    /// Reports the hash function (one of [`rss_hash`]).
    pub fn set_hfunc(&mut self, hfunc: u8) {
        *self.hfunc = hfunc;
    }

    /// The indirection table to fill (`None`: not asked for), of the
    /// [`Operations::rxfh_indir_size`] entries the core sized it with.
    pub fn indir(&mut self) -> Option<&mut [u32]> {
        self.indir.as_deref_mut()
    }

    /// The hash key to fill (`None`: not asked for), of [`Operations::rxfh_key_size`]
    /// bytes.
    pub fn key(&mut self) -> Option<&mut [u8]> {
        self.key.as_deref_mut()
    }
}

/// What `ethtool -X` asks for (`set_rxfh`'s `struct ethtool_rxfh_param`). The core checked
/// the table's size against [`Operations::rxfh_indir_size`] and its entries against the
/// RX rings ([`Operations::rx_rings`]), the key's size against
/// [`Operations::rxfh_key_size`]; `-X default` comes as the default table.
pub struct RxfhSet<'a> {
    /// The new indirection table (`None`: unchanged).
    pub indir: Option<&'a [u32]>,
    /// The new hash key (`None`: unchanged).
    pub key: Option<&'a [u8]>,
    /// The hash function ([`rss_hash`]; [`rss_hash::NO_CHANGE`]: unchanged).
    pub hfunc: u8,
    /// The input transformation (`RXH_XFRM_*`; the core refuses any a driver does not
    /// declare, and rsnic declares none).
    pub input_xfrm: u8,
    /// The RSS context (0: the device's main one; others need context support).
    pub rss_context: u32,
    /// The context is to be deleted.
    pub rss_delete: bool,
}

/// The default indirection table's entry `index` over `rx_rings` rings
/// (`ethtool_rxfh_indir_default`; `rx_rings` is at least 1, 0 gives 0).
pub fn rxfh_indir_default(index: u32, rx_rings: u32) -> u32 {
    if rx_rings == 0 {
        return 0;
    }
    // SAFETY: a pure function of its arguments; `rx_rings` is not 0 (it divides).
    unsafe { bindings::rsnic_helper_ethtool_rxfh_indir_default(index, rx_rings) }
}

/// Special `ring_cookie` values of an ntuple rule (`RX_CLS_FLOW_*`).
pub mod rx_cls {
    use super::bindings;
    /// Drop the matching frames (`action -1`).
    pub const FLOW_DISC: u64 = bindings::RX_CLS_FLOW_DISC as u64;
    /// Wake-on-LAN (`action -2`).
    pub const FLOW_WAKE: u64 = bindings::RX_CLS_FLOW_WAKE as u64;
}

/// An ntuple steering rule (`struct ethtool_rx_flow_spec`, `ethtool -N <dev> flow-type
/// ...`). The header fields are read for TCP and UDP over IPv4 and IPv6 (`tcp_ip4_spec`,
/// `udp_ip4_spec`, `tcp_ip6_spec`, `udp_ip6_spec`), the flow types rsnic steers; for other
/// types they read 0 and [`FlowSpec::flow_type`] says what the user asked for. Addresses
/// are in network order (an IPv4 one in the first 4 bytes), ports in host order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowSpec {
    /// The flow type (one of [`flow`] or another `*_FLOW`), without its flags.
    pub flow_type: u32,
    /// `FLOW_EXT` or `FLOW_MAC_EXT`: VLAN, user data or destination MAC fields are given.
    pub ext: bool,
    /// `FLOW_RSS`: the rule steers to RSS context [`FlowSpec::rss_context`].
    pub rss: bool,
    /// Source address and its mask.
    pub src: [u8; 16],
    /// Mask of [`FlowSpec::src`].
    pub src_mask: [u8; 16],
    /// Destination address.
    pub dst: [u8; 16],
    /// Mask of [`FlowSpec::dst`].
    pub dst_mask: [u8; 16],
    /// Source port.
    pub sport: u16,
    /// Mask of [`FlowSpec::sport`].
    pub sport_mask: u16,
    /// Destination port.
    pub dport: u16,
    /// Mask of [`FlowSpec::dport`].
    pub dport_mask: u16,
    /// The TOS (IPv4) or traffic class (IPv6) and its mask.
    pub tos: u8,
    /// Mask of [`FlowSpec::tos`].
    pub tos_mask: u8,
    /// The queue (or [`rx_cls`]); with [`FlowSpec::rss`], an offset into the context.
    pub ring_cookie: u64,
    /// The rule's place (`loc`): lower ones are checked first.
    pub location: u32,
    /// The RSS context of a [`FlowSpec::rss`] rule.
    pub rss_context: u32,
}

/// Big-endian 32-bit words (as the kernel keeps addresses) to bytes.
fn words_to_bytes(w: &[u32; 4], out: &mut [u8; 16]) {
    let [a, b, c, d] = w.map(u32::to_ne_bytes);
    *out = [
        a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3], c[0], c[1], c[2], c[3], d[0], d[1], d[2],
        d[3],
    ];
}

/// Bytes to big-endian 32-bit words.
fn bytes_to_words(b: &[u8; 16], out: &mut [u32; 4]) {
    let w = |i: usize| {
        u32::from_ne_bytes([
            b[i & 15],
            b[i.wrapping_add(1) & 15],
            b[i.wrapping_add(2) & 15],
            b[i.wrapping_add(3) & 15],
        ])
    };
    *out = [w(0), w(4), w(8), w(12)];
}

impl FlowSpec {
    const FLAGS: u32 = bindings::FLOW_EXT | bindings::FLOW_MAC_EXT | bindings::FLOW_RSS;

    /// Whether the flow type is TCP or UDP over IPv6.
    fn v6(ft: u32) -> bool {
        ft == flow::TCP_V6 || ft == flow::UDP_V6
    }

    /// Whether the flow type is TCP or UDP over IPv4.
    fn v4(ft: u32) -> bool {
        ft == flow::TCP_V4 || ft == flow::UDP_V4
    }

    /// Reads the core's rule (and the rxnfc's `rss_context`).
    fn from_raw(fs: &bindings::ethtool_rx_flow_spec, rss_context: u32) -> Self {
        let ft = fs.flow_type & !Self::FLAGS;
        let mut s = Self {
            flow_type: ft,
            ext: fs.flow_type & (bindings::FLOW_EXT | bindings::FLOW_MAC_EXT) != 0,
            rss: fs.flow_type & bindings::FLOW_RSS != 0,
            ring_cookie: fs.ring_cookie,
            location: fs.location,
            rss_context,
            ..Self::default()
        };
        if Self::v4(ft) {
            // SAFETY: every member of the union is plain integers (any bit pattern is a
            // value); for these flow types the core and ethtool fill `tcp_ip4_spec` (the
            // same layout as `udp_ip4_spec`).
            let (h, m) = unsafe { (fs.h_u.tcp_ip4_spec, fs.m_u.tcp_ip4_spec) };
            s.src[..4].copy_from_slice(&h.ip4src.to_ne_bytes());
            s.src_mask[..4].copy_from_slice(&m.ip4src.to_ne_bytes());
            s.dst[..4].copy_from_slice(&h.ip4dst.to_ne_bytes());
            s.dst_mask[..4].copy_from_slice(&m.ip4dst.to_ne_bytes());
            (s.sport, s.sport_mask) = (u16::from_be(h.psrc), u16::from_be(m.psrc));
            (s.dport, s.dport_mask) = (u16::from_be(h.pdst), u16::from_be(m.pdst));
            (s.tos, s.tos_mask) = (h.tos, m.tos);
        } else if Self::v6(ft) {
            // SAFETY: as above, `tcp_ip6_spec` (the layout of `udp_ip6_spec`).
            let (h, m) = unsafe { (fs.h_u.tcp_ip6_spec, fs.m_u.tcp_ip6_spec) };
            words_to_bytes(&h.ip6src, &mut s.src);
            words_to_bytes(&m.ip6src, &mut s.src_mask);
            words_to_bytes(&h.ip6dst, &mut s.dst);
            words_to_bytes(&m.ip6dst, &mut s.dst_mask);
            (s.sport, s.sport_mask) = (u16::from_be(h.psrc), u16::from_be(m.psrc));
            (s.dport, s.dport_mask) = (u16::from_be(h.pdst), u16::from_be(m.pdst));
            (s.tos, s.tos_mask) = (h.tclass, m.tclass);
        }
        s
    }

    /// Writes the rule for the core (`ETHTOOL_GRXCLSRULE`); extensions are not written.
    fn write_raw(&self, fs: &mut bindings::ethtool_rx_flow_spec) {
        let ft = self.flow_type;
        fs.flow_type = ft | if self.rss { bindings::FLOW_RSS } else { 0 };
        fs.ring_cookie = self.ring_cookie;
        fs.location = self.location;
        if Self::v4(ft) {
            let word = |b: &[u8; 16]| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
            let spec =
                |a: &[u8; 16], b: &[u8; 16], p: u16, q: u16, t: u8| bindings::ethtool_tcpip4_spec {
                    ip4src: word(a),
                    ip4dst: word(b),
                    psrc: p.to_be(),
                    pdst: q.to_be(),
                    tos: t,
                };
            fs.h_u.tcp_ip4_spec = spec(&self.src, &self.dst, self.sport, self.dport, self.tos);
            fs.m_u.tcp_ip4_spec = spec(
                &self.src_mask,
                &self.dst_mask,
                self.sport_mask,
                self.dport_mask,
                self.tos_mask,
            );
        } else if Self::v6(ft) {
            let spec = |a: &[u8; 16], b: &[u8; 16], p: u16, q: u16, t: u8| {
                let mut x = bindings::ethtool_tcpip6_spec {
                    psrc: p.to_be(),
                    pdst: q.to_be(),
                    tclass: t,
                    ..Default::default()
                };
                bytes_to_words(a, &mut x.ip6src);
                bytes_to_words(b, &mut x.ip6dst);
                x
            };
            fs.h_u.tcp_ip6_spec = spec(&self.src, &self.dst, self.sport, self.dport, self.tos);
            fs.m_u.tcp_ip6_spec = spec(
                &self.src_mask,
                &self.dst_mask,
                self.sport_mask,
                self.dport_mask,
                self.tos_mask,
            );
        }
    }
}

/// An RSS context the core keeps (`struct ethtool_rxfh_context`), as its create, modify and
/// remove operations see it: the driver fills the table and key it starts with when the
/// user gave none (the core copies what the user gave after the operation succeeds).
pub struct RxfhContext<'a> {
    indir: &'a mut [u32],
    key: &'a mut [u8],
    hfunc: &'a mut u8,
}

impl RxfhContext<'_> {
    /// Reports the context's hash function (one of [`rss_hash`]; the core keeps a function
    /// the user gave).
    pub fn set_hfunc(&mut self, hfunc: u8) {
        *self.hfunc = hfunc;
    }

    /// The context's indirection table ([`Operations::rxfh_indir_size`] entries).
    pub fn indir(&mut self) -> &mut [u32] {
        self.indir
    }

    /// The context's key ([`Operations::rxfh_key_size`] bytes).
    pub fn key(&mut self) -> &mut [u8] {
        self.key
    }
}

/// ethtool operations.
///
/// An operation is in the C table when the implementation defines it (`#[vtable]`'s
/// `HAS_*` constants). An implementation that is generic over several devices can decide
/// per device type by defining the constant itself, e.g. `const HAS_GET_PAUSEPARAM: bool =
/// F::PAUSE;`: the operation is then absent for the types where it is false, and the
/// ethtool core answers `EOPNOTSUPP` for it.
#[vtable]
pub trait Operations: device::Operations {
    /// Names of the private flags, bit 0 first (at most 32).
    const PRIV_FLAGS: &'static [&'static CStr] = &[];

    /// `get_drvinfo`: fill in `ethtool -i`.
    fn get_drvinfo(_dev: &Device, _data: Borrowed<'_, Self>, _info: &mut DrvInfo<'_>) {}

    /// `get_link_ksettings`: report speed and duplex.
    fn get_link_ksettings(
        _dev: &Device,
        _data: Borrowed<'_, Self>,
        _ks: &mut LinkSettings<'_>,
    ) -> Result {
        Err(super::eopnotsupp())
    }

    /// `set_link_ksettings`: `ethtool -s` (speed, autonegotiation, modes to advertise).
    /// 6.12's operation has no extack: explain a refusal in the kernel log. Under RTNL; may
    /// sleep.
    fn set_link_ksettings(
        _dev: &Device,
        _data: Borrowed<'_, Self>,
        _req: &LinkRequest<'_>,
    ) -> Result {
        Err(super::eopnotsupp())
    }

    /// `get_link_ext_state`: why the link is down (`None`: nothing to say; the core then
    /// reports no reason, `-ENODATA`). Process context, under RTNL; may sleep.
    fn get_link_ext_state(_dev: &Device, _data: Borrowed<'_, Self>) -> Option<LinkExtState> {
        None
    }

    /// `get_priv_flags`: the current private flags, one bit per [`Self::PRIV_FLAGS`] entry.
    fn get_priv_flags(_dev: &Device, _data: Borrowed<'_, Self>) -> u32 {
        0
    }

    /// `set_priv_flags`: `flags` only has bits of [`Self::PRIV_FLAGS`] (the adapter refuses
    /// others with `EINVAL`).
    fn set_priv_flags(_dev: &Device, _data: Borrowed<'_, Self>, _flags: u32) -> Result {
        Err(super::eopnotsupp())
    }

    /// `get_channels`: channel counts.
    fn get_channels(_dev: &Device, _data: Borrowed<'_, Self>) -> Channels {
        Channels::default()
    }

    /// `set_channels`: use `combined` channels (the core checked it against the maximum;
    /// separate RX/TX/other channels are refused by the adapter).
    fn set_channels(_dev: &Device, _data: Borrowed<'_, Self>, _combined: u32) -> Result {
        Err(super::eopnotsupp())
    }

    /// `get_ringparam`: ring sizes.
    fn get_ringparam(_dev: &Device, _data: Borrowed<'_, Self>) -> Rings {
        Rings::default()
    }

    /// `set_ringparam`: new RX and TX ring sizes (the core checked them against the
    /// maxima); explain a refusal through `extack`.
    fn set_ringparam(
        _dev: &Device,
        _data: Borrowed<'_, Self>,
        _rx: u32,
        _tx: u32,
        _extack: &mut ExtAck,
    ) -> Result {
        Err(super::eopnotsupp())
    }

    /// The coalescing parameters the driver supports (`supported_coalesce_params`:
    /// [`COALESCE_USECS`], [`COALESCE_MAX_FRAMES`], [`COALESCE_USE_ADAPTIVE`]); with 0 the
    /// device cannot change its coalescing: `set_coalesce` is absent (`ethtool -C` answers
    /// "Operation not supported"), and `get_coalesce`, if implemented, reports what the
    /// device does.
    const COALESCE_PARAMS: u32 = 0;

    /// `get_coalesce`: the current interrupt coalescing (`ethtool -c`).
    fn get_coalesce(
        _dev: &Device,
        _data: Borrowed<'_, Self>,
        _extack: &mut ExtAck,
    ) -> Result<Coalesce> {
        Err(super::eopnotsupp())
    }

    /// `set_coalesce`: new interrupt coalescing (`ethtool -C`; the core filled the fields
    /// not given from [`Self::get_coalesce`] and refused those outside
    /// [`Self::COALESCE_PARAMS`]); explain a refusal through `extack`.
    fn set_coalesce(
        _dev: &Device,
        _data: Borrowed<'_, Self>,
        _c: &Coalesce,
        _extack: &mut ExtAck,
    ) -> Result {
        Err(super::eopnotsupp())
    }

    /// Number of counters reported by `ethtool -S`.
    fn stats_count(_dev: &Device, _data: Borrowed<'_, Self>) -> usize {
        0
    }

    /// Names of the counters, in order, exactly [`Self::stats_count`] of them.
    fn stats_strings(_dev: &Device, _data: Borrowed<'_, Self>, _out: &mut Strings<'_>) {}

    /// Values of the counters, in the order of their names; `out` has
    /// [`Self::stats_count`] entries (zeroed).
    fn stats_values(_dev: &Device, _data: Borrowed<'_, Self>, _out: &mut [u64]) {}

    /// `get_pauseparam`: the link's flow control (the operation cannot fail: report what
    /// is known). Process context, under RTNL; may sleep.
    fn get_pauseparam(_dev: &Device, _data: Borrowed<'_, Self>) -> PauseParam {
        PauseParam::default()
    }

    /// `set_pauseparam`: new flow control, whole (the core merged the user's change into
    /// what [`Self::get_pauseparam`] reported). 6.12's operation has no extack: explain a
    /// refusal in the kernel log. Process context, under RTNL; may sleep.
    fn set_pauseparam(_dev: &Device, _data: Borrowed<'_, Self>, _p: PauseParam) -> Result {
        Err(super::eopnotsupp())
    }

    /// `get_pause_stats`: the PAUSE frame counters (`None`: not known, nothing reported).
    /// Process context, under RTNL; may sleep.
    fn get_pause_stats(_dev: &Device, _data: Borrowed<'_, Self>) -> Option<PauseStats> {
        None
    }

    /// `get_eth_mac_stats`: the IEEE 802.3 MAC counters (`None`: not known, nothing
    /// reported). Process context, under RTNL; may sleep.
    fn get_eth_mac_stats(_dev: &Device, _data: Borrowed<'_, Self>) -> Option<MacStats> {
        None
    }

    /// `get_eth_ctrl_stats`: the MAC control counters (`None`: not known). Process context,
    /// under RTNL; may sleep.
    fn get_eth_ctrl_stats(_dev: &Device, _data: Borrowed<'_, Self>) -> Option<CtrlStats> {
        None
    }

    /// `get_eth_phy_stats`: the IEEE 802.3 PHY counter `SymbolErrorDuringCarrier`
    /// (`None`: not known). Process context, under RTNL; may sleep.
    fn get_eth_phy_stats(_dev: &Device, _data: Borrowed<'_, Self>) -> Option<u64> {
        None
    }

    /// `get_fecparam`: the link's FEC, configured and running. Process context, under RTNL;
    /// may sleep.
    fn get_fecparam(_dev: &Device, _data: Borrowed<'_, Self>) -> Result<FecParam> {
        Err(super::eopnotsupp())
    }

    /// `set_fecparam`: the FEC modes to configure, [`fec`] bits (at least one: the core
    /// refuses an empty set). 6.12's operation has no extack: explain a refusal in the
    /// kernel log. Process context, under RTNL; may sleep.
    fn set_fecparam(_dev: &Device, _data: Borrowed<'_, Self>, _fec: u32) -> Result {
        Err(super::eopnotsupp())
    }

    /// `get_fec_stats`: the FEC counters (`None`: not known, nothing reported). Process
    /// context, under RTNL; may sleep.
    fn get_fec_stats(_dev: &Device, _data: Borrowed<'_, Self>) -> Option<FecStats> {
        None
    }

    /// `get_module_info`: the cable module's EEPROM layout and length (`ethtool -m`).
    /// Process context, under RTNL; may sleep.
    fn get_module_info(_dev: &Device, _data: Borrowed<'_, Self>) -> Result<ModuleInfo> {
        Err(super::eopnotsupp())
    }

    /// `get_module_eeprom`: fills `buf` from byte `offset` of the EEPROM in the layout of
    /// [`Self::get_module_info`] (the ioctl path). Process context, under RTNL; may sleep.
    fn get_module_eeprom(
        _dev: &Device,
        _data: Borrowed<'_, Self>,
        _offset: u32,
        _buf: &mut [u8],
    ) -> Result {
        Err(super::eopnotsupp())
    }

    /// `get_module_eeprom_by_page`: reads `buf.len()` bytes of one page (the netlink
    /// path) and returns how many it read. Process context, under RTNL; may sleep.
    fn get_module_eeprom_by_page(
        _dev: &Device,
        _data: Borrowed<'_, Self>,
        _page: &ModulePage,
        _buf: &mut [u8],
        _extack: &mut ExtAck,
    ) -> Result<usize> {
        Err(super::eopnotsupp())
    }

    /// The size buckets of the device's RMON histogram (with [`Self::get_rmon_stats`]).
    const RMON_RANGES: RmonRanges = RmonRanges::new(&[RmonRange::END]);

    /// `get_rmon_stats`: the RMON counters of received frames (`None`: not known).
    /// Process context, under RTNL; may sleep.
    fn get_rmon_stats(_dev: &Device, _data: Borrowed<'_, Self>) -> Option<RmonStats> {
        None
    }

    /// `get_rxfh_indir_size`: entries of the RX flow hash indirection table. It must not
    /// change while the device is registered (the core sizes the buffers of
    /// [`Self::get_rxfh`] with it).
    fn rxfh_indir_size(_dev: &Device, _data: Borrowed<'_, Self>) -> u32 {
        0
    }

    /// `get_rxfh_key_size`: bytes of the RSS hash key (constant, as
    /// [`Self::rxfh_indir_size`]).
    fn rxfh_key_size(_dev: &Device, _data: Borrowed<'_, Self>) -> u32 {
        0
    }

    /// `get_rxfh`: the indirection table, key and hash function (`ethtool -x`).
    fn get_rxfh(_dev: &Device, _data: Borrowed<'_, Self>, _rxfh: &mut RxfhGet<'_>) -> Result {
        Err(super::eopnotsupp())
    }

    /// `set_rxfh`: a new indirection table, key or hash function (`ethtool -X`); explain
    /// a refusal through `extack` (absent on the ioctl path `ethtool -X` takes in 6.12:
    /// log it too).
    fn set_rxfh(
        _dev: &Device,
        _data: Borrowed<'_, Self>,
        _rxfh: &RxfhSet<'_>,
        _extack: &mut ExtAck,
    ) -> Result {
        Err(super::eopnotsupp())
    }

    /// `get_rxnfc(ETHTOOL_GRXRINGS)`: the RX rings RSS spreads over (`ethtool -x` and `-X`
    /// need it).
    fn rx_rings(_dev: &Device, _data: Borrowed<'_, Self>) -> u32 {
        0
    }

    /// `get_rxnfc(ETHTOOL_GRXFH)`: the [`rxh`] fields hashed for `flow_type` (one of
    /// [`flow`] or another `*_FLOW`; `FLOW_EXT`, `FLOW_MAC_EXT` and `FLOW_RSS` removed).
    fn get_rx_flow_hash(_dev: &Device, _data: Borrowed<'_, Self>, _flow_type: u32) -> Result<u32> {
        Err(super::eopnotsupp())
    }

    /// `set_rxnfc(ETHTOOL_SRXFH)`: hash the [`rxh`] `fields` for `flow_type` (as
    /// [`Self::get_rx_flow_hash`]). 6.12's rxnfc operations have no extack: explain a
    /// refusal in the kernel log.
    fn set_rx_flow_hash(
        _dev: &Device,
        _data: Borrowed<'_, Self>,
        _flow_type: u32,
        _fields: u32,
    ) -> Result {
        Err(super::eopnotsupp())
    }

    // ntuple rules: `ethtool -n/-N <dev> flow-type ...`, `delete`. 6.12's rxnfc operations
    // have no extack: explain a refusal in the kernel log.

    /// `get_rxnfc(ETHTOOL_GRXCLSRLCNT)`: (rules installed, locations of the rule table:
    /// `0..size`). The user (ethtool) picks a free location when none is given.
    fn rule_count(_dev: &Device, _data: Borrowed<'_, Self>) -> Result<(u32, u32)> {
        Err(super::eopnotsupp())
    }

    /// `get_rxnfc(ETHTOOL_GRXCLSRULE)`: the rule at `location`.
    fn get_rule(_dev: &Device, _data: Borrowed<'_, Self>, _location: u32) -> Result<FlowSpec> {
        Err(super::eopnotsupp())
    }

    /// `get_rxnfc(ETHTOOL_GRXCLSRLALL)`: writes the installed rules' locations, ascending,
    /// into `locs` and returns how many there are (more than fit: refused, `EINVAL`).
    fn rule_locations(_dev: &Device, _data: Borrowed<'_, Self>, _locs: &mut [u32]) -> Result<u32> {
        Err(super::eopnotsupp())
    }

    /// `set_rxnfc(ETHTOOL_SRXCLSRLINS)`: installs `spec` at its location (replacing what
    /// was there).
    fn insert_rule(_dev: &Device, _data: Borrowed<'_, Self>, _spec: &FlowSpec) -> Result {
        Err(super::eopnotsupp())
    }

    /// `set_rxnfc(ETHTOOL_SRXCLSRLDEL)`: removes the rule at `location`.
    fn delete_rule(_dev: &Device, _data: Borrowed<'_, Self>, _location: u32) -> Result {
        Err(super::eopnotsupp())
    }

    // Additional RSS contexts (`ethtool -X <dev> context new|C [delete]`): the core keeps
    // them (ids, tables, keys) and calls these; it answers `-x context C` itself.

    /// Additional RSS contexts the device holds (0: none; the core then refuses contexts).
    /// Their ids are `1..=RSS_CONTEXTS` (`rxfh_max_num_contexts` is one more); each has
    /// its own key (`rxfh_per_ctx_key`).
    const RSS_CONTEXTS: u32 = 0;

    /// `create_rxfh_context`: makes context `rxfh.rss_context` with the table and key
    /// `rxfh` gives, filling `ctx` with the ones it starts with where `rxfh` has none.
    fn create_rxfh_context(
        _dev: &Device,
        _data: Borrowed<'_, Self>,
        _ctx: &mut RxfhContext<'_>,
        _rxfh: &RxfhSet<'_>,
        _extack: &mut ExtAck,
    ) -> Result {
        Err(super::eopnotsupp())
    }

    /// `modify_rxfh_context`: a new table, key or function for context `rxfh.rss_context`
    /// (`ctx` still holds the old ones).
    fn modify_rxfh_context(
        _dev: &Device,
        _data: Borrowed<'_, Self>,
        _ctx: &mut RxfhContext<'_>,
        _rxfh: &RxfhSet<'_>,
        _extack: &mut ExtAck,
    ) -> Result {
        Err(super::eopnotsupp())
    }

    /// `remove_rxfh_context`: context `id` goes.
    fn remove_rxfh_context(
        _dev: &Device,
        _data: Borrowed<'_, Self>,
        _id: u32,
        _extack: &mut ExtAck,
    ) -> Result {
        Err(super::eopnotsupp())
    }
}

/// Writes one callback of [`Adapter`]: the `unsafe extern "C" fn` the ethtool core calls with
/// the device (`$raw`) first. It borrows the device and `T`'s data as `$dev` and `$data` and
/// runs the body; a `try fn` runs it in `from_result` and returns 0 or the error's errno.
/// Extra doc lines state further conditions on the arguments.
macro_rules! callback {
    (@fn [$($doc:meta)*] $name:ident($raw:ident => ($dev:ident, $data:ident)
        $(, $arg:ident: $ty:ty)* $(,)?) $(-> $ret:ty)? { $($body:tt)* }) => {
        /// # Safety
        ///
        /// Called by the ethtool core for a device registered for `T`, with valid arguments.
        $(#[$doc])*
        unsafe extern "C" fn $name($raw: *mut bindings::net_device $(, $arg: $ty)*) $(-> $ret)? {
            // SAFETY: called by the ethtool core for a device registered for `T`.
            let ($dev, $data) = unsafe { Self::split($raw) };
            $($body)*
        }
    };
    ($(#[$doc:meta])* try fn $name:ident($($args:tt)*) { $($body:tt)* }) => {
        callback! {
            @fn [$($doc)*] $name($($args)*) -> c_int {
                from_result(|| {
                    $($body)*
                    Ok(0)
                })
            }
        }
    };
    ($(#[$doc:meta])* fn $name:ident($($args:tt)*) $(-> $ret:ty)? { $($body:tt)* }) => {
        callback! { @fn [$($doc)*] $name($($args)*) $(-> $ret)? { $($body)* } }
    };
}

/// The callbacks that make or change an RSS context, one for each name: the same
/// arguments, passed to `T`'s operation of that name.
macro_rules! rxfh_context_callbacks {
    ($($name:ident),*) => {
        $(
            callback! {
                try fn $name(
                    dev => (dev, data),
                    ctx: *mut bindings::ethtool_rxfh_context,
                    rxfh: *const bindings::ethtool_rxfh_param,
                    extack: *mut bindings::netlink_ext_ack,
                ) {
                    // SAFETY: the core's context and request for this call (see the
                    // function's contract).
                    let (mut c, req) = unsafe { (Self::context(ctx), Self::rxfh_request(rxfh)) };
                    T::$name(dev, data, &mut c, &req, &mut ExtAck::from_raw(extack))?;
                }
            }
        )*
    };
}

/// Builds the C `ethtool_ops` table for a driver type.
pub(crate) struct Adapter<T>(PhantomData<T>);

impl<T: Operations> Adapter<T> {
    const OPS: bindings::ethtool_ops = {
        // SAFETY: `ethtool_ops` is a C struct of nullable function pointers, integers and
        // bitfields, for which all-zero bytes are a valid value (nothing supported).
        let mut ops: bindings::ethtool_ops = unsafe { core::mem::zeroed() };
        ops.get_link = Some(bindings::ethtool_op_get_link);
        ops.get_drvinfo = Some(Self::get_drvinfo);
        ops.get_link_ksettings = if T::HAS_GET_LINK_KSETTINGS {
            Some(Self::get_link_ksettings)
        } else {
            None
        };
        if T::HAS_SET_LINK_KSETTINGS {
            ops.set_link_ksettings = Some(Self::set_link_ksettings);
        }
        if T::HAS_GET_LINK_EXT_STATE {
            ops.get_link_ext_state = Some(Self::get_link_ext_state);
        }
        ops.get_priv_flags = Some(Self::get_priv_flags);
        ops.set_priv_flags = if T::HAS_SET_PRIV_FLAGS {
            Some(Self::set_priv_flags)
        } else {
            None
        };
        ops.get_sset_count = Some(Self::get_sset_count);
        ops.get_strings = Some(Self::get_strings);
        ops.get_ethtool_stats = Some(Self::get_ethtool_stats);
        if T::HAS_GET_CHANNELS {
            ops.get_channels = Some(Self::get_channels);
        }
        if T::HAS_SET_CHANNELS {
            ops.set_channels = Some(Self::set_channels);
        }
        if T::HAS_GET_RINGPARAM {
            ops.get_ringparam = Some(Self::get_ringparam);
        }
        if T::HAS_SET_RINGPARAM {
            ops.set_ringparam = Some(Self::set_ringparam);
        }
        if T::HAS_GET_PAUSEPARAM {
            ops.get_pauseparam = Some(Self::get_pauseparam);
        }
        if T::HAS_SET_PAUSEPARAM {
            ops.set_pauseparam = Some(Self::set_pauseparam);
        }
        if T::HAS_GET_PAUSE_STATS {
            ops.get_pause_stats = Some(Self::get_pause_stats);
        }
        if T::HAS_GET_ETH_MAC_STATS {
            ops.get_eth_mac_stats = Some(Self::get_eth_mac_stats);
        }
        if T::HAS_GET_ETH_CTRL_STATS {
            ops.get_eth_ctrl_stats = Some(Self::get_eth_ctrl_stats);
        }
        if T::HAS_GET_RMON_STATS {
            ops.get_rmon_stats = Some(Self::get_rmon_stats);
        }
        if T::HAS_GET_ETH_PHY_STATS {
            ops.get_eth_phy_stats = Some(Self::get_eth_phy_stats);
        }
        if T::HAS_GET_FECPARAM {
            ops.get_fecparam = Some(Self::get_fecparam);
        }
        if T::HAS_SET_FECPARAM {
            ops.set_fecparam = Some(Self::set_fecparam);
        }
        if T::HAS_GET_FEC_STATS {
            ops.get_fec_stats = Some(Self::get_fec_stats);
        }
        if T::HAS_GET_MODULE_INFO {
            ops.get_module_info = Some(Self::get_module_info);
        }
        if T::HAS_GET_MODULE_EEPROM {
            ops.get_module_eeprom = Some(Self::get_module_eeprom);
        }
        if T::HAS_GET_MODULE_EEPROM_BY_PAGE {
            ops.get_module_eeprom_by_page = Some(Self::get_module_eeprom_by_page);
        }
        // Interrupt coalescing: reported if the driver can say what it is; changed only
        // with the parameters the driver supports.
        if T::HAS_GET_COALESCE {
            ops.get_coalesce = Some(Self::get_coalesce);
        }
        if T::COALESCE_PARAMS != 0 {
            ops.supported_coalesce_params = T::COALESCE_PARAMS;
            if T::HAS_SET_COALESCE {
                ops.set_coalesce = Some(Self::set_coalesce);
            }
        }
        if T::HAS_RXFH_INDIR_SIZE {
            ops.get_rxfh_indir_size = Some(Self::get_rxfh_indir_size);
        }
        if T::HAS_RXFH_KEY_SIZE {
            ops.get_rxfh_key_size = Some(Self::get_rxfh_key_size);
        }
        if T::HAS_GET_RXFH {
            ops.get_rxfh = Some(Self::get_rxfh);
        }
        if T::HAS_SET_RXFH {
            ops.set_rxfh = Some(Self::set_rxfh);
        }
        // RSS contexts only where the driver has them: without `create_rxfh_context` (and
        // `cap_rss_ctx_supported`) the core refuses `-X context` itself (EOPNOTSUPP).
        if T::RSS_CONTEXTS > 0 {
            ops.rxfh_max_num_contexts = T::RSS_CONTEXTS.saturating_add(1);
            // The bitfield word: `supported_input_xfrm` (8 bits), then
            // `cap_link_lanes_supported`, `cap_rss_ctx_supported`, `rxfh_per_ctx_fields`,
            // `rxfh_per_ctx_key` (bit 11): a key per context.
            ops._bitfield_1 = bindings::__BindgenBitfieldUnit::new([0, 1 << 3]);
            ops.create_rxfh_context = Some(Self::create_rxfh_context);
            ops.modify_rxfh_context = Some(Self::modify_rxfh_context);
            ops.remove_rxfh_context = Some(Self::remove_rxfh_context);
        }
        if T::HAS_RX_RINGS || T::HAS_GET_RX_FLOW_HASH || T::HAS_RULE_COUNT {
            ops.get_rxnfc = Some(Self::get_rxnfc);
        }
        if T::HAS_SET_RX_FLOW_HASH || T::HAS_INSERT_RULE {
            ops.set_rxnfc = Some(Self::set_rxnfc);
        }
        ops
    };

    /// [`Self::OPS`] without the flow-control operations, for a device that has no flow
    /// control of its own: `ethtool -a`, `-A` and `-I -a` get `EOPNOTSUPP` from the core, as
    /// for a driver that has none.
    const OPS_NO_PAUSE: bindings::ethtool_ops = {
        let mut ops = Self::OPS;
        ops.get_pauseparam = None;
        ops.set_pauseparam = None;
        ops.get_pause_stats = None;
        ops
    };

    /// The table, for `net_device::ethtool_ops`; without the flow-control operations unless
    /// `pause` (the device has flow control: see [`device::Config::pause`]).
    pub(crate) const fn table(pause: bool) -> &'static bindings::ethtool_ops {
        if pause {
            &Self::OPS
        } else {
            &Self::OPS_NO_PAUSE
        }
    }

    /// # Safety
    ///
    /// As [`device::Operations`] callbacks: `dev` is registered for `T`.
    unsafe fn split<'a>(dev: *mut bindings::net_device) -> (&'a Device, Borrowed<'a, T>) {
        // SAFETY: ethtool callbacks are called for a registered device (under RTNL), between
        // registration and the end of unregistration, exactly like the ndo callbacks.
        unsafe { device::split::<T>(dev) }
    }

    fn priv_mask() -> u32 {
        match T::PRIV_FLAGS.len() {
            0 => 0,
            n if n >= 32 => u32::MAX,
            n => (1u32 << n) - 1,
        }
    }

    callback! {
        fn get_drvinfo(dev => (dev, data), info: *mut bindings::ethtool_drvinfo) {
            // SAFETY: the core passes a valid, zeroed, exclusively owned `ethtool_drvinfo`.
            let mut info = DrvInfo(unsafe { &mut *info });
            T::get_drvinfo(dev, data, &mut info);
        }
    }

    callback! {
        try fn get_link_ksettings(dev => (dev, data), ks: *mut bindings::ethtool_link_ksettings) {
            // SAFETY: the core passes a valid, zeroed, exclusively owned struct.
            T::get_link_ksettings(dev, data, &mut LinkSettings(unsafe { &mut *ks }))?;
        }
    }

    callback! {
        try fn set_link_ksettings(dev => (dev, data), ks: *const bindings::ethtool_link_ksettings) {
            // SAFETY: the core passes a valid struct it owns for the call, read here only.
            T::set_link_ksettings(dev, data, &LinkRequest(unsafe { &*ks }))?;
        }
    }

    callback! {
        fn get_priv_flags(dev => (dev, data)) -> u32 {
            T::get_priv_flags(dev, data) & Self::priv_mask()
        }
    }

    callback! {
        try fn set_priv_flags(dev => (dev, data), flags: u32) {
            if flags & !Self::priv_mask() != 0 {
                return Err(EINVAL);
            }
            T::set_priv_flags(dev, data, flags)?;
        }
    }

    fn count(dev: &Device, data: Borrowed<'_, T>, sset: c_int) -> Option<usize> {
        match u32::try_from(sset).ok()? {
            bindings::ethtool_stringset_ETH_SS_PRIV_FLAGS => Some(T::PRIV_FLAGS.len().min(32)),
            bindings::ethtool_stringset_ETH_SS_STATS => Some(T::stats_count(dev, data)),
            _ => None,
        }
    }

    callback! {
        fn get_sset_count(dev => (dev, data), sset: c_int) -> c_int {
            match Self::count(dev, data, sset) {
                Some(n) => c_int::try_from(n).unwrap_or(c_int::MAX),
                None => super::eopnotsupp().to_errno(),
            }
        }
    }

    callback! {
        fn get_strings(dev => (device, data), sset: u32, buf: *mut u8) {
            let Some(n) = Self::count(device, data, sset as c_int) else {
                return;
            };
            let mut out = Strings {
                cursor: buf,
                remaining: n,
                _buf: PhantomData,
            };
            if sset == bindings::ethtool_stringset_ETH_SS_PRIV_FLAGS {
                for name in T::PRIV_FLAGS.iter().take(32) {
                    out.push(name);
                }
            } else {
                // SAFETY: as above; the first borrow ended with `count`.
                let (device, data) = unsafe { Self::split(dev) };
                T::stats_strings(device, data, &mut out);
            }
        }
    }

    callback! {
        fn get_ethtool_stats(
            dev => (dev, data),
            stats: *mut bindings::ethtool_stats,
            values: *mut u64,
        ) {
            // SAFETY: the core allocated (zeroed) `n_stats` values, the count it got from our
            // `get_sset_count` under the same RTNL hold, and owns them exclusively for the call.
            let out = unsafe {
                let n = (*stats).n_stats as usize;
                if n == 0 || values.is_null() {
                    return;
                }
                core::slice::from_raw_parts_mut(values, n)
            };
            T::stats_values(dev, data, out);
        }
    }

    callback! {
        fn get_channels(dev => (dev, data), ch: *mut bindings::ethtool_channels) {
            let c = T::get_channels(dev, data);
            // SAFETY: the core passes a valid, zeroed, exclusively owned struct.
            let ch = unsafe { &mut *ch };
            ch.max_combined = c.max_combined;
            ch.combined_count = c.combined;
        }
    }

    callback! {
        try fn set_channels(dev => (dev, data), ch: *mut bindings::ethtool_channels) {
            // SAFETY: the core passes a valid struct for the call.
            let ch = unsafe { &*ch };
            if ch.rx_count != 0 || ch.tx_count != 0 || ch.other_count != 0 {
                return Err(EINVAL);
            }
            T::set_channels(dev, data, ch.combined_count)?;
        }
    }

    callback! {
        fn get_ringparam(
            dev => (dev, data),
            ring: *mut bindings::ethtool_ringparam,
            _kring: *mut bindings::kernel_ethtool_ringparam,
            _extack: *mut bindings::netlink_ext_ack,
        ) {
            let r = T::get_ringparam(dev, data);
            // SAFETY: the core passes a valid, exclusively owned struct.
            let ring = unsafe { &mut *ring };
            ring.rx_max_pending = r.rx_max;
            ring.tx_max_pending = r.tx_max;
            ring.rx_pending = r.rx;
            ring.tx_pending = r.tx;
        }
    }

    callback! {
        try fn set_ringparam(
            dev => (dev, data),
            ring: *mut bindings::ethtool_ringparam,
            _kring: *mut bindings::kernel_ethtool_ringparam,
            extack: *mut bindings::netlink_ext_ack,
        ) {
            // SAFETY: the core passes a valid struct for the call.
            let ring = unsafe { &*ring };
            let mut ack = ExtAck { ptr: extack };
            if ring.rx_mini_pending != 0 || ring.rx_jumbo_pending != 0 {
                ack.set_message(kernel::c_str!("rsnic has no mini or jumbo RX rings"));
                return Err(EINVAL);
            }
            T::set_ringparam(dev, data, ring.rx_pending, ring.tx_pending, &mut ack)?;
        }
    }

    callback! {
        fn get_pauseparam(dev => (dev, data), p: *mut bindings::ethtool_pauseparam) {
            let v = T::get_pauseparam(dev, data);
            // SAFETY: the core passes a valid struct it owns exclusively for the call (the
            // ioctl path's on its stack, netlink's in its reply data).
            let p = unsafe { &mut *p };
            p.autoneg = u32::from(v.autoneg);
            p.rx_pause = u32::from(v.rx);
            p.tx_pause = u32::from(v.tx);
        }
    }

    callback! {
        try fn set_pauseparam(dev => (dev, data), p: *mut bindings::ethtool_pauseparam) {
            // SAFETY: the core passes a valid struct for the call.
            let p = unsafe { &*p };
            let v = PauseParam {
                autoneg: p.autoneg != 0,
                rx: p.rx_pause != 0,
                tx: p.tx_pause != 0,
            };
            T::set_pauseparam(dev, data, v)?;
        }
    }

    callback! {
        fn get_eth_mac_stats(dev => (dev, data), stats: *mut bindings::ethtool_eth_mac_stats) {
            let Some(m) = T::get_eth_mac_stats(dev, data) else {
                return;
            };
            let v = [
                m.frames_tx,
                m.frames_rx,
                m.fcs_errors,
                m.octets_tx,
                m.octets_rx,
                m.mcast_tx,
                m.bcast_tx,
                m.mcast_rx,
                m.bcast_rx,
                m.in_range_len_errors,
                m.out_of_range_len,
                m.too_long_errors,
            ];
            // SAFETY: the core passes a valid struct (its counters preset to "not set")
            // that it owns exclusively for the call; the helper reads the 12 values of `v`
            // in the order its comment gives and writes those counters only.
            unsafe { bindings::rsnic_helper_eth_mac_stats(stats, v.as_ptr()) };
        }
    }

    callback! {
        fn get_eth_ctrl_stats(dev => (dev, data), stats: *mut bindings::ethtool_eth_ctrl_stats) {
            let Some(c) = T::get_eth_ctrl_stats(dev, data) else {
                return;
            };
            let (tx, rx, unsupported) = (c.mac_ctrl_tx, c.mac_ctrl_rx, c.unsupported_opcodes);
            // SAFETY: as for `get_eth_mac_stats`: a valid struct the core owns for the
            // call; the helper writes the three counters only.
            unsafe { bindings::rsnic_helper_eth_ctrl_stats(stats, tx, rx, unsupported) };
        }
    }

    callback! {
        fn get_rmon_stats(
            dev => (dev, data),
            stats: *mut bindings::ethtool_rmon_stats,
            ranges: *mut *const bindings::ethtool_rmon_hist_range,
        ) {
            let Some(r) = T::get_rmon_stats(dev, data) else {
                return;
            };
            let table = T::RMON_RANGES;
            let n = table.buckets().min(RMON_HIST_MAX);
            let v = [r.undersize, r.oversize, r.fragments, r.jabbers];
            // SAFETY: a valid struct the core owns for the call (counters preset to "not
            // set"); the helper reads the four values of `v` and the first `n` (at most
            // ETHTOOL_RMON_HIST_MAX) of `r.hist`, and writes those counters only.
            unsafe { bindings::rsnic_helper_rmon_stats(stats, v.as_ptr(), r.hist.as_ptr(), n) };
            // SAFETY: `ranges` is the core's out-pointer for the table; the table is
            // `'static`, of `#[repr(transparent)]` entries, and ends in an all-zero entry
            // (checked by `RmonRanges::new`), as the core reads it.
            unsafe { *ranges = table.0.as_ptr().cast() };
        }
    }

    callback! {
        fn get_eth_phy_stats(dev => (dev, data), stats: *mut bindings::ethtool_eth_phy_stats) {
            let Some(v) = T::get_eth_phy_stats(dev, data) else {
                return;
            };
            // SAFETY: as for `get_eth_mac_stats`: a valid struct the core owns for the
            // call; the helper writes the one counter only.
            unsafe { bindings::rsnic_helper_eth_phy_stats(stats, v) };
        }
    }

    callback! {
        fn get_link_ext_state(
            dev => (dev, data),
            info: *mut bindings::ethtool_link_ext_state_info,
        ) -> c_int {
            let Some(v) = T::get_link_ext_state(dev, data) else {
                return -(bindings::ENODATA as c_int);
            };
            // SAFETY: the core passes its reply data's struct (`linkstate_get_link_ext_state`),
            // valid and owned exclusively by this call.
            let info = unsafe { &mut *info };
            info.link_ext_state = v.state.into();
            // `__link_ext_substate` is the `u32` view of the substate union the core reads.
            info.__bindgen_anon_1.__link_ext_substate = v.substate.into();
            0
        }
    }

    callback! {
        try fn get_fecparam(dev => (dev, data), p: *mut bindings::ethtool_fecparam) {
            let v = T::get_fecparam(dev, data)?;
            // SAFETY: the core passes a valid struct it owns exclusively for the call (the
            // ioctl path's on its stack, netlink's on its own).
            let p = unsafe { &mut *p };
            p.fec = v.fec;
            p.active_fec = v.active;
        }
    }

    callback! {
        try fn set_fecparam(dev => (dev, data), p: *mut bindings::ethtool_fecparam) {
            // SAFETY: the core passes a valid struct for the call.
            let fec = unsafe { (*p).fec };
            T::set_fecparam(dev, data, fec)?;
        }
    }

    callback! {
        fn get_fec_stats(dev => (dev, data), stats: *mut bindings::ethtool_fec_stats) {
            let Some(s) = T::get_fec_stats(dev, data) else {
                return;
            };
            // SAFETY: the core passes a valid struct (every counter preset to "not set")
            // that it owns exclusively for the call.
            let out = unsafe { &mut *stats };
            for (o, v) in [
                (&mut out.corrected_blocks, s.corrected_blocks),
                (&mut out.uncorrectable_blocks, s.uncorrectable_blocks),
                (&mut out.corrected_bits, s.corrected_bits),
            ] {
                if let Some(t) = v.total {
                    o.total = t;
                }
                for (l, x) in o.lanes.iter_mut().zip(v.lanes) {
                    if let Some(x) = x {
                        *l = x;
                    }
                }
            }
        }
    }

    callback! {
        try fn get_module_info(dev => (dev, data), info: *mut bindings::ethtool_modinfo) {
            let m = T::get_module_info(dev, data)?;
            // SAFETY: the core passes a valid struct it owns exclusively for the call.
            let info = unsafe { &mut *info };
            info.type_ = m.layout;
            info.eeprom_len = m.len;
        }
    }

    callback! {
        try fn get_module_eeprom(
            dev => (dev, data),
            ee: *mut bindings::ethtool_eeprom,
            buf: *mut u8,
        ) {
            // SAFETY: the core passes a valid request it owns for the call, and `buf` of
            // `ee->len` bytes (checked against the module's length from
            // `get_module_info`), written by nobody else meanwhile.
            let (offset, out) = unsafe {
                let len = (*ee).len as usize;
                ((*ee).offset, core::slice::from_raw_parts_mut(buf, len))
            };
            T::get_module_eeprom(dev, data, offset, out)?;
        }
    }

    callback! {
        fn get_module_eeprom_by_page(
            dev => (dev, data),
            req: *const bindings::ethtool_module_eeprom,
            extack: *mut bindings::netlink_ext_ack,
        ) -> c_int {
            // SAFETY: the core passes a valid request for the call whose `data` holds
            // `length` bytes it allocated for this read, written by nobody else meanwhile.
            let (page, out) = unsafe {
                let r = &*req;
                (
                    ModulePage {
                        offset: r.offset,
                        page: r.page,
                        bank: r.bank,
                        i2c_address: r.i2c_address,
                    },
                    core::slice::from_raw_parts_mut(r.data, r.length as usize),
                )
            };
            let mut ack = ExtAck::from_raw(extack);
            match T::get_module_eeprom_by_page(dev, data, &page, out, &mut ack) {
                // (At most the page's 256 bytes.)
                Ok(n) => n.min(out.len()) as c_int,
                Err(e) => e.to_errno(),
            }
        }
    }

    callback! {
        fn get_pause_stats(dev => (dev, data), stats: *mut bindings::ethtool_pause_stats) {
            let Some(s) = T::get_pause_stats(dev, data) else {
                return;
            };
            // SAFETY: the core passes a valid struct (its counters preset to "not set") that
            // it owns exclusively for the call; the helper writes the two counters only.
            unsafe { bindings::rsnic_helper_pause_stats(stats, s.tx_frames, s.rx_frames) };
        }
    }

    callback! {
        try fn get_coalesce(
            dev => (dev, data),
            coal: *mut bindings::ethtool_coalesce,
            _kcoal: *mut bindings::kernel_ethtool_coalesce,
            extack: *mut bindings::netlink_ext_ack,
        ) {
            let c = T::get_coalesce(dev, data, &mut ExtAck { ptr: extack })?;
            // SAFETY: the core passes a valid, exclusively owned struct for the call.
            let coal = unsafe { &mut *coal };
            coal.rx_coalesce_usecs = c.rx_usecs;
            coal.rx_max_coalesced_frames = c.rx_frames;
            coal.tx_coalesce_usecs = c.tx_usecs;
            coal.tx_max_coalesced_frames = c.tx_frames;
            coal.use_adaptive_rx_coalesce = u32::from(c.adaptive_rx);
            coal.use_adaptive_tx_coalesce = u32::from(c.adaptive_tx);
        }
    }

    callback! {
        try fn set_coalesce(
            dev => (dev, data),
            coal: *mut bindings::ethtool_coalesce,
            _kcoal: *mut bindings::kernel_ethtool_coalesce,
            extack: *mut bindings::netlink_ext_ack,
        ) {
            // SAFETY: the core passes a valid struct for the call.
            let coal = unsafe { &*coal };
            let c = Coalesce {
                rx_usecs: coal.rx_coalesce_usecs,
                rx_frames: coal.rx_max_coalesced_frames,
                tx_usecs: coal.tx_coalesce_usecs,
                tx_frames: coal.tx_max_coalesced_frames,
                adaptive_rx: coal.use_adaptive_rx_coalesce != 0,
                adaptive_tx: coal.use_adaptive_tx_coalesce != 0,
            };
            T::set_coalesce(dev, data, &c, &mut ExtAck { ptr: extack })?;
        }
    }

    callback! {
        fn get_rxfh_indir_size(dev => (dev, data)) -> u32 {
            T::rxfh_indir_size(dev, data)
        }
    }

    callback! {
        fn get_rxfh_key_size(dev => (dev, data)) -> u32 {
            T::rxfh_key_size(dev, data)
        }
    }

    callback! {
        try fn get_rxfh(dev => (device, data), rxfh: *mut bindings::ethtool_rxfh_param) {
            let our_indir = T::rxfh_indir_size(device, data) as usize;
            // SAFETY: as above; the first borrow ended.
            let (device, data) = unsafe { Self::split(dev) };
            let our_key = T::rxfh_key_size(device, data) as usize;
            // SAFETY: the core passes a valid parameter block, exclusively ours for the call.
            let p = unsafe { &mut *rxfh };
            // A size the core filled in bounds the buffer too (the ioctl and netlink paths
            // do; ethtool_get_max_rxfh_channel leaves it 0).
            let bound = |ours: usize, theirs: u32| match theirs {
                0 => ours,
                n => ours.min(n as usize),
            };
            let (ni, nk) = (bound(our_indir, p.indir_size), bound(our_key, p.key_size));
            let indir = if p.indir.is_null() || ni == 0 {
                None
            } else {
                // SAFETY: every caller of get_rxfh allocated `indir` with the entries
                // get_rxfh_indir_size reported under the same RTNL hold (a constant of
                // the device, see the trait), at least `ni`; it is exclusively ours for
                // the call and not aliased by the key.
                Some(unsafe { core::slice::from_raw_parts_mut(p.indir, ni) })
            };
            let key = if p.key.is_null() || nk == 0 {
                None
            } else {
                // SAFETY: as for `indir`, with get_rxfh_key_size's bytes (a separate part
                // of the core's allocation).
                Some(unsafe { core::slice::from_raw_parts_mut(p.key, nk) })
            };
            let mut get = RxfhGet {
                indir,
                key,
                hfunc: &mut p.hfunc,
            };
            // SAFETY: as above; the earlier borrows ended.
            let (device, data) = unsafe { Self::split(dev) };
            T::get_rxfh(device, data, &mut get)?;
        }
    }

    callback! {
        try fn set_rxfh(
            dev => (dev, data),
            rxfh: *mut bindings::ethtool_rxfh_param,
            extack: *mut bindings::netlink_ext_ack,
        ) {
            // SAFETY: ethtool_set_rxfh passes a valid parameter block whose `indir` (if
            // set) points at `indir_size` entries of its own allocation (the device's
            // size, every entry checked against the RX rings) and `key` at `key_size`
            // bytes after the table, valid and unchanged for the call.
            let req = unsafe { Self::rxfh_request(rxfh) };
            T::set_rxfh(dev, data, &req, &mut ExtAck::from_raw(extack))?;
        }
    }

    /// The flags a flow type may carry besides the type (`FLOW_EXT`, `FLOW_MAC_EXT`,
    /// `FLOW_RSS`).
    const FLOW_FLAGS: u32 = bindings::FLOW_EXT | bindings::FLOW_MAC_EXT | bindings::FLOW_RSS;

    callback! {
        /// For `ETHTOOL_GRXCLSRLALL`, `rule_locs` points at `info.rule_cnt` entries.
        try fn get_rxnfc(
            raw => (dev, data),
            info: *mut bindings::ethtool_rxnfc,
            rule_locs: *mut u32,
        ) {
            // SAFETY: the core passes a valid, exclusively owned `ethtool_rxnfc` for the call.
            let info = unsafe { &mut *info };
            match info.cmd {
                bindings::ETHTOOL_GRXRINGS if T::HAS_RX_RINGS => {
                    info.data = u64::from(T::rx_rings(dev, data));
                }
                bindings::ETHTOOL_GRXFH if T::HAS_GET_RX_FLOW_HASH => {
                    let ft = info.flow_type & !Self::FLOW_FLAGS;
                    info.data = u64::from(T::get_rx_flow_hash(dev, data, ft)?);
                }
                bindings::ETHTOOL_GRXCLSRLCNT if T::HAS_RULE_COUNT => {
                    let (n, size) = T::rule_count(dev, data)?;
                    info.__bindgen_anon_1.rule_cnt = n;
                    info.data = u64::from(size);
                }
                bindings::ETHTOOL_GRXCLSRULE if T::HAS_GET_RULE => {
                    let spec = T::get_rule(dev, data, info.fs.location)?;
                    spec.write_raw(&mut info.fs);
                    if spec.rss {
                        info.__bindgen_anon_1.rss_context = spec.rss_context;
                    }
                }
                bindings::ETHTOOL_GRXCLSRLALL if T::HAS_RULE_LOCATIONS => {
                    // SAFETY: `rule_cnt` is the member the core set for this command; an
                    // integer either way.
                    let cap = unsafe { info.__bindgen_anon_1.rule_cnt } as usize;
                    let locs = if rule_locs.is_null() || cap == 0 {
                        &mut [][..]
                    } else {
                        // SAFETY: for GRXCLSRLALL the core allocated `rule_cnt` entries at
                        // `rule_locs` (ethtool_get_rxnfc's buffer, or the rxnfc's own
                        // trailing array in ethtool_get_max_rxnfc_channel), exclusively
                        // ours for the call.
                        unsafe { core::slice::from_raw_parts_mut(rule_locs, cap) }
                    };
                    let n = T::rule_locations(dev, data, locs)?;
                    // The core copies `rule_cnt` entries out of its buffer of `cap`.
                    if n as usize > cap {
                        return Err(EINVAL);
                    }
                    // SAFETY: as above; the first borrow ended.
                    let (dev, data) = unsafe { Self::split(raw) };
                    info.data = u64::from(T::rule_count(dev, data)?.1);
                    info.__bindgen_anon_1.rule_cnt = n;
                }
                _ => return Err(super::eopnotsupp()),
            }
        }
    }

    callback! {
        try fn set_rxnfc(dev => (dev, data), info: *mut bindings::ethtool_rxnfc) {
            // SAFETY: the core passes a valid `ethtool_rxnfc` for the call.
            let info = unsafe { &*info };
            match info.cmd {
                bindings::ETHTOOL_SRXFH if T::HAS_SET_RX_FLOW_HASH => {
                    let fields = u32::try_from(info.data).map_err(|_| EINVAL)?;
                    T::set_rx_flow_hash(dev, data, info.flow_type & !Self::FLOW_FLAGS, fields)
                }
                bindings::ETHTOOL_SRXCLSRLINS if T::HAS_INSERT_RULE => {
                    // SAFETY: for a rule insertion the union holds `rss_context` (an integer
                    // either way).
                    let ctx = unsafe { info.__bindgen_anon_1.rss_context };
                    T::insert_rule(dev, data, &FlowSpec::from_raw(&info.fs, ctx))
                }
                bindings::ETHTOOL_SRXCLSRLDEL if T::HAS_DELETE_RULE => {
                    T::delete_rule(dev, data, info.fs.location)
                }
                _ => Err(super::eopnotsupp()),
            }?;
        }
    }

    /// A context's table and key as the core laid them out.
    ///
    /// # Safety
    ///
    /// `ctx` is a context the core passed to a context operation of a device whose
    /// [`Operations::rxfh_indir_size`] and [`Operations::rxfh_key_size`] it was allocated
    /// with, exclusively ours for the call.
    unsafe fn context<'a>(ctx: *mut bindings::ethtool_rxfh_context) -> RxfhContext<'a> {
        // SAFETY: `ctx` is valid for the call (see above); its sizes are what the core
        // allocated (`ethtool_rxfh_ctx_alloc`).
        let (ni, nk) = unsafe { ((*ctx).indir_size as usize, (*ctx).key_size as usize) };
        // SAFETY: the helpers compute the table's and the key's addresses in the context's
        // trailing data as the core does; the table has `indir_size` u32 entries (aligned)
        // and the key `key_size` bytes after it, disjoint, exclusively ours for the call.
        // `hfunc` is a field of the context's header, apart from both.
        unsafe {
            let i = bindings::rsnic_helper_ethtool_rxfh_context_indir(ctx);
            let k = bindings::rsnic_helper_ethtool_rxfh_context_key(ctx);
            RxfhContext {
                indir: core::slice::from_raw_parts_mut(i, ni),
                key: core::slice::from_raw_parts_mut(k, nk),
                hfunc: &mut (*ctx).hfunc,
            }
        }
    }

    /// The request of `set_rxfh` or of a context operation.
    ///
    /// # Safety
    ///
    /// `p` is the core's valid parameter block for the call.
    unsafe fn rxfh_request<'a>(p: *const bindings::ethtool_rxfh_param) -> RxfhSet<'a> {
        // SAFETY: valid for the call (see above).
        let p = unsafe { &*p };
        let indir = if p.indir.is_null() {
            None
        } else {
            // SAFETY: the core points `indir` at `indir_size` checked entries of its own
            // allocation, unchanged for the call.
            Some(unsafe { core::slice::from_raw_parts(p.indir, p.indir_size as usize) })
        };
        let key = if p.key.is_null() {
            None
        } else {
            // SAFETY: as `indir`, `key_size` bytes after the table.
            Some(unsafe { core::slice::from_raw_parts(p.key, p.key_size as usize) })
        };
        RxfhSet {
            indir,
            key,
            hfunc: p.hfunc,
            input_xfrm: p.input_xfrm,
            rss_context: p.rss_context,
            rss_delete: p.rss_delete != 0,
        }
    }

    rxfh_context_callbacks!(create_rxfh_context, modify_rxfh_context);

    callback! {
        try fn remove_rxfh_context(
            dev => (dev, data),
            _ctx: *mut bindings::ethtool_rxfh_context,
            rss_context: u32,
            extack: *mut bindings::netlink_ext_ack,
        ) {
            T::remove_rxfh_context(dev, data, rss_context, &mut ExtAck::from_raw(extack))?;
        }
    }
}
