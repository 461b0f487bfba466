# SPDX-License-Identifier: GPL-2.0
#
# rsnic: user-facing targets. Kbuild (next to this file) is what the kernel build reads.
#
#   make setup      install everything below needs (scripts/setup.sh); the targets install
#                   their own part: setup-base (demo), setup-test (test, vmtest, fuzz, miri:
#                   nightly, Miri, cargo-fuzz, test-only packages), setup-bench (valgrind)
#   make kernel     build or reuse the Rust-enabled 6.12 test kernel (KERNEL_VARIANT=debug
#                   for KASAN, lockdep, kmemleak)
#   make module     build rsnic.ko (against KDIR=... if given, else the test kernel)
#   make vmtest     boot the test kernel in QEMU and run the VM tests (TESTS=... to choose)
#   make vmtest-vfio the vfio subset of the VM tests on the vfio-user transport: the device
#                   in its own process behind PCI functions with the hardware's IDs
#                   (VFIO_TESTS, VFIO_FAMILIES to choose)
#   make devd       build that device process (host/devd)
#   make hostcheck  the layering rules (scripts/check-layers.sh), cargo fmt/clippy/test of the kernel-free code
#   make test       everything: host checks, module, VM tests on the normal and debug kernels
#   make test-debug every VM test on the debug kernel (the test command runs a subset there)
#   make demo       the main job: boot the VM and show rsnic at work
#   make bench      deterministic data-path figures (target/bench/datapath.csv)
#   make perf-vm    where the CPU goes in the VM under pktgen: driver, device model, kernel
#   make bench-upstream  rsnic against the kernel's own mlx5e on the same emulated ConnectX
#                   functions (vfio-user transport): pktgen rate and guest CPU per packet
#   make fuzz       fuzz the data path against a hostile device (FUZZ_SECONDS per target)
#   make host-soak  the host chaos soak: 10^7 packets per family with random faults (in make test)
#   make soak       a chaos soak of the fault handling, both families (SOAK_SECONDS); soak-xdp-swap: XDP
#                   programs swapped under traffic (tests/soak/xdp-swap.sh)
#   make miri       host tests of the kernel-free code under Miri
#   make fmt        format all Rust sources

SHELL := /bin/bash
export KERNEL_VARIANT ?= normal
TESTS ?= $(sort $(wildcard tests/vm/[0-9]*.sh))

.PHONY: all setup setup-base setup-test setup-bench kernel module xdp-tools vmtest hostcheck \
	devd vmtest-vfio \
	host-soak test test-debug demo bench bench-upstream perf-vm fuzz soak soak-xdp-swap miri \
	fmt clean

all: module

setup:
	@scripts/setup.sh base test bench

setup-base:
	@scripts/setup.sh base

setup-test:
	@scripts/setup.sh test

setup-bench:
	@scripts/setup.sh bench

kernel:
	@scripts/build-kernel.sh >/dev/null

# The test kernel only when no KDIR is given (once per make run, shared with demo/vmtest).
module: $(if $(KDIR),,kernel)
	@KDIR="$(KDIR)" scripts/build-module.sh

xdp-tools: setup-test
	@scripts/build-xdp-tools.sh

vmtest: setup-test kernel module xdp-tools
	@scripts/vm-run.sh scripts/vm/run-tests.sh $(TESTS)

# The vfio-user transport's device process (host/devd: rsnic-devd --vfio-user, the sim/
# models as PCI functions with the hardware's IDs), run by scripts/vm-run.sh.
devd:
	@cargo build --release --quiet -p rsnic-devd

# The VM tests on the vfio-user transport (rsnic.rst, "The vfio-user transport"): one VM per
# family in VFIO_FAMILIES, the device in the device process presenting PCI functions with
# the hardware's IDs to QEMU's vfio-user-pci. Each test checks that rsnic drives those
# functions (lib.sh: load_rsnic); 98-upstream-mana runs the kernel's own mana driver
# against the MANA model and 99-upstream-mlx5 the kernel's mlx5_core against the ConnectX
# model (the manifest lets each skip on the other family); 99-device-gone kills the
# device process under rsnic, so it comes last.
VFIO_TESTS ?= $(addprefix tests/vm/,10-ports.sh 20-ethtool.sh 50-reload.sh 60-ping.sh \
	62-pktgen.sh 65-rmmod-traffic.sh 79-rx-mode.sh 81-devlink.sh 96-kselftests.sh \
	98-upstream-mana.sh 99-upstream-mlx5.sh 99-device-gone.sh)
VFIO_FAMILIES ?= mlx5 mana
vmtest-vfio: setup-test kernel module devd upstream
	@rc=0; for f in $(VFIO_FAMILIES); do \
		RSNIC_TRANSPORT=vfio RSNIC_PCI_FAMILY=$$f scripts/vm-run.sh scripts/vm/run-tests.sh \
			$(VFIO_TESTS) || rc=1; \
	done; exit $$rc

# 98-upstream-mana attaches the XDP test programs to the kernel's mana driver.
vmtest-vfio: $(if $(filter %/98-upstream-mana.sh,$(VFIO_TESTS)),xdp-tools)

# The kernel's own drivers of both families for the test kernel, judges of rsnic's device
# models on the vfio-user transport: mana.ko built out of tree, mlx5_core.ko checked
# (scripts/build-upstream.sh prints both paths).
.PHONY: upstream
upstream: kernel
	@scripts/build-upstream.sh >/dev/null

# The kernel's AF_XDP suite (xskxceiver, built on the host) when TESTS has its VM test.
.PHONY: xskxceiver
vmtest: $(if $(filter %/94-xskxceiver.sh,$(TESTS)),xskxceiver)
xskxceiver: kernel
	@scripts/build-xskxceiver.sh >/dev/null

hostcheck:
	@scripts/check-layers.sh
	cargo fmt --all --check
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	cargo test --workspace --quiet

# The host chaos soak (host/testbed/src/chaos.rs): RSNIC_CHAOS_PACKETS per family (default
# 10^7; 1e8 for the long run), RSNIC_CHAOS_SEED; release build. Part of make test.
host-soak:
	cargo test --release --quiet -p rsnic-testbed --test chaos_soak -- --ignored --nocapture

test: setup-test
	@scripts/test.sh

test-debug: setup-test
	@$(MAKE) -s KERNEL_VARIANT=debug kernel module vmtest

demo: setup-base kernel module
	@RSNIC_VM_QUIET_BOOT=1 scripts/vm-run.sh scripts/vm/demo.sh

bench: setup-bench
	@scripts/bench.sh

perf-vm: setup-base
	@scripts/perf-vm.sh

# rsnic against the kernel's own mlx5_core + mlx5e on the same two ConnectX VFs of rsnic-devd
# (vfio-user transport), one VM, the same kernel: pktgen rounds through each driver in turn,
# medians of the rate and of the guest's CPU time per packet (scripts/bench-upstream.sh, the
# guest part scripts/vm/bench-upstream.sh; BENCH_UP_ROUNDS, BENCH_UP_COUNT). Not part of
# make test.
bench-upstream: setup-base kernel module devd upstream
	@scripts/bench-upstream.sh

fuzz: setup-test
	@scripts/fuzz.sh

# A chaos soak of the fault handling (SOAK_SECONDS per family, default 300; SOAK_FAMILIES,
# default "mlx5 mana"; not part of make test).
soak: setup-test kernel module
	@RSNIC_VM_TIMEOUT=$(or $(RSNIC_VM_TIMEOUT),4000) scripts/vm-run.sh env \
		SOAK_SECONDS=$(or $(SOAK_SECONDS),300) SOAK_FAMILIES="$(or $(SOAK_FAMILIES),mlx5 mana)" \
		tests/soak/chaos.sh

# XDP programs swapped under traffic (tests/soak/xdp-swap.sh; XDP_SWAP_DEV=rsnic|veth,
# XDP_SWAP_PIN=1|0, XDP_SWAP_SECONDS): the emulator's cross-modifying-code race, and that
# 90-xdp-actions' pinning avoids it.
soak-xdp-swap: setup-test kernel module xdp-tools
	@scripts/vm-run.sh env XDP_SWAP_SECONDS=$(or $(XDP_SWAP_SECONDS),300) \
		XDP_SWAP_DEV=$(or $(XDP_SWAP_DEV),rsnic) XDP_SWAP_PIN=$(or $(XDP_SWAP_PIN),1) \
		tests/soak/xdp-swap.sh

miri: setup-test
	@scripts/miri.sh

fmt:
	cargo fmt --all
	rustfmt --edition 2021 drivers/net/ethernet/rsnic/rsnic_main.rs

clean:
	rm -rf target
