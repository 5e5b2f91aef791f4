#!/bin/sh
# A contended mutex and condition variables (tests/condvar.c), the whole
# process traced, -O2: exact against lackey.  Threads blocked in libc's
# lock code wake to make the same accesses (the lock word, the same pcs)
# as the thread that just ran, so lackey's one sequence matches the
# replay's per-thread streams in several ways near each hand-over; the
# first way tried can fail thousands of accesses on (the threads' `ret`
# from __lll_lock_wait reads their own stacks), and skel check must find
# the one that matches (replay/interleave.c; tests/test_interleave.c has
# the hand-made cases).  Also: the recorded run prints what the native
# one does (the total is the same for any split of the work).
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$(pwd)/build/test-cache"
fails=0
bad() { echo "FAIL: condvar: $*"; fails=$((fails+1)); }
app=$tmp/condvar
${CC:-gcc} -O2 -o "$app" tests/condvar.c -lpthread || { echo "FAIL: condvar: cannot build tests/condvar.c"; exit 1; }
"$app" 3000 >"$tmp/native.out" || bad "native run failed"
./skel check -- "$app" 3000 >"$tmp/out" 2>"$tmp/err" ||
	bad "skel check: $(grep -v '^skel: gen' "$tmp/err" | head -12)"
cmp -s "$tmp/out" "$tmp/native.out" || bad "output under skel check: $(cat "$tmp/out")"
grep -q '^check: \([0-9]*\) of \1 accesses match valgrind lackey (100%), 4 threads' "$tmp/err" ||
	bad "not exact over 4 threads: $(grep '^check' "$tmp/err" | head -3)"
grep -q '^check: by object: .*libc.so.6 [1-9]' "$tmp/err" || bad "libc's accesses not compared"
echo "condvar: $(grep -m1 '^check: [0-9]' "$tmp/err"); $(grep 'interleavings' "$tmp/err")"
[ $fails -eq 0 ] || exit 1
echo "condvar: passed"
