#!/bin/sh
# An indirect jump to code the analysis cannot find (tests/ijump.c: the
# target is computed at run time): the first replay stops with a clear
# message and notes the target in the cache; the next `skel gen` follows
# it, and `skel check` then matches valgrind lackey.  Never silent, never a
# dead end on the second run.
cd "$(dirname "$0")/.." || exit 1
skel=./skel
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"
fails=0
bad() { echo "FAIL: $*"; fails=$((fails+1)); }

${CC:-gcc} -O2 -o "$tmp/ijump" tests/ijump.c || { echo "FAIL: cannot build tests/ijump.c"; exit 1; }
app="$tmp/ijump"
$skel gen "$app" -o "$tmp/s1.c" 2>"$tmp/gen1.err" || bad "gen: $(cat "$tmp/gen1.err")"
grep -q "following" "$tmp/gen1.err" && bad "first gen already has targets: $(cat "$tmp/gen1.err")"
$skel record "$tmp/s1.c" -o "$tmp/v1" -- "$app" 6 >/dev/null 2>&1 || bad "record failed"
$skel replay "$tmp/s1.c" "$tmp/v1" --format count >"$tmp/r1.out" 2>"$tmp/r1.err"
st=$?
[ $st -eq 3 ] || bad "first replay: status $st, expected 3 (desynchronised): $(head -3 "$tmp/r1.err")"
grep -q "did not find" "$tmp/r1.err" || bad "first replay: no message naming the unknown target: $(head -3 "$tmp/r1.err")"
grep -q "noted in" "$tmp/r1.err" || bad "first replay: the target was not noted: $(head -3 "$tmp/r1.err")"
ls "$XDG_CACHE_HOME"/skel/*.targets >/dev/null 2>&1 || bad "no .targets file in the cache"

$skel gen "$app" -o "$tmp/s2.c" 2>"$tmp/gen2.err" || bad "second gen: $(cat "$tmp/gen2.err")"
grep -q "following 1 indirect-jump target" "$tmp/gen2.err" || bad "second gen does not say it follows the target: $(cat "$tmp/gen2.err")"
if $skel check "$tmp/s2.c" -- "$app" 6 >"$tmp/c.out" 2>"$tmp/c.err"; then
	echo "targets: $(grep '^check:' "$tmp/c.err")"
else
	bad "second run: skel check: $(tail -5 "$tmp/c.err")"
fi
# skel trace regenerates its cached skeleton when targets were noted after it
rm -rf "$XDG_CACHE_HOME"
$skel trace --format count -- "$app" 6 >/dev/null 2>"$tmp/t1.err" && bad "first trace succeeded although the target is unknown"
$skel trace --format count -- "$app" 6 >"$tmp/t2.out" 2>"$tmp/t2.err" || bad "second trace failed: $(head -3 "$tmp/t2.err")"
grep -q "following 1" "$tmp/t2.err" || bad "second trace did not regenerate with the target: $(head -3 "$tmp/t2.err")"
[ $fails -eq 0 ] && echo "targets: all passed"
[ $fails -eq 0 ]
