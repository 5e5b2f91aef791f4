#!/bin/sh
# A jump table in read-only data: the skeleton reads the destination from
# the table at the address the table's load computes (skel gen:
# classify_tables, emit_table_target), and the recorder records no word
# for the jump; a table in writable data keeps its destination recorded
# (tests/jtread.S).  Each loop runs 64 iterations (58 through the table):
# an outcome per iteration and the byte loaded, and before, a destination
# per jump too (180 values; the read-only table's loops now 122).  PIE
# (relative entries, jmp reg) and non-PIE (an absolute table, jmp [mem];
# an entry spilled to the stack and reloaded before the jump stays
# recorded: the previous skel gen read it from the stack address and
# stopped the replay there); executable scope, under skel check.
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"
fails=0
bad() { echo "FAIL: jtread: $*"; fails=$((fails+1)); }
${CC:-gcc} -o "$tmp/pie" tests/jtread.S &&
	${CC:-gcc} -no-pie -DNOPIE -o "$tmp/nopie" tests/jtread.S ||
	{ echo "FAIL: jtread: cannot build tests/jtread.S"; exit 1; }
for b in pie nopie; do
	want=1; [ $b = nopie ] && want=2
	./skel gen --main-only "$tmp/$b" -o "$tmp/$b.c" 2>"$tmp/gen.err" ||
		bad "$b: skel gen: $(cat "$tmp/gen.err")"
	grep -q "^skel: gen: $want jump tables' destinations are read by the skeleton" "$tmp/gen.err" ||
		bad "$b: not $want tables read: $(cat "$tmp/gen.err")"
	./skel record "$tmp/$b.c" -o "$tmp/v" -- "$tmp/$b" 2>"$tmp/rec.err" ||
		bad "$b: skel record: $(tail -3 "$tmp/rec.err")"
	./skel replay "$tmp/$b.c" "$tmp/v" --format count --stats >/dev/null 2>"$tmp/stats" ||
		bad "$b: skel replay: $(tail -3 "$tmp/stats")"
	# the loops' values, in address order: ro_loop, rw_loop (abs_loop,
	# spill_loop): read, recorded (read, recorded)
	vals=$(sed -n 's/^skel: stats:   loop at 0x[0-9a-f]* (depth 1): .*, \([0-9]*\) values$/\1/p' "$tmp/stats" | tr '\n' ' ')
	set -- $vals
	loops=2; [ $b = nopie ] && loops=4
	if [ $# -ne $loops ]; then
		bad "$b: not $loops loops in --stats: $(cat "$tmp/stats")"
	elif [ "$1" -gt 128 ] || [ "$2" -le 128 ] || { [ $# -eq 4 ] && { [ "$3" -gt 128 ] || [ "$4" -le 128 ]; }; }; then
		bad "$b: loops' values $vals: more than two a byte where the table is read, or not more where it is recorded"
	fi
	./skel check "$tmp/$b.c" -- "$tmp/$b" >"$tmp/check.out" 2>"$tmp/check.err" ||
		bad "$b: skel check: $(grep -v '^skel: gen' "$tmp/check.err" | tail -5)"
	grep -q "^check: \([0-9]*\) of \1 accesses match" "$tmp/check.err" ||
		bad "$b: check: $(grep '^check' "$tmp/check.err")"
	echo "jtread: $b: loops' values $vals; $(grep '^check: [0-9]' "$tmp/check.err")"
done
[ "$fails" -eq 0 ] && echo "jtread: ok"
[ "$fails" -eq 0 ]
