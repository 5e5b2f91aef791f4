#!/bin/sh
# A byte and the outcome of the jump it decides, one word (skel gen:
# plan_tbytes, the recorder's `treg` probe): tests/tbyte.c's scan_to
# loop loads p[i] (movzx) and leaves when stop[p[i]] is set, memory the
# skeleton does not have.  Before, each iteration recorded the byte and
# the jump's outcome (two words); now one.  Executable scope, non-PIE
# (the trace's pcs are the binary's).  Checked: skel gen says so and
# writes the probe; skel check matches lackey; the loop's values are
# about one an iteration; with a 2 ms timer whose handler writes memory,
# the recorder holds the signal to the jump's probe, after the stop[]
# read, and the replay puts the handler's accesses there, after that
# read, not after the byte's load where it reads the word.
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"
fails=0
bad() { echo "FAIL: tbyte: $*"; fails=$((fails+1)); }
${CC:-gcc} -O2 -no-pie -o "$tmp/tbyte" tests/tbyte.c ||
	{ echo "FAIL: tbyte: cannot build tests/tbyte.c"; exit 1; }
# scan_to's instructions: the byte's load (movzbl) and the table read
# (cmpb) before the jump, by the disassembler
objdump -d --no-show-raw-insn "$tmp/tbyte" |
	awk '/<scan_to>:/ { on = 1; next } on && /^$/ { exit } on' >"$tmp/scan.s"
load=$(awk '/movzbl/ { sub(":", "", $1); print $1; exit }' "$tmp/scan.s")
test=$(awk '/cmpb/ { sub(":", "", $1); print $1; exit }' "$tmp/scan.s")
[ -n "$load" ] && [ -n "$test" ] ||
	{ echo "FAIL: tbyte: scan_to has no movzbl/cmpb: $(cat "$tmp/scan.s")"; exit 1; }
set -- $(nm -S "$tmp/tbyte" | awk '$4 == "on_alarm" { print $1, $2 }')
alarm_lo=$((0x$1)); alarm_hi=$((0x$1 + 0x$2))

./skel gen --main-only "$tmp/tbyte" -o "$tmp/t.c" 2>"$tmp/gen.err" ||
	bad "skel gen: $(cat "$tmp/gen.err")"
grep -q "^skel: gen: [1-9][0-9]* conditional jumps record their outcome in the word of the byte" "$tmp/gen.err" ||
	bad "skel gen does not say a jump's outcome goes with its byte: $(cat "$tmp/gen.err")"
grep -q "^probe [0-9a-f]* [0-9a-f]* [0-9a-f]* before treg rdx fallthru" "$tmp/t.c" ||
	bad "no treg probe at scan_to's jump: $(grep "^probe" "$tmp/t.c" | head -20)"

# exact against lackey
./skel check "$tmp/t.c" -- "$tmp/tbyte" 20000 >"$tmp/check.out" 2>"$tmp/check.err" ||
	bad "skel check: $(grep -v '^skel: gen' "$tmp/check.err" | tail -5)"
grep -q "^check: \([0-9]*\) of \1 accesses match" "$tmp/check.err" ||
	bad "check: $(grep '^check' "$tmp/check.err")"

# one word an iteration (two accesses each): before, one a byte and one
# an outcome, more values than accesses
./skel record "$tmp/t.c" -o "$tmp/v" -- "$tmp/tbyte" 100000 >/dev/null 2>"$tmp/rec.err" ||
	bad "skel record: $(tail -3 "$tmp/rec.err")"
./skel replay "$tmp/t.c" "$tmp/v" --format count --stats >/dev/null 2>"$tmp/stats" ||
	bad "skel replay: $(tail -3 "$tmp/stats")"
set -- $(sed -n 's/^skel: stats:   loop at 0x[0-9a-f]* (depth 1): \([0-9]*\) accesses, .*, \([0-9]*\) values$/\1 \2/p' "$tmp/stats" |
	awk '$1 == 200000')
if [ $# -ne 2 ]; then
	bad "no loop of 200000 accesses (scan_to's) in --stats: $(grep 'loop at' "$tmp/stats")"
elif [ $(($2 * 10)) -ge $(($1 * 6)) ]; then
	bad "scan_to's loop: $2 values for $1 accesses (100000 iterations): not one word an iteration"
fi
echo "tbyte: scan_to's loop: $* (accesses, values); $(grep '^check: [0-9]' "$tmp/check.err")"

# the timer: each handler's accesses come right after a stop[] read
./skel record "$tmp/t.c" -o "$tmp/vt" -- "$tmp/tbyte" 3000 timer >/dev/null 2>"$tmp/rec.err" ||
	bad "skel record (timer): $(tail -3 "$tmp/rec.err")"
./skel replay "$tmp/t.c" "$tmp/vt" -o "$tmp/tr" 2>"$tmp/rep.err" ||
	bad "skel replay (timer): $(tail -3 "$tmp/rep.err")"
awk -v lo="$alarm_lo" -v hi="$alarm_hi" -v load="$load" -v test="$test" '
	function hex(s,  i, n) {
		n = 0
		for (i = 1; i <= length(s); i++)
			n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return n
	}
	/^#/ { next }
	{ pc = hex($1); h = pc >= lo && pc < hi }
	h && !inh { groups++
		    if (prev == load) early++
		    else if (prev == test) after_test++ }
	{ inh = h; if (!h) prev = $1 }
	END { printf "%d %d %d\n", groups, after_test, early }' "$tmp/tr" >"$tmp/groups" 2>"$tmp/awk.err" ||
	bad "reading the trace: $(cat "$tmp/awk.err")"
set -- $(cat "$tmp/groups")
if [ "${1:-0}" -lt 1 ]; then
	bad "no handler in the timer's trace"
elif [ "${3:-0}" -ne 0 ] || [ "${2:-0}" -lt 1 ]; then
	bad "handlers: $1, after the stop[] read $2, right after the byte's load $3 (must be 0)"
fi
echo "tbyte: timer: $1 handlers, $2 of them after scan_to's stop[] read, none after its byte's load"
[ "$fails" -eq 0 ] && echo "tbyte: ok"
[ "$fails" -eq 0 ]
