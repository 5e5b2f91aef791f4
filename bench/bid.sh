#!/bin/sh
# bench/bid.sh — the approximate mode's sweep (issue 15 item 4, docs/bid.md):
# the paper's Figure 3 for skel.  For each irregular sample and each
# (omega, chunk) in {1} ∪ {0.5, 0.25, 0.1} × {8, 64, 4096}:
#   at size B (as bench/run.sh: native -O2-pie runs 0.2-1 s): native and
#     recorded (skel record) wall time, medians of BENCH_RUNS (default 3)
#     runs; the replay's accesses and recorded values, value-file bytes;
#   at size L (as bench/run.sh, for lackey): skel check --accuracy, the
#     run's MA and AIA (blocks weighted by executions) and by accesses;
#   skel gen's static MA and AIA (the paper's equations 4 and 5 over the
#     expressions it weighed, unweighted).
# Writes bench/results/bid.csv (BENCH_CSV: elsewhere).  BENCH_ONLY="csr
# list" runs a subset, BENCH_CONFIGS="0.25 64" (lines "OMEGA CHUNK") others.
set -u
# the executable's scope: the columns below measure the executable's
# skeleton (skel gen --main-only); the whole process is not measured here yet
export SKEL_SCOPE=main
ROOT=$(pwd)
SKEL=$ROOT/skel
TM=$ROOT/build/bench/timer
SB=$ROOT/build/samples
OUT=$ROOT/bench/results
W=$(mktemp -d "${BENCH_TMP:-/tmp}/skel-bench-bid.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT INT TERM
mkdir -p "$OUT"
CSV=${BENCH_CSV:-$OUT/bid.csv}
RUNS=${BENCH_RUNS:-3}

die() { echo "bench-bid: $*" >&2; exit 1; }
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
timeit() {	# CMD...: median wall time
	: > "$W/ts"
	i=0
	while [ $i -lt "$RUNS" ]; do
		"$TM" "$W/ts" "$@" > /dev/null 2> "$W/log" || { cat "$W/log" >&2; die "failed: $*"; }
		i=$((i + 1))
	done
	median "$W/ts"
}
div() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "n/a"; else printf "%.4g\n", a / b }'; }

# name | B size | L size (bench/run.sh's)
SAMPLES="csr 2000000 20000
list 1000000 10000
tree 300000 3000
hash 2000000 20000
switch 30000000 300000
funcptr 30000000 300000
bubble 20000 2000
strkern 1000000 3000
collatz 1000000 3000"
CONFIGS=${BENCH_CONFIGS:-"1 64
0.5 8
0.5 64
0.5 4096
0.25 8
0.25 64
0.25 4096
0.1 8
0.1 64
0.1 4096"}

echo "# produced by bench/bid.sh on $(date -u +%Y-%m-%dT%H:%MZ), $(uname -n), git $(git rev-parse --short HEAD 2>/dev/null); times in seconds, medians of $RUNS; docs/bid.md" > "$CSV"
echo "sample,omega,chunk,native_s,recorded_s,rec_native,accesses,values,values_per_access,value_bytes_per_access,MA,AIA,MA_by_accesses,AIA_by_accesses,static_MA,static_AIA" >> "$CSV"
echo "$SAMPLES" | while read -r name B L; do
	if [ -n "${BENCH_ONLY:-}" ]; then
		case " $BENCH_ONLY " in *" $name "*) ;; *) continue;; esac
	fi
	app=$SB/$name-O2-pie
	echo "bench-bid: $name ..." >&2
	nat=$(timeit "$app" "$B")
	echo "$CONFIGS" | while read -r om ch; do
		sk=$W/$name-$om-$ch.c
		"$SKEL" gen "$app" --omega "$om" --chunk "$ch" -o "$sk" 2> "$W/gen" || { cat "$W/gen" >&2; die "gen $name $om $ch"; }
		sma=$(sed -n 's/.*static MA \([0-9.]*\), AIA.*/\1/p' "$W/gen")
		saia=$(sed -n 's/.*static MA [0-9.]*, AIA \([0-9.]*\).*/\1/p' "$W/gen")
		rec=$(timeit "$SKEL" record "$sk" -o "$W/v" -- "$app" "$B")
		"$SKEL" replay "$sk" "$W/v" --format count > "$W/count" 2>&1 || { cat "$W/count" >&2; die "replay $name $om $ch"; }
		acc=$(awk '/^total:/ { print $2 }' "$W/count")
		vals=$(awk '/^thread/ { for (i = 1; i < NF; i++) if ($(i + 1) == "values") v += $i } END { print v + 0 }' "$W/count")
		bytes=$(stat -c %s "$W/v")
		rm -f "$W/v"
		"$SKEL" check --accuracy "$sk" -- "$app" "$L" > /dev/null 2> "$W/acc" || { cat "$W/acc" >&2; die "check --accuracy $name $om $ch"; }
		a=$(sed -n 's/^check: accuracy at chunk [0-9]*: MA=\([0-9.]*\) AIA=\([0-9.]*\) .*by accesses MA=\([0-9.]*\) AIA=\([0-9.]*\),.*/\1,\2,\3,\4/p' "$W/acc")
		echo "$name,$om,$ch,$nat,$rec,$(div "$rec" "$nat"),$acc,$vals,$(div "$vals" "$acc"),$(div "$bytes" "$acc"),$a,${sma:-1},${saia:-1}" >> "$CSV"
	done
done
column -s, -t < "$CSV" | tail -n +2
exit 0
