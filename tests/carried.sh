#!/bin/sh
# Values the skeleton computes instead of recording (skelgen.c,
# plan_carried; tests/carried.c names the cases): φs of known values on
# the edges into their block, and and/shr/sar results from known
# operands where they are defined.  At -O0 and -O2 the trace is exact
# against lackey; at -O2 skel gen says it computes some, and the two
# hand-picked ones are computed, not read: chain()'s masked index
# prev[cur & WMASK] (gcc: `and eax, 0xfff` after the load of cur, which
# the addresses of m[] record anyway), and probe()'s next slot (i + 1) &
# mask, from i carried around the loop.
cd "$(dirname "$0")/.." || exit 1
export SKEL_SCOPE=main
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"
fails=0
bad() { echo "FAIL: carried: $*"; fails=$((fails+1)); }
# make check-full runs the longer text (lackey takes 3x the time)
len=1000
[ -n "$SKEL_FULL" ] && len=3000
for o in O0 O2; do
	app=$tmp/carried-$o
	${CC:-gcc} -$o -o "$app" tests/carried.c || { bad "cannot build tests/carried.c -$o"; continue; }
	./skel gen "$app" -o "$tmp/c.c" 2>"$tmp/gen.err" || { bad "$o gen: $(cat "$tmp/gen.err")"; continue; }
	if ./skel check "$tmp/c.c" -- "$app" $len >/dev/null 2>"$tmp/err"; then
		echo "carried $o: $(grep '^check:' "$tmp/err")"
	else
		bad "$o: $(tail -4 "$tmp/err")"
	fi
	[ $o = O0 ] && continue
	n=$(sed -n 's/^skel: gen: \([0-9]*\) values are computed by the skeleton.*/\1/p' "$tmp/gen.err")
	[ "${n:-0}" -ge 3 ] || bad "$o: expected 3 computed values or more, skel gen says '${n:-none}'"
	# routine NAME: its skeleton function
	routine() {
		a=$(nm "$app" | sed -n "s/^0*\([0-9a-f]*\) [Tt] $1\$/\1/p")
		sed -n "/^\/\* $1 at 0x$a:/,/^}/p" "$tmp/c.c"
	}
	routine chain | grep -q '^	v[0-9]* = (uint64_t)(uint32_t)((v[0-9]* & 0xfffull));' ||
		bad "$o: chain()'s index cur & WMASK is not computed: $(routine chain | grep '0x10840\|& 0x')"
	routine probe | grep -q '& 0xfffull' || bad "$o: probe()'s next slot is not computed"
	routine probe | grep -q 'cv0 = ' || bad "$o: probe()'s slot is not carried around its loop"
done
[ "$fails" -eq 0 ] && echo "carried: all passed"
[ "$fails" -eq 0 ]
