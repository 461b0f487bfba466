//! AF_XDP zero-copy pool checks (`hwif::xsk`): each of mlx5e's refusals at bind and at an MTU
//! change, in rsnic's terms, with the edge cases on both sides, and the largest MTU an MTU
//! refusal names.

use rsnic_core::hwif::xsk::{check_mtu, check_pool, max_mtu, xdp_max_mtu, Geometry, Refusal};

/// x86-64: 4 KiB pages; rsnic's frames are the MTU plus 22 bytes; its skb tail room 384.
const G: Geometry = Geometry {
    page: 4096,
    hard_mtu: 22,
    skb_tail: 384,
};

/// The pool headroom of a UMEM without headroom of its own: XDP_PACKET_HEADROOM.
const HR: u32 = 256;

#[test]
fn a_2k_chunk_takes_mtu_1500_up_to_its_last_byte() {
    // 256 + 1500 + 22 = 1778: fits 2048 with 270 bytes of UMEM headroom to spare.
    assert_eq!(check_pool(2048, HR, 1500, &G), Ok(()));
    assert_eq!(check_pool(2048, HR + 270, 1500, &G), Ok(()));
    assert_eq!(
        check_pool(2048, HR + 271, 1500, &G),
        Err(Refusal::FrameTooLong {
            mtu: 1500,
            frame: 1522,
            headroom: HR + 271,
            chunk: 2048
        })
    );
}

#[test]
fn chunk_bounds_and_sanity_come_first() {
    assert_eq!(
        check_pool(1024, HR, 1000, &G),
        Err(Refusal::ChunkBounds {
            chunk: 1024,
            min: 2048,
            max: 4096
        })
    );
    assert_eq!(
        check_pool(8192, HR, 1500, &G),
        Err(Refusal::ChunkBounds {
            chunk: 8192,
            min: 2048,
            max: 4096
        })
    );
    // Beyond 16 bits: not sane, whatever else is wrong.
    assert_eq!(
        check_pool(0x1_0000, HR, 1500, &G),
        Err(Refusal::NotSane {
            headroom: HR,
            chunk: 0x1_0000
        })
    );
    assert_eq!(
        check_pool(4096, 0x1_0000, 1500, &G),
        Err(Refusal::NotSane {
            headroom: 0x1_0000,
            chunk: 4096
        })
    );
    // The edges themselves are fine.
    assert_eq!(check_pool(2048, 0, 1500, &G), Ok(()));
    assert_eq!(check_pool(4096, HR, 1500, &G), Ok(()));
}

#[test]
fn xdp_pass_copy_must_fit_a_page() {
    // With a headroom of 0 the chunk check alone would take a 4096-byte frame; the copy
    // of a frame whose aligned size passes a page would not be linear.
    let g = Geometry { page: 4096, ..G };
    assert_eq!(check_pool(4096, 0, 4096 - 22, &g), Ok(()));
    assert_eq!(
        check_pool(4096, 0, 4096 - 21, &g),
        Err(Refusal::PassNotLinear {
            mtu: 4075,
            frame: 4097,
            page: 4096
        })
    );
}

#[test]
fn mtu_checks_name_the_largest_mtu() {
    // A 4 KiB chunk: the frame fits up to MTU 3818, but an XDP program with 256 bytes of
    // headroom takes 3434 at most (what rsnic's regular XDP RQ takes too).
    assert_eq!(xdp_max_mtu(HR, &G), 3434);
    assert_eq!(max_mtu(4096, HR, &G), 3434);
    assert_eq!(check_mtu(4096, HR, 3434, &G), Ok(()));
    assert_eq!(
        check_mtu(4096, HR, 3435, &G),
        Err(Refusal::AboveXdpMax {
            mtu: 3435,
            max: 3434
        })
    );
    // A 2 KiB chunk: the frame is the limit.
    assert_eq!(max_mtu(2048, HR, &G), 1770);
    assert_eq!(check_mtu(2048, HR, 1770, &G), Ok(()));
    assert!(matches!(
        check_mtu(2048, HR, 1771, &G),
        Err(Refusal::FrameTooLong { frame: 1793, .. })
    ));
    // Every MTU up to the named one passes, the next does not.
    for chunk in [2048, 3000, 4096] {
        for hr in [0, HR, HR + 512] {
            let m = max_mtu(chunk, hr, &G);
            assert_eq!(check_mtu(chunk, hr, m, &G), Ok(()), "chunk {chunk} hr {hr}");
            assert!(
                check_mtu(chunk, hr, m + 1, &G).is_err(),
                "chunk {chunk} hr {hr}"
            );
        }
    }
}

#[test]
fn refusals_read_as_their_own_messages() {
    let all = [
        Refusal::ChunkBounds {
            chunk: 1024,
            min: 2048,
            max: 4096,
        },
        Refusal::NotSane {
            headroom: 1,
            chunk: 0x1_0000,
        },
        Refusal::PassNotLinear {
            mtu: 4075,
            frame: 4097,
            page: 4096,
        },
        Refusal::FrameTooLong {
            mtu: 1500,
            frame: 1522,
            headroom: 527,
            chunk: 2048,
        },
        Refusal::AboveXdpMax {
            mtu: 3435,
            max: 3434,
        },
    ];
    let texts: Vec<String> = all.iter().map(|r| r.to_string()).collect();
    for (i, a) in texts.iter().enumerate() {
        for b in &texts[i + 1..] {
            assert_ne!(a, b);
        }
    }
    assert_eq!(texts[0], "XSK chunk size 1024 out of bounds [2048, 4096]");
    assert!(texts[4].contains("above 3434"));
}
