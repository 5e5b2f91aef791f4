#!/bin/sh
# Program functions run on threads that libc starts itself, which the
# interposed pthread_create never sees (tests/notify.c): a SIGEV_THREAD
# timer and an mq_notify callback are wrapped by the recorder and must be
# exact against lackey with the executable's skeleton; an aio
# notification is not wrapped, and its replay must say that accesses are
# missing (status 3), never exit 0, also when a pthread_create follows.
# With the whole process (libc's
# module from build/test-cache, as tests/whole.sh), the timer's threads
# run libc's start-up code with every signal blocked before the callback:
# the recording must neither kill the program (a guard fault or an int3
# site there is fatal) nor be replayed as complete.
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d /tmp/skel-notify-XXXXXX)
trap '[ -n "$KEEP" ] || rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: notify: $*"; fails=$((fails+1)); }
app=$tmp/notify
${CC:-gcc} -O2 -o "$app" tests/notify.c || { echo "FAIL: notify: cannot build tests/notify.c"; exit 1; }
XDG_CACHE_HOME="$tmp/cache" ./skel gen --main-only "$app" -o "$tmp/m.c" 2>"$tmp/err" ||
	{ echo "FAIL: notify: gen: $(cat "$tmp/err")"; exit 1; }
for c in timer mq; do
	if ./skel check "$tmp/m.c" -- "$app" $c >/dev/null 2>"$tmp/err"; then
		echo "notify $c: $(grep '^check: .* match' "$tmp/err")"
	else
		bad "$c check: $(tail -4 "$tmp/err")"
	fi
done
# recorded as natively: status 0 and the native output
record() { # what skel values case output
	./skel record "$2" -o "$3" -- "$app" "$4" >"$tmp/out" 2>"$tmp/err" ||
		bad "$1 record: status $?: $(tail -3 "$tmp/err")"
	[ "$(cat "$tmp/out")" = "$5" ] || bad "$1 record: output '$(cat "$tmp/out")'"
}
# aio: the replay names what is missing; also when a thread started by
# pthread_create afterwards used the page the callback's words went to
for c in aio aiothen; do
	record $c "$tmp/m.c" "$tmp/v" $c "aio 1"
	./skel replay "$tmp/m.c" "$tmp/v" --format count >/dev/null 2>"$tmp/err"; st=$?
	if [ $st -eq 3 ] && grep -q 'INCOMPLETE: a thread the recorder did not see start' "$tmp/err"; then
		echo "notify $c: the replay says the callback's accesses are missing (status 3)"
	else
		bad "$c replay: status $st, not 3 with INCOMPLETE: $(cat "$tmp/err")"
	fi
done
# the whole process: the timer's threads in libc
export XDG_CACHE_HOME="$(pwd)/build/test-cache"
./skel gen "$app" -o "$tmp/w.c" 2>"$tmp/err" || { bad "whole gen: $(tail -3 "$tmp/err")"; }
if [ -s "$tmp/w.c" ]; then
	record "whole timer" "$tmp/w.c" "$tmp/wv" timer "timer fired"
	./skel replay "$tmp/w.c" "$tmp/wv" --format count >/dev/null 2>"$tmp/err"; st=$?
	if [ $st -ne 0 ] && grep -q 'INCOMPLETE' "$tmp/err"; then
		echo "notify whole timer: recorded, the replay says it is incomplete (status $st)"
	else
		bad "whole timer replay: status $st: $(grep -v 'not traced' "$tmp/err" | tail -3)"
	fi
fi
[ "$fails" -eq 0 ] && echo "notify: all passed"
[ "$fails" -eq 0 ]
