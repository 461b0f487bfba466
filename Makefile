# SPDX-License-Identifier: GPL-2.0
#
# rsnic: user-facing targets. Kbuild (next to this file) is what the kernel build reads.
#
#   make setup      install what is needed (Debian packages, rust-src, bindgen-cli)
#   make kernel     build or reuse the Rust-enabled 6.12 test kernel (KERNEL_VARIANT=debug
#                   for KASAN, lockdep, kmemleak)
#   make module     build rsnic.ko (against KDIR=... if given, else the test kernel)
#   make vmtest     boot the test kernel in QEMU and run the VM tests (TESTS=... to choose)
#   make hostcheck  cargo fmt/clippy/test of the kernel-free code
#   make test       everything: host checks, module, VM tests on the normal and debug kernels
#   make demo       the main job: boot the VM and show rsnic at work
#   make bench      deterministic data-path figures (target/bench/datapath.csv)
#   make fuzz       fuzz the data path against a hostile device (FUZZ_SECONDS per target)
#   make miri       host tests of the kernel-free code under Miri
#   make fmt        format all Rust sources

SHELL := /bin/bash
export KERNEL_VARIANT ?= normal
TESTS ?= $(sort $(wildcard tests/vm/[0-9]*.sh))

.PHONY: all setup kernel module xdp-tools vmtest hostcheck test demo bench fuzz miri fmt clean

all: module

setup:
	@scripts/setup.sh

kernel:
	@scripts/build-kernel.sh >/dev/null

module:
	@if [ -z "$(KDIR)" ]; then scripts/build-kernel.sh >/dev/null; fi
	@KDIR="$(KDIR)" scripts/build-module.sh

xdp-tools:
	@scripts/build-xdp-tools.sh

vmtest: kernel module xdp-tools
	@scripts/vm-run.sh scripts/vm/run-tests.sh $(TESTS)

hostcheck:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	cargo test --workspace --quiet

test: setup
	@scripts/test.sh

demo: setup kernel module
	@scripts/vm-run.sh scripts/vm/demo.sh

bench:
	@scripts/bench.sh

fuzz:
	@scripts/fuzz.sh

miri:
	@scripts/miri.sh

fmt:
	cargo fmt --all
	rustfmt --edition 2021 drivers/net/ethernet/rsnic/rsnic_main.rs

clean:
	rm -rf target
