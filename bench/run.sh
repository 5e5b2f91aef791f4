#!/bin/sh
# bench/run.sh — the body of `make bench` (see docs/bench.md).
#
# For each sample (and /usr/bin/bzip2) it measures, in one run:
#   at size B (native -O2-pie runs 0.2-1 s): native, recorded offline
#     (skel record), online (skel run --format count), replay of the
#     recorded trace into the count sink, value-trace size and counts;
#   at size F (B shrunk so that a full-tracing value file stays well under
#     2 GB): native, recorded, full tracing (skel gen --all-accesses), and
#     replay into bin (to /dev/null);
#   at size L (about 1/100 of B's work; lackey is ~1000-3000x): native and valgrind lackey.
# Each time is the median of 5 runs (BENCH_RUNS may ask for more).  Value files go to /tmp (disk) and are deleted right
# after use.  NEVER point this at /dev/shm.
#
# Environment: BENCH_ONLY="matmul list" runs a subset; BENCH_TMP (default
# /tmp) holds the value files.
set -u
# the executable's scope: the columns below measure the executable's
# skeleton (skel gen --main-only); bench/whole.sh measures the whole process
export SKEL_SCOPE=main
. bench/setup.sh
CSV=$OUT/latest.csv
TS=$W/times
LOG=$W/log

die() { echo "bench: $*" >&2; exit 1; }

# timeit CLEAN CMD...: median wall time of CMD (stdout, stderr to $LOG);
# CLEAN is a file removed before each run and after the last ("" = none).
# Writes the number of runs to $W/nruns.
timeit() {
	clean=$1; shift
	: > "$TS"
	[ -n "$clean" ] && rm -f "$clean"
	"$TM" "$TS" "$@" > /dev/null 2> "$LOG" || { cat "$LOG" >&2; die "failed: $*"; }
	NRUNS=${BENCH_RUNS:-5}
	[ "$NRUNS" -ge 5 ] 2>/dev/null || NRUNS=5
	i=1
	while [ $i -lt $NRUNS ]; do
		[ -n "$clean" ] && rm -f "$clean"
		"$TM" "$TS" "$@" > /dev/null 2> "$LOG" || { cat "$LOG" >&2; die "failed: $*"; }
		i=$((i + 1))
	done
	echo $NRUNS > "$W/nruns"
	median "$TS"
}

# count output of `skel replay --format count` -> "accesses values"
counts() { awk '/^total:/ { a = $2 } /^thread/ { for (i = 1; i < NF; i++) if ($(i + 1) == "values") v += $i } END { print a + 0, v + 0 }' "$1"; }

HAVE_RUN=no
"$SKEL" --help 2>&1 | grep -q 'skel run' && HAVE_RUN=yes

# bzip2 inputs: deterministic text (Park-Miller LCG over a small vocabulary)
gen_text() { # BYTES FILE
	awk -v n="$1" 'BEGIN {
		split("the of and to in is was for on that with as by at from it an be this which or are have not had but were his her they one all their there been has when who will more no if out so said what up its about into than them can only other new some could time these two may then do first any my now such like our over man me even most made after also did many before must through back years where much your way well down should because each just those people how too little state good very make world still own see men work long get here between both life being under never day same another know while last might us great old year off come since against go came right used take three", w, " ")
		nw = 0; for (k in w) nw++
		x = 20250101; b = 0
		while (b < n) {
			line = ""
			for (j = 0; j < 12; j++) {
				x = (x * 16807) % 2147483647
				t = w[int(x % nw) + 1]
				if (x % 7 == 0) t = t (x % 10007)
				line = line (j ? " " : "") t
			}
			print line; b += length(line) + 1
		}
	}' > "$2"
}

# name | B size | F size | L size   (size = argv[1]; for bzip2, input bytes)
SAMPLES="matmul 600 350 130
stencil 1024 384 220
triangular 5000 4500 500
csr 2000000 900000 20000
list 1000000 1000000 10000
tree 300000 180000 3000
hash 2000000 2000000 20000
switch 30000000 5000000 300000
funcptr 30000000 4500000 300000
bubble 20000 10000 2000
strkern 1000000 300000 3000
collatz 1000000 300000 3000
bzip2 20000000 5000000 200000"
AFFINE="matmul stencil triangular"

{
	echo "# produced by make bench (bench/run.sh) on $(date -u +%Y-%m-%dT%H:%MZ), $(uname -n), git $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo +dirty); times in seconds, medians; see docs/bench.md"
	echo "sample,class,size,native_s,recorded_s,online_s,rec_native,online_native,runs_rec,accesses,values,values_per_access,value_bytes,value_bytes_per_access,static_ratio,full_static_ratio,replay_count_s,replay_count_Maps,full_size,native_full_s,recorded_full_s,full_s,full_native,rec_full,runs_full,full_bytes,full_bytes_per_access,bin_accesses,replay_bin_s,replay_bin_Maps,lackey_size,native_lackey_s,lackey_s,lackey_native"
} > "$CSV"

T0=$(date +%s)
echo "$SAMPLES" | while read -r name B F L; do
	if [ -n "${BENCH_ONLY:-}" ]; then
		case " $BENCH_ONLY " in *" $name "*) ;; *) continue;; esac
	fi
	class=irregular
	case " $AFFINE " in *" $name "*) class=affine;; esac
	echo "bench: $name ..." >&2
	if [ "$name" = bzip2 ]; then
		app=/usr/bin/bzip2
		[ -x "$app" ] || { echo "bench: no /usr/bin/bzip2, skipped" >&2; continue; }
		for sz in "$B" "$F" "$L"; do
			f=$TMPB/skel-bench-bzip2-$sz.txt
			[ -s "$f" ] || { gen_text "$sz" "$f.tmp$$" && mv "$f.tmp$$" "$f"; }
		done
		argB="-c $TMPB/skel-bench-bzip2-$B.txt"
		argF="-c $TMPB/skel-bench-bzip2-$F.txt"
		argL="-c $TMPB/skel-bench-bzip2-$L.txt"
	else
		app=$SB/$name-O2-pie
		argB=$B; argF=$F; argL=$L
	fi
	sk=$W/$name.c; fk=$W/$name-full.c
	"$SKEL" gen "$app" -o "$sk" 2> "$W/gen" || { cat "$W/gen" >&2; die "skel gen $app"; }
	st=$(sed -n 's/.*static ratio \([0-9.]*\).*/\1/p' "$W/gen" | head -1)
	"$SKEL" gen "$app" --all-accesses -o "$fk" 2> "$W/gen" || { cat "$W/gen" >&2; die "skel gen --all-accesses $app"; }
	fst=$(sed -n 's/.*static ratio \([0-9.]*\).*/\1/p' "$W/gen" | head -1)
	vB=$W/$name.B.vals; vF=$W/$name.F.vals; vFF=$W/$name.full.vals

	# --- size B
	# shellcheck disable=SC2086
	nat=$(timeit "" "$app" $argB)
	rec=$(timeit "$vB" "$SKEL" record "$sk" -o "$vB" -- "$app" $argB); runs_rec=$(cat "$W/nruns")
	# the last recorded run is kept for the replays
	"$SKEL" record "$sk" -o "$vB" -- "$app" $argB > /dev/null 2>&1 || die "record $name"
	vbytes=$(stat -c %s "$vB")
	"$SKEL" replay "$sk" "$vB" --format count > "$W/cnt" 2>&1 || { cat "$W/cnt" >&2; die "replay $name"; }
	set -- $(counts "$W/cnt"); acc=$1; vals=$2
	rcnt=$(timeit "" "$SKEL" replay "$sk" "$vB" --format count)
	rm -f "$vB"
	if [ $HAVE_RUN = yes ]; then
		onl=$(timeit "" "$SKEL" run "$sk" --format count -- "$app" $argB)
	else
		onl=n/a
	fi

	# --- size F
	natF=$(timeit "" "$app" $argF)
	recF=$(timeit "$vF" "$SKEL" record "$sk" -o "$vF" -- "$app" $argF)
	"$SKEL" record "$sk" -o "$vF" -- "$app" $argF > /dev/null 2>&1 || die "record $name (F)"
	"$SKEL" replay "$sk" "$vF" --format count > "$W/cnt" 2>&1 || die "replay $name (F)"
	set -- $(counts "$W/cnt"); taccF=$1
	rtxt=$(timeit "" "$SKEL" replay "$sk" "$vF" --format bin -o /dev/null)
	rm -f "$vF"
	full=$(timeit "$vFF" "$SKEL" record "$fk" -o "$vFF" -- "$app" $argF); runs_full=$(cat "$W/nruns")
	"$SKEL" record "$fk" -o "$vFF" -- "$app" $argF > /dev/null 2>&1 || die "full record $name"
	fbytes=$(stat -c %s "$vFF")
	rm -f "$vFF"

	# --- size L
	natL=$(timeit "" "$app" $argL)
	lck=$(timeit "" valgrind --tool=lackey --trace-mem=yes --log-file=/dev/null "$app" $argL)

	awk -F, -v OFS=, -v n="$name" -v c="$class" -v B="$B" -v nat="$nat" -v rec="$rec" -v onl="$onl" \
	    -v rr="$runs_rec" -v acc="$acc" -v vals="$vals" -v vb="$vbytes" -v st="$st" -v fst="$fst" \
	    -v rcnt="$rcnt" -v F="$F" -v natF="$natF" -v recF="$recF" -v full="$full" -v rf="$runs_full" \
	    -v fb="$fbytes" -v tacc="$taccF" -v rtxt="$rtxt" -v L="$L" -v natL="$natL" -v lck="$lck" '
	function r(a, b) { return (a == "n/a" || b == "n/a" || b + 0 == 0) ? "n/a" : sprintf("%.4g", a / b) }
	BEGIN {
		# bytes per access of the full trace, counted on the F-size run
		print n, c, B, nat, rec, onl, r(rec, nat), r(onl, nat), rr, acc, vals, r(vals, acc), vb, r(vb, acc),
		      st, fst, rcnt, r(acc / 1e6, rcnt), F, natF, recF, full, r(full, natF), r(recF, full), rf,
		      fb, r(fb, tacc), tacc, rtxt, r(tacc / 1e6, rtxt), L, natL, lck, r(lck, natL)
	}' >> "$CSV"
done || exit 1
T1=$(date +%s)

# ---------------------------------------------------------------- report
awk -F, -v secs=$((T1 - T0)) -v runs="${BENCH_RUNS:-5}" -v online="$HAVE_RUN" '
/^#/ || $1 == "sample" { next }
{
	n++; row[n] = $0
}
function f(x, d) { return x == "n/a" ? "n/a" : sprintf("%." d "f", x) }
function g(x) { return x == "n/a" ? "n/a" : sprintf("%.3g", x) }
END {
	fmt = "%-10s %9s %7s %7s %7s %7s %7s | %8s %7s %8s | %8s %8s | %6s %8s %8s | %7s %7s\n"
	printf fmt, "sample", "size", "native", "rec", "online", "rec/nat", "onl/nat", "F size", "full/nat", "rec/full", "L size", "lck/nat", "static", "val/acc", "B/acc", "cnt M/s", "bin M/s"
	printf fmt, "", "(B)", "s", "s", "s", "", "", "", "@F", "@F", "", "@L", "", "", "", "", ""
	aff_ok = 1; vpa_ok = 1; bpa_ok = 1; faster_ok = 1; rep_ok = 1
	irr_ok = 1; b1_ok = 1; sel_ok = 1; r5_ok = 1
	for (i = 1; i <= n; i++) {
		split(row[i], c, ",")
		printf fmt, c[1], c[3], f(c[4], 3), f(c[5], 3), f(c[6], 3), g(c[7]), g(c[8]), c[19], g(c[23]), g(c[24]), c[31], g(c[34]), c[15], g(c[12]), g(c[14]), f(c[18], 0), f(c[30], 0)
		if (c[2] == "affine") {
			if (c[7] > 1.3) { aff_ok = 0; aff_bad = aff_bad " " c[1] "(" g(c[7]) ")" }
			if (c[12] > 0.01) { vpa_ok = 0; vpa_bad = vpa_bad " " c[1] "(" g(c[12]) ")" }
			if (c[14] > 0.1) { bpa_ok = 0; bpa_bad = bpa_bad " " c[1] "(" g(c[14]) ")" }
		}
		if (c[1] != "bzip2" && c[18] < 300) { rep_ok = 0; rep_bad = rep_bad " " c[1] "(" f(c[18], 0) ")" }
		if (c[1] == "bzip2" && c[18] < 300) rep_bz = " [bzip2: " f(c[18], 0) " M/s, only " c[10] " accesses, start-up dominated]"
		if (c[24] != "n/a" && c[24] >= 1) { faster_ok = 0; faster_bad = faster_bad " " c[1] "(" g(c[24]) ")" }
		# the project bars (the brief; issue 12)
		if (c[2] != "affine" && c[7] > 1.5) { irr_ok = 0; irr_bad = irr_bad " " c[1] "(" g(c[7]) ")" }
		if (c[14] > 1.0) { b1_ok = 0; b1_bad = b1_bad " " c[1] "(" g(c[14]) ")" }
		if (c[27] != "n/a" && c[27] > 0 && c[14] > c[27] / 4) { sel_ok = 0; sel_bad = sel_bad " " c[1] "(" g(c[14] / c[27]) ")" }
		if (c[1] != "bzip2" && c[18] < (c[2] == "affine" ? 1000 : 500)) { r5_ok = 0; r5_bad = r5_bad " " c[1] "(" f(c[18], 0) ")" }
	}
	printf "\nsizes: B = argv[1] (bzip2: input bytes) where native -O2-pie runs 0.2-1 s; F = B reduced so the full-tracing value file stays < ~1.5 GB; L = ~1/100 of B'"'"'s work (lackey).\n"
	printf "medians of %s runs; online = skel run --format count%s; %d s in all.\n", runs, online == "yes" ? "" : " (n/a: no skel run)", secs
	printf "\nbars:\n"
	printf "  %-4s recorded/native <= 1.3 on affine samples%s\n", aff_ok ? "MET" : "NOT", aff_bad
	printf "  %-4s values/access <= 0.01 on affine samples%s\n", vpa_ok ? "MET" : "NOT", vpa_bad
	printf "  %-4s replay >= 300 M addresses/s into count (samples)%s%s\n", rep_ok ? "MET" : "NOT", rep_bad, rep_bz
	printf "  %-4s value bytes/access <= 0.1 on affine samples%s\n", bpa_ok ? "MET" : "NOT", bpa_bad
	printf "  %-4s recorded faster than full tracing on every sample (rec/full < 1 @F)%s\n", faster_ok ? "MET" : "NOT", faster_bad
	printf "the project bars (the brief, issue 12):\n"
	printf "  %-4s recorded/native <= 1.5 on irregular samples%s\n", irr_ok ? "MET" : "NOT", irr_bad
	printf "  %-4s value bytes/access <= 1.0 on every sample%s\n", b1_ok ? "MET" : "NOT", b1_bad
	printf "  %-4s selective file <= 1/4 of --all-accesses, per access (B/acc over F B/acc)%s\n", sel_ok ? "MET" : "NOT", sel_bad
	printf "  %-4s replay >= 1 G addresses/s into count on affine samples, >= 500 M/s on the others%s\n", r5_ok ? "MET" : "NOT", r5_bad
}' "$CSV"
echo "wrote $CSV"

# ------------------------------------------------- cache simulation
# skel trace --sim cache (online: program, recorder, replay and simulator)
# against valgrind --tool=cachegrind --cache-sim=yes, wall time, same
# caches (the defaults of both: CPUID), at size S; and the simulator's
# own throughput: skel replay --sim cache of a recording, events (Ir + Dr
# + Dw) per second.  Both tools' skeleton and replayer are warm.
SIMS="matmul 300
stencil 512
triangular 2500"
SCSV=$OUT/latest-sim.csv
{
	echo "# produced by make bench (bench/run.sh) on $(date -u +%Y-%m-%dT%H:%MZ), $(uname -n), git $(git rev-parse --short HEAD 2>/dev/null); times in seconds, medians; see docs/bench.md"
	echo "sample,size,native_s,cachegrind_s,skel_sim_s,cachegrind_skel,events,replay_sim_s,replay_sim_Meps"
} > "$SCSV"
echo "$SIMS" | while read -r name S; do
	if [ -n "${BENCH_ONLY:-}" ]; then
		case " $BENCH_ONLY " in *" $name "*) ;; *) continue;; esac
	fi
	echo "bench: $name (cache simulation) ..." >&2
	app=$SB/$name-O2-pie
	sk=$W/$name.c
	[ -f "$sk" ] || "$SKEL" gen "$app" -o "$sk" 2> /dev/null || die "skel gen $app"
	"$SKEL" trace --sim cache -- "$app" "$S" > /dev/null 2>&1 || die "skel trace --sim cache $name"
	nat=$(timeit "" "$app" "$S")
	cg=$(timeit "" valgrind --tool=cachegrind --cache-sim=yes --cachegrind-out-file=/dev/null "$app" "$S")
	sim=$(timeit "" "$SKEL" trace --sim cache -- "$app" "$S")
	v=$W/$name.sim.vals
	"$SKEL" record "$sk" -o "$v" -- "$app" "$S" > /dev/null 2>&1 || die "record $name"
	"$SKEL" replay "$sk" "$v" --sim cache > "$W/simout" 2>&1 || die "replay --sim cache $name"
	ev=$(awk '/^I   refs:/ { gsub(",", "", $3); i = $3 } /^D   refs:/ { gsub(",", "", $3); d = $3 } END { print i + d }' "$W/simout")
	rs=$(timeit "" "$SKEL" replay "$sk" "$v" --sim cache)
	rm -f "$v"
	echo "$name,$S,$nat,$cg,$sim,$(div "$cg" "$sim"),$ev,$rs,$(div "$(div "$ev" 1000000)" "$rs")" >> "$SCSV"
done || exit 1
awk -F, '
/^#/ || $1 == "sample" { next }
{ n++; row[n] = $0 }
END {
	fmt = "%-10s %6s %8s %12s %12s %9s %12s %9s\n"
	printf "\n" fmt, "sample", "size", "native", "cachegrind", "skel --sim", "cg/skel", "events", "sim Me/s"
	ok = 1
	for (i = 1; i <= n; i++) {
		split(row[i], c, ",")
		printf fmt, c[1], c[2], c[3], c[4], c[5], c[6], c[7], sprintf("%.0f", c[9])
		if (c[6] == "n/a" || c[6] < 20) { ok = 0; bad = bad " " c[1] "(" c[6] ")" }
	}
	printf "  %-4s skel trace --sim cache >= 20x faster than cachegrind (wall) on the loop samples%s\n", ok ? "MET" : "NOT", bad
}' "$SCSV"
echo "wrote $SCSV"
