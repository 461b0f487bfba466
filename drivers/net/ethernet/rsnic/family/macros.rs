// SPDX-License-Identifier: GPL-2.0

//! The macros the families expand in their own code: the [`super::DataPath`] methods every
//! family writes alike, and the conversions of a family's bring-up error type.

/// The [`DataPath`] methods every family writes alike, expanded inside its `impl DataPath`:
/// the drains, fault checks and XDP transmit through the `hwif` queues' methods of the same
/// names, the counters their stats blocks name alike, and the CQ arms and arm counts, where
/// the family says how a queue's CQ is armed (`arm = |cq, mmio| ...`) and how its arms are
/// counted (`arms = |cq| ...`). Monomorphised like the rest.
macro_rules! datapath_common {
    (arm = |$cq:ident, $mmio:ident| $arm:expr, arms = |$c:ident| $arms:expr $(,)?) => {
        $crate::family::datapath_common!(@drain
            tx_drain Sq [$crate::family::env::TxEnv<'_>] [$crate::family::env::TxSkb],
            xdp_sq_drain XdpSq [$crate::xdp::XdpEnv<'_>] [$crate::xdp::XdpTx]);
        $crate::family::datapath_common!(@give_back
            rx_drain Rx [$crate::family::env::RxEnv<'_>],
            xsk_rx_drain XskRx [$crate::xdp::XskRxEnv<'_>]);
        $crate::family::datapath_common!(@fault xdp_sq_fault XdpSq, xsk_rx_fault XskRx);
        $crate::family::datapath_common!(@arm |$cq, $mmio| $arm;
            arm_tx Sq, arm_rx Rx, xdp_sq_arm XdpSq, xsk_rx_arm XskRx);
        $crate::family::datapath_common!(@stats |$c| $arms;
            tx_stats Sq TxStats, rx_stats Rx RxStats,
            xdp_sq_stats XdpSq TxStats, xsk_rx_stats XskRx RxStats);
        $crate::family::datapath_common!(@count
            rx_packets RxStats packets, rx_bytes RxStats bytes,
            tx_packets TxStats packets, tx_bytes TxStats bytes, tx_dropped TxStats dropped);

        #[inline(always)]
        fn rx_short(q: &Self::Rx) -> bool {
            q.error().is_none() && q.short()
        }

        #[inline(always)]
        fn xdp_sq_xmit(
            sq: &mut Self::XdpSq,
            frame: $crate::xdp::XdpTx,
            env: &mut $crate::xdp::XdpEnv<'_>,
        ) -> core::result::Result<(), $crate::hwif::pkt::TxReject<$crate::xdp::XdpTx>> {
            // One WQE per frame; the caller rings once per batch.
            sq.xmit(frame, true, env)
        }
    };
    (@drain $($name:ident $q:ident [$env:ty] [$pkt:ty]),*) => {$(
        fn $name(q: &mut Self::$q, env: &mut $env, release: impl FnMut($pkt)) -> u32 {
            q.drain(env, release).0
        }
    )*};
    (@give_back $($name:ident $q:ident [$env:ty]),*) => {$(
        fn $name(q: &mut Self::$q, env: &mut $env) {
            q.drain(env);
        }
    )*};
    (@fault $($name:ident $q:ident),*) => {$(
        fn $name(q: &Self::$q) -> bool {
            q.error().is_some()
        }
    )*};
    (@arm |$cq:ident, $mmio:ident| $arm:expr; $($name:ident $q:ident),*) => {$(
        fn $name(q: &mut Self::$q, $mmio: &$crate::bus::Bar<'_>) {
            let $cq = q.cq_mut();
            $arm;
        }
    )*};
    (@stats |$c:ident| $arms:expr; $($name:ident $q:ident $stats:ident),*) => {$(
        fn $name(q: &Self::$q) -> (Self::$stats, u64) {
            let $c = q.cq();
            (q.stats, $arms)
        }
    )*};
    (@count $($name:ident $stats:ident $field:ident),*) => {$(
        fn $name(s: &Self::$stats) -> u64 {
            s.$field
        }
    )*};
}
pub(crate) use datapath_common;

/// Makes a family's bring-up error type `$t` (an enum with a `Kernel(Error)` variant) from
/// a kernel error and from an allocation failure (`ENOMEM`), so that `?` takes both.
macro_rules! kernel_error_from {
    ($t:ty) => {
        impl From<kernel::error::Error> for $t {
            fn from(e: kernel::error::Error) -> Self {
                Self::Kernel(e)
            }
        }

        impl From<kernel::alloc::AllocError> for $t {
            fn from(_: kernel::alloc::AllocError) -> Self {
                Self::Kernel(kernel::error::code::ENOMEM)
            }
        }
    };
}
pub(crate) use kernel_error_from;
