#!/bin/sh
# Runs each fuzz harness in turn for SECONDS (one at a time: the fuzzer
# takes a core), over its corpus in build/fuzz/corpus/NAME seeded from
# build/fuzz/seeds/NAME; a crash, leak, timeout or out-of-memory input is
# saved in build/fuzz/artifacts/NAME/.  Prints one summary line per
# harness and exits non-zero when any of them found something.
#   sh tests/fuzz/run.sh SECONDS [NAME...]
cd "$(dirname "$0")/../.." || exit 1
secs=${1:-600}
shift
[ $# -eq 0 ] && set -- elf vtrace patch
found=0
for name in "$@"; do
	bin=build/fuzz/fuzz_$name
	corpus=build/fuzz/corpus/$name
	art=build/fuzz/artifacts/$name
	log=build/fuzz/$name.log
	mkdir -p "$corpus" "$art"
	# the ELF harness analyzes whole binaries: larger inputs, slower runs
	case $name in
	elf) opts="-max_len=65536 -timeout=30" ;;
	*) opts="-max_len=16384 -timeout=10" ;;
	esac
	echo "fuzz $name: $secs s, log in $log"
	ASAN_OPTIONS=detect_leaks=1 \
	UBSAN_OPTIONS=print_stacktrace=1 \
	"$bin" $opts -rss_limit_mb=2048 -max_total_time="$secs" -print_final_stats=1 \
		-artifact_prefix="$art/" "$corpus" "build/fuzz/seeds/$name" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	cov=$(grep -E '^#[0-9]+' "$log" | tail -1 | sed -n 's/.*cov: \([0-9]*\) ft: \([0-9]*\).*/\1 edges, \2 features/p')
	total=$(sed -n 's/^INFO: Loaded 1 modules *(\([0-9]*\) inline 8-bit counters.*/\1/p' "$log")
	cov=${cov:+$(echo "$cov" | sed "s/ edges/ of ${total:-?} edges/")}
	units=$(ls "$corpus" | wc -l)
	arts=$(ls "$art" | wc -l)
	echo "fuzz $name: exit $rc, ${execs:-?} executions, coverage ${cov:-?}, corpus $units, artifacts $arts"
	[ "$rc" -ne 0 ] && found=1 && grep -m1 -E 'ERROR|SUMMARY|runtime error|deadly signal' "$log"
done
exit $found
