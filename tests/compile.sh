#!/bin/sh
# How skel compiles a skeleton (driver/run.c, compile_skeleton): in hot and
# cold units cut at the SKEL-UNIT lines, with the replay runtime cached.
#  - bzip2's skeleton has both hot and cold parts, and the trace replayed
#    from them is the same as with every unit at -O2 (SKEL_OPT=2) and as
#    from the same skeleton without SKEL-UNIT lines (one unit);
#  - the skeleton file still compiles as one translation unit;
#  - the runtime is compiled once for all of them, no build directory stays;
#  - a compile error names the skeleton file and its line.
cd "$(dirname "$0")/.." || exit 1
# the executable's scope (skel gen --main-only) unless a case says
# otherwise: whole-process tracing is tests/whole.sh's
export SKEL_SCOPE=main
skel=./skel
[ -x "$skel" ] && [ -f build/libskelrec.so ] || make -s all >/dev/null || exit 1
fails=0
tmp=$(mktemp -d /tmp/skel-compile-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
bad() { echo "FAIL: $*"; fails=$((fails+1)); }
export XDG_CACHE_HOME="$tmp/cache"

app=/usr/bin/bzip2
seq 1 3000 >"$tmp/in.txt"
"$skel" gen "$app" -o "$tmp/s.c" 2>/dev/null || bad "gen $app"
grep -q '^/\* SKEL-UNIT hot \*/$' "$tmp/s.c" || bad "no hot part in $app's skeleton"
grep -q '^/\* SKEL-UNIT cold \*/$' "$tmp/s.c" || bad "no cold part in $app's skeleton"
"$skel" record "$tmp/s.c" -o "$tmp/v" -- "$app" -c "$tmp/in.txt" >/dev/null ||
	bad "record $app"

"$skel" replay "$tmp/s.c" "$tmp/v" -o "$tmp/units.txt" 2>"$tmp/err" ||
	bad "replay (units): $(head -3 "$tmp/err")"
[ -s "$tmp/units.txt" ] || bad "replay (units): empty trace"
SKEL_OPT=2 "$skel" replay "$tmp/s.c" "$tmp/v" -o "$tmp/o2.txt" 2>"$tmp/err" ||
	bad "replay (SKEL_OPT=2): $(head -3 "$tmp/err")"
cmp -s "$tmp/units.txt" "$tmp/o2.txt" ||
	bad "hot/cold units and -O2 replay differently: $(diff "$tmp/units.txt" "$tmp/o2.txt" | head -3)"
sed '/^\/\* SKEL-UNIT /d' "$tmp/s.c" >"$tmp/one.c"
"$skel" replay "$tmp/one.c" "$tmp/v" -o "$tmp/one.txt" 2>"$tmp/err" ||
	bad "replay (no SKEL-UNIT lines): $(head -3 "$tmp/err")"
cmp -s "$tmp/units.txt" "$tmp/one.txt" || bad "the skeleton without SKEL-UNIT lines replays differently"

gcc -std=gnu11 -Wall -Werror -Ireplay -fsyntax-only "$tmp/s.c" 2>"$tmp/err" ||
	bad "the skeleton does not compile as one unit: $(head -3 "$tmp/err")"

n=$(ls "$tmp"/cache/skel/rt-*-replayer.o 2>/dev/null | wc -l)
[ "$n" -eq 1 ] || bad "the runtime was compiled $n times for three replayers"
ls -d "$tmp"/cache/skel/build-* >/dev/null 2>&1 && bad "a build directory stayed in the cache"

# an error in the 40th line of a cold routine: the message points there
line=$(grep -n -A40 '^/\* SKEL-UNIT cold \*/$' "$tmp/s.c" | sed -n '41s/-.*//p')
sed "${line}s/\$/ this is not C;/" "$tmp/s.c" >"$tmp/broken.c"
if "$skel" replay "$tmp/broken.c" "$tmp/v" -o "$tmp/b.txt" 2>"$tmp/err"; then
	bad "a broken skeleton compiled"
else
	grep -q "broken.c:$line:.*error" "$tmp/err" ||
		bad "the compile error does not name broken.c:$line: $(head -3 "$tmp/err")"
	grep -q "skel: .*broken.c: the skeleton does not compile" "$tmp/err" ||
		bad "no 'does not compile' message: $(tail -1 "$tmp/err")"
fi

# symbol names go into C comments and strings: a name holding */ or a
# quote (any bytes are legal in .strtab) must not break the skeleton
cp build/samples/matmul-O2-pie "$tmp/weird"
perl -0777 -pi -e 's/\0matmul\0/\0m*\/"\\x\0/g' "$tmp/weird"
grep -q 'm\*/"' "$tmp/weird" || bad "could not rename the symbol"
"$skel" gen "$tmp/weird" -o "$tmp/w.c" 2>/dev/null || bad "gen of a binary with a weird symbol name"
"$skel" record "$tmp/w.c" -o "$tmp/wv" -- "$tmp/weird" >/dev/null 2>&1 || bad "record of the weird binary"
"$skel" replay "$tmp/w.c" "$tmp/wv" --format count >/dev/null 2>"$tmp/w.err" ||
	bad "a symbol name with */ and a quote breaks the skeleton: $(head -3 "$tmp/w.err")"

[ $fails -eq 0 ] && echo "compile: all passed"
[ $fails -eq 0 ]
