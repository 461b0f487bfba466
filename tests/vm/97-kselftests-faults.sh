#!/usr/bin/env bash
# The kernel's drivers/net/hw pp_alloc_fail.py against an rsnic port pair (tests/vm/ksft.sh):
# page_pool allocations failed by fail_function under an iperf3 stream; the driver's
# rx-alloc-fail counter must count them and traffic must go on. fail_function puts a kprobe
# on page_pool_alloc_pages' entry while the RX path runs through it: code patched under
# traffic, which the VM's QEMU handles (rsnic.rst, "Testing under TCG").
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
# Family-independent code (the RX refill's failure path): the mlx5 pass on the debug kernel.
one_family_on_debug
. "$(dirname "$0")/ksft.sh"

ksft_run hw/pp_alloc_fail
