#!/usr/bin/env python3
"""Netlink qstats of one interface, through the kernel's own ynl library.

Usage: qstats.py IFINDEX
Prints: <device tx-packets> <device rx-packets> <sum of queue tx-packets>
        <sum of queue rx-packets> <live TX queues>
"""
import os
import sys

ksrc = os.environ["RSNIC_KSRC"]
sys.path.insert(0, os.path.join(ksrc, "tools/net/ynl"))
from lib import YnlFamily  # noqa: E402

ynl = YnlFamily(os.path.join(ksrc, "Documentation/netlink/specs/netdev.yaml"), "")
ifindex = int(sys.argv[1])
dev = [d for d in ynl.dump("qstats-get", {"ifindex": ifindex}) if d["ifindex"] == ifindex][0]
queues = ynl.dump("qstats-get", {"ifindex": ifindex, "scope": 1})
txq = [q for q in queues if q["ifindex"] == ifindex and q["queue-type"] == "tx"]
rxq = [q for q in queues if q["ifindex"] == ifindex and q["queue-type"] == "rx"]
print(dev["tx-packets"], dev["rx-packets"],
      sum(q.get("tx-packets", 0) for q in txq), sum(q.get("rx-packets", 0) for q in rxq),
      len(txq))
