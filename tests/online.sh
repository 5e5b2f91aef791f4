#!/bin/sh
# skel run / skel trace (online replay) and the trace formats:
#  - skel run gives byte for byte the text trace of skel record + skel replay,
#    for every sample at -O2-pie (both under setarch -R, with value-file
#    paths of the same length as skel run's FIFO: the environment, hence the
#    stack addresses, must be the same in both runs);
#  - every format (bin, lackey, din, csv) converts back to the text trace;
#  - a program SIGKILLed under skel run: "killed by signal 9", status 137,
#    the trace of what it did;
#  - a program reading stdin works, its output and exit status pass through;
#  - skel trace generates and caches the skeleton.
# Small sizes only; everything goes to a private directory in /tmp (disk).
cd "$(dirname "$0")/.." || exit 1
# the executable's scope (skel gen --main-only) unless a case says
# otherwise: whole-process tracing is tests/whole.sh's
export SKEL_SCOPE=main
skel=./skel
# skel run's FIFO in /tmp too, whatever TMPDIR make check chose (its path
# length is in the environment, so in the stack addresses)
export TMPDIR=/tmp
[ -x "$skel" ] && [ -f build/libskelrec.so ] || make -s all >/dev/null || exit 1
fails=0
tmp=$(mktemp -d /tmp/skel-online-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
bad() { echo "FAIL: $*"; fails=$((fails+1)); }
norand() { setarch "$(uname -m)" -R "$@"; }

# --- 1. online == offline, every sample at -O2-pie
# One recorded and one online run of APP; 0 when their traces are the same.
# A multi-threaded program may schedule differently from run to run (thread
# stacks reused or not): it gets three tries.
pair() { # app skel
	# same length as /tmp/skel-run-XXXXXX/values
	d=$(mktemp -d /tmp/skel-ofl-XXXXXX)
	norand "$skel" record "$2" -o "$d/values" -- "$1" >"$tmp/out.off" 2>"$tmp/err" ||
		bad "record $1: $(head -3 "$tmp/err")"
	"$skel" replay "$2" "$d/values" -o "$tmp/off.txt" 2>"$tmp/err" ||
		bad "replay $1: $(head -3 "$tmp/err")"
	mv "$d/values" "$tmp/$(basename "$1").vals"
	rmdir "$d"
	norand "$skel" run "$2" -o "$tmp/on.txt" -- "$1" >"$tmp/out.on" 2>"$tmp/err" ||
		bad "run $1 exited $?: $(head -3 "$tmp/err")"
	[ -s "$tmp/on.txt" ] || bad "run $1: empty trace"
	cmp -s "$tmp/out.off" "$tmp/out.on" || bad "run $1: program output differs"
	cmp -s "$tmp/off.txt" "$tmp/on.txt" && return 0
	# several threads: which thread gets which stack, and the numbering,
	# follow the scheduler; the main thread's trace must be the same and
	# the other threads' must have the same lengths
	[ "$(grep -c '^# thread' "$tmp/off.txt")" -gt 1 ] || return 1
	for f in off on; do
		awk '/^# thread/ { n++; next } n == 1' "$tmp/$f.txt" >"$tmp/$f.main"
		awk '/^# thread/ { if (c) print c; n++; c = 0; next } n > 1 { c++ } END { if (c) print c }' \
			"$tmp/$f.txt" | sort -n >"$tmp/$f.lens"
	done
	cmp -s "$tmp/off.main" "$tmp/on.main" && cmp -s "$tmp/off.lens" "$tmp/on.lens"
}
n=0
for app in build/samples/*-O2-pie; do
	name=$(basename "$app")
	s="$tmp/$name.c"
	"$skel" gen "$app" -o "$s" 2>/dev/null || { bad "gen $name"; continue; }
	pair "$app" "$s" || pair "$app" "$s" || pair "$app" "$s" ||
		bad "run $name: trace differs from record + replay: $(diff "$tmp/off.txt" "$tmp/on.txt" | head -3)"
	rm -f "$tmp/off.txt" "$tmp/on.txt"
	n=$((n+1))
done
echo "online: $n samples, skel run == record + replay"

# --- 2. formats round-trip (to "PC K SIZE ADDR", hex; din: "K ADDR")
cat >"$tmp/binread.c" <<'EOF'
#include <stdio.h>
#include <stdint.h>
#include <string.h>
int main(void)
{
	unsigned char r[32];
	while (fread(r, 1, 32, stdin) == 32) {
		uint64_t pc, addr;
		uint32_t size, thread;
		memcpy(&pc, r, 8);
		memcpy(&addr, r + 8, 8);
		memcpy(&size, r + 16, 4);
		memcpy(&thread, r + 24, 4);
		printf("%u %llx %c %x %llx\n", thread, (unsigned long long)pc,
		       r[20] ? 'W' : 'R', size, (unsigned long long)addr);
	}
	return 0;
}
EOF
cc -O2 -o "$tmp/binread" "$tmp/binread.c" || bad "cannot build the bin reader"
for name in matmul-O2-pie threads-O2-pie strings-O2-pie; do
	s="$tmp/$name.c"; v="$tmp/$name.vals"
	for f in text bin lackey din csv; do
		"$skel" replay "$s" "$v" --format $f -o "$tmp/t.$f" 2>"$tmp/err" ||
			bad "replay --format $f $name: $(head -3 "$tmp/err")"
	done
	# text with the thread of each access, from the headers
	awk '/^# thread/ { t = $3; next } { print t, $1, $2, $3, $4 }' "$tmp/t.text" >"$tmp/ref"
	"$tmp/binread" <"$tmp/t.bin" >"$tmp/got"
	cmp -s "$tmp/ref" "$tmp/got" || bad "bin $name: $(diff "$tmp/ref" "$tmp/got" | head -3)"
	awk -F, 'NR == 1 { if ($0 != "thread,pc,kind,size,addr") print "bad header"; next }
		{ sub(/^0x/, "", $2); sub(/^0x/, "", $5); printf "%s %s %s %x %s\n", $1, $2, $3, $4, $5 }' \
		"$tmp/t.csv" >"$tmp/got"
	cmp -s "$tmp/ref" "$tmp/got" || bad "csv $name: $(diff "$tmp/ref" "$tmp/got" | head -3)"
	awk '{ print $3, $4, $5 }' "$tmp/ref" >"$tmp/ref3"
	awk '{ split($2, a, ","); x = a[1]; sub(/^0+/, "", x); if (x == "") x = "0"
		if ($1 == "L" || $1 == "M") printf "R %x %s\n", a[2], x
		if ($1 == "S" || $1 == "M") printf "W %x %s\n", a[2], x }' "$tmp/t.lackey" >"$tmp/got"
	cmp -s "$tmp/ref3" "$tmp/got" || bad "lackey $name: $(diff "$tmp/ref3" "$tmp/got" | head -3)"
	grep -q '^ M ' "$tmp/t.lackey" || [ "$name" != matmul-O2-pie ] || true
	awk '{ print ($1 == "W" ? 1 : 0), $3 }' "$tmp/ref3" >"$tmp/ref2"
	cmp -s "$tmp/ref2" "$tmp/t.din" || bad "din $name: $(diff "$tmp/ref2" "$tmp/t.din" | head -3)"
	# count and --stats agree with the text
	acc=$(wc -l <"$tmp/ref")
	"$skel" replay "$s" "$v" --format count --stats >"$tmp/cnt" 2>"$tmp/stats"
	grep -q "^total: $acc accesses" "$tmp/cnt" || bad "count $name: $(tail -1 "$tmp/cnt") vs $acc"
	grep -q "stats: total: $acc accesses, .* cache lines, .* pages" "$tmp/stats" ||
		bad "stats $name: $(tail -1 "$tmp/stats")"
	# every access belongs to exactly one routine
	rsum=$(awk '/stats: routine / { s += $(NF - 14) } END { print s + 0 }' "$tmp/stats")
	[ "$rsum" = "$acc" ] || bad "stats $name: routines add up to $rsum accesses, not $acc"
	rm -f "$tmp"/t.* "$tmp/ref"* "$tmp/got"
done
# per-loop stats: matmul's k loop (depth 3) reads a[i][k] and b[k][j], 8
# bytes each, n^3 times, and writes nothing; the j loop around it adds the
# n^2 stores of c[i][j]
app=build/samples/matmul-O2-pie
"$skel" gen $app -o "$tmp/mm.c" 2>/dev/null
"$skel" run "$tmp/mm.c" --format count --stats -- $app 20 >/dev/null 2>"$tmp/stats" || bad "run --stats matmul"
grep -q "loop at 0x[0-9a-f]* (depth 3): 16000 accesses, 128000 bytes read, 0 bytes written" "$tmp/stats" ||
	bad "stats matmul 20: depth-3 loop: $(grep 'depth 3' "$tmp/stats")"
grep -q "loop at 0x[0-9a-f]* (depth 2): 16400 accesses, 128000 bytes read, 3200 bytes written" "$tmp/stats" ||
	bad "stats matmul 20: depth-2 loop: $(grep 'depth 2' "$tmp/stats")"
grep -q "stats: online: queue peak" "$tmp/stats" || bad "run --stats: no online line"
# offline replay shows a progress line when stderr is a terminal (script(1)
# gives it one; the delay is cut for the test), and only then
"$skel" record "$tmp/mm.c" -o "$tmp/mm.vals" -- $app 300 >/dev/null 2>&1 || bad "record matmul 300"
SKEL_PROGRESS_DELAY_MS=0 script -qec "$skel replay $tmp/mm.c $tmp/mm.vals --format count" /dev/null \
	>"$tmp/tty" 2>&1 || bad "replay under script(1): $(tail -2 "$tmp/tty")"
tr '\r' '\n' <"$tmp/tty" | grep -q "skel: replay: thread 0: .*% of its [0-9]* words, [0-9]* accesses" ||
	bad "no progress line on a terminal: $(tr '\r' '\n' <"$tmp/tty" | head -3)"
grep -q "^total: [0-9]* accesses" "$tmp/tty" || bad "replay under script(1): no total line"
SKEL_PROGRESS_DELAY_MS=0 "$skel" replay "$tmp/mm.c" "$tmp/mm.vals" --format count >/dev/null 2>"$tmp/err"
grep -q "% of its" "$tmp/err" && bad "progress line written to a non-terminal"
rm -f "$tmp/mm.vals"
# --- 3. SIGKILL under skel run
app=build/samples/list-O2-pie
"$skel" gen $app -o "$tmp/list.c" 2>/dev/null
"$skel" run "$tmp/list.c" --format count -o "$tmp/kill.cnt" -- $app 2000000 >/dev/null 2>"$tmp/err" &
p=$!
sleep 0.5
kid=$(pgrep -P $p -x list-O2-pie)
[ -n "$kid" ] && kill -KILL $kid
wait $p
rc=$?
[ -n "$kid" ] || bad "kill: the program was not running after 0.5 s (or already done)"
[ $rc -eq 137 ] || bad "kill: status $rc, expected 137"
grep -q "killed by signal 9" "$tmp/err" || bad "kill: no 'killed by signal 9': $(cat "$tmp/err")"
grep -qi "desynchron\|sanitizer" "$tmp/err" && bad "kill: $(cat "$tmp/err")"
a=$(sed -n 's/^total: \([0-9]*\) accesses.*/\1/p' "$tmp/kill.cnt")
[ "${a:-0}" -gt 0 ] || bad "kill: no trace prefix ($(cat "$tmp/kill.cnt"))"
echo "online: killed run: ${a:-0} accesses traced"

# --- 4. stdin, stdout and exit status pass through
cat >"$tmp/sum.c" <<'EOF'
#include <stdio.h>
static long v[1000];
int main(int argc, char **argv)
{
	long x, n = 0, s = 0;
	while (n < 1000 && scanf("%ld", &x) == 1)
		v[n++] = x;
	for (long i = 0; i < n; i++)
		s += v[i] * (i + 1);
	if (argc < 2)
		printf("sum %ld\n", s);
	return s == 140 ? 3 : 1;
}
EOF
cc -O2 -o "$tmp/sum" "$tmp/sum.c" || bad "cannot build sum"
"$skel" gen "$tmp/sum" -o "$tmp/sum.skel.c" 2>/dev/null || bad "gen sum"
out=$(printf '10 20 30\n' | "$skel" run "$tmp/sum.skel.c" -o "$tmp/sum.txt" -- "$tmp/sum" 2>"$tmp/err")
rc=$?
[ "$out" = "sum 140" ] || bad "stdin: output '$out'"
[ $rc -eq 3 ] || bad "stdin: status $rc, expected 3 ($(cat "$tmp/err"))"
[ -s "$tmp/err" ] && bad "stdin: stderr: $(cat "$tmp/err")"
grep -q '^# thread 0' "$tmp/sum.txt" || bad "stdin: no trace"

# online output in a non-text format, to stdout, is the offline one too
# (sum with an argument prints nothing: stdout is the trace alone)
d=$(mktemp -d /tmp/skel-ofl-XXXXXX)
echo 1 2 3 | norand "$skel" record "$tmp/sum.skel.c" -o "$d/values" -- "$tmp/sum" q >/dev/null 2>&1
"$skel" replay "$tmp/sum.skel.c" "$d/values" --format csv -o "$tmp/off.csv" 2>/dev/null
rm -rf "$d"
echo 1 2 3 | norand "$skel" run "$tmp/sum.skel.c" --format csv -o - -- "$tmp/sum" q >"$tmp/on.csv" 2>/dev/null
cmp -s "$tmp/off.csv" "$tmp/on.csv" ||
	bad "run --format csv -o - differs from replay: $(diff "$tmp/off.csv" "$tmp/on.csv" | head -3)"
[ "$(wc -l <"$tmp/on.csv")" -gt 10 ] || bad "run --format csv -o -: $(head -3 "$tmp/on.csv")"
rm -f "$tmp/off.csv" "$tmp/on.csv"

# --- 5. skel trace: generated once, cached by identity
XDG_CACHE_HOME="$tmp/cache" "$skel" trace --format count -- build/samples/matmul-O2-pie >"$tmp/c1" 2>"$tmp/err" ||
	bad "trace: $(cat "$tmp/err")"
ls "$tmp"/cache/skel/*.c >/dev/null 2>&1 || bad "trace: no cached skeleton"
XDG_CACHE_HOME="$tmp/cache" "$skel" trace --format count -- build/samples/matmul-O2-pie >"$tmp/c2" 2>"$tmp/err"
grep -q generated "$tmp/err" && bad "trace: skeleton generated again"
cmp -s "$tmp/c1" "$tmp/c2" || bad "trace: counts differ"
grep -q '^total: ' "$tmp/c1" || bad "trace: no count"

# --- usage errors
"$skel" replay "$tmp/sum.skel.c" x --format nope >/dev/null 2>&1
[ $? -eq 2 ] || bad "replay --format nope: status not 2"
"$skel" run "$tmp/sum.skel.c" >/dev/null 2>&1
[ $? -eq 2 ] || bad "run without APP: status not 2"

[ $fails -eq 0 ] && echo "online: all passed"
[ $fails -eq 0 ]
