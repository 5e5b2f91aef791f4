#!/bin/sh
# skel deps against ldd, which runs the real loader (ld.so --list): the
# same objects at the same paths in the same order, and the same libraries
# not found, for Debian programs and for programs built here with DT_RPATH
# $ORIGIN/lib, DT_RUNPATH, LD_LIBRARY_PATH and a missing library.  The
# identity printed is the build-id readelf shows.
cd "$(dirname "$0")/.." || exit 1
# the executable's scope (skel gen --main-only) unless a case says
# otherwise: whole-process tracing is tests/whole.sh's
export SKEL_SCOPE=main
skel=build/san/skel
fails=0
tmp=$(mktemp -d /tmp/skel-deps-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export ASAN_OPTIONS=detect_leaks=1
bad() { echo "FAIL: $*"; fails=$((fails+1)); }

# "PATH" per object ldd lists (the vDSO has no file), "missing:NAME" per
# library it did not find
ldd_found() { ldd "$1" | awk '/linux-vdso/ || /=> not found/ {next} /=>/ {print $3; next} {print $1}'; }
ldd_missing() { ldd "$1" | awk '/=> not found/ {print "missing:" $1}' | sort; }
skel_found() { "$skel" deps "$1" 2>"$tmp/err" | tail -n +2 | cut -f2; }
skel_missing() { sed -n 's/^skel: [^:]*: \([^:]*\): not found (needed by .*/missing:\1/p' "$tmp/err" | sort; }

# compare APP [WHY]
compare() {
	ldd_found "$1" >"$tmp/want"
	ldd_missing "$1" >"$tmp/want-missing"
	skel_found "$1" >"$tmp/got"
	skel_missing >"$tmp/got-missing"
	grep -v '^skel: .*: not found (needed by' "$tmp/err" | grep -q . &&
		bad "skel deps $1${2:+ ($2)}: $(head -3 "$tmp/err")"
	cmp -s "$tmp/want" "$tmp/got" ||
		bad "skel deps $1${2:+ ($2)} differs from ldd: $(diff "$tmp/want" "$tmp/got" | tr '\n' ' ')"
	cmp -s "$tmp/want-missing" "$tmp/got-missing" ||
		bad "skel deps $1${2:+ ($2)}: missing libraries differ from ldd: $(diff "$tmp/want-missing" "$tmp/got-missing" | tr '\n' ' ')"
	[ -s "$tmp/want" ] || bad "ldd listed nothing for $1"
}

for app in /usr/bin/ls /usr/bin/grep /usr/bin/bzip2 /usr/bin/xz /usr/bin/python3; do
	[ -f "$app" ] || { [ "$app" = /usr/bin/python3 ] || bad "$app missing"; continue; }
	compare "$app"
	"$skel" deps "$app" >/dev/null 2>&1 || bad "skel deps $app exited $?"
done

# identity: the program's and libc's build-ids as readelf prints them
for f in /usr/bin/bzip2 /usr/lib/x86_64-linux-gnu/libc.so.6; do
	want=$(readelf -n "$f" | sed -n 's/.*Build ID: //p')
	"$skel" deps /usr/bin/bzip2 | awk -F'\t' -v f="$(basename "$f")" '$2 ~ f {print $3}' >"$tmp/id"
	[ "$(cat "$tmp/id")" = "build-id:$want" ] || bad "identity of $f: $(cat "$tmp/id"), want build-id:$want"
done

# programs with their own libraries under $ORIGIN/lib
mkdir -p "$tmp/app/lib" "$tmp/llp"
printf 'int b_fn(int x) { return x + 1; }\n' >"$tmp/b.c"
printf 'int b_fn(int); int a_fn(int x) { return b_fn(x); }\n' >"$tmp/a.c"
printf 'int a_fn(int); int main(void) { return a_fn(0) - 1; }\n' >"$tmp/main.c"
printf 'int b_fn(int); int main(void) { return b_fn(0) - 1; }\n' >"$tmp/mainb.c"
so="gcc -O1 -shared -fPIC -Wl,--no-as-needed"
cc="gcc -O1 -Wl,--no-as-needed -Wl,-rpath-link,$tmp/app/lib"
L="-L$tmp/app/lib"
$so -Wl,-soname,libb.so -o "$tmp/app/lib/libb.so" "$tmp/b.c" &&
$so -Wl,-soname,liba.so -o "$tmp/app/lib/liba.so" "$tmp/a.c" $L -lb &&
$so -Wl,-soname,libq.so -Wl,--enable-new-dtags -Wl,-rpath,/nonexistent \
	-o "$tmp/app/lib/libq.so" "$tmp/b.c" $L -lb &&
$cc -Wl,--disable-new-dtags -Wl,-rpath,'$ORIGIN/lib' -o "$tmp/app/rpath" "$tmp/main.c" $L -la &&
$cc -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN/lib' -o "$tmp/app/runpath" "$tmp/main.c" $L -la &&
$cc -Wl,--disable-new-dtags -Wl,-rpath,'$ORIGIN/lib' -o "$tmp/app/rpath-q" "$tmp/mainb.c" $L -lq &&
$cc -o "$tmp/app/plain" "$tmp/mainb.c" $L -lb || bad "building the test programs"
cp "$tmp/app/lib/liba.so" "$tmp/app/lib/libb.so" "$tmp/llp/"

compare "$tmp/app/rpath" "DT_RPATH \$ORIGIN/lib, for liba's need too"
compare "$tmp/app/runpath" "DT_RUNPATH: not for liba's need"
compare "$tmp/app/rpath-q" "libq's DT_RUNPATH turns the program's DT_RPATH off"
compare "$tmp/app/plain" "libb.so nowhere"
LD_LIBRARY_PATH="$tmp/llp" compare "$tmp/app/rpath" "LD_LIBRARY_PATH after DT_RPATH"
LD_LIBRARY_PATH="$tmp/llp" compare "$tmp/app/runpath" "LD_LIBRARY_PATH before DT_RUNPATH"
grep -q "llp/liba.so" "$tmp/got" || bad "LD_LIBRARY_PATH did not serve the DT_RUNPATH program"
LD_LIBRARY_PATH="$tmp/llp" compare "$tmp/app/plain" "LD_LIBRARY_PATH"
# moved elsewhere, $ORIGIN follows the program
mv "$tmp/app" "$tmp/moved"
compare "$tmp/moved/rpath" "moved"
grep -q "^$tmp/moved/lib/libb.so\$" "$tmp/got" || bad "\$ORIGIN not expanded to the moved program's directory"

# a library not found: exit 1, one line naming it and who needs it
"$skel" deps "$tmp/moved/plain" >/dev/null 2>"$tmp/err" && bad "skel deps with a missing library exited 0"
grep -qx "skel: $tmp/moved/plain: libb.so: not found (needed by $tmp/moved/plain; searched its DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH, /etc/ld.so.cache and the default directories)" "$tmp/err" ||
	bad "missing library message: $(cat "$tmp/err")"
"$skel" deps "$tmp/b.c" >/dev/null 2>"$tmp/err" && bad "skel deps of a C file exited 0"
grep -q "^skel: $tmp/b.c: not an ELF file" "$tmp/err" || bad "skel deps of a C file: $(cat "$tmp/err")"
"$skel" deps >/dev/null 2>&1 && bad "skel deps without APP exited 0"
"$skel" --help | grep -q "skel deps APP" || bad "--help does not name skel deps"

[ $fails -eq 0 ] && echo "deps: all passed"
[ $fails -eq 0 ]
