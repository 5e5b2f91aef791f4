#!/bin/sh
# Random programs against the oracle (issue 10 item 7):
#   make fuzz-exact [N=20] [SEED=1] [JOBS=1] [CHECK_TIMEOUT=600]
# For each Csmith seed SEED .. SEED+N-1: generate the program, compile it at
# the level and PIE-ness the seed picks (-O0 -O1 -O2 -O3 -Os in turn, PIE for
# seeds s with (s/5) even, so every 10 seeds cover all 10 combinations), run
# it natively (skipped when it runs over 1 s or fails), then `skel check` it.
# One line per program, then "N of M exact" and the failing seeds.  Failing
# programs are kept in build/fuzz-exact/fail/SEED/ (source, binary, skel
# check's report, repro.sh).  The same SEED and N give the same programs,
# flags and verdicts.  Not part of `make check` (minutes per ten programs):
# run-tests.sh runs every tests/*.sh, so without the `run` argument this
# script only says so.  `N=.. SEED=.. sh tests/fuzz-exact.sh summary` prints
# the summary of the seeds done so far (of a run stopped early, say).
cd "$(dirname "$0")/.." || exit 1
# the executable's scope (skel gen --main-only) unless a case says
# otherwise: whole-process tracing is tests/whole.sh's
export SKEL_SCOPE=main
out=build/fuzz-exact
inc=/usr/include/csmith

levels() { echo "O0 O1 O2 O3 Os"; }
# the level and PIE-ness of seed $1
opt_of() { set -- "$1" $(levels); shift $(($1 % 5 + 1)); echo "$1"; }
pie_of() { [ $(($1 / 5 % 2)) -eq 0 ] && echo pie || echo nopie; }
pieflags() { [ "$1" = pie ] && echo "-fpie -pie" || echo "-fno-pie -no-pie"; }

# Installs csmith and its headers when missing, as .ci/deps does.
deps() {
	have() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }
	need=""
	for p in csmith libcsmith-dev; do have "$p" || need="$need $p"; done
	[ -z "$need" ] && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "skel: fuzz-exact: missing packages:$need (install them as root)" >&2
		return 1
	fi
	echo "installing:$need"
	DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need
}

# one SEED: generate, build, run natively, check; prints the program's line
# and leaves "STATUS ACCESSES" in $out/res/SEED.
one() {
	s=$1 opt=$(opt_of "$1") pie=$(pie_of "$1")
	w=$out/work/$s
	rm -rf "$w" "$out/fail/$s"
	mkdir -p "$w"
	cc="gcc -$opt -w -I$inc $(pieflags "$pie") -o prog prog.c"
	acc=- why=""
	t0=$(date +%s)
	# in $w: csmith leaves a platform.info in its working directory
	if ! (cd "$w" && csmith --seed "$s" -o prog.c) >/dev/null 2>"$w/gen.err"; then
		st=error why="csmith failed"
	elif ! (cd "$w" && $cc) 2>"$w/cc.err"; then
		st=error why="gcc failed: $(head -1 "$w/cc.err")"
	else
		timeout 1 "$w/prog" >/dev/null 2>&1
		nst=$?
		if [ $nst -eq 124 ]; then
			st=skip why="runs over 1 s natively"
		elif [ $nst -ne 0 ]; then
			st=skip why="exits $nst natively"
		else
			# a private cache: the compiled replayer is of no use to
			# another program, and others may clear ~/.cache/skel
			XDG_CACHE_HOME=$PWD/$w/cache timeout -k 30 "${CHECK_TIMEOUT:-600}" ./skel check -- "$w/prog" >"$w/check.out" 2>"$w/check.err"
			cst=$?
			acc=$(sed -n 's/^check: [0-9]* of \([0-9]*\) accesses match.*/\1/p;
				s/^skel check: MISMATCH at access [0-9]* of \([0-9]*\) .*/\1/p' "$w/check.err" | head -1)
			[ -n "$acc" ] || acc=-
			if [ $cst -eq 0 ]; then
				st=exact
			elif [ $cst -eq 124 ]; then
				st=timeout why="skel check ran over ${CHECK_TIMEOUT:-600} s"
				# skel check, killed, left its directory (lackey's log
				# can be gigabytes)
				for d in /tmp/skel-check-*; do
					head -1 "$d/skel.c" 2>/dev/null | grep -q "of $w/prog," && rm -rf "$d"
				done
			elif grep -q "MISMATCH at access" "$w/check.err"; then
				st=mismatch why=$(sed -n 's/^check: \(.*before the first divergence\)/\1/p' "$w/check.err")
			elif grep -q "MISMATCH: the replayed trace" "$w/check.err"; then
				st=mismatch why=$(sed -n 's/^check: \(.*extra in the replay\)/\1/p' "$w/check.err")
			else
				st=error why=$(grep -v '^skel: gen:' "$w/check.err" | head -1)
			fi
		fi
	fi
	t=$(($(date +%s) - t0))
	echo "$st $acc" >"$out/res/$s"
	printf 'seed %-6s -%-2s %-5s accesses %-9s %-8s %3ss %s\n' "$s" "$opt" "$pie" "$acc" "$st" "$t" "$why"
	case $st in
	exact|skip) rm -rf "$w"; return 0;;
	esac
	rm -rf "$w/cache"
	mkdir -p "$out/fail"
	mv "$w" "$out/fail/$s"
	cat >"$out/fail/$s/repro.sh" <<EOF
#!/bin/sh
# seed $s: $st ${why}
# run from the top of the skel tree; csmith $(csmith --version 2>/dev/null | head -1 | sed 's/.* //')
set -x
d=$out/fail/$s
(cd \$d && csmith --seed $s -o prog.c && $cc)
./skel check -- \$d/prog
EOF
}

# "N of M exact" over the seeds SEED..SEED+N-1 that have a result
summary() {
	exact=0 checked=0 skipped=0 failed=""
	for s in $(seq "$SEED" "$last"); do
		read -r st acc <"$out/res/$s" 2>/dev/null || continue
		case $st in
		exact) exact=$((exact + 1)); checked=$((checked + 1));;
		skip) skipped=$((skipped + 1));;
		*) checked=$((checked + 1)); failed="$failed $s($st)";;
		esac
	done
	echo "fuzz-exact: $exact of $checked exact ($skipped skipped: slow or failing natively)"
	[ -z "$failed" ] && return 0
	echo "failing seeds:$failed"
	echo "sources and repro.sh in $out/fail/SEED/"
	return 1
}

N=${N:-20} SEED=${SEED:-1} JOBS=${JOBS:-1}
last=$((SEED + N - 1))
case "$1" in
run) ;;
one) one "$2"; exit 0;;
summary) summary; exit;;
*) echo "fuzz-exact: not part of make check; run 'make fuzz-exact [N=..] [SEED=..] [JOBS=..]'"; exit 0;;
esac

deps || exit 1
[ -x ./skel ] && [ -f build/libskelrec.so ] || { echo "skel: fuzz-exact: build skel first (make)" >&2; exit 1; }
# results of earlier runs over these seeds do not count
for s in $(seq "$SEED" "$last"); do rm -f "$out/res/$s"; done
mkdir -p "$out/res"
echo "fuzz-exact: Csmith seeds $SEED..$last, $JOBS at a time"
seq "$SEED" "$last" | xargs -P "$JOBS" -n 1 sh "$0" one
summary
