#!/bin/sh
# What a newcomer sees first: skel traces a bundled sample exactly.
set -e
cd "$(dirname "$0")/.."
app=build/samples/matmul-O2-pie
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { echo "\$ $*"; "$@"; }

echo "== 1. The loop nest skel finds in the binary"
run ./skel loops "$app" matmul
echo
echo "== 2. What it computes statically: addresses affine in the loop counters"
./skel analyze "$app" matmul | grep -E "^  (loop|access|probes|totals)" | head -20
echo
echo "== 3. Generate the skeleton, record the few values it needs, replay the trace"
echo "(the executable alone here, --main-only: the whole process is step 6)"
run ./skel gen --main-only "$app" -o "$tmp/matmul_skel.c"
run ./skel record "$tmp/matmul_skel.c" -o "$tmp/matmul.vals" -- "$app" 40
run ./skel replay "$tmp/matmul_skel.c" "$tmp/matmul.vals" -o "$tmp/trace.txt"
echo "the trace, PC R|W SIZE ADDR (accesses 2000-2005):"
grep -v '^#' "$tmp/trace.txt" | sed -n '2000,2005p'
run ./skel replay "$tmp/matmul_skel.c" "$tmp/matmul.vals" --format count
echo "value trace: $(stat -c %s "$tmp/matmul.vals") bytes for $(grep -vc '^#' "$tmp/trace.txt") accesses"
echo
echo "== 4. All in one step, online (program and skeleton in parallel), with the summary"
run ./skel trace --main-only -o "$tmp/t2.txt" --stats -- "$app" 40
echo "accesses 20000-20005 of the trace (inside matmul's loop nest):"
grep -v '^#' "$tmp/t2.txt" | sed -n '20000,20005p'
echo
echo "== 5. Proof: the same run under valgrind lackey, compared access by access"
run ./skel check "$tmp/matmul_skel.c" -- "$app" 40
echo
echo "== 6. The whole process, skel's default: libc's accesses too"
echo "(the first time on a machine, libc's skeleton is made and compiled: a minute or two)"
run ./skel check -- "$app" 40
