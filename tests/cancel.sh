#!/bin/sh
# Signals that come while a thread waits in a system call of libc, the
# whole process traced (tests/cancel.c names the cases): pthread_cancel
# of threads blocked in pause() and read() (glibc installs its SIGCANCEL
# handler through __libc_sigaction, which the recorder replaces so that
# the handler is wrapped as the program's are), cancellation at
# pthread_testcancel, and the program's SIGALRM handler run while main
# sleeps (the recorder's signal path calls no libc: a call into the
# covered libc would store words in the middle of nanosleep's).  Each
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
	# the check of every case in one run (-O0's in make check-full)
	[ $o = O0 ] && [ -z "$SKEL_FULL" ] && continue
	if ./skel check "$tmp/c.c" -- "$app" >/dev/null 2>"$tmp/err"; then
		echo "cancel $o: $(grep '^check:' "$tmp/err" | head -1)"
	else
		bad "$o check: $(grep -v 'not traced' "$tmp/err" | tail -4)"
	fi
done
# asynchronous cancellation of a thread in a loop without exit that
# records nothing (tests/cancel.c spin): the replay cannot know how many
# iterations it made, and must say that they are missing (it ended the
# thread's trace there without a word before)
app=$tmp/cancel-O2
if [ -x "$app" ]; then
	SKEL_SCOPE=main ./skel gen "$app" -o "$tmp/m.c" 2>/dev/null || bad "spin: gen --main-only"
	SKEL_SCOPE=main ./skel record "$tmp/m.c" -o "$tmp/vs" -- "$app" spin >"$tmp/out" 2>"$tmp/err" ||
		bad "spin: record: $(tail -3 "$tmp/err")"
	[ "$(cat "$tmp/out")" = c ] || bad "spin: output $(cat "$tmp/out")"
	./skel replay "$tmp/m.c" "$tmp/vs" --format count >/dev/null 2>"$tmp/err"
	grep -q "thread 1 ended (cancelled, or a handler's exit) in a loop without exit that records nothing" "$tmp/err" ||
		bad "spin: the replay did not say the loop's iterations are missing: $(cat "$tmp/err")"
fi
[ "$fails" -eq 0 ] && echo "cancel: all passed"
[ "$fails" -eq 0 ]
