//! What the devd tests share: temporary directories, configurations, guest RAM with a
//! canary after it.

#![allow(dead_code)]

use std::fs::OpenOptions;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use rsnic_core::dp::xport::Family;
use rsnic_devd::model::Ram;
use rsnic_devd::sys::Mapping;
use rsnic_devd::{Config, Devd};

/// Bytes of canary after guest RAM.
pub const CANARY: usize = 64 << 10;
/// What guest RAM is filled with before a test.
pub const FILL: u8 = 0x5a;
/// What the canary is filled with.
pub const CANARY_BYTE: u8 = 0xc3;

/// A temporary directory, removed on drop.
pub struct Tmp(pub PathBuf);

impl Tmp {
    pub fn new(tag: &str) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let p =
            std::env::temp_dir().join(format!("rsnic-devd-{tag}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&p).unwrap();
        Tmp(p)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn config(dir: &Path, family: Family, ports: u32, ram_size: u64) -> Config {
    Config {
        socket: dir.join("sock"),
        ram: dir.join("ram"),
        ram_size,
        family,
        ports,
        state_dir: dir.join("state"),
        log: Some(dir.join("log")),
    }
}

/// A file of `ram_size + CANARY` bytes mapped shared: RAM filled with [`FILL`], the canary
/// with [`CANARY_BYTE`].
pub fn ram_with_canary(dir: &Path, ram_size: u64) -> Ram {
    let path = dir.join("ram");
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    let len = ram_size as usize + CANARY;
    f.set_len(len as u64).unwrap();
    let map = Mapping::new(f.as_fd(), len).unwrap();
    assert!(map.write(0, &vec![FILL; ram_size as usize]));
    assert!(map.write(ram_size as usize, &[CANARY_BYTE; CANARY]));
    Ram::new(map, ram_size).unwrap()
}

/// An in-process devd over [`ram_with_canary`].
pub fn devd(dir: &Path, family: Family, ports: u32, ram_size: u64) -> Devd {
    let ram = ram_with_canary(dir, ram_size);
    Devd::with_ram(config(dir, family, ports, ram_size), ram).unwrap()
}

/// A copy of the whole mapping.
pub fn snapshot(map: &Mapping) -> Vec<u8> {
    let mut v = vec![0u8; map.len()];
    assert!(map.read(0, &mut v));
    v
}

/// Byte ranges where `a` and `b` differ.
pub fn diff_ranges(a: &[u8], b: &[u8]) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        if x != y {
            match out.last_mut() {
                Some(r) if r.1 == i => r.1 = i + 1,
                _ => out.push((i, i + 1)),
            }
        }
    }
    out
}

pub mod vfio;
