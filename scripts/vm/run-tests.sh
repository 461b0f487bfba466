#!/usr/bin/env bash
# Runs inside the test VM: each VM test script in turn, once per device family in
# RSNIC_FAMILIES (default "mlx5 mana"; the script sees RSNIC_FAMILY), then (on a kmemleak
# kernel) a leak scan. Prints "ok - FAMILY/NAME" or "not ok - FAMILY/NAME" per test and a
# closing "vm: N passed, N failed, N skipped". Exit 77 is a skip (lib.sh's skip REASON puts
# the reason on the line), and it counts as one only where tests/vm/manifest allows that
# test to skip for this family, kernel and transport; any other skip fails the run.
# Each test script is a plain bash script that exits 0 when it passes; it can be run alone.
set -u
cd "$RSNIC_ROOT" || exit 1
kmemleak=/sys/kernel/debug/kmemleak
[ -w "$kmemleak" ] && echo clear >"$kmemleak"

pass=0
fail=0
skip=0
failed=""
manifest=$RSNIC_ROOT/tests/vm/manifest
[ -r "$manifest" ] || { echo "not ok - no test manifest at $manifest"; exit 1; }
variant=${KERNEL_VARIANT:-normal}
transport=${RSNIC_TRANSPORT:-kernel}

# skip_allowed NAME FAMILY: prints the manifest's reason and succeeds if a "skip" line lets
# test NAME skip for FAMILY on this kernel and transport.
skip_allowed() {
	awk -v t="$1" -v f="$2" -v k="$variant" -v x="$transport" '
	function m(pat, v,   n, i, a) {
		if (pat == "*") return 1
		n = split(pat, a, ",")
		for (i = 1; i <= n; i++) if (a[i] == v) return 1
		return 0
	}
	$1 == "skip" {
		if (m($2, t) && m($3, f) && m($4, k) && m($5, x)) {
			$1 = $2 = $3 = $4 = $5 = ""
			sub(/^ +/, "")
			print
			found = 1
			exit
		}
	}
	END { exit !found }' "$manifest"
}

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
		elif [ "$rc" = 77 ] && allowed=$(skip_allowed "$(basename "$t" .sh)" "$fam"); then
			echo "ok - $name # SKIP $(cat "$RSNIC_SKIP_FILE" 2>/dev/null || echo "$allowed") (${secs} s)"
			skip=$((skip + 1))
		elif [ "$rc" = 77 ]; then
			why="skipped where tests/vm/manifest allows no skip ($fam, $variant kernel, $transport transport): $(cat "$RSNIC_SKIP_FILE" 2>/dev/null || echo no reason given)"
			echo "not ok - $name # $why (${secs} s)"
			fail=$((fail + 1))
			failed+=$'\n'"  $name: $why"
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
