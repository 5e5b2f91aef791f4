#!/bin/sh
# Runs every test program; prints one closing line "N passed, N failed".
# SKEL_FULL=1 (make check-full) adds the slow cases.
#
# The scripts run SKEL_TEST_JOBS at a time (default: one per processor),
# longest first: most of their time is valgrind, which uses one
# processor.  tests/unit.sh runs the unit tests (cmocka, sanitizers) as
# one of them.  Each script's output is
# printed whole when it ends, with its time.  The scripts share nothing
# but build/ (and build/test-cache, whose files are written under a
# temporary name and renamed).
cd "$(dirname "$0")/.." || exit 1
pass=0; fail=0; failed=""

logs=$(mktemp -d)
# temporary files (lackey's logs: hundreds of MB per whole-process check)
# in memory when there is room (and TMPDIR is not set): about a tenth off
# a check's time
shm=""
if [ -z "$TMPDIR" ] && [ -d /dev/shm ] && [ -w /dev/shm ] &&
	[ "$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')" -ge 4194304 ] 2>/dev/null; then
	shm=$(mktemp -d /dev/shm/skel-tests-XXXXXX) && export TMPDIR="$shm"
fi
trap 'rm -rf "$logs" $shm' EXIT
# longest first (seconds on the 2-core machine, serial), then the rest
order="whole e2e signals fork carried longjmp behind transparency damage shlib cancel condvar scanloop unit kernels bid cli"
list=""
for n in $order; do
	[ -f "tests/$n.sh" ] && list="$list tests/$n.sh"
done
for t in tests/*.sh; do
	# fuzz-exact.sh is `make fuzz-exact`, not a test of make check
	case "$t" in */run-tests.sh|*/fuzz-exact.sh) continue;; esac
	case " $list " in *" $t "*) continue;; esac
	list="$list $t"
done
[ -n "$SKEL_FULL" ] && list="$list tests/real/run.sh"

jobs=${SKEL_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
export logs
# one script: its output to its log, its status and time beside it, the
# log printed whole (under a lock: two ends at once do not interleave)
one='t=$1; n=$(echo "$t" | tr / _); t0=$(date +%s)
sh "$t" >"$logs/$n.log" 2>&1; echo $? >"$logs/$n.rc"
echo "== $t: $(($(date +%s) - t0)) s" >>"$logs/$n.log"
flock "$logs/print" sh -c "echo \"== $t\"; cat \"$logs/$n.log\""'
for t in $list; do echo "$t"; done | xargs -P "$jobs" -n 1 sh -c "$one" sh

for t in $list; do
	n=$(echo "$t" | tr / _)
	if [ "$(cat "$logs/$n.rc" 2>/dev/null)" = 0 ]; then
		pass=$((pass+1))
	else
		fail=$((fail+1)); failed="$failed $t"
	fi
done
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
