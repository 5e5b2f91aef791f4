# bench/setup.sh — sourced by the bench scripts: the paths they share and
# a private work directory W under BENCH_TMP (default /tmp; never
# /dev/shm: value files can be gigabytes), removed on exit.
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
