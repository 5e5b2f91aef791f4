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
run ./skel gen "$app" -o "$tmp/matmul_skel.c"
run ./skel record "$tmp/matmul_skel.c" -o "$tmp/matmul.vals" -- "$app" 40
run ./skel replay "$tmp/matmul_skel.c" "$tmp/matmul.vals" -o "$tmp/trace.txt"
echo "first lines of the trace (PC R|W SIZE ADDR):"
grep -v '^#' "$tmp/trace.txt" | sed -n '2000,2008p'
run ./skel replay "$tmp/matmul_skel.c" "$tmp/matmul.vals" --format count
echo "value trace: $(stat -c %s "$tmp/matmul.vals") bytes for $(grep -vc '^#' "$tmp/trace.txt") accesses"
echo
echo "== 4. Proof: the same run under valgrind lackey, compared access by access"
run ./skel check "$tmp/matmul_skel.c" -- "$app" 40
