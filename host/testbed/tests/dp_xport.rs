//! The PCI transport's BAR2 layout (`dp::xport`): the offsets of the shared design, the
//! identity block's round trip and refusals, and the model-vector to MSI-X mapping.

use rsnic_core::dp::xport::*;

#[test]
fn layout_matches_design() {
    assert_eq!(MAGIC.to_le_bytes(), *b"RNIC");
    assert_eq!(
        (ID_MAGIC, ID_VERSION, ID_FAMILY, ID_PORTS, ID_VPP),
        (0x00, 0x04, 0x08, 0x0C, 0x10)
    );
    assert_eq!(
        (
            ID_RING_OFFSET,
            ID_RING_ENTRIES,
            ID_STATUS,
            ID_RAM_SIZE,
            ID_RESERVED_MACS
        ),
        (0x14, 0x18, 0x1C, 0x20, 0x28)
    );
    assert_eq!(
        (
            CTRL_TAIL,
            CTRL_HEAD,
            CTRL_READ_TICKET,
            CTRL_READ_DONE,
            CTRL_READ_VALUE
        ),
        (0x800, 0x840, 0x880, 0x8C0, 0x8C8)
    );
    assert_eq!(
        (RING_OFFSET, RING_ENTRIES, SLOT_SIZE, RING_END),
        (0x1000, 4096, 32, 0x21000)
    );
    assert_eq!((SLOT_SEQ, SLOT_REG, SLOT_OP, SLOT_VALUE), (0, 8, 0xC, 0x10));
    assert_eq!((OP_WRITE32, OP_WRITE64, OP_READ32), (1, 2, 3));
    assert_eq!(VPP, 16);
    assert_eq!(READ_DONE_NONE, u64::MAX);
    assert_eq!(BAR2_SIZE, 1 << 20);
    assert_eq!(slot_offset(0), 0x1000);
    assert_eq!(slot_offset(4095), 0x1000 + 4095 * 32);
    assert_eq!(slot_offset(4096), 0x1000);
    assert_eq!(slot_offset(u64::MAX), 0x1000 + 4095 * 32);
    assert_eq!(doorbell_value(0, 0), 0);
    assert_eq!(doorbell_value(1, 3), 0x1_0003);
}

#[test]
fn identity_round_trip() {
    for family in [Family::Mlx5, Family::Mana] {
        for ports in 1..=MAX_PORTS {
            let id = Identity {
                family,
                ports,
                status: Status::Ready,
                ram_size: 1 << 30,
            };
            let mut b = [0xaau8; IDENTITY_LEN];
            id.encode(&mut b).unwrap();
            assert_eq!(Identity::parse(&b), Ok(id));
            assert!(b[ID_RESERVED_MACS..].iter().all(|&x| x == 0));
            assert_eq!(&b[..4], b"RNIC");
            assert_eq!(b[ID_FAMILY], family.code() as u8);
        }
    }
}

#[test]
fn identity_refusals() {
    let id = Identity {
        family: Family::Mana,
        ports: 2,
        status: Status::NotReady,
        ram_size: 4096,
    };
    let mut good = [0u8; 256];
    id.encode(&mut good).unwrap();
    assert_eq!(Identity::parse(&good), Ok(id));
    let set = |off: usize, v: u32| {
        let mut b = good;
        b[off..off + 4].copy_from_slice(&v.to_le_bytes());
        Identity::parse(&b)
    };
    assert_eq!(set(ID_MAGIC, 0), Err(IdentityError::Magic(0)));
    assert_eq!(set(ID_VERSION, 2), Err(IdentityError::Version(2)));
    assert_eq!(set(ID_FAMILY, 3), Err(IdentityError::Family(3)));
    assert_eq!(set(ID_FAMILY, 0), Err(IdentityError::Family(0)));
    assert_eq!(set(ID_PORTS, 0), Err(IdentityError::Ports(0)));
    assert_eq!(set(ID_PORTS, 9), Err(IdentityError::Ports(9)));
    assert_eq!(set(ID_VPP, 64), Err(IdentityError::Vpp(64)));
    assert_eq!(
        set(ID_RING_OFFSET, 0x2000),
        Err(IdentityError::RingOffset(0x2000))
    );
    assert_eq!(
        set(ID_RING_ENTRIES, 1024),
        Err(IdentityError::RingEntries(1024))
    );
    assert_eq!(set(ID_STATUS, 3), Err(IdentityError::Status(3)));
    assert_eq!(
        set(ID_STATUS, STATUS_FAILED).map(|i| i.status),
        Ok(Status::Failed)
    );
    assert_eq!(
        Identity::parse(&good[..IDENTITY_LEN - 1]),
        Err(IdentityError::TooShort(IDENTITY_LEN - 1))
    );
    // Encoding refuses what parsing would refuse, and writes nothing then.
    let mut small = [7u8; 8];
    assert_eq!(id.encode(&mut small), Err(IdentityError::TooShort(8)));
    assert_eq!(small, [7u8; 8]);
    let mut b = [7u8; IDENTITY_LEN];
    let bad = Identity { ports: 9, ..id };
    assert_eq!(bad.encode(&mut b), Err(IdentityError::Ports(9)));
    assert_eq!(b, [7u8; IDENTITY_LEN]);
    // Every refusal has a reason to print.
    assert!(IdentityError::Magic(1).to_string().contains("magic"));
}

#[test]
fn msix_mapping() {
    assert_eq!(msix_index(0, VPP), Some(0));
    assert_eq!(msix_index(15, VPP), Some(15));
    assert_eq!(msix_index(16, VPP), None);
    assert_eq!(msix_index(63, VPP), None);
    assert_eq!(msix_index(64, VPP), Some(16));
    assert_eq!(msix_index(64 + 5, VPP), Some(21));
    assert_eq!(msix_index(7 * 64 + 15, VPP), Some(127));
    assert_eq!(msix_index(8 * 64, VPP), None);
    assert_eq!(msix_index(u16::MAX, VPP), None);
    assert_eq!(msix_index(64 + 3, 4), Some(7));
    assert_eq!(msix_index(64 + 4, 4), None);
    // Injective over the vectors it accepts.
    let mut seen = std::collections::HashSet::new();
    for v in 0..=u16::MAX {
        if let Some(i) = msix_index(v, VPP) {
            assert!(i < MAX_PORTS as u16 * VPP);
            assert!(seen.insert(i));
        }
    }
    assert_eq!(seen.len(), MAX_PORTS as usize * VPP as usize);
}

#[test]
fn msix_per_family() {
    // ConnectX: the model's own numbering, mapped.
    assert_eq!(msix_of(Family::Mlx5, 64 + 8, 2), Some(24));
    assert_eq!(msix_of(Family::Mlx5, 20, 2), None);
    // MANA: the driver's MSI-X index, passed through while the device has it.
    assert_eq!(msix_of(Family::Mana, 16 + 3, 2), Some(19));
    assert_eq!(msix_of(Family::Mana, 31, 2), Some(31));
    assert_eq!(msix_of(Family::Mana, 32, 2), None);
    assert_eq!(msix_of(Family::Mana, 64 + 3, 2), None);
}
