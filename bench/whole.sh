#!/bin/sh
# bench/whole.sh — make bench's whole-process columns (docs/bench.md).
#
# Part 1, once: the cost of libc's skeleton module, cold and cached: with an
#   empty cache, `skel gen` of a program that needs libc (the analysis and
#   the module's C), then the first replay (compiling the module, in
#   parallel units); the same two again with the cache full.
# Part 2, per sample at size B (bench/run.sh's, native -O2-pie 0.2-1 s):
#   native, recorded with the executable's skeleton (--main-only) and with
#   the whole process's (the default), side by side; accesses, value-file
#   bytes and bytes per access of each.  Medians of 5 runs (BENCH_RUNS).
#
# Environment: BENCH_ONLY="matmul list" runs a subset; BENCH_TMP (default
# /tmp) holds the value files.  Writes bench/results/whole.csv.
set -u
unset SKEL_SCOPE
. bench/setup.sh
CSV=$OUT/whole.csv
die() { echo "bench: $*" >&2; exit 1; }

# seconds CMD...: wall time of one run (stdout to /dev/null)
seconds() {
	: >"$W/t1"
	"$TM" "$W/t1" "$@" >/dev/null 2>"$W/log" || { cat "$W/log" >&2; die "failed: $*"; }
	cat "$W/t1"
}

# timeit CLEAN CMD...: median wall time of BENCH_RUNS (>= 5) runs; CLEAN
# is a file removed before each run
timeit() {
	clean=$1; shift
	: >"$W/ts"
	n=${BENCH_RUNS:-5}
	[ "$n" -ge 5 ] 2>/dev/null || n=5
	i=0
	while [ $i -lt "$n" ]; do
		[ -n "$clean" ] && rm -f "$clean"
		"$TM" "$W/ts" "$@" >/dev/null 2>"$W/log" || { cat "$W/log" >&2; die "failed: $*"; }
		i=$((i + 1))
	done
	median "$W/ts"
}

total() { sed -n 's/^total: \([0-9]*\) accesses.*/\1/p' "$1"; }

# --- part 1: libc's module, cold then cached
app=$SB/libcheavy-O2-pie
[ -x "$app" ] || die "no $app (make samples)"
export XDG_CACHE_HOME=$W/cold
gen_cold=$(seconds "$SKEL" gen "$app" -o "$W/lh.c")
"$SKEL" record "$W/lh.c" -o "$W/lh.v" -- "$app" 50 >/dev/null 2>&1 || die "record libcheavy"
rep_cold=$(seconds "$SKEL" replay "$W/lh.c" "$W/lh.v" --format count -o /dev/null)
gen_warm=$(seconds "$SKEL" gen "$app" -o "$W/lh2.c")
rep_warm=$(seconds "$SKEL" replay "$W/lh.c" "$W/lh.v" --format count -o /dev/null)
libc_c=$(ls -S "$XDG_CACHE_HOME"/skel/*.c | head -1)
libc_mb=$(awk -v b="$(stat -c %s "$libc_c")" 'BEGIN { printf "%.1f", b / 1048576 }')
echo "bench: whole: libc's module: gen ${gen_cold} s + first replay (compile) ${rep_cold} s cold; ${gen_warm} s + ${rep_warm} s cached (its C: ${libc_mb} MB)" >&2
rm -rf "$XDG_CACHE_HOME"
export XDG_CACHE_HOME=$W/cache

{
	echo "# produced by make bench (bench/whole.sh) on $(date -u +%Y-%m-%dT%H:%MZ), $(uname -n), git $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo +dirty); times in seconds, medians; see docs/bench.md"
	echo "# libc module: gen_cold_s=$gen_cold compile_cold_s=$rep_cold gen_cached_s=$gen_warm replay_cached_s=$rep_warm c_mb=$libc_mb"
	echo "sample,class,size,native_s,rec_main_s,rec_whole_s,rec_main_native,rec_whole_native,acc_main,acc_whole,outside_pct,bytes_main,bytes_whole,bytes_per_acc_main,bytes_per_acc_whole"
} >"$CSV"

# --- part 2: per sample
SAMPLES="matmul affine 600
stencil affine 1024
triangular affine 5000
csr irregular 2000000
list irregular 1000000
tree irregular 300000
hash irregular 2000000
bubble irregular 20000
strkern irregular 1000000
qsort_cb irregular 1000000
libcheavy irregular 200000
libmloop irregular 1000000"
echo "$SAMPLES" | while read -r name class B; do
	if [ -n "${BENCH_ONLY:-}" ]; then
		case " $BENCH_ONLY " in *" $name "*) ;; *) continue;; esac
	fi
	app=$SB/$name-O2-pie
	echo "bench: whole: $name ..." >&2
	"$SKEL" gen --main-only "$app" -o "$W/m.c" 2>/dev/null || die "gen --main-only $name"
	"$SKEL" gen "$app" -o "$W/w.c" 2>/dev/null || die "gen $name"
	nat=$(timeit "" "$app" "$B")
	recm=$(timeit "$W/m.v" "$SKEL" record "$W/m.c" -o "$W/m.v" -- "$app" "$B")
	recw=$(timeit "$W/w.v" "$SKEL" record "$W/w.c" -o "$W/w.v" -- "$app" "$B")
	"$SKEL" replay "$W/m.c" "$W/m.v" --format count -o "$W/cm" 2>/dev/null || die "replay main $name"
	"$SKEL" replay "$W/w.c" "$W/w.v" --format count -o "$W/cw" 2>/dev/null || die "replay whole $name"
	am=$(total "$W/cm"); aw=$(total "$W/cw")
	bm=$(stat -c %s "$W/m.v"); bw=$(stat -c %s "$W/w.v")
	rm -f "$W/m.v" "$W/w.v"
	out=$(awk -v m="$am" -v w="$aw" 'BEGIN { printf "%.1f", w ? 100 * (w - m) / w : 0 }')
	echo "$name,$class,$B,$nat,$recm,$recw,$(div "$recm" "$nat"),$(div "$recw" "$nat"),$am,$aw,$out,$bm,$bw,$(div "$bm" "$am"),$(div "$bw" "$aw")" >>"$CSV"
done

# the table
awk -F, '/^#/ { next } NR > 0 && $1 == "sample" { printf "%-10s %9s %9s %9s %12s %12s %8s %9s %9s\n", "sample", "native_s", "rec/nat", "whole/nat", "acc_main", "acc_whole", "outside", "B/acc_m", "B/acc_w"; next }
	{ printf "%-10s %9s %9s %9s %12s %12s %7s%% %9s %9s\n", $1, $4, $7, $8, $9, $10, $11, $14, $15 }' "$CSV"
echo "bench: whole: wrote $CSV" >&2
