#!/usr/bin/env bash
# Runs inside the test VM: each VM test script in turn, once per device family in
# RSNIC_FAMILIES (default "mlx5 mana"; the script sees RSNIC_FAMILY), then (on a kmemleak
# kernel) a leak scan. Prints "ok - FAMILY/NAME" or "not ok - FAMILY/NAME" per test (exit 77
# is a skip: a test that runs in one family's pass only, on one kernel or in both, or one
# whose feature is missing; lib.sh's skip REASON puts the reason on the line) and a
# closing "N passed, N failed, N skipped".
# Each test script is a plain bash script that exits 0 when it passes; it can be run alone.
set -u
cd "$RSNIC_ROOT" || exit 1
kmemleak=/sys/kernel/debug/kmemleak
[ -w "$kmemleak" ] && echo clear >"$kmemleak"

pass=0
fail=0
skip=0
failed=""
for fam in ${RSNIC_FAMILIES:-mlx5 mana}; do
	export RSNIC_FAMILY=$fam
	for t in "$@"; do
		name=$fam/$(basename "$t" .sh)
		echo "=== RUN $name"
		t0=$(date +%s)
		export RSNIC_SKIP_FILE=/tmp/rsnic-skip-reason RSNIC_FAIL_FILE=/tmp/rsnic-fail-reason
		rm -f "$RSNIC_SKIP_FILE" "$RSNIC_FAIL_FILE"
		timeout 600 bash "$t"
		rc=$?
		secs=$(($(date +%s) - t0))
		if [ "$rc" = 0 ]; then
			echo "ok - $name (${secs} s)"
			pass=$((pass + 1))
		elif [ "$rc" = 77 ]; then
			echo "ok - $name # SKIP $(cat "$RSNIC_SKIP_FILE" 2>/dev/null || echo runs in another pass) (${secs} s)"
			skip=$((skip + 1))
		else
			echo "not ok - $name (exit $rc, ${secs} s)"
			fail=$((fail + 1))
			why=$(head -n1 "$RSNIC_FAIL_FILE" 2>/dev/null | cut -c1-200)
			failed+=$'\n'"  $name (exit $rc, ${secs} s)${why:+: $why}"
			if [ "$rc" = 124 ]; then
				# Timed out: where the tasks still blocked (state D) wait, and the kernel
				# log's tail.
				for st in /proc/[0-9]*/stat; do
					read -r _ comm state _ <"$st" 2>/dev/null || continue
					[ "$state" = D ] || continue
					echo "  blocked: ${st%/stat} $comm"
					sed 's/^/    /' "${st%/stat}/stack" 2>/dev/null
				done
				dmesg | tail -n 40 | sed 's/^/  dmesg: /'
			fi
		fi
		# Leave a clean slate for the next test whatever this one did.
		rmmod rsnic 2>/dev/null
	done
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

# The failures again, last, where a log's tail shows them.
[ -z "$failed" ] || echo "vm: failed:$failed"
echo "vm: $pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
