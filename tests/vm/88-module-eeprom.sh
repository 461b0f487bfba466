#!/usr/bin/env bash
# The port's cable module (ethtool -m; rsnic.rst, "The cable module"). 99-upstream-mlx5
# checks that the kernel's mlx5e reads the same module from the model (check_cable_module).
#
# ConnectX, as mlx5e reads it (the module of PMLP's lane 0, then MCIA reads of at most 48
# bytes that never cross a page): ethtool decodes the device's QSFP28 passive copper cable
# (SFF-8636, flat memory: page 0 only) on both ports; a hex read at an offset gives those
# bytes; a read at I2C address 0x51, where a QSFP module does not answer, fails (the
# device's MCIA status, EIO) and the next read still works.
#
# MANA: upstream mana has no module operation and neither has rsnic: "Operation not
# supported".
set -eu
. "$(dirname "$0")/lib.sh"

setup_pair
if [ "$RSNIC_FAMILY" = mana ]; then
	if ethtool -m "$A" >/tmp/m.out 2>&1; then
		fail "ethtool -m on MANA answered: $(head -3 /tmp/m.out)"
	fi
	grep -q "Operation not supported" /tmp/m.out || fail "ethtool -m on MANA: $(cat /tmp/m.out)"
	echo "  ethtool -m: Operation not supported (as upstream mana)"
	teardown_pair
	exit 0
fi

check_cable_module A "$A"
check_cable_module B "$B" peer

# A hex read at an offset: the vendor name's 16 bytes (page 0, bytes 148..163).
hex=$(ethtool -m "$A" hex on offset 148 length 16 | awk '/^0x/ { for (i = 2; i <= NF; i++) printf "%s", $i }')
assert_eq "bytes 148..163" "$(printf 'RSNIC MODEL     ' | od -An -tx1 | tr -d ' \n')" "$hex"
# I2C address 0x51: no QSFP module answers there; the device says so, the driver fails the read.
mark_dmesg
if ethtool -m "$A" i2c 0x51 page 0 offset 0 length 16 >/tmp/m.err 2>&1; then
	fail "a read at I2C address 0x51 succeeded: $(cat /tmp/m.err)"
fi
echo "  i2c 0x51: $(head -1 /tmp/m.err)"
dmesg_since_mark | grep -q "reading the cable module (MCIA page 0 offset 0): status 0x9" ||
	fail "the device's MCIA status 0x9 was not logged"
ethtool -m "$A" >/dev/null || fail "ethtool -m after the failed read"
teardown_pair
