# bench/setup.sh — sourced by the bench scripts: the paths and helpers
# (median, div) they share, and a private work directory W under
# BENCH_TMP (default /tmp; never /dev/shm: value files can be
# gigabytes), removed on exit.
ROOT=$(pwd)
SKEL=$ROOT/skel
TM=$ROOT/build/bench/timer
SB=$ROOT/build/samples
OUT=$ROOT/bench/results
TMPB=${BENCH_TMP:-/tmp}
case $TMPB in /dev/shm*) echo "bench: refusing to write value files to /dev/shm" >&2; exit 1;; esac
W=$(mktemp -d "$TMPB/skel-bench.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT INT TERM
mkdir -p "$OUT"

# median FILE: median of the numbers in FILE, one per line ("nan" if none)
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# div A B: A / B to 4 digits, "n/a" if B is 0 or either is n/a
div() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0 || a == "n/a" || b == "n/a") print "n/a"; else printf "%.4g\n", a / b }'; }
