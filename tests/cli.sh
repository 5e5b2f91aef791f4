#!/bin/sh
# The command line as a user runs it: every sample build and some Debian
# binaries analyze without a crash or sanitizer report; bad input gives one
# clear line on stderr and a non-zero exit.
cd "$(dirname "$0")/.." || exit 1
# the executable's scope (skel gen --main-only) unless a case says
# otherwise: whole-process tracing is tests/whole.sh's
export SKEL_SCOPE=main
skel=build/san/skel
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export ASAN_OPTIONS=detect_leaks=1

bad() { echo "FAIL: $*"; fails=$((fails+1)); }

# must succeed and print the summary line
for app in build/samples/*-O[023]-*; do
	out=$("$skel" loops "$app" 2>"$tmp/err") || bad "skel loops $app exited $?: $(head -3 "$tmp/err")"
	[ -s "$tmp/err" ] && bad "skel loops $app wrote to stderr: $(head -3 "$tmp/err")"
	echo "$out" | grep -q '^summary: ' || bad "skel loops $app printed no summary"
done
for app in build/samples/matmul-O2-pie build/samples/switch-O0-nopie-stripped; do
	"$skel" cfg "$app" >/dev/null 2>"$tmp/err" || bad "skel cfg $app: $(head -3 "$tmp/err")"
done
"$skel" cfg build/samples/matmul-O2-pie matmul --dot | grep -q '^digraph' || bad "cfg --dot"
# skel analyze says the probes skel gen's patch keeps (issue 12 item 4):
# the routines' gen_probes add up to the total, which is the count skel
# gen prints, and gen's planning keeps fewer than the analysis finds
for app in build/samples/strkern-O2-pie build/samples/switch-O0-nopie-stripped; do
	"$skel" analyze "$app" --json >"$tmp/an.json" 2>"$tmp/err" ||
		bad "skel analyze --json $app: $(head -3 "$tmp/err")"
	"$skel" gen "$app" -o /dev/null 2>"$tmp/gen.err" || bad "skel gen $app: $(head -3 "$tmp/gen.err")"
	g=$(sed -n 's/^skel: gen: .* memory instructions, \([0-9]*\) probes .*/\1/p' "$tmp/gen.err")
	rp=$(grep -o '"gen_probes":[0-9]*' "$tmp/an.json" | sed 's/.*://' | sed '$d' | awk '{ s += $1 } END { print s + 0 }')
	tp=$(grep -o '"gen_probes":[0-9]*' "$tmp/an.json" | sed -n '$s/.*://p')
	ap=$(grep -o '"probes":[0-9]*,"inner_probes":[0-9]*,"static_ratio"' "$tmp/an.json" | sed 's/"probes":\([0-9]*\),.*/\1/')
	[ -n "$g" ] && [ "$tp" = "$g" ] && [ "$rp" = "$g" ] && [ "$g" -lt "$ap" ] ||
		bad "skel analyze $app: gen_probes total $tp, routines' sum $rp, skel gen $g, analysis $ap"
	"$skel" analyze "$app" 2>/dev/null | tail -1 | grep -q "^skel gen: $g probes, static ratio" ||
		bad "skel analyze $app: no 'skel gen: $g probes' line"
done
for app in /usr/bin/bzip2 /usr/bin/gzip /usr/bin/xz /usr/bin/ls /usr/bin/grep; do
	[ -f "$app" ] || { bad "$app missing (make deps installs bzip2, gzip, xz-utils)"; continue; }
	for c in cfg loops; do
		"$skel" $c "$app" >"$tmp/out" 2>"$tmp/err" || bad "skel $c $app exited: $(head -3 "$tmp/err")"
		[ -s "$tmp/err" ] && bad "skel $c $app wrote to stderr: $(head -3 "$tmp/err")"
	done
	echo "$app: $(tail -1 "$tmp/out")"
done

# must fail with one line "skel: FILE: ..." naming the problem
refuse() { # file keyword
	"$skel" loops "$1" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -ne 0 ] || bad "skel loops $1 exited 0"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || bad "skel loops $1: expected one line on stderr, got: $(cat "$tmp/err")"
	grep -q "^skel: $1: .*$2" "$tmp/err" || bad "skel loops $1: message lacks '$2': $(cat "$tmp/err")"
	grep -qi "sanitizer" "$tmp/err" && bad "sanitizer report on $1"
}
echo "hello" >"$tmp/text"; refuse "$tmp/text" "not an ELF"
: >"$tmp/empty"; refuse "$tmp/empty" "empty"
head -c 100 build/samples/matmul-O2-pie >"$tmp/trunc"; refuse "$tmp/trunc" "truncated"
size=$(stat -c %s build/samples/matmul-O2-pie)
head -c $((size - 200)) build/samples/matmul-O2-pie >"$tmp/trunc2"; refuse "$tmp/trunc2" "truncated"
refuse /nonexistent/file "No such file"
# 32-bit and ARM headers: a real header with the class / machine changed
cp build/samples/matmul-O2-pie "$tmp/elf32"; printf '\001' | dd of="$tmp/elf32" bs=1 seek=4 conv=notrunc 2>/dev/null
refuse "$tmp/elf32" "32-bit"
cp build/samples/matmul-O2-pie "$tmp/arm"; printf '\267\000' | dd of="$tmp/arm" bs=1 seek=18 conv=notrunc 2>/dev/null
refuse "$tmp/arm" "AArch64"
# a shared library is analyzed (tests/shlib.sh) but is no program to run
for c in trace check; do
	"$skel" $c -- /usr/lib/x86_64-linux-gnu/libm.so.6 >/dev/null 2>"$tmp/err" &&
		bad "skel $c of a library exited 0"
	grep -q "^skel: /usr/lib/x86_64-linux-gnu/libm.so.6: a shared library, not a program" "$tmp/err" ||
		bad "skel $c of a library: $(cat "$tmp/err")"
done
# a static executable cannot get the recorder (LD_PRELOAD): refused before
# it runs (it used to run untraced, then "no values arrived")
printf '#include <stdio.h>\nint main(void) { puts("ran"); return 0; }\n' >"$tmp/st.c"
if ${CC:-gcc} -static -o "$tmp/static" "$tmp/st.c" 2>/dev/null; then
	for c in trace check; do
		"$skel" $c -- "$tmp/static" >"$tmp/out" 2>"$tmp/err" && bad "skel $c of a static executable exited 0"
		grep -q "^skel: $tmp/static: a static executable" "$tmp/err" ||
			bad "skel $c of a static executable: $(cat "$tmp/err")"
		grep -q ran "$tmp/out" && bad "skel $c ran the static executable"
	done
else
	bad "cannot link a static executable (libc6-dev's libc.a)"
fi
# valgrind does not know a lone cmpsb: skel check has no oracle and says so
# (it used to report a mismatch at access 1, blaming the recording)
printf 'int main(void) { static char a[2] = "x", b[2] = "x"; unsigned char ne;\n\t__asm__ volatile("cmpsb; setne %%0" : "=r"(ne) : "S"(a), "D"(b) : "memory", "cc");\n\treturn ne; }\n' >"$tmp/vex.c"
${CC:-gcc} -O2 -o "$tmp/vex" "$tmp/vex.c" || bad "cannot build the cmpsb program"
"$skel" check -- "$tmp/vex" >/dev/null 2>"$tmp/err" && bad "skel check without an oracle exited 0"
grep -q "^skel check: valgrind stopped the program at an instruction it does not know (bytes 0xA6 " "$tmp/err" ||
	bad "skel check of a program valgrind cannot run: $(tail -3 "$tmp/err")"
grep -q MISMATCH "$tmp/err" && bad "skel check compared against a cut-short oracle"
"$skel" loops build/samples/matmul-O2-pie no_such_function >/dev/null 2>"$tmp/err" && bad "unknown FUNC accepted"
grep -q "no routine named" "$tmp/err" || bad "unknown FUNC message: $(cat "$tmp/err")"
"$skel" frobnicate 2>/dev/null && bad "unknown command accepted"
"$skel" --help | grep -q "skel cfg" || bad "--help"
"$skel" --version | grep -q "^skel " || bad "--version"
# every command skel --help lists has its own --help (usage, options, an
# example; status 0) and names an unknown option it is given (status 2)
cmds=$("$skel" --help | sed -n 's/^  skel \([a-z]*\).*/\1/p' | sort -u)
[ "$(echo "$cmds" | wc -l)" -ge 12 ] || bad "skel --help lists only: $cmds"
for c in $cmds; do
	"$skel" $c --help >"$tmp/out" 2>"$tmp/err" || bad "skel $c --help exited $?"
	[ -s "$tmp/err" ] && bad "skel $c --help wrote to stderr: $(cat "$tmp/err")"
	head -1 "$tmp/out" | grep -q '^usage:' || bad "skel $c --help: no usage line"
	grep -q "^  skel $c" "$tmp/out" || bad "skel $c --help: no synopsis"
	sed -n '/^Example:/,$p' "$tmp/out" | grep -q "^  skel $c " || bad "skel $c --help: no example"
	"$skel" $c -h >"$tmp/out2" 2>&1 && cmp -s "$tmp/out" "$tmp/out2" || bad "skel $c -h differs from --help"
	"$skel" $c --no-such-option x -- true >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 2 ] || bad "skel $c --no-such-option: status $rc"
	grep -q "^skel: $c: unknown option '--no-such-option'" "$tmp/err" ||
		bad "skel $c --no-such-option: $(cat "$tmp/err")"
done
# after "--" a --help is the program's
"$skel" record x.c -o "$tmp/v" -- --help 2>/dev/null | grep -q '^usage:' && bad "record -- --help"

# --- APP as a shell finds it: a bare name in $PATH, with its argv[0] as typed
"$skel" summary ls >"$tmp/bare" 2>"$tmp/err" || bad "skel summary ls: $(cat "$tmp/err")"
"$skel" summary /usr/bin/ls >"$tmp/full" 2>&1
[ -s "$tmp/bare" ] && cmp -s "$tmp/bare" "$tmp/full" ||
	bad "skel summary ls differs from /usr/bin/ls: $(cat "$tmp/bare") / $(cat "$tmp/full")"
"$skel" loops ls >/dev/null 2>"$tmp/err" || bad "skel loops ls: $(cat "$tmp/err")"
for c in summary gen loops; do
	"$skel" $c skel-no-such-program >/dev/null 2>"$tmp/err" && bad "skel $c of an unknown name exited 0"
	[ "$(cat "$tmp/err")" = "skel: skel-no-such-program: not found in PATH" ] ||
		bad "skel $c skel-no-such-program: $(cat "$tmp/err")"
done
"$skel" trace -- skel-no-such-program 2>"$tmp/err" && bad "skel trace of an unknown name exited 0"
grep -q "^skel: skel-no-such-program: not found in PATH" "$tmp/err" || bad "trace: $(cat "$tmp/err")"
# a name without '/' is not taken from the current directory (a shell would not)
mkdir "$tmp/bin"
cp build/samples/matmul-O2-pie "$tmp/bin/mm"
(cd "$tmp/bin" && "$OLDPWD/$skel" summary mm) >/dev/null 2>"$tmp/err" && bad "a bare name found outside PATH"
grep -q "^skel: mm: not found in PATH (./mm for the file in this directory)" "$tmp/err" ||
	bad "bare name in the current directory: $(cat "$tmp/err")"
printf '#include <stdio.h>\nint main(int c, char **v) { (void)c; printf("argv0=%%s\\n", v[0]); return 0; }\n' \
	>"$tmp/argv0.c"
cc -O2 -o "$tmp/bin/skelargv0" "$tmp/argv0.c" || bad "cannot build argv0"
out=$(PATH="$tmp/bin:$PATH" XDG_CACHE_HOME="$tmp/cache" "$skel" trace -o "$tmp/a0.txt" -- skelargv0 2>"$tmp/err")
[ "$out" = "argv0=skelargv0" ] || bad "skel trace -- skelargv0 printed '$out': $(cat "$tmp/err")"
grep -q '^# thread 0' "$tmp/a0.txt" || bad "skel trace -- skelargv0: no trace"
PATH="$tmp/bin:$PATH" "$skel" gen skelargv0 -o "$tmp/a0.c" 2>/dev/null || bad "skel gen skelargv0"
grep -q "Skeleton of $tmp/bin/skelargv0," "$tmp/a0.c" || bad "gen: the skeleton does not name the file found"
out=$(PATH="$tmp/bin:$PATH" "$skel" record "$tmp/a0.c" -o "$tmp/a0.vals" -- skelargv0 2>"$tmp/err")
[ "$out" = "argv0=skelargv0" ] || bad "skel record -- skelargv0 printed '$out': $(cat "$tmp/err")"

# --- interrupted: SIGINT to skel check while valgrind runs.  Its children
# go, its temporary files in $TMPDIR go, and skel dies by SIGINT.  perl
# starts it with SIGINT at its default (a background job of sh ignores it)
# and reports how it ended.
sigrun() { # pidfile command...
	perl -e '$f = shift; $p = fork; if (!$p) { $SIG{INT} = "DEFAULT"; exec @ARGV; exit 127 }
		open F, ">", "$f.tmp"; print F "$p\n"; close F; rename "$f.tmp", $f; waitpid $p, 0;
		print $? & 127 ? "signal " . ($? & 127) : "exit " . ($? >> 8), "\n"' "$@"
}
mkdir "$tmp/t"
TMPDIR="$tmp/t" sigrun "$tmp/pid" "$skel" check -- build/samples/matmul-O2-pie 100 >"$tmp/how" 2>"$tmp/err" &
w=$!
i=0 # until valgrind writes its log (or 120 s: then the test fails below)
while [ $i -lt 1200 ] && ! ls "$tmp"/t/skel-check-*/lackey.*.log >/dev/null 2>&1; do sleep 0.1; i=$((i+1)); done
ls "$tmp"/t/skel-patch-* >/dev/null 2>&1 || bad "check: no patch file in \$TMPDIR while valgrind runs"
pgrep -f "valgrind.*$tmp/t/skel-check" >/dev/null || bad "check: valgrind not running when interrupted"
kill -INT "$(cat "$tmp/pid")"
wait $w
[ "$(cat "$tmp/how")" = "signal 2" ] || bad "check after SIGINT: $(cat "$tmp/how"), expected signal 2: $(cat "$tmp/err")"
[ -z "$(ls -A "$tmp/t")" ] || bad "check after SIGINT left: $(ls "$tmp/t")"
pgrep -f "$tmp/t/" >/dev/null && bad "check after SIGINT: still running: $(pgrep -af "$tmp/t/")"
grep -qi "sanitizer" "$tmp/err" && bad "check after SIGINT: $(cat "$tmp/err")"

# --- the terminal (script(1) gives one): the program under trace can read
# it, both when skel is a job of its own (it lends the program the
# terminal) and when it runs inside a shell's group; a ^C there stops the
# program, skel shows what it did and ends with status 130
printf '#include <stdio.h>\nint main(void) { char l[100]; if (!fgets(l, sizeof l, stdin)) return 1; printf("got <%%s>", l); return 0; }\n' \
	>"$tmp/rd.c"
cc -O2 -o "$tmp/bin/skelrd" "$tmp/rd.c" || bad "cannot build rd"
export XDG_CACHE_HOME="$tmp/cache"
for how in "exec " "true; "; do
	printf 'hello\n' | timeout 120 script -qec "$how$skel trace -o $tmp/rd.txt -- $tmp/bin/skelrd" /dev/null \
		>"$tmp/tty" 2>&1 || bad "trace of a terminal reader ($how) failed or hung: $(tail -3 "$tmp/tty")"
	grep -q "got <hello" "$tmp/tty" || bad "trace of a terminal reader ($how): $(tail -3 "$tmp/tty")"
done
# the ^C once the program waits on the terminal, recorder in place (on a
# loaded machine, an earlier one can come before the recorder starts)
{ i=0; while [ $i -lt 1200 ] && ! pgrep -f "^$tmp/bin/skelrd" >/dev/null; do sleep 0.1; i=$((i+1)); done
  p=$(pgrep -f "^$tmp/bin/skelrd" | head -1)
  while [ $i -lt 1200 ] && ! { grep -q skelrec "/proc/$p/maps" && grep -q '^[0-9]* ([^)]*) S' "/proc/$p/stat"; } 2>/dev/null; do
	sleep 0.1; i=$((i+1)); done
  sleep 0.3; printf '\003'; sleep 1; } |
	timeout 120 script -qec "exec $skel trace --format count -o $tmp/rd.cnt -- $tmp/bin/skelrd" /dev/null >"$tmp/tty" 2>&1
rc=$?
[ $rc -eq 130 ] || bad "^C on the terminal under skel trace: status $rc: $(tail -3 "$tmp/tty")"
grep -q "skelrd: killed by signal 2" "$tmp/tty" || bad "^C on the terminal did not reach the program: $(tail -3 "$tmp/tty")"
grep -q "^total: [1-9]" "$tmp/rd.cnt" || bad "^C on the terminal: no trace of what the program did"
unset XDG_CACHE_HOME

# make install: the installed driver, run by its link in PREFIX/bin from
# elsewhere with no SKEL_HOME, finds its recorder and runtime next to
# itself; a program built against the installed skel_roi.h runs natively
# and its marked region alone is counted (1000 reads of a[])
make -s install DESTDIR="$tmp/inst" PREFIX=/usr >"$tmp/err" 2>&1 || bad "make install: $(tail -3 "$tmp/err")"
mkdir -p "$tmp/user"
cat >"$tmp/user/roi.c" <<'EOF'
#include <skel_roi.h>
#include <stdio.h>
static int a[1000];
int main(void)
{
	long s = 0;
	for (int i = 0; i < 1000; i++)
		a[i] = i;
	skel_roi_begin("sum");
	for (int i = 0; i < 1000; i++)
		s += a[i];
	skel_roi_end();
	printf("%ld\n", s);
	return 0;
}
EOF
if ${CC:-gcc} -O1 -I"$tmp/inst/usr/include" -o "$tmp/user/roi" "$tmp/user/roi.c" 2>"$tmp/err"; then
	[ "$("$tmp/user/roi")" = 499500 ] || bad "installed skel_roi.h: the program does not run as written"
	( cd "$tmp/user" && env -u SKEL_HOME XDG_CACHE_HOME="$tmp/user/cache" "$tmp/inst/usr/bin/skel" \
		gen --main-only ./roi -o roi_skel.c 2>err &&
	  env -u SKEL_HOME XDG_CACHE_HOME="$tmp/user/cache" "$tmp/inst/usr/bin/skel" \
		run roi_skel.c --format count --roi-markers -- ./roi >out 2>>err ) ||
		bad "installed skel: $(tail -3 "$tmp/user/err")"
	grep -q "^thread 0: 1000 reads" "$tmp/user/out" ||
		bad "installed skel --roi-markers: $(cat "$tmp/user/out") $(tail -3 "$tmp/user/err")"
else
	bad "a program including the installed skel_roi.h does not build: $(head -3 "$tmp/err")"
fi

[ $fails -eq 0 ] && echo "cli: all checks passed" || echo "cli: $fails failures"
[ $fails -eq 0 ]
