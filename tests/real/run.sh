#!/bin/sh
# A corpus of real programs: `skel check` on Debian commands doing real work
# on inputs made here, in a private temporary directory, the same on every
# run.  Per command one line: the accesses valgrind lackey saw in the
# executable, the values the recorder stored per access, the first-run cost
# (skel gen + compiling the skeleton, with an empty cache), the check's wall
# time, and the verdict: exact, or the first differing access, or the error.
# A command is exact only if the check matches access for access and its
# stdout and exit status under the recorder, and its stdout under check,
# equal a native run's.  Ends with "N of M exact" and a list of the failures
# grouped by cause; exit status 0 only if all are exact.
#
# usage: tests/real/run.sh [-j JOBS] [-k] [-l] [-r] [-w] [NAME...]
#   -j JOBS  commands checked at once (default 1: valgrind is heavy)
#   -w       whole process: every shared object of the command traced and
#            checked too (skel gen --whole-process); the modules (libc's
#            first) are made once into a cache all commands share, so the
#            first-run column is the executable's alone after the first;
#            an exact result says the share of accesses outside the
#            executable
#   -r       record and replay only, no valgrind: minutes instead of hours;
#            the verdict is the replay's own (complete or where it stopped)
#   -k       keep the work directory (inputs, per-command logs) and say where
#   -l       list the commands and exit
# SKEL_REAL_TIMEOUT (seconds, default 600) bounds each of gen, compile,
# replay, check.
#
# Every program is named by its full path; everything runs in C locale, UTC.
SELF=$(cd "$(dirname "$0")" && pwd)/run.sh
cd "$(dirname "$0")/../.." || exit 1
SKEL=$(pwd)/skel
export LC_ALL=C TZ=UTC
unset LANG LANGUAGE SKEL_VERBOSE SKEL_KEEP

ALL="cat head tail cut uniq sort tr wc od base64 md5sum sha256sum date ls env
comm join paste fold nl expand seq printf split tac du stat grep sed awk gzip
gunzip bzip2 xz tar diff cmp find sqlite3 make python3 perl bash dash factor
tsort ptx readelf dd"
# By name only (tests/real/run.sh zstd unzstd): valgrind lackey alone takes
# 8 to 10 minutes on each, even on 3 KB (the check's bound is 600 s)
EXTRA="zstd unzstd"

# spec NAME: sets `in` (stdin) and `cmd` (an sh word list, eval'd).  The
# paths are relative to the work directory, which every run has as cwd.
spec() {
	in=/dev/null
	awk=/usr/bin/gawk; [ -x $awk ] || awk=/usr/bin/mawk
	case $1 in
	cat)	cmd='/usr/bin/cat -nA in/text.txt' ;;
	head)	cmd='/usr/bin/head -n 700 in/text.txt' ;;
	tail)	cmd='/usr/bin/tail -n 500 in/text.txt' ;;
	cut)	cmd='/usr/bin/cut -d: -f2,4-5 in/fields.txt' ;;
	uniq)	cmd='/usr/bin/uniq -c in/sorted.txt' ;;
	sort)	cmd='/usr/bin/sort in/big.txt' ;;
	tr)	cmd='/usr/bin/tr a-z A-Z'; in=in/text.txt ;;
	wc)	cmd='/usr/bin/wc in/text.txt in/big.txt' ;;
	od)	cmd='/usr/bin/od -x in/bin.dat' ;;
	base64)	cmd='/usr/bin/base64 in/bin.dat' ;;
	md5sum)	cmd='/usr/bin/md5sum in/bin.dat in/text.txt' ;;
	sha256sum) cmd='/usr/bin/sha256sum in/bin.dat in/text.txt' ;;
	date)	cmd="/usr/bin/date -d '2024-02-29 13:45:10 UTC' '+%Y-%m-%d %H:%M:%S %j %A %s'" ;;
	ls)	cmd='/usr/bin/ls -la in/tree in/tree/src' ;;
	# -i: the output does not depend on the environment valgrind and the
	# recorder add to
	env)	cmd='/usr/bin/env -i B=2 A=1 LONGER_NAME=some_value C=3' ;;
	comm)	cmd='/usr/bin/comm in/words-a.txt in/words-b.txt' ;;
	join)	cmd='/usr/bin/join in/keys-a.txt in/keys-b.txt' ;;
	paste)	cmd='/usr/bin/paste -d, in/words-a.txt in/keys-b.txt' ;;
	fold)	cmd='/usr/bin/fold -w 37 in/long.txt' ;;
	nl)	cmd='/usr/bin/nl -ba in/text.txt' ;;
	expand)	cmd='/usr/bin/expand -t 5 in/tabs.txt' ;;
	seq)	cmd='/usr/bin/seq -w 0 7 20000' ;;
	printf)	cmd="/usr/bin/printf '%5d|%-8s|%x|%.3f\\n' 1 ab 255 3.14159 42 bbb 4096 2.5 -7 c 65535 1e3 100000 dddd 1 0.001" ;;
	split)	cmd='/usr/bin/split --verbose -l 300 in/text.txt out/part-' ;;
	tac)	cmd='/usr/bin/tac in/text.txt' ;;
	du)	cmd='/usr/bin/du -a in/tree' ;;
	# no access times: reading a file may change them between runs
	stat)	cmd="/usr/bin/stat -c '%n %s %b %a %A %F %h %U %Y' in/tree in/tree/src in/tree/src/main.c in/tree/doc/notes.txt in/bin.dat" ;;
	grep)	cmd="/usr/bin/grep -c -E 'lab|dol[a-z]+ (ut|sed)' in/text.txt" ;;
	sed)	cmd="/usr/bin/sed 's/\\([aeiou]\\)m/<\\1>/g' in/text.txt" ;;
	awk)	cmd="$awk '{ n[\$1]++; s += length(\$0) } END { for (k in n) c++; print c, s, NR }' in/text.txt" ;;
	# a third of text.txt: on all of it (5.7 M accesses) lackey alone
	# takes over the 600 s a check may take
	gzip)	cmd='/usr/bin/gzip -c -n -6 in/text-1k.txt' ;;
	gunzip)	cmd='/usr/bin/gzip -dc in/text.gz' ;;
	bzip2)	cmd='/usr/bin/bzip2 -c in/text.txt' ;;
	# preset 0 on a third of text.txt: the default preset's 55.7 M
	# accesses, whole process (most of them setting up its match
	# finder), made a lackey log of over 28 GB in 38 minutes
	xz)	cmd='/usr/bin/xz -0 -c -T1 in/text-1k.txt' ;;
	tar)	cmd='/usr/bin/tar cf - --sort=name --owner=0 --group=0 --numeric-owner -C in tree' ;;
	diff)	cmd='/usr/bin/diff -u in/text.txt in/text2.txt' ;;
	cmp)	cmd='/usr/bin/cmp -l in/bin.dat in/bin2.dat' ;;
	find)	cmd="/usr/bin/find in/tree -name '*.c'" ;;
	sqlite3) cmd="/usr/bin/sqlite3 :memory: 'with recursive c(x) as (select 1 union all select x + 1 from c where x < 2000) select x % 7, count(*), sum(x * x) from c group by 1 order by 1;'" ;;
	make)	cmd='/usr/bin/make -n -f in/Makefile all' ;;
	python3) cmd="/usr/bin/python3 -I -S -c 's = 0
for i in range(3000):
    s += i * i % 7
print(s)'" ;;
	# zstd's bit readers bound their jump tables on the taken side of a
	# jump; its Huffman loops are assembly without CFI, called through a
	# pointer; it sets its SIGSEGV handler with __sysv_signal (-std=c99)
	zstd)	cmd='/usr/bin/zstd -c -3 -T1 in/text-3k.txt' ;;
	unzstd)	cmd='/usr/bin/zstd -dc in/text-3k.zst' ;;
	perl)	cmd="/usr/bin/perl -e 'my %h; for my \$i (1..300) { \$h{\$i % 97} += \$i * \$i } print join(\",\", map { \"\$_=\$h{\$_}\" } sort { \$a <=> \$b } keys %h), \"\\n\"'" ;;
	bash)	cmd="/usr/bin/bash -c 's=0; for ((i=0;i<60;i++)); do s=\$((s+i*i%13)); done; a=(x y z); echo \$s \${a[1]} \${#a[@]}'" ;;
	dash)	cmd="/usr/bin/dash -c 'i=0; s=0; while [ \$i -lt 60 ]; do s=\$((s+i%7)); i=\$((i+1)); done; echo \$s'" ;;
	factor)	cmd='/usr/bin/factor'; in=in/nums.txt ;;
	tsort)	cmd='/usr/bin/tsort in/pairs.txt' ;;
	ptx)	cmd='/usr/bin/ptx in/tree/src/lib/vec.c' ;;
	readelf) cmd='/usr/bin/readelf -hlS -s /usr/bin/true' ;;
	dd)	cmd='/usr/bin/dd if=in/text-1k.txt bs=1000 count=20 conv=ucase,swab status=none' ;;
	*)	return 1 ;;
	esac
}

# ------------------------------------------------------------------ inputs

# Park-Miller's generator: exact in the doubles every awk uses.
gen_text() {	# LINES SEED
	$AWK -v n="$1" -v x="$2" 'BEGIN {
		nw = split("lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua enim ad minim veniam quis nostrud", w, " ")
		for (i = 1; i <= n; i++) {
			x = (x * 16807) % 2147483647; k = 1 + x % 11; line = ""
			for (j = 0; j < k; j++) {
				x = (x * 16807) % 2147483647
				line = line (j ? " " : "") w[1 + x % nw]
			}
			print line
		}
	}'
}

make_inputs() {
	AWK=/usr/bin/mawk; [ -x $AWK ] || AWK=awk
	d=$1/in
	mkdir -p "$d/tree/src/lib" "$d/tree/doc" "$d/tree/empty" "$1/out" || return 1
	gen_text 3000 7 >"$d/text.txt"
	$AWK 'NR % 97 == 0 { print "changed " NR; next } NR % 211 == 0 { next } { print }' \
		"$d/text.txt" >"$d/text2.txt"
	sort "$d/text.txt" >"$d/sorted.txt"
	# sort's input: as large as the check's time allows (lackey is ~1000x slower)
	$AWK 'BEGIN { x = 12345; for (i = 0; i < 5000; i++) {
		x = (x * 16807) % 2147483647; printf "%08x key%d %s\n", x, i % 977, (x % 3 ? "b" : "a") } }' \
		>"$d/big.txt"
	$AWK 'BEGIN { for (i = 0; i < 3000; i += 2) printf "w%05d\n", i }' >"$d/words-a.txt"
	$AWK 'BEGIN { for (i = 0; i < 3000; i += 3) printf "w%05d\n", i }' >"$d/words-b.txt"
	$AWK 'BEGIN { for (i = 0; i < 2000; i += 2) printf "k%05d left%d\n", i, i * 7 }' >"$d/keys-a.txt"
	$AWK 'BEGIN { for (i = 0; i < 2000; i += 5) printf "k%05d right%d x%d\n", i, i % 13, i }' >"$d/keys-b.txt"
	$AWK '{ printf "%d:%s:%d:%s:%s:%d\n", NR, $1, length($0), $2, $NF, NF }' "$d/text.txt" >"$d/fields.txt"
	$AWK '{ gsub(/ /, "\t"); print }' "$d/text.txt" | head -1500 >"$d/tabs.txt"
	$AWK '{ l = l " " $0 } NR % 15 == 0 { print l; l = "" }' "$d/text.txt" >"$d/long.txt"
	# 4 KiB of binary, every byte value, and a copy with 64 bytes changed
	$AWK 'BEGIN { x = 99; for (i = 0; i < 4096; i++) {
		x = (x * 16807) % 2147483647; printf "\\%03o", x % 256 } }' >"$d/bin.esc"
	printf "$(cat "$d/bin.esc")" >"$d/bin.dat"
	$AWK 'BEGIN { x = 99; for (i = 0; i < 4096; i++) {
		x = (x * 16807) % 2147483647; printf "\\%03o", (i % 64 == 5 ? 255 - x % 256 : x % 256) } }' >"$d/bin.esc"
	printf "$(cat "$d/bin.esc")" >"$d/bin2.dat"
	rm -f "$d/bin.esc"
	gzip -c -n "$d/text.txt" >"$d/text.gz"
	head -1000 "$d/text.txt" >"$d/text-1k.txt"
	head -c 3000 "$d/text.txt" >"$d/text-3k.txt"
	zstd -q -c "$d/text-3k.txt" >"$d/text-3k.zst"
	# tsort: 400 edges among 190 names, no cycle (each to a later name)
	$AWK 'BEGIN { x = 5; for (i = 0; i < 400; i++) {
		x = (x * 16807) % 2147483647; a = x % 150; x = (x * 16807) % 2147483647
		printf "n%03d n%03d\n", a, a + 1 + x % 40 } }' >"$d/pairs.txt"
	# factor: 60 numbers below 2^31
	$AWK 'BEGIN { x = 9; for (i = 0; i < 60; i++) {
		x = (x * 16807) % 2147483647; print x } }' >"$d/nums.txt"
	seed=100
	for f in main util parse; do
		seed=$((seed + 101))
		gen_text 40 $seed | $AWK -v f=$f '{ print "/* " $0 " */" } END { print "int " f "(void) { return " NR "; }" }' \
			>"$d/tree/src/$f.c"
		echo "int $f(void);" >"$d/tree/src/$f.h"
	done
	gen_text 25 3 >"$d/tree/src/lib/vec.c"
	gen_text 60 5 >"$d/tree/doc/notes.txt"
	gen_text 200 11 >"$d/tree/doc/manual.txt"
	printf 'tree\n' >"$d/tree/README"
	cat >"$d/Makefile" <<'MK'
CC = cc
CFLAGS = -O2 -Wall
SRC = in/tree/src
OBJS = $(SRC)/main.o $(SRC)/util.o $(SRC)/parse.o $(SRC)/lib/vec.o
LIB = libtree.a
all: prog docs
prog: $(OBJS) $(LIB)
	$(CC) $(CFLAGS) -o $@ $(OBJS) $(LIB)
$(LIB): $(SRC)/lib/vec.o
	ar rcs $@ $^
%.o: %.c $(SRC)/main.h
	$(CC) $(CFLAGS) -c -o $@ $<
docs: in/tree/doc/notes.txt in/tree/doc/manual.txt
	@for f in $^; do echo "doc $$f"; done
	wc -l $(filter %.txt,$^) > $@
.PHONY: all
MK
	# fixed times: ls, du, stat, tar and diff show them
	find "$d" -exec touch -d '2024-01-02 03:04:05' {} +
}

# ----------------------------------------------------------- one command

now() { date +%s.%N; }
secs() { $AWK -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# Runs "$@" in its own process group, killed after $TIMEOUT seconds;
# returns its status, 124 on timeout.  A killed skel check leaves its
# directory behind: the one whose lackey log names it as parent goes.
bounded() {
	# an asynchronous list reads /dev/null unless told otherwise
	exec 3<&0
	setsid "$@" <&3 3<&- &
	pid=$!
	# polls, so that no sleeper outlives the command holding our stdout
	( n=0
	  while kill -0 "$pid" 2>/dev/null; do
		sleep 1; n=$((n + 1))
		[ $n -ge "$TIMEOUT" ] && kill -TERM -"$pid" && touch "$W/timeout.$pid" && exit
	  done ) </dev/null >/dev/null 2>&1 &
	dog=$!
	wait "$pid"; st=$?
	wait "$dog"
	if [ -e "$W/timeout.$pid" ]; then
		rm -f "$W/timeout.$pid"
		for l in /tmp/skel-check-*/lackey.log; do
			[ -f "$l" ] && head -5 "$l" | grep -q "Parent PID: $pid\$" && rm -rf "$(dirname "$l")"
		done
		return 124
	fi
	return $st
}

# Writes $W/res/NAME (exact|fail), $W/res/NAME.cause and prints the line.
one() {
	name=$1
	spec "$name" || { echo "$name: no such command (see -l)"; return 1; }
	o=$W/run/$name
	mkdir -p "$o"
	export XDG_CACHE_HOME="$o/cache"	# empty: the first-run time is honest
	[ -n "$whole" ] && export XDG_CACHE_HOME="$W/cache"
	cd "$W" || return 1
	eval "set -- $cmd"
	app=$1
	acc=- rep=- vals=- vpa=- first=- ctime=- result= prob= exact= rrc=1

	t0=$(now)
	if ! bounded "$SKEL" gen "${whole:---main-only}" "$app" -o "$o/s.c" 2>"$o/gen.err"; then
		result="gen: $(grep -m1 '^skel' "$o/gen.err" || tail -1 "$o/gen.err")"
	else
		t1=$(now)
		: >"$o/empty.vals"
		# replay compiles the skeleton, then refuses the empty value trace
		(ulimit -v 8000000; bounded "$SKEL" replay "$o/s.c" "$o/empty.vals" --format count) \
			>/dev/null 2>"$o/cc.err"
		t2=$(now)
		if ! ls "$XDG_CACHE_HOME"/skel/replay-* >/dev/null 2>&1; then
			result="compile: $(grep -m1 -E 'error|skel' "$o/cc.err")"
		fi
		first="$(secs "$t0" "$t1")+$(secs "$t1" "$t2")"
	fi
	if [ -z "$result" ]; then
		"$@" <"$in" >"$o/native.out" 2>"$o/native.err"; nst=$?
		"$SKEL" record "$o/s.c" -o "$o/v" -- "$@" <"$in" >"$o/rec.out" 2>"$o/rec.err"; rst=$?
		[ $rst -eq $nst ] || prob="$prob; exit $rst recorded, $nst native"
		cmp -s "$o/native.out" "$o/rec.out" || prob="$prob; stdout differs when recorded"
		bounded "$SKEL" replay "$o/s.c" "$o/v" --format count >"$o/count.out" 2>"$o/replay.err"; rrc=$?
		rep=$(sed -n 's/^total: \([0-9]*\) accesses.*/\1/p' "$o/count.out")
		vals=$($AWK '/^thread .* values$/ { v += $(NF - 1) } END { print v + 0 }' "$o/count.out")
	fi
	if [ -z "$result" ] && [ -n "$replay_only" ]; then
		[ -n "$rep" ] || rep=-
		[ $rrc -eq 0 ] && [ "$rep" != - ] && [ "$rep" -gt 0 ] &&
			vpa=$($AWK -v v="$vals" -v a="$rep" 'BEGIN { printf "%.3f", v / a }')
		result=$(replay_verdict $rrc)
		[ "$result" = "replayed" ] && [ -z "$prob" ] && exact=1
	elif [ -z "$result" ]; then
		t3=$(now)
		bounded "$SKEL" check "$o/s.c" -- "$@" <"$in" >"$o/check.out" 2>"$o/check.err"; cst=$?
		ctime=$(secs "$t3" "$(now)")
		cmp -s "$o/native.out" "$o/check.out" || prob="$prob; stdout differs under check"
		acc=$(sed -n -e 's/^check: [0-9]* of \([0-9]*\) accesses match.*/\1/p' \
			-e 's/^check: [0-9]* of \([0-9]*\) accesses matched before.*/\1/p' \
			-e 's/^check: \([0-9]*\) accesses matched, .*/\1/p' "$o/check.err" | head -1)
		[ -n "$acc" ] || acc=-
		[ -n "$rep" ] || rep=-
		[ "$acc" != - ] && [ "$acc" -gt 0 ] && vpa=$($AWK -v v="$vals" -v a="$acc" 'BEGIN { printf "%.3f", v / a }')
		result=$(verdict "$cst")
	fi
	[ -n "$prob" ] && { [ "$result" = exact ] && result=${prob#; } || result="$result$prob"; }
	[ "$result" = exact ] && exact=1
	if [ -n "$exact" ] && [ -n "$whole" ] && [ -z "$replay_only" ]; then
		out=$(sed -n 's/^check: by object: [^ ]* [0-9]* (\([0-9.]*\)%).*/\1/p' "$o/check.err")
		[ -n "$out" ] && result="exact, $($AWK -v e="$out" 'BEGIN { printf "%.1f", 100 - e }')% outside the executable"
	fi
	if [ -n "$exact" ]; then echo exact; else echo fail; fi >"$W/res/$name"
	cause "$result" >"$W/res/$name.cause"
	printf '%-10s %9s %9s %9s %7s %12s %7s  %s\n' "$name" "$acc" "$rep" "$vals" "$vpa" "$first" "$ctime" "$result"
}

# The check's verdict from its status and messages.
verdict() {
	e=$o/check.err
	[ "$1" -eq 124 ] && { echo "timeout after ${TIMEOUT}s; replay alone: $(replay_verdict $rrc)"; return; }
	[ "$1" -eq 0 ] && { echo exact; return; }
	v=
	sig=$(sed -n 's/^skel check: .* was killed by signal \([0-9]*\).*/\1/p' "$e" | head -1)
	[ -n "$sig" ] && v="killed by signal $sig ($(kill -l "$sig" 2>/dev/null)); "
	d=$(sed -n 's/^skel: replay: thread [0-9]* desynchronised at pc \(0x[0-9a-f]*\) ([^)]*): \(.*\)/desync at \1: \2/p' "$e" | head -1)
	m=$(sed -n -e 's/^check: \([0-9]*\) of \([0-9]*\) accesses matched before.*/\1/p' "$e" | head -1)
	vpc=$(sed -n 's/^  valgrind pc [^ ]* (link \(0x[0-9a-f]*\)).*/\1/p' "$e" | head -1)
	x=$(sed -n 's/^check: [0-9]* accesses matched, \([0-9]*\) extra.*/\1/p' "$e" | head -1)
	if [ -n "$d" ]; then
		v="$v$d"
		[ -n "$m" ] && v="$v ($m matched)"
	elif [ -n "$m" ]; then
		v="${v}differs at access $((m + 1)) (pc $vpc)"
	elif [ -n "$x" ]; then
		v="${v}$x accesses too many in the replay"
	else
		v="$v$(grep -m1 -E '^skel|rror' "$e" || echo "check exit $1")"
	fi
	echo "$v"
}

# The verdict of skel replay on the values of the run without valgrind.
replay_verdict() {
	e=$o/replay.err
	sig=$(sed -n 's/.*thread [0-9]* died of signal \([0-9]*\) at pc \(0x[0-9a-f]*\).*/\1 \2/p' "$e" | head -1)
	d=$(sed -n 's/^skel: replay: thread [0-9]* desynchronised at pc \(0x[0-9a-f]*\) ([^)]*): \(.*\)/desync at \1: \2/p' "$e" | head -1)
	if [ -n "$sig" ]; then
		set -- $sig
		echo "killed by signal $1 ($(kill -l "$1" 2>/dev/null)) at pc $2"
	elif [ -n "$d" ]; then
		echo "$d"
	elif [ "$1" -eq 0 ]; then
		echo replayed
	elif [ "$1" -eq 124 ]; then
		echo "replay did not end within ${TIMEOUT}s"
	else
		grep -m1 '^skel' "$e" || echo "replay exit $1"
	fi
}

# A failure's cause without its addresses and counts, for grouping.
cause() {
	echo "$1" | sed -e 's/0x[0-9a-f]*/X/g' -e 's/ ([0-9]* matched)//' \
		-e 's|[^ ]*/s\.c:[0-9:]*|s.c:|' -e "s/'r_[0-9]*'/'r_N'/" -e 's/exit 1[0-9][0-9]/exit N/' \
		-e 's/access [0-9]*/access N/' -e 's/after [0-9]*s/after Ns/'
}

# ------------------------------------------------------------------- main

if [ "$1" = --one ]; then	# one command, for the parallel runner
	W=$2; TIMEOUT=$3; AWK=$4; replay_only=$5; whole=$6
	one "$7"
	exit
fi
if [ "$1" = --inputs ]; then	# only the inputs, in DIR/in, to look at them
	make_inputs "$2"
	exit
fi

jobs=1 keep= replay_only= whole=
while getopts j:klrw opt; do
	case $opt in
	j)	jobs=$OPTARG ;;
	k)	keep=1 ;;
	r)	replay_only=1 ;;
	w)	whole=--whole-process ;;
	l)	for n in $ALL $EXTRA; do
			spec "$n"
			[ "$in" = /dev/null ] && in= || in=" <$in"
			printf '%s: %s%s\n' "$n" "$cmd" "$in"
		done
		exit 0 ;;
	*)	echo "usage: tests/real/run.sh [-j JOBS] [-k] [-l] [-r] [-w] [NAME...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
names=${*:-$ALL}
for n in $names; do
	spec "$n" || { echo "tests/real/run.sh: no command named $n (see -l)" >&2; exit 2; }
done
[ -x "$SKEL" ] && [ -f build/libskelrec.so ] || { echo "tests/real/run.sh: build skel first (make)" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "tests/real/run.sh: valgrind is needed" >&2; exit 2; }

W=$(mktemp -d /tmp/skel-real-XXXXXX) || exit 1
if [ -n "$keep" ]; then
	trap 'echo "work directory kept: $W"' EXIT
else
	trap 'rm -rf "$W"' EXIT
fi
trap 'exit 130' INT TERM
mkdir -p "$W/res"
make_inputs "$W" || { echo "tests/real/run.sh: cannot make the inputs" >&2; exit 1; }

if [ -n "$replay_only" ]; then
	echo "-r: no valgrind; accesses = replayed; first run = skel gen + compile (s), empty cache"
	ok="replayed completely (not checked against valgrind)"
else
	echo "first run = skel gen + compile (s), empty cache; check = skel check wall time (s)"
	ok=exact
fi
printf '%-10s %9s %9s %9s %7s %12s %7s  %s\n' command accesses replayed values val/acc first-run check result
for n in $names; do echo "$n"; done |
	xargs -P "$jobs" -I{} sh "$SELF" --one "$W" "${SKEL_REAL_TIMEOUT:-600}" "$AWK" "$replay_only" "$whole" {}

total=0 exact=0
for n in $names; do
	total=$((total + 1))
	[ "$(cat "$W/res/$n" 2>/dev/null)" = exact ] && exact=$((exact + 1))
done
if [ $exact -lt $total ]; then
	echo "failures by cause:"
	for n in $names; do
		[ "$(cat "$W/res/$n" 2>/dev/null)" = exact ] || echo "$(cat "$W/res/$n.cause" 2>/dev/null)	$n"
	done | sort | $AWK -F'\t' '$1 != c { if (c != "") print "  " c ":" l; c = $1; l = "" } { l = l " " $2 }
		END { if (c != "") print "  " c ":" l }'
fi
echo "$exact of $total $ok"
[ $exact -eq $total ]
