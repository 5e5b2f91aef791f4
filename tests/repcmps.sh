#!/bin/sh
# repe cmpsb whose count comes from rcx after the instruction: the trace
# matches valgrind lackey (tests/repcmps.c).
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"
${CC:-gcc} -O2 -o "$tmp/repcmps" tests/repcmps.c || { echo "FAIL: cannot build tests/repcmps.c"; exit 1; }
if ./skel check -- "$tmp/repcmps" >/dev/null 2>"$tmp/err"; then
	echo "repcmps: $(grep '^check:' "$tmp/err")"
else
	echo "FAIL: repcmps: $(tail -4 "$tmp/err")"; exit 1
fi
