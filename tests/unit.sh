#!/bin/sh
# The unit tests (tests/test_*.c, cmocka, built with AddressSanitizer and
# UBSan into build/san/tests by make check), one after the other; run by
# tests/run-tests.sh beside the scripts.  Fails if any fails or none is
# built.
cd "$(dirname "$0")/.." || exit 1
n=0; failed=""
for t in build/san/tests/test_*; do
	[ -x "$t" ] || continue
	n=$((n+1))
	echo "== $t"
	ASAN_OPTIONS=detect_leaks=1 "$t" || failed="$failed $t"
done
[ "$n" -gt 0 ] || { echo "FAIL: unit: no unit test built (make tests)"; exit 1; }
[ -z "$failed" ] || { echo "FAIL: unit:$failed"; exit 1; }
echo "unit: all $n passed"
