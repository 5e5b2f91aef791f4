#!/bin/sh
# Behaviours the skeleton does not model yet are said, never silent
# (tests/events.c): a signal handler replays in place, under skel run
# (status 0, nothing said of the signal) as from a recorded file (skel
# check exact); a fork's child (skel run) and an exec are
# named while the process's own trace stays exact; the program sees its own signal
# dispositions under the recorder.  Output and exit status as native.
cd "$(dirname "$0")/.." || exit 1
# the executable's scope (skel gen --main-only) unless a case says
# otherwise: whole-process tracing is tests/whole.sh's
export SKEL_SCOPE=main
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"
fails=0
bad() { echo "FAIL: events: $*"; fails=$((fails+1)); }
${CC:-gcc} -O2 -o "$tmp/events" tests/events.c || { echo "FAIL: cannot build tests/events.c"; exit 1; }
./skel gen "$tmp/events" -o "$tmp/ev.c" 2>/dev/null || bad "skel gen"
# one case: WHAT, the status skel run must end with, a message it must
# print, the status skel replay of a recorded file must end with (and
# with status 0 it says nothing of the signal)
case1() {
	"$tmp/events" "$1" >"$tmp/native.out" 2>&1; nst=$?
	./skel run "$tmp/ev.c" --format count -o "$tmp/count" -- "$tmp/events" "$1" >"$tmp/run.out" 2>"$tmp/run.err"; rst=$?
	[ $rst -eq "$2" ] || bad "$1: skel run exited $rst, expected $2: $(tail -3 "$tmp/run.err")"
	grep -v '^skel' "$tmp/run.out" | cmp -s - "$tmp/native.out" || bad "$1: output differs: $(cat "$tmp/run.out")"
	[ -z "$3" ] || grep -q "$3" "$tmp/run.err" || bad "$1: no message '$3': $(cat "$tmp/run.err")"
	./skel record "$tmp/ev.c" -o "$tmp/v" -- "$tmp/events" "$1" >"$tmp/rec.out" 2>&1
	[ $? -eq $nst ] || bad "$1: recorded exit status differs from native ($nst)"
	./skel replay "$tmp/ev.c" "$tmp/v" --format count -o "$tmp/count2" 2>"$tmp/rep.err"; pst=$?
	[ $pst -eq "$4" ] || bad "$1: skel replay exited $pst, expected $4: $(tail -3 "$tmp/rep.err")"
	if [ -z "$3" ]; then
		! grep -q "ran a handler" "$tmp/run.err" "$tmp/rep.err" ||
			bad "$1: $(cat "$tmp/run.err" "$tmp/rep.err")"
	else
		[ -z "$3" ] || grep -q "$3" "$tmp/rep.err" || bad "$1: replay: no message '$3': $(cat "$tmp/rep.err")"
	fi
	echo "events $1: status $rst${3:+, said '$3'}, replay $pst"
}
case1 signal 0 "" 0
case1 fork 0 "forked.* process" 0 # skel run: not traced; replay: its file (tests/fork.sh)
case1 exec 0 "replaced itself by exec of /bin/echo" 0
case1 sigaction 0 "" 0
grep -q "readback 1 1" "$tmp/run.out" && grep -q "after reset 1" "$tmp/run.out" && grep -q "replaced 1" "$tmp/run.out" ||
	bad "sigaction: the program did not see its own dispositions: $(cat "$tmp/run.out")"
# the process's own trace stays exact where nothing is left out of it;
# the handlers' accesses are in it where they ran
for w in fork exec signal sigaction; do
	./skel check "$tmp/ev.c" -- "$tmp/events" $w >/dev/null 2>"$tmp/check.err" ||
		bad "$w: skel check: $(tail -4 "$tmp/check.err")"
	echo "events $w: $(grep '^check:' "$tmp/check.err")"
done
# threads still running when the process exits (tests/alive.c): one in a
# loop with a probe is stopped there for the exit, exact, nothing said;
# one in a loop that records nothing cannot be (its trace ends between two
# of its values): replay and run say so (they were silent)
${CC:-gcc} -O2 -pthread -o "$tmp/alive" tests/alive.c || bad "cannot build tests/alive.c"
./skel gen "$tmp/alive" -o "$tmp/al.c" 2>/dev/null || bad "alive: gen failed"
./skel record "$tmp/al.c" -o "$tmp/al.v" -- "$tmp/alive" >/dev/null 2>&1 || bad "alive: record failed"
./skel replay "$tmp/al.c" "$tmp/al.v" --format count -o /dev/null 2>"$tmp/al.err" || bad "alive: replay failed"
! grep -q "still running" "$tmp/al.err" || bad "alive: replay said: $(cat "$tmp/al.err")"
if ./skel check "$tmp/al.c" -- "$tmp/alive" >/dev/null 2>"$tmp/al.err"; then
	echo "events alive: $(grep '^check:' "$tmp/al.err" | head -1)"
else
	bad "alive: skel check: $(grep -v 'not traced' "$tmp/al.err" | tail -3)"
fi
./skel record "$tmp/al.c" -o "$tmp/al.v" -- "$tmp/alive" stuck >/dev/null 2>&1 || bad "alive stuck: record failed"
./skel replay "$tmp/al.c" "$tmp/al.v" --format count -o /dev/null 2>"$tmp/al.err" ||
	bad "alive stuck: replay failed"
grep -q "1 thread (thread 2) still running when the process exited" "$tmp/al.err" ||
	bad "alive stuck: replay did not name the running thread: $(cat "$tmp/al.err")"
./skel run "$tmp/al.c" --format count -o /dev/null -- "$tmp/alive" stuck >/dev/null 2>"$tmp/alr.err" ||
	bad "alive stuck: run failed"
grep -q "^skel: run: 1 thread (thread 2) still running" "$tmp/alr.err" ||
	bad "alive stuck: run did not name the running thread: $(cat "$tmp/alr.err")"
[ $fails -eq 0 ] && echo "events: all passed"
[ $fails -eq 0 ]
