//! The per-port counters text every device host prints (`sim::counters`): one
//! `     name: value` line per counter, the names of the tables in order.

use rsnic_core::sim::{counters, mana, mlx5};

#[test]
fn mlx5_lines_carry_names_and_values() {
    let c = mlx5::PortCounters {
        doorbells: 7,
        tx_packets: 11,
        ..Default::default()
    };
    let mut s = String::new();
    counters::mlx5_text(&mut s, &c).unwrap();
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(lines[0], "     dev_doorbells: 7");
    assert!(lines.contains(&"     dev_tx_packets: 11"));
    assert!(lines
        .iter()
        .all(|l| l.starts_with("     dev_") && l.contains(": ")));
    assert!(lines.len() > 40);
}

#[test]
fn mana_lines_carry_names_and_values() {
    let c = mana::PortCounters {
        doorbells: 3,
        ..Default::default()
    };
    let mut s = String::new();
    counters::mana_text(&mut s, &c).unwrap();
    assert!(s.lines().any(|l| l == "     dev_doorbells: 3"));
    assert!(s.starts_with("     dev_tx_packets: 0\n"));
    counters::line(&mut s, "dev_mmio_posted_lost", 5).unwrap();
    assert!(s.ends_with("     dev_mmio_posted_lost: 5\n"));
}
