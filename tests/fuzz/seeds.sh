#!/bin/sh
# Seed corpora for the fuzz harnesses (tests/fuzz/README.md), made once
# under build/fuzz/seeds/: sample binaries and small Debian binaries for
# the ELF harness, value traces recorded on samples and the patches of
# `skel gen --patch` for the other two.  Needs ./skel, the recorder and
# the samples (make all samples).
set -e
cd "$(dirname "$0")/../.."
# the executable's patch and values (skel gen --main-only)
export SKEL_SCOPE=main
out=build/fuzz/seeds
[ -f "$out/done" ] && exit 0
rm -rf "$out"
mkdir -p "$out/elf" "$out/vtrace" "$out/patch"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for b in build/samples/*-O2-*; do
	cp "$b" "$out/elf/"
done
# C++ with exceptions: .gcc_except_table's call-site tables (elf.c)
${CXX:-g++} -O2 -s -o "$out/elf/except-O2" tests/except.cc
for b in /usr/bin/true /usr/bin/cat /usr/bin/echo; do
	[ -f "$b" ] && cp "$b" "$out/elf/debian-$(basename "$b")"
done

# sample and size: small runs, a few values each; threads gives two
# streams, qsort_cb callbacks from libc
for run in "matmul 4" "list 20" "switch 30" "threads 40" "qsort_cb 12" \
	   "csr 10" "tree 12" "strings 40"; do
	set -- $run
	for pie in pie nopie; do
		app=build/samples/$1-O2-$pie
		./skel gen "$app" -o "$tmp/$1.c" --patch "$out/patch/$1-$pie.patch" 2>/dev/null
		./skel record "$tmp/$1.c" -o "$out/vtrace/$1-$pie.vals" -- "$app" "$2" >/dev/null
	done
done
touch "$out/done"
echo "fuzz seeds: $(ls "$out/elf" | wc -l) binaries, $(ls "$out/vtrace" | wc -l) value traces, $(ls "$out/patch" | wc -l) patches"
