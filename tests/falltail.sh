#!/bin/sh
# A direct call whose callee leaves through code outside it (tests/
# falltail.s: f's conditional jump falls into g, which tail-jumps to
# qsort; qsort calls back into the executable): the call must record its
# RETURNED word, as for a callee with a tail jump out (skelgen.c,
# runs_other_code).  Before, the replay waited for that word past the
# comparator's calls and desynchronised.  Executable scope, under skel
# check.
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"
fails=0
bad() { echo "FAIL: falltail: $*"; fails=$((fails+1)); }
${CC:-gcc} -o "$tmp/falltail" tests/falltail.s ||
	{ echo "FAIL: falltail: cannot build tests/falltail.s"; exit 1; }
./skel gen --main-only "$tmp/falltail" -o "$tmp/f.c" 2>"$tmp/gen.err" ||
	bad "skel gen: $(cat "$tmp/gen.err")"
# main's call of f (at main+8) expects its RETURNED word at main+13
ret=$(printf '%x' $(( $(nm "$tmp/falltail" | awk '$3 == "main" { print "0x" $1 }') + 13 )))
grep -q "sk_expect(t, 0x${ret}ull, SK_RETURNED)" "$tmp/f.c" ||
	bad "the call of f records no RETURNED word (return site 0x$ret)"
./skel check "$tmp/f.c" -- "$tmp/falltail" >"$tmp/check.out" 2>"$tmp/check.err" ||
	bad "skel check: $(grep -v '^skel: gen' "$tmp/check.err" | tail -5)"
grep -q "^check: \([0-9]*\) of \1 accesses match" "$tmp/check.err" ||
	bad "check: $(grep '^check' "$tmp/check.err")"
echo "falltail: $(grep '^check: [0-9]' "$tmp/check.err")"
[ "$fails" -eq 0 ] && echo "falltail: ok"
[ "$fails" -eq 0 ]
