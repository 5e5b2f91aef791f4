#!/bin/sh
# What a trace says about objects (issue 14): --symbolize names the
# object of every access, --roi and --roi-markers keep the accesses of a
# region.  tests/heapobj.c touches objects of known sizes from separate
# functions: the bytes per object and per region are worked out by hand
# from its source (comments there), the heap blocks' bases come from the
# program itself (stderr) and the global's address from nm.  The threads
# sample checks per-thread stacks.  Offline (record + replay) and online
# (run) give the same objects.
cd "$(dirname "$0")/.." || exit 1
# the executable's scope (skel gen --main-only) unless a case says
# otherwise: whole-process tracing is tests/whole.sh's
export SKEL_SCOPE=main
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"
fails=0
bad() { echo "FAIL: objects: $*"; fails=$((fails+1)); }
${CC:-gcc} -O1 -fno-tree-vectorize -no-pie -fno-pie -Ireplay -o "$tmp/heapobj" tests/heapobj.c ||
	{ echo "FAIL: cannot build tests/heapobj.c"; exit 1; }
./skel gen "$tmp/heapobj" -o "$tmp/ho.c" 2>/dev/null || bad "skel gen"
./skel record "$tmp/ho.c" -o "$tmp/ho.v" -- "$tmp/heapobj" 2>"$tmp/bases" || bad "skel record"

# bytes per object and kind ("OBJECT,KIND BYTES" lines, sorted), heap,
# static and TLS objects only (the stack's share depends on the compiler;
# .got and completed.0 are crt's)
bytes() {
	awk -F, 'NR > 1 && $6 !~ /^stack#/ && $6 !~ /^\.got/ && $6 !~ /^completed/ {
		o = $6; sub(/\+0x[0-9a-f]*$/, "", o); k[o "," $3] += $4 }
		END { for (x in k) print x, k[x] }' "$1" | sort
}
# $1: what, $2: csv, then the expected lines
expect() {
	what=$1; f=$2; shift 2
	printf '%s\n' "$@" | sort >"$tmp/want"
	bytes "$f" >"$tmp/got"
	cmp -s "$tmp/want" "$tmp/got" || bad "$what: bytes per object differ (want, got):
$(cat "$tmp/want")
--
$(cat "$tmp/got")"
}

./skel replay "$tmp/ho.c" "$tmp/ho.v" --format csv --symbolize -o "$tmp/all.csv" 2>"$tmp/err" ||
	bad "replay --symbolize: $(cat "$tmp/err")"
head -1 "$tmp/all.csv" | grep -qx 'thread,pc,kind,size,addr,object' || bad "csv header: $(head -1 "$tmp/all.csv")"
expect "whole run" "$tmp/all.csv" "heap#1,W 800" "heap#2,W 400" "heap#2,R 400" "glob,R 128" \
	"glob,W 128" "heap#3,W 800" "heap#4,W 1600" "heap#4,R 80" "tls#0,R 8" "tls#0,W 8" \
	"heap#5,W 8192" "heap#6,W 80"
# offsets: each heap#N access is at the block's base (the program's
# own pointer) plus the offset; each glob access at nm's address plus it
glob=$(nm "$tmp/heapobj" | awk '$3 == "glob" { print $1 }')
awk -F, 'NR > 1 && $6 ~ /^(heap#|glob[+])/ { sub(/[+]0x/, " ", $6); print $5, $6 }' "$tmp/all.csv" |
while read -r addr obj off; do
	case $obj in glob) base=$glob ;; *) base=$(sed -n "s/^$obj=//p" "$tmp/bases") ;; esac
	[ $((0x$base + 0x$off)) -eq $((addr)) ] || { echo "$addr $obj+0x$off: base $base"; break; }
done >"$tmp/off"
[ -s "$tmp/off" ] && bad "offsets: $(cat "$tmp/off")"
[ "$(grep -c '^heap#[1-6]=' "$tmp/bases")" = 6 ] || bad "heapobj printed no block bases: $(cat "$tmp/bases")"
# a freed block's address reused: a new number (heap#3 at heap#1's place
# with glibc; the offsets above check each against its own base)
grep -q "^heap#3=$(sed -n 's/^heap#1=//p' "$tmp/bases")\$" "$tmp/bases" ||
	echo "objects: note: heap#3 did not reuse heap#1's address"

# regions of interest, offline
roi() {
	./skel replay "$tmp/ho.c" "$tmp/ho.v" --format csv --symbolize "$@" -o "$tmp/roi.csv" 2>"$tmp/err" ||
		bad "replay $*: $(cat "$tmp/err")"
}
roi --roi touch_w
expect "--roi touch_w" "$tmp/roi.csv" "heap#1,W 800" "heap#2,W 400" "heap#3,W 800" "heap#4,W 1600" \
	"heap#5,W 8192" "heap#6,W 80"
roi --roi touch_r
expect "--roi touch_r" "$tmp/roi.csv" "heap#2,R 400" "heap#4,R 80"
roi --roi touch_glob --roi touch_tls
expect "--roi touch_glob --roi touch_tls" "$tmp/roi.csv" "glob,R 128" "glob,W 128" "tls#0,R 8" "tls#0,W 8"
roi --roi-markers
expect "--roi-markers" "$tmp/roi.csv" "heap#4,R 80"
# a region's accesses are all inside it: touch_r's are its loop's reads
# and its return's (8 bytes of stack per call)
roi --roi touch_r
[ "$(awk -F, 'NR > 1 && $6 ~ /^stack#0/ { n += $4 } END { print n }' "$tmp/roi.csv")" = 16 ] ||
	bad "--roi touch_r: stack bytes other than its two returns"
./skel replay "$tmp/ho.c" "$tmp/ho.v" --format count --roi touch_w >"$tmp/count" 2>&1
grep -q "^total: 1490 accesses, 6 reads, 1484 writes, 11920 bytes" "$tmp/count" || bad "--roi touch_w --format count: $(cat "$tmp/count")"

# online: the same objects and regions
./skel run "$tmp/ho.c" --format csv --symbolize --roi touch_r -o "$tmp/on.csv" -- "$tmp/heapobj" 2>/dev/null ||
	bad "skel run --symbolize --roi"
expect "skel run --roi touch_r" "$tmp/on.csv" "heap#2,R 400" "heap#4,R 80"
./skel trace --format text --symbolize -o "$tmp/on.txt" -- "$tmp/heapobj" 2>/dev/null || bad "skel trace --symbolize"
[ "$(grep -c '^[0-9a-f]* W 8 [0-9a-f]* heap#4[+]0x' "$tmp/on.txt")" = 200 ] ||
	bad "skel trace --format text --symbolize: heap#4 writes"

# threads: each worker's own frame is its stack, the jobs it reads are
# main's (stack#0), the arrays are nm's symbols
./skel trace --format csv --symbolize -o "$tmp/th.csv" -- build/samples/threads-O2-nopie 200 >/dev/null 2>&1 ||
	bad "threads: skel trace"
for t in 1 2; do
	grep -q "^$t,.*,stack#$t\$" "$tmp/th.csv" || bad "threads: thread $t has no access to stack#$t"
	grep -q "^$t,.*,stack#0\$" "$tmp/th.csv" || bad "threads: thread $t reads no job on main's stack"
	[ "$(grep -c "^$t,.*,R,8,.*,shared_in+0x" "$tmp/th.csv")" = 100 ] || bad "threads: thread $t: shared_in reads"
done
grep -q ',[?]$' "$tmp/th.csv" && bad "threads: accesses of no object: $(grep -m3 ',[?]$' "$tmp/th.csv")"

# a symbol inside a stretch of its section that no symbol names: what
# the lookups cache for the stretch (.data) must not take the symbol's
# accesses, nor the other way round; the report (its own caches) counts
# per object what --symbolize names
${CC:-gcc} -O1 -no-pie -fno-pie -o "$tmp/gapdata" tests/gapdata.c ||
	{ echo "FAIL: cannot build tests/gapdata.c"; exit 1; }
./skel gen "$tmp/gapdata" -o "$tmp/gd.c" 2>/dev/null || bad "gapdata: skel gen"
./skel record "$tmp/gd.c" -o "$tmp/gd.v" -- "$tmp/gapdata" >/dev/null 2>&1 || bad "gapdata: skel record"
./skel replay "$tmp/gd.c" "$tmp/gd.v" --format csv --symbolize -o "$tmp/gd.csv" 2>/dev/null ||
	bad "gapdata: replay --symbolize"
n=$(grep -c ',R,8,.*,gapvar+0x0$' "$tmp/gd.csv")
[ "$n" = 3000 ] || bad "gapdata: $n reads named gapvar, want 3000"
n=$(grep -c ',R,8,.*,\.data+0x' "$tmp/gd.csv")
[ "$n" -ge 2000 ] || bad "gapdata: $n reads named .data, want 2000 or more"
./skel report "$tmp/gd.c" "$tmp/gd.v" -o "$tmp/gd.rep" 2>/dev/null || bad "gapdata: skel report"
for o in gapvar .data; do
	want=$(awk -F, -v o="$o" 'NR > 1 { x = $6; sub(/\+0x[0-9a-f]*$/, "", x); if (x == o) n++ } END { print n + 0 }' "$tmp/gd.csv")
	got=$(awk -v o="$o" '$1 == o { print $2 }' "$tmp/gd.rep")
	[ "$got" = "$want" ] || bad "gapdata: report counts $got accesses of $o, --symbolize $want"
done

# regions named by the literal skel_roi_begin passes (skel gen reads it
# from the binary; nothing is recorded): per region, the accesses of
# each array as tests/roinames.c works them out; a name built at run
# time leaves its region unnamed (markers)
${CC:-gcc} -O1 -fno-tree-vectorize -no-pie -fno-pie -Ireplay -o "$tmp/roinames" tests/roinames.c ||
	{ echo "FAIL: cannot build tests/roinames.c"; exit 1; }
./skel gen "$tmp/roinames" -o "$tmp/rn.c" 2>/dev/null || bad "roinames: skel gen"
./skel record "$tmp/rn.c" -o "$tmp/rn.v" -- "$tmp/roinames" >/dev/null 2>&1 || bad "roinames: skel record"
./skel report "$tmp/rn.c" "$tmp/rn.v" --roi-markers -o "$tmp/rn.rep" 2>"$tmp/err" ||
	bad "roinames: skel report: $(cat "$tmp/err")"
awk '/^region / { r = $2; sub(/:$/, "", r) } /^  [ab] / { print r, $1, $2 }' "$tmp/rn.rep" | sort >"$tmp/got"
printf '%s\n' "fill a 300" "markers b 10" "sum b 50" >"$tmp/want"
cmp -s "$tmp/want" "$tmp/got" || bad "roinames: accesses per named region (want, got):
$(cat "$tmp/want")
--
$(cat "$tmp/got")"

# errors name the option and the problem
./skel replay "$tmp/ho.c" "$tmp/ho.v" --format count --roi nosuch >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "roi nosuch: no routine of that name" "$tmp/err" || bad "--roi nosuch: $(cat "$tmp/err")"
./skel replay "$tmp/ho.c" "$tmp/ho.v" --format bin --symbolize >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "symbolize goes with --format text or csv" "$tmp/err" || bad "--symbolize --format bin: $(cat "$tmp/err")"
./skel gen build/samples/list-O2-nopie -o "$tmp/list.c" 2>/dev/null
./skel run "$tmp/list.c" --format count --roi-markers -- build/samples/list-O2-nopie 10 >/dev/null 2>"$tmp/err"
grep -q "roi-markers: the program has no skel_roi_begin" "$tmp/err" || bad "--roi-markers without markers: $(cat "$tmp/err")"
[ $fails -eq 0 ] && echo "objects: all passed"
[ $fails -eq 0 ]
