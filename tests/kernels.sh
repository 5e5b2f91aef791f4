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
#   coldsplit a jump table into gcc's cold part of a stripped function,
#            non-PIE (absolute table: the cold part a routine of its own,
#            tail-called through the table) and PIE (offsets: merged back)
#   loopcc   loopne and loope whose ZF comes from loaded data: recorded
#            outcomes (the recorder refused to patch them)
#   movsptr  movs and cmps at recorded addresses: the recorder numbers
#            their two hidden operands in the other order (perl sort)
#   asmfn    a function with no symbol and no CFI whose address a lea
#            takes, called through a pointer: its accesses were missing
cd "$(dirname "$0")/.." || exit 1
# the executable's scope (skel gen --main-only) unless a case says
# otherwise: whole-process tracing is tests/whole.sh's
export SKEL_SCOPE=main
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"
fails=0
for k in repcmps btreg callmem andzero sharedcode locked loopcc asmfn movsptr; do
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
# movsptr again with every address recorded (--all-accesses), so that the
# movs operands go through the recorder's operand numbering (daddr probes)
${CC:-gcc} -O2 -o "$tmp/movsptr" tests/movsptr.c &&
	./skel gen --all-accesses "$tmp/movsptr" >"$tmp/movsptr_all.c" 2>/dev/null
movs=$(objdump -d "$tmp/movsptr" | sed -n 's/^ *\([0-9a-f]*\):.*\tmovs[bwlq] *%ds:.*/\1/p' | head -1)
if [ -z "$movs" ] || ! grep -q "^probe $movs .* daddr 1 " "$tmp/movsptr_all.c"; then
	echo "FAIL: movsptr --all-accesses: no daddr probe of movs operand 1 at '$movs'"; fails=$((fails+1))
elif ./skel check "$tmp/movsptr_all.c" -- "$tmp/movsptr" >/dev/null 2>"$tmp/err"; then
	echo "movsptr --all-accesses: $(grep '^check:' "$tmp/err")"
else
	echo "FAIL: movsptr --all-accesses: $(tail -4 "$tmp/err")"; fails=$((fails+1))
fi
# coldsplit: the table must reach the start of an FDE (the cold part), or
# the test no longer tests anything
for v in nopie pie; do
	k=coldsplit-$v
	case $v in nopie) fl="-fno-pie -no-pie" ;; pie) fl="-fpie -pie" ;; esac
	${CC:-gcc} -O2 $fl -s -o "$tmp/$k" tests/coldsplit.c || { echo "FAIL: cannot build $k"; fails=$((fails+1)); continue; }
	./skel cfg "$tmp/$k" | sed -n 's/.* succs:\(.* jumptable.*\)/\1/p' >"$tmp/tables"
	hit=
	for a in $(readelf --debug-dump=frames "$tmp/$k" | sed -n 's/.* FDE .*pc=0*\([0-9a-f]*\)\.\..*/0x\1/p'); do
		grep -q " $a\( \|\$\)" "$tmp/tables" && hit=$a
	done
	if [ -z "$hit" ]; then
		echo "FAIL: $k: no jump table reaches a cold part's start (gcc laid it out otherwise)"
		fails=$((fails+1))
	elif ./skel check -- "$tmp/$k" >/dev/null 2>"$tmp/err"; then
		echo "$k: $(grep '^check:' "$tmp/err")"
	else
		echo "FAIL: $k: $(tail -4 "$tmp/err")"; fails=$((fails+1))
	fi
done
[ $fails -eq 0 ]
