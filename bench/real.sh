#!/bin/sh
# bench/real.sh — make bench's real programs: Debian commands doing real
# work on inputs made here (a 39 MB text file of 2 M numbered lines),
# recorded whole process (every object they load: libc, libz...) as a
# user runs them, side by side in one run: native wall time, `skel
# record` wall time, their ratio, the value file's bytes per traced
# access, the accesses, and `skel replay --format count`'s time.  Medians
# of BENCH_RUNS (default 3: a recording of sort writes about a GB).
#
# Environment: BENCH_ONLY="wc sort" runs a subset; BENCH_TMP (default
# /tmp) holds the inputs and value files (about 2 GB at once).  Writes
# bench/results/real.csv.
set -u
unset SKEL_SCOPE
. bench/setup.sh
CSV=$OUT/real.csv
die() { echo "bench: $*" >&2; exit 1; }
export LC_ALL=C TZ=UTC

# med N CMD...: median wall time of N runs (stdout to a file)
med() {
	n=$1; shift
	: >"$W/ts"
	i=0
	while [ "$i" -lt "$n" ]; do
		rm -f "$W/v"
		# stdout to a file: GNU grep stops at its first match when it
		# writes to /dev/null
		"$TM" "$W/ts" "$@" >"$W/out" 2>"$W/log" || { cat "$W/log" >&2; die "failed: $*"; }
		i=$((i + 1))
	done
	median "$W/ts"
}

runs=${BENCH_RUNS:-3}
seq 1 2000000 | awk '{ print ($1 * 7919) % 1000003, "line", $1 }' >"$W/big.txt" ||
	die "making the input"

# name, then the command (its input in the work directory)
CMDS="wc /usr/bin/wc big.txt
sort /usr/bin/sort big.txt
gzip /usr/bin/gzip -c big.txt
grep /usr/bin/grep -c 7.*9$ big.txt
sed /usr/bin/sed s/line/LINE/ big.txt
sha256sum /usr/bin/sha256sum big.txt"

{
	echo "# produced by make bench (bench/real.sh) on $(date -u +%Y-%m-%dT%H:%MZ), $(uname -n), git $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo +dirty); whole process; times in seconds, medians of $runs; see docs/bench.md"
	echo "command,native_s,recorded_s,rec_native,accesses,value_bytes,value_bytes_per_access,replay_count_s,replay_count_Maps"
} >"$CSV"
cd "$W" || exit 1
set -f   # the commands' arguments are patterns, not file names
echo "$CMDS" | while read -r name prog args; do
	if [ -n "${BENCH_ONLY:-}" ]; then
		case " $BENCH_ONLY " in *" $name "*) ;; *) continue;; esac
	fi
	[ -x "$prog" ] || { echo "bench: real: no $prog, skipped" >&2; continue; }
	echo "bench: $name (real program, whole process) ..." >&2
	"$SKEL" gen "$prog" -o "$W/$name.c" 2>/dev/null || die "skel gen $prog"
	# shellcheck disable=SC2086
	nat=$(med "$runs" "$prog" $args)
	# shellcheck disable=SC2086
	rec=$(med "$runs" "$SKEL" record "$W/$name.c" -o "$W/v" -- "$prog" $args)
	# shellcheck disable=SC2086
	"$SKEL" record "$W/$name.c" -o "$W/v" -- "$prog" $args >"$W/out" 2>&1 || die "record $name"
	"$SKEL" replay "$W/$name.c" "$W/v" --format count >"$W/count" 2>/dev/null || die "replay $name"
	acc=$(sed -n 's/^total: \([0-9]*\) accesses.*/\1/p' "$W/count")
	vb=$(stat -c %s "$W/v")
	: >"$W/ts"
	"$TM" "$W/ts" "$SKEL" replay "$W/$name.c" "$W/v" --format count >/dev/null 2>&1 || die "replay $name"
	rs=$(cat "$W/ts")
	rm -f "$W/v"
	echo "$name,$nat,$rec,$(div "$rec" "$nat"),$acc,$vb,$(div "$vb" "$acc"),$rs,$(div "$(div "$acc" 1000000)" "$rs")" >>"$CSV"
done || exit 1
cd "$ROOT" || exit 1
awk -F, '
/^#/ || $1 == "command" { next }
{ n++; row[n] = $0 }
END {
	fmt = "%-10s %8s %9s %8s %12s %9s %9s\n"
	printf "\n" fmt, "command", "native", "recorded", "rec/nat", "accesses", "B/access", "replay M/s"
	for (i = 1; i <= n; i++) {
		split(row[i], c, ",")
		printf fmt, c[1], c[2], c[3], c[4], c[5], c[7], sprintf("%.0f", c[9])
	}
}' "$CSV"
echo "wrote $CSV"
