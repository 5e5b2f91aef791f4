#!/bin/sh
# skel report (issue 14 item 4).  tests/reportobj.c touches objects of
# known sizes from separate functions, nothing freed before the end.  One
# run under valgrind lackey and the recorder together (skel check,
# SKEL_KEEP): the bytes read and written per object in the report equal
# what lackey saw the program's code do to each object's addresses (the
# oracle is worked out here from lackey's log and the blocks' bases the
# program prints, not from skel), and what the source says.  Distinct
# lines and pages are worked out from the bases; regions by hand; the CSV
# files' headers and sums; the PNG read back by libpng; a recording
# without TIME chunks (an older skel's) reported without times.
cd "$(dirname "$0")/.." || exit 1
# the executable's scope (skel gen --main-only) unless a case says
# otherwise: whole-process tracing is tests/whole.sh's
export SKEL_SCOPE=main
tmp=$(mktemp -d)
keep=""
trap 'rm -rf "$tmp" $keep' EXIT
export XDG_CACHE_HOME="$tmp/cache"
fails=0
bad() { echo "FAIL: report: $*"; fails=$((fails+1)); }
app=$tmp/reportobj
${CC:-gcc} -O1 -fno-tree-vectorize -fno-tree-loop-distribute-patterns -no-pie -fno-pie \
	-o "$app" tests/reportobj.c || { echo "FAIL: cannot build tests/reportobj.c"; exit 1; }
./skel gen "$app" -o "$tmp/ro.c" 2>/dev/null || bad "skel gen"
SKEL_KEEP=1 ./skel check "$tmp/ro.c" -- "$app" >"$tmp/check" 2>"$tmp/bases" || bad "skel check: $(cat "$tmp/check" "$tmp/bases")"
dir=$(sed -n 's/^skel check: files kept in //p' "$tmp/bases")
keep=$dir
# one process: one lackey log, lackey.PID.0.log (driver/check.c)
log=$(ls "$dir"/lackey.*.0.log 2>/dev/null | head -1)
[ -f "$dir/app.vals" ] && [ -f "$log" ] || { echo "FAIL: report: skel check kept no files"; exit 1; }
base() { sed -n "s/^$1=//p" "$tmp/bases"; }
glob=$(nm "$app" | awk '$3 == "glob" { print $1 }')

# --- the oracle: lackey's data accesses made by the program's code (the
# executable at 0x400000, the recorder's trampolines below it, where the
# displaced instructions run; the loader and libraries lie above 16 MiB
# under valgrind), by object: "NAME READ WRITE" (an M is both)
awk -v a=$((0x$(base a))) -v b=$((0x$(base b))) -v c=$((0x$(base c))) \
    -v d0=$((0x$(base d0))) -v d1=$((0x$(base d1))) -v d2=$((0x$(base d2))) \
    -v d3=$((0x$(base d3))) -v g=$((0x$glob)) '
	function hex(s,  i, n) { n = 0; s = tolower(s)
		for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return n }
	function obj(x) {
		if (x >= a && x < a + 8000) return "a"; if (x >= b && x < b + 2400) return "b"
		if (x >= c && x < c + 5000) return "c"; if (x >= g && x < g + 512) return "glob"
		if ((x >= d0 && x < d0 + 64) || (x >= d1 && x < d1 + 64) || (x >= d2 && x < d2 + 64) ||
		    (x >= d3 && x < d3 + 64)) return "d"
		return "" }
	/^I/ { split($2, f, ","); mine = hex(f[1]) < 16777216; next }
	mine && /^ [LSM] / { split($2, f, ","); o = obj(hex(f[1])); if (o == "") next
		if ($1 != "S") r[o] += f[2]; if ($1 != "L") w[o] += f[2]; seen[o] = 1 }
	END { for (o in seen) print o, r[o] + 0, w[o] + 0 }' "$log" | sort >"$tmp/oracle"
printf '%s\n' "a 8000 8000" "b 0 2400" "c 0 5000" "d 0 256" "glob 512 512" >"$tmp/source"
cmp -s "$tmp/oracle" "$tmp/source" || bad "lackey and the source disagree (the oracle is wrong):
$(cat "$tmp/oracle")"

# --- the report of the same run
./skel report "$tmp/ro.c" "$dir/app.vals" --binary "$app" --csv "$tmp/csv" --plot "$tmp/ro.png" \
	>"$tmp/rep" 2>"$tmp/err" || bad "skel report: $(cat "$tmp/err")"
grep -q "^region all: .*wall [0-9.]* s, " "$tmp/rep" || bad "no region line with a wall time: $(cat "$tmp/rep")"
head -1 "$tmp/csv/objects.csv" | grep -qx \
	'region,object,accesses,reads,writes,bytes_read,bytes_written,lines,pages,first_s,last_s' ||
	bad "objects.csv header: $(head -1 "$tmp/csv/objects.csv")"
head -1 "$tmp/csv/regions.csv" | grep -qx \
	'region,accesses,reads,writes,bytes_read,bytes_written,lines,pages,first_s,last_s,wall_s,bytes_per_s' ||
	bad "regions.csv header: $(head -1 "$tmp/csv/regions.csv")"
head -1 "$tmp/csv/series.csv" | grep -qx 'region,object,interval,start_s,end_s,bytes' ||
	bad "series.csv header: $(head -1 "$tmp/csv/series.csv")"
# every row has its header's number of fields
for f in objects regions series; do
	awk -F, 'NR == 1 { n = NF } NF != n { print FILENAME ": line " NR; exit }' "$tmp/csv/$f.csv" |
		grep . && bad "$f.csv: a row with another number of fields"
done
# heap groups are named by site: the four sites' (read, written) pairs
# against the oracle's per block (one site, d, has four blocks); glob by
# its symbol
awk -F, '$2 ~ /^heap@main[+]0x/ { print $6, $7 }' "$tmp/csv/objects.csv" | sort >"$tmp/got"
awk '$1 != "glob" { print $2, $3 }' "$tmp/oracle" | sort >"$tmp/want"
cmp -s "$tmp/got" "$tmp/want" || bad "heap groups' bytes (read written), want:
$(cat "$tmp/want")
got:
$(cat "$tmp/got")"
[ "$(awk -F, '$2 == "glob" { print $6, $7 }' "$tmp/csv/objects.csv")" = "$(awk '$1 == "glob" { print $2, $3 }' "$tmp/oracle")" ] ||
	bad "glob's bytes: $(grep ',glob,' "$tmp/csv/objects.csv")"

# distinct lines and pages, from the bases: blocks [base, base + size)
span() { # unit base size...: the units (64 or 4096 bytes) they cover, one a line
	u=$1; shift
	while [ $# -gt 1 ]; do
		i=$(($1 / u)); e=$((($1 + $2 - 1) / u))
		while [ $i -le $e ]; do echo $i; i=$((i + 1)); done
		shift 2
	done | sort -u | wc -l
}
row() { awk -F, -v w="$1" -v v="$2" '$6 == w && $7 == v { print $8, $9 }' "$tmp/csv/objects.csv"; }
lp() { echo "$(span 64 "$@") $(span 4096 "$@")"; }
[ "$(row 8000 8000)" = "$(lp $((0x$(base a))) 8000)" ] || bad "a: lines, pages $(row 8000 8000)"
[ "$(row 0 5000)" = "$(lp $((0x$(base c))) 5000)" ] || bad "c: lines, pages $(row 0 5000)"
[ "$(row 0 256)" = "$(lp $((0x$(base d0))) 64 $((0x$(base d1))) 64 $((0x$(base d2))) 64 $((0x$(base d3))) 64)" ] ||
	bad "d (four blocks of one site): lines, pages $(row 0 256)"
[ "$(awk -F, '$2 == "glob" { print $8, $9 }' "$tmp/csv/objects.csv")" = "$(lp $((0x$glob)) 512)" ] ||
	bad "glob: lines, pages"

# times follow the program's order: a, b and c are first written in that
# order, glob after them, a read last (its last access is the latest)
awk -F, 'NR > 1 && $2 ~ /^heap@|^glob$/ { k = $6 " " $7; f[k] = $10; l[k] = $11 }
	END { if (!(f["8000 8000"] < f["0 2400"] && f["0 2400"] < f["0 5000"] &&
		    f["0 5000"] < f["512 512"] && l["8000 8000"] > l["512 512"])) print "order" }' \
	"$tmp/csv/objects.csv" | grep -q order && bad "first/last times out of the program's order"
# the series adds up to each object's bytes (rounded per interval)
awk -F, 'FNR == 1 { next } FILENAME ~ /series/ { s[$2] += $6; next } { t[$2] = $6 + $7 }
	END { for (o in t) if (s[o] - t[o] > 100 || t[o] - s[o] > 100) print o, s[o], t[o] }' \
	"$tmp/csv/series.csv" "$tmp/csv/objects.csv" | grep . && bad "series.csv does not add up"

# the PNG: the size stated, its IHDR, and libpng reads it all back
size=$(sed -n 's/^skel: report: heat map .*, \([0-9]*x[0-9]*\) pixels$/\1/p' "$tmp/err")
[ -n "$size" ] || bad "no heat map size stated: $(cat "$tmp/err")"
[ "$(od -An -tx1 -N16 "$tmp/ro.png" | tr -d ' \n')" = "89504e470d0a1a0a0000000d49484452" ] ||
	bad "not a PNG with its IHDR first"
ihdr=$(od -An -tu1 -j16 -N8 "$tmp/ro.png" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 "x" $5 * 16777216 + $6 * 65536 + $7 * 256 + $8 }')
[ "$ihdr" = "$size" ] || bad "IHDR says $ihdr, skel said $size"
cat >"$tmp/pngread.c" <<'EOF'
#include <png.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	png_image im = { .version = PNG_IMAGE_VERSION };
	if (!png_image_begin_read_from_file(&im, argv[1]))
		return 1;
	im.format = PNG_FORMAT_RGB;
	static unsigned char px[1 << 24];
	if (PNG_IMAGE_SIZE(im) > sizeof px || !png_image_finish_read(&im, NULL, px, 0, NULL))
		return 1;
	printf("%ux%u\n", im.width, im.height);
	return 0;
}
EOF
if ${CC:-gcc} -o "$tmp/pngread" "$tmp/pngread.c" $(pkg-config --cflags --libs libpng) 2>"$tmp/cc"; then
	[ "$("$tmp/pngread" "$tmp/ro.png")" = "$size" ] || bad "libpng cannot read the image back"
else
	bad "cannot build the PNG reader: $(cat "$tmp/cc")"
fi

# --- regions, by hand from the source: fill writes a, b and the d blocks
./skel report "$tmp/ro.c" "$dir/app.vals" --binary "$app" --roi fill --roi sum --csv "$tmp/roi" \
	>"$tmp/rep2" 2>"$tmp/err" || bad "skel report --roi: $(cat "$tmp/err")"
awk -F, '$2 ~ /^heap@/ { print $1, $6, $7 }' "$tmp/roi/objects.csv" | sort >"$tmp/got"
printf '%s\n' "fill 0 2400" "fill 0 256" "fill 0 8000" "sum 8000 0" | sort >"$tmp/want"
cmp -s "$tmp/got" "$tmp/want" || bad "regions' heap bytes: $(cat "$tmp/got")"
awk -F, 'NR > 1 && !($11 > 0) { print }' "$tmp/roi/regions.csv" | grep . && bad "a region without wall time"

# --- online, another run: the same bytes per object
./skel run "$tmp/ro.c" --report -o "$tmp/on" -- "$app" 2>/dev/null || bad "skel run --report"
awk '$1 ~ /^heap@main[+]|^glob$/ { print $3, $4 }' "$tmp/on" | sort >"$tmp/got"
awk '{ print $2, $3 }' "$tmp/source" | sort >"$tmp/want"
cmp -s "$tmp/got" "$tmp/want" || bad "skel run --report: bytes per object: $(cat "$tmp/got")"

# --- a recording without TIME chunks (skel before them): the same
# objects, no times, said so
cat >"$tmp/notime.c" <<'EOF'
#include "replay/format.h"
int main(int argc, char **argv)
{
	vtrace t;
	vt_chunk c;
	char err[FMT_ERR_LEN];
	FILE *f = fopen(argv[2], "wb");
	if (!f || vtrace_open(&t, argv[1], err) < 0)
		return 1;
	fwrite(t.data, 1, VT_HEADER_SIZE, f);
	while (vtrace_next(&t, &c, err) == 1)
		if (c.h.type != VT_TIME)
			fwrite(t.data + c.offset, 1, VT_CHUNK_HEADER_SIZE + c.h.payload_bytes, f);
	return fclose(f) != 0;
}
EOF
${CC:-gcc} -I. -o "$tmp/notime" "$tmp/notime.c" replay/vtrace.c -lzstd && "$tmp/notime" "$dir/app.vals" "$tmp/old.vals" ||
	bad "cannot strip the TIME chunks"
./skel report "$tmp/ro.c" "$tmp/old.vals" --binary "$app" --csv "$tmp/old" >"$tmp/rep3" 2>"$tmp/err" ||
	bad "skel report of a file without TIME chunks: $(cat "$tmp/err")"
grep -q "no timestamps in this recording" "$tmp/rep3" || bad "no word about the missing times"
grep -q "wall" "$tmp/rep3" && bad "a wall time without timestamps"
cut -d, -f1-9 "$tmp/old/objects.csv" | tail -n +2 | sort >"$tmp/got"
cut -d, -f1-9 "$tmp/csv/objects.csv" | tail -n +2 | sort >"$tmp/want"
cmp -s "$tmp/got" "$tmp/want" || bad "without TIME chunks the objects differ"

# --- a long report shows its progress on a terminal (script(1) gives it
# one; the delay is cut for the test), and only there
mm=build/samples/matmul-O2-pie
./skel gen $mm -o "$tmp/mm.c" 2>/dev/null && ./skel record "$tmp/mm.c" -o "$tmp/mm.v" -- $mm 200 >/dev/null ||
	bad "record matmul"
SKEL_PROGRESS_DELAY_MS=0 script -qec "./skel report $tmp/mm.c $tmp/mm.v -o $tmp/mm.rep" /dev/null \
	>"$tmp/tty" 2>&1 || bad "report under script(1): $(tail -2 "$tmp/tty")"
tr '\r' '\n' <"$tmp/tty" | grep -q "skel: replay: thread 0: .* [0-9]* accesses" ||
	bad "no progress line on a terminal: $(tr '\r' '\n' <"$tmp/tty" | head -3)"
SKEL_PROGRESS_DELAY_MS=0 ./skel report "$tmp/mm.c" "$tmp/mm.v" -o "$tmp/mm.rep" 2>"$tmp/err"
grep -q "accesses" "$tmp/err" && bad "progress written to a non-terminal: $(cat "$tmp/err")"
grep -q "^  heap@main+0x[0-9a-f]* *8040000 *64000000 *320000 " "$tmp/mm.rep" ||
	bad "matmul 200: A and B are read 200 times over, C written: $(cat "$tmp/mm.rep")"

# --- usage errors name the problem
./skel replay "$tmp/ro.c" "$dir/app.vals" --plot "$tmp/x.png" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "go with --report" "$tmp/err" || bad "--plot without --report: $(cat "$tmp/err")"
./skel report "$tmp/ro.c" "$dir/app.vals" --symbolize >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "not with --symbolize" "$tmp/err" || bad "report --symbolize: $(cat "$tmp/err")"
[ $fails -eq 0 ] && echo "report: all passed"
[ $fails -eq 0 ]
