#!/usr/bin/env bash
# Runs inside the test VM: each VM test script in turn, then (on a kmemleak kernel) a leak
# scan. Prints "ok - NAME" or "not ok - NAME" per test and a closing "N passed, N failed".
# Each test script is a plain bash script that exits 0 when it passes; it can be run alone.
set -u
cd "$RSNIC_ROOT" || exit 1
kmemleak=/sys/kernel/debug/kmemleak
[ -w "$kmemleak" ] && echo clear >"$kmemleak"

pass=0
fail=0
for t in "$@"; do
	name=$(basename "$t" .sh)
	echo "=== RUN $name"
	timeout 600 bash "$t"
	rc=$?
	if [ "$rc" = 0 ]; then
		echo "ok - $name"
		pass=$((pass + 1))
	else
		echo "not ok - $name (exit $rc)"
		fail=$((fail + 1))
	fi
	# Leave a clean slate for the next test whatever this one did.
	rmmod rsnic 2>/dev/null
done

if [ -w "$kmemleak" ]; then
	echo "=== RUN kmemleak"
	# kmemleak reports only objects older than 5 s; scan twice to drop transient ones.
	sleep 6
	echo scan >"$kmemleak"
	echo scan >"$kmemleak"
	leaks=$(cat "$kmemleak")
	if [ -z "$leaks" ]; then
		echo "ok - kmemleak"
		pass=$((pass + 1))
	else
		echo "$leaks" | head -n 60
		echo "not ok - kmemleak"
		fail=$((fail + 1))
	fi
fi

echo "vm: $pass passed, $fail failed"
[ "$fail" = 0 ]
