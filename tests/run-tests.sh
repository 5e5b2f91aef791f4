#!/bin/sh
# Runs every test program; prints one closing line "N passed, N failed".
# SKEL_FULL=1 (make check-full) adds the slow cases.
cd "$(dirname "$0")/.." || exit 1
pass=0; fail=0; failed=""
for t in build/san/tests/test_*; do
	[ -x "$t" ] || continue
	echo "== $t"
	if ASAN_OPTIONS=detect_leaks=1 "$t"; then pass=$((pass+1)); else fail=$((fail+1)); failed="$failed $t"; fi
done
for t in tests/*.sh; do
	# fuzz-exact.sh is `make fuzz-exact`, not a test of make check
	case "$t" in */run-tests.sh|*/fuzz-exact.sh) continue;; esac
	echo "== $t"
	t0=$(date +%s)
	if sh "$t"; then pass=$((pass+1)); else fail=$((fail+1)); failed="$failed $t"; fi
	echo "== $t: $(($(date +%s) - t0)) s"
done
# the real-program corpus (tests/real/run.sh): Debian commands under skel check
if [ -n "$SKEL_FULL" ]; then
	t=tests/real/run.sh
	echo "== $t"
	if sh "$t"; then pass=$((pass+1)); else fail=$((fail+1)); failed="$failed $t"; fi
fi
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
