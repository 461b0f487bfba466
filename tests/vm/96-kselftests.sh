#!/usr/bin/env bash
# The kernel's own driver selftests against an rsnic port pair (tests/vm/ksft.sh): of
# drivers/net ping.py (IPv4, IPv6 and TCP both ways), stats.py (standard ethtool stats,
# qstats against rtnl stats, qstats per queue) and queues.py (queue counts over netlink);
# of drivers/net/hw rss_ctx.py (RSS key and table, resizing, contexts). The drivers/net
# scripts run on the vfio-user transport, the hardware script on the in-kernel device host. pp_alloc_fail.py, which patches kernel
# text under traffic (a kprobe), is 97-kselftests-faults'.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
# Family-independent code (ethtool, qstats, netdev ops): the mlx5 pass on the debug kernel.
one_family_on_debug
. "$(dirname "$0")/ksft.sh"

# ping.py, stats.py and queues.py run on the functions with the hardware's IDs (the
# vfio-user transport, make vmtest-vfio), where a driver meets what it meets on a host;
# rss_ctx.py needs the ntuple rules and RSS contexts of the in-kernel device host's runs.
# Each script runs once per family per kernel, which keeps the test command in its budget.
if [ "$RSNIC_TRANSPORT" = kernel ]; then
	ksft_run hw/rss_ctx
else
	ksft_run ping stats queues
fi
