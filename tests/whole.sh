#!/bin/sh
# Whole-process tracing (issue 11) on a program and a shared library of
# ours (tests/whole_main.c, tests/whole_lib.c): the library gets a skeleton
# module of its own, the recorder patches both, the replay enters the
# library's skeleton at each call through the PLT and the program's again
# at the callback; `skel check` compares both objects' accesses with
# valgrind lackey on the same run.  Also: the executable alone gives fewer
# accesses (the library's are outside), a module missing from the cache or
# recorded with another skeleton is an error naming it.
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"
fails=0
bad() { echo "FAIL: whole: $*"; fails=$((fails+1)); }
cc=${CC:-gcc}
$cc -O2 -shared -fPIC -Wl,-soname,libwhole.so -o "$tmp/libwhole.so" tests/whole_lib.c &&
	$cc -O2 -o "$tmp/prog" tests/whole_main.c -L"$tmp" -lwhole -Wl,-rpath,"$tmp" ||
	{ echo "FAIL: whole: cannot build the test program"; exit 1; }
"$tmp/prog" 300 >"$tmp/native.out" || bad "native run failed"

./skel gen --main-only "$tmp/prog" -o "$tmp/main.c" 2>/dev/null || bad "skel gen --main-only"
grep -q '^object ' "$tmp/main.c" && bad "skel gen --main-only named shared objects"
./skel gen --object libwhole.so "$tmp/prog" -o "$tmp/whole.c" 2>"$tmp/gen.err" || bad "skel gen --object: $(cat "$tmp/gen.err")"
grep -q "^object [0-9a-f]* $tmp/libwhole.so\$" "$tmp/whole.c" || bad "no SKEL-OBJECTS line for libwhole.so"
grep -q "libc.so" "$tmp/whole.c" && bad "--object libwhole.so named libc too"

# record + replay: the library's accesses are there, at its addresses
./skel record "$tmp/whole.c" -o "$tmp/v" -- "$tmp/prog" 300 >"$tmp/rec.out" 2>"$tmp/rec.err" || bad "record: $(cat "$tmp/rec.err")"
cmp -s "$tmp/rec.out" "$tmp/native.out" || bad "recorded output differs"
./skel replay "$tmp/whole.c" "$tmp/v" --format count -o "$tmp/count" 2>"$tmp/rep.err" || bad "replay: $(cat "$tmp/rep.err")"
./skel record "$tmp/main.c" -o "$tmp/vm" -- "$tmp/prog" 300 >/dev/null 2>&1 || bad "record main-only"
./skel replay "$tmp/main.c" "$tmp/vm" --format count -o "$tmp/countm" 2>/dev/null || bad "replay main-only"
whole_n=$(sed -n 's/^total: \([0-9]*\) accesses.*/\1/p' "$tmp/count")
main_n=$(sed -n 's/^total: \([0-9]*\) accesses.*/\1/p' "$tmp/countm")
[ -n "$whole_n" ] && [ -n "$main_n" ] && [ "$whole_n" -gt $((main_n + 600)) ] ||
	bad "whole-process trace has $whole_n accesses, the executable's alone $main_n"
grep -q "not traced (no skeleton): .*libc.so.6" "$tmp/rep.err" || bad "replay did not name libc as not traced: $(cat "$tmp/rep.err")"
echo "whole: executable alone $main_n accesses, with libwhole.so $whole_n"

# --stats per routine covers every object: the library's routines are
# named with it, they add up to its object line, and all the routines to
# the total (before, only the executable's routines were there)
./skel replay "$tmp/whole.c" "$tmp/v" --format count --stats -o /dev/null 2>"$tmp/st" ||
	bad "replay --stats: $(tail -2 "$tmp/st")"
grep -q '^skel: stats: routine wl_apply in libwhole.so: [1-9]' "$tmp/st" ||
	bad "--stats: no line for the library's routine wl_apply: $(grep 'stats: routine' "$tmp/st" | head -3)"
lib_n=$(sed -n 's/^skel: stats: object libwhole.so: \([0-9]*\) accesses.*/\1/p' "$tmp/st")
lib_r=$(awk '/^skel: stats: routine .* in libwhole.so: / { s += $(NF - 14) } END { print s + 0 }' "$tmp/st")
all_r=$(awk '/^skel: stats: routine / { s += $(NF - 14) } END { print s + 0 }' "$tmp/st")
[ -n "$lib_n" ] && [ "$lib_r" = "$lib_n" ] ||
	bad "--stats: libwhole.so's routines add up to $lib_r accesses, its object line says ${lib_n:-nothing}"
[ "$all_r" = "$whole_n" ] || bad "--stats: the routines add up to $all_r accesses, not the $whole_n of the trace"

# a module's skeleton is hashed once: its hash is kept beside it
# (ID.c.hash, with the file's inode, size and time); a skeleton changed
# since is hashed again and compiled anew (a stale hash would replay the
# old module, or another skeleton's)
id=$(sed -n "s|^object \([0-9a-f]*\) $tmp/libwhole.so\$|\1|p" "$tmp/whole.c")
mf="$XDG_CACHE_HOME/skel/$id.c"
[ -n "$id" ] && [ -s "$mf.hash" ] || bad "no kept hash beside the module's skeleton $mf"
nmod=$(ls "$XDG_CACHE_HOME"/skel/mod-*.so | wc -l)
echo '/* changed */' >>"$mf"
./skel replay "$tmp/whole.c" "$tmp/v" --format count -o "$tmp/count2" 2>/dev/null || bad "replay after the module changed"
[ "$(ls "$XDG_CACHE_HOME"/skel/mod-*.so | wc -l)" -eq $((nmod + 1)) ] ||
	bad "a changed module skeleton was not compiled again (kept hash used)"
cmp -s "$tmp/count" "$tmp/count2" || bad "the changed module's replay differs: $(cat "$tmp/count2")"

# --no-slice (and skel trace with fetches, which asks for it): the modules'
# skeletons are <id>-noslice.c in the cache, and the SKEL-OBJECTS line
# names them so, or record and replay, other processes without the option,
# look for <id>.c (skel trace --sim cache failed so on an empty cache; an
# empty cache here too)
export XDG_CACHE_HOME="$tmp/cachens"
./skel gen --no-slice --object libwhole.so "$tmp/prog" -o "$tmp/ns.c" 2>"$tmp/gen.err" ||
	bad "skel gen --no-slice --object: $(tail -2 "$tmp/gen.err")"
grep -q "^object [0-9a-f]*-noslice $tmp/libwhole.so\$" "$tmp/ns.c" ||
	bad "--no-slice: the SKEL-OBJECTS line does not name the unsliced module: $(grep '^object' "$tmp/ns.c")"
if ./skel record "$tmp/ns.c" -o "$tmp/vns" -- "$tmp/prog" 300 >/dev/null 2>"$tmp/err" &&
   ./skel replay "$tmp/ns.c" "$tmp/vns" --format count -o "$tmp/cns" 2>"$tmp/err"; then
	grep -q "^total: $whole_n accesses" "$tmp/cns" ||
		bad "--no-slice: $(grep '^total' "$tmp/cns"), not the $whole_n accesses of the sliced skeletons"
else
	bad "--no-slice record or replay: $(tail -2 "$tmp/err")"
fi
export XDG_CACHE_HOME="$tmp/cache"

# the oracle, both objects
./skel check "$tmp/whole.c" -- "$tmp/prog" 300 >"$tmp/check.out" 2>"$tmp/check.err" ||
	bad "skel check: $(tail -5 "$tmp/check.err")"
grep -q "^check: $whole_n of $whole_n accesses match" "$tmp/check.err" ||
	bad "check did not compare the $whole_n accesses: $(grep '^check' "$tmp/check.err")"
grep -q "^check: not covered, its [1-9][0-9]* accesses not compared: .*libc.so.6" "$tmp/check.err" ||
	bad "check did not name libc as not covered, with its accesses: $(grep 'not covered' "$tmp/check.err")"
echo "whole: $(grep '^check: [0-9]' "$tmp/check.err")"

# linked PLT slots (format.h, patch_link): the program's calls into the
# library enter its skeleton without entry words; the same accesses as
# with them (SKEL_LINK=0), fewer values, and the check above was exact
SKEL_VERBOSE=1 ./skel record "$tmp/whole.c" -o "$tmp/vl" -- "$tmp/prog" 300 >/dev/null 2>"$tmp/vl.err" ||
	bad "record (verbose): $(tail -3 "$tmp/vl.err")"
grep -q "object 0: [1-9][0-9]* of its [0-9]* PLT slots linked" "$tmp/vl.err" ||
	bad "no PLT slot of the program linked: $(grep 'PLT slots' "$tmp/vl.err")"
SKEL_LINK=0 ./skel record "$tmp/whole.c" -o "$tmp/vu" -- "$tmp/prog" 300 >/dev/null 2>&1 || bad "record SKEL_LINK=0"
./skel replay "$tmp/whole.c" "$tmp/vu" --format count -o "$tmp/countu" 2>/dev/null || bad "replay SKEL_LINK=0"
lv=$(sed -n 's/^thread 0: .* \([0-9]*\) values$/\1/p' "$tmp/count")
uv=$(sed -n 's/^thread 0: .* \([0-9]*\) values$/\1/p' "$tmp/countu")
grep -q "^total: $whole_n accesses" "$tmp/countu" || bad "SKEL_LINK=0: $(grep '^total' "$tmp/countu"), not $whole_n accesses"
[ -n "$lv" ] && [ -n "$uv" ] && [ "$lv" -lt "$uv" ] || bad "linked calls record $lv values, unlinked $uv"
echo "whole: values with linked PLT slots $lv, without $uv"
# calls through a linked slot to a routine that returns only to its
# caller (patch_qret, `closed`) record no RETURNED word either: the same
# accesses as with the words (SKEL_QRET=0), fewer values
grep -q "object 0: [0-9]* of its [0-9]* PLT slots linked, [1-9][0-9]* of them returning quietly" "$tmp/vl.err" ||
	bad "no linked call of the program returns quietly: $(grep 'PLT slots' "$tmp/vl.err")"
SKEL_QRET=0 ./skel record "$tmp/whole.c" -o "$tmp/vq" -- "$tmp/prog" 300 >/dev/null 2>&1 || bad "record SKEL_QRET=0"
./skel replay "$tmp/whole.c" "$tmp/vq" --format count -o "$tmp/countq" 2>/dev/null || bad "replay SKEL_QRET=0"
qv=$(sed -n 's/^thread 0: .* \([0-9]*\) values$/\1/p' "$tmp/countq")
grep -q "^total: $whole_n accesses" "$tmp/countq" || bad "SKEL_QRET=0: $(grep '^total' "$tmp/countq"), not $whole_n accesses"
[ -n "$qv" ] && [ "$lv" -lt "$qv" ] || bad "quiet returns record $lv values, RETURNED words $qv"
echo "whole: values with quiet returns $lv, with RETURNED words $qv"
# the link, qret and closed lines that end a section are read from the
# cache after the first run (tail-*.bin beside the set index); one
# damaged there (its first link's GOT slot) is read from the text again:
# the same links and quiet returns, and the trace the same
ls "$XDG_CACHE_HOME"/skel/tail-*.bin >/dev/null 2>&1 || bad "no section's tail kept in the cache"
for f in "$XDG_CACHE_HOME"/skel/tail-*.bin; do
	printf 'XXXXXXXX' | dd of="$f" bs=1 seek=64 conv=notrunc 2>/dev/null
done
SKEL_VERBOSE=1 ./skel record "$tmp/whole.c" -o "$tmp/vt" -- "$tmp/prog" 300 >/dev/null 2>"$tmp/vt.err" ||
	bad "record after the tails were damaged: $(tail -3 "$tmp/vt.err")"
[ "$(grep 'PLT slots' "$tmp/vt.err")" = "$(grep 'PLT slots' "$tmp/vl.err")" ] ||
	bad "damaged tails used: $(grep 'PLT slots' "$tmp/vt.err") (before: $(grep 'PLT slots' "$tmp/vl.err"))"
./skel replay "$tmp/whole.c" "$tmp/vt" --format count -o "$tmp/countt" 2>/dev/null &&
	cmp -s "$tmp/count" "$tmp/countt" || bad "replay after the tails were damaged: $(tail -1 "$tmp/countt")"

# SKEL_MAPS=1 (skel check's; a user's by hand): the maps read from the
# plan cache go down skel run's pipe as references (MAP_REF), which the
# online replay passes by, as a chunk of no thread (vt_chunk_global)
SKEL_MAPS=1 ./skel run "$tmp/whole.c" --format count -o "$tmp/countm" -- "$tmp/prog" 300 \
	>/dev/null 2>"$tmp/maps.err" || bad "skel run with SKEL_MAPS=1: $(tail -3 "$tmp/maps.err")"
grep -q "^total: [1-9][0-9]* accesses" "$tmp/countm" || bad "skel run with SKEL_MAPS=1: $(tail -2 "$tmp/countm")"

# a stub that code outside every analyzed routine calls is not linked
# (its callee's entry word keeps the replay's stream in step), the others
# are (tests/hidcall.s)
if $cc -o "$tmp/hid" tests/hidcall.s && ./skel gen --main-only "$tmp/hid" -o "$tmp/hid.c" 2>/dev/null; then
	pc=$(objdump -d "$tmp/hid" | sed -n 's/^0*\([0-9a-f]*\) <putchar@plt>:$/\1/p')
	ps=$(objdump -d "$tmp/hid" | sed -n 's/^0*\([0-9a-f]*\) <puts@plt>:$/\1/p')
	grep -q "^link $pc " "$tmp/hid.c" || bad "putchar@plt ($pc) not linked: $(grep '^link' "$tmp/hid.c")"
	grep -q "^link $ps " "$tmp/hid.c" && bad "puts@plt ($ps), called from unanalyzed code, linked"
else
	bad "cannot build or gen tests/hidcall.s"
fi

# online: the same trace
./skel run "$tmp/whole.c" --format count -o "$tmp/countr" -- "$tmp/prog" 300 >/dev/null 2>&1 || bad "skel run"
cmp -s "$tmp/count" "$tmp/countr" || bad "skel run's counts differ from record + replay"

# the library's module gone from the cache: record says which and why
id=$(sed -n 's/^object \([0-9a-f]*\) .*libwhole.so$/\1/p' "$tmp/whole.c")
mv "$XDG_CACHE_HOME/skel/$id.c" "$tmp/mod.c"
./skel record "$tmp/whole.c" -o "$tmp/v2" -- "$tmp/prog" 3 >/dev/null 2>"$tmp/miss.err" && bad "record without the module succeeded"
grep -q "the skeleton of $tmp/libwhole.so is not in the cache" "$tmp/miss.err" || bad "missing module not named: $(cat "$tmp/miss.err")"
# a module whose patch the recorder cannot read: the program runs unrecorded,
# and record says so with a non-zero status, never a silent empty result
sed '0,/^probe /s/^probe /probx /' "$tmp/mod.c" >"$XDG_CACHE_HOME/skel/$id.c"
./skel record "$tmp/whole.c" -o "$tmp/v3" -- "$tmp/prog" 3 >/dev/null 2>"$tmp/bad.err" && bad "record with a damaged module patch succeeded"
grep -q "unknown directive 'probx'" "$tmp/bad.err" && grep -q "nothing was recorded" "$tmp/bad.err" ||
	bad "damaged module patch not reported: $(cat "$tmp/bad.err")"
# a module of the same library from another skeleton of it: the replay refuses
sed 's/^const unsigned long long sk_patch_hash = .*/const unsigned long long sk_patch_hash = 0x1ull;/' "$tmp/mod.c" >"$XDG_CACHE_HOME/skel/$id.c"
cmp -s "$tmp/mod.c" "$XDG_CACHE_HOME/skel/$id.c" && bad "test: could not change the module's patch hash"
./skel replay "$tmp/whole.c" "$tmp/v" --format count -o /dev/null 2>"$tmp/other.err" && bad "replay with another module's patch succeeded"
grep -q "libwhole.so was recorded with another skeleton of it" "$tmp/other.err" || bad "other patch not named: $(cat "$tmp/other.err")"
# a plan kept in the cache is one object's at one number: libwhole.so is
# object 1 of prog and object 2 of prog2 (libfirst.so before it), and the
# words its trampolines record carry that number, so prog2 recorded after
# prog in one cache must replay as it does from an empty cache (it
# desynchronised on prog's plan: gzip after grep, both with libc)
echo 'int first_fn(int x) { return x * 3 + 1; }' >"$tmp/first.c"
$cc -O2 -shared -fPIC -Wl,-soname,libfirst.so -o "$tmp/libfirst.so" "$tmp/first.c" &&
	$cc -O2 -o "$tmp/prog2" tests/whole_main.c -Wl,--no-as-needed -L"$tmp" -lfirst -lwhole -Wl,-rpath,"$tmp" ||
	bad "cannot build prog2"
export XDG_CACHE_HOME="$tmp/cache2"
./skel gen --object libwhole.so "$tmp/prog" -o "$tmp/p1.c" 2>/dev/null &&
	./skel gen --object libfirst.so --object libwhole.so "$tmp/prog2" -o "$tmp/p2.c" 2>/dev/null ||
	bad "gen of prog or prog2"
[ "$(sed -n '/^object /s/.* //p' "$tmp/p2.c" | tr '\n' ' ')" = "$tmp/libfirst.so $tmp/libwhole.so " ] ||
	bad "prog2's objects are not libfirst.so then libwhole.so: $(grep '^object ' "$tmp/p2.c")"
XDG_CACHE_HOME="$tmp/cache3" ./skel gen --object libfirst.so --object libwhole.so "$tmp/prog2" -o "$tmp/p3.c" 2>/dev/null &&
	XDG_CACHE_HOME="$tmp/cache3" ./skel record "$tmp/p3.c" -o "$tmp/v5" -- "$tmp/prog2" 50 >/dev/null &&
	XDG_CACHE_HOME="$tmp/cache3" ./skel replay "$tmp/p3.c" "$tmp/v5" --format count -o "$tmp/c5" 2>/dev/null ||
	bad "prog2 from an empty cache"
./skel record "$tmp/p1.c" -o "$tmp/v4" -- "$tmp/prog" 50 >/dev/null || bad "record prog"
./skel record "$tmp/p2.c" -o "$tmp/v6" -- "$tmp/prog2" 50 >/dev/null || bad "record prog2"
./skel replay "$tmp/p2.c" "$tmp/v6" --format count -o "$tmp/c6" 2>"$tmp/c6.err" ||
	bad "prog2 recorded after prog in one cache: $(head -2 "$tmp/c6.err")"
grep -q '^total: [1-9]' "$tmp/c5" && cmp -s "$tmp/c5" "$tmp/c6" ||
	bad "prog2's counts after prog's plans differ from an empty cache's: $(tail -1 "$tmp/c5") / $(tail -1 "$tmp/c6")"
export XDG_CACHE_HOME="$tmp/cache"

# the default scope is the whole process, libc included: gen names every
# object of the closure, check compares them all.  libc's module is made
# once into build/test-cache (a minute or two on 2 cores the first time,
# as for a user's first run; kept between runs of make check)
unset SKEL_SCOPE
export XDG_CACHE_HOME="$(pwd)/build/test-cache"
./skel gen "$tmp/prog" -o "$tmp/d.c" 2>"$tmp/d.err" || bad "default gen: $(tail -2 "$tmp/d.err")"
[ "$(sed -n '/^object /s/.*\///p' "$tmp/d.c" | sort | tr '\n' ' ')" = "ld-linux-x86-64.so.2 libc.so.6 libwhole.so " ] ||
	bad "default gen does not name libwhole.so, libc.so.6 and the loader: $(grep '^object ' "$tmp/d.c")"
SKEL_SCOPE=main ./skel gen "$tmp/prog" -o "$tmp/dm.c" 2>/dev/null && ! grep -q '^object ' "$tmp/dm.c" ||
	bad "SKEL_SCOPE=main: gen named shared objects"
SKEL_SCOPE=main ./skel gen --whole-process "$tmp/prog" -o "$tmp/dw.c" 2>/dev/null && cmp -s "$tmp/d.c" "$tmp/dw.c" ||
	bad "SKEL_SCOPE=main gen --whole-process differs from the default"
./skel check -- "$tmp/prog" 300 >"$tmp/dc.out" 2>"$tmp/dc.err" || bad "default check: $(grep -v '^skel: gen' "$tmp/dc.err" | head -8)"
cmp -s "$tmp/dc.out" "$tmp/native.out" || bad "default check: output differs from native"
grep -q '^check: \([0-9]*\) of \1 accesses match' "$tmp/dc.err" || bad "default check not exact"
grep -q '^check: by object: prog [0-9]* ([0-9.]*%), libwhole.so [1-9][0-9]* ([0-9.]*%), libc.so.6 [1-9][0-9]* ' "$tmp/dc.err" ||
	bad "default check did not compare libwhole.so and libc.so.6: $(grep '^check' "$tmp/dc.err")"
# the loader, patched when the program starts (its lazy binding, its exit
# work), compared too; what it did before is named with its count
grep -q '^check: by object: .*ld-linux-x86-64.so.2 [1-9][0-9]* ' "$tmp/dc.err" ||
	bad "default check did not compare the loader: $(grep '^check' "$tmp/dc.err")"
grep -q "^check: not compared: the loader's [0-9]* accesses before the program started" "$tmp/dc.err" ||
	bad "default check did not name the loader's work before the start: $(grep '^check' "$tmp/dc.err")"
echo "whole: default scope: $(grep -m1 "^check: [0-9]" "$tmp/dc.err"); $(grep "^check: by object" "$tmp/dc.err")"
./skel trace --format count -o "$tmp/dt" -- "$tmp/prog" 300 >/dev/null 2>"$tmp/dt.err" || bad "default trace: $(tail -2 "$tmp/dt.err")"
./skel trace --main-only --format count -o "$tmp/dtm" -- "$tmp/prog" 300 >/dev/null 2>&1 || bad "trace --main-only"
[ "$(sed -n 's/^total: \([0-9]*\) .*/\1/p' "$tmp/dtm")" = "$main_n" ] || bad "trace --main-only: $(tail -1 "$tmp/dtm"), the executable's skeleton gave $main_n"
dt_n=$(sed -n 's/^total: \([0-9]*\) .*/\1/p' "$tmp/dt")
[ -n "$dt_n" ] && [ "$dt_n" -gt "$whole_n" ] || bad "default trace: $dt_n accesses, no more than with libwhole.so alone ($whole_n)"
grep -q 'not traced.*libc.so' "$tmp/dt.err" && bad "default trace names libc as not traced"
# threads followed to their exit system call: libc's thread exit code
# (after the recorder's key destructor: the program's destructors, the
# tcache's release, the stack's) is recorded, so the replay neither stops
# short nor runs on past the exit; 30 rounds reuse stacks and TLS
$cc -O2 -pthread -o "$tmp/thexit" tests/thexit.c || bad "cannot build tests/thexit.c"
./skel gen "$tmp/thexit" -o "$tmp/tx.c" 2>/dev/null || bad "gen thexit"
./skel record "$tmp/tx.c" -o "$tmp/txv" -- "$tmp/thexit" 30 >"$tmp/tx.out" 2>"$tmp/txr.err" || bad "record thexit: $(tail -2 "$tmp/txr.err")"
[ "$(cat "$tmp/tx.out")" = "$("$tmp/thexit" 30)" ] || bad "thexit's output under record differs"
./skel replay "$tmp/tx.c" "$tmp/txv" --format count -o "$tmp/txc" 2>"$tmp/txp.err" || bad "replay thexit: $(tail -2 "$tmp/txp.err")"
grep -q 'desynchronised\|not traced: the accesses of libc.s thread exit\|still running' "$tmp/txp.err" &&
	bad "replay of thexit: $(grep -v 'no skeleton' "$tmp/txp.err" | head -3)"
grep -q '^total: [1-9]' "$tmp/txc" || bad "replay of thexit: no accesses"
# a buffer that fills where libc has blocked every signal (around
# pthread_create's clone, a thread's last steps) faulted with SIGSEGV
# blocked: the kernel killed about one run in seven (rec_make_room)
k=0
for i in 1 2 3 4 5 6 7 8; do
	./skel record "$tmp/tx.c" -o "$tmp/txv" -- "$tmp/thexit" 30 >/dev/null 2>"$tmp/txr.err" || k=$((k+1))
done
[ $k -eq 0 ] || bad "record thexit: $k of 8 runs failed: $(tail -2 "$tmp/txr.err")"
./skel check -- "$tmp/thexit" 2 >/dev/null 2>"$tmp/txk.err" || bad "check thexit: $(grep -v '^skel: gen' "$tmp/txk.err" | head -6)"
grep -q '^check: \([0-9]*\) of \1 accesses match.* 9 threads$' "$tmp/txk.err" ||
	bad "check thexit not exact over its 9 threads: $(grep '^check' "$tmp/txk.err" | head -2)"
echo "whole: thread exits: $(grep -m1 '^check: [0-9]' "$tmp/txk.err")"
# a plugin loaded with dlopen (tests/plugin.c): named with --plugin, it
# gets a skeleton of its own, the recorder patches it when dlopen maps it,
# and check compares its accesses too (a loop, a callback into the
# program, libc from the plugin); without --plugin it is named as not traced
$cc -O2 -shared -fPIC -o "$tmp/libplug.so" tests/plugin.c &&
	$cc -O2 -o "$tmp/plugmain" tests/plugin_main.c -ldl || bad "cannot build the plugin test"
./skel gen --plugin "$tmp/libplug.so" "$tmp/plugmain" -o "$tmp/pl.c" 2>"$tmp/pl.err" || bad "gen --plugin: $(tail -2 "$tmp/pl.err")"
grep -q "^object [0-9a-f]* $tmp/libplug.so\$" "$tmp/pl.c" || bad "gen --plugin: no object line for the plugin"
./skel check "$tmp/pl.c" -- "$tmp/plugmain" "$tmp/libplug.so" 300 >"$tmp/pl.out" 2>"$tmp/plk.err" ||
	bad "check with a plugin: $(grep -v '^skel: gen' "$tmp/plk.err" | head -8)"
[ "$(cat "$tmp/pl.out")" = "$("$tmp/plugmain" "$tmp/libplug.so" 300)" ] || bad "plugin: output differs"
grep -q '^check: by object: plugmain [1-9][0-9]* ([0-9.]*%), libc.so.6 [1-9][0-9]* ([0-9.]*%), .*libplug.so [1-9][0-9]* ' "$tmp/plk.err" ||
	bad "check did not compare the plugin's accesses: $(grep '^check' "$tmp/plk.err")"
echo "whole: plugin: $(grep -m1 '^check: [0-9]' "$tmp/plk.err"); $(grep '^check: by object' "$tmp/plk.err")"
./skel gen "$tmp/plugmain" -o "$tmp/np.c" 2>/dev/null &&
	./skel record "$tmp/np.c" -o "$tmp/np.v" -- "$tmp/plugmain" "$tmp/libplug.so" 30 >/dev/null 2>&1 &&
	./skel replay "$tmp/np.c" "$tmp/np.v" --format count -o /dev/null 2>"$tmp/np.err" || bad "plugin without --plugin: record or replay failed"
grep -q "not traced (no skeleton): .*libplug.so" "$tmp/np.err" || bad "an uncovered plugin not named: $(cat "$tmp/np.err")"
./skel check --main-only "$tmp/d.c" -- "$tmp/prog" 3 >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q 'SKEL decides what is traced' "$tmp/err" || bad "check --main-only SKEL: $(cat "$tmp/err")"
export XDG_CACHE_HOME="$tmp/cache" SKEL_SCOPE=main

# make check-full: libc covered too (its module takes a minute or two to
# compile into the private cache): printf, qsort with a callback,
# malloc/free, strlen and memcpy (the variant this CPU's IFUNC picks), all
# compared with lackey
if [ -n "$SKEL_FULL" ]; then
	$cc -O2 -pthread -o "$tmp/wp_libc" tests/wp_libc.c || bad "cannot build tests/wp_libc.c"
	./skel gen --whole-process "$tmp/wp_libc" -o "$tmp/wpl.c" 2>"$tmp/wpl.err" || bad "gen --whole-process: $(tail -2 "$tmp/wpl.err")"
	grep -q "libc.so.6\$" "$tmp/wpl.c" || bad "no SKEL-OBJECTS line for libc"
	./skel check "$tmp/wpl.c" -- "$tmp/wp_libc" 20 >/dev/null 2>"$tmp/wplc.err" || bad "check with libc: $(tail -5 "$tmp/wplc.err")"
	grep -q "^check: \([0-9]*\) of \1 accesses match" "$tmp/wplc.err" || bad "check with libc not exact"
	grep -q "^check: not covered.*libc.so" "$tmp/wplc.err" && bad "libc not compared"
	echo "whole: libc: $(grep -m1 '^check: [0-9]' "$tmp/wplc.err")"
	# C++: libstdc++'s containers, strings and streams (its module is
	# made into the private cache: a few minutes the first time)
	${CXX:-g++} -O2 -o "$tmp/cxxstl" tests/cxxstl.cc || bad "cannot build tests/cxxstl.cc"
	./skel check --whole-process -- "$tmp/cxxstl" 200 >"$tmp/cx.out" 2>"$tmp/cx.err" ||
		bad "check of C++: $(grep -v '^skel: gen' "$tmp/cx.err" | head -8)"
	[ "$(cat "$tmp/cx.out")" = "$("$tmp/cxxstl" 200)" ] || bad "C++: output differs"
	grep -q '^check: by object: cxxstl [0-9]* ([0-9.]*%), libstdc++.so.6 [1-9][0-9]* ' "$tmp/cx.err" ||
		bad "check of C++ did not compare libstdc++: $(grep '^check' "$tmp/cx.err")"
	echo "whole: C++: $(grep -m1 '^check: [0-9]' "$tmp/cx.err"); $(grep '^check: by object' "$tmp/cx.err")"
fi
[ $fails -eq 0 ] && echo "whole: ok" || { echo "whole: $fails failures"; exit 1; }
