// SPDX-License-Identifier: GPL-2.0

//! The MANA (GDMA) data path, driver side: formats ([`fmt`]), the work queue of 32-byte
//! units with the SGL wrapping at the ring end ([`wq`]), CQs and EQs with 3 owner bits and
//! the re-arm rules ([`cq`]), the SQ with short/long TX OOBs, checksum offload, TSO and
//! doorbells batched by `xmit_more` ([`sq`]), and the RQ that re-posts without ringing and
//! rings once per poll ([`rq`]). Facts: Documentation/networking/device_drivers/ethernet/
//! rsnic-hardware.rst, parts D and E.3 ("spec D.2" and the like in these modules).
//!
//! The control path (6.12 `gdma_main.c`, `shm_channel.c`, `hw_channel.c`, `mana_en.c`): the
//! GDMA and MANA request and response layouts ([`gdma_req`]), the shared memory channel that
//! sets up the hardware channel ([`smc`]), the hardware channel itself ([`hwc`]) and the
//! probe-time sequence as steps the kernel glue drives with sleeps ([`probe`]).
//!
//! The packet, DMA, TX-queue and receive-buffer traits are the family-neutral ones of
//! [`crate::hwif::pkt`]: they describe the kernel (skb, DMA API, netdev queue with BQL,
//! page_pool), not the hardware.

pub mod cq;
pub mod fmt;
pub mod gdma_req;
pub mod hwc;
pub mod probe;
pub mod rq;
pub mod smc;
pub mod sq;
pub mod stats;
pub mod wq;
