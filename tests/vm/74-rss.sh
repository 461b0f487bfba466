#!/usr/bin/env bash
# RSS through ethtool (rsnic.rst, "RSS"), on the receiving port B of a pair with 4 channels,
# checked by where sets of UDP flows from A land (B's per-queue RX counters):
#   -x      the indirection table (256 entries on ConnectX, as mlx5e; 64 on MANA, the
#           vport's), the default key, Toeplitz; the default table spreads over 4 queues;
#   -X      equal 1 puts every flow on queue 0, weight 0 1 0 0 on queue 1, default spreads
#           them again exactly as a Toeplitz computed here says; a new key (hkey) moves
#           flows to where that Toeplitz says, with no frame lost to key changes made under
#           traffic;
#   -n/-N   rx-flow-hash: ConnectX's udp4 sd puts every flow of one address pair on one
#           queue, sdfn spreads them; MANA reports its fixed fields and refuses -N with a
#           message;
#   refused another hash function (with a message), on MANA an additional RSS context
#           (ConnectX makes one and deletes it; 76-ntuple.sh steers through them);
#   -L      a default table follows the channel count; a table the user set is kept over
#           any count it fits, and one that names queue 3 keeps the count from going below 4.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"

flows_pair 4
inb() { ip netns exec peer "$@"; }
case $RSNIC_FAMILY in
mlx5) TABLE=256 ;;
mana) TABLE=64 ;;
esac
DEFAULT_KEY=6d:5a:56:da:25:5b:0e:c2:41:67:25:3d:43:a3:8f:b0:d0:ca:2b:cb:ae:7b:30:b4:77:cb:2d:a3:80:30:f2:0c:6a:42:b7:3b:be:ac:01:fa
KEY2=3b:9f:02:e1:77:c4:58:a6:1d:e0:93:4c:b2:6f:05:d8:8e:21:fa:67:c3:19:b4:5e:0a:f7:62:d1:38:8b:e5:14:c9:70:2d:af:46:9b:13:e8

# The table's entries, one per line, and the key, from ethtool -x on B.
table() {
	inb ethtool -x "$B" | awk '/^RSS hash key/ { exit } /^ *[0-9]+:/ { for (i = 2; i <= NF; i++) print $i }'
}
key() { inb ethtool -x "$B" | awk '/^RSS hash key:/ { getline; print; exit }'; }
queues_used() { table | sort -un | tr '\n' ' ' | sed 's/ $//'; }

# Flow i of a set N BASE STEP comes from source port BASE + (i * STEP mod 40000). Flows of
# consecutive ports (STEP 1) spread evenly over the queues under any key (Toeplitz is linear:
# 64 consecutive ports take every value of the low bits), so the key test uses STEP 7919,
# whose 48 flows land 4/10/16/18 under the default key and 10/13/14/11 under KEY2.

# counts N BASE [STEP]: sends the set (its UDP datagrams from A, 10.10.0.1, to 10.10.0.2:9 on
# B) and prints how many of its flows each of B's queues received.
counts() { queue_counts send_udp_flows "$1" "$2" "${3:-1}" 9 rss 10; }

# predict N BASE STEP FIELDS [KEY2]: the queue counts a Toeplitz computed here gives for
# the set N BASE STEP under B's current key and table, hashing FIELDS ("sd": the addresses,
# "sdfn": addresses and ports, in that order); with KEY2 also, on a second line, the counts
# under KEY2 and the number of flows KEY2 moves.
predict() {
	table >/tmp/rss.table
	python3 - "$(key)" /tmp/rss.table "$1" "$2" "$3" "$4" "$NQ" "${5:-}" <<'EOF'
import sys
def toeplitz(key, data):
    k, kl, r = int.from_bytes(key, "big"), 8 * len(key), 0
    for i, byte in enumerate(data):
        for b in range(8):
            if byte & (0x80 >> b):
                r ^= (k >> (kl - 32 - (8 * i + b))) & 0xFFFFFFFF
    return r
keyhex, tfile, n, base, step, fields, nq, key2 = sys.argv[1:9]
table = [int(l) for l in open(tfile)]
n, base, step, nq = int(n), int(base), int(step), int(nq)
def queues(key):
    key = bytes(int(x, 16) for x in key.split(":"))
    out = []
    for i in range(n):
        t = bytes([10, 10, 0, 1, 10, 10, 0, 2])
        if fields == "sdfn":
            t += (base + (i * step) % 40000).to_bytes(2, "big") + (9).to_bytes(2, "big")
        out.append(table[toeplitz(key, t) % len(table)])
    return out
def show(qs):
    return " ".join(str(qs.count(q)) for q in range(nq))
q1 = queues(keyhex)
print(show(q1))
if key2:
    q2 = queues(key2)
    print(show(q2), sum(a != b for a, b in zip(q1, q2)))
EOF
}

echo "-- ethtool -x on B"
inb ethtool -x "$B" | sed -n '1,3p;/RSS hash key/,$p'
assert_eq "indirection table entries" "$TABLE" "$(table | wc -l)"
assert_eq "hash function toeplitz" on "$(inb ethtool -x "$B" | awk '/toeplitz:/ { print $2 }')"
assert_eq "hash function xor" off "$(inb ethtool -x "$B" | awk '/xor:/ { print $2; exit }')"
assert_eq "default key" "$DEFAULT_KEY" "$(key)"
assert_eq "default table over 4 channels" "0 1 2 3" "$(queues_used)"
assert_eq "entry 5 of the default table (5 mod 4)" 1 "$(table | sed -n 6p)"

echo "-- -X equal 1, weight 0 1 0 0, default"
inb ethtool -X "$B" equal 1
assert_eq "table after equal 1" 0 "$(queues_used)"
assert_eq "64 flows after equal 1" "64 0 0 0" "$(counts 64 20000)"
inb ethtool -X "$B" weight 0 1 0 0
assert_eq "64 flows after weight 0 1 0 0" "0 64 0 0" "$(counts 64 20000)"
inb ethtool -X "$B" default
assert_eq "table after default" "0 1 2 3" "$(queues_used)"
want=$(predict 64 20000 1 sdfn)
got=$(counts 64 20000)
assert_eq "64 flows spread by the default table (predicted)" "$want" "$got"
used=$(echo "$got" | tr ' ' '\n' | grep -vc '^0$' || true)
[ "$used" -ge 2 ] || fail "the default table put 64 flows on $used queue(s)"

echo "-- -X hkey: flows move where the new key says"
p=$(predict 48 20000 7919 sdfn "$KEY2")
moved=$(echo "$p" | sed -n 2p | cut -d' ' -f5)
want1=$(echo "$p" | sed -n 1p)
want2=$(echo "$p" | sed -n 2p | cut -d' ' -f1-4)
[ "$want1" != "$want2" ] || fail "the test's flows land alike under both keys (predicted)"
assert_eq "48 flows under the default key (predicted)" "$want1" "$(counts 48 20000 7919)"
inb ethtool -X "$B" hkey "$KEY2"
assert_eq "key after hkey" "$KEY2" "$(key)"
assert_eq "table kept by a key change" "0 1 2 3" "$(queues_used)"
assert_eq "48 flows under the new key ($moved moved, predicted)" "$want2" \
	"$(counts 48 20000 7919)"

# Key changes under traffic are updates in place: no frame is lost to them.
snap s0a "$A"
snap s0b "$B" peer
python3 - <<'EOF' &
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.10.0.1", 30000))
for i in range(2000):
    s.sendto(b"x" * 64, ("10.10.0.2", 9))
    if i % 20 == 19:
        time.sleep(0.005)
EOF
bg=$!
for k in "$DEFAULT_KEY" "$KEY2" "$DEFAULT_KEY"; do
	inb ethtool -X "$B" hkey "$k"
done
wait "$bg" || fail "the background sender failed"
wait_for "the background stream to reach B" settled
# A key change that re-created queues or steering objects would drop frames for want of
# a queue (or, on MANA, of posted buffers in new RQs); out-of-buffer drops of a stream that
# outran B are reported, and counted with what arrived.
assert_eq "frames B's device dropped for want of a queue during key changes" 0 \
	"$(delta s0b s1b dev_rx_no_rq_drops)"
nowqe=$(delta s0b s1b "$C_NOWQE")
echo "  B out-of-buffer drops meanwhile ($C_NOWQE): $nowqe"
assert_eq "frames A sent vs B received + out of buffer during key changes" \
	"$(delta s0a s1a tx_packets)" "$(($(delta s0b s1b rx_packets) + nowqe))"
assert_eq "key after the changes" "$DEFAULT_KEY" "$(key)"

echo "-- rx-flow-hash"
inb ethtool -n "$B" rx-flow-hash udp4
nfields=$(inb ethtool -n "$B" rx-flow-hash udp4 | grep -cE '^(IP SA|IP DA|L4 bytes)' || true)
assert_eq "udp4 hash fields at first (addresses and ports)" 4 "$nfields"
# (ethtool 6.14 names no "ip4"/"ip6" flow type: the fields of other IP traffic, addresses
# only, are the host tests' to check.)
mark_dmesg
if [ "$RSNIC_FAMILY" = mlx5 ]; then
	inb ethtool -N "$B" rx-flow-hash udp4 sd
	assert_eq "udp4 hash fields after sd" 2 \
		"$(inb ethtool -n "$B" rx-flow-hash udp4 | grep -cE '^(IP SA|IP DA|L4 bytes)' || true)"
	want=$(predict 32 21000 1 sd)
	assert_eq "32 flows of one address pair on one queue (sd)" "$want" "$(counts 32 21000)"
	echo "$want" | tr ' ' '\n' | grep -qx 32 || fail "sd spread one address pair: $want"
	# TCP keeps its own fields (its own TIR).
	assert_eq "tcp4 hash fields untouched" 4 \
		"$(inb ethtool -n "$B" rx-flow-hash tcp4 | grep -cE '^(IP SA|IP DA|L4 bytes)' || true)"
	inb ethtool -N "$B" rx-flow-hash udp4 sdfn
	want=$(predict 32 21000 1 sdfn)
	assert_eq "32 flows spread again (sdfn)" "$want" "$(counts 32 21000)"
	# A field the device cannot hash (the L2 destination) is refused with a message.
	if inb ethtool -N "$B" rx-flow-hash udp4 sdfnm 2>/tmp/err; then
		fail "udp4 hashed over the L2 destination accepted"
	fi
	dmesg_since_mark | grep -q "rx-flow-hash: only IP addresses (s, d) and L4 ports (f, n) can be hashed" ||
		fail "no message for the refused udp4 fields"
else
	if inb ethtool -N "$B" rx-flow-hash udp4 sd 2>/tmp/err; then
		fail "MANA accepted rx-flow-hash udp4 sd"
	fi
	echo "  refused: -N rx-flow-hash udp4 sd -> $(tr '\n' ' ' </tmp/err)"
	dmesg_since_mark | grep -q "rx-flow-hash: MANA hashes fixed fields" ||
		fail "no message for the refused rx-flow-hash"
	assert_eq "udp4 hash fields unchanged" 4 \
		"$(inb ethtool -n "$B" rx-flow-hash udp4 | grep -cE '^(IP SA|IP DA|L4 bytes)' || true)"
fi

echo "-- refusals"
mark_dmesg
if inb ethtool -X "$B" hfunc xor 2>/tmp/err; then fail "hash function xor accepted"; fi
echo "  refused: -X hfunc xor -> $(tr '\n' ' ' </tmp/err)"
dmesg_since_mark | grep -q "Toeplitz only" || fail "no message for the refused hash function"
# Additional contexts: ConnectX has them (76-ntuple.sh steers through them), MANA not.
if [ "$RSNIC_FAMILY" = mana ]; then
	if inb ethtool -X "$B" context new 2>/tmp/err; then fail "an RSS context was created"; fi
	echo "  refused: -X context new -> $(tr '\n' ' ' </tmp/err)"
else
	ctx=$(inb ethtool -X "$B" context new | awk '/New RSS context is/ { print $NF }')
	[ -n "$ctx" ] || fail "no RSS context created"
	inb ethtool -X "$B" context "$ctx" delete
	echo "  RSS context $ctx created and deleted"
fi
if inb ethtool -X "$B" equal 5 2>/tmp/err; then fail "a table over 5 of 4 queues accepted"; fi
assert_eq "hash function still toeplitz" on "$(inb ethtool -x "$B" | awk '/toeplitz:/ { print $2 }')"

echo "-- -L and the table"
inb ethtool -L "$B" combined 2
assert_eq "default table over 2 channels" "0 1" "$(queues_used)"
inb ethtool -L "$B" combined 4
assert_eq "default table over 4 channels again" "0 1 2 3" "$(queues_used)"
# A table the user set is kept over any count it fits.
inb ethtool -X "$B" weight 0 1
assert_eq "user table on queue 1" 1 "$(queues_used)"
inb ethtool -L "$B" combined 2
assert_eq "user table kept over 2 channels" 1 "$(queues_used)"
inb ethtool -L "$B" combined 4
assert_eq "user table kept over 4 channels" 1 "$(queues_used)"
inb ethtool -X "$B" weight 0 0 0 1
assert_eq "user table on queue 3" 3 "$(queues_used)"
if inb ethtool -L "$B" combined 2 2>/tmp/err; then
	fail "2 channels accepted under a table that names queue 3"
fi
echo "  refused: -L combined 2 -> $(tr '\n' ' ' </tmp/err)"
assert_eq "channels kept" 4 \
	"$(channels_of "$B" current peer)"
assert_eq "64 flows on queue 3" "0 0 0 64" "$(counts 64 20000)"
inb ethtool -X "$B" default
inb ethtool -L "$B" combined 2
assert_eq "default table follows the channels again" "0 1" "$(queues_used)"
teardown_pair
