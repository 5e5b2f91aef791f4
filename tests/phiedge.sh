#!/bin/sh
# A φ known on some ways into its block and not on others (tests/
# phiedge.s: the scan pointer, known at the loop's entry and on its
# step, loaded at each jump): recorded at the end of the ways that do not
# know it (plan_phi_edges), not at the loop header every iteration.  The
# loop makes two branch outcomes per character; before, a third word per
# character came with them (115 values for its 41 accesses, now 78).
# Executable scope, under skel check.
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"
fails=0
bad() { echo "FAIL: phiedge: $*"; fails=$((fails+1)); }
${CC:-gcc} -o "$tmp/phiedge" tests/phiedge.s ||
	{ echo "FAIL: phiedge: cannot build tests/phiedge.s"; exit 1; }
./skel gen --main-only "$tmp/phiedge" -o "$tmp/p.c" 2>"$tmp/gen.err" ||
	bad "skel gen: $(cat "$tmp/gen.err")"
grep -q '^skel: gen: 1 values are recorded on the ways into a join' "$tmp/gen.err" ||
	bad "the loaded pointer is not recorded on its way: $(cat "$tmp/gen.err")"
./skel record "$tmp/p.c" -o "$tmp/v" -- "$tmp/phiedge" 2>"$tmp/rec.err" ||
	bad "skel record: $(tail -3 "$tmp/rec.err")"
./skel replay "$tmp/p.c" "$tmp/v" --format count --stats >/dev/null 2>"$tmp/stats" ||
	bad "skel replay: $(tail -3 "$tmp/stats")"
# the loop's line: "N accesses, ..., V values"; at most the two outcomes
# of each character's iteration, two words per access
set -- $(sed -n 's/^skel: stats:   loop at 0x[0-9a-f]* (depth 1): \([0-9]*\) accesses, .*, \([0-9]*\) values$/\1 \2/p' "$tmp/stats")
if [ $# -ne 2 ]; then
	bad "no loop line in --stats: $(cat "$tmp/stats")"
elif [ "$2" -gt $(( 2 * $1 )) ]; then
	bad "the loop records $2 values for its $1 accesses (a word per iteration more than its outcomes)"
fi
./skel check "$tmp/p.c" -- "$tmp/phiedge" >"$tmp/check.out" 2>"$tmp/check.err" ||
	bad "skel check: $(grep -v '^skel: gen' "$tmp/check.err" | tail -5)"
grep -q "^check: \([0-9]*\) of \1 accesses match" "$tmp/check.err" ||
	bad "check: $(grep '^check' "$tmp/check.err")"
echo "phiedge: loop: $1 accesses, $2 values; $(grep '^check: [0-9]' "$tmp/check.err")"
[ "$fails" -eq 0 ] && echo "phiedge: ok"
[ "$fails" -eq 0 ]
