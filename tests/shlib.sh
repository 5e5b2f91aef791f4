#!/bin/sh
# Shared objects go through the analysis as executables do: libc (which has
# a PT_INTERP), libm, libbz2, liblzma, libstdc++ and the loader itself give
# a summary and a skeleton under the sanitizer build, with nothing on stderr
# but gen's own report; the small libraries' skeletons compile.
cd "$(dirname "$0")/.." || exit 1
# the executable's scope (skel gen --main-only) unless a case says
# otherwise: whole-process tracing is tests/whole.sh's
export SKEL_SCOPE=main
skel=build/san/skel
fails=0
tmp=$(mktemp -d /tmp/skel-shlib-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export ASAN_OPTIONS=detect_leaks=1
bad() { echo "FAIL: $*"; fails=$((fails+1)); }

lib=/usr/lib/x86_64-linux-gnu
for so in libc.so.6 libm.so.6 libbz2.so.1.0 liblzma.so.5 libstdc++.so.6 ld-linux-x86-64.so.2; do
	f=$lib/$so
	[ -f "$f" ] || { bad "$f missing"; continue; }
	"$skel" gen "$f" -o "$tmp/$so.c" 2>"$tmp/err" || bad "skel gen $so: $(head -3 "$tmp/err")"
	grep -v '^skel: gen: ' "$tmp/err" | grep -q . && bad "skel gen $so: $(grep -v '^skel: gen: ' "$tmp/err" | head -3)"
	# a library has dozens of routines at least
	n=$(sed -n 's/^skel: gen: \([0-9]*\) routines.*/\1/p' "$tmp/err")
	[ "${n:-0}" -ge 40 ] || bad "skel gen $so: $(head -1 "$tmp/err")"
	grep -q "^const char sk_binary_id\[\] = \"$("$skel" deps "$f" | head -1 | sed 's/.*://')\";" "$tmp/$so.c" ||
		bad "skel gen $so: the skeleton does not carry the library's identity"
	echo "$so: $(head -1 "$tmp/err")"
done
for so in libbz2.so.1.0 ld-linux-x86-64.so.2; do
	for c in summary cfg loops; do
		"$skel" $c "$lib/$so" >"$tmp/out" 2>"$tmp/err" || bad "skel $c $so: $(head -3 "$tmp/err")"
		[ -s "$tmp/err" ] && bad "skel $c $so wrote to stderr: $(head -3 "$tmp/err")"
		tail -1 "$tmp/out" | grep -q '^summary: ' || bad "skel $c $so printed no summary"
	done
	gcc -std=gnu11 -Wall -Werror -Ireplay -fsyntax-only "$tmp/$so.c" 2>"$tmp/err" ||
		bad "the skeleton of $so does not compile: $(head -3 "$tmp/err")"
done

[ $fails -eq 0 ] && echo "shlib: all passed"
[ $fails -eq 0 ]
