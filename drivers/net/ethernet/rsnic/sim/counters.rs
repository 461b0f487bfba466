// SPDX-License-Identifier: GPL-2.0

//! The device models' own per-port counters as text: one `     name: value` line each (as
//! `ethtool -S` prints them): doorbells, WQEs, modeled PCIe bytes, drops. What a device host
//! shows for a port (the in-kernel host in debugfs, `rsnic-devd` in its state directory); the
//! format exists here only, so every host prints the same names.

use super::pcie::PcieCounters;
use super::{mana, mlx5};
use core::fmt::{self, Write};

/// A counter's name and getter.
type Counter<C> = (&'static str, fn(&C) -> u64);

fn text<C>(out: &mut impl Write, c: &C, table: &[Counter<C>]) -> fmt::Result {
    for (name, get) in table {
        line(out, name, get(c))?;
    }
    Ok(())
}

/// Writes one counter line, `     name: value`, in the format of the tables (for what a
/// host adds of its own, e.g. `dev_mmio_posted_lost`).
pub fn line(out: &mut impl Write, name: &str, value: u64) -> fmt::Result {
    writeln!(out, "     {}: {}", name, value)
}

/// Writes a ConnectX port's counters `c`, one line each.
pub fn mlx5_text(out: &mut impl Write, c: &mlx5::PortCounters) -> fmt::Result {
    text(out, c, MLX5)?;
    pcie_text(out, &c.pcie, c.tx_floor_in_bytes)
}

/// Writes a MANA port's counters `c`, one line each.
pub fn mana_text(out: &mut impl Write, c: &mana::PortCounters) -> fmt::Result {
    text(out, c, MANA)?;
    pcie_text(out, &c.pcie, c.tx_floor_in_bytes)
}

/// The lines both families end with: the modeled PCIe traffic (`pcie`) and the floor of
/// its inbound bytes for the packets sent (`tx_floor_in_bytes`).
fn pcie_text(out: &mut impl Write, pcie: &PcieCounters, tx_floor_in_bytes: u64) -> fmt::Result {
    text(out, pcie, PCIE)?;
    line(out, "dev_tx_floor_in_bytes", tx_floor_in_bytes)
}

/// The modeled PCIe traffic of a port, either family.
const PCIE: &[Counter<PcieCounters>] = &[
    ("dev_pcie_in_tlps", |p| p.in_tlps),
    ("dev_pcie_in_bytes", |p| p.in_bytes),
    ("dev_pcie_out_tlps", |p| p.out_tlps),
    ("dev_pcie_out_bytes", |p| p.out_bytes),
];

/// ConnectX.
const MLX5: &[Counter<mlx5::PortCounters>] = &[
    ("dev_doorbells", |c| c.doorbells),
    ("dev_sq_doorbells", |c| c.sq_doorbells),
    ("dev_arm_doorbells", |c| c.arm_doorbells),
    ("dev_bad_doorbells", |c| c.bad_doorbells),
    ("dev_dbr_reads", |c| c.dbr_reads),
    ("dev_wqes", |c| c.wqes),
    // NOP WQEs among them (edge padding, AF_XDP wake-ups on the ICO SQ).
    ("dev_nop_wqes", |c| c.nop_wqes),
    ("dev_wqebbs", |c| c.wqebbs),
    ("dev_wqe_bytes", |c| c.wqe_bytes),
    ("dev_mpwqe_wqes", |c| c.mpwqe_wqes),
    ("dev_mpwqe_pkts", |c| c.mpwqe_pkts),
    ("dev_wqe_errors", |c| c.wqe_errors),
    ("dev_faults_injected", |c| c.faults_injected),
    ("dev_irqs_lost", |c| c.irqs_lost),
    ("dev_tx_packets", |c| c.tx_packets),
    ("dev_tx_bytes", |c| c.tx_bytes),
    // Offloads the device performed (ethtool -K tx / tso / sg: tests/vm/77-features.sh).
    ("dev_tx_csum_offload", |c| c.tx_csum_offload),
    ("dev_tx_gather_pkts", |c| c.tx_gather_pkts),
    ("dev_lso_wqes", |c| c.lso_wqes),
    ("dev_lso_segs", |c| c.lso_segs),
    ("dev_tx_link_down_drops", |c| c.tx_link_down_drops),
    ("dev_tx_cqes", |c| c.tx_cqes),
    ("dev_rx_packets", |c| c.rx_packets),
    ("dev_rx_bytes", |c| c.rx_bytes),
    // VLAN offloads (ethtool -K rxvlan / txvlan: tests/vm/78-vlan.sh).
    ("dev_rx_vlan_stripped", |c| c.rx_vlan_stripped),
    ("dev_tx_vlan_inserted", |c| c.tx_vlan_inserted),
    ("dev_rx_scatter_pkts", |c| c.rx_scatter_pkts),
    ("dev_rx_segs", |c| c.rx_segs),
    ("dev_rx_cqes", |c| c.rx_cqes),
    ("dev_cq_slot_writes", |c| c.cq_slot_writes),
    ("dev_compress_sessions", |c| c.compress_sessions),
    ("dev_compressed_cqes", |c| c.compressed_cqes),
    ("dev_rx_out_of_buffer", |c| c.rx_out_of_buffer),
    ("dev_tx_pause", |c| c.tx_pause),
    ("dev_tx_pause_storm", |c| c.pause_storms),
    ("dev_tx_pause_frames", |c| c.tx_pause_frames),
    ("dev_rx_pause_frames", |c| c.rx_pause_frames),
    ("dev_loopback_packets", |c| c.loopback_packets),
    ("dev_loopback_bytes", |c| c.loopback_bytes),
    ("dev_rx_no_rq_drops", |c| c.rx_no_rq_drops),
    ("dev_rx_stopped", |c| c.rx_stopped),
    ("dev_rx_vport_filtered", |c| c.rx_vport_filtered),
    ("dev_rx_steering_drops", |c| c.rx_steering_drops),
    ("dev_mkey_errors", |c| c.mkey_errors),
    ("dev_fw_pages", |c| c.fw_pages),
    ("dev_rx_too_long", |c| c.rx_too_long),
    ("dev_cq_overruns", |c| c.cq_overruns),
    ("dev_interrupts", |c| c.interrupts),
    ("dev_cq_events", |c| c.cq_events),
    ("dev_cq_timer_events", |c| c.cq_timer_events),
    ("dev_dma_faults", |c| c.dma_faults),
    // Queues the driver had the device create (channel opens, AF_XDP queues).
    ("dev_queues_created", |c| c.queues_created),
    // Pages of those queues the driver gave in page lists, not as one contiguous range
    // (tests/vm/70-channels-rings.sh).
    ("dev_pas_list_pages", |c| c.pas_list_pages),
    // Commands executed, and the command completion EQEs written for them (events mode).
    ("dev_commands", |c| c.commands),
    ("dev_cmd_eqes", |c| c.cmd_eqes),
];

/// MANA.
const MANA: &[Counter<mana::PortCounters>] = &[
    ("dev_tx_packets", |c| c.tx_packets()),
    ("dev_rx_packets", |c| c.rx_packets()),
    // This port's share of the device's `hc_*` counters (MANA_QUERY_GF_STAT answers for the
    // whole device).
    ("dev_tx_bytes", |c| c.hc_tx_bytes),
    ("dev_rx_discards_no_wqe", |c| c.hc_rx_discards_no_wqe),
    // The counters MANA_QUERY_GF_STAT reports, under mana's ethtool names (summed over the
    // device's ports they are its answer: tests/vm/98-upstream-mana.sh compares them).
    ("dev_hc_rx_discards_no_wqe", |c| c.hc_rx_discards_no_wqe),
    ("dev_hc_rx_err_vport_disabled", |c| {
        c.hc_rx_err_vport_disabled
    }),
    ("dev_hc_rx_bytes", |c| c.hc_rx_bytes),
    ("dev_hc_rx_ucast_pkts", |c| c.hc_rx_ucast_pkts),
    ("dev_hc_rx_ucast_bytes", |c| c.hc_rx_ucast_bytes),
    ("dev_hc_rx_bcast_pkts", |c| c.hc_rx_bcast_pkts),
    ("dev_hc_rx_bcast_bytes", |c| c.hc_rx_bcast_bytes),
    ("dev_hc_rx_mcast_pkts", |c| c.hc_rx_mcast_pkts),
    ("dev_hc_rx_mcast_bytes", |c| c.hc_rx_mcast_bytes),
    ("dev_hc_tx_err_mtu_violation", |c| c.hc_tx_err_mtu_violation),
    ("dev_hc_tx_err_inval_oob", |c| c.hc_tx_err_inval_oob),
    ("dev_hc_tx_bytes", |c| c.hc_tx_bytes),
    ("dev_hc_tx_ucast_pkts", |c| c.hc_tx_ucast_pkts),
    ("dev_hc_tx_ucast_bytes", |c| c.hc_tx_ucast_bytes),
    ("dev_hc_tx_bcast_pkts", |c| c.hc_tx_bcast_pkts),
    ("dev_hc_tx_bcast_bytes", |c| c.hc_tx_bcast_bytes),
    ("dev_hc_tx_mcast_pkts", |c| c.hc_tx_mcast_pkts),
    ("dev_hc_tx_mcast_bytes", |c| c.hc_tx_mcast_bytes),
    ("dev_hc_tx_err_gdma", |c| c.hc_tx_err_gdma),
    ("dev_doorbells", |c| c.doorbells),
    ("dev_sq_doorbells", |c| c.sq_doorbells),
    ("dev_rq_doorbells", |c| c.rq_doorbells),
    ("dev_cq_doorbells", |c| c.cq_doorbells),
    ("dev_cq_arms", |c| c.cq_arms),
    ("dev_eq_doorbells", |c| c.eq_doorbells),
    ("dev_bad_doorbells", |c| c.bad_doorbells),
    ("dev_rq_db_wqe_cnt_errors", |c| c.rq_db_wqe_cnt_errors),
    ("dev_db_invalid", |c| c.db_invalid),
    ("dev_wqes", |c| c.wqes),
    ("dev_wqe_bytes", |c| c.wqe_bytes),
    ("dev_tx_wqe_errors", |c| c.tx_wqe_errors),
    // Offloads the device performed (ethtool -K tx / tso / sg: tests/vm/77-features.sh).
    ("dev_tx_csum_offload", |c| c.tx_csum_offload),
    ("dev_tx_gather_pkts", |c| c.tx_gather_pkts),
    ("dev_lso_wqes", |c| c.lso_wqes),
    ("dev_lso_segs", |c| c.lso_segs),
    ("dev_tx_link_down_drops", |c| c.tx_link_down_drops),
    ("dev_tx_cqes", |c| c.tx_cqes),
    ("dev_tx_err_cqes", |c| c.tx_err_cqes),
    ("dev_rx_no_rq_drops", |c| c.rx_no_rq_drops),
    ("dev_rx_stopped", |c| c.rx_stopped),
    ("dev_rx_wqe_errors", |c| c.rx_wqe_errors),
    ("dev_rx_cqes", |c| c.rx_cqes),
    ("dev_rx_truncated", |c| c.rx_truncated),
    ("dev_rx_vlan_stripped", |c| c.rx_vlan_stripped),
    ("dev_cq_db_overdue", |c| c.cq_db_overdue),
    ("dev_eqes", |c| c.eqes),
    ("dev_interrupts", |c| c.interrupts),
    ("dev_dma_faults", |c| c.dma_faults),
    // Queues the driver had the device create (channel opens, AF_XDP queues).
    ("dev_queues_created", |c| c.queues_created),
    ("dev_mkey_errors", |c| c.mkey_errors),
    ("dev_faults_injected", |c| c.faults_injected),
    ("dev_irqs_lost", |c| c.irqs_lost),
    ("dev_tx_pause", |c| c.tx_pause),
    ("dev_tx_pause_storm", |c| c.tx_pause_storms),
    ("dev_tx_pause_frames", |c| c.tx_pause_frames),
    ("dev_rx_pause_frames", |c| c.rx_pause_frames),
    ("dev_loopback_packets", |c| c.loopback_packets),
    ("dev_loopback_bytes", |c| c.loopback_bytes),
];
