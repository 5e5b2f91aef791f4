#!/bin/sh
# Signals that come while a thread waits in a system call of libc, the
# whole process traced (tests/cancel.c names the cases): pthread_cancel
# of threads blocked in pause() and read() (glibc installs its SIGCANCEL
# handler through __libc_sigaction, which the recorder replaces so that
# the handler is wrapped as the program's are), cancellation at
# pthread_testcancel, and the program's SIGALRM handler run while main
# sleeps (the recorder's signal path calls no libc: a call into the
# covered libc would store words in the middle of nanosleep's), a thread
# that leaves by syscall(SYS_exit) (its stream ends there).  Each
# case recorded and replayed whole at -O2 and -O0, and exact against
# lackey at -O2 (-O0 too under make check-full).  The -O0 executable is
# recorded first with libc's plan already cached (the loader then is the
# only late object planned: a stale pending write once crashed it).
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# libc's and the loader's modules, made once into build/test-cache as
# for tests/e2e.sh and tests/whole.sh (written under a temporary name)
export XDG_CACHE_HOME="$(pwd)/build/test-cache"
fails=0
bad() { echo "FAIL: cancel: $*"; fails=$((fails+1)); }
for o in O2 O0; do
	app=$tmp/cancel-$o
	${CC:-gcc} -$o -o "$app" tests/cancel.c -lpthread || { bad "cannot build tests/cancel.c -$o"; continue; }
	./skel gen "$app" -o "$tmp/c.c" 2>"$tmp/err" || { bad "$o gen: $(tail -3 "$tmp/err")"; continue; }
	# natively: recorded (exit status and output as without skel), replayed whole
	./skel record "$tmp/c.c" -o "$tmp/v" -- "$app" >"$tmp/out" 2>"$tmp/err" ||
		bad "$o record: status $?: $(tail -3 "$tmp/err")"
	[ "$(head -3 "$tmp/out")" = "$(printf 'ccc\ncc\ncc')" ] || bad "$o record: output $(cat "$tmp/out")"
	./skel replay "$tmp/c.c" "$tmp/v" --format count >/dev/null 2>"$tmp/err" ||
		bad "$o replay: $(grep -v 'not traced' "$tmp/err" | head -3)"
	# rawexit's thread ended its stream where it called syscall(SYS_exit)
	grep -q "still running when the process exited" "$tmp/err" &&
		bad "$o replay: a thread still running at the exit: $(grep 'still running' "$tmp/err")"
	# the check of every case in one run (-O0's in make check-full)
	[ $o = O0 ] && [ -z "$SKEL_FULL" ] && continue
	if ./skel check "$tmp/c.c" -- "$app" >/dev/null 2>"$tmp/err"; then
		echo "cancel $o: $(grep '^check:' "$tmp/err" | head -1)"
	else
		bad "$o check: $(grep -v 'not traced' "$tmp/err" | tail -4)"
	fi
done
# asynchronous cancellation of a thread in a loop without exit that
# records nothing (tests/cancel.c spin): the loop has a tick at its header
# (skelgen.c, plan_ticks), where the held cancellation runs: exact under
# skel check.  Natively the replay is quiet, or (the thread killed between
# two ticks) says that what it did after the last one is not in the trace;
# before the tick it ended the thread's trace at the loop, and said that
# the iterations were missing.
app=$tmp/cancel-O2
if [ -x "$app" ]; then
	SKEL_SCOPE=main ./skel gen "$app" -o "$tmp/m.c" 2>/dev/null || bad "spin: gen --main-only"
	SKEL_SCOPE=main ./skel record "$tmp/m.c" -o "$tmp/vs" -- "$app" spin >"$tmp/out" 2>"$tmp/err" ||
		bad "spin: record: $(tail -3 "$tmp/err")"
	[ "$(cat "$tmp/out")" = c ] || bad "spin: output $(cat "$tmp/out")"
	./skel replay "$tmp/m.c" "$tmp/vs" --format count >/dev/null 2>"$tmp/err" ||
		bad "spin: replay: $(tail -3 "$tmp/err")"
	grep -v "thread 1 ended (cancelled, or a handler's exit) in a loop without exit, at its iteration's start" \
		"$tmp/err" >"$tmp/said" && bad "spin: the replay said: $(head -3 "$tmp/said")"
	if ./skel check --main-only -- "$app" spin >"$tmp/out" 2>"$tmp/err"; then
		echo "cancel spin: $(grep '^check:' "$tmp/err" | head -1)"
	else
		bad "spin check: $(grep -v 'not traced' "$tmp/err" | tail -4)"
	fi
fi
[ "$fails" -eq 0 ] && echo "cancel: all passed"
[ "$fails" -eq 0 ]
