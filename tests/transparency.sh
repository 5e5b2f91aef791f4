#!/bin/sh
# A recorded program behaves as natively even when it blocks every signal
# and has its own SIGTRAP handler: tests/sigmask.c recorded with every probe
# site an int3 (SKEL_INT3=1) gives the native output and status, the int3
# sites fire, and the trace matches valgrind lackey.  And when it installs
# its SIGSEGV handler with a strict-ISO-C signal() (tests/sysvsignal.c:
# glibc's __sysv_signal), or with sigset() and sighold(), the recorder's
# buffer still fills and flushes.
cd "$(dirname "$0")/.." || exit 1
# the executable's scope (skel gen --main-only) unless a case says
# otherwise: whole-process tracing is tests/whole.sh's
export SKEL_SCOPE=main
skel=./skel
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"
fails=0
bad() { echo "FAIL: $*"; fails=$((fails+1)); }

for o in O0 O2; do
	app="$tmp/sigmask-$o"
	${CC:-gcc} -$o -o "$app" tests/sigmask.c || { bad "cannot build tests/sigmask.c"; continue; }
	"$app" 3000 >"$tmp/native" 2>&1; nst=$?
	$skel gen "$app" -o "$tmp/s.c" 2>/dev/null || { bad "$o: gen"; continue; }
	SKEL_INT3=1 SKEL_VERBOSE=1 $skel record "$tmp/s.c" -o "$tmp/v" -- "$app" 3000 >"$tmp/rec" 2>"$tmp/rec.err"
	rst=$?
	[ $rst -eq $nst ] || bad "$o: status $rst recorded, $nst native: $(tail -2 "$tmp/rec.err")"
	cmp -s "$tmp/native" "$tmp/rec" || bad "$o: output differs when recorded"
	hits=$(grep -o 'int3_hits=[0-9]*' "$tmp/rec.err" | tail -1 | cut -d= -f2)
	[ "${hits:-0}" -gt 0 ] || bad "$o: no int3 site was hit (int3_hits=${hits:-none})"
	if SKEL_INT3=1 $skel check "$tmp/s.c" -- "$app" 300 >/dev/null 2>"$tmp/c.err"; then
		echo "transparency $o: $hits int3 hits; $(grep '^check:' "$tmp/c.err")"
	else
		bad "$o: skel check with int3 sites: $(tail -3 "$tmp/c.err")"
	fi
done
# sysvsignal: signal() as strict ISO C has it; sigset: sigset() and
# sighold() (each calls libc's own sigaction or sigprocmask)
for v in sysvsignal sigset; do
	app="$tmp/$v"
	case $v in
	sysvsignal) fl= ;;
	sigset) fl="-D_XOPEN_SOURCE=700 -DSYSV_SIGSET -Wno-deprecated-declarations" ;;
	esac
	${CC:-gcc} -std=c11 $fl -O2 -o "$app" tests/sysvsignal.c || { bad "cannot build $v from tests/sysvsignal.c"; continue; }
	"$app" >"$tmp/native" 2>&1; nst=$?
	$skel gen "$app" -o "$tmp/s.c" 2>/dev/null || { bad "$v: gen"; continue; }
	$skel record "$tmp/s.c" -o "$tmp/v" -- "$app" >"$tmp/rec" 2>"$tmp/rec.err"; rst=$?
	[ $rst -eq $nst ] || bad "$v: status $rst recorded, $nst native: $(tail -2 "$tmp/rec.err")"
	cmp -s "$tmp/native" "$tmp/rec" || bad "$v: output differs when recorded"
	# 200000 steps: the values fill the 256 KiB buffer at least once
	if $skel check "$tmp/s.c" -- "$app" 200000 >/dev/null 2>"$tmp/c.err"; then
		echo "transparency $v: $(grep '^check:' "$tmp/c.err")"
	else
		bad "$v: skel check: $(tail -3 "$tmp/c.err")"
	fi
done
[ $fails -eq 0 ] && echo "transparency: all passed"
[ $fails -eq 0 ]
