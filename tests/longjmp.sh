#!/bin/sh
# setjmp/longjmp (tests/longjmp.c, issue 13): out of a loop nest, between
# two live setjmp frames, into the middle of a recursion, siglongjmp, and
# setjmp set again in a loop; -O0 and -O2.  Each must be exact under
# skel check, with the program's output and status as native.
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"
fails=0
bad() { echo "FAIL: longjmp: $*"; fails=$((fails+1)); }
for o in O0 O2; do
	${CC:-gcc} -$o -o "$tmp/lj-$o" tests/longjmp.c || { bad "cannot build -$o"; continue; }
	./skel gen "$tmp/lj-$o" -o "$tmp/s-$o.c" 2>"$tmp/gen.err" || { bad "gen -$o: $(cat "$tmp/gen.err")"; continue; }
	grep -q "SK_SETJMP" "$tmp/s-$o.c" || bad "-$o: no setjmp in the skeleton (the test tests nothing)"
	for c in "loop 3" nested recurse sig "again 20"; do
		"$tmp/lj-$o" $c >"$tmp/native.out" 2>&1; nst=$?
		if ./skel check "$tmp/s-$o.c" -- "$tmp/lj-$o" $c >"$tmp/check.out" 2>"$tmp/check.err"; then
			echo "longjmp -$o $c: $(grep '^check:' "$tmp/check.err")"
		else
			bad "-$o $c: $(tail -6 "$tmp/check.err")"
		fi
		./skel run "$tmp/s-$o.c" --format count -o /dev/null -- "$tmp/lj-$o" $c >"$tmp/run.out" 2>"$tmp/run.err"
		rst=$?
		[ $rst -eq $nst ] || bad "-$o $c: skel run exited $rst, native $nst: $(tail -3 "$tmp/run.err")"
		cmp -s "$tmp/run.out" "$tmp/native.out" || bad "-$o $c: output differs under skel run"
	done
done
[ $fails -eq 0 ] && echo "longjmp: all passed"
[ $fails -eq 0 ]
