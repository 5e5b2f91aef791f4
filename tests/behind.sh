#!/bin/sh
# Full buffers written behind the program by the recorder's flusher thread
# (docs/formats.md, "Writing behind the program"), tests/behind.c at -O2:
# each case is recorded twice under setarch -R, with the flusher
# (SKEL_ASYNC=1) and with each thread writing its own buffers
# (SKEL_ASYNC=0, the path skel check's valgrind runs compare with lackey),
# and the two replays must give the same trace: the same accesses in the
# same order per thread, for the program, a forked child, threads, an
# exec, a crash, and heap events (whose --symbolize objects must be the
# same too).  The flusher must have had buffers handed to it (the
# recorder's STATS), and output and exit status must be the native ones.
cd "$(dirname "$0")/.." || exit 1
export SKEL_SCOPE=main
tmp=$(mktemp -d /tmp/skel-behind-XXXXXX)
trap '[ -n "$KEEP" ] || rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"
fails=0
bad() { echo "FAIL: behind: $*"; fails=$((fails+1)); }
norand() { setarch "$(uname -m)" -R "$@"; }
b="$tmp/behind"
${CC:-gcc} -O2 -pthread -o "$b" tests/behind.c || { echo "FAIL: behind: cannot build tests/behind.c"; exit 1; }
./skel gen "$b" -o "$b.c" 2>"$tmp/gen.err" || { echo "FAIL: behind: gen: $(cat "$tmp/gen.err")"; exit 1; }

# Per-thread comparison: the main thread's lines the same, the other
# threads' lengths the same (which thread is numbered first, and which
# stack each gets among the recorder's own mappings, follow the
# scheduler, with or without the flusher).
same_threads() { # a.txt b.txt
	for f in "$1" "$2"; do
		awk '/^# thread/ { n++; next } n == 1' "$f" >"$f.main"
		awk '/^# thread/ { if (c) print c; n++; c = 0; next } n > 1 { c++ } END { if (c) print c }' \
			"$f" | sort -n >"$f.lens"
	done
	cmp -s "$1.main" "$2.main" && cmp -s "$1.lens" "$2.lens"
}

for c in plain fork threads exec crash quick heap; do
	"$b" $c >"$tmp/native.out" 2>/dev/null; nst=$?
	for m in 1 0; do
		d="$tmp/m$m"
		rm -rf "$d"; mkdir "$d"
		SKEL_ASYNC=$m SKEL_VERBOSE=1 norand ./skel record "$b.c" -o "$d/v" -- "$b" $c \
			>"$d/out" 2>"$d/err"; st=$?
		[ $st -eq $nst ] || bad "$c, SKEL_ASYNC=$m: skel record exited $st, native $nst: $(grep -v '^skel-rec' "$d/err" | head -3)"
		cmp -s "$d/out" "$tmp/native.out" || bad "$c, SKEL_ASYNC=$m: output differs from native"
		./skel replay "$b.c" "$d/v" -o "$d/t.txt" 2>"$d/rep.err"
		echo $? >"$d/rep.st"
		[ $c = heap ] && ./skel replay "$b.c" "$d/v" --format csv --symbolize \
			-o "$d/sym.csv" 2>>"$d/rep.err"
		for cf in "$d"/v.[0-9]*; do
			[ -f "$cf" ] || continue
			pid=${cf##*.}
			./skel replay "$b.c" "$d/v" --pid "$pid" -o "$d/child.txt" 2>>"$d/rep.err" ||
				bad "$c, SKEL_ASYNC=$m: replay of the child $pid failed: $(tail -2 "$d/rep.err")"
		done
	done
	n=$(sed -n 's/.*STATS [a-z]* .*handed_over=\([0-9]*\).*/\1/p' "$tmp/m1/err" | tail -1)
	[ "${n:-0}" -ge 3 ] || bad "$c: the flusher was handed ${n:-no} buffers (expected 3 or more)"
	n0=$(sed -n 's/.*STATS [a-z]* .*handed_over=\([0-9]*\).*/\1/p' "$tmp/m0/err" | tail -1)
	[ "${n0:-0}" -eq 0 ] || bad "$c: SKEL_ASYNC=0 still handed $n0 buffers to the flusher"
	cmp -s "$tmp/m1/rep.st" "$tmp/m0/rep.st" ||
		bad "$c: replay status $(cat "$tmp/m1/rep.st") with the flusher, $(cat "$tmp/m0/rep.st") without"
	[ -s "$tmp/m1/t.txt" ] || bad "$c: empty trace"
	if [ $c = threads ]; then
		same_threads "$tmp/m1/t.txt" "$tmp/m0/t.txt" ||
			bad "$c: the threads' traces differ with and without the flusher"
		[ "$(grep -c '^# thread' "$tmp/m1/t.txt")" -eq 5 ] || bad "$c: not 5 threads in the trace"
	else
		cmp -s "$tmp/m1/t.txt" "$tmp/m0/t.txt" ||
			bad "$c: traces differ with and without the flusher: $(cmp "$tmp/m1/t.txt" "$tmp/m0/t.txt")"
	fi
	if [ $c = heap ]; then
		# two passes, a write into a fresh block every 16 of 40000
		hn=$(grep -c ',heap#' "$tmp/m1/sym.csv")
		[ "$hn" -eq 5000 ] || bad "heap: $hn accesses in heap blocks, not 5000"
		cmp -s "$tmp/m1/sym.csv" "$tmp/m0/sym.csv" ||
			bad "heap: the objects differ with and without the flusher: $(cmp "$tmp/m1/sym.csv" "$tmp/m0/sym.csv")"
	fi
	if [ $c = fork ]; then
		[ -s "$tmp/m1/child.txt" ] || bad "fork: the child's trace is empty"
		cmp -s "$tmp/m1/child.txt" "$tmp/m0/child.txt" ||
			bad "fork: the child's traces differ with and without the flusher"
	fi
	[ $c = quick ] && { [ "$(cat "$tmp/m1/rep.st")" = 0 ] || bad "quick: replay status $(cat "$tmp/m1/rep.st"): the streams did not end at quick_exit"; }
	lines=$(grep -vc '^#' "$tmp/m1/t.txt")
	echo "behind $c: $lines accesses, ${n:-0} buffers handed to the flusher"
done
# Threads killed by another's exit() in loops without exit that record
# nothing but their ticks (tests/spin.c): the recorder stops each at its
# loop's tick (SK_TICK_AT) before the process ends, and the replays end
# there, instead of running the loops for ever.
${CC:-gcc} -O2 -pthread -o "$tmp/spin" tests/spin.c || bad "cannot build tests/spin.c"
./skel gen "$tmp/spin" -o "$tmp/spin.c" 2>/dev/null || bad "gen spin"
grep -q "SK_TICK_AT" "$tmp/spin.c" || bad "spin: no SK_TICK_AT in the skeleton (the test tests nothing)"
timeout 120 ./skel run "$tmp/spin.c" --format count -o "$tmp/spin.cnt" -- "$tmp/spin" >"$tmp/spin.out" 2>"$tmp/spin.err"
st=$?
[ $st -eq 4 ] || bad "spin: skel run exited $st, not the program's 4 (124: it did not end)"
# each stopped at its loop's tick for the exit: nothing said
! grep -v "skel: run: not traced" "$tmp/spin.err" | grep -q "still running\|loop without exit" ||
	bad "spin: skel run said: $(tail -2 "$tmp/spin.err")"
[ "$(grep -c '^thread' "$tmp/spin.cnt")" -eq 5 ] || bad "spin: not 5 threads replayed"
echo "behind spin: $(grep '^total' "$tmp/spin.cnt")"
# exit() while a thread spins, others wait in read() and pthread_cond_wait
# (tests/exitpark.c): each stopped where its stream ends exactly, the
# whole process exact under skel check (valgrind with --fair-sched: with
# its default lock the spinners kept it and the check never ended)
${CC:-gcc} -O2 -pthread -o "$tmp/exitpark" tests/exitpark.c || bad "cannot build tests/exitpark.c"
if XDG_CACHE_HOME="$(pwd)/build/test-cache" timeout 300 ./skel check --whole-process -- \
	"$tmp/exitpark" >"$tmp/ep.out" 2>"$tmp/ep.err"; then
	echo "behind exitpark: $(grep '^check: [0-9]' "$tmp/ep.err")"
else
	bad "exitpark: skel check: status $?: $(grep -v 'not traced\|not covered' "$tmp/ep.err" | tail -3)"
fi
grep -q "^bye " "$tmp/ep.out" || bad "exitpark: output under skel check: $(cat "$tmp/ep.out")"
# A program that leaves by an exit system call of its own: skel run ends
# (the flusher sees the program's threads gone), with the program's
# status, and says the trace is cut short.
timeout 60 ./skel run "$b.c" --format count -o /dev/null -- "$b" rawexit >/dev/null 2>"$tmp/raw.err"
st=$?
[ $st -eq 5 ] || bad "rawexit: skel run exited $st, not the program's 5"
grep -q "without the recorder's exit path" "$tmp/raw.err" ||
	bad "rawexit: skel run did not say the trace is cut short: $(tail -2 "$tmp/raw.err")"
[ $fails -eq 0 ] && echo "behind: all passed"
exit $((fails > 0))
