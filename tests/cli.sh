#!/bin/sh
# The command line as a user runs it: every sample build and some Debian
# binaries analyze without a crash or sanitizer report; bad input gives one
# clear line on stderr and a non-zero exit.
cd "$(dirname "$0")/.." || exit 1
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
refuse /usr/lib/x86_64-linux-gnu/libc.so.6 "shared library"
"$skel" loops build/samples/matmul-O2-pie no_such_function >/dev/null 2>"$tmp/err" && bad "unknown FUNC accepted"
grep -q "no routine named" "$tmp/err" || bad "unknown FUNC message: $(cat "$tmp/err")"
"$skel" frobnicate 2>/dev/null && bad "unknown command accepted"
"$skel" --help | grep -q "skel cfg" || bad "--help"
"$skel" --version | grep -q "^skel " || bad "--version"

[ $fails -eq 0 ] && echo "cli: all checks passed" || echo "cli: $fails failures"
[ $fails -eq 0 ]
