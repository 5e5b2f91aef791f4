#!/bin/sh
# The approximate mode (issue 15, docs/bid.md): skel gen --omega W --chunk C
# and skel check --accuracy, against valgrind lackey on the same run.
# - W = 1 is the exact skeleton, byte for byte, on every sample build, and
#   measures MA = AIA = 1.000 with a trace that skel check finds exact.
# - csr -O2 at W = 0.25, C = 64: spmv's inner block has three expressions
#   over recorded values (col[k] at rdx+4·rax, x[col[k]] at r8+8·rdx',
#   val[k] at rcx+8·rax; samples/csr.c); W = ceil(0.25·3) = 1 keeps the
#   first, col[k].  val[k]'s registers stay recorded for the loop's
#   computed exit test, so it stays exact for free; x[col[k]] has another
#   base register than col[k] (distance s2 + s1, not 0): no fulcrum, so it
#   is absent — once per non-zero, 918 × 5 repetitions, at its pc.  (The
#   matrix build in main loses its 918 stores of vals[nnz] the same way.)
#   Everything else of spmv stays exact, so by accesses spmv's accuracy is
#   1 - 4590/(spmv's accesses) and no attributed access can raise AIA
#   above MA.  The run's AIA must be at least 0.5 (the issue's bar, the
#   paper's ~0.5 at W = 0.25) and below 1 (something was dropped), and the
#   run records fewer values than at W = 1.
# - irreducible -O0 at W = 0.25: its direct probes (an irreducible region)
#   at distance 0 from each other are attributed: AIA > MA, and the
#   accesses marked exact are all in the oracle (check exits 0).
cd "$(dirname "$0")/.." || exit 1
# the executable's scope (skel gen --main-only) unless a case says
# otherwise: whole-process tracing is tests/whole.sh's
export SKEL_SCOPE=main
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"
fails=0
bad() { echo "FAIL: bid: $*"; fails=$((fails+1)); }
S=build/samples

# usage errors are loud
for a in "--omega 1.5" "--omega -0.1" "--omega x" "--chunk 48" "--chunk 0" "--omega 0.5 --chunk 3"; do
	./skel gen $S/csr-O2-pie $a >/dev/null 2>"$tmp/err"; st=$?
	[ $st -eq 2 ] && grep -q -- "--omega\|--chunk" "$tmp/err" || bad "gen $a: status $st, $(cat "$tmp/err")"
done
./skel gen --help | grep -q -- "--omega W" || bad "skel gen --help does not mention --omega"
./skel gen --help | grep -q -- "--chunk C" || bad "skel gen --help does not mention --chunk"

# W = 1: the exact skeleton, byte for byte, on every build
n=0
for b in $S/*; do
	case $b in *.c|*.o|*.d) continue;; esac
	./skel gen "$b" -o "$tmp/a.c" 2>/dev/null || { bad "gen $b"; continue; }
	./skel gen "$b" --omega 1 --chunk 8 -o "$tmp/b.c" 2>/dev/null || { bad "gen $b --omega 1"; continue; }
	cmp -s "$tmp/a.c" "$tmp/b.c" || bad "$b: --omega 1 changes the skeleton"
	n=$((n+1))
done
[ $n -ge 200 ] || bad "only $n sample builds (make samples)"
echo "bid: --omega 1 is the exact skeleton on $n builds"

acc() {	# FIELD FILE: the run's MA or AIA (execution-weighted, the first pair)
	sed -n "s/^check: accuracy at chunk [0-9]*: MA=\\([0-9.]*\\) AIA=\\([0-9.]*\\) .*/\\$1/p" "$2" | head -1
}
values() {	# SKEL VALUES: the recorded values the replay reads
	./skel replay "$1" "$2" --format count 2>&1 | sed -n 's/^thread 0: .*, \([0-9]*\) values$/\1/p'
}

app=$S/csr-O2-pie
./skel gen $app -o "$tmp/exact.c" 2>/dev/null
./skel check --accuracy "$tmp/exact.c" -- $app >/dev/null 2>"$tmp/acc1" || bad "check --accuracy W=1: $(tail -3 "$tmp/acc1")"
[ "$(acc 1 "$tmp/acc1")" = 1.000 ] && [ "$(acc 2 "$tmp/acc1")" = 1.000 ] ||
	bad "W=1: $(cat "$tmp/acc1")"
./skel check "$tmp/exact.c" -- $app >/dev/null 2>"$tmp/err" || bad "W=1: not exact: $(tail -3 "$tmp/err")"

./skel gen $app --omega 0.25 --chunk 64 -o "$tmp/a25.c" 2>"$tmp/gen" || bad "gen --omega 0.25"
grep -q "omega 0.25 --chunk 64" "$tmp/a25.c" || bad "the skeleton's header does not say omega and chunk"
./skel check --accuracy --stats "$tmp/a25.c" -- $app >/dev/null 2>"$tmp/acc25" ||
	bad "check --accuracy W=0.25: $(tail -3 "$tmp/acc25")"
ma=$(acc 1 "$tmp/acc25"); aia=$(acc 2 "$tmp/acc25")
echo "bid: csr -O2, W = 0.25, C = 64: MA=$ma AIA=$aia"
awk -v a="$aia" -v m="$ma" 'BEGIN { exit !(a >= 0.5 && a < 1 && a == m) }' ||
	bad "csr W=0.25: AIA $aia (MA $ma), expected 0.5 <= AIA = MA < 1"
grep -q "^  spmv: MA=" "$tmp/acc25" || bad "--stats: no line for spmv"

# the trace: marked, and its absent accesses are spmv's x[col[k]] loads
./skel record "$tmp/exact.c" -o "$tmp/v1" -- $app >/dev/null || bad "record W=1"
./skel record "$tmp/a25.c" -o "$tmp/v25" -- $app >/dev/null || bad "record W=0.25"
./skel replay "$tmp/a25.c" "$tmp/v25" -o "$tmp/t25" || bad "replay W=0.25"
head -1 "$tmp/t25" | grep -q "^# approximate: omega 0.25 chunk 64" || bad "no header: $(head -1 "$tmp/t25")"
grep -v '^#' "$tmp/t25" | awk '$5 != "exact" && $5 != "attr" && $5 != "absent"' | head -1 >"$tmp/odd"
[ -s "$tmp/odd" ] && bad "a line without its mark: $(cat "$tmp/odd")"
./skel replay "$tmp/exact.c" "$tmp/v1" -o "$tmp/t1" || bad "replay W=1"
[ "$(grep -vc '^#' "$tmp/t1")" = "$(grep -vc '^#' "$tmp/t25")" ] || bad "W=0.25 does not trace as many accesses as W=1"
grep -q ' exact$' "$tmp/t1" && bad "the exact trace has marks"
xpc=$(./skel analyze $app spmv | sed -n 's/^  access 0x\([0-9a-f]*\) R8 class [0-9]*: r8\.[0-9]* + 8\*rdx\.[0-9]*$/\1/p')
[ -n "$xpc" ] || bad "spmv has no x[col[k]] access r8 + 8*rdx (the test tests nothing)"
awk '$5 == "absent" { print $1 }' "$tmp/t25" | sort | uniq -c >"$tmp/absent"
# runtime pcs: the load bias is page-aligned, the low 12 bits are the link-time ones
grep -q "^ *4590 [0-9a-f]*$(echo "$xpc" | sed 's/.*\(...\)$/\1/')\$" "$tmp/absent" ||
	bad "absent accesses: $(cat "$tmp/absent"), expected 4590 at x[col[k]] (0x$xpc)"
grep -q ' attr$' "$tmp/t25" && bad "csr: attributed accesses, none expected"
nabs=$(grep -c ' absent$' "$tmp/t25")
./skel replay "$tmp/a25.c" "$tmp/v25" --format count >"$tmp/count" 2>&1
grep -q "^approximate: thread 0: of [0-9]* accesses 0 attributed, $nabs absent" "$tmp/count" ||
	bad "the count sink does not say the $nabs absent accesses: $(cat "$tmp/count")"
# --stats counts C-byte chunks: at C = 64, the cache lines it counts
./skel replay "$tmp/a25.c" "$tmp/v25" --stats -o /dev/null 2>"$tmp/stats"
lines=$(sed -n 's/^skel: stats: total: .*, \([0-9]*\) cache lines, .*/\1/p' "$tmp/stats")
grep -q "^skel: stats: total: $lines chunks of 64 bytes\$" "$tmp/stats" ||
	bad "--stats: chunks of 64 bytes are not its $lines cache lines: $(grep chunks "$tmp/stats")"
v1=$(values "$tmp/exact.c" "$tmp/v1"); v25=$(values "$tmp/a25.c" "$tmp/v25")
echo "bid: csr -O2: recorded values $v1 at W = 1, $v25 at W = 0.25"
[ -n "$v25" ] && [ "$v25" -lt "$v1" ] || bad "W=0.25 records $v25 values, W=1 $v1"

# attribution: zero-distance direct probes
app=$S/irreducible-O0-nopie
./skel check --accuracy --omega 0.25 --chunk 64 -- $app >/dev/null 2>"$tmp/accI" ||
	bad "irreducible W=0.25: $(tail -3 "$tmp/accI")"
grep -q "[1-9][0-9]* are attributed" "$tmp/accI" || bad "irreducible: gen says nothing of attributed accesses"
ma=$(acc 1 "$tmp/accI"); aia=$(acc 2 "$tmp/accI")
echo "bid: irreducible -O0, W = 0.25, C = 64: MA=$ma AIA=$aia"
awk -v a="$aia" -v m="$ma" 'BEGIN { exit !(a > m && a >= 0.5 && a <= 1) }' ||
	bad "irreducible: AIA $aia not above MA $ma"

[ $fails -eq 0 ] && echo "bid: all passed"
[ $fails -eq 0 ]
