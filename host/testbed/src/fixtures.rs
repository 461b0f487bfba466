//! Pieces the host tests (`tests/`), the benchmark and the fuzz harnesses (`host/fuzz`)
//! share: test frames built field by field ([`Ipv4Frame`], with the minimal frames
//! [`tcp4_frame`] and [`udp4_frame`] and the flow's [`tcp4_segment`]) and CQE writes the way
//! a device does them ([`write_cqe`]).
//!
//! ```
//! use rsnic_testbed::fixtures::Ipv4Frame;
//! // 64 bytes of Ethernet/IPv4/UDP, lengths filled in, payload bytes = their offsets.
//! let f = Ipv4Frame::udp(64).lengths().ttl(64).payload(|i| i as u8).build();
//! assert_eq!((f.len(), f[23], f[16..18].to_vec()), (64, 17, vec![0, 50]));
//! ```

use rsnic_core::hwif::hw::Coherent;
use rsnic_core::hwif::mlx5::cqe::Cqe64;

/// Bytes of the Ethernet II and IPv4 headers (no options).
const L3_END: usize = 34;

/// An Ethernet II + IPv4 (no options) + TCP (no options) or UDP test frame, built field by
/// field. What [`Ipv4Frame::tcp`] and [`Ipv4Frame::udp`] fill in: the MAC addresses
/// 02:00:00:00:00:01 → 02:00:00:00:00:02, EtherType IPv4, version and IHL (0x45), the
/// protocol and, for TCP, the data offset (5 words). Every other byte is zero until a method
/// sets it.
#[derive(Debug, Clone)]
pub struct Ipv4Frame {
    f: Vec<u8>,
    /// Offset of the payload (the end of the transport header).
    hdr: usize,
    tcp: bool,
}

impl Ipv4Frame {
    fn new(len: usize, proto: u8, hdr: usize) -> Self {
        let mut f = vec![0u8; len.max(hdr)];
        f[0..6].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
        f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        f[14] = 0x45;
        f[23] = proto;
        Self {
            f,
            hdr,
            tcp: proto == 6,
        }
    }

    /// A TCP frame of `len` bytes (at least the 54 of the headers).
    pub fn tcp(len: usize) -> Self {
        let mut s = Self::new(len, 6, 54);
        s.f[46] = 5 << 4;
        s
    }

    /// A UDP frame of `len` bytes (at least the 42 of the headers).
    pub fn udp(len: usize) -> Self {
        Self::new(len, 17, 42)
    }

    /// The IPv4 total length and, for UDP, the UDP length, from the frame's length.
    pub fn lengths(mut self) -> Self {
        let len = self.f.len();
        self.f[16..18].copy_from_slice(&((len - 14) as u16).to_be_bytes());
        if !self.tcp {
            self.f[38..40].copy_from_slice(&((len - L3_END) as u16).to_be_bytes());
        }
        self
    }

    /// The IPv4 time to live.
    pub fn ttl(mut self, ttl: u8) -> Self {
        self.f[22] = ttl;
        self
    }

    /// IPv4 addresses 10.0.0.1 → 10.0.0.2.
    pub fn addrs(mut self) -> Self {
        self.f[26..30].copy_from_slice(&[10, 0, 0, 1]);
        self.f[30..34].copy_from_slice(&[10, 0, 0, 2]);
        self
    }

    /// The transport ports.
    pub fn ports(mut self, src: u16, dst: u16) -> Self {
        self.f[34..36].copy_from_slice(&src.to_be_bytes());
        self.f[36..38].copy_from_slice(&dst.to_be_bytes());
        self
    }

    /// The TCP sequence number.
    pub fn seq(mut self, seq: u32) -> Self {
        self.f[38..42].copy_from_slice(&seq.to_be_bytes());
        self
    }

    /// The TCP flags byte.
    pub fn flags(mut self, flags: u8) -> Self {
        self.f[47] = flags;
        self
    }

    /// Every byte after the headers: `byte(offset in the frame)`.
    pub fn payload(mut self, byte: impl Fn(usize) -> u8) -> Self {
        for (i, b) in self.f.iter_mut().enumerate().skip(self.hdr) {
            *b = byte(i);
        }
        self
    }

    /// The frame's bytes.
    pub fn build(self) -> Vec<u8> {
        self.f
    }
}

/// Ethernet + IPv4 + TCP (no options) + payload, `len` bytes (at least 54): only what
/// [`Ipv4Frame::tcp`] fills in, the payload bytes `seed + offset`.
pub fn tcp4_frame(len: usize, seed: u8) -> Vec<u8> {
    Ipv4Frame::tcp(len)
        .payload(|i| seed.wrapping_add(i as u8))
        .build()
}

/// Ethernet + IPv4 + UDP + payload, `len` bytes (at least 42): only what
/// [`Ipv4Frame::udp`] fills in, the payload bytes `seed + offset`.
pub fn udp4_frame(len: usize, seed: u8) -> Vec<u8> {
    Ipv4Frame::udp(len)
        .payload(|i| seed.wrapping_add(i as u8))
        .build()
}

/// A TCP segment of one flow with `payload` bytes (each its offset in the frame) after the
/// 54 of the headers: 10.0.0.1:1000 → 10.0.0.2:80, sequence number 1000, PSH|ACK, TTL 64,
/// lengths filled in.
pub fn tcp4_segment(payload: usize) -> Vec<u8> {
    Ipv4Frame::tcp(54 + payload)
        .lengths()
        .ttl(64)
        .addrs()
        .ports(1000, 80)
        .seq(1000)
        .flags(0x18)
        .payload(|i| i as u8)
        .build()
}

/// Writes an mlx5 CQE into slot `slot` of a CQ buffer the way the device does: the body
/// first, the byte with the owner bit last.
pub fn write_cqe(buf: &impl Coherent, slot: usize, c: &Cqe64) {
    buf.write(slot * 64, &c.0[..63]);
    buf.write(slot * 64 + 63, &c.0[63..]);
}

/// A xorshift64 generator (shifts 13, 7, 17) from `seed` (non-zero): deterministic noise
/// for the tests that throw garbage at the driver or the device.
pub fn xorshift64(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}
