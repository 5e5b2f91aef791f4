#!/bin/sh
# A library routine entered in its middle by another's jump (glibc's
# mempcpy into memmove; tests/landing_lib.S): the routine's entry block is
# shorter than a jump, and a branch target ends it.  The recorder must
# patch it with a jump whose span crosses that target, sending every branch
# there into the trampoline (rec_plan_landings), instead of an int3 taken
# at each call; and the trace must stay exact (skel check).
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"
fails=0
bad() { echo "FAIL: landing: $*"; fails=$((fails+1)); }
cc=${CC:-gcc}
$cc -shared -fPIC -Wl,-soname,liblanding.so -o "$tmp/liblanding.so" tests/landing_lib.S &&
	$cc -O2 -o "$tmp/prog" tests/landing_main.c -L"$tmp" -llanding -Wl,-rpath,"$tmp" ||
	{ echo "FAIL: landing: cannot build the test program"; exit 1; }
"$tmp/prog" 2000 >"$tmp/native.out" || bad "native run failed"
./skel gen --object liblanding.so "$tmp/prog" -o "$tmp/p.c" 2>"$tmp/gen.err" || bad "skel gen: $(cat "$tmp/gen.err")"

SKEL_VERBOSE=1 ./skel record "$tmp/p.c" -o "$tmp/v" -- "$tmp/prog" 2000 >"$tmp/rec.out" 2>"$tmp/rec.err" ||
	bad "record: $(tail -3 "$tmp/rec.err")"
cmp -s "$tmp/rec.out" "$tmp/native.out" || bad "recorded output differs"
st=$(grep 'STATS exit' "$tmp/rec.err")
lands=$(echo "$st" | sed -n 's/.* landing_sites=\([0-9]*\).*/\1/p')
[ "${lands:-0}" -ge 1 ] || bad "no span across a branch target: $st"
# lb_copy's entry (object 1) is never an int3 hit; lb_copy_end's jump, in
# a probed block, and lb_copy_odd's two, in blocks without probes, go to
# the trampoline
grep -q 'int3 site .*liblanding.so+' "$tmp/rec.err" &&
	bad "int3 hits in the library: $(grep 'int3 site .*liblanding' "$tmp/rec.err")"
grep -q 'goes on across the branch target 0x[0-9a-f]* ([1-9][0-9]* new sites' "$tmp/rec.err" ||
	bad "no new site for a branch outside the sites: $(grep 'goes on across' "$tmp/rec.err")"
echo "landing: $(grep 'goes on across' "$tmp/rec.err" | head -3)"

./skel check "$tmp/p.c" -- "$tmp/prog" 2000 >"$tmp/check.out" 2>"$tmp/check.err" ||
	bad "skel check: $(tail -5 "$tmp/check.err")"
grep -q "^check: \([0-9]*\) of \1 accesses match" "$tmp/check.err" ||
	bad "check: $(grep '^check' "$tmp/check.err")"
grep -q "^check: by object: .*liblanding.so [1-9]" "$tmp/check.err" ||
	bad "no library accesses compared: $(grep '^check: by' "$tmp/check.err")"
echo "landing: $(grep '^check: [0-9]' "$tmp/check.err")"
# lb_walk's loop, entered by a block of 4 bytes (a copy and a nop), given
# by hand the two probes a whole-process libc patch once had there (after
# the copy, before the nop), beside its loaded pointer's: the nop's int3
# site goes on across the loop's header and takes in the next site, and
# the loop's back edge, just after it, must get a site of its own
# (before 2026-11-29 the span ended in the middle of the jump the back
# edge went to: SIGTRAP at the first iteration)
walk=$(nm "$tmp/liblanding.so" | awk '$3 == "lb_walk" { print $1 }')
mod=$(grep -l "lb_walk at" "$tmp"/cache/skel/*.c 2>/dev/null | head -1)
if [ -z "$walk" ] || [ -z "$mod" ]; then
	bad "no lb_walk in the library or its skeleton"
else
	hx() { printf '%x' $((0x$walk + $1)); }
	load="probe $(hx 0x14) $(hx 0x11) $(hx 0x23) after dreg rax"
	if grep -q "^$load " "$mod"; then
		sed -i "/^$load /i probe $(hx 0xd) $(hx 0xd) $(hx 0x11) after dreg rax 13\\
probe $(hx 0x10) $(hx 0xd) $(hx 0x11) before dreg rax 10" "$mod"
		touch "$mod"
		SKEL_VERBOSE=1 ./skel record "$tmp/p.c" -o "$tmp/v2" -- "$tmp/prog" 2000 \
			>"$tmp/rec2.out" 2>"$tmp/rec2.err" ||
			bad "record with lb_walk's probes: $(tail -1 "$tmp/rec2.err")"
		cmp -s "$tmp/rec2.out" "$tmp/native.out" || bad "recorded output differs (lb_walk's probes)"
		grep -q "goes on across the branch target 0x$(hx 0x11) (1 new sites" "$tmp/rec2.err" ||
			bad "lb_walk's landing: $(grep 'goes on across' "$tmp/rec2.err")"
	else
		bad "lb_walk's load probe is not where the test puts its own: $(grep "^probe $(hx 0x14) " "$mod")"
	fi
fi
[ "$fails" -eq 0 ] && echo "landing: ok"
[ "$fails" -eq 0 ]
