#!/usr/bin/env python3
"""What an interface offers for XDP, from netlink (netdev family dev-get, through the
kernel's own ynl library, like qstats.py).

Usage: xdp_features.py IFNAME
Prints one line: "xdp=F,F,... xsk=F,... zc_max_segs=N" with the flag names of the netdev
spec (basic, redirect, ndo-xmit, xsk-zerocopy, rx-sg, ndo-xmit-sg; xsk: tx-timestamp,
tx-checksum), "-" for none, zc_max_segs 0 when the kernel does not report it (it does
only for zero-copy capable devices).
"""
import os
import sys

ksrc = os.environ["RSNIC_KSRC"]
sys.path.insert(0, os.path.join(ksrc, "tools/net/ynl"))
from lib import YnlFamily  # noqa: E402

with open("/sys/class/net/%s/ifindex" % sys.argv[1]) as f:
    ifindex = int(f.read())
ynl = YnlFamily(os.path.join(ksrc, "Documentation/netlink/specs/netdev.yaml"), "")
d = ynl.do("dev-get", {"ifindex": ifindex})
print("xdp=%s xsk=%s zc_max_segs=%d" % (",".join(sorted(d.get("xdp-features", []))) or "-",
                                        ",".join(sorted(d.get("xsk-features", []))) or "-",
                                        d.get("xdp-zc-max-segs", 0)))
