//! Guest RAM as the device sees it (`model::Ram`): every access outside `0..ram_size`,
//! including ones whose end wraps past `u64::MAX`, is refused before any byte is touched.

mod common;

use common::*;
use rsnic_core::dp::hw::{BusMemory, DmaFault};

const RAM: u64 = 1 << 20;

#[test]
fn accesses_outside_ram_are_refused_and_touch_nothing() {
    let t = Tmp::new("addr");
    let ram = ram_with_canary(t.path(), RAM);
    let before = snapshot(ram.mapping());
    let cases: &[(u64, usize)] = &[
        (RAM - 1, 2),
        (RAM, 1),
        (RAM, 0x1000),
        (RAM + 8, 8),
        (u64::MAX, 1),
        (u64::MAX, 2),
        (u64::MAX - 3, 8),
        (u64::MAX - RAM + 1, RAM as usize),
        (1 << 63, 16),
        (0, RAM as usize + 1),
    ];
    for &(addr, len) in cases {
        let src = vec![0xee; len];
        assert_eq!(
            ram.dma_write(addr, &src),
            Err(DmaFault { addr, len }),
            "write {addr:#x}+{len}"
        );
        let mut dst = vec![0x11; len];
        assert_eq!(
            ram.dma_read(addr, &mut dst),
            Err(DmaFault { addr, len }),
            "read {addr:#x}+{len}"
        );
        assert!(dst.iter().all(|&b| b == 0x11), "read {addr:#x} filled dst");
        assert_eq!(ram.check(addr, len), None);
    }
    assert!(
        snapshot(ram.mapping()) == before,
        "a refused access changed memory"
    );
}

#[test]
fn accesses_inside_ram_reach_exactly_their_bytes() {
    let t = Tmp::new("addr-ok");
    let ram = ram_with_canary(t.path(), RAM);
    let before = snapshot(ram.mapping());
    ram.dma_write(RAM - 2, &[1, 2]).unwrap();
    ram.dma_write(0, &[3]).unwrap();
    ram.dma_write(RAM, &[]).unwrap();
    let mut b = [0u8; 2];
    ram.dma_read(RAM - 2, &mut b).unwrap();
    assert_eq!(b, [1, 2]);
    let after = snapshot(ram.mapping());
    assert_eq!(
        diff_ranges(&before, &after),
        vec![(0, 1), (RAM as usize - 2, RAM as usize)]
    );
    assert!(after[RAM as usize..].iter().all(|&x| x == CANARY_BYTE));
}
