#!/bin/sh
# Small programs that once diverged from valgrind lackey, each exact now:
#   repcmps  repe cmpsb whose count comes from rcx after the instruction
#   btreg    bt* on registers, which valgrind emulates through the stack
#   callmem  call [mem] run in a trampoline: valgrind sees its store first
#   andzero  mov eax, 0; and eax, [mem]: valgrind drops the load (the
#            check must say so, and still compare the same `and` with eax 1)
#   sharedcode a loop two routines share (one set of probes, read by both),
#            and a code address in data that points into an instruction
#   locked   xchg and lock-prefixed read-modify-writes: lackey logs an
#            extra load for each (the check must count it, not compare it)
#   loopcc   loopne and loope whose ZF comes from loaded data: recorded
#            outcomes (the recorder refused to patch them)
#   asmfn    a function with no symbol and no CFI whose address a lea
#            takes, called through a pointer: its accesses were missing
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"
fails=0
for k in repcmps btreg callmem andzero sharedcode locked loopcc asmfn; do
	${CC:-gcc} -O2 -o "$tmp/$k" "tests/$k.c" || { echo "FAIL: cannot build tests/$k.c"; fails=$((fails+1)); continue; }
	if ./skel check -- "$tmp/$k" >/dev/null 2>"$tmp/err"; then
		echo "$k: $(grep '^check:' "$tmp/err")"
		[ $k != andzero ] || grep -q "^check: 150 reads of .and r32, \[mem\]. after .mov r32, 0. are not in lackey" "$tmp/err" ||
			{ echo "FAIL: andzero: the elided reads were not counted"; fails=$((fails+1)); }
		[ $k != locked ] || grep -q "^check: 404 extra reads in lackey's log at locked instructions" "$tmp/err" ||
			{ echo "FAIL: locked: lackey's extra loads were not counted"; fails=$((fails+1)); }
	else
		echo "FAIL: $k: $(tail -4 "$tmp/err")"; fails=$((fails+1))
	fi
done
[ $fails -eq 0 ]
