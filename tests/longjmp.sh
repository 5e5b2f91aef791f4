#!/bin/sh
# Non-local control (issue 13 item 2), -O0 and -O2: setjmp/longjmp
# (tests/longjmp.c: out of a loop nest, between two live setjmp frames,
# into the middle of a recursion, siglongjmp, setjmp set again in a loop)
# and C++ exceptions (tests/except.cc: thrown through frames with
# destructors, rethrown, thrown in libstdc++, a try inside a catch, a
# recursion caught some frames up, pads after libstdc++ throw calls, a
# throw through qsort's comparator, exceptions of std::async threads
# rethrown by future::get).  Each
# must be exact under skel check, with the program's output and status as
# native.  Context switches (swapcontext, setcontext) and
# __builtin_longjmp must stop the replay, loud.
cd "$(dirname "$0")/.." || exit 1
# the executable's scope (skel gen --main-only) unless a case says
# otherwise: whole-process tracing is tests/whole.sh's
export SKEL_SCOPE=main
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"
fails=0
bad() { echo "FAIL: longjmp: $*"; fails=$((fails+1)); }
# one program: NAME SOURCE COMPILER MARK (what its skeleton must hold, or
# the test tests nothing), then its cases
prog() {
	name=$1 src=$2 cc=$3 mark=$4
	shift 4
	for o in O0 O2; do
		b="$tmp/$name-$o"
		$cc -$o -o "$b" "$src" || { bad "cannot build $src -$o"; continue; }
		./skel gen "$b" -o "$b.c" 2>"$tmp/gen.err" || { bad "gen $name -$o: $(cat "$tmp/gen.err")"; continue; }
		grep -q "$mark" "$b.c" || bad "$name -$o: no $mark in the skeleton (the test tests nothing)"
		for c in "$@"; do
			"$b" $c >"$tmp/native.out" 2>&1; nst=$?
			if ./skel check "$b.c" -- "$b" $c >"$tmp/check.out" 2>"$tmp/check.err"; then
				echo "$name -$o $c: $(grep '^check:' "$tmp/check.err")"
			else
				bad "$name -$o $c: $(tail -6 "$tmp/check.err")"
			fi
			./skel run "$b.c" --format count -o /dev/null -- "$b" $c >"$tmp/run.out" 2>"$tmp/run.err"
			rst=$?
			[ $rst -eq $nst ] || bad "$name -$o $c: skel run exited $rst, native $nst: $(tail -3 "$tmp/run.err")"
			cmp -s "$tmp/run.out" "$tmp/native.out" || bad "$name -$o $c: output differs under skel run"
		done
	done
}
prog longjmp tests/longjmp.c "${CC:-gcc}" SK_SETJMP "loop 3" nested recurse sig "again 20"
prog except tests/except.cc "${CXX:-g++}" sk_catch_push "deep 3" "rethrow 4" "lib 6" "nested 3" \
	"recurse 6" "mixed 40" "callback 12" "future 40"
# Context switches (tests/uctx.c: swapcontext coroutines, setcontext to
# a getcontext): not followed, so the replay must stop at the first one,
# say so, and have emitted nothing wrong before it: skel check's first
# difference is the end of skel's trace, not a differing access (-O2
# only: the check of a switch is the same at -O0).
for o in O2; do
	b="$tmp/uctx-$o"
	${CC:-gcc} -$o -o "$b" tests/uctx.c || { bad "cannot build tests/uctx.c -$o"; continue; }
	./skel gen "$b" -o "$b.c" 2>/dev/null || { bad "gen uctx -$o"; continue; }
	for c in swap set; do
		"$b" $c >"$tmp/native.out" 2>&1
		./skel run "$b.c" --format count -o /dev/null -- "$b" $c >"$tmp/run.out" 2>"$tmp/run.err"
		rst=$?
		[ $rst -eq 3 ] || bad "uctx -$o $c: skel run exited $rst, not 3 (replay stopped)"
		grep -q "does not follow context switches" "$tmp/run.err" ||
			bad "uctx -$o $c: skel run did not say it stopped at the switch: $(tail -2 "$tmp/run.err")"
		cmp -s "$tmp/run.out" "$tmp/native.out" || bad "uctx -$o $c: output differs under skel run"
		./skel check "$b.c" -- "$b" $c >/dev/null 2>"$tmp/check.err" &&
			bad "uctx -$o $c: skel check passed a trace that stops at a context switch"
		grep -q "does not follow context switches" "$tmp/check.err" &&
			grep -q "skel     (thread 0's trace has ended)" "$tmp/check.err" ||
			bad "uctx -$o $c: skel check: not a clean stop at the switch: $(grep -A4 MISMATCH "$tmp/check.err")"
		echo "uctx -$o $c: $(grep '^check: [0-9]' "$tmp/check.err")"
	done
done
# __builtin_setjmp/__builtin_longjmp (tests/bjmp.c): an indirect jump
# after rsp is loaded from memory, not followed: skel gen warns, the
# replay stops there and says so (before, "an indirect jump to a target
# the analysis did not find", then, that target noted, desynchronised),
# skel check's first difference is the end of skel's trace (-O0, -O2).
for o in O0 O2; do
	b="$tmp/bjmp-$o"
	${CC:-gcc} -$o -o "$b" tests/bjmp.c || { bad "cannot build tests/bjmp.c -$o"; continue; }
	./skel gen "$b" -o "$b.c" 2>"$tmp/gen.err" || { bad "gen bjmp -$o"; continue; }
	grep -q "^skel: gen: warning: 1 indirect jumps load the stack pointer from memory" "$tmp/gen.err" ||
		bad "bjmp -$o: skel gen did not warn: $(cat "$tmp/gen.err")"
	"$b" >"$tmp/native.out" 2>&1
	./skel run "$b.c" --format count -o /dev/null -- "$b" >"$tmp/run.out" 2>"$tmp/run.err"
	rst=$?
	[ $rst -eq 3 ] || bad "bjmp -$o: skel run exited $rst, not 3 (replay stopped)"
	grep -q "loads the stack pointer from memory first (__builtin_longjmp" "$tmp/run.err" ||
		bad "bjmp -$o: skel run did not say where it stopped: $(tail -2 "$tmp/run.err")"
	cmp -s "$tmp/run.out" "$tmp/native.out" || bad "bjmp -$o: output differs under skel run"
	./skel check "$b.c" -- "$b" >/dev/null 2>"$tmp/check.err" &&
		bad "bjmp -$o: skel check passed a trace that stops at __builtin_longjmp"
	grep -q "skel     (thread 0's trace has ended)" "$tmp/check.err" ||
		bad "bjmp -$o: skel check: not a clean stop: $(grep -A4 MISMATCH "$tmp/check.err")"
	echo "bjmp -$o: $(grep '^check: [0-9]' "$tmp/check.err")"
done
[ $fails -eq 0 ] && echo "longjmp, except: all passed"
[ $fails -eq 0 ]
