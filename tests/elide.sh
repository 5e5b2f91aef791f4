#!/bin/sh
# Silent branches (issue 12 item 0): a conditional jump whose two ways
# meet again before any data access, call or recorded value is not
# replayed, and the recorder does not record its outcome (tests/elide.c
# names the cases).  At -O0 and -O2 the trace is exact against lackey
# with them elided and with --no-slice (which keeps them).  At -O2 (at
# -O0 each way stores its local variable): skel gen says how many; the
# elided run records fewer words, by at least one per byte of the text
# (words() and nested() each test a byte per iteration on a way that
# meets again); and kept()'s jump, one of whose ways stores, stays.
cd "$(dirname "$0")/.." || exit 1
export SKEL_SCOPE=main
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"
fails=0
bad() { echo "FAIL: elide: $*"; fails=$((fails+1)); }
# "words accesses" of a recorded run
counts() { # skeleton -> "words accesses"
	./skel record "$1" -o "$tmp/v" -- "$app" $len >/dev/null 2>&1
	./skel replay "$1" "$tmp/v" --format count 2>&1 |
		sed -n 's/^thread 0: .* \([0-9]*\) values$/\1/p; s/^total: \([0-9]*\) accesses.*/\1/p' | tr '\n' ' '
}
len=3000
for o in O0 O2; do
	app=$tmp/elide-$o
	${CC:-gcc} -$o -o "$app" tests/elide.c || { bad "cannot build tests/elide.c -$o"; continue; }
	./skel gen "$app" -o "$tmp/e.c" 2>"$tmp/gen.err" || { bad "$o gen: $(cat "$tmp/gen.err")"; continue; }
	./skel gen "$app" --no-slice -o "$tmp/n.c" 2>"$tmp/ngen.err" || { bad "$o gen --no-slice"; continue; }
	n=$(sed -n 's/^skel: gen: \([0-9]*\) conditional jumps whose two ways meet.*/\1/p' "$tmp/gen.err")
	grep -q "conditional jumps whose" "$tmp/ngen.err" && bad "$o: --no-slice still elides"
	# (nothing elided, as at -O0: the two skeletons replay alike)
	for k in e n; do
		[ -z "$n" ] && [ $k = n ] && continue
		if ./skel check "$tmp/$k.c" -- "$app" $len >/dev/null 2>"$tmp/err"; then
			echo "elide $o $k: $(grep '^check:' "$tmp/err")"
		else
			bad "$o $k: $(tail -4 "$tmp/err")"
		fi
	done
	[ $o = O0 ] && continue
	[ "${n:-0}" -ge 2 ] || bad "$o: expected 2 elided jumps or more, skel gen says '${n:-none}'"
	set -- $(counts "$tmp/e.c") $(counts "$tmp/n.c")
	if [ $# -ne 4 ] || [ "$2" -ne "$4" ] || [ $(($3 - $1)) -lt $len ]; then
		bad "$o: $1 words for $2 accesses elided, $3 for $4 kept: want the same accesses and $len words fewer or more"
	else
		echo "elide $o: $1 words elided, $3 kept, for $2 accesses"
	fi
	# kept(): the jump around the histogram's store is replayed (its
	# outcome read alone, or with the byte it tests: tests/tbyte.sh)
	a=$(nm "$app" | sed -n 's/^0*\([0-9a-f]*\) T kept$/\1/p')
	sed -n "/^\/\* kept at 0x$a:/,/^}/p" "$tmp/e.c" | grep -Eq "if \((BIT\(\)|!?tb[0-9]+)\)" ||
		bad "$o: kept()'s jump around its store is not replayed"
	# instruction fetches: a replay of the elided skeleton says those
	# between the jumps and their meeting points are missing; skel trace
	# makes its skeleton with every jump (no note, more fetches)
	./skel record "$tmp/e.c" -o "$tmp/v" -- "$app" $len >/dev/null 2>&1
	./skel replay "$tmp/e.c" "$tmp/v" --format lackey -o "$tmp/le.txt" 2>"$tmp/err"
	grep -q "fetches between $n conditional jumps" "$tmp/err" ||
		bad "$o: the replay with fetches does not name the elided jumps: $(cat "$tmp/err")"
	./skel trace --format lackey -o "$tmp/lt.txt" -- "$app" $len >/dev/null 2>"$tmp/err"
	grep -q "fetches between" "$tmp/err" && bad "$o: skel trace --format lackey elides jumps"
	ie=$(grep -c '^I' "$tmp/le.txt"); it=$(grep -c '^I' "$tmp/lt.txt")
	[ "$it" -gt "$ie" ] || bad "$o: skel trace has $it fetches, the elided replay $ie"
done
[ "$fails" -eq 0 ] && echo "elide: all passed"
[ "$fails" -eq 0 ]
