#!/bin/sh
# An indirect jump (tests/ijump.c) or call (tests/icall.c) to code the
# analysis cannot find (the target is computed at run time): the first
# replay stops with a clear message and notes the target in the cache; the
# next `skel gen` follows it, and `skel check` then matches valgrind
# lackey.  Never silent, never a dead end on the second run.
cd "$(dirname "$0")/.." || exit 1
# the executable's scope (skel gen --main-only) unless a case says
# otherwise: whole-process tracing is tests/whole.sh's
export SKEL_SCOPE=main
skel=./skel
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails+1)); }

case_of() {
	k=$1
	export XDG_CACHE_HOME="$tmp/cache-$k"
	${CC:-gcc} -O2 -o "$tmp/$k" tests/$k.c || { bad "cannot build tests/$k.c"; return; }
	app="$tmp/$k"
	$skel gen "$app" -o "$tmp/s1.c" 2>"$tmp/gen1.err" || bad "$k: gen: $(cat "$tmp/gen1.err")"
	grep -q "following" "$tmp/gen1.err" && bad "$k: first gen already has targets: $(cat "$tmp/gen1.err")"
	$skel record "$tmp/s1.c" -o "$tmp/v1" -- "$app" 6 >/dev/null 2>&1 || bad "$k: record failed"
	$skel replay "$tmp/s1.c" "$tmp/v1" --format count >"$tmp/r1.out" 2>"$tmp/r1.err"
	st=$?
	[ $st -eq 3 ] || bad "$k: first replay: status $st, expected 3 (desynchronised): $(head -3 "$tmp/r1.err")"
	grep -q "indirect $2 to a target the analysis did not find" "$tmp/r1.err" ||
		bad "$k: first replay: no message naming the unknown target: $(head -3 "$tmp/r1.err")"
	grep -q "noted in" "$tmp/r1.err" || bad "$k: first replay: the target was not noted: $(head -3 "$tmp/r1.err")"
	ls "$XDG_CACHE_HOME"/skel/*.targets >/dev/null 2>&1 || bad "$k: no .targets file in the cache"

	$skel gen "$app" -o "$tmp/s2.c" 2>"$tmp/gen2.err" || bad "$k: second gen: $(cat "$tmp/gen2.err")"
	grep -q "following 1 indirect jump or call target" "$tmp/gen2.err" ||
		bad "$k: second gen does not say it follows the target: $(cat "$tmp/gen2.err")"
	if $skel check "$tmp/s2.c" -- "$app" 6 >"$tmp/c.out" 2>"$tmp/c.err"; then
		echo "targets: $k: $(grep '^check:' "$tmp/c.err")"
	else
		bad "$k: second run: skel check: $(tail -5 "$tmp/c.err")"
	fi
	# skel trace regenerates its cached skeleton when targets were noted after it
	rm -rf "$XDG_CACHE_HOME"
	$skel trace --format count -- "$app" 6 >/dev/null 2>"$tmp/t1.err" && bad "$k: first trace succeeded although the target is unknown"
	$skel trace --format count -- "$app" 6 >"$tmp/t2.out" 2>"$tmp/t2.err" || bad "$k: second trace failed: $(head -3 "$tmp/t2.err")"
	grep -q "following 1" "$tmp/t2.err" || bad "$k: second trace did not regenerate with the target: $(head -3 "$tmp/t2.err")"
}

case_of ijump jump
# the call's target is code outside every known function, so the skeleton
# checks indirect calls at all (else they cost nothing)
case_of icall call
${CC:-gcc} -O2 -o "$tmp/icall" tests/icall.c &&
	$skel summary "$tmp/icall" | grep -q "code bytes outside every known function" ||
	bad "icall: skel summary does not report the hidden function's bytes"
gcc -O2 -o "$tmp/plain" tests/asmfn.c && $skel gen "$tmp/plain" 2>/dev/null | grep -q sk_icall_check &&
	bad "asmfn: indirect calls checked although every code byte is in a known function"
[ $fails -eq 0 ] && echo "targets: all passed"
[ $fails -eq 0 ]
